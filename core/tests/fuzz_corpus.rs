//! Replays the fuzz regression corpus (`fuzz/regressions/<target>/*`) through the same
//! harness code the cargo-fuzz targets run (`fuzz/src/lib.rs`, included here as a module),
//! so that every input that once found a bug, and a handful of inputs that reach deep
//! into mount, recovery, fsck and the model, keep being checked by `cargo test`.

#[path = "../../fuzz/src/lib.rs"]
mod harness;

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions").join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let data = std::fs::read(&p).unwrap();
            (p, data)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no regression inputs in {}", dir.display());
    out
}

fn replay(target: &str, f: fn(&[u8])) {
    for (path, data) in corpus(target) {
        let r = std::panic::catch_unwind(|| f(&data));
        assert!(
            r.is_ok(),
            "{target}: {} panicked (replay: cargo fuzz run {target} {})",
            path.display(),
            path.display()
        );
    }
}

#[test]
fn mount_walk_fsck_regressions() {
    replay("mount_walk_fsck", harness::mount_walk_fsck);
}

#[test]
fn decoders_regressions() {
    replay("decoders", harness::decoders);
}

#[test]
fn ops_vs_model_regressions() {
    replay("ops_vs_model", harness::ops_vs_model);
}

/// The seed images themselves are valid: fsck finds them clean (after recovery for the
/// crashed ones) and the unpatched input mounts and walks.
#[test]
fn seed_images_are_clean() {
    for s in harness::seeds() {
        let dev = s.dev.clone();
        let fs = rollfs_core::Filesystem::mount(
            dev,
            &rollfs_core::MountOptions::default(),
            rollfs_core::Timestamp::new(1, 0),
        )
        .unwrap_or_else(|e| panic!("seed {}: mount: {e}", s.name));
        let mut dev = fs.unmount(rollfs_core::Timestamp::new(2, 0)).unwrap();
        let report = rollfs_core::fsck::check(&mut dev).unwrap();
        assert!(report.is_clean(), "seed {}: {:?}", s.name, report.problems);
        assert!(s.written.len() > 20, "seed {} has too few blocks", s.name);
    }
    harness::mount_walk_fsck(&[0]);
    harness::mount_walk_fsck(&[1]);
}

/// Builds the starting corpora for the three targets and checks every entry runs through
/// its harness. With `ROLLFS_DUMP_CORPUS=1` it also writes them into
/// `fuzz/corpus/<target>/` (not tracked) for `cargo fuzz run`.
#[test]
fn dump_seed_corpus() {
    let dump = std::env::var_os("ROLLFS_DUMP_CORPUS").is_some();
    let root = if dump {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus")
    } else {
        std::env::temp_dir().join(format!("rollfs-corpus-{}", std::process::id()))
    };
    let put = |target: &str, name: String, data: &[u8]| {
        let d = root.join(target);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(name), data).unwrap();
    };
    for h in 0..16u8 {
        put("mount_walk_fsck", format!("unpatched-{h}"), &[h]);
    }
    for (i, s) in harness::seeds().iter().enumerate() {
        // One resealed one-byte patch on every written block (sel indexes `written`).
        for (j, _) in s.written.iter().enumerate().step_by(3) {
            let rec = [i as u8, j as u8, (j >> 8) as u8, 0x40, 0x00, 0x03, 0x01, 0xff];
            put("mount_walk_fsck", format!("s{i}-b{j}"), &rec);
        }
        let mut dev = s.dev.clone();
        let mut b = rollfs_core::zero_block();
        for (j, &addr) in s.written.iter().enumerate() {
            use rollfs_core::BlockDevice;
            dev.read(addr, &mut b).unwrap();
            let sels: &[u8] = if addr < 2 {
                &[0]
            } else if rollfs_core::codec::crc_ok(&b) {
                &[3, 4, 5, 7]
            } else {
                &[1, 2]
            };
            for &sel in sels {
                let mut data = vec![sel, 1];
                data.extend_from_slice(&b[..]);
                put("decoders", format!("s{i}-{j}-{sel}"), &data);
            }
        }
    }
    for sel in 0..9u8 {
        put("decoders", format!("zero-{sel}"), &[sel, 1]);
    }
    let ops: [&[u8]; 6] = [
        &[0, 0, 0, 3, 0, 0, 0, 40, 0, 7, 16, 0, 0, 15],
        &[2, 0, 0, 0, 1, 1, 3, 0, 0, 0, 0, 0, 0, 16, 1, 0, 8, 0, 1, 0, 2, 0],
        &[0, 0, 1, 4, 0, 0, 10, 0, 30, 3, 18, 0, 0, 1, 0, 1, 1, 16, 0, 1, 14],
        &[0, 0, 0, 11, 0, 0, 9, 9, 0, 0, 3, 5, 0, 0, 0, 12, 0, 0, 1, 2, 6, 0, 0],
        &[0, 0, 3, 3, 0, 0, 200, 0, 80, 5, 0, 0, 15, 19, 0, 0, 0, 0, 4],
        &[0, 0, 0, 16, 0, 0, 8, 0, 0, 0, 3, 1, 16, 0, 0],
    ];
    for (i, o) in ops.iter().enumerate() {
        put("ops_vs_model", format!("ops-{i}"), o);
    }
    // Every entry must run through its target's harness without a panic.
    let mut ran = 0;
    for target in ["mount_walk_fsck", "decoders", "ops_vs_model"] {
        for e in std::fs::read_dir(root.join(target)).unwrap() {
            let data = std::fs::read(e.unwrap().path()).unwrap();
            match target {
                "mount_walk_fsck" => harness::mount_walk_fsck(&data),
                "decoders" => harness::decoders(&data),
                _ => harness::ops_vs_model(&data),
            }
            ran += 1;
        }
    }
    assert!(ran > 20, "only {ran} corpus entries");
    if !dump {
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// Found by the `decoders` target: a superblock whose `reserved_segments` is near
/// `u32::MAX / 2` overflowed `2 * reserved + LOG_COUNT + 2` in `Geometry::validate`
/// (a panic with overflow checks; a wrapped, passing check without). It must be rejected.
#[test]
fn superblock_huge_reserve_is_rejected() {
    use rollfs_core::superblock::{Superblock, SB_OFF_RESERVED_SEGMENTS};
    use rollfs_core::BlockDevice;
    let mut dev = rollfs_core::Filesystem::format(
        rollfs_core::MemDevice::new(1024),
        &rollfs_core::MkfsOptions { segment_blocks: 16, ..Default::default() },
    )
    .unwrap();
    let mut b = rollfs_core::zero_block();
    dev.read(0, &mut b).unwrap();
    for reserved in [0x7fff_fffcu32, 0x8000_0000, u32::MAX] {
        let mut c = b.clone();
        rollfs_core::codec::put_u32(&mut c[..], SB_OFF_RESERVED_SEGMENTS, reserved);
        rollfs_core::codec::seal(&mut c);
        assert!(Superblock::decode(0, &c).is_err(), "reserved_segments {reserved:#x} accepted");
    }
}

/// An image whose inode `ino` has its `i_blocks` field set to `blocks` (node CRC resealed).
fn image_with_inode_blocks(blocks: u64) -> (rollfs_core::MemDevice, rollfs_core::Ino) {
    use rollfs_core::{codec, node, BlockDevice, Filesystem, MemDevice, MkfsOptions, MountOptions, Timestamp};
    let opts = MkfsOptions { segment_blocks: 16, uuid: [7; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(1024), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), Timestamp::new(1, 0)).unwrap();
    let ino = fs.create(1, b"f", 0o644, rollfs_core::Credentials::default(), Timestamp::new(1, 0)).unwrap().ino;
    fs.write(ino, 0, &[1u8; 4096], Timestamp::new(1, 0)).unwrap();
    let mut dev = fs.unmount(Timestamp::new(2, 0)).unwrap();
    let seed = codec::crc(&opts.uuid);
    let mut b = rollfs_core::zero_block();
    let mut newest = None;
    for addr in 0..dev.block_count() {
        dev.read(addr, &mut b).unwrap();
        if codec::crc_ok_seeded(&b, seed)
            && node::footer_nid(&b) == ino
            && node::footer_type(&b) == Some(node::NodeType::Inode)
        {
            let v = node::footer_cp_version(&b);
            if newest.is_none_or(|(nv, _)| v >= nv) {
                newest = Some((v, addr));
            }
        }
    }
    let addr = newest.expect("inode block").1;
    let blk = dev.block_mut(addr);
    node::inode::set_blocks(blk, blocks);
    codec::seal_seeded(blk, seed);
    (dev, ino)
}

/// Found by `mount_walk_fsck`: a corrupt `i_blocks` near `u64::MAX` overflowed
/// `blocks * 8` in getattr/lookup (`attr_of`).
#[test]
fn corrupt_inode_block_count_getattr() {
    use rollfs_core::{Filesystem, MountOptions, Timestamp};
    let (dev, ino) = image_with_inode_blocks(u64::MAX);
    let mut fs =
        Filesystem::mount(dev, &MountOptions { read_only: true, ..Default::default() }, Timestamp::new(3, 0)).unwrap();
    let _ = fs.getattr(ino);
    let _ = fs.lookup(1, b"f");
}

/// Same family: allocating a block for a file whose corrupt `i_blocks` is `u64::MAX` must
/// not overflow (inode.rs `put_dirty_block`, recovery.rs when a roll-forward maps a hole).
#[test]
fn corrupt_inode_block_count_write() {
    use rollfs_core::{Filesystem, MountOptions, Timestamp};
    let (dev, ino) = image_with_inode_blocks(u64::MAX);
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), Timestamp::new(3, 0)).unwrap();
    let _ = fs.write(ino, 5 * 4096, b"x", Timestamp::new(4, 0));
    let _ = fs.sync(Timestamp::new(5, 0));
}
