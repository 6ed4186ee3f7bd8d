//! Allocation hoisting: the pass `hoist-allocs`.
//!
//! Memory block coalescing (Serup's thesis, ch. 5, safety condition 2) may
//! make a source array live in the block of its destination only when that
//! block is allocated *before* the source is created. Lowering places each
//! `alloc` just before the statement whose result lives in it, so a
//! destination block is usually allocated after its source. This pass is
//! the thesis's allocation hoisting (ch. 7, figs. 7.1-7.2): every `alloc`
//! moves up its body as far as the free variables of its size allow, so
//! that condition 2 holds as often as it can. (The thesis also moves the
//! creation of an array that an update writes into, figs. 7.3-7.5; that
//! belongs with coalescing, which knows when it is needed.)
//!
//! **Invariant.** An allocation moves only within the body that holds it
//! (the program's, a branch's, a loop's or a kernel's), never out of it:
//! taking an allocation out of a kernel or a loop changes how many blocks
//! there are and is memory expansion's job (`expand-cpu`/`expand-gpu`).
//! Inside its body it moves above every statement that does not bind a
//! variable its size reads, and stops below the last one that does
//! (allocations move above each other too: one block more or less at a
//! point changes no value).
//!
//! **What order can change.** An allocation has no effect on the values of
//! a program: it writes nothing that anyone reads before it is written, and
//! no statement reads a block it did not name. It may however go wrong:
//! its size may be negative or divide by zero (stuck), or exceed the heap
//! limit. Moving a stuck allocation above a statement that is itself stuck
//! keeps how the program goes wrong (stuck either way); moving it above a
//! kernel that races would turn a race into a stuck program. So an
//! allocation whose size is not evidently a non-negative count (see
//! [`non_negative`]) does not move above a statement that holds a kernel.
//! The heap limit is not part of a program's meaning (docs/limits.md): a
//! hoisted block lives longer and may raise peak memory, which `funmem
//! stats` shows.
//!
//! Scalar statements that cannot go wrong (no division or remainder) move
//! up the same way, so that the size of a block computed late (`let nn =
//! n + n` written after the array that is concatenated) does not keep the
//! block from moving.
//!
//! With `--explain`, the pass says for every allocation where it moved (or
//! that it stayed) and what stopped it.

use crate::obligation::Prover;
use crate::pass::{Counts, PassOutput};
use funmem_lang::ast::*;
use funmem_lang::diag::Diagnostic;
use funmem_lang::Name;
use rustc_hash::FxHashSet as HashSet;

/// The pass `hoist-allocs`.
pub fn hoist_pass(p: &Program, _: &dyn Prover) -> Result<PassOutput, Diagnostic> {
    let mut h = Hoister::default();
    for q in &p.params {
        if let Type::Array(a, _) = &q.ty {
            for s in &a.shape {
                if let Atom::Var(x) = s {
                    h.counts_sizes.insert(x.name.clone());
                }
            }
        }
    }
    let body = h.body(&p.body, "the program");
    Ok(PassOutput {
        program: Program { body, ..p.clone() },
        obligations: Vec::new(),
        counts: h.counts,
        explain: h.explain,
    })
}

#[derive(Default)]
struct Hoister {
    /// Names known to hold non-negative integers: sizes of the inputs,
    /// kernel and loop indices, and scalars computed from them by `+`,
    /// `*`, `min` and `max`.
    counts_sizes: HashSet<Name>,
    counts: Counts,
    explain: Vec<String>,
}

/// Whether `se` is evidently a non-negative count that cannot go wrong: a
/// literal `>= 0`, a name in `known`, or `+`, `*`, `min`, `max` of such
/// (`max` needs one side only). No division or remainder (zero divisors
/// are stuck). A product of sizes large enough to wrap past `i64::MAX`
/// would be negative; sizes of that magnitude cannot be allocated in any
/// case, so they are not considered.
pub fn non_negative(se: &SExp, known: &HashSet<Name>) -> bool {
    match se {
        SExp::Atom(Atom::Int(k, _)) => *k >= 0,
        SExp::Atom(Atom::Var(x)) => known.contains(&x.name),
        SExp::Atom(Atom::Const(..)) => false,
        SExp::Bin(BinOp::Max, a, b, _) => non_negative(a, known) || non_negative(b, known),
        SExp::Bin(BinOp::Add | BinOp::Mul | BinOp::Min, a, b, _) => {
            non_negative(a, known) && non_negative(b, known)
        }
        _ => false,
    }
}

/// The earliest place in `out` for a statement reading the variables of
/// `se`: just after the last statement binding one of them.
fn hoist_limit(se: &SExp, out: &[Stm]) -> usize {
    let mut reads: HashSet<&Name> = HashSet::default();
    se.for_each_var(&mut |x| {
        reads.insert(&x.name);
    });
    out.iter()
        .rposition(|s| s.pats.iter().any(|p| reads.contains(&p.name.name)))
        .map_or(0, |k| k + 1)
}

/// Whether evaluating the expression may run a kernel (and so may race).
pub fn has_kernel(e: &Exp) -> bool {
    fn body(b: &Body) -> bool {
        b.stms.iter().any(|s| has_kernel(&s.exp))
    }
    match &e.kind {
        ExpKind::Kernel(..) => true,
        ExpKind::If(_, t, f) => body(t) || body(f),
        ExpKind::Loop(_, _, _, b) => body(b),
        _ => false,
    }
}

/// The first name a statement binds, for messages.
fn first_name(s: &Stm) -> String {
    s.pats
        .first()
        .map_or_else(|| "?".to_string(), |p| p.name.name.to_string())
}

impl Hoister {
    fn body(&mut self, b: &Body, place: &str) -> Body {
        let mut out: Vec<Stm> = Vec::with_capacity(b.stms.len());
        for s in &b.stms {
            let s = self.nested(s);
            match &s.exp.kind {
                ExpKind::Alloc(se, _) => {
                    self.counts.add("allocations", 1);
                    let at = self.place_of(se, &out, &s, place);
                    out.insert(at, s);
                }
                ExpKind::Scalar(se) => {
                    if non_negative(se, &self.counts_sizes) {
                        for p in &s.pats {
                            self.counts_sizes.insert(p.name.name.clone());
                        }
                    }
                    if se.divides() {
                        out.push(s);
                    } else {
                        // A scalar that cannot go wrong moves up with the
                        // allocations, so a size computed late does not
                        // hold its block back.
                        let at = hoist_limit(se, &out);
                        if at < out.len() {
                            self.counts.add("scalars hoisted", 1);
                        }
                        out.insert(at, s);
                    }
                }
                _ => out.push(s),
            }
        }
        Body {
            stms: out,
            ..b.clone()
        }
    }

    /// Where in `out` (the statements before it, already hoisted) the
    /// allocation `s` of size `se` goes, with the explanation.
    fn place_of(&mut self, se: &SExp, out: &[Stm], s: &Stm, place: &str) -> usize {
        let mut reads: HashSet<&Name> = HashSet::default();
        se.for_each_var(&mut |x| {
            reads.insert(&x.name);
        });
        let safe = non_negative(se, &self.counts_sizes);
        let block = first_name(s);
        let mut at = out.len();
        let mut why = None;
        while at > 0 {
            let prev = &out[at - 1];
            if let Some(p) = prev.pats.iter().find(|p| reads.contains(&p.name.name)) {
                why = Some(format!("its size reads `{}`, bound there", p.name.name));
                break;
            }
            if !safe && has_kernel(&prev.exp) {
                why = Some(format!(
                    "its size `{se}` may go wrong and that statement runs a kernel that may race"
                ));
                self.counts.add("stopped by a kernel", 1);
                break;
            }
            at -= 1;
        }
        let moved = out.len() - at;
        let line = match why {
            None if moved == 0 => format!("`{block}` is already at the start of {place}"),
            None => format!("`{block}` moved above {moved} statement(s), to the start of {place}"),
            Some(why) => {
                let after = out
                    .get(at.wrapping_sub(1))
                    .map_or_else(String::new, first_name);
                if moved == 0 {
                    format!("`{block}` stays after `{after}`: {why}")
                } else {
                    format!(
                        "`{block}` moved above {moved} statement(s), to just after `{after}`: {why}"
                    )
                }
            }
        };
        if moved > 0 {
            self.counts.add("hoisted", 1);
        }
        self.explain.push(line);
        at
    }

    /// The statement with its nested bodies hoisted within themselves.
    fn nested(&mut self, s: &Stm) -> Stm {
        let name = first_name(s);
        let kind = match &s.exp.kind {
            ExpKind::If(c, t, f) => ExpKind::If(
                c.clone(),
                self.body(t, &format!("the `then` branch of `{name}`")),
                self.body(f, &format!("the `else` branch of `{name}`")),
            ),
            ExpKind::Kernel(i, n, b) => {
                self.counts_sizes.insert(i.name.clone());
                ExpKind::Kernel(
                    i.clone(),
                    n.clone(),
                    self.body(b, &format!("the body of the kernel of `{name}`")),
                )
            }
            ExpKind::Loop(ps, init, form, b) => {
                if let LoopForm::For(i, _) = form {
                    self.counts_sizes.insert(i.name.clone());
                }
                ExpKind::Loop(
                    ps.clone(),
                    init.clone(),
                    form.clone(),
                    self.body(b, &format!("the body of the loop of `{name}`")),
                )
            }
            _ => return s.clone(),
        };
        Stm {
            exp: Exp {
                kind,
                span: s.exp.span,
            },
            ..s.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obligation::NoProver;
    use funmem_lang::parse::parse_program;

    /// The names the body's statements bind, in order, and the explanation.
    fn hoisted(text: &str) -> (Vec<String>, Vec<String>) {
        let p = parse_program(text, Lang::FunMem).expect("parses");
        funmem_lang::check::check_program(&p).expect("type-checks");
        let out = hoist_pass(&p, &NoProver).expect("runs");
        funmem_lang::check::check_program(&out.program).expect("still type-checks");
        (
            out.program.body.stms.iter().map(first_name).collect(),
            out.explain,
        )
    }

    #[test]
    fn an_allocation_moves_above_what_it_does_not_depend_on() {
        let (order, explain) = hoisted(
            "def main (n: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
               let (am: mem) = alloc n
               let (a: [n]i64 @ am -> R(n)) = copy xs
               let (k: int) = n + 1
               let (bm: mem) = alloc k
               let (b: [k]i64 @ bm -> R(k)) = iota k
               let (cm: mem) = alloc n
               let (c: [n]i64 @ cm -> R(n)) = copy a
               in (c, b)",
        );
        // `k = n + 1` cannot go wrong: it moves up, and `bm` right after it.
        assert_eq!(order, ["cm", "k", "bm", "am", "a", "b", "c"]);
        assert!(
            explain
                .iter()
                .any(|l| l.contains("`bm` moved above 2 statement(s), to just after `k`")),
            "{explain:?}"
        );
    }

    #[test]
    fn a_size_that_may_go_wrong_does_not_move_above_a_kernel() {
        let (order, explain) = hoisted(
            "def main (n: int) (d: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
               let (ym: mem) = alloc n
               let (ys: [n]i64 @ ym -> R(n)) = kernel i < n do
                   let (x: int) = xs[i]
                 in (x)
               let (zm: mem) = alloc n / d
               let (wm: mem) = alloc n + 1
               let (w: [n]i64 @ wm -> R(n)) = copy ys
               in (w)",
        );
        assert_eq!(order, ["wm", "ym", "ys", "zm", "w"]);
        assert!(
            explain.iter().any(|l| l.contains("may race")),
            "{explain:?}"
        );
    }

    #[test]
    fn non_negative_sizes() {
        let known: HashSet<Name> = [Name::new("n")].into_iter().collect();
        let p = |t: &str| {
            let text = format!("def main (n: int) (m: int) = let (x: int) = {t} in (x)");
            let p = parse_program(&text, Lang::Fun).expect("parses");
            match &p.body.stms[0].exp.kind {
                ExpKind::Scalar(se) => non_negative(se, &known),
                _ => panic!("a scalar"),
            }
        };
        assert!(p("n * 2 + 1"));
        assert!(p("max(m, 0)"));
        assert!(!p("n - 1"));
        assert!(!p("n / 2"));
        assert!(!p("m"));
    }
}
