//! Runs that would take all of the machine's memory or time end in a clean
//! error instead (docs/limits.md): a heap-limit or fuel error with its
//! position and exit code 1, never an abort (134) or the kernel's kill.
//! Each command runs under a bound this harness enforces: an address-space
//! limit (`ulimit -v`) where memory is the point, and a wall-clock bound
//! after which it is killed and the test fails.

mod common;

use common::{assert_exit, write_temp};
use std::process::Output;
use std::time::Duration;

/// As [`common::funmem_bounded`], the bound in seconds.
fn funmem_bounded(args: &[&str], stdin: &str, vmem_kib: u64, secs: u64) -> Output {
    common::funmem_bounded(args, stdin, vmem_kib, Duration::from_secs(secs))
}

fn stderr(o: &Output) -> String {
    common::text(&o.stderr)
}

const IOTA: &str = "def main (n: int) = let (a: [n]int) = iota n in (a)\n";

/// A kernel that does nothing n times and allocates nothing (each
/// iteration gives an empty row).
const IDLE: &str = "def main (n: int) (z: int) =\n  let (a: [n][z]int) = kernel i < n do\n    let (e: [z]int) = iota z\n    in (e)\n  in (n)\n";

/// 2 GB of address space: the default heap limit must fit in it.
const TWO_GB: u64 = 2_000_000;

#[test]
fn a_billion_cells_fail_cleanly_under_a_memory_bound() {
    let f = write_temp("iota.fun", IOTA);
    let o = funmem_bounded(&["run", &f], "1000000000", TWO_GB, 120);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("E-IOTA: heap limit of"), "{err}");
    assert!(err.contains("--max-heap"), "{err}");
    assert!(err.contains("iota.fun:1:21"), "{err}");
}

#[test]
fn an_explicit_small_heap_fails_cleanly() {
    let f = write_temp("iota.fun", IOTA);
    let o = funmem_bounded(&["run", &f, "--max-heap", "1000"], "1001", TWO_GB, 60);
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("heap limit of 1000 cells exceeded: allocating 1001 cells"),
        "{err}"
    );
    let o = funmem_bounded(&["run", &f, "--max-heap", "1000"], "1000", TWO_GB, 60);
    assert_exit(&o, 0);
}

#[test]
fn a_heap_larger_than_memory_is_refused_not_aborted() {
    // The limit says yes; the system says no: still exit 1.
    let f = write_temp("iota.fun", IOTA);
    let o = funmem_bounded(
        &["run", &f, "--max-heap", "100000000000"],
        "10000000000",
        TWO_GB,
        60,
    );
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("the system refused memory"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn results_are_streamed() {
    // 3·10^6 elements print as about 30 MB of text; the limit leaves no
    // room for both the text and another copy of the values.
    let f = write_temp("iota.fun", IOTA);
    let o = funmem_bounded(&["run", &f], "3000000", 400_000, 120);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("[0i64, 1i64, "),
        "{}",
        &out[..out.len().min(80)]
    );
    assert!(out.ends_with("2999999i64]\n"));
}

#[test]
fn a_huge_input_array_counts_against_the_heap() {
    let f = write_temp(
        "sum.fun",
        "def main (n: int) (xs: [n]int) = let (y: int) = xs[0] in (y)\n",
    );
    let xs: Vec<String> = (0..100_000).map(|k| k.to_string()).collect();
    let input = format!("100000 [{}]", xs.join(", "));
    let o = funmem_bounded(&["run", &f, "--max-heap", "50000"], &input, TWO_GB, 60);
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("heap limit of 50000 cells"),
        "{}",
        stderr(&o)
    );
    let o = funmem_bounded(&["run", &f], &input, TWO_GB, 60);
    assert_exit(&o, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "0i64\n");
}

#[test]
fn a_huge_kernel_runs_out_of_fuel() {
    let f = write_temp("idle.fun", IDLE);
    // Debug builds are slow: the default fuel is tested below, on its value.
    let o = funmem_bounded(
        &["run", &f, "--fuel", "1000000"],
        "1000000000000 0",
        TWO_GB,
        120,
    );
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("fuel of 1000000 statements"), "{err}");
    assert!(err.contains("--fuel N"), "{err}");
    // The same in FUNMEM's heap semantics and in IMP.
    for to in ["funmem", "imp"] {
        let lowered = funmem_bounded(&["lower", &f, "--to", to], "", 0, 60);
        assert_exit(&lowered, 0);
        let g = write_temp(
            &format!("idle.{to}"),
            &String::from_utf8_lossy(&lowered.stdout),
        );
        let o = funmem_bounded(
            &["run", &g, "--fuel", "1000000"],
            "1000000000000 0",
            TWO_GB,
            120,
        );
        assert_exit(&o, 1);
        assert!(stderr(&o).contains("--fuel N"), "{to}: {}", stderr(&o));
    }
}

#[test]
fn the_default_fuel_is_documented() {
    let o = funmem_bounded(&["run", "--help"], "", 0, 60);
    assert_exit(&o, 0);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(
        help.contains("default 10^8, and 10^12 with --semantics opencl"),
        "{help}"
    );
    assert_eq!(funmem_semantics::error::DEFAULT_FUEL, 100_000_000);
    assert_eq!(funmem_semantics::error::DEVICE_FUEL, 1_000_000_000_000);
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/limits.md"))
        .expect("docs/limits.md");
    assert!(
        docs.contains("10^8") && docs.contains("10^12"),
        "docs/limits.md names the default fuels"
    );
}

#[test]
fn stats_takes_fuel_and_max_heap() {
    let o = funmem_bounded(
        &["stats", "tests/programs/design_example.fun", "--fuel", "3"],
        "3 [1, 2, 3]",
        0,
        60,
    );
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("fuel of 3 statements"),
        "{}",
        stderr(&o)
    );
    let o = funmem_bounded(
        &[
            "stats",
            "tests/programs/design_example.fun",
            "--max-heap",
            "2",
        ],
        "3 [1, 2, 3]",
        0,
        60,
    );
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("heap limit of 2 cells"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn deep_fuzzing_ends() {
    let out = std::env::temp_dir().join(format!("funmem-limits-fuzz-{}", std::process::id()));
    let out = out.to_string_lossy().to_string();
    for seed in ["0", "1"] {
        let o = funmem_bounded(
            &[
                "fuzz",
                "--max-depth",
                "50",
                "--count",
                "5",
                "--seed",
                seed,
                "--out",
                &out,
            ],
            "",
            0,
            120,
        );
        assert_exit(&o, 0);
    }
}

#[test]
fn a_huge_input_layout_on_opencl_fails_fast() {
    if std::env::var_os("FUNMEM_SKIP_OPENCL").is_some() {
        return;
    }
    // Two elements 10^9 cells apart: a block of 10^9 + 1 cells.
    let f = write_temp(
        "spread.imp",
        "def main (n: int) (xs: [n]int @ xm -> 0 + {(n : 1000000000)}) = var y: int; y <- n out (y)\n",
    );
    let o = funmem_bounded(
        &[
            "run",
            &f,
            "--semantics",
            "opencl",
            "--device",
            "pocl",
            "--max-heap",
            "1000000",
        ],
        "2 [1, 2]",
        0,
        60,
    );
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("heap limit of 1000000 cells"), "{err}");
    assert!(err.contains("E-IMP-PROG"), "{err}");
}

/// On OpenCL the default fuel is the device's (10^12): nested loops of
/// 2·10^8 iterations in all, which end in a second, are not stopped by
/// the interpreters' 10^8; an explicit `--fuel` still holds.
#[test]
fn the_device_has_its_own_default_fuel() {
    if std::env::var_os("FUNMEM_SKIP_OPENCL").is_some() {
        return;
    }
    let nested = "def main (n: int) (m: int) (z: int) =\n  let (a: [n][m][z]int) = kernel i < n do\n      let (b: [m][z]int) = kernel j < m do\n          let (e: [z]int) = iota z\n          in (e)\n      in (b)\n  in (n)\n";
    let f = write_temp("nested_idle.fun", nested);
    let args = [
        "run",
        f.as_str(),
        "--semantics",
        "opencl",
        "--device",
        "pocl",
    ];
    let o = funmem_bounded(&args, "1000 200000 0", 0, 120);
    assert_exit(&o, 0);
    assert_eq!(common::text(&o.stdout), "1000i64\n");
    let mut small = args.to_vec();
    small.extend(["--fuel", "100000000"]);
    let o = funmem_bounded(&small, "1000 200000 0", 0, 120);
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("out of fuel in a kernel's nested loops"),
        "{}",
        stderr(&o)
    );
}
