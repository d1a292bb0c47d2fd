//! End-to-end basics on the in-memory device: format, mount, namespace and data
//! operations, persistence across unmount + mount.

use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };

fn fresh(blocks: u64) -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(blocks), &opts).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), T).unwrap()
}

fn remount(fs: Filesystem<MemDevice>) -> Filesystem<MemDevice> {
    let dev = fs.unmount(T).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), T).unwrap()
}

#[test]
fn create_write_read_persist() {
    let mut fs = fresh(4096);
    let a = fs.create(1, b"hello.txt", 0o644, C, T).unwrap();
    assert_eq!(a.kind, FileType::Regular);
    fs.write(a.ino, 0, b"hello world", T).unwrap();
    let mut buf = [0u8; 64];
    let n = fs.read(a.ino, 0, &mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello world");
    let d = fs.mkdir(1, b"sub", 0o755, C, T).unwrap();
    fs.symlink(d.ino, b"ln", b"../hello.txt", C, T).unwrap();
    let mut fs = remount(fs);
    let a2 = fs.lookup(1, b"hello.txt").unwrap();
    assert_eq!(a2.ino, a.ino);
    assert_eq!(a2.size, 11);
    let n = fs.read(a2.ino, 0, &mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello world");
    let l = fs.lookup(d.ino, b"ln").unwrap();
    assert_eq!(fs.readlink(l.ino).unwrap(), b"../hello.txt");
    assert_eq!(fs.getattr(1).unwrap().nlink, 3);
    let mut names = Vec::new();
    fs.readdir(1, 0, &mut |e| {
        names.push(e.name);
        true
    })
    .unwrap();
    names.sort();
    assert_eq!(names, vec![b".".to_vec(), b"..".to_vec(), b"hello.txt".to_vec(), b"sub".to_vec()]);
    let mut dev = fs.unmount(T).unwrap();
    let report = rollfs_core::fsck::check(&mut dev).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.inodes, 4);
}

#[test]
fn fsck_reports_progress_up_to_every_inode() {
    let mut fs = fresh(8192);
    for i in 0..600 {
        fs.create(1, format!("f{i}").as_bytes(), 0o644, C, T).unwrap();
    }
    let mut dev = fs.unmount(T).unwrap();
    let mut calls = Vec::new();
    let r = rollfs_core::fsck::check_with_progress(&mut dev, &mut |done, total| calls.push((done, total))).unwrap();
    assert!(r.is_clean());
    assert!(calls.len() >= 3, "{calls:?}");
    assert_eq!(*calls.last().unwrap(), (601, 601));
    assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0));
}

/// `Geometry::user_blocks` is what `statfs` reports as the capacity, so that a tool can
/// size an image from the geometry alone, before writing anything (`mkfs --root`), and
/// trust the mount to offer that much.
#[test]
fn user_blocks_of_the_geometry_is_the_capacity_statfs_reports() {
    for blocks in [4096u64, 8192, 30_000] {
        let mut fs = fresh(blocks);
        let g = layout::Geometry::compute(blocks, 16, MkfsOptions::default().overprovision_pct).unwrap();
        assert_eq!(fs.geometry().user_blocks(), g.user_blocks());
        assert_eq!(fs.statfs().unwrap().blocks, g.user_blocks(), "{blocks} blocks");
    }
}
