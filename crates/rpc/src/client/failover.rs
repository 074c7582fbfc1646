//! [`FailoverRpcClient`]: one protocol's client for servers of which one at a time is
//! active, as the NameNodes of an HA nameservice (Hadoop's
//! `ConfiguredFailoverProxyProvider` under its `RetryInvocationHandler` with the
//! `failoverOnNetworkException` policy). A call goes to the server that last answered;
//! when that one says it is standby, cannot be reached, or loses the connection before
//! answering, the call moves on to the next server in the list, round robin, and the
//! client remembers where it last got an answer. A server that asks to be called again
//! (`RetriableException`, a NameNode becoming active) gets the call again after a pause.
//!
//! Every resend keeps the call's client id and call id and counts up its retry count,
//! so a server's retry cache can answer a resent call with its first outcome. Whether
//! resending a call that may already have run is safe is the protocol's business: this
//! client resends every call it is given.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use serde::{Deserialize, Serialize};

use super::{ConnectRetry, RpcClient, RpcClientOptions};
use crate::error::RpcError;
use crate::exception::HadoopException;

/// How a [`FailoverRpcClient`] moves between its servers and how long it waits before
/// sending a call again. The defaults are HDFS's client's (`dfs.client.failover.*`,
/// `dfs.client.retry.max.attempts`); a protocol's client reads its own keys into them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailoverOptions {
    /// Failovers one call makes at most; after them it fails with the last error
    /// (`dfs.client.failover.max.attempts`, 15).
    pub max_failovers: u32,
    /// Times one call is sent again to a server that asked for it (`RetriableException`)
    /// at most (`dfs.client.retry.max.attempts`, 10).
    pub max_retries: u32,
    /// The first failover of a call is immediate; the `n`th after it waits
    /// `sleep_base × 2^n`, at most `sleep_max`, jittered by ±50%
    /// (`dfs.client.failover.sleep.base.millis`, 500 ms). A call sent again to the same
    /// server waits `sleep_base × 2^n` before its `n`th retry there, from `n = 0`.
    pub sleep_base: Duration,
    /// The longest pause before jitter (`dfs.client.failover.sleep.max.millis`, 15 s).
    pub sleep_max: Duration,
    /// How each server's connection is opened, in place of the client options' own
    /// [`ConnectRetry`]: a server that is down should cost one refused connect before
    /// the next one is tried, not a series of sleeps (`dfs.client.failover.connection.retries`,
    /// 0, and `dfs.client.failover.connection.retries.on.timeouts`, 0).
    pub connect_retry: ConnectRetry,
    /// An attempt not answered within this long is given up as a lost connection and
    /// the call fails over: a server that hangs (stopped, or its host gone without
    /// closing its sockets) keeps its connections open, and would otherwise hold the
    /// call for as long as the kernel does. `None`: wait for the answer however long.
    #[serde(default)]
    pub attempt_timeout: Option<Duration>,
}

impl Default for FailoverOptions {
    fn default() -> Self {
        FailoverOptions {
            max_failovers: 15,
            max_retries: 10,
            sleep_base: Duration::from_millis(500),
            sleep_max: Duration::from_millis(15_000),
            connect_retry: ConnectRetry {
                max_retries: 0,
                max_retries_on_timeouts: 0,
                ..ConnectRetry::default()
            },
            attempt_timeout: Some(DEFAULT_ATTEMPT_TIMEOUT),
        }
    }
}

/// [`FailoverOptions::attempt_timeout`] by default. Hadoop's client waits
/// `ipc.client.rpc-timeout.ms` (120 s) for a hung NameNode before failing over; a
/// NameNode answers its calls in milliseconds (a `complete` waits at most a few
/// seconds), so Tusk gives up on one sooner.
pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a call has been through so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Attempts {
    /// Times the call was sent again, to any server.
    retries: u32,
    /// Of those, the times it moved to another server first.
    failovers: u32,
}

/// What a call does after an attempt failed.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Return the attempt's error.
    Fail,
    /// Send the call to the same server again after the pause.
    Retry(Duration),
    /// Send the call to the next server after the pause.
    FailOver(Duration),
}

impl FailoverOptions {
    /// Never fail over nor retry: every error is returned as it comes (a single
    /// server, as a client of one NameNode).
    pub const NONE: FailoverOptions = FailoverOptions {
        max_failovers: 0,
        max_retries: 0,
        sleep_base: Duration::ZERO,
        sleep_max: Duration::ZERO,
        connect_retry: ConnectRetry::NONE,
        attempt_timeout: None,
    };

    /// What a call that has been through `attempts` does after `error`.
    fn next(&self, error: &RpcError, attempts: Attempts) -> Next {
        let same_server_retries = attempts.retries - attempts.failovers;
        if attempts.failovers >= self.max_failovers {
            return Next::Fail;
        }
        match error {
            RpcError::Remote(r) => match r.exception() {
                Some(HadoopException::Standby) => {
                    Next::FailOver(self.failover_pause(attempts.failovers))
                }
                Some(HadoopException::Retriable) if same_server_retries < self.max_retries => {
                    Next::Retry(self.backoff(same_server_retries))
                }
                _ => Next::Fail,
            },
            // Not reached, or the connection ended before the answer: another server
            // may be the active one now.
            RpcError::Connect { .. } | RpcError::Io(_) | RpcError::ConnectionClosed => {
                Next::FailOver(self.failover_pause(attempts.failovers))
            }
            _ => Next::Fail,
        }
    }

    /// The pause before a call's failover after `failovers` earlier ones: none before
    /// the first, so a call whose server died reaches the next one at once.
    fn failover_pause(&self, failovers: u32) -> Duration {
        if failovers == 0 {
            Duration::ZERO
        } else {
            self.backoff(failovers)
        }
    }

    /// `sleep_base × 2^n`, at most `sleep_max`, times a random factor in [0.5, 1.5).
    fn backoff(&self, n: u32) -> Duration {
        let doubled = self
            .sleep_base
            .saturating_mul(1u32.checked_shl(n).unwrap_or(u32::MAX));
        doubled
            .min(self.sleep_max)
            .mul_f64(0.5 + rand::random::<f64>())
    }
}

/// A client of one protocol on several servers of which one at a time is active
/// (module docs). Calls in flight share the servers' connections, as on an
/// [`RpcClient`].
pub struct FailoverRpcClient {
    /// One client per server, in the configured order, all naming themselves with the
    /// same client id.
    servers: Vec<RpcClient>,
    /// The index of the server calls go to: the one that last answered, or the next
    /// to try after it failed.
    active: AtomicUsize,
    /// Call ids for every server's calls, so a call keeps its id on whichever server
    /// it is sent to again.
    next_call_id: AtomicI32,
    options: FailoverOptions,
}

impl FailoverRpcClient {
    /// A client of the servers at `addrs` (at least one), tried in that order from the
    /// first; each server's connection is opened as `rpc` says, with
    /// `failover.connect_retry`.
    pub fn new(addrs: Vec<String>, rpc: RpcClientOptions, failover: FailoverOptions) -> Self {
        assert!(!addrs.is_empty(), "a failover client needs a server");
        let client_id: [u8; 16] = rand::random();
        let client_id = Bytes::copy_from_slice(&client_id);
        let rpc = RpcClientOptions {
            connect_retry: failover.connect_retry,
            ..rpc
        };
        FailoverRpcClient {
            servers: addrs
                .into_iter()
                .map(|addr| RpcClient::with_client_id(addr, rpc.clone(), client_id.clone()))
                .collect(),
            active: AtomicUsize::new(0),
            next_call_id: AtomicI32::new(0),
            options: failover,
        }
    }

    /// A client of the one server at `addr` that returns every error as it comes and
    /// opens its connection as `rpc` says: an [`RpcClient`] behind the same interface.
    pub fn single(addr: impl Into<String>, rpc: RpcClientOptions) -> Self {
        let connect_retry = rpc.connect_retry;
        FailoverRpcClient::new(
            vec![addr.into()],
            rpc,
            FailoverOptions {
                connect_retry,
                ..FailoverOptions::NONE
            },
        )
    }

    /// The servers' addresses, in order.
    pub fn addrs(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(RpcClient::addr)
    }

    /// The address calls go to now: the server that last answered, or the one to try
    /// next after it failed.
    pub fn active_addr(&self) -> &str {
        self.servers[self.active.load(Ordering::Acquire)].addr()
    }

    pub fn user(&self) -> &str {
        self.servers[0].user()
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

    /// Calls `method` with an encoded request, failing over and retrying as the
    /// options say; returns the encoded reply or the last attempt's error.
    pub async fn call_raw(&self, method: &str, request: &[u8]) -> Result<Bytes, RpcError> {
        let call_id = self.next_call_id.fetch_add(1, Ordering::Relaxed) & i32::MAX;
        let mut attempts = Attempts::default();
        loop {
            let server = self.active.load(Ordering::Acquire);
            let retry_count = attempts.retries as i32;
            let attempt = self.servers[server].call_as(method, request, call_id, retry_count);
            let answered = match self.options.attempt_timeout {
                Some(limit) => tokio::time::timeout(limit, attempt)
                    .await
                    .unwrap_or(Err(RpcError::ConnectionClosed)),
                None => attempt.await,
            };
            let error = match answered {
                Ok(reply) => return Ok(reply),
                Err(error) => error,
            };
            let pause = match self.options.next(&error, attempts) {
                Next::Fail => return Err(error),
                Next::Retry(pause) => pause,
                Next::FailOver(pause) => {
                    self.fail_over_from(server, method, &error, pause);
                    attempts.failovers += 1;
                    pause
                }
            };
            attempts.retries += 1;
            tokio::time::sleep(pause).await;
        }
    }

    /// Moves calls on from `server` to the next one, unless a call that failed there
    /// at the same time already has.
    fn fail_over_from(&self, server: usize, method: &str, error: &RpcError, pause: Duration) {
        let next = (server + 1) % self.servers.len();
        let moved = self
            .active
            .compare_exchange(server, next, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if moved {
            tracing::info!(
                method,
                from = self.servers[server].addr(),
                to = self.servers[next].addr(),
                after = ?pause,
                error = %error,
                "failing over"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RemoteException;

    fn remote(exception: HadoopException) -> RpcError {
        RpcError::Remote(RemoteException::of(exception, "test"))
    }

    fn attempts(retries: u32, failovers: u32) -> Attempts {
        Attempts { retries, failovers }
    }

    #[test]
    fn standby_and_lost_connections_fail_over_the_first_time_at_once() {
        let options = FailoverOptions::default();
        let first = attempts(0, 0);
        for error in [
            remote(HadoopException::Standby),
            RpcError::ConnectionClosed,
            RpcError::Io(std::io::ErrorKind::ConnectionReset.into()),
            RpcError::Connect {
                addr: "h:1".into(),
                retries: 0,
                source: std::io::ErrorKind::ConnectionRefused.into(),
            },
        ] {
            assert_eq!(
                options.next(&error, first),
                Next::FailOver(Duration::ZERO),
                "{error}"
            );
        }
    }

    #[test]
    fn later_failovers_back_off_exponentially_up_to_the_maximum() {
        let options = FailoverOptions::default();
        let standby = remote(HadoopException::Standby);
        let pause = |failovers| match options.next(&standby, attempts(failovers, failovers)) {
            Next::FailOver(pause) => pause,
            other => panic!("expected a failover, got {other:?}"),
        };
        let second = pause(1);
        assert!(
            second >= Duration::from_millis(500) && second < Duration::from_millis(1500),
            "500 ms × 2, jittered: {second:?}"
        );
        let late = pause(10);
        assert!(
            late >= Duration::from_millis(7500) && late < Duration::from_millis(22_500),
            "capped at 15 s before jitter: {late:?}"
        );
    }

    #[test]
    fn a_call_fails_after_the_maximum_failovers() {
        let options = FailoverOptions {
            max_failovers: 3,
            ..FailoverOptions::default()
        };
        let standby = remote(HadoopException::Standby);
        assert!(matches!(
            options.next(&standby, attempts(2, 2)),
            Next::FailOver(_)
        ));
        assert_eq!(options.next(&standby, attempts(3, 3)), Next::Fail);
    }

    #[test]
    fn a_retriable_exception_retries_the_same_server_after_a_pause() {
        let options = FailoverOptions {
            max_retries: 2,
            ..FailoverOptions::default()
        };
        let retriable = remote(HadoopException::Retriable);
        match options.next(&retriable, attempts(1, 1)) {
            Next::Retry(pause) => assert!(
                pause >= Duration::from_millis(250) && pause < Duration::from_millis(750),
                "the first retry of this server waits about sleep_base: {pause:?}"
            ),
            other => panic!("expected a retry, got {other:?}"),
        }
        assert_eq!(options.next(&retriable, attempts(3, 1)), Next::Fail);
    }

    #[test]
    fn other_errors_and_the_none_policy_fail_at_once() {
        let options = FailoverOptions::default();
        let first = attempts(0, 0);
        assert_eq!(
            options.next(&remote(HadoopException::FileNotFound), first),
            Next::Fail
        );
        assert_eq!(
            options.next(&RpcError::Protocol("bad".into()), first),
            Next::Fail
        );
        for error in [
            remote(HadoopException::Standby),
            remote(HadoopException::Retriable),
            RpcError::ConnectionClosed,
        ] {
            assert_eq!(FailoverOptions::NONE.next(&error, first), Next::Fail);
        }
    }
}
