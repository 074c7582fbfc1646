//! The cluster under test: a fresh in-process [`MiniCluster`] or an external NameNode.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tusk_client::{ClientOptions, DfsClient, ReplicationMode};
use tusk_cluster::MiniCluster;
use tusk_common::Configuration;

use crate::error::{BenchError, Result};

/// Which cluster a benchmark measures, as its flags say: a fresh mini cluster or an
/// existing NameNode.
#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct TargetOptions {
    // DataNodes of the mini cluster.
    #[arg(long, default_value_t = 3)]
    pub datanodes: usize,
    /// Measure an existing NameNode (Tusk's or Hadoop's) instead of a fresh mini cluster.
    // `hdfs://host:port`; without it a mini cluster is started.
    #[arg(long)]
    pub fs: Option<String>,
    /// Where the mini cluster keeps its state (a fresh directory inside it).
    #[arg(skip)]
    pub base_dir: Option<PathBuf>,
    /// `tusk.node.link.bits-per-sec` of the host the clients run on (0 = unknown: an
    /// `adaptive` client measures its link from the blocks it writes).
    #[arg(skip)]
    pub link_bits_per_sec: u64,
}

impl Default for TargetOptions {
    fn default() -> Self {
        TargetOptions {
            datanodes: 3,
            fs: None,
            base_dir: None,
            link_bits_per_sec: 0,
        }
    }
}

impl TargetOptions {
    /// The cluster these options name, its clients told their host's link.
    pub async fn connect(&self) -> Result<ClusterTarget> {
        let mut target =
            ClusterTarget::connect(self.fs.as_deref(), self.datanodes, self.base_dir.as_deref())
                .await?;
        target.set_client_link(self.link_bits_per_sec);
        Ok(target)
    }
}

/// Where a benchmark's files go, and the clients that reach it.
pub struct ClusterTarget {
    /// The mini cluster this run started; `None` for an external NameNode. Shut down by
    /// [`ClusterTarget::shutdown`].
    cluster: Option<MiniCluster>,
    /// Holds the mini cluster's state when the caller named a base directory; removed
    /// when the target is dropped.
    _state_dir: Option<tempfile::TempDir>,
    conf: Configuration,
    description: String,
}

impl ClusterTarget {
    /// Connects to `fs` (`hdfs://host:port`) or, without one, starts a mini cluster of
    /// one NameNode and `datanodes` DataNodes with its state in a fresh directory under
    /// `base_dir` (or the system temp dir).
    pub async fn connect(
        fs: Option<&str>,
        datanodes: usize,
        base_dir: Option<&Path>,
    ) -> Result<Self> {
        match fs {
            Some(uri) => Ok(Self::external(uri)),
            None => Self::mini_cluster(datanodes, base_dir).await,
        }
    }

    fn external(uri: &str) -> Self {
        let mut conf = Configuration::new();
        conf.set("fs.defaultFS", uri);
        ClusterTarget {
            cluster: None,
            _state_dir: None,
            conf,
            description: format!("external NameNode {uri}"),
        }
    }

    async fn mini_cluster(datanodes: usize, base_dir: Option<&Path>) -> Result<Self> {
        if datanodes == 0 {
            return Err(BenchError::InvalidOptions(
                "a mini cluster needs at least one DataNode".into(),
            ));
        }
        let mut builder = MiniCluster::builder().datanodes(datanodes);
        let state_dir = match base_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                let state = tempfile::Builder::new()
                    .prefix("tusk-bench-")
                    .tempdir_in(dir)?;
                builder = builder.base_dir(state.path());
                Some(state)
            }
            None => None,
        };
        let cluster = builder
            .build()
            .await
            .map_err(|e| BenchError::ClusterStart(e.to_string()))?;
        Ok(ClusterTarget {
            conf: cluster.client_conf(),
            description: format!(
                "Tusk mini cluster, 1 NameNode + {datanodes} DataNodes in-process ({})",
                cluster.fs_uri()
            ),
            cluster: Some(cluster),
            _state_dir: state_dir,
        })
    }

    /// A client writing in `mode`; each call opens its own NameNode connection.
    pub fn client(&self, mode: ReplicationMode) -> Result<DfsClient> {
        let mut options =
            ClientOptions::from_conf(&self.conf).map_err(|source| BenchError::ClientSetup {
                fs: self.fs_uri(),
                source,
            })?;
        options.replication_mode = mode;
        Ok(DfsClient::new(options))
    }

    /// Keys the clients take on top of the cluster's address (an external NameNode's
    /// security settings); `fs.defaultFS` stays the target's.
    pub fn set_client_keys(&mut self, keys: &[(String, String)]) {
        let fs = self.fs_uri();
        for (k, v) in keys {
            self.conf.set(k, v);
        }
        self.conf.set("fs.defaultFS", fs);
    }

    /// The clients' `tusk.node.link.bits-per-sec` (0 leaves it unset).
    fn set_client_link(&mut self, bits_per_sec: u64) {
        if bits_per_sec > 0 {
            self.conf
                .set("tusk.node.link.bits-per-sec", bits_per_sec.to_string());
        }
    }

    pub fn fs_uri(&self) -> String {
        self.conf.get_str("fs.defaultFS", "")
    }

    /// For reports: what is being measured.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Stops the mini cluster, if this target started one.
    pub async fn shutdown(self) {
        if let Some(cluster) = self.cluster {
            cluster.shutdown().await;
        }
    }
}

/// A fresh directory name for one run's files, e.g. `/benchmarks/tusk-dfsio-1763712000000`.
pub fn run_dir(bench: &str) -> String {
    format!("/benchmarks/tusk-{bench}-{}", tusk_common::now_millis())
}
