//! TPC-H on Tusk: the data, the 22 queries, an independent reference and the benchmark.
//!
//! Layout:
//! - [`generate`]: the eight tables at a scale factor from `tpchgen-arrow`, written as
//!   Parquet through any `ObjectStore` (local disk or the DFS) as `BASE/<table>/part-N.parquet`.
//! - [`queries`]: the 22 queries (`crates/sql/queries/qNN.sql`, the specification's
//!   validation parameters) embedded in the binary, and the tables' registration.
//! - [`answer`]: query results as plain rows, and their comparison with a tolerance.
//! - [`reference`]: DuckDB (the Python package, a subprocess) running the same text on the
//!   same Parquet files.
//! - [`bench`]: `tusk bench tpch`, the engines side by side, answers checked.
//! - [`error`]: what can fail.

pub mod answer;
pub mod bench;
pub mod error;
pub mod generate;
pub mod queries;
pub mod reference;

pub use error::TpchError;

/// The eight TPC-H tables, smallest first.
pub const TABLES: [&str; 8] = [
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
];
