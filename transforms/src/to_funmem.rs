//! FUN to FUNMEM (IFL 2022 paper, §3.5): TransformProgram, TransformStms,
//! TransformStm and Support, 0-based.
//!
//! Every fresh array (kernel result, `iota`, `copy`, program input) gets a
//! block of its own and the row-major layout; slices and transposes live in
//! their source's block at the LMAD that `slice_f` or the transposition
//! gives; an `if` returns, for each array, its supporting information
//! (Support) so that the pattern can name the array's block and layout.
//! The program's array results are copied to fresh row-major blocks
//! (TransformProgram). The translation returns *all* supporting
//! information, as the paper does; `simplify` removes what is redundant.
//!
//! Where we differ from the paper's procedures (papers/ifl2022/errata.md):
//! Support binds each stride to a variable as well as the offset (our
//! strides are scalar expressions), and returns the block, offset and
//! strides but not the sizes, which the FUN program already returns
//! (T-RESULT); the branch results include the array itself, which the
//! procedure as printed leaves out; and `iota`, `copy` and array inputs,
//! which the paper's procedures do not treat, get a fresh block each.

use crate::names::Names;
use funmem_lang::ast::*;
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::lmad::Lmad;
use funmem_lang::poly::Poly;
use funmem_lang::{Name, Span};
use rustc_hash::FxHashMap as HashMap;

/// Translates a well-typed FUN program to FUNMEM (TransformProgram).
pub fn transform_program(p: &Program) -> Result<Program, Diagnostic> {
    if p.lang != Lang::Fun {
        return Err(Diagnostic::new(
            Phase::Transform,
            p.span,
            "lowering to FUNMEM needs a FUN program; this one is already FUNMEM",
        ));
    }
    let mut tr = Tr {
        names: Names::of_program(p),
        env: HashMap::default(),
    };
    let mut params = Vec::new();
    for q in &p.params {
        match &q.ty {
            Type::Array(a, sp) => {
                let block = tr.names.fresh(&format!("{}_mem", q.name.name));
                params.push(mem_pat(&block, q.span));
                params.push(array_pat(
                    &q.name,
                    &a.shape,
                    &block,
                    LmadSyn::RowMajor(a.shape.clone(), *sp),
                    q.span,
                ));
            }
            _ => params.push(q.clone()),
        }
    }
    for q in &params {
        tr.bind(q);
    }
    let mut stms = tr.transform_stms(&p.body.stms)?;
    let mut result = Vec::new();
    for x in &p.body.result {
        let Some(Type::Array(a, _)) = tr.env.get(&x.name).cloned() else {
            result.push(x.clone());
            continue;
        };
        // s_alloc and s_lin: the result, copied to a fresh row-major block.
        let y = tr.names.fresh(&format!("{}_res", x.name));
        let block = tr.names.fresh(&format!("{}_res_mem", x.name));
        stms.push(alloc_stm(&block, product(&a.shape), x.span));
        stms.push(Stm {
            pats: vec![array_pat(
                &y,
                &a.shape,
                &block,
                LmadSyn::RowMajor(a.shape.clone(), Span::DUMMY),
                x.span,
            )],
            exp: Exp {
                kind: ExpKind::Copy(x.clone()),
                span: x.span,
            },
            span: x.span,
        });
        result.push(y);
    }
    Ok(Program {
        lang: Lang::FunMem,
        params,
        body: Body {
            stms,
            result,
            span: p.body.span,
        },
        span: p.span,
    })
}

/// The translation's state: fresh names, and the FUNMEM type of every name
/// bound so far (names are never rebound while visible, so a map that
/// overwrites is exact for the names in scope).
struct Tr {
    names: Names,
    env: HashMap<Name, Type>,
}

impl Tr {
    fn bind(&mut self, p: &Pat) {
        self.env.insert(p.name.name.clone(), p.ty.clone());
    }

    /// TransformStms: each statement in turn, extending the environment.
    fn transform_stms(&mut self, stms: &[Stm]) -> Result<Vec<Stm>, Diagnostic> {
        let mut out = Vec::with_capacity(stms.len());
        for s in stms {
            for t in self.transform_stm(s)? {
                for p in &t.pats {
                    self.bind(p);
                }
                out.push(t);
            }
        }
        Ok(out)
    }

    /// The block, LMAD and shape of an array in scope.
    fn memory(&self, x: &Ident) -> Result<(Ident, Lmad<Poly>), Diagnostic> {
        match self.env.get(&x.name) {
            Some(Type::Array(ArrayType { mem: Some(m), .. }, _)) => {
                Ok((m.block.clone(), m.lmad.to_poly_lmad()))
            }
            _ => Err(Diagnostic::new(
                Phase::Transform,
                x.span,
                format!(
                    "lowering: `{}` is not an array in scope (is the program well typed?)",
                    x.name
                ),
            )),
        }
    }

    /// TransformStm: one FUN statement to FUNMEM statements.
    fn transform_stm(&mut self, s: &Stm) -> Result<Vec<Stm>, Diagnostic> {
        let one = |pat: Pat| {
            vec![Stm {
                pats: vec![pat],
                exp: s.exp.clone(),
                span: s.span,
            }]
        };
        let first = s.pats.first();
        let shape_of = |p: Option<&Pat>| -> Result<Vec<Atom>, Diagnostic> {
            match p.map(|p| &p.ty) {
                Some(Type::Array(a, _)) => Ok(a.shape.clone()),
                _ => Err(Diagnostic::new(
                    Phase::Transform,
                    s.span,
                    "lowering: this statement must bind one array (is the program well typed?)",
                )),
            }
        };
        Ok(match &s.exp.kind {
            // TRANSIENT (issue 18 skeleton): the lowering helper replaces this.
            ExpKind::Loop(..)
            | ExpKind::Update(..)
            | ExpKind::Concat(..)
            | ExpKind::Replicate(..) => {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    s.span,
                    "issue 18 skeleton: not yet lowered",
                ))
            }
            ExpKind::Scalar(_) | ExpKind::Index(..) => vec![s.clone()],
            ExpKind::Slice(x, sl) => {
                let shape = shape_of(first)?;
                let (block, l) = self.memory(x)?;
                let pairs: Vec<(Poly, Poly)> = sl
                    .iter()
                    .map(|(o, n)| (Poly::atom(o), Poly::atom(n)))
                    .collect();
                let p = &s.pats[0];
                one(array_pat(
                    &p.name,
                    &shape,
                    &block,
                    lmad_syn(&shape, &l.slice(&pairs)),
                    p.span,
                ))
            }
            ExpKind::Transpose(x) => {
                let shape = shape_of(first)?;
                let (block, l) = self.memory(x)?;
                let t = l.transpose().ok_or_else(|| {
                    Diagnostic::new(
                        Phase::Transform,
                        s.span,
                        "lowering: transpose of an array that is not 2-D",
                    )
                })?;
                let p = &s.pats[0];
                one(array_pat(
                    &p.name,
                    &shape,
                    &block,
                    lmad_syn(&shape, &t),
                    p.span,
                ))
            }
            ExpKind::Kernel(i, n, b) => {
                let shape = shape_of(first)?;
                self.env.insert(i.name.clone(), Type::Int(i.span));
                let stms = self.transform_stms(&b.stms)?;
                let body = Body {
                    stms,
                    result: b.result.clone(),
                    span: b.span,
                };
                self.fresh_array(s, &shape, ExpKind::Kernel(i.clone(), n.clone(), body))
            }
            ExpKind::Iota(_) | ExpKind::Copy(_) => {
                let shape = shape_of(first)?;
                self.fresh_array(s, &shape, s.exp.kind.clone())
            }
            ExpKind::If(c, t, e) => self.transform_if(s, c, t, e)?,
            ExpKind::Alloc(_) => {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    s.span,
                    "lowering: `alloc` belongs to FUNMEM, not FUN",
                ))
            }
        })
    }

    /// A fresh array: `let (y_mem: mem) = alloc (z1 * ... * zn)` and the
    /// statement binding `y` in it, row-major.
    fn fresh_array(&mut self, s: &Stm, shape: &[Atom], kind: ExpKind) -> Vec<Stm> {
        let p = &s.pats[0];
        let block = self.names.fresh(&format!("{}_mem", p.name.name));
        #[allow(unused_mut)]
        let mut layout = LmadSyn::RowMajor(shape.to_vec(), Span::DUMMY);
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::FreshOffsetOffByOne) {
            let mut l = Lmad::row_major(&shape.iter().map(Poly::atom).collect::<Vec<_>>());
            l.offset = Poly::constant(1);
            layout = lmad_syn(shape, &l);
        }
        vec![
            alloc_stm(&block, product(shape), s.span),
            Stm {
                pats: vec![array_pat(&p.name, shape, &block, layout, p.span)],
                exp: Exp {
                    kind,
                    span: s.exp.span,
                },
                span: s.span,
            },
        ]
    }

    /// The `if` case: both branches translated, each array result returned
    /// with its supporting information, and the pattern extended to bind it.
    fn transform_if(
        &mut self,
        s: &Stm,
        c: &Ident,
        t: &Body,
        e: &Body,
    ) -> Result<Vec<Stm>, Diagnostic> {
        let (mut then_stms, then_res) = self.branch(t)?;
        let (mut else_stms, else_res) = self.branch(e)?;
        let mut pats = Vec::new();
        let (mut then_out, mut else_out) = (Vec::new(), Vec::new());
        for (k, p) in s.pats.iter().enumerate() {
            let (Some(xt), Some(xe)) = (then_res.get(k), else_res.get(k)) else {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    s.span,
                    "lowering: the branches return fewer values than the pattern binds",
                ));
            };
            let Type::Array(a, sp) = &p.ty else {
                pats.push(p.clone());
                then_out.push(xt.0.clone());
                else_out.push(xe.0.clone());
                continue;
            };
            let rank = a.shape.len();
            let block = self.names.fresh(&format!("{}_mem", p.name.name));
            let off = self.names.fresh(&format!("{}_off", p.name.name));
            let strides: Vec<Ident> = (0..rank)
                .map(|d| self.names.fresh(&format!("{}_s{d}", p.name.name)))
                .collect();
            pats.push(mem_pat(&block, p.span));
            pats.push(int_pat(&off, p.span));
            pats.extend(strides.iter().map(|x| int_pat(x, p.span)));
            let lmad = LmadSyn::Explicit {
                offset: SExp::Atom(Atom::Var(off.clone())),
                dims: a
                    .shape
                    .iter()
                    .zip(&strides)
                    .map(|(n, st)| (n.clone(), SExp::Atom(Atom::Var(st.clone()))))
                    .collect(),
                span: *sp,
            };
            pats.push(array_pat(&p.name, &a.shape, &block, lmad, p.span));
            for ((x, support), (stms, out)) in [
                (xt, (&mut then_stms, &mut then_out)),
                (xe, (&mut else_stms, &mut else_out)),
            ] {
                let Some((xblock, l)) = support else {
                    return Err(Diagnostic::new(
                        Phase::Transform,
                        x.span,
                        format!(
                            "lowering: `{}` must be an array (is the program well typed?)",
                            x.name
                        ),
                    ));
                };
                // Support(τ_x): the block, then the offset and the strides
                // bound to fresh variables.
                out.push(xblock.clone());
                let xoff = self.names.fresh(&format!("{}_off", x.name));
                stms.push(scalar_stm(&xoff, l.offset.to_sexp(), x.span));
                out.push(xoff);
                for (d, dim) in l.dims.iter().enumerate() {
                    let xs = self.names.fresh(&format!("{}_s{d}", x.name));
                    stms.push(scalar_stm(&xs, dim.stride.to_sexp(), x.span));
                    out.push(xs);
                }
                out.push(x.clone());
            }
        }
        let body = |stms, result, b: &Body| Body {
            stms,
            result,
            span: b.span,
        };
        Ok(vec![Stm {
            pats,
            exp: Exp {
                kind: ExpKind::If(
                    c.clone(),
                    body(then_stms, then_out, t),
                    body(else_stms, else_out, e),
                ),
                span: s.exp.span,
            },
            span: s.span,
        }])
    }

    /// A branch translated, with each result and, for arrays, their block
    /// and LMAD (looked up before the other branch may reuse the names).
    #[allow(clippy::type_complexity)]
    fn branch(
        &mut self,
        b: &Body,
    ) -> Result<(Vec<Stm>, Vec<(Ident, Option<(Ident, Lmad<Poly>)>)>), Diagnostic> {
        let stms = self.transform_stms(&b.stms)?;
        let res = b
            .result
            .iter()
            .map(|x| match self.env.get(&x.name) {
                Some(Type::Array(..)) => Ok((x.clone(), Some(self.memory(x)?))),
                _ => Ok((x.clone(), None)),
            })
            .collect::<Result<_, Diagnostic>>()?;
        Ok((stms, res))
    }
}

/// `R(shape)` when the LMAD is the row-major layout of the shape, else the
/// explicit form with the shape's atoms as element counts.
pub fn lmad_syn(shape: &[Atom], l: &Lmad<Poly>) -> LmadSyn {
    let rm = Lmad::row_major(&shape.iter().map(Poly::atom).collect::<Vec<_>>());
    if *l == rm {
        return LmadSyn::RowMajor(shape.to_vec(), Span::DUMMY);
    }
    LmadSyn::Explicit {
        offset: l.offset.to_sexp(),
        dims: shape
            .iter()
            .zip(&l.dims)
            .map(|(n, d)| (n.clone(), d.stride.to_sexp()))
            .collect(),
        span: Span::DUMMY,
    }
}

/// `z1 * ... * zn`, folded (1 for no dimensions).
pub fn product(shape: &[Atom]) -> SExp {
    use funmem_lang::lmad::Num;
    shape.iter().fold(SExp::int(1), |acc, a| {
        Num::mul(&acc, &SExp::Atom(a.clone()))
    })
}

fn mem_pat(x: &Ident, span: Span) -> Pat {
    Pat {
        unique: false,
        name: x.clone(),
        ty: Type::Mem(Span::DUMMY),
        span,
    }
}

fn int_pat(x: &Ident, span: Span) -> Pat {
    Pat {
        unique: false,
        name: x.clone(),
        ty: Type::Int(Span::DUMMY),
        span,
    }
}

/// `(x: shape int @ block -> lmad)`.
pub fn array_pat(x: &Ident, shape: &[Atom], block: &Ident, lmad: LmadSyn, span: Span) -> Pat {
    Pat {
        unique: false,
        name: x.clone(),
        ty: Type::Array(
            ArrayType {
                shape: shape.to_vec(),
                mem: Some(MemAnn {
                    block: block.clone(),
                    lmad,
                }),
            },
            Span::DUMMY,
        ),
        span,
    }
}

/// `let (pat) = kind`, everything at `span`.
fn stm1(pat: Pat, kind: ExpKind, span: Span) -> Stm {
    Stm {
        pats: vec![pat],
        exp: Exp { kind, span },
        span,
    }
}

fn alloc_stm(block: &Ident, size: SExp, span: Span) -> Stm {
    stm1(mem_pat(block, span), ExpKind::Alloc(size), span)
}

fn scalar_stm(x: &Ident, e: SExp, span: Span) -> Stm {
    stm1(int_pat(x, span), ExpKind::Scalar(e), span)
}
