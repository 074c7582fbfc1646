//! Helpers only tests use, behind the `testing` feature that only `[dev-dependencies]`
//! enable, so the shipped `tusk` binary links none of them: `http_exchange` (one raw
//! HTTP/1.1 request and response on a kept connection) and [`listed_names`].

use tusk_client::DfsClient;

pub mod http_exchange;

/// The names in the listing of `path`, sorted: what a test compares a directory with.
pub async fn listed_names(client: &DfsClient, path: &str) -> Vec<String> {
    let mut names: Vec<String> = client
        .list(path)
        .await
        .unwrap_or_else(|e| panic!("list {path}: {e}"))
        .into_iter()
        .map(|s| s.path.rsplit('/').next().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}
