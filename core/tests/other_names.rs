//! A link made and removed again (review 56, second user, F2; `core/src/other_names.rs`):
//! the unlink puts back the parent and name the inode recorded before the link, so the
//! file's fsyncs and atomic commits find their directory known again, instead of a
//! checkpoint or every user's pending records with their riders on each of them until the
//! file is renamed. Each test is the scenario its name gives; those that crash check the
//! file is where it was fsync'd or committed.

mod common;
use common::CrashDevice;
use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };
const EVE: Credentials = Credentials { uid: 1000, gid: 1000 };

type Fs = Filesystem<CrashDevice>;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn mounted(ns_records: bool) -> Fs {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [57; 16], ns_records, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    Filesystem::mount(CrashDevice::new(dev), &common::limits::big_cache(), t(0)).unwrap()
}

/// Power is lost with only what was durable; the image is recovered and checked.
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

/// `/a/f`'s contents after its first 4 KiB were rewritten with `byte`.
fn first_block_rewritten(byte: u8) -> Vec<u8> {
    let mut want = vec![1u8; 5000];
    want[..4096].fill(byte);
    want
}

/// `/a/f` (5,000 bytes) and the directories `/b` (writable by all) and `/d`, synced.
fn setup(fs: &mut Fs) -> (Ino, Ino, Ino) {
    let a = fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino;
    let b = fs.mkdir(1, b"b", 0o777, C, t(1)).unwrap().ino;
    fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap();
    let f = fs.create(a, b"f", 0o666, C, t(1)).unwrap().ino;
    fs.write(f, 0, &[1u8; 5000], t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    (a, b, f)
}

/// Without records, an fsync below a directory renamed since the checkpoint walks up from
/// the recorded parent: after one link made and removed again (hidden by a sync) it walks
/// from `/a` again, finds nothing renamed above it and appends a batch. Before, the
/// recorded `/b` held no entry, the path was unknown, and the fsync checkpointed.
#[test]
fn fsync_after_one_link_made_and_removed_again_appends_to_the_chain() {
    let mut fs = mounted(false);
    let (a, b, f) = setup(&mut fs);
    fs.link(f, b, b"g", t(2)).unwrap();
    fs.unlink(b, b"g", t(3)).unwrap();
    fs.sync(t(4)).unwrap();
    fs.rename(1, b"d", 1, b"e", RenameFlags::empty(), t(5)).unwrap();
    fs.write(f, 0, &[2u8; 8192], t(6)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(7)).unwrap();
    let after = fs.stats();
    assert_eq!(after.checkpoints, before.checkpoints, "the fsync checkpointed: its directory was not known");
    let mut fs = crash(fs);
    assert_eq!(content(&mut fs, a, b"f"), Some(vec![2u8; 8192]), "the fsync'd data at /a/f");
    assert!(fs.lookup(b, b"g").is_err());
}

/// The same name put back when the link goes by a rename over it.
#[test]
fn fsync_after_a_rename_over_the_link_appends_to_the_chain() {
    let mut fs = mounted(false);
    let (a, b, f) = setup(&mut fs);
    fs.link(f, b, b"g", t(2)).unwrap();
    fs.create(b, b"n", 0o644, C, t(2)).unwrap();
    fs.rename(b, b"n", b, b"g", RenameFlags::empty(), t(3)).unwrap();
    fs.sync(t(4)).unwrap();
    fs.rename(1, b"d", 1, b"e", RenameFlags::empty(), t(5)).unwrap();
    fs.write(f, 0, &[3u8; 4096], t(6)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(7)).unwrap();
    assert_eq!(fs.stats().checkpoints, before.checkpoints, "the fsync checkpointed: its directory was not known");
    let mut fs = crash(fs);
    let want = first_block_rewritten(3);
    assert_eq!(content(&mut fs, a, b"f"), Some(want));
}

/// Two links made and removed again leave nothing to put back: the recorded parent stays
/// stale and the fsync checkpoints, as it must (its path is not known).
#[test]
fn fsync_after_two_links_made_and_removed_again_still_checkpoints() {
    let mut fs = mounted(false);
    let (_, b, f) = setup(&mut fs);
    fs.link(f, b, b"g", t(2)).unwrap();
    fs.link(f, b, b"h", t(2)).unwrap();
    fs.unlink(b, b"g", t(3)).unwrap();
    fs.unlink(b, b"h", t(3)).unwrap();
    fs.sync(t(4)).unwrap();
    fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(5)).unwrap();
    fs.write(f, 0, &[4u8; 4096], t(6)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(7)).unwrap();
    assert_eq!(fs.stats().checkpoints, before.checkpoints + 1, "a stale parent below a renamed directory");
    let mut fs = crash(fs);
    let x = fs.lookup(1, b"x").unwrap().ino;
    assert!(content(&mut fs, x, b"f").is_some(), "the file at the path it was fsync'd under");
}

/// Review 56's reproducer in the core: another user links root's file into her directory
/// and removes the link; root commits (writing those two records: they name the file);
/// then she renames a large file she never fsync'd over a name of hers. Root's next atomic
/// commit writes none of her records and carries none of her data: its directory is known
/// again. Before, it was not known on every commit, across remounts, until the file was
/// renamed, and each commit wrote every pending record with its riders.
#[test]
fn an_atomic_commit_after_another_users_link_and_unlink_writes_none_of_her_records() {
    let mut fs = mounted(true);
    let (a, b, f) = setup(&mut fs);
    fs.link(f, b, b"x", t(2)).unwrap();
    fs.unlink(b, b"x", t(2)).unwrap();
    let commit = |fs: &mut Fs, byte: u8, now: i64| {
        fs.start_atomic_write(f).unwrap();
        fs.write(f, 0, &[byte; 4096], t(now)).unwrap();
        fs.commit_atomic_write(f, t(now)).unwrap();
    };
    // The first commit writes the link's and the unlink's records (they name the file).
    commit(&mut fs, 4, 2);
    let theirs = fs.create(b, b"tmp", 0o600, EVE, t(3)).unwrap().ino;
    for i in 0..64u64 {
        fs.write(theirs, i * 4096, &[7u8; 4096], t(3)).unwrap();
    }
    fs.create(b, b"saved", 0o600, EVE, t(3)).unwrap();
    fs.rename(b, b"tmp", b, b"saved", RenameFlags::empty(), t(3)).unwrap();
    let before = fs.stats();
    commit(&mut fs, 5, 4);
    let after = fs.stats();
    assert_eq!(after.checkpoints, before.checkpoints, "no checkpoint");
    assert_eq!(after.ns_record_nodes_written, before.ns_record_nodes_written, "her records were written");
    assert_eq!(after.fsync_riders, before.fsync_riders, "her file rode the commit");
    let mut fs = crash(fs);
    let want = first_block_rewritten(5);
    assert_eq!(content(&mut fs, a, b"f"), Some(want), "the commit");
}

/// On a records image, a file linked and unlinked since the checkpoint (`Relinked`) whose
/// own records are in the chain needs no more records for its names, but still needs them
/// for its path: its directory renamed since, the fsync writes the rename's record, and
/// after a crash the file is at the path it was fsync'd under. Fails with
/// `mutant-relinked-skips-other-reasons`.
#[test]
fn fsync_of_a_relinked_file_below_a_directory_renamed_since_writes_the_rename() {
    let mut fs = mounted(true);
    let (_, b, f) = setup(&mut fs);
    fs.link(f, b, b"g", t(2)).unwrap();
    fs.unlink(b, b"g", t(2)).unwrap();
    fs.fsync(f, false, t(3)).unwrap();
    fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(4)).unwrap();
    fs.write(f, 0, &[6u8; 4096], t(5)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(6)).unwrap();
    let after = fs.stats();
    assert_eq!(after.checkpoints, before.checkpoints, "served by records, without a checkpoint");
    assert!(after.ns_record_nodes_written > before.ns_record_nodes_written, "the rename's record was not written");
    let mut fs = crash(fs);
    let x = fs.lookup(1, b"x").expect("/x, the directory renamed before the fsync, is lost").ino;
    let want = first_block_rewritten(6);
    assert_eq!(content(&mut fs, x, b"f"), Some(want), "the file at the path it was fsync'd under");
}

/// Without the link made and removed again in this mount, one made and removed before it
/// (the name before it forgotten at the unmount) leaves the recorded parent stale, as
/// before: the readers' checks hold, and the file's fsync below a renamed directory still
/// lands at its path.
#[test]
fn a_link_made_before_a_remount_and_removed_after_it_leaves_a_stale_parent_that_is_not_trusted() {
    let mut fs = mounted(false);
    let (_, b, f) = setup(&mut fs);
    fs.link(f, b, b"g", t(2)).unwrap();
    let dev = fs.unmount(t(3)).unwrap();
    let mut fs = Filesystem::mount(dev, &common::limits::big_cache(), t(4)).unwrap();
    fs.unlink(b, b"g", t(4)).unwrap();
    fs.sync(t(5)).unwrap();
    fs.rename(1, b"a", 1, b"x", RenameFlags::empty(), t(6)).unwrap();
    fs.write(f, 0, &[7u8; 4096], t(7)).unwrap();
    let before = fs.stats();
    fs.fsync(f, false, t(8)).unwrap();
    assert_eq!(fs.stats().checkpoints, before.checkpoints + 1, "a stale parent below a renamed directory");
    let mut fs = crash(fs);
    let x = fs.lookup(1, b"x").unwrap().ino;
    assert_eq!(content(&mut fs, x, b"f"), Some(first_block_rewritten(7)));
}
