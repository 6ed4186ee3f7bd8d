//! `funmem bench` as `futhark bench` (docs/cli.md, Benchmarking): every
//! dataset of a test block on PoCL, futhark bench's JSON layout with our
//! figures beside it, failed datasets reported while the others run,
//! `--dataset`, `--input` and the command line's errors.

mod common;

use common::{assert_exit, funmem, opencl, text, write_temp};

const BODY: &str = "def main (n: int) (xs: [n]int) =
  let (ys: [n]int) = kernel i < n do
        let (x: int) = xs[i]
        let (y: int) = x * 2 + i
        in (y)
  in (ys)
";

/// A program with an inline case, a `compiled input` and a `random
/// input`; `wrong` makes the first case's expected output wrong.
fn program(name: &str, wrong: bool) -> String {
    let first = if wrong {
        "[2i64, 5i64, 9i64]"
    } else {
        "[2i64, 5i64, 8i64]"
    };
    write_temp(
        name,
        &format!(
            "-- Each element doubled plus its index.
-- ==
-- input {{ 3 [1, 2, 3] }}
-- output {{ {first} }}
-- compiled input {{ 4 [1, 1, 1, 1] }}
-- output {{ [2i64, 3i64, 4i64, 5i64] }}
-- random input {{ 64i64 [64]i64 }}
{BODY}"
        ),
    )
}

#[test]
fn every_dataset_of_the_test_block_in_futhark_bench_json() {
    if !opencl() {
        return;
    }
    let prog = program("three.fun", false);
    let out = write_temp("three.json", "");
    let o = funmem(
        &[
            "bench", &prog, "--device", "pocl", "--runs", "3", "--json", &out,
        ],
        "",
    );
    assert_exit(&o, 0);
    let table = text(&o.stdout);
    for name in [
        "#0 (\"3 [1, 2, 3]\")",
        "#1 (\"4 [1, 1, 1, 1]\")",
        "64i64 [64]i64",
    ] {
        assert!(table.contains(name), "{table}");
    }
    // Three datasets: the per-kernel tables only with --kernels.
    assert!(table.contains("copy kernel:"), "{table}");
    assert!(!table.contains("launches"), "{table}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ds = v[prog.as_str()]["datasets"].as_object().expect("datasets");
    assert_eq!(ds.len(), 3, "{v}");
    for (name, d) in ds {
        let rt = d["runtimes"].as_array().expect("runtimes");
        assert_eq!(rt.len(), 3, "{name}: {d}");
        assert!(rt.iter().all(|t| t.as_u64().is_some_and(|t| t > 0)), "{d}");
        assert!(d["bytes"]["space 'device'"].as_u64().unwrap() > 0, "{d}");
        let f = &d["funmem"];
        for key in [
            "kernel_us",
            "wall_us",
            "peak_bytes",
            "allocations",
            "bytes_allocated",
            "h2d_transfers",
            "d2h_bytes",
            "sync_reads",
            "launches",
            "kernels",
            "passes",
            "device",
        ] {
            assert!(!f[key].is_null(), "{name}: no funmem.{key}: {d}");
        }
        assert_eq!(f["kernel_us"].as_array().map(Vec::len), Some(3), "{d}");
        assert_eq!(f["launches"], 1, "{d}");
    }
    // The random input's 64 elements: 2 blocks of 512 bytes.
    assert_eq!(ds["64i64 [64]i64"]["funmem"]["bytes_allocated"], 1024);
}

#[test]
fn a_wrong_output_fails_its_dataset_and_the_others_still_run() {
    if !opencl() {
        return;
    }
    let prog = program("wrong.fun", true);
    let o = funmem(
        &[
            "bench", &prog, "--device", "pocl", "--runs", "1", "--json", "-",
        ],
        "",
    );
    assert_exit(&o, 1);
    let err = text(&o.stderr);
    assert!(err.contains("wrong results") && err.contains("#0"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ds = &v[prog.as_str()]["datasets"];
    // futhark bench writes a failed dataset as its message.
    let failed = ds["#0 (\"3 [1, 2, 3]\")"].as_str().expect("a message");
    assert!(failed.contains("differs"), "{failed}");
    assert_eq!(
        ds["#1 (\"4 [1, 1, 1, 1]\")"]["runtimes"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        ds["64i64 [64]i64"]["runtimes"].as_array().map(Vec::len),
        Some(1)
    );
    // The table says so too.
    let o = funmem(&["bench", &prog, "--device", "pocl", "--runs", "1"], "");
    assert_exit(&o, 1);
    assert!(
        text(&o.stdout).contains("FAILED: wrong results"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn dataset_filters_and_the_input_form() {
    if !opencl() {
        return;
    }
    let prog = program("filter.fun", false);
    let o = funmem(
        &[
            "bench",
            &prog,
            "--device",
            "pocl",
            "--runs",
            "2",
            "--dataset",
            "[64]",
            "--json",
            "-",
        ],
        "",
    );
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ds = v[prog.as_str()]["datasets"].as_object().unwrap();
    assert_eq!(ds.keys().collect::<Vec<_>>(), ["64i64 [64]i64"], "{v}");
    // One dataset: its per-kernel table comes with the row.
    let o = funmem(
        &[
            "bench",
            &prog,
            "--device",
            "pocl",
            "--runs",
            "1",
            "--dataset",
            "#1",
        ],
        "",
    );
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains("#1 (") && !out.contains("#0 ("), "{out}");
    assert!(
        out.contains("launches") && out.contains("peak device memory"),
        "{out}"
    );
    // No match: exit 2 and the names.
    let o = funmem(
        &["bench", &prog, "--device", "pocl", "--dataset", "nothing"],
        "",
    );
    assert_exit(&o, 2);
    assert!(
        text(&o.stderr).contains("64i64 [64]i64"),
        "{}",
        text(&o.stderr)
    );
    // --input: one dataset, from a file or standard input.
    let inp = write_temp("filter.in", "2 [5, 6]");
    let o = funmem(
        &[
            "bench", &prog, "--device", "pocl", "--runs", "1", "--input", &inp, "--json", "-",
        ],
        "",
    );
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v[prog.as_str()]["datasets"][inp.as_str()]["runtimes"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{v}"
    );
    let o = funmem(
        &[
            "bench", &prog, "--device", "pocl", "--runs", "1", "--input", "-",
        ],
        "2 [5, 6]",
    );
    assert_exit(&o, 0);
    assert!(text(&o.stdout).contains("stdin"), "{}", text(&o.stdout));
}

#[test]
fn command_line_errors_exit_2() {
    // No test block and no --input.
    let bare = write_temp("bare.fun", BODY);
    let o = funmem(&["bench", &bare, "--device", "pocl"], "");
    assert_exit(&o, 2);
    let err = text(&o.stderr);
    assert!(
        err.contains("no test block") && err.contains("--input"),
        "{err}"
    );
    // A JSON file that cannot be written is found before any run.
    let prog = program("badjson.fun", false);
    let o = funmem(
        &[
            "bench",
            &prog,
            "--device",
            "pocl",
            "--json",
            "/nonexistent-funmem-dir/x.json",
        ],
        "",
    );
    assert_exit(&o, 2);
    assert!(
        text(&o.stderr).contains("cannot write the JSON results"),
        "{}",
        text(&o.stderr)
    );
    // The old flag form is refused: --json needs a file.
    let o = funmem(&["bench", &prog, "--json"], "");
    assert_exit(&o, 2);
    let o = funmem(&["bench", &prog, "--timeout", "0"], "");
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("positive number of seconds"));
}

#[test]
fn a_timeout_stops_starting_runs() {
    if !opencl() {
        return;
    }
    let prog = program("timeout.fun", false);
    let o = funmem(
        &[
            "bench",
            &prog,
            "--device",
            "pocl",
            "--runs",
            "1000000",
            "--dataset",
            "#0",
            "--timeout",
            "5",
            "--json",
            "-",
        ],
        "",
    );
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &v[prog.as_str()]["datasets"]["#0 (\"3 [1, 2, 3]\")"];
    assert_eq!(d["funmem"]["timed_out"], true, "{d}");
    let n = d["runtimes"].as_array().map_or(0, Vec::len);
    assert!(n < 1000000, "{n}");
}

#[test]
fn a_dataset_that_goes_wrong_on_the_device_is_reported_and_the_next_runs() {
    if !opencl() {
        return;
    }
    let prog = write_temp(
        "stuck.fun",
        &format!(
            "-- ==
-- input {{ 4 [1, 2, 3] }}
-- input {{ 3 [1, 2, 3] }}
-- output {{ [2i64, 5i64, 8i64] }}
{BODY}"
        ),
    );
    let o = funmem(
        &[
            "bench", &prog, "--device", "pocl", "--runs", "2", "--json", "-",
        ],
        "",
    );
    assert_exit(&o, 1);
    let err = text(&o.stderr);
    assert!(err.contains("must be [4]int"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ds = &v[prog.as_str()]["datasets"];
    let failed = ds["#0 (\"4 [1, 2, 3]\")"].as_str().expect("a message");
    // The message is positioned in the program.
    assert!(failed.contains("stuck.fun:5:19:"), "{failed}");
    let runs = ds["#1 (\"3 [1, 2, 3]\")"]["runtimes"]
        .as_array()
        .map(Vec::len);
    assert_eq!(runs, Some(2), "{v}");
}

/// `funmem dataset --block`: a case's inputs as bench and test make them.
#[test]
fn dataset_writes_a_cases_inputs() {
    let prog = program("block.fun", false);
    let o = funmem(&["dataset", "--block", &prog, "--dataset", "#1"], "");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "4i64\n[1i64, 1i64, 1i64, 1i64]\n");
    // The random case: its literal, then 64 elements, the same each time.
    let r = funmem(&["dataset", "--block", &prog, "--dataset", "64i64"], "");
    assert_exit(&r, 0);
    let values = text(&r.stdout);
    assert!(values.starts_with("64i64\n["), "{values}");
    assert_eq!(values.matches("i64").count(), 65, "{values}");
    let again = funmem(&["dataset", "--block", &prog, "--dataset", "64i64"], "");
    assert_eq!(values, text(&again.stdout));
    // Binary too, read back to the same text.
    let b = funmem(
        &["dataset", "--block", &prog, "--dataset", "64i64", "-b"],
        "",
    );
    assert_exit(&b, 0);
    assert!(b.stdout.starts_with(b"b\x02"));
    // Several matches, or none: exit 2 naming the datasets.
    let several = funmem(&["dataset", "--block", &prog], "");
    assert_exit(&several, 2);
    assert!(text(&several.stderr).contains("3 datasets match"));
    let none = funmem(&["dataset", "--block", &prog, "--dataset", "nope"], "");
    assert_exit(&none, 2);
    assert!(text(&none.stderr).contains("64i64 [64]i64"));
}

/// `--dataset '#K'` picks case K whatever its name (a random input is
/// named by its types).
#[test]
fn a_dataset_is_picked_by_its_number() {
    let prog = program("number.fun", false);
    let o = funmem(&["dataset", "--block", &prog, "--dataset", "#2"], "");
    assert_exit(&o, 0);
    assert!(text(&o.stdout).starts_with("64i64\n["));
}
