//! WebHDFS operations: every name Hadoop 3.4 accepts, each under its HTTP method. A
//! server answers the ones it runs and `UnsupportedOperationException` for the others;
//! a name Hadoop does not know under that method is a bad `op` parameter.

use axum::http::Method;

use crate::WebHdfsError;

/// Declares [`Op`] from `(method, variant, name)` rows.
macro_rules! ops {
    ($( $method:ident $variant:ident $name:literal ),* $(,)?) => {
        /// A WebHDFS operation (`op=`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op { $( $variant ),* }

        /// Every operation with its HTTP method and name.
        const TABLE: &[(Method, Op, &str)] = &[ $( (Method::$method, Op::$variant, $name) ),* ];
    };
}

ops! {
    GET Open "OPEN",
    GET GetFileStatus "GETFILESTATUS",
    GET ListStatus "LISTSTATUS",
    GET ListStatusBatch "LISTSTATUS_BATCH",
    GET GetContentSummary "GETCONTENTSUMMARY",
    GET GetQuotaUsage "GETQUOTAUSAGE",
    GET GetFileChecksum "GETFILECHECKSUM",
    GET GetHomeDirectory "GETHOMEDIRECTORY",
    GET GetDelegationToken "GETDELEGATIONTOKEN",
    GET GetTrashRoot "GETTRASHROOT",
    GET GetFileBlockLocations "GETFILEBLOCKLOCATIONS",
    GET GetBlockLocations "GET_BLOCK_LOCATIONS",
    GET GetAclStatus "GETACLSTATUS",
    GET GetXAttrs "GETXATTRS",
    GET ListXAttrs "LISTXATTRS",
    GET CheckAccess "CHECKACCESS",
    GET GetAllStoragePolicy "GETALLSTORAGEPOLICY",
    GET GetStoragePolicy "GETSTORAGEPOLICY",
    GET GetSnapshotDiff "GETSNAPSHOTDIFF",
    GET GetSnapshotDiffListing "GETSNAPSHOTDIFFLISTING",
    GET GetSnapshottableDirectoryList "GETSNAPSHOTTABLEDIRECTORYLIST",
    GET GetSnapshotList "GETSNAPSHOTLIST",
    GET GetServerDefaults "GETSERVERDEFAULTS",
    GET GetStatus "GETSTATUS",
    GET GetTrashRoots "GETTRASHROOTS",
    GET GetLinkTarget "GETLINKTARGET",
    GET GetFileLinkStatus "GETFILELINKSTATUS",
    GET GetEcPolicy "GETECPOLICY",
    GET GetEcPolicies "GETECPOLICIES",
    GET GetEcCodecs "GETECCODECS",
    PUT Create "CREATE",
    PUT Mkdirs "MKDIRS",
    PUT CreateSymlink "CREATESYMLINK",
    PUT Rename "RENAME",
    PUT SetReplication "SETREPLICATION",
    PUT SetOwner "SETOWNER",
    PUT SetPermission "SETPERMISSION",
    PUT SetTimes "SETTIMES",
    PUT RenewDelegationToken "RENEWDELEGATIONTOKEN",
    PUT CancelDelegationToken "CANCELDELEGATIONTOKEN",
    PUT ModifyAclEntries "MODIFYACLENTRIES",
    PUT RemoveAclEntries "REMOVEACLENTRIES",
    PUT RemoveDefaultAcl "REMOVEDEFAULTACL",
    PUT RemoveAcl "REMOVEACL",
    PUT SetAcl "SETACL",
    PUT SetXAttr "SETXATTR",
    PUT RemoveXAttr "REMOVEXATTR",
    PUT AllowSnapshot "ALLOWSNAPSHOT",
    PUT DisallowSnapshot "DISALLOWSNAPSHOT",
    PUT CreateSnapshot "CREATESNAPSHOT",
    PUT RenameSnapshot "RENAMESNAPSHOT",
    PUT SetQuota "SETQUOTA",
    PUT SetQuotaByStorageType "SETQUOTABYSTORAGETYPE",
    PUT SetStoragePolicy "SETSTORAGEPOLICY",
    PUT SatisfyStoragePolicy "SATISFYSTORAGEPOLICY",
    PUT EnableEcPolicy "ENABLEECPOLICY",
    PUT DisableEcPolicy "DISABLEECPOLICY",
    PUT SetEcPolicy "SETECPOLICY",
    POST Append "APPEND",
    POST Concat "CONCAT",
    POST Truncate "TRUNCATE",
    POST UnsetStoragePolicy "UNSETSTORAGEPOLICY",
    POST UnsetEcPolicy "UNSETECPOLICY",
    DELETE Delete "DELETE",
    DELETE DeleteSnapshot "DELETESNAPSHOT",
}

impl Op {
    /// The operation `op=value` names under `method`; the name is matched without
    /// regard to case, as Hadoop does.
    pub fn parse(method: &Method, value: Option<&str>) -> Result<Op, WebHdfsError> {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Err(WebHdfsError::bad_param("op", "op is not specified"));
        };
        TABLE
            .iter()
            .find(|(m, _, name)| m == method && name.eq_ignore_ascii_case(value))
            .map(|(_, op, _)| *op)
            .ok_or_else(|| {
                WebHdfsError::bad_param(
                    "op",
                    format!(
                        "No enum constant org.apache.hadoop.hdfs.web.resources.{}OpParam.Op.{}",
                        enum_prefix(method),
                        value.to_ascii_uppercase()
                    ),
                )
            })
    }

    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|(_, op, _)| *op == self)
            .map(|(_, _, name)| *name)
            .expect("every op is in the table")
    }

    /// What a server answers for an operation it does not run.
    pub fn unsupported(self) -> WebHdfsError {
        WebHdfsError::unsupported(format!("{} is not supported", self.name()))
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Hadoop's parameter class per method (`GetOpParam`, `PutOpParam`, ...).
fn enum_prefix(method: &Method) -> &'static str {
    match *method {
        Method::PUT => "Put",
        Method::POST => "Post",
        Method::DELETE => "Delete",
        _ => "Get",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_under_their_method_only() {
        assert_eq!(Op::parse(&Method::GET, Some("open")), Ok(Op::Open));
        assert_eq!(Op::parse(&Method::PUT, Some("MKDIRS")), Ok(Op::Mkdirs));
        assert_eq!(Op::parse(&Method::DELETE, Some("DELETE")), Ok(Op::Delete));
        let wrong_method = Op::parse(&Method::GET, Some("MKDIRS")).unwrap_err();
        assert_eq!(
            wrong_method.message,
            "Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.MKDIRS"
        );
        assert_eq!(wrong_method.status(), 400);
        assert!(Op::parse(&Method::POST, None).is_err());
        for (_, op, name) in TABLE {
            assert_eq!(op.name(), *name);
        }
    }
}
