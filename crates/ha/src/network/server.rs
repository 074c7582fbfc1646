//! The peer server: accepts connections on an already-bound listener and answers each
//! request by handing it to the local consensus core, one at a time per connection.

use std::sync::Arc;

use openraft::raft::AppendEntriesResponse;
use tokio::io::BufReader;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::frame::{read_frame, write_frame, PeerRequest, PeerResponse};
use crate::log::election::Heard;
use crate::raft_types::Raft;

/// Serves until `shutdown` turns true; connections end with it.
/// Notes in `heard` every append a leader got accepted and every vote granted.
pub(crate) async fn serve(
    listener: TcpListener,
    raft: Raft,
    heard: Arc<Heard>,
    shutdown: watch::Receiver<bool>,
) {
    let mut stop = shutdown.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve_connection(stream, raft.clone(), heard.clone(), shutdown.clone()));
                }
                Err(e) => tracing::warn!(error = %e, "accepting a peer connection failed"),
            },
            _ = stop.wait_for(|stop| *stop) => return,
        }
    }
}

async fn serve_connection(
    stream: TcpStream,
    raft: Raft,
    heard: Arc<Heard>,
    mut shutdown: watch::Receiver<bool>,
) {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let (mut inbuf, mut outbuf) = (Vec::new(), Vec::new());
    loop {
        let request = tokio::select! {
            r = read_frame::<_, PeerRequest>(&mut read, &mut inbuf) => r,
            _ = shutdown.wait_for(|stop| *stop) => return,
        };
        let request = match request {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(e) => {
                tracing::debug!(error = %e, "peer connection ended");
                return;
            }
        };
        let response = answer(&raft, request).await;
        if heard_a_leader(&response) {
            heard.touch();
        }
        if let Err(e) = write_frame(&mut write, &response, &mut outbuf).await {
            tracing::debug!(error = %e, "peer connection ended");
            return;
        }
    }
}

async fn answer(raft: &Raft, request: PeerRequest) -> PeerResponse {
    match request {
        PeerRequest::AppendEntries(r) => PeerResponse::AppendEntries(raft.append_entries(r).await),
        PeerRequest::Vote(r) => PeerResponse::Vote(raft.vote(r).await),
        PeerRequest::InstallSnapshot(r) => {
            PeerResponse::InstallSnapshot(raft.install_snapshot(r).await)
        }
    }
}

/// Whether answering reset this follower's election timer: it accepted a leader's
/// append (its term was not stale) or granted a vote.
fn heard_a_leader(response: &PeerResponse) -> bool {
    match response {
        PeerResponse::AppendEntries(Ok(r)) => !matches!(r, AppendEntriesResponse::HigherVote(_)),
        PeerResponse::Vote(Ok(v)) => v.vote_granted,
        _ => false,
    }
}
