//! Applications kept in the [`StateStore`] (when recovery is enabled) and brought back
//! by a restarted ResourceManager, as Hadoop's work-preserving recovery
//! (`yarn.resourcemanager.work-preserving-recovery.enabled`, on unless set false) does
//! for Hadoop's AMs:
//!
//! - the keys come back first, so the AMRMTokens, NMTokens and container tokens handed
//!   out before the restart still verify;
//! - finished applications come back as they ended;
//! - a Hadoop application whose AM container had been allocated keeps its attempt: its
//!   AM's next allocate is refused with `ApplicationMasterNotRegisteredException`, so
//!   it registers again and sends its outstanding asks; the NodeManagers, told to
//!   resync, register again with their running containers, which are adopted
//!   ([`Cluster::recover_node_containers`]). An AM container no NodeManager reports
//!   within the node expiry interval is taken as lost: a new attempt, not counted;
//! - every other unfinished application (Tusk's own AMs, which start again from their
//!   job's state) gets a new attempt that does not count against its maximum, and the
//!   containers of its old attempt are killed when their node reports them.

use std::sync::Arc;
use std::time::Instant;

use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::{ApplicationState, ContainerExitStatus, FinalApplicationStatus};

use super::{AmPlacement, App, Cluster, ContainerRecord, Submission};
use crate::error::{ResourceManagerError, Result};
use crate::resource::Resource;
use crate::secrets::Secrets;
use crate::state_store::{
    StateStore, StoredApplication, StoredFinish, StoredLaunch, MAX_COMPLETED_APPLICATIONS,
};

/// Containers a kept attempt allocates after the n-th restart are numbered from n times
/// this, apart from those allocated before (Hadoop puts its epoch in the id's high bits).
const CONTAINERS_PER_EPOCH: u64 = 1_000_000;

impl App {
    fn to_stored(&self) -> StoredApplication {
        StoredApplication {
            id: self.id.clone(),
            name: self.name.clone(),
            queue: self.queue.clone(),
            user: self.user.clone(),
            app_type: self.app_type.clone(),
            am_memory_mb: self.am_resource.memory_mb,
            am_vcores: self.am_resource.vcores,
            am_launch: StoredLaunch::from(&self.am_launch),
            hadoop_am_launch: self
                .hadoop_am_launch
                .as_deref()
                .map(crate::hadoop_launch::to_stored)
                .unwrap_or_default(),
            max_attempts: self.max_attempts,
            attempts: self.attempt,
            uncounted_attempts: self.uncounted_attempts,
            submit_ms: self.submit_ms,
            am_container: self.am_container.clone().filter(|_| !self.is_terminal()),
            finished: self.is_terminal().then(|| StoredFinish {
                state: self.state as i32,
                final_status: self.final_status as i32,
                diagnostics: self.diagnostics.clone(),
                finish_ms: self.finish_ms,
            }),
            nodes_used: self.nodes_used.iter().cloned().collect(),
            logs_aggregated: self.logs_aggregated.clone(),
        }
    }

    /// An application as recovered: ended as it ended; a Hadoop application whose AM
    /// container was allocated keeps its attempt (`epoch` numbers its new containers);
    /// any other waits for the AM of a new attempt that the restart does not count
    /// against its maximum.
    fn recovered(s: StoredApplication, seq: u64, epoch: u32, work_preserving: bool) -> App {
        let keep_attempt = work_preserving
            && s.finished.is_none()
            && s.attempts > 0
            && s.am_container.is_some()
            && !s.hadoop_am_launch.is_empty();
        let submission = Submission {
            name: s.name,
            queue: s.queue,
            user: s.user,
            app_type: s.app_type,
            am_resource: Resource::new(s.am_memory_mb, s.am_vcores),
            am_launch: (&s.am_launch).into(),
            hadoop_am_launch: crate::hadoop_launch::from_stored(&s.hadoop_am_launch).map(Arc::new),
            max_attempts: s.max_attempts,
            submit_ms: s.submit_ms,
        };
        let mut app = App::accepted(s.id, seq, submission);
        app.uncounted_attempts = s.uncounted_attempts;
        app.nodes_used = s.nodes_used.into_iter().collect();
        app.logs_aggregated = s.logs_aggregated;
        match s.finished {
            Some(f) => {
                app.state =
                    ApplicationState::try_from(f.state).unwrap_or(ApplicationState::AppFailed);
                app.final_status = FinalApplicationStatus::try_from(f.final_status)
                    .unwrap_or(FinalApplicationStatus::FinalUndefined);
                app.diagnostics = f.diagnostics;
                app.finish_ms = f.finish_ms;
                app.progress = 1.0;
                app.attempt = s.attempts;
                app.cleaned = true;
            }
            None if keep_attempt => {
                app.state = ApplicationState::AppRunning;
                app.attempt = s.attempts;
                app.am_container = s.am_container;
                app.kept_attempt = true;
                app.next_container = u64::from(epoch) * CONTAINERS_PER_EPOCH;
                app.start_ms = app.submit_ms;
            }
            None => {
                app.diagnostics =
                    "Recovered after a ResourceManager restart; a new attempt is launched".into();
                app.attempt = s.attempts + 1;
                app.uncounted_attempts += u32::from(s.attempts > 0);
            }
        }
        app
    }
}

impl Cluster {
    /// Keeps applications in `store` from now on.
    pub(crate) fn set_state_store(&mut self, store: Arc<dyn StateStore>) {
        self.store = Some(store);
    }

    /// Writes an application's record; fails when the store cannot keep it.
    pub(crate) fn persist(&self, app_id: &str) -> Result<()> {
        let (Some(store), Some(app)) = (&self.store, self.apps.get(app_id)) else {
            return Ok(());
        };
        store
            .store(&app.to_stored())
            .map_err(|source| ResourceManagerError::Io {
                what: "the ResourceManager state store",
                source,
            })
    }

    /// As [`Cluster::persist`] where the change has happened already and cannot be
    /// refused: a failure is logged (a restart would recover the older record).
    pub(crate) fn persist_or_log(&self, app_id: &str) {
        if let Err(e) = self.persist(app_id) {
            tracing::error!(application = %app_id, error = %e, "application state not stored; a restart would recover an older record");
        }
    }

    /// Keeps the keys in the state store after a change (an AMRMToken key made or
    /// activated), so the tokens signed since still verify after a restart; a failure
    /// is logged.
    pub(crate) fn persist_keys(&self) {
        if let Some(store) = &self.store {
            if let Err(e) = store.store_keys(&self.secrets.stored(self.epoch)) {
                tracing::error!(error = %e, "keys not stored; after a restart tokens of the newest key would be refused");
            }
        }
    }

    /// Brings back the keys and every application of `store` (a ResourceManager's
    /// start); returns how many applications were unfinished.
    pub(crate) fn recover(&mut self, store: &dyn StateStore) -> Result<usize> {
        let io = |source| ResourceManagerError::Io {
            what: "the ResourceManager state store",
            source,
        };
        if let Some(keys) = store.load_keys().map_err(io)? {
            self.secrets = Secrets::from_stored(&keys).ok_or_else(|| {
                io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a key of resourcemanager.keys does not decode",
                ))
            })?;
            self.epoch = keys.epoch + 1;
        }
        store
            .store_keys(&self.secrets.stored(self.epoch))
            .map_err(io)?;
        let mut stored = store.load().map_err(io)?;
        let finished: Vec<String> = stored
            .iter()
            .filter(|a| a.finished.is_some())
            .map(|a| a.id.clone())
            .collect();
        let excess = finished.len().saturating_sub(MAX_COMPLETED_APPLICATIONS);
        for id in &finished[..excess] {
            store.remove(id).map_err(io)?;
        }
        stored.retain(|a| !finished[..excess].contains(&a.id));
        let mut unfinished = 0;
        for s in stored {
            let seq = u64::from(self.next_app_seq);
            self.next_app_seq += 1;
            let app = App::recovered(s, seq, self.epoch, self.options.work_preserving_recovery);
            if app.kept_attempt {
                unfinished += 1;
                self.secrets
                    .amrm
                    .attempt_recovered(&crate::hadoop_records::attempt_id(&app.id, app.attempt));
                tracing::info!(application = %app.id, attempt = app.attempt, "application recovered; waiting for its AM to register again");
            } else if !app.is_terminal() {
                unfinished += 1;
                tracing::info!(application = %app.id, attempt = app.attempt, "application recovered; launching a new attempt");
            }
            let id = app.id.clone();
            self.apps.insert(id.clone(), app);
            self.persist(&id)?;
        }
        self.recovered_at = Some(Instant::now());
        Ok(unfinished)
    }

    /// What a (re-)registering NodeManager holds: running containers of kept attempts
    /// are adopted, others unknown here are killed; containers of kept attempts that
    /// finished while the ResourceManager was down end as they ended.
    pub(crate) fn recover_node_containers(
        &mut self,
        node_id: &str,
        running: &[y::NodeContainerStatus],
        completed: &[y::ContainerStatus],
    ) {
        for c in running {
            let Some(status) = &c.status else { continue };
            let id = &status.container_id;
            if self.containers.contains_key(id) {
                continue;
            }
            match self.kept_attempt_of(id) {
                Some(app_id) => {
                    self.adopt_container(node_id, &app_id, id, Resource::from(c.resource.as_ref()))
                }
                None => self.kill_unknown(node_id, id),
            }
        }
        for status in completed {
            let Some(app_id) = self.kept_attempt_of(&status.container_id) else {
                continue;
            };
            let app = self.apps.get_mut(&app_id).expect("kept attempt's app");
            if app.am_container.as_ref() == Some(&status.container_id) {
                app.am_exit_status = Some(status.exit_status);
                self.am_finished(&app_id, status);
            } else {
                app.completed.push(status.clone());
                app.wake.notify_one();
            }
        }
    }

    /// The application whose kept attempt `container_id` belongs to, if it is unknown
    /// here (not allocated since the restart, not ended) and the restart recent (within
    /// the node expiry interval: a node reporting later was lost, and the AM told so).
    fn kept_attempt_of(&self, container_id: &str) -> Option<String> {
        self.recovered_at?;
        let (app_id, attempt) = crate::ids::parse_container_id(container_id)?;
        let app = self.apps.get(&app_id)?;
        (app.kept_attempt && app.attempt == attempt && !app.is_terminal())
            .then_some(app_id)
            .filter(|_| !self.containers.contains_key(container_id))
    }

    fn adopt_container(&mut self, node_id: &str, app_id: &str, id: &str, resource: Resource) {
        let (Some(node), Some(app)) = (self.nodes.get_mut(node_id), self.apps.get_mut(app_id))
        else {
            return;
        };
        let is_am = app.am_container.as_deref() == Some(id);
        tracing::info!(application = %app_id, container = %id, node = %node_id, is_am, "container recovered");
        node.used = node.used.plus(&resource);
        node.containers.insert(id.to_string());
        app.used = app.used.plus(&resource);
        app.live.insert(id.to_string());
        app.nodes_used.insert(node_id.to_string());
        if is_am {
            app.am_node = Some(node_id.to_string());
            app.am_placements.insert(
                app.attempt,
                AmPlacement {
                    container: id.to_string(),
                    node: node_id.to_string(),
                },
            );
        }
        self.containers.insert(
            id.to_string(),
            ContainerRecord {
                application: app_id.to_string(),
                node: node_id.to_string(),
                resource,
                is_am,
                running: true,
            },
        );
    }

    fn kill_unknown(&mut self, node_id: &str, id: &str) {
        let Some(node) = self.nodes.get_mut(node_id) else {
            return;
        };
        tracing::info!(container = %id, node = %node_id, "container unknown after a restart; killing it");
        node.to_kill.push(y::ContainerKill {
            container_id: id.to_string(),
            exit_status: ContainerExitStatus::KilledByResourcemanager as i32,
            diagnostics: "Container of an application attempt the ResourceManager did not keep across its restart".into(),
        });
        node.wake.notify_one();
    }

    /// Once the node expiry interval has passed since recovery: kept attempts whose AM
    /// container no NodeManager reported lost their AM with its node; each gets a new
    /// attempt, not counted against its maximum.
    pub fn expire_unreported_ams(&mut self, now: Instant) {
        let Some(at) = self.recovered_at else {
            return;
        };
        if now.duration_since(at) <= self.options.node_expiry {
            return;
        }
        self.recovered_at = None;
        let lost: Vec<(String, String)> = self
            .apps
            .values()
            .filter(|a| a.kept_attempt && !a.is_terminal())
            .filter_map(|a| Some((a.id.clone(), a.am_container.clone()?)))
            .filter(|(_, c)| !self.containers.contains_key(c))
            .collect();
        for (app_id, container) in lost {
            let app = self.apps.get_mut(&app_id).expect("listed app");
            app.uncounted_attempts += 1;
            tracing::warn!(application = %app_id, %container, "AM container not reported after the restart; launching a new attempt");
            self.am_finished(
                &app_id,
                &y::ContainerStatus {
                    container_id: container,
                    state: y::ContainerState::ContainerComplete as i32,
                    exit_status: ContainerExitStatus::Aborted as i32,
                    diagnostics: "AM container not reported by any NodeManager after the ResourceManager restart".into(),
                    peak_rss_bytes: 0,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::LogAggregationStatus;
    use crate::options::ResourceManagerOptions;

    #[test]
    fn a_finished_applications_log_aggregation_outlives_a_restart() {
        let mut c = Cluster::new(
            Arc::new(ResourceManagerOptions::default()),
            "rm:8030".into(),
        );
        let id = c
            .submit(
                y::SubmitApplicationRequest {
                    name: "t".into(),
                    am_resource: Some(y::Resource {
                        memory_mb: 512,
                        vcores: 1,
                    }),
                    ..Default::default()
                },
                "u",
            )
            .unwrap();
        let app = c.apps.get_mut(&id).unwrap();
        app.state = ApplicationState::AppFinished;
        app.finish_ms = 5;
        app.nodes_used = ["n1", "n2"].map(String::from).into();
        app.logs_aggregated.insert("n1".into(), true);
        assert_eq!(app.log_aggregation_status(), LogAggregationStatus::Running);

        let mut back = App::recovered(app.to_stored(), 1, 1, true);
        assert_eq!(back.log_aggregation_status(), LogAggregationStatus::Running);
        back.logs_aggregated.insert("n2".into(), true);
        assert_eq!(
            back.log_aggregation_status(),
            LogAggregationStatus::Succeeded
        );
    }
}
