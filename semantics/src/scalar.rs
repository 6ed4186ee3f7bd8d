//! Scalar operators, as docs/language.md fixes them: 64-bit two's complement;
//! `+ - *` wrap; `/` and `%` truncate toward zero as in C and OpenCL (and
//! wrap on `i64::MIN / -1`); comparisons, `&&`, `||` and `!` give 1 or 0,
//! and `&&` and `||` evaluate both sides. Division or remainder by zero is
//! the only way a scalar expression gets stuck.

use funmem_lang::ast::{BinOp, UnOp};
use funmem_lang::prim::{Const, Prim};

/// Why a scalar operation has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivByZero;

/// `a op b`.
#[inline]
pub fn binop(op: BinOp, a: i64, b: i64) -> Result<i64, DivByZero> {
    Ok(match op {
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Div => {
            if b == 0 {
                return Err(DivByZero);
            }
            a.wrapping_div(b)
        }
        BinOp::Rem => {
            if b == 0 {
                return Err(DivByZero);
            }
            a.wrapping_rem(b)
        }
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Lt => (a < b) as i64,
        BinOp::Le => (a <= b) as i64,
        BinOp::Gt => (a > b) as i64,
        BinOp::Ge => (a >= b) as i64,
        BinOp::Eq => (a == b) as i64,
        BinOp::Ne => (a != b) as i64,
        BinOp::And => (a != 0 && b != 0) as i64,
        BinOp::Or => (a != 0 || b != 0) as i64,
        BinOp::Min => a.min(b),
        BinOp::Max => a.max(b),
    })
}

/// `op a`.
#[inline]
pub fn unop(op: UnOp, a: i64) -> i64 {
    match op {
        UnOp::Neg => a.wrapping_neg(),
        UnOp::Not => (a == 0) as i64,
        // TRANSIENT(issue 19): typed operators replace this i64-only table.
        UnOp::Abs => a.wrapping_abs(),
        UnOp::Conv(_) | UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor => a,
    }
}

/// `a op b` on words ([`funmem_lang::prim::Const::to_bits`]) of element
/// type `t` (the operands' type; a comparison gives a `bool` word).
///
/// Integers wrap at their width and divide truncating toward zero (stuck
/// on zero); floats follow IEEE 754 (`/` by zero is an infinity or NaN,
/// `%` is C's `fmod`, `min`/`max` are `fmin`/`fmax`, which return the
/// other operand when one is NaN); `bool`s compare with false < true and
/// combine with `&&`, `||`. The type checker rules out the rest (arithmetic
/// on `bool`); they give 0 rather than panic.
#[inline]
pub fn binop_t(op: BinOp, t: Prim, a: u64, b: u64) -> Result<u64, DivByZero> {
    match t {
        Prim::I64 => binop(op, a as i64, b as i64).map(|v| v as u64),
        Prim::I32 => {
            let (x, y) = (a as i32, b as i32);
            let v: i64 = match op {
                BinOp::Mul => x.wrapping_mul(y) as i64,
                BinOp::Div if y == 0 => return Err(DivByZero),
                BinOp::Rem if y == 0 => return Err(DivByZero),
                BinOp::Div => x.wrapping_div(y) as i64,
                BinOp::Rem => x.wrapping_rem(y) as i64,
                BinOp::Add => x.wrapping_add(y) as i64,
                BinOp::Sub => x.wrapping_sub(y) as i64,
                BinOp::Min => x.min(y) as i64,
                BinOp::Max => x.max(y) as i64,
                BinOp::And => (x != 0 && y != 0) as i64,
                BinOp::Or => (x != 0 || y != 0) as i64,
                BinOp::Lt => return Ok((x < y) as u64),
                BinOp::Le => return Ok((x <= y) as u64),
                BinOp::Gt => return Ok((x > y) as u64),
                BinOp::Ge => return Ok((x >= y) as u64),
                BinOp::Eq => return Ok((x == y) as u64),
                BinOp::Ne => return Ok((x != y) as u64),
            };
            Ok(v as u64)
        }
        Prim::Bool => {
            let (x, y) = (a & 1 != 0, b & 1 != 0);
            Ok(match op {
                BinOp::And => x && y,
                BinOp::Or => x || y,
                BinOp::Lt => !x & y,
                BinOp::Le => x <= y,
                BinOp::Gt => x & !y,
                BinOp::Ge => x >= y,
                BinOp::Eq => x == y,
                BinOp::Ne => x != y,
                BinOp::Min => x && y,
                BinOp::Max => x || y,
                _ => false,
            } as u64)
        }
        Prim::F32 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            Ok(match op {
                BinOp::Mul => (x * y).to_bits() as u64,
                BinOp::Div => (x / y).to_bits() as u64,
                BinOp::Rem => (x % y).to_bits() as u64,
                BinOp::Add => (x + y).to_bits() as u64,
                BinOp::Sub => (x - y).to_bits() as u64,
                BinOp::Min => x.min(y).to_bits() as u64,
                BinOp::Max => x.max(y).to_bits() as u64,
                BinOp::Lt => (x < y) as u64,
                BinOp::Le => (x <= y) as u64,
                BinOp::Gt => (x > y) as u64,
                BinOp::Ge => (x >= y) as u64,
                BinOp::Eq => (x == y) as u64,
                BinOp::Ne => (x != y) as u64,
                BinOp::And | BinOp::Or => 0,
            })
        }
        Prim::F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            Ok(match op {
                BinOp::Mul => (x * y).to_bits(),
                BinOp::Div => (x / y).to_bits(),
                BinOp::Rem => (x % y).to_bits(),
                BinOp::Add => (x + y).to_bits(),
                BinOp::Sub => (x - y).to_bits(),
                BinOp::Min => x.min(y).to_bits(),
                BinOp::Max => x.max(y).to_bits(),
                BinOp::Lt => (x < y) as u64,
                BinOp::Le => (x <= y) as u64,
                BinOp::Gt => (x > y) as u64,
                BinOp::Ge => (x >= y) as u64,
                BinOp::Eq => (x == y) as u64,
                BinOp::Ne => (x != y) as u64,
                BinOp::And | BinOp::Or => 0,
            })
        }
    }
}

/// `op a` on a word of type `t` (the operand's type). Conversions: integer
/// to integer wraps (sign-extends or truncates); to `bool` is "not zero"
/// (a NaN is true, as C's `x != 0`); `bool` to a number is 0 or 1; float to integer truncates
/// toward zero and saturates, NaN giving 0 (Rust's `as`, OpenCL's
/// `convert_T_sat_rtz`); integer to float rounds to nearest; `f64` to `f32`
/// rounds to nearest. `abs` of the least integer is itself.
#[inline]
pub fn unop_t(op: UnOp, t: Prim, a: u64) -> u64 {
    let c = Const::from_bits(t, a);
    match op {
        UnOp::Conv(to) => convert(c, to).to_bits(),
        UnOp::Neg => c.negated().unwrap_or(c).to_bits(),
        UnOp::Not => match c {
            Const::Bool(b) => !b as u64,
            Const::I32(k) => Const::I32((k == 0) as i32).to_bits(),
            Const::I64(k) => (k == 0) as u64,
            _ => 0,
        },
        UnOp::Abs => match c {
            Const::I32(k) => Const::I32(k.wrapping_abs()).to_bits(),
            Const::I64(k) => k.wrapping_abs() as u64,
            Const::F32(b) => (b & 0x7fff_ffff) as u64,
            Const::F64(b) => b & 0x7fff_ffff_ffff_ffff,
            Const::Bool(b) => b as u64,
        },
        UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor => match c {
            Const::F32(b) => float_fn32(op, f32::from_bits(b)) as u64,
            Const::F64(b) => float_fn64(op, f64::from_bits(b)).to_bits(),
            _ => a,
        },
    }
}

/// A float function on an `f32`, computed in `f32` (`sqrt` and `floor` are
/// correctly rounded there; `exp` and `log` use the platform's `f32`
/// routines, which may differ from OpenCL's in the last bits: the oracle
/// compares them within its tolerance).
fn float_fn32(op: UnOp, x: f32) -> u32 {
    match op {
        UnOp::Sqrt => x.sqrt(),
        UnOp::Exp => x.exp(),
        UnOp::Log => x.ln(),
        _ => x.floor(),
    }
    .to_bits()
}

fn float_fn64(op: UnOp, x: f64) -> f64 {
    match op {
        UnOp::Sqrt => x.sqrt(),
        UnOp::Exp => x.exp(),
        UnOp::Log => x.ln(),
        _ => x.floor(),
    }
}

/// `to(c)`: the conversion `unop_t` describes.
pub fn convert(c: Const, to: Prim) -> Const {
    match (c, to) {
        (_, Prim::Bool) => Const::Bool(match c {
            Const::Bool(b) => b,
            Const::I32(k) => k != 0,
            Const::I64(k) => k != 0,
            Const::F32(_) | Const::F64(_) => c.as_f64() != 0.0,
        }),
        (Const::F32(b), Prim::F64) => Const::f64(f32::from_bits(b) as f64),
        (Const::F64(b), Prim::F32) => Const::f32(f64::from_bits(b) as f32),
        (Const::F32(_) | Const::F64(_), Prim::I32) => Const::I32(c.as_f64() as i32),
        (Const::F32(_) | Const::F64(_), Prim::I64) => Const::I64(c.as_f64() as i64),
        (Const::F32(b), Prim::F32) => Const::F32(b),
        (Const::F64(b), Prim::F64) => Const::F64(b),
        // Integers and bools.
        (_, Prim::I32) => Const::I32(c.as_i64().unwrap_or(0) as i32),
        (_, Prim::I64) => Const::I64(c.as_i64().unwrap_or(0)),
        (_, Prim::F32) => Const::f32(c.as_i64().unwrap_or(0) as f32),
        (_, Prim::F64) => Const::f64(c.as_i64().unwrap_or(0) as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_semantics() {
        assert_eq!(binop(BinOp::Div, -7, 2), Ok(-3));
        assert_eq!(binop(BinOp::Rem, -7, 2), Ok(-1));
        assert_eq!(binop(BinOp::Rem, 7, -2), Ok(1));
        assert_eq!(binop(BinOp::Div, i64::MIN, -1), Ok(i64::MIN));
        assert_eq!(binop(BinOp::Rem, i64::MIN, -1), Ok(0));
        assert_eq!(binop(BinOp::Div, 1, 0), Err(DivByZero));
        assert_eq!(binop(BinOp::Rem, 1, 0), Err(DivByZero));
        assert_eq!(binop(BinOp::Add, i64::MAX, 1), Ok(i64::MIN));
        assert_eq!(binop(BinOp::And, 2, 3), Ok(1));
        assert_eq!(binop(BinOp::Or, 0, 0), Ok(0));
        assert_eq!(unop(UnOp::Not, 5), 0);
    }

    #[test]
    fn typed_operators() {
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(
            binop_t(BinOp::Add, Prim::F32, f(0.1), f(0.2)),
            Ok(f(0.1 + 0.2))
        );
        assert_eq!(
            binop_t(BinOp::Div, Prim::F32, f(1.0), f(0.0)),
            Ok(f(f32::INFINITY))
        );
        assert_eq!(
            binop_t(BinOp::Add, Prim::I32, Const::I32(i32::MAX).to_bits(), 1),
            Ok(Const::I32(i32::MIN).to_bits())
        );
        assert_eq!(binop_t(BinOp::Div, Prim::I32, 1, 0), Err(DivByZero));
        assert_eq!(binop_t(BinOp::Lt, Prim::F32, f(1.0), f(2.0)), Ok(1));
        assert_eq!(
            unop_t(UnOp::Conv(Prim::I32), Prim::F32, f(-2.7)),
            Const::I32(-2).to_bits()
        );
        assert_eq!(unop_t(UnOp::Conv(Prim::I32), Prim::F32, f(f32::NAN)), 0);
        assert_eq!(unop_t(UnOp::Conv(Prim::I64), Prim::Bool, 1), 1);
        assert_eq!(unop_t(UnOp::Sqrt, Prim::F32, f(4.0)), f(2.0));
        assert_eq!(unop_t(UnOp::Neg, Prim::F32, f(0.0)), f(-0.0));
        assert_eq!(unop_t(UnOp::Abs, Prim::I32, Const::I32(-3).to_bits()), 3);
        assert_eq!(unop(UnOp::Neg, i64::MIN), i64::MIN);
    }
}
