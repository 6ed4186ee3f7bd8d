//! Printers: programs back to concrete syntax (docs/language.md, Syntax).
//!
//! The output is indented for reading and parses back to the same tree:
//! `parse(print(p)) == p` for every parsed program. Scalar expressions get
//! the fewest parentheses that keep their structure under C precedence.

use crate::ast::*;
use crate::imp;
use std::fmt::{self, Write};

const INDENT: usize = 2;

/// Prints a FUN or FUNMEM program.
pub fn program(p: &Program) -> String {
    let mut out = String::from("def main");
    for q in &p.params {
        write!(out, " {}", PatD(q)).ok();
    }
    out.push_str(" =\n");
    body(&mut out, &p.body, INDENT);
    out
}

/// Prints a body at the given indentation, one statement per line.
fn body(out: &mut String, b: &Body, ind: usize) {
    for s in &b.stms {
        stm(out, s, ind);
    }
    pad(out, ind);
    out.push_str("in (");
    idents(out, &b.result);
    out.push_str(")\n");
}

fn stm(out: &mut String, s: &Stm, ind: usize) {
    pad(out, ind);
    out.push_str("let");
    for p in &s.pats {
        write!(out, " {}", PatD(p)).ok();
    }
    out.push_str(" = ");
    match &s.exp.kind {
        ExpKind::Scalar(e) => sexp(out, e, 0),
        ExpKind::Index(x, is) => {
            write!(out, "{}[", x.name).ok();
            sep(out, is, ", ", atom);
            out.push(']');
        }
        ExpKind::Slice(x, ss) => {
            write!(out, "{}[", x.name).ok();
            sep(out, ss, ", ", |o, (a, b)| {
                atom(o, a);
                o.push_str(" : ");
                atom(o, b);
            });
            out.push(']');
        }
        ExpKind::Transpose(x) => write!(out, "transpose {}", x.name).unwrap_or(()),
        ExpKind::Iota(a) => {
            out.push_str("iota ");
            atom(out, a);
        }
        ExpKind::Copy(x) => write!(out, "copy {}", x.name).unwrap_or(()),
        ExpKind::Alloc(e, t) => {
            out.push_str("alloc ");
            sexp(out, e, 0);
            if *t != Prim::I64 {
                write!(out, " {t}").ok();
            }
        }
        ExpKind::Reduce(op, ne, xs) | ExpKind::Scan(op, ne, xs) => {
            let word = if matches!(s.exp.kind, ExpKind::Reduce(..)) {
                "reduce"
            } else {
                "scan"
            };
            write!(out, "{word} ").ok();
            red_op(out, op, ind);
            out.push(' ');
            atom(out, ne);
            write!(out, " {}", xs.name).ok();
        }
        ExpKind::If(c, t, e) => {
            writeln!(out, "if {} then", c.name).ok();
            body(out, t, ind + INDENT);
            pad(out, ind);
            out.push_str("else\n");
            body(out, e, ind + INDENT);
            return;
        }
        ExpKind::Kernel(i, n, b) => {
            write!(out, "kernel {} < ", i.name).ok();
            atom(out, n);
            out.push_str(" do\n");
            body(out, b, ind + INDENT);
            return;
        }
        ExpKind::Loop(ps, init, form, b) => {
            out.push_str("loop");
            for p in ps {
                write!(out, " {}", PatD(p)).ok();
            }
            out.push_str(" = (");
            sep(out, init, ", ", atom);
            out.push_str(") ");
            match form {
                LoopForm::For(i, n) => {
                    write!(out, "for {} < ", i.name).ok();
                    atom(out, n);
                }
                LoopForm::While(c) => write!(out, "while {}", c.name).unwrap_or(()),
            }
            out.push_str(" do\n");
            body(out, b, ind + INDENT);
            return;
        }
        ExpKind::Update(x, is, v) => {
            write!(out, "{} with [", x.name).ok();
            sep(out, is, ", ", |o, i| match i {
                UpdIdx::Elem(a) => atom(o, a),
                UpdIdx::Range(a, n) => {
                    atom(o, a);
                    o.push_str(" : ");
                    atom(o, n);
                }
            });
            out.push_str("] = ");
            atom(out, v);
        }
        ExpKind::Concat(x, y) => write!(out, "concat {} {}", x.name, y.name).unwrap_or(()),
        ExpKind::Replicate(n, v) => {
            out.push_str("replicate ");
            atom(out, n);
            out.push(' ');
            atom(out, v);
        }
    }
    out.push('\n');
}

/// Prints a reduction operator; a lambda's body is indented below `ind`.
fn red_op(out: &mut String, op: &RedOp, ind: usize) {
    match op {
        RedOp::Bin(b, _) => write!(out, "({})", b.symbol()).unwrap_or(()),
        RedOp::Lambda(l) => {
            out.push_str("(\\");
            for p in &l.params {
                write!(out, " {}", PatD(p)).ok();
            }
            out.push_str(" ->\n");
            body(out, &l.body, ind + 2 * INDENT);
            pad(out, ind + INDENT);
            out.push(')');
        }
    }
}

fn imp_op(out: &mut String, op: &imp::ImpOp, ind: usize) {
    match op {
        imp::ImpOp::Bin(b) => write!(out, "({})", b.symbol()).unwrap_or(()),
        imp::ImpOp::Lambda(a, b, ss, e) => {
            writeln!(out, "(\\{} {} ->", a.name, b.name).ok();
            stmts(out, ss, ind + 2 * INDENT);
            out.push('\n');
            pad(out, ind + 2 * INDENT);
            out.push_str("yield ");
            sexp(out, e, 0);
            out.push(')');
        }
    }
}

/// Prints the `op ne for i < n do s yield e` of an IMP reduction.
fn imp_red(out: &mut String, r: &imp::Red, ind: usize) {
    imp_op(out, &r.op, ind);
    out.push(' ');
    sexp(out, &r.ne, 0);
    write!(out, " for {} < ", r.index.name).ok();
    sexp(out, &r.count, 0);
    out.push_str(" do\n");
    stmts(out, &r.body, ind + INDENT);
    out.push('\n');
    pad(out, ind + INDENT);
    out.push_str("yield ");
    sexp(out, &r.elem, 0);
}

/// Prints an IMP program.
pub fn imp_program(p: &imp::Program) -> String {
    let mut out = String::from("def main");
    for q in &p.params {
        match q {
            imp::Param::Scalar(x, t, _) => {
                write!(out, " ({}: {})", x.name, imp::ImpType::Prim(*t).name()).ok()
            }
            imp::Param::Array(a) => write!(out, " ({})", ArrD(a)).ok(),
        };
    }
    out.push_str(" =\n");
    stmts(&mut out, &p.body, INDENT);
    out.push_str("\nout (");
    sep(&mut out, &p.results, ", ", |o, r| match r {
        imp::Result::Scalar(x) => o.push_str(x.name.as_str()),
        imp::Result::Array(a) => write!(o, "{}", ArrD(a)).unwrap_or(()),
    });
    out.push_str(")\n");
    out
}

/// Prints a statement sequence, `;` at the end of every line but the last.
fn stmts(out: &mut String, ss: &[imp::Stmt], ind: usize) {
    for (k, s) in ss.iter().enumerate() {
        if k > 0 {
            out.push_str(";\n");
        }
        stmt(out, s, ind);
    }
}

fn stmt(out: &mut String, s: &imp::Stmt, ind: usize) {
    use imp::StmtKind as K;
    pad(out, ind);
    match &s.kind {
        K::Skip => out.push_str("skip"),
        K::Assert(c, e) => {
            write!(out, "assert {} ", c.keyword()).ok();
            sexp(out, e, 0);
        }
        K::Var(x, t) => write!(out, "var {}: {}", x.name, t.name()).unwrap_or(()),
        K::Assign(x, e) => {
            write!(out, "{} <- ", x.name).ok();
            sexp(out, e, 0);
        }
        K::Alloc(x, e, t) => {
            write!(out, "{} <- alloc ", x.name).ok();
            sexp(out, e, 0);
            if *t != Prim::I64 {
                write!(out, " {t}").ok();
            }
        }
        K::Reduce(x, r) => {
            write!(out, "{} <- reduce ", x.name).ok();
            imp_red(out, r, ind);
            out.push('\n');
            pad(out, ind);
            out.push_str("done");
        }
        K::Scan(r, m, i) => {
            out.push_str("scan ");
            imp_red(out, r, ind);
            write!(out, " into {}[", m.name).ok();
            sexp(out, i, 0);
            out.push_str("]\n");
            pad(out, ind);
            out.push_str("done");
        }
        K::Read(x, m, i) => {
            write!(out, "{} <- {}[", x.name, m.name).ok();
            sexp(out, i, 0);
            out.push(']');
        }
        K::Write(m, i, e) => {
            write!(out, "{}[", m.name).ok();
            sexp(out, i, 0);
            out.push_str("] <- ");
            sexp(out, e, 0);
        }
        K::If(c, t, e) => {
            writeln!(out, "if {} then", c.name).ok();
            stmts(out, t, ind + INDENT);
            out.push('\n');
            pad(out, ind);
            out.push_str("else\n");
            stmts(out, e, ind + INDENT);
            out.push('\n');
            pad(out, ind);
            out.push_str("fi");
        }
        K::Kernel(i, n, b) | K::For(i, n, b) => {
            let word = if matches!(s.kind, K::Kernel(..)) {
                "kernel"
            } else {
                "for"
            };
            write!(out, "{word} {} < ", i.name).ok();
            sexp(out, n, 0);
            out.push_str(" do\n");
            stmts(out, b, ind + INDENT);
            out.push('\n');
            pad(out, ind);
            out.push_str("done");
        }
        K::While(c, b) => {
            writeln!(out, "while {} do", c.name).ok();
            stmts(out, b, ind + INDENT);
            out.push('\n');
            pad(out, ind);
            out.push_str("done");
        }
    }
}

/// Prints a scalar expression.
pub fn sexp_string(e: &SExp) -> String {
    let mut s = String::new();
    sexp(&mut s, e, 0);
    s
}

/// Precedence of unary operators: above every infix operator.
const UNARY: u8 = 7;

/// Prints `e` in a context that binds with strength `ctx`: parenthesised
/// when `e`'s own operator binds more loosely.
fn sexp(out: &mut String, e: &SExp, ctx: u8) {
    match e {
        SExp::Atom(a) => atom(out, a),
        SExp::Bin(op @ (BinOp::Min | BinOp::Max), a, b, _) => {
            write!(out, "{}(", op.symbol()).ok();
            sexp(out, a, 0);
            out.push_str(", ");
            sexp(out, b, 0);
            out.push(')');
        }
        SExp::Bin(op, a, b, _) => {
            let p = op.precedence();
            let paren = p < ctx;
            if paren {
                out.push('(');
            }
            sexp(out, a, p);
            write!(out, " {} ", op.symbol()).ok();
            // Left-associative: a right operand of equal strength needs parentheses.
            sexp(out, b, p + 1);
            if paren {
                out.push(')');
            }
        }
        SExp::Un(op, a, _) => {
            let paren = UNARY < ctx;
            if paren {
                out.push('(');
            }
            if let Some(f) = op.function_name() {
                write!(out, "{f}(").ok();
                sexp(out, a, 0);
                out.push(')');
                if paren {
                    out.push(')');
                }
                return;
            }
            out.push(if *op == UnOp::Neg { '-' } else { '!' });
            // `--` starts a comment and `-k` is a literal: parenthesise any
            // operand that is not a plain variable or non-negative literal.
            match &**a {
                SExp::Atom(Atom::Var(_)) => sexp(out, a, UNARY),
                SExp::Atom(Atom::Int(k, _)) if *k >= 0 && *op == UnOp::Not => sexp(out, a, UNARY),
                _ => {
                    out.push('(');
                    sexp(out, a, 0);
                    out.push(')');
                }
            }
            if paren {
                out.push(')');
            }
        }
    }
}

fn atom(out: &mut String, a: &Atom) {
    match a {
        Atom::Var(x) => out.push_str(x.name.as_str()),
        Atom::Int(k, _) => write!(out, "{k}").unwrap_or(()),
        Atom::Const(c, _) => out.push_str(&c.program_text()),
    }
}

fn idents(out: &mut String, xs: &[Ident]) {
    sep(out, xs, ", ", |o, x| o.push_str(x.name.as_str()));
}

fn sep<T>(out: &mut String, xs: &[T], s: &str, mut f: impl FnMut(&mut String, &T)) {
    for (k, x) in xs.iter().enumerate() {
        if k > 0 {
            out.push_str(s);
        }
        f(out, x);
    }
}

fn pad(out: &mut String, ind: usize) {
    out.extend(std::iter::repeat_n(' ', ind));
}

/// Displays a binding `(x: τ)`.
struct PatD<'a>(&'a Pat);

impl fmt::Display for PatD<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let star = if self.0.unique { "*" } else { "" };
        write!(f, "({}: {star}{})", self.0.name.name, self.0.ty)
    }
}

/// Displays an IMP array declaration `xs: [n]int @ m -> L`.
struct ArrD<'a>(&'a imp::ArrDecl);

impl fmt::Display for ArrD<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0;
        write!(f, "{}: ", a.name.name)?;
        shape(f, &a.shape)?;
        write!(
            f,
            "{} @ {} -> {}",
            imp::ImpType::Prim(a.elem).name(),
            a.block.name,
            a.lmad
        )
    }
}

fn shape(f: &mut fmt::Formatter<'_>, shape: &[Atom]) -> fmt::Result {
    for a in shape {
        write!(f, "[{a}]")?;
    }
    Ok(())
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        atom(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Display for SExp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&sexp_string(self))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Prim(p, _) => f.write_str(imp::ImpType::Prim(*p).name()),
            Type::Mem(_) => f.write_str("mem"),
            Type::Array(a, _) => {
                shape(f, &a.shape)?;
                f.write_str(imp::ImpType::Prim(a.elem).name())?;
                if let Some(m) = &a.mem {
                    write!(f, " @ {} -> {}", m.block.name, m.lmad)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for LmadSyn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LmadSyn::RowMajor(shape, _) => {
                f.write_str("R(")?;
                for (k, a) in shape.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            LmadSyn::Explicit { offset, dims, .. } => {
                // The offset is followed by `+ {`, so it is printed at the
                // strength of `+`.
                let mut s = String::new();
                sexp(&mut s, offset, BinOp::Add.precedence());
                write!(f, "{s} + {{")?;
                for (k, (n, st)) in dims.iter().enumerate() {
                    if k > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "({n} : {st})")?;
                }
                f.write_str("}")
            }
        }
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&program(self))
    }
}

impl fmt::Display for imp::Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&imp_program(self))
    }
}
