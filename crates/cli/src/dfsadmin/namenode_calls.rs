//! NameNode verbs whose calls `DfsClient` does not carry: -saveNamespace,
//! -metasave, -setBalancerBandwidth, -restoreFailedStorage, -finalizeUpgrade,
//! -upgrade, -rollingUpgrade, the -refresh* family (their own protocols on the
//! NameNode's RPC port) and -fetchImage (the NameNode's `/imagetransfer`), each
//! printing what Hadoop's DFSAdmin prints.

use std::io::{Read, Write};

use tusk_client::{ClientError, DfsClient};
use tusk_common::Configuration;
use tusk_namenode::namesystem::admin::wire;
use tusk_proto::hdfs as h;
use tusk_proto::protocol_names::CLIENT_PROTOCOL;
use tusk_rpc::FailoverRpcClient;

/// The verbs this module runs.
pub const VERBS: [&str; 12] = [
    "-saveNamespace",
    "-metasave",
    "-setBalancerBandwidth",
    "-restoreFailedStorage",
    "-finalizeUpgrade",
    "-upgrade",
    "-rollingUpgrade",
    "-refreshUserToGroupsMappings",
    "-refreshSuperUserGroupsConfiguration",
    "-refreshServiceAcl",
    "-refreshCallQueue",
    "-fetchImage",
];

/// A connection to the NameNode's RPC port for `protocol`, as the client's user.
/// Under HA, the active one (a standby refuses, and the call fails over).
fn namenode(client: &DfsClient, protocol: &str) -> FailoverRpcClient {
    client.options().namenode_rpc(protocol)
}

async fn call<Req: prost::Message, Resp: prost::Message + Default>(
    client: &DfsClient,
    protocol: &str,
    method: &str,
    req: &Req,
) -> Result<Resp, ClientError> {
    Ok(namenode(client, protocol).call(method, req).await?)
}

/// Runs one verb of [`VERBS`]; returns the exit code.
pub async fn run(
    client: &DfsClient,
    conf: &Configuration,
    verb: &str,
    args: &[String],
) -> Result<i32, ClientError> {
    let arg = args.first().map(String::as_str);
    match (verb, arg) {
        ("-saveNamespace", _) => save_namespace(client, conf, arg == Some("-beforeShutdown")).await,
        ("-metasave", Some(file)) => {
            let _: wire::MetaSaveResponseProto = call(
                client,
                CLIENT_PROTOCOL,
                "metaSave",
                &wire::MetaSaveRequestProto {
                    filename: file.to_string(),
                },
            )
            .await?;
            let uri = format!("hdfs://{}", client.options().namenode);
            println!("Created metasave file {file} in the log directory of namenode {uri}");
            Ok(0)
        }
        ("-setBalancerBandwidth", Some(n)) => set_balancer_bandwidth(client, n).await,
        ("-restoreFailedStorage", Some(a)) => {
            if !["check", "true", "false"].contains(&a) {
                eprintln!("restoreFailedStorage valid args are true|false|check");
                return Ok(255);
            }
            let r: wire::RestoreFailedStorageResponseProto = call(
                client,
                CLIENT_PROTOCOL,
                "restoreFailedStorage",
                &wire::RestoreFailedStorageRequestProto { arg: a.to_string() },
            )
            .await?;
            println!("restoreFailedStorage is set to {}", r.result);
            Ok(0)
        }
        ("-finalizeUpgrade", None) | ("-upgrade", Some("finalize")) => {
            let _: wire::FinalizeUpgradeResponseProto = call(
                client,
                CLIENT_PROTOCOL,
                "finalizeUpgrade",
                &wire::FinalizeUpgradeRequestProto {},
            )
            .await?;
            println!("Finalize upgrade successful");
            Ok(0)
        }
        ("-upgrade", Some("query")) => {
            let r: wire::UpgradeStatusResponseProto = call(
                client,
                CLIENT_PROTOCOL,
                "upgradeStatus",
                &wire::UpgradeStatusRequestProto {},
            )
            .await?;
            let word = if r.upgrade_finalized { "" } else { "not " };
            println!("Upgrade {word}finalized");
            Ok(0)
        }
        ("-rollingUpgrade", _) if args.len() <= 1 => {
            rolling_upgrade(client, arg.unwrap_or("")).await
        }
        ("-refreshUserToGroupsMappings", None) => {
            refresh(
                client,
                "RefreshUserMappingsProtocol",
                "refreshUserToGroupsMappings",
            )
            .await?;
            println!("Refresh user to groups mapping successful");
            Ok(0)
        }
        ("-refreshSuperUserGroupsConfiguration", None) => {
            refresh(
                client,
                "RefreshUserMappingsProtocol",
                "refreshSuperUserGroupsConfiguration",
            )
            .await?;
            println!("Refresh super user groups configuration successful");
            Ok(0)
        }
        ("-refreshServiceAcl", None) => {
            refresh(
                client,
                "authorize.RefreshAuthorizationPolicyProtocol",
                "refreshServiceAcl",
            )
            .await?;
            println!("Refresh service acl successful");
            Ok(0)
        }
        ("-refreshCallQueue", None) => {
            refresh(client, "RefreshCallQueueProtocol", "refreshCallQueue").await?;
            println!("Refresh call queue successful");
            Ok(0)
        }
        ("-fetchImage", Some(dir)) => fetch_image(client, conf, dir),
        _ => {
            eprintln!("{}", super::help::usage_of(verb));
            Ok(255)
        }
    }
}

/// `-saveNamespace [-beforeShutdown]`: with `-beforeShutdown` the NameNode saves only
/// when no checkpoint was made within the window DFSAdmin computes from the client's
/// configuration (three checkpoint periods or transaction counts by default).
async fn save_namespace(
    client: &DfsClient,
    conf: &Configuration,
    before_shutdown: bool,
) -> Result<i32, ClientError> {
    let (mut time_window, mut tx_gap) = (0, 0);
    if before_shutdown {
        let hour = std::time::Duration::from_secs(3600);
        let second = std::time::Duration::from_secs(1);
        let period = conf
            .get_duration("dfs.namenode.checkpoint.period", hour, second)
            .unwrap_or(hour)
            .as_secs();
        let txns = conf
            .get_u64("dfs.namenode.checkpoint.txns", 1_000_000)
            .unwrap_or(1_000_000);
        let periods = conf
            .get_u64("dfs.namenode.missing.checkpoint.periods.before.shutdown", 3)
            .unwrap_or(3);
        time_window = period * periods;
        tx_gap = txns * periods;
        println!(
            "Do checkpoint if necessary before stopping namenode. The time window is {time_window} seconds, and the transaction gap is {tx_gap}"
        );
    }
    let r: h::SaveNamespaceResponseProto = call(
        client,
        CLIENT_PROTOCOL,
        "saveNamespace",
        &h::SaveNamespaceRequestProto {
            time_window: Some(time_window),
            tx_gap: Some(tx_gap),
        },
    )
    .await?;
    if r.saved.unwrap_or(true) {
        println!("Save namespace successful");
    } else {
        println!("No extra checkpoint has been made");
    }
    Ok(0)
}

async fn set_balancer_bandwidth(client: &DfsClient, value: &str) -> Result<i32, ClientError> {
    let usage = "Usage: hdfs dfsadmin [-setBalancerBandwidth <bandwidth in bytes per second>]";
    let Some(bandwidth) = super::quota::parse_size(value) else {
        // Hadoop's `TraditionalBinaryPrefix.string2long` messages.
        if value.ends_with(|c: char| c.is_ascii_digit()) {
            eprintln!("NumberFormatException: For input string: \"{value}\"");
        } else {
            let prefix = value.chars().last().unwrap_or(' ');
            eprintln!(
                "setBalancerBandwidth: Invalid size prefix '{prefix}' in '{value}'. Allowed prefixes are k, m, g, t, p, e(case insensitive)"
            );
        }
        eprintln!("{usage}");
        return Ok(255);
    };
    let _: wire::SetBalancerBandwidthResponseProto = call(
        client,
        CLIENT_PROTOCOL,
        "setBalancerBandwidth",
        &wire::SetBalancerBandwidthRequestProto {
            bandwidth: bandwidth as i64,
        },
    )
    .await?;
    println!("Balancer bandwidth is set to {bandwidth}");
    Ok(0)
}

/// `-rollingUpgrade [query|prepare|finalize]`; Tusk never has one in progress.
async fn rolling_upgrade(client: &DfsClient, action: &str) -> Result<i32, ClientError> {
    let (name, code) = match action.to_ascii_uppercase().as_str() {
        "" | "QUERY" => ("QUERY", 1),
        "PREPARE" => ("PREPARE", 2),
        "FINALIZE" => ("FINALIZE", 3),
        _ => {
            eprintln!("rollingUpgrade: Failed to convert \"{action}\" to RollingUpgradeAction");
            eprintln!("Usage: hdfs dfsadmin [-rollingUpgrade [<query|prepare|finalize>]]");
            return Ok(255);
        }
    };
    println!("{name} rolling upgrade ...");
    let _: wire::RollingUpgradeResponseProto = call(
        client,
        CLIENT_PROTOCOL,
        "rollingUpgrade",
        &wire::RollingUpgradeRequestProto { action: code },
    )
    .await?;
    println!(
        "There is no rolling upgrade in progress or rolling upgrade has already been finalized."
    );
    Ok(0)
}

/// One call of a refresh protocol (`org.apache.hadoop.security.<protocol>` or, for
/// the call queue, `org.apache.hadoop.ipc.`).
async fn refresh(client: &DfsClient, protocol: &str, method: &str) -> Result<(), ClientError> {
    let package = if protocol == "RefreshCallQueueProtocol" {
        "org.apache.hadoop.ipc"
    } else {
        "org.apache.hadoop.security"
    };
    let _: wire::RefreshProto = call(
        client,
        &format!("{package}.{protocol}"),
        method,
        &wire::RefreshProto {},
    )
    .await?;
    Ok(())
}

/// `-fetchImage DIR`: the NameNode's newest checkpoint image, saved in DIR under the
/// name the NameNode gives it (`X-Image-Edits-Name`), as Hadoop's `TransferFsImage`
/// does. The web address is `dfs.namenode.http-address`, its wildcard host replaced
/// by the NameNode's.
fn fetch_image(client: &DfsClient, conf: &Configuration, dir: &str) -> Result<i32, ClientError> {
    let nn_host = client
        .options()
        .namenode
        .rsplit_once(':')
        .map_or("127.0.0.1".to_string(), |(h, _)| h.to_string());
    let configured = conf
        .get("dfs.namenode.http-address")
        .unwrap_or("0.0.0.0:9870")
        .to_string();
    let http = match configured.rsplit_once(':') {
        Some(("0.0.0.0", port)) => format!("{nn_host}:{port}"),
        _ => configured,
    };
    let query = "/imagetransfer?getimage=1&txid=latest";
    let (status, headers, body) = http_get(&http, query)?;
    if status != 200 {
        eprintln!(
            "fetchImage: Image transfer servlet at http://{http}{query} failed with status code {status}"
        );
        return Ok(255);
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let advertised: Option<usize> = header("Content-Length").and_then(|v| v.parse().ok());
    if advertised != Some(body.len()) {
        eprintln!(
            "fetchImage: File http://{http}{query} received length {} is not of the advertised size {}",
            body.len(),
            advertised.map_or("unknown".into(), |n| n.to_string())
        );
        return Ok(255);
    }
    let Some(name) = header("X-Image-Edits-Name") else {
        eprintln!("fetchImage: No filename header provided by server");
        return Ok(255);
    };
    let target = std::path::Path::new(dir).join(name);
    std::fs::File::create(&target)
        .and_then(|mut f| f.write_all(&body).and_then(|()| f.sync_all()))
        .map_err(ClientError::from)?;
    Ok(0)
}

type HttpReply = (u16, Vec<(String, String)>, Vec<u8>);

/// A plain HTTP/1.0 GET (the reply ends when the server closes the connection).
fn http_get(addr: &str, path_and_query: &str) -> Result<HttpReply, ClientError> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    write!(
        stream,
        "GET {path_and_query} HTTP/1.0\r\nHost: {addr}\r\nUser-Agent: tusk-dfsadmin\r\n\r\n"
    )?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply)?;
    let split = reply
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("malformed HTTP reply"))?;
    let head = String::from_utf8_lossy(&reply[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Ok((status, headers, reply[split + 4..].to_vec()))
}
