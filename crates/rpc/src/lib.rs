//! Hadoop's RPC, spoken by every Tusk daemon and client.
//!
//! Layout:
//! - `frame`: the connection preamble and length-prefixed frames holding delimited
//!   protobuf messages (RPC version 9).
//! - `server`: accepts connections, negotiates SIMPLE auth (plain or via SASL NEGOTIATE)
//!   or, given a token authority, SASL `TOKEN` auth (DIGEST-MD5; `server/sasl`),
//!   runs calls in arrival order and writes replies as they become ready (at once, once a
//!   watermark such as the durable edit-log txid passes them, or when a waiting call
//!   finishes), so many calls are in flight on one connection. `server/limits`: what a
//!   server bounds ([`RpcServerOptions`]: frame length, bytes buffered across
//!   connections, connections, header and idle time) and its counters;
//!   `server/input`: a connection's request bytes, read as they arrive;
//!   `server/metrics`: per-method queue and processing time histograms.
//! - `client`: one connection per NameNode shared by every caller, SIMPLE or with a
//!   token (SASL DIGEST-MD5, `client/sasl`); call ids match
//!   replies to callers; a window bounds calls in flight; opening a connection is
//!   retried as Hadoop's `ipc.client.connect.*` keys say ([`ConnectRetry`]).
//!   `client/failover`: [`FailoverRpcClient`], calls to servers one of which is active
//!   at a time (HA NameNodes), moved to the next on standby or a lost connection.
//! - `auth`: `hadoop.security.authentication` and a service's Kerberos identity from
//!   its principal and keytab keys.
//! - `service`: the trait a protocol implements, the outcomes a call can have, and the
//!   helpers that decode a request, run a handler and encode its reply.
//! - `error`: [`RpcError`], including remote errors that carry Hadoop exception class names.
//! - `exception`: [`HadoopException`], every Java exception class name Tusk raises or
//!   tells apart, declared once.

pub mod auth;
pub mod client;
pub mod error;
pub mod exception;
pub mod frame;
pub mod server;
pub mod service;

pub use client::{ConnectRetry, FailoverOptions, FailoverRpcClient, RpcClient, RpcClientOptions};
pub use error::{RemoteException, RpcError};
pub use exception::HadoopException;
pub use server::{RpcServer, RpcServerOptions, RpcServerStats};
pub use service::{
    handle, handle_now, CallContext, CallOutcome, Durability, Reply, RpcService, Watermark,
};
pub use tusk_security::kerberos::KerberosLogin;
pub use tusk_security::Protection;
