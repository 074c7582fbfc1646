//! POSIX ACLs as HDFS keeps them: an inode's permission bits hold the owner, group-class
//! (the mask, when there is one) and other entries; the remaining entries (named users,
//! the owning group's entry when a mask exists, named groups, and every default entry)
//! sit in a side table, HDFS's AclFeature. The transformations are HDFS's
//! `AclTransformation` (modify, remove entries, remove default, set), with its masks,
//! copied default base entries and `AclException` messages; inheritance is
//! `AclStorage.copyINodeDefaultAcl`.

use std::collections::BTreeMap;

use tusk_proto::internal::AclEntryRecord;

use crate::error::{NameNodeError, Result};

/// HDFS's `AclTransformation.MAX_ENTRIES`: per scope.
pub const MAX_ENTRIES: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AclScope {
    Access,
    Default,
}

/// Ordered as HDFS sorts entries: user, group, mask, other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AclType {
    User,
    Group,
    Mask,
    Other,
}

/// One entry; `name` empty for the unnamed (owner, owning group, mask, other) entries.
/// The derived order is HDFS's `ACL_ENTRY_COMPARATOR`: scope, type, unnamed first, name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclEntry {
    pub scope: AclScope,
    pub kind: AclType,
    pub name: String,
    /// rwx bits.
    pub perm: u16,
}

/// What getAclStatus answers: owner, group, the permission bits (sticky bit
/// included) and the entries the bits do not hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AclStatus {
    pub owner: String,
    pub group: String,
    pub permission: u16,
    pub entries: Vec<AclEntry>,
}

impl AclStatus {
    pub fn new(owner: &str, group: &str, permission: u16, entries: &[AclEntry]) -> Self {
        AclStatus {
            owner: owner.to_string(),
            group: group.to_string(),
            permission,
            entries: entries.to_vec(),
        }
    }
}

type Key = (AclScope, AclType, String);

impl AclEntry {
    pub fn new(scope: AclScope, kind: AclType, name: &str, perm: u16) -> Self {
        AclEntry {
            scope,
            kind,
            name: name.to_string(),
            perm: perm & 7,
        }
    }

    fn key(&self) -> Key {
        (self.scope, self.kind, self.name.clone())
    }

    pub fn is_named(&self) -> bool {
        !self.name.is_empty()
    }

    pub fn from_record(r: &AclEntryRecord) -> Result<Self> {
        let scope = match r.scope {
            0 => AclScope::Access,
            1 => AclScope::Default,
            s => return Err(invalid(format!("Invalid ACL: unknown scope {s}."))),
        };
        let kind = match r.kind {
            0 => AclType::User,
            1 => AclType::Group,
            2 => AclType::Mask,
            3 => AclType::Other,
            t => return Err(invalid(format!("Invalid ACL: unknown entry type {t}."))),
        };
        Ok(AclEntry::new(scope, kind, &r.name, r.perm as u16))
    }

    pub fn to_record(&self) -> AclEntryRecord {
        AclEntryRecord {
            scope: self.scope as u32,
            kind: self.kind as u32,
            name: self.name.clone(),
            perm: self.perm as u32,
        }
    }
}

/// `rwx` / `r-x`, as Hadoop's `FsAction.SYMBOL`.
pub fn perm_symbol(perm: u16) -> String {
    [(4, 'r'), (2, 'w'), (1, 'x')]
        .iter()
        .map(|(bit, c)| if perm & bit != 0 { *c } else { '-' })
        .collect()
}

impl std::fmt::Display for AclEntry {
    /// HDFS's `AclEntry.toStringStable`: `default:user:bob:r-x`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.scope == AclScope::Default {
            f.write_str("default:")?;
        }
        let kind = match self.kind {
            AclType::User => "user",
            AclType::Group => "group",
            AclType::Mask => "mask",
            AclType::Other => "other",
        };
        write!(f, "{kind}:{}:{}", self.name, perm_symbol(self.perm))
    }
}

fn invalid(message: String) -> NameNodeError {
    NameNodeError::Acl { message }
}

/// The full, sorted ACL of an inode from its permission bits and stored entries
/// (HDFS's `AclUtil.getAclFromPermAndEntries`).
pub fn full_acl(permission: u16, stored: &[AclEntry]) -> Vec<AclEntry> {
    let mut acl = vec![AclEntry::new(
        AclScope::Access,
        AclType::User,
        "",
        permission >> 6,
    )];
    let access: Vec<&AclEntry> = stored
        .iter()
        .filter(|e| e.scope == AclScope::Access)
        .collect();
    acl.extend(access.iter().map(|e| (*e).clone()));
    let group_class = if access.is_empty() {
        AclType::Group
    } else {
        AclType::Mask
    };
    acl.push(AclEntry::new(
        AclScope::Access,
        group_class,
        "",
        permission >> 3,
    ));
    acl.push(AclEntry::new(
        AclScope::Access,
        AclType::Other,
        "",
        permission,
    ));
    acl.extend(
        stored
            .iter()
            .filter(|e| e.scope == AclScope::Default)
            .cloned(),
    );
    acl.sort();
    acl
}

/// What an inode keeps after its ACL becomes `acl`: the new permission bits (sticky
/// kept) and the entries for the side table (empty: the ACL is minimal, no feature).
/// HDFS's `AclStorage.updateINodeAcl`.
pub fn store(acl: &[AclEntry], permission: u16, is_dir: bool) -> Result<(u16, Vec<AclEntry>)> {
    let sticky = permission & 0o1000;
    let perm_of = |kind: AclType| {
        acl.iter()
            .find(|e| e.scope == AclScope::Access && e.kind == kind && !e.is_named())
            .map_or(0, |e| e.perm)
    };
    let group_class = if acl
        .iter()
        .any(|e| e.scope == AclScope::Access && e.kind == AclType::Mask)
    {
        perm_of(AclType::Mask)
    } else {
        perm_of(AclType::Group)
    };
    let bits = sticky | perm_of(AclType::User) << 6 | group_class << 3 | perm_of(AclType::Other);
    if acl.len() == 3 {
        return Ok((bits, Vec::new()));
    }
    let defaults = acl.iter().any(|e| e.scope == AclScope::Default);
    if defaults && !is_dir {
        return Err(invalid(
            "Invalid ACL: only directories may have a default ACL.".to_string(),
        ));
    }
    let access_count = acl.iter().filter(|e| e.scope == AclScope::Access).count();
    let stored = acl
        .iter()
        .filter(|e| match e.scope {
            AclScope::Default => true,
            AclScope::Access => {
                access_count > 3
                    && !(e.kind == AclType::Mask
                        || e.kind == AclType::Other
                        || (e.kind == AclType::User && !e.is_named()))
            }
        })
        .cloned()
        .collect();
    Ok((bits, stored))
}

/// An ACL spec as a client sent it: sorted, without duplicates, not too long
/// (HDFS's `ValidatedAclSpec`).
fn validated_spec(spec: &[AclEntry]) -> Result<BTreeMap<Key, AclEntry>> {
    if spec.len() > MAX_ENTRIES {
        return Err(invalid(format!(
            "Invalid ACL: ACL spec has {} entries, which exceeds maximum of {MAX_ENTRIES}.",
            spec.len()
        )));
    }
    let mut out = BTreeMap::new();
    for e in spec {
        if out.insert(e.key(), e.clone()).is_some() {
            return Err(duplicate());
        }
    }
    Ok(out)
}

fn duplicate() -> NameNodeError {
    invalid("Invalid ACL: multiple entries with same scope, type and name.".to_string())
}

/// The working set of one transformation (HDFS's aclBuilder, providedMask, maskDirty
/// and scopeDirty).
#[derive(Default)]
struct Builder {
    entries: BTreeMap<Key, AclEntry>,
    provided_mask: BTreeMap<AclScope, AclEntry>,
    mask_dirty: Vec<AclScope>,
    scope_dirty: Vec<AclScope>,
}

impl Builder {
    fn dirty(&mut self, scope: AclScope) {
        if !self.scope_dirty.contains(&scope) {
            self.scope_dirty.push(scope);
        }
    }

    fn keep(&mut self, e: &AclEntry) {
        if e.kind == AclType::Mask {
            self.provided_mask.insert(e.scope, e.clone());
        } else {
            self.entries.insert(e.key(), e.clone());
        }
    }

    fn take_from_spec(&mut self, e: &AclEntry) {
        self.dirty(e.scope);
        if e.kind == AclType::Mask {
            self.provided_mask.insert(e.scope, e.clone());
            self.mask_dirty.push(e.scope);
        } else {
            self.entries.insert(e.key(), e.clone());
        }
    }

    /// Default user, group and other entries missing from a default ACL are copied from
    /// the access ACL.
    fn copy_defaults_if_needed(&mut self) {
        if !self.entries.keys().any(|k| k.0 == AclScope::Default) {
            return;
        }
        for kind in [AclType::User, AclType::Group, AclType::Other] {
            let default_key = (AclScope::Default, kind, String::new());
            if self.entries.contains_key(&default_key) {
                continue;
            }
            if let Some(access) = self.entries.get(&(AclScope::Access, kind, String::new())) {
                let copied = AclEntry::new(AclScope::Default, kind, "", access.perm);
                self.entries.insert(default_key, copied);
            }
        }
    }

    fn calculate_masks(&mut self) -> Result<()> {
        let mut found = Vec::new();
        let mut union: BTreeMap<AclScope, u16> = BTreeMap::new();
        let mut needed = Vec::new();
        for e in self.entries.values() {
            if !found.contains(&e.scope) {
                found.push(e.scope);
            }
            if e.kind == AclType::Group || e.is_named() {
                *union.entry(e.scope).or_default() |= e.perm;
            }
            if e.is_named() && !needed.contains(&e.scope) {
                needed.push(e.scope);
            }
        }
        for scope in found {
            let provided = self.provided_mask.get(&scope).cloned();
            let mask_dirty = self.mask_dirty.contains(&scope);
            if provided.is_none() && needed.contains(&scope) && mask_dirty {
                return Err(invalid(
                    "Invalid ACL: mask is required and cannot be deleted.".to_string(),
                ));
            }
            let mask = match provided {
                Some(m) if !self.scope_dirty.contains(&scope) || mask_dirty => Some(m),
                Some(_) => Some(AclEntry::new(
                    scope,
                    AclType::Mask,
                    "",
                    union.get(&scope).copied().unwrap_or(0),
                )),
                None if needed.contains(&scope) => Some(AclEntry::new(
                    scope,
                    AclType::Mask,
                    "",
                    union.get(&scope).copied().unwrap_or(0),
                )),
                None => None,
            };
            if let Some(m) = mask {
                self.entries.insert(m.key(), m);
            }
        }
        Ok(())
    }

    /// HDFS's `buildAndValidateAcl`.
    fn build(mut self) -> Result<Vec<AclEntry>> {
        self.copy_defaults_if_needed();
        self.calculate_masks()?;
        let acl: Vec<AclEntry> = self.entries.into_values().collect();
        for e in &acl {
            if e.is_named() && matches!(e.kind, AclType::Mask | AclType::Other) {
                return Err(invalid(format!(
                    "Invalid ACL: this entry type must not have a name: {e}."
                )));
            }
        }
        for scope in [AclScope::Access, AclScope::Default] {
            let count = acl.iter().filter(|e| e.scope == scope).count();
            if count > MAX_ENTRIES {
                let which = if scope == AclScope::Access {
                    "access"
                } else {
                    "default"
                };
                return Err(invalid(format!(
                    "Invalid ACL: ACL has {count} {which} entries, which exceeds maximum of {MAX_ENTRIES}."
                )));
            }
        }
        let has = |scope, kind| {
            acl.iter()
                .any(|e| e.scope == scope && e.kind == kind && !e.is_named())
        };
        let has_default = acl.iter().any(|e| e.scope == AclScope::Default);
        for kind in [AclType::User, AclType::Group, AclType::Other] {
            if !has(AclScope::Access, kind) {
                return Err(invalid(
                    "Invalid ACL: the user, group and other entries are required.".to_string(),
                ));
            }
            if has_default && !has(AclScope::Default, kind) {
                return Err(invalid(
                    "Invalid default ACL: the user, group and other entries are required."
                        .to_string(),
                ));
            }
        }
        Ok(acl)
    }
}

/// `modifyAclEntries`: the spec's entries replace or join the existing ones.
pub fn merge(existing: &[AclEntry], spec: &[AclEntry]) -> Result<Vec<AclEntry>> {
    let spec = validated_spec(spec)?;
    let mut b = Builder::default();
    for e in existing {
        match spec.get(&e.key()) {
            Some(s) => b.take_from_spec(s),
            None => b.keep(e),
        }
    }
    for s in spec.values() {
        if !b.entries.contains_key(&s.key()) {
            b.take_from_spec(s);
        }
    }
    b.build()
}

/// `removeAclEntries`: drops the entries the spec names (permissions in it are ignored).
pub fn remove_entries(existing: &[AclEntry], spec: &[AclEntry]) -> Result<Vec<AclEntry>> {
    let spec = validated_spec(spec)?;
    let mut b = Builder::default();
    for e in existing {
        if spec.contains_key(&e.key()) {
            b.dirty(e.scope);
            if e.kind == AclType::Mask {
                b.mask_dirty.push(e.scope);
            }
        } else {
            b.keep(e);
        }
    }
    b.build()
}

/// `removeDefaultAcl`: the access entries alone.
pub fn remove_default(existing: &[AclEntry]) -> Result<Vec<AclEntry>> {
    let mut b = Builder::default();
    for e in existing.iter().filter(|e| e.scope == AclScope::Access) {
        b.entries.insert(e.key(), e.clone());
    }
    b.build()
}

/// `setAcl`: each scope the spec names is replaced whole; the other is kept.
pub fn replace(existing: &[AclEntry], spec: &[AclEntry]) -> Result<Vec<AclEntry>> {
    let spec = validated_spec(spec)?;
    let mut b = Builder::default();
    for s in spec.values() {
        b.take_from_spec(s);
    }
    for e in existing {
        if !b.scope_dirty.contains(&e.scope) {
            b.keep(e);
        }
    }
    b.build()
}

/// `removeAcl`: the permission bits without the ACL; the owning group's entry takes the
/// group bits back from the mask (HDFS's `AclStorage.removeINodeAcl`).
pub fn removed_permission(permission: u16, stored: &[AclEntry]) -> u16 {
    let group = stored
        .iter()
        .find(|e| e.scope == AclScope::Access && e.kind == AclType::Group && !e.is_named());
    match group {
        Some(g) => (permission & !0o070) | (g.perm << 3),
        None => permission,
    }
}

/// What a new child of a directory with `parent_stored` entries gets: its permission
/// bits and stored entries, from the parent's default ACL filtered by the child's
/// requested `mode` (HDFS's `copyINodeDefaultAcl`); `None` when the parent has no
/// default ACL (the child keeps `mode`).
pub fn inherit(
    parent_stored: &[AclEntry],
    mode: u16,
    is_dir: bool,
) -> Option<(u16, Vec<AclEntry>)> {
    let defaults: Vec<&AclEntry> = parent_stored
        .iter()
        .filter(|e| e.scope == AclScope::Default)
        .collect();
    if defaults.is_empty() {
        return None;
    }
    let minimal = defaults.len() == 3;
    let mut access: Vec<AclEntry> = defaults
        .iter()
        .map(|e| {
            let perm = match e.kind {
                AclType::User if !e.is_named() => e.perm & (mode >> 6),
                AclType::Group if minimal => e.perm & (mode >> 3),
                AclType::Mask => e.perm & (mode >> 3),
                AclType::Other => e.perm & mode,
                _ => e.perm,
            };
            AclEntry::new(AclScope::Access, e.kind, &e.name, perm)
        })
        .collect();
    access.sort();
    let mut acl = access;
    if is_dir {
        acl.extend(defaults.iter().map(|e| (*e).clone()));
    }
    // A minimal ACL with nothing to store only shapes the bits.
    store(&acl, mode & 0o1777, is_dir).ok()
}

/// Whether `user` has every bit of `access` on an inode with these bits and stored
/// entries (HDFS's `FSPermissionChecker.hasAclPermission`): the owner uses the owner
/// bits; a named user entry, else any matching group entry, applies through the mask;
/// other only when nothing matched. `None` when the inode has no access ACL.
pub fn allows(
    permission: u16,
    stored: &[AclEntry],
    owner: &str,
    group: &str,
    user: &str,
    in_group: &dyn Fn(&str) -> bool,
    access: u16,
) -> Option<bool> {
    if stored.first().is_none_or(|e| e.scope != AclScope::Access) {
        return None;
    }
    let implies = |bits: u16| bits & access == access;
    if user == owner {
        return Some(implies((permission >> 6) & 7));
    }
    let mask = (permission >> 3) & 7;
    let mut found = false;
    for e in stored.iter().take_while(|e| e.scope == AclScope::Access) {
        match e.kind {
            AclType::User if e.name == user => return Some(implies(e.perm & mask)),
            AclType::Group => {
                let g = if e.is_named() { &e.name } else { group };
                if in_group(g) {
                    found = true;
                    if implies(e.perm & mask) {
                        return Some(true);
                    }
                }
            }
            _ => {}
        }
    }
    Some(!found && implies(permission & 7))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(spec: &str) -> Vec<AclEntry> {
        spec.split(',')
            .map(|s| {
                let (scope, rest) = match s.strip_prefix("default:") {
                    Some(r) => (AclScope::Default, r),
                    None => (AclScope::Access, s),
                };
                let parts: Vec<&str> = rest.split(':').collect();
                let kind = match parts[0] {
                    "user" => AclType::User,
                    "group" => AclType::Group,
                    "mask" => AclType::Mask,
                    _ => AclType::Other,
                };
                let perm = parts[2]
                    .chars()
                    .zip([4, 2, 1])
                    .filter(|(c, _)| *c != '-')
                    .map(|(_, b)| b)
                    .sum();
                AclEntry::new(scope, kind, parts[1], perm)
            })
            .collect()
    }

    fn show(acl: &[AclEntry]) -> String {
        acl.iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn modify_adds_a_named_user_and_computes_the_mask() {
        let existing = full_acl(0o640, &[]);
        let acl = merge(&existing, &parse("user:bob:rwx")).unwrap();
        assert_eq!(
            show(&acl),
            "user::rw-,user:bob:rwx,group::r--,mask::rwx,other::---"
        );
        let (bits, stored) = store(&acl, 0o640, false).unwrap();
        assert_eq!(bits, 0o670, "the group bits carry the mask");
        assert_eq!(show(&stored), "user:bob:rwx,group::r--");
        assert_eq!(show(&full_acl(bits, &stored)), show(&acl));
    }

    #[test]
    fn an_explicit_mask_is_kept_and_a_required_mask_cannot_be_removed() {
        let existing = full_acl(0o640, &[]);
        let acl = merge(&existing, &parse("user:bob:rwx,mask::r--")).unwrap();
        assert!(show(&acl).contains("mask::r--"));
        let err = remove_entries(&acl, &parse("mask::---")).unwrap_err();
        assert!(err.to_string().contains("mask is required"), "{err}");
        let acl = remove_entries(&acl, &parse("user:bob:---")).unwrap();
        assert_eq!(show(&acl), "user::rw-,group::r--,mask::r--,other::---");
    }

    #[test]
    fn default_entries_copy_the_missing_base_entries() {
        let existing = full_acl(0o750, &[]);
        let acl = merge(&existing, &parse("default:user:bob:r-x")).unwrap();
        assert_eq!(
            show(&acl),
            "user::rwx,group::r-x,other::---,default:user::rwx,default:user:bob:r-x,default:group::r-x,default:mask::r-x,default:other::---"
        );
        assert!(
            store(&acl, 0o750, false).is_err(),
            "files have no default ACL"
        );
        let (bits, stored) = store(&acl, 0o750, true).unwrap();
        assert_eq!(bits, 0o750);
        assert_eq!(stored.len(), 5, "only the default entries are stored");
        assert_eq!(show(&full_acl(bits, &stored)), show(&acl));
        assert_eq!(show(&remove_default(&acl).unwrap()), show(&existing));
    }

    #[test]
    fn bad_specs_are_refused_with_hadoops_messages() {
        let existing = full_acl(0o640, &[]);
        let dup = merge(&existing, &parse("user:bob:rwx,user:bob:r--")).unwrap_err();
        assert!(dup.to_string().contains("multiple entries"), "{dup}");
        let named_other = merge(&existing, &parse("other:bob:rwx")).unwrap_err();
        assert!(named_other.to_string().contains("must not have a name"));
        let missing = replace(&existing, &parse("user::rwx,group::r--")).unwrap_err();
        assert!(missing
            .to_string()
            .contains("user, group and other entries are required"));
    }

    #[test]
    fn set_replaces_only_the_scopes_it_names() {
        let existing = merge(&full_acl(0o750, &[]), &parse("default:user:bob:r-x")).unwrap();
        let acl = replace(
            &existing,
            &parse("user::rwx,group::---,other::---,user:eve:r--"),
        )
        .unwrap();
        assert!(show(&acl).contains("user:eve:r--"));
        assert!(
            show(&acl).contains("default:user:bob:r-x"),
            "{}",
            show(&acl)
        );
    }

    #[test]
    fn children_inherit_the_default_acl_filtered_by_their_mode() {
        let parent = merge(
            &full_acl(0o755, &[]),
            &parse("default:user:bob:rwx,default:group::r-x,default:other::r-x"),
        )
        .unwrap();
        let (_, parent_stored) = store(&parent, 0o755, true).unwrap();
        let (bits, stored) = inherit(&parent_stored, 0o644, false).unwrap();
        // owner rwx & rw-, mask rwx & r--, other r-x & r--.
        assert_eq!(bits, 0o644);
        assert_eq!(show(&stored), "user:bob:rwx,group::r-x");
        let (dir_bits, dir_stored) = inherit(&parent_stored, 0o777, true).unwrap();
        assert_eq!(dir_bits, 0o775);
        assert_eq!(
            dir_stored
                .iter()
                .filter(|e| e.scope == AclScope::Default)
                .count(),
            5
        );
        assert!(inherit(&[], 0o644, false).is_none());
    }

    #[test]
    fn access_follows_named_entries_through_the_mask() {
        let acl = merge(
            &full_acl(0o640, &[]),
            &parse("user:bob:rwx,group:dev:rw-,mask::r--"),
        )
        .unwrap();
        let (bits, stored) = store(&acl, 0o640, false).unwrap();
        let no_groups = |_: &str| false;
        let dev = |g: &str| g == "dev";
        let may = |user: &str, in_group: &dyn Fn(&str) -> bool, access: u16| {
            allows(bits, &stored, "alice", "staff", user, in_group, access).unwrap()
        };
        assert!(
            may("alice", &no_groups, 0o2),
            "the owner uses the owner bits"
        );
        assert!(!may("alice", &no_groups, 0o1));
        assert!(may("bob", &no_groups, 0o4), "named user through the mask");
        assert!(!may("bob", &no_groups, 0o2), "the mask cuts bob's w");
        assert!(may("carol", &dev, 0o4), "named group, masked");
        assert!(!may("carol", &dev, 0o2));
        assert!(!may("eve", &no_groups, 0o4), "other has nothing");
        assert!(allows(0o640, &[], "alice", "staff", "bob", &no_groups, 4).is_none());
    }
}
