//! Crash through the whole native stack: a workload with fsyncs runs on a mount that
//! records every device write, wait and flush (`mount --record-writes`, group commit on);
//! the log's crash states are then replayed at every I/O under the shared crash model
//! (the states `rollfs crashtest` checks: points after any write, wait, flush or discard,
//! the writes not yet durable kept in seeded subsets, the newest torn at sectors,
//! discards zeroed or ignored). Every replayed image must mount (running recovery), fsck
//! clean, and show every file whose fsync had returned with that fsync's contents or a
//! later state of its own, under one of its names (a rename is atomic).

use rollfs_tests::*;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// The history of one file: every (name, contents) state it had, and the crash point the
/// log had reached when each fsync of it returned: a crash at or after that point must
/// show that state or a later one.
#[derive(Default)]
struct History {
    states: Vec<(String, Vec<u8>)>,
    synced: Vec<(usize, u64)>,
}

struct Workload<'a> {
    mnt: &'a Path,
    log: &'a Path,
    files: BTreeMap<&'static str, History>,
}

impl Workload<'_> {
    fn log_len(&self) -> u64 {
        log_point(self.log)
    }
    fn state(&mut self, id: &'static str, name: &str, content: Vec<u8>) {
        self.files.entry(id).or_default().states.push((name.to_string(), content));
    }
    fn write(&mut self, id: &'static str, name: &str, content: &[u8]) {
        fs::write(self.mnt.join(name), content).unwrap();
        self.state(id, name, content.to_vec());
    }
    fn append(&mut self, id: &'static str, name: &str, more: &[u8]) {
        let mut f = OpenOptions::new().append(true).open(self.mnt.join(name)).unwrap();
        f.write_all(more).unwrap();
        let mut c = self.files[id].states.last().unwrap().1.clone();
        c.extend_from_slice(more);
        self.state(id, name, c);
    }
    fn fsync(&mut self, id: &'static str) {
        let (name, _) = self.files[id].states.last().unwrap().clone();
        File::open(self.mnt.join(&name)).unwrap().sync_all().unwrap();
        let n = self.log_len();
        let h = self.files.get_mut(id).unwrap();
        let idx = h.states.len() - 1;
        h.synced.push((idx, n));
    }
    /// An atomic-write session (f2fs ioctls): staged writes, then commit or abort. Only a
    /// committed session is a state of the file; a torn mixture matches no state.
    fn atomic(&mut self, id: &'static str, content: &[u8], commit: bool) {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let (name, old) = self.files[id].states.last().unwrap().clone();
        let f = OpenOptions::new().read(true).write(true).open(self.mnt.join(&name)).unwrap();
        assert_eq!(unsafe { libc::ioctl(f.as_raw_fd(), 0xf501u32 as _) }, 0, "START_ATOMIC_WRITE");
        // Page-sized overwrites and growth, as SQLite writes its pages.
        f.write_all_at(content, 0).unwrap();
        let mut new = old;
        if new.len() < content.len() {
            new.resize(content.len(), 0);
        }
        new[..content.len()].copy_from_slice(content);
        let content = &new[..];
        if commit {
            assert_eq!(unsafe { libc::ioctl(f.as_raw_fd(), 0xf502u32 as _) }, 0, "COMMIT_ATOMIC_WRITE");
            self.state(id, &name, content.to_vec());
            let n = self.log_len();
            let h = self.files.get_mut(id).unwrap();
            let idx = h.states.len() - 1;
            h.synced.push((idx, n));
        } else {
            assert_eq!(unsafe { libc::ioctl(f.as_raw_fd(), 0xf505u32 as _) }, 0, "ABORT_VOLATILE_WRITE");
        }
    }

    fn rename(&mut self, id: &'static str, to: &str) {
        let (name, c) = self.files[id].states.last().unwrap().clone();
        fs::rename(self.mnt.join(&name), self.mnt.join(to)).unwrap();
        self.state(id, to, c);
    }
}

fn blob(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn run_workload(w: &mut Workload) {
    w.write("a", "a", &blob(10_000, 1));
    w.fsync("a");
    w.write("b", "b", &blob(100_000, 2));
    w.fsync("b");
    w.write("a", "a", &blob(20_000, 3));
    w.fsync("a");
    fs::create_dir(w.mnt.join("dir")).unwrap();
    w.write("c", "dir/c", &blob(5_000, 4));
    w.fsync("c");
    // The btrfs logged_trans lesson: rename, buffered write, fsync another file, then
    // fsync the renamed one.
    w.rename("b", "b2");
    w.append("b", "b2", &blob(3_000, 5));
    w.fsync("a");
    w.fsync("b");
    w.write("d", "d", &[]);
    for i in 0..8u8 {
        w.append("d", "d", &blob(4096, 10 + i));
        w.fsync("d");
    }
    // SQLite-style transactions through the atomic-write ioctls.
    w.write("db", "db", &blob(16_384, 20));
    w.fsync("db");
    w.atomic("db", &blob(20_480, 21), true);
    w.atomic("db", &blob(8_192, 22), false);
    w.atomic("db", &blob(24_576, 23), true);
    w.write("e", "e", &blob(7_777, 6)); // never fsynced: may or may not survive
    w.write("a", "a", &blob(1_000, 7));
    w.fsync("a");
}

fn check_image(img: &Path, cut: u64, files: &BTreeMap<&'static str, History>, what: &str) {
    let m = Mount::try_new(img, &[]).unwrap_or_else(|e| panic!("{what}: replayed image does not mount: {e}"));
    for (id, h) in files {
        let Some(&(k, _)) = h.synced.iter().rev().find(|(_, at)| *at <= cut) else { continue };
        let ok = h.states[k..].iter().any(|(name, c)| fs::read(m.path(name)).is_ok_and(|d| &d == c));
        if !ok {
            let found: Vec<String> = h.states[k..]
                .iter()
                .map(|(name, _)| format!("{name}: {:?}", fs::read(m.path(name)).map(|d| d.len())))
                .collect();
            panic!("{what}: file {id} lost its fsynced state #{k} (candidates {found:?})");
        }
    }
    let st = m.unmount();
    assert!(st.success(), "{what}: unmount after recovery failed: {st}");
    let o = rollfs([OsStr::new("fsck"), img.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "{what}: fsck after recovery: {}{}", stdout(&o), stderr(&o));
}

#[test]
fn replay_every_io_of_an_fsync_workload() {
    let img = Image::new("64M", &["--segment-size", "256K"]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(&img.path, &[OsStr::new("--record-writes"), log.as_os_str()]);
    let mut w = Workload { mnt: &m.mnt, log: &log, files: BTreeMap::new() };
    run_workload(&mut w);
    let files = std::mem::take(&mut w.files);
    assert!(m.unmount().success());
    img.assert_fsck_clean();

    let wl = rollfs::record::WriteLog::open(&log).unwrap();
    assert!(wl.flush_count() >= 10, "only {} flushes for 14 fsyncs", wl.flush_count());
    let out = img.dir.path().join("crash.img");
    let states = for_each_crash_state(&log, &out, 600, 7919, |point, what| check_image(&out, point, &files, what));
    eprintln!("crash-replay: {states} crash states checked over {} I/Os", wl.io().len());
    assert!(states >= 300, "only {states} distinct crash states");
}

/// `-o dirsync`: each directory change is durable when it returns (the kernel leaves
/// MS_DIRSYNC to the filesystem). A recorded mount makes names with no fsync at all; a
/// power cut at the end of the log that drops every write not yet flushed must keep each
/// of them, and fsck must find the image clean.
#[test]
fn dirsync_makes_every_directory_change_durable_on_return() {
    let img = Image::new("64M", &[]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(
        &img.path,
        &[OsStr::new("-o"), OsStr::new("dirsync"), OsStr::new("--record-writes"), log.as_os_str()],
    );
    fs::create_dir(m.path("d")).unwrap();
    File::create(m.path("d/created")).unwrap();
    File::create(m.path("d/to-rename")).unwrap();
    fs::rename(m.path("d/to-rename"), m.path("renamed")).unwrap();
    File::create(m.path("d/to-unlink")).unwrap();
    fs::remove_file(m.path("d/to-unlink")).unwrap();
    std::os::unix::fs::symlink("created", m.path("d/link")).unwrap();
    fs::hard_link(m.path("d/created"), m.path("hard")).unwrap();
    // Power loss now: the daemon dies; only what was flushed survives.
    assert_eq!(unsafe { libc::kill(m.pid().unwrap() as i32, libc::SIGKILL) }, 0);
    let _ = m.wait();
    let out = img.dir.path().join("crash.img");
    replay_power_cut(&log, &out, None, Some(3));
    let o = rollfs(["fsck".to_string(), out.display().to_string()]);
    assert!(o.status.success(), "fsck of the crash image: {}", stdout(&o));
    let m = Mount::new(&out, &[]);
    for p in ["d/created", "renamed", "d/link", "hard"] {
        assert!(fs::symlink_metadata(m.path(p)).is_ok(), "{p} lost although dirsync acknowledged it");
    }
    for p in ["d/to-rename", "d/to-unlink"] {
        assert!(fs::symlink_metadata(m.path(p)).is_err(), "{p} came back");
    }
    assert_eq!(fs::read_link(m.path("d/link")).unwrap(), Path::new("created"));
    let _ = m.unmount();
}
