//! SQL over Tusk's DFS: Apache DataFusion reading and writing `hdfs://` paths through an
//! object store on Tusk's own client, the `tusk sql` shell's engine, and the TPC-H workload.

pub mod cluster;
pub mod error;
pub mod registry;
pub mod session;
pub mod store;
pub mod tpch;

pub use datafusion;
pub use error::{Result, SqlError};
pub use session::SqlSession;
pub use store::DfsStore;
