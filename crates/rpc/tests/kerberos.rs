//! SASL `KERBEROS` (GSSAPI) between Tusk's RPC client and server, through a real MIT
//! KDC: a ticket holder is served as its principal's short name; a SIMPLE client, a
//! client without a ticket and a ticket holder claiming another user are refused with
//! the exceptions Hadoop's server sends.
//!
//! One test function: the GSS-API library reads `KRB5_CONFIG` and `KRB5CCNAME` from
//! the environment, which is set before any exchange.

use std::sync::Arc;

use bytes::Bytes;
use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_rpc::{
    CallContext, CallOutcome, ConnectRetry, HadoopException, RpcClient, RpcClientOptions, RpcError,
    RpcServer, RpcService,
};
use tusk_security::kdc::Kdc;
use tusk_security::kerberos::{KerberosLogin, Principal, ServiceCredentials};

const PROTOCOL: &str = "test.WhoAmI";

/// Answers every call with the connection's user.
struct WhoAmI;

impl RpcService for WhoAmI {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, _: &str, _: Bytes) -> CallOutcome {
        CallOutcome::Now(Ok(Bytes::from(ctx.user.to_string())))
    }
}

fn client(addr: std::net::SocketAddr, user: &str, kerberos: Option<KerberosLogin>) -> RpcClient {
    RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            user: user.into(),
            protocol: PROTOCOL.into(),
            connect_retry: ConnectRetry::NONE,
            kerberos,
            ..Default::default()
        },
    )
}

async fn whoami(client: &RpcClient) -> Result<String, RpcError> {
    let reply = client.call_raw("whoami", &[]).await?;
    Ok(String::from_utf8(reply.to_vec()).unwrap())
}

fn remote(result: Result<String, RpcError>) -> (HadoopException, String) {
    let err = result.expect_err("the call was refused");
    let remote = err
        .remote()
        .unwrap_or_else(|| panic!("not a remote exception: {err}"));
    (
        remote.exception().expect("a class Tusk knows"),
        remote.message.clone(),
    )
}

#[tokio::test]
async fn kerberos_clients_are_served_as_their_principal_and_others_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let kdc = Kdc::start(dir.path(), "TUSK.TEST").expect("a KDC (Debian's krb5-kdc)");
    let nn = Principal::with_host("nn/_HOST@TUSK.TEST", "localhost").unwrap();
    let keytab = kdc.add_principal(&nn.to_string()).unwrap();
    let alice_keytab = kdc.add_principal("alice").unwrap();
    let cache = dir.path().join("alice.cc");
    kdc.kinit("alice", &alice_keytab, &cache).unwrap();
    for (k, v) in kdc.env() {
        std::env::set_var(k, v);
    }
    std::env::set_var("KRB5CCNAME", format!("FILE:{}", cache.display()));

    let credentials = ServiceCredentials::from_keytab(nn, &keytab).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = Shutdown::new();
    let server = RpcServer::new(vec![Arc::new(WhoAmI)]).with_kerberos(Arc::new(credentials));
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
        remote(whoami(&simple).await),
        (
            HadoopException::AccessControl,
            "SIMPLE authentication is not enabled.  Available:[KERBEROS]".into()
        )
    );

    let impostor = client(addr, "hdfs", Some(KerberosLogin::TicketCache));
    assert_eq!(
        remote(whoami(&impostor).await),
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
    // A service logs in from its keytab, whatever the credential cache holds.
    let dn = Principal::with_host("dn/_HOST@TUSK.TEST", "localhost").unwrap();
    let dn_keytab = kdc.add_principal(&dn.to_string()).unwrap();
    let datanode = client(addr, "", Some(KerberosLogin::Keytab(dn_keytab)));
    assert_eq!(whoami(&datanode).await.unwrap(), "dn");
    shutdown.trigger();
}
