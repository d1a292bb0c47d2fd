//! Why an fsync is served by a checkpoint (`since_cp::CheckpointReason`): each scenario
//! below is one reason, and the fsync must count exactly that reason (and one fallback),
//! while an fsync the chain can carry counts none. The scenarios are those of fsync.rs's
//! module header; the crash behaviour of each is tested in recovery.rs and hidden_history.rs.

use rollfs_core::*;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn fresh() -> Filesystem<MemDevice> {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [37; 16], ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap()
}

/// The reason counters, by name, with the total of fallbacks.
fn reasons(fs: &Filesystem<MemDevice>) -> Vec<(&'static str, u64)> {
    fs.stats()
        .counters()
        .into_iter()
        .filter(|(n, _)| n.starts_with("fsync_cp_") || *n == "fsync_checkpoint_fallbacks")
        .collect()
}

/// Runs `fsync` and asserts that it counted `reason` once (None: no checkpoint at all).
#[track_caller]
fn expect(fs: &mut Filesystem<MemDevice>, reason: Option<&str>, fsync: impl FnOnce(&mut Filesystem<MemDevice>)) {
    let before = reasons(fs);
    let checkpoints = fs.stats().checkpoints;
    fsync(fs);
    let after = reasons(fs);
    for ((name, b), (_, a)) in before.iter().zip(&after) {
        let want = match reason {
            Some(r) if *name == r || *name == "fsync_checkpoint_fallbacks" => 1,
            _ => 0,
        };
        assert_eq!(a - b, want, "{name} after the fsync (expected reason {reason:?})");
    }
    assert_eq!(fs.stats().checkpoints - checkpoints, reason.is_some() as u64, "checkpoints written");
}

#[test]
fn a_new_file_in_an_old_directory_is_carried_by_the_chain() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    fs.sync(t(2)).unwrap();
    let f = fs.create(d, b"f", 0o644, C, t(3)).unwrap().ino;
    fs.write(f, 0, b"data", t(3)).unwrap();
    expect(&mut fs, None, |fs| fs.fsync(f, false, t(4)).unwrap());
}

#[test]
fn a_directory_fsync_checkpoints() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    expect(&mut fs, Some("fsync_cp_directory"), |fs| fs.fsync(d, false, t(2)).unwrap());
}

#[test]
fn a_renamed_file_checkpoints() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(2)).unwrap();
    fs.rename(1, b"f", 1, b"g", RenameFlags::empty(), t(3)).unwrap();
    expect(&mut fs, Some("fsync_cp_relinked"), |fs| fs.fsync(f, false, t(4)).unwrap());
}

#[test]
fn a_punched_hole_checkpoints() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.write(f, 0, &[7u8; 16384], t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.punch_hole(f, 4096, 4096, t(3)).unwrap();
    expect(&mut fs, Some("fsync_cp_relinked"), |fs| fs.fsync(f, false, t(4)).unwrap());
}

#[test]
fn an_open_unlinked_file_checkpoints() {
    let mut fs = fresh();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.open(f).unwrap();
    fs.sync(t(2)).unwrap();
    fs.unlink(1, b"f", t(3)).unwrap();
    fs.write(f, 0, b"still open", t(3)).unwrap();
    expect(&mut fs, Some("fsync_cp_orphan"), |fs| fs.fsync(f, false, t(4)).unwrap());
}

#[test]
fn a_file_below_a_renamed_directory_checkpoints() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(d, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(2)).unwrap();
    fs.rename(1, b"d", 1, b"e", RenameFlags::empty(), t(3)).unwrap();
    fs.write(f, 0, b"moved", t(3)).unwrap();
    expect(&mut fs, Some("fsync_cp_path_changed"), |fs| fs.fsync(f, false, t(4)).unwrap());
}

#[test]
fn a_new_file_in_a_new_directory_checkpoints() {
    let mut fs = fresh();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    let f = fs.create(d, b"f", 0o644, C, t(1)).unwrap().ino;
    expect(&mut fs, Some("fsync_cp_name_not_restorable"), |fs| fs.fsync(f, false, t(2)).unwrap());
}

#[test]
fn a_new_file_under_a_removed_name_checkpoints() {
    let mut fs = fresh();
    fs.create(1, b"f", 0o644, C, t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.unlink(1, b"f", t(3)).unwrap();
    let g = fs.create(1, b"f", 0o644, C, t(3)).unwrap().ino;
    expect(&mut fs, Some("fsync_cp_name_not_restorable"), |fs| fs.fsync(g, false, t(4)).unwrap());
}

#[test]
fn an_atomic_commit_in_a_directory_that_lost_a_name_checkpoints() {
    let mut fs = fresh();
    let db = fs.create(1, b"db", 0o644, C, t(1)).unwrap().ino;
    fs.create(1, b"db-journal", 0o644, C, t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    fs.unlink(1, b"db-journal", t(3)).unwrap();
    fs.start_atomic_write(db).unwrap();
    fs.write(db, 0, b"page", t(3)).unwrap();
    expect(&mut fs, Some("fsync_cp_dir_lost_a_name"), |fs| fs.commit_atomic_write(db, t(4)).unwrap());
    // Without the removed name the commit is one batch.
    fs.start_atomic_write(db).unwrap();
    fs.write(db, 0, b"next", t(5)).unwrap();
    expect(&mut fs, None, |fs| fs.commit_atomic_write(db, t(6)).unwrap());
}

/// On an image that keeps reservations on disk, a file that reserved holes since the
/// checkpoint (fallocate) is fsync'd — or fdatasync'd — by a checkpoint (`Reserved`; the
/// scenarios are in reservations_on_disk.rs); once that checkpoint holds them, a write
/// into them is carried by the chain again.
#[test]
fn an_fsync_after_a_fallocate_checkpoints() {
    let opts = MkfsOptions { segment_blocks: 16, uuid: [37; 16], prealloc_on_disk: true, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(8192), &opts).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    let f = fs.create(1, b"f", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    fs.fallocate(f, 0, 16 * 4096, true, t(2)).unwrap();
    expect(&mut fs, Some("fsync_cp_reserved"), |fs| fs.fsync(f, true, t(3)).unwrap());
    fs.write(f, 0, &[7; 4096], t(4)).unwrap();
    expect(&mut fs, None, |fs| fs.fsync(f, false, t(5)).unwrap());
}
