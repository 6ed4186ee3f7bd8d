//! `funmem derive` (docs/cli.md): derivation trees of small runs as text
//! and as LaTeX, the size limit, stuck runs.

use std::process::{Command, Output, Stdio};

mod common;

use common::{assert_exit, funmem as funmem_stdin, temp_dir, write_temp};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// A FUNMEM kernel writing its iterations into a block, then an index.
const KERNEL: &str = "def main (n: int) =
  let (m: mem) = alloc n
  let (ys: [n]int @ m -> R(n)) = kernel i < n do
      let (y: int) = i * 2
      in (y)
  let (z: int) = ys[1]
  in (z)
";

/// Asserts two texts equal line by line, naming the first line that
/// differs.
fn assert_lines(got: &str, want: &str) {
    let g: Vec<&str> = got.lines().collect();
    let w: Vec<&str> = want.lines().collect();
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        assert_eq!(a, b, "line {} differs; whole output:\n{got}", k + 1);
    }
    assert_eq!(g.len(), w.len(), "line counts differ; whole output:\n{got}");
}

#[test]
fn the_fun_if_example_derives_as_e_let_chains() {
    let o = funmem_stdin(&["derive", "papers/ifl2022/fig02_if_sizes.fun"], "1 3 2");
    assert_exit(&o, 0);
    assert_lines(
        &stdout(&o),
        "\
[E-PROG] ⊢ b ⇓ (3i64, [0i64, 1i64, 2i64])
  E = z_cond ↦ 1i64, x_size ↦ 3i64, y_size ↦ 2i64
  [E-LET] E ⊢ let (z_size: int) (z_arr: [z_size]int) = if… ⇓ (3i64, [0i64, 1i64, 2i64])
    [E-IF-TRUE] E ⊢ if z_cond then … ⇓ (3i64, [0i64, 1i64, 2i64])
      E(z_cond) = 1i64 ≠ 0
      [E-LET] E ⊢ let (x: [x_size]int) = iota x_size … ⇓ (3i64, [0i64, 1i64, 2i64])
        [E-IOTA] E ⊢ iota x_size ⇓ ([0i64, 1i64, 2i64])
        [E-IN] E, x ↦ [0i64, 1i64, 2i64] ⊢ in (x_size, x) ⇓ (3i64, [0i64, 1i64, 2i64])
    [E-IN] E, z_size ↦ 3i64, z_arr ↦ [0i64, 1i64, 2i64] ⊢ in (z_size, z_arr) ⇓ (3i64, [0i64, 1i64, 2i64])
",
    );
}

#[test]
fn a_funmem_kernel_derives_with_read_and_write_sets() {
    let f = write_temp("kernel.funmem", KERNEL);
    let o = funmem_stdin(&["derive", &f], "2");
    assert_exit(&o, 0);
    assert_lines(
        &stdout(&o),
        "\
[E-MEM-PROG] ⊢ b ⇓ (2i64); H
  E = n ↦ 2i64
  [E-STMS] E; H ⊢ let (m: mem) = alloc n … ⇓ E, m ↦ block 0, ys ↦ (block 0, 0 + {(2 : 1)}), z ↦ 2i64; H[b0 ↦ 16 bytes][b0[0] := 0i64, b0[1] := 2i64]; ⟨R = {(b0, 1)}, W = {(b0, 0..1)}⟩
    [E-MEM-ALLOC] E; H ⊢ let (m: mem) = alloc n ⇓ E, m ↦ block 0; H[b0 ↦ 16 bytes]; ⟨R = ∅, W = ∅⟩
    [E-MEM-KERNEL] E; H ⊢ let (ys: [n]int @ m -> R(n)) = kernel i < n… ⇓ E, ys ↦ (block 0, 0 + {(2 : 1)}); H[b0[0] := 0i64, b0[1] := 2i64]; ⟨R = ∅, W = {(b0, 0..1)}⟩
      E(n) = 2i64
      [E-STMS] E, i ↦ 0i64; H ⊢ let (y: int) = i * 2 ⇓ E, y ↦ 0i64; H; ⟨R = ∅, W = ∅⟩
        [E-SCALAR] E; H ⊢ let (y: int) = i * 2 ⇓ E, y ↦ 0i64; H; ⟨R = ∅, W = ∅⟩
      memcopy of iteration 0: b0[0] := 0i64; R′ = ∅, W′ = {(b0, 0)}
      [E-STMS] E, i ↦ 1i64; H ⊢ let (y: int) = i * 2 ⇓ E, y ↦ 2i64; H; ⟨R = ∅, W = ∅⟩
        [E-SCALAR] E; H ⊢ let (y: int) = i * 2 ⇓ E, y ↦ 2i64; H; ⟨R = ∅, W = ∅⟩
      memcopy of iteration 1: b0[1] := 2i64; R′ = ∅, W′ = {(b0, 1)}
      racefree(R1 ∪ R′1, R2 ∪ R′2, W1 ∪ W′1, W2 ∪ W′2)
    [E-MEM-INDEX] E; H ⊢ let (z: int) = ys[1] ⇓ E, z ↦ 2i64; H; ⟨R = {(b0, 1)}, W = ∅⟩
      k = L_ys(1) = 0 + 1·1 = 1
",
    );
}

/// The programs the structural tests run, with their inputs and
/// semantics.
fn programs() -> Vec<(String, &'static str, Option<&'static str>)> {
    vec![
        ("papers/ifl2022/fig02_if_sizes.fun".into(), "1 3 2", None),
        (
            "papers/ifl2022/fig02_if_sizes.fun".into(),
            "0 3 2",
            Some("heap"),
        ),
        ("papers/ifl2022/fig07_if_sizes.funmem".into(), "1 3 2", None),
        ("papers/ifl2022/fig13_if_sizes.imp".into(), "0 3 2", None),
        (
            "tests/programs/fun/nested_kernel.fun".into(),
            "2 2",
            Some("heap"),
        ),
        (
            "tests/programs/fun/loop_for.fun".into(),
            "3 [1, 2, 3]",
            None,
        ),
        (
            "tests/programs/fun/loop_for.fun".into(),
            "3 [1, 2, 3]",
            Some("imp"),
        ),
        (write_temp("kernel2.funmem", KERNEL), "2", None),
    ]
}

fn with_semantics<'a>(args: &mut Vec<&'a str>, sem: Option<&'a str>) {
    if let Some(s) = sem {
        args.push("--semantics");
        args.push(s);
    }
}

#[test]
fn every_node_names_a_rule_of_the_steps_or_a_structural_rule() {
    let structural = ["E-LET", "E-IN", "E-STMS", "E-IMP-SEQ"];
    for (file, input, sem) in programs() {
        let mut args = vec!["step", "--json", file.as_str()];
        with_semantics(&mut args, sem);
        let o = funmem_stdin(&args, input);
        assert_exit(&o, 0);
        let mut rules: Vec<String> = Vec::new();
        let mut rule_steps = 0;
        for l in stdout(&o).lines() {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            if let Some(r) = v["rule"].as_str() {
                rules.push(r.to_string());
            }
            if v["kind"] == "rule" {
                rule_steps += 1;
            }
        }
        let mut args = vec!["derive", file.as_str()];
        with_semantics(&mut args, sem);
        let o = funmem_stdin(&args, input);
        assert_exit(&o, 0);
        let text = stdout(&o);
        let mut statements = 0;
        for l in text.lines() {
            let t = l.trim_start();
            let Some(rest) = t.strip_prefix('[') else {
                continue;
            };
            let rule = rest.split(']').next().unwrap_or_default();
            assert!(
                rules.iter().any(|r| r == rule) || structural.contains(&rule),
                "{file}: node rule {rule} is not in the steps ({rules:?})"
            );
            if !structural.contains(&rule) {
                statements += 1;
            }
        }
        // The root, and a node for every statement's step.
        let rule_steps = rule_steps + 1;
        assert_eq!(
            statements, rule_steps,
            "{file}: one node per statement step and the root\n{text}"
        );
    }
}

/// Whether pdflatex and bussproofs are installed.
fn have_pdflatex() -> bool {
    Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("kpsewhich")
            .arg("bussproofs.sty")
            .output()
            .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}

#[test]
fn latex_output_compiles_with_pdflatex() {
    let have = have_pdflatex();
    if !have {
        println!("skipped: pdflatex with bussproofs not installed (scripts/install-deps installs texlive-latex-base and texlive-science)");
        return;
    }
    let kernel = write_temp("kernel3.funmem", KERNEL);
    let cases: Vec<(&str, &str, Option<&str>, &str)> = vec![
        ("papers/ifl2022/fig02_if_sizes.fun", "1 3 2", None, "value"),
        (&kernel, "3", None, "kernel"),
        (
            "tests/programs/fun/nested_kernel.fun",
            "2 2",
            Some("heap"),
            "nested",
        ),
        ("papers/ifl2022/fig13_if_sizes.imp", "1 3 2", None, "imp"),
        ("papers/ifl2022/fig07_if_sizes.funmem", "0 3 2", None, "if"),
        (
            "tests/programs/fun/update_rows.fun",
            "2 3 [[1, 2, 3], [4, 5, 6]] [7, 8, 9]",
            None,
            "specials",
        ),
    ];
    let dir = temp_dir("latex");
    for (file, input, sem, name) in cases {
        let mut args = vec!["derive", "--latex", file];
        with_semantics(&mut args, sem);
        let o = funmem_stdin(&args, input);
        assert_exit(&o, 0);
        let tex = stdout(&o);
        assert!(tex.starts_with("\\documentclass"), "{tex}");
        assert!(tex.contains("\\usepackage{bussproofs}"), "{tex}");
        assert!(tex.contains("\\RightLabel{\\scriptsize E-"), "{tex}");
        std::fs::write(dir.join(format!("{name}.tex")), &tex).expect("tex file");
        let o = Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error"])
            .arg(format!("{name}.tex"))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("pdflatex runs");
        assert!(
            o.status.success(),
            "{file}: pdflatex failed:\n{}\n{tex}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(dir.join(format!("{name}.pdf")).exists());
    }
}

#[test]
fn a_large_run_is_refused_with_its_size() {
    let o = funmem_stdin(
        &[
            "derive",
            "tests/programs/fun/nested_kernel.fun",
            "--max-nodes",
            "20",
        ],
        "3 3",
    );
    assert_exit(&o, 1);
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the derivation has more than 20 nodes (the run took ")
            && err.contains(" steps); give a smaller input or raise --max-nodes"),
        "{err}"
    );
    // A long run stops being recorded at the budget, its steps still
    // counted; the default limit.
    let o = funmem_stdin(
        &["derive", "tests/programs/fun/nested_kernel.fun"],
        "100 100",
    );
    assert_exit(&o, 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("more than 300 nodes (the run took 20304 steps)"),
        "{err}"
    );
    // Raising the limit lets the same run through.
    let o = funmem_stdin(
        &[
            "derive",
            "tests/programs/fun/nested_kernel.fun",
            "--max-nodes",
            "400",
        ],
        "3 3",
    );
    assert_exit(&o, 0);
}

#[test]
fn a_stuck_run_shows_its_derivation_up_to_the_error() {
    for sem in ["value", "heap", "imp"] {
        let o = funmem_stdin(
            &[
                "derive",
                "tests/programs/fun/index2d.fun",
                "--semantics",
                sem,
            ],
            "2 3 [[1, 2, 3], [4, 5, 6]] 1 7",
        );
        assert_exit(&o, 1);
        let out = stdout(&o);
        assert!(
            out.lines().next().unwrap_or_default().ends_with("⇓ stuck")
                || out
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .ends_with("⇓ stuck; H"),
            "{out}"
        );
        let last = out.lines().last().unwrap_or_default().trim_start();
        assert!(last.starts_with("stuck: E-"), "{sem}: {out}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("index2d.fun: the run went wrong: E-")
                && err.contains("(the derivation stops there)"),
            "{err}"
        );
    }
}

#[test]
fn a_race_is_the_last_premise_of_its_kernel() {
    let racy = write_temp(
        "racy.funmem",
        "def main (n: int) =\n  let (m: mem) = alloc 1\n  let (ys: [n]int @ m -> 0 + {(n : 0)}) = kernel i < n do\n    in (i)\n  in (n)\n",
    );
    let o = funmem_stdin(&["derive", &racy], "2");
    assert_exit(&o, 1);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let n = lines.len();
    assert!(n >= 3, "{out}");
    assert!(
        lines[n - 2]
            .trim_start()
            .starts_with("memcopy of iteration 1: b0[0] := 1i64"),
        "{out}"
    );
    assert!(
        lines[n - 1]
            .trim_start()
            .starts_with("stuck: E-MEM-KERNEL: data race: block 0 at offset 0"),
        "{out}"
    );
}

#[test]
fn bad_command_lines_exit_2() {
    let o = funmem_stdin(&["derive", "no/such/file.fun"], "");
    assert_exit(&o, 2);
    let o = funmem_stdin(
        &[
            "derive",
            "papers/ifl2022/fig13_if_sizes.imp",
            "--semantics",
            "value",
        ],
        "1 3 2",
    );
    assert_exit(&o, 2);
    let o = funmem_stdin(
        &[
            "derive",
            "papers/ifl2022/fig02_if_sizes.fun",
            "--max-nodes",
            "x",
        ],
        "1 3 2",
    );
    assert_exit(&o, 2);
}

#[test]
fn max_nodes_has_a_ceiling() {
    let o = funmem_stdin(
        &[
            "derive",
            "papers/ifl2022/fig02_if_sizes.fun",
            "--max-nodes",
            "20001",
        ],
        "1 3 2",
    );
    assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("at most 20000 nodes"));
}

#[test]
fn a_long_body_is_a_deep_chain_written_without_growing_indentation() {
    let mut p = String::from("def main (x: int) =\n  let (v0: int) = x + 1\n");
    for k in 1..200 {
        p.push_str(&format!("  let (v{k}: int) = v{} + 1\n", k - 1));
    }
    p.push_str("  in (v199)\n");
    let f = write_temp("long.fun", &p);
    let o = funmem_stdin(&["derive", &f, "--max-nodes", "1000"], "1");
    assert_exit(&o, 0);
    let out = stdout(&o);
    // The root, the inputs, 200 E-LETs with their E-SCALARs, the E-IN.
    assert_eq!(out.lines().count(), 2 + 400 + 1, "{out}");
    let last = out.lines().last().unwrap_or_default();
    let want = format!(
        "{}(201) [E-IN] E, v199 ↦ 201i64 ⊢ in (v199) ⇓ (201i64)",
        " ".repeat(80)
    );
    assert_eq!(last, want);
    assert!(out.lines().all(|l| l.len() < 300));
}

#[test]
fn a_stuck_run_in_latex_still_compiles() {
    if !have_pdflatex() {
        println!("skipped: pdflatex with bussproofs not installed (scripts/install-deps installs texlive-latex-base and texlive-science)");
        return;
    }
    let dir = temp_dir("stuck");
    for (file, input, sem) in [
        (
            "tests/programs/fun/index2d.fun",
            "2 3 [[1, 2, 3], [4, 5, 6]] 1 7",
            "heap",
        ),
        (
            "tests/programs/fun/index2d.fun",
            "2 3 [[1, 2, 3], [4, 5, 6]] 1 7",
            "imp",
        ),
    ] {
        let o = funmem_stdin(&["derive", "--latex", file, "--semantics", sem], input);
        assert_exit(&o, 1);
        let tex = stdout(&o);
        assert!(tex.contains("The run got stuck"), "{tex}");
        std::fs::write(dir.join(format!("{sem}.tex")), &tex).expect("tex file");
        let o = Command::new("pdflatex")
            .args(["-interaction=nonstopmode", "-halt-on-error"])
            .arg(format!("{sem}.tex"))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("pdflatex runs");
        assert!(
            o.status.success(),
            "{file}: pdflatex failed:\n{}\n{tex}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// The first `-- input { ... }` of a program's test block, when on one
/// line.
fn first_input(text: &str) -> Option<String> {
    let l = text
        .lines()
        .find(|l| l.trim_start().starts_with("-- input {"))?;
    let inner = l.split_once('{')?.1.rsplit_once('}')?.0;
    Some(inner.trim().to_string())
}

#[test]
fn every_example_program_derives_or_is_refused_cleanly() {
    let mut files = Vec::new();
    for dir in [
        "tests/programs/fun",
        "tests/programs/funmem",
        "tests/programs/imp",
        "papers/ifl2022",
    ] {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for e in std::fs::read_dir(&root)
            .expect("a program folder")
            .flatten()
        {
            let p = e.path();
            if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("fun" | "funmem" | "imp")
            ) {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 30);
    let mut derived = 0;
    for p in files {
        let text = std::fs::read_to_string(&p).expect("a program");
        let Some(input) = first_input(&text) else {
            continue;
        };
        let file = p.to_string_lossy().to_string();
        let sems: &[&str] = if file.ends_with(".imp") {
            &["imp"]
        } else {
            &["value", "heap", "imp"]
        };
        for sem in sems {
            for latex in [false, true] {
                let mut args = vec!["derive", file.as_str(), "--semantics", sem];
                args.extend(["--max-nodes", "2000"]);
                if latex {
                    args.push("--latex");
                }
                let o = funmem_stdin(&args, &input);
                let err = String::from_utf8_lossy(&o.stderr);
                assert!(
                    matches!(o.status.code(), Some(0 | 1)) && !err.contains("panicked"),
                    "{file} --semantics {sem}: {:?}\n{err}",
                    o.status.code()
                );
                if o.status.code() == Some(0) {
                    derived += 1;
                    assert!(!o.stdout.is_empty(), "{file}");
                }
            }
        }
    }
    assert!(derived > 60, "{derived}");
}
