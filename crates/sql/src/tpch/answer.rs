//! Query results as plain rows, from Arrow batches or DuckDB's JSON, and their comparison.
//!
//! Numbers compare within 0.01 absolute or 1e-6 relative (engines round decimal averages
//! and divisions differently); text and dates exactly; rows in order (every TPC-H query
//! that returns more than one row orders it).

use datafusion::arrow::array::{Array, Float64Array, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

/// One value of a result row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Number(f64),
    /// Text, and dates as `YYYY-MM-DD`.
    Text(String),
}

/// A query's result: its rows, in the order the engine returned them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub rows: Vec<Vec<Cell>>,
}

impl Answer {
    /// Converts DataFusion's batches: numeric columns (integers, floats, decimals) to
    /// numbers, everything else to its display text.
    pub fn from_batches(batches: &[RecordBatch]) -> Result<Answer, ArrowError> {
        let mut rows = Vec::new();
        for batch in batches {
            let columns = batch
                .columns()
                .iter()
                .map(|c| column_cells(c.as_ref()))
                .collect::<Result<Vec<_>, _>>()?;
            for r in 0..batch.num_rows() {
                rows.push(columns.iter().map(|c| c[r].clone()).collect());
            }
        }
        Ok(Answer { rows })
    }

    /// Reads `rows` of the reference's JSON (`[[1, "a", null], …]`).
    pub fn from_json(rows: &serde_json::Value) -> Answer {
        let cell = |v: &serde_json::Value| match v {
            serde_json::Value::Null => Cell::Null,
            serde_json::Value::Number(n) => Cell::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => Cell::Text(s.clone()),
            other => Cell::Text(other.to_string()),
        };
        let rows = rows
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|row| {
                        row.as_array()
                            .map_or(Vec::new(), |r| r.iter().map(cell).collect())
                    })
                    .collect()
            })
            .unwrap_or_default();
        Answer { rows }
    }

    /// `None` when `self` matches `reference`, else the first difference.
    pub fn difference(&self, reference: &Answer) -> Option<String> {
        if self.rows.len() != reference.rows.len() {
            return Some(format!(
                "{} rows, the reference has {}",
                self.rows.len(),
                reference.rows.len()
            ));
        }
        for (i, (got, want)) in self.rows.iter().zip(&reference.rows).enumerate() {
            let same = got.len() == want.len() && got.iter().zip(want).all(|(a, b)| close(a, b));
            if !same {
                return Some(format!("row {i}: {got:?}, the reference has {want:?}"));
            }
        }
        None
    }
}

fn close(a: &Cell, b: &Cell) -> bool {
    match (a, b) {
        (Cell::Number(x), Cell::Number(y)) => {
            let diff = (x - y).abs();
            diff <= 0.01 || diff <= 1e-6 * x.abs().max(y.abs())
        }
        _ => a == b,
    }
}

fn column_cells(column: &dyn Array) -> Result<Vec<Cell>, ArrowError> {
    let numeric = matches!(
        column.data_type(),
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float16
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    );
    if numeric {
        let floats = cast(column, &DataType::Float64)?;
        let floats = floats
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("cast to Float64 gives a Float64Array");
        return Ok(floats
            .iter()
            .map(|v| v.map_or(Cell::Null, Cell::Number))
            .collect());
    }
    let formatter = ArrayFormatter::try_new(column, &FormatOptions::default())?;
    Ok((0..column.len())
        .map(|i| {
            if column.is_null(i) {
                Cell::Null
            } else {
                Cell::Text(formatter.value(i).to_string())
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(rows: &[&[Cell]]) -> Answer {
        Answer {
            rows: rows.iter().map(|r| r.to_vec()).collect(),
        }
    }

    #[test]
    fn numbers_match_within_rounding_and_text_exactly() {
        let a = answer(&[&[Cell::Number(12.891), Cell::Text("BRAZIL".into())]]);
        let b = answer(&[&[Cell::Number(12.9), Cell::Text("BRAZIL".into())]]);
        assert_eq!(a.difference(&b), None);
        let c = answer(&[&[Cell::Number(12.95), Cell::Text("BRAZIL".into())]]);
        assert!(a.difference(&c).is_some());
        let d = answer(&[&[Cell::Number(12.891), Cell::Text("brazil".into())]]);
        assert!(a.difference(&d).is_some());
        // Large sums: a relative 1e-6.
        let big = answer(&[&[Cell::Number(123_456_789.0)]]);
        assert_eq!(
            big.difference(&answer(&[&[Cell::Number(123_456_789.5)]])),
            None
        );
        assert!(big
            .difference(&answer(&[&[Cell::Number(123_457_789.0)]]))
            .is_some());
    }

    #[test]
    fn row_order_and_count_matter() {
        let a = answer(&[&[Cell::Number(1.0)], &[Cell::Number(2.0)]]);
        let b = answer(&[&[Cell::Number(2.0)], &[Cell::Number(1.0)]]);
        assert!(a.difference(&b).unwrap().starts_with("row 0"));
        assert!(a.difference(&answer(&[&[Cell::Number(1.0)]])).is_some());
    }

    #[test]
    fn json_rows_read_as_cells() {
        let json = serde_json::json!([[1, 2.5, "1995-03-15", null]]);
        assert_eq!(
            Answer::from_json(&json),
            answer(&[&[
                Cell::Number(1.0),
                Cell::Number(2.5),
                Cell::Text("1995-03-15".into()),
                Cell::Null
            ]])
        );
    }
}
