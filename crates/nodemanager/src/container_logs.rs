//! Container logs on the NodeManager's web port, at Hadoop's paths: the page
//! `/node/containerlogs/<containerId>/<user>` lists a container's log files (stdout,
//! stderr, syslog, prelaunch.*, launch_container.sh, directory.info …) and
//! `/node/containerlogs/<containerId>/<user>/<file>` shows one; the REST API answers
//! `/ws/v1/node/containers/<containerId>/logs` (the files, as Hadoop's
//! `ContainerLogsInfo` list) and `/ws/v1/node/containerlogs/<containerId>/<file>` (the
//! file's bytes as text). Logs are the ones in `<log-dir>/<appId>/<containerId>` on this
//! node; with log aggregation on, a finished application's logs move to the DFS
//! (`log_aggregation`, read by `yarn logs -applicationId`) and are no longer here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::Path as UrlPath;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::json;
use tusk_http::daemon::not_found;
use tusk_http::page::{escape, Page};

use crate::Node;

const NAV: &[(&str, &str)] = &[("/node", "Node")];

pub(crate) fn router(node: &Arc<Node>) -> Router {
    let n = node.clone();
    let list_page = get(move |UrlPath((id, user)): UrlPath<(String, String)>| {
        let n = n.clone();
        async move { list_page(&n, &id, &user) }
    });
    let n = node.clone();
    let file_page = get(
        move |UrlPath((id, _user, file)): UrlPath<(String, String, String)>| {
            let n = n.clone();
            async move { file_page(&n, &id, &file) }
        },
    );
    let n = node.clone();
    let list_json = get(move |UrlPath(id): UrlPath<String>| {
        let n = n.clone();
        async move { list_json(&n, &id) }
    });
    let n = node.clone();
    let file_text = get(move |UrlPath((id, file)): UrlPath<(String, String)>| {
        let n = n.clone();
        async move { file_text(&n, &id, &file) }
    });
    Router::new()
        .route("/node/containerlogs/{id}/{user}", list_page)
        .route("/node/containerlogs/{id}/{user}/{file}", file_page)
        .route("/ws/v1/node/containers/{id}/logs", list_json)
        .route("/ws/v1/node/containerlogs/{id}/{file}", file_text)
}

/// `application_<ts>_<seq>` of `container_[e<epoch>_]<ts>_<seq>_<attempt>_<n>`.
fn application_of(container: &str) -> Option<String> {
    let mut parts = container.strip_prefix("container_")?.split('_').peekable();
    if parts.peek().is_some_and(|p| p.starts_with('e')) {
        parts.next();
    }
    let (ts, seq) = (parts.next()?, parts.next()?);
    Some(format!("application_{ts}_{seq}"))
}

/// The container's log dir on this node, if it has one.
fn log_dir(node: &Node, container: &str) -> Option<PathBuf> {
    let app = application_of(container)?;
    node.options
        .log_dirs
        .iter()
        .map(|d| d.join(&app).join(container))
        .find(|p| p.is_dir())
}

/// The log files of a container: (name, bytes, modified ms), by name.
fn files(dir: &Path) -> Vec<(String, u64, u64)> {
    let mut files: Vec<(String, u64, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            let modified = meta
                .modified()
                .ok()?
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_millis() as u64;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                meta.len(),
                modified,
            ))
        })
        .collect();
    files.sort();
    files
}

/// A log file of a container, refusing names that leave its log dir; else the
/// message of the NotFoundException to answer.
fn read_log(node: &Node, container: &str, file: &str) -> Result<Vec<u8>, String> {
    let missing = || format!("Cannot find this log on the local disk: {file}");
    if file.contains('/') || file == ".." || file == "." {
        return Err(missing());
    }
    let dir = log_dir(node, container)
        .ok_or_else(|| format!("container with id: {container} not found"))?;
    std::fs::read(dir.join(file)).map_err(|_| missing())
}

fn list_json(node: &Node, container: &str) -> Response {
    let Some(dir) = log_dir(node, container) else {
        return not_found(&format!("container with id: {container} not found"));
    };
    let infos: Vec<_> = files(&dir)
        .into_iter()
        .map(|(name, size, modified)| {
            json!({
                "fileName": name,
                "fileSize": size.to_string(),
                "lastModifiedTime": tusk_common::calendar::java_date(modified),
            })
        })
        .collect();
    axum::Json(json!([{
        "containerLogInfo": infos,
        "logAggregationType": "LOCAL",
        "containerId": container,
        "nodeId": node.node_id,
    }]))
    .into_response()
}

fn file_text(node: &Node, container: &str, file: &str) -> Response {
    match read_log(node, container, file) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], bytes).into_response(),
        Err(message) => not_found(&message),
    }
}

fn list_page(node: &Node, container: &str, user: &str) -> Response {
    let body = match log_dir(node, container) {
        None => format!(
            "<p>No logs available for container {}</p>",
            escape(container)
        ),
        Some(dir) => {
            let mut items = String::from("<ul>");
            for (name, size, _) in files(&dir) {
                items.push_str(&format!(
                    "<li><a href=\"/node/containerlogs/{c}/{u}/{n}\">{n}</a> : Total file length is {size} bytes.</li>",
                    c = escape(container),
                    u = escape(user),
                    n = escape(&name),
                ));
            }
            items.push_str("</ul>");
            items
        }
    };
    page(container, &body)
}

fn file_page(node: &Node, container: &str, file: &str) -> Response {
    match read_log(node, container, file) {
        Ok(bytes) => page(
            container,
            &format!(
                "<h2>{}</h2><pre>{}</pre>",
                escape(file),
                escape(&String::from_utf8_lossy(&bytes))
            ),
        ),
        Err(message) => not_found(&message),
    }
}

fn page(container: &str, body: &str) -> Response {
    Page {
        daemon: "NodeManager",
        title: container,
        nav: NAV,
        refresh_secs: 0,
    }
    .render(body)
    .into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn containers_name_their_application() {
        let app = |c| super::application_of(c);
        assert_eq!(
            app("container_1410901177871_0001_01_000005").as_deref(),
            Some("application_1410901177871_0001")
        );
        assert_eq!(
            app("container_e17_1410901177871_0001_01_000005").as_deref(),
            Some("application_1410901177871_0001")
        );
        assert_eq!(app("nonsense"), None);
    }
}
