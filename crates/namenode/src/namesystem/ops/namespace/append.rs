//! `append` (HDFS's `FSDirAppendOp`): reopening a closed file, its partial last block
//! back under construction; the lease check it shares with `truncate`.

use bytes::Bytes;
use tusk_proto::hdfs::{AppendResponseProto, LocatedBlockProto};
use tusk_proto::internal::{edit_record::Op, AppendFileOp};
use tusk_security::AccessMode;

use crate::blocks::BlockState;
use crate::error::{NameNodeError, Result};
use crate::namespace::{Access, Inode, InodeId};
use crate::namesystem::{Logged, Namesystem, PathUse, State};
use crate::path;

/// `CreateFlagProto.NEW_BLOCK`: append in a new block, leaving the last one as it is.
const CREATE_FLAG_NEW_BLOCK: u32 = 32;

impl Namesystem {
    /// `append`: reopens a closed file for `client`. Without NEW_BLOCK a partial last
    /// block goes back under construction and is returned (with a WRITE token) for the
    /// client to continue; its generation stamp is bumped by the client's
    /// `updateBlockForPipeline`, as in HDFS. A full last block (or none) is not returned
    /// at all, as HDFS's `convertLastBlockToUnderConstruction`: the client's first
    /// `addBlock` then names no `previous`. With NEW_BLOCK the last block comes back
    /// without locations, for `addBlock`'s `previous`.
    pub fn append(
        &self,
        user: &str,
        src: &str,
        client: &str,
        flags: u32,
    ) -> Result<Logged<AppendResponseProto>> {
        let src = &*self.resolved(user, src, PathUse::Write)?;
        let src = path::normalize(src)?;
        let new_block = flags & CREATE_FLAG_NEW_BLOCK != 0;
        let mut st = self.write();
        let not_found = || NameNodeError::FileNotFound {
            path: format!("Failed to append to non-existent file {src} for client {client}"),
        };
        self.permissions.check_traverse(&st.ns, user, &src)?;
        let id = st.ns.resolve(&src)?.ok_or_else(not_found)?;
        if st.ns.get(id).and_then(Inode::file).is_none() {
            return Err(NameNodeError::AppendToDirectory { path: src });
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
        let block = last.filter(|_| reopen || new_block).map(|b| {
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
    pub(crate) fn check_lease_free(
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
        if soft_expired
            && !holder
                .starts_with(crate::namesystem::monitors::block_recovery::NAMENODE_LEASE_HOLDER)
        {
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
}

impl State {
    /// Applies [`AppendFileOp`]: the file is open for `client_name` again; without
    /// `new_block`, its last block is under construction on the nodes that hold it.
    pub(crate) fn apply_append_file(&mut self, op: &AppendFileOp) -> Result<()> {
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

    /// A file, open or not.
    pub(crate) fn open_or_closed_file_mut(
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
