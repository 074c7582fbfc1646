//! Standalone SVG charts for the experiments' reports, shaped like the figures of the
//! studies they reproduce: a grouped bar chart (categories × series, optional error
//! whiskers) and a line chart (numeric, logarithmic or categorical x; several series with
//! markers). Both have a title, labelled axes (put the unit in the label: `"job time (s)"`),
//! ticks on "nice" numbers, and a legend in its own column right of the plot, so it never
//! covers data. Colours are the Okabe–Ito palette (safe for the common colour-vision
//! deficiencies); line series also differ by marker shape and dash, so a grey print reads.
//!
//! Values that are not finite (NaN, ±∞) are missing: no bar, no point, a gap in the line.
//!
//! Element classes a reader (or a test) can count: `rect.bar`, `line.whisker`,
//! `path.series`, `.marker`, `text.legend`, `text.tick`, `text.axis-label`, `text.title`.
//!
//! Why not `plotters` (its SVG backend, `default-features = false`; checked 2026-11-29 by
//! redrawing three of the docs' figures with the same data): it needs no font library for
//! SVG and adds four crates, but these figures only come out right around it. Its error
//! bar draws a ring at every mean, its legend sits inside the plot (outside, it is clamped
//! onto the plot's edge), a missing value pulls a line down to the axis instead of leaving
//! a gap, it has no categorical axis, and its SVG has no element classes or hover values
//! (the tests count the classes above) and is 2.5–3.5× larger. With those worked around,
//! the code is about as long as this file.

use std::fmt::Write;

/// Okabe & Ito, "Color Universal Design" (2008), black left out for the axes.
const PALETTE: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
];
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];
const MARKERS: [Marker; 5] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Cross,
];

const PLOT_W: f64 = 620.0;
const PLOT_H: f64 = 360.0;
const LEFT: f64 = 80.0;
const TOP: f64 = 56.0;
/// Tick labels and the x-axis label under the plot.
const BOTTOM: f64 = 70.0;
const RIGHT_PAD: f64 = 20.0;
const FONT: f64 = 13.0;
const TITLE_FONT: f64 = 16.0;
/// Rough width of one character of `FONT`-sized sans-serif text, to size the legend.
const CHAR_W: f64 = 7.4;
const LEGEND_ROW: f64 = 20.0;
const LEGEND_SWATCH: f64 = 26.0;

/// One series of a [`BarChart`]: a value per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// Legend text.
    pub name: String,
    /// One value per category of the chart, in the chart's category order.
    pub values: Vec<f64>,
    /// Optional whisker per value: `(low, high)` in data units (e.g. min and max of trials).
    pub whiskers: Option<Vec<(f64, f64)>>,
}

impl BarSeries {
    /// A series without whiskers.
    pub fn new(name: impl Into<String>, values: Vec<f64>) -> Self {
        BarSeries {
            name: name.into(),
            values,
            whiskers: None,
        }
    }

    /// The same series with a `(low, high)` whisker per value.
    pub fn with_whiskers(mut self, whiskers: Vec<(f64, f64)>) -> Self {
        self.whiskers = Some(whiskers);
        self
    }
}

/// Grouped bars: one group per category, one bar per series in each group; y from zero.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    /// Label under the categories.
    pub x_label: String,
    /// Label of the value axis, with its unit.
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// How a [`LineChart`] places x values.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Linear numeric x.
    Linear,
    /// Logarithmic numeric x (base 10 ticks); non-positive x values are dropped.
    Log,
    /// Evenly spaced categories; a point's x is the category's index (0, 1, ...).
    Categories(Vec<String>),
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Optional whisker per point: `(low, high)` in y units.
    pub whiskers: Option<Vec<(f64, f64)>>,
    /// A marker (with the point's value on hover) at each point; off for dense lines such
    /// as a CDF's steps, which their dash pattern still tells apart.
    pub markers: bool,
}

impl LineSeries {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        LineSeries {
            name: name.into(),
            points,
            whiskers: None,
            markers: true,
        }
    }

    /// The same series drawn as a bare line, in the plot and in the legend.
    pub fn without_markers(mut self) -> Self {
        self.markers = false;
        self
    }

    /// The same series with a `(low, high)` whisker per point.
    pub fn with_whiskers(mut self, whiskers: Vec<(f64, f64)>) -> Self {
        self.whiskers = Some(whiskers);
        self
    }
}

/// Lines with markers over numeric, log or categorical x.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_axis: XAxis,
    /// Start the y axis at zero (true) or fit it to the data (false); ignored with `y_log`.
    pub y_from_zero: bool,
    /// Logarithmic y (base 10 ticks); non-positive y values are dropped.
    pub y_log: bool,
    pub series: Vec<LineSeries>,
}

impl BarChart {
    /// The chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let names: Vec<&str> = self.series.iter().map(|s| s.name.as_str()).collect();
        let slot = PLOT_W / self.categories.len().max(1) as f64;
        let ticks: Vec<(f64, String)> = self
            .categories
            .iter()
            .enumerate()
            .map(|(i, c)| (LEFT + slot * (i as f64 + 0.5), c.clone()))
            .collect();
        let ticks = wrap_ticks(&ticks);
        let frame = Frame::new(&self.title, &names, &ticks);
        let (lo, hi) = value_range(self.series.iter().flat_map(bar_extent), true);
        let y = Scale::linear(lo, hi, frame.plot_bottom(), TOP);
        let mut svg = frame.open();
        frame.y_axis(&mut svg, &y, &self.y_label);
        frame.x_axis(&mut svg, &ticks, &self.x_label, false);
        let bar_w = slot * 0.8 / self.series.len().max(1) as f64;
        for (s, series) in self.series.iter().enumerate() {
            let color = PALETTE[s % PALETTE.len()];
            for (c, &value) in series.values.iter().enumerate().take(self.categories.len()) {
                if !value.is_finite() {
                    continue;
                }
                let x = LEFT + slot * (c as f64 + 0.1) + bar_w * s as f64;
                let top = y.at(value.max(lo));
                let base = y.at(lo.max(0.0_f64.min(hi)));
                let _ = write!(
                    svg,
                    r#"<rect class="bar" x="{x:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{color}"><title>{}, {}: {}</title></rect>"#,
                    top.min(base),
                    (bar_w - 1.0).max(1.0),
                    (base - top).abs(),
                    escape(&series.name),
                    escape(&self.categories[c]),
                    number(value)
                );
                if let Some((low, high)) = whisker(&series.whiskers, c) {
                    draw_whisker(
                        &mut svg,
                        x + bar_w / 2.0,
                        y.at(low),
                        y.at(high),
                        bar_w / 4.0,
                    );
                }
            }
        }
        frame.legend(&mut svg, &names, LegendKind::Swatch);
        svg.push_str("</svg>\n");
        svg
    }
}

impl LineChart {
    /// The chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let names: Vec<&str> = self.series.iter().map(|s| s.name.as_str()).collect();
        let usable = |&(px, py): &(f64, f64)| {
            px.is_finite()
                && py.is_finite()
                && (self.x_axis != XAxis::Log || px > 0.0)
                && (!self.y_log || py > 0.0)
        };
        let ys = self.series.iter().flat_map(|s| {
            let whiskers = s.whiskers.iter().flatten().flat_map(|&(l, h)| [l, h]);
            s.points
                .iter()
                .filter(|p| usable(p))
                .map(|p| p.1)
                .chain(whiskers)
        });
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter(|p| usable(p)).map(|p| p.0));
        let (x, ticks) = self.x_scale(xs);
        let ticks = wrap_ticks(&ticks);
        let frame = Frame::new(&self.title, &names, &ticks);
        let y = Scale::fit(ys, self.y_log, self.y_from_zero, frame.plot_bottom(), TOP);
        let mut svg = frame.open();
        frame.y_axis(&mut svg, &y, &self.y_label);
        frame.x_axis(&mut svg, &ticks, &self.x_label, true);
        for (s, series) in self.series.iter().enumerate() {
            let color = PALETTE[s % PALETTE.len()];
            let dash = DASHES[s % DASHES.len()];
            let mut path = String::new();
            let mut pen_down = false;
            for &(px, py) in &series.points {
                if !usable(&(px, py)) {
                    pen_down = false;
                    continue;
                }
                let _ = write!(
                    path,
                    "{}{:.2},{:.2} ",
                    if pen_down { "L" } else { "M" },
                    x.at(px),
                    y.at(py)
                );
                pen_down = true;
            }
            let _ = write!(
                svg,
                r#"<path class="series" d="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                path.trim_end()
            );
            for (i, &(px, py)) in series.points.iter().enumerate() {
                if !usable(&(px, py)) {
                    continue;
                }
                if let Some((low, high)) = whisker(&series.whiskers, i) {
                    draw_whisker(&mut svg, x.at(px), y.at(low), y.at(high), 4.0);
                }
                if series.markers {
                    let tip = format!("{}: ({}, {})", series.name, self.x_text(px), number(py));
                    MARKERS[s % MARKERS.len()].draw(&mut svg, x.at(px), y.at(py), color, &tip);
                }
            }
        }
        let markers = self.series.iter().map(|s| s.markers).collect();
        frame.legend(&mut svg, &names, LegendKind::Line { markers });
        svg.push_str("</svg>\n");
        svg
    }

    fn x_scale(&self, xs: impl Iterator<Item = f64>) -> (Scale, Vec<(f64, String)>) {
        let (left, right) = (LEFT, LEFT + PLOT_W);
        match &self.x_axis {
            XAxis::Categories(names) => {
                let n = names.len().max(1) as f64;
                let scale = Scale::linear(-0.5, n - 0.5, left, right);
                let ticks = names
                    .iter()
                    .enumerate()
                    .map(|(i, name)| (scale.at(i as f64), name.clone()))
                    .collect();
                (scale, ticks)
            }
            XAxis::Linear | XAxis::Log => {
                let scale = Scale::fit(xs, self.x_axis == XAxis::Log, false, left, right);
                let ticks = scale
                    .ticks()
                    .into_iter()
                    .map(|t| (scale.at(t), number(t)))
                    .collect();
                (scale, ticks)
            }
        }
    }

    fn x_text(&self, x: f64) -> String {
        match &self.x_axis {
            XAxis::Categories(names) => names
                .get(x.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_else(|| number(x)),
            _ => number(x),
        }
    }
}

/// The SVG canvas: plot area at (`LEFT`, `TOP`), `PLOT_W` × `PLOT_H`, legend column right.
struct Frame<'a> {
    title: &'a str,
    width: f64,
    height: f64,
    /// Lines of the tallest x tick label (long category names wrap).
    tick_lines: usize,
}

enum LegendKind {
    Swatch,
    /// A line sample per entry, with the series' marker where it has them.
    Line {
        markers: Vec<bool>,
    },
}

impl<'a> Frame<'a> {
    fn new(title: &'a str, legend: &[&str], x_ticks: &[(f64, Vec<String>)]) -> Self {
        let tick_lines = x_ticks
            .iter()
            .map(|(_, l)| l.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let longest = legend.iter().map(|s| s.chars().count()).max().unwrap_or(0);
        let legend_w = if legend.is_empty() {
            0.0
        } else {
            LEGEND_SWATCH + 16.0 + longest as f64 * CHAR_W
        };
        let title_w = LEFT + title.chars().count() as f64 * TITLE_FONT * 0.56 + RIGHT_PAD;
        let legend_h = TOP + legend.len() as f64 * LEGEND_ROW + 20.0;
        Frame {
            title,
            width: (LEFT + PLOT_W + 20.0 + legend_w + RIGHT_PAD).max(title_w),
            height: (TOP + PLOT_H + BOTTOM + extra_tick_lines(tick_lines)).max(legend_h),
            tick_lines,
        }
    }

    fn plot_bottom(&self) -> f64 {
        TOP + PLOT_H
    }

    fn open(&self) -> String {
        let (w, h) = (self.width, self.height);
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif" font-size="{FONT}"><rect width="100%" height="100%" fill="white"/><text class="title" x="{LEFT}" y="30" font-size="{TITLE_FONT}" font-weight="bold">{}</text>"#,
            escape(self.title)
        )
    }

    /// Grid lines, ticks and the rotated label of the value axis.
    fn y_axis(&self, svg: &mut String, y: &Scale, label: &str) {
        let right = LEFT + PLOT_W;
        for t in y.ticks() {
            let py = y.at(t);
            let _ = write!(
                svg,
                r##"<line x1="{LEFT}" y1="{py:.2}" x2="{right}" y2="{py:.2}" stroke="#e3e3e3"/><text class="tick" x="{:.0}" y="{:.2}" text-anchor="end">{}</text>"##,
                LEFT - 6.0,
                py + 4.0,
                number(t)
            );
        }
        let mid = TOP + PLOT_H / 2.0;
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="#333"/><text class="axis-label" x="18" y="{mid}" text-anchor="middle" transform="rotate(-90 18 {mid})">{}</text>"##,
            self.plot_bottom(),
            escape(label)
        );
    }

    /// The baseline, `ticks` (pixel x, text) and the label under the plot.
    fn x_axis(&self, svg: &mut String, ticks: &[(f64, Vec<String>)], label: &str, grid: bool) {
        let bottom = self.plot_bottom();
        let right = LEFT + PLOT_W;
        for (px, text) in ticks {
            if grid {
                let _ = write!(
                    svg,
                    r##"<line x1="{px:.2}" y1="{TOP}" x2="{px:.2}" y2="{bottom}" stroke="#f0f0f0"/>"##
                );
            }
            let _ = write!(
                svg,
                r##"<line x1="{px:.2}" y1="{bottom}" x2="{px:.2}" y2="{:.0}" stroke="#333"/><text class="tick" x="{px:.2}" y="{:.0}" text-anchor="middle">"##,
                bottom + 5.0,
                bottom + 20.0,
            );
            for (i, line) in text.iter().enumerate() {
                let dy = if i == 0 { 0.0 } else { TICK_LINE };
                let _ = write!(
                    svg,
                    r#"<tspan x="{px:.2}" dy="{dy}">{}</tspan>"#,
                    escape(line)
                );
            }
            svg.push_str("</text>");
        }
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/><text class="axis-label" x="{:.0}" y="{:.0}" text-anchor="middle">{}</text>"##,
            LEFT + PLOT_W / 2.0,
            bottom + 48.0 + extra_tick_lines(self.tick_lines),
            escape(label)
        );
    }

    fn legend(&self, svg: &mut String, names: &[&str], kind: LegendKind) {
        let x = LEFT + PLOT_W + 20.0;
        for (i, name) in names.iter().enumerate() {
            let y = TOP + 8.0 + i as f64 * LEGEND_ROW;
            let color = PALETTE[i % PALETTE.len()];
            match &kind {
                LegendKind::Swatch => {
                    let _ = write!(
                        svg,
                        r#"<rect class="legend-swatch" x="{x}" y="{:.1}" width="14" height="14" fill="{color}"/>"#,
                        y - 7.0
                    );
                }
                LegendKind::Line { markers } => {
                    let _ = write!(
                        svg,
                        r#"<line class="legend-swatch" x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2" stroke-dasharray="{}"/>"#,
                        x + LEGEND_SWATCH,
                        DASHES[i % DASHES.len()]
                    );
                    if markers[i] {
                        let marker = MARKERS[i % MARKERS.len()];
                        marker.draw(svg, x + LEGEND_SWATCH / 2.0, y, color, name);
                    }
                }
            }
            let text_x = match kind {
                LegendKind::Swatch => x + 22.0,
                LegendKind::Line { .. } => x + LEGEND_SWATCH + 8.0,
            };
            let _ = write!(
                svg,
                r#"<text class="legend" x="{text_x:.0}" y="{:.1}">{}</text>"#,
                y + 4.5,
                escape(name)
            );
        }
    }
}

/// Data → pixels along one axis.
struct Scale {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    fn linear(lo: f64, hi: f64, from: f64, to: f64) -> Self {
        Scale {
            lo,
            hi,
            from,
            to,
            log: false,
        }
    }

    /// A linear or log scale over a nice range covering `values`; `from_zero` only for
    /// linear scales.
    fn fit(
        values: impl Iterator<Item = f64>,
        log: bool,
        from_zero: bool,
        from: f64,
        to: f64,
    ) -> Self {
        if log {
            let (lo, hi) = log_range(values);
            Scale {
                log: true,
                ..Scale::linear(lo, hi, from, to)
            }
        } else {
            let (lo, hi) = value_range(values, from_zero);
            Scale::linear(lo, hi, from, to)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.lo, self.hi)
        } else {
            nice_ticks(self.lo, self.hi)
        }
    }

    fn at(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.from + f * (self.to - self.from)
    }
}

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

impl Marker {
    fn draw(self, svg: &mut String, x: f64, y: f64, color: &str, tip: &str) {
        let r = 4.5;
        let tip = escape(tip);
        let shape = match self {
            Marker::Circle => format!(r#"<circle cx="{x:.2}" cy="{y:.2}" r="{r}""#),
            Marker::Square => format!(
                r#"<rect x="{:.2}" y="{:.2}" width="{}" height="{}""#,
                x - r,
                y - r,
                2.0 * r,
                2.0 * r
            ),
            Marker::Triangle => format!(
                r#"<polygon points="{x:.2},{:.2} {:.2},{:.2} {:.2},{:.2}""#,
                y - r * 1.2,
                x - r * 1.1,
                y + r * 0.8,
                x + r * 1.1,
                y + r * 0.8
            ),
            Marker::Diamond => format!(
                r#"<polygon points="{x:.2},{:.2} {:.2},{y:.2} {x:.2},{:.2} {:.2},{y:.2}""#,
                y - r * 1.3,
                x + r * 1.3,
                y + r * 1.3,
                x - r * 1.3
            ),
            Marker::Cross => format!(
                r#"<path d="M{:.2},{:.2}L{:.2},{:.2}M{:.2},{:.2}L{:.2},{:.2}" stroke-width="2.5""#,
                x - r,
                y - r,
                x + r,
                y + r,
                x - r,
                y + r,
                x + r,
                y - r
            ),
        };
        let _ = write!(
            svg,
            r#"{shape} class="marker" fill="{color}" stroke="{color}"><title>{tip}</title></{}>"#,
            match self {
                Marker::Circle => "circle",
                Marker::Square => "rect",
                Marker::Triangle | Marker::Diamond => "polygon",
                Marker::Cross => "path",
            }
        );
    }
}

/// Pixels between the lines of a wrapped tick label.
const TICK_LINE: f64 = 15.0;

fn extra_tick_lines(lines: usize) -> f64 {
    lines.saturating_sub(1) as f64 * TICK_LINE
}

/// Tick labels broken at blanks into lines that fit the space between two ticks.
fn wrap_ticks(ticks: &[(f64, String)]) -> Vec<(f64, Vec<String>)> {
    let gap = ticks
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).abs())
        .fold(PLOT_W, f64::min);
    let max_chars = ((gap * 0.92) / CHAR_W).floor().max(4.0) as usize;
    ticks
        .iter()
        .map(|(px, text)| (*px, wrap(text, max_chars)))
        .collect()
}

fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= max_chars => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn draw_whisker(svg: &mut String, x: f64, y_low: f64, y_high: f64, cap: f64) {
    let _ = write!(
        svg,
        r##"<g class="whisker" stroke="#222" stroke-width="1.3"><line class="whisker" x1="{x:.2}" y1="{y_low:.2}" x2="{x:.2}" y2="{y_high:.2}"/><line x1="{:.2}" y1="{y_low:.2}" x2="{:.2}" y2="{y_low:.2}"/><line x1="{:.2}" y1="{y_high:.2}" x2="{:.2}" y2="{y_high:.2}"/></g>"##,
        x - cap,
        x + cap,
        x - cap,
        x + cap
    );
}

fn whisker(whiskers: &Option<Vec<(f64, f64)>>, i: usize) -> Option<(f64, f64)> {
    let &(low, high) = whiskers.as_ref()?.get(i)?;
    (low.is_finite() && high.is_finite()).then_some((low, high))
}

fn bar_extent(series: &BarSeries) -> impl Iterator<Item = f64> + '_ {
    let whiskers = series
        .whiskers
        .iter()
        .flatten()
        .flat_map(|&(low, high)| [low, high]);
    series.values.iter().copied().chain(whiskers)
}

/// A nice `(lo, hi)` covering the finite `values` (and zero when `from_zero`).
fn value_range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let Some((mut lo, mut hi)) = extent(values.filter(|v| v.is_finite())) else {
        return (0.0, 1.0);
    };
    if from_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        lo -= if from_zero && lo >= 0.0 { 0.0 } else { pad };
        hi += pad;
    }
    let step = nice_step(lo, hi);
    ((lo / step).floor() * step, (hi / step).ceil() * step)
}

/// The smallest and largest of `values`, if any.
fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |range, v| match range {
        None => Some((v, v)),
        Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
    })
}

/// The positive, finite `values` widened to 1, 2 or 5 × 10^k at both ends (at least a
/// decade), so the data fill the axis instead of sitting inside a whole decade of blank.
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let Some((lo, hi)) = extent(values.filter(|v| v.is_finite() && *v > 0.0)) else {
        return (1.0, 10.0);
    };
    let below = |v: f64| {
        let decade = 10f64.powf(v.log10().floor());
        let m = [5.0, 2.0, 1.0]
            .into_iter()
            .find(|m| m * decade <= v * (1.0 + 1e-9));
        m.unwrap_or(1.0) * decade
    };
    let above = |v: f64| {
        let decade = 10f64.powf(v.log10().floor());
        let m = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .find(|m| m * decade >= v * (1.0 - 1e-9));
        m.unwrap_or(10.0) * decade
    };
    let lo = below(lo);
    (lo, above(hi).max(lo * 10.0))
}

/// A step of 1, 2 or 5 × 10^k giving about five intervals over `[lo, hi]`.
fn nice_step(lo: f64, hi: f64) -> f64 {
    let rough = (hi - lo) / 5.0;
    let magnitude = 10f64.powf(rough.log10().floor());
    let fraction = rough / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let step = nice_step(lo, hi);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Decades in `[lo, hi]`, plus 2× and 5× when the range spans at most two decades.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let multiples: &[f64] = if hi / lo <= 100.0 * (1.0 + 1e-9) {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    (first..=last)
        .flat_map(|d| multiples.iter().map(move |m| m * 10f64.powi(d)))
        .filter(|t| (lo * (1.0 - 1e-9)..=hi * (1.0 + 1e-9)).contains(t))
        .collect()
}

/// A tick or tooltip number: no float noise, at most four significant digits.
fn number(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let abs = v.abs();
    if !(1e-3..1e7).contains(&abs) {
        return format!("{v:.2e}");
    }
    let decimals = (3 - abs.log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).expect("the chart is well-formed XML")
    }

    fn with_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
        doc.descendants()
            .filter(|n| n.attribute("class") == Some(class))
            .collect()
    }

    /// The text of each element of `class`, wrapped lines joined by blanks.
    fn texts(doc: &roxmltree::Document, class: &str) -> Vec<String> {
        with_class(doc, class)
            .iter()
            .map(|n| {
                let parts: Vec<&str> = n
                    .descendants()
                    .filter(|d| d.is_text())
                    .filter_map(|d| d.text())
                    .collect();
                parts.join(" ")
            })
            .collect()
    }

    fn attr(node: &roxmltree::Node, name: &str) -> f64 {
        node.attribute(name).unwrap().parse().unwrap()
    }

    fn bars() -> BarChart {
        BarChart {
            title: "DFSIO <write> & read".into(),
            x_label: "case".into(),
            y_label: "throughput (MB/s)".into(),
            categories: vec!["case 1".into(), "case 2".into(), "case 3".into()],
            series: vec![
                BarSeries::new("Tusk", vec![10.0, 12.5, f64::NAN]).with_whiskers(vec![
                    (9.0, 11.0),
                    (12.0, 13.0),
                    (0.0, 0.0),
                ]),
                BarSeries::new("Hadoop 3.4.2", vec![8.0, 9.0, 9.5]),
            ],
        }
    }

    #[test]
    fn bar_chart_has_a_bar_per_finite_value_whiskers_and_labels() {
        let svg = bars().to_svg();
        let doc = parse(&svg);
        let rects = with_class(&doc, "bar");
        assert_eq!(rects.len(), 5, "the NaN value draws no bar");
        assert_eq!(
            with_class(&doc, "whisker").len(),
            4,
            "2 whisker groups, 2 stems"
        );
        assert_eq!(texts(&doc, "title"), vec!["DFSIO <write> & read"]);
        assert_eq!(texts(&doc, "legend"), vec!["Tusk", "Hadoop 3.4.2"]);
        let axis = texts(&doc, "axis-label");
        assert!(axis.contains(&"throughput (MB/s)".to_string()));
        assert!(axis.contains(&"case".to_string()));
        let ticks = texts(&doc, "tick");
        for c in ["case 1", "case 2", "case 3", "0", "10"] {
            assert!(ticks.contains(&c.to_string()), "tick {c} in {ticks:?}");
        }
        // Taller value, taller bar; all bars stand on the same baseline.
        let heights: Vec<f64> = rects.iter().map(|r| attr(r, "height")).collect();
        assert!(heights[1] > heights[0]);
        let bottoms: Vec<f64> = rects
            .iter()
            .map(|r| attr(r, "y") + attr(r, "height"))
            .collect();
        assert!(bottoms.iter().all(|b| (b - bottoms[0]).abs() < 0.01));
    }

    #[test]
    fn legend_sits_right_of_every_bar() {
        let svg = bars().to_svg();
        let doc = parse(&svg);
        let right_of_data = with_class(&doc, "bar")
            .iter()
            .map(|r| attr(r, "x") + attr(r, "width"))
            .fold(0.0, f64::max);
        for swatch in with_class(&doc, "legend-swatch") {
            assert!(attr(&swatch, "x") > right_of_data);
        }
        let width = attr(&doc.root_element(), "width");
        let legend_x = with_class(&doc, "legend")
            .iter()
            .map(|t| attr(t, "x"))
            .fold(0.0, f64::max);
        assert!(legend_x + "Hadoop 3.4.2".len() as f64 * CHAR_W <= width);
    }

    #[test]
    fn line_chart_draws_a_marker_per_point_and_breaks_at_gaps() {
        let chart = LineChart {
            title: "job time".into(),
            x_label: "case".into(),
            y_label: "time (s)".into(),
            x_axis: XAxis::Categories((1..=4).map(|c| format!("case {c}")).collect()),
            y_from_zero: false,
            y_log: false,
            series: vec![
                LineSeries::new(
                    "classic",
                    vec![(0.0, 30.0), (1.0, 28.0), (2.0, f64::NAN), (3.0, 25.0)],
                ),
                LineSeries::new(
                    "event-driven",
                    vec![(0.0, 20.0), (1.0, 20.5), (2.0, 20.1), (3.0, 19.9)],
                )
                .with_whiskers(vec![(19.0, 21.0); 4]),
            ],
        };
        let svg = chart.to_svg();
        let doc = parse(&svg);
        let markers = with_class(&doc, "marker");
        // 7 data points + one marker per legend entry.
        assert_eq!(markers.len(), 7 + 2);
        let paths = with_class(&doc, "series");
        assert_eq!(paths.len(), 2);
        let d = paths[0].attribute("d").unwrap();
        assert_eq!(d.matches('M').count(), 2, "the NaN breaks the line: {d}");
        assert_eq!(texts(&doc, "legend"), vec!["classic", "event-driven"]);
        assert!(texts(&doc, "tick").contains(&"case 4".to_string()));
        assert_eq!(with_class(&doc, "whisker").len(), 8);
    }

    #[test]
    fn log_x_ticks_are_decades_and_points_are_spaced_by_ratio() {
        let chart = LineChart {
            title: "write latency".into(),
            x_label: "file size (MB)".into(),
            y_label: "latency (ms)".into(),
            x_axis: XAxis::Log,
            y_from_zero: true,
            y_log: true,
            series: vec![LineSeries::new(
                "pipeline",
                vec![(1.0, 5.0), (10.0, 20.0), (100.0, 150.0), (0.0, 1.0)],
            )],
        };
        let svg = chart.to_svg();
        let doc = parse(&svg);
        let markers: Vec<f64> = with_class(&doc, "marker")
            .iter()
            .filter_map(|m| m.attribute("cx").map(|x| x.parse().unwrap()))
            .collect();
        // x = 0 has no place on a log axis; the legend's circle is the fourth.
        assert_eq!(markers.len(), 3 + 1);
        assert!(((markers[1] - markers[0]) - (markers[2] - markers[1])).abs() < 0.01);
        let ticks = texts(&doc, "tick");
        for t in ["1", "10", "100"] {
            assert!(ticks.contains(&t.to_string()), "{t} in {ticks:?}");
        }
        assert!(
            !ticks.contains(&"1000".to_string()),
            "the axis ends at the data's last decade: {ticks:?}"
        );
        // Log y: 5 → 20 → 150 ms are placed by ratio, so 10 ms is halfway between 1 and 100.
        let ys: Vec<f64> = with_class(&doc, "marker")
            .iter()
            .filter_map(|m| m.attribute("cy").map(|y| y.parse().unwrap()))
            .collect();
        let ratio = (ys[0] - ys[1]) / (ys[1] - ys[2]);
        let expected = (20f64 / 5.0).log10() / (150f64 / 20.0).log10();
        assert!((ratio - expected).abs() < 0.01, "{ratio} vs {expected}");
    }

    #[test]
    fn long_category_names_wrap_below_the_axis() {
        let chart = LineChart {
            title: "job time".into(),
            x_label: "case (DataNode s / AM ms / NodeManager ms)".into(),
            y_label: "time (s)".into(),
            x_axis: XAxis::Categories(
                (1..=6)
                    .map(|c| format!("{c} (3 s / 1000 / 1000)"))
                    .collect(),
            ),
            y_from_zero: true,
            y_log: false,
            series: vec![LineSeries::new("classic", vec![(0.0, 3.0), (5.0, 1.0)])],
        };
        let svg = chart.to_svg();
        let doc = parse(&svg);
        let ticks = with_class(&doc, "tick");
        let first_case = ticks
            .iter()
            .find(|t| {
                t.descendants()
                    .any(|d| d.is_text() && d.text() == Some("1 (3 s /"))
            })
            .expect("the label is wrapped");
        let lines: Vec<&str> = first_case
            .descendants()
            .filter(|d| d.is_text())
            .filter_map(|d| d.text())
            .collect();
        assert_eq!(lines.join(" "), "1 (3 s / 1000 / 1000)");
        assert!(lines.iter().all(|l| l.len() as f64 * CHAR_W < PLOT_W / 6.0));
        // The axis label moves below the wrapped lines, inside the canvas.
        let label = with_class(&doc, "axis-label")
            .into_iter()
            .find(|n| n.text() == Some("case (DataNode s / AM ms / NodeManager ms)"))
            .unwrap();
        let height = attr(&doc.root_element(), "height");
        let label_y = attr(&label, "y");
        assert!(label_y > TOP + PLOT_H + 20.0 + TICK_LINE * (lines.len() - 1) as f64);
        assert!(label_y < height);
    }

    #[test]
    fn ticks_are_nice_numbers() {
        let ticks: Vec<String> = nice_ticks(0.0, 1.0).into_iter().map(number).collect();
        assert_eq!(ticks, ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        assert_eq!(value_range([3.2, 47.0].into_iter(), true), (0.0, 50.0));
        assert_eq!(value_range([18.3, 21.7].into_iter(), false), (18.0, 22.0));
        let (lo, hi) = log_range([0.0068, 1.37].into_iter());
        assert_eq!((number(lo), number(hi)), ("0.005".into(), "2".into()));
        let ticks: Vec<String> = log_ticks(lo, hi).into_iter().map(number).collect();
        assert_eq!(ticks, ["0.01", "0.1", "1"]);
        let ticks: Vec<String> = log_ticks(2.0, 50.0).into_iter().map(number).collect();
        assert_eq!(ticks, ["2", "5", "10", "20", "50"]);
        assert_eq!(number(0.6000000000000001), "0.6");
        assert_eq!(number(1234.6), "1235");
        assert_eq!(number(0.0125), "0.0125");
    }
}
