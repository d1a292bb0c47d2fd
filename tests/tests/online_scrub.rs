//! `rollfs scrub MOUNTPOINT` through a real mount (issue 39): the online scrub finds every
//! bad block by path and offset while the filesystem stays mounted and usable, writes
//! nothing, resumes from a cursor, gives the same answer in steps of one block, and is
//! refused to other users (the daemon's ioctl) and on a directory that is not a rollfs
//! mount.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

const BLOCK: usize = 4096;

/// (path, blocks): 520 blocks cross from the inode's pointers into a direct node.
const FILES: &[(&str, u64)] = &[("a", 2), ("dir/b", 40), ("c", 520)];

fn block_content(path: &str, idx: u64) -> Vec<u8> {
    let mut b: Vec<u8> = (0..BLOCK).map(|i| (i as u64 * 13 + idx) as u8).collect();
    let head = format!("scrubme:{path}:{idx}:");
    b[..head.len()].copy_from_slice(head.as_bytes());
    b
}

fn write_files(img: &Image) {
    let m = img.mount();
    std::fs::create_dir(m.path("dir")).unwrap();
    for &(path, blocks) in FILES {
        let data: Vec<u8> = (0..blocks).flat_map(|i| block_content(path, i)).collect();
        std::fs::write(m.path(path), data).unwrap();
    }
    assert!(m.unmount().success());
}

/// The image byte offset of `path`'s file block `idx` (found by its tag).
fn block_offset(image: &Path, path: &str, idx: u64) -> u64 {
    let bytes = std::fs::read(image).unwrap();
    let head = format!("scrubme:{path}:{idx}:");
    let i = bytes.chunks_exact(BLOCK).position(|b| b.starts_with(head.as_bytes())).expect("tagged block");
    (i * BLOCK) as u64
}

fn flip(image: &Path, byte: u64) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(image).unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, byte).unwrap();
    b[0] ^= 0x20;
    f.write_all_at(&b, byte).unwrap();
}

fn scrub_online(mnt: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args: Vec<&OsStr> = vec![OsStr::new("scrub"), OsStr::new("--json")];
    args.extend(extra.iter().map(OsStr::new));
    args.push(mnt.as_os_str());
    let o = rollfs(args);
    let v = serde_json::from_str(stdout(&o).trim())
        .unwrap_or_else(|e| panic!("scrub --json: {e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code().unwrap_or(-1), v)
}

fn bad_list(v: &serde_json::Value) -> Vec<(String, u64)> {
    let mut l: Vec<(String, u64)> = v["bad"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["path"].as_str().unwrap().to_string(), b["file_offset"].as_u64().unwrap()))
        .collect();
    l.sort();
    l
}

/// Blocks the core wrote and flushes it issued, from the stats ioctl.
fn writes(m: &Mount) -> u64 {
    let stats: serde_json::Value = serde_json::from_str(&mount_stats(&m.path("."))).unwrap();
    ["data_blocks_written", "node_blocks_written", "meta_blocks_written", "flushes", "checkpoints"]
        .iter()
        .map(|k| stats["core"][k].as_u64().unwrap_or_else(|| panic!("no core.{k}: {stats}")))
        .sum()
}

#[test]
fn a_live_mount_scrubs_clean_then_names_each_bad_block_by_path() {
    require_fuse();
    let img = Image::new("64M", &[]);
    write_files(&img);
    let m = img.mount();
    let written = writes(&m);
    let (code, v) = scrub_online(&m.mnt, &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["clean"], true);
    assert!(v["data_blocks_verified"].as_u64().unwrap() >= 562, "{v}");
    assert!(v["node_blocks_verified"].as_u64().unwrap() >= 5, "{v}");
    assert_eq!(writes(&m), written, "the scrub wrote");
    assert!(m.unmount().success());

    let bad = [("a", 1u64), ("dir/b", 7), ("c", 500)];
    for &(p, i) in &bad {
        flip(&img.path, block_offset(&img.path, p, i) + 3000);
    }
    let m = img.mount();
    // The filesystem is in use while it is scrubbed: a file written now is skipped or
    // checked, never reported.
    std::fs::write(m.path("new"), vec![7u8; 3 * BLOCK]).unwrap();
    let (code, v) = scrub_online(&m.mnt, &[]);
    assert_eq!(code, 4, "{v}");
    let mut want: Vec<(String, u64)> =
        bad.iter().map(|&(p, i)| (m.path(p).display().to_string(), i * BLOCK as u64)).collect();
    want.sort();
    assert_eq!(bad_list(&v), want, "{v}");
    assert!(m.log_text().contains("rollfs: scrub: inode"), "the daemon logs what it found");
    // Steps of one block find the same.
    let (code1, v1) = scrub_online(&m.mnt, &["--step-blocks", "1"]);
    assert_eq!((code1, bad_list(&v1)), (4, want.clone()), "{v1}");
    assert!(v1["steps"].as_u64().unwrap() > v["steps"].as_u64().unwrap() * 100, "{v1}");
    // Resuming past /a's inode does not see its bad block; from the start it does.
    let a_ino = std::fs::metadata(m.path("a")).unwrap().ino();
    let (_, vr) = scrub_online(&m.mnt, &["--resume", &format!("{}:0", a_ino + 1)]);
    assert!(!bad_list(&vr).iter().any(|(p, _)| p.ends_with("/a")), "{vr}");
    let (_, v0) = scrub_online(&m.mnt, &["--resume", "0:0"]);
    assert_eq!(bad_list(&v0), want);
    // The mount goes on: the good blocks read, the new file reads back.
    let mut buf = vec![0u8; BLOCK];
    std::fs::File::open(m.path("c")).unwrap().read_exact_at(&mut buf, 499 * BLOCK as u64).unwrap();
    assert!(buf == block_content("c", 499));
    assert_eq!(std::fs::read(m.path("new")).unwrap(), vec![7u8; 3 * BLOCK]);
    assert!(m.unmount().success());
}

#[test]
fn scrub_of_a_mount_is_refused_to_other_users_and_of_other_directories() {
    require_fuse();
    let img = Image::new("64M", &[]);
    let m = Mount::new(&img.path, &[OsStr::new("-o"), OsStr::new("allow_other")]);
    std::fs::write(m.path("f"), b"x").unwrap();
    if is_root() {
        let o = command_as_nobody(&rollfs_bin()).args([OsStr::new("scrub"), m.mnt.as_os_str()]).output().unwrap();
        assert_fails(&o, 8, "the user who mounted it, or root");
    }
    let plain = tempfile::tempdir().unwrap();
    let o = rollfs([OsStr::new("scrub"), plain.path().as_os_str()]);
    assert_fails(&o, 8, "not a rollfs mount");
    let o = rollfs([OsStr::new("scrub"), OsStr::new("--resume"), OsStr::new("12"), m.mnt.as_os_str()]);
    assert_fails(&o, 2, "NID:POS");
    let o = rollfs([OsStr::new("scrub"), OsStr::new("--step-blocks"), OsStr::new("5"), img.path.as_os_str()]);
    assert_fails(&o, 16, "for a mountpoint");
    assert!(m.unmount().success());
}

/// `-O nodatasum`: nothing to check data against; the online scrub checks nodes and says so.
#[test]
fn an_image_without_data_checksums_scrubs_its_nodes_and_says_so() {
    require_fuse();
    let img = Image::new("64M", &["-O", "nodatasum"]);
    let m = img.mount();
    std::fs::write(m.path("f"), vec![1u8; 3 * BLOCK]).unwrap();
    let (code, v) = scrub_online(&m.mnt, &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["data_checked"].as_bool(), v["data_blocks_verified"].as_u64()), (Some(false), Some(0)), "{v}");
    assert!(v["node_blocks_verified"].as_u64().unwrap() >= 1, "{v}");
    let o = rollfs([OsStr::new("scrub"), m.mnt.as_os_str()]);
    assert!(stdout(&o).contains("no checksums; node blocks only"), "{}", stdout(&o));
    assert!(m.unmount().success());
}
