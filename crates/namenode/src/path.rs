//! HDFS path rules: absolute, `/`-separated, no `.` or `..` and no empty components.

use crate::error::{NameNodeError, Result};

/// Splits a valid absolute path into its components (`/` → none).
pub fn components(path: &str) -> Result<Vec<&str>> {
    let invalid = |reason| NameNodeError::InvalidPath {
        path: path.to_string(),
        reason,
    };
    if !path.starts_with('/') {
        return Err(invalid("path is not absolute"));
    }
    let trimmed = if path.len() > 1 {
        path.strip_suffix('/').unwrap_or(path)
    } else {
        path
    };
    let mut out = Vec::new();
    for part in trimmed.split('/').skip(1) {
        match part {
            "" if trimmed == "/" => {}
            "" => return Err(invalid("empty path component")),
            "." | ".." => return Err(invalid("'.' and '..' are not allowed")),
            p if p.contains(':') => return Err(invalid("':' is not allowed in a name")),
            p if p.contains('\0') => return Err(invalid("NUL is not allowed in a name")),
            p => out.push(p),
        }
    }
    Ok(out)
}

/// The normalised form of a valid path: no trailing slash.
pub fn normalize(path: &str) -> Result<String> {
    let parts = components(path)?;
    Ok(join(&parts))
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
        for bad in ["a/b", "", "/a//b", "/a/../b", "/./a", "/a:b"] {
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
