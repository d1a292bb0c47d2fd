//! fallocate reservations at the limits: the reproducers of the adversarial review of the
//! first implementation (each failed on it). A reservation must take all its writes —
//! beyond the inode's own addresses (tree nodes to create), after root filled the root
//! reserve, through an atomic commit, on a fragmented device, deep in the triple-indirect
//! region, after node ids ran out — and ZERO_RANGE on a full device frees, never refuses.
mod common;
use common::limits::*;
use common::CrashDevice;
use rollfs_core::*;

const A: u64 = 914; // ADDRS_PER_INODE: first file block addressed through a direct node

fn fresh() -> (Filesystem<CrashDevice>, Ino) {
    let mut fs = mount(mkfs(BLOCKS));
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    (fs, f)
}

/// Writes `n` blocks at block `first` in chunks of `chunk` blocks; returns the first error.
fn write_range(fs: &mut Filesystem<CrashDevice>, f: Ino, first: u64, n: u64, chunk: u64) -> Result<(), (u64, Error)> {
    let mut k = 0;
    while k < n {
        let m = chunk.min(n - k);
        let at = (first + k) * B as u64;
        fs.write(f, at, &pattern(k as u32, (m as usize) * B), t(5)).map_err(|e| (first + k, e))?;
        k += m;
    }
    Ok(())
}

/// (1) The largest reservation the device takes, beyond the inode's own addresses: every
/// write into it must succeed.
#[test]
fn max_reservation_beyond_inode_addresses_takes_all_its_writes() {
    with_prealloc_on_disk(|_| {
        for keep_size in [true, false] {
            let off = A * B as u64;
            let (mut lo, mut hi) = (1u64, fresh().0.statfs().unwrap().blocks_free + 1);
            while lo + 1 < hi {
                let mid = (lo + hi) / 2;
                let (mut fs, f) = fresh();
                if fs.fallocate(f, off, mid * B as u64, keep_size, t(2)).is_ok() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let (mut fs, f) = fresh();
            fs.fallocate(f, off, lo * B as u64, keep_size, t(2)).unwrap();
            let st = fs.statfs().unwrap();
            eprintln!("keep_size {keep_size}: reserved {lo} blocks, statfs free {}", st.blocks_free);
            let r = write_range(&mut fs, f, A, lo, 16);
            eprintln!("  writes into the reserved range: {r:?}; read_only {}", fs.is_read_only());
            assert!(r.is_ok(), "write into reserved range failed: {r:?}");
            fs.sync(t(6)).unwrap();
            unmount_clean(fs, t(7));
        }
    });
}

/// (1b) Reservation first, another file fills the device, then the writes.
#[test]
fn reservation_beyond_inode_addresses_after_the_device_fills() {
    with_prealloc_on_disk(|_| {
        let (mut fs, f) = fresh();
        let n = 2500u64;
        fs.fallocate(f, A * B as u64, n * B as u64, true, t(2)).unwrap();
        fill(&mut fs, 1, "filler", 0, t(3));
        fs.sync(t(3)).unwrap();
        eprintln!("free after fill: {}", fs.statfs().unwrap().blocks_free);
        let r = write_range(&mut fs, f, A, n, 16);
        eprintln!("writes into the reserved range: {r:?}");
        assert!(r.is_ok(), "write into reserved range failed: {r:?}");
        unmount_clean(fs, t(7));
    });
}

/// (2) An unprivileged user's reservation, then root fills its reserve: the user's writes
/// into the reservation must still succeed.
#[test]
fn unprivileged_reservation_survives_root_filling_the_reserve() {
    with_prealloc_on_disk(|_| {
        let reserve = 200u64;
        let opts = MountOptions { root_reserve_blocks: reserve, ..big_cache() };
        let mut fs = Filesystem::mount(CrashDevice::new(mkfs(BLOCKS)), &opts, t(0)).unwrap();
        fs.set_privileged(false);
        let f = fs.create(1, b"user", 0o644, C, t(1)).unwrap().ino;
        fs.fallocate(f, 0, 100 * B as u64, true, t(1)).unwrap();
        // Root fills the device, its reserve included.
        fs.set_privileged(true);
        fill(&mut fs, 1, "rootfill", 0, t(2));
        fs.sync(t(2)).unwrap();
        fs.set_privileged(false);
        eprintln!("statfs: {:?}", fs.statfs().unwrap());
        let r = write_range(&mut fs, f, 0, 100, 4);
        eprintln!("unprivileged writes into its reservation: {r:?}");
        assert!(r.is_ok(), "write into reserved range failed: {r:?}");
    });
}

/// (3) An atomic-write session into a reservation on a full device.
#[test]
fn atomic_commit_into_a_reservation_on_a_full_device() {
    with_prealloc_on_disk(|_| {
        for first in [0u64, A] {
            let (mut fs, f) = fresh();
            let n = 64u64;
            fs.fallocate(f, first * B as u64, n * B as u64, false, t(2)).unwrap();
            let g = fs.create(1, b"g", 0o644, C, t(3)).unwrap().ino;
            fill(&mut fs, 1, "filler", 0, t(3));
            fs.sync(t(3)).unwrap();
            // Take the last free blocks with a second file's reservation.
            let mut k = 32u64;
            while k > 0 && fs.fallocate(g, 0, k * B as u64, true, t(3)).is_err() {
                k -= 1;
            }
            eprintln!("  g reserved {k}, free {}", fs.statfs().unwrap().blocks_free);
            fs.start_atomic_write(f).unwrap();
            fs.write(f, first * B as u64, &pattern(4, n as usize * B), t(4)).unwrap();
            let r = fs.commit_atomic_write(f, t(5));
            eprintln!("first block {first}: atomic commit into the reservation: {r:?}");
            assert!(r.is_ok(), "atomic commit into reserved range failed: {r:?}");
        }
    });
}

/// (4) A device whose free space is scattered (every segment half valid): a reservation of
/// that space, then one big write into it; the physical room needs cleaning.
#[test]
fn big_write_into_a_reservation_on_a_fragmented_device() {
    with_prealloc_on_disk(|_| {
        let (mut fs, f) = fresh();
        let x = fs.create(1, b"x", 0o644, C, t(1)).unwrap().ino;
        let mut off = 0u64;
        loop {
            match fs.write(x, off, &vec![0xAB; 16 * B], t(1)) {
                Ok(_) => off += 16 * B as u64,
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            }
        }
        let xb = off / B as u64;
        fs.sync(t(2)).unwrap();
        for k in (0..xb).step_by(2) {
            fs.punch_hole(x, k * B as u64, B as u64, t(2)).unwrap();
        }
        fs.sync(t(2)).unwrap();
        let free = fs.statfs().unwrap().blocks_free;
        // The largest reservation that fits, at offset 0.
        let mut n = free;
        loop {
            match fs.fallocate(f, 0, n * B as u64, true, t(3)) {
                Ok(()) => break,
                Err(Error::NoSpace) => n -= 1,
                Err(e) => panic!("{e}"),
            }
        }
        eprintln!("x had {xb} blocks, free {free}, reserved {n}");
        let r = fs.write(f, 0, &pattern(7, n as usize * B), t(4));
        eprintln!("one write of {n} reserved blocks: {r:?}; stats gc_segments {}", fs.stats().gc_segments);
        assert!(r.is_ok());
        let r = write_range(&mut fs, f, 0, n, 1);
        eprintln!("rewrite block by block: {r:?}");
        fs.sync(t(5)).unwrap();
        unmount_clean(fs, t(6));
    });
}

/// (5) ZERO_RANGE over data on a full device, then writes into the zeroed range.
#[test]
fn zero_range_over_data_on_a_full_device_then_refill() {
    with_prealloc_on_disk(|_| {
        let (mut fs, f) = fresh();
        fs.write(f, 0, &pattern(1, 2000 * B), t(1)).unwrap();
        fill(&mut fs, 1, "filler", 0, t(2));
        fs.sync(t(2)).unwrap();
        for keep in [true, false] {
            let r = fs.zero_range(f, 100 * B as u64 + 5, 1800 * B as u64, keep, t(3));
            eprintln!("zero_range keep {keep}: {r:?}; free {}", fs.statfs().unwrap().blocks_free);
            r.unwrap();
            let r = write_range(&mut fs, f, 101, 1799, 16);
            eprintln!("refill: {r:?}");
            assert!(r.is_ok());
            fs.sync(t(4)).unwrap();
        }
        assert!(!fs.is_read_only());
        unmount_clean(fs, t(6));
    });
}

/// (6) Many one-block reservations in the triple-indirect region (a hole there needs three
/// new tree nodes; the allowance is 2), all written, then a checkpoint.
#[test]
fn many_one_block_reservations_in_the_triple_indirect_region() {
    with_prealloc_on_disk(|_| {
        let mut fs = mount(mkfs(BLOCKS));
        let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
        let far = (914 + 2 * 1016 + 2 * 1016 * 1016 + 5) * B as u64; // in slot 4
        let mut files = Vec::new();
        for i in 0..2000 {
            let f = match fs.create(d, format!("f{i}").as_bytes(), 0o644, C, t(1)) {
                Ok(a) => a.ino,
                Err(_) => break,
            };
            if fs.fallocate(f, far, B as u64, true, t(1)).is_err() {
                break;
            }
            files.push(f);
        }
        fs.sync(t(2)).unwrap();
        eprintln!("{} reservations, statfs {:?}", files.len(), fs.statfs().unwrap());
        let mut failed = None;
        for (i, &f) in files.iter().enumerate() {
            if let Err(e) = fs.write(f, far, &pattern(i as u32, B), t(3)) {
                failed = Some((i, e));
                break;
            }
        }
        eprintln!("writes: first failure {failed:?}; read_only {}", fs.is_read_only());
        let r = fs.sync(t(4));
        eprintln!("sync: {r:?}; read_only {}", fs.is_read_only());
        assert!(failed.is_none() && r.is_ok() && !fs.is_read_only());
        unmount_clean(fs, t(5));
    });
}

/// (7) A reservation in a region without tree nodes, then node ids run out (many empty
/// files): the write into the reservation needs a node id.
#[test]
fn reservation_then_node_ids_run_out() {
    with_prealloc_on_disk(|_| {
        let (mut fs, f) = fresh();
        fs.fallocate(f, A * B as u64, 64 * B as u64, true, t(2)).unwrap();
        let d = fs.mkdir(1, b"d", 0o755, C, t(2)).unwrap().ino;
        let mut n = 0;
        loop {
            match fs.create(d, format!("e{n}").as_bytes(), 0o644, C, t(2)) {
                Ok(_) => n += 1,
                Err(Error::NoSpace) => break,
                Err(e) => panic!("{e}"),
            }
        }
        eprintln!("{n} files; statfs {:?}", fs.statfs().unwrap());
        let r = write_range(&mut fs, f, A, 64, 16);
        eprintln!("write into the reservation: {r:?}");
        assert!(r.is_ok());
    });
}

// ------------------------------------------------ reservations kept on disk (format 3)

/// 512-byte units (`st_blocks`) of `n` blocks.
const SECTORS: u64 = (B / 512) as u64;

/// After the mount `fs` was put through (a remount, a crash), another file fills the
/// device; then every write into the reserved `n` blocks at `first` must still succeed,
/// the file's `st_blocks` (which has `other` blocks besides) counts them all along, and
/// fsck stays clean.
fn fill_then_write_the_reservation(mut fs: Filesystem<CrashDevice>, f: Ino, first: u64, n: u64, other: u64) {
    let blocks = fs.getattr(f).unwrap().blocks;
    assert_eq!(blocks, (n + other) * SECTORS, "reserved blocks in st_blocks after the remount");
    fill(&mut fs, 1, "filler", 0, t(20));
    fs.sync(t(20)).unwrap();
    let free = fs.statfs().unwrap().blocks_free;
    let r = write_range(&mut fs, f, first, n, 8);
    assert!(r.is_ok(), "a write into the reservation failed after the remount ({free} blocks free): {r:?}");
    assert_eq!(fs.getattr(f).unwrap().blocks, (n + other) * SECTORS, "st_blocks after the reservation was written");
    fs.sync(t(21)).unwrap();
    unmount_clean(fs, t(22));
}

/// Scenario "reservation, clean unmount, remount": the reserved holes are `NEW_ADDR` on
/// disk, counted by the checkpoint: after the remount they still count as used, and a
/// device filled by another file still takes every write into them.
#[test]
fn a_reservation_survives_a_clean_remount() {
    for (first, keep_size) in [(0u64, true), (A - 3, false), (A + 700, true)] {
        let (mut fs, f) = fresh_on_disk();
        let n = 40u64;
        let used_before = fs.statfs().unwrap().blocks_free;
        fs.fallocate(f, first * B as u64, n * B as u64, keep_size, t(2)).unwrap();
        assert!(used_before - fs.statfs().unwrap().blocks_free >= n);
        let mut dev = fs.unmount(t(3)).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean() && r.reserved_blocks == n, "fsck after unmount: {r:?}");
        let fs = Filesystem::mount(dev, &big_cache(), t(4)).unwrap();
        fill_then_write_the_reservation(fs, f, first, n, 0);
    }
}

/// Scenario "fallocate, fsync, crash": the fsync of a file that reserved holes since the
/// checkpoint is served by a checkpoint (reason `Reserved`; DESIGN.md *Format 3*), which
/// commits the `NEW_ADDR` pointers with their count. Without the fsync (a crash right
/// after the fallocate) nothing was promised, and the image is consistent either way.
#[test]
fn a_reservation_fsynced_survives_a_crash() {
    for fsync in [true, false] {
        let (mut fs, f) = fresh_on_disk();
        fs.write(f, 0, &pattern(1, 3 * B), t(2)).unwrap();
        let n = 24u64;
        fs.fallocate(f, 10 * B as u64, n * B as u64, true, t(3)).unwrap();
        if fsync {
            fs.fsync(f, false, t(4)).unwrap();
        }
        assert_eq!(fs.stats().fsync_cp_reserved, fsync as u64, "the fsync checkpoints for its reservation");
        let mut img = fs.into_device().crash_durable_only();
        let fs = Filesystem::mount(CrashDevice::new(img.clone()), &big_cache(), t(5)).unwrap();
        let mut dev = fs.unmount(t(6)).unwrap();
        let r = fsck::check(&mut dev).unwrap();
        assert!(r.is_clean(), "fsck after recovery: {:?}", r.problems);
        assert_eq!(r.reserved_blocks, if fsync { n } else { 0 }, "reserved blocks after the crash (fsync {fsync})");
        if fsync {
            img = dev.crash_durable_only();
            let fs = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(7)).unwrap();
            fill_then_write_the_reservation(fs, f, 10, n, 3);
        }
    }
}

/// Truncation, hole punches and unlink release reserved holes on disk, by the pointers they
/// remove: the checkpoint's count follows (fsck compares it with the tree's `NEW_ADDR`
/// pointers), and so does the capacity statfs reports.
#[test]
fn truncate_punch_and_unlink_release_reservations_on_disk() {
    let (mut fs, f) = fresh_on_disk();
    let free0 = fs.statfs().unwrap().blocks_free;
    fs.fallocate(f, 0, 2000 * B as u64, false, t(2)).unwrap();
    fs.write(f, 5 * B as u64, &pattern(2, 10 * B), t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.punch_hole(f, 100 * B as u64, 300 * B as u64, t(3)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(1500 * B as u64), ..Default::default() }, t(3)).unwrap();
    let mut dev = fs.unmount(t(4)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.reserved_blocks, 1500 - 300 - 10);
    let mut fs = Filesystem::mount(dev, &big_cache(), t(5)).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, (1500 - 300) * SECTORS);
    fs.unlink(1, b"f", t(6)).unwrap();
    fs.sync(t(6)).unwrap();
    // Everything back, and the inode's own block too.
    assert_eq!(fs.statfs().unwrap().blocks_free, free0 + 1, "capacity after the unlink");
    let mut dev = fs.unmount(t(7)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean() && r.reserved_blocks == 0, "{r:?}");
}

/// fsck notices a checkpoint whose reservation count disagrees with the tree, and repair
/// sets it from the tree.
#[test]
fn fsck_catches_a_wrong_reservation_count_and_repair_fixes_it() {
    let (mut fs, f) = fresh_on_disk();
    fs.fallocate(f, 0, 30 * B as u64, true, t(2)).unwrap();
    let mut dev = fs.unmount(t(3)).unwrap().crash_durable_only();
    // Both packs' headers: the count at offset 64, the header re-sealed.
    for pack in 0..2u64 {
        let sb = superblock::read_superblock(&mut dev).unwrap();
        let addr = sb.geometry.cp_pack_addr(pack as usize);
        let mut b = zero_block();
        dev.read(addr, &mut b).unwrap();
        if codec::get_u32(&b[..], 0) != 0x544B4350 {
            continue;
        }
        b[64..72].copy_from_slice(&7u64.to_le_bytes());
        codec::seal(&mut b);
        dev.write(addr, &b, WriteFlags::empty()).unwrap();
    }
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.problems.iter().any(|p| p.contains("counts 7 reserved blocks, 30 found")), "{:?}", r.problems);
    let out = fsck::repair(&mut dev, t(4)).unwrap();
    assert!(out.fixes.iter().any(|x| x.contains("reserved blocks")), "{:?}", out.fixes);
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean() && r.reserved_blocks == 30, "{r:?}");
}
