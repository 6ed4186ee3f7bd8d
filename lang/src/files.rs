//! Which files a list of command-line paths names: the named files, and
//! the wanted files under the named folders, each real file once.
//!
//! Folders are walked through symbolic links (a corpus may link in another
//! one), but each real folder is entered once and each real file is taken
//! once, whatever names lead to it: identity is the canonical path. So a
//! link that points back up the tree (`d/x/l -> ..`) cannot make the walk
//! loop or find files many times over. Everything left out on the way (a
//! folder or file already reached by another name, a folder that cannot be
//! read) is listed with the reason, so that the command can say so.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What a walk found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// The files, sorted, each by the first name the walk met it under.
    pub files: Vec<PathBuf>,
    /// What was left out, and why, in the order met.
    pub skipped: Vec<Skipped>,
}

/// A path the walk left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The path as met.
    pub path: PathBuf,
    /// Why, in words ("a link to a folder already walked: d").
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: skipped, {}", self.path.display(), self.why)
    }
}

/// A named path that does not exist (or cannot be looked at).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missing {
    /// The path as named.
    pub path: PathBuf,
    /// What the system said.
    pub why: String,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.why)
    }
}

/// Walks `paths`: a named file is taken as it is (whatever its name), a
/// named folder is searched, through links, for files that `wanted`
/// accepts. Fails on the first named path that does not exist.
pub fn walk(paths: &[PathBuf], wanted: impl Fn(&Path) -> bool) -> Result<Walk, Missing> {
    let mut w = Walker {
        dirs: HashSet::new(),
        files: HashSet::new(),
        out: Walk::default(),
    };
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Missing {
            path: p.clone(),
            why: if e.kind() == std::io::ErrorKind::NotFound {
                "no such file or folder".to_string()
            } else {
                e.to_string()
            },
        })?;
        if meta.is_dir() {
            w.folder(p, &wanted);
        } else {
            w.file(p);
        }
    }
    w.out.files.sort();
    Ok(w.out)
}

struct Walker {
    /// Canonical paths of the folders entered.
    dirs: HashSet<PathBuf>,
    /// Canonical paths of the files taken.
    files: HashSet<PathBuf>,
    out: Walk,
}

impl Walker {
    fn skip(&mut self, path: &Path, why: String) {
        self.out.skipped.push(Skipped {
            path: path.to_path_buf(),
            why,
        });
    }

    fn file(&mut self, p: &Path) {
        match std::fs::canonicalize(p) {
            Ok(real) if !self.files.insert(real.clone()) => {
                self.skip(p, format!("already found as {}", real.display()));
            }
            Ok(_) => self.out.files.push(p.to_path_buf()),
            Err(e) => self.skip(p, format!("cannot resolve: {e}")),
        }
    }

    /// Walks the folder `root` depth first with an explicit stack, so that
    /// deep trees cannot exhaust the call stack.
    fn folder(&mut self, root: &Path, wanted: &impl Fn(&Path) -> bool) {
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let real = match std::fs::canonicalize(&dir) {
                Ok(r) => r,
                Err(e) => {
                    self.skip(&dir, format!("cannot resolve: {e}"));
                    continue;
                }
            };
            if !self.dirs.insert(real.clone()) {
                let why = if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_symlink()) {
                    format!("a link to a folder already walked: {}", real.display())
                } else {
                    format!("a folder already walked: {}", real.display())
                };
                self.skip(&dir, why);
                continue;
            }
            let entries = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) => {
                    self.skip(&dir, format!("cannot read the folder: {e}"));
                    continue;
                }
            };
            let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            names.sort();
            // Pushed in reverse, so that subfolders are walked in order.
            let mut sub = Vec::new();
            for p in names {
                match std::fs::metadata(&p) {
                    Ok(m) if m.is_dir() => sub.push(p),
                    Ok(_) if wanted(&p) => self.file(&p),
                    Ok(_) => {}
                    Err(e) => {
                        if wanted(&p) {
                            self.skip(&p, format!("cannot read: {e}"));
                        }
                    }
                }
            }
            stack.extend(sub.into_iter().rev());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("funmem-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn fun(p: &Path) -> bool {
        p.extension().is_some_and(|x| x == "fun")
    }

    #[test]
    fn link_loops_are_walked_once() {
        let d = temp("loops");
        std::fs::create_dir_all(d.join("x")).unwrap();
        std::fs::write(d.join("a.fun"), "").unwrap();
        std::fs::write(d.join("x/b.fun"), "").unwrap();
        std::fs::write(d.join("x/c.txt"), "").unwrap();
        for l in ["l1", "l2", "l3"] {
            std::os::unix::fs::symlink("..", d.join("x").join(l)).unwrap();
        }
        let w = walk(std::slice::from_ref(&d), fun).unwrap();
        assert_eq!(w.files, vec![d.join("a.fun"), d.join("x/b.fun")]);
        assert_eq!(w.skipped.len(), 3, "{:?}", w.skipped);
        assert!(w.skipped[0]
            .to_string()
            .contains("skipped, a link to a folder already walked"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_named_twice_is_taken_once() {
        let d = temp("twice");
        std::fs::write(d.join("a.fun"), "").unwrap();
        std::os::unix::fs::symlink("a.fun", d.join("b.fun")).unwrap();
        let w = walk(&[d.join("a.fun"), d.clone()], fun).unwrap();
        assert_eq!(w.files, vec![d.join("a.fun")]);
        assert_eq!(w.skipped.len(), 2, "{:?}", w.skipped);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_missing_path_is_an_error() {
        let d = temp("missing");
        let e = walk(&[d.join("nope")], fun).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: no such file or folder", d.join("nope").display())
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
