//! `funmem stats FILE --passes P --input F`: what memory a program needs,
//! before and after the last pass of a list (the ones before it run in
//! both): allocations left inside kernels (what a
//! GPU cannot run), allocations inside sequential loops (each runs once per
//! iteration), and, on the inputs, allocations made, cells allocated and
//! the peak heap (heap semantics; see `MemProfile`). The run counts every
//! allocation each time it runs, so one inside a loop counts once per
//! iteration; a loop iteration's blocks are not freed at its end (the next
//! iteration may hold them through its parameters), a kernel iteration's
//! are. It also counts the `reduce` and `scan` expressions of each stage
//! (in kernels too): the parallel operations besides kernels.
//!
//! With `--table`, several paths or a folder, it measures every program
//! under them on its own test case instead, as one table
//! (`stats_table`); [`measured`] and [`profile`] are shared by both. With
//! `--variants`, the table compares passes put in turn in the last pass's
//! place (`stats_variants`).

use crate::{load, pass_list, pipeline, read_inputs, report, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_lang::ast::{Body, ExpKind, Lang, Program, RedOp};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::parse::AnyProgram;
use funmem_semantics::error::{EvalError, Limits};
use funmem_semantics::observer::MemProfile;
use funmem_semantics::run::{run, RunOptions, Semantics};
use funmem_semantics::value::Value;
use funmem_transforms::expand::allocs_in_kernels;
use funmem_transforms::pipeline::Stage;
use std::process::ExitCode;

/// Options of `funmem stats`.
#[derive(clap::Args)]
pub struct Args {
    /// The program (.fun or .funmem); with --table, several paths or a
    /// folder: every program file under them, each on its test block's
    /// first case that runs to results.
    #[arg(required = true)]
    paths: Vec<String>,
    /// The passes whose effect to measure, comma-separated.
    #[arg(long, default_value = "simplify,expand-gpu")]
    passes: String,
    /// Read the inputs from this file instead of standard input (one
    /// program only).
    #[arg(long)]
    input: Option<String>,
    /// One Markdown table for every program under the paths: allocations,
    /// cells allocated and peak heap before and after the last pass.
    #[arg(long)]
    table: bool,
    /// With --table: each of these passes (comma-separated) in turn in
    /// place of the last pass of --passes; the table has the allocations
    /// and peak heap before the last pass and after each variant, e.g.
    /// `--passes simplify,coalesce,reuse --variants
    /// reuse-first-fit,reuse,reuse-optimal`.
    #[arg(long)]
    variants: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Leave out of a table the rows of programs skipped (no test case to
    /// measure); its total line still counts them.
    #[arg(long)]
    hide_skipped: bool,
    /// Most statements and kernel iterations to evaluate per stage;
    /// default 10^8, and 10^7 for each program of a table (docs/limits.md).
    #[arg(long)]
    fuel: Option<u64>,
    /// Most heap cells to allocate per stage; default half of this
    /// machine's free memory at 32 bytes a cell, and 10^7 for each program
    /// of a table (docs/limits.md).
    #[arg(long)]
    max_heap: Option<u64>,
}

/// The fuel of each stage of a program of a table: enough for the
/// corpora's test cases, small enough that a whole corpus runs in seconds.
pub(crate) const TABLE_FUEL: u64 = 10_000_000;
/// The heap limit, in cells, of each stage of a program of a table.
pub(crate) const TABLE_MAX_HEAP: u64 = 10_000_000;

struct Row {
    stage: String,
    allocs_in_kernels: usize,
    allocs_in_loops: usize,
    /// `reduce` and `scan` expressions.
    reductions: (usize, usize),
    /// Read sites outside kernels (`HostRead`).
    host_read_sites: usize,
    profile: MemProfile,
}

/// The `reduce` and `scan` expressions of a program, at any depth.
fn reductions(p: &Program) -> (usize, usize) {
    fn walk(b: &Body, n: &mut (usize, usize)) {
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::Reduce(op, ..) | ExpKind::Scan(op, ..) => {
                    if matches!(s.exp.kind, ExpKind::Reduce(..)) {
                        n.0 += 1;
                    } else {
                        n.1 += 1;
                    }
                    if let RedOp::Lambda(l) = op {
                        walk(&l.body, n);
                    }
                }
                ExpKind::Loop(_, _, _, lb) => walk(lb, n),
                ExpKind::Kernel(_, _, kb) => walk(kb, n),
                ExpKind::If(_, b1, b2) => {
                    walk(b1, n);
                    walk(b2, n);
                }
                _ => {}
            }
        }
    }
    let mut n = (0, 0);
    walk(&p.body, &mut n);
    n
}

/// The `alloc` statements inside the bodies of sequential loops (at any
/// depth, in kernels too): each runs once per iteration.
fn allocs_in_loops(p: &Program) -> usize {
    fn walk(b: &Body, in_loop: bool) -> usize {
        b.stms
            .iter()
            .map(|s| match &s.exp.kind {
                ExpKind::Alloc(..) => usize::from(in_loop),
                ExpKind::Loop(_, _, _, lb) => walk(lb, true),
                ExpKind::Kernel(_, _, kb) => walk(kb, in_loop),
                ExpKind::If(_, b1, b2) => walk(b1, in_loop) + walk(b2, in_loop),
                _ => 0,
            })
            .sum()
    }
    walk(&p.body, false)
}

/// The FUNMEM stages that `stats` measures: the program before the last
/// pass and after it; with one FUNMEM stage, that one alone.
pub(crate) fn measured(stages: &[Stage]) -> Vec<&Stage> {
    let mem: Vec<&Stage> = stages
        .iter()
        .filter(|s| matches!(&s.program, AnyProgram::Fun(q) if q.lang == Lang::FunMem))
        .collect();
    match mem.as_slice() {
        [] => Vec::new(),
        [one] => vec![*one],
        [.., before, after] => vec![*before, *after],
    }
}

/// The memory profile of one run of `p` on `inputs` under the heap
/// semantics; `None` when the program has none.
pub(crate) fn profile(
    p: &AnyProgram,
    inputs: &[Value],
    limits: Limits,
) -> Option<Result<MemProfile, EvalError>> {
    let mut prof = MemProfile::default();
    let opts = RunOptions {
        limits,
        race_check: false,
    };
    run(p, Semantics::Heap, inputs, opts, &mut prof).map(|r| r.map(|_| prof))
}

/// Runs the command: one program on its inputs, or, with `--table`,
/// several paths or a folder, the table of every program under them.
pub fn stats(args: Args) -> Result<ExitCode, ExitCode> {
    let passes = pass_list(&args.passes)?;
    let table = args.table
        || args.paths.len() > 1
        || args.paths.iter().any(|p| std::path::Path::new(p).is_dir());
    if table {
        if args.input.is_some() {
            eprintln!(
                "funmem stats: --input takes one program; a table runs each program's first test case"
            );
            return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
        }
        let limits = Limits {
            fuel: args.fuel.unwrap_or(TABLE_FUEL),
            max_heap: args.max_heap.unwrap_or(TABLE_MAX_HEAP),
        };
        let form = crate::stats_table::Form {
            json: args.json,
            hide_skipped: args.hide_skipped,
        };
        let variants = match &args.variants {
            Some(v) => pass_list(v)?,
            None => Vec::new(),
        };
        if args.variants.is_some() && (variants.is_empty() || passes.is_empty()) {
            eprintln!(
                "funmem stats: --variants replaces the last pass of --passes: give both at least one pass"
            );
            return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
        }
        return crate::stats_table::table(
            &args.paths,
            &args.passes,
            &passes,
            &variants,
            limits,
            form,
        );
    }
    if args.variants.is_some() {
        eprintln!("funmem stats: --variants takes a table (--table, several paths or a folder)");
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let file = &args.paths[0];
    let machine = Limits::for_this_machine();
    let limits = Limits {
        fuel: args.fuel.unwrap_or(machine.fuel),
        max_heap: args.max_heap.unwrap_or(machine.max_heap),
    };
    let (src, p) = load(file)?;
    if let AnyProgram::Imp(_) = p {
        eprintln!("{file}: stats takes a FUN or FUNMEM program");
        return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
    }
    let stages = pipeline(file, &src, &p, &passes, false)?;
    let inputs = read_inputs(args.input.as_deref())?;
    let shown = measured(&stages);
    if shown.is_empty() {
        eprintln!("{file}: no FUNMEM stage to measure");
        return Err(ExitCode::from(EXIT_WENT_WRONG));
    }
    let mut rows = Vec::new();
    for st in shown {
        let AnyProgram::Fun(q) = &st.program else {
            continue;
        };
        let prof = match profile(&st.program, &inputs, limits) {
            Some(Ok(prof)) => prof,
            Some(Err(e)) => {
                eprintln!("{file}: stage `{}`:", st.name);
                report(&src, &Diagnostic::new(Phase::Eval, e.span, e.to_string()));
                return Err(ExitCode::from(EXIT_WENT_WRONG));
            }
            None => {
                eprintln!(
                    "{file}: stage `{}` has no heap semantics to measure",
                    st.name
                );
                return Err(ExitCode::from(EXIT_NOT_A_PROGRAM));
            }
        };
        rows.push(Row {
            stage: st.name.clone(),
            allocs_in_kernels: allocs_in_kernels(q).len(),
            allocs_in_loops: allocs_in_loops(q),
            reductions: reductions(q),
            host_read_sites: funmem_lang::count::host_reads(&q.body),
            profile: prof,
        });
    }
    if args.json {
        let j: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "stage": r.stage,
                    "allocs_in_kernels": r.allocs_in_kernels,
                    "allocs_in_loops": r.allocs_in_loops,
                    "reduces": r.reductions.0,
                    "scans": r.reductions.1,
                    "allocations": r.profile.allocations,
                    "allocations_in_kernels_run": r.profile.allocations_in_kernels,
                    "cells_allocated": r.profile.cells,
                    "peak_heap_cells": r.profile.peak,
                    "host_read_sites": r.host_read_sites,
                    "host_reads_run": r.profile.host_reads,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({ "file": file, "passes": args.passes, "stages": j })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let w = rows.iter().map(|r| r.stage.len()).max().unwrap_or(5).max(6);
    println!(
        "{:<w$}  {:>17}  {:>15}  {:>13}  {:>11}  {:>17}  {:>15}  {:>15}  {:>10}  {:>10}",
        "stage",
        "allocs in kernels",
        "allocs in loops",
        "reduces/scans",
        "allocations",
        "of them in kernels",
        "cells allocated",
        "peak heap cells",
        "read sites",
        "reads/run"
    );
    for r in &rows {
        println!(
            "{:<w$}  {:>17}  {:>15}  {:>13}  {:>11}  {:>17}  {:>15}  {:>15}  {:>10}  {:>10}",
            r.stage,
            r.allocs_in_kernels,
            r.allocs_in_loops,
            format!("{}/{}", r.reductions.0, r.reductions.1),
            r.profile.allocations,
            r.profile.allocations_in_kernels,
            r.profile.cells,
            r.profile.peak,
            r.host_read_sites,
            r.profile.host_reads
        );
    }
    println!("(allocs in kernels / in loops: `alloc` statements inside kernel / loop bodies; reduces/scans: `reduce` and `scan` expressions; allocations and cells count each run of one, once per loop iteration; peak heap cells: most cells live at once when each kernel iteration's blocks are freed at its end, a loop iteration's are not; read sites: synchronous device-to-host reads in the text, outside kernels (HostRead); reads/run: how many such reads this run made)");
    Ok(ExitCode::SUCCESS)
}
