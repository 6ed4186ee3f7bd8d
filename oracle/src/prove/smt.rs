//! Obligations as SMT-LIB2 queries, with the lemmas that make them easy.
//!
//! The query asks for a counterexample: values of the variables that make
//! every fact true, and indices in the LMADs' domains at which the claim
//! fails. `unsat` proves the obligation; a model is a candidate
//! counterexample. Integers are the mathematical ones; `/` and `%` are C's
//! (truncating), defined by `cdiv` and `crem`.
//!
//! Address equations with symbolic strides are nonlinear, and Z3 alone
//! gives up on many (even and odd rows of an `n`-wide matrix). The query
//! therefore also asserts lemmas, each an identity or an implication that
//! holds for all integers, so they never change the answer, only how fast
//! it comes:
//!
//! - *factored difference*: for two indices into LMADs whose strides agree
//!   dimension by dimension, `addr(a) - addr(b) = o_a - o_b + sum s_k *
//!   d_k` with `d_k = a_k - b_k` and `|d_k| < n_k`;
//! - *sign cases* of each product `s * d`: `d >= 1` gives `s*d >= s`,
//!   `d <= -1` gives `s*d <= -s`, `d = 0` gives `s*d = 0` (for `s >= 0`,
//!   and mirrored for `s <= 0`);
//! - *monotonicity*: an index `0 <= i < n` and a stride `s >= 0` give
//!   `0 <= s*i <= s*(n-1)` (mirrored for `s <= 0`); for every product
//!   `x*y` of two variables, non-negative factors give a non-negative
//!   product at least as large as each factor that is at least 1.

use funmem_lang::ast::{Atom, BinOp, SExp, UnOp};
use funmem_lang::lmad::Lmad;
use funmem_lang::obligation::{Claim, Obligation};
use funmem_lang::poly::Poly;
use funmem_lang::print::sexp_string;
use std::collections::BTreeSet;
use std::fmt::Write;

/// A query: the declarations and assertions (what the solver is given),
/// and the names of the obligation's variables.
#[derive(Clone, Debug)]
pub struct Query {
    /// Declarations and assertions, without `check-sat`.
    pub body: String,
    /// The obligation's variables, declared as integer constants.
    pub vars: Vec<String>,
    /// How many `assert` commands the body has.
    pub asserts: usize,
}

impl Query {
    /// A complete script: the body, `check-sat` and `get-model`.
    pub fn script(&self) -> String {
        format!("{}(check-sat)\n(get-model)\n", self.body)
    }
}

/// A variable's SMT-LIB2 symbol (quoted, so that no name clashes with the
/// logic's own symbols; `|n|` and `n` are the same symbol).
fn sym(x: &str) -> String {
    format!("|{x}|")
}

/// A scalar expression as an SMT-LIB2 integer term.
pub fn int_term(e: &SExp) -> String {
    match e {
        SExp::Atom(Atom::Int(k, _)) if *k < 0 => format!("(- {})", (*k as i128).unsigned_abs()),
        SExp::Atom(Atom::Int(k, _)) => k.to_string(),
        SExp::Atom(Atom::Var(x)) => sym(x.name.as_str()),
        SExp::Atom(Atom::Const(c, _)) => match c.as_i64() {
            Some(k) if k < 0 => format!("(- {})", (k as i128).unsigned_abs()),
            Some(k) => k.to_string(),
            None => opaque(e),
        },
        SExp::Un(UnOp::Neg, a, _) => format!("(- {})", int_term(a)),
        SExp::Un(UnOp::Not, _, _) => format!("(ite {} 1 0)", bool_term(e)),
        SExp::Un(UnOp::Abs, a, _) => {
            let x = int_term(a);
            format!("(ite (< {x} 0) (- {x}) {x})")
        }
        // A conversion or a float function: an unknown integer, the same
        // one for the same text (sound: the claim must hold for any value).
        SExp::Un(..) => opaque(e),
        SExp::Bin(op, a, b, _) => {
            let (x, y) = (int_term(a), int_term(b));
            match op {
                BinOp::Add => format!("(+ {x} {y})"),
                BinOp::Sub => format!("(- {x} {y})"),
                BinOp::Mul => format!("(* {x} {y})"),
                BinOp::Div => format!("(cdiv {x} {y})"),
                BinOp::Rem => format!("(crem {x} {y})"),
                BinOp::Min => format!("(ite (<= {x} {y}) {x} {y})"),
                BinOp::Max => format!("(ite (>= {x} {y}) {x} {y})"),
                _ => format!("(ite {} 1 0)", bool_term(e)),
            }
        }
    }
}

/// An integer symbol standing for a subterm the encoding does not model.
/// [`query`] first rewrites every such subterm into a declared variable
/// (see [`super::view`]), so its queries never contain one.
fn opaque(e: &SExp) -> String {
    sym(&format!("opaque {}", funmem_lang::print::sexp_string(e)).replace(['|', '\\'], "!"))
}

/// A scalar expression as an SMT-LIB2 formula: true when non-zero.
pub fn bool_term(e: &SExp) -> String {
    match e {
        SExp::Un(UnOp::Not, a, _) => format!("(not {})", bool_term(a)),
        SExp::Bin(op, a, b, _) => {
            let rel = |r: &str| format!("({r} {} {})", int_term(a), int_term(b));
            match op {
                BinOp::Lt => rel("<"),
                BinOp::Le => rel("<="),
                BinOp::Gt => rel(">"),
                BinOp::Ge => rel(">="),
                BinOp::Eq => rel("="),
                BinOp::Ne => rel("distinct"),
                BinOp::And => format!("(and {} {})", bool_term(a), bool_term(b)),
                BinOp::Or => format!("(or {} {})", bool_term(a), bool_term(b)),
                _ => format!("(distinct {} 0)", int_term(e)),
            }
        }
        _ => format!("(distinct {} 0)", int_term(e)),
    }
}

fn uses_division(o: &Obligation) -> bool {
    let mut found = o.facts.iter().any(|f| f.exp.divides());
    o.claim.for_each_sexp(&mut |e| found |= e.divides());
    found
}

/// Index variables of one LMAD: `|a.0|`, `|a.1|`, ... (a `.` never occurs
/// in a program name).
fn index_vars(tag: &str, l: &Lmad<SExp>) -> Vec<String> {
    (0..l.dims.len())
        .map(|k| sym(&format!("{tag}.{k}")))
        .collect()
}

/// `offset + sum stride_k * idx_k` as a term.
fn address(l: &Lmad<SExp>, idx: &[String]) -> String {
    let mut t = int_term(&l.offset);
    for (d, i) in l.dims.iter().zip(idx) {
        t = format!("(+ {t} (* {} {i}))", int_term(&d.stride));
    }
    t
}

struct Builder {
    body: String,
    asserts: usize,
}

impl Builder {
    fn comment(&mut self, c: &str) {
        for line in c.lines() {
            let _ = writeln!(self.body, "; {line}");
        }
    }
    fn declare(&mut self, x: &str) {
        let _ = writeln!(self.body, "(declare-const {x} Int)");
    }
    fn assert(&mut self, f: &str) {
        let _ = writeln!(self.body, "(assert {f})");
        self.asserts += 1;
    }

    /// Declares the index variables of `l` and bounds them by its domain.
    fn domain(&mut self, l: &Lmad<SExp>, idx: &[String]) {
        for (d, i) in l.dims.iter().zip(idx) {
            self.declare(i);
            self.assert(&format!("(and (<= 0 {i}) (< {i} {}))", int_term(&d.elems)));
        }
    }

    /// Monotonicity of `stride * index` for each index of `l`.
    fn monotone(&mut self, l: &Lmad<SExp>, idx: &[String]) {
        for (d, i) in l.dims.iter().zip(idx) {
            let s = int_term(&d.stride);
            let top = format!("(* {s} (- {} 1))", int_term(&d.elems));
            self.assert(&format!(
                "(=> (>= {s} 0) (and (<= 0 (* {s} {i})) (<= (* {s} {i}) {top})))"
            ));
            self.assert(&format!(
                "(=> (<= {s} 0) (and (>= 0 (* {s} {i})) (>= (* {s} {i}) {top})))"
            ));
        }
    }

    /// The factored difference of `addr_a(ia) - addr_b(ib)` over the
    /// dimensions whose strides agree, with sign cases of each product.
    fn factored(
        &mut self,
        a: &Lmad<SExp>,
        ia: &[String],
        b: &Lmad<SExp>,
        ib: &[String],
        tag: &str,
    ) {
        let q = a.dims.len().min(b.dims.len());
        let mut diff_terms = vec![format!(
            "(- {} {})",
            int_term(&a.offset),
            int_term(&b.offset)
        )];
        let mut matched = vec![false; q];
        for k in 0..q {
            if Poly::from_sexp(&a.dims[k].stride) != Poly::from_sexp(&b.dims[k].stride) {
                continue;
            }
            matched[k] = true;
            let d = sym(&format!("{tag}.{k}"));
            let s = int_term(&a.dims[k].stride);
            let na = int_term(&a.dims[k].elems);
            let nb = int_term(&b.dims[k].elems);
            self.declare(&d);
            self.assert(&format!("(= {d} (- {} {}))", ia[k], ib[k]));
            self.assert(&format!("(and (< (- {nb}) {d}) (< {d} {na}))"));
            let sd = format!("(* {s} {d})");
            self.assert(&format!("(=> (= {d} 0) (= {sd} 0))"));
            self.assert(&format!("(=> (and (>= {s} 0) (>= {d} 1)) (>= {sd} {s}))"));
            self.assert(&format!(
                "(=> (and (>= {s} 0) (<= {d} (- 1))) (<= {sd} (- {s})))"
            ));
            self.assert(&format!("(=> (and (<= {s} 0) (>= {d} 1)) (<= {sd} {s}))"));
            self.assert(&format!(
                "(=> (and (<= {s} 0) (<= {d} (- 1))) (>= {sd} (- {s})))"
            ));
            diff_terms.push(sd);
        }
        for (k, d) in a.dims.iter().enumerate() {
            if k >= q || !matched[k] {
                diff_terms.push(format!("(* {} {})", int_term(&d.stride), ia[k]));
            }
        }
        for (k, d) in b.dims.iter().enumerate() {
            if k >= q || !matched[k] {
                diff_terms.push(format!("(- (* {} {}))", int_term(&d.stride), ib[k]));
            }
        }
        if matched.iter().any(|&m| m) {
            self.assert(&format!(
                "(= (- {} {}) (+ {}))",
                address(a, ia),
                address(b, ib),
                diff_terms.join(" ")
            ));
        }
    }
}

/// Products `x*y` of two variables in the obligation's polynomial forms.
fn products(o: &Obligation) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut visit = |e: &SExp| {
        for (m, _) in Poly::from_sexp(e).terms() {
            let vars: Vec<String> =
                m.0.iter()
                    .filter_map(|f| match f {
                        funmem_lang::poly::Factor::Var(x) => Some(x.as_str().to_string()),
                        _ => None,
                    })
                    .collect();
            if vars.len() == 2 && m.0.len() == 2 && vars[0] != vars[1] {
                out.insert((vars[0].clone(), vars[1].clone()));
            }
        }
    };
    o.claim.for_each_sexp(&mut visit);
    for f in &o.facts {
        visit(&f.exp);
    }
    out
}

/// The query for an obligation; `lemmas` adds the lemmas above.
/// Conversions, float functions and float literals are opaque integer
/// variables, declared like the others (see [`super::view`]).
pub fn query(o: &Obligation, lemmas: bool) -> Query {
    let view = super::view::integer_view(o);
    let o: &Obligation = &view.obligation;
    let mut b = Builder {
        body: String::new(),
        asserts: 0,
    };
    b.comment(&format!("obligation {} ({})", o.name, o.origin));
    b.comment(&o.claim.to_string());
    b.comment("sat: a counterexample; unsat: the obligation holds");
    if uses_division(o) {
        b.body.push_str(
            "(define-fun cdiv ((a Int) (b Int)) Int\n  (ite (>= a 0) (ite (>= b 0) (div a b) (- (div a (- b))))\n                (ite (>= b 0) (- (div (- a) b)) (div (- a) (- b)))))\n(define-fun crem ((a Int) (b Int)) Int (- a (* b (cdiv a b))))\n",
        );
    }
    let vars = o.vars();
    for v in &vars {
        b.declare(&sym(v));
    }
    if !o.facts.is_empty() {
        b.comment("facts");
    }
    for f in &o.facts {
        b.comment(&format!("{} ({})", sexp_string(&f.exp), f.origin));
        b.assert(&bool_term(&f.exp));
    }
    b.comment("the claim fails");
    match &o.claim {
        Claim::AtMost(x, y) => b.assert(&format!("(> {} {})", int_term(x), int_term(y))),
        Claim::InBounds(l, n) => {
            let i = index_vars("a", l);
            b.domain(l, &i);
            let a = address(l, &i);
            b.assert(&format!("(or (< {a} 0) (>= {a} {}))", int_term(n)));
            if lemmas {
                b.comment("lemmas");
                b.monotone(l, &i);
            }
        }
        Claim::Injective(l) => {
            let (i, j) = (index_vars("a", l), index_vars("b", l));
            b.domain(l, &i);
            b.domain(l, &j);
            let distinct: Vec<String> = i
                .iter()
                .zip(&j)
                .map(|(x, y)| format!("(distinct {x} {y})"))
                .collect();
            b.assert(&format!("(or false {})", distinct.join(" ")));
            b.assert(&format!("(= {} {})", address(l, &i), address(l, &j)));
            if lemmas {
                b.comment("lemmas");
                b.monotone(l, &i);
                b.monotone(l, &j);
                b.factored(l, &i, l, &j, "d");
            }
        }
        Claim::Disjoint(x, y) => {
            let (i, j) = (index_vars("a", x), index_vars("b", y));
            b.domain(x, &i);
            b.domain(y, &j);
            b.assert(&format!("(= {} {})", address(x, &i), address(y, &j)));
            if lemmas {
                b.comment("lemmas");
                b.monotone(x, &i);
                b.monotone(y, &j);
                b.factored(x, &i, y, &j, "d");
            }
        }
    }
    if lemmas {
        for (x, y) in products(o) {
            let (x, y) = (sym(&x), sym(&y));
            let p = format!("(* {x} {y})");
            b.assert(&format!("(=> (and (>= {x} 0) (>= {y} 0)) (>= {p} 0))"));
            b.assert(&format!("(=> (and (>= {x} 1) (>= {y} 0)) (>= {p} {y}))"));
            b.assert(&format!("(=> (and (>= {y} 1) (>= {x} 0)) (>= {p} {x}))"));
        }
    }
    Query {
        body: b.body,
        vars,
        asserts: b.asserts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::obligation::parse_obligations;

    #[test]
    fn terms_follow_c() {
        let o = parse_obligations(
            "obligation t\n  given n / 2 > -1 && !(n == 3)\n  at-most min(n, 4) <= n % 3\n",
        )
        .unwrap()
        .remove(0);
        let q = query(&o, true);
        assert!(
            q.body
                .contains("(assert (and (> (cdiv |n| 2) (- 1)) (not (= |n| 3))))"),
            "{}",
            q.body
        );
        assert!(
            q.body
                .contains("(assert (> (ite (<= |n| 4) |n| 4) (crem |n| 3)))"),
            "{}",
            q.body
        );
        assert!(q.script().ends_with("(check-sat)\n(get-model)\n"));
        assert_eq!(q.vars, vec!["n".to_string()]);
    }
}
