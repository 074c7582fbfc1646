//! HDFS's reserved paths (`FSDirectory.resolvePath`): `/.reserved/.inodes/<id>[/rest]`
//! names a path by the inode id of its first part (`/.reserved/.inodes/<id>/..` its
//! parent), and `/.reserved/raw[/rest]` is the namespace itself, where `raw.` extended
//! attributes are visible. Anything else under `/.reserved` resolves to nothing: the
//! root never has a child of that name.

use std::borrow::Cow;

use super::{InodeId, Namespace, ROOT_ID};
use crate::error::{NameNodeError, Result};

/// The reserved name in the root.
pub const DOT_RESERVED: &str = ".reserved";
/// `/.reserved` itself.
pub const DOT_RESERVED_PATH: &str = "/.reserved";
/// Below `/.reserved`: paths by inode id.
pub const DOT_INODES: &str = ".inodes";
/// Below `/.reserved`: the namespace with its `raw.` attributes.
pub const RAW: &str = "raw";

/// A client's path once its reserved prefix is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath<'a> {
    /// The path in the namespace (as HDFS reports it back in errors).
    pub path: Cow<'a, str>,
    /// The client named it under `/.reserved/raw`.
    pub raw: bool,
}

impl<'a> ResolvedPath<'a> {
    fn same(path: &'a str) -> Self {
        ResolvedPath {
            path: Cow::Borrowed(path),
            raw: false,
        }
    }
}

/// True if `path` lies below `/.reserved` (HDFS's `isReservedName`).
pub fn is_reserved(path: &str) -> bool {
    path.strip_prefix(DOT_RESERVED_PATH)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// True if `path` is `/.reserved` itself (HDFS's `isExactReservedName`).
pub fn is_exact_reserved(path: &str) -> bool {
    path == DOT_RESERVED_PATH || path == "/.reserved/"
}

impl Namespace {
    /// Resolves `/.reserved/.inodes/<id>[/rest]` and `/.reserved/raw[/rest]` to the path
    /// they name; every other path comes back as it is.
    pub fn resolve_reserved<'a>(&self, path: &'a str) -> Result<ResolvedPath<'a>> {
        if !is_reserved(path) {
            return Ok(ResolvedPath::same(path));
        }
        let parts: Vec<&str> = path[1..].trim_end_matches('/').split('/').collect();
        match parts.get(1).copied() {
            Some(DOT_INODES) if parts.len() > 2 => self.resolve_inode_path(path, &parts),
            Some(RAW) => Ok(resolve_raw(path, &parts)),
            _ => Ok(ResolvedPath::same(path)),
        }
    }

    /// `/.reserved/.inodes/<id>[/rest]`: `parts` are the path's components.
    fn resolve_inode_path<'a>(&self, path: &'a str, parts: &[&str]) -> Result<ResolvedPath<'a>> {
        let id: InodeId = parts[2]
            .parse()
            .map_err(|_| NameNodeError::InvalidInodePath {
                path: path.to_string(),
            })?;
        if id == ROOT_ID && parts.len() == 3 {
            return Ok(owned("/".to_string()));
        }
        let Some(node) = self.get(id) else {
            return Err(NameNodeError::InodePathNotFound {
                path: path.to_string(),
            });
        };
        let rest = &parts[3..];
        // A single `..` after the id names the inode's parent (HDFS's NFS lookups).
        if rest.first() == Some(&"..") {
            return Ok(owned(self.full_path(node.parent)));
        }
        let mut resolved = self.full_path(id);
        for part in rest {
            if !resolved.ends_with('/') {
                resolved.push('/');
            }
            resolved.push_str(part);
        }
        Ok(owned(resolved))
    }
}

fn owned<'a>(path: String) -> ResolvedPath<'a> {
    ResolvedPath {
        path: Cow::Owned(path),
        raw: false,
    }
}

/// `/.reserved/raw[/rest]` is `/[rest]`, but `/.reserved/raw/.reserved` stays itself.
fn resolve_raw<'a>(path: &'a str, parts: &[&str]) -> ResolvedPath<'a> {
    let rest = &parts[2..];
    let path = match rest {
        [] => Cow::Borrowed("/"),
        [DOT_RESERVED] => Cow::Borrowed(path),
        _ => Cow::Owned(format!("/{}", rest.join("/"))),
    };
    ResolvedPath { path, raw: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::{Children, Inode, InodeKind};

    fn dir(id: InodeId, parent: InodeId, name: &str) -> Inode {
        Inode {
            id,
            parent,
            name: name.to_string(),
            permission: 0o755,
            owner: "u".into(),
            group: "g".into(),
            mtime: 0,
            atime: 0,
            kind: InodeKind::Directory {
                children: Children::default(),
            },
        }
    }

    fn tree() -> Namespace {
        let mut ns = Namespace::new("hdfs", "supergroup", 0);
        ns.insert_child(ROOT_ID, dir(20000, ROOT_ID, "a")).unwrap();
        ns.insert_child(20000, dir(20001, 20000, "b")).unwrap();
        ns
    }

    fn resolved(ns: &Namespace, path: &str) -> (String, bool) {
        let r = ns.resolve_reserved(path).unwrap();
        (r.path.into_owned(), r.raw)
    }

    #[test]
    fn inode_paths_name_the_inode_and_what_follows() {
        let ns = tree();
        let cases = [
            ("/.reserved/.inodes/16385", "/"),
            ("/.reserved/.inodes/16385/a", "/a"),
            ("/.reserved/.inodes/20001", "/a/b"),
            ("/.reserved/.inodes/20001/", "/a/b"),
            ("/.reserved/.inodes/20000/b/c", "/a/b/c"),
            ("/.reserved/.inodes/20001/..", "/a"),
            ("/.reserved/.inodes/20000/..", "/"),
            ("/.reserved/.inodes/20000/.snapshot/s1", "/a/.snapshot/s1"),
            // Not below `.inodes/<id>`: left alone, and found nowhere.
            ("/.reserved/.inodes", "/.reserved/.inodes"),
            ("/.reserved", "/.reserved"),
            ("/.reserved/other/x", "/.reserved/other/x"),
            ("/a/.reserved/.inodes/1", "/a/.reserved/.inodes/1"),
        ];
        for (path, want) in cases {
            assert_eq!(resolved(&ns, path), (want.to_string(), false), "{path}");
        }
    }

    #[test]
    fn unknown_and_malformed_ids_are_not_found() {
        let ns = tree();
        let err = ns
            .resolve_reserved("/.reserved/.inodes/99999/x")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "File for given inode path does not exist: /.reserved/.inodes/99999/x"
        );
        let err = ns.resolve_reserved("/.reserved/.inodes/abc").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid inode path: /.reserved/.inodes/abc"
        );
        assert_eq!(err.java_class(), "java.io.FileNotFoundException");
    }

    #[test]
    fn raw_paths_are_the_namespace() {
        let ns = tree();
        assert_eq!(resolved(&ns, "/.reserved/raw"), ("/".into(), true));
        assert_eq!(resolved(&ns, "/.reserved/raw/a/b"), ("/a/b".into(), true));
        assert_eq!(
            resolved(&ns, "/.reserved/raw/.reserved"),
            ("/.reserved/raw/.reserved".into(), true)
        );
    }
}
