//! The protocol names callers put in every call's `declaringClassProtocolName`, and that
//! each RPC service answers to: declared here once for servers, clients and tests.
//!
//! Hadoop's own protocols keep their Java interface names so that Hadoop clients reach
//! Tusk's daemons; Tusk's internal protocols are named `tusk.*`.

/// ClientNamenodeProtocol: clients → NameNode.
pub const CLIENT_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";
/// ClientDatanodeProtocol: clients → a DataNode's IPC port.
pub const CLIENT_DATANODE_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol";
/// Tusk's DataNode → NameNode protocol (registration, heartbeats, block reports).
pub const DATANODE_PROTOCOL: &str = "tusk.DatanodeProtocol";
/// NodeManagers → ResourceManager (registration, heartbeats).
pub const RESOURCE_TRACKER_PROTOCOL: &str = "tusk.ResourceTrackerProtocol";
/// Job clients → ResourceManager.
pub const APPLICATION_CLIENT_PROTOCOL: &str = "tusk.ApplicationClientProtocol";
/// ApplicationMasters → ResourceManager.
pub const APPLICATION_MASTER_PROTOCOL: &str = "tusk.ApplicationMasterProtocol";
/// ApplicationMasters → NodeManagers (start, stop and query containers).
pub const CONTAINER_MANAGEMENT_PROTOCOL: &str = "tusk.ContainerManagementProtocol";
