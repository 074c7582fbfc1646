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

use crate::registry::Registry;

impl Registry {
    /// Every built-in component.
    pub fn builtin() -> Self {
        let mut r = Registry::empty();
        register(&mut r);
        r
    }
}

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
