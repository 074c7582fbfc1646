//! The SASL handshake a client may open a data connection with (HDFS's
//! `SaslDataTransferServer`): the int32 magic `0xDEADBEEF`, then delimited
//! `DataTransferEncryptorMessageProto`s carrying a DIGEST-MD5 exchange over the
//! client's block token. The qualities of protection offered are
//! `dfs.data.transfer.protection`'s (`auth` alone when it is unset): under `auth` the
//! client proves it holds a valid token and the connection goes on as plain
//! DataTransferProtocol; under `auth-int` / `auth-conf` the rest of the connection is
//! wrapped (`tusk_datatransfer::sasl`). With protection configured a connection that
//! does not open with the handshake is refused (`transfer.rs`), as HDFS refuses it on a
//! port that is not privileged.
//!
//! Hadoop's own client skips this step under SIMPLE authentication, but `hdfs-native`
//! opens it whenever its located block carries a token, so a DataNode with tokens on
//! must answer it (an unsecured Hadoop DataNode cannot, and hdfs-native fails there).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tracing::debug;
use tusk_datatransfer::sasl::{PROTOCOL, SERVER_NAME};
use tusk_datatransfer::{read_delimited, write_delimited};
use tusk_proto::hdfs::data_transfer_encryptor_message_proto::DataTransferEncryptorStatus;
use tusk_proto::hdfs::DataTransferEncryptorMessageProto;
use tusk_security::digest_md5::{
    block_token_password, encryption_key_password, DigestLayer, DigestMd5Server,
};
use tusk_security::SaslError;

use crate::error::DataNodeError;
use crate::Node;

pub(crate) use tusk_datatransfer::sasl::MAGIC;

/// Runs the handshake after the first byte was seen to be the magic's; on success the
/// connection continues with ops, wrapped in the layer returned when there is one.
pub(crate) async fn serve<R, W>(
    node: &Node,
    rd: &mut R,
    wr: &mut W,
) -> Result<Option<DigestLayer>, DataNodeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut magic = [0u8; 4];
    rd.read_exact(&mut magic)
        .await
        .map_err(tusk_datatransfer::DataTransferError::from)?;
    if magic != MAGIC {
        return Err(malformed(format!("not the SASL magic: {magic:02x?}")));
    }
    let outcome = handshake(node, rd, wr).await;
    if let Err(e) = &outcome {
        let token_error = matches!(e, DataNodeError::Sasl(SaslError::Token(_)));
        let reply = DataTransferEncryptorMessageProto {
            status: DataTransferEncryptorStatus::Error as i32,
            message: Some(e.to_string()),
            access_token_error: token_error.then_some(true),
            ..Default::default()
        };
        let _ = write_delimited(wr, &reply).await;
    }
    outcome
}

async fn handshake<R, W>(
    node: &Node,
    rd: &mut R,
    wr: &mut W,
) -> Result<Option<DigestLayer>, DataNodeError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // DIGEST-MD5 has no initial response: the first message only opens the exchange.
    let opening: DataTransferEncryptorMessageProto = read_delimited(rd).await?;
    expect_success(&opening)?;
    if node.block_keys().is_none() {
        return Err(malformed(
            "block access tokens are off: no SASL handshake expected".into(),
        ));
    }
    // Under dfs.encrypt.data.transfer only a data encryption key, and only
    // `auth-conf`, as HDFS's SaslDataTransferServer.
    let encrypt = node.options.encrypt_data_transfer;
    let offered = match encrypt {
        true => vec![tusk_security::Protection::Privacy],
        false => node.options.data_transfer_protection.clone(),
    };
    let server = DigestMd5Server::new(PROTOCOL, SERVER_NAME).with_protections(&offered);
    write_delimited(wr, &success(server.challenge())).await?;
    let response: DataTransferEncryptorMessageProto = read_delimited(rd).await?;
    expect_success(&response)?;
    let now = tusk_common::now_millis();
    let pool = node.block_pool_id();
    let done = server.verify(response.payload.as_deref().unwrap_or_default(), |user| {
        let keys = node.block_keys();
        let keys = keys
            .as_ref()
            .ok_or(SaslError::Token(tusk_security::BlockTokenError::NoKeys))?;
        match encrypt {
            true => encryption_key_password(keys, user, &pool),
            false => block_token_password(keys, user, now),
        }
    })?;
    debug!(
        user_len = done.username.len(),
        protection = ?done.protection,
        "SASL DIGEST-MD5 handshake done"
    );
    write_delimited(wr, &success(done.rspauth)).await?;
    node.sasl_handshakes
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if done.layer.is_some() {
        node.sasl_wrapped
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(done.layer)
}

fn success(payload: Vec<u8>) -> DataTransferEncryptorMessageProto {
    DataTransferEncryptorMessageProto {
        status: DataTransferEncryptorStatus::Success as i32,
        payload: Some(payload.into()),
        ..Default::default()
    }
}

fn expect_success(m: &DataTransferEncryptorMessageProto) -> Result<(), DataNodeError> {
    if m.status == DataTransferEncryptorStatus::Success as i32 {
        Ok(())
    } else {
        Err(malformed(format!(
            "client sent status {}: {}",
            m.status,
            m.message.as_deref().unwrap_or_default()
        )))
    }
}

fn malformed(reason: String) -> DataNodeError {
    DataNodeError::Sasl(SaslError::Malformed { reason })
}
