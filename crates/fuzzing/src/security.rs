//! Block access tokens as a DataNode receives them from any client: the identifier's
//! bytes (Hadoop's legacy `Writable` layout or the protobuf one) checked against the
//! node's block keys, and the DIGEST-MD5 response of the SASL handshake over a token.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use tusk_proto::common::TokenProto;
use tusk_security::digest_md5::{block_token_password, DigestMd5Server};
use tusk_security::{AccessMode, BlockTokenIdentifier, BlockTokenSecretManager, TokenScope};

/// The time every input is checked at, and the keys' start.
const NOW: u64 = 1_700_000_000_000;
/// Replaced in a SASL response by the server's nonce (random per handshake), so inputs
/// can get past the nonce check.
const NONCE: &[u8] = b"@NONCE@";

/// Runs one input: a first byte with bit 0 clear takes the rest as a token identifier
/// (bit 1 set: the password is the right one for it); set, as a DIGEST-MD5 response.
pub fn token(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (master, worker) = keys();
    if mode & 1 == 0 {
        identifier(rest, mode & 2 != 0, master, worker);
    } else {
        sasl_response(rest, worker);
    }
}

/// The NameNode's keys, and a DataNode's copy of them.
fn keys() -> (
    &'static BlockTokenSecretManager,
    &'static BlockTokenSecretManager,
) {
    static KEYS: std::sync::OnceLock<(BlockTokenSecretManager, BlockTokenSecretManager)> =
        std::sync::OnceLock::new();
    let (m, w) = KEYS.get_or_init(|| {
        let master = BlockTokenSecretManager::master(
            std::time::Duration::from_secs(600),
            std::time::Duration::from_secs(600),
            false,
            NOW,
        );
        let mut worker = BlockTokenSecretManager::worker();
        worker.import(&master.export(), NOW);
        (master, worker)
    });
    (m, w)
}

fn identifier(
    bytes: &[u8],
    signed: bool,
    master: &BlockTokenSecretManager,
    worker: &BlockTokenSecretManager,
) {
    if let Ok(id) = BlockTokenIdentifier::decode(bytes) {
        // Each layout reads back what it writes; a legacy identifier whose first byte
        // (the expiry date's) is positive reads as protobuf, as in HDFS, which real
        // expiry dates (past 1970 + 127 ms) never are.
        let legacy = id.encode_legacy();
        if (legacy[0] as i8) <= 0 {
            assert_eq!(
                BlockTokenIdentifier::decode(&legacy).ok().as_ref(),
                Some(&id),
                "legacy layout round trip"
            );
        }
        let mut sorted = id.clone();
        sorted.modes.sort();
        sorted.modes.dedup();
        assert_eq!(
            BlockTokenIdentifier::decode(&sorted.encode_protobuf()).ok(),
            Some(sorted),
            "protobuf layout round trip"
        );
    }
    let password = match (signed, master.password(bytes, NOW)) {
        (true, Ok(p)) => p,
        _ => b"not the password".to_vec(),
    };
    let token = TokenProto {
        identifier: bytes.to_vec().into(),
        password: password.into(),
        kind: tusk_security::TOKEN_KIND.into(),
        service: String::new(),
    };
    for mode in [AccessMode::Read, AccessMode::Write, AccessMode::Copy] {
        let _ = worker.check(Some(&token), "BP-fuzz", 1 << 30, mode, NOW);
    }
}

fn sasl_response(bytes: &[u8], worker: &BlockTokenSecretManager) {
    let server = DigestMd5Server::new("hdfs", "0");
    let challenge = server.challenge();
    let nonce = std::str::from_utf8(&challenge)
        .ok()
        .and_then(|c| c.split("nonce=\"").nth(1))
        .and_then(|n| n.split('"').next())
        .expect("the challenge names its nonce")
        .as_bytes()
        .to_vec();
    let response = replace(bytes, NONCE, &nonce);
    let _ = server.verify(&response, |user| block_token_password(worker, user, NOW));
}

fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// Tokens the NameNode signs in both layouts, and a SASL response over one.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let (master, _) = keys();
    let scope = TokenScope {
        user: "fuzz",
        modes: &[AccessMode::Read, AccessMode::Write],
        storage_types: &[],
        storage_ids: &[],
    };
    let token = master
        .generate("BP-fuzz", 1 << 30, &scope, NOW)
        .expect("a master has a current key");
    let id = BlockTokenIdentifier::decode(&token.identifier).expect("own token decodes");
    let mut legacy = vec![2];
    legacy.extend(id.encode_legacy());
    let mut protobuf = vec![2];
    protobuf.extend(id.encode_protobuf());
    let username = STANDARD.encode(&token.identifier);
    let response = format!(
        "charset=utf-8,username=\"{username}\",realm=\"0\",nonce=\"@NONCE@\",nc=00000001,\
         cnonce=\"c2VlZA==\",digest-uri=\"hdfs/0\",maxbuf=65536,\
         response=0123456789abcdef0123456789abcdef,qop=auth"
    );
    let mut sasl = vec![1];
    sasl.extend_from_slice(response.as_bytes());
    vec![
        ("legacy".into(), legacy),
        ("protobuf".into(), protobuf),
        ("sasl-response".into(), sasl),
    ]
}
