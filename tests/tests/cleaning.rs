//! Segment cleaning through the mount: the driver's idle-time background cleaner.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::time::{Duration, Instant};

fn pattern(i: usize) -> Vec<u8> {
    (0..64 * 1024).map(|k| (i * 31 + k / 4096) as u8).collect()
}

/// Writes `files` 64 KiB files, each made durable (so they occupy segments on the device,
/// not only the write-back cache), then deletes every other one.
fn fill_and_thin(m: &Mount, files: usize) {
    for i in 0..files {
        let mut f = fs::File::create(m.path(&format!("f{i}"))).unwrap();
        f.write_all(&pattern(i)).unwrap();
        f.sync_all().unwrap();
    }
    for i in (0..files).step_by(2) {
        fs::remove_file(m.path(&format!("f{i}"))).unwrap();
    }
}

fn bg_rounds(stats: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(stats).expect("stats JSON");
    v["driver"]["bg_gc_rounds"].as_u64().expect("bg_gc_rounds in the stats")
}

/// Fills a small image to ~75% with 64 KiB files and deletes every other one, so every
/// data segment is half valid and free space is below the background threshold (a third
/// of the segments); then leaves the mount idle. The cleaner must move segments by itself,
/// and the result must be consistent (fsck) with every remaining file intact.
#[test]
fn background_cleaning_runs_when_the_mount_is_idle() {
    let img = Image::new("64M", &["--segment-size", "256K"]);
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("gc_idle=1")]);
    let files = 768;
    fill_and_thin(&m, files);
    // The stats ioctl is a request too (it ends an idle period): poll slower than the
    // idle time.
    let deadline = Instant::now() + Duration::from_secs(60);
    let rounds = loop {
        std::thread::sleep(Duration::from_millis(2500));
        let r = bg_rounds(&mount_stats(&m.path("f1")));
        if r > 0 || Instant::now() > deadline {
            break r;
        }
    };
    assert!(rounds > 0, "no background cleaning in 60 s of idleness:\n{}", m.log_text());
    for i in (1..files).step_by(2) {
        assert_eq!(fs::read(m.path(&format!("f{i}"))).unwrap(), pattern(i), "f{i} after cleaning");
    }
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}

#[test]
fn nogc_turns_the_background_cleaner_off() {
    let img = Image::new("64M", &["--segment-size", "256K"]);
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("gc_idle=1,nogc")]);
    fill_and_thin(&m, 768);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(bg_rounds(&mount_stats(&m.path("f1"))), 0);
    assert!(m.unmount().success());
    img.assert_fsck_clean();
}
