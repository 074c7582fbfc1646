//! ClientNamenodeProtocol calls on a file's blocks and lease: addBlock, complete, block
//! locations, append, fsync, concat, truncate, pipeline updates, lease renewal and recovery.

use tusk_proto::hdfs as h;
use tusk_rpc::service::decode;
use tusk_rpc::{handle, CallOutcome};

use super::{held, logged, now, Call, Method};
use crate::namesystem::Logged;

pub(super) const METHODS: &[Method] = &[
    ("addBlock", |Call { fsn, ctx, user }, body| {
        logged(body, |r: h::AddBlockRequestProto| {
            let ip = ctx.peer.ip().to_string();
            Ok(fsn
                .add_block(user, &r, &ip)?
                .map(|block| h::AddBlockResponseProto { block }))
        })
    }),
    ("abandonBlock", |Call { fsn, .. }, body| {
        logged(body, |r: h::AbandonBlockRequestProto| {
            Ok(fsn
                .abandon_block(&r.src, &r.holder, &r.b, r.file_id)?
                .map(|()| h::AbandonBlockResponseProto {}))
        })
    }),
    ("complete", |Call { fsn, .. }, body| {
        let r: h::CompleteRequestProto = match decode(body) {
            Ok(r) => r,
            Err(e) => return CallOutcome::Now(Err(e)),
        };
        let reply = |l: Logged<bool>| l.map(|result| h::CompleteResponseProto { result });
        match fsn.try_complete(&r.src, &r.client_name, r.last.as_ref(), r.file_id) {
            Ok(Some(done)) => held(Ok(reply(done))),
            Ok(None) => {
                // Wait a little for the last block's replicas to be reported.
                let fsn = fsn.clone();
                CallOutcome::Later(Box::pin(async move {
                    let done = fsn
                        .complete(&r.src, &r.client_name, r.last.as_ref(), r.file_id)
                        .await;
                    held(done.map(reply))
                }))
            }
            Err(e) => CallOutcome::Now(Err(e.into())),
        }
    }),
    ("getBlockLocations", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetBlockLocationsRequestProto| {
            let locations = fsn.get_block_locations(user, &r.src, r.offset, r.length)?;
            if locations.is_none() {
                return Err(crate::error::NameNodeError::FileNotFound { path: r.src }.into());
            }
            Ok(h::GetBlockLocationsResponseProto { locations })
        })
    }),
    ("renewLease", |Call { fsn, .. }, body| {
        now(body, |r: h::RenewLeaseRequestProto| {
            fsn.renew_lease(&r.client_name);
            Ok(h::RenewLeaseResponseProto {})
        })
    }),
    ("recoverLease", |Call { fsn, ctx, .. }, body| {
        let fsn = fsn.clone();
        let user = ctx.user.clone();
        CallOutcome::later(handle(body, |r: h::RecoverLeaseRequestProto| async move {
            Ok(h::RecoverLeaseResponseProto {
                result: fsn.recover_lease(&user, &r.src).await?,
            })
        }))
    }),
    // append: append, fsync (hflush), isFileClosed, concat, truncate
    ("append", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::AppendRequestProto| {
            fsn.append(user, &r.src, &r.client_name, r.flag.unwrap_or(0))
        })
    }),
    ("fsync", |Call { fsn, .. }, body| {
        logged(body, |r: h::FsyncRequestProto| {
            Ok(fsn
                .fsync(
                    &r.src,
                    &r.client,
                    r.last_block_length.unwrap_or(-1),
                    r.file_id,
                )?
                .map(|()| h::FsyncResponseProto {}))
        })
    }),
    ("isFileClosed", |Call { fsn, user, .. }, body| {
        now(body, |r: h::IsFileClosedRequestProto| {
            Ok(h::IsFileClosedResponseProto {
                result: fsn.is_file_closed(user, &r.src)?,
            })
        })
    }),
    ("concat", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::ConcatRequestProto| {
            Ok(fsn
                .concat(user, &r.trg, &r.srcs)?
                .map(|()| h::ConcatResponseProto {}))
        })
    }),
    ("truncate", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::TruncateRequestProto| {
            Ok(fsn
                .truncate(user, &r.src, r.new_length, &r.client_name)?
                .map(|result| h::TruncateResponseProto { result }))
        })
    }),
    ("updateBlockForPipeline", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::UpdateBlockForPipelineRequestProto| {
            Ok(fsn
                .update_block_for_pipeline(user, &r.block, &r.client_name)?
                .map(|block| h::UpdateBlockForPipelineResponseProto { block }))
        })
    }),
    ("updatePipeline", |Call { fsn, .. }, body| {
        logged(body, |r: h::UpdatePipelineRequestProto| {
            let nodes: Vec<String> = r
                .new_nodes
                .iter()
                .map(|n| n.datanode_uuid.clone())
                .collect();
            Ok(fsn
                .update_pipeline(&r.client_name, &r.old_block, &r.new_block, &nodes)?
                .map(|()| h::UpdatePipelineResponseProto {}))
        })
    }),
    ("getAdditionalDatanode", |Call { fsn, ctx, user }, body| {
        now(body, |r: h::GetAdditionalDatanodeRequestProto| {
            Ok(h::GetAdditionalDatanodeResponseProto {
                block: fsn.additional_datanodes(user, &r, &ctx.peer.ip().to_string())?,
            })
        })
    }),
    ("reportBadBlocks", |Call { fsn, .. }, body| {
        now(body, |r: h::ReportBadBlocksRequestProto| {
            fsn.report_bad_blocks(&r.blocks);
            Ok(h::ReportBadBlocksResponseProto {})
        })
    }),
];
