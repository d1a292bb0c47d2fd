//! Roll-forward recovery: one test per crash scenario in core/src/recovery.rs's table,
//! plus the seed regressions that the core can check on its own (the simulator explores
//! them exhaustively).

mod common;
use common::CrashDevice;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image() -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [3; 16], ..Default::default() };
    Filesystem::format(MemDevice::new(8192), &opts).unwrap()
}

fn mount(dev: CrashDevice) -> Filesystem<CrashDevice> {
    Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap()
}

fn fresh() -> Filesystem<CrashDevice> {
    mount(CrashDevice::new(image()))
}

/// Mounts a crash image (running recovery), checks fsck, and returns the filesystem.
fn recover(img: MemDevice) -> Filesystem<MemDevice> {
    let fs = Filesystem::mount(img, &MountOptions::default(), t(100)).expect("mount after crash");
    let mut dev = fs.unmount(t(101)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    Filesystem::mount(dev, &MountOptions::default(), t(102)).unwrap()
}

fn content(fs: &mut Filesystem<MemDevice>, dir: Ino, name: &[u8]) -> Option<Vec<u8>> {
    let a = fs.lookup(dir, name).ok()?;
    let mut buf = vec![0u8; a.size as usize];
    fs.read(a.ino, 0, &mut buf).unwrap();
    Some(buf)
}

#[test]
fn crash_after_fsync_returned_restores_the_file() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.write(f, 0, b"version one", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    fs.write(f, 5000, b"second block", t(3)).unwrap();
    fs.fsync(f, false, t(3)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "fsync must not checkpoint");
    let img = fs.into_device().crash(|_| true);
    // fsck says what the next mount will recover (its counts are the checkpoint's).
    let r = fsck::check(&mut img.clone()).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.pending_inodes, 1, "{r:?}");
    assert!(r.pending_chain_nodes >= 2, "{r:?}");
    let mut fs = recover(img);
    let c = content(&mut fs, 1, b"f").unwrap();
    assert_eq!(c.len(), 5012);
    assert_eq!(&c[..11], b"version one");
    assert_eq!(&c[5000..], b"second block");
}

#[test]
fn crash_after_fsync_keeps_it_even_if_nothing_pending_survives() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, &vec![7u8; 20_000], t(2)).unwrap();
    fs.fsync(f, true, t(2)).unwrap();
    fs.write(f, 0, b"not synced", t(3)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert_eq!(content(&mut fs, 1, b"f").unwrap(), vec![7u8; 20_000]);
}

#[test]
fn file_created_since_the_checkpoint_is_linked_by_its_dentry_mark() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"dir", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let f = fs.create(d, b"new-file", 0o600, C, t(2)).unwrap().ino;
    fs.write(f, 0, b"fresh", t(2)).unwrap();
    fs.setxattr(f, b"user.tag", b"x", XattrSetMode::Any, t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, 0);
    let mut fs = recover(fs.into_device().crash_durable_only());
    let d = fs.lookup(1, b"dir").unwrap().ino;
    assert_eq!(content(&mut fs, d, b"new-file").unwrap(), b"fresh");
    let a = fs.lookup(d, b"new-file").unwrap();
    assert_eq!(a.perm, 0o600);
    assert_eq!(fs.getxattr(a.ino, b"user.tag").unwrap(), b"x");
}

#[test]
fn crash_during_fsync_before_the_flush_leaves_the_previous_state() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, b"old", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, b"new", t(2)).unwrap();
    // Submit the batch but lose power before the wait and flush.
    let ticket = fs.fsync_submit(f, false, t(2)).unwrap();
    assert!(ticket.flush_needed);
    let dev = fs.into_device();
    let n = dev.pending();
    assert!(n >= 2);
    // Every subset that drops at least one data or node write of the batch: the file is
    // old or new, never anything else.
    for mask in 0..(1u32 << n.min(10)) {
        let img = dev.crash(|i| mask & (1 << i) != 0);
        let mut fs = recover(img);
        let c = content(&mut fs, 1, b"f").unwrap();
        assert!(c == b"old" || c == b"new", "mask {mask:b}: {c:?}");
    }
}

#[test]
fn node_written_without_its_data_is_not_applied() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, b"old", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, b"new", t(2)).unwrap();
    let _ = fs.fsync_submit(f, false, t(2)).unwrap();
    let dev = fs.into_device();
    // Pending order: data block first, then the inode. Keep the inode only.
    assert_eq!(dev.pending(), 2);
    let mut fs = recover(dev.crash(|i| i == 1));
    assert_eq!(content(&mut fs, 1, b"f").unwrap(), b"old");
}

#[test]
fn out_of_order_completion_is_safe_because_fsync_waits_before_the_flush() {
    // Regression 4 (scenario "broken dnode chain", docs/INVARIANTS.md): the device completes the fsync's writes in reverse order;
    // power fails right after fsync returns, keeping only what was flushed.
    let mut fs = fresh();
    fs.device_mut().reverse_completion = true;
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    // Enough data for several direct nodes in the batch.
    let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
    fs.write(f, 0, &data, t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert!(content(&mut fs, 1, b"f").unwrap() == data);
}

#[test]
fn stale_node_of_an_older_checkpoint_ends_the_chain() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    for i in 0..5u8 {
        fs.write(f, 0, &[i; 100], t(2)).unwrap();
        fs.fsync(f, false, t(2)).unwrap();
    }
    fs.sync(t(3)).unwrap();
    // After the checkpoint, the chain position holds nothing of the new version: a mount
    // must not replay the old fsyncs (they are in the checkpoint already).
    fs.write(f, 0, &[9; 100], t(4)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert_eq!(content(&mut fs, 1, b"f").unwrap(), vec![4u8; 100]);
    assert_eq!(fs.stats().recovered_batches, 0);
}

#[test]
fn torn_block_in_the_chain_ends_it() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let g = fs.create(1, b"g", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, b"f-data", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let mut img = fs.device().crash_durable_only();
    fs.write(g, 0, b"g-data", t(3)).unwrap();
    fs.fsync(g, false, t(3)).unwrap();
    // Take the image after g's fsync but tear g's inode (the last chain block).
    let full = fs.into_device().crash_durable_only();
    let mut last = None;
    for a in 0..8192u64 {
        let mut b = [0u8; 4096];
        let mut probe = full.clone();
        probe.read(a, &mut b).unwrap();
        let mut old = [0u8; 4096];
        img.read(a, &mut old).unwrap();
        if b != old && node::footer_nid(&b) == g {
            last = Some(a);
        }
    }
    let a = last.expect("g's chain node");
    img = full;
    img.block_mut(a)[1000..1512].fill(0xee);
    let mut fs = recover(img);
    assert_eq!(content(&mut fs, 1, b"f").unwrap(), b"f-data");
    assert_eq!(content(&mut fs, 1, b"g").unwrap(), b"");
}

#[test]
fn file_truncated_then_fsynced_drops_blocks_past_the_truncation() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &vec![1u8; 8 << 20], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(0), ..Default::default() }, t(2)).unwrap();
    fs.write(f, 6 << 20, b"tail", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, 0);
    let mut fs = recover(fs.into_device().crash_durable_only());
    let c = content(&mut fs, 1, b"f").unwrap();
    assert_eq!(c.len(), (6 << 20) + 4);
    assert!(c[..6 << 20].iter().all(|&b| b == 0), "old data visible in the hole");
    assert_eq!(&c[6 << 20..], b"tail");
}

#[test]
fn name_reused_after_the_old_file_was_unlinked_checkpoints_instead() {
    let mut fs = fresh();
    let old = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.write(old, 0, b"old file", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.unlink(1, b"x", t(2)).unwrap();
    let new = fs.create(1, b"x", 0o644, C, t(2)).unwrap().ino;
    fs.write(new, 0, b"new file", t(2)).unwrap();
    fs.fsync(new, false, t(2)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, 1);
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert_eq!(content(&mut fs, 1, b"x").unwrap(), b"new file");
}

#[test]
fn rename_away_then_new_file_under_the_old_name_never_loses_the_renamed_file() {
    let mut fs = fresh();
    let a = fs.create(1, b"d", 0o644, C, t(1)).unwrap().ino;
    fs.write(a, 0, b"keep me", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.rename(1, b"d", 1, b"a", RenameFlags::empty(), t(2)).unwrap();
    let n = fs.create(1, b"d", 0o644, C, t(3)).unwrap().ino;
    fs.fsync(n, false, t(3)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    // The renamed file is under its old name or its new one, never neither.
    let old = content(&mut fs, 1, b"a").or_else(|| content(&mut fs, 1, b"d"));
    assert!(fs.getattr(a).is_ok());
    assert_eq!(content(&mut fs, 1, b"a").as_deref(), Some(&b"keep me"[..]));
    assert!(old.is_some());
}

#[test]
fn atomic_commit_that_returned_shows_all_new_data() {
    let mut fs = fresh();
    let f = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &vec![b'o'; 16384], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.start_atomic_write(f).unwrap();
    fs.write(f, 0, &vec![b'n'; 4096], t(2)).unwrap();
    fs.write(f, 12288, &vec![b'n'; 8192], t(2)).unwrap();
    // Staged writes are visible to reads but not durable.
    assert_eq!(fs.getattr(f).unwrap().size, 20480);
    fs.commit_atomic_write(f, t(2)).unwrap();
    assert_eq!(fs.stats().atomic_commits, 1);
    let mut fs = recover(fs.into_device().crash_durable_only());
    let c = content(&mut fs, 1, b"db").unwrap();
    assert_eq!(c.len(), 20480);
    assert!(c[..4096].iter().all(|&b| b == b'n'));
    assert!(c[4096..12288].iter().all(|&b| b == b'o'));
    assert!(c[12288..].iter().all(|&b| b == b'n'));
}

#[test]
fn atomic_commit_cut_by_the_crash_shows_all_old_data() {
    let mut fs = fresh();
    let f = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &vec![b'o'; 16384], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.start_atomic_write(f).unwrap();
    for i in 0..4u64 {
        fs.write(f, i * 4096, &vec![b'n'; 4096], t(2)).unwrap();
    }
    // Before commit: a crash (even with a checkpoint in between) shows old data.
    fs.sync(t(2)).unwrap();
    let mut fs2 = recover(fs.device().crash(|_| true));
    assert!(content(&mut fs2, 1, b"db").unwrap().iter().all(|&b| b == b'o'));
    // During commit: any subset of its writes.
    let ticket_dev = {
        let mut fs = fs;
        // Drive the commit by hand up to the submission, without the wait and flush.
        fs.device_mut().reverse_completion = true;
        let mut fs_commit = fs;
        let staged_ok = fs_commit.in_atomic_write(f);
        assert!(staged_ok);
        fs_commit.commit_atomic_write(f, t(3)).unwrap();
        fs_commit.into_device()
    };
    // After a commit that returned, every crash shows the new data.
    let mut fs3 = recover(ticket_dev.crash_durable_only());
    assert!(content(&mut fs3, 1, b"db").unwrap().iter().all(|&b| b == b'n'));
}

#[test]
fn atomic_abort_leaves_the_old_data() {
    let mut fs = fresh();
    let f = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, b"old", t(1)).unwrap();
    fs.start_atomic_write(f).unwrap();
    fs.write(f, 0, b"new", t(2)).unwrap();
    fs.abort_atomic_write(f).unwrap();
    let mut buf = [0u8; 3];
    fs.read(f, 0, &mut buf).unwrap();
    assert_eq!(&buf, b"old");
}

#[test]
fn unlinked_open_file_in_the_chain_is_ignored_and_removed() {
    let mut fs = fresh();
    let f = fs.create(1, b"tmp", 0o644, C, t(1)).unwrap().ino;
    fs.open(f).unwrap();
    fs.unlink(1, b"tmp", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, b"scratch", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert_eq!(fs.getattr(f), Err(Error::NotFound));
}

#[test]
fn io_error_reading_the_chain_fails_the_mount_and_a_later_mount_recovers() {
    // Regression 5.
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, b"fsynced", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let img = fs.into_device().crash_durable_only();
    // Find the first chain block: the warm node log position of the checkpoint.
    let probe = Filesystem::mount(img.clone(), &MountOptions { read_only: true, ..Default::default() }, t(9)).unwrap();
    assert_eq!(probe.stats().recovered_batches, 0, "read-only mount writes nothing");
    drop(probe);
    let mut bad = img.clone();
    let mut failed = false;
    for a in 0..8192u64 {
        bad.fail_read_block = Some(a);
        match Filesystem::mount(bad.clone(), &MountOptions::default(), t(10)) {
            Err(Error::Io { .. }) => {
                failed = true;
            }
            Err(e) => panic!("unexpected error with block {a} failing: {e}"),
            Ok(_) => {}
        }
    }
    assert!(failed);
    let mut fs = recover(img);
    assert_eq!(content(&mut fs, 1, b"f").unwrap(), b"fsynced");
}

#[test]
fn crash_during_recovery_recovers_again() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, &vec![5u8; 30_000], t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let img = fs.into_device().crash_durable_only();
    // Run recovery on a crash device and cut it at every subset boundary of its writes.
    let fs = Filesystem::mount(CrashDevice::new(img.clone()), &MountOptions::default(), t(5)).unwrap();
    let dev = fs.into_device();
    let n = dev.pending();
    for k in 0..=n {
        let img2 = dev.crash(|i| i < k);
        let mut fs = recover(img2);
        assert_eq!(content(&mut fs, 1, b"f").unwrap(), vec![5u8; 30_000], "cut after {k} of {n} writes");
    }
}

#[test]
fn rename_then_write_fsync_other_then_fsync_renamed_keeps_new_data() {
    // Regression 1 (btrfs logged_trans race).
    let mut fs = fresh();
    let a = fs.create(1, b"a", 0o644, C, t(1)).unwrap().ino;
    let other = fs.create(1, b"other", 0o644, C, t(1)).unwrap().ino;
    fs.write(a, 0, b"old", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.rename(1, b"a", 1, b"b", RenameFlags::empty(), t(2)).unwrap();
    fs.write(a, 0, b"new data", t(3)).unwrap();
    fs.write(other, 0, b"x", t(3)).unwrap();
    fs.fsync(other, false, t(3)).unwrap();
    fs.fsync(a, false, t(4)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert_eq!(content(&mut fs, 1, b"b").unwrap(), b"new data");
    assert!(fs.lookup(1, b"a").is_err());
}

#[test]
fn link_then_write_fsync_other_then_fsync_linked_keeps_new_data() {
    // Regression 2.
    let mut fs = fresh();
    let a = fs.create(1, b"a", 0o644, C, t(1)).unwrap().ino;
    let other = fs.create(1, b"other", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.link(a, 1, b"b", t(2)).unwrap();
    fs.write(a, 0, b"new data", t(3)).unwrap();
    fs.write(other, 0, b"x", t(3)).unwrap();
    fs.fsync(other, false, t(3)).unwrap();
    fs.fsync(a, false, t(4)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert_eq!(content(&mut fs, 1, b"b").unwrap(), b"new data");
    assert_eq!(content(&mut fs, 1, b"a").unwrap(), b"new data");
}

#[test]
fn three_thousand_hard_links_one_removed_then_fsync() {
    // Regression 3: bounded time and memory, and it recovers.
    let mut fs = fresh();
    let d = fs.mkdir(1, b"links", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(d, b"l0", 0o644, C, t(1)).unwrap().ino;
    for i in 1..3000 {
        fs.link(f, d, format!("l{i}").as_bytes(), t(1)).unwrap();
    }
    fs.sync(t(1)).unwrap();
    fs.unlink(d, b"l1500", t(2)).unwrap();
    fs.write(f, 0, b"payload", t(2)).unwrap();
    let start = std::time::Instant::now();
    fs.fsync(f, false, t(2)).unwrap();
    let took = start.elapsed();
    let mut fs = recover(fs.into_device().crash_durable_only());
    let d = fs.lookup(1, b"links").unwrap().ino;
    assert_eq!(fs.lookup(d, b"l2999").unwrap().nlink, 2999);
    assert!(fs.lookup(d, b"l1500").is_err());
    assert_eq!(content(&mut fs, d, b"l7").unwrap(), b"payload");
    println!("fsync with 3000 links took {took:?}");
}

#[test]
fn fsync_costs_one_data_block_one_node_block_one_flush() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &[1u8; 4096], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let (w0, f0) = (fs.device().writes, fs.device().flushes);
    fs.write(f, 0, &[2u8; 4096], t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    assert_eq!(fs.device().writes - w0, 2, "one data block and one node block");
    assert_eq!(fs.device().flushes - f0, 1, "one flush");
}

#[test]
fn directory_fsync_makes_entries_durable() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.create(d, b"e", 0o644, C, t(1)).unwrap();
    fs.fsync(d, false, t(1)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, 1);
    let mut fs = recover(fs.into_device().crash_durable_only());
    let d = fs.lookup(1, b"d").unwrap().ino;
    assert!(fs.lookup(d, b"e").is_ok());
}

#[test]
fn atomic_commit_makes_an_unlinked_journal_in_its_directory_stay_unlinked() {
    // SQLite with synchronous=FULL: a rollback journal unlinked (not durably) before an
    // atomic commit must not come back after a crash, or SQLite would roll back with it.
    let mut fs = fresh();
    let db = fs.create(1, b"test.db", 0o644, C, t(1)).unwrap().ino;
    let j = fs.create(1, b"test.db-journal", 0o644, C, t(1)).unwrap().ino;
    fs.write(j, 0, b"hot journal", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.unlink(1, b"test.db-journal", t(2)).unwrap();
    fs.start_atomic_write(db).unwrap();
    fs.write(db, 0, b"page one", t(3)).unwrap();
    fs.commit_atomic_write(db, t(3)).unwrap();
    let mut fs = recover(fs.into_device().crash_durable_only());
    assert!(fs.lookup(1, b"test.db-journal").is_err(), "the unlinked journal came back");
    assert_eq!(content(&mut fs, 1, b"test.db").unwrap(), b"page one");
}

/// `mount_checkpoint` shows the checkpoint's tree without the fsync chain and writes
/// nothing; a read-only `mount` rolls the chain forward in memory (also writing nothing).
#[test]
fn mount_checkpoint_sees_the_checkpoint_only_and_writes_nothing() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, b"checkpointed", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.write(f, 0, b"fsync'd only", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let img = fs.into_device().crash(|_| true);
    let ro = MountOptions { read_only: true, ..MountOptions::default() };
    let mut cp = Filesystem::mount_checkpoint(img.clone(), &MountOptions::default(), t(3)).unwrap();
    assert!(cp.is_read_only());
    assert_eq!(content(&mut cp, 1, b"f").unwrap(), b"checkpointed");
    assert_eq!(cp.write(f, 0, b"x", t(3)), Err(Error::ReadOnly));
    let mut rolled = Filesystem::mount(img.clone(), &ro, t(3)).unwrap();
    assert_eq!(content(&mut rolled, 1, b"f").unwrap(), b"fsync'd only");
    for dev in [cp.into_device(), rolled.into_device()] {
        assert_eq!(dev.counters.writes, img.counters.writes, "nothing written");
    }
}
