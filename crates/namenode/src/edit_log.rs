//! The edit log with group commit.
//!
//! Operations append their record to an in-memory buffer while holding the namesystem
//! lock (so log order is apply order) and then wait, without the lock, until a sync
//! thread has written and `fdatasync`ed a batch containing their txid. Whatever arrives
//! during one sync rides the next one, so concurrent operations share a single sync.
//!
//! Record framing: `u32 length | u32 crc32c(payload) | payload (EditRecord)`, big-endian.
//! A torn record at the end of the log is never acknowledged and is dropped at replay.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use prost::Message;
use tokio::sync::watch;
use tusk_proto::internal::EditRecord;

use crate::error::{NameNodeError, Result};

/// Where log bytes go. The file implementation syncs to disk; tests may use memory.
pub trait EditSink: Send + 'static {
    /// Appends and makes durable.
    fn write_durable(&mut self, data: &[u8]) -> std::io::Result<()>;
}

/// An edit segment file on disk. Like Hadoop's edit log it is preallocated with zeros a
/// megabyte at a time, so a sync only writes data into blocks the file already owns and
/// `fdatasync` need not commit a metadata change each time. A record header of zero
/// length marks the end of the log.
pub struct FileSink {
    file: File,
    /// Where the next record goes.
    pos: u64,
    /// Bytes of the file written so far, records and zero fill.
    allocated: u64,
}

/// How much zero fill is added at a time.
const PREALLOCATE: u64 = 1 << 20;

impl FileSink {
    /// Opens a segment; records go after its current contents (replay has already cut
    /// off any torn or zero tail).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        let len = file.metadata()?.len();
        Ok(FileSink {
            file,
            pos: len,
            allocated: len,
        })
    }

    fn preallocate(&mut self, end: u64) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let zeros = vec![0u8; PREALLOCATE as usize];
        let target = end.div_ceil(PREALLOCATE) * PREALLOCATE + PREALLOCATE;
        while self.allocated < target {
            let n = (target - self.allocated).min(PREALLOCATE) as usize;
            self.file.write_all_at(&zeros[..n], self.allocated)?;
            self.allocated += n as u64;
        }
        Ok(())
    }
}

impl EditSink for FileSink {
    fn write_durable(&mut self, data: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        let end = self.pos + data.len() as u64;
        if end > self.allocated {
            self.preallocate(end)?;
        }
        self.file.write_all_at(data, self.pos)?;
        self.pos = end;
        self.file.sync_data()
    }
}

/// Keeps every synced byte in memory (tests).
#[derive(Clone, Default)]
pub struct MemorySink {
    pub data: Arc<Mutex<Vec<u8>>>,
}

impl EditSink for MemorySink {
    fn write_durable(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.data.lock().expect("sink lock").extend_from_slice(data);
        Ok(())
    }
}

struct Buffer {
    /// Encoded records not yet handed to the sync thread.
    data: Vec<u8>,
    /// Txid of the last record appended.
    last_txid: u64,
    /// Replacement sink requested by a roll; installed by the sync thread.
    next_sink: Option<Box<dyn EditSink>>,
    /// Set after a failed sync: the NameNode can no longer acknowledge anything.
    failed: Option<String>,
    closed: bool,
}

struct Shared {
    buffer: Mutex<Buffer>,
    wake: Condvar,
    /// Wakes the sync thread; deferred to the end of an RPC burst (see
    /// `tusk_common::batch`) so a burst of edits is synced together.
    kick: tusk_common::batch::Waker,
    /// Highest txid known durable.
    durable: watch::Sender<u64>,
}

/// Cheap to clone; all clones append to the same log.
#[derive(Clone)]
pub struct EditLog {
    shared: Arc<Shared>,
}

impl EditLog {
    /// Starts a log whose next record gets txid `last_txid + 1`.
    pub fn start(sink: Box<dyn EditSink>, last_txid: u64) -> Self {
        let (durable, _) = watch::channel(last_txid);
        let shared = Arc::new_cyclic(|weak: &std::sync::Weak<Shared>| {
            let weak = weak.clone();
            let kick: tusk_common::batch::Waker = Arc::new(move || {
                if let Some(shared) = weak.upgrade() {
                    shared.wake.notify_one();
                }
            });
            Shared {
                buffer: Mutex::new(Buffer {
                    data: Vec::with_capacity(1 << 16),
                    last_txid,
                    next_sink: None,
                    failed: None,
                    closed: false,
                }),
                wake: Condvar::new(),
                kick,
                durable,
            }
        });
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("edit-log-sync".into())
            .spawn(move || sync_loop(thread_shared, sink))
            .expect("spawn edit log thread");
        EditLog { shared }
    }

    /// Appends a record, assigning its txid. Call while holding the namesystem lock.
    pub fn append(&self, mut record: EditRecord) -> u64 {
        let mut buf = self.shared.buffer.lock().expect("edit buffer");
        buf.last_txid += 1;
        record.txid = buf.last_txid;
        encode_record(&record, &mut buf.data);
        drop(buf);
        tusk_common::batch::wake(&self.shared.kick);
        record.txid
    }

    pub fn last_txid(&self) -> u64 {
        self.shared.buffer.lock().expect("edit buffer").last_txid
    }

    /// Waits until `txid` is durable.
    pub async fn wait_durable(&self, txid: u64) -> Result<()> {
        let mut rx = self.shared.durable.subscribe();
        loop {
            if *rx.borrow_and_update() >= txid {
                return Ok(());
            }
            if let Some(msg) = &self.shared.buffer.lock().expect("edit buffer").failed {
                return Err(NameNodeError::EditLog(msg.clone()));
            }
            if rx.changed().await.is_err() {
                return Err(NameNodeError::EditLog("edit log closed".into()));
            }
        }
    }

    /// Blocks the calling thread until everything appended so far is durable.
    pub fn flush_blocking(&self) -> Result<()> {
        let target = self.last_txid();
        let mut rx = self.shared.durable.subscribe();
        loop {
            if *rx.borrow_and_update() >= target {
                return Ok(());
            }
            if let Some(msg) = &self.shared.buffer.lock().expect("edit buffer").failed {
                return Err(NameNodeError::EditLog(msg.clone()));
            }
            self.shared.wake.notify_one();
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }

    /// After a flush, directs further records to `sink` (a new segment).
    pub fn roll(&self, sink: Box<dyn EditSink>) -> Result<()> {
        self.flush_blocking()?;
        self.shared.buffer.lock().expect("edit buffer").next_sink = Some(sink);
        Ok(())
    }

    /// Stops the sync thread after it has synced what is buffered.
    pub fn close(&self) {
        let _ = self.flush_blocking();
        self.shared.buffer.lock().expect("edit buffer").closed = true;
        self.shared.wake.notify_one();
    }
}

fn sync_loop(shared: Arc<Shared>, mut sink: Box<dyn EditSink>) {
    let mut batch = Vec::with_capacity(1 << 16);
    loop {
        let last_txid = {
            let mut buf = shared.buffer.lock().expect("edit buffer");
            while buf.data.is_empty() && buf.next_sink.is_none() && !buf.closed {
                // The timeout re-checks in case a deferred wake-up never came: records
                // wait at most this long.
                buf = shared
                    .wake
                    .wait_timeout(buf, std::time::Duration::from_millis(2))
                    .expect("edit buffer")
                    .0;
            }
            if let Some(next) = buf.next_sink.take() {
                sink = next;
            }
            if buf.data.is_empty() && buf.closed {
                return;
            }
            std::mem::swap(&mut batch, &mut buf.data);
            buf.last_txid
        };
        if batch.is_empty() {
            continue;
        }
        if let Err(e) = sink.write_durable(&batch) {
            tracing::error!(error = %e, "edit log sync failed; refusing further acknowledgements");
            shared.buffer.lock().expect("edit buffer").failed = Some(e.to_string());
            shared.durable.send_modify(|_| {});
            return;
        }
        batch.clear();
        shared.durable.send_replace(last_txid);
    }
}

pub fn encode_record(record: &EditRecord, out: &mut Vec<u8>) {
    let len = record.encoded_len();
    out.reserve(8 + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    let crc_at = out.len();
    out.extend_from_slice(&[0; 4]);
    record.encode(out).expect("Vec grows");
    let crc = crc32c::crc32c(&out[crc_at + 4..]);
    out[crc_at..crc_at + 4].copy_from_slice(&crc.to_be_bytes());
}

/// Decodes records from a segment; returns them and the byte length of the valid prefix.
pub fn decode_records(data: &[u8]) -> (Vec<EditRecord>, usize) {
    let mut out = Vec::new();
    let mut pos = 0;
    while data.len() - pos >= 8 {
        let len = u32::from_be_bytes(data[pos..pos + 4].try_into().expect("4 bytes")) as usize;
        if len == 0 {
            // Preallocated zero fill: the end of the log.
            break;
        }
        let crc = u32::from_be_bytes(data[pos + 4..pos + 8].try_into().expect("4 bytes"));
        let Some(payload) = data.get(pos + 8..pos + 8 + len) else {
            break;
        };
        if crc32c::crc32c(payload) != crc {
            break;
        }
        let Ok(record) = EditRecord::decode(payload) else {
            break;
        };
        out.push(record);
        pos += 8 + len;
    }
    (out, pos)
}

/// Reads a segment file, truncating a torn tail so new records follow valid ones.
pub fn read_segment(path: &PathBuf) -> Result<Vec<EditRecord>> {
    let mut data = Vec::new();
    File::open(path)?.read_to_end(&mut data)?;
    let (records, valid) = decode_records(&data);
    if valid < data.len() {
        tracing::warn!(
            path = %path.display(),
            dropped = data.len() - valid,
            "dropping a torn edit log tail"
        );
        OpenOptions::new()
            .write(true)
            .open(path)?
            .set_len(valid as u64)?;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tusk_proto::internal::{edit_record::Op, MkdirOp};

    fn mkdir(path: &str) -> EditRecord {
        EditRecord {
            txid: 0,
            op: Some(Op::Mkdir(MkdirOp {
                path: path.into(),
                ..Default::default()
            })),
        }
    }

    #[tokio::test]
    async fn appended_records_become_durable_in_order() {
        let sink = MemorySink::default();
        let log = EditLog::start(Box::new(sink.clone()), 10);
        let a = log.append(mkdir("/a"));
        let b = log.append(mkdir("/b"));
        assert_eq!((a, b), (11, 12));
        log.wait_durable(b).await.unwrap();
        let data = sink.data.lock().unwrap().clone();
        let (records, valid) = decode_records(&data);
        assert_eq!(valid, data.len());
        assert_eq!(
            records.iter().map(|r| r.txid).collect::<Vec<_>>(),
            vec![11, 12]
        );
        log.close();
    }

    #[test]
    fn preallocated_segments_replay_up_to_the_zero_fill() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("edits");
        let mut sink = FileSink::open(&path).unwrap();
        let mut data = Vec::new();
        encode_record(
            &EditRecord {
                txid: 1,
                ..mkdir("/a")
            },
            &mut data,
        );
        sink.write_durable(&data).unwrap();
        assert!(
            std::fs::metadata(&path).unwrap().len() >= PREALLOCATE,
            "zero-filled ahead"
        );
        drop(sink);
        let records = read_segment(&path.to_path_buf()).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            data.len() as u64,
            "zero tail cut at replay"
        );
        // Appending after a restart continues after the last record.
        let mut sink = FileSink::open(&path).unwrap();
        let mut more = Vec::new();
        encode_record(
            &EditRecord {
                txid: 2,
                ..mkdir("/b")
            },
            &mut more,
        );
        sink.write_durable(&more).unwrap();
        drop(sink);
        let txids: Vec<u64> = read_segment(&path.to_path_buf())
            .unwrap()
            .iter()
            .map(|r| r.txid)
            .collect();
        assert_eq!(txids, vec![1, 2]);
    }

    #[test]
    fn torn_tail_is_ignored() {
        let mut data = Vec::new();
        encode_record(&mkdir("/a"), &mut data);
        let good = data.len();
        encode_record(&mkdir("/b"), &mut data);
        data.truncate(data.len() - 3);
        let (records, valid) = decode_records(&data);
        assert_eq!(records.len(), 1);
        assert_eq!(valid, good);
        data[good - 1] ^= 0xff;
        assert_eq!(decode_records(&data).0.len(), 0);
    }
}
