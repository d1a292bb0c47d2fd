//! Directories v2 (`FEATURE_INCOMPAT_DIR_V2`, issue 35 finding 8): names hash with a key of
//! their directory, so names that collide in one directory do not in another; and a
//! bucket full in all 64 levels overflows into the following buckets of the deepest level,
//! so a name of that bucket is still added, found, listed, removed and re-added, across a
//! remount and a crash (roll-forward restoring a name into the overflow), fsck clean.
//!
//! The tests know the filesystem's `hash_seed`, so they compute each directory's key
//! (`Filesystem::dir_hash_key`, FORMAT.md "Directory keys") and the names that share a
//! bucket under it, as an attacker who learned the key could.

mod common;
use common::CrashDevice;
use rollfs_core::dir::{self, HashKey};
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };
const SEED: HashKey = *b"known-test-seed!";

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image(dir_v2: bool) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [5; 16], hash_seed: SEED, dir_v2, ..Default::default() };
    Filesystem::format(MemDevice::new(16_384), &opts).unwrap()
}

/// `n` names of `len` bytes whose hash under `key` has the low 12 bits of `victim`'s: they
/// share `victim`'s bucket in every level (levels 12 and up have 4096 buckets).
fn colliders(key: &HashKey, victim: &[u8], n: usize, len: usize, tag: u8) -> Vec<Vec<u8>> {
    let want = dir::name_hash_keyed(key, victim) & 0xfff;
    let mut out = Vec::with_capacity(n);
    let mut name = vec![tag; len];
    for i in 0u64.. {
        name[len - 16..].copy_from_slice(format!("{i:016}").as_bytes());
        if dir::name_hash_keyed(key, &name) & 0xfff == want {
            out.push(name.clone());
            if out.len() == n {
                break;
            }
        }
    }
    out
}

/// Names that fill `victim`'s bucket in all 64 levels exactly: the bucket is 32 × 2 +
/// 32 × 4 = 192 blocks of 202 slots; six 255-byte names (32 slots each) and one 80-byte
/// name (10 slots) fill a block.
fn bucket_fillers(key: &HashKey, victim: &[u8]) -> Vec<Vec<u8>> {
    let mut names = colliders(key, victim, 1152, 255, b'L');
    names.extend(colliders(key, victim, 192, 80, b'm'));
    names
}

/// Blocks below the deepest level: a directory whose size goes beyond uses level 63.
const DEEPEST_LEVEL_START: u64 = 679_934;

fn uses_deepest_level<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino) -> bool {
    fs.getattr(dir).unwrap().size > DEEPEST_LEVEL_START * BLOCK_SIZE as u64
}

fn listing<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino) -> Vec<(Vec<u8>, u64)> {
    let mut v = Vec::new();
    fs.readdir(dir, 2, &mut |e| {
        v.push((e.name, e.cookie));
        true
    })
    .unwrap();
    v
}

fn fsck_clean(dev: &mut MemDevice) {
    let r = fsck::check(dev).unwrap();
    assert!(r.is_clean(), "fsck: {:?}", r.problems);
}

/// Where a listed entry lies: `(level, bucket, the name's own bucket in that level)`.
fn place<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, name: &[u8]) -> (u32, u64, u64) {
    let cookie = listing(fs, dir).into_iter().find(|(n, _)| n == name).expect("listed").1;
    let loc = fs.check_listed(dir, name, cookie).unwrap().expect("placed where lookup searches");
    let (level, bucket) = dir::block_position(loc.block_idx).unwrap();
    let hash = dir::name_hash_keyed(&fs.dir_hash_key(dir).unwrap(), name);
    (level, bucket, hash as u64 % dir::buckets(level))
}

/// Finding 8, scenario (b): what a user learns in one directory (here: the names that
/// share `victim.lock`'s bucket in every level of directory `a`, enough to fill it) does
/// not carry over to another directory `b`, nor to a directory that reuses `a`'s inode
/// number. On images without the feature every directory has the filesystem's key (and
/// there the same names fill `b` too).
#[test]
fn names_colliding_in_one_directory_do_not_collide_in_another() {
    let mut fs = Filesystem::mount(image(true), &MountOptions::default(), t(0)).unwrap();
    let a = fs.mkdir(1, b"a", 0o777, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o777, C, t(1)).unwrap().ino;
    let (ka, kb) = (fs.dir_hash_key(a).unwrap(), fs.dir_hash_key(b).unwrap());
    assert_ne!(ka, kb);
    assert_ne!(ka, SEED, "the filesystem's key is not a directory's");
    let names = bucket_fillers(&ka, b"victim.lock");
    let x = fs.create(1, b"x", 0o644, C, t(2)).unwrap().ino;
    for n in &names {
        fs.link(x, a, n, t(2)).unwrap();
        fs.link(x, b, n, t(2)).unwrap();
    }
    assert!(uses_deepest_level(&mut fs, a), "in a they fill the bucket down to the deepest level");
    let size_b = fs.getattr(b).unwrap().size / BLOCK_SIZE as u64;
    assert!(size_b <= 8190, "in b they spread over a few levels: {size_b} blocks");
    // The same names, counted by the bucket they take in each directory's level 12.
    let bucket12 = |k: &HashKey, n: &[u8]| dir::name_hash_keyed(k, n) & 0xfff;
    let in_a: std::collections::BTreeSet<u32> = names.iter().map(|n| bucket12(&ka, n)).collect();
    let in_b: std::collections::BTreeSet<u32> = names.iter().map(|n| bucket12(&kb, n)).collect();
    assert_eq!(in_a.len(), 1);
    assert!(in_b.len() > 1000, "{} buckets in b", in_b.len());
    // A directory that gets a's inode number back has another key (another generation).
    for n in &names {
        fs.unlink(a, n, t(3)).unwrap();
    }
    fs.rmdir(1, b"a", t(3)).unwrap();
    // After a remount the allocator hands out the lowest free inode number again: a's.
    let dev = fs.unmount(t(3)).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(4)).unwrap();
    let c = fs.mkdir(1, b"c", 0o777, C, t(4)).unwrap().ino;
    assert_eq!(c, a, "the inode number comes back");
    assert_ne!(fs.dir_hash_key(c).unwrap(), ka, "a reused inode number has another key");
    let mut dev = fs.unmount(t(5)).unwrap();
    fsck_clean(&mut dev);

    // Without the feature: one key for all directories, the filesystem's.
    let mut fs = Filesystem::mount(image(false), &MountOptions::default(), t(0)).unwrap();
    let a = fs.mkdir(1, b"a", 0o777, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o777, C, t(1)).unwrap().ino;
    assert_eq!(fs.dir_hash_key(a).unwrap(), SEED);
    assert_eq!(fs.dir_hash_key(b).unwrap(), SEED);
}

/// Finding 8, scenario (c): a bucket full in all 64 levels. Every name of that bucket is
/// still added (overflowing into the following buckets of level 63), found, listed once,
/// removed and added again; fsck is clean; and it all holds across a remount and a crash
/// whose roll-forward restores an fsync'd new file's name into the overflow.
#[test]
fn a_bucket_full_in_all_64_levels_overflows_instead_of_refusing_names() {
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &MountOptions::default(), t(0)).unwrap();
    let d = fs.mkdir(1, b"pub", 0o1777, C, t(1)).unwrap().ino;
    let key = fs.dir_hash_key(d).unwrap();
    let fillers = bucket_fillers(&key, b"victim.lock");
    let extra = colliders(&key, b"victim.lock", 40, 255, b'X');
    let x = fs.create(1, b"x", 0o644, C, t(2)).unwrap().ino;
    for n in &fillers {
        fs.link(x, d, n, t(2)).unwrap();
    }
    assert!(uses_deepest_level(&mut fs, d), "the bucket is full in all 64 levels");

    // The victim's name, and more of its bucket: all added, in the overflow.
    let v = fs.create(d, b"victim.lock", 0o644, C, t(3)).expect("a name of a full bucket is not refused").ino;
    let (level, bucket, home) = place(&mut fs, d, b"victim.lock");
    assert_eq!(level, dir::OVERFLOW_LEVEL);
    assert_eq!(bucket, (home + 1) % 4096, "the next bucket of the deepest level");
    for n in &extra {
        fs.link(x, d, n, t(3)).unwrap();
    }
    let (_, last, home) = place(&mut fs, d, extra.last().unwrap());
    assert_eq!(last, (home + 2) % 4096, "{} names of 255 bytes overflow into a second bucket", extra.len());
    for n in fillers.iter().step_by(97).chain(&extra) {
        assert_eq!(fs.lookup(d, n).unwrap().ino, x);
    }
    assert_eq!(fs.lookup(d, b"victim.lock").unwrap().ino, v);
    let all = listing(&mut fs, d);
    assert_eq!(all.len(), fillers.len() + extra.len() + 1);
    let unique: std::collections::BTreeSet<&Vec<u8>> = all.iter().map(|(n, _)| n).collect();
    assert_eq!(unique.len(), all.len(), "every name listed once");

    // Removed and added again (one from a level, one from the overflow), and a name of
    // another bucket unaffected.
    fs.unlink(d, &fillers[500], t(4)).unwrap();
    fs.unlink(d, &extra[3], t(4)).unwrap();
    assert_eq!(fs.lookup(d, &extra[3]), Err(Error::NotFound));
    fs.link(x, d, &extra[3], t(4)).unwrap();
    fs.link(x, d, &fillers[500], t(4)).unwrap();
    fs.create(d, b"elsewhere", 0o644, C, t(4)).unwrap();
    fs.sync(t(4)).unwrap();
    fsck_clean(&mut fs.device_mut().crash(|_| true));

    // Remount.
    let dev = fs.unmount(t(5)).unwrap();
    let mut img = dev.crash(|_| true);
    fsck_clean(&mut img);
    let mut fs = Filesystem::mount(CrashDevice::new(img), &MountOptions::default(), t(6)).unwrap();
    assert_eq!(listing(&mut fs, d).len(), all.len() + 1);
    for n in extra.iter().chain(&fillers[495..505]) {
        assert_eq!(fs.lookup(d, n).unwrap().ino, x);
    }
    assert_eq!(fs.lookup(d, b"victim.lock").unwrap().ino, v);

    // A crash after an fsync'd create of another name of the bucket: roll-forward restores
    // the name into the overflow.
    let late = colliders(&key, b"victim.lock", 41, 255, b'X').pop().unwrap();
    let cps = fs.stats().checkpoints;
    let f = fs.create(d, &late, 0o644, C, t(7)).unwrap().ino;
    fs.write(f, 0, b"restored into the overflow", t(7)).unwrap();
    fs.fsync(f, false, t(7)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "the fsync did not checkpoint");
    // Only what was flushed survives: the fsync's promise.
    let img = fs.into_device().crash_durable_only();
    let mut fs = Filesystem::mount(img, &MountOptions::default(), t(8)).expect("mount after the crash");
    let a = fs.lookup(d, &late).expect("the fsync'd name survives the crash");
    let mut buf = vec![0u8; a.size as usize];
    fs.read(a.ino, 0, &mut buf).unwrap();
    assert_eq!(buf, b"restored into the overflow");
    let (level, bucket, home) = place(&mut fs, d, &late);
    assert_eq!(level, dir::OVERFLOW_LEVEL);
    assert_ne!(bucket, home, "restored into the overflow");
    let mut dev = fs.unmount(t(9)).unwrap();
    fsck_clean(&mut dev);
}

/// fsck checks overflow distances: an overflowed entry beyond its bucket's distance is
/// one lookup cannot find, and an image without the feature has no distances at all.
#[test]
fn fsck_checks_overflow_distances() {
    let mut fs = Filesystem::mount(image(true), &MountOptions::default(), t(0)).unwrap();
    let d = fs.mkdir(1, b"pub", 0o777, C, t(1)).unwrap().ino;
    let key = fs.dir_hash_key(d).unwrap();
    let x = fs.create(1, b"x", 0o644, C, t(2)).unwrap().ino;
    for n in bucket_fillers(&key, b"victim.lock") {
        fs.link(x, d, &n, t(2)).unwrap();
    }
    fs.create(d, b"victim.lock", 0o644, C, t(3)).unwrap();
    let mut dev = fs.unmount(t(4)).unwrap();
    fsck_clean(&mut dev);
    // The home bucket's first block of level 63: its distance (1) cleared.
    let hash = dir::name_hash_keyed(&key, b"victim.lock");
    let home = dir::overflow_home(hash);
    // Every copy of that block on the device (the live one among them), distance cleared.
    let mut bad = dev.clone();
    let mut b = zero_block();
    let mut found = 0;
    for addr in 0..bad.block_count() {
        bad.read(addr, &mut b).unwrap();
        if b[..4] != *b"DENT" || u32::from_le_bytes(b[4..8].try_into().unwrap()) as u64 != home {
            continue;
        }
        let Ok(db) = dir::decode_block(home, &b, addr) else { continue };
        if db.overflow() == 1 {
            b[dir::HDR_OVERFLOW_OFFSET] = 0;
            codec::seal(&mut b);
            bad.write(addr, &b, WriteFlags::empty()).unwrap();
            found += 1;
        }
    }
    assert!(found >= 1, "the full bucket's first block, with distance 1");
    let r = fsck::check(&mut bad).unwrap();
    assert!(r.problems.iter().any(|p| p.contains("beyond that bucket's overflow distance 0")), "{:?}", r.problems);
    // Repair puts the entry back where lookup finds it (overflowing again).
    let r = fsck::repair(&mut bad, t(6)).unwrap();
    assert!(r.is_clean() && r.changed(), "{r:?}");
    assert!(r.fixes.iter().any(|f| f.contains("victim.lock") && f.contains("re-inserted")), "{:?}", r.fixes);
    let mut fs = Filesystem::mount(bad, &MountOptions::default(), t(7)).unwrap();
    fs.lookup(d, b"victim.lock").expect("found again after the repair");
    drop(fs);
    // A clean image with overflow needs no repair.
    let r = fsck::repair(&mut dev.clone(), t(6)).unwrap();
    assert!(r.is_clean() && !r.changed(), "{r:?}");
    // The same image with the feature bit cleared: a distance where none may be.
    let mut old = dev.clone();
    for a in [0u64, 1] {
        let mut s = zero_block();
        old.read(a, &mut s).unwrap();
        let mut sb = superblock::Superblock::decode(a, &s).unwrap();
        sb.feature_incompat = 0;
        old.write(a, &sb.encode(), WriteFlags::empty()).unwrap();
    }
    let r = fsck::check(&mut old).unwrap();
    assert!(
        r.problems.iter().any(|p| p.contains("overflow distance in a directory without overflow")),
        "{:?}",
        r.problems
    );
}
