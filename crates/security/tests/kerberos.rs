//! SASL GSSAPI between [`GssapiClient`] and [`GssapiServer`] through a real MIT KDC.
//!
//! One test function: the GSS-API library reads `KRB5_CONFIG` and `KRB5CCNAME` from
//! the environment, which is set once, before any exchange.

use tusk_security::kdc::Kdc;
use tusk_security::kerberos::{
    GssapiClient, GssapiServer, GssapiStep, KerberosError, KerberosLogin, Principal,
    ServiceCredentials,
};

const REALM: &str = "TUSK.TEST";

/// Runs the exchange to its end; the server's verdict.
fn exchange(client: &mut GssapiClient, server: &mut GssapiServer) -> Result<String, KerberosError> {
    let mut token = client.start()?;
    loop {
        match server.step(&token)? {
            GssapiStep::Authenticated { principal } => return Ok(principal),
            GssapiStep::Challenge(challenge) => token = client.respond(&challenge)?,
        }
    }
}

#[test]
fn a_ticket_holder_is_authenticated_and_a_stranger_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let kdc = Kdc::start(dir.path(), REALM).expect("a KDC (Debian's krb5-kdc)");
    let nn = Principal::with_host("nn/_HOST@TUSK.TEST", "localhost").unwrap();
    let nn_keytab = kdc.add_principal(&nn.to_string()).unwrap();
    let alice_keytab = kdc.add_principal("alice").unwrap();
    let cache = dir.path().join("alice.cc");
    kdc.kinit("alice", &alice_keytab, &cache).unwrap();
    for (k, v) in kdc.env() {
        std::env::set_var(k, v);
    }
    std::env::set_var("KRB5CCNAME", format!("FILE:{}", cache.display()));

    let creds = ServiceCredentials::from_keytab(nn.clone(), &nn_keytab).unwrap();
    let mut server = GssapiServer::new(&creds);
    let mut client = GssapiClient::new("nn", "localhost", &KerberosLogin::TicketCache).unwrap();
    let principal = exchange(&mut client, &mut server).unwrap();
    assert_eq!(principal, "alice@TUSK.TEST");
    assert_eq!(
        Principal::parse(&principal)
            .unwrap()
            .short_name(REALM)
            .unwrap(),
        "alice"
    );

    // A service the realm does not know: no ticket can be had for it.
    let mut client = GssapiClient::new("nosuch", "localhost", &KerberosLogin::TicketCache).unwrap();
    let err = client.start().unwrap_err().to_string();
    assert!(err.contains("not found in Kerberos database"), "{err}");

    // A keytab of another service cannot accept a ticket for nn.
    let dn = Principal::with_host("dn/_HOST@TUSK.TEST", "localhost").unwrap();
    let dn_keytab = kdc.add_principal(&dn.to_string()).unwrap();
    let dn_creds = ServiceCredentials::from_keytab(dn, &dn_keytab).unwrap();
    let mut client = GssapiClient::new("nn", "localhost", &KerberosLogin::TicketCache).unwrap();
    let mut wrong = GssapiServer::new(&dn_creds);
    assert!(exchange(&mut client, &mut wrong).is_err());

    // Without a ticket (an empty cache) the client cannot begin.
    std::env::set_var(
        "KRB5CCNAME",
        format!("FILE:{}", dir.path().join("nobody.cc").display()),
    );
    let mut client = GssapiClient::new("nn", "localhost", &KerberosLogin::TicketCache).unwrap();
    assert!(client.start().is_err());
}
