//! Localization: the LocalResources of a Hadoop-style container (jars, archives, files
//! on the DFS or on `file:` URLs) copied to this node before it starts, in Hadoop's
//! cache layout under each local dir:
//!
//! - PUBLIC: `<local-dir>/filecache/<n>/<file name>`, shared by every application;
//! - PRIVATE: `<local-dir>/usercache/<user>/filecache/<n>/<file name>`, shared by the
//!   user's applications;
//! - APPLICATION: `<local-dir>/usercache/<user>/appcache/<appId>/filecache/<n>/<file
//!   name>`, deleted with the application.
//!
//! A resource is fetched once per (URL, timestamp, type, pattern, cache): later and
//! concurrent requests wait for that download and share it. As Hadoop's `FSDownload`
//! does, the file's modification time must equal the resource's timestamp (its length
//! is not checked), the copy is made in `<n>_tmp` and renamed to `<n>` when complete,
//! and the result is made read-only (`555`/`755` public, `500`/`700` otherwise).
//! Files are read as the application's user; PUBLIC resources are not checked for
//! world-readability on the DFS, and directories are not localized.
//!
//! - `localizer/source.rs`: `file:` and `hdfs:` sources (status, copy).
//! - `localizer/unpack.rs`: ARCHIVE and PATTERN unpacking.

pub(crate) mod source;
pub(crate) mod unpack;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;
use tusk_common::calendar::iso8601;

use crate::error::NodeManagerError;
use source::Sources;

/// How a resource is placed in the container: YARN's `LocalResourceType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceType {
    File,
    Archive,
    Pattern,
}

/// Who shares a localized resource: YARN's `LocalResourceVisibility`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Visibility {
    Public,
    Private,
    Application,
}

/// One resource a container asks for, as YARN's `LocalResource` names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LocalResource {
    /// `hdfs://nn:8020/user/a/job.jar`, `file:/tmp/a.zip`, or a path on `fs.defaultFS`.
    pub url: String,
    pub size: i64,
    /// The file's modification time (ms) when the application named it.
    pub timestamp: i64,
    pub kind: ResourceType,
    pub visibility: Visibility,
    /// PATTERN: the regular expression jar entries must match whole.
    pub pattern: Option<String>,
}

/// The cache a resource is localized in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Cache {
    Public,
    User(String),
    Application { user: String, application: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct CacheKey {
    url: String,
    timestamp: i64,
    kind: ResourceType,
    pattern: Option<String>,
    cache: Cache,
}

/// The node's localized resources; owned by the NodeManager for its life.
pub(crate) struct Localizer {
    /// The NodeManager's local dirs; a resource's cache is on the one its URL hashes to.
    local_dirs: Vec<PathBuf>,
    sources: Sources,
    /// Each resource's local path once fetched; the cell is held while it downloads,
    /// so concurrent requests wait for the one download. A failed download leaves the
    /// cell empty and the next request tries again.
    entries: Mutex<HashMap<CacheKey, Arc<OnceCell<PathBuf>>>>,
    /// Names the next `<n>` cache directory (Hadoop's numbering starts at 10).
    next_dir: AtomicU64,
}

impl Localizer {
    pub fn new(
        local_dirs: Vec<PathBuf>,
        default_fs: Option<String>,
        client: tusk_client::ClientOptions,
    ) -> Self {
        Localizer {
            local_dirs,
            sources: Sources::new(default_fs, client),
            entries: Mutex::default(),
            next_dir: AtomicU64::new(10),
        }
    }

    /// A client of the default file system (`fs.defaultFS`) acting as `user` for
    /// `application` (`None`: the NodeManager itself), when it is a DFS; shared with
    /// the resources' downloads. Under Kerberos an application's client authenticates
    /// with its tokens ([`Localizer::add_credentials`]).
    pub fn default_dfs(
        &self,
        user: &str,
        application: Option<&str>,
    ) -> Option<Result<tusk_client::DfsClient, String>> {
        self.sources.default_dfs(user, application)
    }

    /// Keeps the HDFS delegation tokens in a container's credentials for its
    /// application's DFS access (under Kerberos).
    pub fn add_credentials(&self, application: &str, credentials: &[u8]) {
        self.sources.add_credentials(application, credentials);
    }

    /// Forgets `application`'s tokens (once its logs are aggregated).
    pub fn release_credentials(&self, application: &str) {
        self.sources.release_credentials(application);
    }

    /// The local path of `resource` for `user`'s `application`, fetching it first if
    /// this node has no copy yet.
    pub async fn localize(
        &self,
        user: &str,
        application: &str,
        resource: &LocalResource,
    ) -> Result<PathBuf, NodeManagerError> {
        let cache = match resource.visibility {
            Visibility::Public => Cache::Public,
            Visibility::Private => Cache::User(user.to_string()),
            Visibility::Application => Cache::Application {
                user: user.to_string(),
                application: application.to_string(),
            },
        };
        let key = CacheKey {
            url: resource.url.clone(),
            timestamp: resource.timestamp,
            kind: resource.kind,
            pattern: resource.pattern.clone(),
            cache,
        };
        let cell = self
            .lock()
            .entry(key.clone())
            .or_insert_with(|| Arc::new(OnceCell::new()))
            .clone();
        let path = cell
            .get_or_try_init(|| self.download(&key, user, application, resource))
            .await?;
        Ok(path.clone())
    }

    /// Forgets `application`'s APPLICATION resources; the caller deletes their files
    /// with the application's directories.
    pub fn release_application(&self, application: &str) {
        self.lock().retain(|k, _| {
            !matches!(&k.cache, Cache::Application { application: a, .. } if a == application)
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Arc<OnceCell<PathBuf>>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `filecache` of `cache` on the local dir `url` hashes to.
    fn cache_dir(&self, cache: &Cache, url: &str) -> PathBuf {
        let h = url
            .bytes()
            .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
        let local = self
            .local_dirs
            .get(h % self.local_dirs.len().max(1))
            .cloned()
            .unwrap_or_else(std::env::temp_dir);
        match cache {
            Cache::Public => local.join("filecache"),
            Cache::User(user) => local.join("usercache").join(user).join("filecache"),
            Cache::Application { user, application } => local
                .join("usercache")
                .join(user)
                .join("appcache")
                .join(application)
                .join("filecache"),
        }
    }

    /// A `<n>` not used yet under `base` (nor as `<n>_tmp`): numbers survive a
    /// restart of the NodeManager in the directories, not in memory.
    fn new_dir(&self, base: &Path) -> u64 {
        loop {
            let n = self.next_dir.fetch_add(1, Ordering::Relaxed);
            if !base.join(n.to_string()).exists() && !base.join(format!("{n}_tmp")).exists() {
                return n;
            }
        }
    }

    /// Fetches `resource` into a new `<n>` directory of its cache: the path of the
    /// file (or unpacked directory) in it.
    async fn download(
        &self,
        key: &CacheKey,
        user: &str,
        application: &str,
        resource: &LocalResource,
    ) -> Result<PathBuf, NodeManagerError> {
        let base = self.cache_dir(&key.cache, &resource.url);
        let n = self.new_dir(&base);
        let tmp = base.join(format!("{n}_tmp"));
        let dest = base.join(n.to_string());
        let name = file_name(&resource.url);
        let result = self.fetch(resource, user, application, &tmp, &name).await;
        let result = match result {
            Ok(()) => tokio::fs::rename(&tmp, &dest)
                .await
                .map_err(|e| NodeManagerError::io(dest.display().to_string(), e)),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            let _ = tokio::fs::remove_dir_all(&tmp).await;
            tracing::warn!(url = %resource.url, error = %e, "localization failed");
            return Err(e);
        }
        tracing::info!(url = %resource.url, path = %dest.display(), "resource localized");
        Ok(dest.join(name))
    }

    /// Checks the resource's timestamp, then copies (and unpacks) it to `tmp/name`.
    async fn fetch(
        &self,
        resource: &LocalResource,
        user: &str,
        application: &str,
        tmp: &Path,
        name: &str,
    ) -> Result<(), NodeManagerError> {
        let io = |what: &Path, e| NodeManagerError::io(what.display().to_string(), e);
        let status = self
            .sources
            .status(&resource.url, user, application)
            .await?;
        if status.modification_time != resource.timestamp {
            return Err(NodeManagerError::ResourceChanged {
                url: resource.url.clone(),
                expected: iso8601(resource.timestamp.max(0) as u64),
                was: iso8601(status.modification_time.max(0) as u64),
                now: iso8601(tusk_common::now_millis()),
            });
        }
        if status.is_dir {
            return Err(NodeManagerError::Localize {
                url: resource.url.clone(),
                message: "directories cannot be localized".into(),
            });
        }
        tokio::fs::create_dir_all(tmp)
            .await
            .map_err(|e| io(tmp, e))?;
        let target = tmp.join(name);
        let public = resource.visibility == Visibility::Public;
        if resource.kind == ResourceType::File {
            self.sources
                .copy_to(&resource.url, user, application, &target)
                .await?;
        } else {
            let download = tmp.join(format!(".{name}.download"));
            self.sources
                .copy_to(&resource.url, user, application, &download)
                .await?;
            let (kind, pattern) = (resource.kind, resource.pattern.clone());
            let (from, to, name) = (download.clone(), target.clone(), name.to_string());
            tokio::task::spawn_blocking(move || {
                unpack::unpack(&from, &name, kind, pattern.as_deref(), &to)
            })
            .await
            .map_err(|e| io(&target, std::io::Error::other(e)))?
            .map_err(|e| NodeManagerError::Localize {
                url: resource.url.clone(),
                message: format!("cannot unpack: {e}"),
            })?;
            tokio::fs::remove_file(&download)
                .await
                .map_err(|e| io(&download, e))?;
        }
        let path = target.clone();
        tokio::task::spawn_blocking(move || make_read_only(&path, public))
            .await
            .map_err(|e| io(&target, std::io::Error::other(e)))?
            .map_err(|e| io(&target, e))
    }
}

/// The last segment of a URL's path: the name the resource's file keeps in the cache.
fn file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("resource")
        .to_string()
}

/// Hadoop's permissions for localized files: public `555` files and `755`
/// directories, otherwise `500` and `700`.
fn make_read_only(path: &Path, public: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let mode = match (meta.is_dir(), public) {
        (true, true) => 0o755,
        (true, false) => 0o700,
        (false, true) => 0o555,
        (false, false) => 0o500,
    };
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            make_read_only(&entry?.path(), public)?;
        }
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// What a container reports when one of its resources could not be localized, in
/// the shape of Hadoop's `Failed to download resource { { url, timestamp, TYPE,
/// pattern },pending,[(container)],…,DOWNLOADING} java.io.IOException: …`.
pub(crate) fn failure_diagnostics(
    container: &str,
    resource: &LocalResource,
    error: &NodeManagerError,
) -> String {
    let kind = match resource.kind {
        ResourceType::File => "FILE",
        ResourceType::Archive => "ARCHIVE",
        ResourceType::Pattern => "PATTERN",
    };
    format!(
        "Failed to download resource {{ {{ {}, {}, {kind}, {} }},pending,[({container})],{},DOWNLOADING}} {}: {error}",
        resource.url,
        resource.timestamp,
        resource.pattern.as_deref().unwrap_or("null"),
        tusk_common::now_millis(),
        error.java_class(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_files_keep_the_url_s_last_name() {
        assert_eq!(file_name("hdfs://nn:8020/user/a/job.jar"), "job.jar");
        assert_eq!(file_name("file:/tmp/libs.tar.gz"), "libs.tar.gz");
        assert_eq!(file_name("hdfs://nn/a/dir/"), "dir");
    }

    #[tokio::test]
    async fn one_download_serves_every_request_for_the_same_resource() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("a.txt");
        std::fs::write(&src, "payload").unwrap();
        let timestamp = std::fs::metadata(&src)
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let localizer = Localizer::new(
            vec![dir.path().join("local")],
            None,
            tusk_client::ClientOptions::default(),
        );
        let resource = LocalResource {
            url: format!("file:{}", src.display()),
            size: 7,
            timestamp,
            kind: ResourceType::File,
            visibility: Visibility::Public,
            pattern: None,
        };
        let (a, b) = tokio::join!(
            localizer.localize("alice", "application_1_0001", &resource),
            localizer.localize("bob", "application_1_0002", &resource)
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a, b);
        assert_eq!(a, dir.path().join("local/filecache/10/a.txt"));
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "payload");
        let private = LocalResource {
            visibility: Visibility::Application,
            ..resource
        };
        let c = localizer
            .localize("alice", "application_1_0001", &private)
            .await
            .unwrap();
        assert_eq!(
            c,
            dir.path()
                .join("local/usercache/alice/appcache/application_1_0001/filecache/11/a.txt")
        );
    }
}
