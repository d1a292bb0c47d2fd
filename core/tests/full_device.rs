//! What a full device or one with every node id used up must still allow: unlink, truncate
//! and rmdir (how a user gets out of ENOSPC, on a fragmented device too), and an atomic
//! commit of an overwrite wherever a plain overwrite succeeds.
//!
//! From the adversarial review of issue 13's first fix (fd77b54), whose other tests are in
//! failure_atomicity.rs, recovery_reserve.rs, crash_during_recovery.rs and
//! fsync_below_renamed_dir.rs: each test here failed on fd77b54.

mod common;

use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

/// Uses up every node id with live files (nothing left to free by a checkpoint).
fn exhaust_node_ids<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, now: Timestamp) -> u64 {
    let mut n = 0;
    for i in 0..1_000_000u64 {
        match fs.create(dir, format!("held{i}").as_bytes(), 0o644, C, now) {
            Ok(_) => n += 1,
            Err(Error::NoSpace) => break,
            Err(e) => panic!("exhaust: {e}"),
        }
    }
    n
}

// ---- node ids exhausted: nothing can be deleted -------------------------------------------

/// Use up node ids with live files (`create` stops with 2 ids left: it wants 3). Then
/// unlink — which needs no node id and is the only way to get ids back — is refused with
/// ENOSPC: `unlink` → `reserve_nodes` → `ensure_space_for` → `ensure_nids(3)`, and no
/// freed id waits for a checkpoint. So are rmdir, truncate, chmod, rename and overwrites
/// of existing blocks (`write_inner`'s `nids_short`). The filesystem can never get its ids
/// back: in effect read-only for good, a remount does not help.
#[test]
fn unlink_after_node_ids_run_out_frees_them() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(1, b"keep", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &pattern(1, B), t(1)).unwrap();
    let held = exhaust_node_ids(&mut fs, d, t(2));
    assert!(held > 100);
    fs.sync(t(3)).unwrap();
    let mut errors = Vec::new();
    if let Err(e) = fs.write(f, 0, &pattern(2, B), t(4)) {
        errors.push(format!("overwrite of an existing block: {e}"));
    }
    if let Err(e) = fs.setattr(f, &SetAttr { mode: Some(0o600), ..Default::default() }, t(4)) {
        errors.push(format!("chmod: {e}"));
    }
    if let Err(e) = fs.unlink(d, b"held0", t(4)) {
        errors.push(format!("unlink: {e}"));
    }
    // A remount does not help.
    let img = fs.unmount(t(5)).unwrap().crash(|_| true);
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(6)).unwrap();
    if let Err(e) = fs.unlink(d, b"held1", t(7)) {
        errors.push(format!("unlink after a remount: {e}"));
    }
    assert!(errors.is_empty(), "with node ids used up, nothing can be freed: {errors:?}");
}

// ---- a full, fragmented device: deleting must always work ---------------------------------

/// Every segment half valid (two fillers written in alternation, one deleted), then the rest
/// filled until writes fail. Deleting a file, truncating one and removing a directory must
/// still work: they are how a user gets out of ENOSPC.
#[test]
fn full_fragmented_device_still_deletes() {
    for leave in [0u64, 1, 2, 4, 8] {
        let mut fs = mount(mkfs(BLOCKS));
        let d = fs.mkdir(1, b"dir", 0o755, C, t(1)).unwrap().ino;
        let small = fs.create(d, b"small", 0o644, C, t(1)).unwrap().ino;
        fs.write(small, 0, &pattern(1, 3 * B), t(1)).unwrap();
        let victim = fs.create(1, b"victim", 0o644, C, t(1)).unwrap().ino;
        fs.write(victim, 0, &pattern(2, 5 * B), t(1)).unwrap();
        let fa = fs.create(1, b"fa", 0o644, C, t(2)).unwrap().ino;
        let fb = fs.create(1, b"fb", 0o644, C, t(2)).unwrap().ino;
        let mut off = 0u64;
        while fs.statfs().unwrap().blocks_free >= 64 {
            fs.write(fa, off, &vec![0xA1; 8 * B], t(2)).unwrap();
            fs.write(fb, off, &vec![0xB1; 8 * B], t(2)).unwrap();
            fs.sync(t(2)).unwrap();
            off += 8 * B as u64;
        }
        fs.unlink(1, b"fb", t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        let filler = fill(&mut fs, 1, "filler", leave, t(3));
        // Keep writing single blocks until refused.
        let mut o = fs.getattr(filler).unwrap().size;
        for _ in 0..10_000 {
            match fs.write(filler, o, &vec![0xF2; B], t(3)) {
                Ok(_) => o += B as u64,
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            }
        }
        let mut errors = Vec::new();
        if let Err(e) = fs.setattr(victim, &SetAttr { size: Some(0), ..Default::default() }, t(4)) {
            errors.push(format!("truncate to 0: {e}"));
        }
        if let Err(e) = fs.unlink(1, b"victim", t(4)) {
            errors.push(format!("unlink: {e}"));
        }
        if let Err(e) = fs.unlink(d, b"small", t(4)) {
            errors.push(format!("unlink small: {e}"));
        } else if let Err(e) = fs.rmdir(1, b"dir", t(4)) {
            errors.push(format!("rmdir: {e}"));
        }
        assert!(!fs.is_read_only(), "leave={leave}: read-only");
        assert!(errors.is_empty(), "leave={leave}: a full device refuses deletes: {errors:?}");
        let mut dev = fs.unmount(t(5)).unwrap();
        assert!(fsck::check(&mut dev).unwrap().is_clean());
    }
}

// ---- atomic commit on a full device --------------------------------------------------------

/// On a full device an ordinary overwrite of an existing block succeeds (it adds nothing to
/// what is in use: `write_inner` counts only the holes it fills), but an atomic commit of the
/// same overwrite reserves `ensure_space(n + nodes + 2)`, which counts every staged block as
/// new: SQLite in batch-atomic mode gets SQLITE_FULL on every transaction of a full disk,
/// even one that frees pages.
#[test]
fn atomic_overwrite_commits_on_a_full_device_like_a_plain_overwrite() {
    for leave in [0u64, 1, 2, 3] {
        let mut fs = mount(mkfs(BLOCKS));
        let f = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, &pattern(1, 8 * B), t(1)).unwrap();
        fs.sync(t(2)).unwrap();
        let filler = fill(&mut fs, 1, "filler", leave, t(3));
        let mut o = fs.getattr(filler).unwrap().size;
        while fs.write(filler, o, &vec![0xF2; B], t(3)).is_ok() {
            o += B as u64;
        }
        fs.sync(t(3)).unwrap();
        fs.write(f, 0, &pattern(2, B), t(4)).expect("plain overwrite on a full device");
        fs.fsync(f, false, t(4)).unwrap();
        fs.start_atomic_write(f).unwrap();
        fs.write(f, B as u64, &pattern(3, B), t(5)).unwrap();
        let r = fs.commit_atomic_write(f, t(5));
        assert!(r.is_ok(), "leave={leave}: plain overwrite ok, atomic overwrite commit: {r:?}");
    }
}
