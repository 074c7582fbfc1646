//! The namespace as a checkpoint image ([`FsImage`]) and back: what is saved at a
//! checkpoint and loaded at start-up before the edit log is replayed.

use std::collections::HashMap;
use std::time::Instant;

use tusk_proto::internal::{BlockRecord, FsImage, InodeRecord};

use super::{Leases, SafeMode, State};
use crate::blocks::{BlockInfo, BlockMap, BlockState};
use crate::datanodes::DatanodeRegistry;
use crate::namespace::{FileInode, Inode, InodeKind, Namespace, ROOT_ID};
use crate::options::NameNodeOptions;
use crate::storage::StorageInfo;

impl State {
    /// A checkpoint image of the namespace.
    pub fn to_image(&self, last_txid: u64, storage: &StorageInfo) -> FsImage {
        let mut inodes = Vec::with_capacity(self.ns.inodes.len());
        for id in self.ns.subtree(ROOT_ID) {
            let n = self.ns.get(id).expect("subtree ids exist");
            let mut rec = InodeRecord {
                id: n.id,
                parent: n.parent,
                name: n.name.clone(),
                directory: n.is_dir(),
                permission: n.permission as u32,
                owner: n.owner.clone(),
                group: n.group.clone(),
                mtime: n.mtime,
                atime: n.atime,
                ..Default::default()
            };
            self.ns.features.to_record(id, &mut rec);
            if let InodeKind::File(f) = &n.kind {
                rec.replication = f.replication as u32;
                rec.block_size = f.block_size;
                rec.client_name = f.client_name.clone().unwrap_or_default();
                if let Some(cut) = self.truncate_cut(n.id) {
                    rec.truncate_block_length = cut.length;
                    rec.truncate_copy_source = cut.copy_from.unwrap_or(0);
                }
                rec.blocks = f
                    .blocks
                    .iter()
                    .filter_map(|b| self.blocks.get(*b))
                    .map(|b| BlockRecord {
                        block_id: b.id,
                        generation_stamp: b.generation_stamp,
                        num_bytes: b.num_bytes,
                    })
                    .collect();
            }
            inodes.push(rec);
        }
        let (snapshottable_dirs, frozen_inodes) = crate::snapshot::image::save(&self.snapshots);
        let mut snapshot_blocks: Vec<BlockRecord> = self
            .snapshots
            .store
            .retained()
            .filter_map(|id| self.blocks.get(id))
            .map(|b| BlockRecord {
                block_id: b.id,
                generation_stamp: b.generation_stamp,
                num_bytes: b.num_bytes,
            })
            .collect();
        snapshot_blocks.sort_unstable_by_key(|b| b.block_id);
        let tokens = self.delegation_tokens.state();
        FsImage {
            delegation_keys: tokens
                .keys
                .into_iter()
                .map(|k| tusk_proto::internal::DelegationKeyRecord {
                    key_id: k.key_id,
                    expiry_date: k.expiry_date,
                    key: k.bytes.into(),
                })
                .collect(),
            delegation_tokens: tokens
                .tokens
                .into_iter()
                .map(
                    |(id, renew_date)| tusk_proto::internal::DelegationTokenRecord {
                        identifier: id.to_bytes().into(),
                        renew_date,
                    },
                )
                .collect(),
            delegation_current_key_id: tokens.current_key_id,
            delegation_sequence_number: tokens.sequence_number,
            snapshottable_dirs,
            frozen_inodes,
            snapshot_blocks,
            next_snapshot_id: self.snapshots.next_snapshot_id,
            last_txid,
            block_pool_id: storage.block_pool_id.clone(),
            namespace_id: storage.namespace_id,
            next_inode_id: self.ns.next_inode_id,
            next_block_id: self.blocks.next_block_id,
            next_generation_stamp: self.blocks.next_generation_stamp,
            inodes,
        }
    }

    /// Rebuilds state from an image.
    pub fn from_image(image: &FsImage, options: &NameNodeOptions) -> Self {
        let mut ns = Namespace::new(&options.superuser, &options.supergroup, 0);
        let mut blocks = BlockMap::default();
        let mut leases = Leases::default();
        let mut truncating = HashMap::new();
        for rec in &image.inodes {
            if rec.truncate_block_length > 0 {
                let cut = super::TruncateCut {
                    length: rec.truncate_block_length,
                    copy_from: (rec.truncate_copy_source != 0).then_some(rec.truncate_copy_source),
                };
                truncating.insert(rec.id, cut);
            }
            let kind = if rec.directory {
                InodeKind::Directory {
                    children: Default::default(),
                }
            } else {
                for (i, b) in rec.blocks.iter().enumerate() {
                    let last = i + 1 == rec.blocks.len();
                    blocks.insert(BlockInfo {
                        id: b.block_id,
                        generation_stamp: b.generation_stamp,
                        num_bytes: b.num_bytes,
                        inode: rec.id,
                        state: if last && !rec.client_name.is_empty() {
                            BlockState::UnderConstruction
                        } else {
                            BlockState::Committed
                        },
                        replicas: vec![],
                        expected: vec![],
                    });
                }
                if !rec.client_name.is_empty() {
                    leases.add(&rec.client_name, rec.id);
                }
                InodeKind::File(FileInode {
                    replication: rec.replication as u16,
                    block_size: rec.block_size,
                    blocks: rec.blocks.iter().map(|b| b.block_id).collect(),
                    client_name: (!rec.client_name.is_empty()).then(|| rec.client_name.clone()),
                })
            };
            let inode = Inode {
                id: rec.id,
                parent: rec.parent,
                name: rec.name.clone(),
                permission: rec.permission as u16,
                owner: rec.owner.clone(),
                group: rec.group.clone(),
                mtime: rec.mtime,
                atime: rec.atime,
                kind,
            };
            ns.features.load_record(rec);
            if rec.id == ROOT_ID {
                let root = ns.get_mut(ROOT_ID).expect("root");
                root.permission = inode.permission;
                root.owner = inode.owner;
                root.group = inode.group;
                root.mtime = inode.mtime;
                continue;
            }
            if let Some(InodeKind::Directory { children }) =
                ns.get_mut(rec.parent).map(|p| &mut p.kind)
            {
                children.insert(rec.name.as_str(), rec.id);
            }
            ns.inodes.insert(rec.id, inode);
        }
        ns.next_inode_id = ns.next_inode_id.max(image.next_inode_id);
        blocks.next_block_id = blocks.next_block_id.max(image.next_block_id);
        blocks.next_generation_stamp = blocks
            .next_generation_stamp
            .max(image.next_generation_stamp);
        let snapshots = crate::snapshot::image::load(
            &image.snapshottable_dirs,
            &image.frozen_inodes,
            image.next_snapshot_id,
            &mut blocks,
        );
        // The copies hold each block's stamp and length when they were made; the block
        // itself may have moved on since (an append), and that is what its replicas say.
        for b in &image.snapshot_blocks {
            if let Some(known) = blocks.get_mut(b.block_id) {
                known.generation_stamp = b.generation_stamp;
                known.num_bytes = b.num_bytes;
            }
        }
        let mut state = State {
            ns,
            blocks,
            datanodes: DatanodeRegistry::new(options),
            leases,
            safe_mode: SafeMode::off(options),
            hosts: Default::default(),
            txns_since_checkpoint: 0,
            last_checkpoint: Instant::now(),
            recoveries: HashMap::new(),
            truncating,
            snapshots,
            delegation_tokens: tusk_security::DelegationTokenSecretManager::new(
                options.delegation_tokens,
            ),
            standby: options.ha.is_some(),
            standby_reports: Vec::new(),
        };
        state.restore_delegation_tokens(image);
        state.recompute_quota_usage();
        state
    }
}
