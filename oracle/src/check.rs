//! Differential checks of a pipeline (docs/cli.md, Validity and agreement): every stage
//! type-checks and survives a print/parse round trip; each FUNMEM stage is
//! valid (Def. 3.1); every stage gives the source's results under every
//! semantics that applies, or goes wrong the same way (stuck, race).
//!
//! **Limits are not semantics.** Fuel and the heap limit bound a run; they
//! are not part of what a program means, and the layers do not count the
//! same way (FUN charges one unit for `iota q`, IMP one per element; a
//! hoisted allocation holds every iteration's part at once). A run that
//! exceeds a limit therefore decides nothing: the stage is
//! [`Agreement::LimitReached`], inconclusive, neither a failure nor an
//! agreement, and so is every stage compared with a source that exceeded
//! one. Validity (Def. 3.1) is judged on its own: a stage whose two
//! semantics give different results is invalid whatever the source did.

use crate::reference::{names_a_conflict, reference_heap_within, RefOutcome};
use funmem_lang::ast::{Body, ExpKind, Lang, Program};
use funmem_lang::parse::{AnyProgram, Layer};
use funmem_semantics::error::Race;
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::observer::{NoObserver, Observer};
use funmem_semantics::run::{layer_of, run, RunOptions, Semantics};
use funmem_semantics::validity::{first_difference, validate, Verdict};
use funmem_semantics::value::Value;
use funmem_transforms::pipeline::Stage;

/// How a stage compares with the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agreement {
    /// Valid (FUNMEM) and the same results as the source, or going wrong
    /// the same way.
    Agrees,
    /// A FUNMEM stage whose heap and value semantics differ, or whose heap
    /// semantics races or gets stuck where its value semantics does not.
    Invalid,
    /// Results other than the source's.
    Disagrees,
    /// Goes wrong where the source does not, gives results where it goes
    /// wrong, or goes wrong in another way.
    WrongError,
    /// Inconclusive: this stage or the source exceeded a resource limit
    /// (fuel or heap), so there is nothing to compare.
    LimitReached,
}

impl Agreement {
    /// Whether this is a failure of the stage (invalid, disagreeing, going
    /// wrong differently); an inconclusive stage is not one.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Agreement::Invalid | Agreement::Disagrees | Agreement::WrongError
        )
    }
}

/// A stage's verdict.
#[derive(Clone, Debug)]
pub struct StageVerdict {
    /// The stage's name.
    pub stage: String,
    /// Its language.
    pub layer: Layer,
    /// The semantics run (`value`, `heap+value`, `heap`).
    pub semantics: &'static str,
    /// Whether it is valid and agrees with the source (`false` for an
    /// inconclusive stage too: see [`Agreement::is_failure`]).
    pub ok: bool,
    /// How it compares with the source.
    pub agreement: Agreement,
    /// The verdict in words.
    pub text: String,
    /// The error, when the stage went wrong.
    pub error: Option<EvalError>,
}

/// The kind of an error, for "goes wrong the same way".
pub fn kind_name(e: &EvalError) -> &'static str {
    match e.kind {
        ErrorKind::Stuck => "stuck",
        ErrorKind::Race(_) => "race",
        ErrorKind::OutOfFuel => "out of fuel",
        ErrorKind::OutOfHeap => "out of heap",
    }
}

/// The option that raises the limit `e` exceeded.
fn limit_option(e: &EvalError) -> &'static str {
    match e.kind {
        ErrorKind::OutOfFuel => "--fuel",
        _ => "--max-heap",
    }
}

/// What running a stage gave.
enum Outcome {
    Values(Vec<Value>),
    /// Not valid: why, the heap semantics' error if any, and what the
    /// value semantics gives (the reference, when this is the source).
    Invalid(String, Option<EvalError>, Result<Vec<Value>, EvalError>),
    Failed(EvalError),
}

/// Runs a stage; a FUN or IMP stage reports its events to `obs`.
fn outcome<O: Observer>(
    p: &AnyProgram,
    inputs: &[Value],
    limits: Limits,
    obs: &mut O,
) -> (&'static str, Outcome) {
    let opts = RunOptions {
        limits,
        race_check: true,
    };
    match (p, layer_of(p)) {
        (AnyProgram::Fun(q), Layer::FunMem) => {
            let value = || {
                run(p, Semantics::Value, inputs, opts, &mut NoObserver)
                    .unwrap_or_else(|| Ok(Vec::new()))
            };
            let o = match validate(q, inputs, limits) {
                Verdict::Valid(v) => Outcome::Values(v),
                Verdict::Invalid(d) => Outcome::Invalid(format!("invalid: {d}"), None, value()),
                // A limit decides nothing, even where the value
                // semantics (which counts differently) stays within it.
                Verdict::HeapError(e) if e.is_limit() => Outcome::Failed(e),
                Verdict::HeapError(e) => match value() {
                    Ok(v) => Outcome::Invalid(
                        format!(
                            "invalid: the heap semantics goes wrong ({}) where the value semantics does not: {e}",
                            kind_name(&e)
                        ),
                        Some(e),
                        Ok(v),
                    ),
                    Err(_) => Outcome::Failed(e),
                },
                Verdict::ValueError(e) => Outcome::Failed(e),
            };
            ("heap+value", o)
        }
        (_, layer) => {
            let sem = Semantics::of(layer)[0];
            let r = run(p, sem, inputs, opts, obs).unwrap_or_else(|| {
                Err(EvalError::stuck(
                    "run",
                    funmem_lang::Span::DUMMY,
                    "no semantics",
                ))
            });
            (
                sem.name(),
                match r {
                    Ok(v) => Outcome::Values(v),
                    Err(e) => Outcome::Failed(e),
                },
            )
        }
    }
}

/// Runs every stage on the inputs and compares it with the first (the
/// source).
pub fn check_stages(stages: &[Stage], inputs: &[Value], limits: Limits) -> Vec<StageVerdict> {
    check_stages_and_source(stages, inputs, limits, &mut NoObserver).0
}

/// [`check_stages`], also giving what the source gave (its outcome;
/// `None` when there are no stages), so that other checks need not run it
/// again; a FUN source reports its events to `source_obs`.
pub fn check_stages_and_source<O: Observer>(
    stages: &[Stage],
    inputs: &[Value],
    limits: Limits,
    source_obs: &mut O,
) -> (Vec<StageVerdict>, Option<Result<Vec<Value>, EvalError>>) {
    let mut out = Vec::new();
    let mut reference: Option<Result<Vec<Value>, EvalError>> = None;
    for (k, st) in stages.iter().enumerate() {
        let (semantics, o) = if k == 0 {
            outcome(&st.program, inputs, limits, source_obs)
        } else {
            outcome(&st.program, inputs, limits, &mut NoObserver)
        };
        use Agreement::*;
        let (agreement, text, error) = match (&reference, o) {
            (r, Outcome::Invalid(t, e, value)) => {
                if r.is_none() {
                    reference = Some(value);
                }
                (Invalid, t, e)
            }
            (r, Outcome::Failed(e)) if e.is_limit() => {
                let t = format!(
                    "inconclusive: {} ({e}); raise {}",
                    kind_name(&e),
                    limit_option(&e)
                );
                if r.is_none() {
                    reference = Some(Err(e.clone()));
                }
                (LimitReached, t, Some(e))
            }
            (Some(Err(want)), o) if want.is_limit() => (
                LimitReached,
                format!(
                    "inconclusive: the source ran {}; raise {}",
                    kind_name(want),
                    limit_option(want)
                ),
                match o {
                    Outcome::Failed(e) => Some(e),
                    _ => None,
                },
            ),
            (None, Outcome::Values(v)) => {
                let n = v.len();
                reference = Some(Ok(v));
                let what = if layer_of(&st.program) == Layer::FunMem {
                    "valid"
                } else {
                    "runs"
                };
                (
                    Agrees,
                    format!("{what}: {n} result{}", if n == 1 { "" } else { "s" }),
                    None,
                )
            }
            (None, Outcome::Failed(e)) => {
                let t = format!("goes wrong ({}): {e}", kind_name(&e));
                reference = Some(Err(e.clone()));
                (Agrees, t, Some(e))
            }
            (Some(Ok(want)), Outcome::Values(got)) => match first_difference(&got, want) {
                None => (Agrees, "valid, agrees with the source".to_string(), None),
                Some(d) => (
                    Disagrees,
                    format!("disagrees: {}", d.describe("this stage", "the source")),
                    None,
                ),
            },
            (Some(Ok(_)), Outcome::Failed(e)) => (
                WrongError,
                format!("goes wrong where the source does not: {e}"),
                Some(e),
            ),
            (Some(Err(want)), Outcome::Values(_)) => (
                WrongError,
                format!("gives results where the source goes wrong ({want})"),
                None,
            ),
            (Some(Err(want)), Outcome::Failed(e)) => {
                if kind_name(&e) == kind_name(want) {
                    (
                        Agrees,
                        format!("goes wrong like the source ({}): {e}", kind_name(&e)),
                        Some(e),
                    )
                } else {
                    (
                        WrongError,
                        format!("goes wrong differently: {e}; the source: {want}"),
                        Some(e),
                    )
                }
            }
        };
        let text = if k > 0 && layer_of(&st.program) != Layer::FunMem {
            text.replacen("valid, agrees", "agrees", 1)
        } else {
            text
        };
        out.push(StageVerdict {
            stage: st.name.clone(),
            layer: layer_of(&st.program),
            semantics,
            ok: agreement == Agrees,
            agreement,
            text,
            error,
        });
    }
    (out, reference)
}

/// What kind of failure a check found; with the stage, it is what a
/// reduced case must keep failing with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The source program itself does not type-check (a generator bug).
    SourceIllTyped,
    /// A step refused its input.
    PassRefused,
    /// A step produced a program that does not type-check.
    IllTyped,
    /// Printing a stage and parsing it back gives another program.
    RoundTrip,
    /// A FUNMEM stage is not valid.
    Invalid,
    /// A stage's results differ from the source's.
    Disagrees,
    /// A stage goes wrong differently from the source.
    WrongError,
    /// Something panicked.
    Panic,
    /// A proved obligation fails on a small valuation (a prover bug).
    UnsoundProof,
    /// The source's results differ from an independent reference
    /// evaluator's (FUN: `fun_ref`; FUNMEM: the brute-force heap semantics
    /// of `reference`): a fault the whole pipeline shares.
    Reference,
    /// The race detector's report differs from the brute-force reference's
    /// (eq. 4): another kernel, location or pair of iterations, or a race
    /// missed or invented.
    RaceReport,
    /// An index or slice lowered to IMP is neither shown in bounds by a
    /// fact nor guarded by an `assert` ([`crate::guards`]).
    Unguarded,
}

impl FailureKind {
    /// The kind's name, as summaries print it.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::SourceIllTyped => "source-ill-typed",
            FailureKind::PassRefused => "pass-refused",
            FailureKind::IllTyped => "ill-typed",
            FailureKind::RoundTrip => "round-trip",
            FailureKind::Invalid => "invalid",
            FailureKind::Disagrees => "disagrees",
            FailureKind::WrongError => "wrong-error",
            FailureKind::Panic => "panic",
            FailureKind::UnsoundProof => "unsound-proof",
            FailureKind::Reference => "reference",
            FailureKind::RaceReport => "race-report",
            FailureKind::Unguarded => "unguarded",
        }
    }
}

/// A failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The stage that failed (`source`, `lower to FUNMEM`, a pass, ...).
    pub stage: String,
    /// What went wrong.
    pub kind: FailureKind,
    /// The details.
    pub message: String,
}

impl Failure {
    /// The same failure, for the reducer: same stage, same kind.
    pub fn same_as(&self, other: &Failure) -> bool {
        self.stage == other.stage && self.kind == other.kind
    }

    /// What a campaign groups failures by, to reduce one of each group:
    /// the stage, the kind, and the message's first line with every run of
    /// digits read as one `#` (so `index 3 of x12` and `index 5 of x7` are
    /// one failure, as they most likely have one cause).
    pub fn signature(&self) -> String {
        let line = self.message.lines().next().unwrap_or("");
        format!(
            "{}|{}|{}",
            self.stage,
            self.kind.name(),
            numbers_as_hash(line)
        )
    }
}

/// `text` with every run of digits replaced by one `#`: what failures that
/// differ only in values, positions and name suffixes have in common.
pub fn numbers_as_hash(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut digits = false;
    for ch in text.chars() {
        if ch.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
        } else {
            out.push(ch);
            digits = false;
        }
    }
    out
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at stage `{}`: {}",
            self.kind.name(),
            self.stage,
            self.message
        )
    }
}

/// How a case that passed every check ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passed {
    /// Every stage gave the source's results.
    Results,
    /// Every stage went wrong like the source (the error kind's name).
    WentWrong(&'static str),
    /// Nothing failed, but a stage (or the source) exceeded a resource
    /// limit (the limit's name: `out of fuel`, `out of heap`).
    Inconclusive(&'static str),
}

/// Which checks [`check_case_with`] makes beyond the stages' own (type
/// checks, round trips, validity, agreement with the source, proofs held
/// against small valuations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks {
    /// A FUN source's results against the independent FUN evaluator, and
    /// a FUNMEM source's against the brute-force reference heap semantics.
    pub reference: bool,
    /// A FUNMEM source's race report (kernel, location, iterations)
    /// against the brute-force reference's (eq. 4).
    pub races: bool,
    /// Every index and slice lowered to IMP shown in bounds by a fact or
    /// guarded by an `assert` in the IMP stage ([`crate::guards`]).
    pub guards: bool,
}

impl Checks {
    /// Every check: the default of `funmem fuzz`.
    pub const ALL: Checks = Checks {
        reference: true,
        races: true,
        guards: true,
    };
    /// The stages' own checks only.
    pub const STAGES: Checks = Checks {
        reference: false,
        races: false,
        guards: false,
    };
}

impl Default for Checks {
    fn default() -> Checks {
        Checks::ALL
    }
}

/// What the passes did on the cases checked: counts by name (kernel
/// allocations seen and expanded, obligations by kind and verdict, ...),
/// added up over a campaign.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Tally(pub std::collections::BTreeMap<String, u64>);

impl Tally {
    /// Adds `n` to the count `key`.
    pub fn add(&mut self, key: &str, n: u64) {
        let c = self.0.entry(key.to_string()).or_default();
        *c = c.saturating_add(n);
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Tally) {
        for (k, n) in &other.0 {
            self.add(k, *n);
        }
    }

    /// The count `key` (0 when absent).
    pub fn get(&self, key: &str) -> u64 {
        self.0.get(key).copied().unwrap_or(0)
    }

    /// What the steps of a pipeline did: each pass's counts as
    /// `<pass>: <count>`, and its obligations by kind and verdict as
    /// `obligations: <kind> <outcome>` (`obligations: in-bounds proved`).
    pub fn of_stages(stages: &[Stage]) -> Tally {
        let mut t = Tally::default();
        for st in stages {
            for (name, n) in &st.counts.0 {
                t.add(&format!("{}: {name}", st.name), *n);
            }
            for (o, v) in &st.obligations {
                t.add(
                    &format!("obligations: {} {}", o.claim.kind(), v.outcome.word()),
                    1,
                );
            }
        }
        t
    }
}

/// A case that passed its checks: how it ran, and what the passes did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// How it ran.
    pub passed: Passed,
    /// What the passes did on it.
    pub tally: Tally,
}

fn round_trip(p: &AnyProgram) -> Result<(), String> {
    let text = p.print();
    let back = match p {
        AnyProgram::Fun(q) => funmem_lang::parse::parse_program(&text, q.lang).map(AnyProgram::Fun),
        AnyProgram::Imp(_) => funmem_lang::parse::parse_imp(&text).map(AnyProgram::Imp),
    };
    match back {
        Ok(b) if b == *p => Ok(()),
        Ok(_) => Err(format!("printed and parsed back, it differs:\n{text}")),
        Err(d) => Err(format!(
            "its printed form does not parse: {}\n{text}",
            d.message
        )),
    }
}

/// Every check of `validate` (docs/cli.md) on one case, through lowering, the passes
/// and lowering to IMP, and every check of [`Checks::ALL`]. Panics are
/// caught and reported as failures.
pub fn check_case(
    case: &crate::Case,
    passes: &[funmem_transforms::Pass],
    limits: Limits,
) -> Result<Passed, Failure> {
    check_case_with(case, passes, limits, Checks::ALL).map(|c| c.passed)
}

/// [`check_case`] with a choice of checks, also saying what the passes did.
pub fn check_case_with(
    case: &crate::Case,
    passes: &[funmem_transforms::Pass],
    limits: Limits,
    checks: Checks,
) -> Result<Checked, Failure> {
    let run = std::panic::AssertUnwindSafe(|| check_case_inner(case, passes, limits, checks));
    std::panic::catch_unwind(run).unwrap_or_else(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into());
        Err(Failure {
            stage: "?".into(),
            kind: FailureKind::Panic,
            message: msg,
        })
    })
}

fn check_case_inner(
    case: &crate::Case,
    passes: &[funmem_transforms::Pass],
    limits: Limits,
    checks: Checks,
) -> Result<Checked, Failure> {
    let src = AnyProgram::Fun(case.program.clone());
    let fail = |stage: &str, kind, message: String| Failure {
        stage: stage.into(),
        kind,
        message,
    };
    if let Err(d) = funmem_lang::check::check_any(&src) {
        return Err(fail("source", FailureKind::SourceIllTyped, d.message));
    }
    round_trip(&src).map_err(|m| fail("source", FailureKind::RoundTrip, m))?;
    let mut tally = Tally::default();
    if case.program.lang == Lang::FunMem && (checks.races || checks.reference) {
        let decided = funmem_source(case, limits, checks, &mut tally)
            .map_err(|(kind, m)| fail("source", kind, m))?;
        if let Some(passed) = decided {
            // A racing source has no meaning for the passes to preserve.
            return Ok(Checked { passed, tally });
        }
    }
    // A shorter Z3 limit than interactive use: fuzzing decides thousands.
    let provers = crate::prove::Provers {
        timeout_ms: 250,
        ..crate::prove::Provers::default()
    };
    let stages =
        funmem_transforms::pipeline::stages(&src, passes, true, &provers).map_err(|e| {
            let kind = if e.output.is_some() {
                FailureKind::IllTyped
            } else {
                FailureKind::PassRefused
            };
            fail(&e.stage, kind, e.to_string())
        })?;
    for st in &stages {
        round_trip(&st.program).map_err(|m| fail(&st.name, FailureKind::RoundTrip, m))?;
        // Every proof a pass relied on is held against small valuations.
        for (o, v) in &st.obligations {
            if v.outcome == funmem_lang::obligation::Outcome::Proved {
                if let Some(c) = crate::prove::brute::search(o, 2, 200).counterexample {
                    return Err(fail(
                        &st.name,
                        FailureKind::UnsoundProof,
                        format!("{} proved `{}`, but it fails at {c}", v.prover, o.claim),
                    ));
                }
            }
        }
    }
    tally.merge(&Tally::of_stages(&stages));
    if checks.guards {
        guards(&stages).map_err(|m| fail("lower to IMP", FailureKind::Unguarded, m))?;
    }
    let fun_source = checks.reference && case.program.lang == funmem_lang::ast::Lang::Fun;
    // The source's bindings, for the reference to hold its own against.
    let mut trace = crate::fun_ref::Trace::default();
    let (verdicts, source) = if fun_source {
        check_stages_and_source(&stages, &case.inputs, limits, &mut trace)
    } else {
        check_stages_and_source(&stages, &case.inputs, limits, &mut NoObserver)
    };
    if let Some(v) = verdicts.iter().find(|v| v.agreement.is_failure()) {
        let kind = match v.agreement {
            Agreement::Invalid => FailureKind::Invalid,
            Agreement::Disagrees => FailureKind::Disagrees,
            _ => FailureKind::WrongError,
        };
        return Err(fail(&v.stage, kind, v.text.clone()));
    }
    if fun_source {
        // A source over a limit decides nothing: the reference is not run.
        if let Some(source) = source
            .as_ref()
            .filter(|s| !matches!(s, Err(e) if e.is_limit()))
        {
            use crate::fun_ref::{check, Judgement, RefLimits};
            let limits = RefLimits::from_limits(limits);
            match check(&case.program, &case.inputs, limits, source, Some(&trace)) {
                Judgement::Agrees => tally.add("reference-agrees", 1),
                Judgement::Inconclusive => tally.add("reference-inconclusive", 1),
                Judgement::Differs(m) => {
                    return Err(fail("source", FailureKind::Reference, m));
                }
            }
        }
    }
    if let Some(v) = verdicts
        .iter()
        .find(|v| v.agreement == Agreement::LimitReached)
    {
        // The stage's own limit, or the source's.
        let e = v.error.as_ref().filter(|e| e.is_limit());
        let e = e.or_else(|| verdicts.first().and_then(|s| s.error.as_ref()));
        return Ok(Checked {
            passed: Passed::Inconclusive(e.map_or("limit", kind_name)),
            tally,
        });
    }
    let passed = match verdicts.first().and_then(|v| v.error.as_ref()) {
        Some(e) => Passed::WentWrong(kind_name(e)),
        None => Passed::Results,
    };
    Ok(Checked { passed, tally })
}

/// The guard check ([`crate::guards`]) of the IMP stage against the
/// FUNMEM stage it was lowered from (nothing to check without them).
fn guards(stages: &[Stage]) -> Result<(), String> {
    match stages {
        [.., Stage {
            program: AnyProgram::Fun(mem),
            ..
        }, Stage {
            program: AnyProgram::Imp(imp),
            ..
        }] => crate::guards::check(mem, imp),
        _ => Ok(()),
    }
}

/// A FUNMEM source against the brute-force reference heap semantics
/// ([`crate::reference`]). With `checks.races`: where either finds a race,
/// the real heap semantics (with its race detector) must report one, and
/// one of the conflicting pairs of accesses the reference found (the same
/// kernel, block and offset, the same two iterations of the racing kernel
/// with the same kinds of access); where the program has one such pair,
/// that pair. Then the case is decided: it went wrong with a race (the
/// passes are not run: a racing program has no meaning to preserve). With
/// `checks.reference`, on a race-free source: the same results, or stuck
/// alike. A run over a resource limit (in either) decides nothing.
/// `Ok(None)`: go on with the stages.
fn funmem_source(
    case: &crate::Case,
    limits: Limits,
    checks: Checks,
    tally: &mut Tally,
) -> Result<Option<Passed>, (FailureKind, String)> {
    let p = &case.program;
    let reference = reference_heap_within(p, &case.inputs, limits.fuel, limits.max_heap);
    let heap = funmem_semantics::heap::run_heap(p, &case.inputs, limits, true, &mut NoObserver);
    let report = match &heap {
        Err(EvalError {
            kind: ErrorKind::Race(r),
            ..
        }) => Some(r.as_ref()),
        _ => None,
    };
    let limit = matches!(reference, RefOutcome::OutOfFuel | RefOutcome::OutOfHeap)
        || heap.as_ref().is_err_and(EvalError::is_limit);
    let heap_text = || match &heap {
        Ok(_) => "gives results".to_string(),
        Err(e) => format!("goes wrong ({}): {e}", kind_name(e)),
    };
    match (&reference, report) {
        (RefOutcome::Race { conflicts }, Some(race)) if checks.races => {
            tally.add("races compared with the reference", 1);
            if names_a_conflict(race, conflicts) {
                return Ok(Some(Passed::WentWrong("race")));
            }
            let shown: Vec<String> = conflicts.iter().take(4).map(|c| brief(p, c)).collect();
            Err((
                FailureKind::RaceReport,
                format!(
                    "the race detector reports {}, which is not among the {} conflicting pair(s) the reference finds (eq. 4): {}",
                    brief(p, race),
                    conflicts.len(),
                    shown.join("; ")
                ),
            ))
        }
        (RefOutcome::Race { conflicts }, None) if checks.races && !limit => Err((
            FailureKind::RaceReport,
            format!(
                "the reference finds a race ({}{}), but the race detector none: the heap semantics {}",
                conflicts.first().map_or(String::new(), |c| brief(p, c)),
                if conflicts.len() > 1 {
                    format!(" and {} more conflicting pair(s)", conflicts.len() - 1)
                } else {
                    String::new()
                },
                heap_text()
            ),
        )),
        (_, Some(race)) if checks.races && !limit => Err((
            FailureKind::RaceReport,
            format!(
                "the race detector reports {} where the reference finds no race ({})",
                brief(p, race),
                match &reference {
                    RefOutcome::Results(_) => "it gives results".to_string(),
                    RefOutcome::Stuck(why) => format!("it gets stuck: {why}"),
                    _ => "it runs out of fuel".to_string(),
                }
            ),
        )),
        (RefOutcome::Race { .. }, _) | (_, Some(_)) => Ok(None),
        _ if !checks.reference || limit => Ok(None),
        (RefOutcome::Results(want), None) => {
            tally.add("sources compared with the reference", 1);
            match &heap {
                Ok(got) => match first_difference(got, want) {
                    None => Ok(None),
                    Some(d) => Err((
                        FailureKind::Reference,
                        format!(
                            "the heap semantics and the brute-force reference disagree: {}",
                            d.describe("the heap semantics", "the reference")
                        ),
                    )),
                },
                Err(_) => Err((
                    FailureKind::Reference,
                    format!(
                        "the heap semantics {} where the brute-force reference gives results",
                        heap_text()
                    ),
                )),
            }
        }
        (RefOutcome::Stuck(why), None) => {
            tally.add("sources compared with the reference", 1);
            match &heap {
                Err(_) => Ok(None),
                Ok(_) => Err((
                    FailureKind::Reference,
                    format!(
                        "the heap semantics gives results where the brute-force reference gets stuck: {why}"
                    ),
                )),
            }
        }
        (RefOutcome::OutOfFuel | RefOutcome::OutOfHeap, None) => Ok(None),
    }
}

/// A race in a few words: the kernel (by the name it binds) or the scan,
/// the location (block and byte), the two iterations at its level and
/// their kinds of access.
fn brief(p: &Program, r: &Race) -> String {
    let kernel = match kernel_name(&p.body, (r.kernel.start, r.kernel.end)) {
        Some((x, true)) => format!("the scan of `{x}`"),
        Some((x, false)) => format!("the kernel of `{x}`"),
        None => "a kernel".to_string(),
    };
    let access = |a: &funmem_semantics::error::Access| {
        format!(
            "{} by iteration {}",
            if a.write { "written" } else { "read" },
            a.path.first().map_or("?".to_string(), i64::to_string)
        )
    };
    format!(
        "{kernel}: block {} at byte {} {} and {}",
        r.block,
        r.offset,
        access(&r.first),
        access(&r.second)
    )
}

/// The name bound by the kernel (or scan, `true`) statement at these
/// source positions, in any nested body.
fn kernel_name(b: &Body, at: (usize, usize)) -> Option<(String, bool)> {
    b.stms.iter().find_map(|s| {
        let scan = matches!(s.exp.kind, ExpKind::Scan(..));
        if (matches!(s.exp.kind, ExpKind::Kernel(..)) || scan) && (s.span.start, s.span.end) == at {
            return s.pats.first().map(|q| (q.name.name.to_string(), scan));
        }
        match &s.exp.kind {
            ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => kernel_name(kb, at),
            ExpKind::If(_, t, e) => kernel_name(t, at).or_else(|| kernel_name(e, at)),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;

    /// The stages of a FUN program through `passes` and IMP.
    fn stages_of(text: &str, passes: &str) -> Vec<Stage> {
        let p = funmem_lang::parse::parse_program(text, Lang::Fun).expect("parses");
        let passes = funmem_transforms::pass::parse_list(passes).expect("passes");
        funmem_transforms::pipeline::stages(
            &AnyProgram::Fun(p),
            &passes,
            true,
            &funmem_transforms::obligation::NoProver,
        )
        .expect("lowers")
    }

    const IOTA: &str =
        "def main (q: int) =\n  let (xs: [q]int) = iota q\n  let (y: int) = xs[0]\n  in (y)\n";

    #[test]
    fn a_stage_over_fuel_where_the_source_is_not_is_inconclusive() {
        // FUN charges one unit for `iota q`, IMP one per element.
        let st = stages_of(IOTA, "none");
        let limits = Limits {
            fuel: 50,
            ..Limits::default()
        };
        let v = check_stages(
            &st,
            &[Value::Scalar(funmem_lang::prim::Const::I64(100))],
            limits,
        );
        assert_eq!(v[0].agreement, Agreement::Agrees, "{}", v[0].text);
        let imp = v.last().expect("an IMP stage");
        assert_eq!(imp.agreement, Agreement::LimitReached, "{}", imp.text);
        assert!(!imp.agreement.is_failure() && !imp.ok);
        assert!(
            imp.text.starts_with("inconclusive: out of fuel") && imp.text.ends_with("raise --fuel"),
            "{}",
            imp.text
        );
        assert!(v.iter().all(|s| !s.agreement.is_failure()));
    }

    #[test]
    fn every_stage_is_inconclusive_when_the_source_is_over_a_limit() {
        let st = stages_of(IOTA, "simplify");
        let limits = Limits {
            max_heap: 10,
            ..Limits::default()
        };
        let v = check_stages(
            &st,
            &[Value::Scalar(funmem_lang::prim::Const::I64(100))],
            limits,
        );
        for s in &v {
            assert_eq!(
                s.agreement,
                Agreement::LimitReached,
                "{}: {}",
                s.stage,
                s.text
            );
        }
        assert!(v[0].text.contains("raise --max-heap"), "{}", v[0].text);
        // Each later stage runs out of heap itself, or is compared with a
        // source that did: inconclusive either way.
        assert!(v.iter().all(|s| s.text.starts_with("inconclusive: ")));
    }

    #[test]
    fn check_case_counts_a_limit_as_inconclusive_not_as_a_failure() {
        let p = funmem_lang::parse::parse_program(IOTA, Lang::Fun).expect("parses");
        let case = crate::Case {
            program: p,
            inputs: vec![Value::Scalar(funmem_lang::prim::Const::I64(100))],
        };
        let limits = Limits {
            fuel: 50,
            ..Limits::default()
        };
        assert_eq!(
            check_case(&case, &[], limits),
            Ok(Passed::Inconclusive("out of fuel"))
        );
        assert_eq!(
            check_case(&case, &[], Limits::default()),
            Ok(Passed::Results)
        );
    }
}
