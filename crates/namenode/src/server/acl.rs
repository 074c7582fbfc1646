//! ClientNamenodeProtocol calls on ACLs.

use tusk_proto::hdfs as h;

use super::{logged, now, Call, Method};
use crate::namesystem::AclChange;
use crate::wire::acl::{entries_from_protos, status_to_proto};

pub(super) const METHODS: &[Method] = &[
    // nsmeta: ACLs, extended attributes, quotas, storage policies, listings
    ("modifyAclEntries", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::ModifyAclEntriesRequestProto| {
            let change = AclChange::Modify(entries_from_protos(&r.acl_spec)?);
            Ok(fsn
                .change_acl(user, &r.src, change)?
                .map(|()| h::ModifyAclEntriesResponseProto {}))
        })
    }),
    ("removeAclEntries", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::RemoveAclEntriesRequestProto| {
            let change = AclChange::RemoveEntries(entries_from_protos(&r.acl_spec)?);
            Ok(fsn
                .change_acl(user, &r.src, change)?
                .map(|()| h::RemoveAclEntriesResponseProto {}))
        })
    }),
    ("removeDefaultAcl", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::RemoveDefaultAclRequestProto| {
            Ok(fsn
                .change_acl(user, &r.src, AclChange::RemoveDefault)?
                .map(|()| h::RemoveDefaultAclResponseProto {}))
        })
    }),
    ("removeAcl", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::RemoveAclRequestProto| {
            Ok(fsn
                .change_acl(user, &r.src, AclChange::Remove)?
                .map(|()| h::RemoveAclResponseProto {}))
        })
    }),
    ("setAcl", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetAclRequestProto| {
            Ok(fsn
                .change_acl(
                    user,
                    &r.src,
                    AclChange::Set(entries_from_protos(&r.acl_spec)?),
                )?
                .map(|()| h::SetAclResponseProto {}))
        })
    }),
    ("getAclStatus", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetAclStatusRequestProto| {
            Ok(h::GetAclStatusResponseProto {
                result: status_to_proto(&fsn.acl_status(user, &r.src)?),
            })
        })
    }),
];
