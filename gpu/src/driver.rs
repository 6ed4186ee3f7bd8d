//! The host driver: runs a [`Compiled`] program's host part on the host and
//! its kernels on an OpenCL device, and accounts for everything.
//!
//! - `alloc` creates a device buffer, zero-filled as IMP's E-IMP-ALLOC
//!   says. A block is freed once no variable that holds it is used again
//!   on the host (by a statement, a launch or a result:
//!   [`Compiled::dying`]), as a real runtime frees memory after its last
//!   use; the peak device memory is the most bytes live at once, input
//!   blocks included.
//! - Input blocks are laid out on the host by their parameters' LMADs and
//!   copied in (one transfer per block); result blocks are copied out (one
//!   per block).
//! - A host read of a block element (`x <- m[i]` outside kernels) is a
//!   synchronous device-to-host transfer; a host write, a host-to-device one.
//! - Kernel failures are found through the error buffer, which is read at
//!   every synchronous point and at the end of the run; those reads are
//!   counted apart (`error_checks`), not as the program's transfers.
//! - Loops of the host part (`for`, `while`) run on the host; their
//!   statements are counted each time they run, so a `while` whose
//!   condition a kernel computes costs one synchronous read an iteration.
//! - Fuel: one account for the run, in kernel iterations. A launch spends
//!   its iterations; each iteration of a host loop spends [`LOOP_FUEL`].
//!   Nested kernels and loops in a kernel spend a per-work-item share of
//!   what is left at the launch.

use crate::codegen::{Compiled, HostStmt};
use crate::device::{DeviceInfo, GpuError};
use funmem_lang::ast::{Atom, SExp};
use funmem_lang::ast::{BinOp, UnOp};
use funmem_lang::imp::{ArrDecl, ImpType, Param, Result as ImpResult};
use funmem_lang::lmad::{Dim, Lmad};
use funmem_lang::prim::Const;
use funmem_lang::prim::Prim;
use funmem_lang::{Name, Span};
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::prog;
use funmem_semantics::scalar::{binop_t, unop_t, DivByZero};
use funmem_semantics::value::{ArrayValue, Elems, Value};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_long, cl_mem, cl_uchar, CL_BLOCKING};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ptr;
use std::rc::Rc;
use std::time::Instant;

use funmem_semantics::prog::PROG;
const ALLOC: &str = "E-IMP-ALLOC";
const READ: &str = "E-IMP-READ";
const WRITE: &str = "E-IMP-WRITE";
const KERNEL: &str = "E-IMP-KERNEL";
const ASSIGN_INT: &str = "E-IMP-ASSIGN-INT";
const ASSERT: &str = "E-IMP-ASSERT";
const TRUE: &str = "E-IMP-TRUE";
const FOR: &str = "E-IMP-FOR";
const WHILE: &str = "E-IMP-WHILE";
const REDUCE: &str = "E-IMP-REDUCE";
const SCAN: &str = "E-IMP-SCAN";

/// Work-items per group of a reduce or scan stage (the generated code's
/// `FM_GROUP`).
const RED_GROUP: usize = 256;

/// The fuel one iteration of a host loop spends: about what launching a
/// kernel costs, counted in kernel iterations (a launch takes 5 to 100
/// microseconds, from a GPU to PoCL; a device runs 10^11 simple iterations
/// a second), so that the device's default fuel
/// ([`funmem_semantics::error::DEVICE_FUEL`], 10^12) lets a host loop run
/// 10^5 iterations, kernels launched in each, in seconds; an endless one
/// stops there with a clear error.
pub const LOOP_FUEL: u64 = 10_000_000;

/// Launches queued before the driver waits for the device and sums their
/// times: bounds the queue and the events a loop keeps.
const PENDING_LAUNCHES: usize = 1024;

/// The most work-items a kernel's flattened levels bring its launch to
/// (2^32): far more than a device runs at once, and few enough that every
/// index and step of the generated code stays far from overflowing.
const FLAT_ITEMS: u64 = 1 << 32;

/// Work-items per work-group (or the kernel's maximum, when smaller).
const GROUP: usize = 256;

/// The environment variable that makes the driver wait for the device
/// after every launch (slower; a kernel's failure then names it alone).
pub const SYNC_ENV: &str = "FUNMEM_OPENCL_SYNC";

/// OpenCL's codes for a kernel that failed or could not be launched.
const CL_OUT_OF_RESOURCES: i32 = -5;
const CL_INVALID_WORK_GROUP_SIZE: i32 = -54;
const CL_INVALID_COMMAND_QUEUE: i32 = -36;
/// NVIDIA's code for an access outside device memory (CUDA's illegal
/// address), which some of its drivers return instead of -5.
const NV_ILLEGAL_ADDRESS: i32 = -9999;

/// What one run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    /// Device buffers created (input blocks included).
    pub allocations: u64,
    /// Their bytes.
    pub bytes_allocated: u64,
    /// The most bytes live at once (blocks are freed after their last use).
    pub peak_bytes: u64,
    /// Host-to-device transfers: input blocks and host writes.
    pub h2d_transfers: u64,
    /// Their bytes.
    pub h2d_bytes: u64,
    /// Device-to-host transfers: result blocks and host reads.
    pub d2h_transfers: u64,
    /// Their bytes.
    pub d2h_bytes: u64,
    /// Host reads of a block element: synchronous transfers.
    pub sync_reads: u64,
    /// Host writes of a block element.
    pub host_writes: u64,
    /// Copies from one device buffer to another: the results of device
    /// reduces ([`crate::codegen::HostStmt::ReduceInto`]), which never
    /// come to the host.
    pub device_copies: u64,
    /// Kernel launches.
    pub launches: u64,
    /// Reads of the error buffer.
    pub error_checks: u64,
    /// Per kernel: launches.
    pub kernel_launches: Vec<u64>,
    /// Per kernel: nanoseconds on the device (profiling events), summed
    /// over its launches.
    pub kernel_ns: Vec<u64>,
    /// Per kernel: elements read and written by its work-items (only when
    /// the run counted accesses).
    pub accesses: Option<Vec<(u64, u64)>>,
    /// Per kernel: bytes read and written by its work-items (only when the
    /// run counted accesses).
    pub access_bytes: Option<Vec<(u64, u64)>>,
    /// Host wall-clock nanoseconds of the whole run.
    pub wall_ns: u64,
    /// Host wall-clock nanoseconds of the program itself, as Futhark's
    /// benchmarks time it: from the moment the inputs are on the device
    /// (queue finished) to the moment its last kernel, transfer and
    /// error-buffer check have finished (queue finished), before the
    /// results are read back. Setup (context, kernel builds) and the
    /// initial and final transfers are outside it; every transfer the
    /// program makes on the way is inside it.
    pub runtime_ns: u64,
}

impl RunStats {
    /// Nanoseconds in kernels.
    pub fn total_kernel_ns(&self) -> u64 {
        self.kernel_ns.iter().sum()
    }
}

/// A program built for one device, ready to run any number of times.
///
/// Fields drop in order: kernels and buffers before the queue, the queue
/// before the context.
pub struct Runtime {
    compiled: Compiled,
    device: DeviceInfo,
    kernels: Vec<Kernel>,
    counting: Option<Vec<Kernel>>,
    /// The prelude's `fm_zero`, which zeroes new blocks (`None` when the
    /// program neither launches a kernel nor allocates).
    zero: Option<Kernel>,
    dummy: Buffer<cl_long>,
    /// Work-items per group of the kernels' launches: [`GROUP`], or less
    /// where a kernel allows less on this device (its registers).
    group: usize,
    /// The same for the counting build (more registers: maybe less).
    counting_group: usize,
    /// Wait for the device after every launch ([`SYNC_ENV`]).
    sync: bool,
    shared: Rc<Shared>,
}

/// A context and its queue, shared by the runtimes of one batch.
struct Shared {
    queue: CommandQueue,
    context: Context,
}

/// A device block: its buffer and its size in bytes.
struct Block {
    buf: Buffer<cl_uchar>,
    len: i64,
}

impl Runtime {
    /// Builds the program's kernels for `device`.
    pub fn new(device: &DeviceInfo, compiled: &Compiled) -> Result<Runtime, GpuError> {
        let shared = Rc::new(Shared::new(device)?);
        let (kernels, zero) = build(&shared.context, compiled, &options(device, compiled.fp64)?)?;
        Runtime::with_kernels(device, compiled.clone(), kernels, zero, shared)
    }

    /// Builds several IMP programs for `device` with one OpenCL build (much
    /// faster than one build each where compiling dominates, as on PoCL).
    /// A program that cannot run on OpenCL gets its diagnostic.
    pub fn batch(
        device: &DeviceInfo,
        programs: &[funmem_lang::imp::Program],
    ) -> Result<Vec<Result<Runtime, funmem_lang::diag::Diagnostic>>, GpuError> {
        let compiled: Vec<_> = programs
            .iter()
            .enumerate()
            .map(|(j, p)| crate::codegen::compile_with_prefix(p, &format!("p{j}_")))
            .collect();
        let mut source = Compiled::prelude().to_string();
        for c in compiled.iter().flatten() {
            source.push_str(c.kernels_source());
        }
        let shared = Rc::new(Shared::new(device)?);
        let has_kernels = compiled
            .iter()
            .flatten()
            .any(|c| !c.kernels.is_empty() || c.allocates());
        let program = if has_kernels {
            let fp64 = compiled.iter().flatten().any(|c| c.fp64);
            Some(build_source(
                &shared.context,
                &source,
                &options(device, fp64)?,
            )?)
        } else {
            None
        };
        compiled
            .into_iter()
            .map(|c| match c {
                Err(d) => Ok(Err(d)),
                Ok(c) => {
                    let (kernels, zero) = match &program {
                        Some(p) => (kernels_of(p, &c)?, Some(zero_of(p)?)),
                        None => (Vec::new(), None),
                    };
                    Runtime::with_kernels(device, c, kernels, zero, shared.clone()).map(Ok)
                }
            })
            .collect()
    }

    fn with_kernels(
        device: &DeviceInfo,
        compiled: Compiled,
        kernels: Vec<Kernel>,
        zero: Option<Kernel>,
        shared: Rc<Shared>,
    ) -> Result<Runtime, GpuError> {
        let group = group_for(device, &kernels);
        // SAFETY: a fresh buffer of one element, no host pointer.
        let dummy = unsafe {
            Buffer::<cl_long>::create(&shared.context, CL_MEM_READ_WRITE, 1, ptr::null_mut())
        }
        .map_err(|e| GpuError::cl("clCreateBuffer", e))?;
        Ok(Runtime {
            compiled,
            device: device.clone(),
            kernels,
            counting: None,
            zero,
            dummy,
            group,
            counting_group: group,
            sync: std::env::var_os(SYNC_ENV).is_some_and(|v| !v.is_empty() && v != "0"),
            shared,
        })
    }

    /// The device it runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.device
    }

    /// The translated program.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    pub(crate) fn context(&self) -> &Context {
        &self.shared.context
    }

    pub(crate) fn queue(&self) -> &CommandQueue {
        &self.shared.queue
    }

    /// Runs the program on `inputs` (in parameter order, as for the
    /// interpreters); its results in `out` order, and what the run cost.
    /// With `count`, the kernels also count their reads and writes (a
    /// second build, slower; for bandwidth figures).
    pub fn run(
        &mut self,
        inputs: &[Value],
        limits: Limits,
        count: bool,
    ) -> Result<(Vec<Value>, RunStats), GpuError> {
        if count && self.counting.is_none() {
            let o = format!("{} -D FM_COUNT", options(&self.device, self.compiled.fp64)?);
            let counting = build(&self.shared.context, &self.compiled, &o)?.0;
            self.counting_group = group_for(&self.device, &counting);
            self.counting = Some(counting);
        }
        let start = Instant::now();
        let mut h = Host {
            rt: self,
            count,
            vals: HashMap::new(),
            mems: HashMap::new(),
            blocks: Vec::new(),
            holders: Vec::new(),
            live_bytes: 0,
            stats: RunStats {
                kernel_launches: vec![0; self.compiled.kernels.len()],
                kernel_ns: vec![0; self.compiled.kernels.len()],
                ..RunStats::default()
            },
            events: Vec::new(),
            cells: 0,
            spent: 0,
            limits,
            err: None,
            counts: None,
            unsettled: Vec::new(),
        };
        let result = h.program(inputs);
        // Whatever happened, wait for the device before measuring.
        let _ = h.rt.shared.queue.finish();
        let result = result.and_then(|v| h.check_error().map(|()| v));
        h.settle_events();
        let mut stats = std::mem::take(&mut h.stats);
        if let (Some(c), Ok(_)) = (&h.counts, &result) {
            let mut v = vec![0i64; 4 * stats.kernel_ns.len().max(1)];
            // SAFETY: the buffer has exactly v.len() elements.
            unsafe {
                h.rt.shared
                    .queue
                    .enqueue_read_buffer(c, CL_BLOCKING, 0, &mut v, &[])
            }
            .map_err(|e| h.waited("reading the access counters", e))?;
            stats.accesses = Some(
                v.chunks(4)
                    .take(stats.kernel_ns.len())
                    .map(|c| (c[0] as u64, c[2] as u64))
                    .collect(),
            );
            stats.access_bytes = Some(
                v.chunks(4)
                    .take(stats.kernel_ns.len())
                    .map(|c| (c[1] as u64, c[3] as u64))
                    .collect(),
            );
        }
        stats.wall_ns = start.elapsed().as_nanos() as u64;
        result.map(|v| (v, stats))
    }
}

impl Shared {
    fn new(device: &DeviceInfo) -> Result<Shared, GpuError> {
        let _setup = crate::device::setup_lock();
        let dev = Device::new(device.id());
        let context = Context::from_device(&dev).map_err(|e| GpuError::cl("clCreateContext", e))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(|e| GpuError::cl("clCreateCommandQueue", e))?;
        Ok(Shared { queue, context })
    }
}

/// The build options of every generated program: IEEE arithmetic as the
/// interpreters compute it (no fast or unsafe math, no `mad`; contraction
/// is off in the prelude), correctly rounded `/` and `sqrt` on `float`, and
/// `double` where the program uses it (refused on a device without it).
pub const BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

fn options(device: &DeviceInfo, fp64: bool) -> Result<String, GpuError> {
    let mut o = BUILD_OPTIONS.to_string();
    if fp64 {
        if !device.fp64 {
            return Err(GpuError::Build(format!(
                "the program uses f64, but the device {} has no double precision (cl_khr_fp64)",
                device.label()
            )));
        }
        o.push_str(" -D FM_FP64");
    }
    o.push_str(&tuning(
        std::env::var("FUNMEM_OPENCL_TUNING").ok().as_deref(),
    )?);
    Ok(o)
}

/// Build options from `FUNMEM_OPENCL_TUNING`: `NAME=N` pairs, separated by
/// spaces, setting the parallel reduce's and scan's `FM_UNROLL_<size>` and
/// `FM_SCAN_TILE_<size>` (size 1, 4 or 8 bytes; N from 1 to 64), for
/// measuring other choices than the generated code's defaults.
fn tuning(spec: Option<&str>) -> Result<String, GpuError> {
    let mut o = String::new();
    for pair in spec.unwrap_or("").split_whitespace() {
        let ok = pair.split_once('=').and_then(|(name, n)| {
            let size = name
                .strip_prefix("FM_UNROLL_")
                .or_else(|| name.strip_prefix("FM_SCAN_TILE_"))?;
            let n: u32 = n.parse().ok()?;
            (matches!(size, "1" | "4" | "8") && (1..=64).contains(&n)).then_some(())
        });
        if ok.is_none() {
            return Err(GpuError::Build(format!(
                "FUNMEM_OPENCL_TUNING: `{pair}` is not FM_UNROLL_<size>=N or FM_SCAN_TILE_<size>=N (size 1, 4 or 8; N from 1 to 64)"
            )));
        }
        o.push_str(" -D ");
        o.push_str(pair);
    }
    Ok(o)
}

/// Work-items per group for `kernels` on `device`: [`GROUP`], or the least
/// that one of them allows (CL_KERNEL_WORK_GROUP_SIZE, which its register
/// use lowers), so that no launch asks for more than its kernel can have.
fn group_for(device: &DeviceInfo, kernels: &[Kernel]) -> usize {
    kernels
        .iter()
        .filter_map(|k| k.get_work_group_size(device.id()).ok())
        .fold(GROUP, usize::min)
        .max(1)
}

/// The program's kernels and the prelude's `fm_zero`.
fn build(
    context: &Context,
    c: &Compiled,
    options: &str,
) -> Result<(Vec<Kernel>, Option<Kernel>), GpuError> {
    // Nothing to build for a program that neither launches a kernel nor
    // allocates a block (which `fm_zero` zeroes).
    if c.kernels.is_empty() && !c.allocates() {
        return Ok((Vec::new(), None));
    }
    let program = build_source(context, &c.source, options)?;
    Ok((kernels_of(&program, c)?, Some(zero_of(&program)?)))
}

fn zero_of(program: &ClProgram) -> Result<Kernel, GpuError> {
    Kernel::create(program, "fm_zero").map_err(|e| GpuError::cl("clCreateKernel fm_zero", e))
}

fn build_source(context: &Context, source: &str, options: &str) -> Result<ClProgram, GpuError> {
    // `-w`: the generated code has unused variables and parameters by
    // design; errors still reach the build log.
    let options = format!("-w {options}");
    let _setup = crate::device::setup_lock();
    ClProgram::create_and_build_from_source(context, source, &options).map_err(|log| {
        if log.contains("DLOPEN") {
            GpuError::NoPlatform(log)
        } else {
            GpuError::Build(log)
        }
    })
}

fn kernels_of(program: &ClProgram, c: &Compiled) -> Result<Vec<Kernel>, GpuError> {
    c.kernels
        .iter()
        .map(|k| {
            Kernel::create(program, &k.name)
                .map_err(|e| GpuError::cl(format!("clCreateKernel {}", k.name), e))
        })
        .collect()
}

/// An input block: its name, its size, and the arrays laid out in it.
type InputBlock<'v> = (Name, i64, Vec<(&'v ArrayValue, Lmad<i64>, &'v ArrDecl)>);

struct Host<'a> {
    rt: &'a Runtime,
    count: bool,
    /// The host's scalar variables.
    vals: HashMap<Name, Const>,
    /// Each `mem` variable's block, `None` while unset.
    mems: HashMap<Name, Option<usize>>,
    /// Every block made in this run; `None` once freed.
    blocks: Vec<Option<Block>>,
    /// How many `mem` variables hold each block.
    holders: Vec<u32>,
    /// Bytes of the blocks not freed yet.
    live_bytes: u64,
    stats: RunStats,
    /// The launches whose times are not summed yet (at most
    /// [`PENDING_LAUNCHES`]).
    events: Vec<(usize, Event)>,
    /// Cells allocated, against the heap limit.
    cells: u64,
    /// Fuel spent: kernel iterations launched and host loop iterations.
    spent: u64,
    limits: Limits,
    /// The error buffer of this run.
    err: Option<Buffer<cl_long>>,
    /// The access counters of this run.
    counts: Option<Buffer<cl_long>>,
    /// The kernels launched since the device was last waited for, each
    /// once (kernel, work-items, work-group size), for naming the culprit
    /// when a wait reports that a kernel failed.
    unsettled: Vec<(usize, usize, usize)>,
}

/// What [`Host::red_stages`] did.
enum Stages {
    /// Nothing: the count was 0 or less; the neutral element.
    Empty(Const),
    /// Enqueued the stages: the partials buffer and the number of groups
    /// `G` (a reduce's result is partial `G`).
    Done(Buffer<cl_uchar>, usize),
}

/// Sets kernel argument `arg` to a scalar of its C type.
///
/// # Safety
/// `arg` must be a parameter of `c`'s type (`codegen::ctype`).
unsafe fn set_scalar(kernel: &Kernel, arg: u32, c: Const) -> opencl3::Result<()> {
    match c {
        Const::Bool(b) => kernel.set_arg(arg, &(b as u8)),
        Const::I32(k) => kernel.set_arg(arg, &k),
        Const::I64(k) => kernel.set_arg(arg, &k),
        Const::F32(b) => kernel.set_arg(arg, &f32::from_bits(b)),
        Const::F64(b) => kernel.set_arg(arg, &f64::from_bits(b)),
    }
}

fn program(e: EvalError) -> GpuError {
    GpuError::Program(Box::new(e))
}

fn freed() -> GpuError {
    GpuError::Cl(
        "internal error: a block was used after it was freed".into(),
        0,
    )
}

fn stuck(rule: &'static str, span: Span, msg: impl Into<String>) -> GpuError {
    GpuError::Program(Box::new(EvalError::stuck(rule, span, msg)))
}

impl Host<'_> {
    fn program(&mut self, inputs: &[Value]) -> Result<Vec<Value>, GpuError> {
        let err = self.buffer(3, "the error buffer")?;
        self.err = Some(err);
        if self.count {
            let n = 4 * self.rt.compiled.kernels.len().max(1);
            let c = self.buffer(n, "the access counters")?;
            self.counts = Some(c);
        }
        self.zero_aux()?;
        self.bind_inputs(inputs)?;
        // The timed part starts once the inputs are on the device.
        self.finish("waiting for the inputs")?;
        let start = Instant::now();
        // Blocks are freed after their last use on the host, as a real
        // runtime does, so that the peak is the most memory live at once.
        let rt = self.rt;
        for (s, dying) in rt.compiled.host.iter().zip(&rt.compiled.dying) {
            if let Err(e) = self.stmt(s) {
                // A failure of a kernel that nothing waited for (a launch,
                // a device reduce) comes first: it happened earlier.
                if matches!(e, GpuError::Program(_)) {
                    self.check_error()?;
                }
                return Err(e);
            }
            self.release(dying);
        }
        self.check_error()?;
        self.finish("waiting for the program")?;
        self.stats.runtime_ns = start.elapsed().as_nanos() as u64;
        self.results()
    }

    /// Waits until the device has done everything enqueued.
    fn finish(&self, what: &str) -> Result<(), GpuError> {
        self.rt
            .shared
            .queue
            .finish()
            .map_err(|e| GpuError::cl(what.to_string(), e))
    }

    fn buffer(&self, n: usize, what: &str) -> Result<Buffer<cl_long>, GpuError> {
        // SAFETY: a fresh buffer of n >= 1 elements, no host pointer.
        unsafe {
            Buffer::<cl_long>::create(
                &self.rt.shared.context,
                CL_MEM_READ_WRITE,
                n.max(1),
                ptr::null_mut(),
            )
        }
        .map_err(|e| GpuError::cl(format!("creating {what} ({} bytes)", 8 * n.max(1)), e))
    }

    fn zero_aux(&mut self) -> Result<(), GpuError> {
        let q = &self.rt.shared.queue;
        for b in [self.err.as_mut(), self.counts.as_mut()]
            .into_iter()
            .flatten()
        {
            let n = b.size().unwrap_or(8);
            // SAFETY: the pattern is one i64, n is the buffer's byte size.
            unsafe { q.enqueue_fill_buffer(b, &[0i64], 0, n, &[]) }
                .map_err(|e| GpuError::cl("clEnqueueFillBuffer", e))?;
        }
        Ok(())
    }

    /// The first failed check of any kernel so far, as the program's error.
    fn check_error(&mut self) -> Result<(), GpuError> {
        let Some(err) = &self.err else { return Ok(()) };
        let mut v = [0i64; 3];
        // SAFETY: the error buffer has three elements.
        unsafe {
            self.rt
                .shared
                .queue
                .enqueue_read_buffer(err, CL_BLOCKING, 0, &mut v, &[])
        }
        .map_err(|e| self.waited("reading the error buffer", e))?;
        self.unsettled.clear();
        self.stats.error_checks += 1;
        let site = (v[0] & 0xffff_ffff) as usize;
        if site == 0 {
            return Ok(());
        }
        match self.rt.compiled.sites.get(site - 1) {
            Some(s) => {
                let kind = if matches!(s.what, crate::codegen::SiteKind::Fuel) {
                    ErrorKind::OutOfFuel
                } else {
                    ErrorKind::Stuck
                };
                Err(GpuError::Program(Box::new(EvalError {
                    kind,
                    rule: s.rule,
                    span: s.span,
                    message: s.message(v[1], v[2]),
                })))
            }
            None => Err(GpuError::Cl(format!("unknown error site {site}"), 0)),
        }
    }

    // ---- scalars ----

    /// An `i64` expression (a size, an index, a bound).
    fn eval(&self, e: &SExp, rule: &'static str, span: Span) -> Result<i64, GpuError> {
        Ok(self.eval_c(e, rule, span)?.to_bits() as i64)
    }

    /// A scalar expression, by the interpreters' typed operators.
    fn eval_c(&self, e: &SExp, rule: &'static str, span: Span) -> Result<Const, GpuError> {
        match e {
            SExp::Atom(Atom::Int(k, _)) => Ok(Const::I64(*k)),
            SExp::Atom(Atom::Const(c, _)) => Ok(*c),
            SExp::Atom(Atom::Var(x)) => self.vals.get(&x.name).copied().ok_or_else(|| {
                stuck(
                    rule,
                    x.span,
                    format!("`{}` is not a scalar variable in scope", x.name),
                )
            }),
            SExp::Un(op, e, _) => {
                let c = self.eval_c(e, rule, span)?;
                let t = c.prim();
                let to = match op {
                    UnOp::Conv(to) => *to,
                    _ => t,
                };
                Ok(Const::from_bits(to, unop_t(*op, t, c.to_bits())))
            }
            SExp::Bin(op, l, r, _) => {
                let (a, b) = (self.eval_c(l, rule, span)?, self.eval_c(r, rule, span)?);
                let t = a.prim();
                let to = match op {
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                        Prim::Bool
                    }
                    _ => t,
                };
                binop_t(*op, t, a.to_bits(), b.to_bits())
                    .map(|w| Const::from_bits(to, w))
                    .map_err(|DivByZero| {
                        stuck(
                            rule,
                            span,
                            format!("division by zero: {a} {} 0", op.symbol()),
                        )
                    })
            }
        }
    }

    fn block(&self, m: &Name, rule: &'static str, span: Span) -> Result<usize, GpuError> {
        match self.mems.get(m) {
            Some(Some(b)) => Ok(*b),
            _ => Err(stuck(
                rule,
                span,
                format!("block `{m}` is used before it is allocated"),
            )),
        }
    }

    // ---- statements ----

    fn stmts(&mut self, ss: &[HostStmt]) -> Result<(), GpuError> {
        for s in ss {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &HostStmt) -> Result<(), GpuError> {
        match s {
            HostStmt::Var(x, ImpType::Prim(t)) => {
                self.vals.insert(x.clone(), t.zero());
            }
            HostStmt::Var(x, ImpType::Mem) => self.hold(x, None),
            HostStmt::Assign(x, e, span) => {
                let v = self.eval_c(e, ASSIGN_INT, *span)?;
                self.vals.insert(x.clone(), v);
            }
            // E-IMP-ASSERT, under the source rule it stands for.
            HostStmt::Assert(c, e, span) => {
                if self.eval_c(e, ASSERT, *span)?.to_bits() == 0 {
                    let vars = e.distinct_vars().into_iter().map(|x| {
                        let v = self.vals.get(&x.name).map_or(0, |c| c.to_bits() as i64);
                        (x.name.as_str(), v)
                    });
                    let msg = funmem_semantics::imp::assert_message(
                        *c,
                        &funmem_lang::print::sexp_string(e),
                        vars,
                    );
                    return Err(stuck(c.rule(), *span, msg));
                }
            }
            HostStmt::AssignMem(x, y) => {
                let b = self.mems.get(y).copied().flatten();
                self.hold(x, b);
            }
            HostStmt::Alloc(x, e, t, span) => {
                let n = self.eval(e, ALLOC, *span)?;
                let bytes = n.saturating_mul(t.size() as i64);
                let b = self.allocate(bytes, x, ALLOC, *span, false)?;
                self.zero(b)?;
                self.hold(x, Some(b));
            }
            HostStmt::Read(x, m, e, span) => {
                let at = self.eval(e, READ, *span)?;
                let t = self.vals.get(x).map_or(Prim::I64, |c| c.prim());
                let b = self.block(m, READ, *span)?;
                // A kernel's failure comes first: it happened earlier.
                self.check_error()?;
                let len = self.blk(b)?.len;
                let size = t.size() as i64;
                if at < 0 || at >= len / size {
                    return Err(stuck(
                        READ,
                        *span,
                        format!(
                            "read out of bounds: offset {at} of block `{m}` of size {} ({len} bytes)",
                            len / size
                        ),
                    ));
                }
                let mut v = vec![0u8; size as usize];
                // SAFETY: the element is inside the buffer.
                unsafe {
                    self.rt.shared.queue.enqueue_read_buffer(
                        &self.blk(b)?.buf,
                        CL_BLOCKING,
                        (at * size) as usize,
                        &mut v,
                        &[],
                    )
                }
                .map_err(|e| self.waited("a host read of a block", e))?;
                self.stats.sync_reads += 1;
                self.stats.d2h_transfers += 1;
                self.stats.d2h_bytes += size as u64;
                self.vals
                    .insert(x.clone(), Elems::from_le_bytes(t, &v).get(0));
            }
            HostStmt::Write(m, i, e, span) => {
                let at = self.eval(i, WRITE, *span)?;
                let val = self.eval_c(e, WRITE, *span)?;
                let b = self.block(m, WRITE, *span)?;
                let len = self.blk(b)?.len;
                let size = val.prim().size() as i64;
                if at < 0 || at >= len / size {
                    self.check_error()?;
                    return Err(stuck(
                        WRITE,
                        *span,
                        format!(
                            "write out of bounds: offset {at} of block `{m}` of size {} ({len} bytes)",
                            len / size
                        ),
                    ));
                }
                let mut one = Elems::with_capacity(val.prim(), 1);
                one.push(val);
                let bytes = one.to_le_bytes();
                let rt = self.rt;
                let blk = self.blk_mut(b)?;
                // SAFETY: the element is inside the buffer; the call blocks,
                // so `bytes` outlives it.
                unsafe {
                    rt.shared.queue.enqueue_write_buffer(
                        &mut blk.buf,
                        CL_BLOCKING,
                        (at * size) as usize,
                        &bytes,
                        &[],
                    )
                }
                .map_err(|e| self.waited("a host write of a block", e))?;
                self.stats.host_writes += 1;
                self.stats.h2d_transfers += 1;
                self.stats.h2d_bytes += size as u64;
            }
            HostStmt::Reduce(x, r) => {
                let v = self.red(*r)?;
                self.vals.insert(x.clone(), v);
            }
            HostStmt::Scan(r) => {
                self.red_stages(*r)?;
            }
            HostStmt::ReduceInto {
                red,
                index,
                block,
                at,
                span,
            } => {
                // The kernel's one iteration: its index is 0, for the
                // reduce's kernels and the write's index alike.
                let outer = self.vals.insert(index.clone(), Const::I64(0));
                let r = self.red_into(*red, block, at, *span);
                match outer {
                    Some(v) => self.vals.insert(index.clone(), v),
                    None => self.vals.remove(index),
                };
                r?;
            }
            HostStmt::If(c, a, b) => {
                let v = self.vals.get(c).map(|c| c.to_bits()).ok_or_else(|| {
                    stuck(
                        TRUE,
                        Span::DUMMY,
                        format!("`{c}` is not an `int` variable in scope"),
                    )
                })?;
                if v != 0 {
                    self.stmts(a)?;
                } else {
                    self.stmts(b)?;
                }
            }
            // E-IMP-FOR: the bound once; a bound of 0 or less runs nothing.
            HostStmt::For(i, n, body, span) => {
                let n = self.eval(n, FOR, *span)?;
                for j in 0..n.max(0) {
                    self.spend_loop(FOR, *span)?;
                    self.vals.insert(i.clone(), Const::I64(j));
                    self.stmts(body)?;
                }
            }
            // E-IMP-WHILE: the condition before each iteration.
            HostStmt::While(c, body, span) => loop {
                let v = self.vals.get(c).map(|c| c.to_bits()).ok_or_else(|| {
                    stuck(
                        WHILE,
                        *span,
                        format!("`{c}` is not an `int` variable in scope"),
                    )
                })?;
                if v == 0 {
                    break;
                }
                self.spend_loop(WHILE, *span)?;
                self.stmts(body)?;
            },
            HostStmt::Launch(k) => self.launch(*k)?,
        }
        Ok(())
    }

    /// Spends [`LOOP_FUEL`] for one iteration of a host loop.
    fn spend_loop(&mut self, rule: &'static str, span: Span) -> Result<(), GpuError> {
        if self.limits.fuel.saturating_sub(self.spent) < LOOP_FUEL {
            // A kernel's failure comes first: it happened earlier.
            self.check_error()?;
            return Err(GpuError::Program(Box::new(EvalError {
                kind: ErrorKind::OutOfFuel,
                rule,
                span,
                message: format!(
                    "out of fuel in a loop on the host: the fuel of {} is spent (each \
                     iteration of a host loop costs {LOOP_FUEL}, each launch its \
                     iterations; raise it with --fuel)",
                    self.limits.fuel
                ),
            })));
        }
        self.spent += LOOP_FUEL;
        Ok(())
    }

    /// Zeroes block `b` (E-IMP-ALLOC) with the prelude's `fm_zero`: at most
    /// 2^20 work-items, each zeroing every 2^20-th word from its own.
    fn zero(&mut self, b: usize) -> Result<(), GpuError> {
        let words = (self.blk(b)?.len.max(0) as u64).div_ceil(8);
        if words == 0 {
            return Ok(());
        }
        let Some(kernel) = &self.rt.zero else {
            return Err(GpuError::Cl(
                "internal error: a block to zero, but no fm_zero kernel".into(),
                0,
            ));
        };
        let mem = self.blk(b)?.buf.get();
        let global = (words as usize).min(1 << 20).div_ceil(256) * 256;
        let cl = |e| GpuError::cl("zeroing a block", e);
        // SAFETY: fm_zero takes a buffer and a long; the buffer has at
        // least `words` 8-byte words (`allocate` rounds it up).
        unsafe {
            kernel.set_arg(0, &mem).map_err(cl)?;
            kernel.set_arg(1, &(words as cl_long)).map_err(cl)?;
            self.rt
                .shared
                .queue
                .enqueue_nd_range_kernel(
                    kernel.get(),
                    1,
                    ptr::null(),
                    [global].as_ptr(),
                    ptr::null(),
                    &[],
                )
                .map_err(cl)?;
        }
        if self.rt.sync {
            self.rt
                .shared
                .queue
                .finish()
                .map_err(|e| GpuError::cl("waiting for a block to be zeroed", e))?;
        }
        Ok(())
    }

    /// The error of a call that waited for the device and failed with `e`:
    /// where kernels ran since the last wait and the code is one that
    /// OpenCL gives for a failed kernel (NVIDIA's CL_OUT_OF_RESOURCES after
    /// an access outside every buffer, say), a [`GpuError::KernelFailed`]
    /// that names them, else the call's own failure.
    fn waited(&self, what: &str, e: ClError) -> GpuError {
        if self.unsettled.is_empty()
            || !matches!(
                e.0,
                CL_OUT_OF_RESOURCES | CL_INVALID_COMMAND_QUEUE | NV_ILLEGAL_ADDRESS
            )
        {
            return GpuError::cl(what, e);
        }
        let ks: Vec<String> = self
            .unsettled
            .iter()
            .map(|&(k, g, l)| self.kernel_note(k, g, l))
            .collect();
        let sync = if self.rt.sync {
            String::new()
        } else {
            format!("; set {SYNC_ENV}=1 to wait after every launch and so name the one that failed")
        };
        GpuError::KernelFailed(format!(
            "{e} when {what}, after launching {}{sync}",
            ks.join(", ")
        ))
    }

    /// Kernel `k` as an error names it: its launch and what the device
    /// says it allows and needs.
    fn kernel_note(&self, k: usize, global: usize, local: usize) -> String {
        let info = &self.rt.compiled.kernels[k];
        let mut s = format!(
            "{} (over `{}`: {global} work-items in groups of {local}",
            info.name, info.index
        );
        let kernels = match (&self.rt.counting, self.count) {
            (Some(c), true) => c,
            _ => &self.rt.kernels,
        };
        if let Some(kernel) = kernels.get(k) {
            let dev = self.rt.device.id();
            if let Ok(w) = kernel.get_work_group_size(dev) {
                let _ = write!(s, "; the device allows groups of {w}");
            }
            if let Ok(p) = kernel.get_private_mem_size(dev) {
                let _ = write!(s, ", {p} bytes of private memory a work-item");
            }
        }
        s.push(')');
        s
    }

    /// Adds the device times of the finished launches to the statistics
    /// and lets their events go (the queue must have finished them).
    fn settle_events(&mut self) {
        for (k, ev) in self.events.drain(..) {
            if let (Ok(a), Ok(b)) = (ev.profiling_command_start(), ev.profiling_command_end()) {
                self.stats.kernel_ns[k] += b.saturating_sub(a);
            }
        }
    }

    /// A device buffer of `n` bytes for block `m`. The device's memory
    /// bounds it: no buffer larger than the device's largest, and no more
    /// bytes live at once than the device has, each refused before it is
    /// made, as the allocation's own error. An input block (`host`) is laid
    /// out on the host first, so it counts against the heap limit too;
    /// the blocks the program allocates do not (that limit bounds what the
    /// host holds, not the device).
    fn allocate(
        &mut self,
        n: i64,
        m: &Name,
        rule: &'static str,
        span: Span,
        host: bool,
    ) -> Result<usize, GpuError> {
        if n < 0 {
            self.check_error()?;
            return Err(stuck(
                rule,
                span,
                format!("allocation of a negative size: {n}"),
            ));
        }
        // The heap limit counts 8-byte cells.
        let cells = if host {
            match self
                .limits
                .charge(self.cells, (n as u64).div_ceil(8), rule, span)
            {
                Ok(cells) => cells,
                Err(e) => {
                    self.check_error()?;
                    return Err(GpuError::Program(Box::new(e)));
                }
            }
        } else {
            self.cells
        };
        let bytes = n as u64;
        let dev = &self.rt.device;
        let over = if dev.max_alloc > 0 && bytes > dev.max_alloc {
            Some(format!(
                "larger than the device's largest buffer ({} bytes; {} in all)",
                dev.max_alloc, dev.global_mem
            ))
        } else if dev.global_mem > 0 && self.live_bytes.saturating_add(bytes) > dev.global_mem {
            Some(format!(
                "more than the device's memory with the {} bytes live ({} bytes in all)",
                self.live_bytes, dev.global_mem
            ))
        } else {
            None
        };
        if let Some(why) = over {
            // A kernel's failure comes first: it happened earlier.
            self.check_error()?;
            return Err(GpuError::Program(Box::new(EvalError {
                kind: ErrorKind::OutOfHeap,
                rule,
                span,
                message: format!(
                    "out of device memory: block `{m}` of {bytes} bytes is {why}; \
                     on {}",
                    dev.label()
                ),
            })));
        }
        // SAFETY: a fresh buffer of at least one byte, no host pointer.
        let buf = unsafe {
            Buffer::<cl_uchar>::create(
                &self.rt.shared.context,
                CL_MEM_READ_WRITE,
                (n as usize).max(8).next_multiple_of(8),
                ptr::null_mut(),
            )
        }
        .map_err(|e| GpuError::cl(format!("creating block `{m}` ({n} bytes)"), e))?;
        self.cells = cells;
        self.stats.allocations += 1;
        self.stats.bytes_allocated += bytes;
        self.live_bytes += bytes;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.live_bytes);
        self.blocks.push(Some(Block { buf, len: n }));
        self.holders.push(0);
        Ok(self.blocks.len() - 1)
    }

    fn blk(&self, b: usize) -> Result<&Block, GpuError> {
        self.blocks
            .get(b)
            .and_then(Option::as_ref)
            .ok_or_else(freed)
    }

    fn blk_mut(&mut self, b: usize) -> Result<&mut Block, GpuError> {
        self.blocks
            .get_mut(b)
            .and_then(Option::as_mut)
            .ok_or_else(freed)
    }

    /// Makes `x` hold block `b` (or none), letting go of what it held.
    fn hold(&mut self, x: &Name, b: Option<usize>) {
        if let Some(b) = b {
            self.holders[b] += 1;
        }
        if let Some(Some(old)) = self.mems.insert(x.clone(), b) {
            self.let_go(old);
        }
    }

    /// One holder fewer for block `b`; freed when none is left.
    fn let_go(&mut self, b: usize) {
        self.holders[b] = self.holders[b].saturating_sub(1);
        if self.holders[b] == 0 {
            if let Some(blk) = self.blocks[b].take() {
                self.live_bytes -= blk.len as u64;
                // Dropping the buffer releases it; OpenCL keeps it until
                // the commands that use it have finished.
                drop(blk);
            }
        }
    }

    /// The variables in `dying` are not used again: their blocks may go.
    fn release(&mut self, dying: &[Name]) {
        for x in dying {
            if let Some(Some(b)) = self.mems.remove(x) {
                self.let_go(b);
            }
        }
    }

    /// A host-level `reduce` (E-IMP-REDUCE): its stages
    /// ([`Host::red_stages`]), then its result in one synchronous read.
    fn red(&mut self, r: usize) -> Result<Const, GpuError> {
        let (part, groups) = match self.red_stages(r)? {
            Stages::Empty(ne) => return Ok(ne),
            Stages::Done(part, groups) => (part, groups),
        };
        let elem = self.rt.compiled.reds[r].elem;
        let size = elem.size() as usize;
        let mut v = vec![0u8; size];
        // SAFETY: partial `groups` is inside the buffer.
        unsafe {
            self.rt
                .shared
                .queue
                .enqueue_read_buffer(&part, CL_BLOCKING, groups * size, &mut v, &[])
        }
        .map_err(|e| self.waited("reading the result of a reduce", e))?;
        self.stats.sync_reads += 1;
        self.stats.d2h_transfers += 1;
        self.stats.d2h_bytes += size as u64;
        // A failure in an element or the operator makes the result stuck.
        self.check_error()?;
        Ok(Elems::from_le_bytes(elem, &v).get(0))
    }

    /// A device reduce ([`HostStmt::ReduceInto`]): the reduce's stages as a
    /// host-level reduce's, then its result copied on the device
    /// (`clEnqueueCopyBuffer` from the partials buffer) into block `m` at
    /// element `at`, all enqueued and nothing waited for: no synchronous
    /// read. An empty reduce (a count of 0 or less) writes its neutral
    /// element there with `clEnqueueFillBuffer`, a one-element pattern that
    /// OpenCL copies before the call returns, so the write does not block
    /// and no host memory has to outlive it (and no kernel is needed). A
    /// failure in an element or the operator is found at the next check of
    /// the error buffer, as a kernel's; an error of the write itself (its
    /// index, its bounds) comes after any such failure, as in the kernel.
    fn red_into(&mut self, r: usize, m: &Name, at: &SExp, span: Span) -> Result<(), GpuError> {
        let stages = self.red_stages(r)?;
        let elem = self.rt.compiled.reds[r].elem;
        let size = elem.size() as i64;
        let found = (|| {
            let at = self.eval(at, WRITE, span)?;
            let b = self.block(m, WRITE, span)?;
            let len = self.blk(b)?.len;
            if at < 0 || at >= len / size {
                return Err(stuck(
                    WRITE,
                    span,
                    format!(
                        "write out of bounds: offset {at} of block `{m}` of size {} ({len} bytes)",
                        len / size
                    ),
                ));
            }
            Ok((at, b))
        })();
        let (at, b) = match found {
            Ok(x) => x,
            Err(e) => {
                // A failure of the reduce comes first: it happened earlier.
                self.check_error()?;
                return Err(e);
            }
        };
        let offset = (at * size) as usize;
        let rt = self.rt;
        match stages {
            Stages::Empty(ne) => {
                let mut one = Elems::with_capacity(elem, 1);
                one.push(ne);
                let pattern = one.to_le_bytes();
                let blk = self.blk_mut(b)?;
                // SAFETY: the element is inside the buffer, and the pattern
                // is one element (1, 4 or 8 bytes, the offset a multiple of
                // it), which OpenCL copies before the call returns.
                unsafe {
                    rt.shared.queue.enqueue_fill_buffer(
                        &mut blk.buf,
                        &pattern,
                        offset,
                        size as usize,
                        &[],
                    )
                }
                .map_err(|e| self.waited("writing the neutral element of a reduce", e))?;
                self.stats.h2d_transfers += 1;
                self.stats.h2d_bytes += size as u64;
            }
            Stages::Done(part, groups) => {
                let blk = self.blk_mut(b)?;
                // SAFETY: partial `groups` is inside the partials buffer and
                // the element inside the block; releasing the partials
                // buffer afterwards waits for the copy (OpenCL frees a
                // buffer once the commands that use it have finished).
                unsafe {
                    rt.shared.queue.enqueue_copy_buffer(
                        &part,
                        &mut blk.buf,
                        groups * size as usize,
                        offset,
                        size as usize,
                        &[],
                    )
                }
                .map_err(|e| self.waited("copying the result of a reduce", e))?;
                self.stats.device_copies += 1;
            }
        }
        if rt.sync {
            rt.shared
                .queue
                .finish()
                .map_err(|e| self.waited("waiting for the result of a reduce", e))?;
            self.unsettled.clear();
        }
        Ok(())
    }

    /// The stages of a host-level `reduce` or `scan` over `G` work-groups,
    /// where `G` is enough groups to fill the device, enqueued: the
    /// partials buffer and `G` (a reduce's result is partial `G`), or the
    /// neutral element when the count is 0 or less (nothing launched).
    /// Spends the count's fuel.
    fn red_stages(&mut self, r: usize) -> Result<Stages, GpuError> {
        let info = &self.rt.compiled.reds[r];
        let rule = if info.scan { SCAN } else { REDUCE };
        let n = self.eval(&info.count, rule, info.span)?;
        let ne = self.eval_c(&info.ne, rule, info.span)?;
        if n <= 0 {
            return Ok(Stages::Empty(ne));
        }
        let left = self.limits.fuel.saturating_sub(self.spent);
        if n as u64 > left {
            self.check_error()?;
            return Err(GpuError::Program(Box::new(EvalError {
                kind: ErrorKind::OutOfFuel,
                rule,
                span: info.span,
                message: format!(
                    "a {} of {n} elements exceeds the fuel left ({left} of {}; raise it with --fuel)",
                    if info.scan { "scan" } else { "reduce" },
                    self.limits.fuel
                ),
            })));
        }
        self.spent += n as u64;
        let fuel = (left / n as u64).clamp(1, i64::MAX as u64) as i64;
        let group = RED_GROUP;
        let units = self.rt.device.compute_units.max(1) as i64;
        let groups = (n as u64)
            .div_ceil(group as u64)
            .min(8 * units as u64)
            .max(1) as usize;
        let size = info.elem.size() as usize;
        // SAFETY: a fresh buffer, no host pointer.
        let part = unsafe {
            Buffer::<cl_uchar>::create(
                &self.rt.shared.context,
                CL_MEM_READ_WRITE,
                (groups + 1) * size,
                ptr::null_mut(),
            )
        }
        .map_err(|e| GpuError::cl("creating the partial results of a reduce", e))?;
        let kernels = info.kernels.clone();
        for k in kernels {
            let stage = self.rt.compiled.kernels[k].stage.map(|s| s.1);
            let (count, global) = match stage {
                Some(crate::codegen::Stage::Combine) => (groups as i64, group),
                _ => (n, groups * group),
            };
            self.enqueue(k, count, &[], fuel, Some(part.get()), global, group)?;
        }
        Ok(Stages::Done(part, groups))
    }

    fn launch(&mut self, k: usize) -> Result<(), GpuError> {
        let info = &self.rt.compiled.kernels[k];
        let n = self.eval(&info.bound, KERNEL, info.span)?;
        if n < 0 {
            self.check_error()?;
            return Err(stuck(
                KERNEL,
                info.span,
                format!("negative kernel bound {n}"),
            ));
        }
        if n == 0 {
            return Ok(());
        }
        let left = self.limits.fuel.saturating_sub(self.spent);
        if n as u64 > left {
            self.check_error()?;
            let message = if self.spent == 0 {
                format!(
                    "a kernel of {n} iterations exceeds the fuel of {}",
                    self.limits.fuel
                )
            } else {
                format!(
                    "a kernel of {n} iterations exceeds the fuel left ({left} of {}; \
                     raise it with --fuel)",
                    self.limits.fuel
                )
            };
            return Err(GpuError::Program(Box::new(EvalError {
                kind: ErrorKind::OutOfFuel,
                rule: KERNEL,
                span: info.span,
                message,
            })));
        }
        // The work-items: the outer iterations times the flattened inner
        // levels' (each spends one unit, as a nested iteration did), at
        // most what is left.
        let (steps, items) = self.steps(k, n, left);
        self.spent += items;
        // Each work-item's share of what was left at the launch.
        let fuel = (left / items).clamp(1, i64::MAX as u64) as i64;
        let group = if self.count {
            self.rt.counting_group
        } else {
            self.rt.group
        };
        let global = usize::try_from(items)
            .ok()
            .and_then(|m| m.div_ceil(group).checked_mul(group))
            .ok_or_else(|| {
                stuck(
                    KERNEL,
                    info.span,
                    format!("a kernel of {n} iterations is too large to launch"),
                )
            })?;
        self.enqueue(k, n, &steps, fuel, None, global, group)
    }

    /// The steps of kernel `k`'s flattened levels ([`crate::codegen::KernelInfo::inner`])
    /// for a launch of `n > 0` outer iterations, and the number of
    /// work-items. A level whose bound is positive runs one iteration per
    /// work-item (its step is its bound) while the work-items stay within
    /// [`FLAT_ITEMS`] and the fuel `left` (beyond it, the work-items'
    /// fuel stops the loops as it did nested kernels); otherwise, or when its bound cannot be evaluated
    /// here (the kernel then fails on it as a nested kernel does), its step
    /// is 1 and each work-item loops over it. When a block that a prefix
    /// reads is one that the innermost body writes, every step is 1: the
    /// reads must come before the writes, as in the nest.
    fn steps(&self, k: usize, n: i64, left: u64) -> (Vec<i64>, u64) {
        let info = &self.rt.compiled.kernels[k];
        let block = |m: &Name| self.mems.get(m).copied().flatten();
        let overlap = info.flat_reads.iter().any(|r| {
            block(r).is_some_and(|b| info.flat_writes.iter().any(|w| block(w) == Some(b)))
        });
        let mut items = n as u64;
        let mut steps = Vec::with_capacity(info.inner.len());
        for b in &info.inner {
            let step = match self.eval(b, KERNEL, info.span) {
                Ok(m) if m > 0 && !overlap => match items.checked_mul(m as u64) {
                    Some(t) if t <= FLAT_ITEMS.min(left) => m,
                    _ => 1,
                },
                _ => 1,
            };
            items *= step as u64;
            steps.push(step);
        }
        (steps, items)
    }

    /// Sets kernel `k`'s arguments (`n`, the fuel where it takes it, its
    /// free variables, the partials buffer of a reduce or scan stage, the
    /// error buffer, the counters) and launches it over `global` work-items
    /// in groups of `local`.
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &mut self,
        k: usize,
        n: i64,
        steps: &[i64],
        fuel: i64,
        part: Option<cl_mem>,
        global: usize,
        local: usize,
    ) -> Result<(), GpuError> {
        let info = &self.rt.compiled.kernels[k];
        let kernels = match (&self.rt.counting, self.count) {
            (Some(c), true) => c,
            _ => &self.rt.kernels,
        };
        let kernel = &kernels[k];
        let mut arg = 0u32;
        let cl = |e| GpuError::cl(format!("setting an argument of {}", info.name), e);
        // SAFETY: the arguments match the generated kernel's parameters in
        // number, order and type (codegen::Gen::kernel).
        unsafe {
            kernel.set_arg(arg, &n).map_err(cl)?;
            arg += 1;
            for step in steps {
                kernel.set_arg(arg, step).map_err(cl)?;
                arg += 1;
            }
            if info.loops {
                kernel.set_arg(arg, &fuel).map_err(cl)?;
                arg += 1;
            }
            for (x, _) in &info.scalars {
                let v = self.vals.get(x).copied().ok_or_else(|| {
                    stuck(
                        KERNEL,
                        info.span,
                        format!("`{x}` is not a scalar variable in scope"),
                    )
                })?;
                set_scalar(kernel, arg, v).map_err(cl)?;
                arg += 1;
            }
            for m in &info.mems {
                let (mem, len): (cl_mem, i64) = match self.mems.get(m).copied().flatten() {
                    Some(b) => {
                        let blk = self.blk(b)?;
                        (blk.buf.get(), blk.len)
                    }
                    // An unset block: every access is out of bounds.
                    None => (self.rt.dummy.get(), 0),
                };
                kernel.set_arg(arg, &mem).map_err(cl)?;
                kernel.set_arg(arg + 1, &len).map_err(cl)?;
                arg += 2;
            }
            if let Some(part) = part {
                kernel.set_arg(arg, &part).map_err(cl)?;
                arg += 1;
            }
            let err = self
                .err
                .as_ref()
                .map(|b| b.get())
                .unwrap_or(self.rt.dummy.get());
            kernel.set_arg(arg, &err).map_err(cl)?;
            let count = self
                .counts
                .as_ref()
                .map(|b| b.get())
                .unwrap_or(self.rt.dummy.get());
            kernel.set_arg(arg + 1, &count).map_err(cl)?;
        }
        let (g, l) = ([global], [local]);
        if !self.unsettled.iter().any(|u| u.0 == k) {
            self.unsettled.push((k, global, local));
        }
        // SAFETY: the kernel's arguments are all set; the sizes outlive the call.
        let ev = unsafe {
            self.rt.shared.queue.enqueue_nd_range_kernel(
                kernel.get(),
                1,
                ptr::null(),
                g.as_ptr(),
                l.as_ptr(),
                &[],
            )
        }
        .map_err(|e| match e.0 {
            // The launch itself asked for more than the device has.
            CL_OUT_OF_RESOURCES | CL_INVALID_WORK_GROUP_SIZE => GpuError::KernelFailed(format!(
                "{e} when launching {}",
                self.kernel_note(k, global, local)
            )),
            _ => GpuError::cl(format!("launching {}", info.name), e),
        })?;
        self.stats.launches += 1;
        self.stats.kernel_launches[k] += 1;
        self.events.push((k, ev));
        if self.rt.sync {
            // One launch at a time: a failure names its kernel.
            self.rt
                .shared
                .queue
                .finish()
                .map_err(|e| self.waited("waiting for the launch", e))?;
            self.unsettled.clear();
        }
        if self.events.len() >= PENDING_LAUNCHES {
            // A loop launching kernels without reading anything back would
            // otherwise queue commands and keep events without bound.
            let _ = self.rt.shared.queue.finish();
            self.settle_events();
        }
        Ok(())
    }

    // ---- inputs and results (E-IMP-PROG) ----

    fn arr_layout(&self, a: &ArrDecl) -> Result<(Vec<i64>, Lmad<i64>), GpuError> {
        let ev = |e: &SExp| self.eval(e, PROG, a.span);
        let shape = a
            .shape
            .iter()
            .map(|d| ev(&SExp::Atom(d.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        let l = a.lmad.to_lmad();
        let offset = ev(&l.offset)?;
        let dims = l
            .dims
            .iter()
            .map(|d| {
                Ok(Dim {
                    elems: ev(&d.elems)?,
                    stride: ev(&d.stride)?,
                })
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        Ok((shape, Lmad { offset, dims }))
    }

    /// Parameters bound to inputs, input blocks laid out and copied in, by
    /// E-IMP-PROG's shared checks (`funmem_semantics::prog`), in parameter
    /// order as the interpreter does.
    fn bind_inputs(&mut self, inputs: &[Value]) -> Result<(), GpuError> {
        let p = &self.rt.compiled.program;
        let want = p.params.len();
        prog::check_not_too_many(want, inputs.len(), p.span).map_err(program)?;
        // Each input block: its size (just large enough for its arrays) and
        // the arrays laid out in it, in order of first appearance.
        let mut blocks: Vec<InputBlock> = Vec::new();
        for (k, q) in p.params.iter().enumerate() {
            match q {
                Param::Scalar(x, t, span) => {
                    let name = x.name.as_str();
                    let v =
                        prog::input_of(inputs, k, want, name, t.name(), *span).map_err(program)?;
                    let &Value::Scalar(c) = v else {
                        return Err(program(prog::mismatch(
                            name,
                            t.name(),
                            &v.type_name(),
                            *span,
                        )));
                    };
                    if c.prim() != *t {
                        return Err(program(prog::mismatch(
                            name,
                            t.name(),
                            &v.type_name(),
                            *span,
                        )));
                    }
                    self.vals.insert(x.name.clone(), c);
                }
                Param::Array(a) => {
                    let (shape, l) = self.arr_layout(a)?;
                    let name = a.name.name.as_str();
                    let expected = prog::type_of_shape(&shape);
                    let v = prog::input_of(inputs, k, want, name, &expected, a.span)
                        .map_err(program)?;
                    let (av, need) =
                        prog::array_input(v, name, a.span, &shape, &l).map_err(program)?;
                    if av.prim() != a.elem {
                        let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
                        let want = format!("{dims}{}", a.elem.name());
                        return Err(program(prog::mismatch(name, &want, &v.type_name(), a.span)));
                    }
                    // In bytes.
                    let need = need.unwrap_or(0).saturating_mul(a.elem.size() as i64);
                    match blocks.iter_mut().find(|(m, _, _)| *m == a.block.name) {
                        Some(b) => {
                            b.1 = b.1.max(need);
                            b.2.push((av, l, a));
                        }
                        None => blocks.push((a.block.name.clone(), need, vec![(av, l, a)])),
                    }
                }
            }
        }
        for (m, size, arrays) in blocks {
            let span = arrays
                .first()
                .map(|(_, _, a)| a.span)
                .unwrap_or(Span::DUMMY);
            // The limits first: the block is laid out on the host too.
            let b = self.allocate(size, &m, PROG, span, true)?;
            // The block's bytes, each array at its LMAD's addresses (in
            // elements of its own type), little-endian.
            let mut data = vec![0u8; size.max(0) as usize];
            for (av, l, a) in &arrays {
                let es = a.elem.size() as usize;
                let bytes = av.data.to_le_bytes();
                let mut k = 0usize;
                l.for_each_address(|addr| {
                    let at = usize::try_from(addr).ok().map(|o| o * es);
                    match at.and_then(|o| data.get_mut(o..o + es)) {
                        Some(cell) => {
                            cell.copy_from_slice(&bytes[k * es..(k + 1) * es]);
                            k += 1;
                            Ok(())
                        }
                        None => Err(EvalError::stuck(
                            PROG,
                            a.span,
                            format!(
                                "array parameter `{}`: address {addr} outside its block",
                                a.name.name
                            ),
                        )),
                    }
                })
                .map_err(program)?;
            }
            let data = &data[..];
            if size > 0 {
                let rt = self.rt;
                let blk = self.blk_mut(b)?;
                // SAFETY: data has exactly the buffer's size; the write blocks.
                unsafe {
                    rt.shared
                        .queue
                        .enqueue_write_buffer(&mut blk.buf, CL_BLOCKING, 0, data, &[])
                }
                .map_err(|e| GpuError::cl("copying an input block to the device", e))?;
                self.stats.h2d_transfers += 1;
                self.stats.h2d_bytes += size as u64;
            }
            self.hold(&m, Some(b));
        }
        Ok(())
    }

    /// The results, read back by E-IMP-PROG's shared checks; each result
    /// block is copied to the host once.
    fn results(&mut self) -> Result<Vec<Value>, GpuError> {
        let p = &self.rt.compiled.program;
        // Each block's bytes that some result reads: only those are copied
        // (a block may hold more than the results, once blocks are shared).
        let mut wanted: HashMap<usize, (i64, i64)> = HashMap::new();
        for r in &p.results {
            if let ImpResult::Array(a) = r {
                let (_, l) = self.arr_layout(a)?;
                let b = self.block(&a.block.name, PROG, a.span)?;
                if let Some((lo, hi)) = l.min_max() {
                    let es = a.elem.size() as i64;
                    let (lo, hi) = (
                        lo.saturating_mul(es),
                        hi.saturating_add(1).saturating_mul(es),
                    );
                    let e = wanted.entry(b).or_insert((lo, hi));
                    *e = (e.0.min(lo), e.1.max(hi));
                }
            }
        }
        // Per block: the first byte copied, the copy, the block's size.
        let mut host_copies: HashMap<usize, (usize, Vec<u8>, usize)> = HashMap::new();
        let mut out = Vec::new();
        // Results read back copy at most the heap limit in all.
        let mut copied = 0;
        for r in &p.results {
            match r {
                ImpResult::Scalar(x) => out.push(Value::Scalar(
                    self.vals.get(&x.name).copied().unwrap_or(Const::I64(0)),
                )),
                ImpResult::Array(a) => {
                    let (shape, l) = self.arr_layout(a)?;
                    let name = a.name.name.as_str();
                    let dims = prog::result_shape(name, a.span, &shape, self.limits.max_heap)
                        .map_err(program)?;
                    copied = self
                        .limits
                        .charge(copied, dims.1 as u64, PROG, a.span)
                        .map_err(program)?;
                    let b = self.block(&a.block.name, PROG, a.span)?;
                    if let std::collections::hash_map::Entry::Vacant(slot) = host_copies.entry(b) {
                        let blk = self.blk(b)?;
                        let len = blk.len.max(0);
                        let (lo, hi) = wanted.get(&b).copied().unwrap_or((0, 0));
                        let (start, end) = (lo.clamp(0, len), hi.clamp(0, len));
                        let mut v = vec![0u8; (end - start).max(0) as usize];
                        if !v.is_empty() {
                            // SAFETY: v has exactly the bytes from `start`
                            // on that lie inside the buffer.
                            unsafe {
                                self.rt.shared.queue.enqueue_read_buffer(
                                    &blk.buf,
                                    CL_BLOCKING,
                                    start as usize,
                                    &mut v,
                                    &[],
                                )
                            }
                            .map_err(|e| self.waited("copying a result block to the host", e))?;
                            self.stats.d2h_transfers += 1;
                            self.stats.d2h_bytes += v.len() as u64;
                        }
                        slot.insert((start as usize, v, len as usize));
                    }
                    let (start, block, block_len) = &host_copies[&b];
                    let es = a.elem.size() as usize;
                    let mut bytes = Vec::with_capacity(dims.1 * es);
                    l.for_each_address(|addr| {
                        let at = usize::try_from(addr)
                            .ok()
                            .and_then(|o| o.checked_mul(es))
                            .and_then(|o| o.checked_sub(*start));
                        match at.and_then(|o| block.get(o..o + es)) {
                            Some(cell) => {
                                bytes.extend_from_slice(cell);
                                Ok(())
                            }
                            None => Err(addr),
                        }
                    })
                    .map_err(|addr| {
                        stuck(
                            PROG,
                            a.span,
                            format!(
                                "result `{name}`: read out of bounds: offset {addr} of block `{}`, which has {} bytes",
                                a.block.name,
                                block_len
                            ),
                        )
                    })?;
                    out.push(Value::Array(ArrayValue {
                        shape: dims.0,
                        data: Elems::from_le_bytes(a.elem, &bytes),
                    }));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuning_takes_unroll_and_tile_sizes_only() {
        assert_eq!(tuning(None).unwrap(), "");
        assert_eq!(
            tuning(Some(" FM_UNROLL_4=8  FM_SCAN_TILE_8=2 ")).unwrap(),
            " -D FM_UNROLL_4=8 -D FM_SCAN_TILE_8=2"
        );
        for bad in [
            "FM_GROUP=128",
            "FM_UNROLL_2=4",
            "FM_UNROLL_4=0",
            "FM_SCAN_TILE_4=65",
            "FM_UNROLL_4",
            "-cl-fast-relaxed-math",
        ] {
            let e = tuning(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("FUNMEM_OPENCL_TUNING"), "{bad}: {e}");
        }
    }
}
