//! Random FUNMEM programs written directly, not lowered from FUN, with
//! inputs: the memory layouts a lowering never makes, for the heap
//! semantics, its race detector and validity (Def. 3.1).
//!
//! Every program type-checks (FUNMEM's rules, docs/language.md). Sizes are
//! small (at most 4, or `max_size` if smaller), so that a brute-force
//! semantics ([`crate::reference`]) runs them cheaply. The programs use:
//!
//! - LMADs that are not row-major: offsets (`3 + {(n : 1)}`), strides with
//!   gaps (`1 + {(n : 2)}`), reversed (`n - 1 + {(n : -1)}`), column-major
//!   (`0 + {(n : 1) (m : n)}`), padded rows;
//! - several arrays in one block, side by side or interleaved, in `alloc`ed
//!   blocks and in `mem` parameters;
//! - kernels, nested ones among them, whose rows are built in place in the
//!   result's block (at `index_f` of its LMAD) or in blocks of their own;
//! - slices and transposes (with exactly the derived LMAD), and `if`s that
//!   return arrays with their block, offset and strides;
//! - copies within one block, on both sides of what the simplifier's
//!   removal of copies compares: onto the source's own place (redundant),
//!   to another offset with the same strides (then sometimes a fresh
//!   array over the source's place), one cell further (overlapping), and
//!   to the same offset with other strides.
//!
//! Each construct of loops and updates is enabled in a share of the
//! programs (`GenConfig::constructs`, as for FUN; with every share 0 the
//! programs are exactly those of the generator before these constructs),
//! and then a quarter of the statements drawn are of the enabled ones
//! (the racing and failing flavours plant hazards of them too: a
//! stride-0 second kernel result, a loop updating a shared scratch array
//! in each kernel iteration, an update one past the end, a negative
//! `replicate`):
//!
//! - updates of fresh arrays in blocks of their own (any layout, so
//!   through non-row-major LMADs), of elements, ranges and rows; the
//!   updated array and whatever shares its block leave the scope;
//! - `concat` and `replicate` into fresh blocks at any layout;
//! - kernels with two or three results, in blocks of their own or side by
//!   side in one, rows built in place;
//! - loops (`for`, or `while` over a counter) whose array parameters carry
//!   their block, offset and strides as parameters (existential memory:
//!   each iteration returns any array of the shape, fresh or not); double
//!   buffering (two blocks swapped each iteration); a fresh array updated
//!   in place in the block the loop carries; an array growing by one
//!   element each iteration (its size a parameter).
//!
//! Each program is drawn with a *flavour*:
//!
//! - valid: every fresh array gets a place nobody else uses, so the heap
//!   semantics agrees with the value semantics;
//! - racing: one kernel breaks eq. 4 (a result LMAD with stride 0, rows
//!   built at one place for every iteration, a scratch block shared by the
//!   iterations, an inner kernel with stride 0, a kernel writing over an
//!   array that other iterations read, directly or through the memcopy of
//!   their results);
//! - invalid: race free, but a block is reused while a value in it is still
//!   live and that value (or a slice or transpose of it) is used later (an
//!   in-place map, a fresh array over a live one, a copy shifted by one
//!   cell in its source's block), or the inputs overlap in their block, or
//!   a layout folds elements onto one cell; so the heap results differ
//!   from the value results;
//! - failing (a share `fail_share` of the programs): an index or slice out
//!   of bounds, a division by zero, a block too small for its array, a
//!   negative size; some of these also race before they get stuck.
//!
//! [`gen_funmem`] draws every flavour (the OpenCL comparison judges each
//! program as it is); [`gen_funmem_valid`], for campaigns of the passes,
//! draws only valid and failing programs, and only failures that get stuck
//! in both semantics alike (no race first, no block too small, no negative
//! `alloc`, which the value semantics never sees).
//!
//! A flavour is an intention: a racing kernel of one iteration does not
//! race, and an overwrite with equal values changes nothing. Generation is
//! deterministic given the random number generator.

use crate::{Case, Constructs, GenConfig, Rng};
use funmem_lang::ast::Lang;
use funmem_lang::parse::parse_program;
use funmem_lang::prim::Const;
use funmem_semantics::value::{ArrayValue, Elems, Value};
use rand::RngExt;

/// The nesting levels (counted from 0 at the top) at which multi-result
/// kernels and loops are made.
const NEW_NESTING: usize = 4;

/// Generates a random, well-typed FUNMEM program with inputs for it, of
/// any flavour (valid, racing, invalid, failing).
pub fn gen_funmem(rng: &mut Rng, cfg: &GenConfig) -> Case {
    generate(rng, cfg, false)
}

/// Generates a random, well-typed FUNMEM program for a fuzz campaign of
/// the passes: valid, or (a share `fail_share`) failing, where it gets
/// stuck in both semantics alike and never races. Either way the source
/// passes every check, so a failure at a later stage is the passes'.
pub fn gen_funmem_valid(rng: &mut Rng, cfg: &GenConfig) -> Case {
    generate(rng, cfg, true)
}

fn generate(rng: &mut Rng, cfg: &GenConfig, valid_only: bool) -> Case {
    let mut g = Gen {
        rng,
        max_stms: cfg.max_stms.max(2),
        max_depth: cfg.max_depth,
        max_size: cfg.max_size.clamp(1, 4),
        fail_share: cfg.fail_share.clamp(0.0, 1.0),
        valid_only,
        constructs: cfg.constructs,
        kinds: Vec::new(),
        share: 0.0,
        next: 0,
        forced: Vec::new(),
    };
    let (text, inputs) = g.program();
    let program = match parse_program(&text, Lang::FunMem) {
        Ok(p) => p,
        Err(d) => panic!(
            "gen_funmem made a program that does not parse: {}\n{text}",
            d.message
        ),
    };
    Case { program, inputs }
}

/// A size: an atom of the program and its value on the generated inputs.
#[derive(Clone, Debug, PartialEq)]
struct Size {
    atom: String,
    val: i64,
}

/// Where an array lives: a block and an LMAD whose element counts are the
/// array's sizes (offset and strides are scalar expressions, as text).
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) block: String,
    pub(crate) offset: String,
    pub(crate) strides: Vec<String>,
    /// Printed as `R(...)` (only for offset 0 and row-major strides).
    pub(crate) rm: bool,
}

/// An array in scope.
#[derive(Clone, Debug)]
struct Arr {
    name: String,
    shape: Vec<Size>,
    place: Place,
}

/// The `offset : size` pairs of a slice, as text.
type Pairs = Vec<(String, String)>;

/// A layout for a fresh array, with a block size that holds it.
struct Layout {
    offset: String,
    strides: Vec<String>,
    size: String,
    rm: bool,
}

/// What is visible where a statement is generated.
#[derive(Clone, Debug, Default)]
struct Scope {
    /// `int` variables whose value is known (usable as sizes).
    sizes: Vec<Size>,
    /// `int` variables for scalar expressions and conditions.
    ints: Vec<String>,
    /// Kernel indices with their kernel's size (values 0 .. size-1).
    idx: Vec<(String, i64)>,
    /// Arrays.
    arrs: Vec<Arr>,
    /// Nesting of kernels and `if`s still allowed.
    depth: usize,
    /// Whether this is the program's body (not a kernel body or branch).
    top: bool,
    /// The blocks an `if`'s existential block may be (its branches'
    /// blocks, as they may be in turn); a block not listed is only itself.
    may_be: Vec<(String, Vec<String>)>,
}

impl Scope {
    /// The blocks `b` may be.
    fn roots(&self, b: &str) -> Vec<String> {
        match self.may_be.iter().find(|(x, _)| x == b) {
            Some((_, r)) => r.clone(),
            None => vec![b.to_string()],
        }
    }

    /// Removes from the scope every array whose block may be one that
    /// `block` may be (an update of an array in `block` consumes them all).
    fn forget_block(&mut self, block: &str) {
        let gone = self.roots(block);
        let may_be = self.may_be.clone();
        let roots = |b: &str| match may_be.iter().find(|(x, _)| x == b) {
            Some((_, r)) => r.clone(),
            None => vec![b.to_string()],
        };
        self.arrs
            .retain(|a| roots(&a.place.block).iter().all(|r| !gone.contains(r)));
    }

    /// Binds the array `name` and returns it.
    fn bind(&mut self, name: String, shape: Vec<Size>, place: Place) -> Arr {
        let arr = Arr { name, shape, place };
        self.arrs.push(arr.clone());
        arr
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    Valid,
    Race,
    Invalid,
    Fail,
}

/// A construct of loops and in-place updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Loop,
    Update,
    Concat,
    Replicate,
    MultiKernel,
    /// Arrays of other element types sharing a block with an `int` one.
    Typed,
    Reduce,
    Scan,
    /// Partial indexing: a row as a view.
    Row,
}

/// How a kernel's first read relates to its own iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadAt {
    /// `x[i]`: the iteration's own element.
    Same,
    /// `x[0]`: iteration 0's element.
    Zero,
    /// `x[(i + 1) % n]`: the next iteration's element.
    Next,
}

/// A planted hazard in a kernel.
#[derive(Clone, Debug)]
enum KHaz {
    None,
    /// Each iteration builds its row at row 0's place (race).
    FixedRow,
    /// Each iteration builds its row in this one place (race).
    Scratch(Place),
    /// Each iteration's row is made by a kernel with an outer stride 0
    /// (race of the inner kernel).
    InnerStride0,
    /// The body reads this 1-D array first; the kernel writes over it. Other
    /// arrays of its block are not read.
    ReadFirst(Arr, ReadAt),
    /// Arrays in this block are not read (the kernel writes over it).
    Avoid(String),
    /// A statement that gets stuck somewhere in the body.
    Fail,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    max_stms: usize,
    max_depth: usize,
    max_size: i64,
    fail_share: f64,
    /// Only the valid and failing flavours, and only failures that get
    /// stuck in both semantics (no race, no block too small).
    valid_only: bool,
    /// The shares of programs with each construct of loops and updates.
    constructs: Constructs,
    /// The constructs this program may use.
    kinds: Vec<Kind>,
    /// The share of statements drawn from [`Gen::new_stm`] (0 when
    /// `kinds` is empty).
    share: f64,
    next: usize,
    /// Names the program must return (the victims of planted hazards).
    forced: Vec<String>,
}

pub(crate) fn indent(lines: Vec<String>) -> impl Iterator<Item = String> {
    lines.into_iter().map(|l| format!("  {l}"))
}

/// Whether a scalar expression's text is a single atom.
fn simple(e: &str) -> bool {
    let e = e.strip_prefix('-').unwrap_or(e);
    !e.is_empty() && e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(crate) fn paren(e: &str) -> String {
    if simple(e) {
        e.to_string()
    } else {
        format!("({e})")
    }
}

pub(crate) fn add(a: &str, b: &str) -> String {
    match (a, b) {
        ("0", _) => b.to_string(),
        (_, "0") => a.to_string(),
        _ => format!("{a} + {}", paren(b)),
    }
}

pub(crate) fn mul(a: &str, b: &str) -> String {
    match (a, b) {
        ("0", _) | (_, "0") => "0".to_string(),
        ("1", _) => b.to_string(),
        (_, "1") => a.to_string(),
        _ => format!("{} * {}", paren(a), paren(b)),
    }
}

fn lit(k: i64) -> Size {
    Size {
        atom: k.to_string(),
        val: k,
    }
}

fn same_shape(a: &[Size], b: &[Size]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.atom == y.atom)
}

/// The text of an array type.
fn ty(shape: &[Size], p: &Place) -> String {
    let atoms: Vec<&str> = shape.iter().map(|s| s.atom.as_str()).collect();
    type_text(&atoms, p)
}

/// The text of an array type of these sizes (atoms) at a place.
pub(crate) fn type_text(shape: &[&str], p: &Place) -> String {
    let dims: String = shape.iter().map(|s| format!("[{s}]")).collect();
    let lmad = if p.rm {
        format!("R({})", shape.join(", "))
    } else {
        let ds: Vec<String> = shape
            .iter()
            .zip(&p.strides)
            .map(|(s, st)| format!("({s} : {st})"))
            .collect();
        format!("{} + {{{}}}", paren(&p.offset), ds.join(" "))
    };
    format!("{dims}int @ {} -> {lmad}", p.block)
}

/// index_f of a place: the place of row `i`.
fn row_place(p: &Place, i: &str) -> Place {
    Place {
        block: p.block.clone(),
        offset: add(&p.offset, &mul(i, &p.strides[0])),
        strides: p.strides[1..].to_vec(),
        rm: false,
    }
}

impl Gen<'_> {
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
        self.rng.random_range(lo..=hi)
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())].clone()
    }

    /// A value for a size parameter: rarely 0 or 1.
    fn size_value(&mut self) -> i64 {
        match self.range(0, 19) {
            0 => 0,
            1..=3 => 1,
            _ => self.range(2.min(self.max_size), self.max_size),
        }
    }

    /// A size: a known variable or a literal.
    fn size(&mut self, sc: &Scope) -> Size {
        if !sc.sizes.is_empty() && self.coin(0.6) {
            self.pick(&sc.sizes)
        } else if self.coin(0.08) {
            lit(0)
        } else {
            lit(self.range(1, 3.min(self.max_size)))
        }
    }

    /// A size of at least `min` (a literal when no variable has one).
    fn size_min(&mut self, sc: &Scope, min: i64) -> Size {
        let ok: Vec<Size> = sc.sizes.iter().filter(|s| s.val >= min).cloned().collect();
        if !ok.is_empty() && self.coin(0.6) {
            self.pick(&ok)
        } else {
            lit(self.range(min, min.max(self.max_size)))
        }
    }

    fn shape(&mut self, sc: &Scope) -> Vec<Size> {
        let rank = if sc.depth == 0 || self.coin(0.65) {
            1
        } else {
            2
        };
        (0..rank).map(|_| self.size(sc)).collect()
    }

    /// A random layout for a fresh array of this shape.
    fn layout(&mut self, shape: &[Size]) -> Layout {
        let a = &shape[0].atom;
        let k = self.range(0, 3).to_string();
        if shape.len() == 1 {
            match self.range(0, 5) {
                0 | 1 => Layout {
                    offset: "0".into(),
                    strides: vec!["1".into()],
                    size: a.clone(),
                    rm: self.coin(0.5),
                },
                2 => Layout {
                    size: add(&k, a),
                    offset: k,
                    strides: vec!["1".into()],
                    rm: false,
                },
                3 => {
                    let s = self.range(2, 3).to_string();
                    Layout {
                        size: add(&k, &mul(&s, a)),
                        offset: k,
                        strides: vec![s],
                        rm: false,
                    }
                }
                _ => Layout {
                    offset: format!("{a} - 1"),
                    strides: vec!["-1".into()],
                    size: a.clone(),
                    rm: false,
                },
            }
        } else {
            let b = &shape[1].atom;
            let ab = mul(a, b);
            match self.range(0, 5) {
                0 | 1 => Layout {
                    offset: "0".into(),
                    strides: vec![b.clone(), "1".into()],
                    size: ab,
                    rm: self.coin(0.5),
                },
                2 => Layout {
                    offset: "0".into(),
                    strides: vec!["1".into(), a.clone()],
                    size: ab,
                    rm: false,
                },
                3 => {
                    let b1 = format!("{b} + 1");
                    Layout {
                        size: add(&k, &mul(a, &b1)),
                        offset: k,
                        strides: vec![b1, "1".into()],
                        rm: false,
                    }
                }
                4 => Layout {
                    offset: format!("{} - 1", paren(&ab)),
                    strides: vec!["-1".into(), format!("-{a}")],
                    size: ab,
                    rm: false,
                },
                _ => Layout {
                    size: add(&k, &mul("2", &ab)),
                    offset: k,
                    strides: vec!["2".into(), mul("2", a)],
                    rm: false,
                },
            }
        }
    }

    /// Two layouts of one shape that share a block without overlapping:
    /// side by side or interleaved.
    fn pair_layout(&mut self, shape: &[Size]) -> (Layout, Layout, String) {
        if self.coin(0.5) {
            let l1 = self.layout(shape);
            let mut l2 = self.layout(shape);
            l2.offset = add(&paren(&l1.size), &l2.offset);
            l2.rm = false;
            let size = add(&paren(&l1.size), &paren(&l2.size));
            (l1, l2, size)
        } else {
            let a = &shape[0].atom;
            let (strides, size) = if shape.len() == 1 {
                (vec!["2".to_string()], mul("2", a))
            } else {
                let b = &shape[1].atom;
                let ab = mul(a, b);
                if self.coin(0.5) {
                    (vec![mul("2", b), "2".into()], mul("2", &ab))
                } else {
                    (vec!["2".into(), mul("2", a)], mul("2", &ab))
                }
            };
            let l = |o: &str| Layout {
                offset: o.into(),
                strides: strides.clone(),
                size: size.clone(),
                rm: false,
            };
            (l("0"), l("1"), size)
        }
    }

    /// A scalar expression over the integers in scope.
    fn sexp(&mut self, sc: &Scope, depth: u32) -> String {
        if depth == 0 || self.coin(0.3) {
            if !sc.ints.is_empty() && self.coin(0.7) {
                return self.pick(&sc.ints);
            }
            return self.range(-3, 9).to_string();
        }
        let a = paren(&self.sexp(sc, depth - 1));
        let b = paren(&self.sexp(sc, depth - 1));
        let nz = {
            let k = self.range(1, 4);
            if self.coin(0.2) {
                -k
            } else {
                k
            }
        };
        match self.range(0, 10) {
            0 | 1 => format!("{a} + {b}"),
            2 => format!("{a} - {b}"),
            3 | 4 => format!("{a} * {b}"),
            5 => format!("min({a}, {b})"),
            6 => format!("max({a}, {b})"),
            // Truth values as ints, explicitly (strictly typed).
            7 => format!("i64({a} < {b})"),
            8 => format!("i64({a} == {b})"),
            9 => format!("{a} / {nz}"),
            _ => format!("{a} % {nz}"),
        }
    }

    /// An index atom within `0 .. d`, if there is one.
    fn index_atom(&mut self, sc: &Scope, d: i64) -> Option<String> {
        if d <= 0 {
            return None;
        }
        let idx: Vec<String> = sc
            .idx
            .iter()
            .filter(|(_, b)| *b <= d)
            .map(|(i, _)| i.clone())
            .collect();
        let sizes: Vec<String> = sc
            .sizes
            .iter()
            .filter(|s| s.val >= 0 && s.val < d)
            .map(|s| s.atom.clone())
            .collect();
        if !idx.is_empty() && self.coin(0.55) {
            Some(self.pick(&idx))
        } else if !sizes.is_empty() && self.coin(0.2) {
            Some(self.pick(&sizes))
        } else {
            Some(self.range(0, d - 1).to_string())
        }
    }

    /// `let (v: int) = se`.
    fn scalar_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let v = self.name("v");
        let e = self.sexp(sc, 2);
        out.push(format!("let ({v}: int) = {e}"));
        sc.ints.push(v);
    }

    /// `let (v: int) = x[...]`, in bounds.
    fn index_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) -> bool {
        let cands: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| a.shape.iter().all(|s| s.val > 0))
            .cloned()
            .collect();
        if cands.is_empty() {
            return false;
        }
        let a = self.pick(&cands);
        let ix: Vec<String> = a
            .shape
            .iter()
            .map(|s| self.index_atom(sc, s.val).unwrap_or_else(|| "0".into()))
            .collect();
        let v = self.name("v");
        out.push(format!("let ({v}: int) = {}[{}]", a.name, ix.join(", ")));
        sc.ints.push(v);
        true
    }

    /// A slice of `a` (of shape `want` if given) in bounds: its pairs and
    /// its shape, or `None` if there is none.
    fn slice_pairs(
        &mut self,
        sc: &Scope,
        a: &Arr,
        want: Option<&[Size]>,
    ) -> Option<(Pairs, Vec<Size>)> {
        let mut pairs = Vec::new();
        let mut shape = Vec::new();
        for (d, dim) in a.shape.iter().enumerate() {
            let big = dim.val;
            let k = match want {
                Some(w) => {
                    if w[d].val > big {
                        return None;
                    }
                    w[d].clone()
                }
                None => {
                    let fit: Vec<Size> = sc
                        .sizes
                        .iter()
                        .filter(|s| s.val >= 0 && s.val <= big)
                        .cloned()
                        .collect();
                    if !fit.is_empty() && self.coin(0.4) {
                        self.pick(&fit)
                    } else {
                        lit(self.range(0.min(big), big.max(0)))
                    }
                }
            };
            let room = big - k.val;
            let idx: Vec<String> = sc
                .idx
                .iter()
                .filter(|(_, b)| *b >= 1 && b - 1 <= room)
                .map(|(i, _)| i.clone())
                .collect();
            let o = if !idx.is_empty() && self.coin(0.4) {
                self.pick(&idx)
            } else {
                self.range(0, room.max(0)).to_string()
            };
            pairs.push((o, k.atom.clone()));
            shape.push(k);
        }
        Some((pairs, shape))
    }

    /// Emits `let (y: ...) = x[o : k, ...]` and returns y.
    fn emit_slice(
        &mut self,
        sc: &mut Scope,
        a: &Arr,
        pairs: Pairs,
        shape: Vec<Size>,
        out: &mut Vec<String>,
    ) -> Arr {
        let mut offset = a.place.offset.clone();
        for ((o, _), s) in pairs.iter().zip(&a.place.strides) {
            offset = add(&offset, &mul(o, s));
        }
        let place = Place {
            block: a.place.block.clone(),
            offset,
            strides: a.place.strides.clone(),
            rm: false,
        };
        let y = self.name("y");
        let ps: Vec<String> = pairs.iter().map(|(o, k)| format!("{o}:{k}")).collect();
        out.push(format!(
            "let ({y}: {}) = {}[{}]",
            ty(&shape, &place),
            a.name,
            ps.join(", ")
        ));
        sc.bind(y, shape, place)
    }

    fn slice_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) -> bool {
        if sc.arrs.is_empty() {
            return false;
        }
        let a = self.pick(&sc.arrs);
        match self.slice_pairs(sc, &a, None) {
            Some((pairs, shape)) => {
                self.emit_slice(sc, &a, pairs, shape, out);
                true
            }
            None => false,
        }
    }

    fn emit_transpose(&mut self, sc: &mut Scope, a: &Arr, out: &mut Vec<String>) -> Arr {
        let shape = vec![a.shape[1].clone(), a.shape[0].clone()];
        let place = Place {
            block: a.place.block.clone(),
            offset: a.place.offset.clone(),
            strides: vec![a.place.strides[1].clone(), a.place.strides[0].clone()],
            rm: false,
        };
        let y = self.name("t");
        out.push(format!(
            "let ({y}: {}) = transpose {}",
            ty(&shape, &place),
            a.name
        ));
        sc.bind(y, shape, place)
    }

    fn transpose_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) -> bool {
        let cands: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| a.shape.len() == 2)
            .cloned()
            .collect();
        if cands.is_empty() {
            return false;
        }
        let a = self.pick(&cands);
        self.emit_transpose(sc, &a, out);
        true
    }

    /// Allocates a block for one array of this shape and gives its place.
    fn alloc_place(&mut self, shape: &[Size], out: &mut Vec<String>) -> Place {
        let l = self.layout(shape);
        let mb = self.name("mb");
        out.push(format!("let ({mb}: mem) = alloc {}", l.size));
        Place {
            block: mb,
            offset: l.offset,
            strides: l.strides,
            rm: l.rm,
        }
    }

    /// Makes a fresh array of this shape at this place (iota, copy or
    /// kernel), adds it to the scope and returns it.
    fn fill(
        &mut self,
        sc: &mut Scope,
        shape: &[Size],
        place: Place,
        haz: &KHaz,
        out: &mut Vec<String>,
    ) -> Arr {
        let avoid = match haz {
            KHaz::Avoid(b) => Some(b.clone()),
            KHaz::ReadFirst(a, _) => Some(a.place.block.clone()),
            _ => None,
        };
        let copies: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| same_shape(&a.shape, shape))
            .filter(|a| avoid.as_ref() != Some(&a.place.block))
            .cloned()
            .collect();
        let must_kernel = !matches!(haz, KHaz::None | KHaz::Avoid(_));
        let kernel_ok = sc.depth > 0 || (shape.len() > 1 && copies.is_empty());
        let x = self.name("x");
        let what = if must_kernel || (kernel_ok && self.coin(0.6)) {
            0
        } else if shape.len() == 1 && (copies.is_empty() || self.coin(0.5)) {
            1
        } else if !copies.is_empty() {
            2
        } else {
            0
        };
        match what {
            1 => out.push(format!(
                "let ({x}: {}) = iota {}",
                ty(shape, &place),
                shape[0].atom
            )),
            2 => {
                let src = self.pick(&copies);
                out.push(format!(
                    "let ({x}: {}) = copy {}",
                    ty(shape, &place),
                    src.name
                ));
            }
            _ => self.kernel(sc, &x, shape, &place, haz, out),
        }
        sc.bind(x, shape.to_vec(), place)
    }

    /// `let (x: ...) = kernel i < n do ... in (r)`.
    fn kernel(
        &mut self,
        sc: &Scope,
        x: &str,
        shape: &[Size],
        place: &Place,
        haz: &KHaz,
        out: &mut Vec<String>,
    ) {
        let i = self.name("i");
        let mut bs = sc.clone();
        bs.top = false;
        bs.depth = sc.depth.saturating_sub(1);
        bs.ints.push(i.clone());
        bs.idx.push((i.clone(), shape[0].val));
        if let KHaz::Avoid(b) = haz {
            bs.arrs.retain(|a| a.place.block != *b);
        }
        let mut body = Vec::new();
        let mut first = None;
        if let KHaz::ReadFirst(a, at) = haz {
            bs.arrs.retain(|b| b.place.block != a.place.block);
            let ix = match at {
                ReadAt::Same => i.clone(),
                ReadAt::Zero => "0".into(),
                ReadAt::Next => {
                    let j = self.name("j");
                    body.push(format!("let ({j}: int) = ({i} + 1) % {}", shape[0].atom));
                    j
                }
            };
            let v = self.name("v");
            body.push(format!("let ({v}: int) = {}[{ix}]", a.name));
            bs.ints.push(v.clone());
            first = Some(v);
        }
        let n = self.range(0, 2.min(self.max_stms as i64)) as usize;
        let fail_at = matches!(haz, KHaz::Fail).then(|| self.range(0, n as i64) as usize);
        for k in 0..=n {
            if fail_at == Some(k) {
                self.fail_stm(&mut bs, &mut body);
            }
            if k < n {
                self.action(&mut bs, &mut body);
            }
        }
        let elem = &shape[1..];
        let r = if elem.is_empty() {
            let r = self.name("r");
            let e = match &first {
                Some(v) => format!("{v} + {}", self.range(1, 5)),
                None => self.sexp(&bs, 2),
            };
            body.push(format!("let ({r}: int) = {e}"));
            r
        } else {
            // An iteration's own row, unless the layout folds it.
            let row = Some(row_place(place, &i)).filter(|r| r.strides.iter().all(|s| s != "0"));
            self.kernel_row(&mut bs, elem, place, row, haz, &mut body)
        };
        out.push(format!(
            "let ({x}: {}) = kernel {i} < {} do",
            ty(shape, place),
            shape[0].atom
        ));
        out.extend(indent(body));
        out.push(format!("  in ({r})"));
    }

    /// The array a kernel iteration returns, of shape `elem`; `row` is the
    /// iteration's own row in the kernel's place `dest`.
    fn kernel_row(
        &mut self,
        bs: &mut Scope,
        elem: &[Size],
        dest: &Place,
        row: Option<Place>,
        haz: &KHaz,
        out: &mut Vec<String>,
    ) -> String {
        match haz {
            KHaz::FixedRow => {
                let at = Place {
                    block: dest.block.clone(),
                    offset: dest.offset.clone(),
                    strides: dest.strides[1..].to_vec(),
                    rm: false,
                };
                self.fill(bs, elem, at, &KHaz::None, out).name
            }
            KHaz::Scratch(p) => self.fill(bs, elem, p.clone(), &KHaz::None, out).name,
            KHaz::InnerStride0 => {
                let mb = self.name("mb");
                let k = self.range(0, 2);
                let mut strides = vec!["0".to_string()];
                let mut size = format!("{}", k + 1);
                if elem.len() > 1 {
                    strides.push("1".into());
                    size = add(&size, &elem[1].atom);
                }
                out.push(format!("let ({mb}: mem) = alloc {size}"));
                let at = Place {
                    block: mb,
                    offset: k.to_string(),
                    strides,
                    rm: false,
                };
                let x = self.name("x");
                let mut inner = bs.clone();
                inner.depth = inner.depth.max(1);
                self.kernel(&inner, &x, elem, &at, &KHaz::None, out);
                x
            }
            _ => self.array_of_shape(bs, elem, row, out).name,
        }
    }

    /// An array of this shape: one in scope, a slice, or a fresh one (in
    /// `row` if given, or in a block of its own).
    fn array_of_shape(
        &mut self,
        sc: &mut Scope,
        shape: &[Size],
        row: Option<Place>,
        out: &mut Vec<String>,
    ) -> Arr {
        let have: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| same_shape(&a.shape, shape))
            .cloned()
            .collect();
        if !have.is_empty() && self.coin(0.2) {
            return self.pick(&have);
        }
        if !sc.arrs.is_empty() && self.coin(0.25) {
            let a = self.pick(&sc.arrs);
            if a.shape.len() == shape.len() {
                if let Some((pairs, sh)) = self.slice_pairs(sc, &a, Some(shape)) {
                    return self.emit_slice(sc, &a, pairs, sh, out);
                }
            }
        }
        let place = match row {
            Some(r) if self.coin(0.5) => r,
            _ => self.alloc_place(shape, out),
        };
        self.fill(sc, shape, place, &KHaz::None, out)
    }

    /// A fresh array in a block of its own.
    fn fresh_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let place = self.alloc_place(&shape, out);
        self.fill(sc, &shape, place, &KHaz::None, out);
    }

    /// A copy within one block, on each side of what the simplifier's
    /// removal of copies compares (block, offset and strides):
    ///
    /// - onto its source's very place: a copy that changes nothing (its
    ///   LMAD sometimes written another way);
    /// - with the source's strides at another offset, beside or between the
    ///   source's cells, after which a fresh array sometimes takes the
    ///   source's place (the copy must keep the old values);
    /// - with the source's strides one cell further, overlapping it;
    /// - at the source's offset with other strides.
    ///
    /// A source whose cells the copy (or a later array) writes over is not
    /// used again.
    fn copy_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let x = self.name("x");
        let copy = |x: &str, shape: &[Size], place: &Place, src: &str| {
            format!("let ({x}: {}) = copy {src}", ty(shape, place))
        };
        match self.range(0, 5) {
            // Onto its own place. In a kernel, only onto a place of the
            // iteration's own (an array in scope may be the other
            // iterations' too, and they would race).
            0 | 1 => {
                let cands: Vec<Arr> = if sc.idx.is_empty() {
                    sc.arrs.clone()
                } else {
                    Vec::new()
                };
                let src = if !cands.is_empty() && self.coin(0.5) {
                    self.pick(&cands)
                } else {
                    let place = self.alloc_place(&shape, out);
                    self.fill(sc, &shape, place, &KHaz::None, out)
                };
                let mut place = src.place.clone();
                if place.rm {
                    place.rm = false;
                } else if self.coin(0.3) {
                    place.offset = mul(&paren(&place.offset), "1 + 0");
                }
                out.push(copy(&x, &src.shape, &place, &src.name));
                sc.bind(x, src.shape, place);
            }
            // The same strides, another offset.
            2 | 3 => {
                let (src_place, dst_place, size, overlap) = if self.coin(0.4) {
                    // Interleaved: the cells of one between the other's.
                    let (l1, l2, size) = loop {
                        let (l1, l2, size) = self.pair_layout(&shape);
                        if l1.strides == l2.strides {
                            break (l1, l2, size);
                        }
                    };
                    (l1, l2, size, false)
                } else {
                    let l1 = self.layout(&shape);
                    let overlap = self.coin(0.3);
                    let (offset, size) = if overlap {
                        (add(&l1.offset, "1"), add(&paren(&l1.size), "1"))
                    } else {
                        (
                            add(&paren(&l1.size), &l1.offset),
                            mul("2", &paren(&l1.size)),
                        )
                    };
                    let l2 = Layout {
                        offset,
                        strides: l1.strides.clone(),
                        size: size.clone(),
                        rm: false,
                    };
                    (l1, l2, size, overlap)
                };
                let mb = self.name("mb");
                out.push(format!("let ({mb}: mem) = alloc {size}"));
                let at = |l: Layout| Place {
                    block: mb.clone(),
                    offset: l.offset,
                    strides: l.strides,
                    rm: l.rm,
                };
                let (sp, dp) = (at(src_place), at(dst_place));
                let src = self.fill(sc, &shape, sp.clone(), &KHaz::None, out);
                out.push(copy(&x, &shape, &dp, &src.name));
                sc.arrs.retain(|a| a.name != src.name);
                sc.bind(x.clone(), shape.clone(), dp);
                if !overlap && self.coin(0.6) {
                    self.fill(sc, &shape, sp, &KHaz::None, out);
                }
                if sc.top && self.coin(0.5) {
                    self.forced.push(x);
                }
            }
            // The same offset, other strides.
            _ => {
                let k = self.range(0, 2).to_string();
                let a = shape[0].atom.clone();
                let (mut s1, mut s2, size) = if shape.len() == 1 {
                    (vec!["1".to_string()], vec!["2".to_string()], mul("2", &a))
                } else {
                    let b = shape[1].atom.clone();
                    (
                        vec![b.clone(), "1".into()],
                        vec!["1".into(), a.clone()],
                        mul(&a, &b),
                    )
                };
                if self.coin(0.5) {
                    std::mem::swap(&mut s1, &mut s2);
                }
                let mb = self.name("mb");
                out.push(format!(
                    "let ({mb}: mem) = alloc {}",
                    add(&k, &paren(&size))
                ));
                let at = |strides: Vec<String>| Place {
                    block: mb.clone(),
                    offset: k.clone(),
                    strides,
                    rm: false,
                };
                let src = self.fill(sc, &shape, at(s1), &KHaz::None, out);
                let dp = at(s2);
                out.push(copy(&x, &shape, &dp, &src.name));
                sc.arrs.retain(|a| a.name != src.name);
                sc.bind(x, shape, dp);
            }
        }
    }

    /// Two fresh arrays sharing one block, side by side or interleaved.
    fn pair_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let (l1, l2, size) = self.pair_layout(&shape);
        let mb = self.name("mb");
        out.push(format!("let ({mb}: mem) = alloc {size}"));
        for l in [l1, l2] {
            let place = Place {
                block: mb.clone(),
                offset: l.offset,
                strides: l.strides,
                rm: l.rm,
            };
            self.fill(sc, &shape, place, &KHaz::None, out);
        }
    }

    /// `let (k: int) = ...` with a known value, usable as a size.
    fn size_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let s = self.size(sc);
        let k = self.name("k");
        let (e, v) = match self.range(0, 2) {
            0 if s.val >= 1 => (format!("{} - 1", s.atom), s.val - 1),
            1 if s.val < self.max_size => (format!("{} + 1", s.atom), s.val + 1),
            _ => (
                format!("min({}, {})", s.atom, self.max_size),
                s.val.min(self.max_size),
            ),
        };
        out.push(format!("let ({k}: int) = {e}"));
        sc.ints.push(k.clone());
        sc.sizes.push(Size { atom: k, val: v });
    }

    /// An `if` returning an array with its offset, strides and block (and
    /// sometimes an integer).
    fn if_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let cond = self.pick(&sc.ints);
        let zo = self.name("zo");
        let zs: Vec<String> = shape.iter().map(|_| self.name("zs")).collect();
        let zm = self.name("zm");
        let z = self.name("z");
        let zv = self.coin(0.4).then(|| self.name("zv"));
        let zplace = Place {
            block: zm.clone(),
            offset: zo.clone(),
            strides: zs.clone(),
            rm: false,
        };
        let mut pats = vec![format!("({zo}: int)")];
        pats.extend(zs.iter().map(|s| format!("({s}: int)")));
        pats.push(format!("({zm}: mem)"));
        pats.push(format!("({z}: {})", ty(&shape, &zplace)));
        if let Some(v) = &zv {
            pats.push(format!("({v}: int)"));
        }
        out.push(format!("let {} = if {cond} then", pats.join(" ")));
        let mut zroots: Vec<String> = Vec::new();
        for k in 0..2 {
            if k == 1 {
                out.push("else".into());
            }
            let mut bs = sc.clone();
            bs.top = false;
            bs.depth = sc.depth.saturating_sub(1);
            let mut b = Vec::new();
            for _ in 0..self.range(0, 2) {
                self.action(&mut bs, &mut b);
            }
            let a = self.array_of_shape(&mut bs, &shape, None, &mut b);
            let o = self.name("o");
            b.push(format!("let ({o}: int) = {}", a.place.offset));
            let mut res = vec![o];
            for st in &a.place.strides {
                let s = self.name("s");
                b.push(format!("let ({s}: int) = {st}"));
                res.push(s);
            }
            for r in bs.roots(&a.place.block) {
                if !zroots.contains(&r) {
                    zroots.push(r);
                }
            }
            res.push(a.place.block.clone());
            res.push(a.name.clone());
            if zv.is_some() {
                res.push(self.pick(&bs.ints));
            }
            out.extend(indent(b));
            out.push(format!("  in ({})", res.join(", ")));
        }
        sc.ints.push(zo);
        sc.ints.extend(zs);
        sc.ints.extend(zv);
        sc.may_be.push((zm, zroots));
        sc.arrs.push(Arr {
            name: z,
            shape,
            place: zplace,
        });
    }

    /// One safe statement (or a few that belong together).
    fn action(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        // (No draw at all when the share is 0: the programs of earlier
        // versions stay as they were.)
        if self.share > 0.0 && self.coin(self.share) && self.new_stm(sc, out) {
            return;
        }
        loop {
            let nested = sc.depth > 0;
            let done = match self.range(0, 99) {
                0..=11 => {
                    self.scalar_stm(sc, out);
                    true
                }
                12..=29 => self.index_stm(sc, out),
                30..=39 => self.slice_stm(sc, out),
                40..=45 => self.transpose_stm(sc, out),
                46..=71 => {
                    self.fresh_stm(sc, out);
                    true
                }
                72..=77 => {
                    self.copy_stm(sc, out);
                    true
                }
                78..=85 => {
                    self.pair_stm(sc, out);
                    true
                }
                86..=94 if nested => {
                    self.if_stm(sc, out);
                    true
                }
                95..=99 if sc.top => {
                    self.size_stm(sc, out);
                    true
                }
                _ => false,
            };
            if done {
                return;
            }
        }
    }

    /// A statement that gets stuck (sometimes only in some kernel
    /// iteration), with what it needs before it.
    fn fail_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let arrs: Vec<Arr> = sc.arrs.clone();
        loop {
            match self.range(0, 9) {
                // An index out of bounds.
                0 if !arrs.is_empty() => {
                    let a = self.pick(&arrs);
                    let d = self.range(0, a.shape.len() as i64 - 1) as usize;
                    let ix: Vec<String> = a
                        .shape
                        .iter()
                        .enumerate()
                        .map(|(k, s)| {
                            if k == d {
                                s.atom.clone()
                            } else {
                                self.index_atom(sc, s.val).unwrap_or_else(|| "0".into())
                            }
                        })
                        .collect();
                    let v = self.name("v");
                    out.push(format!("let ({v}: int) = {}[{}]", a.name, ix.join(", ")));
                    sc.ints.push(v);
                    return;
                }
                // A slice out of bounds.
                1 if !arrs.is_empty() => {
                    let a = self.pick(&arrs);
                    let mut pairs = Vec::new();
                    let mut shape = Vec::new();
                    let d = self.range(0, a.shape.len() as i64 - 1) as usize;
                    for (k, s) in a.shape.iter().enumerate() {
                        if k == d {
                            pairs.push((s.atom.clone(), "1".to_string()));
                            shape.push(lit(1));
                        } else {
                            pairs.push(("0".to_string(), s.atom.clone()));
                            shape.push(s.clone());
                        }
                    }
                    self.emit_slice(sc, &a, pairs, shape, out);
                    return;
                }
                // A division by zero.
                2 => {
                    let v = self.name("v");
                    let a = self.sexp(sc, 1);
                    let z = if sc.ints.is_empty() {
                        "0".to_string()
                    } else {
                        let w = self.pick(&sc.ints);
                        format!("({w} - {w})")
                    };
                    let op = if self.coin(0.5) { "/" } else { "%" };
                    out.push(format!("let ({v}: int) = {} {op} {z}", paren(&a)));
                    sc.ints.push(v);
                    return;
                }
                // A block one cell too small (the heap semantics only).
                3 if !self.valid_only => {
                    let shape: Vec<Size> = (0..self.range(1, 2))
                        .map(|_| self.size_min(sc, 1))
                        .collect();
                    let atoms: Vec<&str> = shape.iter().map(|s| s.atom.as_str()).collect();
                    let cells = atoms.join(" * ");
                    let mb = self.name("mb");
                    out.push(format!("let ({mb}: mem) = alloc {cells} - 1"));
                    let place = Place {
                        block: mb,
                        offset: "0".into(),
                        strides: if shape.len() == 1 {
                            vec!["1".into()]
                        } else {
                            vec![shape[1].atom.clone(), "1".into()]
                        },
                        rm: true,
                    };
                    self.fill(sc, &shape, place, &KHaz::None, out);
                    return;
                }
                // A negative allocation (the heap semantics only: the
                // value semantics drops `alloc`).
                4 if !self.valid_only => {
                    let mb = self.name("mb");
                    out.push(format!("let ({mb}: mem) = alloc {} - 4", self.max_size));
                    let mb2 = self.name("mb");
                    out.push(format!("let ({mb2}: mem) = alloc 0 - {}", self.range(1, 3)));
                    return;
                }
                // A negative iota or kernel size.
                5 | 6 => {
                    let k = self.name("k");
                    out.push(format!("let ({k}: int) = 0 - {}", self.range(1, 2)));
                    let neg = Size { atom: k, val: -1 };
                    let mb = self.name("mb");
                    out.push(format!("let ({mb}: mem) = alloc 4"));
                    let place = Place {
                        block: mb,
                        offset: "0".into(),
                        strides: vec!["1".into()],
                        rm: true,
                    };
                    let x = self.name("x");
                    let shape = vec![neg.clone()];
                    if self.coin(0.5) {
                        out.push(format!(
                            "let ({x}: {}) = iota {}",
                            ty(&shape, &place),
                            neg.atom
                        ));
                    } else {
                        let i = self.name("i");
                        out.push(format!(
                            "let ({x}: {}) = kernel {i} < {} do in ({i})",
                            ty(&shape, &place),
                            neg.atom
                        ));
                    }
                    return;
                }
                // In a kernel: an index one past the end, in the last
                // iteration only.
                7 if !sc.idx.is_empty() => {
                    let (i, b) = self.pick(&sc.idx);
                    let cands: Vec<Arr> = arrs
                        .iter()
                        .filter(|a| a.shape.len() == 1 && a.shape[0].val <= b)
                        .cloned()
                        .collect();
                    if cands.is_empty() {
                        continue;
                    }
                    let a = self.pick(&cands);
                    let j = self.name("j");
                    out.push(format!("let ({j}: int) = {i} + 1"));
                    let v = self.name("v");
                    out.push(format!("let ({v}: int) = {}[{j}]", a.name));
                    sc.ints.push(v);
                    return;
                }
                // A fresh array one element past a 1-D array, in its block:
                // out of the block unless the block has room (the heap
                // semantics only).
                8 if !self.valid_only => {
                    let cands: Vec<Arr> = arrs
                        .iter()
                        .filter(|a| a.shape.len() == 1 && a.shape[0].val >= 1)
                        .cloned()
                        .collect();
                    if cands.is_empty() {
                        continue;
                    }
                    let a = self.pick(&cands);
                    let place = Place {
                        block: a.place.block.clone(),
                        offset: add(&a.place.offset, &a.place.strides[0]),
                        strides: a.place.strides.clone(),
                        rm: false,
                    };
                    self.fill(sc, &a.shape, place, &KHaz::None, out);
                    return;
                }
                _ => {}
            }
        }
    }

    /// A 1-D array in scope with at least `min` elements, made if none.
    fn victim_1d(&mut self, sc: &mut Scope, min: i64, out: &mut Vec<String>) -> Arr {
        let cands: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| a.shape.len() == 1 && a.shape[0].val >= min)
            .cloned()
            .collect();
        if !cands.is_empty() && self.coin(0.8) {
            return self.pick(&cands);
        }
        let shape = vec![self.size_min(sc, min)];
        let place = self.alloc_place(&shape, out);
        self.fill(sc, &shape, place, &KHaz::None, out)
    }

    /// A racing kernel.
    fn race_hazard(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let x = self.name("x");
        let b = self.size_min(sc, 2);
        match self.range(0, 7) {
            // A result LMAD with an outer stride 0.
            0 => {
                let mut shape = vec![b];
                let k = self.range(0, 2);
                let mut strides = vec!["0".to_string()];
                let mut size = (k + 1).to_string();
                if self.coin(0.4) {
                    let e = self.size_min(sc, 1);
                    strides.push("1".into());
                    size = add(&size, &e.atom);
                    shape.push(e);
                }
                let mb = self.name("mb");
                out.push(format!("let ({mb}: mem) = alloc {size}"));
                let place = Place {
                    block: mb,
                    offset: k.to_string(),
                    strides,
                    rm: false,
                };
                self.kernel(sc, &x, &shape, &place, &KHaz::None, out);
                self.add_arr(sc, x, shape, place);
            }
            // Every row built at row 0's place, or in one scratch place.
            1 | 2 => {
                let e = self.size_min(sc, 1);
                let shape = vec![b, e];
                let haz = if self.coin(0.5) {
                    KHaz::FixedRow
                } else {
                    KHaz::Scratch(self.alloc_place(&shape[1..], out))
                };
                let place = self.alloc_place(&shape, out);
                self.kernel(sc, &x, &shape, &place, &haz, out);
                self.add_arr(sc, x, shape, place);
            }
            // A racing inner kernel.
            3 => {
                let e = self.size_min(sc, 2);
                let shape = vec![self.size_min(sc, 1), e];
                let place = self.alloc_place(&shape, out);
                self.kernel(sc, &x, &shape, &place, &KHaz::InnerStride0, out);
                self.add_arr(sc, x, shape, place);
            }
            // Writing over an array that other iterations read.
            4 | 5 => {
                let v = self.victim_1d(sc, 2, out);
                let at = if self.coin(0.5) {
                    ReadAt::Zero
                } else {
                    ReadAt::Next
                };
                self.kernel(
                    sc,
                    &x,
                    &v.shape,
                    &v.place,
                    &KHaz::ReadFirst(v.clone(), at),
                    out,
                );
                self.add_arr(sc, x, v.shape.clone(), v.place.clone());
            }
            // Returning (or copying) an array that iteration 0 writes over:
            // the race is between a memcopy's reads and another
            // iteration's writes.
            6 => {
                let e = self.size_min(sc, 1);
                let shape = vec![b, e.clone()];
                let mb = self.name("mb");
                out.push(format!(
                    "let ({mb}: mem) = alloc {}",
                    mul(&shape[0].atom, &e.atom)
                ));
                let yplace = Place {
                    block: mb.clone(),
                    offset: "0".into(),
                    strides: vec!["1".into()],
                    rm: self.coin(0.5),
                };
                let y = self.fill(sc, std::slice::from_ref(&e), yplace, &KHaz::None, out);
                let place = Place {
                    block: mb,
                    offset: "0".into(),
                    strides: vec![e.atom.clone(), "1".into()],
                    rm: self.coin(0.5),
                };
                let i = self.name("i");
                out.push(format!(
                    "let ({x}: {}) = kernel {i} < {} do",
                    ty(&shape, &place),
                    shape[0].atom
                ));
                if self.coin(0.5) {
                    out.push(format!("  in ({})", y.name));
                } else {
                    let mt = self.name("mb");
                    let t = self.name("x");
                    let tplace = Place {
                        block: mt.clone(),
                        offset: "0".into(),
                        strides: vec!["1".into()],
                        rm: true,
                    };
                    out.push(format!("  let ({mt}: mem) = alloc {}", e.atom));
                    out.push(format!(
                        "  let ({t}: {}) = copy {}",
                        ty(std::slice::from_ref(&e), &tplace),
                        y.name
                    ));
                    out.push(format!("  in ({t})"));
                }
                self.add_arr(sc, x, shape, place);
            }
            // Writing each element one place further than it reads.
            _ => {
                let v = self.victim_1d(sc, 2, out);
                let place = Place {
                    block: v.place.block.clone(),
                    offset: add(&v.place.offset, &v.place.strides[0]),
                    strides: v.place.strides.clone(),
                    rm: false,
                };
                let haz = KHaz::ReadFirst(v.clone(), ReadAt::Same);
                self.kernel(sc, &x, &v.shape, &place, &haz, out);
                self.add_arr(sc, x, v.shape.clone(), place);
            }
        }
    }

    fn add_arr(&mut self, sc: &mut Scope, name: String, shape: Vec<Size>, place: Place) {
        sc.arrs.push(Arr { name, shape, place });
    }

    /// A block reused while a value in it is still live (race free).
    fn invalid_hazard(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        match self.range(0, 6) {
            // A copy one cell further in its source's block: memcopy reads
            // everything first, so the copy is right, but the source moved.
            5 => {
                let a = self.size_min(sc, 2);
                let mb = self.name("mb");
                out.push(format!("let ({mb}: mem) = alloc {} + 1", a.atom));
                let shape = vec![a.clone()];
                let place = Place {
                    block: mb.clone(),
                    offset: "0".into(),
                    strides: vec!["1".into()],
                    rm: self.coin(0.5),
                };
                let v = self.fill(sc, &shape, place, &KHaz::None, out);
                let x = self.name("x");
                let shifted = Place {
                    block: mb,
                    offset: "1".into(),
                    strides: vec!["1".into()],
                    rm: false,
                };
                out.push(format!(
                    "let ({x}: {}) = copy {}",
                    ty(&shape, &shifted),
                    v.name
                ));
                self.add_arr(sc, x.clone(), shape, shifted);
                self.forced.push(v.name);
                self.forced.push(x);
            }
            // An in-place map over an array used later.
            0 => {
                let v = self.victim_1d(sc, 1, out);
                let x = self.name("x");
                let haz = KHaz::ReadFirst(v.clone(), ReadAt::Same);
                self.kernel(sc, &x, &v.shape, &v.place, &haz, out);
                self.add_arr(sc, x, v.shape.clone(), v.place.clone());
                self.forced.push(v.name);
            }
            // A layout that folds each row onto one cell.
            1 => {
                let shape = vec![self.size_min(sc, 1), self.size_min(sc, 2)];
                let mb = self.name("mb");
                let k = self.range(0, 2);
                out.push(format!(
                    "let ({mb}: mem) = alloc {}",
                    add(&k.to_string(), &shape[0].atom)
                ));
                let place = Place {
                    block: mb,
                    offset: k.to_string(),
                    strides: vec!["1".into(), "0".into()],
                    rm: false,
                };
                let x = self.fill(sc, &shape, place, &KHaz::None, out);
                self.forced.push(x.name);
            }
            // A fresh array over a live one (or over what a slice or
            // transpose of it sees).
            _ => {
                let v = if !sc.arrs.is_empty() && self.coin(0.8) {
                    self.pick(&sc.arrs)
                } else {
                    let shape = self.shape(sc);
                    let place = self.alloc_place(&shape, out);
                    self.fill(sc, &shape, place, &KHaz::None, out)
                };
                let mut watched = v.name.clone();
                if self.coin(0.4) {
                    if v.shape.len() == 2 && self.coin(0.5) {
                        watched = self.emit_transpose(sc, &v, out).name;
                    } else if let Some((pairs, shape)) = self.slice_pairs(sc, &v, None) {
                        watched = self.emit_slice(sc, &v, pairs, shape, out).name;
                    }
                }
                let mut ws = sc.clone();
                ws.arrs.retain(|a| a.name != v.name);
                let haz = KHaz::Avoid(v.place.block.clone());
                let x = self.fill(&mut ws, &v.shape, v.place.clone(), &haz, out);
                sc.arrs.push(x);
                self.forced.push(watched);
            }
        }
    }

    /// The parameters, the inputs and the scope they make.
    fn params(&mut self, flavor: Flavor, sc: &mut Scope) -> (Vec<String>, Vec<Value>) {
        let mut params = Vec::new();
        let mut inputs = Vec::new();
        let mut ints = vec!["n"];
        if self.coin(0.6) {
            ints.push("m");
        }
        for s in &ints {
            let v = self.size_value();
            params.push(format!("({s}: int)"));
            inputs.push(Value::Scalar(Const::I64(v)));
            sc.sizes.push(Size {
                atom: s.to_string(),
                val: v,
            });
            sc.ints.push(s.to_string());
        }
        params.push("(c: int)".into());
        inputs.push(Value::Scalar(Const::I64(self.range(0, 1))));
        sc.ints.push("c".into());
        let mut alias = flavor == Flavor::Invalid && self.coin(0.3);
        let arrays = match self.range(0, 9) {
            0 | 1 => 0,
            2..=5 => 1,
            _ => 2,
        };
        let arrays = if alias { arrays.max(1) } else { arrays };
        let mut placed: Vec<(Vec<Size>, Place)> = Vec::new();
        let mut k = 0;
        while k < arrays {
            let shape = {
                let one = |g: &mut Self, sc: &Scope| -> Size {
                    let cands = sc.sizes.clone();
                    g.pick(&cands)
                };
                if self.coin(0.65) {
                    vec![one(self, sc)]
                } else {
                    vec![one(self, sc), one(self, sc)]
                }
            };
            let xm = self.name("xm");
            params.push(format!("({xm}: mem)"));
            let shared = k + 1 < arrays && self.coin(0.5);
            if alias {
                alias = false;
                let l = self.layout(&shape);
                let p = Place {
                    block: xm.clone(),
                    offset: l.offset,
                    strides: l.strides,
                    rm: l.rm,
                };
                if shape.len() == 1 && self.coin(0.5) {
                    // Every element at one cell.
                    let q = Place {
                        strides: vec!["0".into()],
                        rm: false,
                        ..p
                    };
                    placed.push((shape.clone(), q));
                    k += 1;
                } else {
                    // Two inputs at one place.
                    placed.push((shape.clone(), p.clone()));
                    placed.push((shape.clone(), p));
                    k += 2;
                }
                let idx = placed.len() - 1;
                self.forced.push(format!("#{idx}"));
                if placed.len() >= 2 && placed[idx - 1].1.block == xm {
                    self.forced.push(format!("#{}", idx - 1));
                }
                continue;
            }
            if shared {
                let (l1, l2, _) = self.pair_layout(&shape);
                for l in [l1, l2] {
                    placed.push((
                        shape.clone(),
                        Place {
                            block: xm.clone(),
                            offset: l.offset,
                            strides: l.strides,
                            rm: l.rm,
                        },
                    ));
                }
                k += 2;
            } else {
                let l = self.layout(&shape);
                placed.push((
                    shape,
                    Place {
                        block: xm,
                        offset: l.offset,
                        strides: l.strides,
                        rm: l.rm,
                    },
                ));
                k += 1;
            }
        }
        let mut names = Vec::new();
        for (shape, place) in placed {
            let xs = self.name("xs");
            params.push(format!("({xs}: {})", ty(&shape, &place)));
            let dims: Vec<usize> = shape.iter().map(|s| s.val as usize).collect();
            let len: usize = dims.iter().product();
            let data = Elems::I64((0..len).map(|_| self.range(-9, 9)).collect());
            inputs.push(Value::Array(ArrayValue { shape: dims, data }));
            names.push(xs.clone());
            sc.arrs.push(Arr {
                name: xs,
                shape,
                place,
            });
        }
        for f in &mut self.forced {
            if let Some(ix) = f.strip_prefix('#') {
                let ix: usize = ix.parse().unwrap_or(0);
                *f = names[ix].clone();
            }
        }
        (params, inputs)
    }

    fn program(&mut self) -> (String, Vec<Value>) {
        // Which constructs of loops and updates this program may use (no
        // draw for a share of 0: with every share 0 the programs are
        // those of the generator before these constructs).
        let c = self.constructs;
        for (share, kind) in [
            (c.loops, Kind::Loop),
            (c.update, Kind::Update),
            (c.concat, Kind::Concat),
            (c.replicate, Kind::Replicate),
            (c.multi_kernel, Kind::MultiKernel),
            (c.types, Kind::Typed),
            (c.reduce, Kind::Reduce),
            (c.scan, Kind::Scan),
            (c.index_row, Kind::Row),
        ] {
            if share > 0.0 && self.coin(share.min(1.0)) {
                self.kinds.push(kind);
            }
        }
        if !self.kinds.is_empty() {
            self.share = 0.25;
        }
        let u: f64 = self.rng.random();
        let rest = 1.0 - self.fail_share;
        let flavor = if u < self.fail_share {
            Flavor::Fail
        } else if self.valid_only || u < self.fail_share + rest * 0.5 {
            Flavor::Valid
        } else if u < self.fail_share + rest * 0.75 {
            Flavor::Race
        } else {
            Flavor::Invalid
        };
        let mut sc = Scope {
            depth: self.max_depth,
            top: true,
            ..Scope::default()
        };
        let (params, inputs) = self.params(flavor, &mut sc);
        let input_hazard = !self.forced.is_empty();
        let mut out = Vec::new();
        let n = self.range(2, self.max_stms as i64) as usize;
        let at = self.range(0, n as i64) as usize;
        for k in 0..=n {
            if k == at {
                match flavor {
                    Flavor::Valid => {}
                    Flavor::Race
                        if (self.has(Kind::MultiKernel) || self.has(Kind::Loop))
                            && self.coin(0.5) =>
                    {
                        self.race18_hazard(&mut sc, &mut out)
                    }
                    Flavor::Race => self.race_hazard(&mut sc, &mut out),
                    Flavor::Fail
                        if (self.has(Kind::Update) || self.has(Kind::Replicate))
                            && self.coin(0.5) =>
                    {
                        self.fail18_stm(&mut sc, &mut out)
                    }
                    Flavor::Invalid if input_hazard => {}
                    Flavor::Invalid => self.invalid_hazard(&mut sc, &mut out),
                    Flavor::Fail => {
                        if !self.valid_only && self.coin(0.3) {
                            self.race_hazard(&mut sc, &mut out);
                        }
                        if self.coin(0.5) {
                            self.fail_stm(&mut sc, &mut out);
                        } else {
                            let shape = self.shape(&sc);
                            let place = self.alloc_place(&shape, &mut out);
                            self.fill(&mut sc, &shape, place, &KHaz::Fail, &mut out);
                        }
                    }
                }
            }
            if k < n {
                self.action(&mut sc, &mut out);
            }
        }
        // Results: the hazards' victims, then a few arrays and integers.
        let mut res: Vec<String> = self.forced.clone();
        let want = self.range(1, 3) as usize;
        let arrs: Vec<String> = sc.arrs.iter().rev().map(|a| a.name.clone()).collect();
        for _ in 0..want {
            let x = if !arrs.is_empty() && self.coin(0.75) {
                let k = self.range(0, arrs.len().min(4) as i64 - 1) as usize;
                arrs[k].clone()
            } else {
                self.pick(&sc.ints)
            };
            if !res.contains(&x) {
                res.push(x);
            }
        }
        if self.coin(0.15) {
            let blocks: Vec<String> = sc.arrs.iter().map(|a| a.place.block.clone()).collect();
            if !blocks.is_empty() {
                let b = self.pick(&blocks);
                if !res.contains(&b) {
                    res.push(b);
                }
            }
        }
        let mut text = format!("def main {} =\n", params.join(" "));
        for l in indent(out) {
            text.push_str(&l);
            text.push('\n');
        }
        text.push_str(&format!("  in ({})\n", res.join(", ")));
        (text, inputs)
    }
}

/// How a generated loop runs: the parameters and initial values it adds
/// before the others, its header, its index (an int in the body), the
/// statements that end each iteration, the results they give, and the
/// pattern entries of the final values.
struct Form {
    params: Vec<String>,
    inits: Vec<String>,
    head: String,
    index: String,
    tail: Vec<String>,
    results: Vec<String>,
    pats: Vec<String>,
}

impl Gen<'_> {
    /// One of the constructs of loops and in-place updates (an update,
    /// `concat`, `replicate`, a kernel with several results, loops with
    /// their memory as parameters); false when none fits here.
    fn new_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) -> bool {
        // Multi-result kernels and loops nest bodies with several
        // statements each, so their work grows exponentially with depth:
        // they are made only within the first few levels of nesting (all
        // of them at the default depth of 3), whatever `max_depth` says.
        let nested = sc.depth > 0 && self.max_depth - sc.depth.min(self.max_depth) < NEW_NESTING;
        let kinds = self.kinds.clone();
        match self.pick(&kinds) {
            Kind::Update => {
                self.update_stm(sc, out);
                true
            }
            Kind::Concat => self.concat_stm(sc, out),
            Kind::Replicate => {
                self.replicate_stm(sc, out);
                true
            }
            Kind::MultiKernel if nested => {
                self.multi_kernel_stm(sc, out);
                true
            }
            Kind::Loop if nested => {
                match self.range(0, 5) {
                    0 | 1 => self.loop_any_stm(sc, out),
                    2 => self.loop_swap_stm(sc, out),
                    3 | 4 => self.loop_in_place_stm(sc, out),
                    _ => self.loop_grow_stm(sc, out),
                }
                true
            }
            Kind::Typed | Kind::Reduce | Kind::Scan => {
                self.typed_block_stm(sc, out);
                true
            }
            Kind::Row => self.row_stm(sc, out),
            _ => false,
        }
    }

    /// An `int` array and an array of another element type side by side
    /// in one block, at disjoint bytes: `alloc (n + m)` holds `n` `int`s
    /// (bytes `0 .. 8n`) and then `m` elements of the other type from
    /// byte `8n` (element offset `8n / size`); the typed array made by a
    /// kernel, then reduced (to a scalar, converted to an `int`) or
    /// scanned into a block of its own (`alloc m t`) and returned.
    fn typed_block_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let (n, m) = (self.size(sc), self.size(sc));
        let (t, per, ne, op) = match self.range(0, 3) {
            0 => ("f32", 2, "f32.inf", "min"),
            1 => ("i32", 2, "0i32", "+"),
            2 => ("f64", 1, "f64.inf", "min"),
            _ => ("bool", 8, "false", "||"),
        };
        let mb = self.name("mb");
        out.push(format!("let ({mb}: mem) = alloc {}", add(&n.atom, &m.atom)));
        let place = Place {
            block: mb.clone(),
            offset: "0".into(),
            strides: vec!["1".into()],
            rm: true,
        };
        let a = self.name("x");
        out.push(format!(
            "let ({a}: {}) = iota {}",
            ty(std::slice::from_ref(&n), &place),
            n.atom
        ));
        sc.bind(a, vec![n.clone()], place);
        let (f, i, v) = (self.name("f"), self.name("i"), self.name("v"));
        let k = if sc.ints.is_empty() || self.coin(0.5) {
            self.range(0, 9).to_string()
        } else {
            self.pick(&sc.ints)
        };
        let elem = match t {
            "bool" => format!("{i} < {k}"),
            _ => format!("{t}({i}) * {t}({k})"),
        };
        out.push(format!(
            "let ({f}: [{m}]{t} @ {mb} -> {} + {{({m} : 1)}}) = kernel {i} < {m} do let ({v}: {t}) = {elem} in ({v})",
            mul(&per.to_string(), &n.atom),
            m = m.atom
        ));
        let lambda = self.coin(0.4);
        let opx = if lambda {
            let (x, y, z) = (self.name("a"), self.name("b"), self.name("c"));
            let body = match op {
                "min" => format!("min({x}, {y})"),
                _ => format!("{x} {op} {y}"),
            };
            format!(r"(\({x}: {t}) ({y}: {t}) -> let ({z}: {t}) = {body} in ({z}))")
        } else {
            format!("({op})")
        };
        if self.has(Kind::Scan) && (!self.has(Kind::Reduce) || self.coin(0.5)) {
            let (mb2, ys) = (self.name("mb"), self.name("ys"));
            out.push(format!("let ({mb2}: mem) = alloc {} {t}", m.atom));
            out.push(format!(
                "let ({ys}: [{m}]{t} @ {mb2} -> R({m})) = scan {opx} {ne} {f}",
                m = m.atom
            ));
            if sc.top {
                self.forced.push(ys);
            } else if m.val >= 1 {
                // In a body: its first element, as an int.
                let (e, c) = (self.name("e"), self.name("c"));
                out.push(format!("let ({e}: {t}) = {ys}[0]"));
                out.push(format!("let ({c}: int) = i64({e})"));
                sc.ints.push(c);
            }
        } else {
            let (r, c) = (self.name("r"), self.name("c"));
            out.push(format!("let ({r}: {t}) = reduce {opx} {ne} {f}"));
            // A float minimum of no elements is infinite: saturates.
            out.push(format!("let ({c}: int) = i64({r})"));
            sc.ints.push(c);
        }
    }

    /// `let (r: ...) = xss[i]`: a row of an array of rank 2, a view at
    /// the row's place in the same block.
    fn row_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) -> bool {
        let cands: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| a.shape.len() == 2 && a.shape[0].val >= 1)
            .cloned()
            .collect();
        if cands.is_empty() {
            return false;
        }
        let a = self.pick(&cands);
        let i = self.range(0, a.shape[0].val - 1).to_string();
        let place = row_place(&a.place, &i);
        let shape = a.shape[1..].to_vec();
        let r = self.name("r");
        out.push(format!(
            "let ({r}: {}) = {}[{i}]",
            ty(&shape, &place),
            a.name
        ));
        sc.bind(r, shape, place);
        true
    }

    /// Whether the program may use this construct.
    fn has(&self, k: Kind) -> bool {
        self.kinds.contains(&k)
    }

    /// An atom of a known int: a variable in scope or a small literal.
    fn int_atom(&mut self, sc: &Scope) -> String {
        if !sc.ints.is_empty() && self.coin(0.6) {
            self.pick(&sc.ints)
        } else {
            self.range(0, 9).to_string()
        }
    }

    /// A fresh array in a block of its own, updated in place.
    fn update_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let place = self.alloc_place(&shape, out);
        let x = self.fill(sc, &shape, place, &KHaz::None, out);
        let y = self.emit_update(sc, &x, out);
        if self.coin(0.3) {
            self.emit_update(sc, &y, out);
        }
    }

    /// `let (y: ...) = x with [idx, ...] = v` in bounds, at x's place. x,
    /// and every array in its block (which may alias it), leave the scope:
    /// the update consumes x.
    fn emit_update(&mut self, sc: &mut Scope, x: &Arr, out: &mut Vec<String>) -> Arr {
        self.update_at(sc, x, false, out)
    }

    /// [`Gen::emit_update`]; when `bad`, one index or range is one past
    /// its dimension (stuck).
    fn update_at(&mut self, sc: &mut Scope, x: &Arr, bad: bool, out: &mut Vec<String>) -> Arr {
        let k = self.range(1, x.shape.len() as i64) as usize;
        let wrong = bad.then(|| self.range(0, k as i64 - 1) as usize);
        let mut idx = Vec::new();
        let mut rest = Vec::new();
        for (d, dim) in x.shape[..k].iter().enumerate() {
            if wrong == Some(d) {
                if self.coin(0.5) {
                    idx.push(dim.atom.clone());
                } else {
                    idx.push(format!("{} : 1", dim.atom));
                    rest.push(lit(1));
                }
            } else if dim.val > 0 && self.coin(0.5) {
                let j = self.index_atom(sc, dim.val).unwrap_or_else(|| "0".into());
                idx.push(j);
            } else {
                let fit: Vec<Size> = sc
                    .sizes
                    .iter()
                    .filter(|s| s.val >= 0 && s.val <= dim.val)
                    .cloned()
                    .collect();
                let n = if !fit.is_empty() && self.coin(0.4) {
                    self.pick(&fit)
                } else if self.coin(0.3) {
                    dim.clone()
                } else {
                    lit(self.range(0, dim.val.max(0)))
                };
                let o = self.range(0, (dim.val - n.val).max(0));
                idx.push(format!("{o} : {}", n.atom));
                rest.push(n);
            }
        }
        rest.extend(x.shape[k..].iter().cloned());
        sc.forget_block(&x.place.block);
        let v = if rest.is_empty() {
            self.int_atom(sc)
        } else {
            self.array_of_shape(sc, &rest, None, out).name
        };
        let y = self.name("u");
        out.push(format!(
            "let ({y}: {}) = {} with [{}] = {v}",
            ty(&x.shape, &x.place),
            x.name,
            idx.join(", ")
        ));
        sc.bind(y, x.shape.clone(), x.place.clone())
    }

    /// `concat x y` of two arrays in scope into a fresh place.
    fn concat_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) -> bool {
        if sc.arrs.is_empty() {
            return false;
        }
        let a = self.pick(&sc.arrs);
        let cands: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|b| same_shape(&b.shape[1..], &a.shape[1..]) && b.shape.len() == a.shape.len())
            .cloned()
            .collect();
        let b = self.pick(&cands);
        let (a, b) = if self.coin(0.5) { (a, b) } else { (b, a) };
        let k = self.name("k");
        out.push(format!(
            "let ({k}: int) = {} + {}",
            a.shape[0].atom, b.shape[0].atom
        ));
        sc.ints.push(k.clone());
        let mut shape = vec![Size {
            atom: k,
            val: a.shape[0].val + b.shape[0].val,
        }];
        shape.extend(a.shape[1..].iter().cloned());
        let place = self.alloc_place(&shape, out);
        let x = self.name("x");
        out.push(format!(
            "let ({x}: {}) = concat {} {}",
            ty(&shape, &place),
            a.name,
            b.name
        ));
        sc.bind(x, shape, place);
        true
    }

    /// `replicate n v` of an int or a 1-D array into a fresh place.
    fn replicate_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let n = self.size(sc);
        let rows: Vec<Arr> = sc
            .arrs
            .iter()
            .filter(|a| a.shape.len() == 1)
            .cloned()
            .collect();
        let (v, shape) = if !rows.is_empty() && self.coin(0.5) {
            let a = self.pick(&rows);
            (a.name, vec![n.clone(), a.shape[0].clone()])
        } else {
            (self.int_atom(sc), vec![n.clone()])
        };
        let place = self.alloc_place(&shape, out);
        let x = self.name("x");
        out.push(format!(
            "let ({x}: {}) = replicate {} {v}",
            ty(&shape, &place),
            n.atom
        ));
        sc.bind(x, shape, place);
    }

    /// A kernel with two or three results, each in a block of its own (or
    /// two of one shape side by side in one block), each row built in its
    /// result's place or elsewhere.
    fn multi_kernel_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let n = self.size(sc);
        let count = self.range(2, 3) as usize;
        let mut shapes: Vec<Vec<Size>> = Vec::new();
        for _ in 0..count {
            let mut shape = vec![n.clone()];
            if self.coin(0.5) {
                shape.push(self.size(sc));
            }
            shapes.push(shape);
        }
        let mut places = Vec::new();
        if same_shape(&shapes[0], &shapes[1]) && self.coin(0.5) {
            let (l1, l2, size) = self.pair_layout(&shapes[0]);
            let mb = self.name("mb");
            out.push(format!("let ({mb}: mem) = alloc {size}"));
            for l in [l1, l2] {
                places.push(Place {
                    block: mb.clone(),
                    offset: l.offset,
                    strides: l.strides,
                    rm: l.rm,
                });
            }
        }
        for shape in &shapes[places.len()..] {
            let p = self.alloc_place(shape, out);
            places.push(p);
        }
        let i = self.name("i");
        let mut bs = sc.clone();
        bs.top = false;
        bs.depth = sc.depth.saturating_sub(1);
        bs.ints.push(i.clone());
        bs.idx.push((i.clone(), n.val));
        let mut body = Vec::new();
        for _ in 0..self.range(0, 2) {
            self.action(&mut bs, &mut body);
        }
        let mut res = Vec::new();
        for (shape, place) in shapes.iter().zip(&places) {
            let elem = &shape[1..];
            if elem.is_empty() {
                let r = self.name("r");
                let e = self.sexp(&bs, 2);
                body.push(format!("let ({r}: int) = {e}"));
                res.push(r);
            } else {
                let row = Some(row_place(place, &i)).filter(|r| r.strides.iter().all(|s| s != "0"));
                res.push(self.array_of_shape(&mut bs, elem, row, &mut body).name);
            }
        }
        let names: Vec<String> = shapes.iter().map(|_| self.name("x")).collect();
        let pats: Vec<String> = names
            .iter()
            .zip(&shapes)
            .zip(&places)
            .map(|((x, s), p)| format!("({x}: {})", ty(s, p)))
            .collect();
        out.push(format!(
            "let {} = kernel {i} < {} do",
            pats.join(" "),
            n.atom
        ));
        out.extend(indent(body));
        out.push(format!("  in ({})", res.join(", ")));
        for ((x, s), p) in names.into_iter().zip(shapes).zip(places) {
            sc.bind(x, s, p);
        }
    }

    /// A `for` or a `while` loop of `t` iterations (`t` a known size).
    fn form(&mut self, sc: &Scope, out: &mut Vec<String>) -> (Form, i64) {
        let t = self.size(sc);
        let j = self.name("j");
        if self.coin(0.6) {
            return (
                Form {
                    params: Vec::new(),
                    inits: Vec::new(),
                    head: format!("for {j} < {}", t.atom),
                    index: j,
                    tail: Vec::new(),
                    results: Vec::new(),
                    pats: Vec::new(),
                },
                t.val,
            );
        }
        let (g0, g, g2, w2) = (
            self.name("g"),
            self.name("g"),
            self.name("g"),
            self.name("w"),
        );
        let (rg, rw) = (self.name("g"), self.name("w"));
        out.push(format!("let ({g0}: int) = 0 < {}", t.atom));
        (
            Form {
                params: vec![format!("({g}: int)"), format!("({j}: int)")],
                inits: vec![g0, "0".into()],
                head: format!("while {g}"),
                tail: vec![
                    format!("let ({w2}: int) = {j} + 1"),
                    format!("let ({g2}: int) = {w2} < {}", t.atom),
                ],
                index: j,
                results: vec![g2, w2],
                pats: vec![format!("({rg}: int)"), format!("({rw}: int)")],
            },
            t.val,
        )
    }

    /// A loop body's scope: the index (`0 .. t-1`) and the parameters'
    /// arrays and ints.
    fn loop_scope(&self, sc: &Scope, f: &Form, t: i64) -> Scope {
        let mut bs = sc.clone();
        bs.top = false;
        bs.depth = sc.depth.saturating_sub(1);
        bs.ints.push(f.index.clone());
        if t > 0 {
            bs.idx.push((f.index.clone(), t));
        }
        bs
    }

    /// A loop whose array parameter carries its block, offset and strides
    /// (existential memory): each iteration returns any array of the shape
    /// (the parameter, one in scope, a slice, a fresh one in a block of
    /// its own), and an int accumulator.
    fn loop_any_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let x0 = self.array_of_shape(sc, &shape, None, out);
        // The loop starts from a copy that nothing else sees: its result
        // may be the initial array itself (no iteration, or a body that
        // returns its parameter), and an array of the scope could be
        // consumed while the result lives (T-USE).
        let place = self.alloc_place(&shape, out);
        let xn = self.name("x");
        out.push(format!(
            "let ({xn}: {}) = copy {}",
            ty(&shape, &place),
            x0.name
        ));
        let x = Arr {
            name: xn,
            shape: shape.clone(),
            place,
        };
        let (f, t) = self.form(sc, out);
        let io = self.name("o");
        out.push(format!("let ({io}: int) = {}", x.place.offset));
        let mut inits = vec![io];
        for st in &x.place.strides {
            let s = self.name("s");
            out.push(format!("let ({s}: int) = {st}"));
            inits.push(s);
        }
        let acc0 = self.int_atom(sc);
        inits.push(x.place.block.clone());
        inits.push(x.name.clone());
        inits.push(acc0);
        // The parameters and the pattern: offset, strides, block, array,
        // accumulator.
        let fresh = |g: &mut Self| {
            let o = g.name("o");
            let ss: Vec<String> = shape.iter().map(|_| g.name("s")).collect();
            let m = g.name("m");
            let a = g.name("a");
            let v = g.name("v");
            (o, ss, m, a, v)
        };
        let decl = |(o, ss, m, a, v): &(String, Vec<String>, String, String, String)| {
            let place = Place {
                block: m.clone(),
                offset: o.clone(),
                strides: ss.clone(),
                rm: false,
            };
            let mut d = vec![format!("({o}: int)")];
            d.extend(ss.iter().map(|s| format!("({s}: int)")));
            d.push(format!("({m}: mem)"));
            d.push(format!("({a}: {})", ty(&shape, &place)));
            d.push(format!("({v}: int)"));
            (d, place)
        };
        let p = fresh(self);
        let r = fresh(self);
        let (params, pplace) = decl(&p);
        let (pats, rplace) = decl(&r);
        let mut bs = self.loop_scope(sc, &f, t);
        bs.ints.push(p.4.clone());
        bs.arrs.push(Arr {
            name: p.3.clone(),
            shape: shape.clone(),
            place: pplace,
        });
        let mut body = Vec::new();
        for _ in 0..self.range(0, 2) {
            self.action(&mut bs, &mut body);
        }
        let a = self.array_of_shape(&mut bs, &shape, None, &mut body);
        let o = self.name("o");
        body.push(format!("let ({o}: int) = {}", a.place.offset));
        let mut res = vec![o];
        for st in &a.place.strides {
            let s = self.name("s");
            body.push(format!("let ({s}: int) = {st}"));
            res.push(s);
        }
        let v = self.name("v");
        let e = self.sexp(&bs, 2);
        body.push(format!("let ({v}: int) = {e}"));
        res.push(a.place.block.clone());
        res.push(a.name.clone());
        res.push(v);
        emit_loop(f, params, inits, pats, body, res, out);
        let (o, ss, _, a, v) = r;
        sc.ints.push(o);
        sc.ints.extend(ss);
        sc.ints.push(v);
        sc.bind(a, shape, rplace);
    }

    /// Double buffering: two blocks of one layout swapped each iteration,
    /// each iteration building the next array in the other block from the
    /// current one. The initial array's block is written over, so it
    /// leaves the scope.
    fn loop_swap_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let l = self.layout(&shape);
        let (m1, m2) = (self.name("mb"), self.name("mb"));
        out.push(format!("let ({m1}: mem) = alloc {}", l.size));
        out.push(format!("let ({m2}: mem) = alloc {}", l.size));
        let at = |m: &str| Place {
            block: m.to_string(),
            offset: l.offset.clone(),
            strides: l.strides.clone(),
            rm: l.rm,
        };
        let x = self.fill(sc, &shape, at(&m1), &KHaz::None, out);
        sc.arrs.retain(|a| a.name != x.name);
        let (f, t) = self.form(sc, out);
        let (src, dst, a) = (self.name("src"), self.name("dst"), self.name("a"));
        let (r1, r2, r) = (self.name("m"), self.name("m"), self.name("z"));
        let params = vec![
            format!("({src}: mem)"),
            format!("({dst}: mem)"),
            format!("({a}: {})", ty(&shape, &at(&src))),
        ];
        let pats = vec![
            format!("({r1}: mem)"),
            format!("({r2}: mem)"),
            format!("({r}: {})", ty(&shape, &at(&r1))),
        ];
        let mut bs = self.loop_scope(sc, &f, t);
        bs.arrs.push(Arr {
            name: a.clone(),
            shape: shape.clone(),
            place: at(&src),
        });
        let mut body = Vec::new();
        for _ in 0..self.range(0, 1) {
            self.action(&mut bs, &mut body);
        }
        let b = self.fill(&mut bs, &shape, at(&dst), &KHaz::None, &mut body);
        emit_loop(
            f,
            params,
            vec![m1, m2, x.name],
            pats,
            body,
            vec![dst, src, b.name],
            out,
        );
        sc.bind(r, shape, at(&r1));
    }

    /// A fresh array updated in place by a loop: the parameter lives in
    /// the block the loop carries, and each iteration returns it updated
    /// (consumed) in that block.
    fn loop_in_place_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let shape = self.shape(sc);
        let place = self.alloc_place(&shape, out);
        self.loop_in_place_at(sc, &shape, place, out);
    }

    /// A fresh array at `place` updated in place by a loop; gives the
    /// loop's result.
    fn loop_in_place_at(
        &mut self,
        sc: &mut Scope,
        shape: &[Size],
        place: Place,
        out: &mut Vec<String>,
    ) -> Arr {
        let shape = shape.to_vec();
        let x = self.fill(sc, &shape, place.clone(), &KHaz::None, out);
        sc.arrs.retain(|a| a.place.block != x.place.block);
        let (f, t) = self.form(sc, out);
        let (m, a, rm, r) = (
            self.name("m"),
            self.name("a"),
            self.name("m"),
            self.name("z"),
        );
        let at = |b: &str| Place {
            block: b.to_string(),
            ..place.clone()
        };
        let params = vec![
            format!("({m}: mem)"),
            format!("({a}: {})", ty(&shape, &at(&m))),
        ];
        let pats = vec![
            format!("({rm}: mem)"),
            format!("({r}: {})", ty(&shape, &at(&rm))),
        ];
        let mut bs = self.loop_scope(sc, &f, t);
        let pa = bs.bind(a, shape.clone(), at(&m));
        let mut body = Vec::new();
        for _ in 0..self.range(0, 1) {
            self.action(&mut bs, &mut body);
        }
        let mut y = self.emit_update(&mut bs, &pa, &mut body);
        if self.coin(0.3) {
            y = self.emit_update(&mut bs, &y, &mut body);
        }
        emit_loop(
            f,
            params,
            vec![x.place.block.clone(), x.name],
            pats,
            body,
            vec![m.clone(), y.name],
            out,
        );
        sc.bind(r, shape, at(&rm))
    }

    /// A racing kernel of the new constructs: two results of which one
    /// has an outer stride 0, or iterations that each build an array in
    /// one shared scratch place and update it there in a loop.
    fn race18_hazard(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let b = self.size_min(sc, 2);
        let i = self.name("i");
        let mut bs = sc.clone();
        bs.top = false;
        bs.depth = sc.depth.saturating_sub(1);
        bs.ints.push(i.clone());
        bs.idx.push((i.clone(), b.val));
        let shape = vec![b.clone()];
        let place = self.alloc_place(&shape, out);
        let x = self.name("x");
        let mut body = Vec::new();
        let multi = match (self.has(Kind::MultiKernel), self.has(Kind::Loop)) {
            (true, true) => self.coin(0.5),
            (m, _) => m,
        };
        if multi {
            let k = self.range(0, 2);
            let mb = self.name("mb");
            out.push(format!("let ({mb}: mem) = alloc {}", k + 1));
            let zplace = Place {
                block: mb,
                offset: k.to_string(),
                strides: vec!["0".into()],
                rm: false,
            };
            let (r1, r2, z) = (self.name("r"), self.name("r"), self.name("x"));
            let (e1, e2) = (self.sexp(&bs, 2), self.sexp(&bs, 2));
            body.push(format!("let ({r1}: int) = {e1}"));
            body.push(format!("let ({r2}: int) = {e2}"));
            out.push(format!(
                "let ({x}: {}) ({z}: {}) = kernel {i} < {} do",
                ty(&shape, &place),
                ty(&shape, &zplace),
                b.atom
            ));
            out.extend(indent(body));
            out.push(format!("  in ({r1}, {r2})"));
            self.add_arr(sc, z, shape.clone(), zplace);
        } else {
            let inner = vec![self.size_min(sc, 1)];
            let scratch = self.alloc_place(&inner, out);
            let r = self.loop_in_place_at(&mut bs, &inner, scratch, &mut body);
            let v = self.name("v");
            let j = self
                .index_atom(&bs, r.shape[0].val)
                .unwrap_or_else(|| "0".into());
            body.push(format!("let ({v}: int) = {}[{j}]", r.name));
            out.push(format!(
                "let ({x}: {}) = kernel {i} < {} do",
                ty(&shape, &place),
                b.atom
            ));
            out.extend(indent(body));
            out.push(format!("  in ({v})"));
        }
        self.add_arr(sc, x, shape, place);
    }

    /// A statement of the new constructs that gets stuck: an update one
    /// past its array's end, or a `replicate` of a negative count.
    fn fail18_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        let update = match (self.has(Kind::Update), self.has(Kind::Replicate)) {
            (true, true) => self.coin(0.7),
            (u, _) => u,
        };
        if update {
            let shape: Vec<Size> = (0..self.range(1, 2))
                .map(|_| self.size_min(sc, 0))
                .collect();
            let place = self.alloc_place(&shape, out);
            let x = self.fill(sc, &shape, place, &KHaz::None, out);
            self.update_at(sc, &x, true, out);
        } else {
            let k = self.name("k");
            out.push(format!("let ({k}: int) = 0 - {}", self.range(1, 2)));
            let mb = self.name("mb");
            out.push(format!("let ({mb}: mem) = alloc 4"));
            let x = self.name("x");
            let v = self.int_atom(sc);
            out.push(format!(
                "let ({x}: [{k}]int @ {mb} -> R({k})) = replicate {k} {v}"
            ));
        }
    }

    /// A 1-D array growing by one element each iteration (its size is a
    /// loop parameter): `concat` of the parameter and a one-element
    /// `replicate`, in a fresh block.
    fn loop_grow_stm(&mut self, sc: &mut Scope, out: &mut Vec<String>) {
        // (A size parameter's initial value must be a variable.)
        let s0 = self.size(sc);
        let k0 = Size {
            atom: self.name("k"),
            val: s0.val,
        };
        out.push(format!("let ({}: int) = {}", k0.atom, s0.atom));
        let xm = self.name("mb");
        out.push(format!("let ({xm}: mem) = alloc {}", k0.atom));
        let rm_place = |b: &str| Place {
            block: b.to_string(),
            offset: "0".into(),
            strides: vec!["1".into()],
            rm: true,
        };
        let x = self.fill(
            sc,
            std::slice::from_ref(&k0),
            rm_place(&xm),
            &KHaz::None,
            out,
        );
        let (f, t) = self.form(sc, out);
        let (pk, pm, pa) = (self.name("k"), self.name("m"), self.name("a"));
        let (rk, rm, r) = (self.name("k"), self.name("m"), self.name("z"));
        let decl = |k: &str, m: &str, a: &str| {
            vec![
                format!("({k}: int)"),
                format!("({m}: mem)"),
                format!("({a}: [{k}]int @ {m} -> R({k}))"),
            ]
        };
        let params = decl(&pk, &pm, &pa);
        let pats = decl(&rk, &rm, &r);
        let bs = self.loop_scope(sc, &f, t);
        let mut body = Vec::new();
        let one = Size {
            atom: "1".into(),
            val: 1,
        };
        let op = self.alloc_place(std::slice::from_ref(&one), &mut body);
        let (e, v) = (self.name("x"), self.int_atom(&bs));
        body.push(format!(
            "let ({e}: {}) = replicate 1 {v}",
            ty(std::slice::from_ref(&one), &op)
        ));
        let (k2, m2, b) = (self.name("k"), self.name("mb"), self.name("x"));
        body.push(format!("let ({k2}: int) = {pk} + 1"));
        body.push(format!("let ({m2}: mem) = alloc {k2}"));
        let (first, second) = if self.coin(0.7) { (&pa, &e) } else { (&e, &pa) };
        body.push(format!(
            "let ({b}: [{k2}]int @ {m2} -> R({k2})) = concat {first} {second}"
        ));
        emit_loop(
            f,
            params,
            vec![k0.atom.clone(), xm, x.name],
            pats,
            body,
            vec![k2, m2, b],
            out,
        );
        sc.ints.push(rk.clone());
        sc.bind(
            r,
            vec![Size {
                atom: rk,
                val: k0.val + t.max(0),
            }],
            rm_place(&rm),
        );
    }
}

/// Emits `let pats = loop params = (inits) head do body in (results)`.
fn emit_loop(
    f: Form,
    params: Vec<String>,
    inits: Vec<String>,
    pats: Vec<String>,
    mut body: Vec<String>,
    results: Vec<String>,
    out: &mut Vec<String>,
) {
    body.extend(f.tail);
    let all = |a: Vec<String>, b: Vec<String>| -> Vec<String> { a.into_iter().chain(b).collect() };
    out.push(format!(
        "let {} = loop {} = ({}) {} do",
        all(f.pats, pats).join(" "),
        all(f.params, params).join(" "),
        all(f.inits, inits).join(", "),
        f.head
    ));
    out.extend(indent(body));
    out.push(format!("  in ({})", all(f.results, results).join(", ")));
}
