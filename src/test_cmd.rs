//! `funmem test PATH...`: runs the test blocks of program files
//! (docs/language.md, Test blocks), as `futhark test` does.
//!
//! Every input is run under every semantics of the file's layer (FUN:
//! value; FUNMEM: heap and value; IMP: heap) with race detection on. An
//! `output` (inline or `@ FILE`) must equal the results: exactly, except
//! that float results may differ within the documented tolerance
//! (`Value::close_to`, docs/data.md); a failure says which comparison
//! failed. Inputs come inline, from a data file (`input @ FILE`, text or
//! binary, relative to the program), or are random (`random input {
//! TYPES }`, with a seed fixed per case): a random case has no expected
//! output, so every semantics and stage must agree (within the tolerance)
//! with the source's first semantics, and nothing may go wrong. Unsuffixed
//! literals of inputs take the types of the program's parameters, those
//! of outputs the types of the results. An `error:` regex must match
//! the error (`RULE: message`); a compile-time `error:` must match the
//! parse or type error. `structure { Name N }` counts constructs in the
//! program after lowering to FUNMEM and simplifying; `structure gpu-mem`
//! after the GPU pipeline (simplify, coalesce, reuse, expand-gpu); `structure
//! simplify,coalesce` after that pass list, run on the program lowered to
//! FUNMEM (once per list and file). A pipeline that does not exist yet, or
//! a list naming a pass that does not, is skipped and reported as such
//! (which pass). The cases also run on every stage of those pipelines, of
//! the CPU one (simplify, coalesce, reuse, expand-cpu) and of each pass list the block
//! names (its result and that result's IMP translation). One line per
//! failure, then `N passed, N failed`.
//!
//! Limits are not semantics: a lowered stage (or the OpenCL run) that
//! exceeds fuel or the heap limit where the case expects results is
//! reported as `INCONCLUSIVE` and counted apart, not as a failure (the
//! layers count fuel and heap differently). The source itself exceeding a
//! limit where the case expects results is a failure.
//!
//! With `--opencl DEVICE`, every case also runs on that OpenCL device, on
//! the GPU pipeline's IMP program (an IMP file as it is): one more
//! semantics, held to the same expectations. OpenCL does not detect races,
//! so a case that expects a race only needs to finish there.

use funmem_lang::parse::{AnyProgram, Layer};
use funmem_lang::testspec::{self, Expect, InputFrom, RandomItem, TestSpec};
use funmem_lang::{count, front, Source};
use funmem_semantics::observer::NoObserver;
use funmem_semantics::run::{run, RunOptions, Semantics};
use funmem_semantics::textual::read_values_for;
use funmem_semantics::validity::first_difference;
use funmem_semantics::value::{Value, F32_TOLERANCE, F64_TOLERANCE};
use funmem_transforms::{pass, pipeline};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    inconclusive: usize,
    /// `compiled` cases (benchmark datasets) left to `funmem bench`.
    compiled: usize,
}

impl Tally {
    fn check(&mut self, ok: Result<(), String>, what: impl FnOnce() -> String) {
        match ok {
            Ok(()) => self.passed += 1,
            Err(why) => {
                self.failed += 1;
                println!("FAIL {}: {why}", what());
            }
        }
    }
}

/// The program files under `paths` (each once), with what was skipped and
/// why said on standard error; `None` (said too) when a path is wrong.
pub(crate) fn program_files(paths: &[String]) -> Option<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    match funmem_lang::files::walk(&paths, |p| Layer::from_path(&p.to_string_lossy()).is_some()) {
        Ok(w) => {
            for s in &w.skipped {
                eprintln!("{s}");
            }
            Some(w.files)
        }
        Err(m) => {
            eprintln!("{m}");
            None
        }
    }
}

/// Runs the tests of every program under `paths`; exit 1 if any failed.
/// With `opencl`, also on that OpenCL device.
pub fn run_tests(paths: &[String], opencl: Option<&str>) -> ExitCode {
    let device = match opencl {
        None => None,
        Some(name) => match crate::gpu_cmd::device(Some(name)) {
            Ok(d) => Some(d),
            Err(code) => return code,
        },
    };
    let Some(files) = program_files(paths) else {
        return ExitCode::from(2);
    };
    let mut t = Tally::default();
    for f in &files {
        test_file(f, device.as_ref(), &mut t);
    }
    if t.compiled > 0 {
        println!(
            "{} compiled input(s) not run: benchmark datasets, for `funmem bench`",
            t.compiled
        );
    }
    let skipped = if t.skipped > 0 {
        format!(", {} skipped", t.skipped)
    } else {
        String::new()
    };
    let inconclusive = if t.inconclusive > 0 {
        format!(", {} inconclusive", t.inconclusive)
    } else {
        String::new()
    };
    println!(
        "{} passed, {} failed{skipped}{inconclusive}",
        t.passed, t.failed
    );
    if t.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn test_file(path: &Path, device: Option<&funmem_gpu::DeviceInfo>, t: &mut Tally) {
    let name = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(s) => funmem_lang::span::without_bom(s),
        Err(e) => return t.check(Err(format!("cannot read: {e}")), || name.clone()),
    };
    let src = Source::new(name.clone(), text.clone());
    let spec = match testspec::parse(&text) {
        Ok(Some(s)) => s,
        Ok(None) => return,
        Err(d) => {
            return t.check(Err(format!("bad test block: {}", d.headline(&src))), || {
                name.clone()
            })
        }
    };
    let program = front::load(&src);
    if let Some(re) = &spec.compile_error {
        let ok = match &program {
            Ok(_) => Err(format!(
                "compiled, but an error matching /{re}/ was expected"
            )),
            Err(d) => matches(re, &d.message),
        };
        return t.check(ok, || name.clone());
    }
    let program = match program {
        Ok(p) => p,
        Err(d) => return t.check(Err(d.headline(&src)), || name.clone()),
    };
    let mut stages = match lowered(&program) {
        Ok(st) => st,
        Err(e) => return t.check(Err(e), || name.clone()),
    };
    // Pass lists that the structure items name: each run once, its stages
    // added (so that the cases run on them too); why a list was not run.
    let mut not_run: Vec<(String, String)> = Vec::new();
    for pipe in spec.structures.iter().filter_map(|s| s.pipeline.as_deref()) {
        if stages.iter().any(|(l, _)| l == pipe) || not_run.iter().any(|(l, _)| l == pipe) {
            continue;
        }
        match pass_list_stages(&program, pipe) {
            Ok(Ok(st)) => stages.extend(st),
            Ok(Err(why)) => not_run.push((pipe.to_string(), why)),
            Err(e) => {
                not_run.push((pipe.to_string(), String::new()));
                t.check(Err(e), || format!("{name}: structure {pipe}"));
            }
        }
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let cases = resolve_cases(&name, dir, &program, &spec, t);
    for (label, p) in &stages {
        run_cases(&name, label, p, &cases, t);
    }
    if let Some(dev) = device {
        let imp = stages
            .iter()
            .find(|(l, _)| l == "gpu-mem, lower to IMP")
            .or_else(|| stages.first())
            .and_then(|(_, p)| match p {
                AnyProgram::Imp(q) => Some(q),
                AnyProgram::Fun(_) => None,
            });
        if let Some(imp) = imp {
            run_opencl(&name, imp, dev, &cases, t);
        }
    }
    let counted = stages
        .iter()
        .find(|(l, _)| l == "simplify")
        .map_or(&program, |(_, p)| p);
    for s in &spec.structures {
        let counted = match s.pipeline.as_deref() {
            None => counted,
            Some(pipe) => match stages.iter().find(|(l, _)| l == pipe) {
                Some((_, p)) => p,
                None => {
                    match not_run.iter().find(|(l, _)| l == pipe) {
                        // The pipeline failed: already reported.
                        Some((_, why)) if why.is_empty() => {}
                        Some((_, why)) => {
                            t.skipped += 1;
                            println!("SKIP {name}: structure {pipe}: {why}");
                        }
                        None => {
                            t.skipped += 1;
                            println!(
                                "SKIP {name}: structure {pipe}: that pipeline does not exist yet"
                            );
                        }
                    }
                    continue;
                }
            },
        };
        for (construct, want) in &s.counts {
            let ok = match count::count(counted, construct) {
                Some(n) if n as u64 == *want => Ok(()),
                Some(n) => Err(format!("{n} × {construct}, expected {want}")),
                None => Err(format!("`{construct}` is not a construct of this language")),
            };
            t.check(ok, || format!("{name}: structure {construct}"));
        }
    }
}

/// The program and its lowered stages, each with a label: the source,
/// `lower to FUNMEM`, `lower to IMP` (of the translation as it is),
/// `simplify`, `simplify, lower to IMP`, and the memory pipelines
/// `gpu-mem` (simplify, coalesce, reuse, expand-gpu), `cpu-mem` (simplify,
/// coalesce, reuse, expand-cpu), each
/// with its IMP. IMP programs are their only stage.
fn lowered(program: &AnyProgram) -> Result<Vec<(String, AnyProgram)>, String> {
    if let AnyProgram::Imp(_) = program {
        return Ok(vec![("source".into(), program.clone())]);
    }
    let provers = funmem_oracle::prove::Provers::default();
    let raw = pipeline::stages(program, &[], true, &provers).map_err(|e| e.to_string())?;
    // Each later pipeline continues from a stage already computed: simplify
    // from the FUNMEM translation, the expansions from the simplified
    // program.
    let translated = raw
        .iter()
        .find(|s| s.name == "lower to FUNMEM")
        .map_or_else(|| program.clone(), |s| s.program.clone());
    let mut out: Vec<(String, AnyProgram)> = raw.into_iter().map(|s| (s.name, s.program)).collect();
    let simple = continue_with(&translated, "simplify", "simplify", &provers)?;
    let simplified = simple[0].1.clone();
    out.extend(simple);
    for (label, pass) in [
        ("gpu-mem", "migrate,coalesce,reuse,expand-gpu"),
        ("cpu-mem", "coalesce,reuse,expand-cpu"),
    ] {
        out.extend(continue_with(&simplified, pass, label, &provers)?);
    }
    Ok(out)
}

/// The stages of a `structure` item's pass list `list` (comma-separated,
/// as testspec normalises it), run on `program` lowered to FUNMEM: the
/// last pass's program labelled `list` and its IMP translation `list,
/// lower to IMP`. `Ok(Err(why))` when the list is not run (a pass that
/// does not exist, an IMP program), `Err` when a pass fails on the program.
fn pass_list_stages(
    program: &AnyProgram,
    list: &str,
) -> Result<Result<Vec<(String, AnyProgram)>, String>, String> {
    if let AnyProgram::Imp(_) = program {
        return Ok(Err("an IMP program takes no passes".into()));
    }
    let mut passes = Vec::new();
    for n in list.split(',') {
        match pass::lookup(n) {
            Ok(p) => passes.push(p),
            Err(_) => return Ok(Err(format!("unknown pass `{n}`, not run"))),
        }
    }
    let provers = funmem_oracle::prove::Provers::default();
    let mut st = pipeline::stages(program, &passes, true, &provers).map_err(|e| e.to_string())?;
    // The stages end with the last pass's, then its IMP translation.
    let (Some(imp), Some(last)) = (st.pop(), st.pop()) else {
        return Err(format!("the pass list `{list}` gave no program"));
    };
    Ok(Ok(vec![
        (list.to_string(), last.program),
        (format!("{list}, lower to IMP"), imp.program),
    ]))
}

/// The stages after running `pass` on the FUNMEM program `from`, then
/// lowering to IMP: the pass's stage labelled `label`, the IMP one
/// `label, lower to IMP`.
fn continue_with(
    from: &AnyProgram,
    pass: &str,
    label: &str,
    provers: &funmem_oracle::prove::Provers,
) -> Result<Vec<(String, AnyProgram)>, String> {
    let passes = pass::parse_list(pass)?;
    let st = pipeline::stages(from, &passes, true, provers).map_err(|e| e.to_string())?;
    // The last pass's stage is the pipeline's (`gpu-mem`); the ones
    // before it are `gpu-mem, coalesce`, ...
    let last = passes.last().map_or("", |p| p.name);
    Ok(st
        .into_iter()
        .skip(1)
        .map(|s| {
            let l = if s.name == last {
                label.to_string()
            } else {
                format!("{label}, {}", s.name)
            };
            (l, s.program)
        })
        .collect())
}

/// A test case made ready to run: its inputs read or generated, what it
/// must give, and how to name it in reports.
struct Case {
    /// `case K (input { ... })`, `case K (input @ FILE)` or `case K (random input)`.
    label: String,
    inputs: Vec<Value>,
    expect: Want,
}

/// What a case must give.
enum Want {
    /// Values in a data text (inline or a file's bytes), read when judged
    /// so that their unsuffixed literals take the results' types.
    Data(Vec<u8>),
    /// Agreement with these results of the source's first semantics (a
    /// random input).
    Agree(Vec<Value>),
    /// An error matching this regex.
    Error(String),
    /// Only success.
    Success,
}

/// The seed of the `k`-th case's random input: fixed, so that runs are
/// reproducible, and different per case.
fn random_seed(k: usize) -> u64 {
    0x5eed_0000 + k as u64
}

/// The input values of `case`, the `k`-th of its block (which fixes the
/// seed of a random input): read from its text or its data file (relative
/// to `dir`), or generated. `wanted` types the unsuffixed literals.
/// `funmem bench` reads its datasets with it, so that they are the very
/// values `funmem test` runs.
pub(crate) fn case_inputs(
    dir: &Path,
    wanted: &[funmem_lang::prim::Prim],
    case: &testspec::TestCase,
    k: usize,
) -> Result<Vec<Value>, String> {
    match &case.from {
        InputFrom::Inline => read_values_for(case.input.as_bytes(), wanted)
            .map_err(|e| format!("bad input: {}", e.message)),
        InputFrom::File(f) => std::fs::read(dir.join(f))
            .map_err(|e| format!("cannot read {f}: {e}"))
            .and_then(|bytes| {
                read_values_for(&bytes, wanted)
                    .map_err(|e| format!("bad input in {f}: byte {}: {}", e.start, e.message))
            }),
        InputFrom::Random(items) => {
            let mut rng = crate::dataset_cmd::SplitMix::new(random_seed(k));
            items
                .iter()
                .enumerate()
                .map(|(j, item)| match item {
                    RandomItem::Random(shape, p) => {
                        Ok(crate::dataset_cmd::random_value(&mut rng, shape, *p))
                    }
                    RandomItem::Literal(text) => {
                        let want: Vec<_> = wanted.get(j).copied().into_iter().collect();
                        match read_values_for(text.as_bytes(), &want) {
                            Ok(mut v) if v.len() == 1 => Ok(v.remove(0)),
                            _ => Err(format!("bad literal `{text}` in the random input")),
                        }
                    }
                })
                .collect()
        }
    }
}

/// How reports name the `k`-th case of a block: `case K (input { ... })`,
/// `case K (input @ FILE)` or `case K (random input)`.
pub(crate) fn case_label(k: usize, case: &testspec::TestCase) -> String {
    match &case.from {
        InputFrom::Inline => format!("case {k} (input {{ {} }})", case.input),
        InputFrom::File(f) => format!("case {k} (input @ {f})"),
        InputFrom::Random(_) => format!("case {k} (random input)"),
    }
}

/// Whether a case runs to results, so that its run can be measured: not a
/// benchmark dataset (`compiled`, for `funmem bench`) and not expected to
/// go wrong (`error:`).
pub(crate) fn runs_to_results(case: &testspec::TestCase) -> bool {
    !case.compiled && !matches!(case.expect, Expect::Error(_))
}

/// Results against an expected output's data text (inline or a data
/// file's bytes), read with the results' types: as `funmem test` judges
/// an `output`.
pub(crate) fn check_output(bytes: &[u8], got: &[Value]) -> Result<(), String> {
    let types: Vec<_> = got.iter().map(Value::prim).collect();
    let want = read_values_for(bytes, &types)
        .map_err(|e| format!("bad expected output: byte {}: {}", e.start, e.message))?;
    compare(got, &want, "the test")
}

/// Reads or generates every case's inputs and expectation; a case whose
/// data cannot be read is a failure and is left out.
fn resolve_cases(
    name: &str,
    dir: &Path,
    program: &AnyProgram,
    spec: &TestSpec,
    t: &mut Tally,
) -> Vec<Case> {
    let wanted = crate::input_prims(program);
    let mut cases = Vec::new();
    for (k, case) in spec.cases.iter().enumerate() {
        // Benchmark datasets: `funmem bench` runs them.
        if case.compiled {
            t.compiled += 1;
            continue;
        }
        let label = case_label(k, case);
        let read =
            |f: &str| std::fs::read(dir.join(f)).map_err(|e| format!("cannot read {f}: {e}"));
        let inputs = case_inputs(dir, &wanted, case, k);
        let expect = match &case.expect {
            Expect::Output(o) => Ok(Want::Data(o.clone().into_bytes())),
            Expect::OutputFile(f) => read(f).map(Want::Data),
            Expect::Error(re) => Ok(Want::Error(re.clone())),
            Expect::Success => Ok(Want::Success),
        };
        let (inputs, mut expect) = match (inputs, expect) {
            (Ok(i), Ok(e)) => (i, e),
            (Err(m), _) | (_, Err(m)) => {
                t.check(Err(m), || format!("{name}: {label}"));
                continue;
            }
        };
        if let InputFrom::Random(_) = case.from {
            // The reference: the source's first semantics.
            let layer = funmem_semantics::run::layer_of(program);
            let sem = Semantics::of(layer)[0];
            let result = run(
                program,
                sem,
                &inputs,
                RunOptions {
                    limits: funmem_semantics::error::Limits::for_this_machine(),
                    race_check: true,
                },
                &mut NoObserver,
            );
            match result {
                Some(Ok(values)) => expect = Want::Agree(values),
                Some(Err(e)) => {
                    t.check(Err(format!("went wrong: {e}")), || {
                        format!("{name}: {label}, {sem} semantics")
                    });
                    continue;
                }
                None => {}
            }
        }
        cases.push(Case {
            label,
            inputs,
            expect,
        });
    }
    cases
}

fn run_cases(name: &str, stage: &str, program: &AnyProgram, cases: &[Case], t: &mut Tally) {
    let layer = funmem_semantics::run::layer_of(program);
    for case in cases {
        let what = |sem: Semantics| {
            let stage = if stage == "source" {
                String::new()
            } else {
                format!(" after {stage},")
            };
            format!("{name}: {},{stage} {sem} semantics", case.label)
        };
        for &sem in Semantics::of(layer) {
            let Some(result) = run(
                program,
                sem,
                &case.inputs,
                RunOptions {
                    limits: funmem_semantics::error::Limits::for_this_machine(),
                    race_check: true,
                },
                &mut NoObserver,
            ) else {
                continue;
            };
            // A lowered stage that exceeds a limit the source stays within
            // is inconclusive (limits are not semantics; the layers count
            // differently), unless the case expects that very error.
            let limit = match &result {
                Err(e) if stage != "source" && e.is_limit() => Some(e.to_string()),
                _ => None,
            };
            let ok = judge(&case.expect, result.map_err(|e| (e.to_string(), true)));
            match (ok, limit) {
                (Err(_), Some(e)) => {
                    t.inconclusive += 1;
                    println!("INCONCLUSIVE {}: {e} (a resource limit)", what(sem));
                }
                (ok, _) => t.check(ok, || what(sem)),
            }
        }
    }
}

/// The cases on an OpenCL device.
fn run_opencl(
    name: &str,
    imp: &funmem_lang::imp::Program,
    dev: &funmem_gpu::DeviceInfo,
    cases: &[Case],
    t: &mut Tally,
) {
    let compiled = match funmem_gpu::compile(imp) {
        Ok(c) => c,
        Err(d) => {
            // Allocations that expansion cannot hoist (data-dependent
            // sizes) keep a program off the GPU.
            t.skipped += 1;
            println!("SKIP {name}: OpenCL: {}", d.message);
            return;
        }
    };
    let mut rt = match funmem_gpu::Runtime::new(dev, &compiled) {
        Ok(rt) => rt,
        Err(e) => return t.check(Err(format!("OpenCL: {e}")), || name.to_string()),
    };
    for case in cases {
        let what = || format!("{name}: {}, OpenCL on {}", case.label, dev.label());
        let result = rt.run(
            &case.inputs,
            funmem_semantics::error::Limits::for_device(),
            false,
        );
        let ok = match (&case.expect, result) {
            // OpenCL does not detect races: a racy case only has to finish.
            (Want::Error(re), Ok(_)) if re.contains("race") => Ok(()),
            // Over a limit (fuel, heap, device memory): inconclusive, as
            // on the interpreters' lowered stages.
            (Want::Data(_) | Want::Agree(_) | Want::Success, Err(e)) if e.is_limit() => {
                t.inconclusive += 1;
                println!("INCONCLUSIVE {}: {e} (a resource limit)", what());
                continue;
            }
            (expect, result) => judge(
                expect,
                result
                    .map(|(v, _)| v)
                    .map_err(|e| (e.to_string(), e.is_program_error())),
            ),
        };
        t.check(ok, what);
    }
}

/// A case's outcome against its expectation. `got` is the results, or the
/// error's text and whether the program went wrong (else the run itself
/// failed, which no expectation accepts).
fn judge(expect: &Want, got: Result<Vec<Value>, (String, bool)>) -> Result<(), String> {
    match (expect, got) {
        (Want::Data(bytes), Ok(got)) => check_output(bytes, &got),
        (Want::Agree(want), Ok(got)) => compare(&got, want, "the source's first semantics"),
        (Want::Success, Ok(_)) => Ok(()),
        (Want::Error(re), Ok(got)) => {
            let shown: Vec<String> = got.iter().map(ToString::to_string).collect();
            Err(format!(
                "gave {}, but an error matching /{re}/ was expected",
                shown.join(" ")
            ))
        }
        (Want::Error(re), Err((e, true))) => matches(re, &e),
        (_, Err((e, _))) => Err(format!("failed: {e}")),
    }
}

/// Results against expected values: equal, or, for float results, within
/// the tolerance of [`Value::close_to`]; the failure says which
/// comparison failed and where.
pub(crate) fn compare(got: &[Value], want: &[Value], expected: &str) -> Result<(), String> {
    let Some(d) = first_difference(got, want) else {
        return Ok(());
    };
    if got.len() != want.len() {
        return Err(d.describe("the program", expected));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if g == w {
            continue;
        }
        let p = w.prim();
        if !p.is_float() || g.prim() != p || shape(g) != shape(w) {
            let d = first_difference(&got[k..=k], &want[k..=k]).map_or(String::new(), |d| {
                d.describe("the program", expected)
                    .replacen("result 0", &format!("result {k}"), 1)
            });
            return Err(format!(
                "{d} (compared exactly: {} against {})",
                g.type_name(),
                w.type_name()
            ));
        }
        if g.close_to(w) {
            continue;
        }
        let tol = if p == funmem_lang::prim::Prim::F32 {
            F32_TOLERANCE
        } else {
            F64_TOLERANCE
        };
        // The first element outside the tolerance.
        let place = match (g, w) {
            (Value::Array(a), Value::Array(b)) => a
                .data
                .iter()
                .zip(b.data.iter())
                .position(|(x, y)| {
                    !funmem_semantics::value::floats_close(p, x.as_f64(), y.as_f64())
                })
                .map_or(String::new(), |e| {
                    format!(
                        " at element {e} (row-major): {} against {}",
                        a.data.get(e),
                        b.data.get(e)
                    )
                }),
            _ => format!(": {g} against {w}"),
        };
        return Err(format!(
            "result {k} differs{place}, beyond the {p} tolerance \
             (|a - b| <= {tol:e} * max(1, |a|, |b|)) of {expected}"
        ));
    }
    Ok(())
}

/// An array's shape (empty for a scalar).
fn shape(v: &Value) -> &[usize] {
    match v {
        Value::Array(a) => &a.shape,
        Value::Scalar(_) => &[],
    }
}

fn matches(re: &str, text: &str) -> Result<(), String> {
    match regex::Regex::new(re) {
        Ok(r) if r.is_match(text) => Ok(()),
        Ok(_) => Err(format!("error `{text}` does not match /{re}/")),
        Err(e) => Err(format!("bad regex /{re}/: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::prim::Const;
    use funmem_semantics::value::{ArrayValue, Elems};

    fn f32s(xs: &[f32]) -> Value {
        Value::Array(ArrayValue {
            shape: vec![xs.len()],
            data: Elems::F32(xs.to_vec()),
        })
    }

    #[test]
    fn results_compare_exactly_or_within_the_float_tolerance() {
        let ints = Value::Array(ArrayValue::vector(vec![1, 2, 3]));
        assert_eq!(
            compare(
                std::slice::from_ref(&ints),
                std::slice::from_ref(&ints),
                "the test"
            ),
            Ok(())
        );
        let other = Value::Array(ArrayValue::vector(vec![1, 2, 4]));
        let e = compare(std::slice::from_ref(&ints), &[other], "the test").unwrap_err();
        assert!(
            e.contains("differs at [2]") && e.contains("compared exactly"),
            "{e}"
        );
        // Floats: within the tolerance, and beyond it.
        let got = f32s(&[1.0, 2.0, f32::NAN]);
        assert_eq!(
            compare(
                std::slice::from_ref(&got),
                &[f32s(&[1.001, 2.0, f32::NAN])],
                "t"
            ),
            Ok(())
        );
        let e = compare(
            std::slice::from_ref(&got),
            &[f32s(&[1.0, 2.1, f32::NAN])],
            "the test",
        )
        .unwrap_err();
        assert!(e.contains("result 0 differs at element 1 (row-major): 2.0f32 against 2.1f32, beyond the f32 tolerance"), "{e}");
        let e = compare(
            &[Value::Scalar(Const::f64(1.0))],
            &[Value::Scalar(Const::f64(1.0 + 1e-6))],
            "the test",
        )
        .unwrap_err();
        assert!(e.contains("beyond the f64 tolerance"), "{e}");
        // A different type is compared exactly and says so.
        let e = compare(&[got], &[ints], "the test").unwrap_err();
        assert!(e.contains("compared exactly: [3]f32 against [3]i64"), "{e}");
        let e = compare(&[], &[Value::int(1)], "the test").unwrap_err();
        assert!(e.contains("0 results"), "{e}");
    }
}
