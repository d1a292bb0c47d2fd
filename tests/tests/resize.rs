//! `rollfs resize`: an image with room to grow (`mkfs --max-size`) grown in place through
//! the CLI, then mounted through FUSE, filled past its old size and checked; and what it
//! refuses (shrink, past the room, no room, a mounted image), changing nothing.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn resize(img: &Path, args: &[&str]) -> std::process::Output {
    let mut a: Vec<&OsStr> = vec![OsStr::new("resize")];
    a.extend(args.iter().map(OsStr::new));
    a.insert(1, img.as_os_str());
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

/// Total and free bytes of the mount (statvfs).
fn space(p: &Path) -> (u64, u64) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid path and a zeroed statvfs to fill.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    (st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize)
}

#[test]
fn a_grown_image_keeps_its_files_and_fills_past_its_old_size() {
    require_fuse();
    let img = Image::new("64M", &["--max-size", "256M"]);
    let m = img.mount();
    let small: Vec<(String, Vec<u8>)> =
        (0..20).map(|i| (format!("f{i}"), pattern(i, 1000 + 37_000 * i as usize))).collect();
    fs::create_dir(m.path("d")).unwrap();
    for (n, d) in &small {
        fs::write(m.path(&format!("d/{n}")), d).unwrap();
    }
    let (total_before, _) = space(&m.path(""));
    assert!(m.unmount().success());

    let o = resize(&img.path, &["--json", "256M"]);
    assert!(o.status.success(), "resize: {}{}", stdout(&o), stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("resize --json");
    assert_eq!(j["grown"], true, "{j}");
    assert_eq!(j["new_bytes"], 256u64 << 20, "{j}");
    assert!(j["new_main_segments"].as_u64().unwrap() > j["old_main_segments"].as_u64().unwrap() * 3, "{j}");
    let meta = fs::metadata(&img.path).unwrap();
    assert_eq!(meta.len(), 256 << 20, "the image file is extended to SIZE");
    // mkfs wrote the image out: the grow allocates what it adds too, so a host without room
    // refuses the grow rather than a later write of the filesystem.
    assert!(meta.blocks() * 512 >= 256 << 20, "extended allocated: {} bytes allocated", meta.blocks() * 512);
    img.assert_fsck_clean();

    // Mounted at the new size: the old files intact, then filled well past the old size.
    let m = img.mount();
    for (n, d) in &small {
        assert_eq!(&fs::read(m.path(&format!("d/{n}"))).unwrap(), d, "{n} after the grow");
    }
    let (total_after, _) = space(&m.path(""));
    assert!(total_after > 3 * total_before, "statfs size {total_before} -> {total_after}");
    let big: Vec<(String, Vec<u8>)> = (0..14).map(|i| (format!("big{i}"), pattern(100 + i, 10 << 20))).collect();
    for (n, d) in &big {
        fs::write(m.path(n), d).unwrap();
    }
    let written: u64 = big.iter().map(|(_, d)| d.len() as u64).sum();
    assert!(written > 2 * (64 << 20), "{written} bytes written, more than twice the old size");
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let m = img.mount();
    for (n, d) in &big {
        assert!(fs::read(m.path(n)).unwrap() == *d, "{n} after a remount");
    }
    for (n, d) in &small {
        assert!(fs::read(m.path(&format!("d/{n}"))).unwrap() == *d, "d/{n} after a remount");
    }
    assert!(m.unmount().success());

    // Again at the same size: nothing to do, nothing written.
    let before = fs::read(&img.path).unwrap();
    let o = resize(&img.path, &["256M"]);
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}{}", stdout(&o), stderr(&o));
    assert!(fs::read(&img.path).unwrap() == before, "a resize with nothing to do changed the image");
}

/// An image made `--sparse` stays sparse when it grows (offline); one written out is
/// extended allocated (above).
#[test]
fn a_sparse_image_grows_sparse() {
    let img = Image::new("64M", &["--max-size", "256M", "--sparse"]);
    let allocated_before = fs::metadata(&img.path).unwrap().blocks() * 512;
    assert!(allocated_before < 32 << 20, "mkfs --sparse allocated {allocated_before} bytes");
    let o = resize(&img.path, &["256M"]);
    assert!(o.status.success(), "resize: {}{}", stdout(&o), stderr(&o));
    let meta = fs::metadata(&img.path).unwrap();
    assert_eq!(meta.len(), 256 << 20);
    assert!(meta.blocks() * 512 < 64 << 20, "a sparse image grew allocated: {} bytes", meta.blocks() * 512);
    img.assert_fsck_clean();
}

#[test]
fn resize_refuses_what_it_cannot_do_and_changes_nothing() {
    let img = Image::new("64M", &["--max-size", "128M"]);
    let before = fs::read(&img.path).unwrap();
    assert_fails(&resize(&img.path, &["32M"]), 2, "smaller than the filesystem (64.0 MiB); rollfs cannot shrink");
    assert_fails(&resize(&img.path, &["1G"]), 2, "it can grow to at most 128.0 MiB (mkfs --max-size)");
    assert_fails(&resize(&img.path, &[]), 2, "SIZE is required for an image file");
    assert_fails(&resize(&img.path, &["12Q"]), 2, "unknown suffix");
    assert!(fs::read(&img.path).unwrap() == before, "a refused resize changed the image");

    // A grow that fails after the file was extended (here the mount before it: a NAT block
    // destroyed) cuts the file back: the image is as it was.
    let o = rollfs([OsStr::new("inspect"), OsStr::new("--json"), img.path.as_os_str()]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("inspect --json");
    let nat = v["areas"].as_array().unwrap().iter().find(|a| a["name"] == "NAT").expect("NAT area").clone();
    let nat_start = nat["start_block"].as_u64().unwrap();
    let f = fs::OpenOptions::new().write(true).open(&img.path).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[0xA5u8; 4096], nat_start * 4096).unwrap();
    drop(f);
    let before = fs::read(&img.path).unwrap();
    assert_fails(&resize(&img.path, &["128M"]), 1, "cannot resize");
    assert_eq!(fs::metadata(&img.path).unwrap().len(), 64 << 20, "a failed grow left the image extended");
    assert!(fs::read(&img.path).unwrap() == before, "a failed grow changed the image");

    let plain = Image::new("64M", &[]);
    let before = fs::read(&plain.path).unwrap();
    assert_fails(&resize(&plain.path, &["128M"]), 1, "made without room to grow");
    assert!(fs::read(&plain.path).unwrap() == before, "a refused resize changed the image");
    let target = plain.dir.path().join("new.img");
    let o = rollfs([
        OsStr::new("mkfs"),
        "--size".as_ref(),
        "64M".as_ref(),
        "--max-size".as_ref(),
        "32M".as_ref(),
        target.as_os_str(),
    ]);
    assert_fails(&o, 2, "--max-size 32.0 MiB: not above --size");
    assert!(!target.exists(), "a refused mkfs left an image");
}

#[test]
fn a_mounted_image_is_refused() {
    require_fuse();
    let img = Image::new("64M", &["--max-size", "128M"]);
    let m = img.mount();
    assert_fails(&resize(&img.path, &["128M"]), 1, "busy");
    assert!(m.unmount().success());
    assert_eq!(fs::metadata(&img.path).unwrap().len(), 64 << 20, "a refused resize extended the image");
    let o = resize(&img.path, &["128M"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    img.assert_fsck_clean();
}

/// A host file system without room for what a grow adds: the grow of a written-out image
/// is refused at once with the host's reason (its extension is allocated), offline and
/// online, and nothing changes — not the filesystem's size, not its files. (Extended
/// sparse, the grow succeeded and a later write failed inside the filesystem, which then
/// shut down read-only.) Needs root, for a small tmpfs to be the host.
#[test]
fn a_grow_the_host_has_no_room_for_is_refused_and_changes_nothing() {
    require_fuse();
    if !is_root() {
        eprintln!("skipped: needs root to mount a small tmpfs as the host");
        return;
    }
    let host = tempfile::Builder::new().prefix("rollfs-host-").tempdir().unwrap();
    let mount = |args: &[&str]| std::process::Command::new("mount").args(args).status().unwrap();
    assert!(mount(&["-t", "tmpfs", "-o", "size=100M", "tmpfs", host.path().to_str().unwrap()]).success());
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(host.path());
    let img = host.path().join("fs.img");
    let o = rollfs([
        OsStr::new("mkfs"),
        OsStr::new("-q"),
        OsStr::new("--size"),
        OsStr::new("64M"),
        OsStr::new("--max-size"),
        OsStr::new("256M"),
        img.as_os_str(),
    ]);
    assert!(o.status.success(), "mkfs: {}", stderr(&o));
    // Offline.
    let o = resize(&img, &["256M"]);
    assert_fails(&o, 1, "No space left on device");
    assert_eq!(fs::metadata(&img).unwrap().len(), 64 << 20, "a refused grow left the image extended");
    // Online, with a file on the mount.
    let m = Mount::new(&img, &[]);
    fs::write(m.path("kept"), pattern(5, 100_000)).unwrap();
    let (total_before, _) = space(&m.path(""));
    let o = rollfs([OsStr::new("resize"), m.mnt.as_os_str(), OsStr::new("256M")]);
    assert_fails(&o, 1, "no room");
    assert_eq!(space(&m.path("")).0, total_before, "a refused grow changed the size");
    fs::write(m.path("after"), pattern(6, 100_000)).expect("the mount still takes writes");
    assert_eq!(fs::read(m.path("kept")).unwrap(), pattern(5, 100_000));
    assert!(m.unmount().success());
    let o = rollfs([OsStr::new("fsck"), img.as_os_str()]);
    assert!(o.status.success(), "fsck: {}{}", stdout(&o), stderr(&o));
}
