//! Configuration for every command: an optional TOML file, then `-D` overrides.

use std::path::{Path, PathBuf};

use anyhow::Context;
use tusk_common::Configuration;

pub fn load(file: Option<&Path>, defines: &[String]) -> anyhow::Result<Configuration> {
    let mut conf = match file {
        Some(path) => Configuration::from_file(path)?,
        None => Configuration::new(),
    };
    conf.apply_overrides(defines)?;
    Ok(conf)
}

/// Where `tusk local up` records the running cluster's addresses: `$TUSK_HOME`, else
/// `~/.tusk`.
fn tusk_home() -> PathBuf {
    std::env::var("TUSK_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".tusk")))
        .unwrap_or_else(|_| PathBuf::from("/tmp/.tusk"))
}

/// Where `tusk local up` records the running cluster's `fs.defaultFS`.
pub fn default_fs_file() -> PathBuf {
    tusk_home().join("defaultFS")
}

/// Where `tusk local up` records the running cluster's ResourceManager address.
pub fn default_rm_file() -> PathBuf {
    tusk_home().join("defaultRM")
}

/// `fs.defaultFS` from the configuration, else the last `tusk local up`, else the default.
pub fn default_fs(conf: &Configuration) -> String {
    if let Some(fs) = conf.get("fs.defaultFS") {
        return fs.to_string();
    }
    std::fs::read_to_string(default_fs_file())
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "hdfs://127.0.0.1:8020".to_string())
}

/// `yarn.resourcemanager.address` from the configuration, else the last `tusk local up`,
/// else the default.
pub fn default_rm(conf: &Configuration) -> String {
    if let Some(rm) = conf.get(RM_ADDRESS_KEY) {
        return rm.to_string();
    }
    std::fs::read_to_string(default_rm_file())
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "127.0.0.1:8032".to_string())
}

/// The ResourceManager's client RPC address.
pub const RM_ADDRESS_KEY: &str = "yarn.resourcemanager.address";

/// Where `tusk local up` records its state directory.
fn local_dir_file() -> PathBuf {
    tusk_home().join("localDir")
}

/// The state directory of `tusk local status|down` and `tusk job logs`: the one given,
/// else the last `tusk local up`'s (as `fs` and `job` follow its addresses), else the
/// default `/tmp/tusk-local`.
pub fn local_dir(given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(|| {
            std::fs::read_to_string(local_dir_file())
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from("/tmp/tusk-local"))
}

pub fn record_local_dir(dir: &Path) -> anyhow::Result<()> {
    let absolute =
        std::path::absolute(dir).with_context(|| format!("resolving {}", dir.display()))?;
    record(&local_dir_file(), &absolute.display().to_string())
}

pub fn record_default_fs(uri: &str) -> anyhow::Result<()> {
    record(&default_fs_file(), uri)
}

pub fn record_default_rm(addr: &str) -> anyhow::Result<()> {
    record(&default_rm_file(), addr)
}

fn record(path: &Path, value: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, format!("{value}\n"))
        .with_context(|| format!("writing {}", path.display()))
}
