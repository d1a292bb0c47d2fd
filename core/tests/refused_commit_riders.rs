//! A commit refused for room leaves nothing behind for the next one (review 56, F1).
//!
//! A commit decides its riders (the files its records rename over a name: `fsync::riders`)
//! before it takes room; refused for room in phase 1 (SQLITE_FULL, the session kept), it
//! returned before writing them. Since a commit that writes no record names no rider
//! (ad2c876), the riders it had decided stayed in `group_riders`, and the next commit that
//! wrote no record wrote them: each such batch first writes every pending record — every
//! user's — as a group of no batches, so a file renamed over a name came back empty under it
//! after a crash (ALICE's `rename-bad`, which riders exist to prevent). Now `group_riders`
//! is emptied after every fsync and commit, failed ones too. Scenarios, each a test named
//! after it (each fails on ad2c876):
//!
//! | scenario | what must hold |
//! |---|---|
//! | another file renamed over a name after the refused commit; the next commit writes no record | no rider, no record; after a crash the name shows its old file or the new one with its data |
//! | the refused commit's rider punched since | no rider (a punched file's batch cannot carry the hole); the file shows a state it had |
//! | the refused commit's rider unlinked while open since (an orphan) | no rider; fsck clean after a crash |

mod common;
use common::limits::fill;
use common::CrashDevice;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

type Fs = Filesystem<CrashDevice>;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

/// What the setup made: the database's and the other directory's inodes, the database, the
/// refused commit's rider, and `/o/x` (a file with 8 KiB).
struct Setup {
    o: Ino,
    db: Ino,
    r: Ino,
    x: Ino,
}

/// `/d/db` beside a journal `/d/j`; another user's `/o/r` overwritten (no new room) and
/// renamed over `/o/t`; the journal removed. A commit of 64 new blocks on the full device
/// writes records (its directory lost a name), so it decides riders `[r]`, and is refused
/// for room; the session is aborted, room made again and a checkpoint taken.
fn a_refused_commit_with_a_rider() -> (Fs, Setup) {
    let opts =
        MkfsOptions { segment_blocks: 16, uuid: [5; 16], ns_records: true, inline_data: true, ..Default::default() };
    let img = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(img), &common::limits::big_cache(), t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let o = fs.mkdir(1, b"o", 0o755, C, t(1)).unwrap().ino;
    let db = fs.create(d, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(db, 0, &[1u8; 8192], t(1)).unwrap();
    fs.create(d, b"j", 0o644, C, t(1)).unwrap();
    let r = fs.create(o, b"r", 0o644, C, t(1)).unwrap().ino;
    fs.write(r, 0, &[2u8; 8192], t(1)).unwrap();
    fs.create(o, b"t", 0o644, C, t(1)).unwrap();
    let x = fs.create(o, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.write(x, 0, &[3u8; 8192], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let filler = fill(&mut fs, 1, "filler", 0, t(2));
    fs.sync(t(2)).unwrap();
    fs.write(r, 0, &[4u8; 4096], t(3)).unwrap();
    fs.rename(o, b"r", o, b"t", RenameFlags::empty(), t(3)).unwrap();
    fs.unlink(d, b"j", t(3)).unwrap();
    fs.start_atomic_write(db).unwrap();
    for i in 0..64u64 {
        fs.write(db, (100 + i) * 4096, &[5u8; 4096], t(4)).unwrap();
    }
    let res = fs.commit_atomic_write(db, t(4));
    assert!(matches!(res, Err(Error::NoSpace)), "the setup needs a commit refused for room: {res:?}");
    fs.abort_atomic_write(db).unwrap();
    fs.setattr(filler, &SetAttr { size: Some(0), ..Default::default() }, t(5)).unwrap();
    fs.sync(t(5)).unwrap();
    (fs, Setup { o, db, r, x })
}

/// SQLite's next transaction (nothing removed from `/d` since: no record to write), and
/// what it wrote: riders, record nodes.
fn next_commit(fs: &mut Fs, db: Ino) -> (u64, u64) {
    let before = fs.stats();
    fs.start_atomic_write(db).unwrap();
    fs.write(db, 0, &[8u8; 4096], t(7)).unwrap();
    fs.commit_atomic_write(db, t(7)).unwrap();
    let after = fs.stats();
    assert_eq!(after.checkpoints, before.checkpoints, "a checkpoint served the commit");
    (after.fsync_riders - before.fsync_riders, after.ns_record_nodes_written - before.ns_record_nodes_written)
}

#[test]
fn a_file_renamed_over_a_name_after_a_refused_commit_never_comes_back_empty() {
    let (mut fs, s) = a_refused_commit_with_a_rider();
    // The stale rider changed again, and a new file written, never fsync'd, renamed over
    // /o/x: its record pending, it rides whatever writes that record.
    fs.write(s.r, 0, &[6u8; 4096], t(6)).unwrap();
    let new = fs.create(s.o, b"s", 0o644, C, t(6)).unwrap().ino;
    fs.write(new, 0, &[7u8; 12288], t(6)).unwrap();
    fs.rename(s.o, b"s", s.o, b"x", RenameFlags::empty(), t(6)).unwrap();
    let (riders, records) = next_commit(&mut fs, s.db);
    let mut fs =
        Filesystem::mount(fs.into_device().crash_durable_only(), &common::limits::big_cache(), t(100)).unwrap();
    let got = fs.lookup(s.o, b"x").unwrap();
    let size = fs.getattr(got.ino).unwrap().size;
    assert!(
        got.ino == s.x || size == 12288,
        "/o/x shows the file renamed over it without its data (size {size}): its rename was made durable without it riding"
    );
    assert_eq!((riders, records), (0, 0), "a commit that writes no record wrote riders or records");
}

#[test]
fn a_rider_of_a_refused_commit_punched_since_is_not_written_by_the_next_commit() {
    let (mut fs, s) = a_refused_commit_with_a_rider();
    // r (now /o/t) at the checkpoint: [4, 2]. Punched: [0, 2]; written: [0, 6].
    fs.punch_hole(s.r, 0, 4096, t(6)).unwrap();
    fs.write(s.r, 4096, &[6u8; 4096], t(6)).unwrap();
    let (riders, _) = next_commit(&mut fs, s.db);
    let mut fs =
        Filesystem::mount(fs.into_device().crash_durable_only(), &common::limits::big_cache(), t(100)).unwrap();
    let got = fs.lookup(s.o, b"t").unwrap().ino;
    let mut b = vec![0u8; 8192];
    fs.read(got, 0, &mut b).unwrap();
    let (a, c) = (b[0], b[4096]);
    assert!([(4, 2), (0, 2), (0, 6)].contains(&(a, c)), "/o/t shows [{a}, {c}], a state it never had");
    assert_eq!(riders, 0, "a stale rider was written");
}

#[test]
fn a_rider_of_a_refused_commit_orphaned_since_is_not_written_by_the_next_commit() {
    let (mut fs, s) = a_refused_commit_with_a_rider();
    fs.open(s.r).unwrap();
    fs.write(s.r, 0, &[6u8; 8192], t(6)).unwrap();
    fs.unlink(s.o, b"t", t(6)).unwrap();
    let (riders, _) = next_commit(&mut fs, s.db);
    for (what, img) in
        [("durable only", fs.device_mut().crash_durable_only()), ("all", fs.device_mut().crash(|_| true))]
    {
        let fs = Filesystem::mount(CrashDevice::new(img), &common::limits::big_cache(), t(100)).unwrap();
        let mut dev = fs.unmount(t(101)).unwrap();
        let report = fsck::check(&mut dev).unwrap();
        assert!(report.is_clean(), "{what}: fsck: {report:?}");
    }
    assert_eq!(riders, 0, "a stale rider (now an orphan) was written");
}
