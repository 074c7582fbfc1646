//! `tusk local up` leaves Hadoop's client configuration in `DIR/conf/` (and prints the
//! `export HADOOP_CONF_DIR=` line for it): every address in it is the cluster's own.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::tusk;
use tusk_common::Configuration;

#[test]
fn local_up_writes_hadoops_client_configuration() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("cluster");
    let dir = state.to_str().unwrap();
    let up = tusk(
        home.path(),
        &["local", "up", "--dir", dir, "--datanodes", "1"],
    );
    let stderr = String::from_utf8_lossy(&up.stderr).to_string();
    let down = || tusk(home.path(), &["local", "down", "--dir", dir]);
    if !up.status.success() {
        down();
        panic!("local up failed: {stderr}");
    }
    let conf_dir = state.join("conf");
    assert!(
        stderr.contains(&format!("export HADOOP_CONF_DIR={}", conf_dir.display())),
        "{stderr}"
    );
    let uri = String::from_utf8_lossy(&up.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    let recorded = |file: &str| {
        std::fs::read_to_string(state.join(file))
            .unwrap()
            .trim()
            .to_string()
    };
    let rm = recorded("resourcemanager.addr");
    let rm_http = recorded("resourcemanager.http-addr");
    let nn_http = recorded("namenode.http-addr");
    let site = |name: &str| Configuration::from_file(&conf_dir.join(name)).unwrap();
    down();

    assert_eq!(
        site("core-site.xml").get("fs.defaultFS"),
        Some(uri.as_str())
    );
    assert_eq!(
        site("hdfs-site.xml").get("dfs.namenode.http-address"),
        Some(nn_http.as_str())
    );
    let yarn = site("yarn-site.xml");
    for key in [
        "yarn.resourcemanager.address",
        "yarn.resourcemanager.scheduler.address",
        "yarn.resourcemanager.resource-tracker.address",
    ] {
        assert_eq!(yarn.get(key), Some(rm.as_str()), "{key}");
    }
    assert_eq!(
        yarn.get("yarn.resourcemanager.webapp.address"),
        Some(rm_http.as_str())
    );
    assert_eq!(yarn.get("yarn.resourcemanager.hostname"), Some("127.0.0.1"));
    // `yarn logs` reads finished applications' logs, which the NodeManagers aggregate.
    assert_eq!(yarn.get("yarn.log-aggregation-enable"), Some("true"));
    assert_eq!(
        site("mapred-site.xml").get("mapreduce.framework.name"),
        Some("yarn")
    );
}
