//! ClientNamenodeProtocol calls that log no edit: file status, listings, block
//! locations, content summaries, file system statistics, server defaults and clients'
//! reports of bad replicas. The calls that change the namespace are in `ops/*`.

use bytes::Bytes;
use tusk_proto::hdfs::{
    ContentSummaryProto, DirectoryListingProto, FsServerDefaultsProto, GetFsStatsResponseProto,
    HdfsFileStatusProto, LocatedBlockProto, LocatedBlocksProto,
};

use super::reserved::reserved_dir_status;
use super::{Namesystem, PathUse};
use crate::datanodes::DnIdx;
use crate::error::{NameNodeError, Result};
use crate::metrics::FsnSnapshot;
use crate::namespace::{reserved, Access};
use crate::snapshot::SnapshotPath;

impl Namesystem {
    pub fn get_file_info(&self, user: &str, src: &str) -> Result<Option<HdfsFileStatusProto>> {
        if reserved::is_exact_reserved(src) {
            return Ok(Some(reserved_dir_status()));
        }
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_file_info(user, &sp);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
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
        if reserved::is_exact_reserved(src) {
            return Ok(Some(self.reserved_listing()));
        }
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_listing_of(user, &sp, start_after, need_location);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        let node = st.ns.get(id).expect("resolved");
        let pool = &self.storage.block_pool_id;
        let Some(children) = node.children() else {
            let status = st.file_status(node, Bytes::new(), need_location, pool);
            return Ok(Some(DirectoryListingProto {
                partial_listing: vec![status],
                remaining_entries: 0,
            }));
        };
        self.permissions.check(&st.ns, user, id, Access::Read)?;
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

    pub fn get_block_locations(
        &self,
        user: &str,
        src: &str,
        offset: u64,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_block_locations(user, &sp, src, offset, length);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let Some(id) = st.ns.resolve(src)? else {
            return Ok(None);
        };
        self.permissions.check(&st.ns, user, id, Access::Read)?;
        self.check_unreadable_by_superuser(&st, user, id)?;
        let node = st.ns.get(id).expect("resolved");
        if node.is_dir() {
            return Err(NameNodeError::NotAFile {
                path: src.to_string(),
            });
        }
        let mut located = st.located_blocks(node, offset, length, &self.storage.block_pool_id);
        drop(st);
        self.set_read_tokens(&mut located, user);
        Ok(Some(located))
    }

    pub fn content_summary(&self, user: &str, src: &str) -> Result<ContentSummaryProto> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        if let Some(sp) = SnapshotPath::parse(src)? {
            return self.snapshot_content_summary(user, &sp, src);
        }
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let id = st.ns.lookup(src)?.id;
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
            file_buffer_size: self.options.file_buffer_size,
            encrypt_data_transfer: Some(false),
            // Whole minutes, as HDFS's long; a shorter interval is still "on".
            trash_interval: Some(self.options.trash_interval.as_secs().div_ceil(60)),
            checksum_type: Some(tusk_proto::hdfs::ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: None,
            policy_id: Some(0),
            snapshot_trash_root_enabled: Some(false),
        }
    }

    pub fn preferred_block_size(&self, user: &str, src: &str) -> Result<u64> {
        let src = &*self.resolved(user, src, PathUse::Read)?;
        let st = self.read();
        self.permissions.check_traverse(&st.ns, user, src)?;
        let node = st.ns.lookup(src)?;
        Ok(node
            .file()
            .map_or(self.options.block_size, |f| f.block_size))
    }
}
impl Namesystem {
    /// One scrape's figures, for `/metrics`, the pages and `/jmx`.
    pub fn metrics_snapshot(&self) -> FsnSnapshot {
        let stats = self.fs_stats();
        let st = self.read();
        let live = st.datanodes.live_count() as u64;
        let stale = st
            .datanodes
            .live()
            .filter(|i| st.datanodes.is_stale(*i))
            .count() as u64;
        FsnSnapshot {
            capacity_total: stats.capacity,
            capacity_used: stats.used,
            capacity_remaining: stats.remaining,
            files_total: st.ns.inodes.len() as u64,
            blocks_total: st.blocks.blocks.len() as u64,
            under_replicated_blocks: stats.under_replicated,
            corrupt_blocks: stats.corrupt_blocks,
            missing_blocks: stats.missing_blocks,
            pending_replication_blocks: st.blocks.pending.len() as u64,
            live_datanodes: live,
            dead_datanodes: st.datanodes.nodes.len() as u64 - live,
            stale_datanodes: stale,
            safe_mode: st.safe_mode.is_on(),
            last_written_txid: self.edit_log.last_txid(),
            txns_since_checkpoint: st.txns_since_checkpoint,
            total_load: st
                .datanodes
                .live()
                .map(|i| st.datanodes.nodes[i].xceivers as u64)
                .sum(),
        }
    }
}
