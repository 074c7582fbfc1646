//! Which address a daemon's HTTP server binds.

use tusk_common::Configuration;

/// The address for `key` (e.g. `dfs.namenode.http-address`): the configured value when
/// set; otherwise, when the daemon's RPC address was chosen on the command line with
/// port 0 (`rpc_listen`), the same host with port 0 — a daemon asked to pick its ports
/// picks this one too, so many daemons on one host (tests, `tusk local`, benchmarks)
/// never collide; otherwise Hadoop's default `default`.
pub fn http_address(
    conf: &Configuration,
    key: &str,
    default: &str,
    rpc_listen: Option<&str>,
) -> String {
    if let Some(v) = conf.get(key).map(str::trim).filter(|v| !v.is_empty()) {
        return v.to_string();
    }
    match rpc_listen.and_then(|l| l.rsplit_once(':')) {
        Some((host, "0")) => format!("{host}:0"),
        _ => default.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_then_picked_then_default() {
        let mut conf = Configuration::new();
        let key = "dfs.namenode.http-address";
        assert_eq!(
            http_address(&conf, key, "0.0.0.0:9870", None),
            "0.0.0.0:9870"
        );
        assert_eq!(
            http_address(&conf, key, "0.0.0.0:9870", Some("127.0.0.1:8020")),
            "0.0.0.0:9870"
        );
        assert_eq!(
            http_address(&conf, key, "0.0.0.0:9870", Some("127.0.0.1:0")),
            "127.0.0.1:0"
        );
        conf.set(key, "10.0.0.1:50070");
        assert_eq!(
            http_address(&conf, key, "0.0.0.0:9870", Some("127.0.0.1:0")),
            "10.0.0.1:50070"
        );
    }
}
