//! Coalescing candidates in a FUN program, counted syntactically.
//!
//! Memory block coalescing (the `coalesce` pass) makes an array live in
//! the block of the array it ends up in. It looks at *root statements*:
//! `copy x`, `concat x y`, in-place updates with an array value
//! (`z with [i] = x`, `z with [a:b] = x`), and kernels whose body returns
//! an array (copied into the kernel's result row). A root is a
//! *candidate* when its source `x` was made in the same body by a
//! statement that creates a fresh array (`iota`, `replicate`, `copy`,
//! `concat`, a kernel or `scan`) and neither `x` nor a view of it (a slice,
//! transpose or row taken after it was made) is used after the root.
//!
//! [`root_statements`] counts them per kind, so that the fuzzer can say how
//! often its programs give the pass something to do. It is an estimate of
//! the pass's opportunities, not the pass's verdict: the destination's uses
//! (condition C3) and allocation order (C2) are not looked at.

use funmem_lang::ast::{Atom, Body, ExpKind, Program, RedOp, SExp, Stm, Type, UpdIdx};
use funmem_lang::Name;
use std::collections::HashSet;

/// How many candidate root statements of each kind a program has
/// (nested bodies included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RootCounts {
    /// `copy x` of a fresh `x` at its last use.
    pub copy: u64,
    /// `concat x y` where `x` or `y` is fresh and used last there.
    pub concat: u64,
    /// `z with [...] = x` with an array `x`, fresh and used last there.
    pub update: u64,
    /// Kernels whose body returns an array it made fresh.
    pub kernel: u64,
}

impl RootCounts {
    /// All candidates together.
    pub fn total(&self) -> u64 {
        self.copy + self.concat + self.update + self.kernel
    }

    /// Adds another program's counts.
    pub fn add(&mut self, o: &RootCounts) {
        self.copy += o.copy;
        self.concat += o.concat;
        self.update += o.update;
        self.kernel += o.kernel;
    }
}

/// Counts the coalescing candidates of a FUN program (see the module doc).
pub fn root_statements(p: &Program) -> RootCounts {
    let mut n = RootCounts::default();
    count_body(&p.body, &mut n);
    n
}

/// Whether a statement makes a fresh array (its own storage).
fn creates_fresh(s: &Stm) -> bool {
    let array = s.pats.len() == 1 && matches!(s.pats[0].ty, Type::Array(..));
    array
        && matches!(
            s.exp.kind,
            ExpKind::Iota(_)
                | ExpKind::Replicate(..)
                | ExpKind::Copy(_)
                | ExpKind::Concat(..)
                | ExpKind::Kernel(..)
                | ExpKind::Scan(..)
        )
}

/// Whether `x`, bound in `b.stms[..at]` by a fresh statement, is a source
/// whose last use is the statement at `at`: nothing after it (or the
/// body's result) mentions `x` or a view of `x` made in between. With
/// `at == b.stms.len()` the root is the body's result itself (a kernel's
/// row), which then may mention `x`.
fn fresh_last_use(b: &Body, at: usize, x: &Name) -> bool {
    let Some(made) = b.stms[..at]
        .iter()
        .rposition(|s| s.pats.iter().any(|q| &q.name.name == x))
    else {
        return false;
    };
    if !creates_fresh(&b.stms[made]) {
        return false;
    }
    // x and the views of it made before the root.
    let mut views: HashSet<&Name> = HashSet::from([x]);
    for s in &b.stms[made + 1..at] {
        let view = match &s.exp.kind {
            ExpKind::Slice(y, _) | ExpKind::Transpose(y) => views.contains(&y.name),
            ExpKind::Index(y, _) => {
                views.contains(&y.name)
                    && matches!(s.pats.first(), Some(q) if matches!(q.ty, Type::Array(..)))
            }
            _ => false,
        };
        if view {
            views.extend(s.pats.iter().map(|q| &q.name.name));
        }
    }
    let mut later = HashSet::new();
    for s in b.stms.iter().skip(at + 1) {
        names_in_stm(s, &mut later);
    }
    if at < b.stms.len() {
        for r in &b.result {
            later.insert(r.name.clone());
        }
    }
    !views.iter().any(|v| later.contains(*v))
}

fn count_body(b: &Body, n: &mut RootCounts) {
    for (at, s) in b.stms.iter().enumerate() {
        match &s.exp.kind {
            ExpKind::Copy(x) => n.copy += u64::from(fresh_last_use(b, at, &x.name)),
            ExpKind::Concat(x, y) => {
                n.concat += u64::from(
                    (x.name != y.name)
                        && (fresh_last_use(b, at, &x.name) || fresh_last_use(b, at, &y.name)),
                )
            }
            ExpKind::Update(_, _, Atom::Var(x)) => {
                n.update += u64::from(fresh_last_use(b, at, &x.name))
            }
            ExpKind::Kernel(_, _, kb) => {
                let returns_fresh = kb
                    .result
                    .iter()
                    .any(|r| fresh_last_use(kb, kb.stms.len(), &r.name));
                n.kernel += u64::from(returns_fresh);
                count_body(kb, n);
            }
            ExpKind::If(_, t, e) => {
                count_body(t, n);
                count_body(e, n);
            }
            ExpKind::Loop(_, _, _, lb) => count_body(lb, n),
            ExpKind::Reduce(RedOp::Lambda(l), ..) | ExpKind::Scan(RedOp::Lambda(l), ..) => {
                count_body(&l.body, n)
            }
            _ => {}
        }
    }
}

/// Adds every name a statement mentions (nested bodies included) to `out`.
fn names_in_stm(s: &Stm, out: &mut HashSet<Name>) {
    let atom = |a: &Atom, out: &mut HashSet<Name>| {
        if let Atom::Var(x) = a {
            out.insert(x.name.clone());
        }
    };
    for q in &s.pats {
        if let Type::Array(t, _) = &q.ty {
            for d in &t.shape {
                atom(d, out);
            }
        }
    }
    match &s.exp.kind {
        ExpKind::Scalar(e) => names_in_sexp(e, out),
        ExpKind::Index(x, idx) => {
            out.insert(x.name.clone());
            idx.iter().for_each(|a| atom(a, out));
        }
        ExpKind::Slice(x, pairs) => {
            out.insert(x.name.clone());
            for (o, k) in pairs {
                atom(o, out);
                atom(k, out);
            }
        }
        ExpKind::Transpose(x) | ExpKind::Copy(x) => {
            out.insert(x.name.clone());
        }
        ExpKind::If(c, t, e) => {
            out.insert(c.name.clone());
            names_in_body(t, out);
            names_in_body(e, out);
        }
        ExpKind::Kernel(_, n, b) => {
            atom(n, out);
            names_in_body(b, out);
        }
        ExpKind::Iota(n) => atom(n, out),
        ExpKind::Alloc(e, _) => names_in_sexp(e, out),
        ExpKind::Loop(_, init, form, b) => {
            init.iter().for_each(|a| atom(a, out));
            if let funmem_lang::ast::LoopForm::For(_, n) = form {
                atom(n, out);
            }
            names_in_body(b, out);
        }
        ExpKind::Update(x, idx, v) => {
            out.insert(x.name.clone());
            for i in idx {
                match i {
                    UpdIdx::Elem(a) => atom(a, out),
                    UpdIdx::Range(o, k) => {
                        atom(o, out);
                        atom(k, out);
                    }
                }
            }
            atom(v, out);
        }
        ExpKind::Concat(x, y) => {
            out.insert(x.name.clone());
            out.insert(y.name.clone());
        }
        ExpKind::Replicate(n, v) => {
            atom(n, out);
            atom(v, out);
        }
        ExpKind::Reduce(op, ne, x) | ExpKind::Scan(op, ne, x) => {
            atom(ne, out);
            out.insert(x.name.clone());
            if let RedOp::Lambda(l) = op {
                names_in_body(&l.body, out);
            }
        }
    }
}

fn names_in_body(b: &Body, out: &mut HashSet<Name>) {
    for s in &b.stms {
        names_in_stm(s, out);
    }
    for r in &b.result {
        out.insert(r.name.clone());
    }
}

fn names_in_sexp(e: &SExp, out: &mut HashSet<Name>) {
    match e {
        SExp::Atom(Atom::Var(x)) => {
            out.insert(x.name.clone());
        }
        SExp::Atom(_) => {}
        SExp::Bin(_, l, r, _) => {
            names_in_sexp(l, out);
            names_in_sexp(r, out);
        }
        SExp::Un(_, a, _) => names_in_sexp(a, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;
    use funmem_lang::parse::parse_program;

    fn counts(text: &str) -> RootCounts {
        let p = parse_program(text, Lang::Fun).expect("parses");
        root_statements(&p)
    }

    #[test]
    fn copy_of_fresh_at_last_use() {
        let c = counts(
            "def main (n: int) =
               let (a: [n]int) = iota n
               let (b: [n]int) = copy a
               in (b)",
        );
        assert_eq!(
            c,
            RootCounts {
                copy: 1,
                ..RootCounts::default()
            }
        );
    }

    #[test]
    fn used_after_or_not_fresh_is_no_candidate() {
        // a used after the copy (C1), and a copy of a parameter (C4).
        let c = counts(
            "def main (n: int) (xs: [n]int) =
               let (a: [n]int) = iota n
               let (b: [n]int) = copy a
               let (d: [n]int) = copy xs
               let (e: [n]int) = a[0 : n]
               in (b, d, e)",
        );
        assert_eq!(c.total(), 0, "{c:?}");
    }

    #[test]
    fn views_count_as_uses() {
        let c = counts(
            "def main (n: int) =
               let (a: [n]int) = iota n
               let (v: [n]int) = a[0 : n]
               let (b: [n]int) = copy a
               in (b, v)",
        );
        assert_eq!(c.total(), 0, "{c:?}");
    }

    #[test]
    fn concat_update_and_kernel() {
        let c = counts(
            "def main (n: int) (zs: *[n][n]int) =
               let (a: [n]int) = iota n
               let (b: [n]int) = replicate n 3
               let (m: int) = n + n
               let (c: [m]int) = concat a b
               let (r: [n]int) = iota n
               let (p: int) = n > 0
               let (u: [n][n]int) = if p then
                   let (w: [n][n]int) = zs with [0] = r in (w)
                 else in (zs)
               let (k: [n][n]int) = kernel i < n do
                   let (q: [n]int) = replicate n i in (q)
               in (c, u, k)",
        );
        assert_eq!(c.concat, 1, "{c:?}");
        assert_eq!(c.kernel, 1, "{c:?}");
        // r is made outside the branch: not in the same body.
        assert_eq!(c.update, 0, "{c:?}");
        let d = counts(
            "def main (n: int) (zs: *[n][n]int) =
               let (r: [n]int) = iota n
               let (j: int) = n - 1
               let (u: [n][n]int) = zs with [j] = r
               in (u)",
        );
        assert_eq!(d.update, 1, "{d:?}");
    }
}
