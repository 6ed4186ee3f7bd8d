//! Values as programs take and give them: scalars of the element types and
//! arrays of them.
//!
//! This is the interface between the interpreters and the outside world
//! (inputs, results, comparisons between semantics, the OpenCL driver). An
//! array is flat and row-major with its shape, its elements in a vector of
//! their own type ([`Elems`]), so that 10^8 `f32`s take 400 MB and cross to
//! a device as they are. Interpreters keep their own internal
//! representations and convert at the boundary.
//!
//! Equality is exact, element by element, bit for bit on floats, except
//! that every NaN equals every NaN ([`Const::same`]); [`Value::close_to`]
//! is the documented tolerance for floats (docs/language.md, "Comparing
//! floats").

use funmem_lang::prim::{Const, Prim};
use std::fmt;

/// A program's input or result.
#[derive(Clone, Debug)]
pub enum Value {
    /// A scalar.
    Scalar(Const),
    /// An array.
    Array(ArrayValue),
}

/// A multi-dimensional array: its shape, outermost first, and its elements
/// in row-major order (`data.len()` is the product of `shape`).
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    /// Size of each dimension, outermost first; never empty.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: Elems,
}

/// The elements of an array, in a vector of their type.
#[derive(Clone, Debug)]
pub enum Elems {
    /// `bool` elements.
    Bool(Vec<bool>),
    /// `i32` elements.
    I32(Vec<i32>),
    /// `i64` elements.
    I64(Vec<i64>),
    /// `f32` elements.
    F32(Vec<f32>),
    /// `f64` elements.
    F64(Vec<f64>),
}

impl Elems {
    /// No elements of type `p`, with room for `cap`.
    pub fn with_capacity(p: Prim, cap: usize) -> Elems {
        match p {
            Prim::Bool => Elems::Bool(Vec::with_capacity(cap)),
            Prim::I32 => Elems::I32(Vec::with_capacity(cap)),
            Prim::I64 => Elems::I64(Vec::with_capacity(cap)),
            Prim::F32 => Elems::F32(Vec::with_capacity(cap)),
            Prim::F64 => Elems::F64(Vec::with_capacity(cap)),
        }
    }

    /// The elements' type.
    pub fn prim(&self) -> Prim {
        match self {
            Elems::Bool(_) => Prim::Bool,
            Elems::I32(_) => Prim::I32,
            Elems::I64(_) => Prim::I64,
            Elems::F32(_) => Prim::F32,
            Elems::F64(_) => Prim::F64,
        }
    }

    /// How many.
    pub fn len(&self) -> usize {
        match self {
            Elems::Bool(v) => v.len(),
            Elems::I32(v) => v.len(),
            Elems::I64(v) => v.len(),
            Elems::F32(v) => v.len(),
            Elems::F64(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (which must exist).
    pub fn get(&self, i: usize) -> Const {
        match self {
            Elems::Bool(v) => Const::Bool(v[i]),
            Elems::I32(v) => Const::I32(v[i]),
            Elems::I64(v) => Const::I64(v[i]),
            Elems::F32(v) => Const::f32(v[i]),
            Elems::F64(v) => Const::f64(v[i]),
        }
    }

    /// Element `i` as a word ([`Const::to_bits`]).
    pub fn word(&self, i: usize) -> u64 {
        match self {
            Elems::Bool(v) => v[i] as u64,
            Elems::I32(v) => v[i] as i64 as u64,
            Elems::I64(v) => v[i] as u64,
            Elems::F32(v) => v[i].to_bits() as u64,
            Elems::F64(v) => v[i].to_bits(),
        }
    }

    /// Appends a constant, converted to the elements' type by its word
    /// ([`Const::from_bits`]): callers push constants of the right type.
    pub fn push(&mut self, c: Const) {
        self.push_word(c.to_bits());
    }

    /// Appends the element whose word is `w`.
    pub fn push_word(&mut self, w: u64) {
        match self {
            Elems::Bool(v) => v.push(w & 1 != 0),
            Elems::I32(v) => v.push(w as i32),
            Elems::I64(v) => v.push(w as i64),
            Elems::F32(v) => v.push(f32::from_bits(w as u32)),
            Elems::F64(v) => v.push(f64::from_bits(w)),
        }
    }

    /// The elements of type `p` whose words are `ws`.
    pub fn from_words(p: Prim, ws: impl IntoIterator<Item = u64>) -> Elems {
        let ws = ws.into_iter();
        let mut e = Elems::with_capacity(p, ws.size_hint().0);
        for w in ws {
            e.push_word(w);
        }
        e
    }

    /// Every element as a word, in order.
    pub fn words(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.word(i))
    }

    /// Every element, in order.
    pub fn iter(&self) -> impl Iterator<Item = Const> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The `i64` elements, if that is their type.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            Elems::I64(v) => Some(v),
            _ => None,
        }
    }

    /// Elements `range`, as elements of the same type.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Elems {
        match self {
            Elems::Bool(v) => Elems::Bool(v[range].to_vec()),
            Elems::I32(v) => Elems::I32(v[range].to_vec()),
            Elems::I64(v) => Elems::I64(v[range].to_vec()),
            Elems::F32(v) => Elems::F32(v[range].to_vec()),
            Elems::F64(v) => Elems::F64(v[range].to_vec()),
        }
    }

    /// The elements as little-endian bytes, as blocks and Futhark's binary
    /// format hold them (a bool is one byte, 0 or 1).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        fn flat<const N: usize, T: Copy>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
            let mut out = Vec::with_capacity(v.len() * N);
            for &x in v {
                out.extend_from_slice(&f(x));
            }
            out
        }
        match self {
            Elems::Bool(v) => v.iter().map(|&b| b as u8).collect(),
            Elems::I32(v) => flat(v, i32::to_le_bytes),
            Elems::I64(v) => flat(v, i64::to_le_bytes),
            Elems::F32(v) => flat(v, f32::to_le_bytes),
            Elems::F64(v) => flat(v, f64::to_le_bytes),
        }
    }

    /// The elements of type `p` held in `bytes` (little-endian; its length
    /// a multiple of the element size).
    pub fn from_le_bytes(p: Prim, bytes: &[u8]) -> Elems {
        fn unflat<const N: usize, T>(b: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            b.chunks_exact(N)
                .map(|c| f(c.try_into().unwrap_or([0; N])))
                .collect()
        }
        match p {
            Prim::Bool => Elems::Bool(bytes.iter().map(|&b| b != 0).collect()),
            Prim::I32 => Elems::I32(unflat(bytes, i32::from_le_bytes)),
            Prim::I64 => Elems::I64(unflat(bytes, i64::from_le_bytes)),
            Prim::F32 => Elems::F32(unflat(bytes, f32::from_le_bytes)),
            Prim::F64 => Elems::F64(unflat(bytes, f64::from_le_bytes)),
        }
    }
}

impl PartialEq for Elems {
    /// Exact, NaNs equal to NaNs ([`Const::same`]).
    fn eq(&self, o: &Elems) -> bool {
        match (self, o) {
            (Elems::Bool(a), Elems::Bool(b)) => a == b,
            (Elems::I32(a), Elems::I32(b)) => a == b,
            (Elems::I64(a), Elems::I64(b)) => a == b,
            (Elems::F32(a), Elems::F32(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
            }
            (Elems::F64(a), Elems::F64(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
            }
            _ => false,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, o: &Value) -> bool {
        match (self, o) {
            (Value::Scalar(a), Value::Scalar(b)) => a.same(*b),
            (Value::Array(a), Value::Array(b)) => a == b,
            _ => false,
        }
    }
}

/// The tolerance results are compared with where floats may legitimately
/// differ (docs/language.md, "Comparing floats"), in the spirit of `futhark
/// test`: two floats agree when they are the same (NaN with NaN, an
/// infinity with the same infinity) or when |a - b| <= tol * max(1, |a|,
/// |b|), with tol [`F32_TOLERANCE`] or [`F64_TOLERANCE`]: relative for
/// large values, absolute below 1.
pub fn floats_close(p: Prim, a: f64, b: f64) -> bool {
    if a == b || (a.is_nan() && b.is_nan()) {
        return true;
    }
    if !a.is_finite() || !b.is_finite() {
        return false;
    }
    let tol = match p {
        Prim::F32 => F32_TOLERANCE,
        _ => F64_TOLERANCE,
    };
    (a - b).abs() <= tol * 1f64.max(a.abs()).max(b.abs())
}

/// Relative tolerance (with an absolute floor of the same size) for `f32`.
pub const F32_TOLERANCE: f64 = 2e-3;
/// Relative tolerance (with an absolute floor of the same size) for `f64`.
pub const F64_TOLERANCE: f64 = 1e-9;

impl Value {
    /// The `i64` scalar k.
    pub fn int(k: i64) -> Value {
        Value::Scalar(Const::I64(k))
    }

    /// The integer, if the value is an `i64` scalar.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Scalar(Const::I64(k)) => Some(*k),
            _ => None,
        }
    }

    /// The element type (of a scalar, its own type).
    pub fn prim(&self) -> Prim {
        match self {
            Value::Scalar(c) => c.prim(),
            Value::Array(a) => a.data.prim(),
        }
    }

    /// A short description of the value's type, e.g. `i64` or `[3][0]f32`.
    pub fn type_name(&self) -> String {
        match self {
            Value::Scalar(c) => c.prim().to_string(),
            Value::Array(a) => {
                let dims: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
                format!("{dims}{}", a.data.prim())
            }
        }
    }

    /// Equal, or equal within the float tolerance ([`floats_close`]):
    /// same type and shape, integers and bools exactly.
    pub fn close_to(&self, o: &Value) -> bool {
        match (self, o) {
            (Value::Scalar(a), Value::Scalar(b)) => {
                a.prim() == b.prim()
                    && (a.same(*b)
                        || (a.prim().is_float() && floats_close(a.prim(), a.as_f64(), b.as_f64())))
            }
            (Value::Array(a), Value::Array(b)) => {
                let p = a.data.prim();
                a.shape == b.shape
                    && p == b.data.prim()
                    && (a.data == b.data
                        || (p.is_float()
                            && a.data
                                .iter()
                                .zip(b.data.iter())
                                .all(|(x, y)| floats_close(p, x.as_f64(), y.as_f64()))))
            }
            _ => false,
        }
    }
}

impl ArrayValue {
    /// A 1-D array of `i64`s.
    pub fn vector(data: Vec<i64>) -> ArrayValue {
        ArrayValue {
            shape: vec![data.len()],
            data: Elems::I64(data),
        }
    }

    /// An array of `i64`s of the given shape.
    pub fn ints(shape: Vec<usize>, data: Vec<i64>) -> ArrayValue {
        ArrayValue {
            shape,
            data: Elems::I64(data),
        }
    }

    /// The array's rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element type.
    pub fn prim(&self) -> Prim {
        self.data.prim()
    }
}

impl fmt::Display for Value {
    /// Futhark's textual value format, as `futhark run` prints results.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Scalar(c) => write!(f, "{c}"),
            Value::Array(a) => {
                if a.data.is_empty() {
                    let dims: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
                    return write!(f, "empty({dims}{})", a.data.prim());
                }
                write_nested(f, &a.shape, &a.data, 0)
            }
        }
    }
}

fn write_nested(
    f: &mut fmt::Formatter<'_>,
    shape: &[usize],
    data: &Elems,
    start: usize,
) -> fmt::Result {
    f.write_str("[")?;
    match shape {
        [] => {}
        [n] => {
            for k in 0..*n {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", data.get(start + k))?;
            }
        }
        [n, rest @ ..] => {
            let stride: usize = rest.iter().product();
            for k in 0..*n {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write_nested(f, rest, data, start + k * stride)?;
            }
        }
    }
    f.write_str("]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_futhark_run() {
        assert_eq!(Value::int(-3).to_string(), "-3i64");
        assert_eq!(
            Value::Array(ArrayValue::vector(vec![1, 2])).to_string(),
            "[1i64, 2i64]"
        );
        let m = ArrayValue::ints(vec![2, 2], vec![1, 2, 3, 4]);
        assert_eq!(Value::Array(m).to_string(), "[[1i64, 2i64], [3i64, 4i64]]");
        let e = ArrayValue::ints(vec![3, 0], vec![]);
        assert_eq!(Value::Array(e).to_string(), "empty([3][0]i64)");
        let fs = ArrayValue {
            shape: vec![2],
            data: Elems::F32(vec![1.5, -0.0]),
        };
        assert_eq!(Value::Array(fs).to_string(), "[1.5f32, -0.0f32]");
        let bs = ArrayValue {
            shape: vec![1],
            data: Elems::Bool(vec![true]),
        };
        assert_eq!(Value::Array(bs).to_string(), "[true]");
    }

    #[test]
    fn floats_compare_exactly_or_within_the_tolerance() {
        let a = Value::Scalar(Const::f32(1.0));
        let b = Value::Scalar(Const::f32(1.0005));
        assert_ne!(a, b);
        assert!(a.close_to(&b));
        assert!(!a.close_to(&Value::Scalar(Const::f32(1.1))));
        assert_eq!(
            Value::Scalar(Const::f64(f64::NAN)),
            Value::Scalar(Const::f64(-f64::NAN))
        );
        assert!(!a.close_to(&Value::Scalar(Const::f64(1.0))));
    }
}
