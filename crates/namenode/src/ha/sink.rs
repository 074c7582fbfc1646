//! The active's edit-log sink: each edit of a batch becomes one record of the
//! replicated log, and the batch is durable once all of them are committed on a
//! majority of NameNodes (each copy fsync'ed there). The edit log's group commit works
//! as with a local file: edits made while one batch commits ride the next.

use std::sync::Arc;

use prost::Message;
use tusk_ha::ReplicatedLog;
use tusk_proto::internal::EditRecord;

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
}

impl ReplicatedSink {
    /// Appends every record of `data` (their order fixed now, under the edit log's sink
    /// lock) and returns what waits for their commits and checks their indexes.
    fn append_batch(
        &self,
        data: &[u8],
    ) -> std::io::Result<impl std::future::Future<Output = std::io::Result<()>> + Send + 'static>
    {
        let records = split_frames(data)?;
        let first_txid = match records.first() {
            Some(first) => {
                EditRecord::decode(*first)
                    .map_err(|e| invalid(format!("an edit in the batch does not decode: {e}")))?
                    .txid
            }
            None => 0,
        };
        let appends: Vec<_> = records
            .iter()
            .map(|r| self.log.append(r.to_vec()))
            .collect();
        Ok(async move {
            let results = futures::future::join_all(appends).await;
            for (i, result) in results.into_iter().enumerate() {
                let expected = first_txid + i as u64;
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

/// The records' payloads in a batch the edit log framed.
fn split_frames(mut data: &[u8]) -> std::io::Result<Vec<&[u8]>> {
    let mut records = Vec::new();
    while !data.is_empty() {
        if data.len() < 8 {
            return Err(invalid("a torn frame header in an edit batch".into()));
        }
        let len = u32::from_be_bytes(data[..4].try_into().expect("4 bytes")) as usize;
        let body = data
            .get(8..8 + len)
            .ok_or_else(|| invalid("a torn record in an edit batch".into()))?;
        records.push(body);
        data = &data[8 + len..];
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit_log::encode_record;

    #[test]
    fn a_batch_splits_into_its_records() {
        let mut batch = Vec::new();
        for txid in 7..10 {
            encode_record(&EditRecord { txid, op: None }, &mut batch);
        }
        let records = split_frames(&batch).unwrap();
        let txids: Vec<u64> = records
            .iter()
            .map(|r| EditRecord::decode(*r).unwrap().txid)
            .collect();
        assert_eq!(txids, vec![7, 8, 9]);
        assert!(split_frames(&batch[..batch.len() - 1]).is_err());
    }
}
