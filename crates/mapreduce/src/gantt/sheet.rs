//! Several concurrent jobs on one sheet, drawn as Kawarasaki & Watanabe's Fig. 8: one row
//! per node and slot (attempts that overlap on a node take separate slots), bars split
//! into map, shuffle and sort+reduce, killed and failed attempts hatched in red,
//! speculative ones with a diamond. Each attempt wide enough carries its job's key (`J1`,
//! `J2`, …) as a coloured tab and as text (every bar's tooltip names it); a band on top shows each
//! job from submit to finish, and the legend names the jobs.
//!
//! Bars are `<g class="attempt" data-job="job_…" data-attempt="attempt_…">` holding
//! `<rect class="phase map|shuffle|sort-reduce">` (or one `<rect class="bare">` for an
//! attempt that reported no phases), so a reader can count bars per job.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::history::{AttemptRecord, JobHistory};
use crate::task::Phase;

use super::{
    diamond, escape, legend_diamond, legend_key, open_svg, outcome_name, outcome_overlay,
    time_axis, TimeAxis, FAILED_RED,
};

const LABEL_W: f64 = 150.0;
const PLOT_W: f64 = 1150.0;
const RIGHT_PAD: f64 = 30.0;
const TITLE_H: f64 = 46.0;
/// One lane per job in the band on top.
const JOB_LANE_H: f64 = 14.0;
const ROW_H: f64 = 18.0;
const BAR_H: f64 = 14.0;
/// Space between two nodes' groups of rows.
const NODE_GAP: f64 = 6.0;
const AXIS_H: f64 = 42.0;
const LEGEND_LINE_H: f64 = 20.0;

/// Job keys' colours: dark and saturated, apart from the phase fills and from red.
const JOB_COLORS: [&str; 8] = [
    "#000000", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#9467bd", "#1a5e1a",
];

/// The three phases of the study's chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SheetPhase {
    Map,
    Shuffle,
    SortReduce,
}

impl SheetPhase {
    /// A map attempt's final merge is part of its map bar; a reduce's merge joins its
    /// reduce, as in the study.
    fn of(task_type: &str, phase: Phase) -> SheetPhase {
        match (task_type, phase) {
            ("MAP", _) | (_, Phase::Map) => SheetPhase::Map,
            (_, Phase::Shuffle) => SheetPhase::Shuffle,
            (_, Phase::Sort | Phase::Reduce) => SheetPhase::SortReduce,
        }
    }

    fn class(self) -> &'static str {
        match self {
            SheetPhase::Map => "map",
            SheetPhase::Shuffle => "shuffle",
            SheetPhase::SortReduce => "sort-reduce",
        }
    }

    fn label(self) -> &'static str {
        match self {
            SheetPhase::Map => "map",
            SheetPhase::Shuffle => "shuffle",
            SheetPhase::SortReduce => "sort+reduce",
        }
    }

    fn color(self) -> &'static str {
        match self {
            SheetPhase::Map => "#4e79a7",
            SheetPhase::Shuffle => "#f28e2b",
            SheetPhase::SortReduce => "#59a14f",
        }
    }

    /// Text on this fill.
    fn ink(self) -> &'static str {
        match self {
            SheetPhase::Shuffle => "#222",
            _ => "#fff",
        }
    }
}

/// One attempt placed on the sheet.
struct Bar<'a> {
    job: usize,
    attempt: &'a AttemptRecord,
    row: usize,
}

/// One node's rows.
struct NodeRows {
    node: String,
    first_row: usize,
    slots: usize,
}

/// The SVG text of a chart of every attempt of `jobs` by node and slot.
pub fn render_jobs_svg(jobs: &[JobHistory]) -> String {
    let sheet = Sheet::new(jobs);
    let mut svg = String::new();
    sheet.open(&mut svg);
    sheet.title(&mut svg);
    sheet.node_bands(&mut svg);
    sheet.grid(&mut svg);
    sheet.job_band(&mut svg);
    for bar in &sheet.bars {
        sheet.bar(&mut svg, bar);
    }
    sheet.legend(&mut svg);
    svg.push_str("</svg>\n");
    svg
}

struct Sheet<'a> {
    jobs: &'a [JobHistory],
    bars: Vec<Bar<'a>>,
    nodes: Vec<NodeRows>,
    origin_ms: u64,
    span_ms: u64,
}

/// Slots on one node: each attempt takes the first slot free at its start.
fn assign_slots(attempts: &mut [(usize, &AttemptRecord)]) -> Vec<usize> {
    attempts.sort_by_key(|(job, a)| (a.start_ms, a.end_ms, *job));
    let mut slot_ends: Vec<u64> = vec![];
    attempts
        .iter()
        .map(
            |(_, a)| match slot_ends.iter().position(|end| *end <= a.start_ms) {
                Some(slot) => {
                    slot_ends[slot] = a.end_ms.max(a.start_ms);
                    slot
                }
                None => {
                    slot_ends.push(a.end_ms.max(a.start_ms));
                    slot_ends.len() - 1
                }
            },
        )
        .collect()
}

impl<'a> Sheet<'a> {
    fn new(jobs: &'a [JobHistory]) -> Self {
        let mut by_node: BTreeMap<&str, Vec<(usize, &AttemptRecord)>> = BTreeMap::new();
        for (j, h) in jobs.iter().enumerate() {
            for a in &h.attempts {
                let node = if a.node.is_empty() { "?" } else { &a.node };
                by_node.entry(node).or_default().push((j, a));
            }
        }
        let (mut bars, mut nodes, mut next_row) = (vec![], vec![], 0);
        for (node, mut attempts) in by_node {
            let slots = assign_slots(&mut attempts);
            let count = slots.iter().max().map_or(0, |s| s + 1);
            for ((job, attempt), slot) in attempts.into_iter().zip(slots) {
                bars.push(Bar {
                    job,
                    attempt,
                    row: next_row + slot,
                });
            }
            nodes.push(NodeRows {
                node: node.to_string(),
                first_row: next_row,
                slots: count,
            });
            next_row += count;
        }
        let origin_ms = jobs.iter().map(|h| h.submit_ms).min().unwrap_or(0);
        let end_ms = jobs
            .iter()
            .map(|h| h.finish_ms)
            .chain(bars.iter().map(|b| b.attempt.end_ms))
            .max()
            .unwrap_or(origin_ms);
        Sheet {
            jobs,
            bars,
            nodes,
            origin_ms,
            span_ms: end_ms.saturating_sub(origin_ms).max(1),
        }
    }

    fn rows(&self) -> usize {
        self.nodes.iter().map(|n| n.slots).sum()
    }

    fn job_band_top(&self) -> f64 {
        TITLE_H
    }

    fn rows_top(&self) -> f64 {
        self.job_band_top() + self.jobs.len() as f64 * JOB_LANE_H + 10.0
    }

    /// The top of a row: rows of later nodes sit below the gaps between groups.
    fn row_y(&self, row: usize) -> f64 {
        let groups_before = self
            .nodes
            .iter()
            .filter(|n| n.first_row <= row)
            .count()
            .saturating_sub(1);
        self.rows_top() + row as f64 * ROW_H + groups_before as f64 * NODE_GAP
    }

    fn rows_bottom(&self) -> f64 {
        self.rows_top()
            + self.rows() as f64 * ROW_H
            + self.nodes.len().saturating_sub(1) as f64 * NODE_GAP
    }

    fn legend_lines(&self) -> usize {
        1 + self.jobs.len().div_ceil(2)
    }

    fn width(&self) -> f64 {
        LABEL_W + PLOT_W + RIGHT_PAD
    }

    fn height(&self) -> f64 {
        self.rows_bottom() + AXIS_H + self.legend_lines() as f64 * LEGEND_LINE_H + 10.0
    }

    fn x(&self, ms: u64) -> f64 {
        LABEL_W + ms.saturating_sub(self.origin_ms) as f64 / self.span_ms as f64 * PLOT_W
    }

    fn seconds(&self, ms: u64) -> f64 {
        ms.saturating_sub(self.origin_ms) as f64 / 1000.0
    }

    fn width_between(&self, start_ms: u64, end_ms: u64) -> f64 {
        (self.x(end_ms.max(start_ms)) - self.x(start_ms)).max(1.5)
    }

    fn open(&self, svg: &mut String) {
        open_svg(svg, self.width(), self.height());
    }

    fn title(&self, svg: &mut String) {
        let attempts: usize = self.jobs.iter().map(|h| h.attempts.len()).sum();
        let _ = writeln!(
            svg,
            r#"<text class="title" x="10" y="20" font-size="15" font-weight="bold">{} jobs, {} attempts on {} nodes — {:.1} s</text>"#,
            self.jobs.len(),
            attempts,
            self.nodes.len(),
            self.span_ms as f64 / 1000.0
        );
        let _ = writeln!(
            svg,
            r##"<text class="subtitle" x="10" y="37" fill="#555">one row per node and slot; x = seconds since the first submit; hover a bar for its attempt</text>"##
        );
    }

    /// Alternate shading per node, and the node · slot labels.
    fn node_bands(&self, svg: &mut String) {
        let _ = writeln!(svg, r#"<g class="nodes">"#);
        for (i, n) in self.nodes.iter().enumerate() {
            let top = self.row_y(n.first_row);
            let height = n.slots as f64 * ROW_H;
            if i % 2 == 0 {
                let _ = writeln!(
                    svg,
                    r##"<rect class="node-band" x="4" y="{:.1}" width="{:.1}" height="{height:.1}" fill="#f3f3f3"/>"##,
                    top - 1.0,
                    LABEL_W + PLOT_W - 4.0
                );
            }
            for slot in 0..n.slots {
                let y = top + slot as f64 * ROW_H + ROW_H - 5.0;
                let label = if slot == 0 {
                    format!("{} · {}", n.node, slot + 1)
                } else {
                    format!("{}", slot + 1)
                };
                let weight = if slot == 0 {
                    r#" font-weight="bold""#
                } else {
                    ""
                };
                let _ = writeln!(
                    svg,
                    r#"<text class="label" x="{:.1}" y="{y:.1}" text-anchor="end"{weight}>{}</text>"#,
                    LABEL_W - 6.0,
                    escape(&label)
                );
            }
        }
        svg.push_str("</g>\n");
    }

    fn grid(&self, svg: &mut String) {
        time_axis(
            svg,
            &TimeAxis {
                left: LABEL_W,
                width: PLOT_W,
                span_s: self.span_ms as f64 / 1000.0,
                top: self.job_band_top() - 2.0,
                bottom: self.rows_bottom() + 4.0,
                ticks: 12.0,
                caption: "time (s) since the first job was submitted",
            },
        );
    }

    /// Each job from submit to finish, one thin lane a job.
    fn job_band(&self, svg: &mut String) {
        let _ = writeln!(svg, r#"<g class="jobs">"#);
        for (j, h) in self.jobs.iter().enumerate() {
            let y = self.job_band_top() + j as f64 * JOB_LANE_H;
            let color = job_color(j);
            let _ = writeln!(
                svg,
                r#"<text class="job-key" x="{:.1}" y="{:.1}" text-anchor="end" fill="{color}" font-weight="bold">J{} {}</text>"#,
                LABEL_W - 6.0,
                y + JOB_LANE_H - 3.0,
                j + 1,
                escape(&short_job(&h.job_id))
            );
            let _ = writeln!(
                svg,
                r#"<rect class="job-span" data-job="{}" x="{:.2}" y="{:.1}" width="{:.2}" height="6" fill="{color}"><title>{} {} submitted {:.3} s, finished {:.3} s ({:.3} s)</title></rect>"#,
                escape(&h.job_id),
                self.x(h.submit_ms),
                y + 4.0,
                self.width_between(h.submit_ms, h.finish_ms),
                escape(&h.job_id),
                escape(&h.name),
                self.seconds(h.submit_ms),
                self.seconds(h.finish_ms),
                h.finish_ms.saturating_sub(h.submit_ms) as f64 / 1000.0
            );
        }
        svg.push_str("</g>\n");
    }

    /// The attempt's phases, merged where two neighbours share a sheet phase.
    fn segments(a: &AttemptRecord) -> Vec<(SheetPhase, u64, u64)> {
        let mut out: Vec<(SheetPhase, u64, u64)> = vec![];
        for p in &a.phases {
            let phase = SheetPhase::of(&a.task_type, p.phase);
            match out.last_mut() {
                Some(last) if last.0 == phase && p.start_ms <= last.2 + 1 => {
                    last.2 = last.2.max(p.end_ms)
                }
                _ => out.push((phase, p.start_ms, p.end_ms)),
            }
        }
        out
    }

    fn bar(&self, svg: &mut String, bar: &Bar) {
        let a = bar.attempt;
        let h = &self.jobs[bar.job];
        let y = self.row_y(bar.row) + (ROW_H - BAR_H) / 2.0;
        let _ = writeln!(
            svg,
            r#"<g class="attempt {}" data-job="{}" data-attempt="{}"><title>{}</title>"#,
            outcome_name(a.outcome),
            escape(&h.job_id),
            escape(&a.attempt),
            escape(&self.tooltip(bar))
        );
        let segments = Self::segments(a);
        if segments.is_empty() {
            let _ = writeln!(
                svg,
                r##"<rect class="bare" x="{:.2}" y="{y:.1}" width="{:.2}" height="{BAR_H}" fill="#bab0ac"/>"##,
                self.x(a.start_ms),
                self.width_between(a.start_ms, a.end_ms)
            );
        }
        for (phase, start, end) in &segments {
            let _ = writeln!(
                svg,
                r#"<rect class="phase {}" x="{:.2}" y="{y:.1}" width="{:.2}" height="{BAR_H}" fill="{}"/>"#,
                phase.class(),
                self.x(*start),
                self.width_between(*start, *end),
                phase.color()
            );
        }
        let (x0, width) = (self.x(a.start_ms), self.width_between(a.start_ms, a.end_ms));
        outcome_overlay(svg, a.outcome, (x0, y, width, BAR_H), "");
        // On a bar too short for it, the tab would hide the phase colour.
        if width >= 8.0 {
            let _ = writeln!(
                svg,
                r#"<rect class="job-tab" x="{x0:.2}" y="{y:.1}" width="4" height="{BAR_H}" fill="{}"/>"#,
                job_color(bar.job)
            );
        }
        let key = format!("J{}", bar.job + 1);
        if width >= 8.0 + 7.0 * key.len() as f64 {
            let ink = segments.first().map_or("#222", |s| s.0.ink());
            let _ = writeln!(
                svg,
                r#"<text class="job-label" x="{:.1}" y="{:.1}" font-size="9" font-weight="bold" fill="{ink}">{key}</text>"#,
                x0 + 5.0,
                y + BAR_H - 4.0
            );
        }
        if a.speculative {
            let _ = writeln!(svg, "{}", diamond(x0 + width + 6.0, y + BAR_H / 2.0));
        }
        svg.push_str("</g>\n");
    }

    fn tooltip(&self, bar: &Bar) -> String {
        let a = bar.attempt;
        let mut t = format!(
            "J{} {} on {}: {} {:.3}–{:.3} s ({:.3} s)",
            bar.job + 1,
            a.attempt,
            a.node,
            outcome_name(a.outcome),
            self.seconds(a.start_ms),
            self.seconds(a.end_ms),
            a.end_ms.saturating_sub(a.start_ms) as f64 / 1000.0
        );
        for (phase, start, end) in Self::segments(a) {
            let _ = write!(
                t,
                "; {} {:.3} s",
                phase.label(),
                end.saturating_sub(start) as f64 / 1000.0
            );
        }
        if a.speculative {
            t.push_str("; speculative");
        }
        if let Some(s) = &a.node_status_at_launch {
            let _ = write!(t, "; node at launch: {}", s.summary());
        }
        if let Some(e) = &a.error {
            let _ = write!(t, "; {e}");
        }
        t
    }

    fn legend(&self, svg: &mut String) {
        let mut y = self.rows_bottom() + AXIS_H + 6.0;
        let mut x = LABEL_W;
        let _ = writeln!(svg, r#"<g class="legend">"#);
        for phase in [SheetPhase::Map, SheetPhase::Shuffle, SheetPhase::SortReduce] {
            let fill = format!(r#"fill="{}""#, phase.color());
            legend_key(svg, (x, y, BAR_H), &fill, phase.label());
            x += 115.0;
        }
        legend_key(
            svg,
            (x, y, BAR_H),
            &format!(
                r#"fill="url(#hatch)" stroke="{FAILED_RED}" stroke-width="1.5" stroke-dasharray="3,2""#
            ),
            "killed (dashed) / failed (solid)",
        );
        x += 230.0;
        legend_diamond(svg, (x, y, BAR_H), "speculative backup");
        for (j, h) in self.jobs.iter().enumerate() {
            if j % 2 == 0 {
                y += LEGEND_LINE_H;
            }
            let x = LABEL_W + (j % 2) as f64 * (PLOT_W / 2.0);
            let state = format!("{:?}", h.state).to_lowercase();
            let s = &h.speculation_summary;
            let label = format!(
                "J{} {} {} — {state}, {:.1} s, {} maps, {} reduces, backups {} ({} wasted)",
                j + 1,
                h.job_id,
                h.name,
                h.finish_ms.saturating_sub(h.submit_ms) as f64 / 1000.0,
                h.maps,
                h.reduces,
                s.launched,
                s.wasted
            );
            let fill = format!(r#"fill="{}""#, job_color(j));
            legend_key(svg, (x, y, BAR_H), &fill, &label);
        }
        svg.push_str("</g>\n");
    }
}

fn job_color(job: usize) -> &'static str {
    JOB_COLORS[job % JOB_COLORS.len()]
}

/// `…_0007` out of `job_<ts>_0007`: the part that tells concurrent jobs apart.
fn short_job(job_id: &str) -> String {
    match job_id.rsplit_once('_') {
        Some((_, seq)) => format!("…{seq}"),
        None => job_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;
    use crate::counters::Counters;
    use crate::history::JobState;
    use crate::task::{Outcome, PhaseTiming};

    fn attempt(
        job: u32,
        id: &str,
        node: &str,
        phases: &[(Phase, u64, u64)],
        outcome: Outcome,
    ) -> AttemptRecord {
        let attempt = format!("attempt_1700000000000_{job:04}_{id}");
        let task = attempt
            .rsplit_once('_')
            .unwrap()
            .0
            .replacen("attempt", "task", 1);
        let phases: Vec<PhaseTiming> = phases
            .iter()
            .map(|(phase, start_ms, end_ms)| PhaseTiming {
                phase: *phase,
                start_ms: *start_ms,
                end_ms: *end_ms,
            })
            .collect();
        let kind = if id.starts_with('m') { "MAP" } else { "REDUCE" };
        AttemptRecord {
            task,
            attempt,
            node: node.into(),
            start_ms: phases.first().map_or(5_000, |p| p.start_ms),
            end_ms: phases.last().map_or(5_500, |p| p.end_ms),
            phases,
            speculative: id.ends_with("_1"),
            data_local: true,
            ..AttemptRecord::new(kind, outcome)
        }
    }

    fn job(seq: u32, submit_ms: u64, attempts: Vec<AttemptRecord>) -> JobHistory {
        JobHistory {
            job_id: format!("job_1700000000000_{seq:04}"),
            application_id: String::new(),
            name: format!("sort <{seq}>"),
            user: "tusk".into(),
            submit_ms,
            start_ms: submit_ms,
            finish_ms: attempts.iter().map(|a| a.end_ms).max().unwrap_or(submit_ms),
            state: JobState::Succeeded,
            maps: 2,
            reduces: 1,
            counters: Counters::default(),
            attempts,
            diagnostics: String::new(),
            speculation: vec![],
            speculation_summary: Default::default(),
        }
    }

    fn jobs() -> Vec<JobHistory> {
        use Phase::*;
        let first = job(
            1,
            1_000,
            vec![
                attempt(
                    1,
                    "m_000000_0",
                    "n1:1",
                    &[(Map, 1_100, 4_000), (Sort, 4_000, 4_200)],
                    Outcome::Succeeded,
                ),
                attempt(
                    1,
                    "m_000001_0",
                    "n2:1",
                    &[(Map, 1_100, 9_000)],
                    Outcome::Killed,
                ),
                attempt(
                    1,
                    "m_000001_1",
                    "n1:1",
                    &[(Map, 4_300, 6_000), (Sort, 6_000, 6_100)],
                    Outcome::Succeeded,
                ),
                attempt(
                    1,
                    "r_000000_0",
                    "n2:1",
                    &[
                        (Shuffle, 2_000, 6_500),
                        (Sort, 6_500, 6_700),
                        (Reduce, 6_700, 8_000),
                    ],
                    Outcome::Succeeded,
                ),
            ],
        );
        let second = job(
            2,
            3_000,
            vec![
                attempt(
                    2,
                    "m_000000_0",
                    "n1:1",
                    &[(Map, 3_100, 5_000)],
                    Outcome::Succeeded,
                ),
                attempt(2, "m_000001_0", "n3:1", &[], Outcome::Failed),
                attempt(
                    2,
                    "m_000001_1",
                    "n3:1",
                    &[(Map, 5_600, 7_000)],
                    Outcome::Succeeded,
                ),
                attempt(
                    2,
                    "r_000000_0",
                    "n2:1",
                    &[
                        (Shuffle, 3_500, 7_100),
                        (Sort, 7_100, 7_200),
                        (Reduce, 7_200, 9_500),
                    ],
                    Outcome::Succeeded,
                ),
            ],
        );
        vec![first, second]
    }

    /// Every attempt group of the parsed SVG: (job, attempt) → classes of its rects.
    fn bars(svg: &str) -> HashMap<(String, String), Vec<String>> {
        let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
        doc.descendants()
            .filter(|n| {
                n.has_tag_name("g")
                    && n.attribute("class")
                        .is_some_and(|c| c.split(' ').any(|c| c == "attempt"))
            })
            .map(|g| {
                let key = (
                    g.attribute("data-job").unwrap().to_string(),
                    g.attribute("data-attempt").unwrap().to_string(),
                );
                let rects = g
                    .children()
                    .filter(|n| n.has_tag_name("rect"))
                    .map(|r| r.attribute("class").unwrap_or("").to_string())
                    .collect();
                (key, rects)
            })
            .collect()
    }

    #[test]
    fn every_attempt_of_every_job_has_a_bar() {
        let jobs = jobs();
        let svg = render_jobs_svg(&jobs);
        let bars = bars(&svg);
        let expected: HashSet<(String, String)> = jobs
            .iter()
            .flat_map(|h| {
                h.attempts
                    .iter()
                    .map(|a| (h.job_id.clone(), a.attempt.clone()))
            })
            .collect();
        assert_eq!(bars.keys().cloned().collect::<HashSet<_>>(), expected);
        let classes = |job: &str, attempt: &str| {
            bars[&(
                format!("job_1700000000000_{job}"),
                format!("attempt_1700000000000_{job}_{attempt}"),
            )]
                .clone()
        };
        // A map's merge joins its map bar; a reduce has shuffle then sort+reduce.
        assert_eq!(classes("0001", "m_000000_0"), ["phase map", "job-tab"]);
        assert_eq!(
            classes("0001", "r_000000_0"),
            ["phase shuffle", "phase sort-reduce", "job-tab"]
        );
        assert_eq!(
            classes("0001", "m_000001_0"),
            ["phase map", "killed", "job-tab"]
        );
        assert_eq!(classes("0002", "m_000001_0"), ["bare", "failed", "job-tab"]);
    }

    #[test]
    fn overlapping_attempts_on_a_node_take_separate_slots() {
        let jobs = jobs();
        let sheet = Sheet::new(&jobs);
        let names: Vec<(&str, usize)> = sheet
            .nodes
            .iter()
            .map(|n| (n.node.as_str(), n.slots))
            .collect();
        // n1: J1 m0 (1.1–4.2) and J2 m0 (3.1–5.0) overlap, J1's backup (4.3–6.1) reuses
        // the first slot. n2: J1 m1, J1 r0 and J2 r0 all overlap. n3: one after another.
        assert_eq!(names, [("n1:1", 2), ("n2:1", 3), ("n3:1", 1)]);
        for n in &sheet.nodes {
            let mut on_node: Vec<&Bar> = sheet
                .bars
                .iter()
                .filter(|b| (n.first_row..n.first_row + n.slots).contains(&b.row))
                .collect();
            on_node.sort_by_key(|b| (b.row, b.attempt.start_ms));
            for pair in on_node.windows(2) {
                if pair[0].row == pair[1].row {
                    assert!(pair[0].attempt.end_ms <= pair[1].attempt.start_ms);
                }
            }
        }
    }

    #[test]
    fn jobs_are_keyed_labelled_and_escaped() {
        let svg = render_jobs_svg(&jobs());
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let spans: Vec<&str> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("job-span"))
            .map(|n| n.attribute("data-job").unwrap())
            .collect();
        assert_eq!(spans, ["job_1700000000000_0001", "job_1700000000000_0002"]);
        let text: String = doc
            .descendants()
            .filter(|n| n.is_text())
            .map(|n| n.text().unwrap())
            .collect::<Vec<_>>()
            .join("|");
        for needle in [
            "J1",
            "J2",
            "sort <2>",
            "map",
            "shuffle",
            "sort+reduce",
            "speculative backup",
            "time (s) since the first job was submitted",
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
        // Two speculative attempts, one legend diamond.
        assert_eq!(svg.matches(r#"<polygon class="speculative""#).count(), 3);
    }

    #[test]
    fn no_jobs_still_draw() {
        let svg = render_jobs_svg(&[]);
        assert!(roxmltree::Document::parse(&svg).is_ok());
    }
}
