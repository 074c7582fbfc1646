//! One connection's bytes served without a socket, through the same steps a live
//! connection takes (preamble, frame splitting within the limits, header, SASL and call
//! handling), so fuzz targets and tests can drive the server's decoding directly.

use bytes::Bytes;
use futures::stream::FuturesUnordered;
use futures::FutureExt;
use std::net::SocketAddr;

use super::input::FrameReader;
use super::{read_preamble, ConnectionState, RpcServer, Waiting};
use crate::error::RpcError;

/// What serving a connection's bytes produced.
#[derive(Debug)]
pub struct Served {
    /// The reply frames written, in order.
    pub replies: Bytes,
    /// How the connection ended: `Ok` when the bytes ran out or the client asked to
    /// close; otherwise the error that would have closed a live connection.
    pub ended: Result<(), RpcError>,
}

impl RpcServer {
    /// Serves `bytes` as if one client had sent them from `peer` and then closed its
    /// side. Replies held for the durability watermark are written once it has passed
    /// them; calls still waiting when the bytes run out are dropped unanswered, as when
    /// a live connection is closed.
    pub fn serve_bytes(&self, bytes: &[u8], peer: SocketAddr) -> Served {
        let mut conn = self.connection_state(peer);
        let ended = self.serve_into(&mut conn, bytes);
        Served {
            replies: conn.out.freeze(),
            ended,
        }
    }

    fn serve_into(&self, conn: &mut ConnectionState, bytes: &[u8]) -> Result<(), RpcError> {
        let (mut preamble, mut rest) = bytes.split_at(bytes.len().min(7));
        let auth = read_preamble(&mut preamble)
            .now_or_never()
            .expect("reading from a slice never waits")?;
        if !conn.admit(auth) {
            return Ok(());
        }
        let mut input = FrameReader::new(self.limits.clone());
        let mut waiting: FuturesUnordered<Waiting> = FuturesUnordered::new();
        loop {
            while let Some(body) = input.take_frame()? {
                if !self.handle_frame(conn, body, &mut waiting)? {
                    return Ok(());
                }
            }
            conn.release_held();
            if rest.is_empty() {
                return Ok(());
            }
            let taken = input.accept(rest);
            if taken == 0 {
                return Err(RpcError::Protocol(
                    "frame waits for buffer budget held elsewhere".into(),
                ));
            }
            rest = &rest[taken..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame;
    use crate::service::{CallContext, CallOutcome, RpcService};
    use crate::RpcServerOptions;
    use bytes::BytesMut;
    use prost::Message;
    use std::sync::Arc;
    use tusk_proto::common::{
        IpcConnectionContextProto, RequestHeaderProto, RpcRequestHeaderProto,
        RpcResponseHeaderProto,
    };

    struct Echo;

    impl RpcService for Echo {
        fn protocol(&self) -> &'static str {
            "test.Echo"
        }
        fn call(self: Arc<Self>, _: CallContext, _: &str, request: Bytes) -> CallOutcome {
            CallOutcome::Now(Ok(request))
        }
    }

    fn call_frame(out: &mut BytesMut, call_id: i32, payload: &[u8]) {
        let header = RpcRequestHeaderProto {
            call_id,
            client_id: Bytes::from_static(&[7; 16]),
            ..Default::default()
        };
        let request = RequestHeaderProto {
            method_name: "echo".into(),
            declaring_class_protocol_name: "test.Echo".into(),
            client_protocol_version: 1,
        };
        frame::write_frame(out, &[&header, &request, &frame::Encoded(payload)]);
    }

    fn connection(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = BytesMut::new();
        out.extend_from_slice(&frame::preamble(frame::AUTH_NONE));
        let header = RpcRequestHeaderProto {
            call_id: frame::CONNECTION_CONTEXT_CALL_ID,
            ..Default::default()
        };
        let context = IpcConnectionContextProto::default();
        frame::write_frame(&mut out, &[&header, &context]);
        for (id, p) in payloads.iter().enumerate() {
            call_frame(&mut out, id as i32, p);
        }
        out.to_vec()
    }

    /// Splits reply frames into (call id, payload).
    fn replies(mut bytes: Bytes) -> Vec<(u32, Bytes)> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let len = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
            let _ = bytes.split_to(4);
            let mut body = bytes.split_to(len);
            let header = RpcResponseHeaderProto::decode_length_delimited(&mut body).unwrap();
            let payload = frame::next_raw(&mut body).unwrap_or_default();
            out.push((header.call_id, payload));
        }
        out
    }

    #[test]
    fn calls_in_the_bytes_are_answered_in_order_including_long_frames() {
        let options = RpcServerOptions {
            max_data_length: 64 * 1024,
            total_buffer_bytes: 64 * 1024,
            ..Default::default()
        };
        let server = RpcServer::new(vec![Arc::new(Echo)]).with_options(options);
        let long = vec![5u8; 40 * 1024];
        let bytes = connection(&[b"a", &long, b"c"]);
        let served = server.serve_bytes(&bytes, "127.0.0.1:1".parse().unwrap());
        served.ended.unwrap();
        let got = replies(served.replies);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], (1, Bytes::from(long)));
        assert_eq!(got[2], (2, Bytes::from_static(b"c")));
        assert_eq!(server.stats().buffered_bytes, 0, "buffers given back");
    }

    #[test]
    fn bad_preamble_and_oversized_frame_end_the_connection() {
        let server = RpcServer::new(vec![Arc::new(Echo)]).with_options(RpcServerOptions {
            max_data_length: 1024,
            ..Default::default()
        });
        let peer: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(server.serve_bytes(b"hrpc\x08\x00\x00", peer).ended.is_err());
        assert!(server.serve_bytes(b"hr", peer).ended.is_err());
        let mut bytes = frame::preamble(frame::AUTH_NONE).to_vec();
        bytes.extend_from_slice(&2048u32.to_be_bytes());
        assert!(matches!(
            server.serve_bytes(&bytes, peer).ended,
            Err(RpcError::FrameTooLong { len: 2048, .. })
        ));
    }
}
