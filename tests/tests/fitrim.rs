//! FITRIM through a real mount: `fstrim -v MOUNTPOINT` (util-linux) reports the bytes the
//! daemon discarded (free segments only: core/src/trim.rs), the device got them (the
//! core's counters in the stats ioctl, and the punched holes in the image file), a second
//! trim finds nothing new, the range and `--minimum` are kept, and the files are intact
//! after the trim and a remount, fsck clean. Root only (EPERM for users: flags.rs); EROFS
//! on a read-only mount.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

const FITRIM: u32 = 0xc018_5879;

fn core_stat(stats: &str, key: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(stats).expect("stats JSON");
    v["core"][key].as_u64().unwrap_or_else(|| panic!("{key} in {stats}"))
}

/// `fstrim -v [ARGS] MNT`: the bytes it reports trimmed ("MNT: 1.2 MiB (1261568 bytes)
/// trimmed").
fn fstrim(mnt: &Path, args: &[&str]) -> u64 {
    let o = Command::new("fstrim").arg("-v").args(args).arg(mnt).output().expect("fstrim (util-linux)");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "fstrim {args:?}: {out}{}", String::from_utf8_lossy(&o.stderr));
    let inner = out.split('(').nth(1).and_then(|s| s.split(' ').next());
    inner.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("fstrim output: {out}"))
}

fn blob(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) | 1).collect()
}

/// Bytes the host keeps allocated for the image file.
fn allocated(img: &Path) -> u64 {
    fs::metadata(img).unwrap().blocks() * 512
}

#[test]
fn fstrim_discards_the_free_segments_and_the_files_survive() {
    // Written out in full (mkfs's default for an image file): `-o discard` is off, so only
    // FITRIM punches holes, and the image shows them.
    let img = Image::new("128M", &[]);
    let before_mount = allocated(&img.path);
    let m = img.mount();
    for i in 0..16u8 {
        fs::write(m.path(&format!("f{i}")), blob(1 << 20, i)).unwrap();
    }
    // Half deleted, then a checkpoint frees their segments.
    for i in (0..16u8).step_by(2) {
        fs::remove_file(m.path(&format!("f{i}"))).unwrap();
    }
    checkpoint(&m.mnt);

    let stats0 = mount_stats(&m.mnt);
    let trimmed = fstrim(&m.mnt, &[]);
    let stats1 = mount_stats(&m.mnt);
    assert!(trimmed > 64 << 20, "most of the 128 MiB device is free: {trimmed} bytes");
    assert!(trimmed < 128 << 20);
    assert_eq!(trimmed % 4096, 0);
    assert_eq!(
        (core_stat(&stats1, "trimmed_blocks") - core_stat(&stats0, "trimmed_blocks")) * 4096,
        trimmed,
        "the core's count"
    );
    assert!(core_stat(&stats1, "discards") > core_stat(&stats0, "discards"), "discards issued");
    assert_eq!(core_stat(&stats1, "discard_errors"), 0);
    // The device is an image file: each discard punched a hole the host gave back.
    let after = allocated(&img.path);
    eprintln!("fstrim: {trimmed} bytes trimmed; image file allocation {before_mount} -> {after} bytes");
    assert!(
        after + trimmed / 2 < before_mount,
        "the image file gave back the trimmed space: {before_mount} -> {after} bytes allocated"
    );

    // Nothing new to trim: 0 bytes, as ext4 reports a second fstrim.
    assert_eq!(fstrim(&m.mnt, &[]), 0);
    // A freed file's segments are trimmed by the next fstrim after the checkpoint that
    // frees them (8 MiB: at least three 2 MiB segments of its own).
    fs::write(m.path("big"), blob(8 << 20, 99)).unwrap();
    checkpoint(&m.mnt);
    assert_eq!(fstrim(&m.mnt, &[]), 0, "nothing freed since the last trim");
    fs::remove_file(m.path("big")).unwrap();
    assert_eq!(fstrim(&m.mnt, &[]), 0, "freed but not yet checkpointed: still the checkpoint's");
    checkpoint(&m.mnt);
    let again = fstrim(&m.mnt, &[]);
    assert!(again >= 6 << 20, "the freed file's segments: {again}");

    for i in (3..16u8).step_by(2) {
        assert_eq!(fs::read(m.path(&format!("f{i}"))).unwrap(), blob(1 << 20, i), "f{i} after the trims");
    }
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let m = img.mount();
    for i in (3..16u8).step_by(2) {
        assert_eq!(fs::read(m.path(&format!("f{i}"))).unwrap(), blob(1 << 20, i), "f{i} after a remount");
    }
    // A new mount remembers nothing of the earlier trims: the free space is trimmed again.
    assert!(fstrim(&m.mnt, &[]) > 64 << 20);
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn fstrim_keeps_to_its_range_and_minimum() {
    let img = Image::new("64M", &[]);
    let m = img.mount();
    // The first MiB is the superblocks and metadata areas (no free segment there).
    assert_eq!(fstrim(&m.mnt, &["-o", "0", "-l", "1M"]), 0);
    // A range of 8 MiB in the middle: at most 8 MiB trimmed.
    let mid = fstrim(&m.mnt, &["-o", "32M", "-l", "8M"]);
    assert!(mid > 0 && mid <= 8 << 20, "{mid}");
    // No free run of the device is 1 GiB long.
    assert_eq!(fstrim(&m.mnt, &["--minimum", "1G"]), 0);
    let rest = fstrim(&m.mnt, &[]);
    assert!(rest > 32 << 20, "{rest}");
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn fitrim_is_refused_on_a_read_only_mount_and_for_bad_ranges() {
    let img = Image::new("64M", &[]);
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("ro")]);
    let call = |range: [u64; 3]| {
        let mut r = range;
        let d = fs::File::open(&m.mnt).unwrap();
        // SAFETY: FITRIM reads and writes a 24-byte struct fstrim_range.
        let rc = unsafe { libc::ioctl(d.as_raw_fd(), FITRIM as _, r.as_mut_ptr()) };
        if rc < 0 {
            Err(std::io::Error::last_os_error().raw_os_error().unwrap())
        } else {
            Ok(r[1])
        }
    };
    assert_eq!(call([0, u64::MAX, 0]), Err(libc::EROFS));
    assert_eq!(call([0, 100, 0]), Err(libc::EINVAL), "a range shorter than a block");
    assert_eq!(call([1 << 40, 1 << 20, 0]), Err(libc::EINVAL), "a range past the device");
    assert!(m.unmount().success());
}

/// A crash at any point around an `fstrim` loses nothing: a recorded mount (every write,
/// wait, flush and discard logged) runs fsync'd files, an unlink not yet checkpointed,
/// a trim, more fsync'd writes and a second trim; every crash state `rollfs crashtest`
/// would pick (discards zeroed or ignored, unflushed writes in seeded subsets, the newest
/// torn) must mount, fsck clean, and show each fsync'd file with its contents.
#[test]
fn every_crash_around_fstrim_keeps_the_fsyncd_files() {
    let img = Image::new("64M", &["--segment-size", "256K"]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(&img.path, &[OsStr::new("--record-writes"), log.as_os_str()]);
    // (name, contents, the log point its fsync returned at)
    let mut synced: Vec<(String, Vec<u8>, u64)> = Vec::new();
    let mut put = |name: &str, data: Vec<u8>| {
        let f = fs::File::create(m.path(name)).unwrap();
        std::io::Write::write_all(&mut &f, &data).unwrap();
        f.sync_all().unwrap();
        synced.push((name.to_string(), data, log_point(&log)));
    };
    // f1 and f3 fill segments of their own (1 MiB: four 256 KiB segments), which their
    // unlink makes prefree.
    for i in 0..6u8 {
        put(&format!("f{i}"), blob(if i % 2 == 1 { 1 << 20 } else { 300_000 }, i));
    }
    checkpoint(&m.mnt);
    // Unlinked and not checkpointed: the checkpoint still has them (their segments prefree).
    fs::remove_file(m.path("f1")).unwrap();
    fs::remove_file(m.path("f3")).unwrap();
    let removed_at = log_point(&log);
    assert!(fstrim(&m.mnt, &[]) > 0);
    put("g", blob(200_000, 40));
    put("f0", blob(100_000, 41));
    checkpoint(&m.mnt);
    assert!(fstrim(&m.mnt, &[]) > 0, "the unlinked files' segments, freed by the checkpoint");
    put("h", blob(50_000, 42));
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let wl = rollfs::record::WriteLog::open(&log).unwrap();
    let discards = wl.io().iter().filter(|e| e.tag == rollfs::record::Tag::Discard).count();
    assert!(discards > 0, "the log holds the trims' discards");

    let out = img.dir.path().join("crash.img");
    let states = for_each_crash_state(&log, &out, 300, 7, |point, what| {
        let m = Mount::try_new(&out, &[]).unwrap_or_else(|e| panic!("{what}: does not mount: {e}"));
        let names: std::collections::BTreeSet<&str> = synced.iter().map(|s| s.0.as_str()).collect();
        for name in names {
            // Its fsync'd states; the newest one acknowledged by this point, or a later one.
            let states: Vec<&(String, Vec<u8>, u64)> = synced.iter().filter(|s| s.0 == name).collect();
            let Some(k) = states.iter().rposition(|s| s.2 <= point) else { continue };
            let now = fs::read(m.path(name)).ok();
            if (name == "f1" || name == "f3") && point >= removed_at && now.is_none() {
                continue; // unlinked: gone once a checkpoint made that durable, else intact
            }
            assert!(
                states[k..].iter().any(|s| now.as_ref() == Some(&s.1)),
                "{what}: {name} lost its fsync'd contents ({:?} bytes)",
                now.map(|d| d.len())
            );
        }
        assert!(m.unmount().success(), "{what}: unmount");
        let o = rollfs([OsStr::new("fsck"), out.as_os_str()]);
        assert!(o.status.success(), "{what}: fsck: {}", stdout(&o));
    });
    eprintln!("fstrim: {states} crash states checked, {discards} discards logged");
    assert!(states >= 100, "only {states} crash states");
}
