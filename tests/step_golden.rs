//! Golden outputs of `funmem step` (piped: one line per step) on the IFL
//! 2022 paper's examples and on a loop, reductions and a race: each run's
//! lines are checked one by one against `tests/step/NAME.txt`, and its
//! `--json` lines must parse and carry the same rules in the same order.
//!
//! When the step output changes on purpose, rewrite the files with
//!
//! ```text
//! FUNMEM_BLESS=1 cargo test --test step_golden
//! ```
//!
//! and read the diff (`git diff tests/step`) before committing it.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// One golden run: `funmem step FILE ARGS` with `input` on standard input.
struct Case {
    name: &'static str,
    file: &'static str,
    args: &'static [&'static str],
    input: &'static str,
    /// The exit code: 0 results, 1 the program went wrong.
    code: i32,
}

const CASES: &[Case] = &[
    // Fig. 2 under FUN's value semantics (E-IF-TRUE, E-IOTA).
    Case {
        name: "fig02_value",
        file: "papers/ifl2022/fig02_if_sizes.fun",
        args: &[],
        input: "1 3 2",
        code: 0,
    },
    // Fig. 7 under the heap semantics, both branches (E-MEM-IF-T/F).
    Case {
        name: "fig07_heap",
        file: "papers/ifl2022/fig07_if_sizes.funmem",
        args: &[],
        input: "1 3 2",
        code: 0,
    },
    Case {
        name: "fig07_heap_else",
        file: "papers/ifl2022/fig07_if_sizes.funmem",
        args: &[],
        input: "0 3 2",
        code: 0,
    },
    // Fig. 13 in IMP.
    Case {
        name: "fig13_imp",
        file: "papers/ifl2022/fig13_if_sizes.imp",
        args: &[],
        input: "1 3 2",
        code: 0,
    },
    // §5: allocations inside the kernel, then hoisted by expand-gpu.
    Case {
        name: "sec5_kernel_alloc_heap",
        file: "papers/ifl2022/sec5_kernel_alloc.fun",
        args: &["--semantics", "heap"],
        input: "2 3",
        code: 0,
    },
    Case {
        name: "sec5_expand_gpu_heap",
        file: "papers/ifl2022/sec5_kernel_alloc.fun",
        args: &["--semantics", "heap", "--passes", "simplify,expand-gpu"],
        input: "2 3",
        code: 0,
    },
    // A for loop with an in-place update, in FUNMEM and in IMP.
    Case {
        name: "loop_for_heap",
        file: "tests/programs/fun/loop_for.fun",
        args: &["--semantics", "heap"],
        input: "3 [1, 2, 3]",
        code: 0,
    },
    Case {
        name: "loop_for_imp",
        file: "tests/programs/fun/loop_for.fun",
        args: &["--semantics", "imp"],
        input: "3 [1, 2, 3]",
        code: 0,
    },
    // Reductions and scans: a lambda's iterations, built-in operators,
    // element types.
    Case {
        name: "reduce_lambda_heap",
        file: "tests/programs/fun/reduce_lambda.fun",
        args: &["--semantics", "heap"],
        input: "3 [3, -7, 2]",
        code: 0,
    },
    Case {
        name: "scan_prefix_value",
        file: "tests/programs/fun/scan_prefix.fun",
        args: &[],
        input: "3 [1i32, 2i32, 3i32] [true, false, true]",
        code: 0,
    },
    // A race: the run stops at it, naming both accesses.
    Case {
        name: "shift_race_heap",
        file: "docs/examples/shift_race.funmem",
        args: &[],
        input: "2",
        code: 1,
    },
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `funmem step FILE ARGS EXTRA` with `input` on standard input.
fn step(c: &Case, extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_funmem"))
        .arg("step")
        .arg(c.file)
        .args(c.args)
        .args(extra)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the funmem binary runs");
    if let Some(mut i) = child.stdin.take() {
        i.write_all(c.input.as_bytes()).expect("input written");
    }
    child.wait_with_output().expect("funmem finishes")
}

fn text(o: &Output, c: &Case, what: &str) -> String {
    assert_eq!(
        o.status.code(),
        Some(c.code),
        "{}: {what}: exit code; stderr:\n{}",
        c.name,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// The rule column of a text line (its second field).
fn rule_of(line: &str) -> &str {
    line.split_whitespace().nth(1).unwrap_or("")
}

#[test]
fn step_lines_match_the_golden_files() {
    let bless = std::env::var_os("FUNMEM_BLESS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for c in CASES {
        let got = text(&step(c, &[]), c, "text");
        let path = root().join("tests/step").join(format!("{}.txt", c.name));
        if bless {
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("tests/step");
            std::fs::write(&path, &got).expect("golden file written");
            continue;
        }
        let want = match std::fs::read_to_string(&path) {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!(
                    "{}: {e} (FUNMEM_BLESS=1 writes it)",
                    path.display()
                ));
                continue;
            }
        };
        let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
        for k in 0..g.len().max(w.len()) {
            let (a, b) = (g.get(k), w.get(k));
            if a != b {
                failures.push(format!(
                    "{} line {}:\n  want {}\n  got  {}",
                    c.name,
                    k + 1,
                    b.map_or("(no line)", |s| s),
                    a.map_or("(no line)", |s| s)
                ));
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "step output differs from tests/step (FUNMEM_BLESS=1 rewrites it):\n{}",
        failures.join("\n")
    );
}

#[test]
fn json_lines_carry_the_same_rules_in_the_same_order() {
    for c in CASES {
        let lines = text(&step(c, &[]), c, "text");
        let json = text(&step(c, &["--json"]), c, "--json");
        let rules: Vec<&str> = lines.lines().map(rule_of).collect();
        let mut from_json = Vec::new();
        for (k, l) in json.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{} JSON line {}: {e}: {l}", c.name, k + 1));
            assert_eq!(v["step"], k, "{}: step numbers in order: {l}", c.name);
            let rule = v["rule"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: no rule: {l}", c.name))
                .to_string();
            from_json.push(rule);
        }
        assert_eq!(from_json, rules, "{}", c.name);
        // The last object ends the run: results, or the error.
        let last: serde_json::Value =
            serde_json::from_str(json.lines().last().unwrap_or("{}")).expect("JSON");
        let want = if c.code == 0 { "finish" } else { "stuck" };
        assert_eq!(last["kind"], want, "{}", c.name);
    }
}

#[test]
fn a_race_ends_the_steps_with_both_accesses() {
    let c = CASES
        .iter()
        .find(|c| c.name == "shift_race_heap")
        .expect("the race case");
    let json = text(&step(c, &["--json"]), c, "--json");
    let last: serde_json::Value =
        serde_json::from_str(json.lines().last().unwrap_or("{}")).expect("JSON");
    let race = &last["race"];
    assert_eq!(race["block"], 0, "{last}");
    assert_eq!(race["byte"], 8, "{last}");
    assert_eq!(
        race["first"]["iterations"],
        serde_json::json!([0]),
        "{last}"
    );
    assert_eq!(race["first"]["write"], false, "{last}");
    assert_eq!(
        race["second"]["iterations"],
        serde_json::json!([1]),
        "{last}"
    );
    assert_eq!(race["second"]["write"], true, "{last}");
}
