//! YARN's tokens and their secret managers, as Hadoop's ResourceManager makes them and
//! its NodeManager checks them:
//!
//! | kind | identifier | user | made by | checked by |
//! |---|---|---|---|---|
//! | `YARN_AM_RM_TOKEN` | `AMRMTokenIdentifierProto` (attempt, key id) | the attempt | [`AmrmTokenSecretManager`] | the RM's ApplicationMasterProtocol (SASL) |
//! | `NMToken` | `NMTokenIdentifierProto` (attempt, node, submitter, key id) | the attempt | [`NmTokenSecretManager`] (RM) | ContainerManagementProtocol (SASL, NM) |
//! | `ContainerToken` | `ContainerTokenIdentifierProto` | the container | [`ContainerTokenSecretManager`] (RM) | the NM, inside each start request |
//!
//! An identifier's bytes are its proto message, encoded (Hadoop's identifiers `write`
//! `proto.toByteArray()`); the password is HMAC-SHA1 of those bytes with the master key
//! the identifier's key id names (`SecretManager.createPassword`). Master keys are 64
//! random bytes with serial ids that start at a random number, as Hadoop's. A user
//! string is Hadoop's `toString` of the id (`appattempt_<ts>_<app>_<attempt>`).
//!
//! Keys roll as Hadoop's do: the AMRMToken manager makes a next key that verifies at
//! once and signs once activated (the previous key then stops verifying: AMs get the new
//! token in an allocate response); the NMToken and container token managers keep the
//! previous key verifying after a roll.

use std::collections::HashSet;
use std::sync::Mutex;

use bytes::Bytes;
use hmac::{Hmac, Mac};
use prost::Message;
use rand::{Rng, RngCore};
use sha1::Sha1;
use tusk_proto::common::TokenProto;
use tusk_proto::hadoop::yarn::{
    AmrmTokenIdentifierProto, ApplicationAttemptIdProto, ApplicationIdProto, ContainerIdProto,
    ContainerTokenIdentifierProto, NmTokenIdentifierProto, NodeIdProto,
};

use crate::error::InvalidToken;
use crate::token_authority::{TokenAuthority, TokenGrant};

/// `AMRMTokenIdentifier.KIND_NAME`.
pub const AMRM_TOKEN_KIND: &str = "YARN_AM_RM_TOKEN";
/// `NMTokenIdentifier.KIND`.
pub const NM_TOKEN_KIND: &str = "NMToken";
/// `ContainerTokenIdentifier.KIND`.
pub const CONTAINER_TOKEN_KIND: &str = "ContainerToken";
/// `ClientToAMTokenIdentifier.KIND_NAME`.
pub const CLIENT_TO_AM_TOKEN_KIND: &str = "YARN_CLIENT_TOKEN";

/// A client-to-AM token for `client` (the caller's user name as Hadoop's
/// `UserGroupInformation.getUserName` gives it) on `attempt`, as Hadoop's
/// `RMAppAttempt.createClientToken`: a `ClientToAMTokenIdentifierProto`, signed
/// (HMAC-SHA1) with `key`, the master key the AM got at registration
/// (`client_to_am_token_master_key`); the AM checks it with that key. A secure job
/// client authenticates to its AM (MRClientProtocol) with it. The service is left empty:
/// the client names the AM's address.
pub fn client_to_am_token(
    key: &[u8],
    attempt: &ApplicationAttemptIdProto,
    client: &str,
) -> TokenProto {
    let identifier = tusk_proto::hadoop::yarn::ClientToAmTokenIdentifierProto {
        app_attempt_id: Some(*attempt),
        client_name: Some(client.to_string()),
    }
    .encode_to_vec();
    let key = MasterKey {
        key_id: 0,
        bytes: Bytes::copy_from_slice(key),
    };
    TokenProto {
        password: key.password(&identifier).into(),
        identifier: identifier.into(),
        kind: CLIENT_TO_AM_TOKEN_KIND.into(),
        service: String::new(),
    }
}

/// What Java's HmacSHA1 key generator makes.
const KEY_LEN: usize = 64;

/// One of YARN's master keys (`MasterKeyData`).
#[derive(Clone, PartialEq, Eq)]
pub struct MasterKey {
    pub key_id: i32,
    pub bytes: Bytes,
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key bytes stay out of logs.
        f.debug_struct("MasterKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl MasterKey {
    /// HMAC-SHA1 of `identifier` with this key: the token's password.
    pub fn password(&self, identifier: &[u8]) -> Vec<u8> {
        let mut mac = Hmac::<Sha1>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(identifier);
        mac.finalize().into_bytes().to_vec()
    }

    /// Whether `password` is this key's for `identifier` (in constant time).
    fn signed(&self, identifier: &[u8], password: &[u8]) -> bool {
        let mut mac = Hmac::<Sha1>::new_from_slice(&self.bytes).expect("HMAC takes any key length");
        mac.update(identifier);
        mac.verify_slice(password).is_ok()
    }
}

/// A signing key and the one other key that still verifies (the next one for AMRMTokens,
/// the previous one for the others).
#[derive(Debug)]
struct KeyRing {
    /// The id of the next key made.
    serial: i32,
    current: MasterKey,
    other: Option<MasterKey>,
}

impl KeyRing {
    fn new() -> Self {
        let mut ring = KeyRing {
            serial: rand::thread_rng().gen(),
            current: MasterKey {
                key_id: 0,
                bytes: Bytes::new(),
            },
            other: None,
        };
        ring.current = ring.make_key();
        ring
    }

    /// Starts from a key made elsewhere (a NodeManager takes the ResourceManager's).
    fn with_key(key: MasterKey) -> Self {
        KeyRing {
            serial: key.key_id.wrapping_add(1),
            current: key,
            other: None,
        }
    }

    fn make_key(&mut self) -> MasterKey {
        let mut bytes = vec![0u8; KEY_LEN];
        rand::thread_rng().fill_bytes(&mut bytes);
        let key_id = self.serial;
        self.serial = self.serial.wrapping_add(1);
        MasterKey {
            key_id,
            bytes: bytes.into(),
        }
    }

    /// Makes a new current key; the old one keeps verifying.
    fn roll_keeping_previous(&mut self) {
        let next = self.make_key();
        self.take_keeping_previous(next);
    }

    fn take_keeping_previous(&mut self, key: MasterKey) {
        if key.key_id != self.current.key_id {
            self.other = Some(std::mem::replace(&mut self.current, key));
        }
    }

    fn find(&self, key_id: i32) -> Option<&MasterKey> {
        std::iter::once(&self.current)
            .chain(&self.other)
            .find(|k| k.key_id == key_id)
    }
}

/// `ApplicationAttemptId.toString`: `appattempt_1700000000000_0007_000001`.
pub fn attempt_id_string(attempt: &ApplicationAttemptIdProto) -> String {
    let app = attempt.application_id.unwrap_or_default();
    format!(
        "appattempt_{}_{:04}_{:06}",
        app.cluster_timestamp(),
        app.id(),
        attempt.attempt_id()
    )
}

/// `ApplicationId.toString`: `application_1700000000000_0007`.
pub fn application_id_string(app: &ApplicationIdProto) -> String {
    format!("application_{}_{:04}", app.cluster_timestamp(), app.id())
}

/// `ContainerId.toString`: `container_1700000000000_0007_01_000002`, with `e<epoch>_`
/// after `container_` when the id's high bits carry an RM epoch.
pub fn container_id_string(container: &ContainerIdProto) -> String {
    let attempt = container.app_attempt_id.unwrap_or_default();
    let app = attempt.application_id.unwrap_or_default();
    let id = container.id();
    let epoch = id >> 40;
    let epoch = if epoch > 0 {
        format!("e{epoch:02}_")
    } else {
        String::new()
    };
    format!(
        "container_{epoch}{}_{:04}_{:02}_{:06}",
        app.cluster_timestamp(),
        app.id(),
        attempt.attempt_id(),
        id & 0xff_ffff_ffff
    )
}

/// `NodeId.toString`: `host:port`, also the token service of a NodeManager's tokens.
pub fn node_id_string(node: &NodeIdProto) -> String {
    format!("{}:{}", node.host(), node.port())
}

fn attempt_key(attempt: &ApplicationAttemptIdProto) -> (i64, i32, i32) {
    let app = attempt.application_id.unwrap_or_default();
    (app.cluster_timestamp(), app.id(), attempt.attempt_id())
}

fn decode<M: Message + Default>(identifier: &[u8]) -> Result<M, InvalidToken> {
    M::decode(identifier).map_err(|_| InvalidToken::new("Can't de-serialize tokenIdentifier"))
}

fn token(identifier: Vec<u8>, password: Vec<u8>, kind: &str, service: String) -> TokenProto {
    TokenProto {
        identifier: identifier.into(),
        password: password.into(),
        kind: kind.into(),
        service,
    }
}

// ------------------------------------------------------------------------- AMRMToken

/// The ResourceManager's AMRMToken keys (`AMRMTokenSecretManager`): one token per
/// application attempt, valid while the attempt is registered here.
#[derive(Debug)]
pub struct AmrmTokenSecretManager {
    state: Mutex<AmrmState>,
}

#[derive(Debug)]
struct AmrmState {
    /// `other` is the next key, made by a roll and not yet activated.
    keys: KeyRing,
    /// Attempts whose tokens are valid: (cluster timestamp, application, attempt).
    attempts: HashSet<(i64, i32, i32)>,
}

impl Default for AmrmTokenSecretManager {
    fn default() -> Self {
        Self::new()
    }
}

impl AmrmTokenSecretManager {
    pub fn new() -> Self {
        AmrmTokenSecretManager {
            state: Mutex::new(AmrmState {
                keys: KeyRing::new(),
                attempts: HashSet::new(),
            }),
        }
    }

    /// The ResourceManager's after a restart: the keys its state store kept (Hadoop's
    /// `AMRMTokenSecretManagerState`), so the tokens its AMs hold still verify.
    pub fn with_keys(current: MasterKey, next: Option<MasterKey>) -> Self {
        let mut keys = KeyRing::with_key(current);
        if let Some(next) = next {
            keys.serial = next.key_id.wrapping_add(1);
            keys.other = Some(next);
        }
        AmrmTokenSecretManager {
            state: Mutex::new(AmrmState {
                keys,
                attempts: HashSet::new(),
            }),
        }
    }

    /// The current key and the next one (between a roll and its activation): what a
    /// state store keeps for [`AmrmTokenSecretManager::with_keys`].
    pub fn keys(&self) -> (MasterKey, Option<MasterKey>) {
        let state = self.state.lock().expect("AMRMToken keys");
        (state.keys.current.clone(), state.keys.other.clone())
    }

    /// A recovered attempt's tokens verify again (Hadoop's `addPersistedPassword`).
    pub fn attempt_recovered(&self, attempt: &ApplicationAttemptIdProto) {
        let mut state = self.state.lock().expect("AMRMToken keys");
        state.attempts.insert(attempt_key(attempt));
    }

    /// A token for `attempt`, signed with the current key; the attempt's tokens are
    /// valid from now until [`AmrmTokenSecretManager::application_finished`]. The
    /// service is empty, as Hadoop's RM leaves it: the AM's client sets it to the
    /// scheduler address it connects to.
    pub fn create_token(&self, attempt: &ApplicationAttemptIdProto) -> TokenProto {
        let mut state = self.state.lock().expect("AMRMToken keys");
        state.attempts.insert(attempt_key(attempt));
        let identifier = AmrmTokenIdentifierProto {
            app_attempt_id: Some(*attempt),
            key_id: Some(state.keys.current.key_id),
        }
        .encode_to_vec();
        let password = state.keys.current.password(&identifier);
        token(identifier, password, AMRM_TOKEN_KIND, String::new())
    }

    /// The attempt is over: its tokens are refused from now on.
    pub fn application_finished(&self, attempt: &ApplicationAttemptIdProto) {
        let mut state = self.state.lock().expect("AMRMToken keys");
        state.attempts.remove(&attempt_key(attempt));
    }

    /// Makes the next key (Hadoop: every `yarn.resourcemanager.am-rm-tokens.
    /// master-key-rolling-interval-secs`); tokens it signs verify from now on, and it
    /// signs once [`AmrmTokenSecretManager::activate_next_master_key`] runs.
    pub fn roll_master_key(&self) {
        let mut state = self.state.lock().expect("AMRMToken keys");
        let next = state.keys.make_key();
        state.keys.other = Some(next);
    }

    /// The next key becomes the current one; the old current key stops verifying
    /// (Hadoop waits 1.5 × the AM liveness expiry first, so every live AM has had an
    /// allocate response with the new token).
    pub fn activate_next_master_key(&self) {
        let mut state = self.state.lock().expect("AMRMToken keys");
        if let Some(next) = state.keys.other.take() {
            state.keys.current = next;
        }
    }

    /// The key id new tokens carry.
    pub fn current_key_id(&self) -> i32 {
        self.state
            .lock()
            .expect("AMRMToken keys")
            .keys
            .current
            .key_id
    }

    /// The key id of the next key, between a roll and its activation (an allocate
    /// response then carries a new token, signed by [`Self::create_next_token`]).
    pub fn next_key_id(&self) -> Option<i32> {
        let state = self.state.lock().expect("AMRMToken keys");
        state.keys.other.as_ref().map(|k| k.key_id)
    }

    /// A token for `attempt` signed with the next key (Hadoop's `createAndGetAMRMToken`
    /// after a roll), or `None` when there is no next key.
    pub fn create_next_token(&self, attempt: &ApplicationAttemptIdProto) -> Option<TokenProto> {
        let state = self.state.lock().expect("AMRMToken keys");
        let next = state.keys.other.as_ref()?;
        let identifier = AmrmTokenIdentifierProto {
            app_attempt_id: Some(*attempt),
            key_id: Some(next.key_id),
        }
        .encode_to_vec();
        let password = next.password(&identifier);
        Some(token(identifier, password, AMRM_TOKEN_KIND, String::new()))
    }
}

impl TokenAuthority for AmrmTokenSecretManager {
    /// Hadoop's `retrievePassword`: the attempt must be registered here and the key
    /// current or next.
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
        let id: AmrmTokenIdentifierProto = decode(identifier)?;
        let attempt = id.app_attempt_id.unwrap_or_default();
        let user = attempt_id_string(&attempt);
        let state = self.state.lock().expect("AMRMToken keys");
        if !state.attempts.contains(&attempt_key(&attempt)) {
            return Err(InvalidToken::new(format!(
                "{user} not found in AMRMTokenSecretManager."
            )));
        }
        let key = state
            .keys
            .find(id.key_id())
            .ok_or_else(|| InvalidToken::new(format!("Invalid AMRMToken from {user}")))?;
        Ok(TokenGrant {
            password: key.password(identifier),
            user,
        })
    }
}

// --------------------------------------------------------------------------- NMToken

/// NMToken keys: the ResourceManager's (makes tokens, rolls the key) or a NodeManager's
/// (takes the RM's key, checks that a token names this node).
#[derive(Debug)]
pub struct NmTokenSecretManager {
    /// The node whose tokens are accepted (a NodeManager's); `None` on the RM.
    node: Option<NodeIdProto>,
    /// `other` is the previous key.
    keys: Mutex<KeyRing>,
}

impl Default for NmTokenSecretManager {
    fn default() -> Self {
        Self::new()
    }
}

impl NmTokenSecretManager {
    /// The ResourceManager's, with a fresh key.
    pub fn new() -> Self {
        NmTokenSecretManager {
            node: None,
            keys: Mutex::new(KeyRing::new()),
        }
    }

    /// The ResourceManager's after a restart, with the key its state store kept.
    pub fn with_key(key: MasterKey) -> Self {
        NmTokenSecretManager {
            node: None,
            keys: Mutex::new(KeyRing::with_key(key)),
        }
    }

    /// A NodeManager's: accepts tokens for `node` signed with `key` (the RM's current
    /// key, as the NM learns it when it registers) or the key before a later one.
    pub fn for_node(node: NodeIdProto, key: MasterKey) -> Self {
        NmTokenSecretManager {
            node: Some(node),
            keys: Mutex::new(KeyRing::with_key(key)),
        }
    }

    /// The key that signs now (what the RM hands a NodeManager).
    pub fn current_key(&self) -> MasterKey {
        self.keys.lock().expect("NMToken keys").current.clone()
    }

    /// Takes the RM's new key (NM); the previous one keeps verifying.
    pub fn set_current_key(&self, key: MasterKey) {
        self.keys
            .lock()
            .expect("NMToken keys")
            .take_keeping_previous(key);
    }

    /// Makes a new key (RM); the previous one keeps verifying.
    pub fn roll_master_key(&self) {
        self.keys
            .lock()
            .expect("NMToken keys")
            .roll_keeping_previous();
    }

    /// A token letting `attempt` (of `submitter`) talk to `node`; its service is the
    /// node's `host:port`.
    pub fn create_token(
        &self,
        attempt: &ApplicationAttemptIdProto,
        node: &NodeIdProto,
        submitter: &str,
    ) -> TokenProto {
        let keys = self.keys.lock().expect("NMToken keys");
        let identifier = NmTokenIdentifierProto {
            app_attempt_id: Some(*attempt),
            node_id: Some(node.clone()),
            app_submitter: Some(submitter.into()),
            key_id: Some(keys.current.key_id),
        }
        .encode_to_vec();
        let password = keys.current.password(&identifier);
        token(identifier, password, NM_TOKEN_KIND, node_id_string(node))
    }
}

impl TokenAuthority for NmTokenSecretManager {
    /// Hadoop's `NMTokenSecretManagerInNM.retrievePassword`: the token names this node
    /// and a key still known.
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
        let id: NmTokenIdentifierProto = decode(identifier)?;
        let user = attempt_id_string(&id.app_attempt_id.unwrap_or_default());
        let named = id.node_id.clone().unwrap_or_default();
        if let Some(node) = self.node.as_ref().filter(|n| **n != named) {
            return Err(InvalidToken::new(format!(
                "Given NMToken for application : {user} is not valid for current node manager.expected : {} found : {}",
                node_id_string(node),
                node_id_string(&named)
            )));
        }
        let keys = self.keys.lock().expect("NMToken keys");
        let key = keys.find(id.key_id()).ok_or_else(|| {
            InvalidToken::new(format!(
                "Given NMToken for application : {user} seems to have been generated illegally."
            ))
        })?;
        Ok(TokenGrant {
            password: key.password(identifier),
            user,
        })
    }
}

// -------------------------------------------------------------------- ContainerToken

/// Container token keys: the ResourceManager's (signs a token for every container it
/// allocates) or a NodeManager's (checks the token inside each start request).
#[derive(Debug)]
pub struct ContainerTokenSecretManager {
    /// The `host:port` whose containers are accepted (a NodeManager's).
    node: Option<String>,
    /// How long a new token is valid, in ms (Hadoop:
    /// `yarn.resourcemanager.rm.container-allocation.expiry-interval-ms`, 600000).
    lifetime_ms: u64,
    /// `other` is the previous key.
    keys: Mutex<KeyRing>,
}

impl ContainerTokenSecretManager {
    /// The ResourceManager's, with a fresh key.
    pub fn new(lifetime_ms: u64) -> Self {
        ContainerTokenSecretManager {
            node: None,
            lifetime_ms,
            keys: Mutex::new(KeyRing::new()),
        }
    }

    /// The ResourceManager's after a restart, with the key its state store kept.
    pub fn with_key(lifetime_ms: u64, key: MasterKey) -> Self {
        ContainerTokenSecretManager {
            node: None,
            lifetime_ms,
            keys: Mutex::new(KeyRing::with_key(key)),
        }
    }

    /// A NodeManager's at `node` (`host:port`), taking the RM's `key`.
    pub fn for_node(node: impl Into<String>, key: MasterKey) -> Self {
        ContainerTokenSecretManager {
            node: Some(node.into()),
            lifetime_ms: 0,
            keys: Mutex::new(KeyRing::with_key(key)),
        }
    }

    pub fn current_key(&self) -> MasterKey {
        self.keys
            .lock()
            .expect("container token keys")
            .current
            .clone()
    }

    /// Takes the RM's new key (NM); the previous one keeps verifying.
    pub fn set_current_key(&self, key: MasterKey) {
        self.keys
            .lock()
            .expect("container token keys")
            .take_keeping_previous(key);
    }

    /// Makes a new key (RM); the previous one keeps verifying.
    pub fn roll_master_key(&self) {
        self.keys
            .lock()
            .expect("container token keys")
            .roll_keeping_previous();
    }

    /// Signs `identifier` (every field the caller knows set: container, `nm_host_addr`,
    /// submitter, resource, priority, rm identifier, ...) after setting its master key
    /// id, creation time `now` and expiry `now` + lifetime (ms). The service is the
    /// NodeManager's `host:port`.
    pub fn create_token(
        &self,
        mut identifier: ContainerTokenIdentifierProto,
        now: u64,
    ) -> TokenProto {
        let keys = self.keys.lock().expect("container token keys");
        identifier.master_key_id = Some(keys.current.key_id);
        identifier.creation_time = Some(now as i64);
        identifier.expiry_time_stamp = Some((now + self.lifetime_ms) as i64);
        let service = identifier.nm_host_addr().to_string();
        let bytes = identifier.encode_to_vec();
        let password = keys.current.password(&bytes);
        token(bytes, password, CONTAINER_TOKEN_KIND, service)
    }

    /// The NodeManager's check of the container token in a start request
    /// (`ContainerManagerImpl.verifyAndGetContainerTokenIdentifier`): signed by a known
    /// key, for this node, not expired at `now`. Returns the identifier.
    pub fn verify(
        &self,
        token: &TokenProto,
        now: u64,
    ) -> Result<ContainerTokenIdentifierProto, InvalidToken> {
        let id: ContainerTokenIdentifierProto = decode(&token.identifier)?;
        let container = container_id_string(&id.container_id.unwrap_or_default());
        if let Some(node) = self.node.as_ref().filter(|n| **n != id.nm_host_addr()) {
            return Err(InvalidToken::new(format!(
                "Given Container {container} identifier is not valid for current Node manager. Expected : {node} Found : {}",
                id.nm_host_addr()
            )));
        }
        let illegal = || {
            InvalidToken::new(format!(
                "Given Container {container} seems to have an illegally generated token."
            ))
        };
        let keys = self.keys.lock().expect("container token keys");
        let key = keys.find(id.master_key_id()).ok_or_else(illegal)?;
        if !key.signed(&token.identifier, &token.password) {
            return Err(InvalidToken::new(format!(
                "Invalid container token used for starting container on : {}",
                self.node.as_deref().unwrap_or_default()
            )));
        }
        if id.expiry_time_stamp() < now as i64 {
            return Err(InvalidToken::new(format!(
                "Invalid ContainerToken\nThis token is expired. current time is {now} found {}\nNote: System times on machines may be out of sync. Check system time and time zones.",
                id.expiry_time_stamp()
            )));
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(app: i32, attempt: i32) -> ApplicationAttemptIdProto {
        ApplicationAttemptIdProto {
            application_id: Some(ApplicationIdProto {
                id: Some(app),
                cluster_timestamp: Some(1_700_000_000_000),
            }),
            attempt_id: Some(attempt),
        }
    }

    fn node(port: i32) -> NodeIdProto {
        NodeIdProto {
            host: Some("nm1".into()),
            port: Some(port),
        }
    }

    #[test]
    fn a_client_to_am_token_names_its_attempt_and_client_and_is_signed_with_the_am_key() {
        let key = b"the key the AM got at registration";
        let token = client_to_am_token(key, &attempt(7, 1), "alice@EXAMPLE.COM");
        assert_eq!(token.kind, CLIENT_TO_AM_TOKEN_KIND);
        let id = tusk_proto::hadoop::yarn::ClientToAmTokenIdentifierProto::decode(
            token.identifier.as_ref(),
        )
        .unwrap();
        assert_eq!(id.app_attempt_id, Some(attempt(7, 1)));
        assert_eq!(id.client_name(), "alice@EXAMPLE.COM");
        // The AM checks the password as HMAC-SHA1 of the identifier under its key.
        let mut mac = Hmac::<Sha1>::new_from_slice(key).unwrap();
        mac.update(&token.identifier);
        assert!(mac.verify_slice(&token.password).is_ok());
        let other = client_to_am_token(b"another key", &attempt(7, 1), "alice@EXAMPLE.COM");
        assert_ne!(other.password, token.password);
    }

    #[test]
    fn ids_print_as_hadoops() {
        assert_eq!(
            attempt_id_string(&attempt(7, 1)),
            "appattempt_1700000000000_0007_000001"
        );
        let container = |id| ContainerIdProto {
            app_id: attempt(7, 1).application_id,
            app_attempt_id: Some(attempt(7, 1)),
            id: Some(id),
        };
        assert_eq!(
            container_id_string(&container(2)),
            "container_1700000000000_0007_01_000002"
        );
        assert_eq!(
            container_id_string(&container((3 << 40) | 2)),
            "container_e03_1700000000000_0007_01_000002"
        );
        assert_eq!(node_id_string(&node(8041)), "nm1:8041");
        assert_eq!(
            application_id_string(&attempt(7, 1).application_id.unwrap()),
            "application_1700000000000_0007"
        );
    }

    #[test]
    fn an_amrm_token_is_granted_while_its_attempt_runs() {
        let rm = AmrmTokenSecretManager::new();
        let token = rm.create_token(&attempt(7, 1));
        assert_eq!(token.kind, AMRM_TOKEN_KIND);
        let id = AmrmTokenIdentifierProto::decode(token.identifier.as_ref()).unwrap();
        assert_eq!(id.app_attempt_id, Some(attempt(7, 1)));
        assert_eq!(id.key_id(), rm.current_key_id());
        let grant = rm.grant(&token.identifier).unwrap();
        assert_eq!(grant.password, token.password.to_vec());
        assert_eq!(grant.user, "appattempt_1700000000000_0007_000001");

        let mut forged = id;
        forged.app_attempt_id = Some(attempt(8, 1));
        assert_eq!(
            rm.grant(&forged.encode_to_vec()).unwrap_err().message,
            "appattempt_1700000000000_0008_000001 not found in AMRMTokenSecretManager."
        );
        forged.app_attempt_id = Some(attempt(7, 1));
        forged.key_id = Some(id.key_id().wrapping_add(5));
        assert_eq!(
            rm.grant(&forged.encode_to_vec()).unwrap_err().message,
            "Invalid AMRMToken from appattempt_1700000000000_0007_000001"
        );
        assert_eq!(
            rm.grant(b"\xff\xff").unwrap_err().message,
            "Can't de-serialize tokenIdentifier"
        );

        rm.application_finished(&attempt(7, 1));
        assert!(rm.grant(&token.identifier).is_err());
    }

    #[test]
    fn a_rolled_amrm_key_verifies_at_once_and_retires_the_old_one_when_activated() {
        let rm = AmrmTokenSecretManager::new();
        let old = rm.create_token(&attempt(1, 1));
        assert!(rm.create_next_token(&attempt(1, 1)).is_none());
        rm.roll_master_key();
        let next = rm.create_next_token(&attempt(1, 1)).unwrap();
        assert_ne!(next.identifier, old.identifier);
        assert!(rm.grant(&old.identifier).is_ok());
        assert_eq!(
            rm.grant(&next.identifier).unwrap().password,
            next.password.to_vec()
        );
        rm.activate_next_master_key();
        assert!(rm.grant(&old.identifier).is_err());
        assert!(rm.grant(&next.identifier).is_ok());
        assert_eq!(rm.create_token(&attempt(1, 1)), next);
    }

    #[test]
    fn amrm_keys_kept_by_a_restarted_rm_verify_the_tokens_of_recovered_attempts_only() {
        let rm = AmrmTokenSecretManager::new();
        let token = rm.create_token(&attempt(1, 1));
        let other = rm.create_token(&attempt(2, 1));
        rm.roll_master_key();
        let next = rm.create_next_token(&attempt(1, 1)).unwrap();
        let (current, pending) = rm.keys();

        let restarted = AmrmTokenSecretManager::with_keys(current, pending);
        assert!(
            restarted.grant(&token.identifier).is_err(),
            "not recovered yet"
        );
        restarted.attempt_recovered(&attempt(1, 1));
        assert_eq!(
            restarted.grant(&token.identifier).unwrap().password,
            token.password.to_vec()
        );
        assert!(restarted.grant(&next.identifier).is_ok(), "the next key");
        assert!(restarted.grant(&other.identifier).is_err());
        restarted.roll_master_key();
        let next_id = AmrmTokenIdentifierProto::decode(next.identifier.as_ref())
            .unwrap()
            .key_id();
        assert_ne!(
            restarted.next_key_id(),
            Some(next_id),
            "a key made after a restart has a new id"
        );
    }

    #[test]
    fn a_nodemanager_grants_nm_tokens_for_itself_under_the_current_or_previous_key() {
        let rm = NmTokenSecretManager::new();
        let nm = NmTokenSecretManager::for_node(node(8041), rm.current_key());
        let token = rm.create_token(&attempt(3, 2), &node(8041), "alice");
        assert_eq!(
            (token.kind.as_str(), token.service.as_str()),
            (NM_TOKEN_KIND, "nm1:8041")
        );
        let id = NmTokenIdentifierProto::decode(token.identifier.as_ref()).unwrap();
        assert_eq!(id.app_submitter(), "alice");
        let grant = nm.grant(&token.identifier).unwrap();
        assert_eq!(grant.password, token.password.to_vec());
        assert_eq!(grant.user, "appattempt_1700000000000_0003_000002");

        let elsewhere = rm.create_token(&attempt(3, 2), &node(9999), "alice");
        assert_eq!(
            nm.grant(&elsewhere.identifier).unwrap_err().message,
            "Given NMToken for application : appattempt_1700000000000_0003_000002 is not valid for current node manager.expected : nm1:8041 found : nm1:9999"
        );

        rm.roll_master_key();
        nm.set_current_key(rm.current_key());
        assert!(nm.grant(&token.identifier).is_ok(), "the previous key");
        rm.roll_master_key();
        nm.set_current_key(rm.current_key());
        assert_eq!(
            nm.grant(&token.identifier).unwrap_err().message,
            "Given NMToken for application : appattempt_1700000000000_0003_000002 seems to have been generated illegally."
        );
    }

    #[test]
    fn a_nodemanager_accepts_only_its_own_unexpired_container_tokens() {
        let rm = ContainerTokenSecretManager::new(600_000);
        let nm = ContainerTokenSecretManager::for_node("nm1:8041", rm.current_key());
        let identifier = |addr: &str| ContainerTokenIdentifierProto {
            container_id: Some(ContainerIdProto {
                app_id: attempt(7, 1).application_id,
                app_attempt_id: Some(attempt(7, 1)),
                id: Some(2),
            }),
            nm_host_addr: Some(addr.into()),
            app_submitter: Some("alice".into()),
            ..Default::default()
        };
        let token = rm.create_token(identifier("nm1:8041"), 1_000);
        assert_eq!(token.kind, CONTAINER_TOKEN_KIND);
        assert_eq!(token.service, "nm1:8041");
        let id = nm.verify(&token, 2_000).unwrap();
        assert_eq!(id.expiry_time_stamp(), 601_000);
        assert_eq!(id.master_key_id(), rm.current_key().key_id);
        assert_eq!(id.app_submitter(), "alice");

        let mut forged = token.clone();
        forged.password = vec![0; 20].into();
        assert_eq!(
            nm.verify(&forged, 2_000).unwrap_err().message,
            "Invalid container token used for starting container on : nm1:8041"
        );
        let mut unknown_key = id.clone();
        unknown_key.master_key_id = Some(id.master_key_id().wrapping_add(7));
        let unknown_key = TokenProto {
            identifier: unknown_key.encode_to_vec().into(),
            ..token.clone()
        };
        assert_eq!(
            nm.verify(&unknown_key, 2_000).unwrap_err().message,
            "Given Container container_1700000000000_0007_01_000002 seems to have an illegally generated token."
        );
        let elsewhere = rm.create_token(identifier("nm2:8041"), 1_000);
        assert!(nm
            .verify(&elsewhere, 2_000)
            .unwrap_err()
            .message
            .contains("Expected : nm1:8041 Found : nm2:8041"));
        assert!(nm
            .verify(&token, 601_001)
            .unwrap_err()
            .message
            .contains("This token is expired. current time is 601001 found 601000"));
    }
}
