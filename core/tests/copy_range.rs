//! `copy_file_range` in the core (`Filesystem::copy_range`, issue 39): bytes as a read and
//! write would copy them, holes kept as holes, at most one chunk per call.
//!
//! - `a_sparse_copy_keeps_every_byte_and_every_hole`: a file with data in the inode's
//!   addresses, a direct node and under an indirect node, holes between (missing nodes
//!   too) and a partial last block, copied whole into an empty file (aligned: the same
//!   blocks mapped on the device, the same `st_blocks`) and at unaligned offsets over a
//!   file of other data (the bytes of a read-and-write copy; the destination's data where
//!   the source has holes zeroed and, for whole blocks, freed).
//! - `a_hole_past_the_destinations_end_grows_only_its_size`.
//! - `overlapping_ranges_in_one_file_are_einval` (judged after shortening to the end).
//! - `a_copy_into_an_atomic_session_is_staged`: reads show it, an abort drops it, a commit
//!   publishes it.
//! - `a_read_error_ends_the_copy_where_the_bad_block_starts`: the count of what was copied,
//!   the destination changed exactly there, then EIO.
//! - `one_call_copies_at_most_a_chunk`.

mod common;
use common::limits::{t, C};
use common::pointers::pointers;
use rollfs_core::layout::*;
use rollfs_core::*;
use std::collections::BTreeSet;

const B: u64 = BLOCK_SIZE as u64;
const A: u64 = ADDRS_PER_INODE as u64;
const P: u64 = ADDRS_PER_BLOCK as u64;
const IND: u64 = A + 2 * P;

fn fresh() -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [39; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(16384), &opts).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap()
}

fn block(tag: u8, i: u64) -> Vec<u8> {
    (0..B).map(|k| ((k as u8).wrapping_mul(13) ^ tag ^ (i as u8)) | 1).collect()
}

fn read_all(fs: &mut Filesystem<MemDevice>, ino: Ino) -> Vec<u8> {
    let size = fs.getattr(ino).unwrap().size;
    let mut buf = vec![0xAAu8; size as usize];
    assert_eq!(fs.read(ino, 0, &mut buf).unwrap(), size as usize);
    buf
}

/// What the driver does: calls until the count is copied or the source ends.
fn copy_all(fs: &mut Filesystem<MemDevice>, src: Ino, src_off: u64, dst: Ino, dst_off: u64, len: u64) -> Result<u64> {
    let mut done = 0;
    while done < len {
        match fs.copy_range(src, src_off + done, dst, dst_off + done, len - done, t(10))? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

/// The file blocks mapped on the device (after a sync), read from the node blocks.
fn mapped(fs: &mut Filesystem<MemDevice>, ino: Ino) -> BTreeSet<u64> {
    fs.sync(t(20)).unwrap();
    pointers(fs.device_mut(), ino).into_iter().map(|(i, _, _)| i).collect()
}

#[test]
fn a_sparse_copy_keeps_every_byte_and_every_hole() {
    let mut fs = fresh();
    let src = fs.create(1, b"src", 0o644, C, t(1)).unwrap().ino;
    let blocks = [0, 1, 2, 40, A - 1, A, A + 3, IND + 2 * P + 1, IND + 2 * P + 2];
    for i in blocks {
        fs.write(src, i * B, &block(1, i), t(2)).unwrap();
    }
    let last = IND + 3 * P;
    fs.write(src, last * B, &[7u8; 1234], t(2)).unwrap();
    let size = last * B + 1234;
    let want = read_all(&mut fs, src);

    // Aligned, into an empty file: the same bytes, the same blocks, no block for a hole.
    let dst = fs.create(1, b"dst", 0o644, C, t(3)).unwrap().ino;
    assert_eq!(copy_all(&mut fs, src, 0, dst, 0, u64::MAX).unwrap(), size);
    assert_eq!(read_all(&mut fs, dst), want);
    assert_eq!(mapped(&mut fs, dst), mapped(&mut fs, src), "the copy's blocks are the source's");
    assert_eq!(fs.getattr(dst).unwrap().blocks, fs.getattr(src).unwrap().blocks);

    // Unaligned, over a file of other data: what a read and a write would have made.
    let over = fs.create(1, b"over", 0o644, C, t(4)).unwrap().ino;
    let old: Vec<u8> = (0..40 * B).map(|k| (k % 251) as u8 + 1).collect();
    fs.write(over, 0, &old, t(4)).unwrap();
    let (src_off, dst_off, len) = (3 * B + 100, 5, 50 * B);
    assert_eq!(copy_all(&mut fs, src, src_off, over, dst_off, len).unwrap(), len);
    let mut model = old.clone();
    model.resize((dst_off + len) as usize, 0);
    model[dst_off as usize..(dst_off + len) as usize]
        .copy_from_slice(&want[src_off as usize..(src_off + len) as usize]);
    assert_eq!(read_all(&mut fs, over), model);
    // The source's holes (its blocks 3..40 and 41..54) land on the destination's bytes
    // 5..37 * B - 95 and 38 * B - 95..50 * B + 5: the whole blocks inside them are freed
    // (38 and 39 were the destination's), the partial ones zeroed where they overlap.
    let m = mapped(&mut fs, over);
    for i in (1..36).chain(38..50) {
        assert!(!m.contains(&i), "block {i} of the destination under the source's hole is mapped");
    }
    assert!(m.contains(&0) && m.contains(&36) && m.contains(&37), "the data around the holes stays: {m:?}");
    assert_eq!(fs.getattr(over).unwrap().size, 50 * B + 5);
    let mut dev = fs.unmount(t(30)).unwrap();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
}

#[test]
fn a_hole_past_the_destinations_end_grows_only_its_size() {
    let mut fs = fresh();
    let src = fs.create(1, b"src", 0o644, C, t(1)).unwrap().ino;
    fs.write(src, 0, &block(1, 0), t(2)).unwrap();
    fs.setattr(src, &SetAttr { size: Some(600 * B), ..Default::default() }, t(2)).unwrap();
    let dst = fs.create(1, b"dst", 0o644, C, t(3)).unwrap().ino;
    assert_eq!(copy_all(&mut fs, src, 0, dst, 10 * B, 600 * B).unwrap(), 600 * B);
    let a = fs.getattr(dst).unwrap();
    assert_eq!((a.size, a.blocks), (610 * B, B / 512), "one block of data, the rest a hole");
    assert_eq!(mapped(&mut fs, dst), [10].into_iter().collect());
    assert_eq!(&read_all(&mut fs, dst)[10 * B as usize..11 * B as usize], &block(1, 0)[..]);
}

#[test]
fn overlapping_ranges_in_one_file_are_einval() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &[5u8; 10 * B as usize], t(2)).unwrap();
    let inval = Err(Error::Invalid("copy between overlapping ranges of one file"));
    assert_eq!(fs.copy_range(f, 0, f, 4 * B, 5 * B, t(3)), inval);
    assert_eq!(fs.copy_range(f, 4 * B, f, 0, 5 * B, t(3)), inval);
    // Shortened to the end first: 8..10 against 10..12 do not overlap.
    assert_eq!(fs.copy_range(f, 8 * B, f, 10 * B, 4 * B, t(3)), Ok(2 * B));
    assert_eq!(fs.copy_range(f, 0, f, 5 * B, 5 * B, t(3)), Ok(5 * B));
    assert_eq!(fs.getattr(f).unwrap().size, 12 * B);
    // At or past the source's end nothing is copied; a directory is EISDIR.
    assert_eq!(fs.copy_range(f, 12 * B, f, 0, B, t(3)), Ok(0));
    assert_eq!(fs.copy_range(1, 0, f, 0, B, t(3)), Err(Error::IsDir));
}

#[test]
fn a_copy_into_an_atomic_session_is_staged() {
    let mut fs = fresh();
    let src = fs.create(1, b"src", 0o644, C, t(1)).unwrap().ino;
    // Source: data, a hole, data; then a hole to its end.
    fs.write(src, 0, &block(1, 0), t(2)).unwrap();
    fs.write(src, 2 * B, &block(1, 2), t(2)).unwrap();
    fs.setattr(src, &SetAttr { size: Some(6 * B), ..Default::default() }, t(2)).unwrap();
    let dst = fs.create(1, b"dst", 0o644, C, t(1)).unwrap().ino;
    let old = [9u8; 2 * B as usize];
    fs.write(dst, 0, &old, t(2)).unwrap();
    fs.sync(t(3)).unwrap();
    let want = read_all(&mut fs, src);
    for commit in [false, true] {
        fs.start_atomic_write(dst).unwrap();
        assert_eq!(copy_all(&mut fs, src, 0, dst, 0, 6 * B).unwrap(), 6 * B);
        assert_eq!(read_all(&mut fs, dst), want, "reads see the staged copy (commit {commit})");
        if commit {
            fs.commit_atomic_write(dst, t(4)).unwrap();
            assert_eq!(read_all(&mut fs, dst), want);
        } else {
            fs.abort_atomic_write(dst).unwrap();
            assert_eq!(read_all(&mut fs, dst), old, "the abort drops the copy");
        }
    }
    let mut dev = fs.unmount(t(30)).unwrap();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
}

#[test]
fn a_read_error_ends_the_copy_where_the_bad_block_starts() {
    let mut fs = fresh();
    let src = fs.create(1, b"src", 0o644, C, t(1)).unwrap().ino;
    for i in 0..8 {
        fs.write(src, i * B, &block(2, i), t(2)).unwrap();
    }
    let dst = fs.create(1, b"dst", 0o644, C, t(1)).unwrap().ino;
    fs.write(dst, 0, &[3u8; 8 * B as usize], t(2)).unwrap();
    fs.sync(t(3)).unwrap();
    let bad = pointers(fs.device_mut(), src).into_iter().find(|p| p.0 == 5).unwrap().1;
    fs.device_mut().fail_read_block = Some(u64::from(bad));
    fs.drop_clean_caches();
    assert_eq!(fs.copy_range(src, 100, dst, 100, 8 * B, t(4)), Ok(5 * B - 100));
    let mut want = vec![3u8; 8 * B as usize];
    for i in 0..5 {
        want[(i * B) as usize..((i + 1) * B) as usize].copy_from_slice(&block(2, i));
    }
    want[..100].fill(3);
    assert_eq!(read_all(&mut fs, dst), want, "the destination changed exactly where the count says");
    assert_eq!(fs.copy_range(src, 5 * B, dst, 5 * B, 3 * B, t(4)).map_err(|e| e.errno()), Err(5));
    assert!(!fs.is_shut_down(), "a failed read changes nothing");
    fs.device_mut().fail_read_block = None;
    let mut dev = fs.unmount(t(30)).unwrap();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
}

#[test]
fn one_call_copies_at_most_a_chunk() {
    let mut fs = fresh();
    let src = fs.create(1, b"src", 0o644, C, t(1)).unwrap().ino;
    fs.write(src, 0, &vec![4u8; 3 << 20], t(2)).unwrap();
    let dst = fs.create(1, b"dst", 0o644, C, t(1)).unwrap().ino;
    assert_eq!(fs.copy_range(src, 0, dst, 0, 3 << 20, t(3)), Ok(COPY_CHUNK_BYTES_MAX));
    assert_eq!(fs.getattr(dst).unwrap().size, COPY_CHUNK_BYTES_MAX);
}
