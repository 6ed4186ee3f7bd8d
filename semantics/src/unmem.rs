//! `unmem` (IFL 2022 paper, fig. 9): from FUNMEM to FUN by forgetting memory.
//!
//! `mem` becomes `int`, an array type loses its `@ block -> lmad` (keeping
//! its element type), scalar types stay as they are, and `alloc se t`
//! becomes the literal 0. FUNMEM's value semantics is FUN's
//! semantics of the result; validity (Def. 3.1) compares it with the heap
//! semantics.

use funmem_lang::ast::*;

/// The FUN program a FUNMEM program denotes. A FUN program is returned unchanged.
pub fn unmem(p: &Program) -> Program {
    Program {
        lang: Lang::Fun,
        params: p.params.iter().map(pat).collect(),
        body: body(&p.body),
        span: p.span,
    }
}

fn pat(p: &Pat) -> Pat {
    Pat {
        name: p.name.clone(),
        ty: ty(&p.ty),
        unique: p.unique,
        span: p.span,
    }
}

fn ty(t: &Type) -> Type {
    match t {
        Type::Prim(t, s) => Type::Prim(*t, *s),
        Type::Mem(s) => Type::int(*s),
        Type::Array(a, s) => Type::Array(
            ArrayType {
                shape: a.shape.clone(),
                elem: a.elem,
                mem: None,
            },
            *s,
        ),
    }
}

fn body(b: &Body) -> Body {
    Body {
        stms: b.stms.iter().map(stm).collect(),
        result: b.result.clone(),
        span: b.span,
    }
}

fn stm(s: &Stm) -> Stm {
    let kind = match &s.exp.kind {
        ExpKind::Alloc(..) => ExpKind::Scalar(SExp::Atom(Atom::Int(0, s.exp.span))),
        ExpKind::If(c, t, e) => ExpKind::If(c.clone(), body(t), body(e)),
        ExpKind::Kernel(i, n, b) => ExpKind::Kernel(i.clone(), n.clone(), body(b)),
        ExpKind::Loop(ps, init, form, b) => ExpKind::Loop(
            ps.iter().map(pat).collect(),
            init.clone(),
            form.clone(),
            body(b),
        ),
        k => k.clone(),
    };
    Stm {
        pats: s.pats.iter().map(pat).collect(),
        exp: Exp {
            kind,
            span: s.exp.span,
        },
        span: s.span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::check::check_program;
    use funmem_lang::parse::parse_program;

    #[test]
    fn fig7_unmems_to_a_well_typed_fun_program() {
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../papers/ifl2022/fig07_if_sizes.funmem"
        ))
        .expect("fig. 7 is in the corpus");
        let p = parse_program(&src, Lang::FunMem).expect("parses");
        let f = unmem(&p);
        assert_eq!(f.lang, Lang::Fun);
        check_program(&f).expect("unmem of a well-typed FUNMEM program is well-typed FUN");
        let text = funmem_lang::print::program(&f);
        assert!(text.contains("let (x_mem: int) = 0"), "{text}");
        assert!(text.contains("(z_arr: [z_size]int)"), "{text}");
    }
}
