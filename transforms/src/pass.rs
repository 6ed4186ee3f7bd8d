//! The pass interface: a FUNMEM program in, a FUNMEM program and its proof
//! obligations out. Every pass is listed in [`PASSES`], so that
//! `funmem opt --passes a,b,c`, `funmem validate` and the fuzzer find it by
//! name.

use crate::obligation::{Obligation, Prover, Verdict};
use funmem_lang::ast::{Lang, Program};
use funmem_lang::diag::{Diagnostic, Phase};

/// What a pass produces.
#[derive(Clone, Debug)]
pub struct PassOutput {
    /// The transformed program.
    pub program: Program,
    /// The facts the transformation relied on, each with the verdict the
    /// prover gave; a rewrite whose obligations were not all proved was not
    /// applied.
    pub obligations: Vec<(Obligation, Verdict)>,
    /// What the pass did, counted (allocations seen and expanded, copies
    /// removed, ...): what a fuzz campaign adds up and compares, so that a
    /// rewrite that stops being applied shows even where every check stays
    /// green.
    pub counts: Counts,
    /// What the pass did and did not do, one line per decision (what
    /// `funmem opt --explain` prints); empty for passes that do not say.
    pub explain: Vec<String>,
}

/// Named counts of what a pass did on one program (`kernel allocations`,
/// `expanded`, `copies removed`, ...), in the order first counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts(pub Vec<(&'static str, u64)>);

impl Counts {
    /// Adds `n` to the count `name`.
    pub fn add(&mut self, name: &'static str, n: u64) {
        match self.0.iter_mut().find(|(k, _)| *k == name) {
            Some((_, c)) => *c = c.saturating_add(n),
            None => self.0.push((name, n)),
        }
    }

    /// The count `name` (0 when never counted).
    pub fn get(&self, name: &str) -> u64 {
        self.0
            .iter()
            .find(|(k, _)| *k == name)
            .map_or(0, |(_, c)| *c)
    }
}

/// A FUNMEM -> FUNMEM pass.
#[derive(Clone, Copy)]
pub struct Pass {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    run: fn(&Program, &dyn Prover) -> Result<PassOutput, Diagnostic>,
}

impl Pass {
    /// Runs the pass on a FUNMEM program, discharging its obligations with
    /// `prover`.
    pub fn run(&self, p: &Program, prover: &dyn Prover) -> Result<PassOutput, Diagnostic> {
        if p.lang != Lang::FunMem {
            return Err(Diagnostic::new(
                Phase::Transform,
                p.span,
                format!("pass `{}` needs a FUNMEM program", self.name),
            ));
        }
        (self.run)(p, prover)
    }
}

impl std::fmt::Debug for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Every pass, by name.
pub const PASSES: &[Pass] = &[
    Pass {
        name: "simplify",
        summary: "remove what lowering leaves redundant: branch-invariant if results, unused bindings, copies of values already in place",
        run: crate::simplify::simplify_pass,
    },
    Pass {
        name: "expand-cpu",
        summary: "memory expansion (IFL §5): hoist allocations out of kernels; each iteration's part contiguous",
        run: crate::expand::expand_cpu_pass,
    },
    Pass {
        name: "expand-gpu",
        summary: "memory expansion (IFL §5): hoist allocations out of kernels; iterations interleaved (coalesced)",
        run: crate::expand::expand_gpu_pass,
    },
    Pass {
        name: "coalesce",
        summary: "memory block coalescing (short-circuiting): build a copied, concatenated, updated or kernel-returned array where it ends up; every safety condition checked or proved",
        run: crate::coalesce::coalesce_pass,
    },
    Pass {
        name: "hoist-allocs",
        summary: "move each allocation as early in its body as its size allows (so a destination block exists before its source: coalescing's C2)",
        run: crate::hoist::hoist_pass,
    },
    Pass {
        name: "reuse",
        summary: "memory block reuse: an allocation whose block is never alive with an earlier block's uses that block instead (size-aware colouring of the interference graph)",
        run: crate::reuse::reuse_pass,
    },
    Pass {
        name: "reuse-first-fit",
        summary: "memory block reuse by the thesis's linear scan: each allocation joins the first earlier block it may",
        run: crate::reuse::reuse_first_fit_pass,
    },
    Pass {
        name: "migrate",
        summary: "migration (Børgesen): move host scalar statements into single-iteration kernels so that the fewest synchronous device-to-host reads remain (a minimum vertex cut)",
        run: crate::migrate::migrate_pass,
    },
    Pass {
        name: "reuse-optimal",
        summary: "memory block reuse with the least total allocated size, found by an exact search (small programs)",
        run: crate::reuse::reuse_optimal_pass,
    },
];

/// The pass called `name`.
pub fn lookup(name: &str) -> Result<Pass, String> {
    PASSES
        .iter()
        .copied()
        .find(|p| p.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = PASSES.iter().map(|p| p.name).collect();
            format!(
                "unknown pass `{name}`; the passes are: {}",
                known.join(", ")
            )
        })
}

/// A comma-separated list of pass names (`none` or empty for no pass).
pub fn parse_list(list: &str) -> Result<Vec<Pass>, String> {
    let list = list.trim();
    if list.is_empty() || list == "none" {
        return Ok(Vec::new());
    }
    list.split(',').map(|n| lookup(n.trim())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_lists_parse_and_unknown_names_are_refused() {
        assert!(parse_list("none").unwrap().is_empty());
        assert!(parse_list("").unwrap().is_empty());
        let l = parse_list("simplify, simplify").unwrap();
        assert_eq!(l.len(), 2);
        let e = parse_list("simplify,expand").unwrap_err();
        assert!(
            e.contains("unknown pass `expand`") && e.contains("simplify"),
            "{e}"
        );
    }
}
