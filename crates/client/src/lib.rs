//! The file system client used by the CLI, the benchmarks and tests.
//!
//! Layout:
//! - `options`: [`ClientOptions`] (NameNode address or HA nameservice, failover,
//!   replication mode, sizes).
//! - `connection`: [`DfsClient`] itself, its one shared NameNode connection (many calls
//!   in flight), lease renewal, and the calls readers and writers make through it.
//! - `client`: every namespace call of [`DfsClient`] as a future.
//! - `writer`: [`FileWriter`], packets to DataNodes in `pipeline` or `parallel` mode,
//!   with recovery when a DataNode dies mid-write.
//! - `adaptive`: the `adaptive` mode's per-block choice between the two, and the
//!   client's measurements of its own link.
//! - `reader`: [`FileReader`], checksum-verifying reads that fail over between replicas
//!   and report corrupt ones.
//! - `admin`: safe mode, block statistics, `refreshNodes`, open and corrupt files.
//! - `glob`: operands as Hadoop reads them (`hdfs://` URIs, normalised paths) and glob
//!   patterns expanded against the cluster as Hadoop's `Globber` does.
//! - `checksum`: `getFileChecksum` (BLOCK_CHECKSUM per block, folded as HDFS does).
//! - `short_circuit`: reads of replicas on this host from their own files, the
//!   descriptors passed over the DataNode's domain socket.
//! - `blocking`: [`BlockingClient`], the same API for non-async callers.
//! - `status`: [`FileStatus`]. `error`: [`ClientError`].
//! - `meta`: ACLs, extended attributes, quotas, storage policies, access checks,
//!   batched listings.
//! - `snapshot`: the snapshot calls (allow, create, delete, rename, listings, diff).

pub mod adaptive;
pub mod admin;
pub mod blocking;
pub mod checksum;
pub mod client;
mod connection;
pub mod error;
pub mod glob;
pub mod meta;
pub mod options;
pub mod reader;
mod short_circuit;
pub mod snapshot;
pub mod status;
pub mod writer;

pub use blocking::BlockingClient;
pub use client::{CreateOptions, DfsClient};
pub use error::ClientError;
pub use options::{ClientOptions, HaNameservice, ReplaceDatanodePolicy, ReplicationMode};
pub use reader::FileReader;
pub use status::FileStatus;
pub use tusk_datatransfer::{ChecksumCombineMode, FileChecksum};
pub use tusk_rpc::{ConnectRetry, FailoverOptions, HadoopException};
pub use writer::FileWriter;
