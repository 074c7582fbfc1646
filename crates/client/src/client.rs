//! [`DfsClient`]'s namespace calls over its one shared NameNode connection (the client
//! itself is in `connection`). Every call is a future; callers may have many in flight
//! at once (up to the connection's window).

mod append;
mod delegation_tokens;

use bytes::Bytes;
use tusk_proto::hdfs as h;

use crate::connection::not_found;
pub use crate::connection::DfsClient;
use crate::error::{ClientError, Result};
use crate::reader::FileReader;
use crate::status::FileStatus;
use crate::writer::FileWriter;

/// `createFlag` bits.
const CREATE: u32 = 1;
const OVERWRITE: u32 = 2;

/// Per-file choices for `create`; `None` takes the client's defaults.
#[derive(Clone, Debug, Default)]
pub struct CreateOptions {
    pub overwrite: bool,
    pub replication: Option<u16>,
    pub block_size: Option<u64>,
    /// Permission bits before the umask (default 0644).
    pub permission: Option<u16>,
    pub create_parent: bool,
}

impl CreateOptions {
    /// The defaults, creating missing parent directories (`hadoop fs -put`'s and
    /// `FileSystem.create`'s behaviour).
    pub fn with_parents() -> Self {
        Self {
            create_parent: true,
            ..Self::default()
        }
    }
}

impl DfsClient {
    /// Status of `path`, or `None` if it does not exist.
    pub async fn get_file_info(&self, path: &str) -> Result<Option<FileStatus>> {
        let r: h::GetFileInfoResponseProto = self
            .call(
                "getFileInfo",
                &h::GetFileInfoRequestProto {
                    src: path.to_string(),
                },
            )
            .await?;
        Ok(r.fs.map(|fs| FileStatus::from_proto(path.to_string(), &fs)))
    }

    /// Status of `path`, or a FileNotFoundException.
    pub async fn stat(&self, path: &str) -> Result<FileStatus> {
        self.get_file_info(path)
            .await?
            .ok_or_else(|| not_found(path))
    }

    /// Every entry of a directory (all pages), or the file itself.
    pub async fn list(&self, path: &str) -> Result<Vec<FileStatus>> {
        let mut out = Vec::new();
        let mut start_after = Bytes::new();
        loop {
            let r: h::GetListingResponseProto = self
                .call(
                    "getListing",
                    &h::GetListingRequestProto {
                        src: path.to_string(),
                        start_after: start_after.clone(),
                        need_location: false,
                    },
                )
                .await?;
            let list = r.dir_list.ok_or_else(|| not_found(path))?;
            for s in &list.partial_listing {
                out.push(FileStatus::from_proto(
                    String::from_utf8_lossy(&s.path).to_string(),
                    s,
                ));
            }
            match list.partial_listing.last() {
                Some(last) if list.remaining_entries > 0 => start_after = last.path.clone(),
                _ => return Ok(out),
            }
        }
    }

    pub async fn mkdirs(&self, path: &str, permission: u16, create_parent: bool) -> Result<bool> {
        let r: h::MkdirsResponseProto = self
            .call(
                "mkdirs",
                &h::MkdirsRequestProto {
                    src: path.to_string(),
                    masked: h::FsPermissionProto {
                        perm: permission as u32,
                    },
                    create_parent,
                    unmasked: None,
                },
            )
            .await?;
        Ok(r.result)
    }

    /// Creates a file and returns a writer for it.
    pub async fn create(&self, path: &str, opts: CreateOptions) -> Result<FileWriter> {
        let replication = opts.replication.unwrap_or(self.inner.options.replication);
        let block_size = opts.block_size.unwrap_or(self.inner.options.block_size);
        let bpc = u64::from(self.inner.options.bytes_per_checksum);
        if bpc == 0 || !block_size.is_multiple_of(bpc) {
            return Err(ClientError::InvalidArgument {
                path: path.to_string(),
                message: format!(
                    "Invalid values: dfs.bytes-per-checksum (={bpc}) must divide block size (={block_size})."
                ),
            });
        }
        let r: h::CreateResponseProto = self
            .call(
                "create",
                &h::CreateRequestProto {
                    src: path.to_string(),
                    masked: h::FsPermissionProto {
                        perm: opts.permission.unwrap_or(0o644) as u32,
                    },
                    client_name: self.inner.client_name.clone(),
                    create_flag: CREATE | if opts.overwrite { OVERWRITE } else { 0 },
                    create_parent: opts.create_parent,
                    replication: replication as u32,
                    block_size,
                    ..Default::default()
                },
            )
            .await?;
        let status = r.fs.ok_or_else(|| ClientError::InvalidArgument {
            path: path.to_string(),
            message: "create returned no status".into(),
        })?;
        Ok(FileWriter::new(
            self.clone(),
            path.to_string(),
            status.file_id.unwrap_or(0),
            block_size,
            replication,
        ))
    }

    /// Opens a file for reading.
    pub async fn open(&self, path: &str) -> Result<FileReader> {
        let blocks = self.block_locations(path, 0, i64::MAX as u64).await?;
        Ok(FileReader::new(self.clone(), path.to_string(), blocks))
    }

    /// Writes `data` to a new file in one go.
    pub async fn write_file(&self, path: &str, data: &[u8], opts: CreateOptions) -> Result<()> {
        let mut w = self.create(path, opts).await?;
        w.write(data).await?;
        w.close().await
    }

    /// Reads a whole file.
    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        self.open(path).await?.read_to_end().await
    }

    /// The original rename (moves into `dst` if it is a directory); false if refused.
    pub async fn rename(&self, src: &str, dst: &str) -> Result<bool> {
        let r: h::RenameResponseProto = self
            .call(
                "rename",
                &h::RenameRequestProto {
                    src: src.into(),
                    dst: dst.into(),
                },
            )
            .await?;
        Ok(r.result)
    }

    /// rename2: exactly to `dst`, replacing it when `overwrite`.
    pub async fn rename2(&self, src: &str, dst: &str, overwrite: bool) -> Result<()> {
        let _: h::Rename2ResponseProto = self
            .call(
                "rename2",
                &h::Rename2RequestProto {
                    src: src.into(),
                    dst: dst.into(),
                    overwrite_dest: overwrite,
                    move_to_trash: None,
                },
            )
            .await?;
        Ok(())
    }

    pub async fn delete(&self, path: &str, recursive: bool) -> Result<bool> {
        let r: h::DeleteResponseProto = self
            .call(
                "delete",
                &h::DeleteRequestProto {
                    src: path.into(),
                    recursive,
                },
            )
            .await?;
        Ok(r.result)
    }

    pub async fn set_replication(&self, path: &str, replication: u16) -> Result<bool> {
        let r: h::SetReplicationResponseProto = self
            .call(
                "setReplication",
                &h::SetReplicationRequestProto {
                    src: path.into(),
                    replication: replication as u32,
                },
            )
            .await?;
        Ok(r.result)
    }

    pub async fn set_permission(&self, path: &str, permission: u16) -> Result<()> {
        let _: h::SetPermissionResponseProto = self
            .call(
                "setPermission",
                &h::SetPermissionRequestProto {
                    src: path.into(),
                    permission: h::FsPermissionProto {
                        perm: permission as u32,
                    },
                },
            )
            .await?;
        Ok(())
    }

    pub async fn set_owner(
        &self,
        path: &str,
        owner: Option<&str>,
        group: Option<&str>,
    ) -> Result<()> {
        let _: h::SetOwnerResponseProto = self
            .call(
                "setOwner",
                &h::SetOwnerRequestProto {
                    src: path.into(),
                    username: owner.map(str::to_string),
                    groupname: group.map(str::to_string),
                },
            )
            .await?;
        Ok(())
    }

    /// Sets times in ms since the epoch; `u64::MAX` (-1) leaves one unchanged.
    pub async fn set_times(&self, path: &str, mtime: u64, atime: u64) -> Result<()> {
        let _: h::SetTimesResponseProto = self
            .call(
                "setTimes",
                &h::SetTimesRequestProto {
                    src: path.into(),
                    mtime,
                    atime,
                },
            )
            .await?;
        Ok(())
    }

    pub async fn content_summary(&self, path: &str) -> Result<h::ContentSummaryProto> {
        let r: h::GetContentSummaryResponseProto = self
            .call(
                "getContentSummary",
                &h::GetContentSummaryRequestProto { path: path.into() },
            )
            .await?;
        Ok(r.summary)
    }

    pub async fn fs_stats(&self) -> Result<h::GetFsStatsResponseProto> {
        self.call("getFsStats", &h::GetFsStatusRequestProto {})
            .await
    }

    /// Finishes the NameNode's current edit segment without a checkpoint (`rollEdits`,
    /// superuser only); the first txid of the new segment.
    pub async fn roll_edits(&self) -> Result<u64> {
        let r: h::RollEditsResponseProto =
            self.call("rollEdits", &h::RollEditsRequestProto {}).await?;
        Ok(r.new_segment_tx_id)
    }

    /// DataNodes known to the NameNode: `kind` 1 = all, 2 = live, 3 = dead.
    pub async fn datanode_report(&self, kind: i32) -> Result<Vec<h::DatanodeInfoProto>> {
        let r: h::GetDatanodeReportResponseProto = self
            .call(
                "getDatanodeReport",
                &h::GetDatanodeReportRequestProto { r#type: kind },
            )
            .await?;
        Ok(r.di)
    }
}
