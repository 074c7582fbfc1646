use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong describing, building or tearing down a testbed.
#[derive(Debug, Error)]
pub enum TestbedError {
    #[error("cannot read cluster description {path}: {source}")]
    ReadDescription {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cluster description {path}: {message}")]
    ParseDescription { path: PathBuf, message: String },
    #[error("node {node}: unknown link class '{class}' (known: {known}; or give `link = {{ class = \"name\", mbit = N }}`)")]
    UnknownLinkClass {
        node: String,
        class: String,
        known: String,
    },
    #[error("node {node}: unknown volume profile '{profile}' (known: {known}; or give read_mbps/write_mbps)")]
    UnknownProfile {
        node: String,
        profile: String,
        known: String,
    },
    #[error("two nodes are named '{name}'")]
    DuplicateNode { name: String },
    #[error("node name '{name}' must be 1-12 characters of a-z, 0-9 and '-'")]
    BadNodeName { name: String },
    #[error("node {node}: {message}")]
    BadNode { node: String, message: String },
    #[error("cluster: {message}")]
    BadCluster { message: String },
    #[error("volumes need {needed_mb} MB in {dir} (node {node} volume {volume} crosses it) but only {free_mb} MB is free")]
    NotEnoughDisk {
        dir: PathBuf,
        node: String,
        volume: usize,
        needed_mb: u64,
        free_mb: u64,
    },
    #[error("the testbed needs root (network namespaces, loop devices, cgroups); run it as root")]
    NotRoot,
    #[error("the kernel refuses {what}: {detail}")]
    Unsupported { what: String, detail: String },
    #[error("a testbed is already up in {dir} (tusk testbed down --dir {dir})")]
    AlreadyUp { dir: PathBuf },
    #[error("no testbed recorded in {dir}")]
    NotUp { dir: PathBuf },
    #[error("no node '{node}' in this testbed")]
    NoSuchNode { node: String },
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{what} did not happen within {secs} s; {hint}")]
    Timeout {
        what: String,
        secs: u64,
        hint: String,
    },
}

impl TestbedError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| TestbedError::Io { what, source }
    }
}

pub type Result<T> = std::result::Result<T, TestbedError>;
