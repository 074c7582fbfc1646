//! UTC calendar dates from and to epoch milliseconds (Howard Hinnant's algorithms), for
//! the dates Hadoop prints and the names of trash checkpoints.

/// `(year, month 1-12, day 1-31, hour, minute, second)` of `millis` (UTC).
pub fn civil(millis: u64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = (millis / 1000) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

/// `java.util.Date.toString()` in UTC: `Tue Nov 24 08:03:41 UTC 2026`.
pub fn java_date(millis: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (y, mo, d, h, mi, s) = civil(millis);
    let weekday = DAYS[((millis / 86_400_000) % 7) as usize];
    format!(
        "{weekday} {} {d:02} {h:02}:{mi:02}:{s:02} UTC {y}",
        MONTHS[(mo - 1) as usize]
    )
}

/// Java's `yyyy-MM-dd'T'HH:mm:ss.SSSZ` in UTC, as YARN's `Times.formatISO8601` prints
/// times in its messages: `2026-11-24T08:03:41.250+0000`.
pub fn iso8601(millis: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(millis);
    format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}+0000",
        millis % 1000
    )
}

/// `yyyy-MM-dd HH:mm:ss.SSS` in UTC, the stamp a NodeManager puts before each of a
/// container's diagnostics: `2026-11-24 08:03:41.250`.
pub fn diagnostics_stamp(millis: u64) -> String {
    stamp(millis, '.')
}

/// log4j's `ISO8601` date in UTC, as Hadoop's daemon and audit logs start their lines:
/// `2026-11-24 08:03:41,250`.
pub fn log4j_stamp(millis: u64) -> String {
    stamp(millis, ',')
}

/// `yyyy-MM-dd HH:mm:ss` and the milliseconds after `sep`.
fn stamp(millis: u64, sep: char) -> String {
    let (y, mo, d, h, mi, s) = civil(millis);
    format!(
        "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{sep}{:03}",
        millis % 1000
    )
}

/// Epoch milliseconds of a UTC date and time; `None` before 1970 or out of range.
pub fn to_millis(y: i64, m: u32, d: u32, hour: u32, min: u32, sec: u32) -> Option<u64> {
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let y = y - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + i64::from(hour) * 3600 + i64::from(min) * 60 + i64::from(sec);
    u64::try_from(secs).ok().map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for millis in [0, 951_782_400_000, 1_795_507_421_000] {
            let (y, mo, d, h, mi, s) = civil(millis);
            assert_eq!(to_millis(y, mo, d, h, mi, s), Some(millis));
        }
        assert_eq!(civil(1_795_507_421_000), (2026, 11, 24, 8, 3, 41));
    }

    #[test]
    fn java_patterns() {
        assert_eq!(iso8601(1_795_507_421_250), "2026-11-24T08:03:41.250+0000");
        assert_eq!(
            diagnostics_stamp(1_795_507_421_005),
            "2026-11-24 08:03:41.005"
        );
    }
}
