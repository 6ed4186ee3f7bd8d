//! The FUN generator's loops, in-place updates, `concat`, `replicate` and
//! kernels with several results: their shares are honoured, the programs
//! type-check, print and parse back, and never use an array after an
//! in-place update consumed it (checked here by a small alias analysis of
//! our own, independent of the type checker's).

use funmem_lang::ast::{Atom, Body, ExpKind, LoopForm, Program, SExp, Type, UpdIdx};
use funmem_lang::check::check_program;
use funmem_lang::parse::parse_program;
use funmem_lang::{print, Name};
use funmem_oracle::gen::gen_fun;
use funmem_oracle::{Case, Constructs, GenConfig, Rng};
use rand::SeedableRng;
use std::collections::{HashMap, HashSet};

fn case(seed: u64, cfg: &GenConfig) -> Case {
    gen_fun(&mut Rng::seed_from_u64(seed), cfg)
}

fn with(constructs: Constructs, fail_share: f64) -> GenConfig {
    GenConfig {
        fail_share,
        constructs,
        ..GenConfig::default()
    }
}

/// Occurrences of each construct of issue 18 in a body, nested ones too:
/// loop, update, concat, replicate, multi-result kernel.
fn counts(b: &Body, out: &mut [usize; 5]) {
    for s in &b.stms {
        match &s.exp.kind {
            ExpKind::Loop(_, _, _, body) => {
                out[0] += 1;
                counts(body, out);
            }
            ExpKind::Update(..) => out[1] += 1,
            ExpKind::Concat(..) => out[2] += 1,
            ExpKind::Replicate(..) => out[3] += 1,
            ExpKind::Kernel(_, _, body) => {
                out[4] += usize::from(s.pats.len() > 1);
                counts(body, out);
            }
            ExpKind::If(_, t, e) => {
                counts(t, out);
                counts(e, out);
            }
            _ => {}
        }
    }
}

fn all(share: f64) -> Constructs {
    Constructs {
        loops: share,
        update: share,
        concat: share,
        replicate: share,
        multi_kernel: share,
        ..Constructs::NONE
    }
}

#[test]
fn shares_are_honoured() {
    const N: u64 = 400;
    for (k, name) in Constructs::NAMES[..5].iter().enumerate() {
        // Only this construct, at share 0 and at share 0.9.
        for share in [0.0, 0.9] {
            let c = Constructs::NONE.parse(&format!("{name}={share}")).unwrap();
            let cfg = with(c, 0.1);
            let mut having = [0u64; 5];
            for seed in 0..N {
                let p = case(seed, &cfg).program;
                let mut n = [0; 5];
                counts(&p.body, &mut n);
                for (h, n) in having.iter_mut().zip(n) {
                    *h += u64::from(n > 0);
                }
            }
            for (j, &h) in having.iter().enumerate() {
                if j != k || share == 0.0 {
                    assert_eq!(h, 0, "{name}={share}: construct {j} in {h} programs");
                }
            }
            if share > 0.0 {
                assert!(
                    having[k] * 10 >= N * 7,
                    "{name}={share}: only {} of {N} programs have it",
                    having[k]
                );
            }
        }
    }
}

#[test]
fn no_new_constructs_gives_the_old_programs() {
    // With every share 0 the generator draws nothing more: no unique
    // parameters, no new constructs.
    let cfg = with(Constructs::NONE, 0.3);
    for seed in 0..300 {
        let p = case(seed, &cfg).program;
        let mut n = [0; 5];
        counts(&p.body, &mut n);
        assert_eq!(n, [0; 5]);
        assert!(p.params.iter().all(|q| !q.unique));
    }
}

#[test]
fn programs_type_check_round_trip_and_respect_uniqueness() {
    let mut total = [0usize; 5];
    let (mut whiles, mut fors, mut unique, mut sized) = (0, 0, 0, 0);
    for (share, fail) in [(0.9, 0.0), (0.5, 1.0), (1.0, 0.3)] {
        let cfg = with(all(share), fail);
        for seed in 0..1500 {
            let c = case(seed, &cfg);
            let text = print::program(&c.program);
            if let Err(d) = check_program(&c.program) {
                panic!("seed {seed}: type error: {}\n{text}", d.message);
            }
            match parse_program(&text, funmem_lang::ast::Lang::Fun) {
                Ok(p) => assert_eq!(p, c.program, "seed {seed}: round trip changed\n{text}"),
                Err(d) => panic!("seed {seed}: does not parse: {}\n{text}", d.message),
            }
            if let Err(e) = Uniq::check(&c.program) {
                panic!("seed {seed}: uniqueness: {e}\n{text}");
            }
            counts(&c.program.body, &mut total);
            whiles += text.matches(" while ").count();
            fors += text.matches(" for ").count();
            unique += usize::from(c.program.params.iter().any(|q| q.unique));
            sized += usize::from(has_sized_loop(&c.program.body));
        }
    }
    assert!(total.iter().all(|&n| n > 100), "too few: {total:?}");
    assert!(whiles > 100 && fors > 100 && unique > 100 && sized > 100);
}

/// Whether a loop has an array parameter whose size is a loop parameter.
fn has_sized_loop(b: &Body) -> bool {
    b.stms.iter().any(|s| match &s.exp.kind {
        ExpKind::Loop(ps, _, _, body) => {
            ps.iter().any(|p| match &p.ty {
                Type::Array(a, _) => a.shape.iter().any(|d| {
                    d.var()
                        .is_some_and(|x| ps.iter().any(|q| &q.name.name == x))
                }),
                _ => false,
            }) || has_sized_loop(body)
        }
        ExpKind::Kernel(_, _, body) => has_sized_loop(body),
        ExpKind::If(_, t, e) => has_sized_loop(t) || has_sized_loop(e),
        _ => false,
    })
}

/// A small uniqueness check: every array has a set of storages it may be
/// (itself if fresh; its source's for a slice or transpose; both branches'
/// for an `if`; the initial value's and the body's for a loop); an update
/// consumes the storages of its array, which must all be made in the
/// current body (or be unique parameters at the top, or this loop's
/// parameters); nothing that may be a consumed storage is used again.
#[derive(Default)]
struct Uniq {
    alias: HashMap<Name, HashSet<Name>>,
    consumed: HashSet<Name>,
    /// Storages each open body may consume, innermost last.
    own: Vec<HashSet<Name>>,
}

impl Uniq {
    fn check(p: &Program) -> Result<(), String> {
        let mut u = Uniq::default();
        let mut top = HashSet::new();
        for q in &p.params {
            u.alias
                .insert(q.name.name.clone(), [q.name.name.clone()].into());
            if q.unique {
                top.insert(q.name.name.clone());
            }
        }
        u.own.push(top);
        u.body(&p.body)?;
        Ok(())
    }

    fn use_name(&self, x: &Name) -> Result<(), String> {
        match self.alias.get(x) {
            Some(a) if a.iter().any(|s| self.consumed.contains(s)) => {
                Err(format!("`{x}` used after it (or an alias) was consumed"))
            }
            _ => Ok(()),
        }
    }

    fn use_atom(&self, a: &Atom) -> Result<(), String> {
        a.var().map_or(Ok(()), |x| self.use_name(x))
    }

    fn use_sexp(&self, e: &SExp) -> Result<(), String> {
        match e {
            SExp::Atom(a) => self.use_atom(a),
            SExp::Un(_, e, _) => self.use_sexp(e),
            SExp::Bin(_, l, r, _) => self.use_sexp(l).and_then(|()| self.use_sexp(r)),
        }
    }

    fn aliases(&self, x: &Name) -> HashSet<Name> {
        self.alias.get(x).cloned().unwrap_or_default()
    }

    fn fresh(&mut self, x: &Name) {
        self.alias.insert(x.clone(), [x.clone()].into());
        if let Some(o) = self.own.last_mut() {
            o.insert(x.clone());
        }
    }

    /// Checks a body; returns the storages it consumed.
    fn body(&mut self, b: &Body) -> Result<HashSet<Name>, String> {
        let before = self.consumed.clone();
        for s in &b.stms {
            let x = &s.pats[0].name.name;
            match &s.exp.kind {
                ExpKind::Scalar(e) | ExpKind::Alloc(e, _) => self.use_sexp(e)?,
                ExpKind::Index(y, is) => {
                    self.use_name(&y.name)?;
                    is.iter().try_for_each(|a| self.use_atom(a))?;
                }
                ExpKind::Slice(y, ps) => {
                    self.use_name(&y.name)?;
                    for (o, n) in ps {
                        self.use_atom(o)?;
                        self.use_atom(n)?;
                    }
                    let a = self.aliases(&y.name);
                    self.alias.insert(x.clone(), a);
                }
                ExpKind::Transpose(y) => {
                    self.use_name(&y.name)?;
                    let a = self.aliases(&y.name);
                    self.alias.insert(x.clone(), a);
                }
                ExpKind::Iota(n) => {
                    self.use_atom(n)?;
                    self.fresh(x);
                }
                ExpKind::Copy(y) => {
                    self.use_name(&y.name)?;
                    self.fresh(x);
                }
                ExpKind::Concat(y, z) => {
                    self.use_name(&y.name)?;
                    self.use_name(&z.name)?;
                    self.fresh(x);
                }
                ExpKind::Replicate(n, v) => {
                    self.use_atom(n)?;
                    self.use_atom(v)?;
                    self.fresh(x);
                }
                ExpKind::Reduce(_, ne, y) | ExpKind::Scan(_, ne, y) => {
                    self.use_atom(ne)?;
                    self.use_name(&y.name)?;
                    if matches!(s.exp.kind, ExpKind::Scan(..)) {
                        self.fresh(x);
                    }
                }
                ExpKind::Update(y, is, v) => {
                    self.use_name(&y.name)?;
                    for i in is {
                        match i {
                            UpdIdx::Elem(a) => self.use_atom(a)?,
                            UpdIdx::Range(o, n) => {
                                self.use_atom(o)?;
                                self.use_atom(n)?;
                            }
                        }
                    }
                    self.use_atom(v)?;
                    let a = self.aliases(&y.name);
                    if let Some(w) = v.var() {
                        if self.aliases(w).iter().any(|s| a.contains(s)) {
                            return Err(format!("update of `{}` with an alias of it", y.name));
                        }
                    }
                    let own = self.own.last().cloned().unwrap_or_default();
                    if let Some(s) = a.iter().find(|s| !own.contains(*s)) {
                        return Err(format!(
                            "update of `{}` consumes `{s}`, which this body may not consume",
                            y.name
                        ));
                    }
                    self.consumed.extend(a);
                    self.fresh(x);
                }
                ExpKind::If(c, t, e) => {
                    self.use_name(&c.name)?;
                    let mut outs: Vec<HashSet<Name>> = vec![HashSet::new(); s.pats.len()];
                    let mut made = HashSet::new();
                    for br in [t, e] {
                        self.own.push(HashSet::new());
                        let r = self.body(br);
                        made.extend(self.own.pop().unwrap_or_default());
                        r?;
                        for (o, y) in outs.iter_mut().zip(&br.result) {
                            o.extend(self.aliases(&y.name));
                        }
                    }
                    for (p, o) in s.pats.iter().zip(outs) {
                        if o.is_subset(&made) {
                            // Made in the branches: fresh here.
                            self.fresh(&p.name.name);
                        } else {
                            self.alias.insert(p.name.name.clone(), o);
                        }
                    }
                }
                ExpKind::Kernel(_, n, kb) => {
                    self.use_atom(n)?;
                    self.own.push(HashSet::new());
                    let r = self.body(kb);
                    self.own.pop();
                    r?;
                    for p in &s.pats {
                        self.fresh(&p.name.name);
                    }
                }
                ExpKind::Loop(ps, init, form, lb) => {
                    init.iter().try_for_each(|a| self.use_atom(a))?;
                    match form {
                        LoopForm::For(_, n) => self.use_atom(n)?,
                        LoopForm::While(_) => {}
                    }
                    let mut own = HashSet::new();
                    for p in ps {
                        self.alias
                            .insert(p.name.name.clone(), [p.name.name.clone()].into());
                        own.insert(p.name.name.clone());
                    }
                    self.own.push(own);
                    let r = self.body(lb);
                    let made = self.own.pop().unwrap_or_default();
                    let used = r?;
                    let here = self.own.last().cloned().unwrap_or_default();
                    for (k, (p, a)) in ps.iter().zip(init).enumerate() {
                        // What the body made is fresh here.
                        let mut al: HashSet<Name> = self
                            .aliases(&lb.result[k].name)
                            .difference(&made)
                            .cloned()
                            .collect();
                        if let Some(y) = a.var() {
                            let ya = self.aliases(y);
                            if used.contains(&p.name.name) {
                                al.clear();
                                // The loop consumes its initial value.
                                if let Some(s) = ya.iter().find(|s| !here.contains(*s)) {
                                    return Err(format!(
                                        "loop consumes `{y}` (`{s}`), which this body may not consume"
                                    ));
                                }
                                self.consumed.extend(ya.iter().cloned());
                            } else {
                                al.extend(ya);
                            }
                        }
                        al.insert(s.pats[k].name.name.clone());
                        self.alias.insert(s.pats[k].name.name.clone(), al);
                    }
                    for p in &s.pats {
                        if let Some(o) = self.own.last_mut() {
                            o.insert(p.name.name.clone());
                        }
                    }
                }
            }
        }
        for y in &b.result {
            self.use_name(&y.name)?;
        }
        Ok(self.consumed.difference(&before).cloned().collect())
    }
}

fn has(p: &Program, construct: &str) -> usize {
    let p = funmem_lang::parse::AnyProgram::Fun(p.clone());
    funmem_lang::count::count(&p, construct).unwrap_or(0)
}

#[test]
fn reducer_shrinks_each_construct_and_stays_well_typed() {
    use funmem_oracle::reduce::{reduce, size};
    let cfg = with(all(1.0), 0.0);
    for construct in ["loop", "update", "concat", "replicate"] {
        let seed = (0..200)
            .find(|&s| {
                has(&case(s, &cfg).program, construct) > 0 && size(&case(s, &cfg).program) > 12
            })
            .expect("a program with it");
        let c = case(seed, &cfg);
        let mut keeps = |c: &Case| has(&c.program, construct) > 0;
        let small = reduce(&c, &mut keeps, 3000);
        let text = print::program(&small.program);
        check_program(&small.program)
            .unwrap_or_else(|d| panic!("{construct}: {}\n{text}", d.message));
        assert!(
            has(&small.program, construct) > 0,
            "{construct}: lost it\n{text}"
        );
        assert!(
            size(&small.program) <= 4,
            "{construct}: still {} statements\n{text}",
            size(&small.program)
        );
    }
}

/// Parses a FUN program written here.
fn program(src: &str) -> Program {
    parse_program(src, funmem_lang::ast::Lang::Fun).unwrap_or_else(|d| panic!("{}", d.message))
}

#[test]
fn reducer_moves_of_the_new_constructs() {
    use funmem_oracle::reduce::reduce;
    use funmem_semantics::value::{ArrayValue, Value};
    let xs = Value::Array(ArrayValue {
        shape: vec![3],
        data: funmem_semantics::value::Elems::I64(vec![1, 2, 3]),
    });
    let case = |src: &str| Case {
        program: program(src),
        inputs: vec![Value::Scalar(funmem_lang::prim::Const::I64(3)), xs.clone()],
    };
    // A loop to its body run once: an update that stays, with no loop.
    let c = case(
        "def main (n: int) (xs: *[n]int) =
  let (r: [n]int) = loop (a: [n]int) = (xs) for i < n do
    let (j: int) = min(i, n - 1)
    let (b: [n]int) = a with [j] = 7
    in (b)
  in (r)",
    );
    check_program(&c.program).unwrap();
    let mut f = |c: &Case| has(&c.program, "update") > 0 && has(&c.program, "loop") == 0;
    let small = reduce(&c, &mut f, 500);
    assert!(f(&small), "{}", print::program(&small.program));
    // A multi-result kernel to one result; concat to one operand; a
    // replicate kept but smaller.
    let c = case(
        "def main (n: int) (xs: [n]int) =
  let (a: [n]int) (b: [n]int) = kernel i < n do
    let (x: int) = xs[i]
    in (i, x)
  let (m: int) = n + n
  let (c: [m]int) = concat a xs
  let (r: [m][m]int) = replicate m c
  let (y: int) = b[0]
  in (r)",
    );
    check_program(&c.program).unwrap();
    let mut f = |c: &Case| has(&c.program, "kernel") > 0 && has(&c.program, "replicate") > 0;
    let small = reduce(&c, &mut f, 2000);
    let text = print::program(&small.program);
    assert_eq!(has(&small.program, "concat"), 0, "{text}");
    assert!(
        !text.contains("(b: [n]int)") && !text.contains("replicate m"),
        "{text}"
    );
}

#[test]
fn with_every_construct_safe_programs_run_and_risky_ones_only_get_stuck() {
    use funmem_semantics::error::{ErrorKind, Limits};
    use funmem_semantics::fun::run_value;
    use funmem_semantics::observer::NoObserver;
    // Far more fuel than any generated program needs: running out of it
    // means the generator made too much work.
    let limits = Limits {
        fuel: 10_000_000,
        max_heap: 1 << 24,
    };
    let mut stuck = 0;
    for fail in [0.0, 1.0] {
        let cfg = with(all(0.9), fail);
        for seed in 0..800 {
            let c = case(seed, &cfg);
            match run_value(&c.program, &c.inputs, limits, &mut NoObserver) {
                Ok(_) => {}
                Err(e) if fail > 0.0 && e.kind == ErrorKind::Stuck => stuck += 1,
                Err(e) => panic!(
                    "fail share {fail}, seed {seed}: {e:?}\n{}\ninputs: {:?}",
                    print::program(&c.program),
                    c.inputs
                ),
            }
        }
    }
    assert!(stuck >= 80, "only {stuck} of 800 risky programs got stuck");
}

#[test]
fn constructs_setting_parses_and_refuses_nonsense() {
    let d = Constructs::default();
    let c = d.parse("loop=0.9, update=0").unwrap();
    assert_eq!((c.loops, c.update, c.concat), (0.9, 0.0, d.concat));
    assert_eq!(d.parse("none").unwrap(), Constructs::NONE);
    let mut every = d.parse("all=1").unwrap();
    for name in Constructs::NAMES {
        assert_eq!(every.get_mut(name).map(|s| *s), Some(1.0), "{name}");
    }
    for bad in [
        "loops=0.5",
        "loop=2",
        "loop=-0.1",
        "loop",
        "loop=x",
        "loop=NaN",
    ] {
        assert!(d.parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_campaign_counts_the_constructs_of_its_programs() {
    use funmem_oracle::campaign::{self, Config, Source};
    let passes = funmem_transforms::pass::parse_list("simplify").unwrap();
    let count = |constructs: Constructs| {
        let mut cfg = Config::new(5, passes.clone());
        cfg.count = Some(40);
        cfg.threads = 1;
        cfg.source = Source::Fun;
        cfg.reduce_time = Some(std::time::Duration::ZERO);
        cfg.gen.constructs = constructs;
        let s = campaign::run(&cfg, &()).expect("runs");
        // The same counts as the programs' own.
        let mut want = [0u64; 5];
        for k in 0..40 {
            let mut n = [0; 5];
            counts(&campaign::case_for(5, k, &cfg.gen).program.body, &mut n);
            for (w, n) in want.iter_mut().zip(n) {
                *w += u64::from(n > 0);
            }
        }
        let got = s.constructs.programs.clone();
        assert_eq!([got[0], got[3], got[4], got[5], got[6]], want);
        assert!(got[0] >= got[1].max(got[2]));
        s.constructs
    };
    let none = count(Constructs::NONE);
    // The constructs, not the coalescing candidates counted after them
    // (a kernel returning an `iota` is one in any program).
    assert!(none.occurrences[..13].iter().all(|&n| n == 0), "{none:?}");
    let many = count(all(1.0));
    assert!(many.programs[..7].iter().all(|&p| p > 0), "{many:?}");
    assert!(many.line(40).starts_with("constructs: loop in "));
}
