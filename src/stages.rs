//! Checking a pipeline's stages against the source: each FUNMEM stage must
//! be valid (Def. 3.1) and every stage must give the source's results, or
//! go wrong the same way (DESIGN.md §7).

use funmem_lang::parse::{AnyProgram, Layer};
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::observer::NoObserver;
use funmem_semantics::run::{layer_of, run, RunOptions, Semantics};
use funmem_semantics::validity::{first_difference, validate, Verdict};
use funmem_semantics::value::Value;
use funmem_transforms::pipeline::Stage;

/// A stage's verdict.
pub struct StageVerdict {
    /// The stage's name.
    pub stage: String,
    /// Its language.
    pub layer: Layer,
    /// The semantics run (`value`, `heap+value`, `heap`).
    pub semantics: &'static str,
    /// Whether it is valid and agrees with the source.
    pub ok: bool,
    /// The verdict in words.
    pub text: String,
    /// The error, when the stage went wrong.
    pub error: Option<EvalError>,
}

/// The kind of an error, for "goes wrong the same way".
fn kind_name(e: &EvalError) -> &'static str {
    match e.kind {
        ErrorKind::Stuck => "stuck",
        ErrorKind::Race(_) => "race",
        ErrorKind::OutOfFuel => "out of fuel",
        ErrorKind::OutOfHeap => "out of heap",
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

fn outcome(p: &AnyProgram, inputs: &[Value], limits: Limits) -> (&'static str, Outcome) {
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
            let r = run(p, sem, inputs, opts, &mut NoObserver).unwrap_or_else(|| {
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
    let mut out = Vec::new();
    let mut reference: Option<Result<Vec<Value>, EvalError>> = None;
    for (k, st) in stages.iter().enumerate() {
        let (semantics, o) = outcome(&st.program, inputs, limits);
        let (ok, text, error) = match (&reference, o) {
            (r, Outcome::Invalid(t, e, value)) => {
                if r.is_none() {
                    reference = Some(value);
                }
                (false, t, e)
            }
            (None, Outcome::Values(v)) => {
                let n = v.len();
                reference = Some(Ok(v));
                let what = if layer_of(&st.program) == Layer::FunMem {
                    "valid"
                } else {
                    "runs"
                };
                (
                    true,
                    format!("{what}: {n} result{}", if n == 1 { "" } else { "s" }),
                    None,
                )
            }
            (None, Outcome::Failed(e)) => {
                let t = format!("goes wrong ({}): {e}", kind_name(&e));
                reference = Some(Err(e.clone()));
                (true, t, Some(e))
            }
            (Some(Ok(want)), Outcome::Values(got)) => match first_difference(&got, want) {
                None => (true, "valid, agrees with the source".to_string(), None),
                Some(d) => (
                    false,
                    format!("disagrees: {}", d.describe("this stage", "the source")),
                    None,
                ),
            },
            (Some(Ok(_)), Outcome::Failed(e)) => (
                false,
                format!("goes wrong where the source does not: {e}"),
                Some(e),
            ),
            (Some(Err(want)), Outcome::Values(_)) => (
                false,
                format!("gives results where the source goes wrong ({want})"),
                None,
            ),
            (Some(Err(want)), Outcome::Failed(e)) => {
                if kind_name(&e) == kind_name(want) {
                    (
                        true,
                        format!("goes wrong like the source ({}): {e}", kind_name(&e)),
                        Some(e),
                    )
                } else {
                    (
                        false,
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
            ok,
            text,
            error,
        });
    }
    out
}
