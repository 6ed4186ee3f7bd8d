//! Memory expansion (IFL 2022 §5): the paper's example, the GPU offset
//! erratum, kernel-variant sizes, refused rewrites, and short fixed-seed
//! fuzz campaigns through `expand-gpu` and `expand-cpu`.

use funmem_lang::alpha::alpha_eq;
use funmem_lang::ast::{Lang, Program};
use funmem_lang::obligation::{Claim, Outcome};
use funmem_lang::parse::parse_program;
use funmem_oracle::campaign::{self, Config};
use funmem_oracle::prove::Provers;
use funmem_oracle::GenConfig;
use funmem_semantics::error::{ErrorKind, Limits};
use funmem_semantics::validity::{validate, Verdict};
use funmem_semantics::value::Value;
use funmem_transforms::expand::{allocs_in_kernels, expand, Layout};
use funmem_transforms::pass::parse_list;
use std::path::Path;

fn read(rel: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn funmem(rel: &str) -> Program {
    parse_program(&read(rel), Lang::FunMem).unwrap()
}

fn ints(v: &[i64]) -> Vec<Value> {
    v.iter()
        .map(|&k| Value::Scalar(funmem_lang::prim::Const::I64(k)))
        .collect()
}

#[test]
fn the_section5_example_expands_to_the_papers_files_in_both_layouts() {
    let before = funmem("papers/ifl2022/sec5_kernel_alloc.funmem");
    assert_eq!(allocs_in_kernels(&before).len(), 2);
    for (layout, file) in [
        (Layout::Cpu, "papers/ifl2022/sec5_expanded_cpu.funmem"),
        (Layout::Gpu, "papers/ifl2022/sec5_expanded_gpu.funmem"),
    ] {
        let out = expand(&before, layout, &Provers::default());
        assert!(
            alpha_eq(&out.program, &funmem(file)),
            "{layout:?}:\n{}",
            out.program
        );
        assert!(allocs_in_kernels(&out.program).is_empty());
        // Two blocks, three obligations each (fits its part, disjoint,
        // in bounds), all proved.
        assert_eq!(out.obligations.len(), 6);
        assert!(out
            .obligations
            .iter()
            .all(|(_, v)| v.outcome == Outcome::Proved));
        match validate(&out.program, &ints(&[3, 4]), Limits::default()) {
            Verdict::Valid(_) => {}
            v => panic!("{layout:?}: {v:?}"),
        }
    }
}

#[test]
fn erratum12_the_unscaled_gpu_offset_races_and_the_scaled_one_is_valid() {
    let paper = funmem("papers/ifl2022/errata/e12_gpu_offset_unscaled.funmem");
    match validate(&paper, &ints(&[2, 3]), Limits::default()) {
        Verdict::HeapError(e) => assert!(matches!(e.kind, ErrorKind::Race(_)), "{e}"),
        v => panic!("expected a race, got {v:?}"),
    }
    let ours = expand(
        &funmem("papers/ifl2022/errata/e12_gpu_offset.funmem"),
        Layout::Gpu,
        &Provers::default(),
    );
    let text = ours.program.to_string();
    assert!(text.contains("m * n + i + {(m : n)}"), "{text}");
    for input in [[2, 3], [3, 1], [4, 5], [0, 2]] {
        match validate(&ours.program, &ints(&input), Limits::default()) {
            Verdict::Valid(_) => {}
            v => panic!("{input:?}: {v:?}"),
        }
    }
}

#[test]
fn kernel_variant_sizes_are_expanded_by_their_maximum() {
    // Iteration i makes an array of i + 1 elements.
    let src = "def main (n: int) =
  let (res_mem: mem) = alloc n
  let (res: [n]int @ res_mem -> R(n)) = kernel i < n do
    let (k: int) = i + 1
    let (t_mem: mem) = alloc k
    let (t: [k]int @ t_mem -> R(k)) = iota k
    let (x: int) = t[i]
    in (x)
  in (res)";
    let p = parse_program(src, Lang::FunMem).unwrap();
    for layout in [Layout::Cpu, Layout::Gpu] {
        let out = expand(&p, layout, &Provers::default());
        assert!(
            allocs_in_kernels(&out.program).is_empty(),
            "{}",
            out.program
        );
        let at_most = out
            .obligations
            .iter()
            .find(|(o, _)| matches!(o.claim, Claim::AtMost(..)))
            .expect("an at-most obligation for the variant size");
        assert_eq!(at_most.1.outcome, Outcome::Proved, "{}", at_most.0);
        for n in [0, 1, 4] {
            match validate(&out.program, &ints(&[n]), Limits::default()) {
                Verdict::Valid(v) => assert_eq!(v.len(), 1),
                v => panic!("{layout:?} n = {n}: {v:?}\n{}", out.program),
            }
        }
    }
}

#[test]
fn a_size_that_may_be_negative_is_hoisted_out_of_its_branch_as_max_0() {
    // Hoisting `alloc k` out of the branch must not get stuck when k < 0
    // and the branch is not taken.
    let src = "def main (n: int) (k: int) =
  let (res_mem: mem) = alloc n
  let (res: [n]int @ res_mem -> R(n)) = kernel i < n do
    let (c: int) = k > 0
    let (x: int) = if c then
        let (t_mem: mem) = alloc k
        let (t: [k]int @ t_mem -> R(k)) = iota k
        let (y: int) = t[0]
        in (y)
      else
        in (i)
    in (x)
  in (res)";
    let p = parse_program(src, Lang::FunMem).unwrap();
    let out = expand(&p, Layout::Gpu, &Provers::default());
    assert!(
        allocs_in_kernels(&out.program).is_empty(),
        "{}",
        out.program
    );
    assert!(
        out.program.to_string().contains("max(k, 0)"),
        "{}",
        out.program
    );
    for input in [[2, -3], [2, 2], [0, 1]] {
        match validate(&out.program, &ints(&input), Limits::default()) {
            Verdict::Valid(v) => assert_eq!(v.len(), 1),
            v => panic!("{input:?}: {v:?}"),
        }
    }
}

#[test]
fn a_size_read_from_an_array_is_hoisted_with_the_maximum_of_the_sizes() {
    let src = "def main (n: int) (xm: mem) (xs: [n]int @ xm -> R(n)) =
  let (res_mem: mem) = alloc n
  let (res: [n]int @ res_mem -> R(n)) = kernel i < n do
    let (k: int) = xs[i]
    let (t_mem: mem) = alloc k
    let (t: [k]int @ t_mem -> R(k)) = iota k
    let (y: int) = t[0]
    in (y)
  in (res)";
    let p = parse_program(src, Lang::FunMem).unwrap();
    let out = expand(&p, Layout::Gpu, &Provers::default());
    assert!(
        allocs_in_kernels(&out.program).is_empty(),
        "{}",
        out.program
    );
    assert!(out.program.to_string().contains("reduce (max)"));
    assert!(!out.obligations.is_empty());
    for (o, v) in &out.obligations {
        assert_eq!(v.outcome, Outcome::Proved, "{o:?}");
    }
}

#[test]
fn fixed_seed_campaigns_through_both_layouts_find_nothing() {
    for passes in ["expand-gpu", "simplify,expand-cpu"] {
        let cfg = Config {
            count: Some(150),
            threads: 2,
            reduce_tries: 500,
            ..Config::new(8, parse_list(passes).unwrap())
        };
        let s = campaign::run(&cfg, &()).unwrap();
        assert_eq!(s.programs, 150);
        assert!(s.failures.is_empty(), "{passes}: {:?}", s.failures);
    }
}

#[test]
fn expand_gpu_leaves_almost_no_allocation_inside_kernels() {
    // Of the generated programs that allocate inside kernels, how many are
    // left with an allocation there (data-dependent or possibly negative
    // sizes under a branch).
    let gen = GenConfig::default();
    let (mut with, mut left, mut blocks, mut blocks_left) = (0, 0, 0, 0);
    for k in 0..400 {
        let case = campaign::case_for(31, k, &gen);
        let Ok(p) = funmem_transforms::transform_program(&case.program) else {
            continue;
        };
        let before = allocs_in_kernels(&p).len();
        if before == 0 {
            continue;
        }
        with += 1;
        blocks += before;
        let out = expand(&p, Layout::Gpu, &Provers::default());
        let after = allocs_in_kernels(&out.program).len();
        blocks_left += after;
        left += (after > 0) as usize;
    }
    eprintln!(
        "{with} programs allocate inside kernels ({blocks} allocations); after expand-gpu {left} programs keep {blocks_left}"
    );
    assert!(with >= 100, "{with}");
    // Sizes read from arrays in the kernel cannot be bounded before it, and
    // a block that an `if` returns together with such a block stays too.
    assert!(
        blocks_left * 5 <= blocks,
        "{blocks_left} of {blocks} allocations stay inside kernels"
    );
    assert!(left < with);
}
