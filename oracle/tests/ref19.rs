//! Element types, reduce, scan and partial indexing in the independent
//! references (fun_ref, reference) and in the provers: obligations with
//! conversions and floats are proved where true and never wrongly.

use funmem_lang::obligation::{parse_obligations, Obligation, Outcome, Prover};
use funmem_oracle::prove::{smt, Provers, Which};

fn obligation(src: &str) -> Obligation {
    parse_obligations(src)
        .unwrap_or_else(|d| panic!("{d:?}"))
        .remove(0)
}

fn outcome(src: &str, which: Which) -> Outcome {
    let p = Provers {
        which,
        memo: false,
        ..Provers::default()
    };
    p.prove(&obligation(src)).outcome
}

fn word(src: &str, which: Which) -> &'static str {
    outcome(src, which).word()
}

#[test]
fn truth_values_converted_to_i64_are_modelled_exactly() {
    // i64(a < b) is 0 or 1.
    let at_most_one = "obligation t\n  at-most i64(a < b) <= 1\n";
    assert_eq!(word(at_most_one, Which::All), "proved");
    assert_eq!(word(at_most_one, Which::Z3), "proved");
    // ... and 1 exactly when a < b: refuted, with a real counterexample.
    let zero = "obligation t\n  given a < b\n  at-most i64(a < b) <= 0\n";
    match outcome(zero, Which::All) {
        Outcome::Refuted(c) => assert!(c.values["a"] < c.values["b"], "{c}"),
        o => panic!("{o:?}"),
    }
    assert_eq!(word(zero, Which::Z3), "refuted");
    // An offset that is a truth value: 0 here, since n >= 1.
    let offset = "obligation t\n  given n >= 1\n  in-bounds i64(n < 0) + {(n : 1)} within n\n";
    assert_eq!(word(offset, Which::All), "proved");
    assert_eq!(word(offset, Which::Z3), "proved");
    let off_by_one = "obligation t\n  given n >= 1\n  in-bounds i64(n > 0) + {(n : 1)} within n\n";
    assert_eq!(word(off_by_one, Which::All), "refuted");
    // bool(x) is x != 0.
    let b = "obligation t\n  given bool(c) && c >= 0\n  at-most 1 <= c\n";
    assert_eq!(word(b, Which::All), "proved");
    assert_eq!(word(b, Which::Z3), "proved");
}

#[test]
fn float_conversions_are_unknown_integers() {
    // True whatever i64(f) is: proved by every prover that can.
    let same = "obligation t\n  at-most i64(f) <= i64(f)\n";
    assert_eq!(word(same, Which::All), "proved");
    let apart = "obligation t\n  given i64(f) >= 0, 0 <= n\n  disjoint 0 + {(i64(f) : 1)} and i64(f) + {(n : 1)}\n";
    assert_eq!(word(apart, Which::All), "proved");
    assert_eq!(word(apart, Which::Lmad), "proved");
    assert_eq!(word(apart, Which::Z3), "proved");
    // Not true for every integer value: never proved, and never refuted
    // either (the value the search or Z3 picks may be unreachable).
    for src in [
        "obligation t\n  at-most i64(f32(n)) <= n\n",
        "obligation t\n  at-most i64(sqrt(f64(n))) <= n\n",
        "obligation t\n  given n >= 0\n  in-bounds i64(2.5f32) + {(n : 1)} within n + 3\n",
        "obligation t\n  at-most i64(x < 2.5) <= 0\n",
    ] {
        for which in [Which::All, Which::Lmad, Which::Search, Which::Z3] {
            assert_eq!(word(src, which), "unknown", "{which:?} on {src}");
        }
    }
    // A float comparison converted is at most 1 all the same? Unknown:
    // the view does not know it is a truth value, which is sound.
    let q = smt::query(
        &obligation("obligation t\n  at-most i64(f32(n)) + i64(x < 2.5) <= n\n"),
        true,
    );
    // Every opaque symbol is declared (Z3 rejects undeclared ones).
    for line in q.body.lines().filter(|l| l.contains("|opaque ")) {
        if line.starts_with("(declare-const") {
            continue;
        }
        let mut rest = line;
        while let Some(k) = rest.find("|opaque ") {
            let tail = &rest[k + 1..];
            let end = tail.find('|').unwrap();
            let name = &tail[..end];
            assert!(
                q.body.contains(&format!("(declare-const |{name}| Int)")),
                "{name} undeclared in\n{}",
                q.body
            );
            rest = &tail[end + 1..];
        }
    }
    assert!(
        q.vars.iter().any(|v| v.starts_with("opaque ")),
        "{:?}",
        q.vars
    );
}
