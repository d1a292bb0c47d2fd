//! File attribute flags (core/src/fileflags.rs: `chattr +i`, `+a`, `+d`, `+A`) and FITRIM
//! (core/src/trim.rs). Flags: every operation an immutable or append-only file or
//! directory must refuse is refused with EPERM and changes nothing, the allowed ones work,
//! only a privileged caller changes `i` and `a`, `d` and `A` are inherited, and the flags
//! survive a remount, an fsync'd crash (roll-forward carries them) and fsck. Trim: only
//! free segments are discarded (never a segment the last checkpoint or an fsync chain
//! still needs: a crash right after a trim on a device that zeroes what it discards loses
//! nothing), a second trim finds nothing new, and the range and minimum length are kept.
mod common;
use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

const NOT_PERMITTED: Result<(), Error> = Err(Error::NotPermitted);

/// A crash device whose discards take effect at once and durably: the discarded blocks
/// read as zeros from then on, before and after a crash (the worst a device may do).
struct Trimming {
    dev: CrashDevice,
    discarded: u64,
}

impl BlockDevice for Trimming {
    fn block_count(&self) -> u64 {
        self.dev.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.dev.read(addr, buf)
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.dev.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.dev.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.dev.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        // As a device does: earlier writes complete first; then the blocks are zero, durably.
        self.dev.wait_writes()?;
        for a in addr..addr + count {
            self.dev.write(a, &[0u8; BLOCK_SIZE], WriteFlags::FUA)?;
        }
        self.dev.wait_writes()?;
        self.discarded += count;
        Ok(())
    }
}

fn opts(discard: bool) -> MountOptions {
    MountOptions { discard, ..big_cache() }
}

/// A fresh image (16 MiB, 64 KiB segments) mounted on a [`Trimming`] device.
fn fresh_trimming(discard: bool) -> Filesystem<Trimming> {
    let dev = Trimming { dev: CrashDevice::new(mkfs(BLOCKS)), discarded: 0 };
    Filesystem::mount(dev, &opts(discard), t(0)).unwrap()
}

/// Power loss now (only durable writes and discards kept), then a recovery mount; fsck
/// of the recovered image after its unmount is clean.
fn crash<D: BlockDevice + Into<CrashDevice>>(fs: Filesystem<D>) -> Filesystem<CrashDevice> {
    let dev: CrashDevice = fs.into_device().into();
    let img = dev.crash_durable_only();
    let mut dev =
        Filesystem::mount(CrashDevice::new(img.clone()), &big_cache(), t(50)).unwrap().unmount(t(51)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap()
}

impl From<Trimming> for CrashDevice {
    fn from(t: Trimming) -> CrashDevice {
        t.dev
    }
}

/// Trims the whole device in steps of `step` segments; returns the blocks discarded.
fn trim_all<D: BlockDevice>(fs: &mut Filesystem<D>, start: u64, end: u64, min: u64, step: u32) -> u64 {
    let (mut pos, mut total) = (start, 0);
    for _ in 0..100_000 {
        let s = fs.trim_step(pos, end, min, step).unwrap();
        total += s.trimmed_blocks;
        assert!(s.next > pos || s.next >= end, "no progress at {pos}");
        pos = s.next;
        if pos >= end {
            return total;
        }
    }
    panic!("trim did not end");
}

/// Everything observable of a file: attributes, bytes, xattrs.
fn snapshot<D: BlockDevice>(fs: &mut Filesystem<D>, ino: Ino) -> (Attr, Vec<u8>, Vec<Vec<u8>>) {
    (fs.getattr(ino).unwrap(), read_all(fs, ino), fs.listxattr(ino).unwrap())
}

#[test]
fn an_immutable_file_refuses_every_change_and_changes_nothing() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &pattern(1, 10_000), t(1)).unwrap();
    fs.setxattr(f, b"user.k", b"v", XattrSetMode::Any, t(1)).unwrap();
    let g = fs.create(1, b"g", 0o644, C, t(1)).unwrap().ino;
    fs.set_file_flags(f, FileFlags::IMMUTABLE, true, t(2)).unwrap();
    assert_eq!(fs.file_flags(f).unwrap(), FileFlags::IMMUTABLE);
    let before = snapshot(&mut fs, f);
    let now = t(3);
    let refused: Vec<(&str, Result<(), Error>)> = vec![
        ("write", fs.write(f, 0, b"x", now).map(drop)),
        ("append", fs.write(f, 10_000, b"x", now).map(drop)),
        ("truncate", fs.setattr(f, &SetAttr { size: Some(0), ..Default::default() }, now).map(drop)),
        ("chmod", fs.setattr(f, &SetAttr { mode: Some(0o600), ..Default::default() }, now).map(drop)),
        ("chown", fs.setattr(f, &SetAttr { uid: Some(5), ..Default::default() }, now).map(drop)),
        ("touch", fs.setattr(f, &SetAttr { mtime: Some(now), atime: Some(now), ..Default::default() }, now).map(drop)),
        ("utimes", fs.setattr(f, &SetAttr { mtime: Some(t(-9)), ..Default::default() }, now).map(drop)),
        ("setxattr", fs.setxattr(f, b"user.k", b"w", XattrSetMode::Any, now)),
        ("removexattr", fs.removexattr(f, b"user.k", now)),
        ("unlink", fs.unlink(1, b"f", now)),
        ("rename", fs.rename(1, b"f", 1, b"h", RenameFlags::empty(), now)),
        ("rename over", fs.rename(1, b"g", 1, b"f", RenameFlags::empty(), now)),
        ("exchange", fs.rename(1, b"g", 1, b"f", RenameFlags::EXCHANGE, now)),
        ("link", fs.link(f, 1, b"l", now).map(drop)),
        ("fallocate", fs.fallocate(f, 0, 1 << 20, false, now)),
        ("fallocate keep", fs.fallocate(f, 0, 1 << 20, true, now)),
        ("punch", fs.punch_hole(f, 0, 4096, now)),
        ("zero", fs.zero_range(f, 0, 4096, true, now)),
        ("copy into", fs.copy_range(g, 0, f, 0, 10, now).map(drop)),
        ("atomic start", fs.start_atomic_write(f)),
        ("open for write", fs.check_open(f, true, false, false)),
        ("open O_APPEND", fs.check_open(f, true, true, false)),
        ("open O_TRUNC", fs.check_open(f, false, false, true)),
        (
            "chattr +d while immutable",
            fs.set_file_flags(f, FileFlags::IMMUTABLE | FileFlags::NODUMP, true, now).map(drop),
        ),
        ("privilege removal", fs.setattr_removing_privileges(f, 0o644, now).map(drop)),
    ];
    for (what, r) in refused {
        assert_eq!(r, NOT_PERMITTED, "{what}");
    }
    assert_eq!(snapshot(&mut fs, f), before, "a refused change changed the file");
    assert_eq!(fs.lookup(1, b"g").unwrap().ino, g);
    assert!(fs.lookup(1, b"h").is_err() && fs.lookup(1, b"l").is_err());
    // Reading, opening read-only, fsync and copying out work.
    fs.check_open(f, false, false, false).unwrap();
    fs.fsync(f, false, now).unwrap();
    assert_eq!(fs.copy_range(f, 0, g, 0, 100, now).unwrap(), 100);
    // Cleared by a privileged caller: every change works again.
    assert_eq!(fs.set_file_flags(f, FileFlags::empty(), false, now).map(drop), NOT_PERMITTED);
    fs.set_file_flags(f, FileFlags::empty(), true, now).unwrap();
    fs.write(f, 0, b"x", now).unwrap();
    fs.setattr(f, &SetAttr { mode: Some(0o600), ..Default::default() }, now).unwrap();
    fs.rename(1, b"f", 1, b"h", RenameFlags::empty(), now).unwrap();
    fs.unlink(1, b"h", now).unwrap();
    unmount_clean(fs, t(9));
}

#[test]
fn an_append_only_file_takes_writes_at_its_end_only() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &pattern(2, 5000), t(1)).unwrap();
    fs.setattr(f, &SetAttr { mode: Some(0o4755), ..Default::default() }, t(1)).unwrap();
    fs.create(1, b"g", 0o644, C, t(1)).unwrap();
    fs.set_file_flags(f, FileFlags::APPEND, true, t(2)).unwrap();
    let before = snapshot(&mut fs, f);
    let now = t(3);
    let refused: Vec<(&str, Result<(), Error>)> = vec![
        ("overwrite", fs.write(f, 0, b"x", now).map(drop)),
        ("write past the end", fs.write(f, 6000, b"x", now).map(drop)),
        ("truncate", fs.setattr(f, &SetAttr { size: Some(10), ..Default::default() }, now).map(drop)),
        ("extend", fs.setattr(f, &SetAttr { size: Some(9000), ..Default::default() }, now).map(drop)),
        ("chmod", fs.setattr(f, &SetAttr { mode: Some(0o600), ..Default::default() }, now).map(drop)),
        ("utimes", fs.setattr(f, &SetAttr { mtime: Some(t(-9)), ..Default::default() }, now).map(drop)),
        ("setxattr", fs.setxattr(f, b"user.k", b"w", XattrSetMode::Any, now)),
        ("unlink", fs.unlink(1, b"f", now)),
        ("rename", fs.rename(1, b"f", 1, b"h", RenameFlags::empty(), now)),
        ("rename over", fs.rename(1, b"g", 1, b"f", RenameFlags::empty(), now)),
        ("link", fs.link(f, 1, b"l", now).map(drop)),
        ("punch", fs.punch_hole(f, 0, 4096, now)),
        ("zero", fs.zero_range(f, 0, 4096, true, now)),
        ("atomic start", fs.start_atomic_write(f)),
        ("open for write without O_APPEND", fs.check_open(f, true, false, false)),
        ("open O_APPEND|O_TRUNC", fs.check_open(f, true, true, true)),
        ("driver's check of an overwrite", fs.check_change(f, Some(0))),
        ("driver's check of a punch", fs.check_change(f, None)),
    ];
    for (what, r) in refused {
        assert_eq!(r, NOT_PERMITTED, "{what}");
    }
    assert_eq!(snapshot(&mut fs, f), before, "a refused change changed the file");
    // What append-only allows: O_APPEND opens, writes at the end, a touch, a pure
    // reservation, and the suid bit dropped by a write (the kernel's privilege removal).
    fs.check_open(f, true, true, false).unwrap();
    fs.check_change(f, Some(5000)).unwrap();
    fs.write(f, 5000, b"tail", now).unwrap();
    fs.setattr(f, &SetAttr { mtime: Some(now), atime: Some(now), ..Default::default() }, now).unwrap();
    fs.fallocate(f, 0, 64 << 10, true, now).unwrap();
    fs.setattr_removing_privileges(f, 0o755, now).unwrap();
    let a = fs.getattr(f).unwrap();
    assert_eq!((a.size, a.perm), (5004, 0o755));
    let mut want = pattern(2, 5000);
    want.extend_from_slice(b"tail");
    assert_eq!(read_all(&mut fs, f), want);
    unmount_clean(fs, t(9));
}

#[test]
fn an_immutable_directory_keeps_its_entries_and_an_append_only_one_only_gains() {
    let mut fs = mount(mkfs(BLOCKS));
    let now = t(3);
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let x = fs.create(d, b"x", 0o644, C, t(1)).unwrap().ino;
    fs.mkdir(d, b"sub", 0o755, C, t(1)).unwrap();
    let y = fs.create(1, b"y", 0o644, C, t(1)).unwrap().ino;
    fs.set_file_flags(d, FileFlags::IMMUTABLE, true, t(2)).unwrap();
    let refused: Vec<(&str, Result<(), Error>)> = vec![
        ("create", fs.create(d, b"n", 0o644, C, now).map(drop)),
        ("mkdir", fs.mkdir(d, b"n", 0o755, C, now).map(drop)),
        ("symlink", fs.symlink(d, b"n", b"x", C, now).map(drop)),
        ("mknod", fs.mknod(d, b"n", 0o010644, 0, C, now).map(drop)),
        ("unlink", fs.unlink(d, b"x", now)),
        ("rmdir", fs.rmdir(d, b"sub", now)),
        ("rename out", fs.rename(d, b"x", 1, b"x2", RenameFlags::empty(), now)),
        ("rename in", fs.rename(1, b"y", d, b"y", RenameFlags::empty(), now)),
        ("link in", fs.link(y, d, b"y", now).map(drop)),
        ("rmdir itself", fs.rmdir(1, b"d", now)),
        ("chmod itself", fs.setattr(d, &SetAttr { mode: Some(0o700), ..Default::default() }, now).map(drop)),
    ];
    for (what, r) in refused {
        assert_eq!(r, NOT_PERMITTED, "immutable directory: {what}");
    }
    let mut names = Vec::new();
    fs.readdir(d, 0, &mut |e| {
        names.push(e.name);
        true
    })
    .unwrap();
    names.sort();
    assert_eq!(names, [b".".to_vec(), b"..".to_vec(), b"sub".to_vec(), b"x".to_vec()]);
    // The files in it are not immutable themselves.
    fs.write(x, 0, b"still writable", now).unwrap();

    fs.set_file_flags(d, FileFlags::APPEND, true, t(4)).unwrap();
    fs.create(d, b"new", 0o644, C, now).unwrap();
    fs.rename(1, b"y", d, b"y", RenameFlags::empty(), now).unwrap();
    let refused: Vec<(&str, Result<(), Error>)> = vec![
        ("unlink", fs.unlink(d, b"x", now)),
        ("rmdir", fs.rmdir(d, b"sub", now)),
        ("rename out", fs.rename(d, b"x", 1, b"x2", RenameFlags::empty(), now)),
        ("rename within", fs.rename(d, b"x", d, b"x2", RenameFlags::empty(), now)),
        ("rename over an entry", fs.rename(d, b"y", d, b"new", RenameFlags::empty(), now)),
    ];
    for (what, r) in refused {
        assert_eq!(r, NOT_PERMITTED, "append-only directory: {what}");
    }
    assert!(fs.lookup(d, b"x").is_ok() && fs.lookup(d, b"new").is_ok() && fs.lookup(d, b"y").is_ok());
    unmount_clean(fs, t(9));
}

#[test]
fn only_a_privileged_caller_changes_immutable_and_append_only() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let now = t(2);
    for flags in [FileFlags::IMMUTABLE, FileFlags::APPEND, FileFlags::IMMUTABLE | FileFlags::NODUMP] {
        assert_eq!(fs.set_file_flags(f, flags, false, now).map(drop), NOT_PERMITTED, "{flags:?}");
    }
    // No-dump and no-atime need no privilege.
    fs.set_file_flags(f, FileFlags::NODUMP | FileFlags::NOATIME, false, now).unwrap();
    fs.set_file_flags(f, FileFlags::NODUMP | FileFlags::APPEND, true, now).unwrap();
    // Clearing append-only needs it too; other flags may change beside it unprivileged.
    assert_eq!(fs.set_file_flags(f, FileFlags::NODUMP, false, now).map(drop), NOT_PERMITTED);
    fs.set_file_flags(f, FileFlags::APPEND, false, now).unwrap();
    assert_eq!(fs.file_flags(f).unwrap(), FileFlags::APPEND);
    let ctime = fs.getattr(f).unwrap().ctime;
    fs.set_file_flags(f, FileFlags::empty(), true, t(5)).unwrap();
    assert!(fs.getattr(f).unwrap().ctime > ctime, "setting flags sets ctime");
    // Only regular files and directories take flags.
    let s = fs.symlink(1, b"s", b"f", C, now).unwrap().ino;
    assert!(matches!(fs.set_file_flags(s, FileFlags::NODUMP, true, now), Err(Error::NotSupported(_))));
    unmount_clean(fs, t(9));
}

#[test]
fn no_dump_and_no_atime_are_inherited_immutable_and_append_only_are_not() {
    let mut fs = mount(mkfs(BLOCKS));
    let now = t(2);
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.set_file_flags(d, FileFlags::NODUMP | FileFlags::NOATIME | FileFlags::APPEND, true, now).unwrap();
    let f = fs.create(d, b"f", 0o644, C, now).unwrap().ino;
    let sub = fs.mkdir(d, b"sub", 0o755, C, now).unwrap().ino;
    let l = fs.symlink(d, b"l", b"f", C, now).unwrap().ino;
    for ino in [f, sub, l] {
        assert_eq!(fs.file_flags(ino).unwrap(), FileFlags::NODUMP | FileFlags::NOATIME, "inode {ino}");
    }
    // An inherited flag does not disturb inline data (a new file starts inline).
    fs.write(f, 0, b"small", now).unwrap();
    assert_eq!(read_all(&mut fs, f), b"small");
    unmount_clean(fs, t(9));
}

#[test]
fn flags_survive_remount_an_fsyncd_crash_and_roll_forward() {
    let mut fs = mount(mkfs(BLOCKS));
    let old = fs.create(1, b"old", 0o644, C, t(1)).unwrap().ino;
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    // Changed after the checkpoint and fsync'd (a batch in the chain; a checkpoint for the
    // directory), and a file created since the checkpoint (restored by its dentry mark).
    fs.write(old, 0, b"kept", t(2)).unwrap();
    fs.set_file_flags(old, FileFlags::IMMUTABLE | FileFlags::NODUMP, true, t(2)).unwrap();
    fs.fsync(old, false, t(2)).unwrap();
    fs.set_file_flags(d, FileFlags::APPEND, true, t(2)).unwrap();
    fs.fsync(d, false, t(2)).unwrap();
    let new = fs.create(1, b"new", 0o644, C, t(3)).unwrap().ino;
    fs.write(new, 0, &pattern(3, 9000), t(3)).unwrap();
    fs.set_file_flags(new, FileFlags::APPEND | FileFlags::NOATIME, true, t(3)).unwrap();
    fs.fsync(new, false, t(3)).unwrap();
    // Set but never made durable: lost with the crash, as a chmod would be.
    let lost = fs.create(1, b"lost", 0o644, C, t(3)).unwrap().ino;
    fs.fsync(lost, false, t(3)).unwrap();
    fs.set_file_flags(lost, FileFlags::NODUMP, true, t(4)).unwrap();

    let mut fs = crash(fs);
    assert!(fs.stats().recovered_batches >= 2, "roll-forward applied the batches");
    let want = [
        ("old", FileFlags::IMMUTABLE | FileFlags::NODUMP),
        ("d", FileFlags::APPEND),
        ("new", FileFlags::APPEND | FileFlags::NOATIME),
        ("lost", FileFlags::empty()),
    ];
    for (name, flags) in want {
        let ino = fs.lookup(1, name.as_bytes()).unwrap().ino;
        assert_eq!(fs.file_flags(ino).unwrap(), flags, "{name} after the crash");
    }
    let old = fs.lookup(1, b"old").unwrap().ino;
    assert_eq!(read_all(&mut fs, old), b"kept");
    assert_eq!(fs.write(old, 0, b"x", t(60)).map(drop), NOT_PERMITTED, "enforced after the crash");
    let new = fs.lookup(1, b"new").unwrap().ino;
    assert_eq!(read_all(&mut fs, new), pattern(3, 9000));

    // A clean remount keeps them, and fsck counts them.
    let dev = fs.unmount(t(61)).unwrap();
    let mut img = dev.crash_durable_only();
    let r = fsck::check(&mut img).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.attr_flag_inodes, [1, 2, 1, 1], "immutable, append-only, no-dump, no-atime");
    let mut fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(62)).unwrap();
    assert_eq!(fs.file_flags(old).unwrap(), FileFlags::IMMUTABLE | FileFlags::NODUMP);
    assert_eq!(fs.rmdir(1, b"d", t(63)), NOT_PERMITTED, "append-only directory");
    assert_eq!(fs.unlink(1, b"old", t(63)), NOT_PERMITTED);
    unmount_clean(fs, t(64));
}

#[test]
fn an_atomic_session_of_a_file_made_immutable_cannot_commit() {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, b"old", t(1)).unwrap();
    fs.start_atomic_write(f).unwrap();
    fs.write(f, 0, b"new", t(2)).unwrap();
    fs.set_file_flags(f, FileFlags::IMMUTABLE, true, t(3)).unwrap();
    assert_eq!(fs.commit_atomic_write(f, t(4)), NOT_PERMITTED);
    fs.abort_atomic_write(f).unwrap();
    assert_eq!(read_all(&mut fs, f), b"old");
    unmount_clean(fs, t(9));
}

#[test]
fn trim_discards_free_segments_only_and_a_crash_after_it_loses_nothing() {
    let mut fs = fresh_trimming(false);
    let end = fs.geometry().total_blocks;
    let seg = fs.geometry().segment_blocks as u64;
    let kept = fs.create(1, b"kept", 0o644, C, t(1)).unwrap().ino;
    fs.write(kept, 0, &pattern(1, 300_000), t(1)).unwrap();
    let doomed = fs.create(1, b"doomed", 0o644, C, t(1)).unwrap().ino;
    fs.write(doomed, 0, &pattern(2, 400_000), t(1)).unwrap();
    fs.sync(t(1)).unwrap();

    let first = trim_all(&mut fs, 0, end, 1, 7);
    assert!(first > 0 && first.is_multiple_of(seg), "the free segments, whole: {first}");
    assert!(first <= fs.geometry().main_blocks() - 6 * seg, "not the six open segments");
    assert_eq!(fs.stats().trimmed_blocks, first);
    assert_eq!(fs.device().discarded, first);
    assert_eq!(trim_all(&mut fs, 0, end, 1, 1000), 0, "a second trim finds nothing new");

    // Deleted, not yet checkpointed: its segments are prefree (the checkpoint still points
    // into them) and must survive a trim. An fsync'd write after the checkpoint sits in the
    // chain (open segments).
    fs.unlink(1, b"doomed", t(2)).unwrap();
    fs.write(kept, 0, b"fsync'd after the checkpoint", t(2)).unwrap();
    fs.fsync(kept, false, t(2)).unwrap();
    assert_eq!(trim_all(&mut fs, 0, end, 1, 3), 0, "prefree and chain segments are not free");
    let mut after = fs.device().dev.clone();
    let mut old = Filesystem::mount_checkpoint(&mut after, &big_cache(), t(3)).unwrap();
    let d = old.lookup(1, b"doomed").unwrap().ino;
    assert_eq!(read_all(&mut old, d), pattern(2, 400_000), "the checkpoint's file intact after the trim");
    drop(old);

    let mut fs = crash(fs);
    let k = fs.lookup(1, b"kept").unwrap().ino;
    let mut want = pattern(1, 300_000);
    want[..28].copy_from_slice(b"fsync'd after the checkpoint");
    assert_eq!(read_all(&mut fs, k), want, "the fsync'd write rolled forward after the trim");
    // The unlink was never made durable (no checkpoint): the file is back, its blocks
    // (prefree at the trim) intact.
    let d = fs.lookup(1, b"doomed").unwrap().ino;
    assert_eq!(read_all(&mut fs, d), pattern(2, 400_000), "the unlinked file's blocks were not trimmed");
    unmount_clean(fs, t(70));
}

#[test]
fn segments_freed_by_a_checkpoint_are_trimmed_once() {
    for discard in [false, true] {
        let mut fs = fresh_trimming(discard);
        let end = fs.geometry().total_blocks;
        let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
        fs.write(f, 0, &pattern(4, 1 << 20), t(1)).unwrap();
        fs.sync(t(1)).unwrap();
        trim_all(&mut fs, 0, end, 1, 64);
        fs.unlink(1, b"f", t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        let trimmed = trim_all(&mut fs, 0, end, 1, 64);
        if discard {
            // The checkpoint discarded them itself (`-o discard`): nothing left to trim.
            assert_eq!(trimmed, 0);
        } else {
            // 256 blocks of data and their nodes: at least the segments only they filled.
            assert!(trimmed >= 256 - 2 * 16, "freed segments trimmed: {trimmed}");
        }
        unmount_clean(fs, t(9));
    }
}

#[test]
fn trim_keeps_to_its_range_and_minimum_length() {
    let mut fs = fresh_trimming(false);
    let g = *fs.geometry();
    let seg = g.segment_blocks as u64;
    // A range inside the main area, not segment aligned: only the blocks in it.
    let start = g.main_start as u64 + 100 * seg + 3;
    let end = start + 10 * seg;
    let n = trim_all(&mut fs, start, end, 1, 2);
    assert!(n > 0 && n <= 10 * seg, "{n}");
    assert_eq!(fs.device().discarded, n);
    // A minimum longer than any free run trims nothing; past the device, nothing.
    assert_eq!(trim_all(&mut fs, 0, g.total_blocks, g.main_blocks() + 1, 1000), 0);
    assert_eq!(fs.device().discarded, n);
    let s = fs.trim_step(g.total_blocks, g.total_blocks + 100, 1, 10).unwrap();
    assert_eq!((s.trimmed_blocks, s.next), (0, g.total_blocks + 100));
    // The metadata areas before the main area are never discarded.
    let before_main = trim_all(&mut fs, 0, g.main_start as u64, 1, 10);
    assert_eq!(before_main, 0);
    // The rest of the device: whole segments, except the partly trimmed ones at the range's ends.
    let rest = trim_all(&mut fs, 0, g.total_blocks, 1, 1000);
    assert!(rest > 0);
    unmount_clean(fs, t(9));
    let mut ro = Filesystem::mount(MemDevice::new(BLOCKS), &MountOptions::default(), t(1));
    assert!(ro.is_err(), "an unformatted device does not mount");
    ro = Filesystem::mount(mkfs(BLOCKS), &MountOptions { read_only: true, ..Default::default() }, t(1));
    assert_eq!(ro.unwrap().trim_step(0, g.total_blocks, 1, 10).map(drop), Err(Error::ReadOnly));
}
