//! Namespace records written by dependency, not as a prefix (review 56, second user, F1;
//! `nschain::record_closure`, `Filesystem::choose_records`). An fsync or atomic commit that
//! needs records writes those touching its file (and its directories when one was renamed
//! since the checkpoint), a commit's journal removals, the records of the files they rename
//! over a name, and every earlier record those depend on — not every user's pending record.
//! Before, a commit whose directory lost a name wrote every record in the list, with every
//! user's riders. Each test is the scenario its name gives; each crashes and checks what is
//! where, and that fsck finds the image clean.
//!
//! | scenario | what must hold |
//! |---|---|
//! | another user saves by rename in her directory; root creates and fsyncs a file in /tmp | root's fsync writes its create only, no rider; after a crash /tmp/db has its data, her save is as durable as she made it |
//! | her records left behind, then written by her own fsync after root's | both durable after a crash; the chain's order is not the list's, and replays |
//! | a commit in /tmp after another user's create and unlink there, her save-by-rename elsewhere | the commit writes the two /tmp records only, no rider; the name stays removed, the commit holds |
//! | a file created in a directory made since the checkpoint | the directory's create is written with the file's (a dependency) |
//! | a file renamed over a name in the fsync'd file's directory, then linked elsewhere | its link is written with it (its batch carries the link count) |
//! | a directory renamed since the checkpoint above the fsync'd file | the rename is written: the file is at its new path |
//! | another user's directory renamed (anywhere) and her save-by-rename in a shared parent of root's new file | root's fsync writes its create and her directory's rename (a barrier before it), not her save after it: only records that move a directory on the path go with it |
//! | a file renamed over a name inside a directory, then the directory moved, then a file in it fsync'd | the move takes every record before it: the name shows the file renamed over it |

mod common;
use common::CrashDevice;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };
const EVE: Credentials = Credentials { uid: 1000, gid: 1000 };

type Fs = Filesystem<CrashDevice>;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

/// A records image with `/tmp` (1777), eve's `/e` holding `doc` (8 KiB of 1s), synced.
fn setup() -> (Fs, Ino, Ino, Ino) {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [58; 16], ns_records: true, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    let mut fs = Filesystem::mount(CrashDevice::new(dev), &common::limits::big_cache(), t(0)).unwrap();
    let tmp = fs.mkdir(1, b"tmp", 0o1777, C, t(1)).unwrap().ino;
    let e = fs.mkdir(1, b"e", 0o755, EVE, t(1)).unwrap().ino;
    let doc = fs.create(e, b"doc", 0o644, EVE, t(1)).unwrap().ino;
    fs.write(doc, 0, &[1u8; 8192], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    (fs, tmp, e, doc)
}

/// Eve's save-by-rename of `/e/doc` (64 KiB of 2s), never fsync'd: a rider of whatever
/// writes its record.
fn eves_save(fs: &mut Fs, e: Ino) -> Ino {
    let n = fs.create(e, b"doc.tmp", 0o644, EVE, t(2)).unwrap().ino;
    fs.write(n, 0, &[2u8; 65536], t(2)).unwrap();
    fs.rename(e, b"doc.tmp", e, b"doc", RenameFlags::empty(), t(2)).unwrap();
    n
}

/// Power is lost with only what was durable; the image is recovered, checked by fsck, and
/// mounted again.
fn crash(fs: Fs) -> Fs {
    let dev = fs.into_device().crash_durable_only();
    let fs = Filesystem::mount(dev, &MountOptions::default(), t(100)).expect("mount after crash");
    let mut dev = fs.unmount(t(101)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    Filesystem::mount(CrashDevice::new(dev), &MountOptions::default(), t(102)).unwrap()
}

fn content(fs: &mut Fs, dir: Ino, name: &[u8]) -> Option<Vec<u8>> {
    let a = fs.lookup(dir, name).ok()?;
    let mut buf = vec![0u8; a.size as usize];
    fs.read(a.ino, 0, &mut buf).unwrap();
    Some(buf)
}

/// What an fsync (or commit) wrote: records, riders, records left unwritten, checkpoints.
struct Wrote {
    records: u64,
    riders: u64,
    left: u64,
    checkpoints: u64,
}

fn wrote(before: &Stats, after: &Stats) -> Wrote {
    Wrote {
        records: after.ns_records_written - before.ns_records_written,
        riders: after.fsync_riders - before.fsync_riders,
        left: after.ns_records_left_unwritten - before.ns_records_left_unwritten,
        checkpoints: after.checkpoints - before.checkpoints,
    }
}

/// Eve's doc shows her old contents or her saved ones, whole.
fn eves_doc_is_whole(fs: &mut Fs, e: Ino) {
    let doc = content(fs, e, b"doc").expect("/e/doc is gone");
    assert!(
        doc == vec![1u8; 8192] || doc == vec![2u8; 65536],
        "/e/doc shows {} bytes, a state it never had",
        doc.len()
    );
}

#[test]
fn root_creating_a_file_in_tmp_writes_its_create_and_not_another_users_save_by_rename() {
    let (mut fs, tmp, e, _) = setup();
    eves_save(&mut fs, e);
    let db = fs.create(tmp, b"db", 0o644, C, t(3)).unwrap().ino;
    fs.write(db, 0, &[3u8; 12288], t(3)).unwrap();
    let before = fs.stats();
    fs.fsync(db, false, t(4)).unwrap();
    let w = wrote(&before, &fs.stats());
    assert_eq!(w.checkpoints, 0, "the fsync checkpointed");
    assert_eq!((w.records, w.riders), (1, 0), "records and riders written: her save rode root's fsync");
    assert_eq!(w.left, 2, "her create and rename are left for her own fsync");
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, tmp, b"db"), Some(vec![3u8; 12288]), "root's fsync'd /tmp/db");
    eves_doc_is_whole(&mut fs, e);
}

#[test]
fn records_left_by_one_fsync_and_written_by_a_later_one_replay_in_the_chains_order() {
    let (mut fs, tmp, e, _) = setup();
    let n = eves_save(&mut fs, e);
    let db = fs.create(tmp, b"db", 0o644, C, t(3)).unwrap().ino;
    fs.write(db, 0, &[3u8; 12288], t(3)).unwrap();
    fs.fsync(db, false, t(4)).unwrap();
    // Her fsync writes her two records after root's create, which came later in the list.
    let before = fs.stats();
    fs.fsync(n, false, t(5)).unwrap();
    let w = wrote(&before, &fs.stats());
    assert_eq!((w.records, w.checkpoints), (2, 0), "her fsync wrote records / checkpointed");
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, tmp, b"db"), Some(vec![3u8; 12288]));
    assert_eq!(content(&mut fs, e, b"doc"), Some(vec![2u8; 65536]), "her fsync'd save");
    assert_eq!(content(&mut fs, e, b"doc.tmp"), None);
}

#[test]
fn a_commit_in_tmp_after_another_users_create_and_unlink_there_writes_those_and_not_her_save() {
    let (mut fs, tmp, e, _) = setup();
    let db = fs.create(tmp, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.write(db, 0, &[3u8; 8192], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    eves_save(&mut fs, e);
    let x = fs.create(tmp, b"x", 0o644, EVE, t(3)).unwrap().ino;
    fs.write(x, 0, b"hers", t(3)).unwrap();
    fs.unlink(tmp, b"x", t(3)).unwrap();
    fs.start_atomic_write(db).unwrap();
    fs.write(db, 0, &[4u8; 8192], t(4)).unwrap();
    let before = fs.stats();
    fs.commit_atomic_write(db, t(4)).unwrap();
    let w = wrote(&before, &fs.stats());
    assert_eq!(w.checkpoints, 0, "the commit checkpointed");
    assert_eq!((w.records, w.riders), (2, 0), "records and riders: her save in /e rode root's commit");
    assert_eq!(w.left, 2);
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, tmp, b"db"), Some(vec![4u8; 8192]), "the committed transaction");
    assert_eq!(content(&mut fs, tmp, b"x"), None, "a name removed from the database's directory came back");
    eves_doc_is_whole(&mut fs, e);
}

#[test]
fn a_file_created_in_a_new_directory_is_written_with_the_directorys_create() {
    let (mut fs, _, e, _) = setup();
    eves_save(&mut fs, e);
    let n = fs.mkdir(1, b"n", 0o755, C, t(3)).unwrap().ino;
    let m = fs.mkdir(n, b"m", 0o755, C, t(3)).unwrap().ino;
    let f = fs.create(m, b"f", 0o644, C, t(3)).unwrap().ino;
    fs.write(f, 0, &[5u8; 5000], t(3)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(4)).unwrap();
    let w = wrote(&before, &fs.stats());
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, m, b"f"), Some(vec![5u8; 5000]), "/n/m/f, fsync'd");
    assert!(fs.lookup(1, b"n").is_ok() && fs.lookup(n, b"m").is_ok());
    // Counted last: a crash check above names what a wrong choice loses.
    assert_eq!((w.records, w.left, w.checkpoints), (3, 2, 0), "records written, left; checkpoints");
}

#[test]
fn a_file_renamed_over_a_name_beside_the_fsynced_one_and_linked_elsewhere_goes_with_its_link() {
    let (mut fs, tmp, e, _) = setup();
    fs.create(tmp, b"u", 0o644, EVE, t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    // Eve's file renamed over /tmp/u (a rider of any fsync writing /tmp's records), then
    // linked into her directory: its batch carries two links.
    let v = fs.create(tmp, b"v", 0o644, EVE, t(2)).unwrap().ino;
    fs.write(v, 0, &[6u8; 8192], t(2)).unwrap();
    fs.rename(tmp, b"v", tmp, b"u", RenameFlags::empty(), t(2)).unwrap();
    fs.link(v, e, b"u2", t(2)).unwrap();
    let db = fs.create(tmp, b"db", 0o644, C, t(3)).unwrap().ino;
    fs.write(db, 0, &[3u8; 4096], t(3)).unwrap();
    let before = fs.stats();
    fs.fsync(db, false, t(4)).unwrap();
    let w = wrote(&before, &fs.stats());
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, tmp, b"db"), Some(vec![3u8; 4096]));
    assert_eq!(content(&mut fs, tmp, b"u"), Some(vec![6u8; 8192]), "/tmp/u, renamed over with its data");
    assert_eq!(content(&mut fs, e, b"u2"), Some(vec![6u8; 8192]), "its second name");
    // Counted last: a crash check above names what a wrong choice loses.
    assert_eq!((w.records, w.riders, w.checkpoints), (4, 1, 0), "records, riders, checkpoints");
}

#[test]
fn a_file_below_a_directory_renamed_since_the_checkpoint_is_written_with_the_rename() {
    let (mut fs, _, e, _) = setup();
    let p = fs.mkdir(1, b"p", 0o755, C, t(1)).unwrap().ino;
    let q = fs.mkdir(p, b"q", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(q, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &[1u8; 4096], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.rename(1, b"p", 1, b"r", RenameFlags::empty(), t(3)).unwrap();
    // Her save after the rename (one before it would go with it: a directory's rename is
    // a barrier).
    eves_save(&mut fs, e);
    fs.write(f, 0, &[7u8; 4096], t(3)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(4)).unwrap();
    let w = wrote(&before, &fs.stats());
    let mut fs = crash(fs);
    let r = fs.lookup(1, b"r").expect("/r, the renamed directory, is gone").ino;
    assert_eq!(r, p);
    assert_eq!(content(&mut fs, q, b"f"), Some(vec![7u8; 4096]), "/r/q/f, fsync'd under that path");
    assert!(fs.lookup(1, b"p").is_err(), "/p is back");
    // Counted last: a crash check above names what a wrong choice loses.
    assert_eq!((w.records, w.left, w.checkpoints), (1, 2, 0), "records written, left; checkpoints");
}

#[test]
fn a_new_file_below_a_shared_directory_leaves_another_users_save_there_when_her_directory_was_renamed() {
    let (mut fs, tmp, e, _) = setup();
    let s = fs.mkdir(tmp, b"s", 0o755, C, t(1)).unwrap().ino;
    fs.mkdir(e, b"d1", 0o755, EVE, t(1)).unwrap();
    let doc = fs.create(tmp, b"doc", 0o644, EVE, t(1)).unwrap().ino;
    fs.write(doc, 0, &[1u8; 4096], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    // Her directory renamed (a directory renamed since the checkpoint: paths are walked),
    // and her save-by-rename in /tmp, a parent of root's directory.
    fs.rename(e, b"d1", e, b"d2", RenameFlags::empty(), t(2)).unwrap();
    let n = fs.create(tmp, b"doc.tmp", 0o644, EVE, t(2)).unwrap().ino;
    fs.write(n, 0, &[2u8; 65536], t(2)).unwrap();
    fs.rename(tmp, b"doc.tmp", tmp, b"doc", RenameFlags::empty(), t(2)).unwrap();
    let f = fs.create(s, b"f", 0o644, C, t(3)).unwrap().ino;
    fs.write(f, 0, &[3u8; 4096], t(3)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(4)).unwrap();
    let w = wrote(&before, &fs.stats());
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, s, b"f"), Some(vec![3u8; 4096]), "/tmp/s/f, fsync'd");
    let got = content(&mut fs, tmp, b"doc").expect("/tmp/doc is gone");
    assert!(got == vec![1u8; 4096] || got == vec![2u8; 65536], "/tmp/doc shows {} bytes", got.len());
    assert!(fs.lookup(e, b"d1").is_ok() != fs.lookup(e, b"d2").is_ok(), "her directory under both names or neither");
    // Her directory's rename goes (a barrier before root's create), her save after it stays.
    assert_eq!((w.records, w.riders, w.left, w.checkpoints), (2, 0, 2, 0), "records, riders, left, checkpoints");
}

#[test]
fn a_directory_renamed_after_a_rename_inside_it_goes_with_that_rename() {
    // The review of stop 58's tree-mismatch: a file renamed over /u/s/f, then /u moved into
    // /m, then a new file in it fsync'd. The move is on the file's path; it takes every
    // record before it, so /m/u/s/f never shows the old 100 bytes, which no file had there.
    let (mut fs, _, e, _) = setup();
    let m = fs.mkdir(1, b"m", 0o755, C, t(1)).unwrap().ino;
    let u = fs.mkdir(1, b"u", 0o755, C, t(1)).unwrap().ino;
    let sdir = fs.mkdir(u, b"s", 0o755, C, t(1)).unwrap().ino;
    let old = fs.create(sdir, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(old, 0, &[1u8; 100], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let new = fs.create(sdir, b"t", 0o644, C, t(2)).unwrap().ino;
    fs.rename(sdir, b"t", sdir, b"f", RenameFlags::empty(), t(2)).unwrap();
    let g = fs.create(u, b"g", 0o644, C, t(2)).unwrap().ino;
    fs.rename(1, b"u", m, b"u", RenameFlags::empty(), t(3)).unwrap();
    eves_save(&mut fs, e);
    fs.write(g, 0, &[4u8; 4096], t(4)).unwrap();
    let before = fs.stats();
    fs.fsync(g, false, t(5)).unwrap();
    let w = wrote(&before, &fs.stats());
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, u, b"g"), Some(vec![4u8; 4096]), "/m/u/g, fsync'd");
    assert_eq!(fs.lookup(m, b"u").map(|a| a.ino).ok(), Some(u), "/m/u");
    let f = fs.lookup(sdir, b"f").expect("/m/u/s/f").ino;
    assert_eq!(f, new, "/m/u/s/f is the file renamed over it before /u moved, not the old one");
    eves_doc_is_whole(&mut fs, e);
    assert_eq!((w.records, w.left, w.checkpoints), (4, 2, 0), "records written, left; checkpoints");
}
