//! Helpers of the tests that drive the core to its limits (exhaustion.rs,
//! failure_atomicity.rs, full_device.rs, recovery_reserve.rs, crash_during_recovery.rs,
//! fsync_below_renamed_dir.rs): a small device (16 MiB, 64 KiB segments), mount options that
//! never checkpoint for memory, deterministic contents, path lookup, and a filler that leaves
//! a chosen number of blocks.
#![allow(dead_code)]

use super::CrashDevice;
use rollfs_core::*;

pub const C: Credentials = Credentials { uid: 0, gid: 0 };
pub const BLOCKS: u64 = 4096;
pub const B: usize = BLOCK_SIZE;

pub fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

std::thread_local! {
    /// Whether [`mkfs`] makes images that keep fallocate's reservations on disk
    /// (`FEATURE_INCOMPAT_PREALLOC`); per test thread, see [`with_prealloc_on_disk`].
    static PREALLOC_ON_DISK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `body` once on images that keep reservations in memory and once on images that
/// keep them on disk ([`mkfs`] on this thread makes each in turn).
pub fn with_prealloc_on_disk(body: impl Fn(bool)) {
    for on in [false, true] {
        PREALLOC_ON_DISK.with(|c| c.set(on));
        eprintln!("-- reservations kept on disk: {on}");
        body(on);
    }
    PREALLOC_ON_DISK.with(|c| c.set(false));
}

/// A mount of a fresh image that keeps reservations on disk (`FEATURE_INCOMPAT_PREALLOC`)
/// with one file, `/f`, synced.
pub fn fresh_on_disk() -> (Filesystem<CrashDevice>, Ino) {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [9; 16], prealloc_on_disk: true, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts).unwrap();
    let mut fs = mount(img);
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    (fs, f)
}

/// A mount of a fresh image with persistent reservations, inline data on or off, volume
/// id `uuid` (the node CRC seed a test that reseals nodes needs), one synced file `/f`.
pub fn fresh_inline(inline_data: bool, uuid: [u8; 16]) -> (Filesystem<CrashDevice>, Ino) {
    let opts = MkfsOptions { segment_blocks: 16, uuid, inline_data, prealloc_on_disk: true, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(BLOCKS), &opts).unwrap();
    let mut fs = mount(img);
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    (fs, f)
}

pub fn mkfs(blocks: u64) -> MemDevice {
    let prealloc_on_disk = PREALLOC_ON_DISK.with(|c| c.get());
    let opts = MkfsOptions { segment_blocks: 16, uuid: [9; 16], prealloc_on_disk, ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).unwrap()
}

/// Mount options that never checkpoint on their own for memory (tests decide when).
pub fn big_cache() -> MountOptions {
    MountOptions { dirty_bytes_max: 1 << 40, clean_cache_bytes_max: 1 << 40, ..MountOptions::default() }
}

pub fn mount(img: MemDevice) -> Filesystem<CrashDevice> {
    Filesystem::mount(CrashDevice::new(img), &big_cache(), t(0)).unwrap()
}

pub fn pattern(seed: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (seed.wrapping_mul(31).wrapping_add(i as u32 / 7) % 251) as u8 + 1).collect()
}

pub fn read_all<D: BlockDevice>(fs: &mut Filesystem<D>, ino: Ino) -> Vec<u8> {
    let size = fs.getattr(ino).unwrap().size as usize;
    let mut buf = vec![0u8; size];
    let n = fs.read(ino, 0, &mut buf).unwrap();
    assert_eq!(n, size);
    buf
}

pub fn lookup_path<D: BlockDevice>(fs: &mut Filesystem<D>, path: &str) -> Option<Ino> {
    let mut ino = 1;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        ino = fs.lookup(ino, part.as_bytes()).ok()?.ino;
    }
    Some(ino)
}

/// Unmounts (a clean checkpoint) and requires fsck to find the image clean.
#[track_caller]
pub fn unmount_clean<D: BlockDevice>(fs: Filesystem<D>, now: Timestamp) {
    let mut dev = fs.unmount(now).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after unmount: {:?}", r.problems);
}

/// Grows a filler file under `dir` until at most `leave` blocks are free.
pub fn fill<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, name: &str, leave: u64, now: Timestamp) -> Ino {
    let f = fs.create(dir, name.as_bytes(), 0o644, C, now).unwrap().ino;
    let mut off = 0u64;
    for _ in 0..100_000 {
        let free = fs.statfs().unwrap().blocks_free;
        if free <= leave {
            break;
        }
        let n = (free - leave).min(16) as usize;
        match fs.write(f, off, &vec![0xF1; n * B], now) {
            Ok(_) => off += (n * B) as u64,
            Err(Error::NoSpace) => break,
            Err(e) => panic!("fill: {e}"),
        }
    }
    f
}

/// Mounts every image a power cut at each write of the recovery mount of `img` can leave
/// (with none and with all of the unflushed writes), and requires each to mount
/// read-write, pass fsck, and pass `check`. Returns the number of cut points.
pub fn every_cut_of_mount_recovers(
    img: &MemDevice,
    opts: &MountOptions,
    check: &dyn Fn(&mut Filesystem<MemDevice>),
) -> u64 {
    // The whole mount first: how many writes it makes.
    let mut dev = CrashDevice::new(img.clone());
    {
        let fs = Filesystem::mount(&mut dev, opts, t(1000)).expect("recovery mount of the crash image");
        assert!(!fs.is_read_only());
        drop(fs);
    }
    let writes = dev.writes;
    for cut in 0..=writes {
        let mut dev = CrashDevice::new(img.clone());
        dev.power_cut_at = Some(cut);
        let r = Filesystem::mount(&mut dev, opts, t(1000)).map(|_| ());
        assert!(cut == writes || r.is_err(), "mount did not stop at the power cut {cut} of {writes}");
        for (variant, mut after) in [("durable only", dev.crash_durable_only()), ("all submitted", dev.crash(|_| true))]
        {
            let rep = fsck::check(&mut after).unwrap();
            assert!(
                rep.is_clean(),
                "cut at write {cut}/{writes} ({variant}) of the recovery mount: {:?}",
                rep.problems
            );
            let mut fs = Filesystem::mount(after, opts, t(2000))
                .unwrap_or_else(|e| panic!("cut at write {cut}/{writes} ({variant}): mount failed: {e}"));
            assert!(!fs.is_read_only(), "cut at write {cut}/{writes} ({variant}): mounted read-only");
            check(&mut fs);
            let mut dev = fs.unmount(t(2001)).unwrap();
            let rep = fsck::check(&mut dev).unwrap();
            assert!(rep.is_clean(), "cut at {cut}/{writes} ({variant}), after remount: {:?}", rep.problems);
        }
    }
    writes
}
