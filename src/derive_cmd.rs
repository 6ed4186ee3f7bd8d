//! `funmem derive`: a small run as the derivation tree of the paper's
//! rules, as indented text or as LaTeX (docs/cli.md).

use crate::step_cmd::{print_lines, record, Common};
use crate::EXIT_WENT_WRONG;
use funmem_teach::derive::{derive as derive_tree, latex, text};
use std::process::ExitCode;

/// Most nodes of a derivation unless told (`--max-nodes`).
pub const DEFAULT_NODES: usize = 300;

/// `funmem derive` arguments.
#[derive(clap::Args)]
pub struct DeriveArgs {
    #[command(flatten)]
    pub common: Common,
    /// Print a standalone LaTeX document (bussproofs) instead of text.
    #[arg(long)]
    pub latex: bool,
    /// Most nodes of the derivation (at most 20000); a larger one is
    /// refused.
    #[arg(long, default_value_t = DEFAULT_NODES)]
    pub max_nodes: usize,
}

/// Most nodes `--max-nodes` may allow: a derivation is for reading.
pub const MOST_NODES: usize = 20_000;

/// `funmem derive`.
pub fn derive(a: DeriveArgs) -> Result<ExitCode, ExitCode> {
    if a.max_nodes > MOST_NODES {
        eprintln!(
            "--max-nodes {} is too large: a derivation may have at most {MOST_NODES} nodes",
            a.max_nodes
        );
        return Err(ExitCode::from(crate::EXIT_NOT_A_PROGRAM));
    }
    // A FUN body's derivation is a chain of E-LETs as long as the body:
    // the trees are built and written by recursion, on a stack to match.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || derive_here(a))
        .ok()
        .and_then(|h| h.join().ok())
        .unwrap_or_else(|| {
            eprintln!("funmem derive: could not start its thread");
            Err(ExitCode::from(EXIT_WENT_WRONG))
        })
}

fn derive_here(a: DeriveArgs) -> Result<ExitCode, ExitCode> {
    // Every step but a statement's end makes at least one node: twice the
    // nodes is enough steps to know the derivation is too large.
    let budget = a.max_nodes.saturating_mul(2).saturating_add(8);
    let (subject, rec) = record(&a.common, budget)?;
    let steps = rec.trace.steps.len() as u64 + rec.trace.cut;
    let too_large = || {
        eprintln!(
            "{}: the derivation has more than {} nodes (the run took {steps} steps); give a smaller input or raise --max-nodes",
            a.common.file, a.max_nodes
        );
        ExitCode::from(EXIT_WENT_WRONG)
    };
    if rec.trace.cut > 0 {
        return Err(too_large());
    }
    let d = derive_tree(&subject, &rec.trace);
    if d.root.size() > a.max_nodes {
        return Err(too_large());
    }
    if a.latex {
        let title = format!("{} ({})", subject.source.name, subject.title);
        print_lines(&[latex(&d, &title)]);
    } else {
        print_lines(&text(&d));
    }
    if let Some(m) = &d.stuck {
        eprintln!(
            "{}: the run went wrong: {m} (the derivation stops there)",
            a.common.file
        );
        return Ok(ExitCode::from(EXIT_WENT_WRONG));
    }
    Ok(ExitCode::SUCCESS)
}
