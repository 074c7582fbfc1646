//! A cluster started from a directory of Hadoop's XML files (`HADOOP_CONF_DIR`), its
//! non-default values taking effect in the daemons and the client; `--conf` with the
//! same files; `tusk conf show` naming each value's source.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::{http_get, stderr, stdout, tusk_env, Cluster};

fn write_site(dir: &std::path::Path, name: &str, properties: &str) {
    std::fs::write(
        dir.join(name),
        format!(
            "<?xml version=\"1.0\"?>\n<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\n<configuration>\n{properties}</configuration>\n"
        ),
    )
    .unwrap();
}

#[test]
fn a_cluster_starts_from_a_directory_of_hadoop_xml_files() {
    let conf = tempfile::tempdir().unwrap();
    write_site(
        conf.path(),
        "core-site.xml",
        "  <property>\n    <name>tusk.test.limit</name>\n    <value>16</value>\n  </property>\n",
    );
    write_site(
        conf.path(),
        "hdfs-site.xml",
        "  <property>\n    <name>dfs.replication</name>\n    <value>1</value>\n    <final>true</final>\n  </property>\n  \
         <property>\n    <name>dfs.blocksize</name>\n    <value>2m</value>\n  </property>\n  \
         <property>\n    <name>dfs.namenode.fs-limits.max-component-length</name>\n    <value>${tusk.test.limit}</value>\n  </property>\n",
    );
    write_site(
        conf.path(),
        "yarn-site.xml",
        "  <property>\n    <name>dfs.replication</name>\n    <value>3</value>\n  </property>\n",
    );
    let dir = conf.path().to_str().unwrap();
    let env = [("HADOOP_CONF_DIR", dir)];
    let c = Cluster::up_with(1, &[], &env);
    let fs = |args: &[&str]| {
        let mut all = vec!["fs"];
        all.extend_from_slice(args);
        tusk_env(c.home(), &all, &env)
    };

    // Client side: the block size from hdfs-site.xml, and its final replication rather
    // than yarn-site.xml's later 3.
    let local = c.home().join("data.bin");
    std::fs::write(&local, vec![7u8; 5 << 20]).unwrap();
    let put = fs(&["-put", local.to_str().unwrap(), "/d.bin"]);
    assert!(put.status.success(), "{}", stderr(&put));
    assert_eq!(
        stdout(&fs(&["-stat", "%o %r", "/d.bin"])).trim(),
        "2097152 1"
    );

    // Daemon side: the NameNode enforces the ${}-expanded limit from the XML files.
    let long = fs(&["-mkdir", "/a-name-longer-than-sixteen"]);
    assert_eq!(long.status.code(), Some(1));
    assert!(
        stderr(&long).contains("limit=16"),
        "the NameNode did not take the XML value: {}",
        stderr(&long)
    );
    assert!(fs(&["-mkdir", "/short-name"]).status.success());

    // The NameNode's /conf names where each value came from, as the files say (not as
    // `local up` handed them on), and the defaults it runs with.
    let nn_http = std::fs::read_to_string(c.home().join("cluster/namenode.http-addr")).unwrap();
    let answer = http_get(nn_http.trim(), "/conf?format=json");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"));
    let property = |key: &str| {
        json["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["key"] == key)
            .unwrap_or_else(|| panic!("{key} not in /conf: {body}"))
            .clone()
    };
    let replication = property("dfs.replication");
    assert_eq!(replication["value"], "1");
    assert_eq!(replication["isFinal"], true);
    assert!(
        replication["resource"]
            .as_str()
            .unwrap()
            .ends_with("hdfs-site.xml:4"),
        "{replication}"
    );
    assert_eq!(property("dfs.blocksize")["resource"], "-D");
    assert_eq!(property("dfs.heartbeat.interval")["resource"], "default");

    // `--conf` takes the same directory (and `-D` still wins over a final value).
    let shown = tusk_env(
        c.home(),
        &["--conf", dir, "-D", "dfs.blocksize=4m", "conf", "show"],
        &[],
    );
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    let hdfs_site = conf.path().join("hdfs-site.xml");
    assert!(
        text.contains(&format!(
            "dfs.replication = 1  [{}:4; final]",
            hdfs_site.display()
        )),
        "{text}"
    );
    assert!(text.contains("dfs.blocksize = 4m  [-D]"), "{text}");
    assert!(
        text.contains("dfs.namenode.fs-limits.max-component-length = 16  ["),
        "{text}"
    );
    assert!(
        text.contains("dfs.heartbeat.interval = 3  [default]"),
        "{text}"
    );
    assert!(text.contains("tusk.test.limit = 16  [") && text.contains("read by no Tusk component"));
    let one = tusk_env(
        c.home(),
        &["--conf", dir, "conf", "show", "--key", "dfs.replication"],
        &[],
    );
    assert_eq!(
        stdout(&one).trim(),
        format!("dfs.replication = 1  [{}:4; final]", hdfs_site.display())
    );

    // A single site file works too; a TOML parse error is no longer what XML gets.
    let single = tusk_env(
        c.home(),
        &[
            "--conf",
            hdfs_site.to_str().unwrap(),
            "conf",
            "show",
            "--key",
            "dfs.blocksize",
        ],
        &[],
    );
    assert!(single.status.success(), "{}", stderr(&single));
    assert!(stdout(&single).starts_with("dfs.blocksize = 2m  ["));

    // A yarn-site.xml naming only the ResourceManager's host reaches it there, on
    // Hadoop's default port (not the last local cluster).
    write_site(
        conf.path(),
        "yarn-site.xml",
        "  <property>\n    <name>yarn.resourcemanager.hostname</name>\n    <value>rm.example</value>\n  </property>\n",
    );
    let rm = tusk_env(
        c.home(),
        &["conf", "show", "--key", "yarn.resourcemanager.address"],
        &env,
    );
    assert_eq!(
        stdout(&rm).trim(),
        "yarn.resourcemanager.address = rm.example:8032  [Hadoop's default ${yarn.resourcemanager.hostname}:8032]"
    );
    let read = tusk_env(
        c.home(),
        &["conf", "show", "--key", "dfs.namenode.name.dir"],
        &env,
    );
    assert!(read.status.success(), "a key Tusk reads: {}", stderr(&read));
}

/// Careless configuration, each reported once, in Hadoop's words, naming what is wrong:
/// a missing `--conf`, a `.xml` file that is not XML, a typed key that does not parse
/// (in `conf show` and when a daemon starts), and a daemon that dies during `local up`.
#[test]
fn careless_configuration_is_reported_once_naming_the_cause() {
    let home = tempfile::tempdir().unwrap();
    let missing = tusk_env(
        home.path(),
        &["--conf", "/no/such/conf", "conf", "show"],
        &[],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        stderr(&missing).trim(),
        "tusk: cannot read configuration file /no/such/conf: No such file or directory (os error 2)"
    );

    let garbage = home.path().join("core-site.xml");
    std::fs::write(&garbage, "garbage text\n").unwrap();
    let not_xml = tusk_env(
        home.path(),
        &["--conf", garbage.to_str().unwrap(), "conf", "show"],
        &[],
    );
    assert_eq!(not_xml.status.code(), Some(2));
    assert_eq!(
        stderr(&not_xml).trim(),
        format!(
            "tusk: configuration file {} is not valid XML: unknown token at 1:1",
            garbage.display()
        )
    );

    let bad_value = "configuration key dfs.replication: For input string: \"two\"";
    let show = tusk_env(
        home.path(),
        &["-D", "dfs.replication=two", "conf", "show"],
        &[],
    );
    assert!(!show.status.success(), "{}", stdout(&show));
    assert!(stderr(&show).contains(bad_value), "{}", stderr(&show));
    // With --key, what that key's reader would say; another key still shows.
    let one = ["-D", "dfs.replication=two", "conf", "show", "--key"];
    let same = tusk_env(home.path(), &[&one[..], &["dfs.replication"]].concat(), &[]);
    assert!(stderr(&same).contains(bad_value), "{}", stderr(&same));
    let other = tusk_env(home.path(), &[&one[..], &["dfs.blocksize"]].concat(), &[]);
    assert!(
        other.status.success(),
        "another key shows: {}",
        stderr(&other)
    );

    let state = home.path().join("cluster");
    let up = tusk_env(
        home.path(),
        &[
            "local",
            "up",
            "--no-yarn",
            "--dir",
            state.to_str().unwrap(),
            "-D",
            "dfs.replication=two",
        ],
        &[],
    );
    assert!(!up.status.success());
    let log = state.join("logs/namenode.log");
    let said = stderr(&up);
    assert!(
        said.contains(&format!("its log {} ends:", log.display())),
        "the log by its path: {said}"
    );
    assert!(said.contains(bad_value), "the cause, from the log: {said}");
}
