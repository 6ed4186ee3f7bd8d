//! The OpenCL backend as one more semantics of IMP, on PoCL (OpenCL on the
//! CPU): generated programs through the GPU pipeline give what the IMP
//! interpreter gives; kernel failures name their rule; transfers and
//! accesses are counted exactly; setup errors are clear.
//!
//! These tests need an OpenCL device: `scripts/install-deps` installs
//! PoCL. `FUNMEM_OPENCL_DEVICE` picks another device (default `pocl`);
//! `FUNMEM_SKIP_OPENCL=1` skips them on a machine without OpenCL;
//! `FUNMEM_OPENCL_SAMPLE=N` sets the number of generated programs (120).

use funmem_gpu::agree::{check_batch, Agreement};
use funmem_gpu::{compile, select, DeviceInfo, GpuError, Runtime};
use funmem_lang::ast::Lang;
use funmem_lang::parse::{parse_imp, parse_program, AnyProgram};
use funmem_oracle::prove::Provers;
use funmem_oracle::{GenConfig, Rng};
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::value::{ArrayValue, Value};
use funmem_transforms::pass::parse_list;
use funmem_transforms::pipeline::stages;
use rand::SeedableRng;
use std::path::Path;

mod common;
use common::{device, serial};

/// A FUN or FUNMEM program through simplify and expand-gpu to IMP.
fn gpu_imp(p: AnyProgram) -> funmem_lang::imp::Program {
    let passes = parse_list("simplify,expand-gpu").unwrap();
    let st = stages(&p, &passes, true, &Provers::default()).unwrap();
    match st.into_iter().last().unwrap().program {
        AnyProgram::Imp(q) => q,
        AnyProgram::Fun(_) => panic!("no IMP stage"),
    }
}

fn fun(src: &str) -> funmem_lang::imp::Program {
    gpu_imp(AnyProgram::Fun(parse_program(src, Lang::Fun).unwrap()))
}

fn ints(v: &[i64]) -> Vec<Value> {
    v.iter()
        .map(|&k| Value::Scalar(funmem_lang::prim::Const::I64(k)))
        .collect()
}

fn arr(v: &[i64]) -> Value {
    Value::Array(ArrayValue {
        shape: vec![v.len()],
        data: funmem_semantics::value::Elems::I64(v.to_vec()),
    })
}

fn run_on(
    dev: &DeviceInfo,
    imp: &funmem_lang::imp::Program,
    inputs: &[Value],
) -> Result<(Vec<Value>, funmem_gpu::RunStats), GpuError> {
    let c = compile(imp).unwrap();
    Runtime::new(dev, &c)?.run(inputs, Limits::default(), false)
}

fn program_error(r: Result<(Vec<Value>, funmem_gpu::RunStats), GpuError>) -> EvalError {
    match r {
        Err(GpuError::Program(e)) => *e,
        other => panic!("expected the program to go wrong, got {other:?}"),
    }
}

#[test]
fn generated_programs_agree_with_the_imp_interpreter() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let limits = Limits {
        fuel: 200_000,
        max_heap: 1 << 20,
    };
    let cfg = GenConfig::default();
    let (mut agreed_ok, mut agreed_err, mut refused, mut racy) = (0, 0, 0, 0);
    // PoCL compiles each kernel at its first launch (about 0.3 s), so the
    // sample in CI is small; FUNMEM_OPENCL_SAMPLE=N runs a larger one.
    let sample: u64 = std::env::var("FUNMEM_OPENCL_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let cases: Vec<_> = (0..sample)
        .map(|seed| {
            let mut rng = Rng::seed_from_u64(20_261_123 + seed);
            if seed % 2 == 0 {
                funmem_oracle::gen::gen_fun(&mut rng, &cfg)
            } else {
                funmem_oracle::gen_mem::gen_funmem(&mut rng, &cfg)
            }
        })
        .collect();
    let lowered: Vec<_> = cases
        .iter()
        .map(|c| {
            (
                gpu_imp(AnyProgram::Fun(c.program.clone())),
                c.inputs.clone(),
            )
        })
        .collect();
    // One OpenCL build for all of them: PoCL spends about a second a build.
    let verdicts = check_batch(&dev, &lowered, limits).unwrap();
    for (seed, ((imp, inputs), v)) in lowered.iter().zip(verdicts).enumerate() {
        match v {
            Agreement::Results | Agreement::Close => agreed_ok += 1,
            Agreement::BothWrong => agreed_err += 1,
            Agreement::Race => racy += 1,
            Agreement::Limit => {}
            Agreement::Refused(why) => {
                assert!(why.contains("memory expansion"), "{why}");
                refused += 1;
            }
            Agreement::Disagree(why) => {
                panic!("seed {seed}: {why}\n{}\ninputs {inputs:?}", imp_text(imp))
            }
        }
    }
    eprintln!(
        "{agreed_ok} agreed on results, {agreed_err} on failing, {racy} racy, {refused} refused"
    );
    // With the default sample: 87 results, 8 failures on both sides.
    assert!(
        agreed_ok * 2 >= sample as usize,
        "only {agreed_ok} of {sample} programs ran to a result"
    );
    assert!(agreed_err >= 1, "no program went wrong on both sides");
}

fn imp_text(p: &funmem_lang::imp::Program) -> String {
    AnyProgram::Imp(p.clone()).print()
}

#[test]
fn kernel_failures_name_their_rule_and_values() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // A read past the block, in one work-item of many.
    let p = parse_imp(
        "def main (n: int) =
           var m: mem; m <- alloc n;
           kernel i < n do var x: int; x <- m[i + 1]; m[i] <- x done
         out (r: [n]int @ m -> R(n))",
    )
    .unwrap();
    let e = program_error(run_on(&dev, &p, &ints(&[100])));
    assert_eq!(e.rule, "E-IMP-READ");
    assert!(
        e.message.contains("offset 100") && e.message.contains("size 100"),
        "{e}"
    );
    // Division by zero in a nested kernel.
    let p = parse_imp(
        "def main (n: int) =
           var m: mem; m <- alloc n;
           kernel i < n do kernel j < 2 do var x: int; x <- i / j; m[i] <- x done done
         out (r: [n]int @ m -> R(n))",
    )
    .unwrap();
    let e = program_error(run_on(&dev, &p, &ints(&[4])));
    assert_eq!(e.rule, "E-IMP-ASSIGN-INT");
    assert!(e.message.contains("division by zero"), "{e}");
    // A nested kernel with a negative bound.
    let p = parse_imp(
        "def main (n: int) =
           kernel i < n do kernel j < i - 2 do skip done done
         out (n)",
    )
    .unwrap();
    let e = program_error(run_on(&dev, &p, &ints(&[3])));
    assert_eq!(e.rule, "E-IMP-KERNEL");
    assert!(e.message.contains("negative"), "{e}");
    // Nested loops stop when the fuel is spent.
    let c = compile(&parse_imp(
        "def main (n: int) = kernel i < n do kernel j < n do kernel k < n do skip done done done out (n)",
    )
    .unwrap())
    .unwrap();
    let r = Runtime::new(&dev, &c).unwrap().run(
        &ints(&[1000]),
        Limits {
            fuel: 100_000,
            max_heap: 1 << 20,
        },
        false,
    );
    assert_eq!(program_error(r).kind, ErrorKind::OutOfFuel);
}

#[test]
fn host_reads_are_counted_as_synchronous_transfers() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let imp = fun(&read("benches/programs/host_read.fun"));
    let (v, st) = run_on(&dev, &imp, &ints(&[4])).unwrap();
    assert_eq!(v, vec![arr(&[0, 1, 2])]);
    // xs[k] on the host; its bounds check (an `assert`) runs on the host
    // and transfers nothing.
    assert_eq!(st.sync_reads, 1);
    assert_eq!(st.d2h_transfers, st.sync_reads + 1);
    assert_eq!(st.d2h_bytes, 8 * st.sync_reads + 8 * 3);
    assert_eq!(st.launches, 2);
    // xs and ys; xs is freed after its last use, before ys is allocated.
    assert_eq!(st.allocations, 2);
    assert_eq!(st.bytes_allocated, 8 * (4 + 3));
    assert_eq!(st.peak_bytes, 8 * 4);
}

#[test]
fn blocks_are_freed_after_their_last_use_and_kept_while_held() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // `a` is last used by the first kernel, but `b` holds its block on.
    let p = parse_imp(
        "def main (n: int) =
           var a: mem; a <- alloc n;
           var b: mem; b <- a;
           kernel i < n do a[i] <- i done;
           var c: mem; c <- alloc n;
           kernel i < n do var x: int; x <- b[i]; c[i] <- x * 2 done
         out (r: [n]int @ b -> R(n), s: [n]int @ c -> R(n))",
    )
    .unwrap();
    let (v, st) = run_on(&dev, &p, &ints(&[3])).unwrap();
    assert_eq!(v, vec![arr(&[0, 1, 2]), arr(&[0, 2, 4])]);
    assert_eq!((st.bytes_allocated, st.peak_bytes), (48, 48));
    // `a` is freed after the host reads it, before `c` is allocated.
    let p = parse_imp(
        "def main (n: int) =
           var a: mem; a <- alloc n;
           kernel i < n do a[i] <- i + 5 done;
           var x: int; x <- a[0];
           var c: mem; c <- alloc n;
           kernel i < n do c[i] <- x done
         out (s: [n]int @ c -> R(n))",
    )
    .unwrap();
    let (v, st) = run_on(&dev, &p, &ints(&[3])).unwrap();
    assert_eq!(v, vec![arr(&[5, 5, 5])]);
    assert_eq!((st.bytes_allocated, st.peak_bytes), (48, 24));
}

#[test]
fn inputs_are_copied_in_and_accesses_counted_exactly() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let imp = fun(&read("tests/programs/design_example.fun"));
    let c = compile(&imp).unwrap();
    let mut rt = Runtime::new(&dev, &c).unwrap();
    let (v, st) = rt
        .run(
            &[
                Value::Scalar(funmem_lang::prim::Const::I64(3)),
                arr(&[1, 2, 3]),
            ],
            Limits::default(),
            true,
        )
        .unwrap();
    assert_eq!(v, vec![arr(&[2, 5, 8])]);
    assert_eq!((st.h2d_transfers, st.h2d_bytes), (1, 24));
    assert_eq!((st.d2h_transfers, st.d2h_bytes), (1, 24));
    assert_eq!(st.accesses, Some(vec![(3, 3)]));
    // The map: iota writes n, the map reads n and writes n.
    let imp = fun(&read("benches/programs/map.fun"));
    let c = compile(&imp).unwrap();
    let (_, st) = Runtime::new(&dev, &c)
        .unwrap()
        .run(&ints(&[1000]), Limits::default(), true)
        .unwrap();
    assert_eq!(st.accesses, Some(vec![(0, 1000), (1000, 1000)]));
}

#[test]
fn both_expansion_layouts_run_and_agree() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let src = read("benches/programs/per_iteration.fun");
    let p = AnyProgram::Fun(parse_program(&src, Lang::Fun).unwrap());
    let mut results = Vec::new();
    for passes in ["simplify,expand-gpu", "simplify,expand-cpu"] {
        let st = stages(&p, &parse_list(passes).unwrap(), true, &Provers::default()).unwrap();
        let AnyProgram::Imp(imp) = &st.last().unwrap().program else {
            panic!()
        };
        results.push(run_on(&dev, imp, &ints(&[3, 4])).unwrap().0);
    }
    assert_eq!(results[0], vec![arr(&[6, 10, 14])]);
    assert_eq!(results[0], results[1]);
}

#[test]
fn allocations_in_kernels_are_refused_with_advice() {
    let src = read("papers/ifl2022/sec5_kernel_alloc.fun");
    let p = AnyProgram::Fun(parse_program(&src, Lang::Fun).unwrap());
    let st = stages(&p, &[], true, &Provers::default()).unwrap();
    let AnyProgram::Imp(imp) = &st.last().unwrap().program else {
        panic!()
    };
    let d = compile(imp).unwrap_err();
    assert!(d.message.contains("run memory expansion"), "{}", d.message);
    // The position is the allocation's, in the source.
    assert!(src[d.span.start..].starts_with("iota") || d.span.start > 0);
    // After expansion it compiles.
    assert!(compile(&fun(&src)).is_ok());
}

#[test]
fn setup_errors_are_clear() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // A build failure shows the compiler's log.
    let mut c = compile(&fun(&read("tests/programs/design_example.fun"))).unwrap();
    c.source
        .push_str("\n__kernel void broken(void) { this is not C; }\n");
    match Runtime::new(&dev, &c) {
        Err(GpuError::Build(log)) => assert!(log.contains("error"), "{log}"),
        other => panic!("expected a build error, got {:?}", other.err()),
    }
    // No such device: the ones there are.
    match select(Some("no-such-device-anywhere")) {
        Err(e @ GpuError::NoDevice { .. }) => assert!(e.to_string().contains(&dev.name), "{e}"),
        other => panic!("expected no device, got {other:?}"),
    }
    // A block larger than the device's largest buffer.
    let too_many = (dev.max_alloc / 8 + 1) as i64;
    let c = compile(&fun(&read("benches/programs/map.fun"))).unwrap();
    let unlimited = Limits {
        fuel: u64::MAX,
        max_heap: u64::MAX,
    };
    let r = Runtime::new(&dev, &c)
        .unwrap()
        .run(&ints(&[too_many]), unlimited, false);
    // Refused before it is made, as the allocation's error (a limit).
    match r {
        Err(GpuError::Program(e)) if e.is_limit() => {
            assert_eq!(e.rule, "E-IMP-ALLOC");
            assert!(e.message.contains("out of device memory"), "{e}");
            assert!(e.message.contains("largest buffer"), "{e}");
        }
        other => panic!("expected out of device memory, got {:?}", other.err()),
    }
}

fn read(rel: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
