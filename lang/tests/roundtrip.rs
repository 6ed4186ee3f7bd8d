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

fn constant() -> impl Strategy<Value = Const> {
    prop_oneof![
        (0i32..i32::MAX).prop_map(Const::I32),
        prop::bool::ANY.prop_map(Const::Bool),
        (0u32..1 << 24).prop_map(|k| Const::f32(k as f32 / 64.0)),
        (0.0f64..1e300).prop_map(Const::f64),
        prop::sample::select(vec![
            Const::f32(f32::NAN),
            Const::f32(f32::INFINITY),
            Const::f64(f64::NAN),
            Const::f64(f64::INFINITY),
            Const::f32(1e-7),
            Const::f64(5e-324),
        ]),
    ]
}

fn atom() -> impl Strategy<Value = Atom> {
    prop_oneof![
        3 => ident().prop_map(Atom::Var),
        3 => (0i64..1000).prop_map(|k| Atom::Int(k, S)),
        1 => constant().prop_map(|c| Atom::Const(c, S)),
    ]
}

fn prim() -> impl Strategy<Value = Prim> {
    prop::sample::select(Prim::ALL.to_vec())
}

fn unop() -> impl Strategy<Value = UnOp> {
    prop_oneof![
        Just(UnOp::Not),
        prim().prop_map(UnOp::Conv),
        prop::sample::select(
            UnOp::FUNCTIONS
                .iter()
                .map(|(_, op)| *op)
                .collect::<Vec<_>>()
        ),
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
            (prop::bool::ANY, unop(), inner).prop_map(|(neg, op, e)| match (neg, e) {
                (true, SExp::Atom(Atom::Int(k, _))) => SExp::int(k.wrapping_neg()),
                (true, SExp::Atom(Atom::Const(c, _))) if c.negated().is_some() => {
                    SExp::Atom(Atom::Const(c.negated().unwrap_or(c), S))
                }
                (true, e) => SExp::Un(UnOp::Neg, Box::new(e), S),
                (false, e) => SExp::Un(op, Box::new(e), S),
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
            prim().prop_map(|p| Type::Prim(p, S)),
            (shape, prim()).prop_map(|(shape, elem)| Type::Array(
                ArrayType {
                    shape,
                    elem,
                    mem: None
                },
                S
            )),
        ]
        .boxed(),
        Lang::FunMem => prop_oneof![
            prim().prop_map(|p| Type::Prim(p, S)),
            Just(Type::Mem(S)),
            (shape, prim(), ident(), lmad()).prop_map(|(shape, elem, block, lmad)| Type::Array(
                ArrayType {
                    shape,
                    elem,
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
        (red_bin(), atom(), ident(), prop::bool::ANY).prop_map(|(op, ne, xs, scan)| if scan {
            ExpKind::Scan(op, ne, xs)
        } else {
            ExpKind::Reduce(op, ne, xs)
        }),
    ];
    match lang {
        Lang::Fun => base.boxed(),
        Lang::FunMem => prop_oneof![
            base,
            (sexp(), prim()).prop_map(|(e, t)| ExpKind::Alloc(e, t))
        ]
        .boxed(),
    }
}

fn red_bin() -> impl Strategy<Value = RedOp> {
    prop::sample::select(RedOp::BUILTIN.to_vec()).prop_map(|op| RedOp::Bin(op, S))
}

fn body(lang: Lang, depth: u32) -> BoxedStrategy<Body> {
    let exp = if depth == 0 {
        simple_exp(lang)
    } else {
        prop_oneof![
            4 => simple_exp(lang),
            1 => (ident(), body(lang, depth - 1), body(lang, depth - 1)).prop_map(|(c, t, e)| ExpKind::If(c, t, e)),
            1 => (ident(), atom(), body(lang, depth - 1)).prop_map(|(i, n, b)| ExpKind::Kernel(i, n, b)),
            1 => (pat(lang), pat(lang), body(lang, depth - 1), atom(), ident()).prop_map(|(a, b, body, ne, xs)| {
                ExpKind::Reduce(RedOp::Lambda(Box::new(Lambda { params: vec![a, b], body, span: S })), ne, xs)
            }),
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
            elem: Prim::F32,
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
        (ident(), prop::option::of(prim())).prop_map(|(x, m)| K::Var(
            x,
            match m {
                None => imp::ImpType::Mem,
                Some(p) => imp::ImpType::Prim(p),
            }
        )),
        (ident(), sexp()).prop_map(|(x, e)| K::Assign(x, e)),
        (ident(), sexp(), prim()).prop_map(|(x, e, t)| K::Alloc(x, e, t)),
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
            1 => (imp_op(depth - 1), sexp(), ident(), sexp(), stmts(depth - 1), sexp(), prop::option::of((ident(), sexp())), ident())
                .prop_map(|(op, ne, index, count, body, elem, scan, x)| {
                    let red = Box::new(imp::Red { op, ne, index, count, body, elem });
                    match scan {
                        Some((m, j)) => K::Scan(red, m, j),
                        None => K::Reduce(x, red),
                    }
                }),
        ]
        .boxed()
    };
    prop::collection::vec(kind.prop_map(|kind| imp::Stmt { kind, span: S }), 1..4).boxed()
}

fn imp_op(depth: u32) -> BoxedStrategy<imp::ImpOp> {
    prop_oneof![
        prop::sample::select(RedOp::BUILTIN.to_vec()).prop_map(imp::ImpOp::Bin),
        (ident(), ident(), stmts(depth), sexp())
            .prop_map(|(a, b, s, e)| imp::ImpOp::Lambda(a, b, s, e)),
    ]
    .boxed()
}

fn imp_program() -> impl Strategy<Value = imp::Program> {
    let param = prop_oneof![
        (ident(), prim()).prop_map(|(x, t)| imp::Param::Scalar(x, t, S)),
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
