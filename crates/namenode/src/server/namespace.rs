//! ClientNamenodeProtocol calls on the namespace: file info and listings, mkdirs, create,
//! rename, delete, the set-attribute calls, content summaries, and the calls that only
//! touch the edit log (saveNamespace, rollEdits).

use tusk_proto::hdfs as h;

use super::{logged, now, Call, Method};

pub(super) const METHODS: &[Method] = &[
    ("getServerDefaults", |Call { fsn, .. }, body| {
        now(body, |_: h::GetServerDefaultsRequestProto| {
            Ok(h::GetServerDefaultsResponseProto {
                server_defaults: fsn.server_defaults(),
            })
        })
    }),
    ("getDataEncryptionKey", |Call { fsn, .. }, body| {
        now(body, |_: h::GetDataEncryptionKeyRequestProto| {
            Ok(h::GetDataEncryptionKeyResponseProto {
                data_encryption_key: fsn.data_encryption_key(),
            })
        })
    }),
    ("getFileInfo", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetFileInfoRequestProto| {
            Ok(h::GetFileInfoResponseProto {
                fs: fsn.get_file_info(user, &r.src)?,
            })
        })
    }),
    ("getFileLinkInfo", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetFileLinkInfoRequestProto| {
            Ok(h::GetFileLinkInfoResponseProto {
                fs: fsn.get_file_info(user, &r.src)?,
            })
        })
    }),
    ("getListing", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetListingRequestProto| {
            Ok(h::GetListingResponseProto {
                dir_list: fsn.get_listing(user, &r.src, &r.start_after, r.need_location)?,
            })
        })
    }),
    ("mkdirs", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::MkdirsRequestProto| {
            let unmasked = r.unmasked.map(|u| u.perm);
            Ok(fsn
                .mkdirs_modes(user, &r.src, r.masked.perm, unmasked, r.create_parent)?
                .map(|result| h::MkdirsResponseProto { result }))
        })
    }),
    ("create", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::CreateRequestProto| {
            Ok(fsn
                .create(user, &r)?
                .map(|fs| h::CreateResponseProto { fs: Some(fs) }))
        })
    }),
    ("rename", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::RenameRequestProto| {
            Ok(fsn
                .rename(user, &r.src, &r.dst)?
                .map(|result| h::RenameResponseProto { result }))
        })
    }),
    ("rename2", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::Rename2RequestProto| {
            Ok(fsn
                .rename2(user, &r.src, &r.dst, r.overwrite_dest)?
                .map(|()| h::Rename2ResponseProto {}))
        })
    }),
    ("delete", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::DeleteRequestProto| {
            Ok(fsn
                .delete(user, &r.src, r.recursive)?
                .map(|result| h::DeleteResponseProto { result }))
        })
    }),
    ("setReplication", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetReplicationRequestProto| {
            Ok(fsn
                .set_replication(user, &r.src, r.replication)?
                .map(|result| h::SetReplicationResponseProto { result }))
        })
    }),
    ("setPermission", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetPermissionRequestProto| {
            Ok(fsn
                .set_permission(user, &r.src, r.permission.perm)?
                .map(|()| h::SetPermissionResponseProto {}))
        })
    }),
    ("setOwner", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetOwnerRequestProto| {
            Ok(fsn
                .set_owner(user, &r.src, r.username, r.groupname)?
                .map(|()| h::SetOwnerResponseProto {}))
        })
    }),
    ("setTimes", |Call { fsn, user, .. }, body| {
        logged(body, |r: h::SetTimesRequestProto| {
            Ok(fsn
                .set_times(user, &r.src, r.mtime as i64, r.atime as i64)?
                .map(|()| h::SetTimesResponseProto {}))
        })
    }),
    ("getContentSummary", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetContentSummaryRequestProto| {
            Ok(h::GetContentSummaryResponseProto {
                summary: fsn.content_summary(user, &r.path)?,
            })
        })
    }),
    ("getFsStats", |Call { fsn, .. }, body| {
        now(body, |_: h::GetFsStatusRequestProto| Ok(fsn.fs_stats()))
    }),
    ("getPreferredBlockSize", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetPreferredBlockSizeRequestProto| {
            Ok(h::GetPreferredBlockSizeResponseProto {
                bsize: fsn.preferred_block_size(user, &r.filename)?,
            })
        })
    }),
    ("msync", |_, body| {
        now(body, |_: h::MsyncRequestProto| Ok(h::MsyncResponseProto {}))
    }),
    ("getHAServiceState", |Call { fsn, .. }, body| {
        now(body, |_: h::HaServiceStateRequestProto| {
            Ok(h::HaServiceStateResponseProto {
                state: fsn.ha.service_state() as i32,
            })
        })
    }),
    ("saveNamespace", |Call { fsn, user, .. }, body| {
        now(body, |_: h::SaveNamespaceRequestProto| {
            fsn.save_namespace(user)?;
            Ok(h::SaveNamespaceResponseProto { saved: Some(true) })
        })
    }),
    ("rollEdits", |Call { fsn, user, .. }, body| {
        now(body, |_: h::RollEditsRequestProto| {
            Ok(h::RollEditsResponseProto {
                new_segment_tx_id: fsn.roll_edits(user)?,
            })
        })
    }),
    ("checkAccess", |Call { fsn, user, .. }, body| {
        now(body, |r: h::CheckAccessRequestProto| {
            fsn.check_access(user, &r.path, r.mode as u16)?;
            Ok(h::CheckAccessResponseProto {})
        })
    }),
    ("getLocatedFileInfo", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetLocatedFileInfoRequestProto| {
            let src = r.src.unwrap_or_default();
            let token = r.need_block_token.unwrap_or(false);
            Ok(h::GetLocatedFileInfoResponseProto {
                fs: fsn.located_file_info(user, &src, token)?,
            })
        })
    }),
    ("getBatchedListing", |Call { fsn, user, .. }, body| {
        now(body, |r: h::GetBatchedListingRequestProto| {
            Ok(fsn.batched_listing(user, &r.paths, &r.start_after, r.need_location)?)
        })
    }),
];
