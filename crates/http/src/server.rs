use std::net::SocketAddr;

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tusk_common::Shutdown;

use crate::HttpError;

/// A running HTTP server: it serves one router until its shutdown signal fires, then
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
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| HttpError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        Self::serve(listener, router, shutdown)
    }

    /// Serves `router` on an already-bound `listener`.
    pub fn serve(
        listener: TcpListener,
        router: Router,
        shutdown: Shutdown,
    ) -> Result<HttpServer, HttpError> {
        let addr = listener.local_addr().map_err(HttpError::LocalAddr)?;
        // Outside the router, so the method is changed before its routes see it.
        let router = Router::new()
            .fallback_service(router)
            .layer(middleware::from_fn(answer_options));
        let task = tokio::spawn(async move {
            let served = axum::serve(
                listener,
                router.into_make_service_with_connect_info::<SocketAddr>(),
            )
            .with_graceful_shutdown(async move { shutdown.wait().await })
            .await;
            if let Err(e) = served {
                tracing::warn!(%addr, error = %e, "HTTP server stopped");
            }
        });
        tracing::info!(%addr, "HTTP server listening");
        Ok(HttpServer { addr, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits until the server has stopped (after shutdown).
    pub async fn join(self) {
        let _ = self.task.await;
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
