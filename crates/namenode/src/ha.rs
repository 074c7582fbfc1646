//! High availability: three (or five) NameNodes of one nameservice share their edit log
//! through the replicated log of `tusk-ha` (Raft). The leader of the log is the active
//! NameNode; the others are standbys that apply every committed edit as it arrives, so
//! each holds the whole namespace and, from the DataNodes that report to every NameNode,
//! the block locations. There is no JournalNode and no ZooKeeper: the log's election is
//! the failover, and its terms fence an old active (docs/ha.md).
//!
//! - [`HaOptions`]: the nameservice, this NameNode's id and the log's members, from
//!   HDFS's keys (`dfs.nameservices`, `dfs.ha.namenodes.NS`, `dfs.ha.namenode.id`) and
//!   Tusk's `tusk.namenode.ha.log-address.NS.NN`.
//! - [`HaRole`]: active or standby and the term, checked by every client call and every
//!   logged change; a NameNode without HA is always active.
//! - `sink`: the edit log's sink on the active: a batch of edits is acknowledged once
//!   committed on a majority.
//! - `machine`: the namespace as the log's state machine: a standby applies the edits
//!   the active made.
//! - `transitions`: following the log's leadership: a new leader catches up with every
//!   committed edit before it serves as active; an active that loses leadership becomes
//!   a standby, or stops when it holds edits that may not have committed (HDFS's
//!   NameNode stops when it cannot write to a quorum of journals, too).

mod machine;
mod sink;
mod transitions;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use tusk_common::config::ha::Nameservice;
use tusk_common::config::Configuration;
use tusk_ha::{ReplicatedLog, ReplicatedLogOptions};
use tusk_proto::internal::HaServiceState;

use crate::error::{NameNodeError, Result};

pub use machine::NamespaceMachine;
pub use sink::{NotActiveSink, ReplicatedSink};
pub use transitions::follow_leadership;

/// This NameNode's place in an HA nameservice.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HaOptions {
    /// The nameservice (`dfs.nameservices`).
    pub nameservice: String,
    /// This NameNode's id in `dfs.ha.namenodes.NS` (`dfs.ha.namenode.id`).
    pub namenode_id: String,
    /// Every NameNode's id, in configuration order; the log's node ids are positions in
    /// this list, from 1.
    pub namenode_ids: Vec<String>,
    /// The replicated log: members, directory, timers.
    pub log: ReplicatedLogOptions,
    /// Which of the log's peer links carry messages: all, except where an in-process
    /// test cuts them to partition a NameNode.
    #[serde(skip)]
    pub links: tusk_ha::Links,
}

impl HaOptions {
    /// The HA options when `dfs.nameservices` names one nameservice with two or more
    /// NameNodes; `None` for a NameNode on its own. `name_dir` holds the log unless
    /// `tusk.namenode.ha.log.dir` says otherwise.
    pub fn from_conf(conf: &Configuration, name_dir: &Path) -> Result<Option<HaOptions>> {
        let invalid = |message: String| NameNodeError::InvalidArgument { message };
        let names = conf.get_list("dfs.nameservices");
        let mut found = Vec::new();
        for name in &names {
            if let Some(ns) = Nameservice::from_conf(conf, name).map_err(invalid)? {
                if ns.namenodes.len() > 1 {
                    found.push(ns);
                }
            }
        }
        let ns = match found.len() {
            0 => return Ok(None),
            1 => found.remove(0),
            _ => {
                return Err(invalid(format!(
                    "dfs.nameservices lists {} HA nameservices; a Tusk NameNode serves one",
                    found.len()
                )))
            }
        };
        // Hadoop's `haadmin` reads this to decide whether manual transitions are
        // allowed; Tusk's NameNodes always elect their active themselves.
        let automatic_key = "dfs.ha.automatic-failover.enabled";
        let automatic = conf
            .get_bool(
                &format!("{automatic_key}.{}", ns.id),
                conf.get_bool(automatic_key, true)
                    .map_err(|e| invalid(e.to_string()))?,
            )
            .map_err(|e| invalid(e.to_string()))?;
        if !automatic {
            tracing::warn!(
                "{automatic_key} is false, but Tusk's NameNodes always elect their active through the replicated log; failover stays automatic"
            );
        }
        let namenode_id = conf
            .get("dfs.ha.namenode.id")
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                invalid(format!(
                    "dfs.ha.namenode.id must name this NameNode among dfs.ha.namenodes.{} ({})",
                    ns.id,
                    ns.namenodes
                        .iter()
                        .map(|n| n.id.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                ))
            })?
            .to_string();
        let mut voters = BTreeMap::new();
        let mut node_id = None;
        for (i, nn) in ns.namenodes.iter().enumerate() {
            let id = i as u64 + 1;
            let address = nn.log_address.clone().ok_or_else(|| {
                invalid(format!(
                    "tusk.namenode.ha.log-address.{}.{} is not set: every NameNode of an HA nameservice needs the address its replicated log listens on",
                    ns.id, nn.id
                ))
            })?;
            voters.insert(id, address);
            if nn.id == namenode_id {
                node_id = Some(id);
            }
        }
        let node_id = node_id.ok_or_else(|| {
            invalid(format!(
                "dfs.ha.namenode.id={namenode_id} is not in dfs.ha.namenodes.{}",
                ns.id
            ))
        })?;
        let d = ReplicatedLogOptions::default();
        let ms =
            |key: &str, default: u64| conf.get_u64(&format!("tusk.namenode.ha.{key}"), default);
        let log = ReplicatedLogOptions {
            node_id,
            voters,
            learners: BTreeMap::new(),
            dir: conf
                .get("tusk.namenode.ha.log.dir")
                .map(|d| d.trim().into())
                .unwrap_or_else(|| name_dir.join("ha-log")),
            heartbeat_interval_ms: ms("heartbeat-interval-ms", d.heartbeat_interval_ms)?,
            election_timeout_min_ms: ms("election-timeout-min-ms", d.election_timeout_min_ms)?,
            election_timeout_max_ms: ms("election-timeout-max-ms", d.election_timeout_max_ms)?,
            append_timeout_ms: ms("append-timeout-ms", d.append_timeout_ms)?,
            // No compaction yet: a snapshot must hold exactly the committed edits, and
            // the active's namespace runs ahead of the commit (docs/ha.md).
            snapshot_after_entries: u64::MAX,
            ..d
        };
        log.validate()
            .map_err(|e| invalid(format!("the replicated log's options: {e}")))?;
        Ok(Some(HaOptions {
            nameservice: ns.id,
            namenode_id,
            namenode_ids: ns.namenodes.into_iter().map(|n| n.id).collect(),
            log,
            links: tusk_ha::Links::default(),
        }))
    }

    /// This NameNode's position among the nameservice's (from 0) and how many there
    /// are: block keys are numbered from disjoint ranges by it.
    pub fn index_and_count(&self) -> (usize, usize) {
        let index = (self.log.node_id - 1) as usize;
        (index, self.namenode_ids.len())
    }
}

/// Starts this NameNode's member of the replicated log (binding its address unless
/// `listener` is given), points the edit log at it and follows its leadership until
/// `stop`, when the member stops too.
pub async fn start_log(
    fsn: &Arc<crate::Namesystem>,
    listener: Option<tokio::net::TcpListener>,
    stop: tusk_common::Shutdown,
) -> Result<()> {
    let ha = fsn.options.ha.as_ref().expect("called for HA only");
    let listener = match listener {
        Some(l) => l,
        None => {
            let address = ha.log.own_address().expect("validated: a member");
            tokio::net::TcpListener::bind(address).await?
        }
    };
    let machine = NamespaceMachine::new(Arc::downgrade(fsn));
    let log = ReplicatedLog::start(ha.log.clone(), listener, machine, ha.links.clone())
        .await
        .map_err(|e| NameNodeError::EditLog(format!("the replicated log did not start: {e}")))?;
    let log = Arc::new(log);
    fsn.edit_log.roll(Box::new(ReplicatedSink::new(
        log.clone(),
        tokio::runtime::Handle::current(),
    )))?;
    fsn.ha.set_log(log.clone());
    tracing::info!(
        nameservice = %ha.nameservice,
        namenode = %ha.namenode_id,
        log = %log.address(),
        "standby; following the replicated log"
    );
    tokio::spawn(follow_leadership(fsn.clone(), log.clone(), stop.clone()));
    tokio::spawn(async move {
        stop.wait().await;
        if let Err(e) = log.shutdown().await {
            tracing::warn!(error = %e, "the replicated log did not stop cleanly");
        }
    });
    Ok(())
}

/// Whether this NameNode serves as active, and in which term of the log. Without HA it
/// is active from the start and forever.
pub struct HaRole {
    enabled: bool,
    active: AtomicBool,
    term: AtomicU64,
    /// The replicated log, once started (HA only).
    log: OnceLock<Arc<ReplicatedLog>>,
}

impl HaRole {
    /// A NameNode on its own: active.
    pub fn single() -> Self {
        HaRole {
            enabled: false,
            active: AtomicBool::new(true),
            term: AtomicU64::new(0),
            log: OnceLock::new(),
        }
    }

    /// A NameNode of an HA nameservice: standby until the log elects it.
    pub fn standby() -> Self {
        HaRole {
            enabled: true,
            active: AtomicBool::new(false),
            term: AtomicU64::new(0),
            log: OnceLock::new(),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// The term this NameNode became active in (0 without HA or while standby).
    pub fn term(&self) -> u64 {
        self.term.load(Ordering::Acquire)
    }

    /// The state as DataNodes are told it in heartbeat replies.
    pub fn heartbeat_state(&self) -> HaServiceState {
        match (self.enabled, self.is_active()) {
            (false, _) => HaServiceState::HaNone,
            (true, true) => HaServiceState::HaActive,
            (true, false) => HaServiceState::HaStandby,
        }
    }

    /// The state as `getHAServiceState` reports it (Hadoop's `HAServiceStateProto`).
    pub fn service_state(&self) -> tusk_proto::hdfs::HaServiceStateProto {
        if self.is_active() {
            tusk_proto::hdfs::HaServiceStateProto::Active
        } else {
            tusk_proto::hdfs::HaServiceStateProto::Standby
        }
    }

    /// Refuses a client call unless this NameNode is active (HDFS's
    /// `checkOperation`): the client fails over to another NameNode. A standby does not
    /// serve reads either (no observer reads yet), and an active that has not heard from
    /// a majority within its lease refuses too: another NameNode may lead by now.
    pub fn check_active(&self, category: &'static str) -> Result<()> {
        if !self.is_active() {
            return Err(NameNodeError::Standby {
                category,
                state: "standby",
            });
        }
        if let Some(log) = self.log.get() {
            if !log.holds_lease() {
                return Err(NameNodeError::Standby {
                    category,
                    state: "active without a majority",
                });
            }
        }
        Ok(())
    }

    /// The replicated log, once started.
    pub fn log(&self) -> Option<&Arc<ReplicatedLog>> {
        self.log.get()
    }

    pub(crate) fn set_log(&self, log: Arc<ReplicatedLog>) {
        let _ = self.log.set(log);
    }

    /// Becomes active in `term`; call with the namesystem's write lock held.
    pub(crate) fn activate(&self, term: u64) {
        self.term.store(term, Ordering::Release);
        self.active.store(true, Ordering::Release);
    }

    /// Becomes standby; call with the namesystem's write lock held, so no change is
    /// logged after it.
    pub(crate) fn deactivate(&self) {
        self.active.store(false, Ordering::Release);
        self.term.store(0, Ordering::Release);
    }
}

impl std::fmt::Debug for HaRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HaRole")
            .field("enabled", &self.enabled)
            .field("active", &self.is_active())
            .field("term", &self.term())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> Configuration {
        let mut conf = Configuration::new();
        for (k, v) in pairs {
            conf.set(k, *v);
        }
        conf
    }

    const NS: &[(&str, &str)] = &[
        ("dfs.nameservices", "ns1"),
        ("dfs.ha.namenodes.ns1", "nn1,nn2,nn3"),
        ("dfs.namenode.rpc-address.ns1.nn1", "h1:8020"),
        ("dfs.namenode.rpc-address.ns1.nn2", "h2:8020"),
        ("dfs.namenode.rpc-address.ns1.nn3", "h3:8020"),
        ("tusk.namenode.ha.log-address.ns1.nn1", "h1:8485"),
        ("tusk.namenode.ha.log-address.ns1.nn2", "h2:8485"),
        ("tusk.namenode.ha.log-address.ns1.nn3", "h3:8485"),
    ];

    #[test]
    fn the_log_members_follow_the_namenodes_order() {
        let mut pairs = NS.to_vec();
        pairs.push(("dfs.ha.namenode.id", "nn2"));
        let ha = HaOptions::from_conf(&conf(&pairs), Path::new("/name"))
            .unwrap()
            .unwrap();
        assert_eq!(ha.log.node_id, 2);
        assert_eq!(ha.log.voters[&3], "h3:8485");
        assert_eq!(ha.log.dir, Path::new("/name/ha-log"));
        assert_eq!(ha.index_and_count(), (1, 3));
    }

    #[test]
    fn no_nameservice_means_no_ha_and_a_missing_id_or_log_address_is_refused() {
        assert!(HaOptions::from_conf(&conf(&[]), Path::new("/n"))
            .unwrap()
            .is_none());
        let err = HaOptions::from_conf(&conf(NS), Path::new("/n")).unwrap_err();
        assert!(err.to_string().contains("dfs.ha.namenode.id"), "{err}");
        let mut pairs: Vec<_> = NS
            .iter()
            .copied()
            .filter(|(k, _)| !k.ends_with("log-address.ns1.nn3"))
            .collect();
        pairs.push(("dfs.ha.namenode.id", "nn1"));
        let err = HaOptions::from_conf(&conf(&pairs), Path::new("/n")).unwrap_err();
        assert!(err.to_string().contains("log-address.ns1.nn3"), "{err}");
    }

    #[test]
    fn a_standby_refuses_client_calls_with_standby_exception() {
        let role = HaRole::standby();
        let err = role.check_active("READ").unwrap_err();
        assert_eq!(err.exception(), tusk_rpc::HadoopException::Standby, "{err}");
        assert!(err
            .to_string()
            .contains("category READ is not supported in state standby"));
        role.activate(3);
        assert!(role.check_active("WRITE").is_ok());
        assert_eq!(role.heartbeat_state(), HaServiceState::HaActive);
        assert_eq!(role.term(), 3);
        assert!(HaRole::single().check_active("WRITE").is_ok());
        assert_eq!(HaRole::single().heartbeat_state(), HaServiceState::HaNone);
    }
}
