//! WebHDFS over HTTPS (`dfs.http.policy=HTTP_AND_HTTPS`): a request to the NameNode's
//! HTTPS port is redirected to a DataNode's HTTPS port with `https://` (the port the
//! DataNode registered as its infoSecurePort), one over HTTP to its HTTP port; a file
//! written through the HTTPS redirect reads back the same over HTTPS.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls_pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tusk_cluster::MiniCluster;
use tusk_http::tls::{self, SelfSigned};

/// A TLS client that trusts `cert` only (rustls' defaults otherwise: ring, the one
/// provider built in).
fn trusting(cert: &[u8]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(cert.to_vec())).unwrap();
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

/// One HTTP/1.1 exchange over TLS with `client`, as `localhost`: status, `Location` (if
/// any) and body.
async fn over_tls(
    client: &TlsConnector,
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: &[u8],
) -> (u16, Option<String>, Vec<u8>) {
    let name = ServerName::try_from("localhost").unwrap();
    let tcp = TcpStream::connect(addr).await.unwrap();
    let mut tls = client.connect(name, tcp).await.unwrap();
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.write_all(body).await.unwrap();
    let mut response = Vec::new();
    tls.read_to_end(&mut response).await.unwrap();
    parse_response(&response)
}

/// Status, `Location` and body of an HTTP/1.1 response read to its end (the body
/// unchunked when chunked).
fn parse_response(response: &[u8]) -> (u16, Option<String>, Vec<u8>) {
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let status = head[9..12].parse().unwrap();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v.trim().to_string())
    };
    let mut body = response[split + 4..].to_vec();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = unchunk(&body);
    }
    (status, header("location"), body)
}

fn unchunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&data[..line_end]).unwrap().trim(), 16)
                .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[line_end + 2..line_end + 2 + size]);
        data = &data[line_end + 2 + size + 2..];
    }
}

/// `https://127.0.0.1:PORT/path?query` as the address and the request target.
fn split_https(location: &str) -> (SocketAddr, String) {
    let rest = location
        .strip_prefix("https://")
        .expect("an https:// location");
    let slash = rest.find('/').unwrap();
    (rest[..slash].parse().unwrap(), rest[slash..].to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn webhdfs_redirects_follow_the_scheme_to_the_datanodes_https_port() {
    let dir = tempfile::tempdir().unwrap();
    let cert = SelfSigned::generate(&["localhost".into(), "127.0.0.1".into()]).unwrap();
    let keystore = dir.path().join("keystore.pem");
    std::fs::write(&keystore, cert.keystore_pem()).unwrap();
    let cluster = MiniCluster::builder()
        .datanodes(1)
        .conf(tls::POLICY_KEY, "HTTP_AND_HTTPS")
        .conf("dfs.namenode.https-address", "127.0.0.1:0")
        .conf("dfs.datanode.https.address", "127.0.0.1:0")
        .conf(tls::KEYSTORE_LOCATION_KEY, keystore.display().to_string())
        .conf(tls::KEYSTORE_TYPE_KEY, "pem")
        .start()
        .await;
    let nn_https = cluster.namenode_https_addr().expect("HTTPS served");
    let client = trusting(&cert.cert);
    let dn_http = cluster.datanode_http_addr(0);

    // The NameNode's own user (HDFS's superuser) may write at the root.
    let me = tusk_common::current_user();
    let create = format!("/webhdfs/v1/secure.txt?op=CREATE&user.name={me}");
    let (status, location, _) = over_tls(&client, nn_https, "PUT", &create, b"").await;
    assert_eq!(status, 307);
    let location = location.expect("a redirect");
    let (dn_https, target) = split_https(&location);
    assert_ne!(dn_https.port(), dn_http.port(), "{location}");
    let data = b"written over HTTPS".repeat(1000);
    let (status, _, body) = over_tls(&client, dn_https, "PUT", &target, &data).await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));

    let open = format!("/webhdfs/v1/secure.txt?op=OPEN&user.name={me}");
    let (status, location, _) = over_tls(&client, nn_https, "GET", &open, b"").await;
    assert_eq!(status, 307);
    let (at, target) = split_https(&location.expect("a redirect"));
    assert_eq!(
        at, dn_https,
        "reads and writes go to the one DataNode's HTTPS port"
    );
    let (status, _, body) = over_tls(&client, at, "GET", &target, b"").await;
    assert_eq!(status, 200);
    assert_eq!(body, data);

    // The same request over HTTP goes to the DataNode's HTTP port with http://.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = http
        .get(format!("http://{}{open}", cluster.namenode_http_addr()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 307);
    let location = answer.headers()["location"].to_str().unwrap();
    assert!(
        location.starts_with(&format!("http://{dn_http}/")),
        "{location}"
    );
}
