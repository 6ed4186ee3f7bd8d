//! E-IMP-PROG's checks on inputs and results, on evaluated shapes and
//! LMADs: shared by the IMP interpreter ([`crate::imp`]) and the OpenCL
//! host driver (funmem-gpu), so that both lay inputs out, and read results
//! back, in one way with one set of errors.

use crate::error::{ErrorKind, EvalError};
use crate::value::{ArrayValue, Elems, Value};
use funmem_lang::lmad::Lmad;
use funmem_lang::Span;

/// The rule of a program's inputs and results.
pub const PROG: &str = "E-IMP-PROG";

fn stuck(span: Span, message: String) -> EvalError {
    EvalError::stuck(PROG, span, message)
}

/// The type of an array of this shape, e.g. `[2][3]int`.
pub fn type_of_shape(shape: &[i64]) -> String {
    let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
    format!("{dims}int")
}

/// Fails when more inputs are given than the program has parameters.
pub fn check_not_too_many(want: usize, got: usize, span: Span) -> Result<(), EvalError> {
    if got > want {
        return Err(stuck(
            span,
            format!("too many inputs: the program takes {want}, but {got} were given"),
        ));
    }
    Ok(())
}

/// The input of parameter `k` (`name`, of type `expected`), or the error
/// that it has none.
pub fn input_of<'v>(
    inputs: &'v [Value],
    k: usize,
    want: usize,
    name: &str,
    expected: &str,
    span: Span,
) -> Result<&'v Value, EvalError> {
    inputs.get(k).ok_or_else(|| {
        stuck(
            span,
            format!(
                "too few inputs: parameter `{name}` ({expected}) has none; the program takes {want}, but {} were given",
                inputs.len()
            ),
        )
    })
}

/// The error for an input of the wrong type.
pub fn mismatch(name: &str, expected: &str, found: &str, span: Span) -> EvalError {
    stuck(
        span,
        format!("input for parameter `{name}` must be {expected}, but {found} was given"),
    )
}

/// An array parameter's input checked against its shape; with the cells
/// its block needs for the LMAD `l` (`None` when `l` addresses nothing).
pub fn array_input<'v>(
    v: &'v Value,
    name: &str,
    span: Span,
    shape: &[i64],
    l: &Lmad<i64>,
) -> Result<(&'v ArrayValue, Option<i64>), EvalError> {
    let expected = type_of_shape(shape);
    let Value::Array(av) = v else {
        return Err(mismatch(name, &expected, &v.type_name(), span));
    };
    let fits = av.shape.len() == shape.len()
        && av
            .shape
            .iter()
            .zip(shape)
            .all(|(&d, &s)| i64::try_from(d) == Ok(s));
    if !fits {
        return Err(mismatch(name, &expected, &v.type_name(), span));
    }
    let len = av.shape.iter().try_fold(1usize, |p, &d| p.checked_mul(d));
    if len != Some(av.data.len()) {
        let found = format!(
            "a malformed array ({} elements for {})",
            av.data.len(),
            v.type_name()
        );
        return Err(mismatch(name, &expected, &found, span));
    }
    let Some((lo, hi)) = l.min_max() else {
        return Ok((av, None));
    };
    if lo < 0 {
        return Err(stuck(
            span,
            format!("array parameter `{name}` has address {lo} in its block, below 0"),
        ));
    }
    let need = hi.checked_add(1).ok_or_else(|| {
        stuck(
            span,
            format!("array parameter `{name}` has address {hi}, too large for a block"),
        )
    })?;
    Ok((av, Some(need)))
}

/// Lays the array `av` out in `block` by its LMAD `l`.
pub fn lay_out(
    block: &mut [i64],
    av: &ArrayValue,
    l: &Lmad<i64>,
    name: &str,
    span: Span,
) -> Result<(), EvalError> {
    // A row-major layout is one straight copy.
    if let Some(at) = contiguous_at(av, l) {
        if let Some(cells) = block.get_mut(at..at.saturating_add(av.data.len())) {
            for (c, w) in cells.iter_mut().zip(av.data.words()) {
                *c = w as i64;
            }
            return Ok(());
        }
    }
    let mut data = av.data.words().map(|w| w as i64);
    l.for_each_address(|addr| {
        // Addresses are in [0, size) by construction of the block.
        if let (Ok(o), Some(x)) = (usize::try_from(addr), data.next()) {
            if let Some(cell) = block.get_mut(o) {
                *cell = x;
                return Ok(());
            }
        }
        Err(stuck(
            span,
            format!("array parameter `{name}`: address {addr} outside its block"),
        ))
    })
}

/// Where in its block the array `av` starts when the LMAD `l` lays it out
/// row-major and contiguously there; `None` for any other layout.
pub fn contiguous_at(av: &ArrayValue, l: &Lmad<i64>) -> Option<usize> {
    let shape: Vec<i64> = av
        .shape
        .iter()
        .map(|&d| i64::try_from(d))
        .collect::<Result<_, _>>()
        .ok()?;
    (l.dims == Lmad::row_major(&shape).dims)
        .then(|| usize::try_from(l.offset).ok())
        .flatten()
}

/// A result array's dimensions and number of elements: fails on a negative
/// size, or more elements than `max_heap`.
pub fn result_shape(
    name: &str,
    span: Span,
    shape: &[i64],
    max_heap: u64,
) -> Result<(Vec<usize>, usize), EvalError> {
    let dims = shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| {
            stuck(
                span,
                format!(
                    "result `{name}` has a negative size: {}",
                    type_of_shape(shape)
                ),
            )
        })?;
    let len = dims.iter().try_fold(1usize, |p, &d| p.checked_mul(d));
    match len.and_then(|n| u64::try_from(n).ok()) {
        Some(n) if n <= max_heap => Ok((dims, n as usize)),
        _ => Err(EvalError {
            kind: ErrorKind::OutOfHeap,
            rule: PROG,
            span,
            message: format!(
                "result `{name}` of type {} has more elements than the heap limit of {max_heap} cells (raise it with --max-heap CELLS)",
                type_of_shape(shape),
            ),
        }),
    }
}

/// A result array, of the dimensions and length [`result_shape`] gave,
/// read back from `block` by its LMAD `l`; `block_label` names the block in
/// errors.
pub fn read_back(
    name: &str,
    span: Span,
    (dims, len): (Vec<usize>, usize),
    l: &Lmad<i64>,
    block: &[i64],
    block_label: &str,
) -> Result<Value, EvalError> {
    // A row-major array at offset 0 is a prefix of its block.
    let shape: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    let mut data = Vec::new();
    crate::machine::reserve(&mut data, len as u64, PROG, span)?;
    if *l == Lmad::row_major(&shape) && len <= block.len() {
        data.extend_from_slice(&block[..len]);
        return Ok(Value::Array(ArrayValue {
            shape: dims,
            data: Elems::I64(data),
        }));
    }
    l.for_each_address(|addr| match usize::try_from(addr).ok().and_then(|o| block.get(o)) {
        Some(&x) => {
            data.push(x);
            Ok(())
        }
        None => Err(addr),
    })
    .map_err(|addr| {
        stuck(
            span,
            format!(
                "result `{name}`: read out of bounds: offset {addr} of {block_label}, which has size {}",
                block.len()
            ),
        )
    })?;
    Ok(Value::Array(ArrayValue {
        shape: dims,
        data: Elems::I64(data),
    }))
}
