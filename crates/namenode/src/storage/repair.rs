//! Start-up across name directories, and the operator's recovery of a corrupt log.
//!
//! At start every directory is examined: its identity, its newest image and the log
//! after it. The copy that reaches the highest transaction without damage is the source;
//! the others are made copies of it (a damaged one's files are kept aside, never
//! deleted). The NameNode refuses to start when the source itself is damaged, or when a
//! damaged copy holds transactions beyond the source: then only an operator's
//! `tusk namenode recover` may give them up. A torn tail, the incomplete end of the
//! segment being written at a crash, is cut off once, with one WARN.

use std::fs;
use std::path::PathBuf;

use tusk_proto::internal::FsImage;

use super::{copy_atomic, set_aside_path, sync_dir, truncate, NameDir, NameDirs, StorageInfo};
use super::{read_image, SET_ASIDE};
use crate::edit_log::scan::{self, Corruption, LastSegment, LogScan};
use crate::error::{NameNodeError, Result};

/// Where start-up reads the namespace from, once every copy agrees.
pub struct LoadSource {
    /// Index of the source directory.
    pub dir: usize,
    pub storage: StorageInfo,
    pub image: FsImage,
}

/// What `tusk namenode recover` would do: keep the log of `dir` up to
/// `last_good_txid` and give up what follows.
#[derive(Clone, Debug)]
pub struct RecoveryPlan {
    /// The name directory whose log is kept.
    pub dir: PathBuf,
    /// Its index in the [`NameDirs`].
    pub(crate) dir_index: usize,
    /// The damage, in the copy whose transactions would be given up.
    pub problem: Corruption,
    /// The last transaction kept.
    pub last_good_txid: u64,
    /// The highest transaction found beyond the damage.
    pub max_txid: u64,
    /// Valid records found after the damage, all dropped.
    pub dropped_records: u64,
}

/// A directory's newest image, or why it cannot be used.
type ImageState = std::result::Result<FsImage, ImageProblem>;

#[derive(Clone, Debug)]
struct ImageProblem {
    path: String,
    reason: String,
}

impl ImageProblem {
    fn error(&self) -> NameNodeError {
        NameNodeError::ImageCorrupt {
            path: self.path.clone(),
            reason: self.reason.clone(),
        }
    }
}

/// What one directory holds.
struct Examined {
    /// `None`: not formatted (missing, empty or a new disk).
    version: Option<StorageInfo>,
    image: ImageState,
    /// The log after the image (after txid 0 when the image is unusable).
    log: LogScan,
    /// The newest image's txid by its name, usable or not.
    newest_image_txid: u64,
    /// Whether it holds any image or segment.
    has_files: bool,
}

impl Examined {
    /// The highest txid this directory has any record of.
    fn max_txid(&self) -> u64 {
        self.log.max_txid.max(self.newest_image_txid)
    }

    /// A formatted copy with a usable image and an undamaged log.
    fn sound(&self) -> bool {
        self.version.is_some() && self.image.is_ok() && self.log.problem.is_none()
    }

    /// Why this copy holds transactions it cannot provide: the error to stop with.
    fn damage(&self) -> NameNodeError {
        match (&self.image, self.log.error()) {
            (Err(p), _) => p.error(),
            (Ok(_), Some(e)) => e,
            (Ok(_), None) => NameNodeError::EditLog("no damage".into()),
        }
    }
}

fn examine(dir: &NameDir) -> Result<Examined> {
    let (images, segments) = match dir.images().and_then(|i| Ok((i, dir.segments()?))) {
        Ok(found) => found,
        Err(NameNodeError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            (Vec::new(), Vec::new())
        }
        Err(e) => return Err(e),
    };
    let newest_image_txid = images.last().map_or(0, |(txid, _)| *txid);
    let has_files = !images.is_empty() || !segments.is_empty();
    if !dir.is_formatted() {
        return Ok(Examined {
            version: None,
            image: Err(ImageProblem {
                path: dir.current.display().to_string(),
                reason: "not formatted".into(),
            }),
            log: LogScan::default(),
            newest_image_txid,
            has_files,
        });
    }
    let version = dir.read_version()?;
    let image = match images.last() {
        None => Err(ImageProblem {
            path: dir.current.display().to_string(),
            reason: "no image".into(),
        }),
        Some((_, path)) => match read_image(path) {
            Ok(image) => Ok(image),
            Err(NameNodeError::ImageCorrupt { path, reason }) => Err(ImageProblem { path, reason }),
            Err(e) => return Err(e),
        },
    };
    let image_txid = image.as_ref().map_or(0, |i| i.last_txid);
    let log = scan::scan_log(&segments, image_txid, LastSegment::InProgress, &mut |_| {
        Ok(())
    })?;
    Ok(Examined {
        version: Some(version),
        image,
        log,
        newest_image_txid,
        has_files,
    })
}

impl NameDirs {
    /// Examines every directory in service; one that cannot be read is taken out of
    /// service. `None` for directories out of service.
    fn examine_all(&self) -> Result<Vec<Option<Examined>>> {
        let mut out = Vec::with_capacity(self.len());
        let mut first_error = None;
        for i in 0..self.len() {
            if !self.in_service(i) {
                out.push(None);
                continue;
            }
            match examine(self.dir(i)) {
                Ok(e) => out.push(Some(e)),
                Err(e) => {
                    self.take_out_of_service(i, &e);
                    first_error.get_or_insert(e);
                    out.push(None);
                }
            }
        }
        match first_error {
            Some(e) if out.iter().all(Option::is_none) => Err(e),
            _ => Ok(out),
        }
    }

    /// Chooses the copy to load, repairs the others from it and cuts a torn tail; fails
    /// on damage only an operator may accept (see the module notes).
    pub fn prepare_for_load(&self) -> Result<LoadSource> {
        let mut exams = self.examine_all()?;
        let source = self.choose_source(&exams)?;
        let stamp = tusk_common::now_millis();
        let reach = exams[source].as_ref().expect("examined").log.last_txid;
        cut_torn_tail(&exams[source].as_ref().expect("examined").log)?;
        for (i, exam) in exams.iter().enumerate() {
            let Some(e) = exam.as_ref().filter(|_| i != source) else {
                continue;
            };
            let done = if e.sound() && e.log.last_txid == reach {
                cut_torn_tail(&e.log)
            } else {
                self.report_repair(i, e, source, reach);
                replace_with(self.dir(source), self.dir(i), needs_keeping(e), stamp).map(|_| ())
            };
            if let Err(err) = done {
                self.take_out_of_service(i, &err);
            }
        }
        let e = exams[source].take().expect("examined");
        Ok(LoadSource {
            dir: source,
            storage: e.version.expect("the source is formatted"),
            image: e.image.expect("the source has an image"),
        })
    }

    fn report_repair(&self, i: usize, e: &Examined, source: usize, reach: u64) {
        let dir = self.dir(i).root().display();
        let from = self.dir(source).root().display();
        if needs_keeping(e) && e.version.is_some() {
            tracing::error!(
                %dir,
                damage = %e.damage(),
                "name directory is damaged; replacing its copy with {from}'s (its files are kept as *{SET_ASIDE}<time>)"
            );
        } else {
            tracing::warn!(
                %dir,
                last_txid = e.log.last_txid,
                source_last_txid = reach,
                "name directory is behind, empty or missing; copying {from} into it"
            );
        }
    }

    /// The sound copy reaching furthest, if no copy holds more that it lacks.
    fn choose_source(&self, exams: &[Option<Examined>]) -> Result<usize> {
        let formatted: Vec<usize> = (0..exams.len())
            .filter(|i| exams[*i].as_ref().is_some_and(|e| e.version.is_some()))
            .collect();
        let Some(&first) = formatted.first() else {
            return Err(NameNodeError::NotFormatted {
                path: (0..self.len())
                    .map(|i| self.dir(i).root().display().to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            });
        };
        let exam = |i: usize| exams[i].as_ref().expect("examined");
        for &i in &formatted[1..] {
            self.check_same_namespace(first, exam(first), i, exam(i))?;
        }
        let source = best_copy(exams).ok_or_else(|| exam(first).damage())?;
        let reach = exam(source).log.last_txid;
        if let Some(e) = exam(source).log.error() {
            return Err(e);
        }
        if let Some(&i) = formatted.iter().find(|i| exam(**i).max_txid() > reach) {
            return Err(exam(i).damage());
        }
        Ok(source)
    }

    fn check_same_namespace(&self, a: usize, ea: &Examined, b: usize, eb: &Examined) -> Result<()> {
        let (va, vb) = (ea.version.as_ref(), eb.version.as_ref());
        if va == vb {
            return Ok(());
        }
        Err(NameNodeError::InconsistentNameDirs {
            path: self.dir(b).root().display().to_string(),
            other: self.dir(a).root().display().to_string(),
            reason: format!("it belongs to another namespace ({vb:?} vs {va:?})"),
        })
    }

    /// What recovery would cut, or `None` when the log needs no operator.
    pub fn plan_recovery(&self) -> Result<Option<RecoveryPlan>> {
        let exams = self.examine_all()?;
        match self.choose_source(&exams) {
            Ok(_) => return Ok(None),
            Err(NameNodeError::EditLogCorrupt { .. }) => {}
            Err(e) => return Err(e),
        }
        let base = best_copy(&exams)
            .ok_or_else(|| NameNodeError::EditLog("no name directory has a usable image".into()))?;
        let exam = |i: usize| exams[i].as_ref().expect("examined");
        let last_good_txid = exam(base).log.last_txid;
        let damaged = if exam(base).log.problem.is_some() {
            base
        } else {
            (0..exams.len())
                .filter(|i| exams[*i].as_ref().is_some_and(|e| e.log.problem.is_some()))
                .find(|i| exam(*i).max_txid() > last_good_txid)
                .ok_or_else(|| exam(base).damage())?
        };
        let max_txid = exams.iter().flatten().map(Examined::max_txid).max();
        Ok(Some(RecoveryPlan {
            dir: self.dir(base).root().to_path_buf(),
            dir_index: base,
            problem: exam(damaged).log.problem.clone().expect("damaged"),
            last_good_txid,
            max_txid: max_txid.unwrap_or(last_good_txid),
            dropped_records: exam(damaged).log.dropped,
        }))
    }

    /// The copy start-up would load and its image, without repairing anything: for a
    /// trial replay.
    pub(crate) fn choose_without_repair(&self) -> Result<(usize, FsImage)> {
        let mut exams = self.examine_all()?;
        let source = self.choose_source(&exams)?;
        let image = exams[source].take().expect("examined").image;
        Ok((source, image.expect("the source has an image")))
    }

    /// Carries out `plan`: the kept copy's log is cut at the damage when the damage is
    /// in it (the damaged segment copied aside first, later segments moved aside), and
    /// every other copy that does not end where the cut does is replaced by it, its files
    /// kept aside. Returns the files kept aside.
    pub fn recover(&self, plan: &RecoveryPlan) -> Result<Vec<PathBuf>> {
        let stamp = tusk_common::now_millis();
        let exams = self.examine_all()?;
        let base = self.dir(plan.dir_index);
        let mut kept = Vec::new();
        if plan.problem.path.starts_with(&base.current) {
            kept.extend(cut_log_at(base, &plan.problem, stamp)?);
        }
        for (i, e) in exams.iter().enumerate() {
            let Some(e) = e.as_ref().filter(|_| i != plan.dir_index) else {
                continue;
            };
            if !(e.sound() && e.log.last_txid == plan.last_good_txid) {
                kept.extend(replace_with(base, self.dir(i), true, stamp)?);
            }
        }
        Ok(kept)
    }
}

/// The formatted copy with a usable image whose log reaches furthest (the first listed
/// among equals).
fn best_copy(exams: &[Option<Examined>]) -> Option<usize> {
    let mut best: Option<(usize, u64)> = None;
    for (i, e) in exams.iter().enumerate() {
        let Some(e) = e
            .as_ref()
            .filter(|e| e.version.is_some() && e.image.is_ok())
        else {
            continue;
        };
        if best.is_none_or(|(_, reach)| e.log.last_txid > reach) {
            best = Some((i, e.log.last_txid));
        }
    }
    best.map(|(i, _)| i)
}

/// Whether a copy about to be replaced may hold something worth keeping: damage (an
/// operator may want to look), or files without a `VERSION`.
fn needs_keeping(e: &Examined) -> bool {
    match &e.version {
        Some(_) => e.image.is_err() || e.log.problem.is_some(),
        None => e.has_files,
    }
}

/// Cuts off the incomplete end of the segment that was being written: it never synced,
/// so nothing in it was acknowledged.
fn cut_torn_tail(log: &LogScan) -> Result<()> {
    if let Some(t) = &log.torn {
        tracing::warn!(
            segment = %t.path.display(),
            offset = t.offset,
            bytes = t.len,
            reason = t.reason,
            last_txid = log.last_txid,
            "cutting off a torn edit log tail (a write a crash interrupted, never acknowledged)"
        );
        truncate(&t.path, t.offset)?;
    }
    Ok(())
}

/// Cuts `dir`'s log where `p` is: the damaged segment is copied aside and truncated
/// there, the segments after it are moved aside. Returns the files kept aside.
fn cut_log_at(dir: &NameDir, p: &Corruption, stamp: u64) -> Result<Vec<PathBuf>> {
    let segments = dir.segments()?;
    let at = segments
        .iter()
        .position(|(_, path)| *path == p.path)
        .ok_or_else(|| NameNodeError::EditLog(format!("{} is gone", p.path.display())))?;
    let mut kept = Vec::new();
    let copy = set_aside_path(&p.path, stamp);
    copy_atomic(&p.path, &copy)?;
    kept.push(copy);
    truncate(&p.path, p.offset)?;
    for (_, path) in &segments[at + 1..] {
        let aside = set_aside_path(path, stamp);
        fs::rename(path, &aside)?;
        kept.push(aside);
    }
    sync_dir(&p.path)?;
    Ok(kept)
}

/// Makes `target` a copy of `source`: its own files are removed, or moved aside when
/// `keep`, then `source`'s identity, newest image and the segments after it are copied
/// in. Files that are not a name directory's own are left alone. Returns the files
/// moved aside.
fn replace_with(
    source: &NameDir,
    target: &NameDir,
    keep: bool,
    stamp: u64,
) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(&target.current)?;
    let mut kept = Vec::new();
    for entry in fs::read_dir(&target.current)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.contains(SET_ASIDE) {
            continue;
        }
        let log_file = name.starts_with("edits_") || name.starts_with("fsimage_");
        if keep && log_file {
            let aside = set_aside_path(&path, stamp);
            fs::rename(&path, &aside)?;
            kept.push(aside);
        } else if log_file || name == "VERSION" || name.ends_with(".tmp") {
            fs::remove_file(&path)?;
        }
    }
    let (image_txid, image) =
        source
            .images()?
            .pop()
            .ok_or_else(|| NameNodeError::NotFormatted {
                path: source.current.display().to_string(),
            })?;
    let segments = source.segments()?;
    let files = std::iter::once(source.current.join("VERSION"))
        .chain(std::iter::once(image))
        .chain(
            scan::needed_segments(&segments, image_txid)
                .iter()
                .map(|(_, p)| p.clone()),
        );
    for from in files {
        copy_atomic(
            &from,
            &target.current.join(from.file_name().unwrap_or_default()),
        )?;
    }
    sync_dir(&target.current.join("VERSION"))?;
    Ok(kept)
}
