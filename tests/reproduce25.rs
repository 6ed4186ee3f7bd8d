//! `funmem reproduce` (docs/reproduce.md): every paper's evaluation runs
//! with `--quick` on PoCL, each run's results checked, and its report has
//! every dataset of every variant, the published figures beside ours, the
//! aggregates and two SVG plots; manifests that are wrong, and papers that
//! do not exist, are refused with exit code 2 and a message that says
//! where.

mod common;

use common::{assert_exit, funmem, opencl, temp_dir, text};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const PAPERS: [&str; 6] = [
    "ifl2022",
    "serup2017",
    "reuse-blog",
    "borgesen2022",
    "henriksen2017",
    "sc22",
];

/// The manifest of a paper.
fn manifest(name: &str) -> Value {
    let path = format!("papers/{name}/reproduce.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs one paper with `--quick` on PoCL and checks its report: every
/// quick dataset of every benchmark ran under every variant and agreed
/// with the baseline and the expected output; the tables have our columns
/// and the published ones; the plots have bars. (One test per paper, so
/// that they run side by side.)
fn quick(name: &str) {
    if !opencl() {
        return;
    }
    let dir = temp_dir(&format!("reproduce-quick-{name}"));
    let o = funmem(
        &["reproduce", name, "--quick", "--out", dir.to_str().unwrap()],
        "",
    );
    assert_exit(&o, 0);
    let m = manifest(name);
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("results.json is JSON");
    assert_eq!(results["paper"], name);
    assert_eq!(results["run"]["quick"], true);
    assert!(
        results["run"]["device"]
            .as_str()
            .unwrap()
            .contains("Portable Computing Language"),
        "{name}: not on PoCL: {}",
        results["run"]["device"]
    );
    let quick: Vec<(String, String)> = m["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| {
            b["datasets"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["quick"] == true)
                .map(|d| {
                    (
                        b["name"].as_str().unwrap().to_string(),
                        d["name"].as_str().unwrap().to_string(),
                    )
                })
        })
        .collect();
    let rows = results["rows"].as_array().unwrap();
    assert_eq!(rows.len(), quick.len(), "{name}: one row per quick dataset");
    assert!(!rows.is_empty(), "{name}: no quick dataset");
    let variants = m["variants"].as_array().unwrap().len();
    for (row, (b, d)) in rows.iter().zip(&quick) {
        assert_eq!(&row["benchmark"], b.as_str());
        assert_eq!(&row["dataset"], d.as_str());
        let vs = row["variants"].as_object().unwrap();
        assert_eq!(vs.len(), variants, "{name} {b}: every variant");
        for (v, x) in vs {
            assert_eq!(x["status"], "ok", "{name} {b} {v}");
            assert!(x["runs"].as_u64().unwrap() >= 1);
            assert!(x["runtime_median_ms"].as_f64().unwrap() > 0.0);
            assert!(x["peak_bytes"].as_u64().unwrap() > 0, "{name} {b} {v}");
        }
    }
    let table = std::fs::read_to_string(dir.join("table.md")).expect("table.md");
    assert!(table.contains("## Time") && table.contains("## Memory and transfers"));
    assert!(table.contains("## Aggregates"));
    assert!(!table.contains("## Failures"), "{name}:\n{table}");
    for c in m["published_columns"].as_array().unwrap() {
        let label = c["label"].as_str().unwrap();
        assert!(table.contains(label), "{name}: no column `{label}`");
    }
    for v in m["variants"].as_array().unwrap() {
        let passes = v["passes"].as_str().unwrap();
        assert!(table.contains(&format!("`--passes {passes}`")), "{name}");
    }
    for svg in ["speedup.svg", "memory.svg"] {
        let s = std::fs::read_to_string(dir.join(svg)).expect(svg);
        assert!(
            s.contains("<svg") && s.trim_end().ends_with("</svg>"),
            "{name} {svg}"
        );
        assert!(s.contains("<rect"), "{name} {svg}: no bars");
    }
    // The aggregates: geometric means where there are two variants to
    // compare, the paper's way where it
    // has one (Henriksen's needs the reference's times, which the small
    // datasets have none of), each labelled.
    let ways: Vec<&str> = results["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["way"].as_str().unwrap())
        .collect();
    if variants > 1 {
        assert!(ways.contains(&"geometric"), "{name}: {ways:?}");
    }
    if !matches!(
        m["aggregate"].as_str(),
        Some("structural" | "reference-ratio")
    ) {
        assert!(ways.contains(&"paper"), "{name}: {ways:?}");
    }
}

#[test]
fn ifl2022_quick() {
    quick("ifl2022");
}

#[test]
fn serup2017_quick() {
    quick("serup2017");
}

#[test]
fn reuse_blog_quick() {
    quick("reuse-blog");
}

#[test]
fn borgesen2022_quick() {
    quick("borgesen2022");
}

#[test]
fn henriksen2017_quick() {
    quick("henriksen2017");
}

#[test]
fn sc22_quick() {
    quick("sc22");
}

#[test]
fn all_runs_every_paper_into_its_folder_and_aggregates_the_thesis_s_way() {
    // `all` with --only: every paper's folder, each with a report (the
    // papers with no benchmark of that name have empty tables).
    if !opencl() {
        return;
    }
    let out = temp_dir("reproduce-all");
    let o = funmem(
        &[
            "reproduce",
            "all",
            "--quick",
            "--only",
            "lud",
            "--out",
            out.to_str().unwrap(),
        ],
        "",
    );
    assert_exit(&o, 0);
    for name in PAPERS {
        assert!(out.join(name).join("table.md").is_file(), "{name}");
    }
    // serup2017's one row: the thesis's mean reduction is that dataset's
    // (before − after) / before, from the two peaks reported, and the
    // geometric mean of the ratios is after / before.
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("serup2017/results.json")).unwrap())
            .unwrap();
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let peak = |v: &str| rows[0]["variants"][v]["peak_bytes"].as_f64().unwrap();
    let want = (peak("before") - peak("after")) / peak("before");
    let find = |way: &str| {
        r["aggregates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["way"] == way && a["label"].as_str().unwrap().contains("peak"))
            .unwrap_or_else(|| panic!("no {way} memory aggregate"))["value"]
            .as_f64()
            .unwrap()
    };
    assert!((find("paper") - want).abs() < 1e-12);
    assert!((find("geometric") - (1.0 - want)).abs() < 1e-12);
}

#[test]
fn unknown_papers_and_bad_options_are_refused() {
    let o = funmem(&["reproduce", "nosuchpaper", "--quick"], "");
    assert_exit(&o, 2);
    let e = text(&o.stderr);
    assert!(
        e.contains("no paper `nosuchpaper`") && e.contains("serup2017"),
        "{e}"
    );
    let o = funmem(&["reproduce", "sc22", "--timeout", "-1"], "");
    assert_exit(&o, 2);
    let o = funmem(&["reproduce", "sc22", "--runs", "0"], "");
    assert_exit(&o, 2);
}

/// Runs `funmem reproduce ARGS` in `dir`.
fn reproduce_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_funmem"))
        .arg("reproduce")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("funmem runs")
}

#[test]
fn bad_manifests_are_refused_where_they_are_wrong() {
    let root = temp_dir("reproduce-bad");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("papers/sc22")).unwrap();
    std::fs::create_dir_all(root.join("benches")).unwrap();
    let put = |text: &str| std::fs::write(root.join("papers/sc22/reproduce.json"), text).unwrap();
    // Not JSON: line and column.
    put("{\n  \"name\": \"sc22\",\n  oops\n}\n");
    let o = reproduce_in(&root, &["sc22", "--quick"]);
    assert_exit(&o, 2);
    let e = text(&o.stderr);
    assert!(e.contains("reproduce.json:3:"), "{e}");
    // A field we do not know.
    let good = r#"{"name": "sc22", "title": "t", "source": "s", "published_on": "p",
      "aggregate": "per-dataset-speedup",
      "variants": [{"name": "a", "label": "A", "passes": "simplify,expand-gpu"}],
      "baseline": "a", "benchmarks": []}"#;
    put(&good.replace("\"title\"", "\"titel\""));
    let e = text(&reproduce_in(&root, &["sc22", "--quick"]).stderr);
    assert!(e.contains("unknown field `titel`"), "{e}");
    // A baseline that is not a variant.
    put(&good.replace("\"baseline\": \"a\"", "\"baseline\": \"b\""));
    let o = reproduce_in(&root, &["sc22", "--quick"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("the baseline `b` is not a variant"));
    // A variant whose passes do not exist.
    put(&good.replace("simplify,expand-gpu", "simplify,nosuchpass"));
    let o = reproduce_in(&root, &["sc22", "--quick"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("variant `a`: unknown pass `nosuchpass`"));
    // A published column for a plot there is none of.
    put(&good.replace(
        "\"baseline\": \"a\"",
        r#""baseline": "a", "published_columns": [{"key": "k", "label": "K", "plot": "runtime"}]"#,
    ));
    let o = reproduce_in(&root, &["sc22", "--quick"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("plot must be `speedup` or `memory`, not `runtime`"));
    // A dataset with two sources of inputs.
    put(&good.replace(
        "\"benchmarks\": []",
        r##""benchmarks": [{"name": "x", "program": "x.fun",
           "datasets": [{"name": "d", "case": "#0", "input": "1"}]}]"##,
    ));
    let o = reproduce_in(&root, &["sc22", "--quick"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("exactly one of `case`, `input` and `generate`"));
    // Outside the repository.
    let empty = temp_dir("reproduce-nowhere");
    let _ = std::fs::create_dir_all(&empty);
    let o = reproduce_in(&empty, &["sc22", "--quick"]);
    assert_exit(&o, 2);
    assert!(text(&o.stderr).contains("no papers/ folder"));
}

#[test]
fn every_manifest_names_programs_that_exist_each_with_a_quick_dataset() {
    for name in PAPERS {
        let m = manifest(name);
        assert_eq!(m["name"], name);
        for b in m["benchmarks"].as_array().unwrap() {
            let p = b["program"].as_str().unwrap();
            assert!(Path::new(p).is_file(), "{name}: {p} is missing");
            let ds = b["datasets"].as_array().unwrap();
            assert!(
                ds.iter().any(|d| d["quick"] == true),
                "{name}: {p} has no quick dataset"
            );
        }
    }
}
