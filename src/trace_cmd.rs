//! `funmem trace`: a run written as one self-contained HTML page that
//! replays it step by step (docs/cli.md, docs/teaching.md); with
//! `--passes` or `--diff`, two runs side by side.

use crate::step_cmd::Common;
use crate::{load, read_inputs_for, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_lang::parse::Layer;
use funmem_semantics::error::Limits;
use funmem_semantics::run::layer_of;
use funmem_teach::html::{page, Pane};
use funmem_teach::session::{Recorded, Subject, View};
use funmem_transforms::pass::Pass;
use std::process::ExitCode;

/// Most steps a page holds unless told (`--max-steps`).
pub const DEFAULT_PAGE_STEPS: usize = 2000;

/// `funmem trace` arguments.
#[derive(clap::Args)]
pub struct TraceArgs {
    #[command(flatten)]
    pub common: Common,
    /// Write the page here (required for now: the HTML page is the only
    /// output). With --passes the page shows the program before the passes
    /// (as given, or lowered with simplify) beside the program after them.
    #[arg(long, value_name = "OUT.html", required = true)]
    pub html: String,
    /// Most steps the page holds; a longer run is cut, and the page says so.
    #[arg(long, default_value_t = DEFAULT_PAGE_STEPS)]
    pub max_steps: usize,
    /// The page's title (default: the command's file names).
    #[arg(long)]
    pub title: Option<String>,
    /// Compare with this second program (same inputs), side by side.
    #[arg(long, value_name = "FILE")]
    pub diff: Option<String>,
    /// With --passes: show only the program after the passes.
    #[arg(long)]
    pub no_before: bool,
}

fn prepared(file: &str, view: Option<View>, passes: Option<&[Pass]>) -> Result<Subject, ExitCode> {
    let (src, p) = load(file)?;
    // Side by side shows heaps: a FUN program with passes is lowered to
    // FUNMEM's heap semantics unless told otherwise.
    let view = match (view, layer_of(&p), passes) {
        (None, Layer::Fun, Some(_)) => Some(View::Heap),
        _ => view,
    };
    crate::step_cmd::prepare_loaded(file, &src, &p, view, passes)
}

/// `funmem trace`.
pub fn trace(a: TraceArgs) -> Result<ExitCode, ExitCode> {
    let c = &a.common;
    let view = c.semantics.map(View::from);
    let passes = match &c.passes {
        Some(list) => Some(crate::pass_list(list)?),
        None => None,
    };
    let mut subjects: Vec<(String, Subject)> = Vec::new();
    if let Some(other) = &a.diff {
        let l = prepared(&c.file, view, passes.as_deref())?;
        let r = prepared(other, view, passes.as_deref())?;
        subjects.push((format!("{}: {}", c.file, l.title), l));
        subjects.push((format!("{other}: {}", r.title), r));
    } else if passes.is_some() && !a.no_before {
        // Before: as given (a FUN program lowered with simplify), under the
        // semantics the after side gets.
        let after = prepared(&c.file, view, passes.as_deref())?;
        let before = prepared(&c.file, Some(after.view), None)?;
        subjects.push((format!("before: {}", before.title), before));
        subjects.push((format!("after: {}", after.title), after));
    } else {
        let s = prepared(&c.file, view, passes.as_deref())?;
        subjects.push((s.title.clone(), s));
    }
    // One set of inputs for both sides (a program without inputs reads
    // nothing: a terminal would wait).
    let wanted = subjects[0].1.input_prims();
    let inputs = if wanted.is_empty() && c.input.is_none() {
        Vec::new()
    } else {
        read_inputs_for(c.input.as_deref(), &wanted)?
    };
    let limits = Limits {
        fuel: c.fuel,
        ..Limits::default()
    };
    let runs: Vec<Recorded> = subjects
        .iter()
        .map(|(_, s)| s.record(&inputs, limits, a.max_steps))
        .collect();
    let panes: Vec<Pane> = subjects
        .iter()
        .zip(&runs)
        .map(|((label, s), r)| Pane {
            label: label.clone(),
            source: &s.source,
            heap: s.has_heap(),
            trace: &r.trace,
        })
        .collect();
    let pairs =
        (runs.len() == 2).then(|| funmem_teach::align::align(&runs[0].trace, &runs[1].trace));
    let title = a.title.clone().unwrap_or_else(|| match &a.diff {
        Some(o) => format!("funmem trace {} ⇄ {o}", c.file),
        None => format!("funmem trace {}", c.file),
    });
    let html = page(&title, &panes, pairs.as_deref());
    if let Err(e) = std::fs::write(&a.html, &html) {
        eprintln!("{}: cannot write: {e}", a.html);
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let steps: Vec<String> = runs
        .iter()
        .map(|r| {
            let t = &r.trace;
            if t.cut > 0 {
                format!(
                    "{} of {} steps",
                    t.steps.len(),
                    t.steps.len() as u64 + t.cut
                )
            } else {
                format!("{} steps", t.steps.len())
            }
        })
        .collect();
    println!(
        "wrote {} ({}, {} bytes)",
        a.html,
        steps.join(" and "),
        html.len()
    );
    for ((label, _), r) in subjects.iter().zip(&runs) {
        if let Err(e) = &r.outcome {
            eprintln!("{label}: {e}");
        }
    }
    Ok(if runs.iter().all(|r| r.outcome.is_ok()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_WENT_WRONG)
    })
}
