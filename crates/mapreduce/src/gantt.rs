//! A job's history drawn as a standalone SVG Gantt chart, the way Hadoop performance
//! studies draw them: x is seconds since the job was submitted, one row per attempt
//! (maps first, then reduces, each sorted by start), each bar split into its phases
//! (map; shuffle/copy; sort/merge; reduce). Failed and killed attempts are hatched and
//! outlined in red, speculative attempts carry a diamond and `[spec]` in their label.
//! Every bar has a `<title>` tooltip with its times.
//!
//! Phase bars are `<rect class="phase ...">`, an attempt without phase timings (one that
//! failed before reporting) is a single `<rect class="attempt">`; legend swatches and
//! overlays have their own classes, so a reader can count phases by class.
//!
//! `sheet` draws several concurrent jobs on one chart by node and slot
//! ([`render_jobs_svg`]).

mod sheet;

use std::fmt::Write;

use crate::history::{AttemptRecord, JobHistory};
use crate::task::{Outcome, Phase};

pub use sheet::render_jobs_svg;

/// Width of the row-label column.
const LABEL_W: f64 = 250.0;
/// Width of the time axis.
const PLOT_W: f64 = 900.0;
const RIGHT_PAD: f64 = 40.0;
/// Title and subtitle.
const TOP: f64 = 58.0;
const ROW_H: f64 = 16.0;
const BAR_H: f64 = 12.0;
/// Tick labels and the axis caption under the rows.
const AXIS_H: f64 = 40.0;
const LEGEND_H: f64 = 30.0;
const FAILED_RED: &str = "#d62728";

/// The SVG text of `history`'s Gantt chart.
pub fn render_svg(history: &JobHistory) -> String {
    let chart = Chart::new(history);
    let mut svg = String::new();
    chart.open(&mut svg);
    chart.title(&mut svg);
    chart.grid(&mut svg);
    for (row, attempt) in chart.rows.iter().enumerate() {
        chart.row(&mut svg, row, attempt);
    }
    chart.job_start_marker(&mut svg);
    chart.legend(&mut svg);
    svg.push_str("</svg>\n");
    svg
}

/// The fill of each phase (Tableau 10: tells apart in print and for most colour-blind
/// readers; red is kept for failures).
pub fn phase_color(phase: Phase) -> &'static str {
    match phase {
        Phase::Map => "#4e79a7",
        Phase::Shuffle => "#f28e2b",
        Phase::Sort => "#59a14f",
        Phase::Reduce => "#b07aa1",
    }
}

/// The name a phase has in the chart (Hadoop's words).
pub fn phase_label(phase: Phase) -> &'static str {
    match phase {
        Phase::Map => "map",
        Phase::Shuffle => "shuffle/copy",
        Phase::Sort => "sort/merge",
        Phase::Reduce => "reduce",
    }
}

fn phase_class(phase: Phase) -> &'static str {
    match phase {
        Phase::Map => "map",
        Phase::Shuffle => "shuffle",
        Phase::Sort => "sort",
        Phase::Reduce => "reduce",
    }
}

/// `s` with XML's special characters escaped, for text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A tick step of 1, 2 or 5 × 10^k giving about `target` ticks over `span` (also used
/// by the benchmarks' charts).
pub fn tick_step(span_s: f64, target: f64) -> f64 {
    let raw = (span_s / target).max(1e-3);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|step| *step >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Decimals that show a multiple of `step` exactly (0 for whole seconds).
pub fn decimals(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    }
}

/// `m_000003` out of `task_<ts>_<seq>_m_000003`.
fn short_task(task: &str) -> &str {
    let mut cut = task.rmatch_indices('_').map(|(i, _)| i);
    match (cut.next(), cut.next()) {
        (Some(_), Some(i)) => &task[i + 1..],
        _ => task,
    }
}

/// The attempt number: the last `_` field of the attempt id.
fn attempt_number(attempt: &str) -> &str {
    attempt.rsplit('_').next().unwrap_or(attempt)
}

/// The chart's geometry: time origin, span and the attempts in row order.
struct Chart<'a> {
    history: &'a JobHistory,
    rows: Vec<&'a AttemptRecord>,
    origin_ms: u64,
    span_ms: u64,
}

impl<'a> Chart<'a> {
    fn new(history: &'a JobHistory) -> Self {
        let mut rows: Vec<&AttemptRecord> = history.attempts.iter().collect();
        rows.sort_by(|a, b| {
            (a.task_type != "MAP", a.start_ms, &a.attempt).cmp(&(
                b.task_type != "MAP",
                b.start_ms,
                &b.attempt,
            ))
        });
        let origin_ms = history.submit_ms;
        let end_ms = rows
            .iter()
            .map(|a| a.end_ms)
            .chain([history.finish_ms])
            .max()
            .unwrap_or(origin_ms);
        Chart {
            history,
            rows,
            origin_ms,
            span_ms: end_ms.saturating_sub(origin_ms).max(1),
        }
    }

    fn width(&self) -> f64 {
        LABEL_W + PLOT_W + RIGHT_PAD
    }

    fn rows_bottom(&self) -> f64 {
        TOP + self.rows.len() as f64 * ROW_H
    }

    fn height(&self) -> f64 {
        self.rows_bottom() + AXIS_H + LEGEND_H
    }

    fn x(&self, ms: u64) -> f64 {
        let t = ms.saturating_sub(self.origin_ms) as f64;
        LABEL_W + t / self.span_ms as f64 * PLOT_W
    }

    fn seconds(&self, ms: u64) -> f64 {
        ms.saturating_sub(self.origin_ms) as f64 / 1000.0
    }

    fn open(&self, svg: &mut String) {
        open_svg(svg, self.width(), self.height());
    }

    fn title(&self, svg: &mut String) {
        let h = self.history;
        let duration = h.finish_ms.saturating_sub(h.submit_ms) as f64 / 1000.0;
        let state = format!("{:?}", h.state).to_uppercase();
        let _ = writeln!(
            svg,
            r#"<text class="title" x="10" y="20" font-size="15" font-weight="bold">{} {} — {state}, {duration:.3} s, {} maps, {} reduces</text>"#,
            escape(&h.job_id),
            escape(&h.name),
            h.maps,
            h.reduces
        );
        let mut sub = format!("user {}", h.user);
        if !h.application_id.is_empty() {
            let _ = write!(sub, ", {}", h.application_id);
        }
        let _ = write!(
            sub,
            "; {} attempts; x = seconds since submit",
            self.rows.len()
        );
        if !h.diagnostics.is_empty() {
            let _ = write!(sub, "; {}", h.diagnostics);
        }
        let _ = writeln!(
            svg,
            r##"<text class="subtitle" x="10" y="38" fill="#555">{}</text>"##,
            escape(&sub)
        );
    }

    /// Vertical grid lines with tick labels under the rows.
    fn grid(&self, svg: &mut String) {
        time_axis(
            svg,
            &TimeAxis {
                left: LABEL_W,
                width: PLOT_W,
                span_s: self.span_ms as f64 / 1000.0,
                top: TOP - 4.0,
                bottom: self.rows_bottom() + 4.0,
                ticks: 8.0,
                caption: "seconds since submit",
            },
        );
    }

    fn row(&self, svg: &mut String, row: usize, a: &AttemptRecord) {
        let y = TOP + row as f64 * ROW_H;
        let bar_y = y + (ROW_H - BAR_H) / 2.0;
        let outcome = outcome_name(a.outcome);
        let _ = writeln!(
            svg,
            r#"<g class="attempt-row {outcome}"><title>{}</title>"#,
            escape(&self.tooltip(a))
        );
        let mut label = format!(
            "{} #{} · {}",
            short_task(&a.task),
            attempt_number(&a.attempt),
            if a.node.is_empty() { "?" } else { &a.node }
        );
        if a.speculative {
            label.push_str(" [spec]");
        }
        let _ = writeln!(
            svg,
            r#"<text class="label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LABEL_W - 6.0,
            y + ROW_H - 4.0,
            escape(&label)
        );
        if a.phases.is_empty() {
            let _ = writeln!(
                svg,
                r##"<rect class="attempt" x="{:.2}" y="{bar_y:.1}" width="{:.2}" height="{BAR_H}" fill="#bab0ac"/>"##,
                self.x(a.start_ms),
                self.bar_width(a.start_ms, a.end_ms)
            );
        }
        for p in &a.phases {
            let _ = writeln!(
                svg,
                r#"<rect class="phase {}" x="{:.2}" y="{bar_y:.1}" width="{:.2}" height="{BAR_H}" fill="{}"><title>{} {:.3}–{:.3} s ({:.3} s)</title></rect>"#,
                phase_class(p.phase),
                self.x(p.start_ms),
                self.bar_width(p.start_ms, p.end_ms),
                phase_color(p.phase),
                phase_label(p.phase),
                self.seconds(p.start_ms),
                self.seconds(p.end_ms),
                p.end_ms.saturating_sub(p.start_ms) as f64 / 1000.0
            );
        }
        let bar = (
            self.x(a.start_ms),
            bar_y,
            self.bar_width(a.start_ms, a.end_ms),
            BAR_H,
        );
        outcome_overlay(svg, a.outcome, bar, r#" fill-opacity="0.6""#);
        if a.speculative {
            let x = self.x(a.end_ms) + 7.0;
            let _ = writeln!(svg, "{}", diamond(x, y + ROW_H / 2.0));
        }
        svg.push_str("</g>\n");
    }

    /// At least half a pixel, so a millisecond phase still shows.
    fn bar_width(&self, start_ms: u64, end_ms: u64) -> f64 {
        (self.x(end_ms.max(start_ms)) - self.x(start_ms)).max(0.5)
    }

    fn tooltip(&self, a: &AttemptRecord) -> String {
        let mut t = format!(
            "{} on {} {}: {} {:.3}–{:.3} s",
            a.attempt,
            a.node,
            a.container,
            outcome_name(a.outcome),
            self.seconds(a.start_ms),
            self.seconds(a.end_ms)
        );
        if a.speculative {
            t.push_str(", speculative");
        }
        if a.data_local {
            t.push_str(", data-local");
        }
        let _ = write!(
            t,
            "; read {} B, written {} B, shuffled {} B",
            a.bytes_read, a.bytes_written, a.bytes_shuffled
        );
        if let Some(s) = &a.node_status_at_launch {
            let _ = write!(t, "; node at launch: {}", s.summary());
        }
        if let Some(e) = &a.error {
            let _ = write!(t, "; error: {e}");
        }
        t
    }

    /// A dashed line where the job (its AM) started, when that is after submission.
    fn job_start_marker(&self, svg: &mut String) {
        let h = self.history;
        if h.start_ms <= h.submit_ms {
            return;
        }
        let x = self.x(h.start_ms);
        let _ = writeln!(
            svg,
            r##"<line class="job-start" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333" stroke-dasharray="4,3"><title>job started {:.3} s</title></line>"##,
            TOP - 10.0,
            self.rows_bottom() + 4.0,
            self.seconds(h.start_ms)
        );
    }

    fn legend(&self, svg: &mut String) {
        let y = self.rows_bottom() + AXIS_H + 8.0;
        let mut x = LABEL_W;
        let _ = writeln!(svg, r#"<g class="legend">"#);
        for phase in [Phase::Map, Phase::Shuffle, Phase::Sort, Phase::Reduce] {
            let fill = format!(r#"fill="{}""#, phase_color(phase));
            legend_key(svg, (x, y, BAR_H), &fill, phase_label(phase));
            x += 110.0;
        }
        legend_key(
            svg,
            (x, y, BAR_H),
            &format!(r#"fill="url(#hatch)" stroke="{FAILED_RED}" stroke-width="1.5""#),
            "failed (solid) / killed (dashed)",
        );
        x += 210.0;
        legend_diamond(svg, (x, y, BAR_H), "speculative");
        svg.push_str("</g>\n");
    }
}

/// A legend entry at (x, y, height): a swatch painted with `paint` (SVG attributes) and
/// its label.
fn legend_key(svg: &mut String, (x, y, h): (f64, f64, f64), paint: &str, label: &str) {
    let _ = writeln!(
        svg,
        r#"<rect class="swatch" x="{x:.1}" y="{y:.1}" width="16" height="{h}" {paint}/><text x="{:.1}" y="{:.1}">{}</text>"#,
        x + 21.0,
        y + h - 2.0,
        escape(label)
    );
}

/// The speculative marker's legend entry.
fn legend_diamond(svg: &mut String, (x, y, h): (f64, f64, f64), label: &str) {
    let _ = writeln!(
        svg,
        r#"{}<text x="{:.1}" y="{:.1}">{}</text>"#,
        diamond(x + 8.0, y + h / 2.0),
        x + 21.0,
        y + h - 2.0,
        escape(label)
    );
}

/// `<svg>` with the hatch pattern failed and killed attempts use, on white.
fn open_svg(svg: &mut String, w: f64, h: f64) {
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        svg,
        r#"<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="{FAILED_RED}" stroke-width="2"/></pattern></defs>"#
    );
    let _ = writeln!(
        svg,
        r#"<rect class="background" x="0" y="0" width="{w:.0}" height="{h:.0}" fill="white"/>"#
    );
}

/// Where a chart's time axis goes: seconds from 0 to `span_s` over `width` pixels.
struct TimeAxis<'c> {
    left: f64,
    width: f64,
    span_s: f64,
    /// Grid lines run from `top` to `bottom`; ticks and caption go under `bottom`.
    top: f64,
    bottom: f64,
    /// About how many ticks.
    ticks: f64,
    caption: &'c str,
}

/// Grid lines at round steps, their labels, the axis line and its caption.
fn time_axis(svg: &mut String, a: &TimeAxis) {
    let step = tick_step(a.span_s, a.ticks);
    let digits = decimals(step);
    let (top, bottom) = (a.top, a.bottom);
    let _ = writeln!(svg, r##"<g class="axis" stroke="#ddd">"##);
    let ticks = (a.span_s / step + 1e-9).floor() as u64;
    for i in 0..=ticks {
        let t = i as f64 * step;
        let x = a.left + t / a.span_s * a.width;
        let _ = writeln!(
            svg,
            r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom:.1}"/>"#
        );
        let _ = writeln!(
            svg,
            r##"<text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle" stroke="none" fill="#333">{t:.digits$}</text>"##,
            bottom + 12.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{:.1}" y1="{bottom:.1}" x2="{:.1}" y2="{bottom:.1}" stroke="#333"/>"##,
        a.left,
        a.left + a.width
    );
    let _ = writeln!(
        svg,
        r##"<text class="axis-caption" x="{:.1}" y="{:.1}" text-anchor="middle" stroke="none" fill="#333">{}</text>"##,
        a.left + a.width / 2.0,
        bottom + 28.0,
        escape(a.caption)
    );
    svg.push_str("</g>\n");
}

/// The hatched overlay on the bar (x, y, width, height) of an attempt that failed or
/// was killed (dashed), with `extra` attributes; nothing for one that succeeded.
fn outcome_overlay(svg: &mut String, outcome: Outcome, bar: (f64, f64, f64, f64), extra: &str) {
    if outcome == Outcome::Succeeded {
        return;
    }
    let dash = if outcome == Outcome::Killed {
        r#" stroke-dasharray="3,2""#
    } else {
        ""
    };
    let (x, y, width, height) = bar;
    let _ = writeln!(
        svg,
        r#"<rect class="{}" x="{x:.2}" y="{y:.1}" width="{width:.2}" height="{height}" fill="url(#hatch)"{extra} stroke="{FAILED_RED}" stroke-width="1.5"{dash}/>"#,
        outcome_name(outcome)
    );
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Succeeded => "succeeded",
        Outcome::Failed => "failed",
        Outcome::Killed => "killed",
    }
}

fn diamond(cx: f64, cy: f64) -> String {
    format!(
        r##"<polygon class="speculative" points="{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}" fill="#edc948" stroke="#333"/>"##,
        cx,
        cy - 6.0,
        cx + 6.0,
        cy,
        cx,
        cy + 6.0,
        cx - 6.0,
        cy
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::Counters;
    use crate::history::JobState;
    use crate::task::PhaseTiming;

    fn phase(phase: Phase, start_ms: u64, end_ms: u64) -> PhaseTiming {
        PhaseTiming {
            phase,
            start_ms,
            end_ms,
        }
    }

    fn attempt(
        id: &str,
        node: &str,
        phases: Vec<PhaseTiming>,
        outcome: Outcome,
        speculative: bool,
    ) -> AttemptRecord {
        let task = id
            .rsplit_once('_')
            .unwrap()
            .0
            .replacen("attempt", "task", 1);
        let start_ms = phases.first().map_or(1_500, |p| p.start_ms);
        let end_ms = phases.last().map_or(1_900, |p| p.end_ms);
        let kind = if task.contains("_m_") {
            "MAP"
        } else {
            "REDUCE"
        };
        AttemptRecord {
            attempt: id.into(),
            task,
            node: node.into(),
            container: "container_1_0001_01_000002".into(),
            start_ms,
            end_ms,
            phases,
            speculative,
            data_local: true,
            bytes_read: 1024,
            error: (outcome == Outcome::Failed).then(|| "disk <full> & sad".into()),
            node_status_at_launch: Some(crate::history::NodeStatusAtLaunch {
                disk_utilization_pct: 92.0,
                net_rx_bytes_per_sec: 1.5e6,
                potential_reception_bytes: 4_000_000,
            }),
            ..AttemptRecord::new(kind, outcome)
        }
    }

    fn history() -> JobHistory {
        let reduce = attempt(
            "attempt_1700000000000_0001_r_000000_0",
            "nm-2",
            vec![
                phase(Phase::Shuffle, 1_200, 2_100),
                phase(Phase::Sort, 2_100, 2_300),
                phase(Phase::Reduce, 2_300, 2_900),
            ],
            Outcome::Succeeded,
            false,
        );
        let late_map = attempt(
            "attempt_1700000000000_0001_m_000001_0",
            "nm-2",
            vec![
                phase(Phase::Map, 1_100, 1_800),
                phase(Phase::Sort, 1_800, 1_900),
            ],
            Outcome::Succeeded,
            false,
        );
        let early_map = attempt(
            "attempt_1700000000000_0001_m_000000_0",
            "nm-1",
            vec![
                phase(Phase::Map, 1_050, 1_600),
                phase(Phase::Sort, 1_600, 1_700),
            ],
            Outcome::Succeeded,
            false,
        );
        let failed = attempt(
            "attempt_1700000000000_0001_m_000002_0",
            "nm-1",
            vec![],
            Outcome::Failed,
            false,
        );
        let speculative = attempt(
            "attempt_1700000000000_0001_m_000001_1",
            "nm-1",
            vec![phase(Phase::Map, 1_600, 1_950)],
            Outcome::Killed,
            true,
        );
        JobHistory {
            job_id: "job_1700000000000_0001".into(),
            application_id: "application_1700000000000_0001".into(),
            name: "word<count> & \"friends\"".into(),
            user: "tusk".into(),
            submit_ms: 1_000,
            start_ms: 1_030,
            finish_ms: 3_000,
            state: JobState::Succeeded,
            maps: 3,
            reduces: 1,
            counters: Counters::default(),
            attempts: vec![reduce, late_map, failed, speculative, early_map],
            diagnostics: String::new(),
            speculation: vec![],
            speculation_summary: Default::default(),
        }
    }

    #[test]
    fn one_rect_per_phase_and_one_per_attempt_without_phases() {
        let svg = render_svg(&history());
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches(r#"<rect class="phase "#).count(), 8);
        assert_eq!(svg.matches(r#"<rect class="phase map""#).count(), 3);
        assert_eq!(svg.matches(r#"<rect class="phase shuffle""#).count(), 1);
        assert_eq!(svg.matches(r#"<rect class="phase sort""#).count(), 3);
        assert_eq!(svg.matches(r#"<rect class="phase reduce""#).count(), 1);
        assert_eq!(svg.matches(r#"<rect class="attempt""#).count(), 1);
        assert_eq!(
            svg.matches("<g ").count(),
            svg.matches("</g>").count(),
            "groups are balanced"
        );
    }

    #[test]
    fn maps_come_first_sorted_by_start_then_reduces() {
        let svg = render_svg(&history());
        let pos = |needle: &str| svg.find(needle).unwrap_or_else(|| panic!("{needle}"));
        let order = [
            "m_000000 #0 · nm-1",
            "m_000001 #0 · nm-2",
            "m_000002 #0 · nm-1",
            "m_000001 #1 · nm-1 [spec]",
            "r_000000 #0 · nm-2",
        ];
        for pair in order.windows(2) {
            assert!(
                pos(pair[0]) < pos(pair[1]),
                "{} before {}",
                pair[0],
                pair[1]
            );
        }
    }

    #[test]
    fn failures_killed_and_speculative_attempts_are_marked() {
        let svg = render_svg(&history());
        assert_eq!(svg.matches(r#"<rect class="failed""#).count(), 1);
        assert_eq!(svg.matches(r#"<rect class="killed""#).count(), 1);
        // One diamond on the speculative attempt, one in the legend.
        assert_eq!(svg.matches(r#"<polygon class="speculative""#).count(), 2);
        assert!(svg.contains("disk &lt;full&gt; &amp; sad"));
        assert!(svg.contains(FAILED_RED));
    }

    #[test]
    fn tooltips_give_the_node_status_at_launch() {
        let svg = render_svg(&history());
        assert_eq!(
            svg.matches("node at launch: disk 92% rx 1.5 MB/s to-fetch 4.0 MB")
                .count(),
            5
        );
    }

    #[test]
    fn title_names_the_job_with_escaped_text_and_duration() {
        let svg = render_svg(&history());
        assert!(svg.contains("job_1700000000000_0001"));
        assert!(svg.contains("word&lt;count&gt; &amp; &quot;friends&quot;"));
        assert!(!svg.contains("word<count>"));
        assert!(svg.contains("SUCCEEDED, 2.000 s, 3 maps, 1 reduces"));
        for label in [
            "map",
            "shuffle/copy",
            "sort/merge",
            "reduce",
            "seconds since submit",
        ] {
            assert!(
                svg.contains(&format!(">{label}<")),
                "legend or axis: {label}"
            );
        }
    }

    #[test]
    fn axis_ticks_cover_the_span_in_round_steps() {
        let svg = render_svg(&history());
        // 2 s span → 0.5 s steps.
        for tick in ["0.0", "1.0", "2.0"] {
            assert!(svg.contains(&format!(">{tick}</text>")), "tick {tick}");
        }
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(tick_step(2.0, 8.0), 0.5));
        assert!(close(tick_step(38.0, 8.0), 5.0));
        assert!(close(tick_step(0.3, 8.0), 0.05));
        assert_eq!(decimals(0.05), 2);
        assert_eq!(decimals(5.0), 0);
    }

    #[test]
    fn empty_history_still_draws() {
        let mut h = history();
        h.attempts.clear();
        h.finish_ms = h.submit_ms;
        let svg = render_svg(&h);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<rect class=\"phase").count(), 0);
    }

    #[test]
    fn short_names() {
        assert_eq!(short_task("task_1700000000000_0001_m_000003"), "m_000003");
        assert_eq!(attempt_number("attempt_1_0001_m_000003_2"), "2");
        assert_eq!(escape("a<b>&'\""), "a&lt;b&gt;&amp;&apos;&quot;");
    }
}
