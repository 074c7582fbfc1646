//! The ResourceManager's web server (`yarn.resourcemanager.webapp.address`, 8088): one
//! router assembled from every feature that answers over HTTP. A feature adds its
//! router here, in [`http_router`], and nowhere else.

use std::sync::Arc;

use tusk_http::spnego::{Spnego, SpnegoError};
use tusk_http::Router;

use crate::server::Shared;

/// Every HTTP endpoint of the ResourceManager. With Kerberos and
/// `hadoop.http.authentication.type=kerberos` they negotiate SPNEGO
/// (`hadoop.http.authentication.kerberos.*`, the keytab else
/// `yarn.resourcemanager.keytab`), as Hadoop's web UIs do.
pub(crate) fn http_router(shared: &Arc<Shared>) -> Result<Router, SpnegoError> {
    let options = shared.lock().options.clone();
    let pages = Router::new().merge(crate::web::router(shared, options.extra_routes.0.clone()));
    match &options.kerberos {
        Some(identity) if Spnego::web_ui_enabled(&options.conf.0) => {
            let spnego = Spnego::from_conf(
                &options.conf.0,
                "localhost",
                "yarn.resourcemanager.keytab",
                identity.auth_to_local.clone(),
                false,
            )?;
            Ok(Arc::new(spnego).protect(pages))
        }
        _ => Ok(pages),
    }
}
