//! Hadoop 3.4.2's own RPC client against Tusk's SASL `TOKEN` auth: Hadoop's
//! ApplicationMasterProtocol client, holding an AMRMToken from Tusk's secret manager in a
//! token file Tusk wrote, authenticates (DIGEST-MD5) and is served as the attempt; the
//! same client without tokens is refused with Hadoop's AccessControlException, and with
//! a forged password with the DIGEST-MD5 SaslException; Hadoop's `Credentials` reads
//! Tusk's token file. And the other way: Tusk's client, with an AMRMToken Hadoop signed
//! (read from Hadoop's token file), authenticates to Hadoop's own RPC server of a
//! TOKEN-only ApplicationMasterProtocol and is served as the attempt.
//!
//! Needs Java and Hadoop's jars, so it is ignored by plain `cargo test`:
//! `scripts/hadoop-sasl.sh` compiles `scripts/hadoop-sasl/HadoopTokens.java` and runs it
//! with `HADOOP_SASL_CLASSPATH` set.

#[path = "support/amrm.rs"]
mod support_amrm;

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use support_amrm::serve_with_amrm_tokens;
use tokio::io::{AsyncBufReadExt, BufReader};
use tusk_proto::hadoop::yarn::{
    RegisterApplicationMasterRequestProto, RegisterApplicationMasterResponseProto,
};
use tusk_proto::protocol_names::HADOOP_APPLICATION_MASTER_PROTOCOL;
use tusk_rpc::{CallContext, CallOutcome, ConnectRetry, RpcClient, RpcClientOptions, RpcService};
use tusk_security::{AmrmTokenSecretManager, Credentials};

/// Answers `registerApplicationMaster` with an empty response and records who called.
struct Registrations {
    callers: Mutex<Vec<String>>,
}

impl RpcService for Registrations {
    fn protocol(&self) -> &'static str {
        HADOOP_APPLICATION_MASTER_PROTOCOL
    }

    fn call(self: Arc<Self>, ctx: CallContext, method: &str, _: Bytes) -> CallOutcome {
        assert_eq!(method, "registerApplicationMaster");
        self.callers.lock().unwrap().push(ctx.user.to_string());
        CallOutcome::Now(Ok(Bytes::new()))
    }

    fn requires_token(&self) -> bool {
        true
    }
}

/// `java` running `HadoopTokens` with `args`.
fn hadoop_tokens_command(args: &[&str]) -> Command {
    let classpath = std::env::var("HADOOP_SASL_CLASSPATH")
        .expect("HADOOP_SASL_CLASSPATH names the Java classpath (scripts/hadoop-sasl.sh sets it)");
    let mut command = Command::new("java");
    command
        .args([
            "-Djava.net.preferIPv4Stack=true",
            "-cp",
            &classpath,
            "HadoopTokens",
        ])
        .args(args);
    command
}

/// Runs `HadoopTokens` with `args`; its standard output.
fn hadoop_tokens(args: &[&str]) -> String {
    let out = hadoop_tokens_command(args).output().expect("java runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "HadoopTokens {args:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Java and Hadoop 3.4.2's jars: scripts/hadoop-sasl.sh runs it"]
async fn hadoops_am_client_authenticates_with_a_tusk_amrm_token() {
    let secrets = Arc::new(AmrmTokenSecretManager::new());
    let service = Arc::new(Registrations {
        callers: Mutex::new(Vec::new()),
    });
    let (addr, shutdown) = serve_with_amrm_tokens(vec![service.clone()], &secrets).await;
    let attempt = support_amrm::attempt();
    // Hadoop's AMRMTokenSelector picks the token whose service is the address dialled.
    let mut token = secrets.create_token(&attempt);
    token.service = addr.to_string();
    let mut creds = Credentials::new();
    creds.add_token(token.service.clone(), token);
    creds.add_secret("shuffle", b"job-secret".to_vec());
    let dir = std::env::temp_dir().join(format!("tusk-hadoop-sasl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("container_tokens");
    creds.write_file(&file).unwrap();
    let file = file.to_str().unwrap().to_string();

    let read = tokio::task::spawn_blocking({
        let file = file.clone();
        move || hadoop_tokens(&["read-credentials", &file])
    })
    .await
    .unwrap();
    assert!(
        read.contains(&format!(
            "kind=YARN_AM_RM_TOKEN service={addr} id=appAttemptId {{ application_id {{ id: 4 cluster_timestamp: 1700000000000 }} attemptId: 1 }}"
        )),
        "{read}"
    );
    assert!(
        read.contains("secret alias=shuffle value=job-secret"),
        "{read}"
    );

    let outcome = tokio::task::spawn_blocking({
        let addr = addr.to_string();
        move || hadoop_tokens(&["register", &addr, &file])
    })
    .await
    .unwrap();
    assert!(outcome.contains("TOKEN: registered"), "{outcome}");
    assert!(
        outcome.contains(
            "SIMPLE: org.apache.hadoop.security.AccessControlException: SIMPLE authentication is not enabled.  Available:[TOKEN]"
        ),
        "{outcome}"
    );
    assert!(
        outcome.contains(
            "FORGED: javax.security.sasl.SaslException: DIGEST-MD5: digest response format violation. Mismatched response."
        ),
        "{outcome}"
    );
    assert_eq!(
        *service.callers.lock().unwrap(),
        vec!["appattempt_1700000000000_0004_000001".to_string()]
    );
    std::fs::remove_dir_all(&dir).unwrap();
    shutdown.trigger();
}

#[tokio::test]
#[ignore = "needs Java and Hadoop 3.4.2's jars: scripts/hadoop-sasl.sh runs it"]
async fn tusks_client_authenticates_to_hadoops_server_with_a_hadoop_amrm_token() {
    let dir = std::env::temp_dir().join(format!("tusk-hadoop-ams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("amrm_token");
    let mut server =
        tokio::process::Command::from(hadoop_tokens_command(&["serve", file.to_str().unwrap()]))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("java runs");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    // The server prints its port once it listens and the token file is written.
    let port = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(port) = line.strip_prefix("port ") {
                return port.parse::<u16>().unwrap();
            }
        }
        panic!("Hadoop's server ended before naming its port");
    })
    .await
    .expect("Hadoop's server names its port within two minutes");

    let creds = Credentials::read_file(&file).unwrap();
    let token = creds
        .token("amrm")
        .expect("Hadoop wrote the AMRMToken")
        .clone();
    let am = RpcClient::new(
        format!("127.0.0.1:{port}"),
        RpcClientOptions {
            protocol: HADOOP_APPLICATION_MASTER_PROTOCOL.into(),
            connect_retry: ConnectRetry::NONE,
            token: Some(token.clone()),
            ..Default::default()
        },
    );
    let reply: RegisterApplicationMasterResponseProto = am
        .call(
            "registerApplicationMaster",
            &RegisterApplicationMasterRequestProto::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.queue(), "appattempt_1700000000000_0004_000001");

    let mut forged = token;
    forged.password = vec![0; 20].into();
    let refused = RpcClient::new(
        format!("127.0.0.1:{port}"),
        RpcClientOptions {
            protocol: HADOOP_APPLICATION_MASTER_PROTOCOL.into(),
            connect_retry: ConnectRetry::NONE,
            token: Some(forged),
            ..Default::default()
        },
    );
    let err = refused
        .call::<_, RegisterApplicationMasterResponseProto>(
            "registerApplicationMaster",
            &RegisterApplicationMasterRequestProto::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.java_class(),
        Some("javax.security.sasl.SaslException"),
        "{err}"
    );

    drop(server.stdin.take());
    tokio::time::timeout(Duration::from_secs(60), server.wait())
        .await
        .expect("Hadoop's server stops when its input closes")
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
