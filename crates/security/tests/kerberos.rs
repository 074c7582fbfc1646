//! SASL GSSAPI between [`GssapiClient`] and [`GssapiServer`] through a real MIT KDC.
//!
//! One test function: the GSS-API library reads `KRB5_CONFIG` and `KRB5CCNAME` from
//! the environment, which is set once, before any exchange.

use tusk_security::kdc::Kdc;
use tusk_security::kerberos::{
    AuthToLocal, GssapiClient, GssapiServer, GssapiStep, KerberosError, KerberosLogin, Principal,
    ServiceCredentials,
};
use tusk_security::Protection;

const REALM: &str = "TUSK.TEST";
const AUTH: &[Protection] = &[Protection::Authentication];

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
    let cache = kdc.add_user("alice").unwrap();
    for (k, v) in kdc.user_env(&cache) {
        std::env::set_var(k, v);
    }

    let creds = ServiceCredentials::from_keytab(nn.clone(), &nn_keytab).unwrap();
    let mut server = GssapiServer::new(&creds, AUTH);
    let mut client =
        GssapiClient::new("nn", "localhost", &KerberosLogin::TicketCache, AUTH).unwrap();
    let principal = exchange(&mut client, &mut server).unwrap();
    assert_eq!(principal, "alice@TUSK.TEST");
    assert_eq!(
        AuthToLocal::default()
            .short_name(&Principal::parse(&principal).unwrap(), REALM)
            .unwrap(),
        "alice"
    );

    // Privacy: the strongest layer both accept; what one side wraps only the other
    // unwraps, and the wire does not carry the plain text.
    let mut server = GssapiServer::new(&creds, &[Protection::Integrity, Protection::Privacy]);
    let mut client = GssapiClient::new(
        "nn",
        "localhost",
        &KerberosLogin::TicketCache,
        &[Protection::Authentication, Protection::Privacy],
    )
    .unwrap();
    assert_eq!(
        exchange(&mut client, &mut server).unwrap(),
        "alice@TUSK.TEST"
    );
    let mut server_layer = server.into_layer().expect("a layer");
    let mut client_layer = client.into_layer().expect("a layer");
    assert_eq!(client_layer.protection, Protection::Privacy);
    let secret = b"the contents of /secret/file";
    let token = client_layer.wrap(secret).unwrap();
    assert!(
        !token.windows(secret.len()).any(|w| w == secret),
        "encrypted"
    );
    assert_eq!(server_layer.unwrap(&token).unwrap(), secret);
    let reply = server_layer.wrap(b"ok").unwrap();
    assert_eq!(client_layer.unwrap(&reply).unwrap(), b"ok");
    let mut tampered = server_layer.wrap(b"ok").unwrap();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    assert!(client_layer.unwrap(&tampered).is_err(), "integrity checked");

    // No layer in common: the client refuses the offer.
    let mut server = GssapiServer::new(&creds, &[Protection::Integrity]);
    let mut client = GssapiClient::new(
        "nn",
        "localhost",
        &KerberosLogin::TicketCache,
        &[Protection::Privacy],
    )
    .unwrap();
    let err = exchange(&mut client, &mut server).unwrap_err().to_string();
    assert!(err.contains("no protection this client accepts"), "{err}");

    // A service the realm does not know: no ticket can be had for it.
    let mut client =
        GssapiClient::new("nosuch", "localhost", &KerberosLogin::TicketCache, AUTH).unwrap();
    let err = client.start().unwrap_err().to_string();
    assert!(err.contains("not found in Kerberos database"), "{err}");

    // A keytab of another service cannot accept a ticket for nn.
    let dn = Principal::with_host("dn/_HOST@TUSK.TEST", "localhost").unwrap();
    let dn_keytab = kdc.add_principal(&dn.to_string()).unwrap();
    let dn_creds = ServiceCredentials::from_keytab(dn, &dn_keytab).unwrap();
    let mut client =
        GssapiClient::new("nn", "localhost", &KerberosLogin::TicketCache, AUTH).unwrap();
    let mut wrong = GssapiServer::new(&dn_creds, AUTH);
    assert!(exchange(&mut client, &mut wrong).is_err());

    // Without a ticket (an empty cache) the client cannot begin.
    std::env::set_var(
        "KRB5CCNAME",
        format!("FILE:{}", dir.path().join("nobody.cc").display()),
    );
    let mut client =
        GssapiClient::new("nn", "localhost", &KerberosLogin::TicketCache, AUTH).unwrap();
    assert!(client.start().is_err());
}
