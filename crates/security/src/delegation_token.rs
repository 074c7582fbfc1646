//! HDFS's delegation tokens (`HDFS_DELEGATION_TOKEN`) and their secret manager, as
//! Hadoop's `AbstractDelegationTokenSecretManager` makes, renews, cancels and checks
//! them.
//!
//! The identifier is `AbstractDelegationTokenIdentifier.write`'s layout: a version byte
//! (0), then `owner`, `renewer` and `realUser` as `Text`, `issueDate` and `maxDate` as
//! vlongs and `sequenceNumber` and `masterKeyId` as vints. The password is HMAC-SHA1 of
//! those bytes with the master key the identifier names. A token lives until its renew
//! date (`dfs.namenode.delegation.token.renew-interval` after issue or after its last
//! renewal, never past `maxDate`, `…max-lifetime` after issue); master keys roll every
//! `dfs.namenode.delegation.key.update-interval` and a key is kept while a token it signed
//! can still live.
//!
//! The manager keeps what a NameNode must persist (keys, tokens with their renew dates,
//! the counters) and hands it out with [`DelegationTokenSecretManager::state`] and takes
//! it back with [`DelegationTokenSecretManager::restore`]; every change it makes returns
//! the record the caller logs.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use hmac::{Hmac, Mac};
use rand::{Rng, RngCore};
use sha1::Sha1;
use thiserror::Error;
use tusk_proto::common::TokenProto;

use crate::error::{InvalidToken, WritableError};
use crate::token_authority::{TokenAuthority, TokenGrant};
use crate::writable::{
    read_text, read_token, read_vint, read_vlong, take, write_text, write_token, write_vint,
    write_vlong,
};

/// `DelegationTokenIdentifier.HDFS_DELEGATION_KIND`.
pub const HDFS_DELEGATION_KIND: &str = "HDFS_DELEGATION_TOKEN";

/// `AbstractDelegationTokenIdentifier.VERSION`.
const VERSION: u8 = 0;

/// What Java's HmacSHA1 key generator makes.
const KEY_LEN: usize = 64;

/// A delegation token's identifier.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DelegationTokenIdentifier {
    /// Who the token acts as (a principal's full name under Kerberos).
    pub owner: String,
    /// Who may renew it (a short name: the job's ResourceManager user).
    pub renewer: String,
    /// The proxy's real user when the owner is impersonated; empty otherwise.
    pub real_user: String,
    /// Milliseconds since the epoch.
    pub issue_date: i64,
    /// The token cannot be renewed past this (milliseconds since the epoch).
    pub max_date: i64,
    pub sequence_number: i32,
    pub master_key_id: i32,
}

impl DelegationTokenIdentifier {
    /// The identifier's bytes, as Hadoop writes them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![VERSION];
        write_text(&mut out, &self.owner);
        write_text(&mut out, &self.renewer);
        write_text(&mut out, &self.real_user);
        write_vlong(&mut out, self.issue_date);
        write_vlong(&mut out, self.max_date);
        write_vint(&mut out, self.sequence_number);
        write_vint(&mut out, self.master_key_id);
        out
    }

    /// Reads an identifier; trailing bytes are refused.
    pub fn parse(bytes: &[u8]) -> Result<Self, WritableError> {
        let mut r = bytes;
        let version = take(&mut r, 1)?[0];
        if version != VERSION {
            return Err(WritableError::new(format!(
                "Unknown version of delegation token {version}"
            )));
        }
        let id = DelegationTokenIdentifier {
            owner: read_text(&mut r)?,
            renewer: read_text(&mut r)?,
            real_user: read_text(&mut r)?,
            issue_date: read_vlong(&mut r)?,
            max_date: read_vlong(&mut r)?,
            sequence_number: read_vint(&mut r)?,
            master_key_id: read_vint(&mut r)?,
        };
        if !r.is_empty() {
            return Err(WritableError::new(format!(
                "{} bytes after the delegation token identifier",
                r.len()
            )));
        }
        Ok(id)
    }

    /// The user a connection authenticated with the token runs as: the owner.
    pub fn user(&self) -> &str {
        &self.owner
    }
}

impl std::fmt::Display for DelegationTokenIdentifier {
    /// `AbstractDelegationTokenIdentifier.toString()`, as Hadoop's messages name a
    /// token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "token for {}: {HDFS_DELEGATION_KIND} owner={}, renewer={}, realUser={}, issueDate={}, maxDate={}, sequenceNumber={}, masterKeyId={}",
            self.owner,
            self.owner,
            self.renewer,
            self.real_user,
            self.issue_date,
            self.max_date,
            self.sequence_number,
            self.master_key_id
        )
    }
}

/// A master key (`DelegationKey`): its id, the time after which no token it signed
/// can live, and its bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct DelegationKey {
    pub key_id: i32,
    pub expiry_date: i64,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for DelegationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key bytes stay out of logs.
        f.debug_struct("DelegationKey")
            .field("key_id", &self.key_id)
            .field("expiry_date", &self.expiry_date)
            .finish_non_exhaustive()
    }
}

impl DelegationKey {
    fn password(&self, identifier: &[u8]) -> Vec<u8> {
        let mut mac = Hmac::<Sha1>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(identifier);
        mac.finalize().into_bytes().to_vec()
    }
}

/// The lifetimes (`dfs.namenode.delegation.*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DelegationTokenOptions {
    /// `dfs.namenode.delegation.key.update-interval` (1 day).
    pub key_update_interval: Duration,
    /// `dfs.namenode.delegation.token.max-lifetime` (7 days).
    pub max_lifetime: Duration,
    /// `dfs.namenode.delegation.token.renew-interval` (1 day).
    pub renew_interval: Duration,
}

impl Default for DelegationTokenOptions {
    fn default() -> Self {
        const DAY: Duration = Duration::from_secs(24 * 3600);
        DelegationTokenOptions {
            key_update_interval: DAY,
            max_lifetime: 7 * DAY,
            renew_interval: DAY,
        }
    }
}

/// Why a delegation token call was refused: Hadoop's `SecretManager.InvalidToken` or
/// `AccessControlException`, with Hadoop's messages.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum DelegationTokenError {
    #[error(transparent)]
    Invalid(#[from] InvalidToken),
    #[error("{0}")]
    AccessControl(String),
}

/// What a NameNode persists: HDFS's edit log records these as
/// `OP_UPDATE_MASTER_KEY`, `OP_GET_DELEGATION_TOKEN`, `OP_RENEW_DELEGATION_TOKEN` and
/// `OP_CANCEL_DELEGATION_TOKEN`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DelegationTokenChange {
    MasterKey(DelegationKey),
    Issued {
        id: DelegationTokenIdentifier,
        renew_date: i64,
    },
    Renewed {
        id: DelegationTokenIdentifier,
        renew_date: i64,
    },
    Cancelled(DelegationTokenIdentifier),
}

/// Everything the manager holds, for the image.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelegationTokenState {
    pub keys: Vec<DelegationKey>,
    /// Each live token with its renew date.
    pub tokens: Vec<(DelegationTokenIdentifier, i64)>,
    pub current_key_id: i32,
    pub sequence_number: i32,
}

#[derive(Debug, Default)]
struct Inner {
    keys: BTreeMap<i32, DelegationKey>,
    current_key_id: i32,
    /// The id of the next key made.
    key_serial: i32,
    sequence_number: i32,
    /// Live tokens: renew date and password.
    tokens: HashMap<DelegationTokenIdentifier, (i64, Vec<u8>)>,
}

/// The NameNode's delegation token secret manager.
#[derive(Debug)]
pub struct DelegationTokenSecretManager {
    options: DelegationTokenOptions,
    inner: Mutex<Inner>,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl DelegationTokenSecretManager {
    /// A manager without keys; [`roll_master_key`](Self::roll_master_key) makes the
    /// first (a NameNode does so once it has loaded what it persisted).
    pub fn new(options: DelegationTokenOptions) -> Self {
        DelegationTokenSecretManager {
            options,
            inner: Mutex::new(Inner {
                key_serial: rand::thread_rng().gen_range(0..i32::MAX / 2),
                ..Inner::default()
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new signing key (the old ones keep verifying until they expire), to apply.
    pub fn roll_master_key(&self, now: i64) -> DelegationTokenChange {
        let inner = self.lock();
        let mut bytes = vec![0u8; KEY_LEN];
        rand::thread_rng().fill_bytes(&mut bytes);
        DelegationTokenChange::MasterKey(DelegationKey {
            key_id: inner.key_serial,
            expiry_date: now + ms(self.options.key_update_interval) + ms(self.options.max_lifetime),
            bytes,
        })
    }

    /// Whether the signing key is older than the update interval (or missing).
    pub fn needs_new_key(&self, now: i64) -> bool {
        let inner = self.lock();
        inner
            .keys
            .get(&inner.current_key_id)
            .is_none_or(|k| k.expiry_date - ms(self.options.max_lifetime) <= now)
    }

    /// A new token for `owner`, renewable by `renewer`: the token (kind set, service
    /// left to the caller) and the change that makes it valid once applied.
    pub fn create_token(
        &self,
        owner: &str,
        renewer: &str,
        real_user: &str,
        now: i64,
    ) -> Result<(TokenProto, DelegationTokenChange), DelegationTokenError> {
        let inner = self.lock();
        let key = inner
            .keys
            .get(&inner.current_key_id)
            .cloned()
            .ok_or_else(|| InvalidToken::new("no delegation token master key yet"))?;
        let id = DelegationTokenIdentifier {
            owner: owner.into(),
            renewer: renewer.into(),
            real_user: real_user.into(),
            issue_date: now,
            max_date: now + ms(self.options.max_lifetime),
            sequence_number: inner.sequence_number.wrapping_add(1),
            master_key_id: key.key_id,
        };
        let identifier = id.to_bytes();
        let password = key.password(&identifier);
        let renew_date = (now + ms(self.options.renew_interval)).min(id.max_date);
        let token = TokenProto {
            identifier: identifier.into(),
            password: password.into(),
            kind: HDFS_DELEGATION_KIND.into(),
            service: String::new(),
        };
        Ok((token, DelegationTokenChange::Issued { id, renew_date }))
    }

    /// Renews `token` for `renewer` (a short name): the new expiry time and the change
    /// to apply.
    pub fn renew_token(
        &self,
        token: &TokenProto,
        renewer: &str,
        now: i64,
    ) -> Result<(i64, DelegationTokenChange), DelegationTokenError> {
        let id = parse(&token.identifier)?;
        let inner = self.lock();
        if id.max_date < now {
            return Err(InvalidToken::new(format!(
                "{renewer} tried to renew an expired token ({id}) max expiration date: {} currentTime: {now}",
                id.max_date
            ))
            .into());
        }
        if id.renewer.is_empty() {
            return Err(DelegationTokenError::AccessControl(format!(
                "{renewer} tried to renew a token ({id}) without a renewer"
            )));
        }
        if id.renewer != renewer {
            return Err(DelegationTokenError::AccessControl(format!(
                "{renewer} tries to renew a token ({id}) with non-matching renewer {}",
                id.renewer
            )));
        }
        let Some(key) = inner.keys.get(&id.master_key_id) else {
            return Err(InvalidToken::new(format!(
                "Unable to find master key for keyId={} from cache. Failed to renew an unexpired token ({id}) with sequenceNumber={}",
                id.master_key_id, id.sequence_number
            ))
            .into());
        };
        if !same_password(&key.password(&token.identifier), &token.password) {
            return Err(InvalidToken::new(format!(
                "{renewer} is trying to renew a token ({id}) with wrong password"
            ))
            .into());
        }
        if !inner.tokens.contains_key(&id) {
            return Err(
                InvalidToken::new(format!("Renewal request for unknown token ({id})")).into(),
            );
        }
        let renew_date = (now + ms(self.options.renew_interval)).min(id.max_date);
        Ok((
            renew_date,
            DelegationTokenChange::Renewed { id, renew_date },
        ))
    }

    /// Cancels `token` for `canceller` (a short name: the owner's or the renewer's): the
    /// change to apply; `owner_short` is the owner's short name as the caller maps it.
    pub fn cancel_token(
        &self,
        token: &TokenProto,
        canceller: &str,
        owner_short: impl Fn(&str) -> String,
    ) -> Result<(DelegationTokenIdentifier, DelegationTokenChange), DelegationTokenError> {
        let id = parse(&token.identifier)?;
        let inner = self.lock();
        if !inner.tokens.contains_key(&id) {
            return Err(InvalidToken::new(format!("Token not found ({id})")).into());
        }
        if canceller != owner_short(&id.owner) && canceller != id.renewer {
            return Err(DelegationTokenError::AccessControl(format!(
                "{canceller} is not authorized to cancel the token ({id})"
            )));
        }
        Ok((id.clone(), DelegationTokenChange::Cancelled(id)))
    }

    /// Drops tokens past their renew date and keys no live token can need; returns how
    /// many tokens went.
    pub fn remove_expired(&self, now: i64) -> usize {
        let mut inner = self.lock();
        let before = inner.tokens.len();
        inner.tokens.retain(|_, (renew_date, _)| *renew_date >= now);
        let current = inner.current_key_id;
        inner
            .keys
            .retain(|id, key| *id == current || key.expiry_date >= now);
        before - inner.tokens.len()
    }

    /// Applies a change (one just decided, or one replayed from the edit log).
    pub fn apply(&self, change: &DelegationTokenChange) {
        let mut inner = self.lock();
        match change {
            DelegationTokenChange::MasterKey(key) => {
                inner.key_serial = inner.key_serial.max(key.key_id.wrapping_add(1));
                inner.current_key_id = key.key_id;
                inner.keys.insert(key.key_id, key.clone());
            }
            DelegationTokenChange::Issued { id, renew_date }
            | DelegationTokenChange::Renewed { id, renew_date } => {
                inner.sequence_number = inner.sequence_number.max(id.sequence_number);
                let password = inner
                    .keys
                    .get(&id.master_key_id)
                    .map(|k| k.password(&id.to_bytes()))
                    .unwrap_or_default();
                inner.tokens.insert(id.clone(), (*renew_date, password));
            }
            DelegationTokenChange::Cancelled(id) => {
                inner.tokens.remove(id);
            }
        }
    }

    /// Everything held, for the image.
    pub fn state(&self) -> DelegationTokenState {
        let inner = self.lock();
        DelegationTokenState {
            keys: inner.keys.values().cloned().collect(),
            tokens: inner
                .tokens
                .iter()
                .map(|(id, (renew_date, _))| (id.clone(), *renew_date))
                .collect(),
            current_key_id: inner.current_key_id,
            sequence_number: inner.sequence_number,
        }
    }

    /// Takes back what [`state`](Self::state) gave (an image being loaded).
    pub fn restore(&self, state: &DelegationTokenState) {
        for key in &state.keys {
            self.apply(&DelegationTokenChange::MasterKey(key.clone()));
        }
        let mut inner = self.lock();
        inner.current_key_id = state.current_key_id;
        inner.sequence_number = inner.sequence_number.max(state.sequence_number);
        drop(inner);
        for (id, renew_date) in &state.tokens {
            self.apply(&DelegationTokenChange::Issued {
                id: id.clone(),
                renew_date: *renew_date,
            });
        }
    }

    /// Checks `identifier` at `now` (`retrievePassword`): its password and owner.
    pub fn verify(&self, identifier: &[u8], now: i64) -> Result<TokenGrant, InvalidToken> {
        let id = DelegationTokenIdentifier::parse(identifier).map_err(|e| {
            InvalidToken::new(format!(
                "Unable to de-serialize delegation token identifier: {e}"
            ))
        })?;
        let inner = self.lock();
        let Some((renew_date, password)) = inner.tokens.get(&id) else {
            return Err(InvalidToken::new(format!(
                "token ({id}) can't be found in cache"
            )));
        };
        if *renew_date < now {
            return Err(InvalidToken::new(format!(
                "token ({id}) is expired, current time: {now} expected renewal time: {renew_date}"
            )));
        }
        Ok(TokenGrant {
            password: password.clone(),
            user: id.owner.clone(),
        })
    }
}

impl TokenAuthority for DelegationTokenSecretManager {
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, ms);
        self.verify(identifier, now)
    }
}

/// `Token.encodeToUrlString`: the token's `Writable` bytes in URL-safe base64, as
/// WebHDFS's `delegation=` parameter carries it.
pub fn encode_url(token: &TokenProto) -> String {
    use base64::Engine;
    let mut bytes = Vec::new();
    write_token(&mut bytes, token);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `Token.decodeFromUrlString` (padded or not).
pub fn decode_url(text: &str) -> Result<TokenProto, WritableError> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|e| WritableError::new(format!("not a URL-safe base64 token: {e}")))?;
    let mut r = &bytes[..];
    let token = read_token(&mut r)?;
    if !r.is_empty() {
        return Err(WritableError::new("bytes after the token"));
    }
    Ok(token)
}

/// `TokenIdentifier.getTrackingId`: the MD5 of a token's identifier bytes in lower-case
/// hex, which the audit log names a token by without revealing it.
pub fn tracking_id(identifier: &[u8]) -> String {
    use md5::{Digest, Md5};
    Md5::digest(identifier)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse(identifier: &Bytes) -> Result<DelegationTokenIdentifier, DelegationTokenError> {
    DelegationTokenIdentifier::parse(identifier).map_err(|e| {
        InvalidToken::new(format!(
            "Unable to de-serialize delegation token identifier: {e}"
        ))
        .into()
    })
}

/// Password comparison in constant time.
fn same_password(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;

    fn manager() -> DelegationTokenSecretManager {
        let m = DelegationTokenSecretManager::new(DelegationTokenOptions::default());
        m.apply(&m.roll_master_key(0));
        m
    }

    /// Makes a token and applies its change.
    fn issue(m: &DelegationTokenSecretManager, owner: &str, renewer: &str, now: i64) -> TokenProto {
        let (token, change) = m.create_token(owner, renewer, "", now).unwrap();
        m.apply(&change);
        token
    }

    #[test]
    fn an_identifier_reads_back_and_keeps_hadoops_layout() {
        let id = DelegationTokenIdentifier {
            owner: "alice@EXAMPLE.COM".into(),
            renewer: "yarn".into(),
            real_user: String::new(),
            issue_date: 1_700_000_000_000,
            max_date: 1_700_604_800_000,
            sequence_number: 7,
            master_key_id: 3,
        };
        let bytes = id.to_bytes();
        // Version 0, then `owner` as Text: a vint length and the bytes.
        assert_eq!(&bytes[..2], &[0, 17]);
        assert_eq!(&bytes[2..19], b"alice@EXAMPLE.COM");
        assert_eq!(DelegationTokenIdentifier::parse(&bytes).unwrap(), id);
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(DelegationTokenIdentifier::parse(&longer).is_err());
        assert!(DelegationTokenIdentifier::parse(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn a_token_goes_through_a_url_and_back() {
        let m = manager();
        let token = TokenProto {
            service: "127.0.0.1:8020".into(),
            ..issue(&m, "alice", "yarn", 0)
        };
        let text = encode_url(&token);
        assert!(text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(decode_url(&text).unwrap(), token);
        assert!(decode_url("not a token!").is_err());
        assert!(decode_url(&format!("{text}AAAA")).is_err());
    }

    #[test]
    fn a_token_verifies_until_its_renew_date_and_renewal_moves_it() {
        let m = manager();
        let token = issue(&m, "alice", "yarn", 0);
        assert_eq!(token.kind, HDFS_DELEGATION_KIND);
        let grant = m.verify(&token.identifier, HOUR).unwrap();
        assert_eq!(grant.user, "alice");
        assert_eq!(grant.password, token.password.to_vec());
        let day = 24 * HOUR;
        assert!(m.verify(&token.identifier, day + 1).is_err());
        let (expiry, renewed) = m.renew_token(&token, "yarn", day - 1).unwrap();
        assert_eq!(expiry, 2 * day - 1);
        assert!(
            m.verify(&token.identifier, day + 1).is_err(),
            "not before it is applied"
        );
        m.apply(&renewed);
        assert!(m.verify(&token.identifier, day + 1).is_ok());
        // Never past the maximum lifetime.
        let (expiry, _) = m.renew_token(&token, "yarn", 6 * day + HOUR).unwrap();
        assert_eq!(expiry, 7 * day);
    }

    #[test]
    fn only_the_renewer_renews_and_a_forged_password_is_refused() {
        let m = manager();
        let token = issue(&m, "alice", "yarn", 0);
        match m.renew_token(&token, "mallory", 1) {
            Err(DelegationTokenError::AccessControl(msg)) => {
                assert!(msg.contains("with non-matching renewer yarn"), "{msg}")
            }
            other => panic!("{other:?}"),
        }
        let mut forged = token.clone();
        forged.password = vec![0u8; 20].into();
        assert!(matches!(
            m.renew_token(&forged, "yarn", 1),
            Err(DelegationTokenError::Invalid(e)) if e.message.contains("wrong password")
        ));
        let no_renewer = issue(&m, "alice", "", 0);
        assert!(matches!(
            m.renew_token(&no_renewer, "yarn", 1),
            Err(DelegationTokenError::AccessControl(_))
        ));
    }

    #[test]
    fn a_cancelled_token_is_refused_and_only_owner_or_renewer_cancel() {
        let m = manager();
        let token = issue(&m, "alice@EXAMPLE.COM", "yarn", 0);
        let short = |owner: &str| owner.split('@').next().unwrap_or(owner).to_string();
        assert!(matches!(
            m.cancel_token(&token, "bob", short),
            Err(DelegationTokenError::AccessControl(_))
        ));
        m.apply(&m.cancel_token(&token, "alice", short).unwrap().1);
        let refused = m.verify(&token.identifier, 1).unwrap_err();
        assert!(
            refused.message.contains("can't be found in cache"),
            "{refused}"
        );
        assert!(matches!(
            m.cancel_token(&token, "alice", short),
            Err(DelegationTokenError::Invalid(e)) if e.message.starts_with("Token not found")
        ));
    }

    #[test]
    fn replayed_changes_and_a_restored_state_keep_tokens_valid() {
        let m = DelegationTokenSecretManager::new(DelegationTokenOptions::default());
        let mut log = Vec::new();
        let mut record = |change: DelegationTokenChange| {
            m.apply(&change);
            log.push(change);
        };
        record(m.roll_master_key(5));
        let (token, issued) = m.create_token("alice", "yarn", "", 10).unwrap();
        record(issued);
        let (gone, issued) = m.create_token("bob", "yarn", "", 11).unwrap();
        record(issued);
        record(m.cancel_token(&gone, "bob", str::to_string).unwrap().1);
        record(m.renew_token(&token, "yarn", 20).unwrap().1);

        let replayed = DelegationTokenSecretManager::new(DelegationTokenOptions::default());
        for change in &log {
            replayed.apply(change);
        }
        assert_eq!(
            replayed.verify(&token.identifier, 30).unwrap().password,
            token.password.to_vec()
        );
        assert!(replayed.verify(&gone.identifier, 30).is_err());
        // A token made after replay does not reuse a sequence number.
        let next = issue(&replayed, "carol", "yarn", 40);
        let next_id = DelegationTokenIdentifier::parse(&next.identifier).unwrap();
        assert_eq!(next_id.sequence_number, 3);

        let restored = DelegationTokenSecretManager::new(DelegationTokenOptions::default());
        restored.restore(&replayed.state());
        assert!(restored.verify(&token.identifier, 30).is_ok());
        assert!(restored.verify(&next.identifier, 50).is_ok());
        assert_eq!(restored.state().tokens.len(), 2);
    }

    #[test]
    fn expired_tokens_and_keys_are_dropped() {
        let m = manager();
        let token = issue(&m, "alice", "yarn", 0);
        assert_eq!(m.remove_expired(HOUR), 0);
        assert_eq!(m.remove_expired(25 * HOUR), 1);
        assert!(m.verify(&token.identifier, 25 * HOUR).is_err());
        // The current key stays whatever its age.
        assert!(m.create_token("alice", "yarn", "", 100 * 24 * HOUR).is_ok());
        assert!(m.needs_new_key(24 * HOUR));
        assert!(!m.needs_new_key(HOUR));
    }

    #[test]
    fn tracking_id_is_the_identifiers_md5_in_hex() {
        // RFC 1321's test suite.
        assert_eq!(tracking_id(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(tracking_id(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
