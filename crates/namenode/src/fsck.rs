//! fsck: Hadoop's `/fsck` servlet on the NameNode's web server, which Hadoop's own
//! `hdfs fsck` (DFSck) reads, and the report behind it.
//!
//! `GET /fsck?ugi=USER&path=P[&files=1][&blocks=1][&locations=1][&racks=1]
//! [&openforwrite=1][&listcorruptfileblocks=1[&startblockafter=N]]` answers 200 with
//! the plain-text report; DFSck takes its exit code from the last line (`... is
//! HEALTHY`, `... is CORRUPT`, `... does not exist`, else failure). The walk runs in
//! process as `ugi` (or `user.name`; `dr.who` without either), so the NameNode's
//! permission checks apply to every directory listed and file read; a refusal ends
//! the report with Hadoop's `Fsck on path '...' FAILED`. `-list-corruptfileblocks`
//! needs the superuser, as HDFS's `listCorruptFileBlocks` does. The other options of
//! Hadoop 3.4's DFSck are read too: `replicadetails`, `upgradedomains`,
//! `includeSnapshots`, `storagepolicies`, `blockId` (space-separated), `maintenance`,
//! `showprogress`, and `move` / `delete` of corrupt files (`move` renames the file
//! under `/lost+found`; HDFS copies its readable blocks there instead).
//!
//! `report` is the one report generator: `/fsck` runs it over the namesystem, `tusk
//! fsck` over RPC ([`report::FsckSource`]).

pub mod report;

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tusk_common::calendar::java_date;
use tusk_http::Router;
use tusk_proto::hdfs::{
    hdfs_file_status_proto::FileType, CorruptFileBlocksProto, DatanodeInfoProto,
    DatanodeReportTypeProto, HdfsFileStatusProto, LocatedBlocksProto,
};

use crate::error::NameNodeError;
use crate::namesystem::Namesystem;
use report::{Entry, FsckOptions, FsckSource};

/// The `/fsck` route.
pub fn router(fsn: Arc<Namesystem>) -> Router {
    Router::new().route("/fsck", get(fsck)).with_state(fsn)
}

async fn fsck(
    State(fsn): State<Arc<Namesystem>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let flag = |k: &str| query.contains_key(k);
    let user = match (query.get("ugi"), query.get("user.name")) {
        (Some(a), Some(b)) if a != b => {
            return text(
                StatusCode::FORBIDDEN,
                format!("Usernames not matched: name={a} != expected={b}\n"),
            );
        }
        (Some(u), _) | (None, Some(u)) if !u.is_empty() => u.clone(),
        _ => tusk_webhdfs::params::ANONYMOUS_USER.to_string(),
    };
    let options = FsckOptions {
        path: query.get("path").cloned().unwrap_or_else(|| "/".into()),
        files: flag("files"),
        blocks: flag("blocks"),
        locations: flag("locations"),
        racks: flag("racks"),
        open_for_write: flag("openforwrite"),
        list_corrupt_file_blocks: flag("listcorruptfileblocks"),
        replica_details: flag("replicadetails"),
        upgrade_domains: flag("upgradedomains"),
        include_snapshots: flag("includeSnapshots"),
        storage_policies: flag("storagepolicies"),
        block_ids: query
            .get("blockId")
            .map(|ids| ids.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        maintenance: flag("maintenance"),
        show_progress: flag("showprogress"),
        move_corrupt: flag("move"),
        delete_corrupt: flag("delete"),
    };
    let after = query.get("startblockafter").cloned();
    let fsn2 = fsn.clone();
    let body = tokio::task::spawn_blocking(move || {
        let source = InProcess { fsn: &fsn2, user };
        futures::executor::block_on(generate(&source, &options, after))
    })
    .await
    .expect("fsck task");
    // Nothing the report shows may be undone by a failed sync.
    let seen = fsn.edit_log.last_txid();
    if !fsn.edit_log.is_durable(seen) && fsn.edit_log.wait_durable(seen).await.is_err() {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "edit log failed\n".into(),
        );
    }
    text(StatusCode::OK, body)
}

/// The servlet's body: the report, or Hadoop's failure tail when the walk is refused.
async fn generate(source: &InProcess<'_>, options: &FsckOptions, after: Option<String>) -> String {
    let mut out = Vec::new();
    let started = std::time::Instant::now();
    let default_replication = source.fsn.options.default_replication as u64;
    let outcome = if options.list_corrupt_file_blocks {
        corrupt_page(source, &options.path, after, &mut out).await
    } else {
        report::run(source, &source.user, options, default_replication, &mut out)
            .await
            .map(drop)
    };
    if let Err(e) = outcome {
        out.extend_from_slice(
            format!(
                "FSCK ended at {} in {} milliseconds\n{}\n\n\nFsck on path '{}' FAILED",
                java_date(tusk_common::now_millis()),
                started.elapsed().as_millis(),
                e.to_remote().message,
                options.path
            )
            .as_bytes(),
        );
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One page of `-list-corruptfileblocks` as the servlet sends it to DFSck, which
/// follows `Cookie:` with `startblockafter` until a page says `no more`.
async fn corrupt_page(
    source: &InProcess<'_>,
    path: &str,
    after: Option<String>,
    out: &mut Vec<u8>,
) -> Result<(), NameNodeError> {
    use std::io::Write;
    if source.file_info(path).await?.is_none() {
        write!(out, "\n\nPath '{path}' does not exist\n")?;
        return Ok(());
    }
    let skip: usize = after.as_deref().and_then(|c| c.parse().ok()).unwrap_or(0);
    let page = source
        .fsn
        .corrupt_blocks_page(&source.user, path, after.as_deref())?;
    writeln!(out, "Cookie:\t{}", skip + page.len())?;
    for (block, file) in &page {
        writeln!(out, "blk_{block}\t{file}")?;
    }
    let filler = match page.len() {
        0 if skip == 0 => "no".to_string(),
        0 => "no more".to_string(),
        n => n.to_string(),
    };
    write!(
        out,
        "\n\nThe filesystem under path '{path}' has {filler} CORRUPT files\n\n"
    )?;
    Ok(())
}

/// The namesystem as the report's user sees it.
struct InProcess<'a> {
    fsn: &'a Namesystem,
    user: String,
}

fn entry(s: &HdfsFileStatusProto) -> Entry {
    Entry {
        name: String::from_utf8_lossy(&s.path).into_owned(),
        is_dir: s.file_type == FileType::IsDir as i32,
        length: s.length,
        replication: s.block_replication.unwrap_or(0) as u16,
        storage_policy: s.storage_policy.unwrap_or(0),
    }
}

impl FsckSource for InProcess<'_> {
    type Error = NameNodeError;

    async fn file_info(&self, path: &str) -> Result<Option<Entry>, NameNodeError> {
        Ok(self
            .fsn
            .get_file_info(&self.user, path)?
            .as_ref()
            .map(entry))
    }

    async fn listing(&self, path: &str) -> Result<Vec<Entry>, NameNodeError> {
        let mut all = Vec::new();
        let mut after = Vec::new();
        loop {
            let Some(page) = self.fsn.get_listing(&self.user, path, &after, false)? else {
                return Ok(all);
            };
            if let Some(last) = page.partial_listing.last() {
                after = last.path.to_vec();
            }
            all.extend(page.partial_listing.iter().map(entry));
            if page.remaining_entries == 0 || page.partial_listing.is_empty() {
                return Ok(all);
            }
        }
    }

    async fn block_locations(
        &self,
        path: &str,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>, NameNodeError> {
        self.fsn.get_block_locations(&self.user, path, 0, length)
    }

    async fn live_datanodes(&self) -> Result<Vec<DatanodeInfoProto>, NameNodeError> {
        Ok(self
            .fsn
            .datanode_report(DatanodeReportTypeProto::Live as i32))
    }

    async fn corrupt_file_blocks(
        &self,
        path: &str,
        cookie: Option<String>,
    ) -> Result<CorruptFileBlocksProto, NameNodeError> {
        self.fsn
            .list_corrupt_file_blocks(&self.user, path, cookie.as_deref())
    }

    async fn snapshottable_dirs(&self) -> Result<Vec<String>, NameNodeError> {
        let listing = self.fsn.snapshottable_dir_listing(&self.user);
        Ok(listing
            .map(|l| l.snapshottable_dir_listing)
            .unwrap_or_default()
            .iter()
            .map(snapshottable_path)
            .collect())
    }

    async fn block_owner(&self, block_id: u64) -> Result<Option<String>, NameNodeError> {
        let st = self.fsn.read();
        Ok(st.blocks.get(block_id).map(|b| st.ns.full_path(b.inode)))
    }

    async fn delete(&self, path: &str) -> Result<bool, NameNodeError> {
        Ok(self.fsn.delete(&self.user, path, false)?.value)
    }

    async fn move_to_lost_found(&self, path: &str) -> Result<(), NameNodeError> {
        let target = report::lost_found_path(path);
        let parent = target.rsplit_once('/').map_or("/", |(p, _)| p);
        // The servlet waits for these edits before it answers.
        let _made = self.fsn.mkdirs(&self.user, parent, 0o755, true)?;
        if self.fsn.rename(&self.user, path, &target)?.value {
            Ok(())
        } else {
            Err(std::io::Error::other(report::move_failed(path)).into())
        }
    }
}

/// The full path of a snapshottable directory from its listing entry.
pub fn snapshottable_path(d: &tusk_proto::hdfs::SnapshottableDirectoryStatusProto) -> String {
    let parent = String::from_utf8_lossy(&d.parent_fullpath);
    let name = String::from_utf8_lossy(&d.dir_status.path);
    if name.is_empty() {
        return parent.into_owned();
    }
    format!("{}/{name}", parent.trim_end_matches('/'))
}

fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}
