//! A [`DfsClient`] of an HA nameservice, built from the configuration as the CLI builds
//! it: its calls pass over a NameNode that is down and one that is standby to reach the
//! active one, and stay there.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use tokio::net::TcpListener;
use tusk_client::{ClientOptions, DfsClient, HadoopException};
use tusk_common::{Configuration, Shutdown};
use tusk_proto::hdfs as h;
use tusk_rpc::{CallContext, CallOutcome, RemoteException, RpcServer, RpcService};

/// A NameNode that answers `getFileInfo` (nothing there) and `mkdirs`, or refuses
/// every call as a standby.
struct FakeNameNode {
    standby: bool,
    calls: AtomicU32,
}

impl RpcService for FakeNameNode {
    fn protocol(&self) -> &'static str {
        tusk_proto::protocol_names::CLIENT_PROTOCOL
    }

    fn call(self: Arc<Self>, _: CallContext, method: &str, _: Bytes) -> CallOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let reply = match (self.standby, method) {
            (true, _) => Err(RemoteException::of(
                HadoopException::Standby,
                "Operation category READ is not supported in state standby",
            )),
            (false, "getFileInfo") => Ok(h::GetFileInfoResponseProto::default().encode_to_vec()),
            (false, "mkdirs") => Ok(h::MkdirsResponseProto { result: true }.encode_to_vec()),
            (false, other) => Err(tusk_rpc::service::no_such_method("fake", other)),
        };
        CallOutcome::Now(reply.map(Bytes::from))
    }
}

async fn start(standby: bool, shutdown: &Shutdown) -> (Arc<FakeNameNode>, String) {
    let fake = Arc::new(FakeNameNode {
        standby,
        calls: AtomicU32::new(0),
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(RpcServer::new(vec![fake.clone()]).serve(listener, shutdown.clone()));
    (fake, addr)
}

#[tokio::test]
async fn calls_reach_the_active_namenode_of_the_nameservice_and_stay_there() {
    let shutdown = Shutdown::new();
    let down = {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap().to_string()
    };
    let (standby, standby_addr) = start(true, &shutdown).await;
    let (active, active_addr) = start(false, &shutdown).await;
    let mut conf = Configuration::new();
    for (key, value) in [
        ("fs.defaultFS", "hdfs://ns1"),
        ("dfs.nameservices", "ns1"),
        ("dfs.ha.namenodes.ns1", "nn1,nn2,nn3"),
        ("dfs.namenode.rpc-address.ns1.nn1", &down),
        ("dfs.namenode.rpc-address.ns1.nn2", &standby_addr),
        ("dfs.namenode.rpc-address.ns1.nn3", &active_addr),
        ("dfs.client.failover.sleep.base.millis", "1"),
        ("dfs.client.failover.sleep.max.millis", "5"),
    ] {
        conf.set(key, value);
    }
    let options = ClientOptions::from_conf(&conf).unwrap();
    assert_eq!(
        options.namenode, "ns1",
        "paths are qualified as hdfs://ns1/..."
    );
    assert_eq!(options.token_service(), "ha-hdfs:ns1");
    let client = DfsClient::new(options);

    assert!(client.get_file_info("/nothing").await.unwrap().is_none());
    assert_eq!(client.active_namenode(), active_addr);
    assert_eq!(standby.calls.load(Ordering::SeqCst), 1);
    assert_eq!(active.calls.load(Ordering::SeqCst), 1);

    assert!(client.mkdirs("/a", 0o755, true).await.unwrap());
    assert_eq!(
        standby.calls.load(Ordering::SeqCst),
        1,
        "the next call goes straight to the active NameNode"
    );
    assert_eq!(active.calls.load(Ordering::SeqCst), 2);
    shutdown.trigger();
}
