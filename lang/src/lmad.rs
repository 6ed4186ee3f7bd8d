//! LMADs: linear memory access descriptors.
//!
//! An LMAD says where each element of an array lives in its memory block. It
//! is an offset together with one `(elements : stride)` pair per dimension,
//! outermost first; FUNMEM writes it `o + {(n1 : s1), ..., (nq : sq)}`. The
//! element at index `(i1, ..., iq)` lives at address `o + i1*s1 + ... +
//! iq*sq`, counted in elements of the array's type. This is eq. 1 of the IFL
//! 2022 paper (§3.1). Eq. 2, `slice_f`, takes one `offset : size` pair per
//! dimension: the offsets move the LMAD's offset by `sum oi*si`, the sizes
//! become the new element counts, and the strides stay. Eq. 3, `index_f`,
//! fixes the outermost index `k`: the offset moves by `k*s1` and the first
//! dimension disappears. Transposition (and any permutation of dimensions)
//! only reorders the pairs, which is why these operations are free at run
//! time. `R(n1, ..., nq)` abbreviates the row-major layout: offset 0, the
//! last stride 1 and each other stride the product of the sizes inside it.
//!
//! Indices are 0-based throughout (docs/language.md, Conventions): dimension `i` with `n`
//! elements has indices `0 .. n-1`, so `R(n)` addresses `0 .. n-1` of its
//! block. The paper numbers array elements from 1 in places; we do not.
//!
//! An LMAD is generic in its numbers. In types it is *symbolic*, over scalar
//! expressions ([`SExp`]) or their normal forms ([`Poly`], to compare them);
//! in the heap semantics it is *concrete*, over `i64`. The operations above
//! work for any [`Num`]; only concrete LMADs have a domain and an image to
//! enumerate, and injectivity and bounds to compute. Arithmetic is that of
//! the language: 64-bit and wrapping, so no input makes these functions
//! overflow.

use crate::ast::{BinOp, SExp};
use crate::poly::Poly;

/// The numbers an LMAD can be built from: a commutative ring with integer
/// literals.
pub trait Num: Clone + PartialEq + std::fmt::Debug {
    /// The additive unit.
    fn zero() -> Self;
    /// The multiplicative unit.
    fn one() -> Self;
    /// The integer literal `k`.
    fn from_i64(k: i64) -> Self;
    /// `self + o`.
    fn add(&self, o: &Self) -> Self;
    /// `self * o`.
    fn mul(&self, o: &Self) -> Self;
}

/// Concrete numbers, with wrapping arithmetic.
impl Num for i64 {
    fn zero() -> i64 {
        0
    }
    fn one() -> i64 {
        1
    }
    fn from_i64(k: i64) -> i64 {
        k
    }
    fn add(&self, o: &i64) -> i64 {
        self.wrapping_add(*o)
    }
    fn mul(&self, o: &i64) -> i64 {
        self.wrapping_mul(*o)
    }
}

/// Symbolic numbers as expressions; literals are folded and units dropped
/// (`0 + x` is `x`, `1 * x` is `x`, `0 * x` is `0`, `2 * 3` is `6`).
impl Num for SExp {
    fn zero() -> SExp {
        SExp::int(0)
    }
    fn one() -> SExp {
        SExp::int(1)
    }
    fn from_i64(k: i64) -> SExp {
        SExp::int(k)
    }
    fn add(&self, o: &SExp) -> SExp {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => SExp::int(a.wrapping_add(b)),
            (Some(0), _) => o.clone(),
            (_, Some(0)) => self.clone(),
            _ => SExp::bin(BinOp::Add, self.clone(), o.clone()),
        }
    }
    fn mul(&self, o: &SExp) -> SExp {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => SExp::int(a.wrapping_mul(b)),
            (Some(0), _) | (_, Some(0)) => SExp::int(0),
            (Some(1), _) => o.clone(),
            (_, Some(1)) => self.clone(),
            _ => SExp::bin(BinOp::Mul, self.clone(), o.clone()),
        }
    }
}

/// Symbolic numbers in normal form, so that equal LMADs compare equal.
impl Num for Poly {
    fn zero() -> Poly {
        Poly::constant(0)
    }
    fn one() -> Poly {
        Poly::constant(1)
    }
    fn from_i64(k: i64) -> Poly {
        Poly::constant(k)
    }
    fn add(&self, o: &Poly) -> Poly {
        Poly::add(self, o)
    }
    fn mul(&self, o: &Poly) -> Poly {
        Poly::mul(self, o)
    }
}

/// One dimension of an LMAD.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dim<T> {
    /// Number of elements (indices `0 .. elems-1`).
    pub elems: T,
    /// Distance in the block between consecutive indices.
    pub stride: T,
}

/// A linear memory access descriptor: `offset + {(elems : stride) ...}`,
/// dimensions outermost first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lmad<T> {
    /// Address of the element at index `(0, ..., 0)`.
    pub offset: T,
    /// The dimensions, outermost first.
    pub dims: Vec<Dim<T>>,
}

impl<T: Num> Lmad<T> {
    /// `R(n1, ..., nq)`: the row-major layout of an array of this shape, at
    /// offset 0.
    pub fn row_major(shape: &[T]) -> Lmad<T> {
        let mut stride = T::one();
        let mut dims = Vec::with_capacity(shape.len());
        for n in shape.iter().rev() {
            dims.push(Dim {
                elems: n.clone(),
                stride: stride.clone(),
            });
            stride = n.mul(&stride);
        }
        dims.reverse();
        Lmad {
            offset: T::zero(),
            dims,
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements in each dimension, outermost first.
    pub fn shape(&self) -> Vec<T> {
        self.dims.iter().map(|d| d.elems.clone()).collect()
    }

    /// `L(i1, ..., iq)` (eq. 1): the address of the element at `idx`.
    ///
    /// `idx` must have one index per dimension; this is checked only in debug
    /// builds, and otherwise the extra indices or dimensions are ignored.
    /// Indices are not checked against the sizes.
    pub fn apply(&self, idx: &[T]) -> T {
        debug_assert_eq!(
            idx.len(),
            self.rank(),
            "LMAD applied to an index of another rank"
        );
        self.dims
            .iter()
            .zip(idx)
            .fold(self.offset.clone(), |a, (d, i)| a.add(&i.mul(&d.stride)))
    }

    /// `slice_f(L, [o1 : n1, ...])` (eq. 2): the LMAD of the slice taking
    /// `ni` elements from index `oi` in each dimension.
    ///
    /// Dimensions beyond the given pairs are kept whole; more pairs than
    /// dimensions is a caller error, checked only in debug builds (the extra
    /// pairs are ignored). Bounds are not checked.
    pub fn slice(&self, slices: &[(T, T)]) -> Lmad<T> {
        debug_assert!(
            slices.len() <= self.rank(),
            "LMAD sliced with too many pairs"
        );
        let mut offset = self.offset.clone();
        let mut dims = self.dims.clone();
        #[cfg(feature = "planted-faults")]
        let outer = self.dims.first().map(|d| d.stride.clone());
        for (d, (o, n)) in dims.iter_mut().zip(slices) {
            #[allow(unused_mut)]
            let mut stride = &d.stride;
            #[cfg(feature = "planted-faults")]
            if crate::fault::active(crate::fault::Fault::SliceOffsetOuterStride) {
                stride = outer.as_ref().unwrap_or(stride);
            }
            offset = offset.add(&o.mul(stride));
            d.elems = n.clone();
        }
        Lmad { offset, dims }
    }

    /// `index_f(L, k)` (eq. 3): the LMAD of row `k` of the outermost
    /// dimension, of one rank less.
    ///
    /// A rank-0 LMAD has no row; that is checked only in debug builds and
    /// otherwise gives the LMAD back unchanged. Bounds are not checked.
    pub fn index(&self, k: &T) -> Lmad<T> {
        debug_assert!(self.rank() > 0, "rank-0 LMAD indexed");
        match self.dims.split_first() {
            Some((d, rest)) => Lmad {
                offset: self.offset.add(&k.mul(&d.stride)),
                dims: rest.to_vec(),
            },
            None => self.clone(),
        }
    }

    /// The LMAD whose dimension `i` is this one's dimension `perm[i]`, so
    /// that `L.permute(p).apply(j) == L.apply(i)` when `j[k] == i[p[k]]`;
    /// `None` unless `perm` is a permutation of `0 .. rank`.
    pub fn permute(&self, perm: &[usize]) -> Option<Lmad<T>> {
        if perm.len() != self.rank() {
            return None;
        }
        let mut seen = vec![false; perm.len()];
        let mut dims = Vec::with_capacity(perm.len());
        for &p in perm {
            if std::mem::replace(seen.get_mut(p)?, true) {
                return None;
            }
            dims.push(self.dims[p].clone());
        }
        Some(Lmad {
            offset: self.offset.clone(),
            dims,
        })
    }

    /// The LMAD of the transposed array (rule E-MEM-TRANSPOSE); `None` unless
    /// the rank is 2.
    pub fn transpose(&self) -> Option<Lmad<T>> {
        if self.rank() == 2 {
            self.permute(&[1, 0])
        } else {
            None
        }
    }

    /// The same LMAD with `f` applied to every number (offset first, then
    /// elements and stride of each dimension, outermost first).
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> Lmad<U> {
        let offset = f(&self.offset);
        let dims = self
            .dims
            .iter()
            .map(|d| Dim {
                elems: f(&d.elems),
                stride: f(&d.stride),
            })
            .collect();
        Lmad { offset, dims }
    }
}

impl Lmad<i64> {
    /// All in-bounds indices, in row-major order: none if some dimension has
    /// no elements (or a negative count), one (the empty tuple) at rank 0.
    /// The sequence has [`size`](Lmad::size) items; enumerating a huge one is
    /// the caller's business.
    pub fn domain(&self) -> impl Iterator<Item = Vec<i64>> {
        let elems = self.shape();
        let next = elems.iter().all(|&n| n > 0).then(|| vec![0; elems.len()]);
        Domain { elems, next }
    }

    /// Calls `f` on the address of each index of the domain, in the
    /// domain's (row-major) order, stopping at the first error. Unlike
    /// [`image`](Lmad::image) it allocates nothing per index: an odometer
    /// steps the address by the strides (wrapping, as [`apply`](Lmad::apply)).
    pub fn for_each_address<E>(&self, mut f: impl FnMut(i64) -> Result<(), E>) -> Result<(), E> {
        if self.dims.iter().any(|d| d.elems <= 0) {
            return Ok(());
        }
        let mut idx = vec![0i64; self.dims.len()];
        let mut addr = self.offset;
        loop {
            f(addr)?;
            // Bump the innermost index, carrying outwards.
            let mut k = self.dims.len();
            loop {
                let Some(k1) = k.checked_sub(1) else {
                    return Ok(());
                };
                k = k1;
                let d = &self.dims[k];
                idx[k] += 1;
                addr = addr.wrapping_add(d.stride);
                if idx[k] < d.elems {
                    break;
                }
                addr = addr.wrapping_sub(d.stride.wrapping_mul(d.elems));
                idx[k] = 0;
            }
        }
    }

    /// The address of each index of the domain, in the domain's order
    /// (repetitions included).
    pub fn image(&self) -> impl Iterator<Item = i64> {
        let l = self.clone();
        self.domain().map(move |i| l.apply(&i))
    }

    /// Whether distinct indices of the domain always have distinct addresses
    /// (addresses computed with wrapping arithmetic, as by
    /// [`apply`](Lmad::apply)).
    ///
    /// Decided in `O(rank log rank)` when the strides, sorted by magnitude,
    /// each exceed the extent of the dimensions inside them (as in any
    /// row-major or transposed layout) or when there are more indices than
    /// addresses in range. Otherwise the dimensions that do not nest that way
    /// are enumerated and their addresses sorted, in time
    /// `O(m log m)` for the `m` indices of those dimensions.
    pub fn is_injective(&self) -> bool {
        if self.size() <= 1 {
            return true;
        }
        // Dimensions of one element never distinguish two indices.
        let mut dims: Vec<(i128, i128)> = self
            .dims
            .iter()
            .filter(|d| d.elems > 1)
            .map(|d| (i128::from(d.elems), i128::from(d.stride)))
            .collect();
        if dims.iter().any(|&(_, s)| s == 0) {
            return false;
        }
        let count = dims.iter().fold(1i128, |a, &(n, _)| a.saturating_mul(n));
        let extent = dims
            .iter()
            .fold(0i128, |a, &(n, s)| a.saturating_add((n - 1) * s.abs()));
        if extent >= 1 << 64 {
            // Addresses may wrap around; only the exact test is right.
            return count <= 1 << 64 && all_distinct(wrapping_image(&dims));
        }
        if count > extent + 1 {
            return false;
        }
        // No wrapping: flipping a dimension's sign moves the image but keeps
        // injectivity, and a dimension whose stride exceeds the extent of all
        // the others separates their images, so it can be dropped.
        for d in &mut dims {
            d.1 = d.1.abs();
        }
        dims.sort_unstable_by_key(|&(_, s)| s);
        let mut extent = extent;
        while let Some(&(n, s)) = dims.last() {
            let rest = extent - (n - 1) * s;
            if s <= rest {
                break;
            }
            extent = rest;
            dims.pop();
        }
        if dims.len() <= 1 {
            return true;
        }
        let count = dims.iter().fold(1i128, |a, &(n, _)| a.saturating_mul(n));
        count <= extent + 1 && all_distinct(exact_image(&dims))
    }

    /// The smallest and the largest address of the image, `None` when the
    /// domain is empty. Exact when no address overflows `i64`; otherwise the
    /// bound that overflows is saturated to `i64::MIN` or `i64::MAX`.
    pub fn min_max(&self) -> Option<(i64, i64)> {
        if self.dims.iter().any(|d| d.elems <= 0) {
            return None;
        }
        let (mut lo, mut hi) = (i128::from(self.offset), i128::from(self.offset));
        for d in &self.dims {
            let reach = (i128::from(d.elems) - 1) * i128::from(d.stride);
            if reach < 0 {
                lo = lo.saturating_add(reach);
            } else {
                hi = hi.saturating_add(reach);
            }
        }
        let clamp = |x: i128| x.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        Some((clamp(lo), clamp(hi)))
    }

    /// Number of indices in the domain: the product of the element counts, 0
    /// if any is 0 or negative, saturated to `i64::MAX` if it overflows.
    pub fn size(&self) -> i64 {
        if self.dims.iter().any(|d| d.elems <= 0) {
            return 0;
        }
        self.dims
            .iter()
            .fold(1i64, |a, d| a.saturating_mul(d.elems))
    }
}

/// The row-major enumeration of an LMAD's domain.
struct Domain {
    elems: Vec<i64>,
    next: Option<Vec<i64>>,
}

impl Iterator for Domain {
    type Item = Vec<i64>;

    fn next(&mut self) -> Option<Vec<i64>> {
        let cur = self.next.take()?;
        let mut succ = cur.clone();
        for (i, n) in succ.iter_mut().zip(&self.elems).rev() {
            if *i + 1 < *n {
                *i += 1;
                self.next = Some(succ);
                return Some(cur);
            }
            *i = 0;
        }
        Some(cur)
    }
}

/// The addresses `sum ki*si` for `0 <= ki < ni`, exactly.
fn exact_image(dims: &[(i128, i128)]) -> Vec<i128> {
    let mut out = vec![0i128];
    for &(n, s) in dims {
        out = out
            .iter()
            .flat_map(|&a| (0..n).map(move |k| a + k * s))
            .collect();
    }
    out
}

/// The addresses `sum ki*si` for `0 <= ki < ni`, wrapping as `i64`.
fn wrapping_image(dims: &[(i128, i128)]) -> Vec<i64> {
    let mut out = vec![0i64];
    for &(n, s) in dims {
        // Both fit in i64: they came from one.
        let (n, s) = (n as i64, s as i64);
        out = out
            .iter()
            .flat_map(|&a| (0..n).map(move |k| a.wrapping_add(k.wrapping_mul(s))))
            .collect();
    }
    out
}

/// Whether no value occurs twice.
fn all_distinct<X: Ord>(mut v: Vec<X>) -> bool {
    v.sort_unstable();
    v.windows(2).all(|w| w[0] != w[1])
}

/// A nested value: what a flat block reads as, given a shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Nested<T> {
    /// A value of rank 0.
    Scalar(T),
    /// An array of values of one rank less.
    Array(Vec<Nested<T>>),
}

/// `nest(v, [k1]...[kn])` of fig. 5: the flat row-major sequence `flat` read
/// as an array of shape `shape`, so that `nest([1,2,3,4], [2][2])` is
/// `[[1,2],[3,4]]`; shape `[]` reads one element as a scalar.
///
/// `None` if `flat` does not have exactly `product(shape)` elements, or if the
/// result would have more nodes than `usize` counts. (Fig. 5 splits off the
/// innermost dimension first; splitting off the outermost, as here, gives the
/// same array.)
pub fn nest<T: Clone>(flat: &[T], shape: &[usize]) -> Option<Nested<T>> {
    // Nodes of the result: one per index prefix, and the product for the
    // element count; checking that these fit is what keeps this total.
    let mut prefix = 1usize;
    let mut nodes = 1usize;
    for &k in shape {
        prefix = prefix.checked_mul(k)?;
        nodes = nodes.checked_add(prefix)?;
    }
    if flat.len() != prefix {
        return None;
    }
    nest_exact(flat, shape)
}

/// `nest` once the length is known to match (`None` otherwise).
fn nest_exact<T: Clone>(flat: &[T], shape: &[usize]) -> Option<Nested<T>> {
    match shape.split_first() {
        None => Some(Nested::Scalar(flat.first()?.clone())),
        Some((0, _)) => Some(Nested::Array(Vec::new())),
        Some((&k, inner)) => {
            let chunk = flat.len() / k;
            let rows = (0..k).map(|i| nest_exact(flat.get(i * chunk..(i + 1) * chunk)?, inner));
            rows.collect::<Option<_>>().map(Nested::Array)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Atom;

    #[test]
    fn addresses_follow_the_lmad() {
        let lmads = [
            (0, vec![]),
            (5, vec![(3, 2)]),
            (4, vec![(2, -3), (3, 1)]),
            (0, vec![(2, 0), (2, 7), (2, 1)]),
            (1, vec![(0, 1), (3, 1)]),
            (i64::MAX, vec![(3, i64::MAX)]),
        ];
        for (offset, dims) in lmads {
            let l = Lmad {
                offset,
                dims: dims
                    .iter()
                    .map(|&(elems, stride)| Dim { elems, stride })
                    .collect(),
            };
            let mut got = Vec::new();
            l.for_each_address(|a| {
                got.push(a);
                Ok::<(), ()>(())
            })
            .expect("no error");
            assert_eq!(got, l.image().collect::<Vec<_>>(), "{l:?}");
        }
    }
    use crate::ast::UnOp;
    use crate::name::Name;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn lmad(offset: i64, dims: &[(i64, i64)]) -> Lmad<i64> {
        Lmad {
            offset,
            dims: dims
                .iter()
                .map(|&(elems, stride)| Dim { elems, stride })
                .collect(),
        }
    }

    fn arb_lmad_with(
        elems: i64,
        rank: std::ops::RangeInclusive<usize>,
    ) -> impl Strategy<Value = Lmad<i64>> {
        (
            -10i64..=10,
            prop::collection::vec((0..=elems, -6i64..=6), rank),
        )
            .prop_map(|(o, dims)| lmad(o, &dims))
    }

    fn arb_lmad() -> impl Strategy<Value = Lmad<i64>> {
        arb_lmad_with(4, 0..=3)
    }

    /// An LMAD and an in-bounds slice of it.
    fn arb_sliced() -> impl Strategy<Value = (Lmad<i64>, Vec<(i64, i64)>)> {
        arb_lmad().prop_flat_map(|l| {
            let pairs: Vec<_> = l
                .dims
                .iter()
                .map(|d| d.elems)
                .map(|n| (0..=n).prop_flat_map(move |o| (Just(o), 0..=n - o)))
                .collect();
            (Just(l), pairs)
        })
    }

    fn arb_permuted() -> impl Strategy<Value = (Lmad<i64>, Vec<usize>)> {
        arb_lmad().prop_flat_map(|l| {
            let perm = Just((0..l.rank()).collect::<Vec<_>>()).prop_shuffle();
            (Just(l), perm)
        })
    }

    /// Whether no two distinct indices share an address, pair by pair.
    fn injective_by_pairs(l: &Lmad<i64>) -> bool {
        let idx: Vec<_> = l.domain().collect();
        idx.iter()
            .enumerate()
            .all(|(a, i)| idx[a + 1..].iter().all(|j| l.apply(i) != l.apply(j)))
    }

    fn flatten<T: Clone>(v: &Nested<T>, out: &mut Vec<T>) {
        match v {
            Nested::Scalar(x) => out.push(x.clone()),
            Nested::Array(vs) => vs.iter().for_each(|v| flatten(v, out)),
        }
    }

    /// Wrapping evaluation of the expressions `Num for SExp` builds.
    fn eval(e: &SExp, env: &HashMap<Name, i64>) -> i64 {
        match e {
            SExp::Atom(Atom::Int(k, _)) => *k,
            SExp::Atom(Atom::Var(x)) => env[&x.name],
            SExp::Bin(BinOp::Add, l, r, _) => eval(l, env).wrapping_add(eval(r, env)),
            SExp::Bin(BinOp::Mul, l, r, _) => eval(l, env).wrapping_mul(eval(r, env)),
            SExp::Bin(BinOp::Sub, l, r, _) => eval(l, env).wrapping_sub(eval(r, env)),
            SExp::Un(UnOp::Neg, e, _) => eval(e, env).wrapping_neg(),
            other => panic!("unexpected expression {other:?}"),
        }
    }

    /// A symbolic LMAD of the given rank over variables `o`, `n<i>`, `s<i>`,
    /// and the environment giving them the values of `l`.
    fn symbolic<T: Num>(l: &Lmad<i64>, var: impl Fn(&Name) -> T) -> (Lmad<T>, HashMap<Name, i64>) {
        let mut env = HashMap::new();
        let mut bind = |x: String, k: i64| {
            let x = Name::new(&x);
            env.insert(x.clone(), k);
            var(&x)
        };
        let offset = bind("o".into(), l.offset);
        let dims = l
            .dims
            .iter()
            .enumerate()
            .map(|(i, d)| Dim {
                elems: bind(format!("n{i}"), d.elems),
                stride: bind(format!("s{i}"), d.stride),
            })
            .collect();
        (Lmad { offset, dims }, env)
    }

    fn poly_eval(p: &Poly, env: &HashMap<Name, i64>) -> i64 {
        p.eval(&|x: &Name| env.get(x).copied()).unwrap_or(i64::MIN)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn slicing_shifts_indices((l, pairs) in arb_sliced()) {
            let s = l.slice(&pairs);
            prop_assert_eq!(s.shape(), pairs.iter().map(|p| p.1).collect::<Vec<_>>());
            for j in s.domain() {
                let shifted: Vec<i64> = j.iter().zip(&pairs).map(|(j, (o, _))| o + j).collect();
                prop_assert_eq!(s.apply(&j), l.apply(&shifted));
            }
        }

        #[test]
        fn indexing_fixes_the_outer_index(l in arb_lmad_with(4, 1..=3)) {
            for k in 0..l.dims[0].elems {
                let r = l.index(&k);
                prop_assert_eq!(r.rank() + 1, l.rank());
                for j in r.domain() {
                    let mut full = vec![k];
                    full.extend(&j);
                    prop_assert_eq!(r.apply(&j), l.apply(&full));
                }
            }
        }

        #[test]
        fn permuting_reorders_indices((l, perm) in arb_permuted()) {
            let p = l.permute(&perm).expect("a permutation");
            prop_assert_eq!(p.size(), l.size());
            for i in l.domain() {
                let j: Vec<i64> = perm.iter().map(|&k| i[k]).collect();
                prop_assert_eq!(p.apply(&j), l.apply(&i));
            }
            if l.rank() == 2 {
                let t = l.transpose().expect("rank 2");
                for i in l.domain() {
                    prop_assert_eq!(t.apply(&[i[1], i[0]]), l.apply(&i));
                }
                prop_assert_eq!(t.transpose(), Some(l.clone()));
            } else {
                prop_assert_eq!(l.transpose(), None);
            }
        }

        #[test]
        fn row_major_is_a_bijection_onto_a_prefix(shape in prop::collection::vec(0i64..=4, 0..=3)) {
            let l = Lmad::row_major(&shape);
            let mut image: Vec<i64> = l.image().collect();
            prop_assert!(l.is_injective());
            prop_assert_eq!(image.len() as i64, l.size());
            prop_assert_eq!(l.size(), shape.iter().product::<i64>());
            // Row-major order: the image is already sorted.
            let sorted = image.clone();
            image.sort_unstable();
            prop_assert_eq!(&image, &sorted);
            prop_assert_eq!(image, (0..l.size()).collect::<Vec<_>>());
        }

        #[test]
        fn injectivity_agrees_with_pairs(l in arb_lmad()) {
            prop_assert_eq!(l.is_injective(), injective_by_pairs(&l));
        }

        #[test]
        fn injectivity_agrees_with_pairs_on_wider_lmads(l in arb_lmad_with(6, 0..=4)) {
            prop_assert_eq!(l.is_injective(), injective_by_pairs(&l));
        }

        #[test]
        fn min_max_agrees_with_the_image(l in arb_lmad()) {
            let lo = l.image().min();
            let hi = l.image().max();
            prop_assert_eq!(l.min_max(), lo.zip(hi));
            prop_assert_eq!(l.domain().count() as i64, l.size());
        }

        #[test]
        fn nest_round_trips(shape in prop::collection::vec(0usize..=4, 0..=3)) {
            let len: usize = shape.iter().product();
            let flat: Vec<usize> = (0..len).collect();
            let v = nest(&flat, &shape).expect("lengths match");
            let mut back = Vec::new();
            flatten(&v, &mut back);
            prop_assert_eq!(back, flat.clone());
            // Element i of the nested value is the flat element at R(shape)(i).
            let r = Lmad::row_major(&shape.iter().map(|&k| k as i64).collect::<Vec<_>>());
            for i in r.domain() {
                let mut at = &v;
                for &k in &i {
                    match at {
                        Nested::Array(vs) => at = &vs[k as usize],
                        Nested::Scalar(_) => prop_assert!(false, "too shallow"),
                    }
                }
                prop_assert_eq!(at, &Nested::Scalar(r.apply(&i) as usize));
            }
            prop_assert_eq!(nest(&[flat, vec![0]].concat(), &shape), None);
        }

        #[test]
        fn symbolic_instances_agree_with_i64((l, pairs) in arb_sliced(), k in 0i64..4) {
            let (se, env) = symbolic(&l, SExp::var);
            let (po, _) = symbolic(&l, Poly::var);
            let ev = |e: &SExp| eval(e, &env);
            let pv = |p: &Poly| poly_eval(p, &env);
            let idx_vars: Vec<Name> = (0..l.rank()).map(|i| Name::new(&format!("i{i}"))).collect();
            for i in l.domain() {
                let mut env_i = env.clone();
                env_i.extend(idx_vars.iter().cloned().zip(i.iter().copied()));
                let si: Vec<SExp> = idx_vars.iter().map(SExp::var).collect();
                let pi: Vec<Poly> = idx_vars.iter().map(Poly::var).collect();
                prop_assert_eq!(eval(&se.apply(&si), &env_i), l.apply(&i));
                prop_assert_eq!(poly_eval(&po.apply(&pi), &env_i), l.apply(&i));
                prop_assert_eq!(Poly::from_sexp(&se.apply(&si)), po.apply(&pi));
            }
            let spairs: Vec<(SExp, SExp)> = pairs.iter().map(|&(o, n)| (SExp::int(o), SExp::int(n))).collect();
            let ppairs: Vec<(Poly, Poly)> = pairs.iter().map(|&(o, n)| (Poly::constant(o), Poly::constant(n))).collect();
            prop_assert_eq!(se.slice(&spairs).map(ev), l.slice(&pairs));
            prop_assert_eq!(po.slice(&ppairs).map(pv), l.slice(&pairs));
            if l.rank() > 0 {
                prop_assert_eq!(se.index(&SExp::int(k)).map(ev), l.index(&k));
                prop_assert_eq!(po.index(&Poly::constant(k)).map(pv), l.index(&k));
            }
            let shape = l.shape();
            let sshape: Vec<SExp> = se.shape();
            prop_assert_eq!(Lmad::row_major(&sshape).map(ev), Lmad::row_major(&shape));
            prop_assert_eq!(Lmad::row_major(&po.shape()).map(pv), Lmad::row_major(&shape));
        }
    }

    #[test]
    fn row_major_folds_units() {
        let (n, m) = (Name::new("n"), Name::new("m"));
        let l = Lmad::row_major(&[SExp::var(&n), SExp::var(&m)]);
        assert_eq!(l.offset, SExp::int(0));
        assert_eq!(l.dims[0].stride, SExp::var(&m));
        assert_eq!(l.dims[1].stride, SExp::int(1));
        let (i, j) = (Name::new("i"), Name::new("j"));
        let a = l.apply(&[SExp::var(&i), SExp::var(&j)]);
        let want = SExp::bin(
            BinOp::Add,
            SExp::bin(BinOp::Mul, SExp::var(&i), SExp::var(&m)),
            SExp::var(&j),
        );
        assert_eq!(a, want);
        let three = Lmad::row_major(&[SExp::var(&i), SExp::var(&n), SExp::var(&m)]);
        assert_eq!(
            three.dims[0].stride,
            SExp::bin(BinOp::Mul, SExp::var(&n), SExp::var(&m))
        );
        assert_eq!(
            Lmad::<SExp>::row_major(&[]),
            Lmad {
                offset: SExp::int(0),
                dims: vec![]
            }
        );
    }

    #[test]
    fn sexp_arithmetic_folds_literals() {
        let x = SExp::var(&Name::new("x"));
        assert_eq!(Num::add(&SExp::int(0), &x), x);
        assert_eq!(Num::add(&x, &SExp::int(0)), x);
        assert_eq!(Num::mul(&SExp::int(1), &x), x);
        assert_eq!(Num::mul(&x, &SExp::int(1)), x);
        assert_eq!(Num::mul(&SExp::int(0), &x), SExp::int(0));
        assert_eq!(
            Num::add(&SExp::int(i64::MAX), &SExp::int(1)),
            SExp::int(i64::MIN)
        );
        assert_eq!(Num::mul(&SExp::int(6), &SExp::int(7)), SExp::int(42));
    }

    #[test]
    fn slice_offsets_normalise_to_what_programmers_write() {
        // Row i of an [m][n] array, then columns o .. o+k-1.
        let v = |x: &str| Poly::var(&Name::new(x));
        let r = Lmad::row_major(&[v("m"), v("n")])
            .index(&v("i"))
            .slice(&[(v("o"), v("k"))]);
        let written = Poly::add(&v("o"), &Poly::mul(&v("i"), &v("n")));
        assert_eq!(r.offset, written);
        assert_eq!(
            r.dims,
            vec![Dim {
                elems: v("k"),
                stride: Poly::constant(1)
            }]
        );
    }

    #[test]
    fn rank_zero_has_one_index() {
        let l = lmad(7, &[]);
        assert_eq!(l.domain().collect::<Vec<_>>(), vec![Vec::<i64>::new()]);
        assert_eq!(l.image().collect::<Vec<_>>(), vec![7]);
        assert_eq!(l.size(), 1);
        assert_eq!(l.min_max(), Some((7, 7)));
        assert!(l.is_injective());
    }

    #[test]
    fn empty_and_negative_dimensions_have_no_indices() {
        for l in [
            lmad(0, &[(3, 1), (0, 5)]),
            lmad(0, &[(-2, 1)]),
            lmad(0, &[(i64::MIN, 1), (i64::MAX, 1)]),
        ] {
            assert_eq!(l.domain().count(), 0);
            assert_eq!(l.size(), 0);
            assert_eq!(l.min_max(), None);
            assert!(l.is_injective());
        }
    }

    #[test]
    fn permute_rejects_non_permutations() {
        let l = lmad(0, &[(2, 3), (3, 1)]);
        assert_eq!(l.permute(&[0]), None);
        assert_eq!(l.permute(&[0, 0]), None);
        assert_eq!(l.permute(&[0, 2]), None);
        assert_eq!(l.permute(&[1, 0]), l.transpose());
        assert_eq!(lmad(0, &[(2, 1)]).transpose(), None);
    }

    #[test]
    fn injectivity_beyond_the_nesting_argument() {
        // Strides 2 and 3 overlap in range but not in addresses.
        assert!(lmad(0, &[(2, 3), (3, 2)]).is_injective());
        assert!(!lmad(0, &[(2, 2), (3, 1)]).is_injective());
        assert!(!lmad(0, &[(2, 0), (3, 1)]).is_injective());
        assert!(lmad(0, &[(1, 0), (3, 1)]).is_injective());
        assert!(lmad(5, &[(4, -1), (3, -4)]).is_injective());
        // A large injective layout is decided without enumeration.
        assert!(lmad(0, &[(1 << 20, 1 << 20), (1 << 20, 1)]).is_injective());
        assert!(!lmad(0, &[(1 << 40, 1), (1 << 40, 1)]).is_injective());
    }

    #[test]
    fn injectivity_with_wrapping_addresses() {
        // 0, MIN, 0: the third address wraps onto the first.
        assert!(!lmad(0, &[(3, i64::MIN)]).is_injective());
        assert!(lmad(0, &[(2, i64::MIN)]).is_injective());
        let l = lmad(0, &[(5, 1 << 62), (2, 1)]);
        assert_eq!(l.is_injective(), injective_by_pairs(&l));
        let l = lmad(0, &[(4, 1 << 62), (2, 1 << 62)]);
        assert_eq!(l.is_injective(), injective_by_pairs(&l));
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let l = lmad(i64::MAX, &[(i64::MAX, i64::MAX), (i64::MAX, i64::MIN)]);
        assert_eq!(l.size(), i64::MAX);
        assert_eq!(l.min_max(), Some((i64::MIN, i64::MAX)));
        assert_eq!(
            l.apply(&[1, 1]),
            i64::MAX.wrapping_add(i64::MAX).wrapping_add(i64::MIN)
        );
        assert!(!l.is_injective());
        let s = l.slice(&[(i64::MAX, 1), (i64::MIN, 1)]);
        assert_eq!(s.size(), 1);
        assert_eq!(lmad(3, &[(2, 5)]).min_max(), Some((3, 8)));
        assert_eq!(lmad(3, &[(2, -5)]).min_max(), Some((-2, 3)));
    }

    #[test]
    fn nest_follows_fig_5() {
        let v = nest(&[1, 2, 3, 4], &[2, 2]);
        let row = |a, b| Nested::Array(vec![Nested::Scalar(a), Nested::Scalar(b)]);
        assert_eq!(v, Some(Nested::Array(vec![row(1, 2), row(3, 4)])));
        assert_eq!(nest(&[9], &[]), Some(Nested::Scalar(9)));
        assert_eq!(nest::<i32>(&[], &[]), None);
        assert_eq!(nest::<i32>(&[], &[0, 3]), Some(Nested::Array(vec![])));
        assert_eq!(
            nest::<i32>(&[], &[2, 0]),
            Some(Nested::Array(vec![
                Nested::Array(vec![]),
                Nested::Array(vec![])
            ]))
        );
        assert_eq!(nest(&[1, 2, 3], &[2]), None);
        assert_eq!(nest::<i32>(&[], &[usize::MAX, usize::MAX, 0]), None);
        assert_eq!(
            nest::<i32>(&[], &[0, usize::MAX, usize::MAX]),
            Some(Nested::Array(vec![]))
        );
    }
}
