//! The command line on typed programs with reduce and scan on OpenCL
//! (PoCL): `lower --to opencl` shows typed C, the float pragma and the
//! stages of a parallel reduce; `run --semantics opencl` prints typed
//! results as Futhark does; a stuck lambda exits 1 with its rule; `bench`
//! reports a reduce and a scan beside the copy kernel. `FUNMEM_SKIP_OPENCL=1`
//! skips the runs.

mod common;

use common::{assert_exit, funmem, opencl, text, write_temp};

const SUMS: &str = "def main (n: i64) (xs: [n]i64 @ xm -> R(n)) =
  var fm: mem; fm <- alloc n f32;
  kernel i < n do var x: i64; x <- xm[i]; fm[i] <- f32(x) * 0.75f32 done;
  var r: f32;
  r <- reduce (+) 0f32 for i < n do var x: f32; x <- fm[i] yield x done;
  var ym: mem; ym <- alloc n i32;
  scan (\\a b -> skip yield a + b) 0i32
    for i < n do var x: f32; x <- fm[i] yield i32(x) into ym[i] done
out (r, s: [n]i32 @ ym -> R(n))
";

#[test]
fn lower_to_opencl_shows_typed_c_and_reduce_stages() {
    let f = write_temp("sums19.imp", SUMS);
    let o = funmem(&["lower", &f, "--to", "opencl"], "");
    assert_exit(&o, 0);
    let out = text(&o.stdout);
    for want in [
        "#pragma OPENCL FP_CONTRACT OFF",
        "r <- reduce: parallel kernels",
        "__local float fm_lm[FM_GROUP];",
        "void fm_r1_op(",
        "convert_int_sat_rtz(v_x)",
        "FM_AT(float, v_fm, v_i)",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
}

#[test]
fn typed_reduce_and_scan_run_on_opencl() {
    if !opencl() {
        return;
    }
    let f = write_temp("sums19run.imp", SUMS);
    let args = ["run", &f, "--semantics", "opencl", "--device", "pocl"];
    let o = funmem(&args, "4 [2, 3, -1, 5]");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "6.75f32\n[1i32, 3i32, 3i32, 6i32]\n");
    let o = funmem(&args, "0 empty([0]i64)");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "0.0f32\nempty([0]i32)\n");
}

#[test]
fn a_stuck_lambda_exits_1_with_its_rule() {
    if !opencl() {
        return;
    }
    let f = write_temp(
        "stuck19.imp",
        "def main (n: i64) (xs: [n]i64 @ xm -> R(n)) =
  var r: i64;
  r <- reduce (\\a b -> skip yield a + b + 0 * (1 / (b + 9))) 0
    for i < n do var x: i64; x <- xm[i] yield x done
out (r)
",
    );
    let args = ["run", &f, "--semantics", "opencl", "--device", "pocl"];
    let o = funmem(&args, "3 [1i64, -9i64, 2i64]");
    assert_exit(&o, 1);
    let err = text(&o.stderr);
    assert!(
        err.contains("E-IMP-REDUCE") && err.contains("division by zero"),
        "{err}"
    );
    let o = funmem(&args, "3 [1i64, 9i64, 2i64]");
    assert_exit(&o, 0);
    assert_eq!(text(&o.stdout), "12i64\n");
}

#[test]
fn bench_reports_reduce_and_scan_beside_copy() {
    if !opencl() {
        return;
    }
    for (prog, what) in [("reduce_i32", "reduce"), ("scan_f32", "scan")] {
        let path = format!("{}/benches/programs/{prog}.imp", env!("CARGO_MANIFEST_DIR"));
        let args = [
            "bench", &path, "--device", "pocl", "--runs", "1", "--input", "-", "--json", "-",
        ];
        let o = funmem(&args, "5000");
        assert_exit(&o, 0);
        let all: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let v = &all[path.as_str()]["datasets"]["stdin"]["funmem"];
        let reds = v["reductions"].as_array().unwrap();
        assert_eq!(reds.len(), 1, "{v}");
        assert!(reds[0]["what"].as_str().unwrap().starts_with(what), "{v}");
        // A reduce reads each element once (4 bytes); a scan reads each
        // twice and writes it once.
        let per = if what == "reduce" { 4 } else { 12 };
        assert_eq!(reds[0]["bytes"].as_u64(), Some(5000 * per), "{v}");
        assert!(v["copy"]["gbps"].as_f64().unwrap() > 0.0);
    }
}
