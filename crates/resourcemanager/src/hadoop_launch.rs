//! The launch context of a Hadoop-submitted application's AM container: the
//! ContainerLaunchContextProto its client submitted, with what Hadoop's ResourceManager
//! adds before handing it to a NodeManager (the submit time, the attempt limit, the web
//! proxy base and the AM's credentials). The NodeManager adds the container's own environment
//! (CONTAINER_ID, NM_HOST, …) when it launches it.

use base64::Engine;
use bytes::Bytes;
use prost::Message;
use tusk_proto::hadoop::yarn as h;

use tusk_proto::hadoop::common::TokenProto;
use tusk_security::Credentials;

use crate::cluster::App;
use crate::hadoop_records as records;
use crate::secrets::Secrets;

/// Hadoop's `ApplicationConstants.APP_SUBMIT_TIME_ENV`: when the application was
/// submitted, in ms since the epoch.
pub const APP_SUBMIT_TIME_ENV: &str = "APP_SUBMIT_TIME_ENV";
/// Hadoop's `ApplicationConstants.MAX_APP_ATTEMPTS_ENV`: the number of the last attempt
/// allowed.
pub const MAX_APP_ATTEMPTS_ENV: &str = "MAX_APP_ATTEMPTS";

/// Hadoop's `ApplicationConstants.APPLICATION_WEB_PROXY_BASE_ENV`: the path under the
/// ResourceManager's web address where the AM's web UI is proxied
/// (`ProxyUriUtils.getPath`). Spark's AM builds its web UI filter's proxy URL from it and
/// fails to start its UI without it.
pub const APPLICATION_WEB_PROXY_BASE_ENV: &str = "APPLICATION_WEB_PROXY_BASE";

/// The serialized ContainerLaunchContextProto for the current attempt's AM of `app`,
/// built from `spec`, the context its client submitted.
pub(crate) fn am_launch_context(
    spec: &h::ContainerLaunchContextProto,
    app: &App,
    secrets: &Secrets,
) -> Bytes {
    let mut launch = spec.clone();
    set_env(&mut launch, APP_SUBMIT_TIME_ENV, app.submit_ms.to_string());
    set_env(
        &mut launch,
        APPLICATION_WEB_PROXY_BASE_ENV,
        web_proxy_base(&app.id),
    );
    // Attempts a restart ended do not count, as for Tusk's own AMs.
    set_env(
        &mut launch,
        MAX_APP_ATTEMPTS_ENV,
        (app.max_attempts + app.uncounted_attempts).to_string(),
    );
    let attempt = records::attempt_id(&app.id, app.attempt);
    let token = secrets.amrm.create_token(&attempt);
    launch.tokens = Some(with_token(launch.tokens.take().unwrap_or_default(), token));
    Bytes::from(launch.encode_to_vec())
}

/// Where the ResourceManager's web server proxies `app`'s AM: `/proxy/<application id>`.
fn web_proxy_base(app: &str) -> String {
    format!("/proxy/{app}")
}

/// The AM's credentials (`tokens`: Hadoop's Credentials file format, as the client
/// submitted them) with the attempt's AMRMToken added, so the AM can authenticate to
/// ApplicationMasterProtocolPB. Hadoop's RM files it under its (empty) service name;
/// the AM's client names the service when it connects. Credentials that do not parse
/// are replaced by ones holding the token alone.
fn with_token(tokens: Bytes, token: TokenProto) -> Bytes {
    if tokens.is_empty() {
        let mut credentials = Credentials::new();
        credentials.add_token(token.service.clone(), token);
        return Bytes::from(credentials.encode());
    }
    let mut credentials = Credentials::decode(&tokens).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "an AM's submitted credentials do not parse; sending the AMRMToken alone");
        Credentials::new()
    });
    credentials.add_token(token.service.clone(), token);
    Bytes::from(credentials.encode())
}

/// Sets `key` in the launch context's environment, replacing what the client set.
fn set_env(launch: &mut h::ContainerLaunchContextProto, key: &str, value: String) {
    launch.environment.retain(|e| e.key() != key);
    launch.environment.push(h::StringStringMapProto {
        key: Some(key.to_string()),
        value: Some(value),
    });
}

/// A submitted launch context as the state store keeps it: encoded, in base64.
pub fn to_stored(spec: &h::ContainerLaunchContextProto) -> String {
    base64::engine::general_purpose::STANDARD.encode(spec.encode_to_vec())
}

/// The launch context [`to_stored`] kept; `None` for an empty or unreadable record.
pub fn from_stored(stored: &str) -> Option<h::ContainerLaunchContextProto> {
    if stored.is_empty() {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(stored)
        .ok()?;
    h::ContainerLaunchContextProto::decode(bytes.as_slice()).ok()
}
