//! WebHDFS's wire (`/webhdfs/v1/<path>?op=...`), as Hadoop's REST API defines it, shared
//! by the NameNode's router (namespace operations, redirects) and the DataNodes' (data:
//! CREATE, OPEN). What each operation does lives with the server that runs it; this
//! crate only knows how requests and answers look.
//!
//! Layout:
//! - `op`: [`Op`], every operation name Hadoop knows, by HTTP method.
//! - `params`: [`Params`], the query parameters with Hadoop's types, defaults, ranges
//!   and error messages; `user.name` (SIMPLE auth, `dr.who` when absent) and `doas`.
//! - `path`: the file system path of a request URI, checked, and URIs back to it.
//! - `json`: Hadoop's JSON shapes (`FileStatus`, `FileStatuses`, `DirectoryListing`,
//!   `ContentSummary`, `FsServerDefaults`, `boolean`, `Path`, `Location`, ...; xattrs,
//!   storage policies, snapshot reports and block locations in `json/`).
//! - `xattr`: extended attribute names and value codecs, as Hadoop writes them.
//! - `acl`: ACL specs (`aclspec`) parsed, entries printed, as Hadoop writes them.
//! - `error`: [`WebHdfsError`], answered as `{"RemoteException":{...}}` with Hadoop's
//!   status code for the exception class.

pub mod acl;
pub mod error;
pub mod json;
pub mod op;
pub mod params;
pub mod path;
pub mod xattr;

pub use error::WebHdfsError;
pub use op::Op;
pub use params::Params;

/// Where WebHDFS is mounted on both servers.
pub const PREFIX: &str = "/webhdfs/v1";

/// The result of a WebHDFS handler.
pub type Result<T, E = WebHdfsError> = std::result::Result<T, E>;
