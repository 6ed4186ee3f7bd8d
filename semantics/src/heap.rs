//! FUNMEM's heap semantics (IFL 2022 paper, fig. 10), 0-based, with memcopy
//! (eq. 5) and the race-freedom side condition of E-MEM-KERNEL (eq. 4).
//!
//! The heap maps labels (numbered in allocation order) to blocks of bytes
//! (`alloc se t` is se * size(t) zero bytes). A `mem` variable holds a
//! label; an array is a label, a concrete LMAD and its element type: the
//! element at LMAD address k occupies bytes k*size(t) .. (k+1)*size(t)-1,
//! little-endian, so arrays of different element types may share a block.
//! Scalars are words ([`funmem_lang::prim::Const::to_bits`]). Slicing and transposing only compute a new LMAD (E-MEM-SLICE,
//! E-MEM-TRANSPOSE); indexing reads the heap (E-MEM-INDEX). Fresh arrays
//! (`kernel`, and the derived `iota` and `copy`) are written into the block
//! and LMAD their pattern names, each kernel iteration's result by memcopy
//! at `index_f(L, k)`, each of a kernel's results into its own block.
//! `concat` and `replicate` write the pattern's block through its LMAD as
//! a copy does; an update `x with [i] = v` writes v in place into x's block
//! through x's LMAD; a loop rebinds its parameters (block labels among
//! them) each iteration. Reads and writes made inside kernels go through the
//! race detector ([`crate::race`]), so a racing kernel is an error rather
//! than a nondeterministic result.
//!
//! Unlike the value semantics, nothing here guarantees that the program
//! means what its FUN counterpart means: a block overwritten while an array
//! in it is still used gives a different result. That is what validity
//! (Def. 3.1, [`crate::validity`]) detects.

use crate::code::{
    atom, get, int, loop_bound, loop_enters, resolve, AtomC, Block, Code, LmadC, LoopC, Op, PatC,
    RedC, Slot, SlotValue, Stm, TyC, UpdC, SE,
};
use crate::error::Race;
use crate::error::{loop_out_of_fuel, ErrorKind, EvalError, Fuel, Limits};
use crate::fun::{
    check_index, check_slice, concat_shape, dims, in_operator, result_is_mem, ty_name, ty_prim,
    update_shape, update_target,
};
use crate::machine;
use crate::observer::NoObserver;
use crate::observer::Observer;
use crate::race::{describe, RaceDetector};
use crate::scalar::binop_t;
use crate::value::{ArrayValue, Elems, Value};
use funmem_lang::ast;
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Span};
use std::fmt;

/// Evaluates a FUNMEM program under the heap semantics. `mem` parameters
/// take no input (each is allocated just large enough for the input arrays
/// that live in it); `mem` results are not returned. With `race_check`,
/// every kernel is checked for races (eq. 4).
pub fn run_heap<O: Observer>(
    p: &ast::Program,
    inputs: &[Value],
    limits: Limits,
    race_check: bool,
    obs: &mut O,
) -> Result<Vec<Value>, EvalError> {
    let code = resolve(p);
    let (result, _) = execute(
        p,
        &code,
        inputs,
        limits,
        race_check.then(RaceDetector::new),
        obs,
    );
    match result {
        Err(EvalError {
            kind: ErrorKind::Race(mut r),
            rule: "E-MEM-KERNEL",
            ..
        }) => {
            // Evaluation is deterministic: run again logging the racing
            // location, to report the first access's full iteration path.
            let watch = RaceDetector::watching(r.block, r.offset);
            let (_, det) = execute(p, &code, inputs, limits, Some(watch), &mut NoObserver);
            if let Some(d) = det {
                d.complete(&mut r);
            }
            Err(race_error(r))
        }
        other => other,
    }
}

/// One evaluation; gives back the race detector, for its log.
fn execute<O: Observer>(
    p: &ast::Program,
    code: &Code,
    inputs: &[Value],
    limits: Limits,
    race: Option<RaceDetector>,
    obs: &mut O,
) -> (Result<Vec<Value>, EvalError>, Option<RaceDetector>) {
    let mut m = Machine {
        frame: vec![H::Unset; code.slots],
        blocks: Vec::new(),
        depth: 0,
        fuel: Fuel::new(limits.fuel),
        cells: 0,
        read_back: 0,
        limits,
        race,
        names: &code.names,
        obs,
    };
    let result = m.program(p, code, inputs);
    (result, m.race)
}

/// A race as an error of E-MEM-KERNEL, at the racing kernel.
fn race_error(r: Box<Race>) -> EvalError {
    EvalError {
        span: r.kernel,
        rule: "E-MEM-KERNEL",
        message: describe(&r),
        kind: ErrorKind::Race(r),
    }
}

/// A value in the frame: fig. 6's values.
#[derive(Clone, Debug)]
enum H {
    Unset,
    Int(i64),
    /// A heap label.
    Mem(usize),
    /// A label, an LMAD with constants only, and the element type.
    Arr(usize, Lmad<i64>, Prim),
}

impl fmt::Display for H {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            H::Unset => f.write_str("unset"),
            H::Int(k) => write!(f, "{k}"),
            H::Mem(l) => write!(f, "block {l}"),
            H::Arr(l, lmad, _) => {
                let ds: Vec<String> = lmad
                    .dims
                    .iter()
                    .map(|d| format!("({} : {})", d.elems, d.stride))
                    .collect();
                write!(f, "(block {l}, {} + {{{}}})", lmad.offset, ds.join(" "))
            }
        }
    }
}

/// A frame value with the type of its binder, for display.
struct Typed<'a>(&'a H, Prim);

impl fmt::Display for Typed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            H::Int(k) => write!(f, "{}", Const::from_bits(self.1, *k as u64)),
            h => write!(f, "{h}"),
        }
    }
}

struct Machine<'o, O> {
    frame: Vec<H>,
    blocks: Vec<Vec<u8>>,
    /// How many kernels the current statement is nested in.
    depth: usize,
    fuel: Fuel,
    cells: u64,
    /// Cells copied to read results back: at most the heap limit in all.
    read_back: u64,
    limits: Limits,
    race: Option<RaceDetector>,
    /// Each slot's source name, for [`Observer::enter`].
    names: &'o [Option<Name>],
    obs: &'o mut O,
}

impl<O: Observer> Machine<'_, O> {
    /// Reports a body's name bound on entry (an index, a loop parameter).
    #[inline(always)]
    fn enter(&mut self, k: Slot, v: &dyn fmt::Display) {
        if let Some(Some(n)) = self.names.get(k as usize) {
            self.obs.enter(n, v);
        }
    }

    fn arr(
        &self,
        k: Slot,
        rule: &'static str,
        span: Span,
    ) -> Result<(usize, &Lmad<i64>, Prim), EvalError> {
        match get(&self.frame, k, span)? {
            H::Arr(l, lmad, t) => Ok((*l, lmad, *t)),
            v => Err(EvalError::stuck(
                rule,
                span,
                format!("expected an array, found {v}"),
            )),
        }
    }

    fn block_of(&self, k: Slot, rule: &'static str, span: Span) -> Result<usize, EvalError> {
        match get(&self.frame, k, span)? {
            H::Mem(l) => Ok(*l),
            v => Err(EvalError::stuck(
                rule,
                span,
                format!("expected a memory block, found {v}"),
            )),
        }
    }

    /// E(L): an LMAD of the program evaluated in the current environment.
    fn lmad(&self, l: &LmadC, rule: &'static str, span: Span) -> Result<Lmad<i64>, EvalError> {
        let e = |x: &SE| {
            x.eval(&self.frame)
                .map_err(EvalError::div_by_zero(rule, span))
        };
        let mut dims = Vec::with_capacity(l.dims.len());
        for (n, s) in &l.dims {
            dims.push(Dim {
                elems: e(n)?,
                stride: e(s)?,
            });
        }
        Ok(Lmad {
            offset: e(&l.offset)?,
            dims,
        })
    }

    /// The block, LMAD and element type a pattern names for a fresh array.
    fn destination(
        &self,
        p: &PatC,
        rule: &'static str,
        span: Span,
    ) -> Result<(usize, Lmad<i64>, Prim), EvalError> {
        match &p.ty {
            TyC::Array {
                mem: Some((blk, l)),
                elem,
                ..
            } => Ok((
                self.block_of(*blk, rule, span)?,
                self.lmad(l, rule, span)?,
                *elem,
            )),
            _ => Err(EvalError::stuck(
                rule,
                span,
                format!("`{}` needs a memory annotation", p.name),
            )),
        }
    }

    fn set(&mut self, p: &PatC, v: H) {
        self.obs.bind(&p.name, &Typed(&v, ty_prim(&p.ty)));
        if let H::Arr(blk, lmad, t) = &v {
            self.obs.place(&p.name, *blk, lmad, *t);
        }
        if let Some(s) = self.frame.get_mut(p.slot as usize) {
            *s = v;
        }
    }

    /// The element of type `t` at element index `off` of block `blk`
    /// (bytes off*size(t) ..), as a word; any byte outside the block is
    /// out of bounds.
    #[inline]
    fn read(
        &mut self,
        blk: usize,
        off: i64,
        t: Prim,
        rule: &'static str,
        span: Span,
    ) -> Result<i64, EvalError> {
        let w = t.size() as u8;
        let at = off.checked_mul(i64::from(w));
        let b = self
            .blocks
            .get(blk)
            .ok_or_else(|| EvalError::stuck(rule, span, format!("block {blk} does not exist")))?;
        let v = at
            .and_then(|at| usize::try_from(at).ok())
            .and_then(|at| b.get(at..at + w as usize))
            .map(|bytes| machine::load(t, bytes))
            .ok_or_else(|| out_of_bounds("read", blk, off, t, b.len(), rule, span))?;
        self.obs.read(blk, off, t);
        if let Some(r) = self.race.as_mut() {
            if r.is_active() {
                if let Err(e) = r.read_bytes(blk, off * i64::from(w), w) {
                    return Err(race_error(e));
                }
            }
        }
        Ok(v)
    }

    /// Writes the word `v` as an element of type `t` at element index
    /// `off` of block `blk`.
    #[inline]
    fn write(
        &mut self,
        blk: usize,
        off: i64,
        t: Prim,
        v: i64,
        rule: &'static str,
        span: Span,
    ) -> Result<(), EvalError> {
        let w = t.size() as u8;
        let at = off.checked_mul(i64::from(w));
        let b = self
            .blocks
            .get_mut(blk)
            .ok_or_else(|| EvalError::stuck(rule, span, format!("block {blk} does not exist")))?;
        let len = b.len();
        let bytes = at
            .and_then(|at| usize::try_from(at).ok())
            .and_then(|at| b.get_mut(at..at + w as usize))
            .ok_or_else(|| out_of_bounds("write", blk, off, t, len, rule, span))?;
        machine::store(t, bytes, v);
        self.obs.write(blk, off, t, v as u64);
        if let Some(r) = self.race.as_mut() {
            if r.is_active() {
                if let Err(e) = r.write_bytes(blk, off * i64::from(w), w) {
                    return Err(race_error(e));
                }
            }
        }
        Ok(())
    }

    /// memcopy (eq. 5): a value into a block at an LMAD. All of the source
    /// is read before anything is written, as eq. 5 reads the old heap.
    fn memcopy(
        &mut self,
        v: &H,
        dst: usize,
        ld: &Lmad<i64>,
        t: Prim,
        rule: &'static str,
        span: Span,
    ) -> Result<(), EvalError> {
        match v {
            H::Int(k) if ld.rank() == 0 => self.write(dst, ld.offset, t, *k, rule, span),
            H::Arr(src, ls, ts)
                if ls
                    .dims
                    .iter()
                    .map(|d| d.elems)
                    .eq(ld.dims.iter().map(|d| d.elems)) =>
            {
                // eq. 5's old heap: a temporary of the copy's size, which
                // the heap limit bounds too.
                let size = u64::try_from(ls.size()).unwrap_or(0);
                let mut vals = machine::charged(&self.limits, &mut 0, size, size, rule, span)?;
                ls.for_each_address(|a| {
                    vals.push(self.read(*src, a, *ts, rule, span)?);
                    Ok(())
                })?;
                let mut k = 0;
                ld.for_each_address(|a| {
                    let x = vals.get(k).copied().unwrap_or(0);
                    k += 1;
                    self.write(dst, a, t, x, rule, span)
                })
            }
            v => {
                let want: Vec<i64> = ld.dims.iter().map(|d| d.elems).collect();
                Err(EvalError::stuck(
                    rule,
                    span,
                    format!("cannot copy {v} to a place of shape {}", dims(&want)),
                ))
            }
        }
    }

    /// A fresh block of `elems` elements of type `t` (elems * size(t)
    /// zero bytes), charged to the heap limit in 8-byte cells (rounded up)
    /// before it is allocated.
    fn allocate(
        &mut self,
        elems: i64,
        t: Prim,
        rule: &'static str,
        span: Span,
    ) -> Result<usize, EvalError> {
        let n = u64::try_from(elems).map_err(|_| {
            EvalError::stuck(rule, span, format!("allocation of negative size {elems}"))
        })?;
        // Too many bytes to count is over any limit.
        let bytes = n.saturating_mul(t.size());
        let cells = machine::cells_of_bytes(bytes);
        self.cells = self.limits.charge(self.cells, cells, rule, span)?;
        let label = self.blocks.len();
        self.blocks.push(machine::zeroed_bytes(bytes, rule, span)?);
        self.obs.alloc(label, cells, bytes);
        Ok(label)
    }

    /// E-MEM-PROG: bind the inputs, run the body, read the results back.
    fn program(
        &mut self,
        p: &ast::Program,
        code: &Code,
        inputs: &[Value],
    ) -> Result<Vec<Value>, EvalError> {
        self.bind_inputs(code, inputs, p.span)?;
        self.block(&code.body)?;
        let mem = result_is_mem(p);
        let mut out = Vec::new();
        for (k, slot) in code.body.result.iter().enumerate() {
            if !mem.get(k).copied().unwrap_or(false) {
                out.push(self.read_back(*slot, code.prim(*slot), p.span)?);
            }
        }
        Ok(out)
    }

    fn bind_inputs(&mut self, code: &Code, inputs: &[Value], span: Span) -> Result<(), EvalError> {
        let wanted = code
            .params
            .iter()
            .filter(|p| !matches!(p.ty, TyC::Mem))
            .count();
        if inputs.len() != wanted {
            return Err(EvalError::stuck(
                "E-MEM-PROG",
                span,
                format!(
                    "the program takes {wanted} inputs, but {} were given",
                    inputs.len()
                ),
            ));
        }
        let mut given = inputs.iter();
        let mut arrays = Vec::new();
        for p in &code.params {
            match (&p.ty, p) {
                (TyC::Mem, _) => {}
                (TyC::Prim(t), _) => match given.next() {
                    Some(Value::Scalar(c)) if c.prim() == *t => {
                        self.set(p, H::Int(c.to_bits() as i64))
                    }
                    v => return Err(input_error(p, &t.to_string(), v, span)),
                },
                (TyC::Array { elem, shape, .. }, _) => match given.next() {
                    Some(Value::Array(a)) if a.prim() == *elem && a.rank() == shape.len() => {
                        arrays.push((p, a))
                    }
                    v => return Err(input_error(p, &ty_name(&p.ty), v, span)),
                },
            }
        }
        // Lay out the input arrays: each block just large enough for the
        // arrays that live in it.
        let mut placed = Vec::new();
        let mut sizes: Vec<(Slot, i64)> = code
            .params
            .iter()
            .filter(|p| matches!(p.ty, TyC::Mem))
            .map(|p| (p.slot, 0))
            .collect();
        for (p, a) in arrays {
            let TyC::Array {
                shape,
                mem: Some((blk, l)),
                elem,
            } = &p.ty
            else {
                return Err(EvalError::stuck(
                    "E-MEM-PROG",
                    span,
                    format!("input `{}` needs a memory annotation", p.name),
                ));
            };
            let want: Vec<i64> = shape
                .iter()
                .map(|s| atom(&self.frame, *s, "E-MEM-PROG", span))
                .collect::<Result<_, _>>()?;
            let got: Vec<i64> = a.shape.iter().map(|&d| d as i64).collect();
            if want != got {
                return Err(EvalError::stuck(
                    "E-MEM-PROG",
                    span,
                    format!(
                        "input `{}` must have shape {}, but {} was given",
                        p.name,
                        dims(&want),
                        Value::Array(a.clone()).type_name()
                    ),
                ));
            }
            let lmad = self.lmad(l, "E-MEM-PROG", span)?;
            if let Some((lo, hi)) = lmad.min_max() {
                if lo < 0 {
                    return Err(EvalError::stuck(
                        "E-MEM-PROG",
                        span,
                        format!("input `{}` would live at negative offset {lo}", p.name),
                    ));
                }
                // In bytes: the block holds elements of this type up to hi.
                let end = hi.saturating_add(1).saturating_mul(elem.size() as i64);
                if let Some(e) = sizes.iter_mut().find(|(s, _)| s == blk) {
                    e.1 = e.1.max(end);
                }
            }
            placed.push((p, *blk, lmad, a, *elem));
        }
        for (slot, size) in sizes {
            let label = self.allocate(size, Prim::Bool, "E-MEM-PROG", span)?;
            if let Some(p) = code.params.iter().find(|p| p.slot == slot) {
                self.set(p, H::Mem(label));
            }
        }
        for (p, blk, lmad, a, t) in placed {
            let label = self.block_of(blk, "E-MEM-PROG", span)?;
            let mut k = 0;
            lmad.for_each_address(|addr| {
                let x = if k < a.data.len() {
                    a.data.word(k) as i64
                } else {
                    0
                };
                k += 1;
                self.write(label, addr, t, x, "E-MEM-PROG", span)
            })?;
            self.set(p, H::Arr(label, lmad, t));
        }
        Ok(())
    }

    /// Reads a result back: an integer, or an array element by element
    /// through its LMAD (Def. 3.1's `nest(H(ℓ), shape)` for row-major ones).
    fn read_back(&mut self, slot: Slot, t: Prim, span: Span) -> Result<Value, EvalError> {
        match get(&self.frame, slot, span)?.clone() {
            H::Int(k) => Ok(Value::Scalar(Const::from_bits(t, k as u64))),
            H::Arr(blk, l, t) => {
                let size = u64::try_from(l.size()).unwrap_or(0);
                // Charged as the bytes it reads, in cells, like a block.
                let cells = machine::cells_of_bytes(size.saturating_mul(t.size()));
                self.read_back = self
                    .limits
                    .charge(self.read_back, cells, "E-MEM-PROG", span)?;
                let mut data = Vec::new();
                machine::reserve(&mut data, size, "E-MEM-PROG", span)?;
                l.for_each_address(|a| {
                    data.push(self.read(blk, a, t, "E-MEM-PROG", span)?);
                    Ok(())
                })?;
                let shape = l
                    .dims
                    .iter()
                    .map(|d| usize::try_from(d.elems).unwrap_or(0))
                    .collect();
                let data = match t {
                    Prim::I64 => Elems::I64(data),
                    _ => Elems::from_words(t, data.into_iter().map(|w| w as u64)),
                };
                Ok(Value::Array(ArrayValue { shape, data }))
            }
            v => Err(EvalError::stuck(
                "E-MEM-PROG",
                span,
                format!("result {v} is not a value"),
            )),
        }
    }

    fn block(&mut self, b: &Block) -> Result<(), EvalError> {
        for s in &b.stms {
            self.stm(s)?;
            self.obs.done(s.span);
        }
        Ok(())
    }

    /// E-STMS, one statement at a time.
    fn stm(&mut self, s: &Stm) -> Result<(), EvalError> {
        self.fuel.burn("E-STMS", s.span)?;
        let p = &s.pats[0];
        match &s.op {
            Op::Scalar(e) => {
                self.obs.rule("E-SCALAR", s.span);
                let v = e
                    .eval(&self.frame)
                    .map_err(EvalError::div_by_zero("E-SCALAR", s.span))?;
                self.set(p, H::Int(v));
            }
            Op::Alloc(e, t) => {
                self.obs.rule("E-MEM-ALLOC", s.span);
                let n = e
                    .eval(&self.frame)
                    .map_err(EvalError::div_by_zero("E-MEM-ALLOC", s.span))?;
                let label = self.allocate(n, *t, "E-MEM-ALLOC", s.span)?;
                self.set(p, H::Mem(label));
            }
            Op::Index(x, idx) => {
                self.obs.rule("E-MEM-INDEX", s.span);
                let is: Vec<i64> = idx
                    .iter()
                    .map(|a| atom(&self.frame, *a, "E-MEM-INDEX", s.span))
                    .collect::<Result<_, _>>()?;
                let (blk, l, t) = self.arr(*x, "E-MEM-INDEX", s.span)?;
                check_index("E-MEM-INDEX", s, l, &is)?;
                if is.len() < l.rank() {
                    // Partial indexing: the sub-array in x's block, at
                    // x's LMAD with the leading dimensions fixed (no copy).
                    let mut l = l.clone();
                    for k in &is {
                        l = l.index(k);
                    }
                    self.set(p, H::Arr(blk, l, t));
                } else {
                    let addr = l.apply(&is);
                    let v = self.read(blk, addr, t, "E-MEM-INDEX", s.span)?;
                    self.set(p, H::Int(v));
                }
            }
            Op::Slice(x, sl) => {
                self.obs.rule("E-MEM-SLICE", s.span);
                let pairs: Vec<(i64, i64)> = sl
                    .iter()
                    .map(|(o, n)| {
                        Ok((
                            atom(&self.frame, *o, "E-MEM-SLICE", s.span)?,
                            atom(&self.frame, *n, "E-MEM-SLICE", s.span)?,
                        ))
                    })
                    .collect::<Result<_, EvalError>>()?;
                let (blk, l, t) = self.arr(*x, "E-MEM-SLICE", s.span)?;
                check_slice("E-MEM-SLICE", s, l, &pairs)?;
                let v = H::Arr(blk, l.slice(&pairs), t);
                self.set(p, v);
            }
            Op::Transpose(x) => {
                self.obs.rule("E-MEM-TRANSPOSE", s.span);
                let (blk, l, t) = self.arr(*x, "E-MEM-TRANSPOSE", s.span)?;
                let l = l.transpose().ok_or_else(|| {
                    EvalError::stuck(
                        "E-MEM-TRANSPOSE",
                        s.span,
                        "transpose of an array that is not 2-D",
                    )
                })?;
                self.set(p, H::Arr(blk, l, t));
            }
            Op::If(c, t, e) => {
                let c = int(&self.frame, *c, "E-MEM-IF-T", s.span)?;
                let (rule, b) = if c != 0 {
                    ("E-MEM-IF-T", t)
                } else {
                    ("E-MEM-IF-F", e)
                };
                self.obs.rule(rule, s.span);
                self.block(b)?;
                for (q, r) in s.pats.iter().zip(&b.result) {
                    let v = get(&self.frame, *r, s.span)?.clone();
                    self.set(q, v);
                }
            }
            Op::Kernel(i, n, b) => self.e_mem_kernel(s, *i, *n, b)?,
            Op::Iota(n) => {
                // Derived form: kernel x_i < n do in (x_i).
                self.obs.rule("E-MEM-IOTA", s.span);
                let n = atom(&self.frame, *n, "E-MEM-IOTA", s.span)?;
                let (blk, l, t) = self.destination(p, "E-MEM-IOTA", s.span)?;
                if l.rank() != 1 || l.dims[0].elems != n || n < 0 {
                    return Err(EvalError::stuck(
                        "E-MEM-IOTA",
                        s.span,
                        format!("iota {n} does not fit the LMAD of `{}`", p.name),
                    ));
                }
                let mut k = 0;
                // Each element costs fuel: a stride-0 layout makes a huge
                // iota fit a tiny block, which the heap limit cannot stop.
                l.for_each_address(|a| {
                    self.fuel.burn("E-MEM-IOTA", s.span)?;
                    let r = self.write(blk, a, t, k, "E-MEM-IOTA", s.span);
                    k += 1;
                    r
                })?;
                self.set(p, H::Arr(blk, l, t));
            }
            Op::Copy(x) => {
                // Derived form: a kernel per dimension copying each element.
                self.obs.rule("E-MEM-COPY", s.span);
                let src = get(&self.frame, *x, s.span)?.clone();
                let (blk, l, t) = self.destination(p, "E-MEM-COPY", s.span)?;
                self.memcopy(&src, blk, &l, t, "E-MEM-COPY", s.span)?;
                self.set(p, H::Arr(blk, l, t));
            }
            Op::Loop(ps, init, form, b, _) => {
                let word = match form {
                    LoopC::For(..) => "for",
                    LoopC::While(_) => "while",
                };
                self.e_mem_loop(s, ps, init, *form, b)
                    .map_err(|e| loop_out_of_fuel(e, "E-MEM-LOOP", word, s.span))?
            }
            Op::Update(x, is, v, _) => self.e_mem_update(s, *x, is, *v)?,
            Op::Concat(x, y) => self.e_mem_concat(s, *x, *y)?,
            Op::Replicate(n, v) => self.e_mem_replicate(s, *n, *v)?,
            Op::Reduce(op, ne, xs, t) => self.e_mem_reduce(s, op, *ne, *xs, *t)?,
            Op::Scan(op, ne, xs, t) => self.e_mem_scan(s, op, *ne, *xs, *t)?,
        }
        Ok(())
    }

    /// `x op y` of a reduction's operator on words (as in the value
    /// semantics; a lambda's body runs here, its reads being heap reads).
    #[inline]
    fn apply_op(
        &mut self,
        op: &RedC,
        x: i64,
        y: i64,
        at: (i64, Prim),
        rule: &'static str,
        span: Span,
    ) -> Result<i64, EvalError> {
        match op {
            RedC::Bin(b, t) => binop_t(*b, *t, x as u64, y as u64)
                .map(|w| w as i64)
                .map_err(EvalError::div_by_zero(rule, span)),
            RedC::Lambda(a, c, body) => {
                self.frame[*a as usize] = H::Int(x);
                self.frame[*c as usize] = H::Int(y);
                // A stepper sees iteration `at.0` of the operator's body,
                // its parameters bound (elements of type `at.1`); counting
                // observers (`--stats`) do not, as for a built-in operator.
                if O::DETAILED {
                    self.obs.loop_iteration(span, at.0);
                    self.enter(*a, &Const::from_bits(at.1, x as u64));
                    self.enter(*c, &Const::from_bits(at.1, y as u64));
                }
                self.block(body).map_err(|e| in_operator(e, rule, span))?;
                let r = body.result.first().copied().unwrap_or(0);
                int(&self.frame, r, rule, span)
            }
        }
    }

    /// The elements of a reduction's 1-D operand, read (in order) from the
    /// heap into a temporary charged like memcopy's; with its block, LMAD
    /// and element type.
    fn operand(
        &mut self,
        xs: Slot,
        rule: &'static str,
        span: Span,
    ) -> Result<(Vec<i64>, usize, Lmad<i64>, Prim), EvalError> {
        let (blk, l, t) = self.arr(xs, rule, span)?;
        let l = l.clone();
        if l.rank() != 1 {
            return Err(EvalError::stuck(
                rule,
                span,
                format!("the operand is an array of rank {}, not 1", l.rank()),
            ));
        }
        let size = u64::try_from(l.size()).unwrap_or(0);
        let mut vals = machine::charged(&self.limits, &mut 0, size, size, rule, span)?;
        self.read_all(blk, &l, t, &mut vals, rule, span)?;
        Ok((vals, blk, l, t))
    }

    /// E-MEM-REDUCE: as E-REDUCE, xs's elements read from the heap; the
    /// result is a scalar (no memory). Outside a kernel a reduce is one
    /// parallel operation whose element reads never race (its operator
    /// writes nothing); inside a kernel iteration its reads are the
    /// iteration's.
    #[inline(never)]
    fn e_mem_reduce(
        &mut self,
        s: &Stm,
        op: &RedC,
        ne: AtomC,
        xs: Slot,
        _t: Prim,
    ) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-REDUCE";
        self.obs.rule(RULE, s.span);
        let mut acc = atom(&self.frame, ne, RULE, s.span)?;
        let (vals, _, _, t) = self.operand(xs, RULE, s.span)?;
        for (k, x) in vals.into_iter().enumerate() {
            self.fuel.burn(RULE, s.span)?;
            acc = self.apply_op(op, acc, x, (k as i64, t), RULE, s.span)?;
        }
        self.set(&s.pats[0], H::Int(acc));
        Ok(())
    }

    /// E-MEM-SCAN: as E-SCAN, the prefixes written into the block and LMAD
    /// the pattern names (like copy), after all of xs is read. Outside a
    /// kernel the scan is one parallel operation: when the bytes it writes
    /// overlap the bytes it reads from xs, the scan writes where it reads,
    /// a race (checked when races are). Inside a kernel iteration it is
    /// that iteration's sequential code.
    #[inline(never)]
    fn e_mem_scan(
        &mut self,
        s: &Stm,
        op: &RedC,
        ne: AtomC,
        xs: Slot,
        _t: Prim,
    ) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-SCAN";
        self.obs.rule(RULE, s.span);
        let mut acc = atom(&self.frame, ne, RULE, s.span)?;
        let (vals, bx, lx, tx) = self.operand(xs, RULE, s.span)?;
        let n = vals.len() as i64;
        let (blk, ld, t) = self.fresh_destination(s, &[n], "scan", RULE)?;
        if self.depth == 0 && self.race.is_some() && blk == bx {
            if let Some(e) = scan_overlap(s.span, blk, (&lx, tx), (&ld, t)) {
                return Err(e);
            }
        }
        let mut out = vals;
        for (k, v) in out.iter_mut().enumerate() {
            self.fuel.burn(RULE, s.span)?;
            acc = self.apply_op(op, acc, *v, (k as i64, tx), RULE, s.span)?;
            *v = acc;
        }
        let mut k = 0;
        ld.for_each_address(|a| {
            let v = out.get(k).copied().unwrap_or(0);
            k += 1;
            self.write(blk, a, t, v, RULE, s.span)
        })?;
        self.set(&s.pats[0], H::Arr(blk, ld, t));
        Ok(())
    }

    /// The value an atom denotes.
    fn atom_value(&self, a: AtomC, span: Span) -> Result<H, EvalError> {
        Ok(match a {
            AtomC::Const(k) => H::Int(k),
            AtomC::Slot(k) => get(&self.frame, k, span)?.clone(),
        })
    }

    /// E-MEM-LOOP: as E-LOOP-FOR / E-LOOP-WHILE, over heap values. A
    /// parameter array's block and LMAD variables are parameters too
    /// (existential memory, as an `if`'s results): each iteration only
    /// rebinds them to the body's results (labels, integers, arrays as a
    /// label and an LMAD); nothing is copied. Each iteration is one unit
    /// of fuel. Not parallel: its iterations never race with each other,
    /// and each kernel instance in its body is checked on its own.
    #[inline(never)]
    fn e_mem_loop(
        &mut self,
        s: &Stm,
        ps: &[PatC],
        init: &[AtomC],
        form: LoopC,
        b: &Block,
    ) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-LOOP";
        self.obs.rule(RULE, s.span);
        let n = loop_bound(&self.frame, form, RULE, s.span)?;
        let mut vals = Vec::with_capacity(ps.len());
        for a in init {
            vals.push(self.atom_value(*a, s.span)?);
        }
        for (p, v) in ps.iter().zip(vals.drain(..)) {
            self.frame[p.slot as usize] = v;
        }
        let mut k = 0i64;
        while loop_enters(&mut self.frame, form, k, n, RULE, s.span)? {
            self.fuel.burn(RULE, s.span)?;
            self.obs.loop_iteration(s.span, k);
            if let LoopC::For(i, _) = form {
                self.enter(i, &Const::I64(k));
            }
            for p in ps {
                if let Some(v) = self.frame.get(p.slot as usize) {
                    self.obs.enter(&p.name, &Typed(v, ty_prim(&p.ty)));
                    if let H::Arr(blk, lmad, t) = v {
                        self.obs.place(&p.name, *blk, lmad, *t);
                    }
                }
            }
            self.block(b)?;
            for r in &b.result {
                vals.push(get(&self.frame, *r, s.span)?.clone());
            }
            for (p, v) in ps.iter().zip(vals.drain(..)) {
                self.frame[p.slot as usize] = v;
            }
            k = k.wrapping_add(1);
        }
        for (q, p) in s.pats.iter().zip(ps) {
            let v = get(&self.frame, p.slot, s.span)?.clone();
            self.set(q, v);
        }
        Ok(())
    }

    /// E-MEM-UPDATE: v written in place into x's block through x's LMAD at
    /// the indices (element-wise from v's block when v is an array, all of
    /// v read first, so that v may overlap x); the result is x's block and
    /// LMAD.
    #[inline(never)]
    fn e_mem_update(&mut self, s: &Stm, x: Slot, is: &[UpdC], v: AtomC) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-UPDATE";
        self.obs.rule(RULE, s.span);
        let (blk, l, t) = self.arr(x, RULE, s.span)?;
        let l = l.clone();
        let target = update_target(RULE, s, &l, is, &self.frame)?;
        let v = self.atom_value(v, s.span)?;
        let want = target.shape();
        match &v {
            H::Int(_) if want.is_empty() => {}
            H::Arr(_, lv, _) if lv.shape() == want => {}
            H::Arr(_, lv, _) => return Err(update_shape(RULE, s, &lv.shape(), &want)),
            _ => return Err(update_shape(RULE, s, &[], &want)),
        }
        self.memcopy(&v, blk, &target, t, RULE, s.span)?;
        self.set(&s.pats[0], H::Arr(blk, l, t));
        Ok(())
    }

    /// The block and LMAD of a fresh array of this shape (`concat`,
    /// `replicate`): the pattern's, which must have the shape.
    fn fresh_destination(
        &self,
        s: &Stm,
        shape: &[i64],
        what: &str,
        rule: &'static str,
    ) -> Result<(usize, Lmad<i64>, Prim), EvalError> {
        let p = &s.pats[0];
        let (blk, l, t) = self.destination(p, rule, s.span)?;
        if l.shape() != shape {
            return Err(EvalError::stuck(
                rule,
                s.span,
                format!(
                    "{what} of shape {} does not fit the LMAD of `{}`, of shape {}",
                    dims(shape),
                    p.name,
                    dims(&l.shape())
                ),
            ));
        }
        Ok((blk, l, t))
    }

    /// Reads an array's elements in row-major order into `out` (a
    /// temporary the caller charged).
    fn read_all(
        &mut self,
        blk: usize,
        l: &Lmad<i64>,
        t: Prim,
        out: &mut Vec<i64>,
        rule: &'static str,
        span: Span,
    ) -> Result<(), EvalError> {
        l.for_each_address(|a| {
            out.push(self.read(blk, a, t, rule, span)?);
            Ok(())
        })
    }

    /// E-MEM-CONCAT: x's elements, then y's, written into the pattern's
    /// block through its LMAD (as memcopy, eq. 5: all read first).
    #[inline(never)]
    fn e_mem_concat(&mut self, s: &Stm, x: Slot, y: Slot) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-CONCAT";
        self.obs.rule(RULE, s.span);
        let (bx, lx, tx) = self.arr(x, RULE, s.span)?;
        let lx = lx.clone();
        let (by, ly, ty) = self.arr(y, RULE, s.span)?;
        let ly = ly.clone();
        let shape = concat_shape(RULE, s, &lx.shape(), &ly.shape())?;
        let (blk, ld, t) = self.fresh_destination(s, &shape, "concat", RULE)?;
        let size = u64::try_from(lx.size().saturating_add(ly.size())).unwrap_or(0);
        let mut vals = machine::charged(&self.limits, &mut 0, size, size, RULE, s.span)?;
        self.read_all(bx, &lx, tx, &mut vals, RULE, s.span)?;
        self.read_all(by, &ly, ty, &mut vals, RULE, s.span)?;
        let mut k = 0;
        ld.for_each_address(|a| {
            let v = vals.get(k).copied().unwrap_or(0);
            k += 1;
            self.write(blk, a, t, v, RULE, s.span)
        })?;
        self.set(&s.pats[0], H::Arr(blk, ld, t));
        Ok(())
    }

    /// E-MEM-REPLICATE: n copies of v written into the pattern's block
    /// through its LMAD (v read first); n < 0 is stuck.
    #[inline(never)]
    fn e_mem_replicate(&mut self, s: &Stm, n: AtomC, v: AtomC) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-REPLICATE";
        self.obs.rule(RULE, s.span);
        let n = atom(&self.frame, n, RULE, s.span)?;
        if n < 0 {
            return Err(EvalError::stuck(
                RULE,
                s.span,
                format!("replicate of negative count {n}"),
            ));
        }
        let mut shape = vec![n];
        let row = match self.atom_value(v, s.span)? {
            H::Int(k) => vec![k],
            H::Arr(b, l, t) => {
                shape.extend(l.shape());
                let size = u64::try_from(l.size()).unwrap_or(0);
                let mut row = machine::charged(&self.limits, &mut 0, size, size, RULE, s.span)?;
                self.read_all(b, &l, t, &mut row, RULE, s.span)?;
                row
            }
            v => {
                return Err(EvalError::stuck(
                    RULE,
                    s.span,
                    format!("replicate of {v}, which is neither an integer nor an array"),
                ))
            }
        };
        let (blk, ld, t) = self.fresh_destination(s, &shape, "replicate", RULE)?;
        if !row.is_empty() {
            let mut k = 0;
            // Each element costs fuel (a stride-0 layout, as for iota).
            ld.for_each_address(|a| {
                self.fuel.burn(RULE, s.span)?;
                let v = row[k % row.len()];
                k += 1;
                self.write(blk, a, t, v, RULE, s.span)
            })?;
        }
        self.set(&s.pats[0], H::Arr(blk, ld, t));
        Ok(())
    }

    /// E-MEM-KERNEL: iteration k evaluates the body with the index bound to
    /// k, then memcopies its k-th result into the k-th pattern's block at
    /// `index_f(L, k)` (each result array has its own block and LMAD); the
    /// iterations' reads and writes, memcopies included, must be race free
    /// (eq. 4).
    fn e_mem_kernel(&mut self, s: &Stm, i: Slot, n: AtomC, b: &Block) -> Result<(), EvalError> {
        const RULE: &str = "E-MEM-KERNEL";
        self.obs.rule(RULE, s.span);
        let n = atom(&self.frame, n, RULE, s.span)?;
        if n < 0 {
            return Err(EvalError::stuck(
                RULE,
                s.span,
                format!("kernel of negative size {n}"),
            ));
        }
        let mut dests = Vec::with_capacity(s.pats.len());
        for (p, &res) in s.pats.iter().zip(&b.result) {
            let (blk, l, t) = self.destination(p, RULE, s.span)?;
            if l.rank() == 0 || l.dims[0].elems != n {
                return Err(EvalError::stuck(
                    RULE,
                    s.span,
                    format!("the LMAD of `{}` does not have {n} rows", p.name),
                ));
            }
            self.obs.destination(&p.name, blk, &l, t);
            dests.push((blk, l, t, res));
        }
        if let Some(r) = self.race.as_mut() {
            r.enter_kernel(s.span);
        }
        self.depth += 1;
        for k in 0..n {
            if let Some(slot) = self.frame.get_mut(i as usize) {
                *slot = H::Int(k);
            }
            if let Some(r) = self.race.as_mut() {
                r.begin_iteration(k);
            }
            self.fuel.burn(RULE, s.span)?;
            self.obs.iteration_start(s.span, k);
            self.enter(i, &Const::I64(k));
            self.block(b)?;
            for (blk, l, t, res) in &dests {
                match get(&self.frame, *res, s.span)? {
                    // memcopy of a scalar to index_f(L, k) of a 1-D L: one
                    // write, without building the 0-D LMAD.
                    &H::Int(x) if l.rank() == 1 => {
                        let at = l.offset.wrapping_add(k.wrapping_mul(l.dims[0].stride));
                        self.write(*blk, at, *t, x, RULE, s.span)?;
                    }
                    v => {
                        let v = v.clone();
                        self.memcopy(&v, *blk, &l.index(&k), *t, RULE, s.span)?;
                    }
                }
            }
            self.obs.iteration_end(s.span, k);
        }
        self.depth -= 1;
        if let Some(r) = self.race.as_mut() {
            r.exit_kernel();
        }
        for (p, (blk, l, t, _)) in s.pats.iter().zip(dests) {
            self.set(p, H::Arr(blk, l, t));
        }
        Ok(())
    }
}

/// The race of a scan outside kernels whose writes (LMAD `w` of type tw)
/// overlap its reads (LMAD `r` of type tr) in block `blk`: iteration i
/// reads element i of xs and writes element i of the result, so the first
/// write (in iteration order) on a byte some iteration reads races with
/// that read.
fn scan_overlap(
    span: Span,
    blk: usize,
    (r, tr): (&Lmad<i64>, Prim),
    (w, tw): (&Lmad<i64>, Prim),
) -> Option<EvalError> {
    let (sr, sw) = (tr.size() as i64, tw.size() as i64);
    // The bytes read, as sorted (start, end, iteration) ranges.
    let mut reads: Vec<(i64, i64, i64)> = r
        .image()
        .enumerate()
        .map(|(i, a)| {
            let b = a.saturating_mul(sr);
            (b, b.saturating_add(sr), i as i64)
        })
        .collect();
    reads.sort_unstable();
    for (i, a) in w.image().enumerate() {
        let (b, e) = (
            a.saturating_mul(sw),
            a.saturating_mul(sw).saturating_add(sw),
        );
        // A read [rb, rb + sr) overlaps [b, e) when b - sr < rb < e.
        let lo = reads.partition_point(|x| x.0 <= b.saturating_sub(sr));
        let upto = reads.partition_point(|x| x.0 < e);
        if let Some(&(rb, _, j)) = reads.get(lo..upto).and_then(|r| r.first()) {
            let race = Box::new(Race {
                kernel: span,
                block: blk,
                offset: rb.max(b),
                first: crate::error::Access {
                    path: vec![j],
                    write: false,
                },
                second: crate::error::Access {
                    path: vec![i as i64],
                    write: true,
                },
            });
            return Some(EvalError {
                span,
                rule: "E-MEM-SCAN",
                message: format!(
                    "the scan writes where it reads: byte {} of block {blk} is read for element {j} and written for element {i}",
                    rb.max(b)
                ),
                kind: ErrorKind::Race(race),
            });
        }
    }
    None
}

/// An access to an element some of whose bytes are outside its block.
#[cold]
fn out_of_bounds(
    what: &str,
    blk: usize,
    off: i64,
    t: Prim,
    len: usize,
    rule: &'static str,
    span: Span,
) -> EvalError {
    let w = t.size() as i64;
    EvalError::stuck(
        rule,
        span,
        format!(
            "{what} of element {off} ({t}, bytes {}..{}) is out of bounds of block {blk}, of {len} bytes",
            off.saturating_mul(w),
            off.saturating_mul(w).saturating_add(w)
        ),
    )
}

fn input_error(p: &PatC, want: &str, got: Option<&Value>, span: Span) -> EvalError {
    let found = got.map_or("nothing".to_string(), Value::type_name);
    EvalError::stuck(
        "E-MEM-PROG",
        span,
        format!("input `{}` must be {want}, but {found} was given", p.name),
    )
}

impl SlotValue for H {
    fn is_unset(&self) -> bool {
        matches!(self, H::Unset)
    }
    #[inline]
    fn as_int(&self) -> Option<i64> {
        match self {
            H::Int(k) => Some(*k),
            _ => None,
        }
    }
    fn from_int(k: i64) -> H {
        H::Int(k)
    }

    fn describe(&self) -> String {
        self.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observer::Stats;
    use funmem_lang::ast::Lang;
    use funmem_lang::check::check_program;
    use funmem_lang::parse::parse_program;

    fn program(src: &str) -> ast::Program {
        let p = parse_program(src, Lang::FunMem).unwrap_or_else(|d| panic!("{d}\n{src}"));
        check_program(&p).unwrap_or_else(|d| panic!("{d}\n{src}"));
        p
    }

    /// The race the heap semantics reports for `p` on the input `n`.
    fn race_on(p: &ast::Program, n: i64) -> Box<Race> {
        let e = run_heap(
            p,
            &[Value::Scalar(Const::I64(n))],
            Limits::default(),
            true,
            &mut NoObserver,
        )
        .expect_err("a race");
        match e.kind {
            ErrorKind::Race(r) => r,
            _ => panic!("expected a race: {e}"),
        }
    }

    fn parse_only(src: &str) -> ast::Program {
        parse_program(src, Lang::FunMem).unwrap_or_else(|d| panic!("{d}\n{src}"))
    }

    fn text(vs: &[Value]) -> Vec<String> {
        vs.iter().map(Value::to_string).collect()
    }

    /// Records the writes.
    #[derive(Default)]
    struct Writes(Vec<(usize, i64)>);

    impl Observer for Writes {
        fn write(&mut self, blk: usize, off: i64, _: Prim, _: u64) {
            self.0.push((blk, off));
        }
    }

    #[test]
    fn update_writes_in_place_into_the_block() {
        // `b` lives where `a` does: the block itself holds the new value.
        let p = program(
            "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]int @ m -> R(n)) = iota n
  let (b: [n]int @ m -> R(n)) = a with [1] = 42
  let (x: int) = b[1]
  in (b, x)",
        );
        let mut w = Writes::default();
        let r = run_heap(
            &p,
            &[Value::Scalar(Const::I64(3))],
            Limits::default(),
            true,
            &mut w,
        )
        .unwrap();
        assert_eq!(text(&r), ["[0i64, 42i64, 2i64]", "42i64"]);
        // iota's three writes, then the update's single write at offset 1.
        assert_eq!(w.0, [(0, 0), (0, 1), (0, 2), (0, 1)]);
    }

    #[test]
    fn update_from_an_overlapping_part_of_the_same_block() {
        // Elements 1 .. 3 become elements 0 .. 2: v is read in full before
        // anything is written. (Parsed only: whether a value aliasing the
        // updated array may be written is the type checker's business.)
        let p = parse_only(
            "def main (n: int) =
  let (m: mem) = alloc 4
  let (a: [4]int @ m -> R(4)) = iota 4
  let (v: [3]int @ m -> 0 + {(3 : 1)}) = a[0 : 3]
  let (b: [4]int @ m -> R(4)) = a with [1 : 3] = v
  in (b)",
        );
        let r = run_heap(
            &p,
            &[Value::Scalar(Const::I64(0))],
            Limits::default(),
            true,
            &mut NoObserver,
        )
        .unwrap();
        assert_eq!(text(&r), ["[0i64, 0i64, 1i64, 2i64]"]);
    }

    #[test]
    fn loop_of_updates_writes_once_per_iteration() {
        let p = program(
            "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]int @ m -> R(n)) = iota n
  let (b: [n]int @ m -> R(n)) = loop (acc: [n]int @ m -> R(n)) = (a) for i < n do
    let (y: int) = i * i
    let (acc2: [n]int @ m -> R(n)) = acc with [i] = y
    in (acc2)
  in (b)",
        );
        let mut st = Stats::default();
        let r = run_heap(
            &p,
            &[Value::Scalar(Const::I64(100))],
            Limits::default(),
            true,
            &mut st,
        )
        .unwrap();
        assert_eq!(
            r[0],
            Value::Array(ArrayValue::vector((0..100).map(|i| i * i).collect()))
        );
        assert_eq!(st.writes, 200);
        assert_eq!(st.allocations, 1);
    }

    #[test]
    fn loop_rebinds_blocks_and_out_of_fuel_names_it() {
        let p = program(
            "def main (t: int) =
  let (m0: mem) = alloc 1
  let (a0: [1]int @ m0 -> R(1)) = iota 1
  let (m: mem) (a: [1]int @ m -> R(1)) = loop (mp: mem) (ap: [1]int @ mp -> R(1)) = (m0, a0) for i < t do
    let (mq: mem) = alloc 1
    let (aq: [1]int @ mq -> R(1)) = kernel j < 1 do
      let (x: int) = ap[j]
      let (y: int) = x + 2
      in (y)
    in (mq, aq)
  in (a)",
        );
        let mut st = Stats::default();
        let r = run_heap(
            &p,
            &[Value::Scalar(Const::I64(4))],
            Limits::default(),
            true,
            &mut st,
        )
        .unwrap();
        assert_eq!(text(&r), ["[8i64]"]);
        assert_eq!(st.allocations, 5);
        let limits = Limits {
            fuel: 20,
            ..Limits::default()
        };
        let e = run_heap(
            &p,
            &[Value::Scalar(Const::I64(1000))],
            limits,
            true,
            &mut NoObserver,
        )
        .unwrap_err();
        assert_eq!(
            (e.kind.clone(), e.rule),
            (ErrorKind::OutOfFuel, "E-MEM-LOOP")
        );
        assert!(
            e.message.starts_with("the `for` loop did not finish"),
            "{e}"
        );
    }

    #[test]
    fn concat_and_replicate_write_through_the_destination_lmad() {
        let p = program(
            "def main (n: int) =
  let (m: mem) = alloc n
  let (a: [n]int @ m -> R(n)) = iota n
  let (mr: mem) = alloc 4
  let (r: [2][n]int @ mr -> 0 + {(2 : 1) (n : 2)}) = replicate 2 a
  let (k: int) = n + n
  let (mc: mem) = alloc k
  let (c: [k]int @ mc -> k - 1 + {(k : -1)}) = concat a a
  in (r, c)",
        );
        let mut w = Writes::default();
        let r = run_heap(
            &p,
            &[Value::Scalar(Const::I64(2))],
            Limits::default(),
            true,
            &mut w,
        )
        .unwrap();
        assert_eq!(
            text(&r),
            ["[[0i64, 1i64], [0i64, 1i64]]", "[0i64, 1i64, 0i64, 1i64]"]
        );
        // replicate: row k at offset k, column j at stride 2.
        assert_eq!(&w.0[2..6], [(1, 0), (1, 2), (1, 1), (1, 3)]);
        // concat: backwards through the block.
        assert_eq!(&w.0[6..10], [(2, 3), (2, 2), (2, 1), (2, 0)]);
    }

    #[test]
    fn multi_result_kernel_is_race_free_and_racing_results_are_found() {
        let ok = program(
            "def main (n: int) =
  let (ma: mem) = alloc n
  let (mb: mem) = alloc n
  let (a: [n]int @ ma -> R(n)) (b: [n]int @ mb -> R(n)) = kernel i < n do
    let (y: int) = i + 10
    in (i, y)
  in (a, b)",
        );
        let r = run_heap(
            &ok,
            &[Value::Scalar(Const::I64(3))],
            Limits::default(),
            true,
            &mut NoObserver,
        )
        .unwrap();
        assert_eq!(text(&r), ["[0i64, 1i64, 2i64]", "[10i64, 11i64, 12i64]"]);
        // b's row i is a's row i + 1: iterations i and i + 1 write one cell.
        let racy = program(
            "def main (n: int) =
  let (n1: int) = n + 1
  let (m: mem) = alloc n1
  let (a: [n]int @ m -> R(n)) (b: [n]int @ m -> 1 + {(n : 1)}) = kernel i < n do
    let (y: int) = i + 10
    in (i, y)
  in (a, b)",
        );
        let r = race_on(&racy, 3);
        assert_eq!((r.block, r.offset), (0, 8));
        assert_eq!((r.first.path[0], r.second.path[0]), (0, 1));
    }

    #[test]
    fn race_between_inner_loop_iterations_of_two_kernel_iterations() {
        // Kernel iteration i writes cell i + j in loop iteration j: cell 1
        // by iteration 0 (j = 1) and by iteration 1 (j = 0).
        let p = program(
            "def main (n: int) =
  let (n2: int) = n + n
  let (mo: mem) = alloc n2
  let (mr: mem) = alloc n
  let (r: [n]int @ mr -> R(n)) = kernel i < n do
    let (s: int) = loop (acc: int) = (0) for j < n do
      let (at: int) = i + j
      let (c: [1]int @ mo -> at + {(1 : 1)}) = replicate 1 i
      let (acc2: int) = acc + 1
      in (acc2)
    in (s)
  in (r)",
        );
        let r = race_on(&p, 2);
        assert_eq!((r.block, r.offset), (0, 8));
        assert_eq!((r.first.path[0], r.second.path[0]), (0, 1));
        // One kernel iteration alone writes cells 0 .. n-1 in sequence.
        assert!(run_heap(
            &p,
            &[Value::Scalar(Const::I64(1))],
            Limits::default(),
            true,
            &mut NoObserver
        )
        .is_ok());
    }

    #[test]
    fn kernels_in_a_sequential_loop_are_checked_one_instance_at_a_time() {
        // Every loop iteration's kernel writes the same cells: no race,
        // a loop is not parallel.
        let p = program(
            "def main (n: int) (t: int) =
  let (m: mem) = alloc n
  let (a: [n]int @ m -> R(n)) = iota n
  let (b: [n]int @ m -> R(n)) = loop (acc: [n]int @ m -> R(n)) = (a) for k < t do
    let (c: [n]int @ m -> R(n)) = kernel i < n do
      let (x: int) = i + k
      in (x)
    in (c)
  in (b)",
        );
        let r = run_heap(
            &p,
            &[Value::Scalar(Const::I64(3)), Value::Scalar(Const::I64(4))],
            Limits::default(),
            true,
            &mut NoObserver,
        )
        .unwrap();
        assert_eq!(text(&r), ["[3i64, 4i64, 5i64]"]);
    }
}
