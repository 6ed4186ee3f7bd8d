//! The variant form of `funmem stats --table` (`--variants A,B,C`): one
//! row per program with its allocations and peak heap before the last pass
//! of `--passes` and after each variant put in its place, Markdown or JSON.
//! It compares strategies of one pass on a whole corpus: for memory block
//! reuse, the thesis's linear scan (`reuse-first-fit`), size-aware
//! colouring (`reuse`) and the exact search (`reuse-optimal`). The rows
//! come from `stats_table`, which measures them; this module only prints.

use crate::stats_table::{cell, saved, Outcome, Row};
use funmem_semantics::observer::MemProfile;

/// Sums of the measured rows: before, and after each variant.
struct Totals {
    counted: usize,
    before: MemProfile,
    after: Vec<MemProfile>,
}

fn add(sum: &mut MemProfile, p: &MemProfile) {
    sum.allocations += p.allocations;
    sum.cells += p.cells;
    sum.peak += p.peak;
}

fn totals(rows: &[&Row], variants: usize) -> Totals {
    let mut t = Totals {
        counted: 0,
        before: MemProfile::default(),
        after: vec![MemProfile::default(); variants],
    };
    for r in rows {
        if let Outcome::Measured(before, after, _) = &r.outcome {
            t.counted += 1;
            add(&mut t.before, before);
            for (sum, p) in t.after.iter_mut().zip(after) {
                add(sum, p);
            }
        }
    }
    t
}

/// The number cells of a row: allocations and peak before, then per
/// variant.
fn numbers(before: &MemProfile, after: &[MemProfile]) -> Vec<String> {
    let mut v = vec![before.allocations.to_string(), before.peak.to_string()];
    for a in after {
        v.push(a.allocations.to_string());
        v.push(a.peak.to_string());
    }
    v
}

/// The table of the rows shown (of `programs`, `skipped` of them skipped):
/// program, case, allocations and peak before the last pass (`last`) and
/// after each of `variants`, a note; padded to read as plain text, with a
/// total line (sums over the measured programs, and each variant's peak
/// saved against the total before) and a note on the columns.
pub(crate) fn markdown(
    rows: &[&Row],
    programs: usize,
    skipped: usize,
    last: Option<&str>,
    variants: &[&str],
) -> String {
    let mut header: Vec<String> = ["program", "case", "allocations before", "peak before"]
        .map(String::from)
        .to_vec();
    for v in variants {
        header.push(format!("allocations {v}"));
        header.push(format!("peak {v}"));
    }
    header.push("note".into());
    let numbers_n = 2 + 2 * variants.len();
    let mut lines: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let mut line = vec![cell(&r.program), cell(&r.case)];
        match &r.outcome {
            Outcome::Measured(before, after, notes) => {
                line.extend(numbers(before, after));
                line.push(cell(&notes.join("; ")));
            }
            Outcome::Skipped(why) => {
                line.extend(std::iter::repeat_n("-".to_string(), numbers_n));
                line.push(cell(&format!("skipped: {why}")));
            }
            Outcome::Wrong(why) => {
                line.extend(std::iter::repeat_n("-".to_string(), numbers_n));
                line.push(cell(&format!("went wrong: {why}")));
            }
        }
        lines.push(line);
    }
    let t = totals(rows, variants.len());
    let skipped_text = if skipped > 0 {
        format!(", {skipped} skipped")
    } else {
        String::new()
    };
    let mut total = vec![
        format!("total ({} of {programs} programs{skipped_text})", t.counted),
        String::new(),
    ];
    total.extend(numbers(&t.before, &t.after));
    let saved_by: Vec<String> = variants
        .iter()
        .zip(&t.after)
        .map(|(v, a)| format!("{v} {}", saved(t.before.peak, a.peak)))
        .collect();
    total.push(format!("peak saved: {}", saved_by.join(", ")));
    lines.push(total);
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for l in &lines {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let numeric = |k: usize| (2..2 + numbers_n).contains(&k);
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
    let mut out = format_line(&header);
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
    let last = last.unwrap_or("the last pass");
    out.push_str(&format!(
        "\n(before: the FUNMEM program before `{last}`; each variant: after it in `{last}`'s place; heap semantics on the case's inputs; allocations count each run of an `alloc`, once per loop iteration; peak: most cells live at once, a kernel iteration's blocks freed at its end)\n"
    ));
    out
}

/// The rows as a JSON object: the passes and variants, one object per
/// program shown (`before` and one `variants` entry per variant, or why it
/// was skipped or went wrong), how many were skipped, and the totals.
pub(crate) fn to_json(
    rows: &[&Row],
    passes: &str,
    variants: &[&str],
    skipped: usize,
) -> serde_json::Value {
    let prof = |p: &MemProfile| {
        serde_json::json!({
            "allocations": p.allocations,
            "cells_allocated": p.cells,
            "peak_heap_cells": p.peak,
        })
    };
    let each = |after: &[MemProfile]| -> Vec<serde_json::Value> {
        variants
            .iter()
            .zip(after)
            .map(|(v, a)| {
                let mut o = prof(a);
                o["pass"] = serde_json::json!(v);
                o
            })
            .collect()
    };
    let programs: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| match &r.outcome {
            Outcome::Measured(before, after, notes) => serde_json::json!({
                "program": r.program,
                "case": r.case,
                "before": prof(before),
                "variants": each(after),
                "notes": notes,
            }),
            Outcome::Skipped(why) => {
                serde_json::json!({ "program": r.program, "case": r.case, "skipped": why })
            }
            Outcome::Wrong(why) => {
                serde_json::json!({ "program": r.program, "case": r.case, "went_wrong": why })
            }
        })
        .collect();
    let t = totals(rows, variants.len());
    serde_json::json!({
        "passes": passes,
        "variants": variants,
        "programs": programs,
        "skipped": skipped,
        "total": { "programs": t.counted, "before": prof(&t.before), "variants": each(&t.after) },
    })
}
