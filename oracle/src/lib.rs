//! The oracle: random programs, differential checks of a pipeline of
//! passes, a reducer, and fuzz campaigns.
//!
//! - [`big`]: large programs of a chosen shape, for measuring scaling.
//! - [`gen`]: random well-typed FUN programs with inputs.
//! - [`fun_ref`]: an independent FUN evaluator over nested vectors, the
//!   reference a FUN source's results are held against.
//! - [`gen_mem`]: random FUNMEM programs written directly (not lowered).
//! - [`gen_race`]: FUNMEM programs with exactly one data race, to check the
//!   race detector's report against the reference's.
//! - [`reference`](crate::reference): a brute-force FUNMEM heap semantics with explicit read
//!   and write sets, the reference for the race detector and validity.
//! - [`check`]: the differential checks of a pipeline on one case.
//! - [`guards`]: every index and slice lowered to IMP is in bounds by a
//!   fact or guarded by an assert (`Checks.guards`).
//! - [`reduce`]: shrinks a failing case while it fails the same way.
//! - [`campaign`]: fuzz campaigns (seeds, shards, summaries).
//! - [`baseline`]: the shares of what the passes did, and their
//!   comparison with a saved campaign (`--baseline`).
//!
//! Architecture invariant: everything here is deterministic given a seed:
//! the same seed gives the same programs on any machine.

pub mod baseline;
pub mod big;
pub mod campaign;
pub mod check;
pub mod fun_ref;
pub mod gen;
pub mod gen_mem;
pub mod gen_race;
pub mod guards;
pub mod prove;
pub mod reduce;
pub mod reference;
pub mod roots;

use funmem_lang::ast::Program;
use funmem_semantics::value::Value;

/// The random number generator of the generators: ChaCha8, whose output is
/// fixed by its seed on every platform.
pub type Rng = rand_chacha::ChaCha8Rng;

/// A test case: a program and the inputs to run it on.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// The program (FUN or FUNMEM).
    pub program: Program,
    /// One value per non-`mem` parameter, in order.
    pub inputs: Vec<Value>,
}

/// Knobs of the random program generators.
#[derive(Clone, Debug, PartialEq)]
pub struct GenConfig {
    /// Most statements in one body.
    pub max_stms: usize,
    /// Most nesting of kernels and `if`s.
    pub max_depth: usize,
    /// Largest array size in inputs and literal sizes (sizes are drawn
    /// from 0 ..= max_size).
    pub max_size: i64,
    /// Share (0 to 1) of programs that contain an operation that may go
    /// wrong at run time (an index or slice out of bounds, a division by
    /// zero); the rest never go wrong.
    pub fail_share: f64,
    /// How often each construct of issues 18 and 19 (loops, in-place
    /// updates, `concat`, `replicate`, kernels with several results;
    /// element types, `reduce`, `scan`, partial indexing) shows up.
    pub constructs: Constructs,
}

/// The share (0 to 1) of generated FUN programs that contain each
/// construct at least once (a program that has it may have it more than
/// once). A share of 0 leaves the construct out altogether; with every
/// share 0 the generator makes exactly the programs it made before these
/// constructs existed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constructs {
    /// `loop ... for i < n do ...` and `loop ... while c do ...`.
    pub loops: f64,
    /// `x with [idx, ...] = v` (and some unique `*` parameters).
    pub update: f64,
    /// `concat x y`.
    pub concat: f64,
    /// `replicate n v`.
    pub replicate: f64,
    /// Kernels that make several arrays.
    pub multi_kernel: f64,
    /// Scalars and arrays of other element types than `i64` (`bool`,
    /// `i32`, `f32`, `f64`), conversions between types and float
    /// functions.
    pub types: f64,
    /// `reduce op ne xs` (builtin operators and lambdas).
    pub reduce: f64,
    /// `scan op ne xs`.
    pub scan: f64,
    /// Partial indexing: `xss[i]`, a row of an array of rank 2 or more.
    pub index_row: f64,
    /// Coalescing's root statements: a fresh array (`iota`, `replicate`,
    /// a kernel, `copy`, `scan`) copied, concatenated, written into another
    /// array (`z with [i] = x`, `z with [o:k] = x`) or returned from a
    /// kernel's body, mostly at its last use; sometimes used again after
    /// (C1), the destination read in between (C3), or the source not fresh
    /// (C4).
    pub root: f64,
    /// Host-side scalar work, what migration works on: outside kernels, an
    /// element read, a scalar computed from it, and a use of that scalar
    /// as an `if`'s condition, in a loop, an update or a kernel (0 by
    /// default, so that the default programs stay as they were; `funmem
    /// fuzz --passes simplify,migrate --constructs host=0.8`).
    pub host: f64,
}

impl Constructs {
    /// Every share 0: none of the constructs.
    pub const NONE: Constructs = Constructs {
        loops: 0.0,
        update: 0.0,
        concat: 0.0,
        replicate: 0.0,
        multi_kernel: 0.0,
        types: 0.0,
        reduce: 0.0,
        scan: 0.0,
        index_row: 0.0,
        root: 0.0,
        host: 0.0,
    };

    /// The names `--constructs` takes, in order.
    pub const NAMES: [&'static str; 11] = [
        "loop",
        "update",
        "concat",
        "replicate",
        "multi-kernel",
        "types",
        "reduce",
        "scan",
        "index-row",
        "root",
        "host",
    ];

    /// The share of the construct called `name` (one of [`Constructs::NAMES`]).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut f64> {
        match name {
            "loop" => Some(&mut self.loops),
            "update" => Some(&mut self.update),
            "concat" => Some(&mut self.concat),
            "replicate" => Some(&mut self.replicate),
            "multi-kernel" => Some(&mut self.multi_kernel),
            "types" => Some(&mut self.types),
            "reduce" => Some(&mut self.reduce),
            "scan" => Some(&mut self.scan),
            "index-row" => Some(&mut self.index_row),
            "root" => Some(&mut self.root),
            "host" => Some(&mut self.host),
            _ => None,
        }
    }

    /// Parses `name=share,...` (shares in 0 to 1; names from
    /// [`Constructs::NAMES`], or `all`; `none` alone for every share 0),
    /// starting from `self`: the names not mentioned keep their shares.
    pub fn parse(mut self, text: &str) -> Result<Constructs, String> {
        if text.trim() == "none" {
            return Ok(Constructs::NONE);
        }
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, share)) = item.split_once('=') else {
                return Err(format!(
                    "`{item}` is not `name=share` (names: {}, all)",
                    Constructs::NAMES.join(", ")
                ));
            };
            let (name, share) = (name.trim(), share.trim());
            let v: f64 = share
                .parse()
                .ok()
                .filter(|v: &f64| (0.0..=1.0).contains(v))
                .ok_or_else(|| {
                    format!("the share of `{name}` must be a number from 0 to 1, not `{share}`")
                })?;
            if name == "all" {
                for n in Constructs::NAMES {
                    if let Some(s) = self.get_mut(n) {
                        *s = v;
                    }
                }
            } else {
                match self.get_mut(name) {
                    Some(s) => *s = v,
                    None => {
                        return Err(format!(
                            "no construct `{name}` (names: {}, all)",
                            Constructs::NAMES.join(", ")
                        ))
                    }
                }
            }
        }
        Ok(self)
    }
}

impl Default for Constructs {
    fn default() -> Constructs {
        Constructs {
            loops: 0.3,
            update: 0.3,
            concat: 0.2,
            replicate: 0.2,
            multi_kernel: 0.2,
            types: 0.3,
            reduce: 0.2,
            scan: 0.2,
            index_row: 0.2,
            root: 0.5,
            host: 0.0,
        }
    }
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_stms: 8,
            max_depth: 3,
            max_size: 5,
            fail_share: 0.1,
            constructs: Constructs::default(),
        }
    }
}
