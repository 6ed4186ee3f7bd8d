//! The repository stands alone: no file points to a file outside it (the
//! private design notes, the folder beside the checkout, the source papers'
//! file names), and every relative Markdown link in the documentation leads
//! to a file of the repository, and to a heading of it when it names one.

use regex::Regex;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The repository root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's files, relative to its root: `git ls-files` where git
/// works, else every file outside `target/` and `.git/`.
fn files() -> Vec<PathBuf> {
    let root = root();
    if let Ok(o) = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
    {
        if o.status.success() && !o.stdout.is_empty() {
            return o
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
                .filter(|p| root.join(p).is_file())
                .collect();
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let rel = dir.join(e.file_name());
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if rel != Path::new("target") && rel != Path::new(".git") {
                    todo.push(rel);
                }
            } else if kind.is_file() {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// The text of a repository file, or `None` when it is not UTF-8 (binary).
fn text(rel: &Path) -> Option<String> {
    std::fs::read_to_string(root().join(rel)).ok()
}

#[test]
fn no_file_points_outside_the_repository() {
    // Built from pieces so that this file does not match itself.
    let design = concat!("DESIGN", ".md");
    let shared = concat!("..", "/shared");
    let seed = Regex::new(concat!(r"\d{3}_", "[0-9a-f]{16}")).expect("regex");
    let mut bad = Vec::new();
    for rel in files() {
        let Some(t) = text(&rel) else { continue };
        for (k, line) in t.lines().enumerate() {
            let what = if line.contains(design) {
                design
            } else if line.contains(shared) {
                shared
            } else if seed.is_match(line) {
                "a seed file name"
            } else {
                continue;
            };
            bad.push(format!("{}:{}: mentions {what}", rel.display(), k + 1));
        }
    }
    assert!(
        bad.is_empty(),
        "files that point outside the repository:\n{}",
        bad.join("\n")
    );
}

/// The documentation pages whose links are checked.
fn doc_pages(all: &[PathBuf]) -> Vec<PathBuf> {
    all.iter()
        .filter(|p| {
            let s = p.to_string_lossy();
            let md = s.ends_with(".md");
            s == "README.md"
                || s == "ARCHITECTURE.md"
                || s == "benches/README.md"
                || (md && s.starts_with("docs/") && !s["docs/".len()..].contains('/'))
                || (md && s.starts_with("papers/"))
        })
        .cloned()
        .collect()
}

/// `base/link` with `.` and `..` resolved; `None` when it climbs out of the
/// repository.
fn resolve(base: &Path, link: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = base
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for c in Path::new(link).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

/// The anchors of a Markdown page's headings, as GitHub makes them:
/// lower case, punctuation dropped, spaces as hyphens, `-1`, `-2`, ... for
/// repeats.
fn anchors(page: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let base: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut slug = base.clone();
        let mut k = 0;
        while seen.contains(&slug) {
            k += 1;
            slug = format!("{base}-{k}");
        }
        seen.insert(slug);
    }
    seen
}

#[test]
fn markdown_links_stay_inside_and_resolve() {
    let all = files();
    let tracked: HashSet<PathBuf> = all.iter().cloned().collect();
    let link = Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let pages = doc_pages(&all);
    assert!(
        pages.iter().any(|p| p == Path::new("docs/language.md")),
        "the documentation pages are found"
    );
    let mut bad = Vec::new();
    for page in &pages {
        let Some(t) = text(page) else { continue };
        let dir = page.parent().unwrap_or(Path::new(""));
        let mut fenced = false;
        for (k, line) in t.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            for c in link.captures_iter(line) {
                let target = &c[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let at = format!("{}:{}: `{target}`", page.display(), k + 1);
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target, None),
                };
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    match resolve(dir, path) {
                        Some(f) => f,
                        None => {
                            bad.push(format!("{at} leaves the repository"));
                            continue;
                        }
                    }
                };
                let is_dir = all.iter().any(|f| f.starts_with(&file) && *f != file);
                if !tracked.contains(&file) && !is_dir {
                    bad.push(format!("{at}: no such file in the repository"));
                    continue;
                }
                if let Some(a) = anchor {
                    if file.extension().is_some_and(|e| e == "md") {
                        let heads = text(&file).map(|s| anchors(&s)).unwrap_or_default();
                        if !heads.contains(a) {
                            bad.push(format!("{at}: no heading `#{a}` there"));
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn resolving_links() {
    let docs = Path::new("docs");
    assert_eq!(resolve(docs, "cli.md"), Some(PathBuf::from("docs/cli.md")));
    assert_eq!(
        resolve(docs, "../papers/ifl2022/errata.md"),
        Some(PathBuf::from("papers/ifl2022/errata.md"))
    );
    assert_eq!(resolve(docs, "../../x.md"), None);
    assert_eq!(resolve(Path::new(""), "/etc/passwd"), None);
    let a = anchors("# A\n## Lowering (IFL 2022 §3.5 and §4)\n## `x` y\n## A\n```\n# no\n```\n");
    for s in ["a", "lowering-ifl-2022-35-and-4", "x-y", "a-1"] {
        assert!(a.contains(s), "{s} in {a:?}");
    }
    assert!(!a.contains("no"));
}
