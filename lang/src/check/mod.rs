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
