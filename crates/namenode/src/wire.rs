//! Between the wire and the namesystem: conversions of protobuf messages to and from
//! domain types, used by the RPC server and WebHDFS alike, and the messages
//! tusk-proto does not carry, laid out as Hadoop's `.proto` files declare them.
//!
//! - `acl`: ACL entries and statuses to and from the namespace's.
//! - `policy`: the built-in storage policies as `BlockStoragePolicyProto`.
//! - `quota`: quota usage as `QuotaUsageProto`.
//! - `admin`: ClientProtocol's administrative calls (metaSave, setBalancerBandwidth,
//!   restoreFailedStorage, the upgrade calls, the refresh protocols).
//! - `ha_service`: Hadoop's HAServiceProtocol (what `hdfs haadmin` calls).

pub mod acl;
pub mod admin;
pub mod ha_service;
pub mod policy;
pub mod quota;
