//! `funmem fuzz`: a campaign of random programs through lowering and
//! passes (funmem_oracle::campaign), with a progress bar and a summary.

use funmem_oracle::baseline;
use funmem_oracle::campaign::{self, Config, Progress, Source, Summary};
use funmem_oracle::{Constructs, GenConfig};
use funmem_semantics::error::Limits;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The command line of `funmem fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// FUNMEM passes after lowering, comma-separated (`none` for none).
    /// Default: simplify (with --opencl: simplify,migrate,coalesce,reuse,expand-gpu).
    #[arg(long)]
    passes: Option<String>,
    /// Programs in the whole campaign (all shards); default 1000 unless --time is given.
    #[arg(long, conflicts_with = "time")]
    count: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long)]
    time: Option<f64>,
    /// The campaign's seed: the same seed gives the same programs on any machine.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Run only shard i of n (programs k with k % n == i), e.g. 3/16.
    #[arg(long, default_value = "0/1")]
    shard: String,
    /// Save each reduced failure (program, input, command) and the JSON summary here.
    #[arg(long)]
    out: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Instead of fuzzing, combine the summaries and failures of these --out folders.
    #[arg(long, num_args = 1.., conflicts_with_all = ["count", "time"])]
    merge: Vec<String>,
    /// Worker threads (default: the machine's parallelism).
    #[arg(long)]
    threads: Option<usize>,
    /// Most statements in one body of a generated program.
    #[arg(long, default_value_t = GenConfig::default().max_stms)]
    max_stms: usize,
    /// Most nesting of kernels and ifs.
    #[arg(long, default_value_t = GenConfig::default().max_depth)]
    max_depth: usize,
    /// Largest array size in inputs.
    #[arg(long, default_value_t = GenConfig::default().max_size)]
    max_size: i64,
    /// Which generator makes the programs: FUN programs (lowered by the
    /// pipeline), FUNMEM programs written directly (shared blocks and odd
    /// layouts, as later passes make them; one in four with exactly one
    /// data race, whose report is compared with a brute-force reference's),
    /// or both in turn (the default: every check then has programs to
    /// judge).
    #[arg(long, value_enum, default_value_t = SourceArg::Mixed)]
    source: SourceArg,
    /// Most seconds the reducer spends on one failure (0: save failures
    /// unreduced). Failures alike (same stage, kind and message up to
    /// numbers) are reduced once.
    #[arg(long, default_value_t = campaign::DEFAULT_REDUCE_TIME.as_secs_f64())]
    reduce_time: f64,
    /// Share of programs that may go wrong at run time (0 to 1).
    #[arg(long, default_value_t = GenConfig::default().fail_share)]
    fail_share: f64,
    /// Share (0 to 1) of FUN programs containing each construct at least
    /// once: `loop=0.3,update=0.3,concat=0.2,replicate=0.2,multi-kernel=0.2,
    /// types=0.3,reduce=0.2,scan=0.2,index-row=0.2,root=0.5,host=0` (the
    /// defaults; `types`: bool/i32/f32/f64 values, conversions and float
    /// functions; `index-row`: partial indexing; `root`: coalescing's root
    /// statements, fresh arrays copied, concatenated, written into another
    /// array or returned from kernels; `host`: host-side scalar work for
    /// migration, a read outside kernels and its uses; names left out keep
    /// theirs; `all=S` sets every one, `none` turns all off).
    #[arg(long)]
    constructs: Option<String>,
    /// Generate FUN programs without loops, in-place updates, concat,
    /// replicate, multi-result kernels, other element types than i64,
    /// reduce, scan and partial indexing (as `--constructs none`).
    #[arg(long, conflicts_with = "constructs")]
    no_new_constructs: bool,
    /// Instead of the pipeline's checks: run every program's IMP (after
    /// --passes, default simplify,migrate,coalesce,reuse,expand-gpu here) on this OpenCL device
    /// and compare with the IMP interpreter.
    #[arg(long, conflicts_with_all = ["merge", "time"])]
    opencl: Option<String>,
    /// Compare the shares of what the passes did (allocations expanded,
    /// copies removed, obligations proved, ...) with this saved summary
    /// (an --out folder's summary-*.json, or --json's output); exit 1 when
    /// one dropped.
    #[arg(long, conflicts_with = "opencl")]
    baseline: Option<String>,
    /// How much (absolute, 0 to 1) a share may drop below the baseline's
    /// before it is a failure; the drop must also exceed sampling noise.
    #[arg(long, default_value_t = funmem_oracle::baseline::DEFAULT_TOLERANCE, requires = "baseline")]
    baseline_tolerance: f64,
}

/// `--source`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum SourceArg {
    /// FUN programs, lowered by the pipeline.
    Fun,
    /// FUNMEM programs written directly (one in four with one data race).
    Funmem,
    /// Both in turn: even programs FUN, odd ones FUNMEM.
    Mixed,
}

impl From<SourceArg> for Source {
    fn from(s: SourceArg) -> Source {
        match s {
            SourceArg::Fun => Source::Fun,
            SourceArg::Funmem => Source::Funmem,
            SourceArg::Mixed => Source::Mixed,
        }
    }
}

/// Default campaign size when neither --count nor --time is given.
const DEFAULT_COUNT: u64 = 1000;

fn bad(msg: String) -> ExitCode {
    eprintln!("funmem fuzz: {msg}");
    ExitCode::from(2)
}

/// The construct shares of `--constructs` / `--no-new-constructs`.
fn constructs(a: &Args) -> Result<Constructs, ExitCode> {
    if a.no_new_constructs {
        return Ok(Constructs::NONE);
    }
    match &a.constructs {
        None => Ok(Constructs::default()),
        Some(t) => Constructs::default()
            .parse(t)
            .map_err(|e| bad(format!("--constructs: {e}"))),
    }
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    campaign::parse_shard(s)
        .ok_or_else(|| format!("--shard takes i/n with 0 <= i < n (e.g. 3/16), not `{s}`"))
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn tick(&self, programs: u64, failures: u64) {
        self.0.set_position(programs);
        if programs.is_multiple_of(16) || failures > 0 {
            self.0.set_message(format!("{failures} failures"));
        }
    }
}

/// Runs `funmem fuzz`; exit 1 when a failure was found.
pub fn fuzz(a: Args) -> Result<ExitCode, ExitCode> {
    if !(0.0..=1.0).contains(&a.baseline_tolerance) {
        return Err(bad("--baseline-tolerance must lie in 0..1".into()));
    }
    // A baseline that cannot be read fails now, not after the campaign.
    let baseline = match &a.baseline {
        Some(f) => Some(baseline::load(Path::new(f)).map_err(|e| bad(format!("--baseline {e}")))?),
        None => None,
    };
    let compare = |s: &Summary| -> Result<ExitCode, ExitCode> {
        let Some(b) = &baseline else {
            return Ok(ExitCode::SUCCESS);
        };
        let drops = baseline::compare_with_baseline(s, b, a.baseline_tolerance).map_err(|e| {
            bad(format!(
                "--baseline {}: {e}",
                a.baseline.as_deref().unwrap_or("")
            ))
        })?;
        for d in &drops {
            let line = format!(
                "DROP {d} (baseline {})",
                a.baseline.as_deref().unwrap_or("")
            );
            if a.json {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
        Ok(if drops.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        })
    };
    if !a.merge.is_empty() {
        let dirs: Vec<PathBuf> = a.merge.iter().map(PathBuf::from).collect();
        let s = campaign::merge(&dirs).map_err(|e| bad(e.to_string()))?;
        if let Some(out) = &a.out {
            let json = serde_json::to_string_pretty(&s).map_err(|e| bad(e.to_string()))?;
            std::fs::create_dir_all(out).map_err(|e| bad(format!("{out}: {e}")))?;
            std::fs::write(PathBuf::from(out).join("summary-merged.json"), json)
                .map_err(|e| bad(format!("{out}: {e}")))?;
        }
        return finish(report(&s, a.json), compare(&s));
    }
    let shard = parse_shard(&a.shard).map_err(bad)?;
    // A folder that cannot be made fails now, not after the campaign.
    if let Some(out) = &a.out {
        campaign::create_out(Path::new(out)).map_err(|e| bad(e.to_string()))?;
    }
    if let Some(dev) = &a.opencl {
        return fuzz_opencl(&a, dev, shard);
    }
    let passes = funmem_transforms::pass::parse_list(a.passes.as_deref().unwrap_or("simplify"))
        .map_err(bad)?;
    let gen = GenConfig {
        max_stms: a.max_stms,
        max_depth: a.max_depth,
        max_size: a.max_size,
        fail_share: a.fail_share,
        constructs: constructs(&a)?,
    };
    if !(0.0..=1.0).contains(&gen.fail_share) {
        return Err(bad("--fail-share must lie in 0..1".into()));
    }
    for (opt, t) in [("--time", a.time), ("--reduce-time", Some(a.reduce_time))] {
        if t.is_some_and(|t| !(t.is_finite() && (0.0..=1e9).contains(&t))) {
            return Err(bad(format!("{opt} takes a number of seconds")));
        }
    }
    let count = match (a.count, a.time) {
        (None, None) => Some(DEFAULT_COUNT),
        (c, _) => c,
    };
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if let Some(b) = &baseline {
        let names: Vec<&str> = passes.iter().map(|p| p.name).collect();
        baseline::comparable(b, &names.join(","), a.source.into()).map_err(|e| {
            bad(format!(
                "--baseline {}: {e}",
                a.baseline.as_deref().unwrap_or("")
            ))
        })?;
    }
    let cfg = Config {
        count,
        time: a.time.map(Duration::from_secs_f64),
        shard,
        gen,
        out: a.out.map(PathBuf::from),
        threads,
        source: a.source.into(),
        reduce_time: Some(Duration::from_secs_f64(a.reduce_time)),
        reduce_tries: if a.reduce_time > 0.0 { 2000 } else { 0 },
        ..Config::new(a.seed, passes)
    };
    let bar = match count {
        Some(n) => ProgressBar::new(n.saturating_sub(shard.0).div_ceil(shard.1)),
        None => ProgressBar::no_length(),
    };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} {bar:30} {pos} programs ({per_sec}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    if a.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    // A panic is a failure the checks record; keep the default hook quiet.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = campaign::run(&cfg, &Bar(bar.clone()));
    std::panic::set_hook(hook);
    bar.finish_and_clear();
    let s = r.map_err(|e| bad(e.to_string()))?;
    finish(report(&s, a.json), compare(&s))
}

/// The exit code of a campaign and of its comparison with the baseline:
/// bad input (2) first, then any failure (1).
fn finish(report: ExitCode, compared: Result<ExitCode, ExitCode>) -> Result<ExitCode, ExitCode> {
    let compared = compared?;
    Ok(if report == ExitCode::SUCCESS {
        compared
    } else {
        report
    })
}

fn report(s: &Summary, json: bool) -> ExitCode {
    if json {
        match serde_json::to_string_pretty(s) {
            Ok(j) => println!("{j}"),
            Err(e) => eprintln!("funmem fuzz: {e}"),
        }
    } else {
        println!(
            "seed {}, shard{} {}, {} programs, passes {}: {} programs in {:.1} s ({:.0} programs/s); {} went wrong alike at every stage; {} inconclusive (a resource limit); {} failure{}{}",
            s.seed,
            if s.shards.len() == 1 { "" } else { "s" },
            s.shards.join(" "),
            s.source.name().to_uppercase(),
            if s.passes.is_empty() { "none" } else { &s.passes },
            s.programs,
            s.seconds,
            s.programs_per_second,
            s.went_wrong,
            s.inconclusive,
            s.failures.len(),
            if s.failures.len() == 1 { "" } else { "s" },
            match s.failures.iter().map(|f| f.duplicates.len()).sum::<usize>() {
                0 => String::new(),
                d => format!(" (and {d} more programs failing alike)"),
            }
        );
        println!("{}", s.constructs.line(s.programs));
        for line in share_lines(&s.tally) {
            println!("{line}");
        }
        for f in &s.failures {
            println!(
                "FAIL program {}: {} at stage `{}` (reduced from {} to {} statements)",
                f.index,
                f.kind.name(),
                f.stage,
                f.statements,
                f.reduced_statements
            );
            println!("  {}", f.message.lines().next().unwrap_or(""));
            println!("  reproduce: {}", f.command);
            if !f.duplicates.is_empty() {
                let shown: Vec<String> = f.duplicates.iter().take(8).map(u64::to_string).collect();
                println!(
                    "  alike (not reduced): program{} {}{}",
                    if f.duplicates.len() == 1 { "" } else { "s" },
                    shown.join(", "),
                    if f.duplicates.len() > 8 { ", ..." } else { "" }
                );
            }
        }
    }
    if s.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What the passes did, one line per share (`expand-gpu: 412 of 530
/// kernel allocations expanded (77.7%)`), then the obligations by kind and
/// outcome on one line (`obligations: in-bounds 300 proved, 2 unknown;
/// ...`).
fn share_lines(t: &funmem_oracle::check::Tally) -> Vec<String> {
    let mut out: Vec<String> = baseline::shares(t)
        .iter()
        .filter(|s| s.whole > 0 && !s.name.starts_with("obligations: "))
        .map(ToString::to_string)
        .collect();
    let kinds: Vec<String> = baseline::obligations(t)
        .iter()
        .map(|(kind, counts)| {
            let parts: Vec<String> = counts
                .iter()
                .zip(baseline::OUTCOMES)
                .filter(|(n, _)| **n > 0)
                .map(|(n, o)| format!("{n} {o}"))
                .collect();
            format!("{kind} {}", parts.join(", "))
        })
        .collect();
    if !kinds.is_empty() {
        out.push(format!("obligations: {}", kinds.join("; ")));
    }
    out
}

/// Programs in one OpenCL build (PoCL spends about a second a build).
const OPENCL_BATCH: u64 = 100;

/// Most candidates tried when reducing an OpenCL disagreement (one OpenCL
/// build each).
const OPENCL_REDUCE_TRIES: usize = 300;

/// Most time spent reducing one OpenCL disagreement (PoCL builds take
/// about a second each); disagreements alike are reduced once.
const OPENCL_REDUCE_TIME: Duration = Duration::from_secs(60);

/// A generated case through `passes` to IMP, if the pipeline takes it.
fn lower_to_imp(
    case: &funmem_oracle::Case,
    passes: &[funmem_transforms::Pass],
    provers: &funmem_oracle::prove::Provers,
) -> Option<funmem_lang::imp::Program> {
    use funmem_lang::parse::AnyProgram;
    let st = funmem_transforms::pipeline::stages(
        &AnyProgram::Fun(case.program.clone()),
        passes,
        true,
        provers,
    )
    .ok()?;
    match st.into_iter().last()?.program {
        AnyProgram::Imp(q) => Some(q),
        AnyProgram::Fun(_) => None,
    }
}

/// Whether `case` still makes the device disagree with the IMP
/// interpreter. `tamper` changes the generated code before it is built (the
/// identity, except in tests that plant a fault).
fn disagrees(
    case: &funmem_oracle::Case,
    passes: &[funmem_transforms::Pass],
    dev: &funmem_gpu::DeviceInfo,
    limits: Limits,
    tamper: &dyn Fn(&mut funmem_gpu::Compiled),
) -> bool {
    let provers = funmem_oracle::prove::Provers::default();
    let Some(imp) = lower_to_imp(case, passes, &provers) else {
        return false;
    };
    let Ok(mut compiled) = funmem_gpu::compile(&imp) else {
        return false;
    };
    tamper(&mut compiled);
    let Ok(mut rt) = funmem_gpu::Runtime::new(dev, &compiled) else {
        return false;
    };
    funmem_gpu::agree::check_one(&mut rt, &imp, &case.inputs, limits).is_failure()
}

/// Shrinks a case on which the device disagrees with the interpreter.
fn reduce_opencl(
    case: &funmem_oracle::Case,
    passes: &[funmem_transforms::Pass],
    dev: &funmem_gpu::DeviceInfo,
    limits: Limits,
    tries: usize,
    tamper: &dyn Fn(&mut funmem_gpu::Compiled),
) -> funmem_oracle::Case {
    let mut still = |c: &funmem_oracle::Case| disagrees(c, passes, dev, limits, tamper);
    let deadline = std::time::Instant::now() + OPENCL_REDUCE_TIME;
    funmem_oracle::reduce::reduce_until(case, &mut still, tries, Some(deadline))
}

/// `funmem fuzz --opencl DEVICE`: generated programs (both generators, in
/// turn) through the passes to IMP, each run by the IMP interpreter and on
/// the device; disagreements are reduced, listed and saved.
fn fuzz_opencl(a: &Args, device: &str, shard: (u64, u64)) -> Result<ExitCode, ExitCode> {
    use funmem_gpu::agree::{check_batch, Agreement};
    let passes_text = a.passes.as_deref().unwrap_or(crate::gpu_cmd::GPU_PASSES);
    let passes = funmem_transforms::pass::parse_list(passes_text).map_err(bad)?;
    let gen = GenConfig {
        max_stms: a.max_stms,
        max_depth: a.max_depth,
        max_size: a.max_size,
        fail_share: a.fail_share.clamp(0.0, 1.0),
        constructs: constructs(a)?,
    };
    let dev = crate::gpu_cmd::device(Some(device))?;
    let count = a.count.unwrap_or(DEFAULT_COUNT);
    let limits = Limits {
        fuel: 10_000_000,
        max_heap: 1 << 24,
    };
    let provers = funmem_oracle::prove::Provers::default();
    let ks: Vec<u64> = (shard.0..count).step_by(shard.1 as usize).collect();
    let identity = |_: &mut funmem_gpu::Compiled| {};
    let bar = ProgressBar::new(ks.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} {bar:30} {pos} programs ({per_sec}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let start = std::time::Instant::now();
    let mut tally = [0u64; 6]; // results, both wrong, race, limit, refused, not lowered
                               // (program, reduced case, why, signature, programs alike)
    type Found = (u64, funmem_oracle::Case, String, String, Vec<u64>);
    let mut failures: Vec<Found> = Vec::new();
    for chunk in ks.chunks(OPENCL_BATCH as usize) {
        let mut lowered = Vec::new();
        let mut sources = Vec::new();
        for &k in chunk {
            let case = if k % 2 == 0 {
                campaign::case_for(a.seed, k, &gen)
            } else {
                funmem_oracle::gen_mem::gen_funmem(&mut campaign::rng_for(a.seed, k), &gen)
            };
            match lower_to_imp(&case, &passes, &provers) {
                Some(q) => {
                    lowered.push((q, case.inputs.clone()));
                    sources.push((k, case));
                }
                // The pipeline's own checks are `funmem fuzz` without --opencl.
                None => tally[5] += 1,
            }
        }
        let verdicts = check_batch(&dev, &lowered, limits).map_err(|e| {
            eprintln!("funmem fuzz: {e}");
            ExitCode::from(2)
        })?;
        for ((k, case), v) in sources.into_iter().zip(verdicts) {
            match v {
                Agreement::Results | Agreement::Close => tally[0] += 1,
                Agreement::BothWrong => tally[1] += 1,
                Agreement::Race => tally[2] += 1,
                Agreement::Limit => tally[3] += 1,
                Agreement::Refused(_) => tally[4] += 1,
                Agreement::Disagree(why) => {
                    let sig =
                        funmem_oracle::check::numbers_as_hash(why.lines().next().unwrap_or(""));
                    if let Some(f) = failures.iter_mut().find(|f| f.3 == sig) {
                        f.4.push(k);
                        continue;
                    }
                    bar.set_message(format!("reducing program {k}"));
                    let small =
                        reduce_opencl(&case, &passes, &dev, limits, OPENCL_REDUCE_TRIES, &identity);
                    failures.push((k, small, why, sig, Vec::new()));
                }
            }
        }
        bar.inc(chunk.len() as u64);
        bar.set_message(format!("{} disagreements", failures.len()));
    }
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "seed {}, shard {}/{}, passes {passes_text}, OpenCL on {}: {} programs in {secs:.1} s; \
         {} agreed on results, {} went wrong on both, {} racy (not compared), {} over limits, \
         {} refused (allocation in a kernel), {} not lowered; {} disagreement{}",
        a.seed,
        shard.0,
        shard.1,
        dev.label(),
        ks.len(),
        tally[0],
        tally[1],
        tally[2],
        tally[3],
        tally[4],
        tally[5],
        failures.len(),
        if failures.len() == 1 { "" } else { "s" }
    );
    for (k, case, why, _, alike) in &failures {
        println!("FAIL program {k}: {why}");
        if !alike.is_empty() {
            let shown: Vec<String> = alike.iter().take(8).map(u64::to_string).collect();
            println!(
                "  alike (not reduced): {}{}",
                shown.join(", "),
                if alike.len() > 8 { ", ..." } else { "" }
            );
        }
        if let Some(out) = &a.out {
            let dir = PathBuf::from(out);
            std::fs::create_dir_all(&dir).map_err(|e| bad(format!("{out}: {e}")))?;
            let ext = match case.program.lang {
                funmem_lang::ast::Lang::Fun => "fun",
                funmem_lang::ast::Lang::FunMem => "funmem",
            };
            let prog = dir.join(format!("opencl-{}-{k}.{ext}", a.seed));
            let input = dir.join(format!("opencl-{}-{k}.in", a.seed));
            let text: Vec<String> = case.inputs.iter().map(ToString::to_string).collect();
            std::fs::write(&prog, case.program.to_string())
                .and_then(|()| std::fs::write(&input, text.join(" ")))
                .map_err(|e| bad(format!("{out}: {e}")))?;
            println!(
                "  reproduce: funmem run {} --semantics opencl --device {device} --input {}",
                prog.display(),
                input.display()
            );
        }
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;
    use funmem_lang::parse::parse_program;
    use funmem_semantics::value::{ArrayValue, Value};

    /// A planted fault in the generated code (`%` computed as `/`) is a
    /// disagreement, and the reducer shrinks the program around it.
    #[test]
    fn opencl_disagreements_are_reduced() {
        if std::env::var_os("FUNMEM_SKIP_OPENCL").is_some() {
            return;
        }
        crate::gpu_cmd::default_pocl_cache();
        let dev = funmem_gpu::select(Some("pocl")).expect("PoCL (scripts/install-deps)");
        let program = parse_program(
            "def main (n: int) (xs: [n]int) =
               let (a: int) = n + 1
               let (b: int) = a * 2
               let (ys: [n]int) = kernel i < n do
                   let (x: int) = xs[i]
                   let (y: int) = x % 3
                   let (z: int) = y + b
                   in (z)
               let (c: int) = b - a
               in (ys, c)",
            Lang::Fun,
        )
        .unwrap();
        let case = funmem_oracle::Case {
            program,
            inputs: vec![
                Value::Scalar(funmem_lang::prim::Const::I64(2)),
                Value::Array(ArrayValue {
                    shape: vec![2],
                    data: funmem_semantics::value::Elems::I64(vec![7, 8]),
                }),
            ],
        };
        let passes = funmem_transforms::pass::parse_list("simplify,expand-gpu").unwrap();
        let limits = Limits::default();
        let plant = |c: &mut funmem_gpu::Compiled| {
            c.source = c.source.replace("= fm_rem(", "= fm_div(");
        };
        assert!(!disagrees(&case, &passes, &dev, limits, &|_| {}));
        assert!(disagrees(&case, &passes, &dev, limits, &plant));
        let small = reduce_opencl(&case, &passes, &dev, limits, 40, &plant);
        eprintln!("reduced to:\n{}", small.program);
        assert!(disagrees(&small, &passes, &dev, limits, &plant));
        let size = funmem_oracle::reduce::size;
        assert!(
            size(&small.program) < size(&case.program),
            "not reduced:\n{}",
            small.program
        );
    }
}
