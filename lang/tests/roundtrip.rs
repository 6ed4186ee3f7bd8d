//! `parse(print(p)) == p` on randomly generated syntax trees of all three
//! languages. The trees are syntactically valid but need not be well typed:
//! the printer and parser must agree on every tree the grammar can express.

use funmem_lang::ast::*;
use funmem_lang::imp;
use funmem_lang::parse::{parse_imp_raw as parse_imp, parse_program_raw as parse_program};
use funmem_lang::print;
use funmem_lang::span::Span;
use proptest::prelude::*;

const S: Span = Span::DUMMY;

fn ident() -> impl Strategy<Value = Ident> {
    prop::sample::select(vec![
        "x", "y", "n", "m", "xs", "ys", "R", "i'", "_t0", "a_b",
    ])
    .prop_map(Ident::synthetic)
}

fn atom() -> impl Strategy<Value = Atom> {
    prop_oneof![
        ident().prop_map(Atom::Var),
        (0i64..1000).prop_map(|k| Atom::Int(k, S))
    ]
}

fn sexp() -> impl Strategy<Value = SExp> {
    // Negative literals are atoms too: `-k` parses as the literal -k.
    let leaf = prop_oneof![
        atom().prop_map(SExp::Atom),
        (i64::MIN + 1..0).prop_map(SExp::int)
    ];
    leaf.prop_recursive(5, 40, 2, |inner| {
        let ops = prop::sample::select(BinOp::ALL.to_vec());
        prop_oneof![
            (ops, inner.clone(), inner.clone()).prop_map(|(op, a, b)| SExp::bin(op, a, b)),
            // A negated literal is written as the literal itself.
            (prop::bool::ANY, inner).prop_map(|(neg, e)| match (neg, e) {
                (true, SExp::Atom(Atom::Int(k, _))) => SExp::int(k.wrapping_neg()),
                (true, e) => SExp::Un(UnOp::Neg, Box::new(e), S),
                (false, e) => SExp::Un(UnOp::Not, Box::new(e), S),
            }),
        ]
    })
}

fn lmad() -> impl Strategy<Value = LmadSyn> {
    prop_oneof![
        prop::collection::vec(atom(), 1..4).prop_map(|s| LmadSyn::RowMajor(s, S)),
        (sexp(), prop::collection::vec((atom(), sexp()), 0..4)).prop_map(|(offset, dims)| {
            LmadSyn::Explicit {
                offset,
                dims,
                span: S,
            }
        }),
    ]
}

fn ty(lang: Lang) -> BoxedStrategy<Type> {
    let shape = prop::collection::vec(atom(), 1..4);
    match lang {
        Lang::Fun => prop_oneof![
            Just(Type::int(S)),
            shape.prop_map(|shape| Type::Array(
                ArrayType {
                    shape,
                    elem: Prim::I64,
                    mem: None
                },
                S
            )),
        ]
        .boxed(),
        Lang::FunMem => prop_oneof![
            Just(Type::int(S)),
            Just(Type::Mem(S)),
            (shape, ident(), lmad()).prop_map(|(shape, block, lmad)| Type::Array(
                ArrayType {
                    shape,
                    elem: Prim::I64,
                    mem: Some(MemAnn { block, lmad })
                },
                S
            )),
        ]
        .boxed(),
    }
}

fn pat(lang: Lang) -> impl Strategy<Value = Pat> {
    (ident(), ty(lang)).prop_map(|(name, ty)| Pat {
        unique: false,
        name,
        ty,
        span: S,
    })
}

fn simple_exp(lang: Lang) -> BoxedStrategy<ExpKind> {
    let base = prop_oneof![
        sexp().prop_map(ExpKind::Scalar),
        (ident(), prop::collection::vec(atom(), 1..3)).prop_map(|(x, i)| ExpKind::Index(x, i)),
        (ident(), prop::collection::vec((atom(), atom()), 1..3))
            .prop_map(|(x, s)| ExpKind::Slice(x, s)),
        ident().prop_map(ExpKind::Transpose),
        atom().prop_map(ExpKind::Iota),
        ident().prop_map(ExpKind::Copy),
    ];
    match lang {
        Lang::Fun => base.boxed(),
        Lang::FunMem => {
            prop_oneof![base, sexp().prop_map(|e| ExpKind::Alloc(e, Prim::I64))].boxed()
        }
    }
}

fn body(lang: Lang, depth: u32) -> BoxedStrategy<Body> {
    let exp = if depth == 0 {
        simple_exp(lang)
    } else {
        prop_oneof![
            4 => simple_exp(lang),
            1 => (ident(), body(lang, depth - 1), body(lang, depth - 1)).prop_map(|(c, t, e)| ExpKind::If(c, t, e)),
            1 => (ident(), atom(), body(lang, depth - 1)).prop_map(|(i, n, b)| ExpKind::Kernel(i, n, b)),
        ]
        .boxed()
    };
    let stm = (prop::collection::vec(pat(lang), 1..3), exp).prop_map(|(pats, kind)| Stm {
        pats,
        exp: Exp { kind, span: S },
        span: S,
    });
    (
        prop::collection::vec(stm, 0..4),
        prop::collection::vec(ident(), 1..3),
    )
        .prop_map(|(stms, result)| Body {
            stms,
            result,
            span: S,
        })
        .boxed()
}

fn program(lang: Lang) -> impl Strategy<Value = Program> {
    (prop::collection::vec(pat(lang), 0..3), body(lang, 2)).prop_map(move |(params, body)| {
        Program {
            lang,
            params,
            body,
            span: S,
        }
    })
}

fn arr_decl() -> impl Strategy<Value = imp::ArrDecl> {
    (
        ident(),
        prop::collection::vec(atom(), 1..3),
        ident(),
        lmad(),
    )
        .prop_map(|(name, shape, block, lmad)| imp::ArrDecl {
            elem: Prim::I64,
            name,
            shape,
            block,
            lmad,
            span: S,
        })
}

fn stmts(depth: u32) -> BoxedStrategy<Vec<imp::Stmt>> {
    use imp::StmtKind as K;
    let simple = prop_oneof![
        Just(K::Skip),
        (ident(), prop::bool::ANY).prop_map(|(x, m)| K::Var(
            x,
            if m {
                imp::ImpType::Mem
            } else {
                imp::ImpType::INT
            }
        )),
        (ident(), sexp()).prop_map(|(x, e)| K::Assign(x, e)),
        (ident(), sexp()).prop_map(|(x, e)| K::Alloc(x, e, Prim::I64)),
        (ident(), ident(), sexp()).prop_map(|(x, m, e)| K::Read(x, m, e)),
        (ident(), sexp(), sexp()).prop_map(|(m, i, e)| K::Write(m, i, e)),
        (prop::bool::ANY, sexp()).prop_map(|(slice, e)| K::Assert(
            if slice {
                imp::Check::Slice
            } else {
                imp::Check::Index
            },
            e
        )),
    ];
    let kind = if depth == 0 {
        simple.boxed()
    } else {
        prop_oneof![
            4 => simple,
            1 => (ident(), stmts(depth - 1), stmts(depth - 1)).prop_map(|(c, t, e)| K::If(c, t, e)),
            1 => (ident(), sexp(), stmts(depth - 1)).prop_map(|(i, n, b)| K::Kernel(i, n, b)),
        ]
        .boxed()
    };
    prop::collection::vec(kind.prop_map(|kind| imp::Stmt { kind, span: S }), 1..4).boxed()
}

fn imp_program() -> impl Strategy<Value = imp::Program> {
    let param = prop_oneof![
        ident().prop_map(|x| imp::Param::Scalar(x, Prim::I64, S)),
        arr_decl().prop_map(imp::Param::Array)
    ];
    let result = prop_oneof![
        ident().prop_map(imp::Result::Scalar),
        arr_decl().prop_map(imp::Result::Array)
    ];
    (
        prop::collection::vec(param, 0..3),
        stmts(2),
        prop::collection::vec(result, 1..3),
    )
        .prop_map(|(params, body, results)| imp::Program {
            params,
            body,
            results,
            span: S,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn fun_round_trips(p in program(Lang::Fun)) {
        let text = print::program(&p);
        let q = parse_program(&text, Lang::Fun).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        prop_assert_eq!(&q, &p, "{}", text);
        prop_assert_eq!(print::program(&q), text);
    }

    #[test]
    fn funmem_round_trips(p in program(Lang::FunMem)) {
        let text = print::program(&p);
        let q = parse_program(&text, Lang::FunMem).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        prop_assert_eq!(&q, &p, "{}", text);
    }

    #[test]
    fn imp_round_trips(p in imp_program()) {
        let text = print::imp_program(&p);
        let q = parse_imp(&text).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        prop_assert_eq!(&q, &p, "{}", text);
    }
}
