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
    /// The storage policy id the NameNode reports (0: unspecified, HOT).
    pub storage_policy: u32,
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
    /// The snapshottable directories the user may see (`-includeSnapshots`).
    async fn snapshottable_dirs(&self) -> Result<Vec<String>, Self::Error>;
    /// The file a block belongs to (`-blockId`), `None` when no file has it.
    async fn block_owner(&self, block_id: u64) -> Result<Option<String>, Self::Error>;
    /// `-delete`: removes a corrupt file.
    async fn delete(&self, path: &str) -> Result<bool, Self::Error>;
    /// `-move`: moves a corrupt file under `/lost+found`, keeping its path there.
    async fn move_to_lost_found(&self, path: &str) -> Result<(), Self::Error>;
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
    /// `-replicaDetails`: each replica's state after its location.
    pub replica_details: bool,
    /// `-upgradedomains`: each replica's upgrade domain (Tusk assigns none).
    pub upgrade_domains: bool,
    /// `-includeSnapshots`: also walks `.snapshot` of snapshottable directories.
    pub include_snapshots: bool,
    /// `-storagepolicies`: the summary of blocks by storage policy.
    pub storage_policies: bool,
    /// `-blockId blk_N...`: a report of each block instead of the walk.
    pub block_ids: Vec<String>,
    /// `-maintenance`: maintenance states too (Tusk has none to show).
    pub maintenance: bool,
    /// `-showprogress`: an empty line every 100 files.
    pub show_progress: bool,
    /// `-move`: corrupt files go to `/lost+found`.
    pub move_corrupt: bool,
    /// `-delete`: corrupt files are deleted.
    pub delete_corrupt: bool,
}

impl FsckOptions {
    pub fn parse(args: &[String]) -> Option<Self> {
        let mut o = FsckOptions::default();
        let mut path = None;
        let mut it = args.iter().peekable();
        while let Some(a) = it.next() {
            match a.as_str() {
                "-files" => o.files = true,
                "-blocks" => o.blocks = true,
                "-locations" => o.locations = true,
                "-racks" => o.racks = true,
                "-openforwrite" => o.open_for_write = true,
                "-list-corruptfileblocks" => o.list_corrupt_file_blocks = true,
                "-replicaDetails" => o.replica_details = true,
                "-upgradedomains" => o.upgrade_domains = true,
                "-includeSnapshots" => o.include_snapshots = true,
                "-storagepolicies" => o.storage_policies = true,
                "-maintenance" => o.maintenance = true,
                "-showprogress" => o.show_progress = true,
                "-move" => o.move_corrupt = true,
                "-delete" => o.delete_corrupt = true,
                // As DFSck: every following argument up to the next option.
                "-blockId" => {
                    while let Some(b) = it.next_if(|b| !b.starts_with('-')) {
                        o.block_ids.push(b.clone());
                    }
                }
                p if !p.starts_with('-') && path.is_none() => path = Some(p.to_string()),
                _ => return None,
            }
        }
        o.path = path.unwrap_or_else(|| "/".into());
        if o.block_ids.is_empty() && !args.iter().any(|a| !a.starts_with('-')) {
            return None;
        }
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
    /// Snapshottable directories whose `.snapshot` the walk enters (`-includeSnapshots`).
    snapshottable: BTreeSet<String>,
    /// Blocks by (replicas' storage, specified policy) for `-storagepolicies`.
    policies: StoragePolicySummary,
}

/// HDFS's `StoragePolicySummary`: blocks counted by where their replicas are and the
/// policy their file asks for. Every Tusk replica is on DISK, which HOT describes.
#[derive(Default)]
struct StoragePolicySummary {
    /// (replica count, specified policy name) → blocks.
    counts: std::collections::BTreeMap<(usize, String), u64>,
    total: u64,
}

impl StoragePolicySummary {
    fn add(&mut self, replicas: usize, policy_id: u32) {
        let name = crate::namespace::storage_policy::by_id(policy_id as u8)
            .name
            .to_string();
        *self.counts.entry((replicas, name)).or_default() += 1;
        self.total += 1;
    }

    fn text(&self) -> String {
        let mut rows: Vec<(&(usize, String), &u64)> = self.counts.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1));
        let pct = |n: u64| format!("{:.4}%", n as f64 * 100.0 / self.total.max(1) as f64);
        let mut ok = String::from("\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\n");
        let mut not_ok = String::new();
        for ((replicas, specified), n) in rows {
            let stored = if *replicas == 0 {
                String::new()
            } else {
                format!("DISK:{replicas}(HOT)")
            };
            if specified == "HOT" && *replicas > 0 {
                ok += &format!("{stored:<25} {n:>10}  {:>20}\n", pct(*n));
            } else {
                if not_ok.is_empty() {
                    not_ok += "\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n";
                }
                not_ok += &format!("{stored:<35} {specified:<20} {n:>10}  {:>20}\n", pct(*n));
            }
        }
        if not_ok.is_empty() {
            not_ok = "\nAll blocks satisfy specified storage policy.\n".into();
        }
        ok + &not_ok
    }
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
    if !options.block_ids.is_empty() {
        writeln!(
            out,
            "FSCK started by {user} (auth:SIMPLE) at {}",
            java_date(tusk_common::now_millis())
        )?;
        for id in &options.block_ids {
            block_report(client, options, id, out).await?;
        }
        return Ok(Verdict::Healthy);
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
    let snapshottable = if options.include_snapshots {
        client.snapshottable_dirs().await?.into_iter().collect()
    } else {
        BTreeSet::new()
    };
    let mut walk = Walk {
        client,
        options,
        out,
        report: FsckReport::default(),
        snapshottable,
        policies: StoragePolicySummary::default(),
    };
    if root.is_dir {
        walk.dir(&path).await?;
    } else {
        walk.file(&path, &root).await?;
    }
    let policies = walk.policies.text();
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
    if options.storage_policies {
        write!(out, "{policies}")?;
    }
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
        if self.snapshottable.contains(path) {
            let snapshots = format!("{}/.snapshot", path.trim_end_matches('/'));
            Box::pin(self.dir(&snapshots)).await?;
        }
        let entries = self.client.listing(path).await?;
        for e in entries {
            let child = format!("{}/{}", path.trim_end_matches('/'), e.name);
            if e.is_dir {
                Box::pin(self.dir(&child)).await?;
            } else {
                self.file(&child, &e).await?;
            }
        }
        Ok(())
    }

    async fn file(&mut self, path: &str, entry: &Entry) -> Result<(), S::Error> {
        let (length, replication) = (entry.length, entry.replication);
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
        if self.options.show_progress && r.total_files.is_multiple_of(100) {
            writeln!(self.out)?;
        }
        for b in &located.blocks {
            let replicas = if b.corrupt { 0 } else { b.locs.len() };
            self.policies.add(replicas, entry.storage_policy);
        }
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
        let corrupt = self.blocks(path, &located, replication as u64)?;
        if corrupt && !located.under_construction {
            self.repair(path).await?;
        }
        Ok(())
    }

    /// `-move` / `-delete` of a corrupt file, as NamenodeFsck: a failure is reported in
    /// the output and the walk goes on.
    async fn repair(&mut self, path: &str) -> Result<(), S::Error> {
        if self.options.move_corrupt {
            if let Err(e) = self.client.move_to_lost_found(path).await {
                writeln!(self.out, "\n{e}")?;
            }
        }
        if self.options.delete_corrupt && !self.options.move_corrupt {
            if let Err(e) = self.client.delete(path).await {
                writeln!(self.out, "Fsck: error deleting corrupted file {path}: {e}")?;
            }
        }
        Ok(())
    }

    /// The file's block lines and counters; true when a block is missing or corrupt.
    fn blocks(
        &mut self,
        path: &str,
        located: &LocatedBlocksProto,
        target: u64,
    ) -> Result<bool, S::Error> {
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
                if self.options.locations || self.options.racks || self.options.replica_details {
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
        Ok(missing > 0 || corrupt > 0)
    }

    /// `DatanodeInfoWithStorage[ip:port,storage,DISK]` per replica, or its rack path;
    /// then its upgrade domain and state when asked.
    fn replica_list(&self, b: &LocatedBlockProto) -> String {
        b.locs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut s = if self.options.racks {
                    let rack = l.location.as_deref().unwrap_or("/default-rack");
                    format!("{rack}/{}:{}", l.id.ip_addr, l.id.xfer_port)
                } else {
                    let storage = b.storage_i_ds.get(i).map_or("", String::as_str);
                    format!(
                        "DatanodeInfoWithStorage[{}:{},{storage},DISK]",
                        l.id.ip_addr, l.id.xfer_port
                    )
                };
                if self.options.upgrade_domains {
                    // No upgrade domains are assigned in Tusk.
                    s += "(ud=undefined)";
                }
                if self.options.replica_details {
                    s += &format!("({})", replica_state(b, l));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Where `-move` puts a corrupt file: its path under `/lost+found`.
pub fn lost_found_path(path: &str) -> String {
    format!("/lost+found{path}")
}

/// What `-move` reports when the rename is refused.
pub fn move_failed(path: &str) -> String {
    format!("Failed to move {path} to /lost+found")
}

/// A replica's state as NamenodeFsck's `-replicaDetails` names it.
fn replica_state(b: &LocatedBlockProto, l: &DatanodeInfoProto) -> &'static str {
    match l.admin_state() {
        AdminState::Decommissioned => "DECOMMISSIONED",
        AdminState::DecommissionInprogress => "DECOMMISSIONING",
        AdminState::EnteringMaintenance => "ENTERING MAINTENANCE",
        AdminState::InMaintenance => "IN MAINTENANCE",
        AdminState::Normal if b.corrupt => "CORRUPT",
        AdminState::Normal => "LIVE",
    }
}

/// `-blockId blk_N`: NamenodeFsck's `blockIdCK` report of one block.
async fn block_report<S: FsckSource, W: Write>(
    client: &S,
    options: &FsckOptions,
    name: &str,
    out: &mut W,
) -> Result<(), S::Error> {
    let id = name
        .strip_prefix("blk_")
        .and_then(|n| n.split('_').next())
        .and_then(|n| n.parse::<u64>().ok());
    let Some(id) = id else {
        writeln!(out, "Incorrect blockId format: {name}")?;
        return Ok(());
    };
    writeln!(out)?;
    let Some(path) = client.block_owner(id).await? else {
        writeln!(out, "Block {name} {NONEXISTENT}")?;
        return Ok(());
    };
    let located = client.block_locations(&path, u64::MAX).await?;
    let block = located
        .as_ref()
        .and_then(|l| l.blocks.iter().find(|b| b.b.block_id == id));
    let Some(block) = block else {
        writeln!(out, "Block {name} {NONEXISTENT}")?;
        return Ok(());
    };
    let expected = client.file_info(&path).await?.map_or(0, |e| e.replication);
    let count = |s: AdminState| block.locs.iter().filter(|l| l.admin_state() == s).count();
    let corrupt = if block.corrupt { block.locs.len() } else { 0 };
    let live = block.locs.len()
        - corrupt
        - count(AdminState::Decommissioned)
        - count(AdminState::DecommissionInprogress);
    writeln!(out, "Block Id: {name}")?;
    writeln!(out, "Block belongs to: {path}")?;
    writeln!(out, "No. of Expected Replica: {expected}")?;
    writeln!(out, "No. of live Replica: {}", live.min(block.locs.len()))?;
    writeln!(out, "No. of excess Replica: 0")?;
    writeln!(out, "No. of stale Replica: 0")?;
    writeln!(
        out,
        "No. of decommissioned Replica: {}",
        count(AdminState::Decommissioned)
    )?;
    writeln!(
        out,
        "No. of decommissioning Replica: {}",
        count(AdminState::DecommissionInprogress)
    )?;
    if options.maintenance {
        writeln!(out, "No. of entering maintenance Replica: 0")?;
        writeln!(out, "No. of in maintenance Replica: 0")?;
    }
    writeln!(out, "No. of corrupted Replica: {corrupt}")?;
    for l in &block.locs {
        let rack = l.location.as_deref().unwrap_or("/default-rack");
        let status = match replica_state(block, l) {
            "CORRUPT" => "is CORRUPT",
            "DECOMMISSIONED" => "is DECOMMISSIONED",
            "DECOMMISSIONING" => "is DECOMMISSIONING",
            _ => "is HEALTHY",
        };
        writeln!(
            out,
            "Block replica on datanode/rack: {}{rack} {status}",
            l.id.host_name
        )?;
    }
    Ok(())
}

/// NamenodeFsck's words for a block no file has.
const NONEXISTENT: &str = "does not exist";

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
