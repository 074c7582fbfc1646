//! The walk and the text of an fsck report (Hadoop's `NamenodeFsck` layout), over any
//! [`FsckSource`].

use std::collections::BTreeSet;
use std::fmt::Display;
use std::io::Write;

use tusk_common::calendar::java_date;
use tusk_proto::hdfs::{
    datanode_info_proto::AdminState, CorruptFileBlocksProto, DatanodeInfoProto, LocatedBlockProto,
    LocatedBlocksProto,
};

/// One namespace entry as the walk needs it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The child's name in a listing; ignored for the walk's root.
    pub name: String,
    pub is_dir: bool,
    pub length: u64,
    pub replication: u16,
}

/// What the walk reads, as the user the report runs for: the NameNode in process
/// (`/fsck`) or over RPC. Every call is permission-checked by the NameNode.
// The report runs on one task; no caller needs the futures to be `Send`.
#[allow(async_fn_in_trait)]
pub trait FsckSource {
    type Error: From<std::io::Error> + Display;
    async fn file_info(&self, path: &str) -> Result<Option<Entry>, Self::Error>;
    /// Every entry of the directory `path` (all batches).
    async fn listing(&self, path: &str) -> Result<Vec<Entry>, Self::Error>;
    /// `None` when the file is gone meanwhile.
    async fn block_locations(
        &self,
        path: &str,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>, Self::Error>;
    async fn live_datanodes(&self) -> Result<Vec<DatanodeInfoProto>, Self::Error>;
    async fn corrupt_file_blocks(
        &self,
        path: &str,
        cookie: Option<String>,
    ) -> Result<CorruptFileBlocksProto, Self::Error>;
}

/// What `tusk fsck` was asked to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsckOptions {
    pub path: String,
    pub files: bool,
    pub blocks: bool,
    pub locations: bool,
    pub racks: bool,
    pub open_for_write: bool,
    pub list_corrupt_file_blocks: bool,
}

impl FsckOptions {
    pub fn parse(args: &[String]) -> Option<Self> {
        let mut o = FsckOptions::default();
        let mut path = None;
        for a in args {
            match a.as_str() {
                "-files" => o.files = true,
                "-blocks" => o.blocks = true,
                "-locations" => o.locations = true,
                "-racks" => o.racks = true,
                "-openforwrite" => o.open_for_write = true,
                "-list-corruptfileblocks" => o.list_corrupt_file_blocks = true,
                p if !p.starts_with('-') && path.is_none() => path = Some(p.to_string()),
                _ => return None,
            }
        }
        o.path = path?;
        Some(o)
    }
}

/// The last line's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Healthy,
    Corrupt,
    Missing,
}

impl Verdict {
    /// DFSck's exit codes.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Healthy | Verdict::Missing => 0,
            Verdict::Corrupt => 1,
        }
    }
}

/// Hadoop's `Result` counters for replicated blocks.
#[derive(Clone, Debug, Default)]
pub struct FsckReport {
    total_size: u64,
    total_files: u64,
    total_blocks: u64,
    open_files: u64,
    open_files_size: u64,
    open_files_blocks: u64,
    total_dirs: u64,
    corrupt_files: u64,
    missing_blocks: u64,
    missing_size: u64,
    corrupt_blocks: u64,
    corrupt_size: u64,
    under_min_replicated: u64,
    min_replicated: u64,
    over_replicated: u64,
    under_replicated: u64,
    total_replicas: u64,
    expected_replicas: u64,
    missing_replicas: u64,
    decommissioned_replicas: u64,
    decommissioning_replicas: u64,
}

impl FsckReport {
    fn healthy(&self) -> bool {
        self.missing_blocks == 0 && self.corrupt_blocks == 0
    }

    fn pct(&self, n: u64) -> String {
        if self.total_blocks == 0 {
            return String::new();
        }
        format!(
            " ({} %)",
            java_float(n as f32 * 100.0 / self.total_blocks as f32)
        )
    }

    fn summary(&self, default_replication: u64, min_replication: u64) -> String {
        let mut s = format!(" Total size:\t{} B", self.total_size);
        if self.open_files_size != 0 {
            s += &format!(" (Total open files size: {} B)", self.open_files_size);
        }
        s += &format!("\n Total files:\t{}", self.total_files);
        if self.open_files != 0 {
            s += &format!(" (Files currently being written: {})", self.open_files);
        }
        s += &format!("\n Total blocks (validated):\t{}", self.total_blocks);
        if let Some(avg) = self.total_size.checked_div(self.total_blocks) {
            s += &format!(" (avg. block size {avg} B)");
        }
        if self.open_files_blocks != 0 {
            s += &format!(
                " (Total open file blocks (not validated): {})",
                self.open_files_blocks
            );
        }
        if self.corrupt_files > 0 || self.under_min_replicated > 0 {
            s += "\n  ********************************";
            if self.under_min_replicated > 0 {
                s += &format!(
                    "\n  UNDER MIN REPL'D BLOCKS:\t{}{}",
                    self.under_min_replicated,
                    self.pct(self.under_min_replicated)
                );
                s += &format!("\n  dfs.namenode.replication.min:\t{min_replication}");
            }
            if self.corrupt_files > 0 {
                s += &format!("\n  CORRUPT FILES:\t{}", self.corrupt_files);
                if self.missing_size > 0 {
                    s += &format!("\n  MISSING BLOCKS:\t{}", self.missing_blocks);
                    s += &format!("\n  MISSING SIZE:\t\t{} B", self.missing_size);
                }
                if self.corrupt_blocks > 0 {
                    s += &format!("\n  CORRUPT BLOCKS: \t{}", self.corrupt_blocks);
                    s += &format!("\n  CORRUPT SIZE:\t\t{} B", self.corrupt_size);
                }
            }
            s += "\n  ********************************";
        }
        s += &format!(
            "\n Minimally replicated blocks:\t{}{}",
            self.min_replicated,
            self.pct(self.min_replicated)
        );
        s += &format!(
            "\n Over-replicated blocks:\t{}{}",
            self.over_replicated,
            self.pct(self.over_replicated)
        );
        s += &format!(
            "\n Under-replicated blocks:\t{}{}",
            self.under_replicated,
            self.pct(self.under_replicated)
        );
        // Tusk's placement never leaves a block on too few racks for long enough to
        // count it here; HDFS's check is against its placement policy.
        s += &format!("\n Mis-replicated blocks:\t\t0{}", self.pct(0));
        s += &format!("\n Default replication factor:\t{default_replication}");
        let average = if self.total_blocks == 0 {
            0.0
        } else {
            self.total_replicas as f32 / self.total_blocks as f32
        };
        s += &format!("\n Average block replication:\t{}", java_float(average));
        s += &format!("\n Missing blocks:\t\t{}", self.missing_blocks);
        s += &format!("\n Corrupt blocks:\t\t{}", self.corrupt_blocks);
        s += &format!("\n Missing replicas:\t\t{}", self.missing_replicas);
        if self.total_replicas > 0 {
            let pct = self.missing_replicas as f32 * 100.0 / self.expected_replicas as f32;
            s += &format!(" ({} %)", java_float(pct));
        }
        if self.decommissioned_replicas > 0 {
            s += &format!(
                "\n DecommissionedReplicas:\t{}",
                self.decommissioned_replicas
            );
        }
        if self.decommissioning_replicas > 0 {
            s += &format!(
                "\n DecommissioningReplicas:\t{}",
                self.decommissioning_replicas
            );
        }
        s
    }
}

/// Java's `Float.toString` for the values fsck prints: at least one decimal.
fn java_float(v: f32) -> String {
    if v.fract() == 0.0 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// The erasure-coded section: Tusk has no erasure coding, so it is all zeros.
const EC_SUMMARY: &str = " Total size:\t0 B
 Total files:\t0
 Total block groups (validated):\t0
 Minimally erasure-coded block groups:\t0
 Over-erasure-coded block groups:\t0
 Under-erasure-coded block groups:\t0
 Unsatisfactory placement block groups:\t0
 Average block group size:\t0.0
 Missing block groups:\t\t0
 Corrupt block groups:\t\t0
 Missing internal blocks:\t0";

struct Walk<'a, S: FsckSource, W: Write> {
    client: &'a S,
    options: &'a FsckOptions,
    out: &'a mut W,
    report: FsckReport,
}

/// Writes the report for `options` to `out`, as `user`; returns its verdict.
pub async fn run<S: FsckSource, W: Write>(
    client: &S,
    user: &str,
    options: &FsckOptions,
    default_replication: u64,
    out: &mut W,
) -> Result<Verdict, S::Error> {
    let path = options.path.clone();
    if options.list_corrupt_file_blocks {
        return list_corrupt_file_blocks(client, &path, out).await;
    }
    writeln!(
        out,
        "FSCK started by {user} (auth:SIMPLE) for path {path} at {}",
        java_date(tusk_common::now_millis())
    )?;
    let Some(root) = client.file_info(&path).await? else {
        write!(out, "\n\nPath '{path}' does not exist\n")?;
        return Ok(Verdict::Missing);
    };
    let started = std::time::Instant::now();
    let mut walk = Walk {
        client,
        options,
        out,
        report: FsckReport::default(),
    };
    if root.is_dir {
        walk.dir(&path).await?;
    } else {
        walk.file(&path, root.length, root.replication).await?;
    }
    let live = client.live_datanodes().await?;
    let racks: BTreeSet<&str> = live
        .iter()
        .map(|d| d.location.as_deref().unwrap_or("/default-rack"))
        .collect();
    let report = walk.report;
    let out = walk.out;
    let healthy = report.healthy();
    write!(out, "\nStatus: ")?;
    writeln!(out, "{}", if healthy { "HEALTHY" } else { "CORRUPT" })?;
    writeln!(out, " Number of data-nodes:\t{}", live.len())?;
    writeln!(out, " Number of racks:\t\t{}", racks.len())?;
    writeln!(out, " Total dirs:\t\t\t{}", report.total_dirs)?;
    writeln!(out, " Total symlinks:\t\t0")?;
    writeln!(out, "\nReplicated Blocks:")?;
    writeln!(out, "{}", report.summary(default_replication, 1))?;
    writeln!(out, "\nErasure Coded Block Groups:")?;
    writeln!(out, "{EC_SUMMARY}")?;
    writeln!(
        out,
        "FSCK ended at {} in {} milliseconds",
        java_date(tusk_common::now_millis()),
        started.elapsed().as_millis()
    )?;
    let (word, verdict) = if healthy {
        ("HEALTHY", Verdict::Healthy)
    } else {
        ("CORRUPT", Verdict::Corrupt)
    };
    writeln!(out, "\n\nThe filesystem under path '{path}' is {word}")?;
    Ok(verdict)
}

impl<S: FsckSource, W: Write> Walk<'_, S, W> {
    async fn dir(&mut self, path: &str) -> Result<(), S::Error> {
        if self.options.files {
            writeln!(self.out, "{path} <dir>")?;
        }
        self.report.total_dirs += 1;
        let entries = self.client.listing(path).await?;
        for e in entries {
            let child = format!("{}/{}", path.trim_end_matches('/'), e.name);
            if e.is_dir {
                Box::pin(self.dir(&child)).await?;
            } else {
                self.file(&child, e.length, e.replication).await?;
            }
        }
        Ok(())
    }

    async fn file(&mut self, path: &str, length: u64, replication: u16) -> Result<(), S::Error> {
        let Some(located) = self.client.block_locations(path, length.max(1)).await? else {
            return Ok(()); // deleted meanwhile
        };
        let count = located.blocks.len() as u64;
        let r = &mut self.report;
        if located.under_construction && !self.options.open_for_write {
            r.open_files += 1;
            r.open_files_size += length;
            r.open_files_blocks += count;
            return Ok(());
        }
        r.total_files += 1;
        r.total_size += length;
        r.total_blocks += count;
        let policy = format!("replicated: replication={replication},");
        if located.under_construction {
            write!(
                self.out,
                "{path} {length} bytes, {policy} {count} block(s), OPENFORWRITE: "
            )?;
        } else if self.options.files {
            write!(
                self.out,
                "{path} {length} bytes, {policy} {count} block(s): "
            )?;
        }
        self.blocks(path, &located, replication as u64)
    }

    fn blocks(
        &mut self,
        path: &str,
        located: &LocatedBlocksProto,
        target: u64,
    ) -> Result<(), S::Error> {
        let (mut missing, mut corrupt, mut missing_size, mut corrupt_size) = (0, 0, 0, 0);
        let mut under = 0;
        let mut lines = String::new();
        let last_open = located.under_construction && !located.is_last_block_complete;
        for (i, b) in located.blocks.iter().enumerate() {
            if last_open && i + 1 == located.blocks.len() {
                continue;
            }
            let bytes = b.b.num_bytes.unwrap_or(0);
            let count =
                |s: AdminState| b.locs.iter().filter(|l| l.admin_state() == s).count() as u64;
            let decommissioned = count(AdminState::Decommissioned);
            let decommissioning = count(AdminState::DecommissionInprogress);
            let r = &mut self.report;
            r.decommissioned_replicas += decommissioned;
            r.decommissioning_replicas += decommissioning;
            let total = if b.corrupt { 0 } else { b.locs.len() as u64 };
            let live = total.saturating_sub(decommissioned + decommissioning);
            r.total_replicas += total;
            r.expected_replicas += target;
            if total < 1 {
                r.under_min_replicated += 1;
            } else {
                r.min_replicated += 1;
            }
            if live > target {
                r.over_replicated += 1;
            }
            let name = block_name(b);
            if b.corrupt {
                r.corrupt_blocks += 1;
                r.corrupt_size += bytes;
                corrupt += 1;
                corrupt_size += bytes;
                write!(
                    self.out,
                    "\n{path}: CORRUPT blockpool {} block blk_{}\n",
                    b.b.pool_id, b.b.block_id
                )?;
            }
            let is_missing = total == 0;
            if total < target && !is_missing {
                r.missing_replicas += target - total;
                r.under_replicated += 1;
                under += 1;
                if !self.options.files {
                    write!(self.out, "\n{path}: ")?;
                }
                writeln!(
                    self.out,
                    " Under replicated {name}. Target Replicas is {target} but found {live} live replica(s), {decommissioned} decommissioned replica(s), {decommissioning} decommissioning replica(s)."
                )?;
            }
            lines += &format!("{i}. {name} len={bytes}");
            if is_missing && !b.corrupt {
                lines += " MISSING!";
                self.report.missing_blocks += 1;
                self.report.missing_size += bytes;
                missing += 1;
                missing_size += bytes;
            } else {
                lines += &format!(" Live_repl={live}");
                if self.options.locations || self.options.racks {
                    lines += &format!(" [{}]", self.replica_list(b));
                }
            }
            lines.push('\n');
        }
        if missing > 0 || corrupt > 0 {
            self.report.corrupt_files += 1;
            if !self.options.files {
                if missing > 0 {
                    write!(
                        self.out,
                        "\n{path}: MISSING {missing} blocks of total size {missing_size} B."
                    )?;
                }
                if corrupt > 0 {
                    write!(
                        self.out,
                        "\n{path}: CORRUPT {corrupt} blocks of total size {corrupt_size} B."
                    )?;
                }
            }
        }
        if self.options.files {
            if missing > 0 || corrupt > 0 {
                if missing > 0 {
                    writeln!(
                        self.out,
                        " MISSING {missing} blocks of total size {missing_size} B"
                    )?;
                }
                if corrupt > 0 {
                    writeln!(
                        self.out,
                        " CORRUPT {corrupt} blocks of total size {corrupt_size} B"
                    )?;
                }
            } else if under == 0 {
                writeln!(self.out, " OK")?;
            }
            if self.options.blocks {
                writeln!(self.out, "{lines}")?;
            }
        }
        Ok(())
    }

    /// `DatanodeInfoWithStorage[ip:port,storage,DISK]` per replica, or its rack.
    fn replica_list(&self, b: &LocatedBlockProto) -> String {
        b.locs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if self.options.racks {
                    let rack = l.location.as_deref().unwrap_or("/default-rack");
                    return format!("{rack}/{}:{}", l.id.ip_addr, l.id.xfer_port);
                }
                let storage = b.storage_i_ds.get(i).map_or("", String::as_str);
                format!(
                    "DatanodeInfoWithStorage[{}:{},{storage},DISK]",
                    l.id.ip_addr, l.id.xfer_port
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `BP-...:blk_<id>_<generation stamp>` (Hadoop's `ExtendedBlock.toString`).
fn block_name(b: &LocatedBlockProto) -> String {
    format!(
        "{}:blk_{}_{}",
        b.b.pool_id, b.b.block_id, b.b.generation_stamp
    )
}

/// `-list-corruptfileblocks`: `blk_<id>\t<path>` for every block of the files the
/// NameNode lists as corrupt, as Hadoop 3.4's DFSck prints the `/fsck` pages.
async fn list_corrupt_file_blocks<S: FsckSource, W: Write>(
    client: &S,
    path: &str,
    out: &mut W,
) -> Result<Verdict, S::Error> {
    let mut cookie = None;
    let mut lines = Vec::new();
    let mut seen = BTreeSet::new();
    loop {
        let batch = client.corrupt_file_blocks(path, cookie.clone()).await?;
        if batch.files.is_empty() {
            break;
        }
        for file in batch.files {
            if !seen.insert(file.clone()) {
                continue;
            }
            let Some(located) = client.block_locations(&file, u64::MAX).await? else {
                continue;
            };
            for b in located
                .blocks
                .iter()
                .filter(|b| b.corrupt || b.locs.is_empty())
            {
                lines.push(format!("blk_{}\t{file}", b.b.block_id));
            }
        }
        cookie = Some(batch.cookie);
    }
    // DFSck's own lines (Hadoop 3.4): the list, then the count on the last line.
    if !lines.is_empty() {
        writeln!(out, "The list of corrupt blocks under path '{path}' are:")?;
        for l in &lines {
            writeln!(out, "{l}")?;
        }
    }
    writeln!(
        out,
        "The filesystem under path '{path}' has {} CORRUPT blocks",
        lines.len()
    )?;
    Ok(Verdict::Healthy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_numbers_as_hadoop_reads_and_prints_them() {
        let args: Vec<String> = ["/d", "-files", "-blocks", "-locations"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = FsckOptions::parse(&args).unwrap();
        assert!(o.files && o.blocks && o.locations && !o.racks);
        assert_eq!(o.path, "/d");
        assert!(FsckOptions::parse(&["-files".to_string()]).is_none());
        assert_eq!(java_float(100.0), "100.0");
        assert_eq!(java_float(33.333332), "33.333332");
    }
}
