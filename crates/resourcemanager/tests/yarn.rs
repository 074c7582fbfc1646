//! A ResourceManager and NodeManagers in this process on 127.0.0.1:0, running real
//! processes as containers. Waits poll a condition with a deadline.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tusk_common::Shutdown;
use tusk_nodemanager::{NodeManager, NodeManagerHandle, NodeManagerOptions};
use tusk_proto::tusk::yarn as y;
use tusk_resourcemanager::{
    ApplicationClient, ApplicationMasterClient, MemoryStateStore, Resource, ResourceManager,
    ResourceManagerHandle, ResourceManagerOptions, SchedulerKind, StateStore, Timing,
};
use tusk_rpc::{RpcClient, RpcClientOptions};

const DEADLINE: Duration = Duration::from_secs(20);

struct Rm {
    handle: ResourceManagerHandle,
    shutdown: Shutdown,
    client: ApplicationClient,
}

impl Drop for Rm {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

struct Nm {
    handle: NodeManagerHandle,
    shutdown: Shutdown,
    local_dir: std::path::PathBuf,
}

impl Drop for Nm {
    fn drop(&mut self) {
        self.shutdown.trigger();
    }
}

fn rm_options(timing: Timing) -> ResourceManagerOptions {
    ResourceManagerOptions {
        heartbeat_interval: Duration::from_millis(100),
        timing,
        minimum_allocation: Resource::new(64, 1),
        am_max_attempts: 1,
        ..Default::default()
    }
}

async fn start_rm(options: ResourceManagerOptions) -> Result<Rm> {
    let shutdown = Shutdown::new();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let handle = ResourceManager::start(options, listener, shutdown.clone()).await?;
    let client = ApplicationClient::new(&handle.addr().to_string());
    Ok(Rm {
        handle,
        shutdown,
        client,
    })
}

fn nm_options(
    rm: &Rm,
    dir: &TempDir,
    name: &str,
    memory_mb: u64,
    timing: Timing,
) -> NodeManagerOptions {
    let timing = match timing {
        Timing::EventDriven => tusk_nodemanager::Timing::EventDriven,
        Timing::Classic => tusk_nodemanager::Timing::Classic,
    };
    NodeManagerOptions {
        rm_addr: rm.handle.addr().to_string(),
        node_id: name.into(),
        memory_mb,
        vcores: 8,
        local_dirs: vec![dir.path().join(name).join("local")],
        log_dirs: vec![dir.path().join(name).join("logs")],
        heartbeat_interval: Duration::from_millis(100),
        timing,
        monitor_interval: Duration::from_millis(100),
        sigkill_delay: Duration::from_millis(100),
        ..Default::default()
    }
}

async fn start_nm(options: NodeManagerOptions) -> Result<Nm> {
    let shutdown = Shutdown::new();
    let rpc = TcpListener::bind("127.0.0.1:0").await?;
    let shuffle = TcpListener::bind("127.0.0.1:0").await?;
    let local_dir = options.local_dirs[0].clone();
    let handle = NodeManager::start(options, Some(rpc), shuffle, shutdown.clone()).await?;
    Ok(Nm {
        handle,
        shutdown,
        local_dir,
    })
}

/// Polls `f` every 10 ms until it yields a value or `DEADLINE` passes.
async fn wait_for<T, F, Fut>(what: &str, mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(t) = f().await {
            return Ok(t);
        }
        if Instant::now() > deadline {
            bail!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn sh(script: &str, memory_mb: u64) -> (y::Resource, y::ContainerLaunchContext) {
    (
        y::Resource {
            memory_mb,
            vcores: 1,
        },
        y::ContainerLaunchContext {
            command: "sh".into(),
            args: vec!["-c".into(), script.into()],
            ..Default::default()
        },
    )
}

async fn submit(rm: &Rm, name: &str, script: &str, memory_mb: u64) -> Result<String> {
    let (resource, launch) = sh(script, memory_mb);
    Ok(rm
        .client
        .submit(&y::SubmitApplicationRequest {
            name: name.into(),
            am_resource: Some(resource),
            am_launch: Some(launch),
            ..Default::default()
        })
        .await?)
}

async fn wait_state(
    rm: &Rm,
    app: &str,
    state: y::ApplicationState,
) -> Result<y::ApplicationReport> {
    wait_for(&format!("{app} to be {state:?}"), || async {
        let r = rm.client.report(app).await.ok()?;
        (r.state == state as i32).then_some(r)
    })
    .await
}

/// Submits an application whose AM container sleeps and registers an AM for it from
/// the test.
async fn running_am(rm: &Rm, name: &str) -> Result<(String, ApplicationMasterClient)> {
    let app = submit(rm, name, "sleep 60", 64).await?;
    let report = wait_for("AM container", || async {
        let r = rm.client.report(&app).await.ok()?;
        (!r.am_container_id.is_empty()).then_some(r)
    })
    .await?;
    let am =
        ApplicationMasterClient::new(&rm.handle.addr().to_string(), &report.current_attempt_id);
    am.register().await?;
    wait_state(rm, &app, y::ApplicationState::AppRunning).await?;
    Ok((app, am))
}

fn ask(ask_id: u64, memory_mb: u64, nodes: &[&str], count: u32) -> y::ContainerAsk {
    y::ContainerAsk {
        ask_id,
        priority: 1,
        resource: Some(y::Resource {
            memory_mb,
            vcores: 1,
        }),
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        count,
        ..Default::default()
    }
}

/// Sends `asks`, then calls allocate until `n` containers have come back in total.
async fn ask_for(
    am: &ApplicationMasterClient,
    asks: Vec<y::ContainerAsk>,
    n: usize,
) -> Result<Vec<y::Container>> {
    let first = am
        .allocate(y::AllocateRequest {
            asks,
            ..Default::default()
        })
        .await?;
    let mut got = first.allocated;
    got.extend(collect(am, n - got.len().min(n)).await?);
    Ok(got)
}

/// Calls allocate until `n` containers have come back in total.
async fn collect(am: &ApplicationMasterClient, n: usize) -> Result<Vec<y::Container>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    while got.len() < n {
        if Instant::now() > deadline {
            bail!("only {} of {n} containers allocated", got.len());
        }
        let resp = am
            .allocate(y::AllocateRequest {
                wait_ms: 200,
                ..Default::default()
            })
            .await?;
        got.extend(resp.allocated);
        if got.len() < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(got)
}

/// Calls allocate until a completed status for `container` comes back.
async fn completion(am: &ApplicationMasterClient, container: &str) -> Result<y::ContainerStatus> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let resp = am
            .allocate(y::AllocateRequest {
                wait_ms: 200,
                ..Default::default()
            })
            .await?;
        if let Some(s) = resp
            .completed
            .into_iter()
            .find(|s| s.container_id == container)
        {
            return Ok(s);
        }
        if Instant::now() > deadline {
            bail!("no completion for {container}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn start_container(c: &y::Container, app: &str, script: &str) -> Result<()> {
    let nm = RpcClient::new(
        c.nm_address.clone(),
        RpcClientOptions {
            protocol: tusk_nodemanager::CONTAINER_MANAGEMENT_PROTOCOL.into(),
            ..Default::default()
        },
    );
    let (_, launch) = sh(script, 0);
    let resp: y::StartContainersResponse = nm
        .call(
            "startContainers",
            &y::StartContainersRequest {
                containers: vec![y::ContainerToLaunch {
                    container_id: c.container_id.clone(),
                    application_id: app.into(),
                    resource: c.resource,
                    launch: Some(launch),
                }],
            },
        )
        .await?;
    if !resp.failed.is_empty() {
        bail!("start failed: {:?}", resp.failed);
    }
    Ok(())
}

#[tokio::test]
async fn am_container_runs_and_its_exit_status_is_reported() -> Result<()> {
    for timing in [Timing::EventDriven, Timing::Classic] {
        let dir = TempDir::new()?;
        let rm = start_rm(rm_options(timing)).await?;
        let nm = start_nm(nm_options(&rm, &dir, "nm1", 1024, timing)).await?;
        let app = submit(&rm, "exit3", "echo hi; exit 3", 64).await?;
        let report = wait_state(&rm, &app, y::ApplicationState::AppFailed).await?;
        assert!(report.am_exited, "{timing:?}");
        assert_eq!(report.am_exit_status, 3, "{timing:?}");
        assert_eq!(report.am_node_id, "nm1");
        assert!(
            report.diagnostics.contains("exitCode: 3"),
            "{}",
            report.diagnostics
        );
        let logs = nm
            .handle
            .container_log_dir(&app, &report.am_container_id)
            .context("log dir")?;
        assert_eq!(std::fs::read_to_string(logs.join("stdout"))?, "hi\n");
        // The application's local directory goes once it has ended.
        let app_dir = nm.local_dir.join(&app);
        wait_for("clean-up", || async { (!app_dir.exists()).then_some(()) }).await?;
        let listed = rm.client.list().await?;
        assert_eq!(listed.len(), 1);
    }
    Ok(())
}

#[tokio::test]
async fn node_local_first_then_delay_scheduling_falls_back() -> Result<()> {
    let dir = TempDir::new()?;
    let rm = start_rm(rm_options(Timing::EventDriven)).await?;
    let a = start_nm(nm_options(&rm, &dir, "a", 512, Timing::EventDriven)).await?;
    let _b = start_nm(nm_options(&rm, &dir, "b", 512, Timing::EventDriven)).await?;
    let (_app, am) = running_am(&rm, "locality").await?;
    // Two containers fit on `a` however the AM landed: both node-local.
    let first = ask_for(&am, vec![ask(1, 128, &["a"], 2)], 2).await?;
    for c in &first {
        assert_eq!(c.node_id, "a");
        assert_eq!(c.locality, y::Locality::NodeLocal as i32);
        assert_eq!(c.ask_id, 1);
        assert_eq!(c.nm_address, a.handle.rpc_addr().unwrap().to_string());
    }
    // Four more for `a` cannot all fit there: after passing `b` up for a round, the
    // rest go to `b`, rack-local (one default rack).
    let second = ask_for(&am, vec![ask(2, 128, &["a"], 4)], 4).await?;
    let on_b: Vec<_> = second.iter().filter(|c| c.node_id == "b").collect();
    assert!(!on_b.is_empty(), "{second:?}");
    for c in &second {
        let expected = if c.node_id == "a" {
            y::Locality::NodeLocal
        } else {
            y::Locality::RackLocal
        };
        assert_eq!(c.locality, expected as i32, "{c:?}");
    }
    Ok(())
}

#[tokio::test]
async fn a_long_locality_delay_keeps_the_ask_waiting() -> Result<()> {
    let dir = TempDir::new()?;
    let options = ResourceManagerOptions {
        node_locality_delay: 1_000_000,
        ..rm_options(Timing::EventDriven)
    };
    let rm = start_rm(options).await?;
    let _a = start_nm(nm_options(&rm, &dir, "a", 512, Timing::EventDriven)).await?;
    let _b = start_nm(nm_options(&rm, &dir, "b", 512, Timing::EventDriven)).await?;
    let (_app, am) = running_am(&rm, "patient").await?;
    let got = ask_for(&am, vec![ask(1, 256, &["a"], 3)], 1).await?;
    // Many heartbeats (100 ms) later, nothing has gone to another node.
    let until = Instant::now() + Duration::from_millis(800);
    let mut all = got;
    let mut pending = 0;
    while Instant::now() < until {
        let resp = am
            .allocate(y::AllocateRequest {
                wait_ms: 100,
                ..Default::default()
            })
            .await?;
        all.extend(resp.allocated);
        pending = resp.pending;
    }
    assert!(all.iter().all(|c| c.node_id == "a"), "{all:?}");
    assert!(pending >= 1);
    Ok(())
}

async fn two_apps_share_a_new_node(scheduler: SchedulerKind) -> Result<(usize, usize)> {
    let dir = TempDir::new()?;
    let options = ResourceManagerOptions {
        scheduler,
        ..rm_options(Timing::EventDriven)
    };
    let rm = start_rm(options).await?;
    // Room for the two AMs only.
    let _small = start_nm(nm_options(&rm, &dir, "small", 128, Timing::EventDriven)).await?;
    let (_app1, am1) = running_am(&rm, "first").await?;
    let (_app2, am2) = running_am(&rm, "second").await?;
    for am in [&am1, &am2] {
        am.allocate(y::AllocateRequest {
            asks: vec![ask(1, 128, &[], 4)],
            ..Default::default()
        })
        .await?;
    }
    // Room for four: the policy decides who gets them.
    let _big = start_nm(nm_options(&rm, &dir, "big", 512, Timing::EventDriven)).await?;
    let (mut n1, mut n2) = (0, 0);
    let deadline = Instant::now() + DEADLINE;
    while n1 + n2 < 4 {
        if Instant::now() > deadline {
            bail!("only {n1} + {n2} containers handed out");
        }
        n1 += am1.allocate(Default::default()).await?.allocated.len();
        n2 += am2.allocate(Default::default()).await?.allocated.len();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok((n1, n2))
}

#[tokio::test]
async fn fifo_serves_the_first_application_fair_shares() -> Result<()> {
    assert_eq!(
        two_apps_share_a_new_node(SchedulerKind::Fifo).await?,
        (4, 0)
    );
    assert_eq!(
        two_apps_share_a_new_node(SchedulerKind::Fair).await?,
        (2, 2)
    );
    Ok(())
}

async fn node_heartbeats(rm: &Rm, node: &str) -> u64 {
    rm.handle
        .nodes()
        .iter()
        .find(|n| n.node_id == node)
        .map(|n| n.heartbeats)
        .unwrap_or(0)
}

#[tokio::test]
async fn classic_allocations_wait_for_a_heartbeat_event_driven_ones_do_not() -> Result<()> {
    let dir = TempDir::new()?;
    // Classic: a 600 ms heartbeat.
    let options = ResourceManagerOptions {
        heartbeat_interval: Duration::from_millis(600),
        ..rm_options(Timing::Classic)
    };
    let rm = start_rm(options).await?;
    let _nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::Classic)).await?;
    let (_app, am) = running_am(&rm, "classic").await?;
    let before = node_heartbeats(&rm, "n").await;
    let asked = Instant::now();
    let first = am
        .allocate(y::AllocateRequest {
            asks: vec![ask(1, 128, &[], 1)],
            wait_ms: 1000,
            ..Default::default()
        })
        .await?;
    assert!(
        first.allocated.is_empty(),
        "classic allocate answered at once"
    );
    let got = collect(&am, 1).await?;
    let waited = asked.elapsed();
    assert_eq!(got.len(), 1);
    assert!(
        node_heartbeats(&rm, "n").await > before,
        "allocated without a heartbeat"
    );
    drop(rm);

    let rm = start_rm(rm_options(Timing::EventDriven)).await?;
    let _nm = start_nm(nm_options(&rm, &dir, "e", 1024, Timing::EventDriven)).await?;
    let (_app, am) = running_am(&rm, "event").await?;
    let asked = Instant::now();
    let first = am
        .allocate(y::AllocateRequest {
            asks: vec![ask(1, 128, &[], 1)],
            ..Default::default()
        })
        .await?;
    assert_eq!(
        first.allocated.len(),
        1,
        "event-driven allocate must answer at once"
    );
    assert!(
        asked.elapsed() < waited,
        "{:?} vs classic {waited:?}",
        asked.elapsed()
    );
    Ok(())
}

#[tokio::test]
async fn a_container_over_its_memory_is_killed() -> Result<()> {
    let dir = TempDir::new()?;
    let rm = start_rm(rm_options(Timing::EventDriven)).await?;
    let _nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::EventDriven)).await?;
    let (app, am) = running_am(&rm, "hog").await?;
    let c = ask_for(&am, vec![ask(1, 64, &[], 1)], 1).await?.remove(0);
    start_container(
        &c,
        &app,
        "a=$(head -c 100000000 /dev/zero | tr '\\0' x); sleep 60",
    )
    .await?;
    let status = completion(&am, &c.container_id).await?;
    assert_eq!(
        status.exit_status,
        y::ContainerExitStatus::KilledExceededPmem as i32
    );
    assert!(
        status
            .diagnostics
            .contains("is running beyond physical memory limits"),
        "{}",
        status.diagnostics
    );
    assert!(status.diagnostics.contains("of 64 MB physical memory used"));
    assert!(status.peak_rss_bytes > 64 << 20);
    Ok(())
}

#[tokio::test]
async fn containers_are_killed_on_request() -> Result<()> {
    let dir = TempDir::new()?;
    let rm = start_rm(rm_options(Timing::EventDriven)).await?;
    let nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::EventDriven)).await?;
    let (app, am) = running_am(&rm, "victim").await?;
    let cs = ask_for(&am, vec![ask(1, 64, &[], 2)], 2).await?;
    for c in &cs {
        start_container(c, &app, "sleep 60").await?;
    }
    wait_for("three running containers", || async {
        (nm.handle.running_containers() == 3).then_some(())
    })
    .await?;

    // Stopped by the AM at the NodeManager.
    let nm_rpc = RpcClient::new(
        cs[0].nm_address.clone(),
        RpcClientOptions {
            protocol: tusk_nodemanager::CONTAINER_MANAGEMENT_PROTOCOL.into(),
            ..Default::default()
        },
    );
    let _: y::StopContainersResponse = nm_rpc
        .call(
            "stopContainers",
            &y::StopContainersRequest {
                container_ids: vec![cs[0].container_id.clone()],
            },
        )
        .await?;
    let status = completion(&am, &cs[0].container_id).await?;
    assert_eq!(
        status.exit_status,
        y::ContainerExitStatus::KilledByAppmaster as i32
    );
    assert!(
        status.diagnostics.contains("Exit code is 143"),
        "{}",
        status.diagnostics
    );

    // Released through the ResourceManager.
    am.allocate(y::AllocateRequest {
        releases: vec![cs[1].container_id.clone()],
        ..Default::default()
    })
    .await?;
    wait_for("released container gone", || async {
        (nm.handle.running_containers() == 1).then_some(())
    })
    .await?;

    // The whole application.
    assert!(rm.client.kill(&app).await?);
    let report = wait_state(&rm, &app, y::ApplicationState::AppKilled).await?;
    assert_eq!(
        report.final_status,
        y::FinalApplicationStatus::FinalKilled as i32
    );
    wait_for("AM container gone", || async {
        (nm.handle.running_containers() == 0).then_some(())
    })
    .await?;
    let resp = am.allocate(Default::default()).await?;
    assert!(resp.shutdown);
    assert!(!rm.client.kill(&app).await?);
    Ok(())
}

#[tokio::test]
async fn a_silent_node_expires_and_its_containers_are_lost() -> Result<()> {
    let dir = TempDir::new()?;
    let options = ResourceManagerOptions {
        node_expiry: Duration::from_millis(500),
        ..rm_options(Timing::EventDriven)
    };
    let rm = start_rm(options).await?;
    let nm = start_nm(nm_options(&rm, &dir, "doomed", 1024, Timing::EventDriven)).await?;
    let app = submit(&rm, "orphan", "sleep 60", 64).await?;
    wait_for("AM running", || async {
        (nm.handle.running_containers() == 1).then_some(())
    })
    .await?;
    nm.shutdown.trigger();
    let node = wait_for("node lost", || async {
        rm.handle
            .nodes()
            .into_iter()
            .find(|n| n.node_id == "doomed" && n.state == y::NodeState::NodeLost as i32)
    })
    .await?;
    assert_eq!(node.containers, 0);
    let report = wait_state(&rm, &app, y::ApplicationState::AppFailed).await?;
    assert_eq!(
        report.am_exit_status,
        y::ContainerExitStatus::Aborted as i32
    );
    assert!(rm.handle.status_json().contains("\"LOST\""));
    Ok(())
}

/// One GET on an open connection: status, headers, body.
async fn get(
    stream: &mut BufReader<TcpStream>,
    target: &str,
) -> Result<(u16, HashMap<String, String>, Vec<u8>)> {
    let req = format!("GET {target} HTTP/1.1\r\nHost: test\r\n\r\n");
    stream.get_mut().write_all(req.as_bytes()).await?;
    let mut line = String::new();
    stream.read_line(&mut line).await?;
    let code: u16 = line.split_whitespace().nth(1).context("status")?.parse()?;
    let mut headers = HashMap::new();
    loop {
        line.clear();
        stream.read_line(&mut line).await?;
        if line.trim().is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').context("header")?;
        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    let len: usize = headers["content-length"].parse()?;
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await?;
    Ok((code, headers, body))
}

#[tokio::test]
async fn shuffle_serves_partitions_by_index() -> Result<()> {
    let dir = TempDir::new()?;
    let rm = start_rm(rm_options(Timing::EventDriven)).await?;
    let nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::EventDriven)).await?;
    let (job, map) = ("job_1_0001", "attempt_1_0001_m_000003_0");
    let out = nm.local_dir.join(job).join(map);
    std::fs::create_dir_all(&out)?;
    let parts: [&[u8]; 3] = [b"alpha-partition", b"", b"gamma!"];
    let mut data = Vec::new();
    let mut index = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        index.extend((data.len() as u64).to_be_bytes());
        index.extend((100 + i as u64).to_be_bytes()); // raw length
        index.extend((p.len() as u64).to_be_bytes());
        data.extend_from_slice(p);
    }
    std::fs::write(out.join("file.out"), &data)?;
    std::fs::write(out.join("file.out.index"), &index)?;

    let stream = TcpStream::connect(nm.handle.shuffle_addr()).await?;
    let mut stream = BufReader::new(stream);
    for (i, p) in parts.iter().enumerate() {
        let target = format!("/mapOutput?job={job}&map={map}&reduce={i}");
        let (code, headers, body) = get(&mut stream, &target).await?;
        assert_eq!(code, 200);
        assert_eq!(body, *p);
        assert_eq!(headers["x-tusk-raw-length"], (100 + i).to_string());
    }
    let (code, _, body) = get(
        &mut stream,
        &format!("/mapOutput?job={job}&map={map}&reduce=3"),
    )
    .await?;
    assert_eq!(code, 404);
    assert!(String::from_utf8_lossy(&body).contains("partition 3"));
    let (code, _, body) = get(
        &mut stream,
        &format!("/mapOutput?job={job}&map=attempt_1_0001_m_000009_0&reduce=0"),
    )
    .await?;
    assert_eq!(code, 404);
    assert!(String::from_utf8_lossy(&body).contains("not found"));
    let (code, _, _) = get(&mut stream, "/mapOutput?job=..&map=x&reduce=0").await?;
    assert_eq!(code, 404);
    Ok(())
}

#[tokio::test]
async fn map_output_dir_is_given_to_task_containers() -> Result<()> {
    let dir = TempDir::new()?;
    let rm = start_rm(rm_options(Timing::EventDriven)).await?;
    let nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::EventDriven)).await?;
    let (app, launch) = sh(
        "printf %s \"$TUSK_MAP_OUTPUT_DIR\"; test -d \"$TUSK_MAP_OUTPUT_DIR\"",
        64,
    );
    let mut launch = launch;
    launch.env.insert("TUSK_JOB_ID".into(), "job_7_0001".into());
    launch.env.insert(
        "TUSK_TASK_ATTEMPT_ID".into(),
        "attempt_7_0001_m_000000_0".into(),
    );
    let app = rm
        .client
        .submit(&y::SubmitApplicationRequest {
            name: "mapdir".into(),
            am_resource: Some(app),
            am_launch: Some(launch),
            ..Default::default()
        })
        .await?;
    let expected = nm
        .local_dir
        .join("job_7_0001")
        .join("attempt_7_0001_m_000000_0");
    let report = wait_for("AM exit", || async {
        let r = rm.client.report(&app).await.ok()?;
        r.am_exited.then_some(r)
    })
    .await?;
    // Exit 0: the directory existed when the container ran.
    assert_eq!(report.am_exit_status, 0, "{}", report.diagnostics);
    let logs = nm
        .handle
        .container_log_dir(&app, &report.am_container_id)
        .context("log dir")?;
    assert_eq!(
        std::fs::read_to_string(logs.join("stdout"))?,
        expected.display().to_string()
    );
    let nodes = rm.client.nodes().await?;
    assert_eq!(nodes.len(), 1);
    assert!(nodes[0].status.is_some());
    Ok(())
}

#[tokio::test]
async fn an_unregistered_application_finishes_and_is_cleaned_up() -> Result<()> {
    let dir = TempDir::new()?;
    let options = ResourceManagerOptions {
        am_finish_grace: Duration::from_millis(200),
        ..rm_options(Timing::EventDriven)
    };
    let rm = start_rm(options).await?;
    let nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::EventDriven)).await?;
    let (app, am) = running_am(&rm, "done").await?;
    let c = ask_for(&am, vec![ask(1, 64, &[], 1)], 1).await?.remove(0);
    start_container(&c, &app, "sleep 60").await?;
    am.allocate(y::AllocateRequest {
        progress: 0.5,
        ..Default::default()
    })
    .await?;
    assert_eq!(rm.client.report(&app).await?.progress, 0.5);
    assert!(
        am.finish(y::FinalApplicationStatus::FinalSucceeded, "ok")
            .await?
    );
    let report = rm.client.report(&app).await?;
    assert_eq!(report.state, y::ApplicationState::AppFinished as i32);
    assert_eq!(
        report.final_status,
        y::FinalApplicationStatus::FinalSucceeded as i32
    );
    // The task container goes at once, the lingering AM after the grace period, then
    // the application's directory.
    wait_for("containers gone", || async {
        (nm.handle.running_containers() == 0).then_some(())
    })
    .await?;
    let app_dir = nm.local_dir.join(&app);
    wait_for("clean-up", || async { (!app_dir.exists()).then_some(()) }).await?;
    Ok(())
}

/// A ResourceManager on `listener` keeping its applications in `store`.
async fn start_rm_with_store(
    options: ResourceManagerOptions,
    listener: TcpListener,
    store: std::sync::Arc<dyn StateStore>,
) -> Result<Rm> {
    let shutdown = Shutdown::new();
    let handle =
        ResourceManager::start_with_store(options, listener, shutdown.clone(), Some(store)).await?;
    let client = ApplicationClient::new(&handle.addr().to_string());
    Ok(Rm {
        handle,
        shutdown,
        client,
    })
}

#[tokio::test]
async fn a_restarted_resourcemanager_recovers_applications_with_a_new_attempt() -> Result<()> {
    let dir = TempDir::new()?;
    let store: std::sync::Arc<dyn StateStore> = std::sync::Arc::new(MemoryStateStore::default());
    // One attempt allowed: the attempt a restart ends must not count against it.
    let options = rm_options(Timing::EventDriven);
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let rm = start_rm_with_store(options.clone(), listener, store.clone()).await?;
    let nm = start_nm(nm_options(&rm, &dir, "n", 1024, Timing::EventDriven)).await?;
    let (done, done_am) = running_am(&rm, "done").await?;
    assert!(
        done_am
            .finish(y::FinalApplicationStatus::FinalSucceeded, "ok")
            .await?
    );
    let (running, old_am) = running_am(&rm, "running").await?;
    let old_attempt = rm.client.report(&running).await?.current_attempt_id;

    // The ResourceManager goes away and comes back on the same address.
    drop(rm);
    let listener = wait_for("the old ResourceManager's port", || async {
        TcpListener::bind(addr).await.ok()
    })
    .await?;
    let rm = start_rm_with_store(options, listener, store).await?;

    let report = rm.client.report(&done).await?;
    assert_eq!(report.state, y::ApplicationState::AppFinished as i32);
    assert_eq!(
        report.final_status,
        y::FinalApplicationStatus::FinalSucceeded as i32
    );
    // The unfinished one gets attempt 2 on the NodeManager once it has resynced (which
    // kills what ran there before).
    let report = wait_for("a new AM container", || async {
        let r = rm.client.report(&running).await.ok()?;
        (!r.am_container_id.is_empty()).then_some(r)
    })
    .await?;
    assert!(
        report.current_attempt_id.ends_with("_000002"),
        "{}",
        report.current_attempt_id
    );
    assert_ne!(report.current_attempt_id, old_attempt);
    let old = old_am.allocate(y::AllocateRequest::default()).await;
    assert!(
        old.as_ref().is_err_and(|e| e
            .to_string()
            .contains("ApplicationAttemptNotFoundException")),
        "the attempt the restart ended is refused: {old:?}"
    );
    let new_am = ApplicationMasterClient::new(&addr.to_string(), &report.current_attempt_id);
    new_am.register().await?;
    assert!(
        new_am
            .finish(y::FinalApplicationStatus::FinalSucceeded, "ok")
            .await?
    );
    wait_state(&rm, &running, y::ApplicationState::AppFinished).await?;
    drop(nm);
    Ok(())
}
