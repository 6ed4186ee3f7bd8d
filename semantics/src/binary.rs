//! Futhark's binary value format (docs/data.md), read and written exactly
//! as `futhark dataset --binary` and the `futhark-data` libraries do.
//!
//! A value is the byte `b`, the format version 2, its rank (one byte), its
//! element type as four ASCII bytes (`" i32"`, `" i64"`, `" f32"`, `" f64"`,
//! `"bool"`), its dimensions as rank little-endian `u64`s, and then its
//! elements, row-major and little-endian (a `bool` is one byte, 0 or 1).
//! A scalar has rank 0 and no dimensions. Values follow each other with
//! nothing between; text values may come between them
//! ([`crate::textual::read_values`] reads both).
//!
//! Large inputs are the point of this format, so reading converts the
//! element bytes in bulk into one vector of the element type (10^8 `f32`s
//! take one allocation of 400 MB), and writing goes through a fixed-size
//! buffer.

use crate::textual::{ValueError, MAX_RANK};
use crate::value::{ArrayValue, Elems, Value};
use funmem_lang::prim::{Const, Prim};
use std::io::{self, Write};

/// The format version this module reads and writes.
pub const VERSION: u8 = 2;

/// The four bytes that name element type `p` in a header.
pub fn type_tag(p: Prim) -> &'static [u8; 4] {
    match p {
        Prim::Bool => b"bool",
        Prim::I32 => b" i32",
        Prim::I64 => b" i64",
        Prim::F32 => b" f32",
        Prim::F64 => b" f64",
    }
}

/// The element type named by the header bytes `tag`, or what to say.
fn tag_type(tag: &[u8]) -> Result<Prim, String> {
    if let Some(p) = Prim::ALL.into_iter().find(|&p| type_tag(p) == tag) {
        return Ok(p);
    }
    let name = String::from_utf8_lossy(tag);
    let name = name.trim();
    if ["i8", "i16", "u8", "u16", "u32", "u64", "f16"].contains(&name) {
        Err(format!(
            "a binary value of type {name}: funmem supports bool, i32, i64, f32 and f64"
        ))
    } else {
        Err(format!("unknown element type {:?} in a binary value", name))
    }
}

/// Reads the binary value that starts at `bytes[start]` (its `b`); gives
/// the value and the offset after it.
pub fn decode(bytes: &[u8], start: usize) -> Result<(Value, usize), ValueError> {
    let header_error = |end: usize, message: String| {
        ValueError::new(start, end.min(bytes.len()).max(start), message)
    };
    let Some(head) = bytes.get(start..start + 7) else {
        return Err(header_error(
            bytes.len(),
            "a binary value is cut short in its header".into(),
        ));
    };
    if head[0] != b'b' {
        return Err(header_error(start + 1, "a binary value starts with `b`".into()));
    }
    if head[1] != VERSION {
        return Err(header_error(
            start + 2,
            format!(
                "binary format version {} is not supported (only {VERSION})",
                head[1]
            ),
        ));
    }
    let rank = usize::from(head[2]);
    if rank > MAX_RANK {
        return Err(header_error(
            start + 3,
            format!("arrays of more than {MAX_RANK} dimensions are not supported (rank {rank})"),
        ));
    }
    let prim = tag_type(&head[3..7]).map_err(|m| header_error(start + 7, m))?;
    let dims_at = start + 7;
    let data_at = dims_at + 8 * rank;
    let Some(dim_bytes) = bytes.get(dims_at..data_at) else {
        return Err(header_error(
            bytes.len(),
            format!("a binary value of rank {rank} is cut short in its dimensions"),
        ));
    };
    let mut shape = Vec::with_capacity(rank);
    let mut count: usize = 1;
    for d in dim_bytes.chunks_exact(8) {
        let d = u64::from_le_bytes(d.try_into().unwrap_or([0; 8]));
        let d = usize::try_from(d)
            .ok()
            .filter(|&d| d as u64 <= i64::MAX as u64)
            .ok_or_else(|| header_error(data_at, format!("the dimension {d} is too large")))?;
        shape.push(d);
        count = count.saturating_mul(d);
    }
    if shape.contains(&0) {
        count = 0;
    }
    let size = prim.size() as usize;
    let need = count.saturating_mul(size);
    let have = bytes.len() - data_at;
    if need > have {
        let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
        return Err(header_error(
            bytes.len(),
            format!("a binary value of type {dims}{prim} needs {need} bytes of elements, but only {have} follow"),
        ));
    }
    let data = &bytes[data_at..data_at + need];
    let end = data_at + need;
    if prim == Prim::Bool {
        if let Some(k) = data.iter().position(|&b| b > 1) {
            let at = data_at + k;
            return Err(ValueError::new(
                at,
                at + 1,
                format!("a bool in a binary value is the byte {}, not 0 or 1", data[k]),
            ));
        }
    }
    let elems = Elems::from_le_bytes(prim, data);
    if rank == 0 {
        return Ok((Value::Scalar(elems.get(0)), end));
    }
    Ok((Value::Array(ArrayValue { shape, data: elems }), end))
}

/// Writes `v` in the binary format.
pub fn write_value(out: &mut impl Write, v: &Value) -> io::Result<()> {
    match v {
        Value::Scalar(c) => {
            out.write_all(&[b'b', VERSION, 0])?;
            out.write_all(type_tag(c.prim()))?;
            let w = c.to_bits().to_le_bytes();
            out.write_all(&w[..c.prim().size() as usize])
        }
        Value::Array(a) => {
            // Ranks above 255 cannot be written; the readers never make them.
            let rank = u8::try_from(a.shape.len()).unwrap_or(u8::MAX);
            out.write_all(&[b'b', VERSION, rank])?;
            out.write_all(type_tag(a.prim()))?;
            for &d in &a.shape {
                out.write_all(&(d as u64).to_le_bytes())?;
            }
            write_elems(out, &a.data)
        }
    }
}

/// The binary form of `v`.
pub fn encode(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a vector cannot fail.
    let _ = write_value(&mut out, v);
    out
}

/// Writes elements little-endian through a buffer of 64 KiB.
fn write_elems(out: &mut impl Write, data: &Elems) -> io::Result<()> {
    fn chunks<T: Copy, const N: usize>(
        out: &mut impl Write,
        v: &[T],
        f: impl Fn(T) -> [u8; N],
    ) -> io::Result<()> {
        let mut buf = Vec::with_capacity(1 << 16);
        for piece in v.chunks((1 << 16) / N) {
            buf.clear();
            for &x in piece {
                buf.extend_from_slice(&f(x));
            }
            out.write_all(&buf)?;
        }
        Ok(())
    }
    match data {
        Elems::Bool(v) => chunks(out, v, |b| [u8::from(b)]),
        Elems::I32(v) => chunks(out, v, i32::to_le_bytes),
        Elems::I64(v) => chunks(out, v, i64::to_le_bytes),
        Elems::F32(v) => chunks(out, v, f32::to_le_bytes),
        Elems::F64(v) => chunks(out, v, f64::to_le_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::textual::{parse_values, read_values};

    fn arr(shape: &[usize], data: Elems) -> Value {
        Value::Array(ArrayValue {
            shape: shape.to_vec(),
            data,
        })
    }

    fn samples() -> Vec<Value> {
        vec![
            Value::int(-5),
            Value::Scalar(Const::I32(-7)),
            Value::Scalar(Const::f32(1.5)),
            Value::Scalar(Const::f64(f64::NAN)),
            Value::Scalar(Const::Bool(true)),
            arr(&[3], Elems::F32(vec![1.0, f32::NEG_INFINITY, -0.0])),
            arr(&[2, 2], Elems::I32(vec![1, -2, i32::MAX, i32::MIN])),
            arr(&[2, 0, 3], Elems::Bool(vec![])),
            arr(&[1, 1, 2], Elems::F64(vec![0.1, 1e300])),
            arr(&[2], Elems::Bool(vec![false, true])),
        ]
    }

    #[test]
    fn layout_is_futharks() {
        let v = arr(&[2], Elems::I32(vec![1, -1]));
        let mut want = vec![b'b', 2, 1, b' ', b'i', b'3', b'2'];
        want.extend_from_slice(&2u64.to_le_bytes());
        want.extend_from_slice(&[1, 0, 0, 0, 255, 255, 255, 255]);
        assert_eq!(encode(&v), want);
        assert_eq!(
            encode(&Value::Scalar(Const::Bool(true))),
            b"b\x02\x00bool\x01".to_vec()
        );
    }

    #[test]
    fn round_trips_and_mixes_with_text() {
        let mut bytes = Vec::new();
        for (k, v) in samples().iter().enumerate() {
            if k % 2 == 0 {
                bytes.extend_from_slice(&encode(v));
            } else {
                bytes.extend_from_slice(format!(" {v} -- text\n").as_bytes());
            }
        }
        assert_eq!(read_values(&bytes), Ok(samples()));
    }

    #[test]
    fn bad_binary_values_are_errors() {
        let good = encode(&arr(&[2], Elems::F32(vec![1.0, 2.0])));
        for cut in 1..good.len() {
            let e = read_values(&good[..cut]).unwrap_err();
            assert!(e.start <= e.end && e.end <= cut, "{e:?}");
        }
        let mut v1 = good.clone();
        v1[1] = 1;
        assert!(read_values(&v1).is_err());
        let mut u8s = good.clone();
        u8s[3..7].copy_from_slice(b"  u8");
        assert!(read_values(&u8s).unwrap_err().message.contains("u8"));
        let mut huge = good.clone();
        huge[7..15].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read_values(&huge).unwrap_err().message.contains("too large"));
        let mut big = good.clone();
        big[7..15].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(read_values(&big).unwrap_err().message.contains("needs"));
        let e = read_values(b"b\x02\x00bool\x07").unwrap_err();
        assert_eq!((e.start, e.end), (7, 8));
        // `b` not followed by the version byte is text.
        assert!(parse_values("b").is_err());
    }
}
