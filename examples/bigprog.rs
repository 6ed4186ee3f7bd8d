//! Writes a large generated FUN program to standard output, for timing the
//! command line on big inputs: `cargo run --release --example bigprog --
//! SHAPE N` (SHAPE: iotas, kernels, scalars, mixed, or deep for N levels of
//! nesting).

use funmem_oracle::big::{deep, program, Shape};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bigprog iotas|kernels|scalars|mixed|deep N";
    let [shape, n] = args.as_slice() else {
        eprintln!("{usage}");
        return std::process::ExitCode::from(2);
    };
    let Ok(n) = n.parse::<usize>() else {
        eprintln!("{usage}");
        return std::process::ExitCode::from(2);
    };
    let text = if shape == "deep" {
        deep(n.max(1))
    } else if let Some(s) = Shape::from_name(shape) {
        program(s, n)
    } else {
        eprintln!("{usage}");
        return std::process::ExitCode::from(2);
    };
    print!("{text}");
    std::process::ExitCode::SUCCESS
}
