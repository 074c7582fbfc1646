//! Three NameNodes of one nameservice sharing their edit log through the replicated
//! log, in one process on port 0: one becomes active and the others answer client calls
//! with `StandbyException`; every acknowledged change reaches the standbys; when the
//! active stops, another takes over within seconds holding every acknowledged change;
//! the stopped one restarts as a standby and catches up.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_ha::ReplicatedLogOptions;
use tusk_namenode::ha::HaOptions;
use tusk_namenode::server::HaServiceProtocolService;
use tusk_namenode::wire::ha_service as ha_wire;
use tusk_namenode::{NameNode, NameNodeOptions};
use tusk_proto::hdfs as h;
use tusk_proto::protocol_names::CLIENT_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions, RpcError};

const IDS: [&str; 3] = ["nn1", "nn2", "nn3"];

/// One NameNode's options: its own name directory, the shared membership.
fn options(root: &Path, index: usize, voters: &BTreeMap<u64, String>) -> NameNodeOptions {
    let dir = root.join(IDS[index]);
    NameNodeOptions {
        name_dirs: vec![dir.join("name")],
        permissions_enabled: false,
        safemode_extension: Duration::ZERO,
        ha: Some(HaOptions {
            nameservice: "ns1".into(),
            namenode_id: IDS[index].into(),
            namenode_ids: IDS.iter().map(|s| s.to_string()).collect(),
            log: ReplicatedLogOptions {
                node_id: index as u64 + 1,
                voters: voters.clone(),
                dir: dir.join("ha-log"),
                heartbeat_interval_ms: 100,
                election_timeout_min_ms: 500,
                election_timeout_max_ms: 1000,
                append_timeout_ms: 3000,
                snapshot_after_entries: u64::MAX,
                ..Default::default()
            },
            links: Default::default(),
        }),
        ..Default::default()
    }
}

struct Member {
    options: NameNodeOptions,
    rpc: String,
    log_address: String,
    running: Option<(NameNode, Shutdown)>,
}

impl Member {
    async fn start(&mut self, rpc: TcpListener, log: TcpListener) {
        let stop = Shutdown::new();
        let nn = NameNode::start_ha(self.options.clone(), rpc, Some(log), stop.clone())
            .await
            .expect("namenode starts");
        self.running = Some((nn, stop));
    }

    /// Starts again on the same ports.
    async fn restart(&mut self) {
        let rpc = TcpListener::bind(&self.rpc).await.unwrap();
        let log = TcpListener::bind(&self.log_address).await.unwrap();
        self.start(rpc, log).await;
    }

    async fn stop(&mut self) {
        let (nn, stop) = self.running.take().expect("running");
        stop.trigger();
        nn.wait().await.expect("a clean stop");
    }

    fn client(&self) -> RpcClient {
        RpcClient::new(
            self.rpc.clone(),
            RpcClientOptions {
                user: "alice".into(),
                protocol: CLIENT_PROTOCOL.into(),
                ..Default::default()
            },
        )
    }

    fn has(&self, path: &str) -> bool {
        let (nn, _) = self.running.as_ref().expect("running");
        nn.namesystem
            .read()
            .ns
            .resolve(path)
            .ok()
            .flatten()
            .is_some()
    }
}

async fn group(root: &Path) -> Vec<Member> {
    let mut listeners = Vec::new();
    let mut voters = BTreeMap::new();
    for i in 0..IDS.len() {
        let rpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let log = TcpListener::bind("127.0.0.1:0").await.unwrap();
        voters.insert(i as u64 + 1, log.local_addr().unwrap().to_string());
        listeners.push((rpc, log));
    }
    let all: Vec<NameNodeOptions> = (0..IDS.len()).map(|i| options(root, i, &voters)).collect();
    NameNode::format_ha(&all, Some("CID-ha-test")).unwrap();
    let mut members = Vec::new();
    for (options, (rpc, log)) in all.into_iter().zip(listeners) {
        let mut m = Member {
            options,
            rpc: rpc.local_addr().unwrap().to_string(),
            log_address: log.local_addr().unwrap().to_string(),
            running: None,
        };
        m.start(rpc, log).await;
        members.push(m);
    }
    members
}

async fn state(client: &RpcClient) -> Option<h::HaServiceStateProto> {
    let resp: h::HaServiceStateResponseProto = client
        .call("getHAServiceState", &h::HaServiceStateRequestProto {})
        .await
        .ok()?;
    h::HaServiceStateProto::try_from(resp.state).ok()
}

/// Polls until exactly one running member says it is active; returns its index.
async fn wait_active(members: &[Member], within: Duration) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let mut active = Vec::new();
        for (i, m) in members.iter().enumerate() {
            if m.running.is_some()
                && state(&m.client()).await == Some(h::HaServiceStateProto::Active)
            {
                active.push(i);
            }
        }
        if active.len() == 1 {
            return active[0];
        }
        assert!(
            Instant::now() < deadline,
            "no single active NameNode within {within:?} (active: {active:?})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn poll(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn mkdirs(client: &RpcClient, path: &str) -> Result<(), RpcError> {
    let _: h::MkdirsResponseProto = client
        .call(
            "mkdirs",
            &h::MkdirsRequestProto {
                src: path.into(),
                masked: h::FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standby_takes_over_with_every_acknowledged_change_and_the_old_active_rejoins() {
    let root = tempfile::tempdir().unwrap();
    let mut members = group(root.path()).await;
    let first = wait_active(&members, Duration::from_secs(15)).await;

    // Standbys refuse client calls with HDFS's StandbyException.
    let standby = (first + 1) % members.len();
    match mkdirs(&members[standby].client(), "/refused").await {
        Err(RpcError::Remote(e)) => {
            assert_eq!(e.class, "org.apache.hadoop.ipc.StandbyException", "{e:?}")
        }
        other => panic!("a standby answered mkdirs with {other:?}"),
    }

    let active = members[first].client();
    for i in 0..50 {
        mkdirs(&active, &format!("/d{i}")).await.unwrap();
    }
    for (i, m) in members.iter().enumerate() {
        poll(
            &format!("member {i} holding /d49"),
            Duration::from_secs(10),
            || m.has("/d49"),
        )
        .await;
        assert!(!m.has("/refused"));
    }

    let stopped_at = Instant::now();
    members[first].stop().await;
    let second = wait_active(&members, Duration::from_secs(15)).await;
    let took = stopped_at.elapsed();
    eprintln!("failover took {took:?}");
    assert_ne!(second, first);
    let active = members[second].client();
    for i in 0..50 {
        let info: h::GetFileInfoResponseProto = active
            .call(
                "getFileInfo",
                &h::GetFileInfoRequestProto {
                    src: format!("/d{i}"),
                },
            )
            .await
            .unwrap();
        assert!(info.fs.is_some(), "/d{i} survived the failover");
    }
    mkdirs(&active, "/after").await.unwrap();

    members[first].restart().await;
    poll(
        "the old active catching up",
        Duration::from_secs(15),
        || members[first].has("/after") && members[first].has("/d0"),
    )
    .await;
    assert_eq!(
        state(&members[first].client()).await,
        Some(h::HaServiceStateProto::Standby)
    );
    for m in &mut members {
        if m.running.is_some() {
            m.stop().await;
        }
    }
}

fn ha_service_client(member: &Member) -> RpcClient {
    RpcClient::new(
        member.rpc.clone(),
        RpcClientOptions {
            user: "alice".into(),
            protocol: HaServiceProtocolService::PROTOCOL.into(),
            ..Default::default()
        },
    )
}

async fn service_status(member: &Member) -> ha_wire::GetServiceStatusResponseProto {
    ha_service_client(member)
        .call(
            "getServiceStatus",
            &ha_wire::GetServiceStatusRequestProto {},
        )
        .await
        .unwrap()
}

async fn to_standby(member: &Member, req_source: i32) -> Result<(), RpcError> {
    let _: ha_wire::TransitionResponseProto = ha_service_client(member)
        .call(
            "transitionToStandby",
            &ha_wire::TransitionRequestProto {
                req_info: ha_wire::HaStateChangeRequestInfoProto { req_source },
            },
        )
        .await?;
    Ok(())
}

/// Hadoop's HAServiceProtocol, as `hdfs haadmin` calls it: every NameNode reports its
/// state and readiness; a plain user's transition is refused (failover is automatic);
/// a forced `transitionToStandby` on the active hands the role over, and the changes
/// made before are all on the new active.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn haadmin_reports_states_and_a_forced_transition_to_standby_hands_the_active_role_over() {
    let root = tempfile::tempdir().unwrap();
    let mut members = group(root.path()).await;
    let first = wait_active(&members, Duration::from_secs(15)).await;
    for (i, m) in members.iter().enumerate() {
        let status = service_status(m).await;
        let expected = if i == first {
            h::HaServiceStateProto::Active
        } else {
            h::HaServiceStateProto::Standby
        };
        assert_eq!(status.state, expected as i32, "member {i}");
        assert_eq!(status.ready_to_become_active, Some(true), "member {i}");
    }
    let _: ha_wire::MonitorHealthResponseProto = ha_service_client(&members[first])
        .call("monitorHealth", &ha_wire::MonitorHealthRequestProto {})
        .await
        .unwrap();
    mkdirs(&members[first].client(), "/before-handover")
        .await
        .unwrap();

    const BY_USER: i32 = 0;
    const BY_USER_FORCED: i32 = 1;
    match to_standby(&members[first], BY_USER).await {
        Err(RpcError::Remote(e)) => assert_eq!(
            e.class, "org.apache.hadoop.security.AccessControlException",
            "{e:?}"
        ),
        other => panic!("a manual transition without --forcemanual: {other:?}"),
    }
    assert_eq!(
        state(&members[first].client()).await,
        Some(h::HaServiceStateProto::Active)
    );
    // A standby asked to stand by is one already.
    to_standby(&members[(first + 1) % 3], BY_USER_FORCED)
        .await
        .unwrap();

    to_standby(&members[first], BY_USER_FORCED).await.unwrap();
    let second = wait_active(&members, Duration::from_secs(15)).await;
    assert_ne!(
        second, first,
        "another NameNode is active after the handover"
    );
    assert!(members[second].has("/before-handover"));
    mkdirs(&members[second].client(), "/after-handover")
        .await
        .unwrap();
    assert_eq!(
        state(&members[first].client()).await,
        Some(h::HaServiceStateProto::Standby)
    );
    for m in &mut members {
        m.stop().await;
    }
}
