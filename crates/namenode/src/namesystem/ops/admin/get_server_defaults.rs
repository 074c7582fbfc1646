//! `getServerDefaults` and `getPreferredBlockSize`.

use tusk_proto::hdfs::FsServerDefaultsProto;

use crate::error::Result;
use crate::namesystem::{Namesystem, PathUse};

impl Namesystem {
    pub fn server_defaults(&self) -> FsServerDefaultsProto {
        FsServerDefaultsProto {
            block_size: self.options.block_size,
            bytes_per_checksum: self.options.bytes_per_checksum,
            write_packet_size: self.options.write_packet_size,
            replication: self.options.default_replication,
            file_buffer_size: self.options.file_buffer_size,
            encrypt_data_transfer: Some(self.options.encrypt_data_transfer),
            // Whole minutes, as HDFS's long; a shorter interval is still "on".
            trash_interval: Some(self.options.trash_interval.as_secs().div_ceil(60)),
            checksum_type: Some(tusk_proto::hdfs::ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: None,
            policy_id: Some(0),
            snapshot_trash_root_enabled: Some(false),
        }
    }

    /// `getDataEncryptionKey`: under `dfs.encrypt.data.transfer` a fresh data
    /// encryption key of the current block key (HDFS's `BlockTokenSecretManager`);
    /// `None` when data transfer is not encrypted.
    pub fn data_encryption_key(&self) -> Option<tusk_proto::hdfs::DataEncryptionKeyProto> {
        if !self.options.encrypt_data_transfer {
            return None;
        }
        let tokens = self.block_tokens.as_ref()?;
        let key = tokens
            .read()
            .data_encryption_key(&self.storage.block_pool_id, tusk_common::now_millis());
        key.map_err(|e| tracing::error!(error = %e, "cannot make a data encryption key"))
            .ok()
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
