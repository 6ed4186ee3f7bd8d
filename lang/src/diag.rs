//! Diagnostics: errors with positions, rendered for people.
//!
//! A [`Diagnostic`] is a value: a primary span and message, optional
//! secondary labels and notes. [`Diagnostic::render`] prints it as
//! `file:line:col: message` followed by the source line with the span
//! marked (ariadne), which is the format docs/cli.md gives for every error.

use crate::span::{Source, Span};
use ariadne::{Config, Label, Report, ReportKind};
use std::fmt;

/// What stage found the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Lexing or parsing.
    Syntax,
    /// Type checking.
    Type,
    /// Evaluation (a stuck rule, a race, a limit).
    Eval,
    /// A translation or pass that cannot handle its input.
    Transform,
}

/// An error at a position in a source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Who found it.
    pub phase: Phase,
    /// Where.
    pub span: Span,
    /// What, in one line.
    pub message: String,
    /// Related places, each with a short remark.
    pub labels: Vec<(Span, String)>,
    /// Further explanation, one line each.
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic with only a position and a message.
    pub fn new(phase: Phase, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            phase,
            span,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push((span, text.into()));
        self
    }

    /// Adds a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The one-line form `file:line:col: message`.
    pub fn headline(&self, src: &Source) -> String {
        let (line, col) = src.line_col(self.span.start);
        format!("{}:{}:{}: {}", src.name, line, col, self.message)
    }

    /// The full report: the headline, then the marked source, labels and
    /// notes. `color` turns on ANSI colours.
    pub fn render(&self, src: &Source, color: bool) -> String {
        let headline = self.headline(src);
        let len = src.text.len();
        let clamp = |s: Span| {
            let start = s.start.min(len);
            start..s.end.clamp(start, len)
        };
        let name = src.name.as_str();
        let mut report = Report::build(ReportKind::Error, (name, clamp(self.span)))
            .with_config(
                Config::default()
                    .with_color(color)
                    .with_index_type(ariadne::IndexType::Byte),
            )
            .with_message(&self.message)
            .with_label(Label::new((name, clamp(self.span))).with_message("here"));
        for (span, text) in &self.labels {
            report = report.with_label(Label::new((name, clamp(*span))).with_message(text));
        }
        for note in &self.notes {
            report = report.with_note(note);
        }
        let mut out = Vec::new();
        let cache = (name, ariadne::Source::from(src.text.as_str()));
        if report.finish().write(cache, &mut out).is_err() {
            return headline;
        }
        // Ariadne's own header repeats the message; our headline replaces it.
        let body = String::from_utf8_lossy(&out);
        let snippet = body.split_once('\n').map_or("", |(_, rest)| rest);
        format!("{headline}\n{snippet}")
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}
