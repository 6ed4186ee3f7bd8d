//! IMP to OpenCL C.
//!
//! A program splits in two. The *host part* is every statement outside a
//! kernel; it stays a small tree ([`HostStmt`]) that the driver runs on the
//! host. Each *top-level kernel* (a kernel not inside another kernel)
//! becomes an OpenCL kernel over a 1-D NDRange: work-item `i` runs
//! iteration `i`. Kernels nested inside become `for` loops in the
//! work-item, which is exact because IMP's iterations are independent
//! (race freedom, eq. 4). `if` becomes `if`; IMP's sequential `for` and
//! `while` become C `for` and `while` inside a kernel, and host loops
//! ([`HostStmt::For`], [`HostStmt::While`]) outside, which the driver runs,
//! launching their kernels once per iteration.
//!
//! The generated code keeps IMP's semantics (docs/language.md, Conventions):
//!
//! - integers are `long`; `+ - *` and unary `-` wrap (they are computed on
//!   `ulong` by `fm_add` and friends, since signed overflow is undefined in
//!   OpenCL C); `/` and `%` truncate toward zero and wrap on `LONG_MIN / -1`;
//! - every read and write is checked against its block's size, every
//!   divisor against zero and every nested kernel's bound against a
//!   negative value. A failed check records its *site* (the rule and the
//!   IMP statement it comes from) in an error buffer and ends the work-item;
//!   the host turns the first recorded site into the same kind of error the
//!   interpreter gives ([`Site`]);
//! - nested kernels and loops spend a per-work-item fuel, one unit an
//!   iteration, so that no kernel runs forever (a `while` on the device
//!   cannot be stopped from the host): when it is spent, the work-item
//!   fails at a fuel site (`E-IMP-WHILE`, ...) like any other check, and
//!   the host reports a limit;
//! - a kernel launched inside a host loop first looks at the error buffer
//!   and does nothing once an earlier kernel has failed, so that a loop
//!   that launches kernels without reading anything back does not go on
//!   computing after the failure that ends the run.
//!
//! Free `int` variables of a kernel are passed by value, blocks as buffers
//! with their sizes in elements. Programs that allocate inside a kernel are
//! refused: memory expansion hoists such allocations out first.

use funmem_lang::ast::{Atom, BinOp, SExp, UnOp};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::imp::{Check, ImpType, Param, Program, Result as ImpResult, Stmt, StmtKind};
use funmem_lang::{Name, Span};
use funmem_transforms::names::Names;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

/// A program translated for OpenCL: the kernels' source and the host part.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// OpenCL C source of every kernel, with its prelude.
    pub source: String,
    /// The kernels, in the order of the source.
    pub kernels: Vec<KernelInfo>,
    /// The host part of the program.
    pub host: Vec<HostStmt>,
    /// For each statement of [`Compiled::host`]'s top level: the `mem`
    /// variables not used after it (their blocks may be freed then).
    pub dying: Vec<Vec<Name>>,
    /// The checks in the kernels: site `k` is `sites[k - 1]`.
    pub sites: Vec<Site>,
    /// The IMP program (its parameters and results).
    pub program: Program,
}

/// One OpenCL kernel: a top-level IMP kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    /// Its OpenCL name.
    pub name: String,
    /// The IMP kernel's index variable.
    pub index: Name,
    /// The number of iterations (evaluated on the host).
    pub bound: SExp,
    /// Free `int` variables, passed by value, in argument order.
    pub ints: Vec<Name>,
    /// Free blocks, passed as buffer and size, in argument order.
    pub mems: Vec<Name>,
    /// Whether the body has nested kernels or loops (and so spends fuel).
    pub loops: bool,
    /// Whether it is launched inside a host loop (and so returns at once
    /// after an earlier failure).
    pub repeated: bool,
    /// The IMP kernel statement.
    pub span: Span,
}

/// A statement of the host part.
#[derive(Clone, Debug)]
pub enum HostStmt {
    /// `var x : τ`.
    Var(Name, ImpType),
    /// `x <- se` for an `int` x.
    Assign(Name, SExp, Span),
    /// `m <- m'` for blocks.
    AssignMem(Name, Name),
    /// `m <- alloc se`: a device buffer.
    Alloc(Name, SExp, Span),
    /// `x <- m[se]`: a synchronous device-to-host transfer.
    Read(Name, Name, SExp, Span),
    /// `m[se] <- se`: a host-to-device transfer.
    Write(Name, SExp, SExp, Span),
    /// `if x then .. else ..`.
    If(Name, Vec<HostStmt>, Vec<HostStmt>),
    /// `for i < se do .. done`, run on the host (E-IMP-FOR): se once, then
    /// the body for i = 0 .. se-1.
    For(Name, SExp, Vec<HostStmt>, Span),
    /// `while x do .. done`, run on the host (E-IMP-WHILE): x is tested
    /// before each iteration.
    While(Name, Vec<HostStmt>, Span),
    /// `assert c se`: checked on the host.
    Assert(Check, SExp, Span),
    /// Launch kernel `k` of [`Compiled::kernels`].
    Launch(usize),
}

/// A check in a kernel: which rule gets stuck, where, and what the two
/// recorded values mean.
#[derive(Clone, Debug)]
pub struct Site {
    /// The IMP rule (`E-IMP-READ`, ...).
    pub rule: &'static str,
    /// The IMP statement.
    pub span: Span,
    /// What failed.
    pub what: SiteKind,
    /// The kernel it is in.
    pub kernel: usize,
}

/// What a failed check means.
#[derive(Clone, Debug)]
pub enum SiteKind {
    /// A read or write of block `m` at an offset (value 1) outside its size
    /// (value 2).
    Bounds { block: Name, write: bool },
    /// A division or remainder (value 1 is the dividend) by zero.
    DivByZero,
    /// A nested kernel with a negative bound (value 1).
    NegativeBound,
    /// The work-item spent its fuel (in a nested kernel or a loop).
    Fuel,
    /// An `assert` whose condition (as written) did not hold; the values
    /// are those of its first two variables, named here.
    Assert {
        check: Check,
        cond: String,
        vars: Vec<Name>,
    },
}

impl Site {
    /// The message for the values the failed check recorded.
    pub fn message(&self, a: i64, b: i64) -> String {
        match &self.what {
            SiteKind::Bounds { block, write } => format!(
                "{} out of bounds in a kernel: offset {a} of block `{block}` of size {b}",
                if *write { "write" } else { "read" }
            ),
            SiteKind::DivByZero => format!("division by zero in a kernel: {a} / 0"),
            SiteKind::NegativeBound => {
                format!("nested kernel with a negative number of iterations: {a}")
            }
            SiteKind::Fuel => {
                "out of fuel in a kernel's nested loops (raise it with --fuel)".to_string()
            }
            SiteKind::Assert { check, cond, vars } => funmem_semantics::imp::assert_message(
                *check,
                cond,
                vars.iter().map(Name::as_str).zip([a, b]),
            ),
        }
    }
}

const READ: &str = "E-IMP-READ";
const WRITE: &str = "E-IMP-WRITE";
const KERNEL: &str = "E-IMP-KERNEL";
const FOR: &str = "E-IMP-FOR";
const WHILE: &str = "E-IMP-WHILE";
const ASSIGN_INT: &str = "E-IMP-ASSIGN-INT";
const ASSERT: &str = "E-IMP-ASSERT";

/// The prelude of every generated program: wrapping arithmetic, checks and
/// the optional access counters (built with `-D FM_COUNT`).
const PRELUDE: &str = r#"// Generated by funmem from IMP (funmem lower --to opencl).
// Integers are 64-bit two's complement: + - * wrap, / and % truncate toward
// zero. Every block access is checked against the block's size; a failed
// check records its site in fm_err and ends the work-item.

long fm_add(long a, long b) { return (long)((ulong)a + (ulong)b); }
long fm_sub(long a, long b) { return (long)((ulong)a - (ulong)b); }
long fm_mul(long a, long b) { return (long)((ulong)a * (ulong)b); }
long fm_neg(long a) { return (long)(0UL - (ulong)a); }
long fm_div(long a, long b) { return b == -1 ? fm_neg(a) : (b == 0 ? 0 : a / b); }
long fm_rem(long a, long b) { return (b == -1 || b == 0) ? 0 : a % b; }

// The first failing work-item records its site and two values.
void fm_fail(__global long *fm_err, int site, long a, long b) {
  if (atomic_cmpxchg((volatile __global int *)fm_err, 0, site) == 0) {
    fm_err[1] = a;
    fm_err[2] = b;
  }
}

#define FM_FAIL(site, a, b) do { fm_fail(fm_err, (site), (a), (b)); return; } while (0)
#define FM_IN(a, n) ((ulong)(a) < (ulong)(n))

#ifdef FM_COUNT
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define FM_COUNTERS long fm_reads = 0, fm_writes = 0
#define FM_READ fm_reads++
#define FM_WRITE fm_writes++
#define FM_FLUSH(k) do { atom_add(&fm_count[2 * (k)], fm_reads); atom_add(&fm_count[2 * (k) + 1], fm_writes); } while (0)
#else
#define FM_COUNTERS
#define FM_READ
#define FM_WRITE
#define FM_FLUSH(k)
#endif
"#;

/// C identifiers for IMP names. Every user name gets the prefix `v_` and
/// every identifier of ours starts with `fm_`, `FM_` or is a kernel name
/// (`k0`, ...); no OpenCL C keyword, type, built-in function or predefined
/// macro starts with `v_` (the vector built-ins are `vload*`, `vstore*` and
/// `vec_step`), so no program's names can clash with the language or with
/// us, whatever the next OpenCL version adds. Names that become equal once
/// their non-C characters (`'`) are replaced get a numeric suffix.
struct CNames {
    map: HashMap<Name, String>,
    /// The identifiers handed out; fresh ones as the lowering's own fresh
    /// names are made (`base`, `base_1`, ...).
    used: Names,
}

impl CNames {
    fn new() -> CNames {
        CNames {
            map: HashMap::new(),
            used: Names::default(),
        }
    }

    /// An identifier not used yet, based on `base` (already prefixed).
    fn fresh(&mut self, base: &str) -> String {
        let s: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        self.used.fresh(&s).name.as_str().to_string()
    }

    fn of(&mut self, x: &Name) -> String {
        if let Some(c) = self.map.get(x) {
            return c.clone();
        }
        let c = self.fresh(&format!("v_{}", x.as_str()));
        self.map.insert(x.clone(), c.clone());
        c
    }
}

/// Translates an IMP program for OpenCL. Fails, at its position, on an
/// allocation inside a kernel.
pub fn compile(p: &Program) -> Result<Compiled, Diagnostic> {
    compile_with_prefix(p, "")
}

/// As [`compile`], with every kernel's name starting with `prefix`, so that
/// several programs can share one OpenCL program.
pub fn compile_with_prefix(p: &Program, prefix: &str) -> Result<Compiled, Diagnostic> {
    if let Some(at) = transient_unsupported(p) {
        return Err(Diagnostic::new(
            Phase::Transform,
            at,
            "TRANSIENT: element types other than i64, reduce and scan are not compiled to OpenCL yet",
        ));
    }
    let mut g = Gen {
        prefix: prefix.to_string(),
        names: CNames::new(),
        sizes: HashMap::new(),
        out: String::new(),
        kernels: Vec::new(),
        sites: Vec::new(),
        types: HashMap::new(),
        indent: 0,
        host_loops: 0,
    };
    // Every program name first, so that derived names avoid them all.
    let mut all = BTreeSet::new();
    for q in &p.params {
        match q {
            Param::Scalar(x, _, _) => {
                all.insert(x.name.clone());
            }
            Param::Array(a) => {
                all.insert(a.block.name.clone());
            }
        }
    }
    collect_names(&p.body, &mut all);
    for x in &all {
        g.names.of(x);
    }
    for q in &p.params {
        match q {
            Param::Scalar(x, t, _) => g.types.insert(x.name.clone(), ImpType::Prim(*t)),
            Param::Array(a) => g.types.insert(a.block.name.clone(), ImpType::Mem),
        };
    }
    g.out.push_str(PRELUDE);
    let host = g.host(&p.body)?;
    let dying = last_uses(&host, &g.kernels, p);
    Ok(Compiled {
        source: g.out,
        kernels: g.kernels,
        host,
        dying,
        sites: g.sites,
        program: p.clone(),
    })
}

/// The `mem` variables a host statement uses and defines (an `if`: those
/// of its branches).
fn mem_uses_defs(
    s: &HostStmt,
    kernels: &[KernelInfo],
    uses: &mut BTreeSet<Name>,
    defs: &mut BTreeSet<Name>,
) {
    match s {
        // A declaration holds no block yet.
        HostStmt::Alloc(x, _, _) => {
            defs.insert(x.clone());
        }
        HostStmt::AssignMem(x, y) => {
            defs.insert(x.clone());
            uses.insert(y.clone());
        }
        HostStmt::Read(_, m, _, _) | HostStmt::Write(m, _, _, _) => {
            uses.insert(m.clone());
        }
        HostStmt::If(_, a, b) => {
            for t in a.iter().chain(b) {
                mem_uses_defs(t, kernels, uses, defs);
            }
        }
        HostStmt::For(_, _, b, _) | HostStmt::While(_, b, _) => {
            for t in b {
                mem_uses_defs(t, kernels, uses, defs);
            }
        }
        HostStmt::Launch(k) => uses.extend(kernels[*k].mems.iter().cloned()),
        HostStmt::Var(..) | HostStmt::Assign(..) | HostStmt::Assert(..) => {}
    }
}

/// Backward liveness over the host part's top level: after statement `j`,
/// the `mem` variables it touches that no later statement (nor a result)
/// uses. An `if` counts as one statement whose definitions may not happen,
/// so it kills nothing; so does a loop (its body may run no time, and what
/// an iteration uses may have been defined by the one before).
fn last_uses(host: &[HostStmt], kernels: &[KernelInfo], p: &Program) -> Vec<Vec<Name>> {
    let mut live: BTreeSet<Name> = p
        .results
        .iter()
        .filter_map(|r| match r {
            ImpResult::Array(a) => Some(a.block.name.clone()),
            ImpResult::Scalar(_) => None,
        })
        .collect();
    let mut dying = vec![Vec::new(); host.len()];
    for (j, s) in host.iter().enumerate().rev() {
        let (mut uses, mut defs) = (BTreeSet::new(), BTreeSet::new());
        mem_uses_defs(s, kernels, &mut uses, &mut defs);
        dying[j] = uses
            .union(&defs)
            .filter(|x| !live.contains(*x))
            .cloned()
            .collect();
        if !matches!(
            s,
            HostStmt::If(..) | HostStmt::For(..) | HostStmt::While(..)
        ) {
            for d in &defs {
                live.remove(d);
            }
        }
        live.extend(uses);
    }
    dying
}

fn collect_names(ss: &[Stmt], out: &mut BTreeSet<Name>) {
    for s in ss {
        match &s.kind {
            StmtKind::Reduce(..) | StmtKind::Scan(..) => {}
            StmtKind::Var(x, _) => {
                out.insert(x.name.clone());
            }
            StmtKind::If(_, a, b) => {
                collect_names(a, out);
                collect_names(b, out);
            }
            StmtKind::Kernel(i, _, b) | StmtKind::For(i, _, b) => {
                out.insert(i.name.clone());
                collect_names(b, out);
            }
            StmtKind::While(_, b) => collect_names(b, out),
            StmtKind::Skip
            | StmtKind::Assign(..)
            | StmtKind::Alloc(..)
            | StmtKind::Read(..)
            | StmtKind::Write(..)
            | StmtKind::Assert(..) => {}
        }
    }
}

/// Free variables of a kernel body: used but not declared inside.
fn free_vars(ss: &[Stmt], bound: &mut HashSet<Name>, free: &mut BTreeSet<Name>) {
    fn sexp(e: &SExp, bound: &HashSet<Name>, free: &mut BTreeSet<Name>) {
        e.for_each_var(&mut |x| {
            if !bound.contains(&x.name) {
                free.insert(x.name.clone());
            }
        });
    }
    let name = |x: &Name, bound: &HashSet<Name>, free: &mut BTreeSet<Name>| {
        if !bound.contains(x) {
            free.insert(x.clone());
        }
    };
    for s in ss {
        match &s.kind {
            StmtKind::Skip => {}
            StmtKind::Assert(_, e) => sexp(e, bound, free),
            StmtKind::Var(x, _) => {
                bound.insert(x.name.clone());
            }
            StmtKind::Reduce(..) | StmtKind::Scan(..) => {}
            StmtKind::Assign(x, e) | StmtKind::Alloc(x, e, _) => {
                name(&x.name, bound, free);
                sexp(e, bound, free);
            }
            StmtKind::Read(x, m, e) => {
                name(&x.name, bound, free);
                name(&m.name, bound, free);
                sexp(e, bound, free);
            }
            StmtKind::Write(m, i, v) => {
                name(&m.name, bound, free);
                sexp(i, bound, free);
                sexp(v, bound, free);
            }
            StmtKind::If(c, a, b) => {
                name(&c.name, bound, free);
                free_vars(a, bound, free);
                free_vars(b, bound, free);
            }
            StmtKind::Kernel(i, n, b) | StmtKind::For(i, n, b) => {
                sexp(n, bound, free);
                bound.insert(i.name.clone());
                free_vars(b, bound, free);
            }
            StmtKind::While(c, b) => {
                name(&c.name, bound, free);
                free_vars(b, bound, free);
            }
        }
    }
}

struct Gen {
    /// Starts every kernel name.
    prefix: String,
    names: CNames,
    /// The size variable of each block name.
    sizes: HashMap<Name, String>,
    out: String,
    kernels: Vec<KernelInfo>,
    sites: Vec<Site>,
    /// Types of the host's variables.
    types: HashMap<Name, ImpType>,
    indent: usize,
    /// How many host loops the statement being translated is in.
    host_loops: usize,
}

impl Gen {
    fn c(&mut self, x: &Name) -> String {
        self.names.of(x)
    }

    fn size_of(&mut self, m: &Name) -> String {
        if let Some(s) = self.sizes.get(m) {
            return s.clone();
        }
        let base = format!("{}_n", self.c(m));
        let s = self.names.fresh(&base);
        self.sizes.insert(m.clone(), s.clone());
        s
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn site(&mut self, rule: &'static str, span: Span, what: SiteKind) -> usize {
        self.sites.push(Site {
            rule,
            span,
            what,
            kernel: self.kernels.len(),
        });
        self.sites.len()
    }

    // ---- the host part ----

    fn host(&mut self, ss: &[Stmt]) -> Result<Vec<HostStmt>, Diagnostic> {
        let mut out = Vec::new();
        for s in ss {
            out.push(match &s.kind {
                StmtKind::Reduce(..) | StmtKind::Scan(..) => {
                    return Err(Diagnostic::new(
                        Phase::Transform,
                        s.span,
                        "TRANSIENT: reduce and scan are not compiled yet",
                    ))
                }
                // E-IMP-FOR / E-IMP-WHILE on the host: the driver runs
                // the loop and launches its kernels in each iteration.
                StmtKind::For(i, n, b) => {
                    self.types.insert(i.name.clone(), ImpType::INT);
                    self.host_loops += 1;
                    let body = self.host(b);
                    self.host_loops -= 1;
                    HostStmt::For(i.name.clone(), n.clone(), body?, s.span)
                }
                StmtKind::While(c, b) => {
                    self.host_loops += 1;
                    let body = self.host(b);
                    self.host_loops -= 1;
                    HostStmt::While(c.name.clone(), body?, s.span)
                }
                StmtKind::Skip => continue,
                StmtKind::Assert(c, e) => HostStmt::Assert(*c, e.clone(), s.span),
                StmtKind::Var(x, t) => {
                    self.types.insert(x.name.clone(), *t);
                    HostStmt::Var(x.name.clone(), *t)
                }
                StmtKind::Assign(x, e) => match (self.types.get(&x.name), e) {
                    (Some(ImpType::Mem), SExp::Atom(Atom::Var(y))) => {
                        HostStmt::AssignMem(x.name.clone(), y.name.clone())
                    }
                    _ => HostStmt::Assign(x.name.clone(), e.clone(), s.span),
                },
                StmtKind::Alloc(x, e, _) => HostStmt::Alloc(x.name.clone(), e.clone(), s.span),
                StmtKind::Read(x, m, e) => {
                    HostStmt::Read(x.name.clone(), m.name.clone(), e.clone(), s.span)
                }
                StmtKind::Write(m, i, v) => {
                    HostStmt::Write(m.name.clone(), i.clone(), v.clone(), s.span)
                }
                StmtKind::If(c, a, b) => HostStmt::If(c.name.clone(), self.host(a)?, self.host(b)?),
                StmtKind::Kernel(i, n, body) => {
                    HostStmt::Launch(self.kernel(&i.name, n, body, s.span)?)
                }
            });
        }
        Ok(out)
    }

    // ---- kernels ----

    fn kernel(
        &mut self,
        index: &Name,
        bound: &SExp,
        body: &[Stmt],
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let k = self.kernels.len();
        let mut bound_names = HashSet::from([index.clone()]);
        let mut free = BTreeSet::new();
        free_vars(body, &mut bound_names, &mut free);
        let (mut ints, mut mems) = (Vec::new(), Vec::new());
        for x in free {
            match self.types.get(&x) {
                Some(ImpType::Mem) => mems.push(x),
                _ => ints.push(x),
            }
        }
        let loops = has_loop(body);
        let repeated = self.host_loops > 0;
        let name = format!("{}k{k}", self.prefix);
        let mut args = vec!["long fm_iterations".to_string()];
        if loops {
            args.push("long fm_fuel".to_string());
        }
        for x in &ints {
            args.push(format!("long {}", self.c(x)));
        }
        for m in &mems {
            let (c, n) = (self.c(m), self.size_of(m));
            args.push(format!("__global long *{c}"));
            args.push(format!("long {n}"));
        }
        args.push("__global long *fm_err".to_string());
        args.push("__global long *fm_count".to_string());
        let i = self.c(index);
        self.out.push('\n');
        let _ = writeln!(self.out, "// kernel {} < {}", index, print_sexp(bound));
        let _ = writeln!(self.out, "__kernel void {name}({}) {{", args.join(", "));
        self.indent = 1;
        self.line(&format!("const long {i} = (long)get_global_id(0);"));
        self.line(&format!("if ({i} >= fm_iterations) return;"));
        if repeated {
            // Launched in a host loop: nothing to do once the run has failed.
            self.line("if (fm_err[0] != 0) return;");
        }
        self.line("FM_COUNTERS;");
        self.body(body)?;
        self.line(&format!("FM_FLUSH({k});"));
        self.indent = 0;
        self.out.push_str("}\n");
        self.kernels.push(KernelInfo {
            name,
            index: index.clone(),
            bound: bound.clone(),
            ints,
            mems,
            loops,
            repeated,
            span,
        });
        Ok(k)
    }

    fn body(&mut self, ss: &[Stmt]) -> Result<(), Diagnostic> {
        for s in ss {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Checks that every divisor in `es` is non-zero, innermost first.
    fn div_checks(&mut self, es: &[&SExp], rule: &'static str, span: Span) {
        fn walk(e: &SExp, out: &mut Vec<(SExp, SExp)>) {
            match e {
                SExp::Atom(_) => {}
                SExp::Un(_, e, _) => walk(e, out),
                SExp::Bin(op, l, r, _) => {
                    walk(l, out);
                    walk(r, out);
                    if matches!(op, BinOp::Div | BinOp::Rem) {
                        out.push(((**l).clone(), (**r).clone()));
                    }
                }
            }
        }
        let mut divs = Vec::new();
        for e in es {
            walk(e, &mut divs);
        }
        for (l, r) in divs {
            let site = self.site(rule, span, SiteKind::DivByZero);
            let (lc, rc) = (self.expr(&l), self.expr(&r));
            self.line(&format!("if ({rc} == 0) FM_FAIL({site}, {lc}, 0);"));
        }
    }

    /// A C loop over `i` = 0 .. n-1 with the bound evaluated once, each
    /// iteration spending the work-item's fuel: a `for` in a kernel, or a
    /// nested kernel (which, with `negative_fails`, also fails on a
    /// negative bound where a `for` runs nothing).
    #[allow(clippy::too_many_arguments)]
    fn counted_loop(
        &mut self,
        rule: &'static str,
        word: &str,
        i: &funmem_lang::ast::Ident,
        n: &SExp,
        body: &[Stmt],
        span: Span,
        negative_fails: bool,
    ) -> Result<(), Diagnostic> {
        self.div_checks(&[n], rule, span);
        let ci = self.c(&i.name);
        let cn = self.names.fresh(&format!("{ci}_iterations"));
        let bound = self.expr(n);
        let neg = negative_fails.then(|| self.site(rule, span, SiteKind::NegativeBound));
        let fuel = self.site(rule, span, SiteKind::Fuel);
        self.line(&format!("// {word} {} < {}", i.name, print_sexp(n)));
        self.line("{");
        self.indent += 1;
        self.line(&format!("const long {cn} = {bound};"));
        if let Some(neg) = neg {
            self.line(&format!("if ({cn} < 0) FM_FAIL({neg}, {cn}, 0);"));
        }
        self.line(&format!("for (long {ci} = 0; {ci} < {cn}; {ci}++) {{"));
        self.indent += 1;
        self.line(&format!("if (--fm_fuel < 0) FM_FAIL({fuel}, 0, 0);"));
        self.body(body)?;
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        match &s.kind {
            StmtKind::Reduce(..) | StmtKind::Scan(..) => {
                return Err(Diagnostic::new(
                    Phase::Transform,
                    s.span,
                    "TRANSIENT: reduce and scan are not compiled yet",
                ))
            }
            // E-IMP-FOR in a kernel: the bound once, then a C loop that
            // spends the work-item's fuel; a negative bound runs nothing.
            StmtKind::For(i, n, body) => {
                self.counted_loop(FOR, "for", i, n, body, s.span, false)?
            }
            // E-IMP-WHILE in a kernel: tested before each iteration; each
            // iteration spends fuel, which is what stops an endless one.
            StmtKind::While(c, body) => {
                let cc = self.c(&c.name);
                let fuel = self.site(WHILE, s.span, SiteKind::Fuel);
                self.line(&format!("while ({cc} != 0) {{"));
                self.indent += 1;
                self.line(&format!("if (--fm_fuel < 0) FM_FAIL({fuel}, 0, 0);"));
                self.body(body)?;
                self.indent -= 1;
                self.line("}");
            }
            StmtKind::Skip => {}
            // E-IMP-ASSERT: a failure records the first two variables.
            StmtKind::Assert(check, e) => {
                self.div_checks(&[e], ASSERT, s.span);
                let vars: Vec<Name> = e
                    .distinct_vars()
                    .into_iter()
                    .take(2)
                    .map(|x| x.name.clone())
                    .collect();
                let vals: Vec<String> = vars.iter().map(|x| self.c(x)).collect();
                let cond = self.expr(e);
                let what = SiteKind::Assert {
                    check: *check,
                    cond: print_sexp(e),
                    vars,
                };
                let site = self.site(check.rule(), s.span, what);
                let val = |k: usize| vals.get(k).cloned().unwrap_or_else(|| "0".to_string());
                self.line(&format!(
                    "if (!({cond})) FM_FAIL({site}, {}, {});",
                    val(0),
                    val(1)
                ));
            }
            StmtKind::Var(x, ImpType::Prim(_)) => {
                self.types.insert(x.name.clone(), ImpType::INT);
                let c = self.c(&x.name);
                self.line(&format!("long {c} = 0;"));
            }
            StmtKind::Var(x, ImpType::Mem) => {
                self.types.insert(x.name.clone(), ImpType::Mem);
                let (c, n) = (self.c(&x.name), self.size_of(&x.name));
                self.line(&format!("__global long *{c} = 0;"));
                self.line(&format!("long {n} = 0;"));
            }
            StmtKind::Assign(x, e) => {
                if let (Some(ImpType::Mem), SExp::Atom(Atom::Var(y))) = (self.types.get(&x.name), e)
                {
                    let (cx, nx) = (self.c(&x.name), self.size_of(&x.name));
                    let (cy, ny) = (self.c(&y.name), self.size_of(&y.name));
                    self.line(&format!("{cx} = {cy};"));
                    self.line(&format!("{nx} = {ny};"));
                } else {
                    self.div_checks(&[e], ASSIGN_INT, s.span);
                    let (c, v) = (self.c(&x.name), self.expr(e));
                    self.line(&format!("{c} = {v};"));
                }
            }
            StmtKind::Alloc(..) => return Err(alloc_in_kernel(s.span)),
            StmtKind::Read(x, m, e) => {
                self.div_checks(&[e], READ, s.span);
                let at = self.address(e);
                let cm = self.bounds_check(READ, s.span, &m.name, &at, false);
                let c = self.c(&x.name);
                self.line(&format!("{c} = {cm}[{at}]; FM_READ;"));
                self.close_address(e);
            }
            StmtKind::Write(m, i, v) => {
                self.div_checks(&[i, v], WRITE, s.span);
                let at = self.address(i);
                let cm = self.bounds_check(WRITE, s.span, &m.name, &at, true);
                let val = self.expr(v);
                self.line(&format!("{cm}[{at}] = {val}; FM_WRITE;"));
                self.close_address(i);
            }
            StmtKind::If(c, a, b) => {
                let cc = self.c(&c.name);
                self.line(&format!("if ({cc} != 0) {{"));
                self.indent += 1;
                self.body(a)?;
                self.indent -= 1;
                if b.iter().any(|s| !matches!(s.kind, StmtKind::Skip)) {
                    self.line("} else {");
                    self.indent += 1;
                    self.body(b)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            StmtKind::Kernel(i, n, body) => {
                self.counted_loop(KERNEL, "kernel", i, n, body, s.span, true)?
            }
        }
        Ok(())
    }

    /// Checks that `at` is inside block `m`; the block's C name.
    fn bounds_check(
        &mut self,
        rule: &'static str,
        span: Span,
        m: &Name,
        at: &str,
        write: bool,
    ) -> String {
        let (cm, nm) = (self.c(m), self.size_of(m));
        let block = m.clone();
        let site = self.site(rule, span, SiteKind::Bounds { block, write });
        self.line(&format!(
            "if (!FM_IN({at}, {nm})) FM_FAIL({site}, {at}, {nm});"
        ));
        cm
    }

    /// The code of an address: the expression itself when it is an atom,
    /// else a temporary declared in a new C block (closed by
    /// [`Gen::close_address`]).
    fn address(&mut self, e: &SExp) -> String {
        match e {
            SExp::Atom(_) => self.expr(e),
            _ => {
                let v = self.expr(e);
                self.line("{");
                self.indent += 1;
                self.line(&format!("const long fm_at = {v};"));
                "fm_at".to_string()
            }
        }
    }

    fn close_address(&mut self, e: &SExp) {
        if !matches!(e, SExp::Atom(_)) {
            self.indent -= 1;
            self.line("}");
        }
    }

    fn expr(&mut self, e: &SExp) -> String {
        match e {
            SExp::Atom(Atom::Int(k, _)) => literal(*k),
            SExp::Atom(Atom::Const(c, _)) => literal(c.to_bits() as i64),
            SExp::Atom(Atom::Var(x)) => self.c(&x.name),
            SExp::Un(UnOp::Neg, e, _) => format!("fm_neg({})", self.expr(e)),
            SExp::Un(UnOp::Not, e, _) => format!("(long)!({})", self.expr(e)),
            SExp::Un(UnOp::Abs, e, _) => format!("abs({})", self.expr(e)),
            SExp::Un(_, e, _) => self.expr(e),
            SExp::Bin(op, l, r, _) => {
                let (a, b) = (self.expr(l), self.expr(r));
                match op {
                    BinOp::Add => format!("fm_add({a}, {b})"),
                    BinOp::Sub => format!("fm_sub({a}, {b})"),
                    BinOp::Mul => format!("fm_mul({a}, {b})"),
                    BinOp::Div => format!("fm_div({a}, {b})"),
                    BinOp::Rem => format!("fm_rem({a}, {b})"),
                    BinOp::Min => format!("min({a}, {b})"),
                    BinOp::Max => format!("max({a}, {b})"),
                    BinOp::Lt => format!("(long)({a} < {b})"),
                    BinOp::Le => format!("(long)({a} <= {b})"),
                    BinOp::Gt => format!("(long)({a} > {b})"),
                    BinOp::Ge => format!("(long)({a} >= {b})"),
                    BinOp::Eq => format!("(long)({a} == {b})"),
                    BinOp::Ne => format!("(long)({a} != {b})"),
                    BinOp::And => format!("(long)({a} != 0 && {b} != 0)"),
                    BinOp::Or => format!("(long)({a} != 0 || {b} != 0)"),
                }
            }
        }
    }
}

/// A `long` literal (`LONG_MIN` has no literal of its own in C).
fn literal(k: i64) -> String {
    if k == i64::MIN {
        "(-9223372036854775807L - 1)".to_string()
    } else if k < 0 {
        format!("({k}L)")
    } else {
        format!("{k}L")
    }
}

/// TRANSIENT(issue 19): the first construct the backend does not compile
/// yet.
fn transient_unsupported(p: &Program) -> Option<Span> {
    fn stmts(ss: &[Stmt]) -> Option<Span> {
        for s in ss {
            let bad = match &s.kind {
                StmtKind::Reduce(..) | StmtKind::Scan(..) => true,
                StmtKind::Var(_, ImpType::Prim(t)) | StmtKind::Alloc(_, _, t) => {
                    *t != funmem_lang::prim::Prim::I64
                }
                StmtKind::If(_, a, b) => {
                    if let Some(sp) = stmts(a).or_else(|| stmts(b)) {
                        return Some(sp);
                    }
                    false
                }
                StmtKind::Kernel(_, _, b) | StmtKind::For(_, _, b) | StmtKind::While(_, b) => {
                    if let Some(sp) = stmts(b) {
                        return Some(sp);
                    }
                    false
                }
                _ => false,
            };
            if bad {
                return Some(s.span);
            }
        }
        None
    }
    for q in &p.params {
        match q {
            Param::Scalar(_, t, sp) if *t != funmem_lang::prim::Prim::I64 => return Some(*sp),
            Param::Array(a) if a.elem != funmem_lang::prim::Prim::I64 => return Some(a.span),
            _ => {}
        }
    }
    stmts(&p.body)
}

fn print_sexp(e: &SExp) -> String {
    funmem_lang::print::sexp_string(e)
}

fn alloc_in_kernel(at: Span) -> Diagnostic {
    Diagnostic::new(
        Phase::Transform,
        at,
        "this allocation is inside a kernel, and OpenCL kernels cannot allocate: \
         run memory expansion first (--passes simplify,expand-gpu, the default for \
         OpenCL) or hoist the allocation by hand",
    )
}

/// Whether a kernel body has nested kernels or loops (which spend fuel).
fn has_loop(ss: &[Stmt]) -> bool {
    ss.iter().any(|s| match &s.kind {
        StmtKind::Kernel(..)
        | StmtKind::For(..)
        | StmtKind::While(..)
        | StmtKind::Reduce(..)
        | StmtKind::Scan(..) => true,
        StmtKind::If(_, a, b) => has_loop(a) || has_loop(b),
        StmtKind::Skip
        | StmtKind::Var(..)
        | StmtKind::Assign(..)
        | StmtKind::Alloc(..)
        | StmtKind::Read(..)
        | StmtKind::Write(..)
        | StmtKind::Assert(..) => false,
    })
}

impl Compiled {
    /// The kernels without the prelude (that every source starts with).
    pub fn kernels_source(&self) -> &str {
        self.source.strip_prefix(PRELUDE).unwrap_or(&self.source)
    }

    /// The prelude every generated source starts with.
    pub fn prelude() -> &'static str {
        PRELUDE
    }

    /// The whole translation as text: the host part as comments, then the
    /// OpenCL C source.
    pub fn print(&self) -> String {
        let mut s = String::new();
        s.push_str("// Host part (runs on the host; kernels are launched over 1-D ranges):\n");
        for q in &self.program.params {
            let _ = match q {
                Param::Scalar(x, _, _) => writeln!(s, "//   input {}", x.name),
                Param::Array(a) => writeln!(
                    s,
                    "//   input {} copied into block {}",
                    a.name.name, a.block.name
                ),
            };
        }
        for (st, dying) in self.host.iter().zip(&self.dying) {
            print_host(std::slice::from_ref(st), &self.kernels, 0, &mut s);
            if !dying.is_empty() {
                let names: Vec<&str> = dying.iter().map(|x| x.as_str()).collect();
                let _ = writeln!(
                    s,
                    "//  (last use of {}: blocks no longer held are freed)",
                    names.join(", ")
                );
            }
        }
        for r in &self.program.results {
            if let ImpResult::Array(a) = r {
                let _ = writeln!(
                    s,
                    "//   result {} read back from block {}",
                    a.name.name, a.block.name
                );
            }
        }
        s.push('\n');
        s.push_str(&self.source);
        s
    }
}

fn print_host(ss: &[HostStmt], ks: &[KernelInfo], depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth + 1);
    for s in ss {
        match s {
            HostStmt::Var(x, t) => {
                let _ = writeln!(out, "//{pad}var {x}: {}", t.name());
            }
            HostStmt::Assign(x, e, _) => {
                let _ = writeln!(out, "//{pad}{x} <- {}", print_sexp(e));
            }
            HostStmt::AssignMem(x, y) => {
                let _ = writeln!(out, "//{pad}{x} <- {y}");
            }
            HostStmt::Alloc(x, e, _) => {
                let _ = writeln!(
                    out,
                    "//{pad}{x} <- alloc {}   (device buffer)",
                    print_sexp(e)
                );
            }
            HostStmt::Read(x, m, e, _) => {
                let _ = writeln!(
                    out,
                    "//{pad}{x} <- {m}[{}]   (synchronous device-to-host transfer)",
                    print_sexp(e)
                );
            }
            HostStmt::Write(m, i, v, _) => {
                let _ = writeln!(
                    out,
                    "//{pad}{m}[{}] <- {}   (host-to-device transfer)",
                    print_sexp(i),
                    print_sexp(v)
                );
            }
            HostStmt::Assert(c, e, _) => {
                let _ = writeln!(out, "//{pad}assert {} {}", c.keyword(), print_sexp(e));
            }
            HostStmt::If(c, a, b) => {
                let _ = writeln!(out, "//{pad}if {c} then");
                print_host(a, ks, depth + 1, out);
                let _ = writeln!(out, "//{pad}else");
                print_host(b, ks, depth + 1, out);
                let _ = writeln!(out, "//{pad}fi");
            }
            HostStmt::For(i, n, b, _) => {
                let _ = writeln!(out, "//{pad}for {i} < {} do", print_sexp(n));
                print_host(b, ks, depth + 1, out);
                let _ = writeln!(out, "//{pad}done");
            }
            HostStmt::While(c, b, _) => {
                let _ = writeln!(out, "//{pad}while {c} do");
                print_host(b, ks, depth + 1, out);
                let _ = writeln!(out, "//{pad}done");
            }
            HostStmt::Launch(k) => {
                let ki = &ks[*k];
                let mut args: Vec<String> = ki.ints.iter().map(|x| x.to_string()).collect();
                args.extend(ki.mems.iter().map(|m| m.to_string()));
                let _ = writeln!(
                    out,
                    "//{pad}launch {}({}) over {} < {}",
                    ki.name,
                    args.join(", "),
                    ki.index,
                    print_sexp(&ki.bound)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::parse::parse_imp;

    fn source(text: &str) -> Compiled {
        compile(&parse_imp(text).unwrap()).unwrap()
    }

    #[test]
    fn top_level_kernels_become_kernels_and_nested_ones_loops() {
        let c = source(
            "def main (n: int) =
               var m: mem; m <- alloc n * n;
               kernel i < n do kernel j < n do m[i * n + j] <- i done done
             out (r: [n][n]int @ m -> R(n, n))",
        );
        assert_eq!(c.kernels.len(), 1);
        let k = &c.kernels[0];
        assert_eq!((k.ints.len(), k.mems.len(), k.loops), (1, 1, true));
        assert!(c.source.contains("__kernel void k0("), "{}", c.source);
        assert!(c
            .source
            .contains("for (long v_j = 0; v_j < v_j_iterations; v_j++)"));
        assert!(matches!(
            c.host[..],
            [HostStmt::Var(..), HostStmt::Alloc(..), HostStmt::Launch(0)]
        ));
        // Three checks: the nested bound, the fuel and the write.
        assert_eq!(c.sites.len(), 3);
    }

    #[test]
    fn names_that_are_c_words_are_renamed() {
        let c = source(
            "def main (long: int) (float: int) =
               var global: mem; global <- alloc long;
               kernel k' < long do global[k'] <- float done
             out (r: [long]int @ global -> R(long))",
        );
        for bad in ["long long,", "long float,", "*global,"] {
            assert!(!c.source.contains(bad), "{bad}: {}", c.source);
        }
        for good in ["long v_float,", "*v_global,", "const long v_k_ ="] {
            assert!(c.source.contains(good), "{good}: {}", c.source);
        }
    }

    #[test]
    fn literals_and_wrapping_operators() {
        assert_eq!(literal(i64::MIN), "(-9223372036854775807L - 1)");
        assert_eq!(literal(-3), "(-3L)");
        assert_eq!(literal(7), "7L");
        let c = source(
            "def main (n: int) =
               var m: mem; m <- alloc n;
               kernel i < n do m[i] <- (i * 2 - 1) / n % 3 done
             out (r: [n]int @ m -> R(n))",
        );
        assert!(
            c.source
                .contains("fm_rem(fm_div(fm_sub(fm_mul(v_i, 2L), 1L), v_n), 3L)"),
            "{}",
            c.source
        );
        // Both divisors are checked, innermost first.
        let d = c.source.find("if (v_n == 0)").unwrap();
        let r = c.source.find("if (3L == 0)").unwrap();
        assert!(d < r);
    }

    #[test]
    fn loops_in_kernels_are_c_loops_and_host_loops_stay_on_the_host() {
        let c = source(
            "def main (n: int) (t: int) =
               var a: mem; a <- alloc n;
               var go: int; go <- 1;
               for r < t do
                 kernel i < n do
                   var s: int; s <- 0;
                   for j < i do s <- s + j done;
                   while s do s <- s - 1 done;
                   a[i] <- s + r
                 done
               done;
               while go do var m: mem; m <- a; go <- 0 done;
               kernel i < n do a[i] <- i done
             out (r: [n]int @ a -> R(n))",
        );
        assert_eq!(c.kernels.len(), 2);
        let (k, l) = (&c.kernels[0], &c.kernels[1]);
        // The first is launched in a host loop and has loops inside.
        assert!(k.loops && k.repeated && !l.loops && !l.repeated);
        assert_eq!(k.ints.len(), 1, "{:?}", k.ints);
        for text in [
            "for (long v_j = 0; v_j < v_j_iterations; v_j++) {",
            "while (v_s != 0) {",
            "if (fm_err[0] != 0) return;",
        ] {
            assert!(c.source.contains(text), "{text}: {}", c.source);
        }
        assert_eq!(c.source.matches("fm_err[0] != 0").count(), 1);
        let [.., HostStmt::For(r, _, body, _), HostStmt::While(go, wbody, _), HostStmt::Launch(1)] =
            &c.host[..]
        else {
            panic!("{:?}", c.host)
        };
        assert_eq!((r.as_str(), go.as_str()), ("r", "go"));
        assert!(matches!(body[..], [HostStmt::Launch(0)]));
        assert!(matches!(
            wbody[..],
            [
                HostStmt::Var(..),
                HostStmt::AssignMem(..),
                HostStmt::Assign(..)
            ]
        ));
        // The loops' fuel sites name their rules.
        let rules: Vec<&str> = c
            .sites
            .iter()
            .filter(|s| matches!(s.what, SiteKind::Fuel))
            .map(|s| s.rule)
            .collect();
        assert_eq!(rules, ["E-IMP-FOR", "E-IMP-WHILE"]);
        // `a` is used by the loops and the last launch, then by the result:
        // it never dies before the end; `m`, declared in the loop, dies
        // after it.
        assert!(c.dying.iter().all(|d| !d.iter().any(|x| x.as_str() == "a")));
        let printed = c.print();
        for text in [
            "//  for r < t do\n//    launch k0",
            "//  while go do",
            "//  done",
        ] {
            assert!(printed.contains(text), "{text}: {printed}");
        }
    }

    #[test]
    fn allocations_in_kernels_are_refused() {
        let p =
            parse_imp("def main (n: int) = kernel i < n do var m: mem; m <- alloc 2 done out (n)")
                .unwrap();
        let d = compile(&p).unwrap_err();
        assert!(d.message.contains("memory expansion"), "{}", d.message);
    }
}
