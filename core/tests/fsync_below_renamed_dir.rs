//! The path at fsync time below a renamed directory (`below_renamed_dir`): a hard-linked file
//! whose inode records its other parent, and a file whose recorded parent was removed.
//!
//! From the adversarial review of issue 13's first fix (fd77b54), whose other tests are in
//! failure_atomicity.rs, full_device.rs, recovery_reserve.rs and crash_during_recovery.rs:
//! each test here failed on fd77b54.

mod common;

use common::limits::*;
use rollfs_core::*;

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

// ---- below_renamed_dir follows a stale parent -------------------------------------------

/// /a/x gets names /b/y and /b/z (its inode now records /b); both are unlinked (two: one
/// removed again would put /a back, other_names.rs) and /b removed, so the inode's
/// recorded parent is a freed inode. After any directory rename,
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
    fs.link(x, b, b"z", t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.unlink(b, b"y", t(3)).unwrap();
    fs.unlink(b, b"z", t(3)).unwrap();
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
