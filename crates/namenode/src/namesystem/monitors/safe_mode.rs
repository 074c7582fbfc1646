//! Safe mode, as HDFS's: a read-only namespace in which no replication or deletion work
//! is scheduled.
//!
//! - Start-up safe mode (HDFS's `BlockManagerSafeMode`): on after a load until the
//!   reported blocks reach `dfs.namenode.safemode.threshold-pct` of the complete blocks
//!   (a block counts once `dfs.namenode.safemode.replication.min` live replicas are
//!   reported) and `dfs.namenode.safemode.min.datanodes` are live; then it waits
//!   `dfs.namenode.safemode.extension` before turning off. An empty namespace meets the
//!   thresholds at once and never enters it.
//! - Manual safe mode: `setSafeMode(SAFEMODE_ENTER)` by the superuser; only
//!   `SAFEMODE_LEAVE` / `SAFEMODE_FORCE_EXIT` end it (they also end start-up safe mode).
//!
//! Not persisted, as in HDFS: a restart always begins with start-up safe mode.

use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use tusk_proto::hdfs as h;
use tusk_proto::internal::edit_record::Op;

use crate::blocks::BlockState;
use crate::error::{NameNodeError, Result};
use crate::namesystem::{Namesystem, State};
use crate::options::NameNodeOptions;

/// The command that turns safe mode off, as HDFS names it in its messages.
const LEAVE_TIP: &str = "Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off.";

/// Where start-up safe mode stands (HDFS's `BMSafeModeStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupStatus {
    /// Waiting for reported blocks or live DataNodes.
    PendingThreshold,
    /// Thresholds met; off once `until` passes (if they still hold).
    Extension {
        until: Instant,
    },
    Off,
}

/// Safe mode's state and its thresholds, fixed from the options at load.
#[derive(Clone, Debug)]
pub struct SafeMode {
    pub startup: StartupStatus,
    /// Turned on by `setSafeMode(SAFEMODE_ENTER)`.
    pub manual: bool,
    /// `dfs.namenode.safemode.threshold-pct`.
    pub threshold: f64,
    /// `dfs.namenode.safemode.min.datanodes`.
    pub min_datanodes: usize,
    /// `dfs.namenode.safemode.extension`.
    pub extension: Duration,
    /// `dfs.namenode.safemode.replication.min`: live replicas that make a block safe.
    pub safe_replication: usize,
}

/// Blocks that count towards the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockCounts {
    /// Complete blocks.
    pub total: u64,
    /// Complete blocks with at least the safe replication of live replicas.
    pub safe: u64,
}

impl SafeMode {
    /// Off, with the thresholds of `options`.
    pub fn off(options: &NameNodeOptions) -> Self {
        SafeMode {
            startup: StartupStatus::Off,
            manual: false,
            threshold: options.safemode_threshold,
            min_datanodes: options.safemode_min_datanodes,
            extension: options.safemode_extension,
            safe_replication: (options.safemode_replication_min as usize).max(1),
        }
    }

    pub fn is_on(&self) -> bool {
        self.manual || self.startup != StartupStatus::Off
    }

    /// HDFS's `blockThreshold`: `(long) (total * threshold)`.
    fn block_threshold(&self, total: u64) -> u64 {
        (total as f64 * self.threshold) as u64
    }
}

impl State {
    pub fn safe_mode_counts(&self) -> BlockCounts {
        let need = self.safe_mode.safe_replication;
        let mut counts = BlockCounts { total: 0, safe: 0 };
        for b in self.blocks.blocks.values() {
            // An empty block may never be reported (nothing was written to a replica).
            if b.state == BlockState::UnderConstruction || b.num_bytes == 0 {
                continue;
            }
            counts.total += 1;
            let live = b
                .replicas
                .iter()
                .filter(|n| self.datanodes.nodes[**n].alive)
                .count();
            if live >= need {
                counts.safe += 1;
            }
        }
        counts
    }

    fn safe_mode_thresholds_met(&self) -> bool {
        let counts = self.safe_mode_counts();
        counts.safe >= self.safe_mode.block_threshold(counts.total)
            && self.datanodes.live_count() >= self.safe_mode.min_datanodes
    }

    /// Start-up safe mode after a load (HDFS's `activate`): off at once when the
    /// thresholds already hold, as for an empty namespace.
    pub fn enter_startup_safe_mode(&mut self) {
        if self.safe_mode_thresholds_met() {
            self.safe_mode.startup = StartupStatus::Off;
            return;
        }
        self.safe_mode.startup = StartupStatus::PendingThreshold;
        tracing::info!("STATE* Safe mode ON. {}", self.safe_mode_tip());
    }

    /// Moves start-up safe mode on after block reports and on each monitor tick.
    pub fn update_safe_mode(&mut self) {
        match self.safe_mode.startup {
            StartupStatus::Off => {}
            StartupStatus::PendingThreshold => {
                if !self.safe_mode_thresholds_met() {
                    return;
                }
                if self.safe_mode.extension.is_zero() {
                    self.leave_startup_safe_mode();
                } else {
                    let until = Instant::now() + self.safe_mode.extension;
                    self.safe_mode.startup = StartupStatus::Extension { until };
                    tracing::info!("STATE* Safe mode extension entered.");
                }
            }
            StartupStatus::Extension { until } => {
                if Instant::now() >= until && self.safe_mode_thresholds_met() {
                    self.leave_startup_safe_mode();
                }
            }
        }
    }

    fn leave_startup_safe_mode(&mut self) {
        let counts = self.safe_mode_counts();
        tracing::info!(
            safe = counts.safe,
            total = counts.total,
            "STATE* Safe mode is OFF"
        );
        self.safe_mode.startup = StartupStatus::Off;
        // Replication work resumes: look at every block once.
        self.blocks
            .needs_check
            .extend(self.blocks.blocks.keys().copied());
    }

    /// Ends manual and start-up safe mode (`SAFEMODE_LEAVE`, `SAFEMODE_FORCE_EXIT`).
    pub fn leave_safe_mode(&mut self) {
        let was_on = self.safe_mode.is_on();
        self.safe_mode.manual = false;
        if self.safe_mode.startup != StartupStatus::Off {
            self.leave_startup_safe_mode();
        } else if was_on {
            tracing::info!("STATE* Safe mode is OFF");
            self.blocks
                .needs_check
                .extend(self.blocks.blocks.keys().copied());
        }
    }

    /// HDFS's `getSafeModeTip`: why safe mode is on and how it ends.
    pub fn safe_mode_tip(&self) -> String {
        if self.safe_mode.manual {
            return format!("It was turned on manually. {LEAVE_TIP}");
        }
        let sm = &self.safe_mode;
        let counts = self.safe_mode_counts();
        let needed = sm.block_threshold(counts.total);
        let mut msg = if counts.safe < needed {
            format!(
                "The reported blocks {} needs additional {} blocks to reach the threshold {:.4} of total blocks {}.\n",
                counts.safe,
                needed - counts.safe,
                sm.threshold,
                counts.total
            )
        } else {
            format!(
                "The reported blocks {} has reached the threshold {:.4} of total blocks {}. ",
                counts.safe, sm.threshold, counts.total
            )
        };
        let live = self.datanodes.live_count();
        if live < sm.min_datanodes {
            msg += &format!(
                "The number of live datanodes {live} needs an additional {} live datanodes to reach the minimum number {}.\n",
                sm.min_datanodes - live,
                sm.min_datanodes
            );
        } else {
            msg += &format!(
                "The number of live datanodes {live} has reached the minimum number {}. ",
                sm.min_datanodes
            );
        }
        let turn_off = "Safe mode will be turned off automatically ";
        match sm.startup {
            StartupStatus::PendingThreshold => {
                msg += turn_off;
                msg += "once the thresholds have been reached.";
            }
            StartupStatus::Extension { until } => {
                let left = until.saturating_duration_since(Instant::now()).as_secs();
                msg += &format!("In safe mode extension. {turn_off}in {left} seconds.");
            }
            StartupStatus::Off => {
                msg += turn_off;
                msg += "soon.";
            }
        }
        msg
    }

    /// Refuses a namespace change while in safe mode (HDFS's `checkNameNodeSafeMode`);
    /// `what` is HDFS's opening, such as "Cannot create directory /a".
    pub fn check_safe_mode(&self, what: impl FnOnce() -> String) -> Result<()> {
        if !self.safe_mode.is_on() {
            return Ok(());
        }
        Err(NameNodeError::SafeMode {
            message: format!(
                "{}. Name node is in safe mode.\n{}",
                what(),
                self.safe_mode_tip()
            ),
        })
    }

    /// The opening of the refusal for an edit op, for changes made without an RPC.
    pub fn describe_op(&self, op: &Op) -> String {
        let path = |inode| self.ns.full_path(inode);
        match op {
            Op::Mkdir(o) => format!("Cannot create directory {}", o.path),
            Op::AddFile(o) => format!("Cannot create file{}", o.path),
            Op::AddBlock(o) => format!("Cannot add block to {}", path(o.inode_id)),
            Op::AbandonBlock(o) => format!("Cannot abandon block for file{}", path(o.inode_id)),
            Op::CloseFile(o) => format!("Cannot complete file {}", path(o.inode_id)),
            Op::Rename(o) => format!("Cannot rename {}", o.src),
            Op::Delete(o) => format!("Cannot delete {}", o.path),
            Op::SetReplication(o) => format!("Cannot set replication for {}", o.path),
            Op::SetPermission(o) => format!("Cannot set permission for {}", o.path),
            Op::SetOwner(o) => format!("Cannot set owner for {}", o.path),
            Op::SetTimes(o) => format!("Cannot set times {}", o.path),
            Op::ReassignLease(o) => format!("Cannot recover the lease of {}", path(o.inode_id)),
            Op::UpdateMasterKey(_) => "Cannot roll the delegation token master key".to_string(),
            Op::GetDelegationToken(_) => "Cannot issue delegation token".to_string(),
            Op::RenewDelegationToken(_) => "Cannot renew delegation token".to_string(),
            Op::CancelDelegationToken(_) => "Cannot cancel delegation token".to_string(),
            #[allow(unreachable_patterns)]
            _ => "Cannot change the namespace".to_string(),
        }
    }
}

/// A request whose first field is its path (most ClientNamenodeProtocol writes).
#[derive(Clone, PartialEq, Message)]
struct PathFirst {
    #[prost(string, tag = "1")]
    src: String,
}

/// How HDFS opens the refusal of a ClientNamenodeProtocol write.
#[derive(Clone, Copy, Debug)]
enum Opening {
    /// The text, then the request's path.
    Path(&'static str),
    /// The text alone.
    Fixed(&'static str),
    /// "Cannot abandon block <id> for file<path>".
    AbandonBlock,
}

impl Opening {
    /// The opening for `method`; `None` for reads.
    fn of(method: &str) -> Option<Opening> {
        use Opening::{Fixed, Path};
        Some(match method {
            "mkdirs" => Path("Cannot create directory "),
            "create" => Path("Cannot create file"),
            "append" => Path("Failed to append to file"),
            "addBlock" => Path("Cannot add block to "),
            "abandonBlock" => Opening::AbandonBlock,
            "complete" => Path("Cannot complete file "),
            "fsync" => Path("Cannot fsync file "),
            "rename" | "rename2" => Path("Cannot rename "),
            "concat" => Path("Cannot concat "),
            "truncate" => Path("Cannot truncate for "),
            "delete" => Path("Cannot delete "),
            "setReplication" => Path("Cannot set replication for "),
            "setPermission" => Path("Cannot set permission for "),
            "setOwner" => Path("Cannot set owner for "),
            "setTimes" => Path("Cannot set times "),
            "createSymlink" => Fixed("Cannot create symlink"),
            "setQuota" => Path("Cannot set quota on "),
            "setStoragePolicy" => Path("Cannot set storage policy for "),
            "modifyAclEntries" | "removeAclEntries" | "removeDefaultAcl" | "removeAcl"
            | "setAcl" => Path("Cannot modify ACL entries on "),
            "setXAttr" => Path("Cannot set XAttr on "),
            "removeXAttr" => Path("Cannot remove XAttr entry on "),
            "createSnapshot" => Path("Cannot create snapshot for "),
            "deleteSnapshot" => Path("Cannot delete snapshot for "),
            "renameSnapshot" => Path("Cannot rename snapshot for "),
            "allowSnapshot" | "disallowSnapshot" => Path("Cannot change snapshot settings for "),
            "recoverLease" => Path("Cannot recover the lease of "),
            "renewLease" => Path("Cannot renew lease for "),
            "updateBlockForPipeline" => {
                Fixed("Cannot get a new generation stamp and an access token for block")
            }
            "updatePipeline" => Fixed("Pipeline not updated"),
            "getDelegationToken" => Fixed("Cannot issue delegation token"),
            "renewDelegationToken" => Fixed("Cannot renew delegation token"),
            "cancelDelegationToken" => Fixed("Cannot cancel delegation token"),
            _ => return None,
        })
    }

    /// The opening for this request (most requests carry their path first).
    fn text(self, body: &Bytes) -> String {
        match self {
            Opening::Path(text) => {
                let src = PathFirst::decode(body.clone()).map(|p| p.src);
                format!("{text}{}", src.unwrap_or_default())
            }
            Opening::Fixed(text) => text.to_string(),
            Opening::AbandonBlock => {
                let r = h::AbandonBlockRequestProto::decode(body.clone()).unwrap_or_default();
                format!("Cannot abandon block {} for file{}", r.b.block_id, r.src)
            }
        }
    }
}

impl Namesystem {
    /// Refuses a client's namespace write while in safe mode, before anything else is
    /// checked, as HDFS does.
    /// Reads pass without taking the lock.
    pub fn refuse_in_safe_mode(&self, method: &str, body: &Bytes) -> Result<()> {
        let Some(opening) = Opening::of(method) else {
            return Ok(());
        };
        self.read().check_safe_mode(|| opening.text(body))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tusk_proto::hdfs::SafeModeActionProto as A;

    use super::*;

    fn formatted(dir: &std::path::Path) -> (NameNodeOptions, Arc<Namesystem>) {
        let options = NameNodeOptions {
            name_dirs: vec![dir.to_path_buf()],
            permissions_enabled: true,
            superuser: "hdfs".into(),
            ..Default::default()
        };
        Namesystem::format(&options).unwrap();
        let fsn = Namesystem::load(options.clone()).unwrap();
        (options, fsn)
    }

    #[tokio::test]
    async fn an_empty_namespace_starts_out_of_safe_mode_and_manual_mode_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (_, fsn) = formatted(dir.path());
        assert!(!fsn.read().safe_mode.is_on(), "nothing to wait for");
        assert!(matches!(
            fsn.set_safe_mode("alice", A::SafemodeEnter),
            Err(NameNodeError::SuperuserRequired { .. })
        ));
        assert!(!fsn.set_safe_mode("alice", A::SafemodeGet).unwrap());
        assert!(fsn.set_safe_mode("hdfs", A::SafemodeEnter).unwrap());

        let body = Bytes::from(
            h::MkdirsRequestProto {
                src: "/a".into(),
                ..Default::default()
            }
            .encode_to_vec(),
        );
        let refused = fsn.refuse_in_safe_mode("mkdirs", &body).unwrap_err();
        assert_eq!(
            refused.java_class(),
            "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
        );
        assert_eq!(
            refused.to_string(),
            "Cannot create directory /a. Name node is in safe mode.\nIt was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."
        );
        assert!(fsn.refuse_in_safe_mode("getFileInfo", &body).is_ok());
        // The namesystem itself refuses too (the check under the lock).
        assert!(matches!(
            fsn.mkdirs("hdfs", "/a", 0o755, true),
            Err(NameNodeError::SafeMode { .. })
        ));
        assert!(!fsn.set_safe_mode("hdfs", A::SafemodeLeave).unwrap());
        fsn.durable(fsn.mkdirs("hdfs", "/a", 0o755, true).unwrap())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn no_deletion_work_is_handed_out_in_safe_mode() {
        use tusk_proto::internal::{datanode_command::Command, DatanodeIdentity, HeartbeatRequest};
        let dir = tempfile::tempdir().unwrap();
        let (_, fsn) = formatted(dir.path());
        let identity = DatanodeIdentity {
            datanode_uuid: "dn".into(),
            ip_addr: "127.0.0.1".into(),
            ..Default::default()
        };
        fsn.register_datanode(
            tusk_proto::internal::RegisterDatanodeRequest {
                datanode: Some(identity),
                ..Default::default()
            },
            "127.0.0.1",
        )
        .unwrap();
        fsn.write().datanodes.nodes[0].invalidate.push(42);
        let beat = HeartbeatRequest {
            datanode_uuid: "dn".into(),
            ..Default::default()
        };
        let deletes = |r: &tusk_proto::internal::HeartbeatResponse| {
            r.commands
                .iter()
                .any(|c| matches!(c.command, Some(Command::Invalidate(_))))
        };
        fsn.set_safe_mode("hdfs", A::SafemodeEnter).unwrap();
        assert!(
            !deletes(&fsn.heartbeat(&beat).unwrap()),
            "withheld in safe mode"
        );
        assert_eq!(fsn.read().datanodes.nodes[0].invalidate, vec![42]);
        fsn.set_safe_mode("hdfs", A::SafemodeLeave).unwrap();
        assert!(
            deletes(&fsn.heartbeat(&beat).unwrap()),
            "sent once it is off"
        );
    }

    #[test]
    fn startup_safe_mode_waits_for_the_minimum_of_live_datanodes() {
        let options = NameNodeOptions {
            safemode_min_datanodes: 2,
            safemode_extension: Duration::ZERO,
            ..Default::default()
        };
        let mut st = State::from_image(&Default::default(), &options);
        st.enter_startup_safe_mode();
        assert!(
            st.safe_mode.is_on(),
            "an empty namespace still waits for nodes"
        );
        assert!(st.safe_mode_tip().contains(
            "The number of live datanodes 0 needs an additional 2 live datanodes to reach the minimum number 2.\n"
        ));
        for uuid in ["a", "b"] {
            st.datanodes.register(
                tusk_proto::internal::DatanodeIdentity {
                    datanode_uuid: uuid.into(),
                    ..Default::default()
                },
                "/r".into(),
            );
            st.update_safe_mode();
        }
        assert!(
            !st.safe_mode.is_on(),
            "off with no extension once two are live"
        );
    }

    #[test]
    fn startup_safe_mode_waits_for_the_threshold_then_the_extension() {
        // HDFS truncates total × threshold: with 0.999, one block would need none.
        let options = NameNodeOptions {
            safemode_threshold: 1.0,
            safemode_extension: Duration::from_secs(3600),
            ..Default::default()
        };
        let mut st = State::from_image(&Default::default(), &options);
        st.blocks.insert(crate::blocks::BlockInfo {
            id: 1,
            generation_stamp: 1,
            num_bytes: 10,
            inode: 99,
            state: BlockState::Complete,
            replicas: vec![],
            expected: vec![],
        });
        st.enter_startup_safe_mode();
        assert_eq!(st.safe_mode.startup, StartupStatus::PendingThreshold);
        assert!(st.safe_mode_tip().starts_with(
            "The reported blocks 0 needs additional 1 blocks to reach the threshold 1.0000 of total blocks 1.\n"
        ));
        st.datanodes.register(Default::default(), "/r".into());
        st.blocks.add_replica(1, 0);
        st.update_safe_mode();
        assert!(matches!(
            st.safe_mode.startup,
            StartupStatus::Extension { .. }
        ));
        assert!(st.safe_mode.is_on());
        assert!(st.safe_mode_tip().contains("In safe mode extension."));
        st.safe_mode.startup = StartupStatus::Extension {
            until: Instant::now(),
        };
        st.update_safe_mode();
        assert!(!st.safe_mode.is_on());
    }
}
