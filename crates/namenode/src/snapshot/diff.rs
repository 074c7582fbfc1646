//! Snapshot diff reports: what changed between two snapshots of a directory (or a
//! snapshot and the current tree), as HDFS's `SnapshotDiffReport` lists it.
//!
//! Two frozen trees are compared from the root down. Subtrees both sides share (the
//! same `Arc`, which unchanged subtrees are) are skipped at once, so a report costs what
//! changed, not the tree's size. A directory whose entries or metadata changed is `M`,
//! followed by its created (`+`) and deleted (`-`) entries; a file whose content or
//! metadata changed is `M`. An entry deleted in one place and created in another with
//! the same inode id was renamed (`R source -> target`), and the renamed subtree is
//! compared in turn. Paths are relative to the snapshot root (`""` is the root).

use std::collections::HashMap;
use std::sync::Arc;

use super::frozen::{Frozen, FrozenKind};
use crate::namespace::InodeId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    Create,
    Modify,
    Delete,
    Rename,
}

impl DiffKind {
    /// HDFS's label, which is also what goes on the wire.
    pub fn label(self) -> &'static str {
        match self {
            DiffKind::Create => "+",
            DiffKind::Modify => "M",
            DiffKind::Delete => "-",
            DiffKind::Rename => "R",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffEntry {
    /// What happened to the entry.
    pub kind: DiffKind,
    /// Relative to the snapshot root.
    pub path: String,
    /// The new path of a rename.
    pub target: Option<String>,
    /// The entry's inode.
    pub id: InodeId,
    /// The directory the change is recorded under: for `+`, `-` and `R` the directory
    /// whose entries changed, for a directory's `M` the directory itself, for a file's
    /// `M` its parent (what `getSnapshotDiffReportListing` calls `dirId`).
    pub dir: InodeId,
    pub is_dir: bool,
}

/// A changed node found by the walk, in the order found (parents first).
enum Event {
    /// A directory whose entries or metadata changed: its new and gone entries (path,
    /// copy), which may pair up into renames.
    Dir {
        id: InodeId,
        path: String,
        created: Vec<(String, Arc<Frozen>)>,
        deleted: Vec<(String, Arc<Frozen>)>,
    },
    /// A file whose content or metadata changed, and its directory.
    File {
        id: InodeId,
        parent: InodeId,
        path: String,
    },
}

/// The entries going from `from` to `to`.
pub fn diff(from: &Arc<Frozen>, to: &Arc<Frozen>) -> Vec<DiffEntry> {
    let mut events = Vec::new();
    walk(from, to, from.id, String::new(), &mut events);
    // Pair deletions with creations of the same inode: renames. A renamed subtree is
    // compared in turn, which may find more.
    let mut renames: HashMap<InodeId, (String, String)> = HashMap::new();
    let mut scanned = 0;
    while scanned < events.len() {
        let mut deleted: HashMap<InodeId, (String, Arc<Frozen>)> = HashMap::new();
        let mut created: Vec<(InodeId, String, Arc<Frozen>, InodeId)> = Vec::new();
        for e in &events {
            if let Event::Dir {
                id: dir,
                created: c,
                deleted: d,
                ..
            } = e
            {
                for (p, n) in d {
                    deleted.insert(n.id, (p.clone(), n.clone()));
                }
                for (p, n) in c {
                    created.push((n.id, p.clone(), n.clone(), *dir));
                }
            }
        }
        scanned = events.len();
        for (id, new_path, new_node, new_parent) in created {
            if renames.contains_key(&id) {
                continue;
            }
            if let Some((old_path, old_node)) = deleted.remove(&id) {
                renames.insert(id, (old_path, new_path.clone()));
                walk(&old_node, &new_node, new_parent, new_path, &mut events);
            }
        }
    }
    let mut out = Vec::new();
    for e in events {
        match e {
            Event::File { id, parent, path } => out.push(DiffEntry {
                kind: DiffKind::Modify,
                path,
                target: None,
                id,
                dir: parent,
                is_dir: false,
            }),
            Event::Dir {
                id,
                path,
                created,
                deleted,
            } => {
                out.push(DiffEntry {
                    kind: DiffKind::Modify,
                    path,
                    target: None,
                    id,
                    dir: id,
                    is_dir: true,
                });
                let child = |kind, path, target, n: &Frozen| DiffEntry {
                    kind,
                    path,
                    target,
                    id: n.id,
                    dir: id,
                    is_dir: n.is_dir(),
                };
                for (p, n) in created {
                    if !renames.contains_key(&n.id) {
                        out.push(child(DiffKind::Create, p, None, &n));
                    }
                }
                for (p, n) in deleted {
                    match renames.get(&n.id) {
                        Some((_, target)) => {
                            out.push(child(DiffKind::Rename, p, Some(target.clone()), &n))
                        }
                        None => out.push(child(DiffKind::Delete, p, None, &n)),
                    }
                }
            }
        }
    }
    out
}

fn child_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}/{name}")
    }
}

/// Compares two copies of one inode at `path` (in the directory `parent`).
fn walk(
    old: &Arc<Frozen>,
    new: &Arc<Frozen>,
    parent: InodeId,
    path: String,
    events: &mut Vec<Event>,
) {
    if Arc::ptr_eq(old, new) {
        return;
    }
    match (&old.kind, &new.kind) {
        (FrozenKind::Dir(a), FrozenKind::Dir(b)) => {
            let mut created = Vec::new();
            let mut deleted = Vec::new();
            let mut common = Vec::new();
            for (name, o) in a {
                match b.get(name) {
                    Some(n) if n.id == o.id => common.push((name, o, n)),
                    Some(_) | None => deleted.push((child_path(&path, name), o.clone())),
                }
            }
            for (name, n) in b {
                if a.get(name).is_none_or(|o| o.id != n.id) {
                    created.push((child_path(&path, name), n.clone()));
                }
            }
            if !created.is_empty() || !deleted.is_empty() || !old.attrs.same_metadata(&new.attrs) {
                events.push(Event::Dir {
                    id: new.id,
                    path: path.clone(),
                    created,
                    deleted,
                });
            }
            for (name, o, n) in common {
                walk(o, n, new.id, child_path(&path, name), events);
            }
        }
        (FrozenKind::File(a), FrozenKind::File(b)) => {
            if a != b || !old.attrs.same_metadata(&new.attrs) || old.attrs.mtime != new.attrs.mtime
            {
                events.push(Event::File {
                    id: new.id,
                    parent,
                    path,
                });
            }
        }
        // One inode id is never both a file and a directory.
        _ => events.push(Event::File {
            id: new.id,
            parent,
            path,
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::snapshot::frozen::{FrozenAttrs, FrozenBlock, FrozenFile};

    fn attrs(mtime: u64) -> FrozenAttrs {
        FrozenAttrs {
            permission: 0o755,
            owner: "u".into(),
            group: "g".into(),
            mtime,
            atime: 0,
            acl: vec![],
            xattrs: vec![],
            storage_policy: 0,
        }
    }

    fn file(id: InodeId, name: &str, len: u64) -> Arc<Frozen> {
        Arc::new(Frozen {
            id,
            name: name.into(),
            attrs: attrs(len),
            kind: FrozenKind::File(FrozenFile {
                replication: 1,
                block_size: 1024,
                blocks: vec![FrozenBlock {
                    id: id * 10,
                    generation_stamp: 1,
                    num_bytes: len,
                }],
            }),
        })
    }

    fn dir(id: InodeId, name: &str, children: Vec<Arc<Frozen>>) -> Arc<Frozen> {
        Arc::new(Frozen {
            id,
            name: name.into(),
            attrs: attrs(0),
            kind: FrozenKind::Dir(
                children
                    .into_iter()
                    .map(|c| (c.name.clone(), c))
                    .collect::<BTreeMap<_, _>>(),
            ),
        })
    }

    fn rendered(entries: &[DiffEntry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match &e.target {
                Some(t) => format!("{} {} -> {}", e.kind.label(), e.path, t),
                None => format!("{} {}", e.kind.label(), e.path),
            })
            .collect()
    }

    #[test]
    fn creates_deletes_modifies_and_renames() {
        let kept = file(3, "kept", 5);
        let sub_old = dir(4, "sub", vec![file(5, "inner", 1)]);
        let old = dir(
            1,
            "d",
            vec![
                file(2, "gone", 1),
                kept.clone(),
                sub_old,
                file(6, "grows", 1),
            ],
        );
        let sub_new = dir(4, "moved", vec![file(5, "inner", 2)]);
        let new = dir(
            1,
            "d",
            vec![kept, sub_new, file(6, "grows", 9), file(7, "new", 1)],
        );
        assert_eq!(
            rendered(&diff(&old, &new)),
            vec![
                "M ",
                "+ new",
                "- gone",
                "R sub -> moved",
                "M grows",
                "M moved/inner",
            ]
        );
        // The other way round, creations and deletions swap.
        assert_eq!(
            rendered(&diff(&new, &old)),
            vec![
                "M ",
                "+ gone",
                "R moved -> sub",
                "- new",
                "M grows",
                "M sub/inner",
            ]
        );
        assert!(diff(&old, &old).is_empty(), "shared trees have no diff");
    }
}
