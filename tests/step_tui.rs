//! The terminal UI of `funmem step`, driven in tmux as a user would: keys
//! sent with `send-keys`, screens read with `capture-pane`; and the text of
//! `funmem step --diff` (docs/cli.md).
//!
//! Each test starts its own tmux server (`-S`: a socket of its own in the
//! test's temporary directory; no configuration file), so that it neither
//! sees nor disturbs anyone else's sessions. Where tmux is missing the tmux
//! tests say so and pass (scripts/install-deps installs it).

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;

use common::assert_exit;

/// Runs funmem with nothing on standard input (bounded: a hang fails).
fn funmem(args: &[&str]) -> Output {
    common::funmem(args, "")
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("funmem-step-tui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write_temp(name: &str, text: &str) -> String {
    let p = temp_dir().join(name);
    std::fs::write(&p, text).expect("temp file");
    p.to_string_lossy().to_string()
}

/// A kernel writing 0, 10, 20, ... into its destination.
const KERNEL: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (xs: [n]int @ m -> R(n)) = kernel i < n do
      let (v: int) = i * 10
      in (v)
  let (t: int) = n + 1
  in (xs, t)
";

/// Every iteration writes the same element: a race.
const RACY: &str = "def main (n: int) =
  let (m: mem) = alloc 1
  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do
    in (i)
  in (n)
";

fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        println!("skipped: tmux not installed (scripts/install-deps installs it)");
    }
    ok
}

/// A tmux server of its own running one command in a 160×50 window.
struct Tmux {
    /// The server's socket, in the test's temporary directory (removed
    /// when done).
    socket: PathBuf,
    /// Where the command writes its exit code when it ends.
    status: PathBuf,
}

/// How long a screen may take to show what is expected.
const PATIENCE: Duration = Duration::from_secs(30);

impl Tmux {
    /// Starts `funmem ARGS`, its standard input from `echo STDIN` if given.
    fn start(tag: &str, stdin: Option<&str>, args: &str) -> Tmux {
        Tmux::start_then(tag, stdin, args, "")
    }

    /// Starts `funmem ARGS` and, once it ended, the shell command `then`.
    fn start_then(tag: &str, stdin: Option<&str>, args: &str, then: &str) -> Tmux {
        let socket = temp_dir().join(format!("{tag}.tmux"));
        let status = temp_dir().join(format!("{tag}.status"));
        let _ = std::fs::remove_file(&status);
        let pipe = stdin.map_or(String::new(), |s| format!("echo '{s}' | "));
        let cmd = format!(
            "{pipe}{} {args}; echo $? > {}; {then}",
            env!("CARGO_BIN_EXE_funmem"),
            status.display()
        );
        let o = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "160", "-y", "50", "-s", "t", &cmd])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("tmux runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        Tmux { socket, status }
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn keys(&self, keys: &[&str]) {
        for k in keys {
            let o = self.tmux(&["send-keys", "-t", "t", k]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).to_string()
    }

    /// The screen once it satisfies `p` (polled, up to [`PATIENCE`]).
    fn wait(&self, what: &str, p: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if p(&s) {
                return s;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited {PATIENCE:?} for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait(text, |s| s.contains(text))
    }

    /// The screen once it shows all of `texts` (a screen may be captured
    /// half redrawn, so every part is waited for).
    fn wait_all(&self, texts: &[&str]) -> String {
        self.wait(&texts.join(" and "), |s| {
            texts.iter().all(|t| s.contains(t))
        })
    }

    /// The command's exit code once it has ended and the session with it.
    fn exit_code(&self) -> String {
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.status) {
                if s.ends_with('\n') {
                    return s.trim().to_string();
                }
            }
            assert!(
                start.elapsed() < PATIENCE,
                "the stepper did not end; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The header's first row: `step k/N  RULE  title`.
fn header(screen: &str) -> &str {
    screen.lines().nth(1).unwrap_or_default()
}

#[test]
fn the_stepper_is_driven_by_its_keys() {
    if !have_tmux() {
        return;
    }
    let prog = write_temp("kernel.funmem", KERNEL);
    let input = write_temp("kernel.in", "3\n");
    let t = Tmux::start("keys", None, &format!("step {prog} --input {input}"));
    let first = t.wait_all(&[
        "step 0/",
        "E-MEM-PROG",
        "program inputs",
        "(no block allocated yet)",
        "q quit",
    ]);
    assert!(header(&first).contains("step 0/"), "{first}");

    t.keys(&["s"]);
    let one = t.wait_all(&[
        "step 1/",
        "E-MEM-ALLOC",
        " 2▶   let (m: mem) = alloc n",
        "m (24 bytes)",
    ]);
    assert!(header(&one).contains("E-MEM-ALLOC"), "{one}");

    // Back: the very same screen as at the start.
    t.keys(&["b"]);
    t.wait("the first screen again", |s| s == first);

    // The next kernel iteration, with its index in the path.
    t.keys(&["i"]);
    let it = t.wait_all(&["iteration 0", "in: kernel 3:3 i=0"]);
    assert!(header(&it).contains("E-MEM-KERNEL"), "{it}");
    t.keys(&["i"]);
    t.wait_for("in: kernel 3:3 i=1");

    // A breakpoint on line 6 set with `:6 Enter`, reached with `c`.
    t.keys(&[":", "6", "Enter"]);
    t.wait_all(&["breakpoint set on line 6", "●6 "]);
    t.keys(&["g", "c"]);
    let at = t.wait_all(&["●6▶   let (t: int) = n + 1", "E-SCALAR"]);
    assert!(header(&at).contains("E-SCALAR"), "{at}");
    // B clears it again; c then says there is none.
    t.keys(&["B", "c"]);
    t.wait_for("no breakpoints");

    // Over from the kernel's first step is past the kernel; the end shows
    // the results and the heap the kernel wrote.
    t.keys(&["g", "s", "s", "n"]);
    t.wait_all(&["end of let (xs", "+xs = block 0 @ 0 + {(3 : 1)}"]);
    t.keys(&["e"]);
    t.wait_all(&[
        "results: [0i64, 10i64, 20i64], 4i64",
        "R  0 R 10 R 20 ",
        "■ xs 0 + {(3 : 1)}",
    ]);

    // The help, closed by any key.
    t.keys(&["?"]);
    t.wait_for("run to the next allocation");
    t.keys(&["x"]);
    t.wait("the help closed", |s| {
        !s.contains("run to the next allocation")
    });

    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "0");
    // The session ended with the command.
    let start = Instant::now();
    while t.tmux(&["has-session", "-t", "t"]).status.success() {
        assert!(start.elapsed() < PATIENCE, "the session did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_stepper_shows_a_race_with_both_accesses() {
    if !have_tmux() {
        return;
    }
    let prog = write_temp("racy.funmem", RACY);
    // The inputs come through a pipe: the keys are read from the terminal.
    let t = Tmux::start("race", Some("2"), &format!("step {prog}"));
    t.wait_for("E-MEM-PROG");
    t.keys(&["e"]);
    // Both accesses, and the racing cell marked.
    t.wait_all(&[
        "error: E-MEM-KERNEL: data race",
        "race in the kernel at 3:3 on block 0 byte 0: iteration 0 wrote, then iteration 1 wrote",
        "b0[0] ! 1 ",
    ]);
    t.keys(&["Left"]);
    t.wait_for("step 4/");
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "1", "a race is a run that went wrong");
}

#[test]
fn a_small_terminal_gets_a_message_not_a_crash() {
    if !have_tmux() {
        return;
    }
    let prog = write_temp("small.funmem", KERNEL);
    let input = write_temp("small.in", "2\n");
    let t = Tmux::start("small", None, &format!("step {prog} --input {input}"));
    t.wait_for("q quit");
    t.tmux(&["resize-window", "-t", "t", "-x", "40", "-y", "10"]);
    t.wait_for("The terminal is 40×10");
    t.tmux(&["resize-window", "-t", "t", "-x", "160", "-y", "50"]);
    t.wait_all(&["E-MEM-PROG", "q quit"]);
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "0");
}

#[test]
fn diff_prints_both_runs_and_heaps_side_by_side() {
    let a = write_temp(
        "one_block.funmem",
        "def main (n: int) =
  let (m: mem) = alloc n + n
  let (xs: [n]int @ m -> R(n)) = iota n
  let (ys: [n]int @ m -> n + {(n : 1)}) = copy xs
  in (ys)
",
    );
    let b = write_temp(
        "two_blocks.funmem",
        "def main (n: int) =
  let (m: mem) = alloc n
  let (xs: [n]int @ m -> R(n)) = iota n
  let (k: mem) = alloc n
  let (ys: [n]int @ k -> R(n)) = copy xs
  in (ys)
",
    );
    let input = write_temp("diff.in", "3\n");
    let o = funmem(&["step", "--diff", &a, &b, "--input", &input]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with(&format!("left: {a}")), "{out}");
    assert!(lines[0].contains(&format!("│ right: {b}")), "{out}");
    // Every line has the separator in the same column.
    let col = |l: &str| l.chars().position(|c| c == '│');
    assert!(lines.iter().all(|l| col(l) == col(lines[0])), "{out}");
    let pair = |l: &str| -> (String, String) {
        let (x, y) = l.split_once('│').unwrap_or_default();
        (x.trim().to_string(), y.trim().to_string())
    };
    // The copy puts ys into m (left) or into its own block (right).
    let heaps: Vec<(String, String)> = lines
        .iter()
        .map(|l| pair(l))
        .filter(|(x, y)| x.starts_with("b0") || y.starts_with("b0") || y.starts_with("b1"))
        .collect();
    assert!(
        heaps
            .iter()
            .any(|(x, _)| x == "b0 i64: 0 1 2 0 1 2 | xs 0 + {(3 : 1)}, ys 3 + {(3 : 1)}"),
        "{out}"
    );
    assert!(
        heaps
            .iter()
            .any(|(_, y)| y == "b1 i64: 0 1 2 | ys 0 + {(3 : 1)}"),
        "{out}"
    );
    let last = pair(lines.last().unwrap_or(&""));
    assert!(last.0.contains("results: [0i64, 1i64, 2i64]"), "{out}");
    assert!(last.1.contains("results: [0i64, 1i64, 2i64]"), "{out}");

    // A pass's output against its input: the same results, exit 0.
    let o = funmem(&[
        "step",
        "--diff",
        "papers/ifl2022/sec5_kernel_alloc.funmem",
        "papers/ifl2022/sec5_expanded_gpu.funmem",
        "--input",
        &write_temp("sec5.in", "2 3\n"),
    ]);
    assert_exit(&o, 0);

    // Wrong uses are refused with exit 2.
    let o = funmem(&["step", "--diff", &a]);
    assert_exit(&o, 2);
    let o = funmem(&["step", "--diff", &a, "tests/programs/fun/arith.fun"]);
    assert_exit(&o, 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("take different inputs"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn plain_and_json_print_lines_even_where_a_terminal_is() {
    let prog = write_temp("plain.funmem", KERNEL);
    let input = write_temp("plain.in", "2\n");
    let o = funmem(&["step", &prog, "--input", &input, "--plain"]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            .next()
            .unwrap_or_default()
            .contains("E-MEM-PROG"),
        "{out}"
    );
    let o = funmem(&["step", &prog, "--plain", "--json"]);
    assert_exit(&o, 2);
}

#[test]
fn quitting_restores_the_terminal() {
    if !have_tmux() {
        return;
    }
    let prog = write_temp("restore.funmem", KERNEL);
    let input = write_temp("restore.in", "2\n");
    // After the stepper: the terminal's modes and a marker, then a pause
    // to read them.
    let t = Tmux::start_then(
        "restore",
        None,
        &format!("step {prog} --input {input}"),
        "printf 'modes:'; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo \
         | tr '\\n' ' '; echo; sleep 30",
    );
    t.wait_all(&["E-MEM-PROG", "q quit"]);
    t.keys(&["i", "q"]);
    assert_eq!(t.exit_code(), "0");
    // Line mode and echo are back, and the main screen has left the UI.
    let s = t.wait_for("modes:");
    assert!(s.contains("modes:icanon echo"), "{s}");
    assert!(!s.contains("E-MEM-PROG"), "{s}");
}

#[test]
fn side_by_side_on_a_terminal_moves_both_columns() {
    if !have_tmux() {
        return;
    }
    let input = write_temp("sec5.in", "2 3\n");
    let t = Tmux::start(
        "diff",
        None,
        &format!(
            "step --diff papers/ifl2022/sec5_kernel_alloc.funmem \
             papers/ifl2022/sec5_expanded_gpu.funmem --input {input}"
        ),
    );
    t.wait_all(&[
        "left: papers/ifl2022/sec5_kernel_alloc.funmem",
        "right: papers/ifl2022/sec5_expanded_gpu.funmem",
        "q quit",
    ]);
    // The next allocation: the source allocates xss_mem first, the
    // expanded program too.
    t.keys(&["a"]);
    t.wait_all(&["step 1/", "alloc b0 (48 bytes); xss_mem = block 0"]);
    // The end: both give the same results; the source used five blocks,
    // the expanded program three.
    t.keys(&["e"]);
    let s = t.wait_all(&["heap: 5 blocks", "heap: 3 blocks", "q quit"]);
    assert_eq!(
        s.matches("results: [[0i64, 1i64, 2i64], [1i64, 2i64, 3i64]]")
            .count(),
        2,
        "{s}"
    );
    t.keys(&["q"]);
    assert_eq!(t.exit_code(), "0");
}
