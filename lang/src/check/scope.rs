//! Lexically scoped environments without shadowing.

use crate::ast::Ident;
use crate::diag::{Diagnostic, Phase};
use crate::name::Name;
use crate::span::Span;
use rustc_hash::FxHashMap as HashMap;

/// What a name in scope is bound to.
#[derive(Clone)]
pub struct Bound<T> {
    /// Its meaning (a type).
    pub val: T,
    /// Its binder.
    pub span: Span,
    /// How many scopes were open when it was bound.
    pub depth: usize,
}

/// Names in scope with what they are bound to and where.
///
/// Names are never rebound while visible (docs/language.md, Conventions), so one map and an
/// undo log of the names each open scope bound is all a scope needs.
#[derive(Clone)]
pub struct Scope<T> {
    map: HashMap<Name, Bound<T>>,
    frames: Vec<Vec<Name>>,
    /// How the language says "bound": `bound` or `declared`.
    verb: &'static str,
}

impl<T> Scope<T> {
    /// An empty environment with one open scope; `verb` is how messages
    /// say "bound" (`bound`, `declared`).
    pub fn new(verb: &'static str) -> Scope<T> {
        Scope {
            map: HashMap::default(),
            frames: vec![Vec::new()],
            verb,
        }
    }

    /// What `x` is bound to, and where.
    pub fn get(&self, x: &Name) -> Option<&Bound<T>> {
        self.map.get(x)
    }

    /// Binds `x`, refusing a name that is already visible.
    pub fn bind(&mut self, x: &Ident, v: T) -> Result<(), Diagnostic> {
        if let Some(Bound { span: prev, .. }) = self.map.get(&x.name) {
            return Err(Diagnostic::new(
                Phase::Type,
                x.span,
                format!(
                    "`{}` is already {v}; a visible name may not be {v} again",
                    x.name,
                    v = self.verb
                ),
            )
            .with_label(*prev, format!("first {} here", self.verb)));
        }
        let depth = self.frames.len();
        self.map.insert(
            x.name.clone(),
            Bound {
                val: v,
                span: x.span,
                depth,
            },
        );
        if let Some(f) = self.frames.last_mut() {
            f.push(x.name.clone());
        }
        Ok(())
    }

    /// Opens a nested scope.
    pub fn open(&mut self) {
        self.frames.push(Vec::new());
    }

    /// Closes the innermost scope, forgetting what it bound.
    pub fn close(&mut self) {
        if let Some(f) = self.frames.pop() {
            for x in f {
                self.map.remove(&x);
            }
        }
    }

    /// How many scopes are open (1 at top level).
    pub fn depth(&self) -> usize {
        self.frames.len()
    }
}
