//! Concurrency stress through FUSE: several threads create, write, append, truncate,
//! rename, fsync and delete files in four shared directories (and make and remove
//! directories of their own inside them) at the same time.
//!
//! - `concurrent_workload_then_clean_unmount`: after the run, every file each thread
//!   kept is at its last name with its last contents and nothing else is in the shared
//!   directories; then unmount, fsck clean, and the same check after a remount.
//! - `concurrent_workload_then_power_loss`: the same on a mount that records its device
//!   writes (`--record-writes`), killed with SIGKILL mid-run; the log is replayed to the
//!   last flush with the unflushed writes dropped. Every fsync that returned before the
//!   kill must show its contents, or a later state of the file's contents, under one of
//!   its names since (not necessarily the name it had in that state: with namespace
//!   records a rename to a fresh name made durable by another fsync's records does not
//!   carry the file's unfsync'd data, so a newer name may show the fsync'd contents, as on
//!   ext4: DESIGN.md, *Riders*; invariants 2 and 4 of the brief); the image must fsck
//!   clean after recovery. A later state includes a write(2)
//!   cut at a page boundary: the kernel sends an unaligned write as several requests
//!   (see `FileModel::write`), so only fsync makes a write whole.
//!
//! `ROLLFS_STRESS_SECS` sets the run time of the first test (default 40; the second runs
//! a third of it); CI uses the default, a soak can set minutes or hours.

use rollfs::record::WriteLog;
use rollfs_tests::*;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const THREADS: usize = 8;
const DIRS: [&str; 4] = ["d0", "d1", "d2", "d3"];
/// Files a thread keeps at most (bounds the image use and the model).
const FILES_PER_THREAD_MAX: usize = 12;
const FILE_LEN_MAX: usize = 64 * 1024;

fn run_secs() -> u64 {
    std::env::var("ROLLFS_STRESS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(40)
}

/// xorshift64*: deterministic per thread, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One file of a thread: its current name and contents, and every (name, contents) state
/// since its last acknowledged fsync (empty if never fsynced).
#[derive(Clone, Default)]
struct FileModel {
    path: String,
    content: Vec<u8>,
    since_fsync: Vec<(String, Vec<u8>)>,
}

impl FileModel {
    /// A write of `data` at `off`. The kernel's FUSE client may split one write(2) into
    /// several requests at page boundaries (a request ends after a page it could not fill
    /// when the page was not cached), and a checkpoint may come between two of them: each
    /// prefix of the pieces is a state of the file a crash can show.
    fn write(&mut self, off: usize, data: &[u8]) {
        let end = off + data.len();
        let mut at = off;
        while at < end {
            let piece_end = ((at / 4096 + 1) * 4096).min(end);
            if self.content.len() < piece_end {
                self.content.resize(piece_end, 0);
            }
            self.content[at..piece_end].copy_from_slice(&data[at - off..piece_end - off]);
            at = piece_end;
            self.changed();
        }
    }

    fn changed(&mut self) {
        if !self.since_fsync.is_empty() {
            self.since_fsync.push((self.path.clone(), self.content.clone()));
        }
    }
}

/// What one thread leaves behind.
#[derive(Default)]
struct ThreadModel {
    files: BTreeMap<u64, FileModel>,
    dirs: BTreeSet<String>,
    ops: u64,
    fsyncs: u64,
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    (0..len).map(|i| (seed as usize).wrapping_mul(131).wrapping_add(i / 7) as u8).collect()
}

/// One thread's workload until `stop`. Every operation must succeed: the namespace a
/// thread touches is its own (names carry the thread id), only the directories are shared.
fn worker(mnt: &Path, t: usize, stop: &AtomicBool) -> ThreadModel {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((t as u64 + 1) * 0x1000_0001));
    let mut m = ThreadModel::default();
    let mut next_id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        m.ops += 1;
        let ids: Vec<u64> = m.files.keys().copied().collect();
        let pick = |rng: &mut Rng| ids[rng.below(ids.len() as u64) as usize];
        match rng.below(100) {
            // Create a file (in a shared directory or one of the thread's own).
            0..=14 if ids.len() < FILES_PER_THREAD_MAX => {
                next_id += 1;
                let parent = if !m.dirs.is_empty() && rng.below(3) == 0 {
                    m.dirs.iter().nth(rng.below(m.dirs.len() as u64) as usize).unwrap().clone()
                } else {
                    DIRS[rng.below(4) as usize].to_string()
                };
                let path = format!("{parent}/t{t}-f{next_id}");
                let content = bytes(rng.below(FILE_LEN_MAX as u64) as usize, rng.next());
                fs::write(mnt.join(&path), &content).unwrap();
                m.files.insert(next_id, FileModel { path, content, since_fsync: Vec::new() });
            }
            15..=34 if !ids.is_empty() => {
                let f = m.files.get_mut(&pick(&mut rng)).unwrap();
                let off = rng.below(FILE_LEN_MAX as u64) as usize;
                let data = bytes(1 + rng.below(8192) as usize, rng.next());
                let h = OpenOptions::new().write(true).open(mnt.join(&f.path)).unwrap();
                h.write_all_at(&data, off as u64).unwrap();
                f.write(off, &data);
            }
            35..=44 if !ids.is_empty() => {
                let f = m.files.get_mut(&pick(&mut rng)).unwrap();
                let data = bytes(1 + rng.below(4096) as usize, rng.next());
                OpenOptions::new().append(true).open(mnt.join(&f.path)).unwrap().write_all(&data).unwrap();
                let len = f.content.len();
                f.write(len, &data);
            }
            45..=49 if !ids.is_empty() => {
                let f = m.files.get_mut(&pick(&mut rng)).unwrap();
                let len = rng.below(FILE_LEN_MAX as u64) as usize;
                OpenOptions::new().write(true).open(mnt.join(&f.path)).unwrap().set_len(len as u64).unwrap();
                f.content.resize(len, 0);
                f.changed();
            }
            50..=59 if !ids.is_empty() => {
                let id = pick(&mut rng);
                let f = m.files.get_mut(&id).unwrap();
                let to = format!("{}/t{t}-f{id}-r{}", DIRS[rng.below(4) as usize], m.ops);
                fs::rename(mnt.join(&f.path), mnt.join(&to)).unwrap();
                f.path = to;
                f.changed();
            }
            60..=79 if !ids.is_empty() => {
                let f = m.files.get_mut(&pick(&mut rng)).unwrap();
                let h = File::open(mnt.join(&f.path)).unwrap();
                if rng.below(3) == 0 {
                    h.sync_data().unwrap();
                } else {
                    h.sync_all().unwrap();
                }
                m.fsyncs += 1;
                f.since_fsync = vec![(f.path.clone(), f.content.clone())];
            }
            80..=87 if !ids.is_empty() => {
                let id = pick(&mut rng);
                // Unlinked files leave the model: after a crash they may be there or not.
                let f = m.files.remove(&id).unwrap();
                fs::remove_file(mnt.join(&f.path)).unwrap();
            }
            88..=93 if m.dirs.len() < 2 => {
                let d = format!("{}/t{t}-d{}", DIRS[rng.below(4) as usize], m.ops);
                fs::create_dir(mnt.join(&d)).unwrap();
                m.dirs.insert(d);
            }
            94..=99 if !m.dirs.is_empty() => {
                // Remove one of the thread's directories once it holds none of its files.
                let d = m.dirs.iter().next().unwrap().clone();
                if m.files.values().all(|f| !f.path.starts_with(&format!("{d}/"))) {
                    fs::remove_dir(mnt.join(&d)).unwrap();
                    m.dirs.remove(&d);
                }
            }
            _ => {}
        }
    }
    m
}

fn run_threads(mnt: &Path, secs: f64, kill: Option<&dyn Fn()>) -> Vec<ThreadModel> {
    for d in DIRS {
        fs::create_dir(mnt.join(d)).unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (mnt, stop) = (mnt.to_owned(), stop.clone());
            std::thread::spawn(move || worker(&mnt, t, &stop))
        })
        .collect();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let models: Vec<ThreadModel> = handles.into_iter().map(|h| h.join().expect("worker thread")).collect();
    if let Some(k) = kill {
        k();
    }
    let (ops, fsyncs): (u64, u64) =
        models.iter().map(|m| (m.ops, m.fsyncs)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    eprintln!("stress: {THREADS} threads, {secs:.0} s, {ops} operations, {fsyncs} fsyncs");
    assert!(fsyncs > 0 && ops > 100, "the workload barely ran: {ops} operations");
    models
}

/// Every thread's files at their last names with their last contents, and nothing else
/// in the shared directories.
fn check_final(mnt: &Path, models: &[ThreadModel]) {
    let mut expected = BTreeSet::new();
    for m in models {
        for f in m.files.values() {
            let got = fs::read(mnt.join(&f.path)).unwrap_or_else(|e| panic!("{}: {e}", f.path));
            assert!(got == f.content, "{}: {} bytes, expected {}", f.path, got.len(), f.content.len());
            expected.insert(f.path.clone());
        }
        expected.extend(m.dirs.iter().cloned());
    }
    let mut found = BTreeSet::new();
    let mut stack: Vec<String> = DIRS.iter().map(|d| d.to_string()).collect();
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(mnt.join(&d)).unwrap() {
            let e = e.unwrap();
            let p = format!("{d}/{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
            }
            found.insert(p);
        }
    }
    assert_eq!(found, expected, "directory contents after the run");
}

#[test]
fn concurrent_workload_then_clean_unmount() {
    let img = Image::new("512M", &[]);
    let m = img.mount();
    let models = run_threads(&m.mnt, run_secs() as f64, None);
    check_final(&m.mnt, &models);
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let m = img.mount();
    check_final(&m.mnt, &models);
    assert!(m.unmount().success());
}

#[test]
fn concurrent_workload_then_power_loss() {
    let img = Image::new("512M", &[]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(&img.path, &[OsStr::new("--record-writes"), log.as_os_str()]);
    let pid = m.pid().unwrap() as i32;
    // SIGKILL after the workers stopped: everything they saw acknowledged is in the log
    // up to its last flush; what followed is lost as in a power cut.
    let kill = || assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let models = run_threads(&m.mnt, (run_secs() as f64 / 3.0).max(5.0), Some(&kill));
    let _ = m.wait();

    let flushes = WriteLog::open(&log).unwrap().flush_count();
    let out = img.dir.path().join("crash.img");
    // No --at-flush: the cut is the end of the log, where FUA writes that completed after
    // the last flush (a checkpoint's header) are durable too.
    replay_power_cut(&log, &out, None, Some(7));
    let m = Mount::try_new(&out, &[]).unwrap_or_else(|e| panic!("the crash image does not mount: {e}"));
    let mut checked = 0;
    for (t, tm) in models.iter().enumerate() {
        for (id, f) in &tm.files {
            if f.since_fsync.is_empty() {
                continue;
            }
            // Contents of some state since the fsync, under some name of a state since it.
            let ok = f
                .since_fsync
                .iter()
                .any(|(p, _)| fs::read(m.path(p)).is_ok_and(|d| f.since_fsync.iter().any(|(_, c)| &d == c)));
            assert!(
                ok,
                "thread {t} file {id}: its last fsynced state is lost after the power cut (states since: {:?})",
                f.since_fsync
                    .iter()
                    .map(|(p, c)| format!(
                        "{p}: expected {} bytes, found {:?}",
                        c.len(),
                        fs::read(m.path(p)).map(|d| (d.len(), d.iter().zip(c).position(|(a, b)| a != b)))
                    ))
                    .collect::<Vec<_>>()
            );
            checked += 1;
        }
    }
    eprintln!("power loss after {flushes} flushes: {checked} fsynced files verified");
    assert!(checked > 0, "no fsynced file to verify");
    assert!(m.unmount().success());
    let o = rollfs([OsStr::new("fsck"), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(0), "fsck after recovery: {}{}", stdout(&o), stderr(&o));
}
