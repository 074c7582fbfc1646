//! SASL DIGEST-MD5 (RFC 2831) with quality of protection `auth` only, both sides, over
//! a token: the client proves it holds the token's password without sending it. The
//! user name is the base64 of the token identifier, the password the base64 of the
//! token password (Hadoop's `SaslRpcServer.encodeIdentifier` / `encodePassword`).
//!
//! Two servers run it: a DataNode, when a client opens a data connection with HDFS's
//! SASL handshake over its block token (`hdfs-native` does whenever it holds one;
//! protocol `hdfs`, server name `0`), and the RPC server of a protocol that takes
//! tokens (YARN's AMRMToken, NMToken; protocol empty, server name `default`). `auth`
//! adds no security layer, so the connection carries plain messages afterwards.

use std::collections::HashMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use md5::{Digest, Md5};
use rand::RngCore;

use crate::block_token::BlockTokenSecretManager;
use crate::error::SaslError;
use crate::token_authority::{TokenAuthority, TokenGrant};

/// Hadoop RPC's SASL protocol and server name for `TOKEN` auth
/// (`SaslRpcServer.AuthMethod.TOKEN`, `SASL_DEFAULT_REALM`).
pub const RPC_PROTOCOL: &str = "";
pub const RPC_SERVER_ID: &str = "default";

/// One DIGEST-MD5 exchange: a challenge, then the check of the client's response.
pub struct DigestMd5Server {
    /// `protocol/server` as the client must name it in `digest-uri`.
    digest_uri: String,
    realm: String,
    nonce: String,
}

/// What a successful response proved.
#[derive(Debug)]
pub struct Authenticated {
    /// The client's user name (for a block token: the base64 identifier).
    pub username: String,
    /// The server's final message (`rspauth=...`), proving it knew the password too.
    pub rspauth: Vec<u8>,
}

impl DigestMd5Server {
    /// HDFS's DataNode uses protocol `hdfs` and server name `0`; the realm is the server
    /// name.
    pub fn new(protocol: &str, server_name: &str) -> Self {
        let mut nonce = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut nonce);
        DigestMd5Server {
            digest_uri: format!("{protocol}/{server_name}"),
            realm: server_name.to_string(),
            nonce: STANDARD.encode(nonce),
        }
    }

    pub fn challenge(&self) -> Vec<u8> {
        format!(
            "realm=\"{}\",nonce=\"{}\",qop=\"auth\",charset=utf-8,algorithm=md5-sess",
            self.realm, self.nonce
        )
        .into_bytes()
    }

    /// Checks the client's response; `password_for` gives the password of a user name.
    pub fn verify(
        &self,
        response: &[u8],
        password_for: impl FnOnce(&str) -> Result<String, SaslError>,
    ) -> Result<Authenticated, SaslError> {
        let text = std::str::from_utf8(response).map_err(|_| SaslError::Malformed {
            reason: "not UTF-8".into(),
        })?;
        let fields = parse_fields(text)?;
        let get = |name: &'static str| {
            fields
                .get(name)
                .map(String::as_str)
                .ok_or(SaslError::Malformed {
                    reason: format!("no {name}"),
                })
        };
        let expect = |field: &'static str, found: &str, expected: &str| {
            if found == expected {
                Ok(())
            } else {
                Err(SaslError::Mismatch {
                    field,
                    found: found.to_string(),
                    expected: expected.to_string(),
                })
            }
        };
        let username = get("username")?;
        let realm = fields
            .get("realm")
            .map_or(self.realm.as_str(), String::as_str);
        expect("realm", realm, &self.realm)?;
        expect("nonce", get("nonce")?, &self.nonce)?;
        expect("nc", get("nc")?, "00000001")?;
        expect(
            "qop",
            fields.get("qop").map_or("auth", String::as_str),
            "auth",
        )?;
        expect("digest-uri", get("digest-uri")?, &self.digest_uri)?;
        let cnonce = get("cnonce")?;
        let password = password_for(username)?;
        let exchange = Exchange {
            username,
            realm,
            password: &password,
            nonce: &self.nonce,
            cnonce,
            digest_uri: &self.digest_uri,
            authzid: fields.get("authzid").map(String::as_str),
        };
        if !constant_time_eq(
            get("response")?.as_bytes(),
            exchange.client_response().as_bytes(),
        ) {
            return Err(SaslError::BadResponse);
        }
        Ok(Authenticated {
            username: username.to_string(),
            rspauth: format!("rspauth={}", exchange.server_proof()).into_bytes(),
        })
    }
}

/// The client side: answers a server's challenge for one token and checks the
/// server's `rspauth`, as Java's DIGEST-MD5 client does for Hadoop's `SaslRpcClient`.
pub struct DigestMd5Client {
    /// `protocol/server`, as the server expects it.
    digest_uri: String,
    username: String,
    password: String,
    /// The realm, nonce and cnonce of the answered challenge; set by `respond`.
    answered: Option<(String, String, String)>,
}

impl DigestMd5Client {
    /// A client for a token (identifier and password bytes) talking to `protocol` on
    /// `server_name`.
    pub fn for_token(
        protocol: &str,
        server_name: &str,
        identifier: &[u8],
        password: &[u8],
    ) -> Self {
        DigestMd5Client {
            digest_uri: format!("{protocol}/{server_name}"),
            username: STANDARD.encode(identifier),
            password: STANDARD.encode(password),
            answered: None,
        }
    }

    /// The response to the server's challenge.
    pub fn respond(&mut self, challenge: &[u8]) -> Result<Vec<u8>, SaslError> {
        let text = std::str::from_utf8(challenge).map_err(|_| SaslError::Malformed {
            reason: "challenge is not UTF-8".into(),
        })?;
        let fields = parse_fields(text)?;
        let nonce = fields.get("nonce").ok_or(SaslError::Malformed {
            reason: "challenge without a nonce".into(),
        })?;
        if let Some(qop) = fields.get("qop") {
            if !qop.split(',').any(|q| q.trim() == "auth") {
                return Err(SaslError::Mismatch {
                    field: "qop",
                    found: qop.clone(),
                    expected: "auth".into(),
                });
            }
        }
        let realm = fields.get("realm").cloned().unwrap_or_default();
        let mut cnonce = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut cnonce);
        let cnonce = STANDARD.encode(cnonce);
        let exchange = Exchange {
            username: &self.username,
            realm: &realm,
            password: &self.password,
            nonce,
            cnonce: &cnonce,
            digest_uri: &self.digest_uri,
            authzid: None,
        };
        let response = format!(
            "charset=utf-8,username=\"{}\",realm=\"{realm}\",nonce=\"{nonce}\",nc=00000001,cnonce=\"{cnonce}\",digest-uri=\"{}\",maxbuf=65536,response={},qop=auth",
            self.username,
            self.digest_uri,
            exchange.client_response()
        );
        self.answered = Some((realm, nonce.clone(), cnonce));
        Ok(response.into_bytes())
    }

    /// Checks the server's final message: it proves the server knew the password too.
    pub fn check_server(&self, message: &[u8]) -> Result<(), SaslError> {
        let (realm, nonce, cnonce) = self.answered.as_ref().ok_or(SaslError::Malformed {
            reason: "server's final message before any challenge".into(),
        })?;
        let text = std::str::from_utf8(message).map_err(|_| SaslError::BadServerProof)?;
        let fields = parse_fields(text)?;
        let exchange = Exchange {
            username: &self.username,
            realm,
            password: &self.password,
            nonce,
            cnonce,
            digest_uri: &self.digest_uri,
            authzid: None,
        };
        match fields.get("rspauth") {
            Some(proof)
                if constant_time_eq(proof.as_bytes(), exchange.server_proof().as_bytes()) =>
            {
                Ok(())
            }
            _ => Err(SaslError::BadServerProof),
        }
    }
}

/// The values both sides hash (RFC 2831 section 2.1.2.1, `md5-sess`, qop `auth`).
struct Exchange<'a> {
    username: &'a str,
    realm: &'a str,
    password: &'a str,
    nonce: &'a str,
    cnonce: &'a str,
    digest_uri: &'a str,
    authzid: Option<&'a str>,
}

impl Exchange<'_> {
    /// The client's `response`.
    fn client_response(&self) -> String {
        self.digest(&format!("AUTHENTICATE:{}", self.digest_uri))
    }

    /// The server's `rspauth`.
    fn server_proof(&self) -> String {
        self.digest(&format!(":{}", self.digest_uri))
    }

    fn digest(&self, a2: &str) -> String {
        let secret = md5(format!("{}:{}:{}", self.username, self.realm, self.password).as_bytes());
        let mut a1 = secret.to_vec();
        a1.extend_from_slice(format!(":{}:{}", self.nonce, self.cnonce).as_bytes());
        if let Some(authzid) = self.authzid {
            a1.extend_from_slice(format!(":{authzid}").as_bytes());
        }
        let tail = format!(
            "{}:00000001:{}:auth:{}",
            self.nonce,
            self.cnonce,
            hex(&md5(a2.as_bytes()))
        );
        hex(&md5(format!("{}:{tail}", hex(&md5(&a1))).as_bytes()))
    }
}

/// The SASL password of a token user name (its base64 identifier) as `authority`
/// grants it, with the user the identifier names.
pub fn token_password(
    authority: &dyn TokenAuthority,
    username: &str,
) -> Result<(String, TokenGrant), SaslError> {
    let identifier = decode_username(username)?;
    let grant = authority.grant(&identifier)?;
    Ok((STANDARD.encode(&grant.password), grant))
}

/// The token identifier a DIGEST-MD5 user name carries.
pub fn decode_username(username: &str) -> Result<Vec<u8>, SaslError> {
    STANDARD.decode(username).map_err(|e| SaslError::Malformed {
        reason: format!("user name is not base64: {e}"),
    })
}

/// The SASL password of a block token user name (its base64 identifier): the base64 of
/// the HMAC the DataNode's keys give that identifier.
pub fn block_token_password(
    keys: &BlockTokenSecretManager,
    username: &str,
    now: u64,
) -> Result<String, SaslError> {
    let identifier = decode_username(username)?;
    Ok(STANDARD.encode(keys.password(&identifier, now)?))
}

fn md5(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `key=value` pairs separated by commas; values may be quoted (with `\` escapes).
fn parse_fields(text: &str) -> Result<HashMap<String, String>, SaslError> {
    let mut fields = HashMap::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let eq = rest.find('=').ok_or_else(|| SaslError::Malformed {
            reason: format!("no '=' in {rest:?}"),
        })?;
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = &rest[eq + 1..];
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            out.push(escaped);
                        }
                    }
                    '"' => {
                        end = Some(i);
                        break;
                    }
                    c => out.push(c),
                }
            }
            let end = end.ok_or(SaslError::Malformed {
                reason: format!("unterminated quote after {key}"),
            })?;
            value = out;
            rest = &quoted[end + 1..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_string();
            rest = &rest[end..];
        }
        fields.insert(key, value);
        rest = rest.trim_start().trim_start_matches(',').trim_start();
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client response computed independently of `verify`, from RFC 2831's formulas.
    fn client_response(server: &DigestMd5Server, user: &str, password: &str) -> String {
        let cnonce = "OA6MHXh6VqTrRk";
        let secret = md5(format!("{user}:0:{password}").as_bytes());
        let mut a1 = secret.to_vec();
        a1.extend_from_slice(format!(":{}:{cnonce}", server.nonce).as_bytes());
        let ha2 = hex(&md5(b"AUTHENTICATE:hdfs/0"));
        let response = hex(&md5(format!(
            "{}:{}:00000001:{cnonce}:auth:{ha2}",
            hex(&md5(&a1)),
            server.nonce
        )
        .as_bytes()));
        format!(
            "username=\"{user}\",realm=\"0\",nonce=\"{}\",cnonce=\"{cnonce}\",nc=00000001,qop=auth,digest-uri=\"hdfs/0\",response={response},charset=utf-8",
            server.nonce
        )
    }

    #[test]
    fn the_right_password_passes_and_a_wrong_one_does_not() {
        let server = DigestMd5Server::new("hdfs", "0");
        let challenge = String::from_utf8(server.challenge()).unwrap();
        assert!(challenge.contains("qop=\"auth\""), "{challenge}");
        let ok = client_response(&server, "dXNlcg==", "c2VjcmV0");
        let done = server
            .verify(ok.as_bytes(), |u| {
                assert_eq!(u, "dXNlcg==");
                Ok("c2VjcmV0".into())
            })
            .unwrap();
        assert!(done.rspauth.starts_with(b"rspauth="));
        assert_eq!(done.rspauth.len(), 8 + 32);

        let wrong = client_response(&server, "dXNlcg==", "b3RoZXI=");
        assert_eq!(
            server
                .verify(wrong.as_bytes(), |_| Ok("c2VjcmV0".into()))
                .unwrap_err(),
            SaslError::BadResponse
        );
        let other_nonce = ok.replace(&server.nonce, "bm9uY2U=");
        assert!(matches!(
            server.verify(other_nonce.as_bytes(), |_| Ok("c2VjcmV0".into())),
            Err(SaslError::Mismatch { field: "nonce", .. })
        ));
    }

    #[test]
    fn the_client_and_server_agree_and_check_each_other() {
        let server = DigestMd5Server::new(RPC_PROTOCOL, RPC_SERVER_ID);
        let mut client = DigestMd5Client::for_token("", "default", b"id", b"pw");
        let response = client.respond(&server.challenge()).unwrap();
        let text = String::from_utf8(response.clone()).unwrap();
        assert!(text.contains("digest-uri=\"/default\""), "{text}");
        assert!(text.contains("realm=\"default\""), "{text}");
        let done = server
            .verify(&response, |user| {
                assert_eq!(decode_username(user).unwrap(), b"id");
                Ok(STANDARD.encode(b"pw"))
            })
            .unwrap();
        client.check_server(&done.rspauth).unwrap();
        assert_eq!(
            client.check_server(b"rspauth=00000000000000000000000000000000"),
            Err(SaslError::BadServerProof)
        );

        let mut wrong = DigestMd5Client::for_token("", "default", b"id", b"not pw");
        let response = wrong.respond(&server.challenge()).unwrap();
        assert_eq!(
            server
                .verify(&response, |_| Ok(STANDARD.encode(b"pw")))
                .unwrap_err(),
            SaslError::BadResponse
        );
    }

    #[test]
    fn fields_parse_with_quotes_and_escapes() {
        let f = parse_fields(r#"a="x,y", b=2,c="q\"uote""#).unwrap();
        assert_eq!(f["a"], "x,y");
        assert_eq!(f["b"], "2");
        assert_eq!(f["c"], "q\"uote");
        assert!(parse_fields(r#"a="open"#).is_err());
    }
}
