//! Bad input gets a clear error and loses nothing: corrupt images, I/O errors, full
//! devices, bad names. Corruption is an error naming the block; never a panic.

use rollfs_core::*;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 0, gid: 0 };

fn image() -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [7; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(4096), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let d = fs.mkdir(1, b"dir", 0o755, C, T).unwrap().ino;
    for i in 0..20 {
        let f = fs.create(d, format!("f{i}").as_bytes(), 0o644, C, T).unwrap().ino;
        fs.write(f, 0, &vec![i as u8; 5000 + i * 100], T).unwrap();
        fs.setxattr(f, b"user.k", b"v", XattrSetMode::Any, T).unwrap();
    }
    fs.unmount(T).unwrap()
}

/// Mounts and walks everything; returns an error instead of panicking.
fn mount_and_walk(dev: MemDevice) -> Result<(), Error> {
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T)?;
    let mut stack = vec![1];
    let mut guard = 0;
    while let Some(d) = stack.pop() {
        guard += 1;
        assert!(guard < 10_000);
        let mut entries = Vec::new();
        fs.readdir(d, 2, &mut |e| {
            entries.push(e);
            true
        })?;
        for e in entries {
            let a = fs.getattr(e.ino)?;
            if a.kind == FileType::Directory {
                stack.push(e.ino);
            } else {
                let mut buf = vec![0u8; a.size.min(1 << 20) as usize];
                fs.read(e.ino, 0, &mut buf)?;
                fs.listxattr(e.ino)?;
            }
        }
    }
    fs.create(1, b"new", 0o644, C, T)?;
    fs.sync(T)?;
    Ok(())
}

#[test]
fn clean_image_walks() {
    mount_and_walk(image()).unwrap();
    let mut dev = image();
    assert!(fsck::check(&mut dev).unwrap().is_clean());
}

#[test]
fn one_superblock_copy_destroyed_still_mounts() {
    let mut dev = image();
    dev.block_mut(0)[10] ^= 0xff;
    mount_and_walk(dev).unwrap();
}

#[test]
fn both_superblocks_destroyed_is_a_clear_error() {
    let mut dev = image();
    dev.block_mut(0)[0] ^= 0xff;
    dev.block_mut(1)[0] ^= 0xff;
    match Filesystem::mount(dev, &MountOptions::default(), T) {
        Err(Error::Corrupt { block: 0, reason }) => assert!(reason.contains("magic"), "{reason}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("mounted a destroyed image"),
    }
}

#[test]
fn unsupported_format_version_is_refused() {
    let mut dev = image();
    for a in 0..2 {
        let b = dev.block_mut(a);
        b[superblock::SB_OFF_VERSION_MAJOR] = 9;
        codec::seal(b);
    }
    match Filesystem::mount(dev, &MountOptions::default(), T) {
        Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("version"), "{reason}"),
        other => panic!("unexpected {:?}", other.map(|_| ())),
    }
}

/// fsck's SIT pass compares each segment's bitmap in whole bytes: it relies on every geometry
/// read from disk having a segment size that is a power of two of at least 16 blocks. A
/// sealed superblock with any other size is refused, by mount and by fsck, before anything
/// is addressed through it.
#[test]
fn superblock_with_a_segment_size_fsck_cannot_walk_is_refused() {
    for bad in [0u32, 8, 12, 20, 24, 17, 48, 1 << 30] {
        let mut dev = image();
        for a in 0..2 {
            let b = dev.block_mut(a);
            let off = superblock::SB_OFF_SEGMENT_BLOCKS;
            b[off..off + 4].copy_from_slice(&bad.to_le_bytes());
            codec::seal(b);
        }
        // fsck reports the image it cannot mount as one problem, and walks nothing.
        let report = fsck::check(&mut dev).unwrap();
        assert_eq!(report.problems.len(), 1, "{bad}: {:?}", report.problems);
        assert!(report.problems[0].contains("bad segment size"), "{bad}: {:?}", report.problems);
        assert_eq!(report.inodes, 0, "{bad}: nothing is walked");
        match Filesystem::mount(dev, &MountOptions::default(), T) {
            Err(Error::Corrupt { reason, .. }) => assert!(reason.contains("segment size"), "{bad}: {reason}"),
            other => panic!("mount with segment size {bad}: {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn not_a_filesystem_is_a_clear_error() {
    let dev = MemDevice::new(4096);
    assert!(matches!(Filesystem::mount(dev, &MountOptions::default(), T), Err(Error::Corrupt { block: 0, .. })));
}

#[test]
fn corrupt_node_is_an_error_naming_its_block() {
    let dev = image();
    let fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let geo = *fs.geometry();
    let mut dev = fs.into_device();
    // Find the inode of "dir" via a fresh mount, then corrupt its block on the device.
    let mut fs = Filesystem::mount(dev.clone(), &MountOptions::default(), T).unwrap();
    let d = fs.lookup(1, b"dir").unwrap().ino;
    drop(fs);
    // Flip a byte in every main-area block that holds node d (found by scanning).
    let mut hit = None;
    for a in geo.main_start as u64..geo.main_end() {
        let b = dev.block_mut(a);
        if node::footer_nid(b) == d && codec::get_u32(&b[..], node::FOOTER_OFF_INO) == d {
            b[200] ^= 1;
            hit = Some(a);
        }
    }
    let hit = hit.expect("found the node");
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    match fs.lookup(d, b"f1") {
        Err(Error::Corrupt { block, reason }) => {
            assert_eq!(block, hit);
            assert!(reason.contains("checksum"), "{reason}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn bit_flips_anywhere_never_panic() {
    let base = image();
    let blocks: Vec<u64> = (0..4096).collect();
    let mut flips = 0;
    for &a in &blocks {
        // Only blocks that hold something.
        let mut probe = base.clone();
        if probe.block_mut(a).iter().all(|&b| b == 0) {
            continue;
        }
        for &(byte, bit) in &[(0usize, 0u8), (17, 3), (300, 5), (4000, 1), (4090, 7)] {
            let mut dev = base.clone();
            dev.block_mut(a)[byte] ^= 1 << bit;
            flips += 1;
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let mut d2 = dev.clone();
                let _ = fsck::check(&mut d2);
                let _ = mount_and_walk(dev);
            }));
            assert!(r.is_ok(), "panic after flipping bit {bit} of byte {byte} in block {a}");
        }
    }
    assert!(flips > 100, "only {flips} flips tried");
}

#[test]
fn failed_write_shuts_down_and_loses_nothing_acknowledged() {
    let dev = image();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"synced", 0o644, C, T).unwrap().ino;
    fs.write(f, 0, b"durable", T).unwrap();
    fs.sync(T).unwrap();
    fs.write(f, 0, b"lost!!!", T).unwrap();
    let writes = fs.device().counters.writes;
    fs.device_mut().fail_writes_from = Some(writes + 1);
    assert!(matches!(fs.sync(T), Err(Error::Io { .. })));
    assert!(fs.is_read_only());
    assert!(fs.is_shut_down());
    // Shut down, not mounted read-only: EIO, as f2fs reports after its shutdown.
    assert_eq!(fs.create(1, b"x", 0o644, C, T), Err(Error::ShutDown));
    assert_eq!(fs.write(f, 0, b"y", T), Err(Error::ShutDown));
    assert_eq!(Error::ShutDown.errno(), 5);
    let mut dev = fs.into_device();
    dev.fail_writes_from = None;
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let f = fs.lookup(1, b"synced").unwrap().ino;
    let mut buf = [0u8; 7];
    fs.read(f, 0, &mut buf).unwrap();
    assert_eq!(&buf, b"durable");
}

#[test]
fn read_error_during_mount_is_eio() {
    let mut dev = image();
    dev.fail_read_block = Some(
        superblock::Superblock::decode(0, &{
            let mut b = [0u8; 4096];
            dev.read(0, &mut b).unwrap();
            b
        })
        .unwrap()
        .geometry
        .nat_start as u64,
    );
    // The NAT block in slot 0 may or may not be the current one; fail both slots' reads.
    let r = Filesystem::mount(dev.clone(), &MountOptions::default(), T);
    if r.is_ok() {
        dev.fail_read_block = dev.fail_read_block.map(|a| a + 1);
        assert!(matches!(Filesystem::mount(dev, &MountOptions::default(), T), Err(Error::Io { .. })));
    } else {
        assert!(matches!(r, Err(Error::Io { .. })));
    }
}

#[test]
fn full_device_gives_enospc_and_stays_consistent() {
    let opts = MkfsOptions { segment_blocks: 16, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(2048), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let chunk = vec![0xabu8; 64 * 1024];
    let mut written = Vec::new();
    let mut hit = false;
    for i in 0..1000 {
        let name = format!("fill{i}");
        let f = match fs.create(1, name.as_bytes(), 0o644, C, T) {
            Ok(a) => a.ino,
            Err(Error::NoSpace) => {
                hit = true;
                break;
            }
            Err(e) => panic!("create {i}: {e}"),
        };
        match fs.write(f, 0, &chunk, T) {
            Ok(_) => written.push(name),
            Err(Error::NoSpace) => {
                hit = true;
                break;
            }
            Err(e) => panic!("write {i}: {e} (stats {:?})", fs.stats()),
        }
    }
    assert!(hit, "never ran out of space");
    assert!(!fs.is_read_only());
    let st = fs.statfs().unwrap();
    assert!(st.blocks_free < 64, "statfs still shows {} free blocks", st.blocks_free);
    // Deleting makes room again (after the checkpoint that frees the segments).
    for n in written.iter().take(5) {
        fs.unlink(1, n.as_bytes(), T).unwrap();
    }
    let f = fs.create(1, b"after", 0o644, C, T).unwrap().ino;
    fs.write(f, 0, &chunk, T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    for n in written.iter().skip(5) {
        let a = fs.lookup(1, n.as_bytes()).unwrap();
        let mut buf = vec![0u8; chunk.len()];
        fs.read(a.ino, 0, &mut buf).unwrap();
        assert!(buf == chunk);
    }
}

#[test]
fn bad_names_and_namespace_errors() {
    let dev = image();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    assert_eq!(fs.create(1, &[b'x'; 256], 0o644, C, T), Err(Error::NameTooLong));
    assert!(matches!(fs.create(1, b"a/b", 0o644, C, T), Err(Error::Invalid(_))));
    assert!(matches!(fs.create(1, b"", 0o644, C, T), Err(Error::Invalid(_))));
    assert_eq!(fs.create(1, b"dir", 0o644, C, T), Err(Error::Exists));
    assert_eq!(fs.unlink(1, b"missing", T), Err(Error::NotFound));
    assert_eq!(fs.unlink(1, b"dir", T), Err(Error::IsDir));
    assert_eq!(fs.rmdir(1, b"dir", T), Err(Error::NotEmpty));
    let d = fs.lookup(1, b"dir").unwrap().ino;
    let f = fs.lookup(d, b"f0").unwrap().ino;
    assert_eq!(fs.lookup(f, b"x"), Err(Error::NotDir));
    assert_eq!(fs.rmdir(d, b"f0", T), Err(Error::NotDir));
    assert_eq!(fs.link(d, 1, b"dirlink", T), Err(Error::NotPermitted));
    assert_eq!(fs.getattr(9999), Err(Error::NotFound));
    assert_eq!(fs.getxattr(f, b"user.none"), Err(Error::NoData));
    assert_eq!(fs.setxattr(f, b"user.k", b"v", XattrSetMode::Create, T), Err(Error::Exists));
    assert_eq!(fs.setxattr(f, b"user.z", b"v", XattrSetMode::Replace, T), Err(Error::NoData));
    assert_eq!(fs.read(d, 0, &mut [0u8; 4]), Err(Error::IsDir));
    assert_eq!(fs.write(d, 0, b"x", T), Err(Error::IsDir));
    assert_eq!(Error::NoSpace.errno(), 28);
    assert_eq!(Error::corrupt(5, "x").errno(), 117);
}

#[test]
fn unlinked_open_file_survives_until_release_and_is_removed_after_crash() {
    let dev = image();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"tmp", 0o644, C, T).unwrap().ino;
    fs.write(f, 0, b"still here", T).unwrap();
    fs.open(f).unwrap();
    fs.unlink(1, b"tmp", T).unwrap();
    let mut buf = [0u8; 10];
    fs.read(f, 0, &mut buf).unwrap();
    assert_eq!(&buf, b"still here");
    fs.sync(T).unwrap();
    // Crash with the orphan open: the next mount removes it.
    let mut dev = fs.into_device();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    assert_eq!(fs.getattr(f), Err(Error::NotFound));
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    // Release without a crash frees it at once.
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let g = fs.create(1, b"tmp2", 0o644, C, T).unwrap().ino;
    fs.open(g).unwrap();
    fs.unlink(1, b"tmp2", T).unwrap();
    fs.release(g, T).unwrap();
    assert_eq!(fs.getattr(g), Err(Error::NotFound));
}
