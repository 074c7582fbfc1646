//! What a restarted ResourceManager recovers (`yarn.resourcemanager.recovery.enabled`):
//! every application as submitted, how many attempts it has had, its current AM
//! container and, once it ended, its final state; and the ResourceManager's own keys
//! and epoch ([`StoredKeys`], Hadoop's `AMRMTokenSecretManagerState` and epoch node),
//! so the tokens AMs and NodeManagers hold stay valid across the restart. Running
//! containers themselves are not stored: NodeManagers report them when they register
//! again (work-preserving recovery, see `cluster/recovery.rs`).
//!
//! - [`StateStore`]: the trait; [`MemoryStateStore`] for tests, [`FileStateStore`]
//!   (Hadoop's `FileSystemRMStateStore` on a local directory,
//!   `yarn.resourcemanager.fs.state-store.uri`): one JSON file per application and
//!   `resourcemanager.keys` for the keys, each replaced atomically.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tusk_proto::tusk::yarn as y;

/// How many finished applications the store keeps (Hadoop's
/// `yarn.resourcemanager.state-store.max-completed-applications`); the oldest go first.
pub const MAX_COMPLETED_APPLICATIONS: usize = 1000;

/// One application as the store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredApplication {
    pub id: String,
    pub name: String,
    pub queue: String,
    pub user: String,
    pub app_type: String,
    pub am_memory_mb: u64,
    pub am_vcores: u32,
    pub am_launch: StoredLaunch,
    /// A Hadoop-submitted application's AM launch context (an encoded
    /// ContainerLaunchContextProto, in base64); empty for Tusk's own applications.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hadoop_am_launch: String,
    pub max_attempts: u32,
    /// Attempts started so far.
    pub attempts: u32,
    /// Attempts that ended by a ResourceManager restart, not by a failure of their own:
    /// they do not count against `max_attempts`.
    pub uncounted_attempts: u32,
    pub submit_ms: u64,
    /// The current attempt's AM container and its node, once allocated: a restarted
    /// ResourceManager keeps the attempt while a NodeManager reports that container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub am_container: Option<String>,
    /// Set once the application has ended.
    pub finished: Option<StoredFinish>,
    /// The nodes that ran its containers, and those that have reported aggregating
    /// its logs (whether they succeeded): its log aggregation status after a restart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes_used: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub logs_aggregated: BTreeMap<String, bool>,
}

/// The ResourceManager's secrets and epoch as the store keeps them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredKeys {
    /// How many times a ResourceManager started on this store; numbers the containers
    /// of attempts kept across a restart apart from those before it.
    pub epoch: u32,
    pub amrm_current: StoredKey,
    /// The AMRMToken key made by a roll and not yet activated.
    pub amrm_next: Option<StoredKey>,
    pub nm_token: StoredKey,
    pub container_token: StoredKey,
    /// The client-to-AM token master key, in base64.
    pub client_to_am: String,
}

/// A master key: its id and its bytes in base64.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredKey {
    pub key_id: i32,
    pub bytes: String,
}

/// The AM's launch context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredLaunch {
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub working_dir: String,
}

impl From<&y::ContainerLaunchContext> for StoredLaunch {
    fn from(c: &y::ContainerLaunchContext) -> Self {
        StoredLaunch {
            command: c.command.clone(),
            args: c.args.clone(),
            env: c.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            working_dir: c.working_dir.clone(),
        }
    }
}

impl From<&StoredLaunch> for y::ContainerLaunchContext {
    fn from(s: &StoredLaunch) -> Self {
        y::ContainerLaunchContext {
            command: s.command.clone(),
            args: s.args.clone(),
            env: s.env.clone().into_iter().collect(),
            working_dir: s.working_dir.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredFinish {
    /// `y::ApplicationState` as its number.
    pub state: i32,
    /// `y::FinalApplicationStatus` as its number.
    pub final_status: i32,
    pub diagnostics: String,
    pub finish_ms: u64,
}

/// Where the ResourceManager keeps its applications across restarts. A write is
/// durable when it returns.
pub trait StateStore: Send + Sync {
    /// Records an application (new, with a new attempt, or ended), replacing the
    /// record before.
    fn store(&self, app: &StoredApplication) -> io::Result<()>;
    /// Every application recorded, oldest first.
    fn load(&self) -> io::Result<Vec<StoredApplication>>;
    /// Forgets an application.
    fn remove(&self, id: &str) -> io::Result<()>;
    /// Records the ResourceManager's keys and epoch, replacing the record before.
    fn store_keys(&self, keys: &StoredKeys) -> io::Result<()>;
    /// The keys recorded, if any.
    fn load_keys(&self) -> io::Result<Option<StoredKeys>>;
}

/// Keeps the records in memory (tests; survives a ResourceManager started again in the
/// same process).
#[derive(Default)]
pub struct MemoryStateStore {
    apps: Mutex<BTreeMap<String, StoredApplication>>,
    keys: Mutex<Option<StoredKeys>>,
}

impl StateStore for MemoryStateStore {
    fn store(&self, app: &StoredApplication) -> io::Result<()> {
        self.apps
            .lock()
            .expect("state store lock")
            .insert(app.id.clone(), app.clone());
        Ok(())
    }

    fn load(&self) -> io::Result<Vec<StoredApplication>> {
        let mut apps: Vec<_> = self
            .apps
            .lock()
            .expect("state store lock")
            .values()
            .cloned()
            .collect();
        apps.sort_by_key(|a| a.submit_ms);
        Ok(apps)
    }

    fn remove(&self, id: &str) -> io::Result<()> {
        self.apps.lock().expect("state store lock").remove(id);
        Ok(())
    }

    fn store_keys(&self, keys: &StoredKeys) -> io::Result<()> {
        *self.keys.lock().expect("state store lock") = Some(keys.clone());
        Ok(())
    }

    fn load_keys(&self) -> io::Result<Option<StoredKeys>> {
        Ok(self.keys.lock().expect("state store lock").clone())
    }
}

/// One `<application id>.json` per application in a local directory.
pub struct FileStateStore {
    dir: PathBuf,
}

impl FileStateStore {
    /// Opens (creating) the store in `dir`.
    pub fn open(dir: &Path) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        Ok(FileStateStore {
            dir: dir.to_path_buf(),
        })
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn keys_path(&self) -> PathBuf {
        self.dir.join("resourcemanager.keys")
    }

    /// Writes `data` to `path` through a temporary file and a rename, durably.
    fn replace(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut f = File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(&self.dir)?.sync_all()
    }
}

impl StateStore for FileStateStore {
    fn store(&self, app: &StoredApplication) -> io::Result<()> {
        let data = serde_json::to_vec_pretty(app).map_err(io::Error::other)?;
        self.replace(&self.path(&app.id), &data)
    }

    fn load(&self) -> io::Result<Vec<StoredApplication>> {
        let mut apps = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let data = fs::read(&path)?;
            match serde_json::from_slice::<StoredApplication>(&data) {
                Ok(app) => apps.push(app),
                // A record that does not parse is reported and left for an operator;
                // the other applications are still recovered.
                Err(e) => {
                    tracing::error!(path = %path.display(), error = %e, "unreadable application record in the state store; skipped")
                }
            }
        }
        apps.sort_by_key(|a| a.submit_ms);
        Ok(apps)
    }

    fn remove(&self, id: &str) -> io::Result<()> {
        match fs::remove_file(self.path(id)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn store_keys(&self, keys: &StoredKeys) -> io::Result<()> {
        let data = serde_json::to_vec_pretty(keys).map_err(io::Error::other)?;
        self.replace(&self.keys_path(), &data)
    }

    fn load_keys(&self) -> io::Result<Option<StoredKeys>> {
        match fs::read(self.keys_path()) {
            Ok(data) => serde_json::from_slice(&data)
                .map(Some)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(id: &str, submit_ms: u64) -> StoredApplication {
        StoredApplication {
            id: id.into(),
            name: "sleep".into(),
            queue: "default".into(),
            user: "u".into(),
            app_type: "MAPREDUCE".into(),
            am_memory_mb: 1024,
            am_vcores: 1,
            am_launch: StoredLaunch {
                command: "tusk".into(),
                args: vec!["mr-am".into()],
                env: [("K".to_string(), "V".to_string())].into(),
                working_dir: String::new(),
            },
            hadoop_am_launch: String::new(),
            max_attempts: 2,
            attempts: 1,
            uncounted_attempts: 0,
            submit_ms,
            am_container: Some(format!("container_{id}_01_000001")),
            finished: None,
            nodes_used: Vec::new(),
            logs_aggregated: BTreeMap::new(),
        }
    }

    #[test]
    fn a_file_store_gives_back_what_it_was_given_across_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStateStore::open(dir.path()).unwrap();
        store.store(&app("application_1_0002", 20)).unwrap();
        store.store(&app("application_1_0001", 10)).unwrap();
        let mut later = app("application_1_0001", 10);
        later.attempts = 2;
        later.finished = Some(StoredFinish {
            state: y::ApplicationState::AppFinished as i32,
            final_status: y::FinalApplicationStatus::FinalSucceeded as i32,
            diagnostics: String::new(),
            finish_ms: 30,
        });
        store.store(&later).unwrap();
        drop(store);
        let store = FileStateStore::open(dir.path()).unwrap();
        assert_eq!(
            store.load().unwrap(),
            vec![later, app("application_1_0002", 20)],
            "the newest record of each, oldest submission first"
        );
        store.remove("application_1_0002").unwrap();
        store.remove("application_1_0002").unwrap();
        assert_eq!(store.load().unwrap().len(), 1);
    }

    #[test]
    fn a_file_store_keeps_the_keys_apart_from_the_applications() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStateStore::open(dir.path()).unwrap();
        assert_eq!(store.load_keys().unwrap(), None);
        let key = |key_id| StoredKey {
            key_id,
            bytes: "a2V5".into(),
        };
        let keys = StoredKeys {
            epoch: 2,
            amrm_current: key(1),
            amrm_next: Some(key(2)),
            nm_token: key(3),
            container_token: key(4),
            client_to_am: "Y2xpZW50".into(),
        };
        store.store_keys(&keys).unwrap();
        store.store(&app("application_1_0001", 10)).unwrap();
        drop(store);
        let store = FileStateStore::open(dir.path()).unwrap();
        assert_eq!(store.load_keys().unwrap(), Some(keys));
        assert_eq!(store.load().unwrap(), vec![app("application_1_0001", 10)]);
    }

    #[test]
    fn an_unreadable_record_does_not_hide_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStateStore::open(dir.path()).unwrap();
        store.store(&app("application_1_0001", 10)).unwrap();
        fs::write(dir.path().join("application_1_0002.json"), b"{ torn").unwrap();
        assert_eq!(store.load().unwrap(), vec![app("application_1_0001", 10)]);
    }
}
