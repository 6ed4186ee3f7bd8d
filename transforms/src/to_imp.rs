//! FUNMEM to IMP (IFL 2022 paper, §4): FunMemToImp and Copy, 0-based.
//!
//! Every binding becomes a declared variable; an element access becomes a
//! read or write of the array's block at the address its LMAD gives,
//! computed symbolically (and simplified as a polynomial); slices and
//! transposes vanish, since they only change the LMAD; an `if` declares its
//! pattern's `int` and `mem` variables and assigns them in each branch; a
//! kernel's body ends by copying its result into the kernel's array (Copy).
//! `iota` and `copy` become kernels. Program parameters and results carry
//! their layout (docs/language.md, Syntax); `mem` results are not printed, so they are
//! not in the `out` list.
//!
//! IMP has no arrays, only blocks, so an index or slice outside an array
//! but inside its block would not get stuck as FUNMEM's E-MEM-INDEX and
//! E-MEM-SLICE do. The translation therefore guards each index and slice
//! it cannot show in bounds (an index that is the index of an enclosing
//! kernel over the same size is) with `assert index cond` or `assert slice
//! cond`, which is stuck when cond does not hold and names the source's
//! rule (E-INDEX, E-SLICE) with the values involved.
//!
//! Where we differ from the paper (papers/ifl2022/errata.md): Copy writes
//! `x[L] <- y[L']` directly, which fig. 11's grammar does not have (a write
//! stores a scalar expression); we read into a variable and write that. A
//! copy between two places of one block goes through a temporary block, so
//! that the parallel copy does not race where eq. 5's memcopy (read all,
//! then write) would not; a copy onto the very same place is dropped. Two
//! blocks of different names may be one at run time when a name is bound
//! by an `if` (`if c then (m, ..) else (m2, ..)`): such a copy also goes
//! through a temporary block unless the blocks the `if`s may return (their
//! `alloc`s and `mem` parameters, which are distinct blocks) are disjoint.

use crate::names::Names;
use crate::to_funmem::product;
use funmem_lang::ast::{Atom, BinOp, Body, ExpKind, Ident, Pat, Program, SExp, Stm, Type};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::imp::{self, ArrDecl, Check, ImpType, Param, Stmt, StmtKind};
use funmem_lang::lmad::Lmad;
use funmem_lang::poly::Poly;
use funmem_lang::{Name, Span};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Translates a FUNMEM program to IMP (FunMemToImp).
pub fn fun_mem_to_imp(p: &Program) -> Result<imp::Program, Diagnostic> {
    if p.lang != funmem_lang::ast::Lang::FunMem {
        return Err(Diagnostic::new(
            Phase::Transform,
            p.span,
            "lowering to IMP needs a FUNMEM program; lower the FUN program to FUNMEM first",
        ));
    }
    let names = Names::of_program(p);
    let mut tr = Tr {
        facts: Vec::new(),
        names,
        env: HashMap::default(),
        roots: HashMap::default(),
    };
    let mut params = Vec::new();
    let mut seen: HashSet<Name> = HashSet::default();
    let mut blocks_with_arrays: HashSet<Name> = HashSet::default();
    for q in &p.params {
        if let Type::Array(a, _) = &q.ty {
            if let Some(m) = &a.mem {
                blocks_with_arrays.insert(m.block.name.clone());
            }
        }
    }
    let mut body = Vec::new();
    for q in &p.params {
        tr.env.insert(q.name.name.clone(), q.ty.clone());
        match &q.ty {
            Type::Int(_) => params.push(Param::Int(q.name.clone(), q.span)),
            Type::Mem(_) => {
                // A block no input array lives in takes no input and is
                // empty (docs/language.md, Values in and out).
                if !blocks_with_arrays.contains(&q.name.name) {
                    body.push(stmt(StmtKind::Var(q.name.clone(), ImpType::Mem), q.span));
                    body.push(stmt(StmtKind::Alloc(q.name.clone(), SExp::int(0)), q.span));
                }
            }
            Type::Array(..) => {
                let d = tr.decl(&q.name, q.span)?;
                let mut later = None;
                d.lmad.for_each_var(&mut |x| {
                    if later.is_none() && !seen.contains(&x.name) {
                        later = Some(x.name.clone());
                    }
                });
                for s in &d.shape {
                    if let Atom::Var(x) = s {
                        if later.is_none() && !seen.contains(&x.name) {
                            later = Some(x.name.clone());
                        }
                    }
                }
                if let Some(x) = later {
                    return Err(Diagnostic::new(
                        Phase::Transform,
                        q.span,
                        format!(
                            "lowering to IMP: array parameter `{}` depends on `{x}`, which is not an earlier integer parameter; IMP lays out each input as it reads it, so sizes must come first",
                            q.name.name
                        ),
                    ));
                }
                params.push(Param::Array(d));
            }
        }
        seen.insert(q.name.name.clone());
    }
    body.extend(tr.stms(&p.body.stms)?);
    let mut results = Vec::new();
    for x in &p.body.result {
        match tr.env.get(&x.name) {
            Some(Type::Int(_)) => results.push(imp::Result::Scalar(x.clone())),
            Some(Type::Array(..)) => results.push(imp::Result::Array(tr.decl(x, x.span)?)),
            Some(Type::Mem(_)) => {}
            None => return Err(unbound(x)),
        }
    }
    if body.is_empty() {
        body.push(stmt(StmtKind::Skip, p.body.span));
    }
    Ok(imp::Program {
        params,
        body,
        results,
        span: p.span,
    })
}

fn unbound(x: &Ident) -> Diagnostic {
    Diagnostic::new(
        Phase::Transform,
        x.span,
        format!(
            "lowering to IMP: `{}` is not bound (is the program well typed?)",
            x.name
        ),
    )
}

fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt { kind, span }
}

fn var(x: &Ident) -> SExp {
    SExp::Atom(Atom::Var(x.clone()))
}

/// An array's place in memory: its block and LMAD.
struct Place {
    block: Ident,
    lmad: Lmad<Poly>,
    shape: Vec<Atom>,
}

impl Place {
    /// The address of an element, as a simplified scalar expression.
    fn at(&self, idx: &[Poly]) -> SExp {
        self.lmad.apply(idx).to_sexp()
    }
}

struct Tr {
    names: Names,
    env: HashMap<Name, Type>,
    /// Enclosing kernels: index `i` runs over `0 .. n-1`.
    facts: Vec<(Name, Atom)>,
    /// The blocks a `mem` bound by an `if` may be: the `alloc`s and `mem`
    /// parameters its branches return, through other `if`s. A block bound
    /// by `alloc` or as a parameter is itself alone (and not in this map);
    /// two such blocks of different names are different blocks.
    roots: HashMap<Name, Vec<Name>>,
}

impl Tr {
    /// `0 <= a < n` is known: literals, or an enclosing kernel's index
    /// over exactly `n`.
    fn known_in_bounds(&self, a: &Atom, n: &Atom) -> bool {
        match (a, n) {
            (Atom::Int(k, _), Atom::Int(m, _)) => 0 <= *k && k < m,
            (Atom::Var(i), _) => {
                #[cfg(feature = "planted-faults")]
                let any_bound = crate::fault::active(crate::fault::Fault::KernelIndexInBounds);
                #[cfg(not(feature = "planted-faults"))]
                let any_bound = false;
                self.facts
                    .iter()
                    .any(|(j, b)| *j == i.name && (any_bound || b == n))
            }
            _ => false,
        }
    }

    /// `assert check cond`: stuck unless every condition holds.
    fn guard(&mut self, check: Check, conds: Vec<SExp>, span: Span, out: &mut Vec<Stmt>) {
        let Some(cond) = conds.into_iter().reduce(|a, b| SExp::bin(BinOp::And, a, b)) else {
            return;
        };
        out.push(stmt(StmtKind::Assert(check, cond), span));
    }

    fn place(&self, x: &Ident) -> Result<Place, Diagnostic> {
        match self.env.get(&x.name) {
            Some(Type::Array(a, _)) => match &a.mem {
                Some(m) => Ok(Place {
                    block: m.block.clone(),
                    lmad: m.lmad.to_poly_lmad(),
                    shape: a.shape.clone(),
                }),
                None => Err(Diagnostic::new(
                    Phase::Transform,
                    x.span,
                    format!("lowering to IMP: `{}` has no memory annotation", x.name),
                )),
            },
            Some(_) => Err(Diagnostic::new(
                Phase::Transform,
                x.span,
                format!("lowering to IMP: `{}` is not an array", x.name),
            )),
            None => Err(unbound(x)),
        }
    }

    /// The declaration `x : shape @ block -> L` of an array in scope.
    fn decl(&self, x: &Ident, span: Span) -> Result<ArrDecl, Diagnostic> {
        let Some(Type::Array(a, _)) = self.env.get(&x.name) else {
            return Err(unbound(x));
        };
        let Some(m) = &a.mem else {
            return Err(self.place(x).err().unwrap_or_else(|| unbound(x)));
        };
        Ok(ArrDecl {
            name: x.clone(),
            shape: a.shape.clone(),
            block: m.block.clone(),
            lmad: m.lmad.clone(),
            span,
        })
    }

    /// The `alloc`s and `mem` parameters that the block `m` may be.
    fn roots_of(&self, m: &Name) -> Vec<Name> {
        self.roots
            .get(m)
            .cloned()
            .unwrap_or_else(|| vec![m.clone()])
    }

    /// Whether two blocks may be one at run time.
    fn may_alias(&self, a: &Name, b: &Name) -> bool {
        let rb = self.roots_of(b);
        a == b || self.roots_of(a).iter().any(|r| rb.contains(r))
    }

    fn bind(&mut self, pats: &[Pat]) {
        for p in pats {
            self.env.insert(p.name.name.clone(), p.ty.clone());
        }
    }

    fn stms(&mut self, stms: &[Stm]) -> Result<Vec<Stmt>, Diagnostic> {
        let mut out = Vec::new();
        for s in stms {
            self.stm(s, &mut out)?;
        }
        Ok(out)
    }

    /// FunMemToImp of one statement, appended to `out`.
    fn stm(&mut self, s: &Stm, out: &mut Vec<Stmt>) -> Result<(), Diagnostic> {
        let sp = s.span;
        let x = s.pats.first().map(|p| p.name.clone());
        let x = || {
            x.clone().ok_or_else(|| {
                Diagnostic::new(
                    Phase::Transform,
                    sp,
                    "lowering to IMP: a statement binds nothing",
                )
            })
        };
        match &s.exp.kind {
            // TRANSIENT (issue 18 skeleton): the IMP helper replaces this.
            ExpKind::Loop(..)
            | ExpKind::Update(..)
            | ExpKind::Concat(..)
            | ExpKind::Replicate(..) => {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    sp,
                    "issue 18 skeleton: not yet lowered to IMP",
                ))
            }
            ExpKind::Scalar(e) => {
                let x = x()?;
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Int), sp));
                out.push(stmt(StmtKind::Assign(x, e.clone()), sp));
                self.bind(&s.pats);
            }
            ExpKind::Alloc(e) => {
                let x = x()?;
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Mem), sp));
                self.roots.remove(&x.name);
                out.push(stmt(StmtKind::Alloc(x, e.clone()), sp));
                self.bind(&s.pats);
            }
            ExpKind::Index(y, idx) => {
                let x = x()?;
                let py = self.place(y)?;
                let mut conds = Vec::new();
                for (a, n) in idx.iter().zip(&py.shape) {
                    if self.known_in_bounds(a, n) {
                        continue;
                    }
                    let e = SExp::Atom(a.clone());
                    let below = SExp::bin(BinOp::Lt, e.clone(), SExp::Atom(n.clone()));
                    conds.push(match a {
                        Atom::Int(k, _) if *k >= 0 => below,
                        _ => SExp::bin(BinOp::And, SExp::bin(BinOp::Le, SExp::int(0), e), below),
                    });
                }
                self.guard(Check::Index, conds, sp, out);
                let idx: Vec<Poly> = idx.iter().map(Poly::atom).collect();
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Int), sp));
                out.push(stmt(StmtKind::Read(x, py.block.clone(), py.at(&idx)), sp));
                self.bind(&s.pats);
            }
            // Only the LMAD changes: nothing to do at run time but check
            // the slice's bounds (o >= 0, k >= 0, o <= n - k, without overflow).
            ExpKind::Slice(y, sl) => {
                let py = self.place(y)?;
                let mut conds = Vec::new();
                for ((o, k), n) in sl.iter().zip(&py.shape) {
                    if let (Atom::Int(o, _), Atom::Int(k, _), Atom::Int(n, _)) = (o, k, n) {
                        if *o >= 0 && *k >= 0 && o.checked_add(*k).is_some_and(|e| e <= *n) {
                            continue;
                        }
                    }
                    let (o, k, n) = (
                        SExp::Atom(o.clone()),
                        SExp::Atom(k.clone()),
                        SExp::Atom(n.clone()),
                    );
                    conds.push(SExp::bin(
                        BinOp::And,
                        SExp::bin(
                            BinOp::And,
                            SExp::bin(BinOp::Le, SExp::int(0), o.clone()),
                            SExp::bin(BinOp::Le, SExp::int(0), k.clone()),
                        ),
                        SExp::bin(BinOp::Le, o, SExp::bin(BinOp::Sub, n, k)),
                    ));
                }
                self.guard(Check::Slice, conds, sp, out);
                self.bind(&s.pats);
            }
            ExpKind::Transpose(_y) => {
                self.bind(&s.pats);
                #[cfg(feature = "planted-faults")]
                if crate::fault::active(crate::fault::Fault::TransposeStride) {
                    if let (Some(Type::Array(src, _)), Some(p)) =
                        (self.env.get(&_y.name).cloned(), s.pats.first())
                    {
                        if let (Some(Type::Array(a, sp)), Some(m)) =
                            (self.env.get(&p.name.name).cloned(), src.mem)
                        {
                            let mut a = a;
                            if let Some(mine) = &mut a.mem {
                                mine.lmad = m.lmad.clone();
                                // Keep the result's own sizes: only the strides are wrong.
                                if let funmem_lang::ast::LmadSyn::Explicit { dims, .. } =
                                    &mut mine.lmad
                                {
                                    for (d, n) in dims.iter_mut().zip(&a.shape) {
                                        d.0 = n.clone();
                                    }
                                }
                            }
                            self.env.insert(p.name.name.clone(), Type::Array(a, sp));
                        }
                    }
                }
            }
            ExpKind::Iota(n) => {
                self.bind(&s.pats);
                let py = self.place(&x()?)?;
                let i = self.names.fresh("i");
                let w = stmt(
                    StmtKind::Write(py.block.clone(), py.at(&[Poly::var(&i.name)]), var(&i)),
                    sp,
                );
                out.push(stmt(
                    StmtKind::Kernel(i, SExp::Atom(n.clone()), vec![w]),
                    sp,
                ));
            }
            ExpKind::Copy(src) => {
                self.bind(&s.pats);
                let dst = self.place(&x()?)?;
                let src = self.place(src)?;
                out.extend(self.copy(&dst, &[], &src, sp));
            }
            ExpKind::Kernel(i, n, b) => {
                self.env.insert(i.name.clone(), Type::Int(i.span));
                self.facts.push((i.name.clone(), n.clone()));
                let inner = self.stms(&b.stms);
                self.facts.pop();
                let mut inner = inner?;
                self.bind(&s.pats);
                let dst = self.place(&x()?)?;
                let r = b.result.first().ok_or_else(|| unbound(&i.clone()))?;
                let at = [Poly::var(&i.name)];
                match self.env.get(&r.name) {
                    Some(Type::Int(_)) => inner.push(stmt(
                        StmtKind::Write(dst.block.clone(), dst.at(&at), var(r)),
                        sp,
                    )),
                    _ => {
                        let src = self.place(r)?;
                        #[cfg(feature = "planted-faults")]
                        let skip = crate::fault::active(crate::fault::Fault::MissingKernelCopy);
                        #[cfg(not(feature = "planted-faults"))]
                        let skip = false;
                        if !skip {
                            inner.extend(self.copy(&dst, &at, &src, sp));
                        }
                    }
                }
                if inner.is_empty() {
                    inner.push(stmt(StmtKind::Skip, sp));
                }
                out.push(stmt(
                    StmtKind::Kernel(i.clone(), SExp::Atom(n.clone()), inner),
                    sp,
                ));
            }
            ExpKind::If(c, t, e) => {
                let scalars: Vec<(usize, &Pat, ImpType)> = s
                    .pats
                    .iter()
                    .enumerate()
                    .filter_map(|(k, p)| match p.ty {
                        Type::Int(_) => Some((k, p, ImpType::Int)),
                        Type::Mem(_) => Some((k, p, ImpType::Mem)),
                        Type::Array(..) => None,
                    })
                    .collect();
                for (_, p, ty) in &scalars {
                    out.push(stmt(StmtKind::Var(p.name.clone(), *ty), p.span));
                }
                // The blocks each `mem` result may be, from both branches.
                let mut roots: Vec<Vec<Name>> = vec![Vec::new(); s.pats.len()];
                let mut branch = |b: &Body| -> Result<Vec<Stmt>, Diagnostic> {
                    let mut code = self.stms(&b.stms)?;
                    for (k, p, ty) in &scalars {
                        let r = b.result.get(*k).ok_or_else(|| unbound(&p.name))?;
                        if *ty == ImpType::Mem {
                            for m in self.roots_of(&r.name) {
                                if !roots[*k].contains(&m) {
                                    roots[*k].push(m);
                                }
                            }
                        }
                        code.push(stmt(StmtKind::Assign(p.name.clone(), var(r)), b.span));
                    }
                    if code.is_empty() {
                        code.push(stmt(StmtKind::Skip, b.span));
                    }
                    Ok(code)
                };
                let then_code = branch(t)?;
                let else_code = branch(e)?;
                for (k, p, ty) in &scalars {
                    if *ty == ImpType::Mem {
                        self.roots
                            .insert(p.name.name.clone(), std::mem::take(&mut roots[*k]));
                    }
                }
                out.push(stmt(StmtKind::If(c.clone(), then_code, else_code), sp));
                self.bind(&s.pats);
            }
        }
        Ok(())
    }

    /// Copy: every element of `src` to `dst` at the index `prefix`
    /// followed by the element's index, as nested kernels.
    fn copy(&mut self, dst: &Place, prefix: &[Poly], src: &Place, span: Span) -> Vec<Stmt> {
        if self.may_alias(&dst.block.name, &src.block.name) {
            let mut d = dst.lmad.clone();
            for k in prefix {
                d = d.index(k);
            }
            if dst.block.name == src.block.name && d == src.lmad {
                // The same place: memcopy changes nothing.
                return Vec::new();
            }
            // Two places in one block (or in blocks that an `if` may have
            // made one): through a temporary block, as eq. 5 reads
            // everything before it writes.
            let tmp = self.names.fresh("tmp_mem");
            let t = Place {
                block: tmp.clone(),
                lmad: Lmad::row_major(&src.shape.iter().map(Poly::atom).collect::<Vec<_>>()),
                shape: src.shape.clone(),
            };
            let mut out = vec![
                stmt(StmtKind::Var(tmp.clone(), ImpType::Mem), span),
                stmt(StmtKind::Alloc(tmp, product(&src.shape)), span),
            ];
            out.extend(self.copy_nest(&t, &[], src, span));
            out.extend(self.copy_nest(dst, prefix, &t, span));
            return out;
        }
        self.copy_nest(dst, prefix, src, span)
    }

    fn copy_nest(&mut self, dst: &Place, prefix: &[Poly], src: &Place, span: Span) -> Vec<Stmt> {
        let idx: Vec<Ident> = (0..src.shape.len())
            .map(|d| {
                self.names
                    .fresh(["i", "j", "k", "l"].get(d).copied().unwrap_or("i"))
            })
            .collect();
        let ip: Vec<Poly> = idx.iter().map(|x| Poly::var(&x.name)).collect();
        let full: Vec<Poly> = prefix.iter().cloned().chain(ip.iter().cloned()).collect();
        let v = self.names.fresh("v");
        let mut code = vec![
            stmt(StmtKind::Var(v.clone(), ImpType::Int), span),
            stmt(
                StmtKind::Read(v.clone(), src.block.clone(), src.at(&ip)),
                span,
            ),
            stmt(
                StmtKind::Write(dst.block.clone(), dst.at(&full), var(&v)),
                span,
            ),
        ];
        for (i, n) in idx.iter().zip(&src.shape).rev() {
            code = vec![stmt(
                StmtKind::Kernel(i.clone(), SExp::Atom(n.clone()), code),
                span,
            )];
        }
        code
    }
}
