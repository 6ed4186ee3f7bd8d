//! Substitution of atoms for variables in FUN/FUNMEM trees.
//!
//! Names are never rebound while visible (docs/language.md, Conventions), so substituting
//! throughout the scope of a binding cannot capture anything. The type
//! checker renames with it (T-RESULT's S); the passes propagate with it.

use crate::ast::*;
use crate::name::Name;
use rustc_hash::FxHashMap as HashMap;

/// A substitution of atoms for variables.
///
/// A variable-for-variable replacement applies everywhere. A literal
/// replaces a variable only where a value, not a name, is meant: in scalar
/// expressions (including LMAD offsets and strides) and, when it is not
/// negative (atoms are unsigned in the syntax), in index positions (the
/// indices of an element, the offsets of a slice). Sizes (array shapes,
/// LMAD element counts, kernel bounds, `iota` lengths, slice sizes) keep
/// their names, because types compare sizes by name, and so do the
/// positions that need a name (conditions, operands, results, blocks).
#[derive(Clone, Debug, Default)]
pub struct Subst(pub HashMap<Name, Atom>);

impl Subst {
    /// The substitution `x ↦ a`.
    pub fn one(x: &Name, a: Atom) -> Subst {
        Subst(HashMap::from_iter([(x.clone(), a)]))
    }

    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A size atom: only variables replace variables.
    pub fn atom(&self, a: &Atom) -> Atom {
        match a {
            Atom::Var(x) => match self.0.get(&x.name) {
                Some(b @ Atom::Var(_)) => b.clone(),
                _ => a.clone(),
            },
            Atom::Int(..) | Atom::Const(..) => a.clone(),
        }
    }

    /// An index atom: variables, and literals that are not negative.
    pub fn index_atom(&self, a: &Atom) -> Atom {
        match a {
            Atom::Var(x) => match self.0.get(&x.name) {
                Some(b @ Atom::Var(_)) => b.clone(),
                Some(b @ Atom::Int(k, _)) if *k >= 0 => b.clone(),
                _ => a.clone(),
            },
            Atom::Int(..) | Atom::Const(..) => a.clone(),
        }
    }

    /// A name position: replaced only by a variable.
    pub fn ident(&self, x: &Ident) -> Ident {
        match self.0.get(&x.name) {
            Some(Atom::Var(y)) => Ident {
                name: y.name.clone(),
                span: x.span,
            },
            _ => x.clone(),
        }
    }

    /// A scalar expression with the substitution applied (`-k` of a
    /// literal folded, as the parser reads it).
    pub fn sexp(&self, e: &SExp) -> SExp {
        let replaced = e.try_replace_vars(&mut |x| {
            Ok::<_, std::convert::Infallible>(self.0.get(&x.name).map(|b| SExp::Atom(b.clone())))
        });
        match replaced {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// An LMAD with the substitution applied.
    pub fn lmad(&self, l: &LmadSyn) -> LmadSyn {
        match l {
            LmadSyn::RowMajor(sh, sp) => {
                LmadSyn::RowMajor(sh.iter().map(|a| self.atom(a)).collect(), *sp)
            }
            LmadSyn::Explicit { offset, dims, span } => LmadSyn::Explicit {
                offset: self.sexp(offset),
                dims: dims
                    .iter()
                    .map(|(n, s)| (self.atom(n), self.sexp(s)))
                    .collect(),
                span: *span,
            },
        }
    }

    /// A type with the substitution applied.
    pub fn ty(&self, t: &Type) -> Type {
        let Type::Array(a, sp) = t else {
            return t.clone();
        };
        Type::Array(
            ArrayType {
                shape: a.shape.iter().map(|s| self.atom(s)).collect(),
                elem: a.elem,
                mem: a.mem.as_ref().map(|m| MemAnn {
                    block: self.ident(&m.block),
                    lmad: self.lmad(&m.lmad),
                }),
            },
            *sp,
        )
    }

    /// A pattern element with the substitution applied to its type.
    pub fn pat(&self, p: &Pat) -> Pat {
        Pat {
            name: p.name.clone(),
            ty: self.ty(&p.ty),
            unique: p.unique,
            span: p.span,
        }
    }

    /// An expression with the substitution applied.
    pub fn exp(&self, e: &Exp) -> Exp {
        let kind = match &e.kind {
            ExpKind::Scalar(se) => ExpKind::Scalar(self.sexp(se)),
            ExpKind::Alloc(se, t) => ExpKind::Alloc(self.sexp(se), *t),
            ExpKind::Index(x, idx) => ExpKind::Index(
                self.ident(x),
                idx.iter().map(|a| self.index_atom(a)).collect(),
            ),
            ExpKind::Slice(x, sl) => ExpKind::Slice(
                self.ident(x),
                sl.iter()
                    .map(|(o, n)| (self.index_atom(o), self.atom(n)))
                    .collect(),
            ),
            ExpKind::Transpose(x) => ExpKind::Transpose(self.ident(x)),
            ExpKind::Copy(x) => ExpKind::Copy(self.ident(x)),
            ExpKind::Iota(n) => ExpKind::Iota(self.atom(n)),
            ExpKind::If(c, t, el) => ExpKind::If(self.ident(c), self.body(t), self.body(el)),
            ExpKind::Kernel(i, n, b) => ExpKind::Kernel(i.clone(), self.atom(n), self.body(b)),
            ExpKind::Loop(ps, init, form, b) => ExpKind::Loop(
                ps.iter().map(|p| self.pat(p)).collect(),
                init.iter().map(|a| self.atom(a)).collect(),
                match form {
                    LoopForm::For(i, n) => LoopForm::For(i.clone(), self.atom(n)),
                    LoopForm::While(c) => LoopForm::While(self.ident(c)),
                },
                self.body(b),
            ),
            ExpKind::Update(x, is, v) => ExpKind::Update(
                self.ident(x),
                is.iter()
                    .map(|i| match i {
                        UpdIdx::Elem(a) => UpdIdx::Elem(self.index_atom(a)),
                        UpdIdx::Range(o, n) => UpdIdx::Range(self.index_atom(o), self.atom(n)),
                    })
                    .collect(),
                self.atom(v),
            ),
            ExpKind::Concat(x, y) => ExpKind::Concat(self.ident(x), self.ident(y)),
            ExpKind::Replicate(n, v) => ExpKind::Replicate(self.atom(n), self.atom(v)),
            ExpKind::Reduce(op, ne, xs) => {
                ExpKind::Reduce(self.red_op(op), self.atom(ne), self.ident(xs))
            }
            ExpKind::Scan(op, ne, xs) => {
                ExpKind::Scan(self.red_op(op), self.atom(ne), self.ident(xs))
            }
        };
        Exp { kind, span: e.span }
    }

    /// A reduction operator with the substitution applied.
    pub fn red_op(&self, op: &RedOp) -> RedOp {
        match op {
            RedOp::Bin(..) => op.clone(),
            RedOp::Lambda(l) => RedOp::Lambda(Box::new(Lambda {
                params: l.params.iter().map(|p| self.pat(p)).collect(),
                body: self.body(&l.body),
                span: l.span,
            })),
        }
    }

    /// A statement with the substitution applied (binders are kept).
    pub fn stm(&self, s: &Stm) -> Stm {
        Stm {
            pats: s.pats.iter().map(|p| self.pat(p)).collect(),
            exp: self.exp(&s.exp),
            span: s.span,
        }
    }

    /// A body with the substitution applied.
    pub fn body(&self, b: &Body) -> Body {
        Body {
            stms: b.stms.iter().map(|s| self.stm(s)).collect(),
            result: b.result.iter().map(|x| self.ident(x)).collect(),
            span: b.span,
        }
    }
}
