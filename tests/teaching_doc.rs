//! The commands of docs/teaching.md are run, and their output compared
//! with what the page shows.
//!
//! In every ```` ```sh ```` block of the page, a line `$ funmem ARGS` (or
//! `$ echo WORDS | funmem ARGS`, the words given on standard input) is a
//! command, run from the repository root with the `funmem` this crate
//! builds; the lines after it, up to the next `$` line or the end of the
//! block, are its standard output (with `2>&1` at the end of the command,
//! standard output then standard error). Lines are compared exactly, but
//! for trailing spaces and blank lines at the end; a line `...` stands for
//! any number of lines. A
//! command must exit 0 unless it ends with `# exits N`. Arguments are
//! separated by spaces; quotes ('...' or "...") keep spaces in one.
//!
//! A block opened with ```` ```sh if-available ```` shows commands that
//! other parts of the project provide: a command of it whose subcommand or
//! flags this `funmem` lacks is skipped, saying why; everything else in it
//! is checked as above.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PAGE: &str = "docs/teaching.md";

/// One command of the page and what it must give.
#[derive(Debug)]
struct Example {
    /// Its line in the page (1-based).
    line: usize,
    /// The arguments after `funmem`.
    args: Vec<String>,
    /// Standard input, from `echo`.
    stdin: Option<String>,
    /// Whether standard error is compared too (`2>&1`).
    merge_stderr: bool,
    /// The exit code (`# exits N`; 0 unless told).
    code: i32,
    /// The output lines shown; `...` matches any number of lines.
    expected: Vec<String>,
    /// From an `if-available` block.
    optional: bool,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Splits a command line into words: spaces separate, quotes keep.
fn words(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("an unclosed quote in `{s}`"));
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// Reads a `$` line (without the `$ `) into an example.
fn command(text: &str, line: usize, optional: bool) -> Result<Example, String> {
    let (cmd, comment) = match text.split_once(" # ") {
        Some((c, k)) => (c.trim(), Some(k.trim())),
        None => (text.trim(), None),
    };
    let code = match comment {
        Some(k) => match k.strip_prefix("exits ") {
            Some(n) => n
                .trim()
                .parse()
                .map_err(|_| format!("line {line}: `# exits N` wants a number: {k}"))?,
            None => 0,
        },
        None => 0,
    };
    let (stdin, cmd) = match cmd.split_once(" | ") {
        Some((left, right)) => {
            let w = words(left)?;
            if w.first().map(String::as_str) != Some("echo") {
                return Err(format!("line {line}: only `echo ... |` may feed a command"));
            }
            (Some(format!("{}\n", w[1..].join(" "))), right)
        }
        None => (None, cmd),
    };
    let mut args = words(cmd).map_err(|e| format!("line {line}: {e}"))?;
    if args.first().map(String::as_str) != Some("funmem") {
        return Err(format!(
            "line {line}: the page's commands run funmem, not `{cmd}` (use a ```text block)"
        ));
    }
    args.remove(0);
    let merge_stderr = args.last().map(String::as_str) == Some("2>&1");
    if merge_stderr {
        args.pop();
    }
    Ok(Example {
        line,
        args,
        stdin,
        merge_stderr,
        code,
        expected: Vec::new(),
        optional,
    })
}

/// The examples of a page, in order.
fn examples(page: &str) -> Result<Vec<Example>, String> {
    let mut out: Vec<Example> = Vec::new();
    // Inside a fence: whether it is a `sh` block, and whether optional.
    let mut fence: Option<(bool, bool)> = None;
    let mut open: Option<Example> = None;
    for (k, raw) in page.lines().enumerate() {
        let line = k + 1;
        let t = raw.trim_end();
        if let Some(info) = t.trim_start().strip_prefix("```") {
            match fence {
                None => {
                    let mut w = info.split_whitespace();
                    let sh = w.next() == Some("sh");
                    let optional = w.any(|x| x == "if-available");
                    fence = Some((sh, optional));
                }
                Some(_) => {
                    fence = None;
                    out.extend(open.take());
                }
            }
            continue;
        }
        let Some((true, optional)) = fence else {
            continue;
        };
        if let Some(cmd) = t.strip_prefix("$ ") {
            out.extend(open.take());
            open = Some(command(cmd, line, optional)?);
        } else if let Some(e) = open.as_mut() {
            e.expected.push(t.to_string());
        }
    }
    if fence.is_some() {
        return Err("the page ends inside a code block".into());
    }
    Ok(out)
}

/// Whether `got` is what `want` shows, `...` matching any lines.
fn matches(want: &[String], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((w, rest)) if w == "..." => (0..=got.len()).any(|k| matches(rest, &got[k..])),
        Some((w, rest)) => match got.split_first() {
            Some((g, more)) => g.trim_end() == w && matches(rest, more),
            None => false,
        },
    }
}

fn funmem(args: &[String], stdin: Option<&str>) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the funmem binary runs");
    if let Some(mut i) = child.stdin.take() {
        if let Some(s) = stdin {
            i.write_all(s.as_bytes()).expect("input written");
        }
    }
    child.wait_with_output().expect("funmem finishes")
}

/// Why an optional example cannot run here: its subcommand or a flag is
/// missing from this `funmem`.
fn unavailable(e: &Example) -> Option<String> {
    let sub = e.args.first()?;
    let help = funmem(&[sub.clone(), "--help".into()], None);
    if !help.status.success() {
        return Some(format!("this funmem has no `{sub}` subcommand yet"));
    }
    let text = String::from_utf8_lossy(&help.stdout);
    e.args
        .iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a))
        .find(|flag| {
            !text
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .any(|w| w == *flag)
        })
        .map(|flag| format!("`funmem {sub}` has no {flag} yet"))
}

#[test]
fn the_teaching_page_shows_what_its_commands_print() {
    let page = std::fs::read_to_string(root().join(PAGE)).expect("docs/teaching.md");
    let exs = examples(&page).unwrap_or_else(|e| panic!("{PAGE}: {e}"));
    // The page writes its HTML examples under target/ (ignored by git),
    // which a build elsewhere (CARGO_TARGET_DIR) does not make.
    std::fs::create_dir_all(root().join("target")).expect("target/");
    let mut failures = Vec::new();
    let mut ran = 0;
    for e in &exs {
        let shown = format!("{PAGE}:{}: funmem {}", e.line, e.args.join(" "));
        if e.optional {
            if let Some(why) = unavailable(e) {
                println!("skipped {shown}: {why}");
                continue;
            }
        }
        let o = funmem(&e.args, e.stdin.as_deref());
        ran += 1;
        let mut out = String::from_utf8_lossy(&o.stdout).to_string();
        if e.merge_stderr {
            out.push_str(&String::from_utf8_lossy(&o.stderr));
        }
        // Blank lines at the end of an output do not show on a page.
        let got: Vec<&str> = out.trim_end().lines().collect();
        if o.status.code() != Some(e.code) {
            failures.push(format!(
                "{shown}: exit code {:?}, the page says {}\nstderr:\n{}",
                o.status.code(),
                e.code,
                String::from_utf8_lossy(&o.stderr)
            ));
        } else if !matches(&e.expected, &got) {
            failures.push(format!(
                "{shown}: the output differs from the page's\n--- page\n{}\n--- got\n{}",
                e.expected.join("\n"),
                out.trim_end()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The page is a course, not a list of skips.
    assert!(ran >= 8, "only {ran} commands of {PAGE} ran");
}

#[test]
fn the_page_names_only_files_that_exist() {
    let page = std::fs::read_to_string(root().join(PAGE)).expect("docs/teaching.md");
    for e in examples(&page).unwrap_or_else(|e| panic!("{PAGE}: {e}")) {
        for a in &e.args {
            let looks_like_file = [".fun", ".funmem", ".imp", ".in"]
                .iter()
                .any(|x| a.ends_with(x));
            if looks_like_file {
                assert!(
                    Path::new(&root()).join(a).is_file(),
                    "{PAGE}:{}: no file {a}",
                    e.line
                );
            }
        }
    }
}

#[test]
fn commands_and_outputs_are_read_from_the_page() {
    let page = "text\n```sh\n$ echo 1 2 | funmem step a.fun --input 'b c.in' # exits 1\nout 1\n...\n$ funmem derive x.imp 2>&1\n```\n```text\n$ funmem not run\n```\n```sh if-available\n$ funmem trace y.fun\n```\n";
    let exs = examples(page).expect("examples");
    assert_eq!(exs.len(), 3);
    assert_eq!(exs[0].line, 3);
    assert_eq!(exs[0].args, ["step", "a.fun", "--input", "b c.in"]);
    assert_eq!(exs[0].stdin.as_deref(), Some("1 2\n"));
    assert_eq!(exs[0].code, 1);
    assert_eq!(exs[0].expected, ["out 1", "..."]);
    assert!(exs[1].merge_stderr && exs[1].args == ["derive", "x.imp"]);
    assert!(!exs[1].optional && exs[2].optional);
    assert!(examples("```sh\n$ cargo build\n```\n").is_err());
    assert!(examples("```sh\n$ funmem x\n").is_err());
    let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&w(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&w(&["...", "a", "..."]), &["a"]));
    assert!(!matches(&w(&["a", "...", "d"]), &["a", "b"]));
    assert!(!matches(&w(&["a"]), &["a", "b"]));
}
