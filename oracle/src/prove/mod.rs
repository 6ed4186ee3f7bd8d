//! The provers of proof obligations (docs/obligations.md).
//!
//! [`Provers`] tries, in order:
//!
//! 0. a quick search for a counterexample among a few hundred small
//!    valuations (see 2.);
//! 1. the LMAD procedure ([`lmad`]): symbolic, microseconds, proves the
//!    common shapes or gives up;
//! 2. a small search ([`brute`]): every valuation with small values, which
//!    refutes most false obligations with a minimal counterexample;
//! 3. Z3 ([`z3`]) on the SMT-LIB2 query with lemmas ([`smt`]), under a
//!    time limit: proves, or gives a model, which is confirmed by
//!    evaluating the LMADs on it before it counts as a counterexample.
//!
//! The verdict names the prover that decided and the total time.

pub mod brute;
pub mod lmad;
pub mod poly;
pub mod random;
pub mod smt;
pub mod view;
pub mod z3;

use funmem_lang::obligation::{Obligation, Outcome, Prover, Verdict};
use std::time::Instant;

/// Whether `p` names an obligation file.
pub fn is_obligation_file(p: &std::path::Path) -> bool {
    p.extension().is_some_and(|x| x == "obl")
}

/// Every obligation file (`.obl`) among `paths` and under the folders among
/// them, sorted, each real file once (see [`funmem_lang::files`]); a path
/// that does not exist is left in, for the reader to report.
pub fn obligation_files(paths: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        match funmem_lang::files::walk(std::slice::from_ref(p), is_obligation_file) {
            Ok(w) => out.extend(w.files),
            Err(_) => out.push(p.clone()),
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Which provers to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Which {
    /// The LMAD procedure, then the search, then Z3.
    All,
    /// Only the LMAD procedure (proves or gives up).
    Lmad,
    /// Only the search (refutes or gives up).
    Search,
    /// Only Z3, with lemmas.
    Z3,
    /// Only Z3, on the bare query without lemmas.
    Z3Bare,
}

impl std::str::FromStr for Which {
    type Err = String;
    fn from_str(s: &str) -> Result<Which, String> {
        Ok(match s {
            "all" => Which::All,
            "lmad" => Which::Lmad,
            "search" => Which::Search,
            "z3" => Which::Z3,
            "z3-bare" => Which::Z3Bare,
            _ => {
                return Err(format!(
                    "unknown prover `{s}`; the provers are all, lmad, search, z3, z3-bare"
                ))
            }
        })
    }
}

/// Largest value of the quick search that runs first.
const QUICK_RADIUS: i64 = 3;
/// Most valuations of the quick search.
const QUICK_BUDGET: u64 = 2_000;

/// The provers, configured.
#[derive(Clone, Copy, Debug)]
pub struct Provers {
    /// Which to run.
    pub which: Which,
    /// Z3's time limit per obligation, in milliseconds.
    pub timeout_ms: u32,
    /// Largest value the search gives a variable.
    pub search_radius: i64,
    /// Most valuations the search tries.
    pub search_budget: u64,
    /// Reuse the verdict of an obligation already decided in this thread
    /// (equal up to the names of its variables). Off for timing.
    pub memo: bool,
}

impl Default for Provers {
    fn default() -> Provers {
        Provers {
            which: Which::All,
            timeout_ms: 1000,
            search_radius: 6,
            search_budget: 20_000,
            memo: true,
        }
    }
}

/// Most verdicts the per-thread memo keeps before it starts afresh.
const MEMO_LIMIT: usize = 20_000;

/// Canonical obligation, provers, time limit ↦ outcome and prover.
type Memo = std::collections::HashMap<(String, Which, u32), (Outcome, &'static str)>;

thread_local! {
    /// Verdicts of obligations already decided in this thread, keyed by
    /// the obligation with its variables renamed in order of appearance
    /// (passes state the same facts about many kernels).
    static MEMO: std::cell::RefCell<Memo> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// The obligation with its variables renamed `v0, v1, ...` in order of
/// first appearance, and the renaming.
fn canonical(o: &Obligation) -> (String, Vec<String>) {
    use funmem_lang::ast::{Atom, SExp};
    let mut order: Vec<String> = Vec::new();
    let mut note = |e: &SExp| {
        e.for_each_var(&mut |x| {
            let n = x.name.as_str();
            if !order.iter().any(|y| y == n) {
                order.push(n.to_string());
            }
        })
    };
    o.claim.for_each_sexp(&mut note);
    for f in &o.facts {
        note(&f.exp);
    }
    let rename = funmem_lang::subst::Subst(
        order
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let v = funmem_lang::ast::Ident::synthetic(&format!("v{k}"));
                (funmem_lang::Name::new(n), Atom::Var(v))
            })
            .collect(),
    );
    let r = |e: &SExp| rename.sexp(e);
    let rl = |l: &funmem_lang::lmad::Lmad<SExp>| l.map(|e| rename.sexp(e));
    use funmem_lang::obligation::Claim;
    let claim = match &o.claim {
        Claim::Disjoint(a, b) => Claim::Disjoint(rl(a), rl(b)),
        Claim::Injective(a) => Claim::Injective(rl(a)),
        Claim::InBounds(a, n) => Claim::InBounds(rl(a), r(n)),
        Claim::AtMost(a, b) => Claim::AtMost(r(a), r(b)),
    };
    let facts: Vec<String> = o
        .facts
        .iter()
        .map(|f| funmem_lang::print::sexp_string(&r(&f.exp)))
        .collect();
    (format!("{claim} given {}", facts.join(", ")), order)
}

impl Prover for Provers {
    fn prove(&self, o: &Obligation) -> Verdict {
        if !self.memo {
            return self.decide(o);
        }
        let start = Instant::now();
        let (key, order) = canonical(o);
        let key = (key, self.which, self.timeout_ms);
        if let Some((outcome, prover)) = MEMO.with(|m| m.borrow().get(&key).cloned()) {
            // Counterexamples are stored with the canonical names.
            let outcome = match outcome {
                Outcome::Refuted(mut c) => {
                    c.values = c
                        .values
                        .into_iter()
                        .filter_map(|(k, v)| {
                            let i: usize = k.strip_prefix('v')?.parse().ok()?;
                            Some((order.get(i)?.clone(), v))
                        })
                        .collect();
                    Outcome::Refuted(c)
                }
                other => other,
            };
            return Verdict {
                outcome,
                prover,
                time: start.elapsed(),
            };
        }
        let v = self.decide(o);
        let stored = match &v.outcome {
            Outcome::Refuted(c) => {
                let mut c = c.clone();
                c.values = c
                    .values
                    .into_iter()
                    .filter_map(|(k, val)| {
                        let i = order.iter().position(|n| *n == k)?;
                        Some((format!("v{i}"), val))
                    })
                    .collect();
                Outcome::Refuted(c)
            }
            other => other.clone(),
        };
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() >= MEMO_LIMIT {
                m.clear();
            }
            m.insert(key, (stored, v.prover));
        });
        v
    }
}

impl Provers {
    /// Runs the provers in order (no memo) on the obligation's integer
    /// view ([`view`]); a refutation that gives opaque subterms values is
    /// no counterexample of the original, so it becomes unknown.
    fn decide(&self, o: &Obligation) -> Verdict {
        let v = view::integer_view(o);
        let mut verdict = self.decide_integers(&v.obligation);
        if let (Outcome::Refuted(c), false) = (&verdict.outcome, v.opaque.is_empty()) {
            let texts: Vec<&str> = v.opaque.iter().map(|(_, t)| t.as_str()).collect();
            verdict.outcome = Outcome::Unknown(format!(
                "a counterexample of the integer view ({c}) gives values to {}, which the provers do not model: they may not be reachable",
                texts.join(", ")
            ));
            verdict.prover = "none";
        }
        verdict
    }

    /// Runs the provers in order on an obligation without conversions or
    /// floats.
    fn decide_integers(&self, o: &Obligation) -> Verdict {
        let start = Instant::now();
        let done = |outcome, prover| Verdict {
            outcome,
            prover,
            time: start.elapsed(),
        };
        let mut why = Vec::new();
        if self.which == Which::All {
            // A quick look for a small counterexample first: it settles most
            // false obligations before the LMAD procedure spends its budget.
            let s = brute::search(o, QUICK_RADIUS, QUICK_BUDGET);
            if let Some(c) = s.counterexample {
                return done(Outcome::Refuted(c), "search");
            }
        }
        if matches!(self.which, Which::All | Which::Lmad) {
            match lmad::prove(o) {
                Ok(()) => return done(Outcome::Proved, "lmad"),
                Err(e) => why.push(e),
            }
        }
        if matches!(self.which, Which::All | Which::Search) {
            let s = brute::search(o, self.search_radius, self.search_budget);
            match s.counterexample {
                Some(c) => return done(Outcome::Refuted(c), "search"),
                None => why.push(format!(
                    "no counterexample among {} valuations with values up to {}{}",
                    s.tried,
                    s.radius.max(0),
                    if s.worked_out {
                        " (the search's budget of domain indices spent)"
                    } else {
                        ""
                    }
                )),
            }
        }
        if matches!(self.which, Which::All | Which::Z3 | Which::Z3Bare) {
            let q = smt::query(o, self.which != Which::Z3Bare);
            match z3::solve(&q, self.timeout_ms) {
                z3::Answer::Unsat => return done(Outcome::Proved, "z3"),
                z3::Answer::Sat(vals) => match brute::confirm(o, &vals) {
                    Some(c) => return done(Outcome::Refuted(c), "z3"),
                    None => why.push(
                        "Z3's model is not a counterexample when evaluated (too large, or undefined)"
                            .to_string(),
                    ),
                },
                z3::Answer::Unknown(e) => why.push(e),
            }
        }
        done(Outcome::Unknown(why.join("; ")), "none")
    }
}
