//! rollfs on a real block device (a loop device over a file): size detection, exclusive
//! open, refusing to overwrite without --force, O_DIRECT, flush and BLKDISCARD paths.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over a file, detached on drop.
struct Loop {
    dev: PathBuf,
}

impl Loop {
    /// `None` only when this kernel has no loop driver at all (then there is no block
    /// device to test on); any other failure fails the test.
    fn attach(file: &Path) -> Option<Loop> {
        if !Path::new("/dev/loop-control").exists() {
            eprintln!("NOT RUN: no /dev/loop-control (no loop driver): block-device paths untested here");
            return None;
        }
        assert!(is_root(), "attaching a loop device needs root");
        let o = Command::new("losetup").args(["--find", "--show"]).arg(file).output().expect("run losetup");
        assert!(o.status.success(), "losetup: {}", String::from_utf8_lossy(&o.stderr));
        let dev = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        assert!(dev.to_string_lossy().starts_with("/dev/loop"), "losetup printed {dev:?}");
        Some(Loop { dev })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

fn core_stat(stats: &str, key: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(stats).expect("stats JSON");
    v["core"][key].as_u64().unwrap_or_else(|| panic!("{key} in {stats}"))
}

#[test]
fn mkfs_mount_fsck_on_a_loop_device() {
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing");
    // Written out, not sparse-extended: a loop device over it behaves like a disk.
    fs::File::create(&backing).unwrap().write_all(&vec![0u8; 128 << 20]).unwrap();
    let Some(lo) = Loop::attach(&backing) else { return };
    let dev = lo.dev.as_os_str();

    // mkfs takes the size from the device (no --size), and refuses a second time.
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("-q"), dev]);
    assert!(o.status.success(), "mkfs: {}", stderr(&o));
    assert_fails(&rollfs([OsStr::new("mkfs"), OsStr::new("-q"), dev]), 1, "--force");
    let o = rollfs([OsStr::new("inspect"), OsStr::new("--json"), dev]);
    assert!(o.status.success(), "inspect: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("inspect --json");
    assert_eq!(v["device_kind"], "BlockDevice", "{v}");
    assert_eq!(v["device_bytes"], 128u64 << 20, "size detected from the device: {v}");

    // Mount; a second mount and fsck are refused while it is open (O_EXCL).
    let m = Mount::new(&lo.dev, &[]);
    let other = dir.path().join("other");
    fs::create_dir(&other).unwrap();
    assert_fails(&rollfs([OsStr::new("mount"), OsStr::new("-f"), dev, other.as_os_str()]), 1, "busy");
    assert_fails(&rollfs([OsStr::new("fsck"), dev]), 8, "busy");
    let data: Vec<u8> = (0..3 << 20).map(|i| (i % 251) as u8).collect();
    for i in 0..8 {
        let mut f = fs::File::create(m.path(&format!("f{i}"))).unwrap();
        f.write_all(&data).unwrap();
        f.sync_all().unwrap();
    }
    // Freed segments are discarded (BLKDISCARD) after the checkpoint that frees them.
    for i in 0..6 {
        fs::remove_file(m.path(&format!("f{i}"))).unwrap();
    }
    fs::create_dir(m.path("d")).unwrap();
    // A directory fsync after the directory's own attributes changed checkpoints (namespace
    // records carry names, not a directory's mode).
    fs::set_permissions(m.path("d"), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    fs::File::open(m.path("d")).unwrap().sync_all().unwrap();
    let stats = mount_stats(&m.path("f7"));
    assert!(core_stat(&stats, "discards") > 0, "no discard issued: {stats}");
    assert_eq!(core_stat(&stats, "discard_errors"), 0, "{stats}");
    assert!(m.unmount().success());
    let o = rollfs([OsStr::new("fsck"), dev]);
    assert_eq!(o.status.code(), Some(0), "fsck: {}{}", stdout(&o), stderr(&o));

    // Again with O_DIRECT: the data reads back and more can be written.
    let m = Mount::new(&lo.dev, &[OsStr::new("-o"), OsStr::new("direct")]);
    assert_eq!(fs::read(m.path("f7")).unwrap(), data);
    fs::write(m.path("g"), b"direct").unwrap();
    fs::File::open(m.path("g")).unwrap().sync_all().unwrap();
    assert!(m.unmount().success());
    let m = Mount::new(&lo.dev, &[]);
    assert_eq!(fs::read(m.path("g")).unwrap(), b"direct");
    assert_eq!(fs::read(m.path("f6")).unwrap(), data);
    assert!(m.unmount().success());
    let o = rollfs([OsStr::new("fsck"), dev]);
    assert_eq!(o.status.code(), Some(0), "fsck: {}{}", stdout(&o), stderr(&o));
}

/// `rollfs resize` of a block device without SIZE grows the filesystem to the device
/// (after the device grew: a partition enlarged, here the loop device's file), capped at
/// the room `mkfs --max-size` gave it; fsck clean, and a mount fills past the old size.
#[test]
fn resize_grows_a_block_device_to_its_size_within_the_room() {
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing");
    fs::File::create(&backing).unwrap().write_all(&vec![0u8; 64 << 20]).unwrap();
    let Some(lo) = Loop::attach(&backing) else { return };
    let dev = lo.dev.as_os_str();
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("-q"), OsStr::new("--max-size"), OsStr::new("192M"), dev]);
    assert!(o.status.success(), "mkfs: {}", stderr(&o));
    // Nothing to grow into yet.
    let o = rollfs([OsStr::new("resize"), dev]);
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}{}", stdout(&o), stderr(&o));
    // The device grows past the room (256 MiB > 192 MiB): the filesystem takes the room.
    fs::OpenOptions::new().write(true).open(&backing).unwrap().set_len(256 << 20).unwrap();
    let st = Command::new("losetup").arg("-c").arg(&lo.dev).status().expect("run losetup -c");
    assert!(st.success(), "losetup -c");
    let o = rollfs([OsStr::new("resize"), OsStr::new("--json"), dev]);
    assert!(o.status.success(), "resize: {}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("resize --json");
    assert_eq!(v["grown"], true, "{v}");
    assert_eq!(v["new_bytes"], 192u64 << 20, "grown to the room, not the device: {v}");
    assert_eq!(v["max_bytes"], 192u64 << 20, "{v}");
    // A SIZE past the device is refused.
    assert_fails(&rollfs([OsStr::new("resize"), dev, OsStr::new("1G")]), 2, "larger than the device");
    let o = rollfs([OsStr::new("fsck"), dev]);
    assert!(o.status.success(), "fsck: {}{}", stdout(&o), stderr(&o));
    require_fuse();
    let m = Mount::new(&lo.dev, &[]);
    let data: Vec<u8> = (0..80u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    fs::write(m.path("big"), &data).unwrap();
    assert!(m.unmount().success());
    let m = Mount::new(&lo.dev, &[]);
    assert!(fs::read(m.path("big")).unwrap() == data, "80 MiB written past the old 64 MiB read back");
    assert!(m.unmount().success());
    let o = rollfs([OsStr::new("fsck"), dev]);
    assert!(o.status.success(), "fsck: {}{}", stdout(&o), stderr(&o));
}

/// `rollfs resize MOUNTPOINT` of a mounted block device: the daemon reads the device's
/// size again (a partition enlarged under the mount, here the loop device's file): a SIZE
/// past the device is refused until it grows, then no SIZE grows the live filesystem to
/// the device capped at the room; df shows it, a file written past the old size reads back
/// after a remount, fsck clean.
#[test]
fn a_mounted_block_device_grows_online_to_its_new_size_within_the_room() {
    let dir = tempfile::tempdir().unwrap();
    let backing = dir.path().join("backing");
    fs::File::create(&backing).unwrap().write_all(&vec![0u8; 64 << 20]).unwrap();
    let Some(lo) = Loop::attach(&backing) else { return };
    let dev = lo.dev.as_os_str();
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("-q"), OsStr::new("--max-size"), OsStr::new("192M"), dev]);
    assert!(o.status.success(), "mkfs: {}", stderr(&o));
    require_fuse();
    let m = Mount::new(&lo.dev, &[]);
    let mnt = m.mnt.as_os_str();
    let df = |p: &Path| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a valid path and a zeroed statvfs to fill.
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        st.f_blocks * st.f_frsize
    };
    let before = df(&m.mnt);
    let o = rollfs([OsStr::new("resize"), mnt]);
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}{}", stdout(&o), stderr(&o));
    assert_fails(&rollfs([OsStr::new("resize"), mnt, OsStr::new("128M")]), 2, "larger than the device");
    assert_eq!(df(&m.mnt), before);
    // The device grows past the room under the mount: the filesystem takes the room.
    fs::OpenOptions::new().write(true).open(&backing).unwrap().set_len(256 << 20).unwrap();
    let st = Command::new("losetup").arg("-c").arg(&lo.dev).status().expect("run losetup -c");
    assert!(st.success(), "losetup -c");
    let o = rollfs([OsStr::new("resize"), OsStr::new("--json"), mnt]);
    assert!(o.status.success(), "resize: {}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("resize --json");
    assert_eq!((v["grown"].as_bool(), v["online"].as_bool()), (Some(true), Some(true)), "{v}");
    assert_eq!(v["new_bytes"], 192u64 << 20, "grown to the room, not the device: {v}");
    let after = df(&m.mnt);
    assert!(after > before * 2, "df: {before} -> {after}");
    let data: Vec<u8> = (0..80u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    fs::write(m.path("big"), &data).unwrap();
    assert!(m.unmount().success());
    let o = rollfs([OsStr::new("fsck"), dev]);
    assert!(o.status.success(), "fsck: {}{}", stdout(&o), stderr(&o));
    let m = Mount::new(&lo.dev, &[]);
    assert_eq!(df(&m.mnt), after);
    assert!(fs::read(m.path("big")).unwrap() == data, "80 MiB written past the old 64 MiB read back");
    assert!(m.unmount().success());
}
