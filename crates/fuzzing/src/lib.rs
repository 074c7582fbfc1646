//! What Tusk's fuzz targets run: each server's decode path, fed raw bytes exactly as a
//! client, a peer or a disk could hand them over. The same functions run under
//! libFuzzer (`fuzz/`, nightly, coverage-guided) and under this crate's seeded mutation
//! pass (`tests/mutations.rs`, stable, part of `cargo test`), so both exercise one code
//! path and one seed set.
//!
//! Layout:
//! - `calls`: the byte layout of a sequence of calls (selector, length, payload) that
//!   the method targets take, so one input can build up server state.
//! - `outcome`: settling a service's answer to one call within the fuzz iteration.
//! - `mutate`: seeded mutations of valid encodings (truncation, bit flips, inflated
//!   length fields, splices) for the stable pass.
//! - `rpc`: Hadoop RPC connection bytes (preamble, frames, headers, SASL) into an
//!   [`tusk_rpc::RpcServer`].
//! - `namenode`: every ClientNamenodeProtocol and DatanodeProtocol method against an
//!   in-process namesystem; edit-log records replayed; checkpoint images loaded.
//! - `resourcemanager`: every ResourceTracker, ApplicationClient and ApplicationMaster
//!   method against a fresh in-process cluster.
//! - `datatransfer`: DataTransferProtocol op requests, replies, acks and data packets
//!   with their checksums.
//! - `security`: block access token identifiers (both layouts) checked against a
//!   DataNode's keys, and the DIGEST-MD5 response of the DataNode's SASL handshake.
//! - `sasl`: what Hadoop RPC's SASL layers read: a server's DIGEST-MD5 challenge (as the
//!   client), Kerberos principals, `auth_to_local` rules, proxy-user rules and the frames
//!   of a security layer's unwrapped stream.
//! - `config`: TOML configuration files and `-D` overrides, read into every daemon's
//!   options (and the block keys the NameNode builds from them).
//!
//! [`TARGETS`] names them all; `fuzz/fuzz_targets/<name>.rs` calls `run` of the target
//! of the same name, and `fuzz/corpus/<name>/` holds its `seeds` (written by
//! `TUSK_WRITE_CORPUS=1 cargo test -p tusk-fuzzing --test seed_corpus`).

pub mod calls;
pub mod config;
pub mod datatransfer;
pub mod mutate;
pub mod namenode;
mod outcome;
pub mod resourcemanager;
pub mod rpc;
pub mod sasl;
pub mod security;

/// A temporary directory for a target's files (a name directory, a segment): on
/// /dev/shm where there is one, since fsync and rewrites on a disk would make inputs
/// a hundred times slower; `TUSK_FUZZ_TMP` overrides. Fixtures live as long as the
/// process and are never dropped, so the name carries the process id and directories
/// of processes that have ended are removed first.
pub(crate) fn scratch_dir(prefix: &str) -> tempfile::TempDir {
    let base = std::env::var_os("TUSK_FUZZ_TMP")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            let shm = std::path::Path::new("/dev/shm");
            shm.is_dir().then(|| shm.to_path_buf())
        })
        .unwrap_or_else(std::env::temp_dir);
    remove_stale(&base, prefix);
    tempfile::Builder::new()
        .prefix(&format!("{prefix}-{}-", std::process::id()))
        .tempdir_in(base)
        .expect("temporary directory")
}

/// Removes `<prefix>-<pid>-*` directories in `base` whose process has ended.
fn remove_stale(base: &std::path::Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix)?.strip_prefix('-'))
            .and_then(|rest| rest.split('-').next()?.parse::<u32>().ok())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// One fuzz target: a decode path and the valid inputs it starts from.
pub struct Target {
    /// The cargo-fuzz target name, also the corpus directory name.
    pub name: &'static str,
    /// Feeds one input; panics only on a bug.
    pub run: fn(&[u8]),
    /// Small valid inputs, each with a file name, built with the real encoders.
    pub seeds: fn() -> Vec<(String, Vec<u8>)>,
}

/// Every fuzz target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "rpc_connection",
        run: rpc::connection,
        seeds: rpc::seeds,
    },
    Target {
        name: "namenode_methods",
        run: namenode::methods,
        seeds: namenode::method_seeds,
    },
    Target {
        name: "edit_log",
        run: namenode::edit_log,
        seeds: namenode::edit_log_seeds,
    },
    Target {
        name: "fsimage",
        run: namenode::fsimage,
        seeds: namenode::fsimage_seeds,
    },
    Target {
        name: "resourcemanager_methods",
        run: resourcemanager::methods,
        seeds: resourcemanager::seeds,
    },
    Target {
        name: "datatransfer_op",
        run: datatransfer::op,
        seeds: datatransfer::op_seeds,
    },
    Target {
        name: "datatransfer_packet",
        run: datatransfer::packets,
        seeds: datatransfer::packet_seeds,
    },
    Target {
        name: "block_token",
        run: security::token,
        seeds: security::seeds,
    },
    Target {
        name: "sasl",
        run: sasl::run,
        seeds: sasl::seeds,
    },
    Target {
        name: "config",
        run: config::parse,
        seeds: config::seeds,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}
