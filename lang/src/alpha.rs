//! Alpha-equivalence: equality of programs up to the naming of bound
//! variables.
//!
//! [`canonical`] and [`canonical_imp`] rename every bound name to `v0`, `v1`,
//! ... in the order binders are met, walking left to right and outside in;
//! free names stay as they are. Two programs are alpha-equivalent exactly
//! when their canonical forms are equal. Spans are kept.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ast::{
    ArrayType, Atom, Body, Exp, ExpKind, Ident, Lambda, LmadSyn, LoopForm, MemAnn, Pat, Program,
    RedOp, SExp, Stm, Type, UpdIdx,
};
use crate::imp::{self, ArrDecl, Param, Stmt, StmtKind};
use crate::name::Name;

/// The FUN or FUNMEM program `p` with its bound names renamed canonically.
///
/// Should a free name already have the form `vK`, binders skip that name, so
/// that no bound name is ever confused with a free one.
pub fn canonical(p: &Program) -> Program {
    with_renamer(|r| r.program(p))
}

/// The IMP program `p` with its bound names renamed canonically. The names
/// of `out` arrays are labels, not uses, and stay as they are.
pub fn canonical_imp(p: &imp::Program) -> imp::Program {
    with_renamer(|r| r.imp_program(p))
}

/// Whether two FUN or FUNMEM programs are equal up to naming.
pub fn alpha_eq(a: &Program, b: &Program) -> bool {
    canonical(a) == canonical(b)
}

/// Whether two IMP programs are equal up to naming.
pub fn alpha_eq_imp(a: &imp::Program, b: &imp::Program) -> bool {
    canonical_imp(a) == canonical_imp(b)
}

/// Runs `f` once to learn the free names, and again avoiding them if any.
fn with_renamer<T>(f: impl Fn(&mut Renamer) -> T) -> T {
    let mut first = Renamer::default();
    let out = f(&mut first);
    if first.free.is_empty() {
        return out;
    }
    f(&mut Renamer {
        avoid: first.free,
        ..Renamer::default()
    })
}

/// Scoped map from original to canonical names.
#[derive(Default)]
struct Renamer {
    scopes: Vec<HashMap<Name, Name>>,
    next: usize,
    /// Names never to hand out (the free names).
    avoid: HashSet<Name>,
    /// Names used but not bound.
    free: HashSet<Name>,
}

impl Renamer {
    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(HashMap::default());
        let out = f(self);
        self.scopes.pop();
        out
    }

    fn lookup(&self, x: &Name) -> Option<&Name> {
        self.scopes.iter().rev().find_map(|s| s.get(x))
    }

    fn bind(&mut self, x: &Ident) -> Ident {
        let name = loop {
            let n = Name::new(&format!("v{}", self.next));
            self.next += 1;
            if !self.avoid.contains(&n) {
                break n;
            }
        };
        if self.scopes.is_empty() {
            self.scopes.push(HashMap::default());
        }
        let top = self.scopes.last_mut().expect("a scope is open");
        top.insert(x.name.clone(), name.clone());
        Ident { name, span: x.span }
    }

    fn use_(&mut self, x: &Ident) -> Ident {
        let name = match self.lookup(&x.name) {
            Some(n) => n.clone(),
            None => {
                self.free.insert(x.name.clone());
                x.name.clone()
            }
        };
        Ident { name, span: x.span }
    }

    fn atom(&mut self, a: &Atom) -> Atom {
        match a {
            Atom::Var(x) => Atom::Var(self.use_(x)),
            Atom::Int(..) | Atom::Const(..) => a.clone(),
        }
    }

    fn atoms(&mut self, xs: &[Atom]) -> Vec<Atom> {
        xs.iter().map(|a| self.atom(a)).collect()
    }

    fn sexp(&mut self, e: &SExp) -> SExp {
        match e {
            SExp::Atom(a) => SExp::Atom(self.atom(a)),
            SExp::Bin(op, l, r, s) => {
                let l = self.sexp(l);
                SExp::Bin(*op, Box::new(l), Box::new(self.sexp(r)), *s)
            }
            SExp::Un(op, e, s) => SExp::Un(*op, Box::new(self.sexp(e)), *s),
        }
    }

    fn lmad(&mut self, l: &LmadSyn) -> LmadSyn {
        match l {
            LmadSyn::Explicit { offset, dims, span } => LmadSyn::Explicit {
                offset: self.sexp(offset),
                dims: dims
                    .iter()
                    .map(|(n, s)| (self.atom(n), self.sexp(s)))
                    .collect(),
                span: *span,
            },
            LmadSyn::RowMajor(shape, span) => LmadSyn::RowMajor(self.atoms(shape), *span),
        }
    }

    fn ty(&mut self, t: &Type) -> Type {
        match t {
            Type::Prim(..) | Type::Mem(_) => t.clone(),
            Type::Array(a, span) => {
                let shape = self.atoms(&a.shape);
                let mem = a.mem.as_ref().map(|m| MemAnn {
                    block: self.use_(&m.block),
                    lmad: self.lmad(&m.lmad),
                });
                Type::Array(
                    ArrayType {
                        shape,
                        elem: a.elem,
                        mem,
                    },
                    *span,
                )
            }
        }
    }

    /// Binds every name of `pats`, then renames their types.
    fn pats(&mut self, pats: &[Pat]) -> Vec<Pat> {
        let names: Vec<Ident> = pats.iter().map(|p| self.bind(&p.name)).collect();
        pats.iter()
            .zip(names)
            .map(|(p, name)| Pat {
                name,
                ty: self.ty(&p.ty),
                unique: p.unique,
                span: p.span,
            })
            .collect()
    }

    fn program(&mut self, p: &Program) -> Program {
        self.scoped(|r| Program {
            lang: p.lang,
            params: r.pats(&p.params),
            body: r.body(&p.body),
            span: p.span,
        })
    }

    /// Renames a body in the current scope.
    fn body(&mut self, b: &Body) -> Body {
        let stms = b
            .stms
            .iter()
            .map(|s| {
                let exp = self.exp(&s.exp);
                Stm {
                    pats: self.pats(&s.pats),
                    exp,
                    span: s.span,
                }
            })
            .collect();
        Body {
            stms,
            result: b.result.iter().map(|x| self.use_(x)).collect(),
            span: b.span,
        }
    }

    fn exp(&mut self, e: &Exp) -> Exp {
        let kind = match &e.kind {
            ExpKind::Scalar(se) => ExpKind::Scalar(self.sexp(se)),
            ExpKind::Index(x, is) => ExpKind::Index(self.use_(x), self.atoms(is)),
            ExpKind::Slice(x, ds) => ExpKind::Slice(
                self.use_(x),
                ds.iter()
                    .map(|(o, n)| (self.atom(o), self.atom(n)))
                    .collect(),
            ),
            ExpKind::Transpose(x) => ExpKind::Transpose(self.use_(x)),
            ExpKind::If(c, b1, b2) => ExpKind::If(
                self.use_(c),
                self.scoped(|r| r.body(b1)),
                self.scoped(|r| r.body(b2)),
            ),
            ExpKind::Kernel(i, n, b) => {
                let n = self.atom(n);
                self.scoped(|r| ExpKind::Kernel(r.bind(i), n, r.body(b)))
            }
            ExpKind::Iota(n) => ExpKind::Iota(self.atom(n)),
            ExpKind::Copy(x) => ExpKind::Copy(self.use_(x)),
            ExpKind::Alloc(se, t) => ExpKind::Alloc(self.sexp(se), *t),
            ExpKind::Reduce(op, ne, xs) => {
                ExpKind::Reduce(self.red_op(op), self.atom(ne), self.use_(xs))
            }
            ExpKind::Scan(op, ne, xs) => {
                ExpKind::Scan(self.red_op(op), self.atom(ne), self.use_(xs))
            }
            ExpKind::Loop(ps, init, form, b) => {
                let init = self.atoms(init);
                let form_n = match form {
                    LoopForm::For(_, n) => Some(self.atom(n)),
                    LoopForm::While(_) => None,
                };
                self.scoped(|r| {
                    let ps = r.pats(ps);
                    let form = match (form, form_n) {
                        (LoopForm::For(i, _), Some(n)) => LoopForm::For(r.bind(i), n),
                        (LoopForm::While(c), _) | (LoopForm::For(c, _), None) => {
                            LoopForm::While(r.use_(c))
                        }
                    };
                    ExpKind::Loop(ps, init, form, r.body(b))
                })
            }
            ExpKind::Update(x, is, v) => {
                let is = is
                    .iter()
                    .map(|i| match i {
                        UpdIdx::Elem(a) => UpdIdx::Elem(self.atom(a)),
                        UpdIdx::Range(o, n) => UpdIdx::Range(self.atom(o), self.atom(n)),
                    })
                    .collect();
                ExpKind::Update(self.use_(x), is, self.atom(v))
            }
            ExpKind::Concat(x, y) => ExpKind::Concat(self.use_(x), self.use_(y)),
            ExpKind::Replicate(n, v) => ExpKind::Replicate(self.atom(n), self.atom(v)),
        };
        Exp { kind, span: e.span }
    }

    fn red_op(&mut self, op: &RedOp) -> RedOp {
        match op {
            RedOp::Bin(..) => op.clone(),
            RedOp::Lambda(l) => self.scoped(|r| {
                let params = r.pats(&l.params);
                RedOp::Lambda(Box::new(Lambda {
                    params,
                    body: r.body(&l.body),
                    span: l.span,
                }))
            }),
        }
    }

    fn imp_op(&mut self, op: &imp::ImpOp) -> imp::ImpOp {
        match op {
            imp::ImpOp::Bin(_) => op.clone(),
            imp::ImpOp::Lambda(a, b, ss, e) => self.scoped(|r| {
                let a = r.bind(a);
                let b = r.bind(b);
                let ss = r.stmts(ss);
                imp::ImpOp::Lambda(a, b, ss, r.sexp(e))
            }),
        }
    }

    fn imp_red(&mut self, red: &imp::Red) -> imp::Red {
        let op = self.imp_op(&red.op);
        let ne = self.sexp(&red.ne);
        let count = self.sexp(&red.count);
        self.scoped(|r| {
            let index = r.bind(&red.index);
            let body = r.stmts(&red.body);
            imp::Red {
                op,
                ne,
                index,
                count,
                body,
                elem: r.sexp(&red.elem),
            }
        })
    }

    /// Renames an array declaration's shape, block and LMAD as uses; binds
    /// its name and, unless already bound, its block if `binds`.
    fn arr_decl(&mut self, d: &ArrDecl, binds: bool) -> ArrDecl {
        let name = if binds {
            self.bind(&d.name)
        } else {
            d.name.clone()
        };
        let shape = self.atoms(&d.shape);
        let block = if binds && self.lookup(&d.block.name).is_none() {
            self.bind(&d.block)
        } else {
            self.use_(&d.block)
        };
        ArrDecl {
            name,
            shape,
            elem: d.elem,
            block,
            lmad: self.lmad(&d.lmad),
            span: d.span,
        }
    }

    fn imp_program(&mut self, p: &imp::Program) -> imp::Program {
        self.scoped(|r| imp::Program {
            params: p
                .params
                .iter()
                .map(|q| match q {
                    Param::Scalar(x, t, s) => Param::Scalar(r.bind(x), *t, *s),
                    Param::Array(d) => Param::Array(r.arr_decl(d, true)),
                })
                .collect(),
            body: r.stmts(&p.body),
            results: p
                .results
                .iter()
                .map(|res| match res {
                    imp::Result::Scalar(x) => imp::Result::Scalar(r.use_(x)),
                    imp::Result::Array(d) => imp::Result::Array(r.arr_decl(d, false)),
                })
                .collect(),
            span: p.span,
        })
    }

    /// Renames statements in the current scope.
    fn stmts(&mut self, ss: &[Stmt]) -> Vec<Stmt> {
        ss.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        let kind = match &s.kind {
            StmtKind::Skip => StmtKind::Skip,
            StmtKind::Assert(c, e) => StmtKind::Assert(*c, self.sexp(e)),
            StmtKind::Var(x, t) => StmtKind::Var(self.bind(x), *t),
            StmtKind::Assign(x, e) => StmtKind::Assign(self.use_(x), self.sexp(e)),
            StmtKind::Alloc(x, e, t) => StmtKind::Alloc(self.use_(x), self.sexp(e), *t),
            StmtKind::Reduce(x, red) => {
                let red = self.imp_red(red);
                StmtKind::Reduce(self.use_(x), Box::new(red))
            }
            StmtKind::Scan(red, m, i) => {
                let red = self.imp_red(red);
                StmtKind::Scan(Box::new(red), self.use_(m), self.sexp(i))
            }
            StmtKind::Read(x, m, e) => StmtKind::Read(self.use_(x), self.use_(m), self.sexp(e)),
            StmtKind::Write(m, i, e) => StmtKind::Write(self.use_(m), self.sexp(i), self.sexp(e)),
            StmtKind::If(c, a, b) => StmtKind::If(
                self.use_(c),
                self.scoped(|r| r.stmts(a)),
                self.scoped(|r| r.stmts(b)),
            ),
            StmtKind::Kernel(i, n, b) => {
                let n = self.sexp(n);
                self.scoped(|r| StmtKind::Kernel(r.bind(i), n, r.stmts(b)))
            }
            StmtKind::For(i, n, b) => {
                let n = self.sexp(n);
                self.scoped(|r| StmtKind::For(r.bind(i), n, r.stmts(b)))
            }
            StmtKind::While(c, b) => {
                let c = self.use_(c);
                StmtKind::While(c, self.scoped(|r| r.stmts(b)))
            }
        };
        Stmt { kind, span: s.span }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Lang;
    use crate::parse::{parse_imp, parse_program};

    fn fun(src: &str) -> Program {
        parse_program(src, Lang::FunMem).unwrap_or_else(|d| panic!("parse: {d}\n{src}"))
    }

    fn imp(src: &str) -> imp::Program {
        parse_imp(src).unwrap_or_else(|d| panic!("parse: {d}\n{src}"))
    }

    const FUNMEM: &str = "def main (c: int) (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (k: int) (km: mem) (ks: [k]int @ km -> 1 + {(k : 2)}) = if c then
      let (am: mem) = alloc n * 2 + 1
      let (a: [n]int @ am -> 1 + {(n : 2)}) = kernel i < n do
          let (x: int) = xs[i]
          in (x)
      in (n, am, a)
    else
      let (am: mem) = alloc n * 2 + 1
      let (a: [n]int @ am -> 1 + {(n : 2)}) = kernel i < n do
          let (y: int) = i + n
          in (y)
      in (n, am, a)
  in (km, ks)";

    fn renamed(src: &str, pairs: &[(&str, &str)]) -> String {
        // Whole-word replacement, all pairs at once.
        let mut out = String::new();
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            let w = pairs
                .iter()
                .find(|(a, _)| a == word)
                .map_or(&**word, |p| p.1);
            out.push_str(w);
            word.clear();
        };
        for ch in src.chars() {
            if ch.is_alphanumeric() || ch == '_' {
                word.push(ch);
            } else {
                flush(&mut word, &mut out);
                out.push(ch);
            }
        }
        flush(&mut word, &mut out);
        out
    }

    #[test]
    fn consistent_renaming_is_alpha_equal() {
        let other = renamed(
            FUNMEM,
            &[
                ("c", "cond"),
                ("n", "size"),
                ("xm", "mem0"),
                ("k", "len"),
                ("km", "blk"),
                ("am", "bm"),
                ("i", "j"),
                ("x", "elem"),
            ],
        );
        assert_ne!(other, FUNMEM);
        let (a, b) = (fun(FUNMEM), fun(&other));
        assert_ne!(a, b);
        assert!(alpha_eq(&a, &b));
        assert_eq!(canonical(&a).params[0].name.name.as_str(), "v0");
    }

    #[test]
    fn merging_two_names_is_not_alpha_equal() {
        // `xm` and `c` both become `c`: `if c` now means the block.
        let other = renamed(FUNMEM, &[("xm", "c")]);
        assert!(!alpha_eq(&fun(FUNMEM), &fun(&other)));
        // Sibling scopes may reuse a name, though.
        let other = renamed(FUNMEM, &[("x", "y")]);
        assert!(alpha_eq(&fun(FUNMEM), &fun(&other)));
        let a = fun("def main (a: int) (b: int) = let (c: int) = a + b in (c)");
        let b = fun("def main (a: int) (b: int) = let (c: int) = a + a in (c)");
        assert!(!alpha_eq(&a, &b));
    }

    #[test]
    fn swapping_params_is_not_alpha_equal() {
        let a = fun("def main (a: int) (b: int) = let (c: int) = a - b in (c)");
        let b = fun("def main (a: int) (b: int) = let (c: int) = b - a in (c)");
        let c = fun("def main (b: int) (a: int) = let (c: int) = b - a in (c)");
        assert!(!alpha_eq(&a, &b));
        assert!(alpha_eq(&a, &c));
    }

    #[test]
    fn free_names_are_never_confused_with_bound_ones() {
        let a = fun("def main (x: int) = in (v0)");
        let b = fun("def main (x: int) = in (x)");
        assert!(!alpha_eq(&a, &b));
        assert_eq!(canonical(&a).body.result[0].name.as_str(), "v0");
    }

    const IMP: &str =
        "def main (c: int) (n: int) (xs: [n]int @ b -> R(n)) (ys: [n]int @ b -> n + {(n : 1)}) =
  var zm: mem;
  zm <- alloc n;
  if c then
    var t: int;
    kernel i < n do
      var x: int;
      x <- b[i];
      zm[i] <- x * 2
    done
  else
    var t: int;
    kernel i < n do
      var x: int;
      x <- b[n + i];
      zm[i] <- x + t
    done
  fi
out (zs: [n]int @ zm -> R(n), n)";

    #[test]
    fn imp_alpha_equivalence() {
        let other = renamed(
            IMP,
            &[
                ("c", "k"),
                ("n", "m"),
                ("b", "blk"),
                ("zm", "q"),
                ("t", "u"),
                ("x", "y"),
            ],
        );
        let (a, b) = (imp(IMP), imp(&other));
        assert_ne!(a, b);
        assert!(alpha_eq_imp(&a, &b));
        // Out-array names are labels, not uses.
        assert!(!alpha_eq_imp(&a, &imp(&renamed(IMP, &[("zs", "ws")]))));
        // Merging two names, or swapping two parameters' uses.
        assert!(!alpha_eq_imp(&a, &imp(&renamed(IMP, &[("t", "x")]))));
        let swap = IMP.replace("zm <- alloc n", "zm <- alloc c");
        assert!(!alpha_eq_imp(&a, &imp(&swap)));
        let p = imp("def main (a: int) (b: int) = var c: int; c <- a - b out (c)");
        let q = imp("def main (a: int) (b: int) = var c: int; c <- b - a out (c)");
        assert!(!alpha_eq_imp(&p, &q));
    }

    #[test]
    fn canonical_is_idempotent() {
        let p = canonical(&fun(FUNMEM));
        assert_eq!(canonical(&p), p);
        let q = canonical_imp(&imp(IMP));
        assert_eq!(canonical_imp(&q), q);
        let free = canonical(&fun("def main (x: int) = in (v0)"));
        assert_eq!(canonical(&free), free);
    }
}
