use std::net::SocketAddr;

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
