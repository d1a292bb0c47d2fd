//! A filesystem filled by an ordinary metadata workload deletes everything (issue 41).
//!
//! Four threads, each in a directory of its own (as fsstress's processes), create small
//! files, directories and symlinks, write and overwrite, truncate, make hard links, rename,
//! set and remove xattrs, fallocate and punch holes and fsync, through the mount, as root,
//! until the filesystem is full; then they keep going on the full filesystem for a while.
//! Then `remove_dir_all` of everything must succeed (no ENOSPC for any entry), statfs
//! must show the space back, and fsck must find the image clean after the unmount.
//!
//! Before the fix, every unlink of such a filesystem failed with ENOSPC until an unmount:
//! the workload had pushed the used count past the capacity (a write counted its data
//! blocks, not the direct and indirect nodes it created), and removals were held to the
//! capacity as if they added blocks.
//!
//! `ROLLFS_FULL_DELETE_SECS` bounds each fill (default 40 s); the cases are several seeds
//! and image sizes and segment sizes.

use rollfs_tests::*;
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const THREADS: u64 = 4;

/// xorshift64*: deterministic per thread, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn statvfs(p: &Path) -> libc::statvfs {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: statvfs on a valid path into a zeroed struct.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut s) }, 0);
    s
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// What an operation of the workload may answer: done, refused for room, or refused for a
/// reason the workload's own choice explains (a directory moved below itself, not empty).
fn check(r: std::io::Result<()>, what: &str, enospc: &AtomicU64) {
    match r {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
            enospc.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOTEMPTY)) => {}
        Err(e) => panic!("{what}: {e}"),
    }
}

fn errno(r: i32) -> std::io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// One worker: a tree of its own (the first of `dirs`), a model of its names (files and
/// directories; hard links are names of their own), and the operation mix of fsstress.
struct Worker {
    rng: Rng,
    /// fallocate (mode 0, KEEP_SIZE) and hole punches in the mix.
    fallocate: bool,
    dirs: Vec<PathBuf>,
    files: Vec<PathBuf>,
    serial: u64,
}

impl Worker {
    fn name(&mut self, prefix: &str) -> PathBuf {
        self.serial += 1;
        let d = self.dirs[self.rng.below(self.dirs.len() as u64) as usize].clone();
        d.join(format!("{prefix}{}", self.serial))
    }

    fn file(&mut self) -> Option<PathBuf> {
        (!self.files.is_empty()).then(|| self.files[self.rng.below(self.files.len() as u64) as usize].clone())
    }

    fn extent(&mut self) -> (u64, usize) {
        let off = match self.rng.below(10) {
            0..=5 => self.rng.below(3 * 4096),
            6..=7 => self.rng.below(64) * 4096 + self.rng.below(4096),
            _ => self.rng.below(4096) * 4096,
        };
        let len = match self.rng.below(10) {
            0..=6 => 1 + self.rng.below(6000) as usize,
            7..=8 => 4096 * (1 + self.rng.below(16) as usize),
            _ => 4096 * (16 + self.rng.below(48) as usize),
        };
        (off, len)
    }

    fn step(&mut self, enospc: &AtomicU64) {
        let k = self.rng.below(40);
        let fill = |n: usize, seed: u64| -> Vec<u8> { (0..n).map(|i| (seed as usize + i / 7) as u8 | 1).collect() };
        match k {
            0..=7 => {
                let p = self.name("f");
                match File::create(&p) {
                    Ok(f) => {
                        self.files.push(p.clone());
                        let len = 1 + self.rng.below(12_000) as usize;
                        check(f.write_all_at(&fill(len, self.serial), 0), "first write", enospc);
                    }
                    Err(e) => check(Err(e), "create", enospc),
                }
            }
            8..=10 => {
                let p = self.name("d");
                let r = fs::create_dir(&p);
                if r.is_ok() {
                    self.dirs.push(p);
                }
                check(r, "mkdir", enospc);
            }
            11..=12 => {
                let p = self.name("s");
                let target = "t".repeat(1 + self.rng.below(300) as usize);
                let r = std::os::unix::fs::symlink(&target, &p);
                check(r, "symlink", enospc);
            }
            13..=17 => {
                let Some(p) = self.file() else { return };
                let (off, len) = self.extent();
                let r = OpenOptions::new().write(true).open(&p).and_then(|f| f.write_all_at(&fill(len, off), off));
                check(r, "write", enospc);
            }
            18..=19 => {
                let Some(p) = self.file() else { return };
                let size = fs::metadata(&p).unwrap().len();
                let new =
                    if self.rng.below(3) == 0 { size + self.rng.below(1 << 20) } else { self.rng.below(size + 1) };
                let r = OpenOptions::new().write(true).open(&p).and_then(|f| f.set_len(new));
                check(r, "truncate", enospc);
            }
            20..=21 => {
                let Some(p) = self.file() else { return };
                let q = self.name("l");
                let r = fs::hard_link(&p, &q);
                if r.is_ok() {
                    self.files.push(q);
                }
                check(r, "link", enospc);
            }
            22..=24 => {
                // Rename a file, or (sometimes) a directory other than the worker's own.
                let dir = self.rng.below(4) == 0 && self.dirs.len() > 1;
                let from = if dir {
                    self.dirs[1 + self.rng.below(self.dirs.len() as u64 - 1) as usize].clone()
                } else {
                    let Some(p) = self.file() else { return };
                    p
                };
                let to = self.name("r");
                let r = fs::rename(&from, &to);
                if r.is_ok() {
                    if dir {
                        // Everything below moves with it.
                        for p in self.dirs.iter_mut().chain(self.files.iter_mut()) {
                            if let Ok(rest) = p.strip_prefix(&from) {
                                *p = to.join(rest);
                            }
                        }
                    } else {
                        let i = self.files.iter().position(|p| *p == from).unwrap();
                        self.files[i] = to;
                    }
                }
                check(r, "rename", enospc);
            }
            25 => {
                let Some(p) = self.file() else { return };
                let r = fs::remove_file(&p);
                if r.is_ok() {
                    self.files.retain(|q| *q != p);
                }
                check(r, "unlink", enospc);
            }
            26 if self.dirs.len() > 1 => {
                let i = 1 + self.rng.below(self.dirs.len() as u64 - 1) as usize;
                let p = self.dirs[i].clone();
                let r = fs::remove_dir(&p);
                if r.is_ok() {
                    self.dirs.remove(i);
                }
                check(r, "rmdir", enospc);
            }
            27..=31 => {
                let Some(p) = self.file() else { return };
                let name = CString::new(format!("user.a{}", self.rng.below(8))).unwrap();
                let value = vec![b'v'; 1 + self.rng.below(400) as usize];
                let c = cpath(&p);
                // SAFETY: valid C strings and a buffer of the given length.
                let r = unsafe { libc::setxattr(c.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
                check(errno(r), "setxattr", enospc);
            }
            32 => {
                let Some(p) = self.file() else { return };
                let name = CString::new(format!("user.a{}", self.rng.below(8))).unwrap();
                let c = cpath(&p);
                // SAFETY: valid C strings.
                let r = errno(unsafe { libc::removexattr(c.as_ptr(), name.as_ptr()) });
                if !matches!(&r, Err(e) if e.raw_os_error() == Some(libc::ENODATA)) {
                    check(r, "removexattr", enospc);
                }
            }
            33..=34 => {
                let Some(p) = self.file() else { return };
                let r = OpenOptions::new().write(true).open(&p).and_then(|f| {
                    if self.rng.below(2) == 0 {
                        f.sync_all()
                    } else {
                        f.sync_data()
                    }
                });
                check(r, "fsync", enospc);
            }
            35..=37 if self.fallocate => {
                let Some(p) = self.file() else { return };
                let (off, len) = self.extent();
                let mode = match self.rng.below(3) {
                    0 => 0,
                    1 => libc::FALLOC_FL_KEEP_SIZE,
                    _ => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                };
                let r = OpenOptions::new().write(true).open(&p).and_then(|f| {
                    // SAFETY: fallocate on an open descriptor.
                    errno(unsafe { libc::fallocate(f.as_raw_fd(), mode, off as i64, len as i64) })
                });
                check(r, "fallocate", enospc);
            }
            _ => {
                let Some(p) = self.file() else { return };
                let _ = fs::metadata(&p).unwrap();
            }
        }
    }
}

/// Fills a fresh image (`mkfs` arguments) with the workload, keeps going on the full
/// filesystem, then removes everything and checks that the space comes back.
fn fill_then_remove_everything(size: &str, mkfs: &[&str], seed: u64, fallocate: bool) {
    let what = format!("{size} {mkfs:?} seed {seed} fallocate {fallocate}");
    let img = Image::new(size, mkfs);
    let m = img.mount();
    let start = Instant::now();
    let limit =
        Duration::from_secs(std::env::var("ROLLFS_FULL_DELETE_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(40));
    let enospc = Arc::new(AtomicU64::new(0));
    let full_at: Arc<std::sync::Mutex<Option<Instant>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for t in 0..THREADS {
        let root = m.path(&format!("p{t}"));
        fs::create_dir(&root).unwrap();
        let (enospc, stop, full_at, mnt) = (enospc.clone(), stop.clone(), full_at.clone(), m.mnt.clone());
        handles.push(std::thread::spawn(move || {
            let mut w = Worker { rng: Rng(seed * 1000 + t + 1), fallocate, dirs: vec![root], files: vec![], serial: 0 };
            let mut ops = 0u64;
            while !stop.load(Ordering::Relaxed) {
                w.step(&enospc);
                ops += 1;
                if t == 0 && ops.is_multiple_of(64) && full_at.lock().unwrap().is_none() && statvfs(&mnt).f_bfree == 0 {
                    *full_at.lock().unwrap() = Some(Instant::now());
                }
            }
            ops
        }));
    }
    // Until full, then as long again (at most 10 s) on the full filesystem.
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let full = *full_at.lock().unwrap();
        let done = match full {
            Some(at) => at.elapsed() >= (at - start).min(Duration::from_secs(10)),
            None => start.elapsed() >= limit,
        };
        if done {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let ops: u64 = handles.into_iter().map(|h| h.join().expect("a worker panicked")).sum();
    let full = *full_at.lock().unwrap();
    let s0 = statvfs(&m.mnt);
    let stats0 = mount_stats(&m.mnt);
    eprintln!(
        "{what}: {ops} operations in {:.1} s ({} ENOSPC), full after {:?}; used {} of {} blocks",
        start.elapsed().as_secs_f64(),
        enospc.load(Ordering::Relaxed),
        full.map(|f| f - start),
        s0.f_blocks - s0.f_bfree,
        s0.f_blocks
    );
    assert!(full.is_some(), "{what}: the workload did not fill the filesystem in {limit:?}");
    let removing = Instant::now();
    for t in 0..THREADS {
        let p = m.path(&format!("p{t}"));
        if let Err(e) = fs::remove_dir_all(&p) {
            panic!(
                "{what}: rm -rf {} failed: {e} ({:?}); stats: {}",
                p.display(),
                e.kind() == ErrorKind::StorageFull,
                mount_stats(&m.mnt)
            );
        }
    }
    let s1 = statvfs(&m.mnt);
    let used = s1.f_blocks - s1.f_bfree;
    eprintln!(
        "{what}: removed everything in {:.2} s; {used} blocks used after (before: stats {stats0}; after: {})",
        removing.elapsed().as_secs_f64(),
        mount_stats(&m.mnt)
    );
    // What is left: the root directory's inode and its dentry blocks.
    assert!(used <= 8, "{what}: {used} blocks still used after removing everything");
    assert!(m.unmount().success(), "{what}: unclean unmount");
    img.assert_fsck_clean();
}

#[test]
fn a_filesystem_filled_by_a_mixed_workload_removes_everything() {
    // Small segments (more segments, more cleaning), the default 2 MiB ones, and one in
    // between; each with a seed of its own, with fallocate reservations in the mix and
    // without (the issue's two runs).
    fill_then_remove_everything("64M", &["--segment-size", "64K"], 1, true);
    fill_then_remove_everything("96M", &[], 2, false);
    fill_then_remove_everything("64M", &["--segment-size", "256K"], 3, true);
    fill_then_remove_everything("128M", &[], 4, true);
    fill_then_remove_everything("64M", &["--segment-size", "64K"], 5, false);
}
