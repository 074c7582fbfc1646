//! The DataNode's web server (`dfs.datanode.http.address`, 9864; its port is the
//! `info_port` the node advertises, where the NameNode redirects WebHDFS reads and
//! writes): one router assembled from every feature that answers over HTTP. A feature
//! adds its router here, in [`http_router`], and nowhere else.

use std::sync::Arc;

use tusk_http::Router;

use crate::Node;

/// Every HTTP endpoint of the DataNode.
pub(crate) fn http_router(node: &Arc<Node>) -> Router {
    let _ = node;
    Router::new()
}
