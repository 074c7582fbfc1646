//! [`DfsRegistry`]: DataFusion's object store registry with `hdfs://` URLs served by a
//! [`DfsStore`] per NameNode, made on first use from the session's client options;
//! `hdfs:///path` (no authority) is the default file system (`fs.defaultFS`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::cache::cache_manager::CacheManagerConfig;
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use object_store::ObjectStore;
use tusk_client::{ClientOptions, DfsClient};
use url::Url;

use crate::store::DfsStore;

pub const SCHEME: &str = "hdfs";

#[derive(Debug)]
pub struct DfsRegistry {
    options: ClientOptions,
    /// Stores by NameNode address (`host:port`).
    stores: Mutex<HashMap<String, Arc<DfsStore>>>,
    others: DefaultObjectStoreRegistry,
}

impl DfsRegistry {
    /// A registry whose DFS clients take `options`, `options.namenode` serving URLs
    /// without an authority.
    pub fn new(options: ClientOptions) -> Self {
        DfsRegistry {
            options,
            stores: Mutex::new(HashMap::new()),
            others: DefaultObjectStoreRegistry::new(),
        }
    }

    /// The store of the NameNode `url` names (the default one when it names none).
    pub fn dfs_store(&self, url: &Url) -> Result<Arc<DfsStore>> {
        let namenode = match url.host_str() {
            None | Some("") => self.options.namenode.clone(),
            Some(host) => format!("{host}:{}", url.port().unwrap_or(8020)),
        };
        let mut stores = self
            .stores
            .lock()
            .map_err(|_| DataFusionError::Internal("DFS store registry poisoned".into()))?;
        let store = stores.entry(namenode.clone()).or_insert_with(|| {
            Arc::new(DfsStore::new(DfsClient::new(ClientOptions {
                namenode,
                ..self.options.clone()
            })))
        });
        Ok(store.clone())
    }
}

/// A DataFusion runtime whose object stores serve `hdfs://` through `registry`, spilling
/// under `temp_dir` when one is given (else the system's temporary directory).
///
/// File listings are not cached: a table over a DFS directory sees the files there when
/// a query starts, as a Hive table does (DataFusion keeps listings without end by
/// default, so a file deleted by another client failed every later query).
pub fn runtime_env(
    registry: Arc<DfsRegistry>,
    temp_dir: Option<&std::path::Path>,
) -> Result<Arc<RuntimeEnv>> {
    let mut builder = RuntimeEnvBuilder::new()
        .with_object_store_registry(registry)
        .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0));
    if let Some(dir) = temp_dir {
        builder = builder.with_temp_file_path(dir);
    }
    builder.build_arc()
}

impl ObjectStoreRegistry for DfsRegistry {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.others.register_store(url, store)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if url.scheme() == SCHEME {
            return Ok(self.dfs_store(url)?);
        }
        self.others.get_store(url)
    }
}
