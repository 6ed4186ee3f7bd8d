//! Large FUN programs of a chosen shape and number of statements, for
//! measuring how the front end, the passes and the translations scale with
//! a program's size (`benches/passes.rs`, `tests/scaling.rs`).
//!
//! Unlike [`gen`](crate::gen) these programs are not random: the same shape
//! and size give the same text, so a timing taken today compares with one
//! taken tomorrow. Every program is well typed and takes the parameters
//! `(n: int) (m: int) (xs: [n]int)`.

use std::fmt::Write;

/// What the top-level statements of a generated program are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `let (a_k: [n]int) = iota n`, each one returned.
    Iotas,
    /// Kernels reading an earlier array: a map, a map with an `if`, a
    /// nested kernel (a 2-D result whose rows are allocated inside it).
    Kernels,
    /// A chain of scalar statements, each using the one before.
    Scalars,
    /// All of the above interleaved; arrays are read long after they are
    /// bound, so liveness-like analyses do real work.
    Mixed,
}

impl Shape {
    /// Every shape.
    pub const ALL: [Shape; 4] = [Shape::Iotas, Shape::Kernels, Shape::Scalars, Shape::Mixed];

    /// The shape's name, as `name` reads it.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Iotas => "iotas",
            Shape::Kernels => "kernels",
            Shape::Scalars => "scalars",
            Shape::Mixed => "mixed",
        }
    }

    /// The shape called `s`.
    pub fn from_name(s: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|sh| sh.name() == s)
    }
}

/// A FUN program of the given shape with `stms` statements in all, nested
/// ones (in kernels and branches) included; the last top-level statement
/// may take it a few over.
pub fn program(shape: Shape, stms: usize) -> String {
    let mut out = String::from("def main (n: int) (m: int) (xs: [n]int) =\n");
    // The 1-D arrays bound so far (a kernel reads one of them) and the
    // results.
    let mut arrays: Vec<String> = vec!["xs".into()];
    let mut results: Vec<String> = Vec::new();
    let mut scalar = "m".to_string();
    let mut total = 0;
    let mut k = 0;
    while total < stms {
        let kind = match shape {
            Shape::Iotas => 0,
            Shape::Kernels => 1 + k % 3,
            Shape::Scalars => 4,
            Shape::Mixed => k % 5,
        };
        // An array bound about half-way back: live across many statements.
        let src = arrays[arrays.len() / 2].clone();
        // Statements of each kind, nested ones included.
        total += [1, 3, 6, 4, 1][kind];
        match kind {
            0 => {
                let _ = writeln!(out, "  let (a{k}: [n]int) = iota n");
                arrays.push(format!("a{k}"));
                if shape == Shape::Iotas {
                    results.push(format!("a{k}"));
                }
            }
            1 => {
                let _ = writeln!(
                    out,
                    "  let (a{k}: [n]int) = kernel i < n do\n      \
                     let (x: int) = {src}[i]\n      \
                     let (y: int) = x * 2 + i\n      \
                     in (y)"
                );
                arrays.push(format!("a{k}"));
            }
            2 => {
                let _ = writeln!(
                    out,
                    "  let (a{k}: [n]int) = kernel i < n do\n      \
                     let (x: int) = {src}[i]\n      \
                     let (odd: int) = x % 2 != 0\n      \
                     let (y: int) = if odd then\n          \
                     let (t: int) = x * 3 + 1\n          \
                     in (t)\n        \
                     else\n          \
                     let (t: int) = x - {scalar}\n          \
                     in (t)\n      \
                     in (y)"
                );
                arrays.push(format!("a{k}"));
            }
            3 => {
                let _ = writeln!(
                    out,
                    "  let (b{k}: [n][m]int) = kernel i < n do\n      \
                     let (x: int) = {src}[i]\n      \
                     let (row: [m]int) = kernel j < m do\n          \
                     let (v: int) = x * m + j\n          \
                     in (v)\n      \
                     in (row)"
                );
                results.push(format!("b{k}"));
            }
            _ => {
                let _ = writeln!(out, "  let (s{k}: int) = {scalar} * 3 + {k}");
                scalar = format!("s{k}");
            }
        }
        k += 1;
    }
    if shape != Shape::Iotas {
        // Keep every nested kernel's result alive only in the kernels shape
        // (so the simplifier has something to remove in the mixed one).
        if shape == Shape::Mixed {
            results.clear();
        }
        results.push(arrays.last().cloned().unwrap_or_else(|| "xs".into()));
        results.push(scalar);
    }
    let _ = writeln!(out, "  in ({})", results.join(", "));
    out
}

/// How many statements a program has, at every level.
pub fn count_statements(p: &funmem_lang::ast::Program) -> usize {
    fn body(b: &funmem_lang::ast::Body) -> usize {
        use funmem_lang::ast::ExpKind;
        b.stms
            .iter()
            .map(|s| {
                1 + match &s.exp.kind {
                    ExpKind::Kernel(_, _, b) => body(b),
                    ExpKind::If(_, t, e) => body(t) + body(e),
                    _ => 0,
                }
            })
            .sum()
    }
    body(&p.body)
}

/// A FUN program nested `depth` levels deep: kernels inside `if`s inside
/// kernels, each level binding a few statements (`depth` counts kernels
/// and `if`s together).
pub fn deep(depth: usize) -> String {
    // Level l (from 0, outermost) is a kernel when l is even, an `if`
    // otherwise; each returns one `int` (so the kernels' results are
    // arrays only at the top).
    let mut out = String::from("def main (n: int) (m: int) (xs: [n]int) =\n");
    let _ = writeln!(out, "  let (r: [n]int) =");
    let mut closing: Vec<String> = Vec::new();
    for l in 0..depth {
        let ind = "  ".repeat(l + 2);
        if l % 2 == 0 {
            let _ = writeln!(out, "{ind}kernel j{l} < n do");
            let _ = writeln!(out, "{ind}  let (w{l}: int) = xs[j{l}]");
            let _ = writeln!(out, "{ind}  let (x{l}: int) = w{l} + {l}");
            if l + 1 < depth {
                let _ = writeln!(out, "{ind}  let (y{l}: int) =");
                closing.push(format!("{ind}  in (y{l})"));
            } else {
                closing.push(format!("{ind}  in (x{l})"));
            }
        } else {
            let _ = writeln!(out, "{ind}if x{} then", l - 1);
            if l + 1 < depth {
                let _ = writeln!(out, "{ind}  let (y{l}: [n]int) =");
                closing.push(format!(
                    "{ind}  let (z{l}: int) = y{l}[0]\n{ind}  in (z{l})\n{ind}else\n{ind}  in (x{})",
                    l - 1
                ));
            } else {
                closing.push(format!(
                    "{ind}  in (x{})\n{ind}else\n{ind}  in (x{})",
                    l - 1,
                    l - 1
                ));
            }
        }
    }
    while let Some(c) = closing.pop() {
        let _ = writeln!(out, "{c}");
    }
    let _ = writeln!(out, "  in (r)");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;
    use funmem_lang::check::check_program;
    use funmem_lang::parse::parse_program;

    #[test]
    fn generated_programs_are_well_typed_and_of_the_size_asked() {
        for shape in Shape::ALL {
            let p = parse_program(&program(shape, 200), Lang::Fun).unwrap();
            check_program(&p).unwrap_or_else(|d| panic!("{}: {d}", shape.name()));
            let n = count_statements(&p);
            assert!((200..210).contains(&n), "{}: {n}", shape.name());
        }
        for depth in [1, 2, 7, 40] {
            let p = parse_program(&deep(depth), Lang::Fun).unwrap();
            check_program(&p).unwrap_or_else(|d| panic!("deep {depth}: {d}"));
        }
    }
}
