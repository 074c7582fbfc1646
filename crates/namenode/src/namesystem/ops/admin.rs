//! Calls about the file system as a whole, one file each: getStats (and the figures
//! of `/metrics`), getServerDefaults.

mod get_server_defaults;
mod get_stats;
