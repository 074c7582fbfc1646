//! What every daemon's web server answers besides its own pages: `/metrics`
//! (Prometheus), `/jmx` (Hadoop's JSON beans, `?qry=`), `/conf` (the effective
//! configuration), `/logLevel` (the log filter, changeable at run time), `/stacks` (the
//! async runtime's tasks, the process's threads and the daemon's background loops) and
//! `/status` (JSON). A daemon describes itself in a [`DaemonWeb`] and merges
//! [`router`] into its own.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::Query;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};
use tusk_common::metrics::BeanValue;
use tusk_common::{Configuration, Metrics};

use crate::page::{self, escape, Column, Page};

/// Routes a daemon serves that live in a crate it does not depend on, handed in by
/// whoever starts it (the ResourceManager's job pages, from `tusk-mapreduce`).
#[derive(Clone, Debug, Default)]
pub struct ExtraRoutes(pub Option<Router>);

impl PartialEq for ExtraRoutes {
    /// Routers cannot be compared; two sets are alike when both are absent or present.
    fn eq(&self, other: &Self) -> bool {
        self.0.is_some() == other.0.is_some()
    }
}

/// The configuration a daemon was started with, kept in its options for `/conf`.
#[derive(Clone, Debug, Default)]
pub struct EffectiveConf(pub Arc<Configuration>);

impl EffectiveConf {
    pub fn new(conf: &Configuration) -> Self {
        EffectiveConf(Arc::new(conf.clone()))
    }
}

impl PartialEq for EffectiveConf {
    /// The same keys with the same values.
    fn eq(&self, other: &Self) -> bool {
        self.0.iter().eq(other.0.iter())
    }
}

/// Builds a JSON document from the daemon's state at request time.
pub type JsonSource = Arc<dyn Fn() -> Value + Send + Sync>;

/// How one daemon describes itself to the shared routes.
#[derive(Clone)]
pub struct DaemonWeb {
    /// `NameNode`, `DataNode`, `ResourceManager`, `NodeManager` (Hadoop's `service=`).
    pub service: &'static str,
    /// The configuration the daemon was started with.
    pub conf: EffectiveConf,
    /// The daemon's registry.
    pub metrics: Metrics,
    /// The header links of the daemon's pages.
    pub nav: Vec<(&'static str, &'static str)>,
    /// `/status`.
    pub status: JsonSource,
    /// `/jmx`: a JSON array of beans, each with its `name`
    /// (`Hadoop:service=NameNode,name=FSNamesystem`).
    pub beans: JsonSource,
    /// The daemon's background loops, (name, what it does), for `/stacks`.
    pub loops: Vec<(&'static str, &'static str)>,
}

impl DaemonWeb {
    /// The layout of a page of this daemon.
    pub fn page<'a>(&'a self, title: &'a str, nav: &'a [(&'a str, &'a str)]) -> Page<'a> {
        Page {
            daemon: self.service,
            title,
            nav,
            refresh_secs: 0,
        }
    }
}

/// A daemon's header links: its own pages, given as `(href, label)` pairs, then those
/// of the shared routes [`router`] serves. A macro because constant slices cannot be
/// joined otherwise; each daemon keeps a `const NAV`.
#[macro_export]
macro_rules! daemon_nav {
    ($(($href:expr, $label:expr)),* $(,)?) => {
        &[
            $(($href, $label),)*
            ("/conf", "Configuration"),
            ("/logLevel", "Log level"),
            ("/stacks", "Stacks"),
            ("/metrics", "Metrics"),
            ("/jmx", "JMX"),
        ]
    };
}

/// `/metrics`, `/jmx`, `/conf`, `/logLevel`, `/stacks`, `/status`, `/favicon.ico`.
pub fn router(web: DaemonWeb) -> Router {
    let web = Arc::new(web);
    let w = |f: fn(&DaemonWeb, HashMap<String, String>, HeaderMap) -> Response| {
        let web = web.clone();
        get(
            move |Query(q): Query<HashMap<String, String>>, headers: HeaderMap| async move {
                f(&web, q, headers)
            },
        )
    };
    Router::new()
        .route("/metrics", w(metrics))
        .route("/prom", w(metrics))
        .route("/jmx", w(jmx))
        .route("/conf", w(conf))
        .route("/logLevel", w(log_level))
        .route("/stacks", w(stacks))
        .route("/status", w(status))
        .route("/favicon.ico", get(favicon))
}

/// The one icon every daemon serves, so no page costs a 404 in the browser's console.
async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        crate::page::FAVICON_SVG,
    )
        .into_response()
}

fn metrics(web: &DaemonWeb, _: HashMap<String, String>, _: HeaderMap) -> Response {
    (
        [(header::CONTENT_TYPE, tusk_common::metrics::CONTENT_TYPE)],
        web.metrics.encode(),
    )
        .into_response()
}

fn status(web: &DaemonWeb, _: HashMap<String, String>, _: HeaderMap) -> Response {
    axum::Json((web.status)()).into_response()
}

/// Hadoop's JMXJsonServlet: `{"beans":[...]}`; `qry=` keeps beans whose name matches
/// the pattern (`*` matches any run of characters, as in an ObjectName pattern's
/// values); `get=bean::attribute` keeps one attribute of one bean.
fn jmx(web: &DaemonWeb, q: HashMap<String, String>, _: HeaderMap) -> Response {
    let mut beans = match (web.beans)() {
        Value::Array(beans) => beans,
        other => vec![other],
    };
    beans.extend(web.metrics.beans().into_iter().map(|b| {
        let fields: serde_json::Map<String, Value> = b
            .attributes
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    BeanValue::Count(n) => json!(n),
                    BeanValue::Gauge(x) => json!(x),
                    BeanValue::Text(t) => json!(t),
                };
                (k, v)
            })
            .collect();
        bean(web.service, &b.name, Value::Object(fields))
    }));
    let name_of = |b: &Value| {
        b.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if let Some(get) = q.get("get") {
        let Some((bean, attribute)) = get.split_once("::") else {
            return jmx_error(format!("query format is not as expected: {get}"));
        };
        let found = beans.iter().find(|b| name_of(b) == bean).and_then(|b| {
            b.get(attribute)
                .map(|v| json!({"name": bean, attribute: v.clone()}))
        });
        return match found {
            Some(b) => axum::Json(json!({ "beans": [b] })).into_response(),
            None => jmx_error(format!("No such attribute {attribute} of bean {bean}")),
        };
    }
    let kept: Vec<Value> = match q.get("qry") {
        Some(pattern) => beans
            .into_iter()
            .filter(|b| object_name_matches(pattern, &name_of(b)))
            .collect(),
        None => beans,
    };
    axum::Json(json!({ "beans": kept })).into_response()
}

/// An error as Hadoop's JMX servlet writes it.
fn jmx_error(message: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"result": "ERROR", "message": message})),
    )
        .into_response()
}

/// Whether `name` matches an ObjectName pattern: the domain and each `key=value`
/// compare with `*` and `?` wildcards; a trailing `,*` (or a lone `*` as the key list)
/// allows further keys.
pub fn object_name_matches(pattern: &str, name: &str) -> bool {
    let (Some((pd, pk)), Some((nd, nk))) = (pattern.split_once(':'), name.split_once(':')) else {
        return glob(pattern, name);
    };
    if !glob(pd, nd) {
        return false;
    }
    let name_keys: Vec<(&str, &str)> = nk.split(',').filter_map(|kv| kv.split_once('=')).collect();
    let mut open = false;
    let mut wanted = 0;
    for part in pk.split(',') {
        if part == "*" {
            open = true;
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            return false;
        };
        wanted += 1;
        if !name_keys.iter().any(|(nk, nv)| *nk == k && glob(v, nv)) {
            return false;
        }
    }
    open || wanted == name_keys.len()
}

/// `*` matches any run, `?` one character.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether the caller is a browser (it asks for HTML before anything else).
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.starts_with("text/html"))
}

/// Hadoop's ConfServlet: XML by default, `format=json` as
/// `{"properties":[{"key","value","isFinal","resource"}]}`; a browser (or
/// `format=html`) gets a page.
fn conf(web: &DaemonWeb, q: HashMap<String, String>, headers: HeaderMap) -> Response {
    let format = q.get("format").map(String::as_str);
    let conf = &web.conf.0;
    // Where each value came from (file:line, -D, set by the program, Hadoop's default
    // built from another key, or the default the daemon read it with), as Hadoop's
    // ConfServlet names each property's resource.
    let source = |k: &str| {
        conf.source(k)
            .map_or_else(|| "default".to_string(), ToString::to_string)
    };
    // Every key the daemon has a value for: those set, those built from them, and the
    // defaults its options were read with.
    let defaults = conf.defaults_used();
    let mut entries: Vec<(&str, &str)> = conf.iter().chain(conf.derived()).collect();
    for (k, v) in &defaults {
        if conf.get(k).is_none() {
            entries.push((k, v));
        }
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    if let Some(name) = q.get("name") {
        entries.retain(|(k, _)| k == name);
        if entries.is_empty() {
            return (StatusCode::NOT_FOUND, format!("Property {name} not found")).into_response();
        }
    }
    match format {
        Some("json") => axum::Json(json!({
            "properties": entries.iter().map(|(k, v)| json!({
                "key": k, "value": v, "isFinal": conf.is_final(k), "resource": source(k),
            })).collect::<Vec<_>>()
        }))
        .into_response(),
        Some("xml") | None if format.is_some() || !wants_html(&headers) => {
            let mut xml = String::from(
                "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?><configuration>",
            );
            for (k, v) in &entries {
                let _ = write!(
                    xml,
                    "<property><name>{}</name><value>{}</value><final>{}</final><source>{}</source></property>",
                    escape(k),
                    escape(v),
                    conf.is_final(k),
                    escape(&source(k))
                );
            }
            xml.push_str("</configuration>");
            ([(header::CONTENT_TYPE, "text/xml; charset=utf-8")], xml).into_response()
        }
        Some("html") | None => {
            let rows: Vec<Vec<String>> = entries
                .iter()
                .map(|(k, v)| {
                    vec![
                        format!("<code>{}</code>", escape(k)),
                        escape(v),
                        escape(&source(k)),
                    ]
                })
                .collect();
            let body = format!(
                "<p class=\"muted\">Every key this daemon has a value for, and where the value came from: a configuration file (file:line), a <code>-D</code> override, what the process that started it chose, Hadoop's default built from another key, or the default it was read with. Also as <a href=\"/conf?format=xml\">XML</a> and <a href=\"/conf?format=json\">JSON</a>.</p>{}",
                page::table(
                    &[
                        Column("key", false),
                        Column("value", false),
                        Column("source", false),
                    ],
                    &rows
                )
            );
            web.page("Configuration", &web.nav)
                .render(&body)
                .into_response()
        }
        Some(other) => (
            StatusCode::BAD_REQUEST,
            format!("Bad format: {other} (xml, json or html)"),
        )
            .into_response(),
    }
}

/// Hadoop's LogLevel servlet: `?log=<target>&level=<LEVEL>` sets one target's level
/// (kept with the rest of the filter); `?filter=<spec>` replaces the whole filter.
fn log_level(web: &DaemonWeb, q: HashMap<String, String>, headers: HeaderMap) -> Response {
    use tusk_common::logging;
    let current = logging::log_filter();
    let wanted = match (q.get("filter"), q.get("log"), q.get("level")) {
        (Some(spec), _, _) => Some(spec.trim().to_string()),
        (None, Some(target), Some(level)) => Some(with_directive(
            current.as_deref().unwrap_or(""),
            target.trim(),
            &level.trim().to_ascii_lowercase(),
        )),
        // Hadoop's LogLevel servlet: a log name alone asks for its effective level.
        (None, Some(target), None) => {
            let target = target.trim();
            let level = effective_level(current.as_deref().unwrap_or(""), target);
            if !wants_html(&headers) {
                let body = json!({ "log": target, "effectiveLevel": level });
                return axum::Json(body).into_response();
            }
            let body = format!(
                "<p>Submitted Log Name: <b>{}</b><br>Effective Level: <b>{}</b></p><p><a href=\"/logLevel\">Back</a></p>",
                escape(target),
                escape(&level)
            );
            return web
                .page("Log level", &web.nav)
                .render(&body)
                .into_response();
        }
        (None, None, Some(_)) => {
            return (StatusCode::BAD_REQUEST, "level needs a log to set it for").into_response()
        }
        (None, None, None) => None,
    };
    let (outcome, status) = match wanted {
        None => (None, StatusCode::OK),
        Some(spec) => match logging::set_log_filter(&spec) {
            Ok(now) => (Some(format!("Filter set to {now}")), StatusCode::OK),
            Err(e) => (Some(e.to_string()), StatusCode::BAD_REQUEST),
        },
    };
    let now = logging::log_filter();
    if !wants_html(&headers) {
        let body = json!({ "filter": now, "message": outcome });
        return (status, axum::Json(body)).into_response();
    }
    let body = format!(
        "{}<p>Current filter: <code>{}</code></p>\
         <form class=\"inline\" method=\"get\" action=\"/logLevel\"><p>Replace the filter (<code>EnvFilter</code> syntax, e.g. <code>info,tusk_rpc=debug</code>): \
         <input type=\"text\" name=\"filter\" value=\"{}\"> <button>Set</button></p></form>\
         <form class=\"inline\" method=\"get\" action=\"/logLevel\"><p>Or one target: <input type=\"text\" name=\"log\" placeholder=\"tusk_namenode\" style=\"width:200px\"> \
         level <select name=\"level\"><option>ERROR</option><option>WARN</option><option selected>INFO</option><option>DEBUG</option><option>TRACE</option></select> <button>Set</button></p></form>",
        outcome
            .map(|m| format!("<p><b>{}</b></p>", escape(&m)))
            .unwrap_or_default(),
        escape(now.as_deref().unwrap_or("(logging not initialised by this process)")),
        escape(now.as_deref().unwrap_or("")),
    );
    (status, web.page("Log level", &web.nav).render(&body)).into_response()
}

/// The level a filter gives `target`: that of the directive for the longest module
/// path it lies under, else the filter's default (`OFF` with none), upper-cased as
/// Hadoop's levels are.
fn effective_level(filter: &str, target: &str) -> String {
    let mut best: Option<(usize, &str)> = None;
    let mut default = "off";
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        match directive.split_once('=') {
            Some((t, level)) => {
                let under = target == t || target.starts_with(&format!("{t}::"));
                if under && best.is_none_or(|(len, _)| t.len() > len) {
                    best = Some((t.len(), level));
                }
            }
            None if !directive.contains('[') => default = directive,
            None => {}
        }
    }
    best.map_or(default, |(_, level)| level)
        .to_ascii_uppercase()
}

/// `current` with `target=level` replacing any directive for `target`.
fn with_directive(current: &str, target: &str, level: &str) -> String {
    let mut parts: Vec<String> = current
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty() && d.split_once('=').map(|(t, _)| t) != Some(target))
        .map(String::from)
        .collect();
    parts.push(format!("{target}={level}"));
    parts.join(",")
}

/// The async runtime's figures, the process's threads (from `/proc/self/task`) and the
/// daemon's background loops: what a `jstack` would tell about a Java daemon.
fn stacks(web: &DaemonWeb, _: HashMap<String, String>, headers: HeaderMap) -> Response {
    let runtime = tokio::runtime::Handle::current().metrics();
    let threads = process_threads();
    if !wants_html(&headers) {
        let mut text = format!(
            "Process {} ({})\nTokio runtime: {} workers, {} alive tasks, {} tasks in the global queue\n\nBackground loops:\n",
            std::process::id(),
            web.service,
            runtime.num_workers(),
            runtime.num_alive_tasks(),
            runtime.global_queue_depth(),
        );
        for (name, what) in &web.loops {
            let _ = writeln!(text, "  {name}: {what}");
        }
        let _ = writeln!(text, "\nThreads ({}):", threads.len());
        for t in &threads {
            let _ = writeln!(
                text,
                "  {} \"{}\" state={} cpu={:.2}s",
                t.tid, t.name, t.state, t.cpu_secs
            );
        }
        return ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response();
    }
    let loops: Vec<Vec<String>> = web
        .loops
        .iter()
        .map(|(n, w)| vec![escape(n), escape(w)])
        .collect();
    let rows: Vec<Vec<String>> = threads
        .iter()
        .map(|t| {
            vec![
                t.tid.to_string(),
                escape(&t.name),
                escape(&t.state),
                format!("{:.2}", t.cpu_secs),
            ]
        })
        .collect();
    let body = format!(
        "{}<h2>Background loops</h2>{}<h2>Threads</h2>{}",
        page::cards(&[
            ("process", std::process::id().to_string(), ""),
            ("runtime workers", runtime.num_workers().to_string(), ""),
            ("alive tasks", runtime.num_alive_tasks().to_string(), ""),
            ("global queue", runtime.global_queue_depth().to_string(), ""),
            ("threads", threads.len().to_string(), ""),
        ]),
        page::table(
            &[Column("loop", false), Column("what it does", false)],
            &loops
        ),
        page::table(
            &[
                Column("tid", true),
                Column("name", false),
                Column("state", false),
                Column("cpu s", true)
            ],
            &rows
        ),
    );
    web.page("Stacks", &web.nav).render(&body).into_response()
}

struct ThreadInfo {
    tid: u32,
    name: String,
    state: String,
    cpu_secs: f64,
}

/// The process's threads with their names, states and CPU time.
fn process_threads() -> Vec<ThreadInfo> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut threads: Vec<ThreadInfo> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let tid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            parse_stat(tid, &stat)
        })
        .collect();
    threads.sort_by_key(|t| t.tid);
    threads
}

/// One line of `/proc/<pid>/task/<tid>/stat`: `tid (name) S ... utime stime ...`.
fn parse_stat(tid: u32, stat: &str) -> Option<ThreadInfo> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat[open + 1..close].to_string();
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let state = match *fields.first()? {
        "R" => "running",
        "S" => "sleeping",
        "D" => "disk wait",
        "Z" => "zombie",
        "T" | "t" => "stopped",
        other => other,
    }
    .to_string();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ThreadInfo {
        tid,
        name,
        state,
        cpu_secs: ticks as f64 / 100.0,
    })
}

/// YARN's web-services answer for something missing: 404 with Hadoop's
/// `{"RemoteException": {"exception": "NotFoundException", …}}`.
pub fn not_found(message: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({ "RemoteException": {
            "exception": "NotFoundException",
            "message": format!("java.lang.Exception: {message}"),
            "javaClassName": "org.apache.hadoop.yarn.webapp.NotFoundException",
        }})),
    )
        .into_response()
}

/// Hadoop's `Hadoop:service=<service>,name=<name>` bean with `fields` (a JSON object).
pub fn bean(service: &str, name: &str, fields: Value) -> Value {
    let mut bean = json!({
        "name": format!("Hadoop:service={service},name={name}"),
        "modelerType": name,
    });
    if let (Some(obj), Value::Object(extra)) = (bean.as_object_mut(), fields) {
        obj.extend(extra);
    }
    bean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_nav_puts_the_shared_routes_after_the_daemons_own() {
        const NAV: &[(&str, &str)] = crate::daemon_nav![("/", "Overview")];
        let hrefs: Vec<&str> = NAV.iter().map(|(href, _)| *href).collect();
        assert_eq!(
            hrefs,
            ["/", "/conf", "/logLevel", "/stacks", "/metrics", "/jmx"]
        );
    }

    #[test]
    fn object_name_patterns_match_as_jmx_does() {
        let n = "Hadoop:service=NameNode,name=FSNamesystem";
        assert!(object_name_matches(
            "Hadoop:service=NameNode,name=FSNamesystem",
            n
        ));
        assert!(object_name_matches("Hadoop:service=NameNode,name=*", n));
        assert!(object_name_matches("Hadoop:*", n));
        assert!(object_name_matches("*:service=NameNode,*", n));
        assert!(object_name_matches(
            "Hadoop:name=FSName*,service=NameNode",
            n
        ));
        assert!(!object_name_matches("Hadoop:service=NameNode", n));
        assert!(!object_name_matches("Hadoop:service=DataNode,name=*", n));
        assert!(!object_name_matches("java.lang:type=Memory", n));
    }

    #[test]
    fn a_target_directive_replaces_its_old_one() {
        assert_eq!(
            with_directive("warn,tusk_rpc=debug", "tusk_rpc", "trace"),
            "warn,tusk_rpc=trace"
        );
        assert_eq!(
            with_directive("", "tusk_namenode", "info"),
            "tusk_namenode=info"
        );
    }

    #[test]
    fn a_log_names_effective_level_is_its_longest_directive_or_the_default() {
        let filter = "info,tusk_rpc=debug,tusk_rpc::server=trace";
        assert_eq!(effective_level(filter, "tusk_namenode"), "INFO");
        assert_eq!(effective_level(filter, "tusk_rpc"), "DEBUG");
        assert_eq!(effective_level(filter, "tusk_rpc::client"), "DEBUG");
        assert_eq!(effective_level(filter, "tusk_rpc::server::conn"), "TRACE");
        assert_eq!(effective_level(filter, "tusk_rpcx"), "INFO");
        assert_eq!(effective_level("tusk_rpc=warn", "tusk_namenode"), "OFF");
    }

    #[test]
    fn thread_stat_lines_parse() {
        let t = parse_stat(
            42,
            "42 (tokio-runtime-w) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0",
        )
        .unwrap();
        assert_eq!(t.name, "tokio-runtime-w");
        assert_eq!(t.state, "sleeping");
        assert!((t.cpu_secs - 3.0).abs() < 1e-9);
    }

    #[test]
    fn beans_carry_hadoops_name() {
        let b = bean("NameNode", "FSNamesystem", json!({"FilesTotal": 3}));
        assert_eq!(b["name"], "Hadoop:service=NameNode,name=FSNamesystem");
        assert_eq!(b["FilesTotal"], 3);
    }
}
