//! WebHDFS through plain HTTP, as curl or a script would use it: the two-step CREATE,
//! OPEN, APPEND and GETFILECHECKSUM with their redirects, TRUNCATE and CONCAT, Hadoop's JSON shapes, and Hadoop's error JSON and
//! status codes for bad input and refused access.

use std::net::SocketAddr;

use reqwest::{redirect, Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use tusk_client::{ChecksumCombineMode, CreateOptions};
use tusk_cluster::{test_data, wait_for, MiniCluster};
use Expect::{Empty, Json, Refused, RefusedWith, Served, True};

/// A client that does not follow redirects, so each step can be checked.
struct Web {
    http: reqwest::Client,
    namenode: SocketAddr,
}

/// One answer: status, `Location` (if any), body, and the request it answers (named
/// in every failed assertion about it).
struct Answer {
    request: String,
    status: StatusCode,
    location: Option<String>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {}", self.request, self.text()))
    }

    /// The body as text, for messages.
    fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// Asserts Hadoop's error JSON with `status` and exception `class` (simple name).
    #[track_caller]
    fn assert_error(&self, status: u16, class: &str) -> String {
        assert_eq!(
            self.status.as_u16(),
            status,
            "{}: {}",
            self.request,
            self.text()
        );
        let e = &self.json()["RemoteException"];
        assert_eq!(e["exception"], class, "{}: {e}", self.request);
        assert!(
            e["javaClassName"].as_str().unwrap().ends_with(class),
            "{}: {e}",
            self.request
        );
        e["message"].as_str().unwrap().to_string()
    }

    /// Asserts a 200, showing the body when not.
    #[track_caller]
    fn assert_ok(&self) {
        assert_eq!(
            self.status,
            StatusCode::OK,
            "{}: {}",
            self.request,
            self.text()
        );
    }

    /// Asserts a 200 with this JSON.
    #[track_caller]
    fn assert_json(&self, want: &Value) {
        self.assert_ok();
        assert_eq!(&self.json(), want, "{}", self.request);
    }

    /// Asserts a 200 with no body, as Hadoop's setters answer.
    #[track_caller]
    fn assert_empty(&self) {
        self.assert_ok();
        assert!(self.body.is_empty(), "{}: {}", self.request, self.text());
    }

    /// Asserts what `expect` says.
    #[track_caller]
    fn assert(&self, expect: &Expect) {
        match expect {
            Expect::Served => self.assert_ok(),
            Expect::Empty => self.assert_empty(),
            Expect::True => self.assert_json(&json!({"boolean": true})),
            Expect::Json(want) => self.assert_json(want),
            Expect::Refused((status, class)) => {
                self.assert_error(*status, class);
            }
            Expect::RefusedWith((status, class), message) => {
                let got = self.assert_error(*status, class);
                assert_eq!(&got, message, "{}", self.request);
            }
        }
    }
}

/// What a request must be answered with.
enum Expect<'a> {
    /// A 200; its body is not looked at.
    Served,
    /// A 200 with no body, as Hadoop's setters answer.
    Empty,
    /// A 200 with Hadoop's `{"boolean": true}`.
    True,
    /// A 200 with this JSON.
    Json(Value),
    /// Hadoop's error JSON with this status and exception (simple name).
    Refused((u16, &'a str)),
    /// That, and this message.
    RefusedWith((u16, &'a str), &'a str),
}

/// The refusals most asked for: status and exception.
const BAD_ARGUMENT: (u16, &str) = (400, "IllegalArgumentException");
const DENIED: (u16, &str) = (403, "AccessControlException");
const NOT_FOUND: (u16, &str) = (404, "FileNotFoundException");
const SNAPSHOT_REFUSED: (u16, &str) = (403, "SnapshotException");
const NOT_AUTHORIZED: (u16, &str) = (403, "AuthorizationException");

/// One request to the NameNode, `METHOD /path?query` (the path below `/webhdfs/v1`),
/// and what it must answer.
type Step<'a> = (&'a str, Expect<'a>);

impl Web {
    fn new(cluster: &MiniCluster) -> Web {
        Web {
            http: reqwest::Client::builder()
                .redirect(redirect::Policy::none())
                .build()
                .unwrap(),
            namenode: cluster.namenode_http_addr(),
        }
    }

    /// `method` on the NameNode: `/webhdfs/v1{path}?{query}`.
    async fn nn(&self, method: Method, path: &str, query: &str) -> Answer {
        let url = format!("http://{}/webhdfs/v1{path}?{query}", self.namenode);
        self.send(method, &url, Vec::new()).await
    }

    /// GET on the NameNode: `/webhdfs/v1{path}?{query}`.
    async fn get(&self, path: &str, query: &str) -> Answer {
        self.nn(Method::GET, path, query).await
    }

    /// PUT on the NameNode.
    async fn put(&self, path: &str, query: &str) -> Answer {
        self.nn(Method::PUT, path, query).await
    }

    /// POST on the NameNode.
    async fn post(&self, path: &str, query: &str) -> Answer {
        self.nn(Method::POST, path, query).await
    }

    /// DELETE on the NameNode.
    async fn delete(&self, path: &str, query: &str) -> Answer {
        self.nn(Method::DELETE, path, query).await
    }

    /// Sends each request in turn and checks its answer: a run of requests that
    /// differ only in what they send and what must come back.
    async fn steps(&self, steps: &[Step<'_>]) {
        for (request, expect) in steps {
            let (method, target) = request.split_once(' ').expect("METHOD /path?query");
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            self.nn(method, path, query).await.assert(expect);
        }
    }

    async fn send(&self, method: Method, url: &str, body: Vec<u8>) -> Answer {
        let request = format!("{method} {url}");
        let resp = self
            .http
            .request(method, url)
            .body(body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let location = resp
            .headers()
            .get("location")
            .map(|l| l.to_str().unwrap().to_string());
        let body = resp.bytes().await.unwrap().to_vec();
        Answer {
            request,
            status,
            location,
            body,
        }
    }

    /// The two-step CREATE: the NameNode's redirect, then the body to the DataNode.
    async fn create(&self, path: &str, query: &str, data: Vec<u8>) -> Answer {
        let first = self.put(path, &format!("op=CREATE&{query}")).await;
        assert_eq!(first.status, StatusCode::TEMPORARY_REDIRECT);
        let location = first.location.expect("a Location");
        self.send(Method::PUT, &location, data).await
    }

    /// The two-step OPEN.
    async fn open(&self, path: &str, query: &str) -> Answer {
        let first = self.get(path, &format!("op=OPEN&{query}")).await;
        if first.status != StatusCode::TEMPORARY_REDIRECT {
            return first;
        }
        self.send(Method::GET, &first.location.unwrap(), Vec::new())
            .await
    }
}

async fn cluster() -> MiniCluster {
    MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.replication", "2")
        // Listings of a few entries take several pages.
        .conf("dfs.ls.limit", "3")
        .start()
        .await
}

/// `dir`, made by the superuser and given to `user`.
async fn home(cluster: &MiniCluster, dir: &str, user: &str) {
    let client = cluster.client();
    client.mkdirs(dir, 0o755, true).await.unwrap();
    client.set_owner(dir, Some(user), None).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_and_open_redirect_to_a_datanode_and_stream_the_bytes() {
    let cluster = cluster().await;
    let web = Web::new(&cluster);
    home(&cluster, "/w", "alice").await;
    let data = test_data(3 * 1024 * 1024 + 123, 7);

    // Step one names a DataNode's web server and the NameNode's RPC address.
    let first = web.put("/w/data.bin", "op=CREATE&user.name=alice").await;
    assert_eq!(first.status, StatusCode::TEMPORARY_REDIRECT);
    let location = first.location.unwrap();
    let dn_ports: Vec<String> = (0..2)
        .map(|i| format!("127.0.0.1:{}/", cluster.datanode_http_addr(i).port()))
        .collect();
    assert!(
        dn_ports
            .iter()
            .any(|p| location.starts_with(&format!("http://{p}webhdfs/v1/w/data.bin?op=CREATE"))),
        "{location}"
    );
    assert!(location.contains("user.name=alice"), "{location}");
    assert!(
        location.contains(&format!("namenoderpcaddress={}", cluster.namenode_addr())),
        "{location}"
    );
    // Nothing exists until the DataNode step.
    assert!(cluster
        .client()
        .get_file_info("/w/data.bin")
        .await
        .unwrap()
        .is_none());

    // noredirect gives the same URL in JSON.
    let no_redirect = web
        .put("/w/data.bin", "op=CREATE&user.name=alice&noredirect=true")
        .await;
    assert_eq!(no_redirect.status, StatusCode::OK);
    assert!(no_redirect.json()["Location"]
        .as_str()
        .unwrap()
        .contains("/webhdfs/v1/w/data.bin?op=CREATE"));

    // Several blocks, streamed.
    let created = web
        .create(
            "/w/data.bin",
            "user.name=alice&blocksize=1048576",
            data.clone(),
        )
        .await;
    assert_eq!(
        created.status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(
        created.location.as_deref(),
        Some(format!("hdfs://{}/w/data.bin", cluster.namenode_addr()).as_str())
    );
    let client = cluster.client();
    assert_eq!(client.read_file("/w/data.bin").await.unwrap(), data);
    let status = client.stat("/w/data.bin").await.unwrap();
    assert_eq!(status.owner, "alice");
    assert_eq!(status.block_size, 1 << 20);

    // A second CREATE without overwrite is refused; with it, the file is replaced.
    let again = web
        .create("/w/data.bin", "user.name=alice", b"x".to_vec())
        .await;
    again.assert_error(403, "FileAlreadyExistsException");
    let replaced = web
        .create(
            "/w/data.bin",
            "user.name=alice&overwrite=true",
            data.clone(),
        )
        .await;
    assert_eq!(replaced.status, StatusCode::CREATED);

    // OPEN: whole, ranged, ranged past the end, empty at the end.
    let whole = web.open("/w/data.bin", "user.name=bob").await;
    assert_eq!(whole.status, StatusCode::OK);
    assert_eq!(whole.body, data);
    let offset = 1024 * 1024 - 10;
    let ranged = web
        .open("/w/data.bin", &format!("offset={offset}&length=100000"))
        .await;
    assert_eq!(ranged.status, StatusCode::OK);
    assert_eq!(ranged.body, &data[offset..offset + 100000]);
    let tail = web
        .open(
            "/w/data.bin",
            &format!("offset={}&length=999999", data.len() - 5),
        )
        .await;
    assert_eq!(tail.body, &data[data.len() - 5..]);
    // A client that failed on one DataNode excludes it (`ip:xferPort`).
    for i in 0..2 {
        let excluded = cluster.datanode_addr(i);
        let other = cluster.datanode_http_addr(1 - i);
        for op in ["OPEN", "CREATE&user.name=alice&overwrite=true"] {
            let method = if op == "OPEN" {
                Method::GET
            } else {
                Method::PUT
            };
            let redirected = web
                .nn(
                    method,
                    "/w/data.bin",
                    &format!("op={op}&excludedatanodes={excluded}"),
                )
                .await;
            let location = redirected.location.unwrap();
            assert!(
                location.starts_with(&format!("http://{other}/")),
                "{location}"
            );
        }
    }
    let past = web
        .get("/w/data.bin", &format!("op=OPEN&offset={}", data.len()))
        .await;
    let message = past.assert_error(403, "IOException");
    assert!(message.starts_with("Offset="), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_operations_answer_hadoops_json() {
    let mut cluster = cluster().await;
    let web = Web::new(&cluster);
    home(&cluster, "/home/alice", "alice").await;
    let q = "user.name=alice";

    web.put("/home/alice/d", &format!("op=MKDIRS&{q}&permission=750"))
        .await
        .assert(&True);
    web.create("/home/alice/d/f", q, b"0123456789".to_vec())
        .await;

    let status = web.get("/home/alice/d", "op=GETFILESTATUS").await;
    let fs = &status.json()["FileStatus"];
    assert_eq!(fs["type"], "DIRECTORY");
    assert_eq!(fs["permission"], "750");
    assert_eq!(fs["owner"], "alice");
    assert_eq!(fs["pathSuffix"], "");
    assert_eq!(fs["childrenNum"], 1);
    let keys: Vec<&str> = fs.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "accessTime",
            "blockSize",
            "childrenNum",
            "fileId",
            "group",
            "length",
            "modificationTime",
            "owner",
            "pathSuffix",
            "permission",
            "replication",
            "storagePolicy",
            "type"
        ]
    );

    // 750: alice lists it; dr.who could not.
    let list = web
        .get("/home/alice/d", &format!("op=LISTSTATUS&{q}"))
        .await
        .json();
    let entries = list["FileStatuses"]["FileStatus"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["pathSuffix"], "f");
    assert_eq!(entries[0]["type"], "FILE");
    assert_eq!(entries[0]["length"], 10);
    assert_eq!(entries[0]["replication"], 2);

    let batch = web
        .get("/home/alice/d", &format!("op=LISTSTATUS_BATCH&{q}"))
        .await
        .json();
    assert_eq!(batch["DirectoryListing"]["remainingEntries"], 0);
    assert_eq!(
        batch["DirectoryListing"]["partialListing"]["FileStatuses"]["FileStatus"][0]["pathSuffix"],
        "f"
    );

    // Seven entries: LISTSTATUS streams every page, LISTSTATUS_BATCH gives one.
    for i in 0..7 {
        web.put(&format!("/home/alice/many/e{i}"), &format!("op=MKDIRS&{q}"))
            .await;
    }
    let all = web
        .get("/home/alice/many", &format!("op=LISTSTATUS&{q}"))
        .await
        .json();
    let names: Vec<&str> = all["FileStatuses"]["FileStatus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pathSuffix"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["e0", "e1", "e2", "e3", "e4", "e5", "e6"]);
    let page = web
        .get(
            "/home/alice/many",
            &format!("op=LISTSTATUS_BATCH&{q}&startAfter=e2"),
        )
        .await
        .json();
    assert_eq!(page["DirectoryListing"]["remainingEntries"], 1);
    let listed = &page["DirectoryListing"]["partialListing"]["FileStatuses"]["FileStatus"];
    assert_eq!(listed.as_array().unwrap().len(), 3);
    assert_eq!(listed[0]["pathSuffix"], "e3");
    web.delete("/home/alice/many", &format!("op=DELETE&{q}&recursive=true"))
        .await;

    let summary = web
        .get("/home/alice", &format!("op=GETCONTENTSUMMARY&{q}"))
        .await
        .json();
    let cs = &summary["ContentSummary"];
    assert_eq!(
        (cs["fileCount"].clone(), cs["directoryCount"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(cs["length"], 10);
    assert_eq!(cs["spaceConsumed"], 20);
    assert_eq!(cs["quota"], -1);

    let home = web.get("/", "op=GETHOMEDIRECTORY&user.name=carol").await;
    assert_eq!(home.json(), json!({"Path": "/user/carol"}));
    let defaults = web.get("/", "op=GETSERVERDEFAULTS").await.json();
    assert_eq!(defaults["FsServerDefaults"]["replication"], 2);
    assert_eq!(
        defaults["FsServerDefaults"]["checksumType"], 2,
        "CRC32C's id"
    );

    // RENAME and SETREPLICATION answer `{"boolean": true}`; the setters, nothing.
    web.steps(&[
        (
            &format!("PUT /home/alice/d/f?op=RENAME&{q}&destination=/home/alice/g"),
            True,
        ),
        (
            &format!("PUT /home/alice/g?op=SETREPLICATION&{q}&replication=1"),
            True,
        ),
        (
            &format!("PUT /home/alice/g?op=SETPERMISSION&{q}&permission=600"),
            Empty,
        ),
        (
            &format!("PUT /home/alice/g?op=SETTIMES&{q}&modificationtime=1000&accesstime=2000"),
            Empty,
        ),
    ])
    .await;
    let g = cluster.client().stat("/home/alice/g").await.unwrap();
    assert_eq!(
        (
            g.replication,
            g.permission,
            g.modification_time,
            g.access_time
        ),
        (1, 0o600, 1000, 2000)
    );
    let superuser = tusk_common::current_user();
    web.steps(&[
        // Only the superuser gives a file away.
        (
            &format!("PUT /home/alice/g?op=SETOWNER&{q}&owner=bob"),
            Refused(DENIED),
        ),
        (
            &format!("PUT /home/alice/g?op=SETOWNER&user.name={superuser}&owner=bob&group=staff"),
            Empty,
        ),
        (
            &format!("DELETE /home/alice/d?op=DELETE&{q}&recursive=true"),
            True,
        ),
    ])
    .await;

    // What WebHDFS changed is in the edit log: it survives a NameNode restart.
    cluster.restart_namenode().await.unwrap();
    let g = cluster.client().stat("/home/alice/g").await.unwrap();
    assert_eq!(
        (g.owner.as_str(), g.group.as_str(), g.permission),
        ("bob", "staff", 0o600)
    );
    assert!(cluster
        .client()
        .get_file_info("/home/alice/d")
        .await
        .unwrap()
        .is_none());
}

/// Sends a request line as given (no client normalises `..` away) and returns the
/// status and body.
async fn raw_get(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status = out[9..12].parse().unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_hadoops_error_json_and_status() {
    let cluster = cluster().await;
    let web = Web::new(&cluster);
    cluster
        .client()
        .write_file("/f", b"abc", CreateOptions::default())
        .await
        .unwrap();

    web.steps(&[
        ("GET /f?op=OPEN&offset=-1",
         RefusedWith(BAD_ARGUMENT, "Invalid value for webhdfs parameter \"offset\": Invalid parameter range: offset = -1 < 0")),
        ("GET /f?op=OPEN&length=ten", Refused(BAD_ARGUMENT)),
        ("GET /f?op=FROBNICATE",
         RefusedWith(BAD_ARGUMENT, "Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.FROBNICATE")),
        // An operation under the wrong method is as unknown.
        ("GET /f?op=MKDIRS", Refused(BAD_ARGUMENT)),
        ("GET /f", Refused(BAD_ARGUMENT)),
        ("PUT /f?op=RENAME",
         RefusedWith(BAD_ARGUMENT, "Required param destination for op: RENAME is null or empty")),
        ("PUT /f?op=SETOWNER&user.name=root",
         RefusedWith(BAD_ARGUMENT, "Both owner and group are empty.")),
        ("PUT /f?op=SETPERMISSION&permission=9", Refused(BAD_ARGUMENT)),
        ("GET /f?op=GETFILESTATUS&user.name=a%20b", Refused(BAD_ARGUMENT)),
        ("GET /missing?op=GETFILESTATUS", RefusedWith(NOT_FOUND, "File does not exist: /missing")),
        ("GET /missing?op=OPEN", Refused(NOT_FOUND)),
        ("GET /missing?op=LISTSTATUS", Refused(NOT_FOUND)),
        ("GET /f?op=GETFILESTATUS&user.name=alice&doas=root",
         RefusedWith(NOT_AUTHORIZED, "User: alice is not allowed to impersonate root")),
        // Operations Tusk does not run yet say so.
        ("PUT /f?op=CREATESYMLINK",
         RefusedWith((400, "UnsupportedOperationException"), "CREATESYMLINK is not supported")),
    ])
    .await;

    // `..` is refused as the NameNode refuses it, on both servers.
    for addr in [cluster.namenode_http_addr(), cluster.datanode_http_addr(0)] {
        let (status, body) = raw_get(addr, "/webhdfs/v1/a/../f?op=OPEN").await;
        assert_eq!(status, 400, "{body}");
        let e: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(e["RemoteException"]["exception"], "InvalidPathException");
        assert_eq!(
            e["RemoteException"]["javaClassName"],
            "org.apache.hadoop.fs.InvalidPathException"
        );
    }
    // A DataNode runs only the data operations.
    let dn = cluster.datanode_http_addr(0);
    web.send(
        Method::PUT,
        &format!("http://{dn}/webhdfs/v1/x?op=MKDIRS"),
        Vec::new(),
    )
    .await
    .assert_error(400, "IllegalArgumentException");
    web.send(
        Method::GET,
        &format!("http://{dn}/webhdfs/v1/f?op=OPEN&offset=4"),
        Vec::new(),
    )
    .await
    .assert_error(403, "EOFException");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_and_other_users_cannot_write_a_private_directory() {
    let cluster = cluster().await;
    let web = Web::new(&cluster);
    let owner = cluster.client();
    owner.mkdirs("/private", 0o700, true).await.unwrap();
    owner
        .write_file("/private/secret", b"s", CreateOptions::default())
        .await
        .unwrap();

    // No user.name: dr.who.
    let m = web
        .put("/private/x", "op=MKDIRS")
        .await
        .assert_error(403, "AccessControlException");
    assert!(m.contains("dr.who"), "{m}");
    web.create("/private/y", "", b"data".to_vec())
        .await
        .assert_error(403, "AccessControlException");
    web.steps(&[
        (
            "DELETE /private/secret?op=DELETE&user.name=mallory",
            Refused(DENIED),
        ),
        (
            "GET /private/secret?op=OPEN&user.name=mallory",
            Refused(DENIED),
        ),
        ("GET /private?op=LISTSTATUS", Refused(DENIED)),
    ])
    .await;
    // Whether or not the child exists: a 403, never a 404 or "already exists".
    for child in ["/private/secret", "/private/nope"] {
        let m = web
            .get(child, "op=GETFILESTATUS&user.name=mallory")
            .await
            .assert_error(403, "AccessControlException");
        assert!(m.contains("access=EXECUTE, inode=\"/private\""), "{m}");
        web.create(child, "user.name=mallory&overwrite=false", b"x".to_vec())
            .await
            .assert_error(403, "AccessControlException");
    }
    let listing = owner.list("/private").await.unwrap();
    assert_eq!(listing.len(), 1, "nothing was created");
    assert_eq!(owner.read_file("/private/secret").await.unwrap(), b"s");
}

/// The `ip:infoPort` of the DataNodes holding the last block of `path`.
async fn last_block_holders(cluster: &MiniCluster, path: &str) -> Vec<String> {
    let located = cluster
        .client()
        .block_locations(path, 0, u64::MAX >> 1)
        .await
        .unwrap();
    let last = located.blocks.last().expect("a block");
    last.locs
        .iter()
        .map(|dn| format!("{}:{}", dn.id.ip_addr, dn.id.info_port))
        .collect()
}

/// The authority of a redirect's URL.
fn authority(location: &str) -> &str {
    let rest = location.strip_prefix("http://").unwrap();
    &rest[..rest.find('/').unwrap()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_and_checksum_redirect_to_a_holder_of_the_last_block() {
    let cluster = cluster().await;
    let web = Web::new(&cluster);
    home(&cluster, "/a", "alice").await;
    let client = cluster.client();
    // One replica of two blocks, so "a holder of the last block" is one DataNode.
    let opts = CreateOptions {
        replication: Some(1),
        block_size: Some(1024 * 1024),
        ..CreateOptions::default()
    };
    let first = test_data(1024 * 1024 + 100, 7);
    client.write_file("/a/f", &first, opts).await.unwrap();
    client.set_owner("/a/f", Some("alice"), None).await.unwrap();
    let holders = last_block_holders(&cluster, "/a/f").await;

    // APPEND: 307 to the holder, then the body there; 200 with no body.
    let step1 = web.post("/a/f", "op=APPEND&user.name=alice").await;
    assert_eq!(step1.status, StatusCode::TEMPORARY_REDIRECT);
    let location = step1.location.unwrap();
    assert_eq!(vec![authority(&location).to_string()], holders);
    assert!(location.contains("op=APPEND"), "{location}");
    let added = test_data(5000, 8);
    web.send(Method::POST, &location, added.clone())
        .await
        .assert_empty();
    let mut whole = first.clone();
    whole.extend_from_slice(&added);
    assert_eq!(client.read_file("/a/f").await.unwrap(), whole);
    assert!(client.is_file_closed("/a/f").await.unwrap());

    // noredirect: the same Location as JSON.
    let json_location = web
        .post("/a/f", "op=APPEND&user.name=alice&noredirect=true")
        .await;
    assert_eq!(json_location.status, StatusCode::OK);
    let url = json_location.json()["Location"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        url.contains("op=APPEND") && !url.contains("noredirect"),
        "{url}"
    );
    let again = web.send(Method::POST, &url, b"!".to_vec()).await;
    assert_eq!(again.status, StatusCode::OK);
    whole.push(b'!');
    assert_eq!(client.read_file("/a/f").await.unwrap(), whole);

    // GETFILECHECKSUM: Hadoop's JSON, the same value the RPC client computes.
    let step1 = web.get("/a/f", "op=GETFILECHECKSUM").await;
    assert_eq!(step1.status, StatusCode::TEMPORARY_REDIRECT);
    let location = step1.location.unwrap();
    assert_eq!(
        vec![authority(&location).to_string()],
        last_block_holders(&cluster, "/a/f").await
    );
    let answer = web.send(Method::GET, &location, Vec::new()).await;
    assert_eq!(answer.status, StatusCode::OK);
    let expected = client
        .file_checksum("/a/f", ChecksumCombineMode::Md5Md5Crc)
        .await
        .unwrap();
    assert_eq!(
        answer.json(),
        json!({"FileChecksum": {
            "algorithm": expected.algorithm_name(),
            "bytes": expected.hex(),
            "length": 28,
        }})
    );
    assert_eq!(expected.algorithm_name(), "MD5-of-2048MD5-of-512CRC32C");

    // Errors: a missing file at the NameNode; another user's append at the DataNode,
    // which leaves the file as it was.
    web.steps(&[
        (
            "POST /a/missing?op=APPEND&user.name=alice",
            Refused(NOT_FOUND),
        ),
        ("GET /a/missing?op=GETFILECHECKSUM", Refused(NOT_FOUND)),
    ])
    .await;
    let step1 = web.post("/a/f", "op=APPEND&user.name=mallory").await;
    web.send(Method::POST, &step1.location.unwrap(), b"x".to_vec())
        .await
        .assert_error(403, "AccessControlException");
    assert_eq!(client.read_file("/a/f").await.unwrap(), whole);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncate_and_concat_answer_hadoops_json() {
    let mut cluster = cluster().await;
    let web = Web::new(&cluster);
    home(&cluster, "/t", "alice").await;
    let alice = cluster.client_with(|o| o.user = "alice".into());
    let data = test_data(3000, 9);
    for name in ["/t/a", "/t/b", "/t/c"] {
        alice
            .write_file(name, &data, CreateOptions::default())
            .await
            .unwrap();
    }

    // TRUNCATE at a block boundary is done at once; inside a block it answers false
    // and the file closes once the last block is recovered.
    let cut = web
        .post("/t/a", "op=TRUNCATE&newlength=1000&user.name=alice")
        .await;
    assert_eq!(cut.json(), json!({"boolean": false}));
    wait_for("truncate recovery", Duration::from_secs(30), || async {
        alice.is_file_closed("/t/a").await.unwrap()
    })
    .await
    .unwrap();
    assert_eq!(alice.read_file("/t/a").await.unwrap(), &data[..1000]);
    web.steps(&[
        ("POST /t/c?op=TRUNCATE&newlength=0&user.name=alice", True),
        (
            "POST /t/b?op=TRUNCATE&user.name=alice",
            RefusedWith(
                BAD_ARGUMENT,
                "Required param newlength for op: TRUNCATE is null or empty",
            ),
        ),
        (
            "POST /t/b?op=TRUNCATE&newlength=10&user.name=mallory",
            Refused(DENIED),
        ),
    ])
    .await;
    assert_eq!(alice.stat("/t/c").await.unwrap().length, 0);

    // CONCAT: 200 with no body; the sources' bytes follow the target's and the
    // sources are gone.
    web.post("/t/a", "op=CONCAT&sources=/t/b&user.name=alice")
        .await
        .assert_empty();
    let mut joined = data[..1000].to_vec();
    joined.extend_from_slice(&data);
    assert_eq!(alice.read_file("/t/a").await.unwrap(), joined);
    assert!(alice.stat("/t/b").await.is_err());
    web.steps(&[
        (
            "POST /t/a?op=CONCAT&user.name=alice",
            RefusedWith(
                BAD_ARGUMENT,
                "Required param sources for op: CONCAT is null or empty",
            ),
        ),
        (
            "POST /t/a?op=CONCAT&sources=/t/missing&user.name=alice",
            Refused(NOT_FOUND),
        ),
    ])
    .await;

    // Both are in the edit log.
    cluster.restart_namenode().await.unwrap();
    let client = cluster.client_with(|o| o.user = "alice".into());
    let read = wait_for("the concatenated file", Duration::from_secs(30), || async {
        client.read_file("/t/a").await.ok()
    })
    .await
    .unwrap();
    assert_eq!(read, joined);
    assert_eq!(client.stat("/t/c").await.unwrap().length, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_quota_and_snapshot_operations_answer_hadoops_json() {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.acls.enabled", "true")
        .start()
        .await;
    let web = Web::new(&cluster);
    home(&cluster, "/m", "alice").await;
    let put = |q: &str| format!("{q}&user.name=alice");

    // ACLs: set, modify, read back as Hadoop's AclStatus, remove entries, remove all.
    web.steps(&[
        (&put("PUT /m?op=SETACL&aclspec=user::rwx,group::r-x,other::---,user:bob:r-x"), Empty),
        (&put("PUT /m?op=MODIFYACLENTRIES&aclspec=default:group:dev:rwx"), Empty),
        ("GET /m?op=GETACLSTATUS", Json(json!({"AclStatus": {
            // The default ACL gets copies of the access ACL's base entries; the group
            // bits show the mask (r-x).
            "entries": ["user:bob:r-x", "group::r-x", "default:user::rwx", "default:group::r-x", "default:group:dev:rwx", "default:mask::rwx",
                        "default:other::---"],
            "group": "supergroup",
            "owner": "alice",
            "permission": "750",
            "stickyBit": false,
        }}))),
        (&put("PUT /m?op=REMOVEACLENTRIES&aclspec=user:bob"), Empty),
        (&put("PUT /m?op=REMOVEDEFAULTACL"), Empty),
    ])
    .await;
    let entries = web.get("/m", "op=GETACLSTATUS").await.json();
    assert_eq!(entries["AclStatus"]["entries"], json!(["group::r-x"]));
    web.steps(&[
        (
            &put("PUT /m?op=SETACL"),
            RefusedWith(
                BAD_ARGUMENT,
                "Required param aclspec for op: SETACL is null or empty",
            ),
        ),
        (
            &put("PUT /m?op=MODIFYACLENTRIES&aclspec=person:bob:rwx"),
            Refused(BAD_ARGUMENT),
        ),
        ("PUT /m?op=REMOVEACL&user.name=mallory", Refused(DENIED)),
        ("GET /missing?op=GETACLSTATUS", Refused(NOT_FOUND)),
        // CHECKACCESS: the owner holds rwx; another user (other::---) not even read.
        ("GET /m?op=CHECKACCESS&fsaction=rwx&user.name=alice", Served),
        (
            "GET /m?op=CHECKACCESS&fsaction=r--&user.name=bob",
            Refused(DENIED),
        ),
        (
            "GET /m?op=CHECKACCESS&fsaction=rwz&user.name=bob",
            Refused(BAD_ARGUMENT),
        ),
        (&put("PUT /m?op=REMOVEACL"), Served),
    ])
    .await;
    let plain = web.get("/m", "op=GETACLSTATUS").await.json();
    assert_eq!(plain["AclStatus"]["entries"], json!([]));

    // Quotas: set by the superuser only, read back as Hadoop's QuotaUsage; -1 clears.
    let admin = tusk_common::current_user();
    let as_admin = |q: &str| format!("{q}&user.name={admin}");
    web.steps(&[
        (
            &put("PUT /m?op=SETQUOTA&namespacequota=10"),
            Refused(DENIED),
        ),
        (
            &as_admin("PUT /m?op=SETQUOTA&namespacequota=10&storagespacequota=1048576"),
            Served,
        ),
        (
            "GET /m?op=GETQUOTAUSAGE",
            Json(json!({"QuotaUsage": {
                "fileAndDirectoryCount": 1, "quota": 10, "spaceConsumed": 0,
                "spaceQuota": 1048576, "typeQuota": {},
            }})),
        ),
    ])
    .await;
    web.put("/m", &as_admin("op=SETQUOTA&storagespacequota=-1"))
        .await;
    let usage = web.get("/m", "op=GETQUOTAUSAGE").await.json();
    assert_eq!(
        (
            usage["QuotaUsage"]["quota"].clone(),
            usage["QuotaUsage"]["spaceQuota"].clone()
        ),
        (json!(10), json!(-1))
    );
    web.put("/m", &as_admin("op=SETQUOTA&namespacequota=-1"))
        .await;
    web.get("/missing", "op=GETQUOTAUSAGE")
        .await
        .assert_error(404, "FileNotFoundException");

    // Snapshots: allowing needs the superuser; create answers the snapshot's path.
    web.steps(&[
        (&put("PUT /m?op=ALLOWSNAPSHOT"), Refused(DENIED)),
        (&as_admin("PUT /m?op=ALLOWSNAPSHOT"), Served),
    ])
    .await;
    web.create("/m/f", "user.name=alice", b"v1".to_vec()).await;
    web.steps(&[
        (
            &put("PUT /m?op=CREATESNAPSHOT&snapshotname=s1"),
            Json(json!({"Path": "/m/.snapshot/s1"})),
        ),
        (
            &put("PUT /m?op=CREATESNAPSHOT&snapshotname=s1"),
            Refused(SNAPSHOT_REFUSED),
        ),
        (
            &put("PUT /m?op=RENAMESNAPSHOT&oldsnapshotname=s1&snapshotname=s2"),
            Served,
        ),
        (
            &put("PUT /m?op=RENAMESNAPSHOT&snapshotname=s3"),
            RefusedWith(
                BAD_ARGUMENT,
                "Required param oldsnapshotname for op: RENAMESNAPSHOT is null or empty",
            ),
        ),
    ])
    .await;
    let client = cluster.client();
    assert_eq!(client.read_file("/m/.snapshot/s2/f").await.unwrap(), b"v1");

    // What WebHDFS changed survives a restart (edit log).
    cluster.restart_namenode().await.unwrap();
    let web = Web::new(&cluster);
    let client = cluster.client();
    // The DataNode reports its blocks to the restarted NameNode.
    let read = wait_for("the snapshot's file", Duration::from_secs(30), || async {
        client.read_file("/m/.snapshot/s2/f").await.ok()
    })
    .await
    .unwrap();
    assert_eq!(read, b"v1");
    web.delete("/m", &put("op=DELETESNAPSHOT&snapshotname=s2"))
        .await
        .assert_ok();
    assert!(client.stat("/m/.snapshot/s2").await.is_err());
    web.steps(&[
        (
            &put("DELETE /m?op=DELETESNAPSHOT&snapshotname=s2"),
            Refused(SNAPSHOT_REFUSED),
        ),
        (&as_admin("PUT /m?op=DISALLOWSNAPSHOT"), Served),
        (&put("PUT /m?op=CREATESNAPSHOT"), Refused(SNAPSHOT_REFUSED)),
    ])
    .await;
}

/// `{"XAttrs":[...]}` as (name, value) pairs, in the order given.
fn xattr_pairs(answer: &Answer) -> Vec<(String, Value)> {
    answer.json()["XAttrs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap().to_string(), x["value"].clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xattr_and_storage_policy_operations_answer_hadoops_json() {
    let cluster = cluster().await;
    let web = Web::new(&cluster);
    home(&cluster, "/x", "alice").await;
    let alice = |q: &str| format!("{q}&user.name=alice");
    let bob = |q: &str| format!("{q}&user.name=bob");

    // SETXATTR creates; GETXATTRS reads back in each encoding.
    web.steps(&[
        (
            &alice("PUT /x?op=SETXATTR&xattr.name=user.color&xattr.value=%22blue%22&flag=CREATE"),
            Served,
        ),
        (
            &alice("PUT /x?op=SETXATTR&xattr.name=user.size&xattr.value=0x0aff&flag=CREATE"),
            Served,
        ),
    ])
    .await;
    for (encoding, value) in [
        ("text", "\"blue\""),
        ("hex", "0x626c7565"),
        ("BASE64", "0sYmx1ZQ=="),
    ] {
        let got = web
            .get(
                "/x",
                &alice(&format!(
                    "op=GETXATTRS&xattr.name=user.color&encoding={encoding}"
                )),
            )
            .await;
        assert_eq!(
            got.json(),
            json!({"XAttrs": [{"name": "user.color", "value": value}]})
        );
    }
    // Several names come back in the order asked; none asks for all.
    let two = web
        .get(
            "/x",
            &bob("op=GETXATTRS&xattr.name=user.size&xattr.name=user.color&encoding=hex"),
        )
        .await;
    assert_eq!(
        xattr_pairs(&two),
        [
            ("user.size".to_string(), json!("0x0aff")),
            ("user.color".to_string(), json!("0x626c7565")),
        ]
    );
    let mut all = xattr_pairs(&web.get("/x", &alice("op=GETXATTRS&encoding=base64")).await);
    all.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        all,
        [
            ("user.color".to_string(), json!("0sYmx1ZQ==")),
            ("user.size".to_string(), json!("0sCv8=")),
        ]
    );
    // LISTXATTRS: the names as a JSON array inside a string.
    let listed = web.get("/x", &alice("op=LISTXATTRS")).await.json();
    let mut names: Vec<String> =
        serde_json::from_str(listed["XAttrNames"].as_str().unwrap()).unwrap();
    names.sort();
    assert_eq!(names, ["user.color", "user.size"]);

    // REPLACE changes a value; the flags are Hadoop's XAttrSetFlag checks.
    web.put(
        "/x",
        &alice("op=SETXATTR&xattr.name=user.color&xattr.value=red&flag=REPLACE"),
    )
    .await
    .assert_ok();
    let red = web
        .get(
            "/x",
            &alice("op=GETXATTRS&xattr.name=user.color&encoding=text"),
        )
        .await;
    assert_eq!(
        xattr_pairs(&red),
        [("user.color".to_string(), json!("\"red\""))]
    );
    web.steps(&[
        ("PUT /x?op=SETXATTR&xattr.name=user.nope&xattr.value=1&flag=REPLACE&user.name=alice",
         RefusedWith((403, "IOException"), "XAttr: user.nope does not exist. The CREATE flag must be specified.")),
        ("PUT /x?op=SETXATTR&xattr.name=user.color&xattr.value=1&flag=CREATE&user.name=alice",
         RefusedWith((403, "IOException"), "XAttr: user.color already exists. The REPLACE flag must be specified.")),
        ("PUT /x?op=SETXATTR&xattr.name=user.a&xattr.value=1&user.name=alice",
         RefusedWith(BAD_ARGUMENT, "Required param flag for op: SETXATTR is null or empty")),
        ("PUT /x?op=SETXATTR&flag=CREATE&user.name=alice",
         RefusedWith(BAD_ARGUMENT, "Required param xattr.name for op: SETXATTR is null or empty")),
        ("PUT /x?op=SETXATTR&xattr.name=user.a&flag=APPEND&user.name=alice",
         RefusedWith(BAD_ARGUMENT, "Invalid value for webhdfs parameter \"flag\": No enum constant org.apache.hadoop.fs.XAttrSetFlag.APPEND")),
        ("PUT /x?op=SETXATTR&xattr.name=color&flag=CREATE&user.name=alice",
         RefusedWith((400, "HadoopIllegalArgumentException"), "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")),
        ("PUT /x?op=REMOVEXATTR&user.name=alice",
         RefusedWith(BAD_ARGUMENT, "Required param xattr.name for op: REMOVEXATTR is null or empty")),
        ("GET /x?op=GETXATTRS&xattr.name=user.color&user.name=alice",
         RefusedWith(BAD_ARGUMENT, "Required param encoding for op: GETXATTRS is null or empty")),
        ("GET /x?op=GETXATTRS&xattr.name=user.nope&encoding=text&user.name=alice",
         RefusedWith((403, "IOException"), "At least one of the attributes provided was not found.")),
        ("GET /missing?op=LISTXATTRS&user.name=alice", Refused(NOT_FOUND)),
        // Permissions are the RPC path's: writing needs write access, trusted. the superuser.
        ("PUT /x?op=SETXATTR&xattr.name=user.b&flag=CREATE&user.name=bob", Refused(DENIED)),
        ("PUT /x?op=SETXATTR&xattr.name=trusted.t&flag=CREATE&user.name=alice",
         RefusedWith(DENIED, "User doesn't have permission for xattr: trusted.t")),
    ])
    .await;

    // REMOVEXATTR; the RPC client sees what WebHDFS left.
    web.steps(&[
        (
            &alice("PUT /x?op=REMOVEXATTR&xattr.name=user.color"),
            Served,
        ),
        (
            &alice("GET /x?op=LISTXATTRS"),
            Json(json!({"XAttrNames": "[\"user.size\"]"})),
        ),
        (
            &alice("PUT /x?op=REMOVEXATTR&xattr.name=user.color"),
            Refused((403, "IOException")),
        ),
    ])
    .await;
    let over_rpc = cluster.client().get_xattrs("/x", vec![]).await.unwrap();
    assert_eq!(over_rpc.len(), 1);
    assert_eq!(over_rpc[0].name, "size");
    assert_eq!(over_rpc[0].value.as_deref(), Some(&[0x0a, 0xff][..]));

    // Storage policies: Hadoop's built-in suite, HOT by default and inherited.
    let policies = web.get("/", "op=GETALLSTORAGEPOLICY").await.json();
    let policies = policies["BlockStoragePolicies"]["BlockStoragePolicy"]
        .as_array()
        .unwrap()
        .clone();
    let hot = json!({"copyOnCreateFile": false, "creationFallbacks": [], "id": 7, "name": "HOT",
                     "replicationFallbacks": ["ARCHIVE"], "storageTypes": ["DISK"]});
    assert!(policies.contains(&hot), "{policies:?}");
    let lazy = policies
        .iter()
        .find(|p| p["name"] == "LAZY_PERSIST")
        .unwrap();
    assert_eq!(lazy["copyOnCreateFile"], true);
    assert_eq!(lazy["storageTypes"], json!(["RAM_DISK", "DISK"]));
    let policy_of = |path: &'static str| {
        let web = &web;
        async move {
            web.get(path, "op=GETSTORAGEPOLICY&user.name=alice")
                .await
                .json()
        }
    };
    assert_eq!(policy_of("/x").await, json!({"BlockStoragePolicy": hot}));
    web.steps(&[
        (
            &alice("PUT /x?op=SETSTORAGEPOLICY&storagepolicy=COLD"),
            Served,
        ),
        (&alice("PUT /x/sub?op=MKDIRS"), Served),
    ])
    .await;
    let cold = policy_of("/x/sub").await;
    assert_eq!(cold["BlockStoragePolicy"]["name"], "COLD");
    assert_eq!(cold["BlockStoragePolicy"]["id"], 2);
    let status = web.get("/x", "op=GETFILESTATUS").await.json();
    assert_eq!(status["FileStatus"]["storagePolicy"], 2);
    web.steps(&[
        (
            &alice("PUT /x?op=SETSTORAGEPOLICY"),
            RefusedWith(BAD_ARGUMENT, "Storage policy name is empty."),
        ),
        (
            &alice("PUT /x?op=SETSTORAGEPOLICY&storagepolicy=LUKEWARM"),
            Refused((400, "HadoopIllegalArgumentException")),
        ),
        (
            &bob("PUT /x?op=SETSTORAGEPOLICY&storagepolicy=HOT"),
            Refused(DENIED),
        ),
        (&alice("POST /x?op=UNSETSTORAGEPOLICY"), Served),
    ])
    .await;
    assert_eq!(
        policy_of("/x/sub").await["BlockStoragePolicy"]["name"],
        "HOT"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_reports_trash_root_status_and_block_locations_answer_hadoops_json() {
    let cluster = cluster().await;
    let web = Web::new(&cluster);
    home(&cluster, "/s", "alice").await;
    let alice = |q: &str| format!("{q}&user.name=alice");
    let admin = tusk_common::current_user();

    // A diff between two snapshots shows a deleted and a created file.
    web.put("/s", &format!("op=ALLOWSNAPSHOT&user.name={admin}"))
        .await
        .assert_ok();
    web.create("/s/old", "user.name=alice", b"o".to_vec()).await;
    web.steps(&[
        (&alice("PUT /s?op=CREATESNAPSHOT&snapshotname=s1"), Served),
        (&alice("DELETE /s/old?op=DELETE"), True),
    ])
    .await;
    web.create("/s/new", "user.name=alice", b"n".to_vec()).await;
    web.put("/s", &alice("op=CREATESNAPSHOT&snapshotname=s2"))
        .await
        .assert_ok();
    let diff = web
        .get(
            "/s",
            &alice("op=GETSNAPSHOTDIFF&oldsnapshotname=s1&snapshotname=s2"),
        )
        .await
        .json();
    let report = &diff["SnapshotDiffReport"];
    assert_eq!(report["snapshotRoot"], "/s");
    assert_eq!(report["fromSnapshot"], "s1");
    assert_eq!(report["toSnapshot"], "s2");
    let entries = report["diffList"].as_array().unwrap();
    for entry in [
        json!({"sourcePath": "", "type": "MODIFY"}),
        json!({"sourcePath": "new", "type": "CREATE"}),
        json!({"sourcePath": "old", "type": "DELETE"}),
    ] {
        assert!(entries.contains(&entry), "{entry} not in {diff}");
    }
    assert_eq!(entries.len(), 3, "{diff}");
    // Against the current tree (no `snapshotname`): `toSnapshot` is null.
    web.create("/s/later", "user.name=alice", b"l".to_vec())
        .await;
    let since = web
        .get("/s", &alice("op=GETSNAPSHOTDIFF&oldsnapshotname=s2"))
        .await
        .json();
    assert_eq!(since["SnapshotDiffReport"]["toSnapshot"], Value::Null);
    assert!(since["SnapshotDiffReport"]["diffList"]
        .as_array()
        .unwrap()
        .contains(&json!({"sourcePath": "later", "type": "CREATE"})));
    // The listing form Hadoop's client asks for first: one page, no cursor left.
    let listing = web
        .get(
            "/s",
            &alice("op=GETSNAPSHOTDIFFLISTING&oldsnapshotname=s1&snapshotname=s2"),
        )
        .await
        .json();
    let listing = &listing["SnapshotDiffReportListing"];
    assert_eq!(listing["lastIndex"], -1);
    assert_eq!(listing["lastPath"], "");
    assert_eq!(listing["isFromEarlier"], true);
    assert_eq!(listing["createList"][0]["sourcePath"], "new");
    assert_eq!(listing["deleteList"][0]["sourcePath"], "old");
    assert_eq!(listing["createList"].as_array().unwrap().len(), 1);
    web.get(
        "/s",
        &alice("op=GETSNAPSHOTDIFF&oldsnapshotname=nope&snapshotname=s2"),
    )
    .await
    .assert_error(403, "SnapshotException");

    // The snapshots of a directory, and the snapshottable directories of a user.
    let list = web.get("/s", &alice("op=GETSNAPSHOTLIST")).await.json();
    let snaps = list["SnapshotList"].as_array().unwrap();
    let paths: Vec<&str> = snaps
        .iter()
        .map(|s| s["fullPath"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/s/.snapshot/s1", "/s/.snapshot/s2"]);
    assert_eq!(snaps[1]["dirStatus"]["pathSuffix"], "s2");
    assert_eq!(snaps[1]["deletionStatus"], "ACTIVE");
    assert!(snaps[0]["snapshotID"].as_u64() < snaps[1]["snapshotID"].as_u64());
    web.steps(&[
        (&alice("PUT /s/plain?op=MKDIRS"), Served),
        (
            &alice("GET /s/plain?op=GETSNAPSHOTLIST"),
            Refused(SNAPSHOT_REFUSED),
        ),
    ])
    .await;
    let mine = web
        .get("/", &alice("op=GETSNAPSHOTTABLEDIRECTORYLIST"))
        .await
        .json();
    let dirs = mine["SnapshottableDirectoryList"].as_array().unwrap();
    assert_eq!(dirs.len(), 1, "{mine}");
    assert_eq!(dirs[0]["dirStatus"]["pathSuffix"], "s");
    assert_eq!(dirs[0]["dirStatus"]["owner"], "alice");
    assert_eq!(dirs[0]["parentFullPath"], "/");
    assert_eq!(dirs[0]["snapshotNumber"], 2);
    assert_eq!(dirs[0]["snapshotQuota"], 65536);
    let client = cluster.client();
    client.mkdirs("/private", 0o700, true).await.unwrap();
    web.steps(&[
        (
            "GET /?op=GETSNAPSHOTTABLEDIRECTORYLIST&user.name=bob",
            Json(json!({"SnapshottableDirectoryList": null})),
        ),
        // GETTRASHROOT: the user's own trash; the parent must be readable.
        (
            &alice("GET /s/new?op=GETTRASHROOT"),
            Json(json!({"Path": "/user/alice/.Trash"})),
        ),
        (
            "GET /?op=GETTRASHROOT",
            Json(json!({"Path": "/user/dr.who/.Trash"})),
        ),
        (
            "GET /private/x?op=GETTRASHROOT&user.name=bob",
            Refused(DENIED),
        ),
    ])
    .await;

    // GETSTATUS: the live DataNodes' totals.
    let status = web.get("/", "op=GETSTATUS").await.json();
    let fs = status["FsStatus"].as_object().unwrap();
    assert_eq!(fs.len(), 3, "{status}");
    let (capacity, used, remaining) = (
        fs["capacity"].as_u64().unwrap(),
        fs["used"].as_u64().unwrap(),
        fs["remaining"].as_u64().unwrap(),
    );
    assert!(
        capacity > 0 && remaining > 0 && used + remaining <= capacity,
        "{status}"
    );

    // GETFILEBLOCKLOCATIONS names the live DataNodes holding each block.
    let options = CreateOptions {
        block_size: Some(1 << 20),
        ..CreateOptions::default()
    };
    let data = test_data(3 << 20, 5);
    client
        .write_file("/s/blocks", &data, options)
        .await
        .unwrap();
    // A close needs one reported replica per block; wait for the second's report.
    tusk_cluster::wait_for_replicas(&client, "/s/blocks", 2)
        .await
        .unwrap();
    let datanodes: Vec<String> = (0..2)
        .map(|i| cluster.datanode_addr(i).to_string())
        .collect();
    let located = web
        .get("/s/blocks", &alice("op=GETFILEBLOCKLOCATIONS"))
        .await
        .json();
    let blocks = located["BlockLocations"]["BlockLocation"]
        .as_array()
        .unwrap();
    assert_eq!(blocks.len(), 3, "{located}");
    for (i, block) in blocks.iter().enumerate() {
        assert_eq!(block["offset"], (i as u64) << 20);
        assert_eq!(block["length"], 1 << 20);
        assert_eq!(block["corrupt"], false);
        let names: Vec<&str> = block["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{block}");
        for name in &names {
            assert!(
                datanodes.iter().any(|d| d == name),
                "{name} is not a DataNode: {datanodes:?}"
            );
        }
        let racks: Vec<String> = names.iter().map(|n| format!("/default-rack/{n}")).collect();
        assert_eq!(block["topologyPaths"], json!(racks));
        assert_eq!(block["storageTypes"], json!(["DISK", "DISK"]));
        assert_eq!(block["hosts"].as_array().unwrap().len(), 2);
    }
    let second = web
        .get(
            "/s/blocks",
            &alice("op=GETFILEBLOCKLOCATIONS&offset=1048576&length=1"),
        )
        .await
        .json();
    let second = second["BlockLocations"]["BlockLocation"]
        .as_array()
        .unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["offset"], 1 << 20);
    client
        .write_file("/private/secret", b"s", CreateOptions::default())
        .await
        .unwrap();
    web.steps(&[
        (
            &alice("GET /s/missing?op=GETFILEBLOCKLOCATIONS"),
            RefusedWith(NOT_FOUND, "File does not exist: /s/missing"),
        ),
        (
            "GET /private/secret?op=GETFILEBLOCKLOCATIONS&user.name=bob",
            Refused(DENIED),
        ),
    ])
    .await;
}

/// `doas` as Hadoop's proxy users allow it: a gateway user named in
/// `hadoop.proxyuser.<user>.{hosts,users}` acts for the users listed (its writes are
/// theirs, through the DataNode's step too); anyone else, or from another host, is
/// refused with Hadoop's AuthorizationException.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_users_act_for_the_users_their_rules_name() {
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.replication", "1")
        .conf("hadoop.proxyuser.hue.hosts", "127.0.0.0/8")
        .conf("hadoop.proxyuser.hue.users", "alice")
        .conf("hadoop.proxyuser.far.hosts", "10.1.2.3")
        .conf("hadoop.proxyuser.far.users", "*")
        .start()
        .await;
    let web = Web::new(&cluster);
    home(&cluster, "/user/alice", "alice").await;

    let answer = web
        .get("/", "op=GETHOMEDIRECTORY&user.name=hue&doas=alice")
        .await;
    assert_eq!(answer.json()["Path"], "/user/alice");
    let written = web
        .create(
            "/user/alice/via-hue",
            "user.name=hue&doas=alice",
            b"hi".to_vec(),
        )
        .await;
    assert_eq!(written.status, StatusCode::CREATED);
    let status = cluster
        .client()
        .get_file_info("/user/alice/via-hue")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.owner, "alice", "the write is alice's");

    web.steps(&[
        (
            "GET /?op=GETHOMEDIRECTORY&user.name=hue&doas=bob",
            RefusedWith(
                NOT_AUTHORIZED,
                "User: hue is not allowed to impersonate bob",
            ),
        ),
        (
            "GET /?op=GETHOMEDIRECTORY&user.name=far&doas=alice",
            RefusedWith(
                NOT_AUTHORIZED,
                "Unauthorized connection for super-user: far from IP 127.0.0.1",
            ),
        ),
        (
            "PUT /user/alice/x?op=MKDIRS&user.name=mallory&doas=alice",
            Refused(NOT_AUTHORIZED),
        ),
    ])
    .await;
}
