//! Brute force: obligations evaluated on concrete values.
//!
//! [`check`] decides an obligation at one valuation of its variables by
//! enumerating the LMADs' domains; it is how every counterexample is
//! confirmed before it is reported. [`search`] enumerates small valuations
//! (every variable in `-r ..= r` for growing `r`) within a budget: the
//! cheap refuter that runs before Z3, and the independent check that the
//! property tests hold every proof against.
//!
//! Arithmetic is over the integers (`i128`, checked): a valuation at which
//! an expression divides by zero or leaves that range is skipped, as if a
//! fact were false there.

use funmem_lang::ast::{Atom, BinOp, SExp, UnOp};
use funmem_lang::lmad::Lmad;
use funmem_lang::obligation::{Claim, Counterexample, Obligation};
use std::collections::{BTreeMap, HashMap};

/// Largest domain (indices of one LMAD) that [`check`] enumerates.
pub const MAX_DOMAIN: u64 = 1 << 16;

/// What one valuation shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// A fact is false (or undefined) there: the valuation is irrelevant.
    Excluded,
    /// The claim holds there.
    Holds,
    /// The claim fails there, at these indices (see [`Counterexample`]).
    Fails(Vec<Vec<i64>>),
    /// The domains are too large to enumerate, or an expression is
    /// undefined.
    TooLarge,
}

/// Evaluates a scalar expression; `None` on division by zero or overflow.
pub fn eval(e: &SExp, env: &BTreeMap<String, i64>) -> Option<i128> {
    match e {
        SExp::Atom(Atom::Int(k, _)) => Some(*k as i128),
        SExp::Atom(Atom::Var(x)) => env.get(x.name.as_str()).map(|&v| v as i128),
        SExp::Un(UnOp::Neg, a, _) => eval(a, env)?.checked_neg(),
        SExp::Un(UnOp::Not, a, _) => Some((eval(a, env)? == 0) as i128),
        SExp::Bin(op, a, b, _) => {
            let (a, b) = (eval(a, env)?, eval(b, env)?);
            Some(match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                // Rust's i128 division truncates toward zero, as C does.
                BinOp::Div => a.checked_div(b)?,
                BinOp::Rem => a.checked_rem(b)?,
                BinOp::Lt => (a < b) as i128,
                BinOp::Le => (a <= b) as i128,
                BinOp::Gt => (a > b) as i128,
                BinOp::Ge => (a >= b) as i128,
                BinOp::Eq => (a == b) as i128,
                BinOp::Ne => (a != b) as i128,
                BinOp::And => (a != 0 && b != 0) as i128,
                BinOp::Or => (a != 0 || b != 0) as i128,
                BinOp::Min => a.min(b),
                BinOp::Max => a.max(b),
            })
        }
    }
}

/// A concrete LMAD: offset, then (elements, stride) per dimension.
struct Conc {
    offset: i128,
    dims: Vec<(i128, i128)>,
}

impl Conc {
    fn new(l: &Lmad<SExp>, env: &BTreeMap<String, i64>) -> Option<Conc> {
        Some(Conc {
            offset: eval(&l.offset, env)?,
            dims: l
                .dims
                .iter()
                .map(|d| Some((eval(&d.elems, env)?, eval(&d.stride, env)?)))
                .collect::<Option<_>>()?,
        })
    }

    /// Number of indices, or `None` beyond [`MAX_DOMAIN`].
    fn size(&self) -> Option<u64> {
        let mut n: u64 = 1;
        for &(e, _) in &self.dims {
            if e <= 0 {
                return Some(0);
            }
            n = n.checked_mul(u64::try_from(e).ok()?)?;
            if n > MAX_DOMAIN {
                return None;
            }
        }
        Some(n)
    }

    /// Calls `f(index, address)` for every index, in row-major order;
    /// stops early when `f` returns false.
    fn each(&self, mut f: impl FnMut(&[i64], i128) -> bool) {
        if self.size() == Some(0) {
            return;
        }
        let q = self.dims.len();
        let mut idx = vec![0i64; q];
        loop {
            let addr = self
                .dims
                .iter()
                .zip(&idx)
                .fold(self.offset, |a, (&(_, s), &i)| a + s * i as i128);
            if !f(&idx, addr) {
                return;
            }
            let mut k = q;
            loop {
                if k == 0 {
                    return;
                }
                k -= 1;
                idx[k] += 1;
                if (idx[k] as i128) < self.dims[k].0 {
                    break;
                }
                idx[k] = 0;
            }
        }
    }
}

/// Decides the obligation at one valuation (which must give every variable
/// a value).
pub fn check(o: &Obligation, env: &BTreeMap<String, i64>) -> Check {
    for f in &o.facts {
        match eval(&f.exp, env) {
            Some(0) | None => return Check::Excluded,
            Some(_) => {}
        }
    }
    let conc = |l: &Lmad<SExp>| -> Option<Conc> {
        let c = Conc::new(l, env)?;
        // Addresses must stay far inside i128 for the sums above.
        let big = c
            .dims
            .iter()
            .any(|&(e, s)| e.unsigned_abs() > 1 << 40 || s.unsigned_abs() > 1 << 60)
            || c.offset.unsigned_abs() > 1 << 60;
        (!big).then_some(c)
    };
    match &o.claim {
        Claim::AtMost(a, b) => match (eval(a, env), eval(b, env)) {
            (Some(a), Some(b)) if a <= b => Check::Holds,
            (Some(_), Some(_)) => Check::Fails(Vec::new()),
            _ => Check::TooLarge,
        },
        Claim::InBounds(l, n) => {
            let (Some(c), Some(n)) = (conc(l), eval(n, env)) else {
                return Check::TooLarge;
            };
            if c.size().is_none() {
                return Check::TooLarge;
            }
            let mut bad = None;
            c.each(|i, a| {
                if a < 0 || a >= n {
                    bad = Some(i.to_vec());
                    false
                } else {
                    true
                }
            });
            bad.map_or(Check::Holds, |i| Check::Fails(vec![i]))
        }
        Claim::Injective(l) => {
            let Some(c) = conc(l) else {
                return Check::TooLarge;
            };
            if c.size().is_none() {
                return Check::TooLarge;
            }
            let mut seen: HashMap<i128, Vec<i64>> = HashMap::new();
            let mut bad = None;
            c.each(|i, a| match seen.get(&a) {
                Some(j) => {
                    bad = Some(vec![j.clone(), i.to_vec()]);
                    false
                }
                None => {
                    seen.insert(a, i.to_vec());
                    true
                }
            });
            bad.map_or(Check::Holds, Check::Fails)
        }
        Claim::Disjoint(x, y) => {
            let (Some(a), Some(b)) = (conc(x), conc(y)) else {
                return Check::TooLarge;
            };
            if a.size().is_none() || b.size().is_none() {
                return Check::TooLarge;
            }
            let mut seen: HashMap<i128, Vec<i64>> = HashMap::new();
            a.each(|i, addr| {
                seen.entry(addr).or_insert_with(|| i.to_vec());
                true
            });
            let mut bad = None;
            b.each(|j, addr| match seen.get(&addr) {
                Some(i) => {
                    bad = Some(vec![i.clone(), j.to_vec()]);
                    false
                }
                None => true,
            });
            bad.map_or(Check::Holds, Check::Fails)
        }
    }
}

/// Confirms a counterexample: its valuation satisfies the facts and the
/// claim fails there. Returns the counterexample with the indices the
/// enumeration finds (the first failing ones).
pub fn confirm(o: &Obligation, values: &BTreeMap<String, i64>) -> Option<Counterexample> {
    match check(o, values) {
        Check::Fails(indices) => Some(Counterexample {
            values: values.clone(),
            indices,
        }),
        _ => None,
    }
}

/// What [`search`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// A confirmed counterexample, if one was found.
    pub counterexample: Option<Counterexample>,
    /// Valuations that satisfied every fact and were checked.
    pub checked: u64,
    /// Valuations looked at, in all.
    pub tried: u64,
    /// The radius fully covered: every valuation with all values in
    /// `-r ..= r` was tried.
    pub radius: i64,
}

/// Enumerates valuations with values in `-r ..= r` for `r = 0, 1, ...,
/// max_radius`, each radius adding the valuations it reaches, until one
/// breaks the claim or `budget` valuations were tried.
pub fn search(o: &Obligation, max_radius: i64, budget: u64) -> Search {
    let vars = o.vars();
    let k = vars.len();
    let mut out = Search {
        counterexample: None,
        checked: 0,
        tried: 0,
        radius: -1,
    };
    let mut env: BTreeMap<String, i64> = vars.iter().map(|v| (v.clone(), 0)).collect();
    for r in 0..=max_radius {
        // Every tuple in [-r, r]^k with some coordinate at +-r.
        let width = (2 * r + 1) as u64;
        let Some(total) = width.checked_pow(k as u32) else {
            return out;
        };
        let mut vals = vec![-r; k];
        for _ in 0..total {
            if r == 0 || vals.iter().any(|v| v.abs() == r) {
                if out.tried >= budget {
                    return out;
                }
                out.tried += 1;
                for (name, v) in vars.iter().zip(&vals) {
                    if let Some(slot) = env.get_mut(name) {
                        *slot = *v;
                    }
                }
                match check(o, &env) {
                    Check::Fails(indices) => {
                        out.counterexample = Some(Counterexample {
                            values: env.clone(),
                            indices,
                        });
                        return out;
                    }
                    Check::Holds | Check::TooLarge => out.checked += 1,
                    Check::Excluded => {}
                }
            }
            // Next tuple.
            for v in vals.iter_mut().rev() {
                *v += 1;
                if *v <= r {
                    break;
                }
                *v = -r;
            }
        }
        out.radius = r;
        if k == 0 {
            return out;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::obligation::parse_obligations;

    fn ob(src: &str) -> Obligation {
        parse_obligations(&format!("obligation t\n  {src}\n"))
            .unwrap()
            .remove(0)
    }

    #[test]
    fn finds_small_counterexamples_and_respects_facts() {
        let o = ob("given n >= 0\n disjoint 0 + {(n : 1)} and n - 1 + {(n : 1)}");
        let s = search(&o, 4, 10_000);
        let c = s.counterexample.expect("overlap at n = 1");
        assert_eq!(c.values["n"], 1);
        assert_eq!(c.indices, vec![vec![0], vec![0]]);
        let o = ob(
            "given n >= 1, m >= 0\n disjoint 0 + {(m : 2*n) (n : 1)} and n + {(m : 2*n) (n : 1)}",
        );
        let s = search(&o, 4, 100_000);
        assert!(s.counterexample.is_none());
        assert_eq!(s.radius, 4);
        let o = ob("given n >= 0\n injective 0 + {(n : 0)}");
        let c = search(&o, 3, 1000).counterexample.unwrap();
        assert_eq!(c.values["n"], 2);
        assert_eq!(c.indices, vec![vec![0], vec![1]]);
        // Division by zero excludes the valuation.
        let o = ob("given n / n == 1\n at-most 1 <= n * n");
        assert!(search(&o, 3, 1000).counterexample.is_none());
        let o = ob("in-bounds 0 + {(2 : 1)} within 1");
        assert_eq!(
            search(&o, 1, 10).counterexample.unwrap().indices,
            vec![vec![1]]
        );
    }
}
