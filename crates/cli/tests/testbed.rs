//! `tusk testbed` on real namespaces, loop devices and cgroups (needs root; skips with a
//! message where it is not root or the kernel lacks cgroup v1 blkio): a 3-node testbed's
//! links and volumes deliver their profiles, its nodes report their own disk and network
//! load, replicas land on three emulated nodes, and `down` leaves nothing behind; bad
//! descriptions create nothing; every shipped description runs a wordcount.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tusk_client::{ClientOptions, DfsClient};
use tusk_common::wait::wait_for_blocking;
use tusk_common::Configuration;
use tusk_yarn_client::ApplicationClient;

/// One testbed at a time: rates measured side by side would share the host's CPUs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The turn of a test that builds a testbed, held until it drops; none where testbeds
/// cannot be built here (the test then skips).
fn one_testbed_at_a_time() -> Option<MutexGuard<'static, ()>> {
    if !support::can_run_testbeds() {
        return None;
    }
    Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}

#[path = "support/process.rs"]
mod process;
#[path = "support/testbed.rs"]
mod support;

fn tusk(home: &Path, args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("300")
        .arg(env!("CARGO_BIN_EXE_tusk"))
        .args(args)
        .env("TUSK_HOME", home)
        .env("TUSK_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("run tusk")
}

/// A testbed directory that is torn down however the test ends.
struct Bed {
    home: tempfile::TempDir,
    dir: PathBuf,
}

impl Bed {
    /// The directory `tb` in a new `TUSK_HOME`, with no testbed in it yet.
    fn new() -> Bed {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("tb");
        Bed { home, dir }
    }

    fn up(description: &str) -> Bed {
        Bed::up_with(description, &[])
    }

    /// `tusk testbed up` of `description`, with `extra` arguments.
    fn up_with(description: &str, extra: &[&str]) -> Bed {
        let bed = Bed::new();
        let file = bed.home.path().join("cluster.toml");
        std::fs::write(&file, description).unwrap();
        let mut args = vec![
            "testbed",
            "up",
            file.to_str().unwrap(),
            "--dir",
            bed.dir_str(),
        ];
        args.extend_from_slice(extra);
        bed.ok(&args);
        bed
    }

    fn dir_str(&self) -> &str {
        self.dir.to_str().unwrap()
    }

    /// `tusk ARGS`, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = tusk(self.home.path(), args);
        assert!(
            out.status.success(),
            "tusk {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn record(&self) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(self.dir.join("testbed.json")).unwrap())
            .unwrap()
    }

    /// The text at JSON `pointer` in the testbed's record.
    fn record_str(&self, pointer: &str) -> String {
        let record = self.record();
        record
            .pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_else(|| panic!("no {pointer} in {record}"))
            .to_string()
    }

    /// `tusk fs -fs FS ARGS`; its stdout.
    fn fs(&self, fs: &str, args: &[&str]) -> String {
        let mut all = vec!["fs", "-fs", fs];
        all.extend_from_slice(args);
        self.ok(&all)
    }

    /// `tusk job SUBCOMMAND` against the testbed's file system and ResourceManager, with
    /// `args` after those keys; its stdout.
    fn job(&self, subcommand: &str, args: &[&str]) -> String {
        let fs = format!("fs.defaultFS={}", self.record_str("/default_fs"));
        let rm = format!(
            "yarn.resourcemanager.address={}",
            self.record_str("/rm_address")
        );
        let mut all = vec!["job", subcommand, "-D", &fs, "-D", &rm];
        all.extend_from_slice(args);
        self.ok(&all)
    }

    fn ip(&self, node: &str) -> String {
        self.node(node)["net"]["ip"].as_str().unwrap().to_string()
    }

    fn node(&self, node: &str) -> serde_json::Value {
        self.record()["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["spec"]["name"] == node)
            .unwrap()
            .clone()
    }

    /// Where `node`'s first volume is mounted.
    fn volume(&self, node: &str) -> String {
        self.node(node)["volumes"][0]["mount"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The addresses of `nodes`, sorted.
    fn ips(&self, nodes: &[&str]) -> Vec<String> {
        let mut ips: Vec<String> = nodes.iter().map(|n| self.ip(n)).collect();
        ips.sort();
        ips
    }

    fn exec(&self, node: &str, command: &[&str]) -> std::process::Child {
        let mut args = vec!["testbed", "exec", "--dir", self.dir_str(), node, "--"];
        args.extend_from_slice(command);
        Command::new(env!("CARGO_BIN_EXE_tusk"))
            .args(&args)
            .env("TUSK_HOME", self.home.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn down(&self) {
        self.ok(&["testbed", "down", "--dir", self.dir_str()]);
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        if self.dir.join("testbed.json").exists() {
            let _ = tusk(
                self.home.path(),
                &["testbed", "down", "--dir", self.dir_str()],
            );
        }
    }
}

const THREE: &str = r#"
name = "three"
[defaults]
link = "1gige"
daemons = ["datanode", "nodemanager"]
volumes = { count = 1, size_mb = 256, profile = "hdd" }
[[node]]
name = "master"
daemons = ["namenode", "resourcemanager", "datanode", "nodemanager"]
[[node]]
name = "w"
count = 2
"#;

/// Each NodeManager's last reported (disk %, receive B/s), by node IP.
async fn node_status(rm: &ApplicationClient) -> Vec<(String, f64, f64)> {
    rm.nodes()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|n| {
            let s = n.status.unwrap_or_default();
            let ip = n.node_id.split(':').next().unwrap_or("").to_string();
            (ip, s.disk_utilization_pct, s.net_rx_bytes_per_sec)
        })
        .collect()
}

/// Polls until `check` holds for the NodeManagers' status, for up to `secs`.
fn wait_status(
    rm_addr: &str,
    secs: u64,
    what: &str,
    check: impl Fn(&[(String, f64, f64)]) -> bool,
) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rm = ApplicationClient::new(rm_addr);
    let met = wait_for_blocking(what, Duration::from_secs(secs), || {
        check(&rt.block_on(node_status(&rm)))
    });
    if let Err(e) = met {
        panic!("{e}; last status {:?}", rt.block_on(node_status(&rm)));
    }
}

/// What `program ARGS` prints on stdout.
fn output_of(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn netns_list() -> String {
    output_of("ip", &["netns", "list"])
}

/// Asserts that nothing of testbed `tag` in `dir` is left: no network namespace, loop
/// device or mount.
fn assert_no_namespace_loop_device_or_mount(tag: &str, dir: &str) {
    let ns = netns_list();
    assert!(!ns.contains(&format!("tusk-{tag}-")), "{ns}");
    let loops = output_of("losetup", &["-a"]);
    assert!(!loops.contains(dir), "{loops}");
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(dir), "{mounts}");
}

fn within(measured: f64, target: f64, share: f64) -> bool {
    (measured - target).abs() <= target * share
}

/// A client of the file system at `fs`, with a runtime to drive it.
fn dfs(fs: &str) -> (tokio::runtime::Runtime, DfsClient) {
    let mut conf = Configuration::new();
    conf.set("fs.defaultFS", fs.to_string());
    (
        tokio::runtime::Runtime::new().unwrap(),
        DfsClient::new(ClientOptions::from_conf(&conf).unwrap()),
    )
}

/// The addresses holding the first block of `path`, sorted.
fn first_block_hosts(rt: &tokio::runtime::Runtime, client: &DfsClient, path: &str) -> Vec<String> {
    let blocks = rt
        .block_on(client.block_locations(path, 0, u64::MAX >> 1))
        .unwrap();
    let mut ips: Vec<String> = blocks.blocks[0]
        .locs
        .iter()
        .map(|l| l.id.ip_addr.clone())
        .collect();
    ips.sort();
    ips
}

#[test]
fn a_three_node_testbed_delivers_its_profiles_and_leaves_nothing() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    let bed = Bed::up(THREE);
    let record = bed.record();
    let tag = record["tag"].as_str().unwrap().to_string();
    let dev_ids: Vec<String> = record["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["volumes"].as_array().unwrap().clone())
        .map(|v| v["dev_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(dev_ids.len(), 3);
    let rm_addr = record["rm_address"].as_str().unwrap().to_string();
    let fs = record["default_fs"].as_str().unwrap().to_string();

    // Links and volumes deliver their profile within 15%. A measurement is 2 s of a
    // shared host, so one that misses is taken again (up to three times); the rates
    // of the last one are in the message.
    let json = bed.home.path().join("rates.json");
    let off_profile = |r: &serde_json::Value| {
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        !(within(f("link_rx_mbit"), f("link_target_mbit"), 0.15)
            && within(f("link_tx_mbit"), f("link_target_mbit"), 0.15)
            && within(f("disk_write_mbps"), f("disk_write_target_mbps"), 0.15))
    };
    let mut misses = Vec::new();
    for _ in 0..3 {
        bed.ok(&[
            "testbed",
            "measure",
            "--dir",
            bed.dir_str(),
            "--seconds",
            "2",
            "--json",
            json.to_str().unwrap(),
        ]);
        let rates: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        misses = rates
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| off_profile(r))
            .cloned()
            .collect();
        if misses.is_empty() {
            break;
        }
    }
    assert!(misses.is_empty(), "off their profile: {misses:?}");

    // A write with replication 3 lands on three different emulated nodes.
    let local = bed.home.path().join("one.bin");
    std::fs::write(&local, vec![7u8; 1 << 20]).unwrap();
    bed.fs(&fs, &["-put", local.to_str().unwrap(), "/one.bin"]);
    let (rt, client) = dfs(&fs);
    // The close needs one reported replica (minReplication); the other DataNodes'
    // incremental reports may arrive a moment later, so poll for all three.
    let want = bed.ips(&["master", "w1", "w2"]);
    let all_three = wait_for_blocking("three replicas", Duration::from_secs(15), || {
        first_block_hosts(&rt, &client, "/one.bin") == want
    });
    assert!(
        all_three.is_ok(),
        "{:?} != {want:?}",
        first_block_hosts(&rt, &client, "/one.bin")
    );

    // A node whose volume is saturated reports ~100% disk; the others ~0.
    let w1 = bed.ip("w1");
    let w1_volume = bed.volume("w1");
    let mut dd = bed.exec(
        "w1",
        &[
            "dd",
            "if=/dev/zero",
            &format!("of={w1_volume}/saturate"),
            "bs=1M",
            // 20 s at the volume's 10 MB/s, ended below once seen: an 8 s dd could end
            // before a slow host's status query read it.
            "count=200",
            "oflag=direct",
        ],
    );
    wait_status(&rm_addr, 20, "w1's disk never looked saturated", |s| {
        s.len() == 3
            && s.iter().all(|(ip, disk, _)| match *ip == w1 {
                true => *disk >= 80.0,
                false => *disk <= 20.0,
            })
    });
    // `tusk testbed status` shows each NodeManager's status as the ResourceManager has it.
    let status = bed.ok(&["testbed", "status", "--dir", bed.dir_str()]);
    let w1_line = status
        .lines()
        .find(|l| l.starts_with(&format!("nodemanager {w1}:")))
        .unwrap_or_else(|| panic!("no nodemanager line for w1: {status}"));
    let disk: f64 = w1_line
        .split("disk ")
        .nth(1)
        .and_then(|d| d.split('%').next())
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no disk % in {w1_line}"));
    assert!(disk >= 50.0, "{w1_line}");
    assert!(
        w1_line.contains(" to-fetch 0 B blocked: nothing"),
        "no policy is on: {w1_line}"
    );
    // dd runs inside the node's namespaces as a child of `tusk testbed exec`: end it
    // itself, then its parent.
    let saturate = format!("of={w1_volume}/saturate");
    Command::new("pkill")
        .args(["-KILL", "-f", &saturate])
        .status()
        .unwrap();
    dd.wait().ok();
    std::fs::remove_file(Path::new(&w1_volume).join("saturate")).ok();

    // A node receiving a big transfer reports its receive rate; the others do not.
    let w2 = bed.ip("w2");
    let listen = format!("{w2}:5300");
    let sink = bed.exec("w2", &["tusk", "testbed", "sink", "--listen", &listen]);
    let sender = std::thread::spawn({
        let listen = listen.clone();
        // 8 s at 12.5 MB/s: long enough for several heartbeats.
        move || tusk_testbed::measure::source(&listen, 100_000_000)
    });
    let link_bytes_per_sec = 100e6 / 8.0;
    wait_status(&rm_addr, 20, "w2's receive rate never showed", |s| {
        s.len() == 3
            && s.iter().all(|(ip, _, rx)| match *ip == w2 {
                true => *rx >= 0.6 * link_bytes_per_sec,
                false => *rx <= 0.05 * link_bytes_per_sec,
            })
    });
    sender.join().unwrap().unwrap();
    sink.wait_with_output().unwrap();

    // Fault hooks: a cut link stops traffic until restored; a filled volume has no room;
    // a killed DataNode is gone and a restarted one registers again.
    let fault = |args: &[&str]| {
        let mut all = vec!["testbed", "fault", "--dir", bed.dir_str()];
        all.extend_from_slice(args);
        bed.ok(&all);
    };
    let reachable = |ip: &str| {
        std::net::TcpStream::connect_timeout(
            &format!("{ip}:9866").parse().unwrap(),
            Duration::from_millis(500),
        )
        .is_ok()
    };
    assert!(reachable(&w1));
    fault(&["link-cut", "w1"]);
    assert!(!reachable(&w1));
    fault(&["link-restore", "w1"]);
    assert!(reachable(&w1));
    fault(&["fill", "w1"]);
    let probe = Path::new(&w1_volume).join("more");
    assert!(
        std::fs::write(&probe, vec![0u8; 1 << 20]).is_err(),
        "a filled volume took 1 MiB"
    );
    fault(&["unfill", "w1"]);
    std::fs::write(&probe, vec![0u8; 1 << 20]).unwrap();
    let live = || {
        rt.block_on(client.datanode_report(1))
            .map(|d| d.len())
            .unwrap_or(0)
    };
    fault(&["kill", "w1", "datanode"]);
    assert!(!reachable(&w1));
    fault(&["restart", "w1", "datanode"]);
    wait_for_blocking("the restarted DataNode", Duration::from_secs(30), || {
        reachable(&w1) && live() == 3
    })
    .unwrap();

    // Down leaves no namespace, link, mount, loop device, cgroup or throttle rule.
    bed.down();
    assert_no_namespace_loop_device_or_mount(&tag, bed.dir_str());
    let links = output_of("ip", &["-o", "link"]);
    assert!(!links.contains(&format!("tb{tag}")), "{links}");
    for ctl in ["blkio", "memory", "cpu", "cpuacct"] {
        assert!(!Path::new(&format!("/sys/fs/cgroup/{ctl}/tusk-testbed/{tag}")).exists());
    }
    let rules =
        std::fs::read_to_string("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device").unwrap();
    for id in &dev_ids {
        assert!(
            !rules
                .lines()
                .any(|l| l.split_whitespace().next() == Some(id)),
            "{rules}"
        );
    }
    assert!(!bed.dir.join("testbed.json").exists());
}

/// A node with `dirty_mb` stands for a machine that holds that much unwritten data, scaled:
/// past it a buffered writer waits for the volume; `down` gives the limit back.
#[test]
fn a_dirty_limit_makes_buffered_writers_wait_for_the_volume() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    // The workers hold 40 MB of dirty data: 4 MB at scale 0.1, where the HDD writes 10 MB/s.
    let bed = Bed::up_with(
        &THREE.replace("count = 2\n", "count = 2\ndirty_mb = 40\n"),
        &["--no-daemons"],
    );
    // w1 takes 40 MiB at about its volume's rate; master, left to the host's limits, at
    // memory speed.
    let bdi = |id: &str, file: &str| -> u64 {
        let path = format!("/sys/class/bdi/{id}/{file}");
        let text = std::fs::read_to_string(&path).unwrap();
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{path}: {text}"))
    };
    let dev = |node: &str| {
        bed.node(node)["volumes"][0]["dev_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(bdi(&dev("w1"), "strict_limit"), 1);
    assert!(within(bdi(&dev("w1"), "max_bytes") as f64, 4e6, 0.05));
    assert_eq!(bdi(&dev("master"), "strict_limit"), 0);
    let buffered_write_mbps = |node: &str| {
        let target = format!("{}/dirty-probe", bed.volume(node));
        let of = format!("of={target}");
        let started = Instant::now();
        let dd = bed.exec(node, &["dd", "if=/dev/zero", &of, "bs=1M", "count=40"]);
        assert!(dd.wait_with_output().unwrap().status.success());
        let mbps = 40.0 * 1.048576 / started.elapsed().as_secs_f64();
        // Unwritten pages go with the file, so nothing is left to write back later.
        std::fs::remove_file(&target).unwrap();
        mbps
    };
    let (capped, host) = (buffered_write_mbps("w1"), buffered_write_mbps("master"));
    assert!(
        capped < 15.0,
        "w1 took a buffered write at {capped:.1} MB/s"
    );
    assert!(
        host > 3.0 * capped,
        "master {host:.1} MB/s, w1 {capped:.1} MB/s"
    );
    let dev_ids = [dev("w1"), dev("w2"), dev("master")];
    bed.down();
    // A loop device keeps its dirty limit when detached: down gave it back.
    for id in &dev_ids {
        let limit = format!("/sys/class/bdi/{id}/strict_limit");
        if let Ok(text) = std::fs::read_to_string(&limit) {
            assert_eq!(text.trim(), "0", "{limit}");
        }
    }
}

#[test]
fn bad_descriptions_create_nothing() {
    if !support::can_run_testbeds() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("tb");
    let try_up = |text: &str, prefix: &[&str]| -> String {
        let file = home.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let mut args: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        args.push(env!("CARGO_BIN_EXE_tusk").into());
        args.extend(
            [
                "testbed",
                "up",
                file.to_str().unwrap(),
                "--dir",
                dir.to_str().unwrap(),
            ]
            .map(String::from),
        );
        let out = Command::new(&args[0])
            .args(&args[1..])
            .env("TUSK_HOME", home.path())
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(!dir.join("testbed.json").exists());
        assert!(!dir.join("volumes").exists());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = try_up(&THREE.replace("\"hdd\"", "\"floppy\""), &[]);
    assert!(e.contains("unknown volume profile 'floppy'"), "{e}");
    let e = try_up(
        &THREE.replace("name = \"w\"\ncount = 2", "name = \"master\""),
        &[],
    );
    assert!(e.contains("two nodes are named 'master'"), "{e}");
    let e = try_up(&THREE.replace("size_mb = 256", "size_mb = 900000000"), &[]);
    assert!(e.contains("only") && e.contains("MB is free"), "{e}");
    let e = try_up(
        THREE,
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ],
    );
    assert!(e.contains("needs root"), "{e}");
}

/// Every shipped description comes up, stores and reads a file, and runs a wordcount.
#[test]
fn every_shipped_description_runs_a_wordcount() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&shipped)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for file in files {
        let bed = Bed::up(&with_small_volumes(
            &std::fs::read_to_string(&file).unwrap(),
        ));
        let fs = bed.record_str("/default_fs");
        let input = bed.home.path().join("words.txt");
        std::fs::write(&input, "to be or not to be\nthat is the question\n").unwrap();
        bed.fs(&fs, &["-mkdir", "-p", "/in"]);
        bed.fs(&fs, &["-put", input.to_str().unwrap(), "/in/"]);
        let back = bed.home.path().join("back.txt");
        bed.fs(&fs, &["-get", "/in/words.txt", back.to_str().unwrap()]);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&input).unwrap()
        );
        bed.job("run", &["wordcount", "/in", "/out"]);
        let out = bed.fs(&fs, &["-cat", "/out/part-r-00000"]);
        assert!(
            out.lines().any(|l| l == "be\t2"),
            "{}: {out}",
            file.display()
        );
        bed.down();
    }
}

/// The description with every volume cut to at most 256 MB: the wordcount needs a few
/// KB, and the shipped sizes (uniform8's come to 17 GB of sparse files, which the testbed
/// refuses unless the host disk could hold them written out) would make the test depend
/// on how full the host's disk is.
fn with_small_volumes(description: &str) -> String {
    fn cap(value: &mut toml::Value) {
        match value {
            toml::Value::Table(table) => {
                for (key, v) in table.iter_mut() {
                    match v {
                        toml::Value::Integer(mb) if key == "size_mb" => *mb = (*mb).min(256),
                        _ => cap(v),
                    }
                }
            }
            toml::Value::Array(items) => items.iter_mut().for_each(cap),
            _ => {}
        }
    }
    let mut value: toml::Value = toml::from_str(description).expect("a shipped description");
    cap(&mut value);
    toml::to_string(&value).unwrap()
}

/// Apache Hadoop's own daemons on the same emulated nodes: Tusk's client stores and reads
/// a file in Hadoop's HDFS with replicas on three nodes, and Hadoop's wordcount runs on
/// Hadoop's YARN.
#[test]
fn hadoop_runs_on_the_same_nodes() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/hadoop-classpath.sh");
    let out = Command::new(&script)
        .output()
        .expect("run hadoop-classpath.sh");
    assert!(
        out.status.success(),
        "resolving Hadoop's classpath: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let classpath = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let description = THREE.replace(
        "name = \"three\"",
        "name = \"three\"\n[conf]\n\"dfs.blocksize\" = \"33554432\"",
    );
    let bed = Bed::up_with(&description, &["--hadoop-classpath", &classpath]);
    let hadoop_fs = bed.record_str("/hadoop/default_fs");
    assert!(hadoop_fs.ends_with(":18020"), "{hadoop_fs}");
    let local = bed.home.path().join("words.txt");
    std::fs::write(&local, "to be or not to be\n".repeat(1000)).unwrap();
    bed.fs(&hadoop_fs, &["-mkdir", "-p", "/in"]);
    bed.fs(
        &hadoop_fs,
        &["-put", local.to_str().unwrap(), "/in/words.txt"],
    );
    let (rt, client) = dfs(&hadoop_fs);
    assert_eq!(
        first_block_hosts(&rt, &client, "/in/words.txt"),
        bed.ips(&["master", "w1", "w2"]),
        "Hadoop's replicas"
    );
    // Its output to a file: the job client logs to stdout, more than a pipe holds.
    let job_log = std::fs::File::create(bed.home.path().join("wordcount.log")).unwrap();
    let mut job = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["testbed", "exec", "--dir", bed.dir_str(), "master", "--"])
        .args(["hadoop", "examples", "wordcount", "/in", "/out"])
        .env("TUSK_HOME", bed.home.path())
        .stdout(job_log.try_clone().unwrap())
        .stderr(job_log)
        .spawn()
        .unwrap();
    let status = process::exit_status(
        &mut job,
        Duration::from_secs(300),
        "Hadoop's wordcount",
        || format!("; see {}", bed.dir.join("logs").display()),
    );
    assert!(status.success(), "Hadoop's wordcount failed");
    let out = bed.fs(&hadoop_fs, &["-cat", "/out/part-r-00000"]);
    assert!(out.lines().any(|l| l == "be\t2000"), "{out}");
    bed.down();
    let ps = output_of("ps", &["-eo", "args"]);
    assert!(
        !ps.contains(bed.dir_str()),
        "Hadoop processes outlived down:\n{ps}"
    );
}

/// A crash that loses the record (here: `up` built the nodes, then the record is gone)
/// still leaves `down` able to find and remove everything by its tag.
#[test]
fn down_without_a_record_removes_everything() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    let bed = Bed::up_with(THREE, &["--no-daemons"]);
    let tag = bed.record_str("/tag");
    // A process of a node's, as a daemon would be.
    let group = bed.record_str("/nodes/1/groups/0");
    // Detached (its shell exits at once), so init reaps it as it reaps a daemon whose
    // `up` has returned.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {group}/cgroup.procs && (sleep 600 >/dev/null 2>&1 &) && sleep 0.1 && cat {group}/cgroup.procs"
        ))
        .output()
        .unwrap();
    let pids: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    assert!(!pids.is_empty());
    std::fs::remove_file(bed.dir.join("testbed.json")).unwrap();
    bed.down();
    for pid in pids {
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            !cmdline.starts_with("sleep"),
            "the node's process {pid} outlived down"
        );
    }
    assert_no_namespace_loop_device_or_mount(&tag, bed.dir_str());
    assert!(!Path::new(&format!("/sys/fs/cgroup/blkio/tusk-testbed/{tag}")).exists());
}

/// Three nodes, one of whose volume streams at a tenth of an HDD's rate. A held map is
/// placed on a busy node anyway only after `starvation-ms` (default 10 s) or when no
/// other node could run it, so the default starvation rule applies.
fn slow_disk_testbed(policies: &str) -> String {
    format!(
        r#"
name = "slowdisk"
replication = 1
[conf]
"tusk.yarn.scheduler.status-aware.policies" = "{policies}"
[defaults]
link = "1gige"
daemons = ["datanode", "nodemanager"]
volumes = {{ count = 1, size_mb = 512, profile = "hdd" }}
nodemanager = {{ memory_mb = 4096, vcores = 2 }}
[[node]]
name = "master"
daemons = ["namenode", "resourcemanager", "datanode", "nodemanager"]
[[node]]
name = "fast"
[[node]]
name = "slow"
volumes = {{ count = 1, size_mb = 512, profile = {{ name = "slow-hdd", read_mbps = 10, write_mbps = 10 }} }}
"#
    )
}

/// Runs a map-heavy job (RandomTextWriter: every map writes its output to its own node's
/// volume, replication 1) on the slow-disk testbed; returns how many maps succeeded on
/// each node.
fn maps_per_node(policies: &str) -> std::collections::BTreeMap<&'static str, usize> {
    let bed = Bed::up(&slow_disk_testbed(policies));
    // Saturate the slow volume for the whole job with direct writes (map output goes to
    // the page cache, and the job would end before the kernel wrote it back). Small
    // requests: the NodeManager's status watch samples several times a second, and a
    // 1 MiB write completing once a second at 1 MB/s would read as idle in most samples.
    // The same 94 MB are rewritten until `down` (at most 5 minutes): one pass lasts about
    // 9 s, and on a loaded host the job outlasted it, so the slow node sat idle and took
    // maps for the job's last part with the policy on too.
    let slow_volume = bed.volume("slow");
    let rewrite = format!(
        "while :; do dd if=/dev/zero of={slow_volume}/load bs=64k count=1440 oflag=direct conv=notrunc status=none; done"
    );
    let mut load = bed.exec("slow", &["timeout", "300", "sh", "-c", &rewrite]);
    let rm = bed.record_str("/rm_address");
    let slow_ip = bed.ip("slow");
    wait_status(&rm, 30, "the slow node reports its volume busy", |s| {
        s.iter()
            .any(|(ip, disk, _)| *ip == slow_ip && *disk >= 90.0)
    });
    let out = bed.job(
        "run",
        &[
            "-D",
            "dfs.replication=1",
            "randomtextwriter",
            "/out",
            "--maps",
            "40",
            "--bytes-per-map",
            "3m",
        ],
    );
    let job = out
        .lines()
        .find_map(|l| l.strip_prefix("Job ")?.split_once(" SUCCEEDED"))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| panic!("the job did not succeed: {out}"));
    let history = bed.job("history", &["-D", "dfs.replication=1", &job]);
    let succeeded_on = |ip: &str| {
        history
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|f| f.first() == Some(&"MAP") && f.get(5) == Some(&"SUCCEEDED"))
            .filter(|f| f[2].split(':').next() == Some(ip))
            .count()
    };
    let counts: std::collections::BTreeMap<&'static str, usize> = ["master", "fast", "slow"]
        .into_iter()
        .map(|node| (node, succeeded_on(&bed.ip(node))))
        .collect();
    assert_eq!(counts.values().sum::<usize>(), 40, "{history}");
    bed.down();
    // `down` ended the load with the node's other processes.
    let _ = load.wait();
    counts
}

/// Disk-Rate on a testbed: with one node's volume throttled hard, the node whose disk
/// is saturated by the writes of its maps gets measurably fewer maps with the policy on
/// than with it off, and every job still finishes (the held maps go elsewhere, and the
/// starvation rule keeps the slow node usable).
#[test]
fn disk_rate_keeps_maps_off_a_node_with_a_slow_disk() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    let off = maps_per_node("");
    let on = maps_per_node("disk-rate");
    eprintln!("maps per node: Disk-Rate off {off:?}, on {on:?}");
    assert!(
        on["slow"] * 2 <= off["slow"] && off["slow"] >= 6,
        "the slow node took {} maps with Disk-Rate on and {} with it off (want at most half)",
        on["slow"],
        off["slow"]
    );
}

/// `tusk bench faults --testbed` in its smallest form: the suite's daemons in the nodes
/// of `testbeds/faults.toml`, a DataNode node's link really cut for 5 s and restored,
/// then a DataNode killed with kill -9 through the testbed's hooks, under the mixed load
/// (no jobs). Nothing acknowledged may be lost, the cluster must come back to full
/// replication after each, and the suite's testbed must be gone afterwards.
struct SuiteTestbed(PathBuf);

impl Drop for SuiteTestbed {
    fn drop(&mut self) {
        if tusk_testbed::Testbed::record_path(&self.0).exists() {
            let _ = tusk_testbed::Testbed::teardown(&self.0);
        }
    }
}

#[test]
fn link_cut_and_datanode_kill_on_the_testbed_lose_nothing() {
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("suite");
    let _guard = SuiteTestbed(state.join("testbed"));
    let json = dir.path().join("faults.json");
    let description = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbeds/faults.toml");
    let out = Command::new("timeout")
        .arg("600")
        .arg(env!("CARGO_BIN_EXE_tusk"))
        .args(["bench", "faults", "--quick", "--no-jobs", "--testbed"])
        .arg(&description)
        .args(["--faults", "link-cut,datanode-kill", "--modes", "pipeline"])
        .args(["--pause", "5s", "--dir"])
        .arg(&state)
        .arg("--json")
        .arg(&json)
        .env("TUSK_LOG", "error")
        .output()
        .expect("running tusk bench faults");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("json");
    assert_eq!(report["cluster"]["testbed"], "faults");
    let rows = report["rows"].as_array().expect("rows");
    let faults: Vec<&str> = rows.iter().map(|r| r["fault"].as_str().unwrap()).collect();
    assert_eq!(faults, ["link-cut", "datanode-kill"]);
    for row in rows {
        assert!(row["acknowledged_ops"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(row["lost"], 0, "{row}");
        assert_eq!(row["unreadable"], 0, "{row}");
        assert!(
            row["recovery_seconds"].as_f64().is_some(),
            "not back to full replication: {row}"
        );
    }
    let cut = &rows[0];
    assert!(
        cut["notes"].as_str().unwrap().contains("link cut 5 s"),
        "{cut}"
    );
    assert!(
        cut["recovery_seconds"].as_f64().unwrap() >= 5.0,
        "recovered before the link came back: {cut}"
    );
    let tag = tusk_testbed::testbed::tag_of(&state.join("testbed").canonicalize().unwrap());
    assert!(
        !netns_list().contains(&format!("tusk-{tag}-")),
        "the suite left its testbed's namespaces: {}",
        netns_list()
    );
}

/// `tusk bench scheduling` stopped by SIGTERM (as `timeout` stops it) after its first
/// round: it writes the round it finished, marked partial, and tears its testbed down
/// (no record, no mounted volume, no namespace left).
#[test]
fn a_study_stopped_by_sigterm_keeps_its_rounds_and_tears_its_testbed_down() {
    use std::io::{BufRead, BufReader};
    let Some(_one) = one_testbed_at_a_time() else {
        return;
    };
    // Torn down by the guard if the study leaves it up (the bug this test is about).
    let bed = Bed::new();
    let home = bed.home.path();
    let dir = &bed.dir;
    let file = home.join("two.toml");
    std::fs::write(
        &file,
        r#"
name = "two"
replication = 1
[defaults]
link = "1gige"
daemons = ["datanode", "nodemanager"]
volumes = { count = 1, size_mb = 256, profile = "hdd" }
nodemanager = { memory_mb = 4096, vcores = 4 }
[[node]]
name = "master"
daemons = ["namenode", "resourcemanager", "datanode", "nodemanager", "client"]
[[node]]
name = "w"
"#,
    )
    .unwrap();
    let json = home.join("scheduling.json");
    let mut bench = Command::new(env!("CARGO_BIN_EXE_tusk"))
        .args(["bench", "scheduling", "--testbed"])
        .arg(&file)
        .arg("--dir")
        .arg(dir)
        .args([
            "--policies",
            "fair,disk-rate",
            "--repeat",
            "2",
            "--jobs",
            "1",
        ])
        .args([
            "--input-size",
            "1m",
            "--block-size",
            "1m",
            "--interval",
            "0s",
        ])
        .arg("--json")
        .arg(&json)
        .env("TUSK_HOME", home)
        .env("TUSK_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The second round's line: the first round has finished.
    let mut said = String::new();
    let mut lines = BufReader::new(bench.stderr.take().unwrap()).lines();
    let mut rounds = 0;
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        rounds += usize::from(line.starts_with("round "));
        if rounds == 2 {
            break;
        }
    }
    assert_eq!(rounds, 2, "the study ended early: {said}");
    let pid = bench.id() as i32;
    assert!(Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = bench.wait().unwrap();
    said.push_str(&rest.join("\n"));
    assert!(
        !status.success(),
        "a stopped study is not a success: {said}"
    );

    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json)
            .unwrap_or_else(|e| panic!("no report at {}: {e}; {said}", json.display())),
    )
    .unwrap();
    assert_eq!(report["partial"], true, "{report}");
    let results = report["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        1,
        "only the finished round's policy: {report}"
    );
    assert_eq!(results[0]["jobs"].as_array().unwrap().len(), 1, "{report}");
    assert!(std::fs::read_to_string(json.with_extension("md"))
        .unwrap()
        .contains("Partial"));

    assert!(
        !dir.join("testbed.json").exists(),
        "the testbed's record outlived the study: {said}"
    );
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(
        !mounts.contains(dir.to_str().unwrap()),
        "volumes still mounted: {mounts}"
    );
}
