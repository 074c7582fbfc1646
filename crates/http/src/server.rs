use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::{Listener, ListenerExt};
use axum::{Extension, Router};
use rustls::ServerConfig;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tusk_common::Shutdown;

use crate::tls::Https;
use crate::HttpError;

/// A running HTTP or HTTPS server: it serves one router until its shutdown signal fires, then
/// stops accepting and lets the requests in flight finish.
pub struct HttpServer {
    /// The bound address (the real port when port 0 was asked for).
    addr: SocketAddr,
    /// The accept loop; ends after shutdown.
    task: JoinHandle<()>,
}

impl HttpServer {
    /// Binds `addr` (`host:port`; port 0 picks one) and serves `router` on it.
    pub async fn start(
        addr: &str,
        router: Router,
        shutdown: Shutdown,
    ) -> Result<HttpServer, HttpError> {
        let listener = bind(addr).await?;
        Self::serve(listener, router, shutdown)
    }

    /// Serves `router` on an already-bound `listener`.
    pub fn serve(
        listener: TcpListener,
        router: Router,
        shutdown: Shutdown,
    ) -> Result<HttpServer, HttpError> {
        let addr = listener.local_addr().map_err(HttpError::LocalAddr)?;
        let router = with_options(router);
        let serving = axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move { shutdown.wait().await });
        Ok(HttpServer::spawn(addr, "HTTP", serving))
    }

    /// Binds `addr` and serves `router` over TLS with `tls` (see [`crate::tls`]).
    pub async fn start_tls(
        addr: &str,
        router: Router,
        shutdown: Shutdown,
        tls: Arc<ServerConfig>,
    ) -> Result<HttpServer, HttpError> {
        let listener = bind(addr).await?;
        Self::serve_tls(listener, router, shutdown, tls)
    }

    /// Serves `router` over TLS on an already-bound `listener`; its requests carry the
    /// [`Https`] extension.
    pub fn serve_tls(
        listener: TcpListener,
        router: Router,
        shutdown: Shutdown,
        tls: Arc<ServerConfig>,
    ) -> Result<HttpServer, HttpError> {
        let addr = listener.local_addr().map_err(HttpError::LocalAddr)?;
        let router = with_options(router).layer(Extension(Https));
        let listener = TlsListener::start(listener, addr, tls, shutdown.clone());
        // `tap_io` only so that `ConnectInfo<SocketAddr>` works on this listener.
        let serving = axum::serve(
            listener.tap_io(|_| {}),
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move { shutdown.wait().await });
        Ok(HttpServer::spawn(addr, "HTTPS", serving))
    }

    /// Runs `serving` (an `axum::serve` on `addr`) as the server's task, which logs
    /// why it stopped if not by shutdown; `scheme` names it in the log.
    fn spawn<F>(addr: SocketAddr, scheme: &'static str, serving: F) -> HttpServer
    where
        F: IntoFuture<Output = std::io::Result<()>> + Send + 'static,
        F::IntoFuture: Send,
    {
        let task = tokio::spawn(async move {
            if let Err(e) = serving.await {
                tracing::warn!(%addr, error = %e, "{scheme} server stopped");
            }
        });
        tracing::info!(%addr, "{scheme} server listening");
        HttpServer { addr, task }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits until the server has stopped (after shutdown).
    pub async fn join(self) {
        let _ = self.task.await;
    }
}

/// Binds `addr` (`host:port`; port 0 picks one).
async fn bind(addr: &str) -> Result<TcpListener, HttpError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| HttpError::Bind {
            addr: addr.to_string(),
            source,
        })
}

/// `router` with `OPTIONS` answered, outside it, so the method is changed before its
/// routes see it.
fn with_options(router: Router) -> Router {
    Router::new()
        .fallback_service(router)
        .layer(middleware::from_fn(answer_options))
}

/// TLS connections, handshaken apart from the accept loop so that a slow or silent
/// client holds up nobody else.
struct TlsListener {
    /// Handshaken connections; the sender ends with the accept task, at shutdown.
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
}

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

impl TlsListener {
    fn start(
        listener: TcpListener,
        addr: SocketAddr,
        tls: Arc<ServerConfig>,
        shutdown: Shutdown,
    ) -> TlsListener {
        let (tx, accepted) = mpsc::channel(64);
        let acceptor = TlsAcceptor::from(tls);
        tokio::spawn(async move {
            loop {
                let (tcp, peer) = tokio::select! {
                    _ = shutdown.wait() => return,
                    accepted = listener.accept() => match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::debug!(%addr, error = %e, "HTTPS accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    },
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        TlsListener { accepted, addr }
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(connection) => connection,
            // Shut down: nothing more comes; the server stops on its own signal.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}

/// `OPTIONS` on a path that serves other methods is 200 with their `Allow` list, as
/// Hadoop's servlets answer it: Hadoop's web clients (`AuthenticatedURL`, e.g. in `yarn
/// logs`) send an `OPTIONS` first to learn how to authenticate and refuse anything but
/// success. The path is asked with `HEAD` (a safe method, answered by its `GET`) to
/// learn whether it exists and what it allows.
async fn answer_options(mut request: Request, next: Next) -> Response {
    if request.method() != Method::OPTIONS {
        return next.run(request).await;
    }
    *request.method_mut() = Method::HEAD;
    let probe = next.run(request).await;
    let allowed = match probe.status() {
        StatusCode::NOT_FOUND => return probe,
        StatusCode::METHOD_NOT_ALLOWED => probe
            .headers()
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty())
            .map_or_else(|| "OPTIONS".to_string(), |v| format!("{v},OPTIONS")),
        _ => "GET,HEAD,OPTIONS".to_string(),
    };
    let mut response = StatusCode::OK.into_response();
    if let Ok(value) = HeaderValue::from_str(&allowed) {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;

    #[tokio::test]
    async fn serves_on_a_picked_port_until_shutdown() {
        let shutdown = Shutdown::new();
        let router = Router::new().route("/hello", get(|| async { "hi" }));
        let server = HttpServer::start("127.0.0.1:0", router, shutdown.clone())
            .await
            .unwrap();
        assert_ne!(server.addr().port(), 0);
        let url = format!("http://{}/hello", server.addr());
        let body = reqwest::get(&url).await.unwrap().text().await.unwrap();
        assert_eq!(body, "hi");
        let missing = reqwest::get(format!("http://{}/nothing", server.addr()))
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
        shutdown.trigger();
        tokio::time::timeout(std::time::Duration::from_secs(10), server.join())
            .await
            .expect("server stops after shutdown");
        assert!(
            reqwest::get(&url).await.is_err(),
            "nothing listens any more"
        );
    }

    #[tokio::test]
    async fn options_is_answered_where_other_methods_are_served() {
        let shutdown = Shutdown::new();
        let router = Router::new()
            .route("/ws/v1/thing", get(|| async { "{}" }))
            .route("/upload", axum::routing::post(|| async { "done" }));
        let server = HttpServer::start("127.0.0.1:0", router, shutdown.clone())
            .await
            .unwrap();
        let client = reqwest::Client::new();
        let ask = |path: &str| {
            client
                .request(
                    reqwest::Method::OPTIONS,
                    format!("http://{}{path}", server.addr()),
                )
                .send()
        };
        let found = ask("/ws/v1/thing").await.unwrap();
        assert_eq!(found.status(), 200);
        let allow = found.headers()["allow"].to_str().unwrap().to_string();
        assert_eq!(allow, "GET,HEAD,OPTIONS");
        assert_eq!(ask("/nothing").await.unwrap().status(), 404);
        let post_only = ask("/upload").await.unwrap();
        assert_eq!(post_only.status(), 200);
        let allow = post_only.headers()["allow"].to_str().unwrap();
        assert!(!allow.contains("GET"), "{allow}");
        let post = client
            .post(format!("http://{}/ws/v1/thing", server.addr()))
            .send()
            .await
            .unwrap();
        eprintln!("{:?}", post.headers());
        assert_eq!(post.status(), 405, "only OPTIONS is answered for the path");
        shutdown.trigger();
    }

    /// A GET of `path` over TLS to `addr`, trusting `cert` only; the whole response.
    async fn get_over_tls(addr: SocketAddr, cert: &[u8], path: &str) -> std::io::Result<String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(rustls_pki_types::CertificateDer::from(cert.to_vec()))
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tcp = TcpStream::connect(addr).await?;
        let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
        let mut tls = connector.connect(name, tcp).await?;
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        tls.write_all(request.as_bytes()).await?;
        let mut response = String::new();
        tls.read_to_string(&mut response).await?;
        Ok(response)
    }

    #[tokio::test]
    async fn serves_over_tls_and_refuses_plain_http_on_the_port() {
        let dir = tempfile::tempdir().unwrap();
        let cert = crate::tls::SelfSigned::generate(&["localhost".into()]).unwrap();
        let keystore = dir.path().join("keystore.p12");
        std::fs::write(&keystore, cert.keystore_pkcs12("changeit").unwrap()).unwrap();
        let mut conf = tusk_common::Configuration::new();
        conf.set(
            "ssl.server.keystore.location",
            keystore.display().to_string(),
        );
        conf.set("ssl.server.keystore.password", "changeit");
        conf.set("ssl.server.keystore.type", "pkcs12");
        let tls = crate::tls::server_config(&conf).unwrap();
        let shutdown = Shutdown::new();
        let router =
            Router::new()
                .route("/hello", get(|| async { "hi" }))
                .route(
                    "/scheme",
                    get(|https: Option<Extension<Https>>| async move {
                        if https.is_some() {
                            "https"
                        } else {
                            "http"
                        }
                    }),
                )
                .route(
                    "/peer",
                    get(
                        |axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<
                            SocketAddr,
                        >| async move { peer.ip().to_string() },
                    ),
                );
        let server = HttpServer::start_tls("127.0.0.1:0", router, shutdown.clone(), tls)
            .await
            .unwrap();
        let addr = server.addr();
        let hello = get_over_tls(addr, &cert.cert, "/hello").await.unwrap();
        assert!(hello.starts_with("HTTP/1.1 200"), "{hello}");
        assert!(hello.ends_with("hi"), "{hello}");
        let scheme = get_over_tls(addr, &cert.cert, "/scheme").await.unwrap();
        assert!(scheme.ends_with("https"), "{scheme}");
        let peer = get_over_tls(addr, &cert.cert, "/peer").await.unwrap();
        assert!(peer.ends_with("127.0.0.1"), "{peer}");
        // A client that trusts another certificate refuses the server.
        let other = crate::tls::SelfSigned::generate(&["localhost".into()]).unwrap();
        assert!(get_over_tls(addr, &other.cert, "/hello").await.is_err());
        // Plain HTTP to the HTTPS port gets no answer.
        assert!(reqwest::get(format!("http://{addr}/hello")).await.is_err());
        // ... and the port still serves TLS after it.
        let again = get_over_tls(addr, &cert.cert, "/hello").await.unwrap();
        assert!(again.ends_with("hi"), "{again}");
        shutdown.trigger();
        tokio::time::timeout(std::time::Duration::from_secs(10), server.join())
            .await
            .expect("server stops after shutdown");
    }

    #[tokio::test]
    async fn a_taken_address_is_an_error_naming_it() {
        let held = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = held.local_addr().unwrap().to_string();
        let err = HttpServer::start(&addr, Router::new(), Shutdown::new())
            .await
            .err()
            .expect("bind fails");
        assert!(err.to_string().contains(&addr), "{err}");
    }
}
