//! `dfsadmin -setQuota <quota> <dirname>...`, `-clrQuota <dirname>...`,
//! `-setSpaceQuota <quota> [-storageType <type>] <dirname>...` and
//! `-clrSpaceQuota [-storageType <type>] <dirname>...`, as Hadoop's DFSAdmin.

use tusk_client::DfsClient;
use tusk_proto::hdfs::StorageTypeProto;

/// HDFS's `QUOTA_DONT_SET` and `QUOTA_RESET`.
const DONT_SET: u64 = i64::MAX as u64;
const RESET: u64 = u64::MAX;

pub const VERBS: [&str; 4] = ["-setQuota", "-clrQuota", "-setSpaceQuota", "-clrSpaceQuota"];

/// `10g` → 10 GiB, as Hadoop's `TraditionalBinaryPrefix.string2long`.
pub(super) fn parse_size(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let (digits, shift) = match lower.chars().last()? {
        'k' => (&lower[..lower.len() - 1], 10),
        'm' => (&lower[..lower.len() - 1], 20),
        'g' => (&lower[..lower.len() - 1], 30),
        't' => (&lower[..lower.len() - 1], 40),
        'p' => (&lower[..lower.len() - 1], 50),
        'e' => (&lower[..lower.len() - 1], 60),
        _ => (lower.as_str(), 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1u64 << shift)
}

fn storage_type(name: &str) -> Option<StorageTypeProto> {
    StorageTypeProto::from_str_name(&name.to_ascii_uppercase())
}

/// Runs one quota verb; returns the exit code.
pub async fn run(client: &DfsClient, verb: &str, args: &[String]) -> i32 {
    let mut args = args.to_vec();
    let mut typ = None;
    if let Some(i) = args.iter().position(|a| a == "-storageType") {
        let Some(name) = args.get(i + 1).cloned() else {
            eprintln!("{verb}: -storageType needs a storage type");
            return 255;
        };
        match storage_type(&name) {
            Some(t) => typ = Some(t),
            None => {
                eprintln!("{verb}: Storage type {name} is not available. Available storage types are [RAM_DISK, SSD, DISK, ARCHIVE, PROVIDED, NVDIMM]");
                return 255;
            }
        }
        args.drain(i..i + 2);
    }
    let (quota, dirs) = match verb {
        "-setQuota" | "-setSpaceQuota" => {
            let Some((q, dirs)) = args.split_first() else {
                eprintln!("{verb}: Not enough arguments");
                return 255;
            };
            let parsed = if verb == "-setQuota" {
                q.parse::<u64>().ok().filter(|n| *n > 0)
            } else {
                parse_size(q)
            };
            match parsed {
                Some(n) => (n, dirs.to_vec()),
                None => {
                    eprintln!("{verb}: \"{q}\" is not a valid value for a quota.");
                    return 255;
                }
            }
        }
        _ => (RESET, args.clone()),
    };
    if dirs.is_empty() {
        eprintln!("{verb}: Not enough arguments");
        return 255;
    }
    let (ns, space) = match verb {
        "-setQuota" | "-clrQuota" => (quota, DONT_SET),
        _ => (DONT_SET, quota),
    };
    let mut code = 0;
    for dir in &dirs {
        let path = match dir.strip_prefix("hdfs://") {
            Some(rest) => rest
                .find('/')
                .map_or("/".to_string(), |i| rest[i..].to_string()),
            None => dir.clone(),
        };
        if let Err(e) = client.set_quota(&path, ns, space, typ).await {
            let message = match &e {
                tusk_client::ClientError::Remote(r) => r.message.clone(),
                other => other.to_string(),
            };
            eprintln!("{}: {message}", verb.trim_start_matches('-'));
            code = 255;
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("10"), Some(10));
        assert_eq!(parse_size("2k"), Some(2048));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(storage_type("ssd"), Some(StorageTypeProto::Ssd));
    }
}
