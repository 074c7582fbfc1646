//! The ResourceManager's YARN secrets, as Hadoop's RM keeps them: the AMRMToken keys
//! (ApplicationMasterProtocolPB authenticates AMs with them), the NMToken and container
//! token keys (the NodeManagers get the current ones at registration and check the
//! tokens AMs show them), and the key AMs sign client-to-AM tokens with.

use std::sync::Arc;

use bytes::Bytes;
use rand::RngCore;
use tusk_proto::hadoop::common::TokenProto;
use tusk_proto::hadoop::yarn as h;
use tusk_security::{
    AmrmTokenSecretManager, ContainerTokenSecretManager, MasterKey, NmTokenSecretManager,
};

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
