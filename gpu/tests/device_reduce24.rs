//! Device reduces on OpenCL (PoCL): the migration pass's `reduce'` (a
//! reduce inside a one-iteration kernel whose result goes into a block),
//! which the backend runs as the parallel host-level reduce with its result
//! copied on the device (`HostStmt::ReduceInto`, docs/opencl.md).
//!
//! Each program is written in FUNMEM, lowered by the GPU pipeline to IMP
//! (or, where the shape's details matter, written in IMP as the lowering
//! writes it), and run on the device and by the IMP interpreter: results
//! agree (floats within the float tolerance), the device reduce makes no
//! synchronous read where the old form (a host `reduce` whose result a
//! kernel then stores) makes one, an empty reduce writes its neutral
//! element, views (slices, a transposed row) and lambdas work, every
//! element type works, errors in the operator, the elements or the write
//! are stuck by the same rule as in the interpreter (and as in the same
//! kernel run the old way), fuel is spent as a host reduce spends it, and
//! statements of other shapes are translated as before.
//!
//! Like `opencl.rs`, these tests need an OpenCL device
//! (`FUNMEM_OPENCL_DEVICE`, default `pocl`; `FUNMEM_SKIP_OPENCL=1` skips
//! them); the recognition tests need none.

use funmem_gpu::agree::{compare, device_limits, tolerant, Agreement};
use funmem_gpu::bench::{bench, BenchOptions};
use funmem_gpu::codegen::HostStmt;
use funmem_gpu::{compile, Compiled, DeviceInfo, GpuError, RunStats, Runtime};
use funmem_lang::ast::Lang;
use funmem_lang::imp::Program;
use funmem_lang::parse::{parse_imp, parse_program, AnyProgram};
use funmem_lang::prim::{Const, Prim};
use funmem_semantics::error::{ErrorKind, EvalError, Limits};
use funmem_semantics::imp::run_imp;
use funmem_semantics::observer::NoObserver;
use funmem_semantics::value::{ArrayValue, Elems, Value};

mod common;
use common::{device, serial};

fn limits() -> Limits {
    Limits {
        fuel: 100_000_000,
        max_heap: 1 << 24,
    }
}

/// A FUNMEM program through the GPU pipeline (`passes`, then IMP).
fn lower_with(src: &str, passes: &str) -> Program {
    lower_lang(src, Lang::FunMem, passes)
}

/// A FUN or FUNMEM program through the GPU pipeline.
fn lower_lang(src: &str, lang: Lang, passes: &str) -> Program {
    let p = parse_program(src, lang).unwrap_or_else(|d| panic!("{d}\n{src}"));
    let p = AnyProgram::Fun(p);
    funmem_lang::check::check_any(&p).unwrap_or_else(|d| panic!("{d}\n{src}"));
    let passes = funmem_transforms::pass::parse_list(passes).unwrap();
    let provers = funmem_oracle::prove::Provers::default();
    let st = funmem_transforms::pipeline::stages(&p, &passes, true, &provers)
        .unwrap_or_else(|e| panic!("{e}\n{src}"));
    match st.into_iter().last().map(|s| s.program) {
        Some(AnyProgram::Imp(q)) => q,
        _ => panic!("no IMP stage"),
    }
}

/// As `funmem run --semantics opencl` lowers.
fn lower(src: &str) -> Program {
    lower_with(src, "simplify,expand-gpu")
}

fn imp(text: &str) -> Program {
    let p = parse_imp(text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    funmem_lang::check::check_imp(&p).unwrap_or_else(|d| panic!("{d}\n{text}"));
    p
}

fn vector(p: Prim, ws: impl IntoIterator<Item = u64>) -> Value {
    let data = Elems::from_words(p, ws);
    Value::Array(ArrayValue {
        shape: vec![data.len()],
        data,
    })
}

fn one(c: Const) -> Value {
    let mut data = Elems::with_capacity(c.prim(), 1);
    data.push(c);
    Value::Array(ArrayValue {
        shape: vec![1],
        data,
    })
}

/// The number of device reduces in a translated program's host part.
fn device_reduces(c: &Compiled) -> usize {
    fn count(ss: &[HostStmt]) -> usize {
        ss.iter()
            .map(|s| match s {
                HostStmt::ReduceInto { .. } => 1,
                HostStmt::If(_, a, b) => count(a) + count(b),
                HostStmt::For(_, _, b, _) | HostStmt::While(_, b, _) => count(b),
                _ => 0,
            })
            .sum()
    }
    count(&c.host)
}

/// One run on the device and one by the IMP interpreter.
struct Both {
    compiled: Compiled,
    device: Result<(Vec<Value>, RunStats), GpuError>,
    interp: Result<Vec<Value>, EvalError>,
}

impl Both {
    fn of(dev: &DeviceInfo, p: &Program, inputs: &[Value]) -> Both {
        let compiled = compile(p).unwrap_or_else(|d| panic!("{d}"));
        let mut rt = Runtime::new(dev, &compiled).unwrap_or_else(|e| panic!("{e}"));
        let device = rt.run(inputs, device_limits(limits()), false);
        let interp = run_imp(p, inputs, limits(), true, &mut NoObserver);
        Both {
            compiled,
            device,
            interp,
        }
    }

    /// The device's results and counts, which agree with the interpreter's
    /// (within the float tolerance where the program has a float reduce).
    fn agreed(self) -> (Vec<Value>, RunStats) {
        let Both {
            compiled,
            device,
            interp,
        } = self;
        let (got, st) = device.unwrap_or_else(|e| panic!("{e}\n{}", compiled.print()));
        let a = compare(interp, Ok(got.clone()), tolerant(&compiled));
        assert!(
            matches!(a, Agreement::Results | Agreement::Close),
            "{a:?}\n{}",
            compiled.print()
        );
        (got, st)
    }

    /// Both stuck: the same kind and rule. Returns the device's error.
    fn stuck_alike(self) -> EvalError {
        let want = self.interp.expect_err("the interpreter must go wrong");
        let got = match self.device {
            Err(GpuError::Program(e)) => *e,
            other => panic!("expected the program to go wrong, got {other:?}"),
        };
        assert_eq!(
            (&got.kind, got.rule),
            (&want.kind, want.rule),
            "device: {got}\ninterpreter: {want}"
        );
        got
    }
}

/// The device form (`reduce'`): the result of a reduce inside a
/// one-iteration kernel, into a one-element array.
fn device_form(t: &str, op: &str, ne: &str) -> String {
    format!(
        "def main (n: int) (xm: mem) (xs: [n]{t} @ xm -> R(n)) =
           let (s_mem: mem) = alloc 1 {t}
           let (s_arr: [1]{t} @ s_mem -> R(1)) = kernel k < 1 do
             let (s: {t}) = reduce {op} {ne} xs
             in (s)
           in (s_arr)"
    )
}

/// The old form: a host-level reduce whose result a kernel then stores.
fn host_form(t: &str, op: &str, ne: &str) -> String {
    format!(
        "def main (n: int) (xm: mem) (xs: [n]{t} @ xm -> R(n)) =
           let (s: {t}) = reduce {op} {ne} xs
           let (s_mem: mem) = alloc 1 {t}
           let (s_arr: [1]{t} @ s_mem -> R(1)) = kernel k < 1 do
             in (s)
           in (s_arr)"
    )
}

/// Elements around the work-group's size (256) and larger.
const SIZES: [u64; 6] = [1, 255, 256, 257, 4099, 100_000];

/// i64 `(+)` (wrapping): the interpreter's result exactly, with no
/// synchronous read (the old form makes one), one device-to-device copy,
/// and only the result block read back.
#[test]
fn an_i64_device_reduce_agrees_and_reads_nothing_synchronously() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let new = lower(&device_form("i64", "(+)", "0i64"));
    let old = lower(&host_form("i64", "(+)", "0i64"));
    for n in SIZES {
        let ws: Vec<u64> = (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let want = ws.iter().fold(0i64, |a, &w| a.wrapping_add(w as i64));
        let inputs = [Value::int(n as i64), vector(Prim::I64, ws)];
        let b = Both::of(&dev, &new, &inputs);
        assert_eq!(device_reduces(&b.compiled), 1, "{}", b.compiled.print());
        assert!(b.compiled.reds[0].device);
        let (got, st) = b.agreed();
        assert_eq!(got, [one(Const::I64(want))], "n = {n}");
        assert_eq!((st.sync_reads, st.device_copies), (0, 1), "n = {n}");
        // Read back: the result block only.
        assert_eq!((st.d2h_transfers, st.d2h_bytes), (1, 8));
        // The two stages of the parallel reduce, nothing else.
        assert_eq!(st.launches, 2);
        // The old form: the same result, one synchronous read.
        let b = Both::of(&dev, &old, &inputs);
        assert_eq!(device_reduces(&b.compiled), 0);
        let (got_old, st) = b.agreed();
        assert_eq!(got_old, got);
        assert_eq!((st.sync_reads, st.device_copies), (1, 0), "n = {n}");
        assert_eq!(st.d2h_transfers, 2);
    }
}

/// f32 `(+)`: within the float tolerance of the interpreter's sequential
/// sum (the device reassociates, as a host-level reduce does).
#[test]
fn an_f32_device_reduce_agrees_within_the_float_tolerance() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let new = lower(&device_form("f32", "(+)", "0f32"));
    let old = lower(&host_form("f32", "(+)", "0f32"));
    for n in SIZES {
        let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.25 - 0.5).collect();
        let inputs = [
            Value::int(n as i64),
            vector(Prim::F32, xs.iter().map(|x| x.to_bits() as u64)),
        ];
        let b = Both::of(&dev, &new, &inputs);
        assert_eq!(device_reduces(&b.compiled), 1);
        // The oracle's float tolerance applies to the program.
        assert!(tolerant(&b.compiled));
        let (got, st) = b.agreed();
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        assert!(
            got[0].close_to(&one(Const::F32((exact as f32).to_bits()))),
            "n = {n}: {} against {exact}",
            got[0]
        );
        assert_eq!((st.sync_reads, st.device_copies), (0, 1));
        let (got_old, st) = Both::of(&dev, &old, &inputs).agreed();
        assert!(got_old[0].close_to(&got[0]));
        assert_eq!(st.sync_reads, 1);
    }
}

/// An element type, an operator, its neutral element, and element `i` as a
/// word.
type Case = (&'static str, &'static str, &'static str, fn(u64) -> u64);

/// Every element type, with builtin operators: i32, i64, f32, f64, bool.
#[test]
fn every_element_type_and_builtin_operator() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let cases: [Case; 8] = [
        ("i32", "(+)", "0i32", |i| {
            Const::I32((i as i32).wrapping_mul(7919) % 1000 - 500).to_bits()
        }),
        ("i32", "(min)", "2147483647i32", |i| {
            Const::I32(((i * 31) % 1001) as i32 - 700).to_bits()
        }),
        ("i64", "(*)", "1i64", |i| {
            Const::I64(if i % 3 == 0 { -1 } else { 1 }).to_bits()
        }),
        ("i64", "(min)", "9223372036854775807i64", |i| {
            Const::I64(((i * 7) % 1003) as i64 + 5).to_bits()
        }),
        ("f32", "(max)", "0f32", |i| {
            Const::F32(((i % 13) as f32 * 0.5).to_bits()).to_bits()
        }),
        ("f64", "(+)", "0f64", |i| {
            Const::F64(((i % 11) as f64 * 0.125 - 0.25).to_bits()).to_bits()
        }),
        ("bool", "(||)", "false", |i| (i % 97 == 13) as u64),
        ("bool", "(&&)", "true", |i| (i % 1009 != 1000) as u64),
    ];
    for (t, op, ne, elem) in cases {
        let prim = Prim::from_name(t).unwrap();
        let new = lower(&device_form(t, op, ne));
        let old = lower(&host_form(t, op, ne));
        for n in [0, 1, 257, 4099] {
            let inputs = [Value::int(n as i64), vector(prim, (0..n).map(elem))];
            let b = Both::of(&dev, &new, &inputs);
            assert_eq!(device_reduces(&b.compiled), 1, "{t} {op}");
            let (got, st) = b.agreed();
            assert_eq!(st.sync_reads, 0, "{t} {op} at {n}");
            let (got_old, _) = Both::of(&dev, &old, &inputs).agreed();
            if prim.is_float() {
                assert!(got[0].close_to(&got_old[0]), "{t} {op} at {n}");
            } else {
                assert_eq!(got, got_old, "{t} {op} at {n}");
            }
        }
    }
}

/// A lambda that is associative but not commutative ("the last element
/// that is not -1", -1 neutral): combined in order on the device.
#[test]
fn a_lambda_operator_keeps_the_order() {
    let _one = serial();
    let Some(dev) = device() else { return };
    for t in ["i32", "i64"] {
        let p = lower(&format!(
            "def main (n: int) (xm: mem) (xs: [n]{t} @ xm -> R(n)) =
               let (none: {t}) = 0{t} - 1{t}
               let (s_mem: mem) = alloc 1 {t}
               let (s_arr: [1]{t} @ s_mem -> R(1)) = kernel k < 1 do
                 let (s: {t}) = reduce (\\(a: {t}) (b: {t}) ->
                     let (c: {t}) = if b == none then in (a) else in (b)
                     in (c)) none xs
                 in (s)
               in (s_arr)"
        ));
        let prim = Prim::from_name(t).unwrap();
        for n in SIZES {
            // Every fifth element is -1, and the last one too.
            let xs: Vec<i64> = (0..n)
                .map(|i| {
                    if i % 5 == 0 || i == n - 1 {
                        -1
                    } else {
                        i as i64
                    }
                })
                .collect();
            let want = xs.iter().rev().find(|&&x| x != -1).copied().unwrap_or(-1);
            let word = |x: i64| Const::from_bits(prim, x as u64).to_bits();
            let inputs = [
                Value::int(n as i64),
                vector(prim, xs.iter().map(|&x| word(x))),
            ];
            let b = Both::of(&dev, &p, &inputs);
            assert_eq!(device_reduces(&b.compiled), 1, "{}", b.compiled.print());
            let (got, st) = b.agreed();
            assert_eq!(got, [one(Const::from_bits(prim, word(want)))], "{t} at {n}");
            assert_eq!((st.sync_reads, st.device_copies), (0, 1));
        }
    }
}

/// An empty reduce writes its neutral element (here -1, not the block's
/// zero) with a non-blocking transfer: nothing launched, nothing copied,
/// no synchronous read.
#[test]
fn an_empty_reduce_writes_its_neutral_element() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = lower(
        "def main (n: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
           let (none: i64) = 0i64 - 1i64
           let (s_mem: mem) = alloc 1 i64
           let (s_arr: [1]i64 @ s_mem -> R(1)) = kernel k < 1 do
             let (s: i64) = reduce (\\(a: i64) (b: i64) -> let (c: i64) = a + b in (c)) none xs
             in (s)
           in (s_arr)",
    );
    let b = Both::of(&dev, &p, &[Value::int(0), vector(Prim::I64, [])]);
    assert_eq!(device_reduces(&b.compiled), 1);
    let (got, st) = b.agreed();
    assert_eq!(got, [one(Const::I64(-1))]);
    assert_eq!(
        (st.sync_reads, st.launches, st.device_copies),
        (0, 0, 0),
        "{st:?}"
    );
    // The neutral element (the empty input block moves nothing).
    assert_eq!((st.h2d_transfers, st.h2d_bytes), (1, 8));
    // f32 `(*)`: 1.
    let p = lower(&device_form("f32", "(*)", "1f32"));
    let (got, st) = Both::of(&dev, &p, &[Value::int(0), vector(Prim::F32, [])]).agreed();
    assert_eq!(got, [one(Const::F32(1f32.to_bits()))]);
    assert_eq!(st.sync_reads, 0);
}

/// The result goes to the element the result's LMAD says, and nowhere
/// else: IMP as the lowering writes it, into a block of four that a kernel
/// filled with 7s first, at `k + 2`; empty and not.
#[test]
fn the_result_lands_at_its_element_of_the_block() {
    let _one = serial();
    let Some(dev) = device() else { return };
    for t in ["i32", "i64", "f32", "f64"] {
        let p = imp(&format!(
            "def main (n: int) (xs: [n]{t} @ xm -> R(n)) =
               var m: mem; m <- alloc 4 {t};
               kernel j < 4 do m[j] <- 7{t} done;
               kernel k < 1 do
                 var s: {t};
                 s <- reduce (+) 0{t} for i < n do var e: {t}; e <- xm[i] yield e done;
                 m[k + 2] <- s
               done
             out (r: [4]{t} @ m -> R(4))"
        ));
        let prim = Prim::from_name(t).unwrap();
        let c = |k: i64| match prim {
            Prim::F32 => Const::F32((k as f32).to_bits()),
            Prim::F64 => Const::F64((k as f64).to_bits()),
            _ => Const::from_bits(prim, k as u64),
        };
        for n in [0u64, 3, 1000] {
            let xs = (0..n).map(|i| c((i % 4) as i64).to_bits());
            let inputs = [Value::int(n as i64), vector(prim, xs)];
            let b = Both::of(&dev, &p, &inputs);
            assert_eq!(device_reduces(&b.compiled), 1);
            let (got, st) = b.agreed();
            let sum: i64 = (0..n).map(|i| (i % 4) as i64).sum();
            let want = vector(prim, [7, 7, sum, 7].map(|k| c(k).to_bits()));
            assert_eq!(got, [want], "{t} at {n}");
            assert_eq!(st.sync_reads, 0);
        }
    }
}

/// Views: a slice (offset 1, the result at the LMAD's offset 2 of a block
/// of four), and a row of a transposed matrix (a column: stride m).
#[test]
fn slices_and_transposed_views() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = lower(
        "def main (n: int) (k: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
           let (s_mem: mem) = alloc 4 i64
           let (ys: [k]i64 @ xm -> 1 + {(k : 1)}) = xs[1:k]
           let (s_arr: [1]i64 @ s_mem -> 2 + {(1 : 1)}) = kernel t < 1 do
             let (s: i64) = reduce (+) 0i64 ys
             in (s)
           in (s_arr)",
    );
    for (n, k) in [(6u64, 4u64), (1000, 998), (5, 0)] {
        let inputs = [
            Value::int(n as i64),
            Value::int(k as i64),
            vector(Prim::I64, 1..=n),
        ];
        let b = Both::of(&dev, &p, &inputs);
        assert_eq!(device_reduces(&b.compiled), 1, "{}", b.compiled.print());
        let (got, st) = b.agreed();
        let want: u64 = (2..k + 2).sum();
        assert_eq!(got, [one(Const::I64(want as i64))], "{n} {k}");
        assert_eq!(st.sync_reads, 0);
    }
    // A slice out of bounds is stuck before the reduce, as before.
    let b = Both::of(
        &dev,
        &p,
        &[Value::int(3), Value::int(5), vector(Prim::I64, 1..=3)],
    );
    b.stuck_alike();
    let p = lower(
        "def main (n: int) (m: int) (xm: mem) (xss: [n][m]f64 @ xm -> R(n, m)) =
           let (tr: [m][n]f64 @ xm -> 0 + {(m : 1) (n : m)}) = transpose xss
           let (col: [n]f64 @ xm -> 1 + {(n : m)}) = tr[1]
           let (s_mem: mem) = alloc 1 f64
           let (s_arr: [1]f64 @ s_mem -> R(1)) = kernel k < 1 do
             let (s: f64) = reduce (+) 0f64 col
             in (s)
           in (s_arr)",
    );
    for (n, m) in [(2u64, 3u64), (3000, 5)] {
        let x = |i: u64| ((i % 9) as f64 * 0.5).to_bits();
        let inputs = [
            Value::int(n as i64),
            Value::int(m as i64),
            Value::Array(ArrayValue {
                shape: vec![n as usize, m as usize],
                data: Elems::from_words(Prim::F64, (0..n * m).map(x)),
            }),
        ];
        let b = Both::of(&dev, &p, &inputs);
        assert_eq!(device_reduces(&b.compiled), 1, "{}", b.compiled.print());
        let (got, st) = b.agreed();
        let want: f64 = (0..n).map(|i| f64::from_bits(x(i * m + 1))).sum();
        assert!(
            got[0].close_to(&one(Const::F64(want.to_bits()))),
            "{}",
            got[0]
        );
        assert_eq!(st.sync_reads, 0);
    }
}

/// The same statement with one more declaration after the write: not the
/// shape, so translated as before (the reduce in the work-item).
fn old_way(device_text: &str) -> String {
    let i = device_text.rfind("done\n").expect("the kernel's end");
    format!(
        "{}; var after: i64\n{}",
        device_text[..i].trim_end(),
        &device_text[i..]
    )
}

/// Errors: in the operator (the yield's division: E-IMP-REDUCE; a
/// statement's: E-IMP-ASSIGN-INT), in the elements (a division, a read out
/// of bounds), in the write (its index out of bounds; a division by zero
/// in it), and a reduce's error before its write's. Each is the
/// interpreter's rule and kind, and that of the kernel run the old way.
#[test]
fn errors_in_the_operator_the_elements_and_the_write_are_stuck_alike() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let program = |op: &str, body: &str, at: &str| {
        format!(
            "def main (n: int) (z: int) (xs: [n]i64 @ xm -> R(n)) =
               var m: mem; m <- alloc 2;
               kernel k < 1 do
                 var s: int;
                 s <- reduce {op} 0 for i < n do var e: int; {body} yield e done;
                 m[{at}] <- s
               done
             out (r: [2]int @ m -> R(2))"
        )
    };
    let ok = "e <- xm[i]";
    let lambda_yield = "(\\a b -> skip yield a + b + 0 * (100 / (b + 1000000)))";
    let lambda_stmt = "(\\a b -> var c: int; c <- 100 / (b + 1000000) yield a + b + 0 * c)";
    let cases = [
        (program(lambda_yield, ok, "k"), "E-IMP-REDUCE"),
        (program(lambda_stmt, ok, "k"), "E-IMP-ASSIGN-INT"),
        (
            program(
                "(+)",
                "var x: int; x <- xm[i]; e <- 100 / (x + 1000000)",
                "k",
            ),
            "E-IMP-ASSIGN-INT",
        ),
        (program("(+)", "e <- xm[i + 1]", "k"), "E-IMP-READ"),
        (program("(+)", ok, "k + 2"), "E-IMP-WRITE"),
        (program("(+)", ok, "k / z"), "E-IMP-WRITE"),
        // Both the reduce and the write go wrong: the reduce first.
        (program(lambda_yield, ok, "k + 2"), "E-IMP-REDUCE"),
    ];
    // Positive elements, and -1000000 at 617.
    let xs = (0..1000u64).map(|i| {
        if i == 617 {
            -1_000_000i64 as u64
        } else {
            1 + i % 3
        }
    });
    let inputs = [Value::int(1000), Value::int(0), vector(Prim::I64, xs)];
    for (text, rule) in &cases {
        let p = imp(text);
        let b = Both::of(&dev, &p, &inputs);
        assert_eq!(device_reduces(&b.compiled), 1, "{text}");
        let e = b.stuck_alike();
        assert_eq!((&e.kind, e.rule), (&ErrorKind::Stuck, *rule), "{text}: {e}");
        // The same kernel, run the old way.
        let q = imp(&old_way(text));
        let b = Both::of(&dev, &q, &inputs);
        assert_eq!(device_reduces(&b.compiled), 0, "{}", old_way(text));
        let e = b.stuck_alike();
        assert_eq!(e.rule, *rule, "{}: {e}", old_way(text));
    }
    // A FUNMEM lambda dividing by zero.
    let p = lower(
        "def main (n: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
           let (s_mem: mem) = alloc 1 i64
           let (s_arr: [1]i64 @ s_mem -> R(1)) = kernel k < 1 do
             let (s: i64) = reduce (\\(a: i64) (b: i64) -> let (c: i64) = 100 / (b + 1000000) in (a + b + 0 * c)) 0i64 xs
             in (s)
           in (s_arr)",
    );
    let b = Both::of(&dev, &p, &[inputs[0].clone(), inputs[2].clone()]);
    assert_eq!(device_reduces(&b.compiled), 1);
    assert_eq!(b.stuck_alike().kind, ErrorKind::Stuck);
}

/// Fuel: a device reduce of n elements spends n, as a host reduce does;
/// with less left, it is out of fuel (E-IMP-REDUCE).
#[test]
fn fuel_is_spent_as_a_host_reduce_spends_it() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = lower(&device_form("i64", "(+)", "0i64"));
    let c = compile(&p).unwrap();
    let mut rt = Runtime::new(&dev, &c).unwrap();
    let inputs = [Value::int(5000), vector(Prim::I64, 0..5000)];
    let tight = |fuel| Limits {
        fuel,
        max_heap: 1 << 20,
    };
    let (got, _) = rt.run(&inputs, tight(5000), false).unwrap();
    assert_eq!(got, [one(Const::I64(5000 * 4999 / 2))]);
    match rt.run(&inputs, tight(4999), false) {
        Err(GpuError::Program(e)) => {
            assert_eq!((e.kind, e.rule), (ErrorKind::OutOfFuel, "E-IMP-REDUCE"))
        }
        other => panic!("{other:?}"),
    }
    // The old form's host reduce, the same.
    let c = compile(&lower(&host_form("i64", "(+)", "0i64"))).unwrap();
    let mut rt = Runtime::new(&dev, &c).unwrap();
    match rt.run(&inputs, tight(4999), false) {
        Err(GpuError::Program(e)) => {
            assert_eq!((e.kind, e.rule), (ErrorKind::OutOfFuel, "E-IMP-REDUCE"))
        }
        other => panic!("{other:?}"),
    }
}

/// `funmem bench`'s numbers: the device reduce has no synchronous read and
/// reports its statement as `reduce'`; the old form has one.
#[test]
fn bench_reports_the_difference() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let inputs = [Value::int(100_000), vector(Prim::I64, 0..100_000)];
    let opts = || BenchOptions {
        runs: 2,
        warmup: 0,
        limits: limits(),
        timeout: None,
    };
    let passes = "simplify,coalesce,reuse,expand-gpu";
    let mut reports = Vec::new();
    for src in [
        device_form("i64", "(+)", "0i64"),
        host_form("i64", "(+)", "0i64"),
    ] {
        let c = compile(&lower_with(&src, passes)).unwrap();
        let mut rt = Runtime::new(&dev, &c).unwrap();
        let (got, report) = bench(&mut rt, &inputs, opts(), &mut |_| {}).unwrap();
        assert_eq!(got, [one(Const::I64(100_000 * 99_999 / 2))]);
        reports.push(report);
    }
    let (new, old) = (&reports[0], &reports[1]);
    assert_eq!((new.run.sync_reads, old.run.sync_reads), (0, 1));
    assert_eq!((new.run.d2h_transfers, old.run.d2h_transfers), (1, 2));
    assert!(new.reductions[0].what.starts_with("reduce' "), "{new:?}");
    assert!(old.reductions[0].what.starts_with("reduce "), "{old:?}");
    // Both read the 100000 elements once in their stages.
    assert_eq!(new.reductions[0].bytes, old.reductions[0].bytes);
}

/// The migration pass's own output: a FUN program whose reduce's result
/// only a kernel uses becomes, after `migrate`, a device reduce (no
/// synchronous read); without it, a host reduce (one).
#[test]
fn the_migration_pass_output_is_a_device_reduce() {
    let src = "def main (n: int) (xs: [n]f32) =
           let (s: f32) = reduce (+) 0f32 xs
           let (ys: [n]f32) = kernel i < n do
               let (y: f32) = xs[i] / s
               in (y)
           in (ys)";
    let migrated = lower_lang(src, Lang::Fun, "simplify,migrate,expand-gpu");
    let plain = lower_lang(src, Lang::Fun, "simplify,expand-gpu");
    assert_eq!(device_reduces(&compile(&migrated).unwrap()), 1);
    assert_eq!(device_reduces(&compile(&plain).unwrap()), 0);
    let _one = serial();
    let Some(dev) = device() else { return };
    for n in [0u64, 5, 3000] {
        let xs = (0..n).map(|i| ((i % 10 + 1) as f32).to_bits() as u64);
        let inputs = [Value::int(n as i64), vector(Prim::F32, xs)];
        let (got, st) = Both::of(&dev, &migrated, &inputs).agreed();
        assert_eq!((st.sync_reads, st.device_copies), (0, (n > 0) as u64));
        let (want, st) = Both::of(&dev, &plain, &inputs).agreed();
        // (An empty host reduce reads nothing either.)
        assert_eq!(st.sync_reads, (n > 0) as u64);
        assert!(
            got.len() == 1 && got[0].close_to(&want[0]),
            "{got:?} against {want:?}"
        );
    }
}

/// Inside a host loop and an `if`, a device reduce runs each time it is
/// reached; the kernel's index and the loop's are the host's values.
#[test]
fn in_host_loops_and_branches() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = imp(
        "def main (n: int) (t: int) (c: int) (xs: [n]int @ xm -> R(n)) =
           var m: mem; m <- alloc t;
           for r < t do
             kernel k < 1 do
               var s: int;
               s <- reduce (+) 0 for i < n - r do var e: int; e <- xm[i] yield e done;
               m[r] <- s
             done
           done;
           if c then
             kernel k < 1 do
               var s: int;
               s <- reduce (max) 0 for i < n do var e: int; e <- xm[i] yield e done;
               m[0] <- s
             done
           else skip fi
         out (res: [t]int @ m -> R(t))",
    );
    let inputs = |c: i64| {
        [
            Value::int(300),
            Value::int(4),
            Value::int(c),
            vector(Prim::I64, 0..300),
        ]
    };
    let sums = |k: u64| (0..300 - k).sum::<u64>();
    let b = Both::of(&dev, &p, &inputs(0));
    assert_eq!(device_reduces(&b.compiled), 2);
    let (got, st) = b.agreed();
    assert_eq!(got, [vector(Prim::I64, (0..4).map(sums))]);
    assert_eq!((st.sync_reads, st.device_copies), (0, 4));
    let (got, st) = Both::of(&dev, &p, &inputs(1)).agreed();
    assert_eq!(got, [vector(Prim::I64, [299, sums(1), sums(2), sums(3)])]);
    assert_eq!((st.sync_reads, st.device_copies), (0, 5));
}

/// Statements of other shapes are translated as before (their reduce runs
/// in the work-item) and still agree: a bound that is not the literal 1, a
/// statement after the write, a write of something else, an index that
/// depends on the result, a result declared outside the statement's
/// declarations, a reduce in a kernel of many iterations.
#[test]
fn other_shapes_fall_back_to_the_work_item() {
    let reduce = "s <- reduce (+) 0 for i < n do var e: int; e <- xm[i] yield e done";
    let shapes = [
        format!("kernel k < 2 do var s: int; {reduce}; m[k] <- s done"),
        format!("kernel k < one do var s: int; {reduce}; m[k] <- s done"),
        format!("kernel k < 1 do var s: int; {reduce}; m[k] <- s; m[k + 1] <- s done"),
        format!("kernel k < 1 do var s: int; var u: int; {reduce}; u <- s + 1; m[k] <- u done"),
        format!("kernel k < 1 do var s: int; {reduce}; m[k] <- 5 done"),
        format!("kernel k < 1 do var s: int; {reduce}; m[s - s] <- s done"),
        format!("kernel k < 1 do var s: int; {reduce}; var u: int; m[k] <- s done"),
        format!("kernel k < 1 do var s: int; if one then {reduce} else skip fi; m[k] <- s done"),
        format!("kernel j < 2 do kernel k < 1 do var s: int; {reduce}; m[k + j] <- s done done"),
    ];
    let programs: Vec<Program> = shapes
        .iter()
        .map(|k| {
            imp(&format!(
                "def main (n: int) (xs: [n]int @ xm -> R(n)) =
                   var one: int; one <- 1;
                   var m: mem; m <- alloc 2;
                   {k}
                 out (r: [2]int @ m -> R(2))"
            ))
        })
        .collect();
    for (p, k) in programs.iter().zip(&shapes) {
        let c = compile(p).unwrap();
        assert_eq!(device_reduces(&c), 0, "{k}");
        assert!(c.reds.is_empty(), "{k}");
    }
    // The shape itself, with declarations before and after the result's,
    // `skip`s, and the kernel's index in the reduce.
    let p = imp("def main (n: int) (xs: [n]int @ xm -> R(n)) =
           var m: mem; m <- alloc 2;
           kernel k < 1 do
             var a: int; skip; var s: int; var b: int;
             s <- reduce (+) a for i < n + k do var e: int; e <- xm[i] yield e + b done;
             skip;
             m[k + 1] <- s
           done
         out (r: [2]int @ m -> R(2))");
    let c = compile(&p).unwrap();
    assert_eq!(device_reduces(&c), 1, "{}", c.print());
    let _one = serial();
    let Some(dev) = device() else { return };
    let inputs = [Value::int(1000), vector(Prim::I64, 0..1000)];
    for p in &programs {
        Both::of(&dev, p, &inputs).agreed();
    }
    let (got, st) = Both::of(&dev, &p, &inputs).agreed();
    assert_eq!(got, [vector(Prim::I64, [0, 999 * 1000 / 2])]);
    assert_eq!(st.sync_reads, 0);
}
