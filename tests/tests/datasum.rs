//! Data checksums through the real binary and a FUSE mount (issue 17): every data block of
//! an image flipped in turn is found by `rollfs scrub` with its path and offset; a read of
//! a flipped block through the mount is EIO, logged with inode, offset and block address,
//! and counted, while the file's other blocks read fine; fsck lists bad blocks and a repair
//! does not pretend to fix them; `-O nodatasum` images return the device's bytes.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BLOCK: usize = 4096;
const TAG: &[u8] = b"flipme:";

/// The files written: (path, blocks). 520 blocks cross from the inode's 457 pointers into a
/// direct node.
const FILES: &[(&str, u64)] = &[("/a", 1), ("/dir/b", 40), ("/c", 520)];

/// A block of `path` at file block `idx`: the tag, the path and the index, then a pattern.
fn block_content(path: &str, idx: u64) -> Vec<u8> {
    let mut b: Vec<u8> = (0..BLOCK).map(|i| (i as u64 * 7 + idx) as u8).collect();
    let head = format!("flipme:{path}:{idx}:");
    b[..head.len()].copy_from_slice(head.as_bytes());
    b
}

/// Writes the files through a mount of `img`, then unmounts.
fn write_files(img: &Image) {
    let m = img.mount();
    std::fs::create_dir(m.path("dir")).unwrap();
    for &(path, blocks) in FILES {
        let data: Vec<u8> = (0..blocks).flat_map(|i| block_content(path, i)).collect();
        std::fs::write(m.path(&path[1..]), data).unwrap();
    }
    assert!(m.unmount().success());
}

/// Every tagged data block in the image: (byte offset in the image, path, file block).
fn tagged_blocks(image: &Path) -> Vec<(u64, String, u64)> {
    let bytes = std::fs::read(image).unwrap();
    let mut out = Vec::new();
    for (i, b) in bytes.chunks_exact(BLOCK).enumerate() {
        if b.starts_with(TAG) {
            let head = String::from_utf8_lossy(&b[..64]);
            let mut parts = head.split(':');
            let (path, idx) = (parts.nth(1).unwrap().to_string(), parts.next().unwrap().parse().unwrap());
            out.push(((i * BLOCK) as u64, path, idx));
        }
    }
    out
}

fn flip(image: &Path, byte: u64, bit: u8) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(image).unwrap();
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, byte).unwrap();
    b[0] ^= 1 << bit;
    f.write_all_at(&b, byte).unwrap();
}

fn scrub_json(image: &Path) -> (i32, serde_json::Value) {
    let o = rollfs([OsStr::new("scrub"), OsStr::new("--json"), image.as_os_str()]);
    let v = serde_json::from_str(stdout(&o).trim())
        .unwrap_or_else(|e| panic!("scrub --json: {e}: {}{}", stdout(&o), stderr(&o)));
    (o.status.code().unwrap_or(-1), v)
}

/// Flips one bit of every data block in turn (not a sample): scrub must report exactly
/// that block, by path and byte offset, and nothing once it is flipped back.
#[test]
fn scrub_finds_every_flipped_data_block_by_path() {
    let img = Image::new("64M", &[]);
    write_files(&img);
    let blocks = tagged_blocks(&img.path);
    let expected: u64 = FILES.iter().map(|f| f.1).sum();
    assert_eq!(blocks.len() as u64, expected, "each written block is in the image once");
    let (code, v) = scrub_json(&img.path);
    assert_eq!(code, 0, "{v}");
    assert!(v["data_blocks_verified"].as_u64().unwrap() >= expected, "{v}");
    for (k, (byte, path, idx)) in blocks.iter().enumerate() {
        // A different bit and byte of the block each time.
        let at = byte + (k as u64 * 523) % BLOCK as u64;
        let bit = (k % 8) as u8;
        flip(&img.path, at, bit);
        let (code, v) = scrub_json(&img.path);
        let bad = v["bad_data"].as_array().unwrap();
        assert_eq!((code, bad.len()), (4, 1), "flip in {path} block {idx}: {v}");
        assert_eq!(bad[0]["path"], path.as_str(), "{v}");
        assert_eq!(bad[0]["offset"].as_u64(), Some(idx * BLOCK as u64), "{v}");
        assert_eq!(bad[0]["block"].as_u64(), Some(byte / BLOCK as u64), "{v}");
        flip(&img.path, at, bit);
    }
    assert_eq!(scrub_json(&img.path).0, 0);
}

/// fsck verifies data by default and lists the bad files; `--no-verify-data` checks only
/// the metadata; `--repair` changes nothing for bad data and says why; inspect counts.
#[test]
fn fsck_lists_bad_data_and_repair_does_not_pretend() {
    let img = Image::new("64M", &[]);
    write_files(&img);
    let blocks = tagged_blocks(&img.path);
    let (byte, path, idx) = blocks.iter().find(|b| b.1 == "/dir/b" && b.2 == 7).unwrap().clone();
    flip(&img.path, byte + 100, 3);
    let (code, o) = img.fsck();
    let out = stdout(&o);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains(&format!("{path}: bad data block at byte offset {}", idx * BLOCK as u64)), "{out}");
    assert!(out.contains("1 bad data blocks in 1 files"), "{out}");
    let o = rollfs([OsStr::new("fsck"), OsStr::new("--no-verify-data"), img.path.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let before = std::fs::read(&img.path).unwrap();
    let o = rollfs([OsStr::new("fsck"), OsStr::new("--repair"), img.path.as_os_str()]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    assert!(stdout(&o).contains("no repair brings them back"), "{}", stdout(&o));
    assert!(std::fs::read(&img.path).unwrap() == before, "a repair of bad data alone writes nothing");
    let o = rollfs([OsStr::new("inspect"), OsStr::new("--verify-data"), img.path.as_os_str()]);
    let t = stdout(&o);
    assert!(t.contains("data checksums:    on") && t.contains("blocks read, 1 bad"), "{t}");
    let o = rollfs([OsStr::new("scrub"), img.path.as_os_str()]);
    assert_eq!(o.status.code(), Some(4));
    assert!(stdout(&o).contains("1 bad data blocks in 1 files"), "{}", stdout(&o));
}

/// Through FUSE: a read covering a flipped block is EIO, logged with inode, byte offset and
/// block address, and counted; every other block of the file reads back; a full-block
/// rewrite replaces the bad block.
#[test]
fn read_of_a_flipped_block_is_eio_and_the_rest_of_the_file_reads() {
    let img = Image::new("64M", &[]);
    write_files(&img);
    let blocks = tagged_blocks(&img.path);
    let find = |p: &str, i: u64| blocks.iter().find(|b| b.1 == p && b.2 == i).unwrap().0;
    let bad = [("/a", 0u64), ("/c", 3), ("/c", 500)];
    for &(p, i) in &bad {
        flip(&img.path, find(p, i) + 4000, 0);
    }
    let m = img.mount();
    for &(path, n) in FILES {
        let f = std::fs::File::open(m.path(&path[1..])).unwrap();
        for i in 0..n {
            let mut buf = vec![0u8; BLOCK];
            let r = f.read_exact_at(&mut buf, i * BLOCK as u64);
            if bad.contains(&(path, i)) {
                let e = r.expect_err("a bad block must not be returned");
                assert_eq!(e.raw_os_error(), Some(libc::EIO), "{path} block {i}: {e}");
            } else {
                r.unwrap_or_else(|e| panic!("{path} block {i} is good but: {e}"));
                assert!(buf == block_content(path, i), "{path} block {i}");
            }
        }
    }
    let log = m.log_text();
    assert!(log.contains("data checksum mismatch: inode") && log.contains("(byte offset 12288)"), "{log}");
    let stats: serde_json::Value = serde_json::from_str(&mount_stats(&m.path("c"))).unwrap();
    assert!(stats["core"]["data_checksum_errors"].as_u64().unwrap() >= 3, "{stats}");
    // Rewriting the whole bad block replaces it.
    let f = std::fs::OpenOptions::new().write(true).open(m.path("c")).unwrap();
    f.write_all_at(&block_content("/c", 3), 3 * BLOCK as u64).unwrap();
    f.sync_all().unwrap();
    let mut buf = vec![0u8; BLOCK];
    std::fs::File::open(m.path("c")).unwrap().read_exact_at(&mut buf, 3 * BLOCK as u64).unwrap();
    assert!(buf == block_content("/c", 3));
    drop(f);
    assert!(m.unmount().success());
    let (code, v) = scrub_json(&img.path);
    assert_eq!(code, 4);
    let mut listed: Vec<(String, u64)> = v["bad_data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["path"].as_str().unwrap().to_string(), b["index"].as_u64().unwrap()))
        .collect();
    listed.sort();
    assert_eq!(listed, vec![("/a".to_string(), 0), ("/c".to_string(), 500)], "{v}");
}

/// `mkfs -O nodatasum`: no checksums, the device's bytes are returned, scrub refuses;
/// unknown features are usage errors that create nothing.
#[test]
fn nodatasum_returns_the_device_bytes_and_scrub_refuses() {
    let img = Image::new("64M", &["-O", "nodatasum"]);
    let o = rollfs([OsStr::new("inspect"), img.path.as_os_str()]);
    assert!(stdout(&o).contains("data checksums:    off"), "{}", stdout(&o));
    write_files(&img);
    let (byte, _, _) = tagged_blocks(&img.path).into_iter().find(|b| b.1 == "/a").unwrap();
    flip(&img.path, byte + 10, 1);
    let o = rollfs([OsStr::new("scrub"), img.path.as_os_str()]);
    assert_fails(&o, 8, "nodatasum");
    img.assert_fsck_clean();
    let m = img.mount();
    let got = std::fs::read(m.path("a")).unwrap();
    let mut want = block_content("/a", 0);
    want[10] ^= 2;
    assert!(got == want, "a nodatasum image returns what the device holds");
    drop(m);

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.img");
    let o = rollfs([
        OsStr::new("mkfs"),
        OsStr::new("--size"),
        OsStr::new("64M"),
        OsStr::new("-O"),
        OsStr::new("datasum,nosuch"),
        p.as_os_str(),
    ]);
    assert_fails(&o, 2, "nosuch: unknown feature");
    assert!(!p.exists(), "a refused mkfs creates nothing");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--size"), OsStr::new("64M"), p.as_os_str()]);
    assert!(stdout(&o).contains("data checksums on"), "{}", stdout(&o));
}
