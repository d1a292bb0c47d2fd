//! Scale tests on the in-memory device: a 100,000-entry directory, a sparse file larger
//! than 4 GiB, and a directory tree 100 levels deep. Each prints its timings so the
//! closing notes can quote them (timings are never asserted).

use rollfs_core::*;
use std::time::Instant;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 0, gid: 0 };

fn fresh(blocks: u64) -> Filesystem<MemDevice> {
    let dev = Filesystem::format(MemDevice::new(blocks), &MkfsOptions::default()).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), T).unwrap()
}

#[test]
fn hundred_thousand_entries_in_one_directory() {
    const N: u32 = 100_000;
    // 2 GiB device: 100k inodes need ~100k node blocks.
    let mut fs = fresh(512 * 1024);
    let d = fs.mkdir(1, b"big", 0o755, C, T).unwrap().ino;
    let t0 = Instant::now();
    for i in 0..N {
        fs.create(d, format!("file-{i:06}").as_bytes(), 0o644, C, T).unwrap();
    }
    let create = t0.elapsed();
    let t1 = Instant::now();
    for i in 0..N {
        fs.lookup(d, format!("file-{i:06}").as_bytes()).unwrap();
    }
    let lookup = t1.elapsed();
    assert_eq!(fs.lookup(d, b"file-missing"), Err(Error::NotFound));
    // readdir, resumed in pages of 1000 as a FUSE driver would.
    let t2 = Instant::now();
    let mut seen = std::collections::BTreeSet::new();
    let mut cookie = 0;
    loop {
        let mut page = Vec::new();
        fs.readdir(d, cookie, &mut |e| {
            page.push(e);
            page.len() < 1000
        })
        .unwrap();
        if page.is_empty() {
            break;
        }
        cookie = page.last().unwrap().cookie;
        for e in page {
            if e.name != b"." && e.name != b".." {
                assert!(seen.insert(e.name), "entry listed twice");
            }
        }
    }
    assert_eq!(seen.len(), N as usize);
    let readdir = t2.elapsed();
    // Remount: everything is still there.
    let dev = fs.unmount(T).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    assert_eq!(fs.lookup(d, b"file-054321").unwrap().kind, FileType::Regular);
    let t3 = Instant::now();
    for i in 0..N {
        fs.unlink(d, format!("file-{i:06}").as_bytes(), T).unwrap();
    }
    let unlink = t3.elapsed();
    let mut left = 0;
    fs.readdir(d, 2, &mut |_| {
        left += 1;
        true
    })
    .unwrap();
    assert_eq!(left, 0);
    fs.rmdir(1, b"big", T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let report = fsck::check(&mut dev).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.inodes, 1);
    println!(
        "100k directory: create {:.2}s, lookup all {:.2}s, readdir {:.2}s, unlink all {:.2}s",
        create.as_secs_f64(),
        lookup.as_secs_f64(),
        readdir.as_secs_f64(),
        unlink.as_secs_f64()
    );
}

#[test]
fn sparse_file_larger_than_4_gib() {
    let mut fs = fresh(64 * 1024);
    let f = fs.create(1, b"sparse", 0o644, C, T).unwrap().ino;
    let offsets = [0u64, 5 << 20, 1 << 30, (4 << 30) + 12345, (6 << 30) - 7, 3u64 << 40];
    for (i, &o) in offsets.iter().enumerate() {
        fs.write(f, o, format!("chunk {i} at {o}").as_bytes(), T).unwrap();
    }
    let dev = fs.unmount(T).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let a = fs.getattr(f).unwrap();
    assert!(a.size > 4 << 30);
    // Only a handful of blocks are allocated.
    assert!(a.blocks <= 7 * 8, "blocks {}", a.blocks);
    for (i, &o) in offsets.iter().enumerate() {
        let want = format!("chunk {i} at {o}");
        let mut buf = vec![0u8; want.len()];
        fs.read(f, o, &mut buf).unwrap();
        assert_eq!(buf, want.as_bytes());
    }
    // Holes read as zeros, including across a node boundary.
    let mut buf = vec![1u8; 8192];
    fs.read(f, (2 << 30) + 4000, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 0));
    // Truncating a multi-TiB sparse file is quick and frees its blocks and nodes.
    fs.setattr(f, &SetAttr { size: Some(4096), ..Default::default() }, T).unwrap();
    assert_eq!(fs.getattr(f).unwrap().blocks, 8);
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
}

#[test]
fn tree_of_depth_100() {
    let mut fs = fresh(16 * 1024);
    let mut d = 1;
    let mut chain = Vec::new();
    for i in 0..100 {
        d = fs.mkdir(d, format!("level{i}").as_bytes(), 0o755, C, T).unwrap().ino;
        chain.push(d);
    }
    let leaf = fs.create(d, b"leaf", 0o644, C, T).unwrap().ino;
    fs.write(leaf, 0, b"deep", T).unwrap();
    // Moving an ancestor below its descendant is refused.
    assert!(matches!(fs.rename(1, b"level0", chain[98], b"loop", RenameFlags::empty(), T), Err(Error::Invalid(_))));
    let dev = fs.unmount(T).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let mut d = 1;
    for i in 0..100 {
        d = fs.lookup(d, format!("level{i}").as_bytes()).unwrap().ino;
    }
    let l = fs.lookup(d, b"leaf").unwrap();
    let mut buf = [0u8; 4];
    fs.read(l.ino, 0, &mut buf).unwrap();
    assert_eq!(&buf, b"deep");
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    assert_eq!(r.directories, 101);
}
