//! Write sets: which memory locations a FUNMEM statement writes, as LMADs
//! over blocks (the form proof obligations take: docs/obligations.md).
//!
//! Memory block coalescing asks, for its safety conditions (Serup's thesis
//! ch. 5, condition 3 and the checks of chains), whether the locations a
//! statement writes overlap the locations some array occupies. That is a
//! disjointness claim between two LMADs, which the provers decide, and it
//! is only sound if the write set of *every* array-creating statement is
//! known: a statement whose writes are forgotten is treated as writing
//! nothing, and coalescing then moves an array over live data (Futhark bug
//! #1927 was exactly that). So [`writes`] answers for every kind of
//! statement, and the answer says how precise it is:
//!
//! - [`Writes::Nothing`]: the statement writes no memory (scalars,
//!   indexing, slices, transposes, allocations, reductions);
//! - [`Writes::Exact`]: it writes exactly these locations, each once;
//! - [`Writes::Kernel`]: iteration `i` of a kernel writes exactly its part
//!   of each result (the result's LMAD indexed at `i`), and the iterations
//!   together write the results' LMADs (the statements of its body write
//!   too: each its own set);
//! - [`Writes::Bodies`]: `if` and `loop` write nothing of their own; the
//!   statements of their bodies write, each its own set.
//!
//! The sets come from the types of the statement's pattern (the block and
//! LMAD where each result array lives) and, for in-place updates, the
//! indices, so they mention only names in scope at the statement. They are
//! checked against the heap semantics' actual writes in
//! `oracle/tests/writes22.rs`.

use funmem_lang::ast::*;
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::Name;

/// Locations of one block: the elements (of the array's element type) at
/// the addresses of an LMAD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The block.
    pub block: Ident,
    /// The addresses, in elements of `elem`.
    pub lmad: Lmad<SExp>,
    /// The element type.
    pub elem: funmem_lang::prim::Prim,
}

/// What a statement writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// No memory.
    Nothing,
    /// Exactly these locations.
    Exact(Vec<Region>),
    /// A kernel `kernel index < n`: iteration `index` writes exactly each
    /// result region's LMAD indexed at `index` ([`Lmad::index`]); all
    /// iterations write the regions.
    Kernel {
        /// The kernel's index.
        index: Ident,
        /// One region per result array.
        results: Vec<Region>,
    },
    /// An `if` or `loop`: nothing of its own; its bodies' statements write.
    Bodies,
}

/// Where an array-typed pattern lives, as a region.
fn region_of(p: &Pat) -> Option<Region> {
    let Type::Array(a, _) = &p.ty else {
        return None;
    };
    let m = a.mem.as_ref()?;
    Some(Region {
        block: m.block.clone(),
        lmad: m.lmad.to_lmad(),
        elem: a.elem,
    })
}

fn atom_sexp(a: &Atom) -> SExp {
    SExp::Atom(a.clone())
}

/// The part of `l` that `x with [idx] = v` overwrites: an element index
/// fixes its dimension, a range `o : n` narrows it to `n` elements from
/// `o`; dimensions after the indices stay whole.
pub fn update_part(l: &Lmad<SExp>, idx: &[UpdIdx]) -> Lmad<SExp> {
    use funmem_lang::lmad::Num;
    let mut offset = l.offset.clone();
    let mut dims: Vec<Dim<SExp>> = Vec::new();
    for (d, i) in l.dims.iter().zip(idx) {
        match i {
            UpdIdx::Elem(a) => offset = offset.add(&atom_sexp(a).mul(&d.stride)),
            UpdIdx::Range(o, n) => {
                offset = offset.add(&atom_sexp(o).mul(&d.stride));
                dims.push(Dim {
                    elems: atom_sexp(n),
                    stride: d.stride.clone(),
                });
            }
        }
    }
    dims.extend(l.dims.iter().skip(idx.len()).cloned());
    Lmad { offset, dims }
}

/// The locations statement `s` writes (see the module's doc for what each
/// answer promises).
pub fn writes(s: &Stm) -> Writes {
    let all = |s: &Stm| Writes::Exact(s.pats.iter().filter_map(region_of).collect());
    match &s.exp.kind {
        // Scalars, views (which share their source's memory), blocks
        // (fresh ones hold zeros, written by nobody) and reductions (a
        // scalar) write nothing.
        ExpKind::Scalar(_)
        | ExpKind::Index(..)
        | ExpKind::Slice(..)
        | ExpKind::Transpose(_)
        | ExpKind::Alloc(..)
        | ExpKind::Reduce(..) => Writes::Nothing,
        // `iota n`: the n elements of the result, at its LMAD.
        ExpKind::Iota(_) => all(s),
        // `copy x`: every element of the result, at its LMAD.
        ExpKind::Copy(_) => all(s),
        // `replicate n v`: every element of the result (n copies of v).
        ExpKind::Replicate(..) => all(s),
        // `concat x y`: every element of the result (x's rows at the
        // start, then y's), at its LMAD.
        ExpKind::Concat(..) => all(s),
        // `scan op ne xs`: every prefix, i.e. every element of the result.
        ExpKind::Scan(..) => all(s),
        // `x with [idx] = v`: the result lives where x does; only the
        // part the indices select is written.
        ExpKind::Update(_, idx, _) => Writes::Exact(
            s.pats
                .iter()
                .filter_map(region_of)
                .map(|r| Region {
                    lmad: update_part(&r.lmad, idx),
                    ..r
                })
                .collect(),
        ),
        // `kernel i < n do b`: iteration i writes its part of each result.
        ExpKind::Kernel(i, _, _) => Writes::Kernel {
            index: i.clone(),
            results: s.pats.iter().filter_map(region_of).collect(),
        },
        // Branches and loops bind what their bodies made.
        ExpKind::If(..) | ExpKind::Loop(..) => Writes::Bodies,
    }
}

/// The value of an integer scalar expression under `env` (`None` when a
/// name has no value, a division is by zero, or it is not an integer
/// expression): for evaluating write sets at run time.
pub fn eval_int(se: &SExp, env: &dyn Fn(&Name) -> Option<i64>) -> Option<i64> {
    match se {
        SExp::Atom(Atom::Int(k, _)) => Some(*k),
        SExp::Atom(Atom::Var(x)) => env(&x.name),
        SExp::Atom(Atom::Const(..)) => None,
        SExp::Un(UnOp::Neg, a, _) => Some(eval_int(a, env)?.wrapping_neg()),
        SExp::Un(..) => None,
        SExp::Bin(op, a, b, _) => {
            let (a, b) = (eval_int(a, env)?, eval_int(b, env)?);
            match op {
                BinOp::Add => Some(a.wrapping_add(b)),
                BinOp::Sub => Some(a.wrapping_sub(b)),
                BinOp::Mul => Some(a.wrapping_mul(b)),
                BinOp::Div => a.checked_div_euclid(b).filter(|_| b != 0),
                BinOp::Rem => a.checked_rem_euclid(b).filter(|_| b != 0),
                BinOp::Min => Some(a.min(b)),
                BinOp::Max => Some(a.max(b)),
                _ => None,
            }
        }
    }
}

/// `l` with every expression evaluated under `env`.
pub fn concrete(l: &Lmad<SExp>, env: &dyn Fn(&Name) -> Option<i64>) -> Option<Lmad<i64>> {
    let offset = eval_int(&l.offset, env)?;
    let dims = l
        .dims
        .iter()
        .map(|d| {
            Some(Dim {
                elems: eval_int(&d.elems, env)?,
                stride: eval_int(&d.stride, env)?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Lmad { offset, dims })
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::parse::parse_program;

    fn stms(text: &str) -> Vec<Stm> {
        let p = parse_program(text, Lang::FunMem).expect("parses");
        p.body.stms
    }

    #[test]
    fn every_array_creating_statement_has_a_write_set() {
        let s = stms(
            "def main (n: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
               let (m: mem) = alloc n
               let (a: [n]i64 @ m -> R(n)) = copy xs
               let (v: [2]i64 @ xm -> 0 + {(2 : 1)}) = xs[0 : 2]
               let (b: [n]i64 @ m -> R(n)) = a with [1 : 2] = v
               in (b)",
        );
        assert_eq!(writes(&s[0]), Writes::Nothing);
        let Writes::Exact(r) = writes(&s[1]) else {
            panic!("copy")
        };
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].lmad.dims.len(), 1);
        assert_eq!(writes(&s[2]), Writes::Nothing);
        let Writes::Exact(r) = writes(&s[3]) else {
            panic!("update")
        };
        let env = |x: &Name| (x.to_string() == "n").then_some(5);
        let l = concrete(&r[0].lmad, &env).expect("concrete");
        assert_eq!(l.image().collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn an_element_update_writes_one_location() {
        let three = SExp::Atom(Atom::Int(3, funmem_lang::Span::DUMMY));
        let l = Lmad::row_major(&[three.clone(), three]);
        let i = Atom::Int(2, funmem_lang::Span::DUMMY);
        let part = update_part(&l, &[UpdIdx::Elem(i.clone()), UpdIdx::Elem(i)]);
        let c = concrete(&part, &|_| None).expect("constant");
        assert_eq!(c.image().collect::<Vec<_>>(), vec![8]);
    }
}
