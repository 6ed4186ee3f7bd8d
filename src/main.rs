//! `funmem`: the command line (DESIGN.md §6). Thin: every command calls the
//! workspace's crates and maps their outcome to an exit code:
//! 0 success, 1 the program went wrong, 2 not a program or bad command line.

use clap::{Parser, Subcommand};
use funmem_lang::diag::Diagnostic;
use funmem_lang::Source;
use std::io::IsTerminal;
use std::process::ExitCode;

/// A research testbed for memory optimisations in a data-parallel functional compiler.
#[derive(Parser)]
#[command(name = "funmem", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
}

/// Exit code for input that is not a well-typed program, or a bad command line.
const EXIT_NOT_A_PROGRAM: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Front ends and interpreters recurse over trees (bounded by the
    // parser's nesting limit); give them a generous stack.
    let run = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(cli));
    match run.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!("funmem: internal error");
            ExitCode::from(101)
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Check { file } => match load(&file) {
            Ok(_) => ExitCode::SUCCESS,
            Err(code) => code,
        },
        Command::Print { file } => match load(&file) {
            Ok(p) => {
                print!("{}", p.print());
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
    }
}

/// Reads, parses and checks a file, reporting any problem on stderr.
fn load(file: &str) -> Result<funmem_lang::parse::AnyProgram, ExitCode> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        eprintln!("{file}: cannot read: {e}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })?;
    let src = Source::new(file, text);
    funmem_lang::front::load(&src).map_err(|d| {
        report(&src, &d);
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })
}

fn report(src: &Source, d: &Diagnostic) {
    eprint!("{}", d.render(src, std::io::stderr().is_terminal()));
}
