//! Group commit: records appended while earlier batches are still being committed wait
//! in a queue, and the next free slot takes everything queued as one log entry. So one
//! fsync on each node covers many records, and a lone appender still goes at once.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::error::{HaError, Result};
use crate::raft_types::{Batch, Raft};

/// A record waiting for its batch, and whom to tell its index.
pub(crate) struct Pending {
    pub record: Vec<u8>,
    pub done: oneshot::Sender<Result<u64>>,
}

/// Forms batches until the queue closes; at most `in_flight` batches are handed to
/// consensus and not yet answered.
pub(crate) async fn run(
    raft: Raft,
    mut queue: mpsc::UnboundedReceiver<Pending>,
    max_records: usize,
    in_flight: usize,
    node: u64,
) {
    let slots = Arc::new(Semaphore::new(in_flight));
    while let Some(first) = queue.recv().await {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut records = vec![first.record];
        let mut waiters = vec![first.done];
        while records.len() < max_records {
            match queue.try_recv() {
                Ok(p) => {
                    records.push(p.record);
                    waiters.push(p.done);
                }
                Err(_) => break,
            }
        }
        match raft.client_write_ff(Batch { records }).await {
            Ok(answer) => {
                tokio::spawn(async move {
                    let result = match answer.await {
                        Ok(Ok(response)) => Ok(response.data.first),
                        Ok(Err(e)) => Err(super::write_error(node, e)),
                        Err(_) => Err(HaError::Unconfirmed {
                            node,
                            reason:
                                "leadership changed before the batch committed; it may still commit"
                                    .into(),
                        }),
                    };
                    drop(slot);
                    answer_all(waiters, result);
                });
            }
            Err(fatal) => answer_all(
                waiters,
                Err(HaError::Stopped {
                    node,
                    reason: fatal.to_string(),
                }),
            ),
        }
    }
}

/// Tells each waiter its record's index (`first + position`) or the batch's error.
fn answer_all(waiters: Vec<oneshot::Sender<Result<u64>>>, result: Result<u64>) {
    for (i, done) in waiters.into_iter().enumerate() {
        let answer = match &result {
            Ok(first) => Ok(first + i as u64),
            Err(e) => Err(e.duplicate()),
        };
        let _ = done.send(answer);
    }
}
