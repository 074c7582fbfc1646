//! Wire messages.
//!
//! Layout:
//! - `proto/rpc_header.proto`: Hadoop IPC framing (`hadoop.common`).
//! - `proto/hdfs.proto`, `proto/client_namenode.proto`, `proto/datatransfer.proto`:
//!   HDFS messages (`hadoop.hdfs`) with Hadoop's field numbers.
//! - `proto/client_datanode.proto`: ClientDatanodeProtocol, the DataNode's IPC port.
//! - `proto/tusk_internal.proto`: Tusk's own DataNode → NameNode protocol (`tusk.internal`).
//! - `proto/yarn_protos.proto`, `proto/yarn_service_protos.proto`,
//!   `proto/yarn_security_token.proto`: Hadoop YARN's records, the requests and responses of
//!   ApplicationClientProtocolPB / ApplicationMasterProtocolPB /
//!   ContainerManagementProtocolPB, and YARN's token identifiers (`hadoop.yarn`), with
//!   Hadoop 3.4.2's field numbers and defaults. Rust names follow prost's casing, so
//!   `URLProto` is `UrlProto`, `NMTokenProto` `NmTokenProto`, `AMRMTokenIdentifierProto`
//!   `AmrmTokenIdentifierProto`.
//! - `proto/tusk_yarn.proto`: Tusk's own YARN protocols (`tusk.yarn`).
//! - `protocol_names`: the name of every RPC protocol, as callers send it and services
//!   answer to it.

#![allow(clippy::all)]

pub mod protocol_names;

pub mod hadoop {
    pub mod common {
        include!(concat!(env!("OUT_DIR"), "/hadoop.common.rs"));
    }
    pub mod hdfs {
        include!(concat!(env!("OUT_DIR"), "/hadoop.hdfs.rs"));
    }
    pub mod yarn {
        include!(concat!(env!("OUT_DIR"), "/hadoop.yarn.rs"));
    }
}

pub mod tusk {
    pub mod internal {
        include!(concat!(env!("OUT_DIR"), "/tusk.internal.rs"));
    }
    pub mod yarn {
        include!(concat!(env!("OUT_DIR"), "/tusk.yarn.rs"));
    }
}

pub use hadoop::common;
pub use hadoop::hdfs;
pub use tusk::internal;
