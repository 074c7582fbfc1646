//! Copies between the local file system and the cluster, as Hadoop's `CopyCommands`
//! and `MoveCommands`: `-put`/`-copyFromLocal`/`-moveFromLocal` and
//! `-get`/`-copyToLocal`/`-moveToLocal`.
//!
//! A copy is written to `<dst>._COPYING_` and renamed into place; a copy that fails
//! deletes that temporary file (which also ends its lease), so a later copy to the same
//! name is not refused as "already being created". `-p` keeps the source's times,
//! owner, group and mode.

use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use tusk_client::{CreateOptions, FileStatus};
use tusk_common::progress::Progress;

use super::{describe, io_message, sources_and_destination, Shell};

/// The flags `-put` and `-get` share.
#[derive(Debug, Default)]
struct CopyFlags {
    overwrite: bool,
    preserve: bool,
    /// `-d`: write the destination itself, no `._COPYING_`.
    direct: bool,
}

/// Splits `-put`/`-get` flags from the operands; an unknown flag is Hadoop's
/// "Illegal option". `-t N` and `-q N` (threads, queue) are accepted; copies run one at
/// a time.
fn copy_flags(args: &[String]) -> Result<(CopyFlags, Vec<String>), String> {
    let mut flags = CopyFlags::default();
    let mut i = 0;
    while i < args.len() && args[i].len() > 1 && args[i].starts_with('-') {
        match args[i].as_str() {
            "-f" => flags.overwrite = true,
            "-p" => flags.preserve = true,
            "-d" => flags.direct = true,
            "-crc" | "-ignoreCrc" | "-l" => {}
            "-t" | "-q" if i + 1 < args.len() => i += 1,
            other => return Err(format!("Illegal option {other}")),
        }
        i += 1;
    }
    Ok((flags, args[i..].to_vec()))
}

/// A local file's status as Hadoop's `RawLocalFileSystem` gives it to `-put -p`.
struct LocalStatus {
    size: u64,
    mtime: u64,
    atime: u64,
    mode: u16,
    owner: String,
    group: String,
}

impl LocalStatus {
    fn of(meta: &std::fs::Metadata) -> LocalStatus {
        let millis = |secs: i64, nanos: i64| (secs * 1000 + nanos / 1_000_000).max(0) as u64;
        LocalStatus {
            size: meta.len(),
            mtime: millis(meta.mtime(), meta.mtime_nsec()),
            atime: millis(meta.atime(), meta.atime_nsec()),
            mode: (meta.mode() & 0o1777) as u16,
            owner: id_name("/etc/passwd", meta.uid()).unwrap_or_else(|| meta.uid().to_string()),
            group: id_name("/etc/group", meta.gid()).unwrap_or_else(|| meta.gid().to_string()),
        }
    }
}

/// The name of user or group `id` in a `name:x:id:...` database (`/etc/passwd`,
/// `/etc/group`).
fn id_name(database: &str, id: u32) -> Option<String> {
    let text = std::fs::read_to_string(database).ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)?.parse::<u32>().ok()? == id).then(|| name.to_string())
    })
}

/// The id of user or group `name` (a number is taken as the id itself).
fn name_id(database: &str, name: &str) -> Option<u32> {
    if let Ok(id) = name.parse() {
        return Some(id);
    }
    let text = std::fs::read_to_string(database).ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next()? == name).then_some(())?;
        fields.nth(1)?.parse().ok()
    })
}

/// Gives a local file the cluster file's times, owner, group and mode (`-get -p`).
fn preserve_local(target: &Path, src: &FileStatus) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("`{}': {}", target.display(), io_message(&e));
    let at = |millis: u64| std::time::UNIX_EPOCH + std::time::Duration::from_millis(millis);
    let times = std::fs::FileTimes::new()
        .set_modified(at(src.modification_time))
        .set_accessed(at(src.access_time));
    std::fs::File::options()
        .write(true)
        .open(target)
        .and_then(|f| f.set_times(times))
        .map_err(fail)?;
    let uid = name_id("/etc/passwd", &src.owner)
        .ok_or_else(|| format!("chown: invalid user: '{}:{}'", src.owner, src.group))?;
    let gid = name_id("/etc/group", &src.group)
        .ok_or_else(|| format!("chown: invalid group: '{}:{}'", src.owner, src.group))?;
    std::os::unix::fs::chown(target, Some(uid), Some(gid)).map_err(fail)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        target,
        std::fs::Permissions::from_mode(u32::from(src.permission)),
    )
    .map_err(fail)
}

/// The last component of a local path (`stdin` for `-`).
fn local_name(src: &str) -> String {
    Path::new(src)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("stdin")
        .to_string()
}

impl Shell {
    /// `-put`, `-copyFromLocal` and (with `remove_source`) `-moveFromLocal`.
    pub(super) async fn put(
        &mut self,
        cmd: &str,
        args: &[String],
        remove_source: bool,
    ) -> Result<(), String> {
        let (flags, ops) = copy_flags(args)?;
        let (srcs, shown) = sources_and_destination(cmd, &ops)?;
        let dst = self.resolve(shown);
        let into_dir = self
            .destination_dir(shown, &dst, srcs.len(), flags.overwrite)
            .await?;
        for src in srcs {
            let target = if into_dir {
                format!("{}/{}", dst.trim_end_matches('/'), local_name(src))
            } else {
                dst.clone()
            };
            match self.put_one(src, &target, &flags).await {
                Ok(()) if remove_source && src != "-" => {
                    if let Err(e) = std::fs::remove_file(src) {
                        eprintln!("{cmd}: `{src}': {}", io_message(&e));
                        self.failed = true;
                    }
                }
                Ok(()) => {}
                Err(e) => {
                    eprintln!("{cmd}: {e}");
                    self.failed = true;
                }
            }
        }
        Ok(())
    }

    /// Hadoop's `CommandWithDestination.processArguments`: several sources need an
    /// existing directory; one source needs the destination's parent (or, written
    /// with a trailing `/`, the destination itself) to exist. Whether the copies go
    /// into the destination as a directory.
    pub(super) async fn destination_dir(
        &self,
        shown: &str,
        dst: &str,
        sources: usize,
        overwrite: bool,
    ) -> Result<bool, String> {
        let info = self
            .client
            .get_file_info(dst)
            .await
            .map_err(|e| describe(shown, &e))?;
        let fs = self.default_fs.trim_end_matches('/');
        let missing = || format!("`{shown}': No such file or directory: `{fs}{dst}'");
        match info {
            Some(s) if s.is_dir => Ok(true),
            Some(_) if sources > 1 => Err(format!("`{shown}': Is not a directory")),
            Some(_) if !overwrite => Err(format!("`{shown}': File exists")),
            Some(_) => Ok(false),
            None if sources > 1 => Err(format!("`{shown}': No such file or directory")),
            None if shown.ends_with('/') => Err(missing()),
            None => match self.client.get_file_info(&super::parent_of(dst)).await {
                Ok(Some(_)) => Ok(false),
                Ok(None) => Err(missing()),
                Err(e) => Err(describe(shown, &e)),
            },
        }
    }

    async fn put_one(&self, src: &str, target: &str, flags: &CopyFlags) -> Result<(), String> {
        match self.client.get_file_info(target).await {
            Ok(Some(s)) if s.is_dir || !flags.overwrite => {
                return Err(format!("`{target}': File exists"))
            }
            _ => {}
        }
        let (input, local): (Box<dyn Read>, Option<LocalStatus>) = if src == "-" {
            (Box::new(std::io::stdin()), None)
        } else {
            let file =
                std::fs::File::open(src).map_err(|e| format!("`{src}': {}", io_message(&e)))?;
            let meta = file
                .metadata()
                .map_err(|e| format!("`{src}': {}", io_message(&e)))?;
            if meta.is_dir() {
                return Err(format!("`{src}': Is a directory"));
            }
            (Box::new(file), Some(LocalStatus::of(&meta)))
        };
        let mut source = Source::Local(input);
        let size = local.as_ref().map(|l| l.size);
        self.write_through_temp(&mut source, src, size, target, flags.direct)
            .await?;
        match local {
            Some(l) if flags.preserve => self.preserve_from_local(target, &l).await,
            _ => Ok(()),
        }
    }

    /// `-put -p`: the cluster file takes the local file's times, owner, group and mode
    /// (in Hadoop's order: times, ownership, permission).
    async fn preserve_from_local(&self, target: &str, l: &LocalStatus) -> Result<(), String> {
        let fail = |e| describe(target, &e);
        self.client
            .set_times(target, l.mtime, l.atime)
            .await
            .map_err(fail)?;
        self.client
            .set_owner(target, Some(&l.owner), Some(&l.group))
            .await
            .map_err(fail)?;
        self.client
            .set_permission(target, l.mode)
            .await
            .map_err(fail)
    }

    /// Writes `source` to `target` through `<target>._COPYING_` (to `target` itself
    /// when `direct`). A failure after the file was created deletes it, as Hadoop's
    /// `TargetFileSystem` does: nothing half-written stays, and its lease ends with it.
    /// A source of `size` bytes shows its progress on a terminal.
    pub(super) async fn write_through_temp(
        &self,
        source: &mut Source,
        src_shown: &str,
        size: Option<u64>,
        target: &str,
        direct: bool,
    ) -> Result<(), String> {
        let written = if direct {
            target.to_string()
        } else {
            format!("{target}._COPYING_")
        };
        let create = CreateOptions {
            overwrite: true,
            ..Default::default()
        };
        let mut w = self
            .client
            .create(&written, create)
            .await
            .map_err(|e| describe(target, &e))?;
        let progress = Progress::bytes(src_shown, size);
        let copied = async {
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = source.read(&mut buf, src_shown).await?;
                if n == 0 {
                    break;
                }
                w.write(&buf[..n]).await.map_err(|e| describe(target, &e))?;
                progress.advance(n as u64);
            }
            w.close().await.map_err(|e| describe(target, &e))?;
            if !direct {
                self.client
                    .rename2(&written, target, true)
                    .await
                    .map_err(|e| describe(target, &e))?;
            }
            Ok(())
        }
        .await;
        if copied.is_err() && !direct {
            let _ = self.client.delete(&written, false).await;
        }
        copied
    }
}

/// Where a copy reads from: a local file (or stdin), or a cluster file.
pub(super) enum Source {
    Local(Box<dyn Read>),
    Cluster(Box<tusk_client::FileReader>),
}

impl Source {
    async fn read(&mut self, buf: &mut [u8], shown: &str) -> Result<usize, String> {
        match self {
            Source::Local(r) => r.read(buf).map_err(|e| format!("`{shown}': {e}")),
            Source::Cluster(r) => r.read(buf).await.map_err(|e| describe(shown, &e)),
        }
    }
}

impl Shell {
    /// `-get`/`-copyToLocal [-f] [-p] [-crc] [-ignoreCrc] <src> ... <localdst>`.
    pub(super) async fn get(&mut self, cmd: &str, args: &[String]) -> Result<(), String> {
        let (flags, ops) = copy_flags(args)?;
        let (srcs, dst) = sources_and_destination(cmd, &ops)?;
        let local_dst = Path::new(dst);
        let into_dir = local_dst.is_dir();
        if srcs.len() > 1 && !into_dir {
            return Err(if local_dst.exists() {
                format!("`{dst}': Is not a directory")
            } else {
                format!("`{dst}': No such file or directory")
            });
        }
        for src in srcs {
            let path = self.resolve(src);
            let name = path.rsplit('/').next().unwrap_or("file").to_string();
            let target = if into_dir {
                local_dst.join(&name)
            } else {
                local_dst.to_path_buf()
            };
            if let Err(e) = self.get_one(src, &path, &target, &flags).await {
                eprintln!("{cmd}: {e}");
                self.failed = true;
            }
        }
        Ok(())
    }

    /// A directory, as Hadoop's `-get` copies one: made at `target` (an existing one is
    /// written into) and filled with its files and directories, recursively.
    async fn get_dir(
        &self,
        src: &str,
        path: &str,
        target: &Path,
        flags: &CopyFlags,
    ) -> Result<(), String> {
        if target.exists() && !target.is_dir() {
            return Err(format!("`{}': File exists", target.display()));
        }
        std::fs::create_dir_all(target)
            .map_err(|e| format!("`{}': {}", target.display(), io_message(&e)))?;
        let children = self
            .client
            .list(path)
            .await
            .map_err(|e| describe(src, &e))?;
        for child in children {
            let name = child
                .path
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let child_path = format!("{}/{name}", path.trim_end_matches('/'));
            let child_src = format!("{}/{name}", src.trim_end_matches('/'));
            Box::pin(self.get_one(&child_src, &child_path, &target.join(&name), flags)).await?;
        }
        Ok(())
    }

    async fn get_one(
        &self,
        src: &str,
        path: &str,
        target: &Path,
        flags: &CopyFlags,
    ) -> Result<(), String> {
        let status = self
            .client
            .stat(path)
            .await
            .map_err(|e| describe(src, &e))?;
        if status.is_dir {
            return self.get_dir(src, path, target, flags).await;
        }
        if target.is_dir() || (target.exists() && !flags.overwrite) {
            return Err(format!("`{}': File exists", target.display()));
        }
        let mut r = self
            .client
            .open(path)
            .await
            .map_err(|e| describe(src, &e))?;
        let written = if flags.direct {
            target.to_path_buf()
        } else {
            let mut name = target.as_os_str().to_owned();
            name.push("._COPYING_");
            PathBuf::from(name)
        };
        let local_err = |e: std::io::Error| format!("`{}': {}", target.display(), io_message(&e));
        let progress = Progress::bytes(src, Some(status.length));
        let copied = async {
            let mut out = std::fs::File::create(&written).map_err(local_err)?;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = r.read(&mut buf).await.map_err(|e| describe(src, &e))?;
                if n == 0 {
                    break;
                }
                out.write_all(&buf[..n]).map_err(local_err)?;
                progress.advance(n as u64);
            }
            drop(out);
            if written != target {
                std::fs::rename(&written, target).map_err(local_err)?;
            }
            Ok::<(), String>(())
        }
        .await;
        if copied.is_err() && written != target {
            let _ = std::fs::remove_file(&written);
        }
        copied?;
        if flags.preserve {
            preserve_local(target, &status)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs_shell::tests::words;

    #[test]
    fn copy_flags_split_and_refuse_unknown_ones() {
        let (f, ops) = copy_flags(&words(&["-f", "-p", "-t", "4", "a", "/b"])).unwrap();
        assert!(f.overwrite && f.preserve && !f.direct);
        assert_eq!(ops, words(&["a", "/b"]));
        assert_eq!(
            copy_flags(&words(&["-z", "a", "/b"])).unwrap_err(),
            "Illegal option -z"
        );
        let (_, ops) = copy_flags(&words(&["-", "/b"])).unwrap();
        assert_eq!(ops, words(&["-", "/b"]), "a lone - is stdin");
    }

    #[test]
    fn ids_and_names_come_from_the_databases() {
        assert_eq!(id_name("/etc/passwd", 0).as_deref(), Some("root"));
        assert_eq!(name_id("/etc/passwd", "root"), Some(0));
        assert_eq!(name_id("/etc/group", "1234"), Some(1234));
    }
}
