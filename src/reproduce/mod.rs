//! `funmem reproduce NAME`: re-runs a paper's evaluation on our pipeline
//! and sets our figures beside the published ones (docs/reproduce.md).
//!
//! Each paper's folder holds `reproduce.json` ([`manifest`]): the pipeline
//! variants the paper compares (say, no merging against coalescing and
//! reuse), the benchmarks with their datasets, and the paper's figures per
//! dataset. For every benchmark, variant and dataset the program goes
//! through the variant's passes and is built for the device once; each
//! dataset then gets `funmem bench`'s measurement (a counting run whose
//! results are checked, warm-up runs, timed runs), plus the static counts
//! of the pipeline's last FUNMEM program (allocation sites, host read
//! sites). Every variant's results must agree with the test block's
//! expected output where the dataset is a case that has one, and with the
//! baseline's results: a variant that changes the results is reported as
//! wrong, never timed as faster. The copy kernel runs once at the end,
//! over as many bytes as the busiest run moved, so that each run's
//! bandwidth is also given as a share of it.
//!
//! The report ([`report`]) is `results.json`, `table.md` (our figures, the
//! aggregates computed the paper's way and as geometric means, the
//! published figures beside them) and SVG bar charts ([`plot`]).

pub mod manifest;
mod plot;
mod report;

use crate::gpu_cmd::device;
use crate::{EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_gpu::bench::{BenchOptions, BenchReport};
use funmem_lang::parse::AnyProgram;
use funmem_lang::testspec::{self, Expect, TestCase};
use funmem_semantics::value::Value;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use manifest::{Benchmark, DatasetSpec, Manifest};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Options of `funmem reproduce`.
#[derive(clap::Args)]
pub struct Args {
    /// The paper: ifl2022, serup2017, reuse-blog, borgesen2022,
    /// henriksen2017, sc22, or `all`.
    name: String,
    /// The OpenCL device (as `funmem bench --device`; default: the first
    /// GPU, and `pocl` with --quick).
    #[arg(long)]
    device: Option<String>,
    /// Small inputs, one timed run after one warm-up: a check that the whole
    /// evaluation runs (on PoCL unless --device says otherwise).
    #[arg(long)]
    quick: bool,
    /// Where the report goes (default: reproduce-out/NAME; with `all`, one
    /// folder per paper inside it).
    #[arg(long, value_name = "DIR")]
    out: Option<String>,
    /// Timed runs per dataset (default 10; 1 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    runs: Option<u64>,
    /// Untimed runs before them (default 1).
    #[arg(long)]
    warmup: Option<usize>,
    /// Start no new run of a dataset once it has spent this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    timeout: f64,
    /// The hand-written reference's times, in `futhark bench`'s JSON
    /// layout (as `scripts/bench-rodinia` writes them), instead of the file
    /// the paper's manifest names.
    #[arg(long, value_name = "FILE")]
    reference: Option<String>,
    /// Only the benchmarks whose name contains NAME (repeatable).
    #[arg(long = "only", value_name = "NAME")]
    only: Vec<String>,
}

/// What one variant measured on one dataset.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measure {
    /// `ok`, or what went wrong.
    pub status: String,
    /// Timed runs done.
    pub runs: usize,
    /// Runtime (Futhark's measure), fastest and median, ms.
    pub runtime_min_ms: f64,
    pub runtime_median_ms: f64,
    /// Time in kernels, median, ms.
    pub kernel_median_ms: f64,
    /// Bytes the kernels read and wrote per run.
    pub bytes: u64,
    /// Those bytes over the median kernel time, GB/s.
    pub gbps: f64,
    /// `gbps` as a share of the copy kernel's (when the kernels move
    /// enough bytes to say).
    pub of_copy: Option<f64>,
    /// The most device memory live at once, bytes.
    pub peak_bytes: u64,
    /// Device buffers created per run (input blocks included).
    pub allocations: u64,
    /// Synchronous device-to-host reads per run.
    pub sync_reads: u64,
    /// Kernel launches per run.
    pub launches: u64,
    /// `alloc` statements in the program after the passes.
    pub alloc_sites: usize,
    /// Host read sites in the program after the passes.
    pub host_read_sites: usize,
}

impl Measure {
    fn failed(m: impl Into<String>) -> Measure {
        Measure {
            status: m.into(),
            ..Measure::default()
        }
    }

    /// Whether it ran and its results were right.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }

    fn from_report(r: &BenchReport, alloc_sites: usize, host_read_sites: usize) -> Measure {
        Measure {
            status: "ok".to_string(),
            runs: r.runs,
            runtime_min_ms: r.runtime_ms.min,
            runtime_median_ms: r.runtime_ms.median,
            kernel_median_ms: r.kernel_ms.median,
            bytes: r.bytes,
            gbps: r.gbps,
            of_copy: r.of_copy,
            peak_bytes: r.run.peak_bytes,
            allocations: r.run.allocations,
            sync_reads: r.run.sync_reads,
            launches: r.run.launches,
            alloc_sites,
            host_read_sites,
        }
    }
}

/// One dataset of one benchmark, every variant.
#[derive(Debug, Serialize)]
pub struct Row {
    pub benchmark: String,
    pub dataset: String,
    pub program: String,
    /// By variant name.
    pub variants: BTreeMap<String, Measure>,
    /// The reference's median time, ms.
    pub reference_ms: Option<f64>,
    /// The paper's figures.
    pub published: BTreeMap<String, serde_json::Value>,
}

/// The settings a reproduction ran with.
#[derive(Debug, Serialize)]
pub struct RunInfo {
    pub device: String,
    pub quick: bool,
    pub runs: u64,
    pub warmup: usize,
    pub date: String,
    pub command: String,
    pub copy_gbps: Option<f64>,
    pub reference: Option<String>,
}

/// `funmem reproduce`.
pub fn reproduce(args: Args) -> Result<ExitCode, ExitCode> {
    let bad = |m: String| {
        eprintln!("funmem reproduce: {m}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(bad(format!(
            "--timeout must be a positive number of seconds, not {}",
            args.timeout
        )));
    }
    let root = manifest::root().map_err(bad)?;
    let names: Vec<&str> = if args.name == "all" {
        manifest::PAPERS.to_vec()
    } else if manifest::PAPERS.contains(&args.name.as_str()) {
        vec![args.name.as_str()]
    } else {
        return Err(bad(format!(
            "no paper `{}`: the papers are {} (or `all`)",
            args.name,
            manifest::PAPERS.join(", ")
        )));
    };
    // Every manifest is read before anything runs.
    let manifests = names
        .iter()
        .map(|n| manifest::load(&root, n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let out_root = PathBuf::from(args.out.clone().unwrap_or_else(|| "reproduce-out".into()));
    let mut exit = ExitCode::SUCCESS;
    for m in &manifests {
        let out = if args.name == "all" || args.out.is_none() {
            out_root.join(&m.name)
        } else {
            out_root.clone()
        };
        std::fs::create_dir_all(&out)
            .map_err(|e| bad(format!("cannot make {}: {e}", out.display())))?;
        let failed = run_paper(&args, &root, m, &out)?;
        if failed > 0 {
            eprintln!(
                "{}: {failed} run(s) failed (see {})",
                m.name,
                out.join("table.md").display()
            );
            exit = ExitCode::from(EXIT_WENT_WRONG);
        }
    }
    Ok(exit)
}

/// The datasets of a benchmark that a run takes: the quick ones with
/// `--quick`, the others without (all of them when it has no others).
fn chosen(b: &Benchmark, quick: bool) -> Vec<&DatasetSpec> {
    let full: Vec<_> = b.datasets.iter().filter(|d| !d.quick).collect();
    if quick {
        b.datasets.iter().filter(|d| d.quick).collect()
    } else if full.is_empty() {
        b.datasets.iter().collect()
    } else {
        full
    }
}

/// Runs one paper's evaluation and writes its report into `out`; the
/// number of failed runs.
fn run_paper(args: &Args, root: &Path, m: &Manifest, out: &Path) -> Result<usize, ExitCode> {
    let runs = args.runs.unwrap_or(if args.quick { 1 } else { 10 });
    let warmup = args.warmup.unwrap_or(1);
    let wanted = args
        .device
        .clone()
        .or_else(|| args.quick.then(|| "pocl".to_string()));
    let dev = device(wanted.as_deref())?;
    let opts = BenchOptions {
        runs: usize::try_from(runs).unwrap_or(usize::MAX),
        warmup,
        limits: funmem_semantics::error::Limits {
            fuel: funmem_semantics::error::DEVICE_FUEL,
            max_heap: funmem_semantics::error::Limits::for_this_machine().max_heap,
        },
        timeout: Some(Duration::from_secs_f64(args.timeout)),
    };
    let benches: Vec<&Benchmark> = m
        .benchmarks
        .iter()
        .filter(|b| args.only.is_empty() || args.only.iter().any(|o| b.name.contains(o.as_str())))
        .collect();
    let total: usize = benches
        .iter()
        .map(|b| chosen(b, args.quick).len() * m.variants.len())
        .sum();
    let bar = progress(total as u64, &m.name);
    let date = today();
    let info = |copy_gbps: Option<f64>| RunInfo {
        device: dev.label(),
        quick: args.quick,
        runs,
        warmup,
        date: date.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        copy_gbps,
        reference: reference_label(args, m),
    };
    let mut rows = Vec::new();
    let mut reports: Vec<(usize, String, BenchReport)> = Vec::new();
    let mut ctx: Option<funmem_gpu::Runtime> = None;
    let reference = reference_file(args, root, m);
    for b in benches {
        let sets = chosen(b, args.quick);
        let first = rows.len();
        for d in &sets {
            rows.push(Row {
                benchmark: b.name.clone(),
                dataset: d.name.clone(),
                program: b.program.clone(),
                variants: BTreeMap::new(),
                reference_ms: None,
                published: d.published.clone(),
            });
        }
        let file = root.join(&b.program);
        let file_text = file.to_string_lossy().to_string();
        let Ok((src, p)) = crate::load(&file_text) else {
            for row in &mut rows[first..] {
                for v in &m.variants {
                    let failed = Measure::failed(format!("cannot load {}", b.program));
                    row.variants.insert(v.name.clone(), failed);
                    bar.inc(1);
                }
            }
            continue;
        };
        // Every variant built once, the baseline first, so that the others
        // are checked against it.
        let order = std::iter::once(m.variants.iter().find(|v| v.name == m.baseline))
            .flatten()
            .chain(m.variants.iter().filter(|v| v.name != m.baseline));
        let mut built: Vec<_> = order
            .map(|v| {
                bar.set_message(format!("{} · {} (building)", b.name, v.label));
                let made = build(&file_text, &src, p.clone(), &v.passes).and_then(|(c, sites)| {
                    let rt =
                        funmem_gpu::Runtime::new(&dev, &c).map_err(|e| format!("build: {e}"))?;
                    Ok((c, rt, sites))
                });
                (v, made)
            })
            .collect();
        for (k, d) in sets.iter().enumerate() {
            // The inputs are made once for all the variants.
            let data = dataset_inputs(&file, &src, &p, d);
            let mut baseline_results: Option<Vec<Value>> = None;
            for (v, made) in &mut built {
                bar.set_message(format!("{} · {} · {}", b.name, d.name, v.label));
                let measure = match (&data, made) {
                    (_, Err(e)) => Measure::failed(e.clone()),
                    (Err(e), _) => Measure::failed(e.clone()),
                    (Ok((inputs, expected)), Ok((c, rt, sites))) => {
                        match run_one(rt, inputs, expected.as_deref(), opts) {
                            Err(e) => {
                                if e.device {
                                    // The context may be unusable: a fresh one.
                                    if let Ok(fresh) = funmem_gpu::Runtime::new(&dev, c) {
                                        *rt = fresh;
                                    }
                                }
                                Measure::failed(e.message)
                            }
                            Ok((results, report)) => {
                                let agree = match &baseline_results {
                                    None if v.name == m.baseline => {
                                        baseline_results = Some(results);
                                        Ok(())
                                    }
                                    Some(base) => crate::test_cmd::compare(
                                        &results,
                                        base,
                                        "the baseline's results",
                                    ),
                                    None => Ok(()),
                                };
                                match agree {
                                    Ok(()) => {
                                        let mm = Measure::from_report(&report, sites.0, sites.1);
                                        reports.push((first + k, v.name.clone(), report));
                                        mm
                                    }
                                    Err(e) => Measure::failed(format!("wrong results: {e}")),
                                }
                            }
                        }
                    }
                };
                rows[first + k].variants.insert(v.name.clone(), measure);
                bar.inc(1);
            }
        }
        // A context kept for the copy kernel.
        if let Some(rt) = built.into_iter().rev().find_map(|(_, made)| made.ok()) {
            ctx = Some(rt.1);
        }
        // The reference's times.
        if let (Some(key), Some(r)) = (&b.reference, &reference) {
            for (k, d) in sets.iter().enumerate() {
                if let Some(dkey) = &d.reference {
                    rows[first + k].reference_ms = reference_ms(r, key, dkey);
                }
            }
        }
        // The report so far, so that a run cut short leaves what it did.
        let _ = report::write(m, &info(None), &rows, out);
    }
    bar.finish_and_clear();
    // The copy kernel, over as many bytes as the busiest run moved.
    let mut copy_gbps = None;
    if let (Some(rt), Some(most)) = (&ctx, reports.iter().map(|(_, _, r)| r.bytes).max()) {
        match funmem_gpu::bench::copy(rt, most, opts) {
            Ok(copy) => {
                copy_gbps = Some(copy.gbps);
                for (row, v, r) in &mut reports {
                    r.rate(&copy);
                    if let Some(mm) = rows[*row].variants.get_mut(v) {
                        mm.of_copy = r.of_copy;
                    }
                }
            }
            Err(e) => eprintln!("funmem reproduce: the copy kernel: {e}"),
        }
    }
    let info = info(copy_gbps);
    let failed = rows
        .iter()
        .flat_map(|r| r.variants.values())
        .filter(|v| !v.ok())
        .count();
    report::write(m, &info, &rows, out).map_err(|e| {
        eprintln!("funmem reproduce: {e}");
        ExitCode::from(EXIT_WENT_WRONG)
    })?;
    println!(
        "{}: {} dataset(s) × {} variant(s) on {}; report in {}",
        m.name,
        rows.len(),
        m.variants.len(),
        dev.label(),
        out.display()
    );
    Ok(failed)
}

/// A progress bar over the runs, on a terminal only.
fn progress(total: u64, name: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if std::io::stderr().is_terminal() {
        if let Ok(style) =
            ProgressStyle::with_template("{prefix} [{wide_bar}] {pos}/{len} {msg} {elapsed}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

/// The program through `passes` and built for OpenCL, with the static
/// counts of the last FUNMEM program: (allocation sites, host read sites).
fn build(
    file: &str,
    src: &funmem_lang::Source,
    p: AnyProgram,
    passes: &str,
) -> Result<(funmem_gpu::Compiled, (usize, usize)), String> {
    let list = funmem_transforms::pass::parse_list(passes).map_err(|e| e.to_string())?;
    let stages = crate::pipeline(file, src, &p, &list, true)
        .map_err(|_| format!("the pipeline `{passes}` failed (see above)"))?;
    let mem = stages
        .iter()
        .rev()
        .find(|s| matches!(s.program, AnyProgram::Fun(_)));
    let sites = mem.map_or((0, 0), |s| {
        (
            funmem_lang::count::count(&s.program, "alloc").unwrap_or(0),
            funmem_lang::count::count(&s.program, "hostread").unwrap_or(0),
        )
    });
    let Some(AnyProgram::Imp(imp)) = stages.into_iter().last().map(|s| s.program) else {
        return Err("the pipeline produced no IMP program".to_string());
    };
    let c = funmem_gpu::compile(&imp).map_err(|d| d.message.clone())?;
    Ok((c, sites))
}

/// A failed measurement: its message, and whether the device itself
/// failed (so the context is rebuilt).
struct Failure {
    message: String,
    device: bool,
}

/// A dataset's inputs, and the output its test-block case expects (when
/// it is a case that has one).
type Data = (Vec<Value>, Option<Vec<u8>>);

/// Makes a dataset's inputs: a test-block case's, literal values, or
/// values from the generator.
fn dataset_inputs(
    file: &Path,
    src: &funmem_lang::Source,
    p: &AnyProgram,
    d: &DatasetSpec,
) -> Result<Data, String> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let wanted = crate::input_prims(p);
    if let Some(c) = &d.case {
        let (k, case) = pick_case(src, c)?;
        let inputs = crate::test_cmd::case_inputs(dir, &wanted, &case, k)?;
        let expected = match &case.expect {
            Expect::Output(text) => Some(text.clone().into_bytes()),
            Expect::OutputFile(f) => {
                Some(std::fs::read(dir.join(f)).map_err(|e| format!("cannot read {f}: {e}"))?)
            }
            Expect::Error(_) | Expect::Success => None,
        };
        Ok((inputs, expected))
    } else if let Some(text) = &d.input {
        let inputs = funmem_semantics::textual::read_values_for(text.as_bytes(), &wanted)
            .map_err(|e| format!("bad input: byte {}: {}", e.start, e.message))?;
        Ok((inputs, None))
    } else {
        let specs = d.generate.clone().unwrap_or_default();
        Ok((
            crate::dataset_cmd::generate(&specs, d.seed, &d.bounds)?,
            None,
        ))
    }
}

/// Benchmarks one variant on one dataset's inputs, its results checked
/// against the expected output.
fn run_one(
    rt: &mut funmem_gpu::Runtime,
    inputs: &[Value],
    expected: Option<&[u8]>,
    opts: BenchOptions,
) -> Result<(Vec<Value>, BenchReport), Failure> {
    let plain = |message: String| Failure {
        message,
        device: false,
    };
    let (results, report) =
        funmem_gpu::bench::bench(rt, inputs, opts, &mut |_| {}).map_err(|e| Failure {
            device: !matches!(e, funmem_gpu::GpuError::Program(_)),
            message: e.to_string(),
        })?;
    if report.runs == 0 {
        return Err(plain("timed out before its first timed run".to_string()));
    }
    if let Some(bytes) = expected {
        crate::test_cmd::check_output(bytes, &results)
            .map_err(|e| plain(format!("wrong results: {e}")))?;
    }
    Ok((results, report))
}

/// The case of the program's test block that `wanted` names (part of its
/// name or `#K`), exactly one.
fn pick_case(src: &funmem_lang::Source, wanted: &str) -> Result<(usize, TestCase), String> {
    let spec = testspec::parse(&src.text)
        .map_err(|d| format!("bad test block: {}", d.message))?
        .ok_or_else(|| "the program has no test block".to_string())?;
    let picked: Vec<(usize, &TestCase)> = spec
        .cases
        .iter()
        .enumerate()
        .filter(|(k, c)| crate::bench_cmd::picks(wanted, &crate::bench_cmd::case_name(*k, c), *k))
        .collect();
    match picked.as_slice() {
        [(k, c)] => Ok((*k, (*c).clone())),
        [] => Err(format!("no case of its test block is named `{wanted}`")),
        _ => Err(format!("several cases of its test block match `{wanted}`")),
    }
}

/// The reference's JSON, when the paper has one (or --reference gives it).
fn reference_file(args: &Args, root: &Path, m: &Manifest) -> Option<serde_json::Value> {
    let path = match (&args.reference, &m.reference) {
        (Some(f), _) => PathBuf::from(f),
        (None, Some(r)) => root.join(&r.file),
        (None, None) => return None,
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(j) => Some(j),
            Err(e) => {
                eprintln!("funmem reproduce: {}: {e}", path.display());
                None
            }
        },
        Err(e) => {
            eprintln!("funmem reproduce: {}: {e}", path.display());
            None
        }
    }
}

fn reference_label(args: &Args, m: &Manifest) -> Option<String> {
    match (&args.reference, &m.reference) {
        (Some(f), _) => Some(format!("times from {f}")),
        (None, Some(r)) => Some(format!("{} ({})", r.label, r.file)),
        (None, None) => None,
    }
}

/// The median of a dataset's `runtimes` (µs) in a `futhark bench` JSON,
/// in ms.
fn reference_ms(j: &serde_json::Value, program: &str, dataset: &str) -> Option<f64> {
    let runs = j
        .get(program)?
        .get("datasets")?
        .get(dataset)?
        .get("runtimes")?;
    let mut xs: Vec<f64> = runs.as_array()?.iter().filter_map(|x| x.as_f64()).collect();
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let med = if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    };
    Some(med / 1000.0)
}

/// Today's date (UTC), as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn today_is_a_date() {
        let t = super::today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"));
    }
}
