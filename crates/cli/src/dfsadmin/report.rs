//! `-report`: cluster figures, block statistics and one paragraph per DataNode, laid
//! out as Hadoop's DFSAdmin and `DatanodeInfo.getDatanodeReport` print them.

use tusk_client::{ClientError, DfsClient};
use tusk_proto::hdfs::{
    datanode_info_proto::AdminState, DatanodeInfoProto, DatanodeReportTypeProto,
    SafeModeActionProto,
};

pub use tusk_common::calendar::java_date;

/// Hadoop's `NetworkTopology.DEFAULT_RACK`, which the report leaves out.
const DEFAULT_RACK: &str = "/default-rack";

pub async fn run(client: &DfsClient, args: &[String]) -> Result<(), ClientError> {
    let stats = client.fs_stats().await?;
    let (capacity, used, remaining) = (stats.capacity, stats.used, stats.remaining);
    let present = used + remaining;
    if client
        .set_safe_mode(SafeModeActionProto::SafemodeGet)
        .await?
    {
        println!("Safe mode is ON");
    }
    println!("Configured Capacity: {capacity} ({})", byte_desc(capacity));
    println!("Present Capacity: {present} ({})", byte_desc(present));
    println!("DFS Remaining: {remaining} ({})", byte_desc(remaining));
    println!("DFS Used: {used} ({})", byte_desc(used));
    let used_fraction = if present == 0 {
        0.0
    } else {
        used as f64 / present as f64
    };
    println!("DFS Used%: {:.2}%", used_fraction * 100.0);
    let r = client.replicated_block_stats().await?;
    println!("Replicated Blocks:");
    println!("\tUnder replicated blocks: {}", r.low_redundancy);
    println!("\tBlocks with corrupt replicas: {}", r.corrupt_blocks);
    println!("\tMissing blocks: {}", r.missing_blocks);
    println!(
        "\tMissing blocks (with replication factor 1): {}",
        r.missing_repl_one_blocks
    );
    if let Some(n) = r.highest_prio_low_redundancy_blocks {
        println!("\tLow redundancy blocks with highest priority to recover: {n}");
    }
    println!("\tPending deletion blocks: {}", r.pending_deletion_blocks);
    let ec = client.ec_block_group_stats().await?;
    println!("Erasure Coded Block Groups: ");
    println!("\tLow redundancy block groups: {}", ec.low_redundancy);
    println!(
        "\tBlock groups with corrupt internal blocks: {}",
        ec.corrupt_blocks
    );
    println!("\tMissing block groups: {}", ec.missing_blocks);
    if let Some(n) = ec.highest_prio_low_redundancy_blocks {
        println!("\tLow redundancy blocks with highest priority to recover: {n}");
    }
    println!("\tPending deletion blocks: {}", ec.pending_deletion_blocks);
    println!();
    println!("-------------------------------------------------");

    let live = args.iter().any(|a| a == "-live");
    let dead = args.iter().any(|a| a == "-dead");
    let decommissioning = args.iter().any(|a| a == "-decommissioning");
    let all = !live && !dead && !decommissioning;
    let sections = [
        (DatanodeReportTypeProto::Live, live, "Live"),
        (DatanodeReportTypeProto::Dead, dead, "Dead"),
        (
            DatanodeReportTypeProto::Decommissioning,
            decommissioning,
            "Decommissioning",
        ),
    ];
    for (kind, asked, title) in sections {
        if !(all || asked) {
            continue;
        }
        let nodes = client.datanode_report(kind as i32).await?;
        if !nodes.is_empty() || asked {
            println!("{title} datanodes ({}):\n", nodes.len());
        }
        for node in &nodes {
            // DFSAdmin prints each paragraph and then an empty line.
            println!("{}\n", datanode_report(node));
        }
    }
    Ok(())
}

/// `-printTopology`: each rack, sorted, and its nodes as the NameNode reports them,
/// `   ip:port (name) <admin state>`, then an empty line (Hadoop 3.4's DFSAdmin). The
/// nodes of a rack come in the order of the Java `HashMap` DFSAdmin keeps them in.
pub async fn print_topology(client: &DfsClient) -> Result<(), ClientError> {
    let nodes = client
        .datanode_report(DatanodeReportTypeProto::All as i32)
        .await?;
    let mut racks: std::collections::BTreeMap<&str, Vec<(String, &str)>> = Default::default();
    for d in &nodes {
        let state = match d.admin_state() {
            AdminState::Normal => "In Service",
            AdminState::DecommissionInprogress => "Decommission In Progress",
            AdminState::Decommissioned => "Decommissioned",
            AdminState::EnteringMaintenance => "Entering Maintenance",
            AdminState::InMaintenance => "In Maintenance",
        };
        let name = format!("{}:{}", d.id.ip_addr, d.id.xfer_port);
        racks
            .entry(d.location.as_deref().unwrap_or(DEFAULT_RACK))
            .or_default()
            .push((name, state));
    }
    for (rack, nodes) in racks {
        println!("Rack: {rack}");
        for (name, state) in java_hash_map_order(nodes) {
            let ip = name.rsplit_once(':').map_or(name.as_str(), |(ip, _)| ip);
            println!("   {name} ({}) {state}", host_name_of_ip(ip));
        }
        println!();
    }
    Ok(())
}

/// The order a `java.util.HashMap<String, _>` filled with `entries` iterates them:
/// by bucket (`String.hashCode`, spread, masked by the table size the map grew to),
/// then in insertion order within a bucket.
fn java_hash_map_order<T>(entries: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut table = 16usize;
    while entries.len() > table * 3 / 4 {
        table *= 2;
    }
    let bucket = |key: &str| {
        let h = key
            .encode_utf16()
            .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32));
        let spread = (h ^ ((h as u32) >> 16) as i32) as u32;
        spread as usize & (table - 1)
    };
    let mut keyed: Vec<(usize, usize, (String, T))> = entries
        .into_iter()
        .enumerate()
        .map(|(i, e)| (bucket(&e.0), i, e))
        .collect();
    keyed.sort_by_key(|(b, i, _)| (*b, *i));
    keyed.into_iter().map(|(_, _, e)| e).collect()
}

/// One node's paragraph (`DatanodeInfo.getDatanodeReport`).
pub fn datanode_report(d: &DatanodeInfoProto) -> String {
    let c = d.capacity.unwrap_or(0);
    let r = d.remaining.unwrap_or(0);
    let u = d.dfs_used.unwrap_or(0);
    let non_dfs = d.non_dfs_used.unwrap_or(0);
    let (used_pct, remaining_pct) = percents(u, r, c);
    let id = &d.id;
    // As `NetUtils.getHostNameOfIP`: the name this machine resolves the address to.
    let mut s = format!(
        "Name: {}:{} ({})",
        id.ip_addr,
        id.xfer_port,
        host_name_of_ip(&id.ip_addr)
    );
    s += &format!("\nHostname: {}\n", id.host_name);
    let rack = d.location.as_deref().unwrap_or(DEFAULT_RACK);
    if rack != DEFAULT_RACK {
        s += &format!("Rack: {rack}\n");
    }
    let status = match d.admin_state() {
        AdminState::Decommissioned => "Decommissioned",
        AdminState::DecommissionInprogress => "Decommission in progress",
        AdminState::InMaintenance => "In maintenance",
        AdminState::EnteringMaintenance => "Entering maintenance",
        AdminState::Normal => "Normal",
    };
    s += &format!("Decommission Status : {status}\n");
    s += &format!("Configured Capacity: {c} ({})\n", byte_desc(c));
    s += &format!("DFS Used: {u} ({})\n", byte_desc(u));
    s += &format!("Non DFS Used: {non_dfs} ({})\n", byte_desc(non_dfs));
    s += &format!("DFS Remaining: {r} ({})\n", byte_desc(r));
    s += &format!("DFS Used%: {used_pct:.2}%\n");
    s += &format!("DFS Remaining%: {remaining_pct:.2}%\n");
    let (cc, cu) = (d.cache_capacity.unwrap_or(0), d.cache_used.unwrap_or(0));
    let cr = cc.saturating_sub(cu);
    let (cache_used_pct, cache_remaining_pct) = percents(cu, cr, cc);
    s += &format!("Configured Cache Capacity: {cc} ({})\n", byte_desc(cc));
    s += &format!("Cache Used: {cu} ({})\n", byte_desc(cu));
    s += &format!("Cache Remaining: {cr} ({})\n", byte_desc(cr));
    s += &format!("Cache Used%: {cache_used_pct:.2}%\n");
    s += &format!("Cache Remaining%: {cache_remaining_pct:.2}%\n");
    s += &format!("Xceivers: {}\n", d.xceiver_count.unwrap_or(0));
    s += &format!("Last contact: {}\n", java_date(d.last_update.unwrap_or(0)));
    let last_report = d.last_block_report_time.unwrap_or(0);
    let last_report = if last_report == 0 {
        "Never".to_string()
    } else {
        java_date(last_report)
    };
    s += &format!("Last Block Report: {last_report}\n");
    s += &format!("Num of Blocks: {}\n", d.num_blocks.unwrap_or(0));
    s
}

/// The name the system's resolver (hosts file, DNS) gives `ip`, or `ip` itself, as
/// Java's `InetAddress.getHostName` answers Hadoop's `NetUtils.getHostNameOfIP`.
/// `getent` asks the C library's resolver without unsafe code.
pub fn host_name_of_ip(ip: &str) -> String {
    let answer = std::process::Command::new("getent")
        .args(["hosts", ip])
        .stderr(std::process::Stdio::null())
        .output();
    answer
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            let line = String::from_utf8_lossy(&o.stdout).into_owned();
            line.split_whitespace().nth(1).map(str::to_string)
        })
        .unwrap_or_else(|| ip.to_string())
}

/// Used and remaining as percentages of `capacity`, as `DFSUtilClient.getPercentUsed`
/// and `getPercentRemaining` give them: 100 % used and 0 % remaining of nothing.
fn percents(used: u64, remaining: u64, capacity: u64) -> (f64, f64) {
    if capacity == 0 {
        return (100.0, 0.0);
    }
    let of = |n: u64| n as f64 * 100.0 / capacity as f64;
    (of(used), of(remaining))
}

/// Hadoop's `StringUtils.byteDesc`: `0 B`, `512 B`, `3 KB`, `2.86 MB`.
pub fn byte_desc(n: u64) -> String {
    const PREFIXES: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut i = 0;
    while i + 1 < PREFIXES.len() && n >= 1u64 << (10 * (i + 2)) {
        i += 1;
    }
    let shift = 10 * (i + 1);
    if n & ((1u64 << shift) - 1) == 0 {
        return format!("{} {}B", n >> shift, PREFIXES[i]);
    }
    let mut text = format!("{:.2}", n as f64 / (1u64 << shift) as f64);
    // 1023.999 KB rounds to "1024.00": Hadoop moves up a prefix.
    if text.starts_with("1024") && i + 1 < PREFIXES.len() {
        i += 1;
        text = format!("{:.2}", n as f64 / (1u64 << (10 * (i + 1))) as f64);
    }
    format!("{text} {}B", PREFIXES[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_dates_as_hadoop_prints_them() {
        assert_eq!(byte_desc(0), "0 B");
        assert_eq!(byte_desc(1023), "1023 B");
        assert_eq!(byte_desc(3072), "3 KB");
        assert_eq!(byte_desc(3_000_000), "2.86 MB");
        assert_eq!(byte_desc(1 << 30), "1 GB");
        assert_eq!(byte_desc((1 << 20) - 1), "1.00 MB");
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(1_795_507_421_000), "Tue Nov 24 08:03:41 UTC 2026");
    }

    #[test]
    fn nodes_in_java_hash_map_order() {
        // The order Hadoop 3.4's DFSAdmin printed these three nodes in.
        let names = ["127.0.0.1:39099", "127.0.0.1:41401", "127.0.0.1:39605"];
        let entries = names.iter().map(|n| (n.to_string(), ())).collect();
        let order: Vec<String> = java_hash_map_order(entries)
            .into_iter()
            .map(|(n, ())| n)
            .collect();
        assert_eq!(
            order,
            ["127.0.0.1:41401", "127.0.0.1:39099", "127.0.0.1:39605"]
        );
    }

    #[test]
    fn a_node_paragraph_as_datanode_info_prints_it() {
        use tusk_proto::hdfs::DatanodeIdProto;
        let node = DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: "192.0.2.7".into(),
                host_name: "dn7".into(),
                xfer_port: 9866,
                ..Default::default()
            },
            capacity: Some(4 << 30),
            dfs_used: Some(1 << 30),
            remaining: Some(3 << 30),
            non_dfs_used: Some(0),
            location: Some("/rack-b".into()),
            admin_state: Some(AdminState::DecommissionInprogress as i32),
            last_update: Some(0),
            num_blocks: Some(12),
            ..Default::default()
        };
        let text = datanode_report(&node);
        assert!(text.starts_with(
            "Name: 192.0.2.7:9866 (192.0.2.7)\nHostname: dn7\nRack: /rack-b\nDecommission Status : Decommission in progress\nConfigured Capacity: 4294967296 (4 GB)\nDFS Used: 1073741824 (1 GB)\n"
        ), "{text}");
        assert!(text.contains("DFS Used%: 25.00%\nDFS Remaining%: 75.00%\n"));
        assert!(text.contains("Last contact: Thu Jan 01 00:00:00 UTC 1970\nLast Block Report: Never\nNum of Blocks: 12\n"));
    }
}
