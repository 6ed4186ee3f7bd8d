//! Test blocks in program comments (docs/language.md, Futhark's `futhark test`
//! format).
//!
//! ```text
//! -- What the program shows.
//! -- ==
//! -- input { 3 [1, 2, 3] }
//! -- output { [2i64, 4i64, 6i64] }
//! -- input { 2 [1, 2] }
//! -- error: out of bounds
//! -- structure { Alloc 2 }
//! -- input @ data/big.in
//! -- output @ data/big.out
//! -- random input { [100]i64 [100][8]f32 }
//! -- compiled random input { 1024i64 [1024][1024]f32 }
//! ```
//!
//! Everything before `-- ==` is the description. After it, each `input`
//! opens a test case: values in braces, `@ FILE` (a data file in text or
//! binary format, its path relative to the program), or `random input {
//! TYPES }` (values of those types generated with a seed fixed per case, so
//! that runs are reproducible; a scalar literal among the types, such as
//! a size `1024i64`, stands for itself). The `output { ... }`, `output @ FILE` or
//! `error: REGEX` that follows says what the case must give; a random input
//! has none of its own (Futhark uses them for benchmarks): its semantics
//! must agree with each other and not go wrong. `compiled` before an
//! `input` or `random input` marks a benchmark dataset (Futhark's keyword
//! for datasets too large for its interpreter): `funmem test` skips it,
//! `funmem bench` runs it. An `error:` before any `input` means the
//! program itself must be rejected (a parse or type error) with a message
//! matching the regex. `structure [PIPELINE] { Name N ... }` counts
//! constructs; PIPELINE is a name (`gpu-mem`) or a comma-separated pass
//! list (`simplify,coalesce`). Blocks may span several comment lines. Values are kept as
//! text here: the semantics crate reads them.

use crate::diag::{Diagnostic, Phase};
use crate::prim::Prim;
use crate::span::Span;

/// The parsed test block of a program file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestSpec {
    /// The description before `-- ==`.
    pub description: String,
    /// `Some(regex)` when the program itself must fail to parse or type-check.
    pub compile_error: Option<String>,
    /// Run-time test cases, in order.
    pub cases: Vec<TestCase>,
    /// Construct counts to check.
    pub structures: Vec<Structure>,
}

/// One `input` with what it must give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCase {
    /// The input values, as text in Futhark's value format (empty when
    /// they come from a file or are random: see `from`).
    pub input: String,
    /// Where the input values come from.
    pub from: InputFrom,
    /// What evaluation must give.
    pub expect: Expect,
    /// Where the `input` is (for reports).
    pub span: Span,
    /// `compiled input ...` (Futhark's keyword): a benchmark dataset, too
    /// large for the interpreters; `funmem test` skips it and `funmem bench`
    /// runs it.
    pub compiled: bool,
}

/// Where a case's input values come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputFrom {
    /// `input { ... }`: the text in `TestCase::input`.
    Inline,
    /// `input @ FILE`: a data file, relative to the program's folder.
    File(String),
    /// `random input { TYPES }`: random values of these shapes and element
    /// types, and literals standing for themselves.
    Random(Vec<RandomItem>),
}

/// One value of a `random input`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RandomItem {
    /// `[100][8]f32`: random values of this shape and element type.
    Random(Vec<usize>, Prim),
    /// `1024i64`, `360`, `0.5f32`, `true`: this scalar, as text (sizes and
    /// parameters that the arrays' shapes must agree with).
    Literal(String),
}

/// The expected outcome of a test case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// These values, as text.
    Output(String),
    /// The values in this data file (relative to the program's folder).
    OutputFile(String),
    /// An error whose message matches this regex.
    Error(String),
    /// Only that evaluation succeeds.
    Success,
}

/// `structure [pipeline] { Name N ... }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Structure {
    /// `None` for the program after lowering and simplifying; otherwise a
    /// named pipeline such as `gpu-mem`, or a pass list such as
    /// `simplify,coalesce` (no spaces).
    pub pipeline: Option<String>,
    /// Construct names with their expected counts.
    pub counts: Vec<(String, u64)>,
}

/// Reads the test block of a program file; `Ok(None)` when it has none.
pub fn parse(text: &str) -> Result<Option<TestSpec>, Diagnostic> {
    // The comment text of each line, with the byte offset where it starts.
    let mut lines = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("--") {
            let start = offset + (line.len() - trimmed.len()) + 2;
            lines.push((start, rest.trim_end_matches(['\n', '\r'])));
        } else if !trimmed.trim().is_empty()
            && !lines.is_empty()
            && lines.iter().any(|(_, l)| l.trim() == "==")
        {
            break; // the block ends at the first code line after `-- ==`
        }
        offset += line.len();
    }
    let Some(sep) = lines.iter().position(|(_, l)| l.trim() == "==") else {
        return Ok(None);
    };
    let description = lines[..sep]
        .iter()
        .map(|(_, l)| l.trim())
        .collect::<Vec<_>>()
        .join("\n");
    let mut spec = TestSpec {
        description: description.trim().to_string(),
        ..TestSpec::default()
    };
    // Join the block into one text, remembering where each piece came from.
    let mut block = String::new();
    let mut origin: Vec<(usize, usize)> = Vec::new(); // (offset in block, offset in file)
    for (start, l) in &lines[sep + 1..] {
        origin.push((block.len(), *start));
        block.push_str(l);
        block.push('\n');
    }
    let file_pos = |i: usize| -> usize {
        match origin.binary_search_by_key(&i, |(b, _)| *b) {
            Ok(k) => origin[k].1,
            Err(0) => 0,
            Err(k) => origin[k - 1].1 + (i - origin[k - 1].0),
        }
    };
    let bad = |i: usize, msg: String| {
        Diagnostic::new(Phase::Syntax, Span::new(file_pos(i), file_pos(i) + 1), msg)
    };
    let mut i = 0;
    let bytes = block.as_bytes();
    // `compiled` before the `input` or `random input` it marks.
    let mut compiled: Option<usize> = None;
    while i < block.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let rest = &block[i..];
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..word_len];
        if let Some(at) = compiled {
            if word != "input" && word != "random" {
                return Err(bad(
                    at,
                    "`compiled` must be followed by `input` or `random input`".into(),
                ));
            }
        }
        match word {
            "compiled" => {
                compiled = Some(i);
                i += word_len;
                continue;
            }
            "random" => {
                let after = i + word_len;
                let k = after + block[after..].len() - block[after..].trim_start().len();
                if !block[k..].starts_with("input") {
                    return Err(bad(i, "expected `random input { TYPES }`".into()));
                }
                let (body, next) = braced(&block, k + 5).ok_or_else(|| {
                    bad(
                        i,
                        "`random input` needs a `{ TYPES }` block, e.g. `{ [100]f32 }`".into(),
                    )
                })?;
                let body_at = block[..next].rfind('{').map_or(i, |b| b + 1);
                let mut types = Vec::new();
                for (at, word) in words(body) {
                    let literal = word.starts_with(|c: char| c.is_ascii_digit() || c == '-')
                        || word == "true"
                        || word == "false";
                    let t = if literal {
                        RandomItem::Literal(word.to_string())
                    } else {
                        let (shape, p) = random_type(word).map_err(|m| bad(body_at + at, m))?;
                        RandomItem::Random(shape, p)
                    };
                    types.push(t);
                }
                spec.cases.push(TestCase {
                    input: String::new(),
                    from: InputFrom::Random(types),
                    expect: Expect::Success,
                    span: Span::new(file_pos(i), file_pos(k + 5)),
                    compiled: compiled.take().is_some(),
                });
                i = next;
            }
            "input" | "output" => {
                let span = Span::new(file_pos(i), file_pos(i + word_len));
                let after = i + word_len;
                let k = after + block[after..].len() - block[after..].trim_start().len();
                let (file, body, next) = if block[k..].starts_with('@') {
                    let line_end = block[k..].find('\n').map_or(block.len(), |e| k + e);
                    let path = block[k + 1..line_end].trim();
                    if path.is_empty() || path.contains(char::is_whitespace) {
                        return Err(bad(k, format!("`{word} @` needs one file name")));
                    }
                    (Some(path.to_string()), String::new(), line_end)
                } else {
                    let (body, next) = braced(&block, after).ok_or_else(|| {
                        bad(i, format!("`{word}` needs a `{{ ... }}` block or `@ FILE`"))
                    })?;
                    (None, body.trim().to_string(), next)
                };
                if word == "input" {
                    spec.cases.push(TestCase {
                        input: body,
                        from: file.map_or(InputFrom::Inline, InputFrom::File),
                        expect: Expect::Success,
                        span,
                        compiled: compiled.take().is_some(),
                    });
                } else {
                    match spec.cases.last_mut() {
                        Some(c)
                            if c.expect == Expect::Success
                                && !matches!(c.from, InputFrom::Random(_)) =>
                        {
                            c.expect = file.map_or(Expect::Output(body), Expect::OutputFile)
                        }
                        _ => {
                            return Err(bad(
                                i,
                                "`output` must follow an `input` that has no expectation yet \
                                 (a `random input` has none)"
                                    .into(),
                            ))
                        }
                    }
                }
                i = next;
            }
            "error" => {
                let after = i + word_len;
                if !block[after..].starts_with(':') {
                    return Err(bad(i, "expected `error: REGEX`".into()));
                }
                let end = block[after..].find('\n').map_or(block.len(), |k| after + k);
                let re = block[after + 1..end].trim().to_string();
                if let Err(e) = regex::Regex::new(&re) {
                    return Err(bad(after + 1, format!("invalid regular expression: {e}")));
                }
                match spec.cases.last_mut() {
                    None if spec.compile_error.is_none() => spec.compile_error = Some(re),
                    Some(c) if c.expect == Expect::Success => c.expect = Expect::Error(re),
                    _ => return Err(bad(i, "`error:` must follow an `input` that has no expectation yet, or come first".into())),
                }
                i = end;
            }
            "structure" => {
                let mut j = i + word_len;
                while j < block.len() && bytes[j] == b' ' {
                    j += 1;
                }
                // The pipeline is on the line of the word, up to its `{`.
                let pipe_len = block[j..].find(['{', '\n']).unwrap_or(block.len() - j);
                let pipeline = pipeline_name(&block[j..j + pipe_len]).map_err(|m| bad(i, m))?;
                let (body, next) = braced(&block, j + pipe_len)
                    .ok_or_else(|| bad(i, "`structure` needs a `{ Name N ... }` block".into()))?;
                let toks: Vec<&str> = body.split_whitespace().collect();
                if !toks.len().is_multiple_of(2) {
                    return Err(bad(i, "`structure` expects pairs `Name N`".into()));
                }
                let mut counts = Vec::new();
                for pair in toks.chunks(2) {
                    let n = pair[1]
                        .parse::<u64>()
                        .map_err(|_| bad(i, format!("`{}` is not a count", pair[1])))?;
                    counts.push((pair[0].to_string(), n));
                }
                spec.structures.push(Structure { pipeline, counts });
                i = next;
            }
            _ => {
                let shown: String = rest
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(20)
                    .collect();
                return Err(bad(i, format!("unknown test directive `{shown}`; expected input, random input, compiled input, output, error:, or structure")));
            }
        }
    }
    if let Some(at) = compiled {
        return Err(bad(
            at,
            "`compiled` must be followed by `input` or `random input`".into(),
        ));
    }
    Ok(Some(spec))
}

/// The pipeline of a `structure` item, from the text between the word and
/// its `{`: none (empty), a name (`gpu-mem`) or a comma-separated pass list
/// (`simplify, coalesce`), spaces around the commas dropped.
fn pipeline_name(text: &str) -> Result<Option<String>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || p.contains(char::is_whitespace))
    {
        let shown: String = text.chars().take(40).collect();
        return Err(format!(
            "`structure {shown}`: a pipeline is one name (`gpu-mem`) or a comma-separated pass list (`simplify,coalesce`), then `{{ Name N ... }}`"
        ));
    }
    Ok(Some(parts.join(",")))
}

/// The whitespace-separated words of `text` with their offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_whitespace()
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// The most elements a random input may have (10^10: 80 GB of `i64`s is
/// beyond any machine this runs on anyway; the limit only keeps the count
/// in range).
const MAX_RANDOM_ELEMENTS: u128 = 10_000_000_000;

/// A type of `random input`: `[d]...[d]t` with t an element type.
fn random_type(word: &str) -> Result<(Vec<usize>, Prim), String> {
    let mut rest = word;
    let mut shape = Vec::new();
    while let Some(r) = rest.strip_prefix('[') {
        let (dim, r) = r
            .split_once(']')
            .ok_or_else(|| format!("`{word}`: a `[` without its `]`"))?;
        let d = dim
            .parse::<usize>()
            .map_err(|_| format!("`{word}`: `{dim}` is not a dimension (a natural number)"))?;
        shape.push(d);
        rest = r;
    }
    let p = Prim::from_name(rest).ok_or_else(|| {
        format!(
            "`{word}` is not a type such as `[100]f32` (element types: bool, i32, i64, f32, f64)"
        )
    })?;
    let n = shape
        .iter()
        .try_fold(1u128, |n, &d| n.checked_mul(d as u128))
        .unwrap_or(u128::MAX);
    if n > MAX_RANDOM_ELEMENTS {
        return Err(format!("`{word}` has too many elements"));
    }
    Ok((shape, p))
}

/// The text between `{` (after optional spaces at `from`) and the next `}`,
/// and the offset after it.
fn braced(block: &str, from: usize) -> Option<(&str, usize)> {
    let rest = block.get(from..)?;
    let open = from + rest.find(|c: char| !c.is_whitespace())?;
    if !block[open..].starts_with('{') {
        return None;
    }
    let close = open + block[open..].find('}')?;
    Some((&block[open + 1..close], close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cases_and_structures() {
        let t = "-- Doubles.\n-- ==\n-- input { 3 [1, 2,\n--   3] }\n-- output { [2i64, 4i64, 6i64] }\n-- input { 2 [1, 2] }\n-- error: out of bounds\n-- structure gpu-mem { Alloc 1 kernel 2 }\ndef main = in (x)\n-- input { 9 }\n";
        let s = parse(t).unwrap().unwrap();
        assert_eq!(s.description, "Doubles.");
        assert_eq!(s.cases.len(), 2);
        assert_eq!(s.cases[0].input, "3 [1, 2,\n   3]");
        assert_eq!(
            s.cases[0].expect,
            Expect::Output("[2i64, 4i64, 6i64]".into())
        );
        assert_eq!(s.cases[1].expect, Expect::Error("out of bounds".into()));
        assert_eq!(
            s.structures,
            vec![Structure {
                pipeline: Some("gpu-mem".into()),
                counts: vec![("Alloc".into(), 1), ("kernel".into(), 2)]
            }]
        );
        assert_eq!(s.compile_error, None);
    }

    #[test]
    fn compiled_marks_benchmark_datasets() {
        let t = "-- ==\n-- input { 2 }\n-- output { 4i64 }\n-- compiled input @ big.in\n-- compiled random input { [1024][1024]f32 }\n-- random input { [3]f32 }\ndef main = in (x)\n";
        let s = parse(t).unwrap().unwrap();
        let c: Vec<bool> = s.cases.iter().map(|c| c.compiled).collect();
        assert_eq!(c, [false, true, true, false]);
        assert_eq!(s.cases[1].from, InputFrom::File("big.in".into()));
        let s = parse("-- ==\n-- random input { 1024i64 -3 [1024]f32 true }\n")
            .unwrap()
            .unwrap();
        assert_eq!(
            s.cases[0].from,
            InputFrom::Random(vec![
                RandomItem::Literal("1024i64".into()),
                RandomItem::Literal("-3".into()),
                RandomItem::Random(vec![1024], Prim::F32),
                RandomItem::Literal("true".into()),
            ])
        );
        for bad in [
            "-- ==\n-- compiled output { 1 }\n",
            "-- ==\n-- input { 1 }\n-- compiled\n",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(
                e.message.contains("`compiled` must be followed"),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn compile_error_and_no_block() {
        let s = parse("-- ==\n-- error: unbound variable `x`\ndef main = in (x)\n")
            .unwrap()
            .unwrap();
        assert_eq!(s.compile_error.as_deref(), Some("unbound variable `x`"));
        assert_eq!(
            parse("-- just a comment\ndef main = in (x)\n").unwrap(),
            None
        );
    }

    #[test]
    fn malformed_blocks_are_errors_with_positions() {
        let e = parse("-- ==\n-- output { 1 }\n").unwrap_err();
        assert!(e.message.contains("must follow an `input`"));
        assert_eq!(e.span.start, 9);
        assert!(parse("-- ==\n-- input 1\n").is_err());
        assert!(parse("-- ==\n-- frobnicate\n").is_err());
        assert!(parse("-- ==\n-- error: (\n").is_err());
        assert!(parse("-- ==\n-- structure { Alloc x }\n").is_err());
        let e = parse("-- ==\n-- structure gpu mem { Alloc 1 }\n").unwrap_err();
        assert!(
            e.message.contains("comma-separated pass list"),
            "{}",
            e.message
        );
        assert!(parse("-- ==\n-- structure simplify,,coalesce { Alloc 1 }\n").is_err());
        assert!(parse("-- ==\n-- structure simplify, { Alloc 1 }\n").is_err());
        // The pipeline is on the word's line: the next item is not taken
        // for one.
        let e = parse("-- ==\n-- structure\n-- input { 1 2 }\n").unwrap_err();
        assert!(
            e.message.contains("needs a `{ Name N ... }` block"),
            "{}",
            e.message
        );
    }

    #[test]
    fn structure_pipelines_may_be_pass_lists() {
        let s = parse("-- ==\n-- structure simplify,coalesce { Alloc 1 }\n-- structure simplify , hoist-allocs\n--   { copy 0 }\n-- structure {kernel 1}\n-- structure gpu-mem\n--   { Alloc 1 }\n")
            .unwrap()
            .unwrap();
        let pipes: Vec<Option<&str>> = s.structures.iter().map(|s| s.pipeline.as_deref()).collect();
        assert_eq!(
            pipes,
            [
                Some("simplify,coalesce"),
                Some("simplify,hoist-allocs"),
                None,
                Some("gpu-mem")
            ]
        );
        assert_eq!(s.structures[1].counts, [("copy".to_string(), 0)]);
    }

    #[test]
    fn files_and_random_inputs() {
        let t = "-- ==\n-- input @ data/a.in\n-- output @ a.out\n-- random input { [100]i64\n--   [2][3]f32 bool }\n-- input @ b.bin\n-- error: bounds\n-- input { 1 } output @ c.out\n";
        let s = parse(t).unwrap().unwrap();
        assert_eq!(s.cases.len(), 4);
        assert_eq!(s.cases[0].from, InputFrom::File("data/a.in".into()));
        assert_eq!(s.cases[0].expect, Expect::OutputFile("a.out".into()));
        assert_eq!(
            s.cases[1].from,
            InputFrom::Random(vec![
                RandomItem::Random(vec![100], Prim::I64),
                RandomItem::Random(vec![2, 3], Prim::F32),
                RandomItem::Random(vec![], Prim::Bool)
            ])
        );
        assert_eq!(s.cases[1].expect, Expect::Success);
        assert_eq!(s.cases[2].expect, Expect::Error("bounds".into()));
        assert_eq!(s.cases[3].from, InputFrom::Inline);
        assert_eq!(s.cases[3].expect, Expect::OutputFile("c.out".into()));
        // Errors, positioned.
        let e = parse("-- ==\n-- random input { [10]u8 }\n").unwrap_err();
        assert!(
            e.message.contains("`[10]u8` is not a type"),
            "{}",
            e.message
        );
        assert_eq!(e.span.start, 24);
        let e = parse("-- ==\n-- random input { [9999999999][9]i64 }\n").unwrap_err();
        assert!(e.message.contains("too many elements"));
        assert!(parse("-- ==\n-- random input { [x]i64 }\n").is_err());
        assert!(parse("-- ==\n-- random { i64 }\n").is_err());
        let e = parse("-- ==\n-- random input { i64 }\n-- output { 1 }\n").unwrap_err();
        assert!(e.message.contains("a `random input` has none"));
        assert!(parse("-- ==\n-- input @\n").is_err());
        assert!(parse("-- ==\n-- input @ a b\n").is_err());
    }
}
