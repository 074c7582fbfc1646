//! `tusk heartbeat-advisor`: the shortest safe DataNode heartbeat period.
//!
//! Bandwidth bound (from the heartbeat-period study): TP ≥ 10 · N · PS / B, with N nodes,
//! PS bytes per heartbeat (request + reply) and B bytes/s of the master's link: heartbeats
//! may use at most a tenth of the link.
//!
//! Processing bound (Tusk's extension): with the NameNode's measured cost of C seconds of
//! CPU per heartbeat, N nodes at period TP use N·C/TP cores; allowing heartbeats at most
//! a tenth of one core gives TP ≥ 10 · N · C. The cost comes from a `tusk bench
//! heartbeats --json` file (the cost measured at the highest heartbeat rate).

use serde::Serialize;

use crate::error::{BenchError, Result};

/// Share of the link or of one core heartbeats may take (the rule's factor 10).
pub const HEADROOM: f64 = 10.0;

#[derive(Clone, Debug, Serialize)]
pub struct Advice {
    pub datanodes: u64,
    pub bandwidth_bytes_per_sec: f64,
    pub heartbeat_bytes: u64,
    pub bandwidth_bound_secs: f64,
    /// NameNode CPU seconds per heartbeat, when a measurement was given.
    pub cpu_secs_per_heartbeat: Option<f64>,
    pub processing_bound_secs: Option<f64>,
    /// The larger bound: the shortest safe period.
    pub shortest_safe_secs: f64,
    pub binding: &'static str,
}

/// `1Gbit`, `10Gbit`, `32Gbit`, `100Mbit`, `125MB` (bytes) or a plain number of bits/s.
pub fn parse_bandwidth(text: &str) -> Result<f64> {
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| BenchError::InvalidOptions(format!("bad bandwidth {text}")))?;
    let unit = unit.trim().trim_end_matches("/s");
    let unit = match unit.strip_suffix("bps") {
        Some(prefix) => format!("{prefix}bit"),
        None => unit.to_string(),
    };
    let bits = match unit.as_str() {
        "" | "bit" => n,
        "kbit" | "k" => n * 1e3,
        "mbit" | "m" => n * 1e6,
        "gbit" | "g" => n * 1e9,
        "b" => n * 8.0,
        "kb" => n * 8e3,
        "mb" => n * 8e6,
        "gb" => n * 8e9,
        _ => {
            return Err(BenchError::InvalidOptions(format!(
                "bad bandwidth unit in {text}: use Mbit, Gbit, MB or GB"
            )))
        }
    };
    Ok(bits / 8.0)
}

pub fn advise(
    datanodes: u64,
    bandwidth_bytes_per_sec: f64,
    heartbeat_bytes: u64,
    cpu_secs_per_heartbeat: Option<f64>,
) -> Advice {
    let bandwidth_bound =
        HEADROOM * datanodes as f64 * heartbeat_bytes as f64 / bandwidth_bytes_per_sec;
    let processing_bound = cpu_secs_per_heartbeat.map(|c| HEADROOM * datanodes as f64 * c);
    let (shortest, binding) = match processing_bound {
        Some(p) if p > bandwidth_bound => (p, "processing"),
        _ => (bandwidth_bound, "bandwidth"),
    };
    Advice {
        datanodes,
        bandwidth_bytes_per_sec,
        heartbeat_bytes,
        bandwidth_bound_secs: bandwidth_bound,
        cpu_secs_per_heartbeat,
        processing_bound_secs: processing_bound,
        shortest_safe_secs: shortest,
        binding,
    }
}

/// Heartbeat bytes and the largest CPU cost per heartbeat in a `tusk bench heartbeats`
/// JSON report.
pub fn read_measurement(json: &str) -> Result<(Option<u64>, Option<f64>)> {
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| BenchError::InvalidOptions(format!("measurement file: {e}")))?;
    let cases = v
        .get("cases")
        .and_then(|c| c.as_array())
        .ok_or_else(|| BenchError::InvalidOptions("measurement file has no cases".into()))?;
    let bytes = cases
        .iter()
        .filter_map(|c| {
            Some(c.get("request_bytes")?.as_u64()? + c.get("response_bytes")?.as_u64()?)
        })
        .max();
    // The cost at the highest heartbeat rate measured: at low rates the NameNode's idle
    // work dominates and overstates the cost of a heartbeat.
    let cost = cases
        .iter()
        .filter_map(|c| {
            Some((
                c.get("heartbeats_per_sec")?.as_f64()?,
                c.get("namenode_cpu_us_per_heartbeat")?.as_f64()?,
            ))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, us)| us / 1e6);
    Ok((bytes, cost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_units() {
        assert_eq!(parse_bandwidth("1Gbit").unwrap(), 1.25e8);
        assert_eq!(parse_bandwidth("100Mbit").unwrap(), 1.25e7);
        assert_eq!(parse_bandwidth("125MB").unwrap(), 1.25e8);
        assert_eq!(parse_bandwidth("10Gbps").unwrap(), 1.25e9);
        assert!(parse_bandwidth("fast").is_err());
    }

    #[test]
    fn the_larger_bound_binds() {
        // 10 000 nodes × 200 B on 1 Gbit/s: 10·1e4·200/1.25e8 = 0.16 s.
        let a = advise(10_000, 1.25e8, 200, None);
        assert!((a.bandwidth_bound_secs - 0.16).abs() < 1e-9);
        assert_eq!(a.binding, "bandwidth");
        // 20 µs of CPU per heartbeat: 10·1e4·20e-6 = 2 s, which binds.
        let b = advise(10_000, 1.25e8, 200, Some(20e-6));
        assert!((b.shortest_safe_secs - 2.0).abs() < 1e-9);
        assert_eq!(b.binding, "processing");
    }

    #[test]
    fn measurement_file_is_read() {
        let json = r#"{"cases":[{"request_bytes":150,"response_bytes":30,"heartbeats_per_sec":30.0,"namenode_cpu_us_per_heartbeat":400.0},{"request_bytes":150,"response_bytes":30,"heartbeats_per_sec":5000.0,"namenode_cpu_us_per_heartbeat":18.0}]}"#;
        let (bytes, cost) = read_measurement(json).unwrap();
        assert_eq!(bytes, Some(180));
        assert!((cost.unwrap() - 18e-6).abs() < 1e-12);
    }
}
