//! A secure `tusk local up` cluster through a real MIT KDC: the NameNode and the
//! DataNodes log in from their keytabs, a user with `kinit`'s ticket writes, lists and
//! reads a file (owned by the principal's short name), and a client without a ticket
//! or with SIMPLE authentication is refused; a delegation token from `tusk fetchdt`
//! serves without a ticket until it is cancelled.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use local_cluster::{stderr, stdout, tusk_env, Cluster};
use tusk_security::kdc::Kdc;

#[test]
fn a_kerberos_cluster_serves_ticket_holders_only() {
    let realm_dir = tempfile::tempdir().unwrap();
    let kdc = Kdc::start(realm_dir.path(), "TUSK.TEST").expect("a KDC (Debian's krb5-kdc)");
    let nn_keytab = kdc.add_principal("nn/localhost@TUSK.TEST").unwrap();
    let dn_keytab = kdc.add_principal("dn/localhost@TUSK.TEST").unwrap();
    let alice_cache = kdc.add_user("alice").unwrap();

    let keys = [
        "hadoop.security.authentication=kerberos".to_string(),
        "dfs.namenode.kerberos.principal=nn/_HOST@TUSK.TEST".to_string(),
        format!("dfs.namenode.keytab.file={}", nn_keytab.display()),
        "dfs.datanode.kerberos.principal=dn/_HOST@TUSK.TEST".to_string(),
        format!("dfs.datanode.keytab.file={}", dn_keytab.display()),
    ];
    let mut global: Vec<&str> = Vec::new();
    for k in &keys {
        global.extend(["-D", k.as_str()]);
    }
    let mut env: Vec<(String, String)> = kdc.env();
    env.push((
        "KRB5CCNAME".into(),
        format!("FILE:{}", alice_cache.display()),
    ));
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let cluster = Cluster::up_full(2, &[], &global, &env_refs);

    let fs = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = global.clone();
        all.push("fs");
        all.extend_from_slice(args);
        tusk_env(cluster.home(), &all, env)
    };
    // The superuser is the NameNode's principal's short name (`nn`), not the user
    // running the process: a ticket for `nn` makes alice a home, one for root may not.
    let as_user = |name: &str| {
        let cache = kdc.add_user(name).unwrap();
        let mut env: Vec<(String, String)> = env
            .iter()
            .filter(|(k, _)| k != "KRB5CCNAME")
            .cloned()
            .collect();
        env.push(("KRB5CCNAME".into(), format!("FILE:{}", cache.display())));
        env
    };
    let as_nn = as_user("nn");
    let as_nn: Vec<(&str, &str)> = as_nn
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    for args in [
        &["-mkdir", "-p", "/user/alice"][..],
        &["-chown", "alice", "/user/alice"],
    ] {
        let out = fs(args, &as_nn);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let as_root = as_user("root");
    let as_root: Vec<(&str, &str)> = as_root
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let not_super = fs(&["-mkdir", "/rootdir"], &as_root);
    assert!(
        stderr(&not_super).contains("Permission denied: user=root"),
        "{}",
        stderr(&not_super)
    );

    let local = cluster.home().join("hello.txt");
    std::fs::write(&local, "hello from alice\n").unwrap();
    let put = fs(
        &["-put", local.to_str().unwrap(), "/user/alice/hello.txt"],
        &env_refs,
    );
    assert!(put.status.success(), "{}", stderr(&put));
    let ls = fs(&["-ls", "/user/alice/hello.txt"], &env_refs);
    assert!(ls.status.success(), "{}", stderr(&ls));
    assert!(
        stdout(&ls).contains(" alice "),
        "owned by alice: {}",
        stdout(&ls)
    );
    let cat = fs(&["-cat", "/user/alice/hello.txt"], &env_refs);
    assert_eq!(stdout(&cat), "hello from alice\n", "{}", stderr(&cat));

    // A delegation token (`tusk fetchdt`) serves alice's shell with no ticket at all.
    let tokens = cluster.home().join("alice.dt");
    let tokens_str = tokens.to_str().unwrap();
    let dt = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = global.clone();
        all.push("fetchdt");
        all.extend_from_slice(args);
        tusk_env(cluster.home(), &all, env)
    };
    let fetched = dt(&["--renewer", "alice", tokens_str], &env_refs);
    assert!(fetched.status.success(), "{}", stderr(&fetched));
    let printed = dt(&["--print", tokens_str], &env_refs);
    assert!(
        stdout(&printed).contains("owner=alice@TUSK.TEST, renewer=alice"),
        "{}",
        stdout(&printed)
    );
    let no_ticket_cache = format!("FILE:{}", realm_dir.path().join("empty.cc").display());
    let mut token_only = env_refs.clone();
    token_only.retain(|(k, _)| *k != "KRB5CCNAME");
    token_only.push(("KRB5CCNAME", &no_ticket_cache));
    token_only.push(("HADOOP_TOKEN_FILE_LOCATION", tokens_str));
    let by_token = fs(&["-cat", "/user/alice/hello.txt"], &token_only);
    assert_eq!(
        stdout(&by_token),
        "hello from alice\n",
        "{}",
        stderr(&by_token)
    );
    let renewed = dt(&["--renew", tokens_str], &env_refs);
    assert!(
        stdout(&renewed).contains("Renewed token for"),
        "{}",
        stderr(&renewed)
    );
    let cancelled = dt(&["--cancel", tokens_str], &env_refs);
    assert!(cancelled.status.success(), "{}", stderr(&cancelled));
    let refused = fs(&["-cat", "/user/alice/hello.txt"], &token_only);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("can't be found in cache"),
        "{}",
        stderr(&refused)
    );

    // Alice's ticket does not make her the superuser.
    let denied = fs(&["-mkdir", "/elsewhere"], &env_refs);
    assert!(
        stderr(&denied).contains("Permission denied: user=alice"),
        "{}",
        stderr(&denied)
    );

    // No ticket: an empty credential cache.
    let nobody = format!("FILE:{}", realm_dir.path().join("nobody.cc").display());
    let mut no_ticket = env_refs.clone();
    no_ticket.retain(|(k, _)| *k != "KRB5CCNAME");
    no_ticket.push(("KRB5CCNAME", &nobody));
    let refused = fs(&["-ls", "/"], &no_ticket);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("GSS initiate failed"),
        "{}",
        stderr(&refused)
    );

    // SIMPLE (the configuration's default) against the secure NameNode.
    let simple = tusk_env(
        cluster.home(),
        &["fs", "-ls", "/"],
        &[("HADOOP_USER_NAME", "alice")],
    );
    assert!(!simple.status.success());
    assert!(
        stderr(&simple).contains("SIMPLE authentication is not enabled"),
        "{}",
        stderr(&simple)
    );
}
