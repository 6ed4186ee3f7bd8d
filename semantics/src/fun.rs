//! FUN's big-step value semantics (IFL 2022 paper, figs. 4 and 5), 0-based,
//! which through [`crate::unmem`] is also FUNMEM's value semantics.
//!
//! Values are integers and arrays. An array is a view: a shared flat buffer
//! and a concrete LMAD, so that `index`, `slice` and `tr` of fig. 5 cost
//! nothing and are exactly the LMAD operations of eqs. 1-3. Fresh arrays
//! (`kernel`, `iota`, `copy`) get a new buffer in row-major order. Each
//! function below that evaluates a form is named after its rule (`E-INDEX`,
//! `E-KERNEL`, ...), and errors name the rule whose premise failed.

use crate::code::{
    atom, get, int, resolve, AtomC, Block, Code, Op, PatC, Slot, SlotValue, Stm, TyC,
};
use crate::error::{EvalError, Fuel, Limits};
use crate::machine;
use crate::observer::Observer;
use crate::value::{ArrayValue, Value};
use funmem_lang::ast::{self, Lang, Type};
use funmem_lang::lmad::Lmad;
use funmem_lang::Span;
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
        out.push(m.result(v, p.span)?);
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
    buf: Rc<Vec<i64>>,
    lmad: Lmad<i64>,
}

impl Arr {
    fn row_major(buf: Vec<i64>, shape: &[i64]) -> Arr {
        Arr {
            buf: Rc::new(buf),
            lmad: Lmad::row_major(shape),
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

impl V {
    fn to_value(&self) -> Value {
        match self {
            V::Unset => Value::Int(0),
            V::Int(k) => Value::Int(*k),
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
                Value::Array(ArrayValue { shape, data })
            }
        }
    }
}

impl fmt::Display for V {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

struct Machine<'o, O> {
    frame: Vec<V>,
    fuel: Fuel,
    cells: u64,
    /// Cells copied to read results back.
    read_back: u64,
    limits: Limits,
    obs: &'o mut O,
}

impl<O: Observer> Machine<'_, O> {
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
        self.obs.bind(&p.name, &v);
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
        self.obs.alloc(0, cells);
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
    fn result(&mut self, v: V, span: Span) -> Result<Value, EvalError> {
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
                Ok(Value::Array(ArrayValue { shape, data }))
            }
            V::Arr(a) => {
                let size = u64::try_from(a.lmad.size()).unwrap_or(0);
                let mut data = self.copy_out(size, span)?;
                a.flatten_checked(&mut data, "E-PROG", span)?;
                let shape = a.shape_usize();
                Ok(Value::Array(ArrayValue { shape, data }))
            }
            v => Ok(v.to_value()),
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
                (TyC::Int, Some(Value::Int(v))) => self.set(p, V::Int(*v)),
                (TyC::Array { .. }, Some(Value::Array(a))) => arrays.push((p, a)),
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
            let TyC::Array { shape, .. } = &p.ty else {
                continue;
            };
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
            data.extend_from_slice(&a.data);
            self.set(p, V::Arr(Arr::row_major(data, &got)));
        }
        Ok(())
    }

    fn block(&mut self, b: &Block) -> Result<(), EvalError> {
        for s in &b.stms {
            self.stm(s)?;
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
            Op::Alloc(e) => {
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
                let v = V::Arr(Arr {
                    buf: a.buf.clone(),
                    lmad,
                });
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
                for (p, r) in s.pats.iter().zip(&b.result) {
                    let v = get(&self.frame, *r, s.span)?.clone();
                    self.set(p, v);
                }
            }
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
                self.set(&s.pats[0], V::Arr(Arr::row_major(data, &[n])));
            }
            Op::Copy(x) => {
                self.obs.rule("E-COPY", s.span);
                let a = self.arr(*x, "E-COPY", s.span)?;
                let shape = a.shape();
                let size = u64::try_from(a.lmad.size()).unwrap_or(0);
                let a = a.clone();
                let mut data = self.allocate(size, "E-COPY", s.span)?;
                a.flatten_checked(&mut data, "E-COPY", s.span)?;
                self.set(&s.pats[0], V::Arr(Arr::row_major(data, &shape)));
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
        let v = V::Arr(Arr {
            buf: a.buf.clone(),
            lmad: a.lmad.slice(&pairs),
        });
        self.set(&s.pats[0], v);
        Ok(())
    }

    /// E-KERNEL: iterations 0 .. n-1 of the body, each giving one element.
    fn e_kernel(&mut self, s: &Stm, i: Slot, n: AtomC, b: &Block) -> Result<(), EvalError> {
        self.obs.rule("E-KERNEL", s.span);
        let n = atom(&self.frame, n, "E-KERNEL", s.span)?;
        let p = &s.pats[0];
        let TyC::Array { shape, .. } = &p.ty else {
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
        let inner = &shape[1..];
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
        let mut out = self.allocate_upto(total, 1 << 20, "E-KERNEL", s.span)?;
        let res = b.result.first().copied().unwrap_or(0);
        for k in 0..n {
            if let Some(slot) = self.frame.get_mut(i as usize) {
                *slot = V::Int(k);
            }
            self.fuel.burn("E-KERNEL", s.span)?;
            self.obs.iteration_start(s.span, k);
            self.block(b)?;
            grow(&mut out, elem, total, s.span)?;
            match get(&self.frame, res, s.span)? {
                V::Int(v) if inner.is_empty() => out.push(*v),
                V::Arr(a)
                    if a.lmad
                        .dims
                        .iter()
                        .map(|d| d.elems)
                        .eq(inner.iter().copied()) =>
                {
                    a.flatten_checked(&mut out, "E-KERNEL", s.span)?
                }
                v => {
                    let found = v.to_value().type_name();
                    return Err(EvalError::stuck(
                        "E-KERNEL",
                        s.span,
                        format!(
                            "iteration {k} returned {found}, but each iteration must give {}int",
                            dims(inner)
                        ),
                    ));
                }
            }
            self.obs.iteration_end(s.span, k);
        }
        let mut full = vec![n];
        full.extend_from_slice(inner);
        self.set(p, V::Arr(Arr::row_major(out, &full)));
        Ok(())
    }
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
    if l.rank() != is.len() {
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

fn ty_name(t: &TyC) -> String {
    match t {
        TyC::Int => "int".into(),
        TyC::Mem => "mem".into(),
        TyC::Array { shape, .. } => format!("an array of rank {}", shape.len()),
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
    fn describe(&self) -> String {
        match self {
            V::Unset => "nothing".into(),
            V::Int(k) => format!("the integer {k}"),
            V::Arr(a) => format!("an array of shape {}", dims(&a.shape())),
        }
    }
}
