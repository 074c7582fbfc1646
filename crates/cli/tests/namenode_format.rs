//! `tusk namenode -format` over a namespace asks first, as HDFS's does, and a DataNode
//! whose storage belongs to the namespace a format replaced refuses to register and
//! keeps its replicas; the NameNode binds the RPC host it is configured with.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use tusk_client::{ClientOptions, CreateOptions, DfsClient};

#[path = "support/process.rs"]
mod process;
use process::Started;

/// A daemon started by [`start`], with the file its standard error goes to.
struct Daemon {
    child: Child,
    log: PathBuf,
}

/// Starts a daemon (`tusk ROLE FLAGS... --addr-file ...`, standard error to
/// `<dir>/<role>.log`) and waits for its address file; `None` when it exited first.
fn start(role: &str, dir: &Path, flags: &[&str], defines: &[String]) -> (Daemon, Option<String>) {
    let addr_file = dir.join(format!("{role}.addr"));
    let _ = std::fs::remove_file(&addr_file);
    let log = dir.join(format!("{role}.log"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .arg(role)
        .args(flags)
        .arg("--addr-file")
        .arg(&addr_file)
        .args(defines.iter().flat_map(|d| ["-D", d.as_str()]))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start tusk");
    let daemon = |child| Daemon {
        child,
        log: log.clone(),
    };
    let what = format!("tusk {role} to serve or exit");
    match process::started(&mut child, &addr_file, Duration::from_secs(30), &what) {
        Started::Serving(addr) => (daemon(child), Some(addr)),
        Started::Exited => (daemon(child), None),
    }
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits for a daemon to exit on its own; whether it succeeded, and its standard error.
fn exited(mut daemon: Daemon, within: Duration) -> (bool, String) {
    let status = process::exit_status(
        &mut daemon.child,
        within,
        "the process to exit",
        String::new,
    );
    (
        status.success(),
        std::fs::read_to_string(&daemon.log).unwrap(),
    )
}

/// `tusk ARGS` with `input` on its standard input.
fn tusk_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new("timeout")
        .arg("30")
        .arg(env!("CARGO_BIN_EXE_tusk"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tusk");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn version_field(version_file: &Path, key: &str) -> String {
    std::fs::read_to_string(version_file)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("{} names no {key}", version_file.display()))
        .to_string()
}

/// The replica files (not their `.meta`) under a DataNode's volume.
fn replica_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name.starts_with("blk_") && !name.ends_with(".meta") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn format_asks_first_and_a_datanode_of_the_old_namespace_refuses_to_register() {
    let dir = tempfile::tempdir().unwrap();
    let name_dir = dir.path().join("name");
    let data_dir = dir.path().join("data");
    let name_define = format!("dfs.namenode.name.dir={}", name_dir.display());
    let nn_defines = [
        name_define.clone(),
        "dfs.namenode.http-address=127.0.0.1:0".to_string(),
    ];
    let (nn, addr) = start(
        "namenode",
        dir.path(),
        &["--listen", "127.0.0.1:0"],
        &nn_defines,
    );
    let addr = addr.expect("the namenode starts");
    let dn_defines = [
        format!("fs.defaultFS=hdfs://{addr}"),
        format!("dfs.datanode.data.dir={}", data_dir.display()),
    ];
    let (dn, dn_addr) = start(
        "datanode",
        dir.path(),
        &["--listen", "127.0.0.1:0"],
        &dn_defines,
    );
    assert!(dn_addr.is_some(), "the datanode starts");
    let client = DfsClient::new(ClientOptions {
        namenode: addr.clone(),
        ..Default::default()
    });
    let opts = CreateOptions {
        replication: Some(1),
        ..Default::default()
    };
    client
        .write_file("/kept", &[7u8; 4096], opts)
        .await
        .unwrap();
    let replicas = replica_files(&data_dir);
    assert_eq!(replicas.len(), 1, "{replicas:?}");
    stop(nn.child);
    let version = name_dir.join("current/VERSION");
    let old_cluster = version_field(&version, "clusterID");

    // Hadoop's spellings; without a yes, nothing is erased.
    let format = ["namenode", "-format", "-D", name_define.as_str()];
    let no = tusk_with_input(&format, "N\n");
    let stderr = String::from_utf8_lossy(&no.stderr);
    let item = format!("Storage Directory root= {}", name_dir.display());
    assert!(!no.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("Re-format filesystem in {item} ? (Y or N) "))
            && stderr.contains(&format!("Format aborted in {item}")),
        "{stderr}"
    );
    let unanswered = tusk_with_input(&format, "");
    assert!(!unanswered.status.success());
    let batch = tusk_with_input(
        &["namenode", "-format", "-nonInteractive", "-D", &name_define],
        "Y\n",
    );
    let stderr = String::from_utf8_lossy(&batch.stderr);
    assert!(!batch.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "Running in non-interactive mode, and data appears to exist in {item}. Not formatting."
        )),
        "{stderr}"
    );
    assert_eq!(version_field(&version, "clusterID"), old_cluster);
    let (nn, _) = start("namenode", dir.path(), &["--listen", &addr], &nn_defines);
    assert!(
        client.get_file_info("/kept").await.unwrap().is_some(),
        "a refused format erased the namespace"
    );
    stop(nn.child);

    let forced = tusk_with_input(
        &[
            "namenode",
            "-format",
            "-force",
            "-clusterid",
            "CID-reformatted",
            "-D",
            &name_define,
        ],
        "",
    );
    let stderr = String::from_utf8_lossy(&forced.stderr);
    assert!(forced.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("Data exists in {item}. Formatting anyway.")),
        "{stderr}"
    );
    let new_cluster = version_field(&version, "clusterID");
    assert_eq!(new_cluster, "CID-reformatted");

    // The running DataNode meets the new namespace when it registers again: it stops
    // instead of reporting its replicas there.
    let (nn, _) = start("namenode", dir.path(), &["--listen", &addr], &nn_defines);
    let (_, stderr) = exited(dn, Duration::from_secs(60));
    let refusal = format!(
        "Incompatible clusterIDs in {}: namenode clusterID = {new_cluster}; datanode clusterID = {old_cluster}",
        std::fs::canonicalize(&data_dir).unwrap().display()
    );
    assert!(stderr.contains(&refusal), "{stderr}");
    // Started again, it refuses to register and exits.
    let (dn, dn_addr) = start(
        "datanode",
        dir.path(),
        &["--listen", "127.0.0.1:0"],
        &dn_defines,
    );
    assert!(
        dn_addr.is_none(),
        "a datanode of the old namespace registered"
    );
    let (ok, stderr) = exited(dn, Duration::from_secs(30));
    assert!(!ok && stderr.contains(&refusal), "{stderr}");
    assert!(client.datanode_report(1).await.unwrap().is_empty());
    stop(nn.child);
    assert_eq!(replica_files(&data_dir), replicas, "replicas were deleted");
}

#[test]
fn namenode_binds_the_configured_rpc_host_unless_a_bind_host_widens_it() {
    let dir = tempfile::tempdir().unwrap();
    let name_define = format!(
        "dfs.namenode.name.dir={}",
        dir.path().join("name").display()
    );
    let bound = |defines: &[&str]| {
        let http_file = dir.path().join("nn.http");
        let mut all = vec![name_define.clone()];
        all.extend(defines.iter().map(|d| d.to_string()));
        let http_flags = ["--http-addr-file", http_file.to_str().unwrap()];
        let (nn, addr) = start("namenode", dir.path(), &http_flags, &all);
        let addr = addr.expect("the namenode started");
        let http = std::fs::read_to_string(&http_file).unwrap();
        stop(nn.child);
        let host = |a: &str| a.rsplit_once(':').unwrap().0.to_string();
        (host(&addr), host(http.trim()))
    };
    assert_eq!(
        bound(&["fs.defaultFS=hdfs://127.0.0.1:0"]).0,
        "127.0.0.1",
        "the host of fs.defaultFS"
    );
    assert_eq!(
        bound(&["dfs.namenode.rpc-address=127.0.0.1:0"]).0,
        "127.0.0.1",
        "the host of dfs.namenode.rpc-address"
    );
    assert_eq!(
        bound(&[
            "dfs.namenode.rpc-address=127.0.0.1:0",
            "dfs.namenode.http-address=127.0.0.1:0",
            "dfs.namenode.rpc-bind-host=0.0.0.0",
            "dfs.namenode.http-bind-host=0.0.0.0",
        ]),
        ("0.0.0.0".to_string(), "0.0.0.0".to_string()),
        "the bind hosts"
    );
}
