//! `-touch [-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...`, as Hadoop's
//! `TouchCommands.Touch`: a missing file is created (not with `-c`), then its access and
//! modification times (only one with `-a` or `-m`; a directory's too) set to now or to
//! `-t`'s time (UTC).

use super::{describe, parent_of, Shell};
use tusk_client::CreateOptions;

/// `setTimes`' "leave this time as it is" (-1 on the wire).
const UNCHANGED: u64 = u64::MAX;

/// Epoch milliseconds of `yyyyMMdd:HHmmss` (UTC).
fn parse_timestamp(t: &str) -> Option<u64> {
    let (date, time) = t.split_once(':')?;
    if date.len() != 8
        || time.len() != 6
        || !(date.bytes().chain(time.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let num = |s: &str| s.parse::<i64>().ok();
    let (y, mo, d) = (num(&date[..4])?, num(&date[4..6])?, num(&date[6..])?);
    let (h, mi, s) = (num(&time[..2])?, num(&time[2..4])?, num(&time[4..])?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(((days * 24 + h) * 60 + mi) * 60 + s)
        .ok()
        .map(|secs| secs * 1000)
}

impl Shell {
    pub(super) async fn touch(&mut self, args: &[String]) -> Result<(), String> {
        let mut access_only = false;
        let mut modification_only = false;
        let mut no_create = false;
        let mut timestamp = None;
        let mut i = 0;
        while i < args.len() && args[i].len() > 1 && args[i].starts_with('-') {
            match args[i].as_str() {
                "-a" => access_only = true,
                "-m" => modification_only = true,
                "-c" => no_create = true,
                "-t" if i + 1 < args.len() => {
                    i += 1;
                    timestamp = Some(args[i].clone());
                }
                other => return Err(format!("Illegal option {other}")),
            }
            i += 1;
        }
        let paths = &args[i..];
        if paths.is_empty() {
            return Err("Not enough arguments: expected 1 but got 0".into());
        }
        let time = match &timestamp {
            None => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            Some(t) => parse_timestamp(t)
                .ok_or_else(|| {
                format!(
                    "Unable to parse the specified timestamp {t}. The expected format is yyyyMMdd:HHmmss"
                )
            })?,
        };
        let (mtime, atime) = match (access_only, modification_only) {
            (true, false) => (UNCHANGED, time),
            (false, true) => (time, UNCHANGED),
            _ => (time, time),
        };
        for p in paths {
            let path = self.resolve(p);
            match self.client.get_file_info(&path).await {
                Ok(Some(_)) => {}
                Ok(None) if no_create => continue,
                Ok(None) => {
                    if !matches!(
                        self.client.get_file_info(&parent_of(&path)).await,
                        Ok(Some(_))
                    ) {
                        let fs = self.default_fs.trim_end_matches('/');
                        eprintln!("touch: `{p}': No such file or directory: `{fs}{path}'");
                        self.failed = true;
                        continue;
                    }
                    if let Err(e) = self
                        .client
                        .write_file(&path, &[], CreateOptions::default())
                        .await
                    {
                        self.report("touch", p, e);
                        continue;
                    }
                }
                Err(e) => {
                    self.report("touch", p, e);
                    continue;
                }
            }
            if let Err(e) = self.client.set_times(&path, mtime, atime).await {
                eprintln!("touch: {}", describe(p, &e));
                self.failed = true;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_as_hadoops_format() {
        assert_eq!(parse_timestamp("19700101:000000"), Some(0));
        assert_eq!(parse_timestamp("20200102:030405"), Some(1_577_934_245_000));
        assert_eq!(parse_timestamp("2020-01-02"), None);
        assert_eq!(parse_timestamp("20201302:030405"), None);
    }
}
