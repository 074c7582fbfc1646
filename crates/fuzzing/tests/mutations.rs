//! The structured fuzz pass of the normal test suite: every fuzz target's seeds, mutated
//! from a fixed seed (truncated, bits flipped, length fields inflated, parts repeated or
//! dropped), each mutant run through the target's decode path. A mutant must be refused
//! or served without a panic, and without the decoder allocating more than a fixed
//! budget plus a multiple of the input's own length: an allocation sized by a length
//! field the input claims shows up here as megabytes from a few bytes.
//!
//! A failure prints the target, the seed and the mutant's bytes; save them as a file
//! and replay it with `cargo +nightly fuzz run -s none -a <target> <file>` in `fuzz/`.

// The allocation meter wraps the system allocator, which takes `unsafe`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use tusk_fuzzing::mutate::Mutator;

/// Net bytes this thread has allocated, and the most it has held since the last reset.
struct Meter;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: an allocation during thread teardown goes uncounted.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            // Counted as a move: both buffers are held for a moment.
            count(new_size as isize);
            count(-(layout.size() as isize));
        }
        q
    }
}

#[global_allocator]
static METER: Meter = Meter;

/// The most this thread held, above what it held before, while `f` ran.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    f();
    (PEAK.with(Cell::get) - base).max(0) as usize
}

/// What one input may make a decoder allocate on its own account: the largest buffer a
/// decoder sizes by an announced length before the bytes arrive (a 1 MiB packet), the
/// NameNode's checkpoint (1 MiB of edit-log preallocation), with room to spare.
const BUDGET: usize = 4 << 20;
/// Decoded messages may be larger than their encoding (an empty sub-message of two
/// bytes becomes a struct of a few hundred), so the bound grows with the input.
const PER_INPUT_BYTE: usize = 256;

/// Runs `mutants` mutants of `target`'s seeds.
fn pass(target: &str, mutants: usize) {
    let t = tusk_fuzzing::target(target).expect("target");
    let seeds = (t.seeds)();
    // Fixtures (a formatted namesystem, runtimes) are built by the first input.
    for (_, seed) in &seeds {
        (t.run)(seed);
    }
    let mut mutator = Mutator::new(0x7u64 ^ target.len() as u64);
    for i in 0..mutants {
        let (name, seed) = &seeds[i % seeds.len()];
        let input = mutator.mutant(seed);
        let outcome = catch_unwind(AssertUnwindSafe(|| peak_during(|| (t.run)(&input))));
        let bytes = || input.iter().map(|b| format!("{b:02x}")).collect::<String>();
        match outcome {
            Err(_) => panic!(
                "{target}: mutant {i} of seed {name} panicked; input (hex): {}",
                bytes()
            ),
            Ok(peak) => assert!(
                peak <= BUDGET + PER_INPUT_BYTE * input.len(),
                "{target}: mutant {i} of seed {name} ({} bytes) made the decoder hold {peak} bytes; input (hex): {}",
                input.len(),
                bytes()
            ),
        }
    }
}

#[test]
fn rpc_connection() {
    pass("rpc_connection", 30000);
}

#[test]
fn namenode_methods() {
    pass("namenode_methods", 10000);
}

#[test]
fn edit_log() {
    pass("edit_log", 10000);
}

#[test]
fn fsimage() {
    pass("fsimage", 10000);
}

#[test]
fn resourcemanager_methods() {
    pass("resourcemanager_methods", 15000);
}

#[test]
fn datatransfer_op() {
    pass("datatransfer_op", 30000);
}

#[test]
fn datatransfer_packet() {
    pass("datatransfer_packet", 30000);
}

#[test]
fn block_token() {
    pass("block_token", 10000);
}

#[test]
fn config() {
    pass("config", 8000);
}

/// The meter sees an allocation sized by a claimed length.
#[test]
fn the_meter_sees_a_large_allocation() {
    let peak = peak_during(|| {
        let v: Vec<u8> = Vec::with_capacity(BUDGET * 2);
        std::hint::black_box(&v);
    });
    assert!(peak >= BUDGET * 2, "{peak}");
}
