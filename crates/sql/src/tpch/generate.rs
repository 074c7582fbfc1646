//! The eight TPC-H tables at a scale factor, written as Parquet through an `ObjectStore`.
//!
//! Each table is cut into parts of about [`ROWS_PER_FILE`] rows (`tpchgen`'s own
//! partitioning, so the parts together are exactly the table), each part generated and
//! encoded on a blocking thread, at most as many at once as the host has cores, and put
//! as `BASE/<table>/part-N.parquet`. A `BASE/_SUCCESS` file naming the scale factor is
//! written last: [`generate`] with the same scale on the same base reuses the data.

use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::Compression;
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::properties::WriterProperties;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use tokio::sync::Semaphore;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::arrow::array::RecordBatch;
use tpchgen_arrow::arrow::datatypes::SchemaRef;
use tpchgen_arrow::arrow::error::ArrowError;
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

use super::{TpchError, TABLES};

/// About this many rows per Parquet file (a part of a table).
pub const ROWS_PER_FILE: f64 = 2_000_000.0;
/// Rows per row group: several row groups per file, so that scans split within a file.
pub const ROWS_PER_ROW_GROUP: usize = 256 * 1024;

/// What [`generate`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateReport {
    /// False when the data was already there at this scale and was reused.
    pub generated: bool,
    /// Files written (0 when reused).
    pub files: usize,
    /// Bytes written (0 when reused).
    pub bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// Writes the eight tables at `scale` under `base` in `store`, unless `base/_SUCCESS`
/// says they are there at this scale already.
pub async fn generate(
    store: Arc<dyn ObjectStore>,
    base: &Path,
    scale: f64,
) -> Result<GenerateReport, TpchError> {
    let start = Instant::now();
    let marker = base.clone().join("_SUCCESS");
    if let Ok(found) = store.get(&marker).await {
        let text = found.bytes().await.unwrap_or_default();
        if String::from_utf8_lossy(&text).trim() == success_text(scale).trim() {
            return Ok(GenerateReport {
                generated: false,
                files: 0,
                bytes: 0,
                elapsed: start.elapsed(),
            });
        }
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let permits = Arc::new(Semaphore::new(cores));
    let mut tasks = tokio::task::JoinSet::new();
    // Largest first, so that the long parts start early.
    for table in TABLES.iter().rev() {
        let parts = parts(table, scale);
        for part in 1..=parts {
            let (store, permits) = (store.clone(), permits.clone());
            let path = base
                .clone()
                .join(*table)
                .join(format!("part-{}.parquet", part - 1).as_str());
            tasks.spawn(async move {
                let _permit = permits.acquire_owned().await.expect("never closed");
                let bytes = tokio::task::spawn_blocking(move || encode(table, scale, part, parts))
                    .await??;
                let len = bytes.len() as u64;
                store
                    .put(&path, PutPayload::from(bytes))
                    .await
                    .map_err(|source| TpchError::Store {
                        path: path.to_string(),
                        source,
                    })?;
                Ok::<u64, TpchError>(len)
            });
        }
    }
    let (mut files, mut bytes) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        bytes += done??;
        files += 1;
    }
    store
        .put(&marker, PutPayload::from(success_text(scale)))
        .await
        .map_err(|source| TpchError::Store {
            path: marker.to_string(),
            source,
        })?;
    Ok(GenerateReport {
        generated: true,
        files,
        bytes,
        elapsed: start.elapsed(),
    })
}

fn success_text(scale: f64) -> String {
    format!("tpch scale={scale}\n")
}

/// Rows of `table` at scale factor 1 (region and nation do not scale).
fn rows_at_sf1(table: &str) -> f64 {
    match table {
        "lineitem" => 6_001_215.0,
        "orders" => 1_500_000.0,
        "partsupp" => 800_000.0,
        "part" => 200_000.0,
        "customer" => 150_000.0,
        "supplier" => 10_000.0,
        _ => 0.0,
    }
}

/// How many files `table` is cut into at `scale`.
fn parts(table: &str, scale: f64) -> i32 {
    ((rows_at_sf1(table) * scale / ROWS_PER_FILE).ceil() as i32).max(1)
}

/// One part of one table, generated and encoded as a Parquet file in memory.
fn encode(table: &str, scale: f64, part: i32, parts: i32) -> Result<Vec<u8>, TpchError> {
    // Each table's generator, wrapped by its Arrow adapter.
    macro_rules! table {
        ($arrow:ident, $generator:ident) => {
            (
                $arrow::schema_ref(),
                Box::new($arrow::new($generator::new(scale, part, parts)))
                    as Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>,
            )
        };
    }
    let (schema, batches): (SchemaRef, _) = match table {
        "region" => table!(RegionArrow, RegionGenerator),
        "nation" => table!(NationArrow, NationGenerator),
        "supplier" => table!(SupplierArrow, SupplierGenerator),
        "customer" => table!(CustomerArrow, CustomerGenerator),
        "part" => table!(PartArrow, PartGenerator),
        "partsupp" => table!(PartSuppArrow, PartSuppGenerator),
        "orders" => table!(OrderArrow, OrderGenerator),
        _ => table!(LineItemArrow, LineItemGenerator),
    };
    let parquet = |source: ParquetError| TpchError::Parquet {
        table: table.to_string(),
        source,
    };
    let properties = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROWS_PER_ROW_GROUP))
        .build();
    let mut writer = ArrowWriter::try_new(Vec::new(), schema, Some(properties)).map_err(parquet)?;
    for batch in batches {
        let batch = batch.map_err(|e| parquet(e.into()))?;
        writer.write(&batch).map_err(parquet)?;
    }
    writer.into_inner().map_err(parquet)
}
