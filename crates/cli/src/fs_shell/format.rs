//! Output formats of Hadoop's FsShell: `ls` lines, sizes, dates.

/// `yyyy-MM-dd HH:mm` (UTC) from epoch milliseconds.
pub fn date_minutes(millis: u64) -> String {
    let (y, mo, d, h, mi, _) = civil(millis);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

/// `yyyy-MM-dd HH:mm:ss` (UTC), `-stat`'s `%y`.
pub fn date_seconds(millis: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(millis);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

pub(crate) use tusk_common::calendar::civil;

/// `1.5 K`, `128 M` (FsShell `-h`).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["", " K", " M", " G", " T", " P"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes}")
    } else if v.fract() == 0.0 {
        format!("{}{}", v as u64, UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}

pub fn size(bytes: u64, human_readable: bool) -> String {
    if human_readable {
        human(bytes)
    } else {
        bytes.to_string()
    }
}

/// Rows as Hadoop's `TableBuilder` prints them: each column as wide as its widest
/// cell, right-aligned where `right` says so, two blanks apart; a left-aligned last
/// column is not padded.
pub fn table(rows: &[Vec<String>], right: &[bool]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    let w = widths[c];
                    if right.get(c).copied().unwrap_or(false) {
                        format!("{v:>w$}")
                    } else if c + 1 == row.len() {
                        v.clone()
                    } else {
                        format!("{v:<w$}")
                    }
                })
                .collect();
            cells.join("  ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_sizes() {
        assert_eq!(date_seconds(0), "1970-01-01 00:00:00");
        assert_eq!(date_minutes(1_700_000_000_000), "2023-11-14 22:13");
        assert_eq!(human(1536), "1.5 K");
        assert_eq!(human(128 << 20), "128 M");
        assert_eq!(human(12), "12");
    }

    #[test]
    fn tables_align_as_hadoops_table_builder() {
        let rows = vec![
            vec!["SIZE".to_string(), "X".into(), "PATH".into()],
            vec!["20000000".to_string(), "1".into(), "/a".into()],
        ];
        assert_eq!(
            table(&rows, &[false, true, false]),
            ["SIZE      X  PATH", "20000000  1  /a"]
        );
    }
}
