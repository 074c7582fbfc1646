//! What the experiments' results look like to a reader: statistics over the measured
//! values, SVG charts and task-time CDFs.
//!
//! - `stats`: medians, confidence intervals, Welch's test and TestDFSIO's rate statistics.
//! - `chart`: SVG grouped bar and line charts for the reports.
//! - `cdf`: task-time CDFs as SVG line charts.

pub mod cdf;
pub mod chart;
pub mod stats;
