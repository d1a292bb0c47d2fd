//! The write log and the crash states of a real mount.
//!
//! `rollfs mount --record-writes LOG` records every block write, wait, flush and discard
//! the filesystem issues, in order (like Linux dm-log-writes), group commit's flushes
//! included, and the marks a crashtest workload sets. [`WriteLog::crash_states`] turns the log
//! into the trace of the shared crash model (rollfs-crash, the one the WebAssembly
//! explorer uses), and [`CrashStates`] derives from it the images a power loss after any
//! logged I/O may leave: `rollfs replay` builds one, `rollfs crashtest` checks many.
//!
//! Log format (little-endian): a 24-byte header `"RLFSWLOG"`, version u32, block size
//! u32, block count u64; then 24-byte entry headers `tag u8, flags u8, 6 reserved bytes,
//! addr u64, count u64`, each `BASE` and `WRITE` entry followed by its 4 KiB block.
//! `BASE` entries come first: the non-zero blocks of the image when recording started,
//! so a log replays on its own without the original image. Version 2 added `MARK`,
//! version 3 the device's reports (`DEVICE_LOG`, `COMPLETE`, `FLUSH_DONE`,
//! `FLUSH_FAILED`); older logs still read. The n-th `WRITE` entry is the device's n-th
//! accepted write (writes come one at a time, under the filesystem's lock).
//!
//! What each entry tells the crash model. A write is in flight once its `WRITE` is
//! logged. It is *known complete* once the device reports it reached the host: a
//! `COMPLETE` entry (addr = N: every write up to the N-th has), which the native device
//! logs itself at the end of every drain ([`crate::device::IoObserver`]), whoever drains
//! — a `wait_writes` of the filesystem, group commit's flusher, a full queue. The device
//! logs its flushes too: a `FLUSH` entry (addr = its id) when a host flush *begins* and a
//! `FLUSH_DONE` entry when it returned successfully (`FLUSH_FAILED` when it failed); the
//! writes reported complete before the begin are durable from the `FLUSH_DONE` on. So the
//! log is what the device did, not what the filesystem asked for: a flush that forgot to
//! wait for its writes shows as a flush over writes still in flight, and a waiter woken
//! before its flush returned shows as a mark before the `FLUSH_DONE`. A log made
//! over a device that reports nothing (a memory device in tests; logs of version 1 and 2)
//! has no `DEVICE_LOG` entry: then a `WAIT` completes every write before it and the
//! recorder logs `FLUSH` when the flush returns.
//!
//! A FUA write is durable once complete; a write in flight, or complete but not flushed,
//! may or may not survive, whole or torn at sectors. A `DISCARD` becomes zero-block writes
//! that complete at once (a power loss may keep the zeros or the old data) or, for a device
//! that ignores TRIM, nothing at all. This is deliberately the crash model of
//! docs/INVARIANTS.md.

use crate::device::IoObserver;
use crate::error::{CliError, Result};
use rollfs_core::{Block, BlockDevice, IoError, WriteFlags, BLOCK_SIZE};
use rollfs_crash::rng::Rng;
use rollfs_crash::{choose_survivors, BlockRef, CrashWalker, Event, Image, Survivors, Trace, WriteRec};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub const LOG_MAGIC: &[u8; 8] = b"RLFSWLOG";
/// The extended attribute whose getxattr on a recorded mount sets a mark (`rollfs mark`);
/// the value returned is the mark's number (1, 2, ...).
pub const MARK_XATTR: &str = "user.rollfs.crashtest.mark";
pub const LOG_VERSION: u32 = 3;
const HEADER_LEN: usize = 24;
const ENTRY_LEN: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    Base = 1,
    Write = 2,
    Wait = 3,
    Flush = 4,
    Discard = 5,
    /// A crashtest workload's mark (`rollfs mark`): everything it did before is before it.
    Mark = 6,
    /// The device: every write up to the `addr`-th has reached the host.
    Complete = 7,
    /// The device: the flush with id `addr` failed.
    FlushFailed = 8,
    /// First entry of a log whose device reports completions and flushes itself.
    DeviceLog = 9,
    /// The device: the flush with id `addr` (logged when it began) returned successfully.
    FlushDone = 10,
}

impl Tag {
    fn from_u8(v: u8) -> Option<Tag> {
        Some(match v {
            1 => Tag::Base,
            2 => Tag::Write,
            3 => Tag::Wait,
            4 => Tag::Flush,
            5 => Tag::Discard,
            6 => Tag::Mark,
            7 => Tag::Complete,
            8 => Tag::FlushFailed,
            9 => Tag::DeviceLog,
            10 => Tag::FlushDone,
            _ => return None,
        })
    }
    fn has_data(self) -> bool {
        matches!(self, Tag::Base | Tag::Write)
    }
}

/// The open log: entries go through here from the device (under the filesystem lock),
/// the group-commit flusher and the driver's marks.
pub struct LogWriter {
    log: BufWriter<File>,
    /// First failure to write the log; reported as a device error from then on so the
    /// recording is never silently incomplete.
    failed: bool,
    marks: u64,
    flushes: u64,
}

/// The log, shared by the device, the flusher and the driver.
pub type SharedLog = Arc<Mutex<LogWriter>>;

impl LogWriter {
    fn rec(&mut self, tag: Tag, flags: u8, addr: u64, count: u64, data: Option<&Block>) -> Result<(), IoError> {
        if !self.failed {
            let mut r = write_entry(&mut self.log, tag, flags, addr, count, data);
            if r.is_ok() && matches!(tag, Tag::Flush | Tag::FlushDone | Tag::Wait | Tag::Mark | Tag::Complete) {
                // Hand the log to the OS at every flush, wait and mark: a killed daemon then
                // leaves a log complete up to its last durability point, and a test that
                // reads the log right after an fsync returned sees all of that fsync.
                r = self.log.flush();
            }
            self.failed = r.is_err();
        }
        if self.failed {
            return Err(IoError { block: addr, op: "record" });
        }
        Ok(())
    }

    /// Records a mark; returns how many marks the log has with it.
    pub fn mark(&mut self) -> Result<u64, IoError> {
        self.rec(Tag::Mark, 0, 0, 0, None)?;
        self.marks += 1;
        Ok(self.marks)
    }
}

/// The device's reports ([`IoObserver`]) into the log.
struct DeviceReports(SharedLog);

impl IoObserver for DeviceReports {
    fn completed_upto(&self, seq: u64) {
        let _ = self.0.lock().unwrap_or_else(|e| e.into_inner()).rec(Tag::Complete, 0, seq, 0, None);
    }
    fn flush_begins(&self) -> u64 {
        let mut l = self.0.lock().unwrap_or_else(|e| e.into_inner());
        l.flushes += 1;
        let id = l.flushes;
        let _ = l.rec(Tag::Flush, 0, id, 0, None);
        id
    }
    fn flush_done(&self, id: u64) {
        let _ = self.0.lock().unwrap_or_else(|e| e.into_inner()).rec(Tag::FlushDone, 0, id, 0, None);
    }
    fn flush_failed(&self, id: u64) {
        let _ = self.0.lock().unwrap_or_else(|e| e.into_inner()).rec(Tag::FlushFailed, 0, id, 0, None);
    }
}

/// A block device that passes everything to `inner` and logs it.
pub struct RecordingDevice<D: BlockDevice> {
    inner: D,
    log: SharedLog,
    /// The device reports completions and flushes itself ([`RecordingDevice::observer`]).
    device_reports: bool,
}

impl<D: BlockDevice> RecordingDevice<D> {
    /// Starts a log at `log_path` with a snapshot of the device's current contents.
    /// `data_file`, when given, is the image file behind `inner`; its holes are skipped.
    /// With `device_reports`, the caller connects `inner` to [`RecordingDevice::observer`]
    /// before any write: the device logs completions and flushes, the recorder does not.
    pub fn create(mut inner: D, log_path: &Path, data_file: Option<&File>, device_reports: bool) -> Result<Self> {
        let f = crate::secure::create_private(log_path, "create the write log")?;
        let mut log = BufWriter::with_capacity(1 << 20, f);
        let count = inner.block_count();
        let mut hdr = Vec::with_capacity(HEADER_LEN);
        hdr.extend_from_slice(LOG_MAGIC);
        hdr.extend_from_slice(&LOG_VERSION.to_le_bytes());
        hdr.extend_from_slice(&(BLOCK_SIZE as u32).to_le_bytes());
        hdr.extend_from_slice(&count.to_le_bytes());
        let io_err = |e| CliError::io(log_path, "write the write log", e);
        log.write_all(&hdr).map_err(io_err)?;
        let ranges = match data_file {
            Some(f) => data_ranges(f, count),
            None => vec![(0, count)],
        };
        let mut buf = [0u8; BLOCK_SIZE];
        for (start, end) in ranges {
            for a in start..end {
                inner.read(a, &mut buf).map_err(|e| CliError::Failed {
                    path: log_path.to_owned(),
                    what: "cannot snapshot the device",
                    detail: format!("read error at block {}", e.block),
                })?;
                if buf.iter().any(|&b| b != 0) {
                    write_entry(&mut log, Tag::Base, 0, a, 1, Some(&buf)).map_err(io_err)?;
                }
            }
        }
        if device_reports {
            write_entry(&mut log, Tag::DeviceLog, 0, 0, 0, None).map_err(io_err)?;
        }
        log.flush().map_err(io_err)?;
        let log = Arc::new(Mutex::new(LogWriter { log, failed: false, marks: 0, flushes: 0 }));
        Ok(RecordingDevice { inner, log, device_reports })
    }

    /// What the device reports into the log (see [`RecordingDevice::create`]).
    pub fn observer(&self) -> Arc<dyn IoObserver> {
        Arc::new(DeviceReports(self.log.clone()))
    }

    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The log, for the driver's marks.
    pub fn log(&self) -> SharedLog {
        self.log.clone()
    }

    fn rec(&mut self, tag: Tag, flags: u8, addr: u64, count: u64, data: Option<&Block>) -> Result<(), IoError> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).rec(tag, flags, addr, count, data)
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        let _ = self.log.flush();
        let _ = self.log.get_ref().sync_all();
    }
}

fn write_entry(w: &mut impl Write, tag: Tag, flags: u8, addr: u64, count: u64, data: Option<&Block>) -> io::Result<()> {
    let mut e = [0u8; ENTRY_LEN];
    e[0] = tag as u8;
    e[1] = flags;
    e[8..16].copy_from_slice(&addr.to_le_bytes());
    e[16..24].copy_from_slice(&count.to_le_bytes());
    w.write_all(&e)?;
    if let Some(d) = data {
        w.write_all(d)?;
    }
    Ok(())
}

/// The block ranges of an image file that hold data (holes skipped), via SEEK_DATA.
fn data_ranges(f: &File, block_count: u64) -> Vec<(u64, u64)> {
    let fd = f.as_raw_fd();
    let end = block_count * BLOCK_SIZE as u64;
    let mut out = Vec::new();
    let mut off: i64 = 0;
    loop {
        // SAFETY: lseek on a valid fd; the file offset is not used by pread/pwrite.
        let data = unsafe { libc::lseek(fd, off, libc::SEEK_DATA) };
        if data < 0 || data as u64 >= end {
            break;
        }
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        let hole = if hole < 0 { end as i64 } else { hole.min(end as i64) };
        let (s, e) = (data as u64 / BLOCK_SIZE as u64, (hole as u64).div_ceil(BLOCK_SIZE as u64));
        out.push((s, e.min(block_count)));
        off = hole;
        if hole as u64 >= end {
            break;
        }
    }
    if out.is_empty() && unsafe { libc::lseek(fd, 0, libc::SEEK_DATA) } < 0 {
        let errno = io::Error::last_os_error().raw_os_error();
        if errno != Some(libc::ENXIO) {
            // SEEK_DATA unsupported: read everything.
            return vec![(0, block_count)];
        }
    }
    out
}

impl<D: BlockDevice> BlockDevice for RecordingDevice<D> {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.inner.read(addr, buf)
    }
    fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        self.inner.read_run(addr, blocks)
    }
    fn reuse_fence(&mut self) {
        self.inner.reuse_fence()
    }
    fn refresh_size(&mut self, want: u64) -> Result<u64, IoError> {
        self.inner.refresh_size(want)
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        // Logged after the device accepted it: the n-th WRITE entry is the device's n-th
        // write (writes come one at a time, under the filesystem's lock).
        self.inner.write(addr, data, flags)?;
        if flags.contains(WriteFlags::PREFLUSH) && !self.device_reports {
            self.rec(Tag::Flush, 0, IoError::FLUSH_BLOCK, 0, None)?;
        }
        self.rec(Tag::Write, flags.bits(), addr, 1, Some(data))
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()?;
        self.rec(Tag::Wait, 0, 0, 0, None)
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.inner.flush()?;
        if self.device_reports {
            return Ok(());
        }
        self.rec(Tag::Flush, 0, IoError::FLUSH_BLOCK, 0, None)
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        // Logged even when it failed: part of the range may be zeroed already, and a
        // discard may zero or be ignored in the model anyway.
        let r = self.inner.discard(addr, count);
        self.rec(Tag::Discard, 0, addr, count, None)?;
        r
    }
}

/// One parsed log entry; `data_off` is where its block is in the log file.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub tag: Tag,
    pub flags: u8,
    pub addr: u64,
    pub count: u64,
    pub data_off: u64,
}

/// A parsed write log (entries only; block data stays in the file).
#[derive(Debug)]
pub struct WriteLog {
    file: File,
    pub block_count: u64,
    pub entries: Vec<Entry>,
    /// True when the log ends in a partial entry (the recorder was killed mid-write).
    pub truncated: bool,
}

impl WriteLog {
    pub fn open(path: &Path) -> Result<WriteLog> {
        let file = File::open(path).map_err(|e| CliError::io(path, "open the write log", e))?;
        let bad = |detail: &str| CliError::Failed {
            path: path.to_owned(),
            what: "not a rollfs write log",
            detail: detail.to_string(),
        };
        let mut r = BufReader::with_capacity(1 << 16, &file);
        let mut hdr = [0u8; HEADER_LEN];
        r.read_exact(&mut hdr).map_err(|_| bad("file too short for a log header"))?;
        if &hdr[0..8] != LOG_MAGIC {
            return Err(bad("bad magic"));
        }
        let version = u32::from_le_bytes(hdr[8..12].try_into().unwrap());
        if !(1..=LOG_VERSION).contains(&version) {
            return Err(bad(&format!("unsupported log version {version}")));
        }
        if u32::from_le_bytes(hdr[12..16].try_into().unwrap()) != BLOCK_SIZE as u32 {
            return Err(bad("unsupported block size"));
        }
        let block_count = u64::from_le_bytes(hdr[16..24].try_into().unwrap());
        let mut entries = Vec::new();
        let mut pos = HEADER_LEN as u64;
        let len = file.metadata().map_err(|e| CliError::io(path, "stat the write log", e))?.len();
        let truncated;
        let mut e = [0u8; ENTRY_LEN];
        loop {
            match r.read_exact(&mut e) {
                Ok(()) => {}
                Err(_) => {
                    truncated = pos != len;
                    break;
                }
            }
            let tag = Tag::from_u8(e[0]).ok_or_else(|| bad(&format!("unknown entry tag {} at offset {pos}", e[0])))?;
            let addr = u64::from_le_bytes(e[8..16].try_into().unwrap());
            let count = u64::from_le_bytes(e[16..24].try_into().unwrap());
            let data_off = pos + ENTRY_LEN as u64;
            pos = data_off;
            if tag.has_data() {
                if pos + BLOCK_SIZE as u64 > len {
                    truncated = true;
                    break;
                }
                r.seek_relative(BLOCK_SIZE as i64).map_err(|e| CliError::io(path, "read the write log", e))?;
                pos += BLOCK_SIZE as u64;
            }
            entries.push(Entry { tag, flags: e[1], addr, count, data_off });
        }
        Ok(WriteLog { file, block_count, entries, truncated })
    }

    /// The entries after the base snapshot: the I/O the mount issued, in order.
    pub fn io(&self) -> &[Entry] {
        let base = self.entries.iter().position(|e| e.tag != Tag::Base).unwrap_or(self.entries.len());
        &self.entries[base..]
    }

    /// The crash point right after the N-th flush (N = 0: just before the first flush);
    /// `None` if the log has fewer flushes. A crash point P is a power loss after the
    /// first P I/O entries.
    pub fn point_after_flush(&self, n: u64) -> Option<u64> {
        let io = self.io();
        let tag = self.flush_tag();
        if n == 0 {
            return Some(io.iter().position(|e| e.tag == tag).unwrap_or(io.len()) as u64);
        }
        let mut seen = 0;
        for (i, e) in io.iter().enumerate() {
            if e.tag == tag {
                seen += 1;
                if seen == n {
                    return Some(i as u64 + 1);
                }
            }
        }
        None
    }

    /// Whether the device reported its completions and flushes itself (module header).
    pub fn device_reports(&self) -> bool {
        self.io().iter().any(|e| e.tag == Tag::DeviceLog)
    }

    /// The entry that makes a flush effective: its `FLUSH_DONE` when the device reports,
    /// else the `FLUSH` the recorder logged when it returned.
    fn flush_tag(&self) -> Tag {
        if self.device_reports() {
            Tag::FlushDone
        } else {
            Tag::Flush
        }
    }

    /// Flushes that succeeded.
    pub fn flush_count(&self) -> u64 {
        let tag = self.flush_tag();
        self.entries.iter().filter(|e| e.tag == tag).count() as u64
    }

    pub fn write_count(&self) -> u64 {
        self.entries.iter().filter(|e| e.tag == Tag::Write).count() as u64
    }

    pub fn mark_count(&self) -> u64 {
        self.entries.iter().filter(|e| e.tag == Tag::Mark).count() as u64
    }

    fn read_block(&self, e: &Entry) -> io::Result<BlockRef> {
        let mut b = [0u8; BLOCK_SIZE];
        self.file.read_exact_at(&mut b, e.data_off)?;
        Ok(Arc::new(b))
    }

    /// The log as the shared crash model's traces (one per way a device may treat
    /// discards): see [`CrashStates`].
    pub fn crash_states(&self) -> io::Result<CrashStates> {
        let mut base = Vec::new();
        for e in self.entries.iter().take_while(|e| e.tag == Tag::Base) {
            if e.addr < self.block_count {
                base.push((e.addr, self.read_block(e)?));
            }
        }
        let start = Image::blank(self.block_count).with_blocks(base).flatten();
        let zero: BlockRef = Arc::new([0u8; BLOCK_SIZE]);
        // The device's own reports, when it made them, are what counts (module header).
        let device_reports = self.device_reports();
        let mut zeroing = TraceBuilder::default();
        let mut ignoring = TraceBuilder::default();
        let mut marks = 0u64;
        let mut marks_before = vec![0u64];
        for e in self.io() {
            match e.tag {
                Tag::Base | Tag::DeviceLog | Tag::FlushFailed => {}
                Tag::Flush if device_reports => {
                    let id = e.addr as u32;
                    zeroing.trace.events.push(Event::FlushStart { id });
                    ignoring.trace.events.push(Event::FlushStart { id });
                }
                Tag::FlushDone => {
                    let id = e.addr as u32;
                    zeroing.trace.events.push(Event::FlushDone { id });
                    ignoring.trace.events.push(Event::FlushDone { id });
                }
                Tag::Write => {
                    let data = self.read_block(e)?;
                    let fua = e.flags & WriteFlags::FUA.bits() != 0;
                    zeroing.write(e.addr, data.clone(), fua);
                    ignoring.write(e.addr, data, fua);
                }
                Tag::Complete => {
                    zeroing.complete_upto(e.addr);
                    ignoring.complete_upto(e.addr);
                }
                Tag::Wait if device_reports => {
                    zeroing.trace.events.push(Event::WaitWrites);
                    ignoring.trace.events.push(Event::WaitWrites);
                }
                Tag::Wait => {
                    zeroing.wait();
                    ignoring.wait();
                }
                Tag::Flush => {
                    zeroing.trace.events.push(Event::Flush);
                    ignoring.trace.events.push(Event::Flush);
                }
                Tag::Discard => {
                    let end = e.addr.saturating_add(e.count).min(self.block_count);
                    zeroing.trace.events.push(Event::Discard { addr: e.addr, count: e.count });
                    ignoring.trace.events.push(Event::Discard { addr: e.addr, count: e.count });
                    // As the simulated device: discarded blocks complete at once into the
                    // cache; a power loss may keep the zeros or the old contents.
                    for a in e.addr.min(end)..end {
                        let id = zeroing.add_write(a, zero.clone(), false);
                        zeroing.complete(id);
                    }
                }
                Tag::Mark => {
                    marks += 1;
                    zeroing.trace.events.push(Event::Mark);
                    ignoring.trace.events.push(Event::Mark);
                }
            }
            zeroing.point_event.push(zeroing.trace.events.len());
            ignoring.point_event.push(ignoring.trace.events.len());
            marks_before.push(marks);
        }
        Ok(CrashStates { start, zeroing, ignoring, marks_before })
    }
}

/// A trace being built from log entries, and the event position of every crash point.
#[derive(Default)]
struct TraceBuilder {
    trace: Trace,
    /// Device writes in flight: (the device's number for it, trace id), in order.
    in_flight: Vec<(u64, u32)>,
    /// Device writes logged so far (the device numbers them 1, 2, ...).
    device_writes: u64,
    /// The device reported every write up to this one complete.
    completed_upto: u64,
    /// `point_event[p]`: the number of events the first `p` I/O entries make.
    point_event: Vec<usize>,
}

impl TraceBuilder {
    /// A device write (its WRITE entry).
    fn write(&mut self, addr: u64, data: BlockRef, fua: bool) -> u32 {
        self.device_writes += 1;
        let id = self.add_write(addr, data, fua);
        if self.device_writes <= self.completed_upto {
            // Reported complete before its entry was logged (a drain ran between the
            // device accepting it and the recorder logging it).
            self.trace.events.push(Event::Complete { id });
        } else {
            self.in_flight.push((self.device_writes, id));
        }
        id
    }
    /// A write in the trace only (a discarded block's zeros), completed by the caller.
    fn add_write(&mut self, addr: u64, data: BlockRef, fua: bool) -> u32 {
        let id = self.trace.writes.len() as u32;
        self.trace.writes.push(WriteRec { addr, data, fua });
        self.trace.events.push(Event::Write { id });
        id
    }
    fn complete(&mut self, id: u32) {
        self.trace.events.push(Event::Complete { id });
    }
    /// A `COMPLETE` report: the device's writes up to the `upto`-th reached the host.
    fn complete_upto(&mut self, upto: u64) {
        self.completed_upto = self.completed_upto.max(upto);
        let done = self.in_flight.iter().take_while(|(n, _)| *n <= upto).count();
        for (_, id) in self.in_flight.drain(..done) {
            self.trace.events.push(Event::Complete { id });
        }
    }
    /// A `WAIT` of a log without device reports: everything in flight completed (in
    /// submission order; the order among them is invisible to a power loss after the
    /// wait, and before it none had).
    fn wait(&mut self) {
        for (_, id) in std::mem::take(&mut self.in_flight) {
            self.trace.events.push(Event::Complete { id });
        }
        self.trace.events.push(Event::WaitWrites);
    }
    /// The event position of crash point `point` (after the first `point` I/O entries).
    fn event_at(&self, point: u64) -> usize {
        match point {
            0 => 0,
            p => self.point_event[p as usize - 1],
        }
    }
}

/// Every crash state of a recorded log: a crash point (a power loss after the first P I/O
/// entries, P = 0..=I/O count) and a variant (which writes not yet durable survive, and
/// how). Variant 0 keeps none, 1 keeps all, 2 (with torn writes) keeps all with the newest
/// torn to its last sector, later ones keep a random subset (each write with probability
/// 1/2, some torn at random sectors when torn writes are on) drawn from
/// `(seed, point, variant)`; odd random variants (3, 5, ...) see a device that ignored
/// the discards ([`discard_ignored`]). The variants are the explorer's (`choose_survivors`).
pub struct CrashStates {
    pub start: Image,
    zeroing: TraceBuilder,
    ignoring: TraceBuilder,
    marks_before: Vec<u64>,
}

/// Whether variant `v` sees a device that ignores discards (else discarded blocks may
/// read as zeros after the crash).
pub fn discard_ignored(variant: u32) -> bool {
    variant >= 3 && variant % 2 == 1
}

/// One crash state's image and what made it.
pub struct CrashState {
    pub image: Image,
    /// Identifies the image among this log's states (equal keys, equal images).
    pub key: (bool, u64, u64),
    /// Writes not yet durable at the point, and how many of them the variant keeps.
    pub pending: usize,
    pub kept: usize,
    pub torn: usize,
    pub discard_ignored: bool,
}

impl CrashStates {
    /// The number of crash points (the I/O entries + 1).
    pub fn points(&self) -> u64 {
        self.marks_before.len() as u64
    }

    /// Marks the workload had set before crash point `point`.
    pub fn marks_before(&self, point: u64) -> u64 {
        self.marks_before[point as usize]
    }

    /// The trace of the log (discards as zero writes), e.g. for describing a point.
    pub fn trace(&self) -> &Trace {
        &self.zeroing.trace
    }

    /// Writes before crash point `point` in the trace variant `variant` sees (discarded
    /// blocks count as writes of zeros when the device zeroes them).
    pub fn writes_before(&self, point: u64, variant: u32) -> u64 {
        let b = if discard_ignored(variant) { &self.ignoring } else { &self.zeroing };
        b.trace.events[..b.event_at(point)].iter().filter(|e| matches!(e, Event::Write { .. })).count() as u64
    }

    /// A cursor that derives states at non-decreasing points.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            states: self,
            zeroing: CrashWalker::new(&self.start, &self.zeroing.trace),
            ignoring: CrashWalker::new(&self.start, &self.ignoring.trace),
        }
    }
}

pub struct Cursor<'a> {
    states: &'a CrashStates,
    zeroing: CrashWalker<'a>,
    ignoring: CrashWalker<'a>,
}

impl Cursor<'_> {
    /// The state of `variant` at `point` (points must not decrease between calls).
    pub fn state(&mut self, point: u64, variant: u32, seed: u64, torn: bool) -> CrashState {
        assert!(point < self.states.points(), "crash point {point} beyond the log");
        let ignored = discard_ignored(variant);
        let (walker, builder) = if ignored {
            (&mut self.ignoring, &self.states.ignoring)
        } else {
            (&mut self.zeroing, &self.states.zeroing)
        };
        let at = builder.event_at(point);
        walker.advance_to(at);
        let pending = walker.pending();
        let mut rng = Rng::derive(&[seed, point, variant as u64]);
        let survivors: Survivors = choose_survivors(&pending, variant, &mut rng, torn);
        let (epoch, hash) = walker.image_key(&survivors);
        CrashState {
            image: walker.image(&survivors),
            key: (ignored, epoch, hash),
            pending: pending.len(),
            kept: survivors.0.len(),
            torn: survivors.0.iter().filter(|(_, m)| *m != 0xFF).count(),
            discard_ignored: ignored,
        }
    }
}

/// Where to cut the log and what survives: crash point `at_io` (or right after the
/// `at_flush`-th flush; else the end of the log) and `variant` with `seed`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayOptions {
    pub at_flush: Option<u64>,
    pub at_io: Option<u64>,
    /// Default 1: every write not yet durable survives (the most-persisted state).
    pub variant: Option<u32>,
    pub seed: u64,
    pub torn: bool,
}

impl ReplayOptions {
    /// `--drop-unflushed SEED`: each write not yet durable dropped with probability 1/2
    /// (variant 4: a random subset, discards zeroed).
    pub fn drop_unflushed(seed: u64) -> ReplayOptions {
        ReplayOptions { variant: Some(4), seed, ..Default::default() }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplaySummary {
    pub flushes_in_log: u64,
    pub writes_in_log: u64,
    /// Crash points of the log (its I/O entries + 1) and the one replayed.
    pub points: u64,
    pub point: u64,
    pub marks_before: u64,
    /// Writes before the cut that a flush had made durable (or FUA, known complete).
    pub durable_writes: u64,
    /// Writes before the cut that were not yet durable.
    pub unflushed_writes: u64,
    /// Of those, how many the replay dropped, and how many it kept torn.
    pub dropped_writes: u64,
    pub torn_writes: u64,
    pub discard_ignored: bool,
}

/// Summarises a log without replaying it.
pub fn summarize(log: &WriteLog) -> ReplaySummary {
    ReplaySummary {
        flushes_in_log: log.flush_count(),
        writes_in_log: log.write_count(),
        points: log.io().len() as u64 + 1,
        ..Default::default()
    }
}

/// Writes `img` to a new file at `out` (private to the caller; holes where the image
/// has zeros).
pub fn write_image(img: &Image, out: &Path) -> Result<()> {
    let out_err = |e| CliError::io(out, "write the replayed image", e);
    let f = crate::secure::create_private(out, "write the replayed image")?;
    f.set_len(img.block_count() * BLOCK_SIZE as u64).map_err(out_err)?;
    for a in 0..img.block_count() {
        if let Some(b) = img.get(a) {
            if b.iter().any(|&x| x != 0) {
                f.write_all_at(&b[..], a * BLOCK_SIZE as u64).map_err(out_err)?;
            }
        }
    }
    f.sync_all().map_err(out_err)
}

/// Builds `out` as a crash at the chosen point would leave the device.
pub fn replay(log_path: &Path, out: &Path, opts: &ReplayOptions) -> Result<ReplaySummary> {
    let log = WriteLog::open(log_path)?;
    let mut summary = summarize(&log);
    let point = match (opts.at_io, opts.at_flush) {
        (Some(p), _) if p >= summary.points => {
            return Err(CliError::BadOption(format!(
                "--at-io {p}: the log has crash points 0 to {}",
                summary.points - 1
            )))
        }
        (Some(p), _) => p,
        (None, Some(k)) => log.point_after_flush(k).ok_or_else(|| {
            CliError::BadOption(format!("--at-flush {k}: the log has only {} flushes", log.flush_count()))
        })?,
        (None, None) => summary.points - 1,
    };
    let states = log.crash_states().map_err(|e| CliError::io(log_path, "read the write log", e))?;
    let st = states.cursor().state(point, opts.variant.unwrap_or(1), opts.seed, opts.torn);
    write_image(&st.image, out)?;
    summary.point = point;
    summary.marks_before = states.marks_before(point);
    summary.durable_writes = states.writes_before(point, opts.variant.unwrap_or(1)) - st.pending as u64;
    summary.unflushed_writes = st.pending as u64;
    summary.dropped_writes = (st.pending - st.kept) as u64;
    summary.torn_writes = st.torn as u64;
    summary.discard_ignored = st.discard_ignored;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rollfs_core::MemDevice;

    fn blk(v: u8) -> Block {
        [v; BLOCK_SIZE]
    }

    fn read_img(p: &Path, addr: u64) -> u8 {
        let f = File::open(p).unwrap();
        let mut b = [0u8; BLOCK_SIZE];
        f.read_exact_at(&mut b, addr * BLOCK_SIZE as u64).unwrap();
        b[0]
    }

    #[test]
    fn replay_at_each_flush_keeps_only_what_was_waited_and_flushed() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("w.log");
        let mut mem = MemDevice::new(32);
        mem.write(0, &blk(0xAA), WriteFlags::empty()).unwrap(); // base content
        {
            let mut r = RecordingDevice::create(mem, &log, None, false).unwrap();
            r.write(1, &blk(1), WriteFlags::empty()).unwrap();
            r.wait_writes().unwrap();
            r.flush().unwrap(); // flush 1: block 1 durable
            r.write(2, &blk(2), WriteFlags::empty()).unwrap();
            r.flush().unwrap(); // flush 2: block 2 NOT covered (never waited)
            r.write(3, &blk(3), WriteFlags::FUA).unwrap();
            r.wait_writes().unwrap(); // block 2 complete, block 3 durable (FUA)
            r.flush().unwrap(); // flush 3: block 2 durable
            r.discard(1, 1).unwrap();
        }
        let wl = WriteLog::open(&log).unwrap();
        assert_eq!((wl.flush_count(), wl.write_count(), wl.truncated), (3, 3, false));
        let out = d.path().join("o.img");
        let s = replay(&log, &out, &ReplayOptions { at_flush: Some(2), ..ReplayOptions::drop_unflushed(1) }).unwrap();
        assert_eq!((s.durable_writes, s.unflushed_writes), (1, 1));
        assert_eq!(read_img(&out, 0), 0xAA);
        assert_eq!(read_img(&out, 1), 1);
        // Block 2 is kept or dropped depending on the seed; find seeds for both.
        let mut seen = [false; 2];
        for seed in 0..16 {
            replay(&log, &out, &ReplayOptions { at_flush: Some(2), ..ReplayOptions::drop_unflushed(seed) }).unwrap();
            seen[(read_img(&out, 2) == 2) as usize] = true;
        }
        assert_eq!(seen, [true, true]);
        let s = replay(&log, &out, &ReplayOptions { at_flush: Some(3), ..ReplayOptions::drop_unflushed(7) }).unwrap();
        assert_eq!((s.durable_writes, s.unflushed_writes, s.dropped_writes), (3, 0, 0));
        assert_eq!((read_img(&out, 2), read_img(&out, 3)), (2, 3));
        replay(&log, &out, &ReplayOptions::default()).unwrap();
        assert_eq!(read_img(&out, 1), 0, "discarded");
        let e = replay(&log, &out, &ReplayOptions { at_flush: Some(9), ..Default::default() }).unwrap_err();
        assert!(e.to_string().contains("only 3 flushes"), "{e}");
        replay(&log, &out, &ReplayOptions { at_flush: Some(0), ..ReplayOptions::drop_unflushed(3) }).unwrap();
        assert_eq!(read_img(&out, 0), 0xAA);
    }

    #[test]
    fn truncated_and_foreign_logs() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("w.log");
        {
            let mut r = RecordingDevice::create(MemDevice::new(8), &log, None, false).unwrap();
            r.write(1, &blk(1), WriteFlags::empty()).unwrap();
            r.flush().unwrap();
        }
        let len = std::fs::metadata(&log).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        f.set_len(len - 100).unwrap();
        let wl = WriteLog::open(&log).unwrap();
        assert!(wl.truncated);
        assert_eq!(wl.write_count(), 0);
        std::fs::write(&log, b"not a log at all, definitely").unwrap();
        assert!(WriteLog::open(&log).unwrap_err().to_string().contains("not a rollfs write log"));
    }

    fn val(img: &Image, addr: u64, at: usize) -> u8 {
        img.get(addr).map(|b| b[at]).unwrap_or(0)
    }

    #[test]
    fn crash_states_follow_the_shared_model() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("w.log");
        let mut mem = MemDevice::new(16);
        mem.write(5, &blk(0xAA), WriteFlags::empty()).unwrap();
        {
            let mut r = RecordingDevice::create(mem, &log, None, false).unwrap();
            r.write(1, &blk(1), WriteFlags::empty()).unwrap(); // point 1
            r.wait_writes().unwrap(); // 2
            r.flush().unwrap(); // 3: block 1 durable
            r.write(2, &blk(2), WriteFlags::empty()).unwrap(); // 4: in flight
            r.log().lock().unwrap().mark().unwrap(); // 5
            r.discard(5, 1).unwrap(); // 6: zeroed or ignored, not yet durable
            r.write(3, &blk(3), WriteFlags::empty()).unwrap(); // 7
        }
        let wl = WriteLog::open(&log).unwrap();
        assert_eq!((wl.io().len(), wl.mark_count(), wl.point_after_flush(1)), (7, 1, Some(3)));
        let cs = wl.crash_states().unwrap();
        assert_eq!(cs.points(), 8);
        assert_eq!((cs.marks_before(4), cs.marks_before(5), cs.marks_before(7)), (0, 1, 1));
        let mut c = cs.cursor();
        let s = c.state(3, 0, 1, true);
        assert_eq!((val(&s.image, 1, 0), s.pending), (1, 0), "flushed after its wait: durable");
        let s = c.state(5, 0, 1, true);
        assert_eq!((val(&s.image, 2, 0), s.pending), (0, 1), "variant 0: the unwaited write is lost");
        let s = c.state(5, 1, 1, true);
        assert_eq!(val(&s.image, 2, 0), 2, "variant 1: kept");
        let s = c.state(5, 2, 1, true);
        let torn = (val(&s.image, 2, 0), val(&s.image, 2, BLOCK_SIZE - 1));
        assert_eq!((torn, s.torn), ((0, 2), 1), "variant 2: the newest write torn to its last sector");
        let s = c.state(6, 1, 1, true);
        assert_eq!(val(&s.image, 5, 0), 0, "variant 1: the discard zeroed the block");
        assert!(!s.discard_ignored);
        let s = c.state(6, 3, 1, true);
        assert!(s.discard_ignored);
        assert_eq!(val(&s.image, 5, 0), 0xAA, "variant 3: a device that ignores discards keeps the data");
        // Every subset of the pending writes is reached by the random variants.
        let mut seen = std::collections::BTreeSet::new();
        for v in 3..40 {
            let s = c.state(7, v, 9, false);
            seen.insert((val(&s.image, 2, 0), val(&s.image, 3, 0)));
        }
        assert_eq!(seen.len(), 4, "{seen:?}");
    }

    #[test]
    fn the_device_reports_completions_and_flushes() {
        use crate::device::{DeviceOptions, FileDevice};
        let d = tempfile::tempdir().unwrap();
        let img = d.path().join("i.img");
        std::fs::File::create(&img).unwrap().set_len(64 * BLOCK_SIZE as u64).unwrap();
        let log = d.path().join("w.log");
        let fdev = FileDevice::open(&img, DeviceOptions::default()).unwrap();
        let handle = fdev.flush_handle();
        let mut r = RecordingDevice::create(fdev, &log, None, true).unwrap();
        assert!(r.inner().observe(r.observer()));
        r.write(1, &blk(1), WriteFlags::empty()).unwrap();
        handle.wait_and_flush().unwrap(); // group commit's flush, outside the recorder
        r.write(2, &blk(2), WriteFlags::empty()).unwrap();
        // A flush without a wait: nothing completed since the last flush began, so the
        // device skips it (it would cover nothing) and nothing is logged.
        r.flush().unwrap();
        r.write(3, &blk(3), WriteFlags::empty()).unwrap();
        r.wait_writes().unwrap();
        drop(r);
        let wl = WriteLog::open(&log).unwrap();
        let tags: Vec<Tag> = wl.io().iter().map(|e| e.tag).collect();
        use Tag::*;
        assert_eq!(tags, [DeviceLog, Write, Complete, Flush, FlushDone, Write, Write, Complete, Wait]);
        assert_eq!((wl.flush_count(), wl.point_after_flush(1)), (1, Some(5)));
        let cs = wl.crash_states().unwrap();
        let mut c = cs.cursor();
        let s = c.state(4, 0, 0, false);
        assert_eq!(val(&s.image, 1, 0), 0, "a flush begun is not yet done");
        let s = c.state(5, 0, 0, false);
        assert_eq!(val(&s.image, 1, 0), 1, "durable once the flush returned");
        let s = c.state(9, 0, 0, false);
        assert_eq!((val(&s.image, 2, 0), val(&s.image, 3, 0), s.pending), (0, 0, 2), "complete, never flushed");
        let s = c.state(9, 1, 0, false);
        assert_eq!((val(&s.image, 2, 0), val(&s.image, 3, 0)), (2, 3));
    }

    #[test]
    fn a_flush_counts_when_it_returns_and_old_logs_still_read() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("w.log");
        {
            let mut r = RecordingDevice::create(MemDevice::new(8), &log, None, true).unwrap();
            let obs = r.observer();
            r.write(1, &blk(1), WriteFlags::empty()).unwrap();
            obs.completed_upto(1);
            let id = obs.flush_begins();
            // A waiter woken before its flush returned: its mark lands before FLUSH_DONE.
            r.log().lock().unwrap().mark().unwrap();
            obs.flush_done(id);
            let failed = obs.flush_begins();
            r.write(2, &blk(2), WriteFlags::empty()).unwrap();
            obs.completed_upto(2);
            obs.flush_failed(failed);
        }
        let wl = WriteLog::open(&log).unwrap();
        let cs = wl.crash_states().unwrap();
        let mut c = cs.cursor();
        let at_mark = 4; // DeviceLog, Write, Complete, Flush, [Mark]
        assert_eq!(cs.marks_before(at_mark + 1), 1);
        let s = c.state(at_mark + 1, 0, 0, false);
        assert_eq!(val(&s.image, 1, 0), 0, "not durable at the mark: the flush had not returned");
        let s = c.state(at_mark + 2, 0, 0, false);
        assert_eq!(val(&s.image, 1, 0), 1);
        let s = c.state(cs.points() - 1, 0, 0, false);
        assert_eq!((val(&s.image, 2, 0), s.pending), (0, 1), "a failed flush covers nothing");
        assert_eq!(wl.flush_count(), 1);
        // A version-2 log (no device reports) still opens and replays.
        let mut bytes = std::fs::read(&log).unwrap();
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        std::fs::write(&log, &bytes).unwrap();
        assert!(WriteLog::open(&log).is_ok());
        bytes[8..12].copy_from_slice(&(LOG_VERSION + 1).to_le_bytes());
        std::fs::write(&log, &bytes).unwrap();
        assert!(WriteLog::open(&log).unwrap_err().to_string().contains("unsupported log version"));
    }
}
