//! `getBatchedListing`: the listings of many paths in one call.

use prost::Message;
use tusk_proto::hdfs::{
    BatchedDirectoryListingProto, BatchedListingKeyProto, GetBatchedListingResponseProto,
    RemoteExceptionProto,
};

use crate::error::{NameNodeError, Result};
use crate::namesystem::Namesystem;

impl Namesystem {
    /// getBatchedListing: the listings of several paths in one reply, up to
    /// `dfs.batched.ls.limit` entries (a directory is never cut below one `getListing`
    /// page); a path that fails carries its exception instead. The `startAfter` key
    /// names where the next call resumes and the paths it belongs to.
    pub fn batched_listing(
        &self,
        user: &str,
        paths: &[String],
        start_after: &[u8],
        need_location: bool,
    ) -> Result<GetBatchedListingResponseProto> {
        let checksum = paths_checksum(paths);
        let (mut index, mut after) = if start_after.is_empty() {
            (0usize, Vec::new())
        } else {
            let key = BatchedListingKeyProto::decode(start_after).map_err(|e| {
                NameNodeError::InvalidArgument {
                    message: format!("invalid batched listing key: {e}"),
                }
            })?;
            if key.checksum.as_ref() != checksum.as_slice() {
                return Err(NameNodeError::InvalidArgument {
                    message: "The paths do not match the batched listing key".into(),
                });
            }
            (key.path_index as usize, key.start_after.to_vec())
        };
        let limit = self.options.meta.batched_listing_limit;
        let mut listings = Vec::new();
        let mut entries = 0;
        while index < paths.len() && entries < limit {
            let src = &paths[index];
            let listing = match self.get_listing(user, src, &after, need_location) {
                Ok(Some(l)) => l,
                Ok(None) => {
                    listings.push(failed(
                        index,
                        &NameNodeError::FileNotFound { path: src.clone() },
                    ));
                    (index, after) = (index + 1, Vec::new());
                    continue;
                }
                Err(e) => {
                    listings.push(failed(index, &e));
                    (index, after) = (index + 1, Vec::new());
                    continue;
                }
            };
            entries += listing.partial_listing.len();
            let more = listing.remaining_entries > 0;
            let last = listing.partial_listing.last().map(|s| s.path.to_vec());
            listings.push(BatchedDirectoryListingProto {
                partial_listing: listing.partial_listing,
                parent_idx: index as u32,
                exception: None,
            });
            match (more, last) {
                (true, Some(last)) => after = last,
                _ => (index, after) = (index + 1, Vec::new()),
            }
        }
        let has_more = index < paths.len();
        let start_after = if has_more {
            BatchedListingKeyProto {
                checksum: checksum.into(),
                path_index: index as u32,
                start_after: after.into(),
            }
            .encode_to_vec()
        } else {
            Vec::new()
        };
        Ok(GetBatchedListingResponseProto {
            listings,
            has_more,
            start_after: start_after.into(),
        })
    }
}

fn failed(index: usize, e: &NameNodeError) -> BatchedDirectoryListingProto {
    BatchedDirectoryListingProto {
        partial_listing: vec![],
        parent_idx: index as u32,
        exception: Some(RemoteExceptionProto {
            class_name: e.java_class().to_string(),
            message: Some(e.to_string()),
        }),
    }
}

/// FNV-1a over the paths, so a resumed listing is known to be of the same paths.
fn paths_checksum(paths: &[String]) -> Vec<u8> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in paths {
        for b in p.bytes().chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h.to_be_bytes().to_vec()
}
