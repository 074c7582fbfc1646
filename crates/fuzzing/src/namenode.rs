//! The NameNode's decoders: the request of every ClientNamenodeProtocol and
//! DatanodeProtocol method run through the real services against an in-process
//! namesystem; edit-log segments decoded and replayed; checkpoint images loaded.
//!
//! The namesystem is formatted once per process in a temporary directory (on /dev/shm
//! where there is one) and every input starts from the same namespace: a home
//! directory owned by the fuzzing user, a file open for write with a block, a closed
//! file whose block has three replicas, and three live DataNodes.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tusk_namenode::edit_log::scan::{scan_segment, LastSegment};
use tusk_namenode::namesystem::{replay_segments, State};
use tusk_namenode::server::{ClientProtocolService, DatanodeProtocolService};
use tusk_namenode::storage::check_image;
use tusk_namenode::storage::{NameDir, StorageInfo};
use tusk_namenode::{NameNodeOptions, Namesystem};
use tusk_proto::hdfs as h;
use tusk_proto::internal as t;
use tusk_rpc::{CallContext, RpcService};

use crate::calls;
use crate::outcome::settle;

/// ClientNamenodeProtocol methods the NameNode serves (`server.rs`), in selector order.
pub const CLIENT_METHODS: &[&str] = &[
    "getServerDefaults",
    "getFileInfo",
    "getFileLinkInfo",
    "getListing",
    "mkdirs",
    "create",
    "addBlock",
    "abandonBlock",
    "complete",
    "getBlockLocations",
    "rename",
    "rename2",
    "delete",
    "renewLease",
    "recoverLease",
    "setReplication",
    "setPermission",
    "setOwner",
    "setTimes",
    "getContentSummary",
    "getQuotaUsage",
    "getFsStats",
    "fsync",
    "updateBlockForPipeline",
    "updatePipeline",
    "getAdditionalDatanode",
    "reportBadBlocks",
    "getDatanodeReport",
    "getPreferredBlockSize",
    "setSafeMode",
    "msync",
    "saveNamespace",
    "getStoragePolicies",
    "getStoragePolicy",
];

/// DatanodeProtocol methods, after [`CLIENT_METHODS`] in selector order.
pub const DATANODE_METHODS: &[&str] = &[
    "registerDatanode",
    "sendHeartbeat",
    "blockReceivedAndDeleted",
    "blockReport",
    "reportBadReplica",
];

/// The NameNode's own user: permission checks pass for it.
pub const SUPERUSER: &str = "hdfs";
/// An ordinary user who owns [`HOME`].
pub const USER: &str = "fuzz";
pub const HOME: &str = "/user/fuzz";
/// The client that holds the lease on [`OPEN_FILE`].
pub const CLIENT: &str = "DFSClient_fuzz";
pub const OPEN_FILE: &str = "/user/fuzz/open";
pub const CLOSED_FILE: &str = "/user/fuzz/closed";
const DATANODES: [&str; 3] = ["dn-1", "dn-2", "dn-3"];

/// The selector bit that makes a call the superuser's.
const AS_SUPERUSER: u8 = 0x40;
/// How often (in inputs) the log is rolled and purged, so it does not grow for ever.
const CHECKPOINT_EVERY: u64 = 512;

/// Runs one input of [`calls`] against the namesystem: the low six bits of a selector
/// pick the method (modulo the method count), bit 6 calls as the superuser.
pub fn methods(data: &[u8]) {
    let _ = method_results(data);
}

/// [`methods`], returning each call's reply or why it has none (the exception, or
/// that it still waits).
pub fn method_results(data: &[u8]) -> Vec<Result<Bytes, String>> {
    let mut fixture = fixture();
    fixture.reset();
    calls::split(data)
        .map(|(selector, payload)| fixture.node.call(selector, payload))
        .collect()
}

/// The selector that calls `method` (as the superuser when `superuser`).
pub fn selector(method: &str, superuser: bool) -> u8 {
    let index = CLIENT_METHODS
        .iter()
        .chain(DATANODE_METHODS)
        .position(|m| *m == method)
        .unwrap_or_else(|| panic!("unknown method {method}"));
    index as u8 | if superuser { AS_SUPERUSER } else { 0 }
}

/// A namesystem and its two RPC services, called without a socket.
struct Node {
    fsn: Arc<Namesystem>,
    client: Arc<ClientProtocolService>,
    datanode: Arc<DatanodeProtocolService>,
    /// Time for the calls that wait (`complete`, `recoverLease`); each is polled once,
    /// and one still waiting is dropped as a closed connection drops it.
    runtime: tokio::runtime::Runtime,
    /// Holds the name directory.
    _dir: tempfile::TempDir,
}

impl Node {
    /// A freshly formatted namesystem with three registered DataNodes.
    fn format() -> Node {
        let dir = crate::scratch_dir("tusk-fuzz-namenode");
        let options = NameNodeOptions {
            name_dirs: vec![dir.path().to_path_buf()],
            ..options()
        };
        Namesystem::format(&options).expect("format");
        let fsn = Namesystem::load(options).expect("load");
        let node = Node {
            client: Arc::new(ClientProtocolService { fsn: fsn.clone() }),
            datanode: Arc::new(DatanodeProtocolService { fsn: fsn.clone() }),
            fsn,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            _dir: dir,
        };
        node.register_datanodes();
        node
    }

    fn register_datanodes(&self) {
        for (i, uuid) in DATANODES.iter().enumerate() {
            let request = t::RegisterDatanodeRequest {
                datanode: Some(datanode_identity(i, uuid)),
                capacity: 1 << 40,
                dfs_used: 0,
                remaining: 1 << 40,
            };
            self.fsn
                .register_datanode(request, "127.0.0.1")
                .expect("no include list: every node may register");
        }
    }

    /// Calls the method `selector` picks with `payload` as its encoded request; the
    /// reply when there is one.
    fn call(&self, selector: u8, payload: &[u8]) -> Result<Bytes, String> {
        let methods = CLIENT_METHODS.len() + DATANODE_METHODS.len();
        let index = (selector & (AS_SUPERUSER - 1)) as usize % methods;
        let user = if selector & AS_SUPERUSER != 0 {
            SUPERUSER
        } else {
            USER
        };
        let ctx = CallContext {
            user: Arc::from(user),
            client_id: Bytes::from_static(&[0x22; 16]),
            call_id: 0,
            peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
            token: None,
            ugi: Arc::from(format!("{} (auth:SIMPLE)", user)),
            principal: None,
            caller_context: None,
        };
        let request = Bytes::copy_from_slice(payload);
        let outcome = match CLIENT_METHODS.get(index) {
            Some(method) => self.client.clone().call(ctx, method, request),
            None => {
                let method = DATANODE_METHODS[index - CLIENT_METHODS.len()];
                self.datanode.clone().call(ctx, method, request)
            }
        };
        let _time = self.runtime.enter();
        settle(outcome)
    }

    /// Calls `method` with `request`, decoding its reply as `Resp`.
    fn typed<Resp: Message + Default>(
        &self,
        method: &str,
        superuser: bool,
        request: &impl Message,
    ) -> Resp {
        let reply = self
            .call(selector(method, superuser), &request.encode_to_vec())
            .unwrap_or_else(|e| panic!("{method} failed: {e}"));
        Resp::decode(reply).expect("reply decodes")
    }
}

/// The options every fuzzed namesystem runs with.
fn options() -> NameNodeOptions {
    NameNodeOptions {
        superuser: SUPERUSER.into(),
        supergroup: "supergroup".into(),
        permissions_enabled: true,
        complete_wait: Duration::from_millis(1),
        ..Default::default()
    }
}

fn datanode_identity(i: usize, uuid: &str) -> t::DatanodeIdentity {
    t::DatanodeIdentity {
        ip_addr: format!("127.0.0.{}", i + 1),
        host_name: format!("datanode-{}", i + 1),
        datanode_uuid: uuid.to_string(),
        xfer_port: 9866,
        info_port: 9864,
        ipc_port: 9867,
        storage_id: format!("DS-{uuid}"),
        info_secure_port: 0,
    }
}

/// The process's namesystem and the namespace every input starts from.
struct Fixture {
    node: Node,
    /// The starting namespace, as a checkpoint image.
    base: t::FsImage,
    /// The replicas the DataNodes report at the start of every input.
    replicas: Vec<t::ReplicaReport>,
    inputs: u64,
}

fn fixture() -> MutexGuard<'static, Fixture> {
    static FIXTURE: OnceLock<Mutex<Fixture>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| Mutex::new(Fixture::new()))
        .lock()
        // A panic in one input is reported by the fuzzer; the next starts afresh anyway.
        .unwrap_or_else(|e| e.into_inner())
}

impl Fixture {
    fn new() -> Fixture {
        let node = Node::format();
        let replicas = build_namespace(&node);
        let base = node.fsn.read().to_image(0, &node.fsn.storage);
        Fixture {
            node,
            base,
            replicas,
            inputs: 0,
        }
    }

    /// Puts the namesystem back to the starting namespace.
    fn reset(&mut self) {
        let fsn = &self.node.fsn;
        *fsn.write() = State::from_image(&self.base, &fsn.options);
        self.node.register_datanodes();
        for uuid in DATANODES {
            fsn.block_report(uuid, &self.replicas)
                .expect("registered DataNode reports");
        }
        self.inputs += 1;
        if self.inputs.is_multiple_of(CHECKPOINT_EVERY) {
            fsn.checkpoint()
                .expect("checkpoint of the starting namespace");
        }
    }
}

/// Builds the starting namespace through the real methods; returns the closed file's
/// replicas, which every DataNode holds.
fn build_namespace(node: &Node) -> Vec<t::ReplicaReport> {
    for request in [mkdirs(HOME), mkdirs("/tmp"), mkdirs("/user/other/private")] {
        let _: h::MkdirsResponseProto = node.typed("mkdirs", true, &request);
    }
    let _: h::SetOwnerResponseProto = node.typed("setOwner", true, &set_owner(HOME, USER));
    let _: h::SetPermissionResponseProto = node.typed(
        "setPermission",
        true,
        &h::SetPermissionRequestProto {
            src: "/tmp".into(),
            permission: h::FsPermissionProto { perm: 0o1777 },
        },
    );
    let mut replicas = Vec::new();
    for path in [CLOSED_FILE, OPEN_FILE] {
        let _: h::CreateResponseProto = node.typed("create", false, &create(path));
        let added: h::AddBlockResponseProto = node.typed("addBlock", false, &add_block(path));
        if path == CLOSED_FILE {
            let block = &added.block.b;
            let replica = t::ReplicaReport {
                block_id: block.block_id,
                generation_stamp: block.generation_stamp,
                num_bytes: 1024,
                being_written: false,
            };
            for uuid in DATANODES {
                let _: t::BlockReceivedAndDeletedResponse = node.typed(
                    "blockReceivedAndDeleted",
                    false,
                    &t::BlockReceivedAndDeletedRequest {
                        datanode_uuid: uuid.into(),
                        received: vec![replica],
                        ..Default::default()
                    },
                );
            }
            let last = h::ExtendedBlockProto {
                num_bytes: Some(1024),
                ..block.clone()
            };
            let done: h::CompleteResponseProto =
                node.typed("complete", false, &complete(path, Some(last)));
            assert!(done.result, "the closed file completes");
            replicas.push(replica);
        }
    }
    replicas
}

fn mkdirs(path: &str) -> h::MkdirsRequestProto {
    h::MkdirsRequestProto {
        src: path.into(),
        masked: h::FsPermissionProto { perm: 0o755 },
        create_parent: true,
        unmasked: None,
    }
}

fn set_owner(path: &str, user: &str) -> h::SetOwnerRequestProto {
    h::SetOwnerRequestProto {
        src: path.into(),
        username: Some(user.into()),
        groupname: Some("users".into()),
    }
}

fn create(path: &str) -> h::CreateRequestProto {
    h::CreateRequestProto {
        src: path.into(),
        masked: h::FsPermissionProto { perm: 0o644 },
        client_name: CLIENT.into(),
        // CREATE | OVERWRITE, as Hadoop's FileSystem.create sends.
        create_flag: 0x01 | 0x02,
        create_parent: true,
        replication: 3,
        block_size: 1 << 20,
        ..Default::default()
    }
}

fn add_block(path: &str) -> h::AddBlockRequestProto {
    h::AddBlockRequestProto {
        src: path.into(),
        client_name: CLIENT.into(),
        ..Default::default()
    }
}

fn complete(path: &str, last: Option<h::ExtendedBlockProto>) -> h::CompleteRequestProto {
    h::CompleteRequestProto {
        src: path.into(),
        client_name: CLIENT.into(),
        last,
        file_id: None,
    }
}

/// The block of the open file and of the closed file, as the starting namespace has them.
fn base_blocks() -> (h::ExtendedBlockProto, h::ExtendedBlockProto) {
    let fixture = fixture();
    let block_of = |path: &str| {
        let name = path.rsplit('/').next().expect("a name");
        let inode = fixture
            .base
            .inodes
            .iter()
            .find(|i| i.name == name)
            .expect("file in the starting namespace");
        let b = inode.blocks.last().expect("a block");
        h::ExtendedBlockProto {
            // Random per format, and not checked: a fixed one keeps the seeds stable.
            pool_id: "BP-fuzz".into(),
            block_id: b.block_id,
            generation_stamp: b.generation_stamp,
            num_bytes: Some(b.num_bytes),
        }
    };
    (block_of(OPEN_FILE), block_of(CLOSED_FILE))
}

/// One seed per method (a typical request), and sequences that write a file through.
pub fn method_seeds() -> Vec<(String, Vec<u8>)> {
    let (open_block, closed_block) = base_blocks();
    let located = |b: &h::ExtendedBlockProto| h::LocatedBlockProto {
        b: b.clone(),
        offset: 0,
        locs: vec![h::DatanodeInfoProto {
            id: h::DatanodeIdProto {
                ip_addr: "127.0.0.1".into(),
                host_name: "datanode-1".into(),
                datanode_uuid: DATANODES[0].into(),
                xfer_port: 9866,
                info_port: 9864,
                ipc_port: 9867,
                info_secure_port: None,
            },
            ..Default::default()
        }],
        ..Default::default()
    };
    let closed_replica = t::ReplicaReport {
        block_id: closed_block.block_id,
        generation_stamp: closed_block.generation_stamp,
        num_bytes: closed_block.num_bytes.unwrap_or(0),
        being_written: false,
    };
    let path_req = |src: &str| h::GetFileInfoRequestProto { src: src.into() }.encode_to_vec();
    let one = |method: &str, superuser: bool, request: Vec<u8>| {
        (
            method.to_string(),
            vec![(selector(method, superuser), request)],
        )
    };
    let mut seeds = vec![
        one("getServerDefaults", false, vec![]),
        one("getFileInfo", false, path_req(CLOSED_FILE)),
        one("getFileLinkInfo", false, path_req(HOME)),
        one(
            "getListing",
            false,
            h::GetListingRequestProto {
                src: HOME.into(),
                start_after: Bytes::new(),
                need_location: true,
            }
            .encode_to_vec(),
        ),
        one("mkdirs", false, mkdirs("/user/fuzz/a/b").encode_to_vec()),
        one("create", false, create("/user/fuzz/new").encode_to_vec()),
        one("addBlock", false, {
            let mut r = add_block(OPEN_FILE);
            r.previous = Some(open_block.clone());
            r.encode_to_vec()
        }),
        one(
            "abandonBlock",
            false,
            h::AbandonBlockRequestProto {
                b: open_block.clone(),
                src: OPEN_FILE.into(),
                holder: CLIENT.into(),
                file_id: None,
            }
            .encode_to_vec(),
        ),
        one(
            "complete",
            false,
            complete(OPEN_FILE, Some(open_block.clone())).encode_to_vec(),
        ),
        one(
            "getBlockLocations",
            false,
            h::GetBlockLocationsRequestProto {
                src: CLOSED_FILE.into(),
                offset: 0,
                length: 1 << 20,
            }
            .encode_to_vec(),
        ),
        one(
            "rename",
            false,
            h::RenameRequestProto {
                src: CLOSED_FILE.into(),
                dst: "/user/fuzz/renamed".into(),
            }
            .encode_to_vec(),
        ),
        one(
            "rename2",
            false,
            h::Rename2RequestProto {
                src: OPEN_FILE.into(),
                dst: CLOSED_FILE.into(),
                overwrite_dest: true,
                move_to_trash: None,
            }
            .encode_to_vec(),
        ),
        one(
            "delete",
            true,
            h::DeleteRequestProto {
                src: HOME.into(),
                recursive: true,
            }
            .encode_to_vec(),
        ),
        one(
            "renewLease",
            false,
            h::RenewLeaseRequestProto {
                client_name: CLIENT.into(),
                namespaces: vec![],
            }
            .encode_to_vec(),
        ),
        one(
            "recoverLease",
            false,
            h::RecoverLeaseRequestProto {
                src: OPEN_FILE.into(),
                client_name: "DFSClient_other".into(),
            }
            .encode_to_vec(),
        ),
        one(
            "setReplication",
            false,
            h::SetReplicationRequestProto {
                src: CLOSED_FILE.into(),
                replication: 1,
            }
            .encode_to_vec(),
        ),
        one(
            "setPermission",
            false,
            h::SetPermissionRequestProto {
                src: CLOSED_FILE.into(),
                permission: h::FsPermissionProto { perm: 0o600 },
            }
            .encode_to_vec(),
        ),
        one(
            "setOwner",
            true,
            set_owner(CLOSED_FILE, "other").encode_to_vec(),
        ),
        one(
            "setTimes",
            false,
            h::SetTimesRequestProto {
                src: CLOSED_FILE.into(),
                mtime: 1_700_000_000_000,
                atime: 1_700_000_000_000,
            }
            .encode_to_vec(),
        ),
        one(
            "getContentSummary",
            false,
            h::GetContentSummaryRequestProto { path: "/".into() }.encode_to_vec(),
        ),
        one(
            "getQuotaUsage",
            false,
            h::GetQuotaUsageRequestProto { path: HOME.into() }.encode_to_vec(),
        ),
        one("getFsStats", false, vec![]),
        one(
            "fsync",
            false,
            h::FsyncRequestProto {
                src: OPEN_FILE.into(),
                client: CLIENT.into(),
                last_block_length: Some(512),
                file_id: None,
            }
            .encode_to_vec(),
        ),
        one(
            "updateBlockForPipeline",
            false,
            h::UpdateBlockForPipelineRequestProto {
                block: open_block.clone(),
                client_name: CLIENT.into(),
            }
            .encode_to_vec(),
        ),
        // Pipeline recovery: a new stamp first, then the new pipeline with it.
        (
            "updatePipeline".to_string(),
            vec![
                (
                    selector("updateBlockForPipeline", false),
                    h::UpdateBlockForPipelineRequestProto {
                        block: open_block.clone(),
                        client_name: CLIENT.into(),
                    }
                    .encode_to_vec(),
                ),
                (
                    selector("updatePipeline", false),
                    h::UpdatePipelineRequestProto {
                        client_name: CLIENT.into(),
                        old_block: open_block.clone(),
                        new_block: h::ExtendedBlockProto {
                            generation_stamp: open_block.generation_stamp + 1,
                            ..open_block.clone()
                        },
                        new_nodes: located(&open_block)
                            .locs
                            .into_iter()
                            .map(|d| d.id)
                            .collect(),
                        ..Default::default()
                    }
                    .encode_to_vec(),
                ),
            ],
        ),
        one(
            "getAdditionalDatanode",
            false,
            h::GetAdditionalDatanodeRequestProto {
                src: OPEN_FILE.into(),
                blk: open_block.clone(),
                existings: located(&open_block).locs,
                num_additional_nodes: 1,
                client_name: CLIENT.into(),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        one(
            "reportBadBlocks",
            false,
            h::ReportBadBlocksRequestProto {
                blocks: vec![located(&closed_block)],
            }
            .encode_to_vec(),
        ),
        one(
            "getDatanodeReport",
            false,
            h::GetDatanodeReportRequestProto { r#type: 1 }.encode_to_vec(),
        ),
        one(
            "getPreferredBlockSize",
            false,
            h::GetPreferredBlockSizeRequestProto {
                filename: CLOSED_FILE.into(),
            }
            .encode_to_vec(),
        ),
        one(
            "setSafeMode",
            true,
            h::SetSafeModeRequestProto {
                action: 3,
                checked: Some(false),
            }
            .encode_to_vec(),
        ),
        one("msync", false, vec![]),
        one("getStoragePolicies", false, vec![]),
        one("getStoragePolicy", false, path_req(CLOSED_FILE)),
        one(
            "registerDatanode",
            false,
            t::RegisterDatanodeRequest {
                datanode: Some(datanode_identity(3, "dn-4")),
                capacity: 1 << 40,
                dfs_used: 0,
                remaining: 1 << 40,
            }
            .encode_to_vec(),
        ),
        one(
            "sendHeartbeat",
            false,
            t::HeartbeatRequest {
                datanode_uuid: DATANODES[1].into(),
                capacity: 1 << 40,
                remaining: 1 << 39,
                xceiver_count: 2,
                status: Some(t::NodeStatusProto {
                    disk_utilization_pct: 12.5,
                    net_rx_bytes_per_sec: 1e6,
                    net_tx_bytes_per_sec: 2e6,
                    cpu_pct: 30.0,
                    ..Default::default()
                }),
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        one(
            "blockReceivedAndDeleted",
            false,
            t::BlockReceivedAndDeletedRequest {
                datanode_uuid: DATANODES[2].into(),
                received: vec![t::ReplicaReport {
                    block_id: open_block.block_id,
                    generation_stamp: open_block.generation_stamp,
                    num_bytes: 4096,
                    being_written: true,
                }],
                deleted: vec![closed_block.block_id],
                verified: vec![t::ReplicaVerdict {
                    block_id: closed_block.block_id,
                    generation_stamp: closed_block.generation_stamp,
                    num_bytes: 1024,
                    verdict: t::replica_verdict::Verdict::Corrupt as i32,
                }],
                delete_hints: vec![],
            }
            .encode_to_vec(),
        ),
        one(
            "blockReport",
            false,
            t::BlockReportRequest {
                datanode_uuid: DATANODES[0].into(),
                replicas: vec![closed_replica],
            }
            .encode_to_vec(),
        ),
        one(
            "reportBadReplica",
            false,
            t::ReportBadReplicaRequest {
                datanode_uuid: DATANODES[0].into(),
                block_id: closed_block.block_id,
            }
            .encode_to_vec(),
        ),
    ];
    // saveNamespace is served only in safe mode, as HDFS's.
    let safe_mode = |action: i32| {
        (
            selector("setSafeMode", true),
            h::SetSafeModeRequestProto {
                action,
                checked: Some(false),
            }
            .encode_to_vec(),
        )
    };
    seeds.push((
        "saveNamespace".into(),
        vec![
            safe_mode(2),
            (selector("saveNamespace", true), vec![]),
            safe_mode(1),
        ],
    ));
    // A whole write: create, a block, its replicas received, complete.
    let new_file = "/user/fuzz/written";
    seeds.push((
        "write-a-file".into(),
        vec![
            (selector("create", false), create(new_file).encode_to_vec()),
            (
                selector("addBlock", false),
                add_block(new_file).encode_to_vec(),
            ),
            (
                selector("complete", false),
                complete(new_file, None).encode_to_vec(),
            ),
            (
                selector("delete", false),
                h::DeleteRequestProto {
                    src: new_file.into(),
                    recursive: false,
                }
                .encode_to_vec(),
            ),
        ],
    ));
    seeds
        .into_iter()
        .map(|(name, c)| (name, calls::join(&c)))
        .collect()
}

/// Runs one input as the edit-log segment being written when the NameNode stopped,
/// replayed as start-up replays it (`edit_log::scan`: records in txid order, a torn
/// tail told from damage, a record that does not decode or apply stops replay) onto a
/// freshly formatted namespace. A first byte with its low bit clear takes the rest as
/// segment bytes; set, the rest is a sequence of [`calls`] whose payloads are
/// `EditRecord`s, each framed here with its length and a correct CRC so the fuzzer
/// reaches the records behind the checksums.
pub fn edit_log(data: &[u8]) {
    let _ = replay(data);
}

/// [`edit_log`], returning the last txid replayed.
pub fn replay(data: &[u8]) -> u64 {
    let Some((mode, rest)) = data.split_first() else {
        return 0;
    };
    let segment = if mode & 1 == 0 {
        rest.to_vec()
    } else {
        frame_records(calls::split(rest).map(|(_, payload)| payload))
    };
    thread_local! {
        /// A segment file per thread, rewritten for every input.
        static SEGMENT: (tempfile::TempDir, std::path::PathBuf) = {
            let dir = crate::scratch_dir("tusk-fuzz-edits");
            let path = dir.path().join(format!("edits_{:019}", 1));
            (dir, path)
        };
    }
    let options = options();
    // A freshly formatted namespace, as the segments the seeds come from started.
    let mut state = State::from_image(&t::FsImage::default(), &options);
    let scan = SEGMENT.with(|(_, path)| {
        std::fs::write(path, &segment).expect("write segment");
        let segments = [(1, path.clone())];
        replay_segments(&mut state, &segments, 0, u64::MAX, LastSegment::InProgress)
            .expect("reading the segment")
    });
    assert!(scan.last_txid <= scan.max_txid, "{scan:?}");
    if let Some(torn) = &scan.torn {
        assert!(
            torn.offset + torn.len == segment.len() as u64,
            "a torn tail runs to the end: {scan:?}"
        );
    }
    checkpoint_round_trip(&state, scan.last_txid, &options);
    scan.last_txid
}

/// Frames `payloads` as edit-log records: `u32 length | u32 crc32c | payload`.
pub fn frame_records<'a>(payloads: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for payload in payloads {
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(&crc32c::crc32c(payload).to_be_bytes());
        out.extend_from_slice(payload);
    }
    out
}

/// A checkpoint of `state` loads back as the same namespace, and serves.
fn checkpoint_round_trip(state: &State, last_txid: u64, options: &NameNodeOptions) {
    let storage = storage();
    let first = state.to_image(last_txid, &storage);
    if let Err(reason) = check_image(&first) {
        panic!("the loader refuses a checkpoint of this namespace: {reason}");
    }
    let reloaded = State::from_image(&first, options);
    let second = reloaded.to_image(last_txid, &storage);
    assert_eq!(
        sorted(first),
        sorted(second),
        "a checkpoint reloads as the same namespace"
    );
}

fn sorted(mut image: t::FsImage) -> t::FsImage {
    image.inodes.sort_by_key(|i| i.id);
    image
}

fn storage() -> StorageInfo {
    StorageInfo {
        namespace_id: 1,
        block_pool_id: "BP-fuzz".into(),
        cluster_id: "CID-fuzz".into(),
    }
}

/// The starting namespace as an image, and the options to load it with.
fn base_image() -> (t::FsImage, NameNodeOptions) {
    static BASE: OnceLock<t::FsImage> = OnceLock::new();
    let image = BASE.get_or_init(|| fixture().base.clone()).clone();
    (image, options())
}

/// Runs one input as a checkpoint image (its body, after the CRC the loader checks):
/// checked and loaded as the NameNode loads it, checkpointed again, and served to a few
/// read calls.
pub fn fsimage(data: &[u8]) {
    let Ok(image) = t::FsImage::decode(data) else {
        return;
    };
    if check_image(&image).is_err() {
        return;
    }
    let options = options();
    let state = State::from_image(&image, &options);
    checkpoint_round_trip(&state, image.last_txid, &options);
    let fixture = fixture();
    *fixture.node.fsn.write() = state;
    for (method, request) in [
        (
            "getListing",
            h::GetListingRequestProto {
                src: "/".into(),
                start_after: Bytes::new(),
                need_location: true,
            }
            .encode_to_vec(),
        ),
        (
            "getContentSummary",
            h::GetContentSummaryRequestProto { path: "/".into() }.encode_to_vec(),
        ),
        (
            "getBlockLocations",
            h::GetBlockLocationsRequestProto {
                src: CLOSED_FILE.into(),
                offset: 0,
                length: u64::MAX >> 1,
            }
            .encode_to_vec(),
        ),
    ] {
        let _ = fixture.node.call(selector(method, true), &request);
    }
}

/// The starting namespace's image, and one after a few more changes.
pub fn fsimage_seeds() -> Vec<(String, Vec<u8>)> {
    let (base, _) = base_image();
    let node = Node::format();
    build_namespace(&node);
    more_changes(&node);
    let changed = node.fsn.read().to_image(42, &node.fsn.storage);
    vec![
        ("starting-namespace".into(), base.encode_to_vec()),
        ("after-changes".into(), changed.encode_to_vec()),
        ("empty".into(), Vec::new()),
    ]
}

/// Changes that log every kind of edit the methods make.
fn more_changes(node: &Node) {
    let _: h::RenameResponseProto = node.typed(
        "rename",
        false,
        &h::RenameRequestProto {
            src: CLOSED_FILE.into(),
            dst: "/user/fuzz/moved".into(),
        },
    );
    let _: h::SetReplicationResponseProto = node.typed(
        "setReplication",
        false,
        &h::SetReplicationRequestProto {
            src: "/user/fuzz/moved".into(),
            replication: 2,
        },
    );
    let _: h::SetTimesResponseProto = node.typed(
        "setTimes",
        false,
        &h::SetTimesRequestProto {
            src: "/user/fuzz/moved".into(),
            mtime: 1_700_000_000_000,
            atime: 1_700_000_000_001,
        },
    );
    let _: h::SetOwnerResponseProto = node.typed("setOwner", true, &set_owner("/tmp", USER));
    let located: h::GetBlockLocationsResponseProto = node.typed(
        "getBlockLocations",
        false,
        &h::GetBlockLocationsRequestProto {
            src: OPEN_FILE.into(),
            offset: 0,
            length: 1 << 20,
        },
    );
    let open_block = located
        .locations
        .and_then(|l| l.blocks.last().map(|b| b.b.clone()))
        .expect("the open file's block");
    let updated: h::UpdateBlockForPipelineResponseProto = node.typed(
        "updateBlockForPipeline",
        false,
        &h::UpdateBlockForPipelineRequestProto {
            block: open_block.clone(),
            client_name: CLIENT.into(),
        },
    );
    let _: h::UpdatePipelineResponseProto = node.typed(
        "updatePipeline",
        false,
        &h::UpdatePipelineRequestProto {
            client_name: CLIENT.into(),
            old_block: open_block,
            new_block: updated.block.b,
            new_nodes: vec![],
            ..Default::default()
        },
    );
    let _: h::RecoverLeaseResponseProto = node.typed(
        "recoverLease",
        true,
        &h::RecoverLeaseRequestProto {
            src: OPEN_FILE.into(),
            client_name: "DFSClient_other".into(),
        },
    );
    let _: h::DeleteResponseProto = node.typed(
        "delete",
        false,
        &h::DeleteRequestProto {
            src: "/user/fuzz/moved".into(),
            recursive: false,
        },
    );
}

/// Segments the real namesystem wrote: building the starting namespace and more
/// changes, as raw segment bytes and as framed records.
pub fn edit_log_seeds() -> Vec<(String, Vec<u8>)> {
    let node = Node::format();
    build_namespace(&node);
    more_changes(&node);
    node.fsn.edit_log.flush_blocking().expect("flush");
    let dir = NameDir::new(&node.fsn.options.name_dirs[0]);
    let mut segment = Vec::new();
    for (_, path) in dir.segments().expect("segments") {
        segment.extend(std::fs::read(path).expect("segment"));
    }
    let scan = scan_segment(&segment);
    let records: Vec<Vec<u8>> = scan.records.iter().map(|r| r.payload.to_vec()).collect();
    segment.truncate(scan.valid_len as usize);
    let mut raw = vec![0];
    raw.extend_from_slice(&segment);
    let mut torn = raw.clone();
    torn.truncate(raw.len() - 3);
    let framed = calls::join(&records.into_iter().map(|r| (0, r)).collect::<Vec<_>>());
    let mut records_only = vec![1];
    records_only.extend(framed);
    vec![
        ("segment".into(), raw),
        ("segment-torn-tail".into(), torn),
        ("records".into(), records_only),
    ]
}
