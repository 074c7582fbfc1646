//! The namespace as the replicated log's state machine. A record is one encoded
//! `EditRecord` and its index in the log is its txid. A standby applies each committed
//! record as a restart's replay does; the active skips the records it made itself (it
//! applied them before appending). A snapshot is the namespace's image.

use std::sync::Weak;

use prost::Message;
use tusk_ha::{StateMachine, StateMachineError};
use tusk_proto::internal::{EditRecord, FsImage};

use crate::namesystem::{Namesystem, State};

pub struct NamespaceMachine {
    fsn: Weak<Namesystem>,
}

impl NamespaceMachine {
    pub fn new(fsn: Weak<Namesystem>) -> Self {
        NamespaceMachine { fsn }
    }

    fn namesystem(&self) -> Result<std::sync::Arc<Namesystem>, StateMachineError> {
        self.fsn
            .upgrade()
            .ok_or_else(|| "the NameNode has stopped".into())
    }
}

impl StateMachine for NamespaceMachine {
    fn apply(&mut self, index: u64, record: &[u8]) -> Result<(), StateMachineError> {
        let fsn = self.namesystem()?;
        // The active's own edits: applied when they were made.
        if index <= fsn.edit_log.last_txid() {
            return Ok(());
        }
        let edit =
            EditRecord::decode(record).map_err(|e| format!("record {index} is no edit: {e}"))?;
        let mut st = fsn.write();
        let last = fsn.edit_log.last_txid();
        if index <= last {
            return Ok(());
        }
        if index != last + 1 || edit.txid != index {
            return Err(format!(
                "record {index} (edit {}) does not follow edit {last}: this NameNode's namespace is not the log's",
                edit.txid
            )
            .into());
        }
        if let Some(op) = &edit.op {
            let removed = st
                .apply(op)
                .map_err(|e| format!("edit {index} does not apply: {e}"))?;
            st.invalidate_removed(&removed);
        }
        fsn.edit_log.advance_to(index);
        st.retry_standby_reports();
        drop(st);
        fsn.block_events.notify_waiters();
        Ok(())
    }

    /// The image as of the last edit, refused while the namespace holds edits not known
    /// to be committed (an active's): the image must hold exactly the log's prefix.
    fn snapshot(&self) -> Result<Vec<u8>, StateMachineError> {
        let fsn = self.namesystem()?;
        let st = fsn.read();
        let last = fsn.edit_log.last_txid();
        if !fsn.edit_log.is_durable(last) {
            return Err(format!("edits up to {last} are not all committed yet").into());
        }
        Ok(st.to_image(last, &fsn.storage).encode_to_vec())
    }

    /// Replaces the namespace with an image from the leader. The DataNodes' standing is
    /// kept, but what they hold is asked again: each is told to register anew, which
    /// brings a full block report.
    fn install(&mut self, last_index: u64, snapshot: &[u8]) -> Result<(), StateMachineError> {
        let fsn = self.namesystem()?;
        let image =
            FsImage::decode(snapshot).map_err(|e| format!("the snapshot is no image: {e}"))?;
        let mut st = fsn.write();
        let mut fresh = State::from_image(&image, &fsn.options);
        fresh.datanodes = std::mem::take(&mut st.datanodes);
        for node in &mut fresh.datanodes.nodes {
            node.blocks.clear();
            node.alive = false;
        }
        fresh.hosts = std::mem::take(&mut st.hosts);
        fresh.standby = st.standby;
        fresh.enter_startup_safe_mode();
        *st = fresh;
        fsn.edit_log.advance_to(last_index);
        tracing::info!(
            txid = last_index,
            "namespace replaced by the replicated log's snapshot"
        );
        Ok(())
    }
}
