//! Verbs for one DataNode's IPC port (`HOST:IPC_PORT`, ClientDatanodeProtocol):
//! -getDatanodeInfo, -triggerBlockReport, -getBalancerBandwidth, -evictWriters and
//! -getVolumeReport, with Hadoop's DFSAdmin output and error lines.

use tusk_client::{ClientError, DfsClient};
use tusk_proto::hdfs as h;
use tusk_proto::protocol_names::CLIENT_DATANODE_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions, RpcError};

pub const VERBS: [&str; 5] = [
    "-getDatanodeInfo",
    "-triggerBlockReport",
    "-getBalancerBandwidth",
    "-evictWriters",
    "-getVolumeReport",
];

fn datanode(client: &DfsClient, addr: &str) -> RpcClient {
    RpcClient::new(
        addr.to_string(),
        RpcClientOptions {
            user: client.options().user.clone(),
            protocol: CLIENT_DATANODE_PROTOCOL.into(),
            ..Default::default()
        },
    )
}

/// A failure as Java's `toString` shows it: a remote one names `RemoteException` and
/// the server's class.
fn java_string(e: &RpcError) -> String {
    match e.remote() {
        Some(r) => format!(
            "org.apache.hadoop.ipc.RemoteException({}): {}",
            r.class, r.message
        ),
        None => e.to_string(),
    }
}

/// DFSAdmin wraps some failures as `Datanode unreachable. <the exception>`.
fn unreachable(verb: &str, e: &RpcError) -> i32 {
    eprintln!("{}: Datanode unreachable. {}", &verb[1..], java_string(e));
    255
}

/// Runs one verb of [`VERBS`]; returns the exit code.
pub async fn run(client: &DfsClient, verb: &str, args: &[String]) -> Result<i32, ClientError> {
    if verb == "-triggerBlockReport" {
        return trigger_block_report(client, args).await;
    }
    let [addr] = args else {
        eprintln!("{}", super::help::usage_of(verb));
        return Ok(255);
    };
    let dn = datanode(client, addr);
    match verb {
        "-getDatanodeInfo" => {
            let r: Result<h::GetDatanodeInfoResponseProto, _> = dn
                .call("getDatanodeInfo", &h::GetDatanodeInfoRequestProto {})
                .await;
            match r {
                Ok(r) => {
                    let i = r.local_info;
                    println!(
                        "Uptime: {}, Software version: {}, Config version: {}",
                        i.uptime, i.software_version, i.config_version
                    );
                    Ok(0)
                }
                Err(e) => Ok(unreachable(verb, &e)),
            }
        }
        "-getBalancerBandwidth" => {
            let r: h::GetBalancerBandwidthResponseProto = dn
                .call(
                    "getBalancerBandwidth",
                    &h::GetBalancerBandwidthRequestProto {},
                )
                .await?;
            println!("Balancer bandwidth is {} bytes per second.", r.bandwidth);
            Ok(0)
        }
        "-evictWriters" => {
            let r: Result<h::EvictWritersResponseProto, _> = dn
                .call("evictWriters", &h::EvictWritersRequestProto {})
                .await;
            match r {
                Ok(_) => {
                    println!("Requested writer eviction to datanode {addr}");
                    Ok(0)
                }
                Err(e) => Ok(unreachable(verb, &e)),
            }
        }
        // Tusk's DataNode answers UnsupportedOperationException, shown as DFSAdmin does.
        _ => {
            let _: h::EvictWritersResponseProto = dn
                .call("getVolumeReport", &h::EvictWritersRequestProto {})
                .await?;
            Ok(0)
        }
    }
}

/// `-triggerBlockReport [-incremental] HOST:IPC_PORT [-namenode NN_HOST:PORT]`.
async fn trigger_block_report(client: &DfsClient, args: &[String]) -> Result<i32, ClientError> {
    let (mut incremental, mut nn, mut addr) = (false, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-incremental" => incremental = true,
            "-namenode" => nn = it.next().cloned(),
            other if addr.is_none() && !other.starts_with('-') => addr = Some(other.to_string()),
            _ => addr = None,
        }
    }
    let Some(addr) = addr else {
        eprintln!("{}", super::help::usage_of("-triggerBlockReport"));
        return Ok(255);
    };
    let reply: Result<h::TriggerBlockReportResponseProto, _> = datanode(client, &addr)
        .call(
            "triggerBlockReport",
            &h::TriggerBlockReportRequestProto {
                incremental,
                nn_address: nn.clone(),
            },
        )
        .await;
    if let Err(e) = reply {
        // DFSAdmin prints Java's `toString` of the failure and exits 1.
        eprintln!("triggerBlockReport error: {}", java_string(&e));
        return Ok(1);
    }
    let kind = if incremental {
        "an incremental"
    } else {
        "a full"
    };
    match nn {
        Some(nn) => println!("Triggering {kind} block report on {addr} to namenode {nn}."),
        None => println!("Triggering {kind} block report on {addr}."),
    }
    Ok(0)
}
