//! The NodeManager's web server (`yarn.nodemanager.webapp.address`, 8042): one router
//! assembled from every feature that answers over HTTP. A feature adds its router
//! here, in [`http_router`], and nowhere else.

use std::sync::Arc;

use tusk_http::Router;

use crate::Node;

/// Every HTTP endpoint of the NodeManager.
pub(crate) fn http_router(node: &Arc<Node>) -> Router {
    Router::new()
        .merge(crate::web::router(node))
        .merge(crate::container_logs::router(node))
}
