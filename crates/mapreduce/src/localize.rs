//! Files and archives shipped into every task's working directory (streaming's `-file`,
//! the generic `-files` and `-archives`, Hadoop's distributed cache as tasks see it).
//!
//! At submission [`stage`] copies each local file into the job's staging directory in
//! the DFS, so the job names only DFS paths; before the task's components start
//! [`localize`] copies each into the working directory under its link name (made
//! executable, so a shipped script runs as a command) and unpacks each archive
//! (`.tar`, `.tar.gz`, `.tgz`, `.zip`, `.jar`) into a directory of that name.

use std::path::{Path, PathBuf};

use tusk_client::{CreateOptions, DfsClient};

use crate::api::Dfs;
use crate::error::{MapReduceError, Result};
use crate::job::JobSpec;
pub use crate::job::LocalizedFile;

/// Copies the job's local files into `<staging>/files/` in the DFS and points the job
/// at the copies; checks that its DFS files exist. A missing file refuses the job
/// (Hadoop: "File … does not exist").
pub async fn stage(client: &DfsClient, job: &mut JobSpec, staging: &str) -> Result<()> {
    for (i, f) in job.localized.iter_mut().enumerate() {
        if !f.local {
            let exists = client
                .get_file_info(&f.path)
                .await
                .map_err(|e| MapReduceError::dfs("stat", &f.path, e))?;
            if exists.is_none() {
                return Err(does_not_exist(&job.name, &f.path));
            }
            continue;
        }
        let bytes = std::fs::read(&f.path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => does_not_exist(&job.name, &f.path),
            _ => MapReduceError::io(&f.path, e),
        })?;
        let base = f.path.rsplit('/').next().unwrap_or(&f.name);
        let dest = format!("{}/files/{i}/{base}", staging.trim_end_matches('/'));
        let create = CreateOptions {
            create_parent: true,
            overwrite: true,
            ..Default::default()
        };
        client
            .write_file(&dest, &bytes, create)
            .await
            .map_err(|e| MapReduceError::dfs("create", &dest, e))?;
        f.path = dest;
        f.local = false;
    }
    Ok(())
}

fn does_not_exist(job: &str, path: &str) -> MapReduceError {
    MapReduceError::InvalidJob {
        job: job.to_string(),
        message: format!("File {path} does not exist"),
    }
}

/// Puts the job's files and archives into `work_dir`.
pub fn localize(job: &JobSpec, dfs: &Dfs, work_dir: &Path) -> Result<()> {
    for f in &job.localized {
        let bytes = dfs
            .block_on(dfs.client.read_file(&f.path))
            .map_err(|e| MapReduceError::dfs("read", &f.path, e))?;
        let target = work_dir.join(&f.name);
        if f.archive {
            unpack(&f.path, &bytes, work_dir, &target)?;
        } else {
            write_executable(&target, &bytes)?;
        }
    }
    Ok(())
}

fn write_executable(target: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(target, bytes).map_err(|e| MapReduceError::io(target, e))?;
    std::fs::set_permissions(target, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| MapReduceError::io(target, e))
}

/// Unpacks an archive (by its name's extension) into `target`; an archive of a kind
/// Hadoop does not unpack is copied as a file, as Hadoop does.
fn unpack(path: &str, bytes: &[u8], work_dir: &Path, target: &Path) -> Result<()> {
    let lower = path.to_ascii_lowercase();
    let tool: &[&str] = if lower.ends_with(".zip") || lower.ends_with(".jar") {
        &["unzip", "-q", "-o"]
    } else if [".tar", ".tar.gz", ".tgz"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        &["tar", "-xf"]
    } else {
        return write_executable(target, bytes);
    };
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let packed: PathBuf = work_dir.join(format!(".{name}.archive"));
    std::fs::write(&packed, bytes).map_err(|e| MapReduceError::io(&packed, e))?;
    std::fs::create_dir_all(target).map_err(|e| MapReduceError::io(target, e))?;
    let mut cmd = std::process::Command::new(tool[0]);
    cmd.args(&tool[1..]).arg(&packed);
    if tool[0] == "unzip" {
        cmd.arg("-d").arg(target);
    } else {
        cmd.arg("-C").arg(target);
    }
    let status = cmd.status().map_err(|e| MapReduceError::io(&packed, e));
    let _ = std::fs::remove_file(&packed);
    if !status?.success() {
        return Err(MapReduceError::Task(format!(
            "unpacking archive {path} with {} failed",
            tool[0]
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_name_local_or_dfs_files_and_their_links() {
        let cwd = Path::new("/home/u");
        let f = LocalizedFile::parse("map.py", false, cwd).unwrap();
        assert_eq!(
            f,
            LocalizedFile {
                path: "/home/u/map.py".into(),
                local: true,
                name: "map.py".into(),
                archive: false
            }
        );
        let f = LocalizedFile::parse("hdfs://nn:8020/lib/dict.txt#words", false, cwd).unwrap();
        assert_eq!((f.path.as_str(), f.local), ("/lib/dict.txt", false));
        assert_eq!(f.name, "words");
        let f = LocalizedFile::parse("file:///tmp/x.tgz#x", true, cwd).unwrap();
        assert_eq!(
            (f.path.as_str(), f.local, f.archive),
            ("/tmp/x.tgz", true, true)
        );
        assert!(LocalizedFile::parse("a#..", false, cwd).is_err());
    }

    #[test]
    fn archives_unpack_into_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(src.join("inside.txt"), "packed\n").unwrap();
        let tgz = dir.path().join("a.tgz");
        let ok = std::process::Command::new("tar")
            .arg("-czf")
            .arg(&tgz)
            .arg("-C")
            .arg(&src)
            .arg("inside.txt")
            .status()
            .unwrap();
        assert!(ok.success());
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let bytes = std::fs::read(&tgz).unwrap();
        unpack("/staging/a.tgz", &bytes, &work, &work.join("dict")).unwrap();
        assert_eq!(
            std::fs::read_to_string(work.join("dict/inside.txt")).unwrap(),
            "packed\n"
        );
        // Nothing but the unpacked directory is left behind.
        let names: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().collect();
        assert_eq!(names.len(), 1);
    }
}
