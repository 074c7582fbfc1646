//! The data file of a replica being written, without the copy into cold page-cache pages.
//!
//! In [`WriteMode::Direct`] (`tusk.datanode.direct-io = true`) every packet's bytes go to the file through two
//! descriptors: the page-aligned part with `O_DIRECT` from an aligned buffer taken from a
//! pool and reused, and the unaligned tail (under one page) with a buffered `pwrite`. So
//! the file holds every byte written (an acknowledged packet is readable and survives
//! the process being killed, as with buffered writes), while bulk data skips the page
//! cache. The buffer keeps a copy of the partial last page, so the next aligned write
//! rewrites that page whole; the kernel writes back and drops the page's cached copy
//! before a direct write over it.
//!
//! A file system that refuses `O_DIRECT` (tmpfs refuses the open; others a write) falls
//! back to buffered writes for the replica, counted in [`WriteStats::fallbacks`].
//!
//! Space is preallocated ahead of the writes (`fallocate` with `KEEP_SIZE`, in
//! [`PREALLOC_STEP`] steps) so writes do not allocate block by block; the
//! preallocation is unwritten space, which reads as zeros and lies past the file's end,
//! and [`DataOut::finish`] gives back what the replica did not use.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The direct-I/O alignment: the page size, which every local file system's logical
/// block size divides.
const ALIGN: usize = 4096;
/// The aligned buffer's usable size; larger packets are written in pieces of this.
const BUFFER: usize = 1 << 20;
/// Space preallocated past the write position at a time.
pub const PREALLOC_STEP: u64 = 8 << 20;
/// Buffers kept for reuse; more writers than this allocate and free their own.
const POOL_MAX: usize = 64;

/// How replica data is written; `tusk.datanode.direct-io` (true by default) chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// `O_DIRECT` from aligned, reused buffers, falling back to buffered writes where
    /// the file system refuses it.
    Direct,
    /// Buffered `pwrite`s through the page cache.
    Buffered,
}

/// Counters over every replica a store wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Bytes written with `O_DIRECT`.
    pub direct_bytes: u64,
    /// Bytes written through the page cache (unaligned tails, buffered mode, fallbacks).
    pub buffered_bytes: u64,
    /// Replicas whose file system refused `O_DIRECT` and that were written buffered.
    pub fallbacks: u64,
}

/// The store's aligned buffers and counters, shared by its writers.
#[derive(Default)]
pub struct DirectIo {
    pool: Mutex<Vec<Vec<u8>>>,
    direct_bytes: AtomicU64,
    buffered_bytes: AtomicU64,
    fallbacks: AtomicU64,
}

impl DirectIo {
    pub fn stats(&self) -> WriteStats {
        WriteStats {
            direct_bytes: self.direct_bytes.load(Ordering::Relaxed),
            buffered_bytes: self.buffered_bytes.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
        }
    }

    fn take_buffer(&self) -> Vec<u8> {
        let reused = self.pool.lock().unwrap_or_else(|e| e.into_inner()).pop();
        reused.unwrap_or_else(|| vec![0u8; BUFFER + ALIGN])
    }

    fn give_back(&self, buffer: Vec<u8>) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < POOL_MAX {
            pool.push(buffer);
        }
    }
}

/// The direct half of a [`DataOut`]: the `O_DIRECT` descriptor and the aligned buffer
/// holding the bytes from `base` (page-aligned) to the replica's end.
struct Direct {
    file: File,
    /// Over-allocated by [`ALIGN`]; the aligned region starts at `start`.
    storage: Vec<u8>,
    start: usize,
    /// File offset of the buffer's first byte.
    base: u64,
    /// Bytes held, all already in the file too (under one page between writes).
    held: usize,
    /// End of the space preallocated so far; `None` once the file system refused it.
    prealloc_end: Option<u64>,
}

/// A replica's data file open for writing; see the module doc.
pub struct DataOut {
    /// The buffered descriptor: unaligned tails, reads, truncation, sync.
    file: File,
    direct: Option<Direct>,
    io: Arc<DirectIo>,
}

impl DataOut {
    /// Wraps `file` (opened read-write at `path`); in direct mode opens `path` again
    /// with `O_DIRECT`, falling back to `file` alone if that is refused.
    pub fn open(file: File, path: &Path, mode: WriteMode, io: Arc<DirectIo>) -> DataOut {
        let direct = match mode {
            WriteMode::Buffered => None,
            WriteMode::Direct => match open_direct(path) {
                Ok(direct) => {
                    let storage = io.take_buffer();
                    let start = storage.as_ptr().align_offset(ALIGN);
                    Some(Direct {
                        file: direct,
                        storage,
                        start,
                        base: 0,
                        held: 0,
                        prealloc_end: Some(0),
                    })
                }
                Err(_) => {
                    io.fallbacks.fetch_add(1, Ordering::Relaxed);
                    None
                }
            },
        };
        let mut out = DataOut { file, direct, io };
        // Resynchronise from the file's current length (non-zero for appends).
        if let Ok(meta) = out.file.metadata() {
            out.reset(meta.len());
        }
        out
    }

    /// Writes `data` at `offset`. Sequential writes keep the buffer; any other offset
    /// reloads its partial page from the file first.
    pub fn write_all_at(&mut self, data: &[u8], offset: u64) -> io::Result<()> {
        let Some(d) = self.direct.as_ref() else {
            return self.buffered_write(data, offset);
        };
        if offset != d.base + d.held as u64 {
            self.load_partial_page(offset)?;
        }
        let mut rest = data;
        while !rest.is_empty() {
            let Some(d) = self.direct.as_mut() else {
                let at = offset + (data.len() - rest.len()) as u64;
                return self.buffered_write(rest, at);
            };
            let n = rest.len().min(BUFFER - d.held);
            let at = d.base + d.held as u64;
            d.storage[d.start + d.held..d.start + d.held + n].copy_from_slice(&rest[..n]);
            d.held += n;
            rest = &rest[n..];
            if let Err(e) = self.flush_buffer(at) {
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(e);
                }
                // The file system takes O_DIRECT opens but not the writes: everything
                // from `at` on goes through the page cache.
                self.fall_back();
                let from = (data.len() - rest.len() - n) as u64;
                return self.buffered_write(&data[from as usize..], offset + from);
            }
        }
        Ok(())
    }

    /// Writes the buffer's aligned part with `O_DIRECT` and its tail (the bytes from
    /// `new_from` on that are not in whole pages) buffered; keeps the tail's page.
    fn flush_buffer(&mut self, new_from: u64) -> io::Result<()> {
        let d = self.direct.as_mut().expect("direct mode");
        let aligned = d.held / ALIGN * ALIGN;
        let end = d.base + d.held as u64;
        if let Some(pre) = d.prealloc_end {
            if end > pre {
                let want = end.div_ceil(PREALLOC_STEP) * PREALLOC_STEP;
                d.prealloc_end = rustix::fs::fallocate(
                    &d.file,
                    rustix::fs::FallocateFlags::KEEP_SIZE,
                    pre,
                    want - pre,
                )
                .ok()
                .map(|()| want);
            }
        }
        if aligned > 0 {
            if refused(Refuse::Write) {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            d.file
                .write_all_at(&d.storage[d.start..d.start + aligned], d.base)?;
            self.io
                .direct_bytes
                .fetch_add(aligned as u64, Ordering::Relaxed);
            d.storage
                .copy_within(d.start + aligned..d.start + d.held, d.start);
            d.base += aligned as u64;
            d.held -= aligned;
        }
        let tail_from = new_from.max(d.base);
        if end > tail_from {
            let skip = (tail_from - d.base) as usize;
            let tail = &d.storage[d.start + skip..d.start + d.held];
            self.file.write_all_at(tail, tail_from)?;
            self.io
                .buffered_bytes
                .fetch_add(tail.len() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    fn buffered_write(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(data, offset)?;
        self.io
            .buffered_bytes
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn fall_back(&mut self) {
        if let Some(d) = self.direct.take() {
            self.io.give_back(d.storage);
            self.io.fallbacks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Points the buffer at the page holding `offset`, loading that page's bytes before
    /// `offset` from the file.
    fn load_partial_page(&mut self, offset: u64) -> io::Result<()> {
        let Some(d) = self.direct.as_mut() else {
            return Ok(());
        };
        let base = offset - offset % ALIGN as u64;
        let held = (offset - base) as usize;
        self.file
            .read_exact_at(&mut d.storage[d.start..d.start + held], base)?;
        d.base = base;
        d.held = held;
        Ok(())
    }

    /// Forgets the buffer after the file changed length underneath it.
    fn reset(&mut self, len: u64) {
        if let Some(d) = self.direct.as_mut() {
            // An impossible position: the next write reloads its partial page.
            d.base = len.wrapping_add(1);
            d.held = 0;
        }
    }

    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    /// Cuts the file to `len` bytes.
    pub fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)?;
        self.reset(len);
        Ok(())
    }

    /// Data on disk: direct writes bypass the page cache but not the device's cache.
    pub fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Gives back the preallocated space past `len`, the replica's final length
    /// (truncating to the same length frees blocks past the end on ext4 and xfs).
    pub fn finish(&mut self, len: u64) -> io::Result<()> {
        if self
            .direct
            .as_ref()
            .is_some_and(|d| d.prealloc_end.is_some())
        {
            self.set_len(len)?;
        }
        Ok(())
    }
}

fn open_direct(path: &Path) -> io::Result<File> {
    if refused(Refuse::Open) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

/// Where a test makes the file system refuse `O_DIRECT` (no local file system this
/// kernel mounts refuses it: tmpfs takes it since Linux 6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refuse {
    Open,
    Write,
}

#[cfg(test)]
thread_local! {
    static REFUSE: std::cell::Cell<Option<Refuse>> = const { std::cell::Cell::new(None) };
}

/// Makes `O_DIRECT` refused as `refuse` says on this thread (tests).
#[cfg(test)]
pub fn refuse_direct(refuse: Option<Refuse>) {
    REFUSE.with(|r| r.set(refuse));
}

fn refused(what: Refuse) -> bool {
    #[cfg(test)]
    return REFUSE.with(|r| r.get()) == Some(what);
    #[cfg(not(test))]
    {
        let _ = what;
        false
    }
}

impl Drop for DataOut {
    fn drop(&mut self) {
        if let Some(d) = self.direct.take() {
            self.io.give_back(d.storage);
        }
    }
}
