//! What the experiments run and how they watch it: the clusters under test (in-process,
//! processes, testbeds, Hadoop's own daemons), Hadoop's jobs and their history, the
//! files written and read, processes' CPU and memory, sockets, and the run's context.
//!
//! - `target`: the cluster under test (mini cluster or external) and its clients.
//! - `process_cluster`: a `tusk local up` cluster of processes and `tusk job run`.
//! - `testbed_cluster`: a `tusk testbed` for a benchmark, YARN restartable with other settings.
//! - `hadoop`: real Hadoop 3.4.2 (the anchor's runners) in the same run, for `--vs-hadoop`.
//! - `hadoop_cluster`: Hadoop 3.4.2's own HDFS and YARN daemons as processes on loopback.
//! - `hadoop_jobs`: Hadoop's job client (`RunJar`) against a platform's configuration.
//! - `hadoop_history`: Hadoop's job history (`.jhist`): a job's and its attempts' times.
//! - `file_io`: timed write and verified read of one benchmark file.
//! - `pattern`: cheap deterministic file contents.
//! - `stop`: ending a study early (SIGINT, SIGTERM) with the rounds it finished.
//! - `context`: where, when and how a run happened.
//! - `process`: a process's CPU time (ticks or schedstat) and resident set, from `/proc`.
//! - `host_cpu`: the host's busy CPU share between two reads of `/proc/stat`.
//! - `sockets`: the established TCP sockets of a namespace, as `ss` lists them.
//! - `master_cost`: what the masters receive from heartbeat senders, and their CPU.
//! - `node_status`: the NodeManagers' status as the ResourceManager reports it, polled.

pub mod context;
pub mod file_io;
pub mod hadoop;
pub mod hadoop_cluster;
pub mod hadoop_history;
pub mod hadoop_jobs;
pub mod host_cpu;
pub mod master_cost;
pub mod node_status;
pub mod pattern;
pub mod process;
pub mod process_cluster;
pub mod sockets;
pub mod stop;
pub mod target;
pub mod testbed_cluster;
