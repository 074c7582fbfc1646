//! [`DfsClient`]: namespace calls over one shared NameNode connection. Every call is a
//! future; callers may have many in flight at once (up to the connection's window).

mod append;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::OnceCell;
use tusk_proto::hdfs as h;
use tusk_rpc::{HadoopException, RpcClient, RpcClientOptions};

use crate::adaptive::LinkMeter;
use crate::error::{ClientError, Result};
use crate::options::ClientOptions;
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

pub(crate) struct Inner {
    pub rpc: RpcClient,
    pub options: ClientOptions,
    /// Lease holder name sent with create/addBlock/complete.
    pub client_name: String,
    /// Open writers; the lease renewer runs while this is non-zero.
    pub open_writers: AtomicUsize,
    pub server_defaults: OnceCell<h::FsServerDefaultsProto>,
    /// What the writers measured of the client's link, for `adaptive` replication.
    pub link_meter: std::sync::Mutex<LinkMeter>,
}

/// A file system client. Cheap to clone; clones share the NameNode connection.
#[derive(Clone)]
pub struct DfsClient {
    pub(crate) inner: Arc<Inner>,
}

impl DfsClient {
    /// A client for the NameNode in `options`; connects on first use.
    pub fn new(options: ClientOptions) -> Self {
        let rpc = RpcClient::new(
            options.namenode.clone(),
            RpcClientOptions {
                user: options.user.clone(),
                max_in_flight: options.max_calls_in_flight,
                connect_retry: options.connect_retry,
                ..Default::default()
            },
        );
        let client_name = format!(
            "DFSClient_NONMAPREDUCE_{}_{}",
            rand::random::<u32>() >> 1,
            std::process::id()
        );
        let inner = Arc::new(Inner {
            rpc,
            options,
            client_name,
            open_writers: AtomicUsize::new(0),
            server_defaults: OnceCell::new(),
            link_meter: std::sync::Mutex::new(LinkMeter::default()),
        });
        spawn_lease_renewer(Arc::downgrade(&inner));
        DfsClient { inner }
    }

    pub fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    pub fn client_name(&self) -> &str {
        &self.inner.client_name
    }

    pub(crate) async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp> {
        Ok(self.inner.rpc.call(method, req).await?)
    }

    pub async fn server_defaults(&self) -> Result<h::FsServerDefaultsProto> {
        self.inner
            .server_defaults
            .get_or_try_init(|| async {
                let r: h::GetServerDefaultsResponseProto = self
                    .call("getServerDefaults", &h::GetServerDefaultsRequestProto {})
                    .await?;
                Ok::<_, ClientError>(r.server_defaults)
            })
            .await
            .cloned()
    }

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

    pub async fn block_locations(
        &self,
        path: &str,
        offset: u64,
        length: u64,
    ) -> Result<h::LocatedBlocksProto> {
        let r: h::GetBlockLocationsResponseProto = self
            .call(
                "getBlockLocations",
                &h::GetBlockLocationsRequestProto {
                    src: path.to_string(),
                    offset,
                    length,
                },
            )
            .await?;
        r.locations.ok_or_else(|| not_found(path))
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

    /// Tells the NameNode that `node`'s replica of `block` failed checksum verification
    /// (`reportBadBlocks`); failures are only logged.
    pub async fn report_bad_block(
        &self,
        block: &h::LocatedBlockProto,
        node: &h::DatanodeInfoProto,
    ) {
        let mut bad = block.clone();
        bad.locs = vec![node.clone()];
        let r: Result<h::ReportBadBlocksResponseProto> = self
            .call(
                "reportBadBlocks",
                &h::ReportBadBlocksRequestProto { blocks: vec![bad] },
            )
            .await;
        if let Err(e) = r {
            tracing::warn!(error = %e, "reportBadBlocks failed");
        }
    }

    pub(crate) fn writer_opened(&self) {
        self.inner.open_writers.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn writer_closed(&self) {
        self.inner.open_writers.fetch_sub(1, Ordering::Relaxed);
    }
}

pub(crate) fn not_found(path: &str) -> ClientError {
    ClientError::Remote(tusk_rpc::RemoteException::of(
        HadoopException::FileNotFound,
        format!("File does not exist: {path}"),
    ))
}

/// Renews the client's lease every 30 s while it has files open.
fn spawn_lease_renewer(inner: std::sync::Weak<Inner>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    handle.spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(30)).await;
            let Some(inner) = inner.upgrade() else { return };
            if inner.open_writers.load(Ordering::Relaxed) > 0 {
                let req = h::RenewLeaseRequestProto {
                    client_name: inner.client_name.clone(),
                    namespaces: vec![],
                };
                let r: std::result::Result<h::RenewLeaseResponseProto, _> =
                    inner.rpc.call("renewLease", &req).await;
                if let Err(e) = r {
                    tracing::warn!(error = %e, "lease renewal failed");
                }
            }
        }
    });
}
