//! The RPC server: one task per connection that reads frames, runs calls and writes
//! their replies in batches, within the limits of [`RpcServerOptions`].

mod input;
mod limits;
mod metrics;
mod replay;
mod sasl;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::{debug, warn};
use tusk_common::Shutdown;
use tusk_proto::common::{
    rpc_request_header_proto::OperationProto,
    rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto},
    rpc_sasl_proto::SaslState,
    IpcConnectionContextProto, RpcRequestHeaderProto, RpcResponseHeaderProto, RpcSaslProto,
};

pub use limits::{RpcServerOptions, RpcServerStats, CONNECTION_BUFFER};
pub use metrics::RpcMetrics;
pub use replay::Served;
use sasl::{SaslSession, SaslStep, ServerAuth};
use tusk_security::kerberos::{Principal, SaslLayer};
use tusk_security::Protection;

use crate::auth::KerberosService;
use tusk_security::{ProxyUsers, TokenAuthority};

use crate::error::{RemoteException, RpcError};
use crate::frame::{self, Encoded};
use crate::service::{CallContext, CallOutcome, Durability, Reply, RpcService, Watermark};
use input::FrameReader;
use limits::Limits;
use metrics::CallTimer;

/// A connection keeps a reply buffer up to this size for the next replies; a larger one
/// (after a big reply) is given back once written.
const KEPT_OUT_BUFFER: usize = 256 * 1024;

/// Serves a set of protocols on one listener.
#[derive(Clone)]
pub struct RpcServer {
    /// Protocol name and implementation; fixed once the server starts. A server has a
    /// few protocols, so a scan beats hashing the long name on every call.
    services: Arc<Vec<(&'static str, Arc<dyn RpcService>)>>,
    /// What [`CallOutcome::AfterMark`] replies wait for.
    durability: Option<Arc<dyn Durability>>,
    /// The limits and their counters, shared by every connection of this server.
    limits: Arc<Limits>,
    /// Per-method timings, when the daemon keeps metrics.
    metrics: Option<Arc<RpcMetrics>>,
    /// How clients authenticate (tokens, Kerberos); `None`: SIMPLE only.
    auth: Option<Arc<ServerAuth>>,
    /// Who an authenticated user may act for (`hadoop.proxyuser.*`).
    proxy_users: Arc<ProxyUsers>,
    /// Protocols only one Kerberos principal may call (its pattern).
    client_principals: Arc<Vec<(&'static str, Principal)>>,
}

impl RpcServer {
    pub fn new(services: Vec<Arc<dyn RpcService>>) -> Self {
        let map = services.into_iter().map(|s| (s.protocol(), s)).collect();
        RpcServer {
            services: Arc::new(map),
            durability: None,
            limits: Arc::new(Limits::new(RpcServerOptions::default())),
            metrics: None,
            auth: None,
            proxy_users: Arc::new(ProxyUsers::default()),
            client_principals: Arc::new(Vec::new()),
        }
    }

    /// Lets clients authenticate with tokens `authority` checks (SASL `TOKEN`,
    /// DIGEST-MD5), as a Hadoop server with a secret manager does. SIMPLE stays offered
    /// beside it unless every protocol served requires a token
    /// ([`RpcService::requires_token`]); then a SIMPLE client is refused at once.
    pub fn with_token_authority(mut self, authority: Arc<dyn TokenAuthority>) -> Self {
        let kerberos = self.auth.as_ref().and_then(|a| a.kerberos.clone());
        let simple = kerberos.is_none() && !self.services.iter().all(|(_, s)| s.requires_token());
        let protections = self.auth.as_ref().map_or_else(
            || vec![Protection::Authentication],
            |a| a.protections.clone(),
        );
        let auth_to_local = self
            .auth
            .as_ref()
            .map(|a| a.auth_to_local.clone())
            .unwrap_or_default();
        self.auth = Some(Arc::new(ServerAuth {
            tokens: Some(authority),
            kerberos,
            protections,
            auth_to_local,
            simple,
        }));
        self
    }

    /// Offers these security layers (`hadoop.rpc.protection`) to the clients of the
    /// methods set so far: TOKEN (DIGEST-MD5's `auth-int` / `auth-conf`) on a server
    /// without Kerberos; [`Self::with_kerberos`] sets them from its service again.
    pub fn with_protection(mut self, protections: Vec<Protection>) -> Self {
        self.auth = self.auth.map(|a| {
            Arc::new(ServerAuth {
                tokens: a.tokens.clone(),
                kerberos: a.kerberos.clone(),
                protections,
                auth_to_local: a.auth_to_local.clone(),
                simple: a.simple,
            })
        });
        self
    }

    /// Lets clients authenticate with Kerberos tickets for the service's principal
    /// (SASL `KERBEROS`, GSSAPI), as a Hadoop server with
    /// `hadoop.security.authentication=kerberos` does, offering the security layers it
    /// lists (`hadoop.rpc.protection`) and naming clients by its `auth_to_local`
    /// rules; SIMPLE is no longer offered.
    pub fn with_kerberos(mut self, service: KerberosService) -> Self {
        let tokens = self.auth.as_ref().and_then(|a| a.tokens.clone());
        self.auth = Some(Arc::new(ServerAuth {
            tokens,
            kerberos: Some(service.credentials),
            protections: service.protection,
            auth_to_local: service.auth_to_local,
            simple: false,
        }));
        self
    }

    /// Lets a Kerberos-authenticated user act for others as `proxy_users` allow (a
    /// connection context naming another effective user than its ticket's, as Hadoop's
    /// client sends under `HADOOP_PROXY_USER` or `UserGroupInformation.doAs`).
    pub fn with_proxy_users(mut self, proxy_users: ProxyUsers) -> Self {
        self.proxy_users = Arc::new(proxy_users);
        self
    }

    /// Under Kerberos, lets only `principal` (a pattern such as `dn/_HOST@REALM`; any
    /// host stands for `_HOST`) call `protocol`, as Hadoop's service-level authorization
    /// does for protocols whose `@KerberosInfo` names a client principal.
    pub fn with_client_principal(mut self, protocol: &'static str, principal: Principal) -> Self {
        Arc::make_mut(&mut self.client_principals).push((protocol, principal));
        self
    }

    /// Times every call per method into `metrics` (and reports the open connections);
    /// call after [`RpcServer::with_options`].
    pub fn with_metrics(mut self, metrics: &tusk_common::Metrics) -> Self {
        let rpc = RpcMetrics::new(metrics);
        self.metrics = Some(rpc.clone());
        metrics.register_collector(metrics::ConnectionGauge(self.limits.clone()));
        let limits = self.limits.clone();
        metrics.register_beans(Arc::new(move || rpc.beans(limits.stats().open_connections)));
        self
    }

    /// Serves within `options` instead of the defaults; call before [`RpcServer::serve`].
    pub fn with_options(mut self, options: RpcServerOptions) -> Self {
        self.limits = Arc::new(Limits::new(options));
        self
    }

    /// What the server holds and has refused so far.
    pub fn stats(&self) -> RpcServerStats {
        self.limits.stats()
    }

    /// Holds `AfterMark` replies until the watermark of `durability` reaches their mark;
    /// a connection holding replies raises it itself when no one else is. Without one
    /// they are sent at once.
    pub fn with_durability(mut self, durability: Arc<dyn Durability>) -> Self {
        self.durability = Some(durability);
        self
    }

    /// Accepts connections until `shutdown` fires.
    pub async fn serve(self, listener: TcpListener, shutdown: Shutdown) {
        if let (Some(m), Ok(addr)) = (&self.metrics, listener.local_addr()) {
            m.port
                .store(addr.port(), std::sync::atomic::Ordering::Relaxed);
        }
        loop {
            tokio::select! {
                _ = shutdown.wait() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        // Over the limit: closed at once, as Hadoop's listener does.
                        let Some(open) = self.limits.admit() else { continue };
                        let _ = stream.set_nodelay(true);
                        let server = self.clone();
                        let shutdown = shutdown.clone();
                        tokio::spawn(async move {
                            let _open = open;
                            tokio::select! {
                                _ = shutdown.wait() => {}
                                r = server.connection(stream, peer) => server.ended(peer, r),
                            }
                        });
                    }
                    Err(e) => {
                        warn!(error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    }
                }
            }
        }
    }

    /// Serves one connection on one task: it reads whatever bytes have arrived, runs
    /// every complete call in arrival order, and writes all replies that are ready in one
    /// go. Replies held for the watermark (for the NameNode: until their edit is durable)
    /// wait in a queue released as the watermark rises, which this task raises itself
    /// when no other is; calls that must wait for something else are polled alongside
    /// the socket. One timer closes the connection if its header is late, and later if
    /// it stays idle.
    async fn connection(&self, stream: TcpStream, peer: SocketAddr) -> Result<(), RpcError> {
        let options = &self.limits.options;
        let header_deadline = Instant::now() + options.header_timeout;
        let (mut rd, mut wr) = stream.into_split();
        let auth = tokio::time::timeout_at(header_deadline, read_preamble(&mut rd))
            .await
            .map_err(|_| RpcError::HeaderTimeout {
                after: options.header_timeout,
            })??;
        let mut conn = self.connection_state(peer);
        if !conn.admit(auth) {
            conn.flush(&mut wr).await?;
            linger(&mut rd, &mut wr).await;
            return Ok(());
        }
        let mut input = FrameReader::new(self.limits.clone());
        let mut waiting: FuturesUnordered<Waiting> = FuturesUnordered::new();
        // Whether the socket was read again since the last sync.
        let mut swept = false;
        // The client has closed its side; replies still owed are sent before closing.
        let mut peer_done = false;
        let mut last_read = Instant::now();
        let timer = tokio::time::sleep_until(header_deadline);
        tokio::pin!(timer);
        let mut idle_timer = false;
        loop {
            conn.read_at = last_read;
            while let Some(body) = input.take_frame()? {
                if !self.handle_frame(&mut conn, body, &mut waiting)? {
                    conn.flush(&mut wr).await?;
                    linger(&mut rd, &mut wr).await;
                    return Ok(());
                }
            }
            if conn.header_done && !idle_timer {
                // From the header's deadline to the idle time.
                idle_timer = true;
                timer.as_mut().reset(last_read + options.max_idle_time);
            }
            conn.release_held();
            if !conn.out.is_empty() {
                conn.flush(&mut wr).await?;
                conn.clear_out();
            }
            if let Some(d) = &self.durability {
                if !conn.held.is_empty() {
                    // Calls that came in while this burst ran join it before the sync
                    // (once per sync, so a steady stream cannot put the sync off).
                    if !swept {
                        swept = true;
                        match input.try_read(&rd)? {
                            Some(0) => peer_done = true,
                            Some(_) => {
                                last_read = Instant::now();
                                continue;
                            }
                            None => {}
                        }
                    }
                    // Replies still held and no one else syncing: sync here, the whole
                    // burst at once, rather than hand off to another thread.
                    if d.advance() {
                        swept = false;
                        continue;
                    }
                }
            }
            swept = false;
            let holding = !conn.held.is_empty();
            if peer_done && !holding && waiting.is_empty() {
                return Ok(());
            }
            tokio::select! {
                Some((ctx, retry, timer, outcome)) = waiting.next(), if !waiting.is_empty() => {
                    conn.settle(ctx, retry, timer, outcome, &mut waiting);
                    while let Some(Some((ctx, retry, timer, outcome))) = waiting.next().now_or_never() {
                        conn.settle(ctx, retry, timer, outcome, &mut waiting);
                    }
                }
                changed = watermark_changed(&mut conn.watermark), if holding => {
                    if changed.is_err() {
                        return Err(RpcError::Protocol("the watermark's source is gone".into()));
                    }
                }
                n = input.read(&mut rd), if !peer_done => {
                    if n? == 0 {
                        peer_done = true;
                    } else {
                        last_read = Instant::now();
                    }
                }
                () = &mut timer => {
                    if !conn.header_done {
                        return Err(RpcError::HeaderTimeout { after: options.header_timeout });
                    }
                    let busy = holding || !waiting.is_empty() || input.waiting_for_budget();
                    match self.idle_check(last_read, busy, input.holds_budget()) {
                        Some(next) => timer.as_mut().reset(next),
                        None => {
                            self.limits.idle_closed.fetch_add(1, Ordering::Relaxed);
                            debug!(%peer, "closing idle RPC connection");
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// `None` when a connection that last read at `last_read` is to be closed as idle
    /// (Hadoop's rule: no call in progress, silent for the idle time, and at least
    /// `idle_threshold` connections open; and whatever their number when it holds part
    /// of the shared budget for a frame that stopped arriving); otherwise when to look
    /// again.
    fn idle_check(&self, last_read: Instant, busy: bool, holds_budget: bool) -> Option<Instant> {
        let options = &self.limits.options;
        let now = Instant::now();
        let idle_until = last_read + options.max_idle_time;
        if now < idle_until {
            return Some(idle_until);
        }
        let crowded = self.limits.open_connections() >= options.idle_threshold;
        if !busy && (crowded || holds_budget) {
            return None;
        }
        Some(
            now + options
                .max_idle_time
                .max(std::time::Duration::from_millis(10)),
        )
    }

    /// Logs how a connection ended and counts the ends the limits caused.
    fn ended(&self, peer: SocketAddr, result: Result<(), RpcError>) {
        match result {
            Ok(()) => {}
            Err(e @ RpcError::FrameTooLong { .. }) => {
                warn!("{e}.  RPC came from {peer}; connection closed");
            }
            Err(e @ RpcError::HeaderTimeout { .. }) => {
                self.limits.header_timeouts.fetch_add(1, Ordering::Relaxed);
                debug!(%peer, error = %e, "RPC connection closed");
            }
            Err(e) => debug!(%peer, error = %e, "RPC connection ended"),
        }
    }

    /// The state of a new connection from `peer`.
    fn connection_state(&self, peer: SocketAddr) -> ConnectionState {
        ConnectionState {
            user: Arc::from(""),
            ugi: Arc::from(""),
            protocol: None,
            header_done: false,
            peer,
            out: BytesMut::new(),
            held: VecDeque::new(),
            watermark: self.durability.as_ref().map(|d| d.watermark()),
            read_at: Instant::now(),
            sasl: SaslSession::new(self.auth.clone()),
            token: None,
            principal: None,
            layer: None,
            plain_until: 0,
            unwrapped: BytesMut::new(),
            proxy_users: self.proxy_users.clone(),
        }
    }

    /// Handles one frame; false when the connection is to be closed (the client asked,
    /// or a FATAL reply was written). Under a security layer the frame is a SASL WRAP
    /// message holding the frames themselves.
    fn handle_frame(
        &self,
        conn: &mut ConnectionState,
        body: Bytes,
        waiting: &mut FuturesUnordered<Waiting>,
    ) -> Result<bool, RpcError> {
        if conn.layer.is_some() {
            return self.unwrap_frames(conn, body, waiting);
        }
        self.handle_plain(conn, body, waiting)
    }

    /// Handles one frame as it was sent, before any security layer wrapped it.
    fn handle_plain(
        &self,
        conn: &mut ConnectionState,
        mut body: Bytes,
        waiting: &mut FuturesUnordered<Waiting>,
    ) -> Result<bool, RpcError> {
        let header: RpcRequestHeaderProto = frame::next_message(&mut body)?;
        if header.rpc_op == Some(OperationProto::RpcCloseConnection as i32) {
            return Ok(false);
        }
        match header.call_id {
            frame::SASL_CALL_ID => return conn.sasl(&header, &mut body),
            frame::CONNECTION_CONTEXT_CALL_ID => {
                let ctx: IpcConnectionContextProto = frame::next_message(&mut body)?;
                return Ok(conn.connection_context(ctx));
            }
            frame::PING_CALL_ID => {}
            id if id >= 0 => self.dispatch(conn, header, body, waiting)?,
            id => {
                return Err(RpcError::Protocol(format!("unexpected call id {id}")));
            }
        }
        Ok(true)
    }

    /// Hadoop's service-level check of a protocol that names its callers' principal
    /// (the DataNode protocol: `dfs.datanode.kerberos.principal`): under Kerberos only a
    /// principal of that primary and realm (and instance, unless it is `_HOST`) may call
    /// it, and no connection authenticated with a token. The refusal, or `None`.
    fn unauthorized(&self, conn: &ConnectionState, protocol: &str) -> Option<RemoteException> {
        let (_, wanted) = self
            .client_principals
            .iter()
            .find(|(p, _)| *p == protocol)?;
        // A connection without a ticket (one that authenticated with a token) is not
        // the protocol's principal either.
        let allowed = conn.principal.as_deref().is_some_and(|principal| {
            Principal::parse(principal).is_ok_and(|p| {
                p.primary == wanted.primary
                    && p.realm == wanted.realm
                    && (wanted.instance.as_deref() == Some("_HOST")
                        || p.instance == wanted.instance)
            })
        });
        (!allowed).then(|| {
            RemoteException::of(
                crate::exception::HadoopException::Authorization,
                format!(
                    "User {} is not authorized for protocol interface {protocol}: this service is only accessible by {wanted}",
                    conn.ugi
                ),
            )
        })
    }

    /// Takes a SASL WRAP message: unwraps its token and handles every whole frame the
    /// unwrapped bytes hold (a frame may span tokens).
    fn unwrap_frames(
        &self,
        conn: &mut ConnectionState,
        mut body: Bytes,
        waiting: &mut FuturesUnordered<Waiting>,
    ) -> Result<bool, RpcError> {
        let header: RpcRequestHeaderProto = frame::next_message(&mut body)?;
        if header.call_id != frame::SASL_CALL_ID {
            return Err(RpcError::Protocol(format!(
                "call {} not wrapped in the negotiated security layer",
                header.call_id
            )));
        }
        let msg: RpcSaslProto = frame::next_message(&mut body)?;
        if msg.state() != SaslState::Wrap {
            return Err(RpcError::Protocol(format!(
                "SASL {:?} after the negotiation",
                msg.state()
            )));
        }
        let layer = conn.layer.as_mut().expect("checked by the caller");
        let plain = layer
            .unwrap(msg.token())
            .map_err(|e| RpcError::Protocol(format!("unwrapping a message: {e}")))?;
        conn.unwrapped.extend_from_slice(&plain);
        while let Some(inner) = frame::split_frame(&mut conn.unwrapped)? {
            if !self.handle_plain(conn, inner, waiting)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Starts a call and runs it until it first has to wait, so calls from one
    /// connection take effect in the order they were sent; a call that waits joins
    /// `waiting`, and the waits of many calls overlap.
    fn dispatch(
        &self,
        conn: &mut ConnectionState,
        header: RpcRequestHeaderProto,
        mut body: Bytes,
        waiting: &mut FuturesUnordered<Waiting>,
    ) -> Result<(), RpcError> {
        let req_header = frame::next_raw(&mut body)?;
        let (method, protocol) = frame::request_names(&req_header)?;
        let request = frame::next_raw(&mut body)?;
        let ctx = CallContext {
            user: conn.user.clone(),
            client_id: header.client_id,
            call_id: header.call_id,
            peer: conn.peer,
            token: conn.token.clone(),
            ugi: conn.ugi.clone(),
            principal: conn.principal.as_deref().map(Arc::from),
            caller_context: header.caller_context.map(Arc::new),
        };
        let retry = header.retry_count;
        let Some(service) = self
            .services
            .iter()
            .find(|(name, _)| *name == protocol)
            .map(|(_, s)| s.clone())
        else {
            let err = RemoteException::of(
                crate::exception::HadoopException::RpcNoSuchProtocol,
                format!("Unknown protocol: {protocol}"),
            );
            error_reply(
                &mut conn.out,
                &ctx,
                retry,
                &err,
                RpcErrorCodeProto::ErrorNoSuchProtocol,
            );
            return Ok(());
        };
        if service.requires_token() && ctx.token.is_none() {
            let err = match &self.auth {
                Some(auth) => auth.not_enabled("SIMPLE"),
                None => RemoteException::of(
                    crate::exception::HadoopException::AccessControl,
                    format!("{protocol} requires token authentication, which this server does not offer"),
                ),
            };
            error_reply(
                &mut conn.out,
                &ctx,
                retry,
                &err,
                RpcErrorCodeProto::ErrorRpcServer,
            );
            return Ok(());
        }
        if let Some(refused) = self.unauthorized(conn, protocol) {
            error_reply(
                &mut conn.out,
                &ctx,
                retry,
                &refused,
                RpcErrorCodeProto::ErrorRpcServer,
            );
            return Ok(());
        }
        let timer = CallTimer::start(self.metrics.as_deref(), method, conn.read_at);
        let outcome = service.call(ctx.clone(), method, request);
        conn.settle(ctx, retry, timer, outcome, waiting);
        Ok(())
    }
}

/// A call that has to wait, with what its reply needs once it is done.
type Waiting = BoxFuture<'static, (CallContext, Option<i32>, CallTimer, CallOutcome)>;

/// Waits for the watermark to move; never completes without one.
async fn watermark_changed(
    watermark: &mut Option<watch::Receiver<Watermark>>,
) -> Result<(), watch::error::RecvError> {
    match watermark {
        Some(w) => w.changed().await,
        None => std::future::pending().await,
    }
}

/// A successful reply waiting for the watermark.
struct Held {
    mark: u64,
    ctx: CallContext,
    retry: Option<i32>,
    reply: Bytes,
    timer: CallTimer,
}

/// How long a refused connection is read and drained after its fatal reply.
const LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// Ends a connection after its fatal reply without losing the reply: the write side is
/// shut (the reply, then FIN) and what the client still sends (its connection context,
/// its first call) is read and dropped until it closes, for a second at most. Closing
/// with those bytes unread would answer them with a reset, which can discard the reply
/// from the client's receive buffer before the client reads it.
async fn linger(rd: &mut tokio::net::tcp::OwnedReadHalf, wr: &mut tokio::net::tcp::OwnedWriteHalf) {
    let _ = wr.shutdown().await;
    let mut sink = [0u8; 4096];
    let _ = tokio::time::timeout(LINGER, async {
        while matches!(rd.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// Per-connection state owned by the connection's reader task.
struct ConnectionState {
    /// Effective user named in the connection context; empty until it arrives.
    user: Arc<str>,
    /// The user with how it authenticated, in `UserGroupInformation`'s form.
    ugi: Arc<str>,
    /// Protocol named in the connection context, if any.
    protocol: Option<String>,
    /// The connection context has arrived: the header is complete.
    header_done: bool,
    peer: SocketAddr,
    /// Replies ready to be written; allocated by the first reply.
    out: BytesMut,
    /// Replies waiting for the watermark, in the order their calls ran (so by mark).
    held: VecDeque<Held>,
    watermark: Option<watch::Receiver<Watermark>>,
    /// When the bytes of the frames being handled arrived (their calls' queue time
    /// starts there).
    read_at: Instant,
    /// The connection's SASL negotiation.
    sasl: SaslSession,
    /// The token identifier the client authenticated with; `None` for SIMPLE.
    token: Option<Bytes>,
    /// The Kerberos principal the client authenticated as.
    principal: Option<String>,
    /// The negotiated security layer (`integrity`, `privacy`): every later message in
    /// either direction is wrapped in it.
    layer: Option<SaslLayer>,
    /// How many bytes at the start of `out` were written before the layer took over
    /// (the negotiation's last reply), which go unwrapped.
    plain_until: usize,
    /// Unwrapped bytes not yet a whole frame.
    unwrapped: BytesMut,
    /// Who an authenticated user may act for.
    proxy_users: Arc<ProxyUsers>,
}

impl ConnectionState {
    /// Empties the written reply buffer, giving back one grown by an unusually big reply.
    fn clear_out(&mut self) {
        if self.out.capacity() > KEPT_OUT_BUFFER {
            self.out = BytesMut::new();
        } else {
            self.out.clear();
        }
    }

    /// Sends, holds or waits for a call's reply as its outcome says.
    fn settle(
        &mut self,
        ctx: CallContext,
        retry: Option<i32>,
        timer: CallTimer,
        outcome: CallOutcome,
        waiting: &mut FuturesUnordered<Waiting>,
    ) {
        match outcome {
            CallOutcome::Now(reply) => {
                write_reply(&mut self.out, &ctx, retry, reply);
                timer.finish();
            }
            CallOutcome::AfterMark { mark, reply } => {
                // Calls that ran in order come in mark order; one that waited first
                // may not, so keep the queue sorted.
                let at = self.held.partition_point(|h| h.mark <= mark);
                self.held.insert(
                    at,
                    Held {
                        mark,
                        ctx,
                        retry,
                        reply,
                        timer,
                    },
                );
            }
            CallOutcome::Later(mut call) => match call.as_mut().now_or_never() {
                Some(outcome) => self.settle(ctx, retry, timer, outcome, waiting),
                None => waiting.push(Box::pin(async move { (ctx, retry, timer, call.await) })),
            },
        }
    }

    /// Moves the held replies the watermark has reached to `out`; if it has failed,
    /// every held reply becomes its exception.
    fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let Some(watermark) = &mut self.watermark else {
            for h in self.held.drain(..) {
                write_reply(&mut self.out, &h.ctx, h.retry, Ok(h.reply));
                h.timer.finish();
            }
            return;
        };
        let now = watermark.borrow_and_update();
        while let Some(h) = self.held.front() {
            if h.mark <= now.mark {
                let h = self.held.pop_front().expect("front exists");
                write_reply(&mut self.out, &h.ctx, h.retry, Ok(h.reply));
                h.timer.finish();
            } else if let Some(err) = &now.failed {
                let h = self.held.pop_front().expect("front exists");
                write_reply(&mut self.out, &h.ctx, h.retry, Err(err.clone()));
                h.timer.finish();
            } else {
                break;
            }
        }
    }

    /// Whether a connection that opened with auth protocol `auth` may go on; if not,
    /// its FATAL reply is in `out`.
    fn admit(&mut self, auth: u8) -> bool {
        if auth != frame::AUTH_NONE {
            return true;
        }
        match self.sasl.refuse_plain() {
            None => true,
            Some(err) => {
                self.fatal_sasl_reply(&err);
                false
            }
        }
    }

    /// Takes one SASL message; false when the connection is to be closed (its FATAL
    /// reply is in `out`).
    fn sasl(&mut self, header: &RpcRequestHeaderProto, body: &mut Bytes) -> Result<bool, RpcError> {
        let msg: RpcSaslProto = frame::next_message(body)?;
        let reply = match self.sasl.step(&msg)? {
            SaslStep::Silent => return Ok(true),
            SaslStep::Reply(reply) => reply,
            SaslStep::Authenticated {
                reply,
                grant,
                identifier,
                layer,
            } => {
                debug!(peer = %self.peer, user = %grant.user, "token authentication succeeded");
                self.user = Arc::from(grant.user);
                self.token = Some(identifier);
                self.layer = layer;
                reply
            }
            SaslStep::Kerberos {
                reply,
                principal,
                user,
                layer,
            } => {
                debug!(peer = %self.peer, %principal, "Kerberos authentication succeeded");
                self.user = Arc::from(user);
                self.principal = Some(principal);
                self.layer = layer;
                reply
            }
            SaslStep::Refused(err) => {
                debug!(peer = %self.peer, error = %err, "SASL authentication failed");
                self.fatal_sasl_reply(&err);
                return Ok(false);
            }
        };
        let resp = RpcResponseHeaderProto {
            call_id: header.call_id as u32,
            status: RpcStatusProto::Success as i32,
            server_ipc_version_num: Some(frame::RPC_VERSION as u32),
            client_id: Some(header.client_id.clone()),
            ..Default::default()
        };
        frame::write_frame(&mut self.out, &[&resp, &reply]);
        // What follows the negotiation's last reply goes wrapped.
        self.plain_until = self.out.len();
        Ok(true)
    }

    /// Writes `out` to the socket: as it is, or (under a security layer) each chunk
    /// wrapped in a SASL WRAP reply, as Hadoop's server wraps its responses.
    async fn flush<W: tokio::io::AsyncWrite + Unpin>(
        &mut self,
        wr: &mut W,
    ) -> Result<(), RpcError> {
        let Some(layer) = &mut self.layer else {
            wr.write_all(&self.out).await?;
            return Ok(());
        };
        let plain = std::mem::take(&mut self.plain_until).min(self.out.len());
        let mut wrapped = BytesMut::from(&self.out[..plain]);
        for chunk in self.out[plain..].chunks(layer.max_plain()) {
            let token = layer
                .wrap(chunk)
                .map_err(|e| RpcError::Protocol(format!("wrapping a reply: {e}")))?;
            let header = RpcResponseHeaderProto {
                call_id: frame::SASL_CALL_ID as u32,
                status: RpcStatusProto::Success as i32,
                server_ipc_version_num: Some(frame::RPC_VERSION as u32),
                ..Default::default()
            };
            let msg = frame::sasl_message(SaslState::Wrap, Some(token.into()), vec![]);
            frame::write_frame(&mut wrapped, &[&header, &msg]);
        }
        wr.write_all(&wrapped).await?;
        Ok(())
    }

    /// Takes the connection context; false when it claims another user than the
    /// token's (a token cannot be used on another's behalf), with its FATAL reply in
    /// `out`.
    fn connection_context(&mut self, ctx: IpcConnectionContextProto) -> bool {
        let claimed = ctx.user_info.and_then(|u| u.effective_user);
        self.protocol = ctx.protocol;
        self.header_done = true;
        if let Some(principal) = &self.principal {
            // Hadoop's client names the principal; a short name is taken as well.
            // Anyone else is acted for, if the proxy rules let the ticket's user.
            let Some(claimed) =
                claimed.filter(|c| !c.is_empty() && c != principal && c.as_str() != &*self.user)
            else {
                self.ugi = Arc::from(format!("{principal} (auth:KERBEROS)"));
                return true;
            };
            return match self
                .proxy_users
                .authorize(&self.user, &claimed, self.peer.ip())
            {
                Ok(()) => {
                    debug!(peer = %self.peer, %principal, %claimed, "acting for another user");
                    self.ugi = Arc::from(format!(
                        "{claimed} (auth:PROXY) via {principal} (auth:KERBEROS)"
                    ));
                    self.user = Arc::from(claimed);
                    true
                }
                Err(refused) => {
                    let message = refused.replacen(
                        &format!("User: {} ", self.user),
                        &format!("User: {principal} "),
                        1,
                    );
                    let err = RemoteException::of(
                        crate::exception::HadoopException::AccessControl,
                        message,
                    );
                    self.fatal_sasl_reply(&err);
                    false
                }
            };
        }
        if self.token.is_none() {
            self.user = Arc::from(claimed.as_deref().unwrap_or("unknown"));
            self.ugi = Arc::from(format!("{} (auth:SIMPLE)", self.user));
            return true;
        }
        self.ugi = Arc::from(format!("{} (auth:TOKEN)", self.user));
        match claimed {
            Some(claimed) if claimed != *self.user => {
                let err = RemoteException::of(
                    crate::exception::HadoopException::AccessControl,
                    format!(
                        "Authenticated user ({} (auth:TOKEN)) doesn't match what the client claims to be ({claimed} (auth:SIMPLE))",
                        self.user
                    ),
                );
                self.fatal_sasl_reply(&err);
                false
            }
            _ => true,
        }
    }

    /// Hadoop's reply to a refused authentication: FATAL, on the SASL call id.
    fn fatal_sasl_reply(&mut self, err: &RemoteException) {
        let header = RpcResponseHeaderProto {
            call_id: frame::SASL_CALL_ID as u32,
            status: RpcStatusProto::Fatal as i32,
            server_ipc_version_num: Some(frame::RPC_VERSION as u32),
            exception_class_name: Some(err.class.clone()),
            error_msg: Some(err.message.clone()),
            error_detail: Some(RpcErrorCodeProto::FatalUnauthorized as i32),
            client_id: Some(Bytes::new()),
            ..Default::default()
        };
        frame::write_frame(&mut self.out, &[&header]);
    }
}

async fn read_preamble<R: tokio::io::AsyncRead + Unpin>(rd: &mut R) -> Result<u8, RpcError> {
    let mut pre = [0u8; 7];
    rd.read_exact(&mut pre).await?;
    if &pre[..4] != frame::MAGIC {
        return Err(RpcError::Protocol(
            "connection did not start with 'hrpc'".into(),
        ));
    }
    if pre[4] != frame::RPC_VERSION {
        return Err(RpcError::Protocol(format!(
            "unsupported RPC version {} (this server speaks {})",
            pre[4],
            frame::RPC_VERSION
        )));
    }
    match pre[6] {
        frame::AUTH_NONE | frame::AUTH_SASL => Ok(pre[6]),
        other => Err(RpcError::Protocol(format!("unknown auth protocol {other}"))),
    }
}

/// Appends the reply frame for one call.
fn write_reply(out: &mut BytesMut, ctx: &CallContext, retry: Option<i32>, reply: Reply) {
    match reply {
        Ok(payload) => success_reply(out, ctx, retry, &payload),
        Err(err) => error_reply(out, ctx, retry, &err, RpcErrorCodeProto::ErrorApplication),
    }
}

fn success_reply(out: &mut BytesMut, ctx: &CallContext, retry: Option<i32>, payload: &[u8]) {
    let header = RpcResponseHeaderProto {
        call_id: ctx.call_id as u32,
        status: RpcStatusProto::Success as i32,
        server_ipc_version_num: Some(frame::RPC_VERSION as u32),
        client_id: Some(ctx.client_id.clone()),
        retry_count: retry,
        ..Default::default()
    };
    frame::write_frame(out, &[&header, &Encoded(payload)]);
}

fn error_reply(
    out: &mut BytesMut,
    ctx: &CallContext,
    retry: Option<i32>,
    err: &RemoteException,
    code: RpcErrorCodeProto,
) {
    let header = RpcResponseHeaderProto {
        call_id: ctx.call_id as u32,
        status: RpcStatusProto::Error as i32,
        server_ipc_version_num: Some(frame::RPC_VERSION as u32),
        exception_class_name: Some(err.class.clone()),
        error_msg: Some(err.message.clone()),
        error_detail: Some(code as i32),
        client_id: Some(ctx.client_id.clone()),
        retry_count: retry,
        ..Default::default()
    };
    frame::write_frame(out, &[&header]);
}
