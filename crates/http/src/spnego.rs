//! SPNEGO (RFC 4559, `Authorization: Negotiate <base64 GSS token>`) in front of a
//! daemon's routes, as Hadoop's `AuthenticationFilter` with its Kerberos handler: a
//! request without the header is answered 401 with `WWW-Authenticate: Negotiate`; one
//! whose token the `HTTP/host` keytab accepts goes on with an [`HttpCaller`] extension
//! (the client's principal and its `hadoop.security.auth_to_local` short name), and the
//! answer carries the mutual-authentication token back; a token that fails is 403.
//!
//! WebHDFS lets a request with `delegation=` through unauthenticated (Hadoop's WebHDFS
//! `AuthFilter`): the token proves the user there ([`Spnego::passes_delegation`]).
//!
//! The signed `hadoop.auth` cookie Hadoop sets after a negotiation is not set: every
//! request negotiates again.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use tusk_common::config::Configuration;
use tusk_security::kerberos::{accept_negotiate, AuthToLocal, Principal, ServiceCredentials};

/// Whether the web UIs negotiate (`simple` or `kerberos`; Hadoop's default `simple`).
pub const HTTP_AUTH_TYPE_KEY: &str = "hadoop.http.authentication.type";
/// The web servers' principal (`HTTP/_HOST@REALM`).
pub const HTTP_PRINCIPAL_KEY: &str = "hadoop.http.authentication.kerberos.principal";
pub const HTTP_KEYTAB_KEY: &str = "hadoop.http.authentication.kerberos.keytab";
/// WebHDFS's own principal and keytab (HDFS's `DFSConfigKeys`); the `hadoop.http.*`
/// ones stand in when they are not set.
pub const WEB_PRINCIPAL_KEY: &str = "dfs.web.authentication.kerberos.principal";
pub const WEB_KEYTAB_KEY: &str = "dfs.web.authentication.kerberos.keytab";

/// Who a negotiated request comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpCaller {
    /// `alice@REALM`.
    pub principal: String,
    /// Its short name by `hadoop.security.auth_to_local` (`alice`).
    pub user: String,
}

/// A web server's SPNEGO acceptor.
pub struct Spnego {
    credentials: ServiceCredentials,
    auth_to_local: AuthToLocal,
    /// A request with `delegation=` goes on without negotiating (WebHDFS).
    passes_delegation: bool,
}

/// Why a web server's Kerberos identity could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SpnegoError {
    #[error("{0} must be set for SPNEGO")]
    Missing(String),
    #[error("SPNEGO principal {principal}: {source}")]
    Kerberos {
        principal: String,
        source: tusk_security::kerberos::KerberosError,
    },
}

impl Spnego {
    /// The acceptor for WebHDFS (`dfs.web.authentication.kerberos.*`, else
    /// `hadoop.http.authentication.kerberos.*`; the keytab else `daemon_keytab_key`'s),
    /// `_HOST` standing for `host`. Letting `delegation=` through when `webhdfs`.
    pub fn from_conf(
        conf: &Configuration,
        host: &str,
        daemon_keytab_key: &str,
        auth_to_local: AuthToLocal,
        webhdfs: bool,
    ) -> Result<Spnego, SpnegoError> {
        let first = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| conf.get(k).map(str::trim).filter(|v| !v.is_empty()))
                .map(str::to_string)
        };
        let principal = first(&[WEB_PRINCIPAL_KEY, HTTP_PRINCIPAL_KEY])
            .ok_or_else(|| SpnegoError::Missing(WEB_PRINCIPAL_KEY.into()))?;
        let keytab: PathBuf = first(&[WEB_KEYTAB_KEY, HTTP_KEYTAB_KEY, daemon_keytab_key])
            .ok_or_else(|| SpnegoError::Missing(WEB_KEYTAB_KEY.into()))?
            .into();
        let failed = |source| SpnegoError::Kerberos {
            principal: principal.clone(),
            source,
        };
        let parsed = Principal::with_host(&principal, host).map_err(failed)?;
        let credentials = ServiceCredentials::from_keytab(parsed, &keytab).map_err(failed)?;
        Ok(Spnego {
            credentials,
            auth_to_local,
            passes_delegation: webhdfs,
        })
    }

    /// Whether the web UIs negotiate (`hadoop.http.authentication.type=kerberos`).
    pub fn web_ui_enabled(conf: &Configuration) -> bool {
        conf.get(HTTP_AUTH_TYPE_KEY)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("kerberos"))
    }

    /// The same acceptor, letting `delegation=` through or not.
    pub fn passes_delegation(mut self, passes: bool) -> Self {
        self.passes_delegation = passes;
        self
    }

    /// Wraps `router`'s routes.
    pub fn protect(self: Arc<Self>, router: axum::Router) -> axum::Router {
        router.layer(axum::middleware::from_fn_with_state(self, negotiate))
    }

    fn caller(&self, principal: String) -> Result<HttpCaller, String> {
        let parsed = Principal::parse(&principal).map_err(|e| e.to_string())?;
        let user = self
            .auth_to_local
            .short_name(&parsed, &self.credentials.principal.realm)
            .map_err(|e| e.to_string())?;
        Ok(HttpCaller { principal, user })
    }
}

/// The middleware: negotiate, or let a WebHDFS token through, or challenge.
async fn negotiate(
    State(spnego): State<Arc<Spnego>>,
    mut request: Request,
    next: Next,
) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("Negotiate")
                .then(|| rest.trim().to_string())
        });
    let Some(token) = token else {
        if spnego.passes_delegation && has_delegation(request.uri().query()) {
            return next.run(request).await;
        }
        return challenge();
    };
    let Ok(token) = base64::engine::general_purpose::STANDARD.decode(&token) else {
        return refused("the Negotiate token is not base64".into());
    };
    let acceptor = spnego.clone();
    let accepted =
        tokio::task::spawn_blocking(move || accept_negotiate(&acceptor.credentials, &token))
            .await
            .expect("SPNEGO accept task");
    let (principal, reply) = match accepted {
        Ok(done) => done,
        Err(e) => return refused(e.to_string()),
    };
    let caller = match spnego.caller(principal) {
        Ok(c) => c,
        Err(e) => return refused(e),
    };
    tracing::debug!(principal = %caller.principal, user = %caller.user, "SPNEGO");
    request.extensions_mut().insert(caller);
    let mut response = next.run(request).await;
    let value = match reply {
        Some(reply) => format!(
            "Negotiate {}",
            base64::engine::general_purpose::STANDARD.encode(reply)
        ),
        None => "Negotiate".to_string(),
    };
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn has_delegation(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&').any(|pair| {
            pair.strip_prefix("delegation=")
                .is_some_and(|v| !v.is_empty())
        })
    })
}

/// 401 with the challenge, as Hadoop's `KerberosAuthenticationHandler` answers a
/// request without credentials.
fn challenge() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE, "Negotiate"),
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
        ],
        "Authentication required\n",
    )
        .into_response()
}

/// 403, as Hadoop's `AuthenticationFilter` answers a token that does not authenticate.
fn refused(reason: String) -> Response {
    tracing::info!(%reason, "SPNEGO refused");
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("Authentication failed: {reason}\n"),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_non_empty_delegation_parameter_passes() {
        assert!(has_delegation(Some("op=LISTSTATUS&delegation=abc")));
        assert!(!has_delegation(Some("op=LISTSTATUS&delegation=")));
        assert!(!has_delegation(Some("op=LISTSTATUS&xdelegation=abc")));
        assert!(!has_delegation(None));
    }
}
