//! Jepsen-style histories of a file workload, and their linearizability check.
//!
//! The workload: clients write files, each path once (create, write, close), and
//! readers ask the namespace about those paths while NameNodes fail (`getFileInfo`:
//! absent, or present with a length). Every operation is recorded with the instant it
//! was invoked and, if it returned, the instant it completed; a write that failed or
//! never returned is indeterminate: it may have taken effect at any time after its
//! invocation, or never.
//!
//! Model: a path is a register written once, holding two flags that are only ever
//! set: *exists* (set by the create) and *full* (set by the close: the namespace gives
//! the whole length). Both are set inside the write's interval. A history is
//! linearizable if each flag can be given a point in time at which it is set, inside
//! the write's interval, no later than the completion of every read that saw it set
//! and after the invocation of every read that saw it clear. For one flag that is
//! `L = max(write invoked, reads that saw it clear invoked) < U = min(write
//! acknowledged, reads that saw it set completed)`; a read that sees *full* sees
//! *exists* too, so the two points can always be ordered. Linearizability is local
//! (Herlihy and Wing): a history is linearizable if and only if every path's own
//! history is, so paths are checked one by one and the check is exact for this model.
//!
//! Instants are milliseconds of the host's real-time clock, which every client
//! process on one host shares; two instants in the same millisecond are taken as
//! either order (a tie is never an anomaly).

use std::collections::BTreeMap;
use std::fmt;

/// What an operation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Create, write `len` bytes and close. `acked_ms`: when the close returned
    /// success; `None` when the write failed or never returned (indeterminate).
    Write { len: u64, acked_ms: Option<u64> },
    /// What the namespace said of the path: `None` absent, `Some(length)` present.
    Read {
        completed_ms: u64,
        length: Option<u64>,
    },
}

/// One operation of one client on one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    pub client: String,
    pub path: String,
    pub invoked_ms: u64,
    pub kind: OpKind,
}

impl Op {
    pub fn write(client: &str, path: &str, invoked_ms: u64, len: u64, acked_ms: Option<u64>) -> Op {
        Op {
            client: client.into(),
            path: path.into(),
            invoked_ms,
            kind: OpKind::Write { len, acked_ms },
        }
    }

    pub fn read(
        client: &str,
        path: &str,
        invoked_ms: u64,
        completed_ms: u64,
        length: Option<u64>,
    ) -> Op {
        Op {
            client: client.into(),
            path: path.into(),
            invoked_ms,
            kind: OpKind::Read {
                completed_ms,
                length,
            },
        }
    }

    fn describe(&self) -> String {
        match &self.kind {
            OpKind::Write { len, acked_ms } => format!(
                "{}'s write of {len} bytes invoked at {} ms, {}",
                self.client,
                self.invoked_ms,
                acked_ms.map_or("not acknowledged".into(), |t| format!(
                    "acknowledged at {t} ms"
                ))
            ),
            OpKind::Read {
                completed_ms,
                length,
            } => format!(
                "{}'s read {}–{} ms saw {}",
                self.client,
                self.invoked_ms,
                completed_ms,
                length.map_or("no file".into(), |l| format!("{l} bytes"))
            ),
        }
    }
}

/// Which way a history departs from the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AnomalyKind {
    /// A read began after the write was acknowledged and did not see it (a lost or
    /// stale write).
    Lost,
    /// A read saw less than an earlier read (one that completed before it began) had
    /// seen: the namespace went back.
    WentBack,
    /// A read that completed before the write was invoked saw it.
    FromTheFuture,
    /// A read saw a path nobody wrote, or more bytes than were written.
    NeverWritten,
    /// Two writes of one path (the workload writes each path once).
    WrittenTwice,
}

impl fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AnomalyKind::Lost => "lost write",
            AnomalyKind::WentBack => "went back",
            AnomalyKind::FromTheFuture => "read from the future",
            AnomalyKind::NeverWritten => "never written",
            AnomalyKind::WrittenTwice => "written twice",
        })
    }
}

/// A departure from the model, with the two operations that cannot both be right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    pub path: String,
    pub detail: String,
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} on {}: {}", self.kind, self.path, self.detail)
    }
}

/// What a check found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub writes: usize,
    pub reads: usize,
    pub paths: usize,
    pub anomalies: Vec<Anomaly>,
}

impl Verdict {
    pub fn is_linearizable(&self) -> bool {
        self.anomalies.is_empty()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} writes and {} reads of {} paths: {}",
            self.writes,
            self.reads,
            self.paths,
            match self.anomalies.len() {
                0 => "linearizable".to_string(),
                n => format!("{n} anomalies"),
            }
        )
    }
}

/// Checks `ops` against the model (module docs).
pub fn check(ops: &[Op]) -> Verdict {
    let mut by_path: BTreeMap<&str, Vec<&Op>> = BTreeMap::new();
    for op in ops {
        by_path.entry(op.path.as_str()).or_default().push(op);
    }
    let mut verdict = Verdict {
        paths: by_path.len(),
        ..Verdict::default()
    };
    for (path, ops) in by_path {
        let (writes, reads): (Vec<&Op>, Vec<&Op>) = ops
            .into_iter()
            .partition(|op| matches!(op.kind, OpKind::Write { .. }));
        verdict.writes += writes.len();
        verdict.reads += reads.len();
        verdict.anomalies.extend(check_path(path, &writes, &reads));
    }
    verdict
}

/// One bound on a flag's point and the operation that sets it.
#[derive(Clone, Copy)]
struct Bound<'a> {
    at_ms: u64,
    op: &'a Op,
}

/// Whether a read that saw `length` (of a file written with `len` bytes) saw a flag set.
type SetWhen = fn(Option<u64>, u64) -> bool;

fn check_path(path: &str, writes: &[&Op], reads: &[&Op]) -> Vec<Anomaly> {
    let anomaly = |kind, detail: String| Anomaly {
        kind,
        path: path.to_string(),
        detail,
    };
    let write = match writes {
        [] => {
            return reads
                .iter()
                .filter(|r| {
                    matches!(
                        r.kind,
                        OpKind::Read {
                            length: Some(_),
                            ..
                        }
                    )
                })
                .take(1)
                .map(|r| anomaly(AnomalyKind::NeverWritten, r.describe()))
                .collect();
        }
        [w] => *w,
        [a, b, ..] => {
            return vec![anomaly(
                AnomalyKind::WrittenTwice,
                format!("{}; {}", a.describe(), b.describe()),
            )]
        }
    };
    let OpKind::Write { len, acked_ms } = write.kind else {
        unreachable!("partitioned")
    };
    let mut found = Vec::new();
    if let Some(r) = reads
        .iter()
        .find(|r| matches!(r.kind, OpKind::Read { length: Some(l), .. } if l > len))
    {
        found.push(anomaly(
            AnomalyKind::NeverWritten,
            format!("{}; {}", write.describe(), r.describe()),
        ));
    }
    // The two flags: present at all, and present with every byte.
    let flags: [(&str, SetWhen); 2] = [
        ("exists", |length, _| length.is_some()),
        ("full", |length, len| length == Some(len)),
    ];
    for (flag, set) in flags {
        let mut lower = Bound {
            at_ms: write.invoked_ms,
            op: write,
        };
        let mut upper = acked_ms.map(|at_ms| Bound { at_ms, op: write });
        for r in reads {
            let OpKind::Read {
                completed_ms,
                length,
            } = r.kind
            else {
                continue;
            };
            if set(length, len) {
                if upper.is_none_or(|u| completed_ms < u.at_ms) {
                    upper = Some(Bound {
                        at_ms: completed_ms,
                        op: r,
                    });
                }
            } else if r.invoked_ms > lower.at_ms {
                lower = Bound {
                    at_ms: r.invoked_ms,
                    op: r,
                };
            }
        }
        let Some(upper) = upper else { continue };
        if lower.at_ms <= upper.at_ms {
            continue;
        }
        let kind = match (std::ptr::eq(lower.op, write), std::ptr::eq(upper.op, write)) {
            (false, true) => AnomalyKind::Lost,
            (false, false) => AnomalyKind::WentBack,
            (true, _) => AnomalyKind::FromTheFuture,
        };
        found.push(anomaly(
            kind,
            format!(
                "`{flag}` must be set by {} ms and clear after {} ms: {}; {}",
                upper.at_ms,
                lower.at_ms,
                upper.op.describe(),
                lower.op.describe()
            ),
        ));
    }
    found.dedup_by_key(|a| a.kind);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: u64 = 100;

    fn kinds(ops: &[Op]) -> Vec<AnomalyKind> {
        check(ops).anomalies.into_iter().map(|a| a.kind).collect()
    }

    #[test]
    fn reads_overlapping_the_write_may_see_any_stage_of_it() {
        let ops = [
            Op::write("w", "/f", 100, LEN, Some(200)),
            Op::read("r", "/f", 90, 110, None),
            Op::read("r", "/f", 120, 130, Some(0)),
            Op::read("r", "/f", 110, 190, None), // began before the one that saw it
            Op::read("r", "/f", 150, 160, Some(LEN)),
            Op::read("r", "/f", 200, 210, Some(LEN)), // a tie with the ack
            Op::read("r", "/f", 300, 310, Some(LEN)),
            Op::read("r", "/g", 300, 310, None),
        ];
        let verdict = check(&ops);
        assert!(verdict.is_linearizable(), "{:?}", verdict.anomalies);
        assert_eq!((verdict.writes, verdict.reads, verdict.paths), (1, 7, 2));
    }

    #[test]
    fn an_acknowledged_write_missing_from_a_later_read_is_lost() {
        let absent = [
            Op::write("w", "/f", 100, LEN, Some(200)),
            Op::read("r", "/f", 250, 260, None),
        ];
        assert_eq!(kinds(&absent), [AnomalyKind::Lost]);
        // Present but short after the close returned: the close is lost.
        let short = [
            Op::write("w", "/f", 100, LEN, Some(200)),
            Op::read("r", "/f", 250, 260, Some(0)),
        ];
        assert_eq!(kinds(&short), [AnomalyKind::Lost]);
    }

    #[test]
    fn a_read_seeing_less_than_an_earlier_read_went_back() {
        // The write never returned (the client was cut off): any outcome is allowed,
        // but not one seen and then unseen.
        let ops = [
            Op::write("w", "/f", 100, LEN, None),
            Op::read("r1", "/f", 150, 160, Some(LEN)),
            Op::read("r2", "/f", 170, 180, None),
        ];
        assert_eq!(kinds(&ops), [AnomalyKind::WentBack]);
        let fine = [
            Op::write("w", "/f", 100, LEN, None),
            Op::read("r2", "/f", 170, 180, None),
            Op::read("r1", "/f", 190, 200, Some(0)),
        ];
        assert!(check(&fine).is_linearizable());
    }

    #[test]
    fn a_read_done_before_the_write_began_cannot_see_it() {
        let ops = [
            Op::write("w", "/f", 100, LEN, Some(200)),
            Op::read("r", "/f", 50, 90, Some(0)),
        ];
        assert_eq!(kinds(&ops), [AnomalyKind::FromTheFuture]);
    }

    #[test]
    fn paths_nobody_wrote_and_bytes_nobody_wrote_are_anomalies() {
        let ops = [
            Op::read("r", "/ghost", 50, 90, Some(0)),
            Op::write("w", "/f", 100, LEN, Some(200)),
            Op::read("r", "/f", 250, 260, Some(LEN + 1)),
        ];
        let found = kinds(&ops);
        assert!(found.contains(&AnomalyKind::NeverWritten), "{found:?}");
        assert_eq!(
            check(&ops[..1]).anomalies[0].path,
            "/ghost",
            "the anomaly names its path"
        );
    }

    #[test]
    fn a_path_written_twice_is_refused() {
        let ops = [
            Op::write("a", "/f", 100, LEN, Some(200)),
            Op::write("b", "/f", 150, LEN, Some(250)),
        ];
        assert_eq!(kinds(&ops), [AnomalyKind::WrittenTwice]);
    }

    #[test]
    fn an_indeterminate_write_may_never_take_effect() {
        let ops = [
            Op::write("w", "/f", 100, LEN, None),
            Op::read("r", "/f", 500, 510, None),
            Op::read("r", "/f", 900, 910, None),
        ];
        assert!(check(&ops).is_linearizable());
    }
}
