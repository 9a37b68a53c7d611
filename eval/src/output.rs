//! Output shared by every experiment: CSV files, markdown tables and readable PNG plots.
//!
//! Plots: the axes are drawn by plotters, the curves in pixel space by [`chart`] so that every curve stays
//! visible — one colour and one marker shape per curve, published curves dashed, curves nudged a few pixels
//! apart where they coincide, error bars (95 % intervals, ±1.96 s.e.) with caps, no line across a gap of a
//! logarithmic grid (a step more than 2.5 times every other step is left open), the legend in its own
//! column to the right of the data and a margin that keeps the last tick label inside the image.

use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// Writes rows to a CSV file with the given header.
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    w.flush()?;
    Ok(())
}

/// A markdown table.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!(
        "| {} |\n|{}|\n",
        header.join(" | "),
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for r in rows {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    s
}

/// Horizontal axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Logarithmic (for grids that are).
    Log,
}

/// One point of a curve: x, y and the half-width of its error bar (None: no bar).
pub type Point = (f64, f64, Option<f64>);

/// A point in pixels: x, y and the error bar's ends.
type Pixel = (i32, i32, Option<(i32, i32)>);

/// One curve.
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// Points in x order.
    pub points: Vec<Point>,
    /// A published curve (dashed, no error bars).
    pub published: bool,
}

impl Curve {
    /// A measured curve whose points carry 95 % intervals (±1.96 s.e.).
    pub fn measured(label: impl Into<String>, cells: impl IntoIterator<Item = (f64, crate::harness::Cell)>) -> Curve {
        Curve {
            label: label.into(),
            points: cells.into_iter().map(|(x, c)| (x, c.mean, Some(1.96 * c.se))).collect(),
            published: false,
        }
    }

    /// A published curve.
    pub fn published(label: impl Into<String>, points: impl IntoIterator<Item = (f64, f64)>) -> Curve {
        Curve {
            label: label.into(),
            points: points.into_iter().map(|(x, y)| (x, y, None)).collect(),
            published: true,
        }
    }
}

/// A line chart.
pub struct Chart<'a> {
    /// Title, drawn above the plot (carry the dataset's name).
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// X scale.
    pub x_scale: Scale,
    /// Fixed y range, else from the data.
    pub y_range: Option<(f64, f64)>,
    /// The curves.
    pub curves: &'a [Curve],
    /// A note under the legend (what the bars are).
    pub note: &'a str,
}

/// Where plots find their font. plotters draws text with ab_glyph from a TTF we register once; DejaVu Sans
/// comes with Debian's fonts-dejavu-core (installed by the Makefile when missing).
const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        FONT_PATHS
            .iter()
            .find(|p| Path::new(p).exists())
            .and_then(|path| std::fs::read(path).ok())
            .map(|bytes| {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
            .unwrap_or(false)
    });
    if ok {
        Ok(())
    } else {
        anyhow::bail!("no usable DejaVuSans.ttf: install Debian's fonts-dejavu-core (make test does it) to draw plots")
    }
}

/// Okabe–Ito colours (colour-blind safe), without yellow, then Tol's wine and a mid grey: nine curves
/// before a colour repeats (and a repeated colour comes with another marker).
const COLOURS: [RGBColor; 9] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(0, 0, 0),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(136, 34, 85),
    RGBColor(128, 128, 128),
];

const WIDTH: u32 = 1040;
const HEIGHT: u32 = 560;
const LEGEND_WIDTH: u32 = 300;

/// Draws a marker of shape `i` at pixel (x, y).
fn marker(area: &DrawingArea<BitMapBackend<'_>, Shift>, i: usize, x: i32, y: i32, c: RGBColor) -> Result<()> {
    let s = 5;
    let filled = c.filled();
    let line = c.stroke_width(2);
    match i % 8 {
        0 => area.draw(&Circle::new((x, y), s, filled))?,
        1 => area.draw(&Polygon::new(
            vec![(x, y - s - 1), (x + s + 1, y + s), (x - s - 1, y + s)],
            filled,
        ))?,
        2 => area.draw(&Rectangle::new([(x - s, y - s), (x + s, y + s)], filled))?,
        3 => area.draw(&Polygon::new(
            vec![(x, y - s - 2), (x + s + 2, y), (x, y + s + 2), (x - s - 2, y)],
            filled,
        ))?,
        4 => area.draw(&Circle::new((x, y), s + 1, line))?,
        5 => area.draw(&Rectangle::new([(x - s, y - s), (x + s, y + s)], line))?,
        6 => {
            area.draw(&PathElement::new(vec![(x - s, y - s), (x + s, y + s)], line))?;
            area.draw(&PathElement::new(vec![(x - s, y + s), (x + s, y - s)], line))?;
        }
        _ => area.draw(&Polygon::new(
            vec![(x, y + s + 1), (x + s + 1, y - s), (x - s - 1, y - s)],
            filled,
        ))?,
    }
    Ok(())
}

/// Draws a polyline, dashed or solid.
fn polyline(area: &DrawingArea<BitMapBackend<'_>, Shift>, pts: &[(i32, i32)], c: RGBColor, dashed: bool) -> Result<()> {
    if pts.len() < 2 {
        return Ok(());
    }
    if !dashed {
        area.draw(&PathElement::new(pts.to_vec(), c.stroke_width(2)))?;
        return Ok(());
    }
    let (dash, gap) = (9.0, 6.0);
    for w in pts.windows(2) {
        let (x0, y0) = (w[0].0 as f64, w[0].1 as f64);
        let (dx, dy) = (w[1].0 as f64 - x0, w[1].1 as f64 - y0);
        let len = (dx * dx + dy * dy).sqrt();
        let mut s = 0.0;
        while s < len {
            let e = (s + dash).min(len);
            let p = |t: f64| ((x0 + dx * t / len) as i32, (y0 + dy * t / len) as i32);
            area.draw(&PathElement::new(vec![p(s), p(e)], c.stroke_width(2)))?;
            s = e + gap;
        }
    }
    Ok(())
}

/// Wraps `text` into lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("non-empty");
        if !last.is_empty() && last.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// Formats an axis value of a log scale: powers of ten only (the other key points stay unlabelled).
fn log_tick(x: &f64) -> String {
    let e = x.log10().round();
    if (x.log10() - e).abs() > 1e-9 {
        return String::new();
    }
    if !(-3.0..4.0).contains(&e) {
        format!("1e{e}")
    } else {
        format!("{}", 10f64.powi(e as i32))
    }
}

/// Formats a value of a linear axis with at most three decimals and no trailing zeros.
fn linear_tick(x: &f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Draws `chart` into a PNG at `path`.
pub fn chart(path: &Path, chart: &Chart<'_>) -> Result<()> {
    register_font()?;
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, rest) = root.split_vertically(46);
    top.draw(&Text::new(
        chart.title.to_string(),
        (16, 14),
        ("sans-serif", 21).into_font(),
    ))?;
    let (plot_area, legend_area) = rest.split_horizontally(WIDTH - LEGEND_WIDTH);

    let all = || chart.curves.iter().flat_map(|c| c.points.iter());
    let (mut x0, mut x1) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    if chart.x_scale == Scale::Log {
        let (lo, hi) = all()
            .filter(|p| p.0 > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
        x0 = lo / 1.5;
        x1 = hi * 1.5;
        // At least one labelled power of ten: widen to whole decades when the range holds none.
        if x0.log10().ceil() > x1.log10().floor() {
            x0 = 10f64.powf(x0.log10().floor());
            x1 = 10f64.powf(x1.log10().ceil());
        }
    } else {
        let pad = ((x1 - x0) * 0.03).max(1e-9);
        x0 -= pad;
        x1 += pad;
    }
    if !(x0.is_finite() && x1.is_finite()) || x1 <= x0 {
        (x0, x1) = (0.5, 2.0);
    }
    // Non-negative data keeps its error bars (normal-approximation intervals) above zero.
    let nonneg = all().all(|p| p.1 >= 0.0);
    let floor = |y: f64| if nonneg { y.max(0.0) } else { y };
    let (y0, y1) = chart.y_range.unwrap_or_else(|| {
        let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            let e = p.2.unwrap_or(0.0);
            (a.min(floor(p.1 - e)), b.max(p.1 + e))
        });
        if !(lo.is_finite() && hi.is_finite()) {
            (0.0, 1.0)
        } else if hi > lo {
            let pad = (hi - lo) * 0.06;
            (lo - pad, hi + pad)
        } else {
            (lo - 0.5, lo + 0.5)
        }
    });

    // Pixel positions of every curve, computed inside the chart's coordinate system.
    let n_curves = chart.curves.len();
    let mut pixels: Vec<Vec<Pixel>> = Vec::new();
    let mut breaks: Vec<Vec<bool>> = Vec::new();
    macro_rules! axes {
        ($builder:expr, $fmt:expr) => {{
            let mut c = $builder;
            c.configure_mesh()
                .x_desc(chart.x_label)
                .y_desc(chart.y_label)
                .x_label_formatter($fmt)
                .y_label_formatter(&linear_tick)
                .max_light_lines(4)
                .label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 16))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()?;
            for (ci, curve) in chart.curves.iter().enumerate() {
                // Nudge curves apart by a few pixels so that coinciding curves stay visible.
                let dx = ((ci as f64 - (n_curves as f64 - 1.0) / 2.0) * 5.0).round() as i32;
                let pts = curve
                    .points
                    .iter()
                    .map(|&(x, y, e)| {
                        let (px, py) = c.backend_coord(&(x, y));
                        let bar = e.map(|e| (c.backend_coord(&(x, floor(y - e))).1, c.backend_coord(&(x, y + e)).1));
                        (px + dx, py, bar)
                    })
                    .collect();
                pixels.push(pts);
            }
        }};
    }
    let mut builder = ChartBuilder::on(&plot_area);
    builder
        .margin_left(12)
        .margin_right(34)
        .margin_top(8)
        .margin_bottom(8)
        .x_label_area_size(52)
        .y_label_area_size(76);
    match chart.x_scale {
        Scale::Log => axes!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1)?, &log_tick),
        Scale::Linear => axes!(builder.build_cartesian_2d(x0..x1, y0..y1)?, &linear_tick),
    }
    // Gaps of a logarithmic grid: a step more than 2.5 times every other step of the curve is not joined.
    for curve in chart.curves {
        let steps: Vec<f64> = curve.points.windows(2).map(|w| (w[1].0 / w[0].0).ln()).collect();
        breaks.push(
            (0..steps.len())
                .map(|i| {
                    let others = steps
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, &s)| s)
                        .fold(0.0, f64::max);
                    chart.x_scale == Scale::Log && steps.len() >= 3 && steps[i] > 2.5 * others
                })
                .collect(),
        );
    }
    let area = &root;
    for (ci, curve) in chart.curves.iter().enumerate() {
        let col = COLOURS[ci % COLOURS.len()];
        let pts = &pixels[ci];
        let mut run: Vec<(i32, i32)> = Vec::new();
        for (i, p) in pts.iter().enumerate() {
            run.push((p.0, p.1));
            if i + 1 == pts.len() || breaks[ci][i] {
                polyline(area, &run, col, curve.published)?;
                run.clear();
            }
        }
        for &(x, _, bar) in pts {
            if let Some((lo, hi)) = bar {
                if (lo - hi).abs() >= 2 {
                    let st = col.stroke_width(1);
                    area.draw(&PathElement::new(vec![(x, lo), (x, hi)], st))?;
                    area.draw(&PathElement::new(vec![(x - 4, lo), (x + 4, lo)], st))?;
                    area.draw(&PathElement::new(vec![(x - 4, hi), (x + 4, hi)], st))?;
                }
            }
        }
        // Dense curves carry a marker every tenth point only (enough to tell the curves apart).
        let stride = if pts.len() > 25 { pts.len() / 10 } else { 1 };
        for &(x, y, _) in pts.iter().step_by(stride) {
            marker(area, ci, x, y, col)?;
        }
    }
    // The legend column.
    let mut y = 20;
    let font = ("sans-serif", 15).into_font();
    for (ci, curve) in chart.curves.iter().enumerate() {
        let col = COLOURS[ci % COLOURS.len()];
        polyline(&legend_area, &[(8, y + 8), (48, y + 8)], col, curve.published)?;
        marker(&legend_area, ci, 28, y + 8, col)?;
        for (li, line) in wrap(&curve.label, 29).iter().enumerate() {
            legend_area.draw(&Text::new(line.clone(), (58, y + li as i32 * 18), font.clone()))?;
        }
        y += 18 * wrap(&curve.label, 29).len() as i32 + 10;
    }
    y += 8;
    for line in wrap(chart.note, 36) {
        legend_area.draw(&Text::new(
            line,
            (8, y),
            ("sans-serif", 13).into_font().color(&RGBColor(80, 80, 80)),
        ))?;
        y += 16;
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Cell;

    #[test]
    fn writes_a_png_chart_a_csv_and_a_table() {
        let dir = std::env::temp_dir().join(format!("dpmo-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = |m: f64| Cell {
            mean: m,
            se: 0.02,
            n: 10,
        };
        let curves = [
            Curve::measured("a", [(0.01, c(0.1)), (0.1, c(0.5)), (1.0, c(0.9)), (1e5, c(0.95))]),
            Curve::measured("b", [(0.01, c(0.1)), (0.1, c(0.5)), (1.0, c(0.9)), (1e5, c(0.95))]),
            Curve::published("published", [(0.01, 0.0), (0.1, 0.2), (1.0, 0.4)]),
        ];
        let png = dir.join("p.png");
        chart(
            &png,
            &Chart {
                title: "t",
                x_label: "x",
                y_label: "y",
                x_scale: Scale::Log,
                y_range: None,
                curves: &curves,
                note: "bars: 95% intervals",
            },
        )
        .unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let csv = dir.join("c.csv");
        write_csv(&csv, &["x", "y"], &[vec!["1".into(), "2".into()]]).unwrap();
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "x,y\n1,2\n");
        assert!(markdown_table(&["a"], &[vec!["1".into()]]).contains("| 1 |"));
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        std::fs::remove_dir_all(dir).ok();
    }
}
