//! Type checkers of FUN (IFL paper fig. 3), FUNMEM (fig. 8) and IMP.
//!
//! Each checker returns the first error as a [`Diagnostic`] that names the
//! construct, what was expected and what was found, and points at the source.
//! Conventions of docs/language.md are enforced here: names are never rebound
//! where they are visible, and every array size is an `int` in scope.

mod fun;
mod imp;
mod scope;
mod unique;

pub use fun::check_program;
pub use imp::check_imp;
pub use unique::check_uniqueness;

use crate::ast::{Atom, LmadSyn};
use crate::diag::{Diagnostic, Phase};
use crate::parse::AnyProgram;
use crate::poly::Poly;

/// Checks a program of any layer.
pub fn check_any(p: &AnyProgram) -> Result<(), Diagnostic> {
    match p {
        AnyProgram::Fun(p) => check_program(p),
        AnyProgram::Imp(p) => check_imp(p),
    }
}

/// An LMAD fits an array when it has one `(elements : stride)` pair per
/// dimension and each element count equals the array's size there
/// (compared as polynomials after `norm`, so `R(n)` fits `[n]`).
fn lmad_fits(
    lmad: &LmadSyn,
    shape: &[Atom],
    array: &str,
    norm: &dyn Fn(Poly) -> Poly,
) -> Result<(), Diagnostic> {
    let err = |msg: String| Diagnostic::new(Phase::Type, lmad.span(), msg);
    if lmad.rank() != shape.len() {
        return Err(err(format!(
            "index function has rank {}, but {array} has rank {}; an LMAD needs one (elements : stride) pair per dimension",
            lmad.rank(),
            shape.len()
        )));
    }
    let l = lmad.to_lmad().map(|e| norm(Poly::from_sexp(e)));
    for (k, (d, s)) in l.dims.iter().zip(shape).enumerate() {
        if d.elems != norm(Poly::atom(s)) {
            return Err(err(format!(
                "index function: dimension {k} has {} elements, but {array} has size {s} there",
                d.elems
            )));
        }
    }
    Ok(())
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The type of a scalar expression (T-OP and its extension to element
/// types, docs/language.md "Element types"), with `var` giving each
/// variable's type. Arithmetic (`+ - * / % min max`) takes two numbers of
/// one type and gives that type; comparisons take two values of one type
/// and give `bool`; `&& ||` take two `bool`s (or two integers of one type,
/// giving 1 or 0 of it); `-` and `abs` keep a number's type, `!` a bool's
/// or an integer's; `sqrt exp log floor` take and give a float; a
/// conversion `t(se)` takes any scalar.
pub fn sexp_type(
    e: &crate::ast::SExp,
    var: &dyn Fn(&crate::ast::Ident) -> Result<crate::prim::Prim, Diagnostic>,
) -> Result<crate::prim::Prim, Diagnostic> {
    use crate::ast::{BinOp, SExp, UnOp};
    use crate::prim::Prim;
    let err = |span, msg: String| Diagnostic::new(Phase::Type, span, msg);
    match e {
        SExp::Atom(Atom::Var(x)) => var(x),
        SExp::Atom(Atom::Int(..)) => Ok(Prim::I64),
        SExp::Atom(Atom::Const(c, _)) => Ok(c.prim()),
        SExp::Bin(op, a, b, span) => {
            let ta = sexp_type(a, var)?;
            let tb = sexp_type(b, var)?;
            let sym = op.symbol();
            if ta != tb {
                return Err(err(
                    *span,
                    format!(
                        "`{sym}` needs two operands of one type, but `{a}` is {ta} and `{b}` is {tb}; convert one, as in `{ta}({b})`"
                    ),
                ));
            }
            match op {
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                    Ok(Prim::Bool)
                }
                BinOp::And | BinOp::Or if ta == Prim::Bool || ta.is_int() => Ok(ta),
                BinOp::And | BinOp::Or => Err(err(
                    *span,
                    format!("`{sym}` takes bools (or integers), but its operands are {ta}"),
                )),
                _ if ta.is_numeric() => Ok(ta),
                _ => Err(err(
                    *span,
                    format!("`{sym}` takes numbers, but its operands are {ta}"),
                )),
            }
        }
        SExp::Un(op, a, span) => {
            let t = sexp_type(a, var)?;
            let ok = match op {
                UnOp::Conv(p) => return Ok(*p),
                UnOp::Neg | UnOp::Abs => t.is_numeric(),
                UnOp::Not => t == Prim::Bool || t.is_int(),
                UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor => t.is_float(),
            };
            if ok {
                return Ok(t);
            }
            let (name, wants) = match op {
                UnOp::Neg => ("-", "a number"),
                UnOp::Abs => ("abs", "a number"),
                UnOp::Not => ("!", "a bool or an integer"),
                _ => (op.function_name().unwrap_or("?"), "a float (f32 or f64)"),
            };
            Err(err(
                *span,
                format!("`{name}` takes {wants}, but `{a}` is {t}"),
            ))
        }
    }
}

/// Whether a reduction's built-in operator `(op)` applies to elements of
/// type `t`: `+ * min max` to numbers, `&& ||` to bools and integers.
pub fn builtin_applies(op: crate::ast::BinOp, t: crate::prim::Prim) -> bool {
    use crate::ast::BinOp;
    match op {
        BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max => t.is_numeric(),
        BinOp::And | BinOp::Or => t == crate::prim::Prim::Bool || t.is_int(),
        _ => false,
    }
}
