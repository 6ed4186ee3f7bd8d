//! `funmem bench FILE`: benchmarks a program on an OpenCL device, dataset
//! by dataset, as `futhark bench` does (docs/cli.md, Benchmarking).
//!
//! The datasets are the cases of the program's test block (`compiled`
//! ones included, cases expecting an error left out), with the very
//! values `funmem test` reads or generates, or the one `--input` file. The
//! program is compiled and built for the device once; each dataset then
//! gets an untimed counting run (whose results are checked against the
//! case's `output`, when it has one), warm-up runs and timed runs. The
//! time reported is Futhark's: the program alone, from its inputs being on
//! the device to its last command having finished, so without context
//! creation, kernel builds, the initial transfer of the inputs and the
//! final read-back of the results; kernel time and wall time come beside
//! it. A dataset that fails (wrong results, an error on the device) is
//! reported and the others still run; the exit code is then 1.
//!
//! `--json FILE` writes `futhark bench`'s layout (program → `datasets` →
//! name → `runtimes` in µs, `bytes` per memory space), so that Futhark's
//! comparison and plotting scripts read it; our further figures sit under
//! each dataset's `funmem` key, which those scripts ignore.

use crate::gpu_cmd::{bytes, compile_program, device, gpu_failure, GPU_PASSES};
use crate::{report, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_gpu::bench::{BenchOptions, BenchReport, CopyReport};
use funmem_gpu::GpuError;
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::testspec::{self, Expect, InputFrom, RandomItem, TestCase};
use funmem_lang::Source;
use funmem_semantics::value::Value;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Map, Value as Json};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `funmem bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// The program (.fun, .funmem or .imp).
    file: String,
    /// Benchmark only the inputs in this file (`-`: standard input) instead
    /// of the datasets of the program's test block.
    #[arg(long, value_name = "FILE")]
    input: Option<String>,
    /// The OpenCL device: its number in `funmem devices`, or part of its
    /// platform's, vendor's or own name (default: the first GPU).
    #[arg(long)]
    device: Option<String>,
    /// FUNMEM passes before lowering to IMP.
    #[arg(long, default_value = GPU_PASSES)]
    passes: String,
    /// Timed runs per dataset (at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// Untimed runs before them.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Only the datasets whose name contains NAME (repeatable).
    #[arg(long = "dataset", value_name = "NAME")]
    datasets: Vec<String>,
    /// Start no new run of a dataset once it has spent this many seconds
    /// (a kernel already running cannot be stopped).
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    timeout: Option<f64>,
    /// Write the results in `futhark bench`'s JSON layout to FILE (`-`:
    /// standard output, instead of the table).
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Most kernel iterations and host loop iterations per run
    /// (docs/limits.md).
    #[arg(long, default_value_t = funmem_semantics::error::DEVICE_FUEL)]
    fuel: u64,
    /// Most heap cells (array elements) a run may allocate; the default is
    /// half of this machine's free memory at 32 bytes a cell
    /// (docs/limits.md).
    #[arg(long, default_value_t = funmem_semantics::error::Limits::for_this_machine().max_heap)]
    max_heap: u64,
    /// Print each dataset's per-kernel table (always printed when there is
    /// one dataset).
    #[arg(long)]
    kernels: bool,
}

/// A positive, finite number of seconds.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

/// A dataset to benchmark.
struct Dataset<'a> {
    /// Its name, as `futhark bench` names it.
    name: String,
    /// Where its inputs come from: a test-block case and its index, or
    /// the `--input` file (`None`: standard input).
    from: From<'a>,
}

enum From<'a> {
    Case(usize, &'a TestCase),
    Input(Option<String>),
}

/// How one dataset went.
enum Outcome {
    Done(Box<BenchReport>),
    Failed(String),
    /// Failed on the device itself (an OpenCL error, out of device
    /// memory): the context may be unusable, so the next dataset gets a
    /// fresh one.
    DeviceFailed(String),
}

/// Whether `--dataset NAME` picks the case `k` named `name`: a part of
/// its name, or `#K`, its number in the test block (counting from 0).
pub(crate) fn picks(wanted: &str, name: &str, k: usize) -> bool {
    name.contains(wanted) || wanted == format!("#{k}")
}

/// The name `futhark bench` gives a case: the data file's path for `input
/// @ FILE`, the types (and literals) for a random input, and otherwise
/// `#K ("the values...")`, the values on one line, cut after 50
/// characters.
pub(crate) fn case_name(k: usize, case: &TestCase) -> String {
    match &case.from {
        InputFrom::File(f) => f.strip_suffix(".gz").unwrap_or(f).to_string(),
        InputFrom::Random(items) => items
            .iter()
            .map(|item| match item {
                RandomItem::Random(shape, p) => {
                    let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
                    format!("{dims}{}", p.name())
                }
                RandomItem::Literal(text) => text.clone(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        InputFrom::Inline => {
            let flat = case.input.split_whitespace().collect::<Vec<_>>().join(" ");
            let shown = match flat.char_indices().nth(50) {
                Some((at, _)) => format!("{}...", &flat[..at]),
                None => flat,
            };
            format!("#{k} (\"{shown}\")")
        }
    }
}

/// The cases of a test block that expect results (futhark bench leaves
/// out those that expect an error), each with its name and number. Names
/// are keys of the JSON: two equal ones get the case's number.
pub(crate) fn named_cases(spec: &testspec::TestSpec) -> Vec<(String, usize, &TestCase)> {
    let mut seen = std::collections::HashSet::new();
    spec.cases
        .iter()
        .enumerate()
        .filter(|(_, c)| !matches!(c.expect, Expect::Error(_)))
        .map(|(k, c)| {
            let mut name = case_name(k, c);
            if !seen.insert(name.clone()) {
                name = format!("{name} (#{k})");
                seen.insert(name.clone());
            }
            (name, k, c)
        })
        .collect()
}

/// The datasets of the command line: the `--input` file, or the cases of
/// the test block that expect results (futhark bench leaves out those
/// that expect an error), filtered by `--dataset`.
fn datasets<'a>(
    args: &BenchArgs,
    src: &Source,
    spec: Option<&'a testspec::TestSpec>,
) -> Result<Vec<Dataset<'a>>, ExitCode> {
    let all: Vec<Dataset<'a>> = if let Some(input) = &args.input {
        let (name, file) = if input == "-" {
            ("stdin".to_string(), None)
        } else {
            (input.clone(), Some(input.clone()))
        };
        vec![Dataset {
            name,
            from: From::Input(file),
        }]
    } else {
        let Some(spec) = spec else {
            eprintln!(
                "{}: no test block to take datasets from; give one with --input FILE (`-` for standard input) or add `input` cases after `-- ==`",
                src.name
            );
            return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
        };
        let ds: Vec<Dataset<'a>> = named_cases(spec)
            .into_iter()
            .map(|(name, k, c)| Dataset {
                name,
                from: From::Case(k, c),
            })
            .collect();
        if ds.is_empty() {
            eprintln!(
                "{}: the test block has no dataset to benchmark (no `input` case that expects results); give one with --input FILE",
                src.name
            );
            return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
        }
        ds
    };
    if args.datasets.is_empty() {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|d| d.name.clone()).collect();
    let kept: Vec<Dataset<'a>> = all
        .into_iter()
        .filter(|d| {
            args.datasets.iter().any(|n| match d.from {
                From::Case(k, _) => picks(n, &d.name, k),
                From::Input(_) => d.name.contains(n.as_str()),
            })
        })
        .collect();
    if kept.is_empty() {
        eprintln!(
            "{}: no dataset's name contains {}; the datasets are: {}",
            src.name,
            args.datasets
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or "),
            names.join(", ")
        );
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    Ok(kept)
}

/// `funmem bench`.
pub fn bench(args: BenchArgs) -> Result<ExitCode, ExitCode> {
    let (src, program) = crate::load(&args.file)?;
    let spec = testspec::parse(&src.text).map_err(|d| {
        report(&src, &d);
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })?;
    let sets = datasets(&args, &src, spec.as_ref())?;
    // A file that cannot be written is found before any run.
    let mut json_out = match args.json.as_deref() {
        None | Some("-") => None,
        Some(path) => Some(std::fs::File::create(path).map_err(|e| {
            eprintln!("{path}: cannot write the JSON results: {e}");
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        })?),
    };
    let wanted = crate::input_prims(&program);
    let dir = Path::new(&args.file)
        .parent()
        .unwrap_or(Path::new("."))
        .to_path_buf();
    // Before any dataset ran, a failure leaves no results file behind.
    let unwritten = |code: ExitCode| {
        if let (Some(path), true) = (args.json.as_deref(), json_out.is_some()) {
            let _ = std::fs::remove_file(path);
        }
        code
    };
    let c = compile_program(&args.file, &src, program, Some(&args.passes)).map_err(unwritten)?;
    let dev = device(args.device.as_deref()).map_err(unwritten)?;
    let mut rt = match funmem_gpu::Runtime::new(&dev, &c) {
        Ok(rt) => rt,
        Err(e) => {
            // The build failed: every dataset fails with its message.
            let code = gpu_failure(&src, &e);
            let failed: Vec<Outcome> = sets
                .iter()
                .map(|_| Outcome::Failed(e.to_string()))
                .collect();
            let doc = to_json(&args, &dev.label(), &sets, &failed, None);
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            match &mut json_out {
                Some(f) => {
                    let _ = writeln!(f, "{text}");
                }
                None if args.json.is_some() => println!("{text}"),
                None => {}
            }
            return Err(code);
        }
    };
    let opts = BenchOptions {
        runs: usize::try_from(args.runs).unwrap_or(usize::MAX),
        warmup: args.warmup,
        limits: funmem_semantics::error::Limits {
            fuel: args.fuel,
            max_heap: args.max_heap,
        },
        timeout: args.timeout.map(Duration::from_secs_f64),
    };
    let mut exit = ExitCode::SUCCESS;
    let mut outcomes = Vec::new();
    for d in &sets {
        let inputs = match &d.from {
            From::Input(file) => crate::read_inputs_for(file.as_deref(), &wanted)?,
            From::Case(k, case) => match crate::test_cmd::case_inputs(&dir, &wanted, case, *k) {
                Ok(v) => v,
                Err(m) => {
                    eprintln!("{}: dataset {}: {m}", src.name, d.name);
                    exit = ExitCode::from(EXIT_NOT_A_PROGRAM);
                    outcomes.push(Outcome::Failed(m));
                    continue;
                }
            },
        };
        let mut outcome = run_dataset(&mut rt, &src, &dir, d, &inputs, opts);
        drop(inputs);
        if let Outcome::DeviceFailed(m) = outcome {
            // A fresh context and build (untimed) for the datasets after.
            match funmem_gpu::Runtime::new(&dev, &c) {
                Ok(fresh) => rt = fresh,
                Err(e) => eprintln!("funmem: rebuilding after the failure: {e}"),
            }
            outcome = Outcome::Failed(m);
        }
        if let Outcome::Failed(_) = outcome {
            if exit == ExitCode::SUCCESS {
                exit = ExitCode::from(EXIT_WENT_WRONG);
            }
        }
        outcomes.push(outcome);
    }
    // The copy kernel once, over as many bytes as the busiest dataset's
    // kernels move.
    let most = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Done(r) => Some(r.bytes),
            Outcome::Failed(_) | Outcome::DeviceFailed(_) => None,
        })
        .max();
    let copy = match most {
        None => None,
        Some(b) => match funmem_gpu::bench::copy(&rt, b, opts) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("funmem: the copy kernel: {e}");
                None
            }
        },
    };
    if let Some(copy) = &copy {
        for o in &mut outcomes {
            if let Outcome::Done(r) = o {
                r.rate(copy);
            }
        }
    }
    let doc = to_json(&args, &dev.label(), &sets, &outcomes, copy.as_ref());
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    match (&args.json, &mut json_out) {
        (Some(_), Some(f)) => {
            if let Err(e) = writeln!(f, "{text}") {
                eprintln!(
                    "{}: cannot write the JSON results: {e}",
                    args.json.as_deref().unwrap_or_default()
                );
                return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
            }
        }
        (Some(_), None) => {
            println!("{text}");
            return Ok(exit);
        }
        _ => {}
    }
    print_table(&args, &dev.label(), &sets, &outcomes, copy.as_ref());
    Ok(exit)
}

/// One dataset: its runs, with a progress bar on a terminal, and its
/// results checked against the case's `output`.
fn run_dataset(
    rt: &mut funmem_gpu::Runtime,
    src: &Source,
    dir: &Path,
    d: &Dataset,
    inputs: &[Value],
    opts: BenchOptions,
) -> Outcome {
    let total = (opts.warmup + opts.runs.max(1)) as u64;
    let bar = ProgressBar::new(total);
    if std::io::stderr().is_terminal() {
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{wide_bar}] {pos}/{len} runs {elapsed}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        let shown: String = d.name.chars().take(30).collect();
        bar.set_message(shown);
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let result = funmem_gpu::bench::bench(rt, inputs, opts, &mut |n| bar.set_position(n as u64));
    bar.finish_and_clear();
    let (results, report) = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: dataset {}:", src.name, d.name);
            let m = failure_text(src, &e);
            return match e {
                GpuError::Program(_) => Outcome::Failed(m),
                _ => Outcome::DeviceFailed(m),
            };
        }
    };
    let expected = match &d.from {
        From::Case(_, case) => match &case.expect {
            Expect::Output(text) => Some(Ok(text.clone().into_bytes())),
            Expect::OutputFile(f) => {
                Some(std::fs::read(dir.join(f)).map_err(|e| format!("cannot read {f}: {e}")))
            }
            Expect::Error(_) | Expect::Success => None,
        },
        From::Input(_) => None,
    };
    if report.runs == 0 {
        let m = format!(
            "timed out after 0 runs: the first runs took longer than --timeout {} s",
            opts.timeout.map_or(0.0, |t| t.as_secs_f64())
        );
        eprintln!("{}: dataset {}: {m}", src.name, d.name);
        return Outcome::Failed(m);
    }
    let checked = match expected {
        None => Ok(()),
        Some(bytes) => bytes.and_then(|b| crate::test_cmd::check_output(&b, &results)),
    };
    match checked {
        Ok(()) => Outcome::Done(Box::new(report)),
        Err(m) => {
            let m = format!("wrong results: {m}");
            eprintln!("{}: dataset {}: {m}", src.name, d.name);
            Outcome::Failed(m)
        }
    }
}

/// A device failure: reported on stderr (a program error at its
/// position), and its text for the results.
fn failure_text(src: &Source, e: &GpuError) -> String {
    match e {
        GpuError::Program(err) => {
            report(
                src,
                &Diagnostic::new(Phase::Eval, err.span, err.to_string()),
            );
            let (line, col) = src.line_col(err.span.start);
            format!("{}:{line}:{col}: {err}", src.name)
        }
        e => {
            eprintln!("funmem: {e}");
            e.to_string()
        }
    }
}

/// Nanoseconds as whole microseconds (rounded, at least 1: futhark's
/// scripts divide by them).
fn micros(ns: u64) -> u64 {
    ns.div_ceil(1000).max(1)
}

/// `futhark bench`'s JSON layout, with our figures under `funmem`.
fn to_json(
    args: &BenchArgs,
    device: &str,
    sets: &[Dataset],
    outcomes: &[Outcome],
    copy: Option<&CopyReport>,
) -> Json {
    let mut ds = Map::new();
    for (d, o) in sets.iter().zip(outcomes) {
        let v = match o {
            // futhark bench writes a failed dataset as its error message.
            Outcome::Failed(m) | Outcome::DeviceFailed(m) => Json::String(m.clone()),
            Outcome::Done(r) => {
                let s = &r.run;
                let us = |xs: &[u64]| xs.iter().map(|&x| micros(x)).collect::<Vec<_>>();
                json!({
                    "runtimes": us(&r.runtime_ns),
                    "bytes": { "space 'device'": s.peak_bytes },
                    "stderr": "",
                    "funmem": {
                        "device": device,
                        "passes": args.passes,
                        "runs": r.runs,
                        "warmup": args.warmup,
                        "timed_out": r.timed_out,
                        "runtime_ms": r.runtime_ms,
                        "kernel_us": us(&r.kernel_ns),
                        "kernel_ms": r.kernel_ms,
                        "wall_us": us(&r.wall_ns),
                        "wall_ms": r.wall_ms,
                        "peak_bytes": s.peak_bytes,
                        "allocations": s.allocations,
                        "bytes_allocated": s.bytes_allocated,
                        "h2d_transfers": s.h2d_transfers,
                        "h2d_bytes": s.h2d_bytes,
                        "d2h_transfers": s.d2h_transfers,
                        "d2h_bytes": s.d2h_bytes,
                        "sync_reads": s.sync_reads,
                        "host_writes": s.host_writes,
                        "launches": s.launches,
                        "error_checks": s.error_checks,
                        "bytes_moved": r.bytes,
                        "gbps": r.gbps,
                        "of_copy": r.of_copy,
                        "kernels": r.kernels,
                        "reductions": r.reductions,
                        "copy": copy,
                    }
                })
            }
        };
        ds.insert(d.name.clone(), v);
    }
    let mut top = Map::new();
    top.insert(args.file.clone(), json!({ "datasets": ds }));
    Json::Object(top)
}

/// A ratio to the copy kernel as a percentage, `-` when there is none.
fn percent(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{:.0}%", 100.0 * r))
}

/// The table on stdout: a row per dataset, then the copy kernel, then the
/// per-kernel tables (with `--kernels`, or for a single dataset).
fn print_table(
    args: &BenchArgs,
    device: &str,
    sets: &[Dataset],
    outcomes: &[Outcome],
    copy: Option<&CopyReport>,
) {
    println!("program:  {} (passes {})", args.file, args.passes);
    println!("device:   {device}");
    println!(
        "runs:     {} timed per dataset, after {} warm-up; runtime: the program alone, inputs already on the device, results not read back",
        args.runs, args.warmup
    );
    println!();
    println!(
        "{:<40} {:>5} {:>12} {:>23} {:>11} {:>10} {:>7} {:>5} {:>5}",
        "dataset",
        "runs",
        "runtime ms",
        "min..max",
        "kernel ms",
        "peak mem",
        "allocs",
        "h2d",
        "d2h"
    );
    for (d, o) in sets.iter().zip(outcomes) {
        let name: String = d.name.chars().take(40).collect();
        match o {
            Outcome::Failed(m) | Outcome::DeviceFailed(m) => {
                let first = m.lines().next().unwrap_or_default();
                println!("{name:<40} FAILED: {first}");
            }
            Outcome::Done(r) => {
                let s = &r.run;
                let range = format!("{:.3}..{:.3}", r.runtime_ms.min, r.runtime_ms.max);
                let note = if r.timed_out {
                    format!("  (timed out after {} runs)", r.runs)
                } else {
                    String::new()
                };
                println!(
                    "{name:<40} {:>5} {:>12.3} {:>23} {:>11.3} {:>10} {:>7} {:>5} {:>5}{note}",
                    r.runs,
                    r.runtime_ms.median,
                    range,
                    r.kernel_ms.median,
                    bytes(s.peak_bytes),
                    s.allocations,
                    s.h2d_transfers,
                    s.d2h_transfers,
                );
            }
        }
    }
    if let Some(c) = copy {
        println!();
        println!(
            "copy kernel: {:.1} GB/s over {} (median {:.3} ms): the device's practical bandwidth",
            c.gbps,
            bytes(c.bytes),
            c.ms.median
        );
    }
    if !(args.kernels || sets.len() == 1) {
        return;
    }
    for (d, o) in sets.iter().zip(outcomes) {
        if let Outcome::Done(r) = o {
            println!();
            println!("{}:", d.name);
            kernel_table(r);
        }
    }
}

/// One dataset's kernels, reductions, memory and transfers.
fn kernel_table(r: &BenchReport) {
    let s = &r.run;
    println!(
        "{:<22} {:>12} {:>12} {:>12}",
        "ms per run", "min", "median", "max"
    );
    for (what, m) in [
        ("runtime", r.runtime_ms),
        ("kernels", r.kernel_ms),
        ("wall (host clock)", r.wall_ms),
    ] {
        println!(
            "{what:<22} {:>12.3} {:>12.3} {:>12.3}",
            m.min, m.median, m.max
        );
    }
    println!();
    println!(
        "{:<10} {:>8} {:>12} {:>12} {:>10} {:>8}",
        "kernel", "launches", "median ms", "bytes", "GB/s", "of copy"
    );
    for k in &r.kernels {
        println!(
            "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>8}",
            k.name,
            k.launches,
            k.ms.median,
            bytes(k.bytes),
            k.gbps,
            percent(k.of_copy)
        );
    }
    println!(
        "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>8}",
        "all",
        s.launches,
        r.kernel_ms.median,
        bytes(r.bytes),
        r.gbps,
        percent(r.of_copy)
    );
    for red in &r.reductions {
        println!(
            "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>8}   ({} {}: its stages together; bytes read + written)",
            if red.what.starts_with("scan") { "scan" } else { "reduce" },
            "",
            red.ms.median,
            bytes(red.bytes),
            red.gbps,
            percent(red.of_copy),
            red.elem,
            red.what
        );
    }
    if r.of_copy.is_none() || r.kernels.iter().any(|k| k.of_copy.is_none()) {
        println!(
            "(of copy: shown for kernels that move at least {}; below that a launch's latency, not bandwidth, decides its time)",
            bytes(funmem_gpu::bench::MIN_RATIO_BYTES)
        );
    }
    println!();
    println!("peak device memory:  {}", bytes(s.peak_bytes));
    println!(
        "allocations:         {} ({})",
        s.allocations,
        bytes(s.bytes_allocated)
    );
    println!(
        "host-to-device:      {} transfers, {} ({} host writes)",
        s.h2d_transfers,
        bytes(s.h2d_bytes),
        s.host_writes
    );
    println!(
        "device-to-host:      {} transfers, {} ({} synchronous host reads)",
        s.d2h_transfers,
        bytes(s.d2h_bytes),
        s.sync_reads
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::prim::Prim;
    use funmem_lang::span::Span;

    fn case(input: &str, from: InputFrom) -> TestCase {
        TestCase {
            input: input.into(),
            from,
            expect: Expect::Success,
            span: Span::new(0, 0),
            compiled: false,
        }
    }

    #[test]
    fn datasets_are_named_as_futhark_bench_names_them() {
        assert_eq!(
            case_name(0, &case("3\n [1, 2,\n 3]", InputFrom::Inline)),
            "#0 (\"3 [1, 2, 3]\")"
        );
        let long = "1".repeat(60);
        assert_eq!(
            case_name(2, &case(&long, InputFrom::Inline)),
            format!("#2 (\"{}...\")", "1".repeat(50))
        );
        assert_eq!(
            case_name(1, &case("", InputFrom::File("data/big.in.gz".into()))),
            "data/big.in"
        );
        let random = InputFrom::Random(vec![
            RandomItem::Literal("1024i64".into()),
            RandomItem::Random(vec![1024, 8], Prim::F32),
        ]);
        assert_eq!(case_name(3, &case("", random)), "1024i64 [1024][8]f32");
    }

    #[test]
    fn microseconds_are_whole_and_positive() {
        assert_eq!(micros(0), 1);
        assert_eq!(micros(1_000), 1);
        assert_eq!(micros(1_001), 2);
        assert_eq!(
            seconds("0"),
            Err("`0` is not a positive number of seconds".into())
        );
        assert_eq!(seconds("1.5"), Ok(1.5));
    }
}
