//! A server that takes YARN's AMRM tokens, and the attempt whose token the tests mint.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_proto::hadoop::yarn::{ApplicationAttemptIdProto, ApplicationIdProto};
use tusk_rpc::{RpcServer, RpcService};
use tusk_security::AmrmTokenSecretManager;

/// Serves `services` on a free port, checking AMRM tokens against `secrets`; the
/// server runs until the returned signal fires.
pub async fn serve_with_amrm_tokens(
    services: Vec<Arc<dyn RpcService>>,
    secrets: &Arc<AmrmTokenSecretManager>,
) -> (SocketAddr, Shutdown) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let rpc = RpcServer::new(services).with_token_authority(secrets.clone());
    tokio::spawn(rpc.serve(listener, shutdown.clone()));
    (addr, shutdown)
}

/// `appattempt_1700000000000_0004_000001`.
pub fn attempt() -> ApplicationAttemptIdProto {
    ApplicationAttemptIdProto {
        application_id: Some(ApplicationIdProto {
            id: Some(4),
            cluster_timestamp: Some(1_700_000_000_000),
        }),
        attempt_id: Some(1),
    }
}
