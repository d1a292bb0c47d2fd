//! A full device, exhausted resources and failed operations lose nothing.
//!
//! Each test is named after its scenario (issue 13's list), drives the core to the limit
//! it is about (free blocks, node ids, orphan slots) on a small device (16 MiB, 64 KiB
//! segments), and then checks the invariants of docs/DESIGN.md: an operation that fails
//! changes nothing (failure atomicity), every fsync that returned survives a crash, and a
//! crash at any write of the recovery mount leaves an image that mounts read-write and
//! that fsck finds clean.

mod common;

use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

// ---- 1 and 2: recovery on a nearly full device ----------------------------------------

/// Fills to `leave` free blocks, syncs, overwrites and fsyncs `n` existing files, then a new
/// file gets its first xattr, data and an fsync; returns the crash image (everything that
/// was submitted) and the expected contents.
fn nearly_full_fsync_chain(n: usize, leave: u64) -> (MemDevice, Vec<(String, Vec<u8>)>) {
    nearly_full_chain(n, leave, false)
}

/// As [`nearly_full_fsync_chain`]; with `write_all_first`, every file is overwritten before
/// the first fsync, so the fsyncs alone append the whole chain (no write in between that
/// would make room).
fn nearly_full_chain(n: usize, leave: u64, write_all_first: bool) -> (MemDevice, Vec<(String, Vec<u8>)>) {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let mut files = Vec::new();
    for i in 0..n {
        let name = format!("f{i}");
        let f = fs.create(d, name.as_bytes(), 0o644, C, t(2)).unwrap().ino;
        fs.write(f, 0, &pattern(i as u32, B), t(2)).unwrap();
        files.push((name, f));
    }
    fill(&mut fs, 1, "filler", leave, t(3));
    fs.sync(t(4)).unwrap();
    let mut expect = Vec::new();
    for (i, (name, f)) in files.iter().enumerate() {
        let data = pattern(1000 + i as u32, B);
        fs.write(*f, 0, &data, t(5)).unwrap();
        if !write_all_first {
            fs.fsync(*f, false, t(5)).unwrap();
        }
        expect.push((format!("/d/{name}"), data));
    }
    if write_all_first {
        for (_, f) in &files {
            fs.fsync(*f, false, t(5)).unwrap_or_else(|e| panic!("fsync on a nearly full device: {e}"));
            assert!(!fs.is_read_only(), "an fsync turned the filesystem read-only");
        }
        let s = fs.stats();
        eprintln!(
            "n={n} leave={leave}: {} fsyncs, {} fell back for recovery room",
            s.fsyncs, s.recovery_reserve_fallbacks
        );
    }
    // The new file needs room of its own: on a full device it may be refused (ENOSPC),
    // which must change nothing.
    let data = pattern(7, 2 * B);
    let made = fs.create(d, b"new", 0o644, C, t(6)).and_then(|a| {
        fs.setxattr(a.ino, b"user.first", b"value", XattrSetMode::Any, t(6))?;
        fs.write(a.ino, 0, &data, t(6))?;
        fs.fsync(a.ino, false, t(6))
    });
    match made {
        Ok(()) => expect.push(("/d/new".into(), data)),
        Err(Error::NoSpace) => {}
        Err(e) => panic!("new file: {e}"),
    }
    assert!(!fs.is_read_only());
    (fs.into_device().crash(|_| true), expect)
}

fn check_contents(fs: &mut Filesystem<MemDevice>, expect: &[(String, Vec<u8>)]) {
    for (path, data) in expect {
        let ino = lookup_path(fs, path).unwrap_or_else(|| panic!("{path} lost"));
        assert!(read_all(fs, ino) == *data, "{path}: fsync'd data lost");
    }
    if let Some(x) = lookup_path(fs, "/d/new") {
        assert_eq!(fs.getxattr(x, b"user.first").unwrap(), b"value");
    }
}

#[test]
fn recovery_with_a_first_xattr_on_a_nearly_full_device_never_checkpoints_before_its_own() {
    let mut recovered = 0;
    for &(n, leave) in &[(30, 13), (120, 13), (400, 13), (60, 4), (30, 120), (100, 200)] {
        let (img, expect) = nearly_full_fsync_chain(n, leave);
        let mut dev = CrashDevice::new(img.clone());
        let fs = Filesystem::mount(&mut dev, &big_cache(), t(1000)).unwrap();
        let s = fs.stats();
        // One checkpoint, the mount's, at the end of recovery; none in the middle (also
        // when the fsyncs fell back to checkpoints for lack of room and there is nothing
        // to recover: every read-write mount writes one, for its version jump).
        assert_eq!(s.checkpoints, 1, "n={n} leave={leave}: recovery wrote a checkpoint of its own");
        recovered += s.recovered_batches;
        drop(fs);
        let cuts = every_cut_of_mount_recovers(&img, &big_cache(), &|fs| check_contents(fs, &expect));
        eprintln!("n={n} leave={leave}: {} batches recovered, {cuts} cut points", s.recovered_batches);
    }
    assert!(recovered > 0, "no case exercised roll-forward on a nearly full device");
}

#[test]
fn nearly_full_device_with_an_fsync_chain_mounts_read_write() {
    let cases = [(50, 0, false), (50, 2, false), (50, 8, false), (50, 13, false), (50, 40, false)];
    let cases = cases.into_iter().chain([
        (400, 13, true),
        (300, 40, true),
        (200, 0, true),
        (300, 700, true),
        (500, 1100, true),
    ]);
    for (n, leave, write_all_first) in cases {
        let (img, expect) = nearly_full_chain(n, leave, write_all_first);
        let mut fs = Filesystem::mount(img.clone(), &big_cache(), t(1000))
            .unwrap_or_else(|e| panic!("n={n} leave={leave}: read-write mount failed: {e}"));
        assert!(!fs.is_read_only());
        check_contents(&mut fs, &expect);
        // And the mounted filesystem still works: delete the filler, write, sync.
        fs.unlink(1, b"filler", t(1001)).unwrap();
        let f = fs.create(1, b"after", 0o644, C, t(1001)).unwrap().ino;
        fs.write(f, 0, &pattern(5, 8 * B), t(1001)).unwrap();
        unmount_clean(fs, t(1002));
        // A read-only mount works too.
        let mut ro = Filesystem::mount(img, &MountOptions { read_only: true, ..big_cache() }, t(1003)).unwrap();
        check_contents(&mut ro, &expect);
    }
}

/// Cleaning inside fsync: a device of one-block files with every third unlinked and
/// checkpointed (segments two-thirds valid), the rest filled; then overwrite + fsync of
/// every kept file without a sync. The chain uses up free segments until its recovery
/// reserve runs short: fsync falls back to a checkpoint, and when that leaves fewer free
/// segments than an empty chain's roll-forward needs, cleans (`fsync_gc_rounds`). Every
/// fsync survives a crash after the last one, and a cut at any write of the recovery
/// mount recovers.
#[test]
fn fsync_cleans_when_its_fallback_checkpoint_leaves_too_few_free_segments() {
    let mut rounds = 0;
    for &(blocks, n, leave) in &[(3072u64, 900usize, 0u64), (4096, 1100, 20)] {
        let mut fs = mount(mkfs(blocks));
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let mut files = Vec::new();
        for i in 0..n {
            let name = format!("f{i}");
            let f = fs.create(d, name.as_bytes(), 0o644, C, t(2)).unwrap().ino;
            fs.write(f, 0, &pattern(i as u32, B), t(2)).unwrap();
            files.push((name, f));
        }
        fs.sync(t(3)).unwrap();
        for (name, _) in files.iter().step_by(3) {
            fs.unlink(d, name.as_bytes(), t(4)).unwrap();
        }
        fs.sync(t(5)).unwrap();
        fill(&mut fs, 1, "filler", leave, t(6));
        fs.sync(t(7)).unwrap();
        let mut expect = Vec::new();
        for (k, (name, f)) in files.iter().enumerate().filter(|(k, _)| k % 3 != 0) {
            let data = pattern(5000 + k as u32, B);
            fs.write(*f, 0, &data, t(8)).unwrap();
            fs.fsync(*f, k % 4 == 1, t(8)).unwrap();
            expect.push((format!("/d/{name}"), data));
        }
        assert!(!fs.is_read_only());
        let s = fs.stats();
        eprintln!(
            "blocks={blocks} n={n} leave={leave}: {} fallbacks, {} cleaning rounds in fsync",
            s.recovery_reserve_fallbacks, s.fsync_gc_rounds
        );
        rounds += s.fsync_gc_rounds;
        let img = fs.into_device().crash(|_| true);
        let check = |fs: &mut Filesystem<MemDevice>| check_contents(fs, &expect);
        let mut fs = Filesystem::mount(img.clone(), &big_cache(), t(1000)).unwrap();
        check(&mut fs);
        every_cut_of_mount_recovers(&img, &big_cache(), &check);
    }
    assert!(rounds > 0, "no case cleaned inside fsync: the scenario no longer reaches it");
}

// ---- 3: atomic commit that fails ------------------------------------------------------

/// Creates and unlinks files until node ids run out, without a checkpoint between.
fn churn_node_ids<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, now: Timestamp) -> u64 {
    let mut n = 0;
    let avail = fs.statfs().unwrap().files_free;
    for i in 0..avail {
        let name = format!("tmp{i}");
        match fs.create(dir, name.as_bytes(), 0o644, C, now) {
            Ok(_) => {}
            Err(Error::NoSpace) => break,
            Err(e) => panic!("churn: {e}"),
        }
        fs.unlink(dir, name.as_bytes(), now).unwrap();
        n += 1;
    }
    n
}

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

/// An atomic transaction over block 0 (in the inode) and block 914 (needs a new direct
/// node) either commits whole or, when it fails, leaves the file as it was, abortable,
/// after a sync and after a crash.
fn atomic_commit_all_or_nothing(exhaust_for_real: bool) {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(d, b"db", 0o644, C, t(1)).unwrap().ino;
    let old = pattern(1, B);
    fs.write(f, 0, &old, t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    // The session stages first: its blocks live in a hidden inode (issue 35, finding 7),
    // which takes node ids of its own. Then the ids run out, and the commit needs one more
    // (the file's own direct node for block 914).
    fs.start_atomic_write(f).unwrap();
    let new0 = pattern(2, B);
    let new914 = pattern(3, B);
    fs.write(f, 0, &new0, t(4)).unwrap();
    fs.write(f, 914 * B as u64, &new914, t(4)).unwrap();
    if exhaust_for_real {
        exhaust_node_ids(&mut fs, d, t(3));
    } else {
        churn_node_ids(&mut fs, d, t(3));
    }
    let committed = match fs.commit_atomic_write(f, t(5)) {
        Ok(()) => true,
        Err(Error::NoSpace) => {
            assert!(fs.in_atomic_write(f), "a failed commit must leave the session open (abortable)");
            assert!(!fs.is_read_only(), "a commit refused for space must not turn the filesystem read-only");
            fs.abort_atomic_write(f).unwrap();
            assert!(!fs.in_atomic_write(f));
            assert_eq!(read_all(&mut fs, f), old, "a failed, aborted commit changed the file");
            false
        }
        Err(e) => panic!("commit: {e}"),
    };
    assert!(!exhaust_for_real || !committed, "commit needing a new node id succeeded with none left");
    fs.sync(t(6)).unwrap();
    let img = fs.into_device().crash(|_| true);
    let mut fs = Filesystem::mount(img, &big_cache(), t(7)).unwrap();
    let f = lookup_path(&mut fs, "/d/db").unwrap();
    let got = read_all(&mut fs, f);
    if committed {
        assert_eq!(got.len(), 915 * B);
        assert!(got[..B] == new0[..] && got[914 * B..] == new914[..], "committed transaction partly lost");
    } else {
        assert!(got == old, "failed commit partly durable: size {} (old {})", got.len(), old.len());
    }
}

#[test]
fn atomic_commit_after_node_id_churn_commits_whole() {
    atomic_commit_all_or_nothing(false);
}

#[test]
fn atomic_commit_without_node_ids_fails_whole_and_stays_abortable() {
    atomic_commit_all_or_nothing(true);
}

// ---- 4: truncate under space pressure ---------------------------------------------------

#[test]
fn truncate_into_a_block_under_space_pressure_is_atomic() {
    // Sweep how full the device is so that the tail zeroing's reservation falls on every
    // path: room, a checkpoint to make room, and ENOSPC.
    for leave in 0..24u64 {
        let mut fs = mount(mkfs(BLOCKS));
        let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
        let old = pattern(11, 3 * B + 100);
        fs.write(f, 0, &old, t(1)).unwrap();
        fs.sync(t(2)).unwrap();
        // Dirty data waiting for write-back makes the reservation checkpoint.
        fill(&mut fs, 1, "filler", leave, t(3));
        let new_size = B as u64 + 1000;
        let r = fs.setattr(f, &SetAttr { size: Some(new_size), ..Default::default() }, t(4));
        let expect: Vec<u8> = match r {
            Ok(_) => old[..new_size as usize].to_vec(),
            Err(Error::NoSpace) => old.clone(),
            Err(e) => panic!("leave={leave}: truncate: {e}"),
        };
        assert!(read_all(&mut fs, f) == expect, "leave={leave}: running file differs");
        // A crash now: whatever is durable must be the old file or the new one, never the
        // old size with a freed block.
        for img in [fs.device().crash_durable_only(), fs.device().crash(|_| true)] {
            let mut fs2 = Filesystem::mount(img, &big_cache(), t(5)).unwrap();
            let f2 = lookup_path(&mut fs2, "/f").unwrap();
            let got = read_all(&mut fs2, f2);
            assert!(
                got == old || got == old[..new_size as usize],
                "leave={leave}: truncate torn by a crash: size {} (old {}, new {new_size})",
                got.len(),
                old.len()
            );
        }
    }
}

// ---- 5: many open-but-unlinked files -----------------------------------------------------

#[test]
fn thousands_of_open_unlinked_files_stay_writable_and_are_freed_at_mount() {
    // ROLLFS_ORPHANS=100000 for the full figure (needs a larger image: node ids are a
    // quarter of the main area's blocks).
    let count: u64 = std::env::var("ROLLFS_ORPHANS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let blocks = (count * 6).max(BLOCKS * 4);
    let mut fs = Filesystem::mount(CrashDevice::new(mkfs(blocks)), &big_cache(), t(0)).unwrap();
    let d = fs.mkdir(1, b"tmp", 0o1777, C, t(1)).unwrap().ino;
    let mut inos = Vec::new();
    for i in 0..count {
        let name = format!("o{i}");
        let f = fs.create(d, name.as_bytes(), 0o600, C, t(2)).unwrap().ino;
        fs.open(f).unwrap();
        fs.unlink(d, name.as_bytes(), t(2)).unwrap();
        inos.push(f);
    }
    fs.sync(t(3)).expect("a checkpoint with many orphans");
    assert!(!fs.is_read_only());
    // Still writable: create, write, sync.
    let keep = fs.create(1, b"keep", 0o644, C, t(4)).unwrap().ino;
    fs.write(keep, 0, &pattern(4, B), t(4)).unwrap();
    fs.sync(t(5)).unwrap();
    let free_before = fs.statfs().unwrap().files_free;
    // Crash with every orphan still open: the mount frees them all.
    let img = fs.into_device().crash_durable_only();
    let mut fs = Filesystem::mount(img, &big_cache(), t(6)).unwrap();
    assert!(fs.statfs().unwrap().files_free >= free_before + count, "orphans not freed at mount");
    let k = lookup_path(&mut fs, "/keep").unwrap();
    assert_eq!(read_all(&mut fs, k), pattern(4, B));
    unmount_clean(fs, t(7));
}

// ---- 6: fsync after a parent directory was renamed ---------------------------------------

#[test]
fn fsync_after_a_parent_rename_keeps_the_path_of_the_fsync() {
    // Existing file: mkdir /a, create /a/x, sync, rename /a /b, write, fsync /b/x.
    let mut fs = mount(mkfs(BLOCKS));
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let x = fs.create(a, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(2)).unwrap();
    fs.rename(1, b"a", 1, b"b", RenameFlags::empty(), t(3)).unwrap();
    fs.write(x, 0, &pattern(1, 100), t(3)).unwrap();
    fs.fsync(x, false, t(3)).unwrap();
    let mut fs2 = Filesystem::mount(fs.into_device().crash_durable_only(), &big_cache(), t(4)).unwrap();
    let x2 = lookup_path(&mut fs2, "/b/x").expect("fsync'd file not at the path it was fsync'd under");
    assert_eq!(read_all(&mut fs2, x2), pattern(1, 100));
    assert!(lookup_path(&mut fs2, "/a").is_none(), "renamed directory under both names");

    // New file: sync, create /a/i, rename /a /h, fsync /h/i.
    let mut fs = mount(mkfs(BLOCKS));
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(2)).unwrap();
    let i = fs.create(a, b"i", 0o644, C, t(3)).unwrap().ino;
    fs.rename(1, b"a", 1, b"h", RenameFlags::empty(), t(3)).unwrap();
    fs.fsync(i, false, t(3)).unwrap();
    let mut fs2 = Filesystem::mount(fs.into_device().crash_durable_only(), &big_cache(), t(4)).unwrap();
    assert!(lookup_path(&mut fs2, "/h/i").is_some(), "new fsync'd file not at /h/i");
    assert!(lookup_path(&mut fs2, "/a").is_none());

    // Grandparent renamed: /p/q/x, rename /p /r, fsync /r/q/x.
    let mut fs = mount(mkfs(BLOCKS));
    let p = fs.mkdir(1, b"p", 0o755, C, t(1)).unwrap().ino;
    let q = fs.mkdir(p, b"q", 0o755, C, t(1)).unwrap().ino;
    let x = fs.create(q, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(2)).unwrap();
    fs.rename(1, b"p", 1, b"r", RenameFlags::empty(), t(3)).unwrap();
    fs.write(x, 0, &pattern(2, 10), t(3)).unwrap();
    fs.fsync(x, true, t(3)).unwrap();
    let mut fs2 = Filesystem::mount(fs.into_device().crash_durable_only(), &big_cache(), t(4)).unwrap();
    let x2 = lookup_path(&mut fs2, "/r/q/x").expect("file not under the renamed grandparent");
    assert_eq!(read_all(&mut fs2, x2), pattern(2, 10));
}

// ---- 7: metadata changes on a full device -------------------------------------------------

#[test]
fn touching_every_inode_of_a_full_device_never_turns_it_read_only() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"many", 0o755, C, t(1)).unwrap().ino;
    let mut files = Vec::new();
    for i in 0..1200 {
        match fs.create(d, format!("e{i}").as_bytes(), 0o644, C, t(1)) {
            Ok(a) => files.push(a.ino),
            Err(Error::NoSpace) => break,
            Err(e) => panic!("create: {e}"),
        }
    }
    let big = fill(&mut fs, 1, "filler", 0, t(2));
    fs.sync(t(3)).unwrap();
    let mut refused = 0;
    for (i, &f) in files.iter().enumerate() {
        let set = SetAttr { mtime: Some(t(10 + i as i64)), mode: Some(0o600), ..Default::default() };
        match fs.setattr(f, &set, t(10)) {
            Ok(a) => assert_eq!(a.mtime, t(10 + i as i64)),
            Err(Error::NoSpace) => {
                refused += 1;
                // Failure atomicity: nothing changed.
                let a = fs.getattr(f).unwrap();
                assert_eq!(a.perm, 0o644, "refused setattr changed the mode");
            }
            Err(e) => panic!("setattr: {e}"),
        }
        assert!(!fs.is_read_only(), "setattr {i} turned the filesystem read-only");
    }
    // Overwrite and fsync: succeeds or ENOSPC, never read-only.
    match fs.write(big, 0, &pattern(9, B), t(20)).and_then(|_| fs.fsync(big, false, t(20))) {
        Ok(()) | Err(Error::NoSpace) => {}
        Err(e) => panic!("overwrite + fsync: {e}"),
    }
    assert!(!fs.is_read_only());
    fs.sync(t(21)).unwrap();
    let img = fs.into_device().crash(|_| true);
    let mut dev = img.clone();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
    Filesystem::mount(img.clone(), &MountOptions { read_only: true, ..big_cache() }, t(22)).unwrap();
    let mut fs = Filesystem::mount(img, &big_cache(), t(22)).unwrap();
    assert!(!fs.is_read_only());
    fs.unlink(1, b"filler", t(23)).unwrap();
    fs.sync(t(24)).unwrap();
    eprintln!("{} files touched, {refused} refused for space", files.len());
}

// ---- 8: node ids freed but not yet reusable ------------------------------------------------

#[test]
fn create_unlink_churn_never_runs_out_of_node_ids() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let nids = fs.statfs().unwrap().files;
    for i in 0..3 * nids {
        let name = format!("c{i}");
        fs.create(d, name.as_bytes(), 0o644, C, t(2)).unwrap_or_else(|e| panic!("create {i} of {}: {e}", 3 * nids));
        fs.unlink(d, name.as_bytes(), t(2)).unwrap();
    }
    assert!(fs.stats().nid_shortage_checkpoints > 0);
    let dev = fs.unmount(t(3)).unwrap();
    assert!(fsck::check(&mut dev.crash_durable_only()).unwrap().is_clean());
}

// ---- root reserve -------------------------------------------------------------------------

#[test]
fn an_unprivileged_user_filling_the_device_leaves_the_root_reserve() {
    let reserve = 200u64;
    let opts = MountOptions { root_reserve_blocks: reserve, ..big_cache() };
    let mut fs = Filesystem::mount(CrashDevice::new(mkfs(BLOCKS)), &opts, t(0)).unwrap();
    let st = fs.statfs().unwrap();
    assert_eq!(st.blocks_avail, st.blocks_free - reserve);
    fs.set_privileged(false);
    let f = fs.create(1, b"user", 0o644, C, t(1)).unwrap().ino;
    let mut off = 0u64;
    loop {
        match fs.write(f, off, &pattern(1, 16 * B), t(1)) {
            Ok(_) => off += 16 * B as u64,
            Err(Error::NoSpace) => break,
            Err(e) => panic!("{e}"),
        }
    }
    let st = fs.statfs().unwrap();
    assert!(st.blocks_free >= reserve && st.blocks_avail < 20, "{st:?}");
    // Root still has the reserve.
    fs.set_privileged(true);
    let g = fs.create(1, b"root", 0o644, C, t(2)).unwrap().ino;
    fs.write(g, 0, &pattern(2, (reserve as usize - 40) * B), t(2)).unwrap();
    fs.sync(t(3)).unwrap();
}

// ---- fallocate: punch hole and zero range ---------------------------------------------

/// A hole punched across the inode's own addresses and a direct node, then fsync'd: after
/// a crash the range reads as zeros, its blocks are free, the rest of the file is intact,
/// and fsck is clean. A punch that was never fsync'd (another file's fsync in between)
/// leaves the file as it was.
#[test]
fn punched_hole_is_durable_after_fsync_and_absent_without() {
    for fsync_it in [true, false] {
        let mut fs = mount(mkfs(BLOCKS));
        let data = pattern(3, 5 << 20);
        let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
        let g = fs.create(1, b"g", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, &data, t(1)).unwrap();
        fs.sync(t(2)).unwrap();
        let used = fs.statfs().unwrap().blocks_free;
        let (off, len) = (3 * 1024 * 1024 + 100, 1536 * 1024);
        fs.punch_hole(f, off as u64, len as u64, t(3)).unwrap();
        assert_eq!(fs.getattr(f).unwrap().size, data.len() as u64, "punch changed the size");
        let mut want = data.clone();
        want[off..off + len].fill(0);
        assert!(read_all(&mut fs, f) == want, "punched range does not read as zeros");
        if fsync_it {
            fs.fsync(f, false, t(4)).unwrap();
        }
        fs.write(g, 0, b"other", t(5)).unwrap();
        fs.fsync(g, false, t(5)).unwrap();
        let mut img = fs.into_device().crash(|_| true);
        assert!(fsck::check(&mut img).unwrap().is_clean());
        let mut fs = Filesystem::mount(img, &big_cache(), t(6)).unwrap();
        let got = read_all(&mut fs, f);
        if fsync_it {
            assert!(got == want, "fsync'd punch lost");
            assert!(fs.statfs().unwrap().blocks_free >= used + 370, "punched blocks not freed");
        } else {
            assert!(got == data, "a punch never made durable changed the file after a crash");
        }
    }
}

/// On a full device a hole punch (which rewrites its partial end blocks) still works — it
/// is how a full filesystem gets room back — and frees the whole blocks in its range.
#[test]
fn punch_hole_on_a_full_device_works_and_frees_its_blocks() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let data = pattern(9, 64 * B);
    fs.write(f, 0, &data, t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fill(&mut fs, 1, "filler", 0, t(3));
    let free0 = fs.statfs().unwrap().blocks_free;
    let mut want = data.clone();
    for k in 0..16usize {
        // Unaligned: a partial block at each end, two whole blocks between.
        let (off, len) = (k * 4 * B + 1, 4 * B - 2);
        fs.punch_hole(f, off as u64, len as u64, t(4)).unwrap_or_else(|e| panic!("punch {k} on a full device: {e}"));
        want[off..off + len].fill(0);
    }
    assert!(read_all(&mut fs, f) == want);
    fs.sync(t(5)).unwrap();
    let free1 = fs.statfs().unwrap().blocks_free;
    assert!(free1 >= free0 + 16 * 2, "whole blocks not freed: {free0} -> {free1}");
    assert!(!fs.is_read_only());
    unmount_clean(fs, t(6));
}

/// Review finding: ZERO_RANGE that only grows files (the range past their end) on a full
/// device must reserve the inodes it dirties, like any size change: each call is either
/// refused with ENOSPC or done, and the next checkpoint never fails (it used to, shutting
/// the filesystem down after 1,200 such calls on empty files).
#[test]
fn zero_range_growing_files_on_a_full_device_keeps_the_checkpoint_room() {
    let mut fs = mount(mkfs(BLOCKS));
    let d = fs.mkdir(1, b"many", 0o755, C, t(1)).unwrap().ino;
    let mut files = Vec::new();
    for i in 0..1200 {
        match fs.create(d, format!("e{i}").as_bytes(), 0o644, C, t(1)) {
            Ok(a) => files.push(a.ino),
            Err(Error::NoSpace) => break,
            Err(e) => panic!("create: {e}"),
        }
    }
    fill(&mut fs, 1, "filler", 0, t(2));
    fs.sync(t(3)).unwrap();
    let mut refused = 0;
    for (i, &f) in files.iter().enumerate() {
        match fs.zero_range(f, 0, 10, false, t(10)) {
            Ok(()) => assert_eq!(fs.getattr(f).unwrap().size, 10),
            Err(Error::NoSpace) => {
                refused += 1;
                assert_eq!(fs.getattr(f).unwrap().size, 0, "a refused zero_range changed the size");
            }
            Err(e) => panic!("zero_range {i}: {e}"),
        }
        assert!(!fs.is_read_only(), "zero_range {i} turned the filesystem read-only");
    }
    eprintln!("{} files, {refused} refused", files.len());
    fs.sync(t(21)).unwrap_or_else(|e| panic!("sync after zero_range grew {} files: {e}", files.len()));
    assert!(!fs.is_read_only());
    unmount_clean(fs, t(22));
}

// ---- fallocate: reservations ---------------------------------------------------------

/// posix_fallocate's promise: after mode 0 (and after KEEP_SIZE) returns, writes into the
/// range never get ENOSPC — here after another file has filled the device — and the
/// writes are durable after fsync and a crash.
#[test]
fn fallocated_range_takes_its_writes_after_the_device_fills() {
    for keep_size in [false, true] {
        let mut fs = mount(mkfs(BLOCKS));
        let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
        // A block of data in the middle of the range: it is not a hole to reserve.
        fs.write(f, 5 * B as u64, &pattern(1, B), t(1)).unwrap();
        let free0 = fs.statfs().unwrap().blocks_free;
        let (off, len) = (B as u64 / 2, 300 * B as u64);
        fs.fallocate(f, off, len, keep_size, t(2)).unwrap();
        let size = fs.getattr(f).unwrap().size;
        assert_eq!(size, if keep_size { 6 * B as u64 } else { off + len });
        let free1 = fs.statfs().unwrap().blocks_free;
        assert!(free0 - free1 >= 300, "the reservation is not counted as used: {free0} -> {free1}");
        let other = fs.create(1, b"other", 0o644, C, t(3)).unwrap().ino;
        fill(&mut fs, 1, "filler", 0, t(3));
        assert_eq!(fs.write(other, 0, &vec![7; 4 * B], t(3)), Err(Error::NoSpace), "the device is not full");
        let data = pattern(2, len as usize);
        for (k, chunk) in data.chunks(7 * B).enumerate() {
            let at = off + (k * 7 * B) as u64;
            fs.write(f, at, chunk, t(4))
                .unwrap_or_else(|e| panic!("write into the reserved range at {at} (keep_size {keep_size}): {e}"));
        }
        fs.fsync(f, false, t(5)).unwrap();
        assert!(!fs.is_read_only());
        let mut fs = Filesystem::mount(fs.into_device().crash(|_| true), &big_cache(), t(6)).unwrap();
        let mut got = vec![0u8; len as usize];
        assert_eq!(fs.read(f, off, &mut got).unwrap(), len as usize);
        assert!(got == data, "fsync'd writes into the reserved range lost");
        unmount_clean(fs, t(7));
    }
}

/// A reservation that does not fit is refused (ENOSPC) and changes nothing: size, free
/// blocks, and later writes elsewhere.
#[test]
fn fallocate_beyond_the_free_space_is_refused_and_changes_nothing() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let st0 = fs.statfs().unwrap();
    let too_much = (st0.blocks_free + 1) * B as u64;
    assert_eq!(fs.fallocate(f, 0, too_much, false, t(2)), Err(Error::NoSpace));
    assert_eq!(fs.fallocate(f, 0, too_much, true, t(2)), Err(Error::NoSpace));
    // A huge request is refused at once, not walked block by block.
    assert_eq!(fs.fallocate(f, 0, 1 << 40, false, t(2)), Err(Error::NoSpace));
    assert_eq!(fs.getattr(f).unwrap().size, 0, "a refused fallocate changed the size");
    assert_eq!(fs.statfs().unwrap().blocks_free, st0.blocks_free, "a refused fallocate kept a reservation");
    assert_eq!(fs.fallocate(f, 0, 0, false, t(2)), Err(Error::Invalid("fallocate of an empty range")));
    let d = fs.mkdir(1, b"d", 0o755, C, t(2)).unwrap().ino;
    assert_eq!(fs.fallocate(d, 0, 4096, false, t(2)), Err(Error::IsDir));
    fs.write(f, 0, &pattern(3, 8 * B), t(3)).unwrap();
    assert!(!fs.is_read_only());
    unmount_clean(fs, t(4));
}

/// Truncation, a hole punch over the range, eviction (unlink of the last name) and a
/// remount each give the reserved space back.
#[test]
fn fallocate_reservation_is_released_by_truncate_punch_unlink_and_remount() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let free0 = fs.statfs().unwrap().blocks_free;
    let reserved = |fs: &mut Filesystem<CrashDevice>| free0.saturating_sub(fs.statfs().unwrap().blocks_free);
    fs.fallocate(f, 0, 400 * B as u64, true, t(2)).unwrap();
    assert!(reserved(&mut fs) >= 400);
    // Truncation to a size inside the range releases what lies past the new end.
    fs.setattr(f, &SetAttr { size: Some(100 * B as u64), ..Default::default() }, t(3)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(0), ..Default::default() }, t(3)).unwrap();
    assert!(reserved(&mut fs) <= 8, "truncation kept the reservation: {}", reserved(&mut fs));
    // A punch releases the holes of its range.
    fs.fallocate(f, 0, 400 * B as u64, false, t(4)).unwrap();
    fs.punch_hole(f, 0, 400 * B as u64, t(4)).unwrap();
    assert!(reserved(&mut fs) <= 8, "a punch kept the reservation: {}", reserved(&mut fs));
    // ZERO_RANGE does not reserve (zeroing frees): written blocks become free holes.
    fs.write(f, 0, &pattern(5, 200 * B), t(5)).unwrap();
    fs.sync(t(5)).unwrap();
    let before = fs.statfs().unwrap().blocks_free;
    fs.zero_range(f, 0, 300 * B as u64, true, t(5)).unwrap();
    fs.sync(t(5)).unwrap();
    let after = fs.statfs().unwrap().blocks_free;
    assert!(after >= before + 190, "zero_range did not free the zeroed blocks: {before} -> {after}");
    fs.fallocate(f, 0, 400 * B as u64, true, t(5)).unwrap();
    fs.unlink(1, b"f", t(6)).unwrap();
    fs.sync(t(6)).unwrap();
    assert!(reserved(&mut fs) <= 8, "eviction kept the reservation: {}", reserved(&mut fs));
    // And the life of the mount bounds it.
    let g = fs.create(1, b"g", 0o644, C, t(7)).unwrap().ino;
    fs.fallocate(g, 0, 500 * B as u64, true, t(7)).unwrap();
    let dev = fs.unmount(t(8)).unwrap();
    let mut fs = Filesystem::mount(dev, &big_cache(), t(9)).unwrap();
    assert!(free0.saturating_sub(fs.statfs().unwrap().blocks_free) <= 8, "a remount kept the reservation");
    unmount_clean(fs, t(10));
}

// ---- issue 41: a filesystem filled by a mixed workload deletes everything ----------------

/// Fills a fresh filesystem of `blocks` blocks (segments of `segment_blocks`) with the
/// mixed metadata workload of `common::mixed` (fsstress's mix: small files, directories,
/// symlinks, xattrs, hard links, renames, truncates, fsyncs; fallocate and hole punches
/// with `fallocate`), keeps churning on the full filesystem, then removes everything as
/// `rm -rf` does. Every removal must succeed, the space must come back (statfs), and
/// fsck must find the image clean after the unmount, and after a crash at the end.
fn fill_with_a_mixed_workload_then_delete_everything(
    blocks: u64,
    segment_blocks: u32,
    seed: u64,
    fallocate: bool,
    remount_before_delete: bool,
) {
    use common::mixed::{remove_all, Mixed};
    let what = format!("{blocks} blocks, segments of {segment_blocks}, seed {seed}, fallocate {fallocate}");
    let opts = MkfsOptions { segment_blocks, uuid: [9; 16], ..Default::default() };
    let img = Filesystem::format(MemDevice::new(blocks), &opts).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(0)).unwrap();
    let size = fs.statfs().unwrap().blocks;
    let mut w = Mixed::new(seed, fallocate);
    let mut total = common::mixed::FillReport::default();
    // Fill: until statfs shows nothing free, then as much churn again on the full device.
    let mut full_after = None;
    for round in 0..400u64 {
        let r = w.run(&mut fs, 500, t(10 + round as i64));
        total.ops += r.ops;
        total.ok += r.ok;
        total.enospc += r.enospc;
        // Full: statfs shows nothing free, or nearly every operation is refused (cleaning
        // cannot free another segment: with small segments that comes first).
        if full_after.is_none() && (fs.statfs().unwrap().blocks_free == 0 || r.enospc * 10 >= r.ops * 9) {
            full_after = Some(round);
        }
        if full_after.is_some_and(|f| round >= 2 * f + 4) {
            break;
        }
    }
    assert!(full_after.is_some(), "{what}: the workload never filled the filesystem ({total:?})");
    let st = fs.statfs().unwrap();
    let stats = fs.stats();
    eprintln!(
        "{what}: {} ops ({} ENOSPC), full after {} rounds; used {} of {size} blocks; enospc {} op checkpoints {} gc segments {}",
        total.ops,
        total.enospc,
        full_after.unwrap(),
        st.blocks - st.blocks_free,
        stats.enospc_returned,
        stats.op_checkpoints,
        stats.gc_segments,
    );
    if remount_before_delete {
        let dev = fs.unmount(t(9000)).unwrap();
        fs = Filesystem::mount(dev, &big_cache(), t(9001)).unwrap();
    }
    let before = fs.stats();
    let removed = remove_all(&mut fs, 1, t(10_000));
    fs.sync(t(10_001)).unwrap();
    let st = fs.statfs().unwrap();
    let after = fs.stats();
    // What is left: the root inode and its (empty) dentry blocks.
    let root_blocks = fs.getattr(1).unwrap().blocks / 8;
    let used = st.blocks - st.blocks_free;
    eprintln!(
        "{what}: removed {removed} names; {used} blocks used after (root {root_blocks}); the removal took {} checkpoints, cleaned {} segments",
        after.op_checkpoints - before.op_checkpoints,
        after.gc_segments - before.gc_segments
    );
    assert_eq!(after.enospc_returned, before.enospc_returned, "{what}: ENOSPC while deleting");
    assert!(used <= root_blocks + 1, "{what}: {used} blocks still used after deleting everything");
    assert_eq!(st.blocks_free, st.blocks_avail, "{what}: no root reserve was set");
    let crash = fs.device().crash_durable_only();
    unmount_clean(fs, t(10_002));
    let r = fsck::check(&mut crash.clone()).unwrap();
    assert!(r.is_clean(), "{what}: crash after the deletion: {:?}", r.problems);
}

#[test]
fn a_device_filled_by_a_mixed_metadata_workload_deletes_everything() {
    // Small segments (the other tests' geometry) and a 2 MiB-segment device of 64 MiB,
    // with fallocate reservations in the mix and without.
    for (blocks, seg, seed, fallocate, remount) in [
        (4096, 16, 1, false, false),
        (4096, 16, 2, true, false),
        (8192, 64, 3, false, true),
        (8192, 64, 4, true, false),
        (32768, 512, 42, false, false),
        (32768, 512, 43, true, true),
    ] {
        fill_with_a_mixed_workload_then_delete_everything(blocks, seg, seed, fallocate, remount);
    }
}
