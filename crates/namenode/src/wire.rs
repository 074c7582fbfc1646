//! Messages of the wire protocols that tusk-proto does not carry, laid out as Hadoop's
//! `.proto` files declare them.
//!
//! - `admin`: ClientProtocol's administrative calls (metaSave, setBalancerBandwidth,
//!   restoreFailedStorage, the upgrade calls, the refresh protocols).

pub mod admin;
