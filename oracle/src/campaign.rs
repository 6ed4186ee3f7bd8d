//! Fuzz campaigns: numbered random programs through a pipeline, every
//! failure reduced and saved, a summary at the end.
//!
//! Program `k` of a campaign with seed `s` is generated from its own RNG,
//! seeded from `(s, k)` alone, so a campaign is the same on any machine and
//! splits into shards without overlap: shard `i/n` takes the programs `k`
//! with `k % n == i`. A summary also counts how often the programs contain
//! each of the constructs of [`CONSTRUCTS`] (loops, updates, ...), so that
//! a campaign says what it exercised.

pub use crate::baseline::{compare_with_baseline, Drop};
use crate::check::{check_case_with, Checks, Failure, FailureKind, Passed, Tally};
use crate::{gen::gen_fun, Case, GenConfig, Rng};
use funmem_lang::ast::{BinOp, Body, ExpKind, LoopForm, Pat, Program, RedOp, SExp, Type, UnOp};
use funmem_lang::prim::Prim;
use funmem_lang::Name;
use funmem_semantics::error::Limits;
use funmem_transforms::Pass;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which generator makes a campaign's programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// FUN programs (`gen`), lowered by the pipeline.
    Fun,
    /// FUNMEM programs written directly (`gen_mem`): shared blocks and
    /// layouts that lowering never makes; one in four has exactly one race
    /// (`gen_race`, see [`draws_race`]).
    Funmem,
    /// Both in turn: even programs FUN, odd ones FUNMEM.
    Mixed,
}

impl Source {
    /// Its name on the command line and in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Source::Fun => "fun",
            Source::Funmem => "funmem",
            Source::Mixed => "mixed",
        }
    }
}

fn default_source() -> Source {
    Source::Fun
}

/// The reducer's time per failure unless told otherwise.
pub const DEFAULT_REDUCE_TIME: Duration = Duration::from_secs(20);

/// A campaign's reductions together take at most this many times the time
/// per failure; the failures left when it is spent are saved unreduced.
pub const REDUCE_TOTAL_FACTOR: u32 = 15;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The campaign's seed.
    pub seed: u64,
    /// Stop after this many programs (of the whole campaign, all shards).
    pub count: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
    /// This process's shard: `(i, n)`, 0 <= i < n.
    pub shard: (u64, u64),
    /// The passes after lowering.
    pub passes: Vec<Pass>,
    /// The generator's knobs.
    pub gen: GenConfig,
    /// Where to save failures and the summary.
    pub out: Option<PathBuf>,
    /// Worker threads.
    pub threads: usize,
    /// Most checks the reducer may run per failure.
    pub reduce_tries: usize,
    /// Most time the reducer may spend on one failure (`None`: no bound).
    pub reduce_time: Option<Duration>,
    /// Limits of each run.
    pub limits: Limits,
    /// Which generator makes the programs.
    pub source: Source,
    /// Which checks beyond the stages' own.
    pub checks: Checks,
    /// Called once on each worker thread before it checks a program, and on
    /// the thread that reduces the failures (tests switch a planted fault
    /// on with it; a no-op otherwise).
    pub on_worker: fn(),
}

impl Config {
    /// A campaign of `seed` with the defaults of `funmem fuzz`: FUN
    /// programs, every check, simplify, all of this machine's threads.
    pub fn new(seed: u64, passes: Vec<Pass>) -> Config {
        Config {
            seed,
            count: None,
            time: None,
            shard: (0, 1),
            passes,
            gen: GenConfig::default(),
            out: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            reduce_tries: 2000,
            reduce_time: Some(DEFAULT_REDUCE_TIME),
            limits: Limits {
                fuel: 10_000_000,
                max_heap: 1 << 24,
            },
            source: Source::Fun,
            checks: Checks::ALL,
            on_worker: || {},
        }
    }
}

/// One saved failure.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailureRecord {
    /// The program's number in the campaign.
    pub index: u64,
    /// The stage that failed.
    pub stage: String,
    /// What kind of failure.
    pub kind: FailureKind,
    /// The failure as the check reported it on the reduced program.
    pub message: String,
    /// Statements before and after reduction.
    pub statements: usize,
    /// Statements of the reduced program.
    pub reduced_statements: usize,
    /// The saved program, relative to the output folder (when saved).
    pub file: Option<String>,
    /// A command that reproduces it.
    pub command: String,
    /// Other programs of the campaign that failed the same way (the same
    /// [`Failure::signature`]); they were neither reduced nor saved.
    #[serde(default)]
    pub duplicates: Vec<u64>,
}

/// A campaign's summary (also its JSON form).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    /// The seed.
    pub seed: u64,
    /// The shards covered, as `i/n` strings.
    pub shards: Vec<String>,
    /// The passes, comma-separated.
    pub passes: String,
    /// The generator (`fun`, `funmem`, `mixed`).
    #[serde(default = "default_source")]
    pub source: Source,
    /// Programs checked.
    pub programs: u64,
    /// Of those, programs that went wrong at run time at every stage alike.
    pub went_wrong: u64,
    /// Of those, programs where a stage (or the source) exceeded a resource
    /// limit and nothing else failed: inconclusive, neither failures nor
    /// passes, never reduced.
    #[serde(default)]
    pub inconclusive: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Programs per second.
    pub programs_per_second: f64,
    /// What the passes did, added up over the programs that passed.
    #[serde(default)]
    pub tally: Tally,
    /// How often the generated programs contain each construct of
    /// [`CONSTRUCTS`] (every program, passed or not).
    #[serde(default)]
    pub constructs: ConstructStats,
    /// The failures.
    pub failures: Vec<FailureRecord>,
}

/// The constructs a summary counts: loops (`for` and `while` ones apart),
/// in-place updates, `concat`, `replicate` and kernels with several
/// results (issue 18); bindings and parameters of other element types
/// than `i64`, conversions, `reduce`, `scan`, lambdas and partial indexing
/// (issue 19); and coalescing's candidates, root statements whose source
/// is fresh and used last there ([`crate::roots::root_statements`]).
pub const CONSTRUCTS: [&str; 17] = [
    "loop",
    "for",
    "while",
    "update",
    "concat",
    "replicate",
    "multi-result kernel",
    "non-i64 type",
    "conversion",
    "reduce",
    "scan",
    "lambda",
    "row index",
    "copy root",
    "concat root",
    "update root",
    "kernel root",
];

/// How often each of [`CONSTRUCTS`] occurs in a campaign's programs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstructStats {
    /// Per construct (in the order of [`CONSTRUCTS`]): programs that
    /// contain it (a summary saved before some were counted has fewer).
    pub programs: Vec<u64>,
    /// Per construct: occurrences, nested ones included.
    pub occurrences: Vec<u64>,
}

impl ConstructStats {
    /// Counts one program.
    pub fn add_program(&mut self, p: &Program) {
        let mut n = [0u64; CONSTRUCTS.len()];
        let mut ranks: HashMap<&Name, usize> = HashMap::new();
        for q in &p.params {
            note_pat(q, &mut ranks, &mut n);
        }
        count_constructs(&p.body, &mut ranks, &mut n);
        let roots = crate::roots::root_statements(p);
        n[13] = roots.copy;
        n[14] = roots.concat;
        n[15] = roots.update;
        n[16] = roots.kernel;
        self.programs.resize(CONSTRUCTS.len(), 0);
        self.occurrences.resize(CONSTRUCTS.len(), 0);
        for ((p, o), n) in self.programs.iter_mut().zip(&mut self.occurrences).zip(n) {
            *p += u64::from(n > 0);
            *o += n;
        }
    }

    /// Adds another campaign's counts.
    pub fn merge(&mut self, o: &ConstructStats) {
        let len = CONSTRUCTS
            .len()
            .max(o.programs.len())
            .max(o.occurrences.len());
        self.programs.resize(len, 0);
        self.occurrences.resize(len, 0);
        for (p, q) in self.programs.iter_mut().zip(&o.programs) {
            *p = p.saturating_add(*q);
        }
        for (p, q) in self.occurrences.iter_mut().zip(&o.occurrences) {
            *p = p.saturating_add(*q);
        }
    }

    /// One line: `constructs: loop in 812 programs (1302 times), ...`.
    pub fn line(&self, programs: u64) -> String {
        let items: Vec<String> = CONSTRUCTS
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let having = self.programs.get(k).copied().unwrap_or(0);
                let times = self.occurrences.get(k).copied().unwrap_or(0);
                let pct = if programs > 0 {
                    100.0 * having as f64 / programs as f64
                } else {
                    0.0
                };
                format!("{name} in {having} programs ({pct:.1}%, {times} times)")
            })
            .collect();
        format!("constructs: {}", items.join(", "))
    }
}

/// Notes a binding: its rank (for partial indexing) and whether its
/// element type is another than `i64`.
fn note_pat<'a>(q: &'a Pat, ranks: &mut HashMap<&'a Name, usize>, n: &mut [u64]) {
    let (rank, elem) = match &q.ty {
        Type::Prim(t, _) => (0, Some(*t)),
        Type::Array(a, _) => (a.shape.len(), Some(a.elem)),
        Type::Mem(_) => (0, None),
    };
    if elem.is_some_and(|t| t != Prim::I64) {
        n[7] += 1;
    }
    ranks.insert(&q.name.name, rank);
}

/// Adds the conversions in a scalar expression to `n`.
fn count_convs(e: &SExp, n: &mut [u64]) {
    match e {
        SExp::Atom(_) => {}
        SExp::Bin(_, l, r, _) => {
            count_convs(l, n);
            count_convs(r, n);
        }
        SExp::Un(op, a, _) => {
            // `i64(a < b)` or `i64(a > 0 && b > 0)`, a truth value as an
            // int, is no conversion of interest.
            let truth = matches!(
                (op, &**a),
                (
                    UnOp::Conv(Prim::I64),
                    SExp::Bin(
                        BinOp::Lt
                            | BinOp::Le
                            | BinOp::Gt
                            | BinOp::Ge
                            | BinOp::Eq
                            | BinOp::Ne
                            | BinOp::And
                            | BinOp::Or,
                        ..
                    )
                )
            );
            n[8] += u64::from(matches!(op, UnOp::Conv(_)) && !truth);
            count_convs(a, n);
        }
    }
}

/// Adds the occurrences of each of [`CONSTRUCTS`] in a body to `n`.
fn count_constructs<'a>(b: &'a Body, ranks: &mut HashMap<&'a Name, usize>, n: &mut [u64]) {
    for s in &b.stms {
        for q in &s.pats {
            note_pat(q, ranks, n);
        }
        match &s.exp.kind {
            ExpKind::Loop(params, _, form, body) => {
                n[0] += 1;
                match form {
                    LoopForm::For(..) => n[1] += 1,
                    LoopForm::While(_) => n[2] += 1,
                }
                for q in params {
                    note_pat(q, ranks, n);
                }
                count_constructs(body, ranks, n);
            }
            ExpKind::Update(..) => n[3] += 1,
            ExpKind::Concat(..) => n[4] += 1,
            ExpKind::Replicate(..) => n[5] += 1,
            ExpKind::Reduce(op, ..) | ExpKind::Scan(op, ..) => {
                n[if matches!(s.exp.kind, ExpKind::Reduce(..)) {
                    9
                } else {
                    10
                }] += 1;
                if let RedOp::Lambda(l) = op {
                    n[11] += 1;
                    for q in &l.params {
                        note_pat(q, ranks, n);
                    }
                    count_constructs(&l.body, ranks, n);
                }
            }
            ExpKind::Kernel(_, _, body) => {
                n[6] += u64::from(s.pats.len() > 1);
                count_constructs(body, ranks, n);
            }
            ExpKind::If(_, t, e) => {
                count_constructs(t, ranks, n);
                count_constructs(e, ranks, n);
            }
            ExpKind::Index(x, idx) => {
                n[12] += u64::from(ranks.get(&x.name).is_some_and(|&r| idx.len() < r));
            }
            ExpKind::Scalar(e) => count_convs(e, n),
            ExpKind::Alloc(..)
            | ExpKind::Slice(..)
            | ExpKind::Transpose(_)
            | ExpKind::Iota(_)
            | ExpKind::Copy(_) => {}
        }
    }
}

/// The RNG of program `k` of the campaign `seed` (splitmix64 of both).
pub fn rng_for(seed: u64, k: u64) -> Rng {
    let mut z = seed ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Rng::seed_from_u64(z ^ (z >> 31))
}

/// Program `k` of the campaign `seed` (FUN).
pub fn case_for(seed: u64, k: u64, gen: &GenConfig) -> Case {
    gen_fun(&mut rng_for(seed, k), gen)
}

/// Program `k` of the campaign `seed` from the generator `source`.
pub fn case_from(source: Source, seed: u64, k: u64, gen: &GenConfig) -> Case {
    if draws_race(source, k) {
        return crate::gen_race::gen_race(&mut rng_for(seed, k), gen).case;
    }
    match source {
        Source::Fun => case_for(seed, k, gen),
        Source::Funmem => funmem_case(seed, k, gen),
        Source::Mixed if k.is_multiple_of(2) => case_for(seed, k, gen),
        Source::Mixed => funmem_case(seed, k, gen),
    }
}

/// Whether program `k` of a campaign from `source` is a program with
/// exactly one race (`gen_race`), whose race report the checks compare
/// with the reference's: one FUNMEM program in 4 (programs 3, 7, 11, ...
/// of `funmem`; 7, 15, 23, ... of `mixed`).
pub fn draws_race(source: Source, k: u64) -> bool {
    match source {
        Source::Fun => false,
        Source::Funmem => k % 4 == 3,
        Source::Mixed => k % 8 == 7,
    }
}

/// Program `k` of the campaign `seed` from the FUNMEM generators (other
/// than the racing programs of [`draws_race`]): valid programs with shared
/// blocks and odd layouts, a share `fail_share` of them getting stuck
/// alike in both semantics (`gen_mem::gen_funmem_valid`: the source passes
/// every check, so a failure is a later stage's).
fn funmem_case(seed: u64, k: u64, gen: &GenConfig) -> Case {
    crate::gen_mem::gen_funmem_valid(&mut rng_for(seed, k), gen)
}

/// Checks a case as the campaign `cfg` does.
pub fn check(case: &Case, cfg: &Config) -> Result<crate::check::Checked, Failure> {
    check_case_with(case, &cfg.passes, cfg.limits, cfg.checks)
}

/// Progress, reported after each program.
pub trait Progress: Sync {
    /// One more program checked; `failures` so far.
    fn tick(&self, programs: u64, failures: u64);
}

impl Progress for () {
    fn tick(&self, _: u64, _: u64) {}
}

/// Shrinks a failing case while it fails the same way.
pub fn reduce_failure(case: &Case, failure: &Failure, cfg: &Config) -> (Case, Failure) {
    reduce_failure_until(case, failure, cfg, None)
}

/// [`reduce_failure`] that stops at `deadline` too (besides the
/// configuration's time per failure).
fn reduce_failure_until(
    case: &Case,
    failure: &Failure,
    cfg: &Config,
    deadline: Option<Instant>,
) -> (Case, Failure) {
    let mut still = |c: &Case| matches!(check(c, cfg), Err(f) if f.same_as(failure));
    let own = cfg.reduce_time.map(|t| Instant::now() + t);
    let deadline = match (own, deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let reduced = crate::reduce::reduce_until(case, &mut still, cfg.reduce_tries, deadline);
    let f = match check(&reduced, cfg) {
        Err(f) if f.same_as(failure) => f,
        _ => return (case.clone(), failure.clone()),
    };
    (reduced, f)
}

/// Runs a campaign.
pub fn run(cfg: &Config, progress: &dyn Progress) -> std::io::Result<Summary> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;
    let start = Instant::now();
    let (shard, shards) = cfg.shard;
    let next = AtomicU64::new(0); // the j-th program of this shard
    let done = AtomicU64::new(0);
    let wrong = AtomicU64::new(0);
    let inconclusive = AtomicU64::new(0);
    let failures: Mutex<Vec<(u64, Case, Failure)>> = Mutex::new(Vec::new());
    let tally: Mutex<Tally> = Mutex::new(Tally::default());
    let constructs: Mutex<ConstructStats> = Mutex::new(ConstructStats::default());
    let in_shard = |j: u64| shard + j * shards;
    let more =
        |k: u64| cfg.count.is_none_or(|n| k < n) && cfg.time.is_none_or(|t| start.elapsed() < t);
    std::thread::scope(|s| {
        for _ in 0..cfg.threads.max(1) {
            s.spawn(|| {
                (cfg.on_worker)();
                // This worker's counts, added to the campaign's at the end.
                let mut mine = Tally::default();
                let mut seen = ConstructStats::default();
                loop {
                    let k = in_shard(next.fetch_add(1, Ordering::Relaxed));
                    if !more(k) {
                        break;
                    }
                    let case = case_from(cfg.source, cfg.seed, k, &cfg.gen);
                    seen.add_program(&case.program);
                    match check(&case, cfg) {
                        Ok(c) => {
                            mine.merge(&c.tally);
                            match c.passed {
                                Passed::WentWrong(_) => {
                                    wrong.fetch_add(1, Ordering::Relaxed);
                                }
                                Passed::Inconclusive(_) => {
                                    inconclusive.fetch_add(1, Ordering::Relaxed);
                                }
                                Passed::Results => {}
                            }
                        }
                        Err(f) => failures
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((k, case, f)),
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    let nf = failures.lock().map(|f| f.len()).unwrap_or(0) as u64;
                    progress.tick(n, nf);
                }
                tally.lock().unwrap_or_else(|e| e.into_inner()).merge(&mine);
                constructs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .merge(&seen);
            });
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    let tally = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort_by_key(|(k, _, _)| *k);
    let programs = done.into_inner();
    let passes: Vec<&str> = cfg.passes.iter().map(|p| p.name).collect();
    let passes = passes.join(",");
    if let Some(dir) = &cfg.out {
        create_out(dir)?;
    }
    // One failure of each signature is reduced and saved; the programs
    // that failed the same way are listed with it.
    let mut groups: Vec<(String, u64, Case, Failure, Vec<u64>)> = Vec::new();
    for (k, case, f) in failures {
        let sig = f.signature();
        match groups.iter_mut().find(|g| g.0 == sig) {
            Some(g) => g.4.push(k),
            None => groups.push((sig, k, case, f, Vec::new())),
        }
    }
    let all_by = cfg
        .reduce_time
        .map(|t| Instant::now() + t * REDUCE_TOTAL_FACTOR);
    // The reducer checks programs too: on a thread of its own, prepared by
    // `on_worker` as the workers are (a planted fault is thread-local).
    let reduced = std::thread::scope(|s| {
        s.spawn(|| {
            (cfg.on_worker)();
            groups
                .into_iter()
                .map(|(_, k, case, f, duplicates)| {
                    let (small, f2) = reduce_failure_until(&case, &f, cfg, all_by);
                    (k, case, small, f2, duplicates)
                })
                .collect::<Vec<_>>()
        })
        .join()
    })
    .unwrap_or_else(|e| std::panic::resume_unwind(e));
    let mut records = Vec::new();
    for (k, case, small, f2, duplicates) in reduced {
        let file = match &cfg.out {
            Some(dir) => Some(save(dir, cfg.seed, k, &small, &f2, &passes)?),
            None => None,
        };
        let command = match &file {
            Some(name) => reproduce_command(cfg.out.as_deref(), name, &passes),
            None => format!(
                "funmem fuzz --seed {} --count {} --shard {}/{} --source {} --passes {} --out DIR",
                cfg.seed,
                k + 1,
                k % shards,
                shards,
                cfg.source.name(),
                if passes.is_empty() { "none" } else { &passes }
            ),
        };
        records.push(FailureRecord {
            index: k,
            stage: f2.stage.clone(),
            kind: f2.kind,
            message: f2.message.clone(),
            statements: crate::reduce::size(&case.program),
            reduced_statements: crate::reduce::size(&small.program),
            file,
            command,
            duplicates,
        });
    }
    let summary = Summary {
        seed: cfg.seed,
        shards: vec![format!("{shard}/{shards}")],
        passes,
        source: cfg.source,
        programs,
        went_wrong: wrong.into_inner(),
        inconclusive: inconclusive.into_inner(),
        seconds,
        programs_per_second: if seconds > 0.0 {
            programs as f64 / seconds
        } else {
            0.0
        },
        tally,
        constructs: constructs.into_inner().unwrap_or_else(|e| e.into_inner()),
        failures: records,
    };
    if let Some(dir) = &cfg.out {
        let json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
        write(&dir.join(summary_file(shard, shards)), json)?;
    }
    Ok(summary)
}

/// The summary's file name in the output folder.
pub fn summary_file(shard: u64, shards: u64) -> String {
    format!("summary-{shard}-of-{shards}.json")
}

fn reproduce_command(dir: Option<&Path>, name: &str, passes: &str) -> String {
    let dir = dir.map_or(String::new(), |d| format!("{}/", d.display()));
    let stem = name
        .strip_suffix(".funmem")
        .or_else(|| name.strip_suffix(".fun"))
        .unwrap_or(name);
    let passes = if passes.is_empty() { "none" } else { passes };
    format!("funmem validate {dir}{name} --passes {passes} --input {dir}{stem}.in")
}

/// Saves a reduced failure: the program (with the failure in a comment),
/// its input, and the command that reproduces it. Returns the program's
/// file name.
fn save(
    dir: &Path,
    seed: u64,
    k: u64,
    case: &Case,
    f: &Failure,
    passes: &str,
) -> std::io::Result<String> {
    let stem = format!("fail-{seed}-{k}");
    let ext = match case.program.lang {
        funmem_lang::ast::Lang::Fun => "fun",
        funmem_lang::ast::Lang::FunMem => "funmem",
    };
    let name = format!("{stem}.{ext}");
    let mut text = String::new();
    for line in format!("{f}").lines() {
        text.push_str("-- ");
        text.push_str(line);
        text.push('\n');
    }
    let inputs: Vec<String> = case.inputs.iter().map(|v| v.to_string()).collect();
    text.push_str(&format!(
        "-- reproduce: {}\n",
        reproduce_command(Some(dir), &name, passes)
    ));
    text.push_str(&funmem_lang::print::program(&case.program));
    write(&dir.join(&name), text)?;
    write(&dir.join(format!("{stem}.in")), inputs.join(" ") + "\n")?;
    write(
        &dir.join(format!("{stem}.cmd")),
        reproduce_command(Some(dir), &name, passes) + "\n",
    )?;
    Ok(name)
}

/// An I/O error that names its path.
fn at(path: &Path) -> impl FnOnce(std::io::Error) -> std::io::Error + '_ {
    move |e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Writes a file; an error names it.
fn write(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    std::fs::write(path, text).map_err(at(path))
}

/// Creates the output folder `dir` (and its parents); an error names it.
pub fn create_out(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir).map_err(at(dir))
}

fn invalid(msg: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg)
}

/// A shard `i/n` (0 <= i < n), as `--shard` takes it and summaries list
/// it; `None` for anything else.
pub fn parse_shard(s: &str) -> Option<(u64, u64)> {
    let (i, n) = s.split_once('/')?;
    let (i, n): (u64, u64) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (i < n).then_some((i, n))
}

/// The shard numbers of a summary's `i/n` strings, and their common n.
fn shard_set(shards: &[String], path: &Path) -> std::io::Result<(Vec<u64>, u64)> {
    let mut out = Vec::new();
    let mut of = None;
    for sh in shards {
        let Some((i, n)) = parse_shard(sh) else {
            return Err(invalid(format!(
                "{}: `{sh}` is not a shard i/n",
                path.display()
            )));
        };
        if of.is_some_and(|m| m != n) {
            return Err(invalid(format!(
                "{}: shards of different counts in one summary",
                path.display()
            )));
        }
        of = Some(n);
        out.push(i);
    }
    Ok((out, of.unwrap_or(1)))
}

/// Combines the summaries of the given folders (every `summary-*.json` in
/// each): totals add up, failures are listed with their folder.
pub fn merge(dirs: &[PathBuf]) -> std::io::Result<Summary> {
    let mut all: Option<Summary> = None;
    for d in dirs {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(d)
            .map_err(at(d))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("summary-") && n.ends_with(".json"))
            })
            .collect();
        entries.sort();
        if entries.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "{}: no summary-*.json (was it a `funmem fuzz --out` folder?)",
                    d.display()
                ),
            ));
        }
        for path in entries {
            let text = std::fs::read_to_string(&path).map_err(at(&path))?;
            let mut s: Summary = serde_json::from_str(&text).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: {e}", path.display()),
                )
            })?;
            for f in &mut s.failures {
                if let Some(file) = &mut f.file {
                    *file = d.join(&*file).display().to_string();
                }
            }
            all = Some(match all {
                None => s,
                Some(mut a) => {
                    if a.seed != s.seed || a.passes != s.passes || a.source != s.source {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!(
                                "{}: seed {}, passes `{}` and source {} differ from the others' ({}, `{}` and {})",
                                path.display(),
                                s.seed,
                                s.passes,
                                s.source.name(),
                                a.seed,
                                a.passes,
                                a.source.name()
                            ),
                        ));
                    }
                    let (taken, n_of) = shard_set(&a.shards, &path)?;
                    let (theirs, n_theirs) = shard_set(&s.shards, &path)?;
                    if n_of != n_theirs {
                        return Err(invalid(format!(
                            "{}: shards of {n_theirs} cannot be merged with shards of {n_of} (their programs overlap)",
                            path.display()
                        )));
                    }
                    if let Some(dup) = theirs.iter().find(|i| taken.contains(i)) {
                        return Err(invalid(format!(
                            "{}: shard {dup}/{n_of} is already counted (from another summary, or a folder named twice)",
                            path.display()
                        )));
                    }
                    let add = |x: u64, y: u64, what: &str| {
                        x.checked_add(y).ok_or_else(|| {
                            invalid(format!("{}: the {what} counts overflow", path.display()))
                        })
                    };
                    a.programs = add(a.programs, s.programs, "program")?;
                    a.went_wrong = add(a.went_wrong, s.went_wrong, "went-wrong")?;
                    a.inconclusive = add(a.inconclusive, s.inconclusive, "inconclusive")?;
                    a.tally.merge(&s.tally);
                    a.constructs.merge(&s.constructs);
                    a.shards.extend(s.shards);
                    a.seconds = a.seconds.max(s.seconds);
                    a.failures.extend(s.failures);
                    a
                }
            });
        }
    }
    let mut s = all
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "nothing to merge"))?;
    s.failures.sort_by_key(|f| f.index);
    s.programs_per_second = if s.seconds > 0.0 {
        s.programs as f64 / s.seconds
    } else {
        0.0
    };
    Ok(s)
}
