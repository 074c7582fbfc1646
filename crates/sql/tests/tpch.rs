//! TPC-H at scale factor 0.01 on local disk: the data generated through an object store,
//! all 22 queries answered by DataFusion with the row counts DuckDB gives on the same files.

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use tusk_sql::tpch::answer::{Answer, Cell};
use tusk_sql::tpch::generate::generate;
use tusk_sql::tpch::queries::{query, register_tables};
use tusk_sql::tpch::TABLES;

/// Rows of Q1..Q22 at SF 0.01, from the DuckDB reference on the same Parquet files
/// (`tusk bench tpch --scale 0.01 --trials 1`, every answer matching DuckDB's row by row).
const ROWS_AT_SF_0_01: [usize; 22] = [
    4, 4, 10, 5, 5, 1, 4, 2, 173, 20, 359, 2, 33, 1, 1, 296, 1, 2, 1, 1, 1, 7,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_22_queries_answer_at_sf_0_01() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir.path())?);
    let base = Path::from("sf001");
    let first = generate(store.clone(), &base, 0.01).await?;
    assert!(first.generated);
    assert_eq!(first.files, TABLES.len(), "one file per table at SF 0.01");
    for table in TABLES {
        let file = dir.path().join("sf001").join(table).join("part-0.parquet");
        assert!(file.is_file(), "{} missing", file.display());
    }
    let again = generate(store, &base, 0.01).await?;
    assert!(
        !again.generated,
        "the same scale on the same base is reused"
    );

    let ctx = SessionContext::new();
    register_tables(&ctx, &format!("file://{}/sf001", dir.path().display())).await?;
    for (i, want) in ROWS_AT_SF_0_01.iter().enumerate() {
        let n = i + 1;
        let batches = ctx.sql(query(n)?).await?.collect().await?;
        let answer = Answer::from_batches(&batches)?;
        assert_eq!(answer.rows.len(), *want, "Q{n}");
        if n == 1 {
            // The first group: returnflag A, linestatus F.
            assert_eq!(
                answer.rows[0][..2],
                [Cell::Text("A".into()), Cell::Text("F".into())]
            );
        }
    }
    Ok(())
}

#[test]
fn queries_are_numbered_1_to_22() {
    assert!(query(0).is_err());
    assert!(query(23).is_err());
    assert!(query(15).unwrap().contains("revenue0"));
}
