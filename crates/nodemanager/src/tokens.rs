//! The keys this NodeManager checks Hadoop AMs' tokens with, as the ResourceManager
//! sends them at every registration (`RegisterNodeManagerResponse`): NMTokens on
//! ContainerManagementProtocolPB connections (SASL `TOKEN`; [`NodeTokens`] is the RPC
//! server's token authority) and the container token inside each start request.
//!
//! The RPC server starts before the node has registered, so the keys arrive later: until
//! then every token is refused. A later registration (a resync with a restarted
//! ResourceManager) brings new keys; the previous ones keep verifying, so tokens handed
//! out just before still work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use tusk_proto::common::TokenProto;
use tusk_proto::hadoop::yarn::{ContainerTokenIdentifierProto, NodeIdProto};
use tusk_proto::tusk::yarn as y;
use tusk_security::{
    ContainerTokenSecretManager, InvalidToken, MasterKey, NmTokenSecretManager, TokenAuthority,
    TokenGrant,
};

/// The NMToken and container token keys of one node.
pub(crate) struct NodeTokens {
    /// The node as its tokens name it: the advertised host and the RPC port.
    node: NodeIdProto,
    /// Set by the first registration, then given each new key.
    nm_tokens: OnceLock<NmTokenSecretManager>,
    container_tokens: OnceLock<ContainerTokenSecretManager>,
    /// The identifier of the ResourceManager the node last registered with (0 before).
    rm_identifier: AtomicU64,
}

impl NodeTokens {
    pub fn new(host: &str, rpc_port: u16) -> Self {
        NodeTokens {
            node: NodeIdProto {
                host: Some(host.to_string()),
                port: Some(i32::from(rpc_port)),
            },
            nm_tokens: OnceLock::new(),
            container_tokens: OnceLock::new(),
            rm_identifier: AtomicU64::new(0),
        }
    }

    /// `host:port`, the service of this node's tokens.
    pub fn node_address(&self) -> String {
        tusk_security::yarn_tokens::node_id_string(&self.node)
    }

    /// Takes the keys and identifier of a registration response (a key may be absent: a
    /// ResourceManager that sends none leaves the previous one).
    pub fn registered(&self, r: &y::RegisterNodeManagerResponse) {
        self.rm_identifier.store(r.rm_identifier, Ordering::Relaxed);
        self.set_keys(
            r.nm_token_master_key.as_ref(),
            r.container_token_master_key.as_ref(),
        );
    }

    /// Whether a container token's `rm_identifier` names the ResourceManager the node
    /// registered with last (Hadoop refuses containers of a previous one).
    pub fn is_current_resourcemanager(&self, rm_identifier: i64) -> bool {
        rm_identifier as u64 == self.rm_identifier.load(Ordering::Relaxed)
    }

    fn set_keys(&self, nm_token: Option<&y::MasterKey>, container_token: Option<&y::MasterKey>) {
        if let Some(key) = nm_token.map(master_key) {
            let mut fresh = Some(key.clone());
            let manager = self.nm_tokens.get_or_init(|| {
                NmTokenSecretManager::for_node(self.node.clone(), fresh.take().expect("once"))
            });
            if fresh.is_some() {
                manager.set_current_key(key);
            }
        }
        if let Some(key) = container_token.map(master_key) {
            let mut fresh = Some(key.clone());
            let manager = self.container_tokens.get_or_init(|| {
                ContainerTokenSecretManager::for_node(
                    self.node_address(),
                    fresh.take().expect("once"),
                )
            });
            if fresh.is_some() {
                manager.set_current_key(key);
            }
        }
    }

    /// Checks the container token of a start request: signed by the ResourceManager's
    /// key, for this node, unexpired at `now` (ms). Returns what it names.
    pub fn verify_container_token(
        &self,
        token: &TokenProto,
        now: u64,
    ) -> Result<ContainerTokenIdentifierProto, InvalidToken> {
        self.container_tokens
            .get()
            .ok_or_else(not_registered)?
            .verify(token, now)
    }
}

impl TokenAuthority for NodeTokens {
    /// An NMToken for this node under a key the ResourceManager sent.
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
        self.nm_tokens
            .get()
            .ok_or_else(not_registered)?
            .grant(identifier)
    }
}

fn master_key(key: &y::MasterKey) -> MasterKey {
    MasterKey {
        key_id: key.key_id,
        bytes: key.bytes.clone(),
    }
}

/// What a token gets before the node has its keys (Hadoop's NodeManager refuses
/// container requests with these words until it has registered).
fn not_registered() -> InvalidToken {
    InvalidToken::new(
        "Rejecting new containers as NodeManager has not yet connected with ResourceManager",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::hadoop::yarn::{
        ApplicationAttemptIdProto, ApplicationIdProto, ContainerIdProto,
    };

    fn attempt() -> ApplicationAttemptIdProto {
        ApplicationAttemptIdProto {
            application_id: Some(ApplicationIdProto {
                id: Some(1),
                cluster_timestamp: Some(1_700_000_000_000),
            }),
            attempt_id: Some(1),
        }
    }

    fn key(manager_key: MasterKey) -> y::MasterKey {
        y::MasterKey {
            key_id: manager_key.key_id,
            bytes: manager_key.bytes,
        }
    }

    #[test]
    fn tokens_are_refused_until_the_keys_arrive_and_old_keys_keep_verifying() {
        let rm_nm = NmTokenSecretManager::new();
        let rm_containers = ContainerTokenSecretManager::new(600_000);
        let node = NodeTokens::new("nm1", 8041);
        let token = rm_nm.create_token(&attempt(), &node.node, "alice");
        let container = rm_containers.create_token(
            ContainerTokenIdentifierProto {
                container_id: Some(ContainerIdProto {
                    app_id: attempt().application_id,
                    app_attempt_id: Some(attempt()),
                    id: Some(2),
                }),
                nm_host_addr: Some("nm1:8041".into()),
                ..Default::default()
            },
            1_000,
        );
        assert!(node.grant(&token.identifier).is_err());
        assert!(node.verify_container_token(&container, 2_000).is_err());

        node.set_keys(
            Some(&key(rm_nm.current_key())),
            Some(&key(rm_containers.current_key())),
        );
        assert_eq!(
            node.grant(&token.identifier).unwrap().password,
            token.password.to_vec()
        );
        assert!(node.verify_container_token(&container, 2_000).is_ok());

        // A resync brings the ResourceManager's next keys; the previous ones still work.
        rm_nm.roll_master_key();
        rm_containers.roll_master_key();
        node.set_keys(
            Some(&key(rm_nm.current_key())),
            Some(&key(rm_containers.current_key())),
        );
        assert!(node.grant(&token.identifier).is_ok());
        assert!(node.verify_container_token(&container, 2_000).is_ok());
        let fresh = rm_nm.create_token(&attempt(), &node.node, "alice");
        assert!(node.grant(&fresh.identifier).is_ok());
    }
}
