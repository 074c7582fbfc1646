//! `-count [-q] [-h] [-v] [-u] <path> ...`: Hadoop's columns (`ContentSummary` and
//! `QuotaUsage` `toString`): quotas as `none` / `inf` when unset.

use tusk_proto::hdfs::QuotaUsageProto;

use super::Shell;

/// Hadoop's `TraditionalBinaryPrefix.long2String(n, "", 1)` for `-h`.
fn long_to_string(n: i64) -> String {
    const SYMBOLS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    let (sign, v) = if n < 0 {
        ("-", n.unsigned_abs())
    } else {
        ("", n as u64)
    };
    if v < 1024 {
        return format!("{sign}{v}");
    }
    let mut i = 0;
    while i + 1 < SYMBOLS.len() && v >> (10 * (i + 2)) > 0 {
        i += 1;
    }
    let shift = 10 * (i + 1);
    let body = if v & ((1u64 << shift) - 1) == 0 {
        (v >> shift).to_string()
    } else {
        let s = format!("{:.1}", v as f64 / (1u64 << shift) as f64);
        if s.starts_with("1024") && i + 1 < SYMBOLS.len() {
            i += 1;
            format!("{:.1}", v as f64 / (1u64 << (shift + 10)) as f64)
        } else {
            s
        }
    };
    format!("{sign}{body} {}", SYMBOLS[i])
}

fn size(n: i64, human: bool) -> String {
    if human {
        long_to_string(n)
    } else {
        n.to_string()
    }
}

/// `QuotaUsage.getQuotaUsage`: quota, remaining, space quota, remaining space.
pub(super) fn quota_columns(u: &QuotaUsageProto, human: bool) -> String {
    let (quota, space_quota) = (u.quota as i64, u.space_quota as i64);
    let (q, qr) = if quota > 0 {
        (
            size(quota, human),
            size(quota - u.file_and_directory_count as i64, human),
        )
    } else {
        ("none".into(), "inf".into())
    };
    let (s, sr) = if space_quota >= 0 {
        (
            size(space_quota, human),
            size(space_quota - u.space_consumed as i64, human),
        )
    } else {
        ("none".into(), "inf".into())
    };
    format!("{q:>12} {qr:>15} {s:>15} {sr:>15} ")
}

pub(super) fn summary_columns(dirs: u64, files: u64, length: u64, human: bool) -> String {
    format!(
        "{:>12} {:>12} {:>18} ",
        size(dirs as i64, human),
        size(files as i64, human),
        size(length as i64, human)
    )
}

impl Shell {
    pub(super) async fn count(&mut self, args: &[String]) -> Result<(), String> {
        let mut opts = Vec::new();
        let mut paths = Vec::new();
        for a in args {
            match a.as_str() {
                "-q" | "-h" | "-v" | "-u" => opts.push(a.as_str()),
                _ => paths.push(a.clone()),
            }
        }
        let (quotas, human, header, usage_only) = (
            opts.contains(&"-q"),
            opts.contains(&"-h"),
            opts.contains(&"-v"),
            opts.contains(&"-u"),
        );
        if paths.is_empty() {
            paths.push(".".into());
        }
        if header {
            let quota_header = format!(
                "{:>12} {:>15} {:>15} {:>15} ",
                "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA"
            );
            let summary_header = format!(
                "{:>12} {:>12} {:>18} ",
                "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE"
            );
            let head = match (usage_only, quotas) {
                (true, _) => quota_header,
                (false, true) => quota_header + &summary_header,
                (false, false) => summary_header,
            };
            println!("{head}PATHNAME");
        }
        for p in &paths {
            let path = self.resolve(p);
            if usage_only {
                match self.client.quota_usage(&path).await {
                    Ok(u) => println!("{}{p}", quota_columns(&u, human)),
                    Err(e) => self.report("count", p, e),
                }
                continue;
            }
            match self.client.content_summary(&path).await {
                Ok(s) => {
                    let mut line = String::new();
                    if quotas {
                        let u = QuotaUsageProto {
                            file_and_directory_count: s.file_count + s.directory_count,
                            quota: s.quota,
                            space_consumed: s.space_consumed,
                            space_quota: s.space_quota,
                            type_quota_infos: None,
                        };
                        line += &quota_columns(&u, human);
                    }
                    line += &summary_columns(s.directory_count, s.file_count, s.length, human);
                    println!("{line}{p}");
                }
                Err(e) => self.report("count", p, e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_match_hadoops_count() {
        let u = QuotaUsageProto {
            file_and_directory_count: 3,
            quota: 10,
            space_consumed: 1024,
            space_quota: u64::MAX,
            type_quota_infos: None,
        };
        assert_eq!(
            quota_columns(&u, false),
            "          10               7            none             inf "
        );
        assert_eq!(
            summary_columns(2, 1, 1536, true),
            "           2            1              1.5 K "
        );
        assert_eq!(long_to_string(1 << 20), "1 M");
        assert_eq!(long_to_string(1000), "1000");
    }
}
