//! Passes that scale: large generated programs go through the command line
//! within a generous time bound, so that a step quadratic in the program's
//! size (which takes minutes at these sizes) fails the test. The programs
//! come from `funmem_oracle::big`; `cargo bench --bench passes` measures the
//! curve.

use funmem_oracle::big::{deep, program, Shape};
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A generous bound for the debug binary: a linear pipeline takes seconds
/// on these programs, a quadratic step minutes.
const BOUND: Duration = Duration::from_secs(120);

fn write_temp(name: &str, text: &str) -> PathBuf {
    PathBuf::from(common::write_temp(name, text))
}

/// Runs `funmem args file`, killing it after [`BOUND`]; asserts exit 0 and
/// returns the output.
fn funmem_bounded(args: &[&str], file: &Path) -> String {
    let mut all = args.to_vec();
    all.push(file.to_str().expect("a UTF-8 temp path"));
    let o = common::funmem_bounded(&all, "", 0, BOUND);
    common::assert_exit(&o, 0);
    common::text(&o.stdout)
}

fn count_lines_starting(text: &str, prefix: &str) -> usize {
    text.lines()
        .filter(|l| l.trim_start().starts_with(prefix))
        .count()
}

#[test]
fn many_iotas_lower_to_imp_and_simplify_in_linear_time() {
    // The case: every iota's array is a result of the program.
    let n = 10_000;
    let f = write_temp("iotas.fun", &program(Shape::Iotas, n));
    let imp = funmem_bounded(
        &["lower", "--to", "imp", "--passes", "simplify,expand-gpu"],
        &f,
    );
    // Each iota becomes a kernel writing its own block, and is returned.
    assert_eq!(count_lines_starting(&imp, "kernel "), n, "{}", &imp[..500]);
    assert_eq!(imp.matches(" <- alloc n;").count(), n);
    // Returned in place, with no copy.
    let out = imp.lines().last().unwrap_or_default();
    assert!(
        out.starts_with("out (a0: [n]int @ a0_mem -> R(n), a1: "),
        "{out}"
    );
    assert_eq!(out.matches(" -> R(n)").count(), n);
    let mem = funmem_bounded(&["opt", "--passes", "simplify"], &f);
    assert_eq!(mem.matches(" = iota n").count(), n);
    assert_eq!(mem.matches(" = alloc ").count(), n);
    // The copies of the results to fresh blocks are gone: iota's arrays are
    // row-major already.
    assert_eq!(mem.matches("copy").count(), 0);
}

#[test]
fn many_kernels_go_through_the_gpu_pipeline_in_linear_time() {
    let n = 10_000;
    let f = write_temp("mixed.fun", &program(Shape::Mixed, n));
    let text = std::fs::read_to_string(&f).expect("program");
    let kernels = text.matches("kernel ").count();
    assert!(kernels > n / 4, "{kernels}");
    let imp = funmem_bounded(
        &["lower", "--to", "imp", "--passes", "simplify,expand-gpu"],
        &f,
    );
    // Every kernel stays (they may get stuck), every iota becomes one, and
    // so does the copy of each nested kernel's row into its result.
    let iotas = text.matches("= iota n").count();
    let nested = text.matches("(row: [m]int) = kernel").count();
    assert!(nested > 0);
    assert_eq!(
        count_lines_starting(&imp, "kernel "),
        kernels + iotas + nested
    );
    // expand-gpu hoisted every nested kernel's row allocation.
    let mem = funmem_bounded(&["opt", "--passes", "simplify,expand-gpu"], &f);
    assert_eq!(mem.matches(" = kernel ").count(), kernels);
    let allocs_at_top = mem
        .lines()
        .filter(|l| l.starts_with("  let (") && l.contains(" = alloc "))
        .count();
    assert!(allocs_at_top >= nested, "{allocs_at_top} < {nested}");
}

#[test]
fn a_long_scalar_chain_and_deep_nesting_lower() {
    let f = write_temp("scalars.fun", &program(Shape::Scalars, 20_000));
    let imp = funmem_bounded(&["lower", "--to", "imp"], &f);
    assert!(count_lines_starting(&imp, "var s") >= 20_000);
    // Kernels in ifs in kernels, as deep as the parser allows.
    let f = write_temp("deep.fun", &deep(48));
    let imp = funmem_bounded(&["lower", "--to", "imp"], &f);
    assert_eq!(count_lines_starting(&imp, "kernel "), 24);
    assert_eq!(count_lines_starting(&imp, "if "), 24);
}
