//! A service's answer to one call, settled within the fuzz iteration that made it.

use bytes::Bytes;
use futures::FutureExt;
use tusk_rpc::CallOutcome;

/// The reply of a call that needs no more than one poll.
pub(crate) fn settle(outcome: CallOutcome) -> Result<Bytes, String> {
    match outcome {
        CallOutcome::Now(reply) => reply.map_err(|e| e.to_string()),
        CallOutcome::AfterMark { reply, .. } => Ok(reply),
        CallOutcome::Later(call) => match call.now_or_never() {
            Some(outcome) => settle(outcome),
            None => Err("still waiting".into()),
        },
    }
}
