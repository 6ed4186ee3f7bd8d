//! Benchmarks: a program's runs on a device, beside a hand-written copy
//! kernel on the same device, so that every bandwidth comes with its ratio
//! to the device's practical bandwidth.
//!
//! Per dataset: one run counts the kernels' reads and writes (a build with
//! `-D FM_COUNT`, untimed) and gives the results that are checked; then
//! `warmup` runs, then `runs` timed runs, unless the dataset's time runs
//! out first. Each run gives three times: `runtime` (the host's clock from
//! the inputs being on the device to the program's last command having
//! finished, before the results are read back: Futhark's measure), kernel
//! time (profiling events) and wall time (the host's clock around the
//! whole run). A kernel's bandwidth is the bytes its work-items read and
//! wrote over its median time. The copy kernel runs once per device
//! ([`copy`]), and [`BenchReport::rate`] sets the figures beside it.

use crate::device::GpuError;
use crate::driver::{RunStats, Runtime};
use funmem_semantics::error::Limits;
use funmem_semantics::value::Value;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgram;
use opencl3::types::{cl_long, CL_BLOCKING};
use serde::Serialize;
use std::ptr;
use std::time::{Duration, Instant};

/// How to benchmark.
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Timed runs (0 counts as 1).
    pub runs: usize,
    /// Untimed runs first.
    pub warmup: usize,
    /// The interpreters' limits, applied to every run.
    pub limits: Limits,
    /// No new run of a dataset starts once it has spent this long (a
    /// running kernel cannot be stopped).
    pub timeout: Option<Duration>,
}

/// Minimum, median and maximum of some times, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Summary {
    /// Fastest.
    pub min: f64,
    /// Median (the mean of the middle two for an even count).
    pub median: f64,
    /// Slowest.
    pub max: f64,
}

impl Summary {
    /// The summary of `xs` (nanoseconds) in milliseconds.
    pub fn of_ns(xs: &[u64]) -> Summary {
        let mut v: Vec<f64> = xs.iter().map(|&x| x as f64 / 1e6).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return Summary::default();
        }
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Summary {
            min: v[0],
            median,
            max: v[n - 1],
        }
    }
}

/// One kernel's figures.
#[derive(Clone, Debug, Serialize)]
pub struct KernelReport {
    /// Its OpenCL name.
    pub name: String,
    /// Launches per run.
    pub launches: u64,
    /// Its time per run (all its launches).
    pub ms: Summary,
    /// Bytes its work-items read and wrote per run.
    pub bytes: u64,
    /// Bytes over median time, in GB/s (10^9 bytes per second).
    pub gbps: f64,
    /// `gbps` over the copy kernel's; none when the kernel moves fewer
    /// than [`MIN_RATIO_BYTES`] (or before [`BenchReport::rate`]).
    pub of_copy: Option<f64>,
}

/// The fewest bytes a kernel must move for its bandwidth to be set beside
/// the copy kernel's. Below this a launch's fixed latency, not memory,
/// decides its time, and the ratio means nothing (tiny inputs gave
/// "500% of copy").
pub const MIN_RATIO_BYTES: u64 = 16 << 20;

/// A host-level `reduce` or `scan`: the kernels of its stages together.
/// Its bytes are those its kernels' work-items read and wrote: a reduce
/// reads its elements once; a scan reads them twice (once to sum each
/// group's share, once to scan it) and writes them once.
#[derive(Clone, Debug, Serialize)]
pub struct RedReport {
    /// `reduce`, `reduce'` (a device reduce, whose result stays on the
    /// device) or `scan`, and the statement's place.
    pub what: String,
    /// The element type.
    pub elem: String,
    /// Its time per run (all its kernels).
    pub ms: Summary,
    /// Bytes read and written per run.
    pub bytes: u64,
    /// Bytes over median time, in GB/s.
    pub gbps: f64,
    /// `gbps` over the copy kernel's.
    pub of_copy: Option<f64>,
}

/// The copy kernel's figures.
#[derive(Clone, Debug, Serialize)]
pub struct CopyReport {
    /// Bytes read plus bytes written per launch.
    pub bytes: u64,
    /// Its time per launch.
    pub ms: Summary,
    /// Bytes over median time, in GB/s.
    pub gbps: f64,
}

/// What `funmem bench` measured on one dataset.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// The device, `platform: name`.
    pub device: String,
    /// Timed runs done.
    pub runs: usize,
    /// Whether the dataset's time ran out before all its runs were done.
    pub timed_out: bool,
    /// Each timed run's `runtime` (Futhark's measure: the program alone,
    /// without the initial and final transfers), in nanoseconds.
    pub runtime_ns: Vec<u64>,
    /// `runtime` per run.
    pub runtime_ms: Summary,
    /// Each timed run's time in kernels, in nanoseconds.
    pub kernel_ns: Vec<u64>,
    /// Each timed run's wall time, in nanoseconds.
    pub wall_ns: Vec<u64>,
    /// Time in kernels per run.
    pub kernel_ms: Summary,
    /// Wall time per run (inputs in, program, results out).
    pub wall_ms: Summary,
    /// Bytes read and written by all kernels per run.
    pub bytes: u64,
    /// `bytes` over median kernel time, in GB/s.
    pub gbps: f64,
    /// `gbps` over the copy kernel's; none when the kernels move fewer
    /// than [`MIN_RATIO_BYTES`] (or before [`BenchReport::rate`]).
    pub of_copy: Option<f64>,
    /// Each kernel.
    pub kernels: Vec<KernelReport>,
    /// Each host-level `reduce` and `scan`, all its kernels together.
    pub reductions: Vec<RedReport>,
    /// Memory and transfers of one run (the last).
    pub run: RunStats,
}

impl BenchReport {
    /// Sets every bandwidth beside the copy kernel's.
    pub fn rate(&mut self, copy: &CopyReport) {
        let of = |b: u64, g: f64| (b >= MIN_RATIO_BYTES && copy.gbps > 0.0).then(|| g / copy.gbps);
        self.of_copy = of(self.bytes, self.gbps);
        for k in &mut self.kernels {
            k.of_copy = of(k.bytes, k.gbps);
        }
        for r in &mut self.reductions {
            r.of_copy = of(r.bytes, r.gbps);
        }
    }
}

const COPY: &str = "__kernel void fm_copy(__global const long *src, __global long *dst, long n) {
  const long i = (long)get_global_id(0);
  if (i < n) dst[i] = src[i];
}
__kernel void fm_ones(__global long *m, long n) {
  for (long i = (long)get_global_id(0); i < n; i += (long)get_global_size(0)) m[i] = 1;
}
";

/// Benchmarks the program of `rt` on one dataset, `inputs`: the results
/// of the first (counting) run, to be checked, and the figures.
/// `progress` hears of every run finished (warm-up and timed), with the
/// count of all runs done so far.
pub fn bench(
    rt: &mut Runtime,
    inputs: &[Value],
    opts: BenchOptions,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<Value>, BenchReport), GpuError> {
    let start = Instant::now();
    let out_of_time = || opts.timeout.is_some_and(|t| start.elapsed() >= t);
    let (results, counted) = rt.run(inputs, opts.limits, true)?;
    let accesses = counted.access_bytes.clone().unwrap_or_default();
    let mut done = 0;
    let mut timed_out = false;
    for _ in 0..opts.warmup {
        if out_of_time() {
            timed_out = true;
            break;
        }
        rt.run(inputs, opts.limits, false)?;
        done += 1;
        progress(done);
    }
    let mut runs = Vec::new();
    for _ in 0..opts.runs.max(1) {
        if timed_out || out_of_time() {
            timed_out = true;
            break;
        }
        runs.push(rt.run(inputs, opts.limits, false)?.1);
        done += 1;
        progress(done);
    }
    let kernel_bytes: Vec<u64> = (0..rt.compiled().kernels.len())
        .map(|k| accesses.get(k).map_or(0, |(r, w)| r + w))
        .collect();
    let bytes: u64 = kernel_bytes.iter().sum();
    let gbps = |b: u64, ms: f64| if ms > 0.0 { b as f64 / (ms * 1e6) } else { 0.0 };
    let kernel_ns: Vec<u64> = runs.iter().map(RunStats::total_kernel_ns).collect();
    let wall_ns: Vec<u64> = runs.iter().map(|r| r.wall_ns).collect();
    let kernel_ms = Summary::of_ns(&kernel_ns);
    // Without a timed run, the counting run's memory and transfers.
    let last = runs.last().cloned().unwrap_or(counted);
    let kernels = rt
        .compiled()
        .kernels
        .iter()
        .enumerate()
        .map(|(k, info)| {
            let ms = Summary::of_ns(
                &runs
                    .iter()
                    .map(|r| r.kernel_ns.get(k).copied().unwrap_or(0))
                    .collect::<Vec<_>>(),
            );
            KernelReport {
                name: info.name.clone(),
                launches: last.kernel_launches.get(k).copied().unwrap_or(0),
                ms,
                bytes: kernel_bytes[k],
                gbps: gbps(kernel_bytes[k], ms.median),
                of_copy: None,
            }
        })
        .collect();
    let reductions = rt
        .compiled()
        .reds
        .iter()
        .map(|r| {
            let ns: Vec<u64> = runs
                .iter()
                .map(|run| {
                    r.kernels
                        .iter()
                        .map(|&k| run.kernel_ns.get(k).copied().unwrap_or(0))
                        .sum()
                })
                .collect();
            let ms = Summary::of_ns(&ns);
            let b: u64 = r.kernels.iter().map(|&k| kernel_bytes[k]).sum();
            RedReport {
                what: format!(
                    "{} (bytes {}..{})",
                    match (r.scan, r.device) {
                        (true, _) => "scan",
                        // The result stays on the device (`reduce'`).
                        (false, true) => "reduce'",
                        (false, false) => "reduce",
                    },
                    r.span.start,
                    r.span.end
                ),
                elem: r.elem.name().to_string(),
                ms,
                bytes: b,
                gbps: gbps(b, ms.median),
                of_copy: None,
            }
        })
        .collect();
    let runtime_ns: Vec<u64> = runs.iter().map(|r| r.runtime_ns).collect();
    let report = BenchReport {
        device: rt.device().label(),
        runs: runs.len(),
        timed_out,
        runtime_ms: Summary::of_ns(&runtime_ns),
        runtime_ns,
        kernel_ms,
        wall_ms: Summary::of_ns(&wall_ns),
        kernel_ns,
        wall_ns,
        bytes,
        gbps: gbps(bytes, kernel_ms.median),
        of_copy: None,
        kernels,
        reductions,
        run: last,
    };
    Ok((results, report))
}

/// The most bytes the copy kernel moves (read plus written): 1 GiB each
/// way, enough for any device's bandwidth and far less than what a
/// program's kernels may move in all over a run (hundreds of launches).
pub const MAX_COPY_BYTES: u64 = 2 << 30;

/// The copy kernel on the device of `rt`, over `bytes` (read plus
/// written; at least one element each way, at most [`MAX_COPY_BYTES`],
/// the device's largest buffer each way and a quarter of its memory).
pub fn copy(rt: &Runtime, bytes: u64, opts: BenchOptions) -> Result<CopyReport, GpuError> {
    let dev = rt.device();
    // A size the device does not report (0) bounds nothing.
    let known = |n: u64| if n == 0 { u64::MAX } else { n };
    let most = (MAX_COPY_BYTES / 16)
        .min(known(dev.max_alloc) / 8)
        .min(known(dev.global_mem) / 32)
        .max(1);
    // Half read, half written, 8 bytes an element.
    let elems = (bytes / 16).clamp(1, most);
    copy_kernel(rt.context(), rt.queue(), elems, opts)
}

/// The copy kernel over `n` elements: `warmup` untimed launches, then
/// `runs` timed ones.
fn copy_kernel(
    context: &Context,
    queue: &CommandQueue,
    n: u64,
    opts: BenchOptions,
) -> Result<CopyReport, GpuError> {
    let program = {
        let _setup = crate::device::setup_lock();
        ClProgram::create_and_build_from_source(context, COPY, "").map_err(GpuError::Build)?
    };
    let kernel = Kernel::create(&program, "fm_copy")
        .map_err(|e| GpuError::cl("clCreateKernel fm_copy", e))?;
    let mk = || {
        // SAFETY: a fresh buffer of n elements, no host pointer.
        unsafe {
            Buffer::<cl_long>::create(context, CL_MEM_READ_WRITE, n as usize, ptr::null_mut())
        }
        .map_err(|e| {
            GpuError::cl(
                format!("creating the copy kernel's buffers ({} bytes each)", 8 * n),
                e,
            )
        })
    };
    let (src, dst) = (mk()?, mk()?);
    let group = 256usize;
    // The source's elements set to 1 by a kernel (clEnqueueFillBuffer
    // stalls on NVIDIA's OpenCL from 2^31 bytes).
    let ones = Kernel::create(&program, "fm_ones")
        .map_err(|e| GpuError::cl("clCreateKernel fm_ones", e))?;
    let n_arg = n as cl_long;
    // SAFETY: two arguments matching fm_ones's parameters.
    unsafe {
        ExecuteKernel::new(&ones)
            .set_arg(&src)
            .set_arg(&n_arg)
            .set_global_work_size((n as usize).min(1 << 20).div_ceil(group) * group)
            .set_local_work_size(group)
            .enqueue_nd_range(queue)
    }
    .map_err(|e| GpuError::cl("filling the copy kernel's source", e))?;
    let global = (n as usize).div_ceil(group) * group;
    let mut times = Vec::new();
    for k in 0..opts.warmup + opts.runs.max(1) {
        // SAFETY: three arguments matching fm_copy's parameters.
        let ev = unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&src)
                .set_arg(&dst)
                .set_arg(&n_arg)
                .set_global_work_size(global)
                .set_local_work_size(group)
                .enqueue_nd_range(queue)
        }
        .map_err(|e| GpuError::cl("launching the copy kernel", e))?;
        ev.wait()
            .map_err(|e| GpuError::cl("waiting for the copy kernel", e))?;
        if k >= opts.warmup {
            let (a, b) = (
                ev.profiling_command_start().unwrap_or(0),
                ev.profiling_command_end().unwrap_or(0),
            );
            times.push(b.saturating_sub(a));
        }
    }
    // The copy must have happened, or its time means nothing.
    let mut probe = [0i64; 1];
    // SAFETY: reading one element of a buffer of n >= 1 elements.
    unsafe { queue.enqueue_read_buffer(&dst, CL_BLOCKING, 8 * (n as usize - 1), &mut probe, &[]) }
        .map_err(|e| GpuError::cl("reading the copy kernel's result", e))?;
    if probe[0] != 1 {
        return Err(GpuError::Cl("the copy kernel did not copy".into(), 0));
    }
    let ms = Summary::of_ns(&times);
    let bytes = 16 * n;
    Ok(CopyReport {
        bytes,
        ms,
        gbps: if ms.median > 0.0 {
            bytes as f64 / (ms.median * 1e6)
        } else {
            0.0
        },
    })
}
