//! Reads in runs and reads planned for a driver that reads the device outside its lock
//! (issue 14's read path).
//!
//! - `planned_read_equals_read_at_every_offset`: `read_planned` + reading its runs gives
//!   exactly what `read` gives, for reads at block and byte offsets over a file mixing
//!   device blocks (adjacent and not), cached dirty blocks, holes, a partial last block and
//!   blocks staged by an atomic write; and `read` itself issues one device request per
//!   run of adjacent blocks.
//! - `a_planned_block_that_fails_its_checksum_fails_verify_and_read_reports_it`.
//! - `no_planned_block_is_written_or_discarded_before_a_reuse_fence`: the invariant the
//!   driver's unlocked read rests on. A device wrapper watches the blocks of a plan and
//!   records any write or discard of them that no `reuse_fence` preceded, while the file
//!   is overwritten, checkpointed and the device filled until the blocks are reused.
//! - `the_fence_checker_reports_a_reuse_without_fence`: the wrapper catches the bug.

use rollfs_core::file::ReadPlan;
use rollfs_core::*;
use std::collections::BTreeSet;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 0, gid: 0 };
const B: usize = BLOCK_SIZE;

/// Counts device read requests (a run is one request) on top of a MemDevice.
struct Counting {
    inner: MemDevice,
    requests: u64,
}

impl BlockDevice for Counting {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.requests += 1;
        self.inner.read(addr, buf)
    }
    fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        self.requests += 1;
        for (i, b) in blocks.iter_mut().enumerate() {
            self.inner.read(addr + i as u64, b)?;
        }
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        self.inner.discard(addr, count)
    }
}

fn content(tag: u8, idx: u64) -> Vec<u8> {
    let mut b = vec![tag; B];
    b[..8].copy_from_slice(&idx.to_le_bytes());
    b
}

fn mkfs(blocks: u64) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [9; 16], ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).unwrap()
}

/// Reads the plan's runs from the filesystem's device into `buf` and verifies them.
fn complete<D: BlockDevice>(fs: &mut Filesystem<D>, plan: &ReadPlan, buf: &mut [u8]) -> bool {
    let mut ok = true;
    for run in &plan.runs {
        let (blocks, rest) = buf[run.buf_offset..run.buf_offset + run.blocks * B].as_chunks_mut::<B>();
        assert!(rest.is_empty());
        fs.device_mut().read_run(run.addr, blocks).unwrap();
        ok &= run.verify(blocks);
    }
    ok
}

#[test]
fn planned_read_equals_read_at_every_offset() {
    let dev = Counting { inner: mkfs(8192), requests: 0 };
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let ino = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    // 40 blocks written in order (adjacent on the device), a hole at 40..44, 8 more
    // blocks, then a checkpoint: all of them on the device.
    for i in (0..40).chain(44..52) {
        fs.write(ino, i * B as u64, &content(1, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    // Rewrite every third block (their new copies land elsewhere: runs break), then
    // checkpoint again; then dirty blocks 5 and 6 in the cache and a partial last block.
    for i in (0..52).step_by(3).filter(|i| !(40..44).contains(i)) {
        fs.write(ino, i * B as u64, &content(2, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    fs.write(ino, 5 * B as u64, &content(3, 5), T).unwrap();
    fs.write(ino, 6 * B as u64 + 100, &[7u8; 50], T).unwrap();
    fs.write(ino, 52 * B as u64, &[9u8; 1000], T).unwrap();
    let size = 52 * B + 1000;

    // One request per run of adjacent blocks, not per block.
    fs.device_mut().requests = 0;
    let mut whole = vec![0u8; size];
    assert_eq!(fs.read(ino, 0, &mut whole).unwrap(), size);
    let requests = fs.device().requests;
    assert!(requests < 40, "{requests} device requests for 49 blocks on the device");

    let offsets = [0usize, 1, B - 1, B, 3 * B, 5 * B + 17, 39 * B, 40 * B, 43 * B + 5, 51 * B, 52 * B, size - 1];
    let lens = [1usize, 100, B, 2 * B, 7 * B + 3, 20 * B, size];
    for &off in &offsets {
        for &len in &lens {
            let mut expect = vec![0u8; len];
            let n = fs.read(ino, off as u64, &mut expect).unwrap();
            let mut got = vec![0xeeu8; len];
            let plan = fs.read_planned(ino, off as u64, &mut got).unwrap();
            assert_eq!(plan.len, n, "length at {off}+{len}");
            assert!(complete(&mut fs, &plan, &mut got), "verify at {off}+{len}");
            assert_eq!(got[..n], expect[..n], "bytes at {off}+{len}");
            assert_eq!(&expect[..n], &whole[off.min(size)..(off + n).min(size)]);
            for run in &plan.runs {
                assert_eq!(run.buf_offset % B, (B - off % B) % B, "runs hold whole blocks");
                assert!(run.blocks >= 1 && run.crcs.as_ref().unwrap().len() == run.blocks);
            }
        }
    }

    // Blocks staged by an atomic write are the session's view, from memory.
    fs.start_atomic_write(ino).unwrap();
    fs.write(ino, 10 * B as u64, &content(4, 10), T).unwrap();
    let mut expect = vec![0u8; 20 * B];
    fs.read(ino, 0, &mut expect).unwrap();
    let mut got = vec![0u8; 20 * B];
    let plan = fs.read_planned(ino, 0, &mut got).unwrap();
    assert!(complete(&mut fs, &plan, &mut got));
    assert_eq!(got, expect);
    assert_eq!(&got[10 * B..11 * B], &content(4, 10)[..]);
}

#[test]
fn a_planned_block_that_fails_its_checksum_fails_verify_and_read_reports_it() {
    let mut fs = Filesystem::mount(mkfs(8192), &MountOptions::default(), T).unwrap();
    let ino = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    for i in 0..8 {
        fs.write(ino, i * B as u64, &content(1, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    let mut buf = vec![0u8; 8 * B];
    let plan = fs.read_planned(ino, 0, &mut buf).unwrap();
    let bad = plan.runs[0].addr + 3;
    fs.device_mut().block_mut(bad)[100] ^= 1;
    assert!(!complete(&mut fs, &plan, &mut buf), "a flipped bit must fail verify");
    match fs.read(ino, 0, &mut buf) {
        Err(Error::DataChecksum { block, .. }) => assert_eq!(block, bad),
        other => panic!("read of a bad block: {other:?}"),
    }
}

/// Watches blocks and records every write or discard of a watched block that came with no
/// `reuse_fence` since the watch began: what an unlocked reader would have misread.
struct FenceCheck {
    inner: MemDevice,
    fences: u64,
    watched: BTreeSet<u64>,
    fences_at_watch: u64,
    violations: Vec<String>,
    reused_after_fence: u64,
}

impl FenceCheck {
    fn touch(&mut self, addr: u64, what: &str) {
        if self.watched.contains(&addr) {
            if self.fences == self.fences_at_watch {
                self.violations.push(format!("{what} of planned block {addr} before any reuse fence"));
            } else {
                self.reused_after_fence += 1;
            }
        }
    }
}

impl BlockDevice for FenceCheck {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.inner.read(addr, buf)
    }
    fn reuse_fence(&mut self) {
        self.fences += 1;
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.touch(addr, "write");
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        for a in addr..addr + count {
            self.touch(a, "discard");
        }
        self.inner.discard(addr, count)
    }
}

fn fence_check(img: MemDevice) -> FenceCheck {
    FenceCheck {
        inner: img,
        fences: 0,
        watched: BTreeSet::new(),
        fences_at_watch: 0,
        violations: Vec::new(),
        reused_after_fence: 0,
    }
}

#[test]
fn no_planned_block_is_written_or_discarded_before_a_reuse_fence() {
    // 16 MiB, 64 KiB segments: the device fills and blocks get reused quickly.
    let mut fs = Filesystem::mount(fence_check(mkfs(4096)), &MountOptions::default(), T).unwrap();
    let a = fs.create(1, b"a", 0o644, C, T).unwrap().ino;
    for i in 0..64 {
        fs.write(a, i * B as u64, &content(1, i), T).unwrap();
    }
    fs.sync(T).unwrap();
    for round in 0..40u64 {
        // A reader plans a read of the whole file, as the driver does under its lock.
        let mut buf = vec![0u8; 64 * B];
        let plan = fs.read_planned(a, 0, &mut buf).unwrap();
        let dev = fs.device_mut();
        dev.watched = plan.runs.iter().flat_map(|r| r.addr..r.addr + r.blocks as u64).collect();
        dev.fences_at_watch = dev.fences;
        // Meanwhile: the file is rewritten (fsync'd, so its old blocks are invalidated
        // without a checkpoint first), another file grows and shrinks, checkpoints come.
        for i in 0..64 {
            fs.write(a, i * B as u64, &content(round as u8 + 2, i), T).unwrap();
            if i % 16 == 15 {
                fs.fsync(a, false, T).unwrap();
            }
        }
        let name = format!("fill{round}");
        let f = fs.create(1, name.as_bytes(), 0o644, C, T).unwrap().ino;
        for i in 0..400 {
            fs.write(f, i * B as u64, &content(9, i), T).unwrap();
        }
        fs.sync(T).unwrap();
        fs.unlink(1, name.as_bytes(), T).unwrap();
        fs.sync(T).unwrap();
    }
    let dev = fs.device();
    assert!(dev.violations.is_empty(), "{:?}", &dev.violations[..dev.violations.len().min(5)]);
    assert!(dev.reused_after_fence > 0, "the test never reused a planned block: it proved nothing");
    assert!(dev.fences >= 80, "one fence per checkpoint ({} fences)", dev.fences);
}

#[test]
fn the_fence_checker_reports_a_reuse_without_fence() {
    let mut dev = fence_check(MemDevice::new(64));
    dev.watched.insert(7);
    dev.write(8, &[0; B], WriteFlags::empty()).unwrap();
    assert!(dev.violations.is_empty());
    dev.write(7, &[0; B], WriteFlags::empty()).unwrap();
    dev.discard(0, 16).unwrap();
    assert_eq!(dev.violations.len(), 2, "{:?}", dev.violations);
    dev.reuse_fence();
    dev.write(7, &[0; B], WriteFlags::empty()).unwrap();
    assert_eq!((dev.violations.len(), dev.reused_after_fence), (2, 1));
}
