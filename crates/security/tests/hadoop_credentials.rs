//! Token storage written by Hadoop 3.4.2 itself reads as Tusk's [`Credentials`], and
//! Tusk writes the same content to the same bytes.
//!
//! `data/hadoop-3.4.2.creds` was written once by `scripts/hadoop-sasl/HadoopTokens.java
//! write-credentials` (Hadoop's `Credentials.writeTokenStorageToStream`, its default
//! layout) against hadoop-common and hadoop-yarn-common 3.4.2: an AMRMToken for
//! `appattempt_1700000000000_0004_000001` with key id 17 under alias `amrm`, an NMToken
//! for the same attempt on `nm1:8041` (submitter `alice`, key id 23) under its service,
//! and the secret key `shuffle`. `scripts/hadoop-sasl.sh` also has Hadoop read what Tusk
//! writes.

use prost::Message;
use tusk_proto::common::TokenProto;
use tusk_proto::hadoop::yarn::{
    AmrmTokenIdentifierProto, ApplicationAttemptIdProto, ApplicationIdProto,
    NmTokenIdentifierProto, NodeIdProto,
};
use tusk_security::yarn_tokens::{attempt_id_string, AMRM_TOKEN_KIND, NM_TOKEN_KIND};
use tusk_security::Credentials;

const HADOOP_WRITTEN: &[u8] = include_bytes!("data/hadoop-3.4.2.creds");

fn attempt() -> ApplicationAttemptIdProto {
    ApplicationAttemptIdProto {
        application_id: Some(ApplicationIdProto {
            id: Some(4),
            cluster_timestamp: Some(1_700_000_000_000),
        }),
        attempt_id: Some(1),
    }
}

/// The content Hadoop wrote, built by Tusk.
fn same_content() -> Credentials {
    let mut creds = Credentials::new();
    let amrm = AmrmTokenIdentifierProto {
        app_attempt_id: Some(attempt()),
        key_id: Some(17),
    };
    creds.add_token(
        "amrm",
        TokenProto {
            identifier: amrm.encode_to_vec().into(),
            password: b"amrm-password".to_vec().into(),
            kind: AMRM_TOKEN_KIND.into(),
            service: "127.0.0.1:8030".into(),
        },
    );
    let nm = NmTokenIdentifierProto {
        app_attempt_id: Some(attempt()),
        node_id: Some(NodeIdProto {
            host: Some("nm1".into()),
            port: Some(8041),
        }),
        app_submitter: Some("alice".into()),
        key_id: Some(23),
    };
    creds.add_token(
        "nm1:8041",
        TokenProto {
            identifier: nm.encode_to_vec().into(),
            password: b"nm-password".to_vec().into(),
            kind: NM_TOKEN_KIND.into(),
            service: "nm1:8041".into(),
        },
    );
    creds.add_secret("shuffle", b"job-secret".to_vec());
    creds
}

#[test]
fn hadoops_token_storage_reads_back_its_tokens() {
    let creds = Credentials::decode(HADOOP_WRITTEN).unwrap();
    let amrm = creds.token("amrm").unwrap();
    assert_eq!(amrm.kind, AMRM_TOKEN_KIND);
    assert_eq!(amrm.service, "127.0.0.1:8030");
    assert_eq!(amrm.password.as_ref(), b"amrm-password");
    let id = AmrmTokenIdentifierProto::decode(amrm.identifier.as_ref()).unwrap();
    assert_eq!(
        attempt_id_string(&id.app_attempt_id.unwrap()),
        "appattempt_1700000000000_0004_000001"
    );
    assert_eq!(id.key_id(), 17);

    let nm = creds.tokens_of_kind(NM_TOKEN_KIND).next().unwrap();
    let id = NmTokenIdentifierProto::decode(nm.identifier.as_ref()).unwrap();
    assert_eq!(id.app_submitter(), "alice");
    assert_eq!(id.node_id.as_ref().unwrap().port(), 8041);
    assert_eq!(id.key_id(), 23);
    assert_eq!(creds.secret("shuffle"), Some(&b"job-secret"[..]));
}

#[test]
fn tusk_writes_what_hadoop_writes() {
    let creds = same_content();
    assert_eq!(Credentials::decode(HADOOP_WRITTEN).unwrap(), creds);
    assert_eq!(creds.encode(), HADOOP_WRITTEN);
}
