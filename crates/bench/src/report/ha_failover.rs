//! The failover report: per writer what was acknowledged, lost or unreadable and how
//! soon it wrote again after each kill; the election and rejoin times; a row per kill
//! (also as CSV).

use crate::experiments::ha_failover::timeline::Spread;
use crate::experiments::ha_failover::{HaFailoverReport, KillRound};

/// Issue 28's bound on the median resume time, seconds.
const RESUME_TARGET_SECONDS: f64 = 5.0;

impl HaFailoverReport {
    pub fn to_markdown(&self) -> String {
        let o = &self.options;
        let mut s = format!(
            "### NameNode HA: kill -9 of the active under write load, {} kills\n\n{}\n",
            self.rounds.len(),
            self.context.to_markdown()
        );
        s.push_str(&format!(
            "Each writer writes files of {} KiB one after another ({} ms apart) under a \
             directory of its own; an acknowledged file is one whose close returned. After \
             each kill the writers must acknowledge {} more files, then the killed NameNode \
             is started again and must answer `standby`, then {} more files, before the next \
             kill. At the end every acknowledged file is read back with Tusk's client and \
             compared byte for byte. Meanwhile a reader asks the NameNodes about each \
             writer's file before, at and after the one it writes (`getFileInfo`); every \
             write (from its invocation to its acknowledgement, or none) and every answered \
             read form a history, checked for linearizability (a file is a register \
             written once: present, then whole; nothing acknowledged may go missing and \
             nothing seen may be unseen later).\n\n",
            o.file_bytes >> 10,
            o.interval.as_millis(),
            o.acks_per_phase,
            o.acks_per_phase,
        ));
        s.push_str(&self.writers_table());
        s.push('\n');
        s.push_str("| kill → | median s | min s | max s |\n|---|---|---|---|\n");
        s.push_str(&spread_row(
            "another NameNode active (election)",
            &self.election,
        ));
        s.push_str(&spread_row(
            "killed NameNode started again → standby",
            &self.rejoin,
        ));
        s.push('\n');
        s.push_str(&self.history_line());
        s.push_str(&self.target_line());
        if let Some(why) = &self.aborted {
            s.push_str(&format!("\nThe kills stopped early: {why}.\n"));
        }
        s.push_str(&format!("\n#### Per kill (s)\n\n{}", self.rounds_table()));
        let errors: Vec<String> = self
            .writers
            .iter()
            .flat_map(|w| {
                w.first_errors
                    .iter()
                    .map(move |e| format!("- {}: `{}`\n", w.client.name(), e))
            })
            .collect();
        if !errors.is_empty() {
            s.push_str("\nFirst failed files each writer reported:\n\n");
            s.push_str(&errors.concat());
        }
        let bad: Vec<String> = self
            .writers
            .iter()
            .flat_map(|w| w.bad_paths.iter().map(|p| format!("- `{p}`\n")))
            .collect();
        if !bad.is_empty() {
            s.push_str("\nAcknowledged files lost, unreadable or wrong:\n\n");
            s.push_str(&bad.concat());
        }
        s
    }

    fn writers_table(&self) -> String {
        let mut s = String::from(
            "| writer | acked files | lost | unreadable | wrong bytes | present, never acked \
             | failed files | resume median s | resume min s | resume max s | not resumed \
             | longest gap median s | longest gap max s |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        );
        for w in &self.writers {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {} | {:.2} | {:.2} |\n",
                w.client.name(),
                w.acked,
                w.lost,
                w.unreadable,
                w.wrong_bytes,
                w.present_unacked,
                w.errors,
                w.resume.median,
                w.resume.min,
                w.resume.max,
                w.not_resumed,
                w.longest_gap.median,
                w.longest_gap.max,
            ));
        }
        s
    }

    /// The history check's verdict, with every anomaly it found.
    fn history_line(&self) -> String {
        let h = &self.history;
        let mut s = format!(
            "History check: {} writes and {} reads of {} files: **{}**.\n",
            h.writes,
            h.reads,
            h.paths,
            if h.anomalies.is_empty() {
                "linearizable, no anomaly".to_string()
            } else {
                format!("{} anomalies", h.anomalies.len())
            }
        );
        for a in &h.anomalies {
            s.push_str(&format!("- {a}\n"));
        }
        s.push('\n');
        s
    }

    /// Whether issue 28's first target, and its history check, held in this run.
    fn target_line(&self) -> String {
        let damaged = self.damaged();
        let worst = self
            .writers
            .iter()
            .map(|w| w.resume.median)
            .fold(0.0, f64::max);
        let resumed_all = self.writers.iter().all(|w| w.not_resumed == 0);
        let anomalies = self.history.anomalies.len();
        let met = damaged == 0
            && anomalies == 0
            && resumed_all
            && worst <= RESUME_TARGET_SECONDS
            && self.aborted.is_none();
        format!(
            "Target (issue 28): 0 acknowledged files lost, none unreadable, no anomaly in \
             the history, writes resuming within {RESUME_TARGET_SECONDS} s (median of the \
             kills): **{}** ({} lost, unreadable or wrong; {} anomalies; slowest writer's \
             median resume {:.2} s{}).\n",
            if met { "met" } else { "not met" },
            damaged,
            anomalies,
            worst,
            if resumed_all {
                ""
            } else {
                "; a writer did not resume after some kill"
            },
        )
    }

    fn rounds_table(&self) -> String {
        let mut s = String::from("| kill | killed | new active | election |");
        let mut rule = String::from("|---|---|---|---|");
        for w in &self.writers {
            s.push_str(&format!(" {} resume | gap |", w.client.name()));
            rule.push_str("---|---|");
        }
        s.push_str(" rejoin |\n");
        rule.push_str("---|\n");
        s.push_str(&rule);
        for r in &self.rounds {
            s.push_str(&format!(
                "| {} | {} | {} | {} |",
                r.round,
                r.killed,
                r.new_active.as_deref().unwrap_or("none"),
                seconds(r.election_seconds)
            ));
            for w in &r.writers {
                s.push_str(&format!(
                    " {} | {} |",
                    seconds(w.resume_seconds),
                    seconds(w.longest_gap_seconds)
                ));
            }
            s.push_str(&format!(" {} |\n", seconds(r.rejoin_seconds)));
        }
        s
    }

    /// A row per kill: `round,killed,new_active,kill_ms,election_s,rejoin_s`, then per
    /// writer `<writer>_resume_s,<writer>_gap_s,<writer>_errors`.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("round,killed,new_active,kill_ms,election_s,rejoin_s");
        let writers = self
            .rounds
            .first()
            .map(|r| r.writers.as_slice())
            .unwrap_or(&[]);
        for w in writers {
            let key = csv_key(w.client.dir());
            s.push_str(&format!(",{key}_resume_s,{key}_gap_s,{key}_errors"));
        }
        s.push('\n');
        for r in &self.rounds {
            s.push_str(&csv_row(r));
        }
        s
    }
}

fn csv_row(r: &KillRound) -> String {
    let mut s = format!(
        "{},{},{},{},{},{}",
        r.round,
        r.killed,
        r.new_active.as_deref().unwrap_or(""),
        r.kill_ms,
        csv_seconds(r.election_seconds),
        csv_seconds(r.rejoin_seconds)
    );
    for w in &r.writers {
        s.push_str(&format!(
            ",{},{},{}",
            csv_seconds(w.resume_seconds),
            csv_seconds(w.longest_gap_seconds),
            w.errors
        ));
    }
    s.push('\n');
    s
}

/// `tusk`, `hadoop`, `native`: the writer's directory's last name.
fn csv_key(dir: &str) -> &str {
    dir.rsplit('/').next().unwrap_or(dir)
}

fn spread_row(what: &str, s: &Spread) -> String {
    format!(
        "| {what} | {:.2} | {:.2} | {:.2} |\n",
        s.median, s.min, s.max
    )
}

fn seconds(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{x:.2}"))
}

fn csv_seconds(x: Option<f64>) -> String {
    x.map_or(String::new(), |x| format!("{x:.3}"))
}
