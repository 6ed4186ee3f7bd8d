//! Reading Futhark's textual value format: the data files of `futhark test`
//! and `futhark dataset`, and the inputs of the `funmem` runner (docs/language.md).
//!
//! A text holds values separated by whitespace; `--` starts a comment that
//! runs to the end of its line. A value is an integer (`42`, `-3`, `42i64`),
//! an array (`[1, 2, 3]`, `[[1i64, 2i64], [3i64, 4i64]]`), or an empty array
//! written with its shape (`empty([0]i64)`, `empty([3][0]i64)`), which may
//! also be an element of an array. Arrays are regular: all elements of one
//! array have the same shape. Only the element type `i64` is supported so
//! far; literals of Futhark's other primitive types are recognised and
//! rejected with a message that names their type.
//!
//! What [`Value`]'s `Display` prints reads back as the same value. Every
//! problem is a [`ValueError`] at a byte range of the text. Reading never
//! panics, takes time linear in the text for arrays of bounded rank, and
//! accepts arrays of up to [`MAX_RANK`] dimensions.

use crate::value::{ArrayValue, Value};
use funmem_lang::prim::Const;
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
    fn new(start: usize, end: usize, message: impl Into<String>) -> ValueError {
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
    let mut reader = Reader::new(text);
    let mut values = Vec::new();
    while let Some(value) = reader.next_value()? {
        values.push(value);
    }
    Ok(values)
}

/// Reads a text that holds exactly one value.
pub fn parse_one(text: &str) -> Result<Value, ValueError> {
    let mut reader = Reader::new(text);
    let Some(value) = reader.next_value()? else {
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
        let end = match reader.next_value() {
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

/// Futhark's primitive types, as literal suffixes and `empty(...)` name them.
///
/// This is where element types are recognised: supporting another one means
/// accepting it in [`PrimType::supported`], in [`Reader::literal`] and in
/// [`Reader::empty_body`], and storing its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PrimType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    Bool,
}

impl PrimType {
    const ALL: [PrimType; 12] = [
        PrimType::I8,
        PrimType::I16,
        PrimType::I32,
        PrimType::I64,
        PrimType::U8,
        PrimType::U16,
        PrimType::U32,
        PrimType::U64,
        PrimType::F16,
        PrimType::F32,
        PrimType::F64,
        PrimType::Bool,
    ];

    fn name(self) -> &'static str {
        match self {
            PrimType::I8 => "i8",
            PrimType::I16 => "i16",
            PrimType::I32 => "i32",
            PrimType::I64 => "i64",
            PrimType::U8 => "u8",
            PrimType::U16 => "u16",
            PrimType::U32 => "u32",
            PrimType::U64 => "u64",
            PrimType::F16 => "f16",
            PrimType::F32 => "f32",
            PrimType::F64 => "f64",
            PrimType::Bool => "bool",
        }
    }

    fn from_name(name: &[u8]) -> Option<PrimType> {
        PrimType::ALL
            .into_iter()
            .find(|t| t.name().as_bytes() == name)
    }

    fn supported(self) -> bool {
        self == PrimType::I64
    }
}

const ONLY_I64: &str = "only i64 values are supported so far";

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
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The open arrays, outermost first, up to the current depth; frames
    /// beyond it are spare and keep their allocations.
    frames: Vec<Frame>,
    /// The shape read by the last `empty(...)`.
    dims: Vec<usize>,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            frames: Vec::new(),
            dims: Vec::new(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
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

    /// The next value, or `None` at the end of the text.
    fn next_value(&mut self) -> Result<Option<Value>, ValueError> {
        self.skip_blank();
        if self.pos == self.bytes.len() {
            return Ok(None);
        }
        let mut data: Vec<i64> = Vec::new();
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
                             `empty([0]i64)`, with all its dimensions",
                        ));
                    }
                    continue;
                }
                Some(b'0'..=b'9' | b'-') => {
                    let x = self.literal()?;
                    if depth == 0 {
                        return Ok(Some(Value::Scalar(Const::I64(x))));
                    }
                    let frame = &mut self.frames[depth - 1];
                    if frame.elems == Elems::Arrays {
                        return Err(ValueError::new(
                            start,
                            self.pos,
                            format!(
                                "mixed scalars and arrays in one array: a scalar after \
                                 arrays of shape {}",
                                shape_text(&frame.row)
                            ),
                        ));
                    }
                    frame.elems = Elems::Scalars;
                    frame.count += 1;
                    data.push(x);
                }
                Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                    self.word_value(depth)?;
                    if depth == 0 {
                        let shape = self.dims.clone();
                        return Ok(Some(Value::Array(ArrayValue {
                            shape,
                            data: crate::value::Elems::I64(data),
                        })));
                    }
                    let (head, tail) = (self.dims[0], &self.dims[1..]);
                    add_row(&mut self.frames[depth - 1], head, tail, start, self.pos)?;
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
                            return Ok(Some(Value::Array(ArrayValue {
                                shape,
                                data: crate::value::Elems::I64(data),
                            })));
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

    /// An integer literal, with its optional suffix.
    fn literal(&mut self) -> Result<i64, ValueError> {
        let b = self.bytes;
        let start = self.pos;
        let negative = b[start] == b'-';
        let digits = if negative { start + 1 } else { start };
        let mut i = digits;
        let mut magnitude: u64 = 0;
        let mut overflow = false;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            match magnitude
                .checked_mul(10)
                .and_then(|m| m.checked_add(u64::from(d)))
            {
                Some(m) => magnitude = m,
                None => overflow = true,
            }
            i += 1;
        }
        if i == digits {
            self.pos = start + 1;
            return Err(ValueError::new(
                start,
                start + 1,
                "expected digits right after `-`",
            ));
        }
        let suffix = i;
        let end = scan_word(b, i);
        self.pos = end;
        let literal = &self.text[start..end];
        match &b[suffix..end] {
            [] | b"i64" => {}
            [b'.', ..] | [b'e' | b'E', b'0'..=b'9' | b'+' | b'-', ..] => {
                return Err(ValueError::new(
                    start,
                    end,
                    format!(
                        "`{}` is a floating-point value; {ONLY_I64}",
                        snippet(literal)
                    ),
                ));
            }
            other => {
                let message = match PrimType::from_name(other) {
                    Some(t) => format!("`{}` has type {}; {ONLY_I64}", snippet(literal), t.name()),
                    None => format!(
                        "unknown suffix `{}` in the literal `{}`; {ONLY_I64}",
                        snippet(&self.text[suffix..end]),
                        snippet(literal)
                    ),
                };
                return Err(ValueError::new(start, end, message));
            }
        }
        let value = if overflow {
            None
        } else if negative {
            (magnitude <= i64::MIN.unsigned_abs()).then(|| 0i64.wrapping_sub_unsigned(magnitude))
        } else {
            i64::try_from(magnitude).ok()
        };
        value.ok_or_else(|| {
            ValueError::new(
                start,
                end,
                format!(
                    "`{}` is out of range for i64 ({} to {})",
                    snippet(literal),
                    i64::MIN,
                    i64::MAX
                ),
            )
        })
    }

    /// A value that starts with a letter: `empty(...)`, whose shape is left
    /// in `self.dims`, or an error.
    fn word_value(&mut self, depth: usize) -> Result<(), ValueError> {
        let start = self.pos;
        let end = scan_word(self.bytes, start);
        self.pos = end;
        let word = &self.bytes[start..end];
        let text = snippet(&self.text[start..end]);
        match word {
            b"empty" => self.empty_body(start, depth),
            b"true" | b"false" => Err(ValueError::new(
                start,
                end,
                format!("`{text}` has type bool; {ONLY_I64}"),
            )),
            b"b" if self.bytes.get(end) == Some(&2) => Err(ValueError::new(
                start,
                end,
                "Futhark's binary value format is not supported; convert the data to text \
                 with `futhark dataset --text`",
            )),
            [b'f', b'1' | b'3' | b'6', b'2' | b'4' | b'6', b'.', ..] => Err(ValueError::new(
                start,
                end,
                format!("`{text}` is a floating-point value; {ONLY_I64}"),
            )),
            _ => Err(ValueError::new(
                start,
                end,
                format!("expected a value, found `{text}`"),
            )),
        }
    }

    /// The rest of `empty(...)` after the word `empty` at `start`.
    fn empty_body(&mut self, start: usize, depth: usize) -> Result<(), ValueError> {
        self.skip_blank();
        if self.peek() != Some(b'(') {
            return Err(self.unexpected_here("`(` after `empty`"));
        }
        self.pos += 1;
        self.dims.clear();
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
                    let name = &self.text[at..end];
                    match PrimType::from_name(name.as_bytes()) {
                        Some(t) if t.supported() => {}
                        Some(t) => {
                            return Err(ValueError::new(
                                at,
                                end,
                                format!("an empty array of {} values; {ONLY_I64}", t.name()),
                            ));
                        }
                        None => {
                            return Err(ValueError::new(
                                at,
                                end,
                                format!("unknown element type `{}`", snippet(name)),
                            ));
                        }
                    }
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
        Ok(())
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
        let text = &self.text[start..end];
        text.parse::<i64>()
            .ok()
            .and_then(|d| usize::try_from(d).ok())
            .ok_or_else(|| {
                ValueError::new(
                    start,
                    end,
                    format!("the dimension `{}` is too large", snippet(text)),
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
        match self.text.get(at..).and_then(|rest| rest.chars().next()) {
            None if at >= self.bytes.len() => ValueError::new(
                self.bytes.len(),
                self.bytes.len(),
                format!("unexpected end of text (expected {expected})"),
            ),
            None => ValueError::new(at, at + 1, format!("unexpected byte (expected {expected})")),
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

    #[test]
    fn other_types() {
        let e = fails("1i32", 0, 4, "only i64 values are supported so far");
        assert_eq!(
            e.message,
            "`1i32` has type i32; only i64 values are supported so far"
        );
        let e = fails("[1, 1u8]", 4, 7, "only i64 values are supported so far");
        assert_eq!(
            e.message,
            "`1u8` has type u8; only i64 values are supported so far"
        );
        let e = fails("1.5", 0, 3, "only i64");
        assert_eq!(
            e.message,
            "`1.5` is a floating-point value; only i64 values are supported so far"
        );
        fails(
            "-2.5e-3f32 7",
            0,
            10,
            "`-2.5e-3f32` is a floating-point value",
        );
        fails("1e10", 0, 4, "floating-point");
        fails("3f64", 0, 4, "`3f64` has type f64");
        fails("f32.nan", 0, 7, "`f32.nan` is a floating-point value");
        fails("[true]", 1, 5, "`true` has type bool; only i64");
        fails("false", 0, 5, "bool");
        let e = fails("1abc", 0, 4, "only i64");
        assert_eq!(
            e.message,
            "unknown suffix `abc` in the literal `1abc`; only i64 values are supported so far"
        );
        fails("0x1F", 0, 4, "unknown suffix `x1F`");
        fails("1_000", 0, 5, "unknown suffix `_000`");
        fails("1empty", 0, 6, "unknown suffix `empty`");
        fails("2e", 0, 2, "unknown suffix `e`");
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
        fails("- 1", 0, 1, "expected digits right after `-`");
        fails("[1, -]", 4, 5, "expected digits right after `-`");
        fails("+1", 0, 1, "unexpected character `+`");
        fails("é", 0, 2, "unexpected character `é`");
        fails("1 \u{0}", 2, 3, "unexpected character '\\0'");
        fails("[1\t\u{7}]", 3, 4, "unexpected character '\\u{7}'");
        fails("foo", 0, 3, "expected a value, found `foo`");
        fails("b\u{2}\u{0}", 0, 1, "binary value format is not supported");
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
        let e = fails("empty([0]i32)", 9, 12, "only i64");
        assert_eq!(
            e.message,
            "an empty array of i32 values; only i64 values are supported so far"
        );
        fails("empty([0]bool)", 9, 13, "an empty array of bool values");
        fails("empty([0]int)", 9, 12, "unknown element type `int`");
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

    fn value_strategy() -> impl Strategy<Value = Value> {
        let int = any::<i64>().prop_map(Value::int);
        let arr = proptest::collection::vec(0usize..=4, 1..=3).prop_flat_map(|shape| {
            let n: usize = shape.iter().product();
            proptest::collection::vec(any::<i64>(), n).prop_map(move |data| {
                Value::Array(ArrayValue {
                    shape: shape.clone(),
                    data: crate::value::Elems::I64(data),
                })
            })
        });
        prop_oneof![int, arr]
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
