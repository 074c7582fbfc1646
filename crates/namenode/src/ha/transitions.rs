//! Following the replicated log's leadership. The leader of the log serves as the
//! active NameNode once it has applied every committed edit (its namespace is then the
//! log's); a NameNode that stops leading becomes a standby at once, so it logs nothing
//! more, and stops altogether when it may hold edits the log never committed: its
//! namespace could then differ from the log's, and a restart rebuilds it from the log.

use std::sync::Arc;
use std::time::Duration;

use tusk_common::Shutdown;
use tusk_ha::{ReplicatedLog, Role};

use crate::namesystem::Namesystem;

/// Runs until shutdown: activates and deactivates this NameNode as the log's
/// leadership moves.
pub async fn follow_leadership(fsn: Arc<Namesystem>, log: Arc<ReplicatedLog>, shutdown: Shutdown) {
    let mut status = log.status();
    loop {
        let (leads, term) = {
            let s = status.borrow_and_update();
            (s.role == Role::Leader, s.term)
        };
        let active = fsn.ha.is_active();
        if leads && !active {
            activate(&fsn, &log, term).await;
        } else if !leads && active {
            deactivate(&fsn);
        }
        // A leader not yet active tries again soon (catching up can time out).
        let retry = leads && !fsn.ha.is_active();
        tokio::select! {
            _ = shutdown.wait() => return,
            changed = status.changed() => if changed.is_err() { return },
            _ = tokio::time::sleep(Duration::from_millis(100)), if retry => {}
        }
    }
}

/// Catches up with every committed edit, then serves as active in `term`.
async fn activate(fsn: &Namesystem, log: &ReplicatedLog, term: u64) {
    let started = std::time::Instant::now();
    let index = match log.read_index().await {
        Ok(index) => index,
        Err(e) => {
            tracing::info!(term, error = %e, "not activating: leadership not confirmed");
            return;
        }
    };
    let mut st = fsn.write();
    if log.status().borrow().term != term {
        return;
    }
    let last = fsn.edit_log.last_txid();
    if last < index {
        tracing::info!(
            term,
            last,
            index,
            "not activating yet: edits still to apply"
        );
        return;
    }
    st.standby = false;
    st.retry_standby_reports();
    st.take_standby_reports();
    fsn.ha.activate(term);
    drop(st);
    tracing::info!(
        term,
        txid = last,
        took_ms = started.elapsed().as_millis() as u64,
        "transitioned to active"
    );
}

/// Stops serving as active. Edits appended but not yet acknowledged may or may not be
/// in the log: the NameNode then stops (its edit log fails, which stops it).
fn deactivate(fsn: &Namesystem) {
    let mut st = fsn.write();
    fsn.ha.deactivate();
    st.standby = true;
    let last = fsn.edit_log.last_txid();
    let uncertain = !fsn.edit_log.is_durable(last);
    drop(st);
    if uncertain {
        tracing::error!(
            txid = last,
            "lost leadership of the replicated log with edits not known to be committed; stopping"
        );
        fsn.edit_log
            .fail("lost leadership of the replicated log with edits not yet committed");
    } else {
        tracing::warn!(
            txid = last,
            "lost leadership of the replicated log; now standby"
        );
    }
}
