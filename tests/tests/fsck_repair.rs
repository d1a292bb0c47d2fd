//! `rollfs fsck --repair` through the binary: exit codes (0 clean, 1 fixed, 4 left
//! uncorrected), one line per problem and per fix, and a repaired image that a real FUSE
//! mount serves. The images are built and damaged with the core on an in-memory device and
//! written to an image file.

use rollfs_core::checkpoint::Checkpoint;
use rollfs_core::nat::{Nat, NatEntry};
use rollfs_core::superblock::read_superblock;
use rollfs_core::*;
use rollfs_tests::*;
use std::ffi::OsStr;
use std::os::unix::fs::FileExt;
use std::path::Path;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const C: Credentials = Credentials { uid: 0, gid: 0 };

/// /a.txt, /dir/b.bin (40 KiB), /dir/c: a small image with 64 KiB segments.
fn populated() -> MemDevice {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [3; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(16384), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let a = fs.create(1, b"a.txt", 0o644, C, T).unwrap().ino;
    fs.write(a, 0, b"hello, repaired world\n", T).unwrap();
    let d = fs.mkdir(1, b"dir", 0o755, C, T).unwrap().ino;
    let b = fs.create(d, b"b.bin", 0o644, C, T).unwrap().ino;
    fs.write(b, 0, &pattern(40 << 10), T).unwrap();
    let c = fs.create(d, b"c", 0o644, C, T).unwrap().ino;
    fs.write(c, 0, b"c", T).unwrap();
    fs.unmount(T).unwrap()
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 253) as u8).collect()
}

fn save(dev: &mut MemDevice, path: &Path) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(dev.block_count() * BLOCK_SIZE as u64).unwrap();
    let mut b = [0u8; BLOCK_SIZE];
    for blk in 0..dev.block_count() {
        dev.read(blk, &mut b).unwrap();
        if b.iter().any(|&x| x != 0) {
            f.write_all_at(&b, blk * BLOCK_SIZE as u64).unwrap();
        }
    }
}

fn load(path: &Path) -> MemDevice {
    let data = std::fs::read(path).unwrap();
    let mut dev = MemDevice::new((data.len() / BLOCK_SIZE) as u64);
    for (i, chunk) in data.chunks(BLOCK_SIZE).enumerate() {
        if chunk.iter().any(|&x| x != 0) {
            dev.write(i as u64, chunk.try_into().unwrap(), WriteFlags::empty()).unwrap();
        }
    }
    dev
}

fn lookup(dev: &MemDevice, path: &str) -> Ino {
    let mut fs = Filesystem::mount(dev.clone(), &MountOptions { read_only: true, ..Default::default() }, T).unwrap();
    path.split('/').filter(|p| !p.is_empty()).fold(1, |ino, p| fs.lookup(ino, p.as_bytes()).unwrap().ino)
}

/// Zeroes node `nid`'s NAT entry (block and journal) with valid checksums.
fn lose_nat_entry(dev: &mut MemDevice, nid: Nid) {
    let g = read_superblock(dev).unwrap().geometry;
    let (mut cp, pack) = Checkpoint::read_newest(dev, &g).unwrap();
    let i = nid / layout::NAT_ENTRIES_PER_BLOCK;
    let b = dev.block_mut(g.nat_addr(i, cp.nat_slots[i as usize]));
    b[nat::entry_offset(nid)..][..8].fill(0);
    codec::seal(b);
    for j in cp.nat_journal.iter_mut().filter(|j| j.0 == nid) {
        j.1 = NatEntry::default();
    }
    for (k, blk) in cp.encode(&g, pack).unwrap().iter().enumerate() {
        dev.write(g.cp_pack_addr(pack) + k as u64, blk, WriteFlags::empty()).unwrap();
    }
}

fn node_addr(dev: &mut MemDevice, nid: Nid) -> u64 {
    let g = read_superblock(dev).unwrap().geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    Nat::load(dev, &g, cp.nat_slots.clone(), &cp.nat_journal, cp.version).unwrap().get(nid).unwrap().addr as u64
}

fn fsck(args: &[&str], img: &Path) -> (i32, String, String) {
    let mut a: Vec<&OsStr> = vec![OsStr::new("fsck")];
    a.extend(args.iter().map(OsStr::new));
    a.push(img.as_os_str());
    let o = rollfs(&a);
    (o.status.code().unwrap_or(-1), stdout(&o), stderr(&o))
}

#[test]
fn repair_of_a_lost_nat_entry_exits_1_and_the_image_mounts_clean() {
    let img = Image::raw(0);
    let mut dev = populated();
    let b = lookup(&dev, "/dir/b.bin");
    lose_nat_entry(&mut dev, b);
    save(&mut dev, &img.path);
    let p = img.path.display().to_string();

    let (code, out, err) = fsck(&[], &img.path);
    assert_eq!(code, 4, "{out}{err}");
    assert!(out.contains(&format!("{p}: block ")) && out.contains(&format!("points to free inode {b}")), "{out}");
    assert!(out.contains("run `rollfs fsck --repair` to repair"), "{out}");

    let (code, out, err) = fsck(&["--repair"], &img.path);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&format!("points to free inode {b}")), "{out}");
    assert!(
        out.lines().any(|l| l.starts_with(&format!("{p}: fixed: inode {b}: its NAT entry is free; NAT entry rebuilt"))
            && l.contains(" block ")),
        "{out}"
    );
    assert!(out.contains(&format!("{p}: repaired: ")) && out.contains("; clean,"), "{out}");

    let (code, out, err) = fsck(&[], &img.path);
    assert_eq!(code, 0, "{out}{err}");
    let m = img.mount();
    assert_eq!(std::fs::read(m.path("dir/b.bin")).unwrap(), pattern(40 << 10));
    assert_eq!(std::fs::read(m.path("a.txt")).unwrap(), b"hello, repaired world\n");
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn repair_of_a_broken_node_crc_reports_the_block_and_what_was_dropped() {
    let img = Image::raw(0);
    let mut dev = populated();
    let c = lookup(&dev, "/dir/c");
    let a = node_addr(&mut dev, c);
    dev.block_mut(a)[123] ^= 0x20;
    save(&mut dev, &img.path);
    let p = img.path.display().to_string();
    let (code, out, err) = fsck(&["-y"], &img.path);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&format!("{p}: inode {c}: corruption at block {a}: node: checksum mismatch")), "{out}");
    assert!(out.contains(&format!("{p}: fixed: block ")) && out.contains("entry \"c\" of directory "), "{out}");
    assert!(out.contains(&format!("names inode {c}, which is lost (corruption at block {a}")), "{out}");
    let mut dev = load(&img.path);
    assert!(fsck::check(&mut dev).unwrap().is_clean());
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let d = fs.lookup(1, b"dir").unwrap().ino;
    assert_eq!(fs.lookup(d, b"c"), Err(Error::NotFound));
    let b = fs.lookup(d, b"b.bin").unwrap();
    assert_eq!(b.size, 40 << 10);
}

#[test]
fn repair_of_a_clean_image_exits_0_and_writes_nothing() {
    let img = Image::raw(0);
    save(&mut populated(), &img.path);
    let before = std::fs::read(&img.path).unwrap();
    let (code, out, err) = fsck(&["--repair"], &img.path);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(": clean, 5 inodes"), "{out}");
    assert!(std::fs::read(&img.path).unwrap() == before, "a repair of a clean image changed it");
}

#[test]
fn destroyed_checkpoint_pack_is_reported_and_rewritten() {
    let img = Image::raw(0);
    let mut dev = populated();
    let g = read_superblock(&mut dev).unwrap().geometry;
    let (_, pack) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    let other = 1 - pack;
    dev.block_mut(g.cp_pack_addr(other)).fill(0x5a);
    save(&mut dev, &img.path);
    let (code, out, _) = fsck(&[], &img.path);
    assert_eq!(code, 4, "{out}");
    let want = format!("checkpoint pack {other} (block {}): destroyed (bad magic)", g.cp_pack_addr(other));
    assert!(out.contains(&want), "{out}");
    let (code, out, err) = fsck(&["--repair", "--json"], &img.path);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("\"clean\":true") && out.contains("\"repaired\":true"), "{out}");
    assert!(out.contains("rewritten with checkpoint"), "{out}");
    let mut dev = load(&img.path);
    for p in 0..2 {
        assert!(Checkpoint::read_pack(&mut dev, &g, p).unwrap().is_some(), "pack {p}");
    }
    img.assert_fsck_clean();
}

#[test]
fn unrepairable_image_exits_4_with_the_reason() {
    let img = Image::raw(0);
    let mut dev = populated();
    let g = read_superblock(&mut dev).unwrap().geometry;
    for p in 0..2 {
        dev.block_mut(g.cp_pack_addr(p)).fill(0);
    }
    save(&mut dev, &img.path);
    let before = std::fs::read(&img.path).unwrap();
    let (code, out, err) = fsck(&[], &img.path);
    assert_eq!(code, 4, "{out}{err}");
    assert!(out.contains("cannot mount: corruption at block 2: no valid checkpoint pack"), "{out}");
    let (code, out, err) = fsck(&["--repair"], &img.path);
    assert_eq!(code, 4, "{out}{err}");
    assert!(err.contains("cannot repair: corruption at block 2: no valid checkpoint pack"), "{err}");
    assert!(std::fs::read(&img.path).unwrap() == before, "a failed repair changed the image");
}
