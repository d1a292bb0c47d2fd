//! History a checkpoint hides (issue 35, finding 2; invariant 3 of docs/INVARIANTS.md): an
//! inode records one parent and name (its last link's or rename's), and links made in
//! another directory and removed again leave that record naming a directory the file is
//! not in (one link removed again puts the name before it back, `other_names.rs`; two
//! leave nothing to put back). After a sync nothing in memory remembers it. fsync's check for a renamed
//! ancestor walked up from the recorded parent, found nothing renamed, and appended a
//! batch to the chain instead of checkpointing: after a crash the file was back under its
//! old path, though it was fsync'd under the new one. Each test is the scenario its name
//! gives; the crash leaves exactly what was durable when the fsync returned.

use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn fresh() -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [36; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap()
}

/// Power is lost right after the last call returned (every write it made is durable: the
/// memory device makes writes durable at once); the image is recovered and checked.
fn crash_and_recover(fs: Filesystem<MemDevice>) -> Filesystem<MemDevice> {
    let fs = Filesystem::mount(fs.into_device(), &MountOptions::default(), t(100)).expect("mount after crash");
    let mut dev = fs.unmount(t(101)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    Filesystem::mount(dev, &MountOptions::default(), t(102)).unwrap()
}

fn path(fs: &mut Filesystem<MemDevice>, p: &str) -> Option<Ino> {
    let mut ino = 1;
    for c in p.split('/').filter(|c| !c.is_empty()) {
        ino = fs.lookup(ino, c.as_bytes()).ok()?.ino;
    }
    Some(ino)
}

fn content(fs: &mut Filesystem<MemDevice>, p: &str) -> Option<Vec<u8>> {
    let ino = path(fs, p)?;
    let mut buf = vec![0u8; fs.getattr(ino).unwrap().size as usize];
    fs.read(ino, 0, &mut buf).unwrap();
    Some(buf)
}

/// `/a/f` with 5,000 bytes, linked as `/b/g` and `/b/h` and unlinked there again, then
/// synced: the inode records `/b` as its parent.
fn stale_parent(fs: &mut Filesystem<MemDevice>) -> (Ino, Ino, Ino) {
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(a, b"f", 0o644, C, t(2)).unwrap().ino;
    fs.write(f, 0, &[1u8; 5000], t(2)).unwrap();
    two_links_removed_again(fs, f, b);
    fs.sync(t(5)).unwrap();
    (a, b, f)
}

/// Links `f` as `b/g` and `b/h` and unlinks both: the inode records `b` as its parent.
fn two_links_removed_again(fs: &mut Filesystem<MemDevice>, f: Ino, b: Ino) {
    fs.link(f, b, b"g", t(3)).unwrap();
    fs.link(f, b, b"h", t(3)).unwrap();
    fs.unlink(b, b"g", t(4)).unwrap();
    fs.unlink(b, b"h", t(4)).unwrap();
}

#[test]
fn fsync_after_a_parent_rename_with_a_stale_recorded_parent_keeps_the_fsyncd_path() {
    let mut fs = fresh();
    let (_, _, f) = stale_parent(&mut fs);
    fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(6)).unwrap();
    fs.write(f, 0, &[2u8; 8192], t(7)).unwrap();
    fs.fsync(f, false, t(8)).unwrap();
    let mut fs = crash_and_recover(fs);
    assert_eq!(content(&mut fs, "/x/f"), Some(vec![2u8; 8192]), "the file must be at the path it was fsync'd under");
    assert_eq!(path(&mut fs, "/a"), None);
}

#[test]
fn fsync_after_a_grandparent_exchange_with_a_stale_recorded_parent_keeps_the_fsyncd_path() {
    let mut fs = fresh();
    let p = fs.mkdir(1, b"p", 0o755, C, t(1)).unwrap().ino;
    fs.mkdir(1, b"q", 0o755, C, t(1)).unwrap();
    let a = fs.mkdir(p, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(a, b"f", 0o644, C, t(2)).unwrap().ino;
    fs.write(f, 0, &[1u8; 5000], t(2)).unwrap();
    two_links_removed_again(&mut fs, f, b);
    fs.sync(t(5)).unwrap();
    fs.rename(1, b"p", 1, b"q", RenameFlags::EXCHANGE, t(6)).unwrap();
    fs.write(f, 0, &[2u8; 8192], t(7)).unwrap();
    fs.fsync(f, false, t(8)).unwrap();
    let mut fs = crash_and_recover(fs);
    assert_eq!(content(&mut fs, "/q/a/f"), Some(vec![2u8; 8192]));
    assert_eq!(path(&mut fs, "/p/a"), None);
}

#[test]
fn fsync_after_a_parent_rename_when_the_stale_parent_was_removed_and_its_id_reused_keeps_the_fsyncd_path() {
    let mut fs = fresh();
    let (_, b, f) = stale_parent(&mut fs);
    fs.rmdir(1, b"b", t(6)).unwrap();
    // The freed id is handed out again once a checkpoint made its free durable, and node
    // ids are handed out from the lowest after a mount: remount, then make directories
    // until one takes it (bounded).
    let dev = fs.unmount(t(7)).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(7)).unwrap();
    let mut reused = false;
    for i in 0..64 {
        let d = fs.mkdir(1, format!("c{i}").as_bytes(), 0o755, C, t(8)).unwrap().ino;
        if d == b {
            reused = true;
            break;
        }
    }
    assert!(reused, "the removed directory's id was not reused");
    fs.sync(t(9)).unwrap();
    fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(10)).unwrap();
    fs.write(f, 0, &[2u8; 8192], t(11)).unwrap();
    fs.fsync(f, false, t(12)).unwrap();
    let mut fs = crash_and_recover(fs);
    assert_eq!(content(&mut fs, "/x/f"), Some(vec![2u8; 8192]));
    assert_eq!(path(&mut fs, "/a"), None);
}

#[test]
fn fsync_of_a_file_whose_recorded_parent_is_right_appends_to_the_chain() {
    // The lookup that checks the recorded parent must not turn every fsync below a renamed
    // directory into a checkpoint: a file whose record is right still goes to the chain
    // when nothing above it was renamed, and checkpoints (once) when something was.
    let mut fs = fresh();
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(a, b"f", 0o644, C, t(2)).unwrap().ino;
    fs.sync(t(3)).unwrap();
    fs.rename(1, b"d", 1, b"e", RenameFlags::empty(), t(4)).unwrap();
    let before = fs.stats().fsync_checkpoint_fallbacks;
    fs.write(f, 0, &[3u8; 100], t(5)).unwrap();
    fs.fsync(f, false, t(6)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, before, "a file outside the renamed directory");
    let g = fs.create(d, b"g", 0o644, C, t(7)).unwrap().ino;
    fs.write(g, 0, &[4u8; 100], t(7)).unwrap();
    fs.fsync(g, false, t(8)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, before + 1, "a file below the renamed directory");
    let mut fs = crash_and_recover(fs);
    assert_eq!(content(&mut fs, "/a/f"), Some(vec![3u8; 100]));
    assert_eq!(content(&mut fs, "/e/g"), Some(vec![4u8; 100]));
}

/// Crash-safety review of issue 35: SQLite's rollback journal `/a/j` is unlinked, then a
/// batch-atomic transaction of `/a/db` commits. The commit must make the unlink durable
/// (else the journal comes back after a crash beside the committed database, and SQLite
/// rolls the transaction back) — also when `/a/db` records a stale parent, from a link made
/// in `/b` and removed again before a sync hid that history.
#[test]
fn atomic_commit_with_a_stale_recorded_parent_keeps_the_journal_unlinked() {
    let mut fs = fresh();
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino;
    let db = fs.create(a, b"db", 0o644, C, t(2)).unwrap().ino;
    fs.write(db, 0, &[1u8; 8192], t(2)).unwrap();
    let j = fs.create(a, b"j", 0o644, C, t(2)).unwrap().ino;
    fs.write(j, 0, &[9u8; 4096], t(2)).unwrap();
    two_links_removed_again(&mut fs, db, b);
    fs.sync(t(4)).unwrap();
    fs.unlink(a, b"j", t(5)).unwrap();
    fs.start_atomic_write(db).unwrap();
    fs.write(db, 0, &[2u8; 4096], t(6)).unwrap();
    fs.commit_atomic_write(db, t(6)).unwrap();
    let mut fs = crash_and_recover(fs);
    let mut want = vec![1u8; 8192];
    want[..4096].fill(2);
    assert_eq!(content(&mut fs, "/a/db"), Some(want), "the committed transaction");
    assert_eq!(path(&mut fs, "/a/j"), None, "the journal unlinked before the commit came back");
}
