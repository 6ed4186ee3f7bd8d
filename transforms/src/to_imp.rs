//! FUNMEM to IMP (IFL 2022 paper, §4): FunMemToImp and Copy, 0-based.
//!
//! Every binding becomes a declared variable; an element access becomes a
//! read or write of the array's block at the address its LMAD gives,
//! computed symbolically (and simplified as a polynomial); slices and
//! transposes vanish, since they only change the LMAD; an `if` declares its
//! pattern's `int` and `mem` variables and assigns them in each branch; a
//! kernel's body ends by copying its result into the kernel's array (Copy).
//! `iota`, `copy`, `concat` and `replicate` become kernels (a kernel with
//! several results writes each result's block in one IMP kernel); a
//! `loop` becomes an IMP `for` or `while` over its parameters' `int` and
//! `mem` variables; an in-place update writes into its array's block
//! through its LMAD, guarded like an index (`assert index`) or slice
//! (`assert slice`). Program parameters and results carry
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
//! then write) would not; a copy onto the very same place is dropped (the
//! same block and LMADs equal as polynomials, with the known definitions of
//! `int` names unfolded, so that a row built at `o + {(m : 1)}` with
//! `o = i * m` is seen to be row `i` of `R(n, m)`). Two blocks of different
//! names may be one at run time when a name is bound by an `if` (`if c then
//! (m, ..) else (m2, ..)`) or is a loop's `mem` parameter: such a copy also
//! goes through a temporary block unless the blocks they may be (the
//! `alloc`s and `mem` parameters, which are distinct blocks) are disjoint.
//! A block allocated in a loop body is fresh in each iteration, so it is
//! never the block a parameter of that loop holds.

use crate::names::Names;
use crate::to_funmem::product;
use funmem_lang::ast::{
    Atom, BinOp, Body, ExpKind, Ident, LoopForm, Pat, Program, RedOp, SExp, Stm, Type, UpdIdx,
};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::imp::{self, ArrDecl, Check, ImpOp, ImpType, Param, Red, Stmt, StmtKind};
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::poly::Poly;
use funmem_lang::prim::Prim;
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
        defs: HashMap::default(),
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
            Type::Prim(t, _) => params.push(Param::Scalar(q.name.clone(), *t, q.span)),
            Type::Mem(_) => {
                // A block no input array lives in takes no input and is
                // empty (docs/language.md, Values in and out).
                if !blocks_with_arrays.contains(&q.name.name) {
                    body.push(stmt(StmtKind::Var(q.name.clone(), ImpType::Mem), q.span));
                    body.push(stmt(
                        StmtKind::Alloc(q.name.clone(), SExp::int(0), Prim::I64),
                        q.span,
                    ));
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
            Some(Type::Prim(..)) => results.push(imp::Result::Scalar(x.clone())),
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

/// An array's place in memory: its block and LMAD, and its element type.
struct Place {
    block: Ident,
    lmad: Lmad<Poly>,
    shape: Vec<Atom>,
    elem: Prim,
}

/// The IMP type of a FUNMEM scalar or block (`None` for an array, which
/// has no variable of its own).
fn imp_type(t: &Type) -> Option<ImpType> {
    match t {
        Type::Prim(p, _) => Some(ImpType::Prim(*p)),
        Type::Mem(_) => Some(ImpType::Mem),
        Type::Array(..) => None,
    }
}

/// The type of a scalar pattern (`int` if it is not one: the checker rules
/// that out).
fn prim_of(p: Option<&Pat>) -> Prim {
    match p.map(|p| &p.ty) {
        Some(Type::Prim(t, _)) => *t,
        _ => Prim::I64,
    }
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
    /// Known definitions of `int` names (`let (o: int) = i * m`), unfolded,
    /// so that two LMADs that name one place differently compare equal.
    /// Sound because a FUNMEM name is bound once, and the only IMP
    /// variables assigned again are loop parameters, which have no
    /// definition.
    defs: HashMap<Name, Poly>,
}

/// The root standing for "any block": a block a loop parameter may get
/// from a loop nested in the body, which this translation does not follow.
const ANY_BLOCK: &str = "*";

/// Definitions with more terms than this are not kept (they would only
/// grow the comparisons).
const DEF_TERMS: usize = 16;

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
                    elem: a.elem,
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
            elem: a.elem,
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
        let ra = self.roots_of(a);
        let any = |rs: &[Name]| rs.iter().any(|r| r.as_str() == ANY_BLOCK);
        a == b || any(&ra) || any(&rb) || ra.iter().any(|r| rb.contains(r))
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
            // E-MEM-REDUCE: one IMP `reduce` whose iteration i reads
            // element i of xs through its LMAD.
            ExpKind::Reduce(op, ne, xs) => {
                let x = x()?;
                let t = prim_of(s.pats.first());
                let red = self.red(op, ne, xs, t, sp)?;
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Prim(t)), sp));
                out.push(stmt(StmtKind::Reduce(x, Box::new(red.0)), sp));
                self.bind(&s.pats);
            }
            // E-MEM-SCAN: one IMP `scan` writing prefix i at element i of
            // the result's place.
            ExpKind::Scan(op, ne, xs) => {
                self.bind(&s.pats);
                let dst = self.place(&x()?)?;
                let (red, i) = self.red(op, ne, xs, dst.elem, sp)?;
                let at = dst.at(&[Poly::var(&i.name)]);
                out.push(stmt(
                    StmtKind::Scan(Box::new(red), dst.block.clone(), at),
                    sp,
                ));
            }
            ExpKind::Loop(ps, init, form, b) => self.lower_loop(s, ps, init, form, b, out)?,
            ExpKind::Update(y, is, v) => {
                self.bind(&s.pats);
                self.update(y, is, v, sp, out)?;
            }
            // E-MEM-CONCAT: x's elements, then y's after x's rows.
            ExpKind::Concat(y1, y2) => {
                self.bind(&s.pats);
                let dst = self.place(&x()?)?;
                let p1 = self.place(y1)?;
                let p2 = self.place(y2)?;
                out.extend(self.copy(&dst, &[], &p1, sp));
                let rows = p1
                    .shape
                    .first()
                    .map(Poly::atom)
                    .unwrap_or_else(|| Poly::constant(0));
                let mut lmad = dst.lmad.clone();
                if let Some(d) = lmad.dims.first_mut() {
                    lmad.offset = lmad.offset.add(&rows.mul(&d.stride));
                    if let Some(k) = p2.shape.first() {
                        d.elems = Poly::atom(k);
                    }
                }
                let second = Place {
                    block: dst.block.clone(),
                    lmad,
                    shape: p2.shape.clone(),
                    elem: dst.elem,
                };
                out.extend(self.copy(&second, &[], &p2, sp));
            }
            // E-MEM-REPLICATE: one kernel iteration per copy of v.
            ExpKind::Replicate(n, v) => {
                self.bind(&s.pats);
                let dst = self.place(&x()?)?;
                let i = self.names.fresh("i");
                let at = [Poly::var(&i.name)];
                let mut body = match v {
                    Atom::Var(y) if matches!(self.env.get(&y.name), Some(Type::Array(..))) => {
                        let src = self.place(y)?;
                        self.copy(&dst, &at, &src, sp)
                    }
                    _ => vec![stmt(
                        StmtKind::Write(dst.block.clone(), dst.at(&at), SExp::Atom(v.clone())),
                        sp,
                    )],
                };
                if body.is_empty() {
                    body.push(stmt(StmtKind::Skip, sp));
                }
                out.push(stmt(StmtKind::Kernel(i, SExp::Atom(n.clone()), body), sp));
            }
            ExpKind::Scalar(e) => {
                let x = x()?;
                let t = prim_of(s.pats.first());
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Prim(t)), sp));
                let def = self.unfold(&Poly::from_sexp(e));
                if def.terms().count() <= DEF_TERMS {
                    self.defs.insert(x.name.clone(), def);
                }
                out.push(stmt(StmtKind::Assign(x, e.clone()), sp));
                self.bind(&s.pats);
            }
            ExpKind::Alloc(e, t) => {
                let t = *t;
                let x = x()?;
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Mem), sp));
                self.roots.remove(&x.name);
                out.push(stmt(StmtKind::Alloc(x, e.clone(), t), sp));
                self.bind(&s.pats);
            }
            ExpKind::Index(y, idx) => {
                let x = x()?;
                let py = self.place(y)?;
                let mut conds = Vec::new();
                for (a, n) in idx.iter().zip(&py.shape) {
                    if !self.known_in_bounds(a, n) {
                        conds.push(index_cond(a, n));
                    }
                }
                self.guard(Check::Index, conds, sp, out);
                // A partial index is a view: its pattern's LMAD already
                // fixes the indexed dimensions; nothing to read.
                if idx.len() < py.shape.len() {
                    self.bind(&s.pats);
                    return Ok(());
                }
                let idx: Vec<Poly> = idx.iter().map(Poly::atom).collect();
                out.push(stmt(StmtKind::Var(x.clone(), ImpType::Prim(py.elem)), sp));
                out.push(stmt(StmtKind::Read(x, py.block.clone(), py.at(&idx)), sp));
                self.bind(&s.pats);
            }
            // Only the LMAD changes: nothing to do at run time but check
            // the slice's bounds (o >= 0, k >= 0, o <= n - k, without overflow).
            ExpKind::Slice(y, sl) => {
                let py = self.place(y)?;
                let mut conds = Vec::new();
                for ((o, k), n) in sl.iter().zip(&py.shape) {
                    if !range_known(o, k, n) {
                        conds.push(slice_cond(o, k, n));
                    }
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
                self.env.insert(i.name.clone(), Type::int(i.span));
                self.facts.push((i.name.clone(), n.clone()));
                let inner = self.stms(&b.stms);
                self.facts.pop();
                let mut inner = inner?;
                self.bind(&s.pats);
                // One IMP kernel writes every result array's row i.
                let at = [Poly::var(&i.name)];
                for (p, r) in s.pats.iter().zip(&b.result) {
                    let dst = self.place(&p.name)?;
                    match self.env.get(&r.name) {
                        Some(Type::Prim(..)) => inner.push(stmt(
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
                    .filter_map(|(k, p)| imp_type(&p.ty).map(|t| (k, p, t)))
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

    /// The part of an IMP `reduce` or `scan` over the 1-D array xs with
    /// elements of type `t`: iteration i reads element i through xs's
    /// LMAD and yields it; a lambda's body is lowered as a kernel body
    /// (it binds only scalars). Gives the iteration index too.
    fn red(
        &mut self,
        op: &RedOp,
        ne: &Atom,
        xs: &Ident,
        t: Prim,
        sp: Span,
    ) -> Result<(Red, Ident), Diagnostic> {
        let src = self.place(xs)?;
        let Some(n) = src.shape.first().cloned() else {
            return Err(Diagnostic::new(
                Phase::Transform,
                xs.span,
                format!("lowering to IMP: `{}` is not a 1-D array", xs.name),
            ));
        };
        let op = match op {
            RedOp::Bin(b, _) => ImpOp::Bin(*b),
            RedOp::Lambda(l) => {
                let (Some(a), Some(b), Some(r)) =
                    (l.params.first(), l.params.get(1), l.body.result.first())
                else {
                    return Err(Diagnostic::new(
                        Phase::Transform,
                        l.span,
                        "lowering to IMP: a reduction's operator takes two parameters and gives one result",
                    ));
                };
                self.bind(&l.params);
                let body = self.stms(&l.body.stms)?;
                ImpOp::Lambda(a.name.clone(), b.name.clone(), body, var(r))
            }
        };
        let i = self.names.fresh("i");
        let e = self.names.fresh("e");
        let body = vec![
            stmt(StmtKind::Var(e.clone(), ImpType::Prim(t)), sp),
            stmt(
                StmtKind::Read(e.clone(), src.block.clone(), src.at(&[Poly::var(&i.name)])),
                sp,
            ),
        ];
        let red = Red {
            op,
            ne: SExp::Atom(ne.clone()),
            index: i.clone(),
            count: SExp::Atom(n),
            body,
            elem: var(&e),
        };
        Ok((red, i))
    }

    /// A polynomial with the known definitions of its names unfolded.
    fn unfold(&self, p: &Poly) -> Poly {
        if self.defs.is_empty() {
            return p.clone();
        }
        p.subst(&|x| self.defs.get(x).cloned())
    }

    fn unfold_lmad(&self, l: &Lmad<Poly>) -> Lmad<Poly> {
        l.map(|p| self.unfold(p))
    }

    /// E-MEM-UPDATE: `y with [idx, ...] = v` writes v into y's block
    /// through y's LMAD, after guarding each index (`assert index`) and
    /// range (`assert slice`) that is not known in bounds, since FUNMEM
    /// is stuck (E-MEM-UPDATE) where IMP would write elsewhere.
    fn update(
        &mut self,
        y: &Ident,
        is: &[UpdIdx],
        v: &Atom,
        sp: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Diagnostic> {
        let py = self.place(y)?;
        let mut elems = Vec::new();
        let mut ranges = Vec::new();
        let mut offset = py.lmad.offset.clone();
        let mut dims = Vec::new();
        let mut shape = Vec::new();
        for (k, ix) in is.iter().enumerate() {
            let (Some(n), Some(d)) = (py.shape.get(k), py.lmad.dims.get(k)) else {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    ix.span(),
                    format!("lowering to IMP: too many indices for `{}`", y.name),
                ));
            };
            match ix {
                UpdIdx::Elem(j) => {
                    if !self.known_in_bounds(j, n) {
                        elems.push(index_cond(j, n));
                    }
                    offset = offset.add(&Poly::atom(j).mul(&d.stride));
                }
                UpdIdx::Range(o, m) => {
                    if !range_known(o, m, n) {
                        ranges.push(slice_cond(o, m, n));
                    }
                    offset = offset.add(&Poly::atom(o).mul(&d.stride));
                    dims.push(Dim {
                        elems: Poly::atom(m),
                        stride: d.stride.clone(),
                    });
                    shape.push(m.clone());
                }
            }
        }
        dims.extend(py.lmad.dims.iter().skip(is.len()).cloned());
        shape.extend(py.shape.iter().skip(is.len()).cloned());
        self.guard(Check::Index, elems, sp, out);
        self.guard(Check::Slice, ranges, sp, out);
        let dst = Place {
            block: py.block.clone(),
            lmad: Lmad { offset, dims },
            shape,
            elem: py.elem,
        };
        match v {
            Atom::Var(x) if matches!(self.env.get(&x.name), Some(Type::Array(..))) => {
                let src = self.place(x)?;
                out.extend(self.copy(&dst, &[], &src, sp));
            }
            _ => out.push(stmt(
                StmtKind::Write(dst.block.clone(), dst.at(&[]), SExp::Atom(v.clone())),
                sp,
            )),
        }
        Ok(())
    }

    /// The blocks a loop body's `mem` result `r` may be in the next
    /// iteration, leaving out the body's own allocations (fresh in every
    /// iteration, so never the block a parameter holds) and the loop's
    /// parameters (the caller adds them); `[ANY_BLOCK]` where it cannot
    /// tell.
    fn body_roots(&self, b: &Body, r: &Name, params: &[Name]) -> Vec<Name> {
        for s in &b.stms {
            let Some(k) = s.pats.iter().position(|p| p.name.name == *r) else {
                continue;
            };
            return match &s.exp.kind {
                ExpKind::Alloc(..) => Vec::new(),
                ExpKind::If(_, t, e) => {
                    let mut out = Vec::new();
                    for br in [t, e] {
                        let Some(x) = br.result.get(k) else {
                            return vec![Name::new(ANY_BLOCK)];
                        };
                        for m in self.body_roots(br, &x.name, params) {
                            if !out.contains(&m) {
                                out.push(m);
                            }
                        }
                    }
                    out
                }
                _ => vec![Name::new(ANY_BLOCK)],
            };
        }
        if params.contains(r) {
            Vec::new()
        } else {
            self.roots_of(r)
        }
    }

    /// E-MEM-LOOP: the parameters' `int` and `mem` variables are declared
    /// and initialised, the body runs in an IMP `for` or `while` and ends
    /// by assigning its results to the parameters (all at once: a result
    /// that is another parameter is read into a temporary first); the
    /// pattern's variables take the final values. Arrays need nothing at
    /// run time: a parameter array's place is its block and LMAD
    /// variables, which are parameters.
    fn lower_loop(
        &mut self,
        s: &Stm,
        ps: &[Pat],
        init: &[Atom],
        form: &LoopForm,
        b: &Body,
        out: &mut Vec<Stmt>,
    ) -> Result<(), Diagnostic> {
        let sp = s.span;
        let scalar = imp_type;
        let params: Vec<Name> = ps.iter().map(|p| p.name.name.clone()).collect();
        // The blocks every `mem` parameter may be: any initial block, any
        // parameter's, any block from outside the body it may return.
        let mut roots: Vec<Name> = Vec::new();
        let mut add = |rs: Vec<Name>| {
            for m in rs {
                if !roots.contains(&m) {
                    roots.push(m);
                }
            }
        };
        for ((p, a), r) in ps.iter().zip(init).zip(&b.result) {
            if scalar(&p.ty) != Some(ImpType::Mem) {
                continue;
            }
            let Atom::Var(a) = a else {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    a.span(),
                    "lowering to IMP: a `mem` loop parameter needs a block to start from",
                ));
            };
            add(self.roots_of(&a.name));
            add(vec![p.name.name.clone()]);
            add(self.body_roots(b, &r.name, &params));
        }
        for (p, a) in ps.iter().zip(init) {
            if let Some(ty) = scalar(&p.ty) {
                out.push(stmt(StmtKind::Var(p.name.clone(), ty), p.span));
                out.push(stmt(
                    StmtKind::Assign(p.name.clone(), SExp::Atom(a.clone())),
                    p.span,
                ));
                if ty == ImpType::Mem {
                    self.roots.insert(p.name.name.clone(), roots.clone());
                }
            }
        }
        self.bind(ps);
        let fact = match form {
            LoopForm::For(i, n) => {
                self.env.insert(i.name.clone(), Type::int(i.span));
                self.facts.push((i.name.clone(), n.clone()));
                true
            }
            LoopForm::While(_) => false,
        };
        let body = self.stms(&b.stms);
        if fact {
            self.facts.pop();
        }
        let mut body = body?;
        // The simultaneous assignment of the results to the parameters.
        let mut late = Vec::new();
        for (p, r) in ps.iter().zip(&b.result) {
            let Some(ty) = scalar(&p.ty) else { continue };
            if p.name.name == r.name {
                continue;
            }
            if params.contains(&r.name) {
                let t = self.names.fresh(&format!("{}_next", p.name.name));
                body.push(stmt(StmtKind::Var(t.clone(), ty), b.span));
                body.push(stmt(StmtKind::Assign(t.clone(), var(r)), b.span));
                late.push(stmt(StmtKind::Assign(p.name.clone(), var(&t)), b.span));
            } else {
                late.push(stmt(StmtKind::Assign(p.name.clone(), var(r)), b.span));
            }
        }
        body.extend(late);
        if body.is_empty() {
            body.push(stmt(StmtKind::Skip, b.span));
        }
        out.push(stmt(
            match form {
                LoopForm::For(i, n) => StmtKind::For(i.clone(), SExp::Atom(n.clone()), body),
                LoopForm::While(c) => StmtKind::While(c.clone(), body),
            },
            sp,
        ));
        for (q, p) in s.pats.iter().zip(ps) {
            if let Some(ty) = scalar(&q.ty) {
                out.push(stmt(StmtKind::Var(q.name.clone(), ty), q.span));
                out.push(stmt(StmtKind::Assign(q.name.clone(), var(&p.name)), q.span));
                if ty == ImpType::Mem {
                    let rs = self.roots_of(&p.name.name);
                    self.roots.insert(q.name.name.clone(), rs);
                }
            }
        }
        self.bind(&s.pats);
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
            if dst.block.name == src.block.name
                && self.unfold_lmad(&d) == self.unfold_lmad(&src.lmad)
            {
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
                elem: src.elem,
            };
            let mut out = vec![
                stmt(StmtKind::Var(tmp.clone(), ImpType::Mem), span),
                stmt(StmtKind::Alloc(tmp, product(&src.shape), src.elem), span),
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
            stmt(StmtKind::Var(v.clone(), ImpType::Prim(src.elem)), span),
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

/// `0 <= j && j < n` (the first half dropped for a literal j >= 0).
fn index_cond(j: &Atom, n: &Atom) -> SExp {
    let e = SExp::Atom(j.clone());
    let below = SExp::bin(BinOp::Lt, e.clone(), SExp::Atom(n.clone()));
    match j {
        Atom::Int(k, _) if *k >= 0 => below,
        _ => SExp::bin(BinOp::And, SExp::bin(BinOp::Le, SExp::int(0), e), below),
    }
}

/// `0 <= o && 0 <= k && o <= n - k`: the range `o : k` within `n`,
/// without overflow.
fn slice_cond(o: &Atom, k: &Atom, n: &Atom) -> SExp {
    let (o, k, n) = (
        SExp::Atom(o.clone()),
        SExp::Atom(k.clone()),
        SExp::Atom(n.clone()),
    );
    SExp::bin(
        BinOp::And,
        SExp::bin(
            BinOp::And,
            SExp::bin(BinOp::Le, SExp::int(0), o.clone()),
            SExp::bin(BinOp::Le, SExp::int(0), k.clone()),
        ),
        SExp::bin(BinOp::Le, o, SExp::bin(BinOp::Sub, n, k)),
    )
}

/// The slice or range `o : k` is within `n`, all three literals.
fn range_known(o: &Atom, k: &Atom, n: &Atom) -> bool {
    matches!((o, k, n), (Atom::Int(o, _), Atom::Int(k, _), Atom::Int(n, _))
        if *o >= 0 && *k >= 0 && o.checked_add(*k).is_some_and(|e| e <= *n))
}
