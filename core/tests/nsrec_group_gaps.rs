//! Groups of namespace records across a lost block, at a segment's start and beside a
//! rejected batch (review 52, crash-safety F1 and F2). Scenarios, each a test named after it:
//!
//! | scenario | what must hold |
//! |---|---|
//! | the block a crash lost opens a segment that was free at the checkpoint, then a crash during recovery | recovery never writes in that segment: the next walk ends at the gap again, so a group is never completed across it (two fsyncs under one flush, and one fsync) |
//! | a group's rider, or its own batch, belongs to a file whose earlier batch recovery rejected (group commit: both under one flush, the first's data lost) | the group is not whole: the replay ends before it (the rename never applies without the renamed file's batch) |

mod common;
use common::CrashDevice;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image(ns_records: bool) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [5; 16], ns_records, inline_data: true, ..Default::default() };
    Filesystem::format(MemDevice::new(8192), &opts).unwrap()
}

/// Review 50 F1's scenario (a group of records and a rider batch, then another file's batch
/// submitted before the flush), with the chain shifted by `pad` fsyncs of a padding file so
/// that the group crosses a warm-node segment boundary: the lost block is then the first of a
/// segment that was free at the checkpoint, and recovery's "fresh segment" may be that very
/// segment (round-robin from the same cursor, the segment not pinned since no chain node
/// walked lies in it).
#[test]
fn gap_at_a_segment_boundary_is_not_crossed_after_a_crash_during_recovery() {
    let big = common::limits::big_cache();
    let mut total = 0;
    for pad in 0..20u32 {
        let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let file = fs.create(d, b"file", 0o644, C, t(1)).unwrap().ino;
        fs.write(file, 0, b"old contents", t(1)).unwrap();
        let x = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
        fs.write(x, 0, b"x, first", t(1)).unwrap();
        let y = fs.create(1, b"y", 0o644, C, t(1)).unwrap().ino;
        fs.sync(t(1)).unwrap();
        fs.write(y, 0, b"y, fsync'd", t(2)).unwrap();
        fs.fsync(y, false, t(2)).unwrap();
        for i in 0..pad {
            fs.setattr(y, &SetAttr { mode: Some(0o600 + (i % 2) * 0o40), ..Default::default() }, t(2)).unwrap();
            fs.fsync(y, false, t(2)).unwrap();
        }
        let tmp = fs.create(d, b"tmp", 0o644, C, t(3)).unwrap().ino;
        fs.write(tmp, 0, b"new contents, longer", t(3)).unwrap();
        fs.rename(d, b"tmp", d, b"file", RenameFlags::empty(), t(3)).unwrap();
        let t1 = fs.fsync_submit(d, false, t(4)).unwrap();
        fs.write(x, 0, b"x, second", t(4)).unwrap();
        let t2 = fs.fsync_submit(x, false, t(4)).unwrap();
        assert!(t1.flush_needed && t2.flush_needed, "both fsyncs wrote to the chain");
        let dev = fs.into_device();
        let pending = dev.pending();
        let check = |fs: &mut Filesystem<MemDevice>| {
            assert!(fs.lookup(1, b"y").is_ok(), "y was fsync'd");
            let got = fs.lookup(d, b"file").expect("d/file").ino;
            let a = fs.getattr(got).unwrap();
            let mut b = vec![0u8; a.size as usize];
            fs.read(got, 0, &mut b).unwrap();
            assert!(
                b == b"old contents" || (got == tmp && b == b"new contents, longer"),
                "pad {pad}: d/file (inode {got}) holds {:?}: neither the old file nor the renamed one whole",
                String::from_utf8_lossy(&b)
            );
        };
        for lost in 0..pending {
            let img = dev.crash(|i| i != lost);
            total += common::limits::every_cut_of_mount_recovers(&img, &big, &check);
        }
    }
    assert!(total > 0);
}

/// The same gap at a segment boundary with one fsync only (no group commit): a directory
/// fsync whose group is a rename record and the rider batch of /a/f (its xattr node, then
/// its inode; the batch CRC covers data only). The crash loses the xattr node at block 0 of
/// a fresh segment; the recovery mount writes its first warm node there.
#[test]
fn gap_at_a_segment_boundary_single_fsync_xattr() {
    let big = common::limits::big_cache();
    let mut bad = Vec::new();
    for pad in 0..20u32 {
        let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
        let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
        let c = fs.mkdir(a, b"c", 0o755, C, t(1)).unwrap().ino;
        let p = fs.create(1, b"p", 0o644, C, t(1)).unwrap().ino;
        fs.sync(t(1)).unwrap();
        for i in 0..pad {
            fs.setattr(p, &SetAttr { mode: Some(0o600 + (i % 2) * 0o40), ..Default::default() }, t(2)).unwrap();
            fs.fsync(p, false, t(2)).unwrap();
        }
        let f = fs.create(a, b"f", 0o644, C, t(3)).unwrap().ino;
        fs.write(f, 0, b"f data", t(3)).unwrap();
        fs.fsync(a, false, t(3)).unwrap();
        fs.setxattr(f, b"user.x", b"v25", XattrSetMode::Any, t(4)).unwrap();
        fs.rename(a, b"f", c, b"g", RenameFlags::empty(), t(4)).unwrap();
        let t1 = fs.fsync_submit(1, false, t(5)).unwrap();
        assert!(t1.flush_needed);
        let dev = fs.into_device();
        let pending = dev.pending();
        for lost in 0..pending {
            let img = dev.crash(|i| i != lost);
            let mut cd = CrashDevice::new(img.clone());
            {
                let _fs = Filesystem::mount(&mut cd, &big, t(1000)).unwrap();
            }
            let writes = cd.writes;
            for cut in 0..=writes {
                let mut cd = CrashDevice::new(img.clone());
                cd.power_cut_at = Some(cut);
                let _ = Filesystem::mount(&mut cd, &big, t(1000)).map(|_| ());
                for (variant, after) in
                    [("durable only", cd.crash_durable_only()), ("all submitted", cd.crash(|_| true))]
                {
                    let mut fs = Filesystem::mount(after, &big, t(2000)).unwrap();
                    if let Ok(e) = fs.lookup(c, b"g") {
                        let x = fs.getxattr(e.ino, b"user.x");
                        if x.is_err() {
                            bad.push(format!("pad {pad} lost {lost}/{pending} cut {cut}/{writes} {variant}: /a/c/g without its xattr: {x:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// A group whose rider batch belongs to a file with an earlier batch that
/// recovery rejected (its data lost by the crash; group commit: both fsyncs under one
/// flush) is judged whole by `group_complete` (which does not look at `failed`), but
/// `apply_steps` then skips the rider's batch (`failed` holds its inode): the group's rename
/// applies without the rider's batch.
#[test]
fn group_with_a_rider_whose_earlier_batch_was_rejected() {
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let file = fs.create(d, b"file", 0o644, C, t(1)).unwrap().ino;
    fs.write(file, 0, &[b'O'; 5000], t(1)).unwrap();
    let tmp = fs.create(d, b"tmp", 0o644, C, t(1)).unwrap().ino;
    fs.write(tmp, 0, &[b'T'; 5000], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    // tmp's own fsync: no record names it, so its batch goes alone (OwnWithoutRecords).
    fs.write(tmp, 0, &[b'1'; 4096], t(2)).unwrap();
    let t1 = fs.fsync_submit(tmp, false, t(2)).unwrap();
    assert!(t1.flush_needed);
    let after_b1 = fs.stats().ns_record_nodes_written;
    // Overwrite the same block, rename over /d/file, directory fsync: a group (the rename's
    // record, tmp's rider batch).
    fs.write(tmp, 0, &[b'2'; 4096], t(3)).unwrap();
    fs.rename(d, b"tmp", d, b"file", RenameFlags::empty(), t(3)).unwrap();
    let t2 = fs.fsync_submit(d, false, t(4)).unwrap();
    assert!(t2.flush_needed);
    assert!(fs.stats().ns_record_nodes_written > after_b1, "the directory fsync wrote records");
    let dev = fs.into_device();
    let pending = dev.pending();
    let mut bad = Vec::new();
    let mut expect_new = vec![b'2'; 4096];
    expect_new.extend_from_slice(&[b'T'; 5000 - 4096]);
    for lost in 0..pending {
        let img = dev.crash(|i| i != lost);
        let mut fs = Filesystem::mount(img, &big, t(100)).unwrap();
        let got = fs.lookup(d, b"file").unwrap().ino;
        let a = fs.getattr(got).unwrap();
        let mut b = vec![0u8; a.size as usize];
        fs.read(got, 0, &mut b).unwrap();
        let tmp_there = fs.lookup(d, b"tmp").is_ok();
        let ok = (got == file && b == vec![b'O'; 5000] && tmp_there) || (got == tmp && b == expect_new && !tmp_there);
        if !ok {
            bad.push(format!(
                "lost write {lost} of {pending}: /d/file is inode {got} holding {:?}..., /d/tmp there: {tmp_there}",
                String::from_utf8_lossy(&b[..8.min(b.len())])
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The same with the fsync's own batch: a file fsync'd alone (OwnWithoutRecords), then renamed and
/// fsync'd again (its records and its own batch: one group), both submitted before one
/// flush (the FUSE daemon's group commit). The crash loses the first batch's data: it is
/// rejected, the group still looks whole, and its rename applies without its batch.
#[test]
fn group_own_batch_after_a_rejected_batch_of_the_same_file() {
    let big = common::limits::big_cache();
    let mut fs = Filesystem::mount(CrashDevice::new(image(true)), &big, t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let c = fs.create(d, b"c", 0o644, C, t(1)).unwrap().ino;
    fs.write(c, 0, &[b'T'; 5000], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.write(c, 0, &[b'1'; 4096], t(2)).unwrap();
    assert!(fs.fsync_submit(c, false, t(2)).unwrap().flush_needed);
    fs.write(c, 0, &[b'2'; 4096], t(3)).unwrap();
    fs.rename(d, b"c", d, b"c2", RenameFlags::empty(), t(3)).unwrap();
    assert!(fs.fsync_submit(c, false, t(4)).unwrap().flush_needed);
    let dev = fs.into_device();
    let pending = dev.pending();
    let mut bad = Vec::new();
    for lost in 0..pending {
        let mut fs = Filesystem::mount(dev.crash(|i| i != lost), &big, t(100)).unwrap();
        let (old, new) = (fs.lookup(d, b"c").is_ok(), fs.lookup(d, b"c2").is_ok());
        let mut b = vec![0u8; 4096];
        fs.read(c, 0, &mut b).unwrap();
        if new && b[0] != b'2' {
            bad.push(format!(
                "lost write {lost} of {pending}: renamed to c2 (old name there: {old}) holding {:?}...",
                b[0] as char
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
