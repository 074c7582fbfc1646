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

/// Takes Hadoop's generic options (`-fs URI`, `-D key=value`) from the front of an
/// admin tool's arguments into `conf`, and sets `fs.defaultFS` when none was given;
/// the error is the message to print.
pub fn take_generic_options(
    conf: &mut Configuration,
    args: &mut Vec<String>,
) -> Result<(), String> {
    while args.len() >= 2 && (args[0] == "-fs" || args[0] == "-D") {
        if args[0] == "-fs" {
            conf.set("fs.defaultFS", args[1].clone());
        } else {
            conf.apply_overrides(&[args[1].clone()])
                .map_err(|e| e.to_string())?;
        }
        args.drain(..2);
    }
    if conf.get("fs.defaultFS").is_none() {
        conf.set("fs.defaultFS", default_fs(conf));
    }
    Ok(())
}

/// A client and a single-threaded runtime for an admin tool; the error is the message
/// to print.
pub fn admin_client(
    conf: &Configuration,
) -> Result<(tusk_client::DfsClient, tokio::runtime::Runtime), String> {
    let options = tusk_client::ClientOptions::from_conf(conf).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    Ok((tusk_client::DfsClient::new(options), runtime))
}
