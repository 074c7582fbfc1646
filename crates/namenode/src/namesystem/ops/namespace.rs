//! Operations on the namespace tree, one file each: mkdir, create, append, rename,
//! delete, concat, truncate, isFileClosed, setReplication, setPermission, setOwner,
//! setTimes; and the reads: getFileInfo, getListing, getBatchedListing,
//! getLocatedFileInfo, getContentSummary, checkAccess.

mod append;
mod check_access;
mod concat;
mod create;
mod delete;
mod get_batched_listing;
mod get_content_summary;
mod get_file_info;
mod get_listing;
mod get_located_file_info;
mod is_file_closed;
mod mkdir;
mod rename;
mod set_owner;
mod set_permission;
mod set_replication;
mod set_times;
mod truncate;

pub use truncate::TruncateCut;
