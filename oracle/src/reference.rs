//! A brute-force FUNMEM heap semantics (IFL 2022 paper, fig. 10, with
//! memcopy, eq. 5, and racefree, eq. 4), written for clarity rather than
//! speed: the reference against which the real interpreter
//! (`funmem_semantics::heap`), its race detector and validity are checked.
//!
//! The heap is a vector of blocks, each a vector of bytes (labels are
//! positions, in allocation order). An array of element type t at LMAD
//! address k occupies bytes k*size(t) .. (k+1)*size(t)-1 of its block,
//! little-endian; arrays of different types may share a block. Every heap
//! access is recorded in the *trace* of the statement being evaluated: a
//! read set and a write set of byte ranges `(block, first byte, bytes)`,
//! as the boxed parts of fig. 10 do. A kernel
//! runs its iterations one after another, each with a trace of its own that
//! takes in everything the iteration does, the kernels nested in it
//! included, and the memcopy of its result into the kernel's array (fig.
//! 10's R' and W'). When the iterations are done, eq. 4 is checked over
//! every pair of them: bytes written by one iteration and read or written
//! by another are a race (two accesses of different widths race when they
//! share a byte). Nothing is shared with the real
//! interpreters but the syntax tree, the value type and the type of a race
//! report.
//!
//! A race is reported as every conflicting pair of accesses it found, in
//! the terms of the real interpreter's reports (`funmem_semantics::error::
//! Race`): the racing kernel's statement, the location (the block by its
//! allocation number, `mem` parameters first in parameter order, then
//! every `alloc` in the order evaluated; the offset: the first byte both
//! accesses touch), the two iterations of
//! the racing kernel instance (the one that ran first first) and whether
//! each read or wrote. A race does not stop this semantics: evaluation goes
//! on (sequentially, as the paper's rules would if eq. 4 were dropped) and
//! collects the conflicts of every kernel instance, until the program ends
//! or gets stuck. The real detector stops at the first conflicting access
//! it meets, so its report must be one of the conflicts found here; where
//! the program has exactly one (`gen_race` makes such programs), it must be
//! that one.
//!
//! Element types, reduce, scan and partial indexing follow
//! docs/language.md: scalars are typed constants, computed with the
//! operators of [`crate::fun_ref`] (written independently of the
//! interpreters'); `alloc se t` is se * size(t) bytes of zeros (the heap
//! limit counts 8-byte cells); `reduce` reads xs's elements and gives a
//! scalar (E-MEM-REDUCE); `scan` reads all of xs, then writes the prefixes
//! at the pattern's place (E-MEM-SCAN). Outside every kernel a scan is one
//! parallel operation: each pair of an element it reads and an element it
//! writes that share a byte is a conflict, reported as a race of the scan's
//! statement between "iteration" j (the read of xs[j]) and i (the write of
//! the i-th prefix); inside a kernel iteration a reduce or scan is that
//! iteration's code. A lambda operator runs its body with its parameters
//! bound, its reads the enclosing trace's. `x[i]` with fewer indices than
//! x's rank is x's block at x's LMAD with those dimensions fixed (index_f,
//! no access).
//!
//! The constructs beyond the paper follow docs/language.md: a loop's
//! parameters (blocks, integers, arrays with their block and LMAD) are
//! rebound to the body's results after each iteration, so a loop may swap
//! blocks or return its array anywhere; a loop is sequential (its
//! iterations' accesses join the enclosing trace, and eq. 4 is checked
//! only between a kernel's iterations, loops inside them included); `x
//! with [idx] = v` memcopies v through x's LMAD, narrowed by the indices,
//! into x's block, and its result is x's block and LMAD; `concat x y`
//! memcopies x to the result place's first rows, then y to the rest;
//! `replicate n v` memcopies v to each of the n rows; a kernel with
//! several results memcopies each iteration's k-th value to row i of the
//! k-th result's place, in order.
//!
//! What the paper leaves open follows docs/language.md
//! ("Semantics as implemented"): indices are 0-based; an index or slice
//! outside the array's shape, an access outside its block, a division or
//! remainder by zero, and a negative `alloc`, `iota` or kernel size are
//! stuck; memcopy reads its whole source before it writes; `alloc` fills
//! with zeros; inputs are laid out in `mem` parameters just large enough
//! for them; results are read back through their LMADs, and `mem` results
//! are not returned.
//!
//! Race versus stuck. In the paper a racing kernel and a stuck one alike
//! have no derivation; an implementation reports whichever it meets first.
//! The real interpreter checks races as accesses happen, so a race between
//! accesses made before the program gets stuck is reported as a race. To
//! say the same, when an iteration gets stuck (or runs out of fuel) this
//! semantics still checks eq. 4 over the accesses made so far, the stuck
//! iteration's included, at every enclosing kernel, and reports a race if
//! one is there.

use crate::fun_ref::{self, RefError};
use funmem_lang::ast::{
    Atom, Body, ExpKind, LmadSyn, LoopForm, Pat, Program, RedOp, SExp, Stm, Type, UpdIdx,
};
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Span};
use funmem_semantics::error::{Access, Race};
use funmem_semantics::value::{ArrayValue, Elems, Value};
use std::collections::{BTreeSet, HashMap};

/// How a program ends under the reference heap semantics.
#[derive(Clone, Debug, PartialEq)]
pub enum RefOutcome {
    /// The results, `mem` results left out, arrays read back through their
    /// LMADs in row-major order of their index space.
    Results(Vec<Value>),
    /// Eq. 4 fails for some kernel instance (or a scan outside every
    /// kernel writes where it reads): every conflicting pair of accesses
    /// found (at least one), in the order found. Each names the racing
    /// kernel's (or scan's) statement, the location (its first shared
    /// byte), and the two iterations at that kernel's level (paths of one
    /// index: the earlier iteration first) with whether each read or wrote.
    Race {
        /// The conflicts, inner kernels' before the enclosing ones'.
        conflicts: Vec<Race>,
    },
    /// A rule's premise fails; the message says which and why.
    Stuck(String),
    /// More statements, kernel and loop iterations, `replicate` rows and
    /// elements written or read back than the fuel allows.
    OutOfFuel,
    /// More heap cells (8 bytes each) than the limit allows.
    OutOfHeap,
}

/// Most heap cells (8 bytes each) [`reference_heap`] allocates in all (the
/// real interpreter's default limit).
const MAX_CELLS: u64 = 1 << 30;

/// Evaluates a FUNMEM program on its inputs under the reference heap
/// semantics, with at most `fuel` statements, kernel and loop iterations
/// and elements written or read back (so that no layout makes it run for
/// ever).
pub fn reference_heap(p: &Program, inputs: &[Value], fuel: u64) -> RefOutcome {
    reference_heap_within(p, inputs, fuel, MAX_CELLS)
}

/// [`reference_heap`] allocating at most `max_cells` heap cells (8 bytes
/// each, the bytes of all blocks rounded up) in all.
pub fn reference_heap_within(
    p: &Program,
    inputs: &[Value],
    fuel: u64,
    max_cells: u64,
) -> RefOutcome {
    let mut m = Machine {
        heap: Vec::new(),
        fuel,
        bytes: 0,
        max_cells,
        conflicts: Vec::new(),
        depth: 0,
    };
    let r = m.program(p, inputs);
    if !m.conflicts.is_empty() {
        // Every conflict found was made before the program ended or got
        // stuck: the real interpreter meets it first.
        return RefOutcome::Race {
            conflicts: m.conflicts,
        };
    }
    match r {
        Ok(v) => RefOutcome::Results(v),
        Err(Wrong::Stuck(msg)) => RefOutcome::Stuck(msg),
        Err(Wrong::OutOfFuel) => RefOutcome::OutOfFuel,
        Err(Wrong::OutOfHeap) => RefOutcome::OutOfHeap,
    }
}

/// Whether a race report (of the real interpreter) names one of these
/// conflicts: the same kernel, location (block and first shared byte), and
/// pair of iterations at the racing kernel's level with the same kinds of
/// access, in either order. Inner iteration paths are not compared.
pub fn names_a_conflict(report: &Race, conflicts: &[Race]) -> bool {
    let top = |a: &Access| (a.path.first().copied(), a.write);
    let (x, y) = (top(&report.first), top(&report.second));
    conflicts.iter().any(|c| {
        let (p, q) = (top(&c.first), top(&c.second));
        // (Spans compare equal whatever their positions: compare those.)
        (c.kernel.start, c.kernel.end) == (report.kernel.start, report.kernel.end)
            && c.block == report.block
            && c.offset == report.offset
            && ((x, y) == (p, q) || (x, y) == (q, p))
    })
}

/// A concrete LMAD: `offset + {(elems : stride) ...}`, outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Lmad {
    offset: i64,
    dims: Vec<(i64, i64)>,
}

impl Lmad {
    fn rank(&self) -> usize {
        self.dims.len()
    }

    fn shape(&self) -> Vec<i64> {
        self.dims.iter().map(|d| d.0).collect()
    }

    /// Every index of the domain, in row-major order (none when a dimension
    /// has no elements).
    fn domain(&self) -> Vec<Vec<i64>> {
        let mut out = vec![Vec::new()];
        for &(n, _) in &self.dims {
            let mut next = Vec::new();
            for prefix in &out {
                for k in 0..n.max(0) {
                    let mut ix = prefix.clone();
                    ix.push(k);
                    next.push(ix);
                }
            }
            out = next;
        }
        out
    }

    /// L(i1, ..., iq) (eq. 1), wrapping.
    fn apply(&self, ix: &[i64]) -> i64 {
        self.dims
            .iter()
            .zip(ix)
            .fold(self.offset, |a, (&(_, s), &i)| {
                a.wrapping_add(i.wrapping_mul(s))
            })
    }

    /// The addresses of the domain, in row-major order.
    fn addresses(&self) -> Vec<i64> {
        self.domain().iter().map(|ix| self.apply(ix)).collect()
    }

    /// slice_f (eq. 2).
    fn slice(&self, pairs: &[(i64, i64)]) -> Lmad {
        let mut l = self.clone();
        for (d, &(o, n)) in l.dims.iter_mut().zip(pairs) {
            l.offset = l.offset.wrapping_add(o.wrapping_mul(d.1));
            d.0 = n;
        }
        l
    }

    /// Rows `o .. o+n-1` of the outermost dimension.
    fn rows(&self, o: i64, n: i64) -> Lmad {
        let mut l = self.clone();
        if let Some(d) = l.dims.first_mut() {
            l.offset = l.offset.wrapping_add(o.wrapping_mul(d.1));
            d.0 = n;
        }
        l
    }

    /// index_f (eq. 3): row `k` of the outermost dimension.
    fn row(&self, k: i64) -> Lmad {
        Lmad {
            offset: self
                .offset
                .wrapping_add(k.wrapping_mul(self.dims.first().map_or(0, |d| d.1))),
            dims: self.dims.iter().skip(1).copied().collect(),
        }
    }
}

/// A value of fig. 6: a scalar, a block label, or a label, an LMAD and
/// the element type.
#[derive(Clone, Debug)]
enum RV {
    Scalar(Const),
    Mem(usize),
    Arr(usize, Lmad, Prim),
}

/// An access: a block, its first byte, and how many bytes.
type Bytes = (usize, i64, i64);

/// A reduction's neutral element, its operand's elements, and the bytes
/// each element was read from (with its index).
type Operand = (Const, Vec<Const>, Vec<(Bytes, usize)>);

/// The read set and the write set of fig. 10's traces, as byte ranges.
#[derive(Clone, Debug, Default)]
struct Trace {
    reads: BTreeSet<Bytes>,
    writes: BTreeSet<Bytes>,
}

impl Trace {
    fn absorb(&mut self, t: &Trace) {
        self.reads.extend(t.reads.iter().copied());
        self.writes.extend(t.writes.iter().copied());
    }
}

/// Largest access, in bytes (an `i64` or `f64`).
const WIDEST: i64 = 8;

/// The first byte shared by each range of `a` and a range of `b` that
/// overlap it, for every such pair in order of `a`, then of `b` (each
/// first byte once per pair of kinds).
fn overlaps(a: &BTreeSet<Bytes>, b: &BTreeSet<Bytes>) -> Vec<(usize, i64)> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for &(blk, start, len) in a {
        let end = start.saturating_add(len);
        // Ranges of `b` that can overlap start after start - WIDEST.
        let from = (blk, start.saturating_sub(WIDEST), 0);
        let to = (blk, end, 0);
        for &(_, s, l) in b.range(from..to) {
            if s < end && start < s.saturating_add(l) && seen.insert((blk, s.max(start))) {
                out.push((blk, s.max(start)));
            }
        }
    }
    out
}

/// racefree (eq. 4), pair by pair: every byte range written by one
/// iteration and read or written by another, as a conflict of the kernel
/// `kernel` (iteration `k` is `ts[k]`), the earlier iteration first, at the
/// first byte the two share. Empty when the iterations are race free.
fn conflicts(kernel: Span, ts: &[Trace]) -> Vec<Race> {
    let mut out = Vec::new();
    let access = |it: usize, write: bool| Access {
        path: vec![it as i64],
        write,
    };
    for (i, ti) in ts.iter().enumerate() {
        for (j, tj) in ts.iter().enumerate().skip(i + 1) {
            // (i's set, whether a write, j's set, whether a write), one
            // of them writing.
            let pairs = [
                (&ti.writes, true, &tj.writes, true),
                (&ti.writes, true, &tj.reads, false),
                (&ti.reads, false, &tj.writes, true),
            ];
            for (a, aw, b, bw) in pairs {
                for (block, offset) in overlaps(a, b) {
                    out.push(Race {
                        kernel,
                        block,
                        offset,
                        first: access(i, aw),
                        second: access(j, bw),
                    });
                }
            }
        }
    }
    out
}

/// Why evaluation stopped.
enum Wrong {
    Stuck(String),
    OutOfFuel,
    OutOfHeap,
}

fn stuck<T>(msg: impl Into<String>) -> Result<T, Wrong> {
    Err(Wrong::Stuck(msg.into()))
}

/// An error of the shared scalar operators, as ours.
fn wrong(e: RefError) -> Wrong {
    match e {
        RefError::Limit(_) => Wrong::OutOfFuel,
        RefError::Stuck(m) | RefError::Differs(m) => Wrong::Stuck(m),
    }
}

type Env = HashMap<Name, RV>;

struct Machine {
    heap: Vec<Vec<u8>>,
    fuel: u64,
    /// Bytes allocated so far, in all.
    bytes: u64,
    max_cells: u64,
    /// The conflicts (eq. 4) found so far.
    conflicts: Vec<Race>,
    /// How many kernel iterations enclose the statement being evaluated.
    depth: usize,
}

fn lookup<'e>(env: &'e Env, x: &Name) -> Result<&'e RV, Wrong> {
    match env.get(x) {
        Some(v) => Ok(v),
        None => stuck(format!("`{x}` is unbound")),
    }
}

/// An `i64` variable (a size, an index, a count).
fn int(env: &Env, x: &Name) -> Result<i64, Wrong> {
    match lookup(env, x)? {
        RV::Scalar(Const::I64(k)) => Ok(*k),
        _ => stuck(format!("`{x}` is not an i64")),
    }
}

/// A condition: a `bool`, or an integer that is true when not zero.
fn truth(env: &Env, x: &Name) -> Result<bool, Wrong> {
    match lookup(env, x)? {
        RV::Scalar(Const::Bool(b)) => Ok(*b),
        RV::Scalar(Const::I64(k)) => Ok(*k != 0),
        RV::Scalar(Const::I32(k)) => Ok(*k != 0),
        _ => stuck(format!("`{x}` is not a condition")),
    }
}

/// An `i64` atom.
fn atom(env: &Env, a: &Atom) -> Result<i64, Wrong> {
    match a {
        Atom::Var(x) => int(env, &x.name),
        Atom::Int(k, _) | Atom::Const(Const::I64(k), _) => Ok(*k),
        Atom::Const(c, _) => stuck(format!("{c} where an i64 is wanted")),
    }
}

/// An atom's value, of any type.
fn value(env: &Env, a: &Atom) -> Result<RV, Wrong> {
    Ok(match a {
        Atom::Int(k, _) => RV::Scalar(Const::I64(*k)),
        Atom::Const(c, _) => RV::Scalar(*c),
        Atom::Var(x) => lookup(env, &x.name)?.clone(),
    })
}

/// A scalar expression, with the typed operators of docs/language.md
/// (both operands always evaluated).
fn sexp(env: &Env, e: &SExp) -> Result<Const, Wrong> {
    match e {
        SExp::Atom(a) => match value(env, a)? {
            RV::Scalar(c) => Ok(c),
            _ => stuck(format!(
                "`{}` is not a scalar",
                funmem_lang::print::sexp_string(e)
            )),
        },
        SExp::Un(op, a, _) => fun_ref::unop(*op, sexp(env, a)?).map_err(wrong),
        SExp::Bin(op, l, r, _) => {
            let a = sexp(env, l)?;
            let b = sexp(env, r)?;
            fun_ref::binop(*op, a, b).map_err(wrong)
        }
    }
}

/// An `i64` scalar expression (LMADs, sizes).
fn index_sexp(env: &Env, e: &SExp) -> Result<i64, Wrong> {
    match sexp(env, e)? {
        Const::I64(k) => Ok(k),
        c => stuck(format!("{c} where an i64 is wanted")),
    }
}

/// E(L): an LMAD of the program in the current environment.
fn lmad(env: &Env, l: &LmadSyn) -> Result<Lmad, Wrong> {
    match l {
        LmadSyn::Explicit { offset, dims, .. } => {
            let mut ds = Vec::new();
            for (n, s) in dims {
                ds.push((atom(env, n)?, index_sexp(env, s)?));
            }
            Ok(Lmad {
                offset: index_sexp(env, offset)?,
                dims: ds,
            })
        }
        LmadSyn::RowMajor(shape, _) => {
            let ns: Vec<i64> = shape
                .iter()
                .map(|a| atom(env, a))
                .collect::<Result<_, _>>()?;
            let mut dims = vec![(0, 0); ns.len()];
            let mut stride = 1i64;
            for (d, &n) in ns.iter().enumerate().rev() {
                dims[d] = (n, stride);
                stride = stride.wrapping_mul(n);
            }
            Ok(Lmad { offset: 0, dims })
        }
    }
}

/// The block, LMAD and element type a pattern's type names.
fn place(env: &Env, ty: &Type) -> Result<(usize, Lmad, Prim), Wrong> {
    match ty {
        Type::Array(a, _) => match &a.mem {
            Some(m) => match lookup(env, &m.block.name)? {
                RV::Mem(l) => Ok((*l, lmad(env, &m.lmad)?, a.elem)),
                _ => stuck(format!("`{}` is not a block", m.block.name)),
            },
            None => stuck("an array type without memory"),
        },
        _ => stuck("not an array type"),
    }
}

/// A constant's little-endian bytes, by our own code.
fn to_bytes(c: Const) -> Vec<u8> {
    match c {
        Const::Bool(b) => vec![u8::from(b)],
        Const::I32(k) => k.to_le_bytes().to_vec(),
        Const::I64(k) => k.to_le_bytes().to_vec(),
        Const::F32(b) => b.to_le_bytes().to_vec(),
        Const::F64(b) => b.to_le_bytes().to_vec(),
    }
}

/// The constant of type `t` held in `b` (as many bytes as its size).
fn from_bytes(t: Prim, b: &[u8]) -> Const {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    match t {
        // Any byte but 0 is true.
        Prim::Bool => Const::Bool(w[0] != 0),
        Prim::I32 => Const::I32(i32::from_le_bytes([w[0], w[1], w[2], w[3]])),
        Prim::I64 => Const::I64(i64::from_le_bytes(w)),
        Prim::F32 => Const::F32(u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
        Prim::F64 => Const::F64(u64::from_le_bytes(w)),
    }
}

impl Machine {
    fn burn(&mut self) -> Result<(), Wrong> {
        if self.fuel == 0 {
            return Err(Wrong::OutOfFuel);
        }
        self.fuel -= 1;
        Ok(())
    }

    /// Charges one unit of fuel per element of an LMAD's domain, before
    /// it is enumerated: a huge array in a stride-0 layout fits a small
    /// block, and would otherwise be written (or its addresses listed)
    /// for ever.
    fn spend(&mut self, lm: &Lmad) -> Result<(), Wrong> {
        let elems = lm
            .dims
            .iter()
            .fold(1u64, |p, &(n, _)| p.saturating_mul(n.max(0) as u64));
        match self.fuel.checked_sub(elems) {
            Some(left) => {
                self.fuel = left;
                Ok(())
            }
            None => Err(Wrong::OutOfFuel),
        }
    }

    /// The bytes of element `at` of type `t` in block `l`: the range, which
    /// must lie inside the block.
    fn bytes_of(&self, l: usize, at: i64, t: Prim) -> Result<Bytes, Wrong> {
        let len = match self.heap.get(l) {
            Some(b) => b.len(),
            None => return stuck(format!("block {l} does not exist")),
        };
        let size = t.size() as i64;
        let first = at.checked_mul(size);
        match first {
            Some(b) if b >= 0 && (b as u64).saturating_add(size as u64) <= len as u64 => {
                Ok((l, b, size))
            }
            _ => stuck(format!(
                "element {at} of type {t} is outside block {l}, of {len} bytes"
            )),
        }
    }

    /// H[l, at] of type t, recorded in the read set.
    fn read(&mut self, l: usize, at: i64, t: Prim, tr: &mut Trace) -> Result<Const, Wrong> {
        let r = self.bytes_of(l, at, t)?;
        tr.reads.insert(r);
        let (b, n) = (r.1 as usize, r.2 as usize);
        Ok(from_bytes(t, &self.heap[l][b..b + n]))
    }

    /// H[l, at] := v (of v's type), recorded in the write set.
    fn write(&mut self, l: usize, at: i64, v: Const, tr: &mut Trace) -> Result<(), Wrong> {
        let r = self.bytes_of(l, at, v.prim())?;
        tr.writes.insert(r);
        let b = r.1 as usize;
        for (k, x) in to_bytes(v).into_iter().enumerate() {
            self.heap[l][b + k] = x;
        }
        Ok(())
    }

    /// E-MEM-ALLOC: a fresh block of `n` elements of type `t`, zero bytes.
    fn alloc(&mut self, n: i64, t: Prim) -> Result<usize, Wrong> {
        let Ok(count) = u64::try_from(n) else {
            return stuck(format!("allocation of negative size {n}"));
        };
        let bytes = count.checked_mul(t.size()).ok_or(Wrong::OutOfHeap)?;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes.div_ceil(8) > self.max_cells {
            return Err(Wrong::OutOfHeap);
        }
        self.heap.push(vec![0; bytes as usize]);
        Ok(self.heap.len() - 1)
    }

    /// memcopy (eq. 5): a value into block `dst` at `ld` as elements of
    /// type `t`; the whole source is read before anything is written.
    fn memcopy(
        &mut self,
        v: &RV,
        dst: usize,
        ld: &Lmad,
        t: Prim,
        tr: &mut Trace,
    ) -> Result<(), Wrong> {
        match v {
            RV::Scalar(c) if ld.rank() == 0 && c.prim() == t => self.write(dst, ld.offset, *c, tr),
            RV::Arr(src, ls, ts) if ls.shape() == ld.shape() && *ts == t => {
                self.spend(ls)?;
                let mut vals = Vec::new();
                for a in ls.addresses() {
                    vals.push(self.read(*src, a, t, tr)?);
                }
                for (a, x) in ld.addresses().into_iter().zip(vals) {
                    self.write(dst, a, x, tr)?;
                }
                Ok(())
            }
            _ => stuck("memcopy of a value to a place of another shape or type"),
        }
    }

    /// E-MEM-PROG: lay out the inputs, run the body, read the results back.
    fn program(&mut self, p: &Program, inputs: &[Value]) -> Result<Vec<Value>, Wrong> {
        let mut env = Env::new();
        let wanted = p
            .params
            .iter()
            .filter(|q| !matches!(q.ty, Type::Mem(_)))
            .count();
        if inputs.len() != wanted {
            return stuck(format!("{wanted} inputs wanted, {} given", inputs.len()));
        }
        // Scalars first: an array's sizes may name any parameter.
        let mut given = inputs.iter();
        let mut arrays = Vec::new();
        for q in &p.params {
            match &q.ty {
                Type::Mem(_) => {}
                Type::Prim(t, _) => match given.next() {
                    Some(Value::Scalar(c)) if c.prim() == *t => {
                        env.insert(q.name.name.clone(), RV::Scalar(*c));
                    }
                    _ => return stuck(format!("input `{}` must be an {t}", q.name.name)),
                },
                Type::Array(at, _) => match given.next() {
                    Some(Value::Array(a)) if a.data.prim() == at.elem => arrays.push((q, a)),
                    _ => {
                        return stuck(format!(
                            "input `{}` must be an array of {}",
                            q.name.name, at.elem
                        ))
                    }
                },
            }
        }
        // Each `mem` parameter is just large enough for its arrays, in
        // bytes.
        let mut laid = Vec::new();
        let mut need: HashMap<Name, i64> = HashMap::new();
        for (q, a) in arrays {
            let Some(at) = q.ty.as_array() else {
                return stuck("not an array");
            };
            let want: Vec<i64> = at
                .shape
                .iter()
                .map(|s| atom(&env, s))
                .collect::<Result<_, _>>()?;
            let got: Vec<i64> = a.shape.iter().map(|&d| d as i64).collect();
            if want != got {
                return stuck(format!("input `{}` has the wrong shape", q.name.name));
            }
            let Some(m) = &at.mem else {
                return stuck("an input array without memory");
            };
            let l = lmad(&env, &m.lmad)?;
            let size = at.elem.size() as i64;
            for addr in l.addresses() {
                if addr < 0 {
                    return stuck(format!("input `{}` at a negative offset", q.name.name));
                }
                let e = need.entry(m.block.name.clone()).or_insert(0);
                *e = (*e).max(addr.saturating_add(1).saturating_mul(size));
            }
            laid.push((q, m.block.name.clone(), l, a, at.elem));
        }
        for q in &p.params {
            if matches!(q.ty, Type::Mem(_)) {
                let size = need.get(&q.name.name).copied().unwrap_or(0);
                let label = self.alloc(size, Prim::Bool)?;
                env.insert(q.name.name.clone(), RV::Mem(label));
            }
        }
        let mut top = Trace::default();
        for (q, blk, l, a, t) in laid {
            let RV::Mem(label) = *lookup(&env, &blk)? else {
                return stuck(format!("`{blk}` is not a block"));
            };
            for (addr, x) in l.addresses().into_iter().zip(fun_ref::elems_of(&a.data)) {
                self.write(label, addr, x, &mut top)?;
            }
            env.insert(q.name.name.clone(), RV::Arr(label, l, t));
        }
        self.body(&mut env, &p.body, &mut top)?;
        let mut out = Vec::new();
        for x in &p.body.result {
            match lookup(&env, &x.name)?.clone() {
                RV::Mem(_) => {}
                RV::Scalar(c) => out.push(Value::Scalar(c)),
                RV::Arr(l, lm, t) => {
                    self.spend(&lm)?;
                    let mut data = Elems::with_capacity(t, 0);
                    for a in lm.addresses() {
                        let c = self.read(l, a, t, &mut top)?;
                        fun_ref::push(&mut data, c);
                    }
                    let shape = lm.shape().iter().map(|&n| n.max(0) as usize).collect();
                    out.push(Value::Array(ArrayValue { shape, data }));
                }
            }
        }
        Ok(out)
    }

    /// E-STMS: the statements in order, their traces united in `tr`.
    fn body(&mut self, env: &mut Env, b: &Body, tr: &mut Trace) -> Result<(), Wrong> {
        for s in &b.stms {
            self.stm(env, s, tr)?;
        }
        Ok(())
    }

    fn stm(&mut self, env: &mut Env, s: &Stm, tr: &mut Trace) -> Result<(), Wrong> {
        self.burn()?;
        let p = &s.pats[0];
        let bind = |env: &mut Env, v: RV| {
            env.insert(p.name.name.clone(), v);
        };
        match &s.exp.kind {
            // E-MEM-REDUCE: xs's elements read in order and folded from
            // the left; a scalar, no memory.
            ExpKind::Reduce(op, ne, xs) => {
                let (acc, vals, _) = self.operand(env, ne, &xs.name, tr)?;
                let mut acc = acc;
                for x in vals {
                    self.burn()?;
                    acc = self.combine(env, op, acc, x, tr)?;
                }
                bind(env, RV::Scalar(acc));
            }
            // E-MEM-SCAN: all of xs read, then the prefixes written at the
            // pattern's place.
            ExpKind::Scan(op, ne, xs) => {
                let (mut acc, vals, reads) = self.operand(env, ne, &xs.name, tr)?;
                let (l, lm, t) = place(env, &p.ty)?;
                let n = vals.len() as i64;
                if lm.shape() != [n] || t != acc.prim() {
                    return stuck(format!("a scan of {n} elements does not fit its LMAD"));
                }
                if self.depth == 0 {
                    // One parallel operation: it must not write where it
                    // reads.
                    let mut writes = Vec::new();
                    for (i, a) in lm.addresses().into_iter().enumerate() {
                        writes.push((self.bytes_of(l, a, t)?, i));
                    }
                    self.scan_overlaps(s.span, &reads, &writes);
                }
                let mut out = Vec::with_capacity(vals.len());
                for x in vals {
                    self.burn()?;
                    acc = self.combine(env, op, acc, x, tr)?;
                    out.push(acc);
                }
                for (a, x) in lm.addresses().into_iter().zip(out) {
                    self.write(l, a, x, tr)?;
                }
                bind(env, RV::Arr(l, lm, t));
            }
            ExpKind::Loop(ps, init, form, b) => {
                let vals = self.run_loop(env, ps, init, form, b, tr)?;
                for (q, v) in s.pats.iter().zip(vals) {
                    env.insert(q.name.name.clone(), v);
                }
            }
            // E-MEM-UPDATE: v's elements written in place through x's LMAD
            // into x's block; the result is x's block and LMAD.
            ExpKind::Update(x, is, v) => {
                let RV::Arr(l, lm, t) = lookup(env, &x.name)?.clone() else {
                    return stuck(format!("`{}` is not an array", x.name));
                };
                if is.len() > lm.rank() {
                    return stuck("more update indices than dimensions");
                }
                let mut at = Lmad {
                    offset: lm.offset,
                    dims: Vec::new(),
                };
                for (i, &(d, st)) in is.iter().zip(&lm.dims) {
                    match i {
                        UpdIdx::Elem(j) => {
                            let j = atom(env, j)?;
                            if j < 0 || j >= d {
                                return stuck(format!(
                                    "update index {j} out of bounds of size {d}"
                                ));
                            }
                            at.offset = at.offset.wrapping_add(j.wrapping_mul(st));
                        }
                        UpdIdx::Range(o, n) => {
                            let (o, n) = (atom(env, o)?, atom(env, n)?);
                            if o < 0 || n < 0 || o.checked_add(n).is_none_or(|e| e > d) {
                                return stuck(format!(
                                    "update range {o}:{n} out of bounds of size {d}"
                                ));
                            }
                            at.offset = at.offset.wrapping_add(o.wrapping_mul(st));
                            at.dims.push((n, st));
                        }
                    }
                }
                at.dims.extend(lm.dims[is.len()..].iter().copied());
                let v = value(env, v)?;
                self.memcopy(&v, l, &at, t, tr)?;
                bind(env, RV::Arr(l, lm, t));
            }
            // E-MEM-CONCAT: x's elements, then y's, written to the
            // pattern's place (x's rows first, then y's).
            ExpKind::Concat(x, y) => {
                let (RV::Arr(lx, mx, tx), RV::Arr(ly, my, ty)) =
                    (lookup(env, &x.name)?.clone(), lookup(env, &y.name)?.clone())
                else {
                    return stuck("concat of a value that is not an array");
                };
                let (l, lm, t) = place(env, &p.ty)?;
                let (sx, sy) = (mx.shape(), my.shape());
                if sx.is_empty() || sy.is_empty() {
                    return stuck("concat of an array of rank 0");
                }
                let rows = sx[0].checked_add(sy[0]);
                if sx.len() != sy.len()
                    || sx[1..] != sy[1..]
                    || lm.rank() != sx.len()
                    || Some(lm.dims[0].0) != rows
                    || lm.shape()[1..] != sx[1..]
                {
                    return stuck("concat does not fit its LMAD");
                }
                let (first, second) = (lm.rows(0, sx[0]), lm.rows(sx[0], sy[0]));
                self.memcopy(&RV::Arr(lx, mx, tx), l, &first, t, tr)?;
                self.memcopy(&RV::Arr(ly, my, ty), l, &second, t, tr)?;
                bind(env, RV::Arr(l, lm, t));
            }
            // E-MEM-REPLICATE: v memcopied to every row of the pattern's
            // place.
            ExpKind::Replicate(n, v) => {
                let n = atom(env, n)?;
                if n < 0 {
                    return stuck(format!("replicate of negative count {n}"));
                }
                let v = value(env, v)?;
                let (l, lm, t) = place(env, &p.ty)?;
                let mut want = vec![n];
                if let RV::Arr(_, vl, _) = &v {
                    want.extend(vl.shape());
                }
                if lm.shape() != want {
                    return stuck("replicate does not fit its LMAD");
                }
                // (A row costs fuel: a count far beyond the block would
                // otherwise write for ever into a stride-0 layout.)
                for k in 0..n {
                    self.burn()?;
                    self.memcopy(&v, l, &lm.row(k), t, tr)?;
                }
                bind(env, RV::Arr(l, lm, t));
            }
            ExpKind::Scalar(e) => {
                let v = sexp(env, e)?;
                bind(env, RV::Scalar(v));
            }
            // E-MEM-ALLOC: a fresh block of zeros.
            ExpKind::Alloc(e, t) => {
                let n = index_sexp(env, e)?;
                let l = self.alloc(n, *t)?;
                bind(env, RV::Mem(l));
            }
            // E-MEM-INDEX: one read at L(i1, ..., in); with fewer indices
            // than dimensions, the same block at index_f of the LMAD.
            ExpKind::Index(x, idx) => {
                let ix: Vec<i64> = idx.iter().map(|a| atom(env, a)).collect::<Result<_, _>>()?;
                let RV::Arr(l, lm, t) = lookup(env, &x.name)?.clone() else {
                    return stuck(format!("`{}` is not an array", x.name));
                };
                if ix.is_empty() || ix.len() > lm.rank() {
                    return stuck("wrong number of indices");
                }
                for (&k, &(n, _)) in ix.iter().zip(&lm.dims) {
                    if k < 0 || k >= n {
                        return stuck(format!("index {k} out of bounds of size {n}"));
                    }
                }
                if ix.len() < lm.rank() {
                    let sub = ix.iter().fold(lm, |l, &k| l.row(k));
                    bind(env, RV::Arr(l, sub, t));
                } else {
                    let v = self.read(l, lm.apply(&ix), t, tr)?;
                    bind(env, RV::Scalar(v));
                }
            }
            // E-MEM-SLICE: the same block, slice_f of the LMAD.
            ExpKind::Slice(x, sl) => {
                let mut pairs = Vec::new();
                for (o, n) in sl {
                    pairs.push((atom(env, o)?, atom(env, n)?));
                }
                let RV::Arr(l, lm, t) = lookup(env, &x.name)?.clone() else {
                    return stuck(format!("`{}` is not an array", x.name));
                };
                if pairs.len() != lm.rank() {
                    return stuck("wrong number of slice pairs");
                }
                for (&(o, n), &(d, _)) in pairs.iter().zip(&lm.dims) {
                    if o < 0 || n < 0 || o.checked_add(n).is_none_or(|e| e > d) {
                        return stuck(format!("slice {o}:{n} out of bounds of size {d}"));
                    }
                }
                bind(env, RV::Arr(l, lm.slice(&pairs), t));
            }
            // E-MEM-TRANSPOSE: the same block, the dimensions swapped.
            ExpKind::Transpose(x) => {
                let RV::Arr(l, mut lm, t) = lookup(env, &x.name)?.clone() else {
                    return stuck(format!("`{}` is not an array", x.name));
                };
                if lm.rank() != 2 {
                    return stuck("transpose of an array that is not 2-D");
                }
                lm.dims.swap(0, 1);
                bind(env, RV::Arr(l, lm, t));
            }
            // E-MEM-IF-T / E-MEM-IF-F: one branch, its results bound to the
            // pattern.
            ExpKind::If(c, t, e) => {
                let b = if truth(env, &c.name)? { t } else { e };
                let mut inner = env.clone();
                self.body(&mut inner, b, tr)?;
                for (q, r) in s.pats.iter().zip(&b.result) {
                    let v = lookup(&inner, &r.name)?.clone();
                    env.insert(q.name.name.clone(), v);
                }
            }
            ExpKind::Kernel(i, n, b) => {
                let vs = self.kernel(env, s, &i.name, n, b, tr)?;
                for (q, v) in s.pats.iter().zip(vs) {
                    env.insert(q.name.name.clone(), v);
                }
            }
            // iota n = kernel i < n do in (i), written at the pattern's place.
            ExpKind::Iota(n) => {
                let n = atom(env, n)?;
                let (l, lm, t) = place(env, &p.ty)?;
                if n < 0 || lm.shape() != [n] || t != Prim::I64 {
                    return stuck(format!("iota {n} does not fit its LMAD"));
                }
                self.spend(&lm)?;
                for (k, a) in lm.addresses().into_iter().enumerate() {
                    self.write(l, a, Const::I64(k as i64), tr)?;
                }
                bind(env, RV::Arr(l, lm, t));
            }
            // copy x: memcopy of x to the pattern's place.
            ExpKind::Copy(x) => {
                let v = lookup(env, &x.name)?.clone();
                let (l, lm, t) = place(env, &p.ty)?;
                self.memcopy(&v, l, &lm, t, tr)?;
                bind(env, RV::Arr(l, lm, t));
            }
        }
        Ok(())
    }

    /// The neutral element and the elements of a reduction's operand (a
    /// 1-D array of the neutral element's type), read in order; with the
    /// byte range of each element read.
    fn operand(
        &mut self,
        env: &Env,
        ne: &Atom,
        xs: &Name,
        tr: &mut Trace,
    ) -> Result<Operand, Wrong> {
        let RV::Scalar(ne) = value(env, ne)? else {
            return stuck("a neutral element that is not a scalar");
        };
        let RV::Arr(l, lm, t) = lookup(env, xs)?.clone() else {
            return stuck(format!("`{xs}` is not an array"));
        };
        if lm.rank() != 1 || t != ne.prim() {
            return stuck(format!(
                "a reduction of `{xs}`, of rank {} and type {t}, with the neutral element {ne}",
                lm.rank()
            ));
        }
        self.spend(&lm)?;
        let mut vals = Vec::new();
        let mut reads = Vec::new();
        for (j, a) in lm.addresses().into_iter().enumerate() {
            reads.push((self.bytes_of(l, a, t)?, j));
            vals.push(self.read(l, a, t, tr)?);
        }
        Ok((ne, vals, reads))
    }

    /// Each pair of an element a scan reads (xs[j]) and an element it
    /// writes (prefix i) that share a byte: a conflict of the scan
    /// `span`, the read "iteration" j first, at the first shared byte.
    fn scan_overlaps(&mut self, span: Span, reads: &[(Bytes, usize)], writes: &[(Bytes, usize)]) {
        let mut sorted: Vec<&(Bytes, usize)> = reads.iter().collect();
        sorted.sort();
        for &((blk, b, n), i) in writes {
            let e = b.saturating_add(n);
            let lo = sorted.partition_point(|r| r.0 < (blk, b.saturating_sub(WIDEST), 0));
            for &&((rb_blk, rb, rn), j) in &sorted[lo..] {
                if (rb_blk, rb) >= (blk, e) {
                    break;
                }
                if rb_blk == blk && rb < e && b < rb.saturating_add(rn) {
                    self.conflicts.push(Race {
                        kernel: span,
                        block: blk,
                        offset: rb.max(b),
                        first: Access {
                            path: vec![j as i64],
                            write: false,
                        },
                        second: Access {
                            path: vec![i as i64],
                            write: true,
                        },
                    });
                }
            }
        }
    }

    /// `a op b` for a reduction's operator: a built-in operator, or the
    /// lambda's body run with its parameters bound to a and b (its
    /// accesses join `tr`), giving its one result.
    fn combine(
        &mut self,
        env: &Env,
        op: &RedOp,
        a: Const,
        b: Const,
        tr: &mut Trace,
    ) -> Result<Const, Wrong> {
        match op {
            RedOp::Bin(op, _) => fun_ref::binop(*op, a, b).map_err(wrong),
            RedOp::Lambda(lam) => {
                let mut inner = env.clone();
                for (q, v) in lam.params.iter().zip([a, b]) {
                    inner.insert(q.name.name.clone(), RV::Scalar(v));
                }
                self.body(&mut inner, &lam.body, tr)?;
                match lam.body.result.as_slice() {
                    [r] => match lookup(&inner, &r.name)? {
                        RV::Scalar(c) if c.prim() == a.prim() => Ok(*c),
                        _ => stuck("an operator's result is not of its type"),
                    },
                    _ => stuck("an operator gives one result"),
                }
            }
        }
    }

    /// E-MEM-KERNEL: iteration k runs the body with the index bound to k and
    /// memcopies its result to index_f(L, k); each iteration has its own
    /// trace, and the traces must satisfy eq. 4 (each conflict is recorded,
    /// and evaluation goes on). The kernel's trace, the union of its
    /// iterations', goes to `tr`.
    fn kernel(
        &mut self,
        env: &Env,
        s: &Stm,
        i: &Name,
        n: &Atom,
        b: &Body,
        tr: &mut Trace,
    ) -> Result<Vec<RV>, Wrong> {
        let n = atom(env, n)?;
        if n < 0 {
            return stuck(format!("kernel of negative size {n}"));
        }
        let mut places = Vec::with_capacity(s.pats.len());
        for p in &s.pats {
            let (l, lm, t) = place(env, &p.ty)?;
            if lm.rank() == 0 || lm.dims[0].0 != n {
                return stuck(format!("the kernel's LMAD does not have {n} rows"));
            }
            places.push((l, lm, t));
        }
        let mut traces = Vec::new();
        let mut failed = None;
        for k in 0..n {
            let mut t = Trace::default();
            self.depth += 1;
            let r = self.iteration(env, i, k, b, &places, &mut t);
            self.depth -= 1;
            traces.push(t);
            if let Err(e) = r {
                failed = Some(e);
                break;
            }
        }
        for t in &traces {
            tr.absorb(t);
        }
        // Eq. 4 over what the iterations did, the stuck one's accesses so
        // far included.
        self.conflicts.extend(conflicts(s.span, &traces));
        match failed {
            Some(e) => Err(e),
            None => Ok(places
                .into_iter()
                .map(|(l, lm, t)| RV::Arr(l, lm, t))
                .collect()),
        }
    }

    /// One iteration: the body, then the memcopy of each result to its
    /// array's row `k`, in order.
    fn iteration(
        &mut self,
        env: &Env,
        i: &Name,
        k: i64,
        b: &Body,
        places: &[(usize, Lmad, Prim)],
        t: &mut Trace,
    ) -> Result<(), Wrong> {
        self.burn()?;
        let mut inner = env.clone();
        inner.insert(i.clone(), RV::Scalar(Const::I64(k)));
        self.body(&mut inner, b, t)?;
        if b.result.len() != places.len() {
            return stuck("a kernel body returns a value per result array");
        }
        for (r, (l, lm, ty)) in b.result.iter().zip(places) {
            let v = lookup(&inner, &r.name)?.clone();
            self.memcopy(&v, *l, &lm.row(k), *ty, t)?;
        }
        Ok(())
    }

    /// E-MEM-LOOP: the parameters (blocks, integers and arrays, which
    /// carry their block and LMAD) start as the initial atoms' values;
    /// each iteration (one unit of fuel) runs the body with them bound and
    /// rebinds them to its results. `for i < n`: n read once, i = 0 ..
    /// n-1; `while c`: while the parameter c is non-zero, tested before
    /// each iteration. Gives the parameters' final values. The body's
    /// accesses go to `tr` (a loop is sequential: no eq. 4 between its
    /// iterations).
    fn run_loop(
        &mut self,
        env: &Env,
        ps: &[Pat],
        init: &[Atom],
        form: &LoopForm,
        b: &Body,
        tr: &mut Trace,
    ) -> Result<Vec<RV>, Wrong> {
        let mut vals = Vec::with_capacity(init.len());
        for a in init {
            vals.push(value(env, a)?);
        }
        if vals.len() != ps.len() {
            return stuck("a loop's initial values do not match its parameters");
        }
        let n = match form {
            LoopForm::For(_, n) => atom(env, n)?,
            LoopForm::While(_) => 0,
        };
        // One environment for every iteration: names are never rebound, so
        // an iteration's bindings are all made anew before they are used.
        let mut inner = env.clone();
        let mut k = 0i64;
        loop {
            for (p, v) in ps.iter().zip(&vals) {
                inner.insert(p.name.name.clone(), v.clone());
            }
            match form {
                LoopForm::For(i, _) => {
                    if k >= n {
                        break;
                    }
                    inner.insert(i.name.clone(), RV::Scalar(Const::I64(k)));
                }
                LoopForm::While(c) => {
                    if !truth(&inner, &c.name)? {
                        break;
                    }
                }
            }
            self.burn()?;
            self.body(&mut inner, b, tr)?;
            if b.result.len() != ps.len() {
                return stuck("a loop body returns a value per parameter");
            }
            for (v, r) in vals.iter_mut().zip(&b.result) {
                *v = lookup(&inner, &r.name)?.clone();
            }
            k += 1;
        }
        Ok(vals)
    }
}
