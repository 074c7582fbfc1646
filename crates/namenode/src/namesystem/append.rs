//! Data operations on existing files, as HDFS does them: `append` (reopening a closed
//! file, its partial last block back under construction), `fsync` (the length a client
//! hflushed), `isFileClosed` and `concat`. Each decides under the lock, then applies
//! and logs its edit; the `State::apply_*` functions are the apply steps, shared with
//! replay.

use bytes::Bytes;
use tusk_proto::hdfs::{AppendResponseProto, LocatedBlockProto};
use tusk_proto::internal::{edit_record::Op, AppendFileOp, ConcatOp, UpdateBlockOp};
use tusk_security::AccessMode;

use super::{Logged, Namesystem, State};
use crate::blocks::BlockState;
use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, Inode, InodeId};
use crate::path;

/// `CreateFlagProto.NEW_BLOCK`: append in a new block, leaving the last one as it is.
const CREATE_FLAG_NEW_BLOCK: u32 = 32;

impl Namesystem {
    /// `isFileClosed`: false while the file is open for writing (or being recovered).
    pub fn is_file_closed(&self, user: &str, src: &str) -> Result<bool> {
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let node = st.ns.lookup(src)?;
        let file = node.file().ok_or_else(|| NameNodeError::FileNotFound {
            path: format!("{src} (is not a file)"),
        })?;
        Ok(file.client_name.is_none())
    }

    /// `fsync` (the NameNode half of hflush/hsync): records the length of the last block
    /// the client has had acknowledged, so readers and `getFileInfo` see it and it
    /// survives a restart. A negative or zero length changes nothing, as in HDFS.
    pub fn fsync(
        &self,
        src: &str,
        client: &str,
        last_block_length: i64,
        file_id: Option<u64>,
    ) -> Result<Logged<()>> {
        let mut st = self.write();
        let id = self.open_file_for(&st, src, file_id, client)?;
        let Ok(length) = u64::try_from(last_block_length) else {
            return Ok(Logged::new((), 0));
        };
        let last = st
            .ns
            .get(id)
            .and_then(Inode::file)
            .and_then(|f| f.blocks.last().copied())
            .and_then(|b| st.blocks.get(b))
            .filter(|b| b.state == BlockState::UnderConstruction && b.num_bytes != length)
            .map(|b| (b.id, b.generation_stamp));
        let Some((block_id, generation_stamp)) = last.filter(|_| length > 0) else {
            return Ok(Logged::new((), 0));
        };
        let txid = self.apply_and_log(
            &mut st,
            Op::UpdateBlock(UpdateBlockOp {
                block_id,
                generation_stamp,
                num_bytes: length,
            }),
        )?;
        Ok(Logged::new((), txid))
    }

    /// `append`: reopens a closed file for `client`. Without NEW_BLOCK a partial last
    /// block goes back under construction and is returned (with a WRITE token) for the
    /// client to continue; its generation stamp is bumped by the client's
    /// `updateBlockForPipeline`, as in HDFS. With NEW_BLOCK, or when the last block is
    /// full, the last block comes back without locations, for `addBlock`'s `previous`.
    pub fn append(
        &self,
        user: &str,
        src: &str,
        client: &str,
        flags: u32,
    ) -> Result<Logged<AppendResponseProto>> {
        let src = path::normalize(src)?;
        let new_block = flags & CREATE_FLAG_NEW_BLOCK != 0;
        let mut st = self.write();
        let not_found = || NameNodeError::FileNotFound {
            path: format!("Failed to append to non-existent file {src} for client {client}"),
        };
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let id = st.ns.resolve(&src)?.ok_or_else(not_found)?;
        if st.ns.get(id).and_then(Inode::file).is_none() {
            return Err(NameNodeError::FileNotFound {
                path: format!("{src} (Path is not a file)"),
            });
        }
        self.permissions.check(&st.ns, user, id, Access::Write)?;
        self.check_lease_free(&mut st, id, &src, client, "APPEND_FILE")?;
        let file = st.ns.get(id).and_then(Inode::file).expect("checked");
        let block_size = file.block_size;
        let last = file.blocks.last().and_then(|b| st.blocks.get(*b)).cloned();
        if let Some(b) = &last {
            if b.state != BlockState::Complete {
                return Err(NameNodeError::NotReplicatedYet {
                    path: format!("append: last block blk_{} of {src} is not complete", b.id),
                });
            }
        }
        let reopen = !new_block && last.as_ref().is_some_and(|b| b.num_bytes < block_size);
        let op = Op::AppendFile(AppendFileOp {
            inode_id: id,
            client_name: client.to_string(),
            new_block: !reopen,
        });
        let txid = self.apply_and_log(&mut st, op)?;
        let pool = &self.storage.block_pool_id;
        let block = last.map(|b| {
            let offset =
                st.file_length(st.ns.get(id).and_then(Inode::file).expect("file")) - b.num_bytes;
            if reopen {
                let b = st.blocks.get(b.id).expect("last block").clone();
                let live: Vec<_> = b
                    .expected
                    .iter()
                    .copied()
                    .filter(|n| st.datanodes.nodes[*n].alive)
                    .collect();
                st.located_block_on(&b, offset, pool, &live)
            } else {
                st.located_block_on(&b, offset, pool, &[])
            }
        });
        let stat = st.file_status(st.ns.get(id).expect("file"), Bytes::new(), false, pool);
        drop(st);
        let block = block.map(|mut lb: LocatedBlockProto| {
            self.set_block_token(&mut lb, user, AccessMode::Write);
            lb
        });
        tracing::info!(path = %src, client, reopen, "file reopened for append");
        Ok(Logged::new(
            AppendResponseProto {
                block,
                stat: Some(stat),
            },
            txid,
        ))
    }

    /// Refuses to append to or truncate a file someone holds the lease on, as HDFS's
    /// `recoverLeaseInternal`: the same client gets `AlreadyBeingCreatedException`;
    /// another client's lease past its soft limit is recovered first, and when that
    /// closes the file at once the operation goes on; while a recovery runs it is
    /// `RecoveryInProgressException`.
    pub(super) fn check_lease_free(
        &self,
        st: &mut State,
        id: InodeId,
        src: &str,
        client: &str,
        op: &'static str,
    ) -> Result<()> {
        let Some(holder) = st
            .ns
            .get(id)
            .and_then(Inode::file)
            .and_then(|f| f.client_name.clone())
        else {
            return Ok(());
        };
        let in_progress = || NameNodeError::RecoveryInProgress {
            op,
            path: src.to_string(),
        };
        if st.block_recovery_of(id).is_some() {
            return Err(in_progress());
        }
        let held = |reason: String| NameNodeError::LeaseHeld {
            op,
            path: src.to_string(),
            client: client.to_string(),
            reason,
        };
        if holder == client {
            return Err(held(format!(
                "{client} is already the current lease holder."
            )));
        }
        let soft_expired = st
            .leases
            .holders
            .get(&holder)
            .is_some_and(|(renewed, _)| renewed.elapsed() > self.options.lease_soft_limit);
        if soft_expired && !holder.starts_with(super::block_recovery::NAMENODE_LEASE_HOLDER) {
            tracing::info!(path = src, %holder, "soft limit passed; recovering the lease for {op}");
            return match self.recover_file(st, id)? {
                (true, _) => Ok(()),
                (false, _) => Err(in_progress()),
            };
        }
        Err(held(format!(
            "this file lease is currently owned by {holder}"
        )))
    }

    /// `concat`: moves the blocks of `srcs` (in order) to the end of `target` and
    /// removes them. As HDFS: every file exists, is closed, is not the target, sits in
    /// the target's directory and has the target's block size; no source twice.
    pub fn concat(&self, user: &str, target: &str, srcs: &[String]) -> Result<Logged<()>> {
        let target = path::normalize(target)?;
        let illegal = |message: String| NameNodeError::InvalidArgument { message };
        if srcs.is_empty() {
            return Err(illegal(format!("concat: no sources given for {target}")));
        }
        let mut st = self.write();
        self.permissions.check_traverse(&st.ns, user, &target)?;
        let t = st.ns.lookup(&target)?;
        let tid = t.id;
        let tfile = t.file().ok_or_else(|| NameNodeError::FileNotFound {
            path: format!("{target} (is not a file)"),
        })?;
        if tfile.client_name.is_some() {
            return Err(illegal(format!(
                "concat: target file {target} is under construction"
            )));
        }
        let (parent, block_size) = (t.parent, tfile.block_size);
        self.permissions.check(&st.ns, user, tid, Access::Write)?;
        let mut sources: Vec<InodeId> = Vec::with_capacity(srcs.len());
        for src in srcs {
            let src = path::normalize(src)?;
            self.permissions.check_traverse(&st.ns, user, &src)?;
            let node = st.ns.lookup(&src)?;
            let file = node.file().ok_or_else(|| NameNodeError::FileNotFound {
                path: format!("{src} (is not a file)"),
            })?;
            if node.id == tid {
                return Err(illegal(format!(
                    "concat: the src file {src} is the same with the target file {target}"
                )));
            }
            if file.client_name.is_some() || file.blocks.is_empty() {
                return Err(illegal(format!(
                    "concat: source file {src} is invalid or empty or underConstruction"
                )));
            }
            if node.parent != parent {
                return Err(illegal(format!(
                    "Source file {src} is not in the same directory with the target {target}"
                )));
            }
            if file.block_size != block_size {
                return Err(illegal(format!(
                    "concat: source file {src} has block size {} but the target {target} has {block_size}",
                    file.block_size
                )));
            }
            if sources.contains(&node.id) {
                return Err(illegal(format!(
                    "concat: source file {src} is given more than once"
                )));
            }
            self.permissions
                .check(&st.ns, user, node.id, Access::Read)?;
            sources.push(node.id);
        }
        self.permissions
            .check_path(&st.ns, user, parent, Some(Access::Write))?;
        let op = Op::Concat(ConcatOp {
            target: tid,
            sources,
            mtime: tusk_common::now_millis(),
        });
        let txid = self.apply_and_log(&mut st, op)?;
        tracing::info!(target = %target, sources = srcs.len(), "concatenated");
        Ok(Logged::new((), txid))
    }
}

impl State {
    /// Applies [`AppendFileOp`]: the file is open for `client_name` again; without
    /// `new_block`, its last block is under construction on the nodes that hold it.
    pub(super) fn apply_append_file(&mut self, op: &AppendFileOp) -> Result<()> {
        let file = self.open_or_closed_file_mut(op.inode_id)?;
        if let Some(holder) = &file.client_name {
            return Err(NameNodeError::InvalidArgument {
                message: format!("inode {} is already open for {holder}", op.inode_id),
            });
        }
        file.client_name = Some(op.client_name.clone());
        let last = file.blocks.last().copied();
        self.leases.add(&op.client_name, op.inode_id);
        self.truncating.remove(&op.inode_id);
        if let (false, Some(last)) = (op.new_block, last) {
            if let Some(b) = self.blocks.get_mut(last) {
                b.state = BlockState::UnderConstruction;
                // The nodes that hold it, and those of the pipeline that wrote it whose
                // reports may still be on their way.
                let mut nodes = std::mem::take(&mut b.replicas);
                for n in std::mem::take(&mut b.expected) {
                    if !nodes.contains(&n) {
                        nodes.push(n);
                    }
                }
                b.expected = nodes;
            }
        }
        Ok(())
    }

    /// Applies [`ConcatOp`]: the sources' blocks move to the end of the target and the
    /// sources go.
    pub(super) fn apply_concat(&mut self, op: &ConcatOp) -> Result<()> {
        let mut moved = Vec::new();
        for src in &op.sources {
            let file = self.open_or_closed_file_mut(*src)?;
            if file.client_name.is_some() {
                return Err(NameNodeError::InvalidArgument {
                    message: format!("concat source inode {src} is open"),
                });
            }
            moved.extend(std::mem::take(&mut file.blocks));
        }
        for src in &op.sources {
            self.ns.remove_subtree(*src, op.mtime);
        }
        for b in &moved {
            if let Some(info) = self.blocks.get_mut(*b) {
                info.inode = op.target;
            }
        }
        let target = self
            .ns
            .get_mut(op.target)
            .ok_or(NameNodeError::FileNotFound {
                path: format!("inode {}", op.target),
            })?;
        target.mtime = op.mtime;
        let target = target
            .file_mut()
            .ok_or_else(|| NameNodeError::FileNotFound {
                path: format!("inode {} (is not a file)", op.target),
            })?;
        target.blocks.extend(moved);
        Ok(())
    }

    /// A file, open or not.
    pub(super) fn open_or_closed_file_mut(
        &mut self,
        id: InodeId,
    ) -> Result<&mut crate::namespace::FileInode> {
        self.ns
            .get_mut(id)
            .and_then(Inode::file_mut)
            .ok_or_else(|| NameNodeError::FileNotFound {
                path: format!("inode {id}"),
            })
    }
}
