//! ClientProtocol messages of HDFS's administrative calls, laid out as
//! `ClientNamenodeProtocol.proto` declares them (tusk-proto does not carry them yet).

#[derive(Clone, PartialEq, prost::Message)]
pub struct MetaSaveRequestProto {
    #[prost(string, required, tag = "1")]
    pub filename: String,
}
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetaSaveResponseProto {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SetBalancerBandwidthRequestProto {
    #[prost(int64, required, tag = "1")]
    pub bandwidth: i64,
}
#[derive(Clone, PartialEq, prost::Message)]
pub struct SetBalancerBandwidthResponseProto {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RestoreFailedStorageRequestProto {
    #[prost(string, required, tag = "1")]
    pub arg: String,
}
#[derive(Clone, PartialEq, prost::Message)]
pub struct RestoreFailedStorageResponseProto {
    #[prost(bool, required, tag = "1")]
    pub result: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FinalizeUpgradeRequestProto {}
#[derive(Clone, PartialEq, prost::Message)]
pub struct FinalizeUpgradeResponseProto {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct UpgradeStatusRequestProto {}
#[derive(Clone, PartialEq, prost::Message)]
pub struct UpgradeStatusResponseProto {
    #[prost(bool, required, tag = "1")]
    pub upgrade_finalized: bool,
}

/// `RollingUpgradeActionProto`: QUERY = 1, START = 2, FINALIZE = 3.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RollingUpgradeRequestProto {
    #[prost(int32, required, tag = "1")]
    pub action: i32,
}
/// With no rolling upgrade the optional `rollingUpgradeInfo` (tag 1) is absent.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RollingUpgradeResponseProto {}

pub const ROLLING_UPGRADE_START: i32 = 2;

/// The requests and replies of the refresh protocols (all without fields).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RefreshProto {}
