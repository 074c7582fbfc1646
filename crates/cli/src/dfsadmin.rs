//! `tusk dfsadmin`: Hadoop's `hdfs dfsadmin` verbs that Tusk's NameNode serves.

mod quota;

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;

const USAGE: &str = "Usage: tusk dfsadmin [-fs URI] [-D key=value] -rollEdits | -setQuota <quota> <dirname>... | -clrQuota <dirname>... | -setSpaceQuota <quota> [-storageType <type>] <dirname>... | -clrSpaceQuota [-storageType <type>] <dirname>...";

/// Runs one dfsadmin command line; returns the process exit code.
pub fn main(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    while args.len() >= 2 && (args[0] == "-fs" || args[0] == "-D") {
        if args[0] == "-fs" {
            conf.set("fs.defaultFS", args[1].clone());
        } else if let Err(e) = conf.apply_overrides(&[args[1].clone()]) {
            eprintln!("dfsadmin: {e}");
            return 2;
        }
        args.drain(..2);
    }
    if conf.get("fs.defaultFS").is_none() {
        conf.set("fs.defaultFS", crate::conf::default_fs(&conf));
    }
    if let Some(verb) = args.first().filter(|v| quota::VERBS.contains(&v.as_str())) {
        let verb = verb.clone();
        return with_client(&conf, |client| async move {
            quota::run(&client, &verb, &args[1..]).await
        });
    }
    let verb = match args.as_slice() {
        [verb] => verb.clone(),
        _ => {
            eprintln!("{USAGE}");
            return 2;
        }
    };
    let options = match ClientOptions::from_conf(&conf) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dfsadmin: {e}");
            return 2;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("dfsadmin: {e}");
            return 1;
        }
    };
    let client = DfsClient::new(options);
    match verb.as_str() {
        "-rollEdits" => match runtime.block_on(client.roll_edits()) {
            Ok(txid) => {
                println!("Successfully rolled edit logs.\nNew segment starts at txid {txid}");
                0
            }
            Err(e) => {
                eprintln!("rollEdits: {e}");
                1
            }
        },
        other => {
            eprintln!("{other}: Unknown command\n{USAGE}");
            2
        }
    }
}

/// Runs `f` with a client for the configured NameNode; its exit code.
fn with_client<F, Fut>(conf: &Configuration, f: F) -> i32
where
    F: FnOnce(DfsClient) -> Fut,
    Fut: std::future::Future<Output = i32>,
{
    let options = match ClientOptions::from_conf(conf) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dfsadmin: {e}");
            return 2;
        }
    };
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(async move { f(DfsClient::new(options)).await }),
        Err(e) => {
            eprintln!("dfsadmin: {e}");
            1
        }
    }
}
