//! `scripts/bench-table`: the benchmark table made from `funmem bench
//! --json` results and `scripts/bench-rodinia`'s `rodinia.json`, checked on
//! synthetic files of both layouts (rows, ratios, the cells without a
//! figure, failures, the list of benchmarks more than 2× slower), and its
//! errors on a bad folder or file (exit 2, a message, no traceback).

mod common;

use common::{assert_exit, temp_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn table(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(root().join("scripts/bench-table"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("python3 runs (scripts/install-deps installs it)")
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("temp file");
}

/// One dataset of `funmem bench --json`, as src/bench_cmd.rs writes it
/// (runtimes in µs; our figures under "funmem").
fn ours(runtimes: &[u64], kernel_us: &[u64], peak: u64, allocations: u64) -> String {
    let list = |xs: &[u64]| {
        xs.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        r#"{{
        "runtimes": [{rt}],
        "bytes": {{ "space 'device'": {peak} }},
        "stderr": "",
        "funmem": {{
          "device": "NVIDIA H100 80GB HBM3", "passes": "simplify,expand-gpu",
          "runs": {runs}, "warmup": 1, "timed_out": false,
          "runtime_ms": {{ "min": 1.0, "median": 1.0, "max": 1.0 }},
          "kernel_us": [{ku}], "kernel_ms": {{ "min": 1.0, "median": 1.0, "max": 1.0 }},
          "wall_us": [{rt}], "wall_ms": {{ "min": 1.0, "median": 1.0, "max": 1.0 }},
          "peak_bytes": {peak}, "allocations": {allocations}, "bytes_allocated": {peak},
          "h2d_transfers": 2, "h2d_bytes": 100, "d2h_transfers": 1, "d2h_bytes": 50,
          "sync_reads": 0, "host_writes": 0, "launches": 9, "error_checks": 1,
          "bytes_moved": 1000, "gbps": 1.0, "of_copy": null, "kernels": [],
          "reductions": [], "copy": null
        }}
      }}"#,
        rt = list(runtimes),
        runs = runtimes.len(),
        ku = list(kernel_us),
    )
}

/// One program of `funmem bench --json`.
fn ours_file(program: &str, datasets: &[(&str, String)]) -> String {
    let ds: Vec<String> = datasets
        .iter()
        .map(|(name, body)| format!("{}: {body}", json_string(name)))
        .collect();
    format!(
        "{{ {}: {{ \"datasets\": {{ {} }} }} }}\n",
        json_string(program),
        ds.join(",\n")
    )
}

/// One dataset of bench-rodinia's rodinia.json, as its summary writes it
/// (Rodinia's kernel time per run in µs; its figures under "rodinia").
fn reference(kernel_us: &[u64]) -> String {
    let list = kernel_us
        .iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"{{ "runtimes": [{list}], "rodinia": {{ "kernel_us": [{list}], "wall_us": [900000],
        "transfer_us": [1000], "launches": 12, "transfers": 3, "transfer_bytes": 4096,
        "unprofiled": 0, "kernels": {{ "k": 12 }}, "own_timing": ["Exec: 1.0"] }} }}"#
    )
}

fn json_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

const HOTSPOT: &str = "1024i64 1024i64 360i64 [1024][1024]f32 [1024][1024]f32";
const PATHFINDER: &str = "#2 (\"100000i64 100i64\")";
const NW: &str = "2049i64 64i64 10i32 [2049][2049]i32 [2049][2049]i32";
const LUD: &str = "#2 (\"2048i64 32i64 1i64\")";
const OP_SMALL: &str = "1i32 8388608i64 1i64 1i64 1i64 1i64 30i64 1i64 [1][1][1]f32 [1][1][1]f32 [1][1][1]f32 [1][1]f32 [1][1]f32 [1][1]f32";
const OP_MEDIUM: &str = "2i32 1048576i64 1i64 5i64 3i64 5i64 30i64 1i64 [1][3][3]f32 [1][5][3]f32 [1][5][3]f32 [1][3]f32 [1][1]f32 [1][5]f32";
const OP_LARGE: &str = "3i32 131072i64 1i64 367i64 3i64 2i64 30i64 1i64 [1][3][3]f32 [1][367][3]f32 [1][367][3]f32 [1][3]f32 [1][1]f32 [1][2]f32";

/// A results folder as the lead's runs leave it: funmem-<name>.json per
/// program and bench-rodinia's rodinia.json.
fn results() -> PathBuf {
    let dir = temp_dir("results");
    let prog = |n: &str| format!("benches/programs/{n}.fun");
    write(
        &dir,
        "funmem-hotspot.json",
        &ours_file(
            &prog("hotspot"),
            &[(
                HOTSPOT,
                ours(
                    &[452000, 450000, 460000],
                    &[440000, 441000, 445000],
                    12_582_912,
                    7,
                ),
            )],
        ),
    );
    write(
        &dir,
        "funmem-pathfinder.json",
        &ours_file(
            &prog("pathfinder"),
            &[(
                PATHFINDER,
                ours(
                    &[13000, 12000, 14000],
                    &[11000, 11000, 11000],
                    80_000_800,
                    4,
                ),
            )],
        ),
    );
    write(
        &dir,
        "funmem-nw.json",
        &ours_file(
            &prog("nw"),
            &[(NW, ours(&[291000], &[290000], 50_000_000, 3))],
        ),
    );
    write(
        &dir,
        "funmem-lud.json",
        &ours_file(
            &prog("lud"),
            &[(
                LUD,
                "\"benches/programs/lud.fun:88:9: out of device memory: reading the error buffer: CL_OUT_OF_RESOURCES\"".into(),
            )],
        ),
    );
    write(
        &dir,
        "funmem-optionpricing.json",
        &ours_file(
            &prog("optionpricing"),
            &[
                (OP_SMALL, ours(&[1009000], &[1000000], 3 << 30, 12)),
                (
                    OP_MEDIUM,
                    "\"timed out after 0 runs: the first runs took longer than --timeout 100 s\""
                        .into(),
                ),
                (
                    OP_LARGE,
                    ours(&[158600, 158600], &[150000, 150000], 1 << 20, 30),
                ),
            ],
        ),
    );
    write(
        &dir,
        "funmem-sgemm.json",
        &ours_file(
            &prog("sgemm"),
            &[(
                "1024i64 992i64 1056i64 [1024][992]f32 [992][1056]f32 [1024][1056]f32 f32 f32",
                ours(&[7200], &[7000], 4096, 5),
            )],
        ),
    );
    // bench-rodinia names its datasets after funmem's; LUD failed on our
    // side, and NW's reference is 1.5 ms (ours 291 ms).
    write(
        &dir,
        "rodinia.json",
        &format!(
            "{{ {}: {{ \"datasets\": {{ {}: {} }} }},\n {}: {{ \"datasets\": {{ {}: {} }} }},\n {}: {{ \"datasets\": {{ {}: {} }} }},\n {}: {{ \"datasets\": {{ {}: {} }} }} }}\n",
            json_string(&prog("hotspot")),
            json_string(HOTSPOT),
            reference(&[50000, 51000, 52000]),
            json_string(&prog("pathfinder")),
            json_string(PATHFINDER),
            reference(&[26000, 26000, 27000]),
            json_string(&prog("nw")),
            json_string(NW),
            reference(&[1500, 1500, 1500]),
            json_string(&prog("lud")),
            json_string(LUD),
            reference(&[40000, 41000, 42000]),
        ),
    );
    dir
}

fn row<'a>(out: &'a str, start: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no row starting `{start}` in:\n{out}"))
}

#[test]
fn the_table_has_a_row_per_dataset_with_ratios_and_empty_cells() {
    let dir = results();
    let o = table(&[dir.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("| benchmark | dataset | reference ms | ours ms | ours kernel ms | reference/ours | reference/ours kernels | Henriksen K40 reference/Futhark | our peak device memory | our allocations |\n"),
        "{out}"
    );
    assert_eq!(
        row(&out, "| HotSpot"),
        "| HotSpot | 1024×1024, 360 steps | 51.00 | 452.00 | 441.00 | 0.11 | 0.12 | 0.86 (51.6 / 60.3) | 12.00 MiB | 7 |"
    );
    assert_eq!(
        row(&out, "| Pathfinder"),
        "| Pathfinder | 10^5 columns × 100 rows | 26.00 | 13.00 | 11.00 | 2.00 | 2.36 | 2.78 (26.1 / 9.4) | 76.29 MiB | 4 |"
    );
    // NW is not in Henriksen's table.
    assert_eq!(
        row(&out, "| NW"),
        "| NW | 2048 | 1.50 | 291.00 | 290.00 | 0.01 | 0.01 | — | 47.68 MiB | 3 |"
    );
    // Our LUD failed: a footnote with the error's first words.
    assert_eq!(
        row(&out, "| LUD"),
        "| LUD | 2048 | 41.00 | failed [1] | — | — | — | 0.37 (40.6 / 111.1) | — | — |"
    );
    assert!(
        out.contains("\n[1] LUD (2048): failed: out of device memory: reading the error buffer: CL_OUT_OF_RESOURCES\n"),
        "{out}"
    );
    // OptionPricing has no reference; its datasets are Henriksen's small,
    // medium and large by their names.
    assert_eq!(
        row(&out, "| OptionPricing | small"),
        "| OptionPricing | small | — | 1009.00 | 1000.00 | — | — | 0.64 (4.7 / 7.3) | 3.00 GiB | 12 |"
    );
    assert_eq!(
        row(&out, "| OptionPricing | medium"),
        "| OptionPricing | medium | — | timed out [2] | — | — | — | 0.59 (10.4 / 17.7) | — | — |"
    );
    assert!(
        out.contains("\n[2] OptionPricing (medium): timed out after 0 runs"),
        "{out}"
    );
    assert_eq!(
        row(&out, "| OptionPricing | large"),
        "| OptionPricing | large | — | 158.60 | 150.00 | — | — | 0.61 (97.1 / 158.6) | 1.00 MiB | 30 |"
    );
    assert_eq!(
        row(&out, "| SGEMM"),
        "| SGEMM | Parboil medium | — | 7.20 | 7.00 | — | — | 0.47 (3.4 / 7.2) | 4.00 KiB | 5 |"
    );
    // The issue's order.
    let order: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| benchmark"))
        .map(|l| l.split(" | ").next().unwrap_or_default())
        .collect();
    assert_eq!(
        order,
        [
            "| HotSpot",
            "| Pathfinder",
            "| NW",
            "| LUD",
            "| OptionPricing",
            "| OptionPricing",
            "| OptionPricing",
            "| SGEMM"
        ]
    );
    // Slower by more than 2×: HotSpot (0.11) and NW (0.01), not
    // Pathfinder (2.00).
    let slow = out
        .split("Slower than the reference by more than 2×:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of slow benchmarks in:\n{out}"));
    assert_eq!(
        slow,
        "- HotSpot (1024×1024, 360 steps): reference 51.00 ms, ours 452.00 ms, 8.9× slower\n\
         - NW (2048): reference 1.50 ms, ours 291.00 ms, 194.0× slower\n"
    );
}

#[test]
fn csv_gives_the_same_figures() {
    let dir = results();
    let o = table(&["--csv", dir.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "benchmark,dataset,reference_ms,ours_ms,ours_kernel_ms,reference_over_ours,reference_over_ours_kernels,henriksen_reference_ms,henriksen_futhark_ms,henriksen_reference_over_futhark,peak_device_bytes,allocations,note"
    );
    assert_eq!(
        lines[1],
        "HotSpot,\"1024×1024, 360 steps\",51.000,452.000,441.000,0.11,0.12,51.6,60.3,0.86,12582912,7,"
    );
    assert_eq!(
        lines[3],
        "NW,2048,1.500,291.000,290.000,0.01,0.01,,,,50000000,3,"
    );
    assert!(
        lines[4].starts_with(
            "LUD,2048,41.000,,,,,40.6,111.1,0.37,,,failed; LUD (2048): failed: out of device memory"
        ),
        "{out}"
    );
    assert_eq!(lines.len(), 9, "{out}");
}

/// A reference whose dataset is bench-rodinia's own label (run without
/// funmem's JSON beside it) pairs with our Table 4 dataset of the same
/// program; a Rodinia benchmark without a reference says so.
#[test]
fn differently_named_datasets_of_one_program_pair() {
    let dir = temp_dir("pair");
    write(
        &dir,
        "funmem-srad.json",
        &ours_file(
            "./benches/programs/srad.fun",
            &[
                (
                    "#0 (\"3i64 4i64 1i64 [[0.5f32, 0.25f32]]\")",
                    ours(&[100], &[90], 1024, 2),
                ),
                (
                    "502i64 458i64 100i64 [502][458]f32",
                    ours(&[44000], &[40000], 2048, 9),
                ),
            ],
        ),
    );
    write(
        &dir,
        "funmem-backprop.json",
        &ours_file(
            "benches/programs/backprop.fun",
            &[(
                "#2 (\"1048576i64 30i64\")",
                ours(&[10000], &[9000], 2048, 9),
            )],
        ),
    );
    write(
        &dir,
        "rodinia.json",
        &format!(
            "{{ \"benches/programs/srad.fun\": {{ \"datasets\": {{ \"502x458, 100 iterations\": {} }} }},\n\
             \"benches/programs/kmeans.fun\": {{ \"datasets\": {{ \"494019x34, k=5\": {} }} }} }}",
            reference(&[22000]),
            reference(&[900000]).replace("\"own_timing\"", "\"iterations\": [37, 37], \"own_timing\"")
        ),
    );
    write(&dir, "kmeans-rounds.txt", "36 rounds\n");
    let o = table(&[dir.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        row(&out, "| SRAD | 502"),
        "| SRAD | 502×458, 100 steps | 22.00 | 44.00 | 40.00 | 0.50 | 0.55 | 0.99 (21.8 / 22.1) | 2.00 KiB | 9 |"
    );
    // The small case: no Henriksen figure, no reference needed.
    assert_eq!(
        row(&out, "| SRAD | #0"),
        "| SRAD | #0 (\"3i64 4i64 1i64 [[0.5f32, 0.25f32]]\") | — | 0.10 | 0.09 | — | — | — | 1.00 KiB | 2 |"
    );
    assert_eq!(
        row(&out, "| Backprop"),
        "| Backprop | 2^20 | — [1] | 10.00 | 9.00 | — | — | 2.46 (52.2 / 21.2) | 2.00 KiB | 9 |"
    );
    assert!(
        out.contains("\n[1] Backprop (2^20): no Rodinia result in the JSON"),
        "{out}"
    );
    // k-means: only Rodinia's run, with its rounds and ours beside.
    assert_eq!(
        row(&out, "| k-means"),
        "| k-means | 494019x34, k=5 | 900.00 [2] | — [3] | — | — | — | 2.53 (1680.3 / 664.2) | — | — |"
    );
    assert!(
        out.contains("\n[2] k-means: Rodinia made 37 rounds, ours 36 rounds (kmeans-rounds.txt); the times compare only where the two made as many\n[3] k-means (494019x34, k=5): no funmem result in the JSON\n"),
        "{out}"
    );
    assert!(
        out.ends_with("Slower than the reference by more than 2×:\n- none\n"),
        "{out}"
    );
}

#[test]
fn bad_folders_and_files_are_exit_2_with_a_message() {
    let check = |args: &[&str], want: &str| {
        let o = table(args);
        assert_exit(&o, 2);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("Traceback"), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    };
    let malformed = temp_dir("malformed");
    write(
        &malformed,
        "funmem-nw.json",
        "{ \"benches/programs/nw.fun\": ",
    );
    check(
        &[malformed.to_str().unwrap()],
        &format!("{}: not JSON", malformed.join("funmem-nw.json").display()),
    );
    let shape = temp_dir("shape");
    write(&shape, "x.json", "[1, 2]");
    check(&[shape.to_str().unwrap()], "not futhark bench's JSON");
    write(&shape, "x.json", "{ \"nw.fun\": { \"runs\": [] } }");
    check(
        &[shape.to_str().unwrap()],
        "program `nw.fun` has no \"datasets\" object",
    );
    write(
        &shape,
        "x.json",
        "{ \"nw.fun\": { \"datasets\": { \"d\": 3 } } }",
    );
    check(&[shape.to_str().unwrap()], "dataset `d` of `nw.fun`");
    write(
        &shape,
        "x.json",
        "{ \"nw.fun\": { \"datasets\": { \"d\": { \"runtimes\": 3 } } } }",
    );
    check(&[shape.to_str().unwrap()], "dataset `d` of `nw.fun`");
    let empty = temp_dir("empty");
    check(&[empty.to_str().unwrap()], "no *.json file to read");
    check(
        &["/nonexistent/results"],
        "/nonexistent/results: no such folder or file",
    );
    check(&[], "give the folder of the JSON results");
    check(&["--html", "x"], "unknown option `--html`");
}

/// A reference written as an error message (futhark bench's way of writing
/// a failure) is a failed cell with its footnote, as ours is.
#[test]
fn a_failed_reference_gets_a_footnote() {
    let dir = temp_dir("failed-reference");
    write(
        &dir,
        "rodinia.json",
        "{ \"benches/programs/nw.fun\": { \"datasets\": { \"2048\": \"Segmentation fault in nw\" } } }",
    );
    write(
        &dir,
        "funmem-nw.json",
        &ours_file(
            "benches/programs/nw.fun",
            &[(NW, ours(&[291000], &[290000], 4096, 3))],
        ),
    );
    let o = table(&[dir.to_str().unwrap()]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        row(&out, "| NW"),
        "| NW | 2048 | failed [1] | 291.00 | 290.00 | — | — | — | 4.00 KiB | 3 |"
    );
    assert!(
        out.contains("\n[1] NW (2048): the reference failed: Segmentation fault in nw\n"),
        "{out}"
    );
}
