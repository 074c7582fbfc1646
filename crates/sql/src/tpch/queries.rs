//! The 22 TPC-H queries, embedded, and the tables' registration in a DataFusion session.
//!
//! The text is `crates/sql/queries/qNN.sql`: the specification's queries with its
//! validation substitution parameters, in SQL that DataFusion and DuckDB both accept
//! (Q15's view `revenue0` as a common table expression).

use datafusion::prelude::SessionContext;

use super::{TpchError, TABLES};

/// The query texts, Q1 first.
pub const QUERIES: [&str; 22] = [
    include_str!("../../queries/q01.sql"),
    include_str!("../../queries/q02.sql"),
    include_str!("../../queries/q03.sql"),
    include_str!("../../queries/q04.sql"),
    include_str!("../../queries/q05.sql"),
    include_str!("../../queries/q06.sql"),
    include_str!("../../queries/q07.sql"),
    include_str!("../../queries/q08.sql"),
    include_str!("../../queries/q09.sql"),
    include_str!("../../queries/q10.sql"),
    include_str!("../../queries/q11.sql"),
    include_str!("../../queries/q12.sql"),
    include_str!("../../queries/q13.sql"),
    include_str!("../../queries/q14.sql"),
    include_str!("../../queries/q15.sql"),
    include_str!("../../queries/q16.sql"),
    include_str!("../../queries/q17.sql"),
    include_str!("../../queries/q18.sql"),
    include_str!("../../queries/q19.sql"),
    include_str!("../../queries/q20.sql"),
    include_str!("../../queries/q21.sql"),
    include_str!("../../queries/q22.sql"),
];

/// The text of query `n` (1 to 22).
pub fn query(n: usize) -> Result<&'static str, TpchError> {
    n.checked_sub(1)
        .and_then(|i| QUERIES.get(i))
        .copied()
        .ok_or(TpchError::NoSuchQuery(n))
}

/// `CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION 'BASE/t/'` for the eight tables;
/// `base_url` is a URL the session has an object store for (`file:///…`, `hdfs://…`).
pub fn create_tables_sql(base_url: &str) -> Vec<String> {
    let base = base_url.trim_end_matches('/');
    TABLES
        .iter()
        .map(|t| format!("CREATE EXTERNAL TABLE {t} STORED AS PARQUET LOCATION '{base}/{t}/'"))
        .collect()
}

/// Registers the eight tables at `base_url` in `ctx`.
pub async fn register_tables(ctx: &SessionContext, base_url: &str) -> Result<(), TpchError> {
    let failed = |source| TpchError::Register {
        base: base_url.to_string(),
        source,
    };
    for sql in create_tables_sql(base_url) {
        ctx.sql(&sql)
            .await
            .map_err(failed)?
            .collect()
            .await
            .map_err(failed)?;
    }
    Ok(())
}
