//! `metaSave` (superuser): the block map's state written to a file in the log directory.

use std::io::Write;
use std::path::PathBuf;

use crate::datanodes::AdminState;
use crate::error::Result;
use crate::namesystem::Namesystem;

impl Namesystem {
    /// `metaSave`: HDFS's summary of its block and DataNode state, written to
    /// `filename` in the NameNode's log directory ([`log_dir`]).
    pub fn meta_save(&self, user: &str, filename: &str) -> Result<PathBuf> {
        self.require_superuser(user)?;
        let path = log_dir(&self.options.conf.0).join(filename);
        let text = self.meta_save_text();
        let mut file = std::fs::File::create(&path)?;
        file.write_all(text.as_bytes())?;
        tracing::info!(file = %path.display(), %user, "metasave written");
        Ok(path)
    }

    fn meta_save_text(&self) -> String {
        let st = self.read();
        let (files, dirs, _, _) = st.ns.count(crate::namespace::ROOT_ID, |_| 0);
        let blocks = st.blocks.blocks.len() as u64;
        let health = st.block_health();
        let nodes = &st.datanodes.nodes;
        let live = nodes.iter().filter(|d| d.alive).count();
        let waiting_deletion: usize = nodes
            .iter()
            .map(|d| d.invalidate.len() + d.invalidate_stale.len())
            .sum();
        let deleting_nodes = nodes
            .iter()
            .filter(|d| !d.invalidate.is_empty() || !d.invalidate_stale.is_empty())
            .count();
        let mut s = format!(
            "{} files and directories, {blocks} blocks = {} total filesystem objects\n",
            files + dirs,
            files + dirs + blocks
        );
        s += &format!(
            "Live Datanodes: {live}\nDead Datanodes: {}\n",
            nodes.len() - live
        );
        s += &format!(
            "Metasave: Blocks waiting for reconstruction: {}\n",
            health.low_redundancy + health.missing
        );
        s += "Mis-replicated blocks that have been postponed:\n";
        s += "Metasave: Blocks being reconstructed: 0\n";
        s += &format!(
            "Metasave: Blocks {waiting_deletion} waiting deletion from {deleting_nodes} datanodes.\n"
        );
        s += "Corrupt Blocks:\n";
        let mut corrupt: Vec<u64> = st.blocks.corrupt.keys().copied().collect();
        corrupt.sort_unstable();
        for id in corrupt {
            s += &format!("Block=blk_{id}\n");
        }
        s += &format!("Metasave: Number of datanodes: {}\n", nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            let d = st.datanodes.info_proto(i);
            let state = match node.admin {
                AdminState::DecommissionInProgress => "DP",
                AdminState::Decommissioned => "DD",
                _ => "IN",
            };
            let (c, u, r) = (
                d.capacity.unwrap_or(0),
                d.dfs_used.unwrap_or(0),
                d.remaining.unwrap_or(0),
            );
            let pct = |n: u64| {
                if c == 0 {
                    0.0
                } else {
                    n as f64 * 100.0 / c as f64
                }
            };
            s += &format!(
                "{}:{} {state} {c} {u} {:.2}% {r} {:.2}% {}\n",
                d.id.ip_addr,
                d.id.xfer_port,
                pct(u),
                pct(r),
                tusk_common::calendar::java_date(d.last_update.unwrap_or(0)),
            );
        }
        s
    }
}

/// Where HDFS's NameNode writes metasave files: `hadoop.log.dir`, else
/// `$HADOOP_LOG_DIR`, else the directory of the file its output goes to (as `tusk
/// local up` starts it), else its working directory.
pub fn log_dir(conf: &tusk_common::Configuration) -> PathBuf {
    if let Some(dir) = conf.get("hadoop.log.dir").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("HADOOP_LOG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let stdout = std::fs::read_link("/proc/self/fd/1").ok();
    if let Some(dir) = stdout
        .filter(|p| p.is_file())
        .and_then(|p| p.parent().map(PathBuf::from))
    {
        return dir;
    }
    PathBuf::from(".")
}
