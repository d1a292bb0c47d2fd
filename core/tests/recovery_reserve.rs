//! The recovery reserve: every fsync acknowledged on a nearly full device must leave room for
//! its roll-forward, which rewrites more than the chain (restored names in parent directories,
//! the many direct nodes of a sparse fsync or atomic commit), also in a second recovery after
//! a crash in the first.
//!
//! From the adversarial review of issue 13's first fix (fd77b54), whose other tests are in
//! failure_atomicity.rs, full_device.rs, crash_during_recovery.rs and fsync_below_renamed_dir.rs:
//! each test here failed on fd77b54 (F3, F7: the review's numbers for its findings).

mod common;

use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

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
