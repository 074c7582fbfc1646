//! `-count [-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] [-e] [-s] <path> ...`:
//! Hadoop's columns (`ContentSummary` and `QuotaUsage` `toString`): quotas as `none` /
//! `inf` when unset, per storage type with `-t`, the erasure coding policy with `-e`
//! (`Replicated` for replicated files), snapshot counts with `-s`.

use tusk_proto::hdfs::{ContentSummaryProto, QuotaUsageProto, StorageTypeProto};

use super::Shell;

fn size(n: i64, human: bool) -> String {
    if human {
        tusk_common::units::binary_prefix(n, "", 1)
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

/// `-count`'s flags (Hadoop's `Count.processOptions`).
#[derive(Debug, Default, PartialEq)]
struct CountOptions {
    quotas: bool,
    human: bool,
    header: bool,
    /// `-u`: quotas and usage only.
    usage_only: bool,
    /// `-x`: leave what only snapshots hold out of the counts.
    exclude_snapshots: bool,
    /// `-e`: the erasure coding policy column.
    ec_policy: bool,
    /// `-s`: the snapshot columns.
    snapshots: bool,
    /// `-t [TYPES]`: with `-q` or `-u`, the quota of each storage type.
    types: Option<Vec<StorageTypeProto>>,
}

/// Storage types that take a quota, in Hadoop's order (`getTypesSupportingQuota`).
const QUOTA_TYPES: [StorageTypeProto; 5] = [
    StorageTypeProto::Ssd,
    StorageTypeProto::Disk,
    StorageTypeProto::Archive,
    StorageTypeProto::Provided,
    StorageTypeProto::Nvdimm,
];

fn storage_types(list: &str) -> Result<Vec<StorageTypeProto>, String> {
    if list.is_empty() || list.eq_ignore_ascii_case("all") {
        return Ok(QUOTA_TYPES.to_vec());
    }
    list.split(',')
        .map(|t| {
            StorageTypeProto::from_str_name(&t.to_ascii_uppercase())
                .ok_or_else(|| format!("No enum constant org.apache.hadoop.fs.StorageType.{t}"))
        })
        .collect()
}

/// Parses `-count`'s flags; `-t` takes the next argument as its value unless that is
/// a flag or the last operand.
fn count_options(args: &[String]) -> Result<(CountOptions, Vec<String>), String> {
    let mut o = CountOptions::default();
    let mut types = None;
    let mut i = 0;
    while i < args.len() && args[i].len() > 1 && args[i].starts_with('-') {
        match args[i].as_str() {
            "-q" => o.quotas = true,
            "-h" => o.human = true,
            "-v" => o.header = true,
            "-u" => o.usage_only = true,
            "-x" => o.exclude_snapshots = true,
            "-e" => o.ec_policy = true,
            "-s" => o.snapshots = true,
            "-t" => {
                let value = args
                    .get(i + 1)
                    .filter(|v| !v.starts_with('-') && i + 2 < args.len());
                types = Some(value.cloned().unwrap_or_default());
                i += usize::from(value.is_some());
            }
            other => return Err(format!("Illegal option {other}")),
        }
        i += 1;
    }
    if o.quotas || o.usage_only {
        o.types = types.as_deref().map(storage_types).transpose()?;
    }
    Ok((o, args[i..].to_vec()))
}

fn type_name(t: StorageTypeProto) -> &'static str {
    t.as_str_name()
}

/// `QuotaUsage.getStorageTypeHeader`.
fn type_header(types: &[StorageTypeProto]) -> String {
    types
        .iter()
        .map(|t| {
            let quota = format!("{}_QUOTA", type_name(*t));
            format!("{quota:>14} {:>18} ", format!("REM_{quota}"))
        })
        .collect()
}

/// Each type's quota and what remains of it (`none` / `inf` when unset).
fn type_columns(u: &QuotaUsageProto, types: &[StorageTypeProto], human: bool) -> String {
    let infos = u
        .type_quota_infos
        .as_ref()
        .map(|i| i.type_quota_info.as_slice())
        .unwrap_or_default();
    types
        .iter()
        .map(|t| {
            let info = infos
                .iter()
                .find(|i| i.r#type == Some(*t as i32))
                .filter(|i| (i.quota as i64) >= 0);
            let (q, r) = match info {
                Some(i) => (
                    size(i.quota as i64, human),
                    size(i.quota as i64 - i.consumed as i64, human),
                ),
                None => ("none".into(), "inf".into()),
            };
            format!("{q:>14} {r:>18} ")
        })
        .collect()
}

const EC_FORMAT_WIDTH: usize = 20;

fn snapshot_columns(s: &ContentSummaryProto, human: bool) -> String {
    format!(
        "{:>18} {:>24} {:>24} {:>28} ",
        size(s.snapshot_length.unwrap_or(0) as i64, human),
        size(s.snapshot_file_count.unwrap_or(0) as i64, human),
        size(s.snapshot_directory_count.unwrap_or(0) as i64, human),
        size(s.snapshot_space_consumed.unwrap_or(0) as i64, human),
    )
}

impl CountOptions {
    fn header(&self) -> String {
        let quota_header = format!(
            "{:>12} {:>15} {:>15} {:>15} ",
            "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA"
        );
        if let Some(types) = &self.types {
            return type_header(types);
        }
        if self.usage_only {
            return quota_header;
        }
        let mut head = String::new();
        if self.quotas {
            head += &quota_header;
        }
        head += &format!(
            "{:>12} {:>12} {:>18} ",
            "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE"
        );
        if self.ec_policy {
            head += &format!("{:>EC_FORMAT_WIDTH$} ", "ERASURECODING_POLICY");
        }
        if self.snapshots {
            head += &format!(
                "{:>18} {:>24} {:>24} {:>28} ",
                "SNAPSHOT_LENGTH",
                "SNAPSHOT_FILE_COUNT",
                "SNAPSHOT_DIR_COUNT",
                "SNAPSHOT_SPACE_CONSUMED"
            );
        }
        head
    }

    fn summary_line(&self, s: &ContentSummaryProto) -> String {
        let mut line = String::new();
        if self.quotas {
            let u = QuotaUsageProto {
                file_and_directory_count: s.file_count + s.directory_count,
                quota: s.quota,
                space_consumed: s.space_consumed,
                space_quota: s.space_quota,
                type_quota_infos: None,
            };
            line += &quota_columns(&u, self.human);
        }
        let (mut dirs, mut files, mut length) = (s.directory_count, s.file_count, s.length);
        if self.exclude_snapshots {
            dirs = dirs.saturating_sub(s.snapshot_directory_count.unwrap_or(0));
            files = files.saturating_sub(s.snapshot_file_count.unwrap_or(0));
            length = length.saturating_sub(s.snapshot_length.unwrap_or(0));
        }
        line += &summary_columns(dirs, files, length, self.human);
        if self.ec_policy {
            // A replicated file or directory: what HDFS calls its policy.
            let policy = match s.erasure_coding_policy.as_deref() {
                None | Some("") | Some("Replicated") => "Replicated".to_string(),
                Some(p) => format!("EC:{p}"),
            };
            line += &format!("{policy:>EC_FORMAT_WIDTH$} ");
        }
        if self.snapshots {
            line += &snapshot_columns(s, self.human);
        }
        line
    }
}

impl Shell {
    pub(super) async fn count(&mut self, args: &[String]) -> Result<(), String> {
        let (o, mut paths) = count_options(args)?;
        if paths.is_empty() {
            paths.push(".".into());
        }
        if o.header {
            println!("{}PATHNAME", o.header());
        }
        for p in &paths {
            let path = self.resolve(p);
            if o.usage_only || o.types.is_some() {
                match self.client.quota_usage(&path).await {
                    Ok(u) => match &o.types {
                        Some(types) => println!("{}{p}", type_columns(&u, types, o.human)),
                        None => println!("{}{p}", quota_columns(&u, o.human)),
                    },
                    Err(e) => self.report("count", p, e),
                }
                continue;
            }
            match self.client.content_summary(&path).await {
                Ok(s) => println!("{}{p}", o.summary_line(&s)),
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
    }

    #[test]
    fn count_flags_parse_as_hadoops() {
        let words = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (o, paths) = count_options(&words(&["-q", "-t", "DISK,ssd", "-v", "/q"])).unwrap();
        assert_eq!(
            o.types,
            Some(vec![StorageTypeProto::Disk, StorageTypeProto::Ssd])
        );
        assert_eq!(paths, words(&["/q"]));
        let (o, paths) = count_options(&words(&["-q", "-t", "/q"])).unwrap();
        assert_eq!(o.types.unwrap().len(), 5, "-t with no value: every type");
        assert_eq!(paths, words(&["/q"]));
        let (o, _) = count_options(&words(&["-t", "/q"])).unwrap();
        assert_eq!(o.types, None, "-t without -q or -u shows no types");
        assert_eq!(
            count_options(&words(&["-k", "/q"])).unwrap_err(),
            "Illegal option -k"
        );
        assert_eq!(
            type_header(&[StorageTypeProto::Disk]),
            "    DISK_QUOTA     REM_DISK_QUOTA "
        );
    }
}
