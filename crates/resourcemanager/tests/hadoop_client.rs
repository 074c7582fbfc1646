//! Hadoop's ApplicationClientProtocolPB on the minicluster's ResourceManager, called
//! through an RPC client as Hadoop's YarnClient calls it. A NodeManager is played by
//! the test over `tusk.ResourceTrackerProtocol`, so what the ResourceManager tells it to
//! launch can be read directly. Waits poll a condition with a deadline.

#[path = "support/recovery.rs"]
mod recovery;

use std::time::Duration;

use anyhow::{Context, Result};
use prost::Message;
use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::hadoop::common::TokenProto;
use tusk_proto::hadoop::yarn as h;
use tusk_proto::protocol_names::{
    HADOOP_APPLICATION_CLIENT_PROTOCOL, HADOOP_APPLICATION_MASTER_PROTOCOL,
    RESOURCE_TRACKER_PROTOCOL,
};
use tusk_proto::tusk::yarn as y;
use tusk_rpc::{RpcClient, RpcClientOptions, RpcError};
use tusk_security::yarn_tokens::AMRM_TOKEN_KIND;
use tusk_security::Credentials;

use recovery::{recovery_conf, restart_resourcemanager};

const DEADLINE: Duration = Duration::from_secs(20);
const USER: &str = "alice";

async fn start() -> Result<MiniCluster> {
    start_with(&[]).await
}

/// As [`start`], with the extra keys in `conf`.
async fn start_with(conf: &[(&str, &str)]) -> Result<MiniCluster> {
    let mut builder = MiniCluster::builder()
        .datanodes(0)
        .nodemanagers(0)
        .conf(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "100",
        )
        .conf("yarn.scheduler.minimum-allocation-mb", "128")
        .conf("yarn.scheduler.maximum-allocation-mb", "2048")
        .conf("yarn.resourcemanager.am.max-attempts", "2");
    for (key, value) in conf {
        builder = builder.conf(key, *value);
    }
    builder.build().await.map_err(anyhow::Error::from_boxed)
}

fn client(cluster: &MiniCluster, protocol: &str) -> RpcClient {
    RpcClient::new(
        cluster.yarn().rm_addr(),
        RpcClientOptions {
            user: USER.into(),
            protocol: protocol.into(),
            ..Default::default()
        },
    )
}

fn hadoop(cluster: &MiniCluster) -> RpcClient {
    client(cluster, HADOOP_APPLICATION_CLIENT_PROTOCOL)
}

/// Registers a NodeManager named `node` (4 GB, 8 vcores) played by the test.
async fn register_node(tracker: &RpcClient, node: &str) -> Result<()> {
    register_node_holding(tracker, node, Vec::new()).await?;
    Ok(())
}

/// As [`register_node`], the node reporting `running` containers (as after a resync).
async fn register_node_holding(
    tracker: &RpcClient,
    node: &str,
    running: Vec<y::NodeContainerStatus>,
) -> Result<y::RegisterNodeManagerResponse> {
    Ok(tracker
        .call(
            "registerNodeManager",
            &y::RegisterNodeManagerRequest {
                node_id: node.into(),
                host: "127.0.0.1".into(),
                rack: "/default-rack".into(),
                rpc_port: 45454,
                shuffle_port: 13562,
                http_port: 8042,
                resource: Some(y::Resource {
                    memory_mb: 4096,
                    vcores: 8,
                }),
                running,
                completed: Vec::new(),
            },
        )
        .await?)
}

async fn heartbeat(tracker: &RpcClient, node: &str) -> Result<y::NodeHeartbeatResponse> {
    Ok(tracker
        .call(
            "nodeHeartbeat",
            &y::NodeHeartbeatRequest {
                node_id: node.into(),
                ..Default::default()
            },
        )
        .await?)
}

/// Heartbeats as `node` until the ResourceManager hands it a container to launch.
async fn next_launch(tracker: &RpcClient, node: &str) -> Result<y::ContainerToLaunch> {
    Ok(wait_for("a container to launch", DEADLINE, || async {
        let resp: y::NodeHeartbeatResponse = tracker
            .call(
                "nodeHeartbeat",
                &y::NodeHeartbeatRequest {
                    node_id: node.into(),
                    ..Default::default()
                },
            )
            .await
            .ok()?;
        resp.launch.into_iter().next()
    })
    .await?)
}

fn remote_class(e: &RpcError) -> (&str, &str) {
    match e {
        RpcError::Remote(r) => (r.class.as_str(), r.message.as_str()),
        _ => ("", ""),
    }
}

fn am_spec() -> h::ContainerLaunchContextProto {
    h::ContainerLaunchContextProto {
        local_resources: vec![h::StringLocalResourceMapProto {
            key: Some("job.jar".into()),
            value: Some(h::LocalResourceProto {
                resource: Some(h::UrlProto {
                    scheme: Some("hdfs".into()),
                    host: Some("nn".into()),
                    port: Some(8020),
                    file: Some("/user/alice/.staging/job.jar".into()),
                    user_info: None,
                }),
                size: Some(1234),
                timestamp: Some(42),
                r#type: Some(h::LocalResourceTypeProto::Pattern as i32),
                visibility: Some(h::LocalResourceVisibilityProto::Application as i32),
                pattern: Some("(?:classes/|lib/).*".into()),
                should_be_uploaded_to_shared_cache: None,
            }),
        }],
        environment: vec![h::StringStringMapProto {
            key: Some("CLASSPATH".into()),
            value: Some("job.jar/*".into()),
        }],
        command: vec!["$JAVA_HOME/bin/java org.apache.hadoop.mapreduce.v2.app.MRAppMaster".into()],
        tokens: Some(submitted_credentials().encode().into()),
        ..Default::default()
    }
}

/// What the client puts in the AM's credentials: a DFS delegation token.
fn submitted_credentials() -> Credentials {
    let mut c = Credentials::new();
    c.add_token(
        "ha-hdfs:nn",
        TokenProto {
            identifier: b"dt".to_vec().into(),
            password: b"pw".to_vec().into(),
            kind: "HDFS_DELEGATION_TOKEN".into(),
            service: "ha-hdfs:nn".into(),
        },
    );
    c
}

/// getNewApplication then submitApplication, as YarnClient does.
async fn submit_hadoop_app(hadoop: &RpcClient, queue: &str) -> Result<h::ApplicationIdProto> {
    let new: h::GetNewApplicationResponseProto = hadoop
        .call("getNewApplication", &h::GetNewApplicationRequestProto {})
        .await?;
    assert_eq!(
        new.maximum_capability.as_ref().map(|r| r.memory()),
        Some(2048)
    );
    let app_id = new.application_id.context("an application id")?;
    let _: h::SubmitApplicationResponseProto = hadoop
        .call("submitApplication", &submission(app_id, queue))
        .await?;
    Ok(app_id)
}

/// A MapReduce-like submission: 512 MB for the AM, launched from [`am_spec`].
fn submission(app_id: h::ApplicationIdProto, queue: &str) -> h::SubmitApplicationRequestProto {
    let ctx = h::ApplicationSubmissionContextProto {
        application_id: Some(app_id),
        application_name: Some("word count".into()),
        queue: Some(queue.into()),
        am_container_spec: Some(am_spec()),
        application_type: Some("MAPREDUCE".into()),
        am_container_resource_request: vec![h::ResourceRequestProto {
            resource_name: Some("*".into()),
            capability: Some(h::ResourceProto {
                memory: Some(512),
                virtual_cores: Some(1),
                resource_value_map: vec![],
            }),
            num_containers: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    };
    h::SubmitApplicationRequestProto {
        application_submission_context: Some(ctx),
    }
}

async fn report(
    hadoop: &RpcClient,
    app: h::ApplicationIdProto,
) -> Result<h::ApplicationReportProto> {
    let resp: h::GetApplicationReportResponseProto = hadoop
        .call(
            "getApplicationReport",
            &h::GetApplicationReportRequestProto {
                application_id: Some(app),
            },
        )
        .await?;
    resp.application_report.context("a report")
}

#[tokio::test]
async fn a_hadoop_submission_launches_its_am_hadoop_style() -> Result<()> {
    let cluster = start().await?;
    let hadoop = hadoop(&cluster);
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;

    let app_id = submit_hadoop_app(&hadoop, "default").await?;
    let launch = next_launch(&tracker, "n1").await?;
    let app = format!(
        "application_{}_{:04}",
        app_id.cluster_timestamp(),
        app_id.id()
    );
    assert_eq!(launch.application_id, app);
    assert_eq!(launch.user, USER);
    assert_eq!(launch.resource.map(|r| r.memory_mb), Some(512));
    let ctx = h::ContainerLaunchContextProto::decode(launch.hadoop_launch.clone())
        .context("hadoop_launch is a ContainerLaunchContextProto")?;
    let submitted = am_spec();
    assert_eq!(ctx.command, submitted.command);
    assert_eq!(ctx.local_resources, submitted.local_resources);
    // The client's credentials reach the AM with the attempt's AMRMToken added.
    let credentials = Credentials::decode(ctx.tokens()).context("credentials")?;
    assert_eq!(
        credentials.token("ha-hdfs:nn"),
        submitted_credentials().token("ha-hdfs:nn")
    );
    assert_eq!(credentials.tokens_of_kind(AMRM_TOKEN_KIND).count(), 1);
    let env = |k: &str| {
        ctx.environment
            .iter()
            .find(|e| e.key() == k)
            .map(|e| e.value().to_string())
    };
    assert_eq!(env("CLASSPATH").as_deref(), Some("job.jar/*"));
    assert_eq!(env("MAX_APP_ATTEMPTS").as_deref(), Some("2"));
    // Spark's AM builds its web UI filter's proxy URL from it.
    assert_eq!(
        env("APPLICATION_WEB_PROXY_BASE"),
        Some(format!("/proxy/{app}"))
    );
    let submit_time: i64 = env("APP_SUBMIT_TIME_ENV").context("submit time")?.parse()?;

    let r = report(&hadoop, app_id).await?;
    assert_eq!(r.user(), USER);
    assert_eq!(r.queue(), "default");
    assert_eq!(r.name(), "word count");
    assert_eq!(r.application_type(), "MAPREDUCE");
    assert_eq!(
        r.yarn_application_state(),
        h::YarnApplicationStateProto::Accepted
    );
    assert_eq!(
        r.final_application_status(),
        h::FinalApplicationStatusProto::AppUndefined
    );
    assert_eq!(r.start_time(), submit_time);
    assert_eq!(r.host(), "127.0.0.1");
    let usage = r.app_resource_usage.clone().context("usage")?;
    assert_eq!(usage.num_used_containers(), 1);
    assert_eq!(usage.used_resources.map(|u| u.memory()), Some(512));

    // The attempt and its AM container, as the cluster knows them.
    let attempts: h::GetApplicationAttemptsResponseProto = hadoop
        .call(
            "getApplicationAttempts",
            &h::GetApplicationAttemptsRequestProto {
                application_id: Some(app_id),
            },
        )
        .await?;
    let [attempt] = attempts.application_attempts.as_slice() else {
        anyhow::bail!("one attempt: {attempts:?}");
    };
    assert_eq!(
        attempt.yarn_application_attempt_state(),
        h::YarnApplicationAttemptStateProto::AppAttemptLaunched
    );
    let am_container = attempt.am_container_id.context("AM container")?;
    assert_eq!(am_container.id(), 1);
    let containers: h::GetContainersResponseProto = hadoop
        .call(
            "getContainers",
            &h::GetContainersRequestProto {
                application_attempt_id: attempt.application_attempt_id,
            },
        )
        .await?;
    assert_eq!(containers.containers.len(), 1);
    let c: h::GetContainerReportResponseProto = hadoop
        .call(
            "getContainerReport",
            &h::GetContainerReportRequestProto {
                container_id: Some(am_container),
            },
        )
        .await?;
    let c = c.container_report.context("container report")?;
    assert_eq!(c.node_id.as_ref().map(|n| n.port()), Some(45454));
    assert_eq!(c.node_http_address(), "http://127.0.0.1:8042");

    // Submitting the same id again is a retry, not a second application.
    let _: h::SubmitApplicationResponseProto = hadoop
        .call("submitApplication", &submission(app_id, "default"))
        .await?;
    let apps: h::GetApplicationsResponseProto = hadoop
        .call(
            "getApplications",
            &h::GetApplicationsRequestProto::default(),
        )
        .await?;
    assert_eq!(apps.applications.len(), 1);

    // Killed through the cluster: Tusk's own protocol agrees.
    let killed: h::KillApplicationResponseProto = hadoop
        .call(
            "forceKillApplication",
            &h::KillApplicationRequestProto {
                application_id: Some(app_id),
                diagnostics: None,
            },
        )
        .await?;
    assert!(killed.is_kill_completed());
    let r = report(&hadoop, app_id).await?;
    assert_eq!(
        r.yarn_application_state(),
        h::YarnApplicationStateProto::Killed
    );
    assert_eq!(
        r.final_application_status(),
        h::FinalApplicationStatusProto::AppKilled
    );
    let tusk = cluster.yarn().client().report(&app).await?;
    assert_eq!(tusk.state, y::ApplicationState::AppKilled as i32);
    Ok(())
}

#[tokio::test]
async fn tusk_applications_are_listed_with_hadoops_filters() -> Result<()> {
    let cluster = start().await?;
    let hadoop = hadoop(&cluster);
    let tusk_app = cluster
        .yarn()
        .client()
        .submit(&y::SubmitApplicationRequest {
            name: "sleep".into(),
            queue: "batch".into(),
            application_type: "MAPREDUCE".into(),
            am_resource: Some(y::Resource {
                memory_mb: 128,
                vcores: 1,
            }),
            ..Default::default()
        })
        .await?;
    submit_hadoop_app(&hadoop, "default").await?;

    let list = |r: h::GetApplicationsRequestProto| {
        let hadoop = &hadoop;
        async move {
            let resp: h::GetApplicationsResponseProto = hadoop.call("getApplications", &r).await?;
            anyhow::Ok(
                resp.applications
                    .iter()
                    .map(|a| a.name().to_string())
                    .collect::<Vec<_>>(),
            )
        }
    };
    assert_eq!(list(Default::default()).await?.len(), 2);
    let batch = list(h::GetApplicationsRequestProto {
        queues: vec!["batch".into()],
        ..Default::default()
    })
    .await?;
    assert_eq!(batch, ["sleep"]);
    let by_type = list(h::GetApplicationsRequestProto {
        application_types: vec!["mapreduce".into()],
        ..Default::default()
    })
    .await?;
    assert_eq!(by_type.len(), 2, "types compare without case");
    let accepted = list(h::GetApplicationsRequestProto {
        application_states: vec![h::YarnApplicationStateProto::Accepted as i32],
        users: vec![USER.into()],
        limit: Some(1),
        ..Default::default()
    })
    .await?;
    assert_eq!(accepted.len(), 1);
    let finished = list(h::GetApplicationsRequestProto {
        application_states: vec![h::YarnApplicationStateProto::Finished as i32],
        ..Default::default()
    })
    .await?;
    assert!(finished.is_empty());

    let hadoop_id = h::ApplicationIdProto {
        id: tusk_app.rsplit('_').next().map(|s| s.parse().unwrap()),
        cluster_timestamp: tusk_app.split('_').nth(1).map(|s| s.parse().unwrap()),
    };
    let r = report(&hadoop, hadoop_id).await?;
    assert_eq!(r.queue(), "batch");
    assert_eq!(
        r.user(),
        tusk_common::current_user(),
        "the Tusk client's user"
    );
    Ok(())
}

#[tokio::test]
async fn nodes_metrics_and_queues() -> Result<()> {
    let cluster = start().await?;
    let hadoop = hadoop(&cluster);
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;

    let nodes: h::GetClusterNodesResponseProto = hadoop
        .call(
            "getClusterNodes",
            &h::GetClusterNodesRequestProto::default(),
        )
        .await?;
    let [node] = nodes.node_reports.as_slice() else {
        anyhow::bail!("one node: {nodes:?}");
    };
    assert_eq!(node.node_state(), h::NodeStateProto::NsRunning);
    assert_eq!(node.http_address(), "127.0.0.1:8042");
    assert_eq!(node.capability.as_ref().map(|c| c.memory()), Some(4096));
    assert_eq!(node.num_containers(), 0);
    let lost: h::GetClusterNodesResponseProto = hadoop
        .call(
            "getClusterNodes",
            &h::GetClusterNodesRequestProto {
                node_states: vec![h::NodeStateProto::NsLost as i32],
            },
        )
        .await?;
    assert!(lost.node_reports.is_empty());

    let metrics: h::GetClusterMetricsResponseProto = hadoop
        .call("getClusterMetrics", &h::GetClusterMetricsRequestProto {})
        .await?;
    assert_eq!(metrics.cluster_metrics.map(|m| m.num_active_nms()), Some(1));

    let queue = |name: &str| h::GetQueueInfoRequestProto {
        queue_name: Some(name.into()),
        include_applications: Some(true),
        ..Default::default()
    };
    let default: h::GetQueueInfoResponseProto =
        hadoop.call("getQueueInfo", &queue("default")).await?;
    let default = default.queue_info.context("the default queue")?;
    assert_eq!(default.queue_name(), "default");
    assert_eq!(default.capacity(), 1.0);
    assert_eq!(default.state(), h::QueueStateProto::QRunning);
    let missing: h::GetQueueInfoResponseProto = hadoop.call("getQueueInfo", &queue("nope")).await?;
    assert!(missing.queue_info.is_none());

    let acls: h::GetQueueUserAclsInfoResponseProto = hadoop
        .call("getQueueUserAcls", &h::GetQueueUserAclsInfoRequestProto {})
        .await?;
    let default_acls = acls
        .queue_user_acls
        .iter()
        .find(|q| q.queue_name() == "default")
        .context("default queue ACLs")?;
    assert_eq!(default_acls.user_acls.len(), 2);
    Ok(())
}

#[tokio::test]
async fn unknown_ids_and_unsupported_calls_get_hadoops_exceptions() -> Result<()> {
    let cluster = start().await?;
    let hadoop = hadoop(&cluster);
    let absent = h::ApplicationIdProto {
        id: Some(99),
        cluster_timestamp: Some(1),
    };
    let e = report(&hadoop, absent).await.unwrap_err();
    let e = e.downcast_ref::<RpcError>().context("an RPC error")?;
    assert_eq!(
        remote_class(e),
        (
            "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
            "Application with id 'application_1_0099' doesn't exist in RM. Please check that the job submission was successful."
        )
    );
    let e = hadoop
        .call::<_, h::KillApplicationResponseProto>(
            "forceKillApplication",
            &h::KillApplicationRequestProto {
                application_id: Some(absent),
                diagnostics: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&e).0,
        "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"
    );
    let e = hadoop
        .call::<_, h::GetContainerReportResponseProto>(
            "getContainerReport",
            &h::GetContainerReportRequestProto {
                container_id: Some(h::ContainerIdProto {
                    app_id: Some(absent),
                    app_attempt_id: Some(h::ApplicationAttemptIdProto {
                        application_id: Some(absent),
                        attempt_id: Some(1),
                    }),
                    id: Some(1),
                }),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&e),
        (
            "org.apache.hadoop.yarn.exceptions.ContainerNotFoundException",
            "Container with id 'container_1_0099_01_000001' doesn't exist in RM."
        )
    );

    // Refused by name, with the class Hadoop's ResourceManager refuses them with.
    for (method, class) in [
        (
            "getNewReservation",
            "org.apache.hadoop.yarn.exceptions.YarnException",
        ),
        (
            "moveApplicationAcrossQueues",
            "org.apache.hadoop.yarn.exceptions.YarnException",
        ),
        ("getDelegationToken", "java.io.IOException"),
        (
            "noSuchCall",
            "org.apache.hadoop.ipc.RpcNoSuchMethodException",
        ),
    ] {
        let e = hadoop.call_raw(method, &[]).await.unwrap_err();
        assert_eq!(remote_class(&e).0, class, "{method}");
    }
    let labels: h::GetClusterNodeLabelsResponseProto = hadoop
        .call(
            "getClusterNodeLabels",
            &h::GetClusterNodeLabelsRequestProto {},
        )
        .await?;
    assert!(labels.node_labels.is_empty());

    // An id this ResourceManager never gave out is not accepted.
    let e = hadoop
        .call::<_, h::SubmitApplicationResponseProto>(
            "submitApplication",
            &h::SubmitApplicationRequestProto {
                application_submission_context: Some(h::ApplicationSubmissionContextProto {
                    application_id: Some(absent),
                    am_container_spec: Some(am_spec()),
                    ..Default::default()
                }),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        remote_class(&e).0,
        "org.apache.hadoop.yarn.exceptions.YarnException"
    );
    Ok(())
}

/// A recovering cluster (`conf` on top, its state store in `store`) that launched a
/// Hadoop application's AM on node `n1`, then had its ResourceManager restarted: the
/// cluster and the AM's first launch.
async fn restarted_after_an_am_launch(
    store: &std::path::Path,
    conf: &[(&str, &str)],
) -> Result<(MiniCluster, y::ContainerToLaunch)> {
    let mut cluster = start_with(&[recovery_conf(store).as_slice(), conf].concat()).await?;
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;
    submit_hadoop_app(&hadoop(&cluster), "default").await?;
    let first = next_launch(&tracker, "n1").await?;
    restart_resourcemanager(&mut cluster).await?;
    Ok((cluster, first))
}

#[tokio::test]
async fn a_restarted_resourcemanager_launches_a_hadoop_am_hadoop_style_again_when_no_node_reports_it(
) -> Result<()> {
    let store = tempfile::tempdir()?;
    let (cluster, first) = restarted_after_an_am_launch(
        store.path(),
        &[("yarn.nm.liveness-monitor.expiry-interval-ms", "1000")],
    )
    .await?;
    // The new ResourceManager does not know the node until it registers again; the node
    // does not report the AM's container, so once the expiry interval has passed the
    // AM is taken as lost and a new attempt launched.
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;
    let second = next_launch(&tracker, "n1").await?;
    assert_eq!(second.application_id, first.application_id);
    assert_ne!(second.container_id, first.container_id, "a new attempt");
    assert!(
        second.container_id.contains("_02_"),
        "attempt 2: {}",
        second.container_id
    );
    assert_eq!(second.user, USER);
    let ctx = h::ContainerLaunchContextProto::decode(second.hadoop_launch.clone())?;
    assert_eq!(ctx.command, am_spec().command);
    assert_eq!(ctx.local_resources, am_spec().local_resources);
    Ok(())
}

// ---------------------------------------------------------------- ApplicationMasterProtocolPB

/// The AMRMToken the ResourceManager put in the AM's credentials.
fn am_rm_token(launch: &y::ContainerToLaunch) -> Result<TokenProto> {
    let ctx = h::ContainerLaunchContextProto::decode(launch.hadoop_launch.clone())?;
    let credentials = Credentials::decode(ctx.tokens())?;
    let token = credentials.tokens_of_kind(AMRM_TOKEN_KIND).next();
    token.cloned().context("an AMRMToken")
}

fn am_client(cluster: &MiniCluster, token: Option<TokenProto>) -> RpcClient {
    RpcClient::new(
        cluster.yarn().rm_addr(),
        RpcClientOptions {
            user: USER.into(),
            protocol: HADOOP_APPLICATION_MASTER_PROTOCOL.into(),
            token,
            ..Default::default()
        },
    )
}

fn ask(priority: i32, name: &str, count: i32) -> h::ResourceRequestProto {
    h::ResourceRequestProto {
        priority: Some(h::PriorityProto {
            priority: Some(priority),
        }),
        resource_name: Some(name.into()),
        capability: Some(h::ResourceProto {
            memory: Some(256),
            virtual_cores: Some(1),
            resource_value_map: vec![],
        }),
        num_containers: Some(count),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_hadoop_am_registers_allocates_and_finishes_with_its_am_rm_token() -> Result<()> {
    let cluster = start().await?;
    let hadoop = hadoop(&cluster);
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;
    let app_id = submit_hadoop_app(&hadoop, "default").await?;
    let token = am_rm_token(&next_launch(&tracker, "n1").await?)?;

    // Without the token, or with a forged one, the protocol is closed.
    let simple = am_client(&cluster, None)
        .call::<_, h::RegisterApplicationMasterResponseProto>(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto::default(),
        )
        .await
        .expect_err("SIMPLE is refused");
    assert_eq!(
        remote_class(&simple).0,
        "org.apache.hadoop.security.AccessControlException"
    );
    let mut forged = token.clone();
    forged.password = b"not the password".to_vec().into();
    am_client(&cluster, Some(forged))
        .call::<_, h::RegisterApplicationMasterResponseProto>(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto::default(),
        )
        .await
        .expect_err("a forged AMRMToken is refused");

    let am = am_client(&cluster, Some(token));
    let registered: h::RegisterApplicationMasterResponseProto = am
        .call(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto {
                host: Some("am-host".into()),
                rpc_port: Some(40000),
                tracking_url: Some("http://am-host:40001".into()),
                ..Default::default()
            },
        )
        .await?;
    assert_eq!(registered.queue(), "default");
    assert_eq!(
        registered.maximum_capability.as_ref().map(|r| r.memory()),
        Some(2048)
    );
    assert!(!registered.client_to_am_token_master_key().is_empty());
    let r = report(&hadoop, app_id).await?;
    assert_eq!(
        r.yarn_application_state(),
        h::YarnApplicationStateProto::Running
    );
    assert_eq!((r.host(), r.rpc_port()), ("am-host", 40000));

    // Two maps wanted on the node's host, as a MapReduce AM's table says it.
    let first: h::AllocateResponseProto = am
        .call(
            "allocate",
            &h::AllocateRequestProto {
                ask: vec![
                    ask(20, "127.0.0.1", 2),
                    ask(20, "/default-rack", 2),
                    ask(20, "*", 2),
                ],
                response_id: Some(0),
                progress: Some(0.5),
                ..Default::default()
            },
        )
        .await?;
    assert_eq!(first.response_id(), 1);
    // Event-driven timing may allocate at once; classic waits for the node's heartbeat.
    let got = std::sync::Mutex::new(vec![first]);
    wait_for("two containers", DEADLINE, || async {
        let _: y::NodeHeartbeatResponse = tracker
            .call(
                "nodeHeartbeat",
                &y::NodeHeartbeatRequest {
                    node_id: "n1".into(),
                    ..Default::default()
                },
            )
            .await
            .ok()?;
        let resp: h::AllocateResponseProto = am
            .call(
                "allocate",
                &h::AllocateRequestProto {
                    response_id: Some(1),
                    ..Default::default()
                },
            )
            .await
            .ok()?;
        let mut got = got.lock().unwrap();
        got.push(resp);
        let n: usize = got.iter().map(|r| r.allocated_containers.len()).sum();
        (n >= 2).then_some(())
    })
    .await?;
    let responses = got.into_inner().unwrap();
    let containers: Vec<&h::ContainerProto> = responses
        .iter()
        .flat_map(|r| &r.allocated_containers)
        .collect();
    assert_eq!(containers.len(), 2, "no more than the table asked for");
    let nm_tokens: Vec<&h::NmTokenProto> = responses.iter().flat_map(|r| &r.nm_tokens).collect();
    assert_eq!(nm_tokens.len(), 1, "one NMToken for the one node");
    assert_eq!(nm_tokens[0].node_id.as_ref().map(|n| n.port()), Some(45454));
    for c in &containers {
        assert_eq!(c.priority.as_ref().map(|p| p.priority()), Some(20));
        assert_eq!(c.resource.as_ref().map(|r| r.memory()), Some(256));
        let token = c.container_token.as_ref().context("a container token")?;
        assert_eq!(token.kind, "ContainerToken");
        assert_eq!(token.service, "127.0.0.1:45454");
        let id = h::ContainerTokenIdentifierProto::decode(token.identifier.clone())?;
        assert_eq!(id.container_id, c.id);
        assert_eq!(id.app_submitter(), USER);
    }
    let r = report(&hadoop, app_id).await?;
    assert_eq!(r.progress(), 0.5);

    // A released container comes back as completed, killed by the AM.
    let released = containers[0].id;
    let resp: h::AllocateResponseProto = am
        .call(
            "allocate",
            &h::AllocateRequestProto {
                release: vec![released.context("an id")?],
                response_id: Some(2),
                ..Default::default()
            },
        )
        .await?;
    let [completed] = resp.completed_container_statuses.as_slice() else {
        anyhow::bail!("one completed container: {resp:?}");
    };
    assert_eq!(completed.container_id, released);
    assert_eq!(completed.exit_status(), -105, "KILLED_BY_APPMASTER");

    let finished: h::FinishApplicationMasterResponseProto = am
        .call(
            "finishApplicationMaster",
            &h::FinishApplicationMasterRequestProto {
                final_application_status: Some(h::FinalApplicationStatusProto::AppSucceeded as i32),
                diagnostics: Some("done".into()),
                ..Default::default()
            },
        )
        .await?;
    assert!(finished.is_unregistered());
    let r = report(&hadoop, app_id).await?;
    assert_eq!(
        r.final_application_status(),
        h::FinalApplicationStatusProto::AppSucceeded
    );
    Ok(())
}

#[tokio::test]
async fn without_work_preserving_recovery_a_restart_starts_a_new_attempt_at_once() -> Result<()> {
    let store = tempfile::tempdir()?;
    let (cluster, first) = restarted_after_an_am_launch(
        store.path(),
        &[(
            "yarn.resourcemanager.work-preserving-recovery.enabled",
            "false",
        )],
    )
    .await?;
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    let am = first.container_id.clone();
    let am_running = y::NodeContainerStatus {
        status: Some(y::ContainerStatus {
            container_id: am.clone(),
            ..Default::default()
        }),
        resource: Some(y::Resource {
            memory_mb: 512,
            vcores: 1,
        }),
    };
    register_node_holding(&tracker, "n1", vec![am_running]).await?;
    // The node expiry interval is 10 minutes: a new attempt now means none was kept.
    let work = heartbeat(&tracker, "n1").await?;
    let killed: Vec<&str> = work.kill.iter().map(|k| k.container_id.as_str()).collect();
    assert_eq!(killed, [am.as_str()], "the old attempt's AM is killed");
    let second = match work.launch.into_iter().next() {
        Some(launch) => launch,
        None => next_launch(&tracker, "n1").await?,
    };
    assert!(
        second.container_id.contains("_02_"),
        "{}",
        second.container_id
    );
    Ok(())
}

fn running(container: &h::ContainerIdProto, memory_mb: u64) -> y::NodeContainerStatus {
    y::NodeContainerStatus {
        status: Some(y::ContainerStatus {
            container_id: container_id_string(container),
            state: y::ContainerState::ContainerRunning as i32,
            ..Default::default()
        }),
        resource: Some(y::Resource {
            memory_mb,
            vcores: 1,
        }),
    }
}

fn container_id_string(c: &h::ContainerIdProto) -> String {
    tusk_security::yarn_tokens::container_id_string(c)
}

/// Asks for one more container anywhere and heartbeats `node` until the AM has it.
async fn allocate_one(
    am: &RpcClient,
    tracker: &RpcClient,
    node: &str,
) -> Result<h::ContainerProto> {
    let first: h::AllocateResponseProto = am
        .call(
            "allocate",
            &h::AllocateRequestProto {
                ask: vec![ask(20, "*", 1)],
                ..Default::default()
            },
        )
        .await?;
    if let Some(c) = first.allocated_containers.into_iter().next() {
        return Ok(c);
    }
    Ok(wait_for("a container allocated", DEADLINE, || async {
        heartbeat(tracker, node).await.ok()?;
        let resp: h::AllocateResponseProto = am
            .call("allocate", &h::AllocateRequestProto::default())
            .await
            .ok()?;
        resp.allocated_containers.into_iter().next()
    })
    .await?)
}

#[tokio::test]
async fn a_hadoop_attempt_and_its_running_containers_survive_a_resourcemanager_restart(
) -> Result<()> {
    let store = tempfile::tempdir()?;
    let mut cluster = start_with(&recovery_conf(store.path())).await?;
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    let keys_before = register_node_holding(&tracker, "n1", Vec::new()).await?;
    let app_id = submit_hadoop_app(&hadoop(&cluster), "default").await?;
    let am_launch = next_launch(&tracker, "n1").await?;
    let token = am_rm_token(&am_launch)?;
    let am = am_client(&cluster, Some(token.clone()));
    let _: h::RegisterApplicationMasterResponseProto = am
        .call(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto::default(),
        )
        .await?;
    let task = allocate_one(&am, &tracker, "n1").await?;
    let task_id = task.id.context("an id")?;

    restart_resourcemanager(&mut cluster).await?;
    // The node registers again with what it runs: the AM, its task and a container of
    // an attempt the ResourceManager never kept.
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    let am_container = records_container(&am_launch.container_id);
    let stray = y::NodeContainerStatus {
        status: Some(y::ContainerStatus {
            container_id: "container_1_9999_01_000001".into(),
            ..Default::default()
        }),
        resource: Some(y::Resource {
            memory_mb: 128,
            vcores: 1,
        }),
    };
    let keys_after = register_node_holding(
        &tracker,
        "n1",
        vec![running(&am_container, 512), running(&task_id, 256), stray],
    )
    .await?;
    assert_eq!(
        (
            &keys_after.nm_token_master_key,
            &keys_after.container_token_master_key
        ),
        (
            &keys_before.nm_token_master_key,
            &keys_before.container_token_master_key
        ),
        "the NMToken and container token keys survive the restart"
    );

    // The AM's AMRMToken still verifies; its allocate is refused until it registers
    // again, as Hadoop's RMContainerAllocator expects.
    let am = am_client(&cluster, Some(token));
    let e = am
        .call::<_, h::AllocateResponseProto>("allocate", &h::AllocateRequestProto::default())
        .await
        .expect_err("not registered with this ResourceManager");
    assert_eq!(
        remote_class(&e).0,
        "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
    );
    let _: h::RegisterApplicationMasterResponseProto = am
        .call(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto::default(),
        )
        .await?;
    let work = heartbeat(&tracker, "n1").await?;
    assert!(work.launch.is_empty(), "no new AM: {work:?}");
    let killed: Vec<&str> = work.kill.iter().map(|k| k.container_id.as_str()).collect();
    assert_eq!(killed, ["container_1_9999_01_000001"], "only the stray");
    let r = report(&hadoop(&cluster), app_id).await?;
    assert_eq!(
        r.yarn_application_state(),
        h::YarnApplicationStateProto::Running
    );
    assert_eq!(
        r.current_application_attempt_id.map(|a| a.attempt_id()),
        Some(1)
    );
    let used = cluster.yarn().resourcemanager().nodes()[0].used;
    assert_eq!(
        used.map(|u| u.memory_mb),
        Some(512 + 256),
        "kept containers count"
    );

    // A container allocated now is numbered apart from those before the restart, and
    // releasing a kept one reaches its node.
    let after = allocate_one(&am, &tracker, "n1").await?;
    assert!(after.id.unwrap().id() >= 1_000_000, "{:?}", after.id);
    let _: h::AllocateResponseProto = am
        .call(
            "allocate",
            &h::AllocateRequestProto {
                release: vec![task_id],
                ..Default::default()
            },
        )
        .await?;
    let work = heartbeat(&tracker, "n1").await?;
    let killed: Vec<&str> = work.kill.iter().map(|k| k.container_id.as_str()).collect();
    assert_eq!(killed, [container_id_string(&task_id)]);
    Ok(())
}

/// `container_T_S_A_N` as Hadoop's record.
fn records_container(id: &str) -> h::ContainerIdProto {
    let parts: Vec<i64> = id
        .trim_start_matches("container_")
        .split('_')
        .map(|p| p.parse().unwrap())
        .collect();
    h::ContainerIdProto {
        app_id: Some(h::ApplicationIdProto {
            cluster_timestamp: Some(parts[0]),
            id: Some(parts[1] as i32),
        }),
        app_attempt_id: Some(h::ApplicationAttemptIdProto {
            application_id: Some(h::ApplicationIdProto {
                cluster_timestamp: Some(parts[0]),
                id: Some(parts[1] as i32),
            }),
            attempt_id: Some(parts[2] as i32),
        }),
        id: Some(parts[3]),
    }
}

#[tokio::test]
async fn a_lost_node_and_its_containers_reach_a_hadoop_am_as_lost_and_aborted() -> Result<()> {
    // Classic timing: containers are placed on the heartbeating node only.
    let cluster = start_with(&[
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "2000"),
        ("tusk.yarn.timing", "classic"),
    ])
    .await?;
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;
    let token = {
        submit_hadoop_app(&hadoop(&cluster), "default").await?;
        am_rm_token(&next_launch(&tracker, "n1").await?)?
    };
    let am = am_client(&cluster, Some(token));
    let _: h::RegisterApplicationMasterResponseProto = am
        .call(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto::default(),
        )
        .await?;
    register_node(&tracker, "n2").await?;
    let task = allocate_one(&am, &tracker, "n2").await?;
    // n2 falls silent; n1, running the AM, keeps heartbeating.
    let resp = wait_for("the lost container's status", DEADLINE, || async {
        heartbeat(&tracker, "n1").await.ok()?;
        let resp: h::AllocateResponseProto = am
            .call("allocate", &h::AllocateRequestProto::default())
            .await
            .ok()?;
        (!resp.completed_container_statuses.is_empty()).then_some(resp)
    })
    .await?;
    // The node comes as an updated node, LOST: Hadoop's AM reruns the finished maps
    // whose output it held.
    let [node] = resp.updated_nodes.as_slice() else {
        anyhow::bail!("one updated node: {resp:?}");
    };
    assert_eq!(node.node_state(), h::NodeStateProto::NsLost);
    assert_eq!(node.node_id.as_ref().map(|n| n.port()), Some(45454));
    let [status] = resp.completed_container_statuses.as_slice() else {
        anyhow::bail!("one completed container: {resp:?}");
    };
    assert_eq!(status.container_id, task.id);
    assert_eq!(status.exit_status(), -100, "ABORTED");
    assert_eq!(status.diagnostics(), "Container released on a *lost* node");
    Ok(())
}

fn token_key(token: &TokenProto) -> Result<i32> {
    Ok(h::AmrmTokenIdentifierProto::decode(token.identifier.clone())?.key_id())
}

/// An allocate with nothing asked, on `am`'s connection.
async fn idle_allocate(am: &RpcClient) -> Result<h::AllocateResponseProto> {
    Ok(am
        .call("allocate", &h::AllocateRequestProto::default())
        .await?)
}

#[tokio::test]
async fn the_am_rm_token_key_rolls_and_allocate_hands_the_am_a_token_of_the_new_key() -> Result<()>
{
    // A new key every 2 s; it signs (and the old one stops verifying) 1.5 s later.
    let cluster = start_with(&[
        (
            "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs",
            "2",
        ),
        ("yarn.am.liveness-monitor.expiry-interval-ms", "1000"),
    ])
    .await?;
    let hadoop = hadoop(&cluster);
    let tracker = client(&cluster, RESOURCE_TRACKER_PROTOCOL);
    register_node(&tracker, "n1").await?;
    submit_hadoop_app(&hadoop, "default").await?;
    let old = am_rm_token(&next_launch(&tracker, "n1").await?)?;
    let am = am_client(&cluster, Some(old.clone()));
    let _: h::RegisterApplicationMasterResponseProto = am
        .call(
            "registerApplicationMaster",
            &h::RegisterApplicationMasterRequestProto::default(),
        )
        .await?;

    // After the roll an allocate reply carries a token of the next key.
    let new = wait_for("an AMRMToken of the next key", DEADLINE, || async {
        idle_allocate(&am).await.ok()?.am_rm_token
    })
    .await?;
    assert_eq!(new.kind, AMRM_TOKEN_KIND);
    assert_ne!(token_key(&new)?, token_key(&old)?);
    assert_eq!(
        h::AmrmTokenIdentifierProto::decode(new.identifier.clone())?.app_attempt_id,
        h::AmrmTokenIdentifierProto::decode(old.identifier.clone())?.app_attempt_id,
        "the same attempt"
    );
    // The new token works on a new connection, and an AM that holds it is not sent
    // another.
    let renewed = am_client(&cluster, Some(new));
    assert!(idle_allocate(&renewed).await?.am_rm_token.is_none());

    // Once the new key is active, the old token opens no new connection.
    wait_for("the old key to stop verifying", DEADLINE, || async {
        idle_allocate(&am_client(&cluster, Some(old.clone())))
            .await
            .is_err()
            .then_some(())
    })
    .await?;
    idle_allocate(&renewed).await?;
    Ok(())
}

#[tokio::test]
async fn a_key_rolling_interval_shorter_than_the_activation_delay_is_refused() {
    let err = start_with(&[(
        "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs",
        "60",
    )])
    .await
    .err()
    .expect("60 s is less than 1.5 × the default AM expiry (600 s)");
    assert!(
        err.to_string().contains("master-key-rolling-interval-secs"),
        "{err}"
    );
}
