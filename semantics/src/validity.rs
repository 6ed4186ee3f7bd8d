//! Validity (IFL 2022 paper, Def. 3.1): a FUNMEM program is valid on an
//! input when its heap semantics (fig. 10) gives, without a race and
//! without getting stuck, the results its value semantics (`unmem`, then
//! fig. 4) gives. Results are compared as values: a heap result is read
//! back through its LMAD, which for row-major results is Def. 3.1's
//! `nest(H(ℓ), shape)`.

use crate::error::{EvalError, Limits};
use crate::fun::run_value;
use crate::heap::run_heap;
use crate::observer::NoObserver;
use crate::value::Value;
use funmem_lang::ast::Program;
use std::fmt;

/// The outcome of a validity check.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Both semantics give these results.
    Valid(Vec<Value>),
    /// Both semantics run, but give different results.
    Invalid(Difference),
    /// The heap semantics races or gets stuck.
    HeapError(EvalError),
    /// The value semantics gets stuck (so the program is not valid either;
    /// the heap semantics' outcome is irrelevant).
    ValueError(EvalError),
}

/// The first place where two result lists differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// Which result (0-based, counting non-`mem` results).
    pub result: usize,
    /// The index of the first differing element, when both are arrays of
    /// one shape.
    pub index: Option<Vec<usize>>,
    /// What the checked side gave there.
    pub got: String,
    /// What the reference gave there.
    pub expected: String,
}

impl Difference {
    /// The difference in words, naming the two sides.
    pub fn describe(&self, got: &str, expected: &str) -> String {
        let place = match &self.index {
            Some(ix) => {
                let ix: Vec<String> = ix.iter().map(usize::to_string).collect();
                format!("result {} differs at [{}]", self.result, ix.join(", "))
            }
            None => format!("result {} differs", self.result),
        };
        format!(
            "{place}: {got} gives {}, {expected} gives {}",
            self.got, self.expected
        )
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe("the heap semantics", "the value semantics"))
    }
}

/// The first difference between two result lists, if any: `got` is
/// checked against the reference `expected`.
pub fn first_difference(got: &[Value], expected: &[Value]) -> Option<Difference> {
    let (heap, value) = (got, expected);
    if heap.len() != value.len() {
        return Some(Difference {
            result: heap.len().min(value.len()),
            index: None,
            got: format!("{} results", heap.len()),
            expected: format!("{} results", value.len()),
        });
    }
    for (k, (h, v)) in heap.iter().zip(value).enumerate() {
        if h == v {
            continue;
        }
        if let (Value::Array(a), Value::Array(b)) = (h, v) {
            if a.shape == b.shape {
                if let Some(e) = a
                    .data
                    .iter()
                    .zip(b.data.iter())
                    .position(|(x, y)| !x.same(y))
                {
                    let mut index = vec![0; a.shape.len()];
                    let mut rest = e;
                    for (d, n) in a.shape.iter().enumerate().rev() {
                        index[d] = rest % n.max(&1);
                        rest /= n.max(&1);
                    }
                    return Some(Difference {
                        result: k,
                        index: Some(index),
                        got: a.data.get(e).to_string(),
                        expected: b.data.get(e).to_string(),
                    });
                }
            }
        }
        return Some(Difference {
            result: k,
            index: None,
            got: h.to_string(),
            expected: v.to_string(),
        });
    }
    None
}

/// Checks Def. 3.1 for one input: both semantics, race detection on.
pub fn validate(p: &Program, inputs: &[Value], limits: Limits) -> Verdict {
    let value = match run_value(p, inputs, limits, &mut NoObserver) {
        Ok(v) => v,
        Err(e) => return Verdict::ValueError(e),
    };
    let heap = match run_heap(p, inputs, limits, true, &mut NoObserver) {
        Ok(h) => h,
        Err(e) => return Verdict::HeapError(e),
    };
    match first_difference(&heap, &value) {
        None => Verdict::Valid(value),
        Some(d) => Verdict::Invalid(d),
    }
}
