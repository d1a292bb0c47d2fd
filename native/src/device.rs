//! [`FileDevice`]: the real block device under the core, over an image file or a block
//! device.
//!
//! What it does, and why:
//! - Writes are *submitted*: the caller's buffer is copied into a pending queue and
//!   nothing reaches the host yet. A *drain* hands the queue to the host — sorted by
//!   address, adjacent blocks merged into one `pwritev` (sequential log appends become
//!   large writes), big drains split over `writers` threads — and completes every write
//!   in it. Drains run when the core waits (`wait_writes`), in the group-commit flusher
//!   before its flush (outside the filesystem's lock), before a discard or a PREFLUSH, and
//!   when the queue reaches `DRAIN_AT_WRITES` (bounding memory). So an fsync's few writes
//!   go out from the thread that waits for them, with no hand-off to another thread, and
//!   writes complete in any order within a drain, as on real hardware. The core must
//!   therefore wait (`wait_writes`) before the flush that makes a chain durable — exactly
//!   the ordering the crash model is about.
//! - Drains are serialized and each takes the whole queue in submission order, keeping
//!   only the newest write of a block, so a newer write of a block can never be overtaken
//!   by an older one.
//! - Reads see the most recently submitted data: submitted blocks are kept in a map until
//!   their write has returned successfully (a failed one stays there for good), and a read
//!   looks there first.
//! - `flush` is `fdatasync`; a FUA write is `pwritev2(RWF_DSYNC)` (falling back to
//!   `pwrite` + `fdatasync`); `PREFLUSH` flushes before the write is queued.
//! - A flush is skipped when it would cover nothing new: when no write (or discard) has
//!   reached the host since the last successful flush *began*. Each drain that writes
//!   bumps a completion epoch after its writes returned; a flush notes the epoch before
//!   its `fdatasync` starts (what it covers: every write complete by then) and records
//!   it once it succeeded. A later flush that finds the epoch unchanged has nothing to
//!   make durable — so SQLite's fsync right after an atomic COMMIT, which flushed, costs
//!   no second flush. (Noting the epoch after the `fdatasync` instead would wrongly count
//!   a write that completed *during* it as covered: `mutant-flush-epoch-after-flush`.)
//! - The first write or flush error is latched: every later write, wait and flush fails
//!   with it, so a lost write can never be followed by a flush that claims success
//!   (the "fsyncgate" lesson).
//! - Discard is `BLKDISCARD` on block devices and a punched hole on image files; it is
//!   advisory, so "not supported" is not an error.
//! - Opening is exclusive: `O_EXCL` on block devices (the kernel refuses a device that is
//!   mounted or opened exclusively), `flock` on image files.

use crate::error::{CliError, Result};
use rollfs_core::{Block, BlockDevice, IoError, WriteFlags, BLOCK_SIZE};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const BLOCK: u64 = BLOCK_SIZE as u64;
/// Pending writes that make a submission drain the queue itself: bounds the daemon's memory
/// (each pending write holds a copy of its block) whatever the core submits at once — a
/// checkpoint of a full dirty cache, cleaning — and makes long appends 1 MiB writes.
pub const DRAIN_AT_WRITES: usize = 256;
/// Blocks in one `pwritev` at most (IOV_MAX is 1024).
const RUN_BLOCKS_MAX: usize = 256;
/// A drain of at least this many blocks is split over the `writers` threads.
const PARALLEL_DRAIN_BLOCKS: usize = 128;
/// `BLKGETSIZE64` = `_IOR(0x12, 114, size_t)`.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
/// `BLKDISCARD` = `_IO(0x12, 119)`.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// A 4 KiB block aligned for `O_DIRECT`.
#[repr(C, align(4096))]
pub struct AlignedBlock(pub Block);

impl AlignedBlock {
    fn boxed_from(data: &Block) -> Box<AlignedBlock> {
        let mut b = Box::new(AlignedBlock([0u8; BLOCK_SIZE]));
        b.0.copy_from_slice(data);
        b
    }
}

/// What the target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DeviceKind {
    ImageFile,
    BlockDevice,
}

/// How to open a target.
#[derive(Debug, Clone, Copy)]
pub struct DeviceOptions {
    pub write: bool,
    /// Bypass the host page cache (`O_DIRECT`).
    pub direct: bool,
    /// Exclusive (read-write) or shared (read-only) lock; fail if someone else holds it.
    pub lock: bool,
    /// Threads a large drain is split over, i.e. how many writes can be in flight at once.
    pub writers: usize,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions { write: true, direct: false, lock: true, writers: 4 }
    }
}

/// Counters of what reached the host, for statistics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceCounters {
    pub reads: u64,
    pub writes: u64,
    pub fua_writes: u64,
    pub flushes: u64,
    pub discards: u64,
}

/// No successful flush yet: the first flush is never skipped.
const NO_FLUSH_EPOCH: u64 = u64::MAX;

struct Job {
    addr: u64,
    seq: u64,
    data: Arc<AlignedBlock>,
    fua: bool,
}

#[derive(Default)]
struct State {
    /// Block address → (submission sequence, data) of the newest write not yet completed.
    inflight: HashMap<u64, (u64, Arc<AlignedBlock>)>,
    /// Submitted writes not yet handed to the host, in submission order.
    pending: Vec<Job>,
    /// The first write/flush error; latched forever.
    error: Option<IoError>,
}

/// What the host did with the writes, told to an observer (the write recorder,
/// native/src/record.rs): which writes reached the host, and when a host flush began and
/// ended. Called from whichever thread drains or flushes: `completed_upto` under the
/// drain lock (so a later drain's report, and a flush begun after this drain returned,
/// come after it: the observer's order is the device's), the flush calls under the flush
/// lock. The observer must not call back into the device.
pub trait IoObserver: Send + Sync {
    /// Every write with a submission number up to `seq` (the device's count of accepted
    /// writes: the first is 1) has reached the host.
    fn completed_upto(&self, seq: u64);
    /// A host flush begins: once done, it covers the writes reported complete before it.
    /// Returns its id.
    fn flush_begins(&self) -> u64;
    /// The flush `id` returned successfully.
    fn flush_done(&self, id: u64);
    /// The flush `id` failed: it covers nothing.
    fn flush_failed(&self, id: u64);
}

struct Shared {
    file: Arc<File>,
    observer: OnceLock<Arc<dyn IoObserver>>,
    state: Mutex<State>,
    /// Held for a whole drain: drains run one at a time, each over a prefix of the
    /// submission order, so writes of one block reach the host in submission order.
    drain: Mutex<()>,
    /// Held across every call that can report the host's writeback errors (`fdatasync`,
    /// an `RWF_DSYNC` write) together with the latching of its result: the kernel reports
    /// such an error to one caller only, so without it a flush in another thread could
    /// succeed after the error was consumed and before it was latched.
    flush_lock: Mutex<()>,
    writers: usize,
    /// Bumped by [`BlockDevice::reuse_fence`] (a checkpoint made freed blocks reusable)
    /// before any of them can be written or discarded: a [`DeviceReader`] that read
    /// blocks outside the filesystem's lock trusts them only if it did not move.
    reuse_fence: AtomicU64,
    /// Bumped after every drain that wrote something and every discard, once the host has
    /// them (see the module header: flushes that would cover nothing new are skipped).
    completed_epoch: AtomicU64,
    /// The completion epoch noted when the last successful flush began
    /// ([`NO_FLUSH_EPOCH`] before the first). Written under `flush_lock`.
    flushed_epoch: AtomicU64,
    /// Host flushes (`fdatasync`) issued, and flush requests skipped because they would
    /// have covered nothing new.
    host_flushes: AtomicU64,
    flushes_skipped: AtomicU64,
    /// Runs of adjacent blocks written to the host (one `pwritev`, or one `pwrite` for a
    /// lone block): the device ranges, counted per fsync by the benchmarks.
    host_write_runs: AtomicU64,
    /// The flush-skipping mutants chosen for this process (test-only, crate::mutant); the
    /// device's own tests set them directly to show their two-thread checks catch them.
    mutants: FlushMutants,
    /// The device's length in blocks, as [`FileDevice::block_count`]: grown by an online
    /// grow (`BlockDevice::refresh_size`), read by [`DeviceReader`]s outside the lock.
    block_count: AtomicU64,
}

/// See [`Shared::mutants`].
#[derive(Debug, Clone, Copy, Default)]
struct FlushMutants {
    skip_before_drain: bool,
    epoch_after_flush: bool,
}

impl FlushMutants {
    fn chosen() -> FlushMutants {
        FlushMutants {
            skip_before_drain: crate::mutant::active("mutant-flush-skip-before-drain"),
            epoch_after_flush: crate::mutant::active("mutant-flush-epoch-after-flush"),
        }
    }
}

/// What [`FlushHandle::flush_counts`] reports: host flushes issued, flushes skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlushCounts {
    pub issued: u64,
    pub skipped: u64,
    /// Write runs (device ranges) issued to the host.
    pub write_runs: u64,
}

/// Extends an image file to `want_bytes` (a grow). A file written out — every byte of it
/// allocated, as mkfs leaves an image unless `--sparse` — is extended allocated
/// (`fallocate`), so that a host without room refuses the grow now (ENOSPC) instead of
/// failing a later write of the filesystem, which would shut it down read-only. A sparse
/// file stays sparse (`set_len`), as does any file where the host cannot allocate ahead
/// (EOPNOTSUPP).
pub fn extend_image_file(file: &File, want_bytes: u64) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    let len = meta.len();
    if len >= want_bytes {
        return Ok(());
    }
    let written_out = meta.blocks() * 512 >= len;
    if written_out {
        let (off, add) = (len as libc::off_t, (want_bytes - len) as libc::off_t);
        // SAFETY: fallocate on an open descriptor with a mode of 0 and a valid range.
        if unsafe { libc::fallocate(file.as_raw_fd(), 0, off, add) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e);
        }
    }
    file.set_len(want_bytes)
}

pub struct FileDevice {
    path: PathBuf,
    file: Arc<File>,
    kind: DeviceKind,
    block_count: u64,
    writable: bool,
    shared: Arc<Shared>,
    seq: u64,
    counters: DeviceCounters,
    /// Opened with `O_DIRECT`: reads need an aligned buffer of their own.
    direct: bool,
}

impl std::fmt::Debug for FileDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileDevice")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("block_count", &self.block_count)
            .finish()
    }
}

/// Size in bytes of an open block device.
fn blockdev_size(file: &File) -> io::Result<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is valid.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size as *mut u64) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Takes a non-blocking `flock` on an image file.
fn lock_file(file: &File, exclusive: bool) -> io::Result<()> {
    let op = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH } | libc::LOCK_NB;
    // SAFETY: plain syscall on a valid fd.
    if unsafe { libc::flock(file.as_raw_fd(), op) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl FileDevice {
    /// Opens an image file or block device.
    pub fn open(path: &Path, opts: DeviceOptions) -> Result<FileDevice> {
        let meta = std::fs::metadata(path).map_err(|e| CliError::io(path, "open", e))?;
        let ft = meta.file_type();
        let kind = if ft.is_block_device() {
            DeviceKind::BlockDevice
        } else if ft.is_file() {
            DeviceKind::ImageFile
        } else {
            return Err(CliError::Failed {
                path: path.to_owned(),
                what: "cannot open",
                detail: "not a regular file or block device".into(),
            });
        };
        let mut flags = 0;
        if opts.direct {
            flags |= libc::O_DIRECT;
        }
        if opts.lock && kind == DeviceKind::BlockDevice {
            // O_EXCL without O_CREAT on a block device: an exclusive open that the kernel
            // refuses (EBUSY) while the device is mounted or exclusively open elsewhere.
            flags |= libc::O_EXCL;
        }
        let file =
            OpenOptions::new().read(true).write(opts.write).custom_flags(flags).open(path).map_err(|e| {
                match e.raw_os_error() {
                    Some(libc::EBUSY) => CliError::Busy {
                        path: path.to_owned(),
                        detail: "the device is mounted or in use by another program".into(),
                    },
                    Some(libc::EINVAL) if opts.direct => CliError::Failed {
                        path: path.to_owned(),
                        what: "cannot open with O_DIRECT",
                        detail: "the host filesystem does not support direct I/O".into(),
                    },
                    _ => CliError::io(path, if opts.write { "open for writing" } else { "open" }, e),
                }
            })?;
        if opts.lock && kind == DeviceKind::ImageFile {
            lock_file(&file, opts.write).map_err(|e| {
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    CliError::Busy {
                        path: path.to_owned(),
                        detail: "it is already mounted or open in another rollfs process".into(),
                    }
                } else {
                    CliError::io(path, "lock", e)
                }
            })?;
        }
        let bytes = match kind {
            DeviceKind::BlockDevice => {
                blockdev_size(&file).map_err(|e| CliError::io(path, "read the device size", e))?
            }
            DeviceKind::ImageFile => meta.len(),
        };
        Ok(FileDevice::from_file(file, path, kind, bytes / BLOCK, opts))
    }

    /// Wraps an already open file (tests use `/dev/full` to provoke write errors).
    pub fn from_file(file: File, path: &Path, kind: DeviceKind, block_count: u64, opts: DeviceOptions) -> FileDevice {
        let file = Arc::new(file);
        let shared = Arc::new(Shared {
            file: file.clone(),
            observer: OnceLock::new(),
            state: Mutex::new(State::default()),
            drain: Mutex::new(()),
            flush_lock: Mutex::new(()),
            writers: opts.writers.max(1),
            reuse_fence: AtomicU64::new(0),
            completed_epoch: AtomicU64::new(0),
            flushed_epoch: AtomicU64::new(NO_FLUSH_EPOCH),
            host_flushes: AtomicU64::new(0),
            flushes_skipped: AtomicU64::new(0),
            host_write_runs: AtomicU64::new(0),
            mutants: FlushMutants::chosen(),
            block_count: AtomicU64::new(block_count),
        });
        FileDevice {
            path: path.to_owned(),
            file,
            kind,
            block_count,
            writable: opts.write,
            shared,
            seq: 0,
            counters: DeviceCounters::default(),
            direct: opts.direct,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn kind(&self) -> DeviceKind {
        self.kind
    }
    pub fn counters(&self) -> DeviceCounters {
        self.counters
    }
    /// The underlying file, for snapshotting the image at the start of a recording.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// A handle that waits for in-flight writes and flushes without `&mut` access to the
    /// device, so a driver can flush outside the filesystem's lock (group commit).
    /// Tells `o` what the host does with this device's writes from now on (once; false if
    /// an observer was set already).
    pub fn observe(&self, o: Arc<dyn IoObserver>) -> bool {
        self.shared.observer.set(o).is_ok()
    }

    pub fn flush_handle(&self) -> FlushHandle {
        FlushHandle { shared: self.shared.clone(), writable: self.writable }
    }

    /// A handle that reads blocks without `&mut` access to the device, so a driver can
    /// read file data outside the filesystem's lock (see [`DeviceReader`]). `None` for a
    /// device opened with `O_DIRECT` (its reads need aligned buffers of their own).
    pub fn reader(&self) -> Option<DeviceReader> {
        (!self.direct).then(|| DeviceReader { file: self.file.clone(), shared: self.shared.clone() })
    }

    fn latched(&self) -> Option<IoError> {
        self.shared.latched()
    }

    fn do_flush(&mut self) -> Result<(), IoError> {
        if let Some(e) = self.latched() {
            return Err(e);
        }
        self.counters.flushes += 1;
        if !self.writable {
            return Ok(());
        }
        self.shared.sync()
    }
}

/// Reads blocks of a [`FileDevice`] from another thread than the one that owns it.
///
/// Why it is safe to use outside the filesystem's lock: the driver asks the core, under
/// the lock, which device blocks hold the data (a read plan) and notes [`Self::fence`];
/// it then reads them here and keeps the result only if the fence has not moved. The
/// core never overwrites a block that a pointer references (a log-structured filesystem
/// writes new blocks elsewhere); a block it frees becomes writable again only when a
/// checkpoint commits, and the core calls [`BlockDevice::reuse_fence`] at that moment,
/// before the block can be reallocated, written or discarded. So while the fence has not
/// moved, every block of the plan still holds what it held when the plan was made (in the
/// file, or in the in-flight table if its write has not landed yet).
pub struct DeviceReader {
    file: Arc<File>,
    shared: Arc<Shared>,
}

impl DeviceReader {
    /// The reuse fence (see the type's documentation).
    pub fn fence(&self) -> u64 {
        self.shared.reuse_fence.load(Ordering::SeqCst)
    }

    /// Reads `blocks.len()` consecutive blocks from `addr`: the newest submitted contents
    /// of each, as [`BlockDevice::read`].
    pub fn read_run(&self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        read_run_shared(&self.file, &self.shared, self.shared.block_count.load(Ordering::SeqCst), addr, blocks)
    }

    /// Completes a read the core planned (`Filesystem::read_planned`) while the fence was
    /// `fence`: reads every run into `buf` and verifies it. True when `buf[..plan.len]` is
    /// the read's result; false when it must be read again under the lock — a run failed
    /// its read or its checksum, or the fence moved (a block may have been reused).
    pub fn complete(&self, plan: &rollfs_core::ReadPlan, fence: u64, buf: &mut [u8]) -> bool {
        let runs_ok = plan.runs.iter().all(|run| {
            // A fence already moved: stop reading what will be read again anyway.
            if self.fence() != fence {
                return false;
            }
            let Some(bytes) = buf.get_mut(run.buf_offset..run.buf_offset + run.blocks * BLOCK_SIZE) else {
                return false;
            };
            let (blocks, _) = bytes.as_chunks_mut::<BLOCK_SIZE>();
            self.read_run(run.addr, blocks).is_ok() && run.verify(blocks)
        });
        // After the reads: a fence that moved before any of them landed is seen here.
        runs_ok && self.fence() == fence
    }
}

/// Fills `buf` from `offset` of the file, retrying short reads; past the end of a short
/// image the rest reads as zeros (as never-written blocks do).
fn read_at_or_zeros(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                buf[done..].fill(0);
                break;
            }
            Ok(k) => done += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A buffered read of adjacent blocks straight into `blocks`, in-flight writes overlaid.
fn read_run_shared(
    file: &File,
    shared: &Shared,
    block_count: u64,
    addr: u64,
    blocks: &mut [Block],
) -> Result<(), IoError> {
    let err = IoError { block: addr, op: "read" };
    if addr.checked_add(blocks.len() as u64).is_none_or(|end| end > block_count) {
        return Err(err);
    }
    // The in-flight writes of the run, taken *before* the file is read: a block not among
    // them had its write reach the file already (and no newer write of it can be
    // submitted: the owner holds `&mut` access, or for a `DeviceReader` the reuse fence
    // guards it), so the file read returns its newest contents; a block among them is
    // taken from the snapshot, its newest submitted write even if that lands meanwhile.
    let newer: Vec<(usize, Arc<AlignedBlock>)> = {
        let st = shared.state.lock().unwrap();
        if st.inflight.is_empty() {
            Vec::new()
        } else {
            (0..blocks.len()).filter_map(|i| st.inflight.get(&(addr + i as u64)).map(|(_, d)| (i, d.clone()))).collect()
        }
    };
    read_at_or_zeros(file, blocks.as_flattened_mut(), addr * BLOCK).map_err(|_| err)?;
    for (i, data) in newer {
        blocks[i].copy_from_slice(&data.0);
    }
    Ok(())
}

/// See [`FileDevice::flush_handle`]. Waiting covers every write submitted before the call
/// (and possibly later ones), so one wait-and-flush serves every fsync that had submitted
/// its batch before it began.
#[derive(Clone)]
pub struct FlushHandle {
    shared: Arc<Shared>,
    writable: bool,
}

impl FlushHandle {
    pub fn wait_and_flush(&self) -> Result<(), IoError> {
        if self.shared.mutants.skip_before_drain {
            // Broken on purpose (test-only): whether the flush covers anything new is
            // decided before the fsync's writes were drained, so it is skipped although
            // they then reach the host unflushed.
            let skip = self.shared.nothing_new_to_flush();
            self.drain()?;
            return if skip { Ok(()) } else { self.sync() };
        }
        if !crate::mutant::active("mutant-flush-without-drain") {
            self.drain()?;
        }
        // (The mutant, test-only: group commit flushes without waiting for the fsync's
        // writes, which may then still be on their way to the host.)
        self.sync()
    }

    /// Host flushes issued and skipped so far (by every handle of the device).
    pub fn flush_counts(&self) -> FlushCounts {
        self.shared.flush_counts()
    }

    /// Waits until every write submitted before the call has reached the host.
    pub fn drain(&self) -> Result<(), IoError> {
        self.shared.drain()
    }

    /// Flushes the host's cache (`fdatasync`): covers the writes that had reached it.
    pub fn sync(&self) -> Result<(), IoError> {
        if !self.writable {
            return Ok(());
        }
        self.shared.sync()
    }
}

impl Shared {
    fn latched(&self) -> Option<IoError> {
        self.state.lock().unwrap().error
    }

    fn latch(&self, e: IoError) -> IoError {
        *self.state.lock().unwrap().error.get_or_insert(e)
    }

    /// Whether a flush now would cover nothing new: no write or discard reached the host
    /// since the last successful flush began.
    fn nothing_new_to_flush(&self) -> bool {
        let flushed = self.flushed_epoch.load(Ordering::SeqCst);
        flushed != NO_FLUSH_EPOCH && flushed == self.completed_epoch.load(Ordering::SeqCst)
    }

    /// Counts a write or discard that reached the host (after it returned).
    fn completed(&self) {
        self.completed_epoch.fetch_add(1, Ordering::SeqCst);
    }

    fn flush_counts(&self) -> FlushCounts {
        FlushCounts {
            issued: self.host_flushes.load(Ordering::Relaxed),
            skipped: self.flushes_skipped.load(Ordering::Relaxed),
            write_runs: self.host_write_runs.load(Ordering::Relaxed),
        }
    }

    /// `fdatasync` under the flush lock: fails with the latched error if there is one,
    /// before or after it (a write that failed meanwhile is not covered by this flush).
    /// Skipped when it would cover nothing new (module header).
    fn sync(&self) -> Result<(), IoError> {
        let _one_reporter = self.flush_lock.lock().unwrap();
        if let Some(e) = self.latched() {
            return Err(e);
        }
        // What this flush covers: every write complete before it begins.
        let covers = self.completed_epoch.load(Ordering::SeqCst);
        if self.flushed_epoch.load(Ordering::SeqCst) == covers {
            self.flushes_skipped.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        self.host_flushes.fetch_add(1, Ordering::Relaxed);
        let observed = self.observer.get().map(|o| (o, o.flush_begins()));
        if self.file.sync_data().is_err() {
            if let Some((o, id)) = observed {
                o.flush_failed(id);
            }
            return Err(self.latch(IoError { block: IoError::FLUSH_BLOCK, op: "flush" }));
        }
        if let Some((o, id)) = observed {
            o.flush_done(id);
        }
        if let Some(e) = self.latched() {
            return Err(e);
        }
        let recorded = if self.mutants.epoch_after_flush {
            // Broken on purpose (test-only): a write that completed while the fdatasync
            // ran counts as covered by it.
            self.completed_epoch.load(Ordering::SeqCst)
        } else {
            covers
        };
        self.flushed_epoch.store(recorded, Ordering::SeqCst);
        Ok(())
    }

    /// Completes every write submitted so far (see the module header): takes the pending
    /// queue, writes the newest version of each block — adjacent blocks in one `pwritev`,
    /// FUA writes each with `RWF_DSYNC` — and returns the latched error, if any. A failed
    /// block stays in the in-flight map.
    fn drain(&self) -> Result<(), IoError> {
        let _one_at_a_time = self.drain.lock().unwrap();
        let jobs = std::mem::take(&mut self.state.lock().unwrap().pending);
        // After a failure nothing more reaches the host (the blocks stay readable from the
        // in-flight map): a later write must not look durable, above all a checkpoint
        // header over a payload that was lost.
        if let Some(e) = self.latched() {
            return Err(e);
        }
        if !jobs.is_empty() {
            // The newest write of each block (later entries supersede earlier ones). A
            // superseded FUA write promised durability on completion: its block's newest
            // write goes out FUA in its place (durable with newer data, as if both landed).
            let mut newest: HashMap<u64, (usize, bool)> = HashMap::with_capacity(jobs.len());
            for (i, j) in jobs.iter().enumerate() {
                let fua = j.fua || newest.get(&j.addr).is_some_and(|&(_, f)| f);
                newest.insert(j.addr, (i, fua));
            }
            let mut order: Vec<(&Job, bool)> = newest.values().map(|&(i, fua)| (&jobs[i], fua)).collect();
            order.sort_unstable_by_key(|(j, _)| j.addr);
            let fua: Vec<&Job> = order.iter().filter(|(_, f)| *f).map(|(j, _)| *j).collect();
            let plain: Vec<&Job> = order.iter().filter(|(_, f)| !*f).map(|(j, _)| *j).collect();
            let runs = runs_of(&plain);
            let failed = self.write_runs(&runs);
            self.settle(&runs, &failed);
            // FUA writes last, each under the flush lock (an RWF_DSYNC write reports the
            // host's writeback errors like a flush), and none after a failure.
            for j in fua {
                let run = vec![j];
                let _one_reporter = self.flush_lock.lock().unwrap();
                let failed_at = if self.latched().is_some() {
                    Some(j.addr)
                } else {
                    // FUA also for a plain write standing in for a superseded FUA one.
                    write_block(&self.file, j.addr, &j.data.0, true).err().map(|_| j.addr)
                };
                self.settle(std::slice::from_ref(&run), &[failed_at]);
            }
            // Every write taken (a prefix of the submission order; earlier prefixes were
            // drained before, one drain at a time) reached the host, unless one failed.
            if let (Some(o), None, Some(last)) = (self.observer.get(), self.latched(), jobs.last()) {
                o.completed_upto(last.seq);
            }
            // A flush that begins from now on must cover these writes. Bumped after the
            // observer heard of them: a flush in another thread that notes the new epoch
            // (and so lets a later fsync skip its own) must begin, in the write log, after
            // their completion, or the crash model would count them unflushed.
            self.completed();
        }
        self.latched().map_or(Ok(()), Err)
    }

    /// Records the outcome of written runs: completed blocks leave the in-flight map (unless
    /// a newer write of them was submitted meanwhile); the first failure is latched.
    fn settle(&self, runs: &[Vec<&Job>], failed: &[Option<u64>]) {
        let mut st = self.state.lock().unwrap();
        for (run, failed_at) in runs.iter().zip(failed) {
            match failed_at {
                None => {
                    for j in run {
                        if st.inflight.get(&j.addr).is_some_and(|(seq, _)| *seq == j.seq) {
                            st.inflight.remove(&j.addr);
                        }
                    }
                }
                Some(addr) => {
                    st.error.get_or_insert(IoError { block: *addr, op: "write" });
                }
            }
        }
    }

    /// Writes each run; returns, per run, the address of its first block if it failed.
    fn write_runs(&self, runs: &[Vec<&Job>]) -> Vec<Option<u64>> {
        self.host_write_runs.fetch_add(runs.len() as u64, Ordering::Relaxed);
        let blocks: usize = runs.iter().map(|r| r.len()).sum();
        if self.writers < 2 || blocks < PARALLEL_DRAIN_BLOCKS || runs.len() < 2 {
            return runs.iter().map(|r| write_run(&self.file, r)).collect();
        }
        // Split the runs over the writers, about equal in blocks, in address order.
        let per = blocks.div_ceil(self.writers);
        let mut groups: Vec<&[Vec<&Job>]> = Vec::new();
        let (mut start, mut acc) = (0, 0);
        for (i, r) in runs.iter().enumerate() {
            acc += r.len();
            if acc >= per || i + 1 == runs.len() {
                groups.push(&runs[start..=i]);
                start = i + 1;
                acc = 0;
            }
        }
        let file = &self.file;
        let write_group = move |g: &[Vec<&Job>]| g.iter().map(|r| write_run(file, r)).collect::<Vec<_>>();
        std::thread::scope(|sc| {
            // A thread that cannot be created is no error: its group is written here.
            let handles: Vec<_> = groups
                .iter()
                .map(|&g| (g, std::thread::Builder::new().spawn_scoped(sc, move || write_group(g)).ok()))
                .collect();
            handles
                .into_iter()
                .flat_map(|(g, h)| match h {
                    // A writer that panicked wrote nothing we can vouch for: its runs failed.
                    Some(h) => h.join().unwrap_or_else(|_| g.iter().map(|r| Some(r[0].addr)).collect()),
                    None => write_group(g),
                })
                .collect()
        })
    }
}

/// Splits jobs sorted by address into runs of adjacent blocks (at most `RUN_BLOCKS_MAX`);
/// a FUA write is a run of its own.
fn runs_of<'a>(sorted: &[&'a Job]) -> Vec<Vec<&'a Job>> {
    let mut runs: Vec<Vec<&Job>> = Vec::new();
    for &j in sorted {
        match runs.last_mut() {
            Some(r)
                if !j.fua
                    && !r[0].fua
                    && r.len() < RUN_BLOCKS_MAX
                    && r.last().is_some_and(|l| l.addr + 1 == j.addr) =>
            {
                r.push(j)
            }
            _ => runs.push(vec![j]),
        }
    }
    runs
}

/// Writes one run of adjacent blocks; `Some(addr)` of its first block if it failed.
fn write_run(file: &File, run: &[&Job]) -> Option<u64> {
    let first = run[0].addr;
    let ok = if run.len() == 1 {
        write_block(file, first, &run[0].data.0, run[0].fua).is_ok()
    } else {
        let iov: Vec<libc::iovec> =
            run.iter().map(|j| libc::iovec { iov_base: j.data.0.as_ptr() as *mut _, iov_len: BLOCK_SIZE }).collect();
        let want = run.len() * BLOCK_SIZE;
        // SAFETY: the iovecs point at live, aligned 4 KiB buffers owned by `run`, and the
        // count is at most RUN_BLOCKS_MAX (below IOV_MAX).
        let n = unsafe { libc::pwritev(file.as_raw_fd(), iov.as_ptr(), iov.len() as i32, (first * BLOCK) as i64) };
        if n == want as isize {
            true
        } else {
            // A short or failed vector write: finish block by block from the first block
            // not fully written (each reports its own error).
            let done = if n > 0 { n as usize / BLOCK_SIZE } else { 0 };
            run[done..].iter().all(|j| write_block(file, j.addr, &j.data.0, false).is_ok())
        }
    };
    (!ok).then_some(first)
}

fn write_block(file: &File, addr: u64, data: &Block, fua: bool) -> io::Result<()> {
    let off = addr * BLOCK;
    if fua {
        let iov = libc::iovec { iov_base: data.as_ptr() as *mut _, iov_len: BLOCK_SIZE };
        // SAFETY: one iovec over a live 4 KiB buffer.
        let n = unsafe { libc::pwritev2(file.as_raw_fd(), &iov, 1, off as i64, libc::RWF_DSYNC) };
        if n == BLOCK_SIZE as isize {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if n >= 0 || !matches!(err.raw_os_error(), Some(libc::ENOSYS | libc::EOPNOTSUPP)) {
            return Err(if n >= 0 { io::Error::other("short write") } else { err });
        }
        // The kernel has no per-write DSYNC: emulate FUA.
        file.write_all_at(data, off)?;
        return file.sync_data();
    }
    file.write_all_at(data, off)
}

impl BlockDevice for FileDevice {
    fn block_count(&self) -> u64 {
        self.block_count
    }

    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        let err = IoError { block: addr, op: "read" };
        if addr >= self.block_count {
            return Err(err);
        }
        self.counters.reads += 1;
        {
            // No newer write can be submitted while we hold `&mut self`; a write that
            // leaves the map has already reached the file.
            let st = self.shared.state.lock().unwrap();
            if let Some((_, data)) = st.inflight.get(&addr) {
                buf.copy_from_slice(&data.0);
                return Ok(());
            }
        }
        // O_DIRECT reads into an aligned bounce buffer; a buffered read goes straight to
        // the caller's block.
        let mut aligned = AlignedBlock([0u8; BLOCK_SIZE]);
        let target: &mut Block = if self.direct { &mut aligned.0 } else { buf };
        read_at_or_zeros(&self.file, target, addr * BLOCK).map_err(|_| err)?;
        if self.direct {
            buf.copy_from_slice(&aligned.0);
        }
        Ok(())
    }

    fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        if blocks.len() <= 1 || self.direct {
            // O_DIRECT needs an aligned buffer, which the caller's blocks need not be.
            for (i, b) in blocks.iter_mut().enumerate() {
                self.read(addr + i as u64, b)?;
            }
            return Ok(());
        }
        self.counters.reads += blocks.len() as u64;
        read_run_shared(&self.file, &self.shared, self.block_count, addr, blocks)
    }

    fn reuse_fence(&mut self) {
        self.shared.reuse_fence.fetch_add(1, Ordering::SeqCst);
    }

    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        if addr >= self.block_count || !self.writable {
            return Err(IoError { block: addr, op: "write" });
        }
        if let Some(e) = self.latched() {
            return Err(e);
        }
        if flags.contains(WriteFlags::PREFLUSH) {
            // The flush before this write covers what was submitted before it.
            self.shared.drain()?;
            self.do_flush()?;
        }
        self.counters.writes += 1;
        let fua = flags.contains(WriteFlags::FUA);
        if fua {
            self.counters.fua_writes += 1;
        }
        self.seq += 1;
        let data: Arc<AlignedBlock> = Arc::from(AlignedBlock::boxed_from(data));
        let full = {
            let mut st = self.shared.state.lock().unwrap();
            st.inflight.insert(addr, (self.seq, data.clone()));
            st.pending.push(Job { addr, seq: self.seq, data, fua });
            st.pending.len() >= DRAIN_AT_WRITES
        };
        if full {
            // Bounded memory: hand the queue to the host now (an error is latched and
            // reported by the next wait or flush, as for any write in flight).
            let _ = self.shared.drain();
        }
        Ok(())
    }

    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.shared.drain()
    }

    fn flush(&mut self) -> Result<(), IoError> {
        self.do_flush()
    }

    /// An image file is extended to `want` blocks if it is shorter ([`extend_image_file`]:
    /// allocated when the file is written out, sparse when it is sparse); a block device's
    /// size is read again (a partition or loop device grown under the mount). Never
    /// shorter than it was.
    fn refresh_size(&mut self, want: u64) -> Result<u64, IoError> {
        let err = IoError { block: want, op: "grow the device" };
        if !self.writable {
            return Err(err);
        }
        let bytes = match self.kind {
            DeviceKind::ImageFile => {
                let len = self.file.metadata().map_err(|_| err)?.len();
                let want_bytes = want.checked_mul(BLOCK).ok_or(err)?;
                if len < want_bytes {
                    extend_image_file(&self.file, want_bytes).map_err(|e| IoError {
                        block: want,
                        op: if e.raw_os_error() == Some(libc::ENOSPC) {
                            "extend the image file: the host file system has no room for it"
                        } else {
                            "extend the image file"
                        },
                    })?;
                }
                len.max(want_bytes)
            }
            DeviceKind::BlockDevice => blockdev_size(&self.file).map_err(|_| err)?,
        };
        self.block_count = self.block_count.max(bytes / BLOCK);
        self.shared.block_count.store(self.block_count, Ordering::SeqCst);
        Ok(self.block_count)
    }

    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        let err = IoError { block: addr, op: "discard" };
        if addr.checked_add(count).is_none_or(|end| end > self.block_count) || !self.writable {
            return Err(err);
        }
        // A discard must not overtake an earlier write of the same blocks.
        self.wait_writes()?;
        self.counters.discards += 1;
        let (off, len) = (addr * BLOCK, count * BLOCK);
        let fd = self.file.as_raw_fd();
        // SAFETY: plain syscalls on a valid fd; the range array outlives the ioctl.
        let r = unsafe {
            match self.kind {
                DeviceKind::BlockDevice => {
                    let range: [u64; 2] = [off, len];
                    libc::ioctl(fd, BLKDISCARD as _, range.as_ptr())
                }
                DeviceKind::ImageFile => {
                    libc::fallocate(fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, off as i64, len as i64)
                }
            }
        };
        // A punched hole is a change of the host file that a later flush must cover.
        self.shared.completed();
        if r < 0 {
            let e = io::Error::last_os_error();
            // Discard is a hint; devices and host filesystems may not support it.
            if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOTTY | libc::EINVAL)) {
                return Err(err);
            }
        }
        Ok(())
    }
}

impl Drop for FileDevice {
    fn drop(&mut self) {
        // Let pending writes finish: they were submitted, and dropping them silently would
        // make the device lie about what it was asked to do.
        let _ = self.wait_writes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: u8) -> Block {
        [v; BLOCK_SIZE]
    }

    fn image(blocks: u64) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dev.img");
        File::create(&p).unwrap().set_len(blocks * BLOCK).unwrap();
        (dir, p)
    }

    #[test]
    fn read_after_write_sees_newest_submitted_data() {
        let (_d, p) = image(64);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        assert_eq!(dev.block_count(), 64);
        let mut buf = block(9);
        dev.read(3, &mut buf).unwrap();
        assert_eq!(buf, block(0), "never-written blocks read as zeros");
        for round in 0..50u8 {
            for a in 0..64 {
                dev.write(a, &block(round.wrapping_add(a as u8)), WriteFlags::empty()).unwrap();
            }
            for a in 0..64 {
                dev.read(a, &mut buf).unwrap();
                assert_eq!(buf, block(round.wrapping_add(a as u8)), "block {a} round {round}");
            }
        }
        dev.wait_writes().unwrap();
        dev.flush().unwrap();
        drop(dev);
        let bytes = std::fs::read(&p).unwrap();
        for a in 0..64usize {
            assert!(bytes[a * BLOCK_SIZE..(a + 1) * BLOCK_SIZE].iter().all(|&b| b == 49u8.wrapping_add(a as u8)));
        }
    }

    #[test]
    fn runs_and_the_unlocked_reader_see_newest_submitted_data() {
        let (_d, p) = image(64);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let reader = dev.reader().expect("a buffered device has a reader");
        for round in 0..40u8 {
            // Some blocks written out long ago, some still pending or in flight.
            for a in (0..64).filter(|a| (a + u64::from(round)) % 3 != 0) {
                dev.write(a, &block(round.wrapping_add(a as u8)), WriteFlags::empty()).unwrap();
            }
            if round % 4 == 0 {
                dev.wait_writes().unwrap();
            }
            let mut run = vec![[0u8; BLOCK_SIZE]; 60];
            let mut unlocked = vec![[0u8; BLOCK_SIZE]; 60];
            dev.read_run(2, &mut run).unwrap();
            reader.read_run(2, &mut unlocked).unwrap();
            for i in 0..60 {
                let mut one = block(0);
                dev.read(2 + i as u64, &mut one).unwrap();
                assert_eq!(run[i], one, "run block {i} round {round}");
                assert_eq!(unlocked[i], one, "reader block {i} round {round}");
            }
        }
        assert!(reader.read_run(60, &mut vec![[0u8; BLOCK_SIZE]; 5]).is_err(), "a run past the end");
        let f = reader.fence();
        dev.reuse_fence();
        assert_eq!(reader.fence(), f + 1);
        let direct = DeviceOptions { direct: true, ..DeviceOptions::default() };
        if let Ok(d) = FileDevice::open(&p, DeviceOptions { lock: false, ..direct }) {
            assert!(d.reader().is_none(), "O_DIRECT reads stay with the device's aligned path");
        }
    }

    /// The unlocked read's guard, deterministically: a read planned before the file was
    /// rewritten, checkpointed and its old blocks reused must not complete. On an image
    /// without data checksums, where only the fence can tell.
    #[test]
    fn an_unlocked_read_overtaken_by_a_checkpoint_and_reuse_is_refused() {
        use rollfs_core::{Credentials, Filesystem, MkfsOptions, MountOptions, Timestamp};
        let t = Timestamp::new(1_700_000_000, 0);
        let c = Credentials { uid: 0, gid: 0 };
        let (_d, p) = image(2048);
        let dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let opts = MkfsOptions { segment_blocks: 16, data_checksums: false, ..Default::default() };
        let dev = Filesystem::format(dev, &opts).unwrap();
        let mut fs = Filesystem::mount(dev, &MountOptions::default(), t).unwrap();
        let reader = fs.device().reader().unwrap();
        let a = fs.create(1, b"a", 0o644, c, t).unwrap().ino;
        let old = vec![0xa1u8; 32 * BLOCK_SIZE];
        fs.write(a, 0, &old, t).unwrap();
        fs.sync(t).unwrap();

        let mut buf = vec![0u8; old.len()];
        let fence = reader.fence();
        let plan = fs.read_planned(a, 0, &mut buf).unwrap();
        assert!(!plan.runs.is_empty(), "the blocks are on the device");
        // The reader is descheduled; meanwhile the file is rewritten, checkpointed, and
        // the device filled and emptied until the freed blocks are written again.
        fs.write(a, 0, &vec![0xb2u8; old.len()], t).unwrap();
        fs.sync(t).unwrap();
        for round in 0..4u8 {
            let name = [b'f', b'0' + round];
            let f = fs.create(1, &name, 0o644, c, t).unwrap().ino;
            fs.write(f, 0, &vec![0xc0 | round; 1200 * BLOCK_SIZE], t).unwrap();
            fs.sync(t).unwrap();
            fs.unlink(1, &name, t).unwrap();
            fs.sync(t).unwrap();
        }
        fs.device_mut().wait_writes().unwrap();
        let mut raw = vec![0u8; old.len()];
        for run in &plan.runs {
            let (blocks, _) =
                raw[run.buf_offset..run.buf_offset + run.blocks * BLOCK_SIZE].as_chunks_mut::<BLOCK_SIZE>();
            reader.read_run(run.addr, blocks).unwrap();
        }
        assert_ne!(raw, old, "the scenario must reuse the planned blocks, or it proves nothing");
        assert!(!reader.complete(&plan, fence, &mut buf), "a read overtaken by a reuse must be retried");

        // Not overtaken: completes, with the file's contents.
        let fence = reader.fence();
        let plan = fs.read_planned(a, 0, &mut buf).unwrap();
        assert!(reader.complete(&plan, fence, &mut buf));
        assert_eq!(buf, vec![0xb2u8; old.len()]);
    }

    #[test]
    fn the_pending_queue_is_bounded_and_every_write_lands() {
        // Scattered addresses (no runs), then a sequential stretch (runs, parallel drains).
        let n = 8 * DRAIN_AT_WRITES as u64;
        let (_d, p) = image(n);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let mut written = std::collections::BTreeSet::new();
        for k in 0..n {
            let a = if k < n / 2 { (k * 7919) % n } else { k };
            dev.write(a, &block(a as u8), WriteFlags::empty()).unwrap();
            written.insert(a);
            assert!(dev.shared.state.lock().unwrap().pending.len() < DRAIN_AT_WRITES);
        }
        dev.wait_writes().unwrap();
        drop(dev);
        let bytes = std::fs::read(&p).unwrap();
        for a in 0..n as usize {
            let want = if written.contains(&(a as u64)) { a as u8 } else { 0 };
            assert!(bytes[a * BLOCK_SIZE..(a + 1) * BLOCK_SIZE].iter().all(|&b| b == want), "block {a}");
        }
    }

    #[test]
    fn same_block_writes_land_in_submission_order() {
        let (_d, p) = image(16);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        for v in 0..=255u8 {
            dev.write(5, &block(v), WriteFlags::empty()).unwrap();
        }
        dev.wait_writes().unwrap();
        drop(dev);
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes[5 * BLOCK_SIZE..6 * BLOCK_SIZE].iter().all(|&b| b == 255));
    }

    #[test]
    fn fua_preflush_and_counters() {
        let (_d, p) = image(16);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        dev.write(1, &block(1), WriteFlags::empty()).unwrap();
        dev.write(2, &block(2), WriteFlags::FUA | WriteFlags::PREFLUSH).unwrap();
        dev.flush().unwrap();
        dev.wait_writes().unwrap();
        let c = dev.counters();
        assert_eq!((c.writes, c.fua_writes, c.flushes), (2, 1, 2));
    }

    #[test]
    fn out_of_range_and_read_only_writes_fail() {
        let (_d, p) = image(8);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let mut buf = block(0);
        assert_eq!(dev.read(8, &mut buf), Err(IoError { block: 8, op: "read" }));
        assert!(dev.write(8, &buf, WriteFlags::empty()).is_err());
        drop(dev);
        let ro = DeviceOptions { write: false, ..Default::default() };
        let mut dev = FileDevice::open(&p, ro).unwrap();
        assert!(dev.write(0, &buf, WriteFlags::empty()).is_err());
    }

    /// Records what a device reports (`IoObserver`).
    #[derive(Default)]
    struct Reports(Mutex<Vec<String>>);
    impl IoObserver for Reports {
        fn completed_upto(&self, seq: u64) {
            self.0.lock().unwrap().push(format!("complete {seq}"));
        }
        fn flush_begins(&self) -> u64 {
            let mut r = self.0.lock().unwrap();
            r.push("flush".into());
            r.len() as u64
        }
        fn flush_done(&self, id: u64) {
            self.0.lock().unwrap().push(format!("done {id}"));
        }
        fn flush_failed(&self, id: u64) {
            self.0.lock().unwrap().push(format!("failed {id}"));
        }
    }

    #[test]
    fn the_device_reports_completions_and_flushes_and_keeps_a_superseded_fua_promise() {
        let (_d, p) = image(16);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let reports = Arc::new(Reports::default());
        assert!(dev.observe(reports.clone()));
        assert!(!dev.observe(reports.clone()), "one observer");
        dev.write(3, &block(1), WriteFlags::FUA).unwrap();
        dev.write(3, &block(2), WriteFlags::empty()).unwrap(); // supersedes the FUA write
        dev.write(4, &block(4), WriteFlags::empty()).unwrap();
        dev.wait_writes().unwrap();
        dev.flush().unwrap();
        // Nothing new to drain, nothing completed since the flush began: no report, no flush.
        dev.flush_handle().wait_and_flush().unwrap();
        let got = reports.0.lock().unwrap().clone();
        assert_eq!(got, ["complete 3", "flush", "done 2"]);
        let c = dev.flush_handle().flush_counts();
        assert_eq!((c.issued, c.skipped), (1, 1));
        // Blocks 3 (FUA) and 4: adjacent, but a FUA write goes alone.
        assert!((1..=2).contains(&c.write_runs), "{c:?}");
        let mut b = block(0);
        dev.read(3, &mut b).unwrap();
        assert_eq!(b[0], 2, "the newest version of the block went out (as FUA, in place of the first)");
    }

    /// A device over a fresh image, with the given flush mutants, observed.
    fn observed_device(blocks: u64, mutants: FlushMutants) -> (tempfile::TempDir, FileDevice, Arc<Reports>) {
        let (d, p) = image(blocks);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        Arc::get_mut(&mut dev.shared).expect("no handle yet").mutants = mutants;
        let reports = Arc::new(Reports::default());
        assert!(dev.observe(reports.clone()));
        (d, dev, reports)
    }

    /// Whether the flush that serves a batch began after the batch's writes completed:
    /// the write with submission number `seq` is covered by a `flush` reported after
    /// `complete N` for some N ≥ seq (and that flush succeeded).
    fn flushed_after_completion(reports: &[String], seq: u64) -> bool {
        let done_at =
            reports.iter().position(|r| r.strip_prefix("complete ").is_some_and(|n| n.parse::<u64>().unwrap() >= seq));
        let Some(done_at) = done_at else { return false };
        reports[done_at..].iter().any(|r| r == "flush")
    }

    /// One thread: write, flush; write, flush. Each batch needs its own flush.
    fn two_batches_one_thread(mutants: FlushMutants) -> bool {
        let (_d, mut dev, reports) = observed_device(16, mutants);
        let h = dev.flush_handle();
        dev.write(1, &block(1), WriteFlags::empty()).unwrap();
        h.wait_and_flush().unwrap();
        dev.write(2, &block(2), WriteFlags::empty()).unwrap();
        h.wait_and_flush().unwrap();
        let r = reports.0.lock().unwrap().clone();
        flushed_after_completion(&r, 1) && flushed_after_completion(&r, 2)
    }

    #[test]
    fn a_flush_covering_nothing_new_is_skipped_and_every_batch_is_flushed() {
        assert!(two_batches_one_thread(FlushMutants::default()));
        // The mutant decides before its drain: the second batch is never flushed.
        assert!(
            !two_batches_one_thread(FlushMutants { skip_before_drain: true, ..Default::default() }),
            "mutant-flush-skip-before-drain was not caught"
        );

        let (_d, mut dev, _reports) = observed_device(64, FlushMutants::default());
        let h = dev.flush_handle();
        let counts = |i, s| (i, s);
        let got = |h: &FlushHandle| {
            let c = h.flush_counts();
            (c.issued, c.skipped)
        };
        h.wait_and_flush().unwrap();
        assert_eq!(got(&h), counts(1, 0), "the first flush is never skipped");
        h.wait_and_flush().unwrap();
        dev.flush().unwrap();
        assert_eq!(got(&h), counts(1, 2), "nothing completed since: skipped");
        dev.write(5, &block(5), WriteFlags::empty()).unwrap();
        dev.flush().unwrap();
        assert_eq!(got(&h), counts(1, 3), "a write still pending (not waited for) is not the flush's to cover");
        dev.wait_writes().unwrap();
        dev.flush().unwrap();
        assert_eq!(got(&h), counts(2, 3), "a completed write is flushed");
        dev.discard(8, 8).unwrap();
        dev.flush().unwrap();
        assert_eq!(got(&h), counts(3, 3), "a punched hole is flushed");
        dev.write(9, &block(9), WriteFlags::FUA | WriteFlags::PREFLUSH).unwrap();
        assert_eq!(got(&h), counts(3, 4), "a PREFLUSH with nothing new before it is skipped");
        dev.wait_writes().unwrap();
        dev.flush().unwrap();
        assert_eq!(got(&h), counts(4, 4));
    }

    /// Blocks the first flush at its begin until `release` is set.
    struct HeldFlush {
        reports: Reports,
        held: Mutex<bool>,
        release: std::sync::Condvar,
        first: std::sync::atomic::AtomicBool,
        begun: std::sync::Condvar,
    }
    impl IoObserver for HeldFlush {
        fn completed_upto(&self, seq: u64) {
            self.reports.completed_upto(seq)
        }
        fn flush_begins(&self) -> u64 {
            let id = self.reports.flush_begins();
            if self.first.swap(false, Ordering::SeqCst) {
                let mut held = self.held.lock().unwrap();
                *held = true;
                self.begun.notify_all();
                while *held {
                    held = self.release.wait(held).unwrap();
                }
            }
            id
        }
        fn flush_done(&self, id: u64) {
            self.reports.flush_done(id)
        }
        fn flush_failed(&self, id: u64) {
            self.reports.flush_failed(id)
        }
    }

    /// Thread B's flush is in flight (begun, its `fdatasync` not returned) when thread A's
    /// batch completes; then A asks for its flush. True when A got a flush of its own.
    fn batch_completed_during_a_flush(mutants: FlushMutants) -> bool {
        let (_d, p) = image(16);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        Arc::get_mut(&mut dev.shared).expect("no handle yet").mutants = mutants;
        let obs = Arc::new(HeldFlush {
            reports: Reports::default(),
            held: Mutex::new(false),
            release: Default::default(),
            first: true.into(),
            begun: Default::default(),
        });
        assert!(dev.observe(obs.clone()));
        let h = dev.flush_handle();
        dev.write(1, &block(1), WriteFlags::empty()).unwrap();
        let b = {
            let h = h.clone();
            std::thread::spawn(move || h.wait_and_flush())
        };
        // B is inside its flush.
        let mut held = obs.held.lock().unwrap();
        while !*held {
            held = obs.begun.wait(held).unwrap();
        }
        drop(held);
        // A's batch is submitted and completes (its drain does not need the flush lock).
        dev.write(2, &block(2), WriteFlags::empty()).unwrap();
        h.drain().unwrap();
        *obs.held.lock().unwrap() = false;
        obs.release.notify_all();
        b.join().unwrap().unwrap();
        // A's flush, as group commit asks for it once its batch is drained.
        h.wait_and_flush().unwrap();
        let r = obs.reports.0.lock().unwrap().clone();
        flushed_after_completion(&r, 2)
    }

    #[test]
    fn a_write_completed_during_a_flush_is_flushed_again() {
        assert!(batch_completed_during_a_flush(FlushMutants::default()));
        assert!(
            !batch_completed_during_a_flush(FlushMutants { epoch_after_flush: true, ..Default::default() }),
            "mutant-flush-epoch-after-flush was not caught"
        );
    }

    #[test]
    fn discard_punches_holes_after_pending_writes() {
        let (_d, p) = image(64);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        for a in 0..64 {
            dev.write(a, &block(7), WriteFlags::empty()).unwrap();
        }
        dev.discard(16, 32).unwrap();
        let mut buf = block(1);
        dev.read(20, &mut buf).unwrap();
        assert_eq!(buf, block(0));
        dev.read(48, &mut buf).unwrap();
        assert_eq!(buf, block(7));
        assert!(dev.discard(60, 10).is_err(), "range past the end");
    }

    #[test]
    fn write_error_is_latched() {
        // /dev/full fails every write with ENOSPC.
        let f = OpenOptions::new().read(true).write(true).open("/dev/full").unwrap();
        let mut dev =
            FileDevice::from_file(f, Path::new("/dev/full"), DeviceKind::ImageFile, 16, DeviceOptions::default());
        dev.write(3, &block(1), WriteFlags::empty()).unwrap();
        let e = dev.wait_writes().unwrap_err();
        assert_eq!(e, IoError { block: 3, op: "write" });
        assert_eq!(dev.write(4, &block(1), WriteFlags::empty()), Err(e));
        assert_eq!(dev.flush(), Err(e));
        assert_eq!(dev.wait_writes(), Err(e));
    }

    #[test]
    fn a_block_whose_write_failed_stays_readable_as_written() {
        // /dev/full: reads return zeros, writes fail. The core drops a block from its cache
        // once submitted, so the device must go on returning what was written.
        let f = OpenOptions::new().read(true).write(true).open("/dev/full").unwrap();
        let mut dev =
            FileDevice::from_file(f, Path::new("/dev/full"), DeviceKind::ImageFile, 16, DeviceOptions::default());
        dev.write(5, &block(0xAB), WriteFlags::empty()).unwrap();
        assert!(dev.wait_writes().is_err(), "the write to /dev/full must fail");
        let mut buf = block(0);
        dev.read(5, &mut buf).unwrap();
        assert_eq!(buf, block(0xAB), "after the failed write the block read back its old content");
    }

    #[test]
    fn second_open_is_refused_while_locked() {
        let (_d, p) = image(8);
        let _dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let e = FileDevice::open(&p, DeviceOptions::default()).unwrap_err();
        assert!(matches!(e, CliError::Busy { .. }), "{e}");
        let ro = DeviceOptions { write: false, ..Default::default() };
        assert!(matches!(FileDevice::open(&p, ro), Err(CliError::Busy { .. })));
    }

    #[test]
    fn flush_handle_waits_for_in_flight_writes() {
        let (_d, p) = image(64);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let h = dev.flush_handle();
        for a in 0..64 {
            dev.write(a, &block(3), WriteFlags::empty()).unwrap();
        }
        h.wait_and_flush().unwrap();
        let st = dev.shared.state.lock().unwrap();
        assert!(st.pending.is_empty() && st.inflight.is_empty());
        drop(st);
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes.iter().all(|&b| b == 3));
    }

    #[test]
    fn concurrent_drains_never_let_an_older_write_of_a_block_land_last() {
        // The core submits (under its lock) while group-commit flushers drain outside it:
        // whatever the interleaving, each block ends with its newest submitted content.
        let (_d, p) = image(64);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let h = dev.flush_handle();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flusher = {
            let (h, stop) = (h.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    h.wait_and_flush().unwrap();
                    n += 1;
                }
                n
            })
        };
        for round in 0..200u32 {
            for a in 0..64u64 {
                dev.write(a, &block((round as u8).wrapping_add(a as u8)), WriteFlags::empty()).unwrap();
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let drains = flusher.join().unwrap();
        h.wait_and_flush().unwrap();
        let bytes = std::fs::read(&p).unwrap();
        for a in 0..64usize {
            let want = 199u8.wrapping_add(a as u8);
            assert!(bytes[a * BLOCK_SIZE..(a + 1) * BLOCK_SIZE].iter().all(|&b| b == want), "block {a}");
        }
        assert!(drains > 0);
    }

    #[test]
    fn after_a_latched_error_nothing_reaches_the_host_and_no_flush_succeeds() {
        // Review finding: a writeback error is reported to one fdatasync caller only; once
        // any caller has latched it, no later flush (either path) may succeed and no later
        // write — above all a checkpoint header — may reach the host.
        let (_d, p) = image(16);
        let mut dev = FileDevice::open(&p, DeviceOptions::default()).unwrap();
        let h = dev.flush_handle();
        let e = IoError { block: 7, op: "write" };
        dev.shared.latch(e);
        dev.write(3, &block(9), WriteFlags::empty()).unwrap_or(());
        let _ = dev.write(4, &block(9), WriteFlags::FUA);
        assert_eq!(h.wait_and_flush(), Err(e));
        assert_eq!(dev.flush(), Err(e));
        assert_eq!(dev.wait_writes(), Err(e));
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes.iter().all(|&b| b == 0), "a write reached the host after the error");
    }

    #[test]
    fn missing_target_is_not_found() {
        let e = FileDevice::open(Path::new("/nonexistent/x.img"), DeviceOptions::default()).unwrap_err();
        assert!(matches!(e, CliError::NotFound { .. }));
        assert!(e.to_string().contains("/nonexistent/x.img: no such file or device"));
    }
}
