//! Element types and constants (docs/language.md, "Element types").
//!
//! Scalars are `bool`, `i32`, `i64` (`int` is `i64`), `f32` and `f64`.
//! A [`Const`] is a value of one of them; floats are kept as their IEEE bit
//! patterns so that constants compare and hash exactly (two NaNs with the
//! same bits are the same constant, `0.0` and `-0.0` are not).
//!
//! Constants print in Futhark's textual value format: `1i32`, `-3i64`,
//! `2.5f32`, `1.0f64`, `true`, `f32.nan`, `f64.inf`, `-f32.inf`. Floats print
//! with the shortest digits that read back to the same bits.

use std::fmt;

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
    /// `bool`: false or true (one byte in a block).
    Bool,
    /// `i32`: 32-bit two's complement.
    I32,
    /// `i64` (also written `int`): 64-bit two's complement.
    I64,
    /// `f32`: IEEE 754 binary32.
    F32,
    /// `f64`: IEEE 754 binary64.
    F64,
}

impl Prim {
    /// Every element type.
    pub const ALL: [Prim; 5] = [Prim::Bool, Prim::I32, Prim::I64, Prim::F32, Prim::F64];

    /// The type's name as programs and data files write it.
    pub fn name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I32 => "i32",
            Prim::I64 => "i64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
        }
    }

    /// The type named `s` (`int` is `i64`).
    pub fn from_name(s: &str) -> Option<Prim> {
        Some(match s {
            "bool" => Prim::Bool,
            "i32" => Prim::I32,
            "i64" | "int" => Prim::I64,
            "f32" => Prim::F32,
            "f64" => Prim::F64,
            _ => return None,
        })
    }

    /// Bytes one element occupies in a block.
    pub fn size(self) -> u64 {
        match self {
            Prim::Bool => 1,
            Prim::I32 | Prim::F32 => 4,
            Prim::I64 | Prim::F64 => 8,
        }
    }

    /// `i32` or `i64`.
    pub fn is_int(self) -> bool {
        matches!(self, Prim::I32 | Prim::I64)
    }

    /// `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }

    /// Integer or float (arithmetic applies).
    pub fn is_numeric(self) -> bool {
        self != Prim::Bool
    }

    /// The value every fresh cell of this type reads as (all bits zero).
    pub fn zero(self) -> Const {
        Const::from_bits(self, 0)
    }
}

impl fmt::Display for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scalar value of some element type. Floats are held as their bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Const {
    /// A `bool`.
    Bool(bool),
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// An `f32`, as its bits.
    F32(u32),
    /// An `f64`, as its bits.
    F64(u64),
}

impl Const {
    /// The constant's type.
    pub fn prim(self) -> Prim {
        match self {
            Const::Bool(_) => Prim::Bool,
            Const::I32(_) => Prim::I32,
            Const::I64(_) => Prim::I64,
            Const::F32(_) => Prim::F32,
            Const::F64(_) => Prim::F64,
        }
    }

    /// An `f32` constant.
    pub fn f32(x: f32) -> Const {
        Const::F32(x.to_bits())
    }

    /// An `f64` constant.
    pub fn f64(x: f64) -> Const {
        Const::F64(x.to_bits())
    }

    /// The constant as a 64-bit word, as the interpreters keep scalars:
    /// integers sign-extended, bools 0 or 1, floats their bits (an `f32`'s
    /// in the low 32).
    pub fn to_bits(self) -> u64 {
        match self {
            Const::Bool(b) => b as u64,
            Const::I32(k) => k as i64 as u64,
            Const::I64(k) => k as u64,
            Const::F32(b) => b as u64,
            Const::F64(b) => b,
        }
    }

    /// The constant of type `p` whose word (see [`Const::to_bits`]) is `w`.
    pub fn from_bits(p: Prim, w: u64) -> Const {
        match p {
            Prim::Bool => Const::Bool(w & 1 != 0),
            Prim::I32 => Const::I32(w as i32),
            Prim::I64 => Const::I64(w as i64),
            Prim::F32 => Const::F32(w as u32),
            Prim::F64 => Const::F64(w),
        }
    }

    /// The value as an `f64` (exact for every type but large `i64`s).
    pub fn as_f64(self) -> f64 {
        match self {
            Const::Bool(b) => b as u8 as f64,
            Const::I32(k) => k as f64,
            Const::I64(k) => k as f64,
            Const::F32(b) => f32::from_bits(b) as f64,
            Const::F64(b) => f64::from_bits(b),
        }
    }

    /// The integer, for `i32`, `i64` and `bool` (0 or 1).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Const::Bool(b) => Some(b as i64),
            Const::I32(k) => Some(k as i64),
            Const::I64(k) => Some(k),
            Const::F32(_) | Const::F64(_) => None,
        }
    }

    /// Whether the constant is a float NaN.
    pub fn is_nan(self) -> bool {
        match self {
            Const::F32(b) => f32::from_bits(b).is_nan(),
            Const::F64(b) => f64::from_bits(b).is_nan(),
            _ => false,
        }
    }

    /// Equality as results are compared: exact (bit for bit), except that
    /// every NaN equals every NaN of its type.
    pub fn same(self, other: Const) -> bool {
        self == other || (self.prim() == other.prim() && self.is_nan() && other.is_nan())
    }

    /// `-c` for a number (integers wrap, floats flip their sign bit);
    /// `None` for a `bool`.
    pub fn negated(self) -> Option<Const> {
        Some(match self {
            Const::Bool(_) => return None,
            Const::I32(k) => Const::I32(k.wrapping_neg()),
            Const::I64(k) => Const::I64(k.wrapping_neg()),
            Const::F32(b) => Const::F32(b ^ 0x8000_0000),
            Const::F64(b) => Const::F64(b ^ 0x8000_0000_0000_0000),
        })
    }

    /// Prints the constant without a type suffix where the type needs none
    /// in a program (`i64` integers), with one otherwise.
    /// A NaN whose sign bit is set prints as `-f32.nan` (a data file has
    /// no such literal, but a program keeps every bit of its constants).
    pub fn program_text(self) -> String {
        match self {
            Const::I64(k) => k.to_string(),
            Const::F32(b) if self.is_nan() && b >> 31 == 1 => "-f32.nan".into(),
            Const::F64(b) if self.is_nan() && b >> 63 == 1 => "-f64.nan".into(),
            c => c.to_string(),
        }
    }
}

/// Writes a float with the shortest digits that read back to it, always
/// with a decimal point or exponent, then `suffix`.
fn float_text(f: &mut fmt::Formatter<'_>, x: f64, shortest: String, suffix: &str) -> fmt::Result {
    if x.is_nan() {
        return write!(f, "{suffix}.nan");
    }
    if x.is_infinite() {
        let sign = if x < 0.0 { "-" } else { "" };
        return write!(f, "{sign}{suffix}.inf");
    }
    let mut s = shortest;
    if !s.contains(['.', 'e', 'E']) {
        s.push_str(".0");
    }
    write!(f, "{s}{suffix}")
}

impl fmt::Display for Const {
    /// Futhark's textual value format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Const::Bool(b) => write!(f, "{b}"),
            Const::I32(k) => write!(f, "{k}i32"),
            Const::I64(k) => write!(f, "{k}i64"),
            Const::F32(b) => {
                let x = f32::from_bits(b);
                float_text(f, x as f64, format!("{x:?}"), "f32")
            }
            Const::F64(b) => {
                let x = f64::from_bits(b);
                float_text(f, x, format!("{x:?}"), "f64")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_futhark_values() {
        assert_eq!(Const::I32(-3).to_string(), "-3i32");
        assert_eq!(Const::I64(7).to_string(), "7i64");
        assert_eq!(Const::f32(2.5).to_string(), "2.5f32");
        assert_eq!(Const::f64(1.0).to_string(), "1.0f64");
        assert_eq!(Const::f32(f32::NAN).to_string(), "f32.nan");
        assert_eq!(Const::f64(f64::NEG_INFINITY).to_string(), "-f64.inf");
        assert_eq!(Const::Bool(true).to_string(), "true");
        assert_eq!(Const::f32(0.1).to_string(), "0.1f32");
        assert_eq!(Const::f64(1e300).to_string(), "1e300f64");
    }

    #[test]
    fn words_round_trip() {
        for c in [
            Const::I32(-1),
            Const::I64(i64::MIN),
            Const::f32(-0.0),
            Const::f64(f64::MAX),
            Const::Bool(true),
        ] {
            assert_eq!(Const::from_bits(c.prim(), c.to_bits()), c);
        }
        assert_eq!(Const::I32(-1).to_bits(), u64::MAX);
    }

    #[test]
    fn nans_are_the_same_result() {
        assert!(Const::f32(f32::NAN).same(Const::F32(0x7fc0_0001)));
        assert!(!Const::f32(0.0).same(Const::f32(-0.0)));
    }
}
