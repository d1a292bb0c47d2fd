//! Review 49: reproducers for namespace records in the chain (`FEATURE_INCOMPAT_NS_RECORDS`)
//! that apply live but not at replay. Each runs a short history on an image with the
//! feature, lets an fsync return, crashes keeping only what was durable, and checks what
//! every fsync promised (invariants 2, 3, 4).

mod common;
use common::CrashDevice;
use rollfs_core::*;

const ROOT: Credentials = Credentials { uid: 0, gid: 0 };
const USER: Credentials = Credentials { uid: 1000, gid: 1000 };

type Fs = Filesystem<CrashDevice>;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image() -> MemDevice {
    let opts =
        MkfsOptions { segment_blocks: 16, uuid: [5; 16], ns_records: true, inline_data: true, ..Default::default() };
    Filesystem::format(MemDevice::new(8192), &opts).unwrap()
}

fn fresh() -> Fs {
    Filesystem::mount(CrashDevice::new(image()), &MountOptions::default(), t(0)).unwrap()
}

/// Crashes keeping only durable writes, mounts (recovery), checks fsck, and remounts.
fn crash_and_recover(fs: Fs) -> Filesystem<MemDevice> {
    let img = fs.into_device().crash_durable_only();
    let fs = Filesystem::mount(img, &MountOptions::default(), t(100)).expect("mount after crash");
    eprintln!(
        "recovery: records rejected {}, ns records written {}",
        fs.stats().recovery_records_rejected,
        fs.stats().ns_records_written
    );
    let mut dev = fs.unmount(t(101)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
    Filesystem::mount(dev, &MountOptions::default(), t(102)).unwrap()
}

fn lookup<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, name: &[u8]) -> Option<Ino> {
    fs.lookup(dir, name).ok().map(|a| a.ino)
}

fn contents<D: BlockDevice>(fs: &mut Filesystem<D>, ino: Ino) -> Vec<u8> {
    let a = fs.getattr(ino).unwrap();
    let mut b = vec![0u8; a.size as usize];
    fs.read(ino, 0, &mut b).unwrap();
    b
}

/// Another user's fsync'd new file, made after `prelude`'s operations (which all succeeded
/// live): it must be there after a crash (invariant 3) with its data (invariant 2).
fn other_users_fsync_survives(prelude: impl FnOnce(&mut Fs)) {
    let mut fs = fresh();
    let home = fs.mkdir(1, b"home", 0o777, ROOT, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    prelude(&mut fs);
    // Another user, elsewhere on the mount: create, write, fsync (returns: durable).
    let g = fs.create(home, b"report", 0o644, USER, t(20)).unwrap().ino;
    fs.write(g, 0, b"fsync'd by another user", t(20)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.fsync(g, false, t(21)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "the fsync was served by records, not a checkpoint");
    let mut fs = crash_and_recover(fs);
    let got = lookup(&mut fs, home, b"report");
    assert_eq!(got, Some(g), "the other user's fsync'd file is gone after the crash (invariant 3)");
    assert_eq!(contents(&mut fs, g), b"fsync'd by another user");
}

#[test]
fn unlink_of_a_file_immutable_at_the_checkpoint_does_not_cost_a_later_fsync() {
    // Root clears +i on a file that was immutable at the last checkpoint and removes it;
    // the unlink's record replays through unlink_inner, which refuses the (checkpointed)
    // immutable file.
    let mut fs = fresh();
    let f = fs.create(1, b"locked", 0o644, ROOT, t(1)).unwrap().ino;
    fs.set_file_flags(f, FileFlags::IMMUTABLE, true, t(1)).unwrap();
    let home = fs.mkdir(1, b"home", 0o777, ROOT, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.set_file_flags(f, FileFlags::empty(), true, t(2)).unwrap();
    fs.unlink(1, b"locked", t(3)).unwrap();
    let g = fs.create(home, b"report", 0o644, USER, t(20)).unwrap().ino;
    fs.write(g, 0, b"fsync'd by another user", t(20)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.fsync(g, false, t(21)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "the fsync was served by records, not a checkpoint");
    let mut fs = crash_and_recover(fs);
    assert_eq!(lookup(&mut fs, home, b"report"), Some(g), "fsync'd file lost (invariant 3)");
    assert_eq!(contents(&mut fs, g), b"fsync'd by another user");
}

#[test]
fn unlink_in_a_directory_append_only_at_the_checkpoint_does_not_cost_a_later_fsync() {
    other_users_fsync_survives(|fs| {
        let d = fs.mkdir(1, b"log", 0o755, ROOT, t(2)).unwrap().ino;
        fs.create(d, b"old", 0o644, ROOT, t(2)).unwrap();
        fs.set_file_flags(d, FileFlags::APPEND, true, t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.set_file_flags(d, FileFlags::empty(), true, t(3)).unwrap();
        fs.unlink(d, b"old", t(4)).unwrap();
    });
}

#[test]
fn rmdir_of_a_directory_append_only_at_the_checkpoint_does_not_cost_a_later_fsync() {
    other_users_fsync_survives(|fs| {
        let d = fs.mkdir(1, b"spool", 0o755, ROOT, t(2)).unwrap().ino;
        fs.set_file_flags(d, FileFlags::APPEND, true, t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.set_file_flags(d, FileFlags::empty(), true, t(3)).unwrap();
        fs.rmdir(1, b"spool", t(4)).unwrap();
    });
}

#[test]
fn link_into_a_directory_immutable_at_the_checkpoint_does_not_cost_a_later_fsync() {
    other_users_fsync_survives(|fs| {
        let d = fs.mkdir(1, b"frozen", 0o755, ROOT, t(2)).unwrap().ino;
        let f = fs.create(1, b"file", 0o644, ROOT, t(2)).unwrap().ino;
        fs.set_file_flags(d, FileFlags::IMMUTABLE, true, t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.set_file_flags(d, FileFlags::empty(), true, t(3)).unwrap();
        fs.link(f, d, b"alias", t(4)).unwrap();
    });
}

#[test]
fn link_of_a_file_append_only_at_the_checkpoint_does_not_cost_a_later_fsync() {
    other_users_fsync_survives(|fs| {
        let f = fs.create(1, b"journal", 0o644, ROOT, t(2)).unwrap().ino;
        fs.set_file_flags(f, FileFlags::APPEND, true, t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.set_file_flags(f, FileFlags::empty(), true, t(3)).unwrap();
        fs.link(f, 1, b"journal.1", t(4)).unwrap();
    });
}

#[test]
fn rename_of_a_file_immutable_at_the_checkpoint_does_not_cost_a_later_fsync() {
    // Held at review: rename's flag checks are outside rename_inner (check_rename_flags).
    other_users_fsync_survives(|fs| {
        let f = fs.create(1, b"a", 0o644, ROOT, t(2)).unwrap().ino;
        fs.set_file_flags(f, FileFlags::IMMUTABLE, true, t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.set_file_flags(f, FileFlags::empty(), true, t(3)).unwrap();
        fs.rename(1, b"a", 1, b"b", RenameFlags::empty(), t(4)).unwrap();
    });
}

#[test]
fn mknod_of_a_symlink_type_does_not_make_the_image_unmountable_after_a_crash() {
    // The core's mknod accepts S_IFLNK (the kernel refuses it with EINVAL, so this is the
    // core API's: the simulator's, an embedder's): a symlink with no target, whose create
    // record `ns_record` takes as "target follows" and which no target ever follows. The
    // record is written though not expressible; the decoder refuses it, and a record node
    // that does not decode fails the mount.
    let mut fs = fresh();
    let home = fs.mkdir(1, b"home", 0o777, ROOT, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let made = fs.mknod(home, b"odd", 0o120777, 0, USER, t(2));
    eprintln!("mknod S_IFLNK: {made:?}");
    if made.is_err() {
        return; // refused: nothing to check
    }
    let g = fs.create(home, b"report", 0o644, USER, t(20)).unwrap().ino;
    fs.write(g, 0, b"fsync'd by another user", t(20)).unwrap();
    fs.fsync(g, false, t(21)).unwrap();
    let mut fs = crash_and_recover(fs);
    assert_eq!(lookup(&mut fs, home, b"report"), Some(g), "fsync'd file lost (invariant 3)");
}
