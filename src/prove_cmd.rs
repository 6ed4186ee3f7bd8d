//! `funmem prove FILE...`: discharge the obligations of obligation files
//! (docs/obligations.md) and report each one's outcome, prover and time.

use crate::{EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_lang::obligation::{parse_obligations, Expect, Obligation, Outcome, Prover, Verdict};
use funmem_lang::Source;
use funmem_oracle::prove::{smt, z3, Provers, Which};
use std::process::ExitCode;

/// Options of `funmem prove`.
#[derive(clap::Args)]
pub struct Args {
    /// Obligation files (.obl), or folders to search for them.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Which provers to run: all (LMAD procedure, search, Z3), lmad, search, z3, z3-bare.
    #[arg(long, default_value = "all")]
    prover: String,
    /// Z3's time limit per obligation, in milliseconds.
    #[arg(long, default_value_t = Provers::default().timeout_ms)]
    timeout_ms: u32,
    /// Print one JSON object per obligation instead of a table.
    #[arg(long)]
    json: bool,
    /// Print each obligation's SMT-LIB2 query (with lemmas) and prove nothing.
    #[arg(long)]
    smt: bool,
}

/// Runs the command.
pub fn prove(args: Args) -> Result<ExitCode, ExitCode> {
    let which: Which = args.prover.parse().map_err(|e: String| {
        eprintln!("funmem: {e}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })?;
    let provers = Provers {
        which,
        timeout_ms: args.timeout_ms,
        memo: false,
        ..Provers::default()
    };
    let mut all: Vec<(String, Obligation)> = Vec::new();
    let paths: Vec<std::path::PathBuf> = args.paths.iter().map(Into::into).collect();
    let walk = funmem_lang::files::walk(&paths, funmem_oracle::prove::is_obligation_file).map_err(
        |m| {
            eprintln!("{m}");
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        },
    )?;
    for s in &walk.skipped {
        eprintln!("{s}");
    }
    for file in walk.files {
        let file = file.to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).map_err(|e| {
            eprintln!("{file}: cannot read: {e}");
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        })?;
        let src = Source::new(&file, text);
        let obs = parse_obligations(&src.text).map_err(|d| {
            crate::report(&src, &d);
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        })?;
        all.extend(obs.into_iter().map(|o| (file.clone(), o)));
    }
    if args.smt {
        for (_, o) in &all {
            print!("{}", smt::query(o, true).script());
            println!();
        }
        return Ok(ExitCode::SUCCESS);
    }
    if matches!(which, Which::All | Which::Z3 | Which::Z3Bare) {
        if let Err(e) = z3::version() {
            eprintln!("funmem: warning: {e}; Z3 will answer unknown");
        }
    }
    let width = all.iter().map(|(_, o)| o.name.len()).max().unwrap_or(0);
    let mut bad = 0;
    let mut times = Vec::new();
    let mut counts = [0usize; 3];
    for (file, o) in &all {
        let v = provers.prove(o);
        times.push(v.time.as_secs_f64() * 1e3);
        counts[match v.outcome {
            Outcome::Proved => 0,
            Outcome::Refuted(_) => 1,
            Outcome::Unknown(_) => 2,
        }] += 1;
        let met = match o.expect {
            Some(e) => v.outcome.meets(e),
            None => !matches!(v.outcome, Outcome::Refuted(_)),
        };
        if !met {
            bad += 1;
        }
        if args.json {
            println!("{}", json_line(file, o, &v, met));
        } else {
            let mark = match (o.expect, met) {
                (Some(e), false) => format!("  MISMATCH: expected {e}"),
                _ => String::new(),
            };
            println!(
                "{:<width$}  {:<7}  {:<6}  {:>9.3} ms{}{mark}",
                o.name,
                v.outcome.word(),
                v.prover,
                v.time.as_secs_f64() * 1e3,
                detail(&v),
            );
        }
    }
    if !args.json {
        times.sort_by(f64::total_cmp);
        let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
        let max = times.last().copied().unwrap_or(0.0);
        println!(
            "{} obligations: {} proved, {} refuted, {} unknown; {} not as expected; median {:.3} ms, max {:.3} ms",
            all.len(),
            counts[0],
            counts[1],
            counts[2],
            bad,
            median,
            max
        );
    }
    Ok(if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_WENT_WRONG)
    })
}

fn detail(v: &Verdict) -> String {
    match &v.outcome {
        Outcome::Proved => String::new(),
        Outcome::Refuted(c) => format!("  counterexample: {c}"),
        Outcome::Unknown(why) => format!("  ({why})"),
    }
}

fn json_line(file: &str, o: &Obligation, v: &Verdict, met: bool) -> String {
    let mut j = serde_json::json!({
        "file": file,
        "name": o.name,
        "claim": o.claim.to_string(),
        "facts": o.facts.iter().map(|f| funmem_lang::print::sexp_string(&f.exp)).collect::<Vec<_>>(),
        "outcome": v.outcome.word(),
        "prover": v.prover,
        "time_ms": v.time.as_secs_f64() * 1e3,
        "expect": o.expect.map(|e: Expect| e.to_string()),
        "as_expected": met,
    });
    match &v.outcome {
        Outcome::Refuted(c) => {
            j["counterexample"] = serde_json::json!({ "values": c.values, "indices": c.indices });
        }
        Outcome::Unknown(why) => j["reason"] = serde_json::json!(why),
        Outcome::Proved => {}
    }
    j.to_string()
}
