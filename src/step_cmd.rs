//! `funmem step`: step through the semantics (docs/teaching.md): a
//! terminal UI on a terminal, one line (or JSON object) per step otherwise;
//! `--diff A B` steps two programs side by side.

use crate::{load, read_inputs_for, report, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use clap::ValueEnum;
use funmem_semantics::error::Limits;
use funmem_semantics::value::Value;
use funmem_teach::session::{prepare, PrepareError, Recorded, Subject, View};
use std::io::{IsTerminal, Write};
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
    /// Print one line per step even on a terminal (instead of the
    /// terminal UI, which opens when standard output is a terminal).
    #[arg(long, conflicts_with = "json")]
    pub plain: bool,
    /// Side by side: step FILE and OTHER together at corresponding steps
    /// (`funmem step --diff A B`), e.g. a program and its output of
    /// `funmem opt`.
    #[arg(long, requires = "other", conflicts_with = "json")]
    pub diff: bool,
    /// The second program of `--diff`.
    #[arg(requires = "diff", value_name = "OTHER")]
    pub other: Option<String>,
    /// Most steps to record; the rest are counted, not shown.
    #[arg(long, default_value_t = DEFAULT_STEPS)]
    pub max_steps: usize,
}

/// A program made ready and run: its subject and its recording.
pub fn record(c: &Common, budget: usize) -> Result<(Subject, Recorded), ExitCode> {
    let subject = prepare_file(c, &c.file)?;
    let inputs = inputs_for(c, &subject)?;
    let rec = subject.record(&inputs, limits(c), budget);
    Ok((subject, rec))
}

/// The limits of a run: `--fuel`.
fn limits(c: &Common) -> Limits {
    Limits {
        fuel: c.fuel,
        ..Limits::default()
    }
}

/// The inputs of `--input` (or standard input) for a subject; a program
/// without inputs reads nothing (a terminal would wait).
fn inputs_for(c: &Common, subject: &Subject) -> Result<Vec<Value>, ExitCode> {
    let wanted = subject.input_prims();
    if wanted.is_empty() && c.input.is_none() {
        Ok(Vec::new())
    } else {
        read_inputs_for(c.input.as_deref(), &wanted)
    }
}

/// A file made ready to step with the options of `c`.
fn prepare_file(c: &Common, file: &str) -> Result<Subject, ExitCode> {
    let (src, p) = load(file)?;
    let passes = match &c.passes {
        Some(list) => Some(crate::pass_list(list)?),
        None => None,
    };
    prepare_loaded(
        file,
        &src,
        &p,
        c.semantics.map(View::from),
        passes.as_deref(),
    )
}

/// A loaded program made ready to step, a failure reported on stderr
/// with its exit code: 2 for a program a stage refuses or a request that
/// does not fit it, 1 for a stage's bug.
pub(crate) fn prepare_loaded(
    file: &str,
    src: &funmem_lang::Source,
    p: &funmem_lang::parse::AnyProgram,
    view: Option<View>,
    passes: Option<&[funmem_transforms::Pass]>,
) -> Result<Subject, ExitCode> {
    prepare(src, p, view, passes).map_err(|e| match &e {
        PrepareError::Stage(s) if s.output.is_none() => {
            eprintln!("{file}: stage `{}`:", s.stage);
            report(src, &s.diagnostic);
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        }
        PrepareError::Usage(m) => {
            eprintln!("{file}: {m}");
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        }
        _ => {
            eprintln!("{file}: {e}");
            ExitCode::from(EXIT_WENT_WRONG)
        }
    })
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

/// Whether to open the terminal UI: standard output is a terminal and no
/// line output was asked for.
fn interactive(a: &StepArgs) -> bool {
    !a.json && !a.plain && std::io::stdout().is_terminal()
}

/// `funmem step`.
pub fn step(a: StepArgs) -> Result<ExitCode, ExitCode> {
    if a.diff {
        return step_diff(&a);
    }
    let (subject, rec) = record(&a.common, a.max_steps)?;
    let src = &subject.source;
    if a.json {
        print_lines(&funmem_teach::text::json_lines(src, &rec.trace));
    } else if interactive(&a) {
        let mut app = funmem_teach::tui::App::new(&subject, &rec.trace);
        tui_or_lines(&mut app, || funmem_teach::text::lines(src, &rec.trace))?;
    } else {
        print_lines(&funmem_teach::text::lines(src, &rec.trace));
    }
    Ok(outcome_code(&rec))
}

/// Runs the terminal UI; where the terminal cannot be set up, says why and
/// prints the lines instead.
fn tui_or_lines(
    app: &mut funmem_teach::tui::App,
    lines: impl FnOnce() -> Vec<String>,
) -> Result<(), ExitCode> {
    if let Err(e) = funmem_teach::tui::run(app) {
        eprintln!("funmem step: the terminal UI failed ({e}); printing the steps instead");
        print_lines(&lines());
    }
    Ok(())
}

/// `funmem step --diff A B`: both programs with the same options and
/// inputs, side by side at corresponding steps.
fn step_diff(a: &StepArgs) -> Result<ExitCode, ExitCode> {
    let c = &a.common;
    let other = a.other.as_deref().unwrap_or_default();
    let left = prepare_file(c, &c.file)?;
    let right = prepare_file(c, other)?;
    if left.input_prims() != right.input_prims() {
        eprintln!(
            "funmem step --diff: {} and {other} take different inputs; they must take the same",
            c.file
        );
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let inputs = inputs_for(c, &left)?;
    let lrec = left.record(&inputs, limits(c), a.max_steps);
    let rrec = right.record(&inputs, limits(c), a.max_steps);
    let pairs = funmem_teach::align::align(&lrec.trace, &rrec.trace);
    let lines = || {
        funmem_teach::diff::lines(
            (&left.source, &lrec.trace),
            (&right.source, &rrec.trace),
            &pairs,
            funmem_teach::diff::WIDTH,
        )
    };
    if interactive(a) {
        let mut app = funmem_teach::tui::App::side_by_side(
            (&left, &lrec.trace),
            (&right, &rrec.trace),
            pairs.clone(),
        );
        tui_or_lines(&mut app, lines)?;
    } else {
        print_lines(&lines());
    }
    if lrec.outcome.is_err() || rrec.outcome.is_err() {
        Ok(ExitCode::from(EXIT_WENT_WRONG))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
