//! The NodeManager's web server (`yarn.nodemanager.webapp.address`, 8042): one router
//! assembled from every feature that answers over HTTP. A feature adds its router
//! here, in [`http_router`], and nowhere else.

use std::sync::Arc;

use tusk_http::spnego::{Spnego, SpnegoError};
use tusk_http::Router;

use crate::Node;

/// Every HTTP endpoint of the NodeManager. With Kerberos and
/// `hadoop.http.authentication.type=kerberos` they negotiate SPNEGO
/// (`hadoop.http.authentication.kerberos.*`, the keytab else `yarn.nodemanager.keytab`).
pub(crate) fn http_router(node: &Arc<Node>) -> Result<Router, SpnegoError> {
    let pages = Router::new()
        .merge(crate::web::router(node))
        .merge(crate::container_logs::router(node));
    let conf = &node.options.conf.0;
    match &node.options.kerberos {
        Some(identity) if Spnego::web_ui_enabled(conf) => {
            let spnego = Spnego::from_conf(
                conf,
                "localhost",
                "yarn.nodemanager.keytab",
                identity.auth_to_local.clone(),
                false,
            )?;
            Ok(Arc::new(spnego).protect(pages))
        }
        _ => Ok(pages),
    }
}
