//! The active's edit-log sink: each edit of a batch becomes one record of the
//! replicated log, and the batch is durable once all of them are committed on a
//! majority of NameNodes (each copy fsync'ed there). The edit log's group commit works
//! as with a local file, and several batches are in flight at once.

use std::sync::Arc;

use tusk_ha::ReplicatedLog;

use crate::edit_log::scan::{self, RawRecord, SegmentEnd};
use crate::edit_log::{Completion, EditSink};

/// Writes batches of framed edit records (`u32 length | u32 crc32c | EditRecord`) to the
/// replicated log. A record's index in the log is its txid: the sink checks it, since a
/// difference means this NameNode's namespace is not the log's.
pub struct ReplicatedSink {
    log: Arc<ReplicatedLog>,
    /// For waiting from a thread outside the runtime (a shutdown's last flush).
    runtime: tokio::runtime::Handle,
}

impl ReplicatedSink {
    pub fn new(log: Arc<ReplicatedLog>, runtime: tokio::runtime::Handle) -> Self {
        ReplicatedSink { log, runtime }
    }

    /// Appends every record of `data` (their order fixed now, under the edit log's sink
    /// lock) and returns what waits for their commits and checks their indexes.
    fn append_batch(
        &self,
        data: &[u8],
    ) -> std::io::Result<impl std::future::Future<Output = std::io::Result<()>> + Send + 'static>
    {
        let appends: Vec<_> = batch_records(data)?
            .into_iter()
            .map(|r| (r.txid, self.log.append(r.payload.to_vec())))
            .collect();
        Ok(async move {
            let (txids, appends): (Vec<u64>, Vec<_>) = appends.into_iter().unzip();
            let results = futures::future::join_all(appends).await;
            for (expected, result) in txids.into_iter().zip(results) {
                match result {
                    Ok(index) if index == expected => {}
                    Ok(index) => {
                        return Err(invalid(format!(
                            "edit {expected} became record {index} of the replicated log: this NameNode's namespace is not the log's"
                        )))
                    }
                    Err(e) => {
                        return Err(std::io::Error::other(format!(
                            "edit {expected} was not committed by the replicated log: {e}"
                        )))
                    }
                }
            }
            Ok(())
        })
    }
}

impl EditSink for ReplicatedSink {
    /// Waits for the batch's commit on this thread (a shutdown's last flush).
    fn write_durable(&mut self, data: &[u8]) -> std::io::Result<()> {
        let committed = self.append_batch(data)?;
        match tokio::runtime::Handle::try_current() {
            Ok(handle)
                if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread =>
            {
                Err(invalid(
                    "the replicated edit log needs a multi-threaded runtime".into(),
                ))
            }
            Ok(handle) => tokio::task::block_in_place(|| handle.block_on(committed)),
            Err(_) => self.runtime.block_on(committed),
        }
    }

    fn writes_in_background(&self) -> bool {
        true
    }

    /// Appends the batch and returns; a task reports its commit. Batches commit in the
    /// order they were appended, several in flight at once.
    fn begin_write(&mut self, data: &[u8], done: Completion) {
        match self.append_batch(data) {
            Ok(committed) => {
                self.runtime.spawn(async move { done(committed.await) });
            }
            Err(e) => done(Err(e)),
        }
    }
}

/// The edit log's sink on a standby, until the replicated log has started: a standby
/// logs nothing (every change is refused before it is applied), so a write here is a
/// bug, refused rather than written anywhere.
pub struct NotActiveSink;

impl EditSink for NotActiveSink {
    fn write_durable(&mut self, _: &[u8]) -> std::io::Result<()> {
        Err(std::io::Error::other(
            "a standby NameNode's edit log took an edit",
        ))
    }
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// The records of a batch the edit log framed, read as a segment is read back: a batch
/// is whole records only, so anything else after them is refused.
fn batch_records(data: &[u8]) -> std::io::Result<Vec<RawRecord<'_>>> {
    let scanned = scan::scan_segment(data);
    match scanned.end {
        SegmentEnd::Clean if scanned.valid_len == data.len() as u64 => Ok(scanned.records),
        _ => Err(invalid(format!(
            "an edit batch holds {} bytes after its {} whole records",
            data.len() as u64 - scanned.valid_len,
            scanned.records.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit_log::encode_record;
    use prost::Message;
    use tusk_proto::internal::EditRecord;

    #[test]
    fn a_batch_splits_into_its_records() {
        let mut batch = Vec::new();
        for txid in 7..10 {
            encode_record(&EditRecord { txid, op: None }, &mut batch);
        }
        let records = batch_records(&batch).unwrap();
        let txids: Vec<u64> = records
            .iter()
            .map(|r| EditRecord::decode(r.payload).unwrap().txid)
            .collect();
        assert_eq!(txids, vec![7, 8, 9]);
        assert_eq!(records.iter().map(|r| r.txid).collect::<Vec<_>>(), txids);
        assert!(batch_records(&batch[..batch.len() - 1]).is_err());
    }
}
