//! The run's context as the Markdown line under a report's title.

use crate::measure::context::RunContext;

impl RunContext {
    /// One Markdown line under a report's title.
    pub fn to_markdown(&self) -> String {
        format!(
            "Target: {}; host `{}`, {} cores; started at {} ms since the epoch; command: `{}`\n",
            self.target, self.hostname, self.cores, self.started_at_millis, self.command
        )
    }
}
