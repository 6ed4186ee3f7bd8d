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
//! Issue 18's constructs. `x with [...] = v` lives where x lives (x's
//! block and LMAD, T-MEM-UPDATE): it changes x in place. `concat`,
//! `replicate` and each result of a kernel (one per pattern element) get a
//! fresh row-major block, like `copy` and `iota`. Unique parameters stay
//! unique. A loop is treated like an `if` whose "branches" are the initial
//! values and the body (T-MEM-LOOP):
//!
//! ```text
//! let (q̄') = loop (p̄') = (ā') for i < n do b'
//! ```
//!
//! where every array parameter `(a: [k]int)` of the FUN loop becomes
//! `(a_mem: mem) (a_off: int) (a_s0: int) ... (a: [k]int @ a_mem -> a_off +
//! {(k : a_s0) ...})` (existential memory: block, offset and strides are
//! loop parameters too), every array of the pattern likewise, and every
//! array among the initial values and the body's results is given with its
//! Support (block, offset, strides bound to variables, the array). Memory
//! flows around the loop as init → parameters → body results → parameters
//! → ... → pattern: the first iteration sees the initial array wherever it
//! lives (a slice or a transpose in any block), each later one sees what
//! the previous returned (a fresh block, or the parameter's own block after
//! an in-place update), and the pattern names the last one (the initial
//! array's memory when the body never runs).
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
use funmem_lang::prim::Prim;
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
        #[cfg(feature = "planted-faults")]
        updated: Default::default(),
    };
    let mut params = Vec::new();
    for q in &p.params {
        match &q.ty {
            Type::Array(a, sp) => {
                let block = tr.names.fresh(&format!("{}_mem", q.name.name));
                params.push(mem_pat(&block, q.span));
                let mut ap = array_pat(
                    &q.name,
                    &a.shape,
                    a.elem,
                    &block,
                    LmadSyn::RowMajor(a.shape.clone(), *sp),
                    q.span,
                );
                // A unique parameter stays unique: the program may consume it.
                ap.unique = q.unique;
                params.push(ap);
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
        stms.push(alloc_stm(&block, product(&a.shape), a.elem, x.span));
        stms.push(Stm {
            pats: vec![array_pat(
                &y,
                &a.shape,
                a.elem,
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
    /// The arrays that some update of the body being lowered consumes
    /// (filled only for the planted fault `UpdateFreshBlock`).
    #[cfg(feature = "planted-faults")]
    updated: rustc_hash::FxHashSet<Name>,
}

impl Tr {
    fn bind(&mut self, p: &Pat) {
        self.env.insert(p.name.name.clone(), p.ty.clone());
    }

    /// TransformStms: each statement in turn, extending the environment.
    fn transform_stms(&mut self, stms: &[Stm]) -> Result<Vec<Stm>, Diagnostic> {
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::UpdateFreshBlock) {
            for s in stms {
                if let ExpKind::Update(x, ..) = &s.exp.kind {
                    self.updated.insert(x.name.clone());
                }
            }
        }
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
    /// The pattern `p` of an array that lives in `x`'s block at the LMAD
    /// `derive` makes from x's (a slice, a transpose, an update: no new
    /// memory, T-MEM-SLICE, T-MEM-TRANSPOSE, T-MEM-UPDATE).
    fn in_block_of(
        &self,
        p: &Pat,
        shape: &[Atom],
        x: &Ident,
        derive: impl FnOnce(Lmad<Poly>) -> Result<Lmad<Poly>, Diagnostic>,
    ) -> Result<Pat, Diagnostic> {
        let (block, l) = self.memory(x)?;
        let l = derive(l)?;
        Ok(array_pat(
            &p.name,
            shape,
            elem_of(p),
            &block,
            lmad_syn(shape, &l),
            p.span,
        ))
    }

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
            // E-MEM-REDUCE: a scalar, no memory; the operator's body binds
            // only scalars and is carried over as it is.
            ExpKind::Reduce(..) => vec![s.clone()],
            // E-MEM-SCAN: a fresh array in a block of its own, like `copy`.
            ExpKind::Scan(..) => {
                let shape = shape_of(first)?;
                self.fresh_array(s, &shape, s.exp.kind.clone())
            }
            ExpKind::Loop(ps, init, form, b) => self.transform_loop(s, ps, init, form, b)?,
            ExpKind::Update(x, _, _) => {
                // T-MEM-UPDATE: the result is x, changed in place: x's block
                // and x's LMAD.
                one(self.in_block_of(&s.pats[0], &shape_of(first)?, x, Ok)?)
            }
            ExpKind::Concat(..) | ExpKind::Replicate(..) => {
                let shape = shape_of(first)?;
                self.fresh_array(s, &shape, s.exp.kind.clone())
            }
            // T-MEM-INDEX: fewer indices than dimensions select a sub-array,
            // which stays in x's block at x's LMAD with those dimensions
            // fixed (index_f): no allocation, no copy.
            ExpKind::Index(x, idx) if matches!(first.map(|p| &p.ty), Some(Type::Array(..))) => {
                let shape = shape_of(first)?;
                one(self.in_block_of(&s.pats[0], &shape, x, |mut l| {
                    for i in idx {
                        l = l.index(&Poly::atom(i));
                    }
                    Ok(l)
                })?)
            }
            ExpKind::Scalar(_) | ExpKind::Index(..) => vec![s.clone()],
            ExpKind::Slice(x, sl) => {
                let pairs: Vec<(Poly, Poly)> = sl
                    .iter()
                    .map(|(o, n)| (Poly::atom(o), Poly::atom(n)))
                    .collect();
                one(self.in_block_of(&s.pats[0], &shape_of(first)?, x, |l| Ok(l.slice(&pairs)))?)
            }
            ExpKind::Transpose(x) => {
                one(self.in_block_of(&s.pats[0], &shape_of(first)?, x, |l| {
                    l.transpose().ok_or_else(|| {
                        Diagnostic::new(
                            Phase::Transform,
                            s.span,
                            "lowering: transpose of an array that is not 2-D",
                        )
                    })
                })?)
            }
            ExpKind::Kernel(i, n, b) => {
                self.env.insert(i.name.clone(), Type::int(i.span));
                let stms = self.transform_stms(&b.stms)?;
                let body = Body {
                    stms,
                    result: b.result.clone(),
                    span: b.span,
                };
                // One block per result array, each row-major.
                let mut out = Vec::new();
                let mut pats = Vec::new();
                for p in &s.pats {
                    let shape = shape_of(Some(p))?;
                    let (alloc, bound) = self.fresh_block(p, &shape, s.span);
                    out.push(alloc);
                    pats.push(bound);
                }
                out.push(Stm {
                    pats,
                    exp: Exp {
                        kind: ExpKind::Kernel(i.clone(), n.clone(), body),
                        span: s.exp.span,
                    },
                    span: s.span,
                });
                out
            }
            #[cfg(feature = "planted-faults")]
            ExpKind::Copy(x)
                if crate::fault::active(crate::fault::Fault::UpdateFreshBlock)
                    && self.updated.contains(&s.pats[0].name.name) =>
            {
                one(self.in_block_of(&s.pats[0], &shape_of(first)?, x, Ok)?)
            }
            ExpKind::Iota(_) | ExpKind::Copy(_) => {
                let shape = shape_of(first)?;
                self.fresh_array(s, &shape, s.exp.kind.clone())
            }
            ExpKind::If(c, t, e) => self.transform_if(s, c, t, e)?,
            ExpKind::Alloc(..) => {
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
        let (alloc, p) = self.fresh_block(&s.pats[0], shape, s.span);
        vec![
            alloc,
            Stm {
                pats: vec![p],
                exp: Exp {
                    kind,
                    span: s.exp.span,
                },
                span: s.span,
            },
        ]
    }

    /// For a fresh array bound by `p`: its block's allocation and the
    /// pattern that binds it there, row-major.
    fn fresh_block(&mut self, p: &Pat, shape: &[Atom], span: Span) -> (Stm, Pat) {
        let elem = elem_of(p);
        let block = self.names.fresh(&format!("{}_mem", p.name.name));
        #[allow(unused_mut)]
        let mut layout = LmadSyn::RowMajor(shape.to_vec(), Span::DUMMY);
        #[cfg(feature = "planted-faults")]
        if crate::fault::active(crate::fault::Fault::FreshOffsetOffByOne) {
            let mut l = Lmad::row_major(&shape.iter().map(Poly::atom).collect::<Vec<_>>());
            l.offset = Poly::constant(1);
            layout = lmad_syn(shape, &l);
        }
        (
            alloc_stm(&block, product(shape), elem, span),
            array_pat(&p.name, shape, elem, &block, layout, p.span),
        )
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
            pats.extend(self.existential(p, a, *sp));
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
                self.support(x, xblock, l, stms, out);
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

    /// The pattern elements that bind an array of existential memory (an
    /// `if`'s or a loop's result, a loop parameter): its block, its offset
    /// and strides as int variables, and the array itself at that LMAD.
    fn existential(&mut self, p: &Pat, a: &ArrayType, sp: Span) -> Vec<Pat> {
        let block = self.names.fresh(&format!("{}_mem", p.name.name));
        let off = self.names.fresh(&format!("{}_off", p.name.name));
        let strides: Vec<Ident> = (0..a.shape.len())
            .map(|d| self.names.fresh(&format!("{}_s{d}", p.name.name)))
            .collect();
        let mut pats = vec![mem_pat(&block, p.span), int_pat(&off, p.span)];
        pats.extend(strides.iter().map(|x| int_pat(x, p.span)));
        let lmad = LmadSyn::Explicit {
            offset: SExp::Atom(Atom::Var(off.clone())),
            dims: a
                .shape
                .iter()
                .zip(&strides)
                .map(|(n, st)| (n.clone(), SExp::Atom(Atom::Var(st.clone()))))
                .collect(),
            span: sp,
        };
        pats.push(array_pat(&p.name, &a.shape, a.elem, &block, lmad, p.span));
        pats
    }

    /// Support(τ_x): the block, then the offset and the strides bound to
    /// fresh variables (statements appended to `stms`), then x itself, as
    /// the values that fill [`Tr::existential`]'s pattern elements.
    fn support(
        &mut self,
        x: &Ident,
        block: &Ident,
        l: &Lmad<Poly>,
        stms: &mut Vec<Stm>,
        out: &mut Vec<Ident>,
    ) {
        out.push(block.clone());
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

    /// The loop case (T-MEM-LOOP): every array parameter, and the pattern
    /// element that binds its final value, gets existential memory; the
    /// initial arrays and the body's array results are given with their
    /// supporting information.
    fn transform_loop(
        &mut self,
        s: &Stm,
        ps: &[Pat],
        init: &[Atom],
        form: &LoopForm,
        b: &Body,
    ) -> Result<Vec<Stm>, Diagnostic> {
        let bad = |sp: Span, what: &str| {
            Diagnostic::new(
                Phase::Transform,
                sp,
                format!("lowering: {what} (is the program well typed?)"),
            )
        };
        if init.len() != ps.len() || b.result.len() != ps.len() || s.pats.len() != ps.len() {
            return Err(bad(
                s.span,
                "the loop's parameters, initial values, body results and pattern differ in number",
            ));
        }
        let mut out = Vec::new();
        let mut params = Vec::new();
        let mut inits = Vec::new();
        for (p, a) in ps.iter().zip(init) {
            let Type::Array(at, sp) = &p.ty else {
                params.push(p.clone());
                inits.push(a.clone());
                continue;
            };
            let Atom::Var(x) = a else {
                return Err(bad(
                    a.span(),
                    "an array parameter's initial value must be an array",
                ));
            };
            let (xblock, l) = self.memory(x)?;
            params.extend(self.existential(p, at, *sp));
            let mut names = Vec::new();
            self.support(x, &xblock, &l, &mut out, &mut names);
            inits.extend(names.into_iter().map(Atom::Var));
        }
        for q in &out {
            self.bind(&q.pats[0]);
        }
        for q in &params {
            self.bind(q);
        }
        if let LoopForm::For(i, _) = form {
            self.env.insert(i.name.clone(), Type::int(i.span));
        }
        let mut stms = self.transform_stms(&b.stms)?;
        let mut result = Vec::new();
        for (p, x) in ps.iter().zip(&b.result) {
            if !matches!(p.ty, Type::Array(..)) {
                result.push(x.clone());
                continue;
            }
            let (xblock, l) = self.memory(x)?;
            self.support(x, &xblock, &l, &mut stms, &mut result);
        }
        let mut pats = Vec::new();
        #[allow(unused_mut)]
        let mut after: Vec<Stm> = Vec::new();
        for (k, q) in s.pats.iter().enumerate() {
            match &q.ty {
                Type::Array(a, sp) => {
                    #[cfg(feature = "planted-faults")]
                    if crate::fault::active(crate::fault::Fault::LoopResultParamBlock) {
                        if let Some(Atom::Var(x)) = init.get(k) {
                            // The loop binds a fresh name; q is a view of
                            // the initial array.
                            let mut q2 = q.clone();
                            q2.name = self.names.fresh(&format!("{}_loop", q.name.name));
                            pats.extend(self.existential(&q2, a, *sp));
                            let (block, l) = self.memory(x)?;
                            let pairs: Vec<(Atom, Atom)> = a
                                .shape
                                .iter()
                                .map(|n| (Atom::Int(0, Span::DUMMY), n.clone()))
                                .collect();
                            let polys: Vec<(Poly, Poly)> = pairs
                                .iter()
                                .map(|(o, n)| (Poly::atom(o), Poly::atom(n)))
                                .collect();
                            let lmad = lmad_syn(&a.shape, &l.slice(&polys));
                            after.push(stm1(
                                array_pat(&q.name, &a.shape, a.elem, &block, lmad, q.span),
                                ExpKind::Slice(x.clone(), pairs),
                                s.span,
                            ));
                            continue;
                        }
                    }
                    let _ = k;
                    pats.extend(self.existential(q, a, *sp))
                }
                _ => pats.push(q.clone()),
            }
        }
        out.push(Stm {
            pats,
            exp: Exp {
                kind: ExpKind::Loop(
                    params,
                    inits,
                    form.clone(),
                    Body {
                        stms,
                        result,
                        span: b.span,
                    },
                ),
                span: s.exp.span,
            },
            span: s.span,
        });
        out.extend(after);
        Ok(out)
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
        ty: Type::int(Span::DUMMY),
        span,
    }
}

/// `(x: shape t @ block -> lmad)`.
pub fn array_pat(
    x: &Ident,
    shape: &[Atom],
    elem: Prim,
    block: &Ident,
    lmad: LmadSyn,
    span: Span,
) -> Pat {
    Pat {
        unique: false,
        name: x.clone(),
        ty: Type::Array(
            ArrayType {
                shape: shape.to_vec(),
                elem,
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

/// The element type of an array pattern (`i64` for a scalar one, which
/// the callers never pass).
fn elem_of(p: &Pat) -> Prim {
    match &p.ty {
        Type::Array(a, _) => a.elem,
        Type::Prim(t, _) => *t,
        Type::Mem(_) => Prim::I64,
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

/// `let (block: mem) = alloc size t`: room for `size` elements of type t.
fn alloc_stm(block: &Ident, size: SExp, elem: Prim, span: Span) -> Stm {
    stm1(mem_pat(block, span), ExpKind::Alloc(size, elem), span)
}

fn scalar_stm(x: &Ident, e: SExp, span: Span) -> Stm {
    stm1(int_pat(x, span), ExpKind::Scalar(e), span)
}
