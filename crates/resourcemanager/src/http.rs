//! The ResourceManager's web server (`yarn.resourcemanager.webapp.address`, 8088): one
//! router assembled from every feature that answers over HTTP. A feature adds its
//! router here, in [`http_router`], and nowhere else.

use std::sync::Arc;

use tusk_http::Router;

use crate::server::Shared;

/// Every HTTP endpoint of the ResourceManager.
pub(crate) fn http_router(shared: &Arc<Shared>) -> Router {
    let _ = shared;
    Router::new()
}
