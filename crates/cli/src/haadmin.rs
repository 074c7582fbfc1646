//! `tusk haadmin`: Hadoop's `hdfs haadmin` for the NameNodes of an HA nameservice:
//! `-getServiceState <id>` and `-getAllServiceState`, asked of each NameNode with
//! ClientProtocol's `getHAServiceState` (which a standby answers too); `-checkHealth
//! <id>` and `-transitionToStandby --forcemanual <id>` through Hadoop's
//! HAServiceProtocol. Failover is automatic (the replicated log's election), so, as
//! Hadoop's tool does then, a transition needs `--forcemanual` (Tusk's tool does not ask
//! for confirmation); sent to the active it hands the role over to another NameNode.
//! `-transitionToActive` and `-failover` are not offered: the NameNodes elect their
//! active.

use tusk_common::config::ha::Nameservice;
use tusk_common::Configuration;
use tusk_namenode::server::HaServiceProtocolService;
use tusk_namenode::wire::ha_service as ha_wire;
use tusk_proto::hdfs as h;
use tusk_proto::protocol_names::CLIENT_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions};

const USAGE: &str = "Usage: tusk haadmin [-ns <nameserviceId>] [-getServiceState <serviceId>] [-getAllServiceState] [-checkHealth <serviceId>] [-transitionToStandby --forcemanual <serviceId>]";

/// Runs the verb in `args`; the exit code (0 done, -1 refused as Hadoop's).
pub fn main(mut conf: Configuration, args: Vec<String>) -> i32 {
    crate::conf::ensure_default_fs(&mut conf);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    match runtime.block_on(run(&conf, &args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("haadmin: {e}");
            255
        }
    }
}

async fn run(conf: &Configuration, args: &[String]) -> Result<i32, String> {
    let mut args = args.iter().map(String::as_str).peekable();
    let mut name = None;
    if args.peek() == Some(&"-ns") {
        args.next();
        name = Some(args.next().ok_or(USAGE)?.to_string());
    }
    let ns = match name {
        Some(name) => Nameservice::from_conf(conf, &name)?,
        None => Nameservice::of_default_fs(conf)?,
    }
    .ok_or("no HA nameservice is configured (dfs.nameservices, dfs.ha.namenodes.NS)")?;
    let address = |id: &str| {
        ns.namenodes
            .iter()
            .find(|n| n.id == id)
            .map(|n| n.rpc_address.clone())
            .ok_or_else(|| format!("{id} is not a NameNode of nameservice {}", ns.id))
    };
    match (args.next(), args.next(), args.next(), args.next()) {
        (Some("-getServiceState"), Some(id), None, None) => {
            println!("{}", state(&address(id)?, conf).await?);
            Ok(0)
        }
        (Some("-checkHealth"), Some(id), None, None) => {
            let _: ha_wire::MonitorHealthResponseProto = ha_service(&address(id)?, conf)?
                .call("monitorHealth", &ha_wire::MonitorHealthRequestProto {})
                .await
                .map_err(|e| e.to_string())?;
            Ok(0)
        }
        (Some("-transitionToStandby"), Some("--forcemanual"), Some(id), None) => {
            let _: ha_wire::TransitionResponseProto = ha_service(&address(id)?, conf)?
                .call(
                    "transitionToStandby",
                    &ha_wire::TransitionRequestProto {
                        // REQUEST_BY_USER_FORCED
                        req_info: ha_wire::HaStateChangeRequestInfoProto { req_source: 1 },
                    },
                )
                .await
                .map_err(|e| e.to_string())?;
            Ok(0)
        }
        (Some("-transitionToStandby"), Some(_), None, None) => {
            eprintln!(
                "Automatic failover is enabled for NameNode at {}: refusing to manually manage HA state without --forcemanual",
                ns.id
            );
            Ok(-1)
        }
        (Some("-getAllServiceState"), None, None, None) => {
            for nn in &ns.namenodes {
                let state = state(&nn.rpc_address, conf)
                    .await
                    .unwrap_or_else(|e| format!("Failed to connect: {e}"));
                println!("{:<50} {state}", nn.rpc_address);
            }
            Ok(0)
        }
        _ => {
            eprintln!("{USAGE}");
            Ok(-1)
        }
    }
}

/// A client of `protocol` on the NameNode at `address`, as the client's user (a
/// ticket's principal under Kerberos), with one connect attempt.
fn client(address: &str, conf: &Configuration, protocol: &str) -> Result<RpcClient, String> {
    let options = tusk_client::ClientOptions::from_conf(conf).map_err(|e| e.to_string())?;
    Ok(RpcClient::new(
        address,
        RpcClientOptions {
            connect_retry: tusk_rpc::ConnectRetry::NONE,
            ..options.rpc_options(protocol)
        },
    ))
}

fn ha_service(address: &str, conf: &Configuration) -> Result<RpcClient, String> {
    client(address, conf, HaServiceProtocolService::PROTOCOL)
}

/// `active`, `standby` or `observer`, as Hadoop prints them.
async fn state(address: &str, conf: &Configuration) -> Result<String, String> {
    let client = client(address, conf, CLIENT_PROTOCOL)?;
    let resp: h::HaServiceStateResponseProto = client
        .call("getHAServiceState", &h::HaServiceStateRequestProto {})
        .await
        .map_err(|e| e.to_string())?;
    Ok(match h::HaServiceStateProto::try_from(resp.state) {
        Ok(h::HaServiceStateProto::Active) => "active",
        Ok(h::HaServiceStateProto::Standby) => "standby",
        Ok(h::HaServiceStateProto::Observer) => "observer",
        _ => "initializing",
    }
    .to_string())
}
