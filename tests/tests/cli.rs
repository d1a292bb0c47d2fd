//! The CLI's error cases, each with its message and exit code, and the basic happy paths
//! of mkfs / fsck / inspect.

use rollfs_tests::*;
use std::ffi::OsStr;
use std::os::unix::fs::FileExt;
use std::path::Path;

const SB_MAGIC: u32 = 0x5346_4C52;

fn write_at(p: &Path, off: u64, data: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    f.write_all_at(data, off).unwrap();
}

fn args<'a>(v: &'a [&'a OsStr]) -> Vec<&'a OsStr> {
    v.to_vec()
}

#[test]
fn missing_image_is_reported_by_every_command() {
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("nope.img");
    let mnt = d.path();
    assert_fails(&rollfs([OsStr::new("fsck"), img.as_os_str()]), 8, "nope.img: no such file or device");
    assert_fails(&rollfs([OsStr::new("inspect"), img.as_os_str()]), 1, "nope.img: no such file or device");
    // Background mount: the error travels back from the daemon.
    assert_fails(
        &rollfs([OsStr::new("mount"), img.as_os_str(), mnt.as_os_str()]),
        1,
        "nope.img: no such file or device",
    );
    assert_fails(&rollfs([OsStr::new("mkfs"), img.as_os_str()]), 1, "give --size to create an image file");
}

#[test]
fn missing_mount_point() {
    let img = Image::raw(64 << 20);
    let mnt = img.dir.path().join("no-such-dir");
    for fg in [false, true] {
        let mut a = vec![OsStr::new("mount")];
        if fg {
            a.push(OsStr::new("-f"));
        }
        a.extend([img.path.as_os_str(), mnt.as_os_str()]);
        assert_fails(&rollfs(args(&a)), 1, "no-such-dir: does not exist");
    }
    let file = img.dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert_fails(&rollfs([OsStr::new("mount"), img.path.as_os_str(), file.as_os_str()]), 1, "not a directory");
}

#[test]
fn wrong_magic_on_an_empty_image() {
    let img = Image::raw(64 << 20);
    let o = rollfs([OsStr::new("fsck"), img.path.as_os_str()]);
    assert_fails(&o, 8, "not a rollfs filesystem (bad superblock magic; it looks like an empty (all-zero) device)");
    let o = rollfs([OsStr::new("mount"), OsStr::new("-f"), img.path.as_os_str(), img.dir.path().as_os_str()]);
    assert_fails(&o, 1, "not a rollfs filesystem");
    assert_fails(&rollfs([OsStr::new("inspect"), img.path.as_os_str()]), 1, "not a rollfs filesystem");
}

#[test]
fn foreign_filesystem_is_named_and_protected() {
    let img = Image::raw(64 << 20);
    write_at(&img.path, 1080, &[0x53, 0xEF]);
    assert_fails(&rollfs([OsStr::new("fsck"), img.path.as_os_str()]), 8, "it looks like an ext2/ext3/ext4 filesystem");
    assert_fails(
        &rollfs([OsStr::new("mkfs"), img.path.as_os_str()]),
        1,
        "already contains an ext2/ext3/ext4 filesystem; refusing to overwrite it without --force",
    );
}

#[test]
fn unsupported_format_version() {
    let img = Image::raw(64 << 20);
    let mut b = vec![0u8; 4096];
    b[0..4].copy_from_slice(&SB_MAGIC.to_le_bytes());
    b[4..6].copy_from_slice(&9u16.to_le_bytes());
    b[6..8].copy_from_slice(&3u16.to_le_bytes());
    write_at(&img.path, 0, &b);
    assert_fails(
        &rollfs([OsStr::new("fsck"), img.path.as_os_str()]),
        8,
        "unsupported rollfs format version 9.3 (this rollfs reads version 2.x)",
    );
    assert_fails(
        &rollfs([OsStr::new("mount"), OsStr::new("-f"), img.path.as_os_str(), img.dir.path().as_os_str()]),
        1,
        "unsupported rollfs format version 9.3",
    );
    // A format 1 image (before data checksums) is refused with what to do about it.
    b[4..6].copy_from_slice(&1u16.to_le_bytes());
    b[6..8].copy_from_slice(&0u16.to_le_bytes());
    write_at(&img.path, 0, &b);
    assert_fails(
        &rollfs([OsStr::new("fsck"), img.path.as_os_str()]),
        8,
        "version 1.0 (this rollfs reads version 2.x); format 1 was made before data checksums",
    );
}

/// An image made by a newer rollfs, with an incompatible feature bit this one does not
/// know (a valid superblock otherwise, both copies): refused by fsck, mount and inspect,
/// naming the unknown bits, and left as it was.
#[test]
fn unknown_incompatible_features_are_named() {
    use rollfs_core::superblock::Superblock;
    let img = Image::new("64M", &[]);
    let f = std::fs::File::options().read(true).write(true).open(&img.path).unwrap();
    let mut b = [0u8; 4096];
    f.read_exact_at(&mut b, 0).unwrap();
    let mut sb = Superblock::decode(0, &b).expect("a fresh superblock");
    sb.feature_incompat |= 1 << 9;
    let new = sb.encode();
    f.write_all_at(&new[..], 0).unwrap();
    f.write_all_at(&new[..], 4096).unwrap();
    drop(f);
    let before = std::fs::read(&img.path).unwrap();
    let want = "made by a newer rollfs: incompatible feature bits 0x200 are unknown to this one";
    assert_fails(&rollfs([OsStr::new("fsck"), img.path.as_os_str()]), 8, want);
    assert_fails(&rollfs([OsStr::new("fsck"), OsStr::new("--repair"), img.path.as_os_str()]), 8, want);
    let mnt = img.dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert_fails(&rollfs([OsStr::new("mount"), OsStr::new("-f"), img.path.as_os_str(), mnt.as_os_str()]), 1, want);
    assert!(std::fs::read(&img.path).unwrap() == before, "a refused image was changed");
}

#[test]
fn corrupted_superblock() {
    let img = Image::raw(64 << 20);
    let mut b = vec![0xA5u8; 4096];
    b[0..4].copy_from_slice(&SB_MAGIC.to_le_bytes());
    b[4..6].copy_from_slice(&2u16.to_le_bytes());
    write_at(&img.path, 0, &b);
    write_at(&img.path, 4096, &b);
    let o = rollfs([OsStr::new("fsck"), img.path.as_os_str()]);
    assert_fails(&o, 4, "corrupted superblock: superblock: checksum mismatch");
    assert_fails(&rollfs([OsStr::new("inspect"), img.path.as_os_str()]), 1, "corrupted superblock");
}

#[test]
fn permission_denied() {
    let img = Image::raw(64 << 20);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&img.path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(img.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if !is_root() {
        std::fs::set_permissions(&img.path, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let o = command_as_nobody(&rollfs_bin()).arg("fsck").arg(&img.path).output().unwrap();
    assert_fails(&o, 8, "raw.img: permission denied");
    let o = command_as_nobody(&rollfs_bin()).arg("mkfs").arg("--force").arg(&img.path).output().unwrap();
    assert_fails(&o, 1, "permission denied while trying to open for writing");
}

#[test]
fn bad_options_are_usage_errors() {
    let img = Image::raw(64 << 20);
    let dir = img.dir.path().as_os_str();
    let p = img.path.as_os_str();
    assert_fails(
        &rollfs([OsStr::new("mount"), OsStr::new("-o"), OsStr::new("bogus"), p, dir]),
        2,
        "-o bogus: unknown mount option",
    );
    assert_fails(&rollfs([OsStr::new("mount"), OsStr::new("-o"), OsStr::new("threads=0"), p, dir]), 2, "threads=0");
    assert_fails(
        &rollfs([OsStr::new("mkfs"), OsStr::new("--segment-size"), OsStr::new("1000"), p]),
        2,
        "multiple of 4 KiB",
    );
    assert_fails(&rollfs([OsStr::new("mkfs"), OsStr::new("--size"), OsStr::new("10Q"), p]), 2, "unknown suffix");
    assert_fails(&rollfs([OsStr::new("mkfs"), OsStr::new("--overprovision"), OsStr::new("80"), p]), 2, "80");
    assert_fails(
        &rollfs([OsStr::new("mkfs"), OsStr::new("--label"), OsStr::new(&"x".repeat(40)), p]),
        2,
        "at most 32 bytes",
    );
    assert_fails(&rollfs([OsStr::new("frobnicate")]), 2, "unrecognized subcommand");
}

#[test]
fn replay_rejects_a_foreign_file() {
    let img = Image::raw(8192);
    let o = rollfs([OsStr::new("replay"), img.path.as_os_str()]);
    assert_fails(&o, 1, "not a rollfs write log: bad magic");
}

// ---- these need the core's format/mount/fsck -------------------------------------------

#[test]
fn mkfs_refuses_to_overwrite_rollfs_without_force_and_fsck_is_clean() {
    let img = Image::new("128M", &["--label", "data"]);
    img.assert_fsck_clean();
    let o = rollfs([OsStr::new("mkfs"), img.path.as_os_str()]);
    assert_fails(&o, 1, "already contains a rollfs filesystem (label \"data\")");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--force"), img.path.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("formatted"), "{}", stdout(&o));
    img.assert_fsck_clean();
}

#[test]
fn mkfs_sparse_creates_a_sparse_image() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("big.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--sparse"), OsStr::new("--size"), OsStr::new("8G"), p.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!(m.len(), 8 << 30);
    assert!(m.blocks() * 512 < 256 << 20, "image is not sparse: {} bytes allocated", m.blocks() * 512);
}

/// By default a new image is written out in full, so that the host never allocates
/// inside an fsync of the mounted filesystem (issue 14); and the mount then does not
/// discard (a discard would punch holes back into it).
#[test]
fn mkfs_writes_a_new_image_out_in_full() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("full.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--size"), OsStr::new("64M"), p.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!(m.len(), 64 << 20);
    assert!(m.blocks() * 512 >= 64 << 20, "image not written out: {} bytes allocated", m.blocks() * 512);
    let meta = std::fs::File::open(&p).unwrap().metadata().unwrap();
    assert!(!rollfs::cmd::discard_default(rollfs::device::DeviceKind::ImageFile, &meta));
}

#[test]
fn mkfs_too_small_says_so_and_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("tiny.img");
    let o = rollfs([OsStr::new("mkfs"), OsStr::new("--size"), OsStr::new("1M"), p.as_os_str()]);
    assert_fails(&o, 1, "too small");
    assert!(!p.exists(), "a failed mkfs left its image behind");
}

#[test]
fn inspect_text_json_and_svg() {
    let img = Image::new("128M", &["--label", "inspect-me", "--segment-size", "1M"]);
    let svg = img.dir.path().join("map.svg");
    let o = rollfs([OsStr::new("inspect"), OsStr::new("--svg"), svg.as_os_str(), img.path.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    let version = format!(
        "format version:    {}.{}",
        rollfs_core::superblock::FORMAT_VERSION_MAJOR,
        rollfs_core::superblock::FORMAT_VERSION_MINOR
    );
    assert!(t.contains(&version) && t.contains("\"inspect-me\"") && t.contains("1.0 MiB"), "{t}");
    assert!(t.contains("clean unmount") && t.contains("warm-node") && t.contains("segment use:"), "{t}");
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"), "{s}");
    // One cell per segment (126 of 1 MiB), the six log heads tagged, the legends, the areas.
    assert_eq!(s.matches(r#"class="seg""#).count(), 126, "{s}");
    assert_eq!(s.matches(r#"class="wear""#).count(), 126, "{s}");
    for head in [">HD<", ">WD<", ">CD<", ">HN<", ">WN<", ">CN<", "hot-data: segment 0", "cold-node: segment 5"] {
        assert!(s.contains(head), "no {head} in {s}");
    }
    assert_eq!(s.matches(r#"class="legend""#).count(), 2, "{s}");
    for area in ["superblock", "checkpoint", "NAT", "SIT", "SSA", "main"] {
        assert!(s.contains(&format!(r#"data-area="{area}""#)), "no {area} in {s}");
    }
    assert!(s.contains("checkpoint version 1 (clean unmount)") && s.contains("size 128.0 MiB"), "{s}");
    // Deterministic: the same image gives the same picture.
    let svg2 = img.dir.path().join("map2.svg");
    let o = rollfs([OsStr::new("inspect"), OsStr::new("--svg"), svg2.as_os_str(), img.path.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s, std::fs::read_to_string(&svg2).unwrap());
    let o = rollfs([OsStr::new("inspect"), OsStr::new("--json"), img.path.as_os_str()]);
    let j = stdout(&o);
    assert!(j.contains("\"label\": \"inspect-me\"") && j.contains("\"segment_blocks\": 256"), "{j}");
    assert!(j.contains("\"segments\": [") && j.contains("\"clean_unmount\": true"), "{j}");
}

#[test]
fn fsck_json_on_a_clean_image() {
    let img = Image::new("128M", &[]);
    let o = rollfs([OsStr::new("fsck"), OsStr::new("--json"), img.path.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"clean\":true"), "{}", stdout(&o));
}

/// `mkfs --reserve PCT` records the root reserve in the superblock; a mount uses it unless
/// `-o reserve=` says otherwise, and without either keeps 5 %. statfs shows the reserve as
/// free but not available.
#[test]
fn mkfs_reserve_is_the_mounts_default_root_reserve() {
    let img_blocks = |img: &Image| std::fs::metadata(&img.path).unwrap().len() / 4096;
    let reserved_pct = |img: &Image, opts: &[&str]| -> f64 {
        let extra: Vec<&OsStr> = opts.iter().map(OsStr::new).collect();
        let m = Mount::new(&img.path, &extra);
        let c = std::ffi::CString::new(m.mnt.as_os_str().as_encoded_bytes()).unwrap();
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        assert!(m.unmount().success());
        (st.f_bfree - st.f_bavail) as f64 * 100.0 / img_blocks(img) as f64
    };
    let with = Image::new("128M", &["--reserve", "20"]);
    let pct = reserved_pct(&with, &[]);
    assert!((19.0..=21.0).contains(&pct), "mkfs --reserve 20: {pct:.1} % reserved");
    let pct = reserved_pct(&with, &["-o", "reserve=0"]);
    assert!(pct < 0.5, "-o reserve=0 overrides mkfs: {pct:.1} % reserved");
    let without = Image::new("128M", &[]);
    let pct = reserved_pct(&without, &[]);
    assert!((4.0..=6.0).contains(&pct), "default: {pct:.1} % reserved");
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("x.img");
    let o = rollfs([
        OsStr::new("mkfs"),
        OsStr::new("--reserve"),
        OsStr::new("60"),
        OsStr::new("--size"),
        OsStr::new("64M"),
        p.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2), "--reserve 60 must be refused: {}", stderr(&o));
}

/// `rollfs tune -O prealloc` turns persistent reservations on for an image made without
/// them (format 2, or `-O noprealloc`): a reservation then survives a remount, fsck stays
/// clean. Turning features off or changing what blocks mean is a usage error; a mounted
/// image is refused (busy), and so is an unknown feature.
#[test]
fn tune_turns_on_persistent_reservations_of_an_existing_image() {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let img = Image::new("64M", &["-O", "noprealloc"]);
    let tune = |f: &str| rollfs([OsStr::new("tune"), OsStr::new("-O"), OsStr::new(f), img.path.as_os_str()]);
    for f in ["noprealloc", "nodatasum", "dirv2", "bogus"] {
        let o = tune(f);
        assert_eq!(o.status.code(), Some(2), "tune -O {f}: {}", stderr(&o));
    }
    let m = img.mount();
    assert_fails(&tune("prealloc"), 1, "already mounted");
    assert!(m.unmount().success());
    let o = tune("prealloc");
    assert!(o.status.success() && stdout(&o).contains("now kept on disk"), "{}{}", stdout(&o), stderr(&o));
    let o = tune("prealloc");
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}", stdout(&o));
    img.assert_fsck_clean();
    let m = img.mount();
    let f = std::fs::File::create(m.path("r")).unwrap();
    assert_eq!(unsafe { libc::fallocate(f.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, 4 << 20) }, 0);
    f.sync_all().unwrap();
    drop(f);
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let o = rollfs([OsStr::new("fsck"), OsStr::new("--json"), img.path.as_os_str()]);
    assert!(stdout(&o).contains("\"reserved_blocks\":1024"), "{}", stdout(&o));
    let m = img.mount();
    assert_eq!(std::fs::metadata(m.path("r")).unwrap().blocks(), 8192, "the reservation after the remount");
    assert!(m.unmount().success());
}

/// `rollfs tune -O cpsum` turns the open segments' summaries in the checkpoint on for an
/// image made without them (`-O nocpsum`): files written before and after stay, fsck is
/// clean after each mount; `-O nocpsum` cannot be tuned, and a mounted image is refused.
#[test]
fn tune_turns_on_open_segment_summaries_of_an_existing_image() {
    let img = Image::new("64M", &["-O", "nocpsum"]);
    let tune = |f: &str| rollfs([OsStr::new("tune"), OsStr::new("-O"), OsStr::new(f), img.path.as_os_str()]);
    assert_eq!(tune("nocpsum").status.code(), Some(2), "nocpsum cannot be tuned");
    let m = img.mount();
    std::fs::write(m.path("before"), vec![7u8; 300_000]).unwrap();
    assert_fails(&tune("cpsum"), 1, "already mounted");
    assert!(m.unmount().success());
    let o = tune("cpsum");
    assert!(o.status.success() && stdout(&o).contains("-O cpsum"), "{}{}", stdout(&o), stderr(&o));
    let o = tune("cpsum");
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}", stdout(&o));
    img.assert_fsck_clean();
    for round in 0..2 {
        let m = img.mount();
        std::fs::write(m.path(&format!("after{round}")), vec![round as u8; 200_000]).unwrap();
        assert!(m.unmount().success());
        img.assert_fsck_clean();
    }
    let m = img.mount();
    assert_eq!(std::fs::read(m.path("before")).unwrap(), vec![7u8; 300_000]);
    assert_eq!(std::fs::read(m.path("after1")).unwrap(), vec![1u8; 200_000]);
    assert!(m.unmount().success());
}

/// `rollfs tune -O nsrec` turns namespace records on for an image made without them: a
/// directory fsync after a create then writes a record node and no checkpoint (before the
/// tune the same fsyncs checkpointed), the image fscks clean and keeps every name, and the
/// tune is refused while the image is mounted.
#[test]
fn tune_turns_on_namespace_records_of_an_existing_image() {
    let img = Image::new("64M", &["-O", "nonsrec"]);
    let tune = || rollfs([OsStr::new("tune"), OsStr::new("-O"), OsStr::new("nsrec"), img.path.as_os_str()]);
    let core = |m: &Mount, k: &str| -> u64 {
        let v: serde_json::Value = serde_json::from_str(&mount_stats(&m.path("."))).unwrap();
        v["core"][k].as_u64().unwrap_or_else(|| panic!("no core.{k}: {v}"))
    };
    // Creates a file in `dir`, fsyncs it and then the directory; returns the checkpoints
    // and record nodes those two fsyncs wrote.
    let create_and_fsync = |m: &Mount, dir: &str| -> (u64, u64) {
        std::fs::create_dir(m.path(dir)).unwrap();
        std::fs::File::open(m.path(".")).unwrap().sync_all().unwrap();
        let (cp0, rn0) = (core(m, "checkpoints"), core(m, "ns_record_nodes_written"));
        let f = std::fs::File::create(m.path(&format!("{dir}/f"))).unwrap();
        f.sync_all().unwrap();
        std::fs::File::open(m.path(dir)).unwrap().sync_all().unwrap();
        (core(m, "checkpoints") - cp0, core(m, "ns_record_nodes_written") - rn0)
    };
    let m = img.mount();
    let (cps, records) = create_and_fsync(&m, "before");
    assert!(
        cps >= 1 && records == 0,
        "without records the fsyncs checkpoint: {cps} checkpoints, {records} record nodes"
    );
    assert_fails(&tune(), 1, "already mounted");
    assert!(m.unmount().success());
    let o = tune();
    assert!(o.status.success() && stdout(&o).contains("-O nsrec"), "{}{}", stdout(&o), stderr(&o));
    let o = tune();
    assert!(o.status.success() && stdout(&o).contains("nothing to do"), "{}", stdout(&o));
    img.assert_fsck_clean();
    let m = img.mount();
    let (cps, records) = create_and_fsync(&m, "after");
    assert_eq!(cps, 0, "with records the fsyncs write no checkpoint");
    assert!(records >= 1, "no record node written");
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let m = img.mount();
    assert!(m.path("before/f").exists() && m.path("after/f").exists());
    assert!(m.unmount().success());
}
