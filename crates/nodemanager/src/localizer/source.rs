//! Where a LocalResource comes from: `file:` URLs on this host and `hdfs://` URLs (or
//! bare paths, on `fs.defaultFS`) read through Tusk's DFS client, one client per
//! NameNode and user. What the localizer needs of them: a status (length, modification
//! time) and the bytes, copied into a local file.
//!
//! Under Kerberos the NodeManager reads (and writes logs) for an application with the
//! HDFS delegation tokens the application shipped in its containers' credentials, as
//! Hadoop's localizer and log aggregation do: never with its own identity.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tusk_client::{ClientOptions, DfsClient};
use tusk_proto::common::TokenProto;
use tusk_security::delegation_token::HDFS_DELEGATION_KIND;
use tusk_security::Credentials;

use crate::error::NodeManagerError;

/// A resource's file as its file system describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RemoteStatus {
    pub length: u64,
    /// Milliseconds since the epoch, what the resource's `timestamp` must equal.
    pub modification_time: i64,
    pub is_dir: bool,
}

/// A resource URL resolved to a file system and a path on it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Location {
    Local(PathBuf),
    Dfs { namenode: String, path: String },
}

/// The file systems resources are read from; DFS clients are made on first use and
/// kept for the NodeManager's life.
pub(crate) struct Sources {
    /// `fs.defaultFS`, for `hdfs:///path` and bare paths; `None` = the local file system.
    default_fs: Option<String>,
    /// The DFS clients' settings (protection levels, ...), from the NodeManager's
    /// configuration; `kerberos` set means applications' DFS access takes their tokens.
    base: ClientOptions,
    /// Under Kerberos: each application's HDFS delegation tokens, by application id.
    tokens: Mutex<HashMap<String, Vec<TokenProto>>>,
    /// One client per (NameNode address, user, token identifier).
    clients: Mutex<HashMap<(String, String, Bytes), DfsClient>>,
}

impl Sources {
    pub fn new(default_fs: Option<String>, base: ClientOptions) -> Self {
        Sources {
            default_fs,
            base,
            tokens: Mutex::default(),
            clients: Mutex::default(),
        }
    }

    /// Keeps the HDFS delegation tokens of `application`'s credentials (a container's
    /// `tokens`), for its DFS access under Kerberos.
    pub fn add_credentials(&self, application: &str, credentials: &[u8]) {
        if !self.base.kerberos || credentials.is_empty() {
            return;
        }
        let Ok(credentials) = Credentials::decode(credentials) else {
            return;
        };
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        let held = tokens.entry(application.to_string()).or_default();
        for token in credentials.tokens_of_kind(HDFS_DELEGATION_KIND) {
            if !held.iter().any(|t| t.identifier == token.identifier) {
                held.push(token.clone());
            }
        }
    }

    /// Forgets `application`'s tokens and the clients made with them.
    pub fn release_credentials(&self, application: &str) {
        let gone = self
            .tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(application)
            .unwrap_or_default();
        self.clients
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(_, _, id), _| !gone.iter().any(|t| t.identifier == *id));
    }

    /// The status of `url`'s file, read as `user` for `application`.
    pub async fn status(
        &self,
        url: &str,
        user: &str,
        application: &str,
    ) -> Result<RemoteStatus, NodeManagerError> {
        match self.locate(url)? {
            Location::Local(path) => {
                let meta = tokio::fs::metadata(&path)
                    .await
                    .map_err(|e| local_error(url, e))?;
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_millis() as i64);
                Ok(RemoteStatus {
                    length: meta.len(),
                    modification_time: modified,
                    is_dir: meta.is_dir(),
                })
            }
            Location::Dfs { namenode, path } => {
                let status = self
                    .client(&namenode, user, Some(application))
                    .map_err(|message| NodeManagerError::Localize {
                        url: url.to_string(),
                        message,
                    })?
                    .get_file_info(&path)
                    .await
                    .map_err(|e| localize_error(url, e))?
                    .ok_or_else(|| NodeManagerError::ResourceNotFound {
                        url: url.to_string(),
                        dfs: true,
                    })?;
                Ok(RemoteStatus {
                    length: status.length,
                    modification_time: status.modification_time as i64,
                    is_dir: status.is_dir,
                })
            }
        }
    }

    /// Copies `url`'s file into `dest` (created), read as `user` for `application`.
    pub async fn copy_to(
        &self,
        url: &str,
        user: &str,
        application: &str,
        dest: &Path,
    ) -> Result<(), NodeManagerError> {
        let write_error = |e: std::io::Error| NodeManagerError::io(dest.display().to_string(), e);
        match self.locate(url)? {
            Location::Local(path) => {
                tokio::fs::copy(&path, dest)
                    .await
                    .map_err(|e| local_error(url, e))?;
            }
            Location::Dfs { namenode, path } => {
                let mut reader = self
                    .client(&namenode, user, Some(application))
                    .map_err(|message| NodeManagerError::Localize {
                        url: url.to_string(),
                        message,
                    })?
                    .open(&path)
                    .await
                    .map_err(|e| localize_error(url, e))?;
                let mut out = tokio::fs::File::create(dest).await.map_err(write_error)?;
                let mut buf = vec![0u8; 64 << 10];
                loop {
                    let n = reader
                        .read(&mut buf)
                        .await
                        .map_err(|e| localize_error(url, e))?;
                    if n == 0 {
                        break;
                    }
                    out.write_all(&buf[..n]).await.map_err(write_error)?;
                }
                out.flush().await.map_err(write_error)?;
            }
        }
        Ok(())
    }

    /// `fs.defaultFS`'s client, when the default file system is a DFS: for `user`'s
    /// `application` (under Kerberos with its tokens), or with `None` the NodeManager
    /// itself (under Kerberos its principal, from `keytab`).
    pub fn default_dfs(
        &self,
        user: &str,
        application: Option<&str>,
    ) -> Option<Result<DfsClient, String>> {
        let fs = self
            .default_fs
            .as_deref()
            .filter(|fs| fs.starts_with("hdfs://"))?;
        let namenode = tusk_client::options::namenode_addr(fs)?;
        Some(self.client(&namenode, user, application))
    }

    /// A client of `namenode` for `user`'s `application` (`None`: the NodeManager's
    /// own); under Kerberos one that authenticates with the application's delegation
    /// token for that NameNode, an error when it shipped none.
    fn client(
        &self,
        namenode: &str,
        user: &str,
        application: Option<&str>,
    ) -> Result<DfsClient, String> {
        let token = match (self.base.kerberos, application) {
            (true, Some(application)) => Some(self.token(namenode, application)?),
            _ => None,
        };
        let id = token
            .as_ref()
            .map(|t| t.identifier.clone())
            .unwrap_or_default();
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        Ok(clients
            .entry((namenode.to_string(), user.to_string(), id))
            .or_insert_with(|| {
                DfsClient::new(ClientOptions {
                    namenode: namenode.to_string(),
                    user: user.to_string(),
                    // With a token the client authenticates with it, not a ticket.
                    kerberos: self.base.kerberos && token.is_none(),
                    delegation_token: token,
                    ..self.base.clone()
                })
            })
            .clone())
    }

    /// `application`'s HDFS delegation token for `namenode` (its service the address,
    /// as Hadoop's client writes it; the only one when it shipped one).
    fn token(&self, namenode: &str, application: &str) -> Result<TokenProto, String> {
        let tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        let held = tokens
            .get(application)
            .map(Vec::as_slice)
            .unwrap_or_default();
        held.iter()
            .find(|t| tusk_client::options::same_service(&t.service, namenode))
            .or_else(|| held.first().filter(|_| held.len() == 1))
            .cloned()
            .ok_or_else(|| {
                format!("{application} shipped no HDFS delegation token for {namenode} (under Kerberos the NodeManager reads and writes for an application only with its tokens)")
            })
    }

    fn locate(&self, url: &str) -> Result<Location, NodeManagerError> {
        locate(url, self.default_fs.as_deref())
    }
}

/// `file:/p`, `file:///p` → the local `/p`; `hdfs://nn:port/p` → `/p` on that NameNode;
/// `hdfs:///p` and `/p` → on `default_fs` (the local file system when it is not HDFS).
fn locate(url: &str, default_fs: Option<&str>) -> Result<Location, NodeManagerError> {
    let unsupported = || NodeManagerError::Localize {
        url: url.to_string(),
        message: "only file: and hdfs: resources can be localized".into(),
    };
    if let Some(rest) = url.strip_prefix("file:") {
        let path = rest.strip_prefix("//").unwrap_or(rest);
        return match path.starts_with('/') {
            true => Ok(Location::Local(PathBuf::from(path))),
            false => Err(unsupported()),
        };
    }
    let on_default = |path: &str| match default_fs.and_then(tusk_client::options::namenode_addr) {
        Some(namenode) if default_fs.is_some_and(|fs| fs.starts_with("hdfs://")) => {
            Ok(Location::Dfs {
                namenode,
                path: path.to_string(),
            })
        }
        _ => Ok(Location::Local(PathBuf::from(path))),
    };
    if let Some(rest) = url.strip_prefix("hdfs://") {
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        if authority.is_empty() {
            return on_default(path);
        }
        let namenode = tusk_client::options::namenode_addr(url).ok_or_else(unsupported)?;
        return Ok(Location::Dfs {
            namenode,
            path: path.to_string(),
        });
    }
    if url.starts_with('/') {
        return on_default(url);
    }
    Err(unsupported())
}

fn local_error(url: &str, e: std::io::Error) -> NodeManagerError {
    match e.kind() {
        std::io::ErrorKind::NotFound => NodeManagerError::ResourceNotFound {
            url: url.to_string(),
            dfs: false,
        },
        _ => NodeManagerError::Localize {
            url: url.to_string(),
            message: e.to_string(),
        },
    }
}

fn localize_error(url: &str, e: tusk_client::ClientError) -> NodeManagerError {
    if e.is_not_found() {
        return NodeManagerError::ResourceNotFound {
            url: url.to_string(),
            dfs: true,
        };
    }
    NodeManagerError::Localize {
        url: url.to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_resolve_to_their_file_system() {
        let local = |p: &str| Ok::<_, ()>(Location::Local(PathBuf::from(p)));
        let dfs = |nn: &str, p: &str| {
            Ok::<_, ()>(Location::Dfs {
                namenode: nn.into(),
                path: p.into(),
            })
        };
        let fs = Some("hdfs://nn:9000");
        let at = |url: &str, fs: Option<&str>| locate(url, fs).map_err(|_| ());
        assert_eq!(at("file:/tmp/a.jar", fs), local("/tmp/a.jar"));
        assert_eq!(at("file:///tmp/a.jar", fs), local("/tmp/a.jar"));
        assert_eq!(at("hdfs://other:8020/x/y", fs), dfs("other:8020", "/x/y"));
        assert_eq!(at("hdfs://other/x", fs), dfs("other:8020", "/x"));
        assert_eq!(at("hdfs:///x", fs), dfs("nn:9000", "/x"));
        assert_eq!(at("/x", fs), dfs("nn:9000", "/x"));
        assert_eq!(at("/x", Some("file:///")), local("/x"));
        assert_eq!(at("/x", None), local("/x"));
        assert!(at("s3a://bucket/x", fs).is_err());
        assert!(at("file:relative", fs).is_err());
    }
}
