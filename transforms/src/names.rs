//! Fresh names that clash with nothing in a program.

use crate::walk;
use funmem_lang::ast::{Ident, Program};
use funmem_lang::Name;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// A supply of fresh names: every name it hands out is new to the program
/// it was made from and to every name handed out before.
#[derive(Clone, Debug, Default)]
pub struct Names {
    used: HashSet<Name>,
    /// For each base asked for, the last suffix tried: every suffix below
    /// it is taken (names are never given back), so the next search for
    /// that base starts there, and asking for one base many times costs
    /// time linear in the number of asks.
    next: HashMap<String, usize>,
}

impl Names {
    /// The supply for a program: all of its names are taken.
    pub fn of_program(p: &Program) -> Names {
        let mut n = Names::default();
        walk::program_names(p, &mut |x| {
            n.used.insert(x.name.clone());
        });
        n
    }

    /// Marks a name as taken.
    pub fn take(&mut self, x: &Name) {
        self.used.insert(x.clone());
    }

    /// `base` itself when it is free, else `base_1`, `base_2`, ...
    pub fn fresh(&mut self, base: &str) -> Ident {
        let mut k = self.next.get(base).copied().unwrap_or(0);
        let mut name = if k == 0 {
            base.to_string()
        } else {
            format!("{base}_{k}")
        };
        while self.used.contains(name.as_str()) {
            k += 1;
            name = format!("{base}_{k}");
        }
        self.next.insert(base.to_string(), k);
        let name = Name::new(&name);
        self.used.insert(name.clone());
        Ident {
            name,
            span: funmem_lang::Span::DUMMY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use funmem_lang::ast::Lang;
    use funmem_lang::parse::parse_program;

    #[test]
    fn fresh_names_avoid_the_program_and_each_other() {
        let p = parse_program(
            "def main (x_mem: int) = let (x_mem_1: int) = x_mem in (x_mem_1)",
            Lang::Fun,
        )
        .unwrap();
        let mut n = Names::of_program(&p);
        assert_eq!(n.fresh("x_mem").name.as_str(), "x_mem_2");
        assert_eq!(n.fresh("x_mem").name.as_str(), "x_mem_3");
        assert_eq!(n.fresh("y").name.as_str(), "y");
        assert_eq!(n.fresh("y").name.as_str(), "y_1");
    }
}
