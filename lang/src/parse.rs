//! Parsing FUN, FUNMEM and IMP source text (docs/language.md, Syntax).
//!
//! The grammar is `grammar.lalrpop` (LR(1), so the parser itself never
//! recurses). Trees deeper than [`NESTING_LIMIT`] are refused while they are
//! built, so that printers, checkers and interpreters, which do recurse,
//! cannot overflow the stack on any input.

use crate::ast::{Atom, BinOp, ExpKind, Ident, Lang, Program, SExp};
use crate::diag::{Diagnostic, Phase};
use crate::imp;
use crate::span::Span;
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_qualifications, missing_docs)]
    pub(crate) grammar
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

    /// The error for an integer literal outside the 64-bit range.
    pub fn literal_too_large(span: Span) -> SyntaxError {
        SyntaxError::new(
            span,
            "integer literal does not fit in 64 bits (-9223372036854775808 .. 9223372036854775807)",
        )
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

thread_local! {
    // Building a parser compiles its lexer's regular expressions, which
    // cost more than parsing a small program: the fuzzer parses every
    // stage back, so each thread keeps one parser of each kind.
    static FUN_PARSER: grammar::FunProgramParser = grammar::FunProgramParser::new();
    static IMP_PARSER: grammar::ImpProgramParser = grammar::ImpProgramParser::new();
}

/// Parses a FUN (`lang = Fun`) or FUNMEM program into the typed core:
/// literals get their types from their context ([`crate::elab`]).
pub fn parse_program(text: &str, lang: Lang) -> Result<Program, Diagnostic> {
    let (mut p, holes) = parse_surface(text, lang)?;
    crate::elab::program_with_holes(&mut p, Some(text), holes);
    Ok(p)
}

/// Parses a FUN or FUNMEM program as written, without elaboration (for
/// tests of the printer, whose trees need not be well typed). Scalar
/// expressions in atom positions are still bound by `let`s (that needs
/// elaboration), so such a program comes back elaborated.
pub fn parse_program_raw(text: &str, lang: Lang) -> Result<Program, Diagnostic> {
    let (mut p, holes) = parse_surface(text, lang)?;
    if !holes.is_empty() {
        crate::elab::program_with_holes(&mut p, Some(text), holes);
    }
    Ok(p)
}

/// The tree as parsed, with its holes.
fn parse_surface(text: &str, lang: Lang) -> Result<(Program, Vec<Hole>), Diagnostic> {
    let mut min = Vec::new();
    let mut holes = Vec::new();
    let p = FUN_PARSER
        .with(|parser| parser.parse(lang, &mut min, &mut holes, text))
        .map_err(|e| convert(text, e))?;
    refuse_unclaimed(&min)?;
    Ok((p, holes))
}

/// The prefix of the names that stand for holes: scalar expressions
/// written where the core has an atom. No program can write a name with it.
pub const HOLE: char = '#';

/// What a hole stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hole {
    /// A scalar expression written where the core has an atom or a name.
    Exp(SExp),
    /// An index `x[i, ...]` written inside a scalar expression.
    Index(Ident, Vec<Atom>, Span),
}

/// `e` as an atom: itself if it is one, else a hole `#k` for it.
pub(crate) fn hole(holes: &mut Vec<Hole>, e: SExp) -> Atom {
    match e {
        SExp::Atom(a) => a,
        e => Atom::Var(hole_ident(holes, e)),
    }
}

/// A hole for `e`.
pub(crate) fn hole_ident(holes: &mut Vec<Hole>, e: SExp) -> Ident {
    let span = e.span();
    new_hole(holes, Hole::Exp(e), span)
}

/// A hole for the index `x[idx]` at `span`, as a scalar expression.
pub(crate) fn hole_index(holes: &mut Vec<Hole>, x: Ident, idx: Vec<Atom>, span: Span) -> SExp {
    SExp::Atom(Atom::Var(new_hole(holes, Hole::Index(x, idx, span), span)))
}

fn new_hole(holes: &mut Vec<Hole>, h: Hole, span: Span) -> Ident {
    holes.push(h);
    Ident {
        name: crate::Name::new(&format!("{HOLE}{}", holes.len() - 1)),
        span,
    }
}

/// The statement form of `e`: an index when e is just the index hole made
/// last (`let (y: f32) = xs[i]`), a scalar expression otherwise.
pub(crate) fn exp_of_sexp(holes: &mut Vec<Hole>, e: SExp) -> ExpKind {
    if let SExp::Atom(Atom::Var(x)) = &e {
        let last = format!("{HOLE}{}", holes.len().wrapping_sub(1));
        if x.name.as_str() == last {
            if let Some(Hole::Index(..)) = holes.last() {
                if let Some(Hole::Index(a, idx, _)) = holes.pop() {
                    return ExpKind::Index(a, idx);
                }
            }
        }
    }
    ExpKind::Scalar(e)
}

/// A literal 2^63 is only an i64 with a minus sign in front.
pub(crate) fn refuse_unclaimed(min: &[(usize, usize)]) -> Result<(), Diagnostic> {
    match min.first() {
        Some(&(l, r)) => {
            let e = SyntaxError::literal_too_large(Span::new(l, r));
            Err(Diagnostic::new(Phase::Syntax, e.span, e.message))
        }
        None => Ok(()),
    }
}

/// Parses an IMP program (elaborated, as [`parse_program`]).
pub fn parse_imp(text: &str) -> Result<imp::Program, Diagnostic> {
    let mut p = parse_imp_raw(text)?;
    crate::elab::imp_program(&mut p, Some(text));
    Ok(p)
}

/// Parses an IMP program as written.
pub fn parse_imp_raw(text: &str) -> Result<imp::Program, Diagnostic> {
    let mut min = Vec::new();
    let p = IMP_PARSER
        .with(|parser| parser.parse(Lang::Fun, &mut min, &mut Vec::new(), text))
        .map_err(|e| convert(text, e))?;
    refuse_unclaimed(&min)?;
    Ok(p)
}

/// Parses a program of the given layer.
pub fn parse_layer(text: &str, layer: Layer) -> Result<AnyProgram, Diagnostic> {
    match layer {
        Layer::Fun => parse_program(text, Lang::Fun).map(AnyProgram::Fun),
        Layer::FunMem => parse_program(text, Lang::FunMem).map(AnyProgram::Fun),
        Layer::Imp => parse_imp(text).map(AnyProgram::Imp),
    }
}

pub(crate) fn convert<T: std::fmt::Display>(
    text: &str,
    e: ParseError<usize, T, SyntaxError>,
) -> Diagnostic {
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
        } => {
            let text = tok.to_string();
            let only_name = expected.iter().all(|t| t.contains("A-Za-z"));
            let list = expected_list(&expected);
            match keyword_role(&text) {
                Some(role) if only_name => d(
                    Span::new(l, r),
                    format!("`{text}` is a keyword ({role}) and cannot be used as a name; {list}"),
                ),
                Some(role) => d(
                    Span::new(l, r),
                    format!("unexpected `{text}` (a keyword: {role}); {list}"),
                ),
                None => d(Span::new(l, r), format!("unexpected `{text}`; {list}")),
            }
        }
        ParseError::ExtraToken { token: (l, tok, r) } => d(
            Span::new(l, r),
            format!("unexpected `{tok}` after the end of the program"),
        ),
        ParseError::User { error } => d(error.span, error.message),
    }
}

/// Whether `w` is a reserved word, which no program may use as a name
/// (tools that make up names must avoid these: `i32` is one).
pub fn is_keyword(w: &str) -> bool {
    keyword_role(w).is_some()
}

/// What a reserved word is for, if `w` is one (the tokens of every layer
/// are reserved in every layer).
fn keyword_role(w: &str) -> Option<&'static str> {
    Some(match w {
        "def" | "main" => "it starts a program: `def main ...`",
        "let" | "in" => "it binds names: `let (x: t) = e ... in (x)`",
        "if" | "then" | "else" | "fi" => "a conditional",
        "kernel" | "do" | "done" => "a parallel kernel or a loop body",
        "loop" | "for" | "while" => "a sequential loop",
        "with" => "an in-place update: `x with [i] = v`",
        "concat" | "replicate" | "iota" | "copy" | "transpose" => "an array construct",
        "reduce" | "scan" | "yield" | "into" => "a reduction",
        "alloc" | "mem" => "FUNMEM's memory blocks",
        "int" | "i32" | "i64" | "f32" | "f64" | "bool" => "an element type",
        "true" | "false" => "a bool literal",
        "min" | "max" | "sqrt" | "exp" | "log" | "abs" | "floor" => "a scalar function",
        "var" | "skip" | "assert" => "an IMP statement",
        "out" => "it ends an IMP program with its results: `out (...)`",
        _ => return None,
    })
}

/// Turns lalrpop's terminal names into words: `"let"` into `let`, the name
/// and literal regexes into "a name" and "a number".
fn expected_list(expected: &[String]) -> String {
    let mut words: Vec<String> = Vec::new();
    for t in expected {
        let w = if t.starts_with("r#") {
            if t.contains("A-Za-z") {
                "a name".to_string()
            } else {
                "a number".to_string()
            }
        } else {
            format!("`{}`", t.trim_matches('"'))
        };
        if !words.contains(&w) {
            words.push(w);
        }
    }
    // A list naming every binary operator says "an operator" instead.
    let operators: Vec<String> = BinOp::ALL
        .iter()
        .filter(|op| !matches!(op, BinOp::Min | BinOp::Max))
        .map(|op| format!("`{}`", op.symbol()))
        .collect();
    if operators.iter().all(|op| words.contains(op)) {
        words.retain(|w| !operators.contains(w));
        words.insert(0, "an operator".to_string());
    }
    match words.len() {
        0 => "nothing can follow here".to_string(),
        1 => format!("expected {}", words[0]),
        _ => {
            let last = words.pop().unwrap_or_default();
            format!("expected {} or {}", words.join(", "), last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Atom, BinOp, ExpKind, SExp, Type, UnOp};
    use crate::print;

    fn scalar(src: &str) -> SExp {
        let p = parse_program_raw(
            &format!("def main (a: int) (b: int) = let (x: int) = {src} in (x)"),
            Lang::Fun,
        )
        .unwrap_or_else(|d| panic!("{src}: {d}"));
        match &p.body.stms[0].exp.kind {
            ExpKind::Scalar(e) => e.clone(),
            k => panic!("not a scalar expression: {k:?}"),
        }
    }

    #[test]
    fn c_precedence_and_left_associativity() {
        assert_eq!(print::sexp_string(&scalar("a - b - 1")), "a - b - 1");
        assert_eq!(
            scalar("a - (b - 1)"),
            SExp::bin(BinOp::Sub, scalar("a"), scalar("b - 1"))
        );
        assert_eq!(
            scalar("1 + 2 * 3"),
            SExp::bin(BinOp::Add, SExp::int(1), scalar("2 * 3"))
        );
        assert_eq!(
            scalar("a < b == b < a && 1 || 0"),
            scalar("(((a < b) == (b < a)) && 1) || 0")
        );
        assert_eq!(
            scalar("-a * b"),
            SExp::bin(
                BinOp::Mul,
                SExp::Un(UnOp::Neg, Box::new(scalar("a")), Span::DUMMY),
                scalar("b")
            )
        );
        assert_eq!(scalar("!a == 0"), scalar("(!a) == 0"));
    }

    #[test]
    fn negative_literals_are_literals() {
        assert_eq!(scalar("-5"), SExp::int(-5));
        assert_eq!(
            scalar("a - -5"),
            SExp::bin(BinOp::Sub, scalar("a"), SExp::int(-5))
        );
        assert_eq!(
            scalar("a < -1"),
            SExp::bin(BinOp::Lt, scalar("a"), SExp::int(-1))
        );
        // One lexer serves every layer, so `<-` is one token in FUN too.
        let e =
            parse_program("def main (a: int) = let (x: int) = a<-1 in (x)", Lang::Fun).unwrap_err();
        assert!(e.message.starts_with("unexpected `<-`"), "{}", e.message);
        assert!(parse_program(
            "def main = let (x: int) = 9223372036854775808 in (x)",
            Lang::Fun
        )
        .is_err());
    }

    #[test]
    fn comments_run_to_end_of_line() {
        assert_eq!(scalar("a --b\n + 1"), scalar("a + 1"));
    }

    #[test]
    fn a_keyword_as_a_name_says_it_is_a_keyword() {
        let e = parse_program("def main (out: int) = in (out)", Lang::Fun).unwrap_err();
        assert!(e.message.contains("`out` is a keyword"), "{}", e.message);
        let e = parse_program(
            "def main (n: int) = let (scan: int) = n in (scan)",
            Lang::Fun,
        )
        .unwrap_err();
        assert!(
            e.message.contains("`scan` is a keyword (a reduction)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn design_type_samples_parse_and_print_back() {
        for ty in [
            "[x][y]int @ m -> R(x, y)",
            "[n]int @ m -> 0 + {(n : 1)}",
            "[x][y]int @ m -> o * 2 + 1 + {(x : y) (y : 1)}",
            "[n]int @ m -> (a < b) + {(n : -1)}",
        ] {
            let src = format!("def main (p: {ty}) = in (p)");
            let p = parse_program_raw(&src, Lang::FunMem).unwrap_or_else(|d| panic!("{ty}: {d}"));
            assert_eq!(p.params[0].ty.to_string(), ty);
            assert!(matches!(p.params[0].ty, Type::Array(..)));
        }
    }

    #[test]
    fn memory_syntax_is_per_language() {
        let m = "def main (m: mem) = in (m)";
        assert!(parse_program(m, Lang::FunMem).is_ok());
        let e = parse_program(m, Lang::Fun).unwrap_err();
        assert!(e.message.contains("belongs to FUNMEM"), "{}", e.message);
        let a = "def main (n: int) (xs: [n]int) = in (xs)";
        assert!(parse_program(a, Lang::Fun).is_ok());
        let e = parse_program(a, Lang::FunMem).unwrap_err();
        assert!(e.message.contains("needs its memory"), "{}", e.message);
        let e = parse_program(
            "def main (n: int) = let (m: int) = alloc n in (m)",
            Lang::Fun,
        )
        .unwrap_err();
        assert!(e.message.contains("`alloc` belongs to FUNMEM"));
        let e = parse_program(
            "def main (m: mem) (n: int) (xs: [n]int @ m -> Q(n)) = in (n)",
            Lang::FunMem,
        )
        .unwrap_err();
        assert!(
            e.message.contains("unknown index function `Q`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn errors_name_what_was_expected() {
        let e = parse_program("def main (n: int) = let (x: int) = n", Lang::Fun).unwrap_err();
        assert!(
            e.message.starts_with("unexpected end of input; expected"),
            "{}",
            e.message
        );
        assert!(e.message.contains("`in`"), "{}", e.message);
        let e = parse_imp("def main = skip; out (x)").unwrap_err();
        assert!(e.message.contains("unexpected `out`"), "{}", e.message);
        let e = parse_program("def main # = in (x)", Lang::Fun).unwrap_err();
        assert_eq!(e.message, "unexpected character '#'");
        assert_eq!(e.span, Span::new(9, 10));
        assert_eq!((e.span.start, e.span.end), (9, 10));
    }

    #[test]
    fn imp_statements() {
        let p = parse_imp_raw("def main (n: int) =\n var x: int;\n x <- n < -1;\n kernel i < n < 3 do skip done\nout (x)").unwrap();
        assert_eq!(p.body.len(), 3);
        assert!(matches!(
            &p.body[2].kind,
            crate::imp::StmtKind::Kernel(_, SExp::Bin(BinOp::Lt, ..), _)
        ));
        let atom = Atom::Int(3, Span::DUMMY);
        assert_eq!(atom.to_string(), "3");
    }
}
