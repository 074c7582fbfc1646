//! `complete`: closes a file once its blocks have replicas (a retried call of a file
//! already closed succeeds), logged as a [`CloseFileOp`]; applying it commits the last
//! block and releases the lease.

use std::time::Instant;

use tusk_proto::hdfs::ExtendedBlockProto;
use tusk_proto::internal::{edit_record::Op, CloseFileOp};

use crate::error::{NameNodeError, Result};
use crate::namespace::Inode;
use crate::namesystem::{Logged, Namesystem, State};

impl Namesystem {
    /// Closes a file once every block has a replica: true when closed; `None` while the
    /// last block's replicas have not been reported yet.
    pub fn try_complete(
        &self,
        src: &str,
        client: &str,
        last: Option<&ExtendedBlockProto>,
        file_id: Option<u64>,
    ) -> Result<Option<Logged<bool>>> {
        let mut st = self.write();
        let id = match self.open_file_for(&st, src, file_id, client) {
            Ok(id) => id,
            Err(NameNodeError::LeaseExpired { .. }) => {
                // A retried complete of a file already closed by this client.
                let closed = st
                    .ns
                    .resolve(src)?
                    .and_then(|id| st.ns.get(id))
                    .and_then(Inode::file)
                    .is_some_and(|f| f.client_name.is_none());
                if closed {
                    // Its close may still be on its way to disk.
                    return Ok(Some(Logged::new(true, self.edit_log.last_txid())));
                }
                return self
                    .open_file_for(&st, src, file_id, client)
                    .map(|_| Some(Logged::new(false, 0)));
            }
            Err(e) => return Err(e),
        };
        let file = st.open_file_copy(id);
        if let (Some(last), Some(mine)) = (last, file.blocks.last()) {
            if last.block_id != *mine {
                return Err(NameNodeError::InvalidArgument {
                    message: format!("blk_{} is not the last block of {src}", last.block_id),
                });
            }
        }
        let last_bytes = last.and_then(|l| l.num_bytes).unwrap_or_else(|| {
            file.blocks
                .last()
                .and_then(|b| st.blocks.get(*b))
                .map_or(0, |b| b.num_bytes)
        });
        let ready = file.blocks.iter().enumerate().all(|(i, b)| {
            let Some(info) = st.blocks.get(*b) else {
                return true;
            };
            let bytes = if i + 1 == file.blocks.len() {
                last_bytes
            } else {
                info.num_bytes
            };
            bytes == 0 || info.replicas.len() >= self.options.min_replication as usize
        });
        if ready {
            let op = Op::CloseFile(CloseFileOp {
                inode_id: id,
                last_block_bytes: last_bytes,
                mtime: tusk_common::now_millis(),
            });
            let txid = self.apply_and_log(&mut st, op)?;
            Ok(Some(Logged::new(true, txid)))
        } else {
            Ok(None)
        }
    }

    /// [`Namesystem::try_complete`], waiting a little for the last block's replicas so
    /// clients rarely need to retry; false if they do not come in time.
    pub async fn complete(
        &self,
        src: &str,
        client: &str,
        last: Option<&ExtendedBlockProto>,
        file_id: Option<u64>,
    ) -> Result<Logged<bool>> {
        let deadline = Instant::now() + self.options.complete_wait;
        loop {
            let notified = self.block_events.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(done) = self.try_complete(src, client, last, file_id)? {
                return Ok(done);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() || tokio::time::timeout(remaining, notified).await.is_err() {
                return Ok(Logged::new(false, 0));
            }
        }
    }
}

impl State {
    pub(crate) fn apply_close_file(&mut self, op: &CloseFileOp) -> Result<()> {
        let file = self.open_file_mut(op.inode_id)?;
        let client = file.client_name.take();
        let last = file.blocks.last().copied();
        if let Some(last) = last {
            self.commit_block(last, op.last_block_bytes);
        }
        if let Some(node) = self.ns.get_mut(op.inode_id) {
            node.mtime = op.mtime;
        }
        if let Some(client) = client {
            self.leases.remove(&client, op.inode_id);
        }
        Ok(())
    }
}
