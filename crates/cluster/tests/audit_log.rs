//! The NameNode's audit log: one line per client operation in HDFS's format, with the
//! caller, its address, the paths and the resulting permission; refusals logged as
//! `allowed=false`; block traffic not logged; WebHDFS calls as `proto=webhdfs`.

use std::time::Duration;

use tusk_client::{ClientError, CreateOptions};
use tusk_cluster::{wait_for, MiniCluster};

#[tokio::test]
async fn client_operations_are_audited_as_hdfs_does() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("logs/hdfs-audit.log");
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.permissions.enabled", "true")
        .conf("tusk.namenode.audit.log", log.to_str().unwrap())
        .conf("dfs.namenode.audit.log.debug.cmdlist", "listStatus")
        .start()
        .await;
    let admin = cluster.client();
    let superuser = tusk_common::current_user();
    admin.mkdirs("/data", 0o755, true).await.unwrap();
    admin
        .write_file("/data/f", b"audited", CreateOptions::default())
        .await
        .unwrap();
    admin.rename("/data/f", "/data/g").await.unwrap();
    admin.list("/data").await.unwrap();
    assert_eq!(admin.read_file("/data/g").await.unwrap(), b"audited");
    let alice = cluster.client_with(|o| o.user = "alice".into());
    let refused = alice
        .write_file("/data/x", b"no", CreateOptions::default())
        .await;
    assert!(
        matches!(&refused, Err(ClientError::Remote(e)) if e.class.ends_with("AccessControlException")),
        "{refused:?}"
    );

    // WebHDFS calls are audited too, as `proto=webhdfs`, and a `doas` caller as a
    // proxy user.
    let web = reqwest::Client::new();
    let nn = cluster.namenode_http_addr();
    let mkdir = web
        .put(format!(
            "http://{nn}/webhdfs/v1/data/web?op=MKDIRS&user.name={superuser}"
        ))
        .send()
        .await
        .unwrap();
    assert!(mkdir.status().is_success(), "{mkdir:?}");
    let refused = web
        .put(format!(
            "http://{nn}/webhdfs/v1/data/g?op=RENAME&user.name=alice&destination=/data/h"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 403);
    let status = web
        .get(format!(
            "http://{nn}/webhdfs/v1/data/g?op=GETFILESTATUS&user.name=bob"
        ))
        .send()
        .await
        .unwrap();
    assert!(status.status().is_success(), "{status:?}");

    let lines = wait_for("the audit lines", Duration::from_secs(20), || {
        let log = log.clone();
        async move {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            (text.contains("ugi=alice (auth:SIMPLE)\tip=/127.0.0.1\tcmd=create")
                && text.contains("ugi=bob"))
            .then_some(text)
        }
    })
    .await
    .unwrap();
    let fields: Vec<&str> = lines
        .lines()
        .map(|l| l.split_once(" INFO FSNamesystem.audit: ").expect(l).1)
        .collect();
    let me = format!("ugi={superuser} (auth:SIMPLE)\tip=/127.0.0.1");
    for expected in [
        format!("allowed=true\t{me}\tcmd=mkdirs\tsrc=/data\tdst=null\tperm={superuser}:supergroup:rwxr-xr-x\tproto=rpc"),
        format!("allowed=true\t{me}\tcmd=create\tsrc=/data/f\tdst=null\tperm={superuser}:supergroup:rw-r--r--\tproto=rpc"),
        format!("allowed=true\t{me}\tcmd=rename\tsrc=/data/f\tdst=/data/g\tperm={superuser}:supergroup:rw-r--r--\tproto=rpc"),
        format!("allowed=true\t{me}\tcmd=open\tsrc=/data/g\tdst=null\tperm=null\tproto=rpc"),
        "allowed=false\tugi=alice (auth:SIMPLE)\tip=/127.0.0.1\tcmd=create\tsrc=/data/x\tdst=null\tperm=null\tproto=rpc".to_string(),
        format!("allowed=true\t{me}\tcmd=mkdirs\tsrc=/data/web\tdst=null\tperm={superuser}:supergroup:rwxr-xr-x\tproto=webhdfs"),
        "allowed=false\tugi=alice (auth:SIMPLE)\tip=/127.0.0.1\tcmd=rename\tsrc=/data/g\tdst=/data/h\tperm=null\tproto=webhdfs".to_string(),
        "allowed=true\tugi=bob (auth:SIMPLE)\tip=/127.0.0.1\tcmd=getfileinfo\tsrc=/data/g\tdst=null\tperm=null\tproto=webhdfs".to_string(),
    ] {
        assert!(fields.contains(&expected.as_str()), "{expected:?} not in {fields:#?}");
    }
    // Block and lease traffic is not audited, nor a command listed as debug-only.
    for cmd in ["addBlock", "complete", "renewLease", "listStatus"] {
        assert!(
            !fields.iter().any(|f| f.contains(&format!("cmd={cmd}\t"))),
            "{cmd} audited: {fields:#?}"
        );
    }
}

/// With `hadoop.caller.context.enabled` a caller's context ends its lines
/// (`callerContext=`, cut to `hadoop.caller.context.max.size`) and
/// `dfs.namenode.audit.log.token.tracking.id` adds `trackingId=null` for a caller
/// without a delegation token; a caller that sends no context gets no field.
#[tokio::test]
async fn caller_contexts_and_tracking_ids_are_logged_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hdfs-audit.log");
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("tusk.namenode.audit.log", log.to_str().unwrap())
        .conf("hadoop.caller.context.enabled", "true")
        .conf("hadoop.caller.context.max.size", "12")
        .conf("dfs.namenode.audit.log.token.tracking.id", "true")
        .start()
        .await;
    let tagged = cluster.client_with(|o| o.caller_context = Some("hive_query_0042_stage_3".into()));
    tagged.mkdirs("/tagged", 0o755, true).await.unwrap();
    let plain = cluster.client();
    plain.mkdirs("/plain", 0o755, true).await.unwrap();

    let text = wait_for("both lines", Duration::from_secs(20), || {
        let log = log.clone();
        async move {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            (text.contains("src=/tagged") && text.contains("src=/plain")).then_some(text)
        }
    })
    .await
    .unwrap();
    let line = |src: &str| {
        text.lines()
            .find(|l| l.contains(&format!("\tsrc={src}\t")))
            .unwrap()
            .to_string()
    };
    assert!(
        line("/tagged").ends_with("\ttrackingId=null\tproto=rpc\tcallerContext=hive_query_0"),
        "{}",
        line("/tagged")
    );
    assert!(
        line("/plain").ends_with("\ttrackingId=null\tproto=rpc"),
        "{}",
        line("/plain")
    );
}
