//! The namesystem: namespace, block map, DataNode registry and leases behind one lock,
//! plus the edit log. Mutations decide everything under the write lock, apply edit ops,
//! append them to the log, release the lock and then wait for durability.
//!
//! - `ops` (+ `ops/<area>/<op>.rs`): every ClientNamenodeProtocol and DataNode
//!   protocol call, one file each with its decide step and, for a call that logs, its
//!   apply step; grouped by area: `namespace`, `blocks`, `snapshot`, `quota`, `acl`,
//!   `xattr`, `policy`, `admin`, `datanode`. An area's file holds the rules its calls
//!   share.
//! - `monitors` (+ `monitors/*`): background work and the state it watches:
//!   dead-node detection and re-replication, lease expiry, block recovery, safe mode,
//!   decommissioning, the trash emptier, checkpoints.
//! - `quota`: the usage each quota directory caches, moved by every applied op.
//! - `block_health`: block statistics from the block map, for reports and fsck.
//! - `status`: building HdfsFileStatus and LocatedBlocks replies.
//! - `block_tokens`: the block keys, the tokens in located blocks, the key roller.
//! - `reserved`: `/.reserved/.inodes/<id>` and `/.reserved/raw`, resolved before every
//!   call that takes a path.
//! - `delete_hints`: which replica to drop first when a block has too many.
//! - `leases`: which client holds which open file. `image`: the state as a checkpoint
//!   image and back.

mod audit;
mod block_health;
mod block_tokens;
mod delete_hints;
mod image;
mod leases;
pub mod monitors;
mod ops;
mod quota;
mod reserved;
mod status;

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Instant;

use prost::Message;
use tokio::sync::Notify;
use tusk_proto::internal::{edit_record::Op, EditRecord, FsImage};

use crate::blocks::BlockMap;
use crate::datanodes::DatanodeRegistry;
use crate::edit_log::scan::{self, LastSegment};
use crate::edit_log::EditLog;
use crate::error::{NameNodeError, Result};
use crate::namespace::{FileInode, InodeId, Namespace, Permissions};
use crate::options::NameNodeOptions;
use crate::placement::Topology;
use crate::storage::{NameDir, NameDirs, RecoveryPlan, StorageInfo};

/// The administrative calls' messages under the path `tusk dfsadmin` imports them by;
/// they live in [`crate::wire::admin`].
pub mod admin {
    pub use crate::wire::admin as wire;
}

pub use audit::AuditedCall;
pub use block_health::BlockHealth;
pub use block_tokens::{spawn_key_roller, BlockTokens};
pub use leases::Leases;
pub use monitors::safe_mode::SafeMode;
pub use monitors::spawn_monitors;
pub use monitors::trash::spawn_trash_emptier;
pub use ops::TruncateCut;
pub use ops::{AclChange, AdminSettings, DelegationTokenAuthority, TokenCaller};
pub use reserved::PathUse;

/// Everything behind the namesystem lock.
#[derive(Debug)]
pub struct State {
    pub ns: Namespace,
    pub blocks: BlockMap,
    pub datanodes: DatanodeRegistry,
    pub leases: Leases,
    /// Start-up and manual safe mode: while on, namespace writes are refused and no
    /// replication or deletion work is scheduled.
    pub safe_mode: SafeMode,
    /// `dfs.hosts` / `dfs.hosts.exclude`, reread by `refreshNodes`.
    pub hosts: monitors::decommission::HostLists,
    /// Edits applied since the last checkpoint.
    pub txns_since_checkpoint: u64,
    /// When the last checkpoint was written (or the state loaded).
    pub last_checkpoint: Instant,
    /// Block recoveries in progress, by block id (not persisted: they start again).
    pub recoveries: HashMap<u64, monitors::block_recovery::BlockRecovery>,
    /// Open files whose last block a truncate cuts (in the image).
    pub truncating: HashMap<InodeId, TruncateCut>,
    /// Snapshottable directories, their snapshots and the blocks those keep.
    pub snapshots: crate::snapshot::Snapshots,
    /// Delegation token master keys and live tokens (in the image and the edit log).
    pub delegation_tokens: tusk_security::DelegationTokenSecretManager,
    /// HA: this NameNode is a standby (the DataNodes' reports may run ahead of the edits
    /// it has applied). Changed with [`crate::ha::HaRole`], under this lock.
    pub standby: bool,
    /// HA: replicas reported to a standby before the edit that makes their block (or
    /// its generation) known arrived; taken in once it has (HDFS's
    /// `PendingDataNodeMessages`).
    pub standby_reports: Vec<(crate::datanodes::DnIdx, tusk_proto::internal::ReplicaReport)>,
}

impl State {
    /// Applies one edit op, checked against the snapshot rules first. Returns the blocks
    /// it removed that no snapshot keeps.
    pub fn apply(&mut self, op: &Op) -> Result<Vec<u64>> {
        self.txns_since_checkpoint += 1;
        self.snapshots.before_op(&self.ns, &self.blocks, op)?;
        let charge = self.quota_before(op);
        let removed = self.apply_op(op)?;
        self.quota_after(charge);
        Ok(self.snapshots.after_op(&self.ns, &self.blocks, removed))
    }

    /// Dispatches an op to its apply step: `ops/*` for the namespace operations, the
    /// feature files for the rest.
    fn apply_op(&mut self, op: &Op) -> Result<Vec<u64>> {
        match op {
            Op::Mkdir(op) => self.ns.apply_mkdir(op).map(no_blocks),
            Op::AddFile(op) => self.apply_add_file(op).map(no_blocks),
            Op::AddBlock(op) => self.apply_add_block(op).map(no_blocks),
            Op::AbandonBlock(op) => self.apply_abandon_block(op).map(no_blocks),
            Op::CloseFile(op) => self.apply_close_file(op).map(no_blocks),
            Op::UpdateBlock(op) => self.apply_update_block(op).map(no_blocks),
            Op::Rename(op) => self.apply_rename(op),
            Op::Delete(op) => self.apply_delete(op),
            Op::SetReplication(op) => self.apply_set_replication(op).map(no_blocks),
            Op::SetPermission(op) => self.ns.apply_set_permission(op).map(no_blocks),
            Op::SetOwner(op) => self.ns.apply_set_owner(op).map(no_blocks),
            Op::SetTimes(op) => self.ns.apply_set_times(op).map(no_blocks),
            Op::ReassignLease(op) => self.apply_reassign_lease(op).map(no_blocks),
            // nsmeta
            Op::SetAcl(op) => self.ns.apply_set_acl(op).map(no_blocks),
            Op::SetXattr(op) => self.ns.apply_set_xattr(op).map(no_blocks),
            Op::RemoveXattr(op) => self.ns.apply_remove_xattr(op).map(no_blocks),
            Op::SetQuota(op) => self.apply_set_quota(op).map(no_blocks),
            Op::SetStoragePolicy(op) => self.ns.apply_set_storage_policy(op).map(no_blocks),
            // append
            Op::AppendFile(op) => self.apply_append_file(op).map(no_blocks),
            Op::SetGenerationStamp(op) => self.apply_set_generation_stamp(op).map(no_blocks),
            Op::Concat(op) => self.apply_concat(op).map(no_blocks),
            Op::Truncate(op) => self.apply_truncate(op),
            // snapshots
            Op::AllowSnapshot(_)
            | Op::DisallowSnapshot(_)
            | Op::CreateSnapshot(_)
            | Op::DeleteSnapshot(_)
            | Op::RenameSnapshot(_) => self.apply_snapshot_op(op),
            // delegation tokens
            Op::UpdateMasterKey(_)
            | Op::GetDelegationToken(_)
            | Op::RenewDelegationToken(_)
            | Op::CancelDelegationToken(_) => self.apply_delegation_op(op).map(no_blocks),
        }
    }

    /// Sum of block lengths of a file.
    pub fn file_length(&self, file: &FileInode) -> u64 {
        file.blocks
            .iter()
            .filter_map(|b| self.blocks.get(*b))
            .map(|b| b.num_bytes)
            .fold(0, u64::saturating_add)
    }

    /// Schedules deletion of the replicas of removed blocks.
    pub fn invalidate_removed(&mut self, removed: &[u64]) {
        for (block, nodes) in self.blocks.remove(removed) {
            for n in nodes {
                let d = &mut self.datanodes.nodes[n];
                d.blocks.remove(&block);
                d.invalidate.push(block);
            }
        }
    }
}

/// What an op that removes no blocks returns to [`State::apply_op`].
fn no_blocks(_: ()) -> Vec<u64> {
    Vec::new()
}

/// The result of a namespace change, which may be acknowledged only once the edit
/// with `txid` is durable. Changes are applied under the lock and return at once; the
/// RPC server holds the reply until the edit log's watermark passes `txid`, and
/// in-process callers use [`Namesystem::durable`].
#[must_use]
#[derive(Debug)]
pub struct Logged<T> {
    pub value: T,
    /// Txid of the last edit the change made; 0 when it made none.
    pub txid: u64,
}

impl<T> Logged<T> {
    pub fn new(value: T, txid: u64) -> Self {
        Logged { value, txid }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Logged<U> {
        Logged {
            value: f(self.value),
            txid: self.txid,
        }
    }
}

/// The NameNode's state and its log; shared by the RPC services and the monitors.
pub struct Namesystem {
    pub state: RwLock<State>,
    pub edit_log: EditLog,
    pub options: NameNodeOptions,
    pub permissions: Permissions,
    pub storage: StorageInfo,
    pub topology: Topology,
    /// Every configured name directory; the edit log writes to those in service.
    pub name_dirs: Arc<NameDirs>,
    /// Woken whenever a DataNode reports a received block (for `complete`).
    pub block_events: Notify,
    /// Serialises checkpoints.
    pub checkpoint_lock: std::sync::Mutex<()>,
    /// Block keys and tokens; `None` when `dfs.block.access.token.enable` is false.
    pub block_tokens: Option<BlockTokens>,
    /// Counters for `/metrics` and the registry holding them.
    pub metrics: crate::metrics::NameNodeMetrics,
    /// What start-up did and how long it took (the start-up progress page).
    pub startup: crate::metrics::StartupProgress,
    /// What administrators set at run time and HDFS keeps only in memory too.
    pub admin_settings: AdminSettings,
    /// HDFS's audit log of client operations; `None` when none is configured.
    pub audit: Option<crate::audit::AuditLog>,
    /// Active or standby (HA); always active for a NameNode on its own.
    pub ha: crate::ha::HaRole,
}

impl Namesystem {
    /// Formats every name directory (destroying any previous namespace).
    pub fn format(options: &NameNodeOptions) -> Result<StorageInfo> {
        let dirs = NameDirs::locked(&options.name_dirs)?;
        Self::format_locked(&dirs, options, StorageInfo::generate())
    }

    /// Formats `dirs`, which this process has locked, as the namespace `info`.
    pub fn format_locked(
        dirs: &NameDirs,
        options: &NameNodeOptions,
        info: StorageInfo,
    ) -> Result<StorageInfo> {
        Self::format_locked_at(dirs, options, info, tusk_common::now_millis())
    }

    /// [`Namesystem::format_locked`] with the root made at `created` (ms), so HA
    /// NameNodes formatted one after another hold the same image.
    pub fn format_locked_at(
        dirs: &NameDirs,
        options: &NameNodeOptions,
        info: StorageInfo,
        created: u64,
    ) -> Result<StorageInfo> {
        let mut st = State::from_image(&FsImage::default(), options);
        st.ns = Namespace::new(&options.superuser, &options.supergroup, created);
        let empty = st.to_image(
            0,
            &StorageInfo {
                namespace_id: 0,
                block_pool_id: String::new(),
                cluster_id: String::new(),
            },
        );
        dirs.format(&info, &empty)?;
        Ok(info)
    }

    /// What `tusk namenode recover` would cut: damage in the log's bytes, else the first
    /// transaction that does not apply (found by a trial replay that changes nothing);
    /// `None` when the log needs no recovery.
    pub fn plan_recovery(options: &NameNodeOptions) -> Result<Option<RecoveryPlan>> {
        let dirs = NameDirs::locked(&options.name_dirs)?;
        if let Some(plan) = dirs.plan_recovery()? {
            return Ok(Some(plan));
        }
        let (source, image) = dirs.choose_without_repair()?;
        let dir = dirs.dir(source);
        let mut state = State::from_image(&image, options);
        let scanned = replay_segments(
            &mut state,
            &dir.segments()?,
            image.last_txid,
            u64::MAX,
            LastSegment::InProgress,
        )?;
        Ok(scanned.problem.map(|problem| RecoveryPlan {
            dir: dir.root().to_path_buf(),
            dir_index: source,
            problem,
            last_good_txid: scanned.last_txid,
            max_txid: scanned.max_txid,
            dropped_records: scanned.dropped,
        }))
    }

    /// Loads the most complete valid copy of the namespace (repairing the other name
    /// directories from it), replays its edit log and opens a new segment. A corrupt log
    /// stops it here with [`NameNodeError::EditLogCorrupt`].
    pub fn load(options: NameNodeOptions) -> Result<Arc<Self>> {
        let startup = crate::metrics::StartupProgress::new();
        let started = Instant::now();
        let dirs = Arc::new(NameDirs::locked(&options.name_dirs)?);
        let source = dirs.prepare_for_load()?;
        let image = source.image;
        let mut state = State::from_image(&image, &options);
        startup.record(
            "Loading fsimage",
            format!("{} inodes, txid {}", image.inodes.len(), image.last_txid),
            started.elapsed(),
        );
        let started = Instant::now();
        let last_txid = replay(
            &mut state,
            dirs.dir(source.dir),
            image.last_txid,
            u64::MAX,
            LastSegment::InProgress,
        )?;
        startup.record(
            "Loading edits",
            format!("{} transactions", last_txid - image.last_txid),
            started.elapsed(),
        );
        state.hosts = monitors::decommission::HostLists::load(&options)?;
        state.enter_startup_safe_mode();
        let topology = match &options.topology_file {
            Some(p) => Topology::load(p)?,
            None => Topology::default(),
        }
        .with_script(options.topology_script.clone());
        // Under HA the edits go to the replicated log, which the NameNode starts after
        // loading (`crate::ha`); the name directories keep only the formatted image.
        if options.ha.is_some() && last_txid > 0 {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "the name directories hold edits up to txid {last_txid}: an HA NameNode starts from a namespace formatted for HA, whose edits are in the replicated log"
                ),
            });
        }
        let (sink, ha): (Box<dyn crate::edit_log::EditSink>, _) = if options.ha.is_some() {
            (
                Box::new(crate::ha::NotActiveSink),
                crate::ha::HaRole::standby(),
            )
        } else {
            let segment = dirs.open_segment(last_txid + 1)?;
            (Box::new(segment), crate::ha::HaRole::single())
        };
        let edit_log = EditLog::start(sink, last_txid);
        let permissions = Permissions {
            enabled: options.permissions_enabled,
            superuser: options.superuser.clone(),
            supergroup: options.supergroup.clone(),
            groups: tusk_security::groups::GroupMapping::new(
                options.meta.group_overrides.clone(),
                options.meta.group_mapping,
                options.meta.groups_cache,
            ),
        };
        let fsn = Arc::new(Namesystem {
            state: RwLock::new(state),
            edit_log,
            permissions,
            storage: source.storage,
            topology,
            name_dirs: dirs,
            block_events: Notify::new(),
            checkpoint_lock: std::sync::Mutex::new(()),
            block_tokens: BlockTokens::from_options(&options),
            audit: crate::audit::AuditLog::open(&options.audit)?,
            options,
            metrics: Default::default(),
            startup,
            admin_settings: Default::default(),
            ha,
        });
        fsn.metrics.register(fsn.edit_log.metrics(), {
            let fsn = Arc::downgrade(&fsn);
            move || fsn.upgrade().map(|fsn| fsn.metrics_snapshot())
        });
        // Compact what was replayed, so restarts stay quick. Only an optimisation: the
        // image and edits just loaded hold the namespace, so a directory too full for a
        // new image (after a full-disk stop) does not keep the NameNode from starting;
        // the periodic checkpoint tries again.
        if last_txid > image.last_txid {
            let started = Instant::now();
            let outcome = match fsn.checkpoint() {
                Ok(()) => format!("txid {last_txid}"),
                Err(e) => {
                    tracing::warn!(error = %e, "no checkpoint at start-up; starting from the loaded image and edits");
                    format!("skipped: {e}")
                }
            };
            fsn.startup
                .record("Saving checkpoint", outcome, started.elapsed());
        }
        Ok(fsn)
    }

    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().expect("namesystem lock")
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().expect("namesystem lock")
    }

    /// Refuses changes once the edit log cannot make anything durable: they could
    /// never be acknowledged, and must not be seen.
    pub fn check_writable(&self) -> Result<()> {
        if self.edit_log.has_failed() {
            return Err(NameNodeError::NoNameDirectory {
                last_error: "an edit log sync failed".into(),
            });
        }
        Ok(())
    }

    /// Applies `op` and appends it to the log; call with the write lock held.
    pub fn apply_and_log(&self, st: &mut State, op: Op) -> Result<u64> {
        self.ha.check_active("WRITE")?;
        self.check_writable()?;
        st.check_safe_mode(|| st.describe_op(&op))?;
        st.verify_quota(&op)?;
        let removed = st.apply(&op)?;
        st.invalidate_removed(&removed);
        Ok(self.edit_log.append(EditRecord {
            txid: 0,
            op: Some(op),
        }))
    }

    /// Waits until a change is durable and returns its result.
    pub async fn durable<T>(&self, logged: Logged<T>) -> Result<T> {
        if logged.txid > 0 {
            self.edit_log.wait_durable(logged.txid).await?;
        }
        Ok(logged.value)
    }

    /// Waits until `txid` is durable (no-op for `None`).
    pub async fn sync(&self, txid: Option<u64>) -> Result<()> {
        match txid {
            Some(t) => self.edit_log.wait_durable(t).await,
            None => Ok(()),
        }
    }

    /// Writes an image of the current state and starts a new edit segment, holding the
    /// namespace lock throughout: for start-up, shutdown and `saveNamespace`.
    pub fn checkpoint(&self) -> Result<()> {
        let _one = self.checkpoint_lock.lock().expect("checkpoint lock");
        let mut st = self.write();
        let last = self.roll_segment(&st)?;
        st.txns_since_checkpoint = 0;
        st.last_checkpoint = Instant::now();
        self.name_dirs
            .save_checkpoint(&st.to_image(last, &self.storage), last + 1)
    }

    /// Writes an image without stopping the namespace, as Hadoop's secondary NameNode
    /// does: under the lock the log only moves to a new segment; the image is then built
    /// off to the side by replaying the finished segments onto the last image, exactly
    /// as a restart would, while calls go on.
    pub fn checkpoint_from_log(&self) -> Result<()> {
        let _one = self.checkpoint_lock.lock().expect("checkpoint lock");
        let last = {
            let mut st = self.write();
            let last = self.roll_segment(&st)?;
            st.txns_since_checkpoint = 0;
            st.last_checkpoint = Instant::now();
            last
        };
        let dir = self.name_dirs.primary()?;
        let image = dir.load_latest_image()?;
        if image.last_txid >= last {
            return Ok(());
        }
        let mut state = State::from_image(&image, &self.options);
        let replayed = replay(
            &mut state,
            dir,
            image.last_txid,
            last,
            LastSegment::Finished,
        )?;
        if replayed != last {
            return Err(NameNodeError::EditLog(format!(
                "checkpoint replay reached txid {replayed}, expected {last}"
            )));
        }
        self.name_dirs
            .save_checkpoint(&state.to_image(last, &self.storage), last + 1)?;
        tracing::info!(txid = last, "checkpoint written from the edit log");
        Ok(())
    }

    /// Starts a new edit segment after the last record; returns that record's txid.
    /// Takes the held write lock so no record is appended meanwhile.
    fn roll_segment(&self, _st: &State) -> Result<u64> {
        if self.ha.is_enabled() {
            return Err(NameNodeError::Unsupported {
                operation: "a local edit segment or checkpoint under HA (the replicated log holds the edits)".into(),
            });
        }
        let last = self.edit_log.last_txid();
        self.edit_log
            .roll(Box::new(self.name_dirs.open_segment(last + 1)?))?;
        Ok(last)
    }

    /// Finishes the current edit segment and starts the next (HDFS's `rollEditLog`);
    /// returns the last txid of the finished one.
    pub fn roll_edit_log(&self) -> Result<u64> {
        let _one = self.checkpoint_lock.lock().expect("checkpoint lock");
        let st = self.write();
        self.roll_segment(&st)
    }

    /// Checkpoints and stops the log (clean shutdown). After a failed sync the memory
    /// may hold changes that never became durable, so no image is written from it.
    pub fn close(&self) -> Result<()> {
        if self.edit_log.has_failed() {
            return Err(NameNodeError::NoNameDirectory {
                last_error: "an edit log sync failed; the namespace was not saved".into(),
            });
        }
        if self.ha.is_enabled() {
            // The replicated log holds every edit; there is no local segment to close.
            return Ok(());
        }
        let r = self.checkpoint();
        self.edit_log.close();
        r
    }
}

/// Applies the records of the segments in `dir` with txids in `(after, upto]` to `state`;
/// returns the last txid applied (`after` if none). Any damage is an error.
fn replay(
    state: &mut State,
    dir: &NameDir,
    after: u64,
    upto: u64,
    last: LastSegment,
) -> Result<u64> {
    let segments: Vec<_> = dir
        .segments()?
        .into_iter()
        .filter(|(first, _)| *first <= upto)
        .collect();
    let scanned = replay_segments(state, &segments, after, upto, last)?;
    if let Some(e) = scanned.error() {
        return Err(e);
    }
    Ok(scanned.last_txid.min(upto))
}

/// [`replay`]'s scan of `segments` (first txid, file) from after `after` up to `upto`
/// into `state`: a record that does not decode or apply is damage there, as HDFS
/// stops on an edit it cannot load; the state after it would not be what was
/// acknowledged. Public for the edit-log fuzz target, which replays the same way.
pub fn replay_segments(
    state: &mut State,
    segments: &[(u64, std::path::PathBuf)],
    after: u64,
    upto: u64,
    last: LastSegment,
) -> Result<scan::LogScan> {
    scan::scan_log(segments, after, last, &mut |raw| {
        if raw.txid > upto {
            return Ok(());
        }
        let record = EditRecord::decode(raw.payload)
            .map_err(|e| format!("the record does not decode: {e}"))?;
        if let Some(op) = &record.op {
            let removed = state
                .apply(op)
                .map_err(|e| format!("the edit does not apply: {e}"))?;
            state.blocks.remove(&removed);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A freshly formatted namesystem in `dir`, permissions off, and its options.
    fn formatted(dir: &std::path::Path) -> (NameNodeOptions, Arc<Namesystem>) {
        let options = NameNodeOptions {
            name_dirs: vec![dir.to_path_buf()],
            permissions_enabled: false,
            ..Default::default()
        };
        Namesystem::format(&options).unwrap();
        let fsn = Namesystem::load(options.clone()).unwrap();
        (options, fsn)
    }

    fn sorted(mut image: FsImage) -> FsImage {
        image.inodes.sort_by_key(|i| i.id);
        image
    }

    #[tokio::test]
    async fn a_file_replaced_by_rename_loses_its_lease_live_and_at_replay() {
        let dir = tempfile::tempdir().unwrap();
        let (options, fsn) = formatted(dir.path());
        let create = |src: &str, client: &str| tusk_proto::hdfs::CreateRequestProto {
            src: src.into(),
            client_name: client.into(),
            replication: 1,
            block_size: 1 << 20,
            ..Default::default()
        };
        // "writer" keeps /open open; /done is written and closed by "other".
        fsn.durable(fsn.create("u", &create("/open", "writer")).unwrap())
            .await
            .unwrap();
        fsn.durable(fsn.create("u", &create("/done", "other")).unwrap())
            .await
            .unwrap();
        let closed = fsn
            .try_complete("/done", "other", None, None)
            .unwrap()
            .unwrap();
        fsn.durable(closed).await.unwrap();
        assert!(fsn.read().leases.holders.contains_key("writer"));

        fsn.durable(fsn.rename2("u", "/done", "/open", true).unwrap())
            .await
            .unwrap();
        assert!(
            !fsn.read().leases.holders.contains_key("writer"),
            "the replaced file's lease is dropped"
        );
        fsn.edit_log.close();
        drop(fsn);
        let again = Namesystem::load(options).unwrap();
        assert!(!again.read().leases.holders.contains_key("writer"));
        assert!(again.read().ns.resolve("/open").unwrap().is_some());
    }

    #[tokio::test]
    async fn a_checkpoint_from_the_log_matches_the_live_namespace() {
        let dir = tempfile::tempdir().unwrap();
        let (options, fsn) = formatted(dir.path());
        for i in 0..40 {
            let made = fsn.mkdirs("u", &format!("/d{i}/e"), 0o755, true).unwrap();
            fsn.durable(made).await.unwrap();
        }
        for i in 0..20 {
            let moved = fsn
                .rename2("u", &format!("/d{i}/e"), &format!("/d{}/e", i + 20), true)
                .unwrap();
            fsn.durable(moved).await.unwrap();
        }
        fsn.durable(fsn.delete("u", "/d39", true).unwrap())
            .await
            .unwrap();

        fsn.checkpoint_from_log().unwrap();
        let last = fsn.edit_log.last_txid();
        let live = fsn.read().to_image(last, &fsn.storage);
        let saved = fsn
            .name_dirs
            .primary()
            .unwrap()
            .load_latest_image()
            .unwrap();
        assert_eq!(saved.last_txid, last);
        assert_eq!(
            sorted(saved),
            sorted(live),
            "replayed image = live namespace"
        );
        assert!(
            fsn.name_dirs
                .primary()
                .unwrap()
                .segments()
                .unwrap()
                .iter()
                .all(|(first, _)| *first > last),
            "segments the image covers are purged"
        );

        // Edits after the checkpoint land in the new segment and survive a restart.
        fsn.durable(fsn.mkdirs("u", "/after", 0o755, true).unwrap())
            .await
            .unwrap();
        let before_restart = fsn.read().to_image(fsn.edit_log.last_txid(), &fsn.storage);
        fsn.edit_log.close();
        drop(fsn);
        let again = Namesystem::load(options).unwrap();
        let reloaded = again
            .read()
            .to_image(again.edit_log.last_txid(), &again.storage);
        assert_eq!(sorted(reloaded), sorted(before_restart));
    }
}
