//! The command line's contract (docs/cli.md): output, diagnostics and exit
//! codes.

use std::process::{Command, Output};

fn funmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the funmem binary runs")
}

/// Asserts the exit code, showing standard error when it differs.
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
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
        "papers/ifl2022/fig07_if_sizes.funmem",
        "papers/ifl2022/fig13_if_sizes.imp",
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
    let o = funmem(&["print", "papers/ifl2022/fig02_if_sizes.fun"]);
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
    let f = "papers/ifl2022/fig07_if_sizes.funmem";
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
    let o = funmem_stdin(&["run", "papers/ifl2022/fig13_if_sizes.imp"], "0 3 2");
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
        &["validate", "papers/ifl2022/fig07_if_sizes.funmem"],
        "1 3 2",
    );
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("source "), "{out}");
    assert!(
        out.lines().next().unwrap().contains("valid: 2 results"),
        "{out}"
    );
    assert!(out.contains("lower to IMP"), "{out}");
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
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines().next().unwrap().ends_with(
            "invalid: result 0 differs at [0]: the heap semantics gives 0i64, the value semantics gives 10i64"
        ),
        "{out}"
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
    // Structure items of passes that do not exist yet are skipped.
    assert!(
        last.ends_with(" passed, 0 failed")
            || (last.contains(" passed, 0 failed, ") && last.ends_with(" skipped")),
        "{last}"
    );
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
    // Every semantics of the source, of its four lowered stages and of
    // the two memory pipelines (the GPU one's migrate, then coalesce,
    // reuse, then expansion, then its IMP) fails.
    assert!(out.ends_with("0 passed, 23 failed\n"), "{out}");
    assert!(
        out.contains("after gpu-mem, coalesce, heap semantics"),
        "{out}"
    );
    assert!(
        out.contains("after simplify, lower to IMP, heap semantics"),
        "{out}"
    );
    assert!(
        out.contains("after gpu-mem, lower to IMP, heap semantics"),
        "{out}"
    );
}

#[test]
fn lower_prints_each_target_and_refuses_what_it_cannot_lower() {
    let f = "papers/ifl2022/fig02_if_sizes.fun";
    let o = funmem(&["lower", f, "--to", "funmem", "--passes", "none"]);
    assert_eq!(o.status.code(), Some(0));
    let raw = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        raw.contains("(z_arr_off: int)") && raw.contains("copy z_arr"),
        "{raw}"
    );
    let o = funmem(&["lower", f, "--to", "funmem"]);
    let simple = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        !simple.contains("z_arr_off") && !simple.contains("copy"),
        "{simple}"
    );
    assert_eq!(funmem(&["opt", f, "--passes", "simplify"]).stdout, o.stdout);
    // Each output is a program of its language.
    for (ext, text) in [("funmem", &raw), ("funmem", &simple)] {
        let t = write_temp(&format!("lowered.{ext}"), text);
        assert_eq!(funmem(&["check", &t]).status.code(), Some(0), "{text}");
    }
    let o = funmem(&["lower", f, "--to", "imp"]);
    let imp = String::from_utf8_lossy(&o.stdout).to_string();
    let t = write_temp("lowered.imp", &imp);
    assert_eq!(funmem(&["check", &t]).status.code(), Some(0), "{imp}");
    let o = funmem_stdin(&["run", &t], "1 3 2");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "3i64\n[0i64, 1i64, 2i64]\n"
    );
    // Not lowerable, or a bad pass list: exit 2.
    let o = funmem(&[
        "lower",
        "papers/ifl2022/fig13_if_sizes.imp",
        "--to",
        "funmem",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = funmem(&["lower", f, "--to", "imp", "--passes", "simplify,nonesuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown pass `nonesuch`"));
    let o = funmem(&["passes"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("simplify"));
}

#[test]
fn validate_runs_every_stage_of_a_fun_program() {
    let f = "papers/ifl2022/fig02_if_sizes.fun";
    let o = funmem_stdin(&["validate", f, "--passes", "simplify"], "0 3 2");
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    for (line, (stage, lang, sem)) in lines.iter().zip([
        ("source", "FUN", "value"),
        ("lower to FUNMEM", "FUNMEM", "heap+value"),
        ("simplify", "FUNMEM", "heap+value"),
        ("lower to IMP", "IMP", "heap"),
    ]) {
        let words: Vec<&str> = line
            .split("  ")
            .filter(|w| !w.is_empty())
            .map(str::trim)
            .collect();
        assert_eq!(&words[..3], &[stage, lang, sem], "{line}");
    }
    assert!(lines[2].ends_with("valid, agrees with the source"), "{out}");
    assert!(lines[3].ends_with("agrees with the source"), "{out}");
    // A program that goes wrong goes wrong the same way at every stage:
    // exit 1, each stage says so, and the source's error is reported.
    let g = "papers/ifl2022/errata/e9_imp_bounds.fun";
    let o = funmem_stdin(&["validate", g], "2 3 [[1, 2, 3], [4, 5, 6]] 0 3");
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.matches("goes wrong like the source (stuck)").count(),
        2,
        "{out}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("E-INDEX"));
}

#[test]
fn fuzz_runs_a_fixed_campaign_in_shards_and_merges_them() {
    // A short fixed-seed campaign: no failures, the JSON summary counts it.
    let o = funmem(&["fuzz", "--count", "300", "--seed", "11", "--json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["programs"], 300);
    assert_eq!(s["failures"].as_array().map(Vec::len), Some(0), "{out}");
    // Two shards cover the campaign without overlap; --merge adds them up.
    let dir = std::env::temp_dir().join(format!("funmem-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut dirs = Vec::new();
    for i in 0..2 {
        let d = dir.join(format!("shard-{i}"));
        let d = d.to_string_lossy().to_string();
        let shard = format!("{i}/2");
        let o = funmem(&[
            "fuzz", "--count", "101", "--seed", "5", "--shard", &shard, "--out", &d,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        dirs.push(d);
    }
    let mut args = vec!["fuzz", "--json", "--merge"];
    args.extend(dirs.iter().map(String::as_str));
    let o = funmem(&args);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["programs"], 101);
    assert_eq!(s["shards"].as_array().map(Vec::len), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
    // Bad command lines.
    for bad in [
        vec!["fuzz", "--shard", "2/2"],
        vec!["fuzz", "--passes", "nonesuch"],
        vec!["fuzz", "--fail-share", "2"],
    ] {
        assert_eq!(funmem(&bad).status.code(), Some(2), "{bad:?}");
    }
}

#[test]
fn prove_reports_each_obligation_and_exit_codes_follow_expectations() {
    let o = funmem(&["prove", "tests/obligations/lmad_basics.obl"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("even_odd_rows_disjoint") && l.contains("proved")),
        "{out}"
    );
    assert!(out.contains("counterexample:"), "{out}");
    assert!(out.contains("not as expected"), "{out}");
    // A refuted obligation without an expectation makes the exit code 1;
    // its counterexample names the values and the indices.
    let f = write_temp(
        "overlap.obl",
        "obligation overlap\n  given n >= 0\n  disjoint 0 + {(n : 1)} and n - 1 + {(n : 1)}\n",
    );
    let o = funmem(&["prove", &f]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("refuted") && out.contains("n = 1; at [0] and [0]"),
        "{out}"
    );
    // JSON: one object per obligation.
    let o = funmem(&["prove", &f, "--json"]);
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["outcome"], "refuted");
    assert_eq!(v["counterexample"]["values"]["n"], 1);
    // SMT-LIB2.
    let o = funmem(&["prove", &f, "--smt"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(declare-const |n| Int)") && out.contains("(check-sat)"),
        "{out}"
    );
    // A file that does not parse: positioned error, exit 2.
    let bad = write_temp("bad.obl", "obligation b\n  injective 0 + {(n : )}\n");
    let o = funmem(&["prove", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.obl:2:"));
    let o = funmem(&["prove", &f, "--prover", "magic"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn stats_counts_allocations_before_and_after_expansion() {
    let o = funmem_stdin(
        &["stats", "papers/ifl2022/sec5_kernel_alloc.fun", "--json"],
        "4 10",
    );
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let st = &v["stages"];
    assert_eq!(st[0]["stage"], "simplify");
    assert_eq!(st[0]["allocs_in_kernels"], 2);
    assert_eq!(st[0]["allocations"], 9);
    assert_eq!(st[1]["stage"], "expand-gpu");
    assert_eq!(st[1]["allocs_in_kernels"], 0);
    assert_eq!(st[1]["allocations"], 3);
    assert_eq!(st[0]["cells_allocated"], st[1]["cells_allocated"]);
    assert_eq!(st[1]["peak_heap_cells"], 120);
    assert_eq!(st[0]["peak_heap_cells"], 60);
}

#[test]
fn validate_lists_each_pass_obligation_with_prover_and_time() {
    let o = funmem_stdin(
        &[
            "validate",
            "papers/ifl2022/sec5_kernel_alloc.fun",
            "--passes",
            "simplify,expand-gpu",
        ],
        "2 3",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("obligation row_mem: parts of two iterations disjoint"),
        "{out}"
    );
    assert!(out.contains("proved by lmad in"), "{out}");
    assert!(out.contains("(kernel bound)"), "{out}");
    // Two blocks: each fits its part, parts disjoint, inside the block.
    assert_eq!(out.matches("proved by").count(), 6, "{out}");
}

/// The OpenCL commands need PoCL (scripts/install-deps installs it);
/// `FUNMEM_SKIP_OPENCL=1` skips them.
fn opencl() -> bool {
    std::env::var_os("FUNMEM_SKIP_OPENCL").is_none()
}

#[test]
fn lower_to_opencl_prints_kernels_and_refuses_kernel_allocations() {
    let o = funmem(&[
        "lower",
        "tests/programs/design_example.fun",
        "--to",
        "opencl",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("__kernel void k0("), "{out}");
    assert!(
        out.contains("//  launch k0(xs_mem, ys_mem) over i < n"),
        "{out}"
    );
    // Without expansion the paper's §5 example allocates inside a kernel.
    let o = funmem(&[
        "lower",
        "papers/ifl2022/sec5_kernel_alloc.fun",
        "--to",
        "opencl",
        "--passes",
        "simplify",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("run memory expansion"), "{err}");
    assert!(err.contains("sec5_kernel_alloc.fun:"), "{err}");
}

#[test]
fn run_and_bench_on_pocl() {
    if !opencl() {
        return;
    }
    let o = funmem_stdin(
        &[
            "run",
            "tests/programs/design_example.fun",
            "--semantics",
            "opencl",
            "--device",
            "pocl",
        ],
        "3 [1, 2, 3]",
    );
    assert_exit(&o, 0);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[2i64, 5i64, 8i64]\n");
    // An index out of bounds: exit 1.
    let o = funmem_stdin(
        &[
            "run",
            "tests/programs/fun/index2d.fun",
            "--semantics",
            "opencl",
            "--device",
            "pocl",
        ],
        "1 1 [[5]] 3 0",
    );
    assert_exit(&o, 1);
    let o = funmem_stdin(
        &[
            "bench",
            "benches/programs/map.fun",
            "--device",
            "pocl",
            "--runs",
            "2",
            "--input",
            "-",
            "--json",
            "-",
        ],
        "1000",
    );
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &v["benches/programs/map.fun"]["datasets"]["stdin"];
    assert_eq!(d["runtimes"].as_array().map(Vec::len), Some(2), "{v}");
    let v = &d["funmem"];
    assert_eq!(v["runs"], 2);
    assert_eq!(v["bytes_moved"], 8 * 3000);
    assert_eq!(v["kernels"][1]["bytes"], 8 * 2000);
    assert_eq!(v["copy"]["bytes"], 8 * 3000);
    // ys reuses xs's block (each iteration reads xs[i] before it writes
    // ys[i]): one allocation.
    assert_eq!(v["allocations"], 1);
    assert_eq!(v["d2h_bytes"], 8 * 1000);
    assert!(v["kernel_ms"]["median"].as_f64().unwrap() > 0.0);
    // No such device: exit 2 and the list.
    let o = funmem_stdin(
        &[
            "bench",
            "benches/programs/map.fun",
            "--device",
            "no-such-device",
            "--input",
            "-",
        ],
        "10",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no OpenCL device matches"));
    let o = funmem(&["devices", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v.as_array().unwrap().is_empty());
}

#[test]
fn no_opencl_platform_is_a_clear_error() {
    // ocl-icd (Debian's OpenCL loader) reads its vendors from this folder.
    let o = Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(["devices"])
        .env("OCL_ICD_VENDORS", "/nonexistent-funmem-vendors")
        .output()
        .expect("the funmem binary runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no OpenCL platform"), "{err}");
    assert!(err.contains("scripts/install-deps"), "{err}");
}
