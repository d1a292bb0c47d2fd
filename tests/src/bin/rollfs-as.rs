//! `rollfs-as`: a scripted file-system client the security tests run as another user
//! (`Command::uid/gid`), so the requests reach the mount with that user's credentials and
//! without root's capabilities. It reads one command a line from stdin and answers one line
//! on stdout: `ok [VALUE]` or `err ERRNO` (the number). Descriptors live in named slots
//! across commands, so a test can interleave two users' operations on one file.
//!
//! Commands (TEXT has no spaces; MODE is octal):
//! - `open SLOT PATH r|w|rw|rwt|rwc|rd|rwd|wa` — O_RDONLY, O_WRONLY, O_RDWR, O_RDWR|O_TRUNC,
//!   O_RDWR|O_CREAT (0644), O_RDONLY|O_DIRECT, O_RDWR|O_DIRECT, O_WRONLY|O_APPEND
//! - `copy SLOT_IN OFF_IN SLOT_OUT OFF_OUT LEN` — one copy_file_range(2): `ok COPIED`
//! - `close SLOT`, `fsync SLOT`, `ftruncate SLOT LEN`
//! - `ioctl SLOT CMD` (CMD in hex, an `_IO` ioctl without argument), `stats SLOT`,
//!   `features SLOT` (F2FS_IOC_GET_FEATURES, `ok HEX`)
//! - `pwrite SLOT OFF TEXT`, `pread SLOT OFF LEN`, `fill SLOT OFF LEN BYTE` (from a
//!   page-aligned buffer, so it works on O_DIRECT slots with aligned OFF and LEN)
//! - `sum SLOT OFF LEN` — reads up to LEN bytes from OFF (until a short read: the end of
//!   the file) into a page-aligned buffer: `ok N DIGEST` ([`rollfs_tests::digest`] in hex)
//! - `dontneed SLOT` — posix_fadvise(POSIX_FADV_DONTNEED) of the whole file
//! - `atomic-cycle SLOT OFF LEN BYTE` — F2FS_IOC_START_ATOMIC_WRITE, one pwrite of LEN
//!   bytes of BYTE at OFF, F2FS_IOC_ABORT_VOLATILE_WRITE (stops at the first error)
//! - `rename OLD NEW`, `unlink PATH`, `rmdir PATH`, `readdir PATH` — `ok NAME,NAME,...`
//!   (sorted, without `.` and `..`)
//! - `renames DIR NAME N` — renames DIR/NAME through N fresh names of 255 bytes, one after
//!   the other, and back to NAME (stops at the first error): `ok N`
//! - `chain SLOT DIR N` — goes N directories `d` down from DIR, making those that do not
//!   exist (mode 0755), and keeps the bottom one open in SLOT (made writable by everyone
//!   when this user owns it): paths that deep are longer than PATH_MAX
//! - `renameat SLOT NAME SLOT2 NAME2` — renameat(2) between directories open in two slots
//! - `dents SLOT MAX BUF` — getdents64 on a directory open in SLOT (`open SLOT DIR r`) with
//!   a buffer of BUF bytes per call (small: the kernel resumes the listing from the last
//!   entry's `d_off` at every call), until MAX entries or the end: `ok NAME:D_OFF,...` in
//!   listing order, `.` and `..` included
//! - `seek SLOT OFF` — lseek(SEEK_SET) on SLOT (seekdir to a `d_off`), `tell SLOT` — `ok POS`
//! - `read PATH`, `write PATH TEXT` (O_CREAT|O_TRUNC, 0644), `create PATH MODE`
//! - `mkdir PATH MODE`, `chmod PATH MODE`, `truncate PATH LEN`, `link OLD NEW`,
//!   `symlink TARGET NEW`, `chown PATH UID GID`, `mknod PATH` (the character device 1:3)
//! - `stat PATH` — `ok UID GID MODE`
//! - `getxattr PATH NAME`, `setxattr PATH NAME TEXT`, `removexattr PATH NAME`,
//!   `listxattr PATH` — `ok NAME,NAME,...`
//! - `id` — `ok UID GID`
//! - `getflags PATH` — FS_IOC_GETFLAGS (as lsattr: the path opened O_RDONLY|O_NONBLOCK):
//!   `ok HEX`; `setflags PATH HEX` — FS_IOC_SETFLAGS (as chattr)
//! - `fitrim PATH` — FITRIM of the whole device with minlen 0 on PATH (as fstrim):
//!   `ok BYTES` trimmed
//! - `nofile N` — sets this process's RLIMIT_NOFILE to N (soft and hard)

use std::collections::HashMap;
use std::ffi::CString;
use std::io::{BufRead, Write};

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(-1)
}

fn cpath(s: &str) -> CString {
    CString::new(s).expect("no NUL in paths")
}

fn check(r: libc::c_long) -> Result<String, i32> {
    if r < 0 {
        Err(errno())
    } else {
        Ok(String::new())
    }
}

fn octal(s: &str) -> u32 {
    u32::from_str_radix(s, 8).expect("octal mode")
}

/// A zeroed buffer of `len` bytes starting on a page boundary (O_DIRECT needs one).
struct Aligned {
    mem: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let mem = vec![0u8; len + 4096];
        let start = mem.as_ptr().align_offset(4096);
        Aligned { mem, start, len }
    }
}

impl std::ops::Deref for Aligned {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.mem[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.start..self.start + self.len]
    }
}

fn run(slots: &mut HashMap<String, i32>, words: &[&str]) -> Result<String, i32> {
    let slot = |slots: &HashMap<String, i32>, name: &str| *slots.get(name).expect("unknown slot");
    // SAFETY (all calls below): plain system calls on valid C strings, descriptors and
    // buffers that outlive the calls.
    unsafe {
        match words {
            ["id"] => Ok(format!("{} {}", libc::geteuid(), libc::getegid())),
            ["userns"] => {
                // Into a user namespace of our own, mapped as its root (`unshare -Ur`): a full
                // set of capabilities that hold only inside it.
                let (uid, gid) = (libc::geteuid(), libc::getegid());
                check(libc::unshare(libc::CLONE_NEWUSER) as _)?;
                let w = |f: &str, v: String| std::fs::write(f, v).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO));
                w("/proc/self/setgroups", "deny".into())?;
                w("/proc/self/uid_map", format!("0 {uid} 1"))?;
                w("/proc/self/gid_map", format!("0 {gid} 1"))?;
                Ok(String::new())
            }
            ["mmapfill", name, len, byte] => {
                // Grows the file to LEN bytes and dirties every page of it through a shared
                // mapping, then msync: the data reaches the filesystem by the kernel's
                // writeback, as WRITEs without a caller.
                let fd = slot(slots, name);
                let len: usize = len.parse().unwrap();
                check(libc::ftruncate(fd, len as i64) as _)?;
                let p =
                    libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0);
                if p == libc::MAP_FAILED {
                    return Err(errno());
                }
                let mem = std::slice::from_raw_parts_mut(p as *mut u8, len);
                for page in mem.chunks_mut(4096) {
                    page.fill(byte.parse::<u8>().unwrap());
                }
                let r = libc::msync(p, len, libc::MS_SYNC);
                let e = errno();
                libc::munmap(p, len);
                if r < 0 {
                    Err(e)
                } else {
                    Ok(String::new())
                }
            }
            ["nofile", n] => {
                let n = n.parse().unwrap();
                check(libc::setrlimit(libc::RLIMIT_NOFILE, &libc::rlimit { rlim_cur: n, rlim_max: n }) as _)
            }
            ["open", name, path, how] => {
                let flags = match *how {
                    "r" => libc::O_RDONLY,
                    "w" => libc::O_WRONLY,
                    "rw" => libc::O_RDWR,
                    "rwt" => libc::O_RDWR | libc::O_TRUNC,
                    "rwc" => libc::O_RDWR | libc::O_CREAT,
                    "rd" => libc::O_RDONLY | libc::O_DIRECT,
                    "rwd" => libc::O_RDWR | libc::O_DIRECT,
                    "wa" => libc::O_WRONLY | libc::O_APPEND,
                    _ => panic!("open mode {how}"),
                };
                let fd = libc::open(cpath(path).as_ptr(), flags | libc::O_CLOEXEC, 0o644);
                if fd < 0 {
                    return Err(errno());
                }
                slots.insert(name.to_string(), fd);
                Ok(String::new())
            }
            ["copy", src, off_in, dst, off_out, len] => {
                let (mut off_in, mut off_out): (i64, i64) = (off_in.parse().unwrap(), off_out.parse().unwrap());
                let r = libc::copy_file_range(
                    slot(slots, src),
                    &mut off_in,
                    slot(slots, dst),
                    &mut off_out,
                    len.parse().unwrap(),
                    0,
                );
                check(r as _).map(|_| r.to_string())
            }
            ["close", name] => {
                let fd = slots.remove(*name).expect("unknown slot");
                check(libc::close(fd) as _)
            }
            ["fsync", name] => check(libc::fsync(slot(slots, name)) as _),
            ["dents", name, max, bufsize] => {
                let fd = slot(slots, name);
                let max: usize = max.parse().unwrap();
                let mut buf = vec![0u8; bufsize.parse().unwrap()];
                let mut out = Vec::new();
                while out.len() < max {
                    let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
                    if n < 0 {
                        return Err(errno());
                    }
                    if n == 0 {
                        break;
                    }
                    // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, name.
                    let mut at = 0;
                    while at < n as usize {
                        let rec = &buf[at..];
                        let off = i64::from_ne_bytes(rec[8..16].try_into().unwrap());
                        let reclen = u16::from_ne_bytes(rec[16..18].try_into().unwrap()) as usize;
                        let name = &rec[19..reclen];
                        let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
                        out.push(format!("{}:{off}", String::from_utf8_lossy(name)));
                        at += reclen;
                    }
                }
                Ok(out.join(","))
            }
            ["seek", name, off] => check(libc::lseek(slot(slots, name), off.parse().unwrap(), libc::SEEK_SET) as _),
            ["tell", name] => {
                let r = libc::lseek(slot(slots, name), 0, libc::SEEK_CUR);
                check(r as _).map(|_| r.to_string())
            }
            ["fallocate", name, off, len] => {
                check(libc::fallocate(slot(slots, name), 0, off.parse().unwrap(), len.parse().unwrap()) as _)
            }
            ["ftruncate", name, len] => check(libc::ftruncate(slot(slots, name), len.parse().unwrap()) as _),
            ["ioctl", name, cmd] => {
                let cmd = u32::from_str_radix(cmd.trim_start_matches("0x"), 16).expect("hex ioctl");
                check(libc::ioctl(slot(slots, name), cmd as _) as _)
            }
            ["features", name] => {
                let mut v: u32 = 0;
                check(libc::ioctl(slot(slots, name), 0x8004_f50cu32 as _, &mut v as *mut u32) as _)
                    .map(|_| format!("{v:x}"))
            }
            ["stats", name] => {
                let mut buf = vec![0u8; 16383];
                check(libc::ioctl(slot(slots, name), 0xBFFF_5202u32 as _, buf.as_mut_ptr()) as _)
            }
            ["pwrite", name, off, text] => {
                let r = libc::pwrite(slot(slots, name), text.as_ptr() as *const _, text.len(), off.parse().unwrap());
                check(r as _).map(|_| r.to_string())
            }
            ["fill", name, off, len, byte] => {
                // LEN bytes of BYTE (decimal) from OFF, in writes of up to 1 MiB; stops at the
                // first error (`err ERRNO`) and reports the bytes written on success.
                let fd = slot(slots, name);
                let (mut off, len): (i64, usize) = (off.parse().unwrap(), len.parse().unwrap());
                let mut buf = Aligned::new(len.min(1 << 20));
                buf.fill(byte.parse::<u8>().unwrap());
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(buf.len());
                    let r = libc::pwrite(fd, buf.as_ptr() as *const _, n, off);
                    if r <= 0 {
                        return Err(errno());
                    }
                    done += r as usize;
                    off += r as i64;
                }
                Ok(done.to_string())
            }
            ["pread", name, off, len] => {
                let mut buf = vec![0u8; len.parse().unwrap()];
                let r = libc::pread(slot(slots, name), buf.as_mut_ptr() as *mut _, buf.len(), off.parse().unwrap());
                check(r as _).map(|_| String::from_utf8_lossy(&buf[..r as usize]).into_owned())
            }
            ["sum", name, off, len] => {
                let fd = slot(slots, name);
                let (off, len): (i64, usize) = (off.parse().unwrap(), len.parse().unwrap());
                let mut buf = Aligned::new(len);
                let mut done = 0;
                while done < len {
                    let r = libc::pread(fd, buf[done..].as_mut_ptr() as *mut _, len - done, off + done as i64);
                    if r < 0 {
                        return Err(errno());
                    }
                    let asked = len - done;
                    done += r as usize;
                    // A short read is the end of the file (and the next offset would not be
                    // aligned for O_DIRECT).
                    if (r as usize) < asked {
                        break;
                    }
                }
                Ok(format!("{done} {:016x}", rollfs_tests::digest(&buf[..done])))
            }
            ["blocks", name, off, len] => {
                // What each 4 KiB block of [OFF, +LEN) holds, run-length coded: `first-last:B`
                // for blocks all of byte B (decimal), `x` for mixed ones (for failure reports).
                let fd = slot(slots, name);
                let (off, len): (i64, usize) = (off.parse().unwrap(), len.parse().unwrap());
                let mut buf = Aligned::new(len);
                let r = libc::pread(fd, buf.as_mut_ptr() as *mut _, len, off);
                check(r as _).map(|_| rollfs_tests::block_runs(&buf[..r as usize]))
            }
            ["dontneed", name] => {
                let r = libc::posix_fadvise(slot(slots, name), 0, 0, libc::POSIX_FADV_DONTNEED);
                if r != 0 {
                    return Err(r);
                }
                Ok(String::new())
            }
            ["atomic-cycle", name, off, len, byte] => {
                let fd = slot(slots, name);
                check(libc::ioctl(fd, 0xf501 as _) as _)?;
                let buf = vec![byte.parse::<u8>().unwrap(); len.parse().unwrap()];
                let r = libc::pwrite(fd, buf.as_ptr() as *const _, buf.len(), off.parse().unwrap());
                check(r as _)?;
                check(libc::ioctl(fd, 0xf505 as _) as _)
            }
            ["rename", old, new] => check(libc::rename(cpath(old).as_ptr(), cpath(new).as_ptr()) as _),
            ["renames", dir, name, n] => {
                // Fresh names: a counter of this process, never reused.
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                let n: u64 = n.parse().unwrap();
                let fresh = || {
                    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    format!(
                        "{dir}/{}",
                        format!("{k:x}-{}", std::process::id())
                            .chars()
                            .chain(std::iter::repeat('r'))
                            .take(255)
                            .collect::<String>()
                    )
                };
                let mut cur = format!("{dir}/{name}");
                for _ in 0..n {
                    let next = fresh();
                    check(libc::rename(cpath(&cur).as_ptr(), cpath(&next).as_ptr()) as _)?;
                    cur = next;
                }
                check(libc::rename(cpath(&cur).as_ptr(), cpath(&format!("{dir}/{name}")).as_ptr()) as _)?;
                Ok(n.to_string())
            }
            ["chain", name, dir, n] => {
                let mut fd = libc::open(cpath(dir).as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(errno());
                }
                let down = |fd| libc::openat(fd, c"d".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
                for _ in 0..n.parse::<u64>().unwrap() {
                    let mut next = down(fd);
                    if next < 0 && errno() == libc::ENOENT && libc::mkdirat(fd, c"d".as_ptr(), 0o755) == 0 {
                        next = down(fd);
                    }
                    let e = errno();
                    libc::close(fd);
                    if next < 0 {
                        return Err(e);
                    }
                    fd = next;
                }
                let mut st: libc::stat = std::mem::zeroed();
                if libc::fstat(fd, &mut st) == 0 && st.st_uid == libc::geteuid() {
                    libc::fchmod(fd, 0o777);
                }
                slots.insert(name.to_string(), fd);
                Ok(String::new())
            }
            ["renameat", from, old, to, new] => {
                check(libc::renameat(slot(slots, from), cpath(old).as_ptr(), slot(slots, to), cpath(new).as_ptr()) as _)
            }
            ["unlink", path] => check(libc::unlink(cpath(path).as_ptr()) as _),
            ["rmdir", path] => check(libc::rmdir(cpath(path).as_ptr()) as _),
            ["readdir", path] => {
                let mut names: Vec<String> = std::fs::read_dir(path)
                    .map_err(|e| e.raw_os_error().unwrap_or(-1))?
                    .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.raw_os_error().unwrap_or(-1))?;
                names.sort();
                Ok(names.join(","))
            }
            ["read", path] => std::fs::read(path)
                .map(|v| String::from_utf8_lossy(&v).into_owned())
                .map_err(|e| e.raw_os_error().unwrap_or(-1)),
            ["write", path, text] => {
                std::fs::write(path, text).map(|_| String::new()).map_err(|e| e.raw_os_error().unwrap_or(-1))
            }
            ["create", path, mode] => {
                let fd = libc::open(cpath(path).as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY, octal(mode));
                if fd < 0 {
                    return Err(errno());
                }
                libc::close(fd);
                Ok(String::new())
            }
            ["mkdir", path, mode] => check(libc::mkdir(cpath(path).as_ptr(), octal(mode)) as _),
            ["chown", path, uid, gid] => {
                check(libc::chown(cpath(path).as_ptr(), uid.parse().unwrap(), gid.parse().unwrap()) as _)
            }
            ["mknod", path] => {
                check(libc::mknod(cpath(path).as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) as _)
            }
            ["chmod", path, mode] => check(libc::chmod(cpath(path).as_ptr(), octal(mode)) as _),
            ["getflags", path] | ["setflags", path, _] => {
                let fd = libc::open(cpath(path).as_ptr(), libc::O_RDONLY | libc::O_NONBLOCK);
                if fd < 0 {
                    return Err(errno());
                }
                let mut v: libc::c_int = match words {
                    ["setflags", _, hex] => i32::from_str_radix(hex, 16).expect("hex flags"),
                    _ => 0,
                };
                let cmd: u32 = if words[0] == "getflags" { 0x8008_6601 } else { 0x4008_6602 };
                let r = libc::ioctl(fd, cmd as _, &mut v as *mut libc::c_int);
                let e = errno();
                libc::close(fd);
                if r < 0 {
                    Err(e)
                } else if words[0] == "getflags" {
                    Ok(format!("{v:x}"))
                } else {
                    Ok(String::new())
                }
            }
            ["fitrim", path] => {
                let fd = libc::open(cpath(path).as_ptr(), libc::O_RDONLY);
                if fd < 0 {
                    return Err(errno());
                }
                let mut range: [u64; 3] = [0, u64::MAX, 0];
                let r = libc::ioctl(fd, 0xc018_5879u32 as _, range.as_mut_ptr());
                let e = errno();
                libc::close(fd);
                if r < 0 {
                    Err(e)
                } else {
                    Ok(range[1].to_string())
                }
            }
            ["truncate", path, len] => check(libc::truncate(cpath(path).as_ptr(), len.parse().unwrap()) as _),
            ["link", old, new] => check(libc::link(cpath(old).as_ptr(), cpath(new).as_ptr()) as _),
            ["symlink", target, new] => check(libc::symlink(cpath(target).as_ptr(), cpath(new).as_ptr()) as _),
            ["stat", path] => {
                let mut st: libc::stat = std::mem::zeroed();
                check(libc::stat(cpath(path).as_ptr(), &mut st) as _)
                    .map(|_| format!("{} {} {:o}", st.st_uid, st.st_gid, st.st_mode & 0o7777))
            }
            ["modeonly", path] => {
                // statx asking for the mode alone (as `stat -c %a` does): the kernel answers
                // from its attribute cache unless the mode itself was marked stale.
                let mut st: libc::statx = std::mem::zeroed();
                check(libc::statx(libc::AT_FDCWD, cpath(path).as_ptr(), 0, libc::STATX_MODE, &mut st) as _)
                    .map(|_| format!("{:o}", st.stx_mode & 0o7777))
            }
            ["getxattr", path, name] => {
                let mut buf = vec![0u8; 65536];
                let r =
                    libc::getxattr(cpath(path).as_ptr(), cpath(name).as_ptr(), buf.as_mut_ptr() as *mut _, buf.len());
                check(r as _).map(|_| String::from_utf8_lossy(&buf[..r as usize]).into_owned())
            }
            ["setxattr", path, name, text] => check(libc::setxattr(
                cpath(path).as_ptr(),
                cpath(name).as_ptr(),
                text.as_ptr() as *const _,
                text.len(),
                0,
            ) as _),
            ["removexattr", path, name] => check(libc::removexattr(cpath(path).as_ptr(), cpath(name).as_ptr()) as _),
            ["listxattr", path] => {
                let mut buf = vec![0u8; 65536];
                let r = libc::listxattr(cpath(path).as_ptr(), buf.as_mut_ptr() as *mut _, buf.len());
                check(r as _).map(|_| {
                    buf[..r as usize]
                        .split(|&b| b == 0)
                        .filter(|n| !n.is_empty())
                        .map(|n| String::from_utf8_lossy(n).into_owned())
                        .collect::<Vec<_>>()
                        .join(",")
                })
            }
            _ => panic!("rollfs-as: unknown command {words:?}"),
        }
    }
}

fn main() {
    let mut slots = HashMap::new();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.expect("read a command");
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let answer = match run(&mut slots, &words) {
            Ok(v) if v.is_empty() => "ok".to_string(),
            Ok(v) => format!("ok {v}"),
            Err(e) => format!("err {e}"),
        };
        writeln!(out, "{answer}").expect("answer");
        out.flush().expect("answer");
    }
}
