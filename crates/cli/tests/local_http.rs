//! `tusk local up` starts every daemon's web server on a free port, records each
//! address in `<dir>/<daemon>.http-addr`, prints the NameNode's and ResourceManager's,
//! and `tusk local status` lists them; WebHDFS answers on the NameNode's.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::{http_get, tusk};

#[test]
fn local_up_records_and_prints_every_web_address() {
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("cluster");
    let dir = state.to_str().unwrap();
    let up = tusk(
        home.path(),
        &["local", "up", "--dir", dir, "--datanodes", "2", "--format"],
    );
    let stderr = String::from_utf8_lossy(&up.stderr).to_string();
    assert!(up.status.success(), "local up failed: {stderr}");
    let recorded = |name: &str| {
        std::fs::read_to_string(state.join(format!("{name}.http-addr")))
            .unwrap_or_else(|e| panic!("{name}.http-addr: {e}"))
    };
    let nn_http = recorded("namenode");
    assert!(
        stderr.contains(&format!("dfs.namenode.http-address {nn_http}")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "yarn.resourcemanager.webapp.address {}",
            recorded("resourcemanager")
        )),
        "{stderr}"
    );
    let mut ports: Vec<String> = ["namenode", "datanode0", "datanode1", "resourcemanager"]
        .iter()
        .chain(&["nodemanager0", "nodemanager1"])
        .map(|n| recorded(n))
        .collect();
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), 6, "a port each: {ports:?}");

    let answer = http_get(&nn_http, "/webhdfs/v1/?op=GETFILESTATUS");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""type":"DIRECTORY""#), "{answer}");

    let status = tusk(home.path(), &["local", "status", "--dir", dir]);
    let listed = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(listed.contains(&format!("http {nn_http}")), "{listed}");

    let down = tusk(home.path(), &["local", "down", "--dir", dir]);
    assert!(down.status.success());

    // Started again in the same directory: the same URI and web addresses.
    let uri = String::from_utf8_lossy(&up.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    let again = tusk(
        home.path(),
        &["local", "up", "--dir", dir, "--datanodes", "2", "--no-yarn"],
    );
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let uri_again = String::from_utf8_lossy(&again.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    assert_eq!(uri_again, uri, "the NameNode's port is kept");
    assert_eq!(recorded("namenode"), nn_http, "the web port is kept");
    let answer = http_get(&nn_http, "/webhdfs/v1/?op=GETFILESTATUS");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let down = tusk(home.path(), &["local", "down", "--dir", dir]);
    assert!(down.status.success());
}
