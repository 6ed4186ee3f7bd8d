//! The helpers of `scripts/bench-rodinia` that run without a GPU or a
//! Rodinia checkout: its command-line checks, and the converter
//! (`scripts/rodinia/fdata.py`) that turns `funmem dataset`'s binary data
//! into Rodinia's input formats, checked against the same values in text.

mod common;

use common::{assert_exit, funmem, temp_dir};
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(root().join("scripts/bench-rodinia"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("bash runs")
}

fn fdata(args: &[&str]) -> Option<Output> {
    match Command::new("python3")
        .arg(root().join("scripts/rodinia/fdata.py"))
        .args(args)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            println!("SKIPPED: python3 does not run here: {e}");
            None
        }
    }
}

#[test]
fn bench_rodinia_rejects_bad_command_lines() {
    let o = script(&[]);
    assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("RODINIA_DIR"));

    let empty = temp_dir("empty");
    let o = script(&[empty.to_str().unwrap()]);
    assert_exit(&o, 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("has no opencl/ folder"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let checkout = temp_dir("checkout");
    std::fs::create_dir_all(checkout.join("opencl")).unwrap();
    let c = checkout.to_str().unwrap();
    for (args, says) in [
        (vec![c, "--only", "hotspot,bfs"], "unknown benchmark 'bfs'"),
        (vec![c, "--runs", "0"], "--runs wants a positive number"),
        (vec![c, "--runs", "x"], "--runs wants a positive number"),
        (vec![c, "--bogus"], "unknown option --bogus"),
        (vec![c, "--out"], "RODINIA_DIR"),
    ] {
        let o = script(&args);
        assert_exit(&o, 2);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The f32 elements of a text value as `funmem dataset` prints them.
fn floats(text: &str) -> Vec<f32> {
    text.split(|c: char| c == ',' || c == '[' || c == ']' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| t.trim_end_matches("f32").parse().expect("an f32"))
        .collect()
}

#[test]
fn fdata_writes_rodinias_formats_from_funmem_data() {
    let dir = temp_dir("fdata");
    let bin = dir.join("in.bin");
    let gen = [
        "-g",
        "3i64",
        "-g",
        "[3][4]f32",
        "-g",
        "2i32",
        "-g",
        "[2][3]f32",
    ];
    let o = funmem(&[&["dataset", "-b", "-s", "7"][..], &gen[..]].concat(), "");
    assert_exit(&o, 0);
    std::fs::write(&bin, &o.stdout).unwrap();
    let o = funmem(&[&["dataset", "-s", "7"][..], &gen[..]].concat(), "");
    assert_exit(&o, 0);
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    let a = floats(lines[1]);
    let b = floats(lines[3]);
    assert_eq!((a.len(), b.len()), (12, 6));
    let b_path = bin.to_str().unwrap();

    let Some(o) = fdata(&["shapes", b_path]) else {
        return;
    };
    assert_exit(&o, 0);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "i64\n[3][4]f32\ni32\n[2][3]f32\n"
    );

    // HotSpot: the second array, one element a line, the same floats.
    let out = dir.join("lines.txt");
    let o = fdata(&["lines", b_path, "1", out.to_str().unwrap()]).unwrap();
    assert_exit(&o, 0);
    let got: Vec<f32> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(got, b);

    // k-means: int32 n, int32 d, then the floats row by row.
    let out = dir.join("points.bin");
    let o = fdata(&["kmeans", b_path, "0", out.to_str().unwrap()]).unwrap();
    assert_exit(&o, 0);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes.len(), 8 + 12 * 4);
    assert_eq!(&bytes[0..8], &[3, 0, 0, 0, 4, 0, 0, 0]);
    let got: Vec<f32> = bytes[8..]
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, a);

    // SRAD: a plain PGM, cols then rows, grey levels 0..255.
    let out = dir.join("image.pgm");
    let o = fdata(&["pgm", b_path, "1", out.to_str().unwrap()]).unwrap();
    assert_exit(&o, 0);
    let pgm = std::fs::read_to_string(&out).unwrap();
    let mut it = pgm.lines();
    assert_eq!(
        (it.next(), it.next(), it.next()),
        (Some("P2"), Some("3 2"), Some("255"))
    );
    let grey: Vec<i64> = it
        .flat_map(|l| l.split_whitespace().map(|t| t.parse::<i64>().unwrap()))
        .collect();
    let want: Vec<i64> = b.iter().map(|x| (x * 255.0).round() as i64).collect();
    assert_eq!(grey, want);

    // Errors: exit 2 with a message, no traceback.
    for (args, says) in [
        (vec!["lines", b_path, "2", "/dev/null"], "no array number 2"),
        (
            vec!["kmeans", b_path, "x", "/dev/null"],
            "K must be a number",
        ),
        (vec!["pgm"], "usage"),
    ] {
        let o = fdata(&args).unwrap();
        assert_exit(&o, 2);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says) && !err.contains("Traceback"), "{err}");
    }
    let junk = dir.join("junk.bin");
    std::fs::write(&junk, b"not futhark data").unwrap();
    let o = fdata(&["shapes", junk.to_str().unwrap()]).unwrap();
    assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("not in Futhark's binary format"));
}

/// Writes one run of the interposer's totals, wall time and output.
fn fake_run(dir: &std::path::Path, name: &str, r: usize, kernel_ns: u64, out: &str) {
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join(format!("{name}.{r}.json")),
        format!(
            "{{\"kernel_ns\": {kernel_ns}, \"launches\": 3, \"transfer_ns\": 2000, \"transfers\": 2, \
             \"transfer_bytes\": 64, \"unprofiled\": 0, \"kernels\": {{\"k\": {{\"launches\": 3, \"ns\": {kernel_ns}}}}}}}\n"
        ),
    )
    .unwrap();
    std::fs::write(runs.join(format!("{name}.{r}.wall")), "500000\n").unwrap();
    std::fs::write(runs.join(format!("{name}.{r}.out")), out).unwrap();
}

#[test]
fn summary_writes_futhark_bench_json_under_funmems_names() {
    let dir = temp_dir("summary");
    for (r, ns) in [
        (0, 9_000_000),
        (1, 3_000_000),
        (2, 1_000_000),
        (3, 2_000_000),
    ] {
        fake_run(&dir, "nw", r, ns, "Exec: 2.0\nTotal: 9.5\n");
        fake_run(&dir, "kmeans", r, ns, "iterated 40 times\nExec: 0.1\n");
    }
    // funmem bench's JSON for k-means: its names are taken for Rodinia's.
    std::fs::write(
        dir.join("funmem-kmeans.json"),
        r##"{"benches/programs/kmeans.fun": {"datasets": {"#2 (kdd)": {"runtimes": [4000, 5000, 6000]}}}}"##,
    )
    .unwrap();
    std::fs::write(dir.join("kmeans-rounds.txt"), "40 rounds\n").unwrap();
    let Ok(o) = Command::new("python3")
        .arg(root().join("scripts/rodinia/summary.py"))
        .args([dir.to_str().unwrap(), "3", "nw", "kmeans"])
        .output()
    else {
        println!("SKIPPED: python3 does not run here");
        return;
    };
    assert_exit(&o, 0);
    let table = String::from_utf8_lossy(&o.stdout);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rodinia.json")).unwrap()).unwrap();
    // Runs 1..3 (run 0 is the warm-up), kernel time in µs.
    let nw = &j["benches/programs/nw.fun"]["datasets"]["2048"];
    assert_eq!(nw["runtimes"], serde_json::json!([3000, 1000, 2000]));
    assert_eq!(
        nw["rodinia"]["wall_us"],
        serde_json::json!([500000, 500000, 500000])
    );
    assert_eq!(nw["rodinia"]["transfer_us"], serde_json::json!([2, 2, 2]));
    assert_eq!(
        nw["rodinia"]["own_timing"],
        serde_json::json!(["Exec: 2.0", "Total: 9.5"])
    );
    let km = &j["benches/programs/kmeans.fun"]["datasets"]["#2 (kdd)"];
    assert_eq!(km["rodinia"]["iterations"], serde_json::json!([40, 40, 40]));
    // The table: medians, ours beside, the ratio, and the rounds compared.
    assert!(table.contains("2.00"), "{table}");
    assert!(table.contains("5.0"), "{table}");
    assert!(table.contains("0.400"), "{table}");
    assert!(table.contains("Ours: 40 rounds (the same)"), "{table}");
}
