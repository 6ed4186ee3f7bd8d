//! Memory block aliases (Serup's thesis §6.1): which allocated blocks a
//! block name may stand for.
//!
//! Most block names are *roots*: bound by `alloc` (a fresh block each time
//! the statement runs) or by a program parameter of type `mem` (a block
//! the caller made). The others are *existential*: the block an `if`
//! returns (its pattern's `mem` names), the block a loop's parameter holds
//! in an iteration, and the block a loop returns. An existential name may
//! be any block that flows into it: a branch's result, a loop's initial
//! block, a block the loop body returns (which may itself be existential),
//! so the relation is closed transitively. It is not symmetric: a loop's
//! block may be its initial block in one iteration and the body's block
//! in another, while those two are never the same block.
//!
//! Every analysis of memory reuse works on roots: a use of an array in an
//! existential block is a use of every root the block may be. Forgetting
//! one (spreading an interference to the block but not to what it stands
//! for) lets two arrays that are alive together share memory, which is
//! how Futhark's bug #1545 came about.
//!
//! Invariant: the program's binders are distinct (no name bound twice,
//! even in sibling scopes); [`crate::reuse`] renames them so first.

use funmem_lang::ast::*;
use funmem_lang::Name;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// The may-alias relation of a program's blocks.
#[derive(Clone, Debug, Default)]
pub struct MemAliases {
    /// Existential name -> the names that flow into it, with what binds it.
    edges: HashMap<Name, (Vec<Name>, &'static str)>,
    /// Existential name -> the roots it may be, sorted.
    roots: HashMap<Name, Vec<Name>>,
    /// The existential names in binding order (for printing).
    order: Vec<Name>,
}

impl MemAliases {
    /// The aliases of `p`'s blocks.
    pub fn of(p: &Program) -> MemAliases {
        let mut m = MemAliases::default();
        m.body(&p.body);
        let names: Vec<Name> = m.order.clone();
        for x in names {
            let mut seen: HashSet<Name> = HashSet::default();
            let mut out: Vec<Name> = Vec::new();
            let mut todo = vec![x.clone()];
            while let Some(y) = todo.pop() {
                if !seen.insert(y.clone()) {
                    continue;
                }
                match m.edges.get(&y) {
                    Some((next, _)) => todo.extend(next.iter().cloned()),
                    None => out.push(y),
                }
            }
            out.sort();
            m.roots.insert(x, out);
        }
        m
    }

    fn edge(&mut self, x: &Name, to: &Name, what: &'static str) {
        let e = self.edges.entry(x.clone()).or_insert_with(|| {
            self.order.push(x.clone());
            (Vec::new(), what)
        });
        if !e.0.contains(to) {
            e.0.push(to.clone());
        }
    }

    fn body(&mut self, b: &Body) {
        for s in &b.stms {
            match &s.exp.kind {
                ExpKind::If(_, t, e) => {
                    for (k, p) in s.pats.iter().enumerate() {
                        if matches!(p.ty, Type::Mem(_)) {
                            for r in [t.result.get(k), e.result.get(k)].into_iter().flatten() {
                                self.edge(&p.name.name, &r.name, "an `if`'s block");
                            }
                        }
                    }
                    self.body(t);
                    self.body(e);
                }
                ExpKind::Loop(ps, init, _, lb) => {
                    for (k, q) in ps.iter().enumerate() {
                        if !matches!(q.ty, Type::Mem(_)) {
                            continue;
                        }
                        if let Some(Atom::Var(x)) = init.get(k) {
                            self.edge(&q.name.name, &x.name, "a loop parameter's block");
                        }
                        if let Some(r) = lb.result.get(k) {
                            self.edge(&q.name.name, &r.name, "a loop parameter's block");
                        }
                        if let Some(p) = s.pats.get(k) {
                            self.edge(&p.name.name, &q.name.name, "a loop's block");
                        }
                    }
                    self.body(lb);
                }
                ExpKind::Kernel(_, _, kb) => self.body(kb),
                _ => {}
            }
        }
    }

    /// Whether `m` is existential (bound by an `if` or a loop).
    pub fn is_existential(&self, m: &Name) -> bool {
        self.edges.contains_key(m)
    }

    /// The roots `m` may be: itself when it is a root.
    pub fn roots<'a>(&'a self, m: &'a Name) -> &'a [Name] {
        match self.roots.get(m) {
            Some(r) => r,
            None => std::slice::from_ref(m),
        }
    }

    /// One line per existential block: what it may be.
    pub fn lines(&self) -> Vec<String> {
        self.order
            .iter()
            .map(|x| {
                let what = self.edges.get(x).map_or("", |e| e.1);
                let rs: Vec<String> = self.roots(x).iter().map(|r| format!("`{r}`")).collect();
                format!("alias: `{x}` ({what}) may be {}", rs.join(", "))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::parse::parse_program;

    #[test]
    fn loop_and_if_blocks_reach_their_roots_transitively() {
        let src = "def main (n: int) (c: int) =
  let (m0: mem) = alloc n
  let (x0: [n]int @ m0 -> R(n)) = iota n
  let (mr: mem) (r: [n]int @ mr -> R(n)) = loop (mp: mem) (p: [n]int @ mp -> R(n)) = (m0, x0) for i < n do
    let (mq: mem) (q: [n]int @ mq -> R(n)) = if c then
      let (m1: mem) = alloc n
      let (y: [n]int @ m1 -> R(n)) = copy p
      in (m1, y)
    else
      in (mp, p)
    in (mq, q)
  in (r)";
        let p = parse_program(src, Lang::FunMem).expect("parses");
        let a = MemAliases::of(&p);
        let names = |x: &str| -> Vec<String> {
            a.roots(&Name::new(x))
                .iter()
                .map(|n| n.to_string())
                .collect()
        };
        assert_eq!(names("mr"), ["m0", "m1"]);
        assert_eq!(names("mp"), ["m0", "m1"]);
        assert_eq!(names("mq"), ["m0", "m1"]);
        assert_eq!(names("m1"), ["m1"]);
        assert!(a.is_existential(&Name::new("mq")));
        assert!(!a.is_existential(&Name::new("m0")));
        assert_eq!(a.lines().len(), 3);
    }
}
