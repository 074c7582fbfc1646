//! The HTTP servers of Tusk's daemons, on Hadoop's web ports: NameNode
//! `dfs.namenode.http-address` (9870), DataNode `dfs.datanode.http.address` (9864),
//! ResourceManager `yarn.resourcemanager.webapp.address` (8088), NodeManager
//! `yarn.nodemanager.webapp.address` (8042).
//!
//! Each daemon assembles one [`axum::Router`] from feature routers (WebHDFS, pages,
//! metrics, ...) in one function of its own (`http_router`) and hands it to
//! [`HttpServer::start`], which binds the address (port 0 picks one) and serves until
//! the daemon's shutdown signal fires. What a feature answers lives with the feature;
//! this crate only serves.
//!
//! Layout:
//! - `server`: [`HttpServer`], [`HttpServer::start`] and [`HttpServer::serve`] (an
//!   already-bound listener).
//! - `address`: [`http_address`], the address a daemon's HTTP server binds given its
//!   configuration key and how its RPC address was chosen.
//! - `tls`: HTTPS as Hadoop configures it: [`tls::HttpPolicy`] (`dfs.http.policy`)
//!   and [`tls::server_config`], the keystore `ssl-server.xml` names;
//!   [`HttpServer::serve_tls`] serves a router with it.
//! - `error`: [`HttpError`].
//! - `spnego`: [`spnego::Spnego`], SPNEGO (`Authorization: Negotiate`) in front of
//!   routes, with the caller as an [`spnego::HttpCaller`] extension.
//! - `page`: the HTML layout and building blocks of the daemons' pages.
//! - `daemon`: what every daemon answers (`/metrics`, `/jmx`, `/conf`, `/logLevel`,
//!   `/stacks`, `/status`) from a [`daemon::DaemonWeb`] description.

pub mod address;
pub mod daemon;
pub mod error;
pub mod page;
pub mod server;
pub mod spnego;
pub mod tls;

pub use address::http_address;
pub use axum::Router;
pub use error::HttpError;
pub use server::HttpServer;
