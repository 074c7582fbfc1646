//! `tusk fs -createSnapshot`, `-deleteSnapshot`, `-renameSnapshot`: Hadoop's
//! `SnapshotCommands`, with its argument checks and output.

use super::{describe, Shell};

impl Shell {
    /// The snapshot directory operand, which must be a directory.
    async fn snapshot_dir(&self, operand: &str) -> Result<String, String> {
        let path = self.resolve(operand);
        match self.client.stat(&path).await {
            Ok(s) if s.is_dir => Ok(path),
            Ok(_) => Err(format!("`{operand}': Is not a directory")),
            Err(e) => Err(describe(operand, &e)),
        }
    }

    pub(super) async fn create_snapshot(&mut self, args: &[String]) -> Result<(), String> {
        let (dir, name) = match args {
            [] => return Err("<snapshotDir> is missing.".into()),
            [dir] => (dir, None),
            [dir, name] => (dir, Some(name.as_str())),
            _ => return Err("Too many arguments.".into()),
        };
        let path = self.snapshot_dir(dir).await?;
        let created = self
            .client
            .create_snapshot(&path, name)
            .await
            .map_err(|e| describe(dir, &e))?;
        println!("Created snapshot {created}");
        Ok(())
    }

    pub(super) async fn delete_snapshot(&mut self, args: &[String]) -> Result<(), String> {
        let [dir, name] = args else {
            return Err("Incorrect number of arguments.".into());
        };
        let path = self.snapshot_dir(dir).await?;
        self.client
            .delete_snapshot(&path, name)
            .await
            .map_err(|e| describe(dir, &e))?;
        println!("Deleted snapshot {name} under {}", self.qualified(&path));
        Ok(())
    }

    pub(super) async fn rename_snapshot(&mut self, args: &[String]) -> Result<(), String> {
        let [dir, old, new] = args else {
            return Err("Incorrect number of arguments.".into());
        };
        let path = self.snapshot_dir(dir).await?;
        self.client
            .rename_snapshot(&path, old, new)
            .await
            .map_err(|e| describe(dir, &e))?;
        println!(
            "Renamed snapshot {old} to {new} under {}",
            self.qualified(&path)
        );
        Ok(())
    }
}
