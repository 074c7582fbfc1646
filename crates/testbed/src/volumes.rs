//! Volumes: a sparse file per volume, attached to a loop device (direct I/O, so the host's
//! page cache holds no second copy), formatted ext4 and mounted under the testbed's
//! directory. Each volume is a block device of its own, so it has its own counters in
//! `/sys/block/loopN/stat` and its own blkio throttle.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, TestbedError};
use crate::host::{run, run_quietly};

/// One volume as built.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Volume {
    /// The sparse backing file.
    pub file: PathBuf,
    /// `/dev/loopN`.
    pub device: String,
    /// `major:minor` of the loop device, as blkio and `/sys/dev/block` name it.
    pub dev_id: String,
    pub mount: PathBuf,
}

pub fn create(file: &Path, size_mb: u64, mount: &Path) -> Result<Volume> {
    let f = std::fs::File::create(file).map_err(TestbedError::io(format!(
        "creating volume file {}",
        file.display()
    )))?;
    f.set_len(size_mb * 1_000_000)
        .map_err(TestbedError::io(format!("sizing {}", file.display())))?;
    drop(f);
    let path = file.to_string_lossy();
    let device = match run("losetup", &["-f", "--show", "--direct-io=on", &path]) {
        Ok(d) => d,
        // Some backing file systems refuse direct I/O; buffered loop devices still work.
        Err(_) => run("losetup", &["-f", "--show", &path])?,
    }
    .trim()
    .to_string();
    let volume = Volume {
        file: file.to_path_buf(),
        dev_id: dev_id(&device)?,
        device,
        mount: mount.to_path_buf(),
    };
    // Inode tables and journal are written now, not by a background thread later that
    // would show up as I/O on a node that is supposed to be idle.
    run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-m",
            "0",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            &volume.device,
        ],
    )?;
    std::fs::create_dir_all(mount).map_err(TestbedError::io(format!(
        "creating mount point {}",
        mount.display()
    )))?;
    run(
        "mount",
        &["-o", "noatime", &volume.device, &mount.to_string_lossy()],
    )?;
    Ok(volume)
}

/// Caps the dirty page-cache data of the volume whose device is `dev_id` at `bytes`,
/// strictly (the block device's `strict_limit` and `max_bytes` in `/sys/class/bdi`):
/// past it, a writer waits for the volume as on a machine whose memory is in proportion
/// to the scaled data. `None` restores the kernel's defaults (no strict limit, the
/// device's share of the host's limit), which a loop device keeps across testbeds.
pub fn limit_dirty(dev_id: &str, bytes: Option<u64>) -> Result<()> {
    let bdi = Path::new("/sys/class/bdi").join(dev_id);
    let set = |file: &str, value: String| {
        let path = bdi.join(file);
        std::fs::write(&path, &value).map_err(TestbedError::io(format!(
            "writing {value} to {}",
            path.display()
        )))
    };
    match bytes {
        Some(b) => {
            set("max_bytes", b.to_string())?;
            set("strict_limit", "1".into())
        }
        // Nothing to give back on a kernel without these files (before 6.2).
        None if !bdi.join("strict_limit").exists() => Ok(()),
        None => {
            set("strict_limit", "0".into())?;
            set("max_ratio", "100".into())
        }
    }
}

/// `major:minor` of a block device, from sysfs.
pub fn dev_id(device: &str) -> Result<String> {
    let name = device.trim_start_matches("/dev/");
    let path = format!("/sys/block/{name}/dev");
    std::fs::read_to_string(&path)
        .map(|s| s.trim().to_string())
        .map_err(TestbedError::io(format!("reading {path}")))
}

/// Unmounts (lazily if something still holds it), detaches every loop device on the
/// backing file and deletes the file.
pub fn remove(mount: &Path, file: &Path) {
    let m = mount.to_string_lossy();
    if is_mounted(mount) && !run_quietly("umount", &[&m]) {
        run_quietly("umount", &["-l", &m]);
    }
    for device in loop_devices_of(file) {
        run_quietly("losetup", &["-d", &device]);
    }
    let _ = std::fs::remove_file(file);
}

/// Loop devices whose backing file is `file`.
pub fn loop_devices_of(file: &Path) -> Vec<String> {
    run("losetup", &["-j", &file.to_string_lossy()])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split(':').next())
        .map(str::to_string)
        .collect()
}

pub fn is_mounted(path: &Path) -> bool {
    mounts_under(path).iter().any(|m| m == path)
}

/// Mount points at or below `dir`, deepest first.
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|m| PathBuf::from(m.replace("\\040", " ")))
        .filter(|m| m.starts_with(dir))
        .collect();
    found.sort_by_key(|m| std::cmp::Reverse(m.components().count()));
    found
}

/// The file that fills a volume for the disk-full fault.
pub fn filler(mount: &Path) -> PathBuf {
    mount.join("testbed-filler")
}

/// Takes every free byte of the volume; returns how many it took.
pub fn fill(mount: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(mount).map_err(|e| TestbedError::Io {
        what: format!("statvfs {}", mount.display()),
        source: e.into(),
    })?;
    let free = st.f_bavail * st.f_frsize;
    let file = filler(mount);
    // Most of it at once; ext4 needs some of the free blocks for the file's own extent
    // tree, so the rest is written until the file system says it is full.
    let bulk = free.saturating_sub(free / 50 + (4 << 20));
    run(
        "fallocate",
        &["-l", &bulk.to_string(), &file.to_string_lossy()],
    )?;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .map_err(TestbedError::io(format!("opening {}", file.display())))?;
    let mut written = bulk;
    for chunk in [1 << 20, 64 << 10, 4 << 10] {
        let zeros = vec![0u8; chunk];
        while std::io::Write::write_all(&mut f, &zeros).is_ok() {
            written += chunk as u64;
        }
    }
    // Dirty pages count until they are on disk: flush them so the volume is full now.
    let _ = f.sync_all();
    Ok(written)
}

pub fn unfill(mount: &Path) -> Result<()> {
    let file = filler(mount);
    std::fs::remove_file(&file).map_err(TestbedError::io(format!("removing {}", file.display())))
}
