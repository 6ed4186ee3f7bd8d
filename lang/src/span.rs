//! Source positions.
//!
//! Every syntax node carries a [`Span`]: the byte range of the source text it
//! was parsed from. Spans are metadata, not syntax: two spans always compare
//! equal, so that `parse(print(p)) == p` holds although printing moves things.

use std::fmt;

/// A byte range `start..end` in one source text.
#[derive(Clone, Copy, Default, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// A span for nodes that were built by a program, not parsed.
    pub const DUMMY: Span = Span { start: 0, end: 0 };

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

impl PartialEq for Span {
    /// Spans never distinguish two nodes: see the module documentation.
    fn eq(&self, _: &Span) -> bool {
        true
    }
}

impl std::hash::Hash for Span {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// A source text with its name, for turning byte offsets into lines and columns.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file name, as the user gave it.
    pub name: String,
    /// The whole text.
    pub text: String,
    line_starts: Vec<usize>,
}

/// The text without a leading UTF-8 byte-order mark (U+FEFF), which some
/// editors write at the start of a file and which means nothing here.
pub fn without_bom(text: String) -> String {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

impl Source {
    /// A source named `name` with text `text` (a byte-order mark at its
    /// start is dropped; positions count from after it).
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        let text = without_bom(text.into());
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start);
        (line + 1, col + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let s = Source::new("f", "ab\ncd\n\nx");
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(1), (1, 2));
        assert_eq!(s.line_col(3), (2, 1));
        assert_eq!(s.line_col(6), (3, 1));
        assert_eq!(s.line_col(7), (4, 1));
        assert_eq!(s.line_col(100), (4, 2));
    }

    #[test]
    fn spans_are_metadata() {
        assert_eq!(Span::new(1, 2), Span::new(5, 9));
    }
}
