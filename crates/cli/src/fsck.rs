//! `tusk fsck PATH [-files [-blocks [-locations | -racks | -replicaDetails]]] [-openforwrite]
//! [-list-corruptfileblocks] [-includeSnapshots] [-storagepolicies] [-blockId BLK...]
//! [-move | -delete] ...`: Hadoop's `hdfs fsck` report, its HEALTHY / CORRUPT
//! verdict as the last line and its exit code (0 healthy, 1 corrupt). The report is the
//! NameNode's own generator (`tusk_namenode::fsck::report`, which also answers
//! Hadoop's `/fsck` servlet); here it reads the namespace over RPC (getListing,
//! getBlockLocations, getDatanodeReport, listCorruptFileBlocks) as the caller.

use tusk_client::{ClientError, DfsClient, FileStatus};
use tusk_common::Configuration;
use tusk_namenode::fsck::report::{self, Entry, FsckOptions, FsckSource};
use tusk_proto::hdfs::{
    CorruptFileBlocksProto, DatanodeInfoProto, DatanodeReportTypeProto, LocatedBlocksProto,
};

const USAGE: &str = "Usage: tusk fsck <path> [-list-corruptfileblocks | [-move | -delete | -openforwrite] [-files [-blocks [-locations | -racks | -replicaDetails | -upgradedomains]]]] [-includeSnapshots] [-showprogress] [-storagepolicies] [-maintenance] [-blockId <blk_Id>]";

/// Runs one fsck command line; returns the process exit code.
pub fn main(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    if let Err(e) = crate::conf::take_generic_options(&mut conf, &mut args) {
        eprintln!("fsck: {e}");
        return 2;
    }
    let Some(options) = FsckOptions::parse(&args) else {
        eprintln!("{USAGE}");
        return 255;
    };
    let (client, runtime) = match crate::conf::admin_client(&conf) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fsck: {e}");
            return 2;
        }
    };
    let user = client.options().user.clone();
    let default_replication = conf.get_u64("dfs.replication", 3).unwrap_or(3);
    let outcome = runtime.block_on(async {
        let mut out = std::io::stdout().lock();
        report::run(
            &Rpc(&client),
            &user,
            &options,
            default_replication,
            &mut out,
        )
        .await
    });
    match outcome {
        Ok(verdict) => verdict.exit_code(),
        // A closed stdout (`tusk fsck / | head -1`) ends quietly, as `tusk fs` does.
        Err(ClientError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => 141,
        Err(e) => {
            eprintln!("fsck: {e}");
            255
        }
    }
}

/// The namespace over RPC.
struct Rpc<'a>(&'a DfsClient);

fn entry(s: FileStatus) -> Entry {
    Entry {
        name: s.path,
        is_dir: s.is_dir,
        length: s.length,
        replication: s.replication,
        storage_policy: s.storage_policy,
    }
}

impl FsckSource for Rpc<'_> {
    type Error = ClientError;

    async fn file_info(&self, path: &str) -> Result<Option<Entry>, ClientError> {
        Ok(self.0.get_file_info(path).await?.map(entry))
    }

    async fn listing(&self, path: &str) -> Result<Vec<Entry>, ClientError> {
        Ok(self.0.list(path).await?.into_iter().map(entry).collect())
    }

    async fn block_locations(
        &self,
        path: &str,
        length: u64,
    ) -> Result<Option<LocatedBlocksProto>, ClientError> {
        match self.0.block_locations(path, 0, length).await {
            Ok(l) => Ok(Some(l)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn live_datanodes(&self) -> Result<Vec<DatanodeInfoProto>, ClientError> {
        self.0
            .datanode_report(DatanodeReportTypeProto::Live as i32)
            .await
    }

    async fn corrupt_file_blocks(
        &self,
        path: &str,
        cookie: Option<String>,
    ) -> Result<CorruptFileBlocksProto, ClientError> {
        self.0.list_corrupt_file_blocks(path, cookie).await
    }

    async fn snapshottable_dirs(&self) -> Result<Vec<String>, ClientError> {
        Ok(self
            .0
            .snapshottable_dirs()
            .await?
            .iter()
            .map(tusk_namenode::fsck::snapshottable_path)
            .collect())
    }

    /// No RPC finds a block's file: the namespace is searched as the user sees it.
    async fn block_owner(&self, block_id: u64) -> Result<Option<String>, ClientError> {
        let mut dirs = vec!["/".to_string()];
        while let Some(dir) = dirs.pop() {
            for e in self.0.list(&dir).await? {
                let path = format!("{}/{}", dir.trim_end_matches('/'), e.path);
                if e.is_dir {
                    dirs.push(path);
                    continue;
                }
                let Ok(located) = self.0.block_locations(&path, 0, e.length.max(1)).await else {
                    continue;
                };
                if located.blocks.iter().any(|b| b.b.block_id == block_id) {
                    return Ok(Some(path));
                }
            }
        }
        Ok(None)
    }

    async fn delete(&self, path: &str) -> Result<bool, ClientError> {
        self.0.delete(path, false).await
    }

    async fn move_to_lost_found(&self, path: &str) -> Result<(), ClientError> {
        let target = report::lost_found_path(path);
        let parent = target.rsplit_once('/').map_or("/", |(p, _)| p);
        self.0.mkdirs(parent, 0o755, true).await?;
        if self.0.rename(path, &target).await? {
            Ok(())
        } else {
            Err(std::io::Error::other(report::move_failed(path)).into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::{run, Verdict};
    use tusk_cluster::testing::{exists, only_replica_cluster};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_whose_only_replica_is_gone_makes_the_path_corrupt() {
        let mut cluster = only_replica_cluster().await;
        let client = cluster.client();
        let options = FsckOptions {
            path: "/".into(),
            files: true,
            blocks: true,
            locations: true,
            ..Default::default()
        };
        let mut out = Vec::new();
        let verdict = run(&Rpc(&client), "u", &options, 1, &mut out)
            .await
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(verdict, Verdict::Healthy, "{text}");
        assert!(
            text.contains("/d/a 5 bytes, replicated: replication=1, 1 block(s):  OK\n0. BP-"),
            "{text}"
        );
        assert!(text.contains(" Live_repl=1 [DatanodeInfoWithStorage[127.0.0.1:"));
        assert!(text.ends_with("The filesystem under path '/' is HEALTHY\n"));

        cluster.stop_datanode(0).await;
        tusk_cluster::wait_for(
            "the node declared dead",
            std::time::Duration::from_secs(20),
            || async { matches!(client.datanode_report(2).await, Ok(live) if live.is_empty()) },
        )
        .await
        .unwrap();
        let mut out = Vec::new();
        let verdict = run(&Rpc(&client), "u", &options, 1, &mut out)
            .await
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(verdict, Verdict::Corrupt, "{text}");
        assert_eq!(verdict.exit_code(), 1);
        assert!(
            text.contains(" MISSING 1 blocks of total size 5 B\n"),
            "{text}"
        );
        assert!(text.contains(" len=5 MISSING!"), "{text}");
        assert!(
            text.contains("\n  CORRUPT FILES:\t1\n  MISSING BLOCKS:\t1"),
            "{text}"
        );
        assert!(text.ends_with("The filesystem under path '/' is CORRUPT\n"));

        let listing = FsckOptions {
            path: "/".into(),
            list_corrupt_file_blocks: true,
            ..Default::default()
        };
        let mut out = Vec::new();
        run(&Rpc(&client), "u", &listing, 1, &mut out)
            .await
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("The list of corrupt blocks under path '/' are:\nblk_"),
            "{text}"
        );
        assert!(text.contains("\t/d/a\n"), "{text}");
        assert!(text.contains("has 1 CORRUPT blocks\n"), "{text}");

        // -move puts the corrupt file under /lost+found; -delete removes it there.
        let repair = |path: &str, move_corrupt, delete_corrupt| FsckOptions {
            path: path.into(),
            move_corrupt,
            delete_corrupt,
            ..Default::default()
        };
        let mut out = Vec::new();
        let verdict = run(&Rpc(&client), "u", &repair("/d", true, false), 1, &mut out)
            .await
            .unwrap();
        assert_eq!(verdict, Verdict::Corrupt);
        assert!(!exists(&client, "/d/a").await);
        assert!(exists(&client, "/lost+found/d/a").await);
        let mut out = Vec::new();
        run(
            &Rpc(&client),
            "u",
            &repair("/lost+found", false, true),
            1,
            &mut out,
        )
        .await
        .unwrap();
        assert!(client
            .get_file_info("/lost+found/d/a")
            .await
            .unwrap()
            .is_none());
        let mut out = Vec::new();
        let verdict = run(&Rpc(&client), "u", &options, 1, &mut out)
            .await
            .unwrap();
        assert_eq!(verdict, Verdict::Healthy, "nothing corrupt is left");
    }
}
