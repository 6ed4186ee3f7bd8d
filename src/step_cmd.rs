//! `funmem step`: step through the semantics (docs/teaching.md).

use crate::{load, read_inputs_for, report, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use clap::ValueEnum;
use funmem_semantics::error::Limits;
use funmem_teach::session::{prepare, PrepareError, Recorded, Subject, View};
use std::io::Write;
use std::process::ExitCode;

/// Most steps recorded unless told (`--max-steps`).
pub const DEFAULT_STEPS: usize = 100_000;

/// The semantics to step through.
#[derive(Clone, Copy, ValueEnum)]
pub enum ViewArg {
    /// Values only (FUN; FUNMEM through unmem).
    Value,
    /// FUNMEM's heap of blocks (a FUN program is lowered first).
    Heap,
    /// IMP (a FUN or FUNMEM program is lowered first).
    Imp,
}

impl From<ViewArg> for View {
    fn from(v: ViewArg) -> View {
        match v {
            ViewArg::Value => View::Value,
            ViewArg::Heap => View::Heap,
            ViewArg::Imp => View::Imp,
        }
    }
}

/// The options `step`, `trace` and `derive` share.
#[derive(clap::Args, Clone)]
pub struct Common {
    /// The program file (.fun, .funmem or .imp).
    pub file: String,
    /// Read the inputs from this file instead of standard input.
    #[arg(long)]
    pub input: Option<String>,
    /// Which semantics: value (FUN's default), heap (FUNMEM's default; a
    /// FUN program is lowered to FUNMEM) or imp (lowered to IMP).
    #[arg(long, value_enum)]
    pub semantics: Option<ViewArg>,
    /// FUNMEM passes to run first, comma-separated (default when lowering:
    /// simplify; `none` for the paper's translation as it is).
    #[arg(long)]
    pub passes: Option<String>,
    /// Most statements and iterations to evaluate.
    #[arg(long, default_value_t = 1_000_000)]
    pub fuel: u64,
}

/// `funmem step` arguments.
#[derive(clap::Args)]
pub struct StepArgs {
    #[command(flatten)]
    pub common: Common,
    /// Print the steps as JSON lines (one object per step).
    #[arg(long)]
    pub json: bool,
    /// Most steps to record; the rest are counted, not shown.
    #[arg(long, default_value_t = DEFAULT_STEPS)]
    pub max_steps: usize,
}

/// A program made ready and run: its subject and its recording.
pub fn record(c: &Common, budget: usize) -> Result<(Subject, Recorded), ExitCode> {
    let (src, p) = load(&c.file)?;
    let passes = match &c.passes {
        Some(list) => Some(crate::pass_list(list)?),
        None => None,
    };
    let subject = prepare(&src, &p, c.semantics.map(View::from), passes.as_deref()).map_err(
        |e| match &e {
            PrepareError::Stage(s) if s.output.is_none() => {
                eprintln!("{}: stage `{}`:", c.file, s.stage);
                report(&src, &s.diagnostic);
                ExitCode::from(EXIT_NOT_A_PROGRAM)
            }
            PrepareError::Usage(m) => {
                eprintln!("{}: {m}", c.file);
                ExitCode::from(EXIT_NOT_A_PROGRAM)
            }
            _ => {
                eprintln!("{}: {e}", c.file);
                ExitCode::from(EXIT_WENT_WRONG)
            }
        },
    )?;
    // A program without inputs reads nothing (a terminal would wait).
    let wanted = subject.input_prims();
    let inputs = if wanted.is_empty() && c.input.is_none() {
        Vec::new()
    } else {
        read_inputs_for(c.input.as_deref(), &wanted)?
    };
    let limits = Limits {
        fuel: c.fuel,
        ..Limits::default()
    };
    let rec = subject.record(&inputs, limits, budget);
    Ok((subject, rec))
}

/// The exit code of a run: 0 when it gave results, 1 when it went wrong.
pub fn outcome_code(r: &Recorded) -> ExitCode {
    match r.outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(EXIT_WENT_WRONG),
    }
}

/// Writes lines to standard output, stopping quietly if it is closed.
pub fn print_lines(lines: &[String]) {
    let out = std::io::stdout();
    let mut out = out.lock();
    for l in lines {
        if writeln!(out, "{l}").is_err() {
            return;
        }
    }
    let _ = out.flush();
}

/// `funmem step`.
pub fn step(a: StepArgs) -> Result<ExitCode, ExitCode> {
    let (subject, rec) = record(&a.common, a.max_steps)?;
    let src = &subject.source;
    if a.json {
        print_lines(&funmem_teach::text::json_lines(src, &rec.trace));
    } else {
        print_lines(&funmem_teach::text::lines(src, &rec.trace));
    }
    Ok(outcome_code(&rec))
}
