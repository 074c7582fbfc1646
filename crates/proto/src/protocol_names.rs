//! The protocol names callers put in every call's `declaringClassProtocolName`, and that
//! each RPC service answers to: declared here once for servers, clients and tests.
//!
//! Hadoop's own protocols keep their Java interface names (the `protocolName` of the
//! interface's `@ProtocolInfo`) so that Hadoop clients reach Tusk's daemons; all of them
//! are at protocol version 1, the `clientProtocolVersion` every caller sends. Tusk's
//! internal protocols are named `tusk.*`.

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
/// Hadoop's ApplicationClientProtocolPB: Hadoop job clients and the `yarn` CLI →
/// ResourceManager (messages in `hadoop::yarn`).
pub const HADOOP_APPLICATION_CLIENT_PROTOCOL: &str =
    "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";
/// Hadoop's ApplicationMasterProtocolPB: Hadoop ApplicationMasters → ResourceManager.
pub const HADOOP_APPLICATION_MASTER_PROTOCOL: &str =
    "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";
/// Hadoop's ContainerManagementProtocolPB: Hadoop ApplicationMasters → NodeManagers.
pub const HADOOP_CONTAINER_MANAGEMENT_PROTOCOL: &str =
    "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";
