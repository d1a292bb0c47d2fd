//! `lseek(SEEK_DATA | SEEK_HOLE)` in the core (`Filesystem::seek_step`, issue 39): where
//! data and holes are, judged against a model of the file's blocks.
//!
//! - `seek_matches_the_model_at_every_level_of_the_tree`: a sparse file with data in the
//!   inode's addresses, a direct node, the children of an indirect node (some missing) and
//!   a double-indirect subtree (missing children at both levels), empty direct nodes that
//!   fallocate made (reserved holes are holes), a punched block, and a partial last block;
//!   seeks from around every data block and node boundary, with the blocks dirty in the
//!   cache, on the device, on the device with a cold cache, and mixed; every answer also
//!   by steps of a one-node budget (the driver's resumptions), and no hole reported holds
//!   a non-zero byte.
//! - `staged_blocks_are_data_as_reads_see_them`: an atomic session's staged blocks (in
//!   memory, and spilled to its inode) are data, its size is the end; an abort restores
//!   the file's answers.
//! - `past_the_end_and_empty_files_are_enxio`.
//! - `a_read_error_on_a_cold_cache_is_an_error_not_an_answer`: every node read a seek makes
//!   on a cold cache fails in turn: each failure is EIO, nothing shuts down, and the retry
//!   answers as the model.
//! - `reservations_count_in_st_blocks`: a KEEP_SIZE reservation shows in `Attr::blocks`
//!   (st_blocks), stays counted once filled, and goes with a punch or a remount.

mod common;
use common::limits::{big_cache, t, C};
use rollfs_core::layout::*;
use rollfs_core::*;
use std::collections::BTreeSet;

const B: u64 = BLOCK_SIZE as u64;
const A: u64 = ADDRS_PER_INODE as u64;
const P: u64 = ADDRS_PER_BLOCK as u64;
const N: u64 = NIDS_PER_BLOCK as u64;
/// First block of the second indirect slot, and of the first double-indirect slot.
const IND: u64 = A + 2 * P;
const DD: u64 = A + 2 * P + 2 * N * P;

fn mkfs(blocks: u64) -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [39; 16], ..Default::default() };
    Filesystem::format(MemDevice::new(blocks), &opts).unwrap()
}

/// The model's answer: `data` are the blocks that are data, `size` the file's size.
fn model(data: &BTreeSet<u64>, size: u64, off: u64, whence: SeekWhence) -> Option<u64> {
    if off >= size {
        return None;
    }
    let end = size.div_ceil(B);
    match whence {
        SeekWhence::Data => data.range(off / B..end).next().map(|&i| (i * B).max(off)),
        SeekWhence::Hole => {
            let mut i = off / B;
            while i < end && data.contains(&i) {
                i += 1;
            }
            Some((i * B).clamp(off, size))
        }
    }
}

/// Offsets around every data block and node boundary of the file, and its end.
fn probes(data: &BTreeSet<u64>, size: u64) -> Vec<u64> {
    let mut blocks: BTreeSet<u64> = data.iter().flat_map(|&i| [i, i + 1]).collect();
    blocks.extend([
        0,
        A,
        A + P,
        IND,
        IND + P,
        IND + 3 * P,
        IND + 4 * P,
        IND + N * P,
        DD,
        DD + N * P,
        DD + N * P + 2 * P,
    ]);
    let mut out: BTreeSet<u64> = blocks.iter().flat_map(|&b| [(b * B).saturating_sub(1), b * B, b * B + 1]).collect();
    out.extend([size.saturating_sub(1), size, size + 1, size + B]);
    out.into_iter().collect()
}

/// `seek_step` with a one-node budget, resumed to the end; counts the resumptions.
fn seek_by_steps<D: BlockDevice>(
    fs: &mut Filesystem<D>,
    ino: Ino,
    off: u64,
    whence: SeekWhence,
    resumed: &mut u64,
) -> Option<u64> {
    let mut at = off;
    for _ in 0..1_000_000 {
        match fs.seek_step(ino, at, whence, 1).unwrap() {
            SeekStep::Found(o) => return Some(o),
            SeekStep::NotFound => return None,
            SeekStep::Resume(next) => {
                assert!(next > at, "a resumption at {next} does not pass {at}");
                *resumed += 1;
                at = next;
            }
        }
    }
    panic!("seek from {off} did not end");
}

/// Every probe answers as the model, whole and by steps, and no hole reported holds a
/// non-zero byte. Returns the resumptions the steps took.
#[track_caller]
fn check<D: BlockDevice>(fs: &mut Filesystem<D>, ino: Ino, data: &BTreeSet<u64>, size: u64, what: &str) -> u64 {
    assert_eq!(fs.getattr(ino).unwrap().size, size, "{what}: size");
    let mut resumed = 0;
    for off in probes(data, size) {
        for whence in [SeekWhence::Data, SeekWhence::Hole] {
            let want = model(data, size, off, whence);
            let got = fs.seek_data_hole(ino, off, whence).unwrap();
            assert_eq!(got, want, "{what}: {whence:?} from {off} (block {})", off / B);
            assert_eq!(
                seek_by_steps(fs, ino, off, whence, &mut resumed),
                want,
                "{what}: {whence:?} from {off} by steps"
            );
        }
        // What SEEK_DATA skips reads as zeros (a hole never hides bytes): its first and
        // last 8 blocks (the holes here span gigabytes).
        if off < size {
            let to = model(data, size, off, SeekWhence::Data).unwrap_or(size);
            let edge = (to - off).min(8 * B);
            for at in [off, to - edge] {
                let mut buf = vec![0xAAu8; edge as usize];
                assert_eq!(fs.read(ino, at, &mut buf).unwrap(), edge as usize);
                assert!(buf.iter().all(|&b| b == 0), "{what}: the hole at {at}..{} holds data", at + edge);
            }
        }
    }
    resumed
}

fn block(tag: u8, i: u64) -> Vec<u8> {
    (0..B).map(|k| (k as u8).wrapping_mul(7) ^ tag ^ (i as u8) | 1).collect()
}

#[test]
fn seek_matches_the_model_at_every_level_of_the_tree() {
    let mut fs = Filesystem::mount(mkfs(16384), &big_cache(), t(0)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    // Data in the inode's addresses (first and last), direct node 0, the children 3 and
    // N - 1 of the first indirect node (0..3 missing), and in the first double-indirect
    // subtree the child 2 of its child 1 (child 0 missing at both levels). Direct node 1
    // and the second indirect slot are missing.
    let last = DD + N * P + 2 * P + 5;
    let mut data: BTreeSet<u64> =
        [0, 1, 100, A - 1, A, A + 10, IND + 3 * P + 7, IND + 3 * P + P - 1, IND + N * P - 1, DD + N * P + 2 * P, last]
            .into_iter()
            .collect();
    for &i in &data {
        if i != last {
            fs.write(f, i * B, &block(1, i), t(2)).unwrap();
        }
    }
    // A partial last block: the file ends 100 bytes into it.
    fs.write(f, last * B, &[9u8; 100], t(2)).unwrap();
    let size = last * B + 100;
    // Empty direct nodes that fallocate makes: direct node 1, and direct node 5 of the
    // first indirect node (reserved holes are holes).
    fs.fallocate(f, (A + P) * B, 20 * B, true, t(3)).unwrap();
    fs.fallocate(f, (IND + 5 * P + 1) * B, 3 * B, true, t(3)).unwrap();
    let r = check(&mut fs, f, &data, size, "dirty");
    eprintln!("dirty: {r} resumptions");
    assert!(r > 0, "no seek needed more than one node: the budget is not exercised");

    fs.sync(t(4)).unwrap();
    check(&mut fs, f, &data, size, "on the device");
    // A punched block leaves its direct node with a hole in it.
    fs.punch_hole(f, (IND + 3 * P + 7) * B, B, t(5)).unwrap();
    data.remove(&(IND + 3 * P + 7));
    // Mixed: some blocks rewritten (cached over a mapped pointer), some new ones dirty.
    for i in [1, A + 10, DD + N * P + 2 * P] {
        fs.write(f, i * B, &block(2, i), t(6)).unwrap();
    }
    for i in [2, A + 11, IND + N * P - 2] {
        fs.write(f, i * B, &block(3, i), t(6)).unwrap();
        data.insert(i);
    }
    check(&mut fs, f, &data, size, "mixed");
    fs.sync(t(7)).unwrap();
    fs.drop_clean_caches();
    check(&mut fs, f, &data, size, "cold");
    let dev = fs.unmount(t(8)).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(9)).unwrap();
    check(&mut fs, f, &data, size, "remounted");
}

#[test]
fn staged_blocks_are_data_as_reads_see_them() {
    // Sessions spill past 8 staged blocks here (half the dirty bound, in blocks, over two:
    // one owner's share).
    let opts = MountOptions { dirty_bytes_max: 32 * B, ..MountOptions::default() };
    for spill in [false, true] {
        let what = if spill { "spilled session" } else { "session in memory" };
        let mut fs = Filesystem::mount(mkfs(16384), &opts, t(0)).unwrap();
        let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
        let mut file: BTreeSet<u64> = [0, 1, 5, A, A + 3].into_iter().collect();
        for &i in &file {
            fs.write(f, i * B, &block(1, i), t(2)).unwrap();
        }
        let size = (A + 4) * B;
        fs.sync(t(3)).unwrap();
        fs.start_atomic_write(f).unwrap();
        // Staged into holes, over data, and past the end (the session's size grows).
        let mut staged: Vec<u64> = vec![2, 5, A + 1, A + 9];
        if spill {
            staged.extend(IND..IND + 12);
        }
        for &i in &staged {
            fs.write(f, i * B, &block(4, i), t(4)).unwrap();
        }
        let staged_size = staged.iter().map(|&i| (i + 1) * B).max().unwrap().max(size);
        assert_eq!(fs.stats().atomic_spills, u64::from(spill), "{what}");
        let seen: BTreeSet<u64> = file.union(&staged.iter().copied().collect()).copied().collect();
        check(&mut fs, f, &seen, staged_size, what);
        fs.abort_atomic_write(f).unwrap();
        check(&mut fs, f, &file, size, "after the abort");
        // A committed session's blocks are the file's.
        fs.start_atomic_write(f).unwrap();
        fs.write(f, 3 * B, &block(5, 3), t(5)).unwrap();
        fs.commit_atomic_write(f, t(6)).unwrap();
        file.insert(3);
        check(&mut fs, f, &file, size, "after a commit");
    }
}

#[test]
fn past_the_end_and_empty_files_are_enxio() {
    let mut fs = Filesystem::mount(mkfs(4096), &MountOptions::default(), t(0)).unwrap();
    let e = fs.create(1, b"empty", 0o644, C, t(1)).unwrap().ino;
    for whence in [SeekWhence::Data, SeekWhence::Hole] {
        assert_eq!(fs.seek_data_hole(e, 0, whence).unwrap(), None);
    }
    // A file that is all hole: no data; the hole at 0; the end is ENXIO for both.
    let h = fs.create(1, b"hole", 0o644, C, t(1)).unwrap().ino;
    fs.setattr(h, &SetAttr { size: Some(10 * B + 5), ..Default::default() }, t(2)).unwrap();
    assert_eq!(fs.seek_data_hole(h, 0, SeekWhence::Data).unwrap(), None);
    assert_eq!(fs.seek_data_hole(h, 7, SeekWhence::Hole).unwrap(), Some(7));
    assert_eq!(fs.seek_data_hole(h, 10 * B + 5, SeekWhence::Hole).unwrap(), None);
    // All data: the only hole is the end, even inside the last, partial block.
    let d = fs.create(1, b"data", 0o644, C, t(1)).unwrap().ino;
    fs.write(d, 0, &[1u8; 3 * B as usize + 10], t(2)).unwrap();
    assert_eq!(fs.seek_data_hole(d, 0, SeekWhence::Hole).unwrap(), Some(3 * B + 10));
    assert_eq!(fs.seek_data_hole(d, 3 * B + 9, SeekWhence::Data).unwrap(), Some(3 * B + 9));
    assert_eq!(fs.seek_data_hole(d, 3 * B + 10, SeekWhence::Data).unwrap(), None);
    assert_eq!(fs.seek_data_hole(d, u64::MAX, SeekWhence::Hole).unwrap(), None);
    // A KEEP_SIZE reservation past the end changes nothing; a directory is EISDIR.
    fs.fallocate(d, 0, 100 * B, true, t(3)).unwrap();
    assert_eq!(fs.seek_data_hole(d, 3 * B + 10, SeekWhence::Hole).unwrap(), None);
    assert_eq!(fs.seek_data_hole(1, 0, SeekWhence::Data), Err(Error::IsDir));
}

#[test]
fn a_read_error_on_a_cold_cache_is_an_error_not_an_answer() {
    let mut fs = Filesystem::mount(mkfs(16384), &MountOptions::default(), t(0)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let data: BTreeSet<u64> = [3, A + 1, IND + 2 * P + 4, IND + 2 * P + 5, DD + N * P + 7].into_iter().collect();
    for &i in &data {
        fs.write(f, i * B, &block(1, i), t(2)).unwrap();
    }
    let size = (DD + N * P + 8) * B;
    let image = fs.unmount(t(3)).unwrap();
    // Seeks whose walks read the inode, a direct node, indirect nodes, and a
    // double-indirect subtree.
    let seeks = [
        (4 * B, SeekWhence::Data),
        ((IND + 2 * P + 4) * B, SeekWhence::Hole),
        ((IND + 2 * P + 6) * B, SeekWhence::Data),
        (0, SeekWhence::Hole),
    ];
    for (off, whence) in seeks {
        let want = model(&data, size, off, whence);
        let mut reads = 0;
        for k in 0..1000u64 {
            let mut fs = Filesystem::mount(image.clone(), &MountOptions::default(), t(4)).unwrap();
            fs.drop_clean_caches();
            let base = fs.device().counters.reads;
            fs.device_mut().fail_nth_read = Some(base + k);
            let r = fs.seek_data_hole(f, off, whence);
            let fired = fs.device().fail_nth_read.is_none();
            fs.device_mut().fail_nth_read = None;
            if !fired {
                assert_eq!(r.unwrap(), want, "{whence:?} from {off}");
                reads = k;
                break;
            }
            let e = r.expect_err("a failed node read must fail the seek");
            assert_eq!(e.errno(), 5, "{whence:?} from {off}, read {k}: {e}");
            assert!(!fs.is_shut_down(), "a seek changes nothing, so nothing shuts down");
            assert_eq!(fs.seek_data_hole(f, off, whence).unwrap(), want, "the retry after read {k}");
        }
        eprintln!("{whence:?} from block {}: {reads} reads failed in turn", off / B);
        assert!(reads > 0, "{whence:?} from {off}: the seek read nothing on a cold cache");
    }
}

#[test]
fn reservations_count_in_st_blocks() {
    let mut fs = Filesystem::mount(mkfs(8192), &MountOptions::default(), t(0)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    let sectors = B / 512;
    fs.fallocate(f, 0, 64 * B, true, t(2)).unwrap();
    let a = fs.getattr(f).unwrap();
    assert_eq!((a.size, a.blocks), (0, 64 * sectors), "a KEEP_SIZE reservation is the file's");
    // Filling a reserved hole spends the reservation on a block: the count stays.
    fs.write(f, 0, &block(1, 0), t(3)).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, 64 * sectors);
    // A write past the reservation adds its block.
    fs.write(f, 70 * B, &block(1, 70), t(3)).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, 65 * sectors);
    // A punch releases what it covers.
    fs.punch_hole(f, 0, 10 * B, t(4)).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, 55 * sectors);
    // Reservations live for the mount: after a remount only the written block counts.
    let dev = fs.unmount(t(5)).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(6)).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, sectors);
}
