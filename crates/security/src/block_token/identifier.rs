//! The bytes of a block token's identifier, as HDFS's `BlockTokenIdentifier` writes and
//! reads them.
//!
//! Two layouts exist. The legacy one (Hadoop's `Writable` encoding, what Hadoop 3.4
//! writes unless `dfs.block.access.token.protobuf.enable` is set) is, in order:
//!
//! | field | encoding |
//! |---|---|
//! | expiryDate (ms) | `WritableUtils.writeVLong` |
//! | keyId | `writeVInt` |
//! | userId | `WritableUtils.writeString`: `i32` BE length (-1 = null), UTF-8 |
//! | blockPoolId | `writeString` |
//! | blockId | `writeVLong` |
//! | access modes | `writeVInt` count, then each `writeEnum`: `Text` (vint length, UTF-8 name) |
//! | storage types | `writeVInt` count, then each `writeEnum` name (`DISK`, `SSD`, ...) |
//! | storage ids | `writeVInt` count, then each `writeString` |
//! | handshake msg | only when non-empty: `writeVInt` length, bytes |
//!
//! The other is the protobuf `BlockTokenSecretProto`. A reader tells them apart by the
//! first byte: a legacy identifier starts with the vlong of a large expiry date, whose
//! first byte is negative; a protobuf one starts with the tag of field 1 (`0x08`).

use bytes::Buf;
use prost::Message;
use tusk_proto::hdfs::{BlockTokenSecretProto, StorageTypeProto};

pub use crate::block_token::access_mode::AccessMode;
use crate::error::BlockTokenError;
use crate::writable::{
    read_count, read_string, read_text, read_vint, read_vlong, take, write_string, write_text,
    write_vlong,
};

/// The fields of a block token identifier. Who verifies a token computes its HMAC over
/// the identifier bytes as received, never over a re-encoding of these fields, so
/// fields a newer writer adds do not break verification (as HDFS keeps the raw bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockTokenIdentifier {
    /// Milliseconds since the epoch after which the token is refused.
    pub expiry_date: u64,
    /// The block key whose HMAC is the token's password.
    pub key_id: i32,
    /// The user the NameNode issued the token to (empty when the writer wrote null).
    pub user_id: String,
    pub block_pool_id: String,
    pub block_id: u64,
    /// Sorted, without duplicates.
    pub modes: Vec<AccessMode>,
    /// Storage types of the block's locations, as the NameNode listed them.
    pub storage_types: Vec<StorageTypeProto>,
    pub storage_ids: Vec<String>,
    /// Hadoop's wrapped QOP (`dfs.namenode.send.qop.enabled`); empty in Tusk's tokens.
    pub handshake_msg: Vec<u8>,
}

impl BlockTokenIdentifier {
    pub fn allows(&self, mode: AccessMode) -> bool {
        self.modes.contains(&mode)
    }

    /// The legacy `Writable` layout (Hadoop 3.4's default).
    pub fn encode_legacy(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.block_pool_id.len() + self.user_id.len());
        write_vlong(&mut out, self.expiry_date as i64);
        write_vlong(&mut out, i64::from(self.key_id));
        write_string(&mut out, &self.user_id);
        write_string(&mut out, &self.block_pool_id);
        write_vlong(&mut out, self.block_id as i64);
        let mut modes = self.modes.clone();
        modes.sort();
        modes.dedup();
        write_vlong(&mut out, modes.len() as i64);
        for m in modes {
            write_text(&mut out, m.name());
        }
        write_vlong(&mut out, self.storage_types.len() as i64);
        for t in &self.storage_types {
            write_text(&mut out, t.as_str_name());
        }
        write_vlong(&mut out, self.storage_ids.len() as i64);
        for id in &self.storage_ids {
            write_string(&mut out, id);
        }
        if !self.handshake_msg.is_empty() {
            write_vlong(&mut out, self.handshake_msg.len() as i64);
            out.extend_from_slice(&self.handshake_msg);
        }
        out
    }

    /// The protobuf layout (`dfs.block.access.token.protobuf.enable`).
    pub fn encode_protobuf(&self) -> Vec<u8> {
        BlockTokenSecretProto {
            expiry_date: Some(self.expiry_date),
            key_id: Some(self.key_id as u32),
            user_id: Some(self.user_id.clone()),
            block_pool_id: Some(self.block_pool_id.clone()),
            block_id: Some(self.block_id),
            modes: self.modes.iter().map(|m| m.to_proto() as i32).collect(),
            storage_types: self.storage_types.iter().map(|t| *t as i32).collect(),
            storage_ids: self.storage_ids.clone(),
            handshake_secret: (!self.handshake_msg.is_empty())
                .then(|| self.handshake_msg.clone().into()),
        }
        .encode_to_vec()
    }

    /// Reads either layout, telling them apart by the first byte as HDFS does.
    pub fn decode(bytes: &[u8]) -> Result<BlockTokenIdentifier, BlockTokenError> {
        match bytes.first() {
            None => Err(BlockTokenError::Missing),
            Some(&b) if (b as i8) <= 0 => decode_legacy(bytes),
            Some(_) => decode_protobuf(bytes),
        }
    }
}

fn malformed(reason: impl Into<String>) -> BlockTokenError {
    BlockTokenError::Malformed {
        reason: reason.into(),
    }
}

fn decode_legacy(mut r: &[u8]) -> Result<BlockTokenIdentifier, BlockTokenError> {
    let r = &mut r;
    let expiry_date = read_vlong(r)? as u64;
    let key_id = read_vint(r)?;
    let user_id = read_string(r)?.unwrap_or_default();
    let block_pool_id = read_string(r)?.unwrap_or_default();
    let block_id = read_vlong(r)? as u64;
    let count = read_vint(r)?;
    if !(0..=4).contains(&count) {
        return Err(malformed(format!("{count} access modes")));
    }
    let mut modes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let name = read_text(r)?;
        modes.push(AccessMode::from_name(&name).ok_or_else(|| malformed(name))?);
    }
    // Hadoop reads them into an EnumSet: ordered, each mode once.
    modes.sort();
    modes.dedup();
    let count = read_count(r)?;
    let mut storage_types = Vec::with_capacity(count);
    for _ in 0..count {
        let name = read_text(r)?;
        storage_types.push(StorageTypeProto::from_str_name(&name).ok_or_else(|| malformed(name))?);
    }
    let count = read_count(r)?;
    let mut storage_ids = Vec::with_capacity(count);
    for _ in 0..count {
        storage_ids.push(read_string(r)?.unwrap_or_default());
    }
    // Older writers end before the handshake message; Hadoop reads it only if present.
    let handshake_msg = if r.has_remaining() {
        let len = read_count(r)?;
        take(r, len)?.to_vec()
    } else {
        Vec::new()
    };
    Ok(BlockTokenIdentifier {
        expiry_date,
        key_id,
        user_id,
        block_pool_id,
        block_id,
        modes,
        storage_types,
        storage_ids,
        handshake_msg,
    })
}

fn decode_protobuf(bytes: &[u8]) -> Result<BlockTokenIdentifier, BlockTokenError> {
    let p = BlockTokenSecretProto::decode(bytes).map_err(|e| malformed(e.to_string()))?;
    let mut modes: Vec<AccessMode> = p.modes().map(AccessMode::from_proto).collect::<Vec<_>>();
    modes.sort();
    modes.dedup();
    Ok(BlockTokenIdentifier {
        expiry_date: p.expiry_date(),
        key_id: p.key_id() as i32,
        user_id: p.user_id().to_string(),
        block_pool_id: p.block_pool_id().to_string(),
        block_id: p.block_id(),
        modes,
        storage_types: p.storage_types().collect(),
        storage_ids: p.storage_ids.clone(),
        handshake_msg: p.handshake_secret().to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the block_token fuzz target: a legacy identifier naming READ twice
    /// decoded with the mode twice (the protobuf layout and Hadoop's EnumSet keep each
    /// once), so it did not read back as itself.
    #[test]
    fn legacy_modes_read_as_a_set() {
        let bytes = [
            0xc0, 0x8d, 0xbb, 0x14, 0x8f, 0x00, 0x00, 0x00, 0x04, 0x66, 0x75, 0x7a, 0x7a, 0x00,
            0x00, 0x00, 0x07, 0x42, 0x50, 0x2d, 0x66, 0x75, 0x5a, 0x7a, 0x84, 0x40, 0x00, 0x00,
            0x00, 0x03, 0x05, 0x57, 0x52, 0x49, 0x54, 0x45, 0x04, 0x52, 0x45, 0x41, 0x44, 0x04,
            0x52, 0x45, 0x41, 0x44, 0x00, 0x00,
        ];
        let id = BlockTokenIdentifier::decode(&bytes).unwrap();
        assert_eq!(id.modes, vec![AccessMode::Read, AccessMode::Write]);
        assert_eq!(
            BlockTokenIdentifier::decode(&id.encode_legacy()).unwrap(),
            id
        );
    }

    /// A vector worked out by hand from Hadoop's rules (the comments follow the table in
    /// the module docs), so a change of layout fails here and not only against Hadoop.
    #[test]
    fn legacy_layout_matches_hadoops_writable_encoding() {
        let id = BlockTokenIdentifier {
            // 1_700_000_000_000 = 0x018B_CFE5_6800: 6 bytes, so the length byte is
            // -112 - 6 = -118 = 0x8A.
            expiry_date: 1_700_000_000_000,
            // 300 = 0x012C: 2 bytes → 0x8E (-114), 0x01, 0x2C.
            key_id: 300,
            user_id: "alice".into(),
            block_pool_id: "BP-1".into(),
            // 1073741825 = 0x4000_0001: 4 bytes → 0x8C (-116).
            block_id: 1_073_741_825,
            modes: vec![AccessMode::Write, AccessMode::Read],
            storage_types: vec![StorageTypeProto::Disk],
            storage_ids: vec!["DS-1".into()],
            handshake_msg: vec![],
        };
        let mut want = vec![0x8A, 0x01, 0x8B, 0xCF, 0xE5, 0x68, 0x00];
        want.extend([0x8E, 0x01, 0x2C]);
        want.extend([0, 0, 0, 5]);
        want.extend(b"alice");
        want.extend([0, 0, 0, 4]);
        want.extend(b"BP-1");
        want.extend([0x8C, 0x40, 0x00, 0x00, 0x01]);
        // Two modes in ordinal order, each a Text: vint length + name.
        want.extend([2, 4]);
        want.extend(b"READ");
        want.push(5);
        want.extend(b"WRITE");
        want.extend([1, 4]);
        want.extend(b"DISK");
        want.extend([1, 0, 0, 0, 4]);
        want.extend(b"DS-1");
        // No handshake message: nothing more.
        assert_eq!(id.encode_legacy(), want);

        let back = BlockTokenIdentifier::decode(&want).unwrap();
        assert_eq!(back.modes, vec![AccessMode::Read, AccessMode::Write]);
        assert_eq!(
            back,
            BlockTokenIdentifier {
                modes: back.modes.clone(),
                ..id
            }
        );
    }

    #[test]
    fn vlong_matches_hadoop_at_the_edges() {
        let cases: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (127, &[0x7F]),
            (-112, &[0x90]),
            (128, &[0x8F, 0x80]),
            (-113, &[0x87, 0x70]),
            (-1, &[0xFF]),
            (
                i64::MAX,
                &[0x88, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
            (
                i64::MIN,
                &[0x80, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
        ];
        for (v, bytes) in cases {
            let mut out = Vec::new();
            write_vlong(&mut out, *v);
            assert_eq!(&out[..], *bytes, "encoding of {v}");
            let mut r = *bytes;
            assert_eq!(read_vlong(&mut r).unwrap(), *v, "decoding of {v}");
            assert!(r.is_empty());
        }
    }

    #[test]
    fn both_layouts_decode_and_a_truncated_legacy_one_is_refused() {
        let id = BlockTokenIdentifier {
            expiry_date: 1_700_000_000_000,
            key_id: 7,
            user_id: "bob".into(),
            block_pool_id: "BP-2".into(),
            block_id: 9,
            modes: vec![AccessMode::Copy],
            storage_types: vec![],
            storage_ids: vec![],
            handshake_msg: b"auth".to_vec(),
        };
        let proto = id.encode_protobuf();
        assert_eq!(proto[0], 0x08, "field 1, varint");
        assert_eq!(BlockTokenIdentifier::decode(&proto).unwrap(), id);

        let legacy = id.encode_legacy();
        assert_eq!(BlockTokenIdentifier::decode(&legacy).unwrap(), id);
        // Hadoop 2 stopped after the modes; Hadoop 3 (and Tusk) refuse such a token.
        let mut hadoop2 = Vec::new();
        write_vlong(&mut hadoop2, id.expiry_date as i64);
        write_vlong(&mut hadoop2, 7);
        write_string(&mut hadoop2, "bob");
        write_string(&mut hadoop2, "BP-2");
        write_vlong(&mut hadoop2, 9);
        write_vlong(&mut hadoop2, 1);
        write_text(&mut hadoop2, "COPY");
        assert!(BlockTokenIdentifier::decode(&hadoop2).is_err());
    }

    #[test]
    fn garbage_is_refused_not_panicked_on() {
        for bytes in [&[][..], &[0x8A, 1, 2], &[0x80; 40], &[0x08, 0xFF]] {
            assert!(BlockTokenIdentifier::decode(bytes).is_err(), "{bytes:?}");
        }
    }
}
