//! The map side's output path: records go into a [`SortBuffer`]; a full buffer is sorted
//! by (partition, key) and spilled (through the combiner, if any) to a spill file; at the
//! end the spills are merged into ONE partitioned `file.out` plus `file.out.index`, each
//! partition's segment optionally compressed. The format is in the crate docs.
//!
//! - `index`: [`IndexRecord`] and the index file; [`read_segment`] for shuffle servers.
//! - `sort_buffer`: the in-memory buffer and its sort.
//! - `spill`: spill files and the merge of spills into the final output.
//! - `collector`: [`MapOutputCollector`], the map function's [`crate::Emitter`].

pub mod collector;
pub mod index;
pub mod sort_buffer;
pub mod spill;

pub use collector::MapOutputCollector;
pub use index::{read_index, read_segment, write_index, IndexRecord};
pub use sort_buffer::SortBuffer;

/// The merged map output file in a map task's local directory.
pub const FILE_OUT: &str = "file.out";
/// Its index.
pub const FILE_OUT_INDEX: &str = "file.out.index";
