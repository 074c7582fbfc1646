//! SASL on one connection, as Hadoop's `Server.Connection` negotiates it.
//!
//! A server with neither tokens nor Kerberos is SIMPLE-only: NEGOTIATE gets SUCCESS at
//! once and a SIMPLE client's INITIATE gets no reply. A server given a
//! [`TokenAuthority`] offers `TOKEN` (DIGEST-MD5, protocol `""`, server id `default`),
//! with the first challenge in its NEGOTIATE reply; one given Kerberos credentials
//! offers `KERBEROS` (GSSAPI, protocol and server id the service principal's primary
//! and instance); SIMPLE is offered beside them only without Kerberos and unless every
//! protocol served requires a token. A right TOKEN response gets SUCCESS with
//! `rspauth`, and the connection runs as the token's user; a completed GSSAPI exchange
//! gets SUCCESS and the connection runs as the principal's short name. Every refusal
//! is a FATAL reply on the SASL call id followed by the connection's end, with the
//! exception Hadoop's server sends.

use std::sync::Arc;

use bytes::Bytes;
use tusk_proto::common::rpc_sasl_proto::{SaslAuth, SaslState};
use tusk_proto::common::RpcSaslProto;
use tusk_security::digest_md5::{self, DigestMd5Server};
use tusk_security::kerberos::{
    AuthToLocal, GssapiServer, GssapiStep, Principal, SaslLayer, ServiceCredentials,
};
use tusk_security::Protection;
use tusk_security::{SaslError, TokenAuthority, TokenGrant};

use crate::error::{RemoteException, RpcError};
use crate::exception::HadoopException;
use crate::frame::{
    sasl_message, SASL_DIGEST_MD5, SASL_GSSAPI, SASL_KERBEROS, SASL_SIMPLE, SASL_TOKEN,
};

/// How a server's clients authenticate: set once, shared by its connections.
#[derive(Default)]
pub(crate) struct ServerAuth {
    /// Checks `TOKEN` clients' tokens; `None`: TOKEN is not offered.
    pub(crate) tokens: Option<Arc<dyn TokenAuthority>>,
    /// The service's Kerberos identity; `None`: KERBEROS is not offered.
    pub(crate) kerberos: Option<Arc<ServiceCredentials>>,
    /// The security layers a Kerberos client may choose (`hadoop.rpc.protection`).
    pub(crate) protections: Vec<Protection>,
    /// Kerberos clients' principals to user names (`hadoop.security.auth_to_local`).
    pub(crate) auth_to_local: AuthToLocal,
    /// Whether SIMPLE is offered beside them.
    pub(crate) simple: bool,
}

impl ServerAuth {
    /// Whether anything but SIMPLE is offered (a SASL negotiation happens).
    pub(crate) fn negotiates(&self) -> bool {
        self.tokens.is_some() || self.kerberos.is_some()
    }

    /// Hadoop's list of enabled methods, as its messages print it.
    fn available(&self) -> String {
        let methods: Vec<&str> = [
            self.tokens.as_ref().map(|_| SASL_TOKEN),
            self.kerberos.as_ref().map(|_| SASL_KERBEROS),
            self.simple.then_some(SASL_SIMPLE),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!("[{}]", methods.join(", "))
    }

    /// The refusal of a client that wants `method`, which is not offered.
    pub(crate) fn not_enabled(&self, method: &str) -> RemoteException {
        RemoteException::of(
            HadoopException::AccessControl,
            format!(
                "{method} authentication is not enabled.  Available:{}",
                self.available()
            ),
        )
    }
}

/// What a SASL message leads to.
pub(crate) enum SaslStep {
    /// Send this message; negotiation goes on.
    Reply(RpcSaslProto),
    /// Nothing to send: a SIMPLE client goes on without waiting.
    Silent,
    /// The client proved it holds a valid token: send `reply` (SUCCESS), run the
    /// connection as the token's user, and wrap every message after the reply in
    /// `layer` when DIGEST-MD5 negotiated one (`auth-int`, `auth-conf`).
    Authenticated {
        reply: RpcSaslProto,
        grant: TokenGrant,
        identifier: Bytes,
        layer: Option<SaslLayer>,
    },
    /// The client holds a Kerberos ticket of `principal`: send `reply` (SUCCESS), run
    /// the connection as `user`, the principal's short name, and wrap every message
    /// after the reply in `layer` when one was chosen.
    Kerberos {
        reply: RpcSaslProto,
        principal: String,
        user: String,
        layer: Option<SaslLayer>,
    },
    /// Send this exception as a FATAL reply and close the connection.
    Refused(RemoteException),
}

/// One connection's side of the negotiation.
pub(crate) struct SaslSession {
    /// The server's methods; `None` on a SIMPLE-only server.
    auth: Option<Arc<ServerAuth>>,
    /// The DIGEST-MD5 exchange whose challenge was sent, waiting for the response.
    exchange: Option<DigestMd5Server>,
    /// The GSSAPI exchange under way.
    gssapi: Option<GssapiServer>,
    /// SUCCESS was sent (or SIMPLE chosen): no more negotiation.
    done: bool,
}

impl SaslSession {
    pub(crate) fn new(auth: Option<Arc<ServerAuth>>) -> Self {
        SaslSession {
            auth: auth.filter(|a| a.negotiates()),
            exchange: None,
            gssapi: None,
            done: false,
        }
    }

    /// The refusal of a connection that opened without SASL (auth protocol NONE), when
    /// SIMPLE is not offered; `None` when it may go on.
    pub(crate) fn refuse_plain(&self) -> Option<RemoteException> {
        self.auth
            .as_ref()
            .filter(|a| !a.simple)
            .map(|a| a.not_enabled(SASL_SIMPLE))
    }

    /// The next step for one SASL message from the client.
    pub(crate) fn step(&mut self, msg: &RpcSaslProto) -> Result<SaslStep, RpcError> {
        if self.done {
            return Ok(SaslStep::Refused(RemoteException::of(
                HadoopException::Sasl,
                "Negotiation is already complete",
            )));
        }
        let Some(auth) = self.auth.clone() else {
            return simple_only(msg.state());
        };
        match msg.state() {
            SaslState::Negotiate => Ok(SaslStep::Reply(self.negotiate(&auth))),
            SaslState::Initiate => self.initiate(&auth, msg),
            SaslState::Response if self.gssapi.is_some() => Ok(self.gssapi_step(&auth, msg)),
            SaslState::Response => Ok(self.response(&auth, msg)),
            other => Err(RpcError::Protocol(format!(
                "unexpected SASL state {other:?}"
            ))),
        }
    }

    /// The methods offered, TOKEN first with its challenge (Hadoop sends it at once to
    /// save a round trip), then KERBEROS.
    fn negotiate(&mut self, auth: &ServerAuth) -> RpcSaslProto {
        let mut auths = Vec::new();
        if auth.tokens.is_some() {
            let exchange =
                DigestMd5Server::new(digest_md5::RPC_PROTOCOL, digest_md5::RPC_SERVER_ID)
                    .with_protections(&auth.protections);
            auths.push(SaslAuth {
                challenge: Some(exchange.challenge().into()),
                ..token_auth()
            });
            self.exchange = Some(exchange);
        }
        if let Some(kerberos) = &auth.kerberos {
            auths.push(kerberos_auth(&kerberos.principal));
        }
        if auth.simple {
            auths.push(SaslAuth {
                method: SASL_SIMPLE.into(),
                mechanism: String::new(),
                protocol: None,
                server_id: None,
                challenge: None,
            });
        }
        sasl_message(SaslState::Negotiate, None, auths)
    }

    fn initiate(&mut self, auth: &ServerAuth, msg: &RpcSaslProto) -> Result<SaslStep, RpcError> {
        let [chosen] = msg.auths.as_slice() else {
            return Ok(SaslStep::Refused(RemoteException::of(
                HadoopException::Sasl,
                "Client mechanism is malformed",
            )));
        };
        if chosen.method == SASL_SIMPLE && auth.simple {
            self.done = true;
            return Ok(SaslStep::Silent);
        }
        if let Some(kerberos) = auth
            .kerberos
            .as_ref()
            .filter(|_| chosen.method == SASL_KERBEROS)
        {
            if *chosen != kerberos_auth(&kerberos.principal) {
                return Ok(SaslStep::Refused(RemoteException::of(
                    HadoopException::Sasl,
                    "Client mechanism is malformed",
                )));
            }
            self.gssapi = Some(GssapiServer::new(kerberos, &auth.protections));
            return Ok(self.gssapi_step(auth, msg));
        }
        if auth.tokens.is_none() || *chosen != token_auth() {
            return Ok(SaslStep::Refused(auth.not_enabled(&chosen.method)));
        }
        if self.exchange.is_none() {
            // No NEGOTIATE came first: the challenge goes out now.
            let exchange =
                DigestMd5Server::new(digest_md5::RPC_PROTOCOL, digest_md5::RPC_SERVER_ID)
                    .with_protections(&auth.protections);
            let challenge = exchange.challenge();
            self.exchange = Some(exchange);
            return Ok(SaslStep::Reply(sasl_message(
                SaslState::Challenge,
                Some(challenge.into()),
                vec![],
            )));
        }
        Ok(self.response(auth, msg))
    }

    /// One token of the client's GSSAPI exchange.
    fn gssapi_step(&mut self, auth: &ServerAuth, msg: &RpcSaslProto) -> SaslStep {
        let (Some(exchange), Some(kerberos)) = (self.gssapi.as_mut(), auth.kerberos.as_ref())
        else {
            return SaslStep::Refused(RemoteException::of(
                HadoopException::Sasl,
                "GSS initiate failed: no exchange under way",
            ));
        };
        let step = exchange
            .step(msg.token.as_deref().unwrap_or_default())
            .and_then(|step| match step {
                GssapiStep::Challenge(token) => Ok(SaslStep::Reply(sasl_message(
                    SaslState::Challenge,
                    Some(token.into()),
                    vec![],
                ))),
                GssapiStep::Authenticated { principal } => {
                    let user = auth
                        .auth_to_local
                        .short_name(&Principal::parse(&principal)?, &kerberos.principal.realm)?;
                    Ok(SaslStep::Kerberos {
                        reply: sasl_message(SaslState::Success, None, vec![]),
                        principal,
                        user,
                        layer: None,
                    })
                }
            });
        match step {
            Ok(SaslStep::Kerberos {
                reply,
                principal,
                user,
                ..
            }) => {
                self.done = true;
                let layer = self
                    .gssapi
                    .take()
                    .and_then(GssapiServer::into_layer)
                    .map(SaslLayer::Gssapi);
                SaslStep::Kerberos {
                    reply,
                    principal,
                    user,
                    layer,
                }
            }
            Ok(step) => step,
            Err(e) => SaslStep::Refused(RemoteException::of(
                HadoopException::Sasl,
                format!("GSS initiate failed [Caused by {e}]"),
            )),
        }
    }

    /// Checks the client's DIGEST-MD5 response against the authority.
    fn response(&mut self, auth: &ServerAuth, msg: &RpcSaslProto) -> SaslStep {
        let Some(exchange) = self.exchange.take() else {
            return SaslStep::Refused(RemoteException::of(
                HadoopException::Sasl,
                "DIGEST-MD5: response before any challenge",
            ));
        };
        let mut granted = None;
        let Some(tokens) = &auth.tokens else {
            return SaslStep::Refused(auth.not_enabled(SASL_TOKEN));
        };
        let verified = exchange.verify(msg.token.as_deref().unwrap_or_default(), |user| {
            let (password, grant) = digest_md5::token_password(tokens.as_ref(), user)?;
            granted = Some(grant);
            Ok(password)
        });
        match verified {
            Ok(done) => {
                let identifier = digest_md5::decode_username(&done.username)
                    .expect("a verified user name was decoded before");
                self.done = true;
                SaslStep::Authenticated {
                    reply: sasl_message(SaslState::Success, Some(done.rspauth.into()), vec![]),
                    grant: granted.expect("verify asked for the password"),
                    identifier: identifier.into(),
                    layer: done.layer.map(SaslLayer::Digest),
                }
            }
            Err(e) => SaslStep::Refused(refusal(e)),
        }
    }
}

/// A SIMPLE-only server's answer: SUCCESS to NEGOTIATE, nothing to a SIMPLE INITIATE.
fn simple_only(state: SaslState) -> Result<SaslStep, RpcError> {
    match state {
        SaslState::Negotiate => Ok(SaslStep::Reply(sasl_message(
            SaslState::Success,
            None,
            vec![],
        ))),
        SaslState::Initiate => Ok(SaslStep::Silent),
        other => Err(RpcError::Protocol(format!(
            "unexpected SASL state {other:?}"
        ))),
    }
}

/// The TOKEN method as offered (without its challenge), which the client's INITIATE
/// must name exactly.
fn token_auth() -> SaslAuth {
    SaslAuth {
        method: SASL_TOKEN.into(),
        mechanism: SASL_DIGEST_MD5.into(),
        protocol: Some(digest_md5::RPC_PROTOCOL.into()),
        server_id: Some(digest_md5::RPC_SERVER_ID.into()),
        challenge: None,
    }
}

/// The KERBEROS method as offered for service `principal` (`nn/host@REALM`: protocol
/// `nn`, server id `host`), which the client's INITIATE names again.
fn kerberos_auth(principal: &Principal) -> SaslAuth {
    SaslAuth {
        method: SASL_KERBEROS.into(),
        mechanism: SASL_GSSAPI.into(),
        protocol: Some(principal.primary.clone()),
        server_id: Some(principal.instance.clone().unwrap_or_default()),
        challenge: None,
    }
}

/// The exception Hadoop's server sends for a failed exchange: the secret manager's
/// `InvalidToken` when it refused the identifier, otherwise the SASL server's own
/// `SaslException` (Java's DIGEST-MD5 wording for a wrong password).
fn refusal(e: SaslError) -> RemoteException {
    match e {
        SaslError::InvalidToken(t) => RemoteException::of(HadoopException::InvalidToken, t.message),
        SaslError::Token(t) => RemoteException::of(HadoopException::InvalidToken, t.to_string()),
        SaslError::BadResponse => RemoteException::of(
            HadoopException::Sasl,
            "DIGEST-MD5: digest response format violation. Mismatched response.",
        ),
        other => RemoteException::of(HadoopException::Sasl, format!("DIGEST-MD5: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_security::digest_md5::DigestMd5Client;
    use tusk_security::InvalidToken;

    struct OneToken;

    impl TokenAuthority for OneToken {
        fn grant(&self, identifier: &[u8]) -> Result<TokenGrant, InvalidToken> {
            match identifier {
                b"id" => Ok(TokenGrant {
                    password: b"pw".to_vec(),
                    user: "owner".into(),
                }),
                _ => Err(InvalidToken::new("unknown")),
            }
        }
    }

    fn session(simple: bool) -> SaslSession {
        SaslSession::new(Some(Arc::new(ServerAuth {
            tokens: Some(Arc::new(OneToken)),
            kerberos: None,
            protections: vec![Protection::Authentication],
            auth_to_local: AuthToLocal::default(),
            simple,
        })))
    }

    fn initiate(method: &str, token: Option<Bytes>) -> RpcSaslProto {
        let auth = if method == SASL_TOKEN {
            token_auth()
        } else {
            SaslAuth {
                method: method.into(),
                mechanism: String::new(),
                protocol: None,
                server_id: None,
                challenge: None,
            }
        };
        sasl_message(SaslState::Initiate, token, vec![auth])
    }

    /// A client that skips NEGOTIATE gets the challenge on INITIATE and answers it in
    /// RESPONSE, as Hadoop's server allows.
    #[test]
    fn initiate_without_negotiate_gets_a_challenge_first() {
        let mut s = session(false);
        let SaslStep::Reply(challenge) = s.step(&initiate(SASL_TOKEN, None)).unwrap() else {
            panic!("expected a challenge");
        };
        assert_eq!(challenge.state(), SaslState::Challenge);
        let mut client = DigestMd5Client::for_token("", "default", b"id", b"pw");
        let response = client.respond(challenge.token()).unwrap();
        let reply = sasl_message(SaslState::Response, Some(response.into()), vec![]);
        let SaslStep::Authenticated {
            reply,
            grant,
            identifier,
            ..
        } = s.step(&reply).unwrap()
        else {
            panic!("expected success");
        };
        assert_eq!(reply.state(), SaslState::Success);
        client.check_server(reply.token()).unwrap();
        assert_eq!(
            (grant.user.as_str(), identifier.as_ref()),
            ("owner", &b"id"[..])
        );
        let SaslStep::Refused(again) = s.step(&initiate(SASL_TOKEN, None)).unwrap() else {
            panic!("a second negotiation is refused");
        };
        assert_eq!(again.message, "Negotiation is already complete");
    }

    #[test]
    fn simple_is_taken_only_where_offered() {
        let mut token_only = session(false);
        let SaslStep::Refused(e) = token_only.step(&initiate(SASL_SIMPLE, None)).unwrap() else {
            panic!("SIMPLE is not offered");
        };
        assert_eq!(e.exception(), Some(HadoopException::AccessControl));
        assert_eq!(
            e.message,
            "SIMPLE authentication is not enabled.  Available:[TOKEN]"
        );
        assert!(token_only.refuse_plain().is_some());

        let mut both = session(true);
        assert!(both.refuse_plain().is_none());
        let SaslStep::Reply(offer) = both
            .step(&sasl_message(SaslState::Negotiate, None, vec![]))
            .unwrap()
        else {
            panic!("expected the offer");
        };
        let methods: Vec<&str> = offer.auths.iter().map(|a| a.method.as_str()).collect();
        assert_eq!(methods, [SASL_TOKEN, SASL_SIMPLE]);
        assert!(offer.auths[0].challenge.is_some());
        assert!(matches!(
            both.step(&initiate(SASL_SIMPLE, None)).unwrap(),
            SaslStep::Silent
        ));

        let SaslStep::Refused(e) = session(true).step(&initiate("KERBEROS", None)).unwrap() else {
            panic!("KERBEROS is not offered");
        };
        assert_eq!(
            e.message,
            "KERBEROS authentication is not enabled.  Available:[TOKEN, SIMPLE]"
        );
    }
}
