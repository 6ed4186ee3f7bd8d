//! Memory expansion on huge sizes, and limits that are not semantics: a
//! hoisted allocation's size never wraps, and a stage that exceeds fuel or
//! the heap limit is inconclusive, never a disagreement.

use funmem_lang::ast::{Lang, SExp};
use funmem_lang::parse::AnyProgram;
use funmem_lang::prim::Const;
use funmem_semantics::error::Limits;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::run::{run, RunOptions, Semantics};
use funmem_semantics::value::Value;
use funmem_transforms::expand::{saturating_mul, saturating_value};
mod common;

use common::{assert_exit, write_temp};

fn funmem_with_input(args: &[&str], input: &str) -> std::process::Output {
    common::funmem(args, input)
}

/// A kernel whose body makes an array of size `s` in a branch not taken
/// when `c` is 0 (the program).
const DEAD_BRANCH: &str = "\
def main (n: int) (c: int) (s: int) =
  let (res: [n]int) = kernel i < n do
    let (r: int) = if c then
        let (xs: [s]int) = iota s
        let (x: int) = xs[0]
        in (x)
      else
        let (y: int) = i + 1
        in (y)
    in (r)
  in (res)
";

/// The line of `validate`'s output for a stage.
fn stage_line<'a>(out: &'a str, stage: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(stage))
        .unwrap_or_else(|| panic!("no line for stage `{stage}` in:\n{out}"))
}

#[test]
fn a_huge_size_in_a_branch_not_taken_never_wraps() {
    let f = write_temp("dead_wrap.fun", DEAD_BRANCH);
    let o = funmem_with_input(
        &["validate", &f, "--passes", "simplify,expand-gpu"],
        "3 0 4611686018427387905",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("invalid") && !out.contains("stuck"), "{out}");
    assert!(
        !out.contains("disagrees") && !out.contains("goes wrong"),
        "{out}"
    );
    // The exact total 3 * (2^62 + 1) does not fit: the saturated one asks
    // for about 2^63 cells, over the heap limit.
    let ex = stage_line(&out, "expand-gpu");
    assert!(ex.contains("inconclusive: out of heap"), "{ex}");
    assert!(ex.contains("raise --max-heap"), "{ex}");
    assert_exit(&o, 0);
    // The hoisted allocation is the saturating product.
    let o = funmem_with_input(&["opt", &f, "--passes", "simplify,expand-gpu"], "");
    assert_exit(&o, 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("9223372036854775807 / max(n, 1)") && text.contains("max(s, 0)"),
        "{text}"
    );
}

#[test]
fn an_expanded_stage_over_the_heap_limit_is_inconclusive() {
    let f = write_temp("dead_heap.fun", DEAD_BRANCH);
    let o = funmem_with_input(
        &["validate", &f, "--passes", "simplify,expand-gpu"],
        "3 0 600000000",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("invalid") && !out.contains("disagrees"),
        "{out}"
    );
    for stage in ["expand-gpu", "lower to IMP"] {
        let l = stage_line(&out, stage);
        assert!(l.contains("inconclusive: out of heap"), "{l}");
    }
    assert!(stage_line(&out, "simplify").contains("agrees with the source"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("inconclusive at expand-gpu, lower to IMP"),
        "{err}"
    );
    assert_exit(&o, 0);
    // With a heap large enough, every stage agrees.
    let o = funmem_with_input(
        &[
            "validate",
            &f,
            "--passes",
            "simplify,expand-gpu",
            "--max-heap",
            "2000000000",
        ],
        "3 0 60000",
    );
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        stage_line(&out, "lower to IMP").contains("agrees with the source"),
        "{out}"
    );
}

#[test]
fn imp_out_of_fuel_where_fun_is_not_is_inconclusive_with_exit_0() {
    // FUN charges one unit for `iota q`; IMP one per element.
    let f = write_temp(
        "iota_fuel.fun",
        "def main (q: int) =\n  let (xs: [q]int) = iota q\n  let (y: int) = xs[0]\n  in (y)\n",
    );
    let o = funmem_with_input(&["validate", &f, "--fuel", "50"], "100");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("where the source does not"), "{out}");
    let imp = stage_line(&out, "lower to IMP");
    assert!(imp.contains("inconclusive: out of fuel"), "{imp}");
    assert!(imp.contains("raise --fuel"), "{imp}");
    assert_exit(&o, 0);
    // The source itself over the limit: the program went wrong, exit 1.
    let o = funmem_with_input(&["validate", &f, "--fuel", "1"], "100");
    assert_exit(&o, 1);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        stage_line(&out, "source").contains("inconclusive: out of fuel"),
        "{out}"
    );
    assert!(
        !out.contains("disagrees") && !out.contains("goes wrong"),
        "{out}"
    );
}

#[test]
fn funmem_test_reports_a_stage_over_a_limit_as_inconclusive() {
    // The source runs in FUN's cost model; with the default heap limit the
    // expanded stages (gpu-mem, cpu-mem) allocate every iteration's part of
    // a branch never taken: over the limit.
    let f = write_temp(
        "dead_test.fun",
        &format!("-- ==\n-- input {{ 3 0 600000000 }}\n-- output {{ [1i64, 2i64, 3i64] }}\n{DEAD_BRANCH}"),
    );
    let o = funmem_with_input(&["test", &f], "");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("INCONCLUSIVE"), "{out}");
    assert!(
        out.contains(" 0 failed") && out.contains("inconclusive"),
        "{out}"
    );
    assert!(!out.contains("FAIL"), "{out}");
    assert_exit(&o, 0);
}

/// Values where products overflow, and the small ones around 0 and 1.
fn interesting() -> Vec<i64> {
    let mut v = vec![
        -1,
        0,
        1,
        2,
        3,
        7,
        1000,
        600_000_000,
        3_037_000_499,
        3_037_000_500,
    ];
    for k in [31, 32, 61, 62] {
        v.extend([(1i64 << k) - 1, 1 << k, (1 << k) + 1]);
    }
    v.extend([i64::MAX / 2, i64::MAX / 3, i64::MAX - 1, i64::MAX]);
    v
}

/// Evaluates an expression over `a` and `b` with the FUN semantics.
fn eval(e: &SExp, a: i64, b: i64) -> i64 {
    let text = format!(
        "def main (a: int) (b: int) =\n  let (t: int) = {}\n  in (t)\n",
        funmem_lang::print::sexp_string(e)
    );
    let p = funmem_lang::parse::parse_program(&text, Lang::Fun).expect("parses");
    let out = run(
        &AnyProgram::Fun(p),
        Semantics::Value,
        &[Value::Scalar(Const::I64(a)), Value::Scalar(Const::I64(b))],
        RunOptions {
            limits: Limits::default(),
            race_check: true,
        },
        &mut NoObserver,
    )
    .expect("a semantics")
    .expect("runs");
    match out.as_slice() {
        [Value::Scalar(Const::I64(t))] => *t,
        v => panic!("{v:?}"),
    }
}

#[test]
fn the_saturating_size_is_exact_when_it_fits_and_never_negative() {
    let a = funmem_lang::Name::from("a");
    let b = funmem_lang::Name::from("b");
    let e = saturating_mul(SExp::var(&a), SExp::var(&b));
    for &x in &interesting() {
        for &y in interesting().iter().filter(|&&y| y >= 0) {
            // The expression as the semantics evaluates it, and as folded.
            let got = eval(&e, x, y);
            assert_eq!(got, saturating_value(x, y), "a = {x}, b = {y}");
            let folded = saturating_mul(SExp::int(x), SExp::int(y));
            assert_eq!(folded, SExp::int(got), "a = {x}, b = {y}");
            match x.checked_mul(y) {
                Some(p) => assert_eq!(got, p, "exact: a = {x}, b = {y}"),
                None => {
                    assert!(got >= 1 << 62, "saturated: a = {x}, b = {y}: {got}");
                    assert!(got > i64::MAX - y, "near i64::MAX: a = {x}, b = {y}: {got}");
                }
            }
            if x >= 0 {
                assert!(got >= 0, "a = {x}, b = {y}: {got}");
            } else if y > 0 {
                assert!(got < 0, "a negative size stays negative: a = {x}, b = {y}");
            }
        }
    }
}
