//! Futhark's data formats through the command line (docs/data.md): `run`
//! with binary and mixed inputs and `--binary-output`, `funmem dataset`,
//! test blocks with `input @ FILE`, `output @ FILE` and `random input`, and
//! an independent check against the `futhark-data` Python package.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn funmem_with(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the funmem binary runs");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("funmem finishes");
    let _ = writer.join();
    out
}

fn funmem(args: &[&str]) -> Output {
    funmem_with(args, b"")
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

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("funmem-data19-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write_temp(name: &str, data: &[u8]) -> String {
    let p = temp_dir().join(name);
    std::fs::write(&p, data).expect("temp file");
    p.to_string_lossy().to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// An IMP program (its only stage is itself) that sums an array and
/// returns a copy of it plus one.
const SUM: &str = "def main (n: int) (xs: [n]int @ xm -> R(n)) =
  var ym: mem;
  ym <- alloc n;
  kernel j < n do
    var x: int;
    x <- xm[j];
    ym[j] <- x + 1
  done;
  var s: int;
  s <- 0;
  for j < n do
    var x: int;
    x <- xm[j];
    s <- s + x
  done
  out (s, ys: [n]int @ ym -> R(n))
";

#[test]
fn run_reads_binary_and_mixed_inputs_and_writes_binary() {
    let prog = write_temp("sum.imp", SUM.as_bytes());
    let text = funmem_with(&["run", &prog], b"3 [1, 2, 3]");
    assert_exit(&text, 0);
    assert_eq!(stdout(&text), "6i64\n[2i64, 3i64, 4i64]\n");
    // The same inputs in binary, and mixed.
    let bin = funmem_with(&["dataset", "-b"], b"3 [1, 2, 3]");
    assert_exit(&bin, 0);
    assert_eq!(&bin.stdout[..3], b"b\x02\x00");
    let o = funmem_with(&["run", &prog], &bin.stdout);
    assert_exit(&o, 0);
    assert_eq!(o.stdout, text.stdout);
    let mut mixed = b"3 -- n\n".to_vec();
    mixed.extend_from_slice(&funmem_with(&["dataset", "-b"], b"[1, 2, 3]").stdout);
    let input = write_temp("mixed.in", &mixed);
    let o = funmem(&["run", &prog, "--input", &input]);
    assert_exit(&o, 0);
    assert_eq!(o.stdout, text.stdout);
    // --binary-output, read back by dataset's conversion.
    let o = funmem_with(&["run", "--binary-output", &prog], b"3 [1, 2, 3]");
    assert_exit(&o, 0);
    assert_eq!(&o.stdout[..7], b"b\x02\x00 i64");
    let back = funmem_with(&["dataset"], &o.stdout);
    assert_eq!(back.stdout, text.stdout);
    // A truncated binary input: exit 2, the byte offset named.
    let cut = &bin.stdout[..bin.stdout.len() - 3];
    let o = funmem_with(&["run", &prog], cut);
    assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("<stdin>: byte 15: a binary value of type [3]i64 needs 24 bytes"),
        "{err}"
    );
    // A type error in a text input is positioned in the text.
    let o = funmem_with(&["run", &prog], b"3 [1, 2i32, 3i64]");
    assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("<stdin>:1:13: mixed element types"), "{err}");
}

#[test]
fn dataset_generates_every_type_deterministically() {
    let args = [
        "dataset",
        "-g",
        "[2][3]f32",
        "-g",
        "i64",
        "-g",
        "[4]bool",
        "-g",
        "[3]i32",
        "-g",
        "[2][0]f64",
        "-g",
        "f64",
        "--i32-bounds=-3:3",
        "--f32-bounds=-1:1",
        "-s",
        "5",
    ];
    let a = funmem(&args);
    assert_exit(&a, 0);
    assert_eq!(funmem(&args).stdout, a.stdout);
    let text = stdout(&a);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[0].starts_with("[[") && lines[0].matches("f32").count() == 6);
    assert!(lines[1].ends_with("i64"));
    assert!(lines[2].starts_with("[") && !lines[2].contains('i'));
    assert_eq!(lines[4], "empty([2][0]f64)");
    for k in lines[3].trim_matches(['[', ']']).split(", ") {
        let k: i32 = k.trim_end_matches("i32").parse().expect("an i32");
        assert!((-3..=3).contains(&k));
    }
    // Another seed, other values; binary is the same values.
    let mut other = args.to_vec();
    let last = other.len() - 1;
    other[last] = "6";
    assert_ne!(funmem(&other).stdout, a.stdout);
    let mut binary = args.to_vec();
    binary.push("-b");
    let b = funmem(&binary);
    assert_exit(&b, 0);
    assert_eq!(funmem_with(&["dataset"], &b.stdout).stdout, a.stdout);
    // Bad arguments: exit 2 with a message.
    for (bad, says) in [
        (&["dataset", "-g", "[3]u8"][..], "unknown element type `u8`"),
        (&["dataset", "-g", "[3]i64", "--i64-bounds=5:1"], "LO <= HI"),
        (&["dataset", "-g", "[x]f32"], "neither a type"),
    ] {
        let o = funmem(bad);
        assert_exit(&o, 2);
        assert!(String::from_utf8_lossy(&o.stderr).contains(says), "{bad:?}");
    }
}

#[test]
fn test_blocks_read_files_and_random_inputs() {
    let dir = temp_dir().join("blocks");
    std::fs::create_dir_all(dir.join("data")).expect("dir");
    let block = "-- ==
-- input @ data/a.in
-- output @ data/a.out
-- input { 2 [1, 2] }
-- output { 3 [2, 3] }
-- random input { [0]i64 }
-- random input { [3]i64 }
";
    // `random input` gives n too: a program whose n is a partial size.
    let prog = format!("{block}{SUM}");
    std::fs::write(dir.join("sum.imp"), &prog).expect("program");
    std::fs::write(dir.join("data/a.in"), b"3 [5, 6, 7]").expect("input");
    let out = funmem_with(&["dataset", "-b"], b"18 [6, 7, 8]").stdout;
    std::fs::write(dir.join("data/a.out"), out).expect("output");
    let path = dir.join("sum.imp").to_string_lossy().to_string();
    let o = funmem(&["test", &path]);
    let text = stdout(&o);
    // Random arrays do not match a random n: those cases go wrong.
    assert!(!text.contains("case 0 (input @ data/a.in)"), "{text}");
    assert!(
        text.contains("case 2 (random input), heap semantics: went wrong"),
        "{text}"
    );
    assert!(text.contains("2 passed, 2 failed"), "{text}");
    assert_exit(&o, 1);
    // A wrong expected file says which comparison failed.
    let out = funmem_with(&["dataset", "-b"], b"18 [6, 7, 9]").stdout;
    std::fs::write(dir.join("data/a.out"), out).expect("output");
    let o = funmem(&["test", &path]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "case 0 (input @ data/a.in), heap semantics: result 1 differs at [2]: the program \
             gives 8i64, the test gives 9i64 (compared exactly: [3]i64 against [3]i64)"
        ),
        "{text}"
    );
    // A missing data file is a failure that names it.
    std::fs::remove_file(dir.join("data/a.in")).expect("removed");
    let text = stdout(&funmem(&["test", &path]));
    assert!(text.contains("cannot read data/a.in"), "{text}");
}

/// The Python environment with `futhark-data`, made once under target/;
/// `None` (with the reason printed) where it cannot be made, e.g. offline.
fn futhark_data_python() -> Option<PathBuf> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/futhark-data-venv");
    let python = venv.join("bin/python");
    let ready = venv.join("ready");
    if ready.exists() {
        return Some(python);
    }
    let steps: [(&str, Vec<&str>); 2] = [
        ("python3", vec!["-m", "venv", venv.to_str()?]),
        (
            python.to_str()?,
            vec!["-m", "pip", "install", "-q", "futhark-data", "numpy<2"],
        ),
    ];
    for (cmd, args) in steps {
        let ok = Command::new(cmd)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())
            .and_then(|o| {
                if o.status.success() {
                    Ok(())
                } else {
                    Err(String::from_utf8_lossy(&o.stderr).to_string())
                }
            });
        if let Err(e) = ok {
            println!(
                "SKIPPED the futhark-data check: `{cmd} {}` failed (no python3-venv or no \
                 network?): {}",
                args.join(" "),
                e.lines().last().unwrap_or_default()
            );
            return None;
        }
    }
    std::fs::write(&ready, b"").ok()?;
    Some(python)
}

#[test]
fn agrees_with_futhark_data() {
    let Some(python) = futhark_data_python() else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/futhark_data_check.py");
    let o = Command::new(python)
        .args(["-W", "ignore"])
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_funmem"))
        .output()
        .expect("python runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("agree"), "{out}");
    println!("{out}");
}
