//! Namespace metadata calls: ACLs, extended attributes, quotas, storage policies,
//! access checks and batched listings.

use tusk_proto::hdfs as h;

use crate::client::DfsClient;
use crate::error::Result;

pub use h::acl_entry_proto::{AclEntryScopeProto as AclScope, AclEntryTypeProto as AclType};
pub use h::{AclEntryProto, AclStatusProto, XAttrProto};

/// `setXAttr` flags (Hadoop's `XAttrSetFlag`).
pub const XATTR_CREATE: u32 = 1;
pub const XATTR_REPLACE: u32 = 2;

impl DfsClient {
    pub async fn modify_acl_entries(&self, path: &str, spec: Vec<AclEntryProto>) -> Result<()> {
        let req = h::ModifyAclEntriesRequestProto {
            src: path.into(),
            acl_spec: spec,
        };
        let _: h::ModifyAclEntriesResponseProto = self.call("modifyAclEntries", &req).await?;
        Ok(())
    }

    pub async fn remove_acl_entries(&self, path: &str, spec: Vec<AclEntryProto>) -> Result<()> {
        let req = h::RemoveAclEntriesRequestProto {
            src: path.into(),
            acl_spec: spec,
        };
        let _: h::RemoveAclEntriesResponseProto = self.call("removeAclEntries", &req).await?;
        Ok(())
    }

    pub async fn remove_default_acl(&self, path: &str) -> Result<()> {
        let req = h::RemoveDefaultAclRequestProto { src: path.into() };
        let _: h::RemoveDefaultAclResponseProto = self.call("removeDefaultAcl", &req).await?;
        Ok(())
    }

    pub async fn remove_acl(&self, path: &str) -> Result<()> {
        let req = h::RemoveAclRequestProto { src: path.into() };
        let _: h::RemoveAclResponseProto = self.call("removeAcl", &req).await?;
        Ok(())
    }

    pub async fn set_acl(&self, path: &str, spec: Vec<AclEntryProto>) -> Result<()> {
        let req = h::SetAclRequestProto {
            src: path.into(),
            acl_spec: spec,
        };
        let _: h::SetAclResponseProto = self.call("setAcl", &req).await?;
        Ok(())
    }

    pub async fn acl_status(&self, path: &str) -> Result<AclStatusProto> {
        let req = h::GetAclStatusRequestProto { src: path.into() };
        let r: h::GetAclStatusResponseProto = self.call("getAclStatus", &req).await?;
        Ok(r.result)
    }

    /// setXAttr; `flags` are [`XATTR_CREATE`] and/or [`XATTR_REPLACE`].
    pub async fn set_xattr(&self, path: &str, xattr: XAttrProto, flags: u32) -> Result<()> {
        let req = h::SetXAttrRequestProto {
            src: path.into(),
            x_attr: Some(xattr),
            flag: Some(flags),
        };
        let _: h::SetXAttrResponseProto = self.call("setXAttr", &req).await?;
        Ok(())
    }

    /// getXAttrs: the named attributes, or every readable one when `names` is empty.
    pub async fn get_xattrs(&self, path: &str, names: Vec<XAttrProto>) -> Result<Vec<XAttrProto>> {
        let req = h::GetXAttrsRequestProto {
            src: path.into(),
            x_attrs: names,
        };
        let r: h::GetXAttrsResponseProto = self.call("getXAttrs", &req).await?;
        Ok(r.x_attrs)
    }

    pub async fn list_xattrs(&self, path: &str) -> Result<Vec<XAttrProto>> {
        let req = h::ListXAttrsRequestProto { src: path.into() };
        let r: h::ListXAttrsResponseProto = self.call("listXAttrs", &req).await?;
        Ok(r.x_attrs)
    }

    pub async fn remove_xattr(&self, path: &str, xattr: XAttrProto) -> Result<()> {
        let req = h::RemoveXAttrRequestProto {
            src: path.into(),
            x_attr: Some(xattr),
        };
        let _: h::RemoveXAttrResponseProto = self.call("removeXAttr", &req).await?;
        Ok(())
    }

    /// setQuota: `u64::MAX` clears a quota, `i64::MAX as u64` leaves it unchanged;
    /// `storage_type` sets a per-type space quota instead.
    pub async fn set_quota(
        &self,
        path: &str,
        namespace: u64,
        space: u64,
        storage_type: Option<h::StorageTypeProto>,
    ) -> Result<()> {
        let req = h::SetQuotaRequestProto {
            path: path.into(),
            namespace_quota: namespace,
            storagespace_quota: space,
            storage_type: storage_type.map(|t| t as i32),
        };
        let _: h::SetQuotaResponseProto = self.call("setQuota", &req).await?;
        Ok(())
    }

    pub async fn quota_usage(&self, path: &str) -> Result<h::QuotaUsageProto> {
        let req = h::GetQuotaUsageRequestProto { path: path.into() };
        let r: h::GetQuotaUsageResponseProto = self.call("getQuotaUsage", &req).await?;
        Ok(r.usage)
    }

    pub async fn set_storage_policy(&self, path: &str, policy: &str) -> Result<()> {
        let req = h::SetStoragePolicyRequestProto {
            src: path.into(),
            policy_name: policy.into(),
        };
        let _: h::SetStoragePolicyResponseProto = self.call("setStoragePolicy", &req).await?;
        Ok(())
    }

    pub async fn unset_storage_policy(&self, path: &str) -> Result<()> {
        let req = h::UnsetStoragePolicyRequestProto { src: path.into() };
        let _: h::UnsetStoragePolicyResponseProto = self.call("unsetStoragePolicy", &req).await?;
        Ok(())
    }

    pub async fn storage_policy(&self, path: &str) -> Result<h::BlockStoragePolicyProto> {
        let req = h::GetStoragePolicyRequestProto { path: path.into() };
        let r: h::GetStoragePolicyResponseProto = self.call("getStoragePolicy", &req).await?;
        Ok(r.storage_policy)
    }

    /// checkAccess: fails with AccessControlException unless the caller holds `mode`
    /// (rwx bits).
    pub async fn check_access(&self, path: &str, mode: i32) -> Result<()> {
        let req = h::CheckAccessRequestProto {
            path: path.into(),
            mode,
        };
        let _: h::CheckAccessResponseProto = self.call("checkAccess", &req).await?;
        Ok(())
    }

    pub async fn batched_listing(
        &self,
        paths: Vec<String>,
        start_after: Vec<u8>,
        need_location: bool,
    ) -> Result<h::GetBatchedListingResponseProto> {
        let req = h::GetBatchedListingRequestProto {
            paths,
            start_after: start_after.into(),
            need_location,
        };
        self.call("getBatchedListing", &req).await
    }
}

impl DfsClient {
    /// getLocatedFileInfo: the status with block locations; `None` if missing.
    pub async fn located_file_info(
        &self,
        path: &str,
        need_block_token: bool,
    ) -> Result<Option<h::HdfsFileStatusProto>> {
        let req = h::GetLocatedFileInfoRequestProto {
            src: Some(path.into()),
            need_block_token: Some(need_block_token),
        };
        let r: h::GetLocatedFileInfoResponseProto = self.call("getLocatedFileInfo", &req).await?;
        Ok(r.fs)
    }
}
