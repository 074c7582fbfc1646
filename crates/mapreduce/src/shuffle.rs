//! Where a reduce gets map output from: [`ShuffleSource`] fetches one partition of one
//! map's output. `local` reads the map's directory (the local runner, or a reduce on
//! the same node); `http` asks a NodeManager's shuffle server:
//! `GET http://host:port/mapOutput?job=<jobId>&map=<mapAttemptId>&reduce=<partition>`,
//! whose body is the on-disk segment and whose `X-Tusk-Raw-Length` header is its
//! uncompressed length. `reception`: what a reduce still has to fetch
//! (Potential-Reception).

pub mod http;
pub mod local;
pub mod reception;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::ids::TaskAttemptId;

pub use http::HttpShuffle;
pub use local::LocalShuffle;

/// Header carrying a segment's raw (uncompressed) length.
pub const RAW_LENGTH_HEADER: &str = "X-Tusk-Raw-Length";

/// Where one finished map's output can be fetched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapOutputLocation {
    pub attempt: TaskAttemptId,
    /// `host:port` of the shuffle server that serves it.
    pub shuffle_addr: String,
    /// The map's local directory, when the reduce can read it directly.
    pub local_dir: Option<PathBuf>,
    /// Bytes of the map's segment for each partition as stored (what a fetch moves);
    /// empty when not known. A reduce's Potential-Reception is reckoned from them.
    #[serde(default)]
    pub partition_bytes: Vec<u64>,
}

/// One partition of one map's output as stored (compressed if the job compresses).
#[derive(Clone, Debug)]
pub struct Segment {
    pub raw_length: u64,
    pub part: Vec<u8>,
}

pub trait ShuffleSource: Send + Sync {
    fn fetch(&self, map: &MapOutputLocation, partition: u32) -> Result<Segment>;
}

/// Reads locally when the location has a directory, else over HTTP.
pub struct AnyShuffle {
    pub local: LocalShuffle,
    pub http: HttpShuffle,
}

impl ShuffleSource for AnyShuffle {
    fn fetch(&self, map: &MapOutputLocation, partition: u32) -> Result<Segment> {
        match map.local_dir {
            Some(_) => self.local.fetch(map, partition),
            None => self.http.fetch(map, partition),
        }
    }
}
