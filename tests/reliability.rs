//! Regression tests for what a new or hostile user met: walks that loop,
//! names that clash with OpenCL C, and the small command-line faults.

mod common;

use common::{assert_exit, funmem, opencl, temp_dir, text};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn funmem_within(args: &[&str], stdin: &str, limit: Duration) -> Output {
    common::funmem_bounded(args, stdin, 0, limit)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

#[test]
fn link_loops_are_walked_once_and_reported() {
    let d = temp_dir("links");
    std::fs::create_dir_all(d.join("x")).unwrap();
    std::fs::copy("tests/programs/design_example.fun", d.join("a.fun")).unwrap();
    std::fs::copy("tests/obligations/lmad_basics.obl", d.join("a.obl")).unwrap();
    for l in ["l1", "l2", "l3"] {
        std::os::unix::fs::symlink("..", d.join("x").join(l)).unwrap();
    }
    let alone = funmem(&["test", "tests/programs/design_example.fun"], "");
    assert_exit(&alone, 0);
    let o = funmem_within(&["test", s(&d)], "", Duration::from_secs(60));
    assert_exit(&o, 0);
    // The file's cases once, not once per path through the links.
    assert_eq!(text(&o.stdout), text(&alone.stdout));
    let err = text(&o.stderr);
    assert_eq!(
        err.matches("skipped, a link to a folder already walked")
            .count(),
        3,
        "{err}"
    );
    assert!(err.contains("x/l1: skipped"), "{err}");
    let alone = funmem(&["prove", "tests/obligations/lmad_basics.obl"], "");
    let o = funmem_within(&["prove", s(&d)], "", Duration::from_secs(60));
    assert_exit(&o, 0);
    let last = |o: &Output| {
        let t = text(&o.stdout);
        t.lines()
            .last()
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(last(&o), last(&alone));
    assert_eq!(text(&o.stderr).matches("skipped").count(), 3);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Names that are keywords, types, built-ins or macros of C or OpenCL C.
const C_WORDS: &[&str] = &[
    "NULL",
    "INFINITY",
    "NAN",
    "LONG_MAX",
    "INT_MIN",
    "M_E",
    "M_PI_F",
    "FLT_EPSILON",
    "CLK_LOCAL_MEM_FENCE",
    "CL_VERSION_1_0",
    "cl_khr_fp64",
    "generic",
    "pipe",
    "image2d_t",
    "_Bool",
    "__kernel",
    "__FILE__",
    "__OPENCL_VERSION__",
    "MAXFLOAT",
    "HUGE_VALF",
    "CHAR_BIT",
    "DBL_MAX",
    "sampler_t",
    "event_t",
    "float4",
    "barrier",
    "printf",
    "vload4",
    "get_global_id",
    "long",
    "double",
    "half",
    "restrict",
    "fm_add",
    "k0",
    "v_k0",
];

#[test]
fn names_that_are_opencl_words_run_on_opencl() {
    // A kernel whose body binds each word in turn.
    let mut body = String::new();
    let mut prev = "w0".to_string();
    for w in C_WORDS {
        body.push_str(&format!("        let ({w}: int) = {prev} + 1\n"));
        prev = w.to_string();
    }
    let prog = format!(
        "def main (n: int) (xs: [n]int) =\n  let (ys: [n]int) = kernel i < n do\n        let (w0: int) = xs[i]\n{body}        in ({prev})\n  in (ys)\n"
    );
    let d = temp_dir("words");
    let f = d.join("words.fun");
    std::fs::write(&f, prog).unwrap();
    let o = funmem(&["lower", s(&f), "--to", "opencl"], "");
    assert_exit(&o, 0);
    let want = format!("[{0}i64, {1}i64]\n", 5 + C_WORDS.len(), 7 + C_WORDS.len());
    let o = funmem(&["run", s(&f)], "2 [5, 7]");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), want);
    if opencl() {
        let o = funmem(
            &["run", s(&f), "--semantics", "opencl", "--device", "pocl"],
            "2 [5, 7]",
        );
        assert_exit(&o, 0);
        assert_eq!(text(&o.stdout), want);
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// An out-of-bounds slice and index go wrong by the source's rule on every
/// stage: the interpreters, IMP, and OpenCL (host and kernel checks).
#[test]
fn bounds_checks_name_the_source_rule_everywhere() {
    let d = temp_dir("bounds");
    let slice = d.join("slice.fun");
    std::fs::write(
        &slice,
        "def main (n: int) (xs: [n]int) (a: int) (b: int) =\n  let (ys: [b]int) = xs[a:b]\n  let (zs: [b]int) = kernel i < b do\n        let (x: int) = ys[i]\n        in (x)\n  in (zs)\n",
    )
    .unwrap();
    let index = d.join("index.fun");
    std::fs::write(
        &index,
        "def main (n: int) (xs: [n]int) (a: int) =\n  let (zs: [n]int) = kernel i < n do\n        let (j: int) = i + a\n        let (x: int) = xs[j]\n        in (x)\n  in (zs)\n",
    )
    .unwrap();
    let imp = d.join("slice.imp");
    let o = funmem(&["lower", s(&slice), "--to", "imp"], "");
    assert_exit(&o, 0);
    let lowered = text(&o.stdout);
    assert!(
        lowered.contains("assert slice 0 <= a && 0 <= b && a <= n - b;"),
        "{lowered}"
    );
    assert!(!lowered.contains("bounds"), "{lowered}");
    std::fs::write(&imp, lowered).unwrap();
    let mut cases = vec![
        (vec!["run", s(&slice)], "3 [1, 2, 3] 2 2", "E-SLICE"),
        (vec!["run", s(&imp)], "3 [1, 2, 3] 2 2", "E-SLICE: slice out of bounds: `0 <= a && 0 <= b && a <= n - b` does not hold (a = 2, b = 2, n = 3)"),
        (vec!["run", s(&index)], "3 [1, 2, 3] 1", "E-INDEX"),
    ];
    if opencl() {
        cases.push((
            vec!["run", s(&slice), "--semantics", "opencl", "--device", "pocl"],
            "3 [1, 2, 3] 2 2",
            "E-SLICE: slice out of bounds: `0 <= a && 0 <= b && a <= n - b` does not hold (a = 2, b = 2, n = 3)",
        ));
        cases.push((
            vec![
                "run",
                s(&index),
                "--semantics",
                "opencl",
                "--device",
                "pocl",
            ],
            "3 [1, 2, 3] 1",
            "E-INDEX: index out of bounds: `0 <= j && j < n` does not hold (j = 3, n = 3)",
        ));
    }
    for (args, input, want) in cases {
        let o = funmem(&args, input);
        assert_exit(&o, 1);
        let err = text(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("`bounds`"), "{args:?}: {err}");
    }
    // `assert` checks only what it knows.
    let bad = d.join("bad.imp");
    std::fs::write(&bad, "def main (n: int) = assert size n out (n)\n").unwrap();
    let o = funmem(&["check", s(&bad)], "");
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("`assert` checks `index` or `slice`, not `size`"));
    std::fs::remove_dir_all(&d).unwrap();
}

/// The small faults a user met, each with its message and exit code.
#[test]
fn small_command_line_faults() {
    let prog = "tests/programs/design_example.fun";
    // `stats --passes none` measures the FUNMEM translation.
    let o = funmem(&["stats", prog, "--passes", "none"], "3 [1, 2, 3]");
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains("lower to FUNMEM"), "{out}");
    // `--device` needs `--semantics opencl`, and an empty name is refused.
    let o = funmem(&["run", prog, "--device", "pocl"], "3 [1, 2, 3]");
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("it needs --semantics opencl"));
    if opencl() {
        let o = funmem(
            &["run", prog, "--semantics", "opencl", "--device", ""],
            "3 [1, 2, 3]",
        );
        assert_exit(&o, 2);
        assert!(text(&o.stderr).contains("an empty device name matches no device"));
        // `bench --runs 0` is refused; a tiny input gets no ratio to copy.
        let o = funmem(
            &[
                "bench", prog, "--runs", "0", "--device", "pocl", "--input", "-",
            ],
            "3 [1, 2, 3]",
        );
        assert_exit(&o, 2);
        assert!(text(&o.stderr).contains("--runs"));
        let o = funmem(
            &[
                "bench", prog, "--runs", "1", "--device", "pocl", "--input", "-",
            ],
            "3 [1, 2, 3]",
        );
        assert_exit(&o, 0);
        let out = text(&o.stdout);
        assert!(
            out.contains("of copy: shown for kernels that move at least"),
            "{out}"
        );
        assert!(
            !out.lines()
                .any(|l| l.starts_with("all ") && l.ends_with('%')),
            "{out}"
        );
    }
    // A byte-order mark at the start of a program or an input is dropped.
    let d = temp_dir("bom");
    let bom = |p: &Path, body: &str| std::fs::write(p, format!("\u{feff}{body}")).unwrap();
    let (f, inp) = (d.join("bom.fun"), d.join("bom.in"));
    bom(&f, &std::fs::read_to_string(prog).unwrap());
    bom(&inp, "3 [1, 2, 3]");
    let o = funmem(&["run", s(&f), "--input", s(&inp)], "");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "[2i64, 5i64, 8i64]\n");
    let o = funmem(&["test", s(&f)], "");
    assert_exit(&o, 0);
    // A position after a mark counts from after it.
    bom(
        &f,
        "def main (n: int) =\n  let (y: int) = n + zz\n  in (y)\n",
    );
    let o = funmem(&["check", s(&f)], "");
    assert_exit(&o, 2);
    assert!(text(&o.stderr).starts_with(&format!("{}:2:22: unbound variable `zz`", s(&f))));
    std::fs::remove_dir_all(&d).unwrap();
}

/// `fuzz --merge` counts each shard once and `--out` errors name the path.
#[test]
fn fuzz_merge_and_out_faults() {
    let d = temp_dir("merge");
    let (a, b) = (d.join("a"), d.join("b"));
    for (dir, shard) in [(&a, "0/2"), (&b, "1/2")] {
        let o = funmem(
            &[
                "fuzz",
                "--count",
                "8",
                "--seed",
                "5",
                "--shard",
                shard,
                "--out",
                s(dir),
            ],
            "",
        );
        assert_exit(&o, 0);
    }
    let o = funmem(&["fuzz", "--merge", s(&a), s(&b), "--json"], "");
    assert_exit(&o, 0);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["programs"], 8);
    // The same shard twice is refused, naming the file.
    let o = funmem(&["fuzz", "--merge", s(&a), s(&a)], "");
    assert_exit(&o, 2);
    let err = text(&o.stderr);
    assert!(err.contains("shard 0/2 is already counted"), "{err}");
    assert!(err.contains("summary-0-of-2.json"), "{err}");
    // Counts that would overflow are refused.
    let path = b.join("summary-1-of-2.json");
    let mut sum: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    sum["programs"] = serde_json::json!(u64::MAX);
    std::fs::write(&path, sum.to_string()).unwrap();
    let o = funmem(&["fuzz", "--merge", s(&a), s(&b)], "");
    assert_exit(&o, 2);
    assert!(
        text(&o.stderr).contains("counts overflow"),
        "{}",
        text(&o.stderr)
    );
    // An output folder that cannot be made is named, before any program runs.
    let blocker = d.join("file");
    std::fs::write(&blocker, "").unwrap();
    let bad = blocker.join("out");
    let o = funmem(&["fuzz", "--count", "100000", "--out", s(&bad)], "");
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains(s(&bad)), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&d).unwrap();
}
