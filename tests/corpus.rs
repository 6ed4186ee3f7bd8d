//! The program corpus (tests/programs, papers/): every file's test block is
//! honoured as far as the front end goes. Programs that must be rejected
//! (`-- error:` before any input) fail to parse or type-check with a message
//! matching the regex; all others are well typed and survive a print/parse
//! round trip unchanged.

use funmem_lang::front;
use funmem_lang::parse::{parse_layer, Layer};
use funmem_lang::testspec;
use funmem_lang::Source;
use std::path::{Path, PathBuf};

fn program_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            program_files(&p, out);
        } else if Layer::from_path(&p.to_string_lossy()).is_some() {
            out.push(p);
        }
    }
}

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    program_files(&root.join("tests/programs"), &mut files);
    program_files(&root.join("papers"), &mut files);
    files.sort();
    files
}

/// Checks one file; returns a description of what went wrong.
fn check_file(path: &Path) -> Result<(), String> {
    let name = path.to_string_lossy().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let src = Source::new(name.clone(), text.clone());
    let spec =
        testspec::parse(&text).map_err(|d| format!("bad test block: {}", d.headline(&src)))?;
    let expected_error = spec.as_ref().and_then(|s| s.compile_error.clone());
    match (front::load(&src), expected_error) {
        (Ok(_), Some(re)) => Err(format!(
            "accepted, but the test block expects an error matching /{re}/"
        )),
        (Err(d), None) => Err(format!("rejected: {}", d.headline(&src))),
        (Err(d), Some(re)) => {
            let re = regex::Regex::new(&re).map_err(|e| e.to_string())?;
            if re.is_match(&d.message) {
                Ok(())
            } else {
                Err(format!(
                    "rejected with `{}`, which does not match /{re}/",
                    d.message
                ))
            }
        }
        (Ok(p), None) => {
            let layer = Layer::from_path(&name).ok_or("no layer")?;
            let printed = p.print();
            let again = parse_layer(&printed, layer)
                .map_err(|d| format!("printed form does not parse: {d}\n{printed}"))?;
            if again != p {
                return Err(format!(
                    "printed form parses to a different program:\n{printed}"
                ));
            }
            if again.print() != printed {
                return Err("printing is not idempotent".into());
            }
            Ok(())
        }
    }
}

#[test]
fn corpus_front_end_expectations_hold() {
    let files = corpus();
    assert!(
        files.len() >= 20,
        "the corpus has only {} programs",
        files.len()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| check_file(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} corpus files failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_has_bad_programs_for_each_layer() {
    let files = corpus();
    for ext in ["fun", "funmem", "imp"] {
        let bad = files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == ext))
            .filter(|f| {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                matches!(testspec::parse(&text), Ok(Some(s)) if s.compile_error.is_some())
            })
            .count();
        assert!(
            bad >= 3,
            "only {bad} .{ext} programs expect a compile error"
        );
    }
}
