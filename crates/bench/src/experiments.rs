//! The experiments, one file each: its options (`XxxOptions`, which derive the flags),
//! its plan (what runs, in which order, which figures), its run and its report type.
//! Clusters, processes and Hadoop come from [`crate::measure`]; statistics, tables and
//! charts from [`crate::report`].
//!
//! - `dfsio`: TestDFSIO: N files written at once, then read at once.
//! - `replication`: one file per size, pipeline vs parallel vs adaptive, trials interleaved.
//! - `replication_links`: the replication modes on testbeds of each link class, client inside.
//! - `short_circuit`: short-circuit local reads against reads through the DataNode.
//! - `startup`: nothing → one NameNode and N DataNodes serving a first write.
//! - `nnthroughput`: namespace calls sync / async / N threads (Async HDFS, Table 1).
//! - `job_latency`: a tiny WordCount on YARN per timing mode, with the heartbeat model.
//! - `terasort`: TeraGen / TeraSort / TeraValidate timed, in-process or on YARN.
//! - `same_jar`: Hadoop's examples jar on Tusk's YARN + DFS and on Hadoop's, interleaved.
//! - `scheduling`: concurrent sort jobs on a testbed per status-aware policy (Tables 7–9).
//! - `scheduling_sim`: the scheduling study on the ResourceManager's scheduler simulator.
//! - `faults`: each fault in turn under a mixed load, then a check for lost writes.
//! - `faults/`: the fault suite's cluster, load, attacks and testbed placement.
//! - `ha_failover`: kill -9 of the active NameNode under three clients' writes, N times.
//! - `ha_failover/`: the kills' timeline figures and the three writers.
//! - `interconnects`: Sort, WordCount, TeraSort per link class × HDD/SSD, Tusk and Hadoop.
//! - `heartbeat_sweep`: the heartbeat study's six period cases: DFSIO and TeraSort on YARN.
//! - `heartbeats`: simulated DataNodes against a NameNode process.
//! - `advisor`: the shortest safe DataNode heartbeat period.
//! - `am_heartbeats`: N simulated Hadoop AMs against a ResourceManager process.

pub mod advisor;
pub mod am_heartbeats;
pub mod dfsio;
pub mod faults;
pub mod ha_failover;
pub mod heartbeat_sweep;
pub mod heartbeats;
pub mod interconnects;
pub mod job_latency;
pub mod nnthroughput;
pub mod replication;
pub mod replication_links;
pub mod same_jar;
pub mod scheduling;
pub mod scheduling_sim;
pub mod short_circuit;
pub mod startup;
pub mod terasort;
