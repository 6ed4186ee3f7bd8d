//! Front ends of FUN, FUNMEM and IMP: abstract syntax, parsers, printers,
//! type checkers, LMADs and diagnostics.
//!
//! Architecture invariant: this crate knows nothing of evaluation or of
//! transformations; it only says what a program *is* and whether it is well
//! typed. Every other crate of the workspace builds on it.

pub mod alpha;
pub mod ast;
pub mod check;
pub mod count;
pub mod diag;
pub mod elab;
#[cfg(feature = "planted-faults")]
pub mod fault;
pub mod files;
pub mod front;
pub mod imp;
pub mod lmad;
pub mod name;
pub mod obligation;
pub mod parse;
pub mod poly;
pub mod prim;
pub mod print;
pub mod span;
pub mod subst;
pub mod testspec;

pub use name::Name;
pub use span::{Source, Span};
