//! The RPC client: one TCP connection shared by every caller. Callers send frames to a
//! writer task and wait on a oneshot channel keyed by call id; a reader task routes each
//! reply to its caller. A dropped connection fails the calls in flight and is replaced on
//! the next call. Opening a connection is retried as Hadoop's `Client` does
//! ([`ConnectRetry`]): a refused connect up to `ipc.client.connect.max.retries` times,
//! `ipc.client.connect.retry.interval` apart; a connect that times out up to
//! `ipc.client.connect.max.retries.on.timeouts` times, at once (the timeout was the wait).
//! A client given a token authenticates with it (SASL `TOKEN`, DIGEST-MD5: `client/sasl`)
//! before its connection context, and then runs as the token's user. A client of servers
//! one of which is active at a time (HA NameNodes) moves between them: `client/failover`.

mod failover;
mod sasl;

pub use failover::{FailoverOptions, FailoverRpcClient};

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tusk_proto::common::{
    rpc_request_header_proto::OperationProto, rpc_response_header_proto::RpcStatusProto,
    rpc_sasl_proto::SaslState, IpcConnectionContextProto, RequestHeaderProto,
    RpcCallerContextProto, RpcKindProto, RpcRequestHeaderProto, RpcResponseHeaderProto, TokenProto,
    UserInformationProto,
};

use tusk_common::{ConfigError, Configuration};
use tusk_security::kerberos::{KerberosLogin, SaslLayer};
use tusk_security::Protection;

use crate::error::{RemoteException, RpcError};
use crate::frame::{self, Encoded};

/// How a client connects and how many calls it keeps in flight.
#[derive(Clone, Debug)]
pub struct RpcClientOptions {
    /// Effective user sent in the connection context; under Kerberos, empty means the
    /// ticket's principal (anyone else must be a proxy user the server allows).
    pub user: String,
    /// `declaringClassProtocolName` of every call.
    pub protocol: String,
    /// Calls in flight on the connection at most (`ipc.client.async.calls.max`).
    pub max_in_flight: usize,
    /// `ipc.client.connect.timeout`: one connect attempt at most.
    pub connect_timeout: Duration,
    /// How opening a connection is retried.
    pub connect_retry: ConnectRetry,
    /// A token to authenticate with (SASL `TOKEN`, as YARN's AMs and NodeManager
    /// clients do); `None`: SIMPLE, as `user`. Under a token the server takes the
    /// connection's user from the token and `user` is not sent.
    pub token: Option<TokenProto>,
    /// Authenticate with Kerberos (SASL `KERBEROS`), as a Hadoop client with
    /// `hadoop.security.authentication=kerberos`: with the default credential cache's
    /// ticket (a user) or a keytab's keys (a service). A token, when given, is used
    /// instead.
    pub kerberos: Option<KerberosLogin>,
    /// The security layers a Kerberos connection accepts (`hadoop.rpc.protection`); it
    /// takes the strongest the server offers.
    pub protection: Vec<Protection>,
    /// The principal a Kerberos server must offer; `None`: any (a test's client).
    pub server_principal: Option<crate::auth::ServerPrincipal>,
    /// Sent with every call (Hadoop's `CallerContext`): what this client is doing, for
    /// the server's audit log.
    pub caller_context: Option<RpcCallerContextProto>,
}

/// Hadoop's connect retry (`Client.Connection.setupConnection`): each failed connect
/// is counted as a timeout or as another failure (refused, unreachable); either count
/// past its maximum fails the call with the last error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ConnectRetry {
    /// `ipc.client.connect.max.retries` (10).
    pub max_retries: u32,
    /// `ipc.client.connect.retry.interval` (1000 ms): the sleep before each such retry.
    pub interval: Duration,
    /// `ipc.client.connect.max.retries.on.timeouts` (45); retried without a sleep.
    pub max_retries_on_timeouts: u32,
}

impl Default for ConnectRetry {
    fn default() -> Self {
        ConnectRetry {
            max_retries: 10,
            interval: Duration::from_millis(1000),
            max_retries_on_timeouts: 45,
        }
    }
}

impl ConnectRetry {
    /// One attempt, no retry: for callers that run their own retry loop (heartbeats,
    /// YARN clients with `yarn.resourcemanager.connect.*`, as Hadoop's RMProxy does).
    pub const NONE: ConnectRetry = ConnectRetry {
        max_retries: 0,
        interval: Duration::ZERO,
        max_retries_on_timeouts: 0,
    };

    /// The three `ipc.client.connect.*` keys, Hadoop's defaults where unset.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfigError> {
        let d = ConnectRetry::default();
        Ok(ConnectRetry {
            max_retries: conf.get_u64("ipc.client.connect.max.retries", d.max_retries.into())?
                as u32,
            interval: conf.get_duration(
                "ipc.client.connect.retry.interval",
                d.interval,
                Duration::from_millis(1),
            )?,
            max_retries_on_timeouts: conf.get_u64(
                "ipc.client.connect.max.retries.on.timeouts",
                d.max_retries_on_timeouts.into(),
            )? as u32,
        })
    }
}

impl Default for RpcClientOptions {
    fn default() -> Self {
        RpcClientOptions {
            user: tusk_common::current_user(),
            protocol: tusk_proto::protocol_names::CLIENT_PROTOCOL.to_string(),
            max_in_flight: 100,
            connect_timeout: Duration::from_secs(20),
            connect_retry: ConnectRetry::default(),
            token: None,
            kerberos: None,
            protection: vec![Protection::Authentication],
            server_principal: None,
            caller_context: None,
        }
    }
}

type Reply = Result<Bytes, RpcError>;

/// Calls waiting for replies on one connection.
#[derive(Default)]
struct Pending {
    /// Call id → the caller's reply slot; removed when the reply arrives.
    calls: HashMap<i32, oneshot::Sender<Reply>>,
    /// Set by the reader task when the connection ends; no new calls are accepted.
    closed: bool,
    /// The server's FATAL reply that ended the connection, which a call arriving after
    /// the end gets too.
    fatal: Option<RemoteException>,
}

impl Pending {
    /// What a call on the ended connection gets.
    fn ended(&self) -> RpcError {
        ended(self.fatal.as_ref())
    }
}

/// The error of a call on a connection that ended, by a FATAL reply or otherwise.
fn ended(fatal: Option<&RemoteException>) -> RpcError {
    match fatal {
        Some(fatal) => RpcError::Remote(fatal.clone()),
        None => RpcError::ConnectionClosed,
    }
}

struct Connection {
    /// Encoded request frames for the writer task.
    tx: mpsc::UnboundedSender<BytesMut>,
    /// Shared with the reader task.
    pending: Arc<Mutex<Pending>>,
}

/// A client for one RPC server and protocol.
pub struct RpcClient {
    addr: String,
    options: RpcClientOptions,
    /// The live connection, replaced after it fails.
    conn: Mutex<Option<Arc<Connection>>>,
    /// Held while a new connection is being opened, so only one caller opens it.
    connecting: tokio::sync::Mutex<()>,
    next_call_id: AtomicI32,
    /// 16 random bytes naming this client in every call (retry cache key on servers).
    client_id: Bytes,
    /// Bounds calls in flight.
    window: Semaphore,
    /// Connect attempts made, successful or not.
    connect_attempts: AtomicU64,
    /// Connect cycles (with their retries) that failed; a caller that waited for a
    /// cycle which failed takes its error instead of starting one of its own.
    failed_cycles: AtomicU64,
    /// The error that ended the last failed cycle.
    last_failure: Mutex<Option<ConnectFailure>>,
}

/// What ended a failed connect cycle, kept to hand to callers that waited for it.
#[derive(Clone)]
struct ConnectFailure {
    kind: std::io::ErrorKind,
    message: String,
    retries: u32,
}

impl RpcClient {
    /// Creates a client; the connection is opened by the first call.
    pub fn new(addr: impl Into<String>, options: RpcClientOptions) -> Self {
        let client_id: [u8; 16] = rand::random();
        Self::with_client_id(addr, options, Bytes::copy_from_slice(&client_id))
    }

    /// A client naming itself `client_id` in its calls: the servers of one
    /// [`FailoverRpcClient`] share one, as the retry cache a NameNode passes on to the
    /// next active one is keyed on it.
    pub(crate) fn with_client_id(
        addr: impl Into<String>,
        options: RpcClientOptions,
        client_id: Bytes,
    ) -> Self {
        RpcClient {
            addr: addr.into(),
            window: Semaphore::new(options.max_in_flight.max(1)),
            options,
            conn: Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            next_call_id: AtomicI32::new(0),
            client_id,
            connect_attempts: AtomicU64::new(0),
            failed_cycles: AtomicU64::new(0),
            last_failure: Mutex::new(None),
        }
    }

    /// Connect attempts made so far (each retry counts).
    pub fn connect_attempts(&self) -> u64 {
        self.connect_attempts.load(Ordering::Relaxed)
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    pub fn user(&self) -> &str {
        &self.options.user
    }

    /// Calls `method` with `request` and decodes the reply.
    pub async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        request: &Req,
    ) -> Result<Resp, RpcError> {
        let reply = self.call_raw(method, &request.encode_to_vec()).await?;
        Ok(Resp::decode(reply)?)
    }

    /// Calls `method` with an encoded request; returns the encoded reply.
    pub async fn call_raw(&self, method: &str, request: &[u8]) -> Result<Bytes, RpcError> {
        let call_id = self.next_call_id.fetch_add(1, Ordering::Relaxed) & i32::MAX;
        self.call_as(method, request, call_id, 0).await
    }

    /// Sends a call as `call_id`, its `retry_count`th retry: a retry keeps the first
    /// attempt's call id, so a server's retry cache (keyed on client id and call id)
    /// can answer it with the first attempt's outcome. The caller keeps `call_id`
    /// unique among this client's calls in flight.
    pub(crate) async fn call_as(
        &self,
        method: &str,
        request: &[u8],
        call_id: i32,
        retry_count: i32,
    ) -> Result<Bytes, RpcError> {
        let _permit = self
            .window
            .acquire()
            .await
            .map_err(|_| RpcError::ConnectionClosed)?;
        let conn = self.connection().await?;
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = conn.pending.lock().expect("pending lock");
            if pending.closed {
                return Err(pending.ended());
            }
            pending.calls.insert(call_id, tx);
        }
        let header = RpcRequestHeaderProto {
            retry_count: Some(retry_count),
            ..self.request_header(call_id)
        };
        let req_header = RequestHeaderProto {
            method_name: method.to_string(),
            declaring_class_protocol_name: self.options.protocol.clone(),
            client_protocol_version: 1,
        };
        let mut out = BytesMut::new();
        frame::write_frame(&mut out, &[&header, &req_header, &Encoded(request)]);
        let ended = || conn.pending.lock().expect("pending lock").ended();
        conn.tx.send(out).map_err(|_| ended())?;
        rx.await.map_err(|_| ended())?
    }

    fn request_header(&self, call_id: i32) -> RpcRequestHeaderProto {
        RpcRequestHeaderProto {
            rpc_kind: Some(RpcKindProto::RpcProtocolBuffer as i32),
            rpc_op: Some(OperationProto::RpcFinalPacket as i32),
            call_id,
            client_id: self.client_id.clone(),
            retry_count: Some(0),
            caller_context: self.options.caller_context.clone(),
            ..Default::default()
        }
    }

    /// The live connection, opening one if there is none.
    async fn connection(&self) -> Result<Arc<Connection>, RpcError> {
        if let Some(c) = self.live_connection() {
            return Ok(c);
        }
        let failed_before = self.failed_cycles.load(Ordering::Acquire);
        let _opening = self.connecting.lock().await;
        if let Some(c) = self.live_connection() {
            return Ok(c);
        }
        if self.failed_cycles.load(Ordering::Acquire) != failed_before {
            if let Some(f) = self.last_failure.lock().expect("failure slot").clone() {
                return Err(RpcError::Connect {
                    addr: self.addr.clone(),
                    retries: f.retries,
                    source: std::io::Error::new(f.kind, f.message),
                });
            }
        }
        let conn = Arc::new(self.connect().await?);
        *self.conn.lock().expect("connection slot") = Some(conn.clone());
        Ok(conn)
    }

    fn live_connection(&self) -> Option<Arc<Connection>> {
        let slot = self.conn.lock().expect("connection slot");
        slot.as_ref()
            .filter(|c| !c.pending.lock().expect("pending lock").closed)
            .cloned()
    }

    /// Opens a socket, retrying as [`ConnectRetry`] says; a cycle that fails is
    /// recorded for the callers waiting on it.
    async fn open_socket(&self) -> Result<TcpStream, RpcError> {
        let retry = self.options.connect_retry;
        let (mut failures, mut timeouts) = (0u32, 0u32);
        loop {
            self.connect_attempts.fetch_add(1, Ordering::Relaxed);
            let source = match tokio::time::timeout(
                self.options.connect_timeout,
                TcpStream::connect(&self.addr),
            )
            .await
            {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(e)) => e,
                Err(_) => std::io::ErrorKind::TimedOut.into(),
            };
            let timed_out = source.kind() == std::io::ErrorKind::TimedOut;
            let (count, limit) = if timed_out {
                (&mut timeouts, retry.max_retries_on_timeouts)
            } else {
                (&mut failures, retry.max_retries)
            };
            if *count >= limit {
                return Err(self.connect_failed(failures + timeouts, source));
            }
            *count += 1;
            tracing::info!(
                addr = %self.addr,
                error = %source,
                "Retrying connect to server: {}. Already tried {} time(s)",
                self.addr,
                failures + timeouts - 1
            );
            if !timed_out {
                tokio::time::sleep(retry.interval).await;
            }
        }
    }

    fn connect_failed(&self, retries: u32, source: std::io::Error) -> RpcError {
        *self.last_failure.lock().expect("failure slot") = Some(ConnectFailure {
            kind: source.kind(),
            message: source.to_string(),
            retries,
        });
        self.failed_cycles.fetch_add(1, Ordering::Release);
        RpcError::Connect {
            addr: self.addr.clone(),
            retries,
            source,
        }
    }

    async fn connect(&self) -> Result<Connection, RpcError> {
        let stream = self.open_socket().await?;
        let _ = stream.set_nodelay(true);
        let (mut rd, mut wr) = stream.into_split();
        let token = self.options.token.as_ref();
        let auth = if token.is_some() || self.options.kerberos.is_some() {
            frame::AUTH_SASL
        } else {
            frame::AUTH_NONE
        };
        wr.write_all(&frame::preamble(auth)).await?;
        let sasl_header = self.request_header(frame::SASL_CALL_ID);
        let mut effective_user = self.options.user.clone();
        let mut layer = None;
        if let Some(token) = token {
            let chosen = sasl::authenticate(
                &mut rd,
                &mut wr,
                &sasl_header,
                token,
                &self.options.protection,
            )
            .await?;
            layer = chosen.map(|l| Wrapper::new(l, sasl_header));
        } else if let Some(login) = &self.options.kerberos {
            let expected = self.options.server_principal.as_ref().map(|p| {
                let host = self.addr.rsplit_once(':').map_or(&*self.addr, |(h, _)| h);
                (p, host)
            });
            let (principal, chosen) = sasl::authenticate_kerberos(
                &mut rd,
                &mut wr,
                &sasl_header,
                login,
                &self.options.protection,
                expected,
            )
            .await?;
            if effective_user.is_empty() {
                effective_user = principal;
            }
            layer = chosen.map(|l| Wrapper::new(l, sasl_header));
        }
        let mut hello = BytesMut::new();
        let context = IpcConnectionContextProto {
            // Hadoop's client names no user under a token: the server knows it.
            user_info: token.is_none().then_some(UserInformationProto {
                effective_user: Some(effective_user),
                real_user: None,
            }),
            protocol: Some(self.options.protocol.clone()),
        };
        let header = self.request_header(frame::CONNECTION_CONTEXT_CALL_ID);
        frame::write_frame(&mut hello, &[&header, &context]);
        if let Some(layer) = &layer {
            hello = layer.wrap(&hello)?;
        }
        wr.write_all(&hello).await?;

        let pending = Arc::new(Mutex::new(Pending::default()));
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(wr, rx, layer.clone()));
        tokio::spawn(read_loop(
            BufReader::with_capacity(64 * 1024, rd),
            pending.clone(),
            layer,
        ));
        Ok(Connection { tx, pending })
    }
}

/// A connection's security layer, shared by its writer and reader: wraps what is sent
/// in SASL WRAP frames, unwraps what arrives.
#[derive(Clone)]
struct Wrapper {
    layer: Arc<Mutex<SaslLayer>>,
    sasl_header: Arc<RpcRequestHeaderProto>,
}

impl Wrapper {
    fn new(layer: SaslLayer, sasl_header: RpcRequestHeaderProto) -> Self {
        Wrapper {
            layer: Arc::new(Mutex::new(layer)),
            sasl_header: Arc::new(sasl_header),
        }
    }

    /// `plain` (whole frames) as SASL WRAP frames, in chunks the server takes.
    fn wrap(&self, plain: &[u8]) -> Result<BytesMut, RpcError> {
        let mut layer = self.layer.lock().expect("layer lock");
        let mut out = BytesMut::new();
        for chunk in plain.chunks(layer.max_plain()) {
            let token = layer
                .wrap(chunk)
                .map_err(|e| RpcError::Protocol(format!("wrapping a call: {e}")))?;
            let msg = frame::sasl_message(SaslState::Wrap, Some(token.into()), vec![]);
            frame::write_frame(&mut out, &[self.sasl_header.as_ref(), &msg]);
        }
        Ok(out)
    }

    fn unwrap(&self, token: &[u8]) -> Result<Vec<u8>, RpcError> {
        let mut layer = self.layer.lock().expect("layer lock");
        layer
            .unwrap(token)
            .map_err(|e| RpcError::Protocol(format!("unwrapping a reply: {e}")))
    }
}

async fn write_loop(
    mut wr: tokio::net::tcp::OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<BytesMut>,
    layer: Option<Wrapper>,
) {
    let mut batch = BytesMut::new();
    while let Some(first) = rx.recv().await {
        batch.unsplit(first);
        while let Ok(more) = rx.try_recv() {
            batch.unsplit(more);
        }
        let sent = match &layer {
            None => wr.write_all(&batch).await.is_ok(),
            Some(layer) => match layer.wrap(&batch) {
                Ok(wrapped) => wr.write_all(&wrapped).await.is_ok(),
                Err(e) => {
                    tracing::debug!(error = %e, "RPC client connection ended");
                    false
                }
            },
        };
        if !sent {
            return;
        }
        batch.clear();
    }
}

async fn read_loop<R: tokio::io::AsyncRead + Unpin>(
    mut rd: R,
    pending: Arc<Mutex<Pending>>,
    layer: Option<Wrapper>,
) {
    let result = read_replies(&mut rd, &pending, layer.as_ref()).await;
    if let Err(e) = &result {
        tracing::debug!(error = %e, "RPC client connection ended");
    }
    // A FATAL reply (a refused connection) is what every call still waiting gets, and
    // every call made after.
    let (calls, fatal) = {
        let mut p = pending.lock().expect("pending lock");
        p.closed = true;
        if let Err(RpcError::Remote(fatal)) = &result {
            p.fatal = Some(fatal.clone());
        }
        (std::mem::take(&mut p.calls), p.fatal.clone())
    };
    for (_, slot) in calls {
        let _ = slot.send(Err(ended(fatal.as_ref())));
    }
}

async fn read_replies<R: tokio::io::AsyncRead + Unpin>(
    rd: &mut R,
    pending: &Mutex<Pending>,
    layer: Option<&Wrapper>,
) -> Result<(), RpcError> {
    // Unwrapped bytes not yet a whole frame.
    let mut unwrapped = BytesMut::new();
    while let Some(mut body) = frame::read_frame(rd).await? {
        let Some(layer) = layer else {
            deliver(body, pending)?;
            continue;
        };
        let header: RpcResponseHeaderProto = frame::next_message(&mut body)?;
        if header.call_id as i32 != frame::SASL_CALL_ID
            || header.status != RpcStatusProto::Success as i32
        {
            return Err(RpcError::Protocol(format!(
                "reply to call {} not wrapped in the negotiated security layer",
                header.call_id as i32
            )));
        }
        let msg: tusk_proto::common::RpcSaslProto = frame::next_message(&mut body)?;
        unwrapped.extend_from_slice(&layer.unwrap(msg.token())?);
        while let Some(inner) = frame::split_frame(&mut unwrapped)? {
            deliver(inner, pending)?;
        }
    }
    Ok(())
}

/// Hands one reply frame to the call waiting for it; an error ends the connection.
fn deliver(mut body: Bytes, pending: &Mutex<Pending>) -> Result<(), RpcError> {
    let header: RpcResponseHeaderProto = frame::next_message(&mut body)?;
    let call_id = header.call_id as i32;
    let fatal = header.status == RpcStatusProto::Fatal as i32;
    let reply = if header.status == RpcStatusProto::Success as i32 {
        frame::next_raw(&mut body)
    } else {
        Err(RpcError::Remote(RemoteException::new(
            header.exception_class_name.unwrap_or_default(),
            header.error_msg.unwrap_or_default(),
        )))
    };
    let slot = pending.lock().expect("pending lock").calls.remove(&call_id);
    match (slot, fatal) {
        (Some(slot), false) => {
            let _ = slot.send(reply);
        }
        (Some(slot), true) => {
            let _ = slot.send(reply);
            return Err(RpcError::Protocol("server sent a fatal reply".into()));
        }
        // Not a call's: the server refused the connection itself.
        (None, true) => return reply.map(|_| ()),
        (None, false) => {}
    }
    Ok(())
}
