//! The NameNode's web server (`dfs.namenode.http-address`, 9870): one router assembled
//! from every feature that answers over HTTP. A feature adds its router here, in
//! [`http_router`], and nowhere else.

use std::net::SocketAddr;
use std::sync::Arc;

use tusk_http::Router;

use crate::Namesystem;

/// Every HTTP endpoint of the NameNode whose RPC server listens on `rpc_addr`.
pub fn http_router(fsn: &Arc<Namesystem>, rpc_addr: SocketAddr) -> Router {
    Router::new()
        .merge(crate::webhdfs::router(fsn.clone(), rpc_addr))
        .merge(crate::web::router(fsn, rpc_addr))
        .merge(crate::fsck::router(fsn.clone()))
}
