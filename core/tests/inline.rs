//! Inline data (`FEATURE_INCOMPAT_INLINE`, issue 38; core/src/inline.rs): a regular file
//! of at most 3,656 bytes keeps them in its inode and takes no data block. Scenarios: small
//! files written, read, remounted and crashed (fsync'd by a batch that is the inode
//! alone); conversion at the limit (one byte past it), by a size change past it, by
//! fallocate, punch, zero range and an atomic session, each keeping the bytes; a shrink
//! zeroing what it drops (invariant 6); SEEK_DATA/SEEK_HOLE and copy_file_range of inline
//! files; a conversion fsync'd then crashed; fsck reporting damaged inline inodes; and images
//! without the feature keeping a block per file.
mod common;
use common::limits::*;
use common::pointers::inode_addr;
use common::CrashDevice;
use rollfs_core::node::inode;
use rollfs_core::*;

const MAX: usize = 3656; // INLINE_DATA_MAX
const UUID: [u8; 16] = [38; 16];

fn fresh(inline_data: bool) -> (Filesystem<CrashDevice>, Ino) {
    fresh_inline(inline_data, UUID)
}

/// Crash (durable writes only), recovery mount; fsck of the result after an unmount is
/// clean. Returns the recovered mount.
fn crash(fs: Filesystem<CrashDevice>) -> Filesystem<CrashDevice> {
    let img = fs.into_device().crash_durable_only();
    let fs = Filesystem::mount(CrashDevice::new(img.clone()), &big_cache(), t(50)).unwrap();
    let mut dev = Filesystem::mount(CrashDevice::new(img), &big_cache(), t(50)).unwrap().unmount(t(51)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    fs
}

fn remount(fs: Filesystem<CrashDevice>) -> Filesystem<CrashDevice> {
    let dev = fs.unmount(t(40)).unwrap();
    let img = dev.crash_durable_only();
    let mut check = img.clone();
    let r = fsck::check(&mut check).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    Filesystem::mount(CrashDevice::new(img), &big_cache(), t(41)).unwrap()
}

#[test]
fn small_files_take_no_data_block_and_survive_a_remount() {
    let (mut fs, _) = fresh(true);
    let before = fs.stats().data_blocks_written;
    let mut files = Vec::new();
    for i in 0..50u32 {
        let name = format!("s{i}");
        let f = fs.create(1, name.as_bytes(), 0o644, C, t(2)).unwrap().ino;
        let body = pattern(i, 1024 + i as usize * 50);
        fs.write(f, 0, &body, t(2)).unwrap();
        files.push((name, body));
    }
    fs.sync(t(3)).unwrap();
    // The root directory's dentry block is the one data block the sync writes (it names
    // the 50 files); without inline data, 50 more.
    assert_eq!(fs.stats().data_blocks_written - before, 1, "small files wrote data blocks");
    assert_eq!(fs.stats().inline_conversions, 0);
    let f = lookup_path(&mut fs, "s3").unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, (1024 + 150u64).div_ceil(512), "st_blocks of an inline file");
    let mut fs = remount(fs);
    for (name, body) in &files {
        let f = lookup_path(&mut fs, name).unwrap();
        assert_eq!(&read_all(&mut fs, f), body, "{name}");
    }
}

#[test]
fn a_write_past_the_limit_converts_and_keeps_every_byte() {
    let (mut fs, f) = fresh(true);
    let body = pattern(7, MAX);
    fs.write(f, 0, &body, t(2)).unwrap();
    assert_eq!(fs.stats().inline_conversions, 0, "exactly the limit stays inline");
    // Overwrite in the middle, still inline; then one byte past the limit.
    fs.write(f, 100, b"middle", t(3)).unwrap();
    fs.write(f, MAX as u64, b"!", t(4)).unwrap();
    assert_eq!(fs.stats().inline_conversions, 1);
    let mut want = body.clone();
    want[100..106].copy_from_slice(b"middle");
    want.push(b'!');
    assert_eq!(read_all(&mut fs, f), want);
    assert_eq!(fs.getattr(f).unwrap().blocks, 8, "one block after the conversion");
    let mut fs = remount(fs);
    assert_eq!(read_all(&mut fs, f), want);
    // An ordinary file stays ordinary when it shrinks (no conversion back).
    fs.setattr(f, &SetAttr { size: Some(10), ..Default::default() }, t(5)).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, 8);
    assert_eq!(read_all(&mut fs, f), want[..10].to_vec());
}

#[test]
fn a_shrink_zeroes_what_it_drops_and_an_extension_reads_zeros() {
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, &[b'x'; 1000], t(2)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(10), ..Default::default() }, t(3)).unwrap();
    fs.setattr(f, &SetAttr { size: Some(2000), ..Default::default() }, t(4)).unwrap();
    let mut want = vec![b'x'; 10];
    want.resize(2000, 0);
    assert_eq!(read_all(&mut fs, f), want);
    // A write past the end leaves a gap of zeros, still inline.
    fs.write(f, 3000, b"end", t(5)).unwrap();
    want.resize(3000, 0);
    want.extend_from_slice(b"end");
    assert_eq!(fs.stats().inline_conversions, 0);
    let mut fs = remount(fs);
    assert_eq!(read_all(&mut fs, f), want);
    // A size past the limit converts: the bytes stay, the rest reads as zeros.
    fs.setattr(f, &SetAttr { size: Some(1 << 20), ..Default::default() }, t(6)).unwrap();
    assert_eq!(fs.stats().inline_conversions, 1);
    want.resize(1 << 20, 0);
    assert_eq!(read_all(&mut fs, f), want);
}

#[test]
fn an_inline_file_fsynced_survives_a_crash_by_its_inode_alone() {
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, b"checkpointed", t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    let g = fs.create(1, b"g", 0o644, C, t(3)).unwrap().ino;
    fs.write(f, 0, b"fsync'd over the checkpoint", t(3)).unwrap();
    fs.write(g, 0, &pattern(3, 3000), t(3)).unwrap();
    let before = (fs.stats().checkpoints, fs.stats().data_blocks_written);
    fs.fsync(f, false, t(4)).unwrap();
    fs.fsync(g, true, t(4)).unwrap();
    assert_eq!((fs.stats().checkpoints, fs.stats().data_blocks_written), before, "batches of inodes alone");
    let mut fs = crash(fs);
    assert!(fs.stats().recovered_batches >= 2);
    assert_eq!(read_all(&mut fs, f), b"fsync'd over the checkpoint".to_vec());
    let g = lookup_path(&mut fs, "g").unwrap();
    assert_eq!(read_all(&mut fs, g), pattern(3, 3000));
    // fdatasync after only the bytes changed (same size) persists them too.
    fs.write(f, 0, b"F", t(5)).unwrap();
    fs.fsync(f, true, t(6)).unwrap();
    let mut fs = crash(fs);
    assert_eq!(read_all(&mut fs, f), b"Fsync'd over the checkpoint".to_vec());
}

#[test]
fn a_conversion_fsynced_survives_a_crash() {
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, &pattern(1, 2000), t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    // Converted after the checkpoint (the checkpoint's inode is inline), fsync'd by a batch.
    fs.write(f, 2000, &pattern(2, 9000), t(3)).unwrap();
    fs.fsync(f, false, t(4)).unwrap();
    let mut want = pattern(1, 2000);
    want.extend(pattern(2, 9000));
    let mut fs = crash(fs);
    assert_eq!(read_all(&mut fs, f), want);
    // Not fsync'd: the crash shows the inline state of the checkpoint.
    let g = fs.create(1, b"g", 0o644, C, t(5)).unwrap().ino;
    fs.write(g, 0, b"small", t(5)).unwrap();
    fs.sync(t(5)).unwrap();
    fs.write(g, 0, &pattern(4, 20000), t(6)).unwrap();
    let mut fs = crash(fs);
    let g = lookup_path(&mut fs, "g").unwrap();
    assert_eq!(read_all(&mut fs, g), b"small".to_vec());
}

#[test]
fn fallocate_punch_zero_range_and_atomic_sessions_convert_and_keep_the_bytes() {
    let (mut fs, f) = fresh(true);
    let body = pattern(9, 3000);
    let mut conversions = 0;
    let mut check = |fs: &mut Filesystem<CrashDevice>, ino: Ino, want: &[u8], converts: bool| {
        conversions += converts as u64;
        assert_eq!(fs.stats().inline_conversions, conversions);
        assert_eq!(read_all(fs, ino), want.to_vec());
    };
    fs.write(f, 0, &body, t(2)).unwrap();
    fs.fallocate(f, 0, 64 * 1024, true, t(3)).unwrap();
    check(&mut fs, f, &body, true);

    let g = fs.create(1, b"g", 0o644, C, t(2)).unwrap().ino;
    fs.write(g, 0, &body, t(2)).unwrap();
    fs.punch_hole(g, 100, 50, t(3)).unwrap();
    let mut want = body.clone();
    want[100..150].fill(0);
    check(&mut fs, g, &want, false);

    let h = fs.create(1, b"h", 0o644, C, t(2)).unwrap().ino;
    fs.write(h, 0, &body, t(2)).unwrap();
    fs.zero_range(h, 2500, 1000, false, t(3)).unwrap();
    let mut want = body.clone();
    want[2500..].fill(0);
    want.resize(3500, 0);
    check(&mut fs, h, &want, false);

    let a = fs.create(1, b"a", 0o644, C, t(2)).unwrap().ino;
    fs.write(a, 0, &body, t(2)).unwrap();
    fs.start_atomic_write(a).unwrap();
    fs.write(a, 10, b"staged", t(3)).unwrap();
    let mut want = body.clone();
    want[10..16].copy_from_slice(b"staged");
    fs.commit_atomic_write(a, t(4)).unwrap();
    check(&mut fs, a, &want, true);
    let mut fs = remount(fs);
    for (name, len) in [("f", 3000), ("g", 3000), ("h", 3500), ("a", 3000)] {
        let i = lookup_path(&mut fs, name).unwrap();
        assert_eq!(read_all(&mut fs, i).len(), len, "{name}");
    }
}

#[test]
fn seek_and_copy_range_see_inline_bytes() {
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, &pattern(5, 1500), t(2)).unwrap();
    assert_eq!(fs.seek_data_hole(f, 0, SeekWhence::Data).unwrap(), Some(0));
    assert_eq!(fs.seek_data_hole(f, 700, SeekWhence::Data).unwrap(), Some(700));
    assert_eq!(fs.seek_data_hole(f, 0, SeekWhence::Hole).unwrap(), Some(1500));
    assert_eq!(fs.seek_data_hole(f, 1500, SeekWhence::Data).unwrap(), None);
    let d = fs.create(1, b"d", 0o644, C, t(3)).unwrap().ino;
    assert_eq!(fs.copy_range(f, 100, d, 0, 1400, t(3)).unwrap(), 1400);
    assert_eq!(read_all(&mut fs, d), pattern(5, 1500)[100..].to_vec());
    assert_eq!(fs.stats().inline_conversions, 0, "a copy between inline files needs no block");
    // Into an ordinary file at 1 MiB: the bytes land there.
    let big = fs.create(1, b"big", 0o644, C, t(4)).unwrap().ino;
    fs.write(big, 0, &pattern(6, 8192), t(4)).unwrap();
    assert_eq!(fs.copy_range(f, 0, big, 1 << 20, 1500, t(4)).unwrap(), 1500);
    let all = read_all(&mut fs, big);
    assert_eq!(&all[1 << 20..], &pattern(5, 1500)[..]);
    // An empty inline file: no data, a hole at 0.
    let e = fs.create(1, b"e", 0o644, C, t(5)).unwrap().ino;
    fs.setattr(e, &SetAttr { size: Some(100), ..Default::default() }, t(5)).unwrap();
    assert_eq!(fs.seek_data_hole(e, 0, SeekWhence::Data).unwrap(), Some(0), "inline bytes count as data");
}

#[test]
fn images_without_the_feature_give_every_file_a_block() {
    let (mut fs, f) = fresh(false);
    let before = fs.stats().data_blocks_written;
    fs.write(f, 0, b"small", t(2)).unwrap();
    fs.sync(t(2)).unwrap();
    assert_eq!(fs.stats().data_blocks_written - before, 1);
    assert_eq!(fs.getattr(f).unwrap().blocks, 8);
}

#[test]
fn fsck_reports_damaged_inline_inodes() {
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, b"0123456789", t(2)).unwrap();
    let img = fs.unmount(t(3)).unwrap().crash_durable_only();
    let damage = |edit: &dyn Fn(&mut Block)| {
        let mut dev = img.clone();
        let a = inode_addr(&mut dev, f);
        edit(dev.block_mut(a));
        codec::seal_seeded(dev.block_mut(a), codec::crc(&UUID));
        fsck::check(&mut dev).unwrap().problems
    };
    let past_size = damage(&|b| inode::inline_data_mut(b)[20] = 1);
    assert!(past_size.iter().any(|p| p.contains("bytes past the size are not zero")), "{past_size:?}");
    let too_big = damage(&|b| inode::set_size(b, MAX as u64 + 1));
    assert!(too_big.iter().any(|p| p.contains("past the inline limit")), "{too_big:?}");
    let unknown = damage(&|b| inode::set_iflags(b, inode::iflags(b) | 0x80));
    assert!(unknown.iter().any(|p| p.contains("unknown iflags bits")), "{unknown:?}");
    let clean = damage(&|_| {});
    assert!(clean.is_empty(), "{clean:?}");
}

/// A call that converts an inline file and then fails (a far write, fallocate and punch on
/// a full device) changes nothing a reader sees and leaves the filesystem writable
/// (invariant 7): the conversion is how the file is kept, not what it says. The explorer's
/// `unlink-after-a-far-write-on-a-full-device.wl` found the first version shutting down.
#[test]
fn a_conversion_then_enospc_changes_nothing_and_keeps_the_filesystem_writable() {
    let (mut fs, f) = fresh(true);
    fs.write(f, 0, b"inline bytes", t(2)).unwrap();
    fill(&mut fs, 1, "filler", 0, t(3));
    for (what, r) in [
        ("far write", fs.write(f, 8 << 20, &pattern(1, 64 * B), t(4)).map(|_| ())),
        ("fallocate", fs.fallocate(f, 0, 8 << 20, false, t(4))),
    ] {
        assert_eq!(r, Err(Error::NoSpace), "{what}");
        assert_eq!(read_all(&mut fs, f), b"inline bytes".to_vec(), "{what}");
        assert_eq!(fs.getattr(f).unwrap().size, 12, "{what}");
    }
    // Still writable: an overwrite of the converted file's own block needs no new room.
    fs.write(f, 0, b"I", t(5)).unwrap();
    assert_eq!(read_all(&mut fs, f), b"Inline bytes".to_vec());
    let mut fs = remount(fs);
    assert_eq!(read_all(&mut fs, f), b"Inline bytes".to_vec());
}
