//! [`DfsClient`] itself: the one NameNode connection its clones share, the client's
//! lease name and renewer, and the few calls the readers and writers make through it.
//! The namespace calls are in `client`; this file sits below them and the readers and
//! writers that `client` hands out.
//!
//! Every NameNode call goes through [`DfsClient::call`] (the lease renewer's too), on a
//! [`FailoverRpcClient`]: with an HA nameservice, a call the NameNode refuses as standby,
//! or whose connection cannot be opened or is lost before the answer, moves on to the
//! next NameNode and is sent again, with the same client id and call id.
//!
//! Resending is safe for the idempotent calls (reads, `getFileInfo`,
//! `getBlockLocations`, `mkdirs`, `setPermission`, `renewLease`, ...). It is not quite
//! for the others (`create`, `append`, `rename`, `delete`, `addBlock`, `complete`,
//! `concat`, ...) when the connection was lost after the call was sent: the old active
//! may have applied and logged it, and Tusk's NameNodes keep no retry cache yet to
//! answer the resent call with the first outcome, as Hadoop's do. Such a resend then
//! reports the change as refused or not made although it was: `create` fails with
//! `FileAlreadyExistsException` or `AlreadyBeingCreatedException`, `rename` and
//! `delete` return false, `addBlock` of a file's first block is refused (a later
//! block's is answered with the block already allocated). Hadoop's client
//! returns the lost connection's error for these calls instead; Tusk resends them so a
//! failover does not fail a write, taking that risk until the NameNode's retry cache
//! exists (the client id and call id it needs are already sent unchanged).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use tusk_proto::hdfs as h;
use tusk_rpc::{FailoverRpcClient, HadoopException};

use crate::adaptive::LinkMeter;
use crate::error::{ClientError, Result};
use crate::options::ClientOptions;

pub(crate) struct Inner {
    /// The NameNode, or the nameservice's NameNodes, for ClientProtocol calls.
    pub rpc: FailoverRpcClient,
    pub options: ClientOptions,
    /// Lease holder name sent with create/addBlock/complete.
    pub client_name: String,
    /// Open writers; the lease renewer runs while this is non-zero.
    pub open_writers: AtomicUsize,
    pub server_defaults: OnceCell<h::FsServerDefaultsProto>,
    /// The NameNode's data encryption key (`dfs.encrypt.data.transfer`), fetched when
    /// first needed and again when it nears its expiry.
    pub data_key: tokio::sync::Mutex<Option<h::DataEncryptionKeyProto>>,
    /// What the writers measured of the client's link, for `adaptive` replication.
    pub link_meter: std::sync::Mutex<LinkMeter>,
}

/// A file system client. Cheap to clone; clones share the NameNode connection.
#[derive(Clone)]
pub struct DfsClient {
    pub(crate) inner: Arc<Inner>,
}

impl DfsClient {
    /// A client for the NameNode (or the nameservice) in `options`; connects on first
    /// use.
    pub fn new(options: ClientOptions) -> Self {
        let rpc = options.namenode_rpc(tusk_proto::protocol_names::CLIENT_PROTOCOL);
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
            data_key: Default::default(),
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

    /// The RPC address of the NameNode calls go to: the one that last answered (with
    /// an HA nameservice, the active one as far as this client knows).
    pub fn active_namenode(&self) -> &str {
        self.inner.rpc.active_addr()
    }

    /// A data connection to the DataNode at `ip:port`: TCP, then, when
    /// `dfs.data.transfer.protection` is set and the port is not privileged, the SASL
    /// handshake over `token` (Hadoop's `SaslDataTransferClient`); both halves wrapped
    /// as negotiated.
    pub(crate) async fn dial_datanode(
        &self,
        ip: &str,
        port: u32,
        token: &tusk_proto::common::TokenProto,
        timeout: Duration,
    ) -> std::result::Result<
        (
            tusk_datatransfer::sasl::BoxReader,
            tusk_datatransfer::sasl::BoxWriter,
        ),
        tusk_datatransfer::DataTransferError,
    > {
        use tusk_datatransfer::sasl;
        let timed_out =
            || tusk_datatransfer::DataTransferError::Io(std::io::ErrorKind::TimedOut.into());
        let stream =
            tokio::time::timeout(timeout, tokio::net::TcpStream::connect((ip, port as u16)))
                .await
                .map_err(|_| timed_out())??;
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        let protection = &self.options().data_transfer_protection;
        let sasl_error = |e: ClientError| tusk_datatransfer::DataTransferError::Sasl {
            message: e.to_string(),
        };
        // As Hadoop's SaslDataTransferClient: the NameNode's data encryption key when
        // its server defaults say so (on any port), else the block token when
        // protection is configured and the port is not privileged.
        let key;
        let credential = if self.encrypts_data().await.map_err(sasl_error)? {
            key = self.data_encryption_key().await.map_err(sasl_error)?;
            Some(sasl::Credential::EncryptionKey(&key))
        } else if sasl::sasl_required(protection, port) {
            Some(sasl::Credential::BlockToken(token, protection.as_slice()))
        } else {
            None
        };
        tokio::time::timeout(timeout, sasl::open(rd, wr, credential))
            .await
            .map_err(|_| timed_out())?
    }

    /// Whether the NameNode has data connections encrypted (`dfs.encrypt.data.transfer`
    /// in its server defaults).
    async fn encrypts_data(&self) -> Result<bool> {
        Ok(self.server_defaults().await?.encrypt_data_transfer())
    }

    /// The NameNode's current data encryption key, fetched again a minute before the
    /// one held expires.
    async fn data_encryption_key(&self) -> Result<h::DataEncryptionKeyProto> {
        let mut held = self.inner.data_key.lock().await;
        let fresh =
            |k: &h::DataEncryptionKeyProto| k.expiry_date > tusk_common::now_millis() + 60_000;
        if let Some(key) = held.as_ref().filter(|k| fresh(k)) {
            return Ok(key.clone());
        }
        let r: h::GetDataEncryptionKeyResponseProto = self
            .call(
                "getDataEncryptionKey",
                &h::GetDataEncryptionKeyRequestProto {},
            )
            .await?;
        let key = r
            .data_encryption_key
            .ok_or_else(|| ClientError::InvalidArgument {
                path: String::new(),
                message: "the NameNode encrypts data transfer but gave no data encryption key"
                    .into(),
            })?;
        *held = Some(key.clone());
        Ok(key)
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

    /// Where `path`'s blocks in `offset..offset + length` are (`getBlockLocations`).
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
