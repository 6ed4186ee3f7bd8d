//! Random FUNMEM programs with exactly one data race: one location, two
//! iterations of one kernel instance, one access each (a write, and a read
//! or another write). They test the race detector itself
//! (`funmem_semantics::race`), whose report must name that very pair: the
//! kernel, the block and byte offset, the two iterations and their kinds of
//! access. Programs with several conflicting pairs cannot test that much,
//! since a correct detector may report any one of them.
//!
//! The shape of a program: a nest of `D` kernels (1 to 3 levels), each
//! level's rows built in a block of its own or in place in the enclosing
//! kernel's row; one *shared* array (in an `alloc`ed block, in a `mem`
//! parameter of its own, or in the same `mem` parameter as another input)
//! holds the racing cell `c`. The racing kernel is level `L` (1 to `D`);
//! its instance is the one run by the outer iterations `o_1 .. o_{L-1}`.
//! Each of the two accesses happens in the body of some level `d >= L`,
//! under an `if` whose condition holds in exactly one iteration of the
//! whole nest (`i_1 == o_1 && .. && i_L == a && i_{L+1} == q_{L+1} ..`),
//! and is made:
//!
//! - a write: by `iota 1` or `copy` of an input slice into the cell's place
//!   (at depth `d`), or by a kernel of one iteration whose result lives
//!   there (at depth `d + 1`);
//! - a read: by indexing the shared array, by `copy` of its one-cell slice
//!   to a block of its own, or inside a kernel of one iteration.
//!
//! The two iterations `a != b` come in either order, so a write may come
//! before the read or after it in time (read-after-write and
//! write-after-read). Around them: reads of the inputs, reads of the
//! shared array at every cell but `c`, scalar arithmetic, private blocks
//! filled with `iota`, and every level's rows (disjoint by construction).
//! Nothing else in a kernel touches `c`, and nothing else in a kernel
//! writes to the shared array's cells or to the inputs, so the pair is the
//! only conflict of eq. 4; the tests confirm it with the brute-force
//! reference ([`crate::reference`]). The racing cell is never observed
//! after the kernel (not returned, not read), so where a detector misses
//! the race the heap results still equal the value results: only the race
//! report check can see the miss.

use crate::gen_mem::{add, indent, mul, paren, type_text, Place};
use crate::{Case, GenConfig, Rng};
use funmem_lang::ast::{Body, ExpKind, Lang};
use funmem_lang::parse::parse_program;
use funmem_lang::prim::Const;
use funmem_lang::Span;
use funmem_semantics::error::{Access, Race};
use funmem_semantics::value::{ArrayValue, Value};
use rand::RngExt;

/// A program with one race, and the race: what a detector must report
/// (the kernel's statement, block, offset; the earlier iteration first,
/// each with its kind of access, paths at the racing kernel's level).
#[derive(Clone, Debug)]
pub struct RaceCase {
    /// The program and its inputs.
    pub case: Case,
    /// The one conflicting pair of accesses.
    pub race: Race,
    /// The racing kernel's nesting level: 1 for an outermost kernel.
    pub level: usize,
}

/// How an access is made (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// Write: `iota 1`; read: an index.
    Direct,
    /// `copy` (of an input slice into the cell; of the cell's slice out).
    Copy,
    /// Inside a kernel of one iteration.
    Kernel,
}

/// One of the two racing accesses.
#[derive(Clone, Debug)]
struct Acc {
    write: bool,
    /// The iteration of the racing kernel that makes it.
    iter: i64,
    /// The level (1-based) whose body holds it: at least the racing one.
    level: usize,
    /// The iterations of the levels below the racing one, down to `level`.
    inner: Vec<i64>,
    how: How,
    /// Before the body's nested kernel, or after it.
    early: bool,
}

/// The array that holds the racing cell.
#[derive(Clone, Debug)]
struct Shared {
    name: String,
    block: String,
    /// Its LMAD's offset in its block, as text and value.
    base: String,
    base_val: i64,
    size: i64,
    /// The racing cell's index in the array.
    cell: i64,
    /// Its block's number (allocation order, `mem` parameters first).
    label: usize,
}

/// Generates a FUNMEM program with exactly one conflicting pair of
/// accesses, and that pair. Sizes are at most 3 (or `max_size` if smaller,
/// but at least 2 for the racing kernel); nesting at most 3 kernels (or
/// `max_depth`).
pub fn gen_race(rng: &mut Rng, cfg: &GenConfig) -> RaceCase {
    let mut g = G {
        rng,
        next: 0,
        max_size: cfg.max_size.clamp(2, 3),
        sizes: Vec::new(),
        outer: Vec::new(),
        racing: 1,
        accs: Vec::new(),
        sh: None,
        kernel_names: Vec::new(),
        xs_off: String::new(),
    };
    let depth = g.range(1, cfg.max_depth.clamp(1, 3) as i64) as usize;
    let (text, inputs, race) = g.program(depth);
    let program = match parse_program(&text, Lang::FunMem) {
        Ok(p) => p,
        Err(d) => panic!(
            "gen_race made a program that does not parse: {}\n{text}",
            d.message
        ),
    };
    let kernel = stm_span(&program.body, &g.kernel_names[g.racing - 1]).unwrap_or(Span::DUMMY);
    RaceCase {
        case: Case { program, inputs },
        race: Race { kernel, ..race },
        level: g.racing,
    }
}

/// The span of the statement that binds `name`, at any depth.
fn stm_span(b: &Body, name: &str) -> Option<Span> {
    b.stms.iter().find_map(|s| {
        if s.pats.first().is_some_and(|p| p.name.name.as_str() == name) {
            return Some(s.span);
        }
        match &s.exp.kind {
            ExpKind::Kernel(_, _, kb) => stm_span(kb, name),
            ExpKind::If(_, t, e) => stm_span(t, name).or_else(|| stm_span(e, name)),
            _ => None,
        }
    })
}

/// The text of an array type of these sizes (atoms) at a place.
fn ty(shape: &[String], p: &Place) -> String {
    let atoms: Vec<&str> = shape.iter().map(String::as_str).collect();
    type_text(&atoms, p)
}

/// Row-major strides of these sizes (atoms), as text.
fn row_major(shape: &[String]) -> Vec<String> {
    let mut out = vec!["1".to_string(); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        out[d] = mul(&shape[d + 1], &out[d + 1]);
    }
    out
}

/// What a body sees.
#[derive(Clone, Debug, Default)]
struct Scope {
    /// Integers (any value).
    ints: Vec<String>,
    /// Kernel indices (never negative).
    idx: Vec<String>,
}

struct G<'r> {
    rng: &'r mut Rng,
    next: usize,
    max_size: i64,
    /// Each level's size: its atom and value.
    sizes: Vec<(String, i64)>,
    /// The iterations `o_1 .. o_{L-1}` that run the racing instance.
    outer: Vec<i64>,
    /// The racing level `L` (1-based).
    racing: usize,
    accs: Vec<Acc>,
    sh: Option<Shared>,
    /// Each level's kernel result name.
    kernel_names: Vec<String>,
    /// The LMAD offset of `xs` in its block.
    xs_off: String,
}

impl G<'_> {
    fn name(&mut self, base: &str) -> String {
        self.next += 1;
        // `i32`, `f64`, ... are type names, not variables.
        while funmem_lang::prim::Prim::from_name(&format!("{base}{}", self.next)).is_some() {
            self.next += 1;
        }
        format!("{base}{}", self.next)
    }

    fn coin(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.random_range(lo..=hi.max(lo))
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())].clone()
    }

    fn sh(&self) -> &Shared {
        self.sh.as_ref().expect("the shared array is made first")
    }

    /// The program's text, its inputs and its race (kernel span unset).
    fn program(&mut self, depth: usize) -> (String, Vec<Value>, Race) {
        let mut params: Vec<String> = Vec::new();
        let mut inputs: Vec<Value> = Vec::new();
        // The levels' sizes: the racing one at least 2.
        self.racing = self.range(1, depth as i64) as usize;
        for k in 1..=depth {
            let lo = if k == self.racing { 2 } else { 1 };
            let v = self.range(lo, self.max_size);
            let atom = if self.coin(0.5) {
                let n = format!("n{k}");
                params.push(format!("({n}: int)"));
                inputs.push(Value::Scalar(Const::I64(v)));
                n
            } else {
                v.to_string()
            };
            self.sizes.push((atom, v));
        }
        for k in 1..self.racing {
            let o = self.range(0, self.sizes[k - 1].1 - 1);
            self.outer.push(o);
        }
        // The two accesses.
        let n_l = self.sizes[self.racing - 1].1;
        let a = self.range(0, n_l - 1);
        let b = (a + self.range(1, n_l - 1)) % n_l;
        let second_writes = self.coin(0.3);
        for (write, iter) in [(true, a), (second_writes, b)] {
            let level = self.range(self.racing as i64, depth as i64) as usize;
            let inner = (self.racing + 1..=level)
                .map(|k| self.range(0, self.sizes[k - 1].1 - 1))
                .collect();
            let how = self.pick(&[How::Direct, How::Copy, How::Kernel]);
            let early = self.coin(0.5);
            self.accs.push(Acc {
                write,
                iter,
                level,
                inner,
                how,
                early,
            });
        }
        // The inputs: `xs` (read only) and, perhaps, the shared array.
        let nx = self.range(1, 4);
        params.push("(nx: int)".into());
        inputs.push(Value::Scalar(Const::I64(nx)));
        let size = self.range(2, 4);
        let cell = self.range(0, size - 1);
        let xs_vals: Vec<i64> = (0..nx).map(|_| self.range(-5, 9)).collect();
        let ys_vals: Vec<i64> = (0..size).map(|_| self.range(-5, 9)).collect();
        let mut top: Vec<String> = Vec::new();
        let mut mems = 0usize;
        match self.range(0, 2) {
            // The shared array in a block of its own, `alloc`ed.
            0 => {
                params.push("(xm: mem)".into());
                params.push("(xs: [nx]int @ xm -> R(nx))".into());
                inputs.push(Value::Array(ArrayValue::vector(xs_vals)));
                self.xs_off = "0".into();
                mems = 1;
            }
            // In a `mem` parameter of its own, before or after `xs`'s.
            1 => {
                let ys_first = self.coin(0.5);
                let label = usize::from(!ys_first);
                params.push(if ys_first { "(ym: mem)" } else { "(xm: mem)" }.into());
                params.push(if ys_first { "(xm: mem)" } else { "(ym: mem)" }.into());
                params.push("(xs: [nx]int @ xm -> R(nx))".into());
                params.push(format!("(ys: [{size}]int @ ym -> R({size}))"));
                inputs.push(Value::Array(ArrayValue::vector(xs_vals)));
                inputs.push(Value::Array(ArrayValue::vector(ys_vals)));
                self.xs_off = "0".into();
                self.sh = Some(Shared {
                    name: "ys".into(),
                    block: "ym".into(),
                    base: "0".into(),
                    base_val: 0,
                    size,
                    cell,
                    label,
                });
            }
            // In `xs`'s block, side by side with it.
            _ => {
                params.push("(xm: mem)".into());
                let (xo, yo, yv) = if self.coin(0.5) {
                    ("0".to_string(), "nx".to_string(), nx)
                } else {
                    (size.to_string(), "0".to_string(), 0)
                };
                params.push(format!("(xs: [nx]int @ xm -> {xo} + {{(nx : 1)}})"));
                params.push(format!("(ys: [{size}]int @ xm -> {yo} + {{({size} : 1)}})"));
                inputs.push(Value::Array(ArrayValue::vector(xs_vals)));
                inputs.push(Value::Array(ArrayValue::vector(ys_vals)));
                self.xs_off = xo;
                self.sh = Some(Shared {
                    name: "ys".into(),
                    block: "xm".into(),
                    base: yo,
                    base_val: yv,
                    size,
                    cell,
                    label: 0,
                });
            }
        }
        // The top level: the shared block (if allocated) and the result
        // block, in either order; a read or two; the kernel nest.
        let shape: Vec<String> = self.sizes.iter().map(|s| s.0.clone()).collect();
        let total = shape.iter().fold("1".to_string(), |a, s| mul(&a, s));
        let mut allocs = vec![format!("let (m0: mem) = alloc {total}")];
        if self.sh.is_none() {
            let alloc_first = self.coin(0.5);
            let label = mems + usize::from(!alloc_first);
            let make = vec![
                format!("let (s0: mem) = alloc {size}"),
                format!("let (sv: [{size}]int @ s0 -> R({size})) = iota {size}"),
            ];
            if alloc_first {
                allocs.splice(0..0, make);
            } else {
                allocs.extend(make);
            }
            self.sh = Some(Shared {
                name: "sv".into(),
                block: "s0".into(),
                base: "0".into(),
                base_val: 0,
                size,
                cell,
                label,
            });
        }
        top.extend(allocs);
        let mut sc = Scope::default();
        for _ in 0..self.range(0, 2) {
            self.filler(&mut sc, true, &mut top);
        }
        let place = Place {
            block: "m0".into(),
            offset: "0".into(),
            strides: row_major(&shape),
            rm: true,
        };
        let r = self.level(1, &place, &sc, &mut top);
        let mut results = vec![r];
        if let Some(v) = sc.ints.first() {
            if self.coin(0.5) {
                results.push(v.clone());
            }
        }
        let mut text = format!("def main {} =\n", params.join(" "));
        for l in indent(top) {
            text.push_str(&l);
            text.push('\n');
        }
        text.push_str(&format!("  in ({})\n", results.join(", ")));
        let sh = self.sh();
        let (w, o) = (&self.accs[0], &self.accs[1]);
        let (first, second) = if w.iter < o.iter { (w, o) } else { (o, w) };
        let access = |a: &Acc| Access {
            path: vec![a.iter],
            write: a.write,
        };
        let race = Race {
            kernel: Span::DUMMY,
            block: sh.label,
            // Blocks are bytes: the racing element (an i64) starts at
            // byte 8 * its element offset.
            offset: (sh.base_val + sh.cell) * funmem_lang::prim::Prim::I64.size() as i64,
            first: access(first),
            second: access(second),
        };
        (text, inputs, race)
    }

    /// A scalar expression that is never negative: indices, small
    /// literals, sums and products.
    fn nonneg(&mut self, sc: &Scope) -> String {
        let atom = |g: &mut Self| {
            if !sc.idx.is_empty() && g.coin(0.7) {
                g.pick(&sc.idx)
            } else {
                g.range(0, 5).to_string()
            }
        };
        let a = atom(self);
        if self.coin(0.5) {
            return a;
        }
        let b = atom(self);
        if self.coin(0.5) {
            format!("{a} + {b}")
        } else {
            format!("{a} * {b}")
        }
    }

    /// A statement that does not touch the racing cell: arithmetic, a read
    /// of `xs`, a read of another cell of the shared array, or a private
    /// block filled with `iota` and read. `top`: outside every kernel,
    /// where any cell may be read.
    fn filler(&mut self, sc: &mut Scope, top: bool, out: &mut Vec<String>) {
        let v = self.name("v");
        match self.range(0, 3) {
            0 => {
                let a = if !sc.ints.is_empty() && self.coin(0.6) {
                    self.pick(&sc.ints)
                } else {
                    self.range(-3, 9).to_string()
                };
                let b = self.nonneg(sc);
                let op = self.pick(&["+", "-", "*"]);
                out.push(format!("let ({v}: int) = {a} {op} {}", paren(&b)));
            }
            1 => {
                let t = self.name("t");
                let e = self.nonneg(sc);
                out.push(format!("let ({t}: int) = ({e}) % nx"));
                out.push(format!("let ({v}: int) = xs[{t}]"));
            }
            2 => {
                let sh = self.sh().clone();
                let t = self.name("t");
                if top {
                    let k = self.range(0, sh.size - 1);
                    out.push(format!("let ({t}: int) = {k}"));
                } else {
                    // Every cell but the racing one.
                    let e = self.nonneg(sc);
                    out.push(format!(
                        "let ({t}: int) = ({} + ({e}) % {}) % {}",
                        sh.cell + 1,
                        sh.size - 1,
                        sh.size
                    ));
                }
                out.push(format!("let ({v}: int) = {}[{t}]", sh.name));
            }
            _ => {
                let m = self.name("pm");
                let p = self.name("pa");
                let k = self.range(1, 3);
                let j = self.range(0, k - 1);
                out.push(format!("let ({m}: mem) = alloc {k}"));
                out.push(format!("let ({p}: [{k}]int @ {m} -> R({k})) = iota {k}"));
                out.push(format!("let ({v}: int) = {p}[{j}]"));
            }
        }
        sc.ints.push(v);
    }

    /// The kernel of level `k` (1-based) at `place`, as statements; its
    /// result's name.
    fn level(&mut self, k: usize, place: &Place, outer: &Scope, out: &mut Vec<String>) -> String {
        let depth = self.sizes.len();
        let i = self.name("i");
        let r = self.name("r");
        self.kernel_names.push(r.clone());
        let mut sc = outer.clone();
        sc.idx.push(i.clone());
        sc.ints.push(i.clone());
        let mut body = Vec::new();
        for _ in 0..self.range(0, 2) {
            self.filler(&mut sc, false, &mut body);
        }
        let here: Vec<Acc> = self.accs.iter().filter(|a| a.level == k).cloned().collect();
        for a in here.iter().filter(|a| a.early) {
            self.access(a, &mut sc, &mut body);
        }
        let res = if k < depth {
            // The next level's rows: in a block of their own, or in place
            // in this iteration's row.
            let shape: Vec<String> = self.sizes[k..].iter().map(|s| s.0.clone()).collect();
            let inner = if self.coin(0.5) {
                let m = self.name("m");
                let total = shape.iter().fold("1".to_string(), |a, s| mul(&a, s));
                body.push(format!("let ({m}: mem) = alloc {total}"));
                Place {
                    block: m,
                    offset: "0".into(),
                    strides: row_major(&shape),
                    rm: self.coin(0.5),
                }
            } else {
                Place {
                    block: place.block.clone(),
                    offset: add(&place.offset, &mul(&i, &place.strides[0])),
                    strides: place.strides[1..].to_vec(),
                    rm: false,
                }
            };
            let row = self.level(k + 1, &inner, &sc, &mut body);
            for a in here.iter().filter(|a| !a.early) {
                self.access(a, &mut sc, &mut body);
            }
            row
        } else {
            for a in here.iter().filter(|a| !a.early) {
                self.access(a, &mut sc, &mut body);
            }
            let v = self.name("v");
            let mut e = self.pick(&sc.ints);
            if sc.ints.len() > 1 && self.coin(0.6) {
                let f = self.pick(&sc.ints);
                e = format!("{e} + {f}");
            }
            body.push(format!("let ({v}: int) = {e}"));
            v
        };
        let shape: Vec<String> = self.sizes[k - 1..].iter().map(|s| s.0.clone()).collect();
        out.push(format!(
            "let ({r}: {}) = kernel {i} < {} do",
            ty(&shape, place),
            shape[0]
        ));
        out.extend(indent(body));
        out.push(format!("  in ({res})"));
        r
    }

    /// One racing access, under the `if` that makes it happen in exactly
    /// one iteration of the nest.
    fn access(&mut self, a: &Acc, sc: &mut Scope, out: &mut Vec<String>) {
        // The indices of levels 1 .. a.level are the last ones in scope.
        let idx: Vec<String> = sc.idx[sc.idx.len() - a.level..].to_vec();
        let mut want = self.outer.clone();
        want.push(a.iter);
        want.extend(&a.inner);
        let conds: Vec<String> = idx
            .iter()
            .zip(&want)
            .map(|(i, v)| format!("{i} == {v}"))
            .collect();
        let c = self.name("c");
        out.push(format!("let ({c}: int) = {}", conds.join(" && ")));
        let sh = self.sh().clone();
        let cell_place = Place {
            block: sh.block.clone(),
            offset: add(&sh.base, &sh.cell.to_string()),
            strides: vec!["1".into()],
            rm: false,
        };
        let one = vec!["1".to_string()];
        let mut then = Vec::new();
        let z = self.name("z");
        if a.write {
            let w = self.name("w");
            let wty = ty(&one, &cell_place);
            match a.how {
                How::Direct => then.push(format!("let ({w}: {wty}) = iota 1")),
                How::Copy => {
                    let t = self.name("t");
                    let y = self.name("y");
                    let e = self.nonneg(sc);
                    then.push(format!("let ({t}: int) = ({e}) % nx"));
                    let src = Place {
                        block: "xm".into(),
                        offset: add(&self.xs_off, &t),
                        strides: vec!["1".into()],
                        rm: false,
                    };
                    then.push(format!("let ({y}: {}) = xs[{t}:1]", ty(&one, &src)));
                    then.push(format!("let ({w}: {wty}) = copy {y}"));
                }
                How::Kernel => {
                    let j = self.name("j");
                    let v = self.name("v");
                    let e = self.nonneg(sc);
                    then.push(format!("let ({w}: {wty}) = kernel {j} < 1 do"));
                    then.push(format!("  let ({v}: int) = {e} + {j}"));
                    then.push(format!("  in ({v})"));
                }
            }
            then.push(format!("let ({z}: int) = 1"));
        } else {
            let cell = sh.cell;
            match a.how {
                How::Direct => then.push(format!("let ({z}: int) = {}[{cell}]", sh.name)),
                How::Copy => {
                    let y = self.name("y");
                    let m = self.name("pm");
                    let p = self.name("pa");
                    then.push(format!(
                        "let ({y}: {}) = {}[{cell}:1]",
                        ty(&one, &cell_place),
                        sh.name
                    ));
                    then.push(format!("let ({m}: mem) = alloc 1"));
                    then.push(format!("let ({p}: [1]int @ {m} -> R(1)) = copy {y}"));
                    then.push(format!("let ({z}: int) = {p}[0]"));
                }
                How::Kernel => {
                    let j = self.name("j");
                    let v = self.name("v");
                    let m = self.name("pm");
                    let p = self.name("pa");
                    then.push(format!("let ({m}: mem) = alloc 1"));
                    then.push(format!(
                        "let ({p}: [1]int @ {m} -> R(1)) = kernel {j} < 1 do"
                    ));
                    then.push(format!("  let ({v}: int) = {}[{cell}]", sh.name));
                    then.push(format!("  in ({v})"));
                    then.push(format!("let ({z}: int) = {p}[0]"));
                }
            }
        }
        let u = self.name("u");
        let z0 = self.name("z");
        out.push(format!("let ({u}: int) = if {c} then"));
        out.extend(indent(then));
        out.push(format!("  in ({z})"));
        out.push("else".into());
        out.push(format!("  let ({z0}: int) = 0"));
        out.push(format!("  in ({z0})"));
        sc.ints.push(u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{reference_heap, RefOutcome};
    use funmem_lang::check::check_program;
    use funmem_semantics::error::{ErrorKind, Limits};
    use funmem_semantics::heap::run_heap;
    use funmem_semantics::observer::NoObserver;
    use rand::SeedableRng;

    /// The race with its kernel's position, for comparisons (spans compare
    /// equal whatever their positions).
    fn key(r: &Race) -> (usize, usize, usize, i64, Access, Access) {
        (
            r.kernel.start,
            r.kernel.end,
            r.block,
            r.offset,
            r.first.clone(),
            r.second.clone(),
        )
    }

    fn at_level(mut r: Race) -> Race {
        r.first.path.truncate(1);
        r.second.path.truncate(1);
        r
    }

    #[test]
    fn every_program_has_its_one_race_and_the_detector_reports_it() {
        let cfg = GenConfig::default();
        let mut orders = [0usize; 2];
        let mut kinds = [0usize; 2];
        let mut inner = 0;
        for seed in 0..400 {
            let rc = gen_race(&mut Rng::seed_from_u64(seed), &cfg);
            let p = &rc.case.program;
            let show = || format!("seed {seed}:\n{p}\ninputs {:?}", rc.case.inputs);
            if let Err(d) = check_program(p) {
                panic!("does not type-check: {}\n{}", d.message, show());
            }
            assert_ne!(rc.race.kernel.end, 0, "{}", show());
            match reference_heap(p, &rc.case.inputs, 1_000_000) {
                RefOutcome::Race { conflicts } => {
                    let got: Vec<_> = conflicts.iter().map(key).collect();
                    assert_eq!(got, vec![key(&rc.race)], "{}", show());
                }
                r => panic!("the reference finds no race: {r:?}\n{}", show()),
            }
            match run_heap(p, &rc.case.inputs, Limits::default(), true, &mut NoObserver) {
                Err(e) => match e.kind {
                    ErrorKind::Race(r) => {
                        assert_eq!(key(&at_level(*r)), key(&rc.race), "{}", show())
                    }
                    _ => panic!("the detector reports {e}\n{}", show()),
                },
                Ok(_) => panic!("the detector finds no race\n{}", show()),
            }
            orders[usize::from(rc.race.first.write)] += 1;
            kinds[usize::from(rc.race.first.write && rc.race.second.write)] += 1;
            inner += usize::from(rc.level > 1);
        }
        // Both orders (the read first, the write first), write-write
        // races, and races of inner kernels.
        assert!(orders[0] > 50 && orders[1] > 50, "{orders:?}");
        assert!(kinds[1] > 30, "{kinds:?}");
        assert!(inner > 30, "{inner}");
    }
}
