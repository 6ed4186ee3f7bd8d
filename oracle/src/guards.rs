//! The guard check (`Checks.guards`): every index and slice of the FUNMEM
//! program that is lowered to IMP is either shown in bounds by a fact of
//! its own, or guarded in the IMP program by an `assert index` /
//! `assert slice` that tests exactly its bounds.
//!
//! Why. IMP has only blocks, so an index past its array's end but inside
//! its block reads a neighbouring element where FUNMEM gets stuck
//! (E-INDEX, E-SLICE). A translation that drops a guard is caught by the
//! differential checks only when some input makes that access go out of
//! bounds *and* stay inside the block; this check sees the missing guard
//! on any program, whatever its inputs, since it looks at the code alone.
//!
//! How, independently of the translation's own reasoning. A dimension
//! needs no guard when a fact of the FUNMEM program covers it: a literal
//! index below a literal size, the index of an enclosing kernel whose bound
//! is that very size, or a literal slice inside a literal size. Every
//! other dimension needs the conjuncts the semantics' bounds test is made
//! of: `0 <= a` (unless `a` is a non-negative literal) and `a < n` for an
//! index `a` into a dimension of size `n`; `0 <= o`, `0 <= k` and
//! `o <= n - k` for a slice `o : k`. The IMP program's asserts are listed in
//! program order (bodies of kernels and branches where they stand), and
//! each access that needs a guard takes the first assert after the one the
//! previous access took that has its kind and all its conjuncts: since the
//! translation keeps the order of statements, a dropped guard leaves some
//! access without one. Both walks visit each statement once and each
//! search moves forward only, so the check is linear in the programs.
//!
//! An in-place update `y with [j, o : k] = v` needs the index conjuncts of
//! its element indices in an `assert index` and the slice conjuncts of its
//! ranges in an `assert slice`; a `for` loop's index, like a kernel's, is a
//! fact over its bound; loop bodies are walked where they stand.
//!
//! What it does not cover: an assert that tests the right conjuncts but
//! stands in another branch than its access (the order match does not see
//! scopes), and whether the translated read or write uses the index it
//! guards (the differential checks judge addresses).

use funmem_lang::ast::{
    Atom, BinOp, Body, ExpKind, LoopForm, Program, RedOp, SExp, Type, UnOp, UpdIdx,
};
use funmem_lang::imp::{self, Check, ImpOp, Stmt, StmtKind};
use funmem_lang::prim::Prim;
use funmem_lang::Name;
use std::collections::HashMap;

/// Checks that every index and slice of `funmem` (the program lowered) is
/// covered by a fact or guarded in `imp` (its translation). The error says
/// which access lacks its guard.
pub fn check(funmem: &Program, imp: &imp::Program) -> Result<(), String> {
    let mut asserts = Vec::new();
    collect_asserts(&imp.body, &mut asserts);
    let mut w = Walk {
        shapes: HashMap::default(),
        kernels: Vec::new(),
        asserts,
        next: 0,
    };
    for q in &funmem.params {
        w.bind(&q.name.name, &q.ty);
    }
    w.body(&funmem.body)
}

/// An assert of the IMP program: its kind and its conjuncts.
struct Assert<'a> {
    check: Check,
    conjuncts: Vec<&'a SExp>,
}

fn collect_asserts<'a>(stmts: &'a [Stmt], out: &mut Vec<Assert<'a>>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Assert(check, cond) => {
                let mut conjuncts = Vec::new();
                conjuncts_of(cond, &mut conjuncts);
                out.push(Assert {
                    check: *check,
                    conjuncts,
                });
            }
            StmtKind::If(_, t, e) => {
                collect_asserts(t, out);
                collect_asserts(e, out);
            }
            StmtKind::Kernel(_, _, b) | StmtKind::For(_, _, b) | StmtKind::While(_, b) => {
                collect_asserts(b, out)
            }
            // A reduction's operator, then its iterations (the order of the
            // FUNMEM lambda's accesses).
            StmtKind::Reduce(_, r) | StmtKind::Scan(r, _, _) => {
                if let ImpOp::Lambda(_, _, b, _) = &r.op {
                    collect_asserts(b, out);
                }
                collect_asserts(&r.body, out);
            }
            _ => {}
        }
    }
}

/// The operands of a tree of `&&`, left to right (through a conversion of
/// the truth value to an int or bool, which parsing may add).
fn conjuncts_of<'a>(e: &'a SExp, out: &mut Vec<&'a SExp>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            SExp::Bin(BinOp::And, l, r, _) => {
                stack.push(r);
                stack.push(l);
            }
            SExp::Un(UnOp::Conv(Prim::I64 | Prim::Bool), inner, _) => stack.push(inner),
            e => out.push(e),
        }
    }
}

struct Walk<'a> {
    /// The shape of every array bound so far (names are never shadowed).
    shapes: HashMap<Name, Vec<Atom>>,
    /// Enclosing kernels: index and bound.
    kernels: Vec<(Name, Atom)>,
    asserts: Vec<Assert<'a>>,
    /// The first assert no access has taken yet.
    next: usize,
}

fn lit(a: &Atom) -> Option<i64> {
    match a {
        Atom::Int(k, _) => Some(*k),
        Atom::Var(_) | Atom::Const(..) => None,
    }
}

fn se(a: &Atom) -> SExp {
    SExp::Atom(a.clone())
}

fn show(a: &Atom) -> String {
    funmem_lang::print::sexp_string(&se(a))
}

/// The conjuncts `0 <= o`, `0 <= k`, `o <= n - k` a slice or range
/// `o : k` of a dimension `n` needs unless all three are literals in bounds.
fn slice_needs(o: &Atom, k: &Atom, n: &Atom, need: &mut Vec<SExp>) {
    if let (Some(o), Some(k), Some(n)) = (lit(o), lit(k), lit(n)) {
        if o >= 0 && k >= 0 && o.checked_add(k).is_some_and(|e| e <= n) {
            return;
        }
    }
    need.push(SExp::bin(BinOp::Le, SExp::int(0), se(o)));
    need.push(SExp::bin(BinOp::Le, SExp::int(0), se(k)));
    need.push(SExp::bin(
        BinOp::Le,
        se(o),
        SExp::bin(BinOp::Sub, se(n), se(k)),
    ));
}

impl Walk<'_> {
    fn bind(&mut self, x: &Name, ty: &Type) {
        if let Type::Array(a, _) = ty {
            self.shapes.insert(x.clone(), a.shape.clone());
        }
    }

    /// A fact makes `0 <= a < n`: literals, or an enclosing kernel's index
    /// over exactly `n`.
    fn covered(&self, a: &Atom, n: &Atom) -> bool {
        match (a, lit(n)) {
            (Atom::Int(k, _), Some(m)) => 0 <= *k && *k < m,
            (Atom::Var(i), _) => self.kernels.iter().any(|(j, b)| *j == i.name && b == n),
            _ => false,
        }
    }

    fn body(&mut self, b: &Body) -> Result<(), String> {
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::Index(y, idx) => {
                    let shape = self.shape(&y.name)?;
                    let mut need = Vec::new();
                    for (a, n) in idx.iter().zip(&shape) {
                        self.index_needs(a, n, &mut need);
                    }
                    let what = || {
                        let idx: Vec<String> = idx.iter().map(show).collect();
                        format!("`{}[{}]`", y.name, idx.join(", "))
                    };
                    self.take(Check::Index, &need, what)?;
                }
                ExpKind::Slice(y, sl) => {
                    let shape = self.shape(&y.name)?;
                    let mut need = Vec::new();
                    for ((o, k), n) in sl.iter().zip(&shape) {
                        slice_needs(o, k, n, &mut need);
                    }
                    let what = || {
                        let sl: Vec<String> = sl
                            .iter()
                            .map(|(o, k)| format!("{} : {}", show(o), show(k)))
                            .collect();
                        format!("`{}[{}]`", y.name, sl.join(", "))
                    };
                    self.take(Check::Slice, &need, what)?;
                }
                // An update's element indices are guarded like an index,
                // its ranges like a slice (in that order).
                ExpKind::Update(y, is, _) => {
                    let shape = self.shape(&y.name)?;
                    let (mut elems, mut ranges) = (Vec::new(), Vec::new());
                    for (ix, n) in is.iter().zip(&shape) {
                        match ix {
                            UpdIdx::Elem(a) => self.index_needs(a, n, &mut elems),
                            UpdIdx::Range(o, k) => slice_needs(o, k, n, &mut ranges),
                        }
                    }
                    let what = || {
                        let is: Vec<String> = is
                            .iter()
                            .map(|ix| match ix {
                                UpdIdx::Elem(a) => show(a),
                                UpdIdx::Range(o, k) => format!("{} : {}", show(o), show(k)),
                            })
                            .collect();
                        format!("`{} with [{}]`", y.name, is.join(", "))
                    };
                    self.take(Check::Index, &elems, what)?;
                    self.take(Check::Slice, &ranges, what)?;
                }
                // A `for`'s index is a fact like a kernel's.
                ExpKind::Loop(ps, _, form, lb) => {
                    for p in ps {
                        self.bind(&p.name.name, &p.ty);
                    }
                    let fact = match form {
                        LoopForm::For(i, n) => {
                            self.kernels.push((i.name.clone(), n.clone()));
                            true
                        }
                        LoopForm::While(_) => false,
                    };
                    let r = self.body(lb);
                    if fact {
                        self.kernels.pop();
                    }
                    r?;
                }
                ExpKind::If(_, t, e) => {
                    self.body(t)?;
                    self.body(e)?;
                }
                // A reduction's operator is code like a kernel body's; its
                // own reads of xs are in bounds by construction.
                ExpKind::Reduce(RedOp::Lambda(l), _, _) | ExpKind::Scan(RedOp::Lambda(l), _, _) => {
                    for p in &l.params {
                        self.bind(&p.name.name, &p.ty);
                    }
                    self.body(&l.body)?;
                }
                ExpKind::Kernel(i, n, kb) => {
                    self.kernels.push((i.name.clone(), n.clone()));
                    let r = self.body(kb);
                    self.kernels.pop();
                    r?;
                }
                _ => {}
            }
            for p in &s.pats {
                self.bind(&p.name.name, &p.ty);
            }
        }
        Ok(())
    }

    /// The conjuncts `0 <= a` and `a < n` an index needs unless covered.
    fn index_needs(&self, a: &Atom, n: &Atom, need: &mut Vec<SExp>) {
        if self.covered(a, n) {
            return;
        }
        if lit(a).is_none_or(|k| k < 0) {
            need.push(SExp::bin(BinOp::Le, SExp::int(0), se(a)));
        }
        need.push(SExp::bin(BinOp::Lt, se(a), se(n)));
    }

    fn shape(&self, y: &Name) -> Result<Vec<Atom>, String> {
        self.shapes
            .get(y)
            .cloned()
            .ok_or_else(|| format!("`{y}` is indexed but is not an array in scope"))
    }

    /// Takes the first assert from `next` on of kind `check` that has
    /// every conjunct of `need` (nothing when `need` is empty).
    fn take(
        &mut self,
        check: Check,
        need: &[SExp],
        what: impl Fn() -> String,
    ) -> Result<(), String> {
        if need.is_empty() {
            return Ok(());
        }
        let found = self.asserts[self.next..]
            .iter()
            .position(|a| a.check == check && need.iter().all(|c| a.conjuncts.contains(&c)));
        match found {
            Some(k) => {
                self.next += k + 1;
                Ok(())
            }
            None => {
                let conds: Vec<String> = need.iter().map(funmem_lang::print::sexp_string).collect();
                Err(format!(
                    "{} is not shown in bounds, and the IMP program has no `assert {}` testing {} where it stands",
                    what(),
                    check.keyword(),
                    conds.join(" && ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;
    use funmem_lang::parse::AnyProgram;

    /// The last FUNMEM stage and the IMP stage of a FUN program.
    fn lowered(text: &str) -> (Program, imp::Program) {
        let p = funmem_lang::parse::parse_program(text, Lang::Fun).expect("parses");
        let st = funmem_transforms::pipeline::stages(
            &AnyProgram::Fun(p),
            &[],
            true,
            &funmem_transforms::obligation::NoProver,
        )
        .expect("lowers");
        let mem = match &st[st.len() - 2].program {
            AnyProgram::Fun(q) => q.clone(),
            AnyProgram::Imp(_) => panic!("not FUNMEM"),
        };
        let imp = match &st[st.len() - 1].program {
            AnyProgram::Imp(q) => q.clone(),
            AnyProgram::Fun(_) => panic!("not IMP"),
        };
        (mem, imp)
    }

    const OTHER_BOUND: &str = "def main (n: int) (m: int) (xs: [n]int) =\n  let (k: [m]int) = kernel i < m do\n    let (y: int) = xs[i]\n    in (y)\n  in (k)\n";
    const SAME_BOUND: &str = "def main (n: int) (xs: [n]int) =\n  let (k: [n]int) = kernel i < n do\n    let (y: int) = xs[i]\n    let (b: [1]int) = xs[i : 1]\n    in (y)\n  in (k)\n";

    #[test]
    fn the_shipped_translation_guards_what_it_must() {
        for text in [OTHER_BOUND, SAME_BOUND] {
            let (mem, imp) = lowered(text);
            assert_eq!(check(&mem, &imp), Ok(()), "{text}");
        }
    }

    fn drop_asserts(s: &mut Vec<Stmt>) {
        s.retain(|s| !matches!(s.kind, StmtKind::Assert(..)));
        for s in s {
            match &mut s.kind {
                StmtKind::Kernel(_, _, b) | StmtKind::For(_, _, b) | StmtKind::While(_, b) => {
                    drop_asserts(b)
                }
                StmtKind::If(_, t, e) => {
                    drop_asserts(t);
                    drop_asserts(e);
                }
                _ => {}
            }
        }
    }

    /// A FUNMEM program and its IMP translation.
    fn lowered_mem(text: &str) -> (Program, imp::Program) {
        let p = funmem_lang::parse::parse_program(text, Lang::FunMem).expect("parses");
        funmem_lang::check::check_program(&p).expect("type checks");
        let imp = funmem_transforms::to_imp::fun_mem_to_imp(&p).expect("lowers");
        (p, imp)
    }

    /// Updates of an element and of a range inside a `for` loop whose
    /// index is a fact for the range's row.
    const UPDATES: &str = "def main (n: int) (j: int) (o: int) (t: int) =
  let (xm: mem) = alloc 12
  let (xs: [3][4]int @ xm -> R(3, 4)) = kernel i < 3 do
      let (row: [4]int @ xm -> i * 4 + {(4 : 1)}) = kernel k < 4 do
          let (v: int) = i * 10 + k
          in (v)
      in (row)
  let (ys: [3][4]int @ xm -> R(3, 4)) = xs with [1, j] = 99
  let (rm: mem) = alloc 2
  let (r: [2]int @ rm -> R(2)) = iota 2
  let (zs: [3][4]int @ xm -> R(3, 4)) = loop (a: [3][4]int @ xm -> R(3, 4)) = (ys) for q < 3 do
      let (b: [3][4]int @ xm -> R(3, 4)) = a with [q, o : 2] = r
      in (b)
  in (zs)
";

    #[test]
    fn updates_and_loops_are_guarded() {
        let (mem, mut imp) = lowered_mem(UPDATES);
        assert_eq!(check(&mem, &imp), Ok(()));
        drop_asserts(&mut imp.body);
        let e = check(&mem, &imp).expect_err("no guard");
        assert!(
            e.contains("`xs with [1, j]`") && e.contains("assert index") && e.contains("j < 4"),
            "{e}"
        );
        // Only the range's guard dropped: the loop body is walked.
        let (mem, mut imp) = lowered_mem(UPDATES);
        fn drop_in_loops(s: &mut [Stmt]) {
            for s in s {
                if let StmtKind::For(_, _, b) = &mut s.kind {
                    b.retain(|s| !matches!(s.kind, StmtKind::Assert(..)));
                }
            }
        }
        drop_in_loops(&mut imp.body);
        let e = check(&mem, &imp).expect_err("no guard");
        assert!(
            e.contains("`a with [q, o : 2]`") && e.contains("assert slice"),
            "{e}"
        );
    }

    #[test]
    fn a_dropped_guard_is_reported() {
        let (mem, mut imp) = lowered(OTHER_BOUND);
        drop_asserts(&mut imp.body);
        let e = check(&mem, &imp).expect_err("no guard");
        assert!(e.contains("`xs[i]`") && e.contains("i < n"), "{e}");
        // A slice of variable bounds needs its guard too.
        let (mem, mut imp) = lowered(SAME_BOUND);
        drop_asserts(&mut imp.body);
        let e = check(&mem, &imp).expect_err("no guard");
        assert!(
            e.contains("`xs[i : 1]`") && e.contains("assert slice"),
            "{e}"
        );
    }
}
