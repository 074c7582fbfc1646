//! The file system path a request names (`/webhdfs/v1<path>`), and URIs built back
//! from paths for redirects.

use std::fmt::Write;

use tusk_rpc::HadoopException;

use crate::{Result, WebHdfsError, PREFIX};

/// The absolute path of a request whose URI path after [`PREFIX`] decodes to `rest`.
/// `.` and `..` components are refused here, before any server acts on them, as the
/// NameNode refuses them (`InvalidPathException`, 400).
pub fn fs_path(rest: &str) -> Result<String> {
    let path = format!("/{}", rest.trim_start_matches('/'));
    if path.split('/').any(|c| c == "." || c == "..") {
        return Err(WebHdfsError::of(
            HadoopException::InvalidPath,
            format!("Invalid path name {path}"),
        ));
    }
    Ok(path)
}

/// `{scheme}://{authority}/webhdfs/v1{path}?{query}`, every part percent-encoded.
pub fn url(scheme: &str, authority: &str, path: &str, query: &[(&str, &str)]) -> String {
    let mut url = format!("{scheme}://{authority}{PREFIX}");
    encode_into(&mut url, path, b"/");
    for (i, (k, v)) in query.iter().enumerate() {
        url.push(if i == 0 { '?' } else { '&' });
        encode_into(&mut url, k, b".");
        url.push('=');
        encode_into(&mut url, v, b"/:,");
    }
    url
}

/// Appends `s` with every byte but RFC 3986's unreserved ones and `keep` as `%XX`.
fn encode_into(out: &mut String, s: &str, keep: &[u8]) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_components_are_invalid() {
        assert_eq!(fs_path("a/b").unwrap(), "/a/b");
        assert_eq!(fs_path("").unwrap(), "/");
        let e = fs_path("a/../b").unwrap_err();
        assert_eq!(e.status(), 400);
        assert_eq!(e.message, "Invalid path name /a/../b");
        assert!(fs_path("./a").is_err());
    }

    #[test]
    fn urls_are_encoded() {
        assert_eq!(
            url(
                "http",
                "127.0.0.1:9864",
                "/a b/ü",
                &[("op", "CREATE"), ("user.name", "x y")]
            ),
            "http://127.0.0.1:9864/webhdfs/v1/a%20b/%C3%BC?op=CREATE&user.name=x%20y"
        );
    }
}
