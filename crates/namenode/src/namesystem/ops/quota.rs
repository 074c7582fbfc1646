//! Quota calls, one file each: setQuota, getQuotaUsage. The accounting they rely on
//! (usage cached per quota directory, checks before each op) is `namesystem/quota`.

mod get_quota_usage;
mod set_quota;
