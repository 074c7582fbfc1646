//! An in-process cluster for tests: one NameNode and N DataNodes on 127.0.0.1, each on
//! its own tokio runtime so a single node can be stopped (clean shutdown), killed (its
//! runtime dropped mid-flight, like `kill -9`: no flush, sockets reset) and restarted
//! on the same port and directories; and, with [`MiniClusterBuilder::nodemanagers`], a
//! ResourceManager and N NodeManagers ([`MiniYarn`]).
//!
//! Layout: [`MiniCluster`] (built by [`MiniClusterBuilder`]) owns the node runtimes and
//! their state directories; `yarn`: [`MiniYarn`]; `wait`: [`wait_for`] polls a
//! condition with a deadline and names what it awaited when it times out;
//! [`test_data`] makes reproducible file contents; `process`: the same daemons as
//! processes of the `tusk` binary ([`process::ProcessCluster`], [`process::DaemonCommand`]),
//! the one launcher of `tusk local`, `tusk testbed`, the fault suite and the benches;
//! `history`: Jepsen-style histories of a file workload and their linearizability
//! check; `error`: [`ProcessError`]; `testing` (feature `testing`, enabled
//! only by dev-dependencies so the `tusk` binary carries none of it): helpers that only
//! tests use. The integration tests of the DFS live
//! in `tests/` (read/write in both replication modes, faults, errors, asynchronous calls,
//! the hdfs-native client).
//!
//! ```no_run
//! # async fn demo() -> Result<(), tusk_cluster::Error> {
//! let cluster = tusk_cluster::MiniCluster::builder().datanodes(3).build().await?;
//! let client = cluster.client();
//! client.write_file("/a", b"hello", Default::default()).await?;
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tusk_client::{ClientOptions, DfsClient};
use tusk_common::{Configuration, Shutdown};
use tusk_datanode::{DataNode, DataNodeHandle, DataNodeOptions};
use tusk_namenode::{NameNode, NameNodeOptions, Namesystem};

pub mod error;
pub mod history;
pub mod process;
#[cfg(feature = "testing")]
pub mod testing;
pub mod wait;
pub mod yarn;

pub use error::ProcessError;
pub use wait::{wait_for, wait_for_blocking, wait_for_replicas, Condition, WaitTimeout};
pub use yarn::MiniYarn;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// Settings for [`MiniCluster::build`]; every node reads `conf`.
pub struct MiniClusterBuilder {
    datanodes: usize,
    /// `None`: no YARN; `Some(n)`: a ResourceManager and `n` NodeManagers.
    nodemanagers: Option<usize>,
    conf: Configuration,
    base_dir: Option<PathBuf>,
}

impl MiniClusterBuilder {
    pub fn datanodes(mut self, n: usize) -> Self {
        self.datanodes = n;
        self
    }

    /// Also starts a ResourceManager and `n` NodeManagers (`nm0`, `nm1`, ...), reading
    /// the same configuration; see [`MiniCluster::yarn`]. `0` starts the
    /// ResourceManager alone (add nodes with [`MiniYarn::add_nodemanager`]).
    pub fn nodemanagers(mut self, n: usize) -> Self {
        self.nodemanagers = Some(n);
        self
    }

    /// Sets a configuration key for every node and client.
    pub fn conf(mut self, key: &str, value: impl Into<String>) -> Self {
        self.conf.set(key, value);
        self
    }

    /// `dfs.blocksize` for every node and client.
    pub fn block_size(self, bytes: u64) -> Self {
        self.conf("dfs.blocksize", bytes.to_string())
    }

    /// Keeps state under `dir` instead of a temporary directory.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// [`build`](Self::build) for a test: panics if the cluster does not start.
    pub async fn start(self) -> MiniCluster {
        self.build().await.expect("the mini cluster starts")
    }

    pub async fn build(self) -> Result<MiniCluster, Error> {
        let temp = match &self.base_dir {
            Some(_) => None,
            None => Some(tempfile::tempdir()?),
        };
        let base = self
            .base_dir
            .clone()
            .unwrap_or_else(|| temp.as_ref().expect("temp dir").path().to_path_buf());
        let mut cluster = MiniCluster {
            _temp: temp,
            base,
            conf: self.conf,
            namenode: None,
            namenode_addr: "127.0.0.1:0".parse().expect("addr"),
            namenode_http_addr: "127.0.0.1:0".parse().expect("addr"),
            namenode_https_addr: None,
            datanodes: Vec::new(),
            yarn: None,
        };
        cluster.start_namenode().await?;
        for _ in 0..self.datanodes {
            cluster.add_datanode().await?;
        }
        cluster
            .wait_live_datanodes(self.datanodes, Duration::from_secs(20))
            .await?;
        if let Some(n) = self.nodemanagers {
            cluster.yarn = Some(MiniYarn::start(&cluster.conf, cluster.base.clone(), n).await?);
        }
        Ok(cluster)
    }
}

struct NameNodeSlot {
    runtime: Runtime,
    shutdown: Shutdown,
    namesystem: Arc<Namesystem>,
    wait: Option<tokio::task::JoinHandle<()>>,
}

struct DataNodeSlot {
    dir: PathBuf,
    /// The data port; kept across restarts.
    addr: SocketAddr,
    /// The web server's address (WebHDFS); kept across restarts.
    http_addr: SocketAddr,
    running: Option<RunningDataNode>,
}

struct RunningDataNode {
    runtime: Runtime,
    shutdown: Shutdown,
    /// Finishes when the node has shut down.
    wait: tokio::task::JoinHandle<()>,
    hooks: DataNodeHooks,
}

/// What the cluster can ask of a running DataNode from outside its runtime.
#[derive(Clone)]
struct DataNodeHooks {
    uuid: String,
    http_addr: Option<SocketAddr>,
    replica_paths: Arc<dyn Fn(u64) -> Option<PathBuf> + Send + Sync>,
    pause_heartbeats: Arc<dyn Fn(bool) + Send + Sync>,
    block_key_ids: Arc<dyn Fn() -> Vec<i32> + Send + Sync>,
    sasl_handshakes: Arc<dyn Fn() -> u64 + Send + Sync>,
    /// Wrapped (integrity / privacy) handshakes, and connections refused for skipping one.
    sasl_layers: Arc<dyn Fn() -> (u64, u64) + Send + Sync>,
    release_storage: Arc<dyn Fn() + Send + Sync>,
}

pub struct MiniCluster {
    _temp: Option<tempfile::TempDir>,
    base: PathBuf,
    conf: Configuration,
    namenode: Option<NameNodeSlot>,
    namenode_addr: SocketAddr,
    /// The NameNode's web server (WebHDFS); kept across restarts.
    namenode_http_addr: SocketAddr,
    /// The NameNode's HTTPS server, under `dfs.http.policy` HTTPS_ONLY or
    /// HTTP_AND_HTTPS; set at each start.
    namenode_https_addr: Option<SocketAddr>,
    datanodes: Vec<DataNodeSlot>,
    /// The ResourceManager and NodeManagers, when built with `.nodemanagers(n)`.
    yarn: Option<MiniYarn>,
}

fn node_runtime(name: &str) -> Result<Runtime, Error> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()?)
}

/// Binds 127.0.0.1:`port`, retrying briefly while the port is still held by a node that
/// was just killed.
async fn bind(addr: SocketAddr) -> Result<TcpListener, Error> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return Ok(l),
            Err(e) if Instant::now() < deadline && e.kind() == std::io::ErrorKind::AddrInUse => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => return Err(e.into()),
        }
    }
}

impl MiniCluster {
    /// A builder; its clients do not retry a refused NameNode connection
    /// (`ipc.client.connect.max.retries=0`), so tests that probe a stopped NameNode fail
    /// at once. A test of riding out a restart sets the key back with `.conf(..)`.
    pub fn builder() -> MiniClusterBuilder {
        let mut conf = Configuration::new();
        conf.set("ipc.client.connect.max.retries", "0");
        // As HDFS's test configuration: blocks of any size, so tests write files of many
        // small blocks.
        conf.set("dfs.namenode.fs-limits.min-block-size", "0");
        conf.set("ipc.client.connect.max.retries.on.timeouts", "0");
        // Every web server on a free loopback port; the cluster tells where.
        for key in [
            tusk_namenode::options::HTTP_ADDRESS_KEY,
            tusk_datanode::options::HTTP_ADDRESS_KEY,
            tusk_resourcemanager::options::HTTP_ADDRESS_KEY,
            tusk_nodemanager::options::HTTP_ADDRESS_KEY,
        ] {
            conf.set(key, "127.0.0.1:0");
        }
        // As Hadoop's MiniDFSCluster: a restarted NameNode leaves start-up safe mode as
        // soon as its blocks are reported.
        conf.set("dfs.namenode.safemode.extension", "0");
        MiniClusterBuilder {
            datanodes: 3,
            nodemanagers: None,
            conf,
            base_dir: None,
        }
    }

    /// The ResourceManager and NodeManagers. Panics unless the cluster was built with
    /// [`MiniClusterBuilder::nodemanagers`].
    pub fn yarn(&self) -> &MiniYarn {
        self.yarn
            .as_ref()
            .expect("the minicluster was built without .nodemanagers(n)")
    }

    pub fn yarn_mut(&mut self) -> &mut MiniYarn {
        self.yarn
            .as_mut()
            .expect("the minicluster was built without .nodemanagers(n)")
    }

    pub fn conf(&self) -> &Configuration {
        &self.conf
    }

    pub fn base_dir(&self) -> &Path {
        &self.base
    }

    pub fn namenode_addr(&self) -> String {
        self.namenode_addr.to_string()
    }

    /// The NameNode's web server (`dfs.namenode.http-address`): WebHDFS at
    /// `http://{addr}/webhdfs/v1/...`.
    pub fn namenode_http_addr(&self) -> SocketAddr {
        self.namenode_http_addr
    }

    /// DataNode `i`'s web server (`dfs.datanode.http.address`, advertised as its
    /// `info_port`).
    /// Where the NameNode serves HTTPS; `None` under `dfs.http.policy=HTTP_ONLY`.
    pub fn namenode_https_addr(&self) -> Option<SocketAddr> {
        self.namenode_https_addr
    }

    pub fn datanode_http_addr(&self, i: usize) -> SocketAddr {
        self.datanodes[i].http_addr
    }

    /// `hdfs://127.0.0.1:PORT`.
    pub fn fs_uri(&self) -> String {
        format!("hdfs://{}", self.namenode_addr)
    }

    /// The configuration a client or node of this cluster uses.
    pub fn client_conf(&self) -> Configuration {
        let mut conf = self.conf.clone();
        conf.set("fs.defaultFS", self.fs_uri());
        conf
    }

    /// A client for this cluster with its configuration.
    pub fn client(&self) -> DfsClient {
        self.client_with(|_| {})
    }

    /// A client with adjusted options.
    pub fn client_with(&self, adjust: impl FnOnce(&mut ClientOptions)) -> DfsClient {
        let mut opts =
            ClientOptions::from_conf(&self.client_conf()).expect("valid client configuration");
        adjust(&mut opts);
        DfsClient::new(opts)
    }

    /// The running NameNode's state, for assertions.
    pub fn namesystem(&self) -> Arc<Namesystem> {
        self.namenode
            .as_ref()
            .expect("namenode running")
            .namesystem
            .clone()
    }

    async fn start_namenode(&mut self) -> Result<(), Error> {
        let mut conf = self.conf.clone();
        // Tests that choose the name directories (several, or on a small file system)
        // set the key themselves.
        if conf.get("dfs.namenode.name.dir").is_none() {
            conf.set(
                "dfs.namenode.name.dir",
                self.base.join("name").display().to_string(),
            );
        }
        if self.namenode_http_addr.port() != 0 {
            conf.set(
                tusk_namenode::options::HTTP_ADDRESS_KEY,
                self.namenode_http_addr.to_string(),
            );
        }
        let options = NameNodeOptions::from_conf(&conf)?;
        if self.namenode_http_addr.port() != 0 {
            // A killed NameNode's web server may hold its port for a moment yet.
            drop(bind(self.namenode_http_addr).await?);
        }
        let runtime = node_runtime("namenode")?;
        let listener = bind(self.namenode_addr).await?;
        self.namenode_addr = listener.local_addr()?;
        let shutdown = Shutdown::new();
        let sd = shutdown.clone();
        let (nn_tx, nn_rx) = tokio::sync::oneshot::channel();
        let wait = runtime.spawn(async move {
            match NameNode::start(options, listener, sd).await {
                Ok(nn) => {
                    let addrs = (nn.http_addr(), nn.https_addr());
                    let _ = nn_tx.send(Ok((nn.namesystem.clone(), addrs)));
                    if let Err(e) = nn.wait().await {
                        tracing::error!(error = %e, "namenode shutdown failed");
                    }
                }
                Err(e) => {
                    let _ = nn_tx.send(Err(e));
                }
            }
        });
        let started = match nn_rx.await {
            Ok(Ok(started)) => Ok(started),
            Ok(Err(e)) => Err(Error::from(e)),
            Err(_) => Err(Error::from("namenode task died")),
        };
        let (namesystem, (http_addr, https_addr)) = match started {
            Ok(started) => started,
            Err(e) => {
                // Not dropped here: this is an async context.
                runtime.shutdown_background();
                return Err(e);
            }
        };
        if let Some(a) = http_addr {
            self.namenode_http_addr = a;
        }
        self.namenode_https_addr = https_addr;
        self.namenode = Some(NameNodeSlot {
            runtime,
            shutdown,
            namesystem,
            wait: Some(wait),
        });
        Ok(())
    }

    /// Stops the NameNode cleanly (checkpoint on the way out).
    pub async fn stop_namenode(&mut self) -> Result<(), Error> {
        if let Some(mut nn) = self.namenode.take() {
            nn.shutdown.trigger();
            if let Some(w) = nn.wait.take() {
                let _ = w.await;
            }
            nn.runtime.shutdown_background();
            // The process would exit here, and the kernel release its storage locks.
            nn.namesystem.name_dirs.unlock();
        }
        Ok(())
    }

    /// Kills the NameNode: its runtime is dropped with work in flight; nothing is
    /// flushed beyond what the edit log had already synced. No shutdown signal: a
    /// clean close would save an image and purge the log (on a blocking thread that
    /// outlives the runtime) while the next NameNode loads the same directories.
    pub fn kill_namenode(&mut self) {
        if let Some(nn) = self.namenode.take() {
            nn.runtime.shutdown_background();
            nn.namesystem.name_dirs.unlock();
        }
    }

    pub async fn restart_namenode(&mut self) -> Result<(), Error> {
        self.stop_namenode().await?;
        self.start_namenode().await?;
        self.wait_for_startup_safe_mode_exit().await
    }

    /// As Hadoop's MiniDFSCluster after a NameNode restart: waits until start-up safe
    /// mode has ended (the running DataNodes have reported enough blocks), so that a
    /// test's next write is not refused with SafeModeException.
    pub async fn wait_for_startup_safe_mode_exit(&self) -> Result<(), Error> {
        if !self.datanodes.iter().any(|d| d.running.is_some()) {
            return Ok(());
        }
        let fsn = self.namesystem();
        wait_for("start-up safe mode to end", Duration::from_secs(60), || {
            let off = !fsn.read().safe_mode.is_on();
            async move { off }
        })
        .await?;
        Ok(())
    }

    /// Starts the NameNode again after a kill or stop.
    pub async fn start_namenode_again(&mut self) -> Result<(), Error> {
        self.start_namenode().await?;
        self.wait_for_startup_safe_mode_exit().await
    }

    /// Adds and starts a DataNode; returns its index.
    pub async fn add_datanode(&mut self) -> Result<usize, Error> {
        let i = self.datanodes.len();
        let dir = self.base.join(format!("data{i}"));
        std::fs::create_dir_all(&dir)?;
        self.datanodes.push(DataNodeSlot {
            dir,
            addr: "127.0.0.1:0".parse().expect("addr"),
            http_addr: "127.0.0.1:0".parse().expect("addr"),
            running: None,
        });
        self.start_datanode(i).await?;
        Ok(i)
    }

    pub async fn start_datanode(&mut self, i: usize) -> Result<(), Error> {
        let mut conf = self.client_conf();
        conf.set(
            "dfs.datanode.data.dir",
            self.datanodes[i].dir.display().to_string(),
        );
        if self.datanodes[i].http_addr.port() != 0 {
            conf.set(
                tusk_datanode::options::HTTP_ADDRESS_KEY,
                self.datanodes[i].http_addr.to_string(),
            );
        }
        let options = DataNodeOptions::from_conf(&conf)?;
        let runtime = node_runtime(&format!("datanode-{i}"))?;
        let listener = bind(self.datanodes[i].addr).await?;
        self.datanodes[i].addr = listener.local_addr()?;
        let ipc_listener = bind("127.0.0.1:0".parse().expect("addr")).await?;
        let shutdown = Shutdown::new();
        let sd = shutdown.clone();
        let sd_wait = shutdown.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<DataNodeHooks, String>>();
        let wait = runtime.spawn(async move {
            match DataNode::start_with_ipc(options, listener, Some(ipc_listener), sd).await {
                Ok(handle) => {
                    let handle = Arc::new(handle);
                    let (paths, pause) = (handle.clone(), handle.clone());
                    let (keys, sasl) = (handle.clone(), handle.clone());
                    let storage = handle.clone();
                    let layers = handle.clone();
                    let _ = tx.send(Ok(DataNodeHooks {
                        uuid: handle.uuid().to_string(),
                        http_addr: handle.http_addr(),
                        replica_paths: Arc::new(move |b| paths.replica_path(b)),
                        pause_heartbeats: Arc::new(move |p| pause.pause_heartbeats(p)),
                        block_key_ids: Arc::new(move || keys.block_key_ids()),
                        sasl_handshakes: Arc::new(move || sasl.sasl_handshakes()),
                        sasl_layers: Arc::new(move || {
                            (layers.sasl_wrapped(), layers.sasl_refused())
                        }),
                        release_storage: Arc::new(move || storage.release_storage()),
                    }));
                    wait_handle(handle, sd_wait).await;
                }
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                }
            }
        });
        let hooks = rx.await.map_err(|_| "datanode task died")??;
        if let Some(a) = hooks.http_addr {
            self.datanodes[i].http_addr = a;
        }
        self.datanodes[i].running = Some(RunningDataNode {
            runtime,
            shutdown,
            wait,
            hooks,
        });
        Ok(())
    }

    /// Stops DataNode `i` cleanly.
    pub async fn stop_datanode(&mut self, i: usize) {
        if let Some(dn) = self.datanodes[i].running.take() {
            dn.shutdown.trigger();
            let _ = tokio::time::timeout(Duration::from_secs(10), dn.wait).await;
            dn.runtime.shutdown_background();
            // The process would exit here, and the kernel release its volumes' locks.
            (dn.hooks.release_storage)();
        }
    }

    /// Kills DataNode `i` at once: connections drop mid-stream, nothing more is sent.
    pub fn kill_datanode(&mut self, i: usize) {
        if let Some(dn) = self.datanodes[i].running.take() {
            dn.runtime.shutdown_background();
            (dn.hooks.release_storage)();
        }
    }

    pub async fn restart_datanode(&mut self, i: usize) -> Result<(), Error> {
        self.stop_datanode(i).await;
        self.start_datanode(i).await
    }

    pub fn datanode_count(&self) -> usize {
        self.datanodes.len()
    }

    pub fn datanode_uuid(&self, i: usize) -> Option<&str> {
        self.datanodes[i]
            .running
            .as_ref()
            .map(|d| d.hooks.uuid.as_str())
    }

    /// Fault injection: DataNode `i` stops (`true`) or resumes talking to the NameNode
    /// while its data port keeps serving, as a node cut off from the NameNode only.
    pub fn pause_heartbeats(&self, i: usize, paused: bool) {
        if let Some(d) = &self.datanodes[i].running {
            (d.hooks.pause_heartbeats)(paused);
        }
    }

    /// Ids of the block keys DataNode `i` holds (empty while tokens are off or it is down).
    pub fn datanode_block_key_ids(&self, i: usize) -> Vec<i32> {
        self.datanodes[i]
            .running
            .as_ref()
            .map(|d| (d.hooks.block_key_ids)())
            .unwrap_or_default()
    }

    /// SASL handshakes clients completed with DataNode `i` since it started.
    pub fn datanode_sasl_handshakes(&self, i: usize) -> u64 {
        self.datanodes[i]
            .running
            .as_ref()
            .map_or(0, |d| (d.hooks.sasl_handshakes)())
    }

    /// Of DataNode `i`'s SASL handshakes, those that negotiated integrity or privacy.
    pub fn datanode_sasl_wrapped(&self, i: usize) -> u64 {
        self.datanodes[i]
            .running
            .as_ref()
            .map_or(0, |d| (d.hooks.sasl_layers)().0)
    }

    /// Connections DataNode `i` refused for skipping the handshake its
    /// `dfs.data.transfer.protection` requires.
    pub fn datanode_sasl_refused(&self, i: usize) -> u64 {
        self.datanodes[i]
            .running
            .as_ref()
            .map_or(0, |d| (d.hooks.sasl_layers)().1)
    }

    pub fn datanode_addr(&self, i: usize) -> SocketAddr {
        self.datanodes[i].addr
    }

    /// Index of the DataNode with this UUID.
    pub fn datanode_index(&self, uuid: &str) -> Option<usize> {
        self.datanodes
            .iter()
            .position(|d| d.running.as_ref().is_some_and(|r| r.hooks.uuid == uuid))
    }

    /// Path of DataNode `i`'s finalized replica of `block`.
    pub fn replica_path(&self, i: usize, block: u64) -> Option<PathBuf> {
        self.datanodes[i]
            .running
            .as_ref()
            .and_then(|d| (d.hooks.replica_paths)(block))
    }

    /// Waits until the NameNode counts `n` live DataNodes.
    pub async fn wait_live_datanodes(&self, n: usize, timeout: Duration) -> Result<(), Error> {
        let fsn = self.namesystem();
        wait_for(&format!("{n} live datanodes"), timeout, || {
            let fsn = fsn.clone();
            async move { fsn.read().datanodes.live_count() >= n }
        })
        .await?;
        Ok(())
    }

    /// Stops everything.
    pub async fn shutdown(mut self) {
        for i in 0..self.datanodes.len() {
            self.stop_datanode(i).await;
        }
        let _ = self.stop_namenode().await;
    }
}

impl Drop for MiniCluster {
    fn drop(&mut self) {
        // YARN first: its nodes stop before the base directory goes.
        drop(self.yarn.take());
        for d in &mut self.datanodes {
            if let Some(dn) = d.running.take() {
                dn.runtime.shutdown_background();
            }
        }
        if let Some(nn) = self.namenode.take() {
            nn.shutdown.trigger();
            nn.namesystem.edit_log.close();
            nn.runtime.shutdown_background();
        }
    }
}

/// Waits for the shutdown signal; the node's own tasks stop on it, and whatever is left
/// ends with the node's runtime.
async fn wait_handle(handle: Arc<DataNodeHandle>, shutdown: Shutdown) {
    shutdown.wait().await;
    if let Ok(h) = Arc::try_unwrap(handle) {
        h.wait().await;
    }
}

/// `len` pseudo-random bytes from `seed` (xorshift), the same on every run: file
/// contents for tests that must notice a misplaced or corrupted byte.
pub fn test_data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
