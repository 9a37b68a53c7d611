//! Output conventions shared by every experiment: CSV files, PNG line plots and report sections.

use anyhow::{Context, Result};
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// One curve of a plot.
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (x, y) points in x order.
    pub points: Vec<(f64, f64)>,
}

/// A line plot: title, axis labels, curves, and whether x is on a log scale.
pub struct LinePlot<'a> {
    /// Title drawn above the plot.
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// The curves.
    pub series: &'a [Series],
    /// Logarithmic x axis.
    pub log_x: bool,
}

/// Where plots find their font. plotters draws text with ab_glyph from a TTF we register once; DejaVu Sans
/// comes with Debian's fonts-dejavu-core (installed by the Makefile when missing).
const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

fn register_font() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = (|| {
            let path = FONT_PATHS.iter().find(|p| Path::new(p).exists()).context(
                "no DejaVuSans.ttf found: install Debian's fonts-dejavu-core (make test does it) to draw plots",
            )?;
            let bytes: &'static [u8] = Box::leak(std::fs::read(path)?.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| anyhow::anyhow!("could not parse {path}"))?;
            Ok(())
        })();
    });
    result
}

/// Draws `plot` into a PNG at `path` (800 × 500).
pub fn line_plot(path: &Path, plot: &LinePlot<'_>) -> Result<()> {
    register_font()?;
    let root = BitMapBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = plot.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = plot.series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (y0, y1) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
    let (y0, y1) = if y1 > y0 {
        (y0.min(0.0), y1 * 1.05)
    } else {
        (y0 - 1.0, y0 + 1.0)
    };
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(plot.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60);
    let colors = [
        RED,
        BLUE,
        GREEN,
        MAGENTA,
        CYAN,
        BLACK,
        RGBColor(230, 140, 0),
        RGBColor(120, 60, 160),
    ];
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(plot.x_label)
                .y_desc(plot.y_label)
                .draw()?;
            for (i, s) in plot.series.iter().enumerate() {
                let c = colors[i % colors.len()];
                chart
                    .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
                chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }};
    }
    if plot.log_x {
        draw!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1)?);
    } else {
        draw!(builder.build_cartesian_2d(x0..x1, y0..y1)?);
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

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

/// One section of `eval/REPRODUCTION.md`, produced by one experiment.
pub struct Section {
    /// Section heading.
    pub title: String,
    /// Markdown body (tables, plot links, explanations).
    pub body: String,
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

/// The folder an experiment writes its CSV files and plots to (created if missing).
pub fn results_dir(base: &Path, experiment: &str) -> Result<PathBuf> {
    let d = base.join(experiment);
    std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_png_plot_and_a_csv() {
        let dir = std::env::temp_dir().join(format!("dpmo-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let series = [
            Series {
                label: "a".into(),
                points: vec![(0.01, 0.1), (0.1, 0.5), (1.0, 0.9)],
            },
            Series {
                label: "b".into(),
                points: vec![(0.01, 0.0), (0.1, 0.2), (1.0, 0.4)],
            },
        ];
        let png = dir.join("p.png");
        line_plot(
            &png,
            &LinePlot {
                title: "t",
                x_label: "x",
                y_label: "y",
                series: &series,
                log_x: true,
            },
        )
        .unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let csv = dir.join("c.csv");
        write_csv(&csv, &["x", "y"], &[vec!["1".into(), "2".into()]]).unwrap();
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "x,y\n1,2\n");
        assert!(markdown_table(&["a"], &[vec!["1".into()]]).contains("| 1 |"));
        std::fs::remove_dir_all(dir).ok();
    }
}
