//! HDFS path rules: absolute, `/`-separated, no `.` or `..` and no empty components.

use crate::error::{NameNodeError, Result};

/// Splits a valid absolute path into its components (`/` → none).
pub fn components(path: &str) -> Result<Vec<&str>> {
    checked_parts(path).map(|(_, parts)| parts)
}

/// Checks a path against the rules and returns it without a trailing slash.
pub fn validate(path: &str) -> Result<&str> {
    check(path, |_| {})
}

/// [`validate`] and [`components`] in one pass: the path without a trailing slash and
/// its components.
pub fn checked_parts(path: &str) -> Result<(&str, Vec<&str>)> {
    let mut parts = Vec::with_capacity(8);
    let trimmed = check(path, |p| parts.push(p))?;
    Ok((trimmed, parts))
}

/// Checks `path`, handing each component to `part` on the way.
fn check<'a>(path: &'a str, mut part: impl FnMut(&'a str)) -> Result<&'a str> {
    let invalid = |reason| NameNodeError::InvalidPath {
        path: path.to_string(),
        reason,
    };
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'/') {
        return Err(invalid("path is not absolute"));
    }
    let trimmed = if bytes.len() > 1 {
        path.strip_suffix('/').unwrap_or(path)
    } else {
        path
    };
    if trimmed == "/" {
        return Ok(trimmed);
    }
    let t = trimmed.as_bytes();
    if let Some(i) = memchr::memchr2(b':', 0, t) {
        return Err(invalid(if t[i] == b':' {
            "':' is not allowed in a name"
        } else {
            "NUL is not allowed in a name"
        }));
    }
    // Components lie between the slashes; `trimmed` starts with one and ends without.
    let mut start = 1;
    for end in memchr::memchr_iter(b'/', &t[1..])
        .map(|i| i + 1)
        .chain(std::iter::once(t.len()))
    {
        match &t[start..end] {
            b"" => return Err(invalid("empty path component")),
            b"." | b".." => return Err(invalid("'.' and '..' are not allowed")),
            _ => part(&trimmed[start..end]),
        }
        start = end + 1;
    }
    Ok(trimmed)
}

/// The normalised form of a valid path: no trailing slash.
pub fn normalize(path: &str) -> Result<String> {
    validate(path).map(str::to_string)
}

pub fn join(parts: &[&str]) -> String {
    if parts.is_empty() {
        "/".to_string()
    } else {
        let mut s = String::new();
        for p in parts {
            s.push('/');
            s.push_str(p);
        }
        s
    }
}

/// True if `inner` equals `outer` or lies below it.
pub fn is_under(inner: &str, outer: &str) -> bool {
    outer == "/"
        || inner == outer
        || (inner.starts_with(outer) && inner.as_bytes().get(outer.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_and_invalid_paths() {
        assert_eq!(components("/").unwrap(), Vec::<&str>::new());
        assert_eq!(components("/a/b/").unwrap(), vec!["a", "b"]);
        assert_eq!(components("/a").unwrap(), vec!["a"]);
        assert_eq!(normalize("/a/b/").unwrap(), "/a/b");
        assert_eq!(normalize("/").unwrap(), "/");
        for bad in [
            "a/b", "", "/a//b", "/a/../b", "/./a", "/a:b", "/a/.", "/a/..", "/a\0b",
        ] {
            assert!(
                matches!(components(bad), Err(NameNodeError::InvalidPath { .. })),
                "{bad}"
            );
        }
        assert!(is_under("/a/b", "/a"));
        assert!(!is_under("/ab", "/a"));
        assert!(is_under("/x", "/"));
    }
}
