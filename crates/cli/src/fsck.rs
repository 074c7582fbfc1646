//! `tusk fsck PATH [-files [-blocks [-locations | -racks]]] [-openforwrite]
//! [-list-corruptfileblocks]`: Hadoop's `hdfs fsck` report, its HEALTHY / CORRUPT
//! verdict as the last line and its exit code (0 healthy, 1 corrupt). Hadoop's NameNode
//! builds the report in its `/fsck` servlet; Tusk's client walks the namespace over RPC
//! (getListing, getBlockLocations, getDatanodeReport, listCorruptFileBlocks) and prints
//! the same shape.

mod report;

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::Configuration;

use report::FsckOptions;

const USAGE: &str = "Usage: tusk fsck <path> [-list-corruptfileblocks | [-move | -delete | -openforwrite] [-files [-blocks [-locations | -racks]]]]";

/// Runs one fsck command line; returns the process exit code.
pub fn main(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    while args.len() >= 2 && (args[0] == "-fs" || args[0] == "-D") {
        if args[0] == "-fs" {
            conf.set("fs.defaultFS", args[1].clone());
        } else if let Err(e) = conf.apply_overrides(&[args[1].clone()]) {
            eprintln!("fsck: {e}");
            return 2;
        }
        args.drain(..2);
    }
    if conf.get("fs.defaultFS").is_none() {
        conf.set("fs.defaultFS", crate::conf::default_fs(&conf));
    }
    let Some(options) = FsckOptions::parse(&args) else {
        eprintln!("{USAGE}");
        return 255;
    };
    let client_options = match ClientOptions::from_conf(&conf) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fsck: {e}");
            return 2;
        }
    };
    let user = client_options.user.clone();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fsck: {e}");
            return 1;
        }
    };
    let client = DfsClient::new(client_options);
    let default_replication = conf.get_u64("dfs.replication", 3).unwrap_or(3);
    let outcome = runtime.block_on(async {
        let mut out = std::io::stdout().lock();
        report::run(&client, &user, &options, default_replication, &mut out).await
    });
    match outcome {
        Ok(verdict) => verdict.exit_code(),
        Err(e) => {
            eprintln!("fsck: {e}");
            255
        }
    }
}
