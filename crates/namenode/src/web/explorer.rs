//! `/explorer?path=/dir`: a file browser, rendered on the server from the namespace
//! with the caller's permissions (`user.name=`, else Hadoop's static web user
//! `dr.who`, as `hadoop.http.staticuser.user` defaults). A directory lists its entries
//! a page at a time (`dfs.ls.limit`, `&after=name`); a file shows its status and blocks
//! and downloads through WebHDFS `OPEN` (`/webhdfs/v1<path>?op=OPEN`), which redirects
//! to a DataNode.

use std::collections::HashMap;
use std::fmt::Write as _;

use axum::http::StatusCode;
use axum::response::Html;
use tusk_common::metrics::human_bytes;
use tusk_http::page::{self, escape, url_encode, Column};
use tusk_proto::hdfs::hdfs_file_status_proto::FileType;
use tusk_proto::hdfs::HdfsFileStatusProto;

use crate::namesystem::Namesystem;

/// Hadoop's `hadoop.http.staticuser.user` default: who an anonymous web request is.
pub const STATIC_USER: &str = "dr.who";

/// The page and its status: 404 for a missing path, 403 for a refused one, as
/// WebHDFS answers them.
pub fn page(fsn: &Namesystem, q: &HashMap<String, String>) -> (StatusCode, Html<String>) {
    let path = normalise(q.get("path").map(String::as_str).unwrap_or("/"));
    let user = q
        .get("user.name")
        .filter(|u| !u.is_empty())
        .map(String::as_str)
        .unwrap_or(STATIC_USER);
    let (code, body) = match fsn.get_file_info(user, &path) {
        Ok(Some(status)) if status.file_type == FileType::IsDir as i32 => (
            StatusCode::OK,
            directory(fsn, &path, user, q.get("after").map(String::as_str)),
        ),
        Ok(Some(status)) => (StatusCode::OK, file(fsn, &path, user, &status)),
        Ok(None) => (
            StatusCode::NOT_FOUND,
            format!(
                "{}<p>No such file or directory: <code>{}</code></p>",
                breadcrumbs(&path, user),
                escape(&path)
            ),
        ),
        Err(e) => {
            let remote = e.to_remote();
            let body = refused(&path, user, &remote);
            (tusk_webhdfs::WebHdfsError::from(remote).status(), body)
        }
    };
    let body = match q.contains_key("path") {
        true => body,
        false => format!("{body}{HASH_PATH_SCRIPT}"),
    };
    // A browsing page is not reloaded under its reader.
    let mut shown = super::nn_page("Browse the file system");
    shown.refresh_secs = 0;
    (code, shown.render(&body))
}

/// Hadoop's explorer names its directory in the fragment (`/explorer.html#/dir`, which
/// redirects here without a `path`): that directory's page instead of the root's.
const HASH_PATH_SCRIPT: &str = "<script>(function(){var h=location.hash;\
if(h.length>1&&h.charAt(1)==='/'){var p;try{p=decodeURIComponent(h.slice(1));}catch(e){p=h.slice(1);}\
location.replace('/explorer?path='+encodeURIComponent(p));}})();</script>";

/// `/a//b/` → `/a/b`; always absolute.
fn normalise(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

fn link(path: &str, user: &str) -> String {
    let mut href = format!("/explorer?path={}", url_encode(path));
    if user != STATIC_USER {
        let _ = write!(href, "&user.name={}", url_encode(user));
    }
    href
}

fn breadcrumbs(path: &str, user: &str) -> String {
    let mut out = format!(
        "<p style=\"font-size:15px\"><a href=\"{}\">/</a>",
        escape(&link("/", user))
    );
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        let _ = write!(
            out,
            " <a href=\"{}\">{}</a> /",
            escape(&link(&at, user)),
            escape(part)
        );
    }
    let _ = write!(
        out,
        " <span class=\"muted\" style=\"margin-left:14px\">as user <code>{}</code></span></p>",
        escape(user)
    );
    out
}

fn refused(path: &str, user: &str, e: &tusk_rpc::RemoteException) -> String {
    format!(
        "{}<p>{} <code>{}</code>: {}</p>",
        breadcrumbs(path, user),
        page::tag(e.class.rsplit('.').next().unwrap_or("error"), "bad"),
        escape(path),
        escape(&e.message)
    )
}

/// `rwxr-x---` from permission bits, `d` first for a directory.
fn mode(status: &HdfsFileStatusProto) -> String {
    let bits = status.permission.perm;
    let mut out = String::from(if status.file_type == FileType::IsDir as i32 {
        "d"
    } else {
        "-"
    });
    for shift in [6, 3, 0] {
        let b = (bits >> shift) & 7;
        out.push(if b & 4 != 0 { 'r' } else { '-' });
        out.push(if b & 2 != 0 { 'w' } else { '-' });
        out.push(if b & 1 != 0 { 'x' } else { '-' });
    }
    out
}

fn directory(fsn: &Namesystem, path: &str, user: &str, after: Option<&str>) -> String {
    let listing = match fsn.get_listing(user, path, after.unwrap_or("").as_bytes(), false) {
        Ok(Some(l)) => l,
        Ok(None) => return format!("<p>{} disappeared.</p>", escape(path)),
        Err(e) => return refused(path, user, &e.to_remote()),
    };
    let rows: Vec<Vec<String>> = listing
        .partial_listing
        .iter()
        .map(|s| {
            let name = String::from_utf8_lossy(&s.path).into_owned();
            let child = if path == "/" {
                format!("/{name}")
            } else {
                format!("{path}/{name}")
            };
            let is_dir = s.file_type == FileType::IsDir as i32;
            let shown = if is_dir {
                format!(
                    "<a href=\"{}\">{}/</a>",
                    escape(&link(&child, user)),
                    escape(&name)
                )
            } else {
                format!(
                    "<a href=\"{}\">{}</a>",
                    escape(&link(&child, user)),
                    escape(&name)
                )
            };
            let download = if is_dir {
                String::new()
            } else {
                format!(
                    "<a href=\"{}\">download</a>",
                    escape(&open_url(&child, user))
                )
            };
            vec![
                format!("<code>{}</code>", mode(s)),
                escape(&s.owner),
                escape(&s.group),
                if is_dir {
                    "—".into()
                } else {
                    human_bytes(s.length as f64)
                },
                escape(&page::utc_time(s.modification_time)),
                if is_dir {
                    "—".into()
                } else {
                    s.block_replication.unwrap_or(0).to_string()
                },
                if is_dir {
                    "—".into()
                } else {
                    human_bytes(s.blocksize.unwrap_or(0) as f64)
                },
                shown,
                download,
            ]
        })
        .collect();
    let more = match (listing.remaining_entries, listing.partial_listing.last()) {
        (0, _) | (_, None) => String::new(),
        (n, Some(last)) => format!(
            "<p>{n} more entries: <a href=\"{}&after={}\">next page</a></p>",
            escape(&link(path, user)),
            url_encode(&String::from_utf8_lossy(&last.path))
        ),
    };
    format!(
        "{}{}{more}",
        breadcrumbs(path, user),
        page::table(
            &[
                Column("Permission", false),
                Column("Owner", false),
                Column("Group", false),
                Column("Size", true),
                Column("Last modified", false),
                Column("Replication", true),
                Column("Block size", true),
                Column("Name", false),
                Column("", false),
            ],
            &rows
        )
    )
}

/// WebHDFS OPEN on this NameNode (it redirects to a DataNode holding the data).
fn open_url(path: &str, user: &str) -> String {
    format!(
        "/webhdfs/v1{}?op=OPEN&user.name={}",
        url_encode(path),
        url_encode(user)
    )
}

fn file(fsn: &Namesystem, path: &str, user: &str, status: &HdfsFileStatusProto) -> String {
    let info = page::key_values(&[
        (
            "Size",
            format!(
                "{} ({} bytes)",
                human_bytes(status.length as f64),
                status.length
            ),
        ),
        ("Permission", format!("<code>{}</code>", mode(status))),
        (
            "Owner / group",
            format!("{} / {}", escape(&status.owner), escape(&status.group)),
        ),
        (
            "Replication",
            status.block_replication.unwrap_or(0).to_string(),
        ),
        (
            "Block size",
            human_bytes(status.blocksize.unwrap_or(0) as f64),
        ),
        (
            "Last modified",
            escape(&page::utc_time(status.modification_time)),
        ),
        (
            "Download",
            format!(
                "<a href=\"{}\">WebHDFS OPEN</a>",
                escape(&open_url(path, user))
            ),
        ),
    ]);
    let blocks = match fsn.get_block_locations(user, path, 0, u64::MAX) {
        Ok(Some(located)) => located
            .blocks
            .iter()
            .map(|b| {
                let nodes: Vec<String> = b
                    .locs
                    .iter()
                    .map(|l| escape(&format!("{}:{}", l.id.host_name, l.id.xfer_port)))
                    .collect();
                vec![
                    b.b.block_id.to_string(),
                    b.b.generation_stamp.to_string(),
                    b.offset.to_string(),
                    human_bytes(b.b.num_bytes.unwrap_or(0) as f64),
                    if nodes.is_empty() {
                        page::tag("no live replica", "bad")
                    } else {
                        nodes.join("<br>")
                    },
                ]
            })
            .collect(),
        Ok(None) => Vec::new(),
        Err(e) => return refused(path, user, &e.to_remote()),
    };
    format!(
        "{}{info}<h2>Blocks</h2>{}",
        breadcrumbs(path, user),
        page::table(
            &[
                Column("Block id", true),
                Column("Generation stamp", true),
                Column("Offset", true),
                Column("Length", true),
                Column("Replicas", false),
            ],
            &blocks
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_and_modes_read_like_ls() {
        assert_eq!(normalise("//a/b//"), "/a/b");
        assert_eq!(normalise(""), "/");
        let s = HdfsFileStatusProto {
            file_type: FileType::IsDir as i32,
            permission: tusk_proto::hdfs::FsPermissionProto { perm: 0o750 },
            ..Default::default()
        };
        assert_eq!(mode(&s), "drwxr-x---");
        assert_eq!(link("/a b", "bob"), "/explorer?path=/a%20b&user.name=bob");
        assert_eq!(link("/", STATIC_USER), "/explorer?path=/");
    }
}
