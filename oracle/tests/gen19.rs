//! The generators and the campaign statistics for element types,
//! conversions, `reduce`, `scan` (with lambdas) and partial indexing: the
//! programs are strictly typed and print and parse back to themselves, the
//! shares of `GenConfig::constructs` hold, `--no-new-constructs` leaves the
//! new constructs out, safe programs run and risky ones get stuck, the
//! summary counts the constructs, and the reducer shrinks a failure inside
//! a reduce's lambda.

use funmem_lang::ast::{ArrayType, Body, ExpKind, Lang, Program, RedOp, SExp, Type, UnOp};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_lang::prim::Prim;
use funmem_lang::print;

use funmem_oracle::campaign::ConstructStats;
use funmem_oracle::gen::gen_fun;
use funmem_oracle::reduce::{reduce, size};
use funmem_oracle::{Case, Constructs, GenConfig, Rng};
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::fun::run_value;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::textual::parse_values;
use funmem_semantics::value::Value;
use rand::SeedableRng;
use std::collections::HashSet;

fn case(seed: u64, cfg: &GenConfig) -> Case {
    gen_fun(&mut Rng::seed_from_u64(seed), cfg)
}

fn with(constructs: Constructs, fail_share: f64) -> GenConfig {
    GenConfig {
        constructs,
        fail_share,
        ..GenConfig::default()
    }
}

/// Every construct in every program that draws them.
fn everything() -> Constructs {
    Constructs::NONE.parse("all=1").expect("parses")
}

/// Type-checks and round-trips `n` programs from seed `from` on.
fn check_many(cfg: &GenConfig, from: u64, n: u64) {
    for seed in from..from + n {
        let c = case(seed, cfg);
        let text = print::program(&c.program);
        if let Err(d) = check_program(&c.program) {
            panic!("{cfg:?} seed {seed}: type error: {}\n{text}", d.message);
        }
        match parse_program(&text, Lang::Fun) {
            Ok(p) => assert_eq!(p, c.program, "seed {seed}: round trip changed\n{text}"),
            Err(d) => panic!("seed {seed}: does not parse: {}\n{text}", d.message),
        }
        // One input per parameter, of its element type.
        assert_eq!(c.inputs.len(), c.program.params.len(), "seed {seed}");
        for (q, v) in c.program.params.iter().zip(&c.inputs) {
            let want = match &q.ty {
                Type::Prim(t, _) => *t,
                Type::Array(a, _) => a.elem,
                Type::Mem(_) => panic!("seed {seed}: a mem parameter in FUN"),
            };
            assert_eq!(
                v.prim(),
                want,
                "seed {seed}: input of `{}`\n{text}",
                q.name.name
            );
        }
    }
}

#[test]
fn typed_programs_type_check_and_round_trip() {
    check_many(&with(everything(), 0.3), 0, 1500);
    check_many(&with(Constructs::default(), 0.5), 10_000, 1500);
    let small = GenConfig {
        max_stms: 3,
        max_depth: 1,
        max_size: 1,
        ..with(everything(), 0.0)
    };
    check_many(&small, 20_000, 500);
}

/// 10,000 programs per setting (`--ignored`).
#[test]
#[ignore]
fn soak_typed() {
    for (k, fail_share) in [0.0, 0.5, 1.0].into_iter().enumerate() {
        check_many(&with(everything(), fail_share), 100_000 * k as u64, 10_000);
        check_many(
            &with(Constructs::default(), fail_share),
            500_000 + 100_000 * k as u64,
            10_000,
        );
    }
}

/// What a program contains of the constructs of issue 19.
#[derive(Default, Debug)]
struct Seen {
    types: HashSet<Prim>,
    conversions: usize,
    float_fns: usize,
    reduce: usize,
    scan: usize,
    lambda: usize,
    reduced_types: HashSet<Prim>,
}

fn walk_sexp(e: &SExp, s: &mut Seen) {
    match e {
        SExp::Atom(_) => {}
        SExp::Bin(_, l, r, _) => {
            walk_sexp(l, s);
            walk_sexp(r, s);
        }
        SExp::Un(op, a, _) => {
            match op {
                UnOp::Conv(Prim::I64) if matches!(&**a, SExp::Bin(..)) => {}
                UnOp::Conv(_) => s.conversions += 1,
                UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor => s.float_fns += 1,
                _ => {}
            }
            walk_sexp(a, s);
        }
    }
}

fn walk(b: &Body, s: &mut Seen) {
    for st in &b.stms {
        for q in &st.pats {
            match &q.ty {
                Type::Prim(t, _) => s.types.insert(*t),
                Type::Array(a, _) => s.types.insert(a.elem),
                Type::Mem(_) => false,
            };
        }
        match &st.exp.kind {
            ExpKind::Scalar(e) => walk_sexp(e, s),
            ExpKind::Reduce(op, ..) | ExpKind::Scan(op, ..) => {
                if matches!(st.exp.kind, ExpKind::Reduce(..)) {
                    s.reduce += 1;
                } else {
                    s.scan += 1;
                }
                if let Some(Type::Prim(t, _) | Type::Array(ArrayType { elem: t, .. }, _)) =
                    st.pats.first().map(|q| &q.ty)
                {
                    s.reduced_types.insert(*t);
                }
                if let RedOp::Lambda(l) = op {
                    s.lambda += 1;
                    walk(&l.body, s);
                }
            }
            ExpKind::Kernel(_, _, b) | ExpKind::Loop(_, _, _, b) => walk(b, s),
            ExpKind::If(_, t, e) => {
                walk(t, s);
                walk(e, s);
            }
            _ => {}
        }
    }
}

fn seen(p: &Program) -> Seen {
    let mut s = Seen::default();
    for q in &p.params {
        match &q.ty {
            Type::Prim(t, _) => s.types.insert(*t),
            Type::Array(a, _) => s.types.insert(a.elem),
            Type::Mem(_) => false,
        };
    }
    walk(&p.body, &mut s);
    s
}

/// The partial indexes of a program, as the campaign counts them.
fn rows(p: &Program) -> u64 {
    let mut c = ConstructStats::default();
    c.add_program(p);
    c.occurrences[12]
}

#[test]
fn every_type_and_form_appears() {
    let cfg = with(everything(), 0.1);
    let mut all = Seen::default();
    let mut row = 0;
    for seed in 0..600 {
        let p = case(seed, &cfg).program;
        let s = seen(&p);
        all.types.extend(s.types);
        all.reduced_types.extend(s.reduced_types);
        all.conversions += s.conversions;
        all.float_fns += s.float_fns;
        all.reduce += s.reduce;
        all.scan += s.scan;
        all.lambda += s.lambda;
        row += rows(&p);
    }
    for t in Prim::ALL {
        assert!(all.types.contains(&t), "no {t} in {all:?}");
        assert!(
            all.reduced_types.contains(&t),
            "no reduce/scan over {t}: {all:?}"
        );
    }
    assert!(all.conversions > 100 && all.float_fns > 50, "{all:?}");
    assert!(
        all.reduce > 100 && all.scan > 100 && all.lambda > 50,
        "{all:?}"
    );
    assert!(row > 100, "{row} partial indexes");
}

#[test]
fn shares_are_honoured() {
    const N: u64 = 300;
    for name in ["types", "reduce", "scan", "index-row"] {
        for share in [0.0, 0.5, 1.0] {
            let c = Constructs::NONE.parse(&format!("{name}={share}")).unwrap();
            let cfg = with(c, 0.1);
            let mut having = 0u64;
            for seed in 0..N {
                let p = case(seed, &cfg).program;
                let s = seen(&p);
                let has = match name {
                    "types" => s.types.iter().any(|&t| t != Prim::I64),
                    "reduce" => s.reduce > 0,
                    "scan" => s.scan > 0,
                    _ => rows(&p) > 0,
                };
                having += u64::from(has);
            }
            let want = share * N as f64;
            // Forced when drawn, unless nothing fits (no 1-D or 2-D array).
            assert!(
                having as f64 <= want + 0.1 * N as f64
                    && having as f64 >= 0.75 * want - 0.1 * N as f64,
                "{name}={share}: {having} of {N}"
            );
            if share == 0.0 {
                assert_eq!(having, 0, "{name}=0");
            }
        }
    }
}

#[test]
fn no_new_constructs_means_none_of_them() {
    let cfg = with(Constructs::NONE, 0.3);
    for seed in 0..500 {
        let p = case(seed, &cfg).program;
        let s = seen(&p);
        assert!(
            s.types.iter().all(|&t| t == Prim::I64 || t == Prim::Bool)
                && s.conversions == 0
                && s.reduce + s.scan == 0
                && rows(&p) == 0,
            "seed {seed}: {s:?}\n{}",
            print::program(&p)
        );
        // Booleans only from comparisons that become ints right away.
        assert!(!s.types.contains(&Prim::Bool), "seed {seed}");
    }
}

#[test]
fn the_summary_counts_the_new_constructs() {
    let cfg = with(everything(), 0.1);
    let mut stats = ConstructStats::default();
    for seed in 0..100 {
        stats.add_program(&case(seed, &cfg).program);
    }
    let line = stats.line(100);
    for name in [
        "non-i64 type",
        "conversion",
        "reduce",
        "scan",
        "lambda",
        "row index",
    ] {
        assert!(line.contains(&format!("{name} in ")), "{line}");
    }
    assert!(stats.programs[7..].iter().all(|&n| n > 0), "{line}");
    // A summary saved with fewer counts merges.
    let mut old = ConstructStats {
        programs: vec![1; 7],
        occurrences: vec![2; 7],
    };
    old.merge(&stats);
    assert_eq!(old.programs[0], stats.programs[0] + 1);
    assert_eq!(old.programs[12], stats.programs[12]);
}

/// A fuel limit far above what any generated program needs.
fn limits() -> Limits {
    Limits {
        fuel: 10_000_000,
        max_heap: 1 << 24,
    }
}

#[test]
fn safe_typed_programs_never_go_wrong_and_risky_ones_get_stuck() {
    let mut wrong = 0;
    for seed in 0..600 {
        let risky = seed % 2 == 1;
        let c = case(seed, &with(everything(), if risky { 1.0 } else { 0.0 }));
        match run_value(&c.program, &c.inputs, limits(), &mut NoObserver) {
            Ok(_) => {}
            Err(e) if risky => {
                assert_eq!(e.kind, ErrorKind::Stuck, "seed {seed}: {e:?}");
                wrong += 1;
            }
            Err(e) => panic!(
                "seed {seed}: went wrong: {e:?}\n{}\ninputs: {:?}",
                print::program(&c.program),
                c.inputs
            ),
        }
    }
    assert!(wrong >= 30, "only {wrong} of 300 risky programs went wrong");
}

/// A planted failure in a lambda: its body divides by a parameter that is
/// 0, among statements that have nothing to do with it.
const LAMBDA_FAILS: &str = "
def main (n: int) (xs: [n]i32) (k: i32) (fs: [n]f32) =
  let (a: int) = n + 1
  let (ys: [n]i32) = kernel i < n do
      let (x: i32) = xs[i]
      let (y: i32) = x * 2i32
      in (y)
  let (g: f32) = reduce (+) 0f32 fs
  let (r: i32) = reduce (\\(p: i32) (q: i32) ->
      let (c: i32) = p + q
      let (d: i32) = c / k
      in (d)) 0i32 ys
  let (s: f32) = f32(r) + g
  let (zs: [n]i32) = scan (+) 0i32 ys
  let (b: bool) = s < 2.5f32
  in (s, zs, a, b)
";

#[test]
fn the_reducer_shrinks_a_failure_in_a_reduce_lambda() {
    let program = parse_program(LAMBDA_FAILS, Lang::Fun).unwrap_or_else(|d| panic!("{d}"));
    check_program(&program).unwrap_or_else(|d| panic!("{d}"));
    let inputs = parse_values("4 [1i32, 2i32, 3i32, 4i32] 0i32 [1.5f32, -2f32, 0.25f32, 8f32]")
        .expect("inputs parse");
    let case = Case { program, inputs };
    let fails = |c: &Case| {
        matches!(run_value(&c.program, &c.inputs, limits(), &mut NoObserver),
            Err(e) if e.message.contains("division by zero"))
    };
    assert!(fails(&case));
    let r = reduce(&case, &mut |c: &Case| fails(c), 2000);
    let text = print::program(&r.program);
    assert!(fails(&r), "{text}");
    check_program(&r.program).expect("type-checks");
    // The reduce and the two statements of its lambda.
    assert!(
        size(&r.program) <= 3,
        "{} statements:\n{text}",
        size(&r.program)
    );
    assert_eq!(r.program.body.stms.len(), 1, "{text}");
    // The lambda stays (a builtin operator does not divide), the rest goes.
    assert!(text.contains("reduce (\\"), "{text}");
    assert!(!text.contains("scan") && !text.contains("f32"), "{text}");
    // Typed inputs shrink: the array to one element.
    let elems: usize = r
        .inputs
        .iter()
        .map(|v| match v {
            Value::Array(a) => a.data.len(),
            Value::Scalar(_) => 1,
        })
        .sum();
    assert!(elems <= 4, "{:?}\n{text}", r.inputs);
    assert_eq!(
        reduce(&case, &mut |c: &Case| fails(c), 2000),
        r,
        "deterministic"
    );
}

/// The FUNMEM generator with element types, reduce, scan and rows: every
/// program type-checks; valid ones (`gen_funmem_valid`) agree with the
/// brute-force heap reference and are valid; the new constructs show up.
#[test]
fn funmem_programs_with_types_reduce_scan_and_rows() {
    use funmem_oracle::gen_mem::{gen_funmem, gen_funmem_valid};
    use funmem_oracle::reference::{reference_heap_within, RefOutcome};
    use funmem_semantics::validity::{validate, Verdict};
    let cfg = with(everything(), 0.1);
    let limits = Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    };
    let (mut typed, mut reduces, mut scans, mut rows, mut valid) = (0, 0, 0, 0, 0);
    for seed in 0..300u64 {
        for only_valid in [false, true] {
            let mut rng = Rng::seed_from_u64(seed);
            let case = if only_valid {
                gen_funmem_valid(&mut rng, &cfg)
            } else {
                gen_funmem(&mut rng, &cfg)
            };
            let text = print::program(&case.program);
            if let Err(d) = check_program(&case.program) {
                panic!("seed {seed}: {}\n{text}", d.message);
            }
            typed += usize::from(text.contains("f32 @") || text.contains("i32 @"));
            reduces += text.matches("= reduce").count();
            scans += text.matches("= scan").count();
            rows += text.lines().filter(|l| is_row(l)).count();
            if !only_valid {
                continue;
            }
            let (p, inputs) = (&case.program, &case.inputs);
            let r = reference_heap_within(p, inputs, limits.fuel, limits.max_heap);
            let h = funmem_semantics::heap::run_heap(p, inputs, limits, true, &mut NoObserver);
            match (&r, &h) {
                (RefOutcome::Results(a), Ok(b)) => {
                    assert_eq!(a, b, "seed {seed}\n{text}");
                    match validate(p, inputs, limits) {
                        Verdict::Valid(_) => valid += 1,
                        v => panic!("seed {seed}: not valid: {v:?}\n{text}"),
                    }
                }
                (RefOutcome::Stuck(_), Err(e)) if e.kind == ErrorKind::Stuck => {}
                _ => panic!("seed {seed}: reference {r:?}, heap {h:?}\n{text}"),
            }
        }
    }
    eprintln!("{typed} typed, {reduces} reduces, {scans} scans, {rows} rows, {valid} valid");
    assert!(typed > 100 && reduces > 50 && scans > 50 && rows > 20 && valid > 100);
}

/// Whether a FUNMEM line binds a row: `let (r: ...) = xs[k]` with one
/// literal index.
fn is_row(line: &str) -> bool {
    let Some((_, e)) = line.rsplit_once(") = ") else {
        return false;
    };
    let Some((x, rest)) = e.split_once('[') else {
        return false;
    };
    let k = rest.trim_end().trim_end_matches(']');
    !x.contains(' ') && !k.is_empty() && k.chars().all(|c| c.is_ascii_digit())
}
