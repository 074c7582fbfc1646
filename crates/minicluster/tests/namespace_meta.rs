//! ACLs, extended attributes, quotas and storage policies against a MiniCluster: what
//! they allow and refuse, with Hadoop's exception classes, and that each survives a
//! NameNode restart both by edit-log replay (after a kill) and from the image.

use tusk_client::meta::{AclEntryProto, AclScope, AclType};
use tusk_client::{ClientError, DfsClient};
use tusk_minicluster::MiniCluster;

fn entry(scope: AclScope, kind: AclType, name: Option<&str>, perm: i32) -> AclEntryProto {
    AclEntryProto {
        r#type: kind as i32,
        scope: scope as i32,
        permissions: perm,
        name: name.map(str::to_string),
    }
}

fn user_client(cluster: &MiniCluster, user: &str) -> DfsClient {
    let user = user.to_string();
    cluster.client_with(move |o| o.user = user)
}

fn class(e: &ClientError) -> &str {
    e.remote_class().unwrap_or("(not remote)")
}

/// Restarts the NameNode twice: after a kill (the edits replay), then cleanly (the
/// image written at start-up loads).
async fn restart_both_ways(cluster: &mut MiniCluster) {
    cluster.kill_namenode();
    cluster
        .start_namenode_again()
        .await
        .expect("restart after kill");
    cluster.restart_namenode().await.expect("clean restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_grant_and_refuse_as_hdfs_and_survive_restarts() {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .conf(
            "hadoop.user.group.static.mapping.overrides",
            "alice=staff;bob=;carol=dev;eve=",
        )
        .build()
        .await
        .expect("cluster starts");
    let admin = cluster.client();
    admin.mkdirs("/proj", 0o755, true).await.unwrap();
    admin
        .set_owner("/proj", Some("alice"), Some("staff"))
        .await
        .unwrap();
    let alice = user_client(&cluster, "alice");
    alice.set_permission("/proj", 0o750).await.unwrap();
    let bob = user_client(&cluster, "bob");
    let carol = user_client(&cluster, "carol");
    let eve = user_client(&cluster, "eve");
    let denied = bob.list("/proj").await.unwrap_err();
    assert_eq!(class(&denied), "AccessControlException");

    // Only the owner (or the superuser) changes an ACL.
    let spec = vec![entry(AclScope::Access, AclType::User, Some("bob"), 5)];
    let not_owner = bob
        .modify_acl_entries("/proj", spec.clone())
        .await
        .unwrap_err();
    assert_eq!(class(&not_owner), "AccessControlException");
    alice.modify_acl_entries("/proj", spec).await.unwrap();
    assert!(
        bob.list("/proj").await.is_ok(),
        "the named user entry grants r-x"
    );
    assert!(
        eve.list("/proj").await.is_err(),
        "others still have nothing"
    );
    let status = admin.stat("/proj").await.unwrap();
    assert!(status.has_acl, "the ACL bit is set");
    assert_eq!(status.permission, 0o750, "the group bits hold the mask r-x");

    // A default ACL: new children inherit it, filtered by their mode.
    alice
        .modify_acl_entries(
            "/proj",
            vec![
                entry(AclScope::Access, AclType::Group, Some("dev"), 5),
                entry(AclScope::Default, AclType::Group, Some("dev"), 7),
                entry(AclScope::Default, AclType::Other, None, 0),
            ],
        )
        .await
        .unwrap();
    alice
        .write_file("/proj/data", b"secret", Default::default())
        .await
        .unwrap();
    let child = alice.acl_status("/proj/data").await.unwrap();
    let named: Vec<String> = child
        .entries
        .iter()
        .filter_map(|e| e.name.clone())
        .collect();
    assert_eq!(named, vec!["dev"], "the file took the default named group");
    assert_eq!(carol.read_file("/proj/data").await.unwrap(), b"secret");
    let masked = carol
        .write_file("/proj/other", b"x", Default::default())
        .await
        .unwrap_err();
    assert_eq!(
        class(&masked),
        "AccessControlException",
        "dev has no w on /proj"
    );

    // The mask limits a named entry: rwx for dev, but the mask allows r-- only.
    alice
        .modify_acl_entries(
            "/proj/data",
            vec![entry(AclScope::Access, AclType::Mask, None, 4)],
        )
        .await
        .unwrap();
    assert!(carol.read_file("/proj/data").await.is_ok());
    let cut = carol
        .set_times("/proj/data", 1, u64::MAX)
        .await
        .unwrap_err();
    assert_eq!(class(&cut), "AccessControlException", "the mask cuts w");

    // Hadoop's AclException for an invalid change.
    let invalid = alice
        .modify_acl_entries(
            "/proj/data",
            vec![entry(AclScope::Default, AclType::User, Some("bob"), 7)],
        )
        .await
        .unwrap_err();
    assert_eq!(class(&invalid), "AclException");

    let before = admin.acl_status("/proj").await.unwrap();
    restart_both_ways(&mut cluster).await;
    let admin = cluster.client();
    assert_eq!(admin.acl_status("/proj").await.unwrap(), before);
    assert!(user_client(&cluster, "bob").list("/proj").await.is_ok());
    assert!(user_client(&cluster, "eve").list("/proj").await.is_err());

    // removeAcl gives the group its own bits back.
    admin.remove_acl("/proj").await.unwrap();
    let plain = admin.stat("/proj").await.unwrap();
    assert!(!plain.has_acl);
    assert_eq!(plain.permission, 0o750);
    assert!(user_client(&cluster, "bob").list("/proj").await.is_err());
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_can_be_switched_off() {
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .conf("dfs.namenode.acls.enabled", "false")
        .build()
        .await
        .expect("cluster starts");
    let client = cluster.client();
    client.mkdirs("/d", 0o755, true).await.unwrap();
    let e = client.acl_status("/d").await.unwrap_err();
    assert_eq!(class(&e), "AclException");
    assert!(e.to_string().contains("dfs.namenode.acls.enabled"), "{e}");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdfs_native_acl_calls() {
    use hdfs_native::acl::{AclEntry, AclEntryScope, AclEntryType, FsAction};
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .build()
        .await
        .expect("cluster starts");
    let native = hdfs_native::Client::new(&cluster.fs_uri()).expect("client");
    native.mkdirs("/n", 0o755, true).await.unwrap();
    let bob = AclEntry::new(
        AclEntryType::User,
        AclEntryScope::Access,
        FsAction::ReadExecute,
        Some("bob".to_string()),
    );
    native
        .modify_acl_entries("/n", vec![bob.clone()])
        .await
        .unwrap();
    let status = native.get_acl_status("/n").await.unwrap();
    assert!(status.entries.contains(&bob), "{:?}", status.entries);
    let default = AclEntry::new(
        AclEntryType::User,
        AclEntryScope::Default,
        FsAction::Read,
        Some("eve".to_string()),
    );
    native
        .modify_acl_entries("/n", vec![default])
        .await
        .unwrap();
    assert_eq!(native.get_acl_status("/n").await.unwrap().entries.len(), 7);
    native.remove_default_acl("/n").await.unwrap();
    assert_eq!(native.get_acl_status("/n").await.unwrap().entries.len(), 2);
    native.remove_acl_entries("/n", vec![bob]).await.unwrap();
    native.remove_acl("/n").await.unwrap();
    assert!(native
        .get_acl_status("/n")
        .await
        .unwrap()
        .entries
        .is_empty());
    let set = vec![
        AclEntry::new(
            AclEntryType::User,
            AclEntryScope::Access,
            FsAction::PermAll,
            None,
        ),
        AclEntry::new(
            AclEntryType::Group,
            AclEntryScope::Access,
            FsAction::Read,
            None,
        ),
        AclEntry::new(
            AclEntryType::Other,
            AclEntryScope::Access,
            FsAction::None,
            None,
        ),
        AclEntry::new(
            AclEntryType::Group,
            AclEntryScope::Access,
            FsAction::ReadWrite,
            Some("dev".to_string()),
        ),
    ];
    native.set_acl("/n", set).await.unwrap();
    let info = native.get_file_info("/n").await.unwrap();
    assert_eq!(info.permission & 0o777, 0o760, "mask rw- in the group bits");
    cluster.shutdown().await;
}
