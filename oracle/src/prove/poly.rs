//! Polynomials over the mathematical integers, for the LMAD procedure.
//!
//! The variables (atoms) are numbered by an [`Atoms`] table: the program's
//! variables, the opaque subterms of funmem-lang's normal form (`a / b`,
//! `min(a, b)`, comparisons), which the procedure treats as unknown
//! integers, and fresh variables the procedure introduces, which are known
//! to be non-negative. Coefficients are `i128` with checked arithmetic: an
//! overflow makes the operation fail, and the procedure gives up (never
//! answers wrongly).

use funmem_lang::ast::SExp;
use funmem_lang::poly::{Factor, Poly};
use std::collections::{BTreeMap, HashMap};

/// An atom's number.
pub type Atom = u32;

/// The atoms of one obligation.
#[derive(Clone, Debug, Default)]
pub struct Atoms {
    /// Search steps left to the procedure working on these atoms.
    pub work: usize,
    names: Vec<String>,
    nonneg: Vec<bool>,
    index: HashMap<String, Atom>,
}

impl Atoms {
    /// The atom named `name` (a program variable or an opaque subterm).
    pub fn named(&mut self, name: &str) -> Atom {
        if let Some(&a) = self.index.get(name) {
            return a;
        }
        let a = self.names.len() as Atom;
        self.names.push(name.to_string());
        self.nonneg.push(false);
        self.index.insert(name.to_string(), a);
        a
    }

    /// A new atom known to be non-negative.
    pub fn fresh(&mut self) -> Atom {
        let a = self.names.len() as Atom;
        self.names.push(format!("%{a}"));
        self.nonneg.push(true);
        a
    }

    /// Whether the atom is a fresh non-negative one.
    pub fn is_nonneg(&self, a: Atom) -> bool {
        self.nonneg[a as usize]
    }

    /// The atom's name.
    pub fn name(&self, a: Atom) -> &str {
        &self.names[a as usize]
    }

    /// A scalar expression as a polynomial over atoms; `None` when a
    /// coefficient is too large to be trusted (the normal form wraps).
    pub fn poly(&mut self, e: &SExp) -> Option<P> {
        let p = Poly::from_sexp(e);
        let mut out = P::zero();
        for (m, k) in p.terms() {
            // Coefficients near the 64-bit range may have wrapped.
            if k.unsigned_abs() > 1 << 40 {
                return None;
            }
            let mut mono: Vec<Atom> =
                m.0.iter()
                    .map(|f| match f {
                        Factor::Var(x) => self.named(x.as_str()),
                        Factor::Opaque(t) => self.named(&format!("({t})")),
                    })
                    .collect();
            mono.sort_unstable();
            out.add_term(mono, k as i128)?;
        }
        Some(out)
    }
}

/// Most term products one multiplication (or substitution) may make.
pub const MAX_PRODUCTS: usize = 1 << 12;

/// A polynomial: monomials (sorted atom lists, with repetition) to non-zero
/// coefficients.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct P(pub BTreeMap<Vec<Atom>, i128>);

impl P {
    /// 0.
    pub fn zero() -> P {
        P(BTreeMap::new())
    }

    /// The constant `k`.
    pub fn constant(k: i128) -> P {
        let mut p = P::zero();
        if k != 0 {
            p.0.insert(Vec::new(), k);
        }
        p
    }

    /// The atom `a`.
    pub fn atom(a: Atom) -> P {
        let mut p = P::zero();
        p.0.insert(vec![a], 1);
        p
    }

    fn add_term(&mut self, mono: Vec<Atom>, k: i128) -> Option<()> {
        let e = self.0.entry(mono).or_insert(0);
        *e = e.checked_add(k)?;
        if *e == 0 {
            // Remove the zero entry: find it again (rare path).
            self.0.retain(|_, v| *v != 0);
        }
        Some(())
    }

    /// The constant term.
    pub fn constant_term(&self) -> i128 {
        self.0.get(&Vec::new()).copied().unwrap_or(0)
    }

    /// The value, when the polynomial is a constant.
    pub fn as_constant(&self) -> Option<i128> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// `self + o`.
    pub fn add(&self, o: &P) -> Option<P> {
        let mut r = self.clone();
        for (m, k) in &o.0 {
            r.add_term(m.clone(), *k)?;
        }
        Some(r)
    }

    /// `self - o`.
    pub fn sub(&self, o: &P) -> Option<P> {
        self.add(&o.scale(-1)?)
    }

    /// `k * self`.
    pub fn scale(&self, k: i128) -> Option<P> {
        if k == 0 {
            return Some(P::zero());
        }
        let mut r = P::zero();
        for (m, c) in &self.0 {
            r.0.insert(m.clone(), c.checked_mul(k)?);
        }
        Some(r)
    }

    /// `self + k`.
    pub fn plus(&self, k: i128) -> Option<P> {
        self.add(&P::constant(k))
    }

    /// `self * o`; `None` on overflow, or when the product would have more
    /// than [`MAX_PRODUCTS`] term products (a bound on the work of one
    /// multiplication, whatever the procedure asks).
    pub fn mul(&self, o: &P) -> Option<P> {
        if self.0.len().saturating_mul(o.0.len()) > MAX_PRODUCTS {
            return None;
        }
        let mut r = P::zero();
        for (m1, k1) in &self.0 {
            for (m2, k2) in &o.0 {
                let mut m = Vec::with_capacity(m1.len() + m2.len());
                m.extend_from_slice(m1);
                m.extend_from_slice(m2);
                m.sort_unstable();
                r.add_term(m, k1.checked_mul(*k2)?)?;
            }
        }
        Some(r)
    }

    /// Whether atom `a` occurs.
    pub fn mentions(&self, a: Atom) -> bool {
        self.0.keys().any(|m| m.contains(&a))
    }

    /// The atoms that occur, sorted, without repetition.
    pub fn atoms(&self) -> Vec<Atom> {
        let mut v: Vec<Atom> = self.0.keys().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// `self` with atom `a` replaced by `q`.
    pub fn subst(&self, a: Atom, q: &P) -> Option<P> {
        if !self.mentions(a) {
            return Some(self.clone());
        }
        let mut r = P::zero();
        let mut powers: Vec<P> = vec![P::constant(1)];
        for (m, k) in &self.0 {
            let e = m.iter().filter(|&&x| x == a).count();
            while powers.len() <= e {
                let next = powers.last()?.mul(q)?;
                powers.push(next);
            }
            // The term without `a`, times each term of q^e, added in place.
            let rest: Vec<Atom> = m.iter().copied().filter(|&x| x != a).collect();
            if powers[e].0.len() > MAX_PRODUCTS {
                return None;
            }
            for (m2, k2) in &powers[e].0 {
                let mut mono = Vec::with_capacity(rest.len() + m2.len());
                mono.extend_from_slice(&rest);
                mono.extend_from_slice(m2);
                mono.sort_unstable();
                r.add_term(mono, k.checked_mul(*k2)?)?;
            }
            if r.0.len() > MAX_PRODUCTS {
                return None;
            }
        }
        Some(r)
    }

    /// If every term is divisible by the monomial `c * m` (`m` a sorted
    /// atom list, `c > 0`), the quotient; otherwise `None`.
    pub fn div_exact(&self, c: i128, m: &[Atom]) -> Option<P> {
        let mut r = P::zero();
        for (mono, k) in &self.0 {
            r.0.insert(mono_div(mono, m)?, checked_div_exact(*k, c)?);
        }
        Some(r)
    }

    /// Splits into (the terms divisible by `c * m`, divided by it; the
    /// other terms).
    pub fn split_by(&self, c: i128, m: &[Atom]) -> (P, P) {
        let mut q = P::zero();
        let mut rest = P::zero();
        for (mono, k) in &self.0 {
            match (mono_div(mono, m), checked_div_exact(*k, c)) {
                (Some(qm), Some(qk)) => {
                    q.0.insert(qm, qk);
                }
                _ => {
                    rest.0.insert(mono.clone(), *k);
                }
            }
        }
        (q, rest)
    }

    /// The polynomial is one monomial `c * m` with `c > 0`.
    pub fn as_monomial(&self) -> Option<(i128, &[Atom])> {
        match self.0.iter().next() {
            Some((m, &k)) if self.0.len() == 1 && k > 0 => Some((k, m)),
            _ => None,
        }
    }

    /// Evaluates with the atoms' values.
    pub fn eval(&self, val: &impl Fn(Atom) -> Option<i128>) -> Option<i128> {
        let mut sum: i128 = 0;
        for (m, k) in &self.0 {
            let mut t = *k;
            for &a in m {
                t = t.checked_mul(val(a)?)?;
            }
            sum = sum.checked_add(t)?;
        }
        Some(sum)
    }
}

fn checked_div_exact(k: i128, c: i128) -> Option<i128> {
    (c != 0 && k % c == 0).then(|| k / c)
}

/// `mono / m` for sorted atom lists with repetition, if `m` divides it.
fn mono_div(mono: &[Atom], m: &[Atom]) -> Option<Vec<Atom>> {
    let mut rest = Vec::with_capacity(mono.len());
    let mut j = 0;
    for &a in mono {
        if j < m.len() && m[j] == a {
            j += 1;
        } else {
            rest.push(a);
        }
    }
    (j == m.len()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_and_division() {
        let mut at = Atoms::default();
        let n = at.named("n");
        let i = at.named("i");
        let pn = P::atom(n);
        let pi = P::atom(i);
        // (i*n + n) with i := n + 1 gives n*n + 2n.
        let p = pi.mul(&pn).unwrap().add(&pn).unwrap();
        let q = p.subst(i, &pn.plus(1).unwrap()).unwrap();
        let want = pn.mul(&pn).unwrap().add(&pn.scale(2).unwrap()).unwrap();
        assert_eq!(q, want);
        // 4*i*n + 2*n + 3 split by 2n.
        let p = pi
            .mul(&pn)
            .unwrap()
            .scale(4)
            .unwrap()
            .add(&pn.scale(2).unwrap())
            .unwrap()
            .plus(3)
            .unwrap();
        let (quot, rest) = p.split_by(2, &[n]);
        assert_eq!(quot, pi.scale(2).unwrap().plus(1).unwrap());
        assert_eq!(rest, P::constant(3));
        assert!(p.div_exact(2, &[n]).is_none());
        assert_eq!(P::constant(5).sub(&P::constant(5)).unwrap(), P::zero());
    }
}
