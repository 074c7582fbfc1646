//! ClientNamenodeProtocol operations, each deciding under the lock and syncing after.

use std::time::Instant;

use bytes::Bytes;
use tusk_proto::hdfs::{
    AddBlockRequestProto, ContentSummaryProto, CreateRequestProto, DatanodeInfoProto,
    DirectoryListingProto, ExtendedBlockProto, FsServerDefaultsProto,
    GetAdditionalDatanodeRequestProto, GetFsStatsResponseProto, HdfsFileStatusProto,
    LocatedBlockProto, LocatedBlocksProto,
};
use tusk_proto::internal::{
    edit_record::Op, AbandonBlockOp, AddBlockOp, AddFileOp, BlockRecord, CloseFileOp, DeleteOp,
    EditRecord, MkdirOp, RenameOp, SetOwnerOp, SetPermissionOp, SetReplicationOp, SetTimesOp,
    UpdateBlockOp,
};

use super::{Logged, Namesystem, State};
use crate::blocks::BlockState;
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::fs_limits::FsLimits;
use crate::namespace::{Access, Inode, InodeId, ROOT_ID};
use crate::path;
use crate::placement;
use crate::snapshot::{self, SnapshotPath};
use tusk_security::AccessMode;

/// `createFlag` bits.
const CREATE_FLAG_OVERWRITE: u32 = 2;

impl Namesystem {
    pub fn get_file_info(&self, user: &str, src: &str) -> Result<Option<HdfsFileStatusProto>> {
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_file_info(user, &sp);
        }
        let st = self.read();
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        self.permissions.check_path(&st.ns, user, id, None)?;
        let node = st.ns.get(id).expect("resolved");
        Ok(Some(st.file_status(
            node,
            Bytes::new(),
            false,
            &self.storage.block_pool_id,
        )))
    }

    pub fn get_listing(
        &self,
        user: &str,
        src: &str,
        start_after: &[u8],
        need_location: bool,
    ) -> Result<Option<DirectoryListingProto>> {
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_listing_of(user, &sp, start_after, need_location);
        }
        let st = self.read();
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        let node = st.ns.get(id).expect("resolved");
        let pool = &self.storage.block_pool_id;
        let Some(children) = node.children() else {
            self.permissions.check_path(&st.ns, user, id, None)?;
            let status = st.file_status(node, Bytes::new(), need_location, pool);
            return Ok(Some(DirectoryListingProto {
                partial_listing: vec![status],
                remaining_entries: 0,
            }));
        };
        self.permissions
            .check_path(&st.ns, user, id, Some(Access::Read))?;
        let after = String::from_utf8_lossy(start_after);
        let mut partial = Vec::new();
        let mut remaining = 0u32;
        for (name, child) in children.after(Some(&*after).filter(|a| !a.is_empty())) {
            if partial.len() >= self.options.listing_limit {
                remaining += 1;
                continue;
            }
            let c = st.ns.get(child).expect("child exists");
            partial.push(st.file_status(
                c,
                Bytes::copy_from_slice(name.as_bytes()),
                need_location,
                pool,
            ));
        }
        Ok(Some(DirectoryListingProto {
            partial_listing: partial,
            remaining_entries: remaining,
        }))
    }

    pub fn mkdirs(
        &self,
        user: &str,
        src: &str,
        permission: u32,
        create_parent: bool,
    ) -> Result<Logged<bool>> {
        self.mkdirs_modes(user, src, permission, None, create_parent)
    }

    /// [`Namesystem::mkdirs`] with the client's mode before its umask, which applies
    /// instead under a default ACL.
    pub fn mkdirs_modes(
        &self,
        user: &str,
        src: &str,
        permission: u32,
        unmasked: Option<u32>,
        create_parent: bool,
    ) -> Result<Logged<bool>> {
        FsLimits::check_path("mkdirs", src)?;
        snapshot::check_writable_path(src)?;
        let txid = {
            let mut st = self.write();
            let parts = path::components(src)?;
            let (deepest, covered) = st.ns.deepest_existing(&parts);
            let node = st.ns.get(deepest).expect("resolved");
            if covered == parts.len() {
                if node.is_dir() {
                    return Ok(Logged::new(true, 0));
                }
                return Err(NameNodeError::AlreadyExists {
                    path: format!("{} (is not a directory)", path::join(&parts)),
                });
            }
            if !node.is_dir() {
                return Err(NameNodeError::ParentNotDirectory {
                    path: st.ns.full_path(deepest),
                });
            }
            if !create_parent && covered + 1 < parts.len() {
                return Err(NameNodeError::FileNotFound {
                    path: path::join(&parts[..parts.len() - 1]),
                });
            }
            self.permissions
                .check_path(&st.ns, user, deepest, Some(Access::Write))?;
            let limits = self.options.fs_limits;
            for (i, name) in parts.iter().enumerate().skip(covered) {
                limits.check_name(name, || path::join(&parts[..i]))?;
            }
            // Only the first new directory goes into one that has entries.
            limits.check_room(&st.ns, deepest)?;
            let group = node.group.clone();
            let permission = self.creation_mode(&st, deepest, permission, unmasked);
            let now = tusk_common::now_millis();
            let mut txid = 0;
            for i in covered..parts.len() {
                let last = i + 1 == parts.len();
                let op = Op::Mkdir(MkdirOp {
                    path: path::join(&parts[..=i]),
                    inode_id: st.ns.allocate_inode_id(),
                    // Parents made on the way keep u+wx so the child can be created.
                    permission: if last {
                        permission & 0o1777
                    } else {
                        (permission | 0o300) & 0o1777
                    },
                    owner: user.to_string(),
                    group: group.clone(),
                    mtime: now,
                });
                txid = self.apply_and_log(&mut st, op)?;
            }
            txid
        };
        Ok(Logged::new(true, txid))
    }

    pub fn create(
        &self,
        user: &str,
        req: &CreateRequestProto,
    ) -> Result<Logged<HdfsFileStatusProto>> {
        let src = path::normalize(&req.src)?;
        FsLimits::check_path("create", &src)?;
        snapshot::check_writable_path(&src)?;
        if req.replication < self.options.min_replication
            || req.replication > self.options.max_replication
        {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "Requested replication factor of {} is outside the range [{}, {}]",
                    req.replication, self.options.min_replication, self.options.max_replication
                ),
            });
        }
        // The client checks its own bytes-per-checksum divides the block size (HDFS's
        // NameNode does not know the client's).
        if req.block_size == 0 {
            return Err(NameNodeError::InvalidArgument {
                message: "Block size must be positive".into(),
            });
        }
        let limits = self.options.fs_limits;
        let name_at = src.rfind('/').map_or(0, |i| i + 1);
        limits.check_name(&src[name_at..], || match name_at {
            0 | 1 => "/".to_string(),
            _ => src[..name_at - 1].to_string(),
        })?;
        let (txid, status) = {
            let mut st = self.write();
            let mut txid = 0;
            let mut replaced = false;
            if let Some(id) = st.ns.resolve(&src)? {
                let node = st.ns.get(id).expect("resolved");
                if node.is_dir() {
                    return Err(NameNodeError::AlreadyExists {
                        path: format!("{src} (already exists as a directory)"),
                    });
                }
                if let Some(holder) = node.file().and_then(|f| f.client_name.clone()) {
                    return Err(NameNodeError::AlreadyBeingCreated {
                        path: src,
                        client: req.client_name.clone(),
                        holder,
                    });
                }
                if req.create_flag & CREATE_FLAG_OVERWRITE == 0 {
                    return Err(NameNodeError::AlreadyExists { path: src });
                }
                self.permissions
                    .check_path(&st.ns, user, node.parent, Some(Access::Write))?;
                txid = self.apply_and_log(
                    &mut st,
                    Op::Delete(DeleteOp {
                        path: src.clone(),
                        mtime: tusk_common::now_millis(),
                    }),
                )?;
                replaced = true;
            }
            let parent = match st.ns.parent_of(&src) {
                Ok((parent, _)) => Some(parent),
                Err(NameNodeError::FileNotFound { .. }) if req.create_parent => None,
                Err(e) => return Err(e),
            };
            if let Some(parent) = parent {
                self.permissions
                    .check_path(&st.ns, user, parent, Some(Access::Write))?;
                if !replaced {
                    limits.check_room(&st.ns, parent)?;
                }
                let group = st.ns.get(parent).expect("parent").group.clone();
                let inode_id = st.ns.allocate_inode_id();
                let op = Op::AddFile(AddFileOp {
                    path: src.clone(),
                    inode_id,
                    permission: self.creation_mode(
                        &st,
                        parent,
                        req.masked.perm,
                        req.unmasked.as_ref().map(|u| u.perm),
                    ) & 0o1777,
                    owner: user.to_string(),
                    group,
                    mtime: tusk_common::now_millis(),
                    replication: req.replication,
                    block_size: req.block_size,
                    client_name: req.client_name.clone(),
                });
                txid = txid.max(self.apply_and_log(&mut st, op)?);
                let node = st.ns.get(inode_id).expect("just created");
                let status = st.file_status(node, Bytes::new(), false, &self.storage.block_pool_id);
                (txid, Some(status))
            } else {
                (txid, None)
            }
        };
        match status {
            Some(status) => Ok(Logged::new(status, txid)),
            None => {
                // Missing parents with createParent: make them, then create again.
                let parts = path::components(&src)?;
                let parent_path = path::join(&parts[..parts.len() - 1]);
                let made = self.mkdirs(user, &parent_path, 0o755, true)?;
                let created = self.create(user, req)?;
                Ok(Logged::new(created.value, created.txid.max(made.txid)))
            }
        }
    }

    /// The open file named by id (preferred) or path, checked against the lease holder.
    pub(super) fn open_file_for(
        &self,
        st: &State,
        src: &str,
        file_id: Option<u64>,
        client: &str,
    ) -> Result<InodeId> {
        let id = match file_id.filter(|id| *id != 0) {
            Some(id) if st.ns.get(id).is_some() => id,
            Some(_) => {
                return Err(NameNodeError::FileNotFound {
                    path: src.to_string(),
                })
            }
            None => st.ns.lookup(src)?.id,
        };
        let node = st.ns.get(id).expect("resolved");
        let file = node.file().ok_or_else(|| NameNodeError::FileNotFound {
            path: src.to_string(),
        })?;
        match &file.client_name {
            Some(holder) if holder == client => Ok(id),
            Some(holder) => Err(NameNodeError::LeaseExpired {
                path: src.to_string(),
                reason: format!("File is held by {holder}, not by {client}"),
            }),
            None => Err(NameNodeError::LeaseExpired {
                path: src.to_string(),
                reason: "File is not open for writing".to_string(),
            }),
        }
    }

    /// Allocates the file's next block; the reply carries a WRITE token for `user`.
    pub fn add_block(
        &self,
        user: &str,
        req: &AddBlockRequestProto,
        client_ip: &str,
    ) -> Result<Logged<LocatedBlockProto>> {
        let mut logged = self.allocate_block(req, client_ip)?;
        self.set_block_token(&mut logged.value, user, AccessMode::Write);
        Ok(logged)
    }

    fn allocate_block(
        &self,
        req: &AddBlockRequestProto,
        client_ip: &str,
    ) -> Result<Logged<LocatedBlockProto>> {
        let (txid, located) = {
            let mut st = self.write();
            let id = self.open_file_for(&st, &req.src, req.file_id, &req.client_name)?;
            let file = st
                .ns
                .get(id)
                .and_then(Inode::file)
                .expect("open file")
                .clone();
            let previous_bytes = req.previous.as_ref().and_then(|p| p.num_bytes).unwrap_or(0);
            // A retried addBlock whose block was already allocated gets the same block.
            if let (Some(last), Some(prev)) = (file.blocks.last(), &req.previous) {
                if *last != prev.block_id {
                    let penultimate = file.blocks.len().checked_sub(2).map(|i| file.blocks[i]);
                    if penultimate == Some(prev.block_id) {
                        let b = st.blocks.get(*last).expect("block of file").clone();
                        let offset: u64 = file.blocks[..file.blocks.len() - 1]
                            .iter()
                            .filter_map(|b| st.blocks.get(*b))
                            .map(|b| b.num_bytes)
                            .fold(0, u64::saturating_add);
                        // Its allocation may still be on its way to disk.
                        return Ok(Logged::new(
                            st.located_block(&b, offset, &self.storage.block_pool_id),
                            self.edit_log.last_txid(),
                        ));
                    }
                    return Err(NameNodeError::InvalidArgument {
                        message: format!(
                            "previous block blk_{} is not the file's last block",
                            prev.block_id
                        ),
                    });
                }
            }
            // No `previous` while the last block is being written is a client that lost
            // track (HDFS's analyzeFileState); a complete last block is fine: the file
            // was reopened for append on a block boundary.
            if req.previous.is_none() {
                if let Some(last) = file.blocks.last().and_then(|b| st.blocks.get(*b)) {
                    if last.state == BlockState::UnderConstruction {
                        return Err(NameNodeError::InvalidArgument {
                            message: format!(
                                "Cannot allocate block in {}: no previous block given, but blk_{} is being written",
                                req.src, last.id
                            ),
                        });
                    }
                }
            }
            let excluded: Vec<DnIdx> = req
                .exclude_nodes
                .iter()
                .filter_map(|d| {
                    st.datanodes
                        .find(&d.id.datanode_uuid)
                        .or_else(|| st.datanodes.find_by_xfer(&d.id.ip_addr, d.id.xfer_port))
                })
                .collect();
            let targets = placement::choose_targets(
                &st.datanodes,
                file.replication as usize,
                Some(client_ip),
                &[],
                &excluded,
                file.block_size,
            );
            if targets.is_empty() {
                return Err(NameNodeError::NotEnoughDatanodes {
                    path: req.src.clone(),
                    needed: self.options.min_replication as usize,
                    available: 0,
                    live: st.datanodes.live_count(),
                    excluded: excluded.len(),
                });
            }
            let block_id = st.blocks.allocate_id();
            let gs = st.blocks.allocate_generation_stamp();
            let op = Op::AddBlock(AddBlockOp {
                inode_id: id,
                block: Some(BlockRecord {
                    block_id,
                    generation_stamp: gs,
                    num_bytes: 0,
                }),
                previous_block_bytes: previous_bytes,
            });
            let txid = self.apply_and_log(&mut st, op)?;
            let offset = st.file_length(st.ns.get(id).and_then(Inode::file).expect("open file"));
            let b = st.blocks.get_mut(block_id).expect("just added");
            b.expected = targets.clone();
            let b = b.clone();
            (
                txid,
                st.located_block_on(&b, offset, &self.storage.block_pool_id, &targets),
            )
        };
        Ok(Logged::new(located, txid))
    }

    pub fn abandon_block(
        &self,
        src: &str,
        holder: &str,
        block: &ExtendedBlockProto,
        file_id: Option<u64>,
    ) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let id = self.open_file_for(&st, src, file_id, holder)?;
            let file = st.ns.get(id).and_then(Inode::file).expect("open file");
            if file.blocks.last() != Some(&block.block_id) {
                return Ok(Logged::new((), 0));
            }
            self.apply_and_log(
                &mut st,
                Op::AbandonBlock(AbandonBlockOp {
                    inode_id: id,
                    block_id: block.block_id,
                }),
            )?
        };
        Ok(Logged::new((), txid))
    }

    /// Closes a file once every block has a replica: true when closed; `None` while the
    /// last block's replicas have not been reported yet.
    pub fn try_complete(
        &self,
        src: &str,
        client: &str,
        last: Option<&ExtendedBlockProto>,
        file_id: Option<u64>,
    ) -> Result<Option<Logged<bool>>> {
        let mut st = self.write();
        let id = match self.open_file_for(&st, src, file_id, client) {
            Ok(id) => id,
            Err(NameNodeError::LeaseExpired { .. }) => {
                // A retried complete of a file already closed by this client.
                let closed = st
                    .ns
                    .resolve(src)?
                    .and_then(|id| st.ns.get(id))
                    .and_then(Inode::file)
                    .is_some_and(|f| f.client_name.is_none());
                if closed {
                    // Its close may still be on its way to disk.
                    return Ok(Some(Logged::new(true, self.edit_log.last_txid())));
                }
                return self
                    .open_file_for(&st, src, file_id, client)
                    .map(|_| Some(Logged::new(false, 0)));
            }
            Err(e) => return Err(e),
        };
        let file = st
            .ns
            .get(id)
            .and_then(Inode::file)
            .expect("open file")
            .clone();
        if let (Some(last), Some(mine)) = (last, file.blocks.last()) {
            if last.block_id != *mine {
                return Err(NameNodeError::InvalidArgument {
                    message: format!("blk_{} is not the last block of {src}", last.block_id),
                });
            }
        }
        let last_bytes = last.and_then(|l| l.num_bytes).unwrap_or_else(|| {
            file.blocks
                .last()
                .and_then(|b| st.blocks.get(*b))
                .map_or(0, |b| b.num_bytes)
        });
        let ready = file.blocks.iter().enumerate().all(|(i, b)| {
            let Some(info) = st.blocks.get(*b) else {
                return true;
            };
            let bytes = if i + 1 == file.blocks.len() {
                last_bytes
            } else {
                info.num_bytes
            };
            bytes == 0 || info.replicas.len() >= self.options.min_replication as usize
        });
        if ready {
            let op = Op::CloseFile(CloseFileOp {
                inode_id: id,
                last_block_bytes: last_bytes,
                mtime: tusk_common::now_millis(),
            });
            let txid = self.apply_and_log(&mut st, op)?;
            Ok(Some(Logged::new(true, txid)))
        } else {
            Ok(None)
        }
    }

    /// [`Namesystem::try_complete`], waiting a little for the last block's replicas so
    /// clients rarely need to retry; false if they do not come in time.
    pub async fn complete(
        &self,
        src: &str,
        client: &str,
        last: Option<&ExtendedBlockProto>,
        file_id: Option<u64>,
    ) -> Result<Logged<bool>> {
        let deadline = Instant::now() + self.options.complete_wait;
        loop {
            let notified = self.block_events.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(done) = self.try_complete(src, client, last, file_id)? {
                return Ok(done);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() || tokio::time::timeout(remaining, notified).await.is_err() {
                return Ok(Logged::new(false, 0));
            }
        }
    }

    pub fn get_block_locations(
        &self,
        user: &str,
        src: &str,
        offset: u64,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>> {
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_block_locations(user, &sp, src, offset, length);
        }
        let st = self.read();
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        self.permissions
            .check_path(&st.ns, user, id, Some(Access::Read))?;
        self.check_unreadable_by_superuser(&st, user, id)?;
        let node = st.ns.get(id).expect("resolved");
        if node.is_dir() {
            return Err(NameNodeError::FileNotFound {
                path: format!("{src} (is a directory)"),
            });
        }
        let mut located = st.located_blocks(node, offset, length, &self.storage.block_pool_id);
        drop(st);
        for lb in located.blocks.iter_mut().chain(located.last_block.as_mut()) {
            self.set_block_token(lb, user, AccessMode::Read);
        }
        Ok(Some(located))
    }

    /// Checks write permission on the parents of both ends of a rename.
    fn check_rename(
        &self,
        st: &State,
        user: &str,
        src_parent: InodeId,
        dst_parent: InodeId,
    ) -> Result<()> {
        self.permissions
            .check_path(&st.ns, user, src_parent, Some(Access::Write))?;
        self.permissions
            .check_path(&st.ns, user, dst_parent, Some(Access::Write))
    }

    /// `verifyFsLimitsForRename`: the new name is not too long, and a directory that
    /// gains an entry (another one than the source's, nothing replaced) has room for it.
    fn check_rename_limits(
        &self,
        st: &State,
        src_parent: InodeId,
        dst_parent: InodeId,
        name: &str,
        replaces: bool,
    ) -> Result<()> {
        let limits = self.options.fs_limits;
        limits.check_name(name, || st.ns.full_path(dst_parent))?;
        if dst_parent != src_parent && !replaces {
            limits.check_room(&st.ns, dst_parent)?;
        }
        Ok(())
    }

    /// The original rename: into `dst` when it is a directory; false instead of most errors.
    pub fn rename(&self, user: &str, src: &str, dst: &str) -> Result<Logged<bool>> {
        FsLimits::check_path("rename", dst)?;
        snapshot::check_writable_path(src)?;
        snapshot::check_writable_path(dst)?;
        let txid = {
            let mut st = self.write();
            let src = path::normalize(src)?;
            let mut dst = path::normalize(dst)?;
            let Some(src_id) = st.ns.resolve(&src)? else {
                return Ok(Logged::new(false, 0));
            };
            if path::is_under(&dst, &src) && dst != src {
                return Err(NameNodeError::RenameIntoSubtree { src, dst });
            }
            if let Some(d) = st.ns.resolve(&dst)? {
                if st.ns.get(d).is_some_and(Inode::is_dir) {
                    let name = src.rsplit('/').next().unwrap_or_default();
                    dst = path::join(
                        &[dst.trim_start_matches('/'), name]
                            .iter()
                            .filter(|s| !s.is_empty())
                            .copied()
                            .collect::<Vec<_>>(),
                    );
                }
            }
            if dst == src {
                return Ok(Logged::new(true, 0));
            }
            if st.ns.resolve(&dst)?.is_some() {
                return Ok(Logged::new(false, 0));
            }
            let Ok((dst_parent, _)) = st.ns.parent_of(&dst) else {
                return Ok(Logged::new(false, 0));
            };
            let src_parent = st.ns.get(src_id).map_or(ROOT_ID, |n| n.parent);
            self.check_rename(&st, user, src_parent, dst_parent)?;
            let name = dst.rsplit('/').next().unwrap_or_default();
            self.check_rename_limits(&st, src_parent, dst_parent, name, false)?;
            let op = Op::Rename(RenameOp {
                src,
                dst,
                mtime: tusk_common::now_millis(),
                overwrite: false,
            });
            match self.apply_and_log(&mut st, op) {
                Ok(t) => t,
                Err(NameNodeError::RenameIntoSubtree { src, dst }) => {
                    return Err(NameNodeError::RenameIntoSubtree { src, dst })
                }
                Err(e @ NameNodeError::Snapshot { .. }) => return Err(e),
                Err(
                    e @ (NameNodeError::NsQuotaExceeded { .. }
                    | NameNodeError::DsQuotaExceeded { .. }
                    | NameNodeError::TypeQuotaExceeded { .. }),
                ) => return Err(e),
                Err(_) => return Ok(Logged::new(false, 0)),
            }
        };
        Ok(Logged::new(true, txid))
    }

    /// rename2: exactly to `dst`; with `overwrite`, replaces a file or empty directory.
    /// The tree is resolved once: the plan is checked for permissions, then carried out.
    pub fn rename2(&self, user: &str, src: &str, dst: &str, overwrite: bool) -> Result<Logged<()>> {
        FsLimits::check_path("rename", dst)?;
        snapshot::check_writable_path(src)?;
        snapshot::check_writable_path(dst)?;
        let op = RenameOp {
            src: path::normalize(src)?,
            dst: path::normalize(dst)?,
            mtime: tusk_common::now_millis(),
            overwrite,
        };
        if op.dst == op.src {
            return Err(NameNodeError::AlreadyExists {
                path: format!("{} (the source and destination are the same)", op.dst),
            });
        }
        let mut st = self.write();
        self.check_writable()?;
        st.check_safe_mode(|| format!("Cannot rename {}", op.src))?;
        let plan = st.ns.plan_rename(&op)?;
        self.check_rename(&st, user, plan.src_parent, plan.dst_parent)?;
        st.verify_rename_quota(&plan)?;
        let replaces = plan.existing.is_some();
        self.check_rename_limits(&st, plan.src_parent, plan.dst_parent, plan.name, replaces)?;
        let removed = st.apply_planned_rename(plan, op.mtime)?;
        st.invalidate_removed(&removed);
        let txid = self.edit_log.append(EditRecord {
            txid: 0,
            op: Some(Op::Rename(op)),
        });
        Ok(Logged::new((), txid))
    }

    pub fn delete(&self, user: &str, src: &str, recursive: bool) -> Result<Logged<bool>> {
        snapshot::check_writable_path(src)?;
        let txid = {
            let mut st = self.write();
            let src = path::normalize(src)?;
            let Some(id) = st.ns.resolve(&src)? else {
                return Ok(Logged::new(false, 0));
            };
            let node = st.ns.get(id).expect("resolved");
            if !recursive && node.children().is_some_and(|c| !c.is_empty()) {
                return Err(NameNodeError::DirectoryNotEmpty { path: src });
            }
            if id == ROOT_ID {
                return Ok(Logged::new(false, 0));
            }
            self.permissions
                .check_path(&st.ns, user, node.parent, Some(Access::Write))?;
            let op = Op::Delete(DeleteOp {
                path: src,
                mtime: tusk_common::now_millis(),
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new(true, txid))
    }

    pub fn set_replication(&self, user: &str, src: &str, replication: u32) -> Result<Logged<bool>> {
        if replication < self.options.min_replication || replication > self.options.max_replication
        {
            return Err(NameNodeError::InvalidArgument {
                message: format!(
                    "replication {replication} is outside [{}, {}]",
                    self.options.min_replication, self.options.max_replication
                ),
            });
        }
        let txid = {
            let mut st = self.write();
            let node = st.ns.lookup(src)?;
            if node.is_dir() {
                return Ok(Logged::new(false, 0));
            }
            let id = node.id;
            self.permissions
                .check_path(&st.ns, user, id, Some(Access::Write))?;
            let op = Op::SetReplication(SetReplicationOp {
                path: path::normalize(src)?,
                replication,
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new(true, txid))
    }

    pub fn set_permission(&self, user: &str, src: &str, permission: u32) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let id = st.ns.lookup(src)?.id;
            self.permissions.check_path(&st.ns, user, id, None)?;
            self.permissions.check_owner(&st.ns, user, id)?;
            let op = Op::SetPermission(SetPermissionOp {
                path: path::normalize(src)?,
                permission: permission & 0o1777,
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new((), txid))
    }

    pub fn set_owner(
        &self,
        user: &str,
        src: &str,
        owner: Option<String>,
        group: Option<String>,
    ) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let id = st.ns.lookup(src)?.id;
            self.permissions.check_path(&st.ns, user, id, None)?;
            let changes_owner = owner.as_ref().is_some_and(|o| !o.is_empty());
            if changes_owner && !self.permissions.is_superuser(user) {
                return Err(NameNodeError::AccessDenied {
                    user: user.to_string(),
                    access: "SUPERUSER",
                    path: path::normalize(src)?,
                });
            }
            self.permissions.check_owner(&st.ns, user, id)?;
            let op = Op::SetOwner(SetOwnerOp {
                path: path::normalize(src)?,
                owner: owner.unwrap_or_default(),
                group: group.unwrap_or_default(),
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new((), txid))
    }

    pub fn set_times(&self, user: &str, src: &str, mtime: i64, atime: i64) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let id = st.ns.lookup(src)?.id;
            self.permissions.check_path(&st.ns, user, id, None)?;
            if self.permissions.check_owner(&st.ns, user, id).is_err() {
                self.permissions.check(&st.ns, user, id, Access::Write)?;
            }
            let op = Op::SetTimes(SetTimesOp {
                path: path::normalize(src)?,
                mtime,
                atime,
            });
            self.apply_and_log(&mut st, op)?
        };
        Ok(Logged::new((), txid))
    }

    pub fn content_summary(&self, user: &str, src: &str) -> Result<ContentSummaryProto> {
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_content_summary(user, &sp, src);
        }
        let st = self.read();
        let id = st.ns.lookup(src)?.id;
        self.permissions.check_path(&st.ns, user, id, None)?;
        let (files, dirs, bytes, space) = st
            .ns
            .count(id, |b| st.blocks.get(b).map_or(0, |b| b.num_bytes));
        let quota = st.quota_usage(id);
        let mut summary = ContentSummaryProto {
            length: bytes,
            file_count: files,
            directory_count: dirs,
            quota: quota.quota,
            space_consumed: space,
            space_quota: quota.space_quota,
            type_quota_infos: quota.type_quota_infos,
            ..Default::default()
        };
        st.add_snapshot_usage(id, &mut summary);
        Ok(summary)
    }

    pub fn fs_stats(&self) -> GetFsStatsResponseProto {
        let st = self.read();
        let live: Vec<DnIdx> = st.datanodes.live().collect();
        let sum = |f: fn(&crate::datanodes::DatanodeDescriptor) -> u64| -> u64 {
            // DataNodes report these: saturate, never wrap.
            live.iter()
                .map(|i| f(&st.datanodes.nodes[*i]))
                .fold(0, u64::saturating_add)
        };
        let health = st.block_health();
        GetFsStatsResponseProto {
            capacity: sum(|d| d.capacity),
            used: sum(|d| d.dfs_used),
            remaining: sum(|d| d.remaining),
            under_replicated: health.low_redundancy,
            corrupt_blocks: health.corrupt,
            missing_blocks: health.missing,
            missing_repl_one_blocks: Some(health.missing_repl_one),
            blocks_in_future: Some(0),
            pending_deletion_blocks: Some(health.pending_deletion),
        }
    }

    /// A new generation stamp for a block whose pipeline failed, with a new WRITE token.
    pub fn update_block_for_pipeline(
        &self,
        user: &str,
        block: &ExtendedBlockProto,
        client: &str,
    ) -> Result<Logged<LocatedBlockProto>> {
        let (txid, located) = {
            let mut st = self.write();
            let info = held_block(&st, block.block_id, client)?;
            let gs = st.blocks.allocate_generation_stamp();
            let op = Op::UpdateBlock(UpdateBlockOp {
                block_id: block.block_id,
                generation_stamp: gs,
                num_bytes: block.num_bytes.unwrap_or(info.num_bytes),
            });
            let txid = self.apply_and_log(&mut st, op)?;
            let b = st.blocks.get(block.block_id).expect("exists").clone();
            (
                txid,
                st.located_block_on(&b, 0, &self.storage.block_pool_id, &[]),
            )
        };
        let mut located = located;
        self.set_block_token(&mut located, user, AccessMode::Write);
        Ok(Logged::new(located, txid))
    }

    /// Records the pipeline after recovery: the new generation stamp and nodes.
    pub fn update_pipeline(
        &self,
        client: &str,
        old: &ExtendedBlockProto,
        new: &ExtendedBlockProto,
        nodes: &[String],
    ) -> Result<Logged<()>> {
        let txid = {
            let mut st = self.write();
            let info = held_block(&st, old.block_id, client)?;
            check_pipeline_update(&st, &info, old, new)?;
            let expected: Vec<DnIdx> = nodes.iter().filter_map(|u| st.datanodes.find(u)).collect();
            let op = Op::UpdateBlock(UpdateBlockOp {
                block_id: new.block_id,
                generation_stamp: new.generation_stamp,
                num_bytes: new.num_bytes.unwrap_or(0),
            });
            let txid = self.apply_and_log(&mut st, op)?;
            let b = st.blocks.get_mut(new.block_id).expect("exists");
            // Nodes left out of the new pipeline hold stale replicas. Those in it may
            // already have reported their replica with the new stamp (an incremental
            // report can overtake this call); any still on the old stamp will report
            // the new one, and an old-stamp report arriving late is dropped.
            b.replicas.retain(|n| expected.contains(n));
            b.expected = expected;
            txid
        };
        Ok(Logged::new((), txid))
    }

    /// getAdditionalDatanode: new nodes for a writer replacing failed pipeline nodes;
    /// the reply lists the existing nodes, then the new ones, with a COPY token (what
    /// the writer's TRANSFER_BLOCK to an existing node needs, as in HDFS).
    pub fn additional_datanodes(
        &self,
        user: &str,
        req: &GetAdditionalDatanodeRequestProto,
        client_ip: &str,
    ) -> Result<LocatedBlockProto> {
        let (block, existing, excludes, count) = (
            &req.blk,
            &req.existings,
            &req.excludes,
            req.num_additional_nodes,
        );
        let st = self.read();
        let info = held_block(&st, block.block_id, &req.client_name)?;
        let find = |d: &DatanodeInfoProto| {
            st.datanodes
                .find(&d.id.datanode_uuid)
                .or_else(|| st.datanodes.find_by_xfer(&d.id.ip_addr, d.id.xfer_port))
        };
        let have: Vec<DnIdx> = existing.iter().filter_map(find).collect();
        let excluded: Vec<DnIdx> = excludes.iter().filter_map(find).collect();
        let mut targets = placement::choose_targets(
            &st.datanodes,
            count as usize,
            Some(client_ip),
            &have,
            &excluded,
            0,
        );
        let mut all = have;
        all.append(&mut targets);
        let mut located = st.located_block_on(&info, 0, &self.storage.block_pool_id, &all);
        drop(st);
        located.b.num_bytes = block.num_bytes;
        self.set_block_token(&mut located, user, AccessMode::Copy);
        Ok(located)
    }

    /// Clients report replicas that failed checksum verification. Unlike HDFS, which
    /// takes the client's word, each reported replica is only suspect until its holder
    /// re-reads it and confirms the corruption.
    pub fn report_bad_blocks(&self, blocks: &[LocatedBlockProto]) {
        let mut st = self.write();
        for lb in blocks {
            for loc in &lb.locs {
                if let Some(node) = st.datanodes.find(&loc.id.datanode_uuid) {
                    tracing::warn!(block = lb.b.block_id, node = %loc.id.datanode_uuid, "client reported a bad replica; verifying it");
                    st.suspect_replica(lb.b.block_id, node);
                }
            }
        }
    }

    pub fn server_defaults(&self) -> FsServerDefaultsProto {
        FsServerDefaultsProto {
            block_size: self.options.block_size,
            bytes_per_checksum: self.options.bytes_per_checksum,
            write_packet_size: self.options.write_packet_size,
            replication: self.options.default_replication,
            file_buffer_size: 4096,
            encrypt_data_transfer: Some(false),
            // Whole minutes, as HDFS's long; a shorter interval is still "on".
            trash_interval: Some(self.options.trash_interval.as_secs().div_ceil(60)),
            checksum_type: Some(tusk_proto::hdfs::ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: None,
            policy_id: Some(0),
            snapshot_trash_root_enabled: Some(false),
        }
    }

    pub fn preferred_block_size(&self, src: &str) -> Result<u64> {
        let st = self.read();
        let node = st.ns.lookup(src)?;
        Ok(node
            .file()
            .map_or(self.options.block_size, |f| f.block_size))
    }
}

/// A block of a file open for writing by `client`.
/// Refuses an updatePipeline that is not the recovery of the block the client holds:
/// another block (which would let any writer rewrite any file's block, dropping its
/// replicas), or a stamp older than the block's or never issued by
/// updateBlockForPipeline. HDFS refuses these too (`updatePipelineInternal`).
fn check_pipeline_update(
    st: &State,
    info: &crate::blocks::BlockInfo,
    old: &ExtendedBlockProto,
    new: &ExtendedBlockProto,
) -> Result<()> {
    let issued = st.blocks.next_generation_stamp;
    if new.block_id != old.block_id
        || new.generation_stamp < info.generation_stamp
        || new.generation_stamp >= issued
    {
        return Err(NameNodeError::InvalidArgument {
            message: format!(
                "Update blk_{}_{} to blk_{}_{} is not valid: the block's stamp is {}, the last issued {}",
                old.block_id,
                old.generation_stamp,
                new.block_id,
                new.generation_stamp,
                info.generation_stamp,
                issued.saturating_sub(1)
            ),
        });
    }
    Ok(())
}

fn held_block(st: &State, block: u64, client: &str) -> Result<crate::blocks::BlockInfo> {
    let info = st
        .blocks
        .get(block)
        .ok_or(NameNodeError::BlockNotFound { block })?
        .clone();
    let holder = st
        .ns
        .get(info.inode)
        .and_then(Inode::file)
        .and_then(|f| f.client_name.as_deref());
    if holder != Some(client) {
        return Err(NameNodeError::LeaseExpired {
            path: st.ns.full_path(info.inode),
            reason: format!("{client} does not hold the lease"),
        });
    }
    Ok(info)
}
