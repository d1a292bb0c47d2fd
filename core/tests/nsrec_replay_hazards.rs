//! Namespace records (`FEATURE_INCOMPAT_NS_RECORDS`) that applied live but could not at
//! replay (the adversarial review of stop 49; each test failed before its fix): flags
//! cleared since the checkpoint (no record) that the replayed unlink, rmdir or link met,
//! records the decoder refuses (a symlink made by mknod, a time out of range), and new
//! names on dead inodes (a create in a removed open directory, a link of an open unlinked
//! file). Each runs a short history on an image with the feature, lets an fsync return,
//! crashes keeping only what was durable, and checks what every fsync promised (invariants
//! 1 to 4): one record that cannot apply would stop the replay and drop another user's
//! later fsync'd files.

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

#[test]
fn unlink_of_a_file_whose_batch_set_append_only_does_not_cost_a_later_fsync() {
    // No checkpoint with the flag on: root sets +a on a file and fsyncs it (the batch's inode
    // carries the flag, and roll-forward copies the batch's header), clears the flag (no
    // record, no batch) and removes the file. At replay the unlink meets the batch's +a.
    other_users_fsync_survives(|fs| {
        let f = fs.create(1, b"audit", 0o644, ROOT, t(2)).unwrap().ino;
        fs.write(f, 0, b"x", t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fs.set_file_flags(f, FileFlags::APPEND, true, t(3)).unwrap();
        fs.write(f, 1, b"y", t(3)).unwrap();
        fs.fsync(f, false, t(3)).unwrap();
        fs.set_file_flags(f, FileFlags::empty(), true, t(4)).unwrap();
        fs.unlink(1, b"audit", t(5)).unwrap();
    });
}

/// Every reachable path with its inode, type, link count, mode and bytes.
type Tree = std::collections::BTreeMap<Vec<u8>, (Ino, FileType, u32, u32, Vec<u8>)>;

fn snapshot<D: BlockDevice>(fs: &mut Filesystem<D>) -> Tree {
    let mut tree = Tree::new();
    let mut todo = vec![(Vec::new(), 1)];
    while let Some((path, dir)) = todo.pop() {
        let mut entries = Vec::new();
        fs.readdir(dir, 0, &mut |e| {
            if e.name != b"." && e.name != b".." {
                entries.push((e.name, e.ino));
            }
            true
        })
        .unwrap();
        for (name, ino) in entries {
            let mut p = path.clone();
            p.push(b'/');
            p.extend_from_slice(&name);
            let a = fs.getattr(ino).unwrap();
            let bytes = match a.kind {
                FileType::Regular => contents(fs, ino),
                FileType::Symlink => fs.readlink(ino).unwrap(),
                _ => Vec::new(),
            };
            if a.kind == FileType::Directory {
                todo.push((p.clone(), ino));
            }
            tree.insert(p, (ino, a.kind, a.nlink, a.perm.into(), bytes));
        }
    }
    tree
}

#[test]
fn odd_but_legal_history_then_a_root_fsync_recovers_the_live_tree() {
    let long = vec![b'L'; 255];
    let long2: Vec<u8> = (1u8..=255).map(|b| if b == b'/' { b'_' } else { b }).collect();
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, ROOT, t(1)).unwrap().ino;
    let sub = fs.mkdir(d, b"sub", 0o755, ROOT, t(1)).unwrap().ino;
    fs.create(sub, b"in", 0o644, ROOT, t(1)).unwrap();
    let f = fs.create(d, b"f", 0o644, ROOT, t(1)).unwrap().ino;
    fs.write(f, 0, &[1u8; 5000], t(1)).unwrap();
    let e = fs.mkdir(1, b"e", 0o2775, ROOT, t(1)).unwrap().ino;
    let full = fs.mkdir(e, b"full", 0o755, ROOT, t(1)).unwrap().ino;
    fs.create(full, b"x", 0o644, ROOT, t(1)).unwrap();
    let o = fs.create(1, b"o", 0o644, ROOT, t(1)).unwrap().ino;
    fs.write(o, 0, b"orphan", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    // Long and binary names, a hard link, a rename over an emptied directory, an
    // open-unlinked file, a directory and a file exchanged, a directory moved below a
    // directory made after it, a setgid directory's new entries.
    fs.link(f, e, &long, t(2)).unwrap();
    fs.unlink(full, b"x", t(3)).unwrap();
    fs.rename(d, b"sub", e, b"full", RenameFlags::empty(), t(4)).unwrap();
    fs.open(o).unwrap();
    fs.unlink(1, b"o", t(5)).unwrap();
    fs.rename(e, b"full", d, b"f", RenameFlags::EXCHANGE, t(6)).unwrap();
    let ld = fs.mkdir(d, &long2, 0o755, USER, t(7)).unwrap().ino;
    fs.rename(1, b"d", 1, b"d2", RenameFlags::NOREPLACE, t(8)).unwrap();
    fs.rename(1, b"e", ld, b"e", RenameFlags::empty(), t(9)).unwrap();
    fs.symlink(d, &long, &vec![b't'; 3737], USER, t(10)).unwrap();
    fs.create(e, b"sg", 0o640, USER, t(11)).unwrap();
    fs.mkdir(e, b"sgd", 0o750, USER, t(11)).unwrap();
    fs.link(f, e, b"h2", t(12)).unwrap();
    fs.unlink(e, &long, t(12)).unwrap();
    fs.link(f, d, b"h3", t(12)).unwrap();
    fs.mknod(e, b"dev", 0o020600, 0x0801, ROOT, t(13)).unwrap();
    let live = snapshot(&mut fs);
    let cps = fs.stats().checkpoints;
    fs.fsync(1, false, t(20)).unwrap();
    fs.fsync(e, false, t(20)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "served by records");
    let mut fs = crash_and_recover(fs);
    let got = snapshot(&mut fs);
    if got != live {
        for (k, v) in &live {
            if got.get(k) != Some(v) {
                eprintln!("live {:?}: {:?} got {:?}", String::from_utf8_lossy(k), v.0, got.get(k).map(|g| g.0));
            }
        }
        for k in got.keys().filter(|k| !live.contains_key(*k)) {
            eprintln!("extra after recovery: {:?}", String::from_utf8_lossy(k));
        }
        panic!("recovered tree differs from the live tree after a root fsync");
    }
}

#[test]
fn a_create_at_a_time_the_decoder_refuses_does_not_make_the_image_unmountable() {
    // `Timestamp`'s fields are public and not normalized: a caller's time with
    // nsec = 1e9 goes into a create record that the decoder refuses ("nanoseconds out of
    // range"), and a record node that does not decode fails the mount. (The native driver's
    // clock never gives one; the core API, the simulator's and an embedder's, can.)
    let mut fs = fresh();
    let home = fs.mkdir(1, b"home", 0o777, ROOT, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let odd = Timestamp { sec: 1_700_000_002, nsec: 1_000_000_000 };
    let made = fs.create(home, b"odd", 0o644, USER, odd);
    eprintln!("create at {odd:?}: {:?}", made.as_ref().map(|a| a.ino));
    if made.is_err() {
        return;
    }
    let g = fs.create(home, b"report", 0o644, USER, t(20)).unwrap().ino;
    fs.fsync(g, false, t(21)).unwrap();
    let mut fs = crash_and_recover(fs);
    assert_eq!(lookup(&mut fs, home, b"report"), Some(g), "fsync'd file lost (invariant 3)");
}

#[test]
fn a_create_in_an_open_removed_directory_does_not_cost_a_later_fsync() {
    // The core lets a create into a directory that was removed while open (the kernel
    // refuses it, IS_DEADDIR: core API only). Live the directory is an orphan and the
    // create succeeds; at replay the rmdir evicts it and the create's record cannot apply.
    other_users_fsync_survives(|fs| {
        let d = fs.mkdir(1, b"gone", 0o755, ROOT, t(2)).unwrap().ino;
        fs.sync(t(2)).unwrap();
        fs.open(d).unwrap();
        fs.rmdir(1, b"gone", t(3)).unwrap();
        let made = fs.create(d, b"inside", 0o644, ROOT, t(4));
        eprintln!("create in a removed open directory: {:?}", made.map(|a| a.ino));
    });
}

#[test]
fn a_link_of_an_open_unlinked_file_does_not_cost_a_later_fsync() {
    // The core lets link() give a name back to an open file with no links left (the kernel
    // refuses it unless O_TMPFILE: core API only). At replay the unlink evicted the inode
    // and the link's record cannot apply.
    other_users_fsync_survives(|fs| {
        let f = fs.create(1, b"tmp", 0o644, ROOT, t(2)).unwrap().ino;
        fs.sync(t(2)).unwrap();
        fs.open(f).unwrap();
        fs.unlink(1, b"tmp", t(3)).unwrap();
        let made = fs.link(f, 1, b"back", t(4));
        eprintln!("link of an orphan: {:?}", made.map(|a| a.nlink));
    });
}

#[test]
fn a_link_of_an_open_unlinked_file_then_close_leaves_no_dangling_name() {
    // Outside records (any image): link() of an orphan gives it a name but leaves it on the
    // orphan list, and the last close evicts it: the name then leads to a freed inode.
    // Core API only (the kernel refuses link of an inode with no links unless O_TMPFILE).
    let mut fs = fresh();
    let f = fs.create(1, b"tmp", 0o644, ROOT, t(2)).unwrap().ino;
    fs.write(f, 0, b"kept?", t(2)).unwrap();
    fs.open(f).unwrap();
    fs.unlink(1, b"tmp", t(3)).unwrap();
    if fs.link(f, 1, b"back", t(4)).is_err() {
        return; // refused: nothing to check
    }
    fs.release(f, t(5)).unwrap();
    let got = fs.lookup(1, b"back").map(|a| a.ino);
    assert_eq!(got.as_ref().ok(), Some(&f), "the relinked file's name: {got:?}");
    let mut dev = fs.unmount(t(6)).unwrap().crash_durable_only();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "fsck: {:?}", r.problems);
}

/// A record whose replay meets a damaged block (here: the inode an unlink record drops a
/// link of fails its checksum) is not a record that does not apply: dropping it would drop
/// every later record with it (another user's fsync'd new file) and say nothing. The mount
/// fails naming the block, as at any damaged node the chain needs; `fsck --repair` then
/// leaves an image that mounts and checks clean.
#[test]
fn a_damaged_block_met_by_a_replayed_record_fails_the_mount_naming_it() {
    let mut fs = fresh();
    let home = fs.mkdir(1, b"home", 0o777, ROOT, t(1)).unwrap().ino;
    let f = fs.create(home, b"old", 0o644, ROOT, t(1)).unwrap().ino;
    fs.write(f, 0, b"checkpointed", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    fs.unlink(home, b"old", t(2)).unwrap();
    let g = fs.create(home, b"report", 0o644, USER, t(3)).unwrap().ino;
    fs.write(g, 0, b"fsync'd by another user", t(3)).unwrap();
    let cps = fs.stats().checkpoints;
    fs.fsync(g, false, t(4)).unwrap();
    assert_eq!(fs.stats().checkpoints, cps, "the fsync was served by records");
    let mut img = fs.into_device().crash_durable_only();
    // Flip a byte of `old`'s inode block, where the checkpoint's NAT has it.
    let hit = common::pointers::inode_addr(&mut img, f);
    img.block_mut(hit)[200] ^= 1;
    match Filesystem::mount(img.clone(), &MountOptions::default(), t(100)) {
        Err(Error::Corrupt { block, reason }) => {
            assert_eq!(block, hit, "{reason}");
        }
        Err(e) => panic!("mount failed with {e}, not the damaged block"),
        Ok(fs) => panic!(
            "mounted over a damaged block the replay met (records rejected: {})",
            fs.stats().recovery_records_rejected
        ),
    }
    let r = fsck::check(&mut img).unwrap();
    assert!(!r.is_clean(), "fsck saw nothing wrong");
    let rep = fsck::repair(&mut img, t(101)).unwrap();
    assert!(rep.after.is_clean(), "after repair: {:?}", rep.after.problems);
    let mut fs = Filesystem::mount(img, &MountOptions::default(), t(102)).unwrap();
    assert!(fs.getattr(home).is_ok());
}
