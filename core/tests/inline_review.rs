//! Adversarial review of inline data (issue 38): reproducers of what the review found.
//! Each test states the scenario and the invariant it holds the code to.
mod common;
use common::limits::*;
use common::pointers::inode_addr;
use common::CrashDevice;
use rollfs_core::*;

const UUID: [u8; 16] = [39; 16];

fn fresh(inline_data: bool) -> (Filesystem<CrashDevice>, Ino) {
    fresh_inline(inline_data, UUID)
}

/// On a full device, a hole punch (a removal: a full filesystem still deletes, issue 41),
/// past the end or inside the bytes, and a zero range past the end with KEEP_SIZE, succeed
/// on an ordinary file; on an inline file they convert it first, which needs a data block,
/// and fail with ENOSPC. The
/// explorer found the punch: `rollfs-sim explore --workload all --torn --eio --cold
/// --threads 1 --seed 918273` (op-mismatch in full:40 and full:104: guest ENOSPC, model
/// Ok). The file's bytes fit the inode: nothing needs a block.
#[test]
fn calls_that_need_no_block_succeed_on_a_full_device_for_an_inline_file() {
    for inline in [false, true] {
        let (mut fs, f) = fresh(inline);
        fs.write(f, 0, b"inline bytes", t(2)).unwrap();
        let hole = fs.create(1, b"hole", 0o644, C, t(2)).unwrap().ino;
        fs.setattr(hole, &SetAttr { size: Some(100), ..Default::default() }, t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fill(&mut fs, 1, "filler", 0, t(3));
        let which = if inline { "inline" } else { "ordinary" };
        let mut wrong = Vec::new();
        let r = fs.punch_hole(f, 40960, 65536, t(4));
        if r.is_err() {
            wrong.push(format!("punch past the end: {r:?}"));
        }
        let r = fs.punch_hole(f, 2, 4, t(4));
        if r.is_err() {
            wrong.push(format!("punch inside the bytes: {r:?}"));
        }
        let r = fs.zero_range(f, 8192, 4096, true, t(4));
        if r.is_err() {
            wrong.push(format!("zero range past the end, keep size: {r:?}"));
        }
        let r = fs.copy_range(hole, 0, f, 1000, 100, t(4));
        if r != Ok(100) {
            wrong.push(format!("copy of a hole past the end: {r:?}"));
        }
        assert!(wrong.is_empty(), "{which}: {wrong:?}");
        let mut want = b"in\0\0\0\0 bytes".to_vec();
        want.resize(1100, 0);
        assert_eq!(read_all(&mut fs, f), want, "{which}");
    }
}

/// Every change that dirties an inode reserves the room to write it back first
/// (`reserve_nodes`: "a full filesystem refuses the change (ENOSPC) instead of failing the
/// next checkpoint"); an ordinary write counts its nodes in its room check. An inline write
/// dirties the inode and reserves nothing. So, on a full device, a write into each of many
/// clean inline files succeeds, and the checkpoint that must write all those inodes back
/// finds no room: sync fails and the filesystem shuts down (invariant 7: a full filesystem
/// still works and recovers; ENOSPC is the answer, not a shutdown).
#[test]
fn inline_writes_on_a_full_device_reserve_room_for_their_inodes() {
    let (mut fs, _) = fresh(true);
    let mut files = Vec::new();
    for i in 0..600u32 {
        let f = fs.create(1, format!("s{i}").as_bytes(), 0o644, C, t(2)).unwrap().ino;
        fs.write(f, 0, b"x", t(2)).unwrap();
        files.push(f);
    }
    fs.sync(t(2)).unwrap();
    fill(&mut fs, 1, "filler", 0, t(3));
    let mut written = 0;
    for &f in &files {
        match fs.write(f, 1, b"y", t(4)) {
            Ok(_) => written += 1,
            Err(Error::NoSpace) => break,
            Err(e) => panic!("write {f}: {e:?} after {written} writes"),
        }
    }
    let r = fs.sync(t(5));
    let after = fs.write(files[0], 2, b"z", t(6)).map(|_| ());
    // Whatever the sync did, a crash now must leave an image that mounts read-write.
    let img = fs.into_device().crash_durable_only();
    let mut fs2 = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap();
    let w = fs2.write(files[0], 2, b"z", t(51)).map(|_| ());
    assert!(matches!(w, Ok(()) | Err(Error::NoSpace)), "after the crash: {w:?}");
    assert_eq!(r, Ok(()), "sync after {written} inline writes on a full device (then a write: {after:?})");
}

/// An atomic session's start needs no block for an ordinary file; for an inline file it
/// converts first and so gets ENOSPC on a full device (SQLite's batch atomic write of a
/// small database then fails at its start, where the ordinary file's session would stage
/// its pages in memory and get ENOSPC, if at all, at the commit).
#[test]
fn an_atomic_session_starts_on_a_full_device_for_an_inline_file() {
    for inline in [false, true] {
        let (mut fs, f) = fresh(inline);
        fs.write(f, 0, b"inline bytes", t(2)).unwrap();
        fs.sync(t(2)).unwrap();
        fill(&mut fs, 1, "filler", 0, t(3));
        let which = if inline { "inline" } else { "ordinary" };
        assert_eq!(fs.start_atomic_write(f), Ok(()), "{which}");
        fs.abort_atomic_write(f).unwrap();
    }
}

/// `fsck --repair` of an image whose inline inode fsck reports as damaged (bytes past the
/// size not zero: an extension would show them, invariant 6; a size past the inline limit;
/// an unknown iflags bit) must leave an image fsck finds clean, the file's bytes within its
/// size kept. Repair has no rule for `iflags_problem`: it reports nothing fixed, the problem
/// stays, and every later fsck fails again.
#[test]
fn repair_fixes_what_fsck_reports_of_inline_inodes() {
    use rollfs_core::node::inode;
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, b"0123456789", t(2)).unwrap();
    let img = fs.unmount(t(3)).unwrap().crash_durable_only();
    let mut left = Vec::new();
    type Edit<'a> = (&'a str, &'a dyn Fn(&mut Block));
    let edits: [Edit; 3] = [
        ("bytes past the size", &|b| inode::inline_data_mut(b)[20] = 1),
        ("size past the limit", &|b| inode::set_size(b, 3657)),
        ("unknown iflags bit", &|b| inode::set_iflags(b, inode::iflags(b) | 0x80)),
    ];
    for (what, edit) in edits {
        let mut dev = img.clone();
        let a = inode_addr(&mut dev, f);
        edit(dev.block_mut(a));
        codec::seal_seeded(dev.block_mut(a), codec::crc(&UUID));
        assert!(!fsck::check(&mut dev).unwrap().is_clean(), "{what}: fsck sees it");
        let rep = fsck::repair(&mut dev, t(10)).unwrap();
        let after = fsck::check(&mut dev).unwrap();
        if !after.is_clean() {
            left.push(format!("{what}: repair {rep:?}; fsck after: {:?}", after.problems));
            continue;
        }
        let mut fs = Filesystem::mount(CrashDevice::new(dev), &big_cache(), t(11)).unwrap();
        let got = read_all(&mut fs, f);
        if !got.starts_with(b"0123456789") {
            left.push(format!("{what}: bytes after repair {got:?}"));
        }
    }
    assert!(left.is_empty(), "{left:#?}");
}
