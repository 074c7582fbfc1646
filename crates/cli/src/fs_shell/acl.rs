//! `-getfacl [-R] <path>` and `-setfacl [-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set
//! <acl_spec> <path>]`, with Hadoop's spec syntax and output (FsShell's AclCommands).

use tusk_client::meta::{AclEntryProto, AclScope, AclStatusProto, AclType};
use tusk_client::FileStatus;

use tusk_webhdfs::acl::{entry_string, parse_spec, symbol};

use super::Shell;

fn entry(scope: AclScope, kind: AclType, perm: u32) -> AclEntryProto {
    AclEntryProto {
        r#type: kind as i32,
        scope: scope as i32,
        permissions: (perm & 7) as i32,
        name: None,
    }
}

/// The full ACL from the permission bits and the stored entries (Hadoop's
/// `AclUtil.getAclFromPermAndEntries`).
pub(super) fn full_acl(perm: u32, stored: &[AclEntryProto]) -> Vec<AclEntryProto> {
    let access: Vec<&AclEntryProto> = stored
        .iter()
        .filter(|e| e.scope == AclScope::Access as i32)
        .collect();
    let mut acl = vec![entry(AclScope::Access, AclType::User, perm >> 6)];
    acl.extend(access.iter().map(|e| (*e).clone()));
    let group_class = if access.is_empty() {
        AclType::Group
    } else {
        AclType::Mask
    };
    acl.push(entry(AclScope::Access, group_class, perm >> 3));
    acl.push(entry(AclScope::Access, AclType::Other, perm));
    acl.extend(
        stored
            .iter()
            .filter(|e| e.scope == AclScope::Default as i32)
            .cloned(),
    );
    acl
}

/// `getfacl`'s lines for one inode.
pub(super) fn getfacl_lines(shown: &str, status: &AclStatusProto, perm: u32) -> Vec<String> {
    let mut out = vec![
        format!("# file: {shown}"),
        format!("# owner: {}", status.owner),
        format!("# group: {}", status.group),
    ];
    if perm & 0o1000 != 0 {
        out.push(format!(
            "# flags: --{}",
            if perm & 1 != 0 { 't' } else { 'T' }
        ));
    }
    let acl = full_acl(perm, &status.entries);
    for scope in [AclScope::Access as i32, AclScope::Default as i32] {
        let entries: Vec<&AclEntryProto> = acl.iter().filter(|e| e.scope == scope).collect();
        let mask = entries
            .iter()
            .find(|e| e.r#type == AclType::Mask as i32)
            .map(|e| e.permissions);
        for e in &entries {
            let masked = e.r#type == AclType::Group as i32 || e.name.is_some();
            let effective = match mask {
                Some(m) if masked && e.r#type != AclType::Mask as i32 => e.permissions & m,
                _ => e.permissions,
            };
            if effective != e.permissions {
                out.push(format!(
                    "{}\t#effective:{}",
                    entry_string(e),
                    symbol(effective)
                ));
            } else {
                out.push(entry_string(e));
            }
        }
    }
    out.push(String::new());
    out
}

/// What `-setfacl` does to each path.
enum SetfaclAction {
    RemoveAll,
    RemoveDefault,
    Modify(Vec<AclEntryProto>),
    RemoveEntries(Vec<AclEntryProto>),
    Set(Vec<AclEntryProto>),
}

const SETFACL_USAGE: &str =
    "-setfacl [-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]";

impl Shell {
    pub(super) async fn getfacl(&mut self, args: &[String]) -> Result<(), String> {
        let recursive = args.first().is_some_and(|a| a == "-R");
        let paths = &args[usize::from(recursive)..];
        if paths.is_empty() {
            return Err("-getfacl: Not enough arguments: expected 1 but got 0".into());
        }
        for p in paths {
            let path = self.resolve(p);
            let items = match self.tree(&path, recursive).await {
                Ok(items) => items,
                Err(e) => {
                    self.report("getfacl", p, e);
                    continue;
                }
            };
            for (item, status) in items {
                let shown = format!("{p}{}", &item[path.len().min(item.len())..]);
                self.print_facl(&item, &shown, &status).await;
            }
        }
        Ok(())
    }

    async fn print_facl(&mut self, item: &str, shown: &str, status: &FileStatus) {
        let perm = status.permission as u32;
        let acl = if status.has_acl {
            match self.client.acl_status(item).await {
                Ok(a) => a,
                Err(e) => return self.report("getfacl", shown, e),
            }
        } else {
            AclStatusProto {
                owner: status.owner.clone(),
                group: status.group.clone(),
                sticky: perm & 0o1000 != 0,
                entries: vec![],
                permission: None,
            }
        };
        for line in getfacl_lines(shown, &acl, perm) {
            println!("{line}");
        }
    }

    pub(super) async fn setfacl(&mut self, args: &[String]) -> Result<(), String> {
        let usage = || format!("-setfacl: Not enough arguments\nUsage: {SETFACL_USAGE}");
        let mut args = args;
        let recursive = args.first().is_some_and(|a| a == "-R");
        if recursive {
            args = &args[1..];
        }
        let (flag, rest) = args.split_first().ok_or_else(usage)?;
        let (action, paths) = match flag.as_str() {
            "-b" => (SetfaclAction::RemoveAll, rest),
            "-k" => (SetfaclAction::RemoveDefault, rest),
            "-m" | "-x" | "--set" => {
                let (spec, paths) = rest.split_first().ok_or_else(usage)?;
                let action = match flag.as_str() {
                    "-m" => SetfaclAction::Modify(parse_spec(spec, true)?),
                    "-x" => SetfaclAction::RemoveEntries(parse_spec(spec, false)?),
                    _ => SetfaclAction::Set(parse_spec(spec, true)?),
                };
                (action, paths)
            }
            other => {
                return Err(format!(
                    "-setfacl: Illegal option {other}\nUsage: {SETFACL_USAGE}"
                ))
            }
        };
        if paths.is_empty() {
            return Err(usage());
        }
        for p in paths {
            let path = self.resolve(p);
            let items = match self.tree(&path, recursive).await {
                Ok(items) => items,
                Err(e) => {
                    self.report("setfacl", p, e);
                    continue;
                }
            };
            for (item, status) in items {
                // As Hadoop's SetfaclCommand: only a recursive change keeps default
                // entries from files; named, a file is refused by the NameNode.
                let defaults = status.is_dir || !recursive;
                if let Err(e) = self.apply_facl(&item, defaults, &action).await {
                    let shown = format!("{p}{}", &item[path.len().min(item.len())..]);
                    self.report("setfacl", &shown, e);
                }
            }
        }
        Ok(())
    }

    /// One path's change; without `defaults` only the access entries of a spec.
    async fn apply_facl(
        &self,
        item: &str,
        defaults: bool,
        action: &SetfaclAction,
    ) -> Result<(), tusk_client::ClientError> {
        let for_item = |spec: &Vec<AclEntryProto>| -> Vec<AclEntryProto> {
            spec.iter()
                .filter(|e| defaults || e.scope == AclScope::Access as i32)
                .cloned()
                .collect()
        };
        match action {
            SetfaclAction::RemoveAll => self.client.remove_acl(item).await,
            SetfaclAction::RemoveDefault => self.client.remove_default_acl(item).await,
            SetfaclAction::Modify(spec) => {
                self.client.modify_acl_entries(item, for_item(spec)).await
            }
            SetfaclAction::RemoveEntries(spec) => {
                self.client.remove_acl_entries(item, for_item(spec)).await
            }
            SetfaclAction::Set(spec) => self.client.set_acl(item, for_item(spec)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_as_hadoop_parses_them() {
        let spec = parse_spec("user:bob:r-x,default:group::rwx,mask::r--", true).unwrap();
        assert_eq!(spec.len(), 3);
        assert_eq!(entry_string(&spec[0]), "user:bob:r-x");
        assert_eq!(entry_string(&spec[1]), "default:group::rwx");
        let removal = parse_spec("user:bob,default:user:eve", false).unwrap();
        assert_eq!(removal[1].name.as_deref(), Some("eve"));
        assert!(parse_spec("user:bob:rwz", true)
            .unwrap_err()
            .contains("Invalid permission"));
        assert!(parse_spec("person:bob:rwx", true)
            .unwrap_err()
            .contains("Invalid type"));
        assert!(parse_spec("user:bob:rwx:extra", true).is_err());
    }

    #[test]
    fn getfacl_prints_effective_permissions_under_the_mask() {
        let status = AclStatusProto {
            owner: "alice".into(),
            group: "staff".into(),
            sticky: false,
            entries: parse_spec("user:bob:rwx,group::r-x", true).unwrap(),
            permission: None,
        };
        // Group bits hold the mask r--.
        let lines = getfacl_lines("/f", &status, 0o640);
        assert_eq!(
            lines,
            vec![
                "# file: /f",
                "# owner: alice",
                "# group: staff",
                "user::rw-",
                "user:bob:rwx\t#effective:r--",
                "group::r-x\t#effective:r--",
                "mask::r--",
                "other::---",
                "",
            ]
        );
    }
}
