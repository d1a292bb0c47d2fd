//! The write log: `rollfs mount --record-writes LOG` records every block write, wait,
//! flush and discard the filesystem issues, in order (like Linux dm-log-writes), and
//! `rollfs replay` rebuilds the image as a power loss at a chosen point would leave it.
//!
//! Log format (little-endian): a 24-byte header `"RLFSWLOG"`, version u32, block size
//! u32, block count u64; then 24-byte entry headers `tag u8, flags u8, 6 reserved bytes,
//! addr u64, count u64`, each `BASE` and `WRITE` entry followed by its 4 KiB block.
//! `BASE` entries come first: the non-zero blocks of the image when recording started,
//! so a log replays on its own without the original image.
//!
//! Which writes a crash at flush N keeps. The recorder sees submissions, not completions,
//! so it also records every `wait_writes` that returned. A write is *known complete*
//! once a `WAIT` follows it; a `FLUSH` makes every known-complete write durable, and a
//! FUA write is durable once known complete. Every other write submitted before the cut
//! may or may not have reached the media: without `--drop-unflushed` all of them are kept
//! (the most-persisted state); with it, each is independently kept or dropped by a PRNG
//! seeded with SEED. This is deliberately the crash model of docs/INVARIANTS.md: a flush covers
//! only writes that had completed, so an fsync that forgets to wait for its chain is
//! caught by replay.

use crate::error::{CliError, Result};
use rollfs_core::{Block, BlockDevice, IoError, WriteFlags, BLOCK_SIZE};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

pub const LOG_MAGIC: &[u8; 8] = b"RLFSWLOG";
pub const LOG_VERSION: u32 = 1;
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
}

impl Tag {
    fn from_u8(v: u8) -> Option<Tag> {
        Some(match v {
            1 => Tag::Base,
            2 => Tag::Write,
            3 => Tag::Wait,
            4 => Tag::Flush,
            5 => Tag::Discard,
            _ => return None,
        })
    }
    fn has_data(self) -> bool {
        matches!(self, Tag::Base | Tag::Write)
    }
}

/// A block device that passes everything to `inner` and logs it.
pub struct RecordingDevice<D: BlockDevice> {
    inner: D,
    log: BufWriter<File>,
    /// First failure to write the log; reported as a device error so the recording is
    /// never silently incomplete.
    log_failed: bool,
}

impl<D: BlockDevice> RecordingDevice<D> {
    /// Starts a log at `log_path` with a snapshot of the device's current contents.
    /// `data_file`, when given, is the image file behind `inner`; its holes are skipped.
    pub fn create(mut inner: D, log_path: &Path, data_file: Option<&File>) -> Result<Self> {
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
        log.flush().map_err(io_err)?;
        Ok(RecordingDevice { inner, log, log_failed: false })
    }

    pub fn inner(&self) -> &D {
        &self.inner
    }

    fn rec(&mut self, tag: Tag, flags: u8, addr: u64, count: u64, data: Option<&Block>) -> Result<(), IoError> {
        if !self.log_failed {
            let mut r = write_entry(&mut self.log, tag, flags, addr, count, data);
            if r.is_ok() && matches!(tag, Tag::Flush | Tag::Wait) {
                // Hand the log to the OS at every flush and wait: a killed daemon then
                // leaves a log complete up to its last durability point, and a test that
                // reads the log right after an fsync returned sees all of that fsync.
                r = self.log.flush();
            }
            self.log_failed = r.is_err();
        }
        if self.log_failed {
            return Err(IoError { block: addr, op: "record" });
        }
        Ok(())
    }
}

impl<D: BlockDevice> Drop for RecordingDevice<D> {
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
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.inner.write(addr, data, flags)?;
        if flags.contains(WriteFlags::PREFLUSH) {
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
        self.rec(Tag::Flush, 0, IoError::FLUSH_BLOCK, 0, None)
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        self.inner.discard(addr, count)?;
        self.rec(Tag::Discard, 0, addr, count, None)
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
        if version != LOG_VERSION {
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

    /// The number of entries up to and including the N-th flush (the replay cut of
    /// `--at-flush N`); `None` if the log has fewer flushes.
    pub fn cut_after_flush(&self, n: u64) -> Option<usize> {
        if n == 0 {
            return Some(self.entries.iter().position(|e| e.tag == Tag::Flush).unwrap_or(self.entries.len()));
        }
        let mut seen = 0;
        for (i, e) in self.entries.iter().enumerate() {
            if e.tag == Tag::Flush {
                seen += 1;
                if seen == n {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    pub fn flush_count(&self) -> u64 {
        self.entries.iter().filter(|e| e.tag == Tag::Flush).count() as u64
    }

    pub fn write_count(&self) -> u64 {
        self.entries.iter().filter(|e| e.tag == Tag::Write).count() as u64
    }

    fn read_block(&self, e: &Entry, buf: &mut Block) -> io::Result<()> {
        self.file.read_exact_at(buf, e.data_off)
    }
}

/// Where to cut the log and what to drop.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayOptions {
    /// Power loss right after the N-th flush (1-based; 0 = before the first flush).
    /// `None`: at the end of the log.
    pub at_flush: Option<u64>,
    /// Drop each write not yet made durable with probability 1/2, from this seed.
    pub drop_unflushed: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReplaySummary {
    pub flushes_in_log: u64,
    pub writes_in_log: u64,
    /// Writes before the cut that a flush had made durable (or FUA, known complete).
    pub durable_writes: u64,
    /// Writes before the cut that were not yet durable.
    pub unflushed_writes: u64,
    /// Of those, how many the replay dropped.
    pub dropped_writes: u64,
}

/// splitmix64: small, well-mixed, and the same on every platform.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Decides, for every entry before the cut, whether it is applied. Returns the cut index
/// and the keep flags.
fn plan(log: &WriteLog, opts: &ReplayOptions, summary: &mut ReplaySummary) -> Result<(usize, Vec<bool>), String> {
    let n = log.entries.len();
    let cut = match opts.at_flush {
        None => n,
        Some(k) => log
            .cut_after_flush(k)
            .ok_or_else(|| format!("--at-flush {k}: the log has only {} flushes", log.flush_count()))?,
    };
    let mut durable = vec![false; n];
    let mut pending: Vec<usize> = Vec::new(); // submitted, not known complete
    let mut completed: Vec<usize> = Vec::new(); // known complete, not yet flushed
    for (i, e) in log.entries[..cut].iter().enumerate() {
        match e.tag {
            Tag::Base | Tag::Discard => durable[i] = true,
            Tag::Write => pending.push(i),
            Tag::Wait => {
                for j in pending.drain(..) {
                    if log.entries[j].flags & WriteFlags::FUA.bits() != 0 {
                        durable[j] = true;
                    } else {
                        completed.push(j);
                    }
                }
            }
            Tag::Flush => {
                for j in completed.drain(..) {
                    durable[j] = true;
                }
            }
        }
    }
    let mut keep = durable.clone();
    let mut rng = opts.drop_unflushed.unwrap_or(0);
    for (i, e) in log.entries[..cut].iter().enumerate() {
        if e.tag != Tag::Write {
            continue;
        }
        if durable[i] {
            summary.durable_writes += 1;
            continue;
        }
        summary.unflushed_writes += 1;
        keep[i] = match opts.drop_unflushed {
            None => true,
            Some(_) => splitmix64(&mut rng) & 1 == 0,
        };
        if !keep[i] {
            summary.dropped_writes += 1;
        }
    }
    Ok((cut, keep))
}

/// Summarises a log without replaying it.
pub fn summarize(log: &WriteLog) -> ReplaySummary {
    ReplaySummary { flushes_in_log: log.flush_count(), writes_in_log: log.write_count(), ..Default::default() }
}

/// Builds `out` as a crash at the chosen point would leave the device.
pub fn replay(log_path: &Path, out: &Path, opts: &ReplayOptions) -> Result<ReplaySummary> {
    let log = WriteLog::open(log_path)?;
    let mut summary = summarize(&log);
    let (cut, keep) = plan(&log, opts, &mut summary).map_err(CliError::BadOption)?;
    let out_err = |e| CliError::io(out, "write the replayed image", e);
    let f = crate::secure::create_private(out, "write the replayed image")?;
    f.set_len(log.block_count * BLOCK_SIZE as u64).map_err(out_err)?;
    let mut buf = [0u8; BLOCK_SIZE];
    let zero = [0u8; BLOCK_SIZE];
    for (i, e) in log.entries[..cut].iter().enumerate() {
        if !keep[i] {
            continue;
        }
        match e.tag {
            Tag::Base | Tag::Write => {
                log.read_block(e, &mut buf).map_err(|e| CliError::io(log_path, "read the write log", e))?;
                f.write_all_at(&buf, e.addr * BLOCK_SIZE as u64).map_err(out_err)?;
            }
            Tag::Discard => {
                for a in e.addr..e.addr.saturating_add(e.count).min(log.block_count) {
                    f.write_all_at(&zero, a * BLOCK_SIZE as u64).map_err(out_err)?;
                }
            }
            Tag::Wait | Tag::Flush => {}
        }
    }
    f.sync_all().map_err(out_err)?;
    let _ = (&log.file).seek(SeekFrom::Start(0));
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
            let mut r = RecordingDevice::create(mem, &log, None).unwrap();
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
        let s = replay(&log, &out, &ReplayOptions { at_flush: Some(2), drop_unflushed: Some(1) }).unwrap();
        assert_eq!((s.durable_writes, s.unflushed_writes), (1, 1));
        assert_eq!(read_img(&out, 0), 0xAA);
        assert_eq!(read_img(&out, 1), 1);
        // Block 2 is kept or dropped depending on the seed; find seeds for both.
        let mut seen = [false; 2];
        for seed in 0..16 {
            replay(&log, &out, &ReplayOptions { at_flush: Some(2), drop_unflushed: Some(seed) }).unwrap();
            seen[(read_img(&out, 2) == 2) as usize] = true;
        }
        assert_eq!(seen, [true, true]);
        let s = replay(&log, &out, &ReplayOptions { at_flush: Some(3), drop_unflushed: Some(7) }).unwrap();
        assert_eq!((s.durable_writes, s.unflushed_writes, s.dropped_writes), (3, 0, 0));
        assert_eq!((read_img(&out, 2), read_img(&out, 3)), (2, 3));
        replay(&log, &out, &ReplayOptions::default()).unwrap();
        assert_eq!(read_img(&out, 1), 0, "discarded");
        let e = replay(&log, &out, &ReplayOptions { at_flush: Some(9), drop_unflushed: None }).unwrap_err();
        assert!(e.to_string().contains("only 3 flushes"), "{e}");
        replay(&log, &out, &ReplayOptions { at_flush: Some(0), drop_unflushed: Some(3) }).unwrap();
        assert_eq!(read_img(&out, 0), 0xAA);
    }

    #[test]
    fn truncated_and_foreign_logs() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("w.log");
        {
            let mut r = RecordingDevice::create(MemDevice::new(8), &log, None).unwrap();
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
}
