//! Configuration text: a TOML file and `-D key=value` overrides, read into every
//! daemon's options as each daemon reads them at start-up.

use std::time::Duration;

use tusk_common::config::{parse_duration, parse_size};
use tusk_common::Configuration;

/// Runs one input: UTF-8 TOML text, then after a NUL byte the `-D` overrides, one per
/// line. Text that is not UTF-8 is refused before parsing, as reading the file does.
pub fn parse(data: &[u8]) {
    let (file, overrides) = match data.iter().position(|b| *b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &[][..]),
    };
    let (Ok(file), Ok(overrides)) = (std::str::from_utf8(file), std::str::from_utf8(overrides))
    else {
        return;
    };
    let Ok(mut conf) = Configuration::from_toml(file) else {
        return;
    };
    let overrides: Vec<&str> = overrides.lines().collect();
    if conf.apply_overrides(&overrides).is_err() {
        return;
    }
    read_options(&conf);
}

/// Everything a daemon or client reads from a configuration.
fn read_options(conf: &Configuration) {
    if let Ok(options) = tusk_namenode::NameNodeOptions::from_conf(conf) {
        // The NameNode's first act with its options: its block keys.
        let _ = tusk_namenode::namesystem::BlockTokens::from_options(&options);
    }
    let _ = tusk_datanode::DataNodeOptions::from_conf(conf);
    let _ = tusk_resourcemanager::ResourceManagerOptions::from_conf(conf);
    let _ = tusk_nodemanager::NodeManagerOptions::from_conf(conf);
    let _ = tusk_client::ClientOptions::from_conf(conf);
    let _ = tusk_rpc::RpcServerOptions::from_conf(conf);
    // Every value through every typed getter, whatever key it sits under.
    for (key, value) in conf.iter() {
        let _ = parse_size(value);
        let _ = parse_duration(value, Duration::from_millis(1));
        let _ = parse_duration(value, Duration::from_secs(3600));
        let _ = conf.get_bool(key, false);
        let _ = conf.get_list(key);
    }
}

/// The commented example configuration, nested tables, and overrides.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let example = include_str!("../../../docs/tusk.example.toml");
    let nested =
        "[dfs]\nreplication = 2\nblocksize = \"64m\"\n[dfs.heartbeat]\ninterval = \"1.5s\"\n\
                  [ipc.server]\n\"max.connections\" = 16\n[yarn.resourcemanager]\n\
                  \"scheduler.class\" = \"fair\"\n";
    let overrides = "\"dfs.replication\" = 1\n\0dfs.blocksize=1g\n\
                     dfs.heartbeat.interval=200ms\ndfs.datanode.data.dir=/a,/b , ,/c\n\
                     ipc.client.connection.maxidletime=10s\ndfs.permissions.enabled=FALSE\n";
    vec![
        ("example".to_string(), example.as_bytes().to_vec()),
        ("nested".to_string(), nested.as_bytes().to_vec()),
        ("overrides".to_string(), overrides.as_bytes().to_vec()),
    ]
}
