//! The command line's contract (DESIGN.md §6): output, diagnostics and exit
//! codes.

use std::process::{Command, Output};

fn funmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the funmem binary runs")
}

fn write_temp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("funmem-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("temp file");
    p.to_string_lossy().to_string()
}

#[test]
fn check_is_silent_on_a_good_program() {
    for f in [
        "tests/programs/design_example.fun",
        "tests/programs/ifl2022/fig07_if_sizes.funmem",
        "tests/programs/ifl2022/fig13_if_sizes.imp",
    ] {
        let o = funmem(&["check", f]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty() && o.stderr.is_empty());
    }
}

#[test]
fn type_error_gives_position_marked_source_and_exit_2() {
    let f = write_temp(
        "bad.fun",
        "def main (n: int) =\n  let (y: int) = n + zz\n  in (y)\n",
    );
    let o = funmem(&["check", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert_eq!(first, format!("{f}:2:22: unbound variable `zz`"));
    assert!(
        err.contains("let (y: int) = n + zz"),
        "the source line is shown:\n{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn syntax_error_gives_exit_2() {
    let f = write_temp(
        "bad.imp",
        "def main (n: int) =\n  var x: int;\n  x <- n +\nout (x)\n",
    );
    let o = funmem(&["check", &f]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!("{f}:4:1: unexpected `out`")),
        "{err}"
    );
}

#[test]
fn bad_command_lines_give_exit_2() {
    assert_eq!(funmem(&[]).status.code(), Some(2));
    assert_eq!(funmem(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(funmem(&["check"]).status.code(), Some(2));
    let o = funmem(&["check", "no/such/file.fun"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    let f = write_temp("prog.txt", "def main (n: int) = in (n)\n");
    let o = funmem(&["check", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown file extension"));
}

#[test]
fn print_output_is_a_program_that_checks() {
    let o = funmem(&["print", "tests/programs/ifl2022/fig02_if_sizes.fun"]);
    assert_eq!(o.status.code(), Some(0));
    let printed = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(printed.starts_with("def main (z_cond: int) (x_size: int) (y_size: int) =\n"));
    let f = write_temp("printed.fun", &printed);
    assert_eq!(funmem(&["check", &f]).status.code(), Some(0));
}

fn funmem_stdin(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the funmem binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("funmem finishes")
}

#[test]
fn run_prints_results_in_futhark_format_under_each_semantics() {
    let f = "tests/programs/ifl2022/fig07_if_sizes.funmem";
    for sem in ["heap", "value"] {
        let o = funmem_stdin(&["run", f, "--semantics", sem], "1 3 2");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "3i64\n[0i64, 1i64, 2i64]\n"
        );
    }
    let input = write_temp("in.txt", "3 [1, 2, 3]\n");
    let o = funmem(&[
        "run",
        "tests/programs/design_example.fun",
        "--input",
        &input,
    ]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[2i64, 5i64, 8i64]\n");
    let o = funmem_stdin(
        &["run", "tests/programs/ifl2022/fig13_if_sizes.imp"],
        "0 3 2",
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "2i64\n[0i64, 1i64]\n");
}

#[test]
fn run_errors_have_rule_position_and_exit_1() {
    let f = write_temp(
        "oob.fun",
        "def main (n: int) (xs: [n]int) =\n  let (x: int) = xs[n]\n  in (x)\n",
    );
    let o = funmem_stdin(&["run", &f], "2 [1, 2]");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "{f}:2:3: E-INDEX: index 2 is out of bounds for dimension 0 of `xs`, of size 2"
        )),
        "{err}"
    );
    // Bad input values are a usage error.
    let o = funmem_stdin(&["run", &f], "2 [1, 2");
    assert_eq!(o.status.code(), Some(2));
    // FUN has no heap semantics.
    let o = funmem_stdin(&["run", &f, "--semantics", "heap"], "2 [1, 2]");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("FUN has no heap semantics"));
}

#[test]
fn limits_and_stats() {
    let f = "tests/programs/design_example.fun";
    let o = funmem_stdin(&["run", f, "--fuel", "3"], "3 [1, 2, 3]");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("fuel of 3 statements"));
    let o = funmem_stdin(&["run", f, "--max-heap", "2"], "3 [1, 2, 3]");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("heap limit of 2 cells"));
    let o = funmem_stdin(&["run", f, "--stats"], "3 [1, 2, 3]");
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    // The kernel statement and two statements in each of 3 iterations.
    assert!(err.contains("statements evaluated: 7"), "{err}");
    assert!(err.contains("statements/second:"), "{err}");
}

#[test]
fn validate_reports_valid_races_and_invalid_programs() {
    let o = funmem_stdin(
        &["validate", "tests/programs/ifl2022/fig07_if_sizes.funmem"],
        "1 3 2",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("valid"));
    let racy = write_temp(
        "racy.funmem",
        "def main (n: int) =\n  let (m: mem) = alloc 1\n  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do\n    in (i)\n  in (n)\n",
    );
    let o = funmem_stdin(&["validate", &racy], "2");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            ":3:3: E-MEM-KERNEL: data race: block 0 at offset 0 was written by iteration 0"
        ),
        "{err}"
    );
    let bad = write_temp(
        "overwritten.funmem",
        "def main (n: int) =\n  let (m: mem) = alloc n\n  let (a: [n]int @ m -> R(n)) = iota n\n  let (b: [n]int @ m -> R(n)) = kernel i < n do\n    let (x: int) = a[i]\n    let (y: int) = x + 10\n    in (y)\n  let (c: [n]int @ m -> R(n)) = iota n\n  in (b, c)\n",
    );
    let o = funmem_stdin(&["validate", &bad], "3");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "invalid: result 0 differs at [0]: the heap semantics gives 0i64, the value semantics gives 10i64\n"
    );
}

#[test]
fn funmem_test_passes_on_the_corpus_and_reports_failures() {
    let mut args = vec!["test", "tests/programs"];
    if std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/papers")).exists() {
        args.push("papers");
    }
    let o = funmem(&args);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "{last}");
    let passed: usize = last
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(passed >= 150, "{last}");
    // A wrong expectation fails, with a line naming the case.
    let f = write_temp(
        "wrong.fun",
        "-- ==\n-- input { 2 }\n-- output { [0i64, 2i64] }\ndef main (n: int) =\n  let (xs: [n]int) = iota n\n  in (xs)\n",
    );
    let o = funmem(&["test", &f]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("result 0 differs at [1]: the program gives 1i64, the test gives 2i64"),
        "{out}"
    );
    assert!(out.ends_with("0 passed, 1 failed\n"), "{out}");
}
