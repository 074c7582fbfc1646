//! Hadoop-style containers on a real NodeManager (the minicluster's), started over
//! `tusk.ContainerManagementProtocol` with `ContainerToLaunch.hadoop_launch` holding a
//! `hadoop.yarn.ContainerLaunchContextProto`: LocalResources from `file:` URLs and the
//! minicluster's DFS, the work dir and its links, Hadoop's environment and tokens file,
//! Hadoop's diagnostics for bad resources and failed commands, the shared public cache
//! and application caches deleted with their application, and the logs on the web.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use prost::Message;
use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::hadoop::yarn as hy;
use tusk_proto::tusk::yarn as y;
use tusk_yarn_client::ContainerManagerClient;

const USER: &str = "alice";

async fn cluster(datanodes: usize) -> MiniCluster {
    MiniCluster::builder()
        .datanodes(datanodes)
        .nodemanagers(1)
        .start()
        .await
}

/// A LocalResource named by `url`.
fn resource(
    url: &str,
    timestamp: i64,
    kind: hy::LocalResourceTypeProto,
    visibility: hy::LocalResourceVisibilityProto,
) -> hy::LocalResourceProto {
    let (scheme, rest) = url.split_once(':').unwrap();
    let (host, port, file) = match rest.strip_prefix("//") {
        Some(rest) => {
            let (authority, file) = rest.split_at(rest.find('/').unwrap());
            let (host, port) = authority.split_once(':').unwrap();
            (host.to_string(), port.parse().unwrap(), file.to_string())
        }
        None => (String::new(), -1, rest.to_string()),
    };
    hy::LocalResourceProto {
        resource: Some(hy::UrlProto {
            scheme: Some(scheme.into()),
            host: Some(host),
            port: Some(port),
            file: Some(file),
            user_info: None,
        }),
        size: Some(0),
        timestamp: Some(timestamp),
        r#type: Some(kind as i32),
        visibility: Some(visibility as i32),
        pattern: None,
        should_be_uploaded_to_shared_cache: None,
    }
}

/// A local file as a FILE/PUBLIC-or-other resource, with its real timestamp.
fn local(
    path: &Path,
    kind: hy::LocalResourceTypeProto,
    v: hy::LocalResourceVisibilityProto,
) -> hy::LocalResourceProto {
    resource(&format!("file:{}", path.display()), mtime(path), kind, v)
}

fn mtime(path: &Path) -> i64 {
    std::fs::metadata(path)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn context(
    resources: Vec<(&str, hy::LocalResourceProto)>,
    environment: &[(&str, &str)],
    command: &str,
    tokens: &[u8],
) -> hy::ContainerLaunchContextProto {
    hy::ContainerLaunchContextProto {
        local_resources: resources
            .into_iter()
            .map(|(k, v)| hy::StringLocalResourceMapProto {
                key: Some(k.into()),
                value: Some(v),
            })
            .collect(),
        tokens: Some(tokens.to_vec().into()),
        environment: environment
            .iter()
            .map(|(k, v)| hy::StringStringMapProto {
                key: Some(k.to_string()),
                value: Some(v.to_string()),
            })
            .collect(),
        command: vec![command.into()],
        ..Default::default()
    }
}

/// A launch context with a command and nothing else.
fn command(command: &str) -> hy::ContainerLaunchContextProto {
    context(vec![], &[], command, b"")
}

/// Starts `launch` as container `n` of `app` on NodeManager 0.
async fn start(
    cluster: &MiniCluster,
    app: &str,
    n: u32,
    launch: &hy::ContainerLaunchContextProto,
) -> String {
    let id = format!(
        "{}_01_{n:06}",
        app.replacen("application_", "container_", 1)
    );
    let nm = nm_client(cluster);
    let resp = nm
        .start_containers(&y::StartContainersRequest {
            containers: vec![y::ContainerToLaunch {
                container_id: id.clone(),
                application_id: app.into(),
                resource: Some(y::Resource {
                    memory_mb: 256,
                    vcores: 1,
                }),
                hadoop_launch: launch.encode_to_vec().into(),
                user: USER.into(),
                ..Default::default()
            }],
        })
        .await
        .unwrap();
    assert_eq!(resp.started, vec![id.clone()], "{resp:?}");
    id
}

fn nm_client(cluster: &MiniCluster) -> ContainerManagerClient {
    ContainerManagerClient::new(
        &cluster
            .yarn()
            .nodemanager(0)
            .rpc_addr()
            .unwrap()
            .to_string(),
    )
}

/// Waits for the container to complete and returns its status.
async fn finished(cluster: &MiniCluster, id: &str) -> y::ContainerStatus {
    let nm = nm_client(cluster);
    wait_for(
        &format!("{id} to complete"),
        Duration::from_secs(30),
        || async {
            nm.statuses(vec![id.to_string()])
                .await
                .unwrap()
                .into_iter()
                .find(|s| s.state == y::ContainerState::ContainerComplete as i32)
        },
    )
    .await
    .unwrap()
}

fn work_dir(cluster: &MiniCluster, app: &str, container: &str) -> PathBuf {
    cluster
        .yarn()
        .nodemanager_local_dir(0)
        .join("usercache")
        .join(USER)
        .join("appcache")
        .join(app)
        .join(container)
}

/// A file of the container's log dir; empty while it is missing (the dir is made once
/// the container's resources are localized, after its start was answered).
fn log_file(cluster: &MiniCluster, app: &str, container: &str, name: &str) -> String {
    cluster
        .yarn()
        .nodemanager(0)
        .container_log_dir(app, container)
        .and_then(|dir| std::fs::read_to_string(dir.join(name)).ok())
        .unwrap_or_default()
}

fn zip_file(path: &Path, entries: &[(&str, &str)]) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for (name, body) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

fn tar_gz(path: &Path, entries: &[(&str, &str)]) {
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::default(),
    );
    let mut tar = tar::Builder::new(gz);
    for (name, body) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, body.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

/// An application id no ResourceManager handed out, for containers started directly.
fn app_id(seq: u32) -> String {
    format!("application_1700000000000_{seq:04}")
}

use hy::LocalResourceTypeProto::{Archive, File as FileType};
use hy::LocalResourceVisibilityProto::{Application, Private, Public};

/// FILE resources (a `file:` URL and a DFS file) are copied, ARCHIVE resources (zip and
/// tar.gz) unpacked, and each is linked into the work dir under its name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_and_archive_resources_are_linked_into_the_work_dir() {
    let cluster = cluster(1).await;
    let src = tempfile::tempdir().unwrap();
    let text = src.path().join("data.txt");
    std::fs::write(&text, "from a file URL\n").unwrap();
    let zip = src.path().join("bundle.zip");
    zip_file(&zip, &[("inner/a.txt", "from the zip\n")]);
    let tgz = src.path().join("libs.tar.gz");
    tar_gz(&tgz, &[("dir/b.txt", "from the tarball\n")]);
    let dfs = cluster.client();
    dfs.write_file("/apps/conf.xml", b"from the DFS\n", parents())
        .await
        .unwrap();
    let status = dfs.get_file_info("/apps/conf.xml").await.unwrap().unwrap();
    let dfs_url = format!("{}/apps/conf.xml", cluster.fs_uri());

    let app = app_id(1);
    let launch = context(
        vec![
            ("data.txt", local(&text, FileType, Application)),
            ("zipped", local(&zip, Archive, Private)),
            ("tarred", local(&tgz, Archive, Application)),
            (
                "job/conf.xml",
                resource(&dfs_url, status.modification_time as i64, FileType, Application),
            ),
        ],
        &[],
        "cat data.txt zipped/inner/a.txt tarred/dir/b.txt job/conf.xml 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr",
        b"",
    );
    let id = start(&cluster, &app, 2, &launch).await;
    let status = finished(&cluster, &id).await;
    assert_eq!(status.exit_status, 0, "{}", status.diagnostics);
    assert_eq!(
        log_file(&cluster, &app, &id, "stdout"),
        "from a file URL\nfrom the zip\nfrom the tarball\nfrom the DFS\n"
    );
    let work = work_dir(&cluster, &app, &id);
    let local_dir = cluster.yarn().nodemanager_local_dir(0);
    let target = std::fs::read_link(work.join("zipped")).unwrap();
    assert!(
        target.starts_with(local_dir.join("usercache").join(USER).join("filecache")),
        "a PRIVATE resource is in the user's cache: {}",
        target.display()
    );
    assert!(target.is_dir(), "an archive is unpacked into a directory");
    let target = std::fs::read_link(work.join("job/conf.xml")).unwrap();
    assert!(target.starts_with(
        local_dir
            .join("usercache")
            .join(USER)
            .join("appcache")
            .join(&app)
            .join("filecache")
    ));
    assert!(work.join("launch_container.sh").is_file());
    assert!(log_file(&cluster, &app, &id, "launch_container.sh").contains("exec /bin/bash -c"));
}

/// A resource whose timestamp is not its file's, and a missing one, fail their
/// container before it starts with exit status -1000 and Hadoop's diagnostics; the
/// node goes on running other containers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_resources_fail_their_container_and_the_node_keeps_running() {
    let cluster = cluster(1).await;
    let dfs = cluster.client();
    dfs.write_file("/apps/job.jar", b"jar bytes", parents())
        .await
        .unwrap();
    let real = dfs
        .get_file_info("/apps/job.jar")
        .await
        .unwrap()
        .unwrap()
        .modification_time as i64;
    let url = format!("{}/apps/job.jar", cluster.fs_uri());
    let app = app_id(2);

    let changed = context(
        vec![(
            "job.jar",
            resource(&url, real - 1000, FileType, Application),
        )],
        &[],
        "true",
        b"",
    );
    let id = start(&cluster, &app, 2, &changed).await;
    let status = finished(&cluster, &id).await;
    assert_eq!(status.exit_status, -1000);
    let d = &status.diagnostics;
    assert!(
        d.starts_with('['),
        "stamped as Hadoop stamps diagnostics: {d}"
    );
    assert!(
        d.contains(&format!(
            "]Failed to download resource {{ {{ {url}, {}, FILE, null }}",
            real - 1000
        )),
        "{d}"
    );
    assert!(
        d.contains(&format!(
            "java.io.IOException: Resource {url} changed on src filesystem - expected: \"{}\", was: \"{}\", current time: \"",
            tusk_common::calendar::iso8601((real - 1000) as u64),
            tusk_common::calendar::iso8601(real as u64),
        )),
        "{d}"
    );

    let missing_url = format!("{}/apps/missing.jar", cluster.fs_uri());
    let missing = context(
        vec![(
            "missing.jar",
            resource(&missing_url, real, FileType, Application),
        )],
        &[],
        "true",
        b"",
    );
    let id = start(&cluster, &app, 3, &missing).await;
    let status = finished(&cluster, &id).await;
    assert_eq!(status.exit_status, -1000);
    assert!(
        status.diagnostics.contains(&format!(
            "java.io.FileNotFoundException: File does not exist: {missing_url}"
        )),
        "{}",
        status.diagnostics
    );

    let good = context(
        vec![("job.jar", resource(&url, real, FileType, Application))],
        &[],
        "test -f job.jar",
        b"",
    );
    let id = start(&cluster, &app, 4, &good).await;
    let status = finished(&cluster, &id).await;
    assert_eq!(status.exit_status, 0, "{}", status.diagnostics);
}

/// A command that exits 1: exit status 1 and Hadoop's diagnostics with the stderr tail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_reports_its_exit_code_and_stderr_tail() {
    let cluster = cluster(0).await;
    let app = app_id(3);
    let launch = command("(echo something broke >&2; exit 1) 2><LOG_DIR>/stderr");
    let id = start(&cluster, &app, 2, &launch).await;
    let status = finished(&cluster, &id).await;
    assert_eq!(status.exit_status, 1);
    let d = &status.diagnostics;
    assert!(
        d.contains(&format!(
            "]Exception from container-launch.\nContainer id: {id}\nExit code: 1\n"
        )),
        "{d}"
    );
    assert!(
        d.contains("]Container exited with a non-zero exit code 1. Error file: prelaunch.err.\n"),
        "{d}"
    );
    assert!(
        d.contains("Last 4096 bytes of stderr :\nsomething broke\n"),
        "{d}"
    );
}

/// The environment a container sees: Hadoop's variables, the tokens file, and the
/// launch context's own variables with `{{PWD}}` and `<CPS>` expanded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_container_sees_hadoop_s_environment() {
    let cluster = cluster(0).await;
    let app = app_id(4);
    let tokens = b"HDTS\x00credentials of the application";
    let launch = context(
        vec![],
        &[
            ("CLASSPATH", "{{PWD}}<CPS>{{PWD}}/*"),
            ("APP_LOG", "<LOG_DIR>/app.log"),
        ],
        "env 1><LOG_DIR>/env.txt && cat $HADOOP_TOKEN_FILE_LOCATION 1><LOG_DIR>/tokens.out",
        tokens,
    );
    let id = start(&cluster, &app, 2, &launch).await;
    let status = finished(&cluster, &id).await;
    assert_eq!(status.exit_status, 0, "{}", status.diagnostics);
    let env: std::collections::HashMap<String, String> = log_file(&cluster, &app, &id, "env.txt")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let work = work_dir(&cluster, &app, &id);
    let log_dir = cluster
        .yarn()
        .nodemanager(0)
        .container_log_dir(&app, &id)
        .unwrap();
    let app_dir = work.parent().unwrap();
    assert_eq!(env["CONTAINER_ID"], id);
    assert_eq!(env["USER"], USER);
    assert_eq!(env["LOCAL_DIRS"], app_dir.display().to_string());
    assert_eq!(env["LOG_DIRS"], log_dir.display().to_string());
    assert_eq!(env["PWD"], work.display().to_string());
    assert_eq!(
        env["HADOOP_TOKEN_FILE_LOCATION"],
        work.join("container_tokens").display().to_string()
    );
    assert_eq!(env["CLASSPATH"], format!("{0}:{0}/*", work.display()));
    assert_eq!(env["APP_LOG"], format!("{}/app.log", log_dir.display()));
    assert_eq!(
        env["NM_PORT"],
        cluster
            .yarn()
            .nodemanager(0)
            .rpc_addr()
            .unwrap()
            .port()
            .to_string()
    );
    assert_eq!(
        env["NM_HTTP_PORT"],
        cluster.yarn().nodemanager_http_addr(0).port().to_string()
    );
    assert!(env.contains_key("PATH"), "whitelisted from the NodeManager");
    let tokens_seen = std::fs::read(log_dir.join("tokens.out")).unwrap();
    assert_eq!(tokens_seen, tokens);
}

/// One PUBLIC resource serves two applications from one copy; an application's
/// cache (and work dirs) go when the ResourceManager says the application finished,
/// and the public cache and the other application's stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_resources_are_shared_and_application_caches_go_with_their_application() {
    let cluster = cluster(0).await;
    let yarn = cluster.yarn();
    let mut apps = Vec::new();
    for name in ["a", "b"] {
        apps.push(
            yarn.client()
                .submit(&tusk_cluster::testing::sleeping_application(name, 128, 60))
                .await
                .unwrap(),
        );
    }
    let nm = yarn.nodemanager(0);
    wait_for("both AMs to run", Duration::from_secs(30), || async {
        nm.running_containers() >= 2
    })
    .await
    .unwrap();

    let src = tempfile::tempdir().unwrap();
    let shared = src.path().join("shared.txt");
    std::fs::write(&shared, "public bytes").unwrap();
    let own = src.path().join("own.txt");
    std::fs::write(&own, "application bytes").unwrap();
    let mut ids = Vec::new();
    for app in &apps {
        let launch = context(
            vec![
                ("shared.txt", local(&shared, FileType, Public)),
                ("own.txt", local(&own, FileType, Application)),
            ],
            &[],
            "cat shared.txt own.txt",
            b"",
        );
        let id = start(&cluster, app, 100, &launch).await;
        let status = finished(&cluster, &id).await;
        assert_eq!(status.exit_status, 0, "{}", status.diagnostics);
        ids.push(id);
    }
    let link = |i: usize, name: &str| {
        std::fs::read_link(work_dir(&cluster, &apps[i], &ids[i]).join(name)).unwrap()
    };
    let local_dir = yarn.nodemanager_local_dir(0);
    assert_eq!(
        link(0, "shared.txt"),
        link(1, "shared.txt"),
        "one public copy"
    );
    assert!(link(0, "shared.txt").starts_with(local_dir.join("filecache")));
    assert_ne!(
        link(0, "own.txt"),
        link(1, "own.txt"),
        "each application its own"
    );
    let app_cache = |i: usize| {
        local_dir
            .join("usercache")
            .join(USER)
            .join("appcache")
            .join(&apps[i])
    };
    assert!(app_cache(0).join("filecache").is_dir());

    assert!(yarn.client().kill(&apps[0]).await.unwrap());
    wait_for(
        "application a's cache to go",
        Duration::from_secs(30),
        || async { !app_cache(0).exists() },
    )
    .await
    .unwrap();
    assert!(link(1, "shared.txt").is_file(), "the public copy stays");
    assert!(app_cache(1).join("filecache").is_dir(), "b's cache stays");
}

/// A container's logs, listed and read through the NodeManager's web port at
/// Hadoop's paths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_logs_are_served_on_the_web_port() {
    let cluster = cluster(0).await;
    let app = app_id(5);
    let launch = command("echo hello logs 1><LOG_DIR>/stdout");
    let id = start(&cluster, &app, 2, &launch).await;
    assert_eq!(finished(&cluster, &id).await.exit_status, 0);
    let web = cluster.yarn().nodemanager_http_addr(0);
    let body = reqwest::get(format!("http://{web}/ws/v1/node/containers/{id}/logs"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let names: Vec<&str> = list[0]["containerLogInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"stdout") && names.contains(&"prelaunch.out"),
        "{list}"
    );
    assert_eq!(list[0]["containerId"], id.as_str());
    let text = reqwest::get(format!("http://{web}/ws/v1/node/containerlogs/{id}/stdout"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(text, "hello logs\n");
    let page = reqwest::get(format!("http://{web}/node/containerlogs/{id}/{USER}"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(&format!("/node/containerlogs/{id}/{USER}/stdout")),
        "{page}"
    );
    let missing = reqwest::get(format!(
        "http://{web}/ws/v1/node/containerlogs/{id}/nothing"
    ))
    .await
    .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
}

fn parents() -> tusk_client::CreateOptions {
    tusk_client::CreateOptions::with_parents()
}

/// stopContainers ends a running Hadoop-style container's process group and reports
/// it killed by the ApplicationMaster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_container_s_processes_end() {
    let cluster = cluster(0).await;
    let app = app_id(6);
    let launch = command("echo $$ 1><LOG_DIR>/pid; sleep 60 1><LOG_DIR>/stdout");
    let id = start(&cluster, &app, 2, &launch).await;
    let pid: i32 = wait_for("the container's pid", Duration::from_secs(30), || async {
        log_file(&cluster, &app, &id, "pid")
            .trim()
            .parse::<i32>()
            .ok()
    })
    .await
    .unwrap();
    nm_client(&cluster)
        .stop_containers(vec![id.clone()])
        .await
        .unwrap();
    let status = finished(&cluster, &id).await;
    assert_eq!(
        status.exit_status,
        y::ContainerExitStatus::KilledByAppmaster as i32,
        "{}",
        status.diagnostics
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the container's shell is gone"
    );
}
