//! Uniqueness: in-place updates may only consume arrays nobody will look at
//! again (docs/language.md, Uniqueness and aliasing).
//!
//! `x with [i] = v` reuses x's memory, so after it neither x nor any array
//! that may share x's elements may be used: otherwise the update would be
//! visible through a name that, by the value semantics, still holds the
//! old value. This module checks that, after the type checker has passed a
//! program, with a small alias analysis in the style of Futhark's:
//!
//! - Every array value has an *alias set*: the *roots* it may share
//!   elements with. A root is where an array came into being: a program
//!   parameter, a statement that makes a fresh array (`iota`, `copy`,
//!   `replicate`, `concat`, a kernel, an update's result, the results of an
//!   `if` or a `loop`) or a loop parameter inside its body.
//! - A slice or transpose aliases its operand. An `if`'s result may be
//!   either branch's result: it aliases both (with the roots made inside a
//!   branch replaced by one fresh root). A `loop`'s result may be the
//!   initial value or any body result: it aliases the outside roots of both.
//! - `x with ...` *consumes* every root of x's alias set (rule T-CONSUME):
//!   each must be consumable: made by the program or a loop parameter, or a
//!   parameter marked unique (`*`); and made inside the innermost kernel or
//!   loop body that contains the update (an array from outside a kernel
//!   would be updated by every iteration at once; one from outside a loop,
//!   once per iteration, though it holds its old value only before the
//!   first).
//! - Any use of an array whose alias set meets a consumed root is an error
//!   (rule T-USE), naming the use and the consumption.
//! - A loop whose body consumes its parameter consumes the initial value
//!   at the loop (T-CONSUME again, at the loop's position). The body must
//!   then return, for that parameter, an array made in the body (or the
//!   parameter itself, updated) that no other result aliases: the next
//!   iteration consumes it again.
//! - Consumption in one branch of an `if` holds after the `if`; the other
//!   branch may still use the array.
//!
//! Memory blocks are not arrays here: in FUNMEM two arrays of one block do
//! not alias unless one is derived from the other by name; whether their
//! elements overlap is validity's business (the heap semantics against the
//! value semantics), not the type checker's.
//!
//! Programs without an update consume nothing and are passed at once.

use crate::ast::*;
use crate::diag::{Diagnostic, Phase};
use crate::name::Name;
use crate::span::Span;
use rustc_hash::FxHashMap as HashMap;

/// Checks that every update consumes only what it may, and that nothing
/// consumed is used afterwards.
pub fn check_uniqueness(p: &Program) -> Result<(), Diagnostic> {
    if !body_updates(&p.body) {
        return Ok(());
    }
    let mut u = Uniq::default();
    for q in &p.params {
        if q.ty.as_array().is_some() {
            let r = u.root(
                &q.name,
                if q.unique {
                    Origin::UniqueParam
                } else {
                    Origin::Param
                },
            );
            u.aliases.insert(q.name.name.clone(), vec![r]);
        }
    }
    u.body(&p.body)?;
    for x in &p.body.result {
        u.use_(x)?;
    }
    Ok(())
}

fn body_updates(b: &Body) -> bool {
    b.stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Update(..) => true,
        ExpKind::If(_, t, e) => body_updates(t) || body_updates(e),
        ExpKind::Kernel(_, _, b) | ExpKind::Loop(_, _, _, b) => body_updates(b),
        _ => false,
    })
}

/// Where an array came into being.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A parameter without `*`: never consumable.
    Param,
    /// A parameter with `*`.
    UniqueParam,
    /// Made by the program (or a loop parameter inside its body).
    Made,
}

struct Root {
    /// The binder that made it.
    name: Name,
    span: Span,
    origin: Origin,
    /// How many kernel and loop bodies enclosed it when it was made.
    level: usize,
}

type Roots = Vec<u32>;

#[derive(Default)]
struct Uniq {
    roots: Vec<Root>,
    /// The alias set of every array variable in scope.
    aliases: HashMap<Name, Roots>,
    /// Consumed roots and where.
    consumed: HashMap<u32, Span>,
    /// Kernel and loop bodies open now.
    level: usize,
}

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Phase::Type, span, msg)
}

fn union(a: &mut Roots, b: &[u32]) {
    for r in b {
        if !a.contains(r) {
            a.push(*r);
        }
    }
}

impl Uniq {
    fn root(&mut self, x: &Ident, origin: Origin) -> u32 {
        self.roots.push(Root {
            name: x.name.clone(),
            span: x.span,
            origin,
            level: self.level,
        });
        (self.roots.len() - 1) as u32
    }

    fn aliases_of(&self, x: &Name) -> Roots {
        self.aliases.get(x).cloned().unwrap_or_default()
    }

    /// T-USE: `x` may be used only if nothing it may alias was consumed.
    fn use_(&self, x: &Ident) -> Result<(), Diagnostic> {
        let Some(rs) = self.aliases.get(&x.name) else {
            return Ok(());
        };
        for r in rs {
            if let Some(at) = self.consumed.get(r) {
                let root = &self.roots[*r as usize];
                let what = if root.name == x.name {
                    format!("`{}`", x.name)
                } else {
                    format!("`{}`, which may alias `{}`,", x.name, root.name)
                };
                return Err(err(
                    x.span,
                    format!("{what} is used after it was consumed by an in-place update (T-USE)"),
                )
                .with_label(*at, "consumed here")
                .with_note("an update `y = x with [...] = v` reuses x's memory: afterwards use y, or update a `copy` of x instead"));
            }
        }
        Ok(())
    }

    fn use_atom(&self, a: &Atom) -> Result<(), Diagnostic> {
        match a {
            Atom::Var(x) => self.use_(x),
            Atom::Int(..) | Atom::Const(..) => Ok(()),
        }
    }

    /// T-CONSUME: every root of `rs` may be consumed here; then it is.
    /// `what` says what consumes (an update of x, a loop).
    fn consume(&mut self, rs: &[u32], at: Span, what: &str) -> Result<(), Diagnostic> {
        for r in rs {
            let root = &self.roots[*r as usize];
            if root.origin == Origin::Param {
                return Err(err(
                    at,
                    format!(
                        "{what} consumes the parameter `{}`, which is not unique (T-CONSUME)",
                        root.name
                    ),
                )
                .with_label(root.span, "parameter declared here")
                .with_note(format!(
                    "mark it unique to let the program consume it: `({}: *...)`, or update a `copy` of it",
                    root.name
                )));
            }
            if root.level < self.level {
                return Err(err(
                    at,
                    format!(
                        "{what} consumes `{}`, which was made outside the enclosing kernel or loop body (T-CONSUME)",
                        root.name
                    ),
                )
                .with_label(root.span, "made here")
                .with_note("inside a kernel or loop body only arrays made there, and loop parameters, can be consumed; update a `copy`, or pass the array in as a loop parameter"));
            }
        }
        for r in rs {
            self.consumed.entry(*r).or_insert(at);
        }
        Ok(())
    }

    fn body(&mut self, b: &Body) -> Result<(), Diagnostic> {
        for s in &b.stms {
            self.stm(s)?;
        }
        Ok(())
    }

    /// Walks a nested body and returns, per result, its alias set.
    fn nested(&mut self, b: &Body) -> Result<Vec<Roots>, Diagnostic> {
        self.body(b)?;
        for x in &b.result {
            self.use_(x)?;
        }
        Ok(b.result.iter().map(|x| self.aliases_of(&x.name)).collect())
    }

    fn fresh(&mut self, p: &Pat) {
        if p.ty.as_array().is_some() {
            let r = self.root(&p.name, Origin::Made);
            self.aliases.insert(p.name.name.clone(), vec![r]);
        }
    }

    /// The alias set, outside a body, of a result whose roots inside are
    /// `rs`: roots made before `mark` stay; each made at or after it (gone
    /// with the body) becomes a fresh root named after `x`, one per inner
    /// root across all the results of the statement (`lifted`), so results
    /// that may be one array keep aliasing each other.
    fn lift(
        &mut self,
        rs: impl Iterator<Item = u32>,
        mark: u32,
        lifted: &mut HashMap<u32, u32>,
        x: &Ident,
    ) -> Roots {
        let mut out = Roots::new();
        for r in rs {
            let r = if r < mark {
                r
            } else if let Some(l) = lifted.get(&r) {
                *l
            } else {
                let l = self.root(x, Origin::Made);
                lifted.insert(r, l);
                l
            };
            if !out.contains(&r) {
                out.push(r);
            }
        }
        if out.is_empty() {
            out.push(self.root(x, Origin::Made));
        }
        out
    }

    fn stm(&mut self, s: &Stm) -> Result<(), Diagnostic> {
        match &s.exp.kind {
            ExpKind::Scalar(_) | ExpKind::Alloc(..) => {}
            ExpKind::Index(x, is) => {
                self.use_(x)?;
                for a in is {
                    self.use_atom(a)?;
                }
                // Fewer indices than dimensions: a view of x, which aliases it.
                if s.pats[0].ty.as_array().is_some() {
                    let rs = self.aliases_of(&x.name);
                    self.aliases.insert(s.pats[0].name.name.clone(), rs);
                }
            }
            ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
                self.use_(xs)?;
                self.use_atom(ne)?;
                if let RedOp::Lambda(l) = op {
                    for st in &l.body.stms {
                        self.stm(st)?;
                    }
                    for r in &l.body.result {
                        self.use_(r)?;
                    }
                }
                if matches!(s.exp.kind, ExpKind::Scan(..)) {
                    self.fresh(&s.pats[0]);
                }
            }
            ExpKind::Slice(x, _) | ExpKind::Transpose(x) => {
                self.use_(x)?;
                let rs = self.aliases_of(&x.name);
                self.aliases.insert(s.pats[0].name.name.clone(), rs);
            }
            ExpKind::Iota(_) => self.fresh(&s.pats[0]),
            ExpKind::Copy(x) => {
                self.use_(x)?;
                self.fresh(&s.pats[0]);
            }
            ExpKind::Replicate(_, v) => {
                self.use_atom(v)?;
                self.fresh(&s.pats[0]);
            }
            ExpKind::Concat(x, y) => {
                self.use_(x)?;
                self.use_(y)?;
                self.fresh(&s.pats[0]);
            }
            ExpKind::Update(x, is, v) => {
                self.use_(x)?;
                self.use_atom(v)?;
                for i in is {
                    for a in i.atoms() {
                        self.use_atom(a)?;
                    }
                }
                let rs = self.aliases_of(&x.name);
                self.consume(&rs, x.span, &format!("the update of `{}`", x.name))?;
                self.fresh(&s.pats[0]);
            }
            ExpKind::Kernel(_, _, b) => {
                self.level += 1;
                let r = self.nested(b);
                self.level -= 1;
                r?;
                for p in &s.pats {
                    self.fresh(p);
                }
            }
            ExpKind::If(_, t, e) => {
                let mark = self.roots.len() as u32;
                let before = self.consumed.clone();
                let rt = self.nested(t)?;
                let after_t = std::mem::replace(&mut self.consumed, before);
                let re = self.nested(e)?;
                for (r, at) in after_t {
                    self.consumed.entry(r).or_insert(at);
                }
                // Roots made inside a branch are gone; each is replaced by
                // one fresh root, shared by every result that may be it (a
                // branch may return one array twice); roots from before the
                // `if` remain.
                let mut lifted = HashMap::default();
                for (k, p) in s.pats.iter().enumerate() {
                    if p.ty.as_array().is_some() {
                        let inner = rt[k].iter().chain(&re[k]).copied();
                        let rs = self.lift(inner, mark, &mut lifted, &p.name);
                        self.aliases.insert(p.name.name.clone(), rs);
                    }
                }
            }
            ExpKind::Loop(ps, init, form, b) => self.t_loop(s, ps, init, form, b)?,
        }
        Ok(())
    }

    fn t_loop(
        &mut self,
        s: &Stm,
        ps: &[Pat],
        init: &[Atom],
        form: &LoopForm,
        b: &Body,
    ) -> Result<(), Diagnostic> {
        for a in init {
            self.use_atom(a)?;
        }
        if let LoopForm::For(_, n) = form {
            self.use_atom(n)?;
        }
        let first_root = self.roots.len();
        self.level += 1;
        let body_level = self.level;
        let mut param_roots: Vec<Option<u32>> = Vec::new();
        for p in ps {
            if p.ty.as_array().is_some() {
                let r = self.root(&p.name, Origin::Made);
                self.aliases.insert(p.name.name.clone(), vec![r]);
                param_roots.push(Some(r));
            } else {
                param_roots.push(None);
            }
        }
        let before = self.consumed.clone();
        let res = self.nested(b);
        self.level -= 1;
        let results = res?;
        // Which parameters did the body consume (through any alias)?
        let consumed_params: Vec<bool> = param_roots
            .iter()
            .map(|r| r.is_some_and(|r| self.consumed.contains_key(&r)))
            .collect();
        for (k, p) in ps.iter().enumerate() {
            if !consumed_params[k] {
                continue;
            }
            let own = param_roots[k];
            let ok_root = |r: &u32| {
                Some(*r) == own || ((*r as usize) >= first_root && !param_roots.contains(&Some(*r)))
            };
            let foreign = results[k].iter().find(|r| {
                !ok_root(r) || {
                    let root = &self.roots[**r as usize];
                    root.level < body_level
                }
            });
            let shared = results
                .iter()
                .enumerate()
                .any(|(j, rj)| j != k && rj.iter().any(|r| results[k].contains(r)));
            if foreign.is_some() || shared {
                let x = &b.result[k];
                return Err(err(
                    x.span,
                    format!(
                        "the loop body consumes its parameter `{}`, so it must return for it an array made in the body that no other result aliases, but `{}` may alias {} (T-CONSUME)",
                        p.name.name,
                        x.name,
                        match foreign {
                            Some(r) => format!("`{}` from outside the loop", self.roots[*r as usize].name),
                            None => "another result".to_string(),
                        }
                    ),
                )
                .with_label(p.span, "parameter declared here"));
            }
        }
        // Consumption inside the body stays inside it; the loop itself
        // consumes the initial values of the parameters its body consumes.
        self.consumed = before;
        for (k, a) in init.iter().enumerate() {
            if let (true, Atom::Var(x)) = (consumed_params[k], a) {
                let rs = self.aliases_of(&x.name);
                self.consume(
                    &rs,
                    x.span,
                    &format!(
                        "the loop (its body updates parameter `{}`)",
                        ps[k].name.name
                    ),
                )?;
            }
        }
        let mut lifted = HashMap::default();
        for (k, q) in s.pats.iter().enumerate() {
            if q.ty.as_array().is_none() {
                continue;
            }
            let mut rs = self.lift(
                results[k].iter().copied(),
                first_root as u32,
                &mut lifted,
                &q.name,
            );
            if !consumed_params[k] {
                if let Some(Atom::Var(x)) = init.get(k) {
                    let a = self.aliases_of(&x.name);
                    union(&mut rs, &a);
                }
                // A body result that is (or aliases) another parameter may
                // carry that parameter's initial value out of the loop.
                if results[k].iter().any(|r| param_roots.contains(&Some(*r))) {
                    for a in init {
                        if let Atom::Var(x) = a {
                            let a = self.aliases_of(&x.name);
                            union(&mut rs, &a);
                        }
                    }
                }
            }
            self.aliases.insert(q.name.name.clone(), rs);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::Lang;
    use crate::parse::parse_program;

    fn check(src: &str) -> Result<(), String> {
        let p = parse_program(src, Lang::Fun).map_err(|d| format!("parse: {d}"))?;
        crate::check::check_program(&p).map_err(|d| {
            let labels: Vec<String> = d.labels.iter().map(|l| l.1.clone()).collect();
            format!("{} [{}]", d.message, labels.join("; "))
        })
    }

    #[track_caller]
    fn ok(src: &str) {
        if let Err(e) = check(src) {
            panic!("rejected: {e}\n{src}");
        }
    }

    #[track_caller]
    fn bad(src: &str, msgs: &[&str]) {
        match check(src) {
            Ok(()) => panic!("accepted:\n{src}"),
            Err(e) => {
                for m in msgs {
                    assert!(e.contains(m), "expected {m:?} in {e:?}");
                }
            }
        }
    }

    #[test]
    fn unique_parameters_and_made_arrays_can_be_consumed() {
        ok("def main (n: int) (xs: *[n]int) = let (ys: [n]int) = xs with [0] = 7 in (ys)");
        ok("def main (n: int) (xs: [n]int) =
              let (c: [n]int) = copy xs
              let (ys: [n]int) = c with [0] = 7
              let (v: int) = xs[0]
              in (ys, v)");
        bad(
            "def main (n: int) (xs: [n]int) = let (ys: [n]int) = xs with [0] = 7 in (ys)",
            &[
                "consumes the parameter `xs`, which is not unique (T-CONSUME)",
                "parameter declared here",
            ],
        );
    }

    #[test]
    fn no_use_after_consumption_through_any_alias() {
        bad(
            "def main (n: int) (xs: *[n]int) = let (ys: [n]int) = xs with [0] = 7 in (xs)",
            &[
                "`xs` is used after it was consumed",
                "T-USE",
                "consumed here",
            ],
        );
        bad(
            "def main (n: int) (xs: *[n]int) =
               let (s: [1]int) = xs[0 : 1]
               let (ys: [n]int) = xs with [0] = 7
               let (v: int) = s[0]
               in (ys, v)",
            &["`s`, which may alias `xs`,", "T-USE"],
        );
        // Consuming a slice consumes what it is a slice of.
        bad(
            "def main (n: int) (xs: *[n][n]int) =
               let (t: [n][n]int) = transpose xs
               let (u: [n][n]int) = t with [0, 0] = 1
               in (xs)",
            &["`xs` is used after it was consumed"],
        );
    }

    #[test]
    fn kernels_and_loops_consume_only_their_own_arrays() {
        bad(
            "def main (n: int) (xs: *[n]int) =
               let (r: [n]int) = kernel i < n do
                   let (ys: [n]int) = xs with [i] = 1
                   let (v: int) = ys[0]
                   in (v)
               in (r)",
            &[
                "made outside the enclosing kernel or loop body",
                "made here",
            ],
        );
        bad(
            "def main (n: int) (xs: *[n]int) =
               let (s: int) = loop (a: int) = (0) for i < n do
                   let (ys: [n]int) = xs with [i] = 1
                   let (v: int) = ys[0]
                   in (v)
               in (s)",
            &["made outside the enclosing kernel or loop body"],
        );
        ok("def main (n: int) =
              let (r: [n]int) = kernel i < n do
                  let (a: [n]int) = iota n
                  let (b: [n]int) = a with [0] = i
                  let (v: int) = b[0]
                  in (v)
              in (r)");
    }

    #[test]
    fn loops_consume_their_initial_values_through_their_parameters() {
        let src = |init: &str, after: &str| {
            format!(
                "def main (n: int) (xs: *[n]int) (zs: [n]int) =
                   let (c: [n]int) = copy xs
                   let (r: [n]int) = loop (a: [n]int) = ({init}) for i < n do
                       let (b: [n]int) = a with [i] = i
                       in (b)
                   in (r{after})"
            )
        };
        ok(&src("c", ""));
        ok(&src("xs", ""));
        bad(&src("c", ", c"), &["`c` is used after it was consumed"]);
        bad(
            &src("zs", ""),
            &["consumes the parameter `zs`, which is not unique"],
        );
        // The body must hand the next iteration an array of its own.
        bad(
            "def main (n: int) (xs: *[n]int) (ys: [n]int) =
               let (r: [n]int) = loop (a: [n]int) = (xs) for i < n do
                   let (b: [n]int) = a with [i] = i
                   let (v: int) = b[0]
                   in (ys)
               in (r)",
            &[
                "must return for it an array made in the body",
                "`ys` from outside the loop",
            ],
        );
        // A loop that does not consume returns what may be its initial value.
        bad(
            "def main (n: int) (xs: *[n]int) =
               let (r: [n]int) = loop (a: [n]int) = (xs) for i < n do
                   in (a)
               let (ys: [n]int) = xs with [0] = 1
               in (r, ys)",
            &["`r`, which may alias `xs`,"],
        );
    }

    #[test]
    fn branches_consume_separately_and_together_afterwards() {
        let src = |after: &str| {
            format!(
                "def main (c: int) (n: int) (xs: *[n]int) =
                   let (r: [n]int) = if c then
                       let (a: [n]int) = xs with [0] = 1
                       in (a)
                     else
                       let (v: int) = xs[0]
                       let (b: [n]int) = copy xs
                       in (b)
                   in (r{after})"
            )
        };
        ok(&src(""));
        bad(&src(", xs"), &["`xs` is used after it was consumed"]);
        // One array returned twice: the two results alias each other.
        bad(
            "def main (n: int) (xs: *[n]int) =
               let (a: [n]int) (b: [n]int) = if n then
                   let (t: [n]int) = iota n
                   in (t, t)
                 else
                   let (e: [n]int) = iota n
                   in (e, e)
               let (u: [n]int) = b with [0 : n] = xs
               in (a)",
            &["`a` is used after it was consumed"],
        );
        bad(
            "def main (n: int) =
               let (z: [n]int) = iota n
               let (a: [n]int) (b: [n]int) = loop (p: [n]int) (q: [n]int) = (z, z) for i < 2 do
                   let (t: [n]int) = iota n
                   in (t, t)
               let (u: [n]int) = b with [0] = 1
               in (a)",
            &["`a` is used after it was consumed"],
        );
        // An `if` that may return its operand aliases it.
        bad(
            "def main (c: int) (n: int) (xs: *[n]int) =
               let (r: [n]int) = if c then in (xs) else let (b: [n]int) = iota n in (b)
               let (ys: [n]int) = xs with [0] = 1
               in (r, ys)",
            &["`r`, which may alias `xs`,"],
        );
    }
}
