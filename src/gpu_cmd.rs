//! The OpenCL commands: `funmem lower --to opencl`, `funmem run
//! --semantics opencl` and `funmem devices`, and the compiling and
//! reporting that `funmem bench` shares with them.

use crate::{load, pass_list, pipeline, report, EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_gpu::{Compiled, GpuError};
use funmem_lang::diag::{Diagnostic, Phase};
use funmem_lang::parse::AnyProgram;
use funmem_lang::Source;
use std::process::ExitCode;

/// The passes of the GPU pipeline: FUN -> FUNMEM -> simplify -> migrate ->
/// coalesce -> reuse -> expand-gpu -> IMP -> OpenCL.
pub const GPU_PASSES: &str = "simplify,migrate,coalesce,reuse,expand-gpu";

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
    let c = compile_program(file, &src, p, passes)?;
    Ok((src, c))
}

/// A program already read from `file` (as [`load`] gives it) through the
/// GPU pipeline, then translated for OpenCL.
pub fn compile_program(
    file: &str,
    src: &Source,
    p: AnyProgram,
    passes: Option<&str>,
) -> Result<Compiled, ExitCode> {
    let passes_text = passes.unwrap_or(GPU_PASSES);
    let imp = match p {
        AnyProgram::Imp(q) => q,
        AnyProgram::Fun(_) => {
            let passes = pass_list(passes_text)?;
            let stages = pipeline(file, src, &p, &passes, true)?;
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
        Ok(c) => Ok(c),
        Err(d) => {
            report(src, &d);
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
        eprintln!(
            "runtime:              {:.3} ms (inputs on the device to last command done)",
            st.runtime_ns as f64 / 1e6
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
