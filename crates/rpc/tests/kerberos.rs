//! SASL `KERBEROS` (GSSAPI) between Tusk's RPC client and server, through a real MIT
//! KDC: a ticket holder is served as its principal's short name; a SIMPLE client, a
//! client without a ticket and a ticket holder claiming another user are refused with
//! the exceptions Hadoop's server sends.
//!
//! One test function: the GSS-API library reads `KRB5_CONFIG` and `KRB5CCNAME` from
//! the environment, which is set before any exchange.

#[path = "support/refusal.rs"]
mod support_refusal;

use std::sync::Arc;
use support_refusal::refusal;

use bytes::Bytes;
use std::sync::Mutex;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tusk_common::Shutdown;
use tusk_rpc::auth::KerberosService;
use tusk_rpc::{
    CallContext, CallOutcome, ConnectRetry, HadoopException, RpcClient, RpcClientOptions, RpcError,
    RpcServer, RpcService,
};
use tusk_security::kdc::Kdc;
use tusk_security::kerberos::{AuthToLocal, KerberosLogin, Principal, ServiceCredentials};
use tusk_security::Protection;
use tusk_security::{InvalidToken, ProxyUsers, TokenAuthority, TokenGrant};

const PROTOCOL: &str = "test.WhoAmI";

/// Answers every call with the connection's user.
struct WhoAmI;

impl RpcService for WhoAmI {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, request: Bytes) -> CallOutcome {
        match method {
            "echo" => CallOutcome::Now(Ok(request)),
            _ => CallOutcome::Now(Ok(Bytes::from(ctx.user.to_string()))),
        }
    }
}

fn client(addr: std::net::SocketAddr, user: &str, kerberos: Option<KerberosLogin>) -> RpcClient {
    client_with(addr, user, kerberos, &[Protection::Authentication])
}

fn client_with(
    addr: std::net::SocketAddr,
    user: &str,
    kerberos: Option<KerberosLogin>,
    protection: &[Protection],
) -> RpcClient {
    RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            user: user.into(),
            protocol: PROTOCOL.into(),
            connect_retry: ConnectRetry::NONE,
            kerberos,
            protection: protection.to_vec(),
            ..Default::default()
        },
    )
}

/// Forwards one connection at a time from its own port to `to`, keeping every byte
/// that passes in either direction: what a capture of the link would see.
async fn recording_proxy(to: std::net::SocketAddr) -> (std::net::SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let outbound = TcpStream::connect(to).await.unwrap();
            let (ir, iw) = inbound.into_split();
            let (or, ow) = outbound.into_split();
            for (mut from, mut to, seen) in [
                (
                    Box::new(ir) as Box<dyn AsyncRead + Unpin + Send>,
                    Box::new(ow) as Box<dyn AsyncWrite + Unpin + Send>,
                    kept.clone(),
                ),
                (Box::new(or), Box::new(iw), kept.clone()),
            ] {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = from.read(&mut buf).await {
                        if n == 0 || to.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        seen.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                });
            }
        }
    });
    (addr, seen)
}

async fn whoami(client: &RpcClient) -> Result<String, RpcError> {
    let reply = client.call_raw("whoami", &[]).await?;
    Ok(String::from_utf8(reply.to_vec()).unwrap())
}

#[tokio::test]
async fn kerberos_clients_are_served_as_their_principal_and_others_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let kdc = Kdc::start(dir.path(), "TUSK.TEST").expect("a KDC (Debian's krb5-kdc)");
    let nn = Principal::with_host("nn/_HOST@TUSK.TEST", "localhost").unwrap();
    let keytab = kdc.add_principal(&nn.to_string()).unwrap();
    let cache = kdc.add_user("alice").unwrap();
    for (k, v) in kdc.user_env(&cache) {
        std::env::set_var(k, v);
    }

    let credentials = ServiceCredentials::from_keytab(nn, &keytab).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let server = RpcServer::new(vec![Arc::new(WhoAmI)])
        .with_kerberos(KerberosService {
            credentials: Arc::new(credentials),
            protection: vec![Protection::Authentication],
            auth_to_local: AuthToLocal::default(),
        })
        .with_proxy_users(ProxyUsers::from_pairs([
            ("hadoop.proxyuser.alice.hosts", "127.0.0.1"),
            ("hadoop.proxyuser.alice.users", "oozie"),
        ]));
    tokio::spawn(server.serve(listener, shutdown.clone()));

    // Hadoop's client names the full principal; the short one is taken too, and no
    // name means the ticket's.
    for claimed in ["alice@TUSK.TEST", "alice", ""] {
        let alice = client(addr, claimed, Some(KerberosLogin::TicketCache));
        assert_eq!(whoami(&alice).await.unwrap(), "alice");
        assert_eq!(whoami(&alice).await.unwrap(), "alice", "same connection");
        assert_eq!(alice.connect_attempts(), 1);
    }

    let simple = client(addr, "alice", None);
    assert_eq!(
        refusal(whoami(&simple).await),
        (
            HadoopException::AccessControl,
            "SIMPLE authentication is not enabled.  Available:[KERBEROS]".into()
        )
    );

    // Alice may act for oozie (a proxy rule), not for hdfs.
    let proxied = client(addr, "oozie", Some(KerberosLogin::TicketCache));
    assert_eq!(whoami(&proxied).await.unwrap(), "oozie");
    let impostor = client(addr, "hdfs", Some(KerberosLogin::TicketCache));
    assert_eq!(
        refusal(whoami(&impostor).await),
        (
            HadoopException::AccessControl,
            "User: alice@TUSK.TEST is not allowed to impersonate hdfs".into()
        )
    );

    // An empty credential cache: the client cannot even begin.
    std::env::set_var(
        "KRB5CCNAME",
        format!("FILE:{}", dir.path().join("nobody.cc").display()),
    );
    let err = whoami(&client(addr, "alice", Some(KerberosLogin::TicketCache)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("GSS initiate failed"), "{err}");

    // The server is still serving.
    std::env::set_var("KRB5CCNAME", format!("FILE:{}", cache.display()));
    assert_eq!(
        whoami(&client(addr, "alice", Some(KerberosLogin::TicketCache)))
            .await
            .unwrap(),
        "alice"
    );
    // Privacy: every call and reply is wrapped and encrypted; a capture of the link
    // holds none of the plain text, even of messages larger than one wrapped token.
    let keytab_again = kdc.add_principal("nn/127.0.0.1@TUSK.TEST").unwrap();
    let private_nn = Principal::parse("nn/127.0.0.1@TUSK.TEST").unwrap();
    let credentials = ServiceCredentials::from_keytab(private_nn, &keytab_again).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let private_addr = listener.local_addr().unwrap();
    let server = RpcServer::new(vec![Arc::new(WhoAmI)]).with_kerberos(KerberosService {
        credentials: Arc::new(credentials),
        protection: vec![Protection::Privacy],
        // This server names alice by a rule of its own.
        auth_to_local: AuthToLocal::parse("RULE:[1:$1@$0](alice@TUSK.TEST)s/.*/alicia/ DEFAULT")
            .unwrap(),
    });
    tokio::spawn(server.serve(listener, shutdown.clone()));
    let (proxy, seen) = recording_proxy(private_addr).await;
    let private = client_with(
        proxy,
        "",
        Some(KerberosLogin::TicketCache),
        &[Protection::Authentication, Protection::Privacy],
    );
    assert_eq!(whoami(&private).await.unwrap(), "alicia");
    let secret: Vec<u8> = b"the-secret-payload-"
        .iter()
        .copied()
        .cycle()
        .take(300 * 1024)
        .collect();
    let echoed = private.call_raw("echo", &secret).await.unwrap();
    assert_eq!(echoed.as_ref(), secret.as_slice());
    let calls: Vec<_> = (0..50)
        .map(|i| {
            let private = &private;
            async move {
                private
                    .call_raw("echo", format!("call-{i}").as_bytes())
                    .await
            }
        })
        .collect();
    for (i, r) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(r.unwrap().as_ref(), format!("call-{i}").as_bytes());
    }
    let wire = seen.lock().unwrap().clone();
    assert!(wire.len() > secret.len() * 2, "both ways captured");
    for plain in [
        &b"the-secret-payload"[..],
        b"call-7",
        b"whoami",
        PROTOCOL.as_bytes(),
    ] {
        assert!(
            !wire.windows(plain.len()).any(|w| w == plain),
            "{} on the wire",
            String::from_utf8_lossy(plain)
        );
    }
    // A client that will not go beyond authentication finds no layer in common.
    let weak = client(private_addr, "", Some(KerberosLogin::TicketCache));
    let err = whoami(&weak).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("no protection this client accepts"),
        "{err}"
    );

    // A service logs in from its keytab, whatever the credential cache holds.
    let dn = Principal::with_host("dn/_HOST@TUSK.TEST", "localhost").unwrap();
    let dn_keytab = kdc.add_principal(&dn.to_string()).unwrap();
    let datanode = client(addr, "", Some(KerberosLogin::Keytab(dn_keytab.clone())));
    assert_eq!(whoami(&datanode).await.unwrap(), "dn");

    // A protocol only DataNodes may call: their principal is served, alice is not.
    let nn = Principal::with_host("nn/_HOST@TUSK.TEST", "localhost").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let guarded = listener.local_addr().unwrap();
    let server = RpcServer::new(vec![Arc::new(WhoAmI)])
        .with_kerberos(KerberosService {
            credentials: Arc::new(ServiceCredentials::from_keytab(nn, &keytab).unwrap()),
            protection: vec![Protection::Authentication],
            auth_to_local: AuthToLocal::default(),
        })
        .with_token_authority(Arc::new(CarolsToken))
        .with_client_principal(PROTOCOL, Principal::parse("dn/_HOST@TUSK.TEST").unwrap());
    tokio::spawn(server.serve(listener, shutdown.clone()));
    let datanode = client(guarded, "", Some(KerberosLogin::Keytab(dn_keytab)));
    assert_eq!(whoami(&datanode).await.unwrap(), "dn");
    let stranger = client(guarded, "", Some(KerberosLogin::TicketCache));
    assert_eq!(
        refusal(whoami(&stranger).await),
        (
            HadoopException::Authorization,
            format!("User alice@TUSK.TEST (auth:KERBEROS) is not authorized for protocol interface {PROTOCOL}: this service is only accessible by dn/_HOST@TUSK.TEST")
        )
    );
    // A valid token is no DataNode principal either.
    let token_holder = RpcClient::new(
        guarded.to_string(),
        RpcClientOptions {
            user: "carol".into(),
            protocol: PROTOCOL.into(),
            connect_retry: ConnectRetry::NONE,
            token: Some(tusk_proto::common::TokenProto {
                identifier: Bytes::from_static(b"carol's token"),
                password: Bytes::from_static(b"carol's password"),
                kind: "HDFS_DELEGATION_TOKEN".into(),
                service: guarded.to_string(),
            }),
            ..Default::default()
        },
    );
    assert_eq!(
        refusal(whoami(&token_holder).await),
        (
            HadoopException::Authorization,
            format!("User carol (auth:TOKEN) is not authorized for protocol interface {PROTOCOL}: this service is only accessible by dn/_HOST@TUSK.TEST")
        )
    );
    shutdown.trigger();
}

/// One valid token, carol's.
struct CarolsToken;

impl TokenAuthority for CarolsToken {
    fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
        (identifier == b"carol's token")
            .then(|| TokenGrant {
                password: b"carol's password".to_vec(),
                user: "carol".into(),
            })
            .ok_or_else(|| InvalidToken::new("not carol's token"))
    }
}
