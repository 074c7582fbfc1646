//! Log aggregation (`yarn.log-aggregation-enable`): when the ResourceManager says an
//! application finished, the node writes the logs of the application's containers
//! that ran here (every file of `<log-dir>/<appId>/<containerId>/`: stdout, stderr,
//! syslog, prelaunch.*, launch_container.sh, directory.info …) to one file on the DFS,
//! in Hadoop's aggregated-log layout and format, then deletes the local copies. Hadoop's
//! `yarn logs -applicationId` (`LogsCLI`) reads it.
//!
//! Where (Hadoop 3.3+'s `LogAggregationUtils`, TFile controller):
//! `<remote-app-log-dir>/<user>/bucket-<suffix>/<appId seq % 10000, 4 digits>/<appId>/<host>_<port>`,
//! default `/tmp/logs/<user>/bucket-logs-tfile/0001/application_…_0001/127.0.0.1_40123`.
//! The remote root is made world-writable and sticky (1777) by the NodeManager's user;
//! everything under it is made by the application's user, so the file is theirs
//! (owner = the app's user, 0640, dirs 0770). The file is written as `<node>.tmp` and
//! renamed when complete, so a reader never sees half a file.
//!
//! What (`AggregatedLogFormat.LogWriter`): a TFile (`log_aggregation/tfile.rs`) whose
//! keys are Java `writeUTF` strings: `VERSION` (value: int 1), `APPLICATION_ACL`
//! (value: pairs of `writeUTF` strings; none here), `APPLICATION_OWNER` (value: the
//! user, `writeUTF`), then one record per container, key its id, value per log file
//! (by name): `writeUTF(name)`, `writeUTF(decimal length)`, the bytes. Files are
//! streamed into the TFile and on to the DFS in pieces of about 1 MiB.

pub(crate) mod tfile;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

use tusk_client::{CreateOptions, DfsClient};
use tusk_proto::tusk::yarn as y;

use crate::error::NodeManagerError;
use crate::Node;
use tfile::TFileWriter;

/// The reserved keys of `AggregatedLogFormat`.
const VERSION_KEY: &str = "VERSION";
const APPLICATION_ACL_KEY: &str = "APPLICATION_ACL";
const APPLICATION_OWNER_KEY: &str = "APPLICATION_OWNER";
/// `AggregatedLogFormat.VERSION`.
const FORMAT_VERSION: i32 = 1;
/// Hadoop's permissions: the remote root (`1777`), the dirs the user makes (`0770`) and
/// the node's file (`0640`).
const REMOTE_ROOT_PERMISSION: u16 = 0o1777;
const APP_DIR_PERMISSION: u16 = 0o770;
const LOG_FILE_PERMISSION: u16 = 0o640;

/// The node's applications' users, so their logs are written as them, and the
/// outcomes to report; owned by the node for its life.
#[derive(Default)]
pub(crate) struct LogAggregation {
    /// Application id → its user, recorded at each container start; removed when the
    /// application's logs are aggregated.
    users: Mutex<HashMap<String, String>>,
    /// Aggregations ended and not yet told to the ResourceManager; drained by a
    /// heartbeat (given back if it fails).
    reports: Mutex<Vec<y::LogAggregationReport>>,
}

impl LogAggregation {
    /// Remembers `application`'s user (empty = the NodeManager's own).
    pub fn track(&self, application: &str, user: &str) {
        if user.is_empty() {
            return;
        }
        self.lock()
            .entry(application.to_string())
            .or_insert_with(|| user.to_string());
    }

    fn take_user(&self, application: &str) -> String {
        self.lock()
            .remove(application)
            .unwrap_or_else(tusk_common::current_user)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.users.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reports(&self) -> std::sync::MutexGuard<'_, Vec<y::LogAggregationReport>> {
        self.reports.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn report(&self, application: &str, outcome: Result<(), String>) {
        self.reports().push(y::LogAggregationReport {
            application_id: application.to_string(),
            succeeded: outcome.is_ok(),
            diagnostics: outcome.err().unwrap_or_default(),
        });
    }

    /// The outcomes for the next heartbeat.
    pub fn take_reports(&self) -> Vec<y::LogAggregationReport> {
        std::mem::take(&mut *self.reports())
    }

    /// Gives back outcomes a failed heartbeat did not deliver.
    pub fn restore_reports(&self, mut reports: Vec<y::LogAggregationReport>) {
        let mut pending = self.reports();
        reports.append(&mut pending);
        *pending = reports;
    }
}

/// `<root>/<user>/bucket-<suffix>/<bucket>/<appId>`: Hadoop 3.3+'s remote app log dir.
pub fn remote_app_dir(root: &str, user: &str, suffix: &str, application: &str) -> String {
    let sequence: u64 = application
        .rsplit('_')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    format!(
        "{}/{user}/bucket-{suffix}/{:04}/{application}",
        root.trim_end_matches('/'),
        sequence % 10000
    )
}

/// The node's file name in the app dir: its id with `:` → `_`.
pub fn node_file_name(node_id: &str) -> String {
    node_id.replace(':', "_")
}

/// Where node `node_id` writes `user`'s `application`'s logs: the app dir and the file
/// in it.
pub(crate) fn remote_paths(
    options: &crate::NodeManagerOptions,
    node_id: &str,
    user: &str,
    application: &str,
) -> (String, String) {
    let app_dir = remote_app_dir(
        &options.remote_app_log_dir,
        user,
        &options.remote_app_log_dir_suffix,
        application,
    );
    let file = format!("{app_dir}/{}", node_file_name(node_id));
    (app_dir, file)
}

/// Aggregates `application`'s logs on this node when aggregation is on, and queues
/// the outcome for the ResourceManager. Logs stay on the node when the upload fails.
pub(crate) async fn aggregate(node: &Node, application: &str) {
    if !node.options.log_aggregation {
        return;
    }
    let user = node.log_aggregation.take_user(application);
    let containers = container_log_dirs(&node.options.log_dirs, application);
    if containers.is_empty() {
        node.log_aggregation.report(application, Ok(()));
        return;
    }
    match upload(node, application, &user, &containers).await {
        Ok(path) => {
            tracing::info!(%application, %path, "container logs aggregated");
            for dir in &node.options.log_dirs {
                let app_dir = dir.join(application);
                if let Err(e) = tokio::fs::remove_dir_all(&app_dir).await {
                    tracing::warn!(path = %app_dir.display(), error = %e, "log clean-up failed");
                }
            }
            node.log_aggregation.report(application, Ok(()));
        }
        Err(e) => {
            tracing::warn!(%application, error = %e, "log aggregation failed; logs kept on the node");
            node.log_aggregation.report(application, Err(e.to_string()));
        }
    }
}

/// Each container of `application` with logs here → its log dirs (one per log dir it
/// has files in), by container id.
fn container_log_dirs(log_dirs: &[PathBuf], application: &str) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for dir in log_dirs {
        let Ok(entries) = std::fs::read_dir(dir.join(application)) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                out.entry(entry.file_name().to_string_lossy().into_owned())
                    .or_default()
                    .push(entry.path());
            }
        }
    }
    out
}

/// Writes the node's file for `application` as `user`; its final path.
async fn upload(
    node: &Node,
    application: &str,
    user: &str,
    containers: &BTreeMap<String, Vec<PathBuf>>,
) -> Result<String, NodeManagerError> {
    let failed = |message: String| NodeManagerError::LogAggregation {
        application: application.to_string(),
        node: node.node_id.clone(),
        message,
    };
    let dfs_error = |e: tusk_client::ClientError| failed(e.to_string());
    let not_dfs = || failed("fs.defaultFS is not a DFS (hdfs://)".into());
    let as_node = node
        .localizer
        .default_dfs(&tusk_common::current_user(), None)
        .ok_or_else(not_dfs)?
        .map_err(failed)?;
    let as_user = node
        .localizer
        .default_dfs(user, Some(application))
        .ok_or_else(not_dfs)?
        .map_err(failed)?;
    ensure_remote_root(&as_node, &node.options.remote_app_log_dir)
        .await
        .map_err(dfs_error)?;
    let (app_dir, path) = remote_paths(&node.options, &node.node_id, user, application);
    as_user
        .mkdirs(&app_dir, APP_DIR_PERMISSION, true)
        .await
        .map_err(dfs_error)?;
    let tmp = format!("{path}.tmp");
    let mut out = as_user
        .create(
            &tmp,
            CreateOptions {
                overwrite: true,
                permission: Some(LOG_FILE_PERMISSION),
                ..Default::default()
            },
        )
        .await
        .map_err(dfs_error)?;
    write_log_file(&mut out, user, containers)
        .await
        .map_err(failed)?;
    out.close().await.map_err(dfs_error)?;
    as_user
        .rename2(&tmp, &path, true)
        .await
        .map_err(dfs_error)?;
    Ok(path)
}

/// Makes the remote root, world-writable and sticky, unless it exists.
async fn ensure_remote_root(dfs: &DfsClient, root: &str) -> Result<(), tusk_client::ClientError> {
    if dfs.get_file_info(root).await?.is_none() {
        dfs.mkdirs(root, REMOTE_ROOT_PERMISSION, true).await?;
        dfs.set_permission(root, REMOTE_ROOT_PERMISSION).await?;
    }
    Ok(())
}

/// Where an aggregated log file's bytes go as they are made: the DFS file, or a
/// buffer (tests).
trait Sink {
    async fn put(&mut self, bytes: &[u8]) -> Result<(), String>;
}

impl Sink for tusk_client::FileWriter {
    async fn put(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.write(bytes).await.map_err(|e| e.to_string())
    }
}

impl Sink for Vec<u8> {
    async fn put(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// How much of the file is held before it goes to the sink.
const PUT_SIZE: usize = 1 << 20;

/// Writes a whole aggregated log file to `out`: the `VERSION`, `APPLICATION_ACL` and
/// `APPLICATION_OWNER` records, in the order Hadoop's NodeManager writes them, then
/// each container's. Files are streamed, so memory stays within a few chunks.
async fn write_log_file(
    out: &mut impl Sink,
    user: &str,
    containers: &BTreeMap<String, Vec<PathBuf>>,
) -> Result<(), String> {
    let mut tfile = TFileWriter::default();
    let tfile_error = |e: tfile::TFileError| e.to_string();
    tfile
        .append(&java_utf(VERSION_KEY)?, &FORMAT_VERSION.to_be_bytes())
        .map_err(tfile_error)?;
    tfile
        .append(&java_utf(APPLICATION_ACL_KEY)?, &[])
        .map_err(tfile_error)?;
    tfile
        .append(&java_utf(APPLICATION_OWNER_KEY)?, &java_utf(user)?)
        .map_err(tfile_error)?;
    for (container, dirs) in containers {
        tfile
            .begin_record(&java_utf(container)?)
            .map_err(tfile_error)?;
        for (name, path) in log_files(dirs)
            .await
            .map_err(|e| format!("listing the logs of {container}: {e}"))?
        {
            append_log_file(&mut tfile, out, &name, &path)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        tfile.end_record();
        out.put(&tfile.take()).await?;
    }
    out.put(&tfile.finish()).await
}

/// A container's log files (regular files in its log dirs), by name.
async fn log_files(dirs: &[PathBuf]) -> std::io::Result<BTreeMap<String, PathBuf>> {
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in dirs {
        let mut entries = tokio::fs::read_dir(dir).await?;
        while let Some(entry) = entries.next_entry().await? {
            if entry.file_type().await?.is_file() {
                files
                    .entry(entry.file_name().to_string_lossy().into_owned())
                    .or_insert_with(|| entry.path());
            }
        }
    }
    Ok(files)
}

/// One log file in the open container record (`AggregatedLogFormat.LogValue`): its
/// name, its length as text, its bytes (as long as it was when listed).
async fn append_log_file(
    tfile: &mut TFileWriter,
    out: &mut impl Sink,
    name: &str,
    path: &std::path::Path,
) -> Result<(), String> {
    use tokio::io::AsyncReadExt;
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| e.to_string())?;
    let length = file.metadata().await.map_err(|e| e.to_string())?.len();
    tfile.write_value(&java_utf(name)?);
    tfile.write_value(&java_utf(&length.to_string())?);
    let mut file = file.take(length);
    let mut buf = vec![0u8; 64 << 10];
    let mut copied = 0u64;
    loop {
        let n = file.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        tfile.write_value(&buf[..n]);
        copied += n as u64;
        if tfile.pending() >= PUT_SIZE {
            out.put(&tfile.take()).await?;
        }
    }
    if copied < length {
        return Err(format!("shrank from {length} to {copied} bytes while read"));
    }
    Ok(())
}

/// Java's `DataOutput.writeUTF`: a 2-byte length, then modified UTF-8 (NUL as two
/// bytes, characters beyond the BMP as two 3-byte surrogates).
pub fn java_utf(s: &str) -> Result<Vec<u8>, String> {
    let mut body = Vec::with_capacity(s.len());
    let mut units = [0u16; 2];
    for c in s.chars() {
        for &u in c.encode_utf16(&mut units).iter() {
            match u {
                1..=0x7f => body.push(u as u8),
                0 | 0x80..=0x7ff => {
                    body.push(0xc0 | (u >> 6) as u8);
                    body.push(0x80 | (u & 0x3f) as u8);
                }
                _ => {
                    body.push(0xe0 | (u >> 12) as u8);
                    body.push(0x80 | ((u >> 6) & 0x3f) as u8);
                    body.push(0x80 | (u & 0x3f) as u8);
                }
            }
        }
    }
    let len =
        u16::try_from(body.len()).map_err(|_| format!("string too long: {} bytes", body.len()))?;
    let mut out = len.to_be_bytes().to_vec();
    out.extend(body);
    Ok(out)
}

/// A container id and its log files' names and bytes.
pub type ContainerLogs = (String, Vec<(String, Vec<u8>)>);

/// The log files of each container in an aggregated log file, as Hadoop's
/// `LogReader` sees them: (container id, [(file name, bytes)]), reserved keys skipped.
/// `tusk job logs` reads a finished application's logs with it.
pub fn read_aggregated(file: &[u8]) -> Result<Vec<ContainerLogs>, String> {
    fn utf(b: &[u8], at: &mut usize) -> Result<String, String> {
        let len = u16::from_be_bytes(
            b.get(*at..*at + 2)
                .ok_or("truncated")?
                .try_into()
                .map_err(|_| "truncated")?,
        ) as usize;
        let s = b.get(*at + 2..*at + 2 + len).ok_or("truncated")?;
        *at += 2 + len;
        String::from_utf8(s.to_vec()).map_err(|e| e.to_string())
    }
    let mut out = Vec::new();
    for (key, value) in tfile::read_records(file).map_err(|e| e.to_string())? {
        let id = utf(&key, &mut 0)?;
        if [VERSION_KEY, APPLICATION_ACL_KEY, APPLICATION_OWNER_KEY].contains(&id.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        let mut at = 0;
        while at < value.len() {
            let name = utf(&value, &mut at)?;
            let len: usize = utf(&value, &mut at)?.parse().map_err(|_| "bad length")?;
            files.push((name, value.get(at..at + len).ok_or("truncated")?.to_vec()));
            at += len;
        }
        out.push((id, files));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_path_is_hadoops() {
        assert_eq!(
            remote_app_dir(
                "/tmp/logs/",
                "alice",
                "logs-tfile",
                "application_1700000000000_0001"
            ),
            "/tmp/logs/alice/bucket-logs-tfile/0001/application_1700000000000_0001"
        );
        assert_eq!(
            remote_app_dir("/r", "bob", "s", "application_1_12345"),
            "/r/bob/bucket-s/2345/application_1_12345"
        );
        assert_eq!(node_file_name("127.0.0.1:40123"), "127.0.0.1_40123");
    }

    #[test]
    fn java_utf_is_modified_utf8() {
        assert_eq!(java_utf("ab").unwrap(), [0, 2, b'a', b'b']);
        assert_eq!(java_utf("\0").unwrap(), [0, 2, 0xc0, 0x80]);
        assert_eq!(java_utf("é").unwrap(), [0, 2, 0xc3, 0xa9]);
        // U+1F600 as two surrogates, 3 bytes each.
        assert_eq!(java_utf("😀").unwrap().len(), 2 + 6);
        assert!(java_utf(&"x".repeat(70_000)).is_err());
    }

    #[tokio::test]
    async fn containers_logs_make_one_file_in_hadoops_format() {
        let logs = tempfile::tempdir().unwrap();
        let app = "application_1_0001";
        let c1 = logs.path().join(app).join("container_1_0001_01_000001");
        let c2 = logs.path().join(app).join("container_1_0001_01_000002");
        std::fs::create_dir_all(&c1).unwrap();
        std::fs::create_dir_all(&c2).unwrap();
        std::fs::write(c1.join("stdout"), "out\n").unwrap();
        // Longer than two value chunks: streamed through the writer.
        let syslog: Vec<u8> = (0..tfile::VALUE_CHUNK * 2 + 100)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        std::fs::write(c1.join("syslog"), &syslog).unwrap();
        std::fs::write(c2.join("stderr"), "").unwrap();
        let dirs = container_log_dirs(&[logs.path().to_path_buf()], app);
        assert_eq!(dirs.len(), 2);
        let mut file = Vec::new();
        write_log_file(&mut file, "alice", &dirs).await.unwrap();
        let read = read_aggregated(&file).unwrap();
        assert_eq!(
            read,
            vec![
                (
                    "container_1_0001_01_000001".to_string(),
                    vec![
                        ("stdout".to_string(), b"out\n".to_vec()),
                        ("syslog".to_string(), syslog)
                    ]
                ),
                (
                    "container_1_0001_01_000002".to_string(),
                    vec![("stderr".to_string(), Vec::new())]
                ),
            ]
        );
        // The reserved records first, as Hadoop's writer orders them.
        let records = tfile::read_records(&file).unwrap();
        let keys: Vec<&[u8]> = records.iter().map(|(k, _)| &k[2..]).collect();
        assert_eq!(
            &keys[..3],
            [&b"VERSION"[..], b"APPLICATION_ACL", b"APPLICATION_OWNER"]
        );
        assert_eq!(records[0].1, [0, 0, 0, 1]);
        assert_eq!(records[2].1, java_utf("alice").unwrap());
    }
}
