//! `funmem stats PATH... --table --variants A,B,C`: the memory table with
//! the last pass of `--passes` replaced by each variant in turn (for reuse:
//! the linear scan, colouring and the exact search), before and after
//! each; rows for programs that cannot be measured, JSON with the same
//! numbers, and the command lines it refuses.

mod common;

use common::{assert_exit, temp_dir, text};
use std::path::Path;

/// `funmem ARGS` with no standard input, bounded as every CLI test is.
fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// Every strategy agrees: after coalescing, `rr`'s result block (4n)
/// joins the block of its own size. Peak on n = 2 (the input's 2 cells
/// included): 27 before reuse, 19 after each.
const SCAN_VS_COLOUR: &str = "\
-- ==
-- input { 2 [1, 2] }
def main (n: int) (xs: [n]int) =
  let (r: [2][n]int) = replicate 2 xs
  let (z: [3]int) = replicate 3 5
  let (k: int) = n + 3
  let (c: [k]int) = concat xs z
  let (k2: int) = 2 + 2
  let (rr: [k2][n]int) = concat r r
  in (c, rr)
";

/// A chain of four kernels, each reading the one before reversed, where
/// the linear scan and colouring differ. Colouring places the large
/// blocks first: `d` (4n) joins `a`'s block (4n), `b` (n) too, and `c`
/// keeps its own: 3 + 12 + 3 = 18 cells at the peak on n = 3 (33 before).
/// The linear scan takes the allocations as the program states them
/// after coalescing's hoisting (`d`'s first) and lets `c` (n) join a
/// block of 4n, which then needs a second 4n block: 27.
const CHAIN: &str = "\
-- ==
-- input { 3 [1, 2, 3] }
def main (n: int) (ns: [n]int) =
  let (l: int) = n * 4
  let (a: [l]int) = kernel i < l do
      let (x: int) = i + 1
      in (x)
  let (b: [n]int) = kernel i < n do
      let (x: int) = a[l - 1 - i] + ns[i]
      in (x)
  let (c: [n]int) = kernel i < n do
      let (x: int) = b[n - 1 - i] * 2
      in (x)
  let (d: [l]int) = kernel i < l do
      let (j: int) = i % n
      let (x: int) = c[n - 1 - j] + i
      in (x)
  in (d)
";

/// No test block at all.
const NO_TEST: &str = "def main (n: int) = iota n\n";

/// Indexes one past the end: its run goes wrong.
const OUT_OF_BOUNDS: &str = "\
-- ==
-- input { 3 [1, 2, 3] }
-- output { 0 }
def main (n: int) (xs: [n]int) =
  let (y: int) = xs[n]
  in (y)
";

const PASSES: &str = "simplify,coalesce,reuse";
const VARIANTS: &str = "reuse-first-fit,reuse,reuse-optimal";

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
fn each_variant_replaces_the_last_pass_and_gets_its_columns() {
    let dir = corpus(
        "reusetable23-ok",
        &[
            ("scan.fun", SCAN_VS_COLOUR),
            ("chain.fun", CHAIN),
            ("no_test.fun", NO_TEST),
        ],
    );
    let o = funmem(&[
        "stats",
        &dir,
        "--table",
        "--passes",
        PASSES,
        "--variants",
        VARIANTS,
    ]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    let header = cells(out.lines().next().expect("a header"));
    assert_eq!(
        header,
        [
            "program",
            "case",
            "allocations before",
            "peak before",
            "allocations reuse-first-fit",
            "peak reuse-first-fit",
            "allocations reuse",
            "peak reuse",
            "allocations reuse-optimal",
            "peak reuse-optimal",
            "note"
        ]
    );
    // before, then first fit, colouring, the optimum: allocations, peak.
    assert_eq!(
        row(&out, &dir, "scan.fun")[1..11],
        [
            "case 0 (input { 2 [1, 2] })",
            "5",
            "27",
            "4",
            "19",
            "4",
            "19",
            "4",
            "19",
            ""
        ]
    );
    assert_eq!(
        row(&out, &dir, "chain.fun")[2..10],
        ["5", "33", "3", "27", "3", "18", "3", "18"]
    );
    let r = row(&out, &dir, "no_test.fun");
    assert_eq!(r[2..10], ["-"; 8]);
    assert_eq!(r[10], "skipped: no test block");
    let total = out
        .lines()
        .find(|l| l.starts_with("| total"))
        .expect("a total line");
    assert_eq!(
        cells(total),
        [
            "total (2 of 3 programs, 1 skipped)",
            "",
            "10",
            "60",
            "7",
            "46",
            "7",
            "37",
            "7",
            "37",
            "peak saved: reuse-first-fit 23.3%, reuse 38.3%, reuse-optimal 38.3%"
        ]
    );
    assert!(out.contains("before `reuse`"), "{out}");
    // The plain table of the same passes has colouring's numbers.
    let o = funmem(&["stats", &dir, "--table", "--passes", PASSES]);
    assert_exit(&o, 0);
    let plain = text(&o.stdout);
    let r = row(&plain, &dir, "scan.fun");
    assert_eq!(r[2..4], ["5", "4"]);
    assert_eq!(r[6..8], ["27", "19"]);
    // Without the skipped rows: the same totals.
    let o = funmem(&[
        "stats",
        &dir,
        "--passes",
        PASSES,
        "--variants",
        VARIANTS,
        "--hide-skipped",
    ]);
    assert_exit(&o, 0);
    let hidden = text(&o.stdout);
    assert!(!hidden.contains("no_test.fun"), "{hidden}");
    let hidden_total = hidden
        .lines()
        .find(|l| l.starts_with("| total"))
        .expect("a total line");
    assert_eq!(cells(hidden_total), cells(total));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_json_form_of_the_variants_has_the_same_numbers() {
    let dir = corpus(
        "reusetable23-json",
        &[("no_test.fun", NO_TEST), ("scan.fun", SCAN_VS_COLOUR)],
    );
    let o = funmem(&[
        "stats",
        &dir,
        "--passes",
        PASSES,
        "--variants",
        VARIANTS,
        "--json",
    ]);
    assert_exit(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["passes"], PASSES);
    assert_eq!(
        j["variants"],
        serde_json::json!(["reuse-first-fit", "reuse", "reuse-optimal"])
    );
    let programs = j["programs"].as_array().expect("programs");
    assert_eq!(programs.len(), 2);
    assert_eq!(programs[0]["skipped"], "no test block");
    let scan = &programs[1];
    assert_eq!(scan["before"]["allocations"], 5);
    assert_eq!(scan["before"]["peak_heap_cells"], 27);
    let peaks: Vec<(String, u64)> = scan["variants"]
        .as_array()
        .expect("variants")
        .iter()
        .map(|v| {
            (
                v["pass"].as_str().unwrap_or_default().to_string(),
                v["peak_heap_cells"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        peaks,
        [
            ("reuse-first-fit".to_string(), 19),
            ("reuse".to_string(), 19),
            ("reuse-optimal".to_string(), 19)
        ]
    );
    assert_eq!(scan["notes"], serde_json::json!([]));
    assert_eq!(j["total"]["programs"], 1);
    assert_eq!(j["total"]["variants"][0]["peak_heap_cells"], 19);
    assert_eq!(j["skipped"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_program_that_goes_wrong_gets_a_row_and_exit_code_1() {
    let dir = corpus(
        "reusetable23-wrong",
        &[("scan.fun", SCAN_VS_COLOUR), ("oob.fun", OUT_OF_BOUNDS)],
    );
    let o = funmem(&["stats", &dir, "--passes", PASSES, "--variants", VARIANTS]);
    assert_exit(&o, 1);
    let out = text(&o.stdout);
    let r = row(&out, &dir, "oob.fun");
    assert_eq!(r[2..10], ["-"; 8]);
    assert_eq!(
        r[10],
        "went wrong: stage `coalesce`: 5:3: E-MEM-INDEX: index 3 is out of bounds for dimension 0 of `xs`, of size 3"
    );
    assert_eq!(row(&out, &dir, "scan.fun")[5], "19");
    assert!(text(&o.stderr).contains("1 program(s) went wrong"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn variants_without_a_table_or_a_last_pass_exit_2() {
    let dir = corpus("reusetable23-cli", &[("scan.fun", SCAN_VS_COLOUR)]);
    let file = format!("{dir}/scan.fun");
    let o = funmem(&["stats", &file, "--passes", PASSES, "--variants", "reuse"]);
    assert_exit(&o, 2);
    assert!(
        text(&o.stderr).contains("--variants takes a table"),
        "{}",
        text(&o.stderr)
    );
    let o = funmem(&["stats", &dir, "--passes", "none", "--variants", "reuse"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("replaces the last pass"));
    let o = funmem(&["stats", &dir, "--passes", PASSES, "--variants", "none"]);
    assert_exit(&o, 2);
    let o = funmem(&[
        "stats",
        &dir,
        "--passes",
        PASSES,
        "--variants",
        "reuse,nope",
    ]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("nope"), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
