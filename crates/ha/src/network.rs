//! Peers talk over TCP: one connection per peer, reused for every request, reopened
//! with backoff after a failure, each request bounded by the deadline openraft gives.
//!
//! - `frame`: the messages and their length-prefixed framing.
//! - `server`: the listening side.
//! - `links`: [`Links`], cutting links for fault tests.
//!
//! Messages are openraft's own request and response types in postcard: they already
//! derive serde, so mirroring a dozen of them in `.proto` files would add conversion code
//! that can drift from the library without adding a reader (peers are only Tusk
//! NameNodes). The records inside are the NameNode's own protobuf bytes, untouched.

pub(crate) mod frame;
pub mod links;
pub(crate) mod server;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Timeout, Unreachable,
};
use openraft::network::{Backoff, RPCOption, RPCTypes, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::BasicNode;
use tokio::io::BufStream;
use tokio::net::TcpStream;

use crate::raft_types::TypeConfig;
use frame::{read_frame, write_frame, PeerRequest, PeerResponse};
pub use links::Links;

/// Hands openraft a client per peer; clients of one peer share its connection.
pub(crate) struct PeerNetwork {
    from: u64,
    links: Links,
    connect_timeout: Duration,
    connections: Arc<Mutex<HashMap<u64, Arc<tokio::sync::Mutex<Connection>>>>>,
}

impl PeerNetwork {
    pub(crate) fn new(from: u64, links: Links, connect_timeout: Duration) -> Self {
        PeerNetwork {
            from,
            links,
            connect_timeout,
            connections: Default::default(),
        }
    }
}

impl RaftNetworkFactory<TypeConfig> for PeerNetwork {
    type Network = PeerClient;

    async fn new_client(&mut self, target: u64, node: &BasicNode) -> PeerClient {
        let connection = self
            .connections
            .lock()
            .expect("connections")
            .entry(target)
            .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Connection::new(&node.addr))))
            .clone();
        PeerClient {
            from: self.from,
            target,
            links: self.links.clone(),
            connect_timeout: self.connect_timeout,
            connection,
        }
    }
}

/// One peer's connection, reopened on demand.
struct Connection {
    address: String,
    stream: Option<BufStream<TcpStream>>,
    /// Failed attempts in a row; sets the backoff.
    failures: u32,
    /// No new attempt before this.
    retry_at: Option<Instant>,
    buf: Vec<u8>,
}

/// Why a request got no answer.
enum CallError {
    /// Not connected (refused, backing off, or the link is cut): back off.
    Unreachable(std::io::Error),
    /// The connection broke mid-request.
    Network(std::io::Error),
    Timeout(Duration),
}

impl Connection {
    fn new(address: &str) -> Self {
        Connection {
            address: address.into(),
            stream: None,
            failures: 0,
            retry_at: None,
            buf: Vec::new(),
        }
    }

    /// Waits between attempts: 50 ms doubling to at most 1 s.
    fn backoff(failures: u32) -> Duration {
        Duration::from_millis(50 << failures.min(5)).min(Duration::from_secs(1))
    }

    async fn connect(&mut self, timeout: Duration) -> Result<(), CallError> {
        if self.retry_at.is_some_and(|at| Instant::now() < at) {
            return Err(CallError::Unreachable(std::io::Error::other(format!(
                "backing off from {} after {} failed connections",
                self.address, self.failures
            ))));
        }
        let connected = tokio::time::timeout(timeout, TcpStream::connect(&self.address))
            .await
            .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()));
        match connected {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                self.stream = Some(BufStream::new(stream));
                self.failures = 0;
                self.retry_at = None;
                Ok(())
            }
            Err(e) => {
                self.failures += 1;
                self.retry_at = Some(Instant::now() + Self::backoff(self.failures));
                Err(CallError::Unreachable(e))
            }
        }
    }

    async fn exchange(
        &mut self,
        request: &PeerRequest,
        connect_timeout: Duration,
    ) -> Result<PeerResponse, CallError> {
        if self.stream.is_none() {
            self.connect(connect_timeout).await?;
        }
        let stream = self.stream.as_mut().expect("connected");
        write_frame(stream, request, &mut self.buf)
            .await
            .map_err(CallError::Network)?;
        match read_frame(stream, &mut self.buf).await {
            Ok(Some(response)) => Ok(response),
            Ok(None) => Err(CallError::Network(std::io::ErrorKind::UnexpectedEof.into())),
            Err(e) => Err(CallError::Network(e)),
        }
    }
}

/// openraft's handle on one peer.
pub(crate) struct PeerClient {
    from: u64,
    target: u64,
    links: Links,
    connect_timeout: Duration,
    connection: Arc<tokio::sync::Mutex<Connection>>,
}

impl PeerClient {
    /// Sends `request` and waits at most `ttl` for its answer. A broken or timed-out
    /// exchange drops the connection, since a late answer would be read as the next one.
    async fn call(&self, request: PeerRequest, ttl: Duration) -> Result<PeerResponse, CallError> {
        if !self.links.passes(self.from, self.target) {
            return Err(CallError::Unreachable(std::io::Error::other("link cut")));
        }
        let mut connection = self.connection.lock().await;
        let answered =
            tokio::time::timeout(ttl, connection.exchange(&request, self.connect_timeout)).await;
        let result = match answered {
            Ok(result) => result,
            Err(_) => Err(CallError::Timeout(ttl)),
        };
        if result.is_err() {
            connection.stream = None;
        }
        let response = result?;
        if !self.links.passes(self.target, self.from) {
            return Err(CallError::Network(std::io::Error::other(
                "reply lost: link cut",
            )));
        }
        Ok(response)
    }

    /// One request and its answer, picked out of the response by `pick` (which finds
    /// nothing when the peer answered another kind of request).
    // The error type is the one openraft's `RaftNetwork` methods must return.
    #[allow(clippy::result_large_err)]
    async fn rpc<T, E: std::error::Error>(
        &self,
        request: PeerRequest,
        option: RPCOption,
        action: RPCTypes,
        pick: impl FnOnce(PeerResponse) -> Option<Result<T, RaftError<u64, E>>>,
    ) -> Result<T, RPCError<u64, BasicNode, RaftError<u64, E>>> {
        let failed = |e: CallError| match e {
            CallError::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
            CallError::Network(e) => RPCError::Network(NetworkError::new(&e)),
            CallError::Timeout(timeout) => RPCError::Timeout(Timeout {
                action,
                id: self.from,
                target: self.target,
                timeout,
            }),
        };
        let response = self
            .call(request, option.hard_ttl())
            .await
            .map_err(failed)?;
        match pick(response) {
            Some(answer) => {
                answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
            }
            None => Err(failed(CallError::Network(mismatched()))),
        }
    }
}

/// An answer of the wrong kind: the peer speaks another version.
fn mismatched() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "peer answered a different request",
    )
}

impl RaftNetwork<TypeConfig> for PeerClient {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let request = PeerRequest::AppendEntries(rpc);
        self.rpc(request, option, RPCTypes::AppendEntries, |r| match r {
            PeerResponse::AppendEntries(answer) => Some(answer),
            _ => None,
        })
        .await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<u64>,
        RPCError<u64, BasicNode, RaftError<u64, InstallSnapshotError>>,
    > {
        let request = PeerRequest::InstallSnapshot(rpc);
        self.rpc(request, option, RPCTypes::InstallSnapshot, |r| match r {
            PeerResponse::InstallSnapshot(answer) => Some(answer),
            _ => None,
        })
        .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let request = PeerRequest::Vote(rpc);
        self.rpc(request, option, RPCTypes::Vote, |r| match r {
            PeerResponse::Vote(answer) => Some(answer),
            _ => None,
        })
        .await
    }

    fn backoff(&self) -> Backoff {
        Backoff::new((1..).map(Connection::backoff))
    }
}
