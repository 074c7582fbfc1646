//! Hadoop's `HAServiceProtocol` messages, laid out as `HAServiceProtocol.proto`
//! (package `hadoop.common`) declares them; the state enum's values are those of
//! tusk-proto's `HaServiceStateProto` (an enum's package does not reach the wire).

/// `HAStateChangeRequestInfoProto.reqSource`: `REQUEST_BY_USER` 0,
/// `REQUEST_BY_USER_FORCED` 1 (`haadmin --forcemanual`), `REQUEST_BY_ZKFC` 2.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HaStateChangeRequestInfoProto {
    #[prost(int32, required, tag = "1")]
    pub req_source: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct MonitorHealthRequestProto {}
#[derive(Clone, PartialEq, prost::Message)]
pub struct MonitorHealthResponseProto {}

/// `TransitionToActiveRequestProto`, `TransitionToStandbyRequestProto` and
/// `TransitionToObserverRequestProto` alike.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TransitionRequestProto {
    #[prost(message, required, tag = "1")]
    pub req_info: HaStateChangeRequestInfoProto,
}
#[derive(Clone, PartialEq, prost::Message)]
pub struct TransitionResponseProto {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetServiceStatusRequestProto {}
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetServiceStatusResponseProto {
    #[prost(
        enumeration = "tusk_proto::hdfs::HaServiceStateProto",
        required,
        tag = "1"
    )]
    pub state: i32,
    #[prost(bool, optional, tag = "2")]
    pub ready_to_become_active: Option<bool>,
    #[prost(string, optional, tag = "3")]
    pub not_ready_reason: Option<String>,
}
