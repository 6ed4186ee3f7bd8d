//! Executable big-step semantics of FUN, FUNMEM and IMP: the project's oracles.
//!
//! - [`fun`]: FUN's value semantics (IFL 2022 paper, figs. 4-5), which is
//!   also FUNMEM's value semantics after [`unmem`] (fig. 9).
//! - [`heap`]: FUNMEM's heap semantics (fig. 10) with memcopy (eq. 5) and
//!   the race-freedom side condition (eq. 4), checked by [`race`].
//! - [`imp`]: IMP's semantics (fig. 12), kernels race-checked too.
//!
//! All indices are 0-based and integers wrap (docs/language.md, Conventions). Every failure
//! is an [`error::EvalError`] naming the paper's rule; evaluation is bounded
//! by [`error::Limits`]. Interpreters report events to an
//! [`observer::Observer`], free when none is attached.
//!
//! Architecture invariant: this crate evaluates programs; it never changes
//! them (beyond `unmem`, which is part of the FUNMEM value semantics) and
//! knows nothing of passes or code generation.

pub mod binary;
pub mod code;
pub mod error;
#[cfg(feature = "planted-faults")]
pub mod fault;
pub mod fun;
pub mod heap;
pub mod imp;
pub mod machine;
pub mod observer;
pub mod prog;
pub mod race;
pub mod run;
pub mod scalar;
pub mod textual;
pub mod unmem;
pub mod validity;
pub mod value;
