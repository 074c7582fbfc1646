//! Tusk's cluster state as Hadoop YARN's records (`tusk_proto::hadoop::yarn`): ids,
//! application and attempt states, application, attempt, container, node and queue
//! reports. The one place the ResourceManager translates between the two, used by the
//! ApplicationClientProtocolPB service (`hadoop_client`).

use std::collections::BTreeMap;

use tusk_proto::hadoop::yarn as h;
use tusk_proto::tusk::yarn as y;

use crate::cluster::{App, Cluster, Node};
use crate::resource::Resource;

/// Hadoop's name for the application type when a submission named none.
pub const DEFAULT_APPLICATION_TYPE: &str = "YARN";

// ---------------------------------------------------------------- ids

/// `application_T_S` → ApplicationIdProto{id: S, cluster_timestamp: T}.
pub fn application_id(id: &str) -> h::ApplicationIdProto {
    let (ts, seq) = id
        .strip_prefix("application_")
        .and_then(|rest| rest.split_once('_'))
        .unwrap_or_default();
    h::ApplicationIdProto {
        id: Some(seq.parse().unwrap_or_default()),
        cluster_timestamp: Some(ts.parse().unwrap_or_default()),
    }
}

/// The id's string form, as Hadoop's `ApplicationId.toString` writes it.
pub fn application_id_string(p: &h::ApplicationIdProto) -> String {
    crate::ids::application_id(p.cluster_timestamp().max(0) as u64, p.id().max(0) as u32)
}

pub fn attempt_id(application: &str, attempt: u32) -> h::ApplicationAttemptIdProto {
    h::ApplicationAttemptIdProto {
        application_id: Some(application_id(application)),
        attempt_id: Some(attempt as i32),
    }
}

/// (application id, attempt number) of an attempt id.
pub fn attempt_of(p: &h::ApplicationAttemptIdProto) -> (String, u32) {
    let app = p.application_id.unwrap_or_default();
    (application_id_string(&app), p.attempt_id().max(0) as u32)
}

/// `container_T_S_A_N` → ContainerIdProto (epoch 0: N is the whole id).
pub fn container_id(id: &str) -> h::ContainerIdProto {
    let parts: Vec<&str> = id
        .strip_prefix("container_")
        .unwrap_or(id)
        .split('_')
        .collect();
    let (app, attempt, n) = match parts.as_slice() {
        [ts, seq, attempt, n] => (
            format!("application_{ts}_{seq}"),
            attempt.parse().unwrap_or_default(),
            n.parse().unwrap_or_default(),
        ),
        _ => (String::new(), 0, 0),
    };
    h::ContainerIdProto {
        app_id: Some(application_id(&app)),
        app_attempt_id: Some(attempt_id(&app, attempt)),
        id: Some(n),
    }
}

/// The string form Hadoop's `ContainerId.toString` writes (`container_e<epoch>_…` when
/// the id carries an epoch in its top bits).
pub fn container_id_string(p: &h::ContainerIdProto) -> String {
    let attempt = p.app_attempt_id.unwrap_or_default();
    let (app, attempt) = attempt_of(&attempt);
    let rest = app.strip_prefix("application_").unwrap_or(&app);
    let (epoch, n) = (p.id() >> 40, p.id() & 0xff_ffff_ffff);
    match epoch {
        0 => format!("container_{rest}_{attempt:02}_{n:06}"),
        e => format!("container_e{e:02}_{rest}_{attempt:02}_{n:06}"),
    }
}

pub(crate) fn node_id(node: &Node) -> h::NodeIdProto {
    h::NodeIdProto {
        host: Some(node.host.clone()),
        port: Some(node.rpc_port as i32),
    }
}

fn http_address(node: &Node) -> String {
    node.address(node.http_port)
}

// ---------------------------------------------------------------- resources

pub fn resource(r: Resource) -> h::ResourceProto {
    h::ResourceProto {
        memory: Some(r.memory_mb as i64),
        virtual_cores: Some(r.vcores as i32),
        resource_value_map: vec![],
    }
}

/// A Hadoop resource as Tusk's memory and vcores (negative amounts as 0).
pub fn resource_from(r: &h::ResourceProto) -> Resource {
    Resource::new(r.memory().max(0) as u64, r.virtual_cores().max(0) as u32)
}

/// The resource types Tusk schedules: memory in MiB and vcores, as Hadoop names them.
pub fn resource_types() -> Vec<h::ResourceTypeInfoProto> {
    [("memory-mb", "Mi"), ("vcores", "")]
        .into_iter()
        .map(|(name, units)| h::ResourceTypeInfoProto {
            name: name.into(),
            units: Some(units.into()),
            r#type: Some(h::ResourceTypesProto::Countable as i32),
        })
        .collect()
}

// ---------------------------------------------------------------- states

pub fn application_state(s: y::ApplicationState) -> h::YarnApplicationStateProto {
    use h::YarnApplicationStateProto as H;
    use y::ApplicationState as T;
    match s {
        T::AppNew => H::New,
        T::AppSubmitted => H::Submitted,
        T::AppAccepted => H::Accepted,
        T::AppRunning => H::Running,
        T::AppFinished => H::Finished,
        T::AppFailed => H::Failed,
        T::AppKilled => H::Killed,
    }
}

pub fn final_status(s: y::FinalApplicationStatus) -> h::FinalApplicationStatusProto {
    use h::FinalApplicationStatusProto as H;
    use y::FinalApplicationStatus as T;
    match s {
        T::FinalUndefined => H::AppUndefined,
        T::FinalSucceeded => H::AppSucceeded,
        T::FinalFailed => H::AppFailed,
        T::FinalKilled => H::AppKilled,
    }
}

/// The state of attempt `attempt` of `app`: earlier attempts failed; the current one
/// follows the application and its AM container.
pub fn attempt_state(app: &App, attempt: u32) -> h::YarnApplicationAttemptStateProto {
    use h::YarnApplicationAttemptStateProto as H;
    use y::ApplicationState as T;
    if attempt < app.attempt {
        return H::AppAttemptFailed;
    }
    match app.state {
        T::AppNew | T::AppSubmitted => H::AppAttemptNew,
        T::AppAccepted if app.am_container.is_none() => H::AppAttemptScheduled,
        T::AppAccepted => H::AppAttemptLaunched,
        T::AppRunning => H::AppAttemptRunning,
        T::AppFinished => H::AppAttemptFinished,
        T::AppFailed => H::AppAttemptFailed,
        T::AppKilled => H::AppAttemptKilled,
    }
}

/// A node's state for Hadoop's NodeReport: lost or running (Tusk has no
/// decommissioning or health checks yet).
pub fn node_state(node: &Node) -> h::NodeStateProto {
    if node.lost {
        h::NodeStateProto::NsLost
    } else {
        h::NodeStateProto::NsRunning
    }
}

// ---------------------------------------------------------------- applications

/// Hadoop's ApplicationReport of `app`.
pub fn application_report(cluster: &Cluster, app: &App) -> h::ApplicationReportProto {
    let am_node = app.am_node.as_ref().and_then(|n| cluster.nodes.get(n));
    let app_type = match app.app_type.as_str() {
        "" => DEFAULT_APPLICATION_TYPE.to_string(),
        t => t.to_string(),
    };
    h::ApplicationReportProto {
        application_id: Some(application_id(&app.id)),
        user: Some(app.user.clone()),
        queue: Some(app.queue.clone()),
        name: Some(app.name.clone()),
        // Where a Hadoop AM's own RPC server listens (the job client asks it for the
        // job's status); else the AM's node.
        host: Some(match &app.hadoop {
            Some(am) if !am.host.is_empty() => am.host.clone(),
            _ => am_node.map_or_else(|| "N/A".to_string(), |n| n.host.clone()),
        }),
        rpc_port: Some(app.hadoop.as_ref().map_or(-1, |am| am.rpc_port)),
        yarn_application_state: Some(application_state(app.state) as i32),
        tracking_url: Some(app.tracking_url.clone()),
        original_tracking_url: Some(app.tracking_url.clone()),
        diagnostics: Some(app.diagnostics.clone()),
        start_time: Some(app.submit_ms as i64),
        submit_time: Some(app.submit_ms as i64),
        launch_time: Some(app.start_ms as i64),
        finish_time: Some(app.finish_ms as i64),
        final_application_status: Some(final_status(app.final_status) as i32),
        app_resource_usage: Some(resource_usage(cluster, app)),
        current_application_attempt_id: Some(attempt_id(&app.id, app.attempt)),
        progress: Some(app.progress),
        application_type: Some(app_type),
        unmanaged_application: Some(false),
        priority: Some(h::PriorityProto { priority: Some(0) }),
        log_aggregation_status: Some(log_aggregation_status(cluster, app) as i32),
        ..Default::default()
    }
}

fn log_aggregation_status(cluster: &Cluster, app: &App) -> h::LogAggregationStatusProto {
    use crate::cluster::LogAggregationStatus as S;
    use h::LogAggregationStatusProto as P;
    if !cluster.options.log_aggregation {
        return P::LogDisabled;
    }
    match app.log_aggregation_status() {
        S::NotStarted => P::LogNotStart,
        S::Running => P::LogRunning,
        S::RunningWithFailure => P::LogRunningWithFailure,
        S::Succeeded => P::LogSucceeded,
        S::Failed => P::LogFailed,
    }
}

fn resource_usage(cluster: &Cluster, app: &App) -> h::ApplicationResourceUsageReportProto {
    let total = cluster_capacity(cluster);
    let pct = match total.memory_mb {
        0 => 0.0,
        mb => 100.0 * app.used.memory_mb as f32 / mb as f32,
    };
    h::ApplicationResourceUsageReportProto {
        num_used_containers: Some(app.live.len() as i32),
        num_reserved_containers: Some(0),
        used_resources: Some(resource(app.used)),
        reserved_resources: Some(resource(Resource::default())),
        needed_resources: Some(resource(app.used)),
        memory_seconds: Some(0),
        vcore_seconds: Some(0),
        queue_usage_percentage: Some(pct),
        cluster_usage_percentage: Some(pct),
        preempted_memory_seconds: Some(0),
        preempted_vcore_seconds: Some(0),
        ..Default::default()
    }
}

/// True when `app` passes every filter of a getApplications request (an empty filter
/// passes everything; types compare without case, as Hadoop's do).
pub fn matches(
    app: &App,
    report: &h::ApplicationReportProto,
    r: &h::GetApplicationsRequestProto,
) -> bool {
    let app_type = report.application_type().to_lowercase();
    let state = report.yarn_application_state.unwrap_or_default();
    let time_in = |t: u64, begin: Option<i64>, end: Option<i64>| {
        let t = t as i64;
        begin.is_none_or(|b| t >= b) && end.is_none_or(|e| t <= e)
    };
    (r.application_types.is_empty()
        || r.application_types
            .iter()
            .any(|t| t.to_lowercase() == app_type))
        && (r.application_states.is_empty() || r.application_states.contains(&state))
        && (r.users.is_empty() || r.users.contains(&app.user))
        && (r.queues.is_empty() || r.queues.contains(&app.queue))
        && r.application_tags.is_empty()
        && r.name
            .as_ref()
            .is_none_or(|n| n.is_empty() || *n == app.name)
        && time_in(app.submit_ms, r.start_begin, r.start_end)
        && (r.finish_begin.is_none() && r.finish_end.is_none()
            || app.finish_ms > 0 && time_in(app.finish_ms, r.finish_begin, r.finish_end))
}

/// Hadoop's ApplicationAttemptReport of attempt `attempt` of `app`.
pub fn attempt_report(
    cluster: &Cluster,
    app: &App,
    attempt: u32,
) -> h::ApplicationAttemptReportProto {
    let current = attempt == app.attempt;
    let placement = app.am_placements.get(&attempt);
    let am_node = placement.and_then(|p| cluster.nodes.get(&p.node));
    h::ApplicationAttemptReportProto {
        application_attempt_id: Some(attempt_id(&app.id, attempt)),
        host: Some(am_node.map_or_else(|| "N/A".to_string(), |n| n.host.clone())),
        rpc_port: Some(-1),
        tracking_url: Some(if current {
            app.tracking_url.clone()
        } else {
            String::new()
        }),
        original_tracking_url: Some(if current {
            app.tracking_url.clone()
        } else {
            String::new()
        }),
        diagnostics: Some(if current {
            app.diagnostics.clone()
        } else {
            String::new()
        }),
        yarn_application_attempt_state: Some(attempt_state(app, attempt) as i32),
        am_container_id: placement.map(|p| container_id(&p.container)),
        start_time: Some(if current { app.start_ms as i64 } else { 0 }),
        finish_time: Some(if current { app.finish_ms as i64 } else { 0 }),
    }
}

/// Hadoop's ContainerReport of a container the cluster holds (allocated, not ended).
pub fn container_report(cluster: &Cluster, id: &str) -> Option<h::ContainerReportProto> {
    let c = cluster.containers.get(id)?;
    let node = cluster.nodes.get(&c.node);
    Some(h::ContainerReportProto {
        container_id: Some(container_id(id)),
        resource: Some(resource(c.resource)),
        node_id: node.map(node_id),
        priority: Some(h::PriorityProto { priority: Some(0) }),
        creation_time: Some(0),
        finish_time: Some(0),
        diagnostics_info: Some(String::new()),
        log_url: Some(String::new()),
        container_exit_status: Some(0),
        container_state: Some(if c.running {
            h::ContainerStateProto::CRunning
        } else {
            h::ContainerStateProto::CNew
        } as i32),
        node_http_address: node.map(|n| format!("http://{}", http_address(n))),
        execution_type: Some(h::ExecutionTypeProto::Guaranteed as i32),
        exposed_ports: None,
    })
}

// ---------------------------------------------------------------- nodes

pub fn node_report(node: &Node) -> h::NodeReportProto {
    h::NodeReportProto {
        node_id: Some(node_id(node)),
        http_address: Some(http_address(node)),
        rack_name: Some(node.rack.clone()),
        used: Some(resource(node.used)),
        capability: Some(resource(node.capability)),
        num_containers: Some(node.containers.len() as i32),
        node_state: Some(node_state(node) as i32),
        health_report: Some(String::new()),
        last_health_report_time: Some(node.last_heartbeat_ms as i64),
        ..Default::default()
    }
}

pub fn cluster_metrics(cluster: &Cluster) -> h::YarnClusterMetricsProto {
    let lost = cluster.nodes.values().filter(|n| n.lost).count() as i32;
    let all = cluster.nodes.len() as i32;
    h::YarnClusterMetricsProto {
        num_node_managers: Some(all),
        num_active_nms: Some(all - lost),
        num_lost_nms: Some(lost),
        num_decommissioned_nms: Some(0),
        num_unhealthy_nms: Some(0),
        num_rebooted_nms: Some(0),
        num_decommissioning_nms: Some(0),
        num_shutdown_nms: Some(0),
    }
}

/// What the live nodes offer together.
fn cluster_capacity(cluster: &Cluster) -> Resource {
    cluster
        .nodes
        .values()
        .filter(|n| !n.lost)
        .fold(Resource::default(), |acc, n| acc.plus(&n.capability))
}

// ---------------------------------------------------------------- queues

/// Tusk's queues: the configured ones and any an application was submitted to (an
/// unknown queue has weight 1), each with its share of the weights.
pub fn queues(cluster: &Cluster) -> BTreeMap<String, f64> {
    let mut names: Vec<String> = cluster
        .options
        .queues
        .iter()
        .map(|q| q.name.clone())
        .collect();
    names.extend(cluster.apps.values().map(|a| a.queue.clone()));
    names.push("default".into());
    names.sort();
    names.dedup();
    let weights: Vec<f64> = names
        .iter()
        .map(|q| cluster.options.queue_weight(q))
        .collect();
    let total: f64 = weights.iter().sum();
    names
        .into_iter()
        .zip(weights)
        .map(|(q, w)| (q, w / total))
        .collect()
}

/// Hadoop's QueueInfo of `queue` (its share of the cluster as capacity, a fraction);
/// with `include_applications`, the queue's applications' reports. Tusk's queues are
/// flat: none has children.
pub fn queue_info(
    cluster: &Cluster,
    queue: &str,
    share: f64,
    include_applications: bool,
) -> h::QueueInfoProto {
    let apps: Vec<&App> = cluster.apps.values().filter(|a| a.queue == queue).collect();
    let used = apps
        .iter()
        .filter(|a| !a.is_terminal())
        .fold(Resource::default(), |acc, a| acc.plus(&a.used));
    let total = cluster_capacity(cluster);
    let guaranteed_mb = total.memory_mb as f64 * share;
    let current = match guaranteed_mb {
        g if g > 0.0 => used.memory_mb as f64 / g,
        _ => 0.0,
    };
    let count = |f: &dyn Fn(&App) -> bool| apps.iter().filter(|a| f(a)).count() as i64;
    use y::ApplicationState as T;
    let statistics = h::QueueStatisticsProto {
        num_apps_submitted: Some(apps.len() as i64),
        num_apps_running: Some(count(&|a| a.state == T::AppRunning)),
        num_apps_pending: Some(count(&|a| a.state == T::AppAccepted)),
        num_apps_completed: Some(count(&|a| a.state == T::AppFinished)),
        num_apps_killed: Some(count(&|a| a.state == T::AppKilled)),
        num_apps_failed: Some(count(&|a| a.state == T::AppFailed)),
        allocated_memory_mb: Some(used.memory_mb as i64),
        allocated_v_cores: Some(used.vcores as i64),
        available_memory_mb: Some((guaranteed_mb as i64 - used.memory_mb as i64).max(0)),
        ..Default::default()
    };
    h::QueueInfoProto {
        queue_name: Some(queue.to_string()),
        queue_path: Some(format!("root.{queue}")),
        capacity: Some(share as f32),
        maximum_capacity: Some(1.0),
        current_capacity: Some(current as f32),
        weight: Some(cluster.options.queue_weight(queue) as f32),
        state: Some(h::QueueStateProto::QRunning as i32),
        applications: match include_applications {
            true => apps
                .iter()
                .map(|a| application_report(cluster, a))
                .collect(),
            false => vec![],
        },
        accessible_node_labels: vec!["*".into()],
        default_node_label_expression: Some(String::new()),
        queue_statistics: Some(statistics),
        preemption_disabled: Some(true),
        intra_queue_preemption_disabled: Some(true),
        scheduler_type: Some(cluster.scheduler.name().to_string()),
        ..Default::default()
    }
}

/// Every queue with both of Hadoop's queue ACLs: Tusk has no queue ACLs yet, so any
/// user may submit to and administer any queue.
pub fn queue_user_acls(cluster: &Cluster) -> Vec<h::QueueUserAclInfoProto> {
    queues(cluster)
        .into_keys()
        .map(|q| h::QueueUserAclInfoProto {
            queue_name: Some(q),
            user_acls: vec![
                h::QueueAclProto::QaclSubmitApplications as i32,
                h::QueueAclProto::QaclAdministerQueue as i32,
            ],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_hadoop_records() {
        let app = "application_1700000000000_0007";
        let p = application_id(app);
        assert_eq!(p.id(), 7);
        assert_eq!(p.cluster_timestamp(), 1_700_000_000_000);
        assert_eq!(application_id_string(&p), app);

        let attempt = attempt_id(app, 2);
        assert_eq!(attempt_of(&attempt), (app.to_string(), 2));

        let c = "container_1700000000000_0007_02_000003";
        let p = container_id(c);
        assert_eq!(p.id(), 3);
        assert_eq!(p.app_attempt_id.as_ref().unwrap().attempt_id(), 2);
        assert_eq!(container_id_string(&p), c);
    }

    #[test]
    fn container_ids_with_an_epoch_print_it() {
        let mut p = container_id("container_1700000000000_0007_01_000001");
        p.id = Some((3 << 40) | 1);
        assert_eq!(
            container_id_string(&p),
            "container_e03_1700000000000_0007_01_000001"
        );
    }

    #[test]
    fn every_tusk_state_has_its_hadoop_name() {
        use h::YarnApplicationStateProto as H;
        use y::ApplicationState as T;
        assert_eq!(application_state(T::AppAccepted), H::Accepted);
        assert_eq!(application_state(T::AppRunning), H::Running);
        assert_eq!(application_state(T::AppKilled), H::Killed);
        assert_eq!(
            final_status(y::FinalApplicationStatus::FinalSucceeded),
            h::FinalApplicationStatusProto::AppSucceeded
        );
    }

    /// The report's log aggregation status follows the nodes' heartbeats: not started
    /// while the application runs, running once it ended until its node reports, then
    /// succeeded; disabled when aggregation is off.
    #[test]
    fn log_aggregation_status_follows_the_nodes_reports() {
        use h::LogAggregationStatusProto as S;
        let options = crate::options::ResourceManagerOptions {
            log_aggregation: true,
            timing: crate::options::Timing::Classic,
            ..Default::default()
        };
        let mut c = Cluster::new(std::sync::Arc::new(options), "rm:8030".into());
        c.register_node(&y::RegisterNodeManagerRequest {
            node_id: "n1".into(),
            host: "n1".into(),
            resource: Some(y::Resource {
                memory_mb: 8192,
                vcores: 8,
            }),
            ..Default::default()
        });
        let app = c
            .submit(
                y::SubmitApplicationRequest {
                    name: "a".into(),
                    am_resource: Some(y::Resource {
                        memory_mb: 1024,
                        vcores: 1,
                    }),
                    ..Default::default()
                },
                "alice",
            )
            .unwrap();
        let heartbeat = |c: &mut Cluster, reports: Vec<y::LogAggregationReport>| {
            c.node_heartbeat(&y::NodeHeartbeatRequest {
                node_id: "n1".into(),
                log_aggregation: reports,
                ..Default::default()
            })
        };
        heartbeat(&mut c, vec![]);
        let status = |c: &Cluster| application_report(c, &c.apps[&app]).log_aggregation_status();
        assert_eq!(status(&c), S::LogNotStart);
        assert!(c.kill(&app, "").unwrap());
        assert_eq!(status(&c), S::LogRunning);
        let report = |succeeded| y::LogAggregationReport {
            application_id: app.clone(),
            succeeded,
            diagnostics: String::new(),
        };
        heartbeat(&mut c, vec![report(true)]);
        assert_eq!(status(&c), S::LogSucceeded);
        heartbeat(&mut c, vec![report(false)]);
        assert_eq!(status(&c), S::LogFailed);

        let mut off = Cluster::new(Default::default(), "rm:8030".into());
        let app = off
            .submit(y::SubmitApplicationRequest::default(), "alice")
            .unwrap();
        assert_eq!(
            application_report(&off, &off.apps[&app]).log_aggregation_status(),
            S::LogDisabled
        );
    }
}
