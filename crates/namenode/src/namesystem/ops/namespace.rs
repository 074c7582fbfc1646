//! Operations on the namespace tree, one file each: mkdir, create, append, rename,
//! delete, concat, truncate, isFileClosed, setReplication, setPermission, setOwner,
//! setTimes.

mod append;
mod concat;
mod create;
mod delete;
mod is_file_closed;
mod mkdir;
mod rename;
mod set_owner;
mod set_permission;
mod set_replication;
mod set_times;
mod truncate;

pub use truncate::TruncateCut;
