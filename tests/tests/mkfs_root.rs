//! `rollfs mkfs --root DIR` through the binary: a tree with every kind of entry is copied
//! into a new image (sized from the tree), fsck finds it clean, and a real mount shows the
//! same tree entry by entry — contents, holes, modes, owners, the three times, symlink
//! targets, hard links, device numbers, extended attributes. A size too small is refused
//! before anything is written; a run killed midway leaves an image mount and fsck refuse.

use rollfs_tests::*;
use std::collections::BTreeMap;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Every path under `root` (relative; "" is the root), parents before children.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::new()];
    let mut i = 0;
    while i < out.len() {
        let p = root.join(&out[i]);
        if std::fs::symlink_metadata(&p).unwrap().is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().file_name()).collect();
            names.sort();
            let rel = out[i].clone();
            out.extend(names.into_iter().map(|n| rel.join(n)));
        }
        i += 1;
    }
    out
}

/// What the test compares of one entry (times as (sec, nsec)).
#[derive(Debug, PartialEq, Eq)]
struct Meta {
    mode: u32,
    uid: u32,
    gid: u32,
    nlink: u64,
    /// Regular files and symlinks (a directory's size is the filesystem's own).
    size: Option<u64>,
    rdev: u64,
    atime: (i64, i64),
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// lstat of every path, without reading or listing anything (which would change atimes).
fn stat_all(root: &Path, paths: &[PathBuf]) -> BTreeMap<PathBuf, (Meta, u64)> {
    paths
        .iter()
        .map(|rel| {
            let m = std::fs::symlink_metadata(root.join(rel)).unwrap();
            let meta = Meta {
                mode: m.mode(),
                uid: m.uid(),
                gid: m.gid(),
                nlink: m.nlink(),
                size: (m.is_file() || m.is_symlink()).then_some(m.len()),
                rdev: m.rdev(),
                atime: (m.atime(), m.atime_nsec()),
                mtime: (m.mtime(), m.mtime_nsec()),
                ctime: (m.ctime(), m.ctime_nsec()),
            };
            (rel.clone(), (meta, m.ino()))
        })
        .collect()
}

/// Extended attributes: (name, value), sorted.
type Xattrs = Vec<(Vec<u8>, Vec<u8>)>;

/// Contents (a digest: a failure stays readable), symlink targets and extended attributes
/// of every path.
fn contents(root: &Path, paths: &[PathBuf]) -> BTreeMap<PathBuf, (u64, Xattrs)> {
    paths
        .iter()
        .map(|rel| {
            let p = root.join(rel);
            let m = std::fs::symlink_metadata(&p).unwrap();
            let data = if m.is_file() {
                std::fs::read(&p).unwrap()
            } else if m.is_symlink() {
                std::fs::read_link(&p).unwrap().as_os_str().as_bytes().to_vec()
            } else {
                Vec::new()
            };
            let mut x = rollfs::populate::host_xattrs(&p).unwrap();
            x.sort();
            (rel.clone(), (digest(&data), x))
        })
        .collect()
}

/// Names grouped by inode: which names are hard links of each other.
fn link_groups(stats: &BTreeMap<PathBuf, (Meta, u64)>) -> Vec<Vec<PathBuf>> {
    let mut by_ino: BTreeMap<u64, Vec<PathBuf>> = BTreeMap::new();
    for (p, (_, ino)) in stats {
        by_ino.entry(*ino).or_default().push(p.clone());
    }
    let mut groups: Vec<Vec<PathBuf>> = by_ino.into_values().collect();
    groups.sort();
    groups
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// Sets atime and mtime of `p` without following a symlink.
fn set_times(p: &Path, atime: (i64, i64), mtime: (i64, i64)) {
    let ts =
        [libc::timespec { tv_sec: atime.0, tv_nsec: atime.1 }, libc::timespec { tv_sec: mtime.0, tv_nsec: mtime.1 }];
    // SAFETY: a NUL-terminated path and two timespecs.
    let r = unsafe { libc::utimensat(libc::AT_FDCWD, cstr(p).as_ptr(), ts.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
    assert_eq!(r, 0, "utimensat {}: {}", p.display(), std::io::Error::last_os_error());
}

fn setxattr(p: &Path, name: &str, value: &[u8]) {
    rollfs::populate::set_host_xattr(p, name.as_bytes(), value)
        .unwrap_or_else(|e| panic!("setxattr {name} on {}: {e}", p.display()));
}

fn mknod(p: &Path, mode: u32, dev: u64) {
    // SAFETY: a NUL-terminated path.
    let r = unsafe { libc::mknod(cstr(p).as_ptr(), mode, dev) };
    assert_eq!(r, 0, "mknod {}: {}", p.display(), std::io::Error::last_os_error());
}

fn lchown(p: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(gid)).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `n` bytes that differ between seeds and do not repeat with a short period.
fn pattern(seed: u64, n: usize) -> Vec<u8> {
    (0..n as u64).map(|i| ((i * i + seed * 7919 + i / 251) % 253) as u8).collect()
}

/// A tree with every kind of entry rollfs holds. Device nodes, other owners and
/// `trusted.*` attributes only as root (the host allows them only then).
fn build_tree(src: &Path) {
    let root = is_root();
    std::fs::create_dir_all(src.join("etc/deep/deeper")).unwrap();
    std::fs::create_dir(src.join("tmp")).unwrap();
    std::fs::create_dir(src.join("shared")).unwrap();
    std::fs::write(src.join("empty"), b"").unwrap();
    std::fs::write(src.join("small.txt"), b"hello, populated world\n").unwrap();
    std::fs::write(src.join("etc/big.bin"), pattern(1, 3 * 1024 * 1024 + 123)).unwrap();
    std::fs::write(src.join("etc/deep/deeper/leaf"), pattern(2, 5000)).unwrap();
    // Sparse: a hole first, 8 KiB of data at 1 MiB, a hole to the end (6 MiB).
    let f = std::fs::File::create(src.join("sparse.img")).unwrap();
    f.write_all_at(&pattern(3, 8192), 1 << 20).unwrap();
    f.set_len(6 << 20).unwrap();
    drop(f);
    // Hard links across directories.
    std::fs::write(src.join("etc/linked"), pattern(4, 10_000)).unwrap();
    std::fs::hard_link(src.join("etc/linked"), src.join("shared/linked-too")).unwrap();
    std::fs::hard_link(src.join("etc/linked"), src.join("linked-3")).unwrap();
    std::os::unix::fs::symlink("etc/big.bin", src.join("rel-link")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/target/of/a/dangling/link", src.join("dangling")).unwrap();
    std::os::unix::fs::symlink("x".repeat(3000), src.join("long-target")).unwrap();
    let long_name = "n".repeat(255);
    std::fs::write(src.join(&long_name), b"a name of 255 bytes").unwrap();
    mknod(&src.join("fifo"), libc::S_IFIFO | 0o640, 0);
    {
        let _sock = std::os::unix::net::UnixListener::bind(src.join("sock")).unwrap();
    }
    setxattr(&src.join("small.txt"), "user.comment", b"a user attribute");
    setxattr(&src.join("etc"), "user.dir", &pattern(5, 300));
    setxattr(&src.join("etc/linked"), "user.on-a-link", b"shared by the three names");
    if root {
        mknod(&src.join("null"), libc::S_IFCHR | 0o666, libc::makedev(1, 3));
        mknod(&src.join("disk"), libc::S_IFBLK | 0o660, libc::makedev(259, 70_000));
        setxattr(&src.join("small.txt"), "trusted.t", b"trusted value");
        setxattr(&src.join("small.txt"), "security.s", b"security value");
        setxattr(&src.join("rel-link"), "trusted.on-symlink", b"yes");
        lchown(&src.join("small.txt"), 1234, 5678);
        lchown(&src.join("rel-link"), 4321, 8765);
        lchown(&src.join("etc/deep"), 1000, 1000);
    }
    chmod(&src.join("small.txt"), 0o4755);
    chmod(&src.join("etc/deep"), 0o2750);
    chmod(&src.join("tmp"), 0o1777);
    chmod(&src.join("empty"), 0o000);
    // Times: distinct per entry, with nanoseconds, children before their directories
    // (setting a child's times does not change its directory's).
    let paths = walk(src);
    for (i, rel) in paths.iter().enumerate().rev() {
        let i = i as i64;
        set_times(&src.join(rel), (1_600_000_000 + i, 123_456_789 + i), (1_500_000_000 + i, 987_654_321 - i));
    }
}

#[test]
fn mkfs_root_copies_every_kind_of_entry_and_a_mount_shows_the_same_tree() {
    require_fuse();
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    build_tree(&src);
    let paths = walk(&src);
    let want = stat_all(&src, &paths);
    let img = d.path().join("fs.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), img.as_os_str()]);
    assert!(o.status.success(), "mkfs --root failed:\n{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("rollfs: copied "), "{}", stdout(&o));
    assert!(!stderr(&o).contains("skipped"), "nothing here is unrepresentable:\n{}", stderr(&o));
    let o = rollfs([OsStr::new("fsck"), img.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "fsck:\n{}{}", stdout(&o), stderr(&o));

    let m = Mount::new(&img, &[]);
    assert_eq!(walk(&m.mnt), paths, "the same names");
    let got = stat_all(&m.mnt, &paths);
    for (p, (w, _)) in &want {
        assert_eq!(&got[p].0, w, "{}: metadata differs", p.display());
    }
    assert_eq!(link_groups(&got), link_groups(&want), "hard links are hard links");
    assert_eq!(got[Path::new("etc/linked")].0.nlink, 3);
    assert_eq!(contents(&m.mnt, &paths), contents(&src, &paths), "contents, targets and xattrs");
    // The sparse file keeps its holes: 8 KiB of data in 6 MiB.
    let sparse = std::fs::metadata(m.path("sparse.img")).unwrap();
    assert!(sparse.blocks() * 512 <= 16 << 10, "sparse file takes {} bytes", sparse.blocks() * 512);
    let f = std::fs::File::open(m.path("sparse.img")).unwrap();
    let runs = rollfs::populate::data_runs(&f, sparse.len()).unwrap();
    assert_eq!(runs, vec![(1 << 20, (1 << 20) + 8192)], "data only where the source had it");
    drop(f);
    assert!(m.unmount().success());
}

#[test]
fn mkfs_root_refuses_a_size_too_small_and_bad_trees() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..3 {
        std::fs::write(src.join(format!("f{i}")), pattern(i, 8 << 20)).unwrap();
    }
    // A new image file: refused before it is created.
    let img = d.path().join("small.img");
    let o = rollfs([
        OsStr::new("mkfs"),
        OsStr::new("--size"),
        OsStr::new("48M"),
        OsStr::new("--root"),
        src.as_os_str(),
        img.as_os_str(),
    ]);
    assert_fails(&o, 1, "small.img: too small: ");
    assert!(stderr(&o).contains("short; give --size "), "{}", stderr(&o));
    assert!(!img.exists(), "nothing is left behind");
    // An existing file of that size, --size left out: refused, and left unformatted.
    let existing = d.path().join("existing.img");
    std::fs::File::create(&existing).unwrap().set_len(48 << 20).unwrap();
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), existing.as_os_str()]);
    assert_fails(&o, 1, "existing.img: too small: ");
    assert_fails(&rollfs([OsStr::new("fsck"), existing.as_os_str()]), 8, "not a rollfs filesystem");
    // The same tree without --size: sized to fit.
    let fits = d.path().join("fits.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), fits.as_os_str()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(rollfs([OsStr::new("fsck"), fits.as_os_str()]).status.code(), Some(0));
    // A missing DIR and a DIR that is a file: clear errors, nothing created.
    let img = d.path().join("x.img");
    let missing = d.path().join("no-such-dir");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), missing.as_os_str(), img.as_os_str()]);
    assert_fails(&o, 1, "no-such-dir: no such file or device");
    let file = src.join("f0");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), file.as_os_str(), img.as_os_str()]);
    assert_fails(&o, 1, "not a directory (--root takes a directory tree)");
    assert!(!img.exists());
    // The image inside DIR is not copied into itself.
    let inside = src.join("inside.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), inside.as_os_str()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    // Made again over itself (-f): now it is in the tree when DIR is scanned.
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("-f"), OsStr::new("--root"), src.as_os_str(), inside.as_os_str()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("inside.img: skipped: it is the image being made"), "{}", stderr(&o));
    assert!(stdout(&o).contains("; 1 skipped"), "{}", stdout(&o));
}

#[test]
fn mkfs_root_killed_midway_leaves_an_image_that_mount_and_fsck_refuse() {
    require_fuse();
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..40 {
        std::fs::write(src.join(format!("f{i:02}")), pattern(i, 20_000)).unwrap();
    }
    let img = d.path().join("fs.img");
    // The hook checkpoints the half-populated image, then aborts: every block but the
    // superblocks is on the image, as after a kill (or a power cut after a flush).
    let o = std::process::Command::new(rollfs_bin())
        .env(rollfs::populate::ABORT_AFTER_ENV, "20")
        .args([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), img.as_os_str()])
        .output()
        .unwrap();
    assert!(!o.status.success() && o.status.code().is_none(), "killed by the hook: {:?}\n{}", o.status, stderr(&o));
    assert!(stderr(&o).contains("aborting after 20 entries"), "{}", stderr(&o));
    assert!(img.exists(), "the kill left the image file");
    assert_fails(&rollfs([OsStr::new("fsck"), img.as_os_str()]), 8, "not a rollfs filesystem");
    assert!(Mount::try_new(&img, &[]).is_err(), "a half-populated image must not mount");
    // mkfs again over it: no filesystem there to protect, so no --force needed.
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--root"), src.as_os_str(), img.as_os_str()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(rollfs([OsStr::new("fsck"), img.as_os_str()]).status.code(), Some(0));
    let m = Mount::new(&img, &[]);
    assert_eq!(std::fs::read(m.path("f39")).unwrap(), pattern(39, 20_000));
    assert!(m.unmount().success());
}
