//! Counting constructs, for the `structure { Name N }` lines of test blocks
//! (docs/language.md, Test blocks). Names are matched without regard to case (`Alloc`,
//! `alloc`); nested bodies are counted too.

use crate::ast::{Body, ExpKind, Program, RedOp, Stm};
use crate::imp::{self, StmtKind};
use crate::parse::AnyProgram;

/// The construct names FUN and FUNMEM programs can count.
pub const FUN_CONSTRUCTS: [&str; 15] = [
    "alloc",
    "concat",
    "copy",
    "hostread",
    "if",
    "index",
    "iota",
    "kernel",
    "loop",
    "reduce",
    "replicate",
    "scan",
    "slice",
    "transpose",
    "update",
];
/// The construct names IMP programs can count.
pub const IMP_CONSTRUCTS: [&str; 11] = [
    "alloc", "for", "hostread", "if", "kernel", "read", "reduce", "scan", "var", "while", "write",
];

/// How many times `construct` occurs, or `None` if the language has no
/// construct of that name.
pub fn count(p: &AnyProgram, construct: &str) -> Option<usize> {
    let c = construct.to_ascii_lowercase();
    match p {
        AnyProgram::Fun(p) => FUN_CONSTRUCTS
            .contains(&c.as_str())
            .then(|| count_fun(p, &c)),
        AnyProgram::Imp(p) if c == "hostread" => Some(host_reads_imp(&p.body)),
        AnyProgram::Imp(p) => IMP_CONSTRUCTS
            .contains(&c.as_str())
            .then(|| count_stmts(&p.body, &c)),
    }
}

fn count_fun(p: &Program, c: &str) -> usize {
    if c == "hostread" {
        return host_reads(&p.body);
    }
    count_body(&p.body, c)
}

/// `HostRead`: the synchronous device-to-host reads a body's text makes
/// outside kernels, counted where they are written (a loop's body once):
/// element reads (every dimension indexed, a scalar result) and
/// `reduce`s (whose result the host reads). Kernel bodies and reduction
/// operators run on the device and count nothing.
pub fn host_reads(b: &Body) -> usize {
    b.stms
        .iter()
        .map(|s| match &s.exp.kind {
            _ if is_host_read(s) => 1,
            ExpKind::If(_, t, e) => host_reads(t) + host_reads(e),
            ExpKind::Loop(_, _, _, lb) => host_reads(lb),
            _ => 0,
        })
        .sum()
}

/// Whether a statement outside kernels is a synchronous device-to-host
/// read: an element read of a scalar, or a `reduce` (whose result the
/// host reads).
pub fn is_host_read(s: &Stm) -> bool {
    match &s.exp.kind {
        ExpKind::Index(..) => s.pats.len() == 1 && s.pats[0].ty.as_prim().is_some(),
        ExpKind::Reduce(..) => true,
        _ => false,
    }
}

/// The worst case of a body's synchronous reads outside kernels, as a
/// polynomial in loops' trip counts: entry d counts the reads under d
/// nested loops (each runs K times, for a K that may be as large as it
/// likes), and a branch counts as the worse of its two sides. Two such
/// counts compare by [`worse_reads`]: the one with more reads at the
/// deepest level is worse for large enough K.
pub fn worst_host_reads(b: &Body) -> Vec<usize> {
    let mut total: Vec<usize> = Vec::new();
    let add = |total: &mut Vec<usize>, v: &[usize], shift: usize| {
        if total.len() < v.len() + shift {
            total.resize(v.len() + shift, 0);
        }
        for (d, n) in v.iter().enumerate() {
            total[d + shift] += n;
        }
    };
    for s in &b.stms {
        match &s.exp.kind {
            _ if is_host_read(s) => add(&mut total, &[1], 0),
            ExpKind::If(_, t, e) => {
                let (a, b) = (worst_host_reads(t), worst_host_reads(e));
                let w = if worse_reads(&a, &b) { a } else { b };
                add(&mut total, &w, 0);
            }
            ExpKind::Loop(_, _, _, lb) => add(&mut total, &worst_host_reads(lb), 1),
            _ => {}
        }
    }
    while total.last() == Some(&0) {
        total.pop();
    }
    total
}

/// Whether the worst case `a` has more reads than `b` for large trip
/// counts (see [`worst_host_reads`]).
pub fn worse_reads(a: &[usize], b: &[usize]) -> bool {
    let n = a.len().max(b.len());
    for d in (0..n).rev() {
        let (x, y) = (
            a.get(d).copied().unwrap_or(0),
            b.get(d).copied().unwrap_or(0),
        );
        if x != y {
            return x > y;
        }
    }
    false
}

/// `HostRead` in IMP: reads of a block element and reduces outside
/// kernels.
fn host_reads_imp(ss: &[imp::Stmt]) -> usize {
    ss.iter()
        .map(|s| match &s.kind {
            StmtKind::Read(..) | StmtKind::Reduce(..) => 1,
            StmtKind::If(_, t, e) => host_reads_imp(t) + host_reads_imp(e),
            StmtKind::For(_, _, b) | StmtKind::While(_, b) => host_reads_imp(b),
            _ => 0,
        })
        .sum()
}

fn count_body(b: &Body, c: &str) -> usize {
    b.stms
        .iter()
        .map(|s| {
            let (name, inner) = match &s.exp.kind {
                ExpKind::Scalar(_) => ("scalar", 0),
                ExpKind::Alloc(..) => ("alloc", 0),
                ExpKind::Reduce(op, ..) => ("reduce", count_op(op, c)),
                ExpKind::Scan(op, ..) => ("scan", count_op(op, c)),
                ExpKind::Index(..) => ("index", 0),
                ExpKind::Slice(..) => ("slice", 0),
                ExpKind::Transpose(_) => ("transpose", 0),
                ExpKind::Iota(_) => ("iota", 0),
                ExpKind::Copy(_) => ("copy", 0),
                ExpKind::If(_, t, e) => ("if", count_body(t, c) + count_body(e, c)),
                ExpKind::Kernel(_, _, b) => ("kernel", count_body(b, c)),
                ExpKind::Loop(_, _, _, b) => ("loop", count_body(b, c)),
                ExpKind::Update(..) => ("update", 0),
                ExpKind::Concat(..) => ("concat", 0),
                ExpKind::Replicate(..) => ("replicate", 0),
            };
            usize::from(name == c) + inner
        })
        .sum()
}

fn count_op(op: &RedOp, c: &str) -> usize {
    match op {
        RedOp::Bin(..) => 0,
        RedOp::Lambda(l) => count_body(&l.body, c),
    }
}

fn count_red(r: &imp::Red, c: &str) -> usize {
    let op = match &r.op {
        imp::ImpOp::Bin(_) => 0,
        imp::ImpOp::Lambda(_, _, b, _) => count_stmts(b, c),
    };
    op + count_stmts(&r.body, c)
}

fn count_stmts(ss: &[imp::Stmt], c: &str) -> usize {
    ss.iter()
        .map(|s| {
            let (name, inner) = match &s.kind {
                StmtKind::Skip => ("skip", 0),
                StmtKind::Assert(..) => ("assert", 0),
                StmtKind::Var(..) => ("var", 0),
                StmtKind::Assign(..) => ("assign", 0),
                StmtKind::Alloc(..) => ("alloc", 0),
                StmtKind::Read(..) => ("read", 0),
                StmtKind::Write(..) => ("write", 0),
                StmtKind::If(_, t, e) => ("if", count_stmts(t, c) + count_stmts(e, c)),
                StmtKind::Kernel(_, _, b) => ("kernel", count_stmts(b, c)),
                StmtKind::For(_, _, b) => ("for", count_stmts(b, c)),
                StmtKind::While(_, b) => ("while", count_stmts(b, c)),
                StmtKind::Reduce(_, r) => ("reduce", count_red(r, c)),
                StmtKind::Scan(r, _, _) => ("scan", count_red(r, c)),
            };
            usize::from(name == c) + inner
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_layer, Layer};

    #[test]
    fn counts_nested_constructs() {
        let src = "def main (c: int) (n: int) =\n let (m: mem) = alloc n\n let (a: [n]int @ m -> R(n)) = kernel i < n do let (x: int) = i in (x)\n let (r: int) (k: mem) = if c then let (q: mem) = alloc 1 in (n, q) else in (n, m)\n in (a)";
        let p = parse_layer(src, Layer::FunMem).expect("parses");
        assert_eq!(count(&p, "Alloc"), Some(2));
        assert_eq!(count(&p, "kernel"), Some(1));
        assert_eq!(count(&p, "if"), Some(1));
        assert_eq!(count(&p, "copy"), Some(0));
        assert_eq!(count(&p, "SegMap"), None);
        assert_eq!(count(&p, "HostRead"), Some(0));
        let reads = "def main (n: int) (m: mem) (xs: [n]int @ m -> R(n)) =\n let (a: int) = xs[0]\n let (s: int) = reduce (+) 0 xs\n let (k: mem) = alloc n\n let (ys: [n]int @ k -> R(n)) = kernel i < n do let (x: int) = xs[i] in (x)\n let (r: [n]int @ m -> R(n)) = xs[0:n]\n in (ys)";
        let p = parse_layer(reads, Layer::FunMem).expect("parses");
        assert_eq!(
            count(&p, "HostRead"),
            Some(2),
            "a read and a reduce; the kernel's read and the slice are not"
        );
        let imp = parse_layer(
            "def main (n: int) = var m: mem; m <- alloc n; kernel i < n do m[i] <- i done out (n)",
            Layer::Imp,
        )
        .expect("parses");
        assert_eq!(count(&imp, "write"), Some(1));
        assert_eq!(count(&imp, "alloc"), Some(1));
        assert_eq!(count(&imp, "index"), None);
    }
}
