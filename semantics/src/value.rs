//! Values as programs take and give them: integers and arrays.
//!
//! This is the interface between the interpreters and the outside world
//! (inputs, results, comparisons between semantics). An array is flat and
//! row-major with its shape, so comparing two results is comparing two
//! vectors, and nesting by a shape (fig. 5's `nest`) is free. Interpreters
//! keep their own internal representations and convert at the boundary.

use std::fmt;

/// A program's input or result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A 64-bit integer.
    Int(i64),
    /// An array of integers.
    Array(ArrayValue),
}

/// A multi-dimensional array of integers: its shape, outermost first, and
/// its elements in row-major order (`data.len()` is the product of `shape`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayValue {
    /// Size of each dimension, outermost first; never empty.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: Vec<i64>,
}

impl ArrayValue {
    /// A 1-D array.
    pub fn vector(data: Vec<i64>) -> ArrayValue {
        ArrayValue {
            shape: vec![data.len()],
            data,
        }
    }

    /// The array's rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

impl Value {
    /// A short description of the value's type, e.g. `int` or `[3][0]int`.
    pub fn type_name(&self) -> String {
        match self {
            Value::Int(_) => "int".into(),
            Value::Array(a) => {
                let dims: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
                format!("{dims}int")
            }
        }
    }
}

impl fmt::Display for Value {
    /// Futhark's textual value format, as `futhark run` prints results.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(k) => write!(f, "{k}i64"),
            Value::Array(a) => {
                if a.data.is_empty() {
                    let dims: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
                    return write!(f, "empty({dims}i64)");
                }
                write_nested(f, &a.shape, &a.data)
            }
        }
    }
}

fn write_nested(f: &mut fmt::Formatter<'_>, shape: &[usize], data: &[i64]) -> fmt::Result {
    f.write_str("[")?;
    match shape {
        [] => {}
        [_] => {
            for (k, x) in data.iter().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{x}i64")?;
            }
        }
        [n, rest @ ..] => {
            let stride: usize = rest.iter().product();
            for k in 0..*n {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write_nested(f, rest, &data[k * stride..(k + 1) * stride])?;
            }
        }
    }
    f.write_str("]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_futhark_run() {
        assert_eq!(Value::Int(-3).to_string(), "-3i64");
        assert_eq!(
            Value::Array(ArrayValue::vector(vec![1, 2])).to_string(),
            "[1i64, 2i64]"
        );
        let m = ArrayValue {
            shape: vec![2, 2],
            data: vec![1, 2, 3, 4],
        };
        assert_eq!(Value::Array(m).to_string(), "[[1i64, 2i64], [3i64, 4i64]]");
        let e = ArrayValue {
            shape: vec![3, 0],
            data: vec![],
        };
        assert_eq!(Value::Array(e).to_string(), "empty([3][0]i64)");
    }
}
