//! [`Credentials`]: Hadoop's token storage, what a ContainerLaunchContext's `tokens`
//! bytes and the file at `HADOOP_TOKEN_FILE_LOCATION` hold (Hadoop's
//! `Credentials.writeTokenStorageToStream` / `readTokenStorageStream`).
//!
//! The bytes open with the magic `HDTS` and a version byte, then:
//!
//! | version | body |
//! |---|---|
//! | 0 (`WRITABLE`, what Hadoop 3.4.2 writes by default) | vint token count; per token `Text` alias, then `Token.write`: vint length + identifier, vint length + password, `Text` kind, `Text` service; then vint secret count; per secret `Text` alias, vint length + bytes |
//! | 1 (`PROTOBUF`) | one varint-delimited `CredentialsProto` |
//!
//! Both are read; version 0 is written unless asked otherwise, so any Hadoop reader
//! takes it.

use std::path::Path;

use prost::Message;
use tusk_proto::common::{CredentialsKvProto, CredentialsProto, TokenProto};

use crate::error::{CredentialsError, WritableError};
use crate::writable::{read_bytes, read_count, read_text, write_bytes, write_text, write_vlong};

/// The storage's first bytes.
const MAGIC: &[u8; 4] = b"HDTS";

/// The two layouts of Hadoop's `Credentials.SerializedFormat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CredentialsFormat {
    /// Version 0: Hadoop's `Writable` encoding (Hadoop's default).
    Writable = 0,
    /// Version 1: a delimited `CredentialsProto`.
    Protobuf = 1,
}

/// Tokens and secret keys by alias. Adding under an alias already present replaces its
/// entry in place, as Hadoop's map does; the order is otherwise the order added.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Credentials {
    tokens: Vec<(String, TokenProto)>,
    secrets: Vec<(String, Vec<u8>)>,
}

impl Credentials {
    pub fn new() -> Self {
        Credentials::default()
    }

    /// Adds `token` under `alias` (Hadoop's callers use the token's service, or for
    /// YARN's AMRMToken its service as set, often empty).
    pub fn add_token(&mut self, alias: impl Into<String>, token: TokenProto) {
        put(&mut self.tokens, alias.into(), token);
    }

    pub fn add_secret(&mut self, alias: impl Into<String>, secret: Vec<u8>) {
        put(&mut self.secrets, alias.into(), secret);
    }

    pub fn token(&self, alias: &str) -> Option<&TokenProto> {
        self.tokens.iter().find(|(a, _)| a == alias).map(|(_, t)| t)
    }

    /// Every token of `kind` (`YARN_AM_RM_TOKEN`, `NMToken`, ...), as Hadoop's token
    /// selectors look for them.
    pub fn tokens_of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a TokenProto> {
        self.tokens
            .iter()
            .map(|(_, t)| t)
            .filter(move |t| t.kind == kind)
    }

    /// Every token with its alias.
    pub fn tokens(&self) -> impl Iterator<Item = (&str, &TokenProto)> {
        self.tokens.iter().map(|(a, t)| (a.as_str(), t))
    }

    pub fn secret(&self, alias: &str) -> Option<&[u8]> {
        self.secrets
            .iter()
            .find(|(a, _)| a == alias)
            .map(|(_, s)| s.as_slice())
    }

    /// Reads token storage of either version.
    pub fn decode(bytes: &[u8]) -> Result<Credentials, CredentialsError> {
        let Some(rest) = bytes.strip_prefix(MAGIC.as_slice()) else {
            return Err(CredentialsError::BadHeader);
        };
        match rest.split_first() {
            Some((0, body)) => Ok(decode_writable(body)?),
            Some((1, body)) => decode_protobuf(body),
            Some((&version, _)) => Err(CredentialsError::UnknownVersion { version }),
            None => Err(CredentialsError::BadHeader),
        }
    }

    /// The storage in Hadoop's default layout (version 0).
    pub fn encode(&self) -> Vec<u8> {
        self.encode_as(CredentialsFormat::Writable)
    }

    pub fn encode_as(&self, format: CredentialsFormat) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(format as u8);
        match format {
            CredentialsFormat::Writable => self.encode_writable(&mut out),
            CredentialsFormat::Protobuf => self
                .to_proto()
                .encode_length_delimited(&mut out)
                .expect("a Vec grows as needed"),
        }
        out
    }

    /// Reads the token storage file at `path` (`Credentials.readTokenStorageFile`).
    pub fn read_file(path: &Path) -> Result<Credentials, CredentialsError> {
        let bytes = std::fs::read(path).map_err(|source| CredentialsError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Credentials::decode(&bytes)
    }

    /// Writes the storage to `path` in Hadoop's default layout.
    pub fn write_file(&self, path: &Path) -> Result<(), CredentialsError> {
        std::fs::write(path, self.encode()).map_err(|source| CredentialsError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    fn encode_writable(&self, out: &mut Vec<u8>) {
        write_vlong(out, self.tokens.len() as i64);
        for (alias, token) in &self.tokens {
            write_text(out, alias);
            write_bytes(out, &token.identifier);
            write_bytes(out, &token.password);
            write_text(out, &token.kind);
            write_text(out, &token.service);
        }
        write_vlong(out, self.secrets.len() as i64);
        for (alias, secret) in &self.secrets {
            write_text(out, alias);
            write_bytes(out, secret);
        }
    }

    fn to_proto(&self) -> CredentialsProto {
        CredentialsProto {
            tokens: self
                .tokens
                .iter()
                .map(|(alias, token)| CredentialsKvProto {
                    alias: alias.clone(),
                    token: Some(token.clone()),
                    secret: None,
                })
                .collect(),
            secrets: self
                .secrets
                .iter()
                .map(|(alias, secret)| CredentialsKvProto {
                    alias: alias.clone(),
                    token: None,
                    secret: Some(secret.clone().into()),
                })
                .collect(),
        }
    }
}

fn put<T>(entries: &mut Vec<(String, T)>, alias: String, value: T) {
    match entries.iter_mut().find(|(a, _)| *a == alias) {
        Some(entry) => entry.1 = value,
        None => entries.push((alias, value)),
    }
}

fn decode_writable(mut r: &[u8]) -> Result<Credentials, WritableError> {
    let r = &mut r;
    let mut creds = Credentials::new();
    for _ in 0..read_count(r)? {
        let alias = read_text(r)?;
        let token = TokenProto {
            identifier: read_bytes(r)?.to_vec().into(),
            password: read_bytes(r)?.to_vec().into(),
            kind: read_text(r)?,
            service: read_text(r)?,
        };
        creds.add_token(alias, token);
    }
    for _ in 0..read_count(r)? {
        let alias = read_text(r)?;
        let secret = read_bytes(r)?.to_vec();
        creds.add_secret(alias, secret);
    }
    // Like Hadoop, stop after the secrets: whatever follows is not the storage's.
    Ok(creds)
}

fn decode_protobuf(body: &[u8]) -> Result<Credentials, CredentialsError> {
    let proto = CredentialsProto::decode_length_delimited(body)
        .map_err(|e| CredentialsError::Malformed(WritableError::new(e.to_string())))?;
    let mut creds = Credentials::new();
    for kv in proto.tokens {
        creds.add_token(kv.alias, kv.token.unwrap_or_default());
    }
    for kv in proto.secrets {
        creds.add_secret(kv.alias, kv.secret.unwrap_or_default().to_vec());
    }
    Ok(creds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(kind: &str, service: &str) -> TokenProto {
        TokenProto {
            identifier: vec![1u8; 200].into(),
            password: vec![2u8; 20].into(),
            kind: kind.into(),
            service: service.into(),
        }
    }

    #[test]
    fn both_layouts_round_trip_and_an_alias_is_replaced() {
        let mut creds = Credentials::new();
        creds.add_token("", token("YARN_AM_RM_TOKEN", ""));
        creds.add_token("10.0.0.1:8041", token("NMToken", "10.0.0.1:8041"));
        creds.add_secret("mapreduce.job.shuffle", vec![7; 64]);
        creds.add_token("", token("YARN_AM_RM_TOKEN", "127.0.0.1:8030"));
        assert_eq!(creds.tokens().count(), 2);
        assert_eq!(creds.token("").unwrap().service, "127.0.0.1:8030");
        for format in [CredentialsFormat::Writable, CredentialsFormat::Protobuf] {
            let bytes = creds.encode_as(format);
            assert_eq!(&bytes[..5], &[b'H', b'D', b'T', b'S', format as u8]);
            assert_eq!(Credentials::decode(&bytes).unwrap(), creds);
        }
        assert_eq!(creds.encode()[4], 0, "Hadoop's default layout is version 0");
        assert_eq!(creds.tokens_of_kind("NMToken").count(), 1);
        assert_eq!(creds.secret("mapreduce.job.shuffle"), Some(&[7u8; 64][..]));
    }

    /// Version 0 by hand: an identifier of 200 bytes takes a two-byte vint (0x8f, 200).
    #[test]
    fn the_writable_layout_is_hadoops() {
        let mut creds = Credentials::new();
        creds.add_token("a", token("K", "s"));
        let bytes = creds.encode();
        let mut expected = b"HDTS\x00\x01\x01a\x8f\xc8".to_vec();
        expected.extend_from_slice(&[1; 200]);
        expected.push(20);
        expected.extend_from_slice(&[2; 20]);
        expected.extend_from_slice(b"\x01K\x01s\x00");
        assert_eq!(bytes, expected);
    }

    #[test]
    fn bad_storage_is_refused() {
        assert!(matches!(
            Credentials::decode(b"HDTX\x00\x00\x00"),
            Err(CredentialsError::BadHeader)
        ));
        assert!(matches!(
            Credentials::decode(b"HDTS\x07"),
            Err(CredentialsError::UnknownVersion { version: 7 })
        ));
        let bytes = Credentials::new().encode();
        let mut truncated = bytes.clone();
        truncated[5] = 3;
        assert!(matches!(
            Credentials::decode(&truncated),
            Err(CredentialsError::Malformed(_))
        ));
    }
}
