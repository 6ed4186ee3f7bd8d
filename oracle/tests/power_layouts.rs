//! Layouts that lowering never makes: a fault of the simplifier that only
//! FUNMEM programs written directly can show (`funmem fuzz --source
//! funmem`), and the FUNMEM campaigns' own soundness on the shipped passes.
//!
//! Lowering gives every copy a fresh block, so a simplifier that drops a
//! copy within its source's block after comparing the strides alone
//! (`Fault::CopyStridesOnly`) passes every FUN campaign; the FUNMEM
//! generator copies within one block at other offsets and must catch it.

use funmem_oracle::campaign::{self, Config, Source, Summary};
use funmem_oracle::check::{check_case, FailureKind};
use funmem_oracle::Case;
use funmem_transforms::fault::{self, Fault};

/// The campaign's seed and length: the fault is found well within it.
const SEED: u64 = 4;
const COUNT: u64 = 64;

fn config(source: Source, passes: &str) -> Config {
    Config {
        count: Some(COUNT),
        threads: 2,
        reduce_tries: 1000,
        source,
        ..Config::new(SEED, funmem_transforms::pass::parse_list(passes).unwrap())
    }
}

fn with_fault(mut cfg: Config) -> Config {
    cfg.on_worker = || fault::set(Fault::CopyStridesOnly);
    cfg
}

fn run(cfg: &Config) -> Summary {
    campaign::run(cfg, &()).expect("the campaign runs")
}

fn failures(s: &Summary) -> String {
    s.failures
        .iter()
        .map(|f| {
            format!(
                "program {}: {:?} at `{}`: {}\n",
                f.index, f.kind, f.stage, f.message
            )
        })
        .collect()
}

#[test]
fn copies_compared_by_strides_alone_are_caught_by_funmem_campaigns() {
    let dir = std::env::temp_dir().join(format!("funmem-power-layouts-{}", std::process::id()));
    let mut cfg = with_fault(config(Source::Funmem, "simplify"));
    cfg.out = Some(dir.clone());
    let s = run(&cfg);
    let f = s
        .failures
        .first()
        .unwrap_or_else(|| panic!("CopyStridesOnly was not found in {COUNT} FUNMEM programs"));
    assert_eq!(f.stage, "simplify", "{}", failures(&s));
    assert!(
        matches!(
            f.kind,
            FailureKind::Invalid | FailureKind::Disagrees | FailureKind::IllTyped
        ),
        "{}",
        failures(&s)
    );
    assert!(
        f.reduced_statements <= 8,
        "reduced only to {} statements",
        f.reduced_statements
    );
    // The saved program and input reproduce it (with the fault on), and the
    // shipped simplifier passes it.
    let file = dir.join(f.file.as_deref().expect("saved"));
    assert!(file.extension().is_some_and(|e| e == "funmem"), "{file:?}");
    let text = std::fs::read_to_string(&file).expect("the saved program");
    let input = std::fs::read_to_string(file.with_extension("in")).expect("its input");
    let program = funmem_lang::parse::parse_program(&text, funmem_lang::ast::Lang::FunMem)
        .expect("the saved program parses");
    let inputs = funmem_semantics::textual::parse_values(&input).expect("its input parses");
    let case = Case { program, inputs };
    fault::set(Fault::CopyStridesOnly);
    let again = check_case(&case, &cfg.passes, cfg.limits);
    fault::set(Fault::None);
    let again = again.expect_err("the saved program fails again");
    assert_eq!(
        (again.stage.as_str(), again.kind),
        (f.stage.as_str(), f.kind)
    );
    assert!(
        check_case(&case, &cfg.passes, cfg.limits).is_ok(),
        "the saved program fails without the fault:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fun_campaigns_cannot_see_copies_compared_by_strides_alone() {
    // The same seed over more programs (the first COUNT among them).
    let cfg = Config {
        count: Some(300),
        ..with_fault(config(Source::Fun, "simplify"))
    };
    let s = run(&cfg);
    assert_eq!(s.programs, 300);
    assert!(s.failures.is_empty(), "{}", failures(&s));
}

#[test]
fn funmem_campaigns_pass_on_the_shipped_simplifier() {
    let s = run(&config(Source::Funmem, "simplify"));
    assert_eq!(s.programs, COUNT);
    assert!(s.failures.is_empty(), "{}", failures(&s));
    // Some programs get stuck or race (alike everywhere), most give results.
    assert!(
        s.went_wrong > 0 && s.went_wrong < COUNT / 2,
        "{}",
        s.went_wrong
    );
}

#[test]
fn funmem_sources_pass_their_own_checks() {
    // The generator's programs are valid or get stuck alike in both
    // semantics: nothing fails at stage `source`, whatever the passes.
    for (seed, passes) in [
        (11, "none"),
        (12, "simplify,expand-cpu"),
        (13, "simplify,expand-gpu"),
    ] {
        let cfg = Config {
            seed,
            count: Some(200),
            ..config(Source::Funmem, passes)
        };
        let s = run(&cfg);
        assert!(s.failures.is_empty(), "{passes}: {}", failures(&s));
    }
}

/// Programs to the first detection in 3,000-program campaigns, and the
/// first failure reduced (run with `cargo test --release -p funmem-oracle
/// --test power_layouts -- --ignored --nocapture`).
#[test]
#[ignore]
fn first_detection_in_3000_programs() {
    for seed in [0, 1, 2] {
        let cfg = Config {
            seed,
            count: Some(3000),
            reduce_tries: 0,
            ..with_fault(config(Source::Funmem, "simplify"))
        };
        let s = run(&cfg);
        let Some(first) = s.failures.first() else {
            eprintln!("seed {seed}: not found in {} programs", s.programs);
            continue;
        };
        let case = campaign::case_from(Source::Funmem, seed, first.index, &cfg.gen);
        fault::set(Fault::CopyStridesOnly);
        let failure = campaign::check(&case, &cfg).expect_err("it fails");
        let cfg = Config {
            reduce_tries: 2000,
            ..cfg
        };
        let (small, f) = campaign::reduce_failure(&case, &failure, &cfg);
        fault::set(Fault::None);
        eprintln!(
            "seed {seed}: {} failures in {} programs ({:.0} programs/s); the first is program {} ({} at `{}`), reduced from {} to {} statements: {}\n{}",
            s.failures.len(),
            s.programs,
            s.programs_per_second,
            first.index + 1,
            f.kind.name(),
            f.stage,
            funmem_oracle::reduce::size(&case.program),
            funmem_oracle::reduce::size(&small.program),
            f.message,
            small.program
        );
    }
}

/// A copy out of an `if`'s array into a block of another name that the
/// `if` may have returned: one block at run time, so IMP's parallel copy
/// must go through a temporary as eq. 5's memcopy reads before it writes
/// (it raced: iteration 0 wrote the cell iteration 1 read).
#[test]
fn a_copy_between_blocks_an_if_made_one_does_not_race_in_imp() {
    let text = "def main (n: int) (c: int) =
  let (mb: mem) = alloc n + 1
  let (a: [n]int @ mb -> 0 + {(n : 1)}) = iota n
  let (mb2: mem) = alloc n + 1
  let (b: [n]int @ mb2 -> 0 + {(n : 1)}) = iota n
  let (zm: mem) (z: [n]int @ zm -> 0 + {(n : 1)}) = if c then
      in (mb, a)
    else
      in (mb2, b)
  let (y: [n]int @ mb -> 1 + {(n : 1)}) = copy z
  in (y)
";
    let program =
        funmem_lang::parse::parse_program(text, funmem_lang::ast::Lang::FunMem).expect("parses");
    for passes in ["none", "simplify"] {
        let cfg = config(Source::Funmem, passes);
        for c in [0, 1] {
            let case = Case {
                program: program.clone(),
                inputs: vec![
                    funmem_semantics::value::Value::Scalar(funmem_lang::prim::Const::I64(4)),
                    funmem_semantics::value::Value::Scalar(funmem_lang::prim::Const::I64(c)),
                ],
            };
            let r = check_case(&case, &cfg.passes, cfg.limits);
            assert!(r.is_ok(), "{passes}, c = {c}: {r:?}");
        }
    }
}
