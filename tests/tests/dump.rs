//! `rollfs dump IMAGE [PATH] --out DIR` through the binary, on an image made by `mkfs
//! --root` and then damaged on disk: one file's data block flipped, another file's inode
//! flipped, a directory's dentry block flipped. The dump copies every undamaged file byte for byte with its metadata, leaves the
//! bad block as a hole, names both damages with their block numbers, exits 4, and leaves the
//! image's bytes as they were.

use rollfs::device::{DeviceOptions, FileDevice};
use rollfs_core::checkpoint::Checkpoint;
use rollfs_core::nat::Nat;
use rollfs_core::superblock::read_superblock;
use rollfs_core::{Filesystem, MountOptions, Timestamp, BLOCK_SIZE};
use rollfs_tests::*;
use std::ffi::OsStr;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

const B: usize = BLOCK_SIZE;

/// Block `i` of file `seed`: unique on the image, so the test can find it there.
fn stamp(seed: u32, i: u32) -> Vec<u8> {
    let mut b = vec![0u8; B];
    let head = format!("rollfs dump test: file {seed} block {i};");
    b[..head.len()].copy_from_slice(head.as_bytes());
    for (k, x) in b[head.len()..].iter_mut().enumerate() {
        *x = (k as u32 * 31 + seed * 7 + i * 13) as u8;
    }
    b
}

fn stamped(seed: u32, blocks: u32) -> Vec<u8> {
    (0..blocks).flat_map(|i| stamp(seed, i)).collect()
}

/// The node block address of the inode at `path` in the image, read with the core.
fn inode_block(img: &Path, path: &[&[u8]]) -> (u32, u64) {
    let opts = DeviceOptions { write: false, ..DeviceOptions::default() };
    let dev = FileDevice::open(img, opts).unwrap();
    let ro = MountOptions { read_only: true, ..MountOptions::default() };
    let mut fs = Filesystem::mount(dev, &ro, Timestamp::new(1, 0)).unwrap();
    let ino = path.iter().fold(1, |ino, name| fs.lookup(ino, name).unwrap().ino);
    let mut dev = fs.into_device();
    let g = read_superblock(&mut dev).unwrap().geometry;
    let (cp, _) = Checkpoint::read_newest(&mut dev, &g).unwrap();
    let nat = Nat::load(&mut dev, &g, cp.nat_slots.clone(), &cp.nat_journal, cp.version).unwrap();
    (ino, nat.get(ino).unwrap().addr as u64)
}

fn flip(img: &Path, block: u64, at: usize) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(img).unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, block * B as u64 + at as u64).unwrap();
    b[0] ^= 0x5a;
    f.write_all_at(&b, block * B as u64 + at as u64).unwrap();
}

fn build(src: &Path) {
    std::fs::create_dir_all(src.join("docs/old")).unwrap();
    std::fs::write(src.join("good.bin"), stamped(1, 40)).unwrap();
    std::fs::write(src.join("docs/readme"), b"read me\n").unwrap();
    std::fs::write(src.join("docs/old/notes"), stamped(2, 3)).unwrap();
    std::fs::write(src.join("victim-data.bin"), stamped(3, 6)).unwrap();
    std::fs::write(src.join("docs/victim-inode"), stamped(4, 2)).unwrap();
    std::fs::create_dir(src.join("victim-dir")).unwrap();
    std::fs::write(src.join("victim-dir/only-name-in-victim-dir"), b"lost with its directory block").unwrap();
    std::fs::hard_link(src.join("good.bin"), src.join("docs/good-link")).unwrap();
    std::os::unix::fs::symlink("../good.bin", src.join("docs/to-good")).unwrap();
    let f = std::fs::File::create(src.join("sparse")).unwrap();
    f.write_all_at(&stamp(5, 0), 3 << 20).unwrap();
    f.set_len(5 << 20).unwrap();
    rollfs::populate::set_host_xattr(&src.join("docs/readme"), b"user.note", b"kept").unwrap();
    std::fs::set_permissions(src.join("docs/old"), std::os::unix::fs::PermissionsExt::from_mode(0o750)).unwrap();
    // Distinct atime and mtime (nanoseconds too), so that a dump that restores one as the
    // other is caught; files first, then their directories.
    let names =
        ["good.bin", "docs/readme", "docs/old/notes", "victim-data.bin", "sparse", "docs/to-good", "docs/old", "docs"];
    for (i, n) in names.iter().enumerate() {
        let i = i as i64;
        let ts = [
            libc::timespec { tv_sec: 1_600_000_000 + i, tv_nsec: 111_111_111 + i },
            libc::timespec { tv_sec: 1_500_000_000 + i, tv_nsec: 999_999_999 - i },
        ];
        let c = std::ffi::CString::new(src.join(n).into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path and two timespecs.
        let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), ts.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
        assert_eq!(r, 0, "{n}");
    }
}

fn same_file(a: &Path, b: &Path) {
    let (ma, mb) = (std::fs::symlink_metadata(a).unwrap(), std::fs::symlink_metadata(b).unwrap());
    assert_eq!(ma.mode(), mb.mode(), "{}: mode", b.display());
    assert_eq!((ma.mtime(), ma.mtime_nsec()), (mb.mtime(), mb.mtime_nsec()), "{}: mtime", b.display());
    assert_eq!((ma.uid(), ma.gid()), (mb.uid(), mb.gid()), "{}: owner", b.display());
    if ma.is_file() {
        assert!(std::fs::read(a).unwrap() == std::fs::read(b).unwrap(), "{}: contents differ", b.display());
    }
    assert_eq!(
        rollfs::populate::host_xattrs(a).unwrap(),
        rollfs::populate::host_xattrs(b).unwrap(),
        "{}: xattrs",
        b.display()
    );
}

#[test]
fn dump_copies_every_undamaged_file_and_names_the_damaged_blocks() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    build(&src);
    let img = d.path().join("fs.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), img.as_os_str()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));

    // Damage: block 2 of victim-data.bin (found by its stamp) and victim-inode's inode.
    let bytes = std::fs::read(&img).unwrap();
    let data_block = bytes.chunks(B).position(|c| c == stamp(3, 2).as_slice()).expect("the block on the image") as u64;
    drop(bytes);
    flip(&img, data_block, 100);
    let (victim, inode_addr) = inode_block(&img, &[b"docs", b"victim-inode"]);
    flip(&img, inode_addr, 200);
    // And victim-dir's dentry block: the block holding the name that is a dentry block (the
    // name is in the file's inode too).
    let bytes = std::fs::read(&img).unwrap();
    let name = b"only-name-in-victim-dir";
    let magic = rollfs_core::dir::DENTRY_MAGIC.to_le_bytes();
    let at = rollfs_core::dir::HDR_MAGIC_OFFSET;
    let dentry_block = bytes
        .chunks(B)
        .position(|c| c[at..at + 4] == magic && c.windows(name.len()).any(|w| w == name))
        .expect("victim-dir's dentry block") as u64;
    drop(bytes);
    flip(&img, dentry_block, B - 300);
    let (victim_dir, _) = inode_block(&img, &[b"victim-dir"]);
    let before = digest(&std::fs::read(&img).unwrap());
    assert_eq!(rollfs([OsStr::new("fsck"), img.as_os_str()]).status.code(), Some(4), "fsck sees the damage");

    let out = d.path().join("out");
    let o = rollfs([OsStr::new("dump"), img.as_os_str(), OsStr::new("--out"), out.as_os_str()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "some things not copied:\n{}{err}", stdout(&o));
    let data_line = err.lines().find(|l| l.contains("/victim-data.bin")).expect("victim-data reported");
    assert!(
        data_line.contains("bytes 8192..12288 not copied (left as a hole)")
            && data_line.contains(&format!("block {data_block}")),
        "{data_line}"
    );
    let inode_line = err.lines().find(|l| l.contains("/docs/victim-inode")).expect("victim-inode reported");
    assert!(
        inode_line.contains(&format!("(inode {victim}): the file not copied: corruption at block {inode_addr}")),
        "{inode_line}"
    );
    let dir_line = err.lines().find(|l| l.contains("/victim-dir")).expect("victim-dir reported");
    assert!(
        dir_line.contains(&format!("(inode {victim_dir}): the directory's entries after the first 0 not copied: "))
            && dir_line.ends_with(&format!("block {dentry_block}")),
        "{dir_line}"
    );
    assert!(out.join("victim-dir").is_dir(), "the directory itself is copied, empty");
    assert_eq!(err.lines().filter(|l| l.contains("not copied")).count(), 3, "only those three:\n{err}");
    assert!(stdout(&o).contains("; 3 NOT copied (listed on stderr)"), "{}", stdout(&o));
    assert_eq!(digest(&std::fs::read(&img).unwrap()), before, "the image is not written");

    // Everything else, byte for byte, with modes, times, owners, xattrs, links and holes.
    for p in
        ["good.bin", "docs/readme", "docs/old/notes", "docs/good-link", "docs/to-good", "sparse", "docs", "docs/old"]
    {
        same_file(&src.join(p), &out.join(p));
    }
    assert_eq!(std::fs::read_link(out.join("docs/to-good")).unwrap(), Path::new("../good.bin"));
    let ino = |p: &str| std::fs::metadata(out.join(p)).unwrap().ino();
    assert_eq!(ino("good.bin"), ino("docs/good-link"), "a hard link stays one");
    assert!(std::fs::metadata(out.join("sparse")).unwrap().blocks() * 512 <= 64 << 10, "holes stay holes");
    assert!(!out.join("docs/victim-inode").exists());
    let mut want = stamped(3, 6);
    want[2 * B..3 * B].fill(0);
    assert!(std::fs::read(out.join("victim-data.bin")).unwrap() == want, "the bad block is a hole, the rest copied");

    // --json and a PATH: the same damage in a subtree, as data.
    let out2 = d.path().join("out2");
    let o = rollfs([
        OsStr::new("dump"),
        OsStr::new("--json"),
        img.as_os_str(),
        OsStr::new("docs"),
        OsStr::new("--out"),
        out2.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["complete"], false);
    let nc = v["report"]["not_copied"].as_array().unwrap();
    assert_eq!(nc.len(), 1, "{v}");
    assert_eq!(nc[0]["block"].as_u64(), Some(inode_addr));
    assert_eq!(nc[0]["path"], "/docs/victim-inode");
    same_file(&src.join("docs/old/notes"), &out2.join("old/notes"));
    assert!(!out2.join("good.bin").exists());

    // An undamaged subtree: exit 0. A DIR that is not empty, a PATH not in the image: 8.
    let out3 = d.path().join("out3");
    let o =
        rollfs([OsStr::new("dump"), img.as_os_str(), OsStr::new("docs/old"), OsStr::new("--out"), out3.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    same_file(&src.join("docs/old/notes"), &out3.join("notes"));
    assert_fails(&rollfs([OsStr::new("dump"), img.as_os_str(), OsStr::new("--out"), out3.as_os_str()]), 8, "not empty");
    let out4 = d.path().join("out4");
    assert_fails(
        &rollfs([OsStr::new("dump"), img.as_os_str(), OsStr::new("no/such"), OsStr::new("--out"), out4.as_os_str()]),
        8,
        "/no: no such file or directory",
    );
    assert!(!out4.exists(), "nothing created for a dump that cannot start");
    assert_eq!(digest(&std::fs::read(&img).unwrap()), before, "the image is not written");
}
