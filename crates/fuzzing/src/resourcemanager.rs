//! The ResourceManager's decoders: the request of every ResourceTracker,
//! ApplicationClient and ApplicationMaster method run through the real services
//! against a fresh in-process cluster per input.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tusk_proto::protocol_names::{
    APPLICATION_CLIENT_PROTOCOL, APPLICATION_MASTER_PROTOCOL, RESOURCE_TRACKER_PROTOCOL,
};
use tusk_proto::tusk::yarn as y;
use tusk_resourcemanager::ids;
use tusk_resourcemanager::{ResourceManagerOptions, SchedulerKind, Timing};
use tusk_rpc::{CallContext, RpcService};

use crate::calls;
use crate::outcome::settle;

/// Every method, with its protocol, in selector order.
pub const METHODS: &[(&str, &str)] = &[
    (RESOURCE_TRACKER_PROTOCOL, "registerNodeManager"),
    (RESOURCE_TRACKER_PROTOCOL, "nodeHeartbeat"),
    (RESOURCE_TRACKER_PROTOCOL, "containerFinished"),
    (APPLICATION_CLIENT_PROTOCOL, "submitApplication"),
    (APPLICATION_CLIENT_PROTOCOL, "getApplicationReport"),
    (APPLICATION_CLIENT_PROTOCOL, "killApplication"),
    (APPLICATION_CLIENT_PROTOCOL, "listApplications"),
    (APPLICATION_CLIENT_PROTOCOL, "getClusterNodes"),
    (APPLICATION_MASTER_PROTOCOL, "registerApplicationMaster"),
    (APPLICATION_MASTER_PROTOCOL, "allocate"),
    (APPLICATION_MASTER_PROTOCOL, "finishApplicationMaster"),
];

/// The cluster start time in every id, fixed so inputs can name applications.
pub const CLUSTER_TS: u64 = 1_700_000_000_000;

/// Runs one input: the first byte picks the cluster (bit 0: fair scheduler, else fifo;
/// bit 1: classic timing, else event-driven), the rest is a sequence of [`calls`]
/// whose selectors pick a method modulo the method count.
pub fn methods(data: &[u8]) {
    let _ = method_results(data);
}

/// [`methods`], returning each call's reply or why it has none (the exception, or
/// that it is still held).
pub fn method_results(data: &[u8]) -> Vec<Result<Bytes, String>> {
    let Some((&setup, rest)) = data.split_first() else {
        return Vec::new();
    };
    let options = ResourceManagerOptions {
        scheduler: if setup & 1 != 0 {
            SchedulerKind::Fair
        } else {
            SchedulerKind::Fifo
        },
        timing: if setup & 2 != 0 {
            Timing::Classic
        } else {
            Timing::EventDriven
        },
        ..Default::default()
    };
    let services = tusk_resourcemanager::standalone_services(options, CLUSTER_TS);
    RUNTIME.with(|runtime| {
        let _time = runtime.enter();
        calls::split(rest)
            .map(|(selector, payload)| call(&services, selector, payload))
            .collect()
    })
}

thread_local! {
    /// Time for the calls that may be held (heartbeats, allocate); each call is polled
    /// once, and one still held is dropped as a closed connection drops it.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
}

fn call(services: &[Arc<dyn RpcService>], selector: u8, payload: &[u8]) -> Result<Bytes, String> {
    let (protocol, method) = METHODS[selector as usize % METHODS.len()];
    let service = services
        .iter()
        .find(|s| s.protocol() == protocol)
        .expect("every protocol served");
    let ctx = CallContext {
        user: Arc::from("fuzz"),
        client_id: Bytes::from_static(&[0x33; 16]),
        call_id: 0,
        peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
        token: None,
        ugi: Arc::from("fuzz (auth:SIMPLE)"),
        principal: None,
        caller_context: None,
    };
    settle(
        service
            .clone()
            .call(ctx, method, Bytes::copy_from_slice(payload)),
    )
}

/// The selector that calls `method`.
pub fn selector(method: &str) -> u8 {
    METHODS
        .iter()
        .position(|(_, m)| *m == method)
        .unwrap_or_else(|| panic!("unknown method {method}")) as u8
}

/// One seed per method on an empty cluster, and one application's whole life on a
/// one-node cluster, under each scheduler and timing.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let app = ids::application_id(CLUSTER_TS, 1);
    let attempt = ids::attempt_id(&app, 1);
    let am_container = ids::container_id(&app, 1, 1);
    let task_container = ids::container_id(&app, 1, 2);
    let node = "node-1:8041";
    let resource = |memory_mb, vcores| y::Resource { memory_mb, vcores };
    let status = |id: &str, state: y::ContainerState| y::ContainerStatus {
        container_id: id.into(),
        state: state as i32,
        exit_status: 0,
        diagnostics: String::new(),
        peak_rss_bytes: 1 << 20,
    };
    let register_node = y::RegisterNodeManagerRequest {
        node_id: node.into(),
        host: "node-1".into(),
        rack: "/rack-1".into(),
        rpc_port: 8041,
        shuffle_port: 13562,
        http_port: 8042,
        resource: Some(resource(8192, 8)),
        ..Default::default()
    };
    let heartbeat = |running: Vec<y::ContainerStatus>, completed: Vec<y::ContainerStatus>| {
        y::NodeHeartbeatRequest {
            node_id: node.into(),
            running,
            completed,
            free: Some(resource(4096, 4)),
            status: Some(y::NodeStatus {
                disk_utilization_pct: 10.0,
                net_rx_bytes_per_sec: 1e6,
                potential_reception_bytes: 0,
                cpu_pct: 20.0,
                link_bits_per_sec: 1_000_000_000,
                disk_max_volume_pct: 30.0,
                disk_volume_pct: vec![30.0, 0.0],
            }),
            wait_ms: 0,
            log_aggregation: Vec::new(),
        }
    };
    let submit = y::SubmitApplicationRequest {
        name: "wordcount".into(),
        queue: "default".into(),
        application_type: "MAPREDUCE".into(),
        am_resource: Some(resource(1024, 1)),
        am_launch: Some(y::ContainerLaunchContext {
            command: "tusk".into(),
            args: vec!["am".into()],
            env: [("TUSK_JOB".to_string(), "job_1".to_string())].into(),
            working_dir: String::new(),
        }),
        max_attempts: 2,
    };
    let register_am = y::RegisterApplicationMasterRequest {
        attempt_id: attempt.clone(),
        host: "node-1".into(),
        rpc_port: 0,
        tracking_url: String::new(),
    };
    let allocate = y::AllocateRequest {
        attempt_id: attempt.clone(),
        asks: vec![y::ContainerAsk {
            ask_id: 1,
            priority: 20,
            resource: Some(resource(1024, 1)),
            nodes: vec!["node-1".into()],
            racks: vec!["/rack-1".into()],
            strict_locality: false,
            count: 2,
            task_kind: y::TaskKind::Map as i32,
            volumes: vec![0],
        }],
        cancel_asks: vec![],
        releases: vec![],
        progress: 0.1,
        wait_ms: 0,
    };
    let finished = y::ContainerFinishedRequest {
        node_id: node.into(),
        completed: vec![status(
            &task_container,
            y::ContainerState::ContainerComplete,
        )],
    };
    let finish_am = y::FinishApplicationMasterRequest {
        attempt_id: attempt.clone(),
        final_status: y::FinalApplicationStatus::FinalSucceeded as i32,
        diagnostics: "done".into(),
        tracking_url: String::new(),
    };
    let report = y::GetApplicationReportRequest {
        application_id: app.clone(),
    };
    let list = y::ListApplicationsRequest {
        states: vec![y::ApplicationState::AppRunning as i32],
        queue: String::new(),
    };
    let kill = y::KillApplicationRequest {
        application_id: app.clone(),
        diagnostics: "killed by fuzz".into(),
    };
    let life = vec![
        (
            selector("registerNodeManager"),
            register_node.encode_to_vec(),
        ),
        (selector("submitApplication"), submit.encode_to_vec()),
        (
            selector("nodeHeartbeat"),
            heartbeat(vec![], vec![]).encode_to_vec(),
        ),
        (
            selector("nodeHeartbeat"),
            heartbeat(
                vec![status(&am_container, y::ContainerState::ContainerRunning)],
                vec![],
            )
            .encode_to_vec(),
        ),
        (
            selector("registerApplicationMaster"),
            register_am.encode_to_vec(),
        ),
        (selector("allocate"), allocate.encode_to_vec()),
        (
            selector("nodeHeartbeat"),
            heartbeat(
                vec![
                    status(&am_container, y::ContainerState::ContainerRunning),
                    status(&task_container, y::ContainerState::ContainerRunning),
                ],
                vec![],
            )
            .encode_to_vec(),
        ),
        (selector("containerFinished"), finished.encode_to_vec()),
        (selector("getApplicationReport"), report.encode_to_vec()),
        (selector("listApplications"), list.encode_to_vec()),
        (selector("getClusterNodes"), vec![]),
        (
            selector("finishApplicationMaster"),
            finish_am.encode_to_vec(),
        ),
        (selector("killApplication"), kill.encode_to_vec()),
    ];
    let mut seeds = Vec::new();
    for setup in 0..4u8 {
        let mut data = vec![setup];
        data.extend(calls::join(&life));
        seeds.push((format!("application-life-{setup}"), data));
    }
    for (i, (selector, payload)) in life.iter().enumerate() {
        let method = METHODS[*selector as usize].1;
        let mut data = vec![0];
        data.extend(calls::join(&[(*selector, payload.clone())]));
        seeds.push((format!("{i:02}-{method}"), data));
    }
    seeds
}
