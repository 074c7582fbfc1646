//! ARCHIVE and PATTERN resources unpacked as Hadoop's `FSDownload` does, chosen by the
//! resource file's name: `.jar` and `.zip` are zip files, `.tar`, `.tar.gz` and `.tgz`
//! tar files (gzipped when the name ends in `gz`); any other name is copied as it is.
//! A PATTERN `.jar` unpacks only the entries whose whole name matches the pattern and
//! keeps the jar itself in the directory, under its own name; a PATTERN zip or tar is
//! unpacked whole, as an ARCHIVE.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::Path;

use regex::Regex;

use super::ResourceType;

/// Unpacks (or copies) the downloaded `archive`, whose resource file is called `name`,
/// into `dest` (a directory when unpacked, else a file).
pub(crate) fn unpack(
    archive: &Path,
    name: &str,
    kind: ResourceType,
    pattern: Option<&str>,
    dest: &Path,
) -> io::Result<()> {
    let lower = name.to_lowercase();
    let is_tar = lower.ends_with(".tar") || lower.ends_with(".tar.gz") || lower.ends_with(".tgz");
    let gzipped = lower.ends_with("gz");
    match kind {
        ResourceType::Pattern if lower.ends_with(".jar") => {
            let pattern = match pattern {
                Some(p) => Some(
                    Regex::new(&format!("^(?:{p})$"))
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?,
                ),
                None => None,
            };
            unzip(archive, dest, pattern.as_ref())?;
            std::fs::copy(archive, dest.join(name)).map(|_| ())
        }
        ResourceType::Archive | ResourceType::Pattern if lower.ends_with(".jar") => {
            unzip(archive, dest, None)
        }
        ResourceType::Archive | ResourceType::Pattern if lower.ends_with(".zip") => {
            unzip(archive, dest, None)
        }
        ResourceType::Archive | ResourceType::Pattern if is_tar => untar(archive, dest, gzipped),
        _ => std::fs::copy(archive, dest).map(|_| ()),
    }
}

/// Extracts the entries of a zip (or jar) whose names match `pattern` (all when
/// `None`), keeping their Unix modes when the archive has them.
fn unzip(archive: &Path, dest: &Path, pattern: Option<&Regex>) -> io::Result<()> {
    let mut zip =
        zip::ZipArchive::new(BufReader::new(File::open(archive)?)).map_err(io::Error::other)?;
    std::fs::create_dir_all(dest)?;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(io::Error::other)?;
        let name = entry.name().map_err(io::Error::other)?.into_owned();
        if pattern.is_some_and(|p| !p.is_match(&name)) {
            continue;
        }
        // Entries naming a place outside `dest` are skipped.
        let Some(relative) = entry.enclosed_name() else {
            continue;
        };
        let target = dest.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut out = File::create(&target)?;
        io::copy(&mut entry, &mut out)?;
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode & 0o7777))?;
        }
    }
    Ok(())
}

fn untar(archive: &Path, dest: &Path, gzipped: bool) -> io::Result<()> {
    std::fs::create_dir_all(dest)?;
    let file = BufReader::new(File::open(archive)?);
    if gzipped {
        tar::Archive::new(flate2::read::GzDecoder::new(file)).unpack(dest)
    } else {
        tar::Archive::new(file).unpack(dest)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn jar(path: &Path, entries: &[(&str, &str)]) {
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        for (name, body) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(body.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
    }

    #[test]
    fn a_pattern_jar_keeps_matching_entries_and_the_jar() {
        let dir = tempfile::tempdir().unwrap();
        let download = dir.path().join("download");
        jar(
            &download,
            &[
                ("classes/A.class", "a"),
                ("lib/x.jar", "x"),
                ("META-INF/MANIFEST.MF", "m"),
            ],
        );
        let dest = dir.path().join("job.jar");
        unpack(
            &download,
            "job.jar",
            ResourceType::Pattern,
            Some("(?:classes/|lib/).*"),
            &dest,
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dest.join("classes/A.class")).unwrap(),
            "a"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("lib/x.jar")).unwrap(),
            "x"
        );
        assert!(!dest.join("META-INF/MANIFEST.MF").exists());
        assert!(
            dest.join("job.jar").is_file(),
            "the jar is kept beside its entries"
        );
    }

    #[test]
    fn an_archive_of_unknown_kind_is_copied() {
        let dir = tempfile::tempdir().unwrap();
        let download = dir.path().join("download");
        std::fs::write(&download, "plain").unwrap();
        let dest = dir.path().join("data.bin");
        unpack(&download, "data.bin", ResourceType::Archive, None, &dest).unwrap();
        assert_eq!(std::fs::read_to_string(dest).unwrap(), "plain");
    }
}
