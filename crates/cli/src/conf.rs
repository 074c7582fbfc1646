//! Configuration for every command: `--conf` resources (TOML or Hadoop XML files, or
//! directories of them; else `$HADOOP_CONF_DIR`), then `-D` overrides; and
//! `tusk conf show`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Subcommand;
use tusk_common::Configuration;

/// Loads the configuration; `warn_unknown`: say once which keys no component reads.
pub fn load(
    resources: &[PathBuf],
    defines: &[String],
    warn_unknown: bool,
) -> anyhow::Result<Configuration> {
    let resources: Vec<PathBuf> = match (resources, std::env::var_os("HADOOP_CONF_DIR")) {
        ([], Some(dir)) if !dir.is_empty() => vec![PathBuf::from(dir)],
        (given, _) => given.to_vec(),
    };
    let mut conf = Configuration::from_resources(&resources)?;
    conf.apply_overrides(defines)?;
    let unknown = conf.unknown_keys();
    if warn_unknown && !unknown.is_empty() {
        let listed: Vec<String> = unknown
            .iter()
            .map(|(k, source)| match source {
                Some(s) => format!("{k} ({s})"),
                None => k.to_string(),
            })
            .collect();
        tracing::warn!(
            "{} configuration keys are read by no Tusk component and have no effect: {}",
            listed.len(),
            listed.join(", ")
        );
    }
    Ok(conf)
}

#[derive(Subcommand)]
pub enum ConfCommand {
    /// Every key set (with the file:line, -D or program that set it) and the defaults
    /// Tusk's components use for the rest; or one key with --key.
    Show {
        /// Only this key.
        #[arg(long)]
        key: Option<String>,
    },
}

pub fn run(conf: &Configuration, action: ConfCommand) -> anyhow::Result<()> {
    let ConfCommand::Show { key } = action;
    collect_defaults(conf);
    // What a daemon would refuse to start with; with --key, only that key's value.
    let bad = conf.bad_values().into_iter().find(|e| match (e, &key) {
        (tusk_common::ConfigError::BadValue { key: bad, .. }, Some(k)) => bad == k,
        _ => true,
    });
    if let Some(bad) = bad {
        return Err(bad.into());
    }
    let defaults = conf.defaults_used();
    let line = |k: &str| -> Option<String> {
        if let Some(v) = conf.get(k) {
            let mut notes = vec![conf
                .source(k)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "set".into())];
            if conf.is_final(k) {
                notes.push("final".into());
            }
            if let Some(raw) = conf.get_raw(k).filter(|raw| *raw != v) {
                notes.push(format!("from {raw}"));
            }
            if !tusk_common::config::is_known(k) {
                notes.push("read by no Tusk component".into());
            }
            return Some(format!("{k} = {v}  [{}]", notes.join("; ")));
        }
        defaults.get(k).map(|d| format!("{k} = {d}  [default]"))
    };
    match key {
        Some(k) => match line(&k) {
            Some(l) => println!("{l}"),
            None if tusk_common::config::is_known(&k) => {
                println!("{k} is not set  [the component that reads it uses its own default]")
            }
            None => anyhow::bail!("{k} is not set and no Tusk component reads it"),
        },
        None => {
            let mut keys: Vec<&str> = conf.iter().chain(conf.derived()).map(|(k, _)| k).collect();
            keys.extend(defaults.keys().map(String::as_str));
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                if let Some(l) = line(k) {
                    println!("{l}");
                }
            }
        }
    }
    Ok(())
}

/// Has every component read its options from `conf`, so that the getters record the
/// defaults they answer with (errors do not matter here: only the reading does).
fn collect_defaults(conf: &Configuration) {
    let _ = tusk_client::ClientOptions::from_conf(conf);
    let _ = tusk_namenode::NameNodeOptions::from_conf(conf);
    let _ = tusk_datanode::DataNodeOptions::from_conf(conf);
    let _ = tusk_resourcemanager::ResourceManagerOptions::from_conf(conf);
    let _ = tusk_nodemanager::NodeManagerOptions::from_conf(conf);
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

/// Sets `fs.defaultFS` to [`default_fs`] when the configuration names none.
/// With the last `tusk local up --ha`'s `hdfs://ns1`, its nameservice's keys come too
/// (from `DIR/nameservice.conf`), unless the configuration names nameservices itself.
pub fn ensure_default_fs(conf: &mut Configuration) {
    if conf.get("fs.defaultFS").is_none() {
        conf.set("fs.defaultFS", default_fs(conf));
        let logical = conf
            .get("fs.defaultFS")
            .and_then(|fs| fs.strip_prefix("hdfs://"))
            .is_some_and(|rest| !rest.split('/').next().unwrap_or_default().contains(':'));
        if logical && conf.get("dfs.nameservices").is_none() {
            let recorded = tusk_cluster::process::recorded_nameservice_keys(&local_dir(None));
            for (key, value) in recorded.unwrap_or_default() {
                conf.set(&key, value);
            }
        }
    }
}

/// `conf` with `fs.defaultFS` set (see [`ensure_default_fs`]).
pub fn with_default_fs(mut conf: Configuration) -> Configuration {
    ensure_default_fs(&mut conf);
    conf
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
    ensure_default_fs(conf);
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
