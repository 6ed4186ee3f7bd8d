//! `funmem stats PATH... --table`: the memory a whole corpus needs before
//! and after a pass, as one Markdown table, so that a memory pass
//! (expansion, hoisting, coalescing) can be judged on every program at once
//! instead of one program and input at a time.
//!
//! Each program file under the paths (found as `funmem test` finds them)
//! runs on its test block's first case that runs to results (not a
//! `compiled` benchmark dataset, not an `error:` case), its inputs read or
//! generated as `funmem test` does. The FUNMEM programs before and after
//! the last pass run under the heap semantics (`MemProfile`): allocations
//! made, cells allocated, and the peak heap, with the share of the peak
//! that the pass saved. A program that cannot be measured (no test block,
//! no such case, an IMP program, a compile error expected) gets a row
//! saying why; one that goes wrong (does not load, a stage fails, a run
//! goes wrong or past a limit) gets a row saying where, and makes the exit
//! code 1. Each run is bounded by the fuel and heap limits of the command
//! (smaller by default than for one program, so a corpus runs in seconds).
//!
//! With variants (`--variants A,B`), the last pass is replaced by each of
//! them in turn: the passes before it run once, each variant on their
//! result, and the table has the allocations and peak before the last
//! pass and after each variant (say `reuse-first-fit`, `reuse` and
//! `reuse-optimal`), so that strategies of one pass compare on a corpus.

use crate::stats_cmd::{measured, profile};
use crate::test_cmd::{case_inputs, case_label, runs_to_results};
use crate::EXIT_WENT_WRONG;
use funmem_lang::parse::AnyProgram;
use funmem_lang::{front, testspec, Source};
use funmem_semantics::error::Limits;
use funmem_semantics::observer::MemProfile;
use std::path::Path;
use std::process::ExitCode;

/// One program's line of the table.
pub(crate) struct Row {
    pub program: String,
    /// The case measured, as `funmem test` names it; empty when none.
    pub case: String,
    pub outcome: Outcome,
}

pub(crate) enum Outcome {
    /// Before the last pass, and after it (or after each variant, in
    /// order), with notes on the passes' results (an optimum not proved).
    Measured(MemProfile, Vec<MemProfile>, Vec<String>),
    /// Nothing to measure, and why; not a failure.
    Skipped(String),
    /// The program went wrong, and where; the exit code is 1.
    Wrong(String),
}

/// How the table is printed.
#[derive(Clone, Copy)]
pub(crate) struct Form {
    /// JSON instead of Markdown.
    pub json: bool,
    /// Without the rows of skipped programs (counted in the total line).
    pub hide_skipped: bool,
}

/// The longest inline input shown in a row's case; longer ones are cut.
const CASE_WIDTH: usize = 40;

/// Runs the table over `paths` with the parsed `passes` (`passes_text` as
/// given, for the JSON form), and with `variants` (none: the plain table)
/// each in place of the last pass; exit 1 if some program went wrong.
pub(crate) fn table(
    paths: &[String],
    passes_text: &str,
    passes: &[funmem_transforms::Pass],
    variants: &[funmem_transforms::Pass],
    limits: Limits,
    form: Form,
) -> Result<ExitCode, ExitCode> {
    let Some(files) = crate::test_cmd::program_files(paths) else {
        return Err(ExitCode::from(crate::EXIT_NOT_A_PROGRAM));
    };
    let provers = funmem_oracle::prove::Provers::default();
    let last = passes.last().map(|p| p.name);
    let rows: Vec<Row> = files
        .iter()
        .map(|f| measure(f, passes, variants, limits, &provers))
        .collect();
    let wrong = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Wrong(_)))
        .count();
    let skipped = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
        .count();
    let shown: Vec<&Row> = rows
        .iter()
        .filter(|r| !(form.hide_skipped && matches!(r.outcome, Outcome::Skipped(_))))
        .collect();
    let names: Vec<&str> = variants.iter().map(|v| v.name).collect();
    match (form.json, names.is_empty()) {
        (true, true) => println!("{}", to_json(&shown, passes_text, skipped)),
        (false, true) => print!("{}", markdown(&shown, rows.len(), skipped, last)),
        (true, false) => println!(
            "{}",
            crate::stats_variants::to_json(&shown, passes_text, &names, skipped)
        ),
        (false, false) => print!(
            "{}",
            crate::stats_variants::markdown(&shown, rows.len(), skipped, last, &names)
        ),
    }
    if wrong > 0 {
        eprintln!("{wrong} program(s) went wrong");
        Ok(ExitCode::from(EXIT_WENT_WRONG))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// One program's row: its first case that runs to results, measured
/// before and after the last of `passes`, or, with `variants`, before it
/// and after each variant in its place.
fn measure(
    path: &Path,
    passes: &[funmem_transforms::Pass],
    variants: &[funmem_transforms::Pass],
    limits: Limits,
    provers: &funmem_oracle::prove::Provers,
) -> Row {
    let name = path.display().to_string();
    let row = |case: String, outcome| Row {
        program: name.clone(),
        case,
        outcome,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(s) => funmem_lang::span::without_bom(s),
        Err(e) => return row(String::new(), Outcome::Wrong(format!("cannot read: {e}"))),
    };
    let src = Source::new(name.clone(), text.clone());
    let spec = match testspec::parse(&text) {
        Ok(Some(s)) => s,
        Ok(None) => return row(String::new(), Outcome::Skipped("no test block".into())),
        Err(d) => {
            let why = format!("bad test block: {}", line_col(&src, &d));
            return row(String::new(), Outcome::Wrong(why));
        }
    };
    if spec.compile_error.is_some() {
        let why = "expects a compile error".to_string();
        return row(String::new(), Outcome::Skipped(why));
    }
    let program = match front::load(&src) {
        Ok(p) => p,
        Err(d) => return row(String::new(), Outcome::Wrong(line_col(&src, &d))),
    };
    if let AnyProgram::Imp(_) = program {
        let why = "an IMP program: no FUNMEM stage".to_string();
        return row(String::new(), Outcome::Skipped(why));
    }
    let Some((k, case)) = spec
        .cases
        .iter()
        .enumerate()
        .find(|(_, c)| runs_to_results(c))
    else {
        let compiled = spec.cases.iter().filter(|c| c.compiled).count();
        let errors = spec.cases.len() - compiled;
        let why = format!(
            "no case that runs to results ({compiled} compiled, {errors} expecting an error)"
        );
        return row(String::new(), Outcome::Skipped(why));
    };
    let label = short_label(&case_label(k, case));
    let dir = path.parent().unwrap_or(Path::new("."));
    let inputs = match case_inputs(dir, &crate::input_prims(&program), case, k) {
        Ok(i) => i,
        Err(m) => return row(label, Outcome::Wrong(m)),
    };
    let stage_error = |e: funmem_transforms::pipeline::StageError| match &e.output {
        Some(_) => e.to_string(),
        None => format!("stage `{}`: {}", e.stage, line_col(&src, &e.diagnostic)),
    };
    let run_stage =
        |st: &funmem_transforms::pipeline::Stage| match profile(&st.program, &inputs, limits) {
            Some(Ok(p)) => Ok(p),
            Some(Err(e)) => {
                let d = funmem_lang::diag::Diagnostic::new(
                    funmem_lang::diag::Phase::Eval,
                    e.span,
                    e.to_string(),
                );
                Err(format!("stage `{}`: {}", st.name, line_col(&src, &d)))
            }
            None => Err(format!("stage `{}` has no heap semantics", st.name)),
        };
    if !variants.is_empty() {
        let outcome = match measure_variants(
            &program,
            passes,
            variants,
            provers,
            &stage_error,
            &run_stage,
        ) {
            Ok(o) => o,
            Err(why) => Outcome::Wrong(why),
        };
        return row(label, outcome);
    }
    let stages = match funmem_transforms::pipeline::stages(&program, passes, false, provers) {
        Ok(s) => s,
        Err(e) => return row(label, Outcome::Wrong(stage_error(e))),
    };
    let shown = measured(&stages);
    let mut profiles = Vec::new();
    for st in &shown {
        match run_stage(st) {
            Ok(p) => profiles.push(p),
            Err(why) => return row(label, Outcome::Wrong(why)),
        }
    }
    let outcome = match profiles.as_slice() {
        [one] => Outcome::Measured(one.clone(), vec![one.clone()], Vec::new()),
        [before, after] => Outcome::Measured(before.clone(), vec![after.clone()], Vec::new()),
        _ => Outcome::Wrong("no FUNMEM stage to measure".into()),
    };
    row(label, outcome)
}

/// The variant form of a row: the passes before the last run once, then
/// each variant on their result; the profiles before and after each, and
/// a note for each variant that did not prove its result optimal.
fn measure_variants(
    program: &AnyProgram,
    passes: &[funmem_transforms::Pass],
    variants: &[funmem_transforms::Pass],
    provers: &funmem_oracle::prove::Provers,
    stage_error: &dyn Fn(funmem_transforms::pipeline::StageError) -> String,
    run_stage: &dyn Fn(&funmem_transforms::pipeline::Stage) -> Result<MemProfile, String>,
) -> Result<Outcome, String> {
    let prefix = &passes[..passes.len().saturating_sub(1)];
    let stages = funmem_transforms::pipeline::stages(program, prefix, false, provers)
        .map_err(stage_error)?;
    let Some(before) = stages.iter().rev().find(
        |s| matches!(&s.program, AnyProgram::Fun(q) if q.lang == funmem_lang::ast::Lang::FunMem),
    ) else {
        return Err("no FUNMEM stage to measure".into());
    };
    let before_profile = run_stage(before)?;
    let mut after = Vec::new();
    let mut notes = Vec::new();
    for v in variants {
        let out = funmem_transforms::pipeline::stages(
            &before.program,
            std::slice::from_ref(v),
            false,
            provers,
        )
        .map_err(stage_error)?;
        let Some(st) = out.last() else {
            return Err(format!("stage `{}`: no program", v.name));
        };
        let unproved = st
            .counts
            .0
            .iter()
            .any(|(k, n)| *k == funmem_transforms::reuse::OPTIMAL && *n == 0);
        if unproved {
            notes.push(format!("`{}`: optimum not proved", v.name));
        }
        after.push(run_stage(st)?);
    }
    Ok(Outcome::Measured(before_profile, after, notes))
}

/// A diagnostic's `line:col: message` (the row names the file).
fn line_col(src: &Source, d: &funmem_lang::diag::Diagnostic) -> String {
    let (line, col) = src.line_col(d.span.start);
    format!("{line}:{col}: {}", d.message)
}

/// A case's label for a table cell: a long inline input cut short, on
/// one line.
fn short_label(label: &str) -> String {
    let one_line: String = label.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= CASE_WIDTH {
        return one_line;
    }
    let cut: String = one_line.chars().take(CASE_WIDTH - 1).collect();
    format!("{cut}…")
}

/// The share of `before` that `after` saves, in percent with one decimal
/// (negative when it grew); `-` when `before` is 0.
pub(crate) fn saved(before: u64, after: u64) -> String {
    if before == 0 {
        return if after == 0 { "0.0%" } else { "-" }.to_string();
    }
    let pct = (before as f64 - after as f64) * 100.0 / before as f64;
    format!("{pct:.1}%")
}

/// Text for a Markdown cell: `|` escaped, one line.
pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The table of the rows shown (of `programs`, `skipped` of them skipped),
/// padded so that it also reads as plain text, with a total line (sums
/// over the measured programs) and a note on the columns.
fn markdown(rows: &[&Row], programs: usize, skipped: usize, last: Option<&str>) -> String {
    let header = [
        "program",
        "case",
        "allocations before",
        "allocations after",
        "cells before",
        "cells after",
        "peak before",
        "peak after",
        "peak saved",
        "note",
    ];
    let mut lines: Vec<Vec<String>> = Vec::new();
    let (mut b, mut a) = (MemProfile::default(), MemProfile::default());
    let mut counted = 0;
    for r in rows {
        let mut line = vec![cell(&r.program), cell(&r.case)];
        match &r.outcome {
            Outcome::Measured(before, after, _) => {
                let after = after.last().cloned().unwrap_or_default();
                let after = &after;
                counted += 1;
                b.allocations += before.allocations;
                b.cells += before.cells;
                b.peak += before.peak;
                a.allocations += after.allocations;
                a.cells += after.cells;
                a.peak += after.peak;
                line.extend(numbers(before, after));
                line.push(String::new());
            }
            Outcome::Skipped(why) => {
                line.extend(std::iter::repeat_n("-".to_string(), 7));
                line.push(cell(&format!("skipped: {why}")));
            }
            Outcome::Wrong(why) => {
                line.extend(std::iter::repeat_n("-".to_string(), 7));
                line.push(cell(&format!("went wrong: {why}")));
            }
        }
        lines.push(line);
    }
    let skipped = if skipped > 0 {
        format!(", {skipped} skipped")
    } else {
        String::new()
    };
    let mut total = vec![
        format!("total ({counted} of {programs} programs{skipped})"),
        String::new(),
    ];
    total.extend(numbers(&b, &a));
    total.push(String::new());
    lines.push(total);
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let numeric = |k: usize| (2..=8).contains(&k);
    let format_line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let pad = " ".repeat(width[k] - c.chars().count());
                if numeric(k) {
                    format!("{pad}{c}")
                } else {
                    format!("{c}{pad}")
                }
            })
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = format_line(&header.map(String::from));
    let rule: Vec<String> = width
        .iter()
        .enumerate()
        .map(|(k, &w)| {
            if numeric(k) {
                format!("{}:", "-".repeat(w + 1))
            } else {
                "-".repeat(w + 2)
            }
        })
        .collect();
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for l in &lines {
        out.push_str(&format_line(l));
    }
    let stages = match last {
        Some(pass) => format!("before: the FUNMEM program before `{pass}`, after: after it"),
        None => "no passes: the FUNMEM program, in both columns".to_string(),
    };
    out.push_str(&format!(
        "\n({stages}; heap semantics on the case's inputs; allocations and cells count each run of an `alloc`, once per loop iteration; peak: most cells live at once, a kernel iteration's blocks freed at its end)\n"
    ));
    out
}

/// The seven number cells of a row: allocations, cells and peak, before
/// and after, and the peak saved.
fn numbers(b: &MemProfile, a: &MemProfile) -> Vec<String> {
    vec![
        b.allocations.to_string(),
        a.allocations.to_string(),
        b.cells.to_string(),
        a.cells.to_string(),
        b.peak.to_string(),
        a.peak.to_string(),
        saved(b.peak, a.peak),
    ]
}

/// The rows as a JSON object: the passes, one object per program shown
/// (its numbers, or why it was skipped or went wrong), how many programs
/// were skipped, and the totals.
fn to_json(rows: &[&Row], passes: &str, skipped: usize) -> serde_json::Value {
    let prof = |p: &MemProfile| {
        serde_json::json!({
            "allocations": p.allocations,
            "cells_allocated": p.cells,
            "peak_heap_cells": p.peak,
        })
    };
    let (mut b, mut a) = (MemProfile::default(), MemProfile::default());
    let programs: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| match &r.outcome {
            Outcome::Measured(before, after, _) => {
                let after = after.last().cloned().unwrap_or_default();
                let after = &after;
                b.allocations += before.allocations;
                b.cells += before.cells;
                b.peak += before.peak;
                a.allocations += after.allocations;
                a.cells += after.cells;
                a.peak += after.peak;
                serde_json::json!({
                    "program": r.program,
                    "case": r.case,
                    "before": prof(before),
                    "after": prof(after),
                })
            }
            Outcome::Skipped(why) => {
                serde_json::json!({ "program": r.program, "case": r.case, "skipped": why })
            }
            Outcome::Wrong(why) => {
                serde_json::json!({ "program": r.program, "case": r.case, "went_wrong": why })
            }
        })
        .collect();
    serde_json::json!({
        "passes": passes,
        "programs": programs,
        "skipped": skipped,
        "total": { "before": prof(&b), "after": prof(&a) },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_saved_is_a_percentage_of_the_peak_before() {
        assert_eq!(saved(200, 150), "25.0%");
        assert_eq!(saved(100, 100), "0.0%");
        assert_eq!(saved(100, 300), "-200.0%");
        assert_eq!(saved(0, 0), "0.0%");
        assert_eq!(saved(0, 5), "-");
    }

    #[test]
    fn long_case_labels_are_cut_to_one_short_line() {
        assert_eq!(
            short_label("case 0 (input { 1 2 })"),
            "case 0 (input { 1 2 })"
        );
        let long = short_label("case 3 (input { [1, 2, 3, 4, 5, 6, 7, 8]\n [9, 10, 11, 12, 13] })");
        assert_eq!(long.chars().count(), CASE_WIDTH);
        assert!(long.starts_with("case 3 (input { [1, 2, 3") && long.ends_with('…'));
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
