//! Block access tokens, as HDFS's `BlockTokenSecretManager`: the NameNode (the master)
//! holds a set of random HMAC-SHA1 keys that rolls every `key_update_interval`, signs a
//! token for every block it hands out, and exports the keys to the DataNodes (workers),
//! which check the token of every operation and sign the tokens of their own transfers.
//!
//! A token is `identifier` (see [`identifier`]) plus `password` = HMAC-SHA1(key named
//! by the identifier's key id, identifier bytes). The key set holds the current key
//! (signs), the next one (already known to every DataNode when it becomes current) and
//! retired ones until no token they signed can still be valid.

pub mod access_mode;
pub mod identifier;

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use sha1::Sha1;
use tusk_proto::common::TokenProto;
use tusk_proto::hdfs::StorageTypeProto;
use tusk_proto::internal;

pub use access_mode::AccessMode;
pub use identifier::BlockTokenIdentifier;

use crate::error::BlockTokenError;

/// `TokenProto.kind` of block tokens.
pub const TOKEN_KIND: &str = "HDFS_BLOCK_TOKEN";

/// Key length in bytes: what Java's HmacSHA1 key generator makes, as HDFS uses.
const KEY_LEN: usize = 64;

/// Key ids keep the low 26 bits of a serial number (HDFS leaves the high bits to name
/// one of several NameNodes; Tusk has one).
const KEY_ID_MASK: i32 = (1 << 26) - 1;

type HmacSha1 = Hmac<Sha1>;

/// One signing key.
#[derive(Clone, PartialEq, Eq)]
pub struct BlockKey {
    pub key_id: i32,
    /// Milliseconds since the epoch; the key is dropped after it.
    pub expiry_date: u64,
    pub key: Bytes,
}

impl std::fmt::Debug for BlockKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key bytes stay out of logs.
        f.debug_struct("BlockKey")
            .field("key_id", &self.key_id)
            .field("expiry_date", &self.expiry_date)
            .finish_non_exhaustive()
    }
}

impl BlockKey {
    fn to_proto(&self) -> internal::BlockKey {
        internal::BlockKey {
            key_id: self.key_id,
            expiry_date: self.expiry_date,
            key_bytes: self.key.clone(),
        }
    }

    fn from_proto(p: &internal::BlockKey) -> BlockKey {
        BlockKey {
            key_id: p.key_id,
            expiry_date: p.expiry_date,
            key: p.key_bytes.clone(),
        }
    }

    fn sign(&self, identifier: &[u8]) -> HmacSha1 {
        let mut mac = HmacSha1::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(identifier);
        mac
    }
}

/// What a new token names besides its block.
#[derive(Clone, Debug, Default)]
pub struct TokenScope<'a> {
    /// The user the token is issued to (HDFS: the caller's short user name).
    pub user: &'a str,
    pub modes: &'a [AccessMode],
    /// The block's locations' storage types and ids, as HDFS 3 lists them.
    pub storage_types: &'a [StorageTypeProto],
    pub storage_ids: &'a [String],
}

/// A block key set and the tokens made and checked with it. The NameNode's (`master`)
/// makes and rolls keys; a DataNode's (`worker`) only takes in what the NameNode sends.
/// Times are milliseconds since the epoch, passed in so tests can move the clock.
#[derive(Debug)]
pub struct BlockTokenSecretManager {
    master: bool,
    key_update_interval_ms: u64,
    token_lifetime_ms: u64,
    /// Layout of the identifiers this side makes: protobuf or (Hadoop's default) legacy.
    protobuf: bool,
    /// The id of the last key made (master).
    serial: i32,
    /// Master: key ids are made in `[range_start, range_start + range_len)`. HA
    /// NameNodes each make keys from their own range (HDFS's `nnIndex`), so a DataNode
    /// holding every NameNode's keys never finds two under one id.
    range_start: i32,
    range_len: i32,
    current: Option<BlockKey>,
    /// The key after `current` (master).
    next: Option<BlockKey>,
    /// Every key a valid token may name, by id.
    all: HashMap<i32, BlockKey>,
    /// Worker: the id of the newest key of the last set taken in.
    newest: i32,
}

impl BlockTokenSecretManager {
    /// The NameNode's: a current and a next key, made now.
    pub fn master(
        key_update_interval: Duration,
        token_lifetime: Duration,
        protobuf: bool,
        now: u64,
    ) -> Self {
        Self::master_of(key_update_interval, token_lifetime, protobuf, now, (0, 1))
    }

    /// The master of NameNode `index` of `count` in an HA nameservice: its key ids come
    /// from the `index`-th of `count` equal ranges.
    pub fn master_of(
        key_update_interval: Duration,
        token_lifetime: Duration,
        protobuf: bool,
        now: u64,
        (index, count): (usize, usize),
    ) -> Self {
        let count = count.max(1) as i32;
        let range_len = (KEY_ID_MASK + 1) / count;
        let range_start = range_len * (index as i32).min(count - 1);
        let mut m = BlockTokenSecretManager {
            master: true,
            key_update_interval_ms: key_update_interval.as_millis() as u64,
            token_lifetime_ms: token_lifetime.as_millis() as u64,
            protobuf,
            serial: range_start + rand::thread_rng().gen_range(0..range_len),
            range_start,
            range_len,
            current: None,
            next: None,
            all: HashMap::new(),
            newest: 0,
        };
        // As HDFS, each key's expiry is estimated so that a DataNode can drop it even if
        // the NameNode never says more: the current key signs for one interval and its
        // tokens live one lifetime; one more interval covers nodes that sync late.
        let current = m.make_key(now + 2 * m.key_update_interval_ms + m.token_lifetime_ms);
        let next = m.make_key(now + 3 * m.key_update_interval_ms + m.token_lifetime_ms);
        m.install(current.clone());
        m.install(next.clone());
        m.current = Some(current);
        m.next = Some(next);
        m
    }

    /// A DataNode's: no keys until the NameNode sends some.
    pub fn worker() -> Self {
        BlockTokenSecretManager {
            master: false,
            key_update_interval_ms: 0,
            token_lifetime_ms: 0,
            protobuf: false,
            serial: 0,
            range_start: 0,
            range_len: KEY_ID_MASK + 1,
            current: None,
            next: None,
            all: HashMap::new(),
            newest: 0,
        }
    }

    pub fn token_lifetime(&self) -> Duration {
        Duration::from_millis(self.token_lifetime_ms)
    }

    pub fn key_update_interval(&self) -> Duration {
        Duration::from_millis(self.key_update_interval_ms)
    }

    fn make_key(&mut self, expiry_date: u64) -> BlockKey {
        self.serial = self.range_start + (self.serial - self.range_start + 1) % self.range_len;
        let mut key = vec![0u8; KEY_LEN];
        rand::thread_rng().fill_bytes(&mut key);
        BlockKey {
            key_id: self.serial,
            expiry_date,
            key: key.into(),
        }
    }

    fn install(&mut self, key: BlockKey) {
        self.all.insert(key.key_id, key);
    }

    fn remove_expired(&mut self, now: u64) {
        self.all.retain(|_, k| k.expiry_date >= now);
    }

    /// Master: the next key becomes current, a new next key is made, and the retiring
    /// key stays for one more interval plus a token lifetime (what its last tokens need).
    pub fn roll(&mut self, now: u64) {
        if !self.master {
            return;
        }
        self.remove_expired(now);
        let (interval, lifetime) = (self.key_update_interval_ms, self.token_lifetime_ms);
        if let Some(mut retiring) = self.current.take() {
            retiring.expiry_date = now + interval + lifetime;
            self.install(retiring);
        }
        let mut current = self.next.take().expect("a master always has a next key");
        current.expiry_date = now + 2 * interval + lifetime;
        self.install(current.clone());
        self.current = Some(current);
        let next = self.make_key(now + 3 * interval + lifetime);
        self.install(next.clone());
        self.next = Some(next);
    }

    /// The id of the newest key: the master's next key, or the newest key of the set a
    /// worker last took in (0 when it has none). Equal ids mean the worker is up to date.
    pub fn newest_key_id(&self) -> i32 {
        match &self.next {
            Some(next) => next.key_id,
            None => self.newest,
        }
    }

    /// Master: the keys for DataNodes.
    pub fn export(&self) -> internal::ExportedBlockKeys {
        let mut all: Vec<&BlockKey> = self.all.values().collect();
        all.sort_by_key(|k| k.key_id);
        internal::ExportedBlockKeys {
            enabled: true,
            key_update_interval_ms: self.key_update_interval_ms,
            token_lifetime_ms: self.token_lifetime_ms,
            current: self.current.as_ref().map(BlockKey::to_proto),
            all: all.into_iter().map(BlockKey::to_proto).collect(),
        }
    }

    /// Worker: takes in the NameNode's keys. Keys already held stay until they expire,
    /// so tokens signed before a NameNode restart stay valid for their lifetime.
    pub fn import(&mut self, keys: &internal::ExportedBlockKeys, now: u64) {
        if self.master {
            return;
        }
        self.remove_expired(now);
        self.key_update_interval_ms = keys.key_update_interval_ms;
        self.token_lifetime_ms = keys.token_lifetime_ms;
        for k in &keys.all {
            self.install(BlockKey::from_proto(k));
        }
        if let Some(current) = &keys.current {
            let current = BlockKey::from_proto(current);
            self.install(current.clone());
            self.current = Some(current);
        }
        self.newest = keys
            .all
            .iter()
            .chain(keys.current.as_ref())
            .max_by_key(|k| k.expiry_date)
            .map_or(0, |k| k.key_id);
    }

    /// Ids of the keys held, sorted.
    pub fn key_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = self.all.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// A token for `block_id` of `pool`, valid for one token lifetime from `now`.
    pub fn generate(
        &self,
        pool: &str,
        block_id: u64,
        scope: &TokenScope<'_>,
        now: u64,
    ) -> Result<TokenProto, BlockTokenError> {
        let key = self.current.as_ref().ok_or(BlockTokenError::NoKeys)?;
        let mut modes = scope.modes.to_vec();
        modes.sort();
        modes.dedup();
        let id = BlockTokenIdentifier {
            expiry_date: now + self.token_lifetime_ms,
            key_id: key.key_id,
            user_id: scope.user.to_string(),
            block_pool_id: pool.to_string(),
            block_id,
            modes,
            storage_types: scope.storage_types.to_vec(),
            storage_ids: scope.storage_ids.to_vec(),
            handshake_msg: vec![],
        };
        let identifier = if self.protobuf {
            id.encode_protobuf()
        } else {
            id.encode_legacy()
        };
        let password = key.sign(&identifier).finalize().into_bytes().to_vec();
        Ok(TokenProto {
            identifier: identifier.into(),
            password: password.into(),
            kind: TOKEN_KIND.to_string(),
            service: String::new(),
        })
    }

    /// A data encryption key (HDFS's `dfs.encrypt.data.transfer`) for `pool`: a random
    /// nonce and its HMAC-SHA1 under the current key, good for a token lifetime. A
    /// DataNode holding the same keys recomputes it from the key id and the nonce.
    pub fn data_encryption_key(
        &self,
        pool: &str,
        now: u64,
    ) -> Result<tusk_proto::hdfs::DataEncryptionKeyProto, BlockTokenError> {
        let key = self.current.as_ref().ok_or(BlockTokenError::NoKeys)?;
        let mut nonce = [0u8; 8];
        rand::thread_rng().fill_bytes(&mut nonce);
        Ok(tusk_proto::hdfs::DataEncryptionKeyProto {
            key_id: key.key_id as u32,
            block_pool_id: pool.to_string(),
            nonce: Bytes::copy_from_slice(&nonce),
            encryption_key: key.sign(&nonce).finalize().into_bytes().to_vec().into(),
            expiry_date: now + self.token_lifetime_ms,
            encryption_algorithm: None,
        })
    }

    /// The encryption key of `nonce` under key `key_id`, as a DataNode recomputes a
    /// data encryption key a client names.
    pub fn encryption_key(&self, key_id: i32, nonce: &[u8]) -> Result<Vec<u8>, BlockTokenError> {
        let key = self
            .all
            .get(&key_id)
            .ok_or(BlockTokenError::UnknownEncryptionKey { key_id })?;
        Ok(key.sign(nonce).finalize().into_bytes().to_vec())
    }

    /// The password a valid identifier must come with (for the SASL handshake, where
    /// the client proves it holds it without sending it).
    pub fn password(&self, identifier: &[u8], now: u64) -> Result<Vec<u8>, BlockTokenError> {
        let id = BlockTokenIdentifier::decode(identifier)?;
        let key = self.key_for(&id)?;
        if now > id.expiry_date {
            return Err(BlockTokenError::Expired {
                token: describe(&id),
            });
        }
        Ok(key.sign(identifier).finalize().into_bytes().to_vec())
    }

    fn key_for(&self, id: &BlockTokenIdentifier) -> Result<&BlockKey, BlockTokenError> {
        if self.all.is_empty() {
            return Err(BlockTokenError::NoKeys);
        }
        self.all
            .get(&id.key_id)
            .ok_or_else(|| BlockTokenError::UnknownKey {
                token: describe(id),
                key_id: id.key_id,
            })
    }

    /// HDFS's `checkAccess`: the token is signed by a known key, not expired, for this
    /// block of this pool, and allows `mode`. Returns the identifier (for its user).
    pub fn check(
        &self,
        token: Option<&TokenProto>,
        pool: &str,
        block_id: u64,
        mode: AccessMode,
        now: u64,
    ) -> Result<BlockTokenIdentifier, BlockTokenError> {
        let token = token
            .filter(|t| !t.identifier.is_empty())
            .ok_or(BlockTokenError::Missing)?;
        let id = BlockTokenIdentifier::decode(&token.identifier)?;
        let key = self.key_for(&id)?;
        if key
            .sign(&token.identifier)
            .verify_slice(&token.password)
            .is_err()
        {
            return Err(BlockTokenError::BadPassword {
                token: describe(&id),
            });
        }
        if now > id.expiry_date {
            return Err(BlockTokenError::Expired {
                token: describe(&id),
            });
        }
        if id.block_pool_id != pool || id.block_id != block_id {
            return Err(BlockTokenError::WrongBlock {
                token: describe(&id),
                pool: pool.to_string(),
                block: block_id,
            });
        }
        if !id.allows(mode) {
            return Err(BlockTokenError::MissingMode {
                token: describe(&id),
                mode,
            });
        }
        Ok(id)
    }
}

/// HDFS's `BlockTokenIdentifier.toString`, for error messages.
pub fn describe(id: &BlockTokenIdentifier) -> String {
    let modes: Vec<&str> = id.modes.iter().map(|m| m.name()).collect();
    format!(
        "block_token_identifier (expiryDate={}, keyId={}, userId={}, blockPoolId={}, blockId={}, access modes=[{}])",
        id.expiry_date,
        id.key_id,
        id.user_id,
        id.block_pool_id,
        id.block_id,
        modes.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    fn nn(now: u64) -> BlockTokenSecretManager {
        BlockTokenSecretManager::master(
            Duration::from_millis(10 * MIN),
            Duration::from_millis(10 * MIN),
            false,
            now,
        )
    }

    fn read_scope() -> TokenScope<'static> {
        TokenScope {
            user: "alice",
            modes: &[AccessMode::Read],
            ..Default::default()
        }
    }

    #[test]
    fn ha_namenodes_make_key_ids_from_disjoint_ranges() {
        let hour = Duration::from_secs(3600);
        let ids = |index| {
            let mut m = BlockTokenSecretManager::master_of(hour, hour, false, 0, (index, 3));
            let mut ids = vec![m.newest_key_id()];
            for i in 1..2000 {
                m.roll(i * 1000);
                ids.push(m.newest_key_id());
            }
            ids
        };
        let range = (KEY_ID_MASK + 1) / 3;
        for index in 0..3 {
            let start = range * index as i32;
            assert!(
                ids(index)
                    .iter()
                    .all(|id| (start..start + range).contains(id)),
                "NameNode {index}'s keys stay in its range"
            );
        }
    }

    #[test]
    fn a_datanode_accepts_what_the_namenode_signs_and_nothing_else() {
        let now = 1_000_000;
        let master = nn(now);
        let mut dn = BlockTokenSecretManager::worker();
        let token = master.generate("BP-1", 7, &read_scope(), now).unwrap();
        assert_eq!(
            dn.check(Some(&token), "BP-1", 7, AccessMode::Read, now),
            Err(BlockTokenError::NoKeys)
        );
        dn.import(&master.export(), now);
        assert_eq!(dn.newest_key_id(), master.newest_key_id());
        let id = dn
            .check(Some(&token), "BP-1", 7, AccessMode::Read, now)
            .unwrap();
        assert_eq!(id.user_id, "alice");
        assert_eq!(token.password.len(), 20, "HMAC-SHA1");

        let refused = |t: Option<&TokenProto>, block, mode, at| {
            dn.check(t, "BP-1", block, mode, at).unwrap_err()
        };
        assert_eq!(
            refused(None, 7, AccessMode::Read, now),
            BlockTokenError::Missing
        );
        let mut forged = token.clone();
        let mut pw = forged.password.to_vec();
        pw[0] ^= 1;
        forged.password = pw.into();
        assert!(matches!(
            refused(Some(&forged), 7, AccessMode::Read, now),
            BlockTokenError::BadPassword { .. }
        ));
        assert!(matches!(
            refused(Some(&token), 8, AccessMode::Read, now),
            BlockTokenError::WrongBlock { .. }
        ));
        assert!(matches!(
            refused(Some(&token), 7, AccessMode::Write, now),
            BlockTokenError::MissingMode { .. }
        ));
        assert!(matches!(
            refused(Some(&token), 7, AccessMode::Read, now + 10 * MIN + 1),
            BlockTokenError::Expired { .. }
        ));
        // Changing the identifier (here: the block id) breaks the HMAC.
        let mut id = BlockTokenIdentifier::decode(&token.identifier).unwrap();
        id.block_id = 8;
        let mut moved = token.clone();
        moved.identifier = id.encode_legacy().into();
        assert!(matches!(
            refused(Some(&moved), 8, AccessMode::Read, now),
            BlockTokenError::BadPassword { .. }
        ));
    }

    #[test]
    fn tokens_outlive_key_rolls_and_old_keys_go_in_time() {
        let t0 = 1_000_000;
        let mut master = nn(t0);
        let mut dn = BlockTokenSecretManager::worker();
        dn.import(&master.export(), t0);
        let early = master.generate("BP", 1, &read_scope(), t0).unwrap();
        let first_key = BlockTokenIdentifier::decode(&early.identifier)
            .unwrap()
            .key_id;

        // One roll: the DataNode already knew the new current key as "next", so tokens
        // it signs are accepted even before it hears of the roll.
        let t1 = t0 + 10 * MIN;
        master.roll(t1);
        let fresh = master.generate("BP", 1, &read_scope(), t1).unwrap();
        assert!(dn
            .check(Some(&fresh), "BP", 1, AccessMode::Read, t1)
            .is_ok());
        assert_ne!(
            dn.newest_key_id(),
            master.newest_key_id(),
            "needs an update"
        );
        dn.import(&master.export(), t1);
        assert_eq!(dn.newest_key_id(), master.newest_key_id());
        assert!(dn
            .check(Some(&early), "BP", 1, AccessMode::Read, t1)
            .is_ok());

        // Two more rolls later the first key has expired everywhere.
        let t3 = t1 + 25 * MIN;
        master.roll(t1 + 10 * MIN);
        master.roll(t3);
        dn.import(&master.export(), t3);
        assert!(!master.key_ids().contains(&first_key));
        assert!(!dn.key_ids().contains(&first_key));
        assert!(master.key_ids().len() <= 4, "{:?}", master.key_ids());
    }

    #[test]
    fn the_password_for_sasl_is_the_tokens() {
        let now = 5_000;
        let master = nn(now);
        let mut dn = BlockTokenSecretManager::worker();
        dn.import(&master.export(), now);
        let token = master.generate("BP", 3, &read_scope(), now).unwrap();
        assert_eq!(
            dn.password(&token.identifier, now).unwrap(),
            token.password.to_vec()
        );
        assert!(dn.password(&token.identifier, now + 11 * MIN).is_err());
    }
}
