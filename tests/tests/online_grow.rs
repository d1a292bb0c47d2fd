//! `rollfs resize MOUNTPOINT [SIZE]` through a real mount (issue 39, online grow): a
//! mounted image with room to grow (`mkfs --max-size`) grows while a file is being
//! written, keeps every byte, df shows the new size at once, the image is filled past its
//! old size and checks clean after unmount; refused to other users (the daemon's ioctl:
//! the mounter or CAP_SYS_ADMIN), without room, and for a bad SIZE, changing nothing.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::Path;

const MIB: u64 = 1 << 20;

fn resize(target: &Path, args: &[&str]) -> std::process::Output {
    let mut a: Vec<&OsStr> = vec![OsStr::new("resize"), target.as_os_str()];
    a.extend(args.iter().map(OsStr::new));
    rollfs(&a)
}

fn pattern(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Total bytes of the mount (statvfs: what df shows).
fn total(p: &Path) -> u64 {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid path and a zeroed statvfs to fill.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_blocks * st.f_frsize
}

fn json(o: &std::process::Output) -> serde_json::Value {
    assert!(o.status.success(), "resize: {}{}", stdout(o), stderr(o));
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("resize --json: {e}: {}", stdout(o)))
}

#[test]
fn a_mount_grows_while_a_file_is_written_and_df_shows_it() {
    require_fuse();
    let img = Image::new("64M", &["--max-size", "256M"]);
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("allow_other")]);
    fs::write(m.path("before"), pattern(1, 3 * MIB as usize + 17)).unwrap();
    let before = total(&m.path(""));
    if is_root() {
        // Another user may not grow it: the image would grow into the host's space.
        let o = command_as_nobody(&rollfs_bin()).args([OsStr::new("resize"), m.mnt.as_os_str()]).output().unwrap();
        assert_fails(&o, 1, "only the user who mounted it, or root");
        assert_eq!(total(&m.path("")), before, "a refused grow changed the size");
        assert_eq!(fs::metadata(&img.path).unwrap().len(), 64 * MIB);
    }
    // A writer appends 32 MiB in 256 KiB writes while the grow runs.
    let growing = m.path("growing");
    let writer = std::thread::spawn(move || {
        let mut f = fs::File::create(&growing).unwrap();
        for i in 0..128u64 {
            f.write_all(&pattern(100 + i, 256 * 1024)).unwrap();
        }
        f.sync_all().unwrap();
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    let j = json(&resize(&m.mnt, &["--json", "128M"]));
    assert_eq!((j["grown"].as_bool(), j["online"].as_bool()), (Some(true), Some(true)), "{j}");
    assert_eq!(j["new_bytes"], 128 * MIB, "{j}");
    writer.join().unwrap();
    let mid = total(&m.path(""));
    assert!(mid > before * 3 / 2, "df: {before} -> {mid} bytes");
    let meta = fs::metadata(&img.path).unwrap();
    assert_eq!(meta.len(), 128 * MIB, "the image file is extended to SIZE");
    // Written out by mkfs, so extended allocated (`extend_image_file`): a host without room
    // refuses the grow instead of failing a later write.
    use std::os::unix::fs::MetadataExt;
    assert!(meta.blocks() * 512 >= 128 * MIB, "extended sparse: {} bytes allocated", meta.blocks() * 512);
    // No SIZE on an image file: to its room.
    let j = json(&resize(&m.mnt, &["--json"]));
    assert_eq!(j["new_bytes"], 256 * MIB, "{j}");
    let after = total(&m.path(""));
    assert!(after > before * 3, "df: {before} -> {after} bytes");
    // Nothing more to do.
    let o = resize(&m.mnt, &["256M"]);
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}{}", stdout(&o), stderr(&o));
    // More than the old size held: 100 MiB into the new room.
    let big: Vec<u8> = pattern(7, 100 * MIB as usize);
    fs::write(m.path("big"), &big).unwrap();
    let check = |m: &Mount| {
        assert_eq!(fs::read(m.path("before")).unwrap(), pattern(1, 3 * MIB as usize + 17));
        let g = fs::read(m.path("growing")).unwrap();
        assert_eq!(g.len(), 128 * 256 * 1024);
        for (i, c) in g.chunks(256 * 1024).enumerate() {
            assert!(c == pattern(100 + i as u64, 256 * 1024), "growing: chunk {i} differs");
        }
        assert!(fs::read(m.path("big")).unwrap() == big, "big differs");
    };
    check(&m);
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let m = img.mount();
    assert_eq!(total(&m.path("")), after, "the remount has the grown size");
    check(&m);
    assert!(m.unmount().success());
}

#[test]
fn online_grow_is_refused_without_room_and_for_a_bad_size() {
    require_fuse();
    let plain = Image::new("64M", &[]);
    let m = plain.mount();
    fs::write(m.path("f"), b"x").unwrap();
    let before = total(&m.path(""));
    let o = resize(&m.mnt, &["128M"]);
    assert_fails(&o, 1, "no room to grow");
    assert_fails(&o, 1, "--max-size");
    assert_eq!(total(&m.path("")), before);
    assert_eq!(fs::metadata(&plain.path).unwrap().len(), 64 * MIB, "a refused grow extended the image");
    assert!(m.unmount().success());
    plain.assert_fsck_clean();

    let img = Image::new("64M", &["--max-size", "256M"]);
    let m = img.mount();
    let before = total(&m.path(""));
    assert_fails(&resize(&m.mnt, &["32M"]), 2, "shrink");
    assert_fails(&resize(&m.mnt, &["512M"]), 2, "room");
    assert_eq!(total(&m.path("")), before);
    assert_eq!(fs::metadata(&img.path).unwrap().len(), 64 * MIB, "a refused grow extended the image");
    // Not a rollfs mount.
    let dir = tempfile::tempdir().unwrap();
    assert_fails(&resize(dir.path(), &["128M"]), 1, "not a rollfs mount");
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    // A recording mount: its log keeps the size it was mounted with, and crashtest rebuilds
    // every state at that size (review of issue 39, F2: a grown recording's states were
    // reported as violations, "larger than the device").
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(&img.path, &[OsStr::new("--record-writes"), log.as_os_str()]);
    let before = total(&m.path(""));
    assert_fails(&resize(&m.mnt, &["128M"]), 1, "a recording mount");
    assert_eq!(total(&m.path("")), before);
    assert_eq!(fs::metadata(&img.path).unwrap().len(), 64 * MIB, "a refused grow extended the image");
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}
