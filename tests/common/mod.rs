//! What the command-line regression tests share: running the `funmem`
//! binary under a bound the harness enforces (a wall-clock limit after
//! which it is killed and the test fails, and optionally an address-space
//! limit), exit-code assertions and temporary files.
//!
//! Each test file that uses it says `mod common;`; not every file uses every
//! helper.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The bound of [`funmem`]: longer than any command of the tests may take.
pub const BOUND: Duration = Duration::from_secs(120);

/// Runs `funmem ARGS` with `stdin`, under an address-space limit of
/// `vmem_kib` KiB (none when 0), killed after `limit`: a hang or a run
/// past the bound fails the test.
pub fn funmem_bounded(args: &[&str], stdin: &str, vmem_kib: u64, limit: Duration) -> Output {
    let bin = env!("CARGO_BIN_EXE_funmem");
    let mut cmd = if vmem_kib > 0 {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("ulimit -v {vmem_kib} && exec \"$0\" \"$@\""))
            .arg(bin)
            .args(args);
        c
    } else {
        let mut c = Command::new(bin);
        c.args(args);
        c
    };
    let mut child = cmd
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the funmem binary runs");
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin.as_bytes());
    }
    // Drained as the command runs, so that a full pipe never stops it.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|r| Box::new(r) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = err.join().unwrap_or_default();
            panic!(
                "funmem {args:?} ran past {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Runs `funmem ARGS` with `stdin`, killed (and failing) after [`BOUND`].
pub fn funmem(args: &[&str], stdin: &str) -> Output {
    funmem_bounded(args, stdin, 0, BOUND)
}

/// Asserts the exit code, showing the output when it differs.
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The results `funmem run PROGRAM` prints for `input`, asserting that
/// it exits 0.
pub fn run_ok(program: &str, input: &str) -> String {
    let o = funmem(&["run", program], input);
    assert_exit(&o, 0);
    text(&o.stdout)
}

/// Bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes `text` to `name` in this test process's temporary folder; the
/// path.
pub fn write_temp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("funmem-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("temp file");
    p.to_string_lossy().to_string()
}

/// A fresh, empty temporary folder for one test.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("funmem-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// OpenCL tests need PoCL (scripts/install-deps installs it);
/// `FUNMEM_SKIP_OPENCL=1` skips them.
pub fn opencl() -> bool {
    std::env::var_os("FUNMEM_SKIP_OPENCL").is_none()
}

/// The `input { }` / `output { }` pairs of a program's test block that
/// `funmem test` runs with an expected output (not `compiled`, random or
/// file inputs), as value texts; read by the project's own test-block
/// parser.
pub fn block_cases(path: &str) -> Vec<(String, String)> {
    use funmem_lang::testspec::{Expect, InputFrom};
    let src = std::fs::read_to_string(path).expect("the program");
    let spec = funmem_lang::testspec::parse(&src)
        .expect("a well-formed test block")
        .expect("a test block");
    let cases: Vec<(String, String)> = spec
        .cases
        .into_iter()
        .filter(|c| !c.compiled && c.from == InputFrom::Inline)
        .filter_map(|c| match c.expect {
            Expect::Output(o) => Some((c.input, o)),
            _ => None,
        })
        .collect();
    assert!(
        !cases.is_empty(),
        "{path}: no input with an output to check"
    );
    cases
}

/// Every scalar of a value text (Futhark's format), arrays flattened in
/// row-major order.
pub fn scalars(text: &str) -> Vec<funmem_lang::prim::Const> {
    use funmem_semantics::value::Value;
    let values = funmem_semantics::textual::parse_values(text)
        .unwrap_or_else(|e| panic!("not a value text ({}): {text}", e.message));
    values
        .iter()
        .flat_map(|v| match v {
            Value::Scalar(c) => vec![*c],
            Value::Array(a) => a.data.iter().collect(),
        })
        .collect()
}

/// The scalars of a value text as `f64` (exact for every `f32`, and for
/// the integers of the benchmark tests).
pub fn numbers(text: &str) -> Vec<f64> {
    scalars(text).iter().map(|c| c.as_f64()).collect()
}

/// A `rows` × `cols` matrix of f32, stored row after row in `xs`, in the
/// value format (`[[1.0f32, 2.0f32], ...]`, each float printed exactly).
pub fn f32_matrix(rows: usize, cols: usize, xs: &[f32]) -> String {
    let rows: Vec<String> = (0..rows)
        .map(|r| {
            let cells: Vec<String> = xs[r * cols..(r + 1) * cols]
                .iter()
                .map(|x| format!("{x:?}f32"))
                .collect();
            format!("[{}]", cells.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

/// The scalars of a value text as `f32`.
pub fn floats(text: &str) -> Vec<f32> {
    numbers(text).iter().map(|&x| x as f32).collect()
}

/// The integers of a value text, exactly.
pub fn ints(text: &str) -> Vec<i64> {
    use funmem_lang::prim::Const;
    scalars(text)
        .iter()
        .map(|c| match *c {
            Const::I64(k) => k,
            Const::I32(k) => i64::from(k),
            c => panic!("not an integer: {c}"),
        })
        .collect()
}
