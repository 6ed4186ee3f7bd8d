//! Loops, host writes and kernels writing several blocks on OpenCL (PoCL):
//! hand-written IMP of the kinds the FUNMEM-to-IMP translation produces
//! (a host `for` launching a kernel per iteration, a kernel with a loop
//! inside, a `while` whose condition a kernel computes, single-element
//! host writes, kernels writing two blocks, concatenation and replication
//! as kernels). Each gives the expected values, agrees with the IMP
//! interpreter, and has its synchronous reads, host-to-device writes and
//! launches counted exactly.
//!
//! Like `opencl.rs`, these tests need an OpenCL device (`FUNMEM_OPENCL_DEVICE`,
//! default `pocl`; `FUNMEM_SKIP_OPENCL=1` skips them).

use funmem_gpu::agree::{check_one, compare, device_limits, Agreement};
use funmem_gpu::{compile, DeviceInfo, GpuError, RunStats, Runtime};
use funmem_lang::imp::Program;
use funmem_lang::parse::parse_imp;
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::imp::run_imp;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::value::{ArrayValue, Value};

mod common;
use common::{device, serial};

fn imp(text: &str) -> Program {
    let p = parse_imp(text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    funmem_lang::check::check_imp(&p).unwrap_or_else(|d| panic!("{d}\n{text}"));
    p
}

fn int(k: i64) -> Value {
    Value::Scalar(funmem_lang::prim::Const::I64(k))
}

fn arr(v: &[i64]) -> Value {
    Value::Array(ArrayValue {
        shape: vec![v.len()],
        data: funmem_semantics::value::Elems::I64(v.to_vec()),
    })
}

fn arr2(rows: usize, cols: usize, v: &[i64]) -> Value {
    Value::Array(ArrayValue {
        shape: vec![rows, cols],
        data: funmem_semantics::value::Elems::I64(v.to_vec()),
    })
}

fn limits() -> Limits {
    Limits {
        fuel: 1_000_000,
        max_heap: 1 << 20,
    }
}

/// Runs `p` on the device (with the device's share of `limits()`, as the
/// fuzzer does) and checks that it gives `want`; the interpreter must give
/// `want` too. Returns what the run counted.
fn expect(dev: &DeviceInfo, p: &Program, inputs: &[Value], want: &[Value]) -> RunStats {
    let c = compile(p).unwrap_or_else(|d| panic!("{d}"));
    let mut rt = Runtime::new(dev, &c).unwrap();
    let (got, st) = rt
        .run(inputs, device_limits(limits()), false)
        .unwrap_or_else(|e| panic!("{e}\n{}", c.print()));
    assert_eq!(got, want, "{}", c.print());
    let r = run_imp(p, inputs, limits(), true, &mut NoObserver);
    assert_eq!(r.as_deref().map_err(|e| e.to_string()), Ok(want));
    // The oracle's view of the same run.
    assert_eq!(check_one(&mut rt, p, inputs, limits()), Agreement::Results);
    st
}

fn program_error(r: Result<(Vec<Value>, RunStats), GpuError>) -> EvalError {
    match r {
        Err(GpuError::Program(e)) => *e,
        other => panic!("expected the program to go wrong, got {other:?}"),
    }
}

#[test]
fn a_host_for_launches_its_kernel_in_each_iteration() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // In place: the same block every iteration.
    let p = imp("def main (n: int) (t: int) =
           var a: mem; a <- alloc n;
           for r < t do
             kernel i < n do var x: int; x <- a[i]; a[i] <- x + i + r done
           done
         out (res: [n]int @ a -> R(n))");
    let st = expect(&dev, &p, &[int(4), int(3)], &[arr(&[3, 6, 9, 12])]);
    assert_eq!((st.launches, st.kernel_launches.clone()), (3, vec![3]));
    assert_eq!((st.sync_reads, st.host_writes), (0, 0));
    assert_eq!((st.h2d_transfers, st.d2h_transfers), (0, 1));
    // No iteration at all (a bound of 0 or less).
    for t in [0, -5] {
        let st = expect(&dev, &p, &[int(4), int(t)], &[arr(&[0, 0, 0, 0])]);
        assert_eq!(st.launches, 0);
    }
    // Double buffering, as a FUNMEM loop over an array lowers: a fresh
    // block each iteration, the loop's block variable reassigned. The
    // block of the iteration before is freed once nothing holds it, so at
    // most two are live.
    let p = imp("def main (n: int) (t: int) =
           var a: mem; a <- alloc n;
           kernel i < n do a[i] <- i done;
           for r < t do
             var b: mem; b <- alloc n;
             kernel i < n do var x: int; x <- a[i]; b[i] <- x * 2 + r done;
             a <- b
           done
         out (res: [n]int @ a -> R(n))");
    let st = expect(&dev, &p, &[int(3), int(4)], &[arr(&[11, 27, 43])]);
    assert_eq!((st.launches, st.kernel_launches.clone()), (5, vec![1, 4]));
    assert_eq!((st.allocations, st.bytes_allocated), (5, 5 * 24));
    assert_eq!(st.peak_bytes, 2 * 24);
    assert_eq!((st.sync_reads, st.d2h_transfers), (0, 1));
}

#[test]
fn loops_inside_kernels_are_c_loops() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // Prefix sums: a `for` in each work-item, its bound from the index.
    let p = imp("def main (n: int) (xs: [n]int @ xm -> R(n)) =
           var m: mem; m <- alloc n;
           kernel i < n do
             var s: int; s <- 0;
             for j < i + 1 do var y: int; y <- xm[j]; s <- s + y done;
             for j < 0 - i do s <- 1000 done;
             m[i] <- s
           done
         out (r: [n]int @ m -> R(n))");
    let c = compile(&p).unwrap();
    assert!(c.kernels[0].loops && !c.kernels[0].repeated);
    assert!(c
        .source
        .contains("for (long v_j = 0; v_j < v_j_iterations; v_j++)"));
    let inputs = [int(4), arr(&[1, 2, 3, 4])];
    let st = expect(&dev, &p, &inputs, &[arr(&[1, 3, 6, 10])]);
    assert_eq!((st.h2d_transfers, st.d2h_transfers, st.launches), (1, 1, 1));
    // Every element read by the loops and written once.
    let (_, st) = Runtime::new(&dev, &c)
        .unwrap()
        .run(&inputs, limits(), true)
        .unwrap();
    assert_eq!(st.accesses, Some(vec![(1 + 2 + 3 + 4, 4)]));
    // A `while` in each work-item: the Collatz steps of i + 1.
    let p = imp("def main (n: int) =
           var m: mem; m <- alloc n;
           kernel i < n do
             var x: int; x <- i + 1;
             var c: int; c <- 0;
             var go: int; go <- x > 1;
             while go do
               var odd: int; odd <- x % 2;
               if odd then x <- 3 * x + 1 else x <- x / 2 fi;
               c <- c + 1;
               go <- x > 1
             done;
             m[i] <- c
           done
         out (r: [n]int @ m -> R(n))");
    expect(&dev, &p, &[int(7)], &[arr(&[0, 1, 7, 2, 5, 8, 16])]);
}

#[test]
fn an_endless_while_on_the_device_is_stopped_by_fuel() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (n: int) =
           var m: mem; m <- alloc n;
           kernel i < n do
             var go: int; go <- 1;
             var k: int; k <- 0;
             while go do k <- k + 1 done;
             m[i] <- k
           done
         out (r: [n]int @ m -> R(n))");
    let c = compile(&p).unwrap();
    let r = Runtime::new(&dev, &c)
        .unwrap()
        .run(&[int(8)], limits(), false);
    let e = program_error(r);
    assert_eq!((&e.kind, e.rule), (&ErrorKind::OutOfFuel, "E-IMP-WHILE"));
    assert!(e.message.contains("out of fuel"), "{e}");
    // The interpreter stops it too, and the oracle calls it a limit.
    let want = run_imp(&p, &[int(8)], limits(), true, &mut NoObserver);
    assert!(want.as_ref().is_err_and(|e| e.is_limit()), "{want:?}");
    let got = Runtime::new(&dev, &c)
        .unwrap()
        .run(&[int(8)], limits(), false)
        .map(|(v, _)| v);
    assert_eq!(compare(want, got, false), Agreement::Limit);
}

#[test]
fn an_endless_host_loop_is_stopped_by_fuel() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (n: int) =
           var a: mem; a <- alloc n;
           var go: int; go <- 1;
           while go do
             kernel i < n do var x: int; x <- a[i]; a[i] <- x + 1 done
           done
         out (r: [n]int @ a -> R(n))");
    let c = compile(&p).unwrap();
    assert!(c.kernels[0].repeated);
    assert!(c.source.contains("if (fm_err[0] != 0) return;"));
    let fuel = 20 * funmem_gpu::driver::LOOP_FUEL + 5;
    let lim = Limits {
        fuel,
        max_heap: 1 << 20,
    };
    let r = Runtime::new(&dev, &c).unwrap().run(&[int(4)], lim, false);
    let e = program_error(r);
    assert_eq!((&e.kind, e.rule), (&ErrorKind::OutOfFuel, "E-IMP-WHILE"));
    assert!(e.message.contains("host loop"), "{e}");
    // The interpreter runs out too; the oracle does not run the device.
    let mut rt = Runtime::new(&dev, &c).unwrap();
    assert_eq!(
        check_one(&mut rt, &p, &[int(4)], limits()),
        Agreement::Limit
    );
    // The launches spend fuel too: with 3 iterations' worth and 10 more,
    // the third launch of 4 work-items finds only 2 left.
    let lim = Limits {
        fuel: 3 * funmem_gpu::driver::LOOP_FUEL + 10,
        max_heap: 1 << 20,
    };
    let p = imp("def main (n: int) (t: int) =
           var a: mem; a <- alloc n;
           for r < t do kernel i < n do a[i] <- r done done
         out (r: [n]int @ a -> R(n))");
    let c = compile(&p).unwrap();
    let mut rt = Runtime::new(&dev, &c).unwrap();
    let (v, st) = rt.run(&[int(4), int(2)], lim, false).unwrap();
    assert_eq!((v, st.launches), (vec![arr(&[1, 1, 1, 1])], 2));
    let e = program_error(rt.run(&[int(4), int(3)], lim, false));
    assert_eq!((&e.kind, e.rule), (&ErrorKind::OutOfFuel, "E-IMP-KERNEL"));
    assert!(e.message.contains("fuel left (2 of"), "{e}");
}

#[test]
fn a_kernel_failure_in_a_host_loop_ends_the_run() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // The 4th iteration writes before the block; the later launches do
    // nothing, and the run reports the first failure.
    let p = imp("def main (n: int) (t: int) =
           var a: mem; a <- alloc n;
           for r < t do
             kernel i < 1 do var at: int; at <- 2 - r; a[at] <- r done
           done
         out (r: [n]int @ a -> R(n))");
    let c = compile(&p).unwrap();
    let r = Runtime::new(&dev, &c)
        .unwrap()
        .run(&[int(4), int(50)], device_limits(limits()), false);
    let e = program_error(r);
    assert_eq!(e.rule, "E-IMP-WRITE");
    assert!(e.message.contains("offset -1 of block `a`"), "{e}");
    let want = run_imp(&p, &[int(4), int(50)], limits(), true, &mut NoObserver);
    assert_eq!(want.map_err(|e| e.rule), Err("E-IMP-WRITE"));
}

#[test]
fn a_while_with_a_device_condition_reads_it_back_each_iteration() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // A kernel computes the condition into a block; the host reads it back
    // (a synchronous transfer) before each test.
    let p = imp("def main (n: int) (limit: int) =
           var a: mem; a <- alloc n;
           var flag: mem; flag <- alloc 1;
           var go: int; go <- 1;
           var steps: int; steps <- 0;
           while go do
             kernel i < n do var x: int; x <- a[i]; a[i] <- x + i done;
             var last: int; last <- n - 1;
             kernel i < 1 do var y: int; y <- a[last]; flag[0] <- y < limit done;
             go <- flag[0];
             steps <- steps + 1
           done
         out (steps, r: [n]int @ a -> R(n))");
    let st = expect(
        &dev,
        &p,
        &[int(4), int(100)],
        &[int(34), arr(&[0, 34, 68, 102])],
    );
    assert_eq!(st.sync_reads, 34);
    assert_eq!((st.d2h_transfers, st.d2h_bytes), (34 + 1, 8 * 34 + 8 * 4));
    assert_eq!(
        (st.launches, st.kernel_launches.clone()),
        (68, vec![34, 34])
    );
    assert_eq!((st.h2d_transfers, st.host_writes), (0, 0));
    assert_eq!((st.allocations, st.peak_bytes), (2, 8 * 5));
}

#[test]
fn host_writes_of_one_element_are_counted() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // `x with [i] = v` outside kernels: one element written from the host,
    // in a loop too; a kernel then reads what the host wrote.
    let p = imp("def main (n: int) (xs: [n]int @ xm -> R(n)) =
           xm[1] <- 42;
           for r < 3 do xm[r + 2] <- r * 10 done;
           var m: mem; m <- alloc n;
           kernel i < n do var x: int; x <- xm[i]; m[i] <- x + 1 done
         out (r: [n]int @ xm -> R(n), s: [n]int @ m -> R(n))");
    let inputs = [int(5), arr(&[1, 2, 3, 4, 5])];
    let st = expect(
        &dev,
        &p,
        &inputs,
        &[arr(&[1, 42, 0, 10, 20]), arr(&[2, 43, 1, 11, 21])],
    );
    assert_eq!(st.host_writes, 4);
    assert_eq!((st.h2d_transfers, st.h2d_bytes), (1 + 4, 8 * 5 + 8 * 4));
    assert_eq!((st.sync_reads, st.d2h_transfers), (0, 2));
    // Out of bounds on the host: E-IMP-WRITE, at the write.
    let c = compile(&p).unwrap();
    let r = Runtime::new(&dev, &c).unwrap().run(
        &[int(3), arr(&[1, 2, 3])],
        device_limits(limits()),
        false,
    );
    let e = program_error(r);
    assert_eq!(e.rule, "E-IMP-WRITE");
    assert!(
        e.message.contains("offset 3 of block `xm` of size 3"),
        "{e}"
    );
    let want = run_imp(
        &p,
        &[int(3), arr(&[1, 2, 3])],
        limits(),
        true,
        &mut NoObserver,
    );
    assert_eq!(want.map_err(|e| e.rule), Err("E-IMP-WRITE"));
}

#[test]
fn a_kernel_writing_two_blocks_gets_both() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (n: int) (xs: [n]int @ xm -> R(n)) =
           var a: mem; a <- alloc n;
           var b: mem; b <- alloc n;
           kernel i < n do var x: int; x <- xm[i]; a[i] <- x + 1; b[i] <- x * x done
         out (p: [n]int @ a -> R(n), q: [n]int @ b -> R(n))");
    let c = compile(&p).unwrap();
    assert_eq!(c.kernels[0].mems.len(), 3);
    let inputs = [int(3), arr(&[2, 3, 4])];
    let st = expect(&dev, &p, &inputs, &[arr(&[3, 4, 5]), arr(&[4, 9, 16])]);
    assert_eq!((st.h2d_transfers, st.d2h_transfers), (1, 2));
    assert_eq!((st.d2h_bytes, st.allocations, st.launches), (48, 3, 1));
    let (_, st) = Runtime::new(&dev, &c)
        .unwrap()
        .run(&inputs, limits(), true)
        .unwrap();
    assert_eq!(st.accesses, Some(vec![(3, 6)]));
    // Two results of a loop body: both blocks double-buffered in a host loop.
    let p = imp("def main (n: int) (t: int) =
           var a: mem; a <- alloc n;
           var b: mem; b <- alloc n;
           for r < t do
             var a2: mem; a2 <- alloc n;
             var b2: mem; b2 <- alloc n;
             kernel i < n do
               var x: int; x <- a[i]; var y: int; y <- b[i];
               a2[i] <- x + 1; b2[i] <- y + x
             done;
             a <- a2; b <- b2
           done
         out (p: [n]int @ a -> R(n), q: [n]int @ b -> R(n))");
    let st = expect(&dev, &p, &[int(2), int(4)], &[arr(&[4, 4]), arr(&[6, 6])]);
    assert_eq!((st.allocations, st.peak_bytes), (2 + 8, 4 * 16));
}

#[test]
fn concatenation_and_replication_as_kernels() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    let p = imp(
        "def main (n: int) (m: int) (xs: [n]int @ xm -> R(n)) (ys: [m]int @ ym -> R(m)) =
           var k: int; k <- n + m;
           var r: mem; r <- alloc k;
           kernel i < n do var x: int; x <- xm[i]; r[i] <- x done;
           kernel i < m do var y: int; y <- ym[i]; r[n + i] <- y done
         out (z: [k]int @ r -> R(k))",
    );
    let inputs = [int(2), int(3), arr(&[1, 2]), arr(&[7, 8, 9])];
    let st = expect(&dev, &p, &inputs, &[arr(&[1, 2, 7, 8, 9])]);
    assert_eq!((st.h2d_transfers, st.d2h_transfers, st.launches), (2, 1, 2));
    // Empty sides launch nothing.
    let inputs = [int(0), int(2), arr(&[]), arr(&[7, 8])];
    let st = expect(&dev, &p, &inputs, &[arr(&[7, 8])]);
    assert_eq!(st.launches, 1);
    let p = imp("def main (n: int) (t: int) (xs: [n]int @ xm -> R(n)) =
           var r: mem; r <- alloc t * n;
           kernel i < t do
             kernel j < n do var x: int; x <- xm[j]; r[i * n + j] <- x done
           done
         out (z: [t][n]int @ r -> R(t, n))");
    let inputs = [int(2), int(3), arr(&[5, 6])];
    expect(&dev, &p, &inputs, &[arr2(3, 2, &[5, 6, 5, 6, 5, 6])]);
}

/// A FUN program through the GPU pipeline (simplify, expand-gpu) to IMP.
fn fun(src: &str) -> Program {
    use funmem_lang::parse::{parse_program, AnyProgram};
    let p = AnyProgram::Fun(parse_program(src, funmem_lang::ast::Lang::Fun).unwrap());
    let passes = funmem_transforms::pass::parse_list("simplify,expand-gpu").unwrap();
    let provers = funmem_oracle::prove::Provers::default();
    let st = funmem_transforms::pipeline::stages(&p, &passes, true, &provers)
        .unwrap_or_else(|d| panic!("{d}"));
    match st.into_iter().last().map(|s| s.program) {
        Some(AnyProgram::Imp(q)) => q,
        _ => panic!("no IMP stage"),
    }
}

#[test]
fn fun_loops_updates_concat_replicate_and_multi_result_kernels_run_on_opencl() {
    let _serial = serial();
    let Some(dev) = device() else { return };
    // Every new construct at host level: an update of a unique parameter,
    // concat, replicate, a for loop updating its array in place, a while
    // loop, a kernel with two results.
    let p = fun("def main (n: int) (xs: *[n]int) =
  let (ys: [n]int) = xs with [0] = 7
  let (k: int) = n + n
  let (zs: [k]int) = concat ys ys
  let (r: [3][n]int) = replicate 3 ys
  let (m: int) (acc: [k]int) = loop (j: int) (a: [k]int) = (0, zs) for i < n do
      let (b: [k]int) = a with [i] = j
      let (j2: int) = j + 1
      in (j2, b)
  let (t: [n][3]int) = transpose r
  let (c: int) (w: [n]int) = loop (c0: int) (v: [n]int) = (3, ys) while c0 do
      let (c1: int) = c0 - 1
      let (v2: [n]int) = copy v
      let (y1: [1]int) = ys[1 : 1]
      let (v3: [n]int) = v2 with [0 : 1] = y1
      in (c1, v3)
  let (p: [n]int) (q: [n]int) = kernel i < n do
      let (e: int) = i * 2
      in (i, e)
  let (t0: int) = t[0, 2]
  in (acc, m, w, p, q, c, t0)
");
    let want = [
        arr(&[0, 1, 2, 3, 7, 2, 3, 4]),
        int(4),
        arr(&[2, 2, 3, 4]),
        arr(&[0, 1, 2, 3]),
        arr(&[0, 2, 4, 6]),
        int(0),
        int(7),
    ];
    let st = expect(&dev, &p, &[int(4), arr(&[1, 2, 3, 4])], &want);
    // The updates outside kernels are host writes: xs[0] and acc[i] for
    // each of the 4 iterations.
    assert_eq!(st.host_writes, 5);
    // A while whose condition comes from the device: one synchronous read
    // an iteration (7 doublings of v[0] from 1 to 128).
    let p = fun("def main (n: int) (xs: [n]int) =
  let (c: int) (w: [n]int) = loop (go: int) (v: [n]int) = (1, xs) while go do
      let (v2: [n]int) = kernel i < n do
          let (x: int) = v[i]
          let (y: int) = x * 2
          in (y)
      let (first: int) = v2[0]
      let (go2: int) = first < 100
      in (go2, v2)
  in (c, w)
");
    let st = expect(
        &dev,
        &p,
        &[int(3), arr(&[1, 2, 3])],
        &[int(0), arr(&[128, 256, 384])],
    );
    assert_eq!(st.sync_reads, 7);
    assert_eq!(st.kernel_launches.iter().sum::<u64>(), st.launches);
    // A loop inside a kernel whose inner kernel's block expansion hoists.
    let p = fun("def main (n: int) (xs: [n]int) =
  let (ys: [n][n]int) = kernel i < n do
      let (r0: [n]int) = copy xs
      let (acc: [n]int) = loop (a: [n]int) = (r0) for t < 3 do
          let (tmp: [n]int) = kernel j < n do
              let (v: int) = a[j]
              let (w: int) = v + t + i
              in (w)
          let (a2: [n]int) = a with [0 : n] = tmp
          in (a2)
      in (acc)
  in (ys)
");
    let want = arr2(2, 2, &[4, 5, 7, 8]);
    expect(&dev, &p, &[int(2), arr(&[1, 2])], &[want]);
}
