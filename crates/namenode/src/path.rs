//! HDFS path rules: absolute, `/`-separated, no `.` or `..` and no empty components.

use crate::error::{NameNodeError, Result};

/// Splits a valid absolute path into its components (`/` → none).
pub fn components(path: &str) -> Result<Vec<&str>> {
    let trimmed = validate(path)?;
    if trimmed == "/" {
        return Ok(Vec::new());
    }
    Ok(trimmed[1..].split('/').collect())
}

/// Checks a path against the rules in one pass over its bytes and returns it without a
/// trailing slash.
fn validate(path: &str) -> Result<&str> {
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
    // Each component starts after a '/'; check it as its end is reached.
    let t = trimmed.as_bytes();
    let mut start = 1;
    for i in 1..=t.len() {
        let b = t.get(i).copied().unwrap_or(b'/');
        match b {
            b'/' => {
                match &t[start..i] {
                    b"" => return Err(invalid("empty path component")),
                    b"." | b".." => return Err(invalid("'.' and '..' are not allowed")),
                    _ => {}
                }
                start = i + 1;
            }
            b':' => return Err(invalid("':' is not allowed in a name")),
            0 => return Err(invalid("NUL is not allowed in a name")),
            _ => {}
        }
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
