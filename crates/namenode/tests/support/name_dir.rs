//! A name directory's `current/` as a test sees it: its own files with their contents,
//! and the names of those set aside. Shared by the NameNode's edit log tests and the
//! CLI's `tusk namenode recover` tests (which include this file by path).
#![allow(dead_code)] // each binary uses its own part

use std::path::Path;

use tusk_namenode::storage::SET_ASIDE;

/// The names in `dir/current`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<_> = std::fs::read_dir(dir.join("current"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The files of a name directory other than those set aside, with their contents.
pub fn own_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .filter(|n| !n.contains(SET_ASIDE))
        .map(|n| {
            let data = std::fs::read(dir.join("current").join(&n)).unwrap();
            (n, data)
        })
        .collect()
}

/// The names of the files a name directory has set aside (damaged copies it keeps).
pub fn set_aside(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.contains(SET_ASIDE))
        .collect()
}
