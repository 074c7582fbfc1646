//! `tusk fsck PATH [-files [-blocks [-locations | -racks]]] [-openforwrite]
//! [-list-corruptfileblocks]`: Hadoop's `hdfs fsck` report, its HEALTHY / CORRUPT
//! verdict as the last line and its exit code (0 healthy, 1 corrupt). Hadoop's NameNode
//! builds the report in its `/fsck` servlet; Tusk's client walks the namespace over RPC
//! (getListing, getBlockLocations, getDatanodeReport, listCorruptFileBlocks) and prints
//! the same shape.

mod report;

use tusk_common::Configuration;

use report::FsckOptions;

const USAGE: &str = "Usage: tusk fsck <path> [-list-corruptfileblocks | [-move | -delete | -openforwrite] [-files [-blocks [-locations | -racks]]]]";

/// Runs one fsck command line; returns the process exit code.
pub fn main(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    if let Err(e) = crate::conf::take_generic_options(&mut conf, &mut args) {
        eprintln!("fsck: {e}");
        return 2;
    }
    let Some(options) = FsckOptions::parse(&args) else {
        eprintln!("{USAGE}");
        return 255;
    };
    let (client, runtime) = match crate::conf::admin_client(&conf) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fsck: {e}");
            return 2;
        }
    };
    let user = client.options().user.clone();
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
