//! The OpenCL backend as an oracle's semantics: does a run on a device agree
//! with the IMP interpreter on the same program and inputs?
//!
//! Results must be equal bit for bit, except where they may legitimately
//! differ: a program that uses `exp` or `log` (OpenCL's may differ from the
//! host's in the last bits) or a host-level `reduce` or `scan` of floats, a
//! device reduce's included (the device reassociates them), agrees when
//! its results are equal within the float tolerance (`Value::close_to`:
//! relative 2e-3 for `f32`, 1e-9 for `f64`), and says so.

use crate::codegen::Compiled;
use crate::device::{DeviceInfo, GpuError};
use crate::driver::Runtime;
use funmem_lang::imp::Program;
use funmem_semantics::error::{ErrorKind, EvalError, Limits, DEFAULT_FUEL, DEVICE_FUEL};
use funmem_semantics::imp::run_imp;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::value::Value;

/// How a device run compares with the interpreter's.
#[derive(Clone, Debug, PartialEq)]
pub enum Agreement {
    /// The same results.
    Results,
    /// The same results within the float tolerance (a program whose
    /// floats may legitimately differ: [`tolerant`]).
    Close,
    /// Both went wrong (not necessarily at the same place: work-items run
    /// in any order, the interpreter in index order).
    BothWrong,
    /// The interpreter found a race; OpenCL does not look for races, so any
    /// outcome will do.
    Race,
    /// The interpreter or the device exceeded a resource limit (fuel,
    /// heap, device memory): inconclusive, nothing to compare (limits are
    /// not semantics, and the two count differently).
    Limit,
    /// The program cannot run on OpenCL (an allocation inside a kernel).
    Refused(String),
    /// They differ: a bug of the backend (or of the interpreter).
    Disagree(String),
}

impl Agreement {
    /// Whether this is a disagreement.
    pub fn is_failure(&self) -> bool {
        matches!(self, Agreement::Disagree(_))
    }
}

fn show(v: &[Value]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a translated program's float results may legitimately differ
/// from the interpreter's: it uses `exp` or `log` (every one appears in the
/// generated source as a call `exp(`, `log(`; our own names start with
/// `fm_` or `v_`), or it has a host-level `reduce` or `scan` of floats
/// (a device reduce is one: [`Compiled::reds`] holds it).
pub fn tolerant(c: &Compiled) -> bool {
    let src = c.kernels_source();
    src.contains(" exp(")
        || src.contains("(exp(")
        || src.contains(" log(")
        || src.contains("(log(")
        || c.reds.iter().any(|r| r.elem.is_float())
}

/// Compares the interpreter's outcome with the device's, within the float
/// tolerance where `tolerant`.
pub fn compare(
    want: Result<Vec<Value>, EvalError>,
    got: Result<Vec<Value>, GpuError>,
    tolerant: bool,
) -> Agreement {
    match (want, got) {
        (Ok(a), Ok(b)) if a == b => Agreement::Results,
        (Ok(a), Ok(b))
            if tolerant && a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.close_to(y)) =>
        {
            Agreement::Close
        }
        (Ok(a), Ok(b)) => Agreement::Disagree(format!(
            "the interpreter gives {}, OpenCL gives {}",
            show(&a),
            show(&b)
        )),
        (Err(e), _) if e.is_limit() => Agreement::Limit,
        (Err(e), _) if matches!(e.kind, ErrorKind::Race(_)) => Agreement::Race,
        (Ok(_), Err(g)) if g.is_limit() => Agreement::Limit,
        (Err(_), Err(g)) if g.is_program_error() => Agreement::BothWrong,
        (Err(e), Err(g)) => Agreement::Disagree(format!(
            "the interpreter went wrong ({e}), and OpenCL failed: {g}"
        )),
        (Ok(a), Err(g)) => Agreement::Disagree(format!(
            "the interpreter gives {}, OpenCL fails: {g}",
            show(&a)
        )),
        (Err(e), Ok(b)) => Agreement::Disagree(format!(
            "the interpreter went wrong ({e}), OpenCL gives {}",
            show(&b)
        )),
    }
}

/// The limits of a device run compared with an interpreter's run under
/// `limits`: the same heap, and the fuel scaled as the defaults are
/// ([`DEVICE_FUEL`] / [`DEFAULT_FUEL`]), since the interpreter's fuel counts
/// statements and the device's counts kernel iterations, with host loop
/// iterations at [`crate::driver::LOOP_FUEL`] each. A run the interpreter
/// finishes within its fuel then never runs out on the device because of
/// its host loops.
pub fn device_limits(limits: Limits) -> Limits {
    Limits {
        fuel: limits.fuel.saturating_mul(DEVICE_FUEL / DEFAULT_FUEL),
        ..limits
    }
}

/// The interpreter's outcome, then the device's under [`device_limits`],
/// compared. When the interpreter exceeds a limit there is nothing to
/// compare, and the device does not run (its run could be as long as the
/// program's loops: the interpreter's limit stopped them).
pub fn check_one(
    rt: &mut Runtime,
    program: &Program,
    inputs: &[Value],
    limits: Limits,
) -> Agreement {
    let want = run_imp(program, inputs, limits, true, &mut NoObserver);
    if matches!(&want, Err(e) if e.is_limit()) {
        return Agreement::Limit;
    }
    let got = rt.run(inputs, device_limits(limits), false).map(|(v, _)| v);
    compare(want, got, tolerant(rt.compiled()))
}

/// Runs each program on its inputs with the interpreter (races checked)
/// and on `device` (one OpenCL build for all), and compares
/// ([`check_one`]).
pub fn check_batch(
    device: &DeviceInfo,
    cases: &[(Program, Vec<Value>)],
    limits: Limits,
) -> Result<Vec<Agreement>, GpuError> {
    let programs: Vec<Program> = cases.iter().map(|(p, _)| p.clone()).collect();
    let runtimes = Runtime::batch(device, &programs)?;
    Ok(cases
        .iter()
        .zip(runtimes)
        .map(|((p, inputs), rt)| match rt {
            Err(d) => Agreement::Refused(d.message),
            Ok(mut rt) => check_one(&mut rt, p, inputs, limits),
        })
        .collect())
}
