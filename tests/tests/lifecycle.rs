//! Mount lifecycle: clean unmount on signals, exclusive open, background mode, the
//! `mount.rollfs` helper.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// After a background daemon's unmount, wait until it has released the image (its final
/// checkpoint is then on disk).
fn wait_released(img: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let o = rollfs([OsStr::new("fsck"), img.as_os_str()]);
        if !stderr(&o).contains("busy") {
            return;
        }
        assert!(Instant::now() < deadline, "image still busy 30 s after unmount");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_and_sigint_unmount_with_a_clean_checkpoint() {
    let img = Image::new("128M", &[]);
    for (sig, name) in [(libc::SIGTERM, "term"), (libc::SIGINT, "int")] {
        let m = img.mount();
        fs::write(m.path(name), name.as_bytes()).unwrap();
        let pid = m.pid().unwrap() as i32;
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        let st = m.wait();
        assert!(st.success(), "exit after signal {sig}: {st}");
        img.assert_fsck_clean();
    }
    let m = img.mount();
    assert_eq!(fs::read(m.path("term")).unwrap(), b"term");
    assert_eq!(fs::read(m.path("int")).unwrap(), b"int");
    assert!(m.unmount().success());
}

#[test]
fn a_mounted_image_is_refused_by_mount_and_fsck() {
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let other = img.dir.path().join("other");
    fs::create_dir(&other).unwrap();
    let o = rollfs([OsStr::new("mount"), OsStr::new("-f"), img.path.as_os_str(), other.as_os_str()]);
    assert_fails(&o, 1, "fs.img: device or image is busy: it is already mounted or open in another rollfs process");
    assert_fails(&rollfs([OsStr::new("fsck"), img.path.as_os_str()]), 8, "busy");
    assert_fails(&rollfs([OsStr::new("mkfs"), OsStr::new("--force"), img.path.as_os_str()]), 1, "busy");
    assert!(m.unmount().success());
}

#[test]
fn background_mount_then_umount() {
    require_fuse();
    let img = Image::new("128M", &[]);
    let mnt = img.dir.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let o = rollfs([OsStr::new("mount"), img.path.as_os_str(), mnt.as_os_str()]);
    assert!(o.status.success(), "background mount: {}", stderr(&o));
    let guard = scopeguard(mnt.clone());
    fs::write(mnt.join("bg"), b"background").unwrap();
    assert_eq!(fs::read(mnt.join("bg")).unwrap(), b"background");
    // The kernel sends the last RELEASE asynchronously: umount may see the mount busy for
    // a moment after the file was closed (seen under load), so retry as umount(8) users do.
    let unmounted = (0..50).any(|_| {
        let ok = Command::new("umount").arg(&mnt).status().unwrap().success();
        if !ok {
            std::thread::sleep(Duration::from_millis(100));
        }
        ok
    });
    assert!(unmounted, "umount of the background mount kept failing");
    drop(guard);
    wait_released(&img.path);
    img.assert_fsck_clean();
    let m = img.mount();
    assert_eq!(fs::read(m.path("bg")).unwrap(), b"background");
    assert!(m.unmount().success());
}

#[test]
fn mount_rollfs_helper_as_mount8_calls_it() {
    require_fuse();
    let img = Image::new("128M", &[]);
    let helper = img.dir.path().join("mount.rollfs");
    std::os::unix::fs::symlink(rollfs_bin(), &helper).unwrap();
    let mnt = img.dir.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let o = Command::new(&helper).arg(&img.path).arg(&mnt).args(["-o", "rw,noatime,defaults"]).output().unwrap();
    assert!(o.status.success(), "mount.rollfs: {}", stderr(&o));
    let guard = scopeguard(mnt.clone());
    fs::write(mnt.join("x"), b"via helper").unwrap();
    drop(guard);
    wait_released(&img.path);
    img.assert_fsck_clean();
    let o = Command::new(&helper).arg(&img.path).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "usage error");
    let o = Command::new(&helper).arg(&img.path).arg(&mnt).args(["-o", "bogus"]).output().unwrap();
    assert_fails(&o, 2, "unknown mount option");
}

/// Unmounts `mnt` when dropped (for background mounts, which have no `Mount` guard).
struct Unmount(std::path::PathBuf);
impl Drop for Unmount {
    fn drop(&mut self) {
        for bin in ["umount", "fusermount3"] {
            let args: &[&str] = if bin == "umount" { &[] } else { &["-u"] };
            if Command::new(bin).args(args).arg(&self.0).status().is_ok_and(|s| s.success()) {
                return;
            }
        }
    }
}
fn scopeguard(p: std::path::PathBuf) -> Unmount {
    Unmount(p)
}

/// SIGKILL of the daemon while four threads write and fsync: every fsync that returned
/// is in the image itself — its writes and flush were done before the acknowledgement (the
/// device's queued writes drain in the group-commit flusher, outside the filesystem lock,
/// before its fdatasync). The image then mounts (recovery), fsck is clean, and each file
/// holds its last acknowledged record or a later one.
#[test]
fn sigkill_keeps_every_acknowledged_fsync_in_the_image() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let img = Image::new("128M", &[]);
    let m = img.mount();
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..4).map(|_| AtomicU64::new(0)).collect());
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let (stop, acked, dir) = (stop.clone(), acked.clone(), m.mnt.clone());
            std::thread::spawn(move || {
                let p = dir.join(format!("seq{t}"));
                for seq in 1u64.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // A growing file: record `seq` is its last 8 bytes.
                    let r = fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&p)
                        .and_then(|mut f| f.write_all(&seq.to_le_bytes()).and_then(|_| f.sync_all()));
                    if r.is_err() {
                        break; // the daemon is gone
                    }
                    acked[t].store(seq, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = m.pid().unwrap() as i32;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    stop.store(true, Ordering::Relaxed);
    let _ = m.wait();
    for w in workers {
        w.join().unwrap();
    }
    let o = rollfs([OsStr::new("fsck"), img.path.as_os_str()]);
    // Before the mount rolls the chain forward fsck may report it pending; both are fine.
    assert!(o.status.code().is_some_and(|c| c == 0), "fsck of the killed image: {}", stdout(&o));
    let m = img.mount();
    for t in 0..4 {
        let want = acked[t].load(Ordering::Relaxed);
        let data = fs::read(m.path(&format!("seq{t}"))).unwrap_or_default();
        let got = data.len() as u64 / 8;
        assert!(want > 0, "thread {t} never got an fsync acknowledged");
        assert!(got >= want, "thread {t}: fsync of record {want} was acknowledged, the image has {got}");
        for (i, rec) in data.chunks_exact(8).enumerate().take(want as usize) {
            assert_eq!(u64::from_le_bytes(rec.try_into().unwrap()), i as u64 + 1, "thread {t} record {i}");
        }
    }
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}
