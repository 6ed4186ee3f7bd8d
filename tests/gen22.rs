//! The fuzzer's FUN generator and coalescing: generated programs hold root
//! statements (`copy`, `concat`, updates with an array, kernels returning
//! an array they made) whose source is fresh and used last there, often
//! enough to exercise the `coalesce` pass, together with the shapes that
//! must block it (the source used again, C1; the destination read in
//! between, C3; a copy of a parameter, C4); such programs are well typed,
//! safe ones never go wrong and risky ones only get stuck; and `funmem
//! fuzz` counts the candidates in its summary.

mod common;

use common::assert_exit;
use funmem_lang::ast::{Atom, Body, ExpKind, Lang, Program, Stm};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_lang::{print, Name};
use funmem_oracle::campaign::case_for;
use funmem_oracle::gen::{root_statements, RootCounts};
use funmem_oracle::{Case, Constructs, GenConfig};
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::fun::run_value;
use funmem_semantics::observer::NoObserver;

/// `funmem ARGS` with no standard input, bounded as every CLI test is.
fn funmem(args: &[&str]) -> std::process::Output {
    common::funmem(args, "")
}

/// Over 1000 programs of the default configuration (seed 22): the
/// programs with a candidate, those with one of each kind, and the
/// candidates of each kind.
fn census() -> (u64, [u64; 4], RootCounts) {
    let gen = GenConfig::default();
    let (mut having, mut kinds) = (0, [0u64; 4]);
    let mut all = RootCounts::default();
    for k in 0..1000 {
        let c = root_statements(&case_for(22, k, &gen).program);
        having += u64::from(c.total() > 0);
        for (n, m) in kinds.iter_mut().zip([c.copy, c.concat, c.update, c.kernel]) {
            *n += u64::from(m > 0);
        }
        all.add(&c);
    }
    (having, kinds, all)
}

#[test]
fn candidates_are_frequent_and_of_every_kind() {
    let (having, kinds, all) = census();
    eprintln!(
        "{having} of 1000 programs with a candidate; programs with a copy, \
         concat, update, kernel candidate: {kinds:?}; candidates: {all:?}"
    );
    assert!(having >= 300, "only {having} of 1000 programs: {all:?}");
    // Every kind in a fair share of the programs, not just somewhere.
    assert!(kinds.iter().all(|&n| n >= 30), "{kinds:?}");
}

/// Programs with a root statement in every one that can have it.
fn rooty(fail_share: f64) -> GenConfig {
    GenConfig {
        fail_share,
        constructs: Constructs::default().parse("root=1").expect("parses"),
        ..GenConfig::default()
    }
}

fn limits() -> Limits {
    Limits {
        fuel: 10_000_000,
        max_heap: 1 << 24,
    }
}

fn text(c: &Case) -> String {
    print::program(&c.program)
}

#[test]
fn root_heavy_programs_are_well_typed_and_safe_unless_risky() {
    let (safe, risky) = (rooty(0.0), rooty(1.0));
    let mut stuck = 0;
    for k in 0..400 {
        for (cfg, is_risky) in [(&safe, false), (&risky, true)] {
            let c = case_for(7, k, cfg);
            if let Err(d) = check_program(&c.program) {
                panic!("{k}: type error: {}\n{}", d.message, text(&c));
            }
            match parse_program(&text(&c), Lang::Fun) {
                Ok(p) => assert_eq!(p, c.program, "{k}: round trip\n{}", text(&c)),
                Err(d) => panic!("{k}: does not parse: {}\n{}", d.message, text(&c)),
            }
            match run_value(&c.program, &c.inputs, limits(), &mut NoObserver) {
                Ok(_) => {}
                Err(e) if is_risky && e.kind == ErrorKind::Stuck => stuck += 1,
                Err(e) => panic!("{k} (risky: {is_risky}): {e:?}\n{}", text(&c)),
            }
        }
    }
    assert!(stuck >= 40, "only {stuck} of 400 risky programs got stuck");
}

/// Whether `x` occurs in the statements or the result (Debug prints names
/// quoted, and the generator's names are all distinct).
fn mentioned(stms: &[Stm], result: Option<&Body>, x: &Name) -> bool {
    let x = format!("{x:?}");
    format!("{stms:?}").contains(&x)
        || result.is_some_and(|b| format!("{:?}", b.result).contains(&x))
}

/// Where `x` is bound in `b`, if by a statement making a fresh array.
fn made_fresh(b: &Body, x: &Name) -> Option<usize> {
    let at = b
        .stms
        .iter()
        .position(|s| s.pats.iter().any(|q| &q.name.name == x))?;
    matches!(
        b.stms[at].exp.kind,
        ExpKind::Iota(_)
            | ExpKind::Replicate(..)
            | ExpKind::Copy(_)
            | ExpKind::Kernel(..)
            | ExpKind::Concat(..)
            | ExpKind::Scan(..)
    )
    .then_some(at)
}

/// The blocking shapes in a body, nested ones too: [C1 copies of a fresh
/// array used again after, C3 updates whose destination is read between
/// the value's making and the update, C4 copies of a parameter].
fn blocked(p: &Program, b: &Body, n: &mut [u64; 3]) {
    for (at, s) in b.stms.iter().enumerate() {
        match &s.exp.kind {
            ExpKind::Copy(x) => {
                if made_fresh(b, &x.name).is_some()
                    && mentioned(&b.stms[at + 1..], Some(b), &x.name)
                {
                    n[0] += 1;
                }
                if p.params.iter().any(|q| q.name.name == x.name) {
                    n[2] += 1;
                }
            }
            ExpKind::Update(z, _, Atom::Var(x)) => {
                if let Some(made) = made_fresh(b, &x.name) {
                    n[1] += u64::from(mentioned(&b.stms[made + 1..at], None, &z.name));
                }
            }
            ExpKind::Kernel(_, _, kb) | ExpKind::Loop(_, _, _, kb) => blocked(p, kb, n),
            ExpKind::If(_, t, e) => {
                blocked(p, t, n);
                blocked(p, e, n);
            }
            _ => {}
        }
    }
}

#[test]
fn negative_shapes_appear() {
    let gen = GenConfig::default();
    let mut n = [0u64; 3];
    for k in 0..1000 {
        let p = case_for(22, k, &gen).program;
        blocked(&p, &p.body, &mut n);
    }
    eprintln!(
        "C1 copies {}, C3 updates {}, C4 copies {}",
        n[0], n[1], n[2]
    );
    assert!(n.iter().all(|&m| m >= 10), "{n:?}");
}

#[test]
fn fuzz_counts_the_candidates() {
    let o = funmem(&[
        "fuzz",
        "--passes",
        "simplify",
        "--count",
        "40",
        "--seed",
        "1",
        "--source",
        "fun",
        "--threads",
        "1",
        "--constructs",
        "root=1",
    ]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    for kind in ["copy", "concat", "update", "kernel"] {
        assert!(out.contains(&format!(", {kind} root in ")), "{out}");
    }
    let o = funmem(&["fuzz", "--count", "1", "--constructs", "root=2"]);
    assert_exit(&o, 2);
}

/// How fast the generator is (not a timed test: it prints, asserts
/// nothing about time): `cargo test --release --test gen22 -- --ignored
/// --nocapture generation_rate`.
#[test]
#[ignore]
fn generation_rate() {
    let gen = GenConfig::default();
    let start = std::time::Instant::now();
    let mut stms = 0usize;
    for k in 0..20_000 {
        stms += case_for(3, k, &gen).program.body.stms.len();
    }
    let s = start.elapsed().as_secs_f64();
    eprintln!(
        "20000 programs ({stms} top-level statements) in {s:.2} s: {:.0} programs/s",
        20_000.0 / s
    );
}
