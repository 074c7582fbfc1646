//! Hadoop's `mapreduce_shuffle` auxiliary service (its `ShuffleHandler`), so Hadoop's
//! own reducers (`Fetcher`) fetch map outputs from this NodeManager. It answers on the
//! shuffle server's port (`mapreduce.shuffle.port`), beside Tusk's own protocol.
//!
//! Registration ([`HadoopShuffle`]): when an application's containers start, Hadoop's
//! AM passes the job token in the launch context's `service_data["mapreduce_shuffle"]`
//! (the token as Hadoop's `Token.write` writes it); [`HadoopShuffle::initialize_application`]
//! keeps the application's user and the token's password, keyed by the job id
//! (`application_<ts>_<seq>` → `job_<ts>_<seq>`), until
//! [`HadoopShuffle::stop_application`] when the application finishes. The
//! startContainers reply carries [`HadoopShuffle::meta_data`] as
//! `services_meta_data["mapreduce_shuffle"]`: the port as a 4-byte big-endian int,
//! from which the AM builds the reducers' fetch URLs.
//!
//! A fetch: `GET /mapOutput?job=<jobId>&reduce=<partition>&map=<attempt>,<attempt>,...`
//! (`map` may repeat; one `job`, one `reduce`; optional `keepAlive=true`) with headers
//! `name: mapreduce`, `version: 1.0.0` and `UrlHash` (see `tusk_security::job_token`).
//! Checked in Hadoop's order, each refusal a plain-text body with the `name` / `version`
//! headers, after which the connection closes:
//!
//! | case | status | body |
//! |---|---|---|
//! | method other than GET | 405 | empty |
//! | `name` / `version` not `mapreduce` / `1.0.0` | 400 | `Incompatible shuffle request version` |
//! | `job`, `map` or `reduce` missing | 400 | `Required param job, map and reduce` |
//! | more than one `job` or `reduce` | 400 | `Too many job/reduce parameters` |
//! | `reduce` not an int | 400 | `Bad reduce parameter` |
//! | job not registered (unknown, or its application stopped) | 401 | `Could not find jobid` |
//! | no `UrlHash` | 401 | `fetcher cannot be authenticated` |
//! | wrong `UrlHash` | 401 | `Verification of the hashReply failed` |
//! | a map output or its partition missing, a bad index | 500 | Hadoop's message (`error::ShuffleError`) |
//!
//! Every map is located before anything is sent. The reply: 200 with `ReplyHash`,
//! `name`, `version`, `Connection` (`close`, or `Keep-Alive` with `Keep-Alive:
//! timeout=<s>` when `keepAlive=true` or `mapreduce.shuffle.connection-keep-alive.enable`)
//! and `Content-Length`; then per map, in request order, its `ShuffleHeader` (Hadoop
//! `Writable`: the map id as `Text`, the part length and the raw length as vlongs, the
//! partition as a vint) followed by the partition's bytes.
//!
//! `hadoop_shuffle/map_output.rs`: where those outputs are and how their index reads.

mod map_output;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tusk_security::job_token;
use tusk_security::writable;

use crate::error::{NodeManagerError, ShuffleError};
use crate::shuffle::http::{respond, response_head, send_file_range, Request};
use crate::Node;

/// The auxiliary service's name: the key of its service data and meta data.
pub const MAPREDUCE_SHUFFLE: &str = "mapreduce_shuffle";

/// Hadoop's shuffle headers (`ShuffleHeader.HTTP_HEADER_NAME` / `_VERSION`) and the
/// values both sides send.
const NAME_HEADER: &str = "name";
const VERSION_HEADER: &str = "version";
const NAME: &str = "mapreduce";
const VERSION: &str = "1.0.0";
/// `SecureShuffleUtils.HTTP_HEADER_URL_HASH` / `HTTP_HEADER_REPLY_URL_HASH`.
const URL_HASH_HEADER: &str = "urlhash";
const REPLY_HASH_HEADER: &str = "ReplyHash";

/// The jobs Hadoop's shuffle serves on this node.
pub struct HadoopShuffle {
    /// The shuffle server's port: handed to AMs, and part of every signed URL.
    port: u16,
    /// Per job id (`job_<ts>_<seq>`): from `initialize_application` until
    /// `stop_application`.
    jobs: Mutex<HashMap<String, JobShuffle>>,
}

/// What a job's fetches are checked and served with.
#[derive(Clone)]
struct JobShuffle {
    application: String,
    /// Owner of the map outputs: `usercache/<user>/...`.
    user: String,
    /// The job token's password: the HMAC key of `UrlHash` and `ReplyHash`.
    password: Bytes,
}

impl HadoopShuffle {
    pub(crate) fn new(port: u16) -> Self {
        HadoopShuffle {
            port,
            jobs: Default::default(),
        }
    }

    /// Serves application `application`'s map outputs (run by `user`) to fetches signed
    /// with the job token in `service_data` (the launch context's
    /// `service_data["mapreduce_shuffle"]`). Again for a known application replaces its
    /// token, as Hadoop does. Hadoop's NodeManager logs a failure here and starts the
    /// container anyway; its reducers' fetches are then refused.
    pub fn initialize_application(
        &self,
        application: &str,
        user: &str,
        service_data: &[u8],
    ) -> Result<(), NodeManagerError> {
        let job = job_of(application)?;
        if user.is_empty() || user == "." || user == ".." || user.contains(['/', '\0']) {
            return Err(NodeManagerError::InvalidUser {
                application: application.into(),
                user: user.into(),
            });
        }
        let token = writable::read_token(&mut &service_data[..]).map_err(|e| {
            NodeManagerError::InvalidServiceData {
                service: MAPREDUCE_SHUFFLE,
                application: application.into(),
                reason: e.to_string(),
            }
        })?;
        tracing::info!(%application, %job, %user, "mapreduce_shuffle: application initialized");
        self.lock().insert(
            job,
            JobShuffle {
                application: application.into(),
                user: user.into(),
                password: token.password,
            },
        );
        Ok(())
    }

    /// Forgets application `application`: its fetches are refused from now on.
    pub fn stop_application(&self, application: &str) {
        if let Ok(job) = job_of(application) {
            if self.lock().remove(&job).is_some() {
                tracing::info!(%application, "mapreduce_shuffle: application stopped");
            }
        }
    }

    /// `services_meta_data["mapreduce_shuffle"]` of a startContainers reply
    /// (`ShuffleHandler.serializeMetaData`): the port as a big-endian int.
    pub fn meta_data(&self) -> Bytes {
        Bytes::copy_from_slice(&i32::from(self.port).to_be_bytes())
    }

    /// The port Hadoop's reducers fetch from.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// How many applications it serves now.
    pub fn applications(&self) -> usize {
        self.lock().len()
    }

    fn job(&self, job: &str) -> Option<JobShuffle> {
        self.lock().get(job).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, JobShuffle>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `application_<ts>_<seq>` → `job_<ts>_<seq>`, as Hadoop's `JobID` prints them (the
/// sequence with at least four digits).
fn job_of(application: &str) -> Result<String, NodeManagerError> {
    let invalid = || NodeManagerError::InvalidApplicationId {
        application: application.into(),
    };
    let (ts, seq) = application
        .strip_prefix("application_")
        .and_then(|rest| rest.split_once('_'))
        .ok_or_else(invalid)?;
    let ts: u64 = ts.parse().map_err(|_| invalid())?;
    let seq: u32 = seq.parse().map_err(|_| invalid())?;
    Ok(format!("job_{ts}_{seq:04}"))
}

/// Whether a `/mapOutput` request is Hadoop's: it carries Hadoop's shuffle headers,
/// which Tusk's reducers never send.
pub(crate) fn is_hadoop_fetch(r: &Request) -> bool {
    [NAME_HEADER, VERSION_HEADER, URL_HASH_HEADER]
        .iter()
        .any(|h| r.header(h).is_some())
}

/// A refusal that ends the connection.
struct Refusal {
    code: u16,
    reason: &'static str,
    body: String,
}

impl Refusal {
    fn new(code: u16, body: impl Into<String>) -> Self {
        let reason = match code {
            400 => "Bad Request",
            401 => "Unauthorized",
            405 => "Method Not Allowed",
            _ => "Internal Server Error",
        };
        Refusal {
            code,
            reason,
            body: body.into(),
        }
    }
}

/// A verified fetch.
struct Fetch<'a> {
    job: JobShuffle,
    maps: Vec<&'a str>,
    reduce: i32,
    reply_hash: String,
    keep_alive: bool,
}

/// Answers one Hadoop fetch; returns how long the connection then waits for the next
/// request, or `None` to end it.
pub(crate) async fn map_output<W: AsyncWriteExt + Unpin>(
    node: &Node,
    r: &Request,
    w: &mut W,
) -> std::io::Result<Option<Duration>> {
    let fetch = match verify(node, r) {
        Ok(f) => f,
        Err(refusal) => return refuse(w, refusal).await,
    };
    let metrics = &node.containers.metrics;
    let outputs = match locate(node, &fetch).await {
        Ok(outputs) => outputs,
        Err(e) => {
            metrics.shuffle_outputs_failed.inc();
            tracing::warn!(application = %fetch.job.application, error = %e, "mapreduce_shuffle: cannot serve");
            return refuse(w, Refusal::new(500, e.to_string())).await;
        }
    };
    let length: u64 = outputs
        .iter()
        .map(|(header, output)| header.len() as u64 + output.part_length)
        .sum();
    let timeout = node.options.shuffle_keep_alive_timeout;
    let head = response_head(200, "OK", length, &reply_headers(&fetch, timeout));
    w.write_all(format!("{head}\r\n").as_bytes()).await?;
    for (header, output) in &outputs {
        w.write_all(header).await?;
        metrics.shuffle_output_sent(
            send_file_range(w, &output.data, output.start, output.part_length).await,
        )?;
    }
    w.flush().await?;
    Ok(fetch.keep_alive.then_some(timeout))
}

/// Every map's output and `ShuffleHeader`, in request order, before anything is sent
/// (so a missing one is refused with a status, as Hadoop does).
async fn locate(
    node: &Node,
    fetch: &Fetch<'_>,
) -> Result<Vec<(Vec<u8>, map_output::MapOutput)>, ShuffleError> {
    let mut outputs = Vec::with_capacity(fetch.maps.len());
    for map in &fetch.maps {
        let output = map_output::find(
            &node.options.local_dirs,
            &fetch.job.user,
            &fetch.job.application,
            map,
            fetch.reduce,
        )
        .await?;
        outputs.push((shuffle_header(map, &output, fetch.reduce), output));
    }
    Ok(outputs)
}

/// A 200 reply's headers besides `Content-Length`.
fn reply_headers(fetch: &Fetch<'_>, keep_alive_timeout: Duration) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        (REPLY_HASH_HEADER, fetch.reply_hash.clone()),
        (NAME_HEADER, NAME.to_string()),
        (VERSION_HEADER, VERSION.to_string()),
    ];
    if fetch.keep_alive {
        headers.push(("Connection", "Keep-Alive".into()));
        headers.push((
            "Keep-Alive",
            format!("timeout={}", keep_alive_timeout.as_secs()),
        ));
    } else {
        headers.push(("Connection", "close".into()));
    }
    headers
}

/// The request's checks, in the order Hadoop's ShuffleHandler makes them.
fn verify<'a>(node: &Node, r: &'a Request) -> Result<Fetch<'a>, Refusal> {
    if r.method != "GET" {
        return Err(Refusal::new(405, ""));
    }
    if r.header(NAME_HEADER) != Some(NAME) || r.header(VERSION_HEADER) != Some(VERSION) {
        return Err(Refusal::new(400, "Incompatible shuffle request version"));
    }
    let keep_alive_params: Vec<&str> = r.params("keepAlive").collect();
    let keep_alive_param = matches!(&keep_alive_params[..], [v] if v.eq_ignore_ascii_case("true"));
    let maps: Vec<&str> = r.params("map").flat_map(split_maps).collect();
    let jobs: Vec<&str> = r.params("job").collect();
    let reduces: Vec<&str> = r.params("reduce").collect();
    if r.param("map").is_none() || jobs.is_empty() || reduces.is_empty() {
        return Err(Refusal::new(400, "Required param job, map and reduce"));
    }
    let ([job], [reduce]) = (&jobs[..], &reduces[..]) else {
        return Err(Refusal::new(400, "Too many job/reduce parameters"));
    };
    let reduce: i32 = reduce
        .parse()
        .map_err(|_| Refusal::new(400, "Bad reduce parameter"))?;
    let shuffle = &node.hadoop_shuffle;
    let Some(job) = shuffle.job(job) else {
        return Err(Refusal::new(401, "Could not find jobid"));
    };
    let Some(url_hash) = r.header(URL_HASH_HEADER) else {
        return Err(Refusal::new(401, "fetcher cannot be authenticated"));
    };
    let message = job_token::shuffle_message(shuffle.port, &r.target);
    if !job_token::verify_shuffle_hash(&job.password, message.as_bytes(), url_hash) {
        return Err(Refusal::new(401, "Verification of the hashReply failed"));
    }
    let reply_hash = job_token::shuffle_hash(&job.password, url_hash.as_bytes());
    Ok(Fetch {
        job,
        maps,
        reduce,
        reply_hash,
        keep_alive: keep_alive_param || node.options.shuffle_keep_alive,
    })
}

/// Java's `String.split(",")`: trailing empty strings dropped, but an empty value is
/// one empty id.
fn split_maps(value: &str) -> Vec<&str> {
    if value.is_empty() {
        return vec![""];
    }
    let mut ids: Vec<&str> = value.split(',').collect();
    while ids.last() == Some(&"") {
        ids.pop();
    }
    ids
}

async fn refuse<W: AsyncWriteExt + Unpin>(
    w: &mut W,
    refusal: Refusal,
) -> std::io::Result<Option<Duration>> {
    respond(
        w,
        refusal.code,
        refusal.reason,
        &[
            ("Content-Type", "text/plain; charset=UTF-8".into()),
            (NAME_HEADER, NAME.into()),
            (VERSION_HEADER, VERSION.into()),
        ],
        refusal.body.as_bytes(),
        false,
    )
    .await?;
    Ok(None)
}

/// Hadoop's `ShuffleHeader.write`: the map id as `Text`, the part (compressed) and raw
/// lengths as vlongs, the partition as a vint.
fn shuffle_header(map: &str, output: &map_output::MapOutput, reduce: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(map.len() + 24);
    writable::write_text(&mut out, map);
    writable::write_vlong(&mut out, output.part_length as i64);
    writable::write_vlong(&mut out, output.raw_length as i64);
    writable::write_vint(&mut out, reduce);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of Hadoop 3.4.2's `ShuffleHeader("attempt_1700000000000_0001_m_000000_0",
    /// 300, 70000, 3).write`.
    #[test]
    fn shuffle_header_matches_hadoops_writable() {
        let map = "attempt_1700000000000_0001_m_000000_0";
        let output = map_output::MapOutput {
            data: Default::default(),
            start: 0,
            raw_length: 70_000,
            part_length: 300,
        };
        let mut java = vec![0x25];
        java.extend(map.as_bytes());
        java.extend([0x8e, 0x01, 0x2c, 0x8d, 0x01, 0x11, 0x70, 0x03]);
        assert_eq!(shuffle_header(map, &output, 3), java);
    }

    #[test]
    fn jobs_are_named_as_hadoops_job_id() {
        assert_eq!(
            job_of("application_1700000000000_0001").unwrap(),
            "job_1700000000000_0001"
        );
        assert_eq!(job_of("application_17_12345").unwrap(), "job_17_12345");
        assert!(job_of("container_17_0001").is_err());
        assert!(job_of("application_x_0001").is_err());
    }

    #[test]
    fn map_lists_split_as_java_does() {
        assert_eq!(split_maps("a,b,,"), ["a", "b"]);
        assert_eq!(split_maps("a,,b"), ["a", "", "b"]);
        assert_eq!(split_maps(""), [""]);
        assert!(split_maps(",").is_empty());
    }

    #[test]
    fn registration_keeps_the_token_password_until_the_application_stops() {
        let shuffle = HadoopShuffle::new(13562);
        assert_eq!(&shuffle.meta_data()[..], &[0, 0, 0x34, 0xfa]);
        let mut data = Vec::new();
        writable::write_token(
            &mut data,
            &tusk_proto::common::TokenProto {
                identifier: job_token::JobTokenIdentifier {
                    job_id: "job_1_0001".into(),
                }
                .encode()
                .into(),
                password: Bytes::from_static(b"secret"),
                kind: job_token::JOB_TOKEN_KIND.into(),
                service: String::new(),
            },
        );
        shuffle
            .initialize_application("application_1_0001", "alice", &data)
            .unwrap();
        let job = shuffle.job("job_1_0001").unwrap();
        assert_eq!(
            (job.user.as_str(), &job.password[..]),
            ("alice", &b"secret"[..])
        );
        assert!(shuffle
            .initialize_application("application_1_0002", "alice", &data[..3])
            .is_err());
        assert!(shuffle
            .initialize_application("application_1_0002", "../x", &data)
            .is_err());
        shuffle.stop_application("application_1_0001");
        assert!(shuffle.job("job_1_0001").is_none());
        assert_eq!(shuffle.applications(), 0);
    }
}
