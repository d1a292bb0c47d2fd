//! Data checksums (format 2.0, issue 17): a CRC32C beside every data block address.
//!
//! - `every_bit_flip_in_any_data_block_is_detected_by_read_and_by_fsck`: the flip test. Every
//!   data block of an image (inode-, direct-, indirect- and double-indirect-mapped blocks, a
//!   directory, a symlink, blocks published by roll-forward and by an atomic commit) gets a
//!   flipped bit in turn; each must fail the read of exactly that block (EIO, with inode,
//!   file block and address), leave the file's other blocks readable, and be listed by fsck
//!   with its path. 100 %, not a sample.
//! - the pointers on disk hold the CRC32C of their blocks (a byte-level check of FORMAT.md).
//! - cleaning moves a bad block with its old checksum (never launders it).
//! - `-O nodatasum` images return what the device returns; fsck has nothing to verify.
//! - a format 1 image is refused with a message naming the format.

mod common;
use common::images::{cleaning_victim_image, content};
use common::pointers::pointers;
use rollfs_core::fsck::{self, FsckOptions};
use rollfs_core::layout::*;
use rollfs_core::node;
use rollfs_core::superblock::{self, read_superblock};
use rollfs_core::BlockDevice;
use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };
const UUID: [u8; 16] = [9; 16];
const A: u64 = ADDRS_PER_INODE as u64;
const P: u64 = ADDRS_PER_BLOCK as u64;
const N: u64 = NIDS_PER_BLOCK as u64;

fn mkfs(blocks: u64, segment_blocks: u32, data_checksums: bool) -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks, uuid: UUID, data_checksums, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(blocks), &opts).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), T).unwrap()
}

fn ro(dev: &MemDevice) -> Filesystem<MemDevice> {
    Filesystem::mount(dev.clone(), &MountOptions { read_only: true, ..Default::default() }, T).unwrap()
}

/// File blocks of /sparse: the ends of every region of the node tree.
fn sparse_indexes() -> Vec<u64> {
    let dd = A + 2 * P + 2 * N * P;
    vec![
        0,
        1,
        A - 1,
        A,
        A + P - 1,
        A + P,
        A + 2 * P,
        A + 2 * P + N * P,
        dd,
        dd + N * P + P + 3,
        node::MAX_FILE_BLOCKS - 1,
    ]
}

/// A file whose contents are known: (path, content tag, file blocks written).
type KnownFile = (&'static str, u8, Vec<u64>);

/// An image with data in every kind of place, cleanly unmounted after a roll-forward.
/// Returns it and the files whose contents are known.
fn image(data_checksums: bool) -> (MemDevice, Vec<KnownFile>) {
    let mut fs = mkfs(16_384, 16, data_checksums);
    let mut files = Vec::new();
    let small = fs.create(1, b"small", 0o644, C, T).unwrap().ino;
    fs.write(small, 0, &content(1, 0), T).unwrap();
    files.push(("/small", 1u8, vec![0]));
    let sparse = fs.create(1, b"sparse", 0o644, C, T).unwrap().ino;
    for &i in &sparse_indexes() {
        fs.write(sparse, i * BLOCK_SIZE as u64, &content(2, i), T).unwrap();
    }
    files.push(("/sparse", 2, sparse_indexes()));
    let d = fs.mkdir(1, b"dir", 0o755, C, T).unwrap().ino;
    for i in 0..300 {
        // Enough long names for several dentry blocks.
        fs.create(d, format!("{i:0>100}").as_bytes(), 0o644, C, T).unwrap();
    }
    fs.symlink(1, b"sym", b"dir/0001", C, T).unwrap();
    // An atomic commit publishes its blocks.
    let at = fs.create(1, b"atomic", 0o644, C, T).unwrap().ino;
    fs.start_atomic_write(at).unwrap();
    fs.write(at, 0, &[content(3, 0), content(3, 1)].concat(), T).unwrap();
    fs.commit_atomic_write(at, T).unwrap();
    files.push(("/atomic", 3, vec![0, 1]));
    fs.sync(T).unwrap();
    // fsync'd after the checkpoint, then a crash: roll-forward publishes these pointers.
    let rf = fs.create(1, b"rolled", 0o644, C, T).unwrap().ino;
    fs.write(rf, 0, &[content(4, 0), content(4, 1), content(4, 2)].concat(), T).unwrap();
    fs.fsync(rf, false, T).unwrap();
    fs.write(small, 0, &content(5, 0), T).unwrap();
    fs.fsync(small, true, T).unwrap();
    files[0].1 = 5;
    files.push(("/rolled", 4, vec![0, 1, 2]));
    let dev = fs.into_device();
    let fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    assert!(fs.stats().recovered_batches >= 2, "the fsyncs were rolled forward");
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(r.is_clean(), "{:?} {:?}", r.problems, r.bad_data);
    (dev, files)
}

fn ino_of(fs: &mut Filesystem<MemDevice>, path: &str) -> Ino {
    let mut ino = 1;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        ino = fs.lookup(ino, part.as_bytes()).unwrap().ino;
    }
    ino
}

#[test]
fn pointers_on_disk_hold_the_crc32c_of_their_blocks() {
    let (mut dev, files) = image(true);
    let mut fs = ro(&dev);
    let mut total = 0;
    for (path, _, idxs) in &files {
        let ino = ino_of(&mut fs, path);
        let ptrs = pointers(&mut dev, ino);
        assert_eq!(ptrs.iter().map(|p| p.0).collect::<Vec<_>>(), *idxs, "{path}");
        for &(idx, addr, crc) in &ptrs {
            let mut b = zero_block();
            dev.read(addr as u64, &mut b).unwrap();
            assert_eq!(crc, codec::crc(&b[..]), "{path} block {idx}");
            total += 1;
        }
    }
    assert!(total >= 17, "{total}");
    // Without the feature, the checksum fields stay zero.
    let (mut dev, files) = image(false);
    let mut fs = ro(&dev);
    for (path, _, _) in &files {
        let ino = ino_of(&mut fs, path);
        assert!(pointers(&mut dev, ino).iter().all(|p| p.2 == 0), "{path}");
    }
}

#[test]
fn every_bit_flip_in_any_data_block_is_detected_by_read_and_by_fsck() {
    let (mut base, files) = image(true);
    let mut fs = ro(&base);
    // Every data block of the image: the files', the directory's, the symlink's.
    let mut blocks: Vec<(String, Ino, u64, u32, bool)> = Vec::new();
    for (path, _, _) in &files {
        let ino = ino_of(&mut fs, path);
        for (idx, addr, _) in pointers(&mut base, ino) {
            blocks.push((path.to_string(), ino, idx, addr, true));
        }
    }
    for path in ["/dir", "/sym", "/"] {
        let ino = ino_of(&mut fs, path);
        for (idx, addr, _) in pointers(&mut base, ino) {
            blocks.push((path.to_string(), ino, idx, addr, false));
        }
    }
    drop(fs);
    // They are all the data blocks fsck verifies.
    let r = fsck::check_with(&mut base, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    let dir_files = 300u64; // empty files: no data blocks
    assert!(r.data_blocks_verified > 0 && dir_files > 0);
    assert_eq!(r.data_blocks_verified, blocks.len() as u64, "every data block is in the test");
    let mut detected = 0;
    for (n, (path, ino, idx, addr, regular)) in blocks.iter().enumerate() {
        let mut dev = base.clone();
        // A different bit each time, across the whole block.
        let bit = (n * 7919 + *addr as usize * 31) % (BLOCK_SIZE * 8);
        dev.block_mut(*addr as u64)[bit / 8] ^= 1 << (bit % 8);
        let r = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
        assert_eq!(r.bad_data.len(), 1, "{path} block {idx}: {:?}", r.bad_data);
        let bad = &r.bad_data[0];
        assert_eq!((bad.ino, bad.index, bad.block, bad.path.as_str()), (*ino, *idx, *addr, path.as_str()));
        assert!(!r.is_clean());
        if *regular {
            assert!(r.problems.is_empty(), "{path}: {:?}", r.problems);
            let mut fs = ro(&dev);
            let mut buf = vec![0u8; BLOCK_SIZE];
            let got = fs.read(*ino, idx * BLOCK_SIZE as u64, &mut buf);
            assert_eq!(got, Err(Error::DataChecksum { ino: *ino, index: *idx, block: *addr as u64 }), "{path}");
            assert_eq!(got.unwrap_err().errno(), 5, "EIO");
            assert_eq!(fs.stats().data_checksum_errors, 1);
            // The file's other blocks read as written.
            let (_, tag, idxs) = files.iter().find(|f| f.0 == path).unwrap();
            for &other in idxs.iter().filter(|&&o| o != *idx) {
                assert_eq!(fs.read(*ino, other * BLOCK_SIZE as u64, &mut buf), Ok(BLOCK_SIZE));
                assert_eq!(buf, content(*tag, other), "{path} block {other}");
            }
        } else if path == "/sym" {
            let mut fs = ro(&dev);
            assert!(matches!(fs.readlink(*ino), Err(Error::DataChecksum { .. })));
        } else {
            // A directory block: listing the directory fails with EIO, not with wrong names.
            let mut fs = ro(&dev);
            let r = fs.readdir(*ino, 0, &mut |_| true);
            assert!(matches!(r, Err(Error::DataChecksum { .. })), "{path}: {r:?}");
        }
        detected += 1;
    }
    eprintln!("data block flips: {} tried, {detected} detected", blocks.len());
    assert_eq!(detected, blocks.len());
    assert!(detected >= 25, "{detected}");
}

/// Cleaning reads a bad block to move it: it moves it with the checksum it had, so reads
/// keep failing (a fresh checksum would turn corrupt bytes into good-looking data).
#[test]
fn cleaning_moves_a_bad_block_with_its_old_checksum() {
    let mut fs = mkfs(2048, 16, true);
    let victim = fs.create(1, b"victim", 0o644, C, T).unwrap().ino;
    fs.write(victim, 0, &content(7, 0), T).unwrap();
    fs.write(victim, BLOCK_SIZE as u64, &content(7, 1), T).unwrap();
    // Fill most of the device, then free most of it so that cleaning has victims.
    let mut fillers = Vec::new();
    for i in 0..90 {
        let f = fs.create(1, format!("f{i}").as_bytes(), 0o644, C, T).unwrap().ino;
        if fs.write(f, 0, &vec![i as u8; 14 * BLOCK_SIZE], T).is_err() {
            break;
        }
        fillers.push(i);
    }
    fs.sync(T).unwrap();
    for i in fillers.iter().filter(|i| *i % 8 == 0) {
        fs.unlink(1, format!("f{i}").as_bytes(), T).unwrap();
    }
    fs.sync(T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let ptrs = pointers(&mut dev, victim);
    let bad_addr = ptrs[0].1;
    dev.block_mut(bad_addr as u64)[100] ^= 0x10;
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let mut rounds = 0;
    // Bounded: each round cleans at least one segment, and the device has ~100.
    while fs.gc_background(T).unwrap() && rounds < 200 {
        rounds += 1;
    }
    assert!(fs.stats().gc_blocks_moved > 0 && rounds > 0, "cleaning ran ({rounds} rounds)");
    let mut dev = fs.unmount(T).unwrap();
    let moved = pointers(&mut dev, victim);
    assert_ne!(moved[0].1, bad_addr, "the bad block was moved");
    let mut fs = ro(&dev);
    let mut buf = vec![0u8; BLOCK_SIZE];
    assert!(matches!(fs.read(victim, 0, &mut buf), Err(Error::DataChecksum { index: 0, .. })));
    assert_eq!(fs.read(victim, BLOCK_SIZE as u64, &mut buf), Ok(BLOCK_SIZE));
    assert_eq!(buf, content(7, 1));
    drop(fs);
    let r = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.bad_data.iter().map(|b| (b.path.as_str(), b.index)).collect::<Vec<_>>(), [("/victim", 0)]);
}

/// The count of bad blocks moved is kept, and a rewrite of the block heals it: new
/// contents get their own checksum.
#[test]
fn a_bad_block_moved_by_cleaning_is_counted_and_a_rewrite_heals_it() {
    let (mut dev, f) = cleaning_victim_image(1);
    let addr = pointers(&mut dev, f)[0].1;
    dev.block_mut(addr as u64)[4000] ^= 1;
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let mut rounds = 0;
    while fs.gc_background(T).unwrap() && rounds < 200 {
        rounds += 1;
    }
    assert_eq!(fs.stats().gc_bad_blocks_moved, 1, "{:?}", fs.stats());
    let mut buf = vec![0u8; BLOCK_SIZE];
    assert!(matches!(fs.read(f, 0, &mut buf), Err(Error::DataChecksum { .. })));
    // A partial overwrite needs the old bytes: EIO, and nothing changes.
    assert!(matches!(fs.write(f, 10, b"xyz", T), Err(Error::DataChecksum { .. })));
    // A whole-block overwrite does not: the block is good again.
    fs.write(f, 0, &content(9, 0), T).unwrap();
    let dev = fs.unmount(T).unwrap();
    let mut fs = ro(&dev);
    assert_eq!(fs.read(f, 0, &mut buf), Ok(BLOCK_SIZE));
    assert_eq!(buf, content(9, 0));
}

#[test]
fn nodatasum_images_return_what_the_device_returns() {
    let (mut dev, files) = image(false);
    let sb = read_superblock(&mut dev).unwrap();
    assert_eq!(sb.feature_ro_compat & superblock::FEATURE_RO_COMPAT_DATASUM, 0);
    let mut fs = ro(&dev);
    let ino = ino_of(&mut fs, files[0].0);
    drop(fs);
    let addr = pointers(&mut dev, ino)[0].1;
    dev.block_mut(addr as u64)[17] ^= 4;
    let r = fsck::check_with(&mut dev, &FsckOptions { verify_data: true }, &mut |_, _| {}).unwrap();
    assert!(r.is_clean() && r.data_blocks_verified == 0, "{r:?}");
    let mut fs = ro(&dev);
    let mut buf = vec![0u8; BLOCK_SIZE];
    assert_eq!(fs.read(ino, 0, &mut buf), Ok(BLOCK_SIZE));
    let mut want = content(files[0].1, 0);
    want[17] ^= 4;
    assert_eq!(buf, want, "the flipped byte is returned as it is");
}

#[test]
fn a_format_1_image_is_refused_with_a_message_saying_so() {
    let (mut dev, _) = image(true);
    for addr in SUPERBLOCK_ADDRS {
        let b = dev.block_mut(addr);
        b[superblock::SB_OFF_VERSION_MAJOR..superblock::SB_OFF_VERSION_MAJOR + 2].copy_from_slice(&1u16.to_le_bytes());
        codec::seal(b);
    }
    match Filesystem::mount(dev.clone(), &MountOptions::default(), T) {
        Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("format 1"), "{reason}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a format 1 image mounted"),
    }
}
