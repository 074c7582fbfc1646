//! A secure `tusk local up` cluster through a real MIT KDC: the NameNode and the
//! DataNodes log in from their keytabs, a user with `kinit`'s ticket writes, lists and
//! reads a file (owned by the principal's short name), and a client without a ticket
//! or with SIMPLE authentication is refused; a delegation token from `tusk fetchdt`
//! serves without a ticket until it is cancelled, and WebHDFS takes it (`delegation=`)
//! instead of a claimed `user.name`. WebHDFS negotiates SPNEGO with curl's
//! `--negotiate` (a listing, a CREATE through the DataNode redirect, the 401
//! challenge) and serves GETDELEGATIONTOKEN, RENEW and CANCEL to a ticket holder.

#[path = "support/local_cluster.rs"]
mod local_cluster;

use std::path::Path;

use local_cluster::{stderr, stdout, tusk_env, Cluster};
use tusk_security::kdc::Kdc;

#[test]
fn a_kerberos_cluster_serves_ticket_holders_only() {
    let realm_dir = tempfile::tempdir().unwrap();
    let kdc = Kdc::start(realm_dir.path(), "TUSK.TEST").expect("a KDC (Debian's krb5-kdc)");
    let nn_keytab = kdc.add_principal("nn/localhost@TUSK.TEST").unwrap();
    let dn_keytab = kdc.add_principal("dn/localhost@TUSK.TEST").unwrap();
    let http_keytab = kdc.add_principal("HTTP/localhost@TUSK.TEST").unwrap();
    let alice_cache = kdc.add_user("alice").unwrap();

    let keys = [
        "hadoop.security.authentication=kerberos".to_string(),
        "dfs.namenode.kerberos.principal=nn/_HOST@TUSK.TEST".to_string(),
        format!("dfs.namenode.keytab.file={}", nn_keytab.display()),
        "dfs.datanode.kerberos.principal=dn/_HOST@TUSK.TEST".to_string(),
        format!("dfs.datanode.keytab.file={}", dn_keytab.display()),
        "dfs.web.authentication.kerberos.principal=HTTP/_HOST@TUSK.TEST".to_string(),
        "hadoop.http.authentication.type=kerberos".to_string(),
        format!(
            "dfs.web.authentication.kerberos.keytab={}",
            http_keytab.display()
        ),
        "dfs.namenode.audit.log.token.tracking.id=true".to_string(),
    ];
    let mut global: Vec<&str> = Vec::new();
    for k in &keys {
        global.extend(["-D", k.as_str()]);
    }
    let env = with_cache(&kdc.env(), &alice_cache);
    let cluster = Cluster::up_full(2, &[], &global, &pairs(&env));

    // `tusk SUBCOMMAND ARGS` with the cluster's keys, in `env`.
    let tusk = |subcommand: &str, args: &[&str], env: &[(String, String)]| {
        let mut all = global.clone();
        all.push(subcommand);
        all.extend_from_slice(args);
        tusk_env(cluster.home(), &all, &pairs(env))
    };
    let fs = |args: &[&str], env: &[(String, String)]| tusk("fs", args, env);
    // The superuser is the NameNode's principal's short name (`nn`), not the user
    // running the process: a ticket for `nn` makes alice a home, one for root may not.
    let as_user = |name: &str| with_cache(&env, &kdc.add_user(name).unwrap());
    let as_nn = as_user("nn");
    for args in [
        &["-mkdir", "-p", "/user/alice"][..],
        &["-chown", "alice", "/user/alice"],
    ] {
        let out = fs(args, &as_nn);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let not_super = fs(&["-mkdir", "/rootdir"], &as_user("root"));
    assert!(
        stderr(&not_super).contains("Permission denied: user=root"),
        "{}",
        stderr(&not_super)
    );

    let local = cluster.home().join("hello.txt");
    std::fs::write(&local, "hello from alice\n").unwrap();
    let put = fs(
        &["-put", local.to_str().unwrap(), "/user/alice/hello.txt"],
        &env,
    );
    assert!(put.status.success(), "{}", stderr(&put));
    let ls = fs(&["-ls", "/user/alice/hello.txt"], &env);
    assert!(ls.status.success(), "{}", stderr(&ls));
    assert!(
        stdout(&ls).contains(" alice "),
        "owned by alice: {}",
        stdout(&ls)
    );
    let cat = fs(&["-cat", "/user/alice/hello.txt"], &env);
    assert_eq!(stdout(&cat), "hello from alice\n", "{}", stderr(&cat));

    // A delegation token (`tusk fetchdt`) serves alice's shell with no ticket at all.
    let tokens = cluster.home().join("alice.dt");
    let tokens_str = tokens.to_str().unwrap();
    let dt = |args: &[&str], env: &[(String, String)]| tusk("fetchdt", args, env);
    let fetched = dt(&["--renewer", "alice", tokens_str], &env);
    assert!(fetched.status.success(), "{}", stderr(&fetched));
    let printed = dt(&["--print", tokens_str], &env);
    assert!(
        stdout(&printed).contains("owner=alice@TUSK.TEST, renewer=alice"),
        "{}",
        stdout(&printed)
    );
    let mut token_only = with_cache(&env, &realm_dir.path().join("empty.cc"));
    token_only.push(("HADOOP_TOKEN_FILE_LOCATION".into(), tokens_str.into()));
    let by_token = fs(&["-cat", "/user/alice/hello.txt"], &token_only);
    assert_eq!(
        stdout(&by_token),
        "hello from alice\n",
        "{}",
        stderr(&by_token)
    );
    // The audit log names the token by its tracking id (the MD5 of its identifier), a
    // ticket holder's lines by `null`.
    let credentials = tusk_security::Credentials::read_file(&tokens).unwrap();
    let token = credentials
        .tokens_of_kind("HDFS_DELEGATION_TOKEN")
        .next()
        .expect("the fetched token");
    let tracking = tusk_security::delegation_token::tracking_id(&token.identifier);
    let audit_path = cluster.home().join("cluster/logs/hdfs-audit.log");
    let by_token_line = |l: &str| {
        l.contains("ugi=alice (auth:TOKEN)")
            && l.contains("\tcmd=open\tsrc=/user/alice/hello.txt\t")
            && l.contains(&format!("\ttrackingId={tracking}\tproto=rpc"))
    };
    // The log's writer gathers lines for a moment before it writes them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let audit = loop {
        let audit = std::fs::read_to_string(&audit_path).unwrap_or_default();
        if audit.lines().any(by_token_line) || std::time::Instant::now() > deadline {
            break audit;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(
        audit.lines().any(by_token_line),
        "no open by the token with trackingId={tracking}: {audit}"
    );
    assert!(
        audit
            .lines()
            .any(|l| l.contains("ugi=alice@TUSK.TEST (auth:KERBEROS)")
                && l.contains("\ttrackingId=null\tproto=rpc")),
        "{audit}"
    );
    // WebHDFS believes the token, not `user.name`: a status through the NameNode and a
    // read redirected to a DataNode, both as alice.
    let web = std::fs::read_to_string(cluster.home().join("cluster/namenode.http-addr"))
        .unwrap()
        .trim()
        .to_string();
    let delegation = tusk_security::delegation_token::encode_url(token);
    let (status, body) = http_get(&format!(
        "http://{web}/webhdfs/v1/user/alice/hello.txt?op=GETFILESTATUS&delegation={delegation}"
    ));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"owner\":\"alice\""), "{body}");
    let (status, redirect) = http_get(&format!(
        "http://{web}/webhdfs/v1/user/alice/hello.txt?op=OPEN&delegation={delegation}"
    ));
    assert_eq!(status, 307, "{redirect}");
    let location = location_of(&redirect);
    let (status, read) = http_get(&location);
    assert_eq!((status, read.as_str()), (200, "hello from alice\n"));
    // Without a token, a claimed user.name is refused under Kerberos.
    let (status, refused) = http_get(&format!(
        "http://{web}/webhdfs/v1/user/alice/hello.txt?op=GETFILESTATUS&user.name=alice"
    ));
    assert_eq!(status, 401, "{refused}");
    assert!(refused.contains("Authentication required"), "{refused}");

    // SPNEGO: curl with alice's ticket (`--negotiate`) lists her home and creates a
    // file through the DataNode redirect (which carries a token the NameNode made).
    let web_host = web.replacen("127.0.0.1", "localhost", 1);
    let base = format!("http://{web_host}/webhdfs/v1");
    // curl with alice's ticket.
    let negotiate = |args: &[&str]| {
        let mut all = vec!["--negotiate", "-u", ":"];
        all.extend_from_slice(args);
        curl(&all, &env)
    };
    let listed = negotiate(&[&format!("{base}/user/alice?op=LISTSTATUS")]);
    assert!(listed.starts_with("200 "), "{listed}");
    assert!(listed.contains("\"pathSuffix\":\"hello.txt\""), "{listed}");
    assert!(listed.contains("\"owner\":\"alice\""), "{listed}");
    let created = negotiate(&[
        "-X",
        "PUT",
        &format!("{base}/user/alice/spnego.txt?op=CREATE"),
    ]);
    assert!(created.starts_with("307 "), "{created}");
    let location = location_of(&created);
    assert!(location.contains("delegation="), "{location}");
    let body = realm_dir.path().join("spnego.txt");
    std::fs::write(&body, "written through SPNEGO\n").unwrap();
    let put = curl(&["-X", "PUT", "-T", body.to_str().unwrap(), &location], &[]);
    assert!(put.starts_with("201 "), "{put}");
    let cat = fs(&["-cat", "/user/alice/spnego.txt"], &env);
    assert_eq!(stdout(&cat), "written through SPNEGO\n", "{}", stderr(&cat));
    let status = negotiate(&[&format!("{base}/user/alice/spnego.txt?op=GETFILESTATUS")]);
    assert!(status.contains("\"owner\":\"alice\""), "{status}");
    // hadoop.http.authentication.type=kerberos: the NameNode's and the DataNode's
    // pages negotiate too (the DataNode's WebHDFS took the token above).
    let dn_web = location
        .split('/')
        .nth(2)
        .expect("the DataNode's authority")
        .replacen("127.0.0.1", "localhost", 1);
    for daemon_web in [web_host.as_str(), dn_web.as_str()] {
        let jmx = format!("http://{daemon_web}/jmx");
        let refused = curl(&[&jmx], &[]);
        assert!(refused.starts_with("401 "), "{daemon_web}: {refused}");
        let served = negotiate(&[&jmx]);
        assert!(
            served.starts_with("200 ") && served.contains("\"beans\""),
            "{daemon_web}: {served}"
        );
    }
    // No ticket, no token: 401 with the Negotiate challenge.
    let challenged = curl(&[&format!("{base}/user/alice?op=LISTSTATUS")], &[]);
    assert!(challenged.starts_with("401 "), "{challenged}");
    assert!(
        challenged
            .to_ascii_lowercase()
            .contains("www-authenticate: negotiate"),
        "{challenged}"
    );
    // GETDELEGATIONTOKEN with the ticket; the token then serves without one, renews,
    // and is refused once cancelled.
    let got = negotiate(&[&format!("{base}/?op=GETDELEGATIONTOKEN&renewer=alice")]);
    assert!(got.starts_with("200 "), "{got}");
    let url_string = got
        .split("\"urlString\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a urlString")
        .to_string();
    let by_web_token =
        format!("{base}/user/alice/spnego.txt?op=GETFILESTATUS&delegation={url_string}");
    let (status, body) = http_get(&by_web_token.replace("localhost", "127.0.0.1"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"owner\":\"alice\""), "{body}");
    // A token does not beget a token (Hadoop's refusal of a `delegation=` here).
    let (status, body) = http_get(&format!(
        "http://{web}/webhdfs/v1/?op=GETDELEGATIONTOKEN&delegation={url_string}"
    ));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("IllegalArgumentException"), "{body}");
    let renewed = negotiate(&[
        "-X",
        "PUT",
        &format!("{base}/?op=RENEWDELEGATIONTOKEN&token={url_string}"),
    ]);
    assert!(
        renewed.starts_with("200 ") && renewed.contains("{\"long\":"),
        "{renewed}"
    );
    let cancelled = negotiate(&[
        "-X",
        "PUT",
        &format!("{base}/?op=CANCELDELEGATIONTOKEN&token={url_string}"),
    ]);
    assert!(cancelled.starts_with("200 "), "{cancelled}");
    let (status, body) = http_get(&by_web_token.replace("localhost", "127.0.0.1"));
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("InvalidToken"), "{body}");

    let renewed = dt(&["--renew", tokens_str], &env);
    assert!(
        stdout(&renewed).contains("Renewed token for"),
        "{}",
        stderr(&renewed)
    );
    let cancelled = dt(&["--cancel", tokens_str], &env);
    assert!(cancelled.status.success(), "{}", stderr(&cancelled));
    let refused = fs(&["-cat", "/user/alice/hello.txt"], &token_only);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("can't be found in cache"),
        "{}",
        stderr(&refused)
    );

    // Alice's ticket does not make her the superuser.
    let denied = fs(&["-mkdir", "/elsewhere"], &env);
    assert!(
        stderr(&denied).contains("Permission denied: user=alice"),
        "{}",
        stderr(&denied)
    );

    // No ticket: an empty credential cache.
    let no_ticket = with_cache(&env, &realm_dir.path().join("nobody.cc"));
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

/// `env` with its Kerberos credential cache (`KRB5CCNAME`) replaced by `cache`.
fn with_cache(env: &[(String, String)], cache: &Path) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = env
        .iter()
        .filter(|(k, _)| k != "KRB5CCNAME")
        .cloned()
        .collect();
    env.push(("KRB5CCNAME".into(), format!("FILE:{}", cache.display())));
    env
}

/// `env` as the borrowed pairs `tusk_env` takes.
fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// The `Location` header of an HTTP response's head.
fn location_of(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .expect("a Location header")
        .trim()
        .to_string()
}

/// `curl -s -i ARGS` with `env`: the status, a space, then the headers and body.
fn curl(args: &[&str], env: &[(String, String)]) -> String {
    let out = std::process::Command::new("curl")
        .args(["-s", "-i", "-w", "\n%{http_code}"])
        .args(args)
        .envs(env.iter().cloned())
        .output()
        .expect("curl (with GSS-API)");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (rest, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    format!("{code} {rest}")
}

/// A plain HTTP/1.1 GET: the status and, for a redirect, the headers, else the body.
fn http_get(url: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if status == 307 {
        return (status, head.to_string());
    }
    // A chunked body (the DataNode streams OPEN) is unchunked.
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        unchunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}
