//! The front end in one call: pick the layer by file extension, parse,
//! type-check.

use crate::check::check_any;
use crate::diag::{Diagnostic, Phase};
use crate::parse::{parse_layer, AnyProgram, Layer};
use crate::span::{Source, Span};

/// Parses and type-checks `src`, whose name's extension (`.fun`, `.funmem`,
/// `.imp`) says which language it is in.
pub fn load(src: &Source) -> Result<AnyProgram, Diagnostic> {
    let layer = Layer::from_path(&src.name).ok_or_else(|| {
        Diagnostic::new(
            Phase::Syntax,
            Span::new(0, 0),
            "unknown file extension: expected .fun (FUN), .funmem (FUNMEM) or .imp (IMP)",
        )
    })?;
    let p = parse_layer(&src.text, layer)?;
    check_any(&p)?;
    Ok(p)
}

impl AnyProgram {
    /// The program printed in concrete syntax.
    pub fn print(&self) -> String {
        match self {
            AnyProgram::Fun(p) => crate::print::program(p),
            AnyProgram::Imp(p) => crate::print::imp_program(p),
        }
    }
}
