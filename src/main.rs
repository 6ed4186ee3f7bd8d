//! `funmem`: the command line (docs/cli.md). Thin: every command calls the
//! workspace's crates and maps their outcome to an exit code:
//! 0 success, 1 the program went wrong, 2 not a program or bad command line.

mod bench_cmd;
mod dataset_cmd;
mod derive_cmd;
mod fuzz_cmd;
mod gpu_cmd;
mod prove_cmd;
mod reproduce;
mod stats_cmd;
mod stats_table;
mod stats_variants;
mod step_cmd;
mod test_cmd;
mod trace_cmd;

use clap::{Parser, Subcommand, ValueEnum};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::parse::AnyProgram;
use funmem_lang::Source;
use funmem_semantics::error::{EvalError, Limits};
use funmem_semantics::observer::{NoObserver, Stats};
use funmem_semantics::run::{layer_of, run, RunOptions, Semantics};
use funmem_semantics::value::Value;
use std::io::{IsTerminal, Read};
use std::process::ExitCode;

/// A research testbed for memory optimisations in a data-parallel functional compiler.
#[derive(Parser)]
#[command(name = "funmem", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum SemArg {
    /// Values only (FUN; FUNMEM through unmem).
    Value,
    /// A heap of memory blocks (FUNMEM, IMP).
    Heap,
    /// OpenCL on a device (through the GPU pipeline: simplify, expand-gpu, IMP).
    Opencl,
}

#[derive(Clone, Copy, ValueEnum)]
enum Target {
    /// FUNMEM: arrays in memory blocks (IFL 2022 §3.5).
    Funmem,
    /// IMP: imperative code (§4).
    Imp,
    /// OpenCL C kernels and the host part that launches them.
    Opencl,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type-check a program (.fun, .funmem or .imp); silent when it is fine.
    Check {
        /// The program file.
        file: String,
    },
    /// Parse and type-check a program, then print it in canonical form.
    Print {
        /// The program file.
        file: String,
    },
    /// Evaluate a program on inputs (standard input, or --input) and print its results.
    Run {
        /// The program file.
        file: String,
        /// Which semantics (default: value for FUN, heap for FUNMEM and IMP).
        #[arg(long, value_enum)]
        semantics: Option<SemArg>,
        /// Read the inputs from this file instead of standard input.
        #[arg(long)]
        input: Option<String>,
        /// Most statements and kernel iterations to evaluate (docs/limits.md);
        /// default 10^8, and 10^12 with --semantics opencl.
        #[arg(long)]
        fuel: Option<u64>,
        /// Most heap cells (array elements) to allocate; the default is half
        /// of this machine's free memory at 32 bytes a cell (docs/limits.md).
        /// With --semantics opencl it bounds the input blocks and results,
        /// and the device's memory bounds the blocks allocated on it.
        #[arg(long, default_value_t = Limits::for_this_machine().max_heap)]
        max_heap: u64,
        /// Print evaluation statistics to standard error.
        #[arg(long)]
        stats: bool,
        /// Do not check kernels for data races (heap semantics).
        #[arg(long)]
        no_race_check: bool,
        /// The OpenCL device (with --semantics opencl): its number in
        /// `funmem devices`, or part of its platform's or its own name.
        #[arg(long)]
        device: Option<String>,
        /// Print the results in Futhark's binary data format (docs/data.md).
        #[arg(long, short = 'b')]
        binary_output: bool,
    },
    /// Translate a program to a lower language and print it.
    Lower {
        /// The program file (.fun or .funmem).
        file: String,
        /// The target language.
        #[arg(long, value_enum)]
        to: Target,
        /// FUNMEM passes to run after lowering to FUNMEM, comma-separated
        /// (`none` for the paper's translation as it is). Default:
        /// `simplify`, and `simplify,migrate,coalesce,reuse,expand-gpu` for OpenCL.
        #[arg(long)]
        passes: Option<String>,
    },
    /// Run FUNMEM passes and print the transformed FUNMEM program (a FUN program is lowered first).
    Opt {
        /// The program file (.fun or .funmem).
        file: String,
        /// The passes, comma-separated, in order (see `funmem passes`).
        #[arg(long)]
        passes: String,
        /// Also say, on standard error, what each pass decided and why
        /// (passes that explain themselves: `hoist-allocs`, `coalesce`,
        /// `reuse`).
        #[arg(long)]
        explain: bool,
        /// Run `reuse` as `reuse-optimal`: the exact search for the least
        /// total allocated size (small programs).
        #[arg(long)]
        reuse_optimal: bool,
    },
    /// List the FUNMEM passes.
    Passes,
    /// Benchmark a program on an OpenCL device, every dataset of its test block (or --input), as `futhark bench`: time, bandwidth against a copy kernel, memory, transfers.
    Bench(bench_cmd::BenchArgs),
    /// List the OpenCL platforms and devices.
    Devices {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run every stage (source, FUNMEM, each pass, IMP) and check validity (Def. 3.1) and agreement with the source.
    Validate {
        /// The program file (.fun or .funmem).
        file: String,
        /// FUNMEM passes to run after lowering, comma-separated.
        #[arg(long, default_value = "none")]
        passes: String,
        /// Read the inputs from this file instead of standard input.
        #[arg(long)]
        input: Option<String>,
        /// Most statements and kernel iterations to evaluate per stage
        /// (docs/limits.md).
        #[arg(long, default_value_t = Limits::for_this_machine().fuel)]
        fuel: u64,
        /// Most heap cells to allocate per stage; the default is half of
        /// this machine's free memory at 32 bytes a cell (docs/limits.md).
        #[arg(long, default_value_t = Limits::for_this_machine().max_heap)]
        max_heap: u64,
        /// Also say, on standard error, what each pass decided and why.
        #[arg(long)]
        explain: bool,
        /// Run `reuse` as `reuse-optimal` (see `opt`).
        #[arg(long)]
        reuse_optimal: bool,
    },
    /// Check random programs through lowering and passes; reduce and save every failure.
    Fuzz(fuzz_cmd::Args),
    /// Write random data (or convert data) in Futhark's text or binary format, like `futhark dataset`.
    Dataset(dataset_cmd::Args),
    /// Discharge the proof obligations of obligation files (.obl): a line per obligation with its outcome, prover and time.
    Prove(prove_cmd::Args),
    /// Memory a program needs before and after passes: allocations inside kernels, cells allocated, peak heap.
    Stats(stats_cmd::Args),
    /// Step through the semantics rule by rule (a terminal UI; one line per step when piped).
    Step(step_cmd::StepArgs),
    /// A small run as the derivation tree of the paper's rules (indented text, or LaTeX with --latex).
    Derive(derive_cmd::DeriveArgs),
    /// Write a run as one self-contained HTML page that replays it step by step (--html OUT required); with --passes, before and after side by side.
    Trace(trace_cmd::TraceArgs),
    /// Re-run a paper's evaluation on our pipeline (ifl2022, serup2017, reuse-blog, borgesen2022, henriksen2017, sc22, or all): JSON, a Markdown table beside the published figures, SVG plots.
    Reproduce(reproduce::Args),
    /// Run the test blocks of program files (every semantics of their layer).
    Test {
        /// Program files, or folders to search for them.
        #[arg(required = true)]
        paths: Vec<String>,
        /// Also run every case on this OpenCL device (e.g. `pocl`), on the
        /// GPU pipeline's IMP program.
        #[arg(long)]
        opencl: Option<String>,
    },
}

/// Exit code for a program that went wrong (stuck, race, invalid).
pub(crate) const EXIT_WENT_WRONG: u8 = 1;
/// Exit code for input that is not a well-typed program, or a bad command line.
pub(crate) const EXIT_NOT_A_PROGRAM: u8 = 2;

fn main() -> ExitCode {
    // Output piped into a reader that stops early (`funmem ... | head`)
    // ends the process quietly, as for any Unix tool, instead of making
    // `println!` panic on the broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default action of one signal at start-up,
    // before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // Front ends and interpreters recurse over trees (bounded by the
    // parser's nesting limit); give them a generous stack.
    let run = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || dispatch(cli));
    match run.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!("funmem: internal error");
            ExitCode::from(101)
        }
    }
}

fn dispatch(cli: Cli) -> ExitCode {
    let r = match cli.command {
        Command::Check { file } => load(&file).map(|_| ExitCode::SUCCESS),
        Command::Print { file } => load(&file).map(|(_, p)| {
            print!("{}", p.print());
            ExitCode::SUCCESS
        }),
        Command::Run {
            file,
            semantics,
            input,
            fuel,
            max_heap,
            stats,
            no_race_check,
            device,
            binary_output,
        } => {
            BINARY_OUTPUT.store(binary_output, std::sync::atomic::Ordering::Relaxed);
            if device.is_some() && !matches!(semantics, Some(SemArg::Opencl)) {
                eprintln!("funmem: --device chooses an OpenCL device; it needs --semantics opencl");
                return ExitCode::from(EXIT_NOT_A_PROGRAM);
            }
            if let Some(SemArg::Opencl) = semantics {
                return read_inputs_for(input.as_deref(), &wanted_prims(&file))
                    .and_then(|inputs| {
                        gpu_cmd::run(
                            &file,
                            device.as_deref(),
                            &inputs,
                            Limits {
                                fuel: fuel.unwrap_or(funmem_semantics::error::DEVICE_FUEL),
                                max_heap,
                            },
                            stats,
                        )
                    })
                    .unwrap_or_else(|code| code);
            }
            let opts = RunOptions {
                limits: Limits {
                    fuel: fuel.unwrap_or(funmem_semantics::error::DEFAULT_FUEL),
                    max_heap,
                },
                race_check: !no_race_check,
            };
            cmd_run(&file, semantics, input.as_deref(), opts, stats)
        }
        Command::Lower { file, to, passes } => match to {
            Target::Opencl => gpu_cmd::lower(&file, passes.as_deref()),
            _ => cmd_lower(&file, to, passes.as_deref().unwrap_or("simplify")),
        },
        Command::Opt {
            file,
            passes,
            explain,
            reuse_optimal,
        } => with_optimal(&passes, reuse_optimal).and_then(|p| cmd_opt(&file, &p, explain)),
        Command::Devices { json } => gpu_cmd::devices(json),
        Command::Bench(args) => bench_cmd::bench(args),
        Command::Reproduce(args) => reproduce::reproduce(args),
        Command::Passes => {
            for p in funmem_transforms::PASSES {
                println!("{:<12} {}", p.name, p.summary);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate {
            file,
            passes,
            input,
            fuel,
            max_heap,
            explain,
            reuse_optimal,
        } => with_optimal(&passes, reuse_optimal).and_then(|p| {
            cmd_validate(
                &file,
                &p,
                input.as_deref(),
                Limits { fuel, max_heap },
                explain,
            )
        }),
        Command::Fuzz(args) => fuzz_cmd::fuzz(args),
        Command::Dataset(args) => dataset_cmd::dataset(args),
        Command::Prove(args) => prove_cmd::prove(args),
        Command::Stats(args) => stats_cmd::stats(args),
        Command::Step(args) => step_cmd::step(args),
        Command::Derive(args) => derive_cmd::derive(args),
        Command::Trace(args) => trace_cmd::trace(args),
        Command::Test { paths, opencl } => Ok(test_cmd::run_tests(&paths, opencl.as_deref())),
    };
    r.unwrap_or_else(|code| code)
}

/// Reads, parses and checks a file, reporting any problem on stderr.
pub(crate) fn load(file: &str) -> Result<(Source, AnyProgram), ExitCode> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        eprintln!("{file}: cannot read: {e}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })?;
    let src = Source::new(file, text);
    match funmem_lang::front::load(&src) {
        Ok(p) => Ok((src, p)),
        Err(d) => {
            report(&src, &d);
            Err(ExitCode::from(EXIT_NOT_A_PROGRAM))
        }
    }
}

pub(crate) fn report(src: &Source, d: &Diagnostic) {
    eprint!("{}", d.render(src, std::io::stderr().is_terminal()));
}

/// An evaluation error as a diagnostic at its position.
fn eval_diagnostic(e: &EvalError) -> Diagnostic {
    Diagnostic::new(Phase::Eval, e.span, e.to_string())
}

/// Whether `run` prints its results in the binary format (`--binary-output`);
/// set once from the command line, read by [`print_values`].
static BINARY_OUTPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The element types of the inputs that the program in `file` takes, for
/// typing unsuffixed literals (`1.5` for an `f32` parameter); none when it
/// does not load (running it reports why).
fn wanted_prims(file: &str) -> Vec<funmem_lang::prim::Prim> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    funmem_lang::front::load(&Source::new(file, text))
        .map(|p| input_prims(&p))
        .unwrap_or_default()
}

/// The element types of a program's inputs, in order.
pub(crate) fn input_prims(p: &AnyProgram) -> Vec<funmem_lang::prim::Prim> {
    funmem_teach::session::input_prims(p)
}

/// Reads the inputs from a file or standard input.
pub(crate) fn read_inputs(input: Option<&str>) -> Result<Vec<Value>, ExitCode> {
    read_inputs_for(input, &[])
}

/// Reads the inputs, in text or binary format, from a file or standard
/// input; unsuffixed literals of the `k`-th take the type `wanted[k]` where
/// they fit it.
pub(crate) fn read_inputs_for(
    input: Option<&str>,
    wanted: &[funmem_lang::prim::Prim],
) -> Result<Vec<Value>, ExitCode> {
    let (name, bytes) = match input {
        Some(f) => match std::fs::read(f) {
            Ok(t) => (f.to_string(), t),
            Err(e) => {
                eprintln!("{f}: cannot read: {e}");
                return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
            }
        },
        None => {
            let mut t = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut t) {
                eprintln!("<stdin>: cannot read: {e}");
                return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
            }
            ("<stdin>".to_string(), t)
        }
    };
    // A byte-order mark is not part of the data.
    let skip = if bytes.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let data = &bytes[skip..];
    funmem_semantics::textual::read_values_for(data, wanted).map_err(|e| {
        // Binary data (control bytes or not UTF-8): the position is a byte
        // offset, not a line and column.
        let text = std::str::from_utf8(data)
            .ok()
            .filter(|_| !data.iter().any(|&b| b < 9));
        let Some(text) = text else {
            eprintln!("{name}: byte {}: {}", e.start, e.message);
            return ExitCode::from(EXIT_NOT_A_PROGRAM);
        };
        let src = Source::new(name, text.to_string());
        report(
            &src,
            &Diagnostic::new(
                Phase::Syntax,
                funmem_lang::Span::new(e.start, e.end),
                e.message,
            ),
        );
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })
}

fn cmd_run(
    file: &str,
    sem: Option<SemArg>,
    input: Option<&str>,
    opts: RunOptions,
    stats: bool,
) -> Result<ExitCode, ExitCode> {
    let (src, p) = load(file)?;
    let layer = layer_of(&p);
    let sem = match sem {
        None => Semantics::of(layer)[0],
        Some(SemArg::Value) => Semantics::Value,
        Some(SemArg::Heap) => Semantics::Heap,
        // Dispatched to gpu_cmd::run before this.
        Some(SemArg::Opencl) => return Err(ExitCode::from(EXIT_NOT_A_PROGRAM)),
    };
    let inputs = read_inputs_for(input, &input_prims(&p))?;
    let start = std::time::Instant::now();
    let mut st = Stats::default();
    let result = if stats {
        run(&p, sem, &inputs, opts, &mut st)
    } else {
        run(&p, sem, &inputs, opts, &mut NoObserver)
    };
    let elapsed = start.elapsed().as_secs_f64();
    let Some(result) = result else {
        let have: Vec<&str> = Semantics::of(layer).iter().map(|s| s.name()).collect();
        eprintln!(
            "{file}: {} has no {sem} semantics (it has: {})",
            layer.name(),
            have.join(", ")
        );
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    };
    if stats {
        print_stats(&st, elapsed);
    }
    match result {
        Ok(values) => print_values(&values),
        Err(e) => {
            report(&src, &eval_diagnostic(&e));
            Err(ExitCode::from(EXIT_WENT_WRONG))
        }
    }
}

/// Prints results one a line, formatted straight into a buffered standard
/// output, so that a large result never exists as one string.
pub(crate) fn print_values(values: &[Value]) -> Result<ExitCode, ExitCode> {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let binary = BINARY_OUTPUT.load(std::sync::atomic::Ordering::Relaxed);
    let written = values
        .iter()
        .try_for_each(|v| {
            if binary {
                funmem_semantics::binary::write_value(&mut out, v)
            } else {
                writeln!(out, "{v}")
            }
        })
        .and_then(|()| out.flush());
    written.map(|()| ExitCode::SUCCESS).map_err(|e| {
        eprintln!("funmem: cannot write the results: {e}");
        ExitCode::from(EXIT_WENT_WRONG)
    })
}

fn print_stats(st: &Stats, elapsed: f64) {
    let rate = if elapsed > 0.0 {
        st.statements as f64 / elapsed
    } else {
        0.0
    };
    eprintln!("statements evaluated: {}", st.statements);
    eprintln!("kernel iterations:    {}", st.iterations);
    eprintln!("allocations:          {}", st.allocations);
    eprintln!("peak heap cells:      {} (nothing is freed)", st.cells);
    eprintln!("reads:                {}", st.reads);
    eprintln!("writes:               {}", st.writes);
    eprintln!("elapsed seconds:      {elapsed:.6}");
    eprintln!("statements/second:    {rate:.0}");
}

/// Parses a pass list, reporting a bad one.
pub(crate) fn pass_list(list: &str) -> Result<Vec<funmem_transforms::Pass>, ExitCode> {
    funmem_transforms::pass::parse_list(list).map_err(|e| {
        eprintln!("funmem: {e}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })
}

/// Runs a pipeline, reporting a stage that fails.
pub(crate) fn pipeline(
    file: &str,
    src: &Source,
    p: &AnyProgram,
    passes: &[funmem_transforms::Pass],
    to_imp: bool,
) -> Result<Vec<funmem_transforms::pipeline::Stage>, ExitCode> {
    let provers = funmem_oracle::prove::Provers::default();
    funmem_transforms::pipeline::stages(p, passes, to_imp, &provers).map_err(|e| {
        match &e.output {
            // A stage's own output is ill-typed: a bug of that stage.
            Some(out) => {
                eprintln!("{file}: {e}");
                eprintln!(
                    "{}",
                    e.diagnostic.headline(&Source::new("<output>", out.clone()))
                );
                eprintln!("the stage's output:\n{out}");
                ExitCode::from(EXIT_WENT_WRONG)
            }
            None => {
                eprintln!("{file}: stage `{}`:", e.stage);
                report(src, &e.diagnostic);
                ExitCode::from(EXIT_NOT_A_PROGRAM)
            }
        }
    })
}

fn cmd_lower(file: &str, to: Target, passes: &str) -> Result<ExitCode, ExitCode> {
    let passes = pass_list(passes)?;
    let (src, p) = load(file)?;
    if let AnyProgram::Imp(_) = p {
        eprintln!("{file}: an IMP program is already fully lowered");
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let stages = pipeline(file, &src, &p, &passes, matches!(to, Target::Imp))?;
    if let Some(last) = stages.last() {
        print!("{}", last.program.print());
    }
    Ok(ExitCode::SUCCESS)
}

/// `funmem opt`: the program after the passes on standard output; with
/// `explain`, each pass's decisions on standard error, under its name.
/// The pass list with `reuse` run as `reuse-optimal` when `on`.
fn with_optimal(passes: &str, on: bool) -> Result<String, ExitCode> {
    if !on {
        return Ok(passes.to_string());
    }
    let names: Vec<&str> = passes.split(',').map(str::trim).collect();
    if !names.contains(&"reuse") {
        eprintln!("--reuse-optimal: the pass list `{passes}` has no `reuse` to run exactly");
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let swapped: Vec<&str> = names
        .iter()
        .map(|n| if *n == "reuse" { "reuse-optimal" } else { n })
        .collect();
    Ok(swapped.join(","))
}

fn cmd_opt(file: &str, passes: &str, explain: bool) -> Result<ExitCode, ExitCode> {
    let passes = pass_list(passes)?;
    let (src, p) = load(file)?;
    if let AnyProgram::Imp(_) = p {
        eprintln!("{file}: an IMP program is already fully lowered");
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let stages = pipeline(file, &src, &p, &passes, false)?;
    if explain {
        print_explain(&stages);
    }
    if let Some(last) = stages.last() {
        print!("{}", last.program.print());
    }
    Ok(ExitCode::SUCCESS)
}

/// What each stage decided, on standard error (`--explain`).
fn print_explain(stages: &[funmem_transforms::pipeline::Stage]) {
    for st in stages.iter().filter(|st| !st.explain.is_empty()) {
        eprintln!("{}:", st.name);
        for line in &st.explain {
            eprintln!("  {line}");
        }
    }
}

fn cmd_validate(
    file: &str,
    passes: &str,
    input: Option<&str>,
    limits: Limits,
    explain: bool,
) -> Result<ExitCode, ExitCode> {
    let passes = pass_list(passes)?;
    let (src, p) = load(file)?;
    if let AnyProgram::Imp(_) = p {
        eprintln!("{file}: validate takes a FUN or FUNMEM program; IMP has one semantics only (use `funmem run`)");
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let stages = pipeline(file, &src, &p, &passes, true)?;
    if explain {
        print_explain(&stages);
    }
    let inputs = read_inputs_for(input, &input_prims(&p))?;
    let verdicts = funmem_oracle::check::check_stages(&stages, &inputs, limits);
    let width = verdicts.iter().map(|v| v.stage.len()).max().unwrap_or(0);
    let mut failed = false;
    let mut inconclusive = Vec::new();
    for (v, st) in verdicts.iter().zip(&stages) {
        println!(
            "{:<width$}  {:<6}  {:<10}  {}",
            v.stage,
            v.layer.name(),
            v.semantics,
            v.text
        );
        for (o, verdict) in &st.obligations {
            // Obligations of the source's own statements have positions in
            // it; those of generated statements have none.
            let at = if o.span.end > 0 && o.span.end <= src.text.len() {
                let (l, c) = src.line_col(o.span.start);
                format!(" (line {l}:{c})")
            } else {
                String::new()
            };
            println!("{:<width$}  obligation {}{at}: {}", "", o.name, o.claim);
            if !o.facts.is_empty() {
                let facts: Vec<String> = o
                    .facts
                    .iter()
                    .map(|f| format!("{} ({})", funmem_lang::print::sexp_string(&f.exp), f.origin))
                    .collect();
                println!("{:<width$}    given {}", "", facts.join(", "));
            }
            println!("{:<width$}    {verdict}", "");
        }
        failed |= v.agreement.is_failure();
        if v.agreement == funmem_oracle::check::Agreement::LimitReached {
            inconclusive.push(v.stage.as_str());
        }
    }
    if failed {
        // The first stage that fails, its error in full when it has one.
        if let Some(e) = verdicts
            .iter()
            .find(|v| v.agreement.is_failure())
            .and_then(|v| v.error.as_ref())
        {
            report(&src, &eval_diagnostic(e));
        }
        return Err(ExitCode::from(EXIT_WENT_WRONG));
    }
    if let Some(e) = verdicts.first().and_then(|v| v.error.as_ref()) {
        // The source goes wrong or exceeds a limit (as `run` would say);
        // its error, in full.
        report(&src, &eval_diagnostic(e));
        return Err(ExitCode::from(EXIT_WENT_WRONG));
    }
    if !inconclusive.is_empty() {
        // Limits are not semantics: a stage over a limit is not a failure.
        eprintln!(
            "funmem: inconclusive at {} (a resource limit, not a disagreement); raise --fuel or --max-heap to decide",
            inconclusive.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
