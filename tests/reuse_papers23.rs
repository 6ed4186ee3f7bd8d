//! The memory reuse examples of papers/serup2017/ (the `reuse_` programs:
//! Serup, Memory Block Merging in Futhark, MSc thesis, DIKU 2017) and
//! papers/reuse-blog/ (the cases of a development blog post on reuse in
//! the Futhark compiler): every program has outputs, today's allocation
//! count and the counts after `simplify,coalesce` and after it with each
//! reuse pass (`reuse-first-fit`, `reuse`, `reuse-optimal`), is a row of
//! its folder's README table, and `funmem test` passes on both folders
//! (the cases run on every pass list's result too).

mod common;

use common::{assert_exit, text};

/// `funmem ARGS` with no standard input, bounded as every CLI test is.
fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// The `.fun` files of `folder` (relative to the crate) whose names start
/// with `prefix`, sorted.
fn programs(folder: &str, prefix: &str) -> Vec<String> {
    let dir = format!("{}/{folder}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with(prefix) && f.ends_with(".fun"))
        .collect();
    files.sort();
    files
}

/// Checks the test block of each program of `folder` named `prefix...`:
/// cases with outputs, an `Alloc` count for today's pipeline, for
/// `simplify,coalesce` and for it followed by each reuse pass, and a row
/// in the folder's README (with what the passes give filled in).
fn each_program_is_stated(folder: &str, prefix: &str, at_least: usize) {
    let dir = format!("{}/{folder}", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(format!("{dir}/README.md")).expect("the README");
    assert!(
        !readme.contains("filled by the lead"),
        "{folder}: a row waits"
    );
    let files = programs(folder, prefix);
    assert!(files.len() >= at_least, "{files:?}");
    for f in &files {
        let path = format!("{dir}/{f}");
        assert!(
            common::block_cases(&path).len() >= 2,
            "{f}: fewer than 2 cases"
        );
        let src = std::fs::read_to_string(&path).expect("the program");
        let spec = funmem_lang::testspec::parse(&src)
            .expect("a test block")
            .expect("a test block");
        for pipeline in [
            None,
            Some("simplify,coalesce"),
            Some("simplify,coalesce,reuse-first-fit"),
            Some("simplify,coalesce,reuse"),
            Some("simplify,coalesce,reuse-optimal"),
        ] {
            let s = spec
                .structures
                .iter()
                .find(|s| s.pipeline.as_deref() == pipeline)
                .unwrap_or_else(|| panic!("{f}: no `structure` for {pipeline:?}"));
            assert!(
                s.counts.iter().any(|(n, _)| n == "Alloc"),
                "{f}: no Alloc count for {pipeline:?}"
            );
        }
        assert!(
            readme.contains(&format!("| `{f}` |")),
            "{f} is not in {folder}/README.md's table"
        );
    }
}

#[test]
fn the_thesis_reuse_examples_are_stated_and_in_the_readme() {
    each_program_is_stated("papers/serup2017", "reuse_", 14);
}

#[test]
fn the_blog_cases_are_stated_and_in_the_readme() {
    each_program_is_stated("papers/reuse-blog", "", 5);
}

#[test]
fn the_reuse_examples_pass() {
    let o = funmem(&["test", "papers/reuse-blog", "papers/serup2017"]);
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    assert!(out.contains(" passed, 0 failed"), "{out}");
}
