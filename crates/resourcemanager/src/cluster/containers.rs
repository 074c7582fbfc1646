//! How a container ends — it finished on its node, its application released it, or
//! its node was lost — and what follows: resources freed, the AM told, a failed AM
//! attempt retried or the application failed, nodes told to clean up.

use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::{ApplicationState, ContainerExitStatus, FinalApplicationStatus};

use super::Cluster;

impl Cluster {
    /// A container ended on its node (heartbeat or out-of-band report).
    pub(crate) fn container_finished(&mut self, status: y::ContainerStatus) {
        let Some(rec) = self.forget_container(&status.container_id) else {
            return;
        };
        let Some(app) = self.apps.get_mut(&rec.application) else {
            return;
        };
        if rec.is_am {
            app.am_exit_status = Some(status.exit_status);
            self.am_finished(&rec.application, &status);
        } else if !app.is_terminal() {
            app.completed.push(status);
            app.wake.notify_one();
        }
        self.clean_up_if_done(&rec.application);
    }

    /// Ends a container at the ResourceManager's or the AM's request: frees it at once,
    /// tells its node to kill it and its AM (when `tell_am`) that it is gone.
    pub(crate) fn release_container(
        &mut self,
        container_id: &str,
        exit: ContainerExitStatus,
        diagnostics: &str,
        tell_am: bool,
    ) {
        let Some(rec) = self.forget_container(container_id) else {
            return;
        };
        if let Some(node) = self.nodes.get_mut(&rec.node) {
            node.to_kill.push(y::ContainerKill {
                container_id: container_id.to_string(),
                exit_status: exit as i32,
                diagnostics: diagnostics.to_string(),
            });
            node.wake.notify_one();
        }
        if tell_am {
            if let Some(app) = self.apps.get_mut(&rec.application) {
                app.completed.push(y::ContainerStatus {
                    container_id: container_id.to_string(),
                    state: y::ContainerState::ContainerComplete as i32,
                    exit_status: exit as i32,
                    diagnostics: diagnostics.to_string(),
                    peak_rss_bytes: 0,
                });
                app.wake.notify_one();
            }
        }
    }

    /// Removes a container from its node and application; `None` if unknown.
    fn forget_container(&mut self, container_id: &str) -> Option<super::ContainerRecord> {
        let rec = self.containers.remove(container_id)?;
        self.metrics.containers_released.inc();
        if let Some(node) = self.nodes.get_mut(&rec.node) {
            node.used = node.used.minus(&rec.resource);
            node.containers.remove(container_id);
        }
        if let Some(app) = self.apps.get_mut(&rec.application) {
            app.used = app.used.minus(&rec.resource);
            app.live.remove(container_id);
        }
        Some(rec)
    }

    /// The current attempt's AM container ended: fine after it unregistered, else the
    /// attempt failed and is retried while attempts remain.
    pub(super) fn am_finished(&mut self, app_id: &str, status: &y::ContainerStatus) {
        let Some(app) = self.apps.get_mut(app_id) else {
            return;
        };
        if app.is_terminal() {
            return;
        }
        let attempt_id = app.attempt_id();
        let diagnostics = format!(
            "AM Container for {attempt_id} exited with exitCode: {}\n{}",
            status.exit_status, status.diagnostics
        );
        if app.attempt - app.uncounted_attempts < app.max_attempts {
            tracing::info!(application = %app_id, %diagnostics, "AM attempt failed; retrying");
            let live: Vec<String> = app.live.iter().cloned().collect();
            app.attempt += 1;
            app.am_container = None;
            app.am_node = None;
            app.registered = false;
            app.kept_attempt = false;
            app.state = ApplicationState::AppAccepted;
            app.asks.clear();
            app.allocated.clear();
            app.completed.clear();
            app.diagnostics = diagnostics;
            for c in live {
                self.release_container(
                    &c,
                    ContainerExitStatus::KilledByResourcemanager,
                    "Container of a failed application attempt",
                    false,
                );
            }
            self.persist_or_log(app_id);
            if self.event_driven() {
                self.schedule_all();
            }
        } else {
            let message = format!(
                "Application {app_id} failed {} times due to {diagnostics}",
                app.attempt - app.uncounted_attempts
            );
            self.finish_application(
                app_id,
                ApplicationState::AppFailed,
                FinalApplicationStatus::FinalFailed,
                message,
            );
        }
    }

    /// Moves an application to a final state and releases its containers (all of them,
    /// except a finished application's AM, which exits by itself).
    pub(crate) fn finish_application(
        &mut self,
        app_id: &str,
        state: ApplicationState,
        final_status: FinalApplicationStatus,
        diagnostics: String,
    ) {
        let Some(app) = self.apps.get_mut(app_id) else {
            return;
        };
        if app.is_terminal() {
            return;
        }
        tracing::info!(application = %app_id, ?state, "application ended");
        app.state = state;
        app.final_status = final_status;
        app.diagnostics = diagnostics;
        app.finish_ms = self.clock.now_ms();
        app.asks.clear();
        app.wake.notify_one();
        if let Some(ended) = &self.ended {
            let _ = ended.send(app_id.to_string());
        }
        self.persist_or_log(app_id);
        let Some(app) = self.apps.get(app_id) else {
            return;
        };
        let keep_am = state == ApplicationState::AppFinished;
        let am = app.am_container.clone();
        let doomed: Vec<String> = app
            .live
            .iter()
            .filter(|c| !(keep_am && Some(*c) == am.as_ref()))
            .cloned()
            .collect();
        let (exit, why) = match state {
            ApplicationState::AppKilled => (
                ContainerExitStatus::KilledByResourcemanager,
                "Container killed because the application was killed",
            ),
            _ => (
                ContainerExitStatus::KilledAfterAppCompletion,
                "Container killed after the application finished",
            ),
        };
        for c in doomed {
            self.release_container(&c, exit, why, false);
        }
        self.clean_up_if_done(app_id);
        if self.event_driven() {
            self.schedule_all();
        }
    }

    /// Kills the AM containers of applications that unregistered more than
    /// `am_finish_grace` ago and are still running.
    pub fn reap_finished_ams(&mut self, now_ms: u64) {
        let grace = self.options.am_finish_grace.as_millis() as u64;
        let lingering: Vec<String> = self
            .apps
            .values()
            .filter(|a| a.is_terminal() && a.finish_ms + grace <= now_ms)
            .filter_map(|a| a.am_container.clone().filter(|c| a.live.contains(c)))
            .collect();
        for c in lingering {
            let app = self.containers.get(&c).map(|r| r.application.clone());
            self.release_container(
                &c,
                ContainerExitStatus::KilledAfterAppCompletion,
                "AM container still running after the application finished",
                false,
            );
            if let Some(app) = app {
                self.clean_up_if_done(&app);
            }
        }
    }

    /// Once an application has ended and holds no container, its nodes delete its
    /// local directories.
    fn clean_up_if_done(&mut self, app_id: &str) {
        let Some(app) = self.apps.get_mut(app_id) else {
            return;
        };
        if !app.is_terminal() || !app.live.is_empty() || app.cleaned {
            return;
        }
        app.cleaned = true;
        for node_id in &app.nodes_used {
            if let Some(node) = self.nodes.get_mut(node_id) {
                node.finished_apps.push(app_id.to_string());
                node.wake.notify_one();
            }
        }
    }
}
