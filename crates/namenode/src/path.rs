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
    let t = trimmed.as_bytes();
    // A branch-free scan the compiler vectorises; paths are short and almost always valid.
    if t.iter().fold(false, |bad, &b| bad | (b == b':') | (b == 0)) {
        return Err(invalid(if t.contains(&b':') {
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
