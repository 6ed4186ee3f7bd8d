//! A reproduction's report: `results.json` (every figure), `table.md` (our
//! figures beside the paper's, with the aggregates) and the plots
//! (`speedup.svg`, `memory.svg`).
//!
//! Aggregates are computed twice, each labelled: the way the paper
//! computes its own ([`Aggregate`]), and as geometric means of ratios,
//! which do not let one large ratio dominate.

use super::manifest::{Aggregate, Manifest};
use super::plot::{bars, Series};
use super::{Measure, Row, RunInfo};
use serde::Serialize;
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// One aggregate of ours.
#[derive(Debug, Serialize)]
pub struct Figure {
    /// What it is.
    pub label: String,
    /// The variant it is about (compared with the baseline).
    pub variant: String,
    /// How it is computed: `paper` (the paper's way) or `geometric`.
    pub way: &'static str,
    /// Its value (a ratio, or a share for reductions).
    pub value: f64,
    /// How many datasets it is over.
    pub over: usize,
}

/// Writes the report of `rows` into `out`.
pub fn write(m: &Manifest, info: &RunInfo, rows: &[Row], out: &Path) -> Result<(), String> {
    let figures = aggregates(m, rows);
    let doc = json!({
        "paper": m.name,
        "title": m.title,
        "source": m.source,
        "published_on": m.published_on,
        "aggregate": m.aggregate,
        "run": info,
        "baseline": m.baseline,
        "variants": m.variants.iter().map(|v| json!({
            "name": v.name, "label": v.label, "passes": v.passes
        })).collect::<Vec<_>>(),
        "rows": rows,
        "aggregates": figures,
        "published_aggregates": m.published_aggregates.iter().map(|a| json!({
            "label": a.label, "value": a.value
        })).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    let put = |name: &str, text: &str| {
        std::fs::write(out.join(name), text)
            .map_err(|e| format!("{}: {e}", out.join(name).display()))
    };
    put("results.json", &text)?;
    put("table.md", &markdown(m, info, rows, &figures))?;
    plots(m, rows, out)
}

/// The variants compared with the baseline.
fn compared(m: &Manifest) -> impl Iterator<Item = &super::manifest::Variant> {
    m.variants.iter().filter(move |v| v.name != m.baseline)
}

fn ok<'a>(r: &'a Row, v: &str) -> Option<&'a Measure> {
    r.variants.get(v).filter(|x| x.ok())
}

/// Baseline time over the variant's (medians), where both ran.
fn speedup(r: &Row, base: &str, v: &str) -> Option<f64> {
    let (b, x) = (ok(r, base)?, ok(r, v)?);
    (x.runtime_median_ms > 0.0).then(|| b.runtime_median_ms / x.runtime_median_ms)
}

/// The reference's time over the variant's median, where both are known.
fn reference_ratio(r: &Row, v: &str) -> Option<f64> {
    let x = ok(r, v)?;
    let re = r.reference_ms?;
    (x.runtime_median_ms > 0.0).then(|| re / x.runtime_median_ms)
}

/// (before − after) / before of the peak memory.
fn memory_reduction(r: &Row, base: &str, v: &str) -> Option<f64> {
    let (b, x) = (ok(r, base)?, ok(r, v)?);
    (b.peak_bytes > 0).then(|| (b.peak_bytes as f64 - x.peak_bytes as f64) / b.peak_bytes as f64)
}

/// (before − after) / before of the median runtime.
fn runtime_reduction(r: &Row, base: &str, v: &str) -> Option<f64> {
    let (b, x) = (ok(r, base)?, ok(r, v)?);
    (b.runtime_median_ms > 0.0)
        .then(|| (b.runtime_median_ms - x.runtime_median_ms) / b.runtime_median_ms)
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

fn geomean(xs: &[f64]) -> Option<f64> {
    let pos: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    (!pos.is_empty() && pos.len() == xs.len())
        .then(|| (pos.iter().map(|x| x.ln()).sum::<f64>() / pos.len() as f64).exp())
}

/// The mean over benchmarks of each benchmark's mean over its datasets
/// (Serup's averaging), of `f`.
fn mean_of_benchmark_means(rows: &[Row], f: impl Fn(&Row) -> Option<f64>) -> Option<f64> {
    let mut names: Vec<&str> = rows.iter().map(|r| r.benchmark.as_str()).collect();
    names.dedup();
    let per: Vec<f64> = names
        .iter()
        .filter_map(|n| {
            let xs: Vec<f64> = rows
                .iter()
                .filter(|r| r.benchmark == *n)
                .filter_map(&f)
                .collect();
            mean(&xs)
        })
        .collect();
    mean(&per)
}

/// Our aggregates: the paper's way first, then geometric means.
fn aggregates(m: &Manifest, rows: &[Row]) -> Vec<Figure> {
    let base = m.baseline.as_str();
    let mut out = Vec::new();
    let mut push = |label: &str, variant: &str, way, value: Option<f64>, over: usize| {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            out.push(Figure {
                label: label.to_string(),
                variant: variant.to_string(),
                way,
                value,
                over,
            });
        }
    };
    for v in compared(m) {
        let s: Vec<f64> = rows
            .iter()
            .filter_map(|r| speedup(r, base, &v.name))
            .collect();
        let mem: Vec<f64> = rows
            .iter()
            .filter_map(|r| memory_reduction(r, base, &v.name))
            .collect();
        let rt: Vec<f64> = rows
            .iter()
            .filter_map(|r| runtime_reduction(r, base, &v.name))
            .collect();
        match m.aggregate {
            Aggregate::MeanReduction => {
                push(
                    "mean peak memory reduction, (before − after) / before, averaged per benchmark then over benchmarks",
                    &v.name,
                    "paper",
                    mean_of_benchmark_means(rows, |r| memory_reduction(r, base, &v.name)),
                    mem.len(),
                );
                push(
                    "mean runtime reduction, (before − after) / before, averaged per benchmark then over benchmarks",
                    &v.name,
                    "paper",
                    mean_of_benchmark_means(rows, |r| runtime_reduction(r, base, &v.name)),
                    rt.len(),
                );
            }
            Aggregate::MeanSpeedup => {
                push(
                    "arithmetic mean of speed-ups",
                    &v.name,
                    "paper",
                    mean(&s),
                    s.len(),
                );
            }
            Aggregate::PerDatasetSpeedup => {
                if let (Some(lo), Some(hi)) = (
                    s.iter().copied().reduce(f64::min),
                    s.iter().copied().reduce(f64::max),
                ) {
                    push(
                        "least per-dataset speed-up",
                        &v.name,
                        "paper",
                        Some(lo),
                        s.len(),
                    );
                    push(
                        "greatest per-dataset speed-up",
                        &v.name,
                        "paper",
                        Some(hi),
                        s.len(),
                    );
                }
            }
            Aggregate::ReferenceRatio | Aggregate::Structural => {}
        }
        push(
            "geometric mean of speed-ups",
            &v.name,
            "geometric",
            geomean(&s),
            s.len(),
        );
        let ratios: Vec<f64> = mem.iter().map(|r| 1.0 - r).collect();
        push(
            "geometric mean of peak memory ratios (after / before)",
            &v.name,
            "geometric",
            geomean(&ratios),
            ratios.len(),
        );
    }
    if m.reference.is_some() {
        for v in &m.variants {
            let xs: Vec<f64> = rows
                .iter()
                .filter_map(|r| reference_ratio(r, &v.name))
                .collect();
            push(
                "reference time over ours, per dataset: geometric mean",
                &v.name,
                if m.aggregate == Aggregate::ReferenceRatio {
                    "paper"
                } else {
                    "geometric"
                },
                geomean(&xs),
                xs.len(),
            );
        }
    }
    out
}

fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn bytes(b: u64) -> String {
    crate::gpu_cmd::bytes(b)
}

fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A published figure as the table shows it.
fn shown(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.replace('|', "\\|"),
        serde_json::Value::Null => "—".to_string(),
        other => other.to_string(),
    }
}

/// A cell for a measure, or its failure.
fn cell(r: &Row, v: &str, f: impl Fn(&Measure) -> String) -> String {
    match r.variants.get(v) {
        Some(x) if x.ok() => f(x),
        Some(_) => "failed".to_string(),
        None => "—".to_string(),
    }
}

fn markdown(m: &Manifest, info: &RunInfo, rows: &[Row], figures: &[Figure]) -> String {
    let base = m.baseline.as_str();
    let label = |n: &str| label_of(m, n);
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", m.title);
    let _ = writeln!(s, "- **Paper:** {}", m.source);
    let _ = writeln!(s, "- **Published figures measured on:** {}", m.published_on);
    let _ = writeln!(s, "- **Ours measured on:** {} ({})", info.device, info.date);
    let _ = writeln!(
        s,
        "- **Runs:** {} timed after {} warm-up{}; times are Futhark's runtime (inputs on the device, results not read back), median and minimum, ms",
        info.runs,
        info.warmup,
        if info.quick {
            " (`--quick`: small inputs, the times mean nothing)"
        } else {
            ""
        }
    );
    if let Some(c) = info.copy_gbps {
        let _ = writeln!(s, "- **Copy kernel:** {c:.1} GB/s on this device");
    }
    if let Some(r) = &info.reference {
        let _ = writeln!(s, "- **Reference:** {r}");
    }
    let _ = writeln!(s, "- **Command:** `{}`", info.command);
    let _ = writeln!(s, "- **Variants:**");
    for v in &m.variants {
        let _ = writeln!(
            s,
            "  - {}{}: `--passes {}`",
            v.label,
            if v.name == base { " (baseline)" } else { "" },
            v.passes
        );
    }
    // Time.
    let time_cols: Vec<_> = m
        .published_columns
        .iter()
        .filter(|c| c.table == "time")
        .collect();
    let mut head = vec!["benchmark".to_string(), "dataset".to_string()];
    for v in &m.variants {
        head.push(format!("{} ms (min)", v.label));
    }
    for v in compared(m) {
        head.push(format!("speed-up {}", v.label));
    }
    head.push(format!("{} of copy", label(base)));
    if m.reference.is_some() {
        head.push("reference ms".to_string());
        head.push(format!("reference / {}", label(base)));
    }
    head.extend(time_cols.iter().map(|c| c.label.clone()));
    let _ = writeln!(s, "\n## Time\n");
    table_head(&mut s, &head);
    for r in rows {
        let mut line = vec![r.benchmark.clone(), r.dataset.clone()];
        for v in &m.variants {
            line.push(cell(r, &v.name, |x| {
                format!("{} ({})", ms(x.runtime_median_ms), ms(x.runtime_min_ms))
            }));
        }
        for v in compared(m) {
            line.push(speedup(r, base, &v.name).map_or("—".into(), |x| format!("{x:.2}×")));
        }
        line.push(cell(r, base, |x| x.of_copy.map_or("—".into(), percent)));
        if m.reference.is_some() {
            line.push(r.reference_ms.map_or("—".into(), ms));
            let ratio = reference_ratio(r, base);
            line.push(ratio.map_or("—".into(), |x| format!("{x:.2}")));
        }
        for c in &time_cols {
            line.push(r.published.get(&c.key).map_or("—".into(), shown));
        }
        table_row(&mut s, &line);
    }
    // Memory and transfers.
    let mem_cols: Vec<_> = m
        .published_columns
        .iter()
        .filter(|c| c.table == "memory")
        .collect();
    let mut head = vec!["benchmark".to_string(), "dataset".to_string()];
    for v in &m.variants {
        head.push(format!("{} peak", v.label));
    }
    for v in compared(m) {
        head.push(format!("peak reduction {}", v.label));
    }
    for v in &m.variants {
        head.push(format!("{} allocations (sites)", v.label));
    }
    for v in &m.variants {
        head.push(format!("{} sync. reads (sites)", v.label));
    }
    head.extend(mem_cols.iter().map(|c| c.label.clone()));
    let _ = writeln!(s, "\n## Memory and transfers\n");
    table_head(&mut s, &head);
    for r in rows {
        let mut line = vec![r.benchmark.clone(), r.dataset.clone()];
        for v in &m.variants {
            line.push(cell(r, &v.name, |x| bytes(x.peak_bytes)));
        }
        for v in compared(m) {
            line.push(memory_reduction(r, base, &v.name).map_or("—".into(), percent));
        }
        for v in &m.variants {
            line.push(cell(r, &v.name, |x| {
                format!("{} ({})", x.allocations, x.alloc_sites)
            }));
        }
        for v in &m.variants {
            line.push(cell(r, &v.name, |x| {
                format!("{} ({})", x.sync_reads, x.host_read_sites)
            }));
        }
        for c in &mem_cols {
            line.push(r.published.get(&c.key).map_or("—".into(), shown));
        }
        table_row(&mut s, &line);
    }
    // Aggregates.
    let _ = writeln!(s, "\n## Aggregates\n");
    if figures.is_empty() && m.published_aggregates.is_empty() {
        let _ = writeln!(s, "None: no dataset ran under two variants.");
    } else {
        table_head(
            &mut s,
            &["aggregate", "variant", "computed", "over", "ours"].map(String::from),
        );
        for f in figures {
            let value = if f.label.contains("reduction") {
                percent(f.value)
            } else {
                format!("{:.3}", f.value)
            };
            let way = if f.way == "paper" {
                "the paper's way"
            } else {
                "geometric mean"
            };
            table_row(
                &mut s,
                &[
                    f.label.clone(),
                    label(&f.variant),
                    way.to_string(),
                    format!("{} datasets", f.over),
                    value,
                ],
            );
        }
        if !m.published_aggregates.is_empty() {
            let _ = writeln!(s, "\nThe paper's own aggregates:\n");
            table_head(&mut s, &["published aggregate", "value"].map(String::from));
            for a in &m.published_aggregates {
                table_row(&mut s, &[a.label.clone(), a.value.clone()]);
            }
        }
    }
    // Failures.
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r.variants
                .iter()
                .filter(|(_, x)| !x.ok())
                .map(move |(v, x)| {
                    format!(
                        "- {} / {} / {}: {}",
                        r.benchmark,
                        r.dataset,
                        label(v),
                        x.status
                    )
                })
        })
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(s, "\n## Failures\n");
        for f in failures {
            let _ = writeln!(s, "{}", f.replace('\n', " "));
        }
    }
    let _ = writeln!(s, "\n## Plots\n");
    let _ = writeln!(s, "![speed-up](speedup.svg)\n\n![peak memory](memory.svg)");
    s
}

fn table_head(s: &mut String, head: &[String]) {
    table_row(s, head);
    let _ = writeln!(s, "|{}", "---|".repeat(head.len()));
}

fn table_row(s: &mut String, cells: &[String]) {
    let _ = writeln!(s, "| {} |", cells.join(" | "));
}

/// A published figure as a number for a plot: a number, or a string that
/// starts with one (`"1.17×"`, `"10.7%"`: percentages as shares).
fn number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(t) => {
            let t = t.trim();
            let end = t
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .unwrap_or(t.len());
            let x: f64 = t[..end].parse().ok()?;
            Some(if t[end..].trim_start().starts_with('%') {
                x / 100.0
            } else {
                x
            })
        }
        _ => None,
    }
}

/// `speedup.svg` and `memory.svg`: ours per compared variant, and the
/// published columns that name the plot.
fn plots(m: &Manifest, rows: &[Row], out: &Path) -> Result<(), String> {
    let base = m.baseline.as_str();
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            if r.dataset.is_empty() {
                r.benchmark.clone()
            } else {
                format!("{} · {}", r.benchmark, r.dataset)
            }
        })
        .collect();
    let published = |plot: &str| -> Vec<Series> {
        m.published_columns
            .iter()
            .filter(|c| c.plot.as_deref() == Some(plot))
            .map(|c| Series {
                label: c.label.clone(),
                values: rows
                    .iter()
                    .map(|r| r.published.get(&c.key).and_then(number))
                    .collect(),
            })
            .collect()
    };
    let mut speed: Vec<Series> = compared(m)
        .map(|v| Series {
            label: format!("ours: {}", v.label),
            values: rows.iter().map(|r| speedup(r, base, &v.name)).collect(),
        })
        .collect();
    if m.reference.is_some() {
        speed.push(Series {
            label: format!("ours: reference / {}", label_of(m, base)),
            values: rows.iter().map(|r| reference_ratio(r, base)).collect(),
        });
    }
    speed.extend(published("speedup"));
    bars(
        &out.join("speedup.svg"),
        &format!("{}: speed-up over {}", m.name, label_of(m, base)),
        "speed-up (baseline time / variant time; 1 = no change)",
        &names,
        &speed,
        1.0,
    )?;
    let mut mem: Vec<Series> = compared(m)
        .map(|v| Series {
            label: format!("ours: {}", v.label),
            values: rows
                .iter()
                .map(|r| memory_reduction(r, base, &v.name).map(|x| x * 100.0))
                .collect(),
        })
        .collect();
    for mut p in published("memory") {
        p.values = p.values.into_iter().map(|v| v.map(|x| x * 100.0)).collect();
        mem.push(p);
    }
    bars(
        &out.join("memory.svg"),
        &format!(
            "{}: peak memory reduction over {}",
            m.name,
            label_of(m, base)
        ),
        "peak memory reduction, % ((before - after) / before)",
        &names,
        &mem,
        0.0,
    )
}

fn label_of(m: &Manifest, name: &str) -> String {
    m.variants
        .iter()
        .find(|v| v.name == name)
        .map_or(name.to_string(), |v| v.label.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(bench: &str, before: u64, after: u64) -> Row {
        let m = |peak| Measure {
            status: "ok".into(),
            runtime_median_ms: 1.0,
            peak_bytes: peak,
            ..Measure::default()
        };
        Row {
            benchmark: bench.into(),
            dataset: String::new(),
            program: String::new(),
            variants: BTreeMap::from([("b".into(), m(before)), ("a".into(), m(after))]),
            reference_ms: None,
            published: BTreeMap::new(),
        }
    }

    #[test]
    fn serup_s_mean_is_per_benchmark_then_over_benchmarks() {
        // x: reductions 50% and 0% (mean 25%); y: 10%. Over benchmarks:
        // 17.5%, not the mean over the three datasets (20%).
        let rows = [row("x", 100, 50), row("x", 100, 100), row("y", 100, 90)];
        let m = mean_of_benchmark_means(&rows, |r| memory_reduction(r, "b", "a")).unwrap();
        assert!((m - 0.175).abs() < 1e-12);
    }

    #[test]
    fn geometric_means_need_positive_ratios() {
        assert!((geomean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
        assert_eq!(geomean(&[1.0, 0.0]), None);
    }

    #[test]
    fn published_figures_are_read_as_numbers() {
        assert_eq!(number(&serde_json::json!(1.5)), Some(1.5));
        assert_eq!(number(&serde_json::json!("1.17×")), Some(1.17));
        assert_eq!(number(&serde_json::json!("10.5%")), Some(0.105));
        assert_eq!(number(&serde_json::json!("-28.4 %")), Some(-0.284));
        assert_eq!(number(&serde_json::json!("n/a")), None);
    }
}
