//! The commented example configuration parses and every daemon accepts it.

#[test]
fn example_config_parses_with_defaults() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/tusk.example.toml"
    ))
    .unwrap();
    let conf = tusk_common::Configuration::from_toml(&text).unwrap();
    assert_eq!(conf.get_u64("dfs.replication", 0).unwrap(), 3);
    assert_eq!(conf.get_u64("dfs.blocksize", 0).unwrap(), 128 << 20);
    assert_eq!(
        conf.get("dfs.client.write.replication-mode"),
        Some("pipeline")
    );
    let nn = tusk_namenode::NameNodeOptions::from_conf(&conf).unwrap();
    // The limits in the example are the defaults.
    let defaults = tusk_namenode::NameNodeOptions::default();
    assert_eq!(nn.fs_limits, defaults.fs_limits);
    assert_eq!(nn.rpc, defaults.rpc);
    assert!(
        nn.block_access_token_enable,
        "block access tokens on by default"
    );
    assert_eq!(
        (
            nn.block_access_key_update_interval,
            nn.block_access_token_lifetime,
            nn.block_access_token_protobuf
        ),
        (
            defaults.block_access_key_update_interval,
            defaults.block_access_token_lifetime,
            defaults.block_access_token_protobuf
        )
    );
    let dn = tusk_datanode::DataNodeOptions::from_conf(&conf).unwrap();
    assert_eq!(dn.max_transfer_threads, 4096);
    tusk_client::ClientOptions::from_conf(&conf).unwrap();
    let rm = tusk_resourcemanager::ResourceManagerOptions::from_conf(&conf).unwrap();
    assert_eq!(
        rm.status_policy,
        tusk_resourcemanager::status_policy::StatusPolicyOptions::default()
    );
    tusk_nodemanager::NodeManagerOptions::from_conf(&conf).unwrap();
}
