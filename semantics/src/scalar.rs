//! Scalar operators, as docs/language.md fixes them: 64-bit two's complement;
//! `+ - *` wrap; `/` and `%` truncate toward zero as in C and OpenCL (and
//! wrap on `i64::MIN / -1`); comparisons, `&&`, `||` and `!` give 1 or 0,
//! and `&&` and `||` evaluate both sides. Division or remainder by zero is
//! the only way a scalar expression gets stuck.

use funmem_lang::ast::{BinOp, UnOp};

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
        assert_eq!(unop(UnOp::Neg, i64::MIN), i64::MIN);
    }
}
