//! Holes and copies through a real mount (issue 39): `lseek(SEEK_DATA | SEEK_HOLE)`,
//! `copy_file_range` served by the daemon, `st_blocks` counting fallocate reservations, and
//! what FUSE cannot pass on (FS_IOC_FIEMAP), with the tools people use: xfs_io's `seek` and
//! `copy_range`, `cp --sparse`, `du`, Python's `os.copy_file_range`.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

const K: u64 = 1024;
const M: u64 = 1024 * 1024;
const XFS_IO: &str = "/usr/sbin/xfs_io";

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn stat_or_zero(json: &str, key: &str) -> u64 {
    let k = format!("\"{key}\":");
    json.find(&k).map_or(0, |i| {
        json[i + k.len()..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap()
    })
}

/// Runs xfs_io with `cmds` on `file`; returns its standard output (it must succeed).
#[track_caller]
fn xfs_io(file: &Path, cmds: &[&str]) -> String {
    let mut c = Command::new(XFS_IO);
    for cmd in cmds {
        c.arg("-c").arg(cmd);
    }
    let o = c.arg(file).output().expect("run xfs_io");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && err.is_empty(), "xfs_io {cmds:?}: {}\n{out}{err}", o.status);
    out.into_owned()
}

/// `xfs_io -c "seek -a -r 0"`: every data and hole region, as (`DATA`|`HOLE`, offset).
fn seek_all(file: &Path) -> Vec<(String, u64)> {
    let out = xfs_io(file, &["seek -a -r 0"]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("Whence\tResult"), "xfs_io seek: {out}");
    lines
        .map(|l| {
            let (w, o) = l.split_once('\t').unwrap_or_else(|| panic!("xfs_io seek line {l:?}"));
            (w.to_string(), o.parse().unwrap_or_else(|_| panic!("xfs_io seek offset {o:?} in {out}")))
        })
        .collect()
}

fn regions(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    pairs.iter().map(|&(w, o)| (w.to_string(), o)).collect()
}

fn lseek(f: &File, off: i64, whence: i32) -> Result<u64, i32> {
    // SAFETY: lseek on an open descriptor.
    let r = unsafe { libc::lseek(f.as_raw_fd(), off, whence) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as u64)
    }
}

fn fallocate(f: &File, mode: i32, off: u64, len: u64) {
    // SAFETY: fallocate on an open descriptor.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), mode, off as i64, len as i64) };
    assert_eq!(r, 0, "fallocate mode {mode} {off}+{len}: errno {}", errno());
}

fn ioctl(f: &File, cmd: u32) -> i32 {
    // SAFETY: an `_IO` ioctl without argument.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), cmd as _) };
    if r < 0 {
        errno()
    } else {
        0
    }
}

fn pattern(len: u64, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u32).wrapping_mul(2654435761).wrapping_add(seed as u32).to_le_bytes()[1] | 1).collect()
}

#[track_caller]
fn finish(m: Mount, img: &Image) {
    let st = m.unmount();
    assert!(st.success(), "unmount was not clean: {st}");
    img.assert_fsck_clean();
}

/// xfs_io's `seek -a -r 0` lists every data and hole region: data still in the daemon's
/// write-back cache and on the device, a punched block, a fallocated (reserved) range as a
/// hole, a partial last block; lseek's ENXIO past the end and before the start; an atomic
/// session's staged block is data for every handle (as reads through them return it)
/// until the abort.
#[test]
fn xfs_io_seek_lists_every_data_and_hole_region() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let p = m.path("f");
    let f = OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&p).unwrap();
    f.write_all_at(&pattern(8 * K, 1), 0).unwrap();
    f.write_all_at(&pattern(4 * K, 2), M).unwrap();
    // Mode 0 over 2M..3M: the size grows, the range is reserved, and reads as zeros.
    fallocate(&f, 0, 2 * M, M);
    f.write_all_at(&pattern(4 * K, 3), 4 * M).unwrap();
    fallocate(&f, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 4 * K, 4 * K);
    f.write_all_at(&pattern(100, 4), 6 * M).unwrap();
    let size = 6 * M + 100;
    let want = regions(&[
        ("DATA", 0),
        ("HOLE", 4 * K),
        ("DATA", M),
        ("HOLE", M + 4 * K),
        ("DATA", 4 * M),
        ("HOLE", 4 * M + 4 * K),
        ("DATA", 6 * M),
        ("HOLE", size),
    ]);
    assert_eq!(seek_all(&p), want, "blocks in the write-back cache");
    f.sync_all().unwrap();
    assert_eq!(seek_all(&p), want, "blocks on the device");
    for whence in [libc::SEEK_DATA, libc::SEEK_HOLE] {
        assert_eq!(lseek(&f, size as i64, whence), Err(libc::ENXIO));
        assert_eq!(lseek(&f, -1, whence), Err(libc::ENXIO));
    }
    assert_eq!(lseek(&f, (6 * M + 99) as i64, libc::SEEK_DATA), Ok(6 * M + 99));
    assert_eq!(lseek(&f, (M + 5000) as i64, libc::SEEK_DATA), Ok(4 * M), "the reserved range is a hole");

    // A session's staged block (in the reserved range) is data through another handle too.
    let other = File::open(&p).unwrap();
    assert_eq!(ioctl(&f, 0xf501), 0, "START");
    f.write_all_at(&pattern(4 * K, 5), 2 * M + 8 * K).unwrap();
    assert_eq!(lseek(&other, (M + 4 * K) as i64, libc::SEEK_DATA), Ok(2 * M + 8 * K));
    assert_eq!(lseek(&other, (2 * M + 8 * K) as i64, libc::SEEK_HOLE), Ok(2 * M + 12 * K));
    let mut buf = vec![0u8; 4 * K as usize];
    other.read_exact_at(&mut buf, 2 * M + 8 * K).unwrap();
    assert_eq!(buf, pattern(4 * K, 5), "reads through the other handle see the staged block");
    assert_eq!(ioctl(&f, 0xf505), 0, "ABORT");
    assert_eq!(lseek(&other, (M + 4 * K) as i64, libc::SEEK_DATA), Ok(4 * M));
    assert_eq!(seek_all(&p), want);
    drop((f, other));
    finish(m, &img);
}

/// `du` finds a KEEP_SIZE reservation (st_blocks counts it, as ext4 counts unwritten
/// extents), and the count follows what is done with it.
#[test]
fn du_counts_a_keep_size_reservation() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let p = m.path("r");
    // `fallocate -n` opens the file without O_CREAT.
    File::create(&p).unwrap();
    let o = Command::new("fallocate").args(["-n", "-l", "8M"]).arg(&p).output().unwrap();
    assert!(o.status.success(), "fallocate -n: {}", String::from_utf8_lossy(&o.stderr));
    let md = fs::metadata(&p).unwrap();
    assert_eq!((md.len(), md.blocks()), (0, 8 * M / 512), "size 0, 8 MiB held");
    let du = Command::new("du").arg("-k").arg(&p).output().unwrap();
    let out = String::from_utf8_lossy(&du.stdout);
    assert_eq!(out.split('\t').next(), Some("8192"), "du -k: {out}");
    // A write into the reservation spends it on the block written: the count stays; a
    // punch releases what it covers below the end of the file (as ext4, a punch stops at
    // the end: what lies past it is left as it is).
    let f = OpenOptions::new().write(true).open(&p).unwrap();
    f.write_all_at(&pattern(4 * K, 1), 6 * M).unwrap();
    assert_eq!(fs::metadata(&p).unwrap().blocks(), 8 * M / 512);
    fallocate(&f, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, 4 * M);
    assert_eq!(fs::metadata(&p).unwrap().blocks(), 4 * M / 512);
    drop(f);
    finish(m, &img);
}

/// A sparse file for the copy tests: data at 0..64 KiB, 8 MiB + 4 KiB, 20 MiB..20 MiB +
/// 128 KiB, a partial block at 30 MiB, size 32 MiB (a hole at the end). Returns its bytes.
fn sparse_file(p: &Path) -> Vec<u8> {
    let f = OpenOptions::new().create(true).truncate(true).write(true).open(p).unwrap();
    let mut all = vec![0u8; 32 * M as usize];
    for (off, len, seed) in [(0, 64 * K, 1), (8 * M, 4 * K, 2), (20 * M, 128 * K, 3), (30 * M + 5, 3000, 4)] {
        let d = pattern(len, seed);
        f.write_all_at(&d, off).unwrap();
        all[off as usize..(off + len) as usize].copy_from_slice(&d);
    }
    f.set_len(32 * M).unwrap();
    f.sync_all().unwrap();
    all
}

/// `cp --sparse=always` and plain `cp` keep the holes (the copy has the source's
/// st_blocks and regions), finding them with SEEK_DATA/SEEK_HOLE.
#[test]
fn cp_keeps_the_holes_of_a_sparse_file() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let src = m.path("src");
    let bytes = sparse_file(&src);
    let src_blocks = fs::metadata(&src).unwrap().blocks();
    assert_eq!(src_blocks, (64 + 4 + 128 + 4) * K / 512);
    for (name, args) in [("always", &["--sparse=always"][..]), ("auto", &[][..])] {
        let dst = m.path(&format!("dst-{name}"));
        let s0 = mount_stats(&src);
        let o = Command::new("cp").args(args).arg(&src).arg(&dst).output().unwrap();
        assert!(o.status.success(), "cp {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let s1 = mount_stats(&src);
        let d = |k: &str| stat_or_zero(&s1, k) - stat_or_zero(&s0, k);
        eprintln!(
            "cp {args:?}: {} LSEEK, {} COPY_FILE_RANGE, {} READ, {} WRITE requests",
            d("FUSE_LSEEK"),
            d("FUSE_COPY_FILE_RANGE"),
            d("FUSE_READ"),
            d("FUSE_WRITE")
        );
        assert!(d("FUSE_LSEEK") > 0, "cp {args:?} did not look for holes");
        assert_eq!(fs::read(&dst).unwrap(), bytes, "cp {args:?}");
        assert_eq!(fs::metadata(&dst).unwrap().blocks(), src_blocks, "cp {args:?}: the holes stay holes");
        assert_eq!(seek_all(&dst), seek_all(&src), "cp {args:?}");
    }
    finish(m, &img);
}

/// Python's `os.copy_file_range` of a sparse 32 MiB file: no READ and no WRITE request
/// carries the data (the daemon copies it itself), the holes stay holes.
#[test]
fn copy_file_range_moves_no_data_through_the_kernel() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let src = m.path("src");
    let bytes = sparse_file(&src);
    let dst = m.path("dst");
    let script = "import os, sys\n\
                  s = os.open(sys.argv[1], os.O_RDONLY)\n\
                  d = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)\n\
                  n = int(sys.argv[3]); done = 0\n\
                  while done < n:\n    k = os.copy_file_range(s, d, n - done)\n    if k == 0: break\n    done += k\n\
                  print(done)\n";
    let s0 = mount_stats(&src);
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&src)
        .arg(&dst)
        .arg((32 * M).to_string())
        .output()
        .expect("run python3");
    assert!(o.status.success(), "python: {}", String::from_utf8_lossy(&o.stderr));
    let s1 = mount_stats(&src);
    let d = |k: &str| stat_or_zero(&s1, k) - stat_or_zero(&s0, k);
    eprintln!(
        "os.copy_file_range of 32 MiB: {} COPY_FILE_RANGE, {} READ, {} WRITE requests; {} in all",
        d("FUSE_COPY_FILE_RANGE"),
        d("FUSE_READ"),
        d("FUSE_WRITE"),
        d("fuse_requests")
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), (32 * M).to_string());
    assert!(d("FUSE_COPY_FILE_RANGE") >= 1, "the kernel did not ask the daemon to copy");
    assert_eq!((d("FUSE_READ"), d("FUSE_WRITE")), (0, 0), "data went through the kernel");
    assert_eq!(fs::read(&dst).unwrap(), bytes);
    assert_eq!(fs::metadata(&dst).unwrap().blocks(), fs::metadata(&src).unwrap().blocks());
    finish(m, &img);
}

/// xfs_io's `copy_range`: a range at other offsets (the bytes a read and write would give,
/// over data that was there), and a whole sparse file (its regions kept).
#[test]
fn xfs_io_copy_range() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let src = m.path("src");
    let bytes = sparse_file(&src);
    let dst = m.path("dst");
    let old = pattern(256 * K, 9);
    fs::write(&dst, &old).unwrap();
    xfs_io(&dst, &[&format!("copy_range -s {} -d 8192 -l {} {}", 8 * M - 100, 200 * K, src.display())]);
    let mut want = old.clone();
    want[8192..8192 + 200 * K as usize].copy_from_slice(&bytes[8 * M as usize - 100..(8 * M + 200 * K) as usize - 100]);
    assert_eq!(fs::read(&dst).unwrap(), want);
    // The source's hole over the destination's data: those blocks are freed, not zeros.
    assert!(fs::metadata(&dst).unwrap().blocks() < 256 * K / 512 - 40 * 8, "the hole's blocks were kept");

    let whole = m.path("whole");
    File::create(&whole).unwrap();
    xfs_io(&whole, &[&format!("copy_range {}", src.display())]);
    assert_eq!(fs::read(&whole).unwrap(), bytes);
    assert_eq!(seek_all(&whole), seek_all(&src));
    finish(m, &img);
}

/// FS_IOC_FIEMAP never reaches a FUSE daemon: the kernel answers EOPNOTSUPP itself (FUSE
/// inodes have no `fiemap` operation; fs/ioctl.c). If a kernel ever passes it on, this
/// fails and the README's note on `filefrag` must change.
#[test]
fn fiemap_is_not_available_through_fuse() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let p = m.path("f");
    fs::write(&p, pattern(64 * K, 1)).unwrap();
    let f = File::open(&p).unwrap();
    // struct fiemap (32 bytes) with no room for extents: only the count is asked for.
    let mut fiemap = [0u64; 4];
    fiemap[1] = u64::MAX; // fm_length
    const FS_IOC_FIEMAP: u32 = 0xC020_660B;
    // SAFETY: the ioctl reads and writes the 32-byte header only (fm_extent_count 0).
    let r = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP as _, fiemap.as_mut_ptr()) };
    assert_eq!((r, errno()), (-1, libc::EOPNOTSUPP));
    drop(f);
    finish(m, &img);
}

const EBADF: &str = "err 9";
const EACCES: &str = "err 13";
const EBUSY: &str = "err 16";
const EINVAL: &str = "err 22";

/// copy_file_range between two users' files, with the results Linux gives: a file the
/// caller may read copies into its own; a source not open for reading, a destination not
/// open for writing or open O_APPEND are EBADF (the kernel's checks), overlapping ranges
/// of one file EINVAL; a copy into a file with suid clears it unless the caller has
/// CAP_FSETID (root keeps it); a copy through another handle than an atomic session's is
/// EBUSY, and one through the session's handle is staged (an abort drops it).
#[test]
fn copies_between_users_follow_linux_permissions() {
    let img = Image::new("128M", &[]);
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("allow_other")]);
    fs::set_permissions(m.mnt.parent().unwrap(), fs::Permissions::from_mode(0o755)).unwrap();
    let d = m.path("pub");
    fs::create_dir(&d).unwrap();
    fs::set_permissions(&d, fs::Permissions::from_mode(0o1777)).unwrap();
    let path = |rel: &str| m.path(rel).to_str().unwrap().to_string();
    let (mut a, mut b) = (User::new(1000), User::new(65534));
    let (pa, pb, ps) = (path("pub/a"), path("pub/b"), path("pub/s"));
    a.ok(&format!("write {pa} 0123456789abcdefghij"));
    a.ok(&format!("chmod {pa} 644"));
    let s0 = mount_stats(&m.path("pub/a"));

    // B reads A's file into its own.
    b.ok(&format!("open in {pa} r"));
    b.ok(&format!("open out {pb} rwc"));
    assert_eq!(b.ok("copy in 0 out 0 20"), "20");
    assert_eq!(fs::read(m.path("pub/b")).unwrap(), b"0123456789abcdefghij");
    // The modes of the handles, as the kernel checks them.
    assert_eq!(b.run(&format!("open ain {pa} w")), EACCES, "B may not write A's file");
    b.ok(&format!("open wo {pb} w"));
    assert_eq!(b.run("copy wo 0 out 0 5"), EBADF, "a source not open for reading");
    b.ok(&format!("open ro {pb} r"));
    assert_eq!(b.run("copy in 0 ro 0 5"), EBADF, "a destination not open for writing");
    b.ok(&format!("open ap {pb} wa"));
    assert_eq!(b.run("copy in 0 ap 0 5"), EBADF, "an O_APPEND destination");
    assert_eq!(b.run("copy out 0 out 5 10"), EINVAL, "overlapping ranges of one file");
    assert_eq!(b.ok("copy out 0 out 20 10"), "10", "ranges of one file that do not overlap");

    // suid goes with a copy by its owner (no CAP_FSETID); root's copy keeps it.
    a.ok(&format!("write {ps} x"));
    a.ok(&format!("chmod {ps} 4755"));
    a.ok(&format!("open sin {pa} r"));
    a.ok(&format!("open sout {ps} rw"));
    assert_eq!(a.ok("copy sin 0 sout 0 4"), "4");
    assert_eq!(fs::metadata(m.path("pub/s")).unwrap().mode() & 0o7777, 0o755, "suid cleared");
    fs::set_permissions(m.path("pub/s"), fs::Permissions::from_mode(0o4755)).unwrap();
    let rin = File::open(m.path("pub/a")).unwrap();
    let rout = OpenOptions::new().write(true).open(m.path("pub/s")).unwrap();
    let (mut oi, mut oo) = (0i64, 0i64);
    // SAFETY: copy_file_range between open descriptors.
    let r = unsafe { libc::copy_file_range(rin.as_raw_fd(), &mut oi, rout.as_raw_fd(), &mut oo, 4, 0) };
    assert_eq!(r, 4, "root's copy: errno {}", errno());
    assert_eq!(fs::metadata(m.path("pub/s")).unwrap().mode() & 0o7777, 0o4755, "root keeps suid");

    // An atomic session of A's: a copy through another handle is refused, through the
    // session's handle staged.
    a.ok(&format!("open s1 {pa} rw"));
    a.ok(&format!("open s2 {pa} rw"));
    a.ok(&format!("open src {pb} r"));
    a.ok("ioctl s1 f501");
    assert_eq!(a.run("copy src 0 s2 0 5"), EBUSY, "a copy through another handle than the session's");
    assert_eq!(a.ok("copy src 10 s1 0 5"), "5");
    assert_eq!(a.ok("pread s2 0 20"), "abcde56789abcdefghij", "reads through any handle see the staged copy");
    a.ok("ioctl s1 f505");
    assert_eq!(fs::read(m.path("pub/a")).unwrap(), b"0123456789abcdefghij", "the abort drops the staged copy");
    // Six copies reached the daemon (the others the kernel refused): served there, not by
    // the kernel's READ and WRITE fallback, whose results would be the same.
    let s1 = mount_stats(&m.path("pub/a"));
    let copies = stat_or_zero(&s1, "FUSE_COPY_FILE_RANGE") - stat_or_zero(&s0, "FUSE_COPY_FILE_RANGE");
    assert_eq!(copies, 6, "COPY_FILE_RANGE requests");
    drop((rin, rout, a, b));
    finish(m, &img);
}
