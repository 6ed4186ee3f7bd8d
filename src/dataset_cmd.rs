//! `funmem dataset`: random input data in Futhark's formats, like `futhark
//! dataset` (docs/data.md), so that large inputs for `funmem run`, test
//! blocks and benchmarks need no Futhark installation.
//!
//! Each `-g TYPE` writes one value of that type (`i64`, `[100][8]f32`,
//! `[10]bool`) with uniformly random elements, in text or (with `-b`) in
//! the binary format; `-g` may also give a literal value, written as it is.
//! Without `-g`, the values on standard input are written back in the
//! chosen format (text to binary and back). Integers range over their
//! whole type and floats over [0, 1] unless `--T-bounds=LO:HI` says
//! otherwise; the generator is our own (SplitMix64), so the data is
//! deterministic for a seed but not the same as Futhark's. Elements are
//! generated and written as a stream, so 10^8 of them need no memory.
//!
//! `--block FILE --dataset NAME` writes instead the inputs of one case of
//! a program's test block, exactly as `funmem test` and `funmem bench`
//! make them (the same seeds for `random input`), so that other tools
//! (the Rodinia references' script) can run on the same data.

use crate::{EXIT_NOT_A_PROGRAM, EXIT_WENT_WRONG};
use funmem_lang::prim::{Const, Prim};
use funmem_semantics::binary::{type_tag, VERSION};
use funmem_semantics::textual::{self, MAX_RANK};
use funmem_semantics::value::Value;
use std::io::{self, Write};
use std::process::ExitCode;

/// The command line of `funmem dataset`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Generate a value of this type (`i64`, `[10]f32`, `[100][8]bool`) or
    /// write this literal value; repeat for several values.
    #[arg(
        short = 'g',
        long = "generate",
        value_name = "TYPE",
        allow_hyphen_values = true
    )]
    generate: Vec<String>,
    /// Write the binary format (the default is text).
    #[arg(short = 'b', long)]
    binary: bool,
    /// Write text (the default).
    #[arg(long, conflicts_with = "binary")]
    text: bool,
    /// Seed of the random generator.
    #[arg(short = 's', long, default_value_t = 1)]
    seed: u64,
    /// Inclusive bounds LO:HI of generated i32 values.
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    i32_bounds: Option<String>,
    /// Inclusive bounds LO:HI of generated i64 values.
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    i64_bounds: Option<String>,
    /// Bounds LO:HI of generated f32 values (default 0:1).
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    f32_bounds: Option<String>,
    /// Bounds LO:HI of generated f64 values (default 0:1).
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    f64_bounds: Option<String>,
    /// Write the inputs of a case of this program's test block instead
    /// (as `funmem bench` names and makes them; see --dataset).
    #[arg(long, value_name = "FILE", conflicts_with = "generate")]
    block: Option<String>,
    /// With --block: the case whose name contains this (as `funmem bench
    /// --dataset` matches); it must pick exactly one.
    #[arg(long, value_name = "NAME", requires = "block")]
    dataset: Option<String>,
}

/// What to write for one `-g`.
enum Order {
    /// A random value of this shape and element type.
    Random(Vec<usize>, Prim),
    /// A literal value.
    Literal(Value),
}

/// The bounds of the generated values of each type.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    i32: (i32, i32),
    i64: (i64, i64),
    f32: (f32, f32),
    f64: (f64, f64),
}

impl Bounds {
    /// Each type's bounds from `text` (its `LO:HI`, if given), else the
    /// default ones.
    fn parse<'a>(text: impl Fn(&str) -> Option<&'a str>) -> Result<Bounds, String> {
        let d = DEFAULT_BOUNDS;
        Ok(Bounds {
            i32: bounds_of(text("i32"), "i32", d.i32)?,
            i64: bounds_of(text("i64"), "i64", d.i64)?,
            f32: bounds_of(text("f32"), "f32", d.f32)?,
            f64: bounds_of(text("f64"), "f64", d.f64)?,
        })
    }
}

/// Runs `funmem dataset`.
pub fn dataset(args: Args) -> Result<ExitCode, ExitCode> {
    let bad = |m: String| {
        eprintln!("funmem dataset: {m}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    };
    let bounds = Bounds::parse(|t| match t {
        "i32" => args.i32_bounds.as_deref(),
        "i64" => args.i64_bounds.as_deref(),
        "f32" => args.f32_bounds.as_deref(),
        _ => args.f64_bounds.as_deref(),
    })
    .map_err(bad)?;
    let orders = if let Some(file) = &args.block {
        block_case(file, args.dataset.as_deref())?
            .into_iter()
            .map(Order::Literal)
            .collect()
    } else if args.generate.is_empty() {
        let mut bytes = Vec::new();
        if let Err(e) = io::Read::read_to_end(&mut io::stdin(), &mut bytes) {
            return Err(bad(format!("cannot read standard input: {e}")));
        }
        textual::read_values(&bytes)
            .map_err(|e| bad(format!("standard input, byte {}: {}", e.start, e.message)))?
            .into_iter()
            .map(Order::Literal)
            .collect()
    } else {
        args.generate
            .iter()
            .map(|g| order_of(g))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?
    };
    let mut rng = SplitMix(args.seed);
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let written = orders.iter().try_for_each(|o| match o {
        Order::Literal(v) if args.binary => funmem_semantics::binary::write_value(&mut out, v),
        Order::Literal(v) => writeln!(out, "{v}"),
        Order::Random(shape, p) => {
            let mut next = || random(&mut rng, *p, &bounds);
            if args.binary {
                write_binary(&mut out, shape, *p, &mut next)
            } else {
                write_text(&mut out, shape, *p, &mut next).and_then(|()| writeln!(out))
            }
        }
    });
    written.and_then(|()| out.flush()).map_err(|e| {
        eprintln!("funmem dataset: cannot write the data: {e}");
        ExitCode::from(EXIT_WENT_WRONG)
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The inputs of the case of `file`'s test block whose name contains
/// `wanted` (the only case when `wanted` is none).
fn block_case(file: &str, wanted: Option<&str>) -> Result<Vec<Value>, ExitCode> {
    let (src, program) = crate::load(file)?;
    let spec = funmem_lang::testspec::parse(&src.text).map_err(|d| {
        crate::report(&src, &d);
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    })?;
    let bad = |m: String| {
        eprintln!("{file}: {m}");
        ExitCode::from(EXIT_NOT_A_PROGRAM)
    };
    let Some(spec) = spec else {
        return Err(bad("no test block (`-- ==`) to take a dataset from".into()));
    };
    let cases = crate::bench_cmd::named_cases(&spec);
    let names = || {
        cases
            .iter()
            .map(|(n, _, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let picked: Vec<_> = match wanted {
        // An exact name wins over names that merely contain it.
        Some(w) if cases.iter().any(|(n, _, _)| n == w) => {
            cases.iter().filter(|(n, _, _)| n == w).collect()
        }
        Some(w) => cases
            .iter()
            .filter(|(n, k, _)| crate::bench_cmd::picks(w, n, *k))
            .collect(),
        None => cases.iter().collect(),
    };
    let (k, case) = match picked.as_slice() {
        [one] => (one.1, one.2),
        [] => {
            return Err(bad(format!(
                "no dataset's name contains `{}`; the datasets are: {}",
                wanted.unwrap_or(""),
                names()
            )))
        }
        _ => {
            return Err(bad(format!(
                "{} datasets match{}; pick one with --dataset: {}",
                picked.len(),
                wanted.map(|w| format!(" `{w}`")).unwrap_or_default(),
                picked
                    .iter()
                    .map(|(n, _, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let dir = std::path::Path::new(file)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    crate::test_cmd::case_inputs(dir, &crate::input_prims(&program), case, k)
        .map_err(|m| bad(format!("dataset {}: {m}", picked[0].0)))
}

/// Reads `LO:HI` for type `name`, or gives `default` when absent.
fn bounds_of<T: std::str::FromStr + PartialOrd + Copy>(
    text: Option<&str>,
    name: &str,
    default: (T, T),
) -> Result<(T, T), String> {
    let Some(text) = text else {
        return Ok(default);
    };
    let bad =
        || format!("--{name}-bounds must be LO:HI with LO <= HI, two {name} values, not `{text}`");
    let (lo, hi) = text.split_once(':').ok_or_else(bad)?;
    let lo: T = lo.trim().parse().map_err(|_| bad())?;
    let hi: T = hi.trim().parse().map_err(|_| bad())?;
    // Incomparable bounds (NaN) are refused too.
    if !matches!(
        lo.partial_cmp(&hi),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    ) {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// Reads a `-g` argument: a type `[d]...[d]t`, or else a literal value.
fn order_of(g: &str) -> Result<Order, String> {
    let text = g.trim();
    let mut rest = text;
    let mut shape = Vec::new();
    while let Some(r) = rest.strip_prefix('[') {
        let Some((dim, r)) = r.split_once(']') else {
            break;
        };
        let Ok(d) = dim.trim().parse::<u64>() else {
            break;
        };
        shape.push(usize::try_from(d).map_err(|_| format!("the dimension {d} is too large"))?);
        rest = r.trim_start();
    }
    if let Some(p) = Prim::from_name(rest.trim()) {
        if shape.len() > MAX_RANK {
            return Err(format!(
                "`{text}`: arrays of more than {MAX_RANK} dimensions are not supported"
            ));
        }
        shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= i64::MAX as usize)
            .ok_or_else(|| format!("`{text}` has too many elements"))?;
        return Ok(Order::Random(shape, p));
    }
    let name = rest.trim();
    if !name.is_empty()
        && name.bytes().all(|c| c.is_ascii_alphanumeric())
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && !matches!(name, "true" | "false")
    {
        return Err(format!(
            "`{text}`: unknown element type `{name}` (funmem supports bool, i32, i64, f32 and f64)"
        ));
    }
    match textual::parse_one(text) {
        Ok(v) => Ok(Order::Literal(v)),
        Err(e) => Err(format!(
            "`{text}` is neither a type such as `[10]f32` (element types: bool, i32, i64, f32, f64) nor a value: {}",
            e.message
        )),
    }
}

/// SplitMix64: a small, fast generator, deterministic for its seed.
pub(crate) struct SplitMix(u64);

impl SplitMix {
    /// The generator with this seed.
    pub(crate) fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi` (a slight modulo bias is of no concern here).
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        let r = self.next();
        if span > u64::MAX as u128 {
            return r as i64;
        }
        (lo as i128 + (r as u128 % span) as i128) as i64
    }
}

/// A random element of type `p` within `b`.
fn random(rng: &mut SplitMix, p: Prim, b: &Bounds) -> Const {
    match p {
        Prim::Bool => Const::Bool(rng.next() >> 63 == 1),
        Prim::I32 => Const::I32(rng.range(b.i32.0.into(), b.i32.1.into()) as i32),
        Prim::I64 => Const::I64(rng.range(b.i64.0, b.i64.1)),
        Prim::F32 => {
            let u = (rng.next() >> 40) as f32 / (1u32 << 24) as f32;
            Const::f32((b.f32.0 + (b.f32.1 - b.f32.0) * u).clamp(b.f32.0, b.f32.1))
        }
        Prim::F64 => {
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            Const::f64((b.f64.0 + (b.f64.1 - b.f64.0) * u).clamp(b.f64.0, b.f64.1))
        }
    }
}

/// Bounds as `futhark dataset` has them by default: integers over their
/// whole type, floats in [0, 1].
const DEFAULT_BOUNDS: Bounds = Bounds {
    i32: (i32::MIN, i32::MAX),
    i64: (i64::MIN, i64::MAX),
    f32: (0.0, 1.0),
    f64: (0.0, 1.0),
};

/// A random value of `shape` and `p` with the default bounds (the values of
/// `random input` test blocks).
pub(crate) fn random_value(rng: &mut SplitMix, shape: &[usize], p: Prim) -> Value {
    random_value_within(rng, shape, p, &DEFAULT_BOUNDS)
}

/// A random value of `shape` and `p` within `b`, its elements drawn in
/// row-major order.
fn random_value_within(rng: &mut SplitMix, shape: &[usize], p: Prim, b: &Bounds) -> Value {
    if shape.is_empty() {
        return Value::Scalar(random(rng, p, b));
    }
    let n: usize = shape.iter().product();
    let mut data = funmem_semantics::value::Elems::with_capacity(p, n);
    for _ in 0..n {
        data.push(random(rng, p, b));
    }
    Value::Array(funmem_semantics::value::ArrayValue {
        shape: shape.to_vec(),
        data,
    })
}

/// Writes a binary value of `shape` and `p` with elements from `next`.
fn write_binary(
    out: &mut impl Write,
    shape: &[usize],
    p: Prim,
    next: &mut impl FnMut() -> Const,
) -> io::Result<()> {
    out.write_all(&[b'b', VERSION, shape.len() as u8])?;
    out.write_all(type_tag(p))?;
    for &d in shape {
        out.write_all(&(d as u64).to_le_bytes())?;
    }
    let n: usize = shape.iter().product();
    let size = p.size() as usize;
    for _ in 0..n {
        out.write_all(&next().to_bits().to_le_bytes()[..size])?;
    }
    Ok(())
}

/// Writes a text value of `shape` and `p` with elements from `next`, as
/// `Value`'s `Display` would.
fn write_text(
    out: &mut impl Write,
    shape: &[usize],
    p: Prim,
    next: &mut impl FnMut() -> Const,
) -> io::Result<()> {
    match shape {
        [] => write!(out, "{}", next()),
        _ if shape.contains(&0) => {
            let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
            write!(out, "empty({dims}{p})")
        }
        [n, rest @ ..] => {
            out.write_all(b"[")?;
            for k in 0..*n {
                if k > 0 {
                    out.write_all(b", ")?;
                }
                write_text(out, rest, p, next)?;
            }
            out.write_all(b"]")
        }
    }
}

/// Values made as `funmem dataset -g SPEC... -s SEED` makes them, with
/// `bounds` naming each element type's `LO:HI` (as `--i64-bounds` and the
/// like): the data generators of `funmem reproduce`.
pub(crate) fn generate(
    specs: &[String],
    seed: u64,
    bounds: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<Value>, String> {
    if let Some(t) = bounds
        .keys()
        .find(|t| !matches!(t.as_str(), "i32" | "i64" | "f32" | "f64"))
    {
        return Err(format!(
            "bounds for `{t}`: only i32, i64, f32 and f64 have bounds"
        ));
    }
    let b = Bounds::parse(|t| bounds.get(t).map(String::as_str))?;
    let mut rng = SplitMix(seed);
    specs
        .iter()
        .map(|g| match order_of(g)? {
            Order::Literal(v) => Ok(v),
            Order::Random(shape, p) => Ok(random_value_within(&mut rng, &shape, p, &b)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generated(shape: &[usize], p: Prim, seed: u64, binary: bool) -> Vec<u8> {
        let b = Bounds {
            i32: (-5, 5),
            i64: (i64::MIN, i64::MAX),
            f32: (-1.0, 1.0),
            f64: (0.0, 1.0),
        };
        let mut rng = SplitMix(seed);
        let mut next = || random(&mut rng, p, &b);
        let mut out = Vec::new();
        if binary {
            write_binary(&mut out, shape, p, &mut next).unwrap();
        } else {
            write_text(&mut out, shape, p, &mut next).unwrap();
        }
        out
    }

    #[test]
    fn text_and_binary_give_the_same_values() {
        for p in Prim::ALL {
            for shape in [&[][..], &[3], &[2, 0], &[2, 3, 1]] {
                let t = generated(shape, p, 7, false);
                let b = generated(shape, p, 7, true);
                let vt = textual::read_values(&t).unwrap();
                let vb = textual::read_values(&b).unwrap();
                assert_eq!(vt, vb, "{p} {shape:?}");
                assert_eq!(vt[0].prim(), p);
                if let Value::Array(a) = &vt[0] {
                    assert_eq!(a.shape, shape);
                }
            }
        }
    }

    #[test]
    fn generate_makes_what_the_command_writes() {
        // Two values from one generator, as `-g [4]i32 -g 3i64 -g [2][3]i32
        // -s 7 --i32-bounds=-5:5` writes them (the literal draws nothing).
        let bounds = std::collections::BTreeMap::from([("i32".to_string(), "-5:5".to_string())]);
        let specs = ["[4]i32", "3i64", "[2][3]i32"].map(String::from);
        let got = generate(&specs, 7, &bounds).unwrap();
        let b = Bounds::parse(|t| (t == "i32").then_some("-5:5")).unwrap();
        let mut rng = SplitMix(7);
        let mut out = Vec::new();
        for (shape, p) in [(&[4][..], Prim::I32), (&[2, 3][..], Prim::I32)] {
            write_text(&mut out, shape, p, &mut || random(&mut rng, p, &b)).unwrap();
            out.push(b'\n');
        }
        let want = textual::read_values(&out).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], want[0]);
        assert_eq!(got[1], Value::Scalar(Const::I64(3)));
        assert_eq!(got[2], want[1]);
        let bad = std::collections::BTreeMap::from([("bool".to_string(), "0:1".to_string())]);
        assert!(generate(&specs, 7, &bad)
            .unwrap_err()
            .contains("only i32, i64"));
    }

    #[test]
    fn bounds_hold_and_seeds_decide() {
        let v = textual::read_values(&generated(&[1000], Prim::I32, 1, true)).unwrap();
        let Value::Array(a) = &v[0] else { panic!() };
        assert!(a.data.iter().all(|c| matches!(c, Const::I32(-5..=5))));
        assert!(a.data.iter().any(|c| c == Const::I32(-5)));
        let v = textual::read_values(&generated(&[1000], Prim::F32, 1, true)).unwrap();
        let Value::Array(a) = &v[0] else { panic!() };
        assert!(a.data.iter().all(|c| (-1.0..=1.0).contains(&c.as_f64())));
        assert_eq!(
            generated(&[5], Prim::F64, 3, false),
            generated(&[5], Prim::F64, 3, false)
        );
        assert_ne!(
            generated(&[5], Prim::F64, 3, false),
            generated(&[5], Prim::F64, 4, false)
        );
    }

    #[test]
    fn arguments() {
        assert!(
            matches!(order_of("[100][8]f32"), Ok(Order::Random(s, Prim::F32)) if s == [100, 8])
        );
        assert!(matches!(order_of("i64"), Ok(Order::Random(s, Prim::I64)) if s.is_empty()));
        assert!(matches!(order_of("[2]i32"), Ok(Order::Random(..))));
        assert!(matches!(order_of("[1, 2]"), Ok(Order::Literal(_))));
        assert!(order_of("[10]u8").is_err_and(|e| e.contains("unknown element type `u8`")));
        assert!(order_of("true").is_ok());
        assert!(order_of("[4611686018427387904][4]f32").is_err());
        assert_eq!(
            bounds_of(Some("-1:1"), "f32", (0.0f32, 1.0)),
            Ok((-1.0, 1.0))
        );
        assert_eq!(bounds_of(Some("-10:-2"), "i64", (0i64, 1)), Ok((-10, -2)));
        assert!(bounds_of(Some("2:1"), "i64", (0i64, 1)).is_err());
        assert!(bounds_of(Some("nan:1"), "f32", (0f32, 1.0)).is_err());
        assert!(bounds_of(Some("1"), "i32", (0i32, 1)).is_err());
    }
}
