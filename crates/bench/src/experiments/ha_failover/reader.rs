//! The reader of the history check: over the whole run, asks the namespace
//! (`getFileInfo` through Tusk's client on `hdfs://ns1`) about each writer's file
//! before, at and after the one it writes now, recording when it asked, when the answer
//! came and what it said. A read that fails has no outcome and is left out (as a
//! Jepsen checker leaves out failed reads).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tusk_client::DfsClient;
use tusk_cluster::history::Op;
use tusk_common::now_millis;

use super::timeline;
use super::writers::{Client, Progress};

/// The reader's name in the history.
const NAME: &str = "reader (Tusk client)";

/// Between two passes over the writers.
const PAUSE: Duration = Duration::from_millis(20);

pub struct Reader {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Vec<Op>>,
}

impl Reader {
    /// Starts reading around each writer's current file.
    pub fn start(client: DfsClient, writers: Vec<(Client, Progress)>) -> Reader {
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(read(client, writers, stop.clone()));
        Reader { stop, task }
    }

    /// Stops and returns every read it recorded.
    pub async fn stop(self) -> Vec<Op> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap_or_default()
    }
}

async fn read(
    client: DfsClient,
    writers: Vec<(Client, Progress)>,
    stop: Arc<AtomicBool>,
) -> Vec<Op> {
    let mut ops = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        for (writer, progress) in &writers {
            let Some(now) = progress.writing() else {
                continue;
            };
            for n in now.saturating_sub(1)..=now + 1 {
                let path = timeline::file_path(writer.dir(), n);
                let invoked = now_millis();
                if let Ok(status) = client.get_file_info(&path).await {
                    let length = status.map(|s| s.length);
                    ops.push(Op::read(NAME, &path, invoked, now_millis(), length));
                }
            }
        }
        tokio::time::sleep(PAUSE).await;
    }
    ops
}
