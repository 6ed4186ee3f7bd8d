//! IMP to OpenCL C.
//!
//! A program splits in two. The *host part* is every statement outside a
//! kernel; it stays a small tree ([`HostStmt`]) that the driver runs on the
//! host. Each *top-level kernel* (a kernel not inside another kernel)
//! becomes an OpenCL kernel over a 1-D NDRange: work-item `i` runs
//! iteration `i`.
//!
//! A *perfect nest* shares that NDRange: when the kernel's body is some
//! statements that may run again in every inner iteration (scalar
//! declarations, assignments and reads into them, asserts: `repeatable`)
//! and then exactly one nested kernel whose bound is invariant in the
//! outer kernel, the pair is one launch of `n * m` work-items, work-item
//! `g` running `i = g / m`, `j = g % m`, the prefix again, then the inner
//! body; and so on inwards (`perfect_nest`). This is what makes a 2-D
//! map `n * m`-way parallel instead of `n`-way. Each flattened level is
//! written as a loop `for (j = fm_at; j < m; j += fm_step)` after the
//! prefix and the bound's own checks, exactly as the nested kernel it
//! replaces: the driver passes `fm_step = m` (one iteration per
//! work-item) or, where flattening would be wrong or too large (a bound
//! that is not positive, more work-items than 2^32 or the fuel left, a
//! prefix reading a block that the innermost body writes), `fm_step = 1`,
//! which is the loop form.
//! So one kernel serves both, and every error stays where it was.
//!
//! A kernel whose body is such a prefix (reading no block) and then two
//! or more nested kernels with invariant bounds is split into one launch
//! per nested kernel, in order, the prefix in each (`fission`): exact
//! because the outer iterations are independent (race freedom, eq. 4), and
//! each launch is then a perfect nest. This is the shape of a map whose
//! rows are built in a buffer and then copied out.
//!
//! A *device reduce* is the IMP of the migration pass's `reduce'` (the
//! thesis's reduce returning a one-element array): a host-level `kernel t
//! < 1` whose body is scalar `var`s, one `s <- reduce ...` and one write
//! `m[at] <- s` ([`device_reduce`] has the exact shape). A `reduce` in a
//! kernel would run sequentially in the one work-item; this one becomes
//! [`HostStmt::ReduceInto`], the parallel kernels of a host-level reduce
//! whose result the driver copies on the device into `m` at `at`, with no
//! synchronous read (docs/opencl.md, Device reduces).
//!
//! Other kernels nested inside become `for` loops in the work-item, which
//! is exact because IMP's iterations are independent (race freedom, eq.
//! 4). `if` becomes `if`; IMP's sequential `for` and
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
//! - nested kernels and loops (but not a work-item's own iteration of a
//!   flattened level, paid by the launch) spend a per-work-item fuel, one
//!   unit an iteration, so
//!   that no kernel runs forever (a `while` on the device cannot be
//!   stopped from the host): when it is spent, the work-item
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
use funmem_lang::imp::{
    Check, ImpOp, ImpType, Param, Program, Red, Result as ImpResult, Stmt, StmtKind,
};
use funmem_lang::prim::{Const, Prim};
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
    /// The host-level `reduce` and `scan` statements.
    pub reds: Vec<RedInfo>,
    /// Whether the source uses `double` (and so needs `cl_khr_fp64`).
    pub fp64: bool,
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
    /// Free scalar variables and their types, passed by value, in argument
    /// order.
    pub scalars: Vec<(Name, Prim)>,
    /// Free blocks, passed as buffer and size, in argument order.
    pub mems: Vec<Name>,
    /// The bounds of the kernels perfectly nested inside it, outermost
    /// first, which share its NDRange ([`Gen::kernel`]): each is invariant
    /// in the kernel, so the host evaluates it to size the launch. Empty
    /// when nothing is flattened.
    pub inner: Vec<SExp>,
    /// The blocks that the statements before the flattened kernels read,
    /// and those that the innermost body writes: when one block is in
    /// both, the driver launches the nest as loops (a read before the
    /// inner kernel must not see that kernel's writes).
    pub flat_reads: Vec<Name>,
    /// See [`KernelInfo::flat_reads`].
    pub flat_writes: Vec<Name>,
    /// Whether the innermost body has nested kernels or loops (and so
    /// spends fuel).
    pub loops: bool,
    /// Whether it is launched inside a host loop (and so returns at once
    /// after an earlier failure).
    pub repeated: bool,
    /// The IMP kernel statement.
    pub span: Span,
    /// For a stage of a parallel `reduce` or `scan`: the statement (an
    /// index of [`Compiled::reds`]) and the stage.
    pub stage: Option<(usize, Stage)>,
}

/// A stage of a parallel `reduce` or `scan` on the host level. Each kernel
/// takes `fm_n`, the fuel, the free scalars and blocks, then a buffer of
/// partial results, the error buffer and the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Over `G` work-groups of `FM_GROUP`: group `g` reduces its contiguous
    /// share of the `fm_n` elements into partial `g`.
    Groups,
    /// One work-group over the `fm_n = G` partials: a `reduce` combines them
    /// into partial `G`; a `scan` replaces them by their exclusive prefixes.
    Combine,
    /// (`scan`) Over the same `G` work-groups: each scans its share in
    /// tiles, starting from its exclusive prefix, and writes every prefix.
    Finish,
}

/// A `reduce` or `scan` statement run on the host level as parallel kernels.
#[derive(Clone, Debug)]
pub struct RedInfo {
    /// A `scan` (else a `reduce`).
    pub scan: bool,
    /// The element type.
    pub elem: Prim,
    /// The number of elements (evaluated on the host).
    pub count: SExp,
    /// The neutral element (evaluated on the host for an empty reduce).
    pub ne: SExp,
    /// Its kernels, in launch order (indexes of [`Compiled::kernels`]).
    pub kernels: Vec<usize>,
    /// The statement.
    pub span: Span,
    /// A *device reduce* ([`HostStmt::ReduceInto`]): the result stays on
    /// the device, copied into a block.
    pub device: bool,
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
    /// `m <- alloc se t`: a device buffer of se elements of type t.
    Alloc(Name, SExp, Prim, Span),
    /// `x <- m[se]`: a synchronous device-to-host transfer.
    Read(Name, Name, SExp, Span),
    /// `m[se] <- se`: a host-to-device transfer.
    Write(Name, SExp, SExp, Span),
    /// `if x then .. else ..`.
    If(Name, Vec<HostStmt>, Vec<HostStmt>),
    /// `x <- reduce ...` as parallel kernels ([`Compiled::reds`]); the
    /// result is one synchronous device-to-host read.
    Reduce(Name, usize),
    /// `scan ...` as parallel kernels ([`Compiled::reds`]).
    Scan(usize),
    /// A *device reduce*: the IMP of the migration pass's `reduce'`, `kernel
    /// index < 1 do var ..; x <- reduce ..; block[at] <- x done`
    /// ([`device_reduce`]), as parallel kernels ([`Compiled::reds`]) whose
    /// result is copied on the device into `block` at element `at`
    /// (evaluated on the host with `index` = 0): no synchronous read. An
    /// empty reduce's neutral element is written there by a non-blocking
    /// fill. The kernel's `var` declarations come before it as
    /// [`HostStmt::Var`]s; `span` is the write's.
    ReduceInto {
        /// The reduce (an index of [`Compiled::reds`]).
        red: usize,
        /// The kernel's index, 0 in its one iteration.
        index: Name,
        /// The block written.
        block: Name,
        /// The element written, in elements of the result's type.
        at: SExp,
        /// The write statement.
        span: Span,
    },
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
    /// A read or write of an element of `size` bytes of block `m` at an
    /// offset (value 1, in elements) outside the block (value 2, its bytes).
    Bounds { block: Name, write: bool, size: u64 },
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
            SiteKind::Bounds { block, write, size } => format!(
                "{} out of bounds in a kernel: offset {a} of block `{block}` of size {} ({b} bytes)",
                if *write { "write" } else { "read" },
                b / (*size).max(1) as i64
            ),
            SiteKind::DivByZero => format!("division by zero in a kernel: {a} / 0"),
            // The interpreter's words (E-IMP-KERNEL).
            SiteKind::NegativeBound => format!("negative kernel bound {a}"),
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
const REDUCE: &str = "E-IMP-REDUCE";
const SCAN: &str = "E-IMP-SCAN";

/// The prelude of every generated program: wrapping arithmetic, checks and
/// the optional access counters (built with `-D FM_COUNT`).
const PRELUDE: &str = r#"// Generated by funmem from IMP (funmem lower --to opencl).
// Integers are two's complement (i32 `int`, i64 `long`): + - * wrap, / and %
// truncate toward zero; floats are IEEE (`float`, `double`) with no
// contraction; bools are `uchar` 0 or 1. Blocks are bytes; every access is
// checked against the block's size; a failed check records its site in
// fm_err and ends the work-item.
#pragma OPENCL FP_CONTRACT OFF
#ifdef FM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef FM_GROUP
#define FM_GROUP 256
#endif
// The parallel reduce and scan, by element size in bytes (1, 4, 8):
// elements a work-item loads per step in the first stage (a builtin
// operator: 64 bytes in flight per work-item), and per tile in a scan's
// last stage (16 bytes: few registers, so that 8 groups of 256 fit on a
// compute unit). Measured on an H100; a build may set them with -D.
#ifndef FM_UNROLL_1
#define FM_UNROLL_1 16
#endif
#ifndef FM_UNROLL_4
#define FM_UNROLL_4 16
#endif
#ifndef FM_UNROLL_8
#define FM_UNROLL_8 8
#endif
#ifndef FM_SCAN_TILE_1
#define FM_SCAN_TILE_1 4
#endif
#ifndef FM_SCAN_TILE_4
#define FM_SCAN_TILE_4 4
#endif
#ifndef FM_SCAN_TILE_8
#define FM_SCAN_TILE_8 2
#endif
// A tile in local memory skips one slot every 32: a work-item's run of
// consecutive elements then starts in another bank than its neighbour's.
#define FM_PAD(x) ((x) + ((x) >> 5))

long fm_add(long a, long b) { return (long)((ulong)a + (ulong)b); }
long fm_sub(long a, long b) { return (long)((ulong)a - (ulong)b); }
long fm_mul(long a, long b) { return (long)((ulong)a * (ulong)b); }
long fm_neg(long a) { return (long)(0UL - (ulong)a); }
long fm_div(long a, long b) { return b == -1 ? fm_neg(a) : (b == 0 ? 0 : a / b); }
long fm_rem(long a, long b) { return (b == -1 || b == 0) ? 0 : a % b; }
int fm_add32(int a, int b) { return as_int((uint)a + (uint)b); }
int fm_sub32(int a, int b) { return as_int((uint)a - (uint)b); }
int fm_mul32(int a, int b) { return as_int((uint)a * (uint)b); }
int fm_neg32(int a) { return as_int(0U - (uint)a); }
int fm_div32(int a, int b) { return b == -1 ? fm_neg32(a) : (b == 0 ? 0 : a / b); }
int fm_rem32(int a, int b) { return (b == -1 || b == 0) ? 0 : a % b; }

// The first failing work-item records its site and two values.
void fm_fail(__global long *fm_err, int site, long a, long b) {
  if (atomic_cmpxchg((volatile __global int *)fm_err, 0, site) == 0) {
    fm_err[1] = a;
    fm_err[2] = b;
  }
}

// Zeroes the first `words` 8-byte words of a block (the driver rounds every
// block up to whole words), with 64-bit offsets: the driver zeroes each new
// block with it rather than clEnqueueFillBuffer, which stalls on NVIDIA's
// OpenCL for sizes from 2^31 bytes.
__kernel void fm_zero(__global ulong *m, long words) {
  for (long i = (long)get_global_id(0); i < words; i += (long)get_global_size(0)) m[i] = 0;
}

#define FM_FAIL(site, a, b) do { fm_fail(fm_err, (site), (a), (b)); return; } while (0)
#define FM_IN(a, n) ((ulong)(a) < (ulong)(n))
#define FM_AT(T, m, i) (((__global T *)(m))[i])

// Counters: accesses and bytes read, accesses and bytes written.
#define FM_COUNTERS long fm_rw[4] = {0, 0, 0, 0}
#ifdef FM_COUNT
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define FM_READ(s) (fm_rw[0]++, fm_rw[1] += (s))
#define FM_WRITE(s) (fm_rw[2]++, fm_rw[3] += (s))
#define FM_FLUSH(k) do { for (int fm_c = 0; fm_c < 4; fm_c++) atom_add(&fm_count[4 * (k) + fm_c], fm_rw[fm_c]); } while (0)
#else
#define FM_READ(s)
#define FM_WRITE(s)
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
        reds: Vec::new(),
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
    let dying = last_uses(&host, &g.kernels, &g.reds, p);
    let fp64 = g.out.contains("double");
    Ok(Compiled {
        source: g.out,
        kernels: g.kernels,
        host,
        dying,
        sites: g.sites,
        program: p.clone(),
        reds: g.reds,
        fp64,
    })
}

/// The `mem` variables a host statement uses and defines (an `if`: those
/// of its branches).
fn mem_uses_defs(
    s: &HostStmt,
    kernels: &[KernelInfo],
    reds: &[RedInfo],
    uses: &mut BTreeSet<Name>,
    defs: &mut BTreeSet<Name>,
) {
    match s {
        // A declaration holds no block yet.
        HostStmt::Alloc(x, _, _, _) => {
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
                mem_uses_defs(t, kernels, reds, uses, defs);
            }
        }
        HostStmt::For(_, _, b, _) | HostStmt::While(_, b, _) => {
            for t in b {
                mem_uses_defs(t, kernels, reds, uses, defs);
            }
        }
        HostStmt::Launch(k) => uses.extend(kernels[*k].mems.iter().cloned()),
        HostStmt::Reduce(_, r) | HostStmt::Scan(r) => {
            for k in &reds[*r].kernels {
                uses.extend(kernels[*k].mems.iter().cloned());
            }
        }
        HostStmt::ReduceInto { red, block, .. } => {
            for k in &reds[*red].kernels {
                uses.extend(kernels[*k].mems.iter().cloned());
            }
            uses.insert(block.clone());
        }
        HostStmt::Var(..) | HostStmt::Assign(..) | HostStmt::Assert(..) => {}
    }
}

/// Backward liveness over the host part's top level: after statement `j`,
/// the `mem` variables it touches that no later statement (nor a result)
/// uses. An `if` counts as one statement whose definitions may not happen,
/// so it kills nothing; so does a loop (its body may run no time, and what
/// an iteration uses may have been defined by the one before).
fn last_uses(
    host: &[HostStmt],
    kernels: &[KernelInfo],
    reds: &[RedInfo],
    p: &Program,
) -> Vec<Vec<Name>> {
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
        mem_uses_defs(s, kernels, reds, &mut uses, &mut defs);
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
            StmtKind::Reduce(_, r) | StmtKind::Scan(r, _, _) => {
                out.insert(r.index.name.clone());
                collect_names(&r.body, out);
                if let ImpOp::Lambda(a, b, body, _) = &r.op {
                    out.insert(a.name.clone());
                    out.insert(b.name.clone());
                    collect_names(body, out);
                }
            }
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
            StmtKind::Reduce(x, r) => {
                name(&x.name, bound, free);
                red_free(r, None, bound, free);
            }
            StmtKind::Scan(r, m, j) => {
                name(&m.name, bound, free);
                red_free(r, Some(j), bound, free);
            }
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

/// Free variables of a `reduce` or `scan` (with its index expression `j`):
/// the count, the neutral element, and the iteration's and the operator's
/// code, each in its own scope.
fn red_free(r: &Red, j: Option<&SExp>, bound: &HashSet<Name>, free: &mut BTreeSet<Name>) {
    let add = |e: &SExp, bound: &HashSet<Name>, free: &mut BTreeSet<Name>| {
        e.for_each_var(&mut |x| {
            if !bound.contains(&x.name) {
                free.insert(x.name.clone());
            }
        })
    };
    add(&r.count, bound, free);
    add(&r.ne, bound, free);
    let mut inner = bound.clone();
    inner.insert(r.index.name.clone());
    free_vars(&r.body, &mut inner, free);
    add(&r.elem, &inner, free);
    if let Some(j) = j {
        add(j, &inner, free);
    }
    if let ImpOp::Lambda(a, b, body, e) = &r.op {
        let mut inner = bound.clone();
        inner.insert(a.name.clone());
        inner.insert(b.name.clone());
        free_vars(body, &mut inner, free);
        add(e, &inner, free);
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
    reds: Vec<RedInfo>,
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
            // The migration pass's `reduce'`: a parallel reduce whose result
            // stays on the device; any other kernel is translated below.
            if let StmtKind::Kernel(i, n, body) = &s.kind {
                if let Some(d) = device_reduce(n, body).filter(|d| self.device_reduce_typed(i, d)) {
                    let h = self.reduce_into(&i.name, &d, &mut out)?;
                    out.push(h);
                    continue;
                }
            }
            let h = match &s.kind {
                StmtKind::Reduce(x, r) => {
                    HostStmt::Reduce(x.name.clone(), self.host_red(r, None, s.span)?)
                }
                StmtKind::Scan(r, m, j) => {
                    HostStmt::Scan(self.host_red(r, Some((m, j)), s.span)?)
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
                StmtKind::Alloc(x, e, t) => HostStmt::Alloc(x.name.clone(), e.clone(), *t, s.span),
                StmtKind::Read(x, m, e) => {
                    HostStmt::Read(x.name.clone(), m.name.clone(), e.clone(), s.span)
                }
                StmtKind::Write(m, i, v) => {
                    HostStmt::Write(m.name.clone(), i.clone(), v.clone(), s.span)
                }
                StmtKind::If(c, a, b) => HostStmt::If(c.name.clone(), self.host(a)?, self.host(b)?),
                StmtKind::Kernel(i, n, body) => match fission(&i.name, body) {
                    // One launch per inner kernel, in order; the later ones
                    // do nothing once an earlier one has failed.
                    Some((prefix, inner)) => {
                        let mut last = 0;
                        for (p, k) in inner.iter().enumerate() {
                            if p > 0 {
                                out.push(HostStmt::Launch(last));
                            }
                            let piece: Vec<Stmt> =
                                prefix.iter().chain([k]).map(|s| (*s).clone()).collect();
                            last = self.kernel(&i.name, n, &piece, s.span, p > 0)?;
                        }
                        HostStmt::Launch(last)
                    }
                    None => HostStmt::Launch(self.kernel(&i.name, n, body, s.span, false)?),
                },
            };
            out.push(h);
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
        after_another: bool,
    ) -> Result<usize, Diagnostic> {
        let k = self.kernels.len();
        let mut bound_names = HashSet::from([index.clone()]);
        let mut free = BTreeSet::new();
        free_vars(body, &mut bound_names, &mut free);
        let (scalars, mems) = self.split_free(free);
        let (levels, innermost) = perfect_nest(index, body);
        let mut flat_reads = BTreeSet::new();
        for l in &levels {
            for s in l.prefix {
                if let StmtKind::Read(_, m, _) = &s.kind {
                    flat_reads.insert(m.name.clone());
                }
            }
        }
        let mut flat_writes = BTreeSet::new();
        written(innermost, &mut flat_writes);
        // A prefix's read against a write through a block of the kernel's
        // own (which may alias anything): keep the nest as loops.
        let levels = if !flat_reads.is_empty() && flat_writes.iter().any(|m| !mems.contains(m)) {
            Vec::new()
        } else {
            levels
        };
        let innermost = if levels.is_empty() { body } else { innermost };
        if levels.is_empty() {
            flat_reads.clear();
            flat_writes.clear();
        }
        let loops = !levels.is_empty() || has_loop(innermost);
        let repeated = self.host_loops > 0 || after_another;
        let name = format!("{}k{k}", self.prefix);
        let mut args = vec!["long fm_iterations".to_string()];
        for l in 0..levels.len() {
            args.push(format!("long fm_step{l}"));
        }
        if loops {
            args.push("long fm_fuel".to_string());
        }
        args.extend(self.free_params(&scalars, &mems));
        args.push("__global long *fm_err".to_string());
        args.push("__global long *fm_count".to_string());
        let i = self.c(index);
        self.out.push('\n');
        let _ = writeln!(self.out, "// kernel {} < {}", index, print_sexp(bound));
        let _ = writeln!(self.out, "__kernel void {name}({}) {{", args.join(", "));
        self.indent = 1;
        self.types.insert(index.clone(), ImpType::INT);
        if levels.is_empty() {
            self.line(&format!("const long {i} = (long)get_global_id(0);"));
        } else {
            // Work-item g stands for (i, a0, a1, ...) with g = ((i * step0
            // + a0) * step1 + a1) ...: the innermost level varies fastest,
            // so neighbouring work-items touch neighbouring elements.
            self.line("long fm_g = (long)get_global_id(0);");
            for l in (0..levels.len()).rev() {
                self.line(&format!(
                    "const long fm_at{l} = fm_g % fm_step{l}; fm_g /= fm_step{l};"
                ));
            }
            self.line(&format!("const long {i} = fm_g;"));
        }
        self.line(&format!("if ({i} >= fm_iterations) return;"));
        if repeated {
            // Launched in a host loop: nothing to do once the run has failed.
            self.line("if (fm_err[0] != 0) return;");
        }
        self.line("FM_COUNTERS;");
        self.flat_levels(&levels, 0, innermost)?;
        self.line(&format!("FM_FLUSH({k});"));
        self.indent = 0;
        self.out.push_str("}\n");
        self.kernels.push(KernelInfo {
            name,
            index: index.clone(),
            bound: bound.clone(),
            inner: levels.iter().map(|l| l.bound.clone()).collect(),
            flat_reads: flat_reads.into_iter().collect(),
            flat_writes: flat_writes.into_iter().collect(),
            scalars,
            mems,
            loops,
            repeated,
            span,
            stage: None,
        });
        Ok(k)
    }

    /// The flattened levels of a perfect nest, then its innermost body.
    /// Level `l` runs its prefix, evaluates its bound and checks it as a
    /// nested kernel does, then runs the iterations `fm_at{l}`,
    /// `fm_at{l} + fm_step{l}`, ... below the bound. The host picks each
    /// step: the bound itself (one iteration per work-item: the level is
    /// parallel), or 1 (a loop, as an unflattened nested kernel) when the
    /// bound is not positive or the launch would be too large. A work-item's
    /// first iteration of a level spends no fuel (the launch paid for it,
    /// one unit a work-item); its further ones, in the loop form, do.
    fn flat_levels(
        &mut self,
        levels: &[Level],
        l: usize,
        innermost: &[Stmt],
    ) -> Result<(), Diagnostic> {
        let Some(level) = levels.get(l) else {
            return self.body(innermost);
        };
        self.body(level.prefix)?;
        let (i, n, span) = (level.index, level.bound, level.span);
        self.div_checks(&[n], KERNEL, span);
        let ci = self.c(&i.name);
        let cn = self.names.fresh(&format!("{ci}_iterations"));
        let bound = self.expr(n);
        let neg = self.site(KERNEL, span, SiteKind::NegativeBound);
        let fuel = self.site(KERNEL, span, SiteKind::Fuel);
        self.types.insert(i.name.clone(), ImpType::INT);
        self.line(&format!(
            "// kernel {} < {} (flattened)",
            i.name,
            print_sexp(n)
        ));
        self.line("{");
        self.indent += 1;
        self.line(&format!("const long {cn} = {bound};"));
        self.line(&format!("if ({cn} < 0) FM_FAIL({neg}, {cn}, 0);"));
        self.line(&format!(
            "for (long {ci} = fm_at{l}; {ci} < {cn}; {ci} += fm_step{l}) {{"
        ));
        self.indent += 1;
        // The first iteration is the work-item's own, which the launch
        // paid for; any further one (a level run as a loop) spends fuel.
        self.line(&format!(
            "if ({ci} != fm_at{l} && --fm_fuel < 0) FM_FAIL({fuel}, 0, 0);"
        ));
        self.flat_levels(levels, l + 1, innermost)?;
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        Ok(())
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
            if !self.ty(&l).is_int() {
                // Floats divide by zero into an infinity or a NaN.
                continue;
            }
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
        self.types.insert(i.name.clone(), ImpType::INT);
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
            StmtKind::Reduce(x, r) => self.seq_red(Some(&x.name), r, None, s.span)?,
            StmtKind::Scan(r, m, j) => self.seq_red(None, r, Some((&m.name, j)), s.span)?,
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
            StmtKind::Var(x, ImpType::Prim(t)) => {
                self.types.insert(x.name.clone(), ImpType::Prim(*t));
                let c = self.c(&x.name);
                self.line(&format!("{} {c} = 0;", ctype(*t)));
            }
            StmtKind::Var(x, ImpType::Mem) => {
                self.types.insert(x.name.clone(), ImpType::Mem);
                let (c, n) = (self.c(&x.name), self.size_of(&x.name));
                self.line(&format!("__global uchar *{c} = 0;"));
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
                let t = match self.types.get(&x.name) {
                    Some(ImpType::Prim(t)) => *t,
                    _ => Prim::I64,
                };
                let cm = self.bounds_check(READ, s.span, &m.name, &at, false, t);
                let c = self.c(&x.name);
                let v = load(t, &cm, &at);
                self.line(&format!("{c} = {v}; FM_READ({});", t.size()));
                self.close_address(e);
            }
            StmtKind::Write(m, i, v) => {
                self.div_checks(&[i, v], WRITE, s.span);
                let at = self.address(i);
                let t = self.ty(v);
                let cm = self.bounds_check(WRITE, s.span, &m.name, &at, true, t);
                let val = self.expr(v);
                self.line(&format!(
                    "FM_AT({}, {cm}, {at}) = {val}; FM_WRITE({});",
                    ctype(t),
                    t.size()
                ));
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
        t: Prim,
    ) -> String {
        let (cm, nm) = (self.c(m), self.size_of(m));
        let block = m.clone();
        let size = t.size();
        let site = self.site(rule, span, SiteKind::Bounds { block, write, size });
        // Element `at` of size s is inside a block of n bytes when
        // 0 <= at < n / s.
        self.line(&format!(
            "if (!FM_IN({at}, {nm} / {size})) FM_FAIL({site}, {at}, {nm});"
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

    /// The element type of a scalar expression (the program is typed;
    /// an unknown variable counts as `i64`).
    fn ty(&self, e: &SExp) -> Prim {
        let types = &self.types;
        funmem_lang::check::sexp_type(e, &|x| {
            Ok(match types.get(&x.name) {
                Some(ImpType::Prim(p)) => *p,
                _ => Prim::I64,
            })
        })
        .unwrap_or(Prim::I64)
    }

    fn expr(&mut self, e: &SExp) -> String {
        match e {
            SExp::Atom(Atom::Int(k, _)) => literal(*k),
            SExp::Atom(Atom::Const(c, _)) => const_literal(*c),
            SExp::Atom(Atom::Var(x)) => self.c(&x.name),
            SExp::Un(op, a, _) => {
                let t = self.ty(a);
                let v = self.expr(a);
                unop_code(*op, t, &v)
            }
            SExp::Bin(op, l, r, _) => {
                let t = self.ty(l);
                let (a, b) = (self.expr(l), self.expr(r));
                binop_code(*op, t, &a, &b)
            }
        }
    }
}

/// The operator of a host-level `reduce` or `scan` as C: a builtin
/// operator inline, a lambda as the function `op_fn` called with the
/// context arguments `ctx` first.
struct Combine<'a> {
    red: &'a Red,
    t: Prim,
    op_fn: &'a str,
    ctx: &'a str,
}

impl Combine<'_> {
    /// The C statement `dst = a op b`.
    fn code(&self, dst: &str, a: &str, b: &str) -> String {
        match &self.red.op {
            ImpOp::Bin(op) => format!("{dst} = {};", binop_code(*op, self.t, a, b)),
            ImpOp::Lambda(..) => format!(
                "{{ {} fm_o = {a}; {}({}, {a}, {b}, &fm_o); {dst} = fm_o; }}",
                ctype(self.t),
                self.op_fn,
                self.ctx
            ),
        }
    }
}

/// `reduce` and `scan`: sequential in a work-item, parallel kernels on the
/// host level.
impl Gen {
    /// Free variables split into typed scalars and blocks.
    fn split_free(&self, free: BTreeSet<Name>) -> (Vec<(Name, Prim)>, Vec<Name>) {
        let (mut scalars, mut mems) = (Vec::new(), Vec::new());
        for x in free {
            match self.types.get(&x) {
                Some(ImpType::Mem) => mems.push(x),
                Some(ImpType::Prim(t)) => scalars.push((x, *t)),
                None => scalars.push((x, Prim::I64)),
            }
        }
        (scalars, mems)
    }

    /// C parameters for free scalars and blocks (a block is its bytes and
    /// its size in bytes).
    fn free_params(&mut self, scalars: &[(Name, Prim)], mems: &[Name]) -> Vec<String> {
        let mut args = Vec::new();
        for (x, t) in scalars {
            args.push(format!("{} {}", ctype(*t), self.c(x)));
        }
        for m in mems {
            let (c, n) = (self.c(m), self.size_of(m));
            args.push(format!("__global uchar *{c}"));
            args.push(format!("long {n}"));
        }
        args
    }

    fn free_args(&mut self, scalars: &[(Name, Prim)], mems: &[Name]) -> Vec<String> {
        let mut args = Vec::new();
        for (x, _) in scalars {
            args.push(self.c(x));
        }
        for m in mems {
            args.push(self.c(m));
            args.push(self.size_of(m));
        }
        args
    }

    /// A `reduce` (result in `x`) or `scan` (into block `m` at `j`) inside a
    /// work-item: a C loop over the iterations in order, each spending fuel
    /// (E-IMP-REDUCE, E-IMP-SCAN).
    fn seq_red(
        &mut self,
        x: Option<&Name>,
        r: &Red,
        target: Option<(&Name, &SExp)>,
        span: Span,
    ) -> Result<(), Diagnostic> {
        let rule = if target.is_some() { SCAN } else { REDUCE };
        let t = self.ty(&r.ne);
        let ct = ctype(t);
        self.div_checks(&[&r.count, &r.ne], rule, span);
        let acc = self.names.fresh("fm_acc");
        let cn = self.names.fresh("fm_count");
        let ci = self.c(&r.index.name);
        let (count, ne) = (self.expr(&r.count), self.expr(&r.ne));
        let fuel = self.site(rule, span, SiteKind::Fuel);
        self.line(&format!(
            "// {} over {} < {}",
            if target.is_some() { "scan" } else { "reduce" },
            r.index.name,
            print_sexp(&r.count)
        ));
        self.line("{");
        self.indent += 1;
        self.line(&format!("{ct} {acc} = {ne};"));
        self.line(&format!("const long {cn} = {count};"));
        self.line(&format!("for (long {ci} = 0; {ci} < {cn}; {ci}++) {{"));
        self.indent += 1;
        self.types.insert(r.index.name.clone(), ImpType::INT);
        self.line(&format!("if (--fm_fuel < 0) FM_FAIL({fuel}, 0, 0);"));
        self.body(&r.body)?;
        self.div_checks(&[&r.elem], rule, span);
        let e = self.expr(&r.elem);
        match &r.op {
            ImpOp::Bin(op) => {
                let v = binop_code(*op, t, &acc, &format!("({e})"));
                self.line(&format!("{acc} = {v};"));
            }
            ImpOp::Lambda(a, b, body, res) => {
                self.line("{");
                self.indent += 1;
                self.line(&format!("const {ct} fm_e = {e};"));
                self.types.insert(a.name.clone(), ImpType::Prim(t));
                self.types.insert(b.name.clone(), ImpType::Prim(t));
                let (ca, cb) = (self.c(&a.name), self.c(&b.name));
                self.line(&format!("{ct} {ca} = {acc};"));
                self.line(&format!("{ct} {cb} = fm_e;"));
                self.body(body)?;
                self.div_checks(&[res], rule, span);
                let v = self.expr(res);
                self.line(&format!("{acc} = {v};"));
                self.indent -= 1;
                self.line("}");
            }
        }
        if let Some((m, j)) = target {
            self.div_checks(&[j], rule, span);
            let at = self.address(j);
            let cm = self.bounds_check(WRITE, span, m, &at, true, t);
            self.line(&format!(
                "FM_AT({ct}, {cm}, {at}) = {acc}; FM_WRITE({});",
                t.size()
            ));
            self.close_address(j);
        }
        self.indent -= 1;
        self.line("}");
        if let Some(x) = x {
            let cx = self.c(x);
            self.line(&format!("{cx} = {acc};"));
        }
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A host-level `reduce` or `scan` (into block `m` at `j`): the element
    /// function, the operator's function, and the kernels of its stages.
    fn host_red(
        &mut self,
        r: &Red,
        target: Option<(&funmem_lang::ast::Ident, &SExp)>,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let scan = target.is_some();
        let rule = if scan { SCAN } else { REDUCE };
        let t = self.ty(&r.ne);
        let ct = ctype(t);
        let size = t.size();
        let id = self.reds.len();
        let mut free = BTreeSet::new();
        red_free(r, target.map(|(_, j)| j), &HashSet::new(), &mut free);
        if let Some((m, _)) = target {
            free.insert(m.name.clone());
        }
        let (scalars, mems) = self.split_free(free);
        let mut params = vec!["long fm_fuel".to_string()];
        params.extend(self.free_params(&scalars, &mems));
        params.push("__global long *fm_err".to_string());
        params.push("long *fm_rw".to_string());
        let params = params.join(", ");
        let mut args = vec!["fm_fuel".to_string()];
        args.extend(self.free_args(&scalars, &mems));
        args.push("fm_err".to_string());
        args.push("fm_rw".to_string());
        let ctx = args.join(", ");
        let base = format!("{}r{id}", self.prefix);
        let elem_fn = format!("fm_{base}_elem");
        let op_fn = format!("fm_{base}_op");
        // The element of iteration i (and, for a scan, where it goes).
        self.out.push('\n');
        let _ = writeln!(
            self.out,
            "// the elements of the {} over {} < {}",
            if scan { "scan" } else { "reduce" },
            r.index.name,
            print_sexp(&r.count)
        );
        let ci = self.c(&r.index.name);
        self.types.insert(r.index.name.clone(), ImpType::INT);
        let _ = writeln!(
            self.out,
            "void {elem_fn}({params}, long {ci}, {ct} *fm_e, long *fm_j) {{"
        );
        self.indent = 1;
        self.body(&r.body)?;
        self.div_checks(&[&r.elem], rule, span);
        let e = self.expr(&r.elem);
        self.line(&format!("*fm_e = {e};"));
        if let Some((_, j)) = target {
            self.div_checks(&[j], rule, span);
            let jv = self.expr(j);
            self.line(&format!("*fm_j = {jv};"));
        }
        self.indent = 0;
        self.out.push_str("}\n");
        if let ImpOp::Lambda(a, b, body, res) = &r.op {
            self.types.insert(a.name.clone(), ImpType::Prim(t));
            self.types.insert(b.name.clone(), ImpType::Prim(t));
            let (ca, cb) = (self.c(&a.name), self.c(&b.name));
            let _ = writeln!(
                self.out,
                "void {op_fn}({params}, {ct} {ca}, {ct} {cb}, {ct} *fm_o) {{"
            );
            self.indent = 1;
            self.body(body)?;
            self.div_checks(&[res], rule, span);
            let v = self.expr(res);
            self.line(&format!("*fm_o = {v};"));
            self.indent = 0;
            self.out.push_str("}\n");
        }
        // Builtin operators are commutative: a work-item may take every
        // FM_GROUP-th element (coalesced reads). A lambda is only
        // associative: each work-item takes a contiguous run, and runs are
        // combined in order.
        let commutative = matches!(r.op, ImpOp::Bin(_));
        let stages: &[Stage] = if scan {
            &[Stage::Groups, Stage::Combine, Stage::Finish]
        } else {
            &[Stage::Groups, Stage::Combine]
        };
        let mut kernels = Vec::new();
        for &stage in stages {
            let k = self.kernels.len();
            let name = format!("{}k{k}", self.prefix);
            let mut kp = vec!["long fm_n".to_string(), "long fm_fuel".to_string()];
            kp.extend(self.free_params(&scalars, &mems));
            kp.push("__global uchar *fm_part".to_string());
            kp.push("__global long *fm_err".to_string());
            kp.push("__global long *fm_count".to_string());
            self.out.push('\n');
            let _ = writeln!(
                self.out,
                "// {stage:?} stage of the {}",
                if scan { "scan" } else { "reduce" }
            );
            let _ = writeln!(
                self.out,
                "__kernel __attribute__((reqd_work_group_size(FM_GROUP, 1, 1)))\nvoid {name}({}) {{",
                kp.join(", ")
            );
            self.indent = 1;
            self.line(&format!("__local {ct} fm_lm[FM_GROUP];"));
            self.line("FM_COUNTERS;");
            self.line("const int fm_l = (int)get_local_id(0);");
            self.line("const long fm_g = (long)get_group_id(0), fm_ng = (long)get_num_groups(0);");
            self.div_checks(&[&r.ne], rule, span);
            let ne = self.expr(&r.ne);
            self.line(&format!("const {ct} fm_ne = {ne};"));
            let comb = Combine {
                red: r,
                t,
                op_fn: &op_fn,
                ctx: &ctx,
            };
            match stage {
                Stage::Groups | Stage::Finish => {
                    self.line("const long fm_chunk = (fm_n + fm_ng - 1) / fm_ng;");
                    self.line("const long fm_lo = min(fm_g * fm_chunk, fm_n), fm_hi = min(fm_lo + fm_chunk, fm_n);");
                }
                Stage::Combine => {
                    self.line("const long fm_lo = 0, fm_hi = fm_n;");
                }
            }
            let elem_of = |i: &str| -> String {
                match stage {
                    Stage::Combine => format!("fm_e = FM_AT({ct}, fm_part, {i});"),
                    _ => format!("{elem_fn}({ctx}, {i}, &fm_e, &fm_j);"),
                }
            };
            if stage == Stage::Finish {
                let site = self.site(
                    WRITE,
                    span,
                    SiteKind::Bounds {
                        block: target
                            .map(|(m, _)| m.name.clone())
                            .unwrap_or_else(|| Name::from("?")),
                        write: true,
                        size,
                    },
                );
                let (cm, nm) = match target {
                    Some((m, _)) => (self.c(&m.name), self.size_of(&m.name)),
                    None => ("fm_part".to_string(), "0".to_string()),
                };
                // A tile of FM_SCAN_TILE_<size> elements per work-item: the
                // group computes the elements in coalesced order into local
                // memory, each work-item scans its contiguous run in
                // registers (in index order), the group scans the runs'
                // totals, and the prefixes go out in coalesced order. The
                // write addresses stay in the work-item that computed them.
                let tile = format!("FM_SCAN_TILE_{size}");
                self.line(&format!("__local {ct} fm_te[FM_PAD({tile} * FM_GROUP)];"));
                self.line(&format!("{ct} fm_carry = FM_AT({ct}, fm_part, fm_g);"));
                self.line(&format!(
                    "for (long fm_base = fm_lo; fm_base < fm_hi; fm_base += {tile} * FM_GROUP) {{"
                ));
                self.indent += 1;
                self.line(&format!("long fm_tj[{tile}];"));
                self.line(&format!("{ct} fm_tv[{tile}];"));
                self.line("#pragma unroll");
                self.line(&format!("for (int fm_k = 0; fm_k < {tile}; fm_k++) {{"));
                self.line("  const long fm_i = fm_base + fm_k * FM_GROUP + fm_l;");
                self.line(&format!("  {ct} fm_e = fm_ne; long fm_j = 0;"));
                let el = elem_of("fm_i");
                self.line(&format!("  if (fm_i < fm_hi) {el}"));
                self.line("  fm_te[FM_PAD(fm_k * FM_GROUP + fm_l)] = fm_e; fm_tj[fm_k] = fm_j;");
                self.line("}");
                self.line("barrier(CLK_LOCAL_MEM_FENCE);");
                self.line(&format!("{ct} fm_acc = fm_ne;"));
                self.line("#pragma unroll");
                self.line(&format!("for (int fm_k = 0; fm_k < {tile}; fm_k++) {{"));
                let c = comb.code(
                    "fm_acc",
                    "fm_acc",
                    &format!("fm_te[FM_PAD(fm_l * {tile} + fm_k)]"),
                );
                self.line(&format!("  {c}"));
                self.line("  fm_tv[fm_k] = fm_acc;");
                self.line("}");
                self.local_scan(ct, &comb);
                self.line(&format!("{ct} fm_pre = fm_carry;"));
                let c = comb.code("fm_pre", "fm_carry", "fm_lm[fm_l - 1]");
                self.line(&format!("if (fm_l > 0) {c}"));
                self.line("#pragma unroll");
                self.line(&format!("for (int fm_k = 0; fm_k < {tile}; fm_k++) {{"));
                let c = comb.code(
                    &format!("fm_te[FM_PAD(fm_l * {tile} + fm_k)]"),
                    "fm_pre",
                    "fm_tv[fm_k]",
                );
                self.line(&format!("  {c}"));
                self.line("}");
                self.line(&format!("{ct} fm_total = fm_carry;"));
                let c = comb.code("fm_total", "fm_carry", "fm_lm[FM_GROUP - 1]");
                self.line(&c);
                self.line("barrier(CLK_LOCAL_MEM_FENCE);");
                self.line("#pragma unroll");
                self.line(&format!("for (int fm_k = 0; fm_k < {tile}; fm_k++) {{"));
                self.line("  const long fm_i = fm_base + fm_k * FM_GROUP + fm_l;");
                self.line("  const long fm_at = fm_tj[fm_k];");
                self.line(&format!(
                    "  if (fm_i < fm_hi) {{ if (FM_IN(fm_at, {nm} / {size})) {{ FM_AT({ct}, {cm}, fm_at) = fm_te[FM_PAD(fm_k * FM_GROUP + fm_l)]; FM_WRITE({size}); }} else fm_fail(fm_err, {site}, fm_at, {nm}); }}"
                ));
                self.line("}");
                self.line("fm_carry = fm_total;");
                self.line("barrier(CLK_LOCAL_MEM_FENCE);");
                self.indent -= 1;
                self.line("}");
            } else {
                // Each work-item's share, then the group's in order.
                self.line(&format!("{ct} fm_acc = fm_ne;"));
                let el = elem_of("fm_i");
                let c = comb.code("fm_acc", "fm_acc", "fm_e");
                if commutative && stage == Stage::Groups {
                    // FM_UNROLL_<size> elements a step, each into its own
                    // accumulator, so that their loads are in flight
                    // together and no one addition waits for another; the
                    // accumulators are combined as a tree at the end.
                    let u = format!("FM_UNROLL_{size}");
                    self.line(&format!("{ct} fm_a[{u}];"));
                    self.line("#pragma unroll");
                    self.line(&format!(
                        "for (int fm_u = 0; fm_u < {u}; fm_u++) fm_a[fm_u] = fm_ne;"
                    ));
                    self.line("long fm_i = fm_lo + fm_l;");
                    self.line(&format!(
                        "for (; fm_i + ({u} - 1) * FM_GROUP < fm_hi; fm_i += {u} * FM_GROUP) {{"
                    ));
                    self.line("  long fm_j = 0;");
                    self.line(&format!("  {ct} fm_es[{u}];"));
                    self.line("  #pragma unroll");
                    self.line(&format!("  for (int fm_u = 0; fm_u < {u}; fm_u++) {{"));
                    let el = elem_of("fm_i + fm_u * FM_GROUP").replace("&fm_e,", "&fm_es[fm_u],");
                    self.line(&format!("    fm_es[fm_u] = fm_ne; {el}"));
                    self.line("  }");
                    self.line("  #pragma unroll");
                    self.line(&format!("  for (int fm_u = 0; fm_u < {u}; fm_u++) {{"));
                    let c = comb.code("fm_a[fm_u]", "fm_a[fm_u]", "fm_es[fm_u]");
                    self.line(&format!("    {c}"));
                    self.line("  }");
                    self.line("}");
                    self.line("#pragma unroll");
                    self.line(&format!("for (int fm_s = 1; fm_s < {u}; fm_s <<= 1) {{"));
                    self.line("  #pragma unroll");
                    self.line(&format!(
                        "  for (int fm_u = 0; fm_u + fm_s < {u}; fm_u += 2 * fm_s) {{"
                    ));
                    let c = comb.code("fm_a[fm_u]", "fm_a[fm_u]", "fm_a[fm_u + fm_s]");
                    self.line(&format!("    {c}"));
                    self.line("  }");
                    self.line("}");
                    self.line("fm_acc = fm_a[0];");
                    self.line("for (; fm_i < fm_hi; fm_i += FM_GROUP) {");
                } else {
                    self.line("const long fm_cs = (fm_hi - fm_lo + FM_GROUP - 1) / FM_GROUP;");
                    self.line("const long fm_a = min(fm_lo + fm_l * fm_cs, fm_hi), fm_b = min(fm_a + fm_cs, fm_hi);");
                    self.line("for (long fm_i = fm_a; fm_i < fm_b; fm_i++) {");
                }
                self.line(&format!("  {ct} fm_e = fm_ne; long fm_j = 0;"));
                self.line(&format!("  {el}"));
                self.line(&format!("  {c}"));
                self.line("}");
                if stage == Stage::Combine && scan {
                    // Exclusive prefixes of the partials, in place.
                    self.local_scan(ct, &comb);
                    self.line(&format!("{ct} fm_pre = fm_ne;"));
                    self.line("if (fm_l > 0) fm_pre = fm_lm[fm_l - 1];");
                    self.line("for (long fm_i = fm_a; fm_i < fm_b; fm_i++) {");
                    self.line(&format!("  const {ct} fm_v = FM_AT({ct}, fm_part, fm_i);"));
                    self.line(
                        "  FM_AT(T, fm_part, fm_i) = fm_pre;"
                            .replace("(T,", &format!("({ct},"))
                            .as_str(),
                    );
                    let c = comb.code("fm_pre", "fm_pre", "fm_v");
                    self.line(&format!("  {c}"));
                    self.line("}");
                } else {
                    self.line("fm_lm[fm_l] = fm_acc;");
                    self.line("barrier(CLK_LOCAL_MEM_FENCE);");
                    self.line("for (int fm_s = 1; fm_s < FM_GROUP; fm_s <<= 1) {");
                    self.line("  if ((fm_l & (2 * fm_s - 1)) == 0) {");
                    let c = comb.code("fm_lm[fm_l]", "fm_lm[fm_l]", "fm_lm[fm_l + fm_s]");
                    self.line(&format!("    {c}"));
                    self.line("  }");
                    self.line("  barrier(CLK_LOCAL_MEM_FENCE);");
                    self.line("}");
                    let slot = if stage == Stage::Groups {
                        "fm_g"
                    } else {
                        "fm_n"
                    };
                    self.line(&format!(
                        "if (fm_l == 0) FM_AT({ct}, fm_part, {slot}) = fm_lm[0];"
                    ));
                }
            }
            self.line(&format!("FM_FLUSH({k});"));
            self.indent = 0;
            self.out.push_str("}\n");
            self.kernels.push(KernelInfo {
                name,
                index: r.index.name.clone(),
                bound: r.count.clone(),
                inner: Vec::new(),
                flat_reads: Vec::new(),
                flat_writes: Vec::new(),
                scalars: scalars.clone(),
                mems: mems.clone(),
                loops: true,
                repeated: self.host_loops > 0,
                span,
                stage: Some((id, stage)),
            });
            kernels.push(k);
        }
        self.reds.push(RedInfo {
            scan,
            elem: t,
            count: r.count.clone(),
            ne: r.ne.clone(),
            kernels,
            span,
            device: false,
        });
        Ok(id)
    }

    /// Whether a [`device_reduce`] shape in kernel `index` is typed as it
    /// must be for [`Gen::reduce_into`]: the written block is a `mem`, and
    /// the result's declared type is the reduce's (the body's declarations
    /// and the index are typed first, as the kernel's translation would).
    fn device_reduce_typed(&mut self, index: &funmem_lang::ast::Ident, d: &DeviceReduce) -> bool {
        self.types.insert(index.name.clone(), ImpType::INT);
        for (x, t) in &d.vars {
            self.types.insert((*x).clone(), ImpType::Prim(*t));
        }
        self.types.get(d.block) == Some(&ImpType::Mem)
            && self.types.get(d.result) == Some(&ImpType::Prim(self.ty(&d.red.ne)))
    }

    /// A device reduce ([`HostStmt::ReduceInto`]): the kernel's `var`
    /// declarations go on the host (pushed onto `out`; the reduce may read
    /// them, and they are 0 there as in the kernel), then the reduce's
    /// parallel kernels, as a host-level reduce's.
    fn reduce_into(
        &mut self,
        index: &Name,
        d: &DeviceReduce,
        out: &mut Vec<HostStmt>,
    ) -> Result<HostStmt, Diagnostic> {
        for (x, t) in &d.vars {
            out.push(HostStmt::Var((*x).clone(), ImpType::Prim(*t)));
        }
        let red = self.host_red(d.red, None, d.red_span)?;
        if let Some(r) = self.reds.get_mut(red) {
            r.device = true;
        }
        Ok(HostStmt::ReduceInto {
            red,
            index: index.clone(),
            block: d.block.clone(),
            at: d.at.clone(),
            span: d.write_span,
        })
    }

    /// An inclusive scan of `fm_acc` over the work-group, in order, into
    /// `fm_lm` (Hillis and Steele: each step combines a value with the
    /// one `fm_d` places before it, the earlier on the left).
    fn local_scan(&mut self, ct: &str, comb: &Combine) {
        let c = comb.code("fm_v", "fm_lm[fm_l - fm_d]", "fm_v");
        self.line("fm_lm[fm_l] = fm_acc;");
        self.line("barrier(CLK_LOCAL_MEM_FENCE);");
        self.line("for (int fm_d = 1; fm_d < FM_GROUP; fm_d <<= 1) {");
        self.line(&format!("  {ct} fm_v = fm_lm[fm_l];"));
        self.line(&format!("  if (fm_l >= fm_d) {c}"));
        self.line("  barrier(CLK_LOCAL_MEM_FENCE);");
        self.line("  fm_lm[fm_l] = fm_v;");
        self.line("  barrier(CLK_LOCAL_MEM_FENCE);");
        self.line("}");
    }
}

/// The C type of an element type in registers and blocks.
pub fn ctype(p: Prim) -> &'static str {
    match p {
        Prim::Bool => "uchar",
        Prim::I32 => "int",
        Prim::I64 => "long",
        Prim::F32 => "float",
        Prim::F64 => "double",
    }
}

/// A constant as C, bit for bit (floats through their bits, so that NaNs,
/// infinities and every last bit survive).
fn const_literal(c: Const) -> String {
    match c {
        Const::Bool(b) => format!("((uchar){})", b as u8),
        Const::I32(k) if k == i32::MIN => "(-2147483647 - 1)".to_string(),
        Const::I32(k) => format!("({k})"),
        Const::I64(k) => literal(k),
        Const::F32(b) => format!("as_float(0x{b:08x}U)"),
        Const::F64(b) => format!("as_double(0x{b:016x}UL)"),
    }
}

/// `op a` on an operand of type `t`, as `funmem_semantics::scalar::unop_t`.
fn unop_code(op: UnOp, t: Prim, a: &str) -> String {
    match op {
        UnOp::Neg => match t {
            Prim::I64 => format!("fm_neg({a})"),
            Prim::I32 => format!("fm_neg32({a})"),
            Prim::Bool => a.to_string(),
            _ => format!("(-{a})"),
        },
        UnOp::Not => format!("(({})!({a}))", ctype(t)),
        UnOp::Abs => match t {
            Prim::I64 => format!("((long)abs({a}))"),
            Prim::I32 => format!("as_int(abs({a}))"),
            Prim::Bool => a.to_string(),
            _ => format!("fabs({a})"),
        },
        UnOp::Sqrt => format!("sqrt({a})"),
        UnOp::Exp => format!("exp({a})"),
        UnOp::Log => format!("log({a})"),
        UnOp::Floor => format!("floor({a})"),
        UnOp::Conv(to) => convert_code(t, to, a),
    }
}

/// The conversion from `from` to `to`: integers wrap, to `bool` is `!= 0`,
/// float to integer truncates and saturates (NaN is 0), the rest round to
/// nearest.
fn convert_code(from: Prim, to: Prim, a: &str) -> String {
    match (from, to) {
        _ if from == to => a.to_string(),
        (_, Prim::Bool) => format!("((uchar)(({a}) != 0))"),
        (Prim::F32 | Prim::F64, Prim::I32) => format!("convert_int_sat_rtz({a})"),
        (Prim::F32 | Prim::F64, Prim::I64) => format!("convert_long_sat_rtz({a})"),
        (Prim::I64, Prim::I32) => format!("as_int((uint)({a}))"),
        (_, t) => format!("(({})({a}))", ctype(t)),
    }
}

/// `a op b` on operands of type `t`, as `funmem_semantics::scalar::binop_t`
/// (division by zero is checked before, by `div_checks`).
fn binop_code(op: BinOp, t: Prim, a: &str, b: &str) -> String {
    let ct = ctype(t);
    let float = t.is_float();
    let w = match t {
        Prim::I32 => "32",
        _ => "",
    };
    match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem if t.is_int() => {
            let f = match op {
                BinOp::Add => "add",
                BinOp::Sub => "sub",
                BinOp::Mul => "mul",
                BinOp::Div => "div",
                _ => "rem",
            };
            format!("fm_{f}{w}({a}, {b})")
        }
        BinOp::Rem if float => format!("fmod({a}, {b})"),
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div if float => {
            format!("({a} {} {b})", op.symbol())
        }
        BinOp::Min if float => format!("fmin({a}, {b})"),
        BinOp::Max if float => format!("fmax({a}, {b})"),
        BinOp::Min => format!("min({a}, {b})"),
        BinOp::Max => format!("max({a}, {b})"),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
            format!("((uchar)({a} {} {b}))", op.symbol())
        }
        BinOp::And => format!("(({ct})(({a}) != 0 && ({b}) != 0))"),
        BinOp::Or => format!("(({ct})(({a}) != 0 || ({b}) != 0))"),
        // Arithmetic on bools: ruled out by the type checker.
        _ => format!("(({ct})0)"),
    }
}

/// A read of element `at` of type `t` from block `m` (a `bool` is any
/// non-zero byte).
fn load(t: Prim, m: &str, at: &str) -> String {
    match t {
        Prim::Bool => format!("((uchar)(FM_AT(uchar, {m}, {at}) != 0))"),
        _ => format!("FM_AT({}, {m}, {at})", ctype(t)),
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

fn print_sexp(e: &SExp) -> String {
    funmem_lang::print::sexp_string(e)
}

/// A *device reduce* found by [`device_reduce`]: the parts of the kernel
/// statement that [`HostStmt::ReduceInto`] runs.
struct DeviceReduce<'a> {
    /// The scalar `var` declarations before the reduce, in order.
    vars: Vec<(&'a Name, Prim)>,
    /// The reduce's target, one of `vars`.
    result: &'a Name,
    /// The reduce and its statement's span.
    red: &'a Red,
    red_span: Span,
    /// The write of the result: its block, its index and its span.
    block: &'a Name,
    at: &'a SExp,
    write_span: Span,
}

/// Recognises a *device reduce*: the IMP that the FUNMEM-to-IMP lowering
/// (`transforms/src/to_imp.rs`) makes of the migration pass's `reduce'`
/// (the thesis's reduce returning a one-element array),
///
/// ```text
/// let (s_mem: mem) = alloc 1 f32
/// let (s_arr: [1]f32 @ s_mem -> L) = kernel t < 1 do
///   let (s: f32) = reduce op ne xs in (s)
/// ```
///
/// which is, as a host-level statement,
///
/// ```text
/// kernel t < 1 do            -- the bound is the literal 1
///   var x1: τ1; ... var s: τ;  -- scalar declarations (any number; `skip`s are ignored)
///   s <- reduce op ne for i < n do .. yield e done;
///   m[at] <- s               -- the result, into a block, at L's element
/// done
/// ```
///
/// where `s` is declared among the `var`s and `at` mentions none of them
/// (it may mention the kernel's index, 0 here, and host scalars: the host
/// evaluates it before the result exists). Anything else is `None`, and
/// the kernel is translated as any other (its reduce then runs in the
/// work-item, sequentially).
fn device_reduce<'a>(bound: &SExp, body: &'a [Stmt]) -> Option<DeviceReduce<'a>> {
    let one = matches!(
        bound,
        SExp::Atom(Atom::Int(1, _)) | SExp::Atom(Atom::Const(Const::I64(1), _))
    );
    if !one {
        return None;
    }
    let mut ss = body.iter().filter(|s| !matches!(s.kind, StmtKind::Skip));
    let mut vars = Vec::new();
    let (result, red, red_span) = loop {
        let s = ss.next()?;
        match &s.kind {
            StmtKind::Var(x, ImpType::Prim(t)) => vars.push((&x.name, *t)),
            StmtKind::Reduce(x, r) => break (&x.name, r, s.span),
            _ => return None,
        }
    };
    let w = ss.next()?;
    let StmtKind::Write(m, at, SExp::Atom(Atom::Var(v))) = &w.kind else {
        return None;
    };
    if ss.next().is_some() || v.name != *result || !vars.iter().any(|(x, _)| *x == result) {
        return None;
    }
    let mut local = false;
    at.for_each_var(&mut |y| local |= vars.iter().any(|(x, _)| **x == y.name));
    if local {
        return None;
    }
    Some(DeviceReduce {
        vars,
        result,
        red,
        red_span,
        block: &m.name,
        at,
        write_span: w.span,
    })
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

/// A kernel perfectly nested in a top-level kernel, flattened into its
/// NDRange: the statements before it (`prefix`, in the enclosing body) and
/// the kernel itself.
struct Level<'a> {
    prefix: &'a [Stmt],
    index: &'a funmem_lang::ast::Ident,
    bound: &'a SExp,
    span: Span,
}

/// The perfect nest inside the body of the top-level kernel over `index`:
/// while a body is some statements safe to repeat in every inner iteration
/// ([`repeatable`]) and then exactly one kernel whose bound reads nothing
/// that varies within the nest (the indexes and what the prefixes assign),
/// that kernel is a level and its body is looked at next. Returns the
/// levels, outermost first, and the innermost body.
fn perfect_nest<'a>(index: &Name, body: &'a [Stmt]) -> (Vec<Level<'a>>, &'a [Stmt]) {
    let mut indexes = HashSet::from([index.clone()]);
    let mut locals = HashSet::new();
    let mut levels = Vec::new();
    let mut cur = body;
    loop {
        let mut end = cur.len();
        while end > 0 && matches!(cur[end - 1].kind, StmtKind::Skip) {
            end -= 1;
        }
        let Some((last, prefix)) = cur[..end].split_last() else {
            break;
        };
        let StmtKind::Kernel(j, n, inner) = &last.kind else {
            break;
        };
        let mut declared = locals.clone();
        if !prefix.iter().all(|s| repeatable(s, &mut declared)) {
            break;
        }
        let varies =
            |x: &&funmem_lang::ast::Ident| declared.contains(&x.name) || indexes.contains(&x.name);
        if n.distinct_vars().iter().any(varies) {
            break;
        }
        locals = declared;
        indexes.insert(j.name.clone());
        levels.push(Level {
            prefix,
            index: j,
            bound: n,
            span: last.span,
        });
        cur = inner;
    }
    (levels, cur)
}

/// A top-level kernel over `index` whose body is a prefix that reads no
/// block ([`repeatable`], no `x <- m[se]`) and then two or more kernels,
/// each with a bound that reads nothing the prefix assigns: the prefix and
/// the kernels. Such a kernel runs as one launch per inner kernel, each
/// with the prefix again (kernel fission): the outer iterations are
/// independent (race freedom), so running every iteration's first inner
/// kernel, then every iteration's second, is running each iteration's in
/// order; and each launch is a perfect nest, flattened. The prefix reads
/// no block, which a later inner kernel could have written by then.
fn fission<'a>(index: &Name, body: &'a [Stmt]) -> Option<(Vec<&'a Stmt>, Vec<&'a Stmt>)> {
    let ss: Vec<&Stmt> = body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Skip))
        .collect();
    let split = ss
        .iter()
        .position(|s| matches!(s.kind, StmtKind::Kernel(..)))?;
    let (prefix, kernels) = ss.split_at(split);
    if kernels.len() < 2 {
        return None;
    }
    let mut declared = HashSet::new();
    for s in prefix {
        if matches!(s.kind, StmtKind::Read(..)) || !repeatable(s, &mut declared) {
            return None;
        }
    }
    for k in kernels {
        let StmtKind::Kernel(_, n, _) = &k.kind else {
            return None;
        };
        let varies = |x: &&funmem_lang::ast::Ident| declared.contains(&x.name) || &x.name == index;
        if n.distinct_vars().iter().any(varies) {
            return None;
        }
    }
    Some((prefix.to_vec(), kernels.to_vec()))
}

/// Whether a statement before a nested kernel may run once per inner
/// iteration instead of once: it declares a scalar, or assigns or reads
/// into a scalar declared in the nest (`declared`, which it extends), or
/// asserts; it writes no block and has no loop, so repeating it only
/// repeats its reads and its checks.
fn repeatable(s: &Stmt, declared: &mut HashSet<Name>) -> bool {
    match &s.kind {
        StmtKind::Skip | StmtKind::Assert(..) => true,
        StmtKind::Var(x, ImpType::Prim(_)) => {
            declared.insert(x.name.clone());
            true
        }
        StmtKind::Assign(x, _) | StmtKind::Read(x, _, _) => declared.contains(&x.name),
        _ => false,
    }
}

/// The blocks that statements write (`m[se] <- ..` and `scan .. into m`).
fn written(ss: &[Stmt], out: &mut BTreeSet<Name>) {
    for s in ss {
        match &s.kind {
            StmtKind::Write(m, _, _) => {
                out.insert(m.name.clone());
            }
            StmtKind::Scan(r, m, _) => {
                out.insert(m.name.clone());
                written(&r.body, out);
                if let ImpOp::Lambda(_, _, b, _) = &r.op {
                    written(b, out);
                }
            }
            StmtKind::Reduce(_, r) => {
                written(&r.body, out);
                if let ImpOp::Lambda(_, _, b, _) = &r.op {
                    written(b, out);
                }
            }
            StmtKind::If(_, a, b) => {
                written(a, out);
                written(b, out);
            }
            StmtKind::Kernel(_, _, b) | StmtKind::For(_, _, b) | StmtKind::While(_, b) => {
                written(b, out)
            }
            StmtKind::Skip
            | StmtKind::Var(..)
            | StmtKind::Assign(..)
            | StmtKind::Alloc(..)
            | StmtKind::Read(..)
            | StmtKind::Assert(..) => {}
        }
    }
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

    /// Whether the host part allocates a block (which the prelude's
    /// `fm_zero` kernel zeroes, so that the source must be built even
    /// when the program has no kernel of its own).
    pub fn allocates(&self) -> bool {
        fn any(ss: &[HostStmt]) -> bool {
            ss.iter().any(|s| match s {
                HostStmt::Alloc(..) => true,
                HostStmt::If(_, a, b) => any(a) || any(b),
                HostStmt::For(_, _, b, _) | HostStmt::While(_, b, _) => any(b),
                _ => false,
            })
        }
        any(&self.host)
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
            HostStmt::Alloc(x, e, _, _) => {
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
            HostStmt::Reduce(x, r) => {
                let _ = writeln!(
                    out,
                    "//{pad}{x} <- reduce: parallel kernels, then a synchronous read of the result (statement r{r})"
                );
            }
            HostStmt::Scan(r) => {
                let _ = writeln!(out, "//{pad}scan: parallel kernels (statement r{r})");
            }
            HostStmt::ReduceInto {
                red,
                index,
                block,
                at,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "//{pad}{block}[{}] <- reduce ({index} = 0): parallel kernels, the result copied on the device, no synchronous read (statement r{red})",
                    print_sexp(at)
                );
            }
            HostStmt::Launch(k) => {
                let ki = &ks[*k];
                let mut args: Vec<String> = ki.scalars.iter().map(|x| x.0.to_string()).collect();
                args.extend(ki.mems.iter().map(|m| m.to_string()));
                let mut over = print_sexp(&ki.bound);
                for b in &ki.inner {
                    let _ = write!(over, " * {}", print_sexp(b));
                }
                let _ = writeln!(
                    out,
                    "//{pad}launch {}({}) over {} < {}",
                    ki.name,
                    args.join(", "),
                    ki.index,
                    over
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
    fn blocks_are_zeroed_by_a_kernel_with_64_bit_offsets() {
        // In a loop of the host part too: the source must be built for it.
        let c = source(
            "def main (n: int) =
               var s: int; s <- 0;
               for j < 2 do var m: mem; m <- alloc n; var x: int; x <- m[0]; s <- s + x done
             out (s)",
        );
        assert!(c.kernels.is_empty() && c.allocates());
        assert!(c.source.contains(
            "for (long i = (long)get_global_id(0); i < words; i += (long)get_global_size(0)) m[i] = 0;"
        ));
        let c = source("def main (n: int) = var s: int; s <- n out (s)");
        assert!(!c.allocates());
    }

    #[test]
    fn top_level_kernels_become_kernels_and_nested_ones_loops() {
        // The inner kernel is not alone in the body: it stays a loop.
        let c = source(
            "def main (n: int) =
               var m: mem; m <- alloc n * n;
               kernel i < n do kernel j < n do m[i * n + j] <- i done; skip; m[i] <- 0 done
             out (r: [n][n]int @ m -> R(n, n))",
        );
        assert_eq!(c.kernels.len(), 1);
        let k = &c.kernels[0];
        assert_eq!((k.scalars.len(), k.mems.len(), k.loops), (1, 1, true));
        assert!(k.inner.is_empty());
        assert!(c.source.contains("__kernel void k0("), "{}", c.source);
        assert!(c
            .source
            .contains("for (long v_j = 0; v_j < v_j_iterations; v_j++)"));
        assert!(matches!(
            c.host[..],
            [HostStmt::Var(..), HostStmt::Alloc(..), HostStmt::Launch(0)]
        ));
        // Four checks: the nested bound, the fuel and the two writes.
        assert_eq!(c.sites.len(), 4);
    }

    #[test]
    fn a_perfect_2d_nest_is_one_ndrange() {
        let c = source(
            "def main (n: int) (m: int) =
               var o: mem; o <- alloc n * m;
               kernel i < n do kernel j < m do o[i * m + j] <- i + j done done
             out (r: [n][m]int @ o -> R(n, m))",
        );
        let k = &c.kernels[0];
        assert_eq!(k.inner.len(), 1);
        assert_eq!(print_sexp(&k.inner[0]), "m");
        // The work-item's own inner iteration spends no fuel; others do.
        assert!(k.loops);
        for text in [
            "__kernel void k0(long fm_iterations, long fm_step0, long fm_fuel, long v_m,",
            "if (v_j != fm_at0 && --fm_fuel < 0) FM_FAIL(2, 0, 0);",
            "long fm_g = (long)get_global_id(0);",
            "const long fm_at0 = fm_g % fm_step0; fm_g /= fm_step0;",
            "const long v_i = fm_g;",
            "if (v_i >= fm_iterations) return;",
            "if (v_j_iterations < 0) FM_FAIL(1, v_j_iterations, 0);",
            "for (long v_j = fm_at0; v_j < v_j_iterations; v_j += fm_step0) {",
        ] {
            assert!(c.source.contains(text), "{text}: {}", c.source);
        }
        // The nested bound's check, its fuel, then the write's.
        assert_eq!(c.sites.len(), 3);
        assert!(matches!(c.sites[0].what, SiteKind::NegativeBound));
        assert!(c.print().contains("over i < n * m"), "{}", c.print());
    }

    #[test]
    fn a_perfect_3d_nest_flattens_every_level() {
        let c = source(
            "def main (n: int) =
               var o: mem; o <- alloc n * n * n;
               kernel i < n do
                 kernel j < n + 1 do
                   kernel k < 2 * n do
                     var x: int; x <- i * n + j; o[x * n + k] <- k; while x do x <- 0 done
                   done
                 done
               done
             out (r: [n][n][n]int @ o -> R(n, n, n))",
        );
        let k = &c.kernels[0];
        let inner: Vec<String> = k.inner.iter().map(print_sexp).collect();
        assert_eq!(inner, ["n + 1", "2 * n"]);
        assert!(k.loops);
        for text in [
            "(long fm_iterations, long fm_step0, long fm_step1, long fm_fuel,",
            "const long fm_at1 = fm_g % fm_step1; fm_g /= fm_step1;\n  const long fm_at0 = fm_g % fm_step0; fm_g /= fm_step0;",
            "for (long v_j = fm_at0; v_j < v_j_iterations; v_j += fm_step0) {",
            "for (long v_k = fm_at1; v_k < v_k_iterations; v_k += fm_step1) {",
        ] {
            assert!(c.source.contains(text), "{text}: {}", c.source);
        }
    }

    #[test]
    fn a_prefix_that_only_reads_repeats_in_every_inner_iteration() {
        let c = source(
            "def main (n: int) (a: [n]int @ am -> R(n)) =
               var o: mem; o <- alloc n * n;
               kernel i < n do
                 var x: int; x <- am[i]; var y: int; y <- x * 2; assert index y >= 0;
                 kernel j < n do o[i * n + j] <- y + j done
               done
             out (r: [n][n]int @ o -> R(n, n))",
        );
        let k = &c.kernels[0];
        assert_eq!(k.inner.len(), 1);
        assert_eq!(k.flat_reads, [Name::from("am")]);
        assert_eq!(k.flat_writes, [Name::from("o")]);
        // The read comes after the work-item's indexes, before the level.
        let read = c.source.find("v_x = ").unwrap();
        let level = c.source.find("v_j = fm_at0").unwrap();
        assert!(c.source.find("const long v_i = fm_g;").unwrap() < read && read < level);
    }

    #[test]
    fn a_kernel_over_several_inner_kernels_is_one_launch_for_each() {
        let c = source(
            "def main (n: int) =
               var o: mem; o <- alloc n * n;
               kernel i < n do
                 var b: int; b <- i * n;
                 kernel j < n do o[b + j] <- 1 done;
                 skip;
                 kernel j < n - 1 do o[b + j] <- 2 done
               done
             out (r: [n][n]int @ o -> R(n, n))",
        );
        assert_eq!(c.kernels.len(), 2);
        let inner: Vec<String> = c.kernels.iter().map(|k| print_sexp(&k.inner[0])).collect();
        assert_eq!(inner, ["n", "n - 1"]);
        assert!(matches!(
            c.host[..],
            [
                HostStmt::Var(..),
                HostStmt::Alloc(..),
                HostStmt::Launch(0),
                HostStmt::Launch(1)
            ]
        ));
        // The prefix runs in both; the second does nothing after a failure.
        let k1 = &c.source[c.source.find("__kernel void k1").unwrap()..];
        assert!(k1.contains("v_b = fm_mul(v_i, v_n);"), "{k1}");
        assert!(k1.contains("if (fm_err[0] != 0) return;"), "{k1}");
        assert!(c.kernels[1].repeated && !c.kernels[0].repeated);
    }

    #[test]
    fn nests_that_are_not_perfect_stay_loops() {
        for (why, body) in [
            (
                "a statement between two inner kernels",
                "kernel j < n do o[i * n + j] <- 1 done; skip; o[i] <- 0; kernel j < n do o[i * n + j] <- 2 done",
            ),
            (
                "a read before two inner kernels",
                "var x: int; x <- o[i]; kernel j < n do o[i * n + j] <- x done; kernel j < n do o[i * n + j] <- 2 done",
            ),
            (
                "a statement after",
                "kernel j < n do o[i * n + j] <- 1 done; o[i * n] <- 3",
            ),
            (
                "a bound that depends on i",
                "kernel j < i do o[i * n + j] <- 1 done",
            ),
            (
                "a bound that depends on the prefix",
                "var b: int; b <- n - 1; kernel j < b do o[i * n + j] <- 1 done",
            ),
            (
                "a write in the prefix",
                "o[i * n] <- 0; kernel j < n do o[i * n + j] <- 1 done",
            ),
            (
                "a loop in the prefix",
                "var x: int; for t < 3 do x <- t done; kernel j < n do o[i * n + j] <- x done",
            ),
            (
                "a prefix read when the body writes a block of its own",
                "var x: int; x <- o[i]; var p: mem; p <- o; kernel j < n do p[i * n + j] <- x done",
            ),
        ] {
            let c = source(&format!(
                "def main (n: int) =
                   var o: mem; o <- alloc n * n;
                   kernel i < n do {body} done
                 out (r: [n][n]int @ o -> R(n, n))"
            ));
            let k = &c.kernels[0];
            assert!(k.inner.is_empty(), "{why}: {}", c.source);
            assert!(!c.source.contains("fm_step"), "{why}: {}", c.source);
            assert!(c.source.contains("; v_j++)"), "{why}: {}", c.source);
        }
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
        assert_eq!(k.scalars.len(), 1, "{:?}", k.scalars);
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
    fn typed_constants_operators_and_conversions() {
        assert_eq!(const_literal(Const::I32(i32::MIN)), "(-2147483647 - 1)");
        assert_eq!(const_literal(Const::f32(1.5)), "as_float(0x3fc00000U)");
        assert_eq!(
            const_literal(Const::f64(f64::NAN)),
            format!("as_double(0x{:016x}UL)", f64::NAN.to_bits())
        );
        assert_eq!(const_literal(Const::Bool(true)), "((uchar)1)");
        assert_eq!(
            binop_code(BinOp::Add, Prim::I32, "a", "b"),
            "fm_add32(a, b)"
        );
        assert_eq!(binop_code(BinOp::Rem, Prim::F64, "a", "b"), "fmod(a, b)");
        assert_eq!(binop_code(BinOp::Max, Prim::F32, "a", "b"), "fmax(a, b)");
        assert_eq!(
            binop_code(BinOp::Lt, Prim::F32, "a", "b"),
            "((uchar)(a < b))"
        );
        assert_eq!(
            convert_code(Prim::F32, Prim::I32, "x"),
            "convert_int_sat_rtz(x)"
        );
        assert_eq!(convert_code(Prim::I64, Prim::I32, "x"), "as_int((uint)(x))");
        assert_eq!(
            convert_code(Prim::F64, Prim::Bool, "x"),
            "((uchar)((x) != 0))"
        );
        // A typed read, write and an f64 program asking for fp64.
        let c = source(
            "def main (n: i64) (xs: [n]f64 @ xm -> R(n)) =
               var rm: mem; rm <- alloc n i32;
               kernel i < n do var x: f64; x <- xm[i]; rm[i] <- i32(x) done
             out (r: [n]i32 @ rm -> R(n))",
        );
        assert!(c.fp64);
        for text in [
            "if (!FM_IN(v_i, v_xm_n / 8))",
            "v_x = FM_AT(double, v_xm, v_i); FM_READ(8);",
            "FM_AT(int, v_rm, v_i) = convert_int_sat_rtz(v_x); FM_WRITE(4);",
        ] {
            assert!(c.source.contains(text), "{text}: {}", c.source);
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
