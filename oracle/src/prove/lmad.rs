//! The LMAD procedure: a fast, sound and incomplete decision procedure for
//! obligations over the common shapes of index functions, in the spirit of
//! Futhark's LMAD non-overlap checks. It answers "proved" or gives up.
//!
//! It works symbolically, over polynomials in the obligation's variables:
//!
//! 1. **Facts.** Each fact becomes constraints `p >= 0`, `p = 0` or
//!    `p != 0` (comparisons, `&&`, `!`; anything else is ignored, which is
//!    sound). Equalities that define a variable are substituted away. Every
//!    dimension of the claim's LMADs may be assumed non-empty (`n >= 1`),
//!    since every claim holds on an empty domain. Each disequality splits
//!    the problem in two cases (`p >= 1` or `p <= -1`); every case must be
//!    proved.
//! 2. **Signs.** `p >= 0` is shown by *bound substitution*: a constraint
//!    `x - L >= 0` (or `U - x >= 0`) lets `x` be replaced by `L + x'` (or
//!    `U - x'`) with a fresh `x' >= 0`. A search over these choices looks
//!    for a form of `p` whose constant is non-negative and whose other
//!    monomials all have positive coefficients and only fresh (so
//!    non-negative) atoms, or even powers. This covers chains such as
//!    `0 <= t < T` and products such as `(j - i - 1) * n` with `i < j`.
//!    `min(a, b)` is `a` or `b` (a disjunction) and below both; `x / d` and
//!    `x % d` satisfy `x = d*(x/d) + x%d` and `0 <= x%d < d` when
//!    `d >= 1` and `x >= 0` (truncating division). A case is vacuous when
//!    its facts contradict each other, by signs or by divisibility of its
//!    equalities (`t = 2*q1 + r`, `t + 1 = 2*q2 + r`).
//! 3. **Claims.**
//!    - *in-bounds* and *at-most*: the smallest and largest address (from
//!      the signs of the strides) against the block size; `b - a >= 0`.
//!    - *disjoint*: a common divisor of every stride's coefficients does
//!      not divide the offsets' constant difference (gcd test: strides 9
//!      and 6 at offsets 1 apart); the images' intervals are apart (offsets apart by at
//!      least the extent; slices at different rows); or, for a modulus `S`
//!      among the strides, both LMADs split as `S * Q + R` with every
//!      residue `R` in `[0, S)`, and either the residues' intervals are
//!      apart (even and odd rows; interleaved GPU layouts) or the
//!      quotients `Q` are disjoint, recursively (blocks of a tiled matrix).
//!      Failing those, cases on the order of a variable of each LMAD, and
//!      cases on each value of a variable the facts bound between near
//!      constants (a ping-pong buffer `0 <= p <= 1`).
//!    - *injective*: some order of the dimensions in which each stride
//!      (in absolute value) exceeds the span of the dimensions inside it.

use super::poly::{Atom, Atoms, P};
use funmem_lang::ast::{BinOp, SExp, UnOp};
use funmem_lang::lmad::Lmad;
use funmem_lang::obligation::{Claim, Obligation};
use std::collections::HashMap;

/// Most values of one variable the disjointness test tries one by one.
const MAX_VALUES: i128 = 4;
/// Most equalities the divisibility test compares pairwise.
const MAX_EQUALITIES: usize = 8;
/// Most disequalities split into cases; further ones are ignored.
const MAX_SPLITS: usize = 4;
/// Most search nodes one sign question may visit.
const SIGN_BUDGET: usize = 400;
/// Deepest recursion on quotients in the disjointness test.
const MAX_DEPTH: usize = 4;
/// Most dimensions whose orders the injectivity test tries.
const MAX_PERMUTED: usize = 5;

/// Highest degree of a polynomial the procedure takes on: bound
/// substitution multiplies out powers, so the work grows with the degree's
/// binomial coefficients (a product of degree 27 kept it busy for
/// minutes). The shapes passes emit have degree 4 at most.
pub const MAX_DEGREE: usize = 8;
/// Most terms of a polynomial the procedure takes on, for the same reason.
pub const MAX_TERMS: usize = 256;

/// Why the procedure gave up, or `Ok` when it proved the obligation.
pub fn prove(o: &Obligation) -> Result<(), String> {
    // Conversions and floats as unknown integers (see `view`).
    let view = super::view::integer_view(o);
    let o: &Obligation = &view.obligation;
    // `a <= a` and `a <= max(.., a, ..)` hold whatever `a` is, even where
    // its polynomial is out of reach (huge literals, comparisons): memory
    // expansion states one for every part it sizes.
    if let Claim::AtMost(a, b) = &o.claim {
        if at_most_by_max(a, b) {
            return Ok(());
        }
    }
    within_budget(o)?;
    // First with the defining equalities substituted; then, since that can
    // turn a stride that is a name into a sum that no modulus divides, with
    // every equality kept as two inequalities.
    prove_mode(o, true).or_else(|_| prove_mode(o, false))
}

/// Whether `b` is `a`, or a `max` with `a` among its (nested) operands.
fn at_most_by_max(a: &SExp, b: &SExp) -> bool {
    a == b
        || matches!(b, SExp::Bin(BinOp::Max, l, r, _) if at_most_by_max(a, l) || at_most_by_max(a, r))
}

/// Refuses an obligation with a polynomial beyond [`MAX_DEGREE`] or
/// [`MAX_TERMS`] (in funmem-lang's normal form, where an opaque subterm
/// counts as one factor).
fn within_budget(o: &Obligation) -> Result<(), String> {
    let mut why = None;
    let mut look = |e: &SExp| {
        if why.is_some() {
            return;
        }
        let p = funmem_lang::poly::Poly::from_sexp(e);
        let degree = p.terms().map(|(m, _)| m.0.len()).max().unwrap_or(0);
        let terms = p.terms().count();
        if degree > MAX_DEGREE {
            why = Some(format!(
                "polynomial too large for the LMAD procedure (degree {degree}, more than {MAX_DEGREE})"
            ));
        } else if terms > MAX_TERMS {
            why = Some(format!(
                "polynomial too large for the LMAD procedure ({terms} terms, more than {MAX_TERMS})"
            ));
        }
    };
    o.claim.for_each_sexp(&mut look);
    for f in &o.facts {
        look(&f.exp);
    }
    why.map_or(Ok(()), Err)
}

/// Most search nodes one obligation may visit in all (both modes, every
/// case): a bound on the time the procedure spends on any input.
const WORK_LIMIT: usize = 300_000;

fn prove_mode(o: &Obligation, substitute: bool) -> Result<(), String> {
    let mut atoms = Atoms::default();
    atoms.work = WORK_LIMIT / 2;
    let problem = Problem::build(o, &mut atoms).ok_or("a coefficient is too large")?;
    for problem in problem
        .expand(&mut atoms)
        .ok_or("a coefficient is too large")?
    {
        for case in problem.cases(&mut atoms, substitute)? {
            let mut cx = Cx {
                atoms: &mut atoms,
                ge: case.ge,
                bounds: None,
                memo: HashMap::new(),
            };
            if !cx.claim(&case.claim) && !cx.infeasible() {
                return Err(format!(
                    "the LMAD procedure could not show the claim{}",
                    if case.described.is_empty() {
                        String::new()
                    } else {
                        format!(" when {}", case.described)
                    }
                ));
            }
        }
    }
    Ok(())
}

/// Most problems the disjunctions of the facts expand to; further
/// disjunctions are ignored.
const MAX_ALTERNATIVES: usize = 16;

/// The identities of the `min` and `max` subterms of `e`:
/// `min(a, b) <= a`, `min(a, b) <= b`, `max(a, b) >= a`, `max(a, b) >= b`.
fn min_max_facts(e: &SExp, out: &mut Vec<SExp>) {
    match e {
        SExp::Atom(_) => {}
        SExp::Un(_, a, _) => min_max_facts(a, out),
        SExp::Bin(op, a, b, _) => {
            min_max_facts(a, out);
            min_max_facts(b, out);
            let rel = match op {
                BinOp::Min => BinOp::Le,
                BinOp::Max => BinOp::Ge,
                _ => return,
            };
            for x in [a, b] {
                out.push(SExp::bin(rel, e.clone(), (**x).clone()));
            }
            // And it is one of its operands (a disjunction, split later).
            out.push(SExp::bin(
                BinOp::Or,
                SExp::bin(BinOp::Eq, e.clone(), (**a).clone()),
                SExp::bin(BinOp::Eq, e.clone(), (**b).clone()),
            ));
        }
    }
}

/// The identities of the `x / d` and `x % d` subterms of `e`, division
/// truncating toward zero as in the language: when `d >= 1`,
/// `x == d * (x / d) + x % d`, and `0 <= x % d < d` when `x >= 0`.
/// Written as one fact, `d < 1 || (x == d*(x/d) + x%d && (x < 0 || ...))`,
/// whose disjunctions split the problem into cases.
fn div_rem_facts(e: &SExp, out: &mut Vec<SExp>) {
    match e {
        SExp::Atom(_) => {}
        SExp::Un(_, a, _) => div_rem_facts(a, out),
        SExp::Bin(op, x, d, _) => {
            div_rem_facts(x, out);
            div_rem_facts(d, out);
            if !matches!(op, BinOp::Div | BinOp::Rem) {
                return;
            }
            let (x, d) = ((**x).clone(), (**d).clone());
            let q = SExp::bin(BinOp::Div, x.clone(), d.clone());
            let r = SExp::bin(BinOp::Rem, x.clone(), d.clone());
            let ident = SExp::bin(
                BinOp::Eq,
                x.clone(),
                SExp::bin(BinOp::Add, SExp::bin(BinOp::Mul, d.clone(), q), r.clone()),
            );
            let range = SExp::bin(
                BinOp::Or,
                SExp::bin(BinOp::Lt, x, SExp::int(0)),
                SExp::bin(
                    BinOp::And,
                    SExp::bin(BinOp::Le, SExp::int(0), r.clone()),
                    SExp::bin(BinOp::Lt, r, d.clone()),
                ),
            );
            let fact = SExp::bin(
                BinOp::Or,
                SExp::bin(BinOp::Lt, d, SExp::int(1)),
                SExp::bin(BinOp::And, ident, range),
            );
            let text = fact.to_string();
            if !out.iter().any(|f| f.to_string() == text) {
                out.push(fact);
            }
        }
    }
}

/// Greatest common divisor of the magnitudes (0 with 0).
fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `p = 0` has no integer solution by divisibility: the coefficients of
/// its non-constant monomials have a common divisor that does not divide
/// its constant (every atom stands for an integer).
fn no_integer_root(p: &P) -> bool {
    let g =
        p.0.iter()
            .filter(|(m, _)| !m.is_empty())
            .fold(0, |g, (_, &k)| gcd(g, k));
    let c = p.constant_term();
    if g == 0 {
        c != 0
    } else {
        c % g != 0
    }
}

/// Disjointness by a gcd test (the constant-stride case of Banerjee's
/// test, generalised to polynomial strides): `a`'s address minus `b`'s is
/// the offsets' difference plus multiples of the strides, so when a common
/// divisor of every stride's coefficients and of the difference's
/// non-constant coefficients does not divide the difference's constant,
/// the two never meet (strides 9 and 6 at offsets 1 apart: gcd 3).
fn gcd_apart(a: &PLmad, b: &PLmad) -> bool {
    let Some(d) = a.offset.sub(&b.offset) else {
        return false;
    };
    let mut g =
        d.0.iter()
            .filter(|(m, _)| !m.is_empty())
            .fold(0, |g, (_, &k)| gcd(g, k));
    for (_, s) in a.dims.iter().chain(&b.dims) {
        for &k in s.0.values() {
            g = gcd(g, k);
        }
    }
    let c = d.constant_term();
    g > 1 && c % g != 0
}

/// An LMAD over polynomials.
#[derive(Clone, Debug)]
struct PLmad {
    offset: P,
    dims: Vec<(P, P)>,
}

#[derive(Clone, Debug)]
enum PClaim {
    Disjoint(PLmad, PLmad),
    Injective(PLmad),
    InBounds(PLmad, P),
    AtMost(P, P),
}

impl PClaim {
    fn map(&self, f: &mut impl FnMut(&P) -> Option<P>) -> Option<PClaim> {
        Some(match self {
            PClaim::Disjoint(a, b) => PClaim::Disjoint(map_lmad(a, f)?, map_lmad(b, f)?),
            PClaim::Injective(a) => PClaim::Injective(map_lmad(a, f)?),
            PClaim::InBounds(a, n) => {
                let a = map_lmad(a, f)?;
                PClaim::InBounds(a, f(n)?)
            }
            PClaim::AtMost(a, b) => PClaim::AtMost(f(a)?, f(b)?),
        })
    }
}

/// The obligation as constraints over polynomials.
#[derive(Clone)]
struct Problem {
    claim: PClaim,
    ge: Vec<P>,
    eq: Vec<P>,
    /// Disjunctions not yet split: one of the two (fact, polarity) holds.
    ors: Vec<[(SExp, bool); 2]>,
    ne: Vec<P>,
}

struct Case {
    claim: PClaim,
    ge: Vec<P>,
    described: String,
}

impl Problem {
    fn build(o: &Obligation, atoms: &mut Atoms) -> Option<Problem> {
        let lmad = |l: &Lmad<SExp>, atoms: &mut Atoms| -> Option<PLmad> {
            Some(PLmad {
                offset: atoms.poly(&l.offset)?,
                dims: l
                    .dims
                    .iter()
                    .map(|d| Some((atoms.poly(&d.elems)?, atoms.poly(&d.stride)?)))
                    .collect::<Option<_>>()?,
            })
        };
        let claim = match &o.claim {
            Claim::Disjoint(a, b) => PClaim::Disjoint(lmad(a, atoms)?, lmad(b, atoms)?),
            Claim::Injective(a) => PClaim::Injective(lmad(a, atoms)?),
            Claim::InBounds(a, n) => PClaim::InBounds(lmad(a, atoms)?, atoms.poly(n)?),
            Claim::AtMost(a, b) => PClaim::AtMost(atoms.poly(a)?, atoms.poly(b)?),
        };
        let mut pb = Problem {
            claim,
            ge: Vec::new(),
            eq: Vec::new(),
            ne: Vec::new(),
            ors: Vec::new(),
        };
        let mut identities = Vec::new();
        o.claim.for_each_sexp(&mut |e| {
            min_max_facts(e, &mut identities);
            div_rem_facts(e, &mut identities);
        });
        for f in &o.facts {
            min_max_facts(&f.exp, &mut identities);
            div_rem_facts(&f.exp, &mut identities);
            pb.fact(&f.exp, true, atoms)?;
        }
        for e in &identities {
            pb.fact(e, true, atoms)?;
        }
        // Every claim holds on an empty domain: assume every dimension has
        // an element.
        let dims: Vec<P> = match &pb.claim {
            PClaim::Disjoint(a, b) => a.dims.iter().chain(&b.dims).map(|d| d.0.clone()).collect(),
            PClaim::Injective(a) | PClaim::InBounds(a, _) => {
                a.dims.iter().map(|d| d.0.clone()).collect()
            }
            PClaim::AtMost(..) => Vec::new(),
        };
        for n in dims {
            pb.ge.push(n.plus(-1)?);
        }
        Some(pb)
    }

    /// Adds the constraints of fact `e` (or of its negation, when `!pos`).
    fn fact(&mut self, e: &SExp, pos: bool, atoms: &mut Atoms) -> Option<()> {
        let diff = |a: &SExp, b: &SExp, atoms: &mut Atoms| -> Option<P> {
            atoms.poly(b)?.sub(&atoms.poly(a)?)
        };
        match e {
            SExp::Bin(op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge), a, b, _) => {
                // Normalise to `lo < hi` or `lo <= hi`.
                let (lo, hi, strict) = match op {
                    BinOp::Lt => (a, b, true),
                    BinOp::Le => (a, b, false),
                    BinOp::Gt => (b, a, true),
                    _ => (b, a, false),
                };
                let d = diff(lo, hi, atoms)?;
                // lo < hi: hi - lo - 1 >= 0; not (lo < hi): lo - hi >= 0.
                // lo <= hi: hi - lo >= 0; not (lo <= hi): lo - hi - 1 >= 0.
                let c = match (strict, pos) {
                    (true, true) => d.plus(-1)?,
                    (true, false) => d.scale(-1)?,
                    (false, true) => d,
                    (false, false) => d.scale(-1)?.plus(-1)?,
                };
                self.ge.push(c);
            }
            SExp::Bin(op @ (BinOp::Eq | BinOp::Ne), a, b, _) => {
                let d = diff(a, b, atoms)?;
                if (*op == BinOp::Eq) == pos {
                    self.eq.push(d);
                } else {
                    self.ne.push(d);
                }
            }
            SExp::Bin(BinOp::And, a, b, _) if pos => {
                self.fact(a, true, atoms)?;
                self.fact(b, true, atoms)?;
            }
            SExp::Bin(BinOp::Or, a, b, _) if !pos => {
                self.fact(a, false, atoms)?;
                self.fact(b, false, atoms)?;
            }
            // A disjunction splits the problem (see `expand`).
            SExp::Bin(BinOp::Or, a, b, _) => self
                .ors
                .push([((**a).clone(), true), ((**b).clone(), true)]),
            SExp::Bin(BinOp::And, a, b, _) => self
                .ors
                .push([((**a).clone(), false), ((**b).clone(), false)]),
            SExp::Un(UnOp::Not, x, _) => self.fact(x, !pos, atoms)?,
            _ => {
                let p = atoms.poly(e)?;
                if pos {
                    self.ne.push(p);
                } else {
                    self.eq.push(p);
                }
            }
        }
        Some(())
    }

    /// One problem per choice of a disjunct of each disjunction.
    fn expand(self, atoms: &mut Atoms) -> Option<Vec<Problem>> {
        let mut done = Vec::new();
        let mut todo = vec![self];
        while let Some(mut p) = todo.pop() {
            let Some(alts) = p.ors.pop() else {
                done.push(p);
                continue;
            };
            if done.len() + todo.len() + 2 > MAX_ALTERNATIVES {
                // Too many: drop this disjunction (a weaker problem).
                todo.push(p);
                continue;
            }
            for (e, pos) in alts {
                let mut q = p.clone();
                q.fact(&e, pos, atoms)?;
                todo.push(q);
            }
        }
        Some(done)
    }

    /// Substitutes the defining equalities (or, without `substitute`, keeps
    /// each as two inequalities), then splits on disequalities.
    fn cases(mut self, atoms: &mut Atoms, substitute: bool) -> Result<Vec<Case>, String> {
        let overflow = || "a coefficient is too large".to_string();
        let mut eqs = std::mem::take(&mut self.eq);
        while let Some(e) = eqs.pop() {
            if let Some(c) = e.as_constant() {
                if c != 0 {
                    // A false fact: the obligation holds vacuously.
                    return Ok(Vec::new());
                }
                continue;
            }
            match defined_atom(&e, atoms).filter(|_| substitute) {
                Some((x, def)) => {
                    let mut s = |p: &P| p.subst(x, &def);
                    self.claim = self.claim.map(&mut s).ok_or_else(overflow)?;
                    for v in [&mut self.ge, &mut self.ne, &mut eqs] {
                        for p in v.iter_mut() {
                            *p = s(p).ok_or_else(overflow)?;
                        }
                    }
                }
                None => {
                    self.ge.push(e.clone());
                    self.ge.push(e.scale(-1).ok_or_else(overflow)?);
                }
            }
        }
        let splits: Vec<P> = self
            .ne
            .iter()
            .filter(|p| p.as_constant().is_none())
            .take(MAX_SPLITS)
            .cloned()
            .collect();
        if self.ne.iter().any(|p| p.as_constant() == Some(0)) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for mask in 0..(1u32 << splits.len()) {
            let mut ge = self.ge.clone();
            let mut described = Vec::new();
            for (k, p) in splits.iter().enumerate() {
                // p >= 1, or -p >= 1.
                let neg = mask & (1 << k) != 0;
                let q = if neg { p.scale(-1) } else { Some(p.clone()) };
                ge.push(q.and_then(|q| q.plus(-1)).ok_or_else(overflow)?);
                described.push(format!(
                    "{} {} 0",
                    show(p, atoms),
                    if neg { "<" } else { ">" }
                ));
            }
            out.push(Case {
                claim: self.claim.clone(),
                ge,
                described: described.join(", "),
            });
        }
        Ok(out)
    }
}

/// An atom that `e = 0` defines: `e = ±x + rest` with `x` nowhere in
/// `rest`; gives `x` and its definition.
fn defined_atom(e: &P, atoms: &Atoms) -> Option<(Atom, P)> {
    for (m, &k) in &e.0 {
        if m.len() == 1 && (k == 1 || k == -1) && !atoms.is_nonneg(m[0]) {
            let x = m[0];
            let rest = e.sub(&P::atom(x).scale(k)?)?;
            if !rest.mentions(x) {
                // k*x + rest = 0, so x = -rest / k.
                return Some((x, rest.scale(-k)?));
            }
        }
    }
    None
}

/// A polynomial in readable form, for messages.
pub(super) fn show(p: &P, atoms: &Atoms) -> String {
    if p.0.is_empty() {
        return "0".into();
    }
    let mut s = String::new();
    for (i, (m, k)) in p.0.iter().rev().enumerate() {
        let (sign, k) = if *k < 0 { ("-", -k) } else { ("+", *k) };
        if i > 0 {
            s.push_str(&format!(" {sign} "));
        } else if sign == "-" {
            s.push('-');
        }
        let factors: Vec<&str> = m.iter().map(|&a| atoms.name(a)).collect();
        match (k, factors.is_empty()) {
            (_, true) => s.push_str(&k.to_string()),
            (1, false) => s.push_str(&factors.join("*")),
            _ => s.push_str(&format!("{k}*{}", factors.join("*"))),
        }
    }
    s
}

/// One case: the known non-negative polynomials.
struct Cx<'a> {
    atoms: &'a mut Atoms,
    ge: Vec<P>,
    /// The bounds `ge` gives, computed once (see [`Cx::set_ge`]).
    bounds: Option<Vec<(Atom, P, bool)>>,
    /// Answers of [`Cx::nonneg`] under this `ge`.
    memo: HashMap<P, bool>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sign {
    NonNeg,
    NonPos,
}

impl Cx<'_> {
    fn claim(&mut self, c: &PClaim) -> bool {
        match c {
            PClaim::AtMost(a, b) => b.sub(a).is_some_and(|d| self.nonneg(&d)),
            PClaim::InBounds(a, n) => match self.interval(a) {
                Some((lo, hi)) => {
                    self.nonneg(&lo)
                        && n.sub(&hi)
                            .and_then(|d| d.plus(-1))
                            .is_some_and(|d| self.nonneg(&d))
                }
                None => false,
            },
            PClaim::Disjoint(a, b) => {
                self.disjoint(a, b, 0)
                    || self.disjoint_by_order(a, b)
                    || self.disjoint_by_values(a, b)
            }
            PClaim::Injective(a) => self.injective(a),
        }
    }

    /// Replaces the known facts, returning the old ones.
    fn set_ge(&mut self, ge: Vec<P>) -> Vec<P> {
        self.bounds = None;
        self.memo.clear();
        std::mem::replace(&mut self.ge, ge)
    }

    /// The facts of this case contradict each other: one of them is shown
    /// negative from all of them (so the claim holds vacuously).
    fn infeasible(&mut self) -> bool {
        if self.equalities_clash() {
            return true;
        }
        let ge = self.ge.clone();
        ge.iter().any(|g| {
            g.scale(-1)
                .and_then(|m| m.plus(-1))
                .is_some_and(|m| self.nonneg(&m))
        })
    }

    /// The equalities among the facts (`p >= 0` beside `-p >= 0`), or a
    /// sum or difference of two of them, have no integer solution by
    /// divisibility: `t = 2*q1 + r` and `t + 1 = 2*q2 + r` give
    /// `2*(q1 - q2) + 1 = 0`.
    fn equalities_clash(&self) -> bool {
        let eqs: Vec<&P> = self
            .ge
            .iter()
            .filter(|g| g.scale(-1).is_some_and(|m| self.ge.contains(&m)))
            .take(MAX_EQUALITIES)
            .collect();
        eqs.iter().enumerate().any(|(k, e)| {
            no_integer_root(e)
                || eqs[k + 1..].iter().any(|f| {
                    e.sub(f).is_some_and(|d| no_integer_root(&d))
                        || e.add(f).is_some_and(|d| no_integer_root(&d))
                })
        })
    }

    /// `p >= 0` in this case.
    fn nonneg(&mut self, p: &P) -> bool {
        if let Some(&r) = self.memo.get(p) {
            return r;
        }
        let mut budget = SIGN_BUDGET;
        let bounds = match self.bounds.take() {
            Some(b) => b,
            None => self.bounds(),
        };
        let r = self.search(p.clone(), &bounds, &mut Vec::new(), &mut budget);
        self.bounds = Some(bounds);
        self.memo.insert(p.clone(), r);
        r
    }

    fn sign(&mut self, p: &P) -> Option<Sign> {
        if self.nonneg(p) {
            return Some(Sign::NonNeg);
        }
        let m = p.scale(-1)?;
        self.nonneg(&m).then_some(Sign::NonPos)
    }

    /// The bounds the constraints give: (atom, bound, is it a lower bound).
    fn bounds(&self) -> Vec<(Atom, P, bool)> {
        let mut out = Vec::new();
        for g in &self.ge {
            for (m, &k) in &g.0 {
                if m.len() != 1 || (k != 1 && k != -1) {
                    continue;
                }
                let x = m[0];
                let Some(rest) = P::atom(x).scale(k).and_then(|t| g.sub(&t)) else {
                    continue;
                };
                if rest.mentions(x) {
                    continue;
                }
                // x + rest >= 0: x >= -rest.  -x + rest >= 0: x <= rest.
                let bound = if k == 1 { rest.scale(-1) } else { Some(rest) };
                if let Some(b) = bound {
                    out.push((x, b, k == 1));
                }
            }
        }
        out
    }

    /// Searches for bound substitutions that make `q` evidently
    /// non-negative. `sub` holds the substitutions made so far.
    fn search(
        &mut self,
        q: P,
        bounds: &[(Atom, P, bool)],
        sub: &mut Vec<(Atom, P)>,
        budget: &mut usize,
    ) -> bool {
        if evidently_nonneg(&q, self.atoms) {
            return true;
        }
        if *budget == 0 || self.atoms.work == 0 {
            return false;
        }
        *budget -= 1;
        self.atoms.work -= 1;
        // The first atom of q that has a bound and was not substituted.
        let Some(x) = q.atoms().into_iter().find(|&a| {
            !self.atoms.is_nonneg(a)
                && !sub.iter().any(|(y, _)| *y == a)
                && bounds.iter().any(|(y, ..)| *y == a)
        }) else {
            return false;
        };
        for (y, b, lower) in bounds {
            if *y != x {
                continue;
            }
            // The bound in terms of what has been substituted so far.
            let mut bb = Some(b.clone());
            for (z, r) in sub.iter() {
                bb = bb.and_then(|p| p.subst(*z, r));
            }
            let Some(bb) = bb else { continue };
            if bb.mentions(x) {
                continue;
            }
            let fresh = P::atom(self.atoms.fresh());
            let repl = if *lower {
                bb.add(&fresh)
            } else {
                bb.sub(&fresh)
            };
            let Some(repl) = repl else { continue };
            let Some(q2) = q.subst(x, &repl) else {
                continue;
            };
            sub.push((x, repl));
            let ok = self.search(q2, bounds, sub, budget);
            sub.pop();
            if ok {
                return true;
            }
            if *budget == 0 {
                return false;
            }
        }
        false
    }

    /// The smallest and largest address of a non-empty LMAD, when the
    /// signs of its strides are known.
    fn interval(&mut self, l: &PLmad) -> Option<(P, P)> {
        let mut lo = l.offset.clone();
        let mut hi = l.offset.clone();
        for (n, s) in &l.dims {
            let ext = n.plus(-1)?.mul(s)?;
            match self.sign(s)? {
                Sign::NonNeg => hi = hi.add(&ext)?,
                Sign::NonPos => lo = lo.add(&ext)?,
            }
        }
        Some((lo, hi))
    }

    /// The intervals of two LMADs are apart.
    fn apart(&mut self, a: &PLmad, b: &PLmad) -> bool {
        let (Some((alo, ahi)), Some((blo, bhi))) = (self.interval(a), self.interval(b)) else {
            return false;
        };
        let gap = |lo: &P, hi: &P| lo.sub(hi).and_then(|d| d.plus(-1));
        gap(&blo, &ahi).is_some_and(|d| self.nonneg(&d))
            || gap(&alo, &bhi).is_some_and(|d| self.nonneg(&d))
    }

    fn disjoint(&mut self, a: &PLmad, b: &PLmad, depth: usize) -> bool {
        if gcd_apart(a, b) || self.apart(a, b) {
            return true;
        }
        if depth >= MAX_DEPTH {
            return false;
        }
        // Candidate moduli: the strides that are positive monomials.
        let mut moduli: Vec<(i128, Vec<Atom>)> = Vec::new();
        for (_, s) in a.dims.iter().chain(&b.dims) {
            if let Some((c, m)) = s.as_monomial() {
                if (c, m) != (1, &[][..]) && !moduli.iter().any(|(c2, m2)| *c2 == c && m2 == m) {
                    moduli.push((c, m.to_vec()));
                }
            }
        }
        for (c, m) in moduli {
            let mut s = P::zero();
            s.0.insert(m.clone(), c);
            let Some(one_less) = s.plus(-1) else { continue };
            if !self.nonneg(&one_less) {
                continue;
            }
            let (Some((qa, ra)), Some((qb, rb))) = (split(a, c, &m), split(b, c, &m)) else {
                continue;
            };
            // Every residue must lie in [0, S).
            let in_range = |r: &PLmad, cx: &mut Self| -> bool {
                match cx.interval(r) {
                    Some((lo, hi)) => {
                        cx.nonneg(&lo) && one_less.sub(&hi).is_some_and(|d| cx.nonneg(&d))
                    }
                    None => false,
                }
            };
            if !in_range(&ra, self) || !in_range(&rb, self) {
                continue;
            }
            if self.apart(&ra, &rb) || self.disjoint(&qa, &qb, depth + 1) {
                return true;
            }
        }
        false
    }

    /// Disjointness by cases on the order of a variable of one LMAD and a
    /// variable of the other (`x < y`, `x = y`, `x > y`): the blocks of two
    /// work-groups on one diagonal are apart in the rows in some cases and
    /// in the columns in the others.
    fn disjoint_by_order(&mut self, a: &PLmad, b: &PLmad) -> bool {
        let (va, vb) = (lmad_atoms(a, self.atoms), lmad_atoms(b, self.atoms));
        let only_a: Vec<Atom> = va.iter().copied().filter(|x| !vb.contains(x)).collect();
        let only_b: Vec<Atom> = vb.iter().copied().filter(|x| !va.contains(x)).collect();
        let pairs: Vec<(Atom, Atom)> = only_a
            .iter()
            .flat_map(|&x| only_b.iter().map(move |&y| (x, y)))
            .take(MAX_ORDER_PAIRS)
            .collect();
        for (x, y) in pairs {
            let (px, py) = (P::atom(x), P::atom(y));
            let (Some(lt), Some(gt)) = (
                py.sub(&px).and_then(|d| d.plus(-1)),
                px.sub(&py).and_then(|d| d.plus(-1)),
            ) else {
                continue;
            };
            let mut all = true;
            for extra in [lt, gt] {
                let mut ge = self.ge.clone();
                ge.push(extra);
                let saved = self.set_ge(ge);
                let ok = self.disjoint(a, b, 0);
                self.set_ge(saved);
                if !ok {
                    all = false;
                    break;
                }
            }
            if !all {
                continue;
            }
            // x = y: y replaced by x everywhere.
            let mut s = |p: &P| p.subst(y, &px);
            let (Some(a2), Some(b2)) = (map_lmad(a, &mut s), map_lmad(b, &mut s)) else {
                continue;
            };
            let Some(ge2) = self.ge.iter().map(&mut s).collect::<Option<Vec<P>>>() else {
                continue;
            };
            let saved = self.set_ge(ge2);
            let ok = self.equalities_clash() || self.disjoint(&a2, &b2, 0);
            self.set_ge(saved);
            if ok {
                return true;
            }
        }
        false
    }

    /// Disjointness by cases on the value of a variable of the LMADs that
    /// the facts hold between two constants at most [`MAX_VALUES`] apart
    /// (`0 <= p <= 1`, the buffer a ping-pong step writes): each value is
    /// substituted in turn, and every case must be disjoint (or have
    /// contradictory facts).
    fn disjoint_by_values(&mut self, a: &PLmad, b: &PLmad) -> bool {
        let bounds = self.bounds();
        let mut vars = lmad_atoms(a, self.atoms);
        vars.extend(lmad_atoms(b, self.atoms));
        vars.sort_unstable();
        vars.dedup();
        for x in vars {
            let constant = |lower: bool| {
                bounds
                    .iter()
                    .filter(|(y, bd, l)| *y == x && *l == lower && bd.as_constant().is_some())
                    .filter_map(|(_, bd, _)| bd.as_constant())
                    .reduce(|u, v| if lower { u.max(v) } else { u.min(v) })
            };
            let (Some(lo), Some(hi)) = (constant(true), constant(false)) else {
                continue;
            };
            if hi < lo || hi - lo >= MAX_VALUES {
                continue;
            }
            let all = (lo..=hi).all(|v| {
                let val = P::constant(v);
                let mut s = |p: &P| p.subst(x, &val);
                let (Some(a2), Some(b2)) = (map_lmad(a, &mut s), map_lmad(b, &mut s)) else {
                    return false;
                };
                let Some(ge2) = self.ge.iter().map(&mut s).collect::<Option<Vec<P>>>() else {
                    return false;
                };
                let saved = self.set_ge(ge2);
                let ok = self.disjoint(&a2, &b2, 0) || self.infeasible();
                self.set_ge(saved);
                ok
            });
            if all {
                return true;
            }
        }
        false
    }

    fn injective(&mut self, a: &PLmad) -> bool {
        // Dimensions of at most one element do not matter.
        let mut dims: Vec<(P, P)> = Vec::new();
        for (n, s) in &a.dims {
            let single = P::constant(1).sub(n).is_some_and(|d| self.nonneg(&d));
            if single {
                continue;
            }
            let abs = match self.sign(s) {
                Some(Sign::NonNeg) => s.clone(),
                Some(Sign::NonPos) => match s.scale(-1) {
                    Some(x) => x,
                    None => return false,
                },
                None => return false,
            };
            dims.push((n.clone(), abs));
        }
        if dims.len() > MAX_PERMUTED {
            return false;
        }
        let mut order: Vec<usize> = (0..dims.len()).collect();
        self.try_orders(&dims, &mut order, 0)
    }

    /// Tries the orders of `order[k..]` (innermost last); true when one
    /// satisfies the stride chain.
    fn try_orders(&mut self, dims: &[(P, P)], order: &mut Vec<usize>, k: usize) -> bool {
        if k == order.len() {
            return self.chain(dims, order);
        }
        for j in k..order.len() {
            order.swap(k, j);
            if self.try_orders(dims, order, k + 1) {
                return true;
            }
            order.swap(k, j);
        }
        false
    }

    /// Each stride, from the innermost out, exceeds the span inside it.
    fn chain(&mut self, dims: &[(P, P)], order: &[usize]) -> bool {
        let mut span = P::zero();
        for &d in order.iter().rev() {
            let (n, s) = &dims[d];
            let Some(gap) = s.sub(&span).and_then(|x| x.plus(-1)) else {
                return false;
            };
            if !self.nonneg(&gap) {
                return false;
            }
            let Some(next) = n.plus(-1).and_then(|e| e.mul(s)).and_then(|e| span.add(&e)) else {
                return false;
            };
            span = next;
        }
        true
    }
}

/// Most pairs of variables `disjoint_by_order` splits on.
const MAX_ORDER_PAIRS: usize = 4;

/// The program variables (not fresh atoms) of an LMAD.
fn lmad_atoms(l: &PLmad, atoms: &Atoms) -> Vec<Atom> {
    let mut v: Vec<Atom> = l.offset.atoms();
    for (n, s) in &l.dims {
        v.extend(n.atoms());
        v.extend(s.atoms());
    }
    v.sort_unstable();
    v.dedup();
    v.retain(|&a| !atoms.is_nonneg(a));
    v
}

fn map_lmad(l: &PLmad, f: &mut impl FnMut(&P) -> Option<P>) -> Option<PLmad> {
    Some(PLmad {
        offset: f(&l.offset)?,
        dims: l
            .dims
            .iter()
            .map(|(n, s)| Some((f(n)?, f(s)?)))
            .collect::<Option<_>>()?,
    })
}

/// Splits an LMAD by the modulus `c * m` into quotient and residue LMADs:
/// the offset's terms and the dimensions whose strides `c * m` divides go
/// to the quotient (divided), the rest to the residue.
fn split(l: &PLmad, c: i128, m: &[Atom]) -> Option<(PLmad, PLmad)> {
    let (qo, ro) = l.offset.split_by(c, m);
    let mut q = PLmad {
        offset: qo,
        dims: Vec::new(),
    };
    let mut r = PLmad {
        offset: ro,
        dims: Vec::new(),
    };
    for (n, s) in &l.dims {
        match s.div_exact(c, m) {
            Some(sq) => q.dims.push((n.clone(), sq)),
            None => r.dims.push((n.clone(), s.clone())),
        }
    }
    Some((q, r))
}

/// Non-negative at sight: a non-negative constant, and every other
/// monomial with a positive coefficient and only non-negative atoms or
/// even powers.
fn evidently_nonneg(q: &P, atoms: &Atoms) -> bool {
    q.0.iter().all(|(m, &k)| {
        if m.is_empty() {
            return k >= 0;
        }
        if k < 0 {
            return false;
        }
        // Atoms that are not known non-negative must come in even powers.
        let mut i = 0;
        while i < m.len() {
            let a = m[i];
            let mut j = i;
            while j < m.len() && m[j] == a {
                j += 1;
            }
            if !atoms.is_nonneg(a) && (j - i) % 2 == 1 {
                return false;
            }
            i = j;
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::obligation::parse_obligations;

    fn proves(src: &str) -> bool {
        let o = parse_obligations(&format!("obligation t\n  {src}\n")).unwrap();
        prove(&o[0]).is_ok()
    }

    #[test]
    fn divisibility_remainders_and_small_ranges() {
        // gcd(9, 6) = 3 does not divide 1; it divides 3.
        assert!(proves(
            "given n >= 0, m >= 0\n disjoint o + {(n : 9)} and o + 1 + {(m : 6)}"
        ));
        assert!(!proves(
            "given n >= 0, m >= 0\n disjoint o + {(n : 9)} and o + 3 + {(m : 6)}"
        ));
        // Polynomial strides: every coefficient even, offsets 1 apart.
        assert!(proves(
            "given n >= 0\n disjoint 2*a*b + {(n : 4*a)} and 2*a*b + 1 + {(n : 2*b)}"
        ));
        assert!(no_integer_root(&P::constant(1)));
        assert!(!no_integer_root(&P::zero()));
        // Parities of t and t + 1 differ; of t and t + 2 they do not.
        assert!(proves(
            "given t >= 0, n >= 1\n disjoint (t % 2)*n + {(n : 1)} and ((t + 1) % 2)*n + {(n : 1)}"
        ));
        assert!(!proves(
            "given t >= 0, n >= 1\n disjoint (t % 2)*n + {(n : 1)} and ((t + 2) % 2)*n + {(n : 1)}"
        ));
        // A remainder of a non-negative number lies in [0, m); of any
        // number it need not.
        assert!(proves(
            "given m >= 1, t >= 0\n in-bounds t % m + {(1 : 1)} within m"
        ));
        assert!(!proves(
            "given m >= 1\n in-bounds t % m + {(1 : 1)} within m"
        ));
        // Ping-pong buffers p and 1 - p, with a clamped row.
        assert!(proves(
            "given 0 <= p, p <= 1, n >= 1, m >= 1, 0 <= r, r < n, 0 <= s, s < n\n disjoint p*n*m + min(r + 1, n - 1)*m + {(m : 1)} and (1 - p)*n*m + s*m + {(m : 1)}"
        ));
        assert!(!proves(
            "given 0 <= p, p <= 2, n >= 1\n disjoint p*n + {(n : 1)} and (2 - p)*n + {(n : 1)}"
        ));
    }

    #[test]
    fn shapes_of_the_issue() {
        // Offsets apart by at least the extent.
        assert!(proves(
            "given n >= 0\n disjoint 0 + {(n : 1)} and n + {(n : 1)}"
        ));
        assert!(!proves(
            "given n >= 0\n disjoint 0 + {(n : 1)} and n - 1 + {(n : 1)}"
        ));
        // Even and odd rows of an n-wide matrix.
        assert!(proves(
            "given n >= 1, m >= 0\n disjoint 0 + {(m : 2*n) (n : 1)} and n + {(m : 2*n) (n : 1)}"
        ));
        // Rows i and j of a row-major matrix.
        assert!(proves(
            "given n >= 0, i != j\n disjoint i*n + {(n : 1)} and j*n + {(n : 1)}"
        ));
        assert!(!proves(
            "given n >= 0\n disjoint i*n + {(n : 1)} and j*n + {(n : 1)}"
        ));
        // Interleaved parts after GPU expansion.
        assert!(proves("given 0 <= t, t < T, 0 <= u, u < T, t != u, m >= 0\n disjoint t + {(m : T)} and u + {(m : T)}"));
        // Contiguous parts after CPU expansion.
        assert!(proves(
            "given 0 <= t, t < u, m >= 0\n disjoint t*m + {(m : 1)} and u*m + {(m : 1)}"
        ));
        assert!(proves(
            "given n >= 0, m >= 0\n injective 0 + {(m : 1) (n : m)}"
        ));
        assert!(!proves("given n >= 0\n injective 0 + {(n : 0)}"));
        assert!(proves(
            "given n >= 0\n in-bounds n - 1 + {(n : -1)} within n"
        ));
        assert!(proves(
            "given 0 <= t, t < T, m >= 0\n in-bounds t + {(m : T)} within T*m"
        ));
        assert!(proves("given b <= c, a >= 0\n at-most a*b <= a*c"));
        assert!(proves("given x == 2*n + 1, n >= 0\n at-most 1 <= x"));
        // Syntactically: beyond polynomials, and with no facts.
        assert!(proves(
            "at-most 9223372036854775807 * n <= 9223372036854775807 * n"
        ));
        assert!(proves(
            "at-most (a > b) - 1 <= max(0, max((a > b) - 1, -1))"
        ));
        assert!(!proves("at-most a <= max(b, c)"));
        // Contradictory facts: the claim holds vacuously.
        assert!(proves(
            "given 0 <= a, a < 1, 0 <= b, b < 1, a != b\n disjoint a + {(m : 1)} and b + {(m : 1)}"
        ));
    }
}
