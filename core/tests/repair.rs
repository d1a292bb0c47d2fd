//! `fsck::repair`: one test per kind of corruption. Each corrupts a populated image the
//! way the corruption would look on disk, then checks that fsck detects it (with a
//! message naming the block), that the repair says what it fixed, that the repaired image
//! mounts and checks clean, and that everything the corruption did not touch is intact.

use rollfs_core::checkpoint::Checkpoint;
use rollfs_core::layout::*;
use rollfs_core::nat::{Nat, NatEntry};
use rollfs_core::sit::Sit;
use rollfs_core::superblock::{read_superblock, Superblock};
use rollfs_core::*;
use std::collections::BTreeMap;

const T: Timestamp = Timestamp::new(1_700_000_000, 0);
const LATER: Timestamp = Timestamp::new(1_700_000_100, 0);
const C: Credentials = Credentials { uid: 1000, gid: 1000 };
const UUID: [u8; 16] = [7; 16];

/// Blocks of /big: more than the inode maps, so it has a direct node.
const BIG_BLOCKS: usize = 1000;

fn big_block(i: usize) -> Vec<u8> {
    vec![(i % 251) as u8 + 1; BLOCK_SIZE]
}

fn mkfs() -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 16, uuid: UUID, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), T).unwrap()
}

/// A populated image, cleanly unmounted:
/// /dir/f0..f9 (data, an xattr), /big (1000 blocks), /sub/deeper/file, /sub/s0..s2,
/// /hard with a second name /dir/hardlink, /sym → dir/f1, /empty (no data).
fn image() -> MemDevice {
    let mut fs = mkfs();
    let d = fs.mkdir(1, b"dir", 0o755, C, T).unwrap().ino;
    for i in 0..10u8 {
        let f = fs.create(d, format!("f{i}").as_bytes(), 0o644, C, T).unwrap().ino;
        fs.write(f, 0, &vec![b'a' + i; 5000 + i as usize * 300], T).unwrap();
        fs.setxattr(f, b"user.k", &[i], XattrSetMode::Any, T).unwrap();
    }
    let big = fs.create(1, b"big", 0o644, C, T).unwrap().ino;
    let mut data = Vec::with_capacity(BIG_BLOCKS * BLOCK_SIZE);
    for i in 0..BIG_BLOCKS {
        data.extend_from_slice(&big_block(i));
    }
    fs.write(big, 0, &data, T).unwrap();
    let sub = fs.mkdir(1, b"sub", 0o755, C, T).unwrap().ino;
    let deeper = fs.mkdir(sub, b"deeper", 0o755, C, T).unwrap().ino;
    let f = fs.create(deeper, b"file", 0o600, C, T).unwrap().ino;
    fs.write(f, 0, b"deep down", T).unwrap();
    for i in 0..3 {
        let f = fs.create(sub, format!("s{i}").as_bytes(), 0o644, C, T).unwrap().ino;
        fs.write(f, 0, format!("sub file {i}").as_bytes(), T).unwrap();
    }
    let h = fs.create(1, b"hard", 0o644, C, T).unwrap().ino;
    fs.write(h, 0, b"two names", T).unwrap();
    fs.link(h, d, b"hardlink", T).unwrap();
    fs.symlink(1, b"sym", b"dir/f1", C, T).unwrap();
    fs.create(1, b"empty", 0o644, C, T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    dev
}

// ---- looking at an image -----------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    kind: FileType,
    size: u64,
    nlink: u32,
    data: Vec<u8>,
    xattrs: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Everything reachable: path → what is there (file contents read in full).
fn snapshot(dev: &MemDevice) -> BTreeMap<String, Seen> {
    let mut fs = Filesystem::mount(dev.clone(), &MountOptions { read_only: true, ..Default::default() }, T)
        .expect("the image mounts");
    let mut out = BTreeMap::new();
    let mut stack = vec![(1u32, String::new())];
    while let Some((d, path)) = stack.pop() {
        let mut entries = Vec::new();
        fs.readdir(d, 2, &mut |e| {
            entries.push(e);
            true
        })
        .unwrap();
        for e in entries {
            let p = format!("{path}/{}", String::from_utf8_lossy(&e.name));
            let a = fs.getattr(e.ino).unwrap();
            let data = match a.kind {
                FileType::Regular => {
                    let mut buf = vec![0u8; a.size as usize];
                    let n = fs.read(e.ino, 0, &mut buf).unwrap();
                    buf.truncate(n);
                    buf
                }
                FileType::Symlink => fs.readlink(e.ino).unwrap(),
                _ => Vec::new(),
            };
            let mut xattrs = Vec::new();
            for k in fs.listxattr(e.ino).unwrap() {
                let v = fs.getxattr(e.ino, &k).unwrap();
                xattrs.push((k, v));
            }
            if a.kind == FileType::Directory {
                stack.push((e.ino, p.clone()));
            }
            out.insert(p, Seen { kind: a.kind, size: a.size, nlink: a.nlink, data, xattrs });
        }
    }
    out
}

fn ino_of(dev: &MemDevice, path: &str) -> Ino {
    let mut fs = Filesystem::mount(dev.clone(), &MountOptions { read_only: true, ..Default::default() }, T).unwrap();
    let mut ino = 1;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        ino = fs.lookup(ino, part.as_bytes()).unwrap().ino;
    }
    ino
}

fn sb(dev: &mut MemDevice) -> Superblock {
    read_superblock(dev).unwrap()
}

fn seed() -> u32 {
    codec::crc(&UUID)
}

fn nat_entry(dev: &mut MemDevice, nid: Nid) -> NatEntry {
    let g = sb(dev).geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    let nat = Nat::load(dev, &g, cp.nat_slots.clone(), &cp.nat_journal, cp.version).unwrap();
    nat.get(nid).unwrap()
}

fn node_addr(dev: &mut MemDevice, nid: Nid) -> u64 {
    nat_entry(dev, nid).addr as u64
}

/// Rewrites the newest checkpoint pack after `f` changed it.
fn rewrite_cp(dev: &mut MemDevice, f: impl FnOnce(&mut Checkpoint)) {
    let g = sb(dev).geometry;
    let (mut cp, pack) = Checkpoint::read_newest(dev, &g).unwrap();
    f(&mut cp);
    for (i, b) in cp.encode(&g, pack).unwrap().iter().enumerate() {
        dev.write(g.cp_pack_addr(pack) + i as u64, b, WriteFlags::empty()).unwrap();
    }
}

/// Sets node `nid`'s NAT entry on disk, in its NAT block and (if it is there) in the
/// checkpoint's NAT journal, each with valid checksums: exactly one entry changed.
fn set_nat_entry(dev: &mut MemDevice, nid: Nid, e: NatEntry) {
    let g = sb(dev).geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    let i = nid / NAT_ENTRIES_PER_BLOCK;
    let addr = g.nat_addr(i, cp.nat_slots[i as usize]);
    let b = dev.block_mut(addr);
    let off = nat::entry_offset(nid);
    codec::put_u32(&mut b[..], off, e.ino);
    codec::put_u32(&mut b[..], off + 4, e.addr);
    codec::seal(b);
    rewrite_cp(dev, |cp| {
        for j in cp.nat_journal.iter_mut() {
            if j.0 == nid {
                j.1 = e;
            }
        }
    });
}

/// Changes segment `segno`'s SIT entry on disk (block and journal), keeping checksums.
fn modify_sit_entry(dev: &mut MemDevice, segno: u32, f: impl Fn(&mut [u8])) {
    let g = sb(dev).geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    let i = segno / SIT_ENTRIES_PER_BLOCK;
    let addr = g.sit_addr(i, cp.sit_slots[i as usize]);
    let b = dev.block_mut(addr);
    let off = (segno % SIT_ENTRIES_PER_BLOCK) as usize * SIT_ENTRY_SIZE;
    f(&mut b[off..off + SIT_ENTRY_SIZE]);
    codec::seal(b);
    rewrite_cp(dev, |cp| {
        for j in cp.sit_journal.iter_mut() {
            if j.0 == segno {
                let mut raw = [0u8; SIT_ENTRY_SIZE];
                j.1.encode(&mut raw);
                f(&mut raw);
                // An entry whose count disagrees with its bitmap cannot be decoded; write
                // the raw bytes through a decoded copy of what can be.
                let mut e = j.1;
                e.valid = codec::get_u16(&raw, 0);
                e.bitmap.copy_from_slice(&raw[16..16 + SIT_BITMAP_BYTES]);
                j.1 = e;
            }
        }
    });
}

/// Reseals a node block after a test changed it (as if it had been written that way).
fn reseal_node(dev: &mut MemDevice, addr: u64) {
    codec::seal_seeded(dev.block_mut(addr), seed());
}

/// The address of the dentry block of directory `dir` holding `name`, and the entry's slot.
fn dentry_of(dev: &mut MemDevice, dir: Ino, name: &[u8]) -> (u64, u32) {
    let ia = node_addr(dev, dir);
    let ib = *dev.block_mut(ia);
    for idx in 0..ADDRS_PER_INODE {
        let a = node::inode::addr(&ib, idx);
        if a == 0 {
            continue;
        }
        let b = *dev.block_mut(a as u64);
        let db = dir::decode_block(idx as u64, &b, a as u64).unwrap();
        let slot = db.entries().find(|e| e.name == name).map(|e| e.slot);
        if let Some(slot) = slot {
            return (a as u64, slot);
        }
    }
    panic!("no entry {name:?} in directory {dir}");
}

/// Removes an entry by editing its dentry block (as a lost update would leave it).
fn erase_dentry(dev: &mut MemDevice, dir: Ino, name: &[u8]) {
    let (addr, slot) = dentry_of(dev, dir, name);
    let b = dev.block_mut(addr);
    let n = name.len().div_ceil(dir::SLOT_NAME_LEN);
    for s in slot as usize..slot as usize + n {
        b[dir::RECORDS_OFFSET + s * dir::RECORD_SIZE..][..dir::RECORD_SIZE].fill(0);
        b[dir::NAMES_OFFSET + s * dir::SLOT_NAME_LEN..][..dir::SLOT_NAME_LEN].fill(0);
        b[dir::BITMAP_OFFSET + s / 8] &= !(1 << (s % 8));
    }
    let count = codec::get_u16(&b[..], dir::HDR_COUNT_OFFSET) - n as u16;
    codec::put_u16(&mut b[..], dir::HDR_COUNT_OFFSET, count);
    codec::seal(b);
}

// ---- the common shape of a corruption test ---------------------------------------------

/// Checks that fsck reports the damage (one problem containing `detected`), repairs it
/// (one fix containing `fixed`), and that the result mounts, checks clean and stays clean
/// through a mount, a change and an unmount. Returns the repaired device.
#[track_caller]
fn detect_and_repair(mut dev: MemDevice, detected: &str, fixed: &str) -> (MemDevice, fsck::RepairReport) {
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.problems.iter().any(|p| p.contains(detected)), "fsck did not report {detected:?}: {:#?}", r.problems);
    let rep = fsck::repair(&mut dev, LATER).unwrap();
    if std::env::var_os("REPAIR_VERBOSE").is_some() {
        eprintln!("problems:\n  {}\nfixes:\n  {}", rep.before.problems.join("\n  "), rep.fixes.join("\n  "));
    }
    assert_eq!(rep.before.problems, r.problems);
    assert!(rep.fixes.iter().any(|f| f.contains(fixed)), "no fix {fixed:?} in {:#?}", rep.fixes);
    assert!(
        rep.is_clean(),
        "not clean after repair: {:#?}\nunfixed {:#?}\nfixes {:#?}",
        rep.after.problems,
        rep.unfixed,
        rep.fixes
    );
    assert!(rep.changed());
    let again = fsck::check(&mut dev).unwrap();
    assert!(again.is_clean(), "{:?}", again.problems);
    // Use it: mount, change, unmount, check.
    let mut fs = Filesystem::mount(dev.clone(), &MountOptions::default(), LATER).unwrap();
    let f = fs.create(1, b"after-repair", 0o644, C, LATER).unwrap().ino;
    fs.write(f, 0, b"still works", LATER).unwrap();
    let mut d2 = fs.unmount(LATER).unwrap();
    let r = fsck::check(&mut d2).unwrap();
    assert!(r.is_clean(), "after use: {:?}", r.problems);
    (dev, rep)
}

/// Asserts that `after` is `before` except for the paths `changed` (and /lost+found).
#[track_caller]
fn intact_except(before: &BTreeMap<String, Seen>, after: &BTreeMap<String, Seen>, changed: &[&str]) {
    for (p, s) in before {
        if changed.iter().any(|c| p == c || p.starts_with(&format!("{c}/"))) {
            continue;
        }
        assert_eq!(after.get(p), Some(s), "{p} changed by the repair");
    }
    for p in after.keys() {
        if !before.contains_key(p) && !p.starts_with("/lost+found") {
            assert!(changed.iter().any(|c| p == c), "{p} appeared after the repair");
        }
    }
}

// ---- the tests ---------------------------------------------------------------------------

#[test]
fn clean_image_is_left_alone() {
    let mut dev = image();
    let writes = dev.counters.writes;
    let rep = fsck::repair(&mut dev, LATER).unwrap();
    assert!(rep.before.is_clean() && rep.is_clean() && !rep.changed(), "{rep:?}");
    assert_eq!(dev.counters.writes, writes, "a repair of a clean image wrote");
}

#[test]
fn lost_nat_entry_of_an_inode_is_rebuilt() {
    let mut dev = image();
    let before = snapshot(&dev);
    let f = ino_of(&dev, "/dir/f4");
    set_nat_entry(&mut dev, f, NatEntry::default());
    let (dev, _) = detect_and_repair(
        dev,
        &format!("points to free inode {f}"),
        &format!("inode {f}: its NAT entry is free; NAT entry rebuilt"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn lost_nat_entry_of_a_direct_node_is_rebuilt() {
    let mut dev = image();
    let before = snapshot(&dev);
    let big = ino_of(&dev, "/big");
    let ia = node_addr(&mut dev, big);
    let dn = node::inode::nid(dev.block_mut(ia), 0);
    assert_ne!(dn, 0);
    set_nat_entry(&mut dev, dn, NatEntry::default());
    let (dev, _) = detect_and_repair(
        dev,
        &format!("node {dn} (direct node of inode {big}): NAT entry is free"),
        &format!("node {dn} (direct node of inode {big}): its NAT entry is free; NAT entry rebuilt"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

/// Segment of the first data block of `path`.
fn data_segment(dev: &mut MemDevice, path: &str) -> (u32, u64) {
    let ino = ino_of(dev, path);
    let ia = node_addr(dev, ino);
    let a = node::inode::addr(dev.block_mut(ia), 0);
    let g = sb(dev).geometry;
    (g.segno_of(a), a as u64)
}

#[test]
fn sit_entry_missing_a_valid_block_is_recomputed() {
    let mut dev = image();
    let before = snapshot(&dev);
    let (segno, addr) = data_segment(&mut dev, "/big");
    let g = sb(&mut dev).geometry;
    let off = g.blkoff_of(addr as u32) as usize;
    // Count and bitmap agree with each other, but not with the tree.
    modify_sit_entry(&mut dev, segno, |e| {
        e[16 + off / 8] &= !(1 << (off % 8));
        let v = codec::get_u16(e, 0) - 1;
        codec::put_u16(e, 0, v);
    });
    let (dev, _) = detect_and_repair(
        dev,
        &format!("block {addr}: in use but free in the SIT (segment {segno})"),
        &format!("SIT segment {segno} (blocks"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn sit_entry_with_a_valid_count_its_bitmap_contradicts_is_rebuilt() {
    let mut dev = image();
    let before = snapshot(&dev);
    let (segno, _) = data_segment(&mut dev, "/dir/f3");
    modify_sit_entry(&mut dev, segno, |e| {
        let v = codec::get_u16(e, 0) + 3;
        codec::put_u16(e, 0, v);
    });
    let (dev, _) = detect_and_repair(
        dev,
        "SIT: valid count does not match the bitmap",
        "SIT: valid count does not match the bitmap: its entries are rebuilt from the tree",
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn sit_entry_marking_a_free_block_valid_is_recomputed() {
    let mut dev = image();
    let before = snapshot(&dev);
    let g = sb(&mut dev).geometry;
    let (cp, _) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    let sit = Sit::load(&mut dev, &g, cp.sit_slots.clone(), &cp.sit_journal, cp.version).unwrap();
    // A block of a free segment (not an open log's, so below no write position).
    let open: Vec<u32> = cp.logs.iter().map(|l| l.segno).collect();
    let segno = (0..g.main_segments).find(|s| !open.contains(s) && sit.get(*s).valid == 0).expect("a free segment");
    let off = 3;
    modify_sit_entry(&mut dev, segno, |e| {
        e[16 + off as usize / 8] |= 1 << (off % 8);
        let v = codec::get_u16(e, 0) + 1;
        codec::put_u16(e, 0, v);
    });
    let addr = g.seg_start(segno) + off;
    let (dev, _) = detect_and_repair(
        dev,
        &format!("block {addr}: valid in the SIT but owned by nothing (segment {segno})"),
        &format!("SIT segment {segno} (blocks"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

/// Disagreeing blocks on both sides of a segment boundary make one message (fsck compares
/// whole segments first and looks at blocks only where a segment disagrees).
#[test]
fn sit_run_of_free_blocks_marked_valid_across_segments_is_one_message() {
    let mut dev = image();
    let g = sb(&mut dev).geometry;
    let (cp, _) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    let sit = Sit::load(&mut dev, &g, cp.sit_slots.clone(), &cp.sit_journal, cp.version).unwrap();
    let open: Vec<u32> = cp.logs.iter().map(|l| l.segno).collect();
    let free = |s: u32| !open.contains(&s) && sit.get(s).valid == 0;
    let segno = (0..g.main_segments - 1).find(|&s| free(s) && free(s + 1)).expect("two free segments in a row");
    let last = g.segment_blocks - 1;
    for (seg, offs) in [(segno, vec![last - 1, last]), (segno + 1, vec![0, 1, 2])] {
        modify_sit_entry(&mut dev, seg, |e| {
            for &off in &offs {
                e[16 + off as usize / 8] |= 1 << (off % 8);
            }
            let v = codec::get_u16(e, 0) + offs.len() as u16;
            codec::put_u16(e, 0, v);
        });
    }
    let (first, end) = (g.seg_start(segno) + last - 1, g.seg_start(segno + 1) + 2);
    let r = fsck::check(&mut dev).unwrap();
    let want =
        format!("blocks {first}..={end}: valid in the SIT but owned by nothing (segments {segno}..={})", segno + 1);
    assert!(r.problems.contains(&want), "fsck did not report {want:?}: {:#?}", r.problems);
    let sit_lines = r.problems.iter().filter(|p| p.contains("owned by nothing") || p.contains("free in the SIT"));
    assert_eq!(sit_lines.count(), 1, "one message for the run: {:#?}", r.problems);
}

#[test]
fn dangling_dentry_is_removed() {
    let mut dev = image();
    let before = snapshot(&dev);
    let d = ino_of(&dev, "/dir");
    let f = ino_of(&dev, "/dir/f3");
    // The inode was freed and its block reused, but the name stayed.
    let a = node_addr(&mut dev, f);
    set_nat_entry(&mut dev, f, NatEntry::default());
    dev.block_mut(a).fill(0);
    let (dev, _) = detect_and_repair(
        dev,
        &format!("entry \"f3\" of directory {d} points to free inode {f}"),
        &format!("entry \"f3\" of directory {d} names inode {f}, which is lost (its NAT entry is free): removed"),
    );
    let after = snapshot(&dev);
    assert!(!after.contains_key("/dir/f3"));
    intact_except(&before, &after, &["/dir/f3"]);
}

#[test]
fn dentry_naming_a_node_that_is_not_an_inode_is_removed() {
    let mut dev = image();
    let before = snapshot(&dev);
    let d = ino_of(&dev, "/dir");
    let big = ino_of(&dev, "/big");
    let ia = node_addr(&mut dev, big);
    let dn = node::inode::nid(dev.block_mut(ia), 0);
    let f = ino_of(&dev, "/dir/f6");
    // Retarget the entry of f6 at /big's direct node.
    let (addr, slot) = dentry_of(&mut dev, d, b"f6");
    let b = dev.block_mut(addr);
    codec::put_u32(&mut b[..], dir::RECORDS_OFFSET + slot as usize * dir::RECORD_SIZE + dir::REC_INO, dn);
    codec::seal(b);
    let (dev, rep) =
        detect_and_repair(dev, &format!("points to free inode {dn}"), &format!("names inode {dn}, which is lost"));
    // f6 lost its only name: it has data, so it is kept in /lost+found.
    assert!(rep.fixes.iter().any(|m| m.contains(&format!("linked as /lost+found/#{f}"))), "{:#?}", rep.fixes);
    let after = snapshot(&dev);
    let f6 = before["/dir/f6"].clone();
    assert_eq!(after[&format!("/lost+found/#{f}")], f6);
    intact_except(&before, &after, &["/dir/f6"]);
}

#[test]
fn wrong_link_count_of_a_file_is_set_to_its_names() {
    let mut dev = image();
    let before = snapshot(&dev);
    let h = ino_of(&dev, "/hard");
    let a = node_addr(&mut dev, h);
    codec::put_u32(&mut dev.block_mut(a)[..], node::inode::OFF_LINKS, 5);
    reseal_node(&mut dev, a);
    let (dev, _) = detect_and_repair(
        dev,
        &format!("inode {h} (block {a}): link count 5, but 2 names found"),
        &format!("inode {h} (block {a}): link count 5, but 2 names found: set to 2"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn wrong_link_count_of_a_directory_is_set_to_its_subdirectories() {
    let mut dev = image();
    let before = snapshot(&dev);
    let s = ino_of(&dev, "/sub");
    let a = node_addr(&mut dev, s);
    codec::put_u32(&mut dev.block_mut(a)[..], node::inode::OFF_LINKS, 1);
    reseal_node(&mut dev, a);
    let (dev, _) = detect_and_repair(
        dev,
        &format!("directory {s} (block {a}): link count 1, but 1 subdirectories"),
        &format!("directory {s} (block {a}): link count 1, but 1 subdirectories: set to 3"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

/// An image crashed with /tmp unlinked but open (an orphan at the checkpoint).
fn image_with_orphan() -> (MemDevice, Ino) {
    let mut fs = Filesystem::mount(image(), &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"tmp", 0o644, C, T).unwrap().ino;
    fs.write(f, 0, &vec![9u8; 20_000], T).unwrap();
    fs.open(f).unwrap();
    fs.unlink(1, b"tmp", T).unwrap();
    fs.sync(T).unwrap();
    let mut dev = fs.into_device();
    let g = sb(&mut dev).geometry;
    assert_eq!(Checkpoint::read_newest(&mut dev, &g).unwrap().0.orphans, vec![f]);
    (dev, f)
}

#[test]
fn inode_with_no_name_and_no_orphan_entry_is_freed() {
    let (mut dev, f) = image_with_orphan();
    let before = snapshot(&dev);
    // The orphan list lost its entry.
    rewrite_cp(&mut dev, |cp| cp.orphans.clear());
    let a = node_addr(&mut dev, f);
    let (dev, rep) = detect_and_repair(
        dev,
        &format!("block {a}: inode {f} (of inode {f}) is in the NAT but unreachable"),
        &format!("inode {f} at block {a}: no name, no links and not an orphan: freed"),
    );
    assert!(rep.after.data_blocks < rep.before.data_blocks + 5, "{rep:?}");
    let mut fs = Filesystem::mount(dev.clone(), &MountOptions::default(), T).unwrap();
    assert_eq!(fs.getattr(f), Err(Error::NotFound));
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn orphan_list_entry_left_behind_for_a_linked_file_is_dropped() {
    let mut dev = image();
    let before = snapshot(&dev);
    let f = ino_of(&dev, "/dir/f1");
    rewrite_cp(&mut dev, |cp| cp.orphans.push(f));
    let (dev, _) = detect_and_repair(
        dev,
        &format!("orphan list: inode {f} is still linked"),
        &format!("orphan list: inode {f} is still linked: entry dropped (the file is kept)"),
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn orphan_list_entry_left_behind_for_a_free_inode_is_dropped() {
    let mut dev = image();
    let before = snapshot(&dev);
    rewrite_cp(&mut dev, |cp| cp.orphans.push(2030));
    let (dev, _) = detect_and_repair(
        dev,
        "orphan list: inode 2030 is not in use",
        "orphan list: inode 2030 is not an inode in use (its NAT entry is free): entry dropped",
    );
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn orphans_are_freed_as_a_mount_would_when_something_else_needs_repair() {
    let (mut dev, f) = image_with_orphan();
    let before = snapshot(&dev);
    let h = ino_of(&dev, "/hard");
    let a = node_addr(&mut dev, h);
    codec::put_u32(&mut dev.block_mut(a)[..], node::inode::OFF_LINKS, 7);
    reseal_node(&mut dev, a);
    let (dev, _) = detect_and_repair(dev, "link count 7", &format!("orphan inode {f} at block"));
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn unreachable_files_go_to_lost_found_or_are_freed_when_empty() {
    let mut dev = image();
    let before = snapshot(&dev);
    let d = ino_of(&dev, "/dir");
    let f5 = ino_of(&dev, "/dir/f5");
    let empty = ino_of(&dev, "/empty");
    let sub = ino_of(&dev, "/sub");
    erase_dentry(&mut dev, d, b"f5");
    erase_dentry(&mut dev, 1, b"empty");
    erase_dentry(&mut dev, 1, b"sub");
    let (dev, rep) = detect_and_repair(
        dev,
        &format!("inode {f5} (of inode {f5}) is in the NAT but unreachable"),
        &format!("inode {f5} (Regular, 6500 bytes) had no name: linked as /lost+found/#{f5}"),
    );
    assert!(rep.fixes.iter().any(|m| m.contains(&format!("inode {empty} at block"))
        && m.contains("no name and empty (Regular): freed")), "{:#?}", rep.fixes);
    assert!(rep.fixes.iter().any(|m| m.contains(&format!("linked as /lost+found/#{sub}"))), "{:#?}", rep.fixes);
    let after = snapshot(&dev);
    assert_eq!(after[&format!("/lost+found/#{f5}")], before["/dir/f5"]);
    // The directory keeps its whole subtree.
    for (p, s) in before.iter().filter(|(p, _)| p.starts_with("/sub/")) {
        let moved = p.replacen("/sub/", &format!("/lost+found/#{sub}/"), 1);
        assert_eq!(after.get(&moved), Some(s), "{p}");
    }
    assert_eq!(after[&format!("/lost+found/#{sub}")].kind, FileType::Directory);
    assert_eq!(after["/lost+found"].nlink, 3);
    intact_except(&before, &after, &["/dir/f5", "/empty", "/sub"]);
}

#[test]
fn destroyed_checkpoint_pack_is_rewritten() {
    let mut dev = image();
    let before = snapshot(&dev);
    let g = sb(&mut dev).geometry;
    let (cp, pack) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    let other = 1 - pack;
    let base = g.cp_pack_addr(other);
    for i in 0..g.cp_pack_blocks as u64 {
        dev.block_mut(base + i).fill(0xa5);
    }
    let (mut dev, _) = detect_and_repair(
        dev,
        &format!("checkpoint pack {other} (block {base}): destroyed (bad magic); pack {pack} (version {}) is in use", cp.version),
        &format!("checkpoint pack {other} (block {base}): destroyed (bad magic); pack {pack} (version {}) is in use: rewritten with checkpoint {}", cp.version, cp.version + 1),
    );
    for p in 0..2 {
        assert!(Checkpoint::read_pack(&mut dev, &g, p).unwrap().is_some(), "pack {p} still invalid");
    }
    intact_except(&before, &snapshot(&dev), &[]);
}

#[test]
fn destroyed_newest_checkpoint_pack_falls_back_to_the_other() {
    let dev = image();
    let before = snapshot(&dev);
    // One more checkpoint: the newest pack has a file the other does not.
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), T).unwrap();
    let f = fs.create(1, b"late", 0o644, C, T).unwrap().ino;
    fs.write(f, 0, b"only in the newest checkpoint", T).unwrap();
    let mut dev = fs.unmount(T).unwrap();
    let g = sb(&mut dev).geometry;
    let (cp, pack) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    dev.block_mut(g.cp_pack_addr(pack)).fill(0);
    let (mut dev, _) = detect_and_repair(
        dev,
        &format!(
            "checkpoint pack {pack} (block {}): destroyed (bad magic); pack {} (version {}) is in use",
            g.cp_pack_addr(pack),
            1 - pack,
            cp.version - 1
        ),
        &format!("rewritten with checkpoint {}", cp.version),
    );
    for p in 0..2 {
        assert!(Checkpoint::read_pack(&mut dev, &g, p).unwrap().is_some(), "pack {p} still invalid");
    }
    // The image is what the older checkpoint held.
    assert_eq!(snapshot(&dev), before);
}

#[test]
fn broken_crc_of_a_direct_node_holes_the_file_there() {
    // The first direct node maps file blocks A..A + P; /big goes on into the second.
    const HOLE_END: usize = (ADDRS_PER_INODE + ADDRS_PER_BLOCK) as usize;
    const { assert!(HOLE_END < BIG_BLOCKS) };
    let mut dev = image();
    let before = snapshot(&dev);
    let big = ino_of(&dev, "/big");
    let ia = node_addr(&mut dev, big);
    let dn = node::inode::nid(dev.block_mut(ia), 0);
    let a = node_addr(&mut dev, dn);
    dev.block_mut(a)[100] ^= 0x10;
    let (dev, _) = detect_and_repair(
        dev,
        &format!("node {dn} (direct node of inode {big}): corruption at block {a}: node: checksum mismatch"),
        &format!(
            "inode {big}: direct node {dn} lost (corruption at block {a}: node: checksum mismatch): file blocks {ADDRS_PER_INODE}..{HOLE_END} are now a hole"
        ),
    );
    let after = snapshot(&dev);
    let b = &after["/big"];
    assert_eq!(b.size, (BIG_BLOCKS * BLOCK_SIZE) as u64);
    for i in 0..BIG_BLOCKS {
        let got = &b.data[i * BLOCK_SIZE..(i + 1) * BLOCK_SIZE];
        if !(ADDRS_PER_INODE as usize..HOLE_END).contains(&i) {
            assert_eq!(got, &big_block(i)[..], "block {i}");
        } else {
            assert!(got.iter().all(|&x| x == 0), "block {i} not a hole");
        }
    }
    intact_except(&before, &after, &["/big"]);
}

#[test]
fn broken_crc_of_a_file_inode_drops_its_name() {
    let mut dev = image();
    let before = snapshot(&dev);
    let d = ino_of(&dev, "/dir");
    let f = ino_of(&dev, "/dir/f2");
    let a = node_addr(&mut dev, f);
    dev.block_mut(a)[7] ^= 1;
    let (dev, _) = detect_and_repair(
        dev,
        &format!("inode {f}: corruption at block {a}: node: checksum mismatch"),
        &format!("entry \"f2\" of directory {d} names inode {f}, which is lost (corruption at block {a}: node: checksum mismatch): removed"),
    );
    intact_except(&before, &snapshot(&dev), &["/dir/f2"]);
}

#[test]
fn broken_crc_of_a_directory_inode_sends_what_it_held_to_lost_found() {
    let mut dev = image();
    let before = snapshot(&dev);
    let sub = ino_of(&dev, "/sub");
    let deeper = ino_of(&dev, "/sub/deeper");
    let s1 = ino_of(&dev, "/sub/s1");
    let a = node_addr(&mut dev, sub);
    dev.block_mut(a)[4000] ^= 0x80;
    let (dev, _) = detect_and_repair(
        dev,
        &format!("inode {sub}: corruption at block {a}: node: checksum mismatch"),
        &format!("linked as /lost+found/#{deeper}"),
    );
    let after = snapshot(&dev);
    assert_eq!(after[&format!("/lost+found/#{s1}")], before["/sub/s1"]);
    assert_eq!(after[&format!("/lost+found/#{deeper}/file")], before["/sub/deeper/file"]);
    intact_except(&before, &after, &["/sub"]);
}

#[test]
fn broken_crc_of_an_xattr_node_drops_the_attributes_only() {
    let mut dev = image();
    let before = snapshot(&dev);
    let f = ino_of(&dev, "/dir/f0");
    let ia = node_addr(&mut dev, f);
    let x = node::inode::xattr_nid(dev.block_mut(ia));
    let a = node_addr(&mut dev, x);
    dev.block_mut(a)[0] ^= 4;
    let (dev, _) = detect_and_repair(
        dev,
        &format!("node {x} (xattr node of inode {f}): corruption at block {a}: node: checksum mismatch"),
        &format!("inode {f}: xattr node {x} lost"),
    );
    let after = snapshot(&dev);
    let mut want = before["/dir/f0"].clone();
    want.xattrs.clear();
    assert_eq!(after["/dir/f0"], want);
    intact_except(&before, &after, &["/dir/f0"]);
}

#[test]
fn lost_root_is_made_anew_and_what_it_held_goes_to_lost_found() {
    let mut dev = image();
    let before = snapshot(&dev);
    let a = node_addr(&mut dev, 1);
    dev.block_mut(a)[50] ^= 1;
    let tops: Vec<(String, Ino)> =
        ["/dir", "/big", "/sub", "/sym"].iter().map(|p| (p.to_string(), ino_of(&image(), p))).collect();
    let (dev, _) = detect_and_repair(
        dev,
        &format!("cannot mount: corruption at block {a}: node: checksum mismatch"),
        "root directory (inode 1) lost",
    );
    let after = snapshot(&dev);
    // Every file and directory the root held is under /lost+found, with all it held.
    for (top, ino) in tops {
        for (p, s) in before.iter().filter(|(p, _)| *p == &top || p.starts_with(&format!("{top}/"))) {
            let moved = p.replacen(&top, &format!("/lost+found/#{ino}"), 1);
            let mut want = s.clone();
            if p == "/dir/hardlink" {
                want.nlink = 1; // its other name was in the root: /hard is reached through this one
            }
            assert_eq!(after.get(&moved), Some(&want), "{p}");
        }
    }
    // The empty file had nothing worth keeping; /hard keeps its name in /dir only.
    assert!(!after.keys().any(|p| p.contains("empty") || p.contains("hard") && !p.ends_with("/hardlink")));
}

#[test]
fn repair_keeps_what_was_fsynced_after_the_checkpoint() {
    let mut fs = Filesystem::mount(image(), &MountOptions::default(), T).unwrap();
    let f = fs.lookup(ino_of(&fs.device().clone(), "/dir"), b"f7").unwrap().ino;
    fs.write(f, 0, b"fsync'd after the checkpoint", T).unwrap();
    fs.fsync(f, false, T).unwrap();
    let mut dev = fs.into_device(); // crash
    let h = ino_of(&dev, "/hard");
    let a = node_addr(&mut dev, h);
    codec::put_u32(&mut dev.block_mut(a)[..], node::inode::OFF_LINKS, 9);
    reseal_node(&mut dev, a);
    let (dev, rep) = detect_and_repair(dev, "link count 9", "rolled forward 1 fsync'd change");
    assert!(rep.fixes.iter().any(|m| m.contains("set to 2")), "{:#?}", rep.fixes);
    let after = snapshot(&dev);
    assert!(after["/dir/f7"].data.starts_with(b"fsync'd after the checkpoint"));
}

#[test]
fn repair_is_deterministic() {
    let mut dev = image();
    let f = ino_of(&dev, "/dir/f4");
    set_nat_entry(&mut dev, f, NatEntry::default());
    erase_dentry(&mut dev, 1, b"sub");
    let (mut a, mut b) = (dev.clone(), dev);
    let ra = fsck::repair(&mut a, LATER).unwrap();
    let rb = fsck::repair(&mut b, LATER).unwrap();
    assert_eq!(ra, rb);
    let mut x = [0u8; BLOCK_SIZE];
    let mut y = [0u8; BLOCK_SIZE];
    for blk in 0..a.block_count() {
        a.read(blk, &mut x).unwrap();
        b.read(blk, &mut y).unwrap();
        assert!(x == y, "block {blk} differs");
    }
}

#[test]
fn repair_cut_short_at_any_write_leaves_a_mountable_image_and_can_be_rerun() {
    let mut dev = image();
    let before = snapshot(&dev);
    let h = ino_of(&dev, "/hard");
    let a = node_addr(&mut dev, h);
    codec::put_u32(&mut dev.block_mut(a)[..], node::inode::OFF_LINKS, 4);
    reseal_node(&mut dev, a);
    let d = ino_of(&dev, "/dir");
    erase_dentry(&mut dev, d, b"f8");
    let start = dev.counters.writes;
    let mut full = dev.clone();
    fsck::repair(&mut full, LATER).unwrap();
    let total = full.counters.writes - start;
    assert!(total > 10, "{total}");
    let mut cut_points = 0;
    for k in 0..total {
        let mut d2 = dev.clone();
        d2.fail_writes_from = Some(start + k);
        let r = fsck::repair(&mut d2, LATER);
        assert!(matches!(r, Err(Error::Io { .. })), "write {k} of {total}: {r:?}");
        cut_points += 1;
        d2.fail_writes_from = None;
        // Whatever was written, the image mounts (the old checkpoint or a new one).
        Filesystem::mount(d2.clone(), &MountOptions { read_only: true, ..Default::default() }, LATER)
            .unwrap_or_else(|e| panic!("cut at write {k}: {e}"));
        let rep = fsck::repair(&mut d2, LATER).unwrap();
        assert!(rep.is_clean(), "cut at write {k}: {:#?}", rep.after.problems);
        let after = snapshot(&d2);
        intact_except(&before, &after, &["/dir/f8"]);
    }
    assert_eq!(cut_points, total);
}

#[test]
fn repair_never_panics_on_bit_flips_and_repairs_nearly_all() {
    let base = image();
    let verify = fsck::FsckOptions { verify_data: true };
    let (mut tried, mut damaged, mut repaired, mut errors, mut bad_data) = (0, 0, 0, 0, 0);
    for a in 0..base.block_count() {
        let mut probe = base.clone();
        if probe.block_mut(a).iter().all(|&b| b == 0) {
            continue;
        }
        for &(byte, bit) in &[(9usize, 2u8), (4070, 5)] {
            let mut dev = base.clone();
            dev.block_mut(a)[byte] ^= 1 << bit;
            tried += 1;
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let r = fsck::repair_with(&mut dev, LATER, &verify, &mut |_, _| {});
                (r, dev)
            }));
            let (r, dev) =
                r.unwrap_or_else(|_| panic!("repair panicked after flipping bit {bit} of byte {byte} in block {a}"));
            match r {
                Ok(rep) if rep.before.is_clean() => {}
                // File data (format 2): found by its checksum, listed, never "repaired".
                Ok(rep) if rep.before.problems.is_empty() => {
                    assert_eq!(rep.before.bad_data.len(), 1, "block {a}");
                    assert_eq!(rep.before.bad_data[0].block as u64, a, "the flipped block is the one listed");
                    assert!(!rep.is_clean() && !rep.changed(), "bad data is reported, not rewritten");
                    bad_data += 1;
                }
                Ok(rep) => {
                    damaged += 1;
                    if rep.is_clean() {
                        repaired += 1;
                        snapshot(&dev);
                    }
                }
                Err(e) => {
                    eprintln!("unrepairable: bit {bit} of byte {byte} in block {a}: {e}");
                    damaged += 1;
                    errors += 1;
                }
            }
        }
    }
    eprintln!(
        "bit flips: {tried} tried, {damaged} metadata damage detected, {repaired} repaired to clean, \
         {errors} unrepairable, {bad_data} bad data blocks found"
    );
    assert!(damaged > 100, "{damaged} of {tried}");
    assert!(bad_data > 1000, "data flips are detected: {bad_data} of {tried}");
    assert!(repaired * 100 >= damaged * 95, "only {repaired} of {damaged} repaired");
}

/// A NAT entry with an owner but no block (half of an entry): the normal mount refuses
/// it, naming the NAT block (it used to pass, and reads of the node then failed later),
/// and repair rebuilds the entry from the newest valid copy of the node.
#[test]
fn half_nat_entry_fails_the_mount_naming_its_block_and_is_rebuilt() {
    let mut dev = image();
    let before = snapshot(&dev);
    let f = ino_of(&dev, "/dir/f4");
    set_nat_entry(&mut dev, f, NatEntry { ino: f, addr: 0 });
    let g = sb(&mut dev).geometry;
    let (cp, _) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    let i = f / NAT_ENTRIES_PER_BLOCK;
    let nat_block = g.nat_addr(i, cp.nat_slots[i as usize]);
    match Filesystem::mount(dev.clone(), &MountOptions::default(), LATER) {
        Err(Error::Corrupt { block, reason }) => {
            assert_eq!(block, nat_block, "{reason}");
            assert!(reason.contains("NAT"), "{reason}");
        }
        Err(e) => panic!("unexpected error {e:?}"),
        Ok(_) => panic!("a half NAT entry mounted"),
    }
    let rep = fsck::repair(&mut dev, LATER).unwrap();
    assert!(rep.is_clean(), "{:#?}", rep.after.problems);
    intact_except(&before, &snapshot(&dev), &[]);
}

/// fsck walks only the mapped slots of inodes and direct nodes (`node::mapped_ptrs`): a
/// pointer in the very last slot of each, or in the first, is still checked.
#[test]
fn data_pointers_in_first_and_last_slots_are_checked() {
    let mut dev = image();
    let empty = ino_of(&dev, "/empty");
    let ea = node_addr(&mut dev, empty);
    node::inode::set_ptr(dev.block_mut(ea), 0, u32::MAX - 1, 0);
    node::inode::set_ptr(dev.block_mut(ea), ADDRS_PER_INODE - 1, NEW_ADDR, 0);
    reseal_node(&mut dev, ea);
    // /big's second direct node maps file blocks A + P.. (35 of them): its last slot lies
    // past the end; point it at a block of /big's inode (owned twice).
    let big = ino_of(&dev, "/big");
    let ia = node_addr(&mut dev, big);
    let stolen = node::inode::addr(dev.block_mut(ia), 3);
    let dn = node::inode::nid(dev.block_mut(ia), 1);
    assert_ne!(dn, 0);
    let da = node_addr(&mut dev, dn);
    node::set_ptr(dev.block_mut(da), ADDRS_PER_BLOCK - 1, stolen, 0);
    reseal_node(&mut dev, da);
    let r = fsck::check(&mut dev).unwrap();
    let last_idx = (ADDRS_PER_INODE + 2 * ADDRS_PER_BLOCK - 1) as u64;
    for want in [
        format!("block address {} of data slot 0 of node {empty} is outside the main area", u32::MAX - 1),
        format!("inode {empty}: file block {} marked unwritten on disk (node {empty})", ADDRS_PER_INODE - 1),
        format!("block {stolen}: file block {last_idx} of inode {big} lies past the file size"),
        format!(
            "block {stolen}: owned twice, by data slot 3 of node {big} and by data slot {} of node {dn}",
            ADDRS_PER_BLOCK - 1
        ),
    ] {
        assert!(r.problems.contains(&want), "fsck did not report {want:?}: {:#?}", r.problems);
    }
}
