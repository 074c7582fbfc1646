//! WebHDFS on the DataNode (Hadoop's `WebHdfsHandler`): the second step of the data
//! operations the NameNode redirects here. The bytes go through Tusk's own client as
//! the request's user, streamed both ways: CREATE writes the request body into a new
//! file packet by packet (the first replica lands on this node when placement allows);
//! APPEND writes it to the end of an existing file the same way; OPEN answers the
//! file's bytes from `offset` for `length` as they are read; GETFILECHECKSUM answers
//! the file's checksum as the client computes it. None holds more than a packet
//! (CREATE, APPEND) or a chunk of [`READ_CHUNK`] (OPEN) in memory.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use tusk_client::{ClientError, ClientOptions, CreateOptions, DfsClient, FileReader, FileWriter};
use tusk_http::Router;
use tusk_rpc::HadoopException;
use tusk_security::ProxyUsers;
use tusk_webhdfs::{json, path::fs_path, Op, Params, Result, WebHdfsError, PREFIX};

use crate::Node;

/// Bytes read from the file per chunk of an OPEN answer: 64 KiB chunks read a 256 MiB
/// file about half as fast as `tusk fs -get`; 1 MiB ones as fast (docs/design.md).
const READ_CHUNK: usize = 1024 * 1024;
/// Clients kept, one per user; past this many the cache starts over.
const MAX_CLIENTS: usize = 64;

/// What every handler shares.
struct WebHdfs {
    /// The node, whose active NameNode (or only one) WebHDFS acts on (Hadoop names it
    /// in `namenoderpcaddress`, which only selects among a federation's NameNodes).
    node: Arc<Node>,
    /// A client per NameNode and user, so each user's calls carry their own name and a
    /// failover gets new clients.
    clients: Mutex<HashMap<(String, String), DfsClient>>,
    /// Who may act for whom with `doas` (`hadoop.proxyuser.*`), checked here again as
    /// Hadoop's DataNode does.
    proxy_users: ProxyUsers,
    /// Under Kerberos a request acts with the delegation token it carries
    /// (`delegation=`, which the NameNode's redirect passes on); `user.name` is not
    /// believed.
    kerberos: bool,
}

/// The WebHDFS routes of the DataNode `node`.
pub(crate) fn router(node: &Arc<Node>) -> Router {
    let state = Arc::new(WebHdfs {
        node: node.clone(),
        clients: Mutex::new(HashMap::new()),
        proxy_users: ProxyUsers::from_pairs(node.options.conf.0.iter()),
        kerberos: tusk_rpc::auth::kerberos_enabled(&node.options.conf.0).unwrap_or(false),
    });
    Router::new()
        .route(&format!("{PREFIX}/{{*path}}"), any(handle))
        .with_state(state)
}

async fn handle(
    State(w): State<Arc<WebHdfs>>,
    method: Method,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(path): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    body: Body,
) -> Response {
    let params = Params::new(query);
    let client = w.client_for(&params, peer);
    let outcome = match (params.op(&method), client, fs_path(&path)) {
        (Ok(op), Ok(client), Ok(path)) => dispatch(op, &client, &path, &params, body).await,
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Err(e),
    };
    outcome.unwrap_or_else(IntoResponse::into_response)
}

/// The operations a DataNode runs.
async fn dispatch(
    op: Op,
    client: &DfsClient,
    path: &str,
    params: &Params,
    body: Body,
) -> Result<Response> {
    match op {
        Op::Create => create(client, path, params, body).await,
        Op::Open => open(client, path, params).await,
        Op::Append => append(client, path, params, body).await,
        Op::GetFileChecksum => file_checksum(client, path).await,
        other => Err(WebHdfsError::illegal_argument(format!(
            "Invalid operation {other}"
        ))),
    }
}

impl WebHdfs {
    /// The client a request acts through: under Kerberos one authenticating with the
    /// request's delegation token, else one naming the request's user.
    fn client_for(&self, params: &Params, peer: SocketAddr) -> Result<DfsClient> {
        if !self.kerberos {
            let user = params.user_as(&self.proxy_users, peer.ip())?;
            return Ok(self.client(&user, |options| options));
        }
        let token = params.delegation_token()?;
        let key = tusk_security::delegation_token::encode_url(&token);
        Ok(self.client(&key, |options| ClientOptions {
            kerberos: true,
            user: String::new(),
            delegation_token: Some(token),
            ..options
        }))
    }

    /// The cached client for `key` on the active NameNode, made with `options` from the
    /// defaults.
    fn client(&self, key: &str, options: impl FnOnce(ClientOptions) -> ClientOptions) -> DfsClient {
        let namenode = self.node.namenodes.active_addr();
        let cache_key = (namenode.clone(), key.to_string());
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(&cache_key) {
            return c.clone();
        }
        if clients.len() >= MAX_CLIENTS {
            clients.clear();
        }
        let client = DfsClient::new(options(ClientOptions {
            namenode,
            user: key.to_string(),
            ..ClientOptions::default()
        }));
        clients.insert(cache_key, client.clone());
        client
    }
}

/// Writes the request body into a new file; 201 with the file's `hdfs://` URI.
/// Replication and block size default to the NameNode's.
async fn create(client: &DfsClient, path: &str, params: &Params, body: Body) -> Result<Response> {
    let defaults = client.server_defaults().await.map_err(client_error)?;
    let options = CreateOptions {
        overwrite: params.overwrite()?,
        replication: Some(params.replication()?.unwrap_or(defaults.replication as u16)),
        block_size: Some(params.block_size()?.unwrap_or(defaults.block_size)),
        permission: Some(params.permission()?.unwrap_or(0o644)),
        create_parent: params.create_parent()?,
    };
    params.buffer_size()?;
    let mut writer = client.create(path, options).await.map_err(client_error)?;
    write_body(&mut writer, body).await?;
    writer.close().await.map_err(client_error)?;
    let location = format!("hdfs://{}{path}", client.options().namenode);
    Ok((
        StatusCode::CREATED,
        [
            (header::LOCATION, location.as_str()),
            (header::CONTENT_LENGTH, "0"),
        ],
    )
        .into_response())
}

/// Appends the request body to the file, streamed as it comes; 200 with no body once
/// the file is closed (Hadoop's `onAppend`).
async fn append(client: &DfsClient, path: &str, params: &Params, body: Body) -> Result<Response> {
    params.buffer_size()?;
    let mut writer = client.append(path, false).await.map_err(client_error)?;
    write_body(&mut writer, body).await?;
    writer.close().await.map_err(client_error)?;
    Ok((StatusCode::OK, [(header::CONTENT_LENGTH, "0")]).into_response())
}

/// Writes every chunk of `body` through `writer`.
async fn write_body(writer: &mut FileWriter, body: Body) -> Result<()> {
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk =
            chunk.map_err(|e| WebHdfsError::io(format!("reading the request body: {e}")))?;
        writer.write(&chunk).await.map_err(client_error)?;
    }
    Ok(())
}

/// The file's checksum as `{"FileChecksum": ...}`, combined as the client's
/// `dfs.checksum.combine.mode` says (MD5-of-MD5-of-CRC by default).
async fn file_checksum(client: &DfsClient, path: &str) -> Result<Response> {
    let mode = client.options().checksum_combine_mode;
    let sum = client
        .file_checksum(path, mode)
        .await
        .map_err(client_error)?;
    let body = json::file_checksum(&sum.algorithm_name(), &sum.bytes()).to_string();
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, json::CONTENT_TYPE)],
        body,
    )
        .into_response())
}

/// The file's bytes from `offset`, at most `length` of them, streamed as read.
async fn open(client: &DfsClient, path: &str, params: &Params) -> Result<Response> {
    let offset = params.offset()?;
    let length = params.length()?;
    params.buffer_size()?;
    let mut reader = client.open(path).await.map_err(client_error)?;
    if offset > reader.len() {
        return Err(WebHdfsError::of(
            HadoopException::Eof,
            "Cannot seek after EOF",
        ));
    }
    reader.seek(offset);
    let available = reader.len() - offset;
    let content_length = length.map_or(available, |l| l.min(available));
    let body = Body::from_stream(read_stream(reader, content_length));
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, content_length.to_string()),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
        ],
        body,
    )
        .into_response())
}

/// `remaining` bytes of `reader` as chunks of at most [`READ_CHUNK`].
fn read_stream(
    reader: FileReader,
    remaining: u64,
) -> impl futures::Stream<Item = std::result::Result<Bytes, ClientError>> + Send {
    futures::stream::try_unfold((reader, remaining), |(mut reader, remaining)| async move {
        if remaining == 0 {
            return Ok(None);
        }
        let mut buf = BytesMut::zeroed(READ_CHUNK.min(remaining as usize));
        let n = reader.read(&mut buf).await?;
        if n == 0 {
            return Err(ClientError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file ended before its length",
            )));
        }
        buf.truncate(n);
        Ok(Some((buf.freeze(), (reader, remaining - n as u64))))
    })
}

/// A client error as WebHDFS reports it: the NameNode's exception as it is, anything
/// else an `IOException`.
fn client_error(e: ClientError) -> WebHdfsError {
    match e {
        ClientError::Remote(r) => r.into(),
        other => WebHdfsError::io(other.to_string()),
    }
}
