//! Element types, `reduce` and `scan` on OpenCL (PoCL): typed kernels give
//! exactly what the typed scalar operators (`funmem_semantics::scalar`, the
//! reference definition every interpreter shares) give, for i32, i64, f32,
//! f64 and bool, conversions and wrapping included; host-level `reduce` and
//! `scan` (parallel kernels) give the left fold and its prefixes, with
//! builtin operators and with lambdas (an associative operator that is not
//! commutative checks that the combination keeps the order), at sizes
//! around the work-group's; float sums within the float tolerance, the rest
//! exactly; a lambda that divides by zero is stuck by E-IMP-REDUCE on the
//! device too; `reduce` and `scan` inside a kernel run in the work-item.
//!
//! Like `opencl.rs`, these tests need an OpenCL device (`FUNMEM_OPENCL_DEVICE`,
//! default `pocl`; `FUNMEM_SKIP_OPENCL=1` skips them).

use funmem_gpu::{GpuError, Runtime};
use funmem_lang::ast::{BinOp, UnOp};
use funmem_lang::imp::Program;
use funmem_lang::parse::parse_imp;
use funmem_lang::prim::{Const, Prim};
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::scalar::{binop_t, unop_t};
use funmem_semantics::value::{ArrayValue, Elems, Value};

mod common;
use common::{device, serial};

fn imp(text: &str) -> Program {
    let p = parse_imp(text).unwrap_or_else(|d| panic!("{d}\n{text}"));
    funmem_lang::check::check_imp(&p).unwrap_or_else(|d| panic!("{d}\n{text}"));
    p
}

fn limits() -> Limits {
    Limits {
        fuel: 100_000_000,
        max_heap: 1 << 24,
    }
}

fn vector(p: Prim, ws: &[u64]) -> Value {
    Value::Array(ArrayValue {
        shape: vec![ws.len()],
        data: Elems::from_words(p, ws.iter().copied()),
    })
}

/// Interesting values of each type, as words.
fn samples(p: Prim) -> Vec<u64> {
    match p {
        Prim::Bool => vec![0, 1],
        Prim::I32 => [i32::MIN, -7, -1, 0, 1, 3, 7, 123_456, i32::MAX]
            .iter()
            .map(|&k| Const::I32(k).to_bits())
            .collect(),
        Prim::I64 => [i64::MIN, -7, -1, 0, 1, 3, 7, 1 << 40, i64::MAX]
            .iter()
            .map(|&k| k as u64)
            .collect(),
        Prim::F32 => [
            0.0f32,
            -2.25,
            1.5,
            3.0,
            1e-40,
            1e30,
            -3.7e9,
            f32::INFINITY,
            f32::NAN,
        ]
        .iter()
        .map(|&x| x.to_bits() as u64)
        .collect(),
        Prim::F64 => [
            0.0f64,
            -2.25,
            1.5,
            3.0,
            1e-310,
            1e300,
            -3.7e19,
            f64::INFINITY,
            f64::NAN,
        ]
        .iter()
        .map(|&x| x.to_bits())
        .collect(),
    }
}

fn binops(p: Prim) -> Vec<BinOp> {
    use BinOp::*;
    match p {
        Prim::Bool => vec![And, Or, Lt, Le, Eq, Ne],
        _ => vec![Add, Sub, Mul, Div, Rem, Min, Max, Lt, Ge, Eq, Ne],
    }
}

/// One kernel per operator and type over every pair of samples: the
/// device's results equal `binop_t`'s bit for bit (divisions by zero are
/// left out: they are stuck, tested below).
#[test]
fn typed_binary_operators_are_exact() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let mut cases = Vec::new();
    for p in [Prim::Bool, Prim::I32, Prim::I64, Prim::F32, Prim::F64] {
        let s = samples(p);
        for op in binops(p) {
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            for &a in &s {
                for &b in &s {
                    if p.is_int() && matches!(op, BinOp::Div | BinOp::Rem) && b == 0 {
                        continue;
                    }
                    xs.push(a);
                    ys.push(b);
                }
            }
            let rt = match op {
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => Prim::Bool,
                _ => p,
            };
            let t = p.name();
            let e = match op {
                BinOp::Min | BinOp::Max => format!("{}(x, y)", op.symbol()),
                _ => format!("x {} y", op.symbol()),
            };
            let text = format!(
                "def main (n: i64) (xs: [n]{t} @ xm -> R(n)) (ys: [n]{t} @ ym -> R(n)) =
                   var rm: mem; rm <- alloc n {r};
                   kernel i < n do
                     var x: {t}; x <- xm[i]; var y: {t}; y <- ym[i];
                     rm[i] <- {e}
                   done
                 out (r: [n]{r} @ rm -> R(n))",
                r = rt.name()
            );
            let want: Vec<u64> = xs
                .iter()
                .zip(&ys)
                .map(|(&a, &b)| binop_t(op, p, a, b).unwrap())
                .collect();
            cases.push((imp(&text), xs, ys, p, want, format!("{t} {}", op.symbol())));
        }
    }
    let programs: Vec<Program> = cases.iter().map(|c| c.0.clone()).collect();
    let runtimes = Runtime::batch(&dev, &programs).unwrap();
    for ((_, xs, ys, p, want, what), rt) in cases.iter().zip(runtimes) {
        let mut rt = rt.unwrap_or_else(|d| panic!("{what}: {d}"));
        let inputs = [Value::int(xs.len() as i64), vector(*p, xs), vector(*p, ys)];
        let (got, _) = rt
            .run(&inputs, limits(), false)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        // Values compare exactly, any NaN equal to any NaN.
        let rt_t = match got[0].prim() {
            Prim::Bool => Prim::Bool,
            _ => *p,
        };
        assert_eq!(got[0], vector(rt_t, want), "{what} on {xs:?} and {ys:?}");
    }
}

/// Unary operators and every conversion, against `unop_t`: exact, except
/// `exp` and `log`, which OpenCL may compute differently in the last bits.
#[test]
fn typed_unary_operators_and_conversions_are_exact() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let all = [Prim::Bool, Prim::I32, Prim::I64, Prim::F32, Prim::F64];
    let mut cases = Vec::new();
    for p in all {
        let mut ops: Vec<UnOp> = all.iter().map(|&t| UnOp::Conv(t)).collect();
        ops.push(UnOp::Not);
        if p != Prim::Bool {
            ops.extend([UnOp::Neg, UnOp::Abs]);
        }
        if p.is_float() {
            ops.extend([UnOp::Sqrt, UnOp::Floor, UnOp::Exp, UnOp::Log]);
        }
        if p.is_float() {
            // `!` is for bools and integers.
            ops.retain(|o| *o != UnOp::Not);
        }
        for op in ops {
            let xs = samples(p);
            let (rt, e) = match op {
                UnOp::Conv(t) => (t, format!("{}(x)", t.name())),
                UnOp::Neg => (p, "-x".to_string()),
                UnOp::Not => (p, "!x".to_string()),
                UnOp::Abs => (p, "abs(x)".to_string()),
                UnOp::Sqrt => (p, "sqrt(x)".to_string()),
                UnOp::Floor => (p, "floor(x)".to_string()),
                UnOp::Exp => (p, "exp(x)".to_string()),
                UnOp::Log => (p, "log(x)".to_string()),
            };
            let t = p.name();
            let text = format!(
                "def main (n: i64) (xs: [n]{t} @ xm -> R(n)) =
                   var rm: mem; rm <- alloc n {r};
                   kernel i < n do var x: {t}; x <- xm[i]; rm[i] <- {e} done
                 out (r: [n]{r} @ rm -> R(n))",
                r = rt.name()
            );
            let want: Vec<u64> = xs.iter().map(|&a| unop_t(op, p, a)).collect();
            let close = matches!(op, UnOp::Exp | UnOp::Log);
            cases.push((imp(&text), xs, p, rt, want, close, format!("{e} on {t}")));
        }
    }
    let programs: Vec<Program> = cases.iter().map(|c| c.0.clone()).collect();
    let runtimes = Runtime::batch(&dev, &programs).unwrap();
    for ((_, xs, p, rt_t, want, close, what), rt) in cases.iter().zip(runtimes) {
        let mut rt = rt.unwrap_or_else(|d| panic!("{what}: {d}"));
        let inputs = [Value::int(xs.len() as i64), vector(*p, xs)];
        let (got, _) = rt
            .run(&inputs, limits(), false)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let want_v = vector(*rt_t, want);
        if *close {
            assert!(got[0].close_to(&want_v), "{what}: {} vs {want_v}", got[0]);
        } else {
            assert_eq!(got[0], want_v, "{what}");
        }
    }
}

/// An i32 division by zero in a kernel is stuck, as on the host.
#[test]
fn i32_division_by_zero_is_stuck() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (n: i64) (xs: [n]i32 @ xm -> R(n)) =
           var rm: mem; rm <- alloc n i32;
           kernel i < n do var x: i32; x <- xm[i]; rm[i] <- 7i32 / x done
         out (r: [n]i32 @ rm -> R(n))");
    let mut rt = Runtime::new(&dev, &funmem_gpu::compile(&p).unwrap()).unwrap();
    let xs = [1u64, 0, 2];
    let r = rt.run(&[Value::int(3), vector(Prim::I32, &xs)], limits(), false);
    match r {
        Err(GpuError::Program(e)) => {
            assert_eq!(e.kind, ErrorKind::Stuck);
            assert!(e.message.contains("division by zero"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

/// The left fold of `op` (a word function) from `ne`, and its prefixes.
fn fold(ne: u64, xs: &[u64], op: &dyn Fn(u64, u64) -> u64) -> (u64, Vec<u64>) {
    let mut acc = ne;
    let mut pre = Vec::new();
    for &x in xs {
        acc = op(acc, x);
        pre.push(acc);
    }
    (acc, pre)
}

/// Elements of type `p` for a reduction test: small integers (so that
/// float sums stay meaningful), with every sign.
fn elems(p: Prim, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| {
            let k = (i as i64 * 7919 % 23) - 11;
            match p {
                Prim::Bool => (i % 3 != 0) as u64,
                Prim::I32 => Const::I32(k as i32 * 100_003).to_bits(),
                Prim::I64 => (k * 1_000_000_007) as u64,
                Prim::F32 => (k as f32 * 0.75).to_bits() as u64,
                Prim::F64 => (k as f64 * 0.75).to_bits(),
            }
        })
        .collect()
}

const SIZES: [usize; 6] = [0, 1, 255, 256, 257, 100_000];

/// Host-level reduce and scan with builtin operators, every type, sizes
/// around the work-group's.
#[test]
fn builtin_reduce_and_scan_give_the_fold_and_its_prefixes() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let mut cases = Vec::new();
    for p in [Prim::Bool, Prim::I32, Prim::I64, Prim::F32, Prim::F64] {
        let ops: Vec<(BinOp, &str, u64)> = match p {
            Prim::Bool => vec![(BinOp::And, "&&", 1), (BinOp::Or, "||", 0)],
            Prim::I32 => vec![
                (BinOp::Add, "+", 0),
                (BinOp::Mul, "*", 1),
                (BinOp::Min, "min", i32::MAX as u64),
                (BinOp::Max, "max", Const::I32(i32::MIN).to_bits()),
            ],
            Prim::I64 => vec![
                (BinOp::Add, "+", 0),
                (BinOp::Mul, "*", 1),
                (BinOp::Max, "max", i64::MIN as u64),
            ],
            Prim::F32 => vec![
                (BinOp::Add, "+", 0),
                (BinOp::Max, "max", f32::NEG_INFINITY.to_bits() as u64),
            ],
            _ => vec![
                (BinOp::Add, "+", 0),
                (BinOp::Min, "min", f64::INFINITY.to_bits()),
            ],
        };
        for (op, sym, ne) in ops {
            let t = p.name();
            let nec = Const::from_bits(p, ne).program_text();
            let text = format!(
                "def main (n: i64) (xs: [n]{t} @ xm -> R(n)) =
                   var r: {t};
                   r <- reduce ({sym}) {nec} for i < n do var x: {t}; x <- xm[i] yield x done;
                   var ym: mem; ym <- alloc n {t};
                   scan ({sym}) {nec} for i < n do var x: {t}; x <- xm[i] yield x into ym[i] done
                 out (r, s: [n]{t} @ ym -> R(n))"
            );
            cases.push((imp(&text), p, op, ne, format!("{sym} on {t}")));
        }
    }
    let programs: Vec<Program> = cases.iter().map(|c| c.0.clone()).collect();
    let runtimes = Runtime::batch(&dev, &programs).unwrap();
    for ((_, p, op, ne, what), rt) in cases.iter().zip(runtimes) {
        let mut rt = rt.unwrap_or_else(|d| panic!("{what}: {d}"));
        for n in SIZES {
            let xs = elems(*p, n);
            let (r, pre) = fold(*ne, &xs, &|a, b| binop_t(*op, *p, a, b).unwrap());
            let (got, _) = rt
                .run(&[Value::int(n as i64), vector(*p, &xs)], limits(), false)
                .unwrap_or_else(|e| panic!("{what} at {n}: {e}"));
            let want = [Value::Scalar(Const::from_bits(*p, r)), vector(*p, &pre)];
            if p.is_float() && *op == BinOp::Add {
                for (g, w) in got.iter().zip(&want) {
                    assert!(g.close_to(w), "{what} at {n}: {g} vs {w}");
                }
            } else {
                assert_eq!(got, want, "{what} at {n}");
            }
        }
    }
}

/// A scan whose iteration i writes at n - 1 - i, and whose elements are
/// computed (i % 5 - 1) rather than read: each prefix must land where its
/// own iteration says, across the last stage's tiles (the write index stays
/// with the work-item that computed the element), for a builtin operator
/// and an order-sensitive lambda, 4- and 8-byte elements.
#[test]
fn scan_writes_each_prefix_where_its_iteration_says() {
    let _one = serial();
    let Some(dev) = device() else { return };
    for t in ["i32", "i64"] {
        let p = imp(&format!(
            "def main (n: i64) =
               var ym: mem; ym <- alloc n {t};
               scan (+) 0{t} for i < n do var x: {t}; x <- {t}(i % 5 - 1)
                    yield x into ym[n - 1 - i] done;
               var zm: mem; zm <- alloc n {t};
               scan (\\a b -> var c: {t}; var u: bool; u <- b == -1{t};
                             if u then c <- a else c <- b fi yield c)
                    -1{t} for i < n do var x: {t}; x <- {t}(i % 5 - 1)
                    yield x into zm[n - 1 - i] done
             out (s: [n]{t} @ ym -> R(n), z: [n]{t} @ zm -> R(n))"
        ));
        let prim = Prim::from_name(t).unwrap();
        let mut rt = Runtime::new(&dev, &funmem_gpu::compile(&p).unwrap()).unwrap();
        let m1 = Const::from_bits(prim, u64::MAX).to_bits();
        for n in SIZES.into_iter().chain([12_345]) {
            let xs: Vec<u64> = (0..n)
                .map(|i| Const::from_bits(prim, ((i % 5) as i64 - 1) as u64).to_bits())
                .collect();
            let (_, mut sums) = fold(0, &xs, &|a, b| binop_t(BinOp::Add, prim, a, b).unwrap());
            let (_, mut last) = fold(m1, &xs, &|a, b| if b == m1 { a } else { b });
            sums.reverse();
            last.reverse();
            let (got, _) = rt
                .run(&[Value::int(n as i64)], limits(), false)
                .unwrap_or_else(|e| panic!("{t} at {n}: {e}"));
            assert_eq!(
                got,
                [vector(prim, &sums), vector(prim, &last)],
                "{t} at {n}"
            );
        }
    }
}

/// A lambda that is associative but not commutative ("the last element
/// that is not -1", -1 neutral): the device must combine in order.
#[test]
fn lambda_reduce_and_scan_keep_the_order() {
    let _one = serial();
    let Some(dev) = device() else { return };
    for t in ["i32", "i64"] {
        let p = imp(&format!(
            "def main (n: i64) (xs: [n]{t} @ xm -> R(n)) =
               var r: {t};
               r <- reduce (\\a b -> var c: {t}; var u: bool; u <- b == -1{t};
                                    if u then c <- a else c <- b fi yield c)
                    -1{t} for i < n do var x: {t}; x <- xm[i] yield x done;
               var ym: mem; ym <- alloc n {t};
               scan (\\a b -> var c: {t}; var u: bool; u <- b == -1{t};
                             if u then c <- a else c <- b fi yield c)
                    -1{t} for i < n do var x: {t}; x <- xm[i] yield x into ym[i] done
             out (r, s: [n]{t} @ ym -> R(n))"
        ));
        let prim = Prim::from_name(t).unwrap();
        let mut rt = Runtime::new(&dev, &funmem_gpu::compile(&p).unwrap()).unwrap();
        let m1 = Const::from_bits(prim, u64::MAX).to_bits();
        for n in SIZES {
            // i % 5 - 1: every fifth element is -1.
            let xs: Vec<u64> = (0..n)
                .map(|i| Const::from_bits(prim, ((i % 5) as i64 - 1) as u64).to_bits())
                .collect();
            let (r, pre) = fold(m1, &xs, &|a, b| if b == m1 { a } else { b });
            let (got, _) = rt
                .run(&[Value::int(n as i64), vector(prim, &xs)], limits(), false)
                .unwrap_or_else(|e| panic!("{t} at {n}: {e}"));
            assert_eq!(
                got,
                [Value::Scalar(Const::from_bits(prim, r)), vector(prim, &pre)],
                "{t} at {n}"
            );
        }
    }
}

/// A lambda (associative, 0 neutral) that divides by zero at one element
/// (-1000000, where every other element and partial sum is positive): stuck
/// by E-IMP-REDUCE on the device, as in the interpreter.
#[test]
fn a_lambda_dividing_by_zero_is_stuck() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (n: i64) (xs: [n]i64 @ xm -> R(n)) =
           var r: i64;
           r <- reduce (\\a b -> skip yield a + b + 0 * (100 / (b + 1000000))) 0
                for i < n do var x: i64; x <- xm[i] yield x done
         out (r)");
    let mut rt = Runtime::new(&dev, &funmem_gpu::compile(&p).unwrap()).unwrap();
    let xs: Vec<u64> = (0..1000u64)
        .map(|i| {
            if i == 617 {
                -1_000_000i64 as u64
            } else {
                1 + i % 3
            }
        })
        .collect();
    let r = rt.run(&[Value::int(1000), vector(Prim::I64, &xs)], limits(), false);
    match r {
        Err(GpuError::Program(e)) => {
            assert_eq!(
                (&e.kind, e.rule),
                (&ErrorKind::Stuck, "E-IMP-REDUCE"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Without the zero it runs.
    let xs: Vec<u64> = (0..1000u64).map(|i| 1 + i % 3).collect();
    let (got, _) = rt
        .run(&[Value::int(1000), vector(Prim::I64, &xs)], limits(), false)
        .unwrap();
    let want: i64 = xs.iter().map(|&b| b as i64).sum();
    assert_eq!(got, [Value::int(want)]);
}

/// Inside a kernel, reduce and scan run in the work-item, in order: row
/// sums, row prefix sums, a lambda, over an f32 matrix (exact: sequential).
#[test]
fn reduce_and_scan_inside_a_kernel_are_sequential() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (m: i64) (k: i64) (xs: [m][k]f32 @ xm -> R(m, k)) =
           var sm: mem; sm <- alloc m f32;
           var pm: mem; pm <- alloc m * k f32;
           var lm: mem; lm <- alloc m f32;
           kernel j < m do
             var s: f32;
             s <- reduce (+) 0f32 for i < k do var x: f32; x <- xm[j * k + i] yield x done;
             sm[j] <- s;
             scan (+) 0f32 for i < k do var x: f32; x <- xm[j * k + i] yield x into pm[j * k + i] done;
             var l: f32;
             l <- reduce (\\a b -> skip yield a * 0.5f32 + b) 0f32
                  for i < k do var x: f32; x <- xm[j * k + i] yield x done;
             lm[j] <- l
           done
         out (s: [m]f32 @ sm -> R(m), p: [m][k]f32 @ pm -> R(m, k), l: [m]f32 @ lm -> R(m))");
    let mut rt = Runtime::new(&dev, &funmem_gpu::compile(&p).unwrap()).unwrap();
    let (m, k) = (37usize, 53usize);
    let xs: Vec<f32> = (0..m * k)
        .map(|i| ((i * 31 % 17) as f32 - 8.0) * 0.1)
        .collect();
    let input = Value::Array(ArrayValue {
        shape: vec![m, k],
        data: Elems::F32(xs.clone()),
    });
    let (got, _) = rt
        .run(
            &[Value::int(m as i64), Value::int(k as i64), input],
            limits(),
            false,
        )
        .unwrap();
    let (mut s, mut pre, mut l) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..m {
        let row = &xs[j * k..(j + 1) * k];
        let mut acc = 0f32;
        for &x in row {
            acc += x;
            pre.push(acc);
        }
        s.push(acc);
        l.push(row.iter().fold(0f32, |a, &b| a * 0.5 + b));
    }
    let f = |shape: Vec<usize>, v: Vec<f32>| {
        Value::Array(ArrayValue {
            shape,
            data: Elems::F32(v),
        })
    };
    assert_eq!(got, [f(vec![m], s), f(vec![m, k], pre), f(vec![m], l)]);
}

/// Bool blocks are bytes: a kernel negating a bool array, its `&&` and
/// `||` reductions, and an i32 array beside it in the same block.
#[test]
fn bool_arrays_and_mixed_blocks() {
    let _one = serial();
    let Some(dev) = device() else { return };
    let p = imp("def main (n: i64) (bs: [n]bool @ bm -> R(n)) =
           var cm: mem; cm <- alloc n * 4 + 4 * n bool;
           kernel i < n do
             var b: bool; b <- bm[i];
             cm[i] <- !b;
             cm[n + i] <- i32(i) * 3i32
           done;
           var all: bool;
           all <- reduce (&&) true for i < n do var b: bool; b <- bm[i] yield b done;
           var any: bool;
           any <- reduce (||) false for i < n do var b: bool; b <- cm[i] yield b done
         out (c: [n]bool @ cm -> R(n), k: [n]i32 @ cm -> n + {(n : 1)}, all, any)");
    let mut rt = Runtime::new(&dev, &funmem_gpu::compile(&p).unwrap()).unwrap();
    let bs: Vec<bool> = (0..300).map(|i| i % 7 != 3).collect();
    let input = Value::Array(ArrayValue {
        shape: vec![300],
        data: Elems::Bool(bs.clone()),
    });
    let (got, _) = rt.run(&[Value::int(300), input], limits(), false).unwrap();
    let c: Vec<bool> = bs.iter().map(|b| !b).collect();
    let k: Vec<i32> = (0..300).map(|i| i * 3).collect();
    assert_eq!(
        got,
        [
            Value::Array(ArrayValue {
                shape: vec![300],
                data: Elems::Bool(c),
            }),
            Value::Array(ArrayValue {
                shape: vec![300],
                data: Elems::I32(k),
            }),
            Value::Scalar(Const::Bool(false)),
            Value::Scalar(Const::Bool(true)),
        ]
    );
}
