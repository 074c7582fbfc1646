//! SASL on a data connection (HDFS's `SaslDataTransferClient` / `SaslDataTransferServer`
//! framing), shared by the client and the DataNode:
//!
//! - the handshake a client opens: the int32 magic `0xDEADBEEF`, then delimited
//!   `DataTransferEncryptorMessageProto`s carrying DIGEST-MD5 over the block token
//!   (protocol `hdfs`, server name `0`): an empty first message, the server's
//!   challenge, the client's response, the server's `rspauth` ([`client_handshake`]);
//! - when `auth-int` or `auth-conf` was negotiated, the rest of the connection in
//!   Hadoop's `SaslInputStream` / `SaslOutputStream` framing: each write is one wrapped
//!   token after its int32 length ([`SaslReader`], [`SaslWriter`]), every op, packet and
//!   ack alike.
//!
//! Whether a client opens the handshake ([`sasl_required`]) follows Hadoop's
//! `SaslDataTransferClient`: when `dfs.data.transfer.protection` is set and the
//! DataNode's port is not privileged (below 1024 HDFS trusts the port instead).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tusk_proto::common::TokenProto;
use tusk_proto::hdfs::data_transfer_encryptor_message_proto::DataTransferEncryptorStatus;
use tusk_proto::hdfs::{DataEncryptionKeyProto, DataTransferEncryptorMessageProto};
use tusk_security::digest_md5::{DigestLayer, DigestMd5Client, Opener, Sealer};
use tusk_security::Protection;

use crate::delimited::{read_delimited, write_delimited};
use crate::error::DataTransferError;

/// `SASL_TRANSFER_MAGIC_NUMBER`, big-endian.
pub const MAGIC: [u8; 4] = 0xDEAD_BEEF_u32.to_be_bytes();

/// HDFS's DataNode SASL server: protocol `hdfs`, server name `0`.
pub const PROTOCOL: &str = "hdfs";
pub const SERVER_NAME: &str = "0";

/// The most plaintext one wrapped token carries when this side writes.
pub const MAX_WRAP: usize = 64 * 1024;

/// The largest wrapped token accepted (Java's side wraps each write whole, a packet
/// being the largest).
pub const MAX_TOKEN: usize = 16 << 20;

/// A connection's read half, wrapped or not.
pub type BoxReader = Box<dyn AsyncRead + Send + Sync + Unpin>;
/// A connection's write half, wrapped or not.
pub type BoxWriter = Box<dyn AsyncWrite + Send + Sync + Unpin>;

/// `dfs.data.transfer.protection`'s list (`authentication`, `integrity`, `privacy`);
/// blank is none: no handshake.
pub fn parse_protection(text: &str) -> Result<Vec<Protection>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    Protection::parse_list(text)
}

/// Hadoop's rule for opening the handshake: protection is configured and the DataNode's
/// port is not privileged.
pub fn sasl_required(protection: &[Protection], xfer_port: u32) -> bool {
    !protection.is_empty() && xfer_port >= 1024
}

/// What a client proves on a data connection.
#[derive(Clone, Copy, Debug)]
pub enum Credential<'a> {
    /// The block token (`dfs.data.transfer.protection`), accepting these layers in
    /// order of preference.
    BlockToken(&'a TokenProto, &'a [Protection]),
    /// A data encryption key from the NameNode (`dfs.encrypt.data.transfer`):
    /// `privacy` only.
    EncryptionKey(&'a DataEncryptionKeyProto),
}

/// The client side of the handshake with `credential`. Returns the security layer
/// when `integrity` or `privacy` was negotiated.
pub async fn client_handshake<R, W>(
    rd: &mut R,
    wr: &mut W,
    credential: Credential<'_>,
) -> Result<Option<DigestLayer>, DataTransferError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut client = match credential {
        Credential::BlockToken(token, wanted) => {
            DigestMd5Client::for_token(PROTOCOL, SERVER_NAME, &token.identifier, &token.password)
                .with_protections(wanted)
        }
        Credential::EncryptionKey(key) => {
            DigestMd5Client::for_encryption_key(PROTOCOL, SERVER_NAME, key)
        }
    };
    wr.write_all(&MAGIC).await?;
    write_delimited(wr, &success(Vec::new())).await?;
    let challenge = read_message(rd).await?;
    let response = client.respond(&challenge).map_err(sasl)?;
    write_delimited(wr, &success(response)).await?;
    let done = read_message(rd).await?;
    client.check_server(&done).map_err(sasl)?;
    Ok(client.take_layer())
}

/// Both halves, wrapped in `layer` when there is one.
pub fn wrap_halves<R, W>(rd: R, wr: W, layer: Option<DigestLayer>) -> (BoxReader, BoxWriter)
where
    R: AsyncRead + Send + Sync + Unpin + 'static,
    W: AsyncWrite + Send + Sync + Unpin + 'static,
{
    match layer {
        Some(layer) => {
            let (sealer, opener) = layer.split();
            (
                Box::new(SaslReader::new(rd, opener)),
                Box::new(SaslWriter::new(wr, sealer)),
            )
        }
        None => (Box::new(rd), Box::new(wr)),
    }
}

/// Opens the handshake when there is a `credential`, then gives both halves wrapped as
/// negotiated; without it, the halves as they are.
pub async fn open<R, W>(
    mut rd: R,
    mut wr: W,
    credential: Option<Credential<'_>>,
) -> Result<(BoxReader, BoxWriter), DataTransferError>
where
    R: AsyncRead + Send + Sync + Unpin + 'static,
    W: AsyncWrite + Send + Sync + Unpin + 'static,
{
    let layer = match credential {
        Some(credential) => client_handshake(&mut rd, &mut wr, credential).await?,
        None => None,
    };
    Ok(wrap_halves(rd, wr, layer))
}

fn success(payload: Vec<u8>) -> DataTransferEncryptorMessageProto {
    DataTransferEncryptorMessageProto {
        status: DataTransferEncryptorStatus::Success as i32,
        payload: Some(payload.into()),
        ..Default::default()
    }
}

/// The payload of the server's next message; its ERROR message as the error.
async fn read_message<R: AsyncRead + Unpin>(rd: &mut R) -> Result<Vec<u8>, DataTransferError> {
    let m: DataTransferEncryptorMessageProto = read_delimited(rd).await?;
    if m.status != DataTransferEncryptorStatus::Success as i32 {
        return Err(DataTransferError::Sasl {
            message: m
                .message
                .unwrap_or_else(|| format!("SASL status {}", m.status)),
        });
    }
    Ok(m.payload.map(|p| p.to_vec()).unwrap_or_default())
}

fn sasl(e: tusk_security::SaslError) -> DataTransferError {
    DataTransferError::Sasl {
        message: e.to_string(),
    }
}

/// Reads a peer's wrapped tokens (int32 length, token) and gives their plaintext.
pub struct SaslReader<R> {
    inner: R,
    opener: Opener,
    len: [u8; 4],
    len_got: usize,
    /// The token being read, once its length is known.
    token: Option<Vec<u8>>,
    token_got: usize,
    plain: Vec<u8>,
    plain_pos: usize,
}

impl<R> SaslReader<R> {
    pub fn new(inner: R, opener: Opener) -> Self {
        SaslReader {
            inner,
            opener,
            len: [0; 4],
            len_got: 0,
            token: None,
            token_got: 0,
            plain: Vec::new(),
            plain_pos: 0,
        }
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl<R: AsyncRead + Unpin> AsyncRead for SaslReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.plain_pos < this.plain.len() {
                let n = out.remaining().min(this.plain.len() - this.plain_pos);
                out.put_slice(&this.plain[this.plain_pos..this.plain_pos + n]);
                this.plain_pos += n;
                return Poll::Ready(Ok(()));
            }
            if this.len_got < 4 {
                let mut buf = ReadBuf::new(&mut this.len[this.len_got..]);
                ready!(Pin::new(&mut this.inner).poll_read(cx, &mut buf))?;
                let n = buf.filled().len();
                if n == 0 {
                    return Poll::Ready(if this.len_got == 0 {
                        Ok(())
                    } else {
                        Err(io::ErrorKind::UnexpectedEof.into())
                    });
                }
                this.len_got += n;
                continue;
            }
            if this.token.is_none() {
                let len = u32::from_be_bytes(this.len) as usize;
                if len > MAX_TOKEN {
                    return Poll::Ready(Err(invalid(format!(
                        "SASL wrapped token of {len} bytes exceeds {MAX_TOKEN}"
                    ))));
                }
                this.token_got = 0;
                this.token = Some(vec![0; len]);
            }
            let token = this.token.as_mut().expect("set above");
            while this.token_got < token.len() {
                let mut buf = ReadBuf::new(&mut token[this.token_got..]);
                ready!(Pin::new(&mut this.inner).poll_read(cx, &mut buf))?;
                let n = buf.filled().len();
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                }
                this.token_got += n;
            }
            let token = this.token.take().unwrap_or_default();
            this.len_got = 0;
            this.plain = this
                .opener
                .unwrap(&token)
                .map_err(|e| invalid(e.to_string()))?;
            this.plain_pos = 0;
        }
    }
}

/// Wraps each write as one token after its int32 length (at most [`MAX_WRAP`] bytes of
/// plaintext a token). A write is taken whole into the pending frame; flush sends it.
pub struct SaslWriter<W> {
    inner: W,
    sealer: Sealer,
    pending: Vec<u8>,
    sent: usize,
}

impl<W> SaslWriter<W> {
    pub fn new(inner: W, sealer: Sealer) -> Self {
        SaslWriter {
            inner,
            sealer,
            pending: Vec::new(),
            sent: 0,
        }
    }
}

impl<W: AsyncWrite + Unpin> SaslWriter<W> {
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.pending.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.pending.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for SaslWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let n = buf.len().min(MAX_WRAP);
        let token = this.sealer.wrap(&buf[..n]);
        this.pending
            .extend_from_slice(&(token.len() as u32).to_be_bytes());
        this.pending.extend_from_slice(&token);
        // Start sending; what the socket does not take now goes on the next call.
        if let Poll::Ready(Err(e)) = this.drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tusk_security::digest_md5::DigestMd5Server;

    /// The server's side of the handshake, as the DataNode runs it, on raw halves.
    async fn serve<R, W>(rd: &mut R, wr: &mut W, offered: &[Protection]) -> Option<DigestLayer>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut magic = [0u8; 4];
        rd.read_exact(&mut magic).await.unwrap();
        assert_eq!(magic, MAGIC);
        let opening: DataTransferEncryptorMessageProto = read_delimited(rd).await.unwrap();
        assert_eq!(opening.payload.as_deref(), Some(&[][..]));
        let server = DigestMd5Server::new(PROTOCOL, SERVER_NAME).with_protections(offered);
        write_delimited(wr, &success(server.challenge()))
            .await
            .unwrap();
        let response: DataTransferEncryptorMessageProto = read_delimited(rd).await.unwrap();
        let done = server
            .verify(response.payload.as_deref().unwrap(), |_| {
                Ok("cGFzc3dvcmQ=".into())
            })
            .unwrap();
        write_delimited(wr, &success(done.rspauth)).await.unwrap();
        done.layer
    }

    fn token() -> TokenProto {
        TokenProto {
            identifier: b"identifier".to_vec().into(),
            password: b"password".to_vec().into(),
            kind: "HDFS_BLOCK_TOKEN".into(),
            service: String::new(),
        }
    }

    /// Writes `data` through a negotiated connection and returns what crossed the wire
    /// from the client and what the server read back out of it.
    async fn round_trip(protection: Protection, data: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (mut srd, mut swr) = tokio::io::split(server);
        let offered = [protection];
        let server_task = tokio::spawn(async move {
            let layer = serve(&mut srd, &mut swr, &offered).await;
            let mut wire = Vec::new();
            srd.read_to_end(&mut wire).await.unwrap();
            let (_, opener) = layer.expect("a layer").split();
            let mut plain = Vec::new();
            SaslReader::new(&wire[..], opener)
                .read_to_end(&mut plain)
                .await
                .unwrap();
            (wire, plain)
        });
        let (crd, cwr) = tokio::io::split(client);
        let token = token();
        let (rd, mut wr) = open(
            crd,
            cwr,
            Some(Credential::BlockToken(&token, &[protection][..])),
        )
        .await
        .unwrap();
        // Several writes, one larger than a token carries.
        for chunk in data.chunks(100_000) {
            wr.write_all(chunk).await.unwrap();
        }
        wr.shutdown().await.unwrap();
        drop((rd, wr));
        server_task.await.unwrap()
    }

    #[tokio::test]
    async fn privacy_hides_the_bytes_and_integrity_carries_them_checked() {
        let pattern = b"TUSK-PLAINTEXT-PATTERN-";
        let data: Vec<u8> = pattern.iter().copied().cycle().take(300_000).collect();
        let (wire, plain) = round_trip(Protection::Privacy, &data).await;
        assert_eq!(plain, data);
        assert!(wire.len() > data.len());
        assert!(
            !wire.windows(pattern.len()).any(|w| w == pattern),
            "the plaintext pattern crossed the wire"
        );
        let (wire, plain) = round_trip(Protection::Integrity, &data).await;
        assert_eq!(plain, data);
        assert!(wire.windows(pattern.len()).any(|w| w == pattern));
    }

    #[tokio::test]
    async fn a_client_without_a_common_layer_is_refused() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (mut srd, mut swr) = tokio::io::split(server);
        tokio::spawn(async move {
            let mut magic = [0u8; 4];
            srd.read_exact(&mut magic).await.unwrap();
            let _: DataTransferEncryptorMessageProto = read_delimited(&mut srd).await.unwrap();
            let server = DigestMd5Server::new(PROTOCOL, SERVER_NAME)
                .with_protections(&[Protection::Privacy]);
            write_delimited(&mut swr, &success(server.challenge()))
                .await
                .unwrap();
        });
        let (mut crd, mut cwr) = tokio::io::split(client);
        let e = client_handshake(
            &mut crd,
            &mut cwr,
            Credential::BlockToken(&token(), &[Protection::Authentication]),
        )
        .await
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("No common protection layer between client and server"),
            "{e}"
        );
    }
}
