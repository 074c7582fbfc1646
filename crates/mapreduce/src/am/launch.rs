//! Launching attempts in the containers the ResourceManager hands out, and stopping them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::ContainerManagerClient;

use crate::error::{MapReduceError, Result};
use crate::history;
use crate::ids::{TaskAttemptId, TaskType};
use crate::output;
use crate::task::{TaskSpec, TaskWork};
use crate::yarn::write_json;

use super::tasks::Running;
use super::Am;

impl Am {
    /// A container arrived: start the attempt it was asked for, or give it back.
    pub(super) async fn assign(&mut self, c: y::Container) -> Result<()> {
        let Some((kind, index)) = self.asks.remove(&c.ask_id) else {
            self.releases.push(c.container_id);
            return Ok(());
        };
        let t = &mut self.tasks(kind)[index as usize];
        t.asked = t.asked.saturating_sub(1);
        if t.done.is_some() {
            self.releases.push(c.container_id);
            return Ok(());
        }
        let attempt = t.id.attempt(t.attempts);
        t.attempts += 1;
        let speculative = std::mem::take(&mut t.speculating);
        let data_local = kind == TaskType::Map
            && t.split
                .as_ref()
                .is_some_and(|s| s.hosts.iter().any(|h| h == &c.host || h == &c.node_id));
        let work = match kind {
            TaskType::Map => TaskWork::Map {
                split: t.split.clone().expect("maps have splits"),
            },
            TaskType::Reduce => TaskWork::Reduce {
                num_maps: self.maps.len() as u32,
                map_outputs: vec![],
            },
        };
        let spec = TaskSpec {
            attempt,
            job: self.job.clone(),
            work,
            local_dir: PathBuf::from(format!("/tmp/tusk/task/{attempt}")),
            host: c.host.clone(),
            work_dir: None,
        };
        let written = write_json(
            &self.dfs,
            &self.staging.task_spec(&attempt.to_string()),
            &spec,
        )
        .await;
        if let Err(e) = written {
            // As Hadoop counts a failed container launch as a failed attempt: the DFS
            // may be briefly unable to take the spec (a NameNode restarting before its
            // DataNodes have registered again); the task is asked for again.
            self.releases.push(c.container_id);
            return self.launch_failed(kind, index, attempt, e.to_string());
        }
        let running = Running {
            attempt,
            container: c.container_id.clone(),
            node: c.node_id.clone(),
            nm_address: c.nm_address.clone(),
            shuffle_address: c.shuffle_address.clone(),
            started: Instant::now(),
            speculative,
            data_local,
            node_status: c.node_status.as_ref().map(history::NodeStatusAtLaunch::of),
            partition_bytes: Vec::new(),
        };
        match self.start_container(&c, attempt).await {
            Ok(()) => {
                tracing::info!(%attempt, container = %c.container_id, node = %c.node_id, speculative, "attempt started");
                self.tasks(kind)[index as usize].running.push(running);
            }
            Err(e) => {
                tracing::warn!(%attempt, error = %e, "could not start the container; asking again");
                self.releases.push(c.container_id);
                self.tasks(kind)[index as usize].bad_nodes.insert(c.node_id);
                self.ask_again(kind, index);
            }
        }
        Ok(())
    }

    /// An attempt that could not be launched: a failure of the task, which is asked for
    /// again until `mapreduce.{map,reduce}.maxattempts` failures.
    fn launch_failed(
        &mut self,
        kind: TaskType,
        index: u32,
        attempt: TaskAttemptId,
        error: String,
    ) -> Result<()> {
        tracing::warn!(%attempt, %error, "could not launch the attempt; asking again");
        let max = self.job.max_attempts(kind)?;
        let t = &mut self.tasks(kind)[index as usize];
        t.failures += 1;
        if t.failures >= max && t.running.is_empty() {
            return Err(MapReduceError::TaskFailed {
                attempt: attempt.to_string(),
                attempts: t.failures,
                last_error: error,
            });
        }
        if t.running.is_empty() {
            self.ask_again(kind, index);
        }
        Ok(())
    }

    /// The client of the NodeManager at `address`, one per node for the AM's life.
    pub(super) fn nm(&mut self, address: &str) -> Arc<ContainerManagerClient> {
        self.nms
            .entry(address.to_string())
            .or_insert_with(|| Arc::new(ContainerManagerClient::new(address)))
            .clone()
    }

    pub(super) async fn start_container(
        &mut self,
        c: &y::Container,
        attempt: TaskAttemptId,
    ) -> Result<()> {
        let mut args = vec![
            "mr-task".to_string(),
            "--staging".into(),
            self.staging.0.clone(),
            "--attempt".into(),
            attempt.to_string(),
        ];
        for (k, v) in &self.opts.task_conf {
            args.push("-D".into());
            args.push(format!("{k}={v}"));
        }
        let env: HashMap<String, String> = [
            ("TUSK_JOB_ID".to_string(), self.job_id.to_string()),
            ("TUSK_TASK_ATTEMPT_ID".to_string(), attempt.to_string()),
            (
                "TUSK_LOG".to_string(),
                std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
            ),
        ]
        .into();
        let req = y::StartContainersRequest {
            containers: vec![y::ContainerToLaunch {
                container_id: c.container_id.clone(),
                application_id: self.opts.application_id.clone(),
                resource: c.resource,
                launch: Some(y::ContainerLaunchContext {
                    command: self.opts.tusk_exe.display().to_string(),
                    args,
                    env,
                    working_dir: String::new(),
                }),
                ..Default::default()
            }],
        };
        let nm = self.nm(&c.nm_address);
        let resp = nm.start_containers(&req).await.map_err(|e| {
            MapReduceError::Task(format!("startContainers on {}: {e}", c.nm_address))
        })?;
        match resp.failed.first() {
            Some(f) => Err(MapReduceError::Task(format!(
                "{} refused {}: {}",
                c.nm_address, f.container_id, f.message
            ))),
            None => Ok(()),
        }
    }

    pub(super) async fn kill(&mut self, run: &Running) {
        let nm = self.nm(&run.nm_address);
        if let Err(e) = nm.stop_containers(vec![run.container.clone()]).await {
            tracing::warn!(container = %run.container, error = %e, "stopContainers failed");
        }
        let _ = output::abort_task(&self.dfs, &self.job.output, run.attempt).await;
    }
}
