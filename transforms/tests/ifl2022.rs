//! The IFL 2022 paper's examples (papers/ifl2022/): our lowering reproduces
//! the paper's programs up to the naming of bound variables, and the
//! errata's claims that a test block cannot state.

use funmem_lang::alpha::{alpha_eq, alpha_eq_imp, canonical, canonical_imp};
use funmem_lang::ast::{Lang, Program, Type};
use funmem_lang::check::check_any;
use funmem_lang::parse::{parse_imp, parse_program, AnyProgram};
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::validity::{validate, Verdict};
use funmem_semantics::value::Value;
use funmem_transforms::simplify::simplify;
use funmem_transforms::{fun_mem_to_imp, transform_program};
use std::path::Path;

fn read(rel: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn fun(rel: &str) -> Program {
    parse_program(&read(rel), Lang::Fun).unwrap()
}

fn funmem(rel: &str) -> Program {
    parse_program(&read(rel), Lang::FunMem).unwrap()
}

/// Lowered to FUNMEM and simplified, type-checked.
fn lowered(p: &Program) -> Program {
    let q = simplify(&transform_program(p).unwrap());
    check_any(&AnyProgram::Fun(q.clone())).unwrap();
    q
}

#[test]
fn fig2_lowers_to_fig7_up_to_naming_and_the_mem_result() {
    let ours = lowered(&fun("papers/ifl2022/fig02_if_sizes.fun"));
    let mut paper = funmem("papers/ifl2022/fig07_if_sizes.funmem");
    // Erratum 6: fig. 7 also returns the block z_mem.
    let n = paper.body.result.len();
    paper.body.result.retain(|x| x.name.as_str() != "z_mem");
    assert_eq!(paper.body.result.len(), n - 1);
    assert!(
        alpha_eq(&ours, &paper),
        "ours:\n{}\npaper:\n{}",
        canonical(&ours),
        canonical(&paper)
    );
}

#[test]
fn fig2_and_fig7_lower_to_fig13_up_to_naming() {
    let paper = parse_imp(&read("papers/ifl2022/fig13_if_sizes.imp")).unwrap();
    for q in [
        lowered(&fun("papers/ifl2022/fig02_if_sizes.fun")),
        funmem("papers/ifl2022/fig07_if_sizes.funmem"),
    ] {
        let ours = fun_mem_to_imp(&q).unwrap();
        check_any(&AnyProgram::Imp(ours.clone())).unwrap();
        assert!(
            alpha_eq_imp(&ours, &paper),
            "ours:\n{}\npaper:\n{}",
            canonical_imp(&ours),
            canonical_imp(&paper)
        );
    }
}

#[test]
fn section5_example_lowers_to_its_funmem_form() {
    let ours = lowered(&fun("papers/ifl2022/sec5_kernel_alloc.fun"));
    let expected = funmem("papers/ifl2022/sec5_kernel_alloc.funmem");
    assert!(alpha_eq(&ours, &expected), "ours:\n{ours}");
}

#[test]
fn erratum7_branches_return_the_array_after_its_support() {
    let raw = transform_program(&fun("papers/ifl2022/fig02_if_sizes.fun")).unwrap();
    check_any(&AnyProgram::Fun(raw.clone())).unwrap();
    let funmem_lang::ast::ExpKind::If(_, t, e) = &raw.body.stms[0].exp.kind else {
        panic!("the first statement is the if")
    };
    // size, block, offset, stride, then the array itself.
    for (b, x) in [(t, "x"), (e, "y")] {
        let names: Vec<&str> = b.result.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names.len(), 5, "{names:?}");
        assert_eq!(names[4], x);
    }
    let pats = &raw.body.stms[0].pats;
    assert!(matches!(pats[1].ty, Type::Mem(_)));
    assert!(matches!(pats[4].ty, Type::Array(..)));
}

#[test]
fn erratum1_the_one_based_layout_is_invalid() {
    let p = funmem("papers/ifl2022/errata/e1_one_based_layout.funmem");
    match validate(
        &p,
        &[Value::Scalar(funmem_lang::prim::Const::I64(3))],
        Limits::default(),
    ) {
        Verdict::HeapError(e) => {
            assert_eq!(e.kind, ErrorKind::Stuck);
            assert!(e.message.contains("out of bounds"), "{e}");
        }
        v => panic!("expected the heap semantics to write out of bounds, got {v:?}"),
    }
    assert!(matches!(
        validate(
            &p,
            &[Value::Scalar(funmem_lang::prim::Const::I64(0))],
            Limits::default()
        ),
        Verdict::Valid(_)
    ));
}

#[test]
fn erratum8_the_simplifier_keeps_exactly_the_support_that_differs() {
    let ours = lowered(&fun("papers/ifl2022/errata/e7_support_strides.fun"));
    let text = ours.to_string();
    // ys: the strides differ (n, 1 against 1, n); the offset does not.
    assert!(text.contains("(ys_s0: int) (ys_s1: int) (ys:"), "{text}");
    // r: the offsets differ (n against 0); the strides do not.
    assert!(text.contains("(r_off: int) (r:"), "{text}");
    assert!(!text.contains("ys_off") && !text.contains("r_s0"), "{text}");
}
