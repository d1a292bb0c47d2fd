//! The FUSE transports: /dev/fuse (the default) and io_uring (`-o uring`, Linux 6.14+ with
//! the fuse module's `enable_uring` on). test.sh runs every FUSE test a second time over
//! io_uring (`ROLLFS_TEST_MOUNT_OPTIONS=uring`); these tests check that a `-o uring` mount
//! really serves over the ring — or, where the kernel does not offer it, that the mount
//! refuses with the reason rather than quietly using /dev/fuse.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

const ENABLE_URING: &str = "/sys/module/fuse/parameters/enable_uring";
const START: u32 = 0xf501;
const COMMIT: u32 = 0xf502;
const ABORT: u32 = 0xf505;

fn uring_offered() -> bool {
    fs::read_to_string(ENABLE_URING).map(|v| matches!(v.trim(), "Y" | "1")).unwrap_or(false)
}

fn ioctl(f: &File, cmd: u32) -> i32 {
    // SAFETY: the f2fs atomic-write ioctls take no argument.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), cmd as _) };
    if r < 0 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(-1)
    } else {
        0
    }
}

/// The kernel's io_uring queue count: one per possible CPU.
fn possible_cpus() -> u64 {
    let s = fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
    s.trim().split(',').map(|p| p.rsplit('-').next().unwrap().parse::<u64>().unwrap()).max().unwrap() + 1
}

fn counter(stats: &str, key: &str) -> u64 {
    stat_counter(stats, "driver", key)
}

/// `-o uring` where the kernel offers it: requests arrive over the ring (all but those sent
/// before the rings were registered), replies another thread sends late (an atomic abort
/// answers from the notify thread once its pages are dropped) reach the kernel and the
/// entry goes on serving, and the unmount is clean. Where it is not offered, the mount
/// fails and says how to turn it on.
#[test]
fn a_uring_mount_serves_over_the_ring_or_refuses_with_the_reason() {
    let img = Image::new("128M", &[]);
    if !uring_offered() {
        let dir = tempfile::tempdir().unwrap();
        let o = rollfs([
            OsStr::new("mount"),
            OsStr::new("-f"),
            OsStr::new("-o"),
            OsStr::new("uring"),
            img.path.as_os_str(),
            dir.path().as_os_str(),
        ]);
        assert_fails(&o, 1, "io_uring");
        assert!(!rollfs::crashtest::is_mounted(dir.path()), "a refused -o uring mount left a mount behind");
        eprintln!("this kernel does not offer FUSE over io_uring: checked the refusal only");
        return;
    }
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("uring")]);
    let p = m.path("db");
    fs::write(&p, vec![b'A'; 64 << 10]).unwrap();
    File::open(&p).unwrap().sync_all().unwrap();
    let f = OpenOptions::new().read(true).write(true).open(&p).unwrap();
    // Abort with the staged pages cached: the reply is sent by the notify thread after the
    // invalidation. A reader dropping and reading the file's pages meanwhile holds page
    // locks the invalidation waits for, so that replies come after the request's dispatch
    // returned (deferred) — the path under test; aborts go on until some were (bounded).
    let stop = AtomicBool::new(false);
    let aborts = std::thread::scope(|s| {
        s.spawn(|| {
            let r = File::open(&p).unwrap();
            let mut buf = vec![0u8; 64 << 10];
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: advice on our own open file.
                unsafe { libc::posix_fadvise(r.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
                let _ = r.read_at(&mut buf, 0);
            }
        });
        let mut n = 0u64;
        while n < 2000 {
            assert_eq!(ioctl(&f, START), 0);
            f.write_all_at(&[b'C'; 8192], (n % 8) * 8192).unwrap();
            assert_eq!(ioctl(&f, ABORT), 0);
            assert_eq!(fs::read(&p).unwrap(), vec![b'A'; 64 << 10], "abort {n} restores the committed data");
            n += 1;
            if n >= 50 && n.is_multiple_of(50) && counter(&mount_stats(&m.mnt), "fuse_uring_replies_deferred") > 0 {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        n
    });
    eprintln!("{aborts} aborts");
    assert_eq!(ioctl(&f, START), 0);
    f.write_all_at(&[b'B'; 4096], 0).unwrap();
    assert_eq!(ioctl(&f, COMMIT), 0);
    f.sync_all().unwrap();
    drop(f);
    let mut want = vec![b'A'; 64 << 10];
    want[..4096].fill(b'B');
    assert_eq!(fs::read(&p).unwrap(), want);
    for i in 0..200 {
        fs::write(m.path(&format!("f{i}")), format!("{i}")).unwrap();
    }
    for i in 0..200 {
        assert_eq!(fs::read_to_string(m.path(&format!("f{i}"))).unwrap(), format!("{i}"));
    }
    let stats = mount_stats(&m.mnt);
    let (all, ring, deferred) = (
        counter(&stats, "fuse_requests"),
        counter(&stats, "fuse_uring_requests"),
        counter(&stats, "fuse_uring_replies_deferred"),
    );
    eprintln!("{all} requests, {ring} over io_uring, {deferred} replies deferred");
    assert!(ring * 10 >= all * 9, "only {ring} of {all} requests came over io_uring");
    assert!(deferred > 0, "no abort reply was deferred: the hand-back path was not reached");
    // One entry per ring thread, also after deferrals (a second entry in a thread makes a
    // request wait behind that thread's current one). Spares: as many per queue as replies
    // were deferred at once, here one at a time (each ABORT waits for its reply).
    let (threads, entries) = (counter(&stats, "fuse_uring_threads"), counter(&stats, "fuse_uring_entries"));
    let queues = possible_cpus();
    let initial = queues * 2u64.max(8u64.div_ceil(queues));
    eprintln!("{threads} ring threads ({initial} at the start), {entries} entries");
    assert_eq!(threads, entries, "a ring thread holds more than one entry");
    assert!(
        threads <= initial + queues,
        "{threads} ring threads after one-at-a-time deferrals: spares beyond the need"
    );
    assert_eq!(m.unmount().code(), Some(0), "unclean unmount");
    img.assert_fsck_clean();
    let m = img.mount();
    assert_eq!(fs::read(m.path("db")).unwrap(), want, "the committed contents after a remount");
    assert_eq!(m.unmount().code(), Some(0));
}
