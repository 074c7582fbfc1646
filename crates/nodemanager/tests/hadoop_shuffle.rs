//! Hadoop's `mapreduce_shuffle` on a NodeManager of the minicluster, fetched the way
//! Hadoop's reducers (`Fetcher`) fetch: map outputs written in Hadoop's layout under
//! two local dirs, the job token registered as Hadoop's AM passes it, requests signed
//! with the job token's HMAC.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::net::TcpStream;
use tusk_cluster::testing::http_exchange::{self, HttpResponse};
use tusk_cluster::{wait_for, MiniCluster};
use tusk_proto::common::TokenProto;
use tusk_security::job_token::{self, JobTokenIdentifier, JOB_TOKEN_KIND};
use tusk_security::writable;

const DEADLINE: Duration = Duration::from_secs(20);
const USER: &str = "alice";
const PASSWORD: &[u8] = b"the job token's password";

/// A minicluster with one NodeManager whose local dirs are `<base>/local-a` and
/// `<base>/local-b`.
async fn cluster() -> Result<(MiniCluster, Vec<PathBuf>)> {
    let mut cluster = MiniCluster::builder()
        .datanodes(0)
        .nodemanagers(0)
        .conf(
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "100",
        )
        .conf("yarn.scheduler.minimum-allocation-mb", "64")
        .conf("yarn.resourcemanager.am.max-attempts", "1")
        .build()
        .await
        .map_err(anyhow::Error::from_boxed)?;
    let dirs = vec![
        cluster.base_dir().join("local-a"),
        cluster.base_dir().join("local-b"),
    ];
    let local_dirs = dirs.clone();
    cluster
        .yarn_mut()
        .add_nodemanager("nm0", |o| o.local_dirs = local_dirs)
        .await
        .map_err(anyhow::Error::from_boxed)?;
    Ok((cluster, dirs))
}

/// `service_data["mapreduce_shuffle"]` as Hadoop's AM sets it: the job token as
/// `Token.write` writes it.
fn service_data(job: &str, password: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    writable::write_token(
        &mut out,
        &TokenProto {
            identifier: JobTokenIdentifier { job_id: job.into() }.encode().into(),
            password: Bytes::copy_from_slice(password),
            kind: JOB_TOKEN_KIND.into(),
            service: job.into(),
        },
    );
    out
}

/// Writes a map's `file.out` and `file.out.index` (with its CRC32) as Hadoop's map task
/// does, the index under `index_dir` and the data under `data_dir` (two local dirs);
/// each partition's raw length is its length plus 100.
fn write_map_output(
    index_dir: &Path,
    data_dir: &Path,
    app: &str,
    map: &str,
    partitions: &[&[u8]],
) -> Result<()> {
    let rel = format!("usercache/{USER}/appcache/{app}/output/{map}");
    let (index_at, data_at) = (index_dir.join(&rel), data_dir.join(&rel));
    std::fs::create_dir_all(&index_at)?;
    std::fs::create_dir_all(&data_at)?;
    let (mut data, mut index) = (Vec::new(), Vec::new());
    for p in partitions {
        index.extend((data.len() as u64).to_be_bytes());
        index.extend((p.len() as u64 + 100).to_be_bytes());
        index.extend((p.len() as u64).to_be_bytes());
        data.extend_from_slice(p);
    }
    let crc = u64::from(crc32fast::hash(&index));
    index.extend(crc.to_be_bytes());
    std::fs::write(index_at.join("file.out.index"), index)?;
    std::fs::write(data_at.join("file.out"), data)?;
    Ok(())
}

/// A fetch as Hadoop's `Fetcher` sends it: `UrlHash` over the server's port and the
/// path and query, `name` and `version`; `url_hash` overrides the hash (`Some("")`:
/// none sent), `version` the version header.
async fn fetch(
    stream: &mut BufReader<TcpStream>,
    target: &str,
    password: &[u8],
    url_hash: Option<&str>,
    version: &str,
) -> Result<HttpResponse> {
    let port = stream.get_ref().peer_addr()?.port();
    let hash = job_token::shuffle_hash(
        password,
        job_token::shuffle_message(port, target).as_bytes(),
    );
    let mut headers = vec![("name", "mapreduce"), ("version", version)];
    match url_hash.unwrap_or(&hash) {
        "" => {}
        hash => headers.push(("UrlHash", hash)),
    }
    http_exchange::get(stream, target, &headers)
        .await
        .map_err(anyhow::Error::from_boxed)
}

/// A fetch signed with [`PASSWORD`] on a new connection.
async fn fetch_once(cluster: &MiniCluster, target: &str) -> Result<HttpResponse> {
    fetch(
        &mut connect(cluster).await?,
        target,
        PASSWORD,
        None,
        "1.0.0",
    )
    .await
}

async fn connect(cluster: &MiniCluster) -> Result<BufReader<TcpStream>> {
    let addr = cluster.yarn().nodemanager(0).shuffle_addr();
    Ok(BufReader::new(TcpStream::connect(addr).await?))
}

/// One map's part of a reply body: its `ShuffleHeader` (map id, part length, raw
/// length, partition) and bytes.
fn next_map(body: &mut &[u8]) -> Result<(String, u64, u64, i32, Vec<u8>)> {
    let map = writable::read_text(body)?;
    let part = writable::read_vlong(body)? as u64;
    let raw = writable::read_vlong(body)? as u64;
    let reduce = writable::read_vint(body)?;
    if body.len() < part as usize {
        bail!("{map}: {part} bytes announced, {} left", body.len());
    }
    let (bytes, rest) = body.split_at(part as usize);
    *body = rest;
    Ok((map, part, raw, reduce, bytes.to_vec()))
}

#[tokio::test]
async fn a_hadoop_reducer_fetches_two_maps_in_one_request() -> Result<()> {
    let (cluster, dirs) = cluster().await?;
    let nm = cluster.yarn().nodemanager(0);
    let (app, job) = ("application_1700000000000_0007", "job_1700000000000_0007");
    let maps = [
        "attempt_1700000000000_0007_m_000000_0",
        "attempt_1700000000000_0007_m_000001_0",
    ];
    // The first map's index is in the second local dir, its data in the first.
    write_map_output(
        &dirs[1],
        &dirs[0],
        app,
        maps[0],
        &[b"m0-p0", b"m0-partition-1", b""],
    )?;
    write_map_output(
        &dirs[0],
        &dirs[0],
        app,
        maps[1],
        &[b"m1-p0", b"m1-p1!", b"x"],
    )?;
    nm.hadoop_shuffle()
        .initialize_application(app, USER, &service_data(job, PASSWORD))?;
    // What the startContainers reply carries: the port the reducers fetch from.
    assert_eq!(
        nm.hadoop_shuffle().meta_data(),
        Bytes::copy_from_slice(&i32::from(nm.shuffle_addr().port()).to_be_bytes())
    );
    let status: serde_json::Value = serde_json::from_str(&nm.status_json())?;
    assert_eq!(status["shuffle_port"], nm.shuffle_addr().port());
    assert_eq!(status["mapreduce_shuffle_applications"], 1);

    let target = format!("/mapOutput?job={job}&reduce=1&map={},{}", maps[0], maps[1]);
    let mut stream = connect(&cluster).await?;
    let reply = fetch(&mut stream, &target, PASSWORD, None, "1.0.0").await?;
    assert_eq!(reply.code, 200, "{}", reply.text());
    assert_eq!(reply.headers["name"], "mapreduce");
    assert_eq!(reply.headers["version"], "1.0.0");
    assert_eq!(reply.headers["connection"], "close");
    // ReplyHash: the HMAC of the UrlHash the reducer sent.
    let port = nm.shuffle_addr().port();
    let url_hash = job_token::shuffle_hash(
        PASSWORD,
        job_token::shuffle_message(port, &target).as_bytes(),
    );
    assert!(job_token::verify_shuffle_hash(
        PASSWORD,
        url_hash.as_bytes(),
        &reply.headers["replyhash"]
    ));
    let mut body = reply.body.as_slice();
    assert_eq!(
        next_map(&mut body)?,
        (maps[0].to_string(), 14, 114, 1, b"m0-partition-1".to_vec())
    );
    assert_eq!(
        next_map(&mut body)?,
        (maps[1].to_string(), 6, 106, 1, b"m1-p1!".to_vec())
    );
    assert!(body.is_empty());
    // Without keepAlive the server closes the connection after the reply.
    let mut rest = Vec::new();
    assert_eq!(stream.read_to_end(&mut rest).await?, 0);

    // keepAlive=true keeps it for the next fetch, an empty partition included.
    let target = format!(
        "/mapOutput?job={job}&reduce=2&map={}&keepAlive=true",
        maps[0]
    );
    let mut stream = connect(&cluster).await?;
    let reply = fetch(&mut stream, &target, PASSWORD, None, "1.0.0").await?;
    assert_eq!(reply.code, 200, "{}", reply.text());
    assert_eq!(reply.headers["connection"], "Keep-Alive");
    assert_eq!(reply.headers["keep-alive"], "timeout=5");
    let mut body = reply.body.as_slice();
    assert_eq!(
        next_map(&mut body)?,
        (maps[0].to_string(), 0, 100, 2, vec![])
    );
    let target = format!(
        "/mapOutput?job={job}&reduce=0&map={}&keepAlive=true",
        maps[1]
    );
    let reply = fetch(&mut stream, &target, PASSWORD, None, "1.0.0").await?;
    assert_eq!(reply.code, 200, "{}", reply.text());
    let mut body = reply.body.as_slice();
    assert_eq!(next_map(&mut body)?.4, b"m1-p0");
    Ok(())
}

/// A fetch and the refusal it gets.
struct Refused {
    target: String,
    password: &'static [u8],
    url_hash: Option<&'static str>,
    version: &'static str,
    code: u16,
    body: String,
}

#[tokio::test]
async fn fetches_are_refused_as_hadoops_shuffle_handler_refuses_them() -> Result<()> {
    let (cluster, dirs) = cluster().await?;
    let nm = cluster.yarn().nodemanager(0);
    let (app, job) = ("application_1700000000000_0008", "job_1700000000000_0008");
    let map = "attempt_1700000000000_0008_m_000000_0";
    write_map_output(&dirs[0], &dirs[0], app, map, &[b"only partition"])?;
    nm.hadoop_shuffle()
        .initialize_application(app, USER, &service_data(job, PASSWORD))?;
    let ok = format!("/mapOutput?job={job}&reduce=0&map={map}");
    assert_eq!(fetch_once(&cluster, &ok).await?.code, 200);

    let other_map = "attempt_1700000000000_0008_m_000001_0";
    let refused = |target: String, code, body: &str| Refused {
        target,
        password: PASSWORD,
        url_hash: None,
        version: "1.0.0",
        code,
        body: body.to_string(),
    };
    let cases = vec![
        Refused {
            password: b"a wrong password",
            ..refused(ok.clone(), 401, "Verification of the hashReply failed")
        },
        Refused {
            url_hash: Some(""),
            ..refused(ok.clone(), 401, "fetcher cannot be authenticated")
        },
        Refused {
            version: "2.0.0",
            ..refused(ok.clone(), 400, "Incompatible shuffle request version")
        },
        refused(
            format!("/mapOutput?job=job_1700000000000_0009&reduce=0&map={map}"),
            401,
            "Could not find jobid",
        ),
        refused(
            format!("/mapOutput?job={job}&map={map}"),
            400,
            "Required param job, map and reduce",
        ),
        refused(
            format!("/mapOutput?job={job}&reduce=0&reduce=1&map={map}"),
            400,
            "Too many job/reduce parameters",
        ),
        refused(
            format!("/mapOutput?job={job}&reduce=x&map={map}"),
            400,
            "Bad reduce parameter",
        ),
        refused(
            format!("/mapOutput?job={job}&reduce=0&map={map},{other_map}"),
            500,
            &format!("Could not find usercache/{USER}/appcache/{app}/output/{other_map}/file.out.index in any of the configured local directories"),
        ),
        refused(
            format!("/mapOutput?job={job}&reduce=1&map={map}"),
            500,
            &format!("Invalid request  Map Id = {map} Reducer = 1 Index Info Length = 1"),
        ),
    ];
    for Refused {
        target,
        password,
        url_hash,
        version,
        code,
        body,
    } in cases
    {
        let mut stream = connect(&cluster).await?;
        let reply = fetch(&mut stream, &target, password, url_hash, version).await?;
        assert_eq!((reply.code, reply.text()), (code, body), "{target}");
        assert_eq!(reply.headers["name"], "mapreduce");
        assert_eq!(reply.headers["content-type"], "text/plain; charset=UTF-8");
        assert!(!reply.headers.contains_key("replyhash"));
        // Hadoop closes the connection after an error.
        let mut rest = Vec::new();
        assert_eq!(stream.read_to_end(&mut rest).await?, 0, "{target}");
    }

    // The two 500s count as failed outputs, in Hadoop's ShuffleMetrics bean.
    let addr = cluster.yarn().nodemanager_http_addr(0);
    let mut web = BufReader::new(TcpStream::connect(addr).await?);
    let jmx = http_exchange::get(&mut web, "/jmx", &[])
        .await
        .map_err(anyhow::Error::from_boxed)?;
    let jmx: serde_json::Value = serde_json::from_slice(&jmx.body)?;
    let failed = jmx["beans"]
        .as_array()
        .context("beans")?
        .iter()
        .find_map(|b| b["ShuffleOutputsFailed"].as_u64());
    assert_eq!(failed, Some(2));

    // The same URL without Hadoop's headers is Tusk's own protocol, on the same port.
    let reply = http_exchange::get(&mut connect(&cluster).await?, &ok, &[])
        .await
        .map_err(anyhow::Error::from_boxed)?;
    assert_eq!(reply.code, 404);
    assert!(reply.text().contains("not found"), "{}", reply.text());

    nm.hadoop_shuffle().stop_application(app);
    let reply = fetch_once(&cluster, &ok).await?;
    assert_eq!(
        (reply.code, reply.text().as_str()),
        (401, "Could not find jobid")
    );
    Ok(())
}

/// When the ResourceManager says an application finished, the NodeManager stops
/// serving its map outputs.
#[tokio::test]
async fn a_finished_application_is_no_longer_served() -> Result<()> {
    let (cluster, dirs) = cluster().await?;
    let yarn = cluster.yarn();
    let nm = yarn.nodemanager(0);
    let app = yarn
        .client()
        .submit(&tusk_cluster::testing::sleeping_application(
            "shuffle", 64, 60,
        ))
        .await?;
    let job = app.replacen("application_", "job_", 1);
    let map = format!("{}_m_000000_0", job.replacen("job_", "attempt_", 1));
    write_map_output(&dirs[0], &dirs[1], &app, &map, &[b"abc"])?;
    nm.hadoop_shuffle()
        .initialize_application(&app, USER, &service_data(&job, PASSWORD))?;
    let target = format!("/mapOutput?job={job}&reduce=0&map={map}");
    let reply = fetch_once(&cluster, &target).await?;
    assert_eq!(reply.code, 200, "{}", reply.text());

    assert!(yarn.client().kill(&app).await?);
    wait_for("the application's shuffle to stop", DEADLINE, || async {
        (nm.hadoop_shuffle().applications() == 0).then_some(())
    })
    .await?;
    let reply = fetch_once(&cluster, &target).await?;
    assert_eq!(
        (reply.code, reply.text().as_str()),
        (401, "Could not find jobid")
    );
    Ok(())
}

/// Hadoop 3.4.2's own `SecureShuffleUtils` and `ShuffleHeader` against this server, run
/// by `scripts/hadoop-shuffle.sh` (which resolves Hadoop's jars into
/// `HADOOP_SHUFFLE_CLASSPATH`): `FetchWithHadoop` signs the URL, checks the reply's
/// headers and ReplyHash, and reads both maps with `ShuffleHeader.readFields`.
#[tokio::test]
#[ignore = "needs Java and Hadoop's jars: scripts/hadoop-shuffle.sh"]
async fn hadoops_own_fetcher_pieces_read_the_reply() -> Result<()> {
    let classpath = std::env::var("HADOOP_SHUFFLE_CLASSPATH")
        .context("HADOOP_SHUFFLE_CLASSPATH (set by scripts/hadoop-shuffle.sh)")?;
    let (cluster, dirs) = cluster().await?;
    let nm = cluster.yarn().nodemanager(0);
    let (app, job) = ("application_1700000000000_0011", "job_1700000000000_0011");
    let maps = [
        "attempt_1700000000000_0011_m_000000_0",
        "attempt_1700000000000_0011_m_000001_0",
    ];
    write_map_output(&dirs[0], &dirs[1], app, maps[0], &[b"zero", b"first map"])?;
    write_map_output(&dirs[1], &dirs[1], app, maps[1], &[b"", b"second map"])?;
    let password = "job token password";
    nm.hadoop_shuffle().initialize_application(
        app,
        USER,
        &service_data(job, password.as_bytes()),
    )?;
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/hadoop-shuffle/FetchWithHadoop.java");
    let java = |password: &str| {
        let mut command = tokio::process::Command::new("java");
        command
            .arg("-cp")
            .arg(&classpath)
            .arg(&source)
            .arg(nm.shuffle_addr().to_string())
            .args([job, "1", password, &maps.join(",")])
            .stderr(std::process::Stdio::inherit());
        async move {
            let out = command.output().await?;
            let stdout = String::from_utf8(out.stdout)?;
            anyhow::ensure!(out.status.success(), "FetchWithHadoop failed: {stdout}");
            anyhow::Ok(stdout)
        }
    };
    assert_eq!(
        java(password).await?,
        format!(
            "status 200\n\
             map {} reduce 1 compressed 9 uncompressed 109 data first map\n\
             map {} reduce 1 compressed 10 uncompressed 110 data second map\n",
            maps[0], maps[1]
        )
    );
    assert_eq!(java("another password").await?, "status 401\n");
    Ok(())
}
