//! `funmem fuzz --baseline FILE` (docs/cli.md): a campaign's shares of
//! what the passes did, compared with a saved summary; a share that
//! dropped is a failure (exit 1), a summary that cannot serve as a
//! baseline is bad input (exit 2).

mod common;

use common::{assert_exit, temp_dir};
use std::process::Output;

/// `funmem ARGS` with no input, under the harness's bound.
fn funmem(args: &[&str]) -> Output {
    common::funmem(args, "")
}

const PASSES: &str = "simplify,expand-gpu";

/// The campaign of these tests, with extra arguments.
fn campaign(extra: &[&str]) -> Output {
    let mut args = vec!["fuzz", "--count", "20", "--seed", "5", "--passes", PASSES];
    args.extend_from_slice(extra);
    funmem(&args)
}

#[test]
fn a_campaign_matches_its_own_summary_and_fails_on_a_doctored_one() {
    let dir = temp_dir("own");
    let d = dir.display().to_string();
    let o = campaign(&["--out", &d]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(" kernel allocations expanded ("), "{out}");
    assert!(out.contains("simplify: ") && out.contains(" statements removed ("));
    assert!(
        out.contains("obligations: ") && out.contains(" proved"),
        "{out}"
    );
    let saved = dir.join("summary-0-of-1.json");
    let saved = saved.display().to_string();

    // The same campaign against its own summary: nothing dropped.
    let o = campaign(&["--baseline", &saved]);
    assert_exit(&o, 0);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("DROP"));
    // So does the merged summary of its folder.
    assert_exit(&funmem(&["fuzz", "--merge", &d, "--baseline", &saved]), 0);

    // A baseline in which the simplifier removed every statement.
    let text = std::fs::read_to_string(&saved).expect("the summary");
    let mut json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let tally = &mut json["tally"];
    let all = tally["simplify: statements"].clone();
    assert!(all.as_u64().is_some_and(|n| n > 0), "{tally}");
    tally["simplify: statements removed"] = all;
    let doctored = dir.join("doctored.json");
    std::fs::write(&doctored, json.to_string()).expect("write");
    let doctored = doctored.display().to_string();
    let o = funmem(&["fuzz", "--merge", &d, "--baseline", &doctored]);
    assert_exit(&o, 1);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("DROP simplify: statements removed dropped from 100.0% ("),
        "{out}"
    );
    // With --json the summary stays JSON on standard output.
    let o = funmem(&["fuzz", "--merge", &d, "--json", "--baseline", &doctored]);
    assert_exit(&o, 1);
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("JSON on stdout");
    assert!(String::from_utf8_lossy(&o.stderr).contains("DROP simplify: statements removed"));
    // A tolerance of 1 forgives any drop.
    let o = funmem(&[
        "fuzz",
        "--merge",
        &d,
        "--baseline",
        &doctored,
        "--baseline-tolerance",
        "1",
    ]);
    assert_exit(&o, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_summary_that_cannot_serve_as_baseline_is_bad_input() {
    let dir = temp_dir("bad");
    let missing = dir.join("nonesuch.json").display().to_string();
    let o = campaign(&["--baseline", &missing]);
    assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--baseline") && err.contains("nonesuch.json"),
        "{err}"
    );
    // Refused before the campaign runs: no summary line.
    assert!(o.stdout.is_empty());

    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "seed 0: 20 programs\n").expect("write");
    let o = campaign(&["--baseline", &not_json.display().to_string()]);
    assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a summary of `funmem fuzz`"));

    // A summary of other passes.
    let other = funmem(&["fuzz", "--count", "5", "--seed", "5", "--json"]);
    assert_exit(&other, 0);
    let other_file = dir.join("other.json");
    std::fs::write(&other_file, &other.stdout).expect("write");
    let o = campaign(&["--baseline", &other_file.display().to_string()]);
    assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("passes `simplify`") && err.contains("not comparable"),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    let o = campaign(&["--baseline", &missing, "--baseline-tolerance", "2"]);
    assert_exit(&o, 2);
    let _ = std::fs::remove_dir_all(&dir);
}
