//! FUN's big-step value semantics (IFL 2022 paper, figs. 4 and 5), 0-based,
//! which through [`crate::unmem`] is also FUNMEM's value semantics.
//!
//! Values are integers and arrays. An array is a view: a shared flat buffer
//! and a concrete LMAD, so that `index`, `slice` and `tr` of fig. 5 cost
//! nothing and are exactly the LMAD operations of eqs. 1-3. Fresh arrays
//! (`kernel`, `iota`, `copy`, `concat`, `replicate`) get a new buffer in
//! row-major order. An update `x with [i] = v` consumes x, so it writes
//! into x's buffer when no other array shares it (otherwise into a copy):
//! updates in loops cost O(size of v). Results of `if` branches and loop
//! bodies move out of the body's slots for the same reason. Each
//! function below that evaluates a form is named after its rule (`E-INDEX`,
//! `E-KERNEL`, ...), and errors name the rule whose premise failed.

use crate::code::{
    atom, get, int, loop_bound, loop_enters, resolve, AtomC, Block, Code, LoopC, Op, PatC, RedC,
    Slot, SlotValue, Stm, TyC, UpdC,
};
use crate::error::{loop_out_of_fuel, EvalError, Fuel, Limits};
use crate::machine;
use crate::observer::Observer;
use crate::scalar::binop_t;
use crate::value::{ArrayValue, Elems, Value};
use funmem_lang::ast::{self, Lang, Type};
use funmem_lang::lmad::Lmad;
use funmem_lang::prim::{Const, Prim};
use funmem_lang::{Name, Span};
use std::fmt;
use std::rc::Rc;

/// Evaluates a FUN program, or a FUNMEM program under its value semantics
/// (`unmem`, fig. 9). `mem` parameters take no input and `mem` results are
/// not returned, so both languages give the same list of results.
pub fn run_value<O: Observer>(
    p: &ast::Program,
    inputs: &[Value],
    limits: Limits,
    obs: &mut O,
) -> Result<Vec<Value>, EvalError> {
    let mem_params: Vec<bool> = p
        .params
        .iter()
        .map(|q| matches!(q.ty, Type::Mem(_)))
        .collect();
    let mem_results = result_is_mem(p);
    let fun = if p.lang == Lang::FunMem {
        crate::unmem::unmem(p)
    } else {
        p.clone()
    };
    let code = resolve(&fun);
    let mut m = Machine {
        frame: vec![V::Unset; code.slots],
        fuel: Fuel::new(limits.fuel),
        cells: 0,
        read_back: 0,
        limits,
        names: &code.names,
        obs,
    };
    m.bind_inputs(&code, &mem_params, inputs, p.span)?;
    m.block(&code.body)?;
    let results = &code.body.result;
    let mut out = Vec::new();
    for (k, slot) in results.iter().enumerate() {
        if mem_results.get(k).copied().unwrap_or(false) {
            continue;
        }
        get(&m.frame, *slot, p.span)?;
        // A result named once more later is copied; otherwise it leaves
        // the frame, and a fresh row-major array leaves without a copy.
        let v = if results[k + 1..].contains(slot) {
            m.frame[*slot as usize].clone()
        } else {
            std::mem::replace(&mut m.frame[*slot as usize], V::Unset)
        };
        out.push(m.result(v, code.prim(*slot), p.span)?);
    }
    Ok(out)
}

/// Which of a program's results are memory blocks (and so not printed).
pub fn result_is_mem(p: &ast::Program) -> Vec<bool> {
    let mut types: std::collections::HashMap<&funmem_lang::Name, &Type> =
        std::collections::HashMap::new();
    for q in &p.params {
        types.insert(&q.name.name, &q.ty);
    }
    for s in &p.body.stms {
        for q in &s.pats {
            types.insert(&q.name.name, &q.ty);
        }
    }
    p.body
        .result
        .iter()
        .map(|x| matches!(types.get(&x.name), Some(Type::Mem(_))))
        .collect()
}

/// A value in the frame.
#[derive(Clone, Debug)]
enum V {
    Unset,
    Int(i64),
    Arr(Arr),
}

/// An array: a view of a shared buffer through a concrete LMAD.
#[derive(Clone, Debug)]
struct Arr {
    /// The elements' words ([`Const::to_bits`]).
    buf: Rc<Vec<i64>>,
    lmad: Lmad<i64>,
    /// The element type.
    elem: Prim,
}

impl Arr {
    fn row_major(buf: Vec<i64>, shape: &[i64], elem: Prim) -> Arr {
        Arr {
            buf: Rc::new(buf),
            lmad: Lmad::row_major(shape),
            elem,
        }
    }

    /// The same buffer through another LMAD.
    fn view(&self, lmad: Lmad<i64>) -> Arr {
        Arr {
            buf: self.buf.clone(),
            lmad,
            elem: self.elem,
        }
    }

    /// Whether the view is its whole buffer in row-major order.
    fn is_whole_buffer(&self) -> bool {
        self.lmad == Lmad::row_major(&self.shape())
            && usize::try_from(self.lmad.size()) == Ok(self.buf.len())
    }

    fn shape_usize(&self) -> Vec<usize> {
        self.shape()
            .iter()
            .map(|&d| usize::try_from(d).unwrap_or(0))
            .collect()
    }

    fn shape(&self) -> Vec<i64> {
        self.lmad.dims.iter().map(|d| d.elems).collect()
    }

    /// Appends the elements in row-major order; `Err(a)` when the view
    /// reaches position `a`, outside its buffer (which index functions
    /// derived by the type-checked rules never do: a fault of their
    /// arithmetic, reported rather than read as 0).
    fn flatten_into(&self, out: &mut Vec<i64>) -> Result<(), i64> {
        let l = &self.lmad;
        if l.size() == 0 {
            return Ok(());
        }
        // Contiguous row-major views are one slice of the buffer.
        let mut stride = 1i64;
        let contiguous = l.dims.iter().rev().all(|d| {
            let ok = d.elems == 1 || d.stride == stride;
            stride = stride.wrapping_mul(d.elems);
            ok
        });
        if contiguous {
            if let (Ok(start), Ok(n)) = (usize::try_from(l.offset), usize::try_from(l.size())) {
                if let Some(s) = self.buf.get(start..start.saturating_add(n)) {
                    out.extend_from_slice(s);
                    return Ok(());
                }
            }
        }
        for a in l.image() {
            match usize::try_from(a).ok().and_then(|i| self.buf.get(i)) {
                Some(&v) => out.push(v),
                None => return Err(a),
            }
        }
        Ok(())
    }

    /// [`Arr::flatten_into`], a position outside the buffer stuck in `rule`.
    fn flatten_checked(
        &self,
        out: &mut Vec<i64>,
        rule: &'static str,
        span: Span,
    ) -> Result<(), EvalError> {
        self.flatten_into(out).map_err(|a| {
            EvalError::stuck(
                rule,
                span,
                format!(
                    "an array view reaches position {a}, outside its buffer of {} elements (a fault of the index-function arithmetic)",
                    self.buf.len()
                ),
            )
        })
    }
}

/// A frame value with the type of its binder, for display.
struct Typed<'a>(&'a V, Prim);

impl fmt::Display for Typed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.to_value(self.1))
    }
}

impl V {
    /// The value, a scalar word read as type `t`.
    fn to_value(&self, t: Prim) -> Value {
        match self {
            V::Unset => Value::Scalar(Const::from_bits(t, 0)),
            V::Int(k) => Value::Scalar(Const::from_bits(t, *k as u64)),
            V::Arr(a) => {
                let mut data = Vec::with_capacity(usize::try_from(a.lmad.size()).unwrap_or(0));
                // For display only: a view outside its buffer (reported
                // where it is used) shows what it could read.
                let _ = a.flatten_into(&mut data);
                data.resize(usize::try_from(a.lmad.size()).unwrap_or(0), 0);
                let shape = a
                    .shape()
                    .iter()
                    .map(|&d| usize::try_from(d).unwrap_or(0))
                    .collect();
                Value::Array(ArrayValue {
                    shape,
                    data: words(a.elem, data),
                })
            }
        }
    }
}

/// Words of element type `p` as typed elements.
fn words(p: Prim, data: Vec<i64>) -> Elems {
    match p {
        Prim::I64 => Elems::I64(data),
        _ => Elems::from_words(p, data.into_iter().map(|w| w as u64)),
    }
}

struct Machine<'o, O> {
    frame: Vec<V>,
    fuel: Fuel,
    cells: u64,
    /// Cells copied to read results back.
    read_back: u64,
    limits: Limits,
    /// Each slot's source name, for [`Observer::enter`].
    names: &'o [Option<Name>],
    obs: &'o mut O,
}

impl<O: Observer> Machine<'_, O> {
    /// Reports a body's name bound on entry (an index, a loop parameter).
    #[inline(always)]
    fn enter(&mut self, k: Slot, v: &dyn std::fmt::Display) {
        if let Some(Some(n)) = self.names.get(k as usize) {
            self.obs.enter(n, v);
        }
    }

    fn arr(&self, k: Slot, rule: &'static str, span: Span) -> Result<&Arr, EvalError> {
        match get(&self.frame, k, span)? {
            V::Arr(a) => Ok(a),
            _ => Err(EvalError::stuck(
                rule,
                span,
                "expected an array, found an integer",
            )),
        }
    }

    fn set(&mut self, p: &PatC, v: V) {
        self.obs.bind(&p.name, &Typed(&v, ty_prim(&p.ty)));
        if let Some(s) = self.frame.get_mut(p.slot as usize) {
            *s = v;
        }
    }

    /// Charges `cells` to the heap limit, before anything is allocated,
    /// and gives an empty vector with room for them.
    fn allocate(
        &mut self,
        cells: u64,
        rule: &'static str,
        span: Span,
    ) -> Result<Vec<i64>, EvalError> {
        self.allocate_upto(cells, cells, rule, span)
    }

    /// As [`Machine::allocate`], with room for at most `room` of the cells
    /// yet: a kernel's result grows as its iterations finish (through
    /// [`grow`]), so that fuel may stop a huge kernel before its memory is
    /// taken.
    fn allocate_upto(
        &mut self,
        cells: u64,
        room: u64,
        rule: &'static str,
        span: Span,
    ) -> Result<Vec<i64>, EvalError> {
        let v = machine::charged(&self.limits, &mut self.cells, cells, room, rule, span)?;
        self.obs.alloc(0, cells, cells.saturating_mul(8));
        Ok(v)
    }

    /// Room for a copy of `cells` of a result: results read back copy at
    /// most the heap limit in all, beside the heap.
    fn copy_out(&mut self, cells: u64, span: Span) -> Result<Vec<i64>, EvalError> {
        machine::charged(
            &self.limits,
            &mut self.read_back,
            cells,
            cells,
            "E-PROG",
            span,
        )
    }

    /// A result as a value: a fresh row-major array as it is; any other
    /// array is copied (see [`Machine::copy_out`]).
    fn result(&mut self, v: V, t: Prim, span: Span) -> Result<Value, EvalError> {
        match v {
            V::Arr(a) if a.is_whole_buffer() => {
                let shape = a.shape_usize();
                let data = match Rc::try_unwrap(a.buf) {
                    Ok(data) => data,
                    Err(buf) => {
                        let mut data = self.copy_out(buf.len() as u64, span)?;
                        data.extend_from_slice(&buf);
                        data
                    }
                };
                Ok(Value::Array(ArrayValue {
                    shape,
                    data: words(a.elem, data),
                }))
            }
            V::Arr(a) => {
                let size = u64::try_from(a.lmad.size()).unwrap_or(0);
                let mut data = self.copy_out(size, span)?;
                a.flatten_checked(&mut data, "E-PROG", span)?;
                let shape = a.shape_usize();
                Ok(Value::Array(ArrayValue {
                    shape,
                    data: words(a.elem, data),
                }))
            }
            v => Ok(v.to_value(t)),
        }
    }

    fn bind_inputs(
        &mut self,
        code: &Code,
        mem: &[bool],
        inputs: &[Value],
        span: Span,
    ) -> Result<(), EvalError> {
        let wanted = mem.iter().filter(|m| !**m).count();
        if inputs.len() != wanted {
            return Err(EvalError::stuck(
                "E-PROG",
                span,
                format!(
                    "the program takes {wanted} inputs, but {} were given",
                    inputs.len()
                ),
            ));
        }
        let mut given = inputs.iter();
        let mut arrays = Vec::new();
        for (k, p) in code.params.iter().enumerate() {
            if mem.get(k).copied().unwrap_or(false) {
                self.set(p, V::Int(0)); // fig. 9: a block is an integer
                continue;
            }
            match (&p.ty, given.next()) {
                (TyC::Prim(t), Some(Value::Scalar(c))) if c.prim() == *t => {
                    self.set(p, V::Int(c.to_bits() as i64))
                }
                (TyC::Array { elem, shape, .. }, Some(Value::Array(a)))
                    if a.prim() == *elem && a.rank() == shape.len() =>
                {
                    arrays.push((p, a))
                }
                (_, v) => {
                    let found = v.map_or("nothing".to_string(), Value::type_name);
                    return Err(EvalError::stuck(
                        "E-PROG",
                        span,
                        format!(
                            "input `{}` must be {}, but {found} was given",
                            p.name,
                            ty_name(&p.ty)
                        ),
                    ));
                }
            }
        }
        // Sizes may name any parameter: check shapes once all ints are bound.
        for (p, a) in arrays {
            let TyC::Array { shape, elem, .. } = &p.ty else {
                continue;
            };
            let elem = *elem;
            let want: Vec<i64> = shape
                .iter()
                .map(|s| atom(&self.frame, *s, "E-PROG", span))
                .collect::<Result<_, _>>()?;
            let got: Vec<i64> = a.shape.iter().map(|&d| d as i64).collect();
            if want != got {
                return Err(EvalError::stuck(
                    "E-PROG",
                    span,
                    format!(
                        "input `{}` must have shape {}, but {} was given",
                        p.name,
                        dims(&want),
                        Value::Array(a.clone()).type_name()
                    ),
                ));
            }
            let mut data = self.allocate(a.data.len() as u64, "E-PROG", span)?;
            match a.data.as_i64() {
                Some(xs) => data.extend_from_slice(xs),
                None => data.extend(a.data.words().map(|w| w as i64)),
            }
            self.set(p, V::Arr(Arr::row_major(data, &got, elem)));
        }
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Result<(), EvalError> {
        for s in &b.stms {
            self.stm(s)?;
            self.obs.done(s.span);
        }
        Ok(())
    }

    /// E-LET: evaluate the expression, bind the pattern.
    fn stm(&mut self, s: &Stm) -> Result<(), EvalError> {
        self.fuel.burn("E-LET", s.span)?;
        match &s.op {
            Op::Scalar(e) => {
                self.obs.rule("E-SCALAR", s.span);
                let v = e
                    .eval(&self.frame)
                    .map_err(EvalError::div_by_zero("E-SCALAR", s.span))?;
                self.set(&s.pats[0], V::Int(v));
            }
            Op::Alloc(e, _) => {
                // Only FUNMEM has alloc; unmem turns it into 0 (fig. 9).
                self.obs.rule("E-SCALAR", s.span);
                e.eval(&self.frame)
                    .map_err(EvalError::div_by_zero("E-SCALAR", s.span))?;
                self.set(&s.pats[0], V::Int(0));
            }
            Op::Index(x, idx) => self.e_index(s, *x, idx)?,
            Op::Slice(x, sl) => self.e_slice(s, *x, sl)?,
            Op::Transpose(x) => {
                self.obs.rule("E-TRANSPOSE", s.span);
                let a = self.arr(*x, "E-TRANSPOSE", s.span)?;
                let lmad = a.lmad.transpose().ok_or_else(|| {
                    EvalError::stuck(
                        "E-TRANSPOSE",
                        s.span,
                        "transpose of an array that is not 2-D",
                    )
                })?;
                let v = V::Arr(a.view(lmad));
                self.set(&s.pats[0], v);
            }
            Op::If(c, t, e) => {
                let c = int(&self.frame, *c, "E-IF-TRUE", s.span)?;
                let (rule, b) = if c != 0 {
                    ("E-IF-TRUE", t)
                } else {
                    ("E-IF-FALSE", e)
                };
                self.obs.rule(rule, s.span);
                self.block(b)?;
                // The branch's own arrays move to the pattern, so that an
                // update of the result needs no copy.
                for (k, p) in s.pats.iter().enumerate() {
                    let v = self.take_result(b, k, b.first, s.span)?;
                    self.set(p, v);
                }
            }
            Op::Loop(ps, init, form, b, moves) => {
                let (rule, word) = match form {
                    LoopC::For(..) => ("E-LOOP-FOR", "for"),
                    LoopC::While(_) => ("E-LOOP-WHILE", "while"),
                };
                self.e_loop(s, ps, init, moves, *form, b)
                    .map_err(|e| loop_out_of_fuel(e, rule, word, s.span))?
            }
            Op::Update(x, is, v, last) => self.e_update(s, *x, is, *v, *last)?,
            Op::Concat(x, y) => self.e_concat(s, *x, *y)?,
            Op::Replicate(n, v) => self.e_replicate(s, *n, *v)?,
            Op::Reduce(op, ne, xs, t) => self.e_reduce(s, op, *ne, *xs, *t)?,
            Op::Scan(op, ne, xs, t) => self.e_scan(s, op, *ne, *xs, *t)?,
            Op::Kernel(i, n, b) => self.e_kernel(s, *i, *n, b)?,
            Op::Iota(n) => {
                self.obs.rule("E-IOTA", s.span);
                let n = atom(&self.frame, *n, "E-IOTA", s.span)?;
                if n < 0 {
                    return Err(EvalError::stuck(
                        "E-IOTA",
                        s.span,
                        format!("iota of negative size {n}"),
                    ));
                }
                let mut data = self.allocate(n as u64, "E-IOTA", s.span)?;
                data.extend(0..n);
                self.set(&s.pats[0], V::Arr(Arr::row_major(data, &[n], Prim::I64)));
            }
            Op::Copy(x) => {
                self.obs.rule("E-COPY", s.span);
                let a = self.arr(*x, "E-COPY", s.span)?;
                let shape = a.shape();
                let size = u64::try_from(a.lmad.size()).unwrap_or(0);
                let a = a.clone();
                let mut data = self.allocate(size, "E-COPY", s.span)?;
                a.flatten_checked(&mut data, "E-COPY", s.span)?;
                self.set(&s.pats[0], V::Arr(Arr::row_major(data, &shape, a.elem)));
            }
        }
        Ok(())
    }

    /// E-INDEX: `index(E(x), E(y1), ..., E(yn))`, each index within its dimension.
    fn e_index(&mut self, s: &Stm, x: Slot, idx: &[AtomC]) -> Result<(), EvalError> {
        self.obs.rule("E-INDEX", s.span);
        let mut is = [0i64; 8];
        let mut many = Vec::new();
        let is: &mut [i64] = if idx.len() <= 8 {
            &mut is[..idx.len()]
        } else {
            many.resize(idx.len(), 0);
            &mut many
        };
        for (k, a) in idx.iter().enumerate() {
            is[k] = atom(&self.frame, *a, "E-INDEX", s.span)?;
        }
        let a = self.arr(x, "E-INDEX", s.span)?;
        check_index("E-INDEX", s, &a.lmad, is)?;
        if is.len() < a.lmad.rank() {
            // Partial indexing: the row, a view of the same buffer
            // (observably the copy E-INDEX gives, as arrays are values).
            let mut l = a.lmad.clone();
            for k in is.iter() {
                l = l.index(k);
            }
            let v = V::Arr(a.view(l));
            self.set(&s.pats[0], v);
            return Ok(());
        }
        let addr = a.lmad.apply(is);
        let v = usize::try_from(addr)
            .ok()
            .and_then(|k| a.buf.get(k))
            .copied();
        let v = v.ok_or_else(|| {
            EvalError::stuck(
                "E-INDEX",
                s.span,
                format!("address {addr} is out of bounds of the array's buffer"),
            )
        })?;
        self.set(&s.pats[0], V::Int(v));
        Ok(())
    }

    /// E-SLICE: `slice(E(x), o1 : n1, ...)`, each slice within its dimension.
    fn e_slice(&mut self, s: &Stm, x: Slot, sl: &[(AtomC, AtomC)]) -> Result<(), EvalError> {
        self.obs.rule("E-SLICE", s.span);
        let pairs: Vec<(i64, i64)> = sl
            .iter()
            .map(|(o, n)| {
                Ok((
                    atom(&self.frame, *o, "E-SLICE", s.span)?,
                    atom(&self.frame, *n, "E-SLICE", s.span)?,
                ))
            })
            .collect::<Result<_, EvalError>>()?;
        let a = self.arr(x, "E-SLICE", s.span)?;
        check_slice("E-SLICE", s, &a.lmad, &pairs)?;
        let v = V::Arr(a.view(a.lmad.slice(&pairs)));
        self.set(&s.pats[0], v);
        Ok(())
    }

    /// E-KERNEL: iterations 0 .. n-1 of the body, each giving one element
    /// of each result array (row i of result k is the body's k-th value).
    fn e_kernel(&mut self, s: &Stm, i: Slot, n: AtomC, b: &Block) -> Result<(), EvalError> {
        self.obs.rule("E-KERNEL", s.span);
        let n = atom(&self.frame, n, "E-KERNEL", s.span)?;
        let mut outs = Vec::with_capacity(s.pats.len());
        for (p, &res) in s.pats.iter().zip(&b.result) {
            let TyC::Array {
                shape, elem: prim, ..
            } = &p.ty
            else {
                return Err(EvalError::stuck(
                    "E-KERNEL",
                    s.span,
                    "a kernel's result must be an array",
                ));
            };
            let shape: Vec<i64> = shape
                .iter()
                .map(|a| atom(&self.frame, *a, "E-KERNEL", s.span))
                .collect::<Result<_, _>>()?;
            if n < 0 {
                return Err(EvalError::stuck(
                    "E-KERNEL",
                    s.span,
                    format!("kernel of negative size {n}"),
                ));
            }
            let inner = shape[1..].to_vec();
            let elem: i64 = inner
                .iter()
                .try_fold(
                    1i64,
                    |acc, &d| if d < 0 { None } else { acc.checked_mul(d) },
                )
                .ok_or_else(|| {
                    EvalError::stuck(
                        "E-KERNEL",
                        s.span,
                        format!("invalid result shape {}", dims(&shape)),
                    )
                })?;
            let total = elem
                .checked_mul(n)
                .ok_or_else(|| EvalError::stuck("E-KERNEL", s.span, "result too large"))?;
            let (total, elem) = (total as u64, elem as u64);
            let out = self.allocate_upto(total, 1 << 20, "E-KERNEL", s.span)?;
            outs.push(KernelOut {
                out,
                elem,
                total,
                inner,
                res,
                prim: *prim,
            });
        }
        for k in 0..n {
            if let Some(slot) = self.frame.get_mut(i as usize) {
                *slot = V::Int(k);
            }
            self.fuel.burn("E-KERNEL", s.span)?;
            self.obs.iteration_start(s.span, k);
            self.enter(i, &Const::I64(k));
            self.block(b)?;
            for o in &mut outs {
                grow(&mut o.out, o.elem, o.total, s.span)?;
                match get(&self.frame, o.res, s.span)? {
                    V::Int(v) if o.inner.is_empty() => o.out.push(*v),
                    V::Arr(a)
                        if a.lmad
                            .dims
                            .iter()
                            .map(|d| d.elems)
                            .eq(o.inner.iter().copied()) =>
                    {
                        a.flatten_checked(&mut o.out, "E-KERNEL", s.span)?
                    }
                    v => {
                        let found = v.to_value(o.prim).type_name();
                        return Err(EvalError::stuck(
                            "E-KERNEL",
                            s.span,
                            format!(
                                "iteration {k} returned {found}, but each iteration must give {}{}",
                                dims(&o.inner),
                                o.prim
                            ),
                        ));
                    }
                }
            }
            self.obs.iteration_end(s.span, k);
        }
        for (p, o) in s.pats.iter().zip(outs) {
            let mut full = vec![n];
            full.extend_from_slice(&o.inner);
            self.set(p, V::Arr(Arr::row_major(o.out, &full, o.prim)));
        }
        Ok(())
    }

    /// Result `k` of a block that is done: moved out of the frame when it
    /// is the block's own (see [`Block::movable`]), else shared.
    #[inline]
    fn take_result(
        &mut self,
        b: &Block,
        k: usize,
        local: Slot,
        span: Span,
    ) -> Result<V, EvalError> {
        let r = b.result[k];
        get(&self.frame, r, span)?;
        Ok(if b.movable(k, local) {
            std::mem::replace(&mut self.frame[r as usize], V::Unset)
        } else {
            self.frame[r as usize].clone()
        })
    }

    /// E-LOOP-FOR / E-LOOP-WHILE: the parameters start as the initial
    /// values; each iteration (one unit of fuel) runs the body and binds
    /// the parameters to its results; the pattern binds their final values.
    /// A `for` runs for i = 0 .. n-1 (n read once; none when n <= 0); a
    /// `while` runs while its parameter is non-zero, tested before each
    /// iteration. The parameters' and the index's bindings are not
    /// observed (like a kernel's index): only the body's statements and,
    /// once, the pattern are.
    #[inline(never)]
    fn e_loop(
        &mut self,
        s: &Stm,
        ps: &[PatC],
        init: &[AtomC],
        moves: &[bool],
        form: LoopC,
        b: &Block,
    ) -> Result<(), EvalError> {
        let rule = match form {
            LoopC::For(..) => "E-LOOP-FOR",
            LoopC::While(_) => "E-LOOP-WHILE",
        };
        self.obs.rule(rule, s.span);
        let n = loop_bound(&self.frame, form, rule, s.span)?;
        let mut vals = Vec::with_capacity(ps.len());
        // An initial value's last use moves it (see `Op::Update`).
        for (a, &last) in init.iter().zip(moves) {
            vals.push(match *a {
                AtomC::Const(k) => V::Int(k),
                AtomC::Slot(k) if last => {
                    get(&self.frame, k, s.span)?;
                    std::mem::replace(&mut self.frame[k as usize], V::Unset)
                }
                AtomC::Slot(k) => get(&self.frame, k, s.span)?.clone(),
            });
        }
        for (p, v) in ps.iter().zip(vals.drain(..)) {
            self.frame[p.slot as usize] = v;
        }
        // The parameters are the body's own too: they move around freely.
        let local = ps.first().map_or(b.first, |p| p.slot);
        let mut k = 0i64;
        while loop_enters(&mut self.frame, form, k, n, rule, s.span)? {
            self.fuel.burn(rule, s.span)?;
            self.obs.loop_iteration(s.span, k);
            if let LoopC::For(i, _) = form {
                self.enter(i, &Const::I64(k));
            }
            for p in ps {
                if let Some(v) = self.frame.get(p.slot as usize) {
                    self.obs.enter(&p.name, &Typed(v, ty_prim(&p.ty)));
                }
            }
            self.block(b)?;
            for j in 0..b.result.len() {
                let v = self.take_result(b, j, local, s.span)?;
                vals.push(v);
            }
            for (p, v) in ps.iter().zip(vals.drain(..)) {
                self.frame[p.slot as usize] = v;
            }
            k = k.wrapping_add(1);
        }
        for (q, p) in s.pats.iter().zip(ps) {
            let v = std::mem::replace(&mut self.frame[p.slot as usize], V::Unset);
            self.set(q, v);
        }
        Ok(())
    }

    /// E-UPDATE: `x with [idx, ...] = v`, x with the element or sub-array
    /// at the indices replaced by v. When this is x's last use (which the
    /// type checker's uniqueness rules make every update), its value moves
    /// out of the frame, and when its buffer is its own the elements are
    /// written in place: O(size of v), not O(size of x). A shared buffer
    /// (an array bound elsewhere too, or a view of one) is first copied,
    /// charged to the heap like `copy`.
    #[inline(never)]
    fn e_update(
        &mut self,
        s: &Stm,
        x: Slot,
        is: &[UpdC],
        v: AtomC,
        last: bool,
    ) -> Result<(), EvalError> {
        const RULE: &str = "E-UPDATE";
        self.obs.rule(RULE, s.span);
        let a = self.arr(x, RULE, s.span)?;
        let target = update_target(RULE, s, &a.lmad, is, &self.frame)?;
        // v's elements, all read before anything is written.
        let mut scalar = None;
        let mut vals = Vec::new();
        match v {
            AtomC::Const(k) => scalar = Some(k),
            AtomC::Slot(k) => match get(&self.frame, k, s.span)? {
                V::Int(k) => scalar = Some(*k),
                V::Arr(b) => {
                    if b.shape() != target.shape() {
                        return Err(update_shape(RULE, s, &b.shape(), &target.shape()));
                    }
                    let b = b.clone();
                    b.flatten_checked(&mut vals, RULE, s.span)?;
                }
                V::Unset => {}
            },
        }
        if scalar.is_some() && target.rank() != 0 {
            return Err(update_shape(RULE, s, &[], &target.shape()));
        }
        let taken = if last {
            std::mem::replace(&mut self.frame[x as usize], V::Unset)
        } else {
            self.frame[x as usize].clone()
        };
        let V::Arr(mut a) = taken else {
            return Err(EvalError::stuck(RULE, s.span, "expected an array"));
        };
        let target = if Rc::get_mut(&mut a.buf).is_some() {
            target
        } else {
            let shape = a.shape();
            let size = u64::try_from(a.lmad.size()).unwrap_or(0);
            let mut data = self.allocate(size, RULE, s.span)?;
            a.flatten_checked(&mut data, RULE, s.span)?;
            a = Arr::row_major(data, &shape, a.elem);
            update_target(RULE, s, &a.lmad, is, &self.frame)?
        };
        let len = a.buf.len();
        let buf = Rc::get_mut(&mut a.buf).ok_or_else(|| {
            EvalError::stuck(RULE, s.span, "the updated array's buffer is shared")
        })?;
        let outside = |at: i64| {
            EvalError::stuck(
                RULE,
                s.span,
                format!("the update reaches position {at}, outside the array's buffer of {len} elements (a fault of the index-function arithmetic)"),
            )
        };
        if let Some(k) = scalar {
            let at = target.offset;
            *usize::try_from(at)
                .ok()
                .and_then(|i| buf.get_mut(i))
                .ok_or_else(|| outside(at))? = k;
        } else {
            let mut next = vals.iter();
            target.for_each_address(|at| {
                let cell = usize::try_from(at)
                    .ok()
                    .and_then(|i| buf.get_mut(i))
                    .ok_or_else(|| outside(at))?;
                *cell = next.next().copied().unwrap_or(0);
                Ok(())
            })?;
        }
        self.set(&s.pats[0], V::Arr(a));
        Ok(())
    }

    /// E-CONCAT: x's rows, then y's, in a fresh row-major array.
    #[inline(never)]
    fn e_concat(&mut self, s: &Stm, x: Slot, y: Slot) -> Result<(), EvalError> {
        const RULE: &str = "E-CONCAT";
        self.obs.rule(RULE, s.span);
        let a = self.arr(x, RULE, s.span)?.clone();
        let b = self.arr(y, RULE, s.span)?.clone();
        let shape = concat_shape(RULE, s, &a.shape(), &b.shape())?;
        let size = a.lmad.size().saturating_add(b.lmad.size());
        let mut data = self.allocate(u64::try_from(size).unwrap_or(0), RULE, s.span)?;
        a.flatten_checked(&mut data, RULE, s.span)?;
        b.flatten_checked(&mut data, RULE, s.span)?;
        self.set(&s.pats[0], V::Arr(Arr::row_major(data, &shape, a.elem)));
        Ok(())
    }

    /// E-REPLICATE: n copies of v (an integer or an array) in a fresh
    /// row-major array of shape `[n]` followed by v's; n < 0 is stuck.
    #[inline(never)]
    fn e_replicate(&mut self, s: &Stm, n: AtomC, v: AtomC) -> Result<(), EvalError> {
        const RULE: &str = "E-REPLICATE";
        self.obs.rule(RULE, s.span);
        let n = atom(&self.frame, n, RULE, s.span)?;
        if n < 0 {
            return Err(EvalError::stuck(
                RULE,
                s.span,
                format!("replicate of negative count {n}"),
            ));
        }
        let mut row = Vec::new();
        let mut shape = vec![n];
        match v {
            AtomC::Const(k) => row.push(k),
            AtomC::Slot(k) => match get(&self.frame, k, s.span)? {
                V::Int(k) => row.push(*k),
                V::Arr(a) => {
                    shape.extend(a.shape());
                    let a = a.clone();
                    a.flatten_checked(&mut row, RULE, s.span)?;
                }
                V::Unset => {}
            },
        }
        let total = (row.len() as u64)
            .checked_mul(n as u64)
            .ok_or_else(|| EvalError::stuck(RULE, s.span, "result too large"))?;
        let mut data = self.allocate(total, RULE, s.span)?;
        // (n copies of an empty row are nothing, however large n is.)
        if !row.is_empty() {
            for _ in 0..n {
                data.extend_from_slice(&row);
            }
        }
        let elem = match &s.pats[0].ty {
            TyC::Array { elem, .. } => *elem,
            _ => Prim::I64,
        };
        self.set(&s.pats[0], V::Arr(Arr::row_major(data, &shape, elem)));
        Ok(())
    }

    /// `x op y` of a reduction's operator on words: a built-in operator,
    /// or the lambda's body with its parameters bound to x and y (a stuck
    /// body is stuck in `rule`).
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
                self.frame[*a as usize] = V::Int(x);
                self.frame[*c as usize] = V::Int(y);
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

    /// The words of a 1-D array operand of a reduce or scan.
    fn elements(&self, xs: Slot, rule: &'static str, span: Span) -> Result<Vec<i64>, EvalError> {
        let a = self.arr(xs, rule, span)?;
        if a.lmad.rank() != 1 {
            return Err(EvalError::stuck(
                rule,
                span,
                format!("{rule} of an array of rank {}", a.lmad.rank()),
            ));
        }
        let mut v = Vec::new();
        a.flatten_checked(&mut v, rule, span)?;
        Ok(v)
    }

    /// E-REDUCE: ((ne op xs[0]) op xs[1]) ... op xs[n-1], a left fold;
    /// each element costs one unit of fuel.
    #[inline(never)]
    fn e_reduce(
        &mut self,
        s: &Stm,
        op: &RedC,
        ne: AtomC,
        xs: Slot,
        t: Prim,
    ) -> Result<(), EvalError> {
        const RULE: &str = "E-REDUCE";
        self.obs.rule(RULE, s.span);
        let mut acc = atom(&self.frame, ne, RULE, s.span)?;
        let a = self.arr(xs, RULE, s.span)?;
        if a.lmad.rank() != 1 {
            return Err(EvalError::stuck(
                RULE,
                s.span,
                "reduce of an array that is not 1-D",
            ));
        }
        let a = a.clone();
        let mut err = None;
        let mut k = 0i64;
        let r = a.lmad.for_each_address(|at| {
            let x = match usize::try_from(at).ok().and_then(|i| a.buf.get(i)) {
                Some(&x) => x,
                None => return Err(at),
            };
            let step = self
                .fuel
                .burn(RULE, s.span)
                .and_then(|_| self.apply_op(op, acc, x, (k, t), RULE, s.span));
            k += 1;
            match step {
                Ok(v) => {
                    acc = v;
                    Ok(())
                }
                Err(e) => {
                    err = Some(e);
                    Err(at)
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if let Err(at) = r {
            return Err(outside_buffer(RULE, s.span, at, a.buf.len()));
        }
        self.set(&s.pats[0], V::Int(acc));
        Ok(())
    }

    /// E-SCAN: the inclusive prefixes [ne op xs[0], (ne op xs[0]) op
    /// xs[1], ...] in a fresh array; each element costs one unit of fuel.
    #[inline(never)]
    fn e_scan(
        &mut self,
        s: &Stm,
        op: &RedC,
        ne: AtomC,
        xs: Slot,
        t: Prim,
    ) -> Result<(), EvalError> {
        const RULE: &str = "E-SCAN";
        self.obs.rule(RULE, s.span);
        let mut acc = atom(&self.frame, ne, RULE, s.span)?;
        let xs = self.elements(xs, RULE, s.span)?;
        let mut out = self.allocate(xs.len() as u64, RULE, s.span)?;
        for (k, &x) in xs.iter().enumerate() {
            self.fuel.burn(RULE, s.span)?;
            acc = self.apply_op(op, acc, x, (k as i64, t), RULE, s.span)?;
            out.push(acc);
        }
        let n = out.len() as i64;
        self.set(&s.pats[0], V::Arr(Arr::row_major(out, &[n], t)));
        Ok(())
    }
}

/// An error in a reduction operator's body, reported as stuck in the
/// reduction's rule (E-REDUCE, E-SCAN, E-MEM-REDUCE, E-MEM-SCAN) at the
/// reduction, naming what went wrong inside; running out of fuel or heap
/// and races stay as they are.
pub(crate) fn in_operator(e: EvalError, rule: &'static str, span: Span) -> EvalError {
    match e.kind {
        crate::error::ErrorKind::Stuck => EvalError::stuck(
            rule,
            span,
            format!("the operator is stuck: {} ({})", e.message, e.rule),
        ),
        _ => e,
    }
}

/// A view reaching outside its buffer.
fn outside_buffer(rule: &'static str, span: Span, at: i64, len: usize) -> EvalError {
    EvalError::stuck(
        rule,
        span,
        format!("an array view reaches position {at}, outside its buffer of {len} elements (a fault of the index-function arithmetic)"),
    )
}

/// One result array of a kernel being built.
struct KernelOut {
    out: Vec<i64>,
    elem: u64,
    total: u64,
    inner: Vec<i64>,
    res: Slot,
    prim: Prim,
}

/// The LMAD of the part of an array (with LMAD `l`) that an update's
/// indices select, and its shape; out-of-bounds indices are stuck in
/// `rule` (E-UPDATE, E-MEM-UPDATE), naming the index and the dimension.
pub(crate) fn update_target<V: SlotValue>(
    rule: &'static str,
    s: &Stm,
    l: &Lmad<i64>,
    is: &[UpdC],
    frame: &[V],
) -> Result<Lmad<i64>, EvalError> {
    if is.len() > l.rank() {
        return Err(EvalError::stuck(rule, s.span, "too many indices"));
    }
    let mut offset = l.offset;
    let mut kept = Vec::new();
    for (d, (i, dim)) in is.iter().zip(&l.dims).enumerate() {
        match *i {
            UpdC::Elem(j) => {
                let j = atom(frame, j, rule, s.span)?;
                if j < 0 || j >= dim.elems {
                    return Err(EvalError::stuck(
                        rule,
                        s.span,
                        format!(
                            "index {j} is out of bounds for dimension {d} of `{}`, of size {}",
                            operand(s),
                            dim.elems
                        ),
                    ));
                }
                offset = offset.wrapping_add(j.wrapping_mul(dim.stride));
            }
            UpdC::Range(o, n) => {
                let o = atom(frame, o, rule, s.span)?;
                let n = atom(frame, n, rule, s.span)?;
                let ok = o >= 0 && n >= 0 && o.checked_add(n).is_some_and(|e| e <= dim.elems);
                if !ok {
                    return Err(EvalError::stuck(
                        rule,
                        s.span,
                        format!(
                            "range {o}:{n} is out of bounds for dimension {d} of `{}`, of size {}",
                            operand(s),
                            dim.elems
                        ),
                    ));
                }
                offset = offset.wrapping_add(o.wrapping_mul(dim.stride));
                kept.push(funmem_lang::lmad::Dim {
                    elems: n,
                    stride: dim.stride,
                });
            }
        }
    }
    kept.extend_from_slice(&l.dims[is.len()..]);
    Ok(Lmad { offset, dims: kept })
}

/// The error of an update whose new value does not have the shape the
/// indices leave.
pub(crate) fn update_shape(rule: &'static str, s: &Stm, got: &[i64], want: &[i64]) -> EvalError {
    let name = |sh: &[i64]| {
        if sh.is_empty() {
            "an integer".to_string()
        } else {
            format!("an array of shape {}", dims(sh))
        }
    };
    EvalError::stuck(
        rule,
        s.span,
        format!(
            "the new value is {}, but the indices select {} of `{}`",
            name(got),
            name(want),
            operand(s)
        ),
    )
}

/// The shape of `concat` of arrays of shapes `a` and `b`: equal ranks and
/// inner sizes, outer sizes added.
pub(crate) fn concat_shape(
    rule: &'static str,
    s: &Stm,
    a: &[i64],
    b: &[i64],
) -> Result<Vec<i64>, EvalError> {
    if a.is_empty() || a.len() != b.len() || a[1..] != b[1..] {
        return Err(EvalError::stuck(
            rule,
            s.span,
            format!(
                "concat of arrays of shapes {} and {}, which differ in an inner dimension",
                dims(a),
                dims(b)
            ),
        ));
    }
    let outer = a[0]
        .checked_add(b[0])
        .ok_or_else(|| EvalError::stuck(rule, s.span, "result too large"))?;
    let mut shape = vec![outer];
    shape.extend_from_slice(&a[1..]);
    Ok(shape)
}

/// Makes room in a kernel's result `out` for one more iteration's `elem`
/// cells, doubling it up to its `total`, fallibly.
fn grow(out: &mut Vec<i64>, elem: u64, total: u64, span: Span) -> Result<(), EvalError> {
    let len = out.len() as u64;
    if (out.capacity() as u64).saturating_sub(len) >= elem {
        return Ok(());
    }
    let more = len.max(elem).min(total.saturating_sub(len)).max(elem);
    machine::reserve(out, more, "E-KERNEL", span)
}

/// Checks that indices name an element of an array with this LMAD.
pub(crate) fn check_index(
    rule: &'static str,
    s: &Stm,
    l: &Lmad<i64>,
    is: &[i64],
) -> Result<(), EvalError> {
    // Fewer indices than the rank is partial indexing.
    if is.is_empty() || is.len() > l.rank() {
        return Err(EvalError::stuck(rule, s.span, "wrong number of indices"));
    }
    for (d, (&k, dim)) in is.iter().zip(&l.dims).enumerate() {
        if k < 0 || k >= dim.elems {
            return Err(EvalError::stuck(
                rule,
                s.span,
                format!(
                    "index {k} is out of bounds for dimension {d} of `{}`, of size {}",
                    operand(s),
                    dim.elems
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `o : n` pairs select a part of an array with this LMAD.
pub(crate) fn check_slice(
    rule: &'static str,
    s: &Stm,
    l: &Lmad<i64>,
    pairs: &[(i64, i64)],
) -> Result<(), EvalError> {
    if pairs.len() != l.rank() {
        return Err(EvalError::stuck(
            rule,
            s.span,
            "wrong number of slice pairs",
        ));
    }
    for (d, (&(o, n), dim)) in pairs.iter().zip(&l.dims).enumerate() {
        let ok = o >= 0 && n >= 0 && o.checked_add(n).is_some_and(|e| e <= dim.elems);
        if !ok {
            return Err(EvalError::stuck(
                rule,
                s.span,
                format!(
                    "slice {o}:{n} is out of bounds for dimension {d} of `{}`, of size {}",
                    operand(s),
                    dim.elems
                ),
            ));
        }
    }
    Ok(())
}

pub(crate) fn operand(s: &Stm) -> &str {
    s.operand.as_ref().map_or("?", |n| n.as_str())
}

pub(crate) fn dims(shape: &[i64]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

pub(crate) fn ty_name(t: &TyC) -> String {
    match t {
        TyC::Prim(p) => p.to_string(),
        TyC::Mem => "mem".into(),
        TyC::Array { shape, elem, .. } => {
            format!("an array of {elem} of rank {}", shape.len())
        }
    }
}

/// The scalar type of a binder (an array's element type).
pub(crate) fn ty_prim(t: &TyC) -> Prim {
    match t {
        TyC::Prim(p) | TyC::Array { elem: p, .. } => *p,
        TyC::Mem => Prim::I64,
    }
}

impl SlotValue for V {
    fn is_unset(&self) -> bool {
        matches!(self, V::Unset)
    }
    #[inline]
    fn as_int(&self) -> Option<i64> {
        match self {
            V::Int(k) => Some(*k),
            _ => None,
        }
    }
    fn from_int(k: i64) -> V {
        V::Int(k)
    }

    fn describe(&self) -> String {
        match self {
            V::Unset => "nothing".into(),
            V::Int(k) => format!("the integer {k}"),
            V::Arr(a) => format!("an array of shape {}", dims(&a.shape())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::observer::NoObserver;
    use funmem_lang::check::check_program;
    use funmem_lang::parse::parse_program;
    use funmem_lang::Name;

    fn run(src: &str, inputs: &[Value]) -> Result<Vec<Value>, EvalError> {
        let p = parse_program(src, Lang::Fun).unwrap_or_else(|d| panic!("{d}\n{src}"));
        check_program(&p).unwrap_or_else(|d| panic!("{d}\n{src}"));
        run_value(&p, inputs, Limits::default(), &mut NoObserver)
    }

    fn vector(xs: &[i64]) -> Value {
        Value::Array(crate::value::ArrayValue::vector(xs.to_vec()))
    }

    fn text(vs: &[Value]) -> Vec<String> {
        vs.iter().map(Value::to_string).collect()
    }

    #[test]
    fn for_loop_sums_and_skips_when_the_bound_is_not_positive() {
        let src = "def main (n: int) =
  let (s: int) = loop (acc: int) = (0) for i < n do
    let (a: int) = acc + i
    in (a)
  in (s)";
        assert_eq!(
            text(&run(src, &[Value::Scalar(Const::I64(5))]).unwrap()),
            ["10i64"]
        );
        assert_eq!(
            text(&run(src, &[Value::Scalar(Const::I64(-3))]).unwrap()),
            ["0i64"]
        );
    }

    #[test]
    fn while_loop_tests_its_parameter_before_each_iteration() {
        let src = "def main (n: int) =
  let (c: int) (s: int) = loop (k: int) (t: int) = (n, 1) while k do
    let (k2: int) = k - 1
    let (t2: int) = t * 2
    in (k2, t2)
  in (c, s)";
        assert_eq!(
            text(&run(src, &[Value::Scalar(Const::I64(3))]).unwrap()),
            ["0i64", "8i64"]
        );
        assert_eq!(
            text(&run(src, &[Value::Scalar(Const::I64(0))]).unwrap()),
            ["0i64", "1i64"]
        );
    }

    #[test]
    fn a_while_that_never_ends_is_out_of_fuel_at_the_loop() {
        let src = "def main (n: int) =
  let (c: int) = loop (k: int) = (n) while k do
    let (k2: int) = k + 1
    in (k2)
  in (c)";
        let p = parse_program(src, Lang::Fun).unwrap();
        let limits = Limits {
            fuel: 1000,
            ..Limits::default()
        };
        let e =
            run_value(&p, &[Value::Scalar(Const::I64(1))], limits, &mut NoObserver).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfFuel);
        assert_eq!(e.rule, "E-LOOP-WHILE");
        assert!(
            e.message.starts_with("the `while` loop did not finish"),
            "{e}"
        );
        assert_eq!(&src[e.span.start..e.span.start + 5], "let (");
    }

    #[test]
    fn updates_of_elements_rows_and_ranges() {
        let src = "def main (xs: *[2][3]int) (j: int) =
  let (a: [2][3]int) = xs with [1, 2] = 9
  let (r: [3]int) = replicate 3 j
  let (b: [2][3]int) = a with [0] = r
  let (z: [2]int) = replicate 2 5
  let (c: [2][3]int) = b with [1, 0 : 2] = z
  in (c)";
        let xs = Value::Array(crate::value::ArrayValue {
            shape: vec![2, 3],
            data: crate::value::Elems::I64(vec![1, 2, 3, 4, 5, 6]),
        });
        assert_eq!(
            text(&run(src, &[xs, Value::Scalar(Const::I64(7))]).unwrap()),
            ["[[7i64, 7i64, 7i64], [5i64, 5i64, 9i64]]"]
        );
    }

    #[test]
    fn update_out_of_bounds_is_stuck_naming_index_and_dimension() {
        let src = "def main (xs: *[2][3]int) (j: int) =
  let (a: [2][3]int) = xs with [1, j] = 9
  in (a)";
        let xs = Value::Array(crate::value::ArrayValue {
            shape: vec![2, 3],
            data: crate::value::Elems::I64(vec![0; 6]),
        });
        let e = run(src, &[xs, Value::Scalar(Const::I64(3))]).unwrap_err();
        assert_eq!(e.rule, "E-UPDATE");
        assert_eq!(
            e.message,
            "index 3 is out of bounds for dimension 1 of `xs`, of size 3"
        );
    }

    #[test]
    fn update_of_a_view_writes_a_copy_in_the_view_order() {
        // A transposed view shares its buffer: the update copies it first.
        let src = "def main (xs: *[2][2]int) =
  let (t: [2][2]int) = transpose xs
  let (u: [2][2]int) = t with [0, 1] = 9
  in (u)";
        let xs = Value::Array(crate::value::ArrayValue {
            shape: vec![2, 2],
            data: crate::value::Elems::I64(vec![1, 2, 3, 4]),
        });
        assert_eq!(
            text(&run(src, &[xs]).unwrap()),
            ["[[1i64, 9i64], [2i64, 4i64]]"]
        );
    }

    /// Counts allocated cells.
    #[derive(Default)]
    struct Cells(u64, Vec<Name>);

    impl Observer for Cells {
        fn alloc(&mut self, _: usize, cells: u64, _: u64) {
            self.0 += cells;
        }
        fn bind(&mut self, name: &Name, _: &dyn fmt::Display) {
            self.1.push(name.clone());
        }
    }

    #[test]
    fn updates_in_a_loop_copy_nothing() {
        // 1000 updates of a 1000-element array allocate nothing: the input
        // moves into the loop (its last use), the loop parameter into each
        // update.
        let src = "def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = loop (acc: [n]int) = (xs) for i < n do
    let (acc2: [n]int) = acc with [i] = i
    in (acc2)
  in (ys)";
        let p = parse_program(src, Lang::Fun).unwrap();
        let mut obs = Cells::default();
        let r = run_value(
            &p,
            &[Value::Scalar(Const::I64(1000)), vector(&[0; 1000])],
            Limits::default(),
            &mut obs,
        )
        .unwrap();
        assert_eq!(r[0], vector(&(0..1000).collect::<Vec<_>>()));
        assert_eq!(obs.0, 1000, "only the input is allocated");
        // Bindings observed: the parameters, each iteration's statement,
        // then the pattern once; never the loop parameter.
        let names: Vec<&str> = obs.1.iter().map(|x| x.as_str()).collect();
        assert_eq!(names.len(), 1003);
        assert_eq!(names[..2], ["n", "xs"]);
        assert!(names[2..1002].iter().all(|x| *x == "acc2"));
        assert_eq!(names[1002], "ys");
    }

    #[test]
    fn an_update_that_is_not_the_last_use_leaves_the_array_as_it_was() {
        // Not a uniqueness-respecting program (the type checker refuses
        // it), but the value semantics still means values: `a` keeps its
        // elements. And a huge replicate of nothing is nothing.
        let src = "def main (n: int) =
  let (a: [n]int) = iota n
  let (b: [n]int) = a with [0] = 7
  in (a, b)";
        let p = parse_program(src, Lang::Fun).unwrap();
        let r = run_value(
            &p,
            &[Value::Scalar(Const::I64(3))],
            Limits::default(),
            &mut NoObserver,
        )
        .unwrap();
        assert_eq!(text(&r), ["[0i64, 1i64, 2i64]", "[7i64, 1i64, 2i64]"]);
        let src = "def main (n: int) =
  let (e: [0]int) = iota 0
  let (big: [n][0]int) = replicate n e
  in (n)";
        let r = run(src, &[Value::Scalar(Const::I64(1 << 62))]).unwrap();
        assert_eq!(text(&r), [(1i64 << 62).to_string() + "i64"]);
    }

    #[test]
    fn nested_loops_of_updates_copy_nothing() {
        // The inner loop starts from the outer parameter's last use, and
        // the outer from the input's: no copy at all, in either loop.
        let src = "def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = loop (acc: [n]int) = (xs) for j < n do
    let (zs: [n]int) = loop (bcc: [n]int) = (acc) for i < n do
      let (x: int) = bcc[i]
      let (y: int) = x + 1
      let (bcc2: [n]int) = bcc with [i] = y
      in (bcc2)
    in (zs)
  in (ys)";
        let p = parse_program(src, Lang::Fun).unwrap();
        let mut obs = Cells::default();
        let r = run_value(
            &p,
            &[Value::Scalar(Const::I64(300)), vector(&[5; 300])],
            Limits::default(),
            &mut obs,
        )
        .unwrap();
        assert_eq!(r[0], vector(&[305; 300]));
        assert_eq!(obs.0, 300, "only the input is allocated");
    }

    #[test]
    fn concat_and_replicate() {
        let src = "def main (n: int) (m: int) =
  let (a: [n]int) = iota n
  let (b: [m]int) = replicate m 4
  let (k: int) = n + m
  let (c: [k]int) = concat a b
  let (d: [2][k]int) = replicate 2 c
  in (c, d)";
        assert_eq!(
            text(
                &run(
                    src,
                    &[Value::Scalar(Const::I64(2)), Value::Scalar(Const::I64(1))]
                )
                .unwrap()
            ),
            [
                "[0i64, 1i64, 4i64]",
                "[[0i64, 1i64, 4i64], [0i64, 1i64, 4i64]]"
            ]
        );
        let e = run(
            src,
            &[Value::Scalar(Const::I64(2)), Value::Scalar(Const::I64(-1))],
        )
        .unwrap_err();
        assert_eq!(e.rule, "E-REPLICATE");
        assert_eq!(e.message, "replicate of negative count -1");
    }

    #[test]
    fn kernel_with_three_results_of_different_shapes() {
        let src = "def main (n: int) =
  let (a: [n]int) (b: [n][2]int) (c: [n]int) = kernel i < n do
    let (x: int) = i * 3
    let (r: [2]int) = replicate 2 i
    in (x, r, i)
  in (a, b, c)";
        assert_eq!(
            text(&run(src, &[Value::Scalar(Const::I64(2))]).unwrap()),
            [
                "[0i64, 3i64]",
                "[[0i64, 0i64], [1i64, 1i64]]",
                "[0i64, 1i64]"
            ]
        );
    }
}
