//! `tusk haadmin`: Hadoop's `hdfs haadmin` for the NameNodes of an HA nameservice:
//! `-getServiceState <id>` and `-getAllServiceState`, asked of each NameNode with
//! ClientProtocol's `getHAServiceState` (which a standby answers too). Failover is
//! automatic (the replicated log's election); `-transitionToActive` and `-failover` are
//! not offered yet.

use tusk_common::config::ha::Nameservice;
use tusk_common::Configuration;
use tusk_proto::hdfs as h;
use tusk_proto::protocol_names::CLIENT_PROTOCOL;
use tusk_rpc::{RpcClient, RpcClientOptions};

const USAGE: &str = "Usage: tusk haadmin [-ns <nameserviceId>] [-getServiceState <serviceId>] [-getAllServiceState]";

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
    match (args.next(), args.next(), args.next()) {
        (Some("-getServiceState"), Some(id), None) => {
            let nn = ns
                .namenodes
                .iter()
                .find(|n| n.id == id)
                .ok_or_else(|| format!("{id} is not a NameNode of nameservice {}", ns.id))?;
            println!("{}", state(&nn.rpc_address, conf).await?);
            Ok(0)
        }
        (Some("-getAllServiceState"), None, None) => {
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

/// `active`, `standby` or `observer`, as Hadoop prints them.
async fn state(address: &str, conf: &Configuration) -> Result<String, String> {
    // As the client's user (a ticket's principal under Kerberos), one connect attempt.
    let options = tusk_client::ClientOptions::from_conf(conf).map_err(|e| e.to_string())?;
    let client = RpcClient::new(
        address,
        RpcClientOptions {
            connect_retry: tusk_rpc::ConnectRetry::NONE,
            ..options.rpc_options(CLIENT_PROTOCOL)
        },
    );
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
