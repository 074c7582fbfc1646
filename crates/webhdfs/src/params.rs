//! Query parameters with Hadoop's names (matched without regard to case, as Hadoop's
//! `ParamFilter` does), defaults, ranges and error messages. A value that does not
//! parse is a 400 `IllegalArgumentException` naming the parameter.

use std::net::IpAddr;

use axum::http::Method;
use tusk_security::ProxyUsers;

use crate::xattr::Codec;
use crate::{Op, Result, WebHdfsError};

/// `XAttrSetFlag` bits, as `setXAttr` takes them.
pub const XATTR_CREATE: u32 = 1;
pub const XATTR_REPLACE: u32 = 2;

/// The user of a request without `user.name`: Hadoop's `hadoop.http.staticuser.user`.
pub const ANONYMOUS_USER: &str = "dr.who";

/// The parameters of one request, in the order given.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pairs: Vec<(String, String)>,
}

impl Params {
    /// From decoded `name=value` pairs.
    pub fn new(pairs: Vec<(String, String)>) -> Params {
        Params {
            pairs: pairs
                .into_iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect(),
        }
    }

    /// The raw value of `name` (the first one given).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every parameter, names lowercased, for forwarding in a redirect.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    pub fn op(&self, method: &Method) -> Result<Op> {
        Op::parse(method, self.get("op"))
    }

    /// The caller (`user.name`; `dr.who` without it), with no one allowed to act for
    /// another ([`Params::user_as`] without rules).
    pub fn user(&self) -> Result<String> {
        self.user_as(&ProxyUsers::default(), IpAddr::from([0, 0, 0, 0]))
    }

    /// The caller (`user.name`; `dr.who` without it), or the user it acts for with
    /// `doas` when the proxy-user rules let it from `remote`. SIMPLE authentication
    /// trusts the name.
    pub fn user_as(&self, proxy: &ProxyUsers, remote: IpAddr) -> Result<String> {
        let user = match self.get("user.name").filter(|u| !u.is_empty()) {
            Some(u) => checked_user("user.name", u)?,
            None => ANONYMOUS_USER.to_string(),
        };
        match self.get("doas").filter(|u| !u.is_empty()) {
            Some(doas) if doas != user => {
                let doas = checked_user("doas", doas)?;
                proxy
                    .authorize(&user, &doas, remote)
                    .map_err(WebHdfsError::authorization)?;
                Ok(doas)
            }
            _ => Ok(user),
        }
    }

    /// `offset` (default 0).
    pub fn offset(&self) -> Result<u64> {
        Ok(self.long("offset", 0)?.unwrap_or(0) as u64)
    }

    /// `length` (default: to the end).
    pub fn length(&self) -> Result<Option<u64>> {
        Ok(self.long("length", 0)?.map(|l| l as u64))
    }

    /// `blocksize` (default: the server's).
    pub fn block_size(&self) -> Result<Option<u64>> {
        Ok(self.long("blocksize", 1)?.map(|l| l as u64))
    }

    /// `buffersize`: accepted and checked, as Hadoop does; Tusk sizes its own buffers.
    pub fn buffer_size(&self) -> Result<Option<u64>> {
        Ok(self.long("buffersize", 1)?.map(|l| l as u64))
    }

    /// `replication` (default: the server's).
    pub fn replication(&self) -> Result<Option<u16>> {
        let Some(v) = self.get("replication").filter(|v| !is_null(v)) else {
            return Ok(None);
        };
        let r = parse_short(v, 10).map_err(|e| WebHdfsError::bad_param("replication", e))?;
        if r < 1 {
            return Err(WebHdfsError::bad_param(
                "replication",
                format!("Invalid parameter range: replication = {r} < 1"),
            ));
        }
        Ok(Some(r as u16))
    }

    /// `permission`, octal, at most `1777`.
    pub fn permission(&self) -> Result<Option<u16>> {
        let Some(v) = self.get("permission").filter(|v| !is_null(v)) else {
            return Ok(None);
        };
        let p = parse_short(v, 8).map_err(|e| WebHdfsError::bad_param("permission", e))?;
        if !(0..=0o1777).contains(&p) {
            return Err(WebHdfsError::bad_param(
                "permission",
                format!("Invalid parameter range: permission = {p:o} out of [0, 1777]"),
            ));
        }
        Ok(Some(p as u16))
    }

    pub fn overwrite(&self) -> Result<bool> {
        self.boolean("overwrite", false)
    }

    pub fn recursive(&self) -> Result<bool> {
        self.boolean("recursive", false)
    }

    pub fn create_parent(&self) -> Result<bool> {
        self.boolean("createparent", true)
    }

    pub fn no_redirect(&self) -> Result<bool> {
        self.boolean("noredirect", false)
    }

    /// `destination`: an absolute path.
    pub fn destination(&self) -> Result<Option<String>> {
        match self
            .get("destination")
            .filter(|v| !v.is_empty() && !is_null(v))
        {
            Some(d) if d.starts_with('/') => Ok(Some(d.to_string())),
            Some(d) => Err(WebHdfsError::bad_param(
                "destination",
                format!("Invalid parameter value: destination = \"{d}\" is not an absolute path."),
            )),
            None => Ok(None),
        }
    }

    /// `renameoptions`: `OVERWRITE` asks for the rename that replaces the destination;
    /// `NONE` for the one that refuses to. `None`: neither was given (the old rename).
    pub fn rename_overwrite(&self) -> Result<Option<bool>> {
        let Some(v) = self
            .get("renameoptions")
            .filter(|v| !v.is_empty() && !is_null(v))
        else {
            return Ok(None);
        };
        let mut overwrite = false;
        for option in v.split(',') {
            match option.trim().to_ascii_uppercase().as_str() {
                "OVERWRITE" => overwrite = true,
                "NONE" | "TO_TRASH" => {}
                other => {
                    return Err(WebHdfsError::bad_param(
                        "renameoptions",
                        format!("No enum constant org.apache.hadoop.fs.Options.Rename.{other}"),
                    ))
                }
            }
        }
        Ok(Some(overwrite))
    }

    pub fn owner(&self) -> Option<String> {
        self.text("owner")
    }

    pub fn group(&self) -> Option<String> {
        self.text("group")
    }

    /// `startAfter` of LISTSTATUS_BATCH.
    pub fn start_after(&self) -> Option<String> {
        self.text("startafter")
    }

    /// `excludedatanodes`: DataNodes (`host:xferPort`, comma-separated) a client does
    /// not want to be redirected to, as after a failed attempt.
    pub fn exclude_datanodes(&self) -> Vec<String> {
        self.get("excludedatanodes")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty() && !is_null(d))
            .map(str::to_string)
            .collect()
    }

    /// `modificationtime` (default -1: unchanged).
    pub fn modification_time(&self) -> Result<i64> {
        Ok(self.long("modificationtime", -1)?.unwrap_or(-1))
    }

    /// `accesstime` (default -1: unchanged).
    pub fn access_time(&self) -> Result<i64> {
        Ok(self.long("accesstime", -1)?.unwrap_or(-1))
    }

    /// `newlength` (TRUNCATE; no default, at least 0).
    pub fn new_length(&self) -> Result<Option<u64>> {
        Ok(self.long("newlength", 0)?.map(|n| n as u64))
    }

    /// `sources` (CONCAT): the comma-separated paths, absolute (Hadoop's
    /// `ConcatSourcesParam.getAbsolutePaths`); none when absent.
    pub fn sources(&self) -> Vec<String> {
        self.text("sources")
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// `aclspec` (SETACL, MODIFYACLENTRIES, REMOVEACLENTRIES).
    pub fn acl_spec(&self) -> Option<String> {
        self.text("aclspec")
    }

    /// `snapshotname` (CREATESNAPSHOT, RENAMESNAPSHOT's new name, DELETESNAPSHOT).
    pub fn snapshot_name(&self) -> Option<String> {
        self.text("snapshotname")
    }

    /// `oldsnapshotname` (RENAMESNAPSHOT).
    pub fn old_snapshot_name(&self) -> Option<String> {
        self.text("oldsnapshotname")
    }

    /// `fsaction` (CHECKACCESS): `r-x` as bits, Hadoop's `[r-][w-][x-]`.
    pub fn fs_action(&self) -> Result<Option<u16>> {
        let Some(v) = self.text("fsaction") else {
            return Ok(None);
        };
        crate::acl::parse_perm(&v)
            .map(|bits| Some(bits as u16))
            .ok_or_else(|| {
                WebHdfsError::bad_param(
                    "fsaction",
                    format!("Invalid value: \"{v}\" does not belong to the domain [r-][w-][x-]"),
                )
            })
    }

    /// `namespacequota` and `storagespacequota` (SETQUOTA) as the RPC takes them:
    /// unchanged (`i64::MAX`, HDFS's `QUOTA_DONT_SET`) when absent, `-1` (clear) as
    /// `u64::MAX`.
    pub fn quotas(&self) -> Result<(u64, u64)> {
        let quota = |name: &str| -> Result<u64> {
            Ok(match self.long(name, -1)? {
                None => i64::MAX as u64,
                Some(-1) => u64::MAX,
                Some(q) => q as u64,
            })
        };
        Ok((quota("namespacequota")?, quota("storagespacequota")?))
    }

    /// Every `xattr.name` given, in order (GETXATTRS takes several; none: all of them).
    pub fn xattr_names(&self) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, v)| k == "xattr.name" && !v.is_empty() && !is_null(v))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// `xattr.name` (SETXATTR, REMOVEXATTR).
    pub fn xattr_name(&self) -> Option<String> {
        self.text("xattr.name")
    }

    /// `xattr.value`, decoded as Hadoop's `XAttrCodec` reads it (`"text"`, `0x` hex,
    /// `0s` base64, or the text itself); none when absent.
    pub fn xattr_value(&self) -> Result<Option<Vec<u8>>> {
        self.text("xattr.value")
            .map(|v| crate::xattr::decode(&v))
            .transpose()
            .map_err(|e| WebHdfsError::bad_param("xattr.value", e))
    }

    /// `flag` (SETXATTR): `CREATE`, `REPLACE` or both, comma-separated, as
    /// `XAttrSetFlag` bits; none when absent or empty.
    pub fn xattr_flag(&self) -> Result<Option<u32>> {
        let Some(v) = self.text("flag") else {
            return Ok(None);
        };
        let mut flags = 0;
        for flag in v.split(',') {
            flags |= match flag.trim().to_ascii_uppercase().as_str() {
                "CREATE" => XATTR_CREATE,
                "REPLACE" => XATTR_REPLACE,
                other => {
                    return Err(WebHdfsError::bad_param(
                        "flag",
                        format!("No enum constant org.apache.hadoop.fs.XAttrSetFlag.{other}"),
                    ))
                }
            };
        }
        Ok(Some(flags))
    }

    /// `encoding` (GETXATTRS): `text`, `hex` or `base64`.
    pub fn xattr_encoding(&self) -> Result<Option<Codec>> {
        let Some(v) = self.text("encoding") else {
            return Ok(None);
        };
        Codec::parse(&v).map(Some).ok_or_else(|| {
            WebHdfsError::bad_param(
                "encoding",
                format!(
                    "No enum constant org.apache.hadoop.fs.XAttrCodec.{}",
                    v.to_ascii_uppercase()
                ),
            )
        })
    }

    /// `delegation`: the token a request proves its user with where `user.name` is not
    /// believed (a Kerberos cluster without SPNEGO); refused when absent or unreadable.
    pub fn delegation_token(&self) -> Result<tusk_proto::common::TokenProto> {
        let Some(encoded) = self.get("delegation").filter(|d| !d.is_empty()) else {
            return Err(WebHdfsError::of(
                tusk_rpc::HadoopException::AccessControl,
                "Authentication required: this cluster runs Kerberos, and WebHDFS takes a delegation token (delegation=) until SPNEGO is served",
            ));
        };
        tusk_security::delegation_token::decode_url(encoded).map_err(|e| {
            WebHdfsError::of(
                tusk_rpc::HadoopException::InvalidToken,
                format!("the delegation parameter is not a token: {e}"),
            )
        })
    }

    /// `storagepolicy` (SETSTORAGEPOLICY).
    pub fn storage_policy(&self) -> Option<String> {
        self.text("storagepolicy")
    }

    /// `snapshotdiffstartpath` (GETSNAPSHOTDIFFLISTING; default: from the start).
    pub fn snapshot_diff_start_path(&self) -> String {
        self.text("snapshotdiffstartpath").unwrap_or_default()
    }

    /// `snapshotdiffindex` (GETSNAPSHOTDIFFLISTING; default -1: from the start).
    pub fn snapshot_diff_index(&self) -> Result<i32> {
        let Some(v) = self.get("snapshotdiffindex").filter(|v| !is_null(v)) else {
            return Ok(-1);
        };
        v.trim().parse().map_err(|_| {
            WebHdfsError::bad_param(
                "snapshotdiffindex",
                format!("Failed to parse \"{v}\" as a radix-10 integer."),
            )
        })
    }

    /// A required parameter's value, or Hadoop's error for an operation missing it.
    pub fn required<T>(op: Op, name: &str, value: Option<T>) -> Result<T> {
        value.ok_or_else(|| {
            WebHdfsError::illegal_argument(format!(
                "Required param {name} for op: {op} is null or empty"
            ))
        })
    }

    fn text(&self, name: &str) -> Option<String> {
        self.get(name)
            .filter(|v| !v.is_empty() && !is_null(v))
            .map(str::to_string)
    }

    /// A decimal long no smaller than `min`.
    fn long(&self, name: &str, min: i64) -> Result<Option<i64>> {
        let Some(v) = self.get(name).filter(|v| !is_null(v)) else {
            return Ok(None);
        };
        let n: i64 = v.trim().parse().map_err(|_| {
            WebHdfsError::bad_param(
                name,
                format!("Failed to parse \"{v}\" as a radix-10 long integer."),
            )
        })?;
        if n < min {
            return Err(WebHdfsError::bad_param(
                name,
                format!("Invalid parameter range: {name} = {n} < {min}"),
            ));
        }
        Ok(Some(n))
    }

    fn boolean(&self, name: &str, default: bool) -> Result<bool> {
        match self.get(name).filter(|v| !is_null(v)) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(WebHdfsError::bad_param(
                name,
                format!("Failed to parse \"{v}\" to Boolean."),
            )),
        }
    }
}

/// Hadoop's parameters take the text `null` for "not given".
fn is_null(v: &str) -> bool {
    v == "null"
}

fn parse_short(v: &str, radix: u32) -> std::result::Result<i32, String> {
    i16::from_str_radix(v.trim(), radix)
        .map(i32::from)
        .map_err(|_| format!("Failed to parse \"{v}\" as a radix-{radix} short integer."))
}

/// Hadoop's user name pattern (`dfs.webhdfs.user.provider.user.pattern`'s default).
fn checked_user(param: &str, user: &str) -> Result<String> {
    let mut chars = user.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let body = user.strip_suffix('$').unwrap_or(user);
    let rest_ok = body
        .chars()
        .skip(1)
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if first_ok && rest_ok {
        Ok(user.to_string())
    } else {
        Err(WebHdfsError::bad_param(
            param,
            format!(
                "Invalid value: \"{user}\" does not belong to the domain ^[A-Za-z_][A-Za-z0-9._-]*[$]?$"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(q: &[(&str, &str)]) -> Params {
        Params::new(
            q.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn numbers_have_hadoops_ranges_and_messages() {
        let p = params(&[("OFFSET", "-1"), ("length", "x"), ("permission", "2000")]);
        assert_eq!(
            p.offset().unwrap_err().message,
            "Invalid value for webhdfs parameter \"offset\": Invalid parameter range: offset = -1 < 0"
        );
        assert_eq!(
            p.length().unwrap_err().message,
            "Invalid value for webhdfs parameter \"length\": Failed to parse \"x\" as a radix-10 long integer."
        );
        assert!(p.permission().is_err());
        let p = params(&[
            ("offset", "5"),
            ("permission", "1755"),
            ("replication", "2"),
        ]);
        assert_eq!(p.offset().unwrap(), 5);
        assert_eq!(p.length().unwrap(), None);
        assert_eq!(p.permission().unwrap(), Some(0o1755));
        assert_eq!(p.replication().unwrap(), Some(2));
        assert!(params(&[("replication", "0")]).replication().is_err());
    }

    #[test]
    fn user_is_the_name_given_or_dr_who() {
        assert_eq!(params(&[]).user().unwrap(), "dr.who");
        assert_eq!(params(&[("user.name", "alice")]).user().unwrap(), "alice");
        assert_eq!(
            params(&[("user.name", "alice"), ("doas", "alice")])
                .user()
                .unwrap(),
            "alice"
        );
        let refused = params(&[("user.name", "alice"), ("doas", "root")])
            .user()
            .unwrap_err();
        assert_eq!(refused.status(), 403);
        assert_eq!(
            params(&[("user.name", "a b")]).user().unwrap_err().status(),
            400
        );
    }

    #[test]
    fn booleans_and_required_values() {
        let p = params(&[("overwrite", "TRUE"), ("recursive", "yes")]);
        assert!(p.overwrite().unwrap());
        assert!(p.recursive().is_err());
        assert!(p.create_parent().unwrap());
        let missing = Params::required::<String>(Op::Rename, "destination", None).unwrap_err();
        assert_eq!(
            missing.message,
            "Required param destination for op: RENAME is null or empty"
        );
    }

    #[test]
    fn xattr_parameters_have_hadoops_names_and_enums() {
        let p = params(&[
            ("xattr.name", "user.a"),
            ("XATTR.NAME", "user.b"),
            ("xattr.value", "0x6869"),
            ("flag", "create,REPLACE"),
            ("encoding", "Base64"),
        ]);
        assert_eq!(p.xattr_names(), ["user.a", "user.b"]);
        assert_eq!(p.xattr_name().as_deref(), Some("user.a"));
        assert_eq!(p.xattr_value().unwrap(), Some(b"hi".to_vec()));
        assert_eq!(p.xattr_flag().unwrap(), Some(XATTR_CREATE | XATTR_REPLACE));
        assert_eq!(p.xattr_encoding().unwrap(), Some(Codec::Base64));
        let bad = params(&[("flag", "APPEND"), ("encoding", "utf8")]);
        assert_eq!(
            bad.xattr_flag().unwrap_err().message,
            "Invalid value for webhdfs parameter \"flag\": No enum constant org.apache.hadoop.fs.XAttrSetFlag.APPEND"
        );
        assert_eq!(
            bad.xattr_encoding().unwrap_err().message,
            "Invalid value for webhdfs parameter \"encoding\": No enum constant org.apache.hadoop.fs.XAttrCodec.UTF8"
        );
        let none = params(&[("flag", ""), ("xattr.name", "")]);
        assert_eq!(none.xattr_flag().unwrap(), None);
        assert!(none.xattr_names().is_empty());
        assert_eq!(none.snapshot_diff_index().unwrap(), -1);
    }
}
