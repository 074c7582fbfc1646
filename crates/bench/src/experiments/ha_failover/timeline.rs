//! The figures of a kill, from timestamps alone: the writers' lines as they print them,
//! the contents every writer gives file N, and per kill how long a writer went without
//! an acknowledgement.

use serde::Serialize;

use crate::report::stats;

/// A file whose close returned success, at `at_ms` (ms since the Unix epoch).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ack {
    pub path: String,
    pub at_ms: u64,
}

/// One line of a writer process's standard output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriterLine {
    /// `begin <path> <epoch_ms>`: the write of a file is invoked (for the history).
    Begin(Ack),
    /// `ok <path> <epoch_ms>`
    Ok(Ack),
    /// `err <epoch_ms> <message>`
    Err { at_ms: u64, message: String },
}

/// `begin <path> <epoch_ms>`, `ok <path> <epoch_ms>` or `err <epoch_ms> <message>`;
/// `None` for anything else (a JVM's or library's own output).
pub fn parse_line(line: &str) -> Option<WriterLine> {
    let line = line.trim_end();
    let path_at = |rest: &str| {
        let mut words = rest.split(' ');
        let (path, at) = (words.next()?, words.next()?);
        if words.next().is_some() || !path.starts_with('/') {
            return None;
        }
        Some(Ack {
            path: path.to_string(),
            at_ms: at.parse().ok()?,
        })
    };
    if let Some(rest) = line.strip_prefix("ok ") {
        return path_at(rest).map(WriterLine::Ok);
    }
    if let Some(rest) = line.strip_prefix("begin ") {
        return path_at(rest).map(WriterLine::Begin);
    }
    let rest = line.strip_prefix("err ")?;
    let (at, message) = rest.split_once(' ').unwrap_or((rest, ""));
    Some(WriterLine::Err {
        at_ms: at.parse().ok()?,
        message: message.to_string(),
    })
}

/// File `n` of a writer: `DIR/fNNNNNN`.
pub fn file_path(dir: &str, n: u64) -> String {
    format!("{dir}/f{n:06}")
}

/// `N` of a path `…/fNNNNNN`.
pub fn file_index(path: &str) -> Option<u64> {
    path.rsplit('/').next()?.strip_prefix('f')?.parse().ok()
}

/// What every writer (Tusk's, `scripts/ha/HaWriter.java`, `scripts/ha/ha_writer.py`)
/// puts in file `n` at `path`: the path and a newline, then byte i =
/// (31 i + 17 n + 7 (i >> 8)) mod 256, `len` bytes in all.
pub fn contents(path: &str, n: u64, len: usize) -> Vec<u8> {
    let header = format!("{path}\n");
    let mut b = Vec::with_capacity(len);
    b.extend_from_slice(&header.as_bytes()[..header.len().min(len)]);
    let shift = n.wrapping_mul(17);
    for i in b.len()..len {
        let i = i as u64;
        b.push((i * 31 + shift + 7 * (i >> 8)) as u8);
    }
    b
}

/// Ms from `kill_ms` to the first acknowledgement after it; `None` if none came.
/// `acks_ms` is in ascending order.
pub fn resume_ms(acks_ms: &[u64], kill_ms: u64) -> Option<u64> {
    acks_ms.iter().find(|&&t| t > kill_ms).map(|&t| t - kill_ms)
}

/// The longest time between two consecutive acknowledgements around a kill: from the
/// last one at or before `kill_ms` up to the last one at or before `end_ms` (the round's
/// end, after the killed NameNode rejoined). `None` without an acknowledgement before
/// the kill and one after it by `end_ms`.
pub fn longest_gap_ms(acks_ms: &[u64], kill_ms: u64, end_ms: u64) -> Option<u64> {
    let first = acks_ms.iter().rposition(|&t| t <= kill_ms)?;
    acks_ms[first..]
        .windows(2)
        .take_while(|w| w[1] <= end_ms)
        .filter(|w| w[1] > kill_ms)
        .map(|w| w[1] - w[0])
        .max()
}

/// Median, smallest and largest of some seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    pub count: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(xs: &[f64]) -> Spread {
        Spread {
            count: xs.len(),
            median: stats::median(xs),
            min: stats::min(xs),
            max: xs.iter().copied().reduce(f64::max).unwrap_or(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_lines_parse_and_other_output_does_not() {
        assert_eq!(
            parse_line("ok /ha-failover/hadoop/f000012 1796000000123\n"),
            Some(WriterLine::Ok(Ack {
                path: "/ha-failover/hadoop/f000012".into(),
                at_ms: 1_796_000_000_123,
            }))
        );
        assert_eq!(
            parse_line("err 1796000000500 /d/f000013 java.io.IOException: Connection refused"),
            Some(WriterLine::Err {
                at_ms: 1_796_000_000_500,
                message: "/d/f000013 java.io.IOException: Connection refused".into(),
            })
        );
        assert_eq!(
            parse_line("begin /d/f000014 1796000000700"),
            Some(WriterLine::Begin(Ack {
                path: "/d/f000014".into(),
                at_ms: 1_796_000_000_700,
            }))
        );
        assert_eq!(parse_line("begin /d/f000014"), None);
        assert_eq!(parse_line("SLF4J: No SLF4J providers were found."), None);
        assert_eq!(parse_line("ok /d/f1 soon"), None);
        assert_eq!(parse_line("ok relative 12"), None);
        assert_eq!(file_index("/ha-failover/native/f000042"), Some(42));
        assert_eq!(file_index("/ha-failover/native/x"), None);
    }

    #[test]
    fn contents_are_the_path_then_the_pattern() {
        let path = file_path("/d", 3);
        assert_eq!(path, "/d/f000003");
        let b = contents(&path, 3, 300);
        assert_eq!(b.len(), 300);
        assert_eq!(&b[..11], b"/d/f000003\n");
        // i = 11: 341 + 51 = 392 → 136; i = 256: 7936 + 51 + 7 = 7994 → 58.
        assert_eq!(b[11], 136);
        assert_eq!(b[256], 58);
        assert_ne!(contents(&file_path("/d", 4), 4, 300)[11..], b[11..]);
        assert_eq!(contents(&path, 3, 5), b"/d/f0");
    }

    #[test]
    fn resume_and_gap_around_a_kill() {
        // Acks every 100 ms, the kill at 1_050, nothing until 3_400, a second stall of
        // 2.5 s later in the round (which ends at 9_000), and an ack after the round.
        let acks = [900, 1_000, 3_400, 3_500, 6_000, 6_100, 8_500, 8_600, 20_000];
        assert_eq!(resume_ms(&acks, 1_050), Some(2_350));
        assert_eq!(longest_gap_ms(&acks, 1_050, 9_000), Some(2_500));
        // Only within the round: the 11.4 s to the ack after it belongs to no kill.
        assert_eq!(longest_gap_ms(&acks, 1_050, 5_000), Some(2_400));
        assert_eq!(longest_gap_ms(&acks, 1_050, 3_000), None);
        // An ack at the very kill instant is before it.
        assert_eq!(resume_ms(&acks, 1_000), Some(2_400));
        assert_eq!(resume_ms(&acks, 20_000), None);
        assert_eq!(longest_gap_ms(&acks, 950, 9_000), Some(2_500));
        assert_eq!(longest_gap_ms(&acks, 950, 1_000), Some(100));
        assert_eq!(longest_gap_ms(&acks, 100, 9_000), None);
    }

    #[test]
    fn spread_of_an_even_count() {
        let s = Spread::of(&[2.0, 0.5, 4.0, 1.0]);
        assert_eq!((s.count, s.median, s.min, s.max), (4, 1.5, 0.5, 4.0));
        assert_eq!(Spread::of(&[]), Spread::default());
    }
}
