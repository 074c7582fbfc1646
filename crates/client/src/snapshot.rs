//! Snapshot calls: allowSnapshot ... getSnapshotDiffReport.

use tusk_proto::hdfs as h;

use crate::client::DfsClient;
use crate::error::Result;

impl DfsClient {
    /// `allowSnapshot` (superuser).
    pub async fn allow_snapshot(&self, dir: &str) -> Result<()> {
        let req = h::AllowSnapshotRequestProto {
            snapshot_root: dir.to_string(),
        };
        let _: h::AllowSnapshotResponseProto = self.call("allowSnapshot", &req).await?;
        Ok(())
    }

    /// `disallowSnapshot` (superuser).
    pub async fn disallow_snapshot(&self, dir: &str) -> Result<()> {
        let req = h::DisallowSnapshotRequestProto {
            snapshot_root: dir.to_string(),
        };
        let _: h::DisallowSnapshotResponseProto = self.call("disallowSnapshot", &req).await?;
        Ok(())
    }

    /// `createSnapshot`; `None` lets the NameNode name it. Returns the snapshot's path.
    pub async fn create_snapshot(&self, dir: &str, name: Option<&str>) -> Result<String> {
        let req = h::CreateSnapshotRequestProto {
            snapshot_root: dir.to_string(),
            snapshot_name: name.map(str::to_string),
        };
        let r: h::CreateSnapshotResponseProto = self.call("createSnapshot", &req).await?;
        Ok(r.snapshot_path)
    }

    pub async fn delete_snapshot(&self, dir: &str, name: &str) -> Result<()> {
        let req = h::DeleteSnapshotRequestProto {
            snapshot_root: dir.to_string(),
            snapshot_name: name.to_string(),
        };
        let _: h::DeleteSnapshotResponseProto = self.call("deleteSnapshot", &req).await?;
        Ok(())
    }

    pub async fn rename_snapshot(&self, dir: &str, old: &str, new: &str) -> Result<()> {
        let req = h::RenameSnapshotRequestProto {
            snapshot_root: dir.to_string(),
            snapshot_old_name: old.to_string(),
            snapshot_new_name: new.to_string(),
        };
        let _: h::RenameSnapshotResponseProto = self.call("renameSnapshot", &req).await?;
        Ok(())
    }

    /// `getSnapshottableDirListing`: the directories the caller may snapshot.
    pub async fn snapshottable_dirs(&self) -> Result<Vec<h::SnapshottableDirectoryStatusProto>> {
        let r: h::GetSnapshottableDirListingResponseProto = self
            .call(
                "getSnapshottableDirListing",
                &h::GetSnapshottableDirListingRequestProto {},
            )
            .await?;
        Ok(r.snapshottable_dir_list
            .map(|l| l.snapshottable_dir_listing)
            .unwrap_or_default())
    }

    /// `getSnapshotListing`: the snapshots of `dir` in creation order.
    pub async fn snapshot_listing(&self, dir: &str) -> Result<Vec<h::SnapshotStatusProto>> {
        let req = h::GetSnapshotListingRequestProto {
            snapshot_root: dir.to_string(),
        };
        let r: h::GetSnapshotListingResponseProto = self.call("getSnapshotListing", &req).await?;
        Ok(r.snapshot_list
            .map(|l| l.snapshot_listing)
            .unwrap_or_default())
    }

    /// `getSnapshotDiffReport` from snapshot `from` to `to` (an empty name is the
    /// current tree).
    pub async fn snapshot_diff(
        &self,
        dir: &str,
        from: &str,
        to: &str,
    ) -> Result<h::SnapshotDiffReportProto> {
        let req = h::GetSnapshotDiffReportRequestProto {
            snapshot_root: dir.to_string(),
            from_snapshot: from.to_string(),
            to_snapshot: to.to_string(),
        };
        let r: h::GetSnapshotDiffReportResponseProto =
            self.call("getSnapshotDiffReport", &req).await?;
        Ok(r.diff_report)
    }
}

/// One diff report entry as `hdfs snapshotDiff` prints it: `M\t./a`, `R\t./a -> ./b`.
pub fn diff_entry_line(e: &h::SnapshotDiffReportEntryProto) -> String {
    let shown = |p: &[u8]| {
        if p.is_empty() {
            ".".to_string()
        } else {
            format!("./{}", String::from_utf8_lossy(p))
        }
    };
    let mut line = format!("{}\t{}", e.modification_label, shown(&e.fullpath));
    if e.modification_label == "R" {
        line.push_str(" -> ");
        line.push_str(&shown(e.target_path.as_deref().unwrap_or_default()));
    }
    line
}
