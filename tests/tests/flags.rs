//! File attribute flags through real mounts: `chattr`/`lsattr` (e2fsprogs), `xfs_io
//! chattr` (FS_IOC_FSSETXATTR) and the ioctls from Rust. FUSE inodes have no S_IMMUTABLE or
//! S_APPEND, so the kernel passes every call on: each refusal here is the daemon's (EPERM
//! at the system call, also through a descriptor opened before the flag was set), as ext4
//! refuses them. Who may set what, as root and as other users (`rollfs-as`); the flags
//! after a remount and after a power cut right after `chattr` returned.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

const IMMUTABLE: u32 = 0x10;
const APPEND: u32 = 0x20;
const NODUMP: u32 = 0x40;
const NOATIME: u32 = 0x80;
const FS_IOC_GETFLAGS: u32 = 0x8008_6601;
const FS_IOC_SETFLAGS: u32 = 0x4008_6602;
const FS_IOC_FSGETXATTR: u32 = 0x801c_581f;
const EPERM: i32 = libc::EPERM;

/// Opens `p` as lsattr and chattr do (read-only, non-blocking: files and directories).
fn open_for_flags(p: &Path) -> File {
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(p).unwrap()
}

fn getflags(p: &Path) -> u32 {
    let f = open_for_flags(p);
    let mut v: libc::c_int = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one int.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_GETFLAGS as _, &mut v) };
    assert_eq!(r, 0, "FS_IOC_GETFLAGS {}: {}", p.display(), std::io::Error::last_os_error());
    v as u32
}

fn setflags(p: &Path, v: u32) -> Result<(), i32> {
    let f = open_for_flags(p);
    let v = v as libc::c_int;
    // SAFETY: FS_IOC_SETFLAGS reads one int.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_SETFLAGS as _, &v) };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap())
    } else {
        Ok(())
    }
}

/// The errno of a failed call, or "ok".
fn err<T>(r: std::io::Result<T>) -> Result<(), i32> {
    r.map(drop).map_err(|e| e.raw_os_error().unwrap_or(-1))
}

fn libc_err(r: libc::c_int) -> Result<(), i32> {
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap())
    } else {
        Ok(())
    }
}

fn cpath(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.to_str().unwrap()).unwrap()
}

/// `chattr ARGS PATH`: its exit status and stderr.
fn chattr(args: &str, p: &Path) -> (bool, String) {
    let o = Command::new("chattr").args(args.split(' ')).arg(p).output().expect("chattr (e2fsprogs)");
    (o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The flag letters `lsattr -d` prints for `p`.
fn lsattr(p: &Path) -> String {
    let o = Command::new("lsattr").arg("-d").arg(p).output().expect("lsattr (e2fsprogs)");
    assert!(o.status.success(), "lsattr: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap().to_string()
}

/// Everything an immutable file refuses, through the mount: each EPERM.
fn assert_immutable(m: &Mount, rel: &str) {
    let p = m.path(rel);
    let q = m.path(&format!("{rel}.other"));
    let t = libc::timespec { tv_sec: 5, tv_nsec: 0 };
    // SAFETY (the libc calls): valid C strings and a times array that outlives the call.
    let refused: Vec<(&str, Result<(), i32>)> = vec![
        ("open for writing", err(OpenOptions::new().write(true).open(&p))),
        ("open O_APPEND", err(OpenOptions::new().append(true).open(&p))),
        ("open O_TRUNC", err(OpenOptions::new().write(true).truncate(true).open(&p))),
        ("truncate", libc_err(unsafe { libc::truncate(cpath(&p).as_ptr(), 0) })),
        ("unlink", err(fs::remove_file(&p))),
        ("rename", err(fs::rename(&p, &q))),
        ("link", err(fs::hard_link(&p, &q))),
        ("chmod", err(fs::set_permissions(&p, fs::Permissions::from_mode(0o600)))),
        ("chown", err(std::os::unix::fs::chown(&p, Some(5), None))),
        ("touch", libc_err(unsafe { libc::utimensat(libc::AT_FDCWD, cpath(&p).as_ptr(), std::ptr::null(), 0) })),
        ("utimes", libc_err(unsafe { libc::utimensat(libc::AT_FDCWD, cpath(&p).as_ptr(), [t, t].as_ptr(), 0) })),
        (
            "setxattr",
            libc_err(unsafe { libc::setxattr(cpath(&p).as_ptr(), c"user.k".as_ptr(), b"v".as_ptr() as _, 1, 0) }),
        ),
    ];
    for (what, r) in refused {
        assert_eq!(r, Err(EPERM), "{rel}: {what}");
    }
    fs::write(&q, b"other").unwrap();
    assert_eq!(err(fs::rename(&q, &p)), Err(EPERM), "{rel}: rename over it");
    fs::remove_file(&q).unwrap();
}

/// A shared writable mapping of `p` made before `chattr +i`: the pages dirtied afterwards
/// never reach the file (msync gets EPERM: the daemon refuses the kernel's writeback), and
/// readers soon stop seeing them (the daemon drops the refused pages from the kernel's
/// cache). ext4 refuses the page fault instead; FUSE has no such hook.
fn assert_mapping_writes_refused(p: &Path, old: &[u8]) {
    let f = OpenOptions::new().read(true).write(true).open(p).unwrap();
    let len = old.len();
    // SAFETY: a shared mapping of `len` bytes of an open file, unmapped below.
    let map = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, f.as_raw_fd(), 0)
    };
    assert_ne!(map, libc::MAP_FAILED);
    assert!(chattr("+i", p).0);
    // SAFETY: within the mapping.
    unsafe { std::ptr::write_bytes(map as *mut u8, b'M', len) };
    // SAFETY: the mapping made above.
    let r = libc_err(unsafe { libc::msync(map, len, libc::MS_SYNC) });
    // SAFETY: as above.
    unsafe { libc::munmap(map, len) };
    drop(f);
    assert_eq!(r, Err(EPERM), "msync of pages dirtied after chattr +i");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while fs::read(p).unwrap() != old {
        assert!(std::time::Instant::now() < deadline, "the refused pages are still what readers see");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(chattr("-i", p).0);
}

#[test]
fn chattr_i_makes_files_and_directories_immutable() {
    let img = Image::new("64M", &[]);
    let m = img.mount();
    let f = m.path("f");
    fs::write(&f, b"data").unwrap();
    fs::create_dir(m.path("d")).unwrap();
    fs::write(m.path("d/x"), b"x").unwrap();
    // A descriptor opened for writing before the flag is set.
    let early = OpenOptions::new().read(true).write(true).open(&f).unwrap();

    let (ok, e) = chattr("+i", &f);
    assert!(ok, "chattr +i: {e}");
    assert!(lsattr(&f).contains('i'), "lsattr: {}", lsattr(&f));
    assert_eq!(getflags(&f), IMMUTABLE);
    assert_immutable(&m, "f");
    // No write reaches the file through the early descriptor either: refused at the call
    // (no write-back cache holds it for later).
    assert_eq!(err(early.write_at(b"late", 0)), Err(EPERM), "write through an earlier descriptor");
    assert_eq!(err(early.set_len(0)), Err(EPERM), "ftruncate through an earlier descriptor");
    drop(early);
    assert_eq!(fs::read(&f).unwrap(), b"data", "reads work and nothing changed");

    // An immutable directory: no entry added, removed or renamed; its files stay writable.
    assert!(chattr("+i", &m.path("d")).0);
    assert_eq!(err(fs::write(m.path("d/n"), b"n")), Err(EPERM), "create");
    assert_eq!(err(fs::create_dir(m.path("d/s"))), Err(EPERM), "mkdir");
    assert_eq!(err(fs::remove_file(m.path("d/x"))), Err(EPERM), "unlink");
    assert_eq!(err(fs::rename(m.path("d/x"), m.path("x"))), Err(EPERM), "rename out");
    assert_eq!(err(fs::remove_dir(m.path("d"))), Err(EPERM), "rmdir");
    fs::write(m.path("d/x"), b"rewritten").unwrap();

    // A flag rollfs does not keep (compression): EOPNOTSUPP, as ext4.
    fs::write(m.path("g"), b"g").unwrap();
    assert_eq!(setflags(&m.path("g"), 0x4), Err(libc::EOPNOTSUPP));
    let (ok, _) = chattr("+c", &m.path("g"));
    assert!(!ok, "chattr +c must fail");
    // While immutable, no other flag changes (ext4's rule).
    assert_eq!(setflags(&f, IMMUTABLE | NODUMP), Err(EPERM));

    assert!(chattr("-i", &f).0 && chattr("-i", &m.path("d")).0);
    assert_eq!(getflags(&f), 0);
    assert_mapping_writes_refused(&f, b"data");
    fs::write(&f, b"changed").unwrap();
    fs::remove_file(&f).unwrap();
    fs::remove_file(m.path("d/x")).unwrap();
    fs::remove_dir(m.path("d")).unwrap();
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn chattr_a_allows_appends_only() {
    let img = Image::new("64M", &[]);
    let m = img.mount();
    let p = m.path("log");
    fs::write(&p, b"one\n").unwrap();
    assert!(chattr("+a", &p).0);
    assert!(lsattr(&p).contains('a'), "lsattr: {}", lsattr(&p));
    let mut a = OpenOptions::new().append(true).open(&p).unwrap();
    a.write_all(b"two\n").unwrap();
    let refused: Vec<(&str, Result<(), i32>)> = vec![
        ("open for writing without O_APPEND", err(OpenOptions::new().write(true).open(&p))),
        ("open O_APPEND|O_TRUNC", err(OpenOptions::new().append(true).custom_flags(libc::O_TRUNC).open(&p))),
        ("truncate", libc_err(unsafe { libc::truncate(cpath(&p).as_ptr(), 0) })),
        ("ftruncate", err(a.set_len(0))),
        ("unlink", err(fs::remove_file(&p))),
        ("rename", err(fs::rename(&p, m.path("log2")))),
        ("link", err(fs::hard_link(&p, m.path("log2")))),
        ("chmod", err(fs::set_permissions(&p, fs::Permissions::from_mode(0o600)))),
    ];
    for (what, r) in refused {
        assert_eq!(r, Err(EPERM), "{what}");
    }
    // O_APPEND cleared with fcntl (Linux refuses that on ext4; FUSE cannot): a write that
    // is not at the end is still refused, by the daemon.
    // SAFETY: fcntl on an open descriptor.
    assert_eq!(unsafe { libc::fcntl(a.as_raw_fd(), libc::F_SETFL, 0) }, 0);
    assert_eq!(err(a.write_at(b"X", 0)), Err(EPERM), "overwrite after F_SETFL");
    a.write_all_at(b"three\n", 8).unwrap();
    drop(a);
    // `touch` (times set to now) is allowed on an append-only file; explicit times are not.
    // SAFETY: valid path; null times mean now.
    assert_eq!(libc_err(unsafe { libc::utimensat(libc::AT_FDCWD, cpath(&p).as_ptr(), std::ptr::null(), 0) }), Ok(()));
    assert_eq!(fs::read(&p).unwrap(), b"one\ntwo\nthree\n");

    // An append-only directory takes new entries and keeps its old ones.
    let d = m.path("d");
    fs::create_dir(&d).unwrap();
    fs::write(d.join("old"), b"o").unwrap();
    assert_eq!(setflags(&d, APPEND), Ok(()));
    fs::write(d.join("new"), b"n").unwrap();
    assert_eq!(err(fs::remove_file(d.join("old"))), Err(EPERM));
    assert_eq!(err(fs::rename(d.join("old"), d.join("renamed"))), Err(EPERM));

    assert!(chattr("-a", &p).0 && chattr("-a", &d).0);
    fs::write(&p, b"rewritten").unwrap();
    fs::remove_file(&p).unwrap();
    fs::remove_file(d.join("old")).unwrap();
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn no_dump_no_atime_and_xfs_io_chattr() {
    let img = Image::new("64M", &[]);
    let m = img.mount();
    let d = m.path("d");
    fs::create_dir(&d).unwrap();
    assert!(chattr("+dA", &d).0);
    let l = lsattr(&d);
    assert!(l.contains('d') && l.contains('A'), "lsattr: {l}");
    // Inherited by what is created in it, as in ext4.
    fs::write(d.join("f"), b"f").unwrap();
    assert_eq!(getflags(&d.join("f")), NODUMP | NOATIME);
    // xfs_io's chattr sets through FS_IOC_FSSETXATTR (the kernel reads FSGETXATTR first);
    // `-r` opens read-only: without it xfs_io opens for writing, which an immutable file
    // refuses (EPERM, as on ext4).
    let f = d.join("f");
    let o = Command::new("xfs_io").args(["-r", "-c", "chattr +i"]).arg(&f).output().expect("xfs_io (xfsprogs)");
    assert!(o.status.success(), "xfs_io chattr +i: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(getflags(&f), NODUMP | NOATIME | IMMUTABLE);
    let file = open_for_flags(&f);
    let mut x = [0u8; 28];
    // SAFETY: FS_IOC_FSGETXATTR writes a 28-byte struct fsxattr.
    assert_eq!(unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FSGETXATTR as _, x.as_mut_ptr()) }, 0);
    let xflags = u32::from_ne_bytes(x[..4].try_into().unwrap());
    assert_eq!(xflags, 0x8 | 0x40 | 0x80, "FS_XFLAG_IMMUTABLE | NOATIME | NODUMP");
    drop(file);
    assert_eq!(err(fs::write(&f, b"x")), Err(EPERM));
    let o = Command::new("xfs_io").args(["-c", "chattr -i"]).arg(&f).output().unwrap();
    assert!(!o.status.success(), "xfs_io opening an immutable file for writing");
    let o = Command::new("xfs_io").args(["-r", "-c", "lsattr"]).arg(&f).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("--i--Ad---"), "xfs_io lsattr: {}", stdout(&o));
    let o = Command::new("xfs_io").args(["-r", "-c", "chattr -i"]).arg(&f).output().unwrap();
    assert!(o.status.success(), "xfs_io chattr -i: {}", String::from_utf8_lossy(&o.stderr));
    fs::write(&f, b"x").unwrap();
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

/// A shared mount: root mounts with `-o allow_other` and lets other users reach it.
fn shared_mount(img: &Image) -> Mount {
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("allow_other")]);
    fs::set_permissions(m.mnt.parent().unwrap(), fs::Permissions::from_mode(0o755)).unwrap();
    m
}

#[test]
fn only_root_sets_immutable_and_append_only_and_only_owners_set_flags() {
    const A: u32 = 1000;
    const B: u32 = 65534;
    let img = Image::new("64M", &[]);
    let m = shared_mount(&img);
    let pub_dir = m.path("pub");
    fs::create_dir(&pub_dir).unwrap();
    fs::set_permissions(&pub_dir, fs::Permissions::from_mode(0o1777)).unwrap();
    let (mut a, mut b) = (User::new(A), User::new(B));
    let f = m.path("pub/a").to_str().unwrap().to_string();
    a.ok(&format!("write {f} A1"));

    // The owner sets no-dump and no-atime; not immutable or append-only (no
    // CAP_LINUX_IMMUTABLE); another user nothing, reading is for all.
    assert_eq!(a.run(&format!("setflags {f} c0")), "ok");
    assert_eq!(a.run(&format!("getflags {f}")), "ok c0");
    assert_eq!(a.run(&format!("setflags {f} 10")), "err 1", "immutable by the owner");
    assert_eq!(a.run(&format!("setflags {f} 20")), "err 1", "append-only by the owner");
    assert_eq!(b.run(&format!("setflags {f} 0")), "err 1", "flags by another user");
    assert_eq!(b.run(&format!("getflags {f}")), "ok c0");
    assert_eq!(b.run(&format!("fitrim {}", m.mnt.display())), "err 1", "FITRIM by a user");

    // Root makes the user's file immutable: the owner can neither change it nor clear it.
    setflags(Path::new(&f), IMMUTABLE).unwrap();
    assert_eq!(a.run(&format!("open w {f} rw")), "err 1", "open for writing");
    assert_eq!(a.run(&format!("unlink {f}")), "err 1");
    assert_eq!(a.run(&format!("chmod {f} 600")), "err 1");
    assert_eq!(a.run(&format!("setflags {f} 0")), "err 1", "the owner clears immutable");
    assert_eq!(a.run(&format!("read {f}")), "ok A1");
    setflags(Path::new(&f), APPEND).unwrap();
    assert_eq!(a.run(&format!("open w {f} w")), "err 1", "open for writing without O_APPEND");
    a.ok(&format!("open w {f} wa"));
    a.ok("pwrite w 0 A2");
    a.ok("close w");
    assert_eq!(a.run(&format!("read {f}")), "ok A1A2");
    setflags(Path::new(&f), 0).unwrap();
    a.ok(&format!("unlink {f}"));
    drop((a, b));
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn flags_survive_a_remount_and_a_power_cut_after_chattr_returned() {
    let img = Image::new("64M", &[]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(&img.path, &[OsStr::new("--record-writes"), log.as_os_str()]);
    // Created and written without an fsync: chattr's own durability carries them.
    fs::write(m.path("frozen"), b"frozen data").unwrap();
    fs::write(m.path("log"), b"entry\n").unwrap();
    fs::create_dir(m.path("d")).unwrap();
    fs::write(m.path("d/kept"), b"k").unwrap();
    assert!(chattr("+i", &m.path("frozen")).0);
    assert!(chattr("+a", &m.path("log")).0);
    assert!(chattr("+ad", &m.path("d")).0);
    // Power loss now: the daemon dies; only what was flushed survives (unflushed writes
    // dropped by a seeded choice).
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(m.pid().unwrap() as i32, libc::SIGKILL) }, 0);
    let _ = m.wait();
    let out = img.dir.path().join("crash.img");
    replay_power_cut(&log, &out, None, Some(3));
    let o = rollfs([OsStr::new("fsck"), out.as_os_str()]);
    assert!(o.status.success(), "fsck of the crash image: {}", stdout(&o));
    let o = rollfs([OsStr::new("inspect"), out.as_os_str()]);
    assert!(
        stdout(&o).contains("attribute flags:   inodes 1 immutable, 2 append-only, 1 no-dump, 0 no-atime"),
        "inspect: {}",
        stdout(&o)
    );

    for round in ["after the power cut", "after a remount"] {
        let m = Mount::new(&out, &[]);
        assert_eq!(getflags(&m.path("frozen")), IMMUTABLE, "{round}");
        assert_eq!(getflags(&m.path("log")), APPEND, "{round}");
        assert_eq!(getflags(&m.path("d")), APPEND | NODUMP, "{round}");
        assert_eq!(fs::read(m.path("frozen")).unwrap(), b"frozen data", "{round}");
        assert_immutable(&m, "frozen");
        assert_eq!(err(fs::remove_file(m.path("d/kept"))), Err(EPERM), "{round}");
        assert_eq!(err(OpenOptions::new().write(true).open(m.path("log"))), Err(EPERM), "{round}");
        assert!(m.unmount().success());
    }
    let o = rollfs([OsStr::new("fsck"), out.as_os_str()]);
    assert!(o.status.success(), "fsck after the remounts: {}", stdout(&o));
}

/// The flags at every crash point of a recorded mount of `bin` (with `envs`: a mutant),
/// among the states `rollfs crashtest` checks (after each write, wait, flush, the
/// unflushed writes in seeded subsets, the newest torn): once `chattr` returned, every
/// later crash shows that change or a later one, and each image mounts and is fsck clean.
/// Returns the states checked, or the first violation.
fn crash_states_keep_the_flags(bin: &Path, envs: &[(&str, &str)], max_states: u64) -> Result<u64, String> {
    let img = Image::new("64M", &["--segment-size", "256K"]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::try_new_with(bin, envs, &img.path, &[OsStr::new("--record-writes"), log.as_os_str()])?;
    fs::write(m.path("a"), b"a").unwrap();
    fs::write(m.path("b"), b"b").unwrap();
    fs::create_dir(m.path("d")).unwrap();
    // The files are durable before any chattr (a checkpoint): what a crash may lose is
    // then the flags alone.
    File::open(&m.mnt).unwrap().sync_all().unwrap();
    // (path, flags after each acknowledged change, the log point it returned at)
    let mut history: Vec<(&str, u32, u64)> = Vec::new();
    let steps: [(&str, u32); 7] = [
        ("a", IMMUTABLE),
        ("b", APPEND | NODUMP),
        ("d", APPEND),
        ("a", 0),
        ("b", NOATIME),
        ("a", IMMUTABLE | NODUMP),
        ("d", 0),
    ];
    for (name, flags) in steps {
        setflags(&m.path(name), flags).unwrap();
        history.push((name, flags, log_point(&log)));
    }
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let out = img.dir.path().join("crash.img");
    let mut first: Option<String> = None;
    let states = for_each_crash_state(&log, &out, max_states, 39, |point, what| {
        if first.is_none() {
            first = check_flags_at(&out, point, &history).err().map(|e| format!("{what}: {e}"));
        }
    });
    first.map_or(Ok(states), Err)
}

/// One crash image of [`crash_states_keep_the_flags`] at crash point `point`.
fn check_flags_at(img: &Path, point: u64, history: &[(&str, u32, u64)]) -> Result<(), String> {
    let m = Mount::try_new(img, &[]).map_err(|e| format!("does not mount: {e}"))?;
    for name in ["a", "b", "d"] {
        // The acknowledged changes of `name` up to the crash: the last one, or a later.
        let changes: Vec<&(&str, u32, u64)> = history.iter().filter(|h| h.0 == name).collect();
        let Some(k) = changes.iter().rposition(|h| h.2 <= point) else { continue };
        if !m.path(name).exists() {
            return Err(format!("{name} is gone, although chattr of it returned"));
        }
        let now = getflags(&m.path(name));
        if !changes[k..].iter().any(|h| h.1 == now) {
            return Err(format!("{name} has flags {now:#x}, acknowledged {:#x} (or a later change)", changes[k].1));
        }
    }
    if !m.unmount().success() {
        return Err("unmount failed".into());
    }
    let o = rollfs([OsStr::new("fsck"), img.as_os_str()]);
    if !o.status.success() {
        return Err(format!("fsck: {}", stdout(&o)));
    }
    Ok(())
}

/// Every crash after `chattr` returned keeps what it set (a set is durable on return: the
/// driver fsyncs the inode); the driver mutant that replies before that fsync is caught,
/// and the same mutants build without a mutant chosen passes.
#[test]
fn every_crash_after_chattr_returned_keeps_the_flags() {
    let states = crash_states_keep_the_flags(&rollfs_bin(), &[], 300).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("flags: {states} crash states checked");
    assert!(states >= 100, "only {states} crash states");
    let bin = rollfs_mutants_bin();
    for mutant in rollfs::mutant::FLAGS_NAMES {
        let e = crash_states_keep_the_flags(&bin, &[("ROLLFS_MUTANT", mutant)], 300)
            .expect_err("the mutant went unnoticed");
        eprintln!("{mutant} caught: {e}");
    }
    crash_states_keep_the_flags(&bin, &[], 100).unwrap_or_else(|e| panic!("the mutants build without a mutant: {e}"));
}
