//! HDFS path rules: absolute, `/`-separated, no `.` or `..` and no empty components.

use crate::error::{NameNodeError, Result};

/// Splits a valid absolute path into its components (`/` → none).
pub fn components(path: &str) -> Result<Vec<&str>> {
    validate(path).map(parts)
}

/// Checks a path against the rules and returns it without a trailing slash.
pub fn validate(path: &str) -> Result<&str> {
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
    if let Some(i) = memchr::memchr2(b':', 0, trimmed.as_bytes()) {
        return Err(invalid(if trimmed.as_bytes()[i] == b':' {
            "':' is not allowed in a name"
        } else {
            "NUL is not allowed in a name"
        }));
    }
    for part in trimmed[1..].split('/') {
        match part {
            "" => return Err(invalid("empty path component")),
            "." | ".." => return Err(invalid("'.' and '..' are not allowed")),
            _ => {}
        }
    }
    Ok(trimmed)
}

/// The components of a path [`validate`] has passed, without checking again.
pub fn parts(valid: &str) -> Vec<&str> {
    if valid == "/" {
        Vec::new()
    } else {
        valid[1..].split('/').collect()
    }
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
