//! Progress bars for long work: a large copy, a job, a study of many runs.
//!
//! A bar is drawn on stderr only when stderr is a terminal (and `TUSK_PROGRESS` is not
//! `0`); otherwise it counts silently, so scripts, pipes and logs see exactly the output
//! they saw before. Lines printed through [`Progress::println`] go above a drawn bar, or
//! to stderr as plain lines when none is drawn.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Transfers smaller than this are not drawn: 8 MiB.
pub const SMALL_TRANSFER: u64 = 8 << 20;

/// One bar: bytes of a transfer or steps of a longer piece of work.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// Bytes of a transfer named `label`; `total` when the size is known beforehand.
    /// A transfer known to be smaller than [`SMALL_TRANSFER`] is not drawn (its bar
    /// would only flash, once per file of a many-file copy).
    pub fn bytes(label: &str, total: Option<u64>) -> Progress {
        let template = match total {
            Some(_) => "{prefix} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            None => "{prefix} {bytes} {binary_bytes_per_sec} {elapsed}",
        };
        let drawn = total.is_none_or(|n| n >= SMALL_TRANSFER);
        Progress::new(label, total, template, drawn)
    }

    /// `total` steps (runs, rounds, trials) of the work named `label`; the message
    /// says which one is under way.
    pub fn steps(label: &str, total: u64) -> Progress {
        Progress::new(
            label,
            Some(total),
            "{prefix} [{bar:30}] {pos}/{len} {elapsed} {wide_msg}",
            true,
        )
    }

    /// Work that reports its own position out of `total` (a job's `map x% reduce y%`):
    /// the bar and the message, no step counts.
    pub fn phases(label: &str, total: u64) -> Progress {
        Progress::new(
            label,
            Some(total),
            "{prefix} [{bar:30}] {elapsed} {wide_msg}",
            true,
        )
    }

    fn new(label: &str, total: Option<u64>, template: &str, drawn: bool) -> Progress {
        let target = if drawn {
            draw_target()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(total, target);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label.to_string());
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        Progress { bar }
    }

    /// Whether the bar is drawn (stderr is a terminal).
    pub fn is_drawn(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// `n` more bytes or steps done.
    pub fn advance(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Sets how far the work is (for work that reports its own position).
    pub fn set_position(&self, done: u64) {
        self.bar.set_position(done);
    }

    /// How many bytes or steps are done.
    pub fn position(&self) -> u64 {
        self.bar.position()
    }

    /// What is under way now (shown after the bar).
    pub fn set_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// A line of output that must not be torn by the bar: above it when drawn, else on
    /// stderr as before.
    pub fn println(&self, line: impl AsRef<str>) {
        if self.bar.is_hidden() {
            eprintln!("{}", line.as_ref());
        } else {
            self.bar.println(line.as_ref());
        }
    }

    /// The work is over: the bar is cleared from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // A bar left by an early return (an error) is cleared, not left half-drawn
        // above the error message.
        if !self.bar.is_finished() {
            self.bar.finish_and_clear();
        }
    }
}

fn draw_target() -> ProgressDrawTarget {
    let wanted = std::env::var("TUSK_PROGRESS").map_or(true, |v| v != "0");
    if wanted && std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_counts_what_was_done_drawn_or_not() {
        let p = Progress::bytes("put", Some(10 << 20));
        p.advance(1 << 20);
        p.advance(3 << 20);
        assert_eq!(p.position(), 4 << 20);
        p.set_position(9);
        assert_eq!(p.position(), 9);
        p.finish();
    }
}
