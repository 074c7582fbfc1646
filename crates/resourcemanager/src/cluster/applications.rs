//! The ApplicationClient and ApplicationMaster sides: submission, reports and kill;
//! AM registration, allocate (asks, cancellations, releases, progress) and
//! unregistration.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use tokio::sync::Notify;
use tusk_proto::tusk::yarn as y;
use tusk_proto::tusk::yarn::{ApplicationState, ContainerExitStatus, FinalApplicationStatus};

use super::{App, Ask, Cluster, Submission};
use crate::error::{ResourceManagerError, Result};
use crate::resource::Resource;
use crate::status_policy::TaskKind;

impl App {
    /// A new application waiting for its first attempt's AM container.
    pub(crate) fn accepted(id: String, seq: u64, s: Submission) -> App {
        App {
            id,
            seq,
            name: s.name,
            queue: s.queue,
            user: s.user,
            app_type: s.app_type,
            am_resource: s.am_resource,
            am_launch: s.am_launch,
            hadoop_am_launch: s.hadoop_am_launch,
            hadoop: None,
            max_attempts: s.max_attempts,
            // SUBMITTED lasts no longer than the submission: there is no admission step.
            state: ApplicationState::AppAccepted,
            final_status: FinalApplicationStatus::FinalUndefined,
            diagnostics: String::new(),
            progress: 0.0,
            tracking_url: String::new(),
            attempt: 1,
            uncounted_attempts: 0,
            am_container: None,
            am_node: None,
            am_placements: Default::default(),
            am_exit_status: None,
            registered: false,
            kept_attempt: false,
            submit_ms: s.submit_ms,
            start_ms: 0,
            finish_ms: 0,
            next_container: 0,
            asks: Vec::new(),
            allocated: Vec::new(),
            completed: Vec::new(),
            live: HashSet::new(),
            used: Resource::default(),
            nodes_used: BTreeSet::new(),
            lost_nodes: BTreeSet::new(),
            cleaned: false,
            logs_aggregated: Default::default(),
            wake: Arc::new(Notify::new()),
        }
    }
}

impl Cluster {
    /// Accepts an application; its AM container waits for a node with room.
    pub fn submit(&mut self, r: y::SubmitApplicationRequest, user: &str) -> Result<String> {
        let am_resource = self.normalize(Resource::from(r.am_resource.as_ref()))?;
        let id = self.new_application_id();
        let max_attempts = self.max_attempts(r.max_attempts);
        let submission = Submission {
            name: r.name,
            queue: if r.queue.is_empty() {
                "default".into()
            } else {
                r.queue
            },
            user: user.to_string(),
            app_type: r.application_type,
            am_resource,
            am_launch: r.am_launch.unwrap_or_default(),
            hadoop_am_launch: None,
            max_attempts,
            submit_ms: self.clock.now_ms(),
        };
        self.accept(&id, submission)?;
        Ok(id)
    }

    /// The next application id (Hadoop's getNewApplication hands one out before the
    /// submission that uses it).
    pub(crate) fn new_application_id(&mut self) -> String {
        let seq = self.next_app_seq;
        self.next_app_seq += 1;
        crate::ids::application_id(self.cluster_ts, seq)
    }

    /// The attempts an application may have: `asked`, capped by
    /// `yarn.resourcemanager.am.max-attempts` (0 = that maximum).
    pub(crate) fn max_attempts(&self, asked: u32) -> u32 {
        match asked {
            0 => self.options.am_max_attempts,
            n => n.min(self.options.am_max_attempts),
        }
    }

    /// Accepts an application under an id from [`Cluster::new_application_id`]; its AM
    /// container waits for a node with room.
    pub(crate) fn accept(&mut self, id: &str, submission: Submission) -> Result<()> {
        tracing::info!(application = %id, name = %submission.name, "application submitted");
        let seq = crate::ids::application_seq(id).unwrap_or_default();
        self.apps.insert(
            id.to_string(),
            App::accepted(id.to_string(), u64::from(seq), submission),
        );
        // Acknowledged only once a restart would find it.
        if let Err(e) = self.persist(id) {
            self.apps.remove(id);
            return Err(e);
        }
        if self.event_driven() {
            self.schedule_all();
        }
        Ok(())
    }

    pub fn report(&self, app_id: &str) -> Result<y::ApplicationReport> {
        self.apps
            .get(app_id)
            .map(|a| self.report_of(a))
            .ok_or_else(|| ResourceManagerError::ApplicationNotFound {
                application: app_id.to_string(),
            })
    }

    pub fn list(&self, r: &y::ListApplicationsRequest) -> Vec<y::ApplicationReport> {
        self.apps
            .values()
            .filter(|a| r.states.is_empty() || r.states.contains(&(a.state as i32)))
            .filter(|a| r.queue.is_empty() || r.queue == a.queue)
            .map(|a| self.report_of(a))
            .collect()
    }

    /// Kills an application; false when it had already ended.
    pub fn kill(&mut self, app_id: &str, diagnostics: &str) -> Result<bool> {
        let app = self.app(app_id)?;
        if app.is_terminal() {
            return Ok(false);
        }
        let message = if diagnostics.is_empty() {
            "Application killed by user.".to_string()
        } else {
            diagnostics.to_string()
        };
        self.finish_application(
            app_id,
            ApplicationState::AppKilled,
            FinalApplicationStatus::FinalKilled,
            message,
        );
        Ok(true)
    }

    pub fn register_am(
        &mut self,
        r: &y::RegisterApplicationMasterRequest,
    ) -> Result<y::RegisterApplicationMasterResponse> {
        let (minimum, maximum) = (
            self.options.minimum_allocation,
            self.options.maximum_allocation,
        );
        let now_ms = self.clock.now_ms();
        let app = self.attempt_mut(&r.attempt_id)?;
        if !app.registered {
            app.registered = true;
            app.state = ApplicationState::AppRunning;
            if app.start_ms == 0 {
                app.start_ms = now_ms;
            }
            app.tracking_url = r.tracking_url.clone();
            tracing::info!(application = %app.id, attempt = %r.attempt_id, "AM registered");
        }
        Ok(y::RegisterApplicationMasterResponse {
            application_id: app.id.clone(),
            queue: app.queue.clone(),
            maximum_capability: Some(maximum.into()),
            minimum_capability: Some(minimum.into()),
        })
    }

    /// Applies an allocate call and takes what is ready for the AM. In event-driven
    /// mode new asks and releases are scheduled at once. Returns the application's
    /// wake-up handle so the caller can hold an empty reply.
    pub fn allocate(
        &mut self,
        r: &y::AllocateRequest,
    ) -> Result<(y::AllocateResponse, Arc<Notify>)> {
        let asks = r
            .asks
            .iter()
            .map(|a| self.ask_from(a))
            .collect::<Result<Vec<Ask>>>()?;
        let app = self.attempt_mut(&r.attempt_id)?;
        if !app.is_terminal() && !app.registered {
            return Err(ResourceManagerError::NotRegistered {
                attempt: r.attempt_id.clone(),
            });
        }
        let app_id = app.id.clone();
        if !app.is_terminal() {
            app.progress = r.progress.clamp(0.0, 1.0);
            app.asks.retain(|a| !r.cancel_asks.contains(&a.ask_id));
            app.asks.extend(asks);
            let releases: Vec<String> = r
                .releases
                .iter()
                .filter(|c| app.live.contains(*c) && app.am_container.as_ref() != Some(*c))
                .cloned()
                .collect();
            for c in &releases {
                self.release_container(
                    c,
                    ContainerExitStatus::KilledByAppmaster,
                    "Container released by application",
                    true,
                );
            }
            if self.event_driven() && !(r.asks.is_empty() && releases.is_empty()) {
                self.schedule_all();
            }
        }
        Ok(self.take_allocation(&app_id))
    }

    /// Drains the containers allocated for, and finished in, an application.
    pub fn take_allocation(&mut self, app_id: &str) -> (y::AllocateResponse, Arc<Notify>) {
        let available = self
            .nodes
            .values()
            .filter(|n| !n.lost)
            .fold(Resource::default(), |acc, n| acc.plus(&n.free()));
        let num_cluster_nodes = self.live_nodes() as u32;
        let app = self.apps.get_mut(app_id).expect("allocating app exists");
        let response = y::AllocateResponse {
            allocated: std::mem::take(&mut app.allocated),
            completed: std::mem::take(&mut app.completed),
            pending: app.pending_containers(),
            num_cluster_nodes,
            available: Some(available.into()),
            shutdown: app.is_terminal(),
        };
        (response, app.wake.clone())
    }

    pub fn finish_am(&mut self, r: &y::FinishApplicationMasterRequest) -> Result<bool> {
        let app = self.attempt_mut(&r.attempt_id)?;
        if app.is_terminal() {
            return Ok(true);
        }
        let final_status = FinalApplicationStatus::try_from(r.final_status)
            .unwrap_or(FinalApplicationStatus::FinalUndefined);
        let state = match final_status {
            FinalApplicationStatus::FinalFailed => ApplicationState::AppFailed,
            FinalApplicationStatus::FinalKilled => ApplicationState::AppKilled,
            _ => ApplicationState::AppFinished,
        };
        app.progress = 1.0;
        if !r.tracking_url.is_empty() {
            app.tracking_url = r.tracking_url.clone();
        }
        let app_id = app.id.clone();
        let final_status = match final_status {
            FinalApplicationStatus::FinalUndefined => FinalApplicationStatus::FinalSucceeded,
            s => s,
        };
        self.finish_application(&app_id, state, final_status, r.diagnostics.clone());
        Ok(true)
    }

    /// The application `app_id`, or Hadoop's ApplicationNotFoundException.
    pub(crate) fn app(&self, app_id: &str) -> Result<&App> {
        self.apps
            .get(app_id)
            .ok_or_else(|| ResourceManagerError::ApplicationNotFound {
                application: app_id.to_string(),
            })
    }

    /// The application whose current attempt is `attempt_id`.
    fn attempt_mut(&mut self, attempt_id: &str) -> Result<&mut App> {
        let not_found = || ResourceManagerError::AttemptNotFound {
            attempt: attempt_id.to_string(),
        };
        let (app_id, attempt) = crate::ids::parse_attempt_id(attempt_id).ok_or_else(not_found)?;
        self.apps
            .get_mut(&app_id)
            .filter(|a| a.attempt == attempt)
            .ok_or_else(not_found)
    }

    pub(crate) fn normalize(&self, r: Resource) -> Result<Resource> {
        let (min, max) = (
            &self.options.minimum_allocation,
            &self.options.maximum_allocation,
        );
        r.normalize(min, max)
            .ok_or_else(|| ResourceManagerError::InvalidResourceRequest {
                message: format!("{r:?} is larger than the maximum allocation {max:?}"),
            })
    }

    fn ask_from(&self, a: &y::ContainerAsk) -> Result<Ask> {
        Ok(Ask {
            ask_id: a.ask_id,
            priority: a.priority,
            resource: self.normalize(Resource::from(a.resource.as_ref()))?,
            nodes: a.nodes.clone(),
            volumes: a.volumes.clone(),
            racks: a.racks.clone(),
            strict: a.strict_locality,
            remaining: a.count,
            missed: 0,
            last_offer: 0,
            kind: TaskKind::of(a.task_kind),
            held: 0,
            last_held_offer: 0,
            held_since: None,
        })
    }

    fn report_of(&self, a: &App) -> y::ApplicationReport {
        let am_host = a
            .am_node
            .as_ref()
            .and_then(|n| self.nodes.get(n))
            .map(|n| n.host.clone())
            .unwrap_or_default();
        y::ApplicationReport {
            application_id: a.id.clone(),
            name: a.name.clone(),
            queue: a.queue.clone(),
            user: a.user.clone(),
            application_type: a.app_type.clone(),
            state: a.state as i32,
            final_status: a.final_status as i32,
            diagnostics: a.diagnostics.clone(),
            progress: a.progress,
            current_attempt_id: a.attempt_id(),
            attempts: a.attempt,
            am_container_id: a.am_container.clone().unwrap_or_default(),
            am_node_id: a.am_node.clone().unwrap_or_default(),
            am_host,
            am_exit_status: a.am_exit_status.unwrap_or_default(),
            am_exited: a.am_exit_status.is_some(),
            submit_time_ms: a.submit_ms,
            start_time_ms: a.start_ms,
            finish_time_ms: a.finish_ms,
            used: Some(a.used.into()),
            running_containers: a.live.len() as u32,
            tracking_url: a.tracking_url.clone(),
        }
    }
}
