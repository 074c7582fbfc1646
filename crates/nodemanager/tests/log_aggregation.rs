//! Log aggregation on the minicluster (`yarn.log-aggregation-enable`): when an
//! application ends, the NodeManager that ran its container writes the container's logs
//! to the DFS at Hadoop's path, as the application's user, in Hadoop's TFile-based
//! format, and deletes its local copies. (Hadoop's own `LogsCLI` reads such files in
//! `scripts/compat-mapreduce.sh`.)

use std::time::Duration;

use anyhow::Result;
use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::tusk::yarn as y;

const DEADLINE: Duration = Duration::from_secs(30);
/// BCFile's magic, at both ends of a TFile.
const TFILE_MAGIC: [u8; 16] = [
    0xd1, 0x11, 0xd3, 0x68, 0x91, 0xb5, 0xd7, 0xb6, 0x39, 0xdf, 0x41, 0x40, 0x92, 0xba, 0xe1, 0x50,
];

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Java's `writeUTF` of an ASCII string.
fn utf(s: &str) -> Vec<u8> {
    [&(s.len() as u16).to_be_bytes()[..], s.as_bytes()].concat()
}

#[tokio::test]
async fn a_finished_applications_logs_land_at_hadoops_path_on_the_dfs() -> Result<()> {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .nodemanagers(0)
        .conf(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "100",
        )
        .conf("yarn.resourcemanager.am.max-attempts", "1")
        .conf("yarn.log-aggregation-enable", "true")
        .build()
        .await
        .map_err(anyhow::Error::from_boxed)?;
    let fs = cluster.fs_uri();
    cluster
        .yarn_mut()
        .add_nodemanager("nm0", |o| o.default_fs = Some(fs))
        .await
        .map_err(anyhow::Error::from_boxed)?;
    let rm = cluster.yarn();
    let app = rm
        .client()
        .submit(&y::SubmitApplicationRequest {
            name: "logs".into(),
            am_resource: Some(y::Resource {
                memory_mb: 64,
                vcores: 1,
            }),
            am_launch: Some(y::ContainerLaunchContext {
                command: "sh".into(),
                args: vec!["-c".into(), "echo to-stdout; echo to-stderr >&2".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await?;
    let report = wait_for("the application to end", DEADLINE, || async {
        let r = rm.client().report(&app).await.ok()?;
        let ended = [
            y::ApplicationState::AppFinished,
            y::ApplicationState::AppFailed,
        ]
        .map(|s| s as i32)
        .contains(&r.state);
        ended.then_some(r)
    })
    .await?;
    let nm = rm.nodemanager(0);

    // Hadoop 3.3+'s layout: <root>/<user>/bucket-logs-tfile/<seq % 10000>/<appId>/<node>.
    let user = report.user.clone();
    let path = nm.aggregated_log_path(&user, &app);
    let seq: u32 = app.rsplit('_').next().unwrap().parse()?;
    assert_eq!(
        path,
        format!("/tmp/logs/{user}/bucket-logs-tfile/{seq:04}/{app}/nm0")
    );
    let dfs = cluster.client();
    let status = wait_for("the aggregated log file", DEADLINE, || async {
        dfs.get_file_info(&path).await.ok().flatten()
    })
    .await?;
    assert_eq!(status.owner, user, "written as the application's user");
    assert_eq!(status.permission, 0o640);
    let app_dir = path.rsplit_once('/').unwrap().0;
    let listed: Vec<String> = dfs
        .list(app_dir)
        .await?
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(listed, ["nm0"], "no temporary file left");

    let file = dfs.read_file(&path).await?;
    assert_eq!(&file[..16], &TFILE_MAGIC);
    assert_eq!(&file[file.len() - 16..], &TFILE_MAGIC);
    for key in [
        "VERSION",
        "APPLICATION_OWNER",
        report.am_container_id.as_str(),
    ] {
        assert!(contains(&file, &utf(key)), "key {key}");
    }
    assert!(contains(&file, &[utf(&user)].concat()), "the owner record");
    // Each file: its name, its length as text, its bytes.
    for (name, text) in [("stdout", "to-stdout\n"), ("stderr", "to-stderr\n")] {
        let record = [
            utf(name),
            utf(&text.len().to_string()),
            text.as_bytes().to_vec(),
        ]
        .concat();
        assert!(contains(&file, &record), "{name}");
    }

    // The local copies (whose bytes the file holds) go once they are on the DFS.
    wait_for("local logs deleted", DEADLINE, || async {
        nm.container_log_dir(&app, &report.am_container_id)
            .is_none()
            .then_some(())
    })
    .await?;
    Ok(())
}
