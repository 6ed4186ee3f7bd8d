//! `funmem fuzz`: a campaign of random programs through lowering and
//! passes (funmem_oracle::campaign), with a progress bar and a summary.

use funmem_oracle::campaign::{self, Config, Progress, Summary};
use funmem_oracle::GenConfig;
use funmem_semantics::error::Limits;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The command line of `funmem fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// FUNMEM passes after lowering, comma-separated (`none` for none).
    #[arg(long, default_value = "simplify")]
    passes: String,
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
    /// Share of programs that may go wrong at run time (0 to 1).
    #[arg(long, default_value_t = GenConfig::default().fail_share)]
    fail_share: f64,
}

/// Default campaign size when neither --count nor --time is given.
const DEFAULT_COUNT: u64 = 1000;

fn bad(msg: String) -> ExitCode {
    eprintln!("funmem fuzz: {msg}");
    ExitCode::from(2)
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let err = || format!("--shard takes i/n with 0 <= i < n (e.g. 3/16), not `{s}`");
    let (i, n) = s.split_once('/').ok_or_else(err)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| err())?,
        n.trim().parse().map_err(|_| err())?,
    );
    if n == 0 || i >= n {
        return Err(err());
    }
    Ok((i, n))
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
    if !a.merge.is_empty() {
        let dirs: Vec<PathBuf> = a.merge.iter().map(PathBuf::from).collect();
        let s = campaign::merge(&dirs).map_err(|e| bad(e.to_string()))?;
        if let Some(out) = &a.out {
            let json = serde_json::to_string_pretty(&s).map_err(|e| bad(e.to_string()))?;
            std::fs::create_dir_all(out).map_err(|e| bad(format!("{out}: {e}")))?;
            std::fs::write(PathBuf::from(out).join("summary-merged.json"), json)
                .map_err(|e| bad(format!("{out}: {e}")))?;
        }
        return Ok(report(&s, a.json));
    }
    let passes = funmem_transforms::pass::parse_list(&a.passes).map_err(bad)?;
    let shard = parse_shard(&a.shard).map_err(bad)?;
    let gen = GenConfig {
        max_stms: a.max_stms,
        max_depth: a.max_depth,
        max_size: a.max_size,
        fail_share: a.fail_share,
    };
    if !(0.0..=1.0).contains(&gen.fail_share) {
        return Err(bad("--fail-share must lie in 0..1".into()));
    }
    if let Some(t) = a.time {
        if !(t.is_finite() && t >= 0.0) {
            return Err(bad("--time takes a number of seconds".into()));
        }
    }
    let count = match (a.count, a.time) {
        (None, None) => Some(DEFAULT_COUNT),
        (c, _) => c,
    };
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cfg = Config {
        seed: a.seed,
        count,
        time: a.time.map(Duration::from_secs_f64),
        shard,
        passes,
        gen,
        out: a.out.map(PathBuf::from),
        threads,
        reduce_tries: 2000,
        limits: Limits {
            fuel: 10_000_000,
            max_heap: 1 << 24,
        },
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
    Ok(report(&s, a.json))
}

fn report(s: &Summary, json: bool) -> ExitCode {
    if json {
        match serde_json::to_string_pretty(s) {
            Ok(j) => println!("{j}"),
            Err(e) => eprintln!("funmem fuzz: {e}"),
        }
    } else {
        println!(
            "seed {}, shard{} {}, passes {}: {} programs in {:.1} s ({:.0} programs/s); {} went wrong alike at every stage; {} failure{}",
            s.seed,
            if s.shards.len() == 1 { "" } else { "s" },
            s.shards.join(" "),
            if s.passes.is_empty() { "none" } else { &s.passes },
            s.programs,
            s.seconds,
            s.programs_per_second,
            s.went_wrong,
            s.failures.len(),
            if s.failures.len() == 1 { "" } else { "s" }
        );
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
        }
    }
    if s.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
