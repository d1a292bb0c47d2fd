//! Data checksums (format 2.0) under faults: cached bytes of a bad block that cleaning is
//! moving are never returned, whatever stops the cleaning (`read_block_opt`); a bad directory
//! block does not stop roll-forward (`recover_dentry`); a failed atomic write stages nothing
//! (`atomic_write`); and checks that hold (marked "holds"): failed plain writes, bad blocks
//! moved then fsync'd, nodatasum images, seeded crash stress never giving a false checksum
//! error, corrupt pointers in sealed nodes.
//!
//! From an adversarial review of the data checksums: the tests not marked "holds" reproduce
//! its findings (each failed on the code under review and passes with its fix); the others
//! check scenarios it suspected.

mod common;
use common::images::{cleaning_victim_image, content};
use common::pointers::pointers;
use common::probe::Rng;
use common::CrashDevice;
use rollfs_core::fsck::{self, FsckOptions};
use rollfs_core::layout::*;
use rollfs_core::node;
use rollfs_core::*;
use rollfs_core::{BlockDevice, IoError, WriteFlags};

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };
const BS: u64 = BLOCK_SIZE as u64;
/// File offsets of the stress workload span this many blocks (8 files: space pressure).
const SPAN: u64 = 60;

/// A MemDevice whose reads of chosen blocks fail (a bad sector), and that can count reads.
#[derive(Clone)]
struct FlakyDev {
    inner: MemDevice,
    fail_reads: Vec<u64>,
    fail_writes: bool,
}

impl BlockDevice for FlakyDev {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> std::result::Result<(), IoError> {
        if self.fail_reads.contains(&addr) {
            return Err(IoError { block: addr, op: "read" });
        }
        self.inner.read(addr, buf)
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> std::result::Result<(), IoError> {
        if self.fail_writes {
            return Err(IoError { block: addr, op: "write" });
        }
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> std::result::Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> std::result::Result<(), IoError> {
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> std::result::Result<(), IoError> {
        self.inner.discard(addr, count)
    }
}

fn mkfs_mem(blocks: u64, data_checksums: bool) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [7; 16], data_checksums, ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).unwrap()
}

/// [`cleaning_victim_image`] with /f's two blocks; also returns their addresses.
fn victim_image() -> (MemDevice, Ino, u32, u32) {
    let (mut dev, f) = cleaning_victim_image(2);
    let p = pointers(&mut dev, f);
    assert_eq!(p.len(), 2);
    assert_eq!(p[1].1, p[0].1 + 1, "both blocks in one segment, in order");
    (dev, f, p[0].1, p[1].1)
}

// ---------------------------------------------------------------------------------------
// FINDING 1: cleaning reads a bad block into the write-back cache (bad bytes, kept crc),
// then fails on a later block of the same victim (an I/O error or a metadata error):
// `move_segment` returns early, no checkpoint follows, the filesystem stays writable, and
// the bad bytes sit in `self.data`, which `read_block_opt` trusts. Reads return corrupt
// bytes; a partial write read-modify-writes them and `put_dirty_block` drops the kept crc:
// the corruption is laundered into a block with a fresh, matching checksum.
// ---------------------------------------------------------------------------------------

/// Failed before the review fixes (a2606d7..): the read returns the flipped bytes.
#[test]
fn cleaning_error_after_a_bad_block_never_returns_its_bytes() {
    let (mut dev, f, bad, next) = victim_image();
    dev.block_mut(bad as u64)[100] ^= 0x10;
    let dev = FlakyDev { inner: dev, fail_reads: Vec::new(), fail_writes: false };
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let mut buf = vec![0u8; BLOCK_SIZE];
    assert!(matches!(fs.read(f, 0, &mut buf), Err(Error::DataChecksum { .. })), "bad before cleaning");
    fs.device_mut().fail_reads.push(next as u64);
    // Bounded: each successful round checkpoints; the victim segment comes up.
    let mut err = None;
    for _ in 0..200 {
        match fs.gc_background(T) {
            Ok(true) => continue,
            Ok(false) => break,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    assert!(matches!(err, Some(Error::Io { .. })), "cleaning hit the unreadable block: {err:?}");
    assert!(!fs.is_shut_down(), "a read error while cleaning leaves the filesystem writable");
    fs.device_mut().fail_reads.clear();
    let r = fs.read(f, 0, &mut buf);
    assert!(
        matches!(r, Err(Error::DataChecksum { .. })),
        "read of the bad block after a failed cleaning round: {r:?} (bytes differ from what was written: {})",
        buf != content(8, 0)
    );
}

/// Failed before the review fixes (a2606d7..): a partial write after the failed cleaning round
/// launders the bad block (new checksum over corrupt bytes), reads then succeed with
/// bytes never written.
#[test]
fn cleaning_error_then_partial_write_never_launders_a_bad_block() {
    let (mut dev, f, bad, next) = victim_image();
    dev.block_mut(bad as u64)[100] ^= 0x10;
    let dev = FlakyDev { inner: dev, fail_reads: Vec::new(), fail_writes: false };
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    fs.device_mut().fail_reads.push(next as u64);
    for _ in 0..200 {
        match fs.gc_background(T) {
            Ok(true) => continue,
            _ => break,
        }
    }
    fs.device_mut().fail_reads.clear();
    let w = fs.write(f, 10, b"xyz", T);
    let dev = fs.unmount(T).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions { read_only: true, ..Default::default() }, T).unwrap();
    let mut buf = vec![0u8; BLOCK_SIZE];
    let r = fs.read(f, 0, &mut buf);
    let mut written = content(8, 0);
    written[10..13].copy_from_slice(b"xyz");
    assert!(
        matches!(r, Err(Error::DataChecksum { .. })) || (r == Ok(BLOCK_SIZE) && buf == written),
        "partial write {w:?}, then read {r:?}: bytes never written returned with a good checksum"
    );
}

/// Failed before the review fixes (a2606d7..) (same root cause as above): cleaning moved the bad block
/// into the cache, then its checkpoint failed on a write error. The filesystem shuts down
/// (read-only), but reads are still served from the cache: the corrupt bytes come back.
#[test]
fn cleaning_checkpoint_failure_never_returns_a_bad_blocks_bytes() {
    let (mut dev, f, bad, _) = victim_image();
    dev.block_mut(bad as u64)[100] ^= 0x10;
    let dev = FlakyDev { inner: dev, fail_reads: Vec::new(), fail_writes: false };
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    fs.device_mut().fail_writes = true;
    let r = fs.gc_background(T);
    assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
    assert!(fs.is_shut_down());
    let mut buf = vec![0u8; BLOCK_SIZE];
    let r = fs.read(f, 0, &mut buf);
    assert!(matches!(r, Err(Error::DataChecksum { .. })), "read after the failed cleaning checkpoint: {r:?}");
}

// ---------------------------------------------------------------------------------------
// FINDING 3 (minor, failure atomicity): `atomic_write` stages block by block; when the
// read of a partial block fails its checksum, the blocks before it are already staged.
// The write returns EIO, but a commit publishes part of it.
// ---------------------------------------------------------------------------------------

/// A mounted image whose /f has two blocks, the second with a flipped bit.
fn file_with_bad_second_block() -> (Filesystem<MemDevice>, Ino) {
    let mut fs = Filesystem::mount(mkfs_mem(2048, true), &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    fs.write(f, 0, &[content(1, 0), content(1, 1)].concat(), T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let p = pointers(&mut dev, f);
    dev.block_mut(p[1].1 as u64)[9] ^= 2;
    (Filesystem::mount(dev, &MountOptions::default(), T).unwrap(), f)
}

/// Failed before the review fixes (a2606d7..) if the staged prefix survives the failed write.
#[test]
fn a_failed_atomic_write_stages_nothing() {
    let (mut fs, f) = file_with_bad_second_block();
    fs.start_atomic_write(f).unwrap();
    // Block 0 whole, block 1 partly: the read of block 1 fails.
    let w = fs.write(f, 0, &vec![0xEE; BLOCK_SIZE + 10], T);
    assert!(matches!(w, Err(Error::DataChecksum { .. })), "{w:?}");
    fs.commit_atomic_write(f, T).unwrap();
    let mut buf = vec![0u8; BLOCK_SIZE];
    fs.read(f, 0, &mut buf).unwrap();
    assert_eq!(buf, content(1, 0), "a write that returned EIO was partly committed");
}

/// holds: the same for a plain write (phase 1 reads before anything changes).
#[test]
fn holds_a_failed_plain_write_changes_nothing() {
    let (mut fs, f) = file_with_bad_second_block();
    let w = fs.write(f, 0, &vec![0xEE; BLOCK_SIZE + 10], T);
    assert!(matches!(w, Err(Error::DataChecksum { .. })), "{w:?}");
    let mut buf = vec![0u8; BLOCK_SIZE];
    fs.read(f, 0, &mut buf).unwrap();
    assert_eq!(buf, content(1, 0));
    // Truncate into the bad block, zero range / punch with an edge in it: EIO, nothing
    // changed; punching it whole frees it; the rest of the file stays.
    assert!(matches!(
        fs.setattr(f, &SetAttr { size: Some(BS + 5), ..Default::default() }, T),
        Err(Error::DataChecksum { .. })
    ));
    assert!(matches!(fs.zero_range(f, BS + 1, 10, true, T), Err(Error::DataChecksum { .. })));
    fs.punch_hole(f, BS, BS, T).unwrap();
    assert_eq!(fs.read(f, BS, &mut buf), Ok(BLOCK_SIZE));
    assert_eq!(buf, vec![0u8; BLOCK_SIZE]);
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(r.is_clean(), "{r:?}");
}

// ---------------------------------------------------------------------------------------
// FINDING 2: roll-forward links a recovered new file into its directory through
// `recover_dentry` -> `dir_lookup` -> `read_block_opt`. A dentry block that fails its
// checksum makes `apply_batch` return Err, and the whole mount fails (read-only too):
// one flipped bit in a directory turns "EIO on that directory" into "image does not
// mount" (format 1 mounted it: a flip in another entry's name decoded fine).
// ---------------------------------------------------------------------------------------

fn dir_with_pending_new_file() -> (MemDevice, Ino, u32) {
    let mut fs = Filesystem::mount(CrashDevice::new(mkfs_mem(4096, true)), &MountOptions::default(), T).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, T).unwrap().ino;
    for i in 0..5 {
        fs.create(d, format!("old{i}").as_bytes(), 0o644, C, T).unwrap();
    }
    fs.sync(T).unwrap();
    let cps = fs.stats().checkpoints;
    let n = fs.create(d, b"new", 0o644, C, T).unwrap().ino;
    fs.write(n, 0, &content(4, 0), T).unwrap();
    fs.fsync(n, false, T).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "rolled forward, not checkpointed");
    let mut img = fs.into_device().crash(|_| true);
    let p = pointers(&mut img, d);
    assert_eq!(p.len(), 1, "one dentry block");
    (img, d, p[0].1)
}

/// holds: the baseline (no flip) recovers the file.
#[test]
fn holds_pending_new_file_in_a_good_directory_recovers() {
    let (img, d, _) = dir_with_pending_new_file();
    let mut fs = Filesystem::mount(img, &MountOptions::default(), T).unwrap();
    assert!(fs.lookup(d, b"new").is_ok());
}

/// Failed before the review fixes (a2606d7..): mount returns EIO (DataChecksum) instead of mounting
/// with the directory reading EIO.
#[test]
fn a_bad_dentry_block_does_not_stop_roll_forward_from_mounting() {
    let (mut img, d, addr) = dir_with_pending_new_file();
    // A bit in the last bytes of the block: padding/name area of the dentry block.
    img.block_mut(addr as u64)[4000] ^= 0x01;
    for ro in [true, false] {
        let r = Filesystem::mount(img.clone(), &MountOptions { read_only: ro, ..Default::default() }, T);
        match r {
            Ok(mut fs) => {
                let l = fs.readdir(d, 0, &mut |_| true);
                assert!(matches!(l, Err(Error::DataChecksum { .. })), "{l:?}");
            }
            Err(e) => panic!("read_only={ro}: one flipped bit in a dentry block fails the mount: {e}"),
        }
    }
    // The fsync'd file is kept (unreachable, counted), and fsck --repair links it into
    // /lost+found with its data.
    let fs = Filesystem::mount(img, &MountOptions::default(), T).unwrap();
    assert_eq!(fs.stats().recovery_unlinked_inodes, 1);
    let mut dev = fs.unmount(T).unwrap();
    let verify = fsck::FsckOptions { verify_data: true };
    let rep = fsck::repair_with(&mut dev, T, &verify, &mut |_, _| {}).unwrap();
    assert!(!rep.before.problems.is_empty() && rep.changed(), "{rep:#?}");
    // The dentry block has a checksum of its own: repair drops it (the directory loses
    // those names) and links the files it named that hold data into /lost+found.
    assert!(rep.is_clean(), "{rep:#?}");
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let lf = fs.lookup(1, b"lost+found").unwrap().ino;
    let mut names = Vec::new();
    fs.readdir(lf, 0, &mut |e| {
        if e.name != b"." && e.name != b".." {
            names.push(e.name.to_vec());
        }
        true
    })
    .unwrap();
    // Repair links unreachable files that hold data (the five old ones are empty).
    assert_eq!(names.len(), 1, "the recovered file, in /lost+found");
    let found = names.iter().any(|n| {
        let f = fs.lookup(lf, n).unwrap().ino;
        let mut buf = vec![0u8; BLOCK_SIZE];
        fs.read(f, 0, &mut buf) == Ok(BLOCK_SIZE) && buf == content(4, 0)
    });
    assert!(found, "the fsync'd file's data is in /lost+found");
}

// ---------------------------------------------------------------------------------------
// Suspected scenarios that hold.
// ---------------------------------------------------------------------------------------

/// holds: a GC-moved bad block followed by fsync of the file and a crash: the batch carries
/// the kept checksum (roll-forward applies the node's crc, verifies the content crc).
#[test]
fn holds_bad_block_moved_then_fsynced_stays_bad_after_roll_forward() {
    let (mut dev, f, bad, _) = victim_image();
    dev.block_mut(bad as u64)[7] ^= 0x80;
    let mut fs = Filesystem::mount(CrashDevice::new(dev), &MountOptions::default(), T).unwrap();
    for _ in 0..200 {
        if !fs.gc_background(T).unwrap() {
            break;
        }
    }
    assert_eq!(fs.stats().gc_bad_blocks_moved, 1);
    fs.write(f, BS, &content(9, 1), T).unwrap();
    fs.fsync(f, false, T).unwrap();
    let img = fs.into_device().crash(|_| true);
    let mut fs = Filesystem::mount(img, &MountOptions::default(), T).unwrap();
    let mut buf = vec![0u8; BLOCK_SIZE];
    assert!(matches!(fs.read(f, 0, &mut buf), Err(Error::DataChecksum { .. })));
    assert_eq!(fs.read(f, BS, &mut buf), Ok(BLOCK_SIZE));
    assert_eq!(buf, content(9, 1));
}

/// holds: -O nodatasum images never report checksum errors, through cleaning, SSR,
/// roll-forward and fsck --verify-data.
#[test]
fn holds_nodatasum_never_reports_checksum_errors() {
    for seed in 1..4u64 {
        let stats = stress(seed, false, 500);
        assert_eq!(stats.0, 0, "seed {seed}: checksum errors on a nodatasum image");
    }
}

/// holds: random workload (partial writes, overwrites, truncate, punch, zero range,
/// fallocate, atomic commit/abort, fsync, sync, unlink, symlinks, xattrs, directories,
/// background cleaning under space pressure with SSR), crashes at many points with random
/// lost and torn (512-byte sector) pending writes: every recovered image mounts, every
/// file, directory and symlink reads without a checksum error, and fsck --verify-data
/// reports no bad block.
#[test]
fn holds_random_crashes_never_produce_false_checksum_errors() {
    let mut checked = 0;
    // REVIEW_SEEDS=N runs more seeds (a longer hunt).
    let seeds: u64 = std::env::var("REVIEW_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(6);
    for seed in 1..=seeds {
        let (errs, n) = stress(seed, true, 700);
        assert_eq!(errs, 0);
        checked += n;
    }
    eprintln!("crash images checked: {checked}");
    assert!(checked > 50);
}

/// Reads everything reachable from the root; panics on a checksum error. Bounded.
fn read_all<D: BlockDevice>(fs: &mut Filesystem<D>, what: &str) {
    let mut queue = vec![1 as Ino];
    let mut seen = 0;
    while let Some(d) = queue.pop() {
        seen += 1;
        assert!(seen < 10_000);
        let mut entries = Vec::new();
        fs.readdir(d, 0, &mut |e| {
            entries.push(e);
            true
        })
        .unwrap_or_else(|e| panic!("{what}: readdir {d}: {e}"));
        for e in entries {
            if e.name == b"." || e.name == b".." {
                continue;
            }
            let a = fs.getattr(e.ino).unwrap();
            match a.kind {
                FileType::Directory => queue.push(e.ino),
                FileType::Symlink => {
                    fs.readlink(e.ino).unwrap_or_else(|x| panic!("{what}: readlink {}: {x}", e.ino));
                }
                FileType::Regular => {
                    let mut buf = vec![0u8; 64 * BLOCK_SIZE];
                    let mut off = 0;
                    while off < a.size {
                        let n = fs
                            .read(e.ino, off, &mut buf)
                            .unwrap_or_else(|x| panic!("{what}: read ino {} at {off}: {x}", e.ino));
                        assert!(n > 0);
                        off += n as u64;
                    }
                }
                _ => {}
            }
        }
    }
}

/// The regular files under the root and `d` (not the ballast): (ino, parent, name).
fn list_files<D: BlockDevice>(fs: &mut Filesystem<D>, d: Ino) -> Vec<(Ino, Ino, Vec<u8>)> {
    let mut out = Vec::new();
    for parent in [1, d] {
        let mut es = Vec::new();
        fs.readdir(parent, 0, &mut |e| {
            es.push(e);
            true
        })
        .unwrap();
        for e in es {
            if e.kind == FileType::Regular && e.name != b"ballast" && !e.name.starts_with(b"e") {
                out.push((e.ino, parent, e.name));
            }
        }
    }
    out
}

/// Checks a crash image: mounts (roll-forward), reads everything, fsck --verify-data.
/// Returns the checked image (after a clean unmount) and the checksum errors seen.
fn check_image(img: MemDevice, what: &str, recovered: &mut u64) -> MemDevice {
    // Before roll-forward: the checkpoint's blocks all verify (fsck reads the checkpoint).
    let rep = fsck::check_with(&mut img.clone(), &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(rep.bad_data.is_empty(), "{what}: fsck of the raw crash image: {:?}", rep.bad_data);
    // A read-only mount rolls forward in memory: everything reads.
    let mut ro = Filesystem::mount(img.clone(), &MountOptions { read_only: true, ..Default::default() }, T)
        .unwrap_or_else(|e| panic!("{what}: read-only mount after crash: {e}"));
    read_all(&mut ro, what);
    drop(ro);
    let mut rfs = Filesystem::mount(img, &MountOptions::default(), T)
        .unwrap_or_else(|e| panic!("{what}: mount after crash: {e}"));
    *recovered += rfs.stats().recovered_batches;
    read_all(&mut rfs, what);
    assert_eq!(rfs.stats().data_checksum_errors, 0, "{what}");
    let mut dev = rfs.unmount(T).unwrap();
    let rep = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(rep.problems.is_empty() && rep.bad_data.is_empty(), "{what}: fsck {:?} {:?}", rep.problems, rep.bad_data);
    dev
}

/// One seeded workload on a CrashDevice, with power cut in the middle of operations (the
/// pending writes then lost, kept, or torn at random sectors), each crash image checked
/// and the workload continued on it. Returns (checksum errors seen, crash images checked).
fn stress(seed: u64, datasum: bool, ops: usize) -> (u64, usize) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // Variations: out-of-order completion, a small dirty bound (checkpoints inside operations).
    let crash_dev = |m: MemDevice| {
        let mut c = CrashDevice::new(m);
        c.reverse_completion = seed.is_multiple_of(2);
        c
    };
    let mopts = MountOptions {
        dirty_bytes_max: if seed.is_multiple_of(3) { 48 * BS } else { MountOptions::default().dirty_bytes_max },
        ..Default::default()
    };
    let mut fs = Filesystem::mount(crash_dev(mkfs_mem(1536, datasum)), &mopts, T).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, T).unwrap().ino;
    for i in 0..8u32 {
        let parent = if i % 2 == 0 { 1 } else { d };
        fs.create(parent, format!("f{i}").as_bytes(), 0o644, C, T).unwrap();
    }
    // Ballast that random overwrites fragment: cleaning and SSR have work.
    let ballast_blocks = 720;
    let ballast = fs.create(1, b"ballast", 0o644, C, T).unwrap().ino;
    for i in 0..ballast_blocks / 16 {
        fs.write(ballast, i * 16 * BS, &vec![0x5A; 16 * BLOCK_SIZE], T).unwrap();
    }
    fs.sync(T).unwrap();
    let mut files = list_files(&mut fs, d);
    let mut checked = 0;
    let mut names = 0u32;
    let mut recovered = 0;
    let (mut moved, mut ssr) = (0, 0);
    for op in 0..ops {
        if files.is_empty() {
            names += 1;
            let a = fs.create(1, format!("r{names}").as_bytes(), 0o644, C, T).unwrap();
            files.push((a.ino, 1, format!("r{names}").into_bytes()));
        }
        let cut = rng.below(5) == 0;
        if cut {
            let w = fs.device().writes;
            fs.device_mut().power_cut_at = Some(w + 1 + rng.below(40));
        }
        let k = rng.below(files.len() as u64) as usize;
        let ino = files[k].0;
        let r: Result<()> = match rng.below(21) {
            0..=5 => {
                let off = rng.below(SPAN * BS) + if rng.below(2) == 0 { 0 } else { rng.below(BS) };
                let len = 1 + rng.below(6 * BS) as usize;
                let tag = rng.below(250) as u8 + 1;
                fs.write(ino, off, &vec![tag; len], T).map(|_| ())
            }
            6 => fs.setattr(ino, &SetAttr { size: Some(rng.below(SPAN * BS)), ..Default::default() }, T).map(|_| ()),
            7 => fs.punch_hole(ino, rng.below(SPAN * BS), rng.below(8 * BS) + 1, T),
            8 => fs.zero_range(ino, rng.below(SPAN * BS), rng.below(8 * BS) + 1, rng.below(2) == 0, T),
            9 => fs.fallocate(ino, rng.below(SPAN * BS), rng.below(8 * BS) + 1, rng.below(2) == 0, T),
            10..=12 => fs.fsync(ino, rng.below(2) == 0, T),
            13 => fs.sync(T),
            14 => {
                // An atomic transaction, committed or aborted.
                let r = fs.start_atomic_write(ino).and_then(|_| {
                    for _ in 0..1 + rng.below(4) {
                        let off = rng.below(40 * BS) + rng.below(BS);
                        fs.write(ino, off, &vec![rng.below(250) as u8 + 1; 1 + rng.below(2 * BS) as usize], T)?;
                    }
                    Ok(())
                });
                if rng.below(4) == 0 {
                    fs.abort_atomic_write(ino).and(r)
                } else {
                    match r.and_then(|_| fs.commit_atomic_write(ino, T)) {
                        Ok(()) => Ok(()),
                        Err(e) => {
                            let _ = fs.abort_atomic_write(ino);
                            Err(e)
                        }
                    }
                }
            }
            15 => {
                // Replace a file: unlink and create a new one under a new name.
                let (_, parent, name) = files[k].clone();
                names += 1;
                let new = format!("n{names}").into_bytes();
                fs.unlink(parent, &name, T).and_then(|_| {
                    let a = fs.create(parent, &new, 0o644, C, T)?;
                    files[k] = (a.ino, parent, new);
                    Ok(())
                })
            }
            16 => {
                names += 1;
                let target = vec![b'x'; 1 + rng.below(300) as usize];
                fs.symlink(d, format!("s{names}").as_bytes(), &target, C, T).map(|_| ())
            }
            17 => fs.setxattr(ino, b"user.k", &vec![3; rng.below(200) as usize], XattrSetMode::Any, T),
            18 => fs.gc_background(T).map(|_| ()),
            19 => {
                // Scattered overwrites of the ballast (partial and whole blocks).
                let mut r = Ok(0);
                for _ in 0..8 {
                    let off = rng.below(ballast_blocks * BS - 2 * BS);
                    r = r.and_then(|_| {
                        fs.write(ballast, off, &vec![rng.below(250) as u8; 1 + rng.below(BS) as usize], T)
                    });
                }
                if rng.below(3) == 0 {
                    r = r.and_then(|_| fs.fsync(ballast, false, T).map(|_| 0));
                }
                r.map(|_| ())
            }
            _ => {
                names += 1;
                fs.create(d, format!("e{names:0>60}").as_bytes(), 0o644, C, T).map(|_| ())
            }
        };
        let powered_off = fs.device().power_cut_at.is_some_and(|n| fs.device().writes >= n);
        match r {
            Ok(()) => {}
            Err(Error::NoSpace) | Err(Error::Invalid(_)) | Err(Error::NotFound) | Err(Error::Exists) => {}
            Err(Error::Io { .. }) | Err(Error::ShutDown) if powered_off => {}
            Err(e) => panic!("seed {seed} op {op}: {e}"),
        }
        if !cut {
            continue;
        }
        if !powered_off && rng.below(2) == 0 {
            fs.device_mut().power_cut_at = None;
            continue;
        }
        // The power fails now: each pending write lost, whole, or torn at random sectors.
        let pending = fs.device().pending();
        let masks: Vec<u8> = (0..pending)
            .map(|_| match rng.below(4) {
                0 => 0,
                1 => 0xFF,
                _ => rng.below(256) as u8,
            })
            .collect();
        let img = fs.device().crash_torn(|i| masks[i]);
        let st = fs.stats();
        moved += st.gc_blocks_moved;
        ssr += st.ssr_blocks;
        let what = format!("seed {seed} op {op} datasum {datasum} (pending {pending})");
        let dev = check_image(img, &what, &mut recovered);
        checked += 1;
        fs = Filesystem::mount(crash_dev(dev), &mopts, T).unwrap();
        files = list_files(&mut fs, d);
    }
    read_all(&mut fs, "live");
    let st = fs.stats();
    let errors = st.data_checksum_errors;
    eprintln!(
        "seed {seed}: gc moved {} ssr {} (before crashes: {moved} {ssr}), recovered batches {recovered}, images {checked}",
        st.gc_blocks_moved, st.ssr_blocks
    );
    let mut dev = fs.unmount(T).unwrap();
    let rep = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(rep.is_clean(), "seed {seed}: {:?} {:?}", rep.problems, rep.bad_data);
    (errors, checked)
}

/// Reads everything reachable, ignoring errors (bounded): for corrupted images.
fn read_all_lenient<D: BlockDevice>(fs: &mut Filesystem<D>) {
    let mut queue = vec![1 as Ino];
    let mut seen = 0;
    while let Some(d) = queue.pop() {
        seen += 1;
        if seen > 2_000 {
            return;
        }
        let mut entries = Vec::new();
        let _ = fs.readdir(d, 0, &mut |e| {
            entries.push(e);
            entries.len() < 5_000
        });
        for e in entries {
            if e.name == b"." || e.name == b".." {
                continue;
            }
            let Ok(a) = fs.getattr(e.ino) else { continue };
            match a.kind {
                FileType::Directory => queue.push(e.ino),
                FileType::Symlink => {
                    let _ = fs.readlink(e.ino);
                }
                FileType::Regular => {
                    let mut buf = vec![0u8; 64 * BLOCK_SIZE];
                    let mut off = 0;
                    let mut steps = 0;
                    while off < a.size.min(4 << 20) && steps < 64 {
                        steps += 1;
                        match fs.read(e.ino, off, &mut buf) {
                            Ok(n) if n > 0 => off += n as u64,
                            Ok(_) => break,
                            Err(_) => off += BS,
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// holds: node blocks with valid CRCs but corrupt data pointers (addresses, checksums,
/// child ids set to edge values): fsck --verify-data, repair with data verification and
/// mount + reads return errors, never panic, and terminate.
#[test]
fn holds_corrupt_pointers_in_sealed_nodes_never_panic_fsck_repair_or_reads() {
    // An image with inode-, direct- and indirect-mapped blocks, a directory, a symlink.
    let mut fs = Filesystem::mount(mkfs_mem(4096, true), &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    for i in [0u64, 3, 456, 457, 600, 457 + 2 * 508 + 5] {
        fs.write(f, i * BS, &content(1, i), T).unwrap();
    }
    let d = fs.mkdir(1, b"d", 0o755, C, T).unwrap().ino;
    for i in 0..60 {
        fs.create(d, format!("{i:0>80}").as_bytes(), 0o644, C, T).unwrap();
    }
    fs.symlink(1, b"s", b"d/x", C, T).unwrap();
    let seed = codec::crc(&fs.superblock().uuid);
    let g = *fs.geometry();
    let base = fs.unmount(T).unwrap();
    let mut nodes = Vec::new();
    let mut b = zero_block();
    for addr in g.main_start as u64..g.main_start as u64 + g.main_blocks() {
        base.clone().read(addr, &mut b).unwrap();
        if codec::crc_ok_seeded(&b, seed) && node::footer_type(&b).is_some() {
            nodes.push(addr);
        }
    }
    assert!(nodes.len() >= 8, "{}", nodes.len());
    let mut rng = Rng(0xC0FFEE);
    let mut panics = Vec::new();
    let rounds: u64 = std::env::var("REVIEW_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    for round in 0..rounds {
        let mut dev = base.clone();
        let addr = nodes[rng.below(nodes.len() as u64) as usize];
        let blk = dev.block_mut(addr);
        for _ in 0..1 + rng.below(3) {
            // A u32 in the pointer area (addresses, checksums, ids), not the footer.
            let at = (rng.below((NODE_FOOTER_OFFSET / 4) as u64) * 4) as usize;
            let v: u32 = match rng.below(6) {
                0 => 0,
                1 => NEW_ADDR,
                2 => u32::MAX,
                3 => g.main_start + rng.below(g.main_blocks()) as u32,
                4 => rng.below(64) as u32,
                _ => rng.next() as u32,
            };
            blk[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        codec::seal_seeded(blk, seed);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut d1 = dev.clone();
            let _ = fsck::check_with(&mut d1, &FsckOptions { verify_data: true }, &mut |_, _| {});
            let mut d2 = dev.clone();
            let _ = fsck::repair_with(&mut d2, T, &FsckOptions { verify_data: true }, &mut |_, _| {});
            if let Ok(mut fs) = Filesystem::mount(d2, &MountOptions { read_only: true, ..Default::default() }, T) {
                read_all_lenient(&mut fs);
            }
            if let Ok(mut fs) = Filesystem::mount(dev.clone(), &MountOptions::default(), T) {
                read_all_lenient(&mut fs);
                let _ = fs.gc_background(T);
                let _ = fs.sync(T);
            }
        }));
        if r.is_err() {
            panics.push((round, addr));
        }
    }
    assert!(panics.is_empty(), "panics (round, node block): {panics:?}");
}
