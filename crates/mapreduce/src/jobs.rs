//! Built-in jobs and the components they are made of. Each file holds one job: its
//! components and a constructor returning its [`crate::JobSpec`].
//!
//! | name | components |
//! |---|---|
//! | `library` | mappers `identity`, `line-as-key`; reducers `identity`, `sum`; partitioners `hash`, `modulo` |
//! | `wordcount` | mapper `wordcount` (+ `sum` as combiner and reducer) |
//! | `grep` | mapper `grep` (+ `sum`) |
//! | `sort` | text lines or key/value lines, identity reduce |
//! | `randomtextwriter` | mapper `randomtextwriter` (map-only) |
//! | `teragen` | mapper `teragen` (map-only, 100-byte records) |
//! | `terasort` | partitioner `totalorder` from sampled keys |
//! | `teravalidate` | mapper and reducer `teravalidate` |
//! | `dfsio` | mapper `dfsio` (+ `sum`) |
//! | `sleep` | mapper and reducer `sleep` |
//! | `streaming` | mapper and reducer `streaming` (any executable) |
//! | `aggregate` | reducer `aggregate` (`combine` as the combiner): Hadoop's Aggregate package for streaming |

pub mod aggregate;
pub mod dfsio;
pub mod grep;
pub mod library;
pub mod randomtextwriter;
pub mod sleep;
pub mod sort;
pub mod streaming;
pub mod teragen;
pub mod terasort;
pub mod teravalidate;
pub mod wordcount;

use crate::error::{MapReduceError, Result};
use crate::registry::Registry;

/// Registers every built-in component.
pub fn register(r: &mut Registry) {
    library::register(r);
    wordcount::register(r);
    grep::register(r);
    randomtextwriter::register(r);
    teragen::register(r);
    terasort::register(r);
    teravalidate::register(r);
    dfsio::register(r);
    sleep::register(r);
    streaming::register(r);
    aggregate::register(r);
}

/// Argument `i` parsed, or an error naming the component.
pub(crate) fn arg<T: std::str::FromStr>(
    component: &str,
    args: &[String],
    i: usize,
    what: &str,
) -> Result<T> {
    let raw = args.get(i).ok_or_else(|| {
        MapReduceError::bad_args(component, format!("missing argument {i} ({what})"))
    })?;
    raw.parse().map_err(|_| {
        MapReduceError::bad_args(
            component,
            format!("argument {i} ({what}): cannot parse {raw:?}"),
        )
    })
}

/// A decimal number as ASCII, for counts emitted as values.
pub(crate) fn decimal(n: u64, buf: &mut Vec<u8>) -> &[u8] {
    use std::io::Write;
    buf.clear();
    write!(buf, "{n}").expect("writing to a Vec");
    buf
}

/// ASCII decimal back to a number.
pub(crate) fn parse_decimal(v: &[u8]) -> Result<u64> {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            MapReduceError::Task(format!("not a count: {:?}", String::from_utf8_lossy(v)))
        })
}
