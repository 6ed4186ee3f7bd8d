//! Random well-typed FUN programs with inputs for them.
//!
//! [`gen_fun`] builds the syntax tree directly (no text), so every program
//! type-checks by construction (docs/language.md, FUN type rules) and prints
//! and parses back to itself. The programs use every construct of FUN:
//!
//! - scalar expressions with every binary operator, unary `-` and `!`,
//!   divisions and remainders, and large literals that make `+ - *` wrap;
//! - indices `x[i, j]`, slices `x[o : k, ...]` (offset and size per
//!   dimension, literal or computed), `transpose`, `iota`, `copy`;
//! - kernels nested up to `max_depth` deep, whose bodies return an int or an
//!   array whose sizes are bound outside the kernel (T-KERNEL);
//! - `if`s returning several ints, arrays of sizes bound outside the `if`,
//!   or arrays whose sizes the pattern itself binds, each branch returning
//!   its own size (`let (k: int) (ys: [k]int) = if c then ... in (a, xs)
//!   else ... in (b, zs)`, IFL 2022 fig. 2).
//!
//! - loops (`for` over a few iterations, none included; `while` over a
//!   counter `t` with `c = t < K` recomputed, so it provably ends) with int
//!   parameters, array parameters and arrays whose outer size is itself a
//!   parameter, changing between iterations; loops in kernels and kernels
//!   in loops; in-place updates `x with [j, o : k] = v` (as many indices
//!   as x's rank or fewer, in bounds unless the program is risky);
//!   `concat x y` after `let (m: int) = n1 + n2`; `replicate n v` of ints
//!   and arrays; kernels with several results. Each has a share of the
//!   programs (`GenConfig::constructs`); a share of 0 draws nothing, so with
//!   every share 0 the programs are those made before these constructs.
//!
//! Coalescing's root statements (share `root`): a fresh array (`iota`,
//! `replicate`, a kernel whose body returns a fresh array of its own,
//! `copy`, `scan`, or a `concat` of two fresh arrays) then copied,
//! concatenated (with another fresh array or one from scope), written into
//! another array (`z with [j] = row`, `z with [o : k] = part`, z fresh or a
//! unique parameter, made before or after the value), or returned from a
//! kernel's body; mostly at its last use (it and its views are hidden from
//! the statements after the root), sometimes used again (C1), the update's
//! destination read in between (C3), or a copy of an array that is not
//! fresh (C4); in risky programs the update's index is out of bounds half
//! the time. [`root_statements`] counts the candidates.
//!
//! Uniqueness. Every array has a set of *roots*, the storage it may share:
//! a fresh array (iota, copy, kernel, concat, replicate, an update's result,
//! a loop's consumed parameter) has one of its own; a slice or transpose
//! its source's; an `if`'s or loop's result those of everything from
//! outside it may be, plus one that is never consumable. An update consumes
//! only arrays all of whose roots were made in the current body (kernel,
//! loop or `if` body; unique `*` parameters at the top) and are not
//! consumed; afterwards every array sharing a root is gone from scope. A
//! loop retires the initial values of the parameters its body may consume
//! and consumes them only if the body did, as the type checker's alias
//! analysis sees it (a returned parameter may carry any initial value
//! out); such a parameter's next value is an array of the body's own that
//! no other result shares (copied if need be).
//!
//! Parameters: the size parameters come first (so sizes are earlier
//! parameters), then arrays of rank 1 to 3 over them and plain ints. Inputs
//! give sizes in `0 ..= max_size` (0 among them often enough).
//!
//! Safety. A program is *risky* with probability `fail_share`; only then may
//! it contain operations that can go wrong at run time (an index or slice
//! possibly out of bounds, a division or remainder by a possibly-zero value,
//! `iota` or a kernel over a possibly-negative size), and whatever goes
//! wrong gets stuck: sizes stay small in risky programs too, so they never
//! run out of fuel or heap. Every other program never goes wrong on any
//! input whose sizes are at most `max_size`: the generator tracks, for each
//! `int` variable, an interval it provably lies in and the sizes it is
//! provably below, and uses only indices, offsets, slice sizes, divisors and
//! sizes that these facts make safe (kernel indices over the array's own
//! size, clamps `min(max(e, 0), n - 1)` where `n >= 1` is known, `if`s that
//! test `n > 0` first, divisors `max(e, 1)` or nonzero literals).
//!
//! Error paths. A translation's bounds guards matter where an index goes
//! past its array's end yet stays inside the array's block: IMP would then
//! read a neighbouring element where FUN gets stuck. So risky programs
//! index slices past their own end inside their block (`b = a[0 : s]`
//! with `s < d`, indexed inside a kernel over `a`'s dimension `d` with the
//! kernel's index) and take an enclosing kernel's index, over another
//! size, as a risky index; and any program may hold code that never runs
//! (a kernel of zero iterations, or inside a kernel an `if` whose
//! condition `n < 0` is false) indexing arrays with indices that may be
//! out of bounds (the kernel's own index, an enclosing kernel's, literals
//! past the end): never evaluated, so safe programs stay safe, but the
//! translation must guard them all the same (the guard check, `guards`).
//!
//! Huge sizes. One program in [`HUGE_SHARE`] may also make arrays of huge
//! literal sizes (2^62 + 1, 6·10^8, `i64::MAX`) in statements that never
//! run: in an `if` whose condition is false at run time (a size below 0),
//! inside a kernel, and in kernels of zero iterations. The source never
//! evaluates them, but memory expansion hoists their allocations out of
//! the kernel, and the hoisted size arithmetic (size times iterations)
//! must neither wrap nor get stuck (it may exceed the heap limit, which
//! the checks count as inconclusive).
//!
//! Work per program is bounded: array sizes are at most
//! `max(max_size, 1) + 1` (twice that for a `concat`), and a kernel, loop,
//! `iota`, `copy`, `concat` or `replicate` is made only while the product
//! of the sizes of the enclosing kernels, the trip counts of the enclosing
//! loops and the array made stays within a fixed budget.
//!
//! Generation is deterministic: only the random number generator decides,
//! and nothing loops on rejection.

pub use crate::roots::{root_statements, RootCounts};
use crate::{Case, GenConfig, Rng};
use funmem_lang::ast::{
    ArrayType, Atom, BinOp, Body, Exp, ExpKind, Ident, Lambda, Lang, LoopForm, Pat, Program, RedOp,
    SExp, Stm, Type, UnOp, UpdIdx,
};
use funmem_lang::prim::Const;
use funmem_lang::prim::Prim;
use funmem_lang::{Name, Span};
use funmem_semantics::value::{ArrayValue, Elems, Value};
use rand::RngExt;
use std::collections::HashMap;

/// Generates a random, well-typed FUN program and inputs for it.
///
/// With probability `cfg.fail_share` the program may contain operations
/// that can go wrong at run time (and then get stuck); otherwise it runs
/// without error on its inputs. `cfg.max_stms` bounds the statements a body
/// gets at random (a few more may be added to make the values the body must
/// return), `cfg.max_depth` the nesting of kernels and `if`s, `cfg.max_size`
/// the sizes of inputs and literal sizes.
pub fn gen_fun(rng: &mut Rng, cfg: &GenConfig) -> Case {
    let share = if cfg.fail_share.is_nan() {
        0.0
    } else {
        cfg.fail_share.clamp(0.0, 1.0)
    };
    let risky = rng.random_bool(share);
    let huge = rng.random_bool(HUGE_SHARE);
    // A share of 0 draws nothing, so that with every share 0 the programs
    // are those of the generator before these constructs.
    let mut draw = |p: f64| {
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        p > 0.0 && rng.random_bool(p)
    };
    let c = &cfg.constructs;
    let on = On {
        loops: draw(c.loops),
        update: draw(c.update),
        concat: draw(c.concat),
        replicate: draw(c.replicate),
        multi: draw(c.multi_kernel),
        types: draw(c.types),
        reduce: draw(c.reduce),
        scan: draw(c.scan),
        row: draw(c.index_row),
        conversions: false,
        root: draw(c.root),
        host: draw(c.host),
    };
    let max_size = cfg.max_size.clamp(0, 1 << 20);
    let max_stms = cfg.max_stms.max(1);
    let mut g = Gen {
        rng,
        max_stms,
        max_depth: cfg.max_depth,
        max_size,
        cap: max_size.max(1) + 1,
        risky,
        huge,
        next: 0,
        vars: Vec::new(),
        scopes: vec![0],
        depth: 0,
        mult: 1,
        actions_left: max_stms * (cfg.max_depth.min(8) + 2) * 2,
        kernels: Vec::new(),
        on,
        prefer: None,
        made: On::default(),
        roots: HashMap::new(),
        root_body: Vec::new(),
        retired: Vec::new(),
        bodies: vec![0],
        next_body: 1,
    };
    g.program()
}

/// Most element-iterations one array or kernel nest may cost: the product of
/// the sizes of the enclosing kernels and of the array (or kernel) made.
const BUDGET: i64 = 4096;

/// In a risky program, the chance that an operation that could go wrong is
/// made so that it may.
const RISK: f64 = 0.3;

/// The share of programs that make arrays of huge sizes in statements
/// that never run.
pub const HUGE_SHARE: f64 = 1.0 / 8.0;

/// Huge sizes: the product with 2 or more iterations wraps (2^62 + 1,
/// `i64::MAX`) or exceeds the default heap limit (6·10^8).
pub const HUGE: [i64; 3] = [(1 << 62) + 1, 600_000_000, i64::MAX];

/// Literals that make arithmetic wrap (none is zero).
const LARGE: [i64; 8] = [
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
    i64::MIN + 1,
    1 << 62,
    -(1 << 62),
    1 << 32,
    3_037_000_500,
];

/// What the generator knows about an `int` variable: `lo <= v <= hi`, and
/// `0 <= v < b` for every atom `b` in `below`.
#[derive(Clone, Debug)]
struct Range {
    lo: i64,
    hi: i64,
    below: Vec<Atom>,
}

impl Range {
    fn any() -> Range {
        Range::new(i64::MIN, i64::MAX)
    }

    fn new(lo: i64, hi: i64) -> Range {
        Range {
            lo,
            hi: hi.max(lo),
            below: Vec::new(),
        }
    }

    fn below(lo: i64, hi: i64, b: Atom) -> Range {
        Range {
            below: vec![b],
            ..Range::new(lo, hi)
        }
    }

    /// What holds of a value that is one of two values.
    fn union(&self, o: &Range) -> Range {
        Range {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            below: self
                .below
                .iter()
                .filter(|b| o.below.contains(b))
                .cloned()
                .collect(),
        }
    }
}

/// A variable's type, with what is known of an `int`; `Gone` for an array
/// consumed by an in-place update (or one that may alias it), which must
/// not be used again.
#[derive(Clone, Debug)]
enum Ty {
    Int(Range),
    Arr(Vec<Atom>),
    /// A scalar of another type than `i64`; `true` when it is *fuzzy*.
    Sc(Prim, bool),
    /// An array of elements of another type than `i64` (never consumed);
    /// `true` when its elements are fuzzy.
    TArr(Vec<Atom>, Prim, bool),
    Gone,
}

impl Ty {
    fn shape(&self) -> Option<&[Atom]> {
        match self {
            Ty::Arr(s) => Some(s),
            Ty::Int(_) | Ty::Sc(..) | Ty::TArr(..) | Ty::Gone => None,
        }
    }

    fn range(&self) -> Option<&Range> {
        match self {
            Ty::Int(r) => Some(r),
            Ty::Arr(_) | Ty::Sc(..) | Ty::TArr(..) | Ty::Gone => None,
        }
    }

    fn syntax(&self) -> Type {
        match self {
            Ty::Int(_) | Ty::Gone => Type::int(Span::DUMMY),
            Ty::Sc(t, _) => Type::Prim(*t, Span::DUMMY),
            Ty::Arr(shape) => Type::Array(
                ArrayType {
                    shape: shape.clone(),
                    elem: Prim::I64,
                    mem: None,
                },
                Span::DUMMY,
            ),
            Ty::TArr(shape, t, _) => Type::Array(
                ArrayType {
                    shape: shape.clone(),
                    elem: *t,
                    mem: None,
                },
                Span::DUMMY,
            ),
        }
    }
}

#[derive(Clone, Debug)]
struct Var {
    name: Name,
    ty: Ty,
}

/// A dimension of an array in an `if` pattern: a size bound outside, or the
/// pattern's own k-th size.
#[derive(Clone, Debug)]
enum Dim {
    Outer(Atom),
    Pat(usize),
}

/// One binding of an `if` pattern.
#[derive(Clone, Debug)]
enum Item {
    Size,
    Int,
    Arr(Vec<Dim>),
}

/// The kinds of random statement.
#[derive(Clone, Copy, Debug)]
enum Action {
    Scalar,
    Size,
    Index,
    Slice,
    Transpose,
    Iota,
    Copy,
    Kernel,
    If,
    Huge,
    Stray,
    Dead,
    Loop,
    Update,
    Concat,
    Replicate,
    Typed,
    Convert,
    TKernel,
    TIndex,
    Row,
    Reduce,
    Scan,
    Root,
    Host,
}

/// Which constructs of issues 18 and 19 a program may use (or, counted,
/// how many it has).
#[derive(Clone, Copy, Debug, Default)]
struct On<T = bool> {
    loops: T,
    update: T,
    concat: T,
    replicate: T,
    multi: T,
    types: T,
    reduce: T,
    scan: T,
    row: T,
    conversions: T,
    root: T,
    host: T,
}

/// How an array in scope gives one of another shape at no cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fit {
    Same,
    Transposed,
    Sliced,
}

/// Ways to make an array of a given shape.
#[derive(Clone, Copy, Debug)]
enum Make {
    Reuse(usize),
    Copy(usize),
    Transpose(usize),
    Slice(usize),
    Iota,
    Kernel,
    If,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    max_stms: usize,
    max_depth: usize,
    max_size: i64,
    /// Largest size an array dimension may have.
    cap: i64,
    risky: bool,
    /// Whether statements that never run may make arrays of huge sizes.
    huge: bool,
    /// Counter for fresh names: every name in a program is distinct.
    next: usize,
    /// The variables in scope, innermost last.
    vars: Vec<Var>,
    /// Where each open scope starts in `vars`.
    scopes: Vec<usize>,
    /// Nesting of kernel and `if` bodies around the current body.
    depth: usize,
    /// Product of the sizes of the enclosing kernels.
    mult: i64,
    /// Random statements left for the whole program.
    actions_left: usize,
    /// The enclosing kernels: index and bound, innermost last.
    kernels: Vec<(Name, Atom)>,
    /// The constructs this program may use.
    on: On,
    /// A host scalar that `leaf` and `condition` use often while set
    /// (the `host` construct's use of a read).
    prefer: Option<Name>,
    /// How many of each it has made.
    made: On<usize>,
    /// Uniqueness. The storage each array variable may share (names are
    /// unique in a program, so this outlives scopes): a set of roots; a
    /// slice or transpose has its source's roots, a fresh array a root of
    /// its own.
    roots: HashMap<Name, Vec<usize>>,
    /// Per root: the body in which it may be consumed (the one that made
    /// it; `None`: never, e.g. a parameter that is not unique) and whether
    /// it has been.
    root_body: Vec<(Option<usize>, bool)>,
    /// Roots no longer usable (consumed, or maybe consumed by a loop).
    retired: Vec<usize>,
    /// The open bodies (kernel, loop and `if` bodies), innermost last.
    bodies: Vec<usize>,
    /// The next body's number.
    next_body: usize,
}

fn ident(x: &Name) -> Ident {
    Ident {
        name: x.clone(),
        span: Span::DUMMY,
    }
}

fn var(x: &Name) -> Atom {
    Atom::Var(ident(x))
}

fn lit(k: i64) -> Atom {
    Atom::Int(k, Span::DUMMY)
}

fn se(a: &Atom) -> SExp {
    SExp::Atom(a.clone())
}

fn min(a: SExp, b: SExp) -> SExp {
    SExp::bin(BinOp::Min, a, b)
}

fn max(a: SExp, b: SExp) -> SExp {
    SExp::bin(BinOp::Max, a, b)
}

fn stm(pats: Vec<Pat>, kind: ExpKind) -> Stm {
    Stm {
        pats,
        exp: Exp {
            kind,
            span: Span::DUMMY,
        },
        span: Span::DUMMY,
    }
}

fn pat(x: &Name, ty: &Ty) -> Pat {
    Pat {
        unique: false,
        name: ident(x),
        ty: ty.syntax(),
        span: Span::DUMMY,
    }
}

/// Whether `op` compares (and gives a `bool`).
fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    )
}

/// `i64(e)`: the paper's int truth value of a `bool` (1 or 0).
fn truth(e: SExp) -> SExp {
    SExp::Un(UnOp::Conv(Prim::I64), Box::new(e), Span::DUMMY)
}

/// The neutral element of `op` on `t`: 0, 1, the largest or smallest
/// value (infinities for floats), `true` or `false`.
fn neutral(op: BinOp, t: Prim) -> Const {
    match (op, t) {
        (BinOp::Mul, _) => one(t),
        (BinOp::Min, Prim::I32) => Const::I32(i32::MAX),
        (BinOp::Min, Prim::I64) => Const::I64(i64::MAX),
        (BinOp::Min, Prim::F32) => Const::f32(f32::INFINITY),
        (BinOp::Min, Prim::F64) => Const::f64(f64::INFINITY),
        (BinOp::Max, Prim::I32) => Const::I32(i32::MIN),
        (BinOp::Max, Prim::I64) => Const::I64(i64::MIN),
        (BinOp::Max, Prim::F32) => Const::f32(f32::NEG_INFINITY),
        (BinOp::Max, Prim::F64) => Const::f64(f64::NEG_INFINITY),
        (BinOp::And, _) => Const::Bool(true),
        _ => t.zero(),
    }
}

/// 1 of type `t` (`true` for `bool`).
fn one(t: Prim) -> Const {
    match t {
        Prim::Bool => Const::Bool(true),
        Prim::I32 => Const::I32(1),
        Prim::I64 => Const::I64(1),
        Prim::F32 => Const::f32(1.0),
        Prim::F64 => Const::f64(1.0),
    }
}

fn body(stms: Vec<Stm>, result: &[Name]) -> Body {
    Body {
        stms,
        result: result.iter().map(ident).collect(),
        span: Span::DUMMY,
    }
}

impl Gen<'_> {
    // ----- randomness -----

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// A number in `0 .. n` (`n > 0`).
    fn upto(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// A number in `lo ..= hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.random_range(lo..=hi.max(lo))
    }

    /// Index of a choice drawn with the given weights (not all zero).
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut k = self.rng.random_range(0..total.max(1));
        for (i, &w) in weights.iter().enumerate() {
            if k < w {
                return i;
            }
            k -= w;
        }
        0
    }

    fn small_lit(&mut self) -> i64 {
        self.between(-9, 9)
    }

    /// A literal: usually small, sometimes one that makes arithmetic wrap.
    fn any_lit(&mut self) -> i64 {
        match self.upto(20) {
            0..=2 => LARGE[self.upto(LARGE.len())],
            3 => self.rng.random(),
            _ => self.small_lit(),
        }
    }

    fn nonzero_lit(&mut self) -> i64 {
        match self.upto(10) {
            0 => LARGE[self.upto(LARGE.len())],
            1 => -1,
            _ => {
                let k = self.between(1, 9);
                if self.chance(0.3) {
                    -k
                } else {
                    k
                }
            }
        }
    }

    fn fresh(&mut self, prefix: &str) -> Name {
        let mut text = format!("{prefix}{}", self.next);
        self.next += 1;
        // `i32`, `f64`, ... are type names, not variables.
        while Prim::from_name(&text).is_some() {
            text = format!("{prefix}{}", self.next);
            self.next += 1;
        }
        Name::new(&text)
    }

    // ----- scopes and facts -----

    fn scope_start(&self) -> usize {
        self.scopes.last().copied().unwrap_or(0)
    }

    fn open(&mut self) {
        self.scopes.push(self.vars.len());
        self.bodies.push(self.next_body);
        self.next_body += 1;
    }

    fn close(&mut self) {
        if let Some(m) = self.scopes.pop() {
            self.vars.truncate(m);
        }
        self.bodies.pop();
    }

    // ----- uniqueness -----

    fn body_now(&self) -> usize {
        self.bodies.last().copied().unwrap_or(0)
    }

    /// A new root, consumable in the current body or never.
    fn new_root(&mut self, consumable: bool) -> usize {
        let b = consumable.then(|| self.body_now());
        self.root_body.push((b, false));
        self.root_body.len() - 1
    }

    fn roots_of(&self, x: &Name) -> &[usize] {
        self.roots.get(x).map_or(&[], Vec::as_slice)
    }

    /// Whether the array `x` may be consumed here: everything it may share
    /// was made in this very body (or is a unique parameter of it) and is
    /// not consumed yet.
    fn consumable(&self, x: &Name) -> bool {
        let rs = self.roots_of(x);
        let now = self.body_now();
        !rs.is_empty()
            && rs.iter().all(|&r| {
                self.root_body.get(r) == Some(&(Some(now), false)) && !self.retired.contains(&r)
            })
    }

    /// Consumes `x`: it and every array that may share its storage are
    /// gone for good.
    fn consume(&mut self, x: &Name) {
        let rs = self.roots_of(x).to_vec();
        for &r in &rs {
            if let Some(e) = self.root_body.get_mut(r) {
                e.1 = true;
            }
        }
        self.retire(&rs);
    }

    /// Makes every array that may share one of the roots `rs` unusable
    /// (without consuming them: a loop whose body may consume its
    /// parameter retires the initial value, which it consumes only if the
    /// body does).
    fn retire(&mut self, rs: &[usize]) {
        self.retired.extend(rs.iter().copied());
        for i in 0..self.vars.len() {
            if self.vars[i].ty.shape().is_some()
                && self
                    .roots_of(&self.vars[i].name)
                    .iter()
                    .any(|r| rs.contains(r))
            {
                self.vars[i].ty = Ty::Gone;
            }
        }
    }

    /// The roots of a value that is one of the arrays `xs`, seen from the
    /// current body (after the bodies that made them closed): the roots of
    /// arrays from here or outside, which it may share, plus a root that
    /// is never consumable; or, when all were made in the closed bodies, a
    /// fresh consumable root.
    fn joined_roots(&mut self, xs: &[&Name]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for x in xs {
            for &r in self.roots_of(x) {
                let seen = match self.root_body.get(r) {
                    Some((Some(b), _)) => self.bodies.contains(b),
                    _ => true,
                };
                if seen && !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        let consumable = out.is_empty();
        out.push(self.new_root(consumable));
        out
    }

    /// Results of one `if` or `loop` whose inner values may share storage
    /// (a body returning one array twice) share their roots, as the type
    /// checker's alias sets do: `pats[k]` came from the inner names
    /// `inner[k]`.
    fn share_roots(&mut self, pats: &[Name], inner: &[Vec<Name>]) {
        let inner_roots: Vec<Vec<usize>> = inner
            .iter()
            .map(|xs| xs.iter().flat_map(|x| self.roots_of(x).to_vec()).collect())
            .collect();
        for k in 0..pats.len() {
            for j in k + 1..pats.len() {
                let shared = inner_roots[k].iter().any(|r| inner_roots[j].contains(r));
                if !shared
                    || !self.roots.contains_key(&pats[k])
                    || !self.roots.contains_key(&pats[j])
                {
                    continue;
                }
                let mut all = self.roots_of(&pats[k]).to_vec();
                for &r in self.roots_of(&pats[j]) {
                    if !all.contains(&r) {
                        all.push(r);
                    }
                }
                self.roots.insert(pats[k].clone(), all.clone());
                self.roots.insert(pats[j].clone(), all);
            }
        }
    }

    fn bind(&mut self, name: Name, ty: Ty) {
        self.vars.push(Var { name, ty });
    }

    fn find(&self, x: &Name) -> Option<usize> {
        self.vars.iter().rposition(|v| &v.name == x)
    }

    /// The interval an atom provably lies in.
    fn bounds(&self, a: &Atom) -> (i64, i64) {
        match a {
            Atom::Int(k, _) => (*k, *k),
            Atom::Const(..) => (i64::MIN, i64::MAX),
            Atom::Var(x) => match self.find(&x.name).map(|i| &self.vars[i].ty) {
                Some(Ty::Int(r)) => (r.lo, r.hi),
                _ => (i64::MIN, i64::MAX),
            },
        }
    }

    fn range_of(&self, x: &Name) -> Range {
        match self.find(x).map(|i| &self.vars[i].ty) {
            Some(Ty::Int(r)) => r.clone(),
            _ => Range::any(),
        }
    }

    /// Whether an int with these facts may be an array size.
    fn size_like(&self, r: &Range) -> bool {
        r.lo >= 0 && r.hi <= self.cap
    }

    /// Product of the largest values of the sizes (each at least 1).
    fn cells(&self, shape: &[Atom]) -> i64 {
        shape
            .iter()
            .fold(1i64, |acc, a| acc.saturating_mul(self.bounds(a).1.max(1)))
    }

    /// Whether `i` is provably a valid index into a dimension of size `d`.
    fn safe_index(&self, r: &Range, d: &Atom) -> bool {
        r.lo >= 0 && (r.below.contains(d) || r.hi < self.bounds(d).0)
    }

    fn count_vars(&self, from: usize, pred: &impl Fn(&Self, &Var) -> bool) -> usize {
        self.vars[from..].iter().filter(|v| pred(self, v)).count()
    }

    /// A random variable from `vars[from..]` that satisfies `pred`.
    fn pick_var(&mut self, from: usize, pred: impl Fn(&Self, &Var) -> bool) -> Option<usize> {
        let n = self.count_vars(from, &pred);
        if n == 0 {
            return None;
        }
        let k = self.upto(n);
        self.vars[from..]
            .iter()
            .enumerate()
            .filter(|(_, v)| pred(self, v))
            .nth(k)
            .map(|(i, _)| from + i)
    }

    fn pick_name(&mut self, pred: impl Fn(&Self, &Var) -> bool) -> Option<Name> {
        self.pick_var(0, pred).map(|i| self.vars[i].name.clone())
    }

    fn has_var(&self, pred: impl Fn(&Self, &Var) -> bool) -> bool {
        self.vars.iter().any(|v| pred(self, v))
    }

    /// A size-like atom: a variable or a literal in `0 ..= max_size`.
    fn size_atom(&mut self) -> Atom {
        if self.chance(0.7) {
            if let Some(x) = self.pick_name(|g, v| v.ty.range().is_some_and(|r| g.size_like(r))) {
                return var(&x);
            }
        }
        lit(self.between(0, self.max_size))
    }

    // ----- emitting statements -----

    /// Emits `let (x: ty) = kind` with a fresh `x`, binds it and returns it.
    fn emit(&mut self, out: &mut Vec<Stm>, prefix: &str, ty: Ty, kind: ExpKind) -> Name {
        let x = self.fresh(prefix);
        if ty.shape().is_some() {
            let roots = match &kind {
                ExpKind::Slice(y, _) | ExpKind::Transpose(y) | ExpKind::Index(y, _) => {
                    self.roots_of(&y.name).to_vec()
                }
                ExpKind::If(_, t, e) => {
                    let names: Vec<&Name> =
                        t.result.iter().chain(&e.result).map(|i| &i.name).collect();
                    let names: Vec<Name> = names.into_iter().cloned().collect();
                    let refs: Vec<&Name> = names.iter().collect();
                    self.joined_roots(&refs)
                }
                _ => vec![self.new_root(true)],
            };
            self.roots.insert(x.clone(), roots);
        }
        out.push(stm(vec![pat(&x, &ty)], kind));
        self.bind(x.clone(), ty);
        x
    }

    fn emit_int(&mut self, out: &mut Vec<Stm>, prefix: &str, e: SExp, r: Range) -> Name {
        self.emit(out, prefix, Ty::Int(r), ExpKind::Scalar(e))
    }

    // ----- scalar expressions -----

    /// A random scalar expression of at most `depth` operator levels that
    /// cannot get stuck (unless the program is risky).
    fn sexp(&mut self, depth: u32) -> SExp {
        if depth == 0 || self.chance(0.25) {
            return self.leaf();
        }
        if self.chance(0.12) {
            let op = if self.chance(0.5) {
                UnOp::Neg
            } else {
                UnOp::Not
            };
            // `-k` of a literal is itself a literal, so fold it.
            return match self.sexp(depth - 1) {
                SExp::Atom(Atom::Int(k, _)) => SExp::int(match op {
                    UnOp::Not => i64::from(k == 0),
                    _ => k.wrapping_neg(),
                }),
                e => SExp::Un(op, Box::new(e), Span::DUMMY),
            };
        }
        let op = BinOp::ALL[self.upto(BinOp::ALL.len())];
        let l = self.sexp(depth - 1);
        let r = if matches!(op, BinOp::Div | BinOp::Rem) {
            self.divisor(depth - 1)
        } else {
            self.sexp(depth - 1)
        };
        if is_cmp(op) {
            return truth(SExp::bin(op, l, r));
        }
        SExp::bin(op, l, r)
    }

    /// An int variable (often one bound in the current body) or a literal.
    fn leaf(&mut self) -> SExp {
        if let Some(p) = self.prefer.clone() {
            if self.has_var(|_, v| v.name == p) && self.chance(0.5) {
                return SExp::var(&p);
            }
        }
        if self.chance(0.7) {
            let local = self.chance(0.5);
            let from = if local { self.scope_start() } else { 0 };
            let pick = self
                .pick_var(from, |_, v| v.ty.range().is_some())
                .or_else(|| self.pick_var(0, |_, v| v.ty.range().is_some()));
            if let Some(i) = pick {
                return SExp::var(&self.vars[i].name.clone());
            }
        }
        if self.on.types && self.chance(0.1) {
            if let Some(e) = self.convert_leaf(Prim::I64) {
                return e;
            }
        }
        SExp::int(self.any_lit())
    }

    /// A divisor that is provably nonzero (or, in a risky program, maybe
    /// one that may be zero).
    fn divisor(&mut self, depth: u32) -> SExp {
        if self.risky && self.chance(RISK) {
            let zeroish =
                self.pick_name(|_, v| v.ty.range().is_some_and(|r| r.lo <= 0 && r.hi >= 0));
            return match zeroish {
                Some(x) => SExp::var(&x),
                None => self.sexp(depth),
            };
        }
        match self.upto(4) {
            0 => SExp::int(self.nonzero_lit()),
            1 => {
                let e = self.sexp(depth);
                max(e, SExp::int(self.between(1, 5)))
            }
            2 => {
                let e = self.sexp(depth);
                min(e, SExp::int(-self.between(1, 5)))
            }
            _ => match self.pick_name(|_, v| v.ty.range().is_some_and(|r| r.lo > 0 || r.hi < 0)) {
                Some(x) => SExp::var(&x),
                None => SExp::int(self.nonzero_lit()),
            },
        }
    }

    // ----- sizes and indices -----

    /// Binds a new size-like int: a clamp, a literal, or arithmetic on sizes.
    fn new_size(&mut self, out: &mut Vec<Stm>) -> Name {
        let d = self.pick_name(|g, v| v.ty.range().is_some_and(|r| g.size_like(r)));
        let (lo, hi) = d.as_ref().map_or((0, 0), |x| self.bounds(&var(x)));
        match (self.upto(6), d) {
            (1, _) => {
                let k = self.between(0, self.max_size);
                self.emit_int(out, "s", SExp::int(k), Range::new(k, k))
            }
            (2, Some(d)) if hi < self.cap => self.emit_int(
                out,
                "s",
                SExp::bin(BinOp::Add, SExp::var(&d), SExp::int(1)),
                Range::new(lo + 1, hi + 1),
            ),
            (3, Some(d)) => self.emit_int(
                out,
                "s",
                max(SExp::var(&d), SExp::int(1)),
                Range::new(lo.max(1), hi.max(1)),
            ),
            (4, Some(d)) => {
                let e = self.size_atom();
                let (lo2, hi2) = self.bounds(&e);
                let (e, r) = if self.chance(0.5) {
                    (
                        min(SExp::var(&d), se(&e)),
                        Range::new(lo.min(lo2), hi.min(hi2)),
                    )
                } else {
                    (
                        max(SExp::var(&d), se(&e)),
                        Range::new(lo.max(lo2), hi.max(hi2)),
                    )
                };
                self.emit_int(out, "s", e, r)
            }
            (5, Some(d)) => self.emit_int(
                out,
                "s",
                SExp::bin(BinOp::Div, SExp::var(&d), SExp::int(2)),
                Range::new(lo / 2, hi / 2),
            ),
            _ => {
                let k = self.between(0, self.max_size);
                let e = self.sexp(2);
                self.emit_int(
                    out,
                    "s",
                    min(max(e, SExp::int(0)), SExp::int(k)),
                    Range::new(0, k),
                )
            }
        }
    }

    /// A size that may be negative (risky programs): `d - k`.
    fn risky_size(&mut self, out: &mut Vec<Stm>) -> Atom {
        let d = self.size_atom();
        let (lo, hi) = self.bounds(&d);
        let k = self.between(1, 3);
        let e = SExp::bin(BinOp::Sub, se(&d), SExp::int(k));
        var(&self.emit_int(out, "s", e, Range::new(lo - k, hi - k)))
    }

    /// A provably valid index into a dimension of size `d`, made if need
    /// be; `None` when `d` may be 0 and no variable is known to be below it.
    fn index_for(&mut self, out: &mut Vec<Stm>, d: &Atom) -> Option<Atom> {
        let existing = |g: &Self, v: &Var| v.ty.range().is_some_and(|r| g.safe_index(r, d));
        let (lo, hi) = self.bounds(d);
        if lo < 1 || self.chance(0.7) {
            if let Some(x) = self.pick_name(existing) {
                return Some(var(&x));
            }
        }
        if lo < 1 {
            return None;
        }
        let r = Range::below(0, hi - 1, d.clone());
        Some(match self.upto(4) {
            0 => lit(self.between(0, (lo - 1).min(self.cap))),
            1 => var(&self.emit_int(out, "j", SExp::bin(BinOp::Sub, se(d), SExp::int(1)), r)),
            2 => {
                // (v + k) % d, for a small non-negative v.
                let v = self.pick_name(|g, v| v.ty.range().is_some_and(|r| g.size_like(r)));
                let sum = match v {
                    Some(v) => SExp::bin(BinOp::Add, SExp::var(&v), SExp::int(self.between(0, 3))),
                    None => SExp::int(self.between(0, 9)),
                };
                var(&self.emit_int(out, "j", SExp::bin(BinOp::Rem, sum, se(d)), r))
            }
            _ => {
                let e = self.sexp(2);
                let clamp = min(
                    max(e, SExp::int(0)),
                    SExp::bin(BinOp::Sub, se(d), SExp::int(1)),
                );
                var(&self.emit_int(out, "j", clamp, r))
            }
        })
    }

    /// An index that may be out of bounds for a dimension of size `d`:
    /// often an enclosing kernel's index over another size, the access a
    /// translation may wrongly take as in bounds.
    fn risky_index(&mut self, out: &mut Vec<Stm>, d: &Atom) -> Atom {
        let others = self.kernels.iter().filter(|(_, n)| n != d).count();
        if others > 0 && self.chance(0.6) {
            let k = self.upto(others);
            if let Some((i, _)) = self.kernels.iter().filter(|(_, n)| n != d).nth(k) {
                return var(i);
            }
        }
        match self.upto(4) {
            0 => match self.pick_name(|_, v| v.ty.range().is_some()) {
                Some(x) => var(&x),
                None => d.clone(),
            },
            1 => lit(self.between(0, self.cap + 1)),
            2 => d.clone(),
            _ => {
                let (lo, hi) = self.bounds(d);
                let k = self.between(1, 2);
                let e = SExp::bin(BinOp::Sub, se(d), SExp::int(k));
                let r = Range::new(lo.saturating_sub(k), hi.saturating_sub(k));
                var(&self.emit_int(out, "j", e, r))
            }
        }
    }

    // ----- random statements -----

    /// Appends about `target` random statements to `out`.
    fn stms(&mut self, out: &mut Vec<Stm>, target: usize) {
        let start = out.len();
        let mut tries = 0;
        while out.len() - start < target && self.actions_left > 0 && tries < 3 * target {
            tries += 1;
            self.actions_left -= 1;
            self.action(out);
        }
    }

    fn action(&mut self, out: &mut Vec<Stm>) {
        const KINDS: [Action; 25] = [
            Action::Scalar,
            Action::Size,
            Action::Index,
            Action::Slice,
            Action::Transpose,
            Action::Iota,
            Action::Copy,
            Action::Kernel,
            Action::If,
            Action::Huge,
            Action::Stray,
            Action::Dead,
            Action::Loop,
            Action::Update,
            Action::Concat,
            Action::Replicate,
            Action::Typed,
            Action::Convert,
            Action::TKernel,
            Action::TIndex,
            Action::Row,
            Action::Reduce,
            Action::Scan,
            Action::Root,
            Action::Host,
        ];
        let has_arr = self.has_var(|_, v| v.ty.shape().is_some());
        // Inside kernels, index the arrays the kernel indices fit more often.
        let fitting = has_arr && self.depth > 0 && self.has_fitting_index();
        let has_2d = self.has_var(|_, v| v.ty.shape().is_some_and(|s| s.len() == 2));
        let nest = self.depth < self.max_depth;
        let w = |b: bool, k: u32| if b { k } else { 0 };
        let weights = [
            5,
            2,
            if fitting { 14 } else { w(has_arr, 5) },
            w(has_arr, 3),
            w(has_2d, 2),
            2,
            w(has_arr, 1),
            w(nest, 6),
            w(nest, 4),
            w(self.huge && nest, 2),
            w(self.risky && has_arr, if self.depth > 0 { 6 } else { 2 }),
            w(has_arr && nest, 1),
            w(self.on.loops && nest, 3),
            w(self.on.update && has_arr, 4),
            w(self.on.concat && has_arr, 2),
            w(self.on.replicate, 2),
            w(self.on.types, 5),
            w(self.on.types, 2),
            w(self.on.types && nest, 3),
            w(self.on.types, 2),
            w(self.on.row, 3),
            w(self.on.reduce, 3),
            w(self.on.scan, 3),
            w(self.on.root, 5),
            // Last, so that with the construct off the other weights draw
            // as before.
            w(self.on.host && has_arr && self.kernels.is_empty(), 6),
        ];
        let done = match KINDS[self.weighted(&weights)] {
            Action::Scalar => false,
            Action::Size => {
                self.new_size(out);
                true
            }
            Action::Index => self.act_index(out),
            Action::Slice => self.act_slice(out),
            Action::Transpose => self.act_transpose(out),
            Action::Iota => self.act_iota(out),
            Action::Copy => self.act_copy(out),
            Action::Kernel => self.act_kernel(out),
            Action::If => self.act_if(out),
            Action::Huge => self.act_huge(out),
            Action::Stray => self.act_stray(out),
            Action::Dead => self.act_dead(out),
            Action::Loop => self.act_loop(out),
            Action::Update => self.act_update(out, false),
            Action::Concat => self.act_concat(out),
            Action::Replicate => self.act_replicate(out),
            Action::Typed => self.act_typed(out),
            Action::Convert => self.act_convert(out),
            Action::TKernel => self.act_tkernel(out),
            Action::TIndex => self.act_tindex(out),
            Action::Row => self.act_row(out),
            Action::Reduce => self.act_reduce(out, false),
            Action::Scan => self.act_reduce(out, true),
            Action::Root => self.act_root(out),
            Action::Host => self.act_host(out),
        };
        if !done {
            let d = self.between(1, 3) as u32;
            let e = self.sexp(d);
            self.emit_int(out, "x", e, Range::any());
        }
    }

    /// Whether some array has a dimension that an int in scope is known to
    /// be below (a kernel index over it, say).
    fn has_fitting_index(&self) -> bool {
        self.vars.iter().any(|v| self.fits_index(v))
    }

    fn fits_index(&self, v: &Var) -> bool {
        v.ty.shape().is_some_and(|s| {
            s.iter().any(|d| {
                self.vars.iter().any(|i| {
                    i.ty.range()
                        .is_some_and(|r| r.lo >= 0 && r.below.contains(d))
                })
            })
        })
    }

    /// Risky programs: `let (b: ...) = a[o : k, ...]`, then `b[...]` with
    /// one index that may be past `b`'s own end but inside `a`'s block,
    /// which must get stuck (E-INDEX), not read a neighbouring element of
    /// `a`. Inside a kernel over a dimension `d` of `a`, that dimension is
    /// cut to `0 : s` with `s < d` and indexed with the kernel's index.
    fn act_stray(&mut self, out: &mut Vec<Stm>) -> bool {
        // Arrays with a dimension that an enclosing kernel runs over.
        let over = |g: &Self, v: &Var| {
            v.ty.shape()
                .is_some_and(|s| s.iter().any(|d| g.kernels.iter().any(|(_, n)| n == d)))
        };
        let pick = if self.chance(0.8) {
            self.pick_var(0, over)
        } else {
            None
        };
        let Some(a) = pick.or_else(|| self.pick_var(0, |_, v| v.ty.shape().is_some())) else {
            return false;
        };
        let name = self.vars[a].name.clone();
        let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        // The dimension to cut and the kernel index to go past it with.
        let cut: Vec<(usize, Name)> = shape
            .iter()
            .enumerate()
            .flat_map(|(k, d)| {
                self.kernels
                    .iter()
                    .filter(move |(_, n)| n == d)
                    .map(move |(i, _)| (k, i.clone()))
            })
            .collect();
        let cut = (!cut.is_empty()).then(|| cut[self.upto(cut.len())].clone());
        let mut pairs = Vec::with_capacity(shape.len());
        for (k, d) in shape.iter().enumerate() {
            if cut.as_ref().is_some_and(|(c, _)| *c == k) {
                let (lo, hi) = self.bounds(d);
                let (e, r) = if self.chance(0.5) {
                    (
                        SExp::bin(BinOp::Div, se(d), SExp::int(2)),
                        Range::new(lo / 2, hi / 2),
                    )
                } else {
                    (
                        max(SExp::bin(BinOp::Sub, se(d), SExp::int(1)), SExp::int(0)),
                        Range::new((lo - 1).max(0), (hi - 1).max(0)),
                    )
                };
                let s = self.emit_int(out, "s", e, r);
                pairs.push((lit(0), var(&s)));
            } else {
                pairs.push(self.slice_for(out, d));
            }
        }
        let sliced: Vec<Atom> = pairs.iter().map(|(_, n)| n.clone()).collect();
        let b = self.emit(
            out,
            "b",
            Ty::Arr(sliced.clone()),
            ExpKind::Slice(ident(&name), pairs),
        );
        match cut {
            Some((c, i)) => {
                let mut idx = Vec::with_capacity(sliced.len());
                for (k, d) in sliced.iter().enumerate() {
                    idx.push(if k == c {
                        var(&i)
                    } else {
                        self.index_for(out, d).unwrap_or_else(|| lit(0))
                    });
                }
                self.emit(
                    out,
                    "x",
                    Ty::Int(Range::any()),
                    ExpKind::Index(ident(&b), idx),
                );
            }
            None => {
                let risky_dim = self.upto(sliced.len());
                self.emit_index(out, &b, &sliced, Some(risky_dim));
            }
        }
        true
    }

    /// Code that never runs, with indices that may be out of bounds (an
    /// enclosing kernel's index over another size, a literal past the end):
    /// `kernel i < 0 do ... a[...] ...`, or inside a kernel `if c then ...
    /// a[...] ... else 0` with `c = n < 0` for a size `n`. Safe programs
    /// may have it: the translation must still guard every such access.
    fn act_dead(&mut self, out: &mut Vec<Stm>) -> bool {
        let Some(a) = self.pick_var(0, |_, v| v.ty.shape().is_some()) else {
            return false;
        };
        let name = self.vars[a].name.clone();
        let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        let index = |g: &mut Self| {
            let mut stms = Vec::new();
            let idx: Vec<Atom> = shape.iter().map(|d| g.risky_index(&mut stms, d)).collect();
            let x = g.fresh("x");
            stms.push(stm(
                vec![pat(&x, &Ty::Int(Range::any()))],
                ExpKind::Index(ident(&name), idx),
            ));
            (stms, x)
        };
        if !self.kernels.is_empty() && self.chance(0.5) {
            self.emit_never_taken(out, |g| {
                g.open();
                let made = index(g);
                g.close();
                made
            });
        } else {
            let i = self.fresh("i");
            self.open();
            self.bind(i.clone(), Ty::Int(Range::new(0, 0)));
            self.kernels.push((i.clone(), lit(0)));
            let (kb, x) = index(self);
            self.kernels.pop();
            self.close();
            let kind = ExpKind::Kernel(ident(&i), lit(0), body(kb, &[x]));
            self.emit(out, "k", Ty::Arr(vec![lit(0)]), kind);
        }
        true
    }

    /// `let (x: int) = a[i, ...]`, guarded by an `if` when a dimension may
    /// be empty.
    fn act_index(&mut self, out: &mut Vec<Stm>) -> bool {
        let fitting = if self.chance(0.7) {
            self.pick_var(0, |g, v| g.fits_index(v))
        } else {
            None
        };
        let Some(a) = fitting.or_else(|| self.pick_var(0, |_, v| v.ty.shape().is_some())) else {
            return false;
        };
        let name = self.vars[a].name.clone();
        let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        let risky_dim = (self.risky && self.chance(RISK)).then(|| self.upto(shape.len()));
        let mut guard: Vec<Name> = Vec::new();
        for (k, d) in shape.iter().enumerate() {
            let known = self.has_var(|g, v| v.ty.range().is_some_and(|r| g.safe_index(r, d)));
            if Some(k) == risky_dim || known || self.bounds(d).0 >= 1 {
                continue;
            }
            match d {
                Atom::Var(x) if !guard.contains(&x.name) => guard.push(x.name.clone()),
                Atom::Var(_) => {}
                Atom::Int(..) | Atom::Const(..) => return false,
            }
        }
        if guard.is_empty() {
            self.emit_index(out, &name, &shape, risky_dim);
            return true;
        }
        if self.depth >= self.max_depth {
            return false;
        }
        self.guarded_index(out, &name, &shape, &guard, risky_dim);
        true
    }

    /// The `host` construct: outside kernels, an element read, a scalar
    /// computed from it, and a statement that uses that scalar (an `if` on
    /// it, a loop, an update, a kernel), so that migration has host work
    /// to move and reads to save.
    fn act_host(&mut self, out: &mut Vec<Stm>) -> bool {
        let before = out.len();
        if !self.act_index(out) || out.len() == before {
            return false;
        }
        let Some(x) = out
            .last()
            .and_then(|s| s.pats.first())
            .filter(|p| matches!(p.ty, Type::Prim(Prim::I64, _)))
            .map(|p| p.name.name.clone())
        else {
            return true;
        };
        let op = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Max, BinOp::Min][self.upto(5)];
        let r = self.leaf();
        let y = self.emit_int(out, "h", SExp::bin(op, SExp::var(&x), r), Range::any());
        self.prefer = Some(y);
        let _ = match self.upto(4) {
            0 => self.act_if(out),
            1 if self.on.loops => self.act_loop(out),
            2 if self.on.update => self.act_update(out, false),
            _ => self.act_kernel(out),
        };
        self.prefer = None;
        true
    }

    fn emit_index(
        &mut self,
        out: &mut Vec<Stm>,
        a: &Name,
        shape: &[Atom],
        risky_dim: Option<usize>,
    ) -> Name {
        let mut idx = Vec::with_capacity(shape.len());
        for (k, d) in shape.iter().enumerate() {
            let i = if Some(k) == risky_dim {
                self.risky_index(out, d)
            } else {
                match self.index_for(out, d) {
                    Some(i) => i,
                    None => lit(0), // unreachable: callers make sure
                }
            };
            idx.push(i);
        }
        self.emit(
            out,
            "x",
            Ty::Int(Range::any()),
            ExpKind::Index(ident(a), idx),
        )
    }

    /// `let (c: int) = n > 0 && ...`, then `if c then <index> else <int>`,
    /// knowing in the then branch that the guarded sizes are at least 1.
    fn guarded_index(
        &mut self,
        out: &mut Vec<Stm>,
        a: &Name,
        shape: &[Atom],
        guard: &[Name],
        risky_dim: Option<usize>,
    ) {
        let mut cond: Option<SExp> = None;
        for x in guard {
            let t = match self.upto(3) {
                0 => SExp::bin(BinOp::Gt, SExp::var(x), SExp::int(0)),
                1 => SExp::bin(BinOp::Lt, SExp::int(0), SExp::var(x)),
                _ => SExp::bin(BinOp::Ge, SExp::var(x), SExp::int(1)),
            };
            cond = Some(match cond {
                None => t,
                Some(c) => SExp::bin(BinOp::And, c, t),
            });
        }
        let cond = cond.map_or(SExp::int(1), truth);
        let c = self.emit_int(out, "c", cond, Range::new(0, 1));
        // Then: the guarded sizes are at least 1.
        self.open();
        self.depth += 1;
        let mut saved = Vec::new();
        for x in guard {
            if let Some(i) = self.find(x) {
                if let Ty::Int(r) = &mut self.vars[i].ty {
                    saved.push((i, r.lo, r.hi));
                    r.lo = r.lo.max(1);
                    r.hi = r.hi.max(r.lo);
                }
            }
        }
        let mut then_stms = Vec::new();
        let n = self.upto(2);
        self.stms(&mut then_stms, n);
        let t = self.emit_index(&mut then_stms, a, shape, risky_dim);
        let tr = self.range_of(&t);
        for (i, lo, hi) in saved.into_iter().rev() {
            if let Ty::Int(r) = &mut self.vars[i].ty {
                r.lo = lo;
                r.hi = hi;
            }
        }
        self.close();
        // Else: any int.
        self.open();
        let mut else_stms = Vec::new();
        let n = self.upto(2);
        self.stms(&mut else_stms, n);
        let e = self.produce_int(&mut else_stms);
        let er = self.range_of(&e);
        self.close();
        self.depth -= 1;
        let kind = ExpKind::If(ident(&c), body(then_stms, &[t]), body(else_stms, &[e]));
        self.emit(out, "r", Ty::Int(tr.union(&er)), kind);
    }

    /// `let (b: [k]...int) = a[o : k, ...]`.
    fn act_slice(&mut self, out: &mut Vec<Stm>) -> bool {
        let Some(a) = self.pick_var(0, |_, v| v.ty.shape().is_some()) else {
            return false;
        };
        let name = self.vars[a].name.clone();
        let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        let risky_dim = (self.risky && self.chance(RISK)).then(|| self.upto(shape.len()));
        let mut pairs = Vec::with_capacity(shape.len());
        for (k, d) in shape.iter().enumerate() {
            let pair = if Some(k) == risky_dim {
                self.risky_slice(out, d)
            } else {
                self.slice_for(out, d)
            };
            pairs.push(pair);
        }
        let ty = Ty::Arr(pairs.iter().map(|(_, n)| n.clone()).collect());
        self.emit(out, "b", ty, ExpKind::Slice(ident(&name), pairs));
        true
    }

    /// A provably valid `offset : size` pair for a dimension of size `d`.
    fn slice_for(&mut self, out: &mut Vec<Stm>, d: &Atom) -> (Atom, Atom) {
        let (lo, hi) = self.bounds(d);
        match self.upto(4) {
            0 => (lit(0), d.clone()),
            1 if lo >= 0 => {
                let n = self.between(0, lo.min(self.cap));
                let o = self.between(0, (lo - n).min(self.cap));
                (lit(o), lit(n))
            }
            _ => {
                // An offset in 0 ..= d, then a size in 0 ..= d - o.
                let existing = |g: &Self, v: &Var| v.ty.range().is_some_and(|r| g.safe_index(r, d));
                let (o, olo) = match self.upto(3) {
                    0 => (lit(0), 0),
                    1 => match self.pick_name(existing) {
                        Some(x) => {
                            let lo = self.bounds(&var(&x)).0;
                            (var(&x), lo)
                        }
                        None => (lit(0), 0),
                    },
                    _ => {
                        let e = self.sexp(2);
                        let clamp = min(max(e, SExp::int(0)), se(d));
                        let o = self.emit_int(out, "o", clamp, Range::new(0, hi.max(0)));
                        (var(&o), 0)
                    }
                };
                let ohi = self.bounds(&o).1;
                let zero = o == lit(0);
                let rest = if zero {
                    se(d)
                } else {
                    SExp::bin(BinOp::Sub, se(d), se(&o))
                };
                let top = (hi - olo).max(0);
                let n = if self.chance(0.5) {
                    if zero {
                        return (o, d.clone());
                    }
                    self.emit_int(out, "n", rest, Range::new((lo - ohi).max(0), top))
                } else {
                    let e = self.sexp(2);
                    self.emit_int(
                        out,
                        "n",
                        min(max(e, SExp::int(0)), rest),
                        Range::new(0, top),
                    )
                };
                (o, var(&n))
            }
        }
    }

    /// An `offset : size` pair that may be out of bounds (risky programs);
    /// the size stays small.
    fn risky_slice(&mut self, out: &mut Vec<Stm>, d: &Atom) -> (Atom, Atom) {
        let o = match self.upto(3) {
            0 => match self.pick_name(|_, v| v.ty.range().is_some()) {
                Some(x) => var(&x),
                None => lit(1),
            },
            1 => lit(self.between(0, self.cap)),
            _ => d.clone(),
        };
        let n = match self.upto(3) {
            0 => self.risky_size(out),
            1 => lit(self.between(0, self.cap)),
            _ => self.size_atom(),
        };
        (o, n)
    }

    /// `let (t: [b][a]int) = transpose x`.
    fn act_transpose(&mut self, out: &mut Vec<Stm>) -> bool {
        let Some(a) = self.pick_var(0, |_, v| v.ty.shape().is_some_and(|s| s.len() == 2)) else {
            return false;
        };
        let name = self.vars[a].name.clone();
        let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        let ty = Ty::Arr(shape.iter().rev().cloned().collect());
        self.emit(out, "t", ty, ExpKind::Transpose(ident(&name)));
        true
    }

    /// `let (a: [n]int) = iota n`.
    fn act_iota(&mut self, out: &mut Vec<Stm>) -> bool {
        let n = if self.risky && self.chance(RISK) {
            self.risky_size(out)
        } else if self.chance(0.3) {
            var(&self.new_size(out))
        } else {
            self.size_atom()
        };
        if self
            .mult
            .saturating_mul(self.cells(std::slice::from_ref(&n)))
            > BUDGET
        {
            return false;
        }
        self.emit(out, "a", Ty::Arr(vec![n.clone()]), ExpKind::Iota(n));
        true
    }

    /// `let (r: int) = if c then STMS in (x) else 0` with `c = n < 0` for
    /// a size `n`, false at run time: `make` gives the statements (and
    /// their int result) that must never run.
    fn emit_never_taken(
        &mut self,
        out: &mut Vec<Stm>,
        make: impl FnOnce(&mut Self) -> (Vec<Stm>, Name),
    ) {
        let n = self.size_atom();
        let cond = truth(SExp::bin(BinOp::Lt, se(&n), SExp::int(0)));
        let c = self.emit_int(out, "c", cond, Range::new(0, 0));
        let (then, x) = make(self);
        let y = self.fresh("y");
        let zero = stm(
            vec![pat(&y, &Ty::Int(Range::new(0, 0)))],
            ExpKind::Scalar(SExp::int(0)),
        );
        let kind = ExpKind::If(ident(&c), body(then, &[x]), body(vec![zero], &[y]));
        self.emit(out, "r", Ty::Int(Range::any()), kind);
    }

    /// An array of a huge size that is never made: inside a kernel,
    /// `if c then (iota HUGE)[0] else 0` with `c = n < 0` for a size `n`
    /// (false at run time); anywhere, a kernel of zero iterations whose
    /// body makes it.
    fn act_huge(&mut self, out: &mut Vec<Stm>) -> bool {
        let h = lit(HUGE[self.upto(HUGE.len())]);
        // The array is read, so that no pass drops it as unused.
        let make = |g: &mut Self| {
            let (a, x) = (g.fresh("h"), g.fresh("x"));
            let stms = vec![
                stm(
                    vec![pat(&a, &Ty::Arr(vec![h.clone()]))],
                    ExpKind::Iota(h.clone()),
                ),
                stm(
                    vec![pat(&x, &Ty::Int(Range::any()))],
                    ExpKind::Index(ident(&a), vec![lit(0)]),
                ),
            ];
            (stms, x)
        };
        if self.depth > 0 && self.chance(0.7) {
            self.emit_never_taken(out, make);
        } else {
            let i = self.fresh("i");
            let (kb, x) = make(self);
            let kind = ExpKind::Kernel(ident(&i), lit(0), body(kb, &[x]));
            self.emit(out, "k", Ty::Arr(vec![lit(0)]), kind);
        }
        true
    }

    /// `let (y: shape) = copy x`.
    fn act_copy(&mut self, out: &mut Vec<Stm>) -> bool {
        let mult = self.mult;
        let pick = self.pick_var(0, |g, v| {
            v.ty.shape()
                .is_some_and(|s| mult.saturating_mul(g.cells(s)) <= BUDGET)
        });
        let Some(a) = pick else { return false };
        let name = self.vars[a].name.clone();
        let ty = self.vars[a].ty.clone();
        self.emit(out, "y", ty, ExpKind::Copy(ident(&name)));
        true
    }

    /// `let (k: [n]τ) = kernel i < n do ... in (r)`.
    fn act_kernel(&mut self, out: &mut Vec<Stm>) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let n = if self.risky && self.chance(RISK / 2.0) {
            self.risky_size(out)
        } else {
            match self.upto(10) {
                0..=4 => {
                    // Over a dimension of an array, so its index is in bounds.
                    match self.pick_var(0, |_, v| v.ty.shape().is_some()) {
                        Some(a) => {
                            let s = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
                            s[self.upto(s.len())].clone()
                        }
                        None => self.size_atom(),
                    }
                }
                5 | 6 => var(&self.new_size(out)),
                _ => self.size_atom(),
            }
        };
        let mult = self.mult.saturating_mul(self.bounds(&n).1.max(1));
        if mult > BUDGET {
            return false;
        }
        let mut elems = vec![self.choose_shape(2, self.depth + 1, mult)];
        if self.on.multi && self.chance(0.5) {
            for _ in 0..self.between(1, 2) {
                elems.push(self.choose_shape(2, self.depth + 1, mult));
            }
            self.made.multi += 1;
        }
        let target = self.upto(self.max_stms / 2 + 2);
        let (i, b) = self.kernel_body(&n, &elems, mult, target);
        let tys: Vec<Ty> = elems
            .into_iter()
            .map(|elem| {
                let mut shape = vec![n.clone()];
                shape.extend(elem);
                Ty::Arr(shape)
            })
            .collect();
        let kind = ExpKind::Kernel(ident(&i), n, b);
        if tys.len() == 1 {
            let ty = tys.into_iter().next().unwrap_or(Ty::Gone);
            self.emit(out, "k", ty, kind);
        } else {
            self.emit_many(out, "k", tys, kind);
        }
        true
    }

    /// Emits `let (x1: t1) (x2: t2) ... = kind` with fresh arrays `xi`.
    fn emit_many(&mut self, out: &mut Vec<Stm>, prefix: &str, tys: Vec<Ty>, kind: ExpKind) {
        let names: Vec<Name> = tys.iter().map(|_| self.fresh(prefix)).collect();
        out.push(stm(
            names.iter().zip(&tys).map(|(x, t)| pat(x, t)).collect(),
            kind,
        ));
        for (x, t) in names.into_iter().zip(tys) {
            let r = self.new_root(true);
            self.roots.insert(x.clone(), vec![r]);
            self.bind(x, t);
        }
    }

    /// The index and body of `kernel i < n` returning one value of each
    /// shape of `elems`.
    fn kernel_body(
        &mut self,
        n: &Atom,
        elems: &[Vec<Atom>],
        mult: i64,
        target: usize,
    ) -> (Name, Body) {
        let i = self.fresh("i");
        let saved = self.mult;
        self.open();
        self.depth += 1;
        self.mult = mult;
        let hi = self.bounds(n).1.saturating_sub(1).max(0);
        self.bind(i.clone(), Ty::Int(Range::below(0, hi, n.clone())));
        self.kernels.push((i.clone(), n.clone()));
        let mut stms = Vec::new();
        self.stms(&mut stms, target);
        let rs: Vec<Name> = elems.iter().map(|e| self.produce(&mut stms, e)).collect();
        self.kernels.pop();
        self.close();
        self.depth -= 1;
        self.mult = saved;
        (i, body(stms, &rs))
    }

    /// A shape of rank at most `max_rank` (possibly empty: an int) that a
    /// body at `depth` inside kernels of product `mult` can make, with sizes
    /// bound here.
    fn choose_shape(&mut self, max_rank: usize, depth: usize, mult: i64) -> Vec<Atom> {
        match self.upto(3) {
            0 => Vec::new(),
            1 => {
                let existing =
                    self.pick_var(0, |_, v| v.ty.shape().is_some_and(|s| s.len() <= max_rank));
                match existing {
                    Some(a) => self.vars[a].ty.shape().unwrap_or(&[]).to_vec(),
                    None => Vec::new(),
                }
            }
            _ => {
                let rank = self.between(1, max_rank.max(1) as i64) as usize;
                let shape: Vec<Atom> = (0..rank).map(|_| self.size_atom()).collect();
                if self.can_produce(&shape, depth, mult) {
                    shape
                } else if self.can_produce(&shape[..1], depth, mult) {
                    shape[..1].to_vec()
                } else {
                    Vec::new()
                }
            }
        }
    }

    /// Whether a body at `depth`, inside kernels of product `mult`, can make
    /// an array of this shape with the variables now in scope.
    fn can_produce(&self, shape: &[Atom], depth: usize, mult: i64) -> bool {
        if shape.is_empty()
            || self.has_var(|g, v| v.ty.shape().is_some_and(|s| g.makes(s, shape).is_some()))
        {
            return true;
        }
        if shape.len() == 1 && mult.saturating_mul(self.cells(shape)) <= BUDGET {
            return true;
        }
        let inner = mult.saturating_mul(self.bounds(&shape[0]).1.max(1));
        depth < self.max_depth && inner <= BUDGET && self.can_produce(&shape[1..], depth + 1, inner)
    }

    /// How an array of shape `have` gives one of shape `want` at no cost:
    /// as itself, transposed, or sliced.
    fn makes(&self, have: &[Atom], want: &[Atom]) -> Option<Fit> {
        if have == want {
            return Some(Fit::Same);
        }
        if have.len() == 2 && want.len() == 2 && have[0] == want[1] && have[1] == want[0] {
            return Some(Fit::Transposed);
        }
        let fits = have.len() == want.len()
            && have.iter().zip(want).all(|(h, w)| {
                let (wlo, whi) = self.bounds(w);
                h == w || (wlo >= 0 && whi <= self.bounds(h).0)
            });
        fits.then_some(Fit::Sliced)
    }

    /// Makes an int, returning its name: a variable in scope or a new one.
    fn produce_int(&mut self, out: &mut Vec<Stm>) -> Name {
        let start = self.scope_start();
        let is_int = |v: &Var| v.ty.range().is_some();
        let found = match self.upto(5) {
            // The int bound last in this body: what it computed.
            0 | 1 => self.vars[start..]
                .iter()
                .rposition(is_int)
                .map(|i| start + i),
            2 => self.pick_var(start, |_, v| is_int(v)),
            3 => self.pick_var(0, |_, v| is_int(v)),
            _ => None,
        };
        if let Some(i) = found {
            return self.vars[i].name.clone();
        }
        let e = self.sexp(2);
        self.emit_int(out, "x", e, Range::any())
    }

    /// Makes a value of exactly this shape (an int if it is empty), returning
    /// its name.
    fn produce(&mut self, out: &mut Vec<Stm>, shape: &[Atom]) -> Name {
        if shape.is_empty() {
            return self.produce_int(out);
        }
        let cost = self.mult.saturating_mul(self.cells(shape));
        let mut ways: Vec<(Make, u32)> = Vec::new();
        for (k, v) in self.vars.iter().enumerate() {
            if let Some(s) = v.ty.shape() {
                match self.makes(s, shape) {
                    Some(Fit::Same) => {
                        ways.push((Make::Reuse(k), 3));
                        if cost <= BUDGET {
                            ways.push((Make::Copy(k), 1));
                        }
                    }
                    Some(Fit::Transposed) => ways.push((Make::Transpose(k), 2)),
                    Some(Fit::Sliced) => ways.push((Make::Slice(k), 2)),
                    None => {}
                }
            }
        }
        if shape.len() == 1 && cost <= BUDGET {
            ways.push((Make::Iota, 3));
        }
        let inner = self.mult.saturating_mul(self.bounds(&shape[0]).1.max(1));
        let nest = self.depth < self.max_depth;
        if nest && inner <= BUDGET && self.can_produce(&shape[1..], self.depth + 1, inner) {
            ways.push((Make::Kernel, 4));
        }
        if nest && self.can_produce(shape, self.depth + 1, self.mult) {
            ways.push((Make::If, 1));
        }
        let weights: Vec<u32> = ways.iter().map(|(_, w)| *w).collect();
        let way = if ways.is_empty() {
            // Not reached when shapes are chosen with `can_produce`.
            if shape.len() == 1 {
                Make::Iota
            } else {
                Make::Kernel
            }
        } else {
            ways[self.weighted(&weights)].0
        };
        let ty = Ty::Arr(shape.to_vec());
        match way {
            Make::Reuse(k) => self.vars[k].name.clone(),
            Make::Copy(k) => {
                let x = self.vars[k].name.clone();
                self.emit(out, "y", ty, ExpKind::Copy(ident(&x)))
            }
            Make::Transpose(k) => {
                let x = self.vars[k].name.clone();
                self.emit(out, "t", ty, ExpKind::Transpose(ident(&x)))
            }
            Make::Slice(k) => {
                let x = self.vars[k].name.clone();
                let have = self.vars[k].ty.shape().unwrap_or(&[]).to_vec();
                let mut pairs = Vec::with_capacity(shape.len());
                for (h, w) in have.iter().zip(shape) {
                    let o = if h == w || self.chance(0.4) {
                        lit(0)
                    } else {
                        // An offset in 0 ..= h - w.
                        let (hlo, hhi) = self.bounds(h);
                        let wlo = self.bounds(w).0;
                        let room = SExp::bin(BinOp::Sub, se(h), se(w));
                        let e = self.sexp(2);
                        let r = Range::new(0, (hhi - wlo).max(0).max(hlo - wlo));
                        var(&self.emit_int(out, "o", min(max(e, SExp::int(0)), room), r))
                    };
                    pairs.push((o, w.clone()));
                }
                self.emit(out, "b", ty, ExpKind::Slice(ident(&x), pairs))
            }
            Make::Iota => self.emit(out, "a", ty, ExpKind::Iota(shape[0].clone())),
            Make::Kernel => {
                let target = self.upto(3);
                let (i, b) = self.kernel_body(&shape[0], &[shape[1..].to_vec()], inner, target);
                self.emit(
                    out,
                    "k",
                    ty,
                    ExpKind::Kernel(ident(&i), shape[0].clone(), b),
                )
            }
            Make::If => {
                let c = self.condition(out);
                let mut branches = Vec::with_capacity(2);
                for _ in 0..2 {
                    self.open();
                    self.depth += 1;
                    let mut stms = Vec::new();
                    let n = self.upto(3);
                    self.stms(&mut stms, n);
                    let r = self.produce(&mut stms, shape);
                    self.close();
                    self.depth -= 1;
                    branches.push(body(stms, &[r]));
                }
                let e = branches.pop().unwrap_or_else(|| body(Vec::new(), &[]));
                let t = branches.pop().unwrap_or_else(|| body(Vec::new(), &[]));
                self.emit(out, "z", ty, ExpKind::If(ident(&c), t, e))
            }
        }
    }

    /// An int variable to branch on: one in scope or a new comparison.
    fn condition(&mut self, out: &mut Vec<Stm>) -> Name {
        if let Some(p) = self.prefer.clone() {
            if self.has_var(|_, v| v.name == p) && self.chance(0.7) {
                let r = self.sexp(1);
                let e = truth(SExp::bin(BinOp::Lt, SExp::var(&p), r));
                return self.emit_int(out, "c", e, Range::any());
            }
        }
        if self.chance(0.4) {
            if let Some(x) = self.pick_name(|_, v| v.ty.range().is_some()) {
                return x;
            }
        }
        const CMP: [BinOp; 8] = [
            BinOp::Lt,
            BinOp::Le,
            BinOp::Gt,
            BinOp::Ge,
            BinOp::Eq,
            BinOp::Ne,
            BinOp::And,
            BinOp::Or,
        ];
        if self.on.types && self.chance(0.3) {
            let e = self.tsexp(Prim::Bool, 2, true).0;
            return self.emit(out, "c", Ty::Sc(Prim::Bool, false), ExpKind::Scalar(e));
        }
        let e = if self.chance(0.7) {
            let op = CMP[self.upto(CMP.len())];
            let l = self.sexp(1);
            let r = self.sexp(1);
            let e = SExp::bin(op, l, r);
            if is_cmp(op) {
                truth(e)
            } else {
                e
            }
        } else {
            self.sexp(2)
        };
        self.emit_int(out, "c", e, Range::any())
    }

    /// `let p... = if c then ... else ...`: several ints; arrays of sizes
    /// bound outside; or arrays whose sizes the pattern binds.
    fn act_if(&mut self, out: &mut Vec<Stm>) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let c = self.condition(out);
        let inner = self.depth + 1;
        let mut items: Vec<Item> = Vec::new();
        let mut sizes = 0;
        match self.upto(3) {
            0 => {
                for _ in 0..self.between(1, 3) {
                    items.push(Item::Int);
                }
            }
            1 => {
                for _ in 0..self.between(1, 2) {
                    let s = self.choose_shape(3, inner, self.mult);
                    if s.is_empty() {
                        items.push(Item::Int);
                    } else {
                        items.push(Item::Arr(s.into_iter().map(Dim::Outer).collect()));
                    }
                }
                if self.chance(0.5) {
                    items.push(Item::Int);
                }
            }
            _ => {
                sizes = self.between(1, 2) as usize;
                for _ in 0..self.between(1, 2) {
                    // Rank r needs r - 1 nested kernels (the last level an
                    // iota) and r sizes of at most `cap`.
                    let mut max_rank = 1;
                    for r in 2..=3 {
                        let cost = (0..r).fold(self.mult, |m, _| m.saturating_mul(self.cap));
                        if self.depth + r <= self.max_depth && cost <= BUDGET {
                            max_rank = r;
                        }
                    }
                    let rank = self.between(1, max_rank as i64) as usize;
                    let mut dims: Vec<Dim> = (0..rank)
                        .map(|_| {
                            if self.chance(0.6) {
                                Dim::Pat(self.upto(sizes))
                            } else {
                                Dim::Outer(self.size_atom())
                            }
                        })
                        .collect();
                    let k = self.upto(rank);
                    dims[k] = Dim::Pat(self.upto(sizes));
                    items.push(Item::Arr(dims));
                }
                if self.chance(0.4) {
                    items.push(Item::Int);
                }
            }
        }
        // Sizes first, the rest in random order.
        for k in (1..items.len()).rev() {
            let j = self.upto(k + 1);
            items.swap(k, j);
        }
        let mut all: Vec<Item> = (0..sizes).map(|_| Item::Size).collect();
        all.extend(items);
        let names: Vec<Name> = all
            .iter()
            .map(|it| match it {
                Item::Size => self.fresh("n"),
                Item::Int => self.fresh("r"),
                Item::Arr(_) => self.fresh("z"),
            })
            .collect();
        let mut ranges: Vec<Option<Range>> = vec![None; all.len()];
        let mut branches = Vec::with_capacity(2);
        for _ in 0..2 {
            let (b, rs) = self.branch(&all, sizes);
            for (slot, r) in ranges.iter_mut().zip(rs) {
                *slot = match (slot.take(), r) {
                    (None, r) => r,
                    (Some(a), Some(b)) => Some(a.union(&b)),
                    (Some(a), None) => Some(a),
                };
            }
            branches.push(b);
        }
        let e = branches.pop().unwrap_or_else(|| body(Vec::new(), &[]));
        let t = branches.pop().unwrap_or_else(|| body(Vec::new(), &[]));
        let tys: Vec<Ty> = all
            .iter()
            .zip(&ranges)
            .map(|(it, r)| match it {
                Item::Size | Item::Int => Ty::Int(r.clone().unwrap_or_else(Range::any)),
                Item::Arr(dims) => Ty::Arr(
                    dims.iter()
                        .map(|d| match d {
                            Dim::Outer(a) => a.clone(),
                            Dim::Pat(k) => var(&names[*k]),
                        })
                        .collect(),
                ),
            })
            .collect();
        for (k, (x, ty)) in names.iter().zip(&tys).enumerate() {
            if ty.shape().is_some() {
                let (a, b) = (t.result[k].name.clone(), e.result[k].name.clone());
                let roots = self.joined_roots(&[&a, &b]);
                self.roots.insert(x.clone(), roots);
            }
        }
        let inner: Vec<Vec<Name>> = (0..names.len())
            .map(|k| vec![t.result[k].name.clone(), e.result[k].name.clone()])
            .collect();
        self.share_roots(&names, &inner);
        let pats = names.iter().zip(&tys).map(|(x, t)| pat(x, t)).collect();
        out.push(stm(pats, ExpKind::If(ident(&c), t, e)));
        for (x, t) in names.into_iter().zip(tys) {
            self.bind(x, t);
        }
        true
    }

    /// One branch of an `if` with this pattern: its body, and the facts
    /// known of each int it returns.
    fn branch(&mut self, items: &[Item], sizes: usize) -> (Body, Vec<Option<Range>>) {
        self.open();
        self.depth += 1;
        let mut stms = Vec::new();
        let n = self.upto(self.max_stms / 3 + 2);
        self.stms(&mut stms, n);
        // The sizes this branch returns: those of an array in scope that
        // fits the pattern, or any size-like variables.
        let mut chosen: Vec<Option<Name>> = vec![None; sizes];
        if self.chance(0.5) {
            if let Some(Item::Arr(dims)) = items.iter().find(|it| matches!(it, Item::Arr(_))) {
                let fits = |g: &Self, v: &Var| {
                    let Some(s) = v.ty.shape() else { return false };
                    s.len() == dims.len()
                        && s.iter().zip(dims).all(|(a, d)| match d {
                            Dim::Outer(o) => a == o,
                            Dim::Pat(k) => {
                                a.var().is_some()
                                    && g.size_like(&Range::new(g.bounds(a).0, g.bounds(a).1))
                                    && dims.iter().zip(s).all(|(d2, a2)| match d2 {
                                        Dim::Pat(k2) if k2 == k => a2 == a,
                                        _ => true,
                                    })
                            }
                        })
                };
                if let Some(a) = self.pick_var(0, fits) {
                    let s = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
                    for (d, atom) in dims.iter().zip(&s) {
                        if let (Dim::Pat(k), Some(x)) = (d, atom.var()) {
                            chosen[*k] = Some(x.clone());
                        }
                    }
                }
            }
        }
        let mut result = Vec::with_capacity(items.len());
        let mut size_names = Vec::with_capacity(sizes);
        for c in chosen {
            let x = match c {
                Some(x) => x,
                None => {
                    let existing = if self.chance(0.6) {
                        self.pick_name(|g, v| v.ty.range().is_some_and(|r| g.size_like(r)))
                    } else {
                        None
                    };
                    match existing {
                        Some(x) => x,
                        None => self.new_size(&mut stms),
                    }
                }
            };
            size_names.push(x);
        }
        for it in items {
            let x = match it {
                Item::Size => size_names[result.len()].clone(),
                Item::Int => self.produce_int(&mut stms),
                Item::Arr(dims) => {
                    let shape: Vec<Atom> = dims
                        .iter()
                        .map(|d| match d {
                            Dim::Outer(a) => a.clone(),
                            Dim::Pat(k) => var(&size_names[*k]),
                        })
                        .collect();
                    self.produce(&mut stms, &shape)
                }
            };
            result.push(x);
        }
        let ranges = items
            .iter()
            .zip(&result)
            .map(|(it, x)| match it {
                Item::Arr(_) => None,
                _ => Some(self.range_of(x)),
            })
            .collect();
        self.close();
        self.depth -= 1;
        (body(stms, &result), ranges)
    }

    // ----- loops, in-place updates, concat, replicate -----

    /// An int atom: a variable, or a literal (bound to a name first when
    /// negative, which an atom cannot be).
    fn int_atom(&mut self, out: &mut Vec<Stm>) -> Atom {
        match self.leaf() {
            SExp::Atom(Atom::Int(k, _)) if k < 0 => {
                var(&self.emit_int(out, "x", SExp::int(k), Range::new(k, k)))
            }
            SExp::Atom(a) => a,
            e => var(&self.emit_int(out, "x", e, Range::any())),
        }
    }

    /// Makes each construct the program may use at least once (if it can).
    fn force(&mut self, out: &mut Vec<Stm>) {
        if self.on.loops && self.made.loops == 0 {
            self.act_loop(out);
        }
        if self.on.update && self.made.update == 0 {
            self.act_update(out, true);
        }
        if self.on.concat && self.made.concat == 0 {
            self.act_concat(out);
        }
        if self.on.replicate && self.made.replicate == 0 {
            self.act_replicate(out);
        }
        if self.on.types && self.made.types == 0 && !self.act_tkernel(out) {
            self.act_typed(out);
        }
        if self.on.types && self.made.conversions == 0 {
            self.act_convert(out);
        }
        if self.on.row && self.made.row == 0 && !self.act_row(out) {
            // No array of rank 2 with a row known to exist: make one.
            let shape = vec![lit(self.between(1, self.max_size.max(1))), self.size_atom()];
            if self.can_produce(&shape, self.depth, self.mult) {
                let x = self.produce(out, &shape);
                if let Some(i) = self.index_for(out, &shape[0]) {
                    let ty = Ty::Arr(shape[1..].to_vec());
                    self.emit(out, "r", ty, ExpKind::Index(ident(&x), vec![i]));
                    self.made.row += 1;
                }
            }
        }
        if self.on.reduce && self.made.reduce == 0 {
            self.act_reduce(out, false);
        }
        if self.on.scan && self.made.scan == 0 {
            self.act_reduce(out, true);
        }
        if self.on.root && self.made.root == 0 {
            self.act_root(out);
        }
        if self.on.multi && self.made.multi == 0 && self.depth < self.max_depth {
            // A kernel over a size with two results.
            let n = self.size_atom();
            let mult = self.mult.saturating_mul(self.bounds(&n).1.max(1));
            if mult <= BUDGET {
                let elems = vec![Vec::new(), self.choose_shape(1, self.depth + 1, mult)];
                let target = self.upto(3);
                let (i, b) = self.kernel_body(&n, &elems, mult, target);
                let tys = elems
                    .into_iter()
                    .map(|e| {
                        let mut shape = vec![n.clone()];
                        shape.extend(e);
                        Ty::Arr(shape)
                    })
                    .collect();
                self.emit_many(out, "k", tys, ExpKind::Kernel(ident(&i), n, b));
                self.made.multi += 1;
            }
        }
    }

    /// `let (u: τ) = x with [idx, ...] = v` for an array `x` this body may
    /// consume (made here, or a unique parameter at the top): the indices
    /// (elements `j` or ranges `o : k`, as many as x's rank or fewer) are
    /// provably in bounds unless the program is risky; `x` and whatever may
    /// share its storage are gone afterwards. With `make`, an array to
    /// consume is made first if there is none.
    fn act_update(&mut self, out: &mut Vec<Stm>, make: bool) -> bool {
        let mut pick = self.pick_var(0, |g, v| v.ty.shape().is_some() && g.consumable(&v.name));
        if pick.is_none() && make && (self.act_copy(out) || self.act_iota(out)) {
            pick = self.pick_var(0, |g, v| v.ty.shape().is_some() && g.consumable(&v.name));
        }
        let Some(a) = pick else { return false };
        let name = self.vars[a].name.clone();
        let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        let k = self.between(1, shape.len() as i64) as usize;
        let risky_pos = (self.risky && self.chance(RISK)).then(|| self.upto(k));
        let mut idx = Vec::with_capacity(k);
        let mut rest = Vec::new();
        for (j, d) in shape[..k].iter().enumerate() {
            let range = self.chance(0.35);
            if Some(j) == risky_pos {
                if range {
                    let (o, n) = self.risky_slice(out, d);
                    rest.push(n.clone());
                    idx.push(UpdIdx::Range(o, n));
                } else {
                    idx.push(UpdIdx::Elem(self.risky_index(out, d)));
                }
                continue;
            }
            let elem = if range { None } else { self.index_for(out, d) };
            match elem {
                Some(i) => idx.push(UpdIdx::Elem(i)),
                None => {
                    let (o, n) = self.slice_for(out, d);
                    rest.push(n.clone());
                    idx.push(UpdIdx::Range(o, n));
                }
            }
        }
        rest.extend(shape[k..].iter().cloned());
        // x is consumed here, so the new value cannot be (or share) it.
        self.consume(&name);
        if !self.can_produce(&rest, self.depth, self.mult) {
            return false;
        }
        let v = if rest.is_empty() {
            if self.chance(0.3) {
                self.int_atom(out)
            } else {
                var(&self.produce_int(out))
            }
        } else {
            var(&self.produce(out, &rest))
        };
        self.made.update += 1;
        let kind = ExpKind::Update(ident(&name), idx, v);
        self.emit(out, "u", Ty::Arr(shape), kind);
        true
    }

    /// `let (m: int) = n1 + n2` then `let (c: [m]...) = concat x y` for two
    /// arrays that agree but in the outer dimension.
    fn act_concat(&mut self, out: &mut Vec<Stm>) -> bool {
        let mult = self.mult;
        let Some(a) = self.pick_var(0, |g, v| {
            v.ty.shape()
                .is_some_and(|s| mult.saturating_mul(g.cells(s)).saturating_mul(2) <= BUDGET)
        }) else {
            return false;
        };
        let sa = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
        let Some(b) = self.pick_var(0, |g, v| {
            v.ty.shape().is_some_and(|s| {
                s.len() == sa.len()
                    && s[1..] == sa[1..]
                    && mult.saturating_mul(g.cells(s)).saturating_mul(2) <= BUDGET
            })
        }) else {
            return false;
        };
        let (x, y) = (self.vars[a].name.clone(), self.vars[b].name.clone());
        let sb0 = self.vars[b].ty.shape().unwrap_or(&[])[0].clone();
        let ((alo, ahi), (blo, bhi)) = (self.bounds(&sa[0]), self.bounds(&sb0));
        let r = Range::new(alo.saturating_add(blo), ahi.saturating_add(bhi));
        let e = SExp::bin(BinOp::Add, se(&sa[0]), se(&sb0));
        let m = self.emit_int(out, "m", e, r);
        let mut shape = vec![var(&m)];
        shape.extend(sa[1..].iter().cloned());
        self.made.concat += 1;
        self.emit(
            out,
            "cc",
            Ty::Arr(shape),
            ExpKind::Concat(ident(&x), ident(&y)),
        );
        true
    }

    /// `let (r: [n]...) = replicate n v` of an int or an array.
    fn act_replicate(&mut self, out: &mut Vec<Stm>) -> bool {
        let n = if self.risky && self.chance(RISK / 2.0) {
            self.risky_size(out)
        } else {
            self.size_atom()
        };
        let mult = self.mult.saturating_mul(self.bounds(&n).1.max(1));
        if mult > BUDGET {
            return false;
        }
        let arr = if self.chance(0.5) {
            self.pick_var(0, |g, v| {
                v.ty.shape()
                    .is_some_and(|s| s.len() <= 2 && mult.saturating_mul(g.cells(s)) <= BUDGET)
            })
        } else {
            None
        };
        let (v, mut shape) = match arr {
            Some(a) => (
                var(&self.vars[a].name.clone()),
                self.vars[a].ty.shape().unwrap_or(&[]).to_vec(),
            ),
            None => (self.int_atom(out), Vec::new()),
        };
        shape.insert(0, n.clone());
        self.made.replicate += 1;
        self.emit(out, "rp", Ty::Arr(shape), ExpKind::Replicate(n, v));
        true
    }

    // ----- coalescing's root statements -----

    /// `copy`, `concat`, an update with an array value, or a kernel
    /// returning an array its body made: a root statement of coalescing,
    /// whose source is mostly a fresh array made just before and used for
    /// the last time there (the pass's candidates), sometimes not (C1: the
    /// source is used again; C3: the update's destination is read between
    /// the source's making and the update; C4: a copy of an array that is
    /// not fresh, a parameter or a view). Sources are sometimes a chain
    /// (`let y = copy x` first), and the roots land in every kind of body
    /// (kernels, loops, `if` branches) as the other statements do.
    fn act_root(&mut self, out: &mut Vec<Stm>) -> bool {
        let nest = self.depth < self.max_depth;
        let weights = [
            4,
            if self.on.concat { 5 } else { 0 },
            if self.on.update { 4 } else { 0 },
            if nest { 3 } else { 0 },
        ];
        let done = match self.weighted(&weights) {
            0 => self.root_copy(out),
            1 => self.root_concat(out),
            2 => self.root_update(out),
            _ => self.root_kernel(out),
        };
        if done {
            self.made.root += 1;
        }
        done
    }

    /// Whether `x` is still an array in scope (statements made since may
    /// have consumed it).
    fn alive(&self, x: &Name) -> bool {
        self.find(x)
            .is_some_and(|i| self.vars[i].ty.shape().is_some())
    }

    /// Hides `x` and every array that may share its storage (the views of
    /// it made since) from the statements that follow, so that the root
    /// just made is its last use.
    fn hide(&mut self, x: &Name) {
        let rs = self.roots_of(x).to_vec();
        for i in 0..self.vars.len() {
            let v = &self.vars[i];
            if v.ty.shape().is_some()
                && (&v.name == x || self.roots_of(&v.name).iter().any(|r| rs.contains(r)))
            {
                self.vars[i].ty = Ty::Gone;
            }
        }
    }

    /// After a root with the fresh sources `xs`: mostly the root is their
    /// last use (they are hidden from what follows); sometimes (C1) one is
    /// read right after and stays in scope.
    fn after_root(&mut self, out: &mut Vec<Stm>, xs: &[Name]) {
        if xs.is_empty() {
            return;
        }
        if self.chance(0.2) {
            let x = xs[self.upto(xs.len())].clone();
            let shape = self
                .find(&x)
                .and_then(|i| self.vars[i].ty.shape().map(<[Atom]>::to_vec));
            if let Some(shape) = shape {
                if let Some(idx) = self.indices(out, &shape, shape.len()) {
                    self.emit(
                        out,
                        "x",
                        Ty::Int(Range::any()),
                        ExpKind::Index(ident(&x), idx),
                    );
                }
            }
            return;
        }
        for x in xs {
            self.hide(x);
        }
    }

    /// The shape of a root's array: one in scope (rank 1 or 2) or new
    /// sizes, within the budget.
    fn root_shape(&mut self) -> Option<Vec<Atom>> {
        let mult = self.mult;
        let existing = if self.chance(0.5) {
            self.pick_var(0, |g, v| {
                v.ty.shape()
                    .is_some_and(|s| s.len() <= 2 && mult.saturating_mul(g.cells(s)) <= BUDGET)
            })
        } else {
            None
        };
        let shape = match existing {
            Some(a) => self.vars[a].ty.shape().unwrap_or(&[]).to_vec(),
            None => {
                let rank = if self.chance(0.6) { 1 } else { 2 };
                (0..rank).map(|_| self.size_atom()).collect()
            }
        };
        (!shape.is_empty() && self.mult.saturating_mul(self.cells(&shape)) <= BUDGET)
            .then_some(shape)
    }

    /// Makes a fresh array of this shape with a statement that creates
    /// one: `iota`, `replicate`, a kernel (whose body mostly returns a
    /// fresh array of its own, so kernel results nest), a `copy` of an
    /// array of the shape, a `scan`, or an `if` whose branches make their
    /// results (mostly fresh). `None` when none fits the budget.
    fn fresh_array(&mut self, out: &mut Vec<Stm>, shape: &[Atom]) -> Option<Name> {
        if shape.is_empty() || self.mult.saturating_mul(self.cells(shape)) > BUDGET {
            return None;
        }
        let inner = self.mult.saturating_mul(self.bounds(&shape[0]).1.max(1));
        let nest = self.depth < self.max_depth;
        let same = |_: &Self, v: &Var| v.ty.shape() == Some(shape);
        let weights = [
            if shape.len() == 1 { 3 } else { 0 },
            if self.on.replicate && self.can_produce(&shape[1..], self.depth, self.mult) {
                3
            } else {
                0
            },
            if nest && inner <= BUDGET && self.can_produce(&shape[1..], self.depth + 1, inner) {
                4
            } else {
                0
            },
            if self.has_var(same) { 2 } else { 0 },
            if self.on.scan && shape.len() == 1 && self.has_var(same) {
                1
            } else {
                0
            },
            if nest && self.can_produce(shape, self.depth + 1, self.mult) {
                2
            } else {
                0
            },
        ];
        if weights.iter().all(|&w| w == 0) {
            return None;
        }
        let ty = Ty::Arr(shape.to_vec());
        Some(match self.weighted(&weights) {
            0 => self.emit(out, "a", ty, ExpKind::Iota(shape[0].clone())),
            1 => {
                let v = if shape.len() == 1 {
                    self.int_atom(out)
                } else {
                    let fresh = if self.chance(0.5) {
                        self.fresh_array(out, &shape[1..])
                    } else {
                        None
                    };
                    var(&match fresh {
                        Some(v) => v,
                        None => self.produce(out, &shape[1..]),
                    })
                };
                self.made.replicate += 1;
                self.emit(out, "rp", ty, ExpKind::Replicate(shape[0].clone(), v))
            }
            2 => {
                let (i, b) = self.kernel_fresh(&shape[0], &shape[1..], inner);
                let kind = ExpKind::Kernel(ident(&i), shape[0].clone(), b);
                self.emit(out, "k", ty, kind)
            }
            5 => {
                // An `if` whose branches make their results (mostly fresh
                // arrays: the existential blocks of coalescing's if rule).
                let c = self.condition(out);
                let mut branches = Vec::with_capacity(2);
                for _ in 0..2 {
                    self.open();
                    self.depth += 1;
                    let mut stms = Vec::new();
                    let n = self.upto(2);
                    self.stms(&mut stms, n);
                    let fresh = if self.chance(0.8) {
                        self.fresh_array(&mut stms, shape)
                    } else {
                        None
                    };
                    let r = match fresh {
                        Some(r) => r,
                        None => self.produce(&mut stms, shape),
                    };
                    self.close();
                    self.depth -= 1;
                    branches.push(body(stms, &[r]));
                }
                let e = branches.pop().unwrap_or_else(|| body(Vec::new(), &[]));
                let t = branches.pop().unwrap_or_else(|| body(Vec::new(), &[]));
                self.emit(out, "z", ty, ExpKind::If(ident(&c), t, e))
            }
            k => {
                let x = self.pick_name(same)?;
                if k == 3 {
                    self.emit(out, "y", ty, ExpKind::Copy(ident(&x)))
                } else {
                    self.made.scan += 1;
                    let op = RedOp::Bin(BinOp::Add, Span::DUMMY);
                    self.emit(out, "sc", ty, ExpKind::Scan(op, lit(0), ident(&x)))
                }
            }
        })
    }

    /// A root's source: a fresh array of this shape, sometimes through a
    /// chain (`let y = copy x`, whose own source `x` is used last there).
    fn source(&mut self, out: &mut Vec<Stm>, shape: &[Atom]) -> Option<Name> {
        let x = self.fresh_array(out, shape)?;
        if self.chance(0.2) {
            let y = self.emit(out, "y", Ty::Arr(shape.to_vec()), ExpKind::Copy(ident(&x)));
            self.hide(&x);
            return Some(y);
        }
        Some(x)
    }

    /// A root's source of this shape or, sometimes, of another outer size:
    /// a `concat` of two fresh arrays, used last by the root (a chain).
    fn source_any(&mut self, out: &mut Vec<Stm>, shape: &[Atom]) -> Option<(Name, Vec<Atom>)> {
        if self.on.concat && !shape.is_empty() && self.chance(0.15) {
            let mut other = vec![self.size_atom()];
            other.extend(shape[1..].iter().cloned());
            let both = self.cells(shape).saturating_add(self.cells(&other));
            if self.mult.saturating_mul(both).saturating_mul(2) <= BUDGET {
                let a = self.fresh_array(out, shape)?;
                let b = self.fresh_array(out, &other)?;
                let ((alo, ahi), (blo, bhi)) = (self.bounds(&shape[0]), self.bounds(&other[0]));
                let r = Range::new(alo.saturating_add(blo), ahi.saturating_add(bhi));
                let e = SExp::bin(BinOp::Add, se(&shape[0]), se(&other[0]));
                let m = self.emit_int(out, "m", e, r);
                let mut ty = vec![var(&m)];
                ty.extend(shape[1..].iter().cloned());
                self.made.concat += 1;
                let kind = ExpKind::Concat(ident(&a), ident(&b));
                let c = self.emit(out, "cc", Ty::Arr(ty.clone()), kind);
                self.hide(&a);
                self.hide(&b);
                return Some((c, ty));
            }
        }
        self.source(out, shape).map(|x| (x, shape.to_vec()))
    }

    /// The index and body of `kernel i < n` returning one value of shape
    /// `elem`: mostly an array the body makes fresh (a kernel result that
    /// coalescing may build in place in the kernel's result row).
    fn kernel_fresh(&mut self, n: &Atom, elem: &[Atom], mult: i64) -> (Name, Body) {
        let i = self.fresh("i");
        let saved = self.mult;
        self.open();
        self.depth += 1;
        self.mult = mult;
        let hi = self.bounds(n).1.saturating_sub(1).max(0);
        self.bind(i.clone(), Ty::Int(Range::below(0, hi, n.clone())));
        self.kernels.push((i.clone(), n.clone()));
        let mut stms = Vec::new();
        let target = self.upto(3);
        self.stms(&mut stms, target);
        let r = if elem.is_empty() {
            self.produce_int(&mut stms)
        } else {
            let fresh = if self.chance(0.8) {
                self.fresh_array(&mut stms, elem)
            } else {
                None
            };
            match fresh {
                Some(x) => x,
                None => self.produce(&mut stms, elem),
            }
        };
        self.kernels.pop();
        self.close();
        self.depth -= 1;
        self.mult = saved;
        (i, body(stms, &[r]))
    }

    /// A few random statements between a source's making and its root,
    /// sometimes.
    fn between_root(&mut self, out: &mut Vec<Stm>) {
        if self.chance(0.25) {
            let n = self.between(1, 2) as usize;
            self.stms(out, n);
        }
    }

    /// `let (y: ...) = copy x`: x fresh (or, C4, an array that is not).
    fn root_copy(&mut self, out: &mut Vec<Stm>) -> bool {
        let mult = self.mult;
        if self.chance(0.15) {
            let pick = self.pick_var(0, |g, v| {
                v.ty.shape()
                    .is_some_and(|s| mult.saturating_mul(g.cells(s)) <= BUDGET)
            });
            if let Some(a) = pick {
                let (x, ty) = (self.vars[a].name.clone(), self.vars[a].ty.clone());
                self.emit(out, "y", ty, ExpKind::Copy(ident(&x)));
                return true;
            }
        }
        let Some(shape) = self.root_shape() else {
            return false;
        };
        let Some((x, shape)) = self.source_any(out, &shape) else {
            return false;
        };
        self.between_root(out);
        if !self.alive(&x) {
            return true;
        }
        self.emit(out, "y", Ty::Arr(shape), ExpKind::Copy(ident(&x)));
        self.after_root(out, &[x]);
        true
    }

    /// `let (m: int) = n1 + n2` then `let (c: [m]...) = concat x y`: two
    /// fresh arrays, or a fresh one and one from scope (a parameter, say).
    fn root_concat(&mut self, out: &mut Vec<Stm>) -> bool {
        let Some(shape) = self.root_shape() else {
            return false;
        };
        let rest = shape[1..].to_vec();
        let mut other = vec![self.size_atom()];
        other.extend(rest.iter().cloned());
        let both = self.cells(&shape).saturating_add(self.cells(&other));
        if self.mult.saturating_mul(both).saturating_mul(2) > BUDGET {
            return false;
        }
        let Some((x, shape)) = self.source_any(out, &shape) else {
            return false;
        };
        let mult = self.mult;
        let from_scope = if self.chance(0.3) {
            self.pick_var(0, |g, v| {
                v.ty.shape().is_some_and(|s| {
                    s.len() == shape.len()
                        && s[1..] == rest[..]
                        && v.name != x
                        && mult.saturating_mul(g.cells(s)).saturating_mul(4) <= BUDGET
                })
            })
        } else {
            None
        };
        let (y, fresh_y) = match from_scope {
            Some(b) => {
                other = self.vars[b].ty.shape().unwrap_or(&[]).to_vec();
                (self.vars[b].name.clone(), false)
            }
            None => match self.source_any(out, &other) {
                Some((y, s)) => {
                    other = s;
                    (y, true)
                }
                None => return false,
            },
        };
        self.between_root(out);
        if !self.alive(&x) || !self.alive(&y) {
            return true;
        }
        let (mut a, mut b) = ((x.clone(), shape[0].clone()), (y.clone(), other[0].clone()));
        if self.chance(0.5) {
            std::mem::swap(&mut a, &mut b);
        }
        let ((alo, ahi), (blo, bhi)) = (self.bounds(&a.1), self.bounds(&b.1));
        let r = Range::new(alo.saturating_add(blo), ahi.saturating_add(bhi));
        let m = self.emit_int(out, "m", SExp::bin(BinOp::Add, se(&a.1), se(&b.1)), r);
        let mut ty = vec![var(&m)];
        ty.extend(rest);
        self.made.concat += 1;
        let kind = ExpKind::Concat(ident(&a.0), ident(&b.0));
        self.emit(out, "cc", Ty::Arr(ty), kind);
        let sources = if fresh_y { vec![x, y] } else { vec![x] };
        self.after_root(out, &sources);
        true
    }

    /// `let (u: ...) = z with [j] = row` or `z with [o : k] = part`: `z`
    /// fresh or consumable from scope (a unique parameter at the top),
    /// the value fresh, made after `z` mostly and before it sometimes; the
    /// index in bounds unless the program is risky (then maybe out of
    /// bounds: the update gets stuck and the coalesced program must too);
    /// sometimes (C3) `z` is read between the value's making and the update.
    fn root_update(&mut self, out: &mut Vec<Stm>) -> bool {
        let mult = self.mult;
        let existing = if self.chance(0.5) {
            self.pick_var(0, |g, v| {
                v.ty.shape()
                    .is_some_and(|s| mult.saturating_mul(g.cells(s)) <= BUDGET)
                    && g.consumable(&v.name)
            })
        } else {
            None
        };
        let (mut z, zs) = match existing {
            Some(a) => {
                let s = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
                (Some(self.vars[a].name.clone()), s)
            }
            None => match self.root_shape() {
                Some(s) => (None, s),
                None => return false,
            },
        };
        let d = zs[0].clone();
        // Errors stay errors: an update out of bounds gets stuck, and so
        // must the coalesced program, before writing anything.
        let risky = self.risky && self.chance(0.5);
        let elem = if zs.len() >= 2 && self.chance(0.5) {
            if risky {
                Some(self.risky_index(out, &d))
            } else {
                self.index_for(out, &d)
            }
        } else {
            None
        };
        let (idx, part) = match elem {
            Some(j) => (UpdIdx::Elem(j), zs[1..].to_vec()),
            None => {
                let (o, k) = if risky {
                    self.risky_slice(out, &d)
                } else {
                    self.slice_for(out, &d)
                };
                let mut part = vec![k.clone()];
                part.extend(zs[1..].iter().cloned());
                (UpdIdx::Range(o, k), part)
            }
        };
        if z.is_none() && self.chance(0.7) {
            z = self.fresh_array(out, &zs);
            if z.is_none() {
                return false;
            }
        }
        let Some(x) = self.source(out, &part) else {
            return false;
        };
        let z = match z {
            Some(z) => z,
            None => match self.fresh_array(out, &zs) {
                Some(z) => z,
                None => return false,
            },
        };
        if self.chance(0.2) {
            // C3: the destination is read after the value is made.
            if let Some(idx) = self.indices(out, &zs, zs.len()) {
                self.emit(
                    out,
                    "x",
                    Ty::Int(Range::any()),
                    ExpKind::Index(ident(&z), idx),
                );
            }
        } else {
            self.between_root(out);
        }
        if !self.alive(&x) || !self.alive(&z) || !self.consumable(&z) {
            return true;
        }
        self.consume(&z);
        self.made.update += 1;
        let kind = ExpKind::Update(ident(&z), vec![idx], var(&x));
        self.emit(out, "u", Ty::Arr(zs), kind);
        self.after_root(out, &[x]);
        true
    }

    /// `let (k: [n]...) = kernel i < n do ... in (r)` whose body makes its
    /// result `r` fresh (often with a kernel of its own that does the
    /// same: kernel results two deep).
    fn root_kernel(&mut self, out: &mut Vec<Stm>) -> bool {
        let n = match self.pick_var(0, |_, v| v.ty.shape().is_some()) {
            Some(a) if self.chance(0.5) => {
                let s = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
                s[self.upto(s.len())].clone()
            }
            _ => self.size_atom(),
        };
        let mult = self.mult.saturating_mul(self.bounds(&n).1.max(1));
        if mult > BUDGET {
            return false;
        }
        let rank = if self.chance(0.7) { 1 } else { 2 };
        let mut elem: Vec<Atom> = (0..rank).map(|_| self.size_atom()).collect();
        if !self.can_produce(&elem, self.depth + 1, mult) {
            elem.truncate(1);
        }
        if mult.saturating_mul(self.cells(&elem)) > BUDGET
            || !self.can_produce(&elem, self.depth + 1, mult)
        {
            return false;
        }
        let (i, b) = self.kernel_fresh(&n, &elem, mult);
        let mut shape = vec![n.clone()];
        shape.extend(elem);
        self.emit(out, "k", Ty::Arr(shape), ExpKind::Kernel(ident(&i), n, b));
        true
    }

    /// `let p̄' = loop p̄ = (ā) for i < n do ...` (a few iterations, maybe
    /// none) or `... while c do ...` (a counter `t` and `c = t < K`
    /// recomputed, so it ends after K iterations). Parameters: ints, arrays
    /// of a fixed shape, and arrays whose outer size is itself a parameter
    /// (each iteration may return another size). An array parameter whose
    /// initial value this body may consume may be consumed in the loop's
    /// body (its initial value is then gone after the loop); the others
    /// may not, and the loop's result may share their storage.
    fn act_loop(&mut self, out: &mut Vec<Stm>) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let is_while = self.chance(0.35);
        // The bound (for) or the trip count K (while): a few iterations
        // mostly, as every iteration multiplies the checks' work.
        let bound = if is_while {
            lit(self.between(0, 3))
        } else {
            match self.upto(5) {
                0 | 1 => match self.between(-1, 3) {
                    k if k < 0 => var(&self.emit_int(out, "s", SExp::int(k), Range::new(k, k))),
                    k => lit(k),
                },
                2 => match self.pick_var(0, |_, v| v.ty.shape().is_some()) {
                    Some(a) => {
                        let s = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
                        s[self.upto(s.len())].clone()
                    }
                    None => self.size_atom(),
                },
                _ => self.size_atom(),
            }
        };
        let trips = self.bounds(&bound).1.clamp(1, i64::MAX);
        let mult = self.mult.saturating_mul(trips);
        if mult > BUDGET {
            return false;
        }
        // Parameters: (name, type, init atom, consumable, outer size param).
        let mut params: Vec<(Name, Ty, Atom)> = Vec::new();
        let (mut cond, mut count) = (None, None);
        if is_while {
            let c0 = truth(SExp::bin(BinOp::Lt, SExp::int(0), se(&bound)));
            let c0 = self.emit_int(out, "c", c0, Range::new(0, 1));
            let (c, t) = (self.fresh("c"), self.fresh("t"));
            params.push((c.clone(), Ty::Int(Range::new(0, 1)), var(&c0)));
            params.push((
                t.clone(),
                Ty::Int(Range::new(0, self.bounds(&bound).1)),
                lit(0),
            ));
            cond = Some(c);
            count = Some(t);
        }
        for _ in 0..self.upto(3) {
            let init = self.int_atom(out);
            params.push((self.fresh("q"), Ty::Int(Range::any()), init));
        }
        // Array parameters: (param, its init, consumable, size param).
        let mut arrays: Vec<(Name, Ty, Atom, bool, Option<usize>)> = Vec::new();
        let mut taken: Vec<usize> = Vec::new();
        for _ in 0..self.between(0, 2) {
            let cap = self.cap;
            let Some(a) = self.pick_var(0, |g, v| {
                v.ty.shape().is_some_and(|s| {
                    let mut c = s.to_vec();
                    c[0] = lit(cap);
                    // The body must be able to make one (of another size).
                    (s.len() == 1 || g.depth + 2 <= g.max_depth)
                        && mult.saturating_mul(g.cells(&c)) <= BUDGET
                        && !g.roots_of(&v.name).iter().any(|r| taken.contains(r))
                })
            }) else {
                break;
            };
            let x = self.vars[a].name.clone();
            taken.extend(self.roots_of(&x).iter().copied());
            let shape = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
            let consumable = self.consumable(&x);
            let (lo, hi) = self.bounds(&shape[0]);
            let p = self.fresh("ps");
            // (A literal cannot stand for a size parameter in a type.)
            if lo >= 0 && hi <= self.cap && shape[0].var().is_some() && self.chance(0.5) {
                // The outer size is a parameter too.
                let k = self.fresh("ks");
                params.push((
                    k.clone(),
                    Ty::Int(Range::new(0, self.cap)),
                    shape[0].clone(),
                ));
                let mut ps = shape.clone();
                ps[0] = var(&k);
                arrays.push((p, Ty::Arr(ps), var(&x), consumable, Some(params.len() - 1)));
            } else {
                arrays.push((p, Ty::Arr(shape), var(&x), consumable, None));
            }
        }
        if params.is_empty() && arrays.is_empty() {
            let init = self.int_atom(out);
            params.push((self.fresh("q"), Ty::Int(Range::any()), init));
        }
        // A consumable initial value is the loop's: gone from here on, in
        // the body too.
        for (_, _, init, consumable, _) in &arrays {
            if let (true, Some(x)) = (*consumable, init.var()) {
                let rs = self.roots_of(x).to_vec();
                self.retire(&rs);
            }
        }
        // The body.
        let saved = self.mult;
        self.open();
        self.depth += 1;
        self.mult = mult;
        let loop_body = self.body_now();
        for (x, ty, _) in &params {
            self.bind(x.clone(), ty.clone());
        }
        let mut param_roots: Vec<usize> = Vec::with_capacity(arrays.len());
        for (x, ty, _, consumable, _) in &arrays {
            let r = self.new_root(*consumable);
            param_roots.push(r);
            self.roots.insert(x.clone(), vec![r]);
            self.bind(x.clone(), ty.clone());
        }
        let form = if is_while {
            LoopForm::While(ident(cond.as_ref().unwrap_or(&params[0].0)))
        } else {
            let i = self.fresh("i");
            let hi = (trips - 1).max(0);
            self.bind(i.clone(), Ty::Int(Range::below(0, hi, bound.clone())));
            LoopForm::For(ident(&i), bound.clone())
        };
        let mut stms = Vec::new();
        let target = self.upto(self.max_stms / 3 + 2);
        self.stms(&mut stms, target);
        // The next values: the while counter and condition, the ints, the
        // sizes with their arrays.
        let mut result: Vec<Name> = Vec::with_capacity(params.len() + arrays.len());
        for (k, (x, _, _)) in params.iter().enumerate() {
            if Some(x) == count.as_ref() {
                let t2 = SExp::bin(BinOp::Add, SExp::var(x), SExp::int(1));
                let hi = self.bounds(&bound).1;
                result.push(self.emit_int(&mut stms, "t", t2, Range::new(1, hi.max(1))));
            } else if Some(x) == cond.as_ref() {
                result.push(x.clone()); // replaced below, once the counter is
            } else if arrays.iter().any(|a| a.4 == Some(k)) {
                let existing = if self.chance(0.6) {
                    self.pick_name(|g, v| v.ty.range().is_some_and(|r| g.size_like(r)))
                } else {
                    None
                };
                let s = match existing {
                    Some(s) => s,
                    None => self.new_size(&mut stms),
                };
                result.push(s);
            } else {
                result.push(self.produce_int(&mut stms));
            }
        }
        if let (Some(c), Some(t)) = (&cond, &count) {
            let kc = params.iter().position(|p| &p.0 == t).unwrap_or(1);
            let c2 = truth(SExp::bin(BinOp::Lt, SExp::var(&result[kc]), se(&bound)));
            let c2 = self.emit_int(&mut stms, "c", c2, Range::new(0, 1));
            if let Some(kc) = params.iter().position(|p| &p.0 == c) {
                result[kc] = c2;
            }
        }
        let mut outer: Vec<Vec<usize>> = Vec::with_capacity(arrays.len());
        // The roots of the array results so far, and of those consumable.
        let (mut all_held, mut unique_held): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for (k, (_, ty, _, consumable, size)) in arrays.iter().enumerate() {
            let mut shape = ty.shape().unwrap_or(&[]).to_vec();
            if let Some(k) = size {
                shape[0] = var(&result[*k]);
            }
            let mut r = self.produce(&mut stms, &shape);
            let rs = self.roots_of(&r);
            // Made in the body (or the parameter itself, not consumed): another
            // parameter, whose initial value comes from outside, is not.
            let local = rs.iter().all(|x| {
                (!param_roots.contains(x) || param_roots.get(k) == Some(x))
                    && self
                        .root_body
                        .get(*x)
                        .is_some_and(|b| b.0 == Some(loop_body))
            });
            let shared = |held: &[usize]| rs.iter().any(|x| held.contains(x));
            if (*consumable && (!local || shared(&all_held))) || shared(&unique_held) {
                // Later iterations may consume it: an array of its own,
                // which no other result may share.
                r = self.emit(&mut stms, "y", Ty::Arr(shape), ExpKind::Copy(ident(&r)));
            }
            let rs = self.roots_of(&r).to_vec();
            all_held.extend(rs.iter().copied());
            if *consumable {
                unique_held.extend(rs.iter().copied());
            }
            outer.push(rs);
            result.push(r);
        }
        self.close();
        self.depth -= 1;
        self.mult = saved;
        // The pattern: the parameters' types with their names replaced.
        let mut names: Vec<Name> = params.iter().map(|_| self.fresh("l")).collect();
        for _ in &arrays {
            names.push(self.fresh("la"));
        }
        let mut tys: Vec<Ty> = Vec::with_capacity(names.len());
        for (x, ty, _) in &params {
            tys.push(match ty {
                Ty::Int(r) if Some(x) == count.as_ref() => Ty::Int(Range::new(0, r.hi.max(0))),
                t => t.clone(),
            });
        }
        let mut ps: Vec<Pat> = params.iter().map(|(x, t, _)| pat(x, t)).collect();
        let mut init: Vec<Atom> = params.iter().map(|p| p.2.clone()).collect();
        for (x, ty, a, _, size) in &arrays {
            ps.push(pat(x, ty));
            init.push(a.clone());
            let mut shape = ty.shape().unwrap_or(&[]).to_vec();
            if let Some(k) = size {
                shape[0] = var(&names[*k]);
            }
            tys.push(Ty::Arr(shape));
        }
        let ints = params.len();
        let pats = names.iter().zip(&tys).map(|(x, t)| pat(x, t)).collect();
        out.push(stm(
            pats,
            ExpKind::Loop(ps, init, form, body(stms, &result)),
        ));
        // Did the body consume a parameter? Then the loop consumed its
        // initial value, and the result is fresh.
        let spent: Vec<bool> = param_roots
            .iter()
            .map(|&r| self.root_body.get(r).is_some_and(|e| e.1))
            .collect();
        for ((_, _, a, _, _), _) in arrays.iter().zip(&spent).filter(|(_, s)| **s) {
            if let Some(y) = a.var() {
                for r in self.roots_of(y).to_vec() {
                    if let Some(e) = self.root_body.get_mut(r) {
                        e.1 = true;
                    }
                }
            }
        }
        let shared_names = names.clone();
        for (k, (x, mut t)) in names.into_iter().zip(tys).enumerate() {
            if k >= ints {
                let (_, _, a, _, _) = &arrays[k - ints];
                let roots = if spent[k - ints] {
                    vec![self.new_root(true)]
                } else {
                    // It may be the initial value or an array the body
                    // returned from outside; a parameter returned may carry
                    // any parameter's initial value out.
                    let mut rs: Vec<usize> = a
                        .var()
                        .map(|x| self.roots_of(x).to_vec())
                        .unwrap_or_default();
                    if outer[k - ints].iter().any(|r| param_roots.contains(r)) {
                        for (_, _, b, _, _) in &arrays {
                            if let Some(y) = b.var() {
                                rs.extend(self.roots_of(y).iter().copied());
                            }
                        }
                    }
                    for &r in &outer[k - ints] {
                        let seen = match self.root_body.get(r) {
                            Some((Some(b), _)) => self.bodies.contains(b),
                            _ => true,
                        };
                        if seen && !rs.contains(&r) {
                            rs.push(r);
                        }
                    }
                    // It may be an initial value the loop consumed.
                    if rs
                        .iter()
                        .any(|&r| self.root_body.get(r).is_some_and(|e| e.1))
                    {
                        t = Ty::Gone;
                    }
                    rs.push(self.new_root(false));
                    rs
                };
                self.roots.insert(x.clone(), roots);
            }
            self.bind(x, t);
        }
        let inner: Vec<Vec<Name>> = result.iter().map(|x| vec![x.clone()]).collect();
        self.share_roots(&shared_names, &inner);
        self.made.loops += 1;
        true
    }

    // ----- the program -----

    fn program(&mut self) -> Case {
        let mut params = Vec::new();
        let mut inputs = Vec::new();
        let mut values: Vec<(Name, i64)> = Vec::new();
        let mut unique: Vec<usize> = Vec::new();
        for _ in 0..self.between(1, 3) {
            let n = self.fresh("n");
            let v = if self.chance(0.15) {
                0
            } else {
                self.between(0, self.max_size)
            };
            let ty = Ty::Int(Range::new(0, self.max_size));
            params.push(pat(&n, &ty));
            inputs.push(Value::Scalar(Const::I64(v)));
            self.bind(n.clone(), ty);
            values.push((n, v));
        }
        // Arrays (true) and plain ints (false), in random order.
        let mut rest: Vec<bool> = vec![true; self.between(1, 3) as usize];
        rest.extend(vec![false; self.between(0, 2) as usize]);
        for k in (1..rest.len()).rev() {
            let j = self.upto(k + 1);
            rest.swap(k, j);
        }
        let mut max_rank = 1;
        while max_rank < 3
            && (0..=max_rank).fold(1i64, |m, _| m.saturating_mul(self.max_size.max(1))) <= BUDGET
        {
            max_rank += 1;
        }
        for is_array in rest {
            if is_array {
                let rank = self.between(1, max_rank) as usize;
                let dims: Vec<(Name, i64)> = (0..rank)
                    .map(|_| values[self.upto(values.len())].clone())
                    .collect();
                let shape: Vec<usize> = dims.iter().map(|(_, v)| *v as usize).collect();
                let len: usize = shape.iter().product();
                let data = Elems::I64(
                    (0..len)
                        .map(|_| {
                            if self.chance(0.1) {
                                self.any_lit()
                            } else {
                                self.between(-50, 50)
                            }
                        })
                        .collect(),
                );
                let ty = Ty::Arr(dims.iter().map(|(n, _)| var(n)).collect());
                let x = self.fresh("xs");
                let mut p = pat(&x, &ty);
                p.unique = self.on.update && self.chance(0.5);
                let root = self.new_root(false);
                if p.unique {
                    unique.push(root);
                }
                self.roots.insert(x.clone(), vec![root]);
                params.push(p);
                inputs.push(Value::Array(ArrayValue { shape, data }));
                self.bind(x, ty);
            } else {
                let x = self.fresh("p");
                let v = match self.upto(5) {
                    0 => LARGE[self.upto(LARGE.len())],
                    1 => self.between(0, 1),
                    _ => self.between(-20, 20),
                };
                params.push(pat(&x, &Ty::Int(Range::any())));
                inputs.push(Value::Scalar(Const::I64(v)));
                self.bind(x, Ty::Int(Range::any()));
            }
        }
        if self.on.types {
            for _ in 0..self.between(1, 2) {
                self.typed_param(&mut params, &mut inputs, &values);
            }
        }
        self.open();
        // Unique parameters may be consumed in the program's body.
        for r in unique {
            self.root_body[r].0 = Some(self.body_now());
        }
        let mut stms = Vec::new();
        let target = self.between(1, self.max_stms as i64) as usize;
        self.stms(&mut stms, target);
        self.force(&mut stms);
        let result = self.results();
        let body = body(stms, &result);
        let program = Program {
            lang: Lang::Fun,
            params,
            body,
            span: Span::DUMMY,
        };
        Case { program, inputs }
    }

    // ----- element types (issue 19) -----

    /// A non-`i64` element type: `f32` most often.
    fn other_prim(&mut self) -> Prim {
        [Prim::F32, Prim::F32, Prim::I32, Prim::F64, Prim::Bool][self.upto(5)]
    }

    /// A literal of type `t`: small, or one that wraps or is special
    /// (`i32` extremes, infinities, NaN).
    fn lit_of(&mut self, t: Prim) -> Const {
        const FLOATS: [f64; 10] = [0.0, 1.0, -1.0, 0.5, 2.5, -3.25, 100.0, 0.125, 7.0, -0.0];
        const SPECIAL: [f64; 3] = [f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
        match t {
            Prim::Bool => Const::Bool(self.chance(0.5)),
            Prim::I32 => Const::I32(match self.upto(12) {
                0 => i32::MAX,
                1 => i32::MIN,
                _ => self.small_lit() as i32,
            }),
            Prim::I64 => Const::I64(self.any_lit()),
            Prim::F32 | Prim::F64 => {
                let x = if self.chance(0.03) {
                    SPECIAL[self.upto(SPECIAL.len())]
                } else {
                    FLOATS[self.upto(FLOATS.len())]
                };
                if t == Prim::F32 {
                    Const::f32(x as f32)
                } else {
                    Const::f64(x)
                }
            }
        }
    }

    /// A literal of type `t` as an expression.
    fn tlit(&mut self, t: Prim) -> SExp {
        SExp::Atom(Atom::lit(self.lit_of(t), Span::DUMMY))
    }

    /// Whether a variable is a scalar of type `t` usable in an exact
    /// expression (`exact`) or any.
    fn is_scalar_of(v: &Var, t: Prim, exact: bool) -> bool {
        match &v.ty {
            Ty::Int(_) => t == Prim::I64,
            Ty::Sc(u, fuzzy) => *u == t && !(exact && *fuzzy),
            _ => false,
        }
    }

    /// `t(x)` for a scalar variable `x` of another type (an exact one when
    /// `t` is not a float, so that no float error turns into an integer
    /// or truth difference).
    fn convert_leaf(&mut self, t: Prim) -> Option<SExp> {
        let exact = !t.is_float();
        let i = self.pick_var(0, |_, v| match &v.ty {
            Ty::Int(_) => t != Prim::I64,
            Ty::Sc(u, fuzzy) => *u != t && !(exact && *fuzzy),
            _ => false,
        })?;
        self.made.conversions += 1;
        let x = SExp::var(&self.vars[i].name.clone());
        Some(SExp::Un(UnOp::Conv(t), Box::new(x), Span::DUMMY))
    }

    /// A leaf of type `t` and whether it is fuzzy.
    fn tleaf(&mut self, t: Prim, exact: bool) -> (SExp, bool) {
        match self.upto(10) {
            0..=5 => {
                if let Some(i) = self.pick_var(0, |_, v| Self::is_scalar_of(v, t, exact)) {
                    let fuzzy = matches!(self.vars[i].ty, Ty::Sc(_, true));
                    return (SExp::var(&self.vars[i].name.clone()), fuzzy);
                }
            }
            6 | 7 => {
                if let Some(e) = self.convert_leaf(t) {
                    return (e, false);
                }
            }
            _ => {}
        }
        (self.tlit(t), false)
    }

    /// A random scalar expression of type `t` of at most `depth` operator
    /// levels, strictly typed, and whether it is *fuzzy*: a float whose
    /// value other backends may compute slightly differently (OpenCL's
    /// `exp`, `log`, `sqrt`, float division, reassociated float sums).
    /// With `exact`, it is not. Integer divisors are nonzero unless the
    /// program is risky; float domain errors give NaN or infinities.
    fn tsexp(&mut self, t: Prim, depth: u32, exact: bool) -> (SExp, bool) {
        if t == Prim::I64 && self.chance(0.5) {
            return (self.sexp(depth), false);
        }
        if depth == 0 || self.chance(0.3) {
            return self.tleaf(t, exact);
        }
        let un = |op: UnOp, e: SExp| SExp::Un(op, Box::new(e), Span::DUMMY);
        if t == Prim::Bool {
            return match self.upto(6) {
                0 => {
                    let (e, _) = self.tsexp(t, depth - 1, exact);
                    (un(UnOp::Not, e), false)
                }
                1 | 2 => {
                    let op = if self.chance(0.5) {
                        BinOp::And
                    } else {
                        BinOp::Or
                    };
                    let (l, _) = self.tsexp(t, depth - 1, exact);
                    let (r, _) = self.tsexp(t, depth - 1, exact);
                    (SExp::bin(op, l, r), false)
                }
                _ => {
                    const CMP: [BinOp; 6] = [
                        BinOp::Lt,
                        BinOp::Le,
                        BinOp::Gt,
                        BinOp::Ge,
                        BinOp::Eq,
                        BinOp::Ne,
                    ];
                    let op = CMP[self.upto(CMP.len())];
                    let u = [Prim::I64, Prim::I32, Prim::F32, Prim::F64][self.upto(4)];
                    let (l, _) = self.tsexp(u, depth - 1, true);
                    let (r, _) = self.tsexp(u, depth - 1, true);
                    (SExp::bin(op, l, r), false)
                }
            };
        }
        if self.chance(0.2) {
            let ops: &[UnOp] = if t.is_float() && !exact {
                &[
                    UnOp::Neg,
                    UnOp::Abs,
                    UnOp::Sqrt,
                    UnOp::Exp,
                    UnOp::Log,
                    UnOp::Floor,
                ]
            } else if t.is_float() {
                &[UnOp::Neg, UnOp::Abs, UnOp::Floor]
            } else {
                &[UnOp::Neg, UnOp::Abs]
            };
            let mut op = ops[self.upto(ops.len())];
            let (e, fuzzy) = self.tsexp(t, depth - 1, exact);
            if op == UnOp::Neg && matches!(&e, SExp::Atom(Atom::Const(c, _)) if c.is_nan()) {
                // `-f32.nan` folds to a NaN literal with its sign bit set,
                // which prints as `f32.nan` and so would not parse back.
                op = UnOp::Abs;
            }
            let fuzzy = fuzzy || matches!(op, UnOp::Sqrt | UnOp::Exp | UnOp::Log);
            return (SExp::unary(op, e, Span::DUMMY), fuzzy);
        }
        const OPS: [BinOp; 7] = [
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Min,
            BinOp::Max,
            BinOp::Div,
            BinOp::Rem,
        ];
        let mut op = OPS[self.upto(OPS.len())];
        if exact && t.is_float() && op == BinOp::Div {
            op = BinOp::Mul;
        }
        let (l, fl) = self.tsexp(t, depth - 1, exact);
        let (r, fr) = if matches!(op, BinOp::Div | BinOp::Rem) && t == Prim::I64 {
            (self.divisor(depth - 1), false)
        } else if matches!(op, BinOp::Div | BinOp::Rem) && t.is_int() {
            if self.risky && self.chance(RISK) {
                self.tsexp(t, depth - 1, exact)
            } else if self.chance(0.5) {
                let mut k = self.nonzero_lit() as i32;
                if k == 0 {
                    k = 1;
                }
                (SExp::Atom(Atom::Const(Const::I32(k), Span::DUMMY)), false)
            } else {
                let (e, f) = self.tsexp(t, depth - 1, exact);
                (
                    max(e, SExp::Atom(Atom::Const(Const::I32(1), Span::DUMMY))),
                    f,
                )
            }
        } else {
            self.tsexp(t, depth - 1, exact)
        };
        let fuzzy = fl || fr || (t.is_float() && op == BinOp::Div);
        (SExp::bin(op, l, r), fuzzy)
    }

    /// `let (x: t) = e` for a random non-`i64` type `t`.
    fn act_typed(&mut self, out: &mut Vec<Stm>) -> bool {
        let t = self.other_prim();
        let d = self.between(1, 3) as u32;
        let (e, fuzzy) = self.tsexp(t, d, false);
        self.emit(out, "v", Ty::Sc(t, fuzzy), ExpKind::Scalar(e));
        self.made.types += 1;
        true
    }

    /// `let (k: int) = i64(e)` for an exact expression `e` of another type.
    fn act_convert(&mut self, out: &mut Vec<Stm>) -> bool {
        let t = self.other_prim();
        let d = self.between(0, 2) as u32;
        let (e, _) = self.tsexp(t, d, true);
        self.made.conversions += 1;
        let e = SExp::Un(UnOp::Conv(Prim::I64), Box::new(e), Span::DUMMY);
        self.emit_int(out, "x", e, Range::any());
        true
    }

    /// `let (ys: [n]t) = kernel i < n do ... in (v)` with `v` of type `t`
    /// (or, nested, `[n][m]t`): an array of another element type.
    fn act_tkernel(&mut self, out: &mut Vec<Stm>) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let n = match self.upto(3) {
            0 => match self.pick_var(0, |_, v| v.ty.shape().is_some()) {
                Some(a) => {
                    let s = self.vars[a].ty.shape().unwrap_or(&[]).to_vec();
                    s[self.upto(s.len())].clone()
                }
                None => self.size_atom(),
            },
            _ => self.size_atom(),
        };
        let mult = self.mult.saturating_mul(self.bounds(&n).1.max(1));
        if mult > BUDGET {
            return false;
        }
        let t = self.other_prim();
        // The inner size of a nested kernel is bound outside (T-KERNEL).
        let inner = (self.depth + 1 < self.max_depth && self.chance(0.3)).then(|| self.size_atom());
        let i = self.fresh("i");
        let saved = self.mult;
        self.open();
        self.depth += 1;
        self.mult = mult;
        let hi = self.bounds(&n).1.saturating_sub(1).max(0);
        self.bind(i.clone(), Ty::Int(Range::below(0, hi, n.clone())));
        self.kernels.push((i.clone(), n.clone()));
        let mut stms = Vec::new();
        let target = self.upto(3);
        self.stms(&mut stms, target);
        // The element: a scalar, or (nested) a row made by a kernel.
        let nested = inner.is_some_and(|m| self.act_tkernel_of(&mut stms, t, m));
        let (r, ty) = if nested {
            let k = self.vars.len() - 1;
            match self.vars[k].ty.clone() {
                Ty::TArr(s, t, f) => {
                    let mut shape = vec![n.clone()];
                    shape.extend(s);
                    (self.vars[k].name.clone(), Ty::TArr(shape, t, f))
                }
                _ => (self.vars[k].name.clone(), Ty::Gone),
            }
        } else {
            let (e, fuzzy) = self.tsexp(t, 2, false);
            let v = self.emit(&mut stms, "v", Ty::Sc(t, fuzzy), ExpKind::Scalar(e));
            (v, Ty::TArr(vec![n.clone()], t, fuzzy))
        };
        self.kernels.pop();
        self.close();
        self.depth -= 1;
        self.mult = saved;
        let kind = ExpKind::Kernel(ident(&i), n, body(stms, &[r]));
        self.emit(out, "ys", ty, kind);
        self.made.types += 1;
        true
    }

    /// A one-dimensional kernel over `n` of elements of type `t`, bound
    /// last.
    fn act_tkernel_of(&mut self, out: &mut Vec<Stm>, t: Prim, n: Atom) -> bool {
        if self.depth >= self.max_depth {
            return false;
        }
        let mult = self.mult.saturating_mul(self.bounds(&n).1.max(1));
        if mult > BUDGET {
            return false;
        }
        let i = self.fresh("i");
        let saved = self.mult;
        self.open();
        self.depth += 1;
        self.mult = mult;
        let hi = self.bounds(&n).1.saturating_sub(1).max(0);
        self.bind(i.clone(), Ty::Int(Range::below(0, hi, n.clone())));
        self.kernels.push((i.clone(), n.clone()));
        let mut stms = Vec::new();
        let (e, fuzzy) = self.tsexp(t, 2, false);
        let v = self.emit(&mut stms, "v", Ty::Sc(t, fuzzy), ExpKind::Scalar(e));
        self.kernels.pop();
        self.close();
        self.depth -= 1;
        self.mult = saved;
        let kind = ExpKind::Kernel(ident(&i), n.clone(), body(stms, &[v]));
        self.emit(out, "ys", Ty::TArr(vec![n], t, fuzzy), kind);
        true
    }

    /// The indices of `shape`'s first `k` dimensions: provably in bounds,
    /// or (risky programs) one maybe not; `None` when a dimension may be 0
    /// and nothing is known below it.
    fn indices(&mut self, out: &mut Vec<Stm>, shape: &[Atom], k: usize) -> Option<Vec<Atom>> {
        let risky_dim = (self.risky && self.chance(RISK)).then(|| self.upto(k));
        let mut idx = Vec::with_capacity(k);
        for (j, d) in shape[..k].iter().enumerate() {
            if Some(j) == risky_dim {
                idx.push(self.risky_index(out, d));
            } else {
                idx.push(self.index_for(out, d)?);
            }
        }
        Some(idx)
    }

    /// `let (x: t) = ys[i, ...]` for an array `ys` of another element type.
    fn act_tindex(&mut self, out: &mut Vec<Stm>) -> bool {
        let Some(a) = self.pick_var(0, |_, v| matches!(v.ty, Ty::TArr(..))) else {
            return false;
        };
        let Ty::TArr(shape, t, fuzzy) = self.vars[a].ty.clone() else {
            return false;
        };
        let name = self.vars[a].name.clone();
        let Some(idx) = self.indices(out, &shape, shape.len()) else {
            return false;
        };
        self.emit(
            out,
            "v",
            Ty::Sc(t, fuzzy),
            ExpKind::Index(ident(&name), idx),
        );
        true
    }

    /// `let (r: [m]t) = xss[i]` (partial indexing): a row (or plane) of an
    /// array of rank 2 or more, a view sharing the array's storage.
    fn act_row(&mut self, out: &mut Vec<Stm>) -> bool {
        let pick = self.pick_var(0, |_, v| match &v.ty {
            Ty::Arr(s) | Ty::TArr(s, ..) => s.len() >= 2,
            _ => false,
        });
        let Some(a) = pick else { return false };
        let name = self.vars[a].name.clone();
        let ty = self.vars[a].ty.clone();
        let shape = match &ty {
            Ty::Arr(s) | Ty::TArr(s, ..) => s.clone(),
            _ => return false,
        };
        let k = self.between(1, shape.len() as i64 - 1) as usize;
        let Some(idx) = self.indices(out, &shape, k) else {
            return false;
        };
        let rest = shape[k..].to_vec();
        let ty = match ty {
            Ty::TArr(_, t, f) => Ty::TArr(rest, t, f),
            _ => Ty::Arr(rest),
        };
        self.emit(out, "r", ty, ExpKind::Index(ident(&name), idx));
        self.made.row += 1;
        true
    }

    /// `let (x: t) = reduce op ne xs` (or, `scan`, `let (ys: [n]t) = scan
    /// op ne xs`) over a one-dimensional array of any element type, with a
    /// builtin operator or a lambda that is associative and has `ne` as
    /// its neutral element.
    fn act_reduce(&mut self, out: &mut Vec<Stm>, scan: bool) -> bool {
        let mult = self.mult;
        let pick = self.pick_var(0, |g, v| match &v.ty {
            Ty::Arr(s) | Ty::TArr(s, ..) => {
                s.len() == 1 && (!scan || mult.saturating_mul(g.cells(s)) <= BUDGET)
            }
            _ => false,
        });
        let Some(a) = pick else { return false };
        let xs = self.vars[a].name.clone();
        let (shape, t, fuzzy) = match self.vars[a].ty.clone() {
            Ty::Arr(s) => (s, Prim::I64, false),
            Ty::TArr(s, t, f) => (s, t, f),
            _ => return false,
        };
        let op = if t == Prim::Bool {
            [BinOp::And, BinOp::Or][self.upto(2)]
        } else {
            [BinOp::Add, BinOp::Mul, BinOp::Min, BinOp::Max][self.upto(4)]
        };
        let ne = neutral(op, t);
        let red = if self.chance(0.4) {
            RedOp::Lambda(Box::new(self.lambda(op, t)))
        } else {
            RedOp::Bin(op, Span::DUMMY)
        };
        let fuzzy = fuzzy || (t.is_float() && matches!(op, BinOp::Add | BinOp::Mul));
        // A negative literal is no atom: bind it first.
        let ne = if ne.program_text().starts_with('-') {
            let ty = if t == Prim::I64 {
                Ty::Int(Range::new(i64::MIN, i64::MIN))
            } else {
                Ty::Sc(t, false)
            };
            let e = SExp::Atom(Atom::lit(ne, Span::DUMMY));
            var(&self.emit(out, "ne", ty, ExpKind::Scalar(e)))
        } else {
            Atom::lit(ne, Span::DUMMY)
        };
        if scan {
            let ty = if t == Prim::I64 {
                Ty::Arr(shape)
            } else {
                Ty::TArr(shape, t, fuzzy)
            };
            self.emit(out, "sc", ty, ExpKind::Scan(red, ne, ident(&xs)));
            self.made.scan += 1;
        } else {
            let ty = if t == Prim::I64 {
                Ty::Int(Range::any())
            } else {
                Ty::Sc(t, fuzzy)
            };
            self.emit(out, "rd", ty, ExpKind::Reduce(red, ne, ident(&xs)));
            self.made.reduce += 1;
        }
        true
    }

    /// `\(a: t) (b: t) -> ...` computing `a op b`, in one of a few forms:
    /// directly, through `let`s, adding a zero or multiplying by one
    /// (integers: `k - k` of a variable from outside, which the body reads).
    fn lambda(&mut self, op: BinOp, t: Prim) -> Lambda {
        let (a, b, c) = (self.fresh("a"), self.fresh("b"), self.fresh("c"));
        let ty = Ty::Sc(t, false);
        let mut stms = vec![stm(
            vec![pat(&c, &ty)],
            ExpKind::Scalar(SExp::bin(op, SExp::var(&a), SExp::var(&b))),
        )];
        let mut result = c.clone();
        if t.is_int() && matches!(op, BinOp::Add | BinOp::Mul) && self.chance(0.6) {
            // c + (k - k), c * 1, or c + 0 (an identity on integers).
            let outer = self.pick_name(|_, v| Self::is_scalar_of(v, t, true));
            let id = match (op, outer) {
                (BinOp::Add, Some(k)) => SExp::bin(
                    BinOp::Add,
                    SExp::var(&c),
                    SExp::bin(BinOp::Sub, SExp::var(&k), SExp::var(&k)),
                ),
                (BinOp::Add, None) => SExp::bin(
                    BinOp::Add,
                    SExp::var(&c),
                    SExp::Atom(Atom::lit(t.zero(), Span::DUMMY)),
                ),
                _ => SExp::bin(
                    BinOp::Mul,
                    SExp::var(&c),
                    SExp::Atom(Atom::lit(one(t), Span::DUMMY)),
                ),
            };
            let d = self.fresh("d");
            stms.push(stm(vec![pat(&d, &ty)], ExpKind::Scalar(id)));
            result = d;
        }
        let param = |x: &Name| pat(x, &ty);
        Lambda {
            params: vec![param(&a), param(&b)],
            body: body(stms, &[result]),
            span: Span::DUMMY,
        }
    }

    /// A parameter of another element type than `i64`: a scalar, or an
    /// array of rank 1 or 2 over the size parameters `values`.
    fn typed_param(
        &mut self,
        params: &mut Vec<Pat>,
        inputs: &mut Vec<Value>,
        values: &[(Name, i64)],
    ) {
        let t = self.other_prim();
        let rank = self.upto(3).min(if self.max_size > 64 { 1 } else { 2 });
        let dims: Vec<(Name, i64)> = (0..rank)
            .map(|_| values[self.upto(values.len())].clone())
            .collect();
        let shape: Vec<usize> = dims.iter().map(|(_, v)| *v as usize).collect();
        let len: usize = shape.iter().product();
        let mut data = Elems::with_capacity(t, len.max(1));
        for _ in 0..len.max(1) {
            let c = if t.is_float() && self.chance(0.7) {
                // Mostly exact small values, some with fractions.
                let x = self.between(-40, 40) as f64 / 4.0;
                if t == Prim::F32 {
                    Const::f32(x as f32)
                } else {
                    Const::f64(x)
                }
            } else {
                self.lit_of(t)
            };
            data.push(c);
        }
        let x = self.fresh(if rank == 0 { "p" } else { "xs" });
        let ty = if rank == 0 {
            Ty::Sc(t, false)
        } else {
            Ty::TArr(dims.iter().map(|(n, _)| var(n)).collect(), t, false)
        };
        params.push(pat(&x, &ty));
        if rank == 0 {
            inputs.push(Value::Scalar(data.get(0)));
        } else {
            let data = data.slice(0..len);
            inputs.push(Value::Array(ArrayValue { shape, data }));
        }
        self.bind(x, ty);
    }

    /// The program's results: an array and an int bound in the body when
    /// there are any, and maybe one more variable.
    fn results(&mut self) -> Vec<Name> {
        let from = self.scope_start();
        let mut out: Vec<Name> = Vec::new();
        if let Some(i) = self.pick_var(from, |_, v| v.ty.shape().is_some()) {
            out.push(self.vars[i].name.clone());
        }
        if let Some(i) = self.pick_var(from, |_, v| v.ty.range().is_some()) {
            out.push(self.vars[i].name.clone());
        }
        if self.chance(0.4) || out.is_empty() {
            if let Some(i) = self.pick_var(0, |_, v| !matches!(v.ty, Ty::Gone)) {
                let x = self.vars[i].name.clone();
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
        if self.chance(0.5) {
            out.reverse();
        }
        out
    }
}
