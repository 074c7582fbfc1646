//! Job pages, Hadoop's JobHistoryServer paths served on the ResourceManager's web
//! port (whoever starts the ResourceManager mounts [`history_router`]): each finished
//! job's history record read from the DFS (`mapreduce.jobhistory.done-dir`).
//!
//! - `/jobhistory`: the jobs, newest first.
//! - `/jobhistory/job/<job_id>`: the job's summary, its Gantt chart (the SVG `tusk job
//!   gantt` draws), counters, every task attempt with its phases, node and the node's
//!   status at launch, and the speculation decisions.
//! - `/jobhistory/job/<job_id>/gantt.svg`: the chart alone.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tusk_client::DfsClient;
use tusk_common::metrics::human_bytes;
use tusk_http::page::{self, escape, url_encode, Column, Page};

use crate::history::{history_job_id, read_history, JobHistory};

/// How many records the list reads at most (the newest by modification time).
const LIST_LIMIT: usize = 200;

/// Where the pages read job history, and the navigation of the daemon they join.
pub struct HistoryWeb {
    pub dfs: DfsClient,
    /// `mapreduce.jobhistory.done-dir`.
    pub dir: String,
    /// The header links of the pages they sit among (the ResourceManager's).
    pub nav: &'static [(&'static str, &'static str)],
    /// `ResourceManager`: the header's daemon name.
    pub daemon: &'static str,
}

/// The job pages as a router to merge into a daemon's.
pub fn history_router(web: HistoryWeb) -> Router {
    let web = Arc::new(web);
    let list_web = web.clone();
    let job_web = web.clone();
    let svg_web = web;
    Router::new()
        .route(
            "/jobhistory",
            get(move || async move { list_page(&list_web).await }),
        )
        .route(
            "/jobhistory/job/{job_id}",
            get(move |Path(job_id): Path<String>| async move { job_page(&job_web, &job_id).await }),
        )
        .route(
            "/jobhistory/job/{job_id}/gantt.svg",
            get(move |Path(job_id): Path<String>| async move {
                match read_history(&svg_web.dfs, &svg_web.dir, &job_id).await {
                    Ok(Some(h)) => (
                        [(header::CONTENT_TYPE, "image/svg+xml")],
                        crate::gantt::render_svg(&h),
                    )
                        .into_response(),
                    Ok(None) => {
                        (StatusCode::NOT_FOUND, format!("no history for {job_id}")).into_response()
                    }
                    Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
                }
            }),
        )
}

impl HistoryWeb {
    fn page<'a>(&'a self, title: &'a str) -> Page<'a> {
        Page {
            daemon: self.daemon,
            title,
            nav: self.nav,
            refresh_secs: 0,
        }
    }
}

async fn list_page(web: &HistoryWeb) -> Response {
    let mut entries = match web.dfs.list(&web.dir).await {
        Ok(entries) => entries,
        Err(e) if e.is_not_found() => Vec::new(),
        Err(e) => {
            let body = format!(
                "<p>Cannot list <code>{}</code>: {}</p>",
                escape(&web.dir),
                escape(&e.to_string())
            );
            return web.page("Job history").render(&body).into_response();
        }
    };
    entries.sort_by_key(|e| std::cmp::Reverse(e.modification_time));
    let mut rows = Vec::new();
    for e in entries.iter().take(LIST_LIMIT) {
        let Some(job_id) = history_job_id(&e.path) else {
            continue;
        };
        let Ok(Some(h)) = read_history(&web.dfs, &web.dir, job_id).await else {
            continue;
        };
        rows.push(vec![
            format!(
                "<a href=\"/jobhistory/job/{}\">{}</a>",
                url_encode(&h.job_id),
                escape(&h.job_id)
            ),
            escape(&h.name),
            escape(&h.user),
            state_tag(&h),
            escape(&page::utc_time(h.submit_ms)),
            page::age(h.finish_ms.saturating_sub(h.submit_ms)),
            h.maps.to_string(),
            h.reduces.to_string(),
            h.attempts.len().to_string(),
        ]);
    }
    let body = format!(
        "<p class=\"muted\">History records in <code>{}</code> (the newest {LIST_LIMIT}).</p>{}",
        escape(&web.dir),
        page::table(
            &[
                Column("Job", false),
                Column("Name", false),
                Column("User", false),
                Column("State", false),
                Column("Submitted", false),
                Column("Elapsed", true),
                Column("Maps", true),
                Column("Reduces", true),
                Column("Attempts", true),
            ],
            &rows
        )
    );
    web.page("Job history").render(&body).into_response()
}

fn state_tag(h: &JobHistory) -> String {
    let name = format!("{:?}", h.state).to_uppercase();
    let class = match h.state {
        crate::history::JobState::Succeeded => "ok",
        _ => "bad",
    };
    page::tag(&name, class)
}

async fn job_page(web: &HistoryWeb, job_id: &str) -> Response {
    match read_history(&web.dfs, &web.dir, job_id).await {
        Ok(Some(h)) => web.page(job_id).render(&job_body(&h)).into_response(),
        Ok(None) => {
            let body = format!(
                "<p>No history record for <code>{}</code> in <code>{}</code> yet: a job's record is written when it ends.</p>",
                escape(job_id),
                escape(&web.dir)
            );
            (StatusCode::NOT_FOUND, web.page(job_id).render(&body)).into_response()
        }
        Err(e) => {
            let body = format!(
                "<p>Cannot read the history of <code>{}</code>: {}</p>",
                escape(job_id),
                escape(&e.to_string())
            );
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                web.page(job_id).render(&body),
            )
                .into_response()
        }
    }
}

/// The job page's body: summary, Gantt chart, counters, attempts, speculation.
pub fn job_body(h: &JobHistory) -> String {
    let s = &h.speculation_summary;
    let summary = page::key_values(&[
        ("Name", escape(&h.name)),
        ("User", escape(&h.user)),
        ("State", state_tag(h)),
        ("Application", format!("<a href=\"/cluster/app/{}\">{}</a>", url_encode(&h.application_id), escape(&h.application_id))),
        ("Submitted", escape(&page::utc_time(h.submit_ms))),
        ("Started", escape(&page::utc_time(h.start_ms))),
        ("Finished", escape(&page::utc_time(h.finish_ms))),
        ("Elapsed", page::age(h.finish_ms.saturating_sub(h.submit_ms))),
        ("Maps / reduces", format!("{} / {}", h.maps, h.reduces)),
        ("Speculation", format!("{} backups launched, {} won, {} wasted; skipped {} on congested nodes, {} started late, {} at the cap", s.launched, s.won, s.wasted, s.skipped_congested, s.skipped_started_late, s.skipped_cap)),
        ("Diagnostics", escape(&h.diagnostics)),
    ]);
    let svg = crate::gantt::render_svg(h);
    format!(
        "{summary}<h2>Gantt chart</h2><div class=\"gantt\" id=\"gantt\">{svg}</div>\
         <p class=\"muted\"><a href=\"/jobhistory/job/{}/gantt.svg\">the chart alone (SVG)</a></p>\
         <h2>Tasks and attempts</h2>{}<h2>Counters</h2>{}{}",
        url_encode(&h.job_id),
        attempts_table(h),
        counters_table(h),
        speculation_table(h),
    )
}

fn attempts_table(h: &JobHistory) -> String {
    let mut attempts: Vec<_> = h.attempts.iter().collect();
    attempts.sort_by(|a, b| (&a.task, a.start_ms).cmp(&(&b.task, b.start_ms)));
    let rows: Vec<Vec<String>> = attempts
        .iter()
        .map(|a| {
            let mut phases = String::new();
            for p in &a.phases {
                let _ = write!(
                    phases,
                    "{} ",
                    page::tag(
                        &format!(
                            "{} {:.2} s",
                            format!("{:?}", p.phase).to_lowercase(),
                            p.end_ms.saturating_sub(p.start_ms) as f64 / 1000.0
                        ),
                        ""
                    )
                );
            }
            let outcome = format!("{:?}", a.outcome).to_uppercase();
            let outcome_class = match outcome.as_str() {
                "SUCCEEDED" => "ok",
                "KILLED" => "warn",
                _ => "bad",
            };
            let mut flags = Vec::new();
            if a.speculative {
                flags.push(page::tag("speculative", "warn"));
            }
            if a.data_local {
                flags.push(page::tag("data-local", ""));
            }
            vec![
                page::breakable_id(&a.attempt),
                escape(&a.task_type),
                escape(&a.node),
                format!(
                    "{:.2} s",
                    a.start_ms.saturating_sub(h.start_ms) as f64 / 1000.0
                ),
                format!(
                    "{:.2} s",
                    a.end_ms.saturating_sub(a.start_ms) as f64 / 1000.0
                ),
                page::tag(&outcome, outcome_class),
                phases,
                flags.join(" "),
                human_bytes(a.bytes_read as f64),
                human_bytes(a.bytes_written as f64),
                human_bytes(a.bytes_shuffled as f64),
                a.node_status_at_launch
                    .map(|s| escape(&s.summary()))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    page::table(
        &[
            Column("Attempt", false),
            Column("Type", false),
            Column("Node", false),
            Column("Start", true),
            Column("Duration", true),
            Column("Outcome", false),
            Column("Phases", false),
            Column("", false),
            Column("Read", true),
            Column("Written", true),
            Column("Shuffled", true),
            Column("Node at launch", false),
        ],
        &rows,
    )
}

fn counters_table(h: &JobHistory) -> String {
    let mut groups: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
    for (name, value) in h.counters.iter() {
        // Hadoop's groups for the built-in counters; a user counter names its own.
        let (group, counter) = match name.rsplit_once('.') {
            Some(split) => split,
            None if name.starts_with("HDFS_") || name.starts_with("FILE_") => {
                ("File System Counters", name)
            }
            None if crate::history::is_job_counter(name) => ("Job Counters", name),
            None => ("Map-Reduce Framework", name),
        };
        groups.entry(group).or_default().push((counter, value));
    }
    let rows: Vec<Vec<String>> = groups
        .into_iter()
        .flat_map(|(group, counters)| {
            counters
                .into_iter()
                .map(move |(c, v)| vec![escape(group), escape(c), v.to_string()])
        })
        .collect();
    page::table(
        &[
            Column("Group", false),
            Column("Counter", false),
            Column("Value", true),
        ],
        &rows,
    )
}

fn speculation_table(h: &JobHistory) -> String {
    if h.speculation.is_empty() {
        return String::new();
    }
    let rows: Vec<Vec<String>> = h
        .speculation
        .iter()
        .map(|r| {
            vec![
                format!(
                    "{:.2} s",
                    r.at_ms.saturating_sub(h.start_ms) as f64 / 1000.0
                ),
                escape(&r.task),
                escape(
                    &serde_json::to_value(r.verdict)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default(),
                ),
                format!(
                    "{:.1} s of {:.1} s",
                    r.runtime_ms as f64 / 1000.0,
                    r.threshold_ms as f64 / 1000.0
                ),
                escape(&r.detail),
            ]
        })
        .collect();
    format!(
        "<h2>Speculation decisions</h2>{}",
        page::table(
            &[
                Column("At", true),
                Column("Task", false),
                Column("Verdict", false),
                Column("Ran", true),
                Column("Why", false)
            ],
            &rows
        )
    )
}
