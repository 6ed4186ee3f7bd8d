//! Parsing FUN, FUNMEM and IMP source text (DESIGN.md §4).
//!
//! The grammar is `grammar.lalrpop` (LR(1), so the parser itself never
//! recurses). Trees deeper than [`NESTING_LIMIT`] are refused while they are
//! built, so that printers, checkers and interpreters, which do recurse,
//! cannot overflow the stack on any input.

use crate::ast::{Lang, Program, SExp};
use crate::diag::{Diagnostic, Phase};
use crate::imp;
use crate::span::Span;
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_qualifications, missing_docs)]
    grammar
);

/// The deepest nesting of expressions, bodies and statements accepted.
pub const NESTING_LIMIT: usize = 200;

/// An error raised by a grammar action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

impl SyntaxError {
    /// An error at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            span,
            message: message.into(),
        }
    }

    /// The error for a tree nested deeper than [`NESTING_LIMIT`].
    pub fn too_deep(span: Span) -> SyntaxError {
        SyntaxError::new(
            span,
            format!("nested more than {NESTING_LIMIT} levels deep"),
        )
    }
}

/// Refuses a scalar expression nested deeper than [`NESTING_LIMIT`].
pub fn check_depth(
    e: SExp,
) -> Result<SExp, ParseError<usize, lalrpop_util::lexer::Token<'static>, SyntaxError>> {
    match e.depth_within(NESTING_LIMIT) {
        Some(_) => Ok(e),
        None => Err(ParseError::User {
            error: SyntaxError::too_deep(e.span()),
        }),
    }
}

/// Which language a file is in, from its extension (`.fun`, `.funmem`, `.imp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    /// `.fun`
    Fun,
    /// `.funmem`
    FunMem,
    /// `.imp`
    Imp,
}

impl Layer {
    /// The layer a file name's extension selects.
    pub fn from_path(path: &str) -> Option<Layer> {
        let ext = std::path::Path::new(path).extension()?.to_str()?;
        match ext {
            "fun" => Some(Layer::Fun),
            "funmem" => Some(Layer::FunMem),
            "imp" => Some(Layer::Imp),
            _ => None,
        }
    }

    /// The language's name as the paper writes it.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Fun => "FUN",
            Layer::FunMem => "FUNMEM",
            Layer::Imp => "IMP",
        }
    }
}

/// A parsed program of any layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnyProgram {
    /// FUN or FUNMEM.
    Fun(Program),
    /// IMP.
    Imp(imp::Program),
}

/// Parses a FUN (`lang = Fun`) or FUNMEM program.
pub fn parse_program(text: &str, lang: Lang) -> Result<Program, Diagnostic> {
    grammar::FunProgramParser::new()
        .parse(lang, text)
        .map_err(|e| convert(text, e))
}

/// Parses an IMP program.
pub fn parse_imp(text: &str) -> Result<imp::Program, Diagnostic> {
    grammar::ImpProgramParser::new()
        .parse(Lang::Fun, text)
        .map_err(|e| convert(text, e))
}

/// Parses a program of the given layer.
pub fn parse_layer(text: &str, layer: Layer) -> Result<AnyProgram, Diagnostic> {
    match layer {
        Layer::Fun => parse_program(text, Lang::Fun).map(AnyProgram::Fun),
        Layer::FunMem => parse_program(text, Lang::FunMem).map(AnyProgram::Fun),
        Layer::Imp => parse_imp(text).map(AnyProgram::Imp),
    }
}

fn convert<T: std::fmt::Display>(text: &str, e: ParseError<usize, T, SyntaxError>) -> Diagnostic {
    let d = |span: Span, msg: String| Diagnostic::new(Phase::Syntax, span, msg);
    match e {
        ParseError::InvalidToken { location } => {
            let ch = text.get(location..).and_then(|s| s.chars().next());
            let len = ch.map_or(0, char::len_utf8);
            let what = ch.map_or_else(
                || "end of input".to_string(),
                |c| format!("character {c:?}"),
            );
            d(
                Span::new(location, location + len),
                format!("unexpected {what}"),
            )
        }
        ParseError::UnrecognizedEof { location, expected } => d(
            Span::new(location, location),
            format!("unexpected end of input; {}", expected_list(&expected)),
        ),
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => d(
            Span::new(l, r),
            format!("unexpected `{tok}`; {}", expected_list(&expected)),
        ),
        ParseError::ExtraToken { token: (l, tok, r) } => d(
            Span::new(l, r),
            format!("unexpected `{tok}` after the end of the program"),
        ),
        ParseError::User { error } => d(error.span, error.message),
    }
}

/// Turns lalrpop's terminal names into words: `"let"` into `let`, the name
/// and literal regexes into "a name" and "an integer".
fn expected_list(expected: &[String]) -> String {
    let mut words: Vec<String> = expected
        .iter()
        .map(|t| {
            if t.starts_with("r#") {
                if t.contains("0-9]+") && !t.contains("A-Z") {
                    "an integer".to_string()
                } else {
                    "a name".to_string()
                }
            } else {
                format!("`{}`", t.trim_matches('"'))
            }
        })
        .collect();
    words.dedup();
    match words.len() {
        0 => "nothing can follow here".to_string(),
        1 => format!("expected {}", words[0]),
        _ => {
            let last = words.pop().unwrap_or_default();
            format!("expected {} or {}", words.join(", "), last)
        }
    }
}
