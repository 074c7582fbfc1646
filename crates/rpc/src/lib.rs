//! Hadoop's RPC, spoken by every Tusk daemon and client.
//!
//! Layout:
//! - `frame`: the connection preamble and length-prefixed frames holding delimited
//!   protobuf messages (RPC version 9).
//! - `server`: accepts connections, negotiates SIMPLE auth (plain or via SASL NEGOTIATE),
//!   runs each call as its own task and writes replies as they finish, so many calls are
//!   in flight on one connection.
//! - `client`: one connection per NameNode shared by every caller; call ids match
//!   replies to callers; a window bounds calls in flight.
//! - `service`: the trait a protocol implements and the helper that decodes a request,
//!   runs a handler and encodes its reply.
//! - `error`: [`RpcError`], including remote errors that carry Hadoop exception class names.

pub mod client;
pub mod error;
pub mod frame;
pub mod server;
pub mod service;

pub use client::{RpcClient, RpcClientOptions};
pub use error::{RemoteException, RpcError};
pub use server::RpcServer;
pub use service::{handle, CallContext, RpcService};

/// The protocol name Hadoop clients put in every ClientNamenodeProtocol call.
pub const CLIENT_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";
