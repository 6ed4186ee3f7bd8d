//! `funmem prove` on the GPU index patterns of tests/obligations/gpu_patterns.obl:
//! every true claim is proved and every near miss refuted, and the new
//! reasoning (gcd test, `%`, cases on a small range) shows in the verdicts.

use std::process::{Command, Output};

fn funmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_funmem"))
        .args(args)
        .output()
        .expect("run funmem")
}

#[test]
fn gpu_patterns_are_all_decided_as_expected() {
    let o = funmem(&["prove", "tests/obligations/gpu_patterns.obl"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("18 obligations: 11 proved, 7 refuted, 0 unknown; 0 not as expected"),
        "{out}"
    );
}

#[test]
fn the_lmad_procedure_alone_decides_gcd_remainder_and_pingpong_claims() {
    let o = funmem(&[
        "prove",
        "tests/obligations/gpu_patterns.obl",
        "--prover",
        "lmad",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    for name in [
        "strides_nine_six_offset_one",
        "strides_gcd_two_dims",
        "pingpong_parity_buffers",
        "pingpong_clamped_halo_below",
        "pingpong_clamped_halo_above",
        "remainder_in_bounds",
        "remainder_columns_disjoint",
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains(" proved ")),
            "{name}:\n{out}"
        );
    }
    // It never proves a near miss.
    for name in [
        "strides_nine_six_offset_three",
        "pingpong_same_parity",
        "remainder_negative_out_of_bounds",
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(name) && l.contains(" unknown ")),
            "{name}:\n{out}"
        );
    }
}
