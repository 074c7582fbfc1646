//! The ResourceManager's YARN secrets, as Hadoop's RM keeps them: the AMRMToken keys
//! (ApplicationMasterProtocolPB authenticates AMs with them), the NMToken and container
//! token keys (the NodeManagers get the current ones at registration and check the
//! tokens AMs show them), and the key AMs sign client-to-AM tokens with. With a state
//! store they outlive a restart ([`Secrets::stored`], [`Secrets::from_stored`]).

use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use rand::RngCore;
use tusk_proto::hadoop::common::TokenProto;
use tusk_proto::hadoop::yarn as h;
use tusk_security::{
    AmrmTokenSecretManager, ContainerTokenSecretManager, MasterKey, NmTokenSecretManager,
};

use crate::state_store::{StoredKey, StoredKeys};

/// Hadoop's `yarn.resourcemanager.rm.container-allocation.expiry-interval-ms` default:
/// how long an AM has to start a container it was given.
pub const CONTAINER_TOKEN_LIFETIME_MS: u64 = 600_000;

pub(crate) struct Secrets {
    pub amrm: Arc<AmrmTokenSecretManager>,
    pub nm_tokens: NmTokenSecretManager,
    pub container_tokens: ContainerTokenSecretManager,
    /// Handed to each AM at registration (`client_to_am_token_master_key`).
    pub client_to_am_key: Bytes,
}

impl Secrets {
    pub fn new() -> Self {
        let mut key = vec![0u8; 64];
        rand::thread_rng().fill_bytes(&mut key);
        Secrets {
            amrm: Arc::new(AmrmTokenSecretManager::new()),
            nm_tokens: NmTokenSecretManager::new(),
            container_tokens: ContainerTokenSecretManager::new(CONTAINER_TOKEN_LIFETIME_MS),
            client_to_am_key: Bytes::from(key),
        }
    }

    /// The keys `stored` kept; `None` when a key does not decode.
    pub fn from_stored(stored: &StoredKeys) -> Option<Self> {
        let next = match &stored.amrm_next {
            Some(k) => Some(key_from(k)?),
            None => None,
        };
        Some(Secrets {
            amrm: Arc::new(AmrmTokenSecretManager::with_keys(
                key_from(&stored.amrm_current)?,
                next,
            )),
            nm_tokens: NmTokenSecretManager::with_key(key_from(&stored.nm_token)?),
            container_tokens: ContainerTokenSecretManager::with_key(
                CONTAINER_TOKEN_LIFETIME_MS,
                key_from(&stored.container_token)?,
            ),
            client_to_am_key: Bytes::from(BASE64.decode(&stored.client_to_am).ok()?),
        })
    }

    /// The keys as a state store keeps them, with the ResourceManager's `epoch`.
    pub fn stored(&self, epoch: u32) -> StoredKeys {
        let (current, next) = self.amrm.keys();
        StoredKeys {
            epoch,
            amrm_current: key_to(&current),
            amrm_next: next.as_ref().map(key_to),
            nm_token: key_to(&self.nm_tokens.current_key()),
            container_token: key_to(&self.container_tokens.current_key()),
            client_to_am: BASE64.encode(&self.client_to_am_key),
        }
    }

    /// The keys a NodeManager needs to check NMTokens and container tokens.
    pub fn node_keys(&self) -> (MasterKey, MasterKey) {
        (
            self.nm_tokens.current_key(),
            self.container_tokens.current_key(),
        )
    }

    /// An NMToken for `attempt` at `node`.
    pub fn nm_token(
        &self,
        attempt: &h::ApplicationAttemptIdProto,
        node: &h::NodeIdProto,
        submitter: &str,
    ) -> TokenProto {
        self.nm_tokens.create_token(attempt, node, submitter)
    }
}

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

fn key_to(key: &MasterKey) -> StoredKey {
    StoredKey {
        key_id: key.key_id,
        bytes: BASE64.encode(&key.bytes),
    }
}

fn key_from(stored: &StoredKey) -> Option<MasterKey> {
    Some(MasterKey {
        key_id: stored.key_id,
        bytes: Bytes::from(BASE64.decode(&stored.bytes).ok()?),
    })
}
