//! Adversarial review of issue 13's first fix (fd77b54): scenarios it still got wrong (node
//! ids exhausted for good, the recovery reserve undercounting sparse batches and restored
//! names, symlink and write not failure-atomic, fsync of hard-linked files below renamed
//! directories, atomic overwrite commits refused on a full device), each named after its
//! scenario and failing on fd77b54, and sweeps of power cuts during recovery that passed.

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

// ---- failure atomicity: symlink ---------------------------------------------------------

/// `symlink` creates and links the inode (`new_inode`, which makes sure of 3 node ids),
/// then writes the target (`write_inner`, which wants 3 node ids *after* the inode took
/// one). With exactly 3 ids available and none waiting for a checkpoint, the write fails
/// with ENOSPC — and the symlink stays behind, linked, with an empty target.
/// Creates live files under `dir` until exactly `left` node ids are available.
fn use_node_ids_until<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, left: u64, now: Timestamp) {
    for i in 0..1_000_000u64 {
        if fs.statfs().unwrap().files_free <= left {
            break;
        }
        fs.create(dir, format!("held{i}").as_bytes(), 0o644, C, now).unwrap();
    }
    assert_eq!(fs.statfs().unwrap().files_free, left);
}

#[test]
fn symlink_refused_for_node_ids_leaves_no_empty_symlink() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    use_node_ids_until(&mut fs, d, 3, t(2));
    fs.sync(t(3)).unwrap();
    match fs.symlink(d, b"link", b"target", C, t(4)) {
        Ok(a) => {
            assert_eq!(fs.readlink(a.ino).unwrap(), b"target");
        }
        Err(e) => {
            let left = fs.lookup(d, b"link").ok().map(|a| (a.ino, a.size));
            assert!(left.is_none(), "symlink failed ({e}) but left {left:?} behind: an empty symlink");
            // And after a sync and a crash.
            fs.sync(t(5)).unwrap();
            let img = fs.into_device().crash(|_| true);
            let mut fs = Filesystem::mount(img, &big_cache(), t(6)).unwrap();
            assert!(lookup_path(&mut fs, "/d/link").is_none(), "failed symlink is durable");
        }
    }
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

// ---- recovery reserve: what roll-forward rewrites besides the chain ----------------------

/// New files, one in each of many directories that exist at the checkpoint, each created
/// and fsync'd on a nearly full device. Each fsync appends one node (the dentry-marked
/// inode) to the chain, and `recovery_room_ok` reserves 2 blocks per chain node (+16, +2
/// segments). Recovery rewrites the inode (warm node), inserts the name into the parent's
/// dentry block (hot data) and rewrites the parent's inode (hot node): 3 blocks per chain
/// node in three logs. Every acknowledged state must mount read-write.
///
/// On fd77b54 (4096 blocks, 16-block segments, 400 directories, 900 blocks left): the
/// state after the fsync of /d285/x no longer mounts read-write (ENOSPC).
#[test]
fn fsync_of_new_files_in_many_directories_on_a_nearly_full_device_mounts_read_write() {
    for &(k, leave) in &[(400u32, 900u64)] {
        let mut fs = mount(mkfs(BLOCKS));
        let mut dirs = Vec::new();
        for i in 0..k {
            dirs.push(fs.mkdir(1, format!("d{i}").as_bytes(), 0o755, C, t(1)).unwrap().ino);
        }
        fill(&mut fs, 1, "filler", leave, t(2));
        fs.sync(t(3)).unwrap();
        let mut images = Vec::new();
        let mut acknowledged = 0;
        for (i, &d) in dirs.iter().enumerate() {
            let f = match fs.create(d, b"x", 0o644, C, t(4)) {
                Ok(a) => a.ino,
                Err(Error::NoSpace) => break,
                Err(e) => panic!("create: {e}"),
            };
            match fs.fsync(f, false, t(4)) {
                Ok(()) => {}
                Err(Error::NoSpace) => break,
                Err(e) => panic!("fsync: {e}"),
            }
            assert!(!fs.is_read_only());
            acknowledged += 1;
            // Crash images of every eighth fsync (a copy of the device each: keep it cheap).
            if i % 8 == 5 {
                images.push((i, fs.device().crash(|_| true)));
            }
        }
        let s = fs.stats();
        eprintln!(
            "k={k} leave={leave}: {} fsyncs acknowledged, {} reserve fallbacks, {} checkpoints",
            acknowledged, s.recovery_reserve_fallbacks, s.checkpoints
        );
        for (i, img) in images {
            let mut fs = Filesystem::mount(img, &big_cache(), t(100)).unwrap_or_else(|e| {
                panic!("k={k} leave={leave}: crash after the fsync of /d{i}/x: read-write mount failed: {e}")
            });
            for j in 0..=i {
                assert!(lookup_path(&mut fs, &format!("/d{j}/x")).is_some(), "/d{j}/x lost");
            }
            let mut dev = fs.unmount(t(101)).unwrap();
            let rep = fsck::check(&mut dev).unwrap();
            assert!(rep.is_clean(), "k={k} leave={leave} i={i}: {:?}", rep.problems);
        }
    }
}

// ---- path at fsync time: hard links ------------------------------------------------------

/// A file with two names, /a/x and /b/y (its inode records /b, the newer link). Directory
/// /a is renamed to /c; the file is written and fsync'd as /c/x. `below_renamed_dir` walks
/// the *recorded* parent (/b), finds no renamed directory, and the fsync appends a batch:
/// after a crash /c does not exist and the file is not at the path it was fsync'd under
/// (/a/x and /b/y). Issue 13 bug 6 with a hard link.
#[test]
fn fsync_of_a_hard_linked_file_below_a_renamed_directory_keeps_the_path_of_the_fsync() {
    let mut fs = mount(mkfs(BLOCKS));
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
    let x = fs.create(a, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.link(x, b, b"y", t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.rename(1, b"a", 1, b"c", RenameFlags::empty(), t(3)).unwrap();
    let data = pattern(5, 3 * B);
    fs.write(x, 0, &data, t(3)).unwrap();
    fs.fsync(x, false, t(3)).unwrap();
    let img = fs.into_device().crash(|_| true);
    let mut fs = Filesystem::mount(img, &big_cache(), t(4)).unwrap();
    let at = lookup_path(&mut fs, "/c/x");
    assert!(at.is_some(), "fsync'd as /c/x, recovered without /c/x (the rename of /a to /c was lost)");
    assert_eq!(read_all(&mut fs, at.unwrap()), data);
}

// ---- recovery: crash during the recovery of a chain with SSR, cleaning and overwrites ----

/// Random overwrites, truncations and fsyncs on a nearly full device with SSR and cleaning
/// in play, no checkpoint after the last sync; then a power cut at every write of the
/// recovery mount. `pin_and_advance` must keep every block the next recovery needs.
#[test]
fn crash_during_recovery_of_a_chain_written_by_ssr_and_cleaning_recovers() {
    for &(seed, leave, ops) in &[
        (1u64, 40u64, 150usize),
        (2, 80, 200),
        (3, 20, 120),
        (4, 160, 300),
        (5, 300, 400),
        (6, 0, 200),
        (7, 500, 600),
        (8, 120, 250),
    ] {
        let opts = MountOptions { dirty_bytes_max: 1 << 40, clean_cache_bytes_max: 1 << 40, ..MountOptions::default() };
        let mut fs = Filesystem::mount(CrashDevice::new(mkfs(BLOCKS)), &opts, t(0)).unwrap();
        let nfiles = 40usize;
        let mut files = Vec::new();
        let mut model: Vec<Vec<u8>> = Vec::new();
        for i in 0..nfiles {
            let f = fs.create(1, format!("f{i}").as_bytes(), 0o644, C, t(1)).unwrap().ino;
            let d = pattern(i as u32, 8 * B);
            fs.write(f, 0, &d, t(1)).unwrap();
            files.push(f);
            model.push(d);
        }
        // Half-valid segments: two fillers written 8 blocks each per checkpoint, then one
        // deleted; then the rest filled, so that new writes need SSR or cleaning.
        let fa = fs.create(1, b"fa", 0o644, C, t(2)).unwrap().ino;
        let fb = fs.create(1, b"fb", 0o644, C, t(2)).unwrap().ino;
        let mut off = 0u64;
        loop {
            let free = fs.statfs().unwrap().blocks_free;
            if free < 600 {
                break;
            }
            fs.write(fa, off, &vec![0xA1; 8 * B], t(2)).unwrap();
            fs.write(fb, off, &vec![0xB1; 8 * B], t(2)).unwrap();
            fs.sync(t(2)).unwrap();
            off += 8 * B as u64;
        }
        fs.unlink(1, b"fb", t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fill(&mut fs, 1, "filler", leave, t(2));
        fs.sync(t(3)).unwrap();
        let mut durable = model.clone();
        let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut next = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as usize
        };
        let mut last_cp = fs.stats().checkpoints;
        let s0 = fs.stats();
        let mut since_cp = 0;
        for op in 0..ops {
            let i = next() % nfiles;
            let f = files[i];
            let before = model.clone();
            let cps0 = fs.stats().checkpoints;
            match next() % 8 {
                0 => {
                    let sz = (next() % (8 * B)) as u64;
                    match fs.setattr(f, &SetAttr { size: Some(sz), ..Default::default() }, t(4)) {
                        Ok(_) => model[i].resize(sz as usize, 0),
                        Err(e) => eprintln!("op {op}: truncate /f{i} to {sz}: {e}"),
                    }
                }
                _ => {
                    let blk = next() % 10;
                    let d = pattern((op * 7 + i) as u32, B);
                    let r = fs.write(f, (blk * B) as u64, &d, t(4));
                    if let Err(e) = &r {
                        eprintln!("op {op}: write /f{i} block {blk}: {e}");
                    }
                    if r.is_ok() {
                        let end = (blk + 1) * B;
                        if model[i].len() < end {
                            model[i].resize(end, 0);
                        }
                        model[i][blk * B..end].copy_from_slice(&d);
                    }
                }
            }
            if fs.stats().checkpoints != cps0 {
                // A checkpoint inside the operation (before it changed anything).
                durable = before;
                last_cp = fs.stats().checkpoints;
            }
            if next() % 2 == 0 {
                match fs.fsync(f, false, t(4)) {
                    Ok(()) => durable[i] = model[i].clone(),
                    Err(e) => panic!("fsync: {e}"),
                }
            }
            let cps = fs.stats().checkpoints;
            if cps != last_cp {
                last_cp = cps;
                since_cp = 0;
                // A checkpoint made everything durable.
                durable = model.clone();
            } else {
                since_cp += 1;
            }
        }
        for (i, want) in model.iter().enumerate() {
            let got = read_all(&mut fs, files[i]);
            assert!(got == *want, "seed={seed}: running /f{i} differs from the model");
        }
        let s = fs.stats();
        eprintln!(
            "seed={seed} leave={leave}: {since_cp} ops since the last checkpoint; ssr_blocks={} gc_moved={} fallbacks={} cps={}",
            s.ssr_blocks - s0.ssr_blocks, s.gc_blocks_moved - s0.gc_blocks_moved, s.recovery_reserve_fallbacks, s.checkpoints - s0.checkpoints
        );
        let img = fs.into_device().crash(|_| true);
        let durable2 = durable.clone();
        let cuts = every_cut_of_mount_recovers(&img, &opts, &|fs| {
            for (i, want) in durable2.iter().enumerate() {
                let ino = lookup_path(fs, &format!("/f{i}")).unwrap();
                let got = read_all(fs, ino);
                assert!(
                    got == *want,
                    "seed={seed}: /f{i} differs from its last fsync ({} vs {} bytes)",
                    got.len(),
                    want.len()
                );
            }
        });
        eprintln!("seed={seed}: {cuts} cut points");
    }
}

// ---- failure atomicity: a write that needs more tree nodes than ids are left -------------

/// Three node ids left, none waiting for a checkpoint: `write_inner`'s `nids_short` asks
/// for `total / 1016 + 3` = 3 and is satisfied, but two blocks straddling the end of the
/// single-indirect region need five new tree nodes (indirect + direct below slot 3; the
/// double-indirect top, its second level and a direct node). Phase 1's `map_for_write`
/// creates three of them and fails: ENOSPC, with node ids used up by empty nodes that the
/// next checkpoint makes durable.
#[test]
fn write_refused_for_node_ids_uses_no_node_ids() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(1, b"sparse", 0o644, C, t(1)).unwrap().ino;
    use_node_ids_until(&mut fs, d, 3, t(2));
    fs.sync(t(3)).unwrap();
    let a = rollfs_core::layout::ADDRS_PER_INODE as u64;
    let p = rollfs_core::layout::ADDRS_PER_BLOCK as u64;
    let idx = a + 2 * p + 2 * p * p - 1;
    let before = fs.statfs().unwrap().files_free;
    let size_before = fs.getattr(f).unwrap().size;
    match fs.write(f, idx * B as u64, &pattern(3, 2 * B), t(4)) {
        Ok(_) => {}
        Err(e) => {
            let after = fs.statfs().unwrap().files_free;
            assert_eq!(fs.getattr(f).unwrap().size, size_before);
            assert_eq!(after, before, "a write refused ({e}) used {} node ids", before - after);
        }
    }
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

// ---- crash during a recovery that links names, grows directories and adds xattrs ----------

/// New files fsync'd into directories that exist at the checkpoint (one of them large, so
/// that recovery's inserts grow it), some with a first xattr and a block deep in the
/// double-indirect tree; then a power cut at every write of the recovery mount.
#[test]
fn crash_during_recovery_that_links_names_and_grows_directories_recovers() {
    for &(leave, nfiles) in &[(2000u64, 40usize), (700, 60), (400, 30)] {
        let mut fs = mount(mkfs(BLOCKS));
        let big = fs.mkdir(1, b"big", 0o755, C, t(1)).unwrap().ino;
        for i in 0..300 {
            let a = fs.create(big, format!("old-entry-with-a-long-name-{i:04}").as_bytes(), 0o644, C, t(1)).unwrap();
            let _ = a;
        }
        let mut dirs = vec![big];
        for i in 0..8 {
            dirs.push(fs.mkdir(1, format!("d{i}").as_bytes(), 0o755, C, t(1)).unwrap().ino);
        }
        fill(&mut fs, 1, "filler", leave, t(2));
        fs.sync(t(3)).unwrap();
        let deep = rollfs_core::layout::ADDRS_PER_INODE as u64
            + 2 * rollfs_core::layout::ADDRS_PER_BLOCK as u64
            + 2 * (rollfs_core::layout::ADDRS_PER_BLOCK as u64).pow(2)
            + 5;
        let mut expect: Vec<(String, u64, Vec<u8>, bool)> = Vec::new();
        for i in 0..nfiles {
            let di = i % dirs.len();
            let dname = if di == 0 { "big".to_string() } else { format!("d{}", di - 1) };
            let name = format!("new-file-with-a-long-name-{i:04}");
            let f = match fs.create(dirs[di], name.as_bytes(), 0o644, C, t(4)) {
                Ok(a) => a.ino,
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            };
            let x = i % 3 == 0;
            if x && fs.setxattr(f, b"user.k", b"v", XattrSetMode::Any, t(4)).is_err() {
                break;
            }
            let blk = if i % 4 == 1 { deep } else { 0 };
            let data = pattern(i as u32 + 50, B);
            if fs.write(f, blk * B as u64, &data, t(4)).is_err() {
                break;
            }
            match fs.fsync(f, false, t(4)) {
                Ok(()) => expect.push((format!("/{dname}/{name}"), blk, data, x)),
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            }
        }
        let s = fs.stats();
        eprintln!(
            "leave={leave}: {} fsyncs, {} fallbacks, {} checkpoints",
            expect.len(),
            s.fsync_checkpoint_fallbacks,
            s.checkpoints
        );
        let img = fs.into_device().crash(|_| true);
        let opts = big_cache();
        let cuts = every_cut_of_mount_recovers(&img, &opts, &|fs| {
            for (path, blk, data, x) in &expect {
                let ino = lookup_path(fs, path).unwrap_or_else(|| panic!("{path} lost"));
                let mut buf = vec![0u8; B];
                fs.read(ino, blk * B as u64, &mut buf).unwrap();
                assert!(buf == *data, "{path}: data lost");
                if *x {
                    assert_eq!(fs.getxattr(ino, b"user.k").unwrap(), b"v", "{path}: xattr lost");
                }
            }
        });
        eprintln!("leave={leave}: {cuts} cut points");
    }
}

// ---- below_renamed_dir follows a stale parent -------------------------------------------

/// /a/x gets a second name /b/y (its inode now records /b); /b/y is unlinked and /b
/// removed, so the inode's recorded parent is a freed inode. After any directory rename,
/// fsync of /a/x walks `pino` up from the file (`below_renamed_dir`) and reads the freed
/// directory's inode: the fsync fails (and the data it was to make durable is not).
#[test]
fn fsync_after_the_recorded_parent_was_removed_and_a_directory_renamed_succeeds() {
    let mut fs = mount(mkfs(BLOCKS));
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
    fs.mkdir(1, b"c", 0o755, C, t(1)).unwrap();
    let x = fs.create(a, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.link(x, b, b"y", t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.unlink(b, b"y", t(3)).unwrap();
    fs.rmdir(1, b"b", t(3)).unwrap();
    fs.sync(t(4)).unwrap();
    fs.rename(1, b"c", 1, b"e", RenameFlags::empty(), t(5)).unwrap();
    let data = pattern(9, 2 * B);
    fs.write(x, 0, &data, t(5)).unwrap();
    let r = fs.fsync(x, false, t(5));
    assert!(r.is_ok(), "fsync of /a/x failed: {:?} (read-only: {})", r, fs.is_read_only());
    let img = fs.into_device().crash(|_| true);
    let mut fs = Filesystem::mount(img, &big_cache(), t(6)).unwrap();
    let x = lookup_path(&mut fs, "/a/x").expect("/a/x lost");
    assert_eq!(read_all(&mut fs, x), data);
}

// ---- a second recovery after a crash in the first, on a nearly full device ---------------

/// The recovery checkpoint writes the recovered nodes into the warm node log right after the
/// chain, with the old checkpoint version and `next_blkaddr` links: a crash before its header
/// leaves them looking like more chain. The next recovery walks into them and pins every
/// segment they occupy, so it has less room than the first attempt had. On a nearly full
/// device the first recovery fits; the second must too.
#[test]
fn second_recovery_after_a_crash_in_the_first_on_a_nearly_full_device_mounts_read_write() {
    let (k, leave) = (400u32, 900u64);
    let mut fs = mount(mkfs(BLOCKS));
    let mut dirs = Vec::new();
    for i in 0..k {
        dirs.push(fs.mkdir(1, format!("d{i}").as_bytes(), 0o755, C, t(1)).unwrap().ino);
    }
    fill(&mut fs, 1, "filler", leave, t(2));
    fs.sync(t(3)).unwrap();
    let mut images = Vec::new();
    for (i, &d) in dirs.iter().enumerate() {
        let f = match fs.create(d, b"x", 0o644, C, t(4)) {
            Ok(a) => a.ino,
            Err(_) => break,
        };
        if fs.fsync(f, false, t(4)).is_err() {
            break;
        }
        images.push((i, fs.device().crash(|_| true)));
    }
    // The longest chain whose recovery still mounts (F3 aside).
    let mut tested = 0;
    for (i, img) in images.into_iter().filter(|(i, _)| (276..286).contains(i) || *i == 399) {
        let mut dev = CrashDevice::new(img.clone());
        let (writes, walked1) = match Filesystem::mount(&mut dev, &big_cache(), t(100)) {
            Ok(fs) => {
                let w = fs.stats().recovered_nodes_walked;
                drop(fs);
                (dev.writes, w)
            }
            Err(_) => continue,
        };
        // Power cuts late in the recovery checkpoint: its nodes written, header not.
        {
            let cut = writes - 1;
            let mut dev = CrashDevice::new(img.clone());
            dev.power_cut_at = Some(cut);
            assert!(Filesystem::mount(&mut dev, &big_cache(), t(100)).is_err());
            let after = dev.crash(|_| true);
            let r = Filesystem::mount(after, &big_cache(), t(200));
            if let Ok(fs2) = &r {
                eprintln!(
                    "i={i} cut={cut}/{writes}: first walked {walked1}, second walked {}",
                    fs2.stats().recovered_nodes_walked
                );
            }
            assert!(
                r.is_ok(),
                "chain up to /d{i}/x: first recovery mounts; after a power cut at write {cut}/{writes} of it, the \
                 second fails: {:?}",
                r.err()
            );
        }
        tested += 1;
    }
    assert!(tested > 0);
}

/// As above, with one id freed since the checkpoint: `write_inner` of the target now
/// checkpoints to get it back — after `new_inode` linked the symlink and before its target
/// is written. A crash after `symlink` returned (no sync) leaves a durable empty symlink:
/// a torn symlink(2).
#[test]
fn symlink_is_never_durable_without_its_target() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    use_node_ids_until(&mut fs, d, 4, t(2));
    fs.create(d, b"tmp", 0o644, C, t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.unlink(d, b"tmp", t(2)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.symlink(d, b"link", b"target", C, t(4)).unwrap();
    eprintln!("checkpoints inside symlink: {}", fs.stats().checkpoints - cps);
    let img = fs.into_device().crash(|_| true);
    let mut fs = Filesystem::mount(img, &big_cache(), t(6)).unwrap();
    if let Some(l) = lookup_path(&mut fs, "/d/link") {
        assert_eq!(fs.readlink(l).unwrap(), b"target", "a symlink is durable without its target");
    }
}

// ---- recovery reserve: a sparse fsync has far more nodes than `recovery_room_ok` counts ----

/// `recovery_room_ok` estimates a batch's nodes as `min(dirty nodes + 1, 2 * (data / 1016 +
/// 3))`: 6 for a batch of fewer than 1016 data blocks, however many direct nodes they are
/// spread over. One block in each of K direct nodes (a sparse file, a database's scattered
/// pages) makes a batch of K + 1 nodes: the fsync is acknowledged (or runs out of segments
/// while writing it), and the roll-forward, which rewrites the K direct nodes, their indirect
/// node and the inode, finds no room at mount.
#[test]
fn sparse_fsync_on_a_nearly_full_device_mounts_read_write() {
    let a = rollfs_core::layout::ADDRS_PER_INODE as u64;
    let p = rollfs_core::layout::ADDRS_PER_BLOCK as u64;
    let mut failures = Vec::new();
    for &k in &[500u64, 1000] {
        for &leave in &[0u64, 256] {
            let mut fs = mount(mkfs(BLOCKS));
            let f = fs.create(1, b"sparse", 0o644, C, t(1)).unwrap().ino;
            fill(&mut fs, 1, "filler", leave + 2 * k, t(2));
            fs.sync(t(3)).unwrap();
            let mut written = Vec::new();
            for j in 0..k {
                let idx = a + 2 * p + j * p; // one block per direct node below slot 2
                let data = pattern(j as u32 + 7, B);
                match fs.write(f, idx * B as u64, &data, t(4)) {
                    Ok(_) => written.push((idx, data)),
                    Err(Error::NoSpace) => break,
                    Err(e) => panic!("{e}"),
                }
            }
            let cps = fs.stats().checkpoints;
            let r = fs.fsync(f, false, t(5));
            let fell_back = fs.stats().checkpoints != cps;
            if let Err(e) = &r {
                failures.push(format!("k={k} leave={leave}: fsync failed: {e} (read-only: {})", fs.is_read_only()));
                continue;
            }
            eprintln!(
                "k={k} leave={leave}: {} written, fell back: {fell_back}, free after: {}",
                written.len(),
                fs.statfs().unwrap().blocks_free
            );
            if fell_back {
                continue;
            }
            let img = fs.into_device().crash(|_| true);
            let ro =
                Filesystem::mount(img.clone(), &MountOptions { read_only: true, ..big_cache() }, t(100)).map(|_| ());
            let mut img2 = img.clone();
            let fsck_clean = fsck::check(&mut img2).map(|r| r.is_clean());
            eprintln!("k={k} leave={leave}: read-only mount: {ro:?}, fsck clean: {fsck_clean:?}");
            match Filesystem::mount(img, &big_cache(), t(100)) {
                Ok(mut fs) => {
                    for (idx, data) in &written {
                        let mut buf = vec![0u8; B];
                        fs.read(f, idx * B as u64, &mut buf).unwrap();
                        assert!(buf == *data, "k={k} leave={leave}: block {idx} lost");
                    }
                }
                Err(e) => failures.push(format!(
                    "k={k} leave={leave}: fsync of {} sparse blocks acknowledged, read-write mount fails: {e}",
                    written.len()
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
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

/// A power cut at every write of the recovery of a sparse fsync (new direct nodes below an
/// indirect node of the checkpoint, recreated under new node ids by roll-forward) and of a
/// second sparse file created since the checkpoint.
#[test]
fn crash_during_recovery_of_sparse_files_recovers() {
    let a = rollfs_core::layout::ADDRS_PER_INODE as u64;
    let p = rollfs_core::layout::ADDRS_PER_BLOCK as u64;
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"old", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, (a + 2 * p) * B as u64, &pattern(1, B), t(1)).unwrap();
    fill(&mut fs, 1, "filler", 900, t(2));
    fs.sync(t(3)).unwrap();
    let g = fs.create(1, b"new", 0o644, C, t(4)).unwrap().ino;
    let mut expect = Vec::new();
    for j in 0..40u64 {
        let idx = a + 2 * p + j * p + (j % 7);
        let d = pattern(100 + j as u32, B);
        fs.write(f, idx * B as u64, &d, t(4)).unwrap();
        expect.push(("/old", idx, d));
        let idx2 = a + 2 * p + 2 * p * p + j * p * 3;
        let d2 = pattern(200 + j as u32, B);
        fs.write(g, idx2 * B as u64, &d2, t(4)).unwrap();
        expect.push(("/new", idx2, d2));
        if j % 10 == 9 {
            fs.fsync(f, false, t(4)).unwrap();
            fs.fsync(g, false, t(4)).unwrap();
        }
    }
    let cps_after_sync = 1;
    assert_eq!(fs.stats().checkpoints, cps_after_sync, "no checkpoint after the sync");
    let img = fs.into_device().crash(|_| true);
    let cuts = every_cut_of_mount_recovers(&img, &big_cache(), &|fs| {
        for (path, idx, d) in &expect {
            let ino = lookup_path(fs, path).unwrap_or_else(|| panic!("{path} lost"));
            let mut buf = vec![0u8; B];
            fs.read(ino, idx * B as u64, &mut buf).unwrap();
            assert!(buf == *d, "{path} block {idx} lost");
        }
    });
    eprintln!("{cuts} cut points");
}

/// F7 through an atomic commit: SQLite pages scattered over a large database file.
#[test]
fn sparse_atomic_commit_on_a_nearly_full_device_mounts_read_write() {
    let a = rollfs_core::layout::ADDRS_PER_INODE as u64;
    let p = rollfs_core::layout::ADDRS_PER_BLOCK as u64;
    let k = 500u64;
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
    fill(&mut fs, 1, "filler", 256 + 2 * k, t(2));
    fs.sync(t(3)).unwrap();
    fs.start_atomic_write(f).unwrap();
    for j in 0..k {
        fs.write(f, (a + 2 * p + j * p) * B as u64, &pattern(j as u32, B), t(4)).unwrap();
    }
    let cps = fs.stats().checkpoints;
    match fs.commit_atomic_write(f, t(5)) {
        Ok(()) => {}
        Err(e) => {
            assert!(!fs.is_read_only(), "a refused commit turned the filesystem read-only ({e})");
            return;
        }
    }
    if fs.stats().checkpoints != cps {
        return; // served by a checkpoint: nothing to recover
    }
    let img = fs.into_device().crash(|_| true);
    let r = Filesystem::mount(img, &big_cache(), t(100));
    assert!(r.is_ok(), "atomic commit of {k} scattered pages returned Ok; read-write mount: {:?}", r.err());
}

// ---- randomized failure atomicity near the limits -----------------------------------------

fn digest<D: BlockDevice>(fs: &mut Filesystem<D>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(1 as Ino, String::new())];
    while let Some((dir, path)) = stack.pop() {
        let mut ents = Vec::new();
        fs.readdir(dir, 0, &mut |e| {
            ents.push(e);
            true
        })
        .unwrap();
        for e in ents {
            if e.name == b"." || e.name == b".." || (dir == 1 && (e.name == b"h" || e.name == b"filler")) {
                continue;
            }
            let p = format!("{path}/{}", String::from_utf8_lossy(&e.name));
            let a = fs.getattr(e.ino).unwrap();
            let mut line = format!("{p} {:?} size={} links={} mode={:o}", e.kind, a.size, a.nlink, a.perm);
            if matches!(e.kind, FileType::Regular | FileType::Symlink) {
                let mut buf = vec![0u8; a.size as usize];
                fs.read(e.ino, 0, &mut buf).unwrap();
                let h = buf.iter().fold(0u64, |h, &b| h.wrapping_mul(1099511628211).wrapping_add(b as u64));
                line += &format!(" data={h:x}");
            }
            let mut xs = fs.listxattr(e.ino).unwrap();
            xs.sort();
            for x in xs {
                let v = fs.getxattr(e.ino, &x).unwrap();
                line += &format!(" x:{}={}", String::from_utf8_lossy(&x), v.len());
            }
            out.push(line);
            if e.kind == FileType::Directory {
                stack.push((e.ino, p));
            }
        }
    }
    out.sort();
    out
}

/// Random namespace and data operations on a device kept at its limits (blocks or node
/// ids); after every operation that returns an error, the tree must be exactly as before
/// (/h, the directory holding the files that use up node ids, and /filler are left out of the
/// digest).
/// On fd77b54 it finds F2 (seed 5: symlink).
#[test]
fn random_operations_at_the_limits_change_nothing_when_they_fail() {
    let mut report = Vec::new();
    for &(seed, leave, ids_left) in
        &[(1u64, 0u64, None), (2, 4, None), (3, 40, Some(3u64)), (4, 200, Some(4)), (5, 8, Some(5))]
    {
        let mut fs = mount(mkfs(BLOCKS));
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let e = fs.mkdir(1, b"e", 0o755, C, t(1)).unwrap().ino;
        let mut names: Vec<(Ino, String)> = Vec::new();
        for i in 0..20 {
            let n = format!("f{i}");
            let f = fs.create(if i % 2 == 0 { d } else { e }, n.as_bytes(), 0o644, C, t(1)).unwrap().ino;
            fs.write(f, 0, &pattern(i, (i as usize % 5 + 1) * B + 100), t(1)).unwrap();
            names.push((if i % 2 == 0 { d } else { e }, n));
        }
        if let Some(k) = ids_left {
            let h = fs.mkdir(1, b"h", 0o755, C, t(1)).unwrap().ino;
            use_node_ids_until(&mut fs, h, k, t(1));
        }
        fill(&mut fs, 1, "filler", leave, t(2));
        fs.sync(t(3)).unwrap();
        let mut rng = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng as usize
        };
        for op in 0..300 {
            let (p, n) = names[next() % names.len()].clone();
            let dirs = [d, e];
            let q = dirs[next() % 2];
            let before = digest(&mut fs);
            let ino = fs.lookup(p, n.as_bytes()).ok().map(|a| a.ino);
            let newname = format!("g{op}");
            let (what, r): (String, Result<()>) = match next() % 11 {
                0 => ("create".into(), fs.create(q, newname.as_bytes(), 0o644, C, t(4)).map(|_| ())),
                1 => ("mkdir".into(), fs.mkdir(q, newname.as_bytes(), 0o755, C, t(4)).map(|_| ())),
                2 => ("symlink".into(), fs.symlink(q, newname.as_bytes(), b"some/target", C, t(4)).map(|_| ())),
                3 => match ino {
                    Some(i) => ("link".into(), fs.link(i, q, newname.as_bytes(), t(4)).map(|_| ())),
                    None => continue,
                },
                4 => ("rename".into(), fs.rename(p, n.as_bytes(), q, newname.as_bytes(), RenameFlags::empty(), t(4))),
                5 => ("unlink".into(), fs.unlink(p, n.as_bytes(), t(4))),
                6 => match ino {
                    Some(i) => (
                        "setxattr".into(),
                        fs.setxattr(i, format!("user.a{}", op % 3).as_bytes(), &[7u8; 200], XattrSetMode::Any, t(4)),
                    ),
                    None => continue,
                },
                7 | 8 => match ino {
                    Some(i) => {
                        let off = (next() % (1200 * B)) as u64;
                        ("write".into(), fs.write(i, off, &pattern(op as u32, next() % (3 * B) + 1), t(4)).map(|_| ()))
                    }
                    None => continue,
                },
                9 => match ino {
                    Some(i) => {
                        let sz = (next() % (6 * B)) as u64;
                        (
                            "truncate".into(),
                            fs.setattr(i, &SetAttr { size: Some(sz), ..Default::default() }, t(4)).map(|_| ()),
                        )
                    }
                    None => continue,
                },
                _ => match ino {
                    Some(i) => ("fsync".into(), fs.fsync(i, false, t(4))),
                    None => continue,
                },
            };
            match r {
                Ok(()) => {
                    if what == "rename" || what == "create" || what == "link" {
                        names.push((q, newname.clone()));
                    }
                }
                Err(err) => {
                    if fs.is_read_only() {
                        report.push(format!("seed {seed} op {op} {what}: {err} turned the filesystem read-only"));
                        break;
                    }
                    let after = digest(&mut fs);
                    if after != before {
                        let diff: Vec<_> = after
                            .iter()
                            .filter(|l| !before.contains(l))
                            .chain(before.iter().filter(|l| !after.contains(l)))
                            .cloned()
                            .collect();
                        report.push(format!("seed {seed} op {op} {what} of {n}: {err} but changed: {diff:?}"));
                    }
                }
            }
        }
    }
    assert!(report.is_empty(), "{report:#?}");
}
