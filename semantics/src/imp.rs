//! IMP's big-step semantics (IFL 2022 paper, fig. 12), 0-based.
//!
//! The judgement `H; E ⊢ s → H'; E'` evaluates a statement with a heap of
//! blocks and a mutable environment. The rules, named as in the paper and in
//! every error and observer event:
//!
//! | statement              | rule                               |
//! |------------------------|------------------------------------|
//! | `var x : t` (a scalar) | E-IMP-DEC-INT (x ↦ 0 of type t)    |
//! | `var x : mem`          | E-IMP-DEC-MEM (x ↦ ⊥, unset)       |
//! | `x <- se`              | E-IMP-ASSIGN-INT, E-IMP-ASSIGN-MEM |
//! | `x <- alloc se t`      | E-IMP-ALLOC (a fresh zeroed block) |
//! | `x <- m[se]`           | E-IMP-READ                         |
//! | `m[se] <- se`          | E-IMP-WRITE                        |
//! | `if x then .. else ..` | E-IMP-TRUE (x ≠ 0), E-IMP-FALSE    |
//! | `skip`                 | E-IMP-SKIP                         |
//! | `kernel i < se do ..`  | E-IMP-KERNEL                       |
//! | `for i < se do ..`     | E-IMP-FOR                          |
//! | `while x do ..`        | E-IMP-WHILE                        |
//! | `x <- reduce ..`       | E-IMP-REDUCE                       |
//! | `scan .. into m[se]`   | E-IMP-SCAN                         |
//!
//! and E-IMP-PROG for a whole program: its inputs and its results.
//!
//! Choices the figure leaves open, fixed here (docs/language.md):
//!
//! - Kernel iterations are `i = 0 .. n-1`, run one after another in order;
//!   each starts from the environment as it was before the kernel plus
//!   `i`, and the kernel leaves the environment as it found it (the type
//!   checker lets a kernel body assign only its own variables, so nothing
//!   needs restoring). A negative bound is stuck. With race checking on,
//!   eq. 4 of the paper is checked for every kernel instance by
//!   [`crate::race::RaceDetector`], as for FUNMEM's E-MEM-KERNEL.
//! - `for i < se do s done` evaluates se once and runs s for i = 0 ..
//!   se-1 in order (none if se <= 0); `while x do s done` tests x before
//!   each iteration. Both are sequential: inside a kernel, a loop's
//!   accesses belong to the kernel iteration that runs it. Every iteration
//!   costs one unit of fuel besides its statements, and a run that spends
//!   its fuel inside a loop is reported at the innermost loop (E-IMP-FOR,
//!   E-IMP-WHILE: "the `while` loop did not finish"), so that a loop that
//!   never ends is named.
//! - `assert index se` / `assert slice se` (E-IMP-ASSERT) is stuck when se
//!   is 0, and reports the source rule it stands for (E-INDEX, E-SLICE)
//!   with the values of se's variables, so that a lowered program goes
//!   wrong by the same rule as its source.
//! - Scalars are words of their declared element type (the operators are
//!   [`crate::scalar`]'s). Blocks are bytes: `alloc se t` makes se * size(t)
//!   zero bytes; `x <- m[se]` reads x's type at byte se * size, `m[se] <-
//!   e` writes e's type there, little-endian, so arrays of different types
//!   may share a block. Reads and writes touching any byte outside their
//!   block, a block used before it is allocated, a negative allocation and
//!   integer division or remainder by zero are stuck. Every statement
//!   executed costs one unit of fuel; every block allocated (input blocks
//!   included) counts against the heap limit in 8-byte cells, rounded up.
//!   Races are overlaps of at least one byte.
//! - `x <- reduce op ne for i < n do s yield e done` is the left fold
//!   ne op e(0) op ... op e(n-1) of the iterations' elements, run in order;
//!   `scan` writes each prefix at its `into` place. Outside every kernel
//!   one is a parallel operation for the race detector (its iterations are
//!   a kernel's; a scan's writes race with its reads where they overlap);
//!   inside a kernel it is the iteration's sequential code (see
//!   docs/reductions.md).
//! - Inputs are given in parameter order; an array parameter's block takes
//!   no input: it is allocated just large enough for the input arrays that
//!   live in it and each is laid out by its LMAD. Results are read back by
//!   their `out` declarations, arrays element by element in row-major order.
//!
//! For speed the program is first compiled: every variable becomes a slot
//! in a flat frame (64-bit words for scalars, block numbers for `mem`s) and
//! scalar expressions become small trees over slots, with `i64` operations
//! in nodes of their own and other types' resolved once, so that evaluation never
//! looks a name up. The interpreter is generic over the [`Observer`] and
//! over whether races are checked, so that neither costs anything when off.

use crate::error::{ErrorKind, EvalError, Limits, Race};
use crate::machine;
use crate::observer::{NoObserver, Observer};
use crate::prog;
use crate::race::{describe, RaceDetector};
use crate::scalar::{binop, binop_t, unop_t, DivByZero};
use crate::value::{ArrayValue, Elems, Value};
use funmem_lang::ast::{Atom, BinOp, Ident, SExp, UnOp};
use funmem_lang::imp::{
    ArrDecl, Check, ImpOp, ImpType, Param, Program, Red, Result as ImpResult, Stmt as AstStmt,
    StmtKind,
};
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Span};
use rustc_hash::FxHashMap;
use std::fmt;

/// Evaluates an IMP program on its inputs; its results in `out` order.
///
/// `inputs` are in parameter order: a [`Value::Int`] for each `int`
/// parameter and a [`Value::Array`] of exactly the declared shape for each
/// array parameter. With `race_check`, every kernel is checked for races
/// (eq. 4) and a race is an error of kind [`ErrorKind::Race`].
pub fn run_imp<O: Observer>(
    p: &Program,
    inputs: &[Value],
    limits: Limits,
    race_check: bool,
    obs: &mut O,
) -> Result<Vec<Value>, EvalError> {
    let code = Compiler::default().program(p).map_err(|e| *e)?;
    let (result, _) = execute(
        p,
        &code,
        inputs,
        limits,
        race_check,
        RaceDetector::new(),
        obs,
    );
    match result.map_err(|e| *e) {
        Err(EvalError {
            kind: ErrorKind::Race(mut r),
            ..
        }) => {
            // Evaluation is deterministic: run again logging the racing
            // location, to report the first access's full iteration path.
            let watch = RaceDetector::watching(r.block, r.offset);
            let (_, det) = execute(p, &code, inputs, limits, true, watch, &mut NoObserver);
            det.complete(&mut r);
            let rule = code.race_rule(r.kernel);
            Err(*race_error_at(r, rule))
        }
        other => other,
    }
}

/// One evaluation; gives back the race detector, for its log.
fn execute<O: Observer>(
    p: &Program,
    code: &Code,
    inputs: &[Value],
    limits: Limits,
    race_check: bool,
    race: RaceDetector,
    obs: &mut O,
) -> (R<Vec<Value>>, RaceDetector) {
    let mut m = Machine {
        ints: vec![0; code.int_names.len()],
        mems: vec![UNSET; code.mem_names.len()],
        blocks: Vec::new(),
        fuel: limits.fuel,
        limits,
        heap_used: 0,
        race,
        depth: 0,
        code,
        obs,
    };
    let run = |m: &mut Machine<O>| -> R<Vec<Value>> {
        m.bind_inputs(inputs, p.span)?;
        if race_check {
            m.exec::<true>(&code.body)?;
        } else {
            m.exec::<false>(&code.body)?;
        }
        m.results()
    };
    let result = run(&mut m);
    (result, m.race)
}

const DEC_INT: &str = "E-IMP-DEC-INT";
const DEC_MEM: &str = "E-IMP-DEC-MEM";
const ASSIGN_INT: &str = "E-IMP-ASSIGN-INT";
const ASSIGN_MEM: &str = "E-IMP-ASSIGN-MEM";
const ALLOC: &str = "E-IMP-ALLOC";
const READ: &str = "E-IMP-READ";
const WRITE: &str = "E-IMP-WRITE";
const TRUE: &str = "E-IMP-TRUE";
const FALSE: &str = "E-IMP-FALSE";
const SKIP: &str = "E-IMP-SKIP";
const ASSERT: &str = "E-IMP-ASSERT";
const KERNEL: &str = "E-IMP-KERNEL";
const FOR: &str = "E-IMP-FOR";
const WHILE: &str = "E-IMP-WHILE";
const PROG: &str = "E-IMP-PROG";
const REDUCE: &str = "E-IMP-REDUCE";
const SCAN: &str = "E-IMP-SCAN";

/// A `mem` slot that holds no block (⊥).
const UNSET: usize = usize::MAX;

/// Errors travel boxed: a pointer-sized `Err` keeps the hot path lean.
type R<T> = Result<T, Box<EvalError>>;

fn stuck(rule: &'static str, span: Span, message: impl Into<String>) -> Box<EvalError> {
    Box::new(EvalError::stuck(rule, span, message))
}

// ---------------------------------------------------------------------------
// The compiled form.

/// A scalar expression over frame slots, on words
/// ([`funmem_lang::prim::Const::to_bits`]). The `i64` nodes come first and
/// are the common case; other operand types go through [`binop_t`].
#[derive(Clone, Debug)]
enum Expr {
    Const(u64),
    Var(usize),
    /// `x op k` on `i64`s: the common shapes get their own nodes.
    VarConst(BinOp, usize, i64),
    /// `k op x` on `i64`s.
    ConstVar(BinOp, i64, usize),
    /// `x op y` on `i64`s.
    VarVar(BinOp, usize, usize),
    /// `l op r` on `i64`s.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `l op r` with operands of another type.
    TBin(BinOp, Prim, Box<Expr>, Box<Expr>),
    /// `op e`, with e's type.
    Un(UnOp, Prim, Box<Expr>),
}

/// Why an expression has no value: `lhs op 0` with `op` one of `/ %`.
#[derive(Clone, Copy, Debug)]
struct DivZero {
    op: BinOp,
    lhs: Const,
}

#[inline(always)]
fn bin(op: BinOp, a: i64, b: i64) -> Result<u64, DivZero> {
    match binop(op, a, b) {
        Ok(v) => Ok(v as u64),
        Err(DivByZero) => Err(DivZero {
            op,
            lhs: Const::I64(a),
        }),
    }
}

#[inline]
fn bin_t(op: BinOp, t: Prim, a: u64, b: u64) -> Result<u64, DivZero> {
    binop_t(op, t, a, b).map_err(|DivByZero| DivZero {
        op,
        lhs: Const::from_bits(t, a),
    })
}

/// The type of `l op r` with operands of type `t`.
fn bin_type(op: BinOp, t: Prim) -> Prim {
    match op {
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => Prim::Bool,
        _ => t,
    }
}

/// The type of `op e` with e of type `t`.
fn un_type(op: UnOp, t: Prim) -> Prim {
    match op {
        UnOp::Conv(to) => to,
        _ => t,
    }
}

impl Expr {
    #[inline]
    fn eval(&self, w: &[u64]) -> Result<u64, DivZero> {
        match *self {
            Expr::Const(k) => Ok(k),
            Expr::Var(x) => Ok(w[x]),
            Expr::VarConst(op, x, k) => bin(op, w[x] as i64, k),
            Expr::ConstVar(op, k, x) => bin(op, k, w[x] as i64),
            Expr::VarVar(op, x, y) => bin(op, w[x] as i64, w[y] as i64),
            Expr::Bin(op, ref l, ref r) => {
                let a = l.eval(w)?;
                let b = r.eval(w)?;
                bin(op, a as i64, b as i64)
            }
            Expr::TBin(op, t, ref l, ref r) => {
                let a = l.eval(w)?;
                let b = r.eval(w)?;
                bin_t(op, t, a, b)
            }
            Expr::Un(op, t, ref e) => Ok(unop_t(op, t, e.eval(w)?)),
        }
    }
}

/// A compiled LMAD: offset and (elements, stride) per dimension.
#[derive(Debug)]
struct LmadCode {
    offset: Expr,
    dims: Vec<(Expr, Expr)>,
}

#[derive(Debug)]
enum Kind {
    Skip,
    DecInt(usize),
    DecMem(usize),
    AssignInt(usize, Expr),
    AssignMem(usize, usize),
    /// `x <- alloc se t`: the size of t in bytes.
    Alloc(usize, Expr, u64),
    /// `x <- m[i]`: x's type.
    Read(usize, usize, Expr, Prim),
    /// `m[i] <- v`: v's type.
    Write(usize, Expr, Expr, Prim),
    If(usize, Vec<Stmt>, Vec<Stmt>),
    /// Index slot, bound, body.
    Kernel(usize, Expr, Vec<Stmt>),
    /// Index slot, bound (evaluated once), body.
    For(usize, Expr, Vec<Stmt>),
    /// Condition slot, body.
    While(usize, Vec<Stmt>),
    /// `assert c se`.
    Assert(Box<AssertCode>),
    /// `reduce` or `scan`.
    Red(Box<RedCode>),
}

/// A compiled `reduce` (with a target slot) or `scan` (with an output).
#[derive(Debug)]
struct RedCode {
    op: OpCode,
    /// The element type.
    t: Prim,
    ne: Expr,
    index: usize,
    count: Expr,
    body: Vec<Stmt>,
    elem: Expr,
    /// Where the result goes.
    to: RedTo,
}

#[derive(Debug)]
enum RedTo {
    /// `x <- reduce ...`: x's slot.
    Slot(usize),
    /// `scan ... into m[j]`: m's slot and j.
    Block(usize, Expr),
}

#[derive(Debug)]
enum OpCode {
    Bin(BinOp),
    /// The operand slots, the body, the result.
    Lambda(usize, usize, Vec<Stmt>, Expr),
}

/// The message of a failed `assert`: "slice out of bounds: `0 <= a && a
/// <= n - b` does not hold (a = 4, b = 2, n = 5)". The OpenCL driver
/// reports the same words.
pub fn assert_message<'a>(
    check: Check,
    cond: &str,
    vars: impl Iterator<Item = (&'a str, i64)>,
) -> String {
    let vals: Vec<String> = vars.map(|(n, v)| format!("{n} = {v}")).collect();
    let with = if vals.is_empty() {
        String::new()
    } else {
        format!(" ({})", vals.join(", "))
    };
    format!(
        "{} out of bounds: `{cond}` does not hold{with}",
        check.keyword()
    )
}

/// A compiled `assert`: its condition, and what a failure reports.
#[derive(Debug)]
struct AssertCode {
    check: Check,
    cond: Expr,
    /// The condition as written.
    text: String,
    /// Its variables and their slots.
    vars: Vec<(Name, usize)>,
}

#[derive(Debug)]
struct Stmt {
    kind: Kind,
    span: Span,
}

/// An array parameter or result.
#[derive(Debug)]
struct ArrCode {
    name: Name,
    shape: Vec<Expr>,
    elem: Prim,
    /// Its block's `mem` slot.
    block: usize,
    lmad: LmadCode,
    span: Span,
}

#[derive(Debug)]
enum ParamCode {
    Scalar(Name, usize, Prim, Span),
    Array(ArrCode),
}

#[derive(Debug)]
enum ResultCode {
    Scalar(usize),
    Array(ArrCode),
}

/// A compiled program.
#[derive(Debug)]
struct Code {
    params: Vec<ParamCode>,
    body: Vec<Stmt>,
    results: Vec<ResultCode>,
    /// The name of each scalar slot.
    int_names: Vec<Name>,
    /// The type of each scalar slot.
    int_types: Vec<Prim>,
    /// The name of each `mem` slot.
    mem_names: Vec<Name>,
    /// The `scan` statements: a race reported at one of them is E-IMP-SCAN's.
    scans: Vec<Span>,
    /// The `reduce` statements.
    reduces: Vec<Span>,
}

impl Code {
    /// The rule of a race found in the parallel operation at `span`.
    fn race_rule(&self, span: Span) -> &'static str {
        if self.scans.contains(&span) {
            SCAN
        } else if self.reduces.contains(&span) {
            REDUCE
        } else {
            KERNEL
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Var {
    Int(usize),
    Mem(usize),
}

/// Resolves names to slots. Every declaration gets a slot of its own
/// (sibling scopes do not share), so a slot's name is fixed.
#[derive(Default)]
struct Compiler {
    env: FxHashMap<Name, Var>,
    /// What each open scope shadowed, to restore on closing it.
    undo: Vec<(Name, Option<Var>)>,
    int_names: Vec<Name>,
    int_types: Vec<Prim>,
    mem_names: Vec<Name>,
    scans: Vec<Span>,
    reduces: Vec<Span>,
}

impl Compiler {
    fn declare(&mut self, x: &Name, v: Var) {
        let old = self.env.insert(x.clone(), v);
        self.undo.push((x.clone(), old));
    }

    /// A new scalar slot of type `t` for `x`, in scope until its scope
    /// closes.
    fn declare_int(&mut self, x: &Name, t: Prim) -> usize {
        self.int_names.push(x.clone());
        self.int_types.push(t);
        let k = self.int_names.len() - 1;
        self.declare(x, Var::Int(k));
        k
    }

    /// A new `mem` slot for `x`.
    fn declare_mem(&mut self, x: &Name) -> usize {
        self.mem_names.push(x.clone());
        let k = self.mem_names.len() - 1;
        self.declare(x, Var::Mem(k));
        k
    }

    fn close(&mut self, mark: usize) {
        while self.undo.len() > mark {
            if let Some((x, old)) = self.undo.pop() {
                match old {
                    Some(v) => self.env.insert(x, v),
                    None => self.env.remove(&x),
                };
            }
        }
    }

    fn int(&self, x: &Ident, rule: &'static str) -> R<usize> {
        match self.env.get(&x.name) {
            Some(Var::Int(s)) => Ok(*s),
            _ => Err(stuck(
                rule,
                x.span,
                format!(
                    "`{}` is not a scalar variable in scope (the program is not well typed)",
                    x.name
                ),
            )),
        }
    }

    fn mem(&self, x: &Ident, rule: &'static str) -> R<usize> {
        match self.env.get(&x.name) {
            Some(Var::Mem(s)) => Ok(*s),
            _ => Err(stuck(
                rule,
                x.span,
                format!(
                    "`{}` is not a `mem` variable in scope (the program is not well typed)",
                    x.name
                ),
            )),
        }
    }

    fn atom(&self, a: &Atom, rule: &'static str) -> R<(Expr, Prim)> {
        match a {
            Atom::Int(k, _) => Ok((Expr::Const(*k as u64), Prim::I64)),
            Atom::Const(c, _) => Ok((Expr::Const(c.to_bits()), c.prim())),
            Atom::Var(x) => {
                let s = self.int(x, rule)?;
                Ok((Expr::Var(s), self.int_types[s]))
            }
        }
    }

    /// An `i64` expression (sizes, indices, bounds).
    fn index(&self, e: &SExp, rule: &'static str) -> R<Expr> {
        let (x, t) = self.sexp(e, rule)?;
        if t != Prim::I64 {
            return Err(stuck(
                rule,
                e.span(),
                format!("`{e}` is {t}, not an int (the program is not well typed)"),
            ));
        }
        Ok(x)
    }

    fn sexp(&self, e: &SExp, rule: &'static str) -> R<(Expr, Prim)> {
        Ok(match e {
            SExp::Atom(a) => self.atom(a, rule)?,
            SExp::Un(op, e, _) => {
                let (x, t) = self.sexp(e, rule)?;
                let to = un_type(*op, t);
                match x {
                    Expr::Const(k) => (Expr::Const(unop_t(*op, t, k)), to),
                    x => (Expr::Un(*op, t, Box::new(x)), to),
                }
            }
            SExp::Bin(op, l, r, _) => {
                let op = *op;
                let (a, t) = self.sexp(l, rule)?;
                let (b, u) = self.sexp(r, rule)?;
                if t != u {
                    return Err(stuck(
                        rule,
                        e.span(),
                        format!(
                            "the operands of `{e}` are {t} and {u} (the program is not well typed)"
                        ),
                    ));
                }
                let x = match (a, b) {
                    // Folded unless it divides by zero: that is stuck when,
                    // and only if, the statement runs.
                    (Expr::Const(a), Expr::Const(b)) => match binop_t(op, t, a, b) {
                        Ok(k) => Expr::Const(k),
                        Err(DivByZero) => {
                            Expr::TBin(op, t, Box::new(Expr::Const(a)), Box::new(Expr::Const(b)))
                        }
                    },
                    (a, b) if t != Prim::I64 => Expr::TBin(op, t, Box::new(a), Box::new(b)),
                    (Expr::Var(x), Expr::Const(k)) => Expr::VarConst(op, x, k as i64),
                    (Expr::Const(k), Expr::Var(x)) => Expr::ConstVar(op, k as i64, x),
                    (Expr::Var(x), Expr::Var(y)) => Expr::VarVar(op, x, y),
                    (a, b) => Expr::Bin(op, Box::new(a), Box::new(b)),
                };
                (x, bin_type(op, t))
            }
        })
    }

    fn stmts(&mut self, ss: &[AstStmt]) -> R<Vec<Stmt>> {
        let mark = self.undo.len();
        let out = ss.iter().map(|s| self.stmt(s)).collect();
        self.close(mark);
        out
    }

    /// Statements whose declarations stay in scope after them (for a
    /// `yield` to see): the caller closes the scope.
    fn open_stmts(&mut self, ss: &[AstStmt]) -> R<Vec<Stmt>> {
        ss.iter().map(|s| self.stmt(s)).collect()
    }

    /// A `reduce` (to `Some(x)`) or a `scan` (into `m[j]`).
    fn red(
        &mut self,
        r: &Red,
        rule: &'static str,
        x: Option<&Ident>,
        m: Option<(&Ident, &SExp)>,
    ) -> R<RedCode> {
        let (ne, t) = self.sexp(&r.ne, rule)?;
        let count = self.index(&r.count, rule)?;
        let op = match &r.op {
            ImpOp::Bin(b) => OpCode::Bin(*b),
            ImpOp::Lambda(a, b, ss, e) => {
                let mark = self.undo.len();
                let sa = self.declare_int(&a.name, t);
                let sb = self.declare_int(&b.name, t);
                let body = self.open_stmts(ss);
                let res = self.sexp(e, rule);
                self.close(mark);
                OpCode::Lambda(sa, sb, body?, res?.0)
            }
        };
        let to_slot = match x {
            Some(x) => Some(self.int(x, rule)?),
            None => None,
        };
        let mark = self.undo.len();
        let index = self.declare_int(&r.index.name, Prim::I64);
        let body = self.open_stmts(&r.body);
        let elem = self.sexp(&r.elem, rule);
        let to = match (to_slot, m) {
            (Some(s), _) => Ok(RedTo::Slot(s)),
            (None, Some((m, j))) => self
                .mem(m, rule)
                .and_then(|m| Ok(RedTo::Block(m, self.index(j, rule)?))),
            (None, None) => Err(stuck(rule, r.count.span(), "a reduction without a target")),
        };
        self.close(mark);
        Ok(RedCode {
            op,
            t,
            ne,
            index,
            count,
            body: body?,
            elem: elem?.0,
            to: to?,
        })
    }

    fn stmt(&mut self, s: &AstStmt) -> R<Stmt> {
        let kind = match &s.kind {
            StmtKind::Skip => Kind::Skip,
            StmtKind::Assert(check, e) => {
                let vars = e
                    .distinct_vars()
                    .into_iter()
                    .map(|x| Ok((x.name.clone(), self.int(x, ASSERT)?)))
                    .collect::<R<Vec<(Name, usize)>>>()?;
                Kind::Assert(Box::new(AssertCode {
                    check: *check,
                    cond: self.sexp(e, ASSERT)?.0,
                    text: funmem_lang::print::sexp_string(e),
                    vars,
                }))
            }
            StmtKind::Var(x, ImpType::Prim(t)) => Kind::DecInt(self.declare_int(&x.name, *t)),
            StmtKind::Reduce(x, r) => {
                self.reduces.push(s.span);
                Kind::Red(Box::new(self.red(r, REDUCE, Some(x), None)?))
            }
            StmtKind::Scan(r, m, j) => {
                self.scans.push(s.span);
                Kind::Red(Box::new(self.red(r, SCAN, None, Some((m, j)))?))
            }
            StmtKind::Var(x, ImpType::Mem) => Kind::DecMem(self.declare_mem(&x.name)),
            StmtKind::Assign(x, e) => match self.env.get(&x.name) {
                Some(Var::Mem(k)) => {
                    let k = *k;
                    match e {
                        SExp::Atom(Atom::Var(y)) => Kind::AssignMem(k, self.mem(y, ASSIGN_MEM)?),
                        _ => {
                            return Err(stuck(
                                ASSIGN_MEM,
                                s.span,
                                format!(
                                    "`{}` is a `mem`: only a `mem` variable can be assigned to it",
                                    x.name
                                ),
                            ))
                        }
                    }
                }
                _ => Kind::AssignInt(self.int(x, ASSIGN_INT)?, self.sexp(e, ASSIGN_INT)?.0),
            },
            StmtKind::Alloc(x, e, t) => {
                Kind::Alloc(self.mem(x, ALLOC)?, self.index(e, ALLOC)?, t.size())
            }
            StmtKind::Read(x, m, i) => {
                let s = self.int(x, READ)?;
                Kind::Read(
                    s,
                    self.mem(m, READ)?,
                    self.index(i, READ)?,
                    self.int_types[s],
                )
            }
            StmtKind::Write(m, i, v) => {
                let (v, t) = self.sexp(v, WRITE)?;
                Kind::Write(self.mem(m, WRITE)?, self.index(i, WRITE)?, v, t)
            }
            StmtKind::If(c, t, e) => Kind::If(self.int(c, TRUE)?, self.stmts(t)?, self.stmts(e)?),
            StmtKind::Kernel(i, n, body) => {
                let n = self.index(n, KERNEL)?;
                let mark = self.undo.len();
                let k = self.declare_int(&i.name, Prim::I64);
                let body = self.stmts(body);
                self.close(mark);
                Kind::Kernel(k, n, body?)
            }
            StmtKind::For(i, n, body) => {
                let n = self.index(n, FOR)?;
                let mark = self.undo.len();
                let k = self.declare_int(&i.name, Prim::I64);
                let body = self.stmts(body);
                self.close(mark);
                Kind::For(k, n, body?)
            }
            StmtKind::While(c, body) => Kind::While(self.int(c, WHILE)?, self.stmts(body)?),
        };
        Ok(Stmt { kind, span: s.span })
    }

    fn lmad(&self, a: &ArrDecl) -> R<LmadCode> {
        let l = a.lmad.to_lmad();
        Ok(LmadCode {
            offset: self.index(&l.offset, PROG)?,
            dims: l
                .dims
                .iter()
                .map(|d| Ok((self.index(&d.elems, PROG)?, self.index(&d.stride, PROG)?)))
                .collect::<R<_>>()?,
        })
    }

    fn arr(&self, a: &ArrDecl, block: usize) -> R<ArrCode> {
        Ok(ArrCode {
            name: a.name.name.clone(),
            shape: a
                .shape
                .iter()
                .map(|s| Ok(self.atom(s, PROG)?.0))
                .collect::<R<_>>()?,
            elem: a.elem,
            block,
            lmad: self.lmad(a)?,
            span: a.span,
        })
    }

    fn program(mut self, p: &Program) -> R<Code> {
        let mut params = Vec::with_capacity(p.params.len());
        for q in &p.params {
            params.push(match q {
                Param::Scalar(x, t, span) => {
                    ParamCode::Scalar(x.name.clone(), self.declare_int(&x.name, *t), *t, *span)
                }
                Param::Array(a) => {
                    // Arrays given as inputs may share a block.
                    let block = match self.env.get(&a.block.name) {
                        Some(Var::Mem(k)) => *k,
                        _ => self.declare_mem(&a.block.name),
                    };
                    ParamCode::Array(self.arr(a, block)?)
                }
            });
        }
        let mark = self.undo.len();
        let body = p.body.iter().map(|s| self.stmt(s)).collect::<R<Vec<_>>>()?;
        let results = p
            .results
            .iter()
            .map(|r| match r {
                ImpResult::Scalar(x) => Ok(ResultCode::Scalar(self.int(x, PROG)?)),
                ImpResult::Array(a) => {
                    Ok(ResultCode::Array(self.arr(a, self.mem(&a.block, PROG)?)?))
                }
            })
            .collect::<R<Vec<_>>>()?;
        self.close(mark);
        Ok(Code {
            params,
            body,
            results,
            int_names: self.int_names,
            int_types: self.int_types,
            mem_names: self.mem_names,
            scans: self.scans,
            reduces: self.reduces,
        })
    }
}

// ---------------------------------------------------------------------------
// The machine.

/// A `mem` value as observers see it.
struct BlockLabel(usize);

impl fmt::Display for BlockLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == UNSET {
            f.write_str("⊥")
        } else {
            write!(f, "block {}", self.0)
        }
    }
}

/// A scalar slot's value as observers see it.
struct Word(Prim, u64);

impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Prim::I64 => write!(f, "{}", self.1 as i64),
            t => write!(f, "{}", Const::from_bits(t, self.1)),
        }
    }
}

/// The word of type `t` in the `t.size()` bytes at the start of `raw`
/// (little-endian, the rest of `raw` zero).
#[inline(always)]
fn word_of(t: Prim, raw: u64) -> u64 {
    match t {
        Prim::I64 | Prim::F64 => raw,
        Prim::I32 => raw as u32 as i32 as i64 as u64,
        Prim::F32 => raw & 0xffff_ffff,
        Prim::Bool => (raw & 0xff != 0) as u64,
    }
}

/// The bytes `[at, at + size)` of `block`, where `at` is element `i`'s of a
/// type of `size` bytes; `None` when any of them lies outside.
#[inline(always)]
fn bytes_at(i: i64, size: usize, len: usize) -> Option<std::ops::Range<usize>> {
    let at = usize::try_from(i).ok()?.checked_mul(size)?;
    let end = at.checked_add(size)?;
    (end <= len).then_some(at..end)
}

/// Reads the element of type `t` at element index `i` of `block`.
#[inline(always)]
fn load(block: &[u8], i: i64, t: Prim) -> Option<u64> {
    let size = t.size() as usize;
    let r = bytes_at(i, size, block.len())?;
    let mut buf = [0u8; 8];
    buf[..size].copy_from_slice(&block[r]);
    Some(word_of(t, u64::from_le_bytes(buf)))
}

/// Writes the word `w` of type `t` at element index `i` of `block`; false
/// when out of bounds.
#[inline(always)]
fn store(block: &mut [u8], i: i64, t: Prim, w: u64) -> bool {
    let size = t.size() as usize;
    match bytes_at(i, size, block.len()) {
        Some(r) => {
            block[r].copy_from_slice(&w.to_le_bytes()[..size]);
            true
        }
        None => false,
    }
}

struct Machine<'a, O> {
    /// The scalar slots' words.
    ints: Vec<u64>,
    mems: Vec<usize>,
    /// The blocks' bytes.
    blocks: Vec<Vec<u8>>,
    fuel: u64,
    limits: Limits,
    heap_used: u64,
    race: RaceDetector,
    /// Kernels and parallel reductions around the current statement.
    depth: usize,
    code: &'a Code,
    obs: &'a mut O,
}

#[cold]
#[inline(never)]
fn div_error(rule: &'static str, span: Span, d: DivZero) -> Box<EvalError> {
    let lhs = match d.lhs {
        Const::I64(k) => k.to_string(),
        c => c.to_string(),
    };
    stuck(
        rule,
        span,
        format!("division by zero: `{lhs} {} 0`", d.op.symbol()),
    )
}

#[cold]
#[inline(never)]
fn race_error(r: Box<Race>) -> Box<EvalError> {
    race_error_at(r, KERNEL)
}

/// A race in the parallel operation (kernel, `reduce`, `scan`) of `rule`.
fn race_error_at(r: Box<Race>, rule: &'static str) -> Box<EvalError> {
    let span = r.kernel;
    let message = match rule {
        SCAN => format!(
            "the scan writes where it reads (its iterations run in parallel; its result number i counts as iteration n + i): {}",
            describe(&r)
        ),
        REDUCE => format!("in the reduce (its iterations run in parallel): {}", describe(&r)),
        _ => describe(&r),
    };
    Box::new(EvalError {
        kind: ErrorKind::Race(r),
        rule,
        span,
        message,
    })
}

impl<O: Observer> Machine<'_, O> {
    /// Reports the index `i` bound on entry to a body (observers only).
    #[inline(always)]
    fn enter_int(&mut self, x: usize, i: i64) {
        if let Some(n) = self.code.int_names.get(x) {
            self.obs.enter(n, &i);
        }
    }

    /// One unit of fuel for a statement evaluated by `rule`.
    #[inline(always)]
    fn tick(&mut self, rule: &'static str, span: Span) -> R<()> {
        if self.fuel == 0 {
            return Err(self.out_of_fuel(rule, span));
        }
        self.fuel -= 1;
        self.obs.rule(rule, span);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn out_of_fuel(&self, rule: &'static str, span: Span) -> Box<EvalError> {
        Box::new(crate::error::out_of_fuel(self.limits.fuel, rule, span))
    }

    #[inline(always)]
    fn eval(&self, e: &Expr, rule: &'static str, span: Span) -> R<u64> {
        e.eval(&self.ints).map_err(|d| div_error(rule, span, d))
    }

    /// An `i64` expression's value.
    #[inline(always)]
    fn eval_int(&self, e: &Expr, rule: &'static str, span: Span) -> R<i64> {
        self.eval(e, rule, span).map(|w| w as i64)
    }

    /// The block in `mem` slot `m`.
    #[inline(always)]
    fn block_of(&self, m: usize, rule: &'static str, span: Span) -> R<usize> {
        let b = self.mems[m];
        if b == UNSET {
            return Err(self.unset(m, rule, span));
        }
        Ok(b)
    }

    #[cold]
    #[inline(never)]
    fn unset(&self, m: usize, rule: &'static str, span: Span) -> Box<EvalError> {
        let name = self.code.mem_names.get(m).map_or("?", |n| n.as_str());
        stuck(
            rule,
            span,
            format!("block `{name}` is used before it is allocated"),
        )
    }

    /// E-IMP-ASSERT: the failure of an `assert`, under its source rule.
    #[cold]
    #[inline(never)]
    fn assert_failed(&self, a: &AssertCode, span: Span) -> Box<EvalError> {
        stuck(
            a.check.rule(),
            span,
            assert_message(
                a.check,
                &a.text,
                a.vars
                    .iter()
                    .map(|(n, k)| (n.as_str(), self.ints[*k] as i64)),
            ),
        )
    }

    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn out_of_bounds(
        &self,
        what: &str,
        m: usize,
        b: usize,
        off: i64,
        t: Prim,
        rule: &'static str,
        span: Span,
    ) -> Box<EvalError> {
        let name = self.code.mem_names.get(m).map_or("?", |n| n.as_str());
        let size = self.blocks.get(b).map_or(0, Vec::len);
        let bytes = match off.checked_mul(t.size() as i64) {
            Some(at) => format!("bytes {at}..{}", at.saturating_add(t.size() as i64)),
            None => "bytes beyond any block".to_string(),
        };
        stuck(
            rule,
            span,
            format!(
                "{what} out of bounds: offset {off} of type {t} ({bytes}) of block {b} (`{name}`), which has size {size} bytes"
            ),
        )
    }

    /// A fresh zero-filled block of `bytes` bytes, counted against the heap
    /// limit in 8-byte cells.
    fn allocate(&mut self, bytes: u64, rule: &'static str, span: Span) -> R<usize> {
        let cells = machine::cells_of_bytes(bytes);
        self.heap_used = self.limits.charge(self.heap_used, cells, rule, span)?;
        let label = self.blocks.len();
        self.blocks.push(machine::zeroed_bytes(bytes, rule, span)?);
        self.obs.alloc(label, cells, bytes);
        Ok(label)
    }

    /// Records an access of `t` at element `i` of block `b` (in bounds)
    /// with the race detector: the bytes it touches.
    #[inline(always)]
    fn race_access(&mut self, b: usize, i: i64, t: Prim, write: bool) -> R<()> {
        let size = t.size() as u8;
        let at = i * i64::from(size);
        if write {
            self.race.write_bytes(b, at, size).map_err(race_error)
        } else {
            self.race.read_bytes(b, at, size).map_err(race_error)
        }
    }

    #[inline(always)]
    fn read<const RACE: bool>(&mut self, x: usize, m: usize, i: i64, t: Prim, span: Span) -> R<()> {
        let b = self.block_of(m, READ, span)?;
        let Some(v) = load(&self.blocks[b], i, t) else {
            return Err(self.out_of_bounds("read", m, b, i, t, READ, span));
        };
        self.obs.read(b, i, t);
        if RACE {
            self.race_access(b, i, t, false)?;
        }
        self.ints[x] = v;
        if let Some(n) = self.code.int_names.get(x) {
            self.obs.bind(n, &Word(t, v));
        }
        Ok(())
    }

    #[inline(always)]
    fn write<const RACE: bool>(
        &mut self,
        m: usize,
        i: i64,
        t: Prim,
        v: u64,
        rule: &'static str,
        span: Span,
    ) -> R<()> {
        let b = self.block_of(m, rule, span)?;
        if !store(&mut self.blocks[b], i, t, v) {
            return Err(self.out_of_bounds("write", m, b, i, t, rule, span));
        }
        self.obs.write(b, i, t, v);
        if RACE {
            self.race_access(b, i, t, true)?;
        }
        Ok(())
    }

    fn exec<const RACE: bool>(&mut self, ss: &[Stmt]) -> R<()> {
        for s in ss {
            self.exec_one::<RACE>(s)?;
            self.obs.done(s.span);
        }
        Ok(())
    }

    /// One statement of [`Machine::exec`].
    #[inline(always)]
    fn exec_one<const RACE: bool>(&mut self, s: &Stmt) -> R<()> {
        {
            let span = s.span;
            match s.kind {
                Kind::Skip => self.tick(SKIP, span)?,
                Kind::Assert(ref a) => {
                    self.tick(ASSERT, span)?;
                    if self.eval(&a.cond, ASSERT, span)? == 0 {
                        return Err(self.assert_failed(a, span));
                    }
                }
                Kind::DecInt(x) => {
                    self.tick(DEC_INT, span)?;
                    self.ints[x] = 0;
                }
                Kind::DecMem(x) => {
                    self.tick(DEC_MEM, span)?;
                    self.mems[x] = UNSET;
                }
                Kind::AssignInt(x, ref e) => {
                    self.tick(ASSIGN_INT, span)?;
                    let v = self.eval(e, ASSIGN_INT, span)?;
                    self.ints[x] = v;
                    if let (Some(n), Some(&t)) =
                        (self.code.int_names.get(x), self.code.int_types.get(x))
                    {
                        self.obs.bind(n, &Word(t, v));
                    }
                }
                Kind::AssignMem(x, y) => {
                    self.tick(ASSIGN_MEM, span)?;
                    let b = self.mems[y];
                    self.mems[x] = b;
                    if let Some(n) = self.code.mem_names.get(x) {
                        self.obs.bind(n, &BlockLabel(b));
                    }
                }
                Kind::Alloc(x, ref e, size) => {
                    self.tick(ALLOC, span)?;
                    let n = self.eval_int(e, ALLOC, span)?;
                    let Some(bytes) = u64::try_from(n).ok().and_then(|n| n.checked_mul(size))
                    else {
                        return Err(self.bad_alloc(n, size, span));
                    };
                    let b = self.allocate(bytes, ALLOC, span)?;
                    self.mems[x] = b;
                    if let Some(n) = self.code.mem_names.get(x) {
                        self.obs.bind(n, &BlockLabel(b));
                    }
                }
                Kind::Read(x, m, ref i, t) => {
                    self.tick(READ, span)?;
                    let i = self.eval_int(i, READ, span)?;
                    self.read::<RACE>(x, m, i, t, span)?;
                }
                Kind::Write(m, ref i, ref e, t) => {
                    self.tick(WRITE, span)?;
                    self.block_of(m, WRITE, span)?;
                    let i = self.eval_int(i, WRITE, span)?;
                    let v = self.eval(e, WRITE, span)?;
                    self.write::<RACE>(m, i, t, v, WRITE, span)?;
                }
                Kind::If(c, ref t, ref e) => {
                    if self.ints[c] != 0 {
                        self.tick(TRUE, span)?;
                        self.exec::<RACE>(t)?;
                    } else {
                        self.tick(FALSE, span)?;
                        self.exec::<RACE>(e)?;
                    }
                }
                Kind::Kernel(x, ref n, ref body) => {
                    self.tick(KERNEL, span)?;
                    let n = self.eval_int(n, KERNEL, span)?;
                    if n < 0 {
                        return Err(stuck(KERNEL, span, format!("negative kernel bound {n}")));
                    }
                    // A body always costs fuel, so the loop is bounded; an
                    // empty one (never parsed) does nothing.
                    if n == 0 || body.is_empty() {
                        return Ok(());
                    }
                    if RACE {
                        self.race.enter_kernel(span);
                    }
                    self.depth += 1;
                    for i in 0..n {
                        self.ints[x] = i as u64;
                        self.obs.iteration_start(span, i);
                        self.enter_int(x, i);
                        if RACE {
                            self.race.begin_iteration(i);
                        }
                        self.exec::<RACE>(body)?;
                        self.obs.iteration_end(span, i);
                    }
                    self.depth -= 1;
                    if RACE {
                        self.race.exit_kernel();
                    }
                }
                Kind::For(x, ref n, ref body) => {
                    self.tick(FOR, span)?;
                    let n = self.eval_int(n, FOR, span)?;
                    for i in 0..n {
                        self.ints[x] = i as u64;
                        self.iteration::<RACE>(FOR, "for", span, i, Some(x), body)?;
                    }
                }
                Kind::While(c, ref body) => {
                    self.tick(WHILE, span)?;
                    let mut i = 0i64;
                    while self.ints[c] != 0 {
                        self.iteration::<RACE>(WHILE, "while", span, i, None, body)?;
                        i = i.wrapping_add(1);
                    }
                }
                Kind::Red(ref r) => self.reduce::<RACE>(r, span)?,
            }
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn bad_alloc(&self, n: i64, size: u64, span: Span) -> Box<EvalError> {
        if n < 0 {
            stuck(ALLOC, span, format!("negative allocation size {n}"))
        } else {
            let cells = (n as u64).saturating_mul(size) / 8;
            Box::new(self.limits.over_heap(ALLOC, span, cells, self.heap_used))
        }
    }

    /// E-IMP-REDUCE / E-IMP-SCAN: the left fold of the iterations'
    /// elements, in order. Outside every kernel the statement is one
    /// parallel operation for the race detector (its iterations are a
    /// kernel's, and a scan's result i is written by "iteration" n + i, so
    /// that it races with every other iteration's reads there); inside a
    /// kernel it is sequential code of the enclosing iteration.
    #[inline(never)]
    fn reduce<const RACE: bool>(&mut self, r: &RedCode, span: Span) -> R<()> {
        let (rule, form) = match r.to {
            RedTo::Slot(_) => (REDUCE, "reduce"),
            RedTo::Block(..) => (SCAN, "scan"),
        };
        self.tick(rule, span)?;
        let n = self.eval_int(&r.count, rule, span)?;
        if n < 0 {
            return Err(stuck(rule, span, format!("negative {form} bound {n}")));
        }
        let mut acc = self.eval(&r.ne, rule, span)?;
        let parallel = RACE && self.depth == 0 && n > 0;
        if parallel {
            self.race.enter_kernel(span);
        }
        self.depth += 1;
        for i in 0..n {
            self.ints[r.index] = i as u64;
            if parallel {
                self.race.begin_iteration(i);
            }
            self.iteration::<RACE>(rule, form, span, i, Some(r.index), &r.body)?;
            let e = self.eval(&r.elem, rule, span)?;
            acc = match r.op {
                OpCode::Bin(op) => bin_t(op, r.t, acc, e).map_err(|d| div_error(rule, span, d))?,
                OpCode::Lambda(a, b, ref body, ref res) => {
                    self.ints[a] = acc;
                    self.ints[b] = e;
                    self.exec::<RACE>(body)?;
                    self.eval(res, rule, span)?
                }
            };
            if let RedTo::Block(m, ref j) = r.to {
                let at = self.eval_int(j, rule, span)?;
                if parallel {
                    self.race.begin_iteration(n.saturating_add(i));
                }
                self.write::<RACE>(m, at, r.t, acc, rule, span)?;
            }
        }
        self.depth -= 1;
        if parallel {
            self.race.exit_kernel();
        }
        if let RedTo::Slot(x) = r.to {
            self.ints[x] = acc;
            if let Some(name) = self.code.int_names.get(x) {
                self.obs.bind(name, &Word(r.t, acc));
            }
        }
        Ok(())
    }

    /// One iteration of a sequential loop: a unit of fuel, then the body.
    /// Running out of fuel inside it is the innermost loop's error, under
    /// its rule, so that a loop that never ends is named. Observers hear of
    /// the iteration before its index (slot `index`, a `for`'s) is bound,
    /// as for kernels. Not inlined, so that `exec`, the hot loop of every
    /// program, stays as small as it was before loops.
    #[inline(never)]
    fn iteration<const RACE: bool>(
        &mut self,
        rule: &'static str,
        form: &'static str,
        span: Span,
        i: i64,
        index: Option<usize>,
        body: &[Stmt],
    ) -> R<()> {
        if self.fuel == 0 {
            return Err(self.loop_out_of_fuel(*self.out_of_fuel(SKIP, span), rule, form, span));
        }
        self.fuel -= 1;
        self.obs.loop_iteration(span, i);
        if let Some(x) = index {
            self.enter_int(x, i);
        }
        self.exec::<RACE>(body)
            .map_err(|e| self.loop_out_of_fuel(*e, rule, form, span))
    }

    #[cold]
    #[inline(never)]
    fn loop_out_of_fuel(
        &self,
        e: EvalError,
        rule: &'static str,
        form: &'static str,
        span: Span,
    ) -> Box<EvalError> {
        Box::new(crate::error::loop_out_of_fuel(e, rule, form, span))
    }

    /// The sizes of an array parameter or result, and its LMAD, evaluated.
    fn arr_layout(&self, a: &ArrCode) -> R<(Vec<i64>, Lmad<i64>)> {
        let ev = |e: &Expr| self.eval_int(e, PROG, a.span);
        let shape = a.shape.iter().map(ev).collect::<R<Vec<_>>>()?;
        let offset = ev(&a.lmad.offset)?;
        let dims = a
            .lmad
            .dims
            .iter()
            .map(|(n, s)| {
                Ok(Dim {
                    elems: ev(n)?,
                    stride: ev(s)?,
                })
            })
            .collect::<R<Vec<_>>>()?;
        Ok((shape, Lmad { offset, dims }))
    }

    /// E-IMP-PROG, first half: parameters bound to inputs, input blocks
    /// allocated and filled (the checks are [`crate::prog`]'s).
    fn bind_inputs(&mut self, inputs: &[Value], span: Span) -> R<()> {
        let code = self.code;
        let want = code.params.len();
        prog::check_not_too_many(want, inputs.len(), span)?;
        // Array inputs with their layouts, and each block's size in bytes.
        let mut arrays: Vec<(&ArrayValue, usize, Lmad<i64>, &ArrCode)> = Vec::new();
        let mut sizes: Vec<Option<u64>> = vec![None; code.mem_names.len()];
        let mut order: Vec<usize> = Vec::new();
        for (k, q) in code.params.iter().enumerate() {
            match q {
                ParamCode::Scalar(x, slot, t, pspan) => {
                    let tn = ImpType::Prim(*t).name();
                    let v = prog::input_of(inputs, k, want, x.as_str(), tn, *pspan)?;
                    match v {
                        Value::Scalar(c) if c.prim() == *t => {
                            self.ints[*slot] = c.to_bits();
                            self.obs.bind(x, &Word(*t, c.to_bits()));
                        }
                        _ => {
                            return Err(Box::new(prog::mismatch(
                                x.as_str(),
                                tn,
                                &v.type_name(),
                                *pspan,
                            )))
                        }
                    }
                }
                ParamCode::Array(a) => {
                    let (shape, l) = self.arr_layout(a)?;
                    let expected = type_of(&shape, a.elem);
                    let v = prog::input_of(inputs, k, want, a.name.as_str(), &expected, a.span)?;
                    if v.prim() != a.elem {
                        return Err(Box::new(prog::mismatch(
                            a.name.as_str(),
                            &expected,
                            &v.type_name(),
                            a.span,
                        )));
                    }
                    let (av, need) = prog::array_input(v, a.name.as_str(), a.span, &shape, &l)
                        .map_err(|e| Box::new(retyped(e, &shape, a.elem)))?;
                    let need = match need {
                        Some(n) => Some(
                            u64::try_from(n)
                                .ok()
                                .and_then(|n| n.checked_mul(a.elem.size()))
                                .ok_or_else(|| {
                                    stuck(
                                        PROG,
                                        a.span,
                                        format!(
                                            "array parameter `{}` has address {n}, too large for a block",
                                            a.name
                                        ),
                                    )
                                })?,
                        ),
                        None => None,
                    };
                    let s = &mut sizes[a.block];
                    *s = match (*s, need) {
                        (Some(s), Some(n)) => Some(s.max(n)),
                        (None, n) => Some(n.unwrap_or(0)),
                        (s, None) => s,
                    };
                    if !order.contains(&a.block) {
                        order.push(a.block);
                    }
                    arrays.push((av, a.block, l, a));
                }
            }
        }
        for m in order {
            let bytes = sizes[m].unwrap_or(0);
            let b = self.allocate(bytes, PROG, span)?;
            self.mems[m] = b;
            if let Some(n) = code.mem_names.get(m) {
                self.obs.bind(n, &BlockLabel(b));
            }
        }
        for (av, m, l, a) in arrays {
            let b = self.mems[m];
            lay_out(&mut self.blocks[b], av, &l, a)?;
            if O::DETAILED {
                let mut words = av.data.words();
                let _ = l.for_each_address(|addr| {
                    if let Some(w) = words.next() {
                        self.obs.write(b, addr, a.elem, w);
                    }
                    Ok::<(), ()>(())
                });
            }
        }
        Ok(())
    }

    /// E-IMP-PROG, second half: the results read back.
    fn results(&mut self) -> R<Vec<Value>> {
        let code = self.code;
        let mut out = Vec::with_capacity(code.results.len());
        // Results read back copy at most the heap limit in all.
        let mut copied = 0;
        for r in &code.results {
            out.push(match r {
                ResultCode::Scalar(x) => {
                    let t = code.int_types.get(*x).copied().unwrap_or(Prim::I64);
                    Value::Scalar(Const::from_bits(t, self.ints[*x]))
                }
                ResultCode::Array(a) => self.read_back(a, &mut copied)?,
            });
        }
        Ok(out)
    }

    fn read_back(&mut self, a: &ArrCode, copied: &mut u64) -> R<Value> {
        let (shape, l) = self.arr_layout(a)?;
        let (dims, len) = prog::result_shape(a.name.as_str(), a.span, &shape, self.limits.max_heap)
            .map_err(|e| Box::new(retyped(e, &shape, a.elem)))?;
        let cells = machine::cells_of_bytes((len as u64).saturating_mul(a.elem.size()));
        *copied = self.limits.charge(*copied, cells, PROG, a.span)?;
        let m = a.block;
        let b = self.block_of(m, PROG, a.span)?;
        let block = &self.blocks[b];
        let t = a.elem;
        let mut words: Vec<u64> = Vec::new();
        words.try_reserve_exact(len).map_err(|_| {
            stuck(
                PROG,
                a.span,
                format!("the system refused memory for result `{}`", a.name),
            )
        })?;
        let got = l.for_each_address(|addr| match load(block, addr, t) {
            Some(w) => {
                words.push(w);
                Ok(())
            }
            None => Err(addr),
        });
        if let Err(addr) = got {
            let bname = self.code.mem_names.get(m).map_or("?", |n| n.as_str());
            return Err(stuck(
                PROG,
                a.span,
                format!(
                    "result `{}`: read out of bounds: offset {addr} of type {t} of block {b} (`{bname}`), which has size {} bytes",
                    a.name,
                    block.len()
                ),
            ));
        }
        Ok(Value::Array(ArrayValue {
            shape: dims,
            data: Elems::from_words(t, words),
        }))
    }
}

/// The type of an array of this shape and element type, e.g. `[2][3]f32`.
fn type_of(shape: &[i64], t: Prim) -> String {
    let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
    format!("{dims}{}", ImpType::Prim(t).name())
}

/// An error of [`crate::prog`], which names `int` arrays, about an array of
/// element type `t`.
fn retyped(mut e: EvalError, shape: &[i64], t: Prim) -> EvalError {
    if t != Prim::I64 {
        e.message = e
            .message
            .replace(&prog::type_of_shape(shape), &type_of(shape, t));
    }
    e
}

/// Lays the array `av` out in `block` by its LMAD `l`, element by element
/// at byte offsets address * size.
fn lay_out(block: &mut [u8], av: &ArrayValue, l: &Lmad<i64>, a: &ArrCode) -> R<()> {
    let t = a.elem;
    // A row-major layout is one straight copy.
    if let Some(at) = prog::contiguous_at(av, l) {
        let bytes = av.data.to_le_bytes();
        let start = at.saturating_mul(t.size() as usize);
        if let Some(dst) = block.get_mut(start..start.saturating_add(bytes.len())) {
            dst.copy_from_slice(&bytes);
            return Ok(());
        }
    }
    let mut data = av.data.words();
    l.for_each_address(|addr| {
        // Addresses are in the block by construction of the block.
        if let Some(w) = data.next() {
            if store(block, addr, t, w) {
                return Ok(());
            }
        }
        Err(stuck(
            PROG,
            a.span,
            format!(
                "array parameter `{}`: address {addr} outside its block",
                a.name
            ),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Access;
    use crate::observer::{NoObserver, Stats};
    use funmem_lang::check::check_imp;
    use funmem_lang::parse::parse_imp;

    fn program(src: &str) -> Program {
        let p = parse_imp(src).unwrap_or_else(|d| panic!("parse: {d}"));
        check_imp(&p).unwrap_or_else(|d| panic!("type: {d}"));
        p
    }

    fn run_with(
        src: &str,
        inputs: &[Value],
        limits: Limits,
        race_check: bool,
    ) -> Result<Vec<Value>, EvalError> {
        run_imp(&program(src), inputs, limits, race_check, &mut NoObserver)
    }

    fn run(src: &str, inputs: &[Value]) -> Result<Vec<Value>, EvalError> {
        run_with(src, inputs, Limits::default(), true)
    }

    fn ints(xs: &[i64]) -> Vec<Value> {
        xs.iter().map(|&x| Value::Scalar(Const::I64(x))).collect()
    }

    fn arr(xs: &[i64]) -> Value {
        Value::Array(ArrayValue::vector(xs.to_vec()))
    }

    fn matrix(rows: usize, cols: usize, xs: &[i64]) -> Value {
        Value::Array(ArrayValue {
            shape: vec![rows, cols],
            data: crate::value::Elems::I64(xs.to_vec()),
        })
    }

    /// The error, which must be stuck at `rule` with a message containing
    /// every one of `parts`.
    fn stuck_with(r: Result<Vec<Value>, EvalError>, rule: &str, parts: &[&str]) -> EvalError {
        let e = r.expect_err("the program should be stuck");
        assert_eq!(e.kind, ErrorKind::Stuck, "{e}");
        assert_eq!(e.rule, rule, "{e}");
        for p in parts {
            assert!(e.message.contains(p), "`{p}` not in: {e}");
        }
        e
    }

    /// Records every event.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Observer for Log {
        fn rule(&mut self, rule: &'static str, _: Span) {
            self.0.push(rule.to_string());
        }
        fn bind(&mut self, name: &Name, value: &dyn fmt::Display) {
            self.0.push(format!("{name}={value}"));
        }
        fn alloc(&mut self, block: usize, cells: u64, _: u64) {
            self.0.push(format!("alloc {block} {cells}"));
        }
        fn read(&mut self, block: usize, offset: i64, t: Prim) {
            self.0
                .push(format!("read {block} {}", offset * t.size() as i64));
        }
        fn write(&mut self, block: usize, offset: i64, t: Prim, _: u64) {
            self.0
                .push(format!("write {block} {}", offset * t.size() as i64));
        }
        fn loop_iteration(&mut self, _: Span, i: i64) {
            self.0.push(format!("loop {i}"));
        }
        fn iteration_start(&mut self, _: Span, i: i64) {
            self.0.push(format!("start {i}"));
        }
        fn iteration_end(&mut self, _: Span, i: i64) {
            self.0.push(format!("end {i}"));
        }
    }

    const EVERY_RULE: &str = "def main (n: int) =
        var x: int;
        var m: mem;
        var k: mem;
        x <- n + 3;
        m <- alloc x;
        k <- m;
        k[0] <- 7;
        var y: int;
        y <- m[0];
        if y then skip else skip fi;
        if n then skip else skip fi;
        kernel i < 2 do m[i + 1] <- i * 10 done
      out (x, y, a: [x]int @ m -> R(x))";

    #[test]
    fn every_rule_in_order() {
        let mut log = Log::default();
        let r = run_imp(
            &program(EVERY_RULE),
            &ints(&[1]),
            Limits::default(),
            true,
            &mut log,
        );
        assert_eq!(
            r,
            Ok(vec![
                Value::Scalar(Const::I64(4)),
                Value::Scalar(Const::I64(7)),
                arr(&[7, 0, 10, 0])
            ])
        );
        let want = [
            "n=1",
            "E-IMP-DEC-INT",
            "E-IMP-DEC-MEM",
            "E-IMP-DEC-MEM",
            "E-IMP-ASSIGN-INT",
            "x=4",
            "E-IMP-ALLOC",
            "alloc 0 4",
            "m=block 0",
            "E-IMP-ASSIGN-MEM",
            "k=block 0",
            "E-IMP-WRITE",
            "write 0 0",
            "E-IMP-DEC-INT",
            "E-IMP-READ",
            "read 0 0",
            "y=7",
            "E-IMP-TRUE",
            "E-IMP-SKIP",
            "E-IMP-TRUE",
            "E-IMP-SKIP",
            "E-IMP-KERNEL",
            "start 0",
            "E-IMP-WRITE",
            "write 0 8",
            "end 0",
            "start 1",
            "E-IMP-WRITE",
            "write 0 16",
            "end 1",
        ];
        assert_eq!(log.0, want);
        // n = 0 takes the else branch of the second `if`.
        let mut log = Log::default();
        let r = run_imp(
            &program(EVERY_RULE),
            &ints(&[0]),
            Limits::default(),
            true,
            &mut log,
        );
        assert_eq!(
            r,
            Ok(vec![
                Value::Scalar(Const::I64(3)),
                Value::Scalar(Const::I64(7)),
                arr(&[7, 0, 10])
            ])
        );
        let ifs: Vec<&str> = log
            .0
            .iter()
            .map(String::as_str)
            .filter(|r| r.starts_with("E-IMP-TRUE") || r.starts_with("E-IMP-FALSE"))
            .collect();
        assert_eq!(ifs, ["E-IMP-TRUE", "E-IMP-FALSE"]);
    }

    #[test]
    fn stats_count_statements() {
        let mut s = Stats::default();
        run_imp(
            &program(EVERY_RULE),
            &ints(&[1]),
            Limits::default(),
            false,
            &mut s,
        )
        .unwrap();
        assert_eq!(
            (
                s.statements,
                s.allocations,
                s.cells,
                s.reads,
                s.writes,
                s.iterations
            ),
            (16, 1, 4, 1, 3, 2)
        );
    }

    #[test]
    fn declarations_reset_per_iteration() {
        // `var x: int` is 0 again in every iteration; an unset `mem` too.
        let src = "def main (n: int) =
            var m: mem;
            m <- alloc n;
            kernel i < n do
              var x: int;
              x <- x + i + 1;
              m[i] <- x
            done
          out (a: [n]int @ m -> R(n))";
        assert_eq!(run(src, &ints(&[3])), Ok(vec![arr(&[1, 2, 3])]));
        let src = "def main (n: int) =
            var m: mem;
            m <- alloc n;
            kernel i < n do
              var k: mem;
              if i then k[0] <- 1 else k <- alloc 1 fi
            done
          out (n)";
        stuck_with(
            run(src, &ints(&[2])),
            "E-IMP-WRITE",
            &["block `k` is used before it is allocated"],
        );
    }

    #[test]
    fn scalar_operators_follow_c() {
        let src = "def main (a: int) (b: int) =
            var q: int; var r: int; var w: int; var c: int;
            q <- a / b; r <- a % b; w <- 9223372036854775807 + a; c <- min(a, b) * 10 + (a < b) + !b
          out (q, r, w, c)";
        assert_eq!(
            run(src, &ints(&[-7, 2])),
            Ok(ints(&[-3, -1, i64::MAX.wrapping_add(-7), -69]))
        );
    }

    #[test]
    fn reads_and_writes_out_of_bounds_are_stuck() {
        let src = "def main (n: int) (i: int) =
            var m: mem; var x: int;
            m <- alloc n;
            x <- m[i]
          out (x)";
        assert_eq!(run(src, &ints(&[3, 2])), Ok(ints(&[0])));
        stuck_with(
            run(src, &ints(&[3, 3])),
            "E-IMP-READ",
            &["out of bounds", "offset 3", "block 0", "size 24 bytes"],
        );
        stuck_with(
            run(src, &ints(&[3, -1])),
            "E-IMP-READ",
            &["out of bounds", "offset -1", "block 0", "size 24 bytes"],
        );
        let src = "def main (n: int) (i: int) =
            var m: mem; var k: mem;
            k <- alloc 1;
            m <- alloc n;
            m[i] <- 5
          out (n)";
        let e = stuck_with(
            run(src, &ints(&[2, 7])),
            "E-IMP-WRITE",
            &["out of bounds", "offset 7", "block 1", "size 16 bytes"],
        );
        assert_eq!(
            e.message,
            "write out of bounds: offset 7 of type i64 (bytes 56..64) of block 1 (`m`), which has size 16 bytes"
        );
        let p = program(src);
        assert_eq!(
            &src[e.span.start..e.span.end],
            "m[i] <- 5",
            "{:?}",
            p.body.len()
        );
        stuck_with(
            run(src, &ints(&[0, 0])),
            "E-IMP-WRITE",
            &["out of bounds", "size 0"],
        );
        stuck_with(
            run(src, &ints(&[2, i64::MIN])),
            "E-IMP-WRITE",
            &["out of bounds"],
        );
    }

    #[test]
    fn unset_blocks_are_stuck() {
        let src = "def main (n: int) = var m: mem; var x: int; x <- m[0] out (x)";
        stuck_with(
            run(src, &ints(&[1])),
            "E-IMP-READ",
            &["block `m` is used before it is allocated"],
        );
        let src = "def main (n: int) = var m: mem; var k: mem; k <- m; k[0] <- 1 out (n)";
        stuck_with(
            run(src, &ints(&[1])),
            "E-IMP-WRITE",
            &["block `k` is used before it is allocated"],
        );
        let src = "def main (n: int) = var m: mem out (a: [n]int @ m -> R(n))";
        stuck_with(
            run(src, &ints(&[1])),
            "E-IMP-PROG",
            &["block `m` is used before it is allocated"],
        );
    }

    #[test]
    fn division_by_zero_is_stuck_in_its_statement() {
        let cases = [
            ("var x: int; x <- 7 / n", "E-IMP-ASSIGN-INT", "7 / 0"),
            ("var x: int; x <- 7 % n", "E-IMP-ASSIGN-INT", "7 % 0"),
            (
                "var x: int; x <- -(1 / (n * 3))",
                "E-IMP-ASSIGN-INT",
                "1 / 0",
            ),
            ("var m: mem; m <- alloc 1 / n", "E-IMP-ALLOC", "1 / 0"),
            (
                "var m: mem; var x: int; m <- alloc 1; x <- m[1 / n - 1]",
                "E-IMP-READ",
                "1 / 0",
            ),
            (
                "var m: mem; m <- alloc 1; m[0] <- 1 % n",
                "E-IMP-WRITE",
                "1 % 0",
            ),
            (
                "var m: mem; m <- alloc 1; m[n / n - 1] <- 1",
                "E-IMP-WRITE",
                "0 / 0",
            ),
            ("kernel i < 2 / n do skip done", "E-IMP-KERNEL", "2 / 0"),
        ];
        for (body, rule, what) in cases {
            let src = format!("def main (n: int) = {body} out (n)");
            stuck_with(run(&src, &ints(&[0])), rule, &["division by zero", what]);
            assert!(run(&src, &ints(&[1])).is_ok(), "{src}");
        }
        // A literal division by zero is stuck only when it runs.
        let src = "def main (n: int) = var x: int; if n then x <- 1 / 0 else skip fi out (x)";
        assert_eq!(run(src, &ints(&[0])), Ok(ints(&[0])));
        stuck_with(
            run(src, &ints(&[1])),
            "E-IMP-ASSIGN-INT",
            &["division by zero", "1 / 0"],
        );
    }

    #[test]
    fn negative_sizes_are_stuck() {
        let src = "def main (n: int) = var m: mem; m <- alloc n out (n)";
        stuck_with(
            run(src, &ints(&[-1])),
            "E-IMP-ALLOC",
            &["negative allocation size -1"],
        );
        assert_eq!(run(src, &ints(&[0])), Ok(ints(&[0])));
        let src = "def main (n: int) = kernel i < n do skip done out (n)";
        stuck_with(
            run(src, &ints(&[-2])),
            "E-IMP-KERNEL",
            &["negative kernel bound -2"],
        );
        assert_eq!(run(src, &ints(&[0])), Ok(ints(&[0])));
        let src = "def main (n: int) = var m: mem; m <- alloc 1 out (a: [n]int @ m -> R(n))";
        stuck_with(
            run(src, &ints(&[-1])),
            "E-IMP-PROG",
            &["negative size", "[-1]int"],
        );
        assert_eq!(run(src, &ints(&[0])), Ok(vec![arr(&[])]));
    }

    #[test]
    fn inputs_must_match_the_parameters() {
        let src = "def main (n: int) (xs: [n]int @ xm -> R(n)) = skip out (n)";
        assert_eq!(
            run(src, &[Value::Scalar(Const::I64(2)), arr(&[1, 2])]),
            Ok(ints(&[2]))
        );
        stuck_with(
            run(src, &[Value::Scalar(Const::I64(2))]),
            "E-IMP-PROG",
            &["too few inputs", "`xs`", "[2]int"],
        );
        stuck_with(run(src, &[]), "E-IMP-PROG", &["too few inputs", "`n`"]);
        stuck_with(
            run(
                src,
                &[
                    Value::Scalar(Const::I64(2)),
                    arr(&[1, 2]),
                    Value::Scalar(Const::I64(3)),
                ],
            ),
            "E-IMP-PROG",
            &["too many inputs", "takes 2", "3 were given"],
        );
        stuck_with(
            run(src, &[Value::Scalar(Const::I64(3)), arr(&[1, 2])]),
            "E-IMP-PROG",
            &["`xs`", "must be [3]int", "[2]i64 was given"],
        );
        stuck_with(
            run(src, &[Value::Scalar(Const::I64(2)), matrix(2, 1, &[1, 2])]),
            "E-IMP-PROG",
            &["`xs`", "[2]int", "[2][1]i64"],
        );
        stuck_with(
            run(src, &[arr(&[2]), arr(&[1, 2])]),
            "E-IMP-PROG",
            &["`n`", "must be int", "[1]i64 was given"],
        );
        stuck_with(
            run(
                src,
                &[Value::Scalar(Const::I64(2)), Value::Scalar(Const::I64(1))],
            ),
            "E-IMP-PROG",
            &["`xs`", "[2]int", "i64 was given"],
        );
        let bad = Value::Array(ArrayValue {
            shape: vec![2],
            data: crate::value::Elems::I64(vec![1]),
        });
        stuck_with(
            run(src, &[Value::Scalar(Const::I64(2)), bad]),
            "E-IMP-PROG",
            &["malformed"],
        );
        stuck_with(
            run(src, &[Value::Scalar(Const::I64(-1)), arr(&[])]),
            "E-IMP-PROG",
            &["[-1]int", "[0]i64 was given"],
        );
    }

    #[test]
    fn input_layouts_must_start_at_zero() {
        let src = "def main (n: int) (o: int) (xs: [n]int @ xm -> o + {(n : 1)}) = skip out (ys: [n]int @ xm -> o + {(n : 1)})";
        assert_eq!(
            run(
                src,
                &[
                    Value::Scalar(Const::I64(2)),
                    Value::Scalar(Const::I64(3)),
                    arr(&[8, 9])
                ]
            ),
            Ok(vec![arr(&[8, 9])])
        );
        stuck_with(
            run(
                src,
                &[
                    Value::Scalar(Const::I64(2)),
                    Value::Scalar(Const::I64(-1)),
                    arr(&[8, 9]),
                ],
            ),
            "E-IMP-PROG",
            &["`xs`", "address -1"],
        );
        // A huge offset is a huge block: the heap limit stops it.
        let e = run(
            src,
            &[
                Value::Scalar(Const::I64(1)),
                Value::Scalar(Const::I64(1 << 40)),
                arr(&[8]),
            ],
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfHeap, "{e}");
        let e = run(
            src,
            &[
                Value::Scalar(Const::I64(1)),
                Value::Scalar(Const::I64(i64::MAX)),
                arr(&[8]),
            ],
        )
        .unwrap_err();
        assert!(
            matches!(e.kind, ErrorKind::Stuck | ErrorKind::OutOfHeap),
            "{e}"
        );
    }

    #[test]
    fn array_parameters_share_a_block() {
        // xs at 0 .. n-1, ys reversed at n .. 2n-1; the block has 2n cells.
        let src = "def main (n: int) (xs: [n]int @ b -> R(n)) (k: int) (ys: [n]int @ b -> k + {(n : -1)}) =
            var t: int;
            t <- n * 2;
            var x: int;
            x <- b[t - 1]
          out (x, all: [t]int @ b -> R(t))";
        let mut log = Log::default();
        let r = run_imp(
            &program(src),
            &[
                Value::Scalar(Const::I64(2)),
                arr(&[1, 2]),
                Value::Scalar(Const::I64(3)),
                arr(&[5, 6]),
            ],
            Limits::default(),
            true,
            &mut log,
        );
        assert_eq!(
            r,
            Ok(vec![Value::Scalar(Const::I64(5)), arr(&[1, 2, 6, 5])])
        );
        // Scalar parameters are bound first, then the one shared block.
        assert_eq!(
            log.0
                .iter()
                .find(|e| e.starts_with("alloc"))
                .map(String::as_str),
            Some("alloc 0 4")
        );
        let src = "def main (n: int) (xs: [n]int @ b -> R(n)) (ys: [n]int @ b -> n + {(n : 1)}) =
            var t: int; t <- n * 2; b[t] <- 0 out (n)";
        stuck_with(
            run(
                src,
                &[Value::Scalar(Const::I64(2)), arr(&[1, 2]), arr(&[5, 6])],
            ),
            "E-IMP-WRITE",
            &["out of bounds", "size 32 bytes"],
        );
        // Empty arrays make an empty block.
        let src = "def main (n: int) (xs: [n]int @ b -> R(n)) = var x: int; x <- b[0] out (x)";
        stuck_with(
            run(src, &[Value::Scalar(Const::I64(0)), arr(&[])]),
            "E-IMP-READ",
            &["size 0"],
        );
    }

    #[test]
    fn results_are_read_back_through_their_lmads() {
        // A 2 x 3 matrix, read back row-major, transposed and by a diagonal.
        let src = "def main (n: int) (m: int) (xs: [n][m]int @ xm -> R(n, m)) =
            var k: int; k <- min(n, m)
          out (a: [n][m]int @ xm -> R(n, m), t: [m][n]int @ xm -> 0 + {(m : 1) (n : m)}, d: [k]int @ xm -> 0 + {(k : m + 1)})";
        let x = matrix(2, 3, &[0, 1, 2, 10, 11, 12]);
        assert_eq!(
            run(
                src,
                &[
                    Value::Scalar(Const::I64(2)),
                    Value::Scalar(Const::I64(3)),
                    x.clone()
                ]
            ),
            Ok(vec![x, matrix(3, 2, &[0, 10, 1, 11, 2, 12]), arr(&[0, 11])])
        );
        // Reading past the block is stuck.
        let src =
            "def main (n: int) = var m: mem; m <- alloc n out (a: [n]int @ m -> 1 + {(n : 1)})";
        stuck_with(
            run(src, &ints(&[2])),
            "E-IMP-PROG",
            &[
                "`a`",
                "out of bounds",
                "offset 2",
                "block 0",
                "size 16 bytes",
            ],
        );
        // A stride-0 result bigger than the heap limit is refused.
        let src =
            "def main (n: int) = var m: mem; m <- alloc 1 out (a: [n]int @ m -> 0 + {(n : 0)})";
        assert_eq!(run(src, &ints(&[3])), Ok(vec![arr(&[0, 0, 0])]));
        let e = run(src, &ints(&[1 << 40])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfHeap);
    }

    #[test]
    fn fig_13() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../papers/ifl2022/fig13_if_sizes.imp"
        );
        let src = std::fs::read_to_string(path).expect("fig. 13 is in the corpus");
        assert_eq!(
            run(&src, &ints(&[1, 3, 2])),
            Ok(vec![Value::Scalar(Const::I64(3)), arr(&[0, 1, 2])])
        );
        assert_eq!(
            run(&src, &ints(&[0, 3, 2])),
            Ok(vec![Value::Scalar(Const::I64(2)), arr(&[0, 1])])
        );
    }

    #[test]
    fn fuel_counts_every_statement() {
        // 1 + 1 + 1 + 3 * 2 = 9 statements.
        let src = "def main (n: int) =
            var m: mem; m <- alloc n;
            kernel i < n do var t: int; m[i] <- t done
          out (n)";
        let limits = |fuel| Limits {
            fuel,
            ..Limits::default()
        };
        assert!(run_with(src, &ints(&[3]), limits(9), true).is_ok());
        let e = run_with(src, &ints(&[3]), limits(8), true).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfFuel);
        assert_eq!(
            (e.rule, &src[e.span.start..e.span.end]),
            ("E-IMP-WRITE", "m[i] <- t")
        );
        assert!(e.message.contains("8 statements"), "{e}");
        // An endless amount of work stops too.
        let e = run_with(src, &ints(&[i64::MAX]), limits(1000), false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfHeap);
        let src = "def main (n: int) = kernel i < n do kernel j < n do skip done done out (n)";
        let e = run_with(src, &ints(&[i64::MAX]), limits(1000), false).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfFuel);
    }

    #[test]
    fn for_loops_run_in_order_with_a_bound_evaluated_once() {
        // The bound is read once: changing n inside does not change it.
        let src = "def main (n: int) =
            var s: int; var m: mem; var c: int;
            c <- n;
            m <- alloc 4;
            for i < c do s <- s * 10 + i; c <- 0; m[i] <- s done
          out (s, c, a: [4]int @ m -> R(4))";
        assert_eq!(
            run(src, &ints(&[4])),
            Ok(vec![
                Value::Scalar(Const::I64(123)),
                Value::Scalar(Const::I64(0)),
                arr(&[0, 1, 12, 123])
            ])
        );
        // A bound <= 0 runs nothing.
        for n in [0, -5] {
            assert_eq!(
                run(src, &ints(&[n])),
                Ok(vec![
                    Value::Scalar(Const::I64(0)),
                    Value::Scalar(Const::I64(n)),
                    arr(&[0, 0, 0, 0])
                ])
            );
        }
    }

    #[test]
    fn while_loops_test_before_each_iteration() {
        let src = "def main (n: int) =
            var k: int; var s: int;
            k <- n;
            while k do var t: int; t <- t + k; s <- s + t; k <- k - 1 done
          out (s, k)";
        assert_eq!(run(src, &ints(&[4])), Ok(ints(&[10, 0])));
        assert_eq!(run(src, &ints(&[0])), Ok(ints(&[0, 0])));
        let mut log = Log::default();
        let r = run_imp(
            &program(src),
            &ints(&[1]),
            Limits::default(),
            true,
            &mut log,
        );
        assert_eq!(r, Ok(ints(&[1, 0])));
        let loops: Vec<&str> = log
            .0
            .iter()
            .map(String::as_str)
            .filter(|r| r.starts_with("E-IMP-WHILE") || r.starts_with("loop "))
            .collect();
        // The statement, and its one iteration.
        assert_eq!(loops, ["E-IMP-WHILE", "loop 0"]);
    }

    #[test]
    fn a_while_that_never_ends_runs_out_of_fuel_at_the_while() {
        let src = "def main (n: int) =
            var k: int; var s: int;
            k <- 1;
            while k do s <- s + 1; while n do s <- s - 1; n <- n - 1 done done
          out (s)";
        let limits = Limits {
            fuel: 10_000,
            ..Limits::default()
        };
        for n in [0, 3] {
            let e = run_with(src, &ints(&[n]), limits, true).unwrap_err();
            assert_eq!(e.kind, ErrorKind::OutOfFuel, "{e}");
            assert_eq!(e.rule, "E-IMP-WHILE", "{e}");
            assert!(
                src[e.span.start..e.span.end].starts_with("while k do"),
                "{e:?}"
            );
            assert!(e.message.contains("10000 statements"), "{e}");
            assert!(
                e.message.starts_with("the `while` loop did not finish"),
                "{e}"
            );
        }
        // The inner loop never ends: it is the one named.
        let src = "def main (n: int) =
            var k: int; k <- 1;
            for j < 3 do while k do n <- n + 1 done done
          out (n)";
        let e = run_with(src, &ints(&[0]), limits, false).unwrap_err();
        assert_eq!(e.rule, "E-IMP-WHILE");
        assert!(src[e.span.start..e.span.end].starts_with("while k do"));
        // A `for` costs one unit per iteration even with an empty-ish body.
        let src = "def main (n: int) = for j < n do skip done out (n)";
        assert!(run_with(src, &ints(&[4]), Limits { fuel: 9, ..limits }, true).is_ok());
        let e = run_with(src, &ints(&[4]), Limits { fuel: 8, ..limits }, true).unwrap_err();
        assert_eq!((&e.kind, e.rule), (&ErrorKind::OutOfFuel, "E-IMP-FOR"));
        assert!(
            e.message.starts_with("the `for` loop did not finish"),
            "{e}"
        );
    }

    #[test]
    fn loops_inside_kernels_belong_to_the_iteration() {
        // Each iteration writes its own row in a loop: no race.
        let src = "def main (n: int) =
            var m: mem; m <- alloc n * 3;
            kernel i < n do
              var c: int; c <- 3;
              while c do c <- c - 1; m[i * 3 + c] <- i * 10 + c done;
              for j < 3 do var t: int; t <- m[i * 3 + j]; m[i * 3 + j] <- t + 1 done
            done
          out (a: [n][3]int @ m -> R(n, 3))";
        assert_eq!(
            run(src, &ints(&[2])),
            Ok(vec![matrix(2, 3, &[1, 2, 3, 11, 12, 13])])
        );
        // Iterations that write the same cell from inside a loop race.
        let src = "def main (n: int) =
            var m: mem; m <- alloc 2;
            kernel i < n do for j < 2 do m[j] <- i done done
          out (n)";
        let (e, r) = race_of(run(src, &ints(&[2])));
        assert_eq!(e.rule, "E-IMP-KERNEL");
        assert_eq!(r.offset, 0);
        assert_eq!(
            run_with(src, &ints(&[2]), Limits::default(), false),
            Ok(ints(&[2]))
        );
    }

    #[test]
    fn the_heap_limit_is_cumulative() {
        let src = "def main (a: int) (b: int) = var m: mem; var k: mem; m <- alloc a; k <- alloc b out (a)";
        let limits = Limits {
            max_heap: 10,
            ..Limits::default()
        };
        assert!(run_with(src, &ints(&[4, 6]), limits, true).is_ok());
        let e = run_with(src, &ints(&[6, 5]), limits, true).unwrap_err();
        assert_eq!((&e.kind, e.rule), (&ErrorKind::OutOfHeap, "E-IMP-ALLOC"));
        assert!(e.message.contains("limit of 10 cells"), "{e}");
        assert_eq!(&src[e.span.start..e.span.end], "k <- alloc b");
        let e = run_with(src, &ints(&[i64::MAX, 0]), limits, true).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfHeap);
        // Input blocks count.
        let src = "def main (n: int) (xs: [n]int @ xm -> R(n)) = var m: mem; m <- alloc 8 out (n)";
        let e = run_with(
            src,
            &[Value::Scalar(Const::I64(3)), arr(&[1, 2, 3])],
            limits,
            true,
        )
        .unwrap_err();
        assert_eq!((&e.kind, e.rule), (&ErrorKind::OutOfHeap, "E-IMP-ALLOC"));
    }

    fn race_of(r: Result<Vec<Value>, EvalError>) -> (EvalError, Race) {
        let e = r.expect_err("a race");
        match &e.kind {
            ErrorKind::Race(r) => {
                let r = (**r).clone();
                (e, r)
            }
            _ => panic!("not a race: {e}"),
        }
    }

    #[test]
    fn write_write_race() {
        let src = "def main (n: int) = var m: mem; m <- alloc 2; kernel i < n do m[1] <- i done out (a: [2]int @ m -> R(2))";
        let (e, r) = race_of(run(src, &ints(&[2])));
        assert_eq!(e.rule, "E-IMP-KERNEL");
        assert_eq!(
            &src[e.span.start..e.span.end],
            "kernel i < n do m[1] <- i done"
        );
        assert_eq!((r.block, r.offset), (0, 8));
        assert_eq!(
            r.first,
            Access {
                path: vec![0],
                write: true
            }
        );
        assert_eq!(
            r.second,
            Access {
                path: vec![1],
                write: true
            }
        );
        for part in [
            "block 0",
            "offset 8",
            "written by iteration 0",
            "written by iteration 1",
        ] {
            assert!(e.message.contains(part), "`{part}` not in {e}");
        }
        // One iteration cannot race; without the check the last write wins.
        assert_eq!(run(src, &ints(&[1])), Ok(vec![arr(&[0, 0])]));
        assert_eq!(
            run_with(src, &ints(&[3]), Limits::default(), false),
            Ok(vec![arr(&[0, 2])])
        );
    }

    #[test]
    fn read_write_race() {
        let src = "def main (n: int) =
            var m: mem; m <- alloc 1;
            kernel i < n do
              if i then m[0] <- 1 else var t: int; t <- m[0] fi
            done
          out (n)";
        let (e, r) = race_of(run(src, &ints(&[2])));
        assert_eq!(
            r.first,
            Access {
                path: vec![0],
                write: false
            }
        );
        assert_eq!(
            r.second,
            Access {
                path: vec![1],
                write: true
            }
        );
        assert!(e.message.contains("read by iteration 0"), "{e}");
        // Write then read.
        let src = "def main (n: int) =
            var m: mem; m <- alloc 1;
            kernel i < n do
              var c: int; c <- i == 0;
              if c then m[0] <- 1 else var t: int; t <- m[0] fi
            done
          out (n)";
        let (_, r) = race_of(run(src, &ints(&[3])));
        assert_eq!(
            r.first,
            Access {
                path: vec![0],
                write: true
            }
        );
        assert_eq!(
            r.second,
            Access {
                path: vec![1],
                write: false
            }
        );
        // Reads alone never race.
        let src = "def main (n: int) = var m: mem; m <- alloc 1; kernel i < n do var t: int; t <- m[0] done out (n)";
        assert!(run(src, &ints(&[4])).is_ok());
    }

    #[test]
    fn nested_kernels_race() {
        // Outer iterations 0 and 1 each run an inner kernel writing m[j].
        let src = "def main (n: int) = var m: mem; m <- alloc n;
            kernel i < n do kernel j < n do m[j] <- i done done out (n)";
        let (e, r) = race_of(run(src, &ints(&[2])));
        assert_eq!(
            &src[e.span.start..e.span.start + 8],
            "kernel i",
            "the outer kernel races"
        );
        assert_eq!((r.block, r.offset), (0, 0));
        // The full path of the first access, recovered by the watching re-run.
        assert_eq!(
            r.first,
            Access {
                path: vec![0, 0],
                write: true
            }
        );
        assert_eq!(
            r.second,
            Access {
                path: vec![1, 0],
                write: true
            }
        );
        // Inner iterations race on m[i].
        let src = "def main (n: int) = var m: mem; m <- alloc n;
            kernel i < n do kernel j < n do m[i] <- j done done out (n)";
        let (e, r) = race_of(run(src, &ints(&[2])));
        assert_eq!(
            &src[e.span.start..e.span.start + 8],
            "kernel j",
            "the inner kernel races"
        );
        assert_eq!(
            r.first,
            Access {
                path: vec![0],
                write: true
            }
        );
        assert_eq!(
            r.second,
            Access {
                path: vec![1],
                write: true
            }
        );
        // Each outer iteration's inner kernels in turn: no race.
        let src = "def main (n: int) = var m: mem; var k: int; k <- n * n; m <- alloc k;
            kernel i < n do
              kernel j < n do m[i * n + j] <- j done;
              kernel j < n do var t: int; t <- m[i * n + (j + 1) % n] done
            done out (a: [n][n]int @ m -> R(n, n))";
        assert_eq!(run(src, &ints(&[2])), Ok(vec![matrix(2, 2, &[0, 1, 0, 1])]));
    }

    #[test]
    fn race_free_kernels_share_a_block() {
        let src = "def main (n: int) = var m: mem; m <- alloc n;
            kernel i < n do var t: int; t <- i * 2; m[i] <- t done;
            kernel i < n do var t: int; t <- m[i]; m[i] <- t + 1 done;
            var r: mem; r <- alloc n;
            kernel i < n do var t: int; t <- m[n - 1 - i]; r[i] <- t done
          out (a: [n]int @ m -> R(n), b: [n]int @ r -> R(n))";
        assert_eq!(
            run(src, &ints(&[4])),
            Ok(vec![arr(&[1, 3, 5, 7]), arr(&[7, 5, 3, 1])])
        );
        // Iterations writing even and odd cells of one block, interleaved.
        let src = "def main (n: int) = var m: mem; var k: int; k <- 2 * n; m <- alloc k;
            kernel i < 2 do kernel j < n do m[2 * j + i] <- i done done
          out (a: [k]int @ m -> R(k))";
        assert_eq!(run(src, &ints(&[2])), Ok(vec![arr(&[0, 1, 0, 1])]));
    }

    #[test]
    fn ill_typed_programs_are_refused_without_panicking() {
        let p = parse_imp("def main (n: int) = x <- 1 out (n)").expect("parses");
        let e = run_imp(&p, &ints(&[1]), Limits::default(), true, &mut NoObserver).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Stuck);
        assert!(e.message.contains("`x`"), "{e}");
    }

    /// Speed in release mode: `cargo test --release -p funmem-semantics
    /// imp::tests::speed -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn speed() {
        let src = "def main (n: int) = var m: mem; m <- alloc n;
            kernel i < n do var t: int; t <- i * 2; m[i] <- t done
          out (n)";
        let p = program(src);
        let n = 10_000_000;
        for race in [false, true] {
            let t = std::time::Instant::now();
            let r = run_imp(&p, &ints(&[n]), Limits::default(), race, &mut NoObserver);
            let s = t.elapsed().as_secs_f64();
            assert_eq!(r, Ok(ints(&[n])));
            let stmts = 3.0 * n as f64 + 3.0;
            println!(
                "race check {race}: {s:.3} s, {:.1} M statements/s",
                stmts / s / 1e6
            );
        }
    }

    // ---- differential testing against a naive reading of fig. 12 ----

    /// A value in the reference interpreter's environment.
    #[derive(Clone, Copy, Debug)]
    enum RefVal {
        Int(i64),
        Mem(Option<usize>),
    }

    /// Fig. 12 as written: a map from names to values, cloned for every
    /// kernel iteration and dropped after it.
    struct Reference {
        heap: Vec<Vec<i64>>,
    }

    type RefEnv = std::collections::HashMap<Name, RefVal>;
    type RefErr = (&'static str, ErrorKind);

    impl Reference {
        fn se(env: &RefEnv, e: &SExp, rule: &'static str) -> Result<i64, RefErr> {
            Ok(match e {
                SExp::Atom(Atom::Int(k, _)) => *k,
                SExp::Atom(Atom::Const(c, _)) => c.to_bits() as i64,
                SExp::Atom(Atom::Var(x)) => match env[&x.name] {
                    RefVal::Int(k) => k,
                    RefVal::Mem(_) => panic!("ill typed"),
                },
                SExp::Un(op, e, _) => {
                    crate::scalar::unop_t(*op, Prim::I64, Self::se(env, e, rule)? as u64) as i64
                }
                SExp::Bin(op, l, r, _) => {
                    binop(*op, Self::se(env, l, rule)?, Self::se(env, r, rule)?)
                        .map_err(|_| (rule, ErrorKind::Stuck))?
                }
            })
        }

        fn block(env: &RefEnv, m: &Ident, rule: &'static str) -> Result<usize, RefErr> {
            match env[&m.name] {
                RefVal::Mem(Some(b)) => Ok(b),
                _ => Err((rule, ErrorKind::Stuck)),
            }
        }

        fn stmts(&mut self, env: &mut RefEnv, ss: &[AstStmt]) -> Result<(), RefErr> {
            for s in ss {
                match &s.kind {
                    StmtKind::Reduce(x, r) => {
                        let v = self.fold(env, r, None)?;
                        env.insert(x.name.clone(), RefVal::Int(v));
                    }
                    StmtKind::Scan(r, m, j) => {
                        self.fold(env, r, Some((m, j)))?;
                    }
                    StmtKind::For(i, n, body) => {
                        let n = Self::se(env, n, FOR)?;
                        for k in 0..n {
                            env.insert(i.name.clone(), RefVal::Int(k));
                            self.stmts(env, body)?;
                        }
                        env.remove(&i.name);
                    }
                    StmtKind::While(c, body) => {
                        while !matches!(env[&c.name], RefVal::Int(0)) {
                            self.stmts(env, body)?;
                        }
                    }
                    StmtKind::Skip => {}
                    StmtKind::Assert(c, e) => {
                        if Self::se(env, e, ASSERT)? == 0 {
                            return Err((c.rule(), ErrorKind::Stuck));
                        }
                    }
                    StmtKind::Var(x, ImpType::Prim(_)) => {
                        env.insert(x.name.clone(), RefVal::Int(0));
                    }
                    StmtKind::Var(x, ImpType::Mem) => {
                        env.insert(x.name.clone(), RefVal::Mem(None));
                    }
                    StmtKind::Assign(x, e) => {
                        let v = match (env[&x.name], e) {
                            (RefVal::Mem(_), SExp::Atom(Atom::Var(y))) => env[&y.name],
                            _ => RefVal::Int(Self::se(env, e, ASSIGN_INT)?),
                        };
                        env.insert(x.name.clone(), v);
                    }
                    StmtKind::Alloc(x, e, _) => {
                        let n = Self::se(env, e, ALLOC)?;
                        let n = usize::try_from(n).map_err(|_| (ALLOC, ErrorKind::Stuck))?;
                        self.heap.push(vec![0; n]);
                        env.insert(x.name.clone(), RefVal::Mem(Some(self.heap.len() - 1)));
                    }
                    StmtKind::Read(x, m, i) => {
                        let b = Self::block(env, m, READ)?;
                        let i = Self::se(env, i, READ)?;
                        let v = usize::try_from(i)
                            .ok()
                            .and_then(|i| self.heap[b].get(i))
                            .ok_or((READ, ErrorKind::Stuck))?;
                        env.insert(x.name.clone(), RefVal::Int(*v));
                    }
                    StmtKind::Write(m, i, v) => {
                        let b = Self::block(env, m, WRITE)?;
                        let i = Self::se(env, i, WRITE)?;
                        let v = Self::se(env, v, WRITE)?;
                        let cell = usize::try_from(i)
                            .ok()
                            .and_then(|i| self.heap[b].get_mut(i))
                            .ok_or((WRITE, ErrorKind::Stuck))?;
                        *cell = v;
                    }
                    StmtKind::If(c, t, e) => match env[&c.name] {
                        RefVal::Int(0) => self.stmts(env, e)?,
                        _ => self.stmts(env, t)?,
                    },
                    StmtKind::Kernel(i, n, body) => {
                        let n = Self::se(env, n, KERNEL)?;
                        if n < 0 {
                            return Err((KERNEL, ErrorKind::Stuck));
                        }
                        for k in 0..n {
                            let mut e = env.clone();
                            e.insert(i.name.clone(), RefVal::Int(k));
                            self.stmts(&mut e, body)?;
                        }
                    }
                }
            }
            Ok(())
        }

        /// E-IMP-REDUCE / E-IMP-SCAN on `i64`s: a left fold, each
        /// iteration in a copy of the environment.
        fn fold(
            &mut self,
            env: &RefEnv,
            r: &funmem_lang::imp::Red,
            out: Option<(&Ident, &SExp)>,
        ) -> Result<i64, RefErr> {
            let rule = if out.is_some() { SCAN } else { REDUCE };
            let n = Self::se(env, &r.count, rule)?;
            if n < 0 {
                return Err((rule, ErrorKind::Stuck));
            }
            let mut acc = Self::se(env, &r.ne, rule)?;
            for k in 0..n {
                let mut e = env.clone();
                e.insert(r.index.name.clone(), RefVal::Int(k));
                self.stmts(&mut e, &r.body)?;
                let v = Self::se(&e, &r.elem, rule)?;
                acc = match &r.op {
                    ImpOp::Bin(op) => binop(*op, acc, v).map_err(|_| (rule, ErrorKind::Stuck))?,
                    ImpOp::Lambda(a, b, ss, res) => {
                        let mut l = env.clone();
                        l.insert(a.name.clone(), RefVal::Int(acc));
                        l.insert(b.name.clone(), RefVal::Int(v));
                        self.stmts(&mut l, ss)?;
                        Self::se(&l, res, rule)?
                    }
                };
                if let Some((m, j)) = out {
                    let b = Self::block(&e, m, rule)?;
                    let j = Self::se(&e, j, rule)?;
                    let cell = usize::try_from(j)
                        .ok()
                        .and_then(|j| self.heap[b].get_mut(j))
                        .ok_or((rule, ErrorKind::Stuck))?;
                    *cell = acc;
                }
            }
            Ok(acc)
        }

        /// Runs `def main (n: int) (a: int) (xs: [n]int @ xm -> R(n)) = ...`
        /// whose results are ints and `[2]int` arrays at `R(2)`.
        fn run(p: &Program, n: i64, a: i64, xs: &[i64]) -> Result<Vec<Value>, RefErr> {
            let mut r = Reference {
                heap: vec![xs.to_vec()],
            };
            let mut env = RefEnv::new();
            env.insert(Name::new("n"), RefVal::Int(n));
            env.insert(Name::new("a"), RefVal::Int(a));
            env.insert(Name::new("xm"), RefVal::Mem(Some(0)));
            r.stmts(&mut env, &p.body)?;
            p.results
                .iter()
                .map(|res| match res {
                    ImpResult::Scalar(x) => match env[&x.name] {
                        RefVal::Int(k) => Ok(Value::Scalar(Const::I64(k))),
                        RefVal::Mem(_) => panic!("ill typed"),
                    },
                    ImpResult::Array(d) => {
                        let b = Self::block(&env, &d.block, PROG)?;
                        let v = r.heap[b].get(..2).ok_or((PROG, ErrorKind::Stuck))?;
                        Ok(arr(v))
                    }
                })
                .collect()
        }
    }

    /// A small generator of well-typed IMP programs, driven by a
    /// deterministic pseudo-random sequence.
    struct Gen {
        state: u64,
        /// Visible variables: name, is it an int, kernel depth of its
        /// declaration, is it a kernel index.
        scope: Vec<(String, bool, usize, bool)>,
        kernels: usize,
        /// Sequential loops around the statement being generated.
        loops: usize,
        fresh: usize,
    }

    impl Gen {
        fn next(&mut self, bound: u64) -> u64 {
            // xorshift64*
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound.max(1)
        }

        fn pick(&mut self, int: bool, assignable: bool) -> Option<String> {
            let kernels = self.kernels;
            let vs: Vec<String> = self
                .scope
                .iter()
                .filter(|(_, i, k, idx)| *i == int && (!assignable || (*k == kernels && !idx)))
                .map(|v| v.0.clone())
                .collect();
            if vs.is_empty() {
                return None;
            }
            let k = self.next(vs.len() as u64) as usize;
            Some(vs[k].clone())
        }

        fn se(&mut self, depth: usize) -> String {
            if depth == 0 || self.next(3) == 0 {
                return match self.pick(true, false) {
                    Some(x) if self.next(3) > 0 => x,
                    _ => (self.next(7) as i64 - 2).to_string(),
                };
            }
            let ops = [
                "*", "/", "%", "+", "-", "<", "<=", ">", ">=", "==", "!=", "&&", "||",
            ];
            match self.next(10) {
                0 => format!("-({})", self.se(depth - 1)),
                1 => format!("!({})", self.se(depth - 1)),
                2 => format!("min({}, {})", self.se(depth - 1), self.se(depth - 1)),
                3 => format!("max({}, {})", self.se(depth - 1), self.se(depth - 1)),
                _ => {
                    let op = ops[self.next(ops.len() as u64) as usize];
                    let (l, r) = (self.se(depth - 1), self.se(depth - 1));
                    // Comparisons are bools: converted, as the paper's
                    // int truth values are.
                    if ["<", "<=", ">", ">=", "==", "!="].contains(&op) {
                        format!("i64({l} {op} {r})")
                    } else {
                        format!("({l} {op} {r})")
                    }
                }
            }
        }

        /// An allocation size, 2 to 6.
        fn small(&mut self) -> String {
            format!("({} % 3 + 4)", self.se(2))
        }

        /// An index, sometimes out of bounds.
        fn index(&mut self) -> String {
            format!("({} % 3 + 1)", self.se(2))
        }

        fn declare(&mut self, int: bool) -> String {
            // Names may repeat in sibling scopes, never where visible.
            let name = loop {
                let c = if int { "v" } else { "m" };
                let name = format!("{c}{}", self.next(6));
                if !self.scope.iter().any(|v| v.0 == name) {
                    break name;
                }
                self.fresh += 1;
                if self.fresh.is_multiple_of(8) {
                    break format!("{c}x{}", self.fresh);
                }
            };
            self.scope.push((name.clone(), int, self.kernels, false));
            name
        }

        fn block(&mut self, depth: usize) -> String {
            let mark = self.scope.len();
            let n = 1 + self.next(5) as usize;
            let ss: Vec<String> = (0..n).map(|_| self.stmt(depth)).collect();
            self.scope.truncate(mark);
            ss.join("; ")
        }

        fn stmt(&mut self, depth: usize) -> String {
            loop {
                let s = match self.next(14) {
                    0 => Some("skip".to_string()),
                    1 | 2 => Some(format!("var {}: int", self.declare(true))),
                    3 => Some(format!("var {}: mem", self.declare(false))),
                    4 | 5 => self
                        .pick(true, true)
                        .map(|x| format!("{x} <- {}", self.se(3))),
                    6 => self
                        .pick(false, true)
                        .map(|m| format!("{m} <- alloc {}", self.small())),
                    7 => match (self.pick(false, true), self.pick(false, false)) {
                        (Some(m), Some(k)) => Some(format!("{m} <- {k}")),
                        _ => None,
                    },
                    8 => match (self.pick(true, true), self.pick(false, false)) {
                        (Some(x), Some(m)) => Some(format!("{x} <- {m}[{}]", self.index())),
                        _ => None,
                    },
                    9 => self
                        .pick(false, false)
                        .map(|m| format!("{m}[{}] <- {}", self.index(), self.se(2))),
                    10 if depth > 0 => self.pick(true, false).map(|c| {
                        let t = self.block(depth - 1);
                        let e = self.block(depth - 1);
                        format!("if {c} then {t} else {e} fi")
                    }),
                    11 if depth > 0 => {
                        let bound = format!("({} % 3 + 2)", self.se(2));
                        self.kernels += 1;
                        let mark = self.scope.len();
                        let i = format!("i{}", self.kernels);
                        self.scope.push((i.clone(), true, self.kernels, true));
                        let body = self.block(depth - 1);
                        self.scope.truncate(mark);
                        self.kernels -= 1;
                        Some(format!("kernel {i} < {bound} do {body} done"))
                    }
                    // A `for` whose bound may be <= 0.
                    12 if depth > 0 => {
                        let bound = format!("({} % 3 + 1)", self.se(2));
                        self.loops += 1;
                        let mark = self.scope.len();
                        let j = format!("j{}", self.loops);
                        self.scope.push((j.clone(), true, self.kernels, true));
                        let body = self.block(depth - 1);
                        self.scope.truncate(mark);
                        self.loops -= 1;
                        Some(format!("for {j} < {bound} do {body} done"))
                    }
                    // A `while` counting down a counter nothing else assigns.
                    13 if depth > 0 => {
                        self.fresh += 1;
                        let w = format!("w{}", self.fresh);
                        let start = format!("max({} % 4, 0)", self.se(2));
                        self.scope.push((w.clone(), true, self.kernels, true));
                        let body = self.block(depth - 1);
                        Some(format!(
                            "var {w}: int; {w} <- {start}; \
                             while {w} do {body}; {w} <- {w} - 1 done"
                        ))
                    }
                    _ => None,
                };
                if let Some(s) = s {
                    return s;
                }
            }
        }

        fn program(seed: u64) -> String {
            let mut g = Gen {
                state: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
                scope: Vec::new(),
                kernels: 0,
                loops: 0,
                fresh: 0,
            };
            for (x, int) in [("n", true), ("a", true), ("xm", false)] {
                g.scope.push((x.to_string(), int, 0, false));
            }
            let n = 2 + g.next(8) as usize;
            let body: Vec<String> = (0..n).map(|_| g.stmt(3)).collect();
            let mut outs: Vec<String> = Vec::new();
            for (x, int, _, _) in &g.scope {
                if *int {
                    outs.push(x.clone());
                } else {
                    outs.push(format!("r_{x}: [2]int @ {x} -> R(2)"));
                }
            }
            format!(
                "def main (n: int) (a: int) (xs: [n]int @ xm -> R(n)) = {} out ({})",
                body.join(";\n  "),
                outs.join(", ")
            )
        }
    }

    #[test]
    fn agrees_with_a_naive_reading_of_fig_12() {
        let mut oks = 0;
        for seed in 0..1500u64 {
            let src = Gen::program(seed);
            let p = program(&src);
            let n = (seed % 3) as i64 + 2;
            let a = (seed / 4 % 7) as i64 - 3;
            let xs: Vec<i64> = (0..n).map(|k| k * 3 - a).collect();
            let inputs = [
                Value::Scalar(Const::I64(n)),
                Value::Scalar(Const::I64(a)),
                arr(&xs),
            ];
            let got = run_imp(&p, &inputs, Limits::default(), false, &mut NoObserver);
            let want = Reference::run(&p, n, a, &xs);
            match (&got, &want) {
                (Ok(g), Ok(w)) => {
                    assert_eq!(g, w, "{src}");
                    oks += 1;
                }
                (Err(g), Err((rule, kind))) => {
                    assert_eq!((g.rule, &g.kind), (*rule, kind), "{src}\n{g}")
                }
                _ => panic!("{src}\ngot {got:?}\nwant {want:?}"),
            }
            // With the race check the result is the same, or a race.
            match run_imp(&p, &inputs, Limits::default(), true, &mut NoObserver) {
                Err(e) if e.is_race() => {}
                r => assert_eq!(r, got, "{src}"),
            }
        }
        assert!(oks > 300, "only {oks} programs ran to the end");
    }
}
