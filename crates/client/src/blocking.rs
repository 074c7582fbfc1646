//! A blocking facade over [`DfsClient`] for callers without an async runtime.

use tokio::runtime::Runtime;

use crate::client::{CreateOptions, DfsClient};
use crate::error::Result;
use crate::options::ClientOptions;
use crate::status::FileStatus;

/// Runs each call to completion on its own small runtime.
pub struct BlockingClient {
    runtime: Runtime,
    client: DfsClient,
}

impl BlockingClient {
    pub fn new(options: ClientOptions) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let client = runtime.block_on(async { DfsClient::new(options) });
        Ok(BlockingClient { runtime, client })
    }

    /// The async client, for mixing both styles.
    pub fn inner(&self) -> &DfsClient {
        &self.client
    }

    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.runtime.block_on(f)
    }

    pub fn get_file_info(&self, path: &str) -> Result<Option<FileStatus>> {
        self.runtime.block_on(self.client.get_file_info(path))
    }

    pub fn list(&self, path: &str) -> Result<Vec<FileStatus>> {
        self.runtime.block_on(self.client.list(path))
    }

    pub fn mkdirs(&self, path: &str, permission: u16) -> Result<bool> {
        self.runtime
            .block_on(self.client.mkdirs(path, permission, true))
    }

    pub fn write_file(&self, path: &str, data: &[u8], opts: CreateOptions) -> Result<()> {
        self.runtime
            .block_on(self.client.write_file(path, data, opts))
    }

    pub fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        self.runtime.block_on(self.client.read_file(path))
    }

    pub fn rename2(&self, src: &str, dst: &str, overwrite: bool) -> Result<()> {
        self.runtime
            .block_on(self.client.rename2(src, dst, overwrite))
    }

    pub fn delete(&self, path: &str, recursive: bool) -> Result<bool> {
        self.runtime.block_on(self.client.delete(path, recursive))
    }
}
