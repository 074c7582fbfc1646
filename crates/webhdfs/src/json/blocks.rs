//! `BlockLocations` (GETFILEBLOCKLOCATIONS) and `FsStatus` (GETSTATUS).

use serde_json::{json, Value};
use tusk_proto::hdfs::{DatanodeInfoProto, GetFsStatsResponseProto, LocatedBlocksProto};

use super::storage_type_name;

/// Where a DataNode without one is placed (`NetworkTopology.DEFAULT_RACK`).
const DEFAULT_RACK: &str = "/default-rack";

/// `{"BlockLocations":{"BlockLocation":[...]}}`, each block as Hadoop's
/// `DFSUtilClient.locatedBlocks2Locations` makes it: replicas by host name (`hosts`),
/// by `ip:xferPort` (`names`) and by `rack/ip:xferPort` (`topologyPaths`).
pub fn block_locations(located: &LocatedBlocksProto) -> Value {
    let blocks: Vec<Value> = located
        .blocks
        .iter()
        .map(|b| {
            let cached: Vec<&str> = b
                .locs
                .iter()
                .zip(&b.is_cached)
                .filter(|(_, cached)| **cached)
                .map(|(dn, _)| dn.id.host_name.as_str())
                .collect();
            let types: Vec<&str> = b
                .storage_types
                .iter()
                .map(|t| storage_type_name(*t))
                .collect();
            json!({
                "cachedHosts": cached,
                "corrupt": b.corrupt,
                "hosts": b.locs.iter().map(|dn| dn.id.host_name.as_str()).collect::<Vec<_>>(),
                "length": b.b.num_bytes.unwrap_or(0),
                "names": b.locs.iter().map(xfer_addr).collect::<Vec<_>>(),
                "offset": b.offset,
                "storageTypes": types,
                "topologyPaths": b.locs.iter().map(topology_path).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "BlockLocations": { "BlockLocation": blocks } })
}

/// `ip:xferPort` (`DatanodeID.getXferAddr`).
fn xfer_addr(dn: &DatanodeInfoProto) -> String {
    format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port)
}

/// `/rack/ip:xferPort` (`NodeBase.toString`).
fn topology_path(dn: &DatanodeInfoProto) -> String {
    let rack = dn
        .location
        .as_deref()
        .filter(|l| !l.is_empty())
        .unwrap_or(DEFAULT_RACK);
    format!("{}/{}", rack.trim_end_matches('/'), xfer_addr(dn))
}

/// `{"FsStatus":{"capacity","remaining","used"}}`: the live DataNodes' totals.
pub fn fs_status(stats: &GetFsStatsResponseProto) -> Value {
    json!({
        "FsStatus": {
            "capacity": stats.capacity,
            "remaining": stats.remaining,
            "used": stats.used,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::hdfs as h;

    #[test]
    fn a_block_names_its_replicas_three_ways() {
        let dn = DatanodeInfoProto {
            id: h::DatanodeIdProto {
                ip_addr: "10.0.0.5".into(),
                host_name: "dn5".into(),
                xfer_port: 9866,
                ..Default::default()
            },
            location: Some("/rack1".into()),
            ..Default::default()
        };
        let located = LocatedBlocksProto {
            file_length: 10,
            blocks: vec![h::LocatedBlockProto {
                b: h::ExtendedBlockProto {
                    num_bytes: Some(10),
                    ..Default::default()
                },
                offset: 0,
                locs: vec![dn],
                storage_types: vec![h::StorageTypeProto::Disk as i32],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            block_locations(&located).to_string(),
            r#"{"BlockLocations":{"BlockLocation":[{"cachedHosts":[],"corrupt":false,"hosts":["dn5"],"length":10,"names":["10.0.0.5:9866"],"offset":0,"storageTypes":["DISK"],"topologyPaths":["/rack1/10.0.0.5:9866"]}]}}"#
        );
    }
}
