//! Polynomial normal form of scalar expressions.
//!
//! FUNMEM types carry symbolic sizes, offsets and strides, and the type
//! checker must decide whether two of them are the same. Syntactic equality
//! is far too weak: slicing an array whose LMAD is `R(m, n)` at row `i` with
//! offset `o` yields the offset `(0 + i*n) + o*1` (eq. 2 of the IFL 2022
//! paper), while the programmer writes `o + i*n`. This module maps a scalar
//! expression to a canonical form in which such expressions coincide.
//!
//! The form is a polynomial with 64-bit integer coefficients: a sum of
//! monomials, each a sorted product of factors. Addition, subtraction,
//! multiplication and negation are interpreted exactly, in the ring of
//! integers modulo 2^64, which is what the language's wrapping arithmetic
//! computes (docs/language.md, Conventions). So two expressions that differ only by the
//! commutative ring laws get equal polynomials, and equal polynomials denote
//! equal values in every environment: the test is sound, and complete for
//! `+ - *` over variables and literals.
//!
//! Everything else (`/`, `%`, comparisons, `&&`, `||`, `!`, `min`, `max`) is
//! not a polynomial operation. Such a subterm becomes an *opaque* factor: its
//! operands are normalised first, the operands of commutative operators are
//! put in a canonical order, `a > b` becomes `b < a` (and `>=` likewise), and
//! the result is named by its printed text. Two opaque subterms are thus the
//! same factor exactly when they agree up to the ring laws inside them.
//! When every operand is a constant the operator is folded with C semantics
//! (`/` and `%` truncate toward zero; comparisons and logical operators give
//! 0 or 1); a division by zero is left alone, because evaluating it is stuck.
//!
//! Multiplying out is exponential in the worst case (a product of `k`
//! binomials has `2^k` terms). A product whose expansion would take more than
//! [`MUL_LIMIT`] term products is kept as one opaque factor instead, which
//! keeps the form canonical for a given expression but may miss equalities
//! that only the expansion would show. Recursion follows the depth of the
//! expression, which the parser bounds ([`SExp::depth_within`]).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::ast::{Atom, BinOp, SExp, UnOp};
use crate::name::Name;
use crate::prim::{Const, Prim};
use crate::span::Span;

/// Most term products one multiplication may expand; larger products stay
/// opaque.
pub const MUL_LIMIT: usize = 1 << 12;

/// A factor of a monomial.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Factor {
    /// An integer variable.
    Var(Name),
    /// A non-polynomial subterm, named by its canonical printed text; the
    /// [`Poly`] containing the factor also holds the subterm itself.
    Opaque(String),
}

/// A product of factors, sorted, with repetition (`x*x*y`); empty means 1.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Monomial(pub Vec<Factor>);

impl Monomial {
    /// The product of two monomials.
    fn times(&self, o: &Monomial) -> Monomial {
        let mut fs = Vec::with_capacity(self.0.len() + o.0.len());
        fs.extend(self.0.iter().cloned());
        fs.extend(o.0.iter().cloned());
        fs.sort();
        Monomial(fs)
    }
}

/// A non-polynomial subterm with normalised operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Opaque {
    Bin(BinOp, Poly, Poly),
    /// `!p`, `abs(p)`, a conversion, a float function.
    Un(UnOp, Poly),
    /// A literal that is not an integer (never in a well-typed size).
    Lit(Const),
}

/// A scalar expression in polynomial normal form.
///
/// Equal polynomials denote equal values in every environment (modulo
/// division by zero, which makes both stuck or drops out).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Poly {
    /// Coefficient of each monomial; never zero.
    terms: BTreeMap<Monomial, i64>,
    /// The subterm of each opaque factor occurring in `terms`, and no other.
    /// Keys name their subterms injectively, so this map is a function of
    /// `terms` and derived equality is equality of `terms`.
    opaque: BTreeMap<String, Opaque>,
}

impl Poly {
    /// The constant `k`.
    pub fn constant(k: i64) -> Poly {
        let mut p = Poly::default();
        add_term(&mut p.terms, Monomial(Vec::new()), k);
        p
    }

    /// The variable `x`.
    pub fn var(x: &Name) -> Poly {
        let mut p = Poly::default();
        p.terms.insert(Monomial(vec![Factor::Var(x.clone())]), 1);
        p
    }

    /// The normal form of an atom.
    pub fn atom(a: &Atom) -> Poly {
        match a {
            Atom::Int(k, _) => Poly::constant(*k),
            Atom::Const(c, _) => match c {
                Const::I32(_) | Const::I64(_) | Const::Bool(_) => {
                    Poly::constant(c.as_i64().unwrap_or(0))
                }
                _ => Poly::opaque(c.to_string(), Opaque::Lit(*c)),
            },
            Atom::Var(x) => Poly::var(&x.name),
        }
    }

    /// The normal form of a scalar expression.
    pub fn from_sexp(e: &SExp) -> Poly {
        match e {
            SExp::Atom(a) => Poly::atom(a),
            SExp::Bin(op, l, r, _) => Poly::binary(*op, &Poly::from_sexp(l), &Poly::from_sexp(r)),
            SExp::Un(UnOp::Neg, e, _) => Poly::from_sexp(e).neg(),
            SExp::Un(op, e, _) => Poly::from_sexp(e).unary(*op),
        }
    }

    /// `l op r`: exact for `+ - *`, folded when both are constants, opaque
    /// otherwise.
    pub fn binary(op: BinOp, l: &Poly, r: &Poly) -> Poly {
        match op {
            BinOp::Add => return l.add(r),
            BinOp::Sub => return l.sub(r),
            BinOp::Mul => return l.mul(r),
            _ => {}
        }
        if let (Some(a), Some(b)) = (l.as_constant(), r.as_constant()) {
            if let Some(k) = fold(op, a, b) {
                return Poly::constant(k);
            }
        }
        Poly::opaque_bin(op, l, r)
    }

    /// `!p`: 1 where `p` is 0, else 0.
    pub fn logical_not(&self) -> Poly {
        self.unary(UnOp::Not)
    }

    /// `op p` for an operator other than negation: folded on a constant
    /// where the integer meaning is exact, opaque otherwise. A conversion
    /// is opaque even to `i64`: its operand may be a float, and
    /// `i64(x * 2.0)` is not `i64(x) * 2`.
    pub fn unary(&self, op: UnOp) -> Poly {
        if op == UnOp::Neg {
            return self.neg();
        }
        if let Some(v) = self.as_constant().and_then(|k| fold_un(op, k)) {
            return Poly::constant(v);
        }
        let name = op.function_name().unwrap_or("!");
        Poly::opaque(format!("{name}({self})"), Opaque::Un(op, self.clone()))
    }

    /// The value, if the polynomial is a constant.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.iter().next() {
            None => Some(0),
            Some((m, k)) if m.0.is_empty() && self.terms.len() == 1 => Some(*k),
            Some(_) => None,
        }
    }

    /// The monomials with their (nonzero) coefficients, in a fixed order.
    pub fn terms(&self) -> impl Iterator<Item = (&Monomial, i64)> + '_ {
        self.terms.iter().map(|(m, k)| (m, *k))
    }

    /// `self + o`.
    pub fn add(&self, o: &Poly) -> Poly {
        let mut p = self.clone();
        p.accumulate(o);
        p.prune();
        p
    }

    /// `self - o`.
    pub fn sub(&self, o: &Poly) -> Poly {
        self.add(&o.neg())
    }

    /// `-self`.
    pub fn neg(&self) -> Poly {
        Poly {
            terms: self
                .terms
                .iter()
                .map(|(m, k)| (m.clone(), k.wrapping_neg()))
                .collect(),
            opaque: self.opaque.clone(),
        }
    }

    /// `self * o`, multiplied out unless that exceeds [`MUL_LIMIT`].
    pub fn mul(&self, o: &Poly) -> Poly {
        if self.terms.len().saturating_mul(o.terms.len()) > MUL_LIMIT {
            return Poly::opaque_bin(BinOp::Mul, self, o);
        }
        let mut p = Poly::default();
        for (m1, k1) in &self.terms {
            for (m2, k2) in &o.terms {
                add_term(&mut p.terms, m1.times(m2), k1.wrapping_mul(*k2));
            }
        }
        p.adopt(&self.opaque);
        p.adopt(&o.opaque);
        p.prune();
        p
    }

    /// The variables, those inside opaque subterms included.
    pub fn vars(&self) -> BTreeSet<Name> {
        let mut out = BTreeSet::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut BTreeSet<Name>) {
        for m in self.terms.keys() {
            for f in &m.0 {
                if let Factor::Var(x) = f {
                    out.insert(x.clone());
                }
            }
        }
        for t in self.opaque.values() {
            match t {
                Opaque::Bin(_, l, r) => {
                    l.collect_vars(out);
                    r.collect_vars(out);
                }
                Opaque::Un(_, p) => p.collect_vars(out),
                Opaque::Lit(_) => {}
            }
        }
    }

    /// The value in an environment, with wrapping arithmetic; `None` if a
    /// variable is unbound or an opaque subterm divides by zero.
    pub fn eval(&self, env: &impl Fn(&Name) -> Option<i64>) -> Option<i64> {
        let mut opaque = BTreeMap::new();
        for (key, t) in &self.opaque {
            let v = match t {
                Opaque::Bin(op, l, r) => fold(*op, l.eval(env)?, r.eval(env)?)?,
                Opaque::Un(op, p) => fold_un(*op, p.eval(env)?)?,
                Opaque::Lit(_) => return None,
            };
            opaque.insert(key.as_str(), v);
        }
        let mut total = 0i64;
        for (m, k) in &self.terms {
            let mut v = *k;
            for f in &m.0 {
                let x = match f {
                    Factor::Var(x) => env(x)?,
                    Factor::Opaque(key) => *opaque.get(key.as_str())?,
                };
                v = v.wrapping_mul(x);
            }
            total = total.wrapping_add(v);
        }
        Some(total)
    }

    /// The polynomial with each variable `x` replaced by `f(x)` where that is
    /// `Some`, inside opaque subterms too, and normalised again.
    pub fn subst(&self, f: &impl Fn(&Name) -> Option<Poly>) -> Poly {
        let mut out = Poly::default();
        for (m, k) in &self.terms {
            let mut term = Poly::constant(*k);
            for fac in &m.0 {
                let p = match fac {
                    Factor::Var(x) => f(x).unwrap_or_else(|| Poly::var(x)),
                    Factor::Opaque(key) => match self.opaque.get(key) {
                        Some(Opaque::Bin(op, l, r)) => Poly::binary(*op, &l.subst(f), &r.subst(f)),
                        Some(Opaque::Un(op, p)) => p.subst(f).unary(*op),
                        Some(Opaque::Lit(c)) => Poly::atom(&Atom::Const(*c, Span::DUMMY)),
                        None => continue,
                    },
                };
                term = term.mul(&p);
            }
            out.accumulate(&term);
        }
        out.prune();
        out
    }

    /// An equivalent scalar expression, deterministic and readable:
    /// `from_sexp(to_sexp(p)) == p`. Long sums are grouped so that the
    /// expression's depth stays logarithmic in the number of terms.
    pub fn to_sexp(&self) -> SExp {
        const RUN: usize = 32;
        let terms: Vec<(&Monomial, i64)> = self.display_order().collect();
        let mut runs: Vec<SExp> = terms
            .chunks(RUN)
            .map(|run| {
                let mut acc: Option<SExp> = None;
                for &(m, k) in run {
                    acc = Some(match acc {
                        None => self.term_sexp(m, k),
                        Some(a) if k < 0 && k != i64::MIN => {
                            SExp::bin(BinOp::Sub, a, self.term_sexp(m, k.wrapping_neg()))
                        }
                        Some(a) => SExp::bin(BinOp::Add, a, self.term_sexp(m, k)),
                    });
                }
                acc.unwrap_or_else(|| SExp::int(0))
            })
            .collect();
        while runs.len() > 1 {
            let mut next = Vec::with_capacity(runs.len().div_ceil(2));
            let mut it = runs.into_iter();
            while let Some(l) = it.next() {
                next.push(match it.next() {
                    Some(r) => SExp::bin(BinOp::Add, l, r),
                    None => l,
                });
            }
            runs = next;
        }
        runs.pop().unwrap_or_else(|| SExp::int(0))
    }

    /// `k * m` as an expression: `3 * x * y`, `-x * y`, `x`.
    fn term_sexp(&self, m: &Monomial, k: i64) -> SExp {
        let mut factors = m.0.iter().map(|f| self.factor_sexp(f));
        let Some(first) = factors.next() else {
            return SExp::int(k);
        };
        let start = match k {
            1 => first,
            -1 => SExp::Un(UnOp::Neg, Box::new(first), Span::DUMMY),
            _ => SExp::bin(BinOp::Mul, SExp::int(k), first),
        };
        factors.fold(start, |a, f| SExp::bin(BinOp::Mul, a, f))
    }

    fn factor_sexp(&self, f: &Factor) -> SExp {
        match f {
            Factor::Var(x) => SExp::var(x),
            Factor::Opaque(key) => match self.opaque.get(key) {
                Some(Opaque::Bin(op, l, r)) => SExp::bin(*op, l.to_sexp(), r.to_sexp()),
                Some(Opaque::Un(op, p)) => SExp::Un(*op, Box::new(p.to_sexp()), Span::DUMMY),
                Some(Opaque::Lit(c)) => SExp::Atom(Atom::Const(*c, Span::DUMMY)),
                // Unreachable by the invariant on `opaque`; the key names it.
                None => SExp::var(&Name::new(key)),
            },
        }
    }

    /// Terms in printing order: monomials in their order, the constant last.
    fn display_order(&self) -> impl Iterator<Item = (&Monomial, i64)> + '_ {
        let (constant, rest): (Vec<_>, Vec<_>) = self.terms().partition(|(m, _)| m.0.is_empty());
        rest.into_iter().chain(constant)
    }

    /// `l op r` as one opaque factor, operands in canonical order.
    fn opaque_bin(op: BinOp, l: &Poly, r: &Poly) -> Poly {
        let (mut op, mut l, mut r) = (op, l, r);
        match op {
            BinOp::Gt => (op, l, r) = (BinOp::Lt, r, l),
            BinOp::Ge => (op, l, r) = (BinOp::Le, r, l),
            _ => {}
        }
        let (mut ls, mut rs) = (l.to_string(), r.to_string());
        let commutative = matches!(
            op,
            BinOp::Mul | BinOp::Eq | BinOp::Ne | BinOp::And | BinOp::Or | BinOp::Min | BinOp::Max
        );
        if commutative && ls > rs {
            (l, r) = (r, l);
            (ls, rs) = (rs, ls);
        }
        let key = match op {
            BinOp::Min | BinOp::Max => format!("{}({ls}, {rs})", op.symbol()),
            _ => format!(
                "({} {} {})",
                l.operand_text(ls),
                op.symbol(),
                r.operand_text(rs)
            ),
        };
        Poly::opaque(key, Opaque::Bin(op, l.clone(), r.clone()))
    }

    /// This polynomial's text `text` as an operand of an infix operator:
    /// parenthesised unless it is a variable, an opaque factor or a
    /// nonnegative constant.
    fn operand_text(&self, text: String) -> String {
        let atomic = match self.terms.iter().next() {
            None => true,
            Some((m, k)) => {
                self.terms.len() == 1 && ((*k == 1 && m.0.len() == 1) || (m.0.is_empty() && *k > 0))
            }
        };
        if atomic {
            text
        } else {
            format!("({text})")
        }
    }

    /// The polynomial `1 * t`, for the opaque subterm `t` named `key`.
    fn opaque(key: String, t: Opaque) -> Poly {
        let mut p = Poly::default();
        p.terms
            .insert(Monomial(vec![Factor::Opaque(key.clone())]), 1);
        p.opaque.insert(key, t);
        p
    }

    /// Adds `o`'s terms and subterms to `self`, leaving unused subterms.
    fn accumulate(&mut self, o: &Poly) {
        for (m, k) in &o.terms {
            add_term(&mut self.terms, m.clone(), *k);
        }
        self.adopt(&o.opaque);
    }

    /// Takes the subterms in `from` that `self` lacks.
    fn adopt(&mut self, from: &BTreeMap<String, Opaque>) {
        for (key, t) in from {
            if !self.opaque.contains_key(key) {
                self.opaque.insert(key.clone(), t.clone());
            }
        }
    }

    /// Drops the subterms no monomial uses any more.
    fn prune(&mut self) {
        if self.opaque.is_empty() {
            return;
        }
        let used: BTreeSet<&str> = self
            .terms
            .keys()
            .flat_map(|m| &m.0)
            .filter_map(|f| match f {
                Factor::Opaque(key) => Some(key.as_str()),
                Factor::Var(_) => None,
            })
            .collect();
        let keep: BTreeMap<String, Opaque> = std::mem::take(&mut self.opaque)
            .into_iter()
            .filter(|(key, _)| used.contains(key.as_str()))
            .collect();
        self.opaque = keep;
    }
}

/// Adds `k * m` to a sum of terms, dropping zero coefficients.
fn add_term(terms: &mut BTreeMap<Monomial, i64>, m: Monomial, k: i64) {
    match terms.entry(m) {
        Entry::Vacant(slot) => {
            if k != 0 {
                slot.insert(k);
            }
        }
        Entry::Occupied(mut slot) => {
            let c = slot.get().wrapping_add(k);
            if c == 0 {
                slot.remove();
            } else {
                *slot.get_mut() = c;
            }
        }
    }
}

/// `a op b` with the language's semantics: wrapping `+ - *`, `/` and `%`
/// truncating toward zero (`None` when `b` is 0), 0/1 for comparisons and
/// logical operators.
fn fold(op: BinOp, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Div | BinOp::Rem if b == 0 => return None,
        BinOp::Div => a.wrapping_div(b),
        BinOp::Rem => a.wrapping_rem(b),
        BinOp::Lt => i64::from(a < b),
        BinOp::Le => i64::from(a <= b),
        BinOp::Gt => i64::from(a > b),
        BinOp::Ge => i64::from(a >= b),
        BinOp::Eq => i64::from(a == b),
        BinOp::Ne => i64::from(a != b),
        BinOp::And => i64::from(a != 0 && b != 0),
        BinOp::Or => i64::from(a != 0 || b != 0),
        BinOp::Min => a.min(b),
        BinOp::Max => a.max(b),
    })
}

/// Writes a name as is when it cannot be confused with the notation, and
/// quoted otherwise, so that printing stays injective.
fn write_name(f: &mut fmt::Formatter<'_>, x: &Name) -> fmt::Result {
    let s = x.as_str();
    let plain = s.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_alphanumeric() || "_'.$#".contains(c));
    if plain {
        f.write_str(s)
    } else {
        write!(f, "{s:?}")
    }
}

impl fmt::Display for Poly {
    /// Canonical text: `2*i*n + o - 1`; opaque factors as `(a / b)`,
    /// `min(a, b)`, `!(a)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (m, k) in self.display_order() {
            match (first, k < 0) {
                (true, true) => f.write_str("-")?,
                (true, false) => {}
                (false, true) => f.write_str(" - ")?,
                (false, false) => f.write_str(" + ")?,
            }
            first = false;
            let mag = k.unsigned_abs();
            if m.0.is_empty() {
                write!(f, "{mag}")?;
                continue;
            }
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            for (i, fac) in m.0.iter().enumerate() {
                if i > 0 {
                    f.write_str("*")?;
                }
                match fac {
                    Factor::Var(x) => write_name(f, x)?,
                    Factor::Opaque(key) => f.write_str(key)?,
                }
            }
        }
        if first {
            f.write_str("0")?;
        }
        Ok(())
    }
}

impl std::ops::Add for &Poly {
    type Output = Poly;
    fn add(self, o: &Poly) -> Poly {
        Poly::add(self, o)
    }
}

impl std::ops::Sub for &Poly {
    type Output = Poly;
    fn sub(self, o: &Poly) -> Poly {
        Poly::sub(self, o)
    }
}

impl std::ops::Mul for &Poly {
    type Output = Poly;
    fn mul(self, o: &Poly) -> Poly {
        Poly::mul(self, o)
    }
}

impl std::ops::Neg for &Poly {
    type Output = Poly;
    fn neg(self) -> Poly {
        Poly::neg(self)
    }
}

/// `op k` on an integer where that is exact: `!`, `abs`, and the integer
/// conversions; `None` for the float functions.
fn fold_un(op: UnOp, k: i64) -> Option<i64> {
    Some(match op {
        UnOp::Neg => k.wrapping_neg(),
        UnOp::Not => i64::from(k == 0),
        UnOp::Abs => k.wrapping_abs(),
        UnOp::Conv(Prim::I64) => k,
        UnOp::Conv(Prim::I32) => k as i32 as i64,
        UnOp::Conv(Prim::Bool) => i64::from(k != 0),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(x: &str) -> SExp {
        SExp::var(&Name::new(x))
    }

    fn n(k: i64) -> SExp {
        SExp::int(k)
    }

    fn b(op: BinOp, l: SExp, r: SExp) -> SExp {
        SExp::bin(op, l, r)
    }

    fn p(e: &SExp) -> Poly {
        Poly::from_sexp(e)
    }

    /// Reference semantics of scalar expressions (docs/language.md, Conventions): `None` when
    /// stuck (division by zero or an unbound variable).
    fn eval(e: &SExp, env: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        match e {
            SExp::Atom(Atom::Int(k, _)) => Some(*k),
            SExp::Atom(Atom::Var(x)) => env(x.name.as_str()),
            SExp::Un(UnOp::Neg, e, _) => Some(eval(e, env)?.wrapping_neg()),
            SExp::Un(UnOp::Not, e, _) => Some(i64::from(eval(e, env)? == 0)),
            SExp::Un(op, e, _) => super::fold_un(*op, eval(e, env)?),
            SExp::Atom(Atom::Const(c, _)) => c.as_i64(),
            SExp::Bin(op, l, r, _) => {
                let (a, b) = (eval(l, env)?, eval(r, env)?);
                match op {
                    BinOp::Add => Some(a.wrapping_add(b)),
                    BinOp::Sub => Some(a.wrapping_sub(b)),
                    BinOp::Mul => Some(a.wrapping_mul(b)),
                    BinOp::Div => (b != 0).then(|| a.wrapping_div(b)),
                    BinOp::Rem => (b != 0).then(|| a.wrapping_rem(b)),
                    BinOp::Lt => Some((a < b) as i64),
                    BinOp::Le => Some((a <= b) as i64),
                    BinOp::Gt => Some((a > b) as i64),
                    BinOp::Ge => Some((a >= b) as i64),
                    BinOp::Eq => Some((a == b) as i64),
                    BinOp::Ne => Some((a != b) as i64),
                    BinOp::And => Some((a != 0 && b != 0) as i64),
                    BinOp::Or => Some((a != 0 || b != 0) as i64),
                    BinOp::Min => Some(a.min(b)),
                    BinOp::Max => Some(a.max(b)),
                }
            }
        }
    }

    /// Replaces the variable `x` by `by` in `e`.
    fn subst_sexp(e: &SExp, x: &str, by: &SExp) -> SExp {
        match e {
            SExp::Atom(Atom::Var(y)) if y.name.as_str() == x => by.clone(),
            SExp::Atom(_) => e.clone(),
            SExp::Bin(op, l, r, s) => SExp::Bin(
                *op,
                Box::new(subst_sexp(l, x, by)),
                Box::new(subst_sexp(r, x, by)),
                *s,
            ),
            SExp::Un(op, a, s) => SExp::Un(*op, Box::new(subst_sexp(a, x, by)), *s),
        }
    }

    const OPS: [BinOp; 15] = BinOp::ALL;

    fn arb_sexp() -> impl Strategy<Value = SExp> {
        let leaf = prop_oneof![
            3 => prop::sample::select(vec!["a", "b", "c"]).prop_map(v),
            2 => (-3i64..=3).prop_map(n),
            1 => prop::sample::select(vec![i64::MIN, i64::MAX, 1 << 40]).prop_map(n),
        ];
        leaf.prop_recursive(5, 40, 2, |inner| {
            prop_oneof![
                4 => (prop::sample::select(OPS.to_vec()), inner.clone(), inner.clone())
                    .prop_map(|(op, l, r)| b(op, l, r)),
                1 => inner.clone().prop_map(|e| SExp::Un(UnOp::Neg, Box::new(e), Span::DUMMY)),
                1 => inner.prop_map(|e| SExp::Un(UnOp::Not, Box::new(e), Span::DUMMY)),
            ]
        })
    }

    fn arb_env() -> impl Strategy<Value = [i64; 3]> {
        let val = prop_oneof![4 => -4i64..=4, 1 => prop::sample::select(vec![i64::MIN, i64::MAX, -1 << 33])];
        [val.clone(), val.clone(), val]
    }

    fn lookup(vals: [i64; 3]) -> impl Fn(&str) -> Option<i64> {
        move |x| match x {
            "a" => Some(vals[0]),
            "b" => Some(vals[1]),
            "c" => Some(vals[2]),
            _ => None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn normal_form_evaluates_like_the_expression(e in arb_sexp(), vals in arb_env()) {
            let env = lookup(vals);
            if let Some(want) = eval(&e, &env) {
                prop_assert_eq!(p(&e).eval(&|x: &Name| env(x.as_str())), Some(want));
            }
        }

        #[test]
        fn to_sexp_round_trips(e in arb_sexp()) {
            let q = p(&e);
            prop_assert_eq!(p(&q.to_sexp()), q.clone());
            prop_assert_eq!(p(&q.to_sexp()).to_string(), q.to_string());
        }

        #[test]
        fn ring_laws_hold(e1 in arb_sexp(), e2 in arb_sexp(), e3 in arb_sexp()) {
            use BinOp::*;
            let (x, y, z) = (e1, e2, e3);
            prop_assert_eq!(p(&b(Add, x.clone(), y.clone())), p(&b(Add, y.clone(), x.clone())));
            prop_assert_eq!(p(&b(Mul, x.clone(), y.clone())), p(&b(Mul, y.clone(), x.clone())));
            prop_assert_eq!(
                p(&b(Mul, b(Mul, x.clone(), y.clone()), z.clone())),
                p(&b(Mul, x.clone(), b(Mul, y.clone(), z.clone())))
            );
            prop_assert_eq!(
                p(&b(Mul, x.clone(), b(Add, y.clone(), z.clone()))),
                p(&b(Add, b(Mul, x.clone(), y.clone()), b(Mul, x.clone(), z.clone())))
            );
            prop_assert_eq!(p(&b(Sub, x.clone(), x.clone())), Poly::constant(0));
            prop_assert_eq!(p(&b(Min, x.clone(), y.clone())), p(&b(Min, y.clone(), x.clone())));
            prop_assert_eq!(p(&b(Gt, x.clone(), y.clone())), p(&b(Lt, y, x)));
        }

        #[test]
        fn subst_commutes_with_normalisation(e in arb_sexp(), by in arb_sexp(), vals in arb_env()) {
            let a = Name::new("a");
            let q = p(&e).subst(&|x: &Name| (*x == a).then(|| p(&by)));
            prop_assert_eq!(&q, &p(&subst_sexp(&e, "a", &by)));
            let env = lookup(vals);
            if let (Some(av), true) = (eval(&by, &env), eval(&e, &env).is_some()) {
                let inner = lookup([av, vals[1], vals[2]]);
                if let Some(want) = eval(&e, &inner) {
                    prop_assert_eq!(q.eval(&|x: &Name| env(x.as_str())), Some(want));
                }
            }
        }

        #[test]
        fn vars_are_among_the_expressions(e in arb_sexp()) {
            let mut used = BTreeSet::new();
            e.for_each_var(&mut |x| {
                used.insert(x.name.clone());
            });
            prop_assert!(p(&e).vars().is_subset(&used));
        }
    }

    #[test]
    fn slice_offsets_match_what_programmers_write() {
        use BinOp::*;
        let written = b(Add, v("o"), b(Mul, v("i"), v("n")));
        let derived = b(
            Add,
            b(Add, n(0), b(Mul, v("i"), v("n"))),
            b(Mul, v("o"), n(1)),
        );
        assert_eq!(p(&written), p(&derived));
        assert_eq!(p(&written).to_string(), "i*n + o");
    }

    #[test]
    fn difference_of_squares() {
        use BinOp::*;
        let lhs = b(Mul, b(Add, v("a"), v("b")), b(Sub, v("a"), v("b")));
        let rhs = b(Sub, b(Mul, v("a"), v("a")), b(Mul, v("b"), v("b")));
        assert_eq!(p(&lhs), p(&rhs));
        assert_eq!(p(&lhs).to_string(), "a*a - b*b");
        assert_ne!(p(&lhs), p(&b(Mul, v("a"), v("a"))));
    }

    #[test]
    fn opaque_terms_compare_modulo_ring_laws() {
        use BinOp::*;
        let l = b(Div, b(Add, v("n"), n(1)), b(Mul, v("k"), n(2)));
        let r = b(Div, b(Add, n(1), v("n")), b(Add, v("k"), v("k")));
        assert_eq!(p(&l), p(&r));
        assert_eq!(p(&l).to_string(), "((n + 1) / (2*k))");
        assert_eq!(p(&b(Sub, l.clone(), r)), Poly::constant(0));
        assert_ne!(
            p(&l),
            p(&b(Rem, b(Add, v("n"), n(1)), b(Mul, v("k"), n(2))))
        );
        let m1 = b(Max, v("x"), b(Add, v("y"), n(1)));
        let m2 = b(Max, b(Add, n(1), v("y")), v("x"));
        assert_eq!(p(&m1), p(&m2));
        assert_eq!(p(&b(Ge, v("x"), v("y"))), p(&b(Le, v("y"), v("x"))));
        assert_ne!(p(&b(Lt, v("x"), v("y"))), p(&b(Lt, v("y"), v("x"))));
    }

    #[test]
    fn constants_fold_with_c_semantics() {
        use BinOp::*;
        assert_eq!(p(&b(Div, n(-7), n(2))).as_constant(), Some(-3));
        assert_eq!(p(&b(Rem, n(-7), n(2))).as_constant(), Some(-1));
        assert_eq!(p(&b(Div, n(i64::MIN), n(-1))).as_constant(), Some(i64::MIN));
        assert_eq!(p(&b(Rem, n(i64::MIN), n(-1))).as_constant(), Some(0));
        assert_eq!(p(&b(And, n(2), n(-1))).as_constant(), Some(1));
        assert_eq!(p(&b(Or, n(0), n(0))).as_constant(), Some(0));
        assert_eq!(p(&b(Max, n(3), n(-3))).as_constant(), Some(3));
        assert_eq!(p(&b(Add, n(i64::MAX), n(1))).as_constant(), Some(i64::MIN));
        assert_eq!(
            p(&SExp::Un(UnOp::Not, Box::new(n(5)), Span::DUMMY)).as_constant(),
            Some(0)
        );
        // Folding happens after normalisation: (x - x) / 2 is 0.
        assert_eq!(
            p(&b(Div, b(Sub, v("x"), v("x")), n(2))).as_constant(),
            Some(0)
        );
    }

    #[test]
    fn division_by_zero_stays_and_evaluates_to_none() {
        use BinOp::*;
        let q = p(&b(Div, n(7), n(0)));
        assert_eq!(q.as_constant(), None);
        assert_eq!(q.eval(&|_: &Name| None), None);
        assert_eq!(p(&q.to_sexp()), q);
        let r = p(&b(Rem, v("a"), v("b")));
        let zero_b = |x: &Name| Some(if x.as_str() == "b" { 0 } else { 5 });
        assert_eq!(r.eval(&zero_b), None);
        assert_eq!(r.eval(&|_: &Name| Some(5)), Some(0));
        assert_eq!(r.eval(&|x: &Name| (x.as_str() == "a").then_some(1)), None);
    }

    #[test]
    fn extreme_coefficients_round_trip() {
        use BinOp::*;
        let q = p(&b(Add, b(Mul, n(i64::MIN), v("x")), n(i64::MIN)));
        assert_eq!(p(&q.to_sexp()), q);
        assert_eq!(q.eval(&|_: &Name| Some(1)), Some(0));
        let r = p(&b(Sub, n(1), b(Mul, n(3), v("y"))));
        assert_eq!(r.to_string(), "-3*y + 1");
        assert_eq!(p(&r.to_sexp()), r);
        assert_eq!(Poly::constant(0).to_string(), "0");
        assert_eq!(Poly::constant(0).to_sexp(), n(0));
    }

    #[test]
    fn substitution_refolds_opaque_terms() {
        use BinOp::*;
        let q = p(&b(Add, b(Div, v("n"), v("k")), v("k")));
        let k = Name::new("k");
        let r = q.subst(&|x: &Name| (*x == k).then(|| Poly::constant(4)));
        assert_eq!(r.to_string(), "(n / 4) + 4");
        let s = r.subst(&|x: &Name| (x.as_str() == "n").then(|| Poly::constant(9)));
        assert_eq!(s.as_constant(), Some(6));
        assert_eq!(
            q.vars()
                .into_iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>(),
            ["k", "n"]
        );
    }

    #[test]
    fn odd_names_keep_printing_injective() {
        use BinOp::*;
        let odd = p(&b(Div, v("a * b"), v("c")));
        let plain = p(&b(Div, b(Mul, v("a"), v("b")), v("c")));
        assert_ne!(odd, plain);
        assert_eq!(odd.to_string(), "(\"a * b\" / c)");
    }

    #[test]
    fn huge_products_stay_opaque_and_canonical() {
        use BinOp::*;
        let e = (0..16)
            .map(|i| b(Add, v(&format!("x{i}")), n(1)))
            .reduce(|a, e| b(Mul, a, e))
            .unwrap_or_else(|| n(1));
        let q = p(&e);
        assert!(q.terms().count() <= MUL_LIMIT);
        assert_eq!(p(&q.to_sexp()), q);
        assert_eq!(q.eval(&|_: &Name| Some(1)), Some(1 << 16));
    }

    #[test]
    fn std_ops_agree_with_methods() {
        let (x, y) = (Poly::var(&Name::new("x")), Poly::var(&Name::new("y")));
        assert_eq!(
            &(&x + &y) * &(&x - &y),
            Poly::sub(&Poly::mul(&x, &x), &Poly::mul(&y, &y))
        );
        assert_eq!(-&x, Poly::neg(&x));
    }
}
