//! The integer view of an obligation: what the provers reason about.
//!
//! Obligations are about `i64` sizes and addresses, and every prover works
//! over the mathematical integers. Since programs have element types, an
//! obligation's expressions may contain what has no integer meaning there:
//! conversions (`i64(x)`, `f32(n)`), float functions (`sqrt`, `floor`, ...)
//! and float literals. This module rewrites an obligation so that none is
//! left, soundly:
//!
//! - a conversion of a truth value is modelled exactly: `i64(a < b)` is the
//!   comparison itself (1 or 0 in the provers' integer reading), and
//!   `bool(x)` of an integer is `x != 0`;
//! - every other conversion, float function, float literal, and comparison
//!   of floats is replaced by an *opaque* variable, an unknown integer
//!   named after its text (`opaque i64(f)`; the same text is the same
//!   variable), which no program name can be (it has a space in it).
//!
//! Proving the rewritten obligation proves the original: the claim must
//! hold for every value of the opaque variables, the values the subterms
//! really take among them. A counterexample that gives opaque variables
//! values is not one of the original (those values may be unreachable), so
//! [`super::Provers`] reports such an obligation's refutations as unknown.
//! Literals of `i32` and `bool` are their integer values.

use funmem_lang::ast::{Atom, BinOp, Ident, SExp, UnOp};
use funmem_lang::lmad::Lmad;
use funmem_lang::obligation::{Claim, Fact, Obligation};
use funmem_lang::prim::{Const, Prim};
use funmem_lang::print::sexp_string;
use std::borrow::Cow;

/// The prefix of every opaque variable's name.
pub const OPAQUE: &str = "opaque ";

/// An obligation in its integer view.
#[derive(Clone, Debug)]
pub struct View<'o> {
    /// The rewritten obligation (the original when nothing needed it).
    pub obligation: Cow<'o, Obligation>,
    /// Each opaque variable's name and the text it stands for, in order
    /// of first appearance.
    pub opaque: Vec<(String, String)>,
}

/// Whether `e` has a node the provers do not model (a conversion, a float
/// function or a literal other than an `i64`).
fn needs_view(e: &SExp) -> bool {
    match e {
        SExp::Atom(Atom::Const(..)) => true,
        SExp::Atom(_) => false,
        SExp::Un(UnOp::Neg | UnOp::Not | UnOp::Abs, a, _) => needs_view(a),
        SExp::Un(..) => true,
        SExp::Bin(_, a, b, _) => needs_view(a) || needs_view(b),
    }
}

/// The integer view of `o` (borrowed when `o` needs no rewriting).
pub fn integer_view(o: &Obligation) -> View<'_> {
    let mut any = false;
    o.claim.for_each_sexp(&mut |e| any |= needs_view(e));
    any |= o.facts.iter().any(|f| needs_view(&f.exp));
    if !any {
        return View {
            obligation: Cow::Borrowed(o),
            opaque: Vec::new(),
        };
    }
    let mut rw = Rewriter::default();
    let lmad = |l: &Lmad<SExp>, rw: &mut Rewriter| l.map(|e| rw.int(e));
    let claim = match &o.claim {
        Claim::Disjoint(a, b) => {
            let a = lmad(a, &mut rw);
            Claim::Disjoint(a, lmad(b, &mut rw))
        }
        Claim::Injective(a) => Claim::Injective(lmad(a, &mut rw)),
        Claim::InBounds(a, n) => {
            let a = lmad(a, &mut rw);
            Claim::InBounds(a, rw.int(n))
        }
        Claim::AtMost(a, b) => {
            let a = rw.int(a);
            Claim::AtMost(a, rw.int(b))
        }
    };
    let facts = o
        .facts
        .iter()
        .map(|f| Fact {
            exp: rw.int(&f.exp),
            origin: f.origin.clone(),
            span: f.span,
        })
        .collect();
    View {
        obligation: Cow::Owned(Obligation {
            claim,
            facts,
            ..o.clone()
        }),
        opaque: rw.opaque,
    }
}

/// Whether `e` is a float (syntactically: a float literal, a float
/// function, a conversion to a float, or arithmetic on one). Variables
/// are integers, as every name of an obligation is.
fn is_float(e: &SExp) -> bool {
    match e {
        SExp::Atom(Atom::Const(c, _)) => c.prim().is_float(),
        SExp::Atom(_) => false,
        SExp::Un(UnOp::Conv(t), _, _) => t.is_float(),
        SExp::Un(UnOp::Sqrt | UnOp::Exp | UnOp::Log | UnOp::Floor, _, _) => true,
        SExp::Un(UnOp::Neg | UnOp::Abs, a, _) => is_float(a),
        SExp::Un(UnOp::Not, _, _) => false,
        SExp::Bin(op, a, b, _) => !is_truth(*op) && (is_float(a) || is_float(b)),
    }
}

/// Whether the operator gives a truth value.
fn is_truth(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Lt | Le | Gt | Ge | Eq | Ne | And | Or)
}

/// Whether `e` is a truth value (0 or 1 in the integer reading).
fn is_bool(e: &SExp) -> bool {
    match e {
        SExp::Atom(Atom::Const(c, _)) => c.prim() == Prim::Bool,
        SExp::Un(UnOp::Not | UnOp::Conv(Prim::Bool), _, _) => true,
        SExp::Bin(op, _, _, _) => is_truth(*op),
        _ => false,
    }
}

#[derive(Default)]
struct Rewriter {
    opaque: Vec<(String, String)>,
}

impl Rewriter {
    /// The opaque variable standing for `e`.
    fn opaque(&mut self, e: &SExp) -> SExp {
        let text = sexp_string(e);
        if let Some((name, _)) = self.opaque.iter().find(|(_, t)| *t == text) {
            return SExp::var(&funmem_lang::Name::new(name));
        }
        // SMT-LIB's quoted symbols cannot hold `|` or `\`; a number keeps
        // two texts that read alike apart.
        let mut name = format!("{OPAQUE}{}", text.replace(['|', '\\'], "!"));
        if self.opaque.iter().any(|(n, _)| *n == name) {
            name = format!("{name} #{}", self.opaque.len());
        }
        self.opaque.push((name.clone(), text));
        SExp::Atom(Atom::Var(Ident::synthetic(&name)))
    }

    /// `e` in an integer (or truth) position.
    fn int(&mut self, e: &SExp) -> SExp {
        if is_float(e) {
            return self.opaque(e);
        }
        match e {
            SExp::Atom(Atom::Const(c, s)) => match c {
                Const::Bool(_) | Const::I32(_) | Const::I64(_) => {
                    SExp::Atom(Atom::Int(c.as_i64().unwrap_or(0), *s))
                }
                // Floats are caught above.
                _ => self.opaque(e),
            },
            SExp::Atom(_) => e.clone(),
            SExp::Un(UnOp::Conv(t), a, s) => {
                if is_bool(a) && !t.is_float() {
                    // A truth value is 0 or 1 in every integer type.
                    self.int(a)
                } else if *t == Prim::Bool && !is_float(a) {
                    let a = self.int(a);
                    SExp::Bin(
                        BinOp::Ne,
                        Box::new(a),
                        Box::new(SExp::Atom(Atom::Int(0, *s))),
                        *s,
                    )
                } else {
                    self.opaque(e)
                }
            }
            SExp::Un(op @ (UnOp::Neg | UnOp::Not | UnOp::Abs), a, s) => {
                SExp::Un(*op, Box::new(self.int(a)), *s)
            }
            SExp::Un(..) => self.opaque(e),
            SExp::Bin(op, a, b, s) => {
                // A comparison of floats has a truth value the integers
                // cannot reproduce (rounding, NaN): unknown.
                if is_truth(*op)
                    && !matches!(op, BinOp::And | BinOp::Or)
                    && (is_float(a) || is_float(b))
                {
                    return self.opaque(e);
                }
                SExp::Bin(*op, Box::new(self.int(a)), Box::new(self.int(b)), *s)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::obligation::parse_obligations;

    fn view_of(src: &str) -> (String, Vec<(String, String)>) {
        let o = parse_obligations(src).unwrap().remove(0);
        let v = integer_view(&o);
        let text = format!(
            "{} given {}",
            v.obligation.claim,
            v.obligation
                .facts
                .iter()
                .map(|f| sexp_string(&f.exp))
                .collect::<Vec<_>>()
                .join(", ")
        );
        (text, v.opaque)
    }

    #[test]
    fn truth_values_are_exact_and_the_rest_opaque() {
        let (t, opaque) =
            view_of("obligation t\n  given i64(a < b) == 1 && bool(c)\n  at-most i64(f) <= i64(sqrt(2.5f32)) + i64(f)\n");
        assert!(t.contains("a < b == 1"), "{t}");
        assert!(t.contains("c != 0"), "{t}");
        assert_eq!(opaque.len(), 2, "{opaque:?}");
        assert_eq!(opaque[0].1, "i64(f)");
        // Nothing to rewrite: borrowed.
        let o = parse_obligations("obligation t\n  at-most n <= n + 1\n")
            .unwrap()
            .remove(0);
        assert!(matches!(integer_view(&o).obligation, Cow::Borrowed(_)));
    }

    #[test]
    fn names_with_bars_stay_apart() {
        let (_, opaque) = view_of("obligation t\n  at-most i64(f32(a || b)) <= i64(f32(a && b))\n");
        assert_eq!(opaque.len(), 2, "{opaque:?}");
        assert!(opaque.iter().all(|(n, _)| !n.contains('|')), "{opaque:?}");
    }
}
