//! Shares of what the passes did, and their comparison with a saved
//! campaign (`funmem fuzz --baseline FILE`).
//!
//! Every check of a campaign can stay green while a pass quietly stops
//! doing its work: an obligation that can no longer be proved makes the
//! pass skip its rewrite, and the program it leaves is still correct. What
//! shows such a fault is the *share* of the work done: kernel allocations
//! expanded of those found, copies removed of those lowering made,
//! obligations proved of those stated. A campaign adds up the passes'
//! counts in its [`Tally`]; [`shares`] reads the ratios from it, and
//! [`compare_with_baseline`] reports the shares that fell compared with a
//! saved summary.
//!
//! **Campaigns of different sizes.** Two campaigns of other seeds or
//! counts measure a share on other samples, so equal code gives somewhat
//! different shares. A share counts as dropped only when it fell by more
//! than the tolerance *and* by more than three standard errors of the
//! difference of two binomial proportions (with the pooled share `p`:
//! `3 * sqrt(p (1 - p) (1/a + 1/b))`), so a small campaign compared with
//! a large baseline does not fail by chance. The items of one program are
//! not independent (one program's kernels tend to be alike), so `a` and
//! `b` are each campaign's counted items but at most its programs: three
//! programs are three samples, however many allocations they hold;
//! and a share measured on fewer than [`MIN_COUNTED`] items (in either) is
//! not compared at all.
//! A campaign compared with its own summary (same seed, count and passes)
//! measures exactly the same shares.

use crate::campaign::{Source, Summary};
use crate::check::Tally;
use std::path::Path;

/// The default `--baseline-tolerance`: an absolute drop of a share.
pub const DEFAULT_TOLERANCE: f64 = 0.02;

/// Standard errors a drop must exceed (besides the tolerance).
const NOISE_SIGMAS: f64 = 3.0;

/// Fewest items a share must be measured on, in the campaign and in the
/// baseline, to be compared (the noise estimate is poor below).
pub const MIN_COUNTED: u64 = 20;

/// The ratios read from each pass's counts: (what is counted, of it what
/// the pass did, the verb). A pass `p` with the counts `p: <whole>` and
/// `p: <part>` has the share `p: <whole> <verb>`.
const PASS_SHARES: &[(&str, &str, &str)] = &[
    ("kernel allocations", "expanded", "expanded"),
    ("variant sizes", "variant sizes expanded", "expanded"),
    ("copies", "copies removed", "removed"),
    ("if results", "if results removed", "removed"),
    ("statements", "statements removed", "removed"),
    ("allocations", "hoisted", "hoisted"),
    ("candidates", "coalesced", "coalesced"),
    ("blocks", "reused", "reused"),
    ("host reads", "host reads removed", "removed"),
];

/// A share of what the passes did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    /// Its name, as `--baseline` reports it: `expand-gpu: kernel
    /// allocations expanded`, `obligations: in-bounds proved`.
    pub name: String,
    /// What was counted (`expand-gpu: kernel allocations`).
    pub whole_name: String,
    /// Of that, what the pass did.
    pub part: u64,
    /// All that was counted.
    pub whole: u64,
}

impl Share {
    /// `part / whole` (0 for nothing counted).
    pub fn ratio(&self) -> f64 {
        if self.whole == 0 {
            0.0
        } else {
            self.part as f64 / self.whole as f64
        }
    }
}

/// `12.5% (1 of 8)`.
fn figure(s: &Share) -> String {
    format!("{:.1}% ({} of {})", 100.0 * s.ratio(), s.part, s.whole)
}

impl std::fmt::Display for Share {
    /// `expand-gpu: 412 of 530 kernel allocations expanded (77.7%)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (prefix, what) = self
            .whole_name
            .split_once(": ")
            .unwrap_or(("", &self.whole_name));
        let verb = self.name.rsplit(' ').next().unwrap_or("");
        write!(
            f,
            "{prefix}: {} of {} {what} {verb} ({:.1}%)",
            self.part,
            self.whole,
            100.0 * self.ratio()
        )
    }
}

/// The obligations' outcomes, in the order summaries list them.
pub const OUTCOMES: [&str; 3] = ["proved", "refuted", "unknown"];

/// Every share a tally measures, passes first (in the order of their
/// names), then obligations by kind.
pub fn shares(t: &Tally) -> Vec<Share> {
    let mut out = Vec::new();
    // The passes that counted something, from keys `<pass>: <count>`.
    let mut passes: Vec<&str> =
        t.0.keys()
            .filter_map(|k| k.split_once(": ").map(|(p, _)| p))
            .filter(|p| *p != "obligations")
            .collect();
    passes.dedup();
    for p in passes {
        for (whole, part, verb) in PASS_SHARES {
            let whole_name = format!("{p}: {whole}");
            if !t.0.contains_key(&whole_name) {
                continue;
            }
            out.push(Share {
                name: format!("{p}: {whole} {verb}"),
                part: t.get(&format!("{p}: {part}")),
                whole: t.get(&whole_name),
                whole_name,
            });
        }
    }
    for (kind, counts) in obligations(t) {
        out.push(Share {
            name: format!("obligations: {kind} proved"),
            whole_name: format!("obligations: {kind}"),
            part: counts[0],
            whole: counts.iter().sum(),
        });
    }
    out
}

/// The obligations of a tally by kind: counts in the order of [`OUTCOMES`].
pub fn obligations(t: &Tally) -> Vec<(String, [u64; 3])> {
    let mut out: Vec<(String, [u64; 3])> = Vec::new();
    for (k, n) in &t.0 {
        let Some(rest) = k.strip_prefix("obligations: ") else {
            continue;
        };
        let Some((kind, outcome)) = rest.rsplit_once(' ') else {
            continue;
        };
        let Some(o) = OUTCOMES.iter().position(|w| *w == outcome) else {
            continue;
        };
        match out.iter_mut().find(|(k2, _)| k2 == kind) {
            Some((_, c)) => c[o] = c[o].saturating_add(*n),
            None => {
                let mut c = [0; 3];
                c[o] = *n;
                out.push((kind.to_string(), c));
            }
        }
    }
    out
}

/// A share that fell compared with the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Drop {
    /// The share in the baseline.
    pub was: Share,
    /// The share in this campaign.
    pub now: Share,
}

impl std::fmt::Display for Drop {
    /// `expand-gpu: kernel allocations expanded dropped from 77.7% (412 of
    /// 530) to 60.2% (301 of 500)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} dropped from {} to {}",
            self.now.name,
            figure(&self.was),
            figure(&self.now)
        )
    }
}

/// Reads a saved summary (an `--out` folder's `summary-*.json`, or the
/// output of `--json`); the error names the file.
pub fn load(path: &Path) -> Result<Summary, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not a summary of `funmem fuzz` (--out's summary-*.json or --json's output): {e}",
            path.display()
        )
    })
}

/// Whether a campaign of `passes` (comma-separated) on `source` programs
/// can be compared with `baseline`: the same passes and generator.
pub fn comparable(baseline: &Summary, passes: &str, source: Source) -> Result<(), String> {
    if passes == baseline.passes && source == baseline.source {
        return Ok(());
    }
    let named = |p: &str| if p.is_empty() { "none" } else { p }.to_string();
    Err(format!(
        "the baseline ran passes `{}` on {} programs, this campaign passes `{}` on {} programs: their shares are not comparable",
        named(&baseline.passes),
        baseline.source.name(),
        named(passes),
        source.name()
    ))
}

/// The shares of `now` that fell compared with `baseline` by more than
/// `tolerance` (absolute) and by more than sampling noise. A share either
/// measured on fewer than [`MIN_COUNTED`] items is not compared. An error
/// when the two are not comparable: other passes or another generator, or
/// a baseline that measured nothing.
pub fn compare_with_baseline(
    now: &Summary,
    baseline: &Summary,
    tolerance: f64,
) -> Result<Vec<Drop>, String> {
    comparable(baseline, &now.passes, now.source)?;
    let was = shares(&baseline.tally);
    if was.iter().all(|s| s.whole == 0) {
        return Err(
            "the baseline counts nothing the passes did (no tally: saved by an older funmem, or no passes)"
                .into(),
        );
    }
    let current = shares(&now.tally);
    let mut drops = Vec::new();
    for w in was.into_iter().filter(|s| s.whole >= MIN_COUNTED) {
        let Some(c) = current
            .iter()
            .find(|c| c.name == w.name && c.whole >= MIN_COUNTED)
        else {
            continue;
        };
        let fall = w.ratio() - c.ratio();
        let pooled = (w.part + c.part) as f64 / (w.whole + c.whole) as f64;
        // Samples: the items counted, but no more than the programs.
        let a = w.whole.min(baseline.programs.max(1)) as f64;
        let b = c.whole.min(now.programs.max(1)) as f64;
        let noise = NOISE_SIGMAS * (pooled * (1.0 - pooled) * (1.0 / a + 1.0 / b)).sqrt();
        if fall > tolerance && fall > noise {
            drops.push(Drop {
                was: w,
                now: c.clone(),
            });
        }
    }
    Ok(drops)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(kv: &[(&str, u64)]) -> Tally {
        let mut t = Tally::default();
        for (k, n) in kv {
            t.add(k, *n);
        }
        t
    }

    #[test]
    fn shares_are_read_from_pass_counts_and_obligations() {
        let t = tally(&[
            ("expand-gpu: kernel allocations", 530),
            ("expand-gpu: expanded", 412),
            ("simplify: copies", 10),
            ("simplify: copies removed", 4),
            ("obligations: in-bounds proved", 300),
            ("obligations: in-bounds unknown", 2),
            ("obligations: at-most refuted", 1),
        ]);
        let s = shares(&t);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "expand-gpu: kernel allocations expanded",
                "simplify: copies removed",
                "obligations: at-most proved",
                "obligations: in-bounds proved"
            ]
        );
        assert_eq!(
            s[0].to_string(),
            "expand-gpu: 412 of 530 kernel allocations expanded (77.7%)"
        );
        assert_eq!((s[3].part, s[3].whole), (300, 302));
        assert_eq!((s[2].part, s[2].whole), (0, 1));
    }

    fn summary(t: Tally) -> Summary {
        Summary {
            seed: 0,
            shards: vec!["0/1".into()],
            passes: "simplify,expand-gpu".into(),
            source: crate::campaign::Source::Fun,
            programs: 100,
            went_wrong: 0,
            inconclusive: 0,
            seconds: 1.0,
            programs_per_second: 100.0,
            tally: t,
            constructs: Default::default(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn a_drop_beyond_tolerance_and_noise_is_reported() {
        let base = summary(tally(&[
            ("expand-gpu: kernel allocations", 500),
            ("expand-gpu: expanded", 450),
        ]));
        let same = compare_with_baseline(&base, &base, DEFAULT_TOLERANCE).unwrap();
        assert!(same.is_empty());
        let worse = summary(tally(&[
            ("expand-gpu: kernel allocations", 500),
            ("expand-gpu: expanded", 350),
        ]));
        let d = compare_with_baseline(&worse, &base, DEFAULT_TOLERANCE).unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].to_string(),
            "expand-gpu: kernel allocations expanded dropped from 90.0% (450 of 500) to 70.0% (350 of 500)"
        );
        // The same fall measured on 30 allocations is within noise, and
        // on 10 is not compared at all.
        let small = summary(tally(&[
            ("expand-gpu: kernel allocations", 30),
            ("expand-gpu: expanded", 23),
        ]));
        assert!(compare_with_baseline(&small, &base, DEFAULT_TOLERANCE)
            .unwrap()
            .is_empty());
        let small = summary(tally(&[
            ("expand-gpu: kernel allocations", 10),
            ("expand-gpu: expanded", 1),
        ]));
        assert!(compare_with_baseline(&small, &base, DEFAULT_TOLERANCE)
            .unwrap()
            .is_empty());
        // A rise is no drop.
        assert!(compare_with_baseline(&base, &worse, DEFAULT_TOLERANCE)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn incomparable_baselines_are_errors() {
        let base = summary(tally(&[("expand-gpu: kernel allocations", 5)]));
        let mut other = base.clone();
        other.passes = "simplify".into();
        let e = compare_with_baseline(&other, &base, 0.02).unwrap_err();
        assert!(e.contains("passes `simplify,expand-gpu`"), "{e}");
        let empty = summary(Tally::default());
        let e = compare_with_baseline(&base, &empty, 0.02).unwrap_err();
        assert!(e.contains("counts nothing"), "{e}");
    }
}
