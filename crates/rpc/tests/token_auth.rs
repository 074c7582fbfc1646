//! SASL `TOKEN` auth (DIGEST-MD5) between Tusk's RPC client and server: a token's
//! holder is served as the token's user and the service sees the checked identifier; a
//! wrong password, an unknown identifier and a SIMPLE client of a token-only protocol are
//! each refused with the exception Hadoop's server sends, and the server goes on
//! serving others. Under `hadoop.rpc.protection` integrity or privacy, DIGEST-MD5's
//! layer wraps every later message both ways.

#[path = "support/amrm.rs"]
mod support_amrm;
#[path = "support/refusal.rs"]
mod support_refusal;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use support_refusal::refusal;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tusk_common::Shutdown;
use tusk_proto::common::TokenProto;
use tusk_rpc::{
    CallContext, CallOutcome, ConnectRetry, HadoopException, RpcClient, RpcClientOptions, RpcError,
    RpcServer, RpcService,
};
use tusk_security::{InvalidToken, TokenAuthority, TokenGrant};

const GUARDED: &str = "test.Guarded";
const OPEN: &str = "test.Open";

/// Knows one token: identifier `attempt-1`, password `secret`, user `appattempt_1`.
struct OneToken;

impl TokenAuthority for OneToken {
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
        if identifier == b"attempt-1" {
            Ok(TokenGrant {
                password: b"secret".to_vec(),
                user: "appattempt_1".into(),
            })
        } else {
            Err(InvalidToken::new(format!(
                "Given token {} seems to have been generated illegally.",
                String::from_utf8_lossy(identifier)
            )))
        }
    }
}

/// Answers every call with `user`, a newline and the connection's token identifier.
struct WhoAmI {
    protocol: &'static str,
    requires_token: bool,
}

impl RpcService for WhoAmI {
    fn protocol(&self) -> &'static str {
        self.protocol
    }

    fn call(self: Arc<Self>, ctx: CallContext, _: &str, _: Bytes) -> CallOutcome {
        let mut reply = format!("{}\n", ctx.user).into_bytes();
        reply.extend_from_slice(ctx.token.as_deref().unwrap_or(b"-"));
        CallOutcome::Now(Ok(reply.into()))
    }

    fn requires_token(&self) -> bool {
        self.requires_token
    }
}

/// A server with the token authority serving the guarded protocol, and the open one
/// too when `with_open`.
async fn server(with_open: bool) -> (std::net::SocketAddr, Shutdown) {
    let mut services: Vec<Arc<dyn RpcService>> = vec![Arc::new(WhoAmI {
        protocol: GUARDED,
        requires_token: true,
    })];
    if with_open {
        services.push(Arc::new(WhoAmI {
            protocol: OPEN,
            requires_token: false,
        }));
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let rpc = RpcServer::new(services).with_token_authority(Arc::new(OneToken));
    tokio::spawn(rpc.serve(listener, shutdown.clone()));
    (addr, shutdown)
}

fn client(addr: std::net::SocketAddr, protocol: &str, token: Option<(&str, &str)>) -> RpcClient {
    RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            user: "bob".into(),
            protocol: protocol.into(),
            connect_retry: ConnectRetry::NONE,
            token: token.map(|(id, password)| TokenProto {
                identifier: Bytes::copy_from_slice(id.as_bytes()),
                password: Bytes::copy_from_slice(password.as_bytes()),
                kind: "YARN_AM_RM_TOKEN".into(),
                service: addr.to_string(),
            }),
            ..Default::default()
        },
    )
}

async fn whoami(client: &RpcClient) -> Result<String, RpcError> {
    let reply = client.call_raw("whoami", &[]).await?;
    Ok(String::from_utf8(reply.to_vec()).unwrap())
}

#[tokio::test]
async fn a_token_holder_is_served_as_the_tokens_user() {
    let (addr, shutdown) = server(false).await;
    let good = client(addr, GUARDED, Some(("attempt-1", "secret")));
    assert_eq!(whoami(&good).await.unwrap(), "appattempt_1\nattempt-1");
    // Later calls ride the same authenticated connection.
    assert_eq!(whoami(&good).await.unwrap(), "appattempt_1\nattempt-1");
    assert_eq!(good.connect_attempts(), 1);
    shutdown.trigger();
}

#[tokio::test]
async fn bad_tokens_and_simple_clients_are_refused_and_the_server_goes_on() {
    let (addr, shutdown) = server(false).await;

    let wrong_password = client(addr, GUARDED, Some(("attempt-1", "guess")));
    assert_eq!(
        refusal(whoami(&wrong_password).await),
        (
            HadoopException::Sasl,
            "DIGEST-MD5: digest response format violation. Mismatched response.".into()
        )
    );

    let unknown = client(addr, GUARDED, Some(("attempt-9", "secret")));
    assert_eq!(
        refusal(whoami(&unknown).await),
        (
            HadoopException::InvalidToken,
            "Given token attempt-9 seems to have been generated illegally.".into()
        )
    );

    let simple = client(addr, GUARDED, None);
    assert_eq!(
        refusal(whoami(&simple).await),
        (
            HadoopException::AccessControl,
            "SIMPLE authentication is not enabled.  Available:[TOKEN]".into()
        )
    );

    let good = client(addr, GUARDED, Some(("attempt-1", "secret")));
    assert_eq!(whoami(&good).await.unwrap(), "appattempt_1\nattempt-1");
    shutdown.trigger();
}

#[tokio::test]
async fn beside_an_open_protocol_simple_clients_reach_only_that_one() {
    let (addr, shutdown) = server(true).await;
    let open = client(addr, OPEN, None);
    assert_eq!(whoami(&open).await.unwrap(), "bob\n-");

    let simple_guarded = client(addr, GUARDED, None);
    assert_eq!(
        refusal(whoami(&simple_guarded).await),
        (
            HadoopException::AccessControl,
            "SIMPLE authentication is not enabled.  Available:[TOKEN, SIMPLE]".into()
        )
    );
    // The refusal is the call's, not the connection's.
    assert_eq!(whoami(&open).await.unwrap(), "bob\n-");

    let token_open = client(addr, OPEN, Some(("attempt-1", "secret")));
    assert_eq!(
        whoami(&token_open).await.unwrap(),
        "appattempt_1\nattempt-1"
    );
    shutdown.trigger();
}

#[tokio::test]
async fn an_amrm_token_from_the_secret_manager_authenticates_its_attempt() {
    use prost::Message;
    use tusk_proto::hadoop::yarn::AmrmTokenIdentifierProto;
    use tusk_security::AmrmTokenSecretManager;

    let secrets = Arc::new(AmrmTokenSecretManager::new());
    let whoami_service = Arc::new(WhoAmI {
        protocol: GUARDED,
        requires_token: true,
    });
    let (addr, shutdown) =
        support_amrm::serve_with_amrm_tokens(vec![whoami_service], &secrets).await;
    let attempt = support_amrm::attempt();
    let token = secrets.create_token(&attempt);
    let am = RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            protocol: GUARDED.into(),
            connect_retry: ConnectRetry::NONE,
            token: Some(token.clone()),
            ..Default::default()
        },
    );
    let reply = am.call_raw("whoami", &[]).await.unwrap();
    let (user, identifier) = reply.split_at(reply.iter().position(|&b| b == b'\n').unwrap());
    assert_eq!(user, b"appattempt_1700000000000_0004_000001");
    let seen = AmrmTokenIdentifierProto::decode(&identifier[1..]).unwrap();
    assert_eq!(seen.app_attempt_id, Some(attempt));

    // Once the attempt is over, a new connection with its token is refused.
    secrets.application_finished(&attempt);
    let late = RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            protocol: GUARDED.into(),
            connect_retry: ConnectRetry::NONE,
            token: Some(token),
            ..Default::default()
        },
    );
    assert_eq!(
        refusal(whoami(&late).await),
        (
            HadoopException::InvalidToken,
            "appattempt_1700000000000_0004_000001 not found in AMRMTokenSecretManager.".into()
        )
    );
    shutdown.trigger();
}

/// A proxy from its own port to `to` that keeps every byte passing either way. Each
/// connection is one loop passing on whichever side spoke, one direction at a time: as
/// RPC's calls and replies take turns.
async fn recording_proxy(to: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let wire = Arc::new(Mutex::new(Vec::new()));
    let kept = wire.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let mut server = TcpStream::connect(to).await.unwrap();
            let kept = kept.clone();
            tokio::spawn(async move {
                let (mut up, mut down) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
                loop {
                    let (read, bytes, onward) = tokio::select! {
                        read = client.read(&mut up) => (read, &up, &mut server),
                        read = server.read(&mut down) => (read, &down, &mut client),
                    };
                    let Ok(n @ 1..) = read else { break };
                    kept.lock().unwrap().extend_from_slice(&bytes[..n]);
                    if onward.write_all(&bytes[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (addr, wire)
}

#[tokio::test]
async fn token_clients_wrap_every_message_under_privacy() {
    use tusk_security::Protection;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let services: Vec<Arc<dyn RpcService>> = vec![Arc::new(WhoAmI {
        protocol: GUARDED,
        requires_token: true,
    })];
    let rpc = RpcServer::new(services)
        .with_token_authority(Arc::new(OneToken))
        .with_protection(vec![Protection::Privacy, Protection::Integrity]);
    tokio::spawn(rpc.serve(listener, shutdown.clone()));

    // Every byte between the client and the server, recorded by a proxy.
    let (proxy_addr, wire) = recording_proxy(addr).await;

    for (wanted, shows) in [(Protection::Privacy, false), (Protection::Integrity, true)] {
        wire.lock().unwrap().clear();
        let private = RpcClient::new(
            proxy_addr.to_string(),
            RpcClientOptions {
                user: "bob".into(),
                protocol: GUARDED.into(),
                connect_retry: ConnectRetry::NONE,
                token: Some(TokenProto {
                    identifier: Bytes::from_static(b"attempt-1"),
                    password: Bytes::from_static(b"secret"),
                    kind: "YARN_AM_RM_TOKEN".into(),
                    service: addr.to_string(),
                }),
                protection: vec![wanted],
                ..Default::default()
            },
        );
        for _ in 0..3 {
            assert_eq!(whoami(&private).await.unwrap(), "appattempt_1\nattempt-1");
        }
        let big = vec![b'z'; 200_000];
        let reply = private.call_raw("whoami", &big).await.unwrap();
        assert!(reply.starts_with(b"appattempt_1"));
        let wire = wire.lock().unwrap().clone();
        let has = |needle: &[u8]| wire.windows(needle.len()).any(|w| w == needle);
        for plain in [&b"appattempt_1"[..], GUARDED.as_bytes(), b"whoami"] {
            assert_eq!(
                has(plain),
                shows,
                "{wanted:?}: {:?} on the wire",
                String::from_utf8_lossy(plain)
            );
        }
    }

    // A client that will not go beyond authentication finds no common layer.
    let weak = client(addr, GUARDED, Some(("attempt-1", "secret")));
    let e = whoami(&weak).await.unwrap_err().to_string();
    assert!(
        e.contains("No common protection layer between client and server"),
        "{e}"
    );
    shutdown.trigger();
}
