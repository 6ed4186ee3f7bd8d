//! Type checkers of FUN (IFL paper fig. 3), FUNMEM (fig. 8) and IMP.
//!
//! Each checker returns the first error as a [`Diagnostic`] that names the
//! construct, what was expected and what was found, and points at the source.
//! Conventions of DESIGN.md §3 are enforced here: names are never rebound
//! where they are visible, and every array size is an `int` in scope.

mod fun;
mod imp;
mod scope;

pub use fun::check_program;
pub use imp::check_imp;

use crate::diag::Diagnostic;
use crate::parse::AnyProgram;

/// Checks a program of any layer.
pub fn check_any(p: &AnyProgram) -> Result<(), Diagnostic> {
    match p {
        AnyProgram::Fun(p) => check_program(p),
        AnyProgram::Imp(p) => check_imp(p),
    }
}
