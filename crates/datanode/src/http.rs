//! The DataNode's web server (`dfs.datanode.http.address`, 9864; its port is the
//! `info_port` the node advertises, where the NameNode redirects WebHDFS reads and
//! writes): one router assembled from every feature that answers over HTTP. A feature
//! adds its router here, in [`http_router`], and nowhere else.

use std::sync::Arc;

use tusk_http::spnego::{Spnego, SpnegoError};
use tusk_http::Router;

use crate::Node;

/// Every HTTP endpoint of the DataNode. With Kerberos and
/// `hadoop.http.authentication.type=kerberos` the pages negotiate SPNEGO
/// (`hadoop.http.authentication.kerberos.*`, the keytab else `dfs.datanode.keytab.file`);
/// WebHDFS never does: it acts with the `delegation=` the NameNode's redirect carries.
pub(crate) fn http_router(node: &Arc<Node>) -> Result<Router, SpnegoError> {
    let pages = crate::web::router(node);
    let pages = match &node.options.kerberos {
        Some(identity) if Spnego::web_ui_enabled(&node.options.conf.0) => {
            // Any key of the keytab is accepted; the principal names the realm.
            let spnego = Spnego::from_conf(
                &node.options.conf.0,
                "localhost",
                "dfs.datanode.keytab.file",
                identity.auth_to_local.clone(),
                false,
            )?;
            Arc::new(spnego).protect(pages)
        }
        _ => pages,
    };
    Ok(Router::new()
        .merge(crate::webhdfs::router(node))
        .merge(pages))
}
