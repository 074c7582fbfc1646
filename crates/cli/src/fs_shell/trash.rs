//! Trash in `tusk fs`, as Hadoop's `TrashPolicyDefault` on the client: `-rm` moves a
//! path to `/user/<user>/.Trash/Current/<path>` when trash is on (the NameNode's
//! `fs.trash.interval` from its server defaults, else this client's), unless
//! `-skipTrash`; `-expunge` deletes old checkpoints and checkpoints `Current` (with
//! `-immediate`, deletes them all). The NameNode's emptier does the same on a timer.

use tusk_client::ClientError;
use tusk_namenode::namesystem::monitors::trash::{checkpoint_name, checkpoint_time, CURRENT};

use super::Shell;

impl Shell {
    /// This user's trash root.
    fn trash_root(&self) -> String {
        format!("/user/{}/.Trash", self.user)
    }

    /// How long checkpoints are kept, in milliseconds; 0 when trash is off.
    async fn trash_interval_ms(&self) -> Result<u64, ClientError> {
        let server = self
            .client
            .server_defaults()
            .await?
            .trash_interval
            .unwrap_or(0);
        if server > 0 {
            return Ok(server * 60_000);
        }
        let minutes: f64 = self
            .conf
            .get("fs.trash.interval")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        Ok((minutes * 60_000.0).max(0.0) as u64)
    }

    /// `hdfs://host:port/path` for messages.
    pub(super) fn qualified(&self, path: &str) -> String {
        format!("{}{path}", self.default_fs.trim_end_matches('/'))
    }

    /// Moves `path` into the trash; false when trash is off or the path is already in
    /// the trash (it is then deleted for good, as Hadoop does).
    pub(super) async fn move_to_trash(&mut self, path: &str) -> Result<bool, String> {
        let interval = self.trash_interval_ms().await.map_err(|e| e.to_string())?;
        let root = self.trash_root();
        if interval == 0 || path == root || path.starts_with(&format!("{root}/")) {
            return Ok(false);
        }
        if root.starts_with(&format!("{}/", path.trim_end_matches('/'))) {
            return Err(format!(
                "Cannot move \"{}\" to the trash, as it contains the trash. Consider using -skipTrash option",
                self.qualified(path)
            ));
        }
        let target = format!("{root}/{CURRENT}{path}");
        let parent = &target[..target.rfind('/').unwrap_or(0)];
        let failed = |e: ClientError| {
            format!(
                "Failed to move to trash: {}: {}. Consider using -skipTrash option",
                self.qualified(path),
                super::describe(path, &e)
            )
        };
        self.client
            .mkdirs(parent, 0o700, true)
            .await
            .map_err(failed)?;
        let mut at = target.clone();
        while self
            .client
            .get_file_info(&at)
            .await
            .map_err(failed)?
            .is_some()
        {
            at = format!("{target}{}", tusk_common::now_millis());
        }
        if !self.client.rename(path, &at).await.map_err(failed)? {
            return Err(format!(
                "Failed to move to trash: {}. Consider using -skipTrash option",
                self.qualified(path)
            ));
        }
        println!(
            "Moved: '{}' to trash at: {}",
            self.qualified(path),
            self.qualified(&at)
        );
        Ok(true)
    }

    /// `-expunge [-immediate]`: this user's trash only.
    pub(super) async fn expunge(&mut self, args: &[String]) -> Result<(), String> {
        let immediate = args.iter().any(|a| a == "-immediate");
        let root = self.trash_root();
        let interval = self.trash_interval_ms().await.map_err(|e| e.to_string())?;
        if interval == 0 && !immediate {
            return Ok(());
        }
        let entries = match self.client.list(&root).await {
            Ok(entries) => entries,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e.to_string()),
        };
        let now = tusk_common::now_millis();
        for entry in entries.iter().filter(|e| e.is_dir) {
            let name = entry.path.rsplit('/').next().unwrap_or_default();
            let expired = match checkpoint_time(name) {
                _ if name == CURRENT => immediate,
                Some(time) => immediate || now.saturating_sub(interval) > time,
                None => false,
            };
            let path = format!("{root}/{name}");
            if expired
                && self
                    .client
                    .delete(&path, true)
                    .await
                    .map_err(|e| e.to_string())?
            {
                println!("Deleted trash checkpoint: {path}");
            }
        }
        if immediate {
            return Ok(());
        }
        let current = format!("{root}/{CURRENT}");
        if self
            .client
            .get_file_info(&current)
            .await
            .map_err(|e| e.to_string())?
            .is_none()
        {
            return Ok(());
        }
        let base = format!("{root}/{}", checkpoint_name(now));
        let mut checkpoint = base.clone();
        for attempt in 1..=1000 {
            match self.client.rename2(&current, &checkpoint, false).await {
                Ok(()) => {
                    println!("Created trash checkpoint: {checkpoint}");
                    return Ok(());
                }
                Err(e) if e.is_already_exists() => checkpoint = format!("{base}-{attempt}"),
                Err(e) => return Err(e.to_string()),
            }
        }
        Err(format!("Failed to checkpoint trash: {checkpoint}"))
    }
}
