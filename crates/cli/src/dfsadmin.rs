//! `tusk dfsadmin`: Hadoop's `hdfs dfsadmin` verbs that Tusk's NameNode and DataNodes
//! serve, with Hadoop's output: -report, -safemode, -refreshNodes, -listOpenFiles,
//! -rollEdits, -printTopology and -help here.
//!
//! - `report`: the text of `-report` and `-printTopology` (Hadoop's DFSAdmin and
//!   DatanodeInfo layout).
//! - `quota`: -setQuota, -clrQuota, -setSpaceQuota, -clrSpaceQuota.
//! - `namenode_calls`: -saveNamespace, -metasave, -setBalancerBandwidth,
//!   -restoreFailedStorage, the upgrade verbs, the -refresh* family, -fetchImage.
//! - `datanode_calls`: verbs for a DataNode's IPC port.
//! - `help`: -help, Hadoop's text.
//!
//! -allowSnapshot and -disallowSnapshot are `snapshot_cmds`'.

mod datanode_calls;
mod help;
mod namenode_calls;
mod quota;
pub(crate) mod report;

use std::time::Duration;

use tusk_client::{ClientError, DfsClient};
use tusk_common::Configuration;
use tusk_proto::hdfs::SafeModeActionProto;

const USAGE: &str = "Usage: tusk dfsadmin [-fs URI] [-D key=value]
\t[-report [-live] [-dead] [-decommissioning]]
\t[-safemode <enter | leave | get | wait | forceExit>]
\t[-saveNamespace [-beforeShutdown]]
\t[-rollEdits]
\t[-restoreFailedStorage true|false|check]
\t[-refreshNodes]
\t[-setQuota <quota> <dirname>...<dirname>]
\t[-clrQuota <dirname>...<dirname>]
\t[-setSpaceQuota <quota> [-storageType <storagetype>] <dirname>...<dirname>]
\t[-clrSpaceQuota [-storageType <storagetype>] <dirname>...<dirname>]
\t[-finalizeUpgrade]
\t[-rollingUpgrade [<query|prepare|finalize>]]
\t[-upgrade <query | finalize>]
\t[-refreshServiceAcl]
\t[-refreshUserToGroupsMappings]
\t[-refreshSuperUserGroupsConfiguration]
\t[-refreshCallQueue]
\t[-printTopology]
\t[-setBalancerBandwidth <bandwidth in bytes per second>]
\t[-getBalancerBandwidth <datanode_host:ipc_port>]
\t[-fetchImage <local directory>]
\t[-allowSnapshot <snapshotDir>]
\t[-disallowSnapshot <snapshotDir>]
\t[-evictWriters <datanode_host:ipc_port>]
\t[-getVolumeReport <datanode_host:ipc_port>]
\t[-getDatanodeInfo <datanode_host:ipc_port>]
\t[-metasave filename]
\t[-triggerBlockReport [-incremental] <datanode_host:ipc_port> [-namenode <namenode_host:ipc_port>]]
\t[-listOpenFiles [-blockingDecommission] [-path <path>]]
\t[-help [cmd]]";

/// How often `-safemode wait` asks again (Hadoop's DFSAdmin waits 5 s).
const SAFE_MODE_POLL: Duration = Duration::from_secs(1);

/// Runs one dfsadmin command line; returns the process exit code.
pub fn main(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    split_joined_defines(&mut args);
    if let Err(e) = crate::conf::take_generic_options(&mut conf, &mut args) {
        eprintln!("dfsadmin: {e}");
        return 2;
    }
    let Some((verb, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    if verb == "-help" {
        return help::run(rest);
    }
    let (client, runtime) = match crate::conf::admin_client(&conf) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("dfsadmin: {e}");
            return 2;
        }
    };
    let outcome = runtime.block_on(async {
        match verb.as_str() {
            "-report" => report::run(&client, rest).await.map(|()| 0),
            "-safemode" => safe_mode(&client, rest).await,
            "-refreshNodes" => client.refresh_nodes().await.map(|()| {
                println!("Refresh nodes successful");
                0
            }),
            "-listOpenFiles" => list_open_files(&client, rest).await,
            v if quota::VERBS.contains(&v) => Ok(quota::run(&client, v, rest).await),
            "-rollEdits" => client.roll_edits().await.map(|txid| {
                println!("Successfully rolled edit logs.\nNew segment starts at txid {txid}");
                0
            }),
            "-printTopology" => report::print_topology(&client).await.map(|()| 0),
            v if namenode_calls::VERBS.contains(&v) => {
                namenode_calls::run(&client, &conf, v, rest).await
            }
            v if datanode_calls::VERBS.contains(&v) => datanode_calls::run(&client, v, rest).await,
            other => {
                eprintln!("{other}: Unknown command\n{USAGE}");
                Ok(2)
            }
        }
    });
    outcome.unwrap_or_else(|e| {
        // As Hadoop's DFSAdmin: the verb, then the first line of the error; exit -1.
        eprintln!("{}: {}", &verb[1..], first_line(&e));
        255
    })
}

/// Hadoop's generic options take `-Dkey=value` as well as `-D key=value`.
fn split_joined_defines(args: &mut Vec<String>) {
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        match args[i].as_str() {
            "-fs" | "-D" => i += 2,
            a if a.len() > 2 && a.starts_with("-D") => {
                let define = a[2..].to_string();
                args[i] = "-D".into();
                args.insert(i + 1, define);
                i += 2;
            }
            _ => break,
        }
    }
}

fn first_line(e: &ClientError) -> String {
    let text = match e {
        ClientError::Remote(r) => r.message.clone(),
        other => other.to_string(),
    };
    text.lines().next().unwrap_or_default().to_string()
}

/// `-safemode enter|leave|get|wait|forceExit`: prints "Safe mode is ON|OFF".
async fn safe_mode(client: &DfsClient, args: &[String]) -> Result<i32, ClientError> {
    let action = match args {
        [a] => a.to_ascii_lowercase(),
        _ => {
            eprintln!("Usage: tusk dfsadmin [-safemode enter | leave | get | wait | forceExit]");
            return Ok(2);
        }
    };
    let (action, wait) = match action.as_str() {
        "enter" => (SafeModeActionProto::SafemodeEnter, false),
        "leave" => (SafeModeActionProto::SafemodeLeave, false),
        "get" => (SafeModeActionProto::SafemodeGet, false),
        "wait" => (SafeModeActionProto::SafemodeGet, true),
        "forceexit" => (SafeModeActionProto::SafemodeForceExit, false),
        _ => {
            eprintln!("Usage: tusk dfsadmin [-safemode enter | leave | get | wait | forceExit]");
            return Ok(2);
        }
    };
    let mut on = client.set_safe_mode(action).await?;
    while wait && on {
        tokio::time::sleep(SAFE_MODE_POLL).await;
        on = client
            .set_safe_mode(SafeModeActionProto::SafemodeGet)
            .await?;
    }
    println!("Safe mode is {}", if on { "ON" } else { "OFF" });
    Ok(0)
}

/// `-listOpenFiles [-blockingDecommission] [-path <path>]`, in Hadoop's columns.
async fn list_open_files(client: &DfsClient, args: &[String]) -> Result<i32, ClientError> {
    let mut blocking = false;
    let mut path = "/".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match (a.as_str(), it.clone().next()) {
            ("-blockingDecommission", _) => blocking = true,
            ("-path", Some(p)) => {
                path = p.clone();
                it.next();
            }
            _ => {
                eprintln!(
                    "Usage: tusk dfsadmin [-listOpenFiles [-blockingDecommission] [-path <path>]]"
                );
                return Ok(2);
            }
        }
    }
    println!(
        "{:<20}\t{:<20}\tOpen File Path",
        "Client Host", "Client Name"
    );
    let mut after = 0;
    loop {
        let batch = client.list_open_files(after, &path, blocking).await?;
        for e in &batch.entries {
            println!(
                "{:<20}\t{:<20}\t{:>20}",
                e.client_machine, e.client_name, e.path
            );
            after = after.max(e.id);
        }
        if !batch.has_more || batch.entries.is_empty() {
            return Ok(0);
        }
    }
}
