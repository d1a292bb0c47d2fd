//! Crash scenarios of persistent fallocate reservations (`FEATURE_INCOMPAT_PREALLOC`,
//! issue 38): the reproducers of the adversarial review of its first version (each failed
//! on it: reservations past EOF dropped by roll-forward, an fdatasync that skipped a
//! reservation, and batches carrying new reservations rejected at recovery with their
//! fsync'd data), and a randomized workload that crashes after every fsync and requires
//! the file's size, `st_blocks` and contents to be there (`R38_SEEDS`, `R38_OPS`,
//! `R38_FORMAT2`, `R38_NO_FDATASYNC`, `R38_NO_FSYNC_ORACLE`, `R38_TRACE`).
//!
//! A reservation made since the last checkpoint is made durable by a checkpoint
//! (`CheckpointReason::Reserved`), never by a batch: roll-forward replays onto the
//! checkpoint's SIT, which may still hold blocks freed since (an unlink or truncation that
//! is not durable comes back), so capacity reserved after such a free cannot be promised
//! after a crash unless the free is made durable with it.
mod common;
use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

const A: u64 = 914; // ADDRS_PER_INODE
const SECTORS: u64 = (B / 512) as u64;

/// Crash (durable writes only), remount, unmount; returns fsck's report and the file's
/// st_blocks after the recovery mount.
fn crash_and_check(fs: Filesystem<CrashDevice>, path: &str) -> (fsck::FsckReport, Option<u64>) {
    let img = fs.into_device().crash_durable_only();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap();
    let blocks = lookup_path(&mut fs, path).map(|i| fs.getattr(i).unwrap().blocks);
    let mut dev = fs.unmount(t(51)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    (r, blocks)
}

/// F1: a new file (dentry-marked batch), KEEP_SIZE reservation, fsync, crash.
/// Roll-forward applies the NEW_ADDR pointers, then `apply_batch` truncates "blocks past
/// the new size" (old size u64::MAX for a recreated inode) and drops them all.
#[test]
fn keep_size_reservation_of_a_new_file_fsynced_survives_a_crash() {
    let (mut fs, _f) = fresh_on_disk();
    let g = fs.create(1, b"g", 0o644, C, t(2)).unwrap().ino;
    let n = 16u64;
    fs.fallocate(g, 0, n * B as u64, true, t(3)).unwrap();
    assert_eq!(fs.getattr(g).unwrap().blocks, n * SECTORS);
    fs.fsync(g, false, t(4)).unwrap();
    let (r, blocks) = crash_and_check(fs, "g");
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(blocks, Some(n * SECTORS), "st_blocks of the recovered file");
    assert_eq!(r.reserved_blocks, n, "fsync'd KEEP_SIZE reservation lost by the crash");
}

/// F2: an existing file shrunk by truncate, then a KEEP_SIZE reservation past the new
/// EOF, fsync, crash: the batch's size is below the checkpoint's, so `apply_batch` drops
/// every block past the new size, the reservation just applied included.
#[test]
fn keep_size_reservation_after_a_shrink_fsynced_survives_a_crash() {
    let (mut fs, f) = fresh_on_disk();
    fs.write(f, 0, &pattern(1, 25 * B), t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(10 * B as u64), ..Default::default() }, t(3)).unwrap();
    let n = 8u64;
    fs.fallocate(f, 40 * B as u64, n * B as u64, true, t(3)).unwrap();
    fs.fsync(f, false, t(4)).unwrap();
    let (r, blocks) = crash_and_check(fs, "f");
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(blocks, Some((10 + n) * SECTORS), "st_blocks of the recovered file");
    assert_eq!(r.reserved_blocks, n, "fsync'd KEEP_SIZE reservation lost by the crash");
}

/// F3: fdatasync after a KEEP_SIZE fallocate inside the inode's own addresses (only the
/// inode is dirty, the size did not change) is a no-op: the reservation is not persisted.
#[test]
fn keep_size_reservation_fdatasynced_survives_a_crash() {
    let (mut fs, f) = fresh_on_disk();
    fs.write(f, 0, &pattern(1, 2 * B), t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    let n = 8u64;
    fs.fallocate(f, 4 * B as u64, n * B as u64, true, t(3)).unwrap();
    fs.fsync(f, true, t(4)).unwrap();
    let (r, blocks) = crash_and_check(fs, "f");
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(blocks, Some((2 + n) * SECTORS), "st_blocks of the recovered file");
    assert_eq!(r.reserved_blocks, n, "fdatasync'd KEEP_SIZE reservation lost by the crash");
}

/// F4: recovery's `reservations_fit` compares the reservations a batch adds with the
/// checkpoint's SIT, which still holds the blocks of files removed since (their removal is
/// not durable). A reservation made in capacity freed by an unlink, fsync'd, is then
/// rejected at recovery, and with it the whole batch: the fsync'd data too.
#[test]
fn reservation_in_capacity_freed_by_an_unlink_fsynced_survives_a_crash() {
    let (mut fs, _f) = fresh_on_disk();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let y = fs.create(d, b"y", 0o644, C, t(1)).unwrap().ino;
    let x = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.write(x, 0, &vec![7u8; 1500 * B], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.unlink(1, b"x", t(2)).unwrap();
    let free = fs.statfs().unwrap().blocks_free;
    eprintln!("free after unlink {free}, statfs {:?}", fs.statfs().unwrap());
    let data = pattern(3, 3 * B);
    fs.write(y, 0, &data, t(3)).unwrap();
    let n = free - 40;
    fs.fallocate(y, 0, n * B as u64, false, t(3)).unwrap();
    fs.fsync(y, false, t(4)).unwrap();
    let img = fs.into_device().crash_durable_only();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap();
    let y = lookup_path(&mut fs, "d/y").unwrap();
    let a = fs.getattr(y).unwrap();
    assert_eq!(a.size, n * B as u64, "size of the fsync'd file after the crash");
    let mut buf = vec![0u8; 3 * B];
    fs.read(y, 0, &mut buf).unwrap();
    assert!(buf == data, "fsync'd data lost");
    assert_eq!(a.blocks, n * SECTORS);
    let mut dev = fs.unmount(t(51)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
}

/// F4b: as F4 with a smaller removed file: the batch passes `reservations_fit` (checked
/// against the whole main area) but recovery leaves more in use and reserved than the
/// user capacity. Are the fsync'd reservations still writable, and does the filesystem
/// stay sound?
#[test]
fn overcommitted_recovery_keeps_reservations_writable() {
    for x_blocks in [100u64, 200, 300] {
        let (mut fs, _f) = fresh_on_disk();
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let y = fs.create(d, b"y", 0o644, C, t(1)).unwrap().ino;
        let x = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
        fs.write(x, 0, &vec![7u8; x_blocks as usize * B], t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        fs.unlink(1, b"x", t(2)).unwrap();
        let free = fs.statfs().unwrap().blocks_free;
        let n = free - 40;
        fs.fallocate(y, 0, n * B as u64, false, t(3)).unwrap();
        fs.fsync(y, false, t(4)).unwrap();
        let img = fs.into_device().crash_durable_only();
        let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap();
        let y = lookup_path(&mut fs, "d/y").unwrap();
        let a = fs.getattr(y).unwrap();
        eprintln!(
            "x {x_blocks}: after recovery size {} blocks {} statfs {:?}",
            a.size / B as u64,
            a.blocks / SECTORS,
            fs.statfs().unwrap()
        );
        if a.size == 0 {
            eprintln!("x {x_blocks}: batch rejected (F4)");
            continue;
        }
        let mut k = 0;
        while k < n {
            let m = 8.min(n - k);
            if let Err(e) = fs.write(y, k * B as u64, &pattern(k as u32, m as usize * B), t(60)) {
                panic!(
                    "x {x_blocks}: write into the fsync'd reservation at block {k} of {n} failed: {e} (read-only {})",
                    fs.is_read_only()
                );
            }
            k += m;
        }
        fs.sync(t(61)).unwrap();
        let mut dev = fs.unmount(t(62)).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "{:?}", r.problems);
    }
}

/// F4c: the same file: truncated to 0 (its blocks freed), then reserved over the freed
/// capacity, fsync'd. The batch carries its own truncation point, but `reservations_fit`
/// runs before the truncation is applied, against a SIT that still holds the old blocks:
/// the whole batch is rejected, and the file comes back with its old contents.
#[test]
fn truncate_then_reserve_the_same_file_fsynced_survives_a_crash() {
    let (mut fs, f) = fresh_on_disk();
    fs.write(f, 0, &vec![7u8; 1500 * B], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(0), ..Default::default() }, t(2)).unwrap();
    let free = fs.statfs().unwrap().blocks_free;
    let n = free - 40;
    fs.fallocate(f, 0, n * B as u64, false, t(3)).unwrap();
    fs.fsync(f, false, t(4)).unwrap();
    let img = fs.into_device().crash_durable_only();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap();
    let a = fs.getattr(f).unwrap();
    assert_eq!((a.size, a.blocks), (n * B as u64, n * SECTORS), "fsync'd truncate+fallocate lost by the crash");
    let mut dev = fs.unmount(t(51)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
}

#[allow(dead_code)]
fn unused() -> u64 {
    A
}

// ------------------------------------------------------------------ randomized search

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Model {
    ino: Ino,
    name: Vec<u8>,
    data: Vec<u8>,
    staged: Option<Vec<u8>>,
    linked: bool,
}

fn small_cache() -> MountOptions {
    MountOptions { dirty_bytes_max: 96 * B as u64, clean_cache_bytes_max: 1 << 30, ..MountOptions::default() }
}

fn check_image(img: MemDevice, what: &str) {
    let mut fs = Filesystem::mount(CrashDevice::new(img), &small_cache(), t(900))
        .unwrap_or_else(|e| panic!("{what}: recovery mount failed: {e}"));
    assert!(!fs.is_read_only(), "{what}: read-only after recovery");
    // Fill every reserved hole of every file that survived: must not fail with ENOSPC.
    for name in [&b"a"[..], b"b", b"c"] {
        if let Ok(a) = fs.lookup(1, name) {
            let _ = a;
        }
    }
    let mut dev = fs.unmount(t(901)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{what}: fsck after recovery: {:?}", r.problems);
}

fn tr(what: &str, m: &str) {
    if std::env::var("R38_TRACE").is_ok() {
        eprintln!("{what}: {m}");
    }
}

fn ok_or_nospc(r: Result<()>, what: &str) -> bool {
    match r {
        Ok(()) => true,
        Err(Error::NoSpace) => false,
        Err(e) => panic!("{what}: unexpected error {e}"),
    }
}

fn run_seed(seed: u64, ops: u64) {
    let on_disk = std::env::var("R38_FORMAT2").is_err();
    let opts = MkfsOptions { segment_blocks: 16, uuid: [9; 16], prealloc_on_disk: on_disk, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &small_cache(), t(0)).unwrap();
    let mut rng = Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1);
    let mut files: Vec<Model> = Vec::new();
    let mut serial = 0u32;
    for n in [&b"a"[..], b"b", b"c"] {
        let ino = fs.create(1, n, 0o644, C, t(1)).unwrap().ino;
        fs.open(ino).unwrap();
        files.push(Model { ino, name: n.to_vec(), data: Vec::new(), staged: None, linked: true });
    }
    let bs = B as u64;
    for step in 0..ops {
        let now = t(2 + step as i64);
        let i = rng.below(files.len() as u64) as usize;
        let ino = files[i].ino;
        let in_session = files[i].staged.is_some();
        let far = |rng: &mut Rng| -> u64 {
            match rng.below(4) {
                0 => rng.below(8 * bs),
                1 => rng.below(40) * bs + rng.below(bs),
                2 => (A - 4 + rng.below(8)) * bs + rng.below(2) * 1000,
                _ => (rng.below(1200)) * bs,
            }
        };
        let what = format!("seed {seed} step {step}");
        match rng.below(22) {
            0..=4 => {
                let off = far(&mut rng);
                let cap = if rng.below(4) == 0 { 40 * bs } else { 2 * bs };
                let len = 1 + rng.below(cap);
                serial += 1;
                let buf = pattern(serial, len as usize);
                let r = fs.write(ino, off, &buf, now).map(|_| ());
                tr(&what, &format!("write ino {ino} blk {} off {off} len {len} -> {r:?}", off / bs));
                if ok_or_nospc(r, &what) {
                    let m = &mut files[i];
                    let v = m.staged.as_mut().unwrap_or(&mut m.data);
                    let end = (off + len) as usize;
                    if v.len() < end {
                        v.resize(end, 0);
                    }
                    v[off as usize..end].copy_from_slice(&buf);
                }
            }
            5..=8 if !in_session => {
                let off = far(&mut rng);
                let cap = if rng.below(3) == 0 { 64 * bs } else { 4 * bs };
                let len = 1 + rng.below(cap);
                let keep = rng.below(2) == 0;
                let r = fs.fallocate(ino, off, len, keep, now);
                tr(
                    &what,
                    &format!("falloc ino {ino} blk {}..{} keep {keep} -> {r:?}", off / bs, (off + len).div_ceil(bs)),
                );
                if ok_or_nospc(r, &what) && !keep {
                    let v = &mut files[i].data;
                    if v.len() < (off + len) as usize {
                        v.resize((off + len) as usize, 0);
                    }
                }
            }
            9..=10 if !in_session => {
                let size = files[i].data.len() as u64;
                let new = match rng.below(4) {
                    0 => size + rng.below(20 * bs),
                    1 => (size / bs) * bs,
                    _ => rng.below(size + 1),
                };
                let r = fs.setattr(ino, &SetAttr { size: Some(new), ..Default::default() }, now).map(|_| ());
                tr(&what, &format!("truncate ino {ino} from {size} to {new} -> {r:?}"));
                if ok_or_nospc(r, &what) {
                    files[i].data.resize(new as usize, 0);
                }
            }
            11 if !in_session => {
                let off = far(&mut rng);
                let len = 1 + rng.below(30 * bs);
                let zero = rng.below(2) == 0;
                let keep = rng.below(2) == 0;
                let r = if zero { fs.zero_range(ino, off, len, keep, now) } else { fs.punch_hole(ino, off, len, now) };
                tr(&what, &format!("zero {zero} ino {ino} {off}..{} keep {keep} -> {r:?}", off + len));
                if ok_or_nospc(r, &what) {
                    let v = &mut files[i].data;
                    let end = (off + len) as usize;
                    if zero && !keep && v.len() < end {
                        v.resize(end, 0);
                    }
                    let e = end.min(v.len());
                    if (off as usize) < e {
                        v[off as usize..e].fill(0);
                    }
                }
            }
            12..=13 => {
                let datasync = rng.below(2) == 0 && std::env::var("R38_NO_FDATASYNC").is_err();
                let r = fs.fsync(ino, datasync, now);
                tr(&what, &format!("fsync ino {ino} datasync {datasync} -> {r:?} cps {}", fs.stats().checkpoints));
                if ok_or_nospc(r, &what)
                    && std::env::var("R38_NO_FSYNC_ORACLE").is_err()
                    && files[i].linked
                    && !in_session
                {
                    // Crash right after the fsync: the file as the fsync left it.
                    let a = fs.getattr(ino).unwrap();
                    let img = fs.device().crash_durable_only();
                    let mut fs2 = Filesystem::mount(CrashDevice::new(img), &small_cache(), t(900)).unwrap();
                    let b = fs2.getattr(ino).unwrap();
                    assert_eq!(
                        (a.size, a.blocks),
                        (b.size, b.blocks),
                        "{what}: fsync'd size/st_blocks after a crash (datasync {datasync})"
                    );
                    let mut buf = vec![0u8; a.size as usize];
                    fs2.read(ino, 0, &mut buf).unwrap();
                    assert!(buf == files[i].data, "{what}: fsync'd contents after a crash");
                }
            }
            14 => {
                tr(&what, "sync");
                ok_or_nospc(fs.sync(now), &what);
            }
            15 if !in_session && files[i].linked => {
                tr(&what, &format!("atomic_start ino {ino}"));
                if ok_or_nospc(fs.start_atomic_write(ino), &what) {
                    files[i].staged = Some(files[i].data.clone());
                }
            }
            16..=17 if in_session => {
                tr(&what, &format!("atomic end ino {ino}"));
                if rng.below(4) == 0 {
                    fs.abort_atomic_write(ino).unwrap();
                    files[i].staged = None;
                } else if ok_or_nospc(fs.commit_atomic_write(ino, now), &what) {
                    files[i].data = files[i].staged.take().unwrap();
                }
            }
            18 if files[i].linked && !in_session && rng.below(3) == 0 => {
                // Unlink while open: an orphan until released.
                let name = files[i].name.clone();
                tr(&what, &format!("unlink ino {ino}"));
                if ok_or_nospc(fs.unlink(1, &name, now), &what) {
                    files[i].linked = false;
                }
            }
            19 if !files[i].linked && !in_session => {
                fs.release(ino, now).unwrap();
                let name = format!("n{serial}").into_bytes();
                serial += 1;
                let ino = fs.create(1, &name, 0o644, C, now).unwrap().ino;
                fs.open(ino).unwrap();
                files[i] = Model { ino, name, data: Vec::new(), staged: None, linked: true };
            }
            20 => {
                // Crash here: the image must recover clean.
                let img = fs.device().crash_durable_only();
                check_image(img, &format!("{what} crash"));
            }
            _ => {}
        }
        assert!(!fs.is_read_only(), "{what}: read-only");
    }
    // Contents as the model says.
    for m in &files {
        let v = m.staged.as_ref().unwrap_or(&m.data);
        let size = fs.getattr(m.ino).unwrap().size as usize;
        assert_eq!(size, v.len(), "seed {seed}: size of {:?}", String::from_utf8_lossy(&m.name));
        let mut buf = vec![0u8; size];
        fs.read(m.ino, 0, &mut buf).unwrap();
        assert!(buf == *v, "seed {seed}: contents of {:?}", String::from_utf8_lossy(&m.name));
    }
    let img = fs.device().crash_durable_only();
    check_image(img, &format!("seed {seed} final crash"));
    for m in &mut files {
        if m.staged.is_some() {
            fs.abort_atomic_write(m.ino).unwrap();
        }
    }
    let mut dev = fs.unmount(t(10_000)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "seed {seed}: fsck after unmount: {:?}", r.problems);
}

#[test]
fn random_prealloc_workloads() {
    let seeds: u64 = std::env::var("R38_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(40);
    let first: u64 = std::env::var("R38_FIRST").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let ops: u64 = std::env::var("R38_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    for seed in first..first + seeds {
        run_seed(seed, ops);
    }
}
