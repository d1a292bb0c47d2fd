//! The boundary checks (recovery's `assert_batch_applied`, cleaning's `check_moved_out`)
//! hold on consistent images; on damaged ones (node contents changed, checksums valid)
//! recovery and cleaning must go on as before the checks existed: a damaged name drops the
//! recovered inode and keeps the checkpointed file, a node its inode no longer reaches
//! leaks its block (counted, for fsck), and nothing panics. Found by the review of issue 37
//! (each test panicked at 5da558d).

mod common;
use common::CrashDevice;
use rollfs_core::layout::{ADDRS_PER_INODE, NULL_NID};
use rollfs_core::node::{self, inode, NodeType};
use rollfs_core::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn image(blocks: u64) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [3; 16], ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).unwrap()
}

/// Every sealed node block in the main area for which `pick` holds is rewritten by `edit`
/// and sealed again (damage with valid CRCs). Returns how many.
fn edit_nodes(
    dev: &mut MemDevice,
    g: &layout::Geometry,
    seed: u32,
    pick: impl Fn(&Block) -> bool,
    edit: impl Fn(&mut Block),
) -> usize {
    let mut n = 0;
    for addr in g.main_start as u64..g.main_start as u64 + g.main_blocks() {
        let b = dev.block_mut(addr);
        if codec::crc_ok_seeded(b, seed) && node::footer_type(b).is_some() && pick(b) {
            edit(b);
            codec::seal_seeded(b, seed);
            n += 1;
        }
    }
    n
}

/// recovery.rs's table: "dentry mark for a name that is taken anyway (damage) | existing
/// entry | the checkpointed file is kept, the recovered one dropped". `recover_dentry_inner`
/// evicts the recovered inode, then `assert_batch_applied` asserts the NAT still names it.
fn dentry_mark_damage(edit: impl Fn(&mut Block, Ino, Ino)) -> std::thread::Result<Result<Vec<u8>>> {
    let mut fs = Filesystem::mount(CrashDevice::new(image(8192)), &MountOptions::default(), t(0)).unwrap();
    let d = fs.mkdir(1, b"dir", 0o755, C, t(1)).unwrap().ino;
    let old = fs.create(d, b"old", 0o644, C, t(1)).unwrap().ino;
    fs.write(old, 0, b"checkpointed", t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let f = fs.create(d, b"new", 0o644, C, t(2)).unwrap().ino;
    fs.write(f, 0, b"fresh", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    assert_eq!(fs.stats().fsync_checkpoint_fallbacks, 0, "the fsync went to the chain");
    let seed = codec::crc(&fs.superblock().uuid);
    let g = *fs.geometry();
    let mut img = fs.into_device().crash_durable_only();
    let hits = edit_nodes(
        &mut img,
        &g,
        seed,
        |b| {
            node::footer_type(b) == Some(NodeType::Inode)
                && node::footer_ino(b) == f
                && node::footer_flags(b) & node::FLAG_DENTRY != 0
        },
        |b| edit(b, d, old),
    );
    assert_eq!(hits, 1);
    catch_unwind(AssertUnwindSafe(move || {
        let mut fs = Filesystem::mount(img, &MountOptions::default(), t(100))?;
        let a = fs.lookup(d, b"old")?;
        let mut buf = vec![0u8; a.size as usize];
        fs.read(a.ino, 0, &mut buf)?;
        Ok(buf)
    }))
}

#[test]
fn dentry_mark_for_a_taken_name_keeps_the_checkpointed_file() {
    let r = dentry_mark_damage(|b, _, _| inode::set_name(b, b"old"));
    let r = r.expect("mount panicked (assert_batch_applied after recover_dentry evicted the inode)");
    assert_eq!(r.unwrap(), b"checkpointed");
}

#[test]
fn dentry_mark_with_a_parent_that_is_no_directory_is_dropped() {
    let r = dentry_mark_damage(|b, _, old| inode::set_pino(b, old));
    let r = r.expect("mount panicked (assert_batch_applied after recover_dentry evicted the inode)");
    assert_eq!(r.unwrap(), b"checkpointed");
}

/// A file whose direct node is still valid (NAT, SIT) but no longer linked from its inode
/// (damage with valid CRCs, the kind `holds_corrupt_pointers_in_sealed_nodes_never_panic_*`
/// makes). Cleaning a segment of its data moves (ino, idx) into the write-back cache; write-
/// back maps the index through the inode (a new direct node, old pointer NULL), so the
/// victim's copy stays valid and `assert_moved_out` panics. Before: the round completed.
#[test]
fn cleaning_a_block_of_an_unlinked_direct_node_does_not_panic() {
    const BS: u64 = BLOCK_SIZE as u64;
    let base = ADDRS_PER_INODE as u64;
    let mut fs = Filesystem::mount(image(1024), &MountOptions::default(), t(0)).unwrap();
    let x = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
    let y = fs.create(1, b"y", 0o644, C, t(1)).unwrap().ino;
    // X's blocks alternate with overwritten copies of Y's one block in the warm data log:
    // X's segments are about half valid, and they fill two thirds of the device.
    for k in 0..300u64 {
        fs.write(x, (base + k) * BS, &[0x58; BLOCK_SIZE], t(2)).unwrap();
        fs.fsync(x, false, t(2)).unwrap();
        fs.write(y, 0, &[k as u8; BLOCK_SIZE], t(2)).unwrap();
        fs.fsync(y, false, t(2)).unwrap();
    }
    fs.sync(t(3)).unwrap();
    eprintln!("statfs {:?}, main segments {}", fs.statfs().unwrap(), fs.geometry().main_segments);
    let seed = codec::crc(&fs.superblock().uuid);
    let g = *fs.geometry();
    let mut img = fs.unmount(t(4)).unwrap();
    let node::BlockPath::Node { slot, .. } = node::block_path(base).unwrap() else { unreachable!() };
    let hits = edit_nodes(
        &mut img,
        &g,
        seed,
        |b| node::footer_type(b) == Some(NodeType::Inode) && node::footer_ino(b) == x,
        |b| inode::set_nid(b, slot, NULL_NID),
    );
    assert!(hits >= 1);
    let r = catch_unwind(AssertUnwindSafe(move || {
        // Slack space recycling off: since the mount writes a checkpoint (its version
        // jump), the holes are recyclable at once and would take the fill without cleaning.
        let mut fs = Filesystem::mount(img, &MountOptions { ssr: false, ..Default::default() }, t(10)).unwrap();
        let mut bg = 0;
        while bg < 200 && fs.gc_background(t(20 + bg)).unwrap_or(false) {
            bg += 1;
        }
        eprintln!("{bg} background rounds");
        let z = fs.create(1, b"z", 0o644, C, t(11)).unwrap().ino;
        // Fill the device: foreground cleaning (greedy) takes the half-valid segments.
        let mut written = 0u64;
        for k in 0..4096u64 {
            match fs.write(z, k * BS, &[0x5a; BLOCK_SIZE], t(11)) {
                Ok(_) => written += 1,
                Err(e) => {
                    eprintln!("fill stopped: {e:?}");
                    break;
                }
            }
        }
        (written, fs.stats().gc_segments, fs.stats().gc_blocks_left_valid)
    }));
    let (written, gc, left) = r.expect("a write panicked (check_moved_out)");
    eprintln!("filled {written} blocks, {gc} segments cleaned, {left} moved blocks left valid");
    assert!(gc > 0, "no cleaning happened: the test did not reach its point");
    assert!(left > 0, "the leak was not counted (Stats::gc_blocks_left_valid)");
}

/// The same damage: a read-only mount (which also rolls the chain forward in memory) panics
/// too; `fsck --repair` does not (it is the way out).
#[test]
fn dentry_mark_damage_read_only_mount_and_repair() {
    let mut fs = Filesystem::mount(CrashDevice::new(image(8192)), &MountOptions::default(), t(0)).unwrap();
    let d = fs.mkdir(1, b"dir", 0o755, C, t(1)).unwrap().ino;
    fs.create(d, b"old", 0o644, C, t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let f = fs.create(d, b"new", 0o644, C, t(2)).unwrap().ino;
    fs.write(f, 0, b"fresh", t(2)).unwrap();
    fs.fsync(f, false, t(2)).unwrap();
    let seed = codec::crc(&fs.superblock().uuid);
    let g = *fs.geometry();
    let mut img = fs.into_device().crash_durable_only();
    let hits = edit_nodes(
        &mut img,
        &g,
        seed,
        |b| node::footer_type(b) == Some(NodeType::Inode) && node::footer_ino(b) == f,
        |b| inode::set_name(b, b"old"),
    );
    assert!(hits >= 1);
    let ro = img.clone();
    let r = catch_unwind(AssertUnwindSafe(move || {
        Filesystem::mount(ro, &MountOptions { read_only: true, ..Default::default() }, t(100)).map(|_| ())
    }));
    let ro_ok = r.is_ok();
    let mut rep = img.clone();
    let r = catch_unwind(AssertUnwindSafe(move || {
        fsck::repair_with(&mut rep, t(100), &fsck::FsckOptions { verify_data: false }, &mut |_, _| {}).map(|_| ())
    }));
    let repair_ok = r.is_ok();
    assert!(repair_ok, "repair panicked");
    assert!(ro_ok, "read-only mount panicked");
}
