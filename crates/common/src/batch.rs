//! Deferring wake-ups to the end of a burst of work on this thread.
//!
//! A server that handles many requests from one read (say, a hundred RPC calls that
//! arrived together) opens a [`Batch`]; actions passed to [`wake`] while it is open run
//! once, when it closes, instead of once per request. The NameNode uses this to hand a
//! whole burst of edits to its sync thread at once, so they share one `fdatasync`
//! instead of the first one being synced alone.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// A wake-up that may be deferred; compared by identity so each runs once per batch.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

thread_local! {
    static OPEN: Cell<u32> = const { Cell::new(0) };
    static DEFERRED: RefCell<Vec<Waker>> = const { RefCell::new(Vec::new()) };
}

/// An open batch on this thread; closing it (dropping) runs the deferred wake-ups.
/// Keep it within synchronous work: it belongs to the thread that opened it.
#[must_use]
pub struct Batch {
    _private: (),
}

/// Opens a batch on this thread.
pub fn begin() -> Batch {
    OPEN.with(|o| o.set(o.get() + 1));
    Batch { _private: () }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let still_open = OPEN.with(|o| {
            o.set(o.get().saturating_sub(1));
            o.get() > 0
        });
        if !still_open {
            let actions = DEFERRED.with(|d| std::mem::take(&mut *d.borrow_mut()));
            for a in actions {
                a();
            }
        }
    }
}

/// Runs `action` now, or at the end of this thread's open batch (once per batch).
pub fn wake(action: &Waker) {
    if OPEN.with(|o| o.get()) == 0 {
        action();
        return;
    }
    DEFERRED.with(|d| {
        let mut d = d.borrow_mut();
        if !d.iter().any(|w| Arc::ptr_eq(w, action)) {
            d.push(action.clone());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn wakes_run_once_at_the_end_of_a_batch() {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let waker: Waker = Arc::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
        });
        wake(&waker);
        assert_eq!(count.load(Ordering::SeqCst), 1, "outside a batch: at once");
        {
            let _b = begin();
            for _ in 0..5 {
                wake(&waker);
            }
            assert_eq!(count.load(Ordering::SeqCst), 1, "deferred");
        }
        assert_eq!(count.load(Ordering::SeqCst), 2, "once at the end");
    }
}
