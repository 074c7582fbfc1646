//! WebHDFS's extended attribute operations (Hadoop's `NamenodeWebHdfsMethods`): the
//! namesystem's xattr calls, the ones the RPC server makes, run as the request's user,
//! so names, namespaces, flags and permissions are checked as over RPC.

use axum::response::Response;
use tusk_proto::hdfs::XAttrProto;
use tusk_rpc::HadoopException;
use tusk_webhdfs::{json as j, xattr, Params, Result, WebHdfsError};

use super::{empty, json, Request, WebHdfs};

/// GETXATTRS: the named attributes (`xattr.name`, repeated; each must exist) or all
/// the user may see, values in the `encoding` asked for (required, as in Hadoop).
pub(super) async fn get_xattrs(w: &WebHdfs, req: &Request) -> Result<Response> {
    let codec = Params::required(req.op, "encoding", req.params.xattr_encoding()?)?;
    let names = req
        .params
        .xattr_names()
        .iter()
        .map(|n| xattr_name(n))
        .collect::<Result<Vec<_>>>()?;
    let xattrs = w
        .settled(w.fsn.get_xattrs(&req.user, &req.path, &names))
        .await?;
    Ok(json(j::xattrs(&xattrs, codec)))
}

/// LISTXATTRS: the names the user may see.
pub(super) async fn list_xattrs(w: &WebHdfs, req: &Request) -> Result<Response> {
    let xattrs = w.settled(w.fsn.list_xattrs(&req.user, &req.path)).await?;
    Ok(json(j::xattr_names(&xattrs)))
}

/// SETXATTR (`xattr.name`, `flag` required; `xattr.value` optional, decoded as
/// `XAttrCodec` reads it): 200 with no body.
pub(super) async fn set_xattr(w: &WebHdfs, req: &Request) -> Result<Response> {
    let name = Params::required(req.op, "xattr.name", req.params.xattr_name())?;
    let flags = Params::required(req.op, "flag", req.params.xattr_flag()?)?;
    let mut x = xattr_name(&name)?;
    x.value = req.params.xattr_value()?.map(Into::into);
    w.durable(w.fsn.set_xattr(&req.user, &req.path, &x, flags))
        .await?;
    Ok(empty())
}

/// REMOVEXATTR (`xattr.name` required): 200 with no body.
pub(super) async fn remove_xattr(w: &WebHdfs, req: &Request) -> Result<Response> {
    let name = Params::required(req.op, "xattr.name", req.params.xattr_name())?;
    let x = xattr_name(&name)?;
    w.durable(w.fsn.remove_xattr(&req.user, &req.path, &x))
        .await?;
    Ok(empty())
}

/// A prefixed name; a bad one is Hadoop's `HadoopIllegalArgumentException` (400).
fn xattr_name(name: &str) -> Result<XAttrProto> {
    xattr::parse_name(name).map_err(|e| WebHdfsError::of(HadoopException::HadoopIllegalArgument, e))
}
