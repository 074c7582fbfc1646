//! ACL specs as Hadoop writes them (`aclspec=user:bob:r-x,default:group::rwx`, the
//! syntax of `AclEntry.parseAclSpec`) and entries as `AclEntry.toStringStable` prints
//! them: WebHDFS's ACL parameters and `AclStatus` JSON, and `tusk fs -setfacl/-getfacl`.

use tusk_proto::hdfs::acl_entry_proto::{
    AclEntryScopeProto as AclScope, AclEntryTypeProto as AclType,
};
use tusk_proto::hdfs::AclEntryProto;

/// One parsed entry of an ACL spec.
fn parse_entry(text: &str, with_perm: bool) -> Result<AclEntryProto, String> {
    let invalid = || format!("Invalid <aclSpec> : {text}");
    let parts: Vec<&str> = text.split(':').collect();
    let mut i = 0;
    let mut scope = AclScope::Access;
    if parts.first() == Some(&"default") {
        scope = AclScope::Default;
        i += 1;
    }
    let kind = match parts.get(i).map(|t| t.to_ascii_lowercase()) {
        Some(t) if t == "user" => AclType::User,
        Some(t) if t == "group" => AclType::Group,
        Some(t) if t == "mask" => AclType::Mask,
        Some(t) if t == "other" => AclType::Other,
        Some(_) => return Err(format!("Invalid type of acl in <aclSpec> :{text}")),
        None => return Err(invalid()),
    };
    i += 1;
    let mut name = None;
    if let Some(n) = parts.get(i) {
        if !n.is_empty() {
            name = Some(n.to_string());
        }
        i += 1;
    }
    let mut perm = 0;
    if with_perm {
        let p = parts.get(i).ok_or_else(invalid)?;
        perm = parse_perm(p).ok_or_else(|| format!("Invalid permission in <aclSpec> : {text}"))?;
        i += 1;
    }
    if parts.len() > i {
        return Err(invalid());
    }
    Ok(AclEntryProto {
        r#type: kind as i32,
        scope: scope as i32,
        permissions: perm,
        name,
    })
}

/// `r-x` → 5, as Hadoop's `FsAction.getFsAction` (exactly three symbols).
pub fn parse_perm(p: &str) -> Option<i32> {
    let b = p.as_bytes();
    if b.len() != 3 {
        return None;
    }
    let mut bits = 0;
    for (c, (sym, bit)) in b.iter().zip([(b'r', 4), (b'w', 2), (b'x', 1)]) {
        match *c {
            c if c == sym => bits |= bit,
            b'-' => {}
            _ => return None,
        }
    }
    Some(bits)
}

/// The entries of `spec` (comma-separated), each with a permission when `with_perm`
/// (SETACL, MODIFYACLENTRIES) and without for a removal (REMOVEACLENTRIES).
pub fn parse_spec(spec: &str, with_perm: bool) -> Result<Vec<AclEntryProto>, String> {
    spec.split(',')
        .filter(|e| !e.is_empty())
        .map(|e| parse_entry(e.trim(), with_perm))
        .collect()
}

/// `5` → `r-x` (`FsAction.SYMBOL`).
pub fn symbol(bits: i32) -> String {
    [(4, 'r'), (2, 'w'), (1, 'x')]
        .iter()
        .map(|(b, c)| if bits & b != 0 { *c } else { '-' })
        .collect()
}

/// Hadoop's `AclEntry.toStringStable`.
pub fn entry_string(e: &AclEntryProto) -> String {
    let scope = if e.scope == AclScope::Default as i32 {
        "default:"
    } else {
        ""
    };
    let kind = match AclType::try_from(e.r#type) {
        Ok(AclType::User) => "user",
        Ok(AclType::Group) => "group",
        Ok(AclType::Mask) => "mask",
        _ => "other",
    };
    let name = e.name.as_deref().unwrap_or_default();
    format!("{scope}{kind}:{name}:{}", symbol(e.permissions))
}
