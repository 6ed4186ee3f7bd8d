//! Bar charts of a reproduction, as SVG (plotters): one bar per dataset
//! and series (ours for each compared variant, the paper's beside them),
//! drawn horizontally so that benchmark names stay readable.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use std::path::Path;

/// One series of bars: a label and a value per category (none: no bar).
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// The colours of the series, in turn.
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Draws a horizontal bar chart of `series` over `categories` into
/// `path`, with a vertical rule at `rule` (1 for speed-ups, 0 for
/// reductions).
pub fn bars(
    path: &Path,
    title: &str,
    x_desc: &str,
    categories: &[String],
    series: &[Series],
    rule: f64,
) -> Result<(), String> {
    // Ratios that span more than 20× are drawn on a log scale: each value
    // as its logarithm, the axis labelled with the ratio itself.
    let finite = || {
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied())
    };
    let log = rule == 1.0
        && finite().all(|v| v > 0.0)
        && finite().fold(1.0f64, f64::max) / finite().fold(1.0f64, f64::min) > 20.0;
    let logged: Vec<Series>;
    let (series, rule, x_desc) = if log {
        logged = series
            .iter()
            .map(|s| Series {
                label: s.label.clone(),
                values: s.values.iter().map(|v| v.map(f64::log10)).collect(),
            })
            .collect();
        (&logged[..], 0.0, format!("{x_desc}, log scale"))
    } else {
        (series, rule, x_desc.to_string())
    };
    let per = series.len().max(1);
    // Each category has a slot per series and one empty slot after it;
    // empty slots at the bottom keep the legend off the bars.
    let slots = categories.len() * (per + 1) + series.len() * 2 + 1;
    let values = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied());
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((rule.min(0.0), rule.max(0.0)), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let pad = ((hi - lo) * 0.08).max(0.05);
    let (lo, hi) = (if lo < 0.0 { lo - pad } else { lo }, hi + pad);
    let longest = categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(8);
    let left = (longest as u32 * 7 + 20).clamp(80, 420);
    let height = (slots as u32 * 14 + 120).max(240);
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    let err = |e: DrawingAreaErrorKind<_>| format!("{}: {e}", path.display());
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(left)
        .build_cartesian_2d(lo..hi, (0..slots.max(1)).into_segmented())
        .map_err(err)?;
    // Slot of category c, series s, counted from the top.
    let slot = |c: usize, s: usize| slots - 1 - (c * (per + 1) + s);
    let names = categories.to_vec();
    let label = move |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) if *i < slots => {
            let from_top = slots - 1 - i;
            if from_top % (per + 1) == per / 2 {
                names.get(from_top / (per + 1)).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(slots.max(1))
        .y_label_formatter(&label)
        .x_desc(x_desc)
        .x_label_formatter(&|x: &f64| {
            if log {
                let v = 10f64.powf(*x);
                if v >= 10.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.2}")
                }
            } else {
                format!("{x:.1}")
            }
        })
        .draw()
        .map_err(err)?;
    for (s, ser) in series.iter().enumerate() {
        let colour = COLOURS[s % COLOURS.len()];
        let data: Vec<(usize, f64)> = ser
            .values
            .iter()
            .enumerate()
            .filter_map(|(c, v)| v.filter(|x| x.is_finite()).map(|x| (slot(c, s), x)))
            .collect();
        chart
            .draw_series(
                Histogram::horizontal(&chart)
                    .style(colour.filled())
                    .margin(1)
                    .baseline(rule.min(0.0).max(lo))
                    .data(data),
            )
            .map_err(err)?
            .label(ser.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    // The rule: no change.
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![
                (rule, SegmentValue::Exact(0)),
                (rule, SegmentValue::Exact(slots.max(1))),
            ],
            BLACK.stroke_width(1),
        )))
        .map_err(err)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.85))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
