//! Applications kept in the [`StateStore`] (when recovery is enabled) and brought back
//! by a restarted ResourceManager: finished ones as they ended, unfinished ones waiting
//! for a new AM attempt (non-work-preserving restart, as Hadoop without
//! `yarn.resourcemanager.work-preserving-recovery.enabled`).

use std::sync::Arc;

use tusk_proto::tusk::yarn::{ApplicationState, FinalApplicationStatus};

use super::{App, Cluster, Submission};
use crate::error::{ResourceManagerError, Result};
use crate::resource::Resource;
use crate::state_store::{
    StateStore, StoredApplication, StoredFinish, StoredLaunch, MAX_COMPLETED_APPLICATIONS,
};

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
            finished: self.is_terminal().then(|| StoredFinish {
                state: self.state as i32,
                final_status: self.final_status as i32,
                diagnostics: self.diagnostics.clone(),
                finish_ms: self.finish_ms,
            }),
        }
    }

    /// An application as recovered: ended as it ended, or waiting for the AM of a new
    /// attempt that the restart does not count against its maximum.
    fn recovered(s: StoredApplication, seq: u64) -> App {
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
                app.uncounted_attempts = s.uncounted_attempts;
                app.cleaned = true;
            }
            None => {
                app.diagnostics =
                    "Recovered after a ResourceManager restart; a new attempt is launched".into();
                app.attempt = s.attempts + 1;
                app.uncounted_attempts = s.uncounted_attempts + u32::from(s.attempts > 0);
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

    /// Brings back every application of `store` (a ResourceManager's start); returns
    /// how many were unfinished and get a new attempt.
    pub(crate) fn recover(&mut self, store: &dyn StateStore) -> Result<usize> {
        let io = |source| ResourceManagerError::Io {
            what: "the ResourceManager state store",
            source,
        };
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
            let app = App::recovered(s, seq);
            if !app.is_terminal() {
                unfinished += 1;
                tracing::info!(application = %app.id, attempt = app.attempt, "application recovered; launching a new attempt");
            }
            let id = app.id.clone();
            self.apps.insert(id.clone(), app);
            self.persist(&id)?;
        }
        Ok(unfinished)
    }
}
