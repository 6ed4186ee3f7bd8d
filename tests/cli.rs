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
