//! An independent evaluator of FUN's value semantics (IFL 2022 paper,
//! figs. 4 and 5, 0-based, with the details docs/language.md fixes), the
//! reference the fuzzer holds a FUN source's results against.
//!
//! Why a second one. The type checker, every semantics and both
//! translations compute index functions with the same LMAD code; a fault
//! there (a wrong slice offset, say) makes every stage agree on the same
//! wrong answer, so comparing stages with each other cannot see it. This
//! evaluator shares no index arithmetic with the rest of the workspace: it
//! reads only the syntax tree, and its arrays are nested vectors built
//! element by element as fig. 5 defines `index`, `slice` and `tr`, with no
//! buffer, offset or stride anywhere. Values cross the boundary as
//! [`Value`]s, converted here by code of its own.
//!
//! Scalars have element types (`bool`, `i32`, `i64`, `f32`, `f64`), and
//! their operators are written again here from docs/language.md, sharing
//! nothing with the interpreters' operator table: integers are two's
//! complement of their width, `+ - *` and unary `-` wrap, `/` and `%`
//! truncate toward zero (`MIN / -1` is `MIN`, its remainder 0), division or
//! remainder by zero is stuck; floats are IEEE 754 in their own width (`%`
//! is `fmod`, `min`/`max` return the other operand of a NaN); comparisons
//! give a `bool`; `&&`, `||` combine `bool`s (or give 1 or 0 of an
//! integer type) and evaluate both sides. A conversion wraps between
//! integers, truncates a float toward zero and saturates (NaN gives 0),
//! rounds to nearest into a float, and is "not zero" into `bool`. Both
//! operands of a binary operator have one type in every program the front
//! end accepts; two types are stuck here.
//!
//! `reduce op ne xs` is the left fold ((ne op xs[0]) op xs[1]) ... and
//! `scan op ne xs` the array of its inclusive prefixes (E-REDUCE, E-SCAN),
//! one unit of fuel per element; a lambda operator binds its two
//! parameters (like a loop's, not bindings of the trace) and runs its body,
//! whose statements are. An index with fewer indices than the array has
//! dimensions is the sub-array they select (a copy here: nested vectors
//! share nothing).
//!
//! Loops, in-place updates, `concat`, `replicate` and kernels with
//! several results follow docs/language.md too: a loop binds its
//! parameters to the initial values and, after each iteration, to the
//! body's results (not bindings of the trace, as a kernel's index is not;
//! each held against its type, so an array
//! parameter may change size with its size parameter); `for i < n` reads n
//! once and runs no iteration when n <= 0; `while p` tests the parameter p
//! before each iteration, and one that never ends runs out of fuel (a
//! limit: no verdict). `x with [idx] = v` is a new array (nested vectors
//! share nothing), stuck when an index or range leaves its dimension;
//! `replicate` with a negative count is stuck.
//!
//! Every value a statement binds is also held against its declared type
//! (an `int`, or an array of exactly the shape its sizes name), so a
//! binding that typing should have ruled out gets stuck here.
//!
//! Bindings, not only results. Both evaluators bind the same names to the
//! same values in the same order (inputs, then each statement's pattern
//! after its expression; a kernel's iterations in order, each body's
//! bindings in turn). The source's run records its bindings ([`Trace`],
//! an [`Observer`]), and [`check`] holds each of the reference's against
//! it as it goes, so a wrong value is caught where it is made, even when
//! no result depends on it, and a run that gets stuck must get stuck at
//! the same binding.
//!
//! Errors are [`RefError::Stuck`] (with what got stuck) or
//! [`RefError::Limit`]: fuel counts statements, kernel and loop iterations and the
//! cells of every array built (each row and each element), and a cell
//! budget refuses to build beyond it, so no program makes it hang or take
//! much memory. A limit decides nothing (limits are not semantics).

use funmem_lang::ast::{
    Atom, BinOp, Body, ExpKind, LoopForm, Pat, Program, RedOp, SExp, Stm, Type, UnOp, UpdIdx,
};
use funmem_lang::prim::{Const, Prim};
use funmem_lang::Name;
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::observer::Observer;
use funmem_semantics::validity::first_difference;
use funmem_semantics::value::{ArrayValue, Elems, Value};
use std::fmt;

/// A value: a scalar of some element type, or an array of rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RVal {
    /// A scalar.
    Scalar(Const),
    /// An array.
    Arr(RArr),
}

/// An array as nested vectors: `rows.len() == shape[0]`, and each row is
/// an [`RVal::Scalar`] of type `elem` when the array has one dimension,
/// otherwise an [`RVal::Arr`] of shape `shape[1..]`. The shape and the
/// element type are carried so that an empty array keeps them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RArr {
    /// Size of each dimension, outermost first; never empty.
    pub shape: Vec<usize>,
    /// The element type.
    pub elem: Prim,
    /// The rows, in order.
    pub rows: Vec<RVal>,
}

/// Why the evaluator has no results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefError {
    /// The program went wrong: what got stuck, with the values involved.
    Stuck(String),
    /// Fuel or the cell budget ran out: no verdict.
    Limit(String),
    /// Stopped at a binding that differs from the source's trace: how.
    Differs(String),
}

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefError::Stuck(m) => write!(f, "stuck: {m}"),
            RefError::Limit(m) => write!(f, "limit: {m}"),
            RefError::Differs(m) => f.write_str(m),
        }
    }
}

/// The evaluator's budgets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefLimits {
    /// Statements, kernel iterations and array cells built.
    pub fuel: u64,
    /// Array cells (rows and elements) built in all.
    pub cells: u64,
}

/// Most cells the evaluator builds whatever the heap limit: a cell takes
/// several words here, so this keeps a run under a few hundred megabytes.
pub const MAX_CELLS: u64 = 1 << 22;

impl RefLimits {
    /// The budgets matching an interpreter's limits: its fuel for
    /// statements and iterations plus one unit per cell, and its heap limit
    /// (at most [`MAX_CELLS`]) for cells.
    pub fn from_limits(l: Limits) -> RefLimits {
        let cells = l.max_heap.min(MAX_CELLS);
        RefLimits {
            fuel: l.fuel.saturating_add(cells),
            cells,
        }
    }
}

type R<T> = Result<T, RefError>;

fn stuck<T>(msg: impl Into<String>) -> R<T> {
    Err(RefError::Stuck(msg.into()))
}

/// Runs a FUN program on its inputs (one per parameter, in order).
pub fn run(p: &Program, inputs: &[Value], limits: RefLimits) -> R<Vec<Value>> {
    run_traced(p, inputs, limits, None).0
}

/// [`run`], holding each binding against `trace` (the source's) as it is
/// made; also gives the number of bindings made.
fn run_traced(
    p: &Program,
    inputs: &[Value],
    limits: RefLimits,
    trace: Option<&Trace>,
) -> (R<Vec<Value>>, usize) {
    let mut m = Machine {
        env: Vec::new(),
        fuel: limits.fuel,
        cells: limits.cells,
        limits,
        trace,
        bound: 0,
    };
    let r = m
        .bind_inputs(&p.params, inputs)
        .and_then(|()| m.body(&p.body));
    (r.map(|vs| vs.iter().map(to_value).collect()), m.bound)
}

/// The bindings of a run, in order, as the source's evaluator reports them
/// to its [`Observer`]: each name with its value printed. Recording stops
/// (and the trace is marked cut) after [`Trace::MAX_TEXT`] bytes, so that
/// it costs little on any program.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    binds: Vec<(Name, String)>,
    text: usize,
    cut: bool,
}

impl Trace {
    /// Most bytes of printed values recorded.
    pub const MAX_TEXT: usize = 1 << 20;
}

impl Observer for Trace {
    fn bind(&mut self, name: &Name, value: &dyn fmt::Display) {
        if self.cut {
            return;
        }
        let v = value.to_string();
        self.text += v.len() + name.as_str().len();
        if self.text > Trace::MAX_TEXT {
            self.cut = true;
            return;
        }
        self.binds.push((name.clone(), v));
    }
}

/// Runs the reference on a FUN program and judges the source's outcome
/// against it: [`judge`], and with the source's `trace`, every binding
/// too (the same names and values, in the same order, and as many of them
/// when both run to the end or both get stuck).
pub fn check(
    p: &Program,
    inputs: &[Value],
    limits: RefLimits,
    source: &Result<Vec<Value>, EvalError>,
    trace: Option<&Trace>,
) -> Judgement {
    let (reference, bound) = run_traced(p, inputs, limits, trace);
    if let Err(RefError::Differs(m)) = &reference {
        return Judgement::Differs(m.clone());
    }
    let verdict = judge(source, &reference);
    if verdict != Judgement::Agrees {
        return verdict;
    }
    match trace {
        Some(t) if !t.cut && t.binds.len() != bound => Judgement::Differs(format!(
            "the source makes {} bindings, the reference evaluator {bound} (the source {})",
            t.binds.len(),
            match source {
                Ok(_) => "gives results".to_string(),
                Err(e) => format!("goes wrong: {e}"),
            }
        )),
        _ => Judgement::Agrees,
    }
}

/// How the source's outcome compares with the reference's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// The same results, or both stuck.
    Agrees,
    /// One side exceeded a limit: nothing to compare.
    Inconclusive,
    /// They differ: how, in words.
    Differs(String),
}

/// Compares the source's outcome with the reference's: results must be
/// equal, and the source must get stuck exactly where the reference does.
pub fn judge(source: &Result<Vec<Value>, EvalError>, reference: &R<Vec<Value>>) -> Judgement {
    let show = |v: &[Value]| {
        let t: Vec<String> = v.iter().map(Value::to_string).collect();
        clip(&t.join(", "))
    };
    match (source, reference) {
        (Err(e), _) if e.is_limit() => Judgement::Inconclusive,
        (_, Err(RefError::Limit(_))) => Judgement::Inconclusive,
        (_, Err(RefError::Differs(m))) => Judgement::Differs(m.clone()),
        (Ok(got), Ok(want)) => match first_difference(got, want) {
            None => Judgement::Agrees,
            Some(d) => Judgement::Differs(format!(
                "{} (the source: {}; the reference: {})",
                d.describe("the source", "the reference evaluator"),
                show(got),
                show(want)
            )),
        },
        (Ok(got), Err(RefError::Stuck(m))) => Judgement::Differs(format!(
            "the source gives results ({}) where the reference evaluator gets stuck: {m}",
            show(got)
        )),
        (Err(e), Ok(want)) => Judgement::Differs(format!(
            "the source goes wrong ({e}) where the reference evaluator gives {}",
            show(want)
        )),
        (Err(e), Err(RefError::Stuck(m))) => match e.kind {
            ErrorKind::Stuck => Judgement::Agrees,
            _ => Judgement::Differs(format!(
                "the source goes wrong ({e}) where the reference evaluator gets stuck: {m}"
            )),
        },
    }
}

/// At most 300 characters of `s`.
fn clip(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((k, _)) => format!("{} ...", &s[..k]),
        None => s.to_string(),
    }
}

/// Appends `c` to elements of its type, by our own code (one arm per
/// type, no word representation); a constant of another type is left out
/// (rows are checked before they are built, so none is).
pub(crate) fn push(out: &mut Elems, c: Const) {
    match (out, c) {
        (Elems::Bool(v), Const::Bool(b)) => v.push(b),
        (Elems::I32(v), Const::I32(k)) => v.push(k),
        (Elems::I64(v), Const::I64(k)) => v.push(k),
        (Elems::F32(v), Const::F32(b)) => v.push(f32::from_bits(b)),
        (Elems::F64(v), Const::F64(b)) => v.push(f64::from_bits(b)),
        _ => {}
    }
}

/// A nested value as a flat [`Value`] (row-major elements and the shape).
pub fn to_value(v: &RVal) -> Value {
    fn flatten(v: &RVal, out: &mut Elems) {
        match v {
            RVal::Scalar(c) => push(out, *c),
            RVal::Arr(a) => a.rows.iter().for_each(|r| flatten(r, out)),
        }
    }
    match v {
        RVal::Scalar(c) => Value::Scalar(*c),
        RVal::Arr(a) => {
            let mut data = Elems::with_capacity(a.elem, 0);
            flatten(v, &mut data);
            Value::Array(ArrayValue {
                shape: a.shape.clone(),
                data,
            })
        }
    }
}

/// The cells of an array of this shape: its rows at every level and its
/// elements (`None` when that does not fit in 64 bits).
fn cells_of(shape: &[usize]) -> Option<u64> {
    let mut level = 1u64;
    let mut total = 0u64;
    for &d in shape {
        level = level.checked_mul(d as u64)?;
        total = total.checked_add(level)?;
    }
    Some(total)
}

/// A flat array's elements nested by its shape: the rows of `data` split
/// into `shape[0]` equal parts, each nested by `shape[1..]`.
fn nest(shape: &[usize], elem: Prim, data: &[Const]) -> RVal {
    match shape {
        [] => RVal::Scalar(data.first().copied().unwrap_or(zero(elem))),
        [n, inner @ ..] => {
            let len: usize = inner.iter().product();
            let rows = (0..*n)
                .map(|k| {
                    let part = data.get(k * len..(k + 1) * len).unwrap_or(&[]);
                    nest(inner, elem, part)
                })
                .collect();
            RVal::Arr(RArr {
                shape: shape.to_vec(),
                elem,
                rows,
            })
        }
    }
}

/// The zero of a type.
fn zero(t: Prim) -> Const {
    match t {
        Prim::Bool => Const::Bool(false),
        Prim::I32 => Const::I32(0),
        Prim::I64 => Const::I64(0),
        Prim::F32 => Const::F32(0),
        Prim::F64 => Const::F64(0),
    }
}

/// An input's elements, read by our own code (one arm per type).
pub(crate) fn elems_of(e: &Elems) -> Vec<Const> {
    match e {
        Elems::Bool(v) => v.iter().map(|&b| Const::Bool(b)).collect(),
        Elems::I32(v) => v.iter().map(|&k| Const::I32(k)).collect(),
        Elems::I64(v) => v.iter().map(|&k| Const::I64(k)).collect(),
        Elems::F32(v) => v.iter().map(|x| Const::F32(x.to_bits())).collect(),
        Elems::F64(v) => v.iter().map(|x| Const::F64(x.to_bits())).collect(),
    }
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

fn describe(v: &RVal) -> String {
    match v {
        RVal::Scalar(c) => format!("the {} {c}", c.prim()),
        RVal::Arr(a) => format!("an array of shape {}{}", shape_text(&a.shape), a.elem),
    }
}

struct Machine<'t> {
    /// The variables in scope, innermost last (no shadowing, so the last
    /// binding of a name is its only visible one).
    env: Vec<(Name, RVal)>,
    fuel: u64,
    cells: u64,
    limits: RefLimits,
    /// The source's bindings, to hold ours against.
    trace: Option<&'t Trace>,
    /// Bindings made so far.
    bound: usize,
}

impl Machine<'_> {
    /// Binds `x` to `v`, checking it against the source's trace.
    fn bind(&mut self, x: &Name, v: RVal) -> R<()> {
        if let Some((y, text)) = self.trace.and_then(|t| t.binds.get(self.bound)) {
            let ours = to_value(&v).to_string();
            if y != x || *text != ours {
                return Err(RefError::Differs(format!(
                    "binding {} differs: the source binds `{y}` to {}, the reference evaluator binds `{x}` to {}",
                    self.bound + 1,
                    clip(text),
                    clip(&ours)
                )));
            }
        }
        self.bound += 1;
        self.env.push((x.clone(), v));
        Ok(())
    }

    fn burn(&mut self, units: u64) -> R<()> {
        match self.fuel.checked_sub(units) {
            Some(left) => {
                self.fuel = left;
                Ok(())
            }
            None => Err(RefError::Limit(format!(
                "fuel of {} exhausted",
                self.limits.fuel
            ))),
        }
    }

    /// Charges an array of this shape, before it is built.
    fn charge(&mut self, shape: &[usize]) -> R<()> {
        let n = cells_of(shape)
            .filter(|&n| n <= self.cells)
            .ok_or_else(|| {
                RefError::Limit(format!(
                    "cell budget of {} exceeded by an array of shape {}",
                    self.limits.cells,
                    shape_text(shape)
                ))
            })?;
        self.cells -= n;
        self.burn(n)
    }

    fn lookup(&self, x: &Name) -> R<&RVal> {
        match self.env.iter().rev().find(|(y, _)| y == x) {
            Some((_, v)) => Ok(v),
            None => stuck(format!("`{x}` is not bound")),
        }
    }

    /// An `i64` variable (a size, an index, a count).
    fn int(&self, x: &Name) -> R<i64> {
        match self.lookup(x)? {
            RVal::Scalar(Const::I64(k)) => Ok(*k),
            v => stuck(format!("`{x}` is {}, not an i64", describe(v))),
        }
    }

    /// A condition: a `bool`, or an integer that is true when not zero.
    fn truth(&self, x: &Name) -> R<bool> {
        match self.lookup(x)? {
            RVal::Scalar(Const::Bool(b)) => Ok(*b),
            RVal::Scalar(Const::I64(k)) => Ok(*k != 0),
            RVal::Scalar(Const::I32(k)) => Ok(*k != 0),
            v => stuck(format!("`{x}` is {}, not a condition", describe(v))),
        }
    }

    fn array(&self, x: &Name) -> R<&RArr> {
        match self.lookup(x)? {
            RVal::Arr(a) => Ok(a),
            v => stuck(format!("`{x}` is {}, not an array", describe(v))),
        }
    }

    /// An `i64` atom (sizes, indices, counts, bounds are `i64`).
    fn atom(&self, a: &Atom) -> R<i64> {
        match a {
            Atom::Int(k, _) => Ok(*k),
            Atom::Const(Const::I64(k), _) => Ok(*k),
            Atom::Const(c, _) => stuck(format!("the {} {c} where an i64 is wanted", c.prim())),
            Atom::Var(x) => self.int(&x.name),
        }
    }

    /// A scalar atom of any type.
    fn scalar_atom(&self, a: &Atom) -> R<Const> {
        match a {
            Atom::Int(k, _) => Ok(Const::I64(*k)),
            Atom::Const(c, _) => Ok(*c),
            Atom::Var(x) => match self.lookup(&x.name)? {
                RVal::Scalar(c) => Ok(*c),
                v => stuck(format!("`{}` is {}, not a scalar", x.name, describe(v))),
            },
        }
    }

    /// A size from a type: an atom's value, which must not be negative.
    fn size(&self, a: &Atom) -> R<usize> {
        let k = self.atom(a)?;
        usize::try_from(k).or_else(|_| stuck(format!("negative size {k}")))
    }

    fn scalar(&self, e: &SExp) -> R<Const> {
        match e {
            SExp::Atom(a) => self.scalar_atom(a),
            SExp::Un(op, a, _) => unop(*op, self.scalar(a)?),
            SExp::Bin(op, a, b, _) => {
                let (a, b) = (self.scalar(a)?, self.scalar(b)?);
                binop(*op, a, b)
            }
        }
    }

    fn bind_inputs(&mut self, params: &[Pat], inputs: &[Value]) -> R<()> {
        if params.len() != inputs.len() {
            return stuck(format!(
                "the program takes {} inputs, but {} were given",
                params.len(),
                inputs.len()
            ));
        }
        let mut arrays = Vec::new();
        for (p, v) in params.iter().zip(inputs) {
            match (&p.ty, v) {
                (Type::Prim(t, _), Value::Scalar(c)) if c.prim() == *t => {
                    self.bind(&p.name.name, RVal::Scalar(*c))?
                }
                (Type::Array(..), Value::Array(a)) => arrays.push((p, a)),
                _ => {
                    return stuck(format!(
                        "input `{}` must be {}, but {} was given",
                        p.name.name,
                        p.ty.describe(),
                        v.type_name()
                    ))
                }
            }
        }
        // Sizes may name later parameters: arrays once every int is bound.
        for (p, a) in arrays {
            let want = a.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
            if a.shape.is_empty() || want != Some(a.data.len()) {
                return stuck(format!(
                    "input `{}` has {} elements for shape {}",
                    p.name.name,
                    a.data.len(),
                    shape_text(&a.shape)
                ));
            }
            self.charge(&a.shape)?;
            let v = nest(&a.shape, a.data.prim(), &elems_of(&a.data));
            self.check_type(p, &v)?;
            self.bind(&p.name.name, v)?;
        }
        Ok(())
    }

    /// Holds a bound value against its pattern's type.
    fn check_type(&self, p: &Pat, v: &RVal) -> R<()> {
        let ok = match (&p.ty, v) {
            (Type::Prim(t, _), RVal::Scalar(c)) => c.prim() == *t,
            (Type::Array(t, _), RVal::Arr(a)) => {
                let want: Vec<usize> = t.shape.iter().map(|s| self.size(s)).collect::<R<_>>()?;
                want == a.shape && t.elem == a.elem
            }
            _ => false,
        };
        if ok {
            return Ok(());
        }
        stuck(format!(
            "`{}` is bound to {}, but its type is {}",
            p.name.name,
            describe(v),
            type_text(self, &p.ty)
        ))
    }

    /// A body's results; its bindings leave scope.
    fn body(&mut self, b: &Body) -> R<Vec<RVal>> {
        let mark = self.env.len();
        for s in &b.stms {
            self.stm(s)?;
        }
        let mut out = Vec::with_capacity(b.result.len());
        for x in &b.result {
            let v = self.lookup(&x.name)?.clone();
            if let RVal::Arr(a) = &v {
                let shape = a.shape.clone();
                self.charge(&shape)?;
            }
            out.push(v);
        }
        self.env.truncate(mark);
        Ok(out)
    }

    /// `let p ... = e`: the values of `e`, bound in order, then each held
    /// against its type (a type may name a size its own pattern binds).
    fn stm(&mut self, s: &Stm) -> R<()> {
        self.burn(1)?;
        let vals = self.exp(s)?;
        if vals.len() != s.pats.len() {
            return stuck(format!(
                "{} values for a pattern of {}",
                vals.len(),
                s.pats.len()
            ));
        }
        let mark = self.env.len();
        for (p, v) in s.pats.iter().zip(vals) {
            self.bind(&p.name.name, v)?;
        }
        for (k, p) in s.pats.iter().enumerate() {
            self.check_type(p, &self.env[mark + k].1)?;
        }
        Ok(())
    }

    fn exp(&mut self, s: &Stm) -> R<Vec<RVal>> {
        Ok(vec![match &s.exp.kind {
            ExpKind::Loop(ps, init, form, b) => return self.run_loop(ps, init, form, b),
            ExpKind::Kernel(i, n, b) => return self.kernel(s, &i.name, n, b),
            ExpKind::Update(x, is, v) => self.update(&x.name, is, v)?,
            ExpKind::Concat(x, y) => self.concat(&x.name, &y.name)?,
            ExpKind::Replicate(n, v) => self.replicate(n, v)?,
            ExpKind::Reduce(op, ne, xs) => self.reduce(op, ne, &xs.name, false)?,
            ExpKind::Scan(op, ne, xs) => self.reduce(op, ne, &xs.name, true)?,
            ExpKind::Scalar(e) => RVal::Scalar(self.scalar(e)?),
            ExpKind::Index(x, idx) => {
                let is: Vec<i64> = idx.iter().map(|a| self.atom(a)).collect::<R<_>>()?;
                let v = index(self.lookup(&x.name)?, &is, &x.name)?;
                // A row is a new array: its cells are charged.
                if let RVal::Arr(a) = &v {
                    let shape = a.shape.clone();
                    self.charge(&shape)?;
                }
                v
            }
            ExpKind::Slice(x, pairs) => {
                let pairs: Vec<(i64, i64)> = pairs
                    .iter()
                    .map(|(o, n)| Ok((self.atom(o)?, self.atom(n)?)))
                    .collect::<R<_>>()?;
                let a = self.array(&x.name)?;
                let shape = slice_shape(a, &pairs, &x.name)?;
                self.charge(&shape)?;
                let a = self.array(&x.name)?;
                RVal::Arr(slice(a, &pairs))
            }
            ExpKind::Transpose(x) => {
                let a = self.array(&x.name)?;
                let [r, c] = a.shape[..] else {
                    return stuck(format!(
                        "transpose of `{}`, of shape {}, which is not 2-D",
                        x.name,
                        shape_text(&a.shape)
                    ));
                };
                self.charge(&[c, r])?;
                RVal::Arr(transpose(self.array(&x.name)?, r, c))
            }
            ExpKind::Copy(x) => {
                let shape = self.array(&x.name)?.shape.clone();
                self.charge(&shape)?;
                RVal::Arr(self.array(&x.name)?.clone())
            }
            ExpKind::Iota(n) => {
                let n = self.atom(n)?;
                let Ok(len) = usize::try_from(n) else {
                    return stuck(format!("iota of negative size {n}"));
                };
                self.charge(&[len])?;
                RVal::Arr(RArr {
                    shape: vec![len],
                    elem: Prim::I64,
                    rows: (0..n).map(|k| RVal::Scalar(Const::I64(k))).collect(),
                })
            }
            ExpKind::If(c, t, e) => {
                let c = self.truth(&c.name)?;
                return self.body(if c { t } else { e });
            }
            ExpKind::Alloc(..) => return stuck("`alloc` is not FUN"),
        }])
    }

    /// `kernel i < n do b`: one array per pattern element; result k's row
    /// i is the body's k-th value for i, of the shape the pattern's type
    /// gives its rows.
    fn kernel(&mut self, s: &Stm, i: &Name, n: &Atom, b: &Body) -> R<Vec<RVal>> {
        let n = self.atom(n)?;
        if s.pats.is_empty() {
            return stuck("a kernel's result must be an array");
        }
        let Ok(len) = usize::try_from(n) else {
            return stuck(format!("kernel of negative size {n}"));
        };
        let mut shapes = Vec::with_capacity(s.pats.len());
        let mut elems = Vec::with_capacity(s.pats.len());
        for p in &s.pats {
            let Type::Array(t, _) = &p.ty else {
                return stuck("a kernel's result must be an array");
            };
            elems.push(t.elem);
            let mut shape = vec![len];
            for a in t.shape.iter().skip(1) {
                shape.push(self.size(a)?);
            }
            let elements = shape.iter().try_fold(1i64, |p, &d| {
                i64::try_from(d).ok().and_then(|d| p.checked_mul(d))
            });
            if elements.is_none() {
                return stuck(format!(
                    "a kernel result of shape {} has more elements than 64 bits count",
                    shape_text(&shape)
                ));
            }
            shapes.push(shape);
        }
        for shape in &shapes {
            self.charge(shape)?;
        }
        let mut rows: Vec<Vec<RVal>> = shapes
            .iter()
            .map(|_| Vec::with_capacity(len.min(1 << 16)))
            .collect();
        for k in 0..n {
            self.burn(1)?;
            self.env.push((i.clone(), RVal::Scalar(Const::I64(k))));
            let r = self.body(b)?;
            self.env.pop();
            if r.len() != shapes.len() {
                return stuck(format!(
                    "a kernel body returns {} values for {} results",
                    r.len(),
                    shapes.len()
                ));
            }
            for (((v, shape), out), &elem) in r.into_iter().zip(&shapes).zip(&mut rows).zip(&elems)
            {
                let inner = &shape[1..];
                let fits = match &v {
                    RVal::Scalar(c) => inner.is_empty() && c.prim() == elem,
                    RVal::Arr(a) => a.shape == inner && a.elem == elem,
                };
                if !fits {
                    return stuck(format!(
                        "iteration {k} returned {}, but each must give {}{elem}",
                        describe(&v),
                        shape_text(inner)
                    ));
                }
                out.push(v);
            }
        }
        Ok(shapes
            .into_iter()
            .zip(rows)
            .zip(elems)
            .map(|((shape, rows), elem)| RVal::Arr(RArr { shape, elem, rows }))
            .collect())
    }

    /// The value of an atom of any type (a literal, or a variable).
    fn value(&self, a: &Atom) -> R<RVal> {
        match a {
            Atom::Int(k, _) => Ok(RVal::Scalar(Const::I64(*k))),
            Atom::Const(c, _) => Ok(RVal::Scalar(*c)),
            Atom::Var(x) => Ok(self.lookup(&x.name)?.clone()),
        }
    }

    /// Binds the loop parameters to `vals` and holds each against its type
    /// (a parameter's type may name another parameter). Like a kernel's
    /// index, loop parameters are not bindings of the trace: only the
    /// body's statements and the loop's pattern are.
    fn bind_params(&mut self, ps: &[Pat], vals: Vec<RVal>) -> R<()> {
        if vals.len() != ps.len() {
            return stuck(format!(
                "{} values for {} loop parameters",
                vals.len(),
                ps.len()
            ));
        }
        let mark = self.env.len();
        for (p, v) in ps.iter().zip(vals) {
            self.env.push((p.name.name.clone(), v));
        }
        for (k, p) in ps.iter().enumerate() {
            self.check_type(p, &self.env[mark + k].1)?;
        }
        Ok(())
    }

    /// E-LOOP-FOR / E-LOOP-WHILE: the parameters bound to the initial
    /// values; each iteration (one unit of fuel) binds them to the body's
    /// results. `for i < n`: n read once, i = 0 .. n-1 (none when n <= 0).
    /// `while c`: runs while the parameter c is non-zero, tested before
    /// each iteration. The values are the parameters' final ones.
    fn run_loop(&mut self, ps: &[Pat], init: &[Atom], form: &LoopForm, b: &Body) -> R<Vec<RVal>> {
        let vals: Vec<RVal> = init.iter().map(|a| self.value(a)).collect::<R<_>>()?;
        let mark = self.env.len();
        self.bind_params(ps, vals)?;
        match form {
            LoopForm::For(i, n) => {
                let n = self.atom(n)?;
                for k in 0..n.max(0) {
                    self.burn(1)?;
                    self.env.push((i.name.clone(), RVal::Scalar(Const::I64(k))));
                    let r = self.body(b)?;
                    self.env.truncate(mark);
                    self.bind_params(ps, r)?;
                }
            }
            LoopForm::While(c) => {
                while self.truth(&c.name)? {
                    self.burn(1)?;
                    let r = self.body(b)?;
                    self.env.truncate(mark);
                    self.bind_params(ps, r)?;
                }
            }
        }
        let out = self.env.drain(mark..).map(|(_, v)| v).collect();
        Ok(out)
    }

    /// E-UPDATE: a new array equal to `x` but for the element or sub-array
    /// the indices name (each an element or an `o : n` range within its
    /// dimension), which becomes `v` (of exactly the shape left).
    fn update(&mut self, x: &Name, is: &[UpdIdx], v: &Atom) -> R<RVal> {
        let idx: Vec<Upd> = is
            .iter()
            .map(|i| {
                Ok(match i {
                    UpdIdx::Elem(j) => Upd::Elem(self.atom(j)?),
                    UpdIdx::Range(o, n) => Upd::Range(self.atom(o)?, self.atom(n)?),
                })
            })
            .collect::<R<_>>()?;
        let v = self.value(v)?;
        let a = self.array(x)?;
        if idx.len() > a.shape.len() {
            return stuck(format!(
                "{} update indices for `{x}`, of rank {}",
                idx.len(),
                a.shape.len()
            ));
        }
        let mut want = Vec::new();
        for (d, (i, &size)) in idx.iter().zip(&a.shape).enumerate() {
            match *i {
                Upd::Elem(j) => {
                    if j < 0 || j as u64 >= size as u64 {
                        return stuck(format!(
                            "update index {j} is out of bounds for dimension {d} of `{x}`, of size {size}"
                        ));
                    }
                }
                Upd::Range(o, n) => {
                    let end = i128::from(o) + i128::from(n);
                    if o < 0 || n < 0 || end > size as i128 {
                        return stuck(format!(
                            "update range {o}:{n} is out of bounds for dimension {d} of `{x}`, of size {size}"
                        ));
                    }
                    want.push(n as usize);
                }
            }
        }
        want.extend_from_slice(&a.shape[idx.len()..]);
        let (got, elem): (&[usize], Prim) = match &v {
            RVal::Scalar(c) => (&[], c.prim()),
            RVal::Arr(b) => (&b.shape, b.elem),
        };
        if got != want.as_slice() || elem != a.elem {
            return stuck(format!(
                "the new value for `{x}` is {}, but the indices leave {}{}",
                describe(&v),
                shape_text(&want),
                a.elem
            ));
        }
        let shape = a.shape.clone();
        self.charge(&shape)?;
        Ok(replace(self.lookup(x)?, &idx, &v))
    }

    /// E-CONCAT: x's rows, then y's; every dimension but the outer one
    /// equal.
    fn concat(&mut self, x: &Name, y: &Name) -> R<RVal> {
        let (a, b) = (self.array(x)?, self.array(y)?);
        if a.shape.len() != b.shape.len() || a.shape[1..] != b.shape[1..] || a.elem != b.elem {
            return stuck(format!(
                "concat of `{x}`, of shape {}, and `{y}`, of shape {}",
                shape_text(&a.shape),
                shape_text(&b.shape)
            ));
        }
        let mut shape = a.shape.clone();
        shape[0] += b.shape[0];
        self.charge(&shape)?;
        let (a, b) = (self.array(x)?, self.array(y)?);
        let elem = a.elem;
        let rows = a.rows.iter().chain(&b.rows).cloned().collect();
        Ok(RVal::Arr(RArr { shape, elem, rows }))
    }

    /// E-REDUCE (`scan` false): ne op xs[0] op ... op xs[n-1], folded from
    /// the left; E-SCAN: the array of the inclusive prefixes. One unit of
    /// fuel per element.
    fn reduce(&mut self, op: &RedOp, ne: &Atom, xs: &Name, scan: bool) -> R<RVal> {
        let ne = self.scalar_atom(ne)?;
        let a = self.array(xs)?;
        if a.shape.len() != 1 || a.elem != ne.prim() {
            return stuck(format!(
                "{} of `{xs}`, of type {}{}, with the neutral element {ne}",
                if scan { "scan" } else { "reduce" },
                shape_text(&a.shape),
                a.elem
            ));
        }
        let elems: Vec<Const> = a
            .rows
            .iter()
            .filter_map(|r| match r {
                RVal::Scalar(c) => Some(*c),
                RVal::Arr(_) => None,
            })
            .collect();
        let n = elems.len();
        if scan {
            self.charge(&[n])?;
        }
        let mut acc = ne;
        let mut out = Vec::with_capacity(if scan { n } else { 0 });
        for x in elems {
            self.burn(1)?;
            acc = self.combine(op, acc, x)?;
            if scan {
                out.push(RVal::Scalar(acc));
            }
        }
        Ok(if scan {
            RVal::Arr(RArr {
                shape: vec![n],
                elem: ne.prim(),
                rows: out,
            })
        } else {
            RVal::Scalar(acc)
        })
    }

    /// `a op b` for the operator of a reduction: a built-in operator, or a
    /// lambda's body with its parameters bound to a and b (like a loop's
    /// parameters, not bindings of the trace), which must give one scalar
    /// of their type.
    fn combine(&mut self, op: &RedOp, a: Const, b: Const) -> R<Const> {
        match op {
            RedOp::Bin(op, _) => binop(*op, a, b),
            RedOp::Lambda(l) => {
                let mark = self.env.len();
                self.bind_params(&l.params, vec![RVal::Scalar(a), RVal::Scalar(b)])?;
                let r = self.body(&l.body);
                self.env.truncate(mark);
                match r?.as_slice() {
                    [RVal::Scalar(c)] if c.prim() == a.prim() => Ok(*c),
                    r => stuck(format!(
                        "an operator gives {} values where one {} is wanted",
                        r.len(),
                        a.prim()
                    )),
                }
            }
        }
    }

    /// E-REPLICATE: n copies of v as the rows of an array.
    fn replicate(&mut self, n: &Atom, v: &Atom) -> R<RVal> {
        let n = self.atom(n)?;
        let v = self.value(v)?;
        let Ok(len) = usize::try_from(n) else {
            return stuck(format!("replicate of negative count {n}"));
        };
        let mut shape = vec![len];
        let elem = match &v {
            RVal::Arr(a) => {
                shape.extend_from_slice(&a.shape);
                a.elem
            }
            RVal::Scalar(c) => c.prim(),
        };
        let elements = shape.iter().try_fold(1i64, |p, &d| {
            i64::try_from(d).ok().and_then(|d| p.checked_mul(d))
        });
        if elements.is_none() {
            return stuck(format!(
                "a replicate of shape {} has more elements than 64 bits count",
                shape_text(&shape)
            ));
        }
        self.charge(&shape)?;
        Ok(RVal::Arr(RArr {
            shape,
            elem,
            rows: vec![v; len],
        }))
    }
}

/// An update index, evaluated.
#[derive(Clone, Copy, Debug)]
enum Upd {
    Elem(i64),
    Range(i64, i64),
}

/// `v` written over the part of `a` the (checked) indices name.
fn replace(a: &RVal, idx: &[Upd], v: &RVal) -> RVal {
    let (Some(&i), RVal::Arr(arr)) = (idx.first(), a) else {
        return v.clone();
    };
    let mut arr = arr.clone();
    match i {
        Upd::Elem(j) => {
            let j = j as usize;
            arr.rows[j] = replace(&arr.rows[j], &idx[1..], v);
        }
        Upd::Range(o, _) => {
            if let RVal::Arr(vs) = v {
                for (t, row) in vs.rows.iter().enumerate() {
                    let at = o as usize + t;
                    arr.rows[at] = replace(&arr.rows[at], &idx[1..], row);
                }
            }
        }
    }
    RVal::Arr(arr)
}

/// `a op b` on integers of one width, by the rules of docs/language.md
/// (comparisons give a `bool`; `&&`, `||` give 1 or 0 of the type).
macro_rules! int_binop {
    ($op:expr, $a:expr, $b:expr, $t:ident, $make:expr) => {{
        let (a, b): ($t, $t) = ($a, $b);
        let make = $make;
        Ok(match $op {
            BinOp::Add => make(a.wrapping_add(b)),
            BinOp::Sub => make(a.wrapping_sub(b)),
            BinOp::Mul => make(a.wrapping_mul(b)),
            BinOp::Div | BinOp::Rem if b == 0 => return stuck("division by zero"),
            // The one quotient that does not fit wraps to itself; its
            // remainder is 0.
            BinOp::Div if b == -1 => make((0 as $t).wrapping_sub(a)),
            BinOp::Rem if b == -1 => make(0),
            // Rust's `/` and `%` on integers truncate toward zero, as C does.
            BinOp::Div => make(a / b),
            BinOp::Rem => make(a % b),
            BinOp::Lt => Const::Bool(a < b),
            BinOp::Le => Const::Bool(a <= b),
            BinOp::Gt => Const::Bool(a > b),
            BinOp::Ge => Const::Bool(a >= b),
            BinOp::Eq => Const::Bool(a == b),
            BinOp::Ne => Const::Bool(a != b),
            BinOp::And => make((a != 0 && b != 0) as $t),
            BinOp::Or => make((a != 0 || b != 0) as $t),
            BinOp::Min => make(if a <= b { a } else { b }),
            BinOp::Max => make(if a >= b { a } else { b }),
        })
    }};
}

/// `a op b` on floats of one width: IEEE 754 in that width.
macro_rules! float_binop {
    ($op:expr, $a:expr, $b:expr, $make:expr) => {{
        let (a, b) = ($a, $b);
        let make = $make;
        Ok(match $op {
            BinOp::Add => make(a + b),
            BinOp::Sub => make(a - b),
            BinOp::Mul => make(a * b),
            BinOp::Div => make(a / b),
            // Rust's float `%` is C's fmod.
            BinOp::Rem => make(a % b),
            // fmin / fmax: a NaN operand gives the other one.
            BinOp::Min => make(a.min(b)),
            BinOp::Max => make(a.max(b)),
            BinOp::Lt => Const::Bool(a < b),
            BinOp::Le => Const::Bool(a <= b),
            BinOp::Gt => Const::Bool(a > b),
            BinOp::Ge => Const::Bool(a >= b),
            BinOp::Eq => Const::Bool(a == b),
            BinOp::Ne => Const::Bool(a != b),
            BinOp::And | BinOp::Or => return stuck("`&&` or `||` on floats"),
        })
    }};
}

/// `a op b`, by the rules of docs/language.md; both operands of one type.
pub(crate) fn binop(op: BinOp, a: Const, b: Const) -> R<Const> {
    match (a, b) {
        (Const::I64(x), Const::I64(y)) => int_binop!(op, x, y, i64, Const::I64),
        (Const::I32(x), Const::I32(y)) => int_binop!(op, x, y, i32, Const::I32),
        (Const::F32(x), Const::F32(y)) => {
            float_binop!(op, f32::from_bits(x), f32::from_bits(y), |v: f32| {
                Const::F32(v.to_bits())
            })
        }
        (Const::F64(x), Const::F64(y)) => {
            float_binop!(op, f64::from_bits(x), f64::from_bits(y), |v: f64| {
                Const::F64(v.to_bits())
            })
        }
        (Const::Bool(x), Const::Bool(y)) => Ok(Const::Bool(match op {
            BinOp::And | BinOp::Min => x && y,
            BinOp::Or | BinOp::Max => x || y,
            BinOp::Lt => !x && y,
            BinOp::Le => !x || y,
            BinOp::Gt => x && !y,
            BinOp::Ge => x || !y,
            BinOp::Eq => x == y,
            BinOp::Ne => x != y,
            _ => return stuck(format!("arithmetic on bools ({a} and {b})")),
        })),
        _ => stuck(format!(
            "operands of two types: the {} {a} and the {} {b}",
            a.prim(),
            b.prim()
        )),
    }
}

/// `op a`, by the rules of docs/language.md.
pub(crate) fn unop(op: UnOp, a: Const) -> R<Const> {
    let wrong = || stuck(format!("`{op:?}` of the {} {a}", a.prim()));
    Ok(match (op, a) {
        (UnOp::Conv(t), _) => convert(a, t),
        (UnOp::Neg, Const::I32(k)) => Const::I32(k.wrapping_neg()),
        (UnOp::Neg, Const::I64(k)) => Const::I64(k.wrapping_neg()),
        (UnOp::Neg, Const::F32(b)) => Const::F32((-f32::from_bits(b)).to_bits()),
        (UnOp::Neg, Const::F64(b)) => Const::F64((-f64::from_bits(b)).to_bits()),
        (UnOp::Not, Const::Bool(b)) => Const::Bool(!b),
        (UnOp::Not, Const::I32(k)) => Const::I32((k == 0) as i32),
        (UnOp::Not, Const::I64(k)) => Const::I64((k == 0) as i64),
        (UnOp::Abs, Const::I32(k)) => Const::I32(k.wrapping_abs()),
        (UnOp::Abs, Const::I64(k)) => Const::I64(k.wrapping_abs()),
        (UnOp::Abs, Const::F32(b)) => Const::F32(f32::from_bits(b).abs().to_bits()),
        (UnOp::Abs, Const::F64(b)) => Const::F64(f64::from_bits(b).abs().to_bits()),
        (UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor, Const::F32(b)) => {
            let x = f32::from_bits(b);
            Const::F32(
                match op {
                    UnOp::Sqrt => x.sqrt(),
                    UnOp::Exp => x.exp(),
                    UnOp::Log => x.ln(),
                    _ => x.floor(),
                }
                .to_bits(),
            )
        }
        (UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor, Const::F64(b)) => {
            let x = f64::from_bits(b);
            Const::F64(
                match op {
                    UnOp::Sqrt => x.sqrt(),
                    UnOp::Exp => x.exp(),
                    UnOp::Log => x.ln(),
                    _ => x.floor(),
                }
                .to_bits(),
            )
        }
        _ => return wrong(),
    })
}

/// `t(c)`: integers wrap (sign-extend or truncate); a `bool` is 0 or 1;
/// a float truncates toward zero and saturates, NaN giving 0 (Rust's `as`);
/// into a float rounds to nearest; into `bool` is "not zero" (a NaN is
/// true).
fn convert(c: Const, t: Prim) -> Const {
    match t {
        Prim::Bool => Const::Bool(match c {
            Const::Bool(b) => b,
            Const::I32(k) => k != 0,
            Const::I64(k) => k != 0,
            Const::F32(b) => f32::from_bits(b) != 0.0,
            Const::F64(b) => f64::from_bits(b) != 0.0,
        }),
        Prim::I32 => Const::I32(match c {
            Const::Bool(b) => b as i32,
            Const::I32(k) => k,
            Const::I64(k) => k as i32,
            Const::F32(b) => f32::from_bits(b) as i32,
            Const::F64(b) => f64::from_bits(b) as i32,
        }),
        Prim::I64 => Const::I64(match c {
            Const::Bool(b) => b as i64,
            Const::I32(k) => k as i64,
            Const::I64(k) => k,
            Const::F32(b) => f32::from_bits(b) as i64,
            Const::F64(b) => f64::from_bits(b) as i64,
        }),
        Prim::F32 => Const::F32(
            match c {
                Const::Bool(b) => b as u8 as f32,
                Const::I32(k) => k as f32,
                Const::I64(k) => k as f32,
                Const::F32(b) => f32::from_bits(b),
                Const::F64(b) => f64::from_bits(b) as f32,
            }
            .to_bits(),
        ),
        Prim::F64 => Const::F64(
            match c {
                Const::Bool(b) => b as u8 as f64,
                Const::I32(k) => k as f64,
                Const::I64(k) => k as f64,
                Const::F32(b) => f32::from_bits(b) as f64,
                Const::F64(b) => f64::from_bits(b),
            }
            .to_bits(),
        ),
    }
}

/// `index(v, i1, ..., in)` (fig. 5): row i1, then its element at i2, ...;
/// at most one index per dimension, each within its dimension (E-INDEX).
/// With fewer indices than dimensions, the sub-array they select.
fn index(v: &RVal, is: &[i64], x: &Name) -> R<RVal> {
    let mut cur = v;
    for (d, &k) in is.iter().enumerate() {
        let RVal::Arr(a) = cur else {
            return stuck(format!("{} indices for `{x}`, of rank {d}", is.len()));
        };
        match usize::try_from(k).ok().and_then(|k| a.rows.get(k)) {
            Some(r) => cur = r,
            None => {
                return stuck(format!(
                    "index {k} is out of bounds for dimension {d} of `{x}`, of size {}",
                    a.rows.len()
                ))
            }
        }
    }
    if is.is_empty() {
        return stuck(format!("no indices for `{x}`"));
    }
    Ok(cur.clone())
}

/// The shape of `slice(a, o1 : n1, ...)`, checking one pair per dimension,
/// each selecting elements o .. o+n-1 that exist.
fn slice_shape(a: &RArr, pairs: &[(i64, i64)], x: &Name) -> R<Vec<usize>> {
    if pairs.len() != a.shape.len() {
        return stuck(format!(
            "{} slice pairs for `{x}`, of rank {}",
            pairs.len(),
            a.shape.len()
        ));
    }
    let mut shape = Vec::with_capacity(pairs.len());
    for (d, (&(o, n), &size)) in pairs.iter().zip(&a.shape).enumerate() {
        let end = i128::from(o) + i128::from(n);
        if o < 0 || n < 0 || end > size as i128 {
            return stuck(format!(
                "slice {o}:{n} is out of bounds for dimension {d} of `{x}`, of size {size}"
            ));
        }
        shape.push(n as usize);
    }
    Ok(shape)
}

/// `slice(a, o1 : n1, ...)` (fig. 5), pairs already checked: rows o1 ..
/// o1+n1-1, each sliced by the other pairs.
fn slice(a: &RArr, pairs: &[(i64, i64)]) -> RArr {
    let (o, n) = pairs[0];
    let rows = a.rows[o as usize..(o + n) as usize]
        .iter()
        .map(|r| match r {
            RVal::Arr(inner) => RVal::Arr(slice(inner, &pairs[1..])),
            RVal::Scalar(c) => RVal::Scalar(*c),
        })
        .collect();
    RArr {
        shape: pairs.iter().map(|&(_, n)| n as usize).collect(),
        elem: a.elem,
        rows,
    }
}

/// `tr(a)` (fig. 5) of an `r` by `c` array: row j holds element j of
/// every row of `a`.
fn transpose(a: &RArr, r: usize, c: usize) -> RArr {
    let rows = (0..c)
        .map(|j| {
            RVal::Arr(RArr {
                shape: vec![r],
                elem: a.elem,
                rows: a
                    .rows
                    .iter()
                    .map(|row| match row {
                        RVal::Arr(row) => row.rows[j].clone(),
                        RVal::Scalar(c) => RVal::Scalar(*c),
                    })
                    .collect(),
            })
        })
        .collect();
    RArr {
        shape: vec![c, r],
        elem: a.elem,
        rows,
    }
}

fn type_text(m: &Machine<'_>, t: &Type) -> String {
    match t {
        Type::Array(a, _) => {
            let dims: String = a
                .shape
                .iter()
                .map(|s| match m.atom(s) {
                    Ok(k) => format!("[{k}]"),
                    Err(_) => "[?]".into(),
                })
                .collect();
            format!("{dims}{}", a.elem)
        }
        t => t.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;
    use funmem_lang::parse::AnyProgram;
    use funmem_semantics::textual::parse_values;

    /// Parses and type-checks a FUN program.
    fn program(text: &str) -> Program {
        let p = funmem_lang::parse::parse_program(text, Lang::Fun).expect("parses");
        funmem_lang::check::check_any(&AnyProgram::Fun(p.clone())).expect("type-checks");
        p
    }

    /// The program's results on the inputs (in the value format), printed
    /// and separated by spaces, or its error.
    fn eval(text: &str, inputs: &str) -> Result<String, RefError> {
        let inputs = parse_values(inputs).expect("inputs");
        let limits = RefLimits {
            fuel: 100_000,
            cells: 10_000,
        };
        let out = run(&program(text), &inputs, limits)?;
        let out: Vec<String> = out.iter().map(Value::to_string).collect();
        Ok(out.join(" "))
    }

    fn ok(text: &str, inputs: &str) -> String {
        eval(text, inputs).unwrap_or_else(|e| panic!("{e}"))
    }

    fn stuck_with(text: &str, inputs: &str) -> String {
        match eval(text, inputs) {
            Err(RefError::Stuck(m)) => m,
            r => panic!("expected stuck, got {r:?}"),
        }
    }

    const M33: &str = "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]";

    fn slice_2d(o0: i64, o1: i64) -> String {
        format!(
            "def main (x: [3][3]int) =\n  let (y: [2][2]int) = x[{o0} : 2, {o1} : 2]\n  in (y)\n"
        )
    }

    #[test]
    fn slices_of_a_2d_array() {
        assert_eq!(ok(&slice_2d(1, 1), M33), "[[5i64, 6i64], [8i64, 9i64]]");
        assert_eq!(ok(&slice_2d(0, 1), M33), "[[2i64, 3i64], [5i64, 6i64]]");
        assert_eq!(ok(&slice_2d(1, 0), M33), "[[4i64, 5i64], [7i64, 8i64]]");
        let m = stuck_with(&slice_2d(2, 0), M33);
        assert!(
            m.contains("slice 2:2 is out of bounds for dimension 0"),
            "{m}"
        );
    }

    #[test]
    fn a_slice_of_a_3d_array() {
        // x[i][j][k] = 12i + 4j + k.
        let p = "def main =\n  let (xs: [24]int) = iota 24\n  let (two: int) = 2\n  let (x: [two][3][4]int) = kernel i < two do\n    let (r: [3][4]int) = kernel j < 3 do\n      let (o: int) = i * 12 + j * 4\n      let (row: [4]int) = xs[o : 4]\n      in (row)\n    in (r)\n  let (y: [1][2][2]int) = x[1 : 1, 1 : 2, 2 : 2]\n  in (y)\n";
        assert_eq!(ok(p, ""), "[[[18i64, 19i64], [22i64, 23i64]]]");
    }

    #[test]
    fn the_transpose_of_a_slice() {
        let p = "def main (x: [3][3]int) =\n  let (y: [2][2]int) = x[0 : 2, 1 : 2]\n  let (t: [2][2]int) = transpose y\n  let (e: int) = t[1, 0]\n  in (t, e)\n";
        assert_eq!(ok(p, M33), "[[2i64, 5i64], [3i64, 6i64]] 3i64");
        let p = "def main (x: [2][3]int) =\n  let (t: [3][2]int) = transpose x\n  let (u: [2][1]int) = t[1 : 2, 1 : 1]\n  in (u)\n";
        assert_eq!(ok(p, "[[1, 2, 3], [4, 5, 6]]"), "[[5i64], [6i64]]");
    }

    #[test]
    fn nested_kernels_returning_arrays() {
        let p = "def main (n: int) =\n  let (a: [n][3]int) = kernel i < n do\n    let (r: [3]int) = kernel j < 3 do\n      let (v: int) = i * 10 + j\n      in (v)\n    in (r)\n  in (a)\n";
        assert_eq!(ok(p, "2"), "[[0i64, 1i64, 2i64], [10i64, 11i64, 12i64]]");
        // No iterations: the inner size is kept.
        assert_eq!(ok(p, "0"), "empty([0][3]i64)");
        let m = stuck_with(p, "-1");
        assert!(m.contains("kernel of negative size -1"), "{m}");
    }

    #[test]
    fn an_if_with_existential_sizes() {
        let p = "def main (c: int) =\n  let (xs: [3]int) = iota 3\n  let (k: int) (ys: [k]int) = if c then\n    let (a: int) = 2\n    let (zs: [a]int) = xs[1 : a]\n    in (a, zs)\n  else\n    let (b: int) = 0\n    let (ws: [b]int) = xs[0 : b]\n    in (b, ws)\n  let (zs: [k]int) = copy ys\n  in (k, zs)\n";
        assert_eq!(ok(p, "1"), "2i64 [1i64, 2i64]");
        assert_eq!(ok(p, "0"), "0i64 empty([0]i64)");
    }

    #[test]
    fn scalars_wrap_and_truncate() {
        let p = "def main (a: int) (b: int) =\n  let (q: int) = a / b\n  let (r: int) = a % b\n  let (s: int) = a * 2 + -a\n  let (c: int) = (a < b) + !b + (a && 0) + (a || 0) + min(a, b) - max(a, b)\n  in (q, r, s, c)\n";
        assert_eq!(ok(p, "-7 2"), "-3i64 -1i64 -7i64 -7i64");
        assert_eq!(ok(p, "7 -2"), "-3i64 1i64 7i64 -8i64");
        let min = i64::MIN;
        assert_eq!(
            ok(p, &format!("{min} -1")),
            format!("{min}i64 0i64 {min}i64 {}i64", min + 3)
        );
        assert_eq!(stuck_with(p, "1 0"), "division by zero");
    }

    #[test]
    fn errors_are_stuck_and_huge_arrays_a_limit() {
        let idx = "def main (x: [3]int) (i: int) =\n  let (y: int) = x[i]\n  in (y)\n";
        assert_eq!(ok(idx, "[4, 5, 6] 2"), "6i64");
        let m = stuck_with(idx, "[4, 5, 6] 3");
        assert!(
            m.contains("index 3 is out of bounds for dimension 0"),
            "{m}"
        );
        assert!(stuck_with(idx, "[4, 5] 0").contains("its type is [3]i64"));
        let iota = "def main (n: int) =\n  let (x: [n]int) = iota n\n  in (x)\n";
        assert_eq!(ok(iota, "3"), "[0i64, 1i64, 2i64]");
        assert!(stuck_with(iota, "-2").contains("iota of negative size -2"));
        assert!(matches!(
            eval(iota, "1000000000000"),
            Err(RefError::Limit(_))
        ));
        // A kernel that would run forever runs out of fuel.
        let k = "def main (n: int) =\n  let (x: [n]int) = kernel i < n do\n    in (i)\n  in (x)\n";
        assert!(matches!(eval(k, "9000"), Err(RefError::Limit(_))));
    }

    #[test]
    fn judging_compares_results_exactly_and_errors_by_kind() {
        let stuck_src = Err(EvalError::stuck("E-INDEX", funmem_lang::Span::DUMMY, "x"));
        let one = Ok(vec![Value::Scalar(Const::I64(1))]);
        assert_eq!(
            judge(&one, &Ok(vec![Value::Scalar(Const::I64(1))])),
            Judgement::Agrees
        );
        assert!(matches!(
            judge(&one, &Ok(vec![Value::Scalar(Const::I64(2))])),
            Judgement::Differs(m) if m.contains("the source gives 1i64, the reference evaluator gives 2i64")
        ));
        assert_eq!(
            judge(&stuck_src, &Err(RefError::Stuck("y".into()))),
            Judgement::Agrees
        );
        assert!(matches!(
            judge(&stuck_src, &Ok(vec![])),
            Judgement::Differs(_)
        ));
        assert!(matches!(
            judge(&one, &Err(RefError::Stuck("y".into()))),
            Judgement::Differs(_)
        ));
        assert_eq!(
            judge(&one, &Err(RefError::Limit("y".into()))),
            Judgement::Inconclusive
        );
        let fuel = Err(funmem_semantics::error::out_of_fuel(
            1,
            "E-LET",
            funmem_lang::Span::DUMMY,
        ));
        assert_eq!(judge(&fuel, &Ok(vec![])), Judgement::Inconclusive);
    }

    /// On generated programs (many of which go wrong), the reference and
    /// FUN's interpreter agree: the same bindings, and the same results or
    /// both stuck at the same binding.
    #[test]
    fn agrees_with_the_fun_interpreter_on_generated_programs() {
        use rand::SeedableRng;
        let cfg = crate::GenConfig {
            fail_share: 0.5,
            ..crate::GenConfig::default()
        };
        let limits = Limits {
            fuel: 1_000_000,
            max_heap: 1 << 20,
        };
        let (mut results, mut went_wrong) = (0, 0);
        let mut ill_typed = Vec::new();
        for k in 0..400u64 {
            let case = crate::gen::gen_fun(&mut crate::Rng::seed_from_u64(k), &cfg);
            if let Err(d) = funmem_lang::check::check_program(&case.program) {
                ill_typed.push(format!("program {k}: {}", d.message));
                continue;
            }
            let mut trace = Trace::default();
            let source =
                funmem_semantics::fun::run_value(&case.program, &case.inputs, limits, &mut trace);
            assert!(!trace.cut);
            let limits = RefLimits::from_limits(limits);
            match check(&case.program, &case.inputs, limits, &source, Some(&trace)) {
                Judgement::Agrees if source.is_ok() => results += 1,
                Judgement::Agrees => went_wrong += 1,
                Judgement::Inconclusive => {}
                Judgement::Differs(m) => panic!("program {k}: {m}\n{}", case.program),
            }
        }
        eprintln!(
            "{} ill-typed programs: {:?}",
            ill_typed.len(),
            ill_typed.first()
        );
        assert!(results > 150 && went_wrong > 50, "{results} {went_wrong}");
    }
}
