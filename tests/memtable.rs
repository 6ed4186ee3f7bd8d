//! `funmem stats PATH... --table`: the memory table of a corpus. Every
//! program under the paths is measured on its first test case that runs to
//! results (inline, from a file, or random), before and after the last
//! pass; programs that cannot be measured get a row saying why, one that
//! goes wrong a row saying where and exit code 1; the single-program form
//! still takes `--input`.

mod common;

use common::{assert_exit, temp_dir, text};
use std::path::Path;

/// `funmem ARGS` with no standard input, bounded as every CLI test is.
fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// A block and an iota that nothing reads: `simplify` removes both, so the
/// program allocates 3 blocks (the input's among them) before it and 2
/// after.
const DEAD: &str = "\
-- A block that nothing reads.
-- ==
-- input { 3 [1, 2, 3] }
-- output { [1i64, 2i64, 3i64] }
def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (dm: mem) = alloc n
  let (d: [n]int @ dm -> R(n)) = iota n
  let (am: mem) = alloc n
  let (a: [n]int @ am -> R(n)) = copy xs
  in (a)
";

/// No test block at all.
const NO_TEST: &str = "def main (n: int) = iota n\n";

/// Its first case expects an error; the second, random, one is measured
/// (`simplify` removes a copy that the lowering makes).
const RANDOM: &str = "\
-- ==
-- input { -1 empty([0]i64) }
-- error: .
-- random input { 4 [4]i64 }
def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = kernel i < n do
        let (x: int) = xs[i]
        let (y: int) = x * 2
        in (y)
  in (ys)
";

/// Its input comes from a data file beside it.
const FROM_FILE: &str = "\
-- ==
-- input @ five.in
def main (n: int) =
  let (xs: [n]int) = iota n
  in (xs)
";

/// Indexes one past the end: its run goes wrong.
const OUT_OF_BOUNDS: &str = "\
-- ==
-- input { 3 [1, 2, 3] }
-- output { 0 }
def main (n: int) (xs: [n]int) =
  let (y: int) = xs[n]
  in (y)
";

/// A folder holding `files` (name, text).
fn corpus(name: &str, files: &[(&str, &str)]) -> String {
    let d = temp_dir(name);
    for (f, t) in files {
        std::fs::write(d.join(f), t).expect("write");
    }
    d.display().to_string()
}

/// The cells of the table's row for the program `file` under `dir`.
fn row(out: &str, dir: &str, file: &str) -> Vec<String> {
    let name = Path::new(dir).join(file).display().to_string();
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("| {name} ")))
        .unwrap_or_else(|| panic!("no row for {name} in\n{out}"));
    cells(line)
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn the_table_gives_every_program_a_row_and_the_totals() {
    let dir = corpus(
        "memtable-ok",
        &[
            ("dead.funmem", DEAD),
            ("no_test.fun", NO_TEST),
            ("random.fun", RANDOM),
            ("from_file.fun", FROM_FILE),
            ("five.in", "5\n"),
        ],
    );
    let o = funmem(&["stats", &dir, "--passes", "simplify"]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    let header = cells(out.lines().next().expect("a header"));
    assert_eq!(
        header,
        [
            "program",
            "case",
            "allocations before",
            "allocations after",
            "cells before",
            "cells after",
            "peak before",
            "peak after",
            "peak saved",
            "note"
        ]
    );
    // program, case, allocations, cells, peak (before, after), saved.
    assert_eq!(
        row(&out, &dir, "dead.funmem")[1..9],
        [
            "case 0 (input { 3 [1, 2, 3] })",
            "3",
            "2",
            "9",
            "6",
            "9",
            "6",
            "33.3%"
        ]
    );
    let r = row(&out, &dir, "no_test.fun");
    assert_eq!(r[2..9], ["-"; 7]);
    assert_eq!(r[9], "skipped: no test block");
    // The error case is passed over; the random input has 4 elements.
    assert_eq!(
        row(&out, &dir, "random.fun")[1..9],
        [
            "case 1 (random input)",
            "3",
            "2",
            "12",
            "8",
            "12",
            "8",
            "33.3%"
        ]
    );
    assert_eq!(
        row(&out, &dir, "from_file.fun")[1..9],
        [
            "case 0 (input @ five.in)",
            "2",
            "1",
            "10",
            "5",
            "10",
            "5",
            "50.0%"
        ]
    );
    let total = out
        .lines()
        .find(|l| l.starts_with("| total"))
        .expect("a total line");
    assert_eq!(
        cells(total)[..9],
        [
            "total (3 of 4 programs, 1 skipped)",
            "",
            "8",
            "5",
            "31",
            "19",
            "31",
            "19",
            "38.7%"
        ]
    );
    assert!(out.contains("before `simplify`"), "{out}");
    // Without the skipped rows: the same totals.
    let o = funmem(&["stats", &dir, "--passes", "simplify", "--hide-skipped"]);
    assert_exit(&o, 0);
    let hidden = text(&o.stdout);
    assert!(!hidden.contains("no_test.fun"), "{hidden}");
    assert_eq!(hidden.lines().filter(|l| l.starts_with("| ")).count(), 5);
    let hidden_total = hidden
        .lines()
        .find(|l| l.starts_with("| total"))
        .expect("a total line");
    assert_eq!(cells(hidden_total), cells(total));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_json_form_has_the_same_numbers() {
    let dir = corpus(
        "memtable-json",
        &[("dead.funmem", DEAD), ("no_test.fun", NO_TEST)],
    );
    let o = funmem(&["stats", &dir, "--passes", "simplify", "--json"]);
    assert_exit(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let programs = j["programs"].as_array().expect("programs");
    assert_eq!(programs.len(), 2);
    assert_eq!(programs[0]["before"]["allocations"], 3);
    assert_eq!(programs[0]["after"]["cells_allocated"], 6);
    assert_eq!(programs[1]["skipped"], "no test block");
    assert_eq!(j["total"]["after"]["peak_heap_cells"], 6);
    assert_eq!(j["skipped"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_program_that_goes_wrong_gets_a_row_and_exit_code_1() {
    let dir = corpus(
        "memtable-wrong",
        &[("dead.funmem", DEAD), ("oob.fun", OUT_OF_BOUNDS)],
    );
    let o = funmem(&["stats", &dir, "--passes", "simplify,expand-gpu"]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    let r = row(&out, &dir, "oob.fun");
    assert_eq!(r[1], "case 0 (input { 3 [1, 2, 3] })");
    assert_eq!(
        r[9],
        "went wrong: stage `simplify`: 5:3: E-MEM-INDEX: index 3 is out of bounds for dimension 0 of `xs`, of size 3"
    );
    // The other program is still measured.
    assert_eq!(row(&out, &dir, "dead.funmem")[2], "2");
    assert!(text(&o.stderr).contains("1 program(s) went wrong"));
    // A fuel limit too small for a run is going wrong as well.
    let o = funmem(&[
        "stats",
        &format!("{dir}/dead.funmem"),
        "--table",
        "--passes",
        "simplify",
        "--fuel",
        "1",
    ]);
    assert_exit(&o, 1);
    assert!(text(&o.stdout).contains("fuel of 1"), "{}", text(&o.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_command_lines_exit_2_and_one_program_still_takes_its_input() {
    let dir = corpus(
        "memtable-cli",
        &[("dead.funmem", DEAD), ("in", "3 [1, 2, 3]")],
    );
    let o = funmem(&["stats", &dir, "--input", &format!("{dir}/in")]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("--input takes one program"));
    let o = funmem(&["stats", &format!("{dir}/missing"), "--table"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("no such file or folder"));
    let o = funmem(&[
        "stats",
        &format!("{dir}/dead.funmem"),
        "--passes",
        "simplify",
        "--input",
        &format!("{dir}/in"),
    ]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    let simplify = out
        .lines()
        .find(|l| l.starts_with("simplify"))
        .expect("a simplify line");
    let n: Vec<&str> = simplify.split_whitespace().collect();
    // allocations, of them in kernels, cells allocated, peak heap cells,
    // read sites, reads in the run.
    assert_eq!(n[4..], ["2", "0", "6", "6", "0", "0"], "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
