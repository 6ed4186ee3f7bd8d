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
use funmem_lang::prim::Prim;
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
        SExp::Atom(Atom::Const(c, _)) => c.as_i64().map(i128::from),
        SExp::Un(UnOp::Abs, a, _) => eval(a, env)?.checked_abs(),
        // A truth value converted is itself (0 or 1); `bool(x)` of an
        // integer is `x != 0`. Other conversions may start from a float,
        // which has no value here: undefined, so that no valuation counts
        // as checked through one (see `view`).
        SExp::Un(UnOp::Conv(t), a, _) if !t.is_float() && is_truth(a) => eval(a, env),
        SExp::Un(UnOp::Conv(Prim::Bool), a, _) => Some((eval(a, env)? != 0) as i128),
        SExp::Atom(Atom::Var(x)) => env.get(x.name.as_str()).map(|&v| v as i128),
        SExp::Un(UnOp::Neg, a, _) => eval(a, env)?.checked_neg(),
        SExp::Un(UnOp::Not, a, _) => Some((eval(a, env)? == 0) as i128),
        // Floats have no values here.
        SExp::Un(..) => None,
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

/// Whether `e` is a truth value: a comparison, `&&`, `||`, `!`, `bool(..)`
/// or a `bool` literal.
fn is_truth(e: &SExp) -> bool {
    use BinOp::*;
    match e {
        SExp::Atom(Atom::Const(c, _)) => c.prim() == Prim::Bool,
        SExp::Un(UnOp::Not | UnOp::Conv(Prim::Bool), _, _) => true,
        SExp::Bin(op, _, _, _) => matches!(op, Lt | Le | Gt | Ge | Eq | Ne | And | Or),
        _ => false,
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

/// Most domain indices one [`search`] enumerates in all (each valuation
/// may enumerate up to two domains of [`MAX_DOMAIN`] indices): a bound of
/// under a second on any search, whatever its budget of valuations.
/// A search with a small budget gets [`WORK_PER_VALUATION`] indices per
/// valuation of it, if that is less.
pub const SEARCH_WORK: u64 = 1 << 22;
/// See [`SEARCH_WORK`].
pub const WORK_PER_VALUATION: u64 = 1 << 12;

/// Decides the obligation at one valuation (which must give every variable
/// a value).
pub fn check(o: &Obligation, env: &BTreeMap<String, i64>) -> Check {
    check_counted(o, env).0
}

/// [`check`], and how many domain indices it enumerated.
fn check_counted(o: &Obligation, env: &BTreeMap<String, i64>) -> (Check, u64) {
    let mut work = 0;
    let c = check_with(o, env, &mut work);
    (c, work)
}

fn check_with(o: &Obligation, env: &BTreeMap<String, i64>, work: &mut u64) -> Check {
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
            let Some(size) = c.size() else {
                return Check::TooLarge;
            };
            *work += size;
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
            let Some(size) = c.size() else {
                return Check::TooLarge;
            };
            *work += size;
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
            let (Some(sa), Some(sb)) = (a.size(), b.size()) else {
                return Check::TooLarge;
            };
            *work += sa + sb;
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
    /// Whether it stopped at its work limit (see [`SEARCH_WORK`]).
    pub worked_out: bool,
}

/// How one variable gets its value in the search.
enum Step {
    /// Enumerated over `-r ..= r`.
    Free(String),
    /// Computed from a fact `x == e` once `e`'s variables have values.
    Defined(String, SExp),
}

/// The search's plan: an order of the variables, each enumerated or
/// computed, and after each step the facts that can then be evaluated.
fn plan(o: &Obligation) -> (Vec<Step>, Vec<Vec<usize>>) {
    let vars = o.vars();
    let fact_vars: Vec<Vec<String>> = o
        .facts
        .iter()
        .map(|f| {
            let mut v = Vec::new();
            f.exp
                .for_each_var(&mut |x| v.push(x.name.as_str().to_string()));
            v.sort();
            v.dedup();
            v
        })
        .collect();
    // Definitions `x == e` (or `e == x`) with x not in e.
    let mut defs: Vec<(String, SExp, Vec<String>)> = Vec::new();
    for (f, fv) in o.facts.iter().zip(&fact_vars) {
        if let SExp::Bin(BinOp::Eq, a, b, _) = &f.exp {
            for (x, e) in [(a, b), (b, a)] {
                if let SExp::Atom(Atom::Var(x)) = &**x {
                    let name = x.name.as_str();
                    if fv.iter().filter(|v| *v == name).count() == 1 && !e.mentions(name) {
                        let ev: Vec<String> = fv.iter().filter(|v| *v != name).cloned().collect();
                        defs.push((name.to_string(), (**e).clone(), ev));
                        break;
                    }
                }
            }
        }
    }
    let mut steps = Vec::new();
    let mut assigned: Vec<String> = Vec::new();
    while assigned.len() < vars.len() {
        let def = defs
            .iter()
            .find(|(x, _, ev)| !assigned.contains(x) && ev.iter().all(|v| assigned.contains(v)));
        let step = match def {
            Some((x, e, _)) => Step::Defined(x.clone(), e.clone()),
            None => {
                // The free variable sharing most facts with those assigned,
                // then the first in order; defined ones wait for their
                // definitions unless nothing else is left.
                let defined = |v: &String| defs.iter().any(|(x, ..)| x == v);
                let candidates: Vec<&String> =
                    vars.iter().filter(|v| !assigned.contains(v)).collect();
                let pool: Vec<&String> = match candidates.iter().any(|v| !defined(v)) {
                    true => candidates.iter().copied().filter(|v| !defined(v)).collect(),
                    false => candidates,
                };
                let score = |v: &String| {
                    fact_vars
                        .iter()
                        .filter(|fv| fv.contains(v) && fv.iter().any(|w| assigned.contains(w)))
                        .count()
                };
                let best = pool.iter().copied().max_by_key(|v| {
                    (
                        score(v),
                        std::cmp::Reverse(vars.iter().position(|w| w == *v)),
                    )
                });
                match best {
                    Some(v) => Step::Free(v.clone()),
                    None => break,
                }
            }
        };
        let name = match &step {
            Step::Free(x) | Step::Defined(x, _) => x.clone(),
        };
        assigned.push(name);
        steps.push(step);
    }
    // Facts to evaluate after each step: those whose variables are then
    // all assigned for the first time.
    let mut checks = vec![Vec::new(); steps.len().max(1)];
    for (k, fv) in fact_vars.iter().enumerate() {
        let at = fv
            .iter()
            .map(|v| assigned.iter().position(|w| w == v).unwrap_or(0))
            .max()
            .unwrap_or(0);
        checks[at].push(k);
    }
    (steps, checks)
}

struct Walk<'a> {
    o: &'a Obligation,
    steps: Vec<Step>,
    checks: Vec<Vec<usize>>,
    env: BTreeMap<String, i64>,
    budget: u64,
    /// Domain indices enumerated so far, and most allowed.
    work: u64,
    work_limit: u64,
    out: Search,
}

impl Walk<'_> {
    /// Assigns step `k` onwards with values in `-r ..= r`; `edge` says
    /// whether an enumerated value already reached `r` (only such
    /// valuations are new at radius `r`). Returns true to stop.
    fn go(&mut self, k: usize, r: i64, edge: bool) -> bool {
        if k == self.steps.len() {
            if !edge && r > 0 {
                return false;
            }
            if self.out.tried >= self.budget {
                return true;
            }
            if self.work >= self.work_limit {
                self.out.worked_out = true;
                return true;
            }
            self.out.tried += 1;
            let (c, work) = check_counted(self.o, &self.env);
            self.work += work;
            match c {
                Check::Fails(indices) => {
                    self.out.counterexample = Some(Counterexample {
                        values: self.env.clone(),
                        indices,
                    });
                    return true;
                }
                Check::Holds | Check::TooLarge => self.out.checked += 1,
                Check::Excluded => {}
            }
            return false;
        }
        let (name, values): (String, Vec<i64>) = match &self.steps[k] {
            Step::Free(x) => (x.clone(), (-r..=r).collect()),
            Step::Defined(x, e) => match eval(e, &self.env).and_then(|v| i64::try_from(v).ok()) {
                Some(v) => (x.clone(), vec![v]),
                None => return false,
            },
        };
        let free = matches!(self.steps[k], Step::Free(_));
        for v in values {
            if self.out.tried >= self.budget {
                return true;
            }
            self.env.insert(name.clone(), v);
            // Facts that can be evaluated now prune the rest.
            let ok = self.checks[k]
                .iter()
                .all(|&f| matches!(eval(&self.o.facts[f].exp, &self.env), Some(x) if x != 0));
            if !ok {
                self.out.tried += 1;
                continue;
            }
            if self.go(k + 1, r, edge || (free && v.abs() == r)) {
                return true;
            }
        }
        false
    }
}

/// Enumerates valuations with values in `-r ..= r` for `r = 0, 1, ...,
/// max_radius`, each radius adding the valuations it reaches, until one
/// breaks the claim, `budget` steps were taken, or the work limit of
/// [`SEARCH_WORK`] domain indices was reached. Variables that a fact
/// `x == e` defines are computed, not enumerated; each fact is evaluated as
/// soon as its variables have values, and prunes the enumeration.
pub fn search(o: &Obligation, max_radius: i64, budget: u64) -> Search {
    let (steps, checks) = plan(o);
    let mut w = Walk {
        o,
        env: BTreeMap::new(),
        steps,
        checks,
        budget,
        work: 0,
        work_limit: SEARCH_WORK.min(budget.saturating_mul(WORK_PER_VALUATION)),
        out: Search {
            counterexample: None,
            checked: 0,
            tried: 0,
            radius: -1,
            worked_out: false,
        },
    };
    for r in 0..=max_radius {
        if w.go(0, r, false) {
            return w.out;
        }
        w.out.radius = r;
        if w.steps.iter().all(|s| matches!(s, Step::Defined(..))) {
            break;
        }
    }
    w.out
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
