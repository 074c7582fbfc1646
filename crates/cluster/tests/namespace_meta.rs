//! ACLs, extended attributes, quotas and storage policies against a MiniCluster: what
//! they allow and refuse, with Hadoop's exception classes, and that each survives a
//! NameNode restart both by edit-log replay (after a kill) and from the image.

use tusk_client::meta::{AclEntryProto, AclScope, AclType};
use tusk_client::{ClientError, CreateOptions, DfsClient};
use tusk_cluster::MiniCluster;

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
        .start()
        .await;
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
    let cluster = MiniCluster::builder().datanodes(0).start().await;
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

    // Quotas as hdfs-native's content summary reads them.
    let tusk = cluster.client();
    tusk.set_quota("/n", 100, 1 << 30, None).await.unwrap();
    native.mkdirs("/n/sub", 0o755, true).await.unwrap();
    let summary = native.get_content_summary("/n").await.unwrap();
    assert_eq!((summary.quota, summary.space_quota), (100, 1 << 30));
    assert_eq!(summary.directory_count, 2);
    cluster.shutdown().await;
}

fn xattr(ns: i32, name: &str, value: Option<&[u8]>) -> tusk_client::meta::XAttrProto {
    tusk_client::meta::XAttrProto {
        namespace: ns,
        name: name.into(),
        value: value.map(|v| v.to_vec().into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xattrs_follow_hdfs_rules_and_survive_restarts() {
    use tusk_client::meta::{XATTR_CREATE, XATTR_REPLACE};
    const USER: i32 = 0;
    const TRUSTED: i32 = 1;
    const SYSTEM: i32 = 3;
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.fs-limits.max-xattrs-per-inode", "3")
        .conf("dfs.namenode.fs-limits.max-xattr-size", "64")
        .start()
        .await;
    let admin = cluster.client();
    admin.mkdirs("/x", 0o777, true).await.unwrap();
    let alice = user_client(&cluster, "alice");
    alice
        .write_file("/x/f", b"data", Default::default())
        .await
        .unwrap();
    alice.set_permission("/x/f", 0o644).await.unwrap();

    alice
        .set_xattr("/x/f", xattr(USER, "color", Some(b"blue")), XATTR_CREATE)
        .await
        .unwrap();
    let again = alice
        .set_xattr("/x/f", xattr(USER, "color", Some(b"red")), XATTR_CREATE)
        .await
        .unwrap_err();
    assert_eq!(class(&again), "IOException");
    assert!(again.to_string().contains("already exists"), "{again}");
    let missing = alice
        .set_xattr("/x/f", xattr(USER, "size", Some(b"1")), XATTR_REPLACE)
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    alice
        .set_xattr("/x/f", xattr(USER, "color", Some(b"red")), XATTR_REPLACE)
        .await
        .unwrap();

    // trusted: the superuser's alone, and invisible to others; system: nobody's.
    let trusted = alice
        .set_xattr("/x/f", xattr(TRUSTED, "t", Some(b"1")), XATTR_CREATE)
        .await
        .unwrap_err();
    assert_eq!(class(&trusted), "AccessControlException");
    admin
        .set_xattr("/x/f", xattr(TRUSTED, "t", Some(b"1")), XATTR_CREATE)
        .await
        .unwrap();
    let system = admin
        .set_xattr("/x/f", xattr(SYSTEM, "s", Some(b"1")), XATTR_CREATE)
        .await
        .unwrap_err();
    assert_eq!(class(&system), "AccessControlException");
    assert_eq!(alice.list_xattrs("/x/f").await.unwrap().len(), 1);
    assert_eq!(admin.list_xattrs("/x/f").await.unwrap().len(), 2);

    // Changing a user attribute needs write access; reading needs read.
    let bob = user_client(&cluster, "bob");
    let no_write = bob
        .set_xattr("/x/f", xattr(USER, "b", Some(b"1")), XATTR_CREATE)
        .await
        .unwrap_err();
    assert_eq!(class(&no_write), "AccessControlException");
    let seen = bob
        .get_xattrs("/x/f", vec![xattr(USER, "color", None)])
        .await
        .unwrap();
    assert_eq!(seen[0].value.as_deref(), Some(&b"red"[..]));
    let absent = bob
        .get_xattrs("/x/f", vec![xattr(USER, "nope", None)])
        .await
        .unwrap_err();
    assert!(absent.to_string().contains("not found"), "{absent}");

    // The limits: 64 bytes of name and value, 3 user-visible attributes.
    let big = alice
        .set_xattr("/x/f", xattr(USER, "big", Some(&[0u8; 80])), XATTR_CREATE)
        .await
        .unwrap_err();
    assert_eq!(class(&big), "HadoopIllegalArgumentException");
    alice
        .set_xattr("/x/f", xattr(USER, "two", Some(b"2")), XATTR_CREATE)
        .await
        .unwrap();
    let full = alice
        .set_xattr("/x/f", xattr(USER, "three", Some(b"3")), XATTR_CREATE)
        .await
        .unwrap_err();
    assert!(
        full.to_string().contains("would exceed limit of 3"),
        "{full}"
    );

    let not_there = alice
        .remove_xattr("/x/f", xattr(USER, "nope", None))
        .await
        .unwrap_err();
    assert!(
        not_there.to_string().contains("No matching attributes"),
        "{not_there}"
    );
    alice
        .remove_xattr("/x/f", xattr(USER, "two", None))
        .await
        .unwrap();

    // security.hdfs.unreadable.by.superuser: set by anyone who may name it, without a
    // value, on files only; then the superuser cannot read the data, the owner can.
    const SECURITY: i32 = 2;
    let marker = || xattr(SECURITY, "hdfs.unreadable.by.superuser", None);
    let on_dir = alice
        .set_xattr("/x", marker(), XATTR_CREATE)
        .await
        .unwrap_err();
    assert!(on_dir.to_string().contains("on a file"), "{on_dir}");
    alice
        .set_xattr("/x/f", marker(), XATTR_CREATE)
        .await
        .unwrap();
    let refused = admin.read_file("/x/f").await.unwrap_err();
    assert_eq!(class(&refused), "AccessControlException");
    assert_eq!(alice.read_file("/x/f").await.unwrap(), b"data");
    alice.remove_xattr("/x/f", marker()).await.unwrap();

    let before = admin.get_xattrs("/x/f", vec![]).await.unwrap();
    assert_eq!(before.len(), 2);
    restart_both_ways(&mut cluster).await;
    let after = cluster.client().get_xattrs("/x/f", vec![]).await.unwrap();
    assert_eq!(after, before);
    // A removed file takes its attributes with it.
    cluster.client().delete("/x/f", false).await.unwrap();
    assert!(cluster.namesystem().read().ns.features.xattrs.is_empty());
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_refuse_growth_with_hadoops_exceptions_and_survive_restarts() {
    const BLOCK: u64 = 1 << 20;
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .block_size(BLOCK)
        .conf("dfs.replication", "1")
        .start()
        .await;
    let admin = cluster.client();
    let keep = tusk_proto::hdfs::StorageTypeProto::Disk;
    let (dont_set, reset) = (i64::MAX as u64, u64::MAX);

    // Namespace quota: the directory itself counts.
    admin.mkdirs("/q", 0o777, true).await.unwrap();
    admin.set_quota("/q", 3, dont_set, None).await.unwrap();
    admin.mkdirs("/q/a", 0o755, true).await.unwrap();
    admin
        .write_file("/q/f", b"x", Default::default())
        .await
        .unwrap();
    let over = admin.mkdirs("/q/b", 0o755, true).await.unwrap_err();
    assert_eq!(class(&over), "NSQuotaExceededException");
    assert!(
        over.to_string().contains(
            "The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4"
        ),
        "{over}"
    );
    admin.mkdirs("/elsewhere/d", 0o755, true).await.unwrap();
    let moved = admin
        .rename2("/elsewhere/d", "/q/d", false)
        .await
        .unwrap_err();
    assert_eq!(class(&moved), "NSQuotaExceededException");
    assert!(admin.get_file_info("/elsewhere/d").await.unwrap().is_some());

    // Space quota: a block being written counts whole; the write that would exceed
    // fails and leaves no block behind.
    admin.mkdirs("/s", 0o777, true).await.unwrap();
    admin.set_quota("/s", dont_set, BLOCK, None).await.unwrap();
    let small = vec![7u8; 100 << 10];
    admin
        .write_file("/s/a", &small, Default::default())
        .await
        .unwrap();
    let refused = admin
        .write_file("/s/b", &small, Default::default())
        .await
        .unwrap_err();
    assert_eq!(class(&refused), "DSQuotaExceededException", "{refused}");
    assert!(
        refused.to_string().contains("The DiskSpace quota of /s is exceeded: quota = 1048576 B = 1 MB but diskspace consumed = 1150976 B = 1.10 MB"),
        "{refused}"
    );
    assert_eq!(admin.read_file("/s/a").await.unwrap(), small);
    let b = admin.get_file_info("/s/b").await.unwrap();
    assert!(
        b.is_none_or(|b| b.length == 0),
        "nothing of /s/b was written"
    );
    let usage = admin.quota_usage("/s").await.unwrap();
    assert_eq!(usage.space_consumed, 100 << 10);
    assert_eq!(usage.space_quota, BLOCK);

    // setReplication grows the space too.
    admin
        .set_quota("/s", dont_set, 250 << 10, None)
        .await
        .unwrap();
    let repl = admin.set_replication("/s/a", 3).await.unwrap_err();
    assert_eq!(class(&repl), "DSQuotaExceededException");

    // A per-storage-type quota (every Tusk replica is on DISK).
    admin.mkdirs("/t", 0o777, true).await.unwrap();
    admin
        .set_quota("/t", dont_set, 10, Some(keep))
        .await
        .unwrap();
    let typed = admin
        .write_file("/t/f", b"abc", Default::default())
        .await
        .unwrap_err();
    assert_eq!(
        class(&typed),
        "QuotaByStorageTypeExceededException",
        "{typed}"
    );

    // Only the superuser sets quotas; only on directories.
    let alice = user_client(&cluster, "alice");
    let denied = alice.set_quota("/q", 10, dont_set, None).await.unwrap_err();
    assert_eq!(class(&denied), "AccessControlException");
    let file = admin
        .set_quota("/q/f", 10, dont_set, None)
        .await
        .unwrap_err();
    assert_eq!(class(&file), "PathIsNotDirectoryException");

    // The cached counters agree with a walk of the tree.
    for dir in ["/q", "/s"] {
        let usage = admin.quota_usage(dir).await.unwrap();
        let summary = admin.content_summary(dir).await.unwrap();
        assert_eq!(
            usage.file_and_directory_count,
            summary.file_count + summary.directory_count
        );
        assert_eq!(usage.quota, summary.quota);
    }

    let before = (
        admin.quota_usage("/q").await.unwrap(),
        admin.quota_usage("/s").await.unwrap(),
        admin.quota_usage("/t").await.unwrap(),
    );
    restart_both_ways(&mut cluster).await;
    let admin = cluster.client();
    let after = (
        admin.quota_usage("/q").await.unwrap(),
        admin.quota_usage("/s").await.unwrap(),
        admin.quota_usage("/t").await.unwrap(),
    );
    assert_eq!(after, before);
    let still = admin.mkdirs("/q/b", 0o755, true).await.unwrap_err();
    assert_eq!(class(&still), "NSQuotaExceededException");

    // Deleting frees room; clearing removes the limit.
    admin.delete("/q/a", true).await.unwrap();
    admin.mkdirs("/q/b", 0o755, true).await.unwrap();
    admin.set_quota("/q", reset, dont_set, None).await.unwrap();
    admin.mkdirs("/q/c", 0o755, true).await.unwrap();
    assert_eq!(admin.quota_usage("/q").await.unwrap().quota, u64::MAX);
    let root = admin.quota_usage("/").await.unwrap();
    assert_eq!(root.quota, i64::MAX as u64, "HDFS's root quota");
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_policies_are_stored_inherited_and_survive_restarts() {
    let mut cluster = MiniCluster::builder().datanodes(1).start().await;
    let admin = cluster.client();
    let missing = admin.storage_policy("/nope").await.unwrap_err();
    assert_eq!(class(&missing), "FileNotFoundException");
    admin.mkdirs("/cold/sub", 0o755, true).await.unwrap();
    assert_eq!(admin.storage_policy("/cold").await.unwrap().name, "HOT");
    admin.set_storage_policy("/cold", "COLD").await.unwrap();
    admin
        .write_file("/cold/sub/f", b"x", Default::default())
        .await
        .unwrap();
    assert_eq!(
        admin.storage_policy("/cold/sub/f").await.unwrap().name,
        "COLD"
    );
    assert_eq!(admin.stat("/cold/sub/f").await.unwrap().storage_policy, 2);
    admin
        .set_storage_policy("/cold/sub", "ALL_SSD")
        .await
        .unwrap();
    let bad = admin
        .set_storage_policy("/cold", "FROZEN")
        .await
        .unwrap_err();
    assert_eq!(class(&bad), "HadoopIllegalArgumentException");
    let alice = user_client(&cluster, "alice");
    let denied = alice.set_storage_policy("/cold", "HOT").await.unwrap_err();
    assert_eq!(class(&denied), "AccessControlException");

    restart_both_ways(&mut cluster).await;
    let admin = cluster.client();
    assert_eq!(
        admin.storage_policy("/cold/sub/f").await.unwrap().name,
        "ALL_SSD"
    );
    admin.unset_storage_policy("/cold/sub").await.unwrap();
    assert_eq!(
        admin.storage_policy("/cold/sub/f").await.unwrap().name,
        "COLD"
    );
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_access_located_info_and_batched_listing() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.batched.ls.limit", "3")
        .conf("dfs.ls.limit", "2")
        .start()
        .await;
    let admin = cluster.client();
    admin.mkdirs("/b1", 0o755, true).await.unwrap();
    admin.mkdirs("/b2", 0o755, true).await.unwrap();
    for f in ["/b1/a", "/b1/b", "/b1/c", "/b2/a", "/b2/b", "/plain"] {
        admin
            .write_file(f, f.as_bytes(), Default::default())
            .await
            .unwrap();
    }
    admin.mkdirs("/private", 0o700, true).await.unwrap();

    // checkAccess
    let bob = user_client(&cluster, "bob");
    bob.check_access("/b1", 5).await.unwrap();
    let no = bob.check_access("/b1", 2).await.unwrap_err();
    assert_eq!(class(&no), "AccessControlException");
    let gone = bob.check_access("/nope", 4).await.unwrap_err();
    assert_eq!(class(&gone), "FileNotFoundException");

    // getLocatedFileInfo
    let info = admin
        .located_file_info("/plain", true)
        .await
        .unwrap()
        .unwrap();
    let located = info.locations.expect("locations");
    assert_eq!(located.file_length, 6);
    assert_eq!(located.blocks.len(), 1);
    assert!(admin
        .located_file_info("/nope", false)
        .await
        .unwrap()
        .is_none());

    // getBatchedListing, page by page.
    let paths: Vec<String> = ["/b1", "/nope", "/plain", "/private", "/b2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut after = Vec::new();
    let mut seen: Vec<(u32, String)> = Vec::new();
    let mut errors: Vec<(u32, String)> = Vec::new();
    let mut pages = 0;
    loop {
        let r = bob
            .batched_listing(paths.clone(), after.clone(), false)
            .await
            .unwrap();
        pages += 1;
        for l in &r.listings {
            if let Some(e) = &l.exception {
                errors.push((l.parent_idx, e.class_name.clone()));
            }
            for s in &l.partial_listing {
                seen.push((l.parent_idx, String::from_utf8_lossy(&s.path).into_owned()));
            }
        }
        if !r.has_more {
            break;
        }
        after = r.start_after.to_vec();
        assert!(pages < 10, "the listing ends");
    }
    let names: Vec<String> = seen.iter().map(|(i, n)| format!("{i}:{n}")).collect();
    assert_eq!(names, vec!["0:a", "0:b", "0:c", "2:", "4:a", "4:b"]);
    assert_eq!(
        errors,
        vec![
            (1, "java.io.FileNotFoundException".to_string()),
            (
                3,
                "org.apache.hadoop.security.AccessControlException".to_string()
            )
        ]
    );
    assert!(pages >= 2, "the limits split the listing");
    let wrong = bob
        .batched_listing(vec!["/b2".into()], b"junk".to_vec(), false)
        .await
        .unwrap_err();
    assert_eq!(class(&wrong), "HadoopIllegalArgumentException");
    cluster.shutdown().await;
}

/// Users the static overrides do not name get their groups from the operating system
/// (Hadoop's default mapping): `nobody` reads through group `nogroup`; a user the
/// system does not know is in no group, not even one of its own name; the supergroup
/// comes from the same mapping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_come_from_the_operating_system() {
    let id = std::process::Command::new("id")
        .args(["-gn", "nobody"])
        .output()
        .expect("id runs");
    assert!(id.status.success(), "the test needs the system user nobody");
    let group = String::from_utf8(id.stdout).unwrap().trim().to_string();
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.permissions.superusergroup", "admins")
        .conf(
            "hadoop.user.group.static.mapping.overrides",
            "root=;ops=admins",
        )
        .build()
        .await
        .expect("cluster starts");
    let admin = cluster.client();
    admin.mkdirs("/shared", 0o755, true).await.unwrap();
    admin
        .write_file("/shared/f", b"for the group", CreateOptions::default())
        .await
        .unwrap();
    admin
        .set_owner("/shared/f", Some("carol"), Some(&group))
        .await
        .unwrap();
    admin.set_permission("/shared/f", 0o640).await.unwrap();
    assert_eq!(
        user_client(&cluster, "nobody")
            .read_file("/shared/f")
            .await
            .unwrap(),
        b"for the group"
    );
    // A user named like the group is not in it unless the system says so.
    let stranger = user_client(&cluster, &group).read_file("/shared/f").await;
    assert!(
        matches!(&stranger, Err(ClientError::Remote(e)) if e.class.ends_with("AccessControlException")),
        "{stranger:?}"
    );
    // ops is in the supergroup through the overrides: it passes every check.
    assert_eq!(
        user_client(&cluster, "ops")
            .read_file("/shared/f")
            .await
            .unwrap(),
        b"for the group"
    );
}
