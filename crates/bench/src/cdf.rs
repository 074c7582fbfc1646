//! Empirical CDFs drawn as a standalone SVG: one step line per series (x = the measured
//! value, y = the fraction of samples at or below it), labelled axes with units, a
//! legend naming each series with its sample count and median.

use std::fmt::Write;

use tusk_mapreduce::gantt::{decimals, escape, tick_step};

/// One line of the chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

/// The plot area's width; the legend stands to its right, outside, so no line hides
/// behind it.
const PLOT_W: f64 = 640.0;
const HEIGHT: f64 = 480.0;
const LEFT: f64 = 70.0;
/// Between the plot and the legend, and after the legend.
const GAP: f64 = 20.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
/// Tableau 10, as the Gantt chart uses, with a dash pattern per series so that lines
/// stay apart in grey print.
const COLORS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f",
];
const DASHES: [&str; 4] = ["", "8 4", "3 3", "10 3 3 3"];

/// The SVG text of the CDFs of `series`; `x_label` names the value and its unit.
pub fn render_svg(title: &str, x_label: &str, series: &[Series]) -> String {
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0f64, f64::max);
    let step = tick_step(max.max(1e-3), 8.0);
    let x_max = (max / step).ceil().max(1.0) * step;
    let plot_w = PLOT_W;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let width = LEFT + PLOT_W + GAP + legend_width(series) + GAP;
    let x = |v: f64| LEFT + v / x_max * plot_w;
    let y = |f: f64| TOP + (1.0 - f) * plot_h;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect width="{width}" height="{HEIGHT}" fill="white"/><text x="{}" y="28" text-anchor="middle" font-size="16" font-weight="bold">{}</text>"#,
        width / 2.0,
        escape(title)
    );
    axes(&mut svg, x_max, step, &x, &y);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 15.0,
        escape(x_label)
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate(18 {}) rotate(-90)" text-anchor="middle">fraction of tasks finished within x</text>"#,
        TOP + plot_h / 2.0
    );
    for (i, s) in series.iter().enumerate() {
        line(&mut svg, i, s, &x, &y);
    }
    legend(&mut svg, series);
    svg.push_str("</svg>\n");
    svg
}

fn axes(svg: &mut String, x_max: f64, step: f64, x: &dyn Fn(f64) -> f64, y: &dyn Fn(f64) -> f64) {
    let places = decimals(step);
    let ticks = (x_max / step).round() as usize;
    for k in 0..=ticks {
        let v = k as f64 * step;
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#ddd"/><text x="{0:.1}" y="{3:.1}" text-anchor="middle">{4:.5$}</text>"##,
            x(v),
            y(1.0),
            y(0.0),
            y(0.0) + 18.0,
            v,
            places
        );
    }
    for k in 0..=5 {
        let f = k as f64 / 5.0;
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{2:.1}" y2="{1:.1}" stroke="#ddd"/><text x="{3:.1}" y="{4:.1}" text-anchor="end">{f:.1}</text>"##,
            x(0.0),
            y(f),
            x(x_max),
            x(0.0) - 6.0,
            y(f) + 4.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<polyline points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="none" stroke="black"/>"#,
        x(0.0),
        y(1.0),
        x(0.0),
        y(0.0),
        x(x_max),
        y(0.0)
    );
}

/// A step line through the sorted values: at each value the fraction rises by 1/n.
fn line(svg: &mut String, i: usize, s: &Series, x: &dyn Fn(f64) -> f64, y: &dyn Fn(f64) -> f64) {
    let mut v = s.values.clone();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return;
    }
    let n = v.len() as f64;
    let mut points = format!("{:.1},{:.1}", x(0.0), y(0.0));
    for (k, value) in v.iter().enumerate() {
        let _ = write!(
            points,
            " {:.1},{:.1} {:.1},{:.1}",
            x(*value),
            y(k as f64 / n),
            x(*value),
            y((k + 1) as f64 / n)
        );
    }
    let _ = writeln!(
        svg,
        r#"<polyline class="cdf" points="{points}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}"><title>{}</title></polyline>"#,
        COLORS[i % COLORS.len()],
        DASHES[i % DASHES.len()],
        escape(&s.name)
    );
}

/// Text of one legend entry.
fn legend_label(s: &Series) -> String {
    format!(
        "{} (n={}, median {:.2} s)",
        s.name,
        s.values.len(),
        crate::stats::median(&s.values)
    )
}

/// Legend box width: the swatch and the longest label (about 7.5 px a character at
/// 13 px sans-serif).
fn legend_width(series: &[Series]) -> f64 {
    let chars = series
        .iter()
        .map(|s| legend_label(s).chars().count())
        .max()
        .unwrap_or(0);
    46.0 + 7.5 * chars as f64
}

/// Right of the plot, level with its top.
fn legend(svg: &mut String, series: &[Series]) {
    let width = legend_width(series);
    let height = 18.0 * series.len() as f64 + 8.0;
    let left = LEFT + PLOT_W + GAP;
    let top = TOP;
    let _ = writeln!(
        svg,
        r##"<rect x="{left:.1}" y="{top:.1}" width="{width:.1}" height="{height:.1}" fill="white" fill-opacity="0.9" stroke="#999"/>"##
    );
    for (i, s) in series.iter().enumerate() {
        let ly = top + 13.0 + 18.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2" stroke-dasharray="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            left + 6.0,
            left + 36.0,
            COLORS[i % COLORS.len()],
            DASHES[i % DASHES.len()],
            left + 42.0,
            ly + 4.0,
            escape(&legend_label(s))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_series_and_labelled_axes() {
        let svg = render_svg(
            "map tasks",
            "task time (s)",
            &[
                Series {
                    name: "fair".into(),
                    values: vec![1.0, 2.0, 3.0],
                },
                Series {
                    name: "disk-rate".into(),
                    values: vec![0.5, 1.5],
                },
            ],
        );
        assert_eq!(svg.matches(r#"class="cdf""#).count(), 2);
        assert!(svg.contains("task time (s)"));
        assert!(svg.contains("fair (n=3, median 2.00 s)"));
        assert!(svg.contains("disk-rate (n=2, median 1.00 s)"));
        // The fair line ends at the top of the plot (fraction 1) at x = 3 s.
        assert!(svg.contains(&format!("{:.1},{:.1}\"", LEFT + PLOT_W, TOP)));
    }
}
