//! `funmem test PATH...`: runs the test blocks of program files
//! (docs/language.md, Test blocks), as `futhark test` does.
//!
//! Every input is run under every semantics of the file's layer (FUN:
//! value; FUNMEM: heap and value; IMP: heap) with race detection on. An
//! `output` must equal the results exactly; an `error:` regex must match
//! the error (`RULE: message`); a compile-time `error:` must match the
//! parse or type error. `structure { Name N }` counts constructs in the
//! program after lowering to FUNMEM and simplifying; `structure gpu-mem`
//! after the GPU pipeline (simplify, expand-gpu); a named pipeline that
//! does not exist yet is skipped and reported as such. The cases also run
//! on every stage of those pipelines and of the CPU one (simplify,
//! expand-cpu). One line per failure, then `N passed, N failed`.
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
use funmem_lang::testspec::{self, Expect, TestSpec};
use funmem_lang::{count, front, Source};
use funmem_semantics::observer::NoObserver;
use funmem_semantics::run::{run, RunOptions, Semantics};
use funmem_semantics::textual::parse_values;
use funmem_semantics::validity::first_difference;
use funmem_semantics::value::Value;
use funmem_transforms::{pass, pipeline};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    inconclusive: usize,
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
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let files = match funmem_lang::files::walk(&paths, |p| {
        Layer::from_path(&p.to_string_lossy()).is_some()
    }) {
        Ok(w) => {
            for s in &w.skipped {
                eprintln!("{s}");
            }
            w.files
        }
        Err(m) => {
            eprintln!("{m}");
            return ExitCode::from(2);
        }
    };
    let mut t = Tally::default();
    for f in &files {
        test_file(f, device.as_ref(), &mut t);
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
    let stages = match lowered(&program) {
        Ok(st) => st,
        Err(e) => return t.check(Err(e), || name.clone()),
    };
    for (label, p) in &stages {
        run_cases(&name, label, p, &spec, t);
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
            run_opencl(&name, imp, dev, &spec, t);
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
                    t.skipped += 1;
                    println!("SKIP {name}: structure {pipe}: that pipeline does not exist yet");
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
/// `gpu-mem` (simplify, expand-gpu), `cpu-mem` (simplify, expand-cpu), each
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
    for (label, pass) in [("gpu-mem", "expand-gpu"), ("cpu-mem", "expand-cpu")] {
        out.extend(continue_with(&simplified, pass, label, &provers)?);
    }
    Ok(out)
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
    Ok(st
        .into_iter()
        .skip(1)
        .map(|s| {
            let l = if s.name == pass {
                label.to_string()
            } else {
                format!("{label}, {}", s.name)
            };
            (l, s.program)
        })
        .collect())
}

fn run_cases(name: &str, stage: &str, program: &AnyProgram, spec: &TestSpec, t: &mut Tally) {
    let layer = funmem_semantics::run::layer_of(program);
    for (k, case) in spec.cases.iter().enumerate() {
        let what = |sem: Semantics| {
            let stage = if stage == "source" {
                String::new()
            } else {
                format!(" after {stage},")
            };
            format!(
                "{name}: case {k} (input {{ {} }}),{stage} {sem} semantics",
                case.input
            )
        };
        let inputs = match parse_values(&case.input) {
            Ok(v) => v,
            Err(e) => {
                t.check(Err(format!("bad input: {}", e.message)), || {
                    format!("{name}: case {k}")
                });
                continue;
            }
        };
        let expected = match &case.expect {
            Expect::Output(o) => match parse_values(o) {
                Ok(v) => Some(v),
                Err(e) => {
                    t.check(Err(format!("bad expected output: {}", e.message)), || {
                        format!("{name}: case {k}")
                    });
                    continue;
                }
            },
            _ => None,
        };
        for &sem in Semantics::of(layer) {
            let Some(result) = run(
                program,
                sem,
                &inputs,
                RunOptions {
                    limits: funmem_semantics::error::Limits::for_this_machine(),
                    race_check: true,
                },
                &mut NoObserver,
            ) else {
                continue;
            };
            let want = expected.as_deref().unwrap_or_default();
            // A lowered stage that exceeds a limit the source stays within
            // is inconclusive (limits are not semantics; the layers count
            // differently), unless the case expects that very error.
            let limit = match &result {
                Err(e) if stage != "source" && e.is_limit() => Some(e.to_string()),
                _ => None,
            };
            let ok = judge(
                &case.expect,
                want,
                result.map_err(|e| (e.to_string(), true)),
            );
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
    spec: &TestSpec,
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
    for (k, case) in spec.cases.iter().enumerate() {
        let what = || {
            format!(
                "{name}: case {k} (input {{ {} }}), OpenCL on {}",
                case.input,
                dev.label()
            )
        };
        let Ok(inputs) = parse_values(&case.input) else {
            continue; // reported by the interpreters' runs
        };
        let result = rt.run(
            &inputs,
            funmem_semantics::error::Limits::for_device(),
            false,
        );
        let want = match &case.expect {
            Expect::Output(o) => match parse_values(o) {
                Ok(v) => v,
                Err(_) => continue, // reported by the interpreters' runs
            },
            _ => Vec::new(),
        };
        let ok = match (&case.expect, result) {
            // OpenCL does not detect races: a racy case only has to finish.
            (Expect::Error(re), Ok(_)) if re.contains("race") => Ok(()),
            // Over a limit (fuel, heap, device memory): inconclusive, as
            // on the interpreters' lowered stages.
            (Expect::Output(_) | Expect::Success, Err(e)) if e.is_limit() => {
                t.inconclusive += 1;
                println!("INCONCLUSIVE {}: {e} (a resource limit)", what());
                continue;
            }
            (expect, result) => judge(
                expect,
                &want,
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
fn judge(
    expect: &Expect,
    want: &[Value],
    got: Result<Vec<Value>, (String, bool)>,
) -> Result<(), String> {
    match (expect, got) {
        (Expect::Output(_), Ok(got)) => match first_difference(&got, want) {
            None => Ok(()),
            Some(d) => Err(d.describe("the program", "the test")),
        },
        (Expect::Success, Ok(_)) => Ok(()),
        (Expect::Error(re), Ok(got)) => {
            let shown: Vec<String> = got.iter().map(ToString::to_string).collect();
            Err(format!(
                "gave {}, but an error matching /{re}/ was expected",
                shown.join(" ")
            ))
        }
        (Expect::Error(re), Err((e, true))) => matches(re, &e),
        (_, Err((e, _))) => Err(format!("failed: {e}")),
    }
}

fn matches(re: &str, text: &str) -> Result<(), String> {
    match regex::Regex::new(re) {
        Ok(r) if r.is_match(text) => Ok(()),
        Ok(_) => Err(format!("error `{text}` does not match /{re}/")),
        Err(e) => Err(format!("bad regex /{re}/: {e}")),
    }
}
