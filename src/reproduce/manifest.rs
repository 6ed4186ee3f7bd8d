//! The description of a paper's evaluation: `papers/NAME/reproduce.json`
//! (docs/reproduce.md describes every field).
//!
//! A manifest names the pipeline variants the paper compares (pass lists,
//! one of them the baseline), the benchmarks (a program and its datasets,
//! each either a case of the program's test block, literal values, or
//! values made by a generator as `funmem dataset` makes them), which
//! datasets are small enough for `--quick`, and the paper's own figures
//! beside each dataset, with the columns that show them.

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A paper's evaluation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The short name (`serup2017`), the folder's.
    pub name: String,
    /// A title for the report.
    pub title: String,
    /// The paper, as a citation.
    pub source: String,
    /// What the paper measured on (its hardware), for the report.
    pub published_on: String,
    /// How the paper aggregates its figures.
    pub aggregate: Aggregate,
    /// The pipelines compared.
    pub variants: Vec<Variant>,
    /// The variant the others are compared with.
    pub baseline: String,
    /// A hand-written reference's times (`futhark bench`'s JSON layout),
    /// compared with the baseline's.
    #[serde(default)]
    pub reference: Option<Reference>,
    /// The columns of published figures.
    #[serde(default)]
    pub published_columns: Vec<Column>,
    /// The paper's aggregates as it prints them, shown beside ours.
    #[serde(default)]
    pub published_aggregates: Vec<PublishedAggregate>,
    /// The benchmarks.
    pub benchmarks: Vec<Benchmark>,
}

/// How a paper turns its per-dataset figures into a summary.
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Aggregate {
    /// Serup: the arithmetic mean over datasets of (before − after) /
    /// before, for peak memory and for runtime.
    MeanReduction,
    /// Børgesen: the arithmetic mean of the speed-ups.
    MeanSpeedup,
    /// SC'22: the speed-up (unoptimised / optimised) of each dataset, no
    /// mean.
    PerDatasetSpeedup,
    /// Henriksen: reference time over our time, per dataset.
    ReferenceRatio,
    /// The paper publishes no measured figures (structural claims only).
    Structural,
}

/// A pipeline variant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Its short name, used in the JSON.
    pub name: String,
    /// Its label in tables and plots.
    pub label: String,
    /// The FUNMEM passes (as `--passes`).
    pub passes: String,
}

/// Where a reference's times come from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// A `futhark bench` JSON file, relative to the repository root.
    pub file: String,
    /// What the reference is, where and when it ran.
    pub label: String,
}

/// A column of published figures.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Column {
    /// The key of the figure in each dataset's `published`.
    pub key: String,
    /// The column's header.
    pub label: String,
    /// The table it goes in: `time` or `memory`.
    #[serde(default = "time_table")]
    pub table: String,
    /// The plot it goes in beside ours: `speedup` (a ratio) or `memory`
    /// (a reduction), or none.
    #[serde(default)]
    pub plot: Option<String>,
}

fn time_table() -> String {
    "time".to_string()
}

/// An aggregate as the paper prints it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedAggregate {
    /// What it is.
    pub label: String,
    /// Its value, as printed.
    pub value: String,
}

/// A benchmark: a program and its datasets.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmark {
    /// Its name in the report.
    pub name: String,
    /// The program, relative to the repository root.
    pub program: String,
    /// The datasets.
    pub datasets: Vec<DatasetSpec>,
    /// The benchmark's key in the reference's JSON, if it has one.
    #[serde(default)]
    pub reference: Option<String>,
}

/// One dataset of a benchmark.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// Its name in the report.
    pub name: String,
    /// A case of the program's test block: part of its name, or `#K`
    /// (as `funmem bench --dataset`).
    #[serde(default)]
    pub case: Option<String>,
    /// The inputs as literal values.
    #[serde(default)]
    pub input: Option<String>,
    /// The inputs made as `funmem dataset -g` makes them.
    #[serde(default)]
    pub generate: Option<Vec<String>>,
    /// The generator's seed.
    #[serde(default = "one")]
    pub seed: u64,
    /// The generator's bounds per element type (`"i64": "0:9"`).
    #[serde(default)]
    pub bounds: BTreeMap<String, String>,
    /// Run with `--quick` (small inputs); otherwise only without it.
    #[serde(default)]
    pub quick: bool,
    /// The dataset's key in the reference's JSON.
    #[serde(default)]
    pub reference: Option<String>,
    /// The paper's figures for this dataset, by column key.
    #[serde(default)]
    pub published: BTreeMap<String, Json>,
}

fn one() -> u64 {
    1
}

/// Every paper `funmem reproduce` knows, in the order `all` runs them.
pub const PAPERS: &[&str] = &[
    "ifl2022",
    "serup2017",
    "reuse-blog",
    "borgesen2022",
    "henriksen2017",
    "sc22",
];

/// The folder holding `papers/`: the current directory or one above it.
pub fn root() -> Result<PathBuf, String> {
    let mut dir = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    loop {
        if dir.join("papers").is_dir() && dir.join("benches").is_dir() {
            return Ok(dir);
        }
        if !dir.pop() {
            return Err(
                "no papers/ folder here or above: run `funmem reproduce` inside the funmem repository"
                    .to_string(),
            );
        }
    }
}

/// Reads and checks `papers/NAME/reproduce.json`.
pub fn load(root: &Path, name: &str) -> Result<Manifest, String> {
    let path = root.join("papers").join(name).join("reproduce.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
    let m: Manifest = serde_json::from_str(&text)
        .map_err(|e| format!("{}:{}:{}: {}", path.display(), e.line(), e.column(), e))?;
    check(&m).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(m)
}

/// What a manifest must satisfy beyond its shape.
fn check(m: &Manifest) -> Result<(), String> {
    if m.variants.is_empty() {
        return Err("no variants".to_string());
    }
    if !m.variants.iter().any(|v| v.name == m.baseline) {
        return Err(format!("the baseline `{}` is not a variant", m.baseline));
    }
    for (i, v) in m.variants.iter().enumerate() {
        if m.variants[..i].iter().any(|w| w.name == v.name) {
            return Err(format!("two variants are named `{}`", v.name));
        }
        funmem_transforms::pass::parse_list(&v.passes)
            .map_err(|e| format!("variant `{}`: {e}", v.name))?;
    }
    for c in &m.published_columns {
        if !matches!(c.table.as_str(), "time" | "memory") {
            return Err(format!(
                "column `{}`: table must be `time` or `memory`, not `{}`",
                c.key, c.table
            ));
        }
        if let Some(p) = &c.plot {
            if !matches!(p.as_str(), "speedup" | "memory") {
                return Err(format!(
                    "column `{}`: plot must be `speedup` or `memory`, not `{p}`",
                    c.key
                ));
            }
        }
    }
    for b in &m.benchmarks {
        for d in &b.datasets {
            let sources = [d.case.is_some(), d.input.is_some(), d.generate.is_some()];
            if sources.iter().filter(|&&s| s).count() != 1 {
                return Err(format!(
                    "{} / {}: give exactly one of `case`, `input` and `generate`",
                    b.name, d.name
                ));
            }
            for k in d.published.keys() {
                if !m.published_columns.iter().any(|c| &c.key == k) {
                    return Err(format!(
                        "{} / {}: published figure `{k}` has no column",
                        b.name, d.name
                    ));
                }
            }
        }
    }
    Ok(())
}
