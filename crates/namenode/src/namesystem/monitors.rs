//! Background work and the state it watches, one file per monitor:
//!
//! - `replication`: dead-node detection, re-replication, corrupt and excess replicas.
//! - `leases`: expired leases, handed to block recovery.
//! - `block_recovery`: lease recovery and block recovery of a file's last block.
//! - `safe_mode`: start-up and manual safe mode.
//! - `decommission`: host lists and decommissioning.
//! - `trash`: the trash emptier.
//! - delegation tokens (under Kerberos): master keys rolled when due, expired tokens
//!   dropped (HDFS's `ExpiredTokenRemover`).
//!
//! Checkpoints are scheduled here too: one is written once enough edits or enough time
//! went by since the last.

pub(crate) mod block_recovery;
pub mod decommission;
mod leases;
mod replication;
pub mod safe_mode;
pub mod trash;

use std::sync::Arc;
use std::time::Duration;

use tusk_common::Shutdown;

use crate::namesystem::Namesystem;

/// Starts the monitors; they stop with `shutdown`.
pub fn spawn_monitors(fsn: Arc<Namesystem>, shutdown: Shutdown) {
    let period = fsn
        .options
        .redundancy_interval
        .min(fsn.options.heartbeat_recheck_interval)
        .max(Duration::from_millis(20));
    // A standby leaves replication, lease recovery and key rolls to the active (their
    // changes would be refused), and checkpoints under HA are the replicated log's.
    spawn_every(shutdown.clone(), period, {
        let fsn = fsn.clone();
        move || {
            if fsn.ha.is_active() {
                fsn.replication_tick()
            }
        }
    });
    let lease_period = (fsn.options.lease_soft_limit / 4)
        .clamp(Duration::from_millis(100), Duration::from_secs(1));
    spawn_every(shutdown.clone(), lease_period, {
        let fsn = fsn.clone();
        move || {
            if !fsn.ha.is_active() {
                return;
            }
            let fsn = fsn.clone();
            tokio::spawn(async move {
                if let Err(e) = fsn.recover_expired_leases().await {
                    tracing::warn!(error = %e, "lease recovery failed");
                }
            });
        }
    });
    if fsn.options.kerberos.is_some() {
        let period = fsn
            .options
            .delegation_tokens
            .key_update_interval
            .clamp(Duration::from_millis(100), Duration::from_secs(60));
        spawn_every(shutdown.clone(), period, {
            let fsn = fsn.clone();
            move || {
                if !fsn.ha.is_active() {
                    return;
                }
                if let Err(e) = fsn.roll_delegation_keys(tusk_common::now_millis() as i64) {
                    tracing::debug!(error = %e, "delegation token keys not rolled yet");
                }
            }
        });
    }
    spawn_every(shutdown, Duration::from_secs(5), move || {
        if fsn.ha.is_enabled() {
            return;
        }
        let due = {
            let st = fsn.read();
            st.txns_since_checkpoint >= fsn.options.checkpoint_txns
                || (st.txns_since_checkpoint > 0
                    && st.last_checkpoint.elapsed() >= fsn.options.checkpoint_period)
        };
        if due {
            let fsn = fsn.clone();
            tokio::task::spawn_blocking(move || {
                if let Err(e) = fsn.checkpoint_from_log() {
                    tracing::error!(error = %e, "checkpoint failed");
                }
            });
        }
    });
}

fn spawn_every(shutdown: Shutdown, period: Duration, mut f: impl FnMut() + Send + 'static) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.wait() => return,
                _ = tick.tick() => f(),
            }
        }
    });
}
