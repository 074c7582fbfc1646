//! Block access tokens on the NameNode: the key set that rolls every
//! `dfs.block.access.key.update.interval`, the token put in every located block a
//! client gets, and the keys sent to DataNodes at registration and in heartbeat replies.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use tusk_common::Shutdown;
use tusk_proto::hdfs::{LocatedBlockProto, LocatedBlocksProto, StorageTypeProto};
use tusk_proto::internal::ExportedBlockKeys;
use tusk_security::{AccessMode, BlockTokenSecretManager, TokenScope};

use super::Namesystem;
use crate::options::NameNodeOptions;

/// The NameNode's block keys; absent when tokens are off.
pub struct BlockTokens {
    /// Read to sign tokens, written only to roll.
    pub keys: RwLock<BlockTokenSecretManager>,
}

impl BlockTokens {
    /// A fresh key set (keys are never persisted: after a restart DataNodes get new
    /// ones, and keep the old ones until they expire).
    pub fn from_options(options: &NameNodeOptions) -> Option<BlockTokens> {
        options.block_access_token_enable.then(|| BlockTokens {
            keys: RwLock::new(BlockTokenSecretManager::master_of(
                options.block_access_key_update_interval,
                options.block_access_token_lifetime,
                options.block_access_token_protobuf,
                tusk_common::now_millis(),
                options
                    .ha
                    .as_ref()
                    .map_or((0, 1), crate::ha::HaOptions::index_and_count),
            )),
        })
    }

    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, BlockTokenSecretManager> {
        self.keys.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BlockTokenSecretManager> {
        self.keys.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Namesystem {
    /// Signs a read token for `user` on every block of `located`, the last included.
    pub fn set_read_tokens(&self, located: &mut LocatedBlocksProto, user: &str) {
        for lb in located.blocks.iter_mut().chain(located.last_block.as_mut()) {
            self.set_block_token(lb, user, AccessMode::Read);
        }
    }

    /// Signs a token for `lb` allowing `mode` to `user`, naming the block's locations'
    /// storages as HDFS 3 does. Does nothing when tokens are off.
    pub fn set_block_token(&self, lb: &mut LocatedBlockProto, user: &str, mode: AccessMode) {
        let Some(tokens) = &self.block_tokens else {
            return;
        };
        let storage_types: Vec<StorageTypeProto> = lb
            .storage_types
            .iter()
            .map(|t| StorageTypeProto::try_from(*t).unwrap_or(StorageTypeProto::Disk))
            .collect();
        let scope = TokenScope {
            user,
            modes: &[mode],
            storage_types: &storage_types,
            storage_ids: &lb.storage_i_ds,
        };
        let signed = tokens.read().generate(
            &lb.b.pool_id,
            lb.b.block_id,
            &scope,
            tusk_common::now_millis(),
        );
        match signed {
            Ok(token) => lb.block_token = token,
            Err(e) => tracing::error!(error = %e, "cannot sign a block token"),
        }
    }

    /// The keys for a DataNode that registers: always, when tokens are on.
    pub fn block_keys(&self) -> Option<ExportedBlockKeys> {
        self.block_tokens.as_ref().map(|t| t.read().export())
    }

    /// The keys for a DataNode's heartbeat reply: only when the newest key it holds is
    /// not the NameNode's newest (it missed a roll, or it has none). Comparing what
    /// the node holds, rather than remembering what was sent, also heals a lost reply.
    pub fn block_keys_if_newer(&self, node_newest: i32) -> Option<ExportedBlockKeys> {
        let tokens = self.block_tokens.as_ref()?;
        let keys = tokens.read();
        (keys.newest_key_id() != node_newest).then(|| keys.export())
    }

    /// Rolls the block keys now (the roller calls this every key update interval).
    pub fn roll_block_keys(&self) {
        if let Some(tokens) = &self.block_tokens {
            let mut keys = tokens.write();
            keys.roll(tusk_common::now_millis());
            tracing::info!(newest = keys.newest_key_id(), "block keys rolled");
        }
    }
}

/// Rolls the keys every key update interval (the first roll one interval after start,
/// as HDFS), until shutdown.
pub fn spawn_key_roller(fsn: Arc<Namesystem>, shutdown: Shutdown) {
    if fsn.block_tokens.is_none() {
        return;
    }
    let period = fsn
        .options
        .block_access_key_update_interval
        .max(Duration::from_millis(10));
    tokio::spawn(async move {
        let start = tokio::time::Instant::now() + period;
        let mut tick = tokio::time::interval_at(start, period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.wait() => return,
                _ = tick.tick() => fsn.roll_block_keys(),
            }
        }
    });
}
