//! Typed clients of YARN's protocols, for job clients, ApplicationMasters and tests;
//! beside the ResourceManager and NodeManager servers as `client` is beside the
//! NameNode, so a job client or an AM needs no server crate.
//!
//! Layout:
//! - `application`: [`ApplicationClient`], `APPLICATION_CLIENT_PROTOCOL` — submit,
//!   watch and kill applications, list nodes.
//! - `application_master`: [`ApplicationMasterClient`], `APPLICATION_MASTER_PROTOCOL`
//!   — one AM attempt's register, allocate and finish calls.
//! - `container_manager`: [`ContainerManagerClient`], `CONTAINER_MANAGEMENT_PROTOCOL`
//!   — start, stop and query containers on one NodeManager.
//! - `ramp_down`: the reduce ramp-down rule of a MapReduce AM (which running reduces
//!   to preempt when maps wait for containers), for Tusk's AM and the RM's simulator.
//!
//! Every call returns the RPC layer's typed [`RpcError`]; a server-side refusal
//! arrives as its Hadoop exception class name.

pub mod application;
pub mod application_master;
pub mod container_manager;
pub mod ramp_down;

use std::path::Path;
use std::time::Duration;

use tusk_proto::tusk::yarn as y;
use tusk_rpc::{ConnectRetry, RpcClient, RpcClientOptions};

pub use application::ApplicationClient;
pub use application_master::ApplicationMasterClient;
pub use container_manager::ContainerManagerClient;
pub use tusk_rpc::RpcError;

/// How long a client waits to connect before the call fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How a container runs `tusk`: `exe ARGS… -D k=v…` with the launcher's `TUSK_LOG`
/// (`warn` when unset), in the directory the NodeManager gives it. ApplicationMasters and
/// their workers (MapReduce's, SQL's) are all started this way.
pub fn tusk_launch<'a>(
    exe: &Path,
    mut args: Vec<String>,
    conf: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> y::ContainerLaunchContext {
    for (k, v) in conf {
        args.push("-D".into());
        args.push(format!("{k}={v}"));
    }
    y::ContainerLaunchContext {
        command: exe.display().to_string(),
        args,
        env: [(
            "TUSK_LOG".to_string(),
            std::env::var("TUSK_LOG").unwrap_or_else(|_| "warn".into()),
        )]
        .into(),
        working_dir: String::new(),
    }
}

fn rpc(addr: &str, protocol: &str) -> RpcClient {
    RpcClient::new(addr, rpc_options(protocol))
}

fn rpc_options(protocol: &str) -> RpcClientOptions {
    RpcClientOptions {
        protocol: protocol.into(),
        connect_timeout: CONNECT_TIMEOUT,
        // Callers retry with yarn.resourcemanager.connect.* (as Hadoop's RMProxy).
        connect_retry: ConnectRetry::NONE,
        ..Default::default()
    }
}
