//! Empirical CDFs of task times as a [`LineChart`]: one step line per series (x = the
//! measured value, y = the fraction of samples at or below it), the legend naming each
//! series with its sample count and median.

use crate::report::chart::{LineChart, LineSeries, XAxis};

/// One line of the chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub values: Vec<f64>,
}

/// The SVG text of the CDFs of `series`; `x_label` names the value and its unit.
pub fn render_svg(title: &str, x_label: &str, series: &[Series]) -> String {
    LineChart {
        title: title.into(),
        x_label: x_label.into(),
        y_label: "fraction of tasks finished within x".into(),
        x_axis: XAxis::Linear,
        y_from_zero: true,
        y_log: false,
        series: series
            .iter()
            .map(|s| LineSeries::new(legend_label(s), steps(&s.values)).without_markers())
            .collect(),
    }
    .to_svg()
}

/// From the origin, a step through the sorted values: at each value the fraction rises
/// by 1/n.
fn steps(values: &[f64]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let rises = sorted
        .iter()
        .enumerate()
        .flat_map(|(k, &v)| [(v, k as f64 / n), (v, (k + 1) as f64 / n)]);
    std::iter::once((0.0, 0.0)).chain(rises).collect()
}

/// Text of one legend entry.
fn legend_label(s: &Series) -> String {
    format!(
        "{} (n={}, median {:.2} s)",
        s.name,
        s.values.len(),
        crate::report::stats::median(&s.values)
    )
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
                    values: vec![3.0, 1.0, 2.0],
                },
                Series {
                    name: "disk-rate".into(),
                    values: vec![0.5, 1.5],
                },
            ],
        );
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let class = |c: &str| {
            doc.descendants()
                .filter(|n| n.attribute("class") == Some(c))
                .collect::<Vec<_>>()
        };
        let lines = class("series");
        assert_eq!(lines.len(), 2);
        assert!(class("marker").is_empty(), "step lines carry no markers");
        let legend: Vec<_> = class("legend").iter().filter_map(|n| n.text()).collect();
        assert_eq!(
            legend,
            [
                "fair (n=3, median 2.00 s)",
                "disk-rate (n=2, median 1.00 s)"
            ]
        );
        assert!(class("axis-label")
            .iter()
            .any(|n| n.text() == Some("task time (s)")));
        // The fair line rises in three steps and ends at the top (fraction 1) at x = 3 s,
        // the right end of the axis.
        let points: Vec<(f64, f64)> = lines[0]
            .attribute("d")
            .unwrap()
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.trim_start_matches(['M', 'L']).split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(points.len(), 1 + 2 * 3);
        let (last_x, last_y) = points[points.len() - 1];
        assert!(points.iter().all(|&(x, y)| x <= last_x && y >= last_y));
        assert_eq!(
            steps(&[3.0, 1.0])[1..],
            [(1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0)]
        );
    }
}
