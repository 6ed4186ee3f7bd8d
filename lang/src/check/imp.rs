//! Type checking IMP (the paper elides these rules; ours are the obvious
//! ones, written down here).
//!
//! - Every variable is declared before use (`var x : τ`, a parameter, or a
//!   kernel index) and never declared again while visible; declarations
//!   are scoped to the branch or kernel body that makes them.
//! - `int` and `mem` are kept apart: scalar expressions, conditions,
//!   indices and stored values are `int`s; `alloc`, reads and writes go
//!   through `mem` variables.
//! - Array parameters declare their block as `mem` (several arrays may share
//!   one); their sizes and LMAD variables are earlier `int` parameters.
//! - Inside a kernel, only variables declared in that kernel's body may be
//!   assigned: iterations run in parallel and share only blocks (E-IMP-KERNEL
//!   discards each iteration's environment). The kernel index is read-only.
//! - Results are scalar variables, or arrays read back from a `mem` variable.
//! - Scalars have element types (`int`/`i64`, `i32`, `f32`, `f64`, `bool`)
//!   and scalar expressions are typed as in FUN; sizes, indices and LMAD
//!   variables are `int`s. A read `x <- m[se]` reads an element of x's type,
//!   a write `m[se] <- e` writes one of e's type.
//! - `reduce` and `scan` iterations are checked as a kernel's are (they may
//!   run in parallel); the operator, its neutral element and the yielded
//!   element share one type, which a reduction's target has too.

use super::scope::Scope;
use crate::ast::{Atom, Ident, SExp};
use crate::diag::{Diagnostic, Phase};
use crate::imp::{
    ArrDecl, ImpOp, ImpType, Param, Program, Red, Result as ImpResult, Stmt, StmtKind,
};
use crate::prim::Prim;
use crate::span::Span;

/// Checks an IMP program.
pub fn check_imp(p: &Program) -> Result<(), Diagnostic> {
    let mut c = Checker {
        env: Scope::new("declared"),
        kernels: Vec::new(),
    };
    let mut arrays: Vec<&Ident> = Vec::new();
    for q in &p.params {
        match q {
            Param::Scalar(x, t, _) => c.env.bind(x, Var::Scalar(*t))?,
            Param::Array(a) => {
                if let Some(prev) = arrays.iter().find(|y| y.name == a.name.name) {
                    return Err(err(
                        a.name.span,
                        format!("array parameter `{}` is declared twice", a.name.name),
                    )
                    .with_label(prev.span, "first declared here"));
                }
                arrays.push(&a.name);
                c.arr_decl(a, true)?;
            }
        }
    }
    c.stmts(&p.body)?;
    for r in &p.results {
        match r {
            ImpResult::Scalar(x) => {
                if c.lookup(x)? == Var::Mem {
                    c.expect(x, ImpType::INT, "result")?;
                }
            }
            ImpResult::Array(a) => c.arr_decl(a, false)?,
        }
    }
    Ok(())
}

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Phase::Type, span, msg)
}

/// What a name is bound to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Var {
    Scalar(Prim),
    Mem,
    /// A kernel's index: an int that may not be assigned.
    Index,
}

impl Var {
    fn ty(self) -> ImpType {
        match self {
            Var::Scalar(p) => ImpType::Prim(p),
            Var::Index => ImpType::INT,
            Var::Mem => ImpType::Mem,
        }
    }
}

struct Checker {
    env: Scope<Var>,
    /// Scope depth of each enclosing kernel's body, innermost last.
    kernels: Vec<usize>,
}

impl Checker {
    fn lookup(&self, x: &Ident) -> Result<Var, Diagnostic> {
        match self.env.get(&x.name) {
            Some(b) => Ok(b.val),
            None => Err(err(
                x.span,
                format!(
                    "`{}` is not declared; declare it with `var {}: int` or `var {}: mem`",
                    x.name, x.name, x.name
                ),
            )),
        }
    }

    fn expect(&self, x: &Ident, want: ImpType, what: &str) -> Result<(), Diagnostic> {
        let got = self.lookup(x)?.ty();
        if got == want {
            return Ok(());
        }
        let mut d = err(
            x.span,
            format!(
                "{what} `{}` must be {}, but it is declared {}",
                x.name,
                want.name(),
                got.name()
            ),
        );
        if let Some(b) = self.env.get(&x.name) {
            d = d.with_label(b.span, "declared here");
        }
        Err(d)
    }

    /// The type of a scalar expression.
    fn sexp_ty(&self, e: &SExp) -> Result<Prim, Diagnostic> {
        super::sexp_type(e, &|x| match self.lookup(x)?.ty() {
            ImpType::Prim(p) => Ok(p),
            ImpType::Mem => Err(self.expect(x, ImpType::INT, "variable").unwrap_err()),
        })
    }

    /// A scalar expression of type `want`.
    fn sexp_of(&self, e: &SExp, want: Prim, what: &str) -> Result<(), Diagnostic> {
        let t = self.sexp_ty(e)?;
        if t == want {
            return Ok(());
        }
        Err(err(
            e.span(),
            format!(
                "{what} must be {}, but `{e}` is {t}",
                ImpType::Prim(want).name()
            ),
        ))
    }

    /// An int expression (sizes, indices, conditions of `assert`).
    fn sexp(&self, e: &SExp) -> Result<(), Diagnostic> {
        self.sexp_of(e, Prim::I64, "the expression")
    }

    /// A condition variable: a bool, or an int (true when non-zero).
    fn condition(&self, x: &Ident, what: &str) -> Result<(), Diagnostic> {
        match self.lookup(x)?.ty() {
            ImpType::Prim(Prim::Bool) => Ok(()),
            _ => self.expect(x, ImpType::INT, what),
        }
    }

    /// T-IMP-REDUCE / T-IMP-SCAN: the operator, the neutral element and
    /// each iteration's element share one type, which is returned. The
    /// iterations are checked as a kernel's body (with `more` checked in
    /// their scope: a scan's output index).
    fn red(
        &mut self,
        r: &Red,
        more: &dyn Fn(&Checker) -> Result<(), Diagnostic>,
    ) -> Result<Prim, Diagnostic> {
        let t = self.sexp_ty(&r.ne)?;
        self.sexp(&r.count)?;
        match &r.op {
            ImpOp::Bin(b) => {
                if !super::builtin_applies(*b, t) {
                    return Err(err(
                        r.ne.span(),
                        format!("`({})` does not apply to {t}", b.symbol()),
                    ));
                }
            }
            ImpOp::Lambda(a, b, ss, e) => {
                self.env.open();
                self.kernels.push(self.env.depth());
                let res = self
                    .env
                    .bind(a, Var::Scalar(t))
                    .and_then(|()| self.env.bind(b, Var::Scalar(t)))
                    .and_then(|()| self.stmts(ss))
                    .and_then(|()| self.sexp_of(e, t, "the operator's result"));
                self.kernels.pop();
                self.env.close();
                res?;
            }
        }
        self.env.open();
        self.kernels.push(self.env.depth());
        let res = self
            .env
            .bind(&r.index, Var::Index)
            .and_then(|()| self.stmts(&r.body))
            .and_then(|()| self.sexp_of(&r.elem, t, "the yielded element"))
            .and_then(|()| more(self));
        self.kernels.pop();
        self.env.close();
        res?;
        Ok(t)
    }

    /// `x` is about to be assigned: it must be an int or mem variable (not a
    /// kernel index) declared inside the innermost enclosing kernel.
    fn assignable(&self, x: &Ident, want: ImpType, what: &str) -> Result<(), Diagnostic> {
        self.expect(x, want, what)?;
        let Some(b) = self.env.get(&x.name) else {
            return Ok(());
        };
        if b.val == Var::Index {
            return Err(err(
                x.span,
                format!(
                    "the index `{}` of a kernel or for loop cannot be assigned",
                    x.name
                ),
            ));
        }
        if let Some(&k) = self.kernels.last() {
            if b.depth < k {
                return Err(err(
                    x.span,
                    format!(
                        "`{}` is declared outside this kernel; kernel iterations run in parallel and may assign only their own variables (share results through blocks)",
                        x.name
                    ),
                )
                .with_label(b.span, "declared here"));
            }
        }
        Ok(())
    }

    fn atom(&self, a: &Atom, what: &str) -> Result<(), Diagnostic> {
        match a {
            Atom::Var(x) => self.expect(x, ImpType::INT, what),
            Atom::Int(..) => Ok(()),
            Atom::Const(..) => Err(err(a.span(), format!("{what} must be an int"))),
        }
    }

    /// An array parameter (which declares its block) or result (whose block
    /// must be a `mem` in scope).
    fn arr_decl(&mut self, a: &ArrDecl, declares: bool) -> Result<(), Diagnostic> {
        for s in &a.shape {
            self.atom(s, "array size")?;
        }
        let mut res = Ok(());
        a.lmad.for_each_var(&mut |x| {
            if res.is_ok() {
                res = self.expect(x, ImpType::INT, "index-function variable");
            }
        });
        res?;
        super::lmad_fits(&a.lmad, &a.shape, &format!("`{}`", a.name.name), &|p| p)?;
        match self.env.get(&a.block.name) {
            // Arrays given as inputs may share a block.
            Some(b) if declares && b.val == Var::Mem => Ok(()),
            Some(_) if declares => self.expect(&a.block, ImpType::Mem, "block"),
            _ if declares => self.env.bind(&a.block, Var::Mem),
            _ => self.expect(&a.block, ImpType::Mem, "block"),
        }
    }

    fn stmts(&mut self, ss: &[Stmt]) -> Result<(), Diagnostic> {
        for s in ss {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn scoped(&mut self, ss: &[Stmt]) -> Result<(), Diagnostic> {
        self.env.open();
        let r = self.stmts(ss);
        self.env.close();
        r
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match &s.kind {
            StmtKind::Skip => Ok(()),
            // T-IMP-ASSERT: the condition is an integer expression.
            // T-IMP-ASSERT: the condition is a bool, or an int (true when
            // non-zero).
            StmtKind::Assert(_, e) => match self.sexp_ty(e)? {
                Prim::Bool => Ok(()),
                _ => self.sexp_of(e, Prim::I64, "the condition of `assert`"),
            },
            StmtKind::Var(x, t) => self.env.bind(
                x,
                match t {
                    ImpType::Prim(p) => Var::Scalar(*p),
                    ImpType::Mem => Var::Mem,
                },
            ),
            StmtKind::Assign(x, e) => {
                match self.lookup(x)? {
                    // E-IMP-ASSIGN-MEM: `m <- m'` copies a block reference.
                    Var::Mem => match e {
                        SExp::Atom(Atom::Var(y)) => {
                            self.assignable(x, ImpType::Mem, "assigned variable")?;
                            self.expect(y, ImpType::Mem, "assigned block")
                        }
                        _ => Err(err(e.span(), format!("`{}` is a mem; it can only be assigned another mem variable or `alloc`", x.name))),
                    },
                    v => {
                        let t = v.ty();
                        if let ImpType::Prim(p) = t {
                            self.sexp_of(e, p, &format!("the value assigned to `{}`", x.name))?;
                        }
                        self.assignable(x, t, "assigned variable")
                    }
                }
            }
            StmtKind::Alloc(x, e, _) => {
                self.sexp(e)?;
                self.assignable(x, ImpType::Mem, "alloc target")
            }
            StmtKind::Read(x, m, i) => {
                self.sexp(i)?;
                self.expect(m, ImpType::Mem, "read: block")?;
                match self.lookup(x)? {
                    Var::Mem => self.expect(x, ImpType::INT, "read target"),
                    v => self.assignable(x, v.ty(), "read target"),
                }
            }
            StmtKind::Write(m, i, e) => {
                self.sexp(i)?;
                self.sexp_ty(e)?;
                self.expect(m, ImpType::Mem, "write: block")
            }
            StmtKind::If(c, t, e) => {
                self.condition(c, "if: the condition")?;
                self.scoped(t)?;
                self.scoped(e)
            }
            StmtKind::Kernel(i, n, b) => {
                self.sexp(n)?;
                self.env.open();
                self.kernels.push(self.env.depth());
                let r = self.env.bind(i, Var::Index).and_then(|()| self.stmts(b));
                self.kernels.pop();
                self.env.close();
                r
            }
            // T-IMP-FOR: a sequential loop; its index is read-only, and it
            // may assign variables declared outside it.
            StmtKind::For(i, n, b) => {
                self.sexp(n)?;
                self.env.open();
                let r = self.env.bind(i, Var::Index).and_then(|()| self.stmts(b));
                self.env.close();
                r
            }
            // T-IMP-WHILE: the condition is an int variable in scope.
            StmtKind::While(c, b) => {
                self.condition(c, "while: the condition")?;
                self.scoped(b)
            }
            StmtKind::Reduce(x, r) => {
                let t = self.red(r, &|_| Ok(()))?;
                self.assignable(x, ImpType::Prim(t), "reduce target")
            }
            StmtKind::Scan(r, m, j) => {
                self.expect(m, ImpType::Mem, "scan: block")?;
                self.red(r, &|c| c.sexp(j)).map(|_| ())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_imp;

    fn check(src: &str) -> Result<(), String> {
        let p = parse_imp(src).map_err(|d| format!("parse: {d}"))?;
        super::check_imp(&p).map_err(|d| d.message)
    }

    #[test]
    fn declarations_are_scoped_and_unique() {
        assert_eq!(check("def main (n: int) = if n then var x: int; x <- 1 else var x: int; x <- 2 fi out (n)"), Ok(()));
        let e = check("def main (n: int) = if n then var x: int else skip fi; x <- 1 out (n)")
            .unwrap_err();
        assert!(e.contains("`x` is not declared"), "{e}");
        let e = check("def main (n: int) = var n: int out (n)").unwrap_err();
        assert!(e.contains("already declared"), "{e}");
    }

    #[test]
    fn int_and_mem_are_kept_apart() {
        assert_eq!(check("def main (n: int) = var m: mem; var k: mem; m <- alloc n; k <- m; m[0] <- n out (n)"), Ok(()));
        assert!(check("def main (n: int) = var m: mem; m <- n out (n)")
            .unwrap_err()
            .contains("assigned block `n` must be mem"));
        assert!(check("def main (n: int) = var m: mem; m <- n + 1 out (n)")
            .unwrap_err()
            .contains("only be assigned"));
        assert!(
            check("def main (n: int) = var x: int; x <- alloc n out (n)")
                .unwrap_err()
                .contains("must be mem")
        );
        assert!(check("def main (n: int) = var x: int; x <- n[0] out (x)")
            .unwrap_err()
            .contains("must be mem"));
        assert!(
            check("def main (n: int) = var m: mem; m <- alloc n out (m)")
                .unwrap_err()
                .contains("must be int")
        );
    }

    #[test]
    fn kernels_assign_only_their_own_variables() {
        assert_eq!(check("def main (n: int) = var m: mem; m <- alloc n; kernel i < n do var t: int; t <- i * 2; m[i] <- t done out (n)"), Ok(()));
        assert!(
            check("def main (n: int) = var t: int; kernel i < n do t <- i done out (t)")
                .unwrap_err()
                .contains("declared outside this kernel")
        );
        assert!(
            check("def main (n: int) = kernel i < n do i <- 1 done out (n)")
                .unwrap_err()
                .contains("cannot be assigned")
        );
    }

    #[test]
    fn array_parameters_declare_their_blocks() {
        assert_eq!(check("def main (n: int) (xs: [n]int @ xm -> R(n)) (ys: [n]int @ xm -> n + {(n : 1)}) = skip out (zs: [n]int @ xm -> R(n))"), Ok(()));
        assert!(
            check("def main (xs: [n]int @ xm -> R(n)) (n: int) = skip out (n)")
                .unwrap_err()
                .contains("`n` is not declared")
        );
        assert!(
            check("def main (n: int) (xs: [n]int @ xm -> 0 + {(3 : 1)}) = skip out (n)")
                .unwrap_err()
                .contains("3 elements")
        );
    }
}
