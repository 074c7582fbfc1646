//! DataNodes against a fake NameNode: registration and the heartbeat period it names,
//! pipelined writes, reads, checksums, IBRs, transfer and invalidate commands, setup
//! failures, restart, and garbage on the data port.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, ensure, Context};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tusk_common::Shutdown;
use tusk_datanode::{DataNode, DataNodeHandle, DataNodeOptions};
use tusk_datatransfer::{
    read_delimited, write_delimited, write_op, DataChecksum, DataTransferError, Op, PacketBuf,
    MAX_PACKET_DATA,
};
use tusk_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use tusk_proto::hdfs::{
    BlockOpResponseProto, DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto,
    OpTransferBlockProto, OpWriteBlockProto, Status,
};
use tusk_proto::internal::replica_verdict::Verdict;
use tusk_proto::internal::{
    datanode_command::Command, DatanodeIdentity, InvalidateCommand, ReplicaVerdict, StaleReplica,
    TransferCommand, VerifyCommand,
};

#[path = "support/data_transfer.rs"]
mod data_transfer;
#[path = "support/fake_namenode.rs"]
mod fake_namenode;

use data_transfer::*;
use fake_namenode::FakeNameNode;

const DEADLINE: Duration = Duration::from_secs(20);

// ------------------------------------------------------------------ cluster

struct Cluster {
    nn: Arc<FakeNameNode>,
    nn_addr: SocketAddr,
    dns: Vec<DataNodeHandle>,
    /// One shutdown per DataNode so a test can stop one.
    dn_shutdowns: Vec<Shutdown>,
    nn_shutdown: Shutdown,
    dirs: Vec<tempfile::TempDir>,
}

impl Cluster {
    async fn start(n: usize, options: DataNodeOptions) -> anyhow::Result<Cluster> {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("TUSK_LOG"))
            .with_test_writer()
            .try_init();
        let nn = Arc::new(FakeNameNode::default());
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let nn_addr = listener.local_addr()?;
        let nn_shutdown = Shutdown::new();
        nn.serve(listener, nn_shutdown.clone());
        let mut cluster = Cluster {
            nn,
            nn_addr,
            dns: vec![],
            dn_shutdowns: vec![],
            nn_shutdown,
            dirs: vec![],
        };
        for _ in 0..n {
            let dir = tempfile::tempdir()?;
            let shutdown = Shutdown::new();
            let dn = cluster
                .start_datanode(dir.path(), shutdown.clone(), options.clone())
                .await?;
            cluster.dns.push(dn);
            cluster.dn_shutdowns.push(shutdown);
            cluster.dirs.push(dir);
        }
        Ok(cluster)
    }

    async fn start_datanode(
        &self,
        dir: &std::path::Path,
        shutdown: Shutdown,
        options: DataNodeOptions,
    ) -> anyhow::Result<DataNodeHandle> {
        let options = DataNodeOptions {
            data_dirs: vec![dir.join("d1"), dir.join("d2")],
            namenode_addrs: vec![self.nn_addr.to_string()],
            ..options
        };
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        Ok(DataNode::start(options, listener, shutdown).await?)
    }

    fn info(&self, i: usize) -> DatanodeInfoProto {
        DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: "127.0.0.1".into(),
                host_name: "localhost".into(),
                datanode_uuid: self.dns[i].uuid().to_string(),
                xfer_port: u32::from(self.dns[i].xfer_addr().port()),
                info_port: 0,
                ipc_port: 0,
                info_secure_port: None,
            },
            ..Default::default()
        }
    }

    fn identity(&self, i: usize) -> DatanodeIdentity {
        DatanodeIdentity {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: self.dns[i].uuid().to_string(),
            xfer_port: u32::from(self.dns[i].xfer_addr().port()),
            ..Default::default()
        }
    }

    async fn stop(self) {
        for s in &self.dn_shutdowns {
            s.trigger();
        }
        for dn in self.dns {
            tokio::time::timeout(DEADLINE, dn.wait())
                .await
                .expect("DataNode stops");
        }
        self.nn_shutdown.trigger();
    }
}

fn fast_options() -> DataNodeOptions {
    DataNodeOptions {
        heartbeat_interval: Duration::from_millis(100),
        ..Default::default()
    }
}

/// Polls `check` until it holds or the deadline passes.
async fn wait_until(what: &str, mut check: impl FnMut() -> bool) -> anyhow::Result<()> {
    tusk_common::wait::wait_for(what, DEADLINE, || std::future::ready(check())).await?;
    Ok(())
}

// ------------------------------------------------------------------ tests

#[tokio::test]
async fn pipeline_write_reaches_every_replica() -> anyhow::Result<()> {
    let c = Cluster::start(3, fast_options()).await?;
    let len = MAX_PACKET_DATA * 7 / 2 + 5;
    let data = test_data(len, 1);
    let b = block(1001, 1, len as u64);
    let out = write_block(
        c.dns[0].xfer_addr(),
        b.clone(),
        vec![c.info(1), c.info(2)],
        &data,
    )
    .await?;
    ensure!(
        out.setup.status == Status::Success as i32,
        "setup: {:?}",
        out.setup
    );
    let seqnos: Vec<i64> = out.acks.iter().map(|a| a.seqno).collect();
    assert_eq!(seqnos, vec![0, 1, 2, 3, 4], "one ack per packet, in order");
    for ack in &out.acks {
        assert!(all_success(ack, 3), "ack {ack:?}");
    }

    for dn in &c.dns {
        let uuid = dn.uuid().to_string();
        wait_until("received reports", || {
            c.nn.received_by(&uuid, 1001).is_some()
        })
        .await?;
        let (report, via) = c.nn.received_by(&uuid, 1001).unwrap();
        assert_eq!(report.num_bytes, len as u64);
        assert_eq!(report.generation_stamp, 1);
        assert!(!report.being_written);
        assert_eq!(via, "ibr");
        let back = read_block(dn.xfer_addr(), b.clone(), 0, len as u64).await?;
        assert!(back == data, "replica on {uuid} differs");
        assert_eq!(dn.replica_count(), 1);
    }
    // A range starting mid-chunk, crossing a packet boundary.
    let part = read_block(c.dns[1].xfer_addr(), b.clone(), 65_000, 5_000).await?;
    assert_eq!(part, &data[65_000..70_000]);

    // Registration, block reports and heartbeats with usage figures arrived.
    assert_eq!(c.nn.registrations.lock().unwrap().len(), 3);
    wait_until("heartbeats", || {
        c.nn.heartbeats
            .lock()
            .unwrap()
            .iter()
            .any(|h| h.capacity > 0 && h.dfs_used >= len as u64)
    })
    .await?;
    assert!(c.nn.block_reports.lock().unwrap().len() >= 3);
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn zero_length_block() -> anyhow::Result<()> {
    let c = Cluster::start(2, fast_options()).await?;
    let b = block(2002, 5, 0);
    let out = write_block(c.dns[0].xfer_addr(), b.clone(), vec![c.info(1)], &[]).await?;
    assert_eq!(out.acks.len(), 1);
    assert!(all_success(&out.acks[0], 2));
    for dn in &c.dns {
        let uuid = dn.uuid().to_string();
        wait_until("zero-length report", || {
            c.nn.received_by(&uuid, 2002).is_some()
        })
        .await?;
        assert_eq!(c.nn.received_by(&uuid, 2002).unwrap().0.num_bytes, 0);
        assert!(read_block(dn.xfer_addr(), b.clone(), 0, 0)
            .await?
            .is_empty());
    }
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn corrupt_replica_fails_the_read_and_is_reported() -> anyhow::Result<()> {
    let c = Cluster::start(1, fast_options()).await?;
    let data = test_data(200_000, 3);
    let b = block(3003, 1, data.len() as u64);
    write_block(c.dns[0].xfer_addr(), b.clone(), vec![], &data).await?;
    wait_until("finalized", || c.dns[0].replica_count() == 1).await?;
    let path = c.dns[0].replica_path(3003).context("replica path")?;
    let mut bytes = std::fs::read(&path)?;
    bytes[70_000] ^= 0x01;
    std::fs::write(&path, bytes)?;

    match read_block(c.dns[0].xfer_addr(), b.clone(), 0, data.len() as u64).await {
        Err(DataTransferError::ChecksumMismatch { offset, .. }) => {
            assert_eq!(offset, 70_000 / 512 * 512)
        }
        other => bail!(
            "expected a checksum mismatch, got {:?}",
            other.map(|d| d.len())
        ),
    }
    let uuid = c.dns[0].uuid().to_string();
    wait_until("bad replica report", || {
        c.nn.bad_replicas
            .lock()
            .unwrap()
            .contains(&(uuid.clone(), 3003))
    })
    .await?;
    // Bytes before the bad chunk still read fine.
    assert_eq!(
        read_block(c.dns[0].xfer_addr(), b, 0, 60_000).await?,
        &data[..60_000]
    );
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn transfer_and_invalidate_commands() -> anyhow::Result<()> {
    let c = Cluster::start(3, fast_options()).await?;
    let data = test_data(150_000, 9);
    let b = block(4004, 3, data.len() as u64);
    write_block(c.dns[0].xfer_addr(), b.clone(), vec![], &data).await?;
    wait_until("source replica", || c.dns[0].replica_count() == 1).await?;

    c.nn.queue(
        c.dns[0].uuid(),
        Command::Transfer(TransferCommand {
            block_id: 4004,
            generation_stamp: 3,
            num_bytes: data.len() as u64,
            targets: vec![c.identity(1), c.identity(2)],
        }),
    );
    for i in [1, 2] {
        let uuid = c.dns[i].uuid().to_string();
        wait_until("transferred replica reported", || {
            c.nn.received_by(&uuid, 4004).is_some()
        })
        .await?;
        assert_eq!(c.dns[i].replica_count(), 1);
        assert!(read_block(c.dns[i].xfer_addr(), b.clone(), 0, data.len() as u64).await? == data);
    }

    // A stale-copy deletion bounded below the replica's stamp keeps it (the stale list
    // runs before the plain ids, so 4005's deletion report says it was judged), and one
    // bounded at its stamp deletes it.
    let stale = |max_generation_stamp| StaleReplica {
        block_id: 4004,
        max_generation_stamp,
    };
    let uuid = c.dns[1].uuid().to_string();
    c.nn.queue(
        &uuid,
        Command::Invalidate(InvalidateCommand {
            block_ids: vec![4005],
            stale: vec![stale(2)],
        }),
    );
    wait_until("the bounded deletion judged", || {
        c.nn.deleted.lock().unwrap().contains(&(uuid.clone(), 4005))
    })
    .await?;
    assert_eq!(c.dns[1].replica_count(), 1, "a newer replica is kept");
    c.nn.queue(
        &uuid,
        Command::Invalidate(InvalidateCommand {
            block_ids: vec![],
            stale: vec![stale(3)],
        }),
    );
    wait_until("the stale replica's deletion reported", || {
        c.nn.deleted.lock().unwrap().contains(&(uuid.clone(), 4004))
    })
    .await?;
    assert_eq!(c.dns[1].replica_count(), 0);

    c.nn.queue(
        c.dns[2].uuid(),
        Command::Invalidate(InvalidateCommand {
            block_ids: vec![4004],
            stale: vec![],
        }),
    );
    let uuid = c.dns[2].uuid().to_string();
    wait_until("deletion reported", || {
        c.nn.deleted.lock().unwrap().contains(&(uuid.clone(), 4004))
    })
    .await?;
    assert_eq!(c.dns[2].replica_count(), 0);
    assert!(read_block(c.dns[2].xfer_addr(), b, 0, 10).await.is_err());
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn dead_downstream_is_named_as_first_bad_link() -> anyhow::Result<()> {
    let c = Cluster::start(2, fast_options()).await?;
    let dead = TcpListener::bind("127.0.0.1:0").await?;
    let dead_port = dead.local_addr()?.port();
    drop(dead);
    let mut ghost = c.info(1);
    ghost.id.xfer_port = u32::from(dead_port);
    ghost.id.datanode_uuid = "ghost".into();
    let b = block(5005, 1, 10);
    // DN0 → DN1 → ghost: DN1 cannot connect and DN0 passes the blame up.
    let out = write_block(
        c.dns[0].xfer_addr(),
        b,
        vec![c.info(1), ghost],
        b"0123456789",
    )
    .await?;
    assert_eq!(out.setup.status, Status::Error as i32);
    assert_eq!(
        out.setup.first_bad_link.as_deref(),
        Some(format!("127.0.0.1:{dead_port}").as_str())
    );
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn heartbeat_mode_batches_reports_and_restart_keeps_identity() -> anyhow::Result<()> {
    let options = DataNodeOptions {
        ibr_immediate: false,
        ..fast_options()
    };
    let mut c = Cluster::start(1, options.clone()).await?;
    let data = test_data(1000, 4);
    let b = block(6006, 2, 1000);
    write_block(c.dns[0].xfer_addr(), b.clone(), vec![], &data).await?;
    let uuid = c.dns[0].uuid().to_string();
    wait_until("report in a heartbeat", || {
        c.nn.received_by(&uuid, 6006).is_some()
    })
    .await?;
    assert_eq!(c.nn.received_by(&uuid, 6006).unwrap().1, "heartbeat");

    // Restart the node on the same directories.
    let dn = c.dns.pop().unwrap();
    c.dn_shutdowns[0].trigger();
    tokio::time::timeout(DEADLINE, dn.wait()).await?;
    let shutdown = Shutdown::new();
    let dn = c
        .start_datanode(c.dirs[0].path(), shutdown.clone(), options)
        .await?;
    assert_eq!(dn.uuid(), uuid);
    assert_eq!(dn.replica_count(), 1);
    assert!(read_block(dn.xfer_addr(), b, 0, 1000).await? == data);
    wait_until("block report after restart", || {
        c.nn.block_reports
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.datanode_uuid == uuid)
            .count()
            >= 2
    })
    .await?;
    let reports = c.nn.block_reports.lock().unwrap().clone();
    let last = reports
        .iter()
        .rev()
        .find(|r| r.datanode_uuid == uuid)
        .unwrap();
    assert_eq!(last.replicas.len(), 1);
    assert_eq!(last.replicas[0].num_bytes, 1000);
    c.dns.push(dn);
    c.dn_shutdowns[0] = shutdown;
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn garbage_on_the_data_port_does_not_kill_the_server() -> anyhow::Result<()> {
    let c = Cluster::start(1, fast_options()).await?;
    let addr = c.dns[0].xfer_addr();
    let attempts: Vec<Vec<u8>> = vec![
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        vec![0, 28, 99, 0],
        vec![0, 28, 81, 50, 1, 2, 3],
        vec![0, 28, 80, 3, 0xff, 0xff, 0xff],
    ];
    for bytes in attempts {
        let mut s = TcpStream::connect(addr).await?;
        s.write_all(&bytes).await?;
        s.shutdown().await?;
        let mut rest = Vec::new();
        // The server answers at most an error and closes.
        tokio::time::timeout(DEADLINE, s.read_to_end(&mut rest)).await??;
    }
    let data = test_data(5000, 8);
    let b = block(7007, 1, 5000);
    let out = write_block(addr, b.clone(), vec![], &data).await?;
    assert!(all_success(out.acks.last().unwrap(), 1));
    assert!(read_block(addr, b, 0, 5000).await? == data);
    c.stop().await;
    Ok(())
}

/// A fake downstream DataNode that accepts the write, takes one packet and dies.
async fn dying_downstream() -> anyhow::Result<DatanodeInfoProto> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut rd = BufReader::new(stream);
        let _op = tusk_datatransfer::read_op(&mut rd).await.unwrap();
        write_delimited(
            &mut rd,
            &BlockOpResponseProto {
                status: Status::Success as i32,
                first_bad_link: Some(String::new()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let mut packet = PacketBuf::new();
        packet.read_from(&mut rd).await.unwrap();
        // Dropping the stream closes it without an ack.
    });
    Ok(DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: "dying".into(),
            xfer_port: u32::from(port),
            info_port: 0,
            ipc_port: 0,
            info_secure_port: None,
        },
        ..Default::default()
    })
}

#[tokio::test]
async fn downstream_death_is_acked_then_pipeline_recovers() -> anyhow::Result<()> {
    let c = Cluster::start(1, fast_options()).await?;
    let data = test_data(MAX_PACKET_DATA * 2 + 100, 5);
    let b = block(8008, 1, data.len() as u64);
    let dying = dying_downstream().await?;
    let out = write_block(c.dns[0].xfer_addr(), b.clone(), vec![dying], &data).await?;
    assert_eq!(out.setup.status, Status::Success as i32);
    let bad = out.acks.last().context("an ack")?;
    assert_eq!(
        bad.reply,
        vec![Status::Success as i32, Status::Error as i32],
        "the ack names the downstream as failed"
    );
    wait_until("rbw replica kept", || {
        c.dns[0]
            .replicas()
            .iter()
            .any(|r| r.block_id == 8008 && r.state == tusk_datanode::ReplicaState::Rbw)
    })
    .await?;

    // Streaming recovery on the surviving node: new genstamp, resend from byte 0.
    let recovery = OpWriteBlockProto {
        header: header(b.clone()),
        pipeline_size: 1,
        stage: BlockConstructionStage::PipelineSetupStreamingRecovery as i32,
        min_bytes_rcvd: 0,
        max_bytes_rcvd: data.len() as u64,
        latest_generation_stamp: 2,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    let out = write_with_op(c.dns[0].xfer_addr(), recovery, &data).await?;
    assert_eq!(out.acks.len(), 4);
    assert!(out.acks.iter().all(|a| all_success(a, 1)));
    let uuid = c.dns[0].uuid().to_string();
    wait_until("recovered replica reported", || {
        c.nn.received
            .lock()
            .unwrap()
            .iter()
            .any(|(u, r, _)| *u == uuid && r.block_id == 8008 && r.generation_stamp == 2)
    })
    .await?;
    let b2 = block(8008, 2, data.len() as u64);
    assert!(read_block(c.dns[0].xfer_addr(), b2.clone(), 0, data.len() as u64).await? == data);

    // Close recovery of the finalized replica: genstamp bump, no data.
    let close = OpWriteBlockProto {
        header: header(b2.clone()),
        pipeline_size: 1,
        stage: BlockConstructionStage::PipelineCloseRecovery as i32,
        min_bytes_rcvd: data.len() as u64,
        max_bytes_rcvd: data.len() as u64,
        latest_generation_stamp: 3,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    let out = write_with_op(c.dns[0].xfer_addr(), close, &[]).await?;
    assert_eq!(out.setup.status, Status::Success as i32);
    wait_until("closed replica reported", || {
        c.nn.received.lock().unwrap().iter().any(|(u, r, _)| {
            *u == uuid && r.generation_stamp == 3 && r.num_bytes == data.len() as u64
        })
    })
    .await?;
    // Reads with the old genstamp fail, the new one works.
    assert!(read_block(c.dns[0].xfer_addr(), block(8008, 4, 0), 0, 10)
        .await
        .is_err());
    assert!(read_block(c.dns[0].xfer_addr(), block(8008, 3, 0), 0, 100).await? == data[..100]);
    c.stop().await;
    Ok(())
}

// ------------------------------------------------------------------ replica state checks

/// Asks `addr` to copy the first `len` bytes of its replica to `targets`.
async fn transfer_block(
    addr: SocketAddr,
    b: ExtendedBlockProto,
    targets: Vec<DatanodeInfoProto>,
) -> anyhow::Result<BlockOpResponseProto> {
    let stream = TcpStream::connect(addr).await?;
    let (rd, wr) = stream.into_split();
    let mut rd = BufReader::new(rd);
    let mut wr = BufWriter::new(wr);
    let op = OpTransferBlockProto {
        header: header(b),
        target_storage_types: vec![],
        target_storage_ids: vec![],
        targets,
    };
    write_op(&mut wr, Op::TransferBlock, &op).await?;
    Ok(read_delimited(&mut rd).await?)
}

/// Three finalized replicas of one block, written through a pipeline.
async fn three_replicas(c: &Cluster, id: u64, gs: u64, data: &[u8]) -> anyhow::Result<()> {
    let b = block(id, gs, data.len() as u64);
    let out = write_block(c.dns[0].xfer_addr(), b, vec![c.info(1), c.info(2)], data).await?;
    ensure!(all_success(out.acks.last().context("acks")?, 3));
    for dn in &c.dns {
        let uuid = dn.uuid().to_string();
        wait_until("finalized everywhere", || {
            c.nn.received_by(&uuid, id).is_some()
        })
        .await?;
    }
    Ok(())
}

/// Every node still holds the whole replica, finalized, readable with its checksums.
async fn replicas_intact(c: &Cluster, b: &ExtendedBlockProto, data: &[u8]) -> anyhow::Result<()> {
    for dn in &c.dns {
        let r = dn
            .replicas()
            .into_iter()
            .find(|r| r.block_id == b.block_id)
            .context("replica kept")?;
        ensure!(
            r.num_bytes == data.len() as u64 && r.state == tusk_datanode::ReplicaState::Finalized,
            "replica on {} changed: {r:?}",
            dn.uuid()
        );
        let path = dn.replica_path(b.block_id).context("replica file")?;
        ensure!(
            std::fs::read(path)? == data,
            "bytes on {} changed",
            dn.uuid()
        );
        let back = read_block(dn.xfer_addr(), b.clone(), 0, data.len() as u64).await?;
        ensure!(back == data, "replica on {} reads differently", dn.uuid());
    }
    Ok(())
}

/// The attack: raw recovery ops with a huge generation stamp against finalized
/// replicas. Before, close recovery truncated all three replicas to `minBytesRcvd`.
#[tokio::test]
async fn raw_recovery_ops_never_shorten_finalized_replicas() -> anyhow::Result<()> {
    let c = Cluster::start(3, fast_options()).await?;
    let data = test_data(MAX_PACKET_DATA * 3 + 777, 21);
    three_replicas(&c, 9009, 7, &data).await?;
    let b = block(9009, 7, data.len() as u64);
    let attack = |stage: BlockConstructionStage, min: u64, max: u64, targets| OpWriteBlockProto {
        header: header(b.clone()),
        pipeline_size: 3,
        targets,
        stage: stage as i32,
        min_bytes_rcvd: min,
        max_bytes_rcvd: max,
        latest_generation_stamp: u64::MAX / 2,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    let len = data.len() as u64;
    let attempts = [
        attack(
            BlockConstructionStage::PipelineCloseRecovery,
            0,
            0,
            vec![c.info(1), c.info(2)],
        ),
        attack(
            BlockConstructionStage::PipelineCloseRecovery,
            100,
            len,
            vec![c.info(1), c.info(2)],
        ),
        attack(
            BlockConstructionStage::PipelineSetupStreamingRecovery,
            0,
            len,
            vec![c.info(1), c.info(2)],
        ),
        attack(BlockConstructionStage::PipelineSetupCreate, 0, 0, vec![]),
        attack(BlockConstructionStage::PipelineSetupAppend, 0, 0, vec![]),
    ];
    for op in attempts {
        let stage = op.stage();
        for dn in &c.dns {
            let out = write_with_op(dn.xfer_addr(), op.clone(), &data[..1000]).await?;
            ensure!(
                out.setup.status != Status::Success as i32,
                "{stage:?} accepted by {}",
                dn.uuid()
            );
            ensure!(
                out.setup.message.as_deref().is_some_and(|m| !m.is_empty()),
                "{stage:?} refused without a message"
            );
        }
    }
    let exists = write_with_op(
        c.dns[0].xfer_addr(),
        attack(BlockConstructionStage::PipelineSetupCreate, 0, 0, vec![]),
        &[],
    )
    .await?;
    assert_eq!(
        exists.setup.status,
        Status::ErrorExists as i32,
        "ReplicaAlreadyExists"
    );
    replicas_intact(&c, &b, &data).await?;

    // The genuine close recovery (the replica's own length, a newer stamp) still works.
    let close = OpWriteBlockProto {
        header: header(b.clone()),
        pipeline_size: 1,
        stage: BlockConstructionStage::PipelineCloseRecovery as i32,
        min_bytes_rcvd: len,
        max_bytes_rcvd: len,
        latest_generation_stamp: 8,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    for dn in &c.dns {
        let out = write_with_op(dn.xfer_addr(), close.clone(), &[]).await?;
        assert_eq!(out.setup.status, Status::Success as i32, "{:?}", out.setup);
    }
    replicas_intact(&c, &block(9009, 8, len), &data).await?;
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn reads_check_block_pool_and_generation_stamp() -> anyhow::Result<()> {
    let c = Cluster::start(1, fast_options()).await?;
    let data = test_data(5000, 2);
    let addr = c.dns[0].xfer_addr();
    write_block(addr, block(9100, 5, 5000), vec![], &data).await?;
    wait_until("finalized", || c.dns[0].replica_count() == 1).await?;

    let mut other_pool = block(9100, 5, 5000);
    other_pool.pool_id = "BP-other".into();
    let err = read_block(addr, other_pool, 0, 100).await.unwrap_err();
    assert!(err.to_string().contains("BP-other"), "{err}");
    let newer = read_block(addr, block(9100, 6, 5000), 0, 100).await;
    assert!(
        newer.is_err(),
        "a generation stamp newer than the replica's is refused"
    );
    // A reader with an older stamp (a stale location) still gets the newer replica.
    assert_eq!(
        read_block(addr, block(9100, 4, 5000), 0, 100).await?,
        &data[..100]
    );

    let mut other_pool = block(9101, 1, 10);
    other_pool.pool_id = "BP-other".into();
    let out = write_block(addr, other_pool, vec![], &data[..10]).await?;
    assert_ne!(out.setup.status, Status::Success as i32);
    assert!(c.dns[0].replicas().iter().all(|r| r.block_id != 9101));
    c.stop().await;
    Ok(())
}

/// A writing client replaces a failed node: the survivor copies the acknowledged bytes
/// of its rbw replica to the new node, which keeps it rbw for the pipeline recovery.
#[tokio::test]
async fn transfer_block_hands_the_acknowledged_bytes_to_a_new_node() -> anyhow::Result<()> {
    let c = Cluster::start(2, fast_options()).await?;
    let data = test_data(MAX_PACKET_DATA * 2 + 100, 6);
    let b = block(9200, 1, data.len() as u64);
    let dying = dying_downstream().await?;
    let out = write_block(c.dns[0].xfer_addr(), b.clone(), vec![dying], &data).await?;
    assert_eq!(out.setup.status, Status::Success as i32);
    let acked = MAX_PACKET_DATA as u64;
    wait_until("rbw replica on the survivor", || {
        c.dns[0]
            .replicas()
            .iter()
            .any(|r| r.block_id == 9200 && r.num_bytes >= acked)
    })
    .await?;

    let mut asked = b.clone();
    asked.num_bytes = Some(acked);
    let refused =
        transfer_block(c.dns[0].xfer_addr(), block(9200, 2, acked), vec![c.info(1)]).await?;
    assert_ne!(
        refused.status,
        Status::Success as i32,
        "newer stamp than the replica's"
    );
    let resp = transfer_block(c.dns[0].xfer_addr(), asked, vec![c.info(1)]).await?;
    assert_eq!(resp.status, Status::Success as i32, "{resp:?}");
    let copy = c.dns[1]
        .replicas()
        .into_iter()
        .find(|r| r.block_id == 9200)
        .context("copy on the new node")?;
    assert_eq!(copy.num_bytes, acked);
    assert_eq!(copy.state, tusk_datanode::ReplicaState::Rbw);
    assert!(
        c.nn.received_by(c.dns[1].uuid(), 9200).is_none(),
        "rbw copies are not reported"
    );

    // The client's recovery then resumes both from the acknowledged length.
    let recovery = OpWriteBlockProto {
        header: header(b.clone()),
        pipeline_size: 2,
        targets: vec![c.info(1)],
        stage: BlockConstructionStage::PipelineSetupStreamingRecovery as i32,
        min_bytes_rcvd: acked,
        max_bytes_rcvd: data.len() as u64,
        latest_generation_stamp: 2,
        requested_checksum: DataChecksum::crc32c(512).to_proto(),
        ..Default::default()
    };
    let out = write_with_op(c.dns[0].xfer_addr(), recovery, &data).await?;
    assert!(out.acks.iter().all(|a| all_success(a, 2)), "{:?}", out.acks);
    for dn in &c.dns {
        let uuid = dn.uuid().to_string();
        wait_until("recovered replica reported", || {
            c.nn.received_by(&uuid, 9200).is_some()
        })
        .await?;
        let back = read_block(dn.xfer_addr(), block(9200, 2, 0), 0, data.len() as u64).await?;
        assert!(back == data, "replica on {uuid}");
    }
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn verify_command_answers_good_corrupt_and_missing() -> anyhow::Result<()> {
    let c = Cluster::start(1, fast_options()).await?;
    let addr = c.dns[0].xfer_addr();
    let data = test_data(100_000, 12);
    for id in [9300, 9301] {
        write_block(addr, block(id, 3, data.len() as u64), vec![], &data).await?;
    }
    wait_until("finalized", || c.dns[0].replica_count() == 2).await?;
    let path = c.dns[0].replica_path(9301).context("replica path")?;
    let mut bytes = std::fs::read(&path)?;
    bytes[99_999] ^= 0x80;
    std::fs::write(&path, bytes)?;

    let uuid = c.dns[0].uuid().to_string();
    c.nn.queue(
        &uuid,
        Command::Verify(VerifyCommand {
            block_ids: vec![9300, 9301, 9302],
        }),
    );
    wait_until("three verdicts", || {
        c.nn.verdicts.lock().unwrap().len() == 3
    })
    .await?;
    let verdicts: HashMap<u64, ReplicaVerdict> =
        c.nn.verdicts
            .lock()
            .unwrap()
            .iter()
            .map(|(_, v)| (v.block_id, *v))
            .collect();
    assert_eq!(verdicts[&9300].verdict(), Verdict::Good);
    assert_eq!(verdicts[&9300].num_bytes, 100_000);
    assert_eq!(verdicts[&9300].generation_stamp, 3);
    assert_eq!(verdicts[&9301].verdict(), Verdict::Corrupt);
    assert_eq!(verdicts[&9302].verdict(), Verdict::Missing);
    // Verifying deletes nothing.
    assert_eq!(c.dns[0].replica_count(), 2);
    c.stop().await;
    Ok(())
}

#[tokio::test]
async fn heartbeats_follow_the_interval_the_namenode_names_at_registration() -> anyhow::Result<()> {
    // The node's own period is far longer than the 100 ms the fake NameNode names.
    let options = DataNodeOptions {
        heartbeat_interval: Duration::from_secs(30),
        ..Default::default()
    };
    let c = Cluster::start(1, options).await?;
    let heartbeats = || c.nn.heartbeats.lock().unwrap().len();
    wait_until("a first heartbeat", || heartbeats() >= 1).await?;
    let first = tokio::time::Instant::now();
    let seen = heartbeats();
    wait_until("ten more heartbeats", || heartbeats() >= seen + 10).await?;
    // Ten periods of 100 ms: well under the node's own 30 s, and not faster than named.
    assert!(
        first.elapsed() >= Duration::from_millis(900),
        "ten heartbeats in {:?}",
        first.elapsed()
    );
    c.stop().await;
    Ok(())
}
