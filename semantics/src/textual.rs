//! Reading Futhark's value formats: the data files of `futhark test` and
//! `futhark dataset`, and the inputs of the `funmem` runner (docs/data.md).
//!
//! A data text holds values separated by whitespace; `--` starts a comment
//! that runs to the end of its line. A value is a scalar (`42`, `-3i32`,
//! `1.5f32`, `2.5`, `1e-3f64`, `f32.nan`, `-f64.inf`, `true`), an array
//! (`[1, 2, 3]`, `[[1.5f32, 2f32]]`), or an empty array written with its
//! shape and element type (`empty([0]i64)`, `empty([2][0]bool)`), which may
//! also be an element of an array. Arrays are regular: all elements of one
//! array have the same shape and the same element type. A value may also be
//! in Futhark's binary format ([`crate::binary`]), recognised by its first
//! bytes `b` and 2, so one input may mix text and binary values.
//!
//! Literals without a suffix take their type from the rest of the value
//! (`[1, 2i32]` is an `[2]i32`, `[1.5, 2f32]` an `[2]f32`); where nothing in
//! the value fixes it, from the type the reader is told the value should
//! have ([`read_values_for`], so that `1.5` is accepted for an `f32`
//! parameter); otherwise an integer is `i64` and a decimal `f64`.
//!
//! What [`Value`]'s `Display` prints reads back as the same value. Every
//! problem is a [`ValueError`] at a byte range of the input. Reading never
//! panics, takes time linear in the input for arrays of bounded rank, and
//! accepts arrays of up to [`MAX_RANK`] dimensions.

use crate::value::{ArrayValue, Elems as ElemVec, Value};
use funmem_lang::prim::{Const, Prim};
use std::borrow::Cow;
use std::fmt;

/// The most dimensions an array may have.
pub const MAX_RANK: usize = 64;

/// A problem in a value text, at a byte range of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    /// First byte of the problem.
    pub start: usize,
    /// One past its last byte (`start` at the end of the text).
    pub end: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl ValueError {
    pub(crate) fn new(start: usize, end: usize, message: impl Into<String>) -> ValueError {
        ValueError {
            start,
            end,
            message: message.into(),
        }
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (bytes {}..{})", self.message, self.start, self.end)
    }
}

impl std::error::Error for ValueError {}

/// Reads whitespace-separated values (as many as there are).
pub fn parse_values(text: &str) -> Result<Vec<Value>, ValueError> {
    read_values_for(text.as_bytes(), &[]).map_err(|e| on_chars(text, e))
}

/// An error of reading `text` with its byte range widened to whole
/// characters: binary data inside a text may put a range inside one.
fn on_chars(text: &str, mut e: ValueError) -> ValueError {
    e.end = e.end.min(text.len());
    e.start = e.start.min(e.end);
    while !text.is_char_boundary(e.start) {
        e.start -= 1;
    }
    while !text.is_char_boundary(e.end) {
        e.end += 1;
    }
    e
}

/// Reads values in text or binary format, or a mix (as many as there are).
pub fn read_values(bytes: &[u8]) -> Result<Vec<Value>, ValueError> {
    read_values_for(bytes, &[])
}

/// Reads values like [`read_values`], where the `k`-th value's literals
/// without a suffix take the element type `wanted[k]` when nothing in the
/// value fixes their type and they fit it (an integer fits any numeric
/// type whose range holds it, a decimal a float type). This is how the
/// runners accept `1.5` for an `f32` parameter and `[1, 2]` for an `[]i32`
/// one; a value that does not fit keeps its own type, so that the runner
/// reports the mismatch.
pub fn read_values_for(bytes: &[u8], wanted: &[Prim]) -> Result<Vec<Value>, ValueError> {
    let mut reader = Reader::new(bytes);
    let mut values = Vec::new();
    while let Some(value) = reader.next_value(wanted.get(values.len()).copied())? {
        values.push(value);
    }
    Ok(values)
}

/// Reads a text that holds exactly one value.
pub fn parse_one(text: &str) -> Result<Value, ValueError> {
    parse_one_bytes(text).map_err(|e| on_chars(text, e))
}

fn parse_one_bytes(text: &str) -> Result<Value, ValueError> {
    let mut reader = Reader::new(text.as_bytes());
    let Some(value) = reader.next_value(None)? else {
        return Err(ValueError::new(
            text.len(),
            text.len(),
            "expected a value, found none",
        ));
    };
    reader.skip_blank();
    let start = reader.pos;
    if start < text.len() {
        // Point at the whole second value when it is one.
        let end = match reader.next_value(None) {
            Ok(_) => reader.pos,
            Err(_) => text.len(),
        };
        return Err(ValueError::new(
            start,
            end,
            "expected one value, found more than one",
        ));
    }
    Ok(value)
}

/// The element types funmem supports, as a phrase for messages.
const SUPPORTED: &str = "funmem supports bool, i32, i64, f32 and f64";

/// Futhark's primitive type names that funmem does not support.
const UNSUPPORTED: [&str; 7] = ["i8", "i16", "u8", "u16", "u32", "u64", "f16"];

/// A type name in a suffix or in `empty(...)`: a supported type, or the
/// error for an unsupported or unknown one.
fn type_name(name: &[u8]) -> Result<Prim, String> {
    let text = String::from_utf8_lossy(name);
    if let Some(p) = Prim::from_name(&text).filter(|_| text != "int") {
        return Ok(p);
    }
    if UNSUPPORTED.contains(&&*text) {
        return Err(format!("the type {text} is not supported; {SUPPORTED}"));
    }
    Err(format!("unknown element type `{}`", snippet(&text)))
}

/// A literal as written: with a type, or an unsuffixed integer or decimal
/// whose type the rest of its value decides.
#[derive(Clone, Copy, Debug)]
enum Lit {
    Typed(Const),
    Int(i64),
    Dec(f64),
}

/// What unsuffixed literals of a value were, while no typed one fixed the
/// value's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Soft {
    /// Integers, kept as `i64` words.
    Int,
    /// Decimals (and integers among them), kept as `f64` words.
    Dec,
}

/// The element type of the value being read, and its elements as words.
#[derive(Debug, Default)]
struct Typing {
    /// The type a typed literal or `empty(...)` fixed, with its text.
    hard: Option<Prim>,
    /// The kind of the unsuffixed literals read while `hard` was `None`.
    soft: Option<Soft>,
    /// The elements as words: of type `hard` when it is set, otherwise
    /// canonical words of kind `soft`.
    words: Vec<u64>,
}

/// The word of the unsuffixed literal `w` of kind `soft` as type `p`, if
/// it fits.
fn soften(soft: Soft, w: u64, p: Prim) -> Option<u64> {
    match soft {
        Soft::Int => {
            let k = w as i64;
            match p {
                Prim::I64 => Some(w),
                Prim::I32 => i32::try_from(k).ok().map(|x| Const::I32(x).to_bits()),
                Prim::F32 => Some(Const::f32(k as f32).to_bits()),
                Prim::F64 => Some(Const::f64(k as f64).to_bits()),
                Prim::Bool => None,
            }
        }
        Soft::Dec => {
            let x = f64::from_bits(w);
            match p {
                Prim::F32 => Some(Const::f32(x as f32).to_bits()),
                Prim::F64 => Some(w),
                _ => None,
            }
        }
    }
}

impl Typing {
    fn clear(&mut self) {
        self.hard = None;
        self.soft = None;
        self.words.clear();
    }

    /// Fixes the type to `p` (from the typed literal or `empty` at
    /// `start..end`), converting the unsuffixed literals read so far.
    fn harden(
        &mut self,
        p: Prim,
        bytes: &[u8],
        start: usize,
        end: usize,
    ) -> Result<(), ValueError> {
        let text = || String::from_utf8_lossy(&bytes[start..end]);
        match self.hard {
            Some(h) if h == p => return Ok(()),
            Some(h) => {
                return Err(ValueError::new(
                    start,
                    end,
                    format!(
                    "mixed element types: `{}` has type {p}, but earlier elements have type {h}",
                    snippet(&text())
                ),
                ))
            }
            None => {}
        }
        if let Some(soft) = self.soft {
            for w in &mut self.words {
                *w = soften(soft, *w, p).ok_or_else(|| {
                    ValueError::new(
                        start,
                        end,
                        format!(
                            "mixed element types: `{}` has type {p}, but an earlier element \
                             without a suffix cannot be a {p}",
                            snippet(&text())
                        ),
                    )
                })?;
            }
        }
        self.hard = Some(p);
        Ok(())
    }

    /// Adds the literal `lit` written as `text` at `start..end`.
    fn push(&mut self, lit: Lit, bytes: &[u8], start: usize, end: usize) -> Result<(), ValueError> {
        let (soft, w) = match lit {
            Lit::Typed(c) => {
                self.harden(c.prim(), bytes, start, end)?;
                self.words.push(c.to_bits());
                return Ok(());
            }
            Lit::Int(k) => (Soft::Int, k as u64),
            Lit::Dec(x) => (Soft::Dec, x.to_bits()),
        };
        if let Some(h) = self.hard {
            let w = soften(soft, w, h).ok_or_else(|| {
                let what = if soft == Soft::Int {
                    "out of range for"
                } else {
                    "not a value of"
                };
                let what = if h == Prim::Bool {
                    "not a value of"
                } else {
                    what
                };
                ValueError::new(
                    start,
                    end,
                    format!(
                        "`{}` is {what} the type {h} of the other elements",
                        snippet(&String::from_utf8_lossy(&bytes[start..end]))
                    ),
                )
            })?;
            self.words.push(w);
            return Ok(());
        }
        match (self.soft, soft) {
            (Some(Soft::Dec), Soft::Int) => self.words.push((w as i64 as f64).to_bits()),
            (Some(Soft::Int), Soft::Dec) => {
                for v in &mut self.words {
                    *v = (*v as i64 as f64).to_bits();
                }
                self.soft = Some(Soft::Dec);
                self.words.push(w);
            }
            _ => {
                self.soft = Some(soft);
                self.words.push(w);
            }
        }
        Ok(())
    }

    /// The element type and elements of the finished value.
    fn finish(&mut self, wanted: Option<Prim>) -> ElemVec {
        let p = match (self.hard, self.soft) {
            (Some(p), _) => p,
            (None, soft) => {
                let soft = soft.unwrap_or(Soft::Int);
                let fits = |p: Prim| self.words.iter().all(|&w| soften(soft, w, p).is_some());
                let p = match wanted {
                    Some(p) if fits(p) => p,
                    _ if soft == Soft::Int => Prim::I64,
                    _ => Prim::F64,
                };
                for w in &mut self.words {
                    // Checked by `fits` (or the canonical type itself).
                    *w = soften(soft, *w, p).unwrap_or(*w);
                }
                p
            }
        };
        let words = std::mem::take(&mut self.words);
        match p {
            Prim::I64 => ElemVec::I64(words.into_iter().map(|w| w as i64).collect()),
            Prim::F64 => ElemVec::F64(words.into_iter().map(f64::from_bits).collect()),
            Prim::I32 => ElemVec::I32(words.into_iter().map(|w| w as i32).collect()),
            Prim::F32 => ElemVec::F32(
                words
                    .into_iter()
                    .map(|w| f32::from_bits(w as u32))
                    .collect(),
            ),
            Prim::Bool => ElemVec::Bool(words.into_iter().map(|w| w != 0).collect()),
        }
    }
}

/// What the elements of an open array are, so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Elems {
    #[default]
    None,
    Scalars,
    Arrays,
}

/// An array whose `]` is still to come.
#[derive(Debug, Default)]
struct Frame {
    /// Where its `[` is.
    open: usize,
    /// Elements so far.
    count: usize,
    elems: Elems,
    /// The shape of its elements, when they are arrays.
    row: Vec<usize>,
}

impl Frame {
    /// The shape of its elements (empty for scalars).
    fn row_shape(&self) -> &[usize] {
        if self.elems == Elems::Arrays {
            &self.row
        } else {
            &[]
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The open arrays, outermost first, up to the current depth; frames
    /// beyond it are spare and keep their allocations.
    frames: Vec<Frame>,
    /// The shape read by the last `empty(...)`.
    dims: Vec<usize>,
    /// The element type and elements of the value being read.
    typing: Typing,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            frames: Vec::new(),
            dims: Vec::new(),
            typing: Typing::default(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Bytes `start..end` as text for a message.
    fn text(&self, start: usize, end: usize) -> Cow<'a, str> {
        String::from_utf8_lossy(&self.bytes[start..end])
    }

    /// Skips whitespace and comments.
    fn skip_blank(&mut self) {
        let b = self.bytes;
        let mut i = self.pos;
        loop {
            match b.get(i) {
                Some(c) if c.is_ascii_whitespace() => i += 1,
                Some(b'-') if b.get(i + 1) == Some(&b'-') => {
                    i = b[i..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(b.len(), |k| i + k);
                }
                _ => break,
            }
        }
        self.pos = i;
    }

    /// The next value, or `None` at the end of the input; unsuffixed
    /// literals take the type `wanted` where they fit it.
    fn next_value(&mut self, wanted: Option<Prim>) -> Result<Option<Value>, ValueError> {
        self.skip_blank();
        if self.pos == self.bytes.len() {
            return Ok(None);
        }
        if self.bytes[self.pos] == b'b' && self.bytes.get(self.pos + 1) == Some(&2) {
            let (value, end) = crate::binary::decode(self.bytes, self.pos)?;
            self.pos = end;
            return Ok(Some(value));
        }
        self.typing.clear();
        // Open arrays are `self.frames[..depth]`.
        let mut depth = 0usize;
        loop {
            // A value or an array element starts here.
            self.skip_blank();
            let start = self.pos;
            match self.peek() {
                Some(b'[') => {
                    if depth == MAX_RANK {
                        return Err(ValueError::new(
                            start,
                            start + 1,
                            format!("arrays of more than {MAX_RANK} dimensions are not supported"),
                        ));
                    }
                    self.pos += 1;
                    self.open_frame(depth, start);
                    depth += 1;
                    self.skip_blank();
                    if self.peek() == Some(b']') {
                        return Err(ValueError::new(
                            start,
                            self.pos + 1,
                            "`[]` has no shape or element type: write an empty array as \
                             `empty([0]i64)`, with all its dimensions and its element type",
                        ));
                    }
                    continue;
                }
                Some(c) if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' => {
                    let is_empty = self.bytes[start..].starts_with(b"empty")
                        && !self
                            .bytes
                            .get(start + 5)
                            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
                    if is_empty {
                        self.pos = start + 5;
                        self.empty_body(start, depth)?;
                        if depth == 0 {
                            let shape = self.dims.clone();
                            let data = self.typing.finish(wanted);
                            return Ok(Some(Value::Array(ArrayValue { shape, data })));
                        }
                        let (head, tail) = (self.dims[0], &self.dims[1..]);
                        add_row(&mut self.frames[depth - 1], head, tail, start, self.pos)?;
                    } else {
                        let lit = self.literal()?;
                        let end = self.pos;
                        if depth > 0 {
                            let frame = &mut self.frames[depth - 1];
                            if frame.elems == Elems::Arrays {
                                return Err(ValueError::new(
                                    start,
                                    end,
                                    format!(
                                        "mixed scalars and arrays in one array: a scalar after \
                                         arrays of shape {}",
                                        shape_text(&frame.row)
                                    ),
                                ));
                            }
                            frame.elems = Elems::Scalars;
                            frame.count += 1;
                        }
                        self.typing.push(lit, self.bytes, start, end)?;
                        if depth == 0 {
                            let data = self.typing.finish(wanted);
                            return Ok(Some(Value::Scalar(data.get(0))));
                        }
                    }
                }
                _ => return Err(self.expected_value(depth)),
            }
            // After an element: commas and closing brackets.
            loop {
                self.skip_blank();
                match self.peek() {
                    Some(b',') => {
                        let comma = self.pos;
                        self.pos += 1;
                        self.skip_blank();
                        if self.peek() == Some(b']') {
                            return Err(ValueError::new(
                                comma,
                                comma + 1,
                                "a trailing comma is not allowed",
                            ));
                        }
                        break;
                    }
                    Some(b']') => {
                        self.pos += 1;
                        depth -= 1;
                        let (outer, inner) = self.frames.split_at_mut(depth);
                        let array = &inner[0];
                        if depth == 0 {
                            let mut shape = Vec::with_capacity(1 + array.row_shape().len());
                            shape.push(array.count);
                            shape.extend_from_slice(array.row_shape());
                            let data = self.typing.finish(wanted);
                            return Ok(Some(Value::Array(ArrayValue { shape, data })));
                        }
                        let parent = &mut outer[depth - 1];
                        add_row(parent, array.count, array.row_shape(), array.open, self.pos)?;
                    }
                    None => return Err(self.unterminated(depth)),
                    Some(_) => return Err(self.unexpected_here("`,` or `]`")),
                }
            }
        }
    }

    /// Starts the array whose `[` is at `open`, at the given depth.
    fn open_frame(&mut self, depth: usize, open: usize) {
        if self.frames.len() == depth {
            self.frames.push(Frame::default());
        }
        let frame = &mut self.frames[depth];
        frame.open = open;
        frame.count = 0;
        frame.elems = Elems::None;
    }

    /// A scalar literal: a number with its optional suffix, `true`,
    /// `false`, or a float constant such as `f32.nan` or `-f64.inf`.
    fn literal(&mut self) -> Result<Lit, ValueError> {
        let b = self.bytes;
        let start = self.pos;
        let negative = b[start] == b'-';
        let body = if negative { start + 1 } else { start };
        if let Some(lit) = self.plain_integer(negative, body) {
            return Ok(lit);
        }
        let end = scan_word(b, body);
        self.pos = end.max(start + 1);
        if end == body {
            return Err(ValueError::new(
                start,
                start + 1,
                "expected a number right after `-`",
            ));
        }
        let word = &b[body..end];
        let literal = || String::from_utf8_lossy(&b[start..end]);
        let err = |message: String| ValueError::new(start, end, message);
        // Words: booleans and float constants.
        if word[0].is_ascii_alphabetic() || word[0] == b'_' {
            let special = match word {
                b"true" if !negative => Some(Const::Bool(true)),
                b"false" if !negative => Some(Const::Bool(false)),
                b"f32.nan" => Some(Const::f32(f32::NAN)),
                b"f64.nan" => Some(Const::f64(f64::NAN)),
                b"f32.inf" => Some(Const::f32(if negative {
                    f32::NEG_INFINITY
                } else {
                    f32::INFINITY
                })),
                b"f64.inf" => Some(Const::f64(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                })),
                _ => None,
            };
            return match special {
                Some(c) => Ok(Lit::Typed(c)),
                None if negative => Err(err(format!(
                    "expected a number right after `-`, found `{}`",
                    snippet(&self.text(body, end))
                ))),
                None => Err(err(format!(
                    "expected a value, found `{}`",
                    snippet(&literal())
                ))),
            };
        }
        // Numbers: digits, an optional fraction and exponent, an optional
        // type suffix.
        let suffix_at = word
            .iter()
            .position(|&c| matches!(c, b'i' | b'u' | b'f' | b'b'))
            .unwrap_or(word.len());
        let (number, suffix) = word.split_at(suffix_at);
        let Some(decimal) = number_shape(number) else {
            return Err(err(format!("malformed number `{}`", snippet(&literal()))));
        };
        let suffix = match suffix {
            [] => None,
            b"f32" => Some(Prim::F32),
            b"f64" => Some(Prim::F64),
            b"i64" => Some(Prim::I64),
            b"i32" => Some(Prim::I32),
            _ => match type_name(suffix) {
                Ok(p) if p != Prim::Bool => Some(p),
                Ok(_) => {
                    return Err(err(format!(
                        "`{}` has no type: a number cannot be a bool",
                        snippet(&literal())
                    )))
                }
                Err(_)
                    if Prim::from_name(&String::from_utf8_lossy(suffix)).is_none()
                        && !UNSUPPORTED.contains(&&*String::from_utf8_lossy(suffix)) =>
                {
                    return Err(err(format!(
                        "unknown suffix `{}` in the literal `{}`",
                        snippet(&String::from_utf8_lossy(suffix)),
                        snippet(&literal())
                    )))
                }
                Err(_) => {
                    return Err(err(format!(
                        "`{}` has type {}, which is not supported; {SUPPORTED}",
                        snippet(&literal()),
                        String::from_utf8_lossy(suffix)
                    )))
                }
            },
        };
        // The number with its sign, as Rust's parsers read it.
        let signed = &b[start..body + number.len()];
        let signed = std::str::from_utf8(signed).unwrap_or("");
        let unscored;
        let signed = if signed.contains('_') {
            unscored = signed.replace('_', "");
            unscored.as_str()
        } else {
            signed
        };
        match suffix {
            Some(p @ (Prim::F32 | Prim::F64)) => {
                let c = if p == Prim::F32 {
                    signed.parse::<f32>().ok().map(Const::f32)
                } else {
                    signed.parse::<f64>().ok().map(Const::f64)
                };
                c.map(Lit::Typed)
                    .ok_or_else(|| err(format!("malformed number `{}`", snippet(&literal()))))
            }
            Some(p) if decimal => Err(err(format!(
                "`{}` is not an integer, so it cannot have type {p}",
                snippet(&literal())
            ))),
            Some(p) => {
                let k = signed.parse::<i64>().ok();
                let k = match p {
                    Prim::I32 => k
                        .and_then(|k| i32::try_from(k).ok())
                        .map(|k| Lit::Typed(Const::I32(k))),
                    _ => k.map(|k| Lit::Typed(Const::I64(k))),
                };
                k.ok_or_else(|| err(out_of_range(&literal(), p)))
            }
            None if decimal => signed
                .parse::<f64>()
                .ok()
                .map(Lit::Dec)
                .ok_or_else(|| err(format!("malformed number `{}`", snippet(&literal())))),
            None => signed
                .parse::<i64>()
                .ok()
                .map(Lit::Int)
                .ok_or_else(|| err(out_of_range(&literal(), Prim::I64))),
        }
    }

    /// The common case of an integer without a suffix or with `i64` or
    /// `i32`, in range, read in one pass (and the position moved past it);
    /// `None` leaves everything else to [`Reader::literal`].
    fn plain_integer(&mut self, negative: bool, body: usize) -> Option<Lit> {
        let b = self.bytes;
        let mut i = body;
        let mut magnitude: u64 = 0;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(d))?;
            i += 1;
        }
        if i == body {
            return None;
        }
        let word_char = |k: usize| {
            b.get(k)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        };
        let (suffix, end) = if !word_char(i) {
            (None, i)
        } else if b[i..].starts_with(b"i64") && !word_char(i + 3) {
            (Some(Prim::I64), i + 3)
        } else if b[i..].starts_with(b"i32") && !word_char(i + 3) {
            (Some(Prim::I32), i + 3)
        } else {
            return None;
        };
        let k = if negative {
            0i64.checked_sub_unsigned(magnitude)?
        } else {
            i64::try_from(magnitude).ok()?
        };
        let lit = match suffix {
            None => Lit::Int(k),
            Some(Prim::I32) => Lit::Typed(Const::I32(i32::try_from(k).ok()?)),
            Some(_) => Lit::Typed(Const::I64(k)),
        };
        self.pos = end;
        Some(lit)
    }

    /// The rest of `empty(...)` after the word `empty` at `start`; leaves
    /// the shape in `self.dims` and fixes the value's element type.
    fn empty_body(&mut self, start: usize, depth: usize) -> Result<(), ValueError> {
        self.skip_blank();
        if self.peek() != Some(b'(') {
            return Err(self.unexpected_here("`(` after `empty`"));
        }
        self.pos += 1;
        self.dims.clear();
        let prim;
        let name_at;
        loop {
            self.skip_blank();
            let at = self.pos;
            match self.peek() {
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_blank();
                    let dim = self.dimension()?;
                    self.skip_blank();
                    if self.peek() != Some(b']') {
                        return Err(self.unexpected_here("`]` after a dimension"));
                    }
                    self.pos += 1;
                    if depth + self.dims.len() == MAX_RANK {
                        return Err(ValueError::new(
                            at,
                            self.pos,
                            format!("arrays of more than {MAX_RANK} dimensions are not supported"),
                        ));
                    }
                    self.dims.push(dim);
                }
                Some(c) if c.is_ascii_alphabetic() => {
                    let end = scan_word(self.bytes, at);
                    self.pos = end;
                    prim =
                        type_name(&self.bytes[at..end]).map_err(|m| ValueError::new(at, end, m))?;
                    name_at = (at, end);
                    break;
                }
                _ => return Err(self.unexpected_here("`[` or an element type in `empty(...)`")),
            }
        }
        self.skip_blank();
        if self.peek() != Some(b')') {
            return Err(self.unexpected_here("`)` to close `empty(`"));
        }
        self.pos += 1;
        if self.dims.is_empty() {
            return Err(ValueError::new(
                start,
                self.pos,
                "empty(...) needs at least one dimension, as in `empty([0]i64)`",
            ));
        }
        if !self.dims.contains(&0) {
            return Err(ValueError::new(
                start,
                self.pos,
                format!(
                    "empty(...) needs a zero dimension: an array of shape {} is not empty",
                    shape_text(&self.dims)
                ),
            ));
        }
        self.typing
            .harden(prim, self.bytes, name_at.0, name_at.1)
            .map_err(|mut e| {
                (e.start, e.end) = (start, self.pos);
                e
            })
    }

    /// A dimension in `empty(...)`: a natural number of at most `i64::MAX`.
    fn dimension(&mut self) -> Result<usize, ValueError> {
        let start = self.pos;
        let end = start
            + self.bytes[start..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
        if end == start {
            return Err(self.unexpected_here("a dimension (a natural number)"));
        }
        self.pos = end;
        let text = self.text(start, end);
        text.parse::<i64>()
            .ok()
            .and_then(|d| usize::try_from(d).ok())
            .ok_or_else(|| {
                ValueError::new(
                    start,
                    end,
                    format!("the dimension `{}` is too large", snippet(&text)),
                )
            })
    }

    /// The error where a value was expected at the current position.
    fn expected_value(&self, depth: usize) -> ValueError {
        let at = self.pos;
        match self.peek() {
            None if depth > 0 => self.unterminated(depth),
            Some(b',') if depth == 0 => ValueError::new(
                at,
                at + 1,
                "unexpected `,` outside an array: values are separated by whitespace",
            ),
            Some(b']') if depth == 0 => {
                ValueError::new(at, at + 1, "unexpected `]`: there is no array to close")
            }
            _ => self.unexpected_here("a value"),
        }
    }

    /// The error for the end of the text inside `depth` open arrays.
    fn unterminated(&self, depth: usize) -> ValueError {
        let open = self.frames[depth - 1].open;
        ValueError::new(
            open,
            open + 1,
            "unterminated array: this `[` has no matching `]`",
        )
    }

    /// The error for whatever is at the current position where `expected`
    /// should be.
    fn unexpected_here(&self, expected: &str) -> ValueError {
        let at = self.pos;
        if at >= self.bytes.len() {
            return ValueError::new(
                self.bytes.len(),
                self.bytes.len(),
                format!("unexpected end of text (expected {expected})"),
            );
        }
        // The character at `at`, if the bytes there are UTF-8.
        let c = (1..=4)
            .filter_map(|n| self.bytes.get(at..at + n))
            .find_map(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.chars().next());
        match c {
            None => ValueError::new(
                at,
                at + 1,
                format!(
                    "unexpected byte 0x{:02x} (expected {expected})",
                    self.bytes[at]
                ),
            ),
            Some(c) => {
                let shown = if c.is_control() || c.is_whitespace() {
                    format!("{c:?}")
                } else {
                    format!("`{c}`")
                };
                ValueError::new(
                    at,
                    at + c.len_utf8(),
                    format!("unexpected character {shown} (expected {expected})"),
                )
            }
        }
    }
}

/// Whether `number` (digits, an optional fraction and an optional
/// exponent) is a decimal (`Some(true)`), an integer (`Some(false)`) or
/// malformed (`None`). As in Futhark, `_` may follow any digit (`1_000`).
fn number_shape(number: &[u8]) -> Option<bool> {
    let digits = |i: usize| {
        if !number.get(i).is_some_and(u8::is_ascii_digit) {
            return 0;
        }
        number[i..]
            .iter()
            .take_while(|&&c| c.is_ascii_digit() || c == b'_')
            .count()
    };
    let mut i = digits(0);
    if i == 0 {
        return None;
    }
    let mut decimal = false;
    if number.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
        decimal = true;
    }
    if matches!(number.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(number.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
        decimal = true;
    }
    (i == number.len()).then_some(decimal)
}

/// The message for an integer literal out of the range of `p`.
fn out_of_range(literal: &str, p: Prim) -> String {
    let (lo, hi) = if p == Prim::I32 {
        (i64::from(i32::MIN), i64::from(i32::MAX))
    } else {
        (i64::MIN, i64::MAX)
    };
    format!(
        "`{}` is out of range for {p} ({lo} to {hi})",
        snippet(literal)
    )
}

/// Adds an array of shape `head` then `tail`, at `start..end` of the text,
/// as the next element of `frame`.
fn add_row(
    frame: &mut Frame,
    head: usize,
    tail: &[usize],
    start: usize,
    end: usize,
) -> Result<(), ValueError> {
    match frame.elems {
        Elems::None => {
            frame.elems = Elems::Arrays;
            frame.row.clear();
            frame.row.push(head);
            frame.row.extend_from_slice(tail);
        }
        Elems::Scalars => {
            let mut shape = vec![head];
            shape.extend_from_slice(tail);
            return Err(ValueError::new(
                start,
                end,
                format!(
                    "mixed scalars and arrays in one array: an array of shape {} after scalars",
                    shape_text(&shape)
                ),
            ));
        }
        Elems::Arrays => {
            if frame.row[0] != head || frame.row[1..] != *tail {
                let mut shape = vec![head];
                shape.extend_from_slice(tail);
                return Err(ValueError::new(
                    start,
                    end,
                    format!(
                        "rows of different shapes: {} and {}",
                        shape_text(&frame.row),
                        shape_text(&shape)
                    ),
                ));
            }
        }
    }
    frame.count += 1;
    Ok(())
}

/// The end of the word starting at `i`: letters, digits, `_` and `.`, and a
/// sign that follows an exponent's `e` and precedes a digit (`1.5e-3f32`).
fn scan_word(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        let exponent_sign = (c == b'+' || c == b'-')
            && i > 0
            && matches!(b[i - 1], b'e' | b'E')
            && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exponent_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// A shape as Futhark writes it in types: `[2][3]`.
fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// A piece of the text for a message, shortened when long.
fn snippet(s: &str) -> String {
    const MAX: usize = 40;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn int(k: i64) -> Value {
        Value::Scalar(Const::I64(k))
    }

    fn array(shape: &[usize], data: &[i64]) -> Value {
        Value::Array(ArrayValue {
            shape: shape.to_vec(),
            data: crate::value::Elems::I64(data.to_vec()),
        })
    }

    fn one(text: &str) -> Value {
        match parse_one(text) {
            Ok(v) => v,
            Err(e) => panic!("{text:?}: {e}"),
        }
    }

    /// The error for `text`, checked to be at `start..end` and to contain
    /// `message`.
    #[track_caller]
    fn fails(text: &str, start: usize, end: usize, message: &str) -> ValueError {
        let e = match parse_values(text) {
            Ok(v) => panic!("{text:?} parsed as {v:?}"),
            Err(e) => e,
        };
        assert!(
            e.message.contains(message),
            "{text:?}: message {:?} lacks {message:?}",
            e.message
        );
        assert_eq!(
            (e.start, e.end),
            (start, end),
            "{text:?}: range of {:?}",
            e.message
        );
        e
    }

    // --- Accepted forms -------------------------------------------------

    #[test]
    fn integers() {
        assert_eq!(one("42"), int(42));
        assert_eq!(one("-3"), int(-3));
        assert_eq!(one("42i64"), int(42));
        assert_eq!(one("-3i64"), int(-3));
        assert_eq!(one("0"), int(0));
        assert_eq!(one("-0"), int(0));
        assert_eq!(one("007"), int(7));
        assert_eq!(one("9223372036854775807"), int(i64::MAX));
        assert_eq!(one("9223372036854775807i64"), int(i64::MAX));
        assert_eq!(one("-9223372036854775808"), int(i64::MIN));
        assert_eq!(one("-9223372036854775808i64"), int(i64::MIN));
        assert_eq!(one("  \n\t 5 \r\n"), int(5));
    }

    #[test]
    fn arrays() {
        assert_eq!(one("[1, 2, 3]"), array(&[3], &[1, 2, 3]));
        assert_eq!(one("[1i64,2,-3i64]"), array(&[3], &[1, 2, -3]));
        assert_eq!(one("[7]"), array(&[1], &[7]));
        assert_eq!(one("[\n  1\n ,\n 2 ]"), array(&[2], &[1, 2]));
        assert_eq!(
            one("[[1i64, 2i64], [3i64, 4i64]]"),
            array(&[2, 2], &[1, 2, 3, 4])
        );
        assert_eq!(one("[[1, 2, 3]]"), array(&[1, 3], &[1, 2, 3]));
        assert_eq!(
            one("[[[1], [2]], [[3], [4]], [[5], [6]]]"),
            array(&[3, 2, 1], &[1, 2, 3, 4, 5, 6])
        );
        assert_eq!(
            one("[-9223372036854775808, 9223372036854775807]"),
            array(&[2], &[i64::MIN, i64::MAX])
        );
    }

    #[test]
    fn empty_arrays() {
        assert_eq!(one("empty([0]i64)"), array(&[0], &[]));
        assert_eq!(one("empty([3][0]i64)"), array(&[3, 0], &[]));
        assert_eq!(one("empty([0][5]i64)"), array(&[0, 5], &[]));
        assert_eq!(one("empty ( [ 2 ]\n[0] i64 )"), array(&[2, 0], &[]));
        // As elements of arrays.
        assert_eq!(one("[empty([0]i64), empty([0]i64)]"), array(&[2, 0], &[]));
        assert_eq!(one("[[empty([3][0]i64)]]"), array(&[1, 1, 3, 0], &[]));
    }

    #[test]
    fn comments_and_sequences() {
        let text = "-- inputs\n1 -- one\n[2, -- two\n 3] -- three\n--\nempty([0]i64) -- end";
        let expected = vec![int(1), array(&[2], &[2, 3]), array(&[0], &[])];
        assert_eq!(parse_values(text), Ok(expected));
        assert_eq!(parse_values("1 2\n-3"), Ok(vec![int(1), int(2), int(-3)]));
        assert_eq!(
            parse_values("[1][2]"),
            Ok(vec![array(&[1], &[1]), array(&[1], &[2])])
        );
        assert_eq!(parse_values(""), Ok(vec![]));
        assert_eq!(parse_values("  -- nothing here\n  \n"), Ok(vec![]));
        assert_eq!(parse_values("1--2"), Ok(vec![int(1)]));
    }

    #[test]
    fn deep_nesting_up_to_the_limit() {
        let text = format!("{}5{}", "[".repeat(MAX_RANK), "]".repeat(MAX_RANK));
        assert_eq!(one(&text), array(&[1; MAX_RANK], &[5]));
        let text = format!(
            "{}empty([0]i64){}",
            "[".repeat(MAX_RANK - 1),
            "]".repeat(MAX_RANK - 1)
        );
        let mut shape = vec![1; MAX_RANK - 1];
        shape.push(0);
        assert_eq!(one(&text), array(&shape, &[]));
    }

    #[test]
    fn parse_one_wants_exactly_one() {
        assert_eq!(parse_one(" [1] -- c\n"), Ok(array(&[1], &[1])));
        let e = parse_one("  -- nothing\n").unwrap_err();
        assert_eq!(
            (e.start, e.end, e.message.as_str()),
            (13, 13, "expected a value, found none")
        );
        let e = parse_one("1 [2, 3] 4").unwrap_err();
        assert_eq!((e.start, e.end), (2, 8));
        assert!(e.message.contains("more than one"));
        let e = parse_one("1 [2,").unwrap_err();
        assert_eq!((e.start, e.end), (2, 5));
        // Errors in the first value come first.
        fails("[1,", 0, 1, "unterminated");
        assert_eq!(parse_one("[1,").unwrap_err().start, 0);
    }

    // --- Errors ---------------------------------------------------------

    #[test]
    fn empty_brackets() {
        fails("[]", 0, 2, "write an empty array as `empty([0]i64)`");
        fails("[ \n ]", 0, 5, "`empty([0]i64)`");
        fails("[[1], []]", 6, 8, "`[]` has no shape");
    }

    #[test]
    fn trailing_comma() {
        fails("[1, 2,]", 5, 6, "a trailing comma is not allowed");
        fails("[[1],\n]", 4, 5, "a trailing comma is not allowed");
    }

    #[test]
    fn ragged_arrays() {
        let e = fails("[[1, 2, 3], [4, 5]]", 12, 18, "rows of different shapes");
        assert_eq!(e.message, "rows of different shapes: [3] and [2]");
        let e = fails("[[[1, 2]], [[3]]]", 11, 16, "rows of different shapes");
        assert_eq!(e.message, "rows of different shapes: [1][2] and [1][1]");
        let e = fails("[[1], empty([0]i64)]", 6, 19, "rows of different shapes");
        assert_eq!(e.message, "rows of different shapes: [1] and [0]");
        let e = fails(
            "[empty([0]i64), empty([1][0]i64)]",
            16,
            32,
            "rows of different shapes",
        );
        assert_eq!(e.message, "rows of different shapes: [0] and [1][0]");
    }

    #[test]
    fn mixed_scalars_and_arrays() {
        let e = fails("[1, [2]]", 4, 7, "mixed scalars and arrays in one array");
        assert_eq!(
            e.message,
            "mixed scalars and arrays in one array: an array of shape [1] after scalars"
        );
        let e = fails(
            "[[1, 2], 3]",
            9,
            10,
            "mixed scalars and arrays in one array",
        );
        assert_eq!(
            e.message,
            "mixed scalars and arrays in one array: a scalar after arrays of shape [2]"
        );
        fails("[1, empty([0]i64)]", 4, 17, "mixed scalars and arrays");
    }

    fn typed(c: Const) -> Value {
        Value::Scalar(c)
    }

    fn elems(shape: &[usize], data: crate::value::Elems) -> Value {
        Value::Array(ArrayValue {
            shape: shape.to_vec(),
            data,
        })
    }

    #[test]
    fn scalars_of_every_type() {
        use crate::value::Elems as E;
        assert_eq!(one("-3i32"), typed(Const::I32(-3)));
        assert_eq!(one("2147483647i32"), typed(Const::I32(i32::MAX)));
        assert_eq!(one("1.5f32"), typed(Const::f32(1.5)));
        assert_eq!(one("2f32"), typed(Const::f32(2.0)));
        assert_eq!(one("2.5"), typed(Const::f64(2.5)));
        assert_eq!(one("1e-3f64"), typed(Const::f64(1e-3)));
        assert_eq!(one("1E3"), typed(Const::f64(1000.0)));
        assert_eq!(one("-2.5e-3f32"), typed(Const::f32(-2.5e-3)));
        assert_eq!(one("0.1f32"), typed(Const::f32(0.1)));
        assert_eq!(one("f32.nan"), typed(Const::f32(f32::NAN)));
        assert_eq!(one("-f64.inf"), typed(Const::f64(f64::NEG_INFINITY)));
        assert_eq!(one("f32.inf"), typed(Const::f32(f32::INFINITY)));
        assert_eq!(one("true"), typed(Const::Bool(true)));
        assert_eq!(one("false"), typed(Const::Bool(false)));
        assert_eq!(one("-0.0f64"), typed(Const::f64(-0.0)));
        assert_eq!(one("[1.5f32, 2f32]"), elems(&[2], E::F32(vec![1.5, 2.0])));
        assert_eq!(
            one("[true, false]"),
            elems(&[2], E::Bool(vec![true, false]))
        );
        assert_eq!(one("empty([0]f32)"), elems(&[0], E::F32(vec![])));
        assert_eq!(one("empty([2][0]bool)"), elems(&[2, 0], E::Bool(vec![])));
        assert_eq!(
            one("[[empty([0]f64)], [empty([0]f64)]]"),
            elems(&[2, 1, 0], E::F64(vec![]))
        );
    }

    #[test]
    fn unsuffixed_literals_take_the_values_type() {
        use crate::value::Elems as E;
        assert_eq!(one("[1, 2i32]"), elems(&[2], E::I32(vec![1, 2])));
        assert_eq!(
            one("[1.5, 2f32, 3]"),
            elems(&[3], E::F32(vec![1.5, 2.0, 3.0]))
        );
        assert_eq!(one("[1, 2.5]"), elems(&[2], E::F64(vec![1.0, 2.5])));
        assert_eq!(one("[[1], [2f64]]"), elems(&[2, 1], E::F64(vec![1.0, 2.0])));
        // The wanted type applies where nothing in the value fixes one.
        let vs = read_values_for(
            b"1.5 [1, 2] 3 [1.5] 7 5000000000",
            &[
                Prim::F32,
                Prim::I32,
                Prim::F64,
                Prim::I32,
                Prim::Bool,
                Prim::I32,
            ],
        );
        assert_eq!(
            vs,
            Ok(vec![
                typed(Const::f32(1.5)),
                elems(&[2], E::I32(vec![1, 2])),
                typed(Const::f64(3.0)),
                // Does not fit: keeps its own type for the runner to report.
                elems(&[1], E::F64(vec![1.5])),
                Value::int(7),
                Value::int(5_000_000_000),
            ])
        );
        assert_eq!(
            read_values_for(b"[1f64] 2i64", &[Prim::F32, Prim::I32]),
            Ok(vec![elems(&[1], E::F64(vec![1.0])), Value::int(2)])
        );
    }

    #[test]
    fn type_errors() {
        let e = fails("[1i32, 2i64]", 7, 11, "mixed element types");
        assert_eq!(
            e.message,
            "mixed element types: `2i64` has type i64, but earlier elements have type i32"
        );
        fails("[1.5, 2i32]", 6, 10, "cannot be a i32");
        fails("[true, 1]", 7, 8, "`1` is not a value of the type bool");
        fails(
            "[1i32, 5000000000]",
            7,
            17,
            "`5000000000` is out of range for the type i32",
        );
        fails("[1i32, 1.5]", 7, 10, "not a value of the type i32");
        fails(
            "[empty([0]i32), empty([0]f32)]",
            16,
            29,
            "mixed element types",
        );
        fails("[[1.5f32], [empty([0]f64)]]", 12, 25, "mixed element types");
        let e = fails("1u8", 0, 3, "not supported");
        assert_eq!(
            e.message,
            "`1u8` has type u8, which is not supported; funmem supports bool, i32, i64, f32 and f64"
        );
        fails("1.5i32", 0, 6, "is not an integer");
        fails("2147483648i32", 0, 13, "out of range for i32");
        fails("empty([0]u16)", 9, 12, "the type u16 is not supported");
        fails("empty([0]int)", 9, 12, "unknown element type `int`");
        fails("1abc", 0, 4, "malformed number `1abc`");
        fails("0x1F", 0, 4, "malformed number");
        assert_eq!(one("1_000"), int(1000));
        assert_eq!(one("-1_0.2_5e1_0f32"), typed(Const::f32(-10.25e10)));
        fails("_1", 0, 2, "expected a value, found `_1`");
        fails("1._5", 0, 4, "malformed number");
        fails("2e", 0, 2, "malformed number");
        fails("2.f32", 0, 5, "malformed number");
        fails("1i", 0, 2, "unknown suffix `i`");
        fails("1bool", 0, 5, "a number cannot be a bool");
        fails("f32.nab", 0, 7, "expected a value, found `f32.nab`");
        fails("-true", 0, 5, "expected a number right after `-`");
    }

    #[test]
    fn out_of_range() {
        let e = fails("9223372036854775808", 0, 19, "out of range for i64");
        assert_eq!(
            e.message,
            "`9223372036854775808` is out of range for i64 \
             (-9223372036854775808 to 9223372036854775807)"
        );
        fails("-9223372036854775809", 0, 20, "out of range for i64");
        fails(
            "[1, 99999999999999999999999999i64]",
            4,
            33,
            "out of range for i64",
        );
        // Long literals are shortened in the message, not in the range.
        let long = "9".repeat(1000);
        let e = fails(&long, 0, 1000, "out of range");
        assert!(e.message.len() < 200);
    }

    #[test]
    fn unexpected_characters() {
        let e = fails("@", 0, 1, "unexpected character");
        assert_eq!(e.message, "unexpected character `@` (expected a value)");
        fails(
            "[1 2]",
            3,
            4,
            "unexpected character `2` (expected `,` or `]`)",
        );
        fails("[1; 2]", 2, 3, "unexpected character `;`");
        fails("1, 2", 1, 2, "unexpected `,` outside an array");
        fails("1 ]", 2, 3, "unexpected `]`: there is no array to close");
        fails("[,1]", 1, 2, "unexpected character `,` (expected a value)");
        fails("- 1", 0, 1, "expected a number right after `-`");
        fails("[1, -]", 4, 5, "expected a number right after `-`");
        fails("+1", 0, 1, "unexpected character `+`");
        fails("é", 0, 2, "unexpected character `é`");
        fails("1 \u{0}", 2, 3, "unexpected character '\\0'");
        fails("[1\t\u{7}]", 3, 4, "unexpected character '\\u{7}'");
        fails("foo", 0, 3, "expected a value, found `foo`");
        fails("b\u{2}\u{0}", 0, 3, "cut short in its header");
    }

    #[test]
    fn unterminated_arrays() {
        let e = fails("[1, 2", 0, 1, "unterminated array");
        assert_eq!(
            e.message,
            "unterminated array: this `[` has no matching `]`"
        );
        fails("[[1], [2", 6, 7, "unterminated array");
        fails("[1,", 0, 1, "unterminated array");
        fails("[1, -- ]", 0, 1, "unterminated array");
        fails("[", 0, 1, "unterminated array");
        fails("1 [[", 3, 4, "unterminated array");
    }

    #[test]
    fn bad_empty() {
        let e = fails(
            "empty([2][3]i64)",
            0,
            16,
            "empty(...) needs a zero dimension",
        );
        assert_eq!(
            e.message,
            "empty(...) needs a zero dimension: an array of shape [2][3] is not empty"
        );
        fails(
            "1 empty( [4] i64 )",
            2,
            18,
            "empty(...) needs a zero dimension",
        );
        fails(
            "empty(i64)",
            0,
            10,
            "empty(...) needs at least one dimension",
        );
        fails(
            "empty [0]i64",
            6,
            7,
            "unexpected character `[` (expected `(` after `empty`)",
        );
        fails(
            "empty",
            5,
            5,
            "unexpected end of text (expected `(` after `empty`)",
        );
        fails(
            "empty([0]i64",
            12,
            12,
            "unexpected end of text (expected `)` to close `empty(`)",
        );
        fails("empty([0]i64]", 12, 13, "expected `)` to close `empty(`");
        fails(
            "empty([x]i64)",
            7,
            8,
            "expected a dimension (a natural number)",
        );
        fails("empty([-1]i64)", 7, 8, "expected a dimension");
        fails("empty([0 i64)", 9, 10, "expected `]` after a dimension");
        fails("empty((0)i64)", 6, 7, "expected `[` or an element type");
        fails(
            "empty([0][9223372036854775808]i64)",
            10,
            29,
            "the dimension `9223372036854775808` is too large",
        );
        assert_eq!(
            one("empty([0][9223372036854775807]i64)"),
            array(&[0, i64::MAX as usize], &[])
        );
    }

    #[test]
    fn too_many_dimensions() {
        let n = MAX_RANK + 1;
        let text = format!("{}5{}", "[".repeat(n), "]".repeat(n));
        fails(&text, MAX_RANK, MAX_RANK + 1, "more than 64 dimensions");
        let text = format!("[[empty({}i64)]]", "[0]".repeat(MAX_RANK - 1));
        // `[[empty([0]...[0]i64)]]`: 2 + 63 dimensions.
        fails(
            &text,
            8 + 3 * (MAX_RANK - 2),
            8 + 3 * (MAX_RANK - 1),
            "more than 64 dimensions",
        );
        // Very deep nesting is an error, not a stack overflow.
        let deep = "[".repeat(1_000_000);
        fails(&deep, MAX_RANK, MAX_RANK + 1, "more than 64 dimensions");
    }

    #[test]
    fn error_display() {
        let e = parse_values("[1, 2,]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a trailing comma is not allowed (bytes 5..6)"
        );
        let _: &dyn std::error::Error = &e;
    }

    // --- Properties -----------------------------------------------------

    /// Any element of any type: floats from all their bits (NaNs,
    /// infinities, subnormals and -0.0 included).
    fn const_strategy() -> impl Strategy<Value = Const> {
        prop_oneof![
            any::<i64>().prop_map(Const::I64),
            any::<i32>().prop_map(Const::I32),
            any::<u32>().prop_map(|b| Const::f32(f32::from_bits(b))),
            any::<u64>().prop_map(|b| Const::f64(f64::from_bits(b))),
            any::<bool>().prop_map(Const::Bool),
        ]
    }

    fn value_strategy() -> impl Strategy<Value = Value> {
        let scalar = const_strategy().prop_map(Value::Scalar);
        let arr = (
            proptest::collection::vec(0usize..=4, 1..=3),
            prop::sample::select(Prim::ALL.to_vec()),
        )
            .prop_flat_map(|(shape, p)| {
                let n: usize = shape.iter().product();
                proptest::collection::vec(const_strategy(), n).prop_map(move |cs| {
                    // Each element converted to the array's type by its word.
                    let data = crate::value::Elems::from_words(p, cs.iter().map(|c| c.to_bits()));
                    Value::Array(ArrayValue {
                        shape: shape.clone(),
                        data,
                    })
                })
            });
        prop_oneof![scalar, arr]
    }

    proptest! {
        #[test]
        fn binary_round_trips(vs in proptest::collection::vec(value_strategy(), 0..5)) {
            let bytes: Vec<u8> = vs.iter().flat_map(crate::binary::encode).collect();
            prop_assert_eq!(read_values(&bytes), Ok(vs));
        }
    }

    /// Pieces of value texts, mostly well-formed ones.
    fn token() -> impl Strategy<Value = &'static str> {
        let common = prop::sample::select(vec![
            "[",
            "]",
            ", ",
            " ",
            "\n",
            "1",
            "-7",
            "42i64",
            "empty([0]i64)",
            "empty([2][0]i64)",
        ]);
        let rare = prop::sample::select(vec![
            ",",
            "-",
            "--",
            "i64",
            "i32",
            "1.5",
            "e",
            "e-",
            "3e+2",
            "true",
            "empty",
            "empty(",
            "(",
            ")",
            "[0]",
            "[2]",
            "i64)",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "é",
            "\t",
            "\u{0}",
            "b\u{2}",
            "0x",
            "f32.",
            "_",
            "[]",
        ]);
        prop_oneof![6 => common, 1 => rare]
    }

    /// Checks what any answer of the reader must satisfy.
    fn check_answer(text: &str, answer: &Result<Vec<Value>, ValueError>) {
        match answer {
            Ok(values) => {
                for v in values {
                    if let Value::Array(a) = v {
                        assert!(!a.shape.is_empty() && a.shape.len() <= MAX_RANK);
                        assert_eq!(a.data.len(), a.shape.iter().product::<usize>());
                    }
                }
                // Printing and reading again gives the same values.
                let printed: Vec<String> = values.iter().map(Value::to_string).collect();
                assert_eq!(parse_values(&printed.join("\n")).as_ref(), Ok(values));
            }
            Err(e) => {
                assert!(e.start <= e.end && e.end <= text.len(), "{e:?} in {text:?}");
                assert!(text.is_char_boundary(e.start) && text.is_char_boundary(e.end));
                assert!(!e.message.is_empty());
            }
        }
    }

    #[test]
    fn a_binary_header_in_text_errs_on_whole_characters() {
        // `b`, version 2, rank 0, then a type whose byte 0x80 became a
        // replacement character (three bytes) in the text.
        let text = String::from_utf8_lossy(&[98, 2, 0, 0, 0, 128, 0]).into_owned();
        let answer = parse_values(&text);
        assert!(answer.is_err());
        check_answer(&text, &answer);
    }

    proptest! {
        #[test]
        fn display_round_trips(v in value_strategy()) {
            let text = v.to_string();
            prop_assert_eq!(parse_one(&text), Ok(v));
        }

        #[test]
        fn sequences_round_trip(vs in proptest::collection::vec(value_strategy(), 0..5)) {
            let text: String = vs.iter().map(|v| format!("{v} -- comment [\n")).collect();
            prop_assert_eq!(parse_values(&text), Ok(vs));
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let text = String::from_utf8_lossy(&bytes);
            check_answer(&text, &parse_values(&text));
            let _ = parse_one(&text);
        }

        #[test]
        fn token_soups_never_panic(tokens in proptest::collection::vec(token(), 0..40)) {
            let text: String = tokens.concat();
            check_answer(&text, &parse_values(&text));
            let _ = parse_one(&text);
        }

        #[test]
        fn mutated_values_never_panic(
            v in value_strategy(),
            at in any::<prop::sample::Index>(),
            deleted in 0usize..4,
            inserted in prop::sample::select(vec![
                "", "[", "]", ",", " ", "1", "-", "[1]", "[1, 2]", "empty([0]i64)", "i32", "--",
            ]),
        ) {
            // The printed text is ASCII, so any byte offset is a char boundary.
            let text = v.to_string();
            let k = at.index(text.len() + 1);
            let end = (k + deleted).min(text.len());
            let mutated = format!("{}{inserted}{}", &text[..k], &text[end..]);
            check_answer(&mutated, &parse_values(&mutated));
        }

        #[test]
        fn well_formed_soups_parse(vs in proptest::collection::vec(value_strategy(), 1..4),
                                   seps in proptest::collection::vec(
                                       prop::sample::select(vec![" ", "\n", "\t", " -- c\n", "\r\n"]),
                                       1..4)) {
            // Respaced text: every ", " becomes a separator drawn from `seps`.
            let mut text = String::new();
            for (k, v) in vs.iter().enumerate() {
                let printed = v.to_string();
                for (j, piece) in printed.split(", ").enumerate() {
                    if j > 0 {
                        text.push_str(seps[(j + k) % seps.len()]);
                        text.push(',');
                        text.push_str(seps[j % seps.len()]);
                    }
                    text.push_str(piece);
                }
                text.push_str(seps[k % seps.len()]);
            }
            prop_assert_eq!(parse_values(&text), Ok(vs));
        }
    }
}
