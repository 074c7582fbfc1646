//! Delegation tokens on a NameNode with Kerberos configured: issued to a ticket holder
//! only, renewed by their renewer only, refused once cancelled, and still valid after a
//! restart (from the edit log, and from an image after a checkpoint); none under SIMPLE.

use std::path::PathBuf;

use tusk_namenode::namesystem::TokenCaller;
use tusk_namenode::{NameNodeError, NameNodeOptions, Namesystem};
use tusk_rpc::auth::ServiceIdentity;
use tusk_security::kerberos::AuthToLocal;
use tusk_security::Protection;

fn options(dir: PathBuf, kerberos: bool) -> NameNodeOptions {
    NameNodeOptions {
        name_dirs: vec![dir],
        permissions_enabled: false,
        kerberos: kerberos.then(|| ServiceIdentity {
            principal: "nn/_HOST@TUSK.TEST".into(),
            keytab: "/nonexistent/nn.keytab".into(),
            protection: vec![Protection::Authentication],
            auth_to_local: AuthToLocal::parse("DEFAULT").unwrap(),
        }),
        ..Default::default()
    }
}

const ALICE: TokenCaller<'static> = TokenCaller {
    user: "alice",
    principal: Some("alice@TUSK.TEST"),
    proxied: false,
};

fn now() -> i64 {
    tusk_common::now_millis() as i64
}

#[tokio::test]
async fn tokens_are_issued_renewed_cancelled_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path().join("name"), true);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts.clone()).unwrap();

    let kept = fsn
        .get_delegation_token(ALICE, "yarn/rm@TUSK.TEST", now())
        .unwrap();
    let kept = fsn
        .durable(kept)
        .await
        .unwrap()
        .expect("a token under Kerberos");
    assert_eq!(kept.kind, "HDFS_DELEGATION_TOKEN");
    let id = tusk_security::DelegationTokenIdentifier::parse(&kept.identifier).unwrap();
    assert_eq!(
        (id.owner.as_str(), id.renewer.as_str()),
        ("alice@TUSK.TEST", "yarn"),
        "owner by principal, renewer by short name"
    );
    let gone = fsn.get_delegation_token(ALICE, "yarn", now()).unwrap();
    let gone = fsn.durable(gone).await.unwrap().unwrap();

    // A token does not beget a token; only the renewer renews.
    let by_token = TokenCaller {
        principal: None,
        ..ALICE
    };
    let refused = fsn
        .get_delegation_token(by_token, "yarn", now())
        .unwrap_err();
    assert!(
        refused.to_string().contains("only with kerberos"),
        "{refused}"
    );
    let not_renewer = fsn.renew_delegation_token(ALICE, &kept, now()).unwrap_err();
    assert!(
        matches!(not_renewer, NameNodeError::PermissionDenied { .. }),
        "{not_renewer}"
    );
    let yarn = TokenCaller {
        user: "yarn",
        principal: Some("yarn/rm@TUSK.TEST"),
        proxied: false,
    };
    let renewed = fsn.renew_delegation_token(yarn, &kept, now()).unwrap();
    assert!(fsn.durable(renewed).await.unwrap() > now());

    // Cancelled: the SASL check refuses it.
    let cancelled = fsn.cancel_delegation_token(ALICE, &gone).unwrap();
    fsn.durable(cancelled).await.unwrap();
    let check = |fsn: &Namesystem, token: &tusk_proto::common::TokenProto| {
        fsn.read()
            .delegation_tokens
            .verify(&token.identifier, now())
    };
    assert_eq!(check(&fsn, &kept).unwrap().password, kept.password.to_vec());
    assert!(check(&fsn, &gone).is_err());

    // A restart replays the edit log.
    drop(fsn);
    let fsn = Namesystem::load(opts.clone()).unwrap();
    assert_eq!(check(&fsn, &kept).unwrap().user, "alice@TUSK.TEST");
    assert!(check(&fsn, &gone).is_err());

    // And after a checkpoint, the image holds them.
    fsn.checkpoint().unwrap();
    drop(fsn);
    let fsn = Namesystem::load(opts).unwrap();
    assert!(check(&fsn, &kept).is_ok());
    assert!(check(&fsn, &gone).is_err());
    // Sequence numbers go on from where they were.
    let next = fsn
        .get_delegation_token(ALICE, "yarn", now())
        .unwrap()
        .value
        .unwrap();
    let next_id = tusk_security::DelegationTokenIdentifier::parse(&next.identifier).unwrap();
    assert!(next_id.sequence_number > id.sequence_number + 1);
}

#[tokio::test]
async fn no_token_without_kerberos() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(dir.path().join("name"), false);
    Namesystem::format(&opts).unwrap();
    let fsn = Namesystem::load(opts).unwrap();
    let answer = fsn.get_delegation_token(ALICE, "yarn", now()).unwrap();
    assert!(answer.value.is_none());
}
