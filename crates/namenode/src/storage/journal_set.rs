//! One edit segment kept in every name directory in service (HDFS's `JournalSet`).
//!
//! A batch is durable once every directory still in service has synced it. The copies
//! are written at the same time, one thread each beyond the first, so a second disk adds
//! its own latency only where it is the slower one. A directory whose write fails leaves
//! the set (and the service, with an ERROR); the batch is still durable if another
//! synced it. Only when none is left does the write fail, and then the edit log refuses
//! every further acknowledgement.

use std::io;
use std::sync::Arc;

use super::NameDirs;
use crate::edit_log::EditSink;

/// The segment's copy in one name directory.
pub struct Journal {
    /// Index of its directory in the [`NameDirs`].
    pub dir: usize,
    pub sink: Box<dyn EditSink>,
}

pub struct JournalSet {
    dirs: Arc<NameDirs>,
    /// The copies still written; a failed one is dropped.
    journals: Vec<Journal>,
}

impl JournalSet {
    pub fn new(dirs: Arc<NameDirs>, journals: Vec<Journal>) -> Self {
        JournalSet { dirs, journals }
    }
}

impl EditSink for JournalSet {
    fn write_durable(&mut self, data: &[u8]) -> io::Result<()> {
        let dirs = &self.dirs;
        // A directory may have failed an image write since the last batch.
        self.journals.retain(|j| dirs.in_service(j.dir));
        let results = write_each(&mut self.journals, data);
        let mut last_error = None;
        for (journal, result) in self.journals.iter().zip(results) {
            if let Err(e) = result {
                dirs.take_out_of_service(journal.dir, &e);
                last_error = Some(e);
            }
        }
        self.journals.retain(|j| dirs.in_service(j.dir));
        if self.journals.is_empty() {
            return Err(io::Error::other(match last_error {
                Some(e) => format!("no name directory can be written (last failure: {e})"),
                None => "no name directory is in service".to_string(),
            }));
        }
        Ok(())
    }
}

/// Writes `data` to every journal at once; one result per journal, in order.
fn write_each(journals: &mut [Journal], data: &[u8]) -> Vec<io::Result<()>> {
    match journals {
        [] => Vec::new(),
        [only] => vec![only.sink.write_durable(data)],
        [first, rest @ ..] => std::thread::scope(|s| {
            let others: Vec<_> = rest
                .iter_mut()
                .map(|j| s.spawn(move || j.sink.write_durable(data)))
                .collect();
            let mut results = vec![first.sink.write_durable(data)];
            results.extend(others.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("edit log writer panicked")))
            }));
            results
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit_log::MemorySink;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Fails every write once `fail` is set, like a disk that filled up.
    struct FailingSink {
        fail: Arc<AtomicBool>,
        inner: MemorySink,
    }

    impl EditSink for FailingSink {
        fn write_durable(&mut self, data: &[u8]) -> io::Result<()> {
            if self.fail.load(Ordering::SeqCst) {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            self.inner.write_durable(data)
        }
    }

    fn set(
        n: usize,
    ) -> (
        Arc<NameDirs>,
        Vec<Arc<AtomicBool>>,
        Vec<MemorySink>,
        JournalSet,
    ) {
        let paths: Vec<PathBuf> = (0..n).map(|i| PathBuf::from(format!("/nn{i}"))).collect();
        let dirs = Arc::new(NameDirs::new(&paths));
        let fails: Vec<_> = (0..n).map(|_| Arc::new(AtomicBool::new(false))).collect();
        let sinks: Vec<_> = (0..n).map(|_| MemorySink::default()).collect();
        let journals = (0..n)
            .map(|i| Journal {
                dir: i,
                sink: Box::new(FailingSink {
                    fail: fails[i].clone(),
                    inner: sinks[i].clone(),
                }),
            })
            .collect();
        let set = JournalSet::new(dirs.clone(), journals);
        (dirs, fails, sinks, set)
    }

    /// Runs `f` and returns the ERROR events it logged on this thread.
    fn errors_logged(f: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Buf(Arc<std::sync::Mutex<Vec<u8>>>);
        impl io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let writer = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::ERROR)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text
    }

    #[test]
    fn every_directory_gets_every_batch() {
        let (_, _, sinks, mut set) = set(3);
        set.write_durable(b"one").unwrap();
        set.write_durable(b"two").unwrap();
        for s in sinks {
            assert_eq!(*s.data.lock().unwrap(), b"onetwo");
        }
    }

    #[test]
    fn a_failed_directory_leaves_service_and_the_rest_go_on_until_none_is_left() {
        let (dirs, fails, sinks, mut set) = set(2);
        set.write_durable(b"a").unwrap();
        fails[1].store(true, Ordering::SeqCst);
        let logged = errors_logged(|| {
            set.write_durable(b"b")
                .expect("one directory still takes the batch")
        });
        assert_eq!(logged.matches("ERROR").count(), 1, "{logged}");
        assert!(
            logged.contains("/nn1") && logged.contains("taken out of service"),
            "{logged}"
        );
        assert!(dirs.in_service(0) && !dirs.in_service(1));
        assert_eq!(*dirs.watch_in_service().borrow(), 1);
        // The failed one is not written again even once it would work.
        fails[1].store(false, Ordering::SeqCst);
        set.write_durable(b"c").unwrap();
        assert_eq!(*sinks[0].data.lock().unwrap(), b"abc");
        assert_eq!(*sinks[1].data.lock().unwrap(), b"a");

        fails[0].store(true, Ordering::SeqCst);
        let e = set.write_durable(b"d").unwrap_err();
        assert!(e.to_string().contains("no name directory"), "{e}");
        assert_eq!(*dirs.watch_in_service().borrow(), 0);
    }
}
