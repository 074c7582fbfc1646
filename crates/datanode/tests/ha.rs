//! A DataNode of an HA nameservice against fake NameNodes: it registers with, reports
//! to and queues replica events for every NameNode (one that is down gets them when it
//! comes up), and runs commands only from the active NameNode of the highest term.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tusk_common::Shutdown;
use tusk_datanode::{DataNode, DataNodeHandle, DataNodeOptions};
use tusk_proto::internal::{datanode_command::Command, HaServiceState, InvalidateCommand};

#[path = "support/data_transfer.rs"]
mod data_transfer;
#[path = "support/fake_namenode.rs"]
mod fake_namenode;

use data_transfer::{block, test_data, write_block};
use fake_namenode::FakeNameNode;
use HaServiceState::{HaActive, HaStandby};

const DEADLINE: Duration = Duration::from_secs(20);

/// Fake NameNodes, a DataNode reporting to all of them, and what to stop at the end.
struct Nameservice {
    namenodes: Vec<Arc<FakeNameNode>>,
    addrs: Vec<SocketAddr>,
    shutdown: Shutdown,
    dn: Option<DataNodeHandle>,
    dir: tempfile::TempDir,
}

impl Nameservice {
    /// `n` fake NameNodes, the first `serving` of them answering at once (the others'
    /// ports reserved for [`Nameservice::bring_up`]).
    async fn new(n: usize, serving: usize) -> anyhow::Result<Nameservice> {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_env("TUSK_LOG"))
            .with_test_writer()
            .try_init();
        let shutdown = Shutdown::new();
        let mut namenodes = Vec::new();
        let mut addrs = Vec::new();
        for i in 0..n {
            let nn = Arc::new(FakeNameNode::default());
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            addrs.push(listener.local_addr()?);
            if i < serving {
                nn.serve(listener, shutdown.clone());
            }
            namenodes.push(nn);
        }
        Ok(Nameservice {
            namenodes,
            addrs,
            shutdown,
            dn: None,
            dir: tempfile::tempdir()?,
        })
    }

    /// Starts the DataNode; it returns once one NameNode has registered it.
    async fn start_datanode(&mut self) -> anyhow::Result<()> {
        let options = DataNodeOptions {
            data_dirs: vec![self.dir.path().join("d1")],
            namenode_addrs: self.addrs.iter().map(SocketAddr::to_string).collect(),
            heartbeat_interval: Duration::from_millis(100),
            ..Default::default()
        };
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        self.dn = Some(DataNode::start(options, listener, self.shutdown.clone()).await?);
        Ok(())
    }

    /// Starts serving NameNode `i`, down until now, on the port it was given.
    async fn bring_up(&self, i: usize) -> anyhow::Result<()> {
        let listener = TcpListener::bind(self.addrs[i]).await?;
        self.namenodes[i].serve(listener, self.shutdown.clone());
        Ok(())
    }

    fn dn(&self) -> &DataNodeHandle {
        self.dn.as_ref().expect("DataNode started")
    }

    fn uuid(&self) -> String {
        self.dn().uuid().to_string()
    }

    /// Writes a 10 000-byte replica of `block_id` to the DataNode.
    async fn write(&self, block_id: u64) -> anyhow::Result<()> {
        let data = test_data(10_000, block_id as u8);
        let b = block(block_id, 1, data.len() as u64);
        write_block(self.dn().xfer_addr(), b, vec![], &data).await?;
        Ok(())
    }

    fn holds(&self, block_id: u64) -> bool {
        self.dn().replicas().iter().any(|r| r.block_id == block_id)
    }

    /// Queues on NameNode `i` the deletion of `block_id`'s replica.
    fn invalidate_from(&self, i: usize, block_id: u64) {
        self.namenodes[i].queue(
            &self.uuid(),
            Command::Invalidate(InvalidateCommand {
                block_ids: vec![block_id],
                stale: vec![],
            }),
        );
    }

    /// Waits until NameNode `i` handed out its queued commands with a heartbeat and
    /// answered two more, by when the DataNode would have run them.
    async fn commands_delivered(&self, i: usize) -> anyhow::Result<()> {
        let nn = &self.namenodes[i];
        let uuid = self.uuid();
        wait_until("commands delivered", || {
            !nn.commands.lock().unwrap().contains_key(&uuid)
        })
        .await?;
        let seen = nn.heartbeats.lock().unwrap().len();
        wait_until("two more heartbeats", || {
            nn.heartbeats.lock().unwrap().len() >= seen + 2
        })
        .await
    }

    fn deleted_at(&self, i: usize, block_id: u64) -> bool {
        self.namenodes[i]
            .deleted
            .lock()
            .unwrap()
            .contains(&(self.uuid(), block_id))
    }

    fn reported_at(&self, i: usize, block_id: u64) -> bool {
        self.namenodes[i]
            .block_reports
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.replicas.iter().any(|b| b.block_id == block_id))
    }

    fn heartbeats_at(&self, i: usize) -> usize {
        self.namenodes[i].heartbeats.lock().unwrap().len()
    }

    async fn stop(mut self) {
        self.shutdown.trigger();
        if let Some(dn) = self.dn.take() {
            tokio::time::timeout(DEADLINE, dn.wait())
                .await
                .expect("DataNode stops");
        }
    }
}

async fn wait_until(what: &str, mut check: impl FnMut() -> bool) -> anyhow::Result<()> {
    tusk_common::wait::wait_for(what, DEADLINE, || std::future::ready(check())).await?;
    Ok(())
}

#[tokio::test]
async fn every_namenode_hears_everything_and_only_the_active_is_obeyed() -> anyhow::Result<()> {
    let mut ns = Nameservice::new(2, 2).await?;
    ns.namenodes[0].set_ha(HaActive, 2);
    ns.namenodes[1].set_ha(HaStandby, 2);
    ns.start_datanode().await?;
    let uuid = ns.uuid();
    for nn in &ns.namenodes {
        wait_until("registered and fully reported", || {
            !nn.registrations.lock().unwrap().is_empty()
                && !nn.block_reports.lock().unwrap().is_empty()
        })
        .await?;
    }

    ns.write(5001).await?;
    for nn in &ns.namenodes {
        wait_until("the new replica reported", || {
            nn.received_by(&uuid, 5001).is_some()
        })
        .await?;
    }

    ns.invalidate_from(1, 5001);
    ns.commands_delivered(1).await?;
    assert!(ns.holds(5001), "a standby's command is not run");
    assert!(!ns.deleted_at(1, 5001));

    ns.invalidate_from(0, 5001);
    wait_until("the active's deletion reported to both", || {
        ns.deleted_at(0, 5001) && ns.deleted_at(1, 5001)
    })
    .await?;
    assert!(!ns.holds(5001));
    ns.stop().await;
    Ok(())
}

#[tokio::test]
async fn a_namenode_down_at_first_gets_the_events_it_missed() -> anyhow::Result<()> {
    let mut ns = Nameservice::new(2, 1).await?;
    ns.namenodes[0].set_ha(HaActive, 1);
    ns.namenodes[1].set_ha(HaStandby, 1);
    ns.start_datanode().await?;
    let uuid = ns.uuid();

    ns.write(6001).await?;
    ns.write(6002).await?;
    ns.invalidate_from(0, 6002);
    wait_until("the deletion reported to the NameNode up", || {
        ns.deleted_at(0, 6002)
    })
    .await?;
    assert!(ns.namenodes[1].registrations.lock().unwrap().is_empty());

    ns.bring_up(1).await?;
    let late = &ns.namenodes[1];
    wait_until("the late NameNode told of both events", || {
        late.received_by(&uuid, 6001).is_some() && ns.deleted_at(1, 6002)
    })
    .await?;
    assert_eq!(late.registrations.lock().unwrap().len(), 1);
    wait_until("the late NameNode's full report", || {
        ns.reported_at(1, 6001)
    })
    .await?;
    assert!(
        !ns.reported_at(1, 6002),
        "a deleted replica is not reported"
    );
    ns.stop().await;
    Ok(())
}

#[tokio::test]
async fn an_active_of_an_older_term_is_fenced() -> anyhow::Result<()> {
    let mut ns = Nameservice::new(2, 2).await?;
    ns.namenodes[0].set_ha(HaActive, 3);
    ns.namenodes[1].set_ha(HaStandby, 3);
    ns.start_datanode().await?;
    ns.write(7001).await?;
    // The DataNode has seen the term-3 active before the other NameNode claims term 2.
    let seen = ns.heartbeats_at(0);
    wait_until("a heartbeat of the term-3 active", || {
        ns.heartbeats_at(0) > seen
    })
    .await?;
    ns.namenodes[1].set_ha(HaActive, 2);

    ns.invalidate_from(1, 7001);
    ns.commands_delivered(1).await?;
    assert!(ns.holds(7001), "an active of an older term is not obeyed");

    // It wins term 4: now it is obeyed, and the term-3 one is not.
    ns.namenodes[1].set_ha(HaActive, 4);
    ns.commands_delivered(1).await?;
    ns.invalidate_from(0, 7001);
    ns.commands_delivered(0).await?;
    assert!(ns.holds(7001), "the deposed active is not obeyed");
    ns.invalidate_from(1, 7001);
    wait_until("the new active's deletion", || !ns.holds(7001)).await?;
    ns.stop().await;
    Ok(())
}
