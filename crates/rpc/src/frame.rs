//! Framing of Hadoop RPC version 9.
//!
//! A connection opens with the 7-byte preamble `hrpc`, version, service class and auth
//! protocol. After it every message is a frame: a 4-byte big-endian length followed by
//! varint-delimited protobuf messages (a header, then the payload).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt};
use tusk_proto::common::rpc_sasl_proto::{SaslAuth, SaslState};
use tusk_proto::common::RpcSaslProto;

use crate::error::RpcError;

pub const MAGIC: &[u8; 4] = b"hrpc";
pub const RPC_VERSION: u8 = 9;
/// Auth protocol byte: no authentication (SIMPLE, plain).
pub const AUTH_NONE: u8 = 0;
/// Auth protocol byte: SASL negotiation first (-33 as a signed byte).
pub const AUTH_SASL: u8 = 0xDF;
/// Call id of the connection context message.
pub const CONNECTION_CONTEXT_CALL_ID: i32 = -3;
/// Call id of an idle ping.
pub const PING_CALL_ID: i32 = -4;
/// Call id of SASL negotiation messages.
pub const SASL_CALL_ID: i32 = -33;
/// SASL method names (Hadoop's `AuthMethod`) and the mechanism of `TOKEN`.
pub const SASL_TOKEN: &str = "TOKEN";
pub const SASL_SIMPLE: &str = "SIMPLE";
pub const SASL_DIGEST_MD5: &str = "DIGEST-MD5";
pub const SASL_KERBEROS: &str = "KERBEROS";
pub const SASL_GSSAPI: &str = "GSSAPI";
/// Largest frame a client accepts (Hadoop's `ipc.maximum.response.length`); servers
/// take theirs from `ipc.maximum.data.length` (same default).
pub const MAX_FRAME: usize = 128 << 20;

/// A frame up to this length is read into a buffer of its announced size; a longer one
/// into a buffer that grows as its bytes arrive.
const PREALLOCATED_FRAME: usize = 1 << 20;

/// The preamble a client sends first.
pub fn preamble(auth: u8) -> [u8; 7] {
    [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], RPC_VERSION, 0, auth]
}

/// Reads one frame's body; `Ok(None)` on a clean end of stream before a frame starts.
pub async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Result<Option<Bytes>, RpcError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(RpcError::Protocol(format!(
            "frame of {len} bytes exceeds the {MAX_FRAME}-byte limit"
        )));
    }
    if len <= PREALLOCATED_FRAME {
        let mut body = BytesMut::zeroed(len);
        r.read_exact(&mut body).await?;
        return Ok(Some(body.freeze()));
    }
    let mut body = Vec::with_capacity(PREALLOCATED_FRAME);
    let read = r.take(len as u64).read_to_end(&mut body).await?;
    if read < len {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    Ok(Some(Bytes::from(body)))
}

/// Appends a frame holding the given delimited messages to `out`.
pub fn write_frame(out: &mut BytesMut, messages: &[&dyn DelimitedMessage]) {
    let len: usize = messages.iter().map(|m| m.delimited_len()).sum();
    out.reserve(4 + len);
    out.put_u32(len as u32);
    for m in messages {
        m.encode_delimited_into(out);
    }
}

/// A message that can be written varint-delimited into a frame; lets one frame mix
/// header types with payloads already encoded as bytes.
pub trait DelimitedMessage {
    fn delimited_len(&self) -> usize;
    fn encode_delimited_into(&self, out: &mut BytesMut);
}

impl<M: Message> DelimitedMessage for M {
    fn delimited_len(&self) -> usize {
        let n = self.encoded_len();
        prost::length_delimiter_len(n) + n
    }
    fn encode_delimited_into(&self, out: &mut BytesMut) {
        self.encode_length_delimited(out)
            .expect("BytesMut grows as needed");
    }
}

/// A payload already encoded (without its length prefix).
pub struct Encoded<'a>(pub &'a [u8]);

impl DelimitedMessage for Encoded<'_> {
    fn delimited_len(&self) -> usize {
        prost::length_delimiter_len(self.0.len()) + self.0.len()
    }
    fn encode_delimited_into(&self, out: &mut BytesMut) {
        prost::encode_length_delimiter(self.0.len(), out).expect("BytesMut grows as needed");
        out.put_slice(self.0);
    }
}

/// The body of the next whole frame at the start of `buf`, taken out of it; `None`
/// until the frame has fully arrived (as the bytes a security layer unwraps arrive).
pub fn split_frame(buf: &mut BytesMut) -> Result<Option<Bytes>, RpcError> {
    let Some(len) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(len.try_into().expect("4 bytes")) as usize;
    if len > MAX_FRAME {
        return Err(RpcError::FrameTooLong {
            len,
            limit: MAX_FRAME,
        });
    }
    if buf.len() < 4 + len {
        return Ok(None);
    }
    let _ = buf.split_to(4);
    Ok(Some(buf.split_to(len).freeze()))
}

/// A SASL message (the payload of a frame on [`SASL_CALL_ID`]).
pub fn sasl_message(state: SaslState, token: Option<Bytes>, auths: Vec<SaslAuth>) -> RpcSaslProto {
    RpcSaslProto {
        version: None,
        state: state as i32,
        token,
        auths,
    }
}

/// Decodes the next delimited message from `buf`.
pub fn next_message<M: Message + Default>(buf: &mut Bytes) -> Result<M, RpcError> {
    Ok(M::decode_length_delimited(buf)?)
}

/// Splits the next delimited message off `buf` without decoding it.
pub fn next_raw(buf: &mut Bytes) -> Result<Bytes, RpcError> {
    let len = prost::decode_length_delimiter(&mut *buf)?;
    if len > buf.remaining() {
        return Err(RpcError::Protocol("truncated message in frame".into()));
    }
    Ok(buf.split_to(len))
}

/// The method and protocol names of an encoded `RequestHeaderProto`, borrowed from the
/// frame instead of decoded into new strings (the server reads them for every call).
pub fn request_names(mut msg: &[u8]) -> Result<(&str, &str), RpcError> {
    use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
    let (mut method, mut protocol) = (None, None);
    while !msg.is_empty() {
        let (tag, wire) = decode_key(&mut msg)?;
        match (tag, wire) {
            (1 | 2, WireType::LengthDelimited) => {
                let len = decode_varint(&mut msg)? as usize;
                if len > msg.len() {
                    return Err(RpcError::Protocol("truncated request header".into()));
                }
                let (name, rest) = msg.split_at(len);
                let name = std::str::from_utf8(name)
                    .map_err(|_| RpcError::Protocol("request header name is not UTF-8".into()))?;
                msg = rest;
                if tag == 1 {
                    method = Some(name);
                } else {
                    protocol = Some(name);
                }
            }
            _ => skip_field(wire, tag, &mut msg, DecodeContext::default())?,
        }
    }
    match (method, protocol) {
        (Some(m), Some(p)) => Ok((m, p)),
        _ => Err(RpcError::Protocol(
            "request header without method or protocol name".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::common::RequestHeaderProto;

    #[test]
    fn request_names_match_a_full_decode() {
        let header = RequestHeaderProto {
            method_name: "rename2".into(),
            declaring_class_protocol_name: "org.apache.hadoop.hdfs.protocol.ClientProtocol".into(),
            client_protocol_version: 1,
        };
        let bytes = header.encode_to_vec();
        assert_eq!(
            request_names(&bytes).unwrap(),
            ("rename2", "org.apache.hadoop.hdfs.protocol.ClientProtocol")
        );
        // Field order does not matter; a missing name is an error, not a panic.
        let mut reordered = Vec::new();
        prost::encoding::uint64::encode(3, &1, &mut reordered);
        prost::encoding::string::encode(2, &"p".to_string(), &mut reordered);
        prost::encoding::string::encode(1, &"m".to_string(), &mut reordered);
        assert_eq!(request_names(&reordered).unwrap(), ("m", "p"));
        assert!(request_names(&bytes[..bytes.len() - 3]).is_err());
        let only_version = RequestHeaderProto::default().encode_to_vec();
        assert!(request_names(&only_version[..2]).is_err());
    }
}
