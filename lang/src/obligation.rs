//! Proof obligations: claims about symbolic index functions, the facts they
//! may assume, and the outcomes of trying to prove them (see
//! docs/obligations.md).
//!
//! Every name in an obligation is an integer variable. An obligation holds
//! when its claim is true for every integer valuation that makes every fact
//! non-zero; arithmetic is over the mathematical integers. This module
//! states obligations, prints them in the file syntax of `funmem prove`
//! (so that a printed obligation parses back) and reads that syntax. The
//! provers live in funmem-oracle.

use crate::ast::SExp;
use crate::diag::{Diagnostic, Phase};
use crate::lmad::Lmad;
use crate::print::sexp_string;
use crate::span::Span;
use std::collections::BTreeMap;
use std::fmt;

/// What an obligation claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// No address lies in the images of both LMADs.
    Disjoint(Lmad<SExp>, Lmad<SExp>),
    /// Distinct indices of the LMAD's domain have distinct addresses.
    Injective(Lmad<SExp>),
    /// Every address of the LMAD's image lies in `[0, size)`.
    InBounds(Lmad<SExp>, SExp),
    /// `lhs <= rhs`.
    AtMost(SExp, SExp),
}

impl Claim {
    /// The claim's keyword in the file syntax.
    pub fn kind(&self) -> &'static str {
        match self {
            Claim::Disjoint(..) => "disjoint",
            Claim::Injective(..) => "injective",
            Claim::InBounds(..) => "in-bounds",
            Claim::AtMost(..) => "at-most",
        }
    }

    /// The LMADs the claim is about, in order.
    pub fn lmads(&self) -> Vec<&Lmad<SExp>> {
        match self {
            Claim::Disjoint(a, b) => vec![a, b],
            Claim::Injective(a) | Claim::InBounds(a, _) => vec![a],
            Claim::AtMost(..) => Vec::new(),
        }
    }

    /// Calls `f` on every scalar expression in the claim.
    pub fn for_each_sexp<'a>(&'a self, f: &mut impl FnMut(&'a SExp)) {
        let lmad = |l: &'a Lmad<SExp>, f: &mut dyn FnMut(&'a SExp)| {
            f(&l.offset);
            for d in &l.dims {
                f(&d.elems);
                f(&d.stride);
            }
        };
        match self {
            Claim::Disjoint(a, b) => {
                lmad(a, f);
                lmad(b, f);
            }
            Claim::Injective(a) => lmad(a, f),
            Claim::InBounds(a, n) => {
                lmad(a, f);
                f(n);
            }
            Claim::AtMost(a, b) => {
                f(a);
                f(b);
            }
        }
    }
}

/// A fact an obligation may assume: a scalar expression that is non-zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// The condition.
    pub exp: SExp,
    /// Where it comes from: "size", "kernel bound", "branch condition", ...
    pub origin: String,
    /// The program position that gives it.
    pub span: Span,
}

impl Fact {
    /// A fact with its origin, positioned at the expression.
    pub fn new(exp: SExp, origin: impl Into<String>) -> Fact {
        let span = exp.span();
        Fact {
            exp,
            origin: origin.into(),
            span,
        }
    }
}

/// What the test suite expects of an obligation (`expect ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Expect {
    /// It must be proved.
    Proved,
    /// It must be refuted.
    Refuted,
    /// No prover is expected to decide it.
    Unknown,
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expect::Proved => "proved",
            Expect::Refuted => "refuted",
            Expect::Unknown => "unknown",
        })
    }
}

/// A claim in the context of the facts known where it arises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obligation {
    /// A name: the obligation's name in a file, or what a pass needs it for.
    pub name: String,
    /// The pass that needs it, or "file" for one read from a file.
    pub origin: String,
    /// What must hold.
    pub claim: Claim,
    /// What may be assumed.
    pub facts: Vec<Fact>,
    /// The position that gave rise to it.
    pub span: Span,
    /// What the suite expects (files only).
    pub expect: Option<Expect>,
}

impl Obligation {
    /// An obligation of pass `origin` at `span`.
    pub fn new(
        origin: impl Into<String>,
        name: impl Into<String>,
        claim: Claim,
        facts: Vec<Fact>,
        span: Span,
    ) -> Obligation {
        Obligation {
            name: name.into(),
            origin: origin.into(),
            claim,
            facts,
            span,
            expect: None,
        }
    }

    /// Every variable of the claim and the facts, sorted.
    pub fn vars(&self) -> Vec<String> {
        let mut vs = std::collections::BTreeSet::new();
        let mut add = |e: &SExp| {
            e.for_each_var(&mut |x| {
                vs.insert(x.name.as_str().to_string());
            })
        };
        self.claim.for_each_sexp(&mut add);
        for f in &self.facts {
            add(&f.exp);
        }
        vs.into_iter().collect()
    }
}

/// A valuation that breaks a claim, with the indices where it breaks.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Counterexample {
    /// A value for every variable of the obligation.
    pub values: BTreeMap<String, i64>,
    /// The offending indices: of both LMADs for `disjoint`, the two distinct
    /// indices for `injective`, the one index for `in-bounds`; empty for
    /// `at-most`.
    pub indices: Vec<Vec<i64>>,
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vals: Vec<String> = self
            .values
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        f.write_str(&vals.join(", "))?;
        if !self.indices.is_empty() {
            let idx: Vec<String> = self
                .indices
                .iter()
                .map(|i| {
                    let s: Vec<String> = i.iter().map(i64::to_string).collect();
                    format!("[{}]", s.join(", "))
                })
                .collect();
            if !self.values.is_empty() {
                f.write_str("; ")?;
            }
            write!(f, "at {}", idx.join(" and "))?;
        }
        Ok(())
    }
}

/// The result of trying to prove an obligation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It holds for every valuation.
    Proved,
    /// It fails for this (checked) valuation.
    Refuted(Counterexample),
    /// Undecided; the reason says which provers gave up and why.
    Unknown(String),
}

impl Outcome {
    /// `proved`, `refuted` or `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Proved => "proved",
            Outcome::Refuted(_) => "refuted",
            Outcome::Unknown(_) => "unknown",
        }
    }

    /// Whether it matches an expectation.
    pub fn meets(&self, e: Expect) -> bool {
        matches!(
            (self, e),
            (Outcome::Proved, Expect::Proved)
                | (Outcome::Refuted(_), Expect::Refuted)
                | (Outcome::Unknown(_), Expect::Unknown)
        )
    }
}

/// An outcome, the prover that reached it and the time it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Proved, refuted or unknown.
    pub outcome: Outcome,
    /// `lmad`, `search`, `z3`, or `none` when all gave up.
    pub prover: &'static str,
    /// Wall time for all provers tried.
    pub time: std::time::Duration,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} by {} in {:.3} ms",
            self.outcome.word(),
            self.prover,
            self.time.as_secs_f64() * 1e3
        )?;
        match &self.outcome {
            Outcome::Refuted(c) => write!(f, ": {c}"),
            Outcome::Unknown(why) => write!(f, ": {why}"),
            Outcome::Proved => Ok(()),
        }
    }
}

/// Something that decides obligations.
pub trait Prover {
    /// Tries to prove `o`.
    fn prove(&self, o: &Obligation) -> Verdict;
}

/// An LMAD in the file syntax: `o + {(n : s) ...}`.
pub fn lmad_string(l: &Lmad<SExp>) -> String {
    let dims: Vec<String> = l
        .dims
        .iter()
        .map(|d| format!("({} : {})", sexp_string(&d.elems), sexp_string(&d.stride)))
        .collect();
    format!("{} + {{{}}}", sexp_string(&l.offset), dims.join(" "))
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::Disjoint(a, b) => {
                write!(f, "disjoint {} and {}", lmad_string(a), lmad_string(b))
            }
            Claim::Injective(a) => write!(f, "injective {}", lmad_string(a)),
            Claim::InBounds(a, n) => {
                write!(f, "in-bounds {} within {}", lmad_string(a), sexp_string(n))
            }
            Claim::AtMost(a, b) => {
                write!(f, "at-most {} <= {}", paren_rel(a), paren_rel(b))
            }
        }
    }
}

/// An operand of `<=` printed so that it parses back as one operand.
fn paren_rel(e: &SExp) -> String {
    use crate::ast::BinOp::*;
    match e {
        SExp::Bin(Lt | Le | Gt | Ge | Eq | Ne | And | Or, ..) => format!("({})", sexp_string(e)),
        _ => sexp_string(e),
    }
}

impl fmt::Display for Obligation {
    /// The file syntax: parses back to an equal obligation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "obligation {}", self.name)?;
        if let Some(e) = self.expect {
            writeln!(f, "  expect {e}")?;
        }
        if !self.facts.is_empty() {
            let facts: Vec<String> = self.facts.iter().map(|x| sexp_string(&x.exp)).collect();
            writeln!(f, "  given {}", facts.join(", "))?;
        }
        write!(f, "  {}", self.claim)
    }
}

const ITEMS: &[&str] = &[
    "given",
    "expect",
    "disjoint",
    "injective",
    "in-bounds",
    "at-most",
];

/// The first word of a line (letters, digits, `-`, `_`), if the line is not
/// blank or a comment.
fn first_word(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with("--") {
        return None;
    }
    let end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        .unwrap_or(t.len());
    Some(&t[..end])
}

/// Parses `text[b0..b1]` with one of the grammar's obligation entry points,
/// keeping positions relative to the whole file: the text before `b0` is
/// blanked out rather than cut off.
macro_rules! parse_at {
    ($parser:ident, $text:expr, $b0:expr, $b1:expr) => {{
        let mut padded = " ".repeat($b0);
        padded.push_str(&$text[$b0..$b1]);
        let mut min = Vec::new();
        match crate::parse::grammar::$parser::new().parse(
            crate::ast::Lang::Fun,
            &mut min,
            &mut Vec::new(),
            &padded,
        ) {
            Ok(v) => {
                crate::parse::refuse_unclaimed(&min)?;
                v
            }
            Err(e) => return Err(crate::parse::convert(&padded, e)),
        }
    }};
}

/// An obligation being read.
struct Open {
    name: String,
    span: Span,
    facts: Vec<Fact>,
    expect: Option<Expect>,
    claim: Option<Claim>,
}

/// Reads an obligation file (docs/obligations.md). Every obligation's
/// origin is `file`.
pub fn parse_obligations(text: &str) -> Result<Vec<Obligation>, Diagnostic> {
    // Items: (keyword, keyword span, body start, body end).
    let mut items: Vec<(String, Span, usize, usize)> = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let start = pos;
        pos += line.len();
        let Some(w) = first_word(line) else { continue };
        let ws = start + (line.len() - line.trim_start().len());
        let at_margin = ws == start;
        if at_margin && w != "obligation" {
            return Err(err(
                Span::new(ws, ws + w.len()),
                format!("expected `obligation NAME` at the start of a line, found `{w}`"),
            ));
        }
        if w == "obligation" || ITEMS.contains(&w) {
            if let Some(last) = items.last_mut() {
                last.3 = start;
            }
            items.push((
                w.to_string(),
                Span::new(ws, ws + w.len()),
                ws + w.len(),
                pos,
            ));
        } else if items.is_empty() {
            return Err(err(
                Span::new(ws, ws + w.len()),
                "expected `obligation NAME`".to_string(),
            ));
        }
    }
    if let Some(last) = items.last_mut() {
        last.3 = text.len();
    }
    let mut out: Vec<Obligation> = Vec::new();
    let mut open: Option<Open> = None;
    let close = |o: Option<Open>, out: &mut Vec<Obligation>| -> Result<(), Diagnostic> {
        if let Some(Open {
            name,
            span,
            facts,
            expect,
            claim,
        }) = o
        {
            let Some(claim) = claim else {
                return Err(err(
                    span,
                    format!("obligation `{name}` has no claim (`disjoint`, `injective`, `in-bounds` or `at-most`)"),
                ));
            };
            if out.iter().any(|p| p.name == name) {
                return Err(err(span, format!("a second obligation named `{name}`")));
            }
            out.push(Obligation {
                name,
                origin: "file".to_string(),
                claim,
                facts,
                span,
                expect,
            });
        }
        Ok(())
    };
    for (kw, kspan, b0, b1) in items {
        let body = &text[b0..b1];
        if kw == "obligation" {
            close(open.take(), &mut out)?;
            let name = body.trim();
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
            if !ok {
                return Err(err(
                    Span::new(b0, b1),
                    "an obligation's name is one word of letters, digits, `_`, `-` and `.`"
                        .to_string(),
                ));
            }
            open = Some(Open {
                name: name.to_string(),
                span: kspan,
                facts: Vec::new(),
                expect: None,
                claim: None,
            });
            continue;
        }
        let Some(cur) = open.as_mut() else {
            return Err(err(kspan, "expected `obligation NAME` first".to_string()));
        };
        match kw.as_str() {
            "given" => {
                let facts = parse_at!(ObFactsParser, text, b0, b1);
                cur.facts
                    .extend(facts.into_iter().map(|e| Fact::new(e, "given")));
            }
            "expect" => {
                let e = match body.trim() {
                    "proved" => Expect::Proved,
                    "refuted" => Expect::Refuted,
                    "unknown" => Expect::Unknown,
                    other => {
                        return Err(err(
                            Span::new(b0, b1),
                            format!("expected `proved`, `refuted` or `unknown` after `expect`, found `{other}`"),
                        ))
                    }
                };
                if cur.expect.replace(e).is_some() {
                    return Err(err(kspan, "a second `expect`".to_string()));
                }
            }
            _ => {
                if cur.claim.is_some() {
                    return Err(err(
                        kspan,
                        "an obligation has exactly one claim; this is a second".to_string(),
                    ));
                }
                let claim = match kw.as_str() {
                    "disjoint" => {
                        let (a, b) = parse_at!(ObLmadPairParser, text, b0, b1);
                        Claim::Disjoint(a, b)
                    }
                    "injective" => {
                        let a = parse_at!(ObLmadParser, text, b0, b1);
                        Claim::Injective(a)
                    }
                    "in-bounds" => {
                        let (a, n) = parse_at!(ObLmadWithinParser, text, b0, b1);
                        Claim::InBounds(a, n)
                    }
                    _ => {
                        let e = parse_at!(ObSExpParser, text, b0, b1);
                        match e {
                            SExp::Bin(crate::ast::BinOp::Le, a, b, _) => Claim::AtMost(*a, *b),
                            other => {
                                return Err(err(
                                    other.span(),
                                    "`at-most` takes `a <= b`".to_string(),
                                ))
                            }
                        }
                    }
                };
                cur.claim = Some(claim);
            }
        }
    }
    close(open.take(), &mut out)?;
    Ok(out)
}

fn err(span: Span, message: String) -> Diagnostic {
    Diagnostic::new(Phase::Syntax, span, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "-- a comment\nobligation even_odd\n  expect proved\n  given n >= 1, m >= 0\n  disjoint 0 + {(m : 2*n) (n : 1)}\n       and n + {(m : 2 * n) (n : 1)}\n\nobligation fits\n  given a <= b\n  at-most a <= b\nobligation rm\n  in-bounds R(n, m) within n*m\nobligation inj\n  injective 0 + {(n : 0)}\n";

    #[test]
    fn files_parse_and_print_back() {
        let obs = parse_obligations(SAMPLE).unwrap();
        assert_eq!(obs.len(), 4);
        assert_eq!(obs[0].name, "even_odd");
        assert_eq!(obs[0].expect, Some(Expect::Proved));
        assert_eq!(obs[0].facts.len(), 2);
        assert!(matches!(obs[0].claim, Claim::Disjoint(..)));
        assert!(matches!(obs[1].claim, Claim::AtMost(..)));
        assert!(matches!(obs[2].claim, Claim::InBounds(..)));
        assert_eq!(obs[2].claim.lmads()[0].dims.len(), 2);
        assert_eq!(obs[0].vars(), vec!["m".to_string(), "n".to_string()]);
        let printed: Vec<String> = obs.iter().map(|o| o.to_string()).collect();
        let back = parse_obligations(&printed.join("\n")).unwrap();
        assert_eq!(back, obs);
    }

    #[test]
    fn positions_are_those_of_the_file() {
        let e = parse_obligations("obligation a\n  injective 0 + {(n : #)}\n").unwrap_err();
        assert_eq!(e.span.start, "obligation a\n  injective 0 + {(n : ".len());
        let e = parse_obligations("obligation a\n  disjoint R(n) or R(n)\n").unwrap_err();
        assert!(e.message.contains("`and`"), "{}", e.message);
        let e = parse_obligations("obligation a\n  given n > 0\n").unwrap_err();
        assert!(e.message.contains("no claim"), "{}", e.message);
        let e = parse_obligations("obligation a\n  at-most a < b\n").unwrap_err();
        assert!(e.message.contains("a <= b"), "{}", e.message);
        let e = parse_obligations("given n\n").unwrap_err();
        assert!(e.message.contains("obligation NAME"), "{}", e.message);
        let e = parse_obligations("obligation a\n  expect maybe\n  at-most 1 <= 2\n").unwrap_err();
        assert!(e.message.contains("`proved`"), "{}", e.message);
        let e =
            parse_obligations("obligation a\n  at-most 1 <= 2\nobligation a\n  at-most 1 <= 2\n")
                .unwrap_err();
        assert!(e.message.contains("second obligation"), "{}", e.message);
    }
}
