//! What the SASL layers of Hadoop RPC read from the other side or from a configuration:
//! a server's DIGEST-MD5 challenge and its `rspauth` as the client reads them, Kerberos
//! principals (and `_HOST`), `auth_to_local` rules applied to a principal, proxy-user
//! rules checked against a caller, `hadoop.rpc.protection` lists, the frames of a
//! security layer's unwrapped stream reassembled, and a delegation token as WebHDFS's
//! `delegation=` carries it (any caller can send one, before anything is checked).

use std::net::IpAddr;

use bytes::BytesMut;
use tusk_security::delegation_token::{
    decode_url, encode_url, DelegationTokenOptions, DelegationTokenSecretManager,
};
use tusk_security::digest_md5::{DigestMd5Client, DigestMd5Server};
use tusk_security::kerberos::{AuthToLocal, Principal};
use tusk_security::proxy_users::ProxyUsers;
use tusk_security::DelegationTokenIdentifier;
use tusk_security::Protection;

/// Runs one input: the first byte picks the reader, the rest is its input.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 6 {
        0 => digest_challenge(rest),
        1 => principal(rest),
        2 => auth_to_local(rest),
        3 => proxy_users(rest),
        4 => unwrapped_frames(rest),
        _ => delegation_parameter(rest),
    }
}

/// A (possibly hostile) server's challenge and final message, as the client reads them.
fn digest_challenge(data: &[u8]) {
    let mut client = DigestMd5Client::for_token("hdfs", "0", b"identifier", b"password");
    if client.respond(data).is_ok() {
        let _ = client.check_server(data);
    }
}

/// A principal with `_HOST` put in; what parses prints back as the same principal.
fn principal(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Protection::parse_list(text);
    if let Ok(p) = Principal::with_host(text, "Node-1.Example") {
        let again = Principal::parse(&p.to_string()).expect("a printed principal parses");
        assert_eq!(again, p, "printing and parsing changed {text:?}");
    }
}

/// Rules, a NUL, then a principal: the rules parsed, the principal's local name taken.
fn auth_to_local(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (rules, who) = text
        .split_once('\0')
        .unwrap_or((text, "nn/host@TUSK.LOCAL"));
    let (Ok(rules), Ok(p)) = (AuthToLocal::parse(rules), Principal::parse(who)) else {
        return;
    };
    let _ = rules.short_name(&p, "TUSK.LOCAL");
}

/// `key=value` lines of proxy-user configuration, then a check of every user they name
/// acting for another.
fn proxy_users(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let pairs: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
    let rules = ProxyUsers::from_pairs(pairs.iter().copied());
    let remote: IpAddr = [127, 0, 0, 1].into();
    for (key, _) in &pairs {
        let user = key.split('.').nth(2).unwrap_or("hue");
        let _ = rules.authorize(user, "alice", remote);
    }
}

/// Unwrapped bytes arriving in pieces: every whole frame taken out, until one is
/// refused or the bytes run out.
fn unwrapped_frames(data: &[u8]) {
    let mut buf = BytesMut::new();
    for piece in data.chunks(7) {
        buf.extend_from_slice(piece);
        loop {
            match tusk_rpc::frame::split_frame(&mut buf) {
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

/// The time delegation tokens are checked at.
const NOW: i64 = 1_700_000_000_000;

/// A NameNode's delegation token manager with a key, made once per process.
fn token_manager() -> &'static DelegationTokenSecretManager {
    static MANAGER: std::sync::OnceLock<DelegationTokenSecretManager> = std::sync::OnceLock::new();
    MANAGER.get_or_init(|| {
        let m = DelegationTokenSecretManager::new(DelegationTokenOptions::default());
        m.apply(&m.roll_master_key(NOW));
        m
    })
}

/// A `delegation=` value as WebHDFS reads it: the token decoded from its URL form reads
/// back the same once encoded again, its identifier (when it parses) the same once
/// written again, and it is checked as the NameNode's doors check one.
fn delegation_parameter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(token) = decode_url(text) else {
        return;
    };
    let again = decode_url(&encode_url(&token)).expect("an encoded token decodes");
    assert_eq!(
        again, token,
        "encoding and decoding changed the token of {text:?}"
    );
    if let Ok(id) = DelegationTokenIdentifier::parse(&token.identifier) {
        let _ = id.to_string();
        let written =
            DelegationTokenIdentifier::parse(&id.to_bytes()).expect("a written identifier parses");
        assert_eq!(written, id, "writing and parsing changed the identifier");
    }
    let _ = token_manager().verify(&token.identifier, NOW);
}

/// Valid inputs for each reader, made with the real encoders where there are some.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let with_mode = |mode: u8, bytes: &[u8]| {
        let mut v = vec![mode];
        v.extend_from_slice(bytes);
        v
    };
    let challenge = DigestMd5Server::new("hdfs", "0").challenge();
    let mut frames = Vec::new();
    for body in [
        &b"first frame"[..],
        b"",
        b"a second, longer frame of the stream",
    ] {
        frames.extend_from_slice(&(body.len() as u32).to_be_bytes());
        frames.extend_from_slice(body);
    }
    vec![
        ("digest-challenge".into(), with_mode(0, &challenge)),
        ("principal".into(), with_mode(1, b"nn/_HOST@TUSK.LOCAL")),
        (
            "auth-to-local".into(),
            with_mode(
                2,
                b"RULE:[2:$1@$0](nn@.*TUSK.LOCAL)s/.*/hdfs/\nRULE:[1:$1](.*)s/^(.*)$/u_$1/L\nDEFAULT\0nn/host@TUSK.LOCAL",
            ),
        ),
        (
            "proxy-users".into(),
            with_mode(
                3,
                b"hadoop.proxyuser.hue.hosts=127.0.0.1,10.0.0.0/8\nhadoop.proxyuser.hue.groups=staff\nhadoop.user.group.static.mapping.overrides=alice=staff;bob=\n",
            ),
        ),
        ("wrapped-frames".into(), with_mode(4, &frames)),
        (
            "delegation-parameter".into(),
            with_mode(5, encode_url(&delegation_token()).as_bytes()),
        ),
    ]
}

/// A token as `GETDELEGATIONTOKEN` hands it out, service set.
fn delegation_token() -> tusk_proto::common::TokenProto {
    let m = token_manager();
    let (mut token, change) = m
        .create_token("alice@TUSK.LOCAL", "yarn", "", NOW)
        .expect("the manager has a key");
    m.apply(&change);
    token.service = "127.0.0.1:8020".into();
    token
}
