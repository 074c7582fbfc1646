//! The NameNode's trash emptier, as Hadoop's `TrashPolicyDefault.Emptier`: every
//! `fs.trash.checkpoint.interval` (at most, and by default, `fs.trash.interval`) it
//! visits each `/user/<name>/.Trash`, deletes the checkpoints older than
//! `fs.trash.interval`, and renames `Current` to a checkpoint named by the time
//! (`yyMMddHHmmss`, UTC). Clients move deleted paths into `Current` (`tusk fs -rm`,
//! Hadoop's FsShell); the renames and deletes here are ordinary logged edits.

use std::sync::Arc;
use std::time::Duration;

use tusk_common::calendar;
use tusk_common::Shutdown;

use crate::error::{NameNodeError, Result};
use crate::namespace::Inode;
use crate::namesystem::Namesystem;

/// The directory deleted paths are moved into.
pub const CURRENT: &str = "Current";

/// A checkpoint's name for `millis` (Hadoop's `yyMMddHHmmss`, here in UTC).
pub fn checkpoint_name(millis: u64) -> String {
    let (y, mo, d, h, mi, s) = calendar::civil(millis);
    format!("{:02}{mo:02}{d:02}{h:02}{mi:02}{s:02}", y.rem_euclid(100))
}

/// The time a checkpoint's name gives (a `-N` suffix, added when two checkpoints fall
/// in one second, is ignored, as Hadoop's date parser does); `None` for other names.
pub fn checkpoint_time(name: &str) -> Option<u64> {
    let digits = name.get(..12)?;
    if !digits.bytes().all(|b| b.is_ascii_digit())
        || !(name.len() == 12 || name[12..].starts_with('-'))
    {
        return None;
    }
    let field = |i: usize| digits[i..i + 2].parse::<u32>().ok();
    calendar::to_millis(
        2000 + i64::from(field(0)?),
        field(2)?,
        field(4)?,
        field(6)?,
        field(8)?,
        field(10)?,
    )
}

/// Starts the emptier when `fs.trash.interval` is positive; it stops with `shutdown`.
pub fn spawn_trash_emptier(fsn: Arc<Namesystem>, shutdown: Shutdown) {
    let deletion = fsn.options.trash_interval;
    if deletion.is_zero() {
        return;
    }
    let period = match fsn.options.trash_checkpoint_interval {
        p if p.is_zero() || p > deletion => deletion,
        p => p,
    };
    tokio::spawn(async move {
        loop {
            // Hadoop wakes at multiples of the period.
            let now = tusk_common::now_millis();
            let period_ms = period.as_millis().max(1) as u64;
            let wait = Duration::from_millis(period_ms - now % period_ms);
            tokio::select! {
                _ = shutdown.wait() => return,
                _ = tokio::time::sleep(wait) => {}
            }
            if let Err(e) = fsn.empty_trash(tusk_common::now_millis()).await {
                tracing::warn!(error = %e, "trash emptier pass failed");
            }
        }
    });
}

impl Namesystem {
    /// One emptier pass over every user's trash (skipped in safe mode, where it could
    /// change nothing).
    pub async fn empty_trash(&self, now: u64) -> Result<()> {
        if self.read().safe_mode.is_on() {
            return Ok(());
        }
        let roots: Vec<String> = self
            .child_dirs("/user")?
            .into_iter()
            .map(|home| format!("/user/{home}/.Trash"))
            .filter(|root| self.is_dir(root))
            .collect();
        for root in roots {
            if let Err(e) = self.checkpoint_trash(&root, now).await {
                tracing::warn!(trash = %root, error = %e, "trash caught an error; skipping it");
            }
        }
        Ok(())
    }

    async fn checkpoint_trash(&self, root: &str, now: u64) -> Result<()> {
        let superuser = self.permissions.superuser.clone();
        let deletion = self.options.trash_interval.as_millis() as u64;
        for name in self.child_dirs(root)? {
            let Some(time) = checkpoint_time(&name).filter(|_| name != CURRENT) else {
                continue;
            };
            if now.saturating_sub(deletion) > time {
                let path = format!("{root}/{name}");
                self.durable(self.delete(&superuser, &path, true)?).await?;
                tracing::info!(checkpoint = %path, "Deleted trash checkpoint");
            }
        }
        let current = format!("{root}/{CURRENT}");
        if !self.is_dir(&current) {
            return Ok(());
        }
        let base = format!("{root}/{}", checkpoint_name(now));
        let mut target = base.clone();
        for attempt in 1..=1000 {
            match self.rename2(&superuser, &current, &target, false) {
                Ok(done) => {
                    self.durable(done).await?;
                    tracing::info!(checkpoint = %target, "Created trash checkpoint");
                    return Ok(());
                }
                Err(NameNodeError::AlreadyExists { .. }) => target = format!("{base}-{attempt}"),
                Err(e) => return Err(e),
            }
        }
        Err(NameNodeError::EditLog(format!(
            "Failed to checkpoint trash: {target}"
        )))
    }

    /// Names of the directories directly under `path` (none when it is missing).
    fn child_dirs(&self, path: &str) -> Result<Vec<String>> {
        let st = self.read();
        let Some(id) = st.ns.resolve(path)? else {
            return Ok(vec![]);
        };
        let Some(children) = st.ns.get(id).and_then(Inode::children) else {
            return Ok(vec![]);
        };
        Ok(children
            .after(None)
            .filter(|(_, child)| st.ns.get(*child).is_some_and(|c| c.children().is_some()))
            .map(|(name, _)| name.to_string())
            .collect())
    }

    fn is_dir(&self, path: &str) -> bool {
        let st = self.read();
        matches!(st.ns.resolve(path), Ok(Some(id)) if st.ns.get(id).is_some_and(|n| n.children().is_some()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::NameNodeOptions;

    #[test]
    fn checkpoint_names_are_hadoops_yymmddhhmmss() {
        assert_eq!(checkpoint_name(1_795_507_421_000), "261124080341");
        assert_eq!(checkpoint_time("261124080341"), Some(1_795_507_421_000));
        assert_eq!(checkpoint_time("261124080341-2"), Some(1_795_507_421_000));
        assert_eq!(checkpoint_time("Current"), None);
        assert_eq!(checkpoint_time("2611240803x1"), None);
    }

    #[tokio::test]
    async fn the_emptier_checkpoints_current_and_deletes_old_checkpoints_durably() {
        let dir = tempfile::tempdir().unwrap();
        let options = NameNodeOptions {
            name_dirs: vec![dir.path().to_path_buf()],
            permissions_enabled: false,
            trash_interval: Duration::from_secs(60),
            ..Default::default()
        };
        Namesystem::format(&options).unwrap();
        let fsn = Namesystem::load(options.clone()).unwrap();
        let t0 = 1_795_507_421_000;
        let old = format!("/user/u/.Trash/{}", checkpoint_name(t0 - 120_000));
        for p in ["/user/u/.Trash/Current/a/b", &old] {
            fsn.durable(fsn.mkdirs("u", p, 0o700, true).unwrap())
                .await
                .unwrap();
        }
        fsn.empty_trash(t0).await.unwrap();
        let names = fsn.child_dirs("/user/u/.Trash").unwrap();
        assert_eq!(
            names,
            vec![checkpoint_name(t0)],
            "old one deleted, Current moved"
        );
        assert!(fsn.is_dir(&format!("/user/u/.Trash/{}/a/b", checkpoint_name(t0))));

        // A second Current in the same second gets a suffix; both survive a restart.
        fsn.durable(
            fsn.mkdirs("u", "/user/u/.Trash/Current/c", 0o700, true)
                .unwrap(),
        )
        .await
        .unwrap();
        fsn.empty_trash(t0).await.unwrap();
        fsn.edit_log.close();
        drop(fsn);
        let again = Namesystem::load(options).unwrap();
        let mut names = again.child_dirs("/user/u/.Trash").unwrap();
        names.sort();
        let base = checkpoint_name(t0);
        assert_eq!(names, vec![base.clone(), format!("{base}-1")]);
    }
}
