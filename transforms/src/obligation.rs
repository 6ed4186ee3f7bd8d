//! Proof obligations: the facts about index functions that a pass relies
//! on (DESIGN.md §8). A pass states them; the provers (funmem-oracle)
//! discharge them; a rewrite is applied only when its obligations are
//! proved.

use funmem_lang::ast::SExp;
use funmem_lang::lmad::Lmad;
use funmem_lang::print::sexp_string;
use funmem_lang::Span;
use std::fmt;

/// What an obligation claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The images of the two LMADs (over their whole domains) do not
    /// overlap.
    Disjoint(Lmad<SExp>, Lmad<SExp>),
    /// The LMAD maps distinct indices of its domain to distinct addresses.
    Injective(Lmad<SExp>),
    /// Every address of the LMAD's image lies in `[0, size)`.
    InBounds(Lmad<SExp>, SExp),
    /// `lhs <= rhs`.
    AtMost(SExp, SExp),
}

/// A claim, in the context of the facts known where it arises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obligation {
    /// The pass that needs it.
    pub pass: &'static str,
    /// What must hold.
    pub claim: Claim,
    /// Facts known to hold (each a scalar expression that is non-zero):
    /// sizes are non-negative, branch conditions, kernel bounds.
    pub facts: Vec<SExp>,
    /// The program position that gave rise to it.
    pub span: Span,
}

fn lmad_string(l: &Lmad<SExp>) -> String {
    let dims: Vec<String> = l
        .dims
        .iter()
        .map(|d| format!("({} : {})", sexp_string(&d.elems), sexp_string(&d.stride)))
        .collect();
    format!("{} + {{{}}}", sexp_string(&l.offset), dims.join(" "))
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::Disjoint(a, b) => {
                write!(f, "disjoint {} and {}", lmad_string(a), lmad_string(b))
            }
            Claim::Injective(a) => write!(f, "injective {}", lmad_string(a)),
            Claim::InBounds(a, n) => {
                write!(f, "in-bounds {} within {}", lmad_string(a), sexp_string(n))
            }
            Claim::AtMost(a, b) => write!(f, "{} <= {}", sexp_string(a), sexp_string(b)),
        }
    }
}

impl fmt::Display for Obligation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.pass, self.claim)?;
        if !self.facts.is_empty() {
            let facts: Vec<String> = self.facts.iter().map(sexp_string).collect();
            write!(f, " given {}", facts.join(", "))?;
        }
        Ok(())
    }
}
