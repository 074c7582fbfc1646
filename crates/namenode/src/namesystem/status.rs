//! Replies that describe files and blocks: HdfsFileStatus, LocatedBlocks.

use bytes::Bytes;
use tusk_proto::common::TokenProto;
use tusk_proto::hdfs::{
    hdfs_file_status_proto::{FileType, Flags},
    ExtendedBlockProto, FsPermissionProto, HdfsFileStatusProto, LocatedBlockProto,
    LocatedBlocksProto, StorageTypeProto,
};

use super::State;
use crate::blocks::{BlockInfo, BlockState};
use crate::datanodes::DnIdx;
use crate::namespace::{Inode, InodeKind};

/// The `flags` bit HDFS sets on a snapshottable directory's status.
pub const SNAPSHOT_ENABLED_FLAG: u32 = 8;

pub fn empty_token() -> TokenProto {
    TokenProto {
        identifier: Bytes::new(),
        password: Bytes::new(),
        kind: String::new(),
        service: String::new(),
    }
}

impl State {
    /// Status of `node`; `name` is what goes in the `path` field (empty for getFileInfo,
    /// the child's name in listings).
    pub fn file_status(
        &self,
        node: &Inode,
        name: Bytes,
        with_locations: bool,
        pool: &str,
    ) -> HdfsFileStatusProto {
        // An inode with an ACL says so in the flags and, for older clients, in the
        // permission's extension bit (1 << 12), as HDFS does.
        let has_acl = self.ns.features.has_acl(node.id);
        let mut s = HdfsFileStatusProto {
            file_type: FileType::IsDir as i32,
            path: name,
            length: 0,
            permission: FsPermissionProto {
                perm: node.permission as u32 | if has_acl { 1 << 12 } else { 0 },
            },
            owner: node.owner.clone(),
            group: node.group.clone(),
            modification_time: node.mtime,
            access_time: node.atime,
            file_id: Some(node.id),
            storage_policy: Some(self.ns.effective_storage_policy(node.id) as u32),
            flags: Some(if has_acl { Flags::HasAcl as u32 } else { 0 }),
            ..Default::default()
        };
        match &node.kind {
            InodeKind::Directory { children } => {
                s.children_num = Some(children.len() as i32);
                if self.snapshots.is_snapshottable(node.id) {
                    s.flags = Some(SNAPSHOT_ENABLED_FLAG);
                }
            }
            InodeKind::File(f) => {
                s.file_type = FileType::IsFile as i32;
                s.length = self.file_length(f);
                s.block_replication = Some(f.replication as u32);
                s.blocksize = Some(f.block_size);
                s.children_num = Some(0);
                if with_locations {
                    s.locations = Some(self.located_blocks(node, 0, u64::MAX, pool));
                }
            }
        }
        s
    }

    /// The blocks of a file overlapping `[offset, offset + length)`.
    pub fn located_blocks(
        &self,
        node: &Inode,
        offset: u64,
        length: u64,
        pool: &str,
    ) -> LocatedBlocksProto {
        let file = node.file().expect("located_blocks on a file");
        let under_construction = file.client_name.is_some();
        let end = offset.saturating_add(length);
        let mut pos = 0u64;
        let mut located = Vec::new();
        let mut last = None;
        let count = file.blocks.len();
        for (i, id) in file.blocks.iter().enumerate() {
            let Some(b) = self.blocks.get(*id) else {
                continue;
            };
            let block_end = pos.saturating_add(b.num_bytes);
            let in_range = (block_end > offset || (b.num_bytes == 0 && pos >= offset))
                && pos < end.max(offset + 1);
            if i + 1 == count {
                let lb = self.located_block(b, pos, pool);
                if in_range {
                    located.push(lb.clone());
                }
                last = Some(lb);
            } else if in_range {
                located.push(self.located_block(b, pos, pool));
            }
            pos = block_end;
        }
        let last_uc = file
            .blocks
            .last()
            .and_then(|b| self.blocks.get(*b))
            .filter(|b| b.state == BlockState::UnderConstruction);
        // As HDFS: the length excludes a last block still being written; readers add
        // its visible length (the hflushed one, or the DataNode's).
        let file_length = pos - last_uc.map_or(0, |b| b.num_bytes);
        LocatedBlocksProto {
            file_length,
            blocks: located,
            under_construction,
            last_block: last,
            is_last_block_complete: last_uc.is_none(),
            file_encryption_info: None,
            ec_policy: None,
        }
    }

    /// One block with the nodes to read it from (while being written, its pipeline).
    /// Good replicas come first, those on stale nodes and those being verified last;
    /// when no good replica is left, the corrupt ones are listed and the block is marked
    /// corrupt, so a reader can still try them.
    pub fn located_block(&self, b: &BlockInfo, offset: u64, pool: &str) -> LocatedBlockProto {
        if b.state == BlockState::UnderConstruction && !b.expected.is_empty() {
            return self.located_block_on(b, offset, pool, &b.expected);
        }
        let mut nodes: Vec<DnIdx> = b
            .replicas
            .iter()
            .copied()
            .filter(|n| self.datanodes.nodes[*n].alive)
            .collect();
        if nodes.is_empty() {
            nodes = self
                .blocks
                .corrupt_replicas(b.id)
                .iter()
                .map(|c| c.node)
                .filter(|n| self.datanodes.nodes[*n].alive)
                .collect();
            let mut located = self.located_block_on(b, offset, pool, &nodes);
            located.corrupt = !nodes.is_empty();
            return located;
        }
        // A stable sort keeps the replicas' order within each group.
        // Decommissioning nodes last, as HDFS sorts them.
        nodes.sort_by_key(|n| {
            let stale = self.datanodes.stale.avoid_reads && self.datanodes.is_stale(*n);
            let retiring = !self.datanodes.nodes[*n].admin.in_service();
            (
                retiring,
                stale,
                self.blocks.suspect_since(b.id, *n).is_some(),
            )
        });
        self.located_block_on(b, offset, pool, &nodes)
    }

    pub fn located_block_on(
        &self,
        b: &BlockInfo,
        offset: u64,
        pool: &str,
        nodes: &[DnIdx],
    ) -> LocatedBlockProto {
        LocatedBlockProto {
            b: ExtendedBlockProto {
                pool_id: pool.to_string(),
                block_id: b.id,
                generation_stamp: b.generation_stamp,
                num_bytes: Some(b.num_bytes),
            },
            offset,
            locs: nodes
                .iter()
                .map(|n| self.datanodes.info_proto(*n))
                .collect(),
            corrupt: false,
            block_token: empty_token(),
            is_cached: nodes.iter().map(|_| false).collect(),
            storage_types: nodes
                .iter()
                .map(|_| StorageTypeProto::Disk as i32)
                .collect(),
            storage_i_ds: nodes
                .iter()
                .map(|n| self.datanodes.nodes[*n].identity.storage_id.clone())
                .collect(),
            block_indices: None,
            block_tokens: vec![],
        }
    }
}
