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
use crate::scalar::{binop, unop, DivByZero};
use funmem_lang::ast::{self, BinOp, ExpKind, UnOp};
use funmem_lang::{Name, Span};
use std::collections::HashMap;

/// A slot in the frame.
pub type Slot = u32;

/// A scalar expression over slots.
#[derive(Clone, Debug)]
pub enum SE {
    /// A literal.
    Const(i64),
    /// The integer in a slot.
    Slot(Slot),
    /// `a op b`.
    Bin(BinOp, Box<SE>, Box<SE>),
    /// `op a`.
    Un(UnOp, Box<SE>),
}

/// An atom over slots.
#[derive(Clone, Copy, Debug)]
pub enum AtomC {
    /// A literal.
    Const(i64),
    /// The integer in a slot.
    Slot(Slot),
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
    /// `int`.
    Int,
    /// `mem`.
    Mem,
    /// An array: its shape and, in FUNMEM, its block's slot and LMAD.
    Array {
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
    Index(Slot, Vec<AtomC>),
    Slice(Slot, Vec<(AtomC, AtomC)>),
    Transpose(Slot),
    If(Slot, Block, Block),
    Kernel(Slot, AtomC, Block),
    Iota(AtomC),
    Copy(Slot),
    Alloc(SE),
    /// `loop p̄ = (ā) form do b`: the parameters (bound in the body's
    /// scope), their initial values (resolved outside), how it runs, the
    /// body.
    Loop(Vec<PatC>, Vec<AtomC>, LoopC, Block),
    /// `x with [idx, ...] = v`.
    Update(Slot, Vec<UpdC>, AtomC),
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
    };
    let params = p.params.iter().map(|q| r.bind_pat(q)).collect::<Vec<_>>();
    // Parameter types may name any parameter: resolve them after binding all.
    let params = params
        .into_iter()
        .zip(&p.params)
        .map(|(slot, q)| r.pat(slot, q))
        .collect();
    let body = r.block(&p.body);
    Code {
        params,
        body,
        slots: r.next as usize + 1,
    }
}

struct Resolver {
    scopes: Vec<HashMap<Name, Slot>>,
    next: Slot,
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
        if let Some(s) = self.scopes.last_mut() {
            s.insert(x.clone(), k);
        }
        k
    }

    fn bind_pat(&mut self, p: &ast::Pat) -> Slot {
        self.bind(&p.name.name)
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
            ast::Atom::Var(x) => AtomC::Slot(self.lookup(&x.name)),
        }
    }

    fn se(&mut self, e: &ast::SExp) -> SE {
        match e {
            ast::SExp::Atom(ast::Atom::Int(k, _)) => SE::Const(*k),
            ast::SExp::Atom(ast::Atom::Var(x)) => SE::Slot(self.lookup(&x.name)),
            ast::SExp::Bin(op, a, b, _) => SE::Bin(*op, Box::new(self.se(a)), Box::new(self.se(b))),
            ast::SExp::Un(op, a, _) => SE::Un(*op, Box::new(self.se(a))),
        }
    }

    fn ty(&mut self, t: &ast::Type) -> TyC {
        match t {
            ast::Type::Int(_) => TyC::Int,
            ast::Type::Mem(_) => TyC::Mem,
            ast::Type::Array(a, _) => TyC::Array {
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

    fn block(&mut self, b: &ast::Body) -> Block {
        self.scopes.push(HashMap::new());
        let first = self.next;
        let stms = b.stms.iter().map(|s| self.stm(s)).collect();
        let result = b.result.iter().map(|x| self.lookup(&x.name)).collect();
        self.scopes.pop();
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
            ExpKind::Alloc(e) => Op::Alloc(self.se(e)),
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
                Op::If(c, self.block(t), self.block(e))
            }
            ExpKind::Kernel(i, n, b) => {
                let n = self.atom(n);
                self.scopes.push(HashMap::new());
                let i = self.bind(&i.name);
                let b = self.block(b);
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
                let slots: Vec<Slot> = ps.iter().map(|p| self.bind_pat(p)).collect();
                let params = slots
                    .into_iter()
                    .zip(ps)
                    .map(|(k, p)| self.pat(k, p))
                    .collect();
                let form = match form {
                    ast::LoopForm::For(i, _) => LoopC::For(self.bind(&i.name), bound),
                    ast::LoopForm::While(c) => LoopC::While(self.lookup(&c.name)),
                };
                let b = self.block(b);
                self.scopes.pop();
                Op::Loop(params, init, form, b)
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
                Op::Update(x, is, self.atom(v))
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

/// A value in an interpreter's frame, as the resolved code reads it.
pub trait SlotValue {
    /// Whether the slot has no value yet.
    fn is_unset(&self) -> bool;
    /// The integer, if the value is one.
    fn as_int(&self) -> Option<i64>;
    /// A short description for messages.
    fn describe(&self) -> String;
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
            SE::Bin(op, a, b) => binop(*op, a.eval(frame)?, b.eval(frame)?),
            SE::Un(op, a) => Ok(unop(*op, a.eval(frame)?)),
        }
    }
}
