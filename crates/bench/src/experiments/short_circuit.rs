//! Short-circuit local reads against reads through the DataNode, in one run on one
//! in-process cluster: a file written once, then read whole, in turns, by a client
//! reading over TCP from the DataNode, one reading the replica files itself (CRCs
//! verified from the meta file) and one skipping the CRCs
//! (`dfs.client.read.shortcircuit.skip.checksum`). Every read is compared with what
//! was written.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tusk_client::{ClientOptions, CreateOptions, DfsClient};
use tusk_cluster::MiniCluster;

use crate::error::{BenchError, Result};
use crate::flags;
use crate::measure::context::RunContext;
use crate::report::stats;

#[derive(Clone, Debug, Serialize, Deserialize, clap::Args)]
#[serde(default)]
pub struct ShortCircuitOptions {
    /// File size (k/m/g suffixes).
    #[arg(long = "size", value_name = "SIZE", default_value = "128m", value_parser = flags::size)]
    pub file_size: u64,
    #[arg(long, default_value = "128m", value_parser = flags::size)]
    pub block_size: u64,
    /// Reads per path.
    #[arg(long, default_value_t = 5)]
    pub trials: usize,
    /// Where the cluster keeps its state and its domain socket.
    #[arg(skip)]
    pub base_dir: Option<PathBuf>,
}

impl Default for ShortCircuitOptions {
    fn default() -> Self {
        ShortCircuitOptions {
            file_size: 128 << 20,
            block_size: 128 << 20,
            trials: 5,
            base_dir: None,
        }
    }
}

/// How the file was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ReadPath {
    /// READ_BLOCK from the DataNode over TCP (CRCs verified by the client).
    Tcp,
    /// The replica files, CRCs verified from the meta file.
    ShortCircuit,
    /// The replica files, CRCs skipped.
    ShortCircuitSkipChecksum,
}

impl ReadPath {
    const ALL: [ReadPath; 3] = [
        ReadPath::Tcp,
        ReadPath::ShortCircuit,
        ReadPath::ShortCircuitSkipChecksum,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            ReadPath::Tcp => "through the DataNode (TCP)",
            ReadPath::ShortCircuit => "short-circuit, CRCs verified",
            ReadPath::ShortCircuitSkipChecksum => "short-circuit, CRCs skipped",
        }
    }

    fn client_options(self, base: &ClientOptions) -> ClientOptions {
        let mut o = base.clone();
        o.short_circuit = self != ReadPath::Tcp;
        o.short_circuit_skip_checksum = self == ReadPath::ShortCircuitSkipChecksum;
        o
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PathResult {
    pub path: ReadPath,
    pub seconds: Vec<f64>,
    pub median_mb_per_sec: f64,
    pub best_mb_per_sec: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ShortCircuitReport {
    pub context: RunContext,
    pub options: ShortCircuitOptions,
    pub results: Vec<PathResult>,
}

pub async fn run(opts: ShortCircuitOptions) -> Result<ShortCircuitReport> {
    if opts.trials == 0 || opts.file_size == 0 {
        return Err(BenchError::InvalidOptions(
            "need at least one trial and a non-empty file".into(),
        ));
    }
    let state = match &opts.base_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            tempfile::Builder::new()
                .prefix("tusk-sc-")
                .tempdir_in(dir)?
        }
        None => tempfile::Builder::new().prefix("tusk-sc-").tempdir()?,
    };
    let socket = state.path().join("dn._PORT.sock");
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .base_dir(state.path().join("cluster"))
        .conf("dfs.replication", "1")
        .conf("dfs.blocksize", opts.block_size.to_string())
        .conf("dfs.client.read.shortcircuit", "true")
        .conf("dfs.domain.socket.path", socket.display().to_string())
        .build()
        .await
        .map_err(|e| BenchError::ClusterStart(e.to_string()))?;
    let context = RunContext::new(
        "Tusk mini cluster, 1 NameNode + 1 DataNode in-process, the client on the DataNode's host",
    );
    let data = tusk_cluster::test_data(opts.file_size as usize, 42);
    let path = "/short-circuit-bench";
    cluster
        .client()
        .write_file(path, &data, CreateOptions::default())
        .await
        .map_err(BenchError::client("write", path))?;
    let base = cluster.client().options().clone();
    let clients: Vec<(ReadPath, DfsClient)> = ReadPath::ALL
        .iter()
        .map(|p| (*p, DfsClient::new(p.client_options(&base))))
        .collect();
    let mut seconds = vec![Vec::new(); clients.len()];
    // Paths take turns, so each sees the same page cache and machine load.
    for _ in 0..opts.trials {
        for (i, (_, client)) in clients.iter().enumerate() {
            let start = Instant::now();
            let back = client
                .read_file(path)
                .await
                .map_err(BenchError::client("read", path))?;
            seconds[i].push(start.elapsed().as_secs_f64());
            if let Some(offset) = back.iter().zip(&data).position(|(a, b)| a != b) {
                return Err(BenchError::DataMismatch {
                    path: path.into(),
                    offset: offset as u64,
                });
            }
            if back.len() != data.len() {
                return Err(BenchError::SizeMismatch {
                    path: path.into(),
                    actual: back.len() as u64,
                    expected: data.len() as u64,
                });
            }
        }
    }
    drop(clients);
    cluster.shutdown().await;
    let mb = opts.file_size as f64 / 1e6;
    let results = ReadPath::ALL
        .iter()
        .zip(seconds)
        .map(|(p, s)| PathResult {
            path: *p,
            median_mb_per_sec: mb / stats::median(&s),
            best_mb_per_sec: mb / stats::min(&s),
            seconds: s,
        })
        .collect();
    Ok(ShortCircuitReport {
        context,
        options: opts,
        results,
    })
}
