//! The write sets of `funmem_transforms::writes` against the heap
//! semantics: every write the interpreter makes while a statement runs
//! lies in that statement's computed write set, and where the set claims
//! to be exact, the statement writes all of it (each kernel iteration its
//! own part). Random FUNMEM programs (generated directly, and FUN programs
//! lowered) and hand-written ones; the test also requires that every kind
//! of array-creating statement was checked, so that a kind whose write set
//! were left empty (Futhark bug #1927) fails it.

use funmem_lang::ast::{ExpKind, Lang, Program, Stm};
use funmem_lang::lmad::Lmad;
use funmem_lang::parse::parse_program;
use funmem_lang::prim::Prim;
use funmem_lang::{print, Name, Span};
use funmem_oracle::gen::gen_fun;
use funmem_oracle::gen_mem::gen_funmem_valid;
use funmem_oracle::{Constructs, GenConfig, Rng};
use funmem_semantics::error::Limits;
use funmem_semantics::heap::run_heap;
use funmem_semantics::observer::Observer;
use funmem_semantics::textual::parse_values;
use funmem_semantics::value::Value;
use funmem_transforms::writes::{concrete, writes, Writes};
use rand::SeedableRng;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// What an open statement may write, evaluated when it starts.
enum Expected {
    /// Nothing of its own (the name of its kind, for messages).
    Nothing,
    /// Exactly these (block, element offset) pairs.
    Exact(HashSet<(usize, i64)>),
    /// Iteration i writes exactly each region's LMAD indexed at i.
    Kernel(Vec<(usize, Lmad<i64>)>),
}

struct Open {
    span: (usize, usize),
    kind: &'static str,
    expected: Expected,
    actual: HashSet<(usize, i64)>,
    iteration: Option<i64>,
}

struct Recorder<'a> {
    stms: &'a HashMap<(usize, usize), Stm>,
    env: HashMap<Name, i64>,
    open: Vec<Open>,
    problems: Vec<String>,
    checked: BTreeMap<&'static str, u64>,
}

fn kind_of(s: &Stm) -> &'static str {
    match &s.exp.kind {
        ExpKind::Iota(_) => "iota",
        ExpKind::Copy(_) => "copy",
        ExpKind::Replicate(..) => "replicate",
        ExpKind::Concat(..) => "concat",
        ExpKind::Scan(..) => "scan",
        ExpKind::Update(..) => "update",
        ExpKind::Kernel(..) => "kernel",
        ExpKind::If(..) => "if",
        ExpKind::Loop(..) => "loop",
        _ => "other",
    }
}

/// An integer or block number from the heap semantics' printed value.
fn number(v: &dyn fmt::Display) -> Option<i64> {
    let t = v.to_string();
    let t = t.strip_prefix("block ").unwrap_or(&t);
    let t = t
        .strip_suffix("i64")
        .or_else(|| t.strip_suffix("i32"))
        .unwrap_or(t);
    t.parse().ok()
}

impl Recorder<'_> {
    fn expected(&mut self, s: &Stm) -> Option<Expected> {
        let env = &self.env;
        let look = |x: &Name| env.get(x).copied();
        let block = |b: &Name| env.get(b).and_then(|&k| usize::try_from(k).ok());
        Some(match writes(s) {
            Writes::Nothing | Writes::Bodies => Expected::Nothing,
            Writes::Exact(rs) => {
                let mut set = HashSet::new();
                for r in rs {
                    let b = block(&r.block.name)?;
                    set.extend(concrete(&r.lmad, &look)?.image().map(|a| (b, a)));
                }
                Expected::Exact(set)
            }
            Writes::Kernel { results, .. } => Expected::Kernel(
                results
                    .iter()
                    .map(|r| Some((block(&r.block.name)?, concrete(&r.lmad, &look)?)))
                    .collect::<Option<_>>()?,
            ),
        })
    }
}

impl Observer for Recorder<'_> {
    fn rule(&mut self, _: &'static str, span: Span) {
        let Some(s) = self.stms.get(&(span.start, span.end)) else {
            return;
        };
        let expected = self.expected(s).unwrap_or_else(|| {
            self.problems.push(format!(
                "cannot evaluate the write set of `{}`",
                print_stm(s)
            ));
            Expected::Nothing
        });
        self.open.push(Open {
            span: (span.start, span.end),
            kind: kind_of(s),
            expected,
            actual: HashSet::new(),
            iteration: None,
        });
    }

    fn bind(&mut self, name: &Name, value: &dyn fmt::Display) {
        if let Some(k) = number(value) {
            self.env.insert(name.clone(), k);
        }
    }

    fn enter(&mut self, name: &Name, value: &dyn fmt::Display) {
        self.bind(name, value);
    }

    fn iteration_start(&mut self, kernel: Span, i: i64) {
        if let Some(o) = self
            .open
            .iter_mut()
            .rev()
            .find(|o| o.span == (kernel.start, kernel.end))
        {
            o.iteration = Some(i);
        }
    }

    fn write(&mut self, block: usize, offset: i64, _: Prim, _: u64) {
        // Writes outside every statement lay out the inputs.
        let Some(o) = self.open.last_mut() else {
            return;
        };
        let at = (block, offset);
        o.actual.insert(at);
        let inside = match &o.expected {
            Expected::Nothing => false,
            Expected::Exact(set) => set.contains(&at),
            Expected::Kernel(rs) => o.iteration.is_some_and(|i| {
                rs.iter()
                    .any(|(b, l)| *b == block && l.index(&i).image().any(|a| a == offset))
            }),
        };
        if !inside {
            self.problems.push(format!(
                "a `{}` statement wrote block {block} at {offset}, outside its write set",
                o.kind
            ));
        }
    }

    fn done(&mut self, span: Span) {
        let Some(pos) = self
            .open
            .iter()
            .rposition(|o| o.span == (span.start, span.end))
        else {
            return;
        };
        let o = self.open.remove(pos);
        self.open.truncate(pos);
        let whole: HashSet<(usize, i64)> = match &o.expected {
            Expected::Nothing => HashSet::new(),
            Expected::Exact(set) => set.clone(),
            Expected::Kernel(rs) => rs
                .iter()
                .flat_map(|(b, l)| l.image().map(move |a| (*b, a)))
                .collect(),
        };
        if whole != o.actual {
            self.problems.push(format!(
                "a `{}` statement's write set is not exact: computed {} locations, written {}",
                o.kind,
                whole.len(),
                o.actual.len()
            ));
        }
        if !matches!(o.expected, Expected::Nothing) {
            *self.checked.entry(o.kind).or_default() += 1;
        }
    }
}

fn print_stm(s: &Stm) -> String {
    format!("{:?}", s.exp.kind).chars().take(80).collect()
}

fn all_stms(p: &Program) -> HashMap<(usize, usize), Stm> {
    fn walk(b: &funmem_lang::ast::Body, out: &mut HashMap<(usize, usize), Stm>) {
        for s in &b.stms {
            out.insert((s.span.start, s.span.end), s.clone());
            match &s.exp.kind {
                ExpKind::If(_, t, f) => {
                    walk(t, out);
                    walk(f, out);
                }
                ExpKind::Kernel(_, _, b) | ExpKind::Loop(_, _, _, b) => walk(b, out),
                _ => {}
            }
        }
    }
    let mut out = HashMap::new();
    walk(&p.body, &mut out);
    out
}

/// Runs `p` (printed and parsed again, so that every statement has its
/// own position) and returns the problems found and the kinds checked,
/// or `None` when the run went wrong.
fn check(
    p: &Program,
    inputs: &[Value],
    checked: &mut BTreeMap<&'static str, u64>,
) -> Option<Vec<String>> {
    let text = print::program(p);
    let p = parse_program(&text, Lang::FunMem).expect("printed programs parse");
    let stms = all_stms(&p);
    let mut r = Recorder {
        stms: &stms,
        env: HashMap::new(),
        open: Vec::new(),
        problems: Vec::new(),
        checked: BTreeMap::new(),
    };
    let limits = Limits {
        fuel: 200_000,
        max_heap: 1 << 20,
    };
    run_heap(&p, inputs, limits, false, &mut r).ok()?;
    for (k, n) in r.checked {
        *checked.entry(k).or_default() += n;
    }
    Some(
        r.problems
            .into_iter()
            .map(|m| format!("{m}\n{text}"))
            .collect(),
    )
}

#[test]
fn every_write_of_random_programs_is_in_its_statements_write_set() {
    let cfg = GenConfig {
        constructs: Constructs::NONE.parse("all=1").expect("parses"),
        fail_share: 0.0,
        ..GenConfig::default()
    };
    let mut checked = BTreeMap::new();
    let mut ran = 0;
    for seed in 0..300u64 {
        let mut cases = vec![gen_funmem_valid(&mut Rng::seed_from_u64(seed), &cfg)];
        let fun = gen_fun(&mut Rng::seed_from_u64(seed), &cfg);
        if let Ok(p) = funmem_transforms::transform_program(&fun.program) {
            cases.push(funmem_oracle::Case {
                program: p,
                inputs: fun.inputs,
            });
        }
        for c in cases {
            if let Some(problems) = check(&c.program, &c.inputs, &mut checked) {
                ran += 1;
                if let Some(m) = problems.first() {
                    panic!("seed {seed}: {m}");
                }
            }
        }
    }
    assert!(ran > 300, "only {ran} programs ran");
    eprintln!("{ran} programs; statements checked: {checked:?}");
    // Every kind of array-creating statement was checked, many times.
    for kind in [
        "iota",
        "copy",
        "replicate",
        "concat",
        "scan",
        "update",
        "kernel",
    ] {
        let n = checked.get(kind).copied().unwrap_or(0);
        assert!(n >= 20, "only {n} `{kind}` statements checked: {checked:?}");
    }
}

#[test]
fn hand_written_statements_write_exactly_their_sets() {
    let text = "def main (n: int) (xm: mem) (xs: [n]i64 @ xm -> R(n)) =
      let (k: int) = n + n
      let (m: mem) = alloc k
      let (a: [n]i64 @ m -> 0 + {(n : 2)}) = copy xs
      let (b: [n]i64 @ m -> 1 + {(n : 2)}) = iota n
      let (v: [2]i64 @ xm -> 1 + {(2 : 1)}) = xs[1 : 2]
      let (c: [n]i64 @ m -> 0 + {(n : 2)}) = a with [0 : 2] = v
      let (d: [n]i64 @ m -> 1 + {(n : 2)}) = b with [2] = 7
      let (ym: mem) = alloc k
      let (y: [k]i64 @ ym -> R(k)) = concat c d
      let (zm: mem) = alloc k
      let (z: [n][2]i64 @ zm -> 0 + {(n : 1) (2 : n)}) = kernel i < n do
          let (rm: mem) = alloc 2
          let (r: [2]i64 @ rm -> R(2)) = replicate 2 i
        in (r)
      in (y, z)";
    let p = parse_program(text, Lang::FunMem).expect("parses");
    funmem_lang::check::check_program(&p).expect("type-checks");
    let inputs = parse_values("4i64 [5i64, 6i64, 7i64, 8i64]").expect("values");
    let mut checked = BTreeMap::new();
    let problems = check(&p, &inputs, &mut checked).expect("runs");
    assert!(problems.is_empty(), "{problems:?}");
    for kind in ["iota", "copy", "replicate", "concat", "update", "kernel"] {
        assert!(
            checked.contains_key(kind),
            "{kind} not checked: {checked:?}"
        );
    }
}
