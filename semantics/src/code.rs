//! FUN and FUNMEM programs with names resolved to slots.
//!
//! The interpreters run millions of statements per second, which rules out
//! looking names up in maps. A type-checked program is resolved once: every
//! binder (parameter, pattern name, kernel index) gets its own slot in one
//! flat frame, and every use refers to its binder's slot. Names never shadow
//! (docs/language.md, Conventions), so slots can be given in binding order; sibling scopes
//! reuse names but get distinct slots; a loop's parameters and `for` index
//! are bound in its body's scope, and its pattern after it. The tree keeps
//! the paper's shape:
//! the interpreters' rules match on it as the paper's rules match on syntax.

use crate::error::EvalError;
use crate::scalar::{binop, binop_t, unop_t, DivByZero};
use funmem_lang::ast::{self, BinOp, ExpKind, UnOp};
use funmem_lang::prim::Prim;
use funmem_lang::{Name, Span};
use std::collections::HashMap;

/// A slot in the frame.
pub type Slot = u32;

/// A scalar expression over slots. Scalars are words
/// ([`funmem_lang::prim::Const::to_bits`], held as `i64`); each operator
/// knows the type of its operands, fixed at resolve time from the
/// binders' declared types, so evaluation never looks at a type tag.
#[derive(Clone, Debug)]
pub enum SE {
    /// A literal's word.
    Const(i64),
    /// The word in a slot.
    Slot(Slot),
    /// `a op b`, both operands of the given type.
    Bin(BinOp, Prim, Box<SE>, Box<SE>),
    /// `op a`, the operand of the given type.
    Un(UnOp, Prim, Box<SE>),
}

/// An atom over slots.
#[derive(Clone, Copy, Debug)]
pub enum AtomC {
    /// A literal's word.
    Const(i64),
    /// The word in a slot.
    Slot(Slot),
}

/// The operator of a `reduce` or `scan`, resolved.
#[derive(Clone, Debug)]
pub enum RedC {
    /// A built-in binary operator on elements of the type.
    Bin(BinOp, Prim),
    /// A lambda: its two parameters' slots and its body (one result).
    Lambda(Slot, Slot, Box<Block>),
}

/// An LMAD over slots: offset and (elements, stride) per dimension.
#[derive(Clone, Debug)]
pub struct LmadC {
    /// The offset.
    pub offset: SE,
    /// (elements, stride), outermost first.
    pub dims: Vec<(SE, SE)>,
}

/// A type over slots.
#[derive(Clone, Debug)]
pub enum TyC {
    /// A scalar of an element type.
    Prim(Prim),
    /// `mem`.
    Mem,
    /// An array: its element type, shape and, in FUNMEM, its block's slot
    /// and LMAD.
    Array {
        /// The element type.
        elem: Prim,
        /// Sizes, outermost first.
        shape: Vec<AtomC>,
        /// The block's slot and the LMAD.
        mem: Option<(Slot, LmadC)>,
    },
}

/// A binding `(x : τ)` resolved.
#[derive(Clone, Debug)]
pub struct PatC {
    /// Where the value goes.
    pub slot: Slot,
    /// The source name (for messages and observers).
    pub name: Name,
    /// Its type.
    pub ty: TyC,
}

/// An expression resolved.
#[derive(Clone, Debug)]
pub enum Op {
    Scalar(SE),
    /// `x[i, ...]`: an element, or with fewer indices than x's rank the
    /// sub-array (partial indexing).
    Index(Slot, Vec<AtomC>),
    Slice(Slot, Vec<(AtomC, AtomC)>),
    Transpose(Slot),
    If(Slot, Block, Block),
    Kernel(Slot, AtomC, Block),
    Iota(AtomC),
    Copy(Slot),
    /// `alloc se t`: se elements of type t.
    Alloc(SE, Prim),
    /// `reduce op ne xs`: the operator, ne, xs and the element type.
    Reduce(RedC, AtomC, Slot, Prim),
    /// `scan op ne xs`: as [`Op::Reduce`].
    Scan(RedC, AtomC, Slot, Prim),
    /// `loop p̄ = (ā) form do b`: the parameters (bound in the body's
    /// scope), their initial values (resolved outside), how it runs, the
    /// body, and for each initial value whether this is the last use of
    /// its variable (see [`Op::Update`]).
    Loop(Vec<PatC>, Vec<AtomC>, LoopC, Block, Vec<bool>),
    /// `x with [idx, ...] = v`, and whether this is the last use of x: x
    /// is bound in the innermost block that runs the statement (or is a
    /// program or loop parameter of that block) and no later statement or
    /// result of the block names it. Then its value may move out of the
    /// frame instead of being shared, so that its buffer may be written in
    /// place. (The type checker's uniqueness rules make every update
    /// such a last use; the interpreters do not rely on it.)
    Update(Slot, Vec<UpdC>, AtomC, bool),
    /// `concat x y`.
    Concat(Slot, Slot),
    /// `replicate n v`.
    Replicate(AtomC, AtomC),
}

/// How a loop runs, resolved.
#[derive(Clone, Copy, Debug)]
pub enum LoopC {
    /// `for i < n`: the index's slot (bound in the body's scope) and the
    /// bound (resolved outside).
    For(Slot, AtomC),
    /// `while p`: the slot of the parameter tested.
    While(Slot),
}

/// One index of an in-place update, resolved.
#[derive(Clone, Copy, Debug)]
pub enum UpdC {
    /// `j`: one element (the dimension disappears).
    Elem(AtomC),
    /// `o : n`: a range (the dimension stays, of size n).
    Range(AtomC, AtomC),
}

/// A statement resolved.
#[derive(Clone, Debug)]
pub struct Stm {
    /// The pattern.
    pub pats: Vec<PatC>,
    /// The expression.
    pub op: Op,
    /// The source name of the array operand, if any (for messages).
    pub operand: Option<Name>,
    /// Where the statement is.
    pub span: Span,
}

/// A body resolved.
#[derive(Clone, Debug)]
pub struct Block {
    /// The statements.
    pub stms: Vec<Stm>,
    /// The result slots.
    pub result: Vec<Slot>,
    /// The first slot bound inside the block: a result slot at or above it
    /// names a value of the block's own, which nothing reads once the
    /// block is done (a later run of the block binds it again first), so
    /// the interpreters may move it out rather than share it.
    pub first: Slot,
}

impl Block {
    /// Whether result `k` may be moved out of the frame when the block is
    /// done: bound at or above `local` (the block's own slots, or a loop's
    /// parameters too) and not named again by a later result.
    #[inline]
    pub fn movable(&self, k: usize, local: Slot) -> bool {
        let r = self.result[k];
        r >= local && !self.result[k + 1..].contains(&r)
    }
}

/// A program resolved.
#[derive(Clone, Debug)]
pub struct Code {
    /// The parameters.
    pub params: Vec<PatC>,
    /// The body.
    pub body: Block,
    /// Frame size.
    pub slots: usize,
    /// Each slot's scalar type (an array's element type), for reading
    /// words back as values.
    pub prims: Vec<Prim>,
    /// Each slot's source name, for observers (see
    /// [`crate::observer::Observer::enter`]).
    pub names: Vec<Option<Name>>,
}

impl Code {
    /// The scalar type of slot `k` (i64 when unknown).
    pub fn prim(&self, k: Slot) -> Prim {
        self.prims.get(k as usize).copied().unwrap_or(Prim::I64)
    }

    /// The source name of slot `k`, if it has one.
    pub fn name(&self, k: Slot) -> Option<&Name> {
        self.names.get(k as usize).and_then(Option::as_ref)
    }
}

/// Resolves a type-checked FUN or FUNMEM program.
///
/// A name that is not in scope (which the type checker rules out) resolves
/// to a slot that is never written, so evaluation reports it as unset
/// rather than panicking.
pub fn resolve(p: &ast::Program) -> Code {
    let mut r = Resolver {
        scopes: vec![HashMap::new()],
        next: 0,
        prims: Vec::new(),
        names: Vec::new(),
    };
    let params = p.params.iter().map(|q| r.bind_pat(q)).collect::<Vec<_>>();
    // Parameter types may name any parameter: resolve them after binding all.
    let params = params
        .into_iter()
        .zip(&p.params)
        .map(|(slot, q)| r.pat(slot, q))
        .collect();
    let body = r.block(&p.body, Some(0));
    let mut prims = r.prims;
    prims.resize(r.next as usize + 1, Prim::I64);
    let mut names = r.names;
    names.resize(r.next as usize + 1, None);
    Code {
        params,
        body,
        slots: r.next as usize + 1,
        prims,
        names,
    }
}

struct Resolver {
    scopes: Vec<HashMap<Name, Slot>>,
    next: Slot,
    /// Each slot's scalar type (an array's element type; i64 for indices,
    /// blocks and unset slots).
    prims: Vec<Prim>,
    names: Vec<Option<Name>>,
}

impl Resolver {
    fn lookup(&mut self, x: &Name) -> Slot {
        for s in self.scopes.iter().rev() {
            if let Some(&k) = s.get(x) {
                return k;
            }
        }
        // Unreachable for checked programs; a fresh slot is never written.
        self.fresh()
    }

    fn fresh(&mut self) -> Slot {
        let k = self.next;
        self.next += 1;
        k
    }

    fn bind(&mut self, x: &Name) -> Slot {
        let k = self.fresh();
        let at = k as usize;
        if self.names.len() <= at {
            self.names.resize(at + 1, None);
        }
        self.names[at] = Some(x.clone());
        if let Some(s) = self.scopes.last_mut() {
            s.insert(x.clone(), k);
        }
        k
    }

    fn bind_pat(&mut self, p: &ast::Pat) -> Slot {
        let k = self.bind(&p.name.name);
        let t = match &p.ty {
            ast::Type::Prim(t, _) => *t,
            ast::Type::Array(a, _) => a.elem,
            ast::Type::Mem(_) => Prim::I64,
        };
        self.set_prim(k, t);
        k
    }

    fn set_prim(&mut self, k: Slot, t: Prim) {
        let k = k as usize;
        if self.prims.len() <= k {
            self.prims.resize(k + 1, Prim::I64);
        }
        self.prims[k] = t;
    }

    fn prim_of(&self, k: Slot) -> Prim {
        self.prims.get(k as usize).copied().unwrap_or(Prim::I64)
    }

    fn atom_prim(&mut self, a: &ast::Atom) -> Prim {
        match a {
            ast::Atom::Int(..) => Prim::I64,
            ast::Atom::Const(c, _) => c.prim(),
            ast::Atom::Var(x) => {
                let k = self.lookup(&x.name);
                self.prim_of(k)
            }
        }
    }

    fn redop(&mut self, op: &ast::RedOp, elem: Prim) -> RedC {
        match op {
            ast::RedOp::Bin(b, _) => RedC::Bin(*b, elem),
            ast::RedOp::Lambda(l) => {
                self.scopes.push(HashMap::new());
                let slots: Vec<Slot> = l.params.iter().map(|p| self.bind_pat(p)).collect();
                let b = self.block(&l.body, None);
                self.scopes.pop();
                let a = slots.first().copied().unwrap_or(0);
                let c = slots.get(1).copied().unwrap_or(a);
                RedC::Lambda(a, c, Box::new(b))
            }
        }
    }

    fn pat(&mut self, slot: Slot, p: &ast::Pat) -> PatC {
        PatC {
            slot,
            name: p.name.name.clone(),
            ty: self.ty(&p.ty),
        }
    }

    fn atom(&mut self, a: &ast::Atom) -> AtomC {
        match a {
            ast::Atom::Int(k, _) => AtomC::Const(*k),
            ast::Atom::Const(c, _) => AtomC::Const(c.to_bits() as i64),
            ast::Atom::Var(x) => AtomC::Slot(self.lookup(&x.name)),
        }
    }

    fn se(&mut self, e: &ast::SExp) -> SE {
        self.typed_se(e).0
    }

    /// A scalar expression and its type.
    fn typed_se(&mut self, e: &ast::SExp) -> (SE, Prim) {
        match e {
            ast::SExp::Atom(ast::Atom::Int(k, _)) => (SE::Const(*k), Prim::I64),
            ast::SExp::Atom(ast::Atom::Const(c, _)) => (SE::Const(c.to_bits() as i64), c.prim()),
            ast::SExp::Atom(ast::Atom::Var(x)) => {
                let k = self.lookup(&x.name);
                (SE::Slot(k), self.prim_of(k))
            }
            ast::SExp::Bin(op, a, b, _) => {
                let (a, t) = self.typed_se(a);
                let (b, _) = self.typed_se(b);
                let r = match op {
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                        Prim::Bool
                    }
                    _ => t,
                };
                (SE::Bin(*op, t, Box::new(a), Box::new(b)), r)
            }
            ast::SExp::Un(op, a, _) => {
                let (a, t) = self.typed_se(a);
                let r = match op {
                    UnOp::Conv(to) => *to,
                    _ => t,
                };
                (SE::Un(*op, t, Box::new(a)), r)
            }
        }
    }

    fn ty(&mut self, t: &ast::Type) -> TyC {
        match t {
            ast::Type::Prim(t, _) => TyC::Prim(*t),
            ast::Type::Mem(_) => TyC::Mem,
            ast::Type::Array(a, _) => TyC::Array {
                elem: a.elem,
                shape: a.shape.iter().map(|s| self.atom(s)).collect(),
                mem: a.mem.as_ref().map(|m| {
                    let block = self.lookup(&m.block.name);
                    let l = m.lmad.to_lmad();
                    let lmad = LmadC {
                        offset: self.se(&l.offset),
                        dims: l
                            .dims
                            .iter()
                            .map(|d| (self.se(&d.elems), self.se(&d.stride)))
                            .collect(),
                    };
                    (block, lmad)
                }),
            },
        }
    }

    /// A body; `local` is the first slot of the values that belong to it
    /// (its own, or also its loop's or program's parameters), by default
    /// its own.
    fn block(&mut self, b: &ast::Body, local: Option<Slot>) -> Block {
        self.scopes.push(HashMap::new());
        let first = self.next;
        let mut stms: Vec<Stm> = b.stms.iter().map(|s| self.stm(s)).collect();
        let result: Vec<Slot> = b.result.iter().map(|x| self.lookup(&x.name)).collect();
        self.scopes.pop();
        last_uses(&mut stms, &result, local.unwrap_or(first));
        Block {
            stms,
            result,
            first,
        }
    }

    fn stm(&mut self, s: &ast::Stm) -> Stm {
        let mut operand = None;
        let mut var = |r: &mut Resolver, x: &ast::Ident| {
            operand = Some(x.name.clone());
            r.lookup(&x.name)
        };
        let op = match &s.exp.kind {
            ExpKind::Scalar(e) => Op::Scalar(self.se(e)),
            ExpKind::Alloc(e, t) => Op::Alloc(self.se(e), *t),
            ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
                let t = self.atom_prim(ne);
                let ne = self.atom(ne);
                let xs = var(self, xs);
                let op = self.redop(op, t);
                if matches!(s.exp.kind, ExpKind::Reduce(..)) {
                    Op::Reduce(op, ne, xs, t)
                } else {
                    Op::Scan(op, ne, xs, t)
                }
            }
            ExpKind::Index(x, idx) => {
                let x = var(self, x);
                Op::Index(x, idx.iter().map(|a| self.atom(a)).collect())
            }
            ExpKind::Slice(x, sl) => {
                let x = var(self, x);
                Op::Slice(
                    x,
                    sl.iter()
                        .map(|(o, n)| (self.atom(o), self.atom(n)))
                        .collect(),
                )
            }
            ExpKind::Transpose(x) => Op::Transpose(var(self, x)),
            ExpKind::Copy(x) => Op::Copy(var(self, x)),
            ExpKind::Iota(n) => Op::Iota(self.atom(n)),
            ExpKind::If(c, t, e) => {
                let c = self.lookup(&c.name);
                Op::If(c, self.block(t, None), self.block(e, None))
            }
            ExpKind::Kernel(i, n, b) => {
                let n = self.atom(n);
                self.scopes.push(HashMap::new());
                let i = self.bind(&i.name);
                self.set_prim(i, Prim::I64);
                let b = self.block(b, None);
                self.scopes.pop();
                Op::Kernel(i, n, b)
            }
            ExpKind::Loop(ps, init, form, b) => {
                // The initial values and a `for`'s bound are outside the
                // loop; the parameters and the index are the body's.
                let init = init.iter().map(|a| self.atom(a)).collect();
                let bound = match form {
                    ast::LoopForm::For(_, n) => self.atom(n),
                    ast::LoopForm::While(_) => AtomC::Const(0),
                };
                self.scopes.push(HashMap::new());
                let local = self.next;
                let slots: Vec<Slot> = ps.iter().map(|p| self.bind_pat(p)).collect();
                let params = slots
                    .into_iter()
                    .zip(ps)
                    .map(|(k, p)| self.pat(k, p))
                    .collect();
                let form = match form {
                    ast::LoopForm::For(i, _) => {
                        let i = self.bind(&i.name);
                        self.set_prim(i, Prim::I64);
                        LoopC::For(i, bound)
                    }
                    ast::LoopForm::While(c) => LoopC::While(self.lookup(&c.name)),
                };
                let b = self.block(b, Some(local));
                self.scopes.pop();
                let moves = vec![false; ps.len()];
                Op::Loop(params, init, form, b, moves)
            }
            ExpKind::Update(x, is, v) => {
                let x = var(self, x);
                let is = is
                    .iter()
                    .map(|i| match i {
                        ast::UpdIdx::Elem(j) => UpdC::Elem(self.atom(j)),
                        ast::UpdIdx::Range(o, n) => UpdC::Range(self.atom(o), self.atom(n)),
                    })
                    .collect();
                Op::Update(x, is, self.atom(v), false)
            }
            ExpKind::Concat(x, y) => {
                let x = var(self, x);
                Op::Concat(x, self.lookup(&y.name))
            }
            ExpKind::Replicate(n, v) => Op::Replicate(self.atom(n), self.atom(v)),
        };
        // Patterns are bound after the expression; an if-pattern's types may
        // use the pattern's own names, so bind all names, then the types.
        let slots: Vec<Slot> = s.pats.iter().map(|p| self.bind_pat(p)).collect();
        let pats = slots
            .into_iter()
            .zip(&s.pats)
            .map(|(k, p)| self.pat(k, p))
            .collect();
        Stm {
            pats,
            op,
            operand,
            span: s.span,
        }
    }
}

/// Marks the updates and loop initial values that are their variable's
/// last use in a block (see [`Op::Update`]): the variable is `local` (at
/// or above that slot), no later statement or result names it, and the
/// statement names it only there.
fn last_uses(stms: &mut [Stm], result: &[Slot], local: Slot) {
    if !stms
        .iter()
        .any(|s| matches!(s.op, Op::Loop(..) | Op::Update(..)))
    {
        return;
    }
    let mut last: HashMap<Slot, usize> = HashMap::new();
    for (k, s) in stms.iter().enumerate() {
        stm_slots(s, &mut |x| {
            last.insert(x, k);
        });
    }
    for &r in result {
        last.insert(r, usize::MAX);
    }
    for (k, s) in stms.iter_mut().enumerate() {
        // How often the statement names each slot.
        let mut uses: HashMap<Slot, usize> = HashMap::new();
        if matches!(s.op, Op::Loop(..) | Op::Update(..)) {
            stm_slots(s, &mut |x| *uses.entry(x).or_default() += 1);
        }
        let dies = |x: Slot, times: usize| {
            x >= local && last.get(&x) == Some(&k) && uses.get(&x) == Some(&times)
        };
        match &mut s.op {
            Op::Loop(_, init, _, _, moves) => {
                for (m, a) in moves.iter_mut().zip(init.iter()) {
                    *m = matches!(*a, AtomC::Slot(x) if dies(x, 1));
                }
            }
            Op::Update(x, _, v, last_use) => {
                let times = if matches!(*v, AtomC::Slot(y) if y == *x) {
                    2
                } else {
                    1
                };
                *last_use = dies(*x, times);
            }
            _ => {}
        }
    }
}

/// Calls `f` on every slot a statement reads (its pattern's types and its
/// expression, nested bodies included).
fn stm_slots(s: &Stm, f: &mut impl FnMut(Slot)) {
    for p in &s.pats {
        ty_slots(&p.ty, f);
    }
    let atom = |a: &AtomC, f: &mut dyn FnMut(Slot)| {
        if let AtomC::Slot(k) = *a {
            f(k)
        }
    };
    match &s.op {
        Op::Scalar(e) | Op::Alloc(e, _) => se_slots(e, f),
        Op::Reduce(op, ne, xs, _) | Op::Scan(op, ne, xs, _) => {
            atom(ne, f);
            f(*xs);
            if let RedC::Lambda(_, _, b) = op {
                block_slots(b, f);
            }
        }
        Op::Index(x, idx) => {
            f(*x);
            idx.iter().for_each(|a| atom(a, f));
        }
        Op::Slice(x, sl) => {
            f(*x);
            for (o, n) in sl {
                atom(o, f);
                atom(n, f);
            }
        }
        Op::Transpose(x) | Op::Copy(x) => f(*x),
        Op::If(c, t, e) => {
            f(*c);
            block_slots(t, f);
            block_slots(e, f);
        }
        Op::Kernel(_, n, b) => {
            atom(n, f);
            block_slots(b, f);
        }
        Op::Iota(n) => atom(n, f),
        Op::Loop(ps, init, form, b, _) => {
            for p in ps {
                ty_slots(&p.ty, f);
            }
            init.iter().for_each(|a| atom(a, f));
            if let LoopC::For(_, n) = form {
                atom(n, f);
            }
            block_slots(b, f);
        }
        Op::Update(x, is, v, _) => {
            f(*x);
            for i in is {
                match i {
                    UpdC::Elem(j) => atom(j, f),
                    UpdC::Range(o, n) => {
                        atom(o, f);
                        atom(n, f);
                    }
                }
            }
            atom(v, f);
        }
        Op::Concat(x, y) => {
            f(*x);
            f(*y);
        }
        Op::Replicate(n, v) => {
            atom(n, f);
            atom(v, f);
        }
    }
}

fn block_slots(b: &Block, f: &mut impl FnMut(Slot)) {
    for s in &b.stms {
        stm_slots(s, f);
    }
    b.result.iter().for_each(|&r| f(r));
}

fn ty_slots(t: &TyC, f: &mut impl FnMut(Slot)) {
    if let TyC::Array { shape, mem, .. } = t {
        for a in shape {
            if let AtomC::Slot(k) = *a {
                f(k);
            }
        }
        if let Some((blk, l)) = mem {
            f(*blk);
            se_slots(&l.offset, f);
            for (n, s) in &l.dims {
                se_slots(n, f);
                se_slots(s, f);
            }
        }
    }
}

fn se_slots(e: &SE, f: &mut impl FnMut(Slot)) {
    match e {
        SE::Const(_) => {}
        SE::Slot(k) => f(*k),
        SE::Bin(_, _, a, b) => {
            se_slots(a, f);
            se_slots(b, f);
        }
        SE::Un(_, _, a) => se_slots(a, f),
    }
}

/// A value in an interpreter's frame, as the resolved code reads it.
pub trait SlotValue {
    /// Whether the slot has no value yet.
    fn is_unset(&self) -> bool;
    /// The integer, if the value is one.
    fn as_int(&self) -> Option<i64>;
    /// A short description for messages.
    fn describe(&self) -> String;
    /// The integer `k` as a value.
    fn from_int(k: i64) -> Self;
}

/// How many iterations a `for` may run: its bound, evaluated once before
/// the first (0 for a `while`, which ignores it).
#[inline]
pub fn loop_bound<V: SlotValue>(
    frame: &[V],
    form: LoopC,
    rule: &'static str,
    span: Span,
) -> Result<i64, EvalError> {
    match form {
        LoopC::For(_, n) => atom(frame, n, rule, span),
        LoopC::While(_) => Ok(0),
    }
}

/// Whether iteration `k` of a loop runs (E-LOOP-FOR, E-LOOP-WHILE and
/// their FUNMEM twin E-MEM-LOOP): a `for` runs while k < n (its bound,
/// [`loop_bound`]) and binds its index to k; a `while` while its
/// parameter is non-zero.
#[inline]
pub fn loop_enters<V: SlotValue>(
    frame: &mut [V],
    form: LoopC,
    k: i64,
    n: i64,
    rule: &'static str,
    span: Span,
) -> Result<bool, EvalError> {
    match form {
        LoopC::For(i, _) => {
            if k >= n {
                return Ok(false);
            }
            frame[i as usize] = V::from_int(k);
            Ok(true)
        }
        LoopC::While(c) => Ok(int(frame, c, rule, span)? != 0),
    }
}

/// The value in slot `k`; an unset slot is stuck (E-VAR).
#[inline]
pub fn get<V: SlotValue>(frame: &[V], k: Slot, span: Span) -> Result<&V, EvalError> {
    match frame.get(k as usize) {
        Some(v) if !v.is_unset() => Ok(v),
        _ => Err(EvalError::stuck(
            "E-VAR",
            span,
            "a variable is used before it has a value",
        )),
    }
}

/// The integer in slot `k`.
#[inline]
pub fn int<V: SlotValue>(
    frame: &[V],
    k: Slot,
    rule: &'static str,
    span: Span,
) -> Result<i64, EvalError> {
    let v = get(frame, k, span)?;
    v.as_int().ok_or_else(|| {
        EvalError::stuck(
            rule,
            span,
            format!("expected an integer, found {}", v.describe()),
        )
    })
}

/// The integer an atom denotes.
#[inline]
pub fn atom<V: SlotValue>(
    frame: &[V],
    a: AtomC,
    rule: &'static str,
    span: Span,
) -> Result<i64, EvalError> {
    match a {
        AtomC::Const(k) => Ok(k),
        AtomC::Slot(k) => int(frame, k, rule, span),
    }
}

impl SE {
    /// E-SCALAR's "conventional evaluation" in a frame (a slot without an
    /// integer reads as 0; checked programs have none).
    pub fn eval<V: SlotValue>(&self, frame: &[V]) -> Result<i64, DivByZero> {
        match self {
            SE::Const(k) => Ok(*k),
            SE::Slot(k) => Ok(frame
                .get(*k as usize)
                .and_then(SlotValue::as_int)
                .unwrap_or(0)),
            // The common i64 case without the typed dispatch.
            SE::Bin(op, Prim::I64, a, b) => binop(*op, a.eval(frame)?, b.eval(frame)?),
            SE::Bin(op, t, a, b) => {
                binop_t(*op, *t, a.eval(frame)? as u64, b.eval(frame)? as u64).map(|w| w as i64)
            }
            SE::Un(op, t, a) => Ok(unop_t(*op, *t, a.eval(frame)? as u64) as i64),
        }
    }
}
