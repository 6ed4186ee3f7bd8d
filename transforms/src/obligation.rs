//! Proof obligations: the facts about index functions that a pass relies
//! on (docs/obligations.md). A pass states them; a [`Prover`] (funmem-oracle's
//! LMAD procedure and Z3) discharges them; a rewrite is applied only when
//! its obligations are proved. The types live in funmem-lang so that
//! obligation files and passes share them.

pub use funmem_lang::obligation::{
    Claim, Counterexample, Expect, Fact, Obligation, Outcome, Prover, Verdict,
};

/// A prover that proves nothing: every obligation is unknown, so a pass
/// run with it applies no rewrite that needs a proof.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProver;

impl Prover for NoProver {
    fn prove(&self, _: &Obligation) -> Verdict {
        Verdict {
            outcome: Outcome::Unknown("no prover".to_string()),
            prover: "none",
            time: std::time::Duration::ZERO,
        }
    }
}
