//! Link classes and volume profiles at the speeds the studies measured, and their scaled
//! form: one host-wide factor multiplies every rate, so the ratios the studies depend on
//! (links 1 : 10 : 32; an HDD's ~100 MB/s against a 1 GigE link's 125 MB/s) hold on a
//! host that cannot push 32 Gbit/s.

use serde::{Deserialize, Serialize};

/// The named link classes, in Mbit/s before scaling.
pub const LINK_CLASSES: &[(&str, f64)] = &[
    ("1gige", 1_000.0),
    ("10gige", 10_000.0),
    ("ipoib-32g", 32_000.0),
];

/// The fastest rate `tc … tbf` was measured to hold on a veth here (Mbit/s, scaled).
pub const MAX_SHAPED_MBIT: f64 = 4_000.0;

/// Request size below which a throttled volume is IOPS-bound: the IOPS limit never drops
/// below what streaming at the volume's bandwidth in requests of this size needs, so an
/// HDD stays bandwidth-bound when it streams and seek-bound when it does small random I/O.
pub const STREAMING_REQUEST_BYTES: u64 = 128 * 1024;

/// A link as the description gives it: a class name and its rate before scaling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// `1gige`, `10gige`, `ipoib-32g`, or a custom name.
    pub class: String,
    /// Rate before scaling, Mbit/s.
    pub mbit: f64,
}

impl Link {
    pub fn named(class: &str) -> Option<Link> {
        LINK_CLASSES
            .iter()
            .find(|(name, _)| *name == class)
            .map(|(name, mbit)| Link {
                class: name.to_string(),
                mbit: *mbit,
            })
    }

    /// Shaped rate in bit/s.
    pub fn scaled_bits_per_sec(&self, scale: f64) -> u64 {
        (self.mbit * scale * 1e6).round() as u64
    }
}

/// What a volume can do before scaling: bandwidth in MB/s (10^6 bytes) and IOPS.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskProfile {
    /// `hdd`, `ssd`, or a custom name.
    pub name: String,
    pub read_mbps: f64,
    pub write_mbps: f64,
    pub read_iops: u64,
    pub write_iops: u64,
}

/// The named volume profiles: a 7,200 rpm SATA HDD and a SATA SSD of the studies' time.
pub fn named_profile(name: &str) -> Option<DiskProfile> {
    let (read_mbps, write_mbps, read_iops, write_iops) = match name {
        "hdd" => (100.0, 100.0, 150, 150),
        "ssd" => (500.0, 450.0, 50_000, 40_000),
        _ => return None,
    };
    Some(DiskProfile {
        name: name.to_string(),
        read_mbps,
        write_mbps,
        read_iops,
        write_iops,
    })
}

pub const PROFILE_NAMES: &str = "hdd, ssd";

/// Throttle limits for one volume after scaling, as blkio takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttle {
    pub read_bps: u64,
    pub write_bps: u64,
    pub read_iops: u64,
    pub write_iops: u64,
}

impl DiskProfile {
    pub fn throttle(&self, scale: f64) -> Throttle {
        let read_bps = (self.read_mbps * scale * 1e6).round() as u64;
        let write_bps = (self.write_mbps * scale * 1e6).round() as u64;
        Throttle {
            read_bps,
            write_bps,
            read_iops: scaled_iops(self.read_iops, read_bps, scale),
            write_iops: scaled_iops(self.write_iops, write_bps, scale),
        }
    }
}

fn scaled_iops(iops: u64, bps: u64, scale: f64) -> u64 {
    let scaled = (iops as f64 * scale).round() as u64;
    let streaming = bps.div_ceil(STREAMING_REQUEST_BYTES);
    scaled.max(streaming).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_classes_keep_their_ratios_when_scaled() {
        let rate = |c| Link::named(c).unwrap().scaled_bits_per_sec(0.1);
        assert_eq!(rate("1gige"), 100_000_000);
        assert_eq!(rate("10gige"), 10 * rate("1gige"));
        assert_eq!(rate("ipoib-32g"), 32 * rate("1gige"));
        assert!(Link::named("100gige").is_none());
    }

    #[test]
    fn hdd_streams_at_its_bandwidth_but_seeks_slowly() {
        let t = named_profile("hdd").unwrap().throttle(0.1);
        assert_eq!(t.write_bps, 10_000_000);
        // 150 IOPS scaled to 15 would cap streaming at 15 x 128 KiB = 2 MB/s; the floor
        // lets 128 KiB requests reach the bandwidth.
        assert_eq!(t.write_iops, 77);
        assert!(t.write_iops * STREAMING_REQUEST_BYTES >= t.write_bps);
        let ssd = named_profile("ssd").unwrap().throttle(0.1);
        assert_eq!(ssd.read_iops, 5_000);
        assert_eq!(ssd.read_bps, 5 * t.read_bps);
    }
}
