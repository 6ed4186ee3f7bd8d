//! The OpenCL commands: `funmem lower --to opencl`, `funmem run
//! --semantics opencl`, `funmem devices` and `funmem bench`.

use crate::{load, pass_list, pipeline, report, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_gpu::{Compiled, GpuError};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::parse::AnyProgram;
use funmem_lang::Source;
use std::process::ExitCode;

/// The passes of the GPU pipeline: FUN -> FUNMEM -> simplify -> expand-gpu
/// -> IMP -> OpenCL.
pub const GPU_PASSES: &str = "simplify,expand-gpu";

/// Where the pocl kernel cache goes unless the user says otherwise.
pub fn default_pocl_cache() {
    if std::env::var_os("POCL_CACHE_DIR").is_none() {
        let dir = std::env::temp_dir().join("funmem-pocl-cache");
        let _ = std::fs::create_dir_all(&dir);
        // SAFETY: called at start-up, before any other thread reads the
        // environment.
        unsafe { std::env::set_var("POCL_CACHE_DIR", dir) };
    }
}

/// A program file through the GPU pipeline (an IMP file as it is), then
/// translated for OpenCL.
pub fn compile_file(file: &str, passes: Option<&str>) -> Result<(Source, Compiled), ExitCode> {
    let (src, p) = load(file)?;
    let passes_text = passes.unwrap_or(GPU_PASSES);
    let imp = match p {
        AnyProgram::Imp(q) => q,
        AnyProgram::Fun(_) => {
            let passes = pass_list(passes_text)?;
            let stages = pipeline(file, &src, &p, &passes, true)?;
            match stages.into_iter().last().map(|s| s.program) {
                Some(AnyProgram::Imp(q)) => q,
                _ => {
                    eprintln!("{file}: the pipeline produced no IMP program");
                    return Err(ExitCode::from(EXIT_WENT_WRONG));
                }
            }
        }
    };
    match funmem_gpu::compile(&imp) {
        Ok(c) => Ok((src, c)),
        Err(d) => {
            report(&src, &d);
            eprintln!("(passes run: {passes_text})");
            Err(ExitCode::from(EXIT_NOT_A_PROGRAM))
        }
    }
}

/// Reports an OpenCL failure: a program error at its position, anything
/// else as a line. Program errors exit 1, setup errors 2.
pub fn gpu_failure(src: &Source, e: &GpuError) -> ExitCode {
    match e {
        GpuError::Program(err) => {
            report(
                src,
                &Diagnostic::new(Phase::Eval, err.span, err.to_string()),
            );
            ExitCode::from(EXIT_WENT_WRONG)
        }
        e if e.is_program_error() => {
            eprintln!("{}: {e}", src.name);
            ExitCode::from(EXIT_WENT_WRONG)
        }
        e => {
            eprintln!("funmem: {e}");
            ExitCode::from(EXIT_NOT_A_PROGRAM)
        }
    }
}

/// The device named, reported when there is none.
pub fn device(name: Option<&str>) -> Result<funmem_gpu::DeviceInfo, ExitCode> {
    default_pocl_cache();
    funmem_gpu::select(name).map_err(|e| {
        eprintln!("funmem: {e}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })
}

/// `funmem devices`.
pub fn devices(json: bool) -> Result<ExitCode, ExitCode> {
    default_pocl_cache();
    let all = funmem_gpu::devices().map_err(|e| {
        eprintln!("funmem: {e}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&all).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<3} {:<5} {:<28} {:<40} {:>10} {:>10} {:>5}  version",
        "#", "kind", "platform", "device", "memory", "max buffer", "units"
    );
    for d in &all {
        println!(
            "{:<3} {:<5} {:<28} {:<40} {:>10} {:>10} {:>5}  {}",
            d.index,
            d.kind,
            d.platform,
            d.name,
            bytes(d.global_mem),
            bytes(d.max_alloc),
            d.compute_units,
            d.version
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A ratio to the copy kernel as a percentage, `-` when there is none.
fn percent(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{:.0}%", 100.0 * r))
}

/// Bytes for people: `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `funmem run --semantics opencl`.
pub fn run(
    file: &str,
    device_name: Option<&str>,
    inputs: &[funmem_semantics::value::Value],
    limits: funmem_semantics::error::Limits,
    stats: bool,
) -> Result<ExitCode, ExitCode> {
    let (src, c) = compile_file(file, None)?;
    let dev = device(device_name)?;
    let mut rt = funmem_gpu::Runtime::new(&dev, &c).map_err(|e| gpu_failure(&src, &e))?;
    let (values, st) = rt
        .run(inputs, limits, false)
        .map_err(|e| gpu_failure(&src, &e))?;
    let printed = crate::print_values(&values);
    if stats {
        eprintln!("device:               {}", dev.label());
        eprintln!("kernel launches:      {}", st.launches);
        eprintln!(
            "kernel time:          {:.3} ms",
            st.total_kernel_ns() as f64 / 1e6
        );
        eprintln!("wall time:            {:.3} ms", st.wall_ns as f64 / 1e6);
        eprintln!(
            "allocations:          {} ({})",
            st.allocations,
            bytes(st.bytes_allocated)
        );
        eprintln!("peak device memory:   {}", bytes(st.peak_bytes));
        eprintln!(
            "host-to-device:       {} transfers, {} ({} host writes)",
            st.h2d_transfers,
            bytes(st.h2d_bytes),
            st.host_writes
        );
        eprintln!(
            "device-to-host:       {} transfers, {} ({} synchronous host reads)",
            st.d2h_transfers,
            bytes(st.d2h_bytes),
            st.sync_reads
        );
    }
    printed
}

/// `funmem lower --to opencl`.
pub fn lower(file: &str, passes: Option<&str>) -> Result<ExitCode, ExitCode> {
    let (_, c) = compile_file(file, passes)?;
    print!("{}", c.print());
    Ok(ExitCode::SUCCESS)
}

/// Options of `funmem bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// The program (.fun, .funmem or .imp).
    file: String,
    /// Read the inputs from this file instead of standard input.
    #[arg(long)]
    input: Option<String>,
    /// The OpenCL device: its number in `funmem devices`, or part of its
    /// platform's, vendor's or own name (default: the first GPU).
    #[arg(long)]
    device: Option<String>,
    /// FUNMEM passes before lowering to IMP.
    #[arg(long, default_value = GPU_PASSES)]
    passes: String,
    /// Timed runs (at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// Untimed runs before them.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Print a JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// `funmem bench`.
pub fn bench(args: BenchArgs) -> Result<ExitCode, ExitCode> {
    let (src, c) = compile_file(&args.file, Some(&args.passes))?;
    let inputs = crate::read_inputs(args.input.as_deref())?;
    let dev = device(args.device.as_deref())?;
    let mut rt = funmem_gpu::Runtime::new(&dev, &c).map_err(|e| gpu_failure(&src, &e))?;
    let opts = funmem_gpu::bench::BenchOptions {
        runs: usize::try_from(args.runs).unwrap_or(usize::MAX),
        warmup: args.warmup,
        limits: funmem_semantics::error::Limits::for_device(),
    };
    let r = funmem_gpu::bench::bench(&mut rt, &inputs, opts).map_err(|e| gpu_failure(&src, &e))?;
    if args.json {
        let mut v = serde_json::to_value(&r).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("file".into(), args.file.clone().into());
            o.insert("passes".into(), args.passes.clone().into());
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(ExitCode::SUCCESS);
    }
    let s = &r.run;
    println!("program:  {} (passes {})", args.file, args.passes);
    println!("device:   {}", r.device);
    println!("runs:     {} timed, after {} warm-up", r.runs, args.warmup);
    println!();
    println!(
        "{:<22} {:>12} {:>12} {:>12}",
        "ms per run", "min", "median", "max"
    );
    for (what, m) in [("kernels", r.kernel_ms), ("wall (host clock)", r.wall_ms)] {
        println!(
            "{what:<22} {:>12.3} {:>12.3} {:>12.3}",
            m.min, m.median, m.max
        );
    }
    println!();
    println!(
        "{:<10} {:>8} {:>12} {:>12} {:>10} {:>8}",
        "kernel", "launches", "median ms", "bytes", "GB/s", "of copy"
    );
    for k in &r.kernels {
        println!(
            "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>8}",
            k.name,
            k.launches,
            k.ms.median,
            bytes(k.bytes),
            k.gbps,
            percent(k.of_copy)
        );
    }
    println!(
        "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>8}",
        "all",
        s.launches,
        r.kernel_ms.median,
        bytes(r.bytes),
        r.gbps,
        percent(r.of_copy)
    );
    println!(
        "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>7.0}%",
        "copy",
        1,
        r.copy.ms.median,
        bytes(r.copy.bytes),
        r.copy.gbps,
        100.0
    );
    for red in &r.reductions {
        println!(
            "{:<10} {:>8} {:>12.3} {:>12} {:>10.1} {:>8}   ({} {}: its stages together; bytes read + written)",
            if red.what.starts_with("scan") { "scan" } else { "reduce" },
            "",
            red.ms.median,
            bytes(red.bytes),
            red.gbps,
            percent(red.of_copy),
            red.elem,
            red.what
        );
    }
    if r.of_copy.is_none() || r.kernels.iter().any(|k| k.of_copy.is_none()) {
        println!(
            "(of copy: shown for kernels that move at least {}; below that a launch's latency, not bandwidth, decides its time)",
            bytes(funmem_gpu::bench::MIN_RATIO_BYTES)
        );
    }
    println!();
    println!("peak device memory:  {}", bytes(s.peak_bytes));
    println!(
        "allocations:         {} ({})",
        s.allocations,
        bytes(s.bytes_allocated)
    );
    println!(
        "host-to-device:      {} transfers, {} ({} host writes)",
        s.h2d_transfers,
        bytes(s.h2d_bytes),
        s.host_writes
    );
    println!(
        "device-to-host:      {} transfers, {} ({} synchronous host reads)",
        s.d2h_transfers,
        bytes(s.d2h_bytes),
        s.sync_reads
    );
    Ok(ExitCode::SUCCESS)
}
