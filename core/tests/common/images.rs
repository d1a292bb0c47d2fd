//! Contents and images the data-path tests share (datasum.rs, datasum_faults.rs,
//! read_plan.rs).
#![allow(dead_code)]

use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };

/// A block of distinct contents for (tag, file block): the tag, the index in the first
/// 8 bytes.
pub fn content(tag: u8, idx: u64) -> Vec<u8> {
    let mut b = vec![tag; BLOCK_SIZE];
    b[..8].copy_from_slice(&idx.to_le_bytes());
    b
}

/// An unmounted image (8 MiB, 16-block segments, data checksums on) where /f holds
/// `f_blocks` blocks (`content(8, i)`) alone in a data segment — the rest of that segment
/// was /g, now deleted — and the device is otherwise mostly full: cleaning's first
/// background victim. Returns the image and /f's inode.
pub fn cleaning_victim_image(f_blocks: u64) -> (MemDevice, Ino) {
    assert!((1..16).contains(&f_blocks));
    let opts = MkfsOptions { segment_blocks: 16, uuid: [7; 16], data_checksums: true, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(2048), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"f", 0o644, C, T).unwrap().ino;
    let data: Vec<u8> = (0..f_blocks).flat_map(|i| content(8, i)).collect();
    fs.write(f, 0, &data, T).unwrap();
    let g = fs.create(1, b"g", 0o644, C, T).unwrap().ino;
    fs.write(g, 0, &vec![1; (16 - f_blocks as usize) * BLOCK_SIZE], T).unwrap();
    for i in 0..80 {
        let h = fs.create(1, format!("h{i}").as_bytes(), 0o644, C, T).unwrap().ino;
        if fs.write(h, 0, &vec![2; 16 * BLOCK_SIZE], T).is_err() {
            break;
        }
    }
    fs.sync(T).unwrap();
    fs.unlink(1, b"g", T).unwrap();
    fs.sync(T).unwrap();
    (fs.unmount(T).unwrap(), f)
}
