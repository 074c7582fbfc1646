//! WebHDFS's ACL, access-check, quota and storage-policy operations (Hadoop's
//! `NamenodeWebHdfsMethods`), run on the namesystem as the request's user; each change
//! answers once its edit is durable.

use axum::response::Response;
use tusk_webhdfs::{acl, json as j, Params, Result, WebHdfsError};

use super::{empty, json, remote, Request, WebHdfs};
use crate::namesystem::AclChange;
use crate::wire::acl::{entries_from_protos, status_to_proto};
use crate::wire::policy::{all_policies_to_proto, policy_to_proto};
use crate::wire::quota::usage_to_proto;

pub(super) async fn get_acl_status(w: &WebHdfs, req: &Request) -> Result<Response> {
    let status = w.settled(w.fsn.acl_status(&req.user, &req.path)).await?;
    Ok(json(j::acl_status(&status_to_proto(&status))))
}

/// SETACL, MODIFYACLENTRIES, REMOVEACLENTRIES, REMOVEDEFAULTACL, REMOVEACL: 200 with
/// no body. The first three need `aclspec` (entries without permissions for a removal).
pub(super) async fn change_acl(w: &WebHdfs, req: &Request) -> Result<Response> {
    use tusk_webhdfs::Op;
    let spec = |with_perm: bool| -> Result<Vec<_>> {
        let text = Params::required(req.op, "aclspec", req.params.acl_spec())?;
        let protos =
            acl::parse_spec(&text, with_perm).map_err(|e| WebHdfsError::bad_param("aclspec", e))?;
        entries_from_protos(&protos).map_err(remote)
    };
    let change = match req.op {
        Op::SetAcl => AclChange::Set(spec(true)?),
        Op::ModifyAclEntries => AclChange::Modify(spec(true)?),
        Op::RemoveAclEntries => AclChange::RemoveEntries(spec(false)?),
        Op::RemoveDefaultAcl => AclChange::RemoveDefault,
        _ => AclChange::Remove,
    };
    w.durable(w.fsn.change_acl(&req.user, &req.path, change))
        .await?;
    Ok(empty())
}

/// CHECKACCESS: 200 with no body when the user may act on the path as `fsaction`
/// says, `AccessControlException` when not.
pub(super) async fn check_access(w: &WebHdfs, req: &Request) -> Result<Response> {
    let mode = Params::required(req.op, "fsaction", req.params.fs_action()?)?;
    w.settled(w.fsn.check_access(&req.user, &req.path, mode))
        .await?;
    Ok(empty())
}

pub(super) async fn get_quota_usage(w: &WebHdfs, req: &Request) -> Result<Response> {
    let usage = w
        .settled(w.fsn.get_quota_usage(&req.user, &req.path))
        .await?;
    Ok(json(j::quota_usage(&usage_to_proto(&usage))))
}

/// SETQUOTA (superuser): `namespacequota`, `storagespacequota`; either absent is left
/// as it is, `-1` clears it. 200 with no body.
pub(super) async fn set_quota(w: &WebHdfs, req: &Request) -> Result<Response> {
    let (namespace, space) = req.params.quotas()?;
    w.durable(
        w.fsn
            .set_quota(&req.user, &req.path, namespace, space, None),
    )
    .await?;
    Ok(empty())
}

pub(super) fn get_all_storage_policy() -> Result<Response> {
    Ok(json(j::storage_policies(&all_policies_to_proto())))
}

/// The path's own policy or the one it inherits (HOT at the root).
pub(super) async fn get_storage_policy(w: &WebHdfs, req: &Request) -> Result<Response> {
    let policy = w
        .settled(w.fsn.get_storage_policy(&req.user, &req.path))
        .await?;
    Ok(json(j::storage_policy(&policy_to_proto(policy))))
}

/// SETSTORAGEPOLICY (`storagepolicy`, a policy name; write access): 200 with no body.
pub(super) async fn set_storage_policy(w: &WebHdfs, req: &Request) -> Result<Response> {
    let name = req
        .params
        .storage_policy()
        .ok_or_else(|| WebHdfsError::illegal_argument("Storage policy name is empty."))?;
    w.durable(w.fsn.set_storage_policy(&req.user, &req.path, Some(&name)))
        .await?;
    Ok(empty())
}

/// UNSETSTORAGEPOLICY: the path inherits its parent's policy again.
pub(super) async fn unset_storage_policy(w: &WebHdfs, req: &Request) -> Result<Response> {
    w.durable(w.fsn.set_storage_policy(&req.user, &req.path, None))
        .await?;
    Ok(empty())
}
