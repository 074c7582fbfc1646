//! Hadoop's ContainerManagementProtocolPB on the minicluster's NodeManagers, called as a
//! Hadoop AM calls it: the test plays the AM of an application submitted over Hadoop's
//! ApplicationClientProtocolPB, takes the AMRMToken from the AM container's tokens
//! file, gets containers (with container tokens and NMTokens) from the ResourceManager's
//! ApplicationMasterProtocolPB, and starts, queries and stops them on the NodeManager
//! with an NMToken connection. Waits poll a condition with a deadline. One test, ignored
//! by plain `cargo test`, has Hadoop's own Java client do the same
//! (`scripts/hadoop-sasl.sh` runs it).

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::hadoop::common::TokenProto;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::{
    HADOOP_APPLICATION_CLIENT_PROTOCOL, HADOOP_APPLICATION_MASTER_PROTOCOL,
    HADOOP_CONTAINER_MANAGEMENT_PROTOCOL,
};
use tusk_rpc::{RpcClient, RpcClientOptions, RpcError};
use tusk_security::yarn_tokens::{container_id_string, AMRM_TOKEN_KIND};
use tusk_security::Credentials;

const DEADLINE: Duration = Duration::from_secs(30);
const USER: &str = "alice";

async fn start() -> Result<MiniCluster> {
    MiniCluster::builder()
        .datanodes(0)
        .nodemanagers(2)
        .conf(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "100",
        )
        .conf("yarn.scheduler.minimum-allocation-mb", "128")
        .build()
        .await
        .map_err(anyhow::Error::from_boxed)
}

fn client(cluster: &MiniCluster, protocol: &str, token: Option<TokenProto>) -> RpcClient {
    RpcClient::new(
        cluster.yarn().rm_addr(),
        RpcClientOptions {
            user: USER.into(),
            protocol: protocol.into(),
            token,
            ..Default::default()
        },
    )
}

/// A ContainerManagementProtocolPB connection to NodeManager `i` with `token` (SIMPLE
/// without one).
fn nm_client(cluster: &MiniCluster, i: usize, token: Option<TokenProto>) -> RpcClient {
    RpcClient::new(
        cluster
            .yarn()
            .nodemanager(i)
            .rpc_addr()
            .unwrap()
            .to_string(),
        RpcClientOptions {
            user: USER.into(),
            protocol: HADOOP_CONTAINER_MANAGEMENT_PROTOCOL.into(),
            token,
            ..Default::default()
        },
    )
}

fn nm_port(cluster: &MiniCluster, i: usize) -> i32 {
    i32::from(cluster.yarn().nodemanager(i).rpc_addr().unwrap().port())
}

fn remote(e: &RpcError) -> (&str, &str) {
    match e {
        RpcError::Remote(r) => (r.class.as_str(), r.message.as_str()),
        _ => ("", ""),
    }
}

fn resource(memory: i64) -> h::ResourceProto {
    h::ResourceProto {
        memory: Some(memory),
        virtual_cores: Some(1),
        resource_value_map: vec![],
    }
}

/// Submits an application whose AM container just sleeps: the test is its AM.
async fn submit(cluster: &MiniCluster) -> Result<h::ApplicationIdProto> {
    let yarn = client(cluster, HADOOP_APPLICATION_CLIENT_PROTOCOL, None);
    let new: h::GetNewApplicationResponseProto = yarn
        .call("getNewApplication", &h::GetNewApplicationRequestProto {})
        .await?;
    let app = new.application_id.context("an application id")?;
    let context = h::ApplicationSubmissionContextProto {
        application_id: Some(app),
        application_name: Some("played AM".into()),
        queue: Some("default".into()),
        am_container_spec: Some(h::ContainerLaunchContextProto {
            command: vec!["sleep 600".into()],
            ..Default::default()
        }),
        am_container_resource_request: vec![h::ResourceRequestProto {
            resource_name: Some("*".into()),
            capability: Some(resource(256)),
            num_containers: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    let _: h::SubmitApplicationResponseProto = yarn
        .call(
            "submitApplication",
            &h::SubmitApplicationRequestProto {
                application_submission_context: Some(context),
            },
        )
        .await?;
    Ok(app)
}

fn attempt(app: h::ApplicationIdProto) -> h::ApplicationAttemptIdProto {
    h::ApplicationAttemptIdProto {
        application_id: Some(app),
        attempt_id: Some(1),
    }
}

/// The AMRMToken in the tokens file of `app`'s AM container, on whichever node runs it.
async fn am_rm_token(cluster: &MiniCluster, app: h::ApplicationIdProto) -> Result<TokenProto> {
    let am = container_id_string(&h::ContainerIdProto {
        app_id: Some(app),
        app_attempt_id: Some(attempt(app)),
        id: Some(1),
    });
    let app_dir = am.replacen("container_", "application_", 1);
    let app_dir = &app_dir[..app_dir.rfind("_01_").context("an AM id")?];
    let files: Vec<PathBuf> = (0..cluster.yarn().nodemanager_count())
        .map(|i| {
            cluster
                .yarn()
                .nodemanager_local_dir(i)
                .join("usercache")
                .join(USER)
                .join("appcache")
                .join(app_dir)
                .join(&am)
                .join("container_tokens")
        })
        .collect();
    Ok(wait_for("the AM's tokens file", DEADLINE, || async {
        let bytes = files.iter().find_map(|f| std::fs::read(f).ok())?;
        let credentials = Credentials::decode(&bytes).ok()?;
        let token = credentials.tokens_of_kind(AMRM_TOKEN_KIND).next().cloned();
        token
    })
    .await?)
}

/// What the played AM has been given by the ResourceManager so far.
#[derive(Default)]
struct Given {
    containers: Vec<h::ContainerProto>,
    nm_tokens: Vec<h::NmTokenProto>,
    completed: Vec<h::ContainerStatusProto>,
}

/// The test as an application's AM on ApplicationMasterProtocolPB.
struct Am {
    app: h::ApplicationIdProto,
    rm: RpcClient,
    given: Mutex<Given>,
}

impl Am {
    /// Submits an application and registers as its AM.
    async fn start(cluster: &MiniCluster) -> Result<Am> {
        let app = submit(cluster).await?;
        let token = am_rm_token(cluster, app).await?;
        let rm = client(cluster, HADOOP_APPLICATION_MASTER_PROTOCOL, Some(token));
        let _: h::RegisterApplicationMasterResponseProto = rm
            .call(
                "registerApplicationMaster",
                &h::RegisterApplicationMasterRequestProto::default(),
            )
            .await?;
        Ok(Am {
            app,
            rm,
            given: Mutex::default(),
        })
    }

    async fn allocate(&self, ask: Vec<h::ResourceRequestProto>) -> Result<()> {
        let resp: h::AllocateResponseProto = self
            .rm
            .call(
                "allocate",
                &h::AllocateRequestProto {
                    ask,
                    ..Default::default()
                },
            )
            .await?;
        let mut given = self.given.lock().unwrap();
        given.containers.extend(resp.allocated_containers);
        given.nm_tokens.extend(resp.nm_tokens);
        given.completed.extend(resp.completed_container_statuses);
        Ok(())
    }

    /// Asks for `n` containers on node `node_id` alone (priority `priority`), and waits
    /// for them.
    async fn containers_on(
        &self,
        node_id: &str,
        priority: i32,
        n: i32,
    ) -> Result<Vec<h::ContainerProto>> {
        let ask = |name: &str, relax: bool| h::ResourceRequestProto {
            priority: Some(h::PriorityProto {
                priority: Some(priority),
            }),
            resource_name: Some(name.into()),
            capability: Some(resource(128)),
            num_containers: Some(n),
            relax_locality: Some(relax),
            ..Default::default()
        };
        self.allocate(vec![ask(node_id, true), ask("*", false)])
            .await?;
        let of_priority = |given: &Given| -> Vec<h::ContainerProto> {
            given
                .containers
                .iter()
                .filter(|c| c.priority.as_ref().map(|p| p.priority()) == Some(priority))
                .cloned()
                .collect()
        };
        Ok(wait_for("containers", DEADLINE, || async {
            self.allocate(vec![]).await.ok()?;
            let got = of_priority(&self.given.lock().unwrap());
            (got.len() >= n as usize).then_some(got)
        })
        .await?)
    }

    /// The NMToken the ResourceManager gave for the node at RPC port `port`.
    fn nm_token(&self, port: i32) -> Result<TokenProto> {
        let given = self.given.lock().unwrap();
        given
            .nm_tokens
            .iter()
            .find(|t| t.node_id.as_ref().map(|n| n.port()) == Some(port))
            .and_then(|t| t.token.clone())
            .context("an NMToken for the node")
    }

    /// Waits for the ResourceManager to tell the AM that `id` completed.
    async fn completed(&self, id: Option<h::ContainerIdProto>) -> Result<h::ContainerStatusProto> {
        Ok(
            wait_for("a completed container status", DEADLINE, || async {
                self.allocate(vec![]).await.ok()?;
                let given = self.given.lock().unwrap();
                given
                    .completed
                    .iter()
                    .find(|s| s.container_id == id)
                    .cloned()
            })
            .await?,
        )
    }
}

fn start_request(c: &h::ContainerProto, command: &str) -> h::StartContainerRequestProto {
    h::StartContainerRequestProto {
        container_launch_context: Some(h::ContainerLaunchContextProto {
            command: vec![command.into()],
            ..Default::default()
        }),
        container_token: c.container_token.clone(),
    }
}

async fn start_containers(
    nm: &RpcClient,
    requests: Vec<h::StartContainerRequestProto>,
) -> Result<h::StartContainersResponseProto> {
    Ok(nm
        .call(
            "startContainers",
            &h::StartContainersRequestProto {
                start_container_request: requests,
            },
        )
        .await?)
}

async fn stop_containers(
    nm: &RpcClient,
    id: h::ContainerIdProto,
) -> Result<h::StopContainersResponseProto> {
    Ok(nm
        .call(
            "stopContainers",
            &h::StopContainersRequestProto {
                container_id: vec![id],
            },
        )
        .await?)
}

async fn statuses(
    nm: &RpcClient,
    ids: &[Option<h::ContainerIdProto>],
) -> Result<h::GetContainerStatusesResponseProto> {
    Ok(nm
        .call(
            "getContainerStatuses",
            &h::GetContainerStatusesRequestProto {
                container_id: ids.iter().flatten().copied().collect(),
            },
        )
        .await?)
}

/// Waits until NodeManager `nm` reports `id` in `state`.
async fn status_in(
    nm: &RpcClient,
    id: Option<h::ContainerIdProto>,
    state: h::ContainerStateProto,
) -> Result<h::ContainerStatusProto> {
    Ok(wait_for("a container status", DEADLINE, || async {
        let resp = statuses(nm, &[id]).await.ok()?;
        resp.status.into_iter().find(|s| s.state() == state)
    })
    .await?)
}

/// (class name, message) of each failed request, by container.
fn failures(
    failed: &[h::ContainerExceptionMapProto],
) -> Vec<(Option<h::ContainerIdProto>, String, String)> {
    failed
        .iter()
        .map(|f| {
            let e = f.exception.clone().unwrap_or_default();
            (
                f.container_id,
                e.class_name().to_string(),
                e.message().to_string(),
            )
        })
        .collect()
}

fn id_string(c: &h::ContainerProto) -> String {
    container_id_string(&c.id.unwrap_or_default())
}

/// A container started with its container token and the AM's NMToken runs (its job
/// token goes to `mapreduce_shuffle`, whose port the reply carries); the
/// ResourceManager learns from the node's heartbeats that it runs and that it ended,
/// frees its resource and tells the AM; the AM's stop ends a running one with
/// KILLED_BY_APPMASTER.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_started_with_their_tokens_run_and_the_am_hears_how_they_ended() -> Result<()> {
    let cluster = start().await?;
    let am = Am::start(&cluster).await?;
    let used = |cluster: &MiniCluster| {
        cluster
            .yarn()
            .resourcemanager()
            .nodes()
            .into_iter()
            .find(|n| n.node_id == "nm0")
            .and_then(|n| n.used)
            .map(|r| r.memory_mb)
    };
    let used_before = used(&cluster);
    let containers = am.containers_on("nm0", 20, 2).await?;
    assert_eq!(
        used(&cluster).zip(used_before).map(|(a, b)| a - b),
        Some(256)
    );
    let nm = nm_client(&cluster, 0, Some(am.nm_token(nm_port(&cluster, 0))?));
    let (writer, sleeper) = (&containers[0], &containers[1]);

    let out = cluster.base_dir().join("ran");
    // Hadoop's launch script puts the command in double quotes as it is.
    let mut writes = start_request(
        writer,
        &format!("echo $CONTAINER_ID $USER > {}", out.display()),
    );
    // The job token for the shuffle, as MapReduce's AM sends it.
    let mut job_token = Vec::new();
    tusk_security::writable::write_token(
        &mut job_token,
        &TokenProto {
            identifier: b"job".to_vec().into(),
            password: b"shuffle secret".to_vec().into(),
            kind: "mapreduce.job".into(),
            service: "job".into(),
        },
    );
    if let Some(ctx) = writes.container_launch_context.as_mut() {
        ctx.service_data.push(h::StringBytesMapProto {
            key: Some("mapreduce_shuffle".into()),
            value: Some(job_token.into()),
        });
    }
    let shuffle = cluster.yarn().nodemanager(0).hadoop_shuffle();
    assert_eq!(shuffle.applications(), 0);
    let resp = start_containers(&nm, vec![writes, start_request(sleeper, "sleep 600")]).await?;
    assert_eq!(
        resp.succeeded_requests,
        vec![writer.id.unwrap(), sleeper.id.unwrap()]
    );
    assert!(resp.failed_requests.is_empty(), "{resp:?}");
    // The shuffle knows the application, and the AM learns its port.
    assert_eq!(shuffle.applications(), 1);
    let port = i32::from(cluster.yarn().nodemanager(0).shuffle_addr().port());
    assert_eq!(
        resp.services_meta_data,
        vec![h::StringBytesMapProto {
            key: Some("mapreduce_shuffle".into()),
            value: Some(port.to_be_bytes().to_vec().into()),
        }]
    );

    // The writer runs as the application's user and exits 0; the AM hears of it.
    let done = status_in(&nm, writer.id, h::ContainerStateProto::CComplete).await?;
    assert_eq!(done.exit_status(), 0);
    assert_eq!(done.capability.as_ref().map(|r| r.memory()), Some(128));
    assert_eq!(
        done.container_sub_state(),
        h::ContainerSubStateProto::CssDone
    );
    assert_eq!(
        std::fs::read_to_string(&out)?.trim(),
        format!("{} {USER}", id_string(writer))
    );
    let told = am.completed(writer.id).await?;
    assert_eq!(told.exit_status(), 0);
    assert_eq!(told.state(), h::ContainerStateProto::CComplete);

    // Starting it again is refused with Hadoop's message.
    let again = start_containers(&nm, vec![start_request(writer, "true")]).await?;
    assert_eq!(
        failures(&again.failed_requests),
        vec![(
            writer.id,
            "org.apache.hadoop.yarn.exceptions.YarnException".to_string(),
            format!(
                "Container {} already is running on this node!!",
                id_string(writer)
            )
        )]
    );

    // The sleeper runs, and the ResourceManager's container report says so.
    let running = status_in(&nm, sleeper.id, h::ContainerStateProto::CRunning).await?;
    assert_eq!(running.exit_status(), -1000, "INVALID while it runs");
    let yarn = client(&cluster, HADOOP_APPLICATION_CLIENT_PROTOCOL, None);
    wait_for(
        "the ResourceManager to see it running",
        DEADLINE,
        || async {
            let report: h::GetContainerReportResponseProto = yarn
                .call(
                    "getContainerReport",
                    &h::GetContainerReportRequestProto {
                        container_id: sleeper.id,
                    },
                )
                .await
                .ok()?;
            (report.container_report?.container_state() == h::ContainerStateProto::CRunning)
                .then_some(())
        },
    )
    .await?;

    // The AM stops it: KILLED_BY_APPMASTER on the node and in the AM's allocate.
    let stopped = stop_containers(&nm, sleeper.id.unwrap()).await?;
    assert_eq!(stopped.succeeded_requests, vec![sleeper.id.unwrap()]);
    let killed = status_in(&nm, sleeper.id, h::ContainerStateProto::CComplete).await?;
    assert_eq!(killed.exit_status(), -105);
    assert!(
        killed
            .diagnostics()
            .starts_with("Container killed by the ApplicationMaster."),
        "{killed:?}"
    );
    assert_eq!(am.completed(sleeper.id).await?.exit_status(), -105);
    // Both have ended: the ResourceManager freed what they held on the node.
    wait_for("the node's resources freed", DEADLINE, || async {
        (used(&cluster) == used_before).then_some(())
    })
    .await?;

    // A container this node never ran is not the node's to stop.
    let mut unknown = sleeper.id.unwrap();
    unknown.id = Some(99);
    let resp = stop_containers(&nm, unknown).await?;
    assert_eq!(
        failures(&resp.failed_requests)[0].2,
        format!(
            "Container {} is not handled by this NodeManager",
            container_id_string(&unknown)
        )
    );
    Ok(())
}

/// Without an NMToken, or with a forged one, the protocol is closed; a container token
/// that is forged, for another node or missing fails its own request with Hadoop's
/// exception while the others in the call start; service data for a service the node
/// does not run is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_fail_their_request_and_the_node_keeps_serving() -> Result<()> {
    let cluster = start().await?;
    let am = Am::start(&cluster).await?;
    let here = am.containers_on("nm0", 20, 2).await?;
    let there = am.containers_on("nm1", 21, 1).await?;
    let token = am.nm_token(nm_port(&cluster, 0))?;

    let simple = start_containers(&nm_client(&cluster, 0, None), vec![])
        .await
        .expect_err("SIMPLE is refused");
    assert_eq!(
        remote(simple.downcast_ref::<RpcError>().context("an RPC error")?).0,
        "org.apache.hadoop.security.AccessControlException"
    );
    let mut forged = token.clone();
    forged.password = b"not the password".to_vec().into();
    start_containers(&nm_client(&cluster, 0, Some(forged)), vec![])
        .await
        .expect_err("a forged NMToken is refused");

    let nm = nm_client(&cluster, 0, Some(token));
    let mut forged = start_request(&here[0], "true");
    if let Some(t) = forged.container_token.as_mut() {
        t.password = vec![0; 20].into();
    }
    let mut no_token = start_request(&here[1], "true");
    no_token.container_token = None;
    let resp = start_containers(
        &nm,
        vec![
            forged,
            start_request(&there[0], "true"),
            no_token,
            start_request(&here[1], "sleep 600"),
        ],
    )
    .await?;
    assert_eq!(resp.succeeded_requests, vec![here[1].id.unwrap()]);
    let node = |i| format!("127.0.0.1:{}", nm_port(&cluster, i));
    let invalid_token = "org.apache.hadoop.security.token.SecretManager$InvalidToken".to_string();
    assert_eq!(
        failures(&resp.failed_requests),
        vec![
            (
                here[0].id,
                invalid_token.clone(),
                format!("Invalid container token used for starting container on : {}", node(0))
            ),
            (
                there[0].id,
                invalid_token,
                format!(
                    "Given Container {} identifier is not valid for current Node manager. Expected : {} Found : {}",
                    id_string(&there[0]),
                    node(0),
                    node(1)
                )
            ),
            (
                None,
                "org.apache.hadoop.yarn.exceptions.YarnException".to_string(),
                "Invalid ContainerToken".to_string()
            ),
        ]
    );
    let trace = resp.failed_requests[0]
        .exception
        .as_ref()
        .map(|e| e.trace());
    assert!(
        trace.is_some_and(|t| t.starts_with(
            "org.apache.hadoop.security.token.SecretManager$InvalidToken: Invalid container token"
        )),
        "{trace:?}"
    );
    status_in(&nm, here[1].id, h::ContainerStateProto::CRunning).await?;
    let failed = statuses(&nm, &[here[0].id]).await?;
    assert!(failed.status.is_empty(), "the forged one never started");

    // Service data for a service this node does not run.
    let mut request = start_request(&here[0], "true");
    if let Some(ctx) = request.container_launch_context.as_mut() {
        ctx.service_data.push(h::StringBytesMapProto {
            key: Some("spark_shuffle".into()),
            value: Some(b"secret".to_vec().into()),
        });
    }
    let resp = start_containers(&nm, vec![request]).await?;
    assert_eq!(
        failures(&resp.failed_requests),
        vec![(
            here[0].id,
            "org.apache.hadoop.yarn.exceptions.InvalidAuxServiceException".to_string(),
            "The auxService:spark_shuffle does not exist".to_string()
        )]
    );
    Ok(())
}

/// An AM's NMToken reaches its own application's containers only: another
/// application's container cannot be started, stopped or queried with it. The calls
/// Tusk does not serve are refused with YarnException.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_application_s_containers_are_refused() -> Result<()> {
    let cluster = start().await?;
    let mine = Am::start(&cluster).await?;
    let theirs = Am::start(&cluster).await?;
    mine.containers_on("nm0", 20, 1).await?;
    let other = &theirs.containers_on("nm0", 20, 1).await?[0];
    let nm = nm_client(&cluster, 0, Some(mine.nm_token(nm_port(&cluster, 0))?));
    let their_nm = nm_client(&cluster, 0, Some(theirs.nm_token(nm_port(&cluster, 0))?));

    let my_attempt = tusk_security::yarn_tokens::attempt_id_string(&attempt(mine.app));
    let their_attempt = tusk_security::yarn_tokens::attempt_id_string(&attempt(theirs.app));
    let resp = start_containers(&nm, vec![start_request(other, "sleep 600")]).await?;
    assert_eq!(
        failures(&resp.failed_requests),
        vec![(
            other.id,
            "org.apache.hadoop.yarn.exceptions.YarnException".to_string(),
            format!(
                "Unauthorized request to start container.\nNMToken for application attempt : {my_attempt} was used for starting container with container token issued for application attempt : {their_attempt}"
            )
        )]
    );
    // Its own AM starts it; the other AM can neither see nor stop it.
    let resp = start_containers(&their_nm, vec![start_request(other, "sleep 600")]).await?;
    assert_eq!(resp.succeeded_requests, vec![other.id.unwrap()]);
    status_in(&their_nm, other.id, h::ContainerStateProto::CRunning).await?;
    let resp = statuses(&nm, &[other.id]).await?;
    assert!(resp.status.is_empty());
    assert_eq!(
        failures(&resp.failed_requests)[0].2,
        format!(
            "{my_attempt} attempted to get status for non-application container : {}",
            id_string(other)
        )
    );
    let resp = stop_containers(&nm, other.id.unwrap()).await?;
    assert_eq!(
        failures(&resp.failed_requests)[0].2,
        format!(
            "{my_attempt} attempted to stop non-application container : {}",
            id_string(other)
        )
    );
    status_in(&their_nm, other.id, h::ContainerStateProto::CRunning).await?;

    for method in [
        "increaseContainersResource",
        "signalToContainer",
        "localize",
        "reInitializeContainer",
    ] {
        let e = nm
            .call::<_, h::StopContainersResponseProto>(
                method,
                &h::StopContainersRequestProto::default(),
            )
            .await
            .expect_err("refused");
        let (class, message) = remote(&e);
        assert_eq!(
            class, "org.apache.hadoop.yarn.exceptions.YarnException",
            "{method}"
        );
        assert!(
            message.ends_with("is not supported by Tusk's NodeManager"),
            "{message}"
        );
    }
    Ok(())
}

/// A restarted ResourceManager has new keys; the NodeManager takes them when it
/// registers again (resync), so the tokens the new ResourceManager hands out work. A
/// container the previous ResourceManager allocated is refused with Hadoop's
/// InvalidContainerException, though its tokens still verify.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_of_a_restarted_resourcemanager_are_accepted_after_the_resync() -> Result<()> {
    let mut cluster = start().await?;
    let before = Am::start(&cluster).await?;
    let old = before.containers_on("nm0", 20, 1).await?.remove(0);
    let old_token = before.nm_token(nm_port(&cluster, 0))?;
    cluster
        .yarn_mut()
        .restart_resourcemanager()
        .await
        .map_err(anyhow::Error::from_boxed)?;
    let rm = cluster.yarn().resourcemanager();
    wait_for("both nodes registered again", DEADLINE, || async {
        (rm.nodes().len() == 2).then_some(())
    })
    .await?;
    let am = Am::start(&cluster).await?;
    let container = &am.containers_on("nm0", 20, 1).await?[0];
    let nm = nm_client(&cluster, 0, Some(am.nm_token(nm_port(&cluster, 0))?));
    let resp = start_containers(&nm, vec![start_request(container, "true")]).await?;
    assert_eq!(
        resp.succeeded_requests,
        vec![container.id.unwrap()],
        "{resp:?}"
    );
    assert_eq!(am.completed(container.id).await?.exit_status(), 0);

    let nm = nm_client(&cluster, 0, Some(old_token));
    let resp = start_containers(&nm, vec![start_request(&old, "true")]).await?;
    assert_eq!(
        failures(&resp.failed_requests),
        vec![(
            old.id,
            "org.apache.hadoop.yarn.exceptions.InvalidContainerException".to_string(),
            format!(
                "\nContainer {} rejected as it is allocated by a previous RM",
                id_string(&old)
            )
        )]
    );
    Ok(())
}

/// Hadoop 3.4.2's own ContainerManagementProtocol client (`HadoopContainerManager` in
/// `scripts/hadoop-sasl/`), holding the NMToken and container tokens in a token file,
/// starts, queries and stops a container here; it reads a bad token's failure as
/// Hadoop's `InvalidToken` and the shuffle's port from the reply; without a token it is
/// refused. Needs Java and Hadoop's jars: `scripts/hadoop-sasl.sh` runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Java and Hadoop 3.4.2's jars: scripts/hadoop-sasl.sh runs it"]
async fn hadoop_s_own_client_starts_queries_and_stops_a_container() -> Result<()> {
    let classpath = std::env::var("HADOOP_SASL_CLASSPATH").context(
        "HADOOP_SASL_CLASSPATH names the Java classpath (scripts/hadoop-sasl.sh sets it)",
    )?;
    let cluster = start().await?;
    let am = Am::start(&cluster).await?;
    let containers = am.containers_on("nm0", 20, 2).await?;
    let (run, forged) = (&containers[0], &containers[1]);
    let mut credentials = Credentials::new();
    credentials.add_token("nm", am.nm_token(nm_port(&cluster, 0))?);
    credentials.add_token("run", run.container_token.clone().context("a token")?);
    let mut bad = forged.container_token.clone().context("a token")?;
    bad.password = vec![7; 20].into();
    credentials.add_token("forged", bad);
    let file = cluster.base_dir().join("am_tokens");
    credentials.write_file(&file)?;

    let addr = cluster
        .yarn()
        .nodemanager(0)
        .rpc_addr()
        .unwrap()
        .to_string();
    let args = [
        "-Djava.net.preferIPv4Stack=true".to_string(),
        "-cp".into(),
        classpath,
        "HadoopContainerManager".into(),
        "run".into(),
        addr.clone(),
        file.display().to_string(),
    ];
    let out =
        tokio::task::spawn_blocking(move || std::process::Command::new("java").args(args).output())
            .await??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    anyhow::ensure!(
        out.status.success(),
        "HadoopContainerManager failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let (run, forged) = (id_string(run), id_string(forged));
    let shuffle_port = cluster.yarn().nodemanager(0).shuffle_addr().port();
    assert_eq!(
        lines,
        vec![
            format!("started {run}"),
            format!("failed {forged} org.apache.hadoop.security.token.SecretManager$InvalidToken: Invalid container token used for starting container on : {addr}"),
            format!("meta mapreduce_shuffle {shuffle_port}"),
            format!("status {run} RUNNING -1000"),
            format!("stopped {run}"),
            format!("status {run} COMPLETE -105"),
            "simple refused org.apache.hadoop.security.AccessControlException".to_string(),
        ]
    );
    Ok(())
}
