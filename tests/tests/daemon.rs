//! The daemon stays available to every user: no request, from any user, may wedge it.
//! Every request these tests make is timed by a [`Watchdog`]; one that takes longer than
//! [`limit`] (5 s) is a wedge: the watchdog records it with the kernel stacks of the
//! daemon's threads, aborts the FUSE connection through fusectl (so the test fails
//! instead of hanging), and the test fails.
//!
//! - `atomic_aborts_against_readers_do_not_wedge_the_daemon`: issue 35's reproducer. An
//!   unprivileged user runs 12 pairs of processes on its own 1 MiB files: one loops
//!   START, a 4 KiB pwrite and ABORT of an atomic write; the other loops
//!   posix_fadvise(DONTNEED) and a 1 MiB pread of the same file. With the page
//!   invalidation of an abort sent from the request thread, every request thread ended up
//!   in `fuse_reverse_inval_inode` waiting for page locks held by READs that only a free
//!   request thread could answer. Root's requests are timed meanwhile too.
//! - `the_reproducer_catches_notifications_on_request_threads`: the same against the
//!   driver mutant `mutant-notify-on-request-thread` (the old behaviour): the watchdog
//!   must find the wedge.
//! - `every_request_type_of_several_users_under_a_watchdog` (further down): the stress
//!   test of the whole request mix.
//!
//! `ROLLFS_DAEMON_SECS` sets the reproducer's run time (default 20 s) and
//! `ROLLFS_DAEMON_STRESS_SECS` the stress test's (default 45 s); `ROLLFS_WATCHDOG_SECS`
//! the limit (default 5 s).

use rollfs_tests::*;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const A: u32 = 1000;

/// The tests of this file run one at a time: each is a load of its own, and timing
/// requests against a 5 s limit while another load runs would measure that load.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn env_secs(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// A request slower than this is a wedge.
fn limit() -> Duration {
    Duration::from_secs(env_secs("ROLLFS_WATCHDOG_SECS", 5))
}

/// xorshift64*: deterministic per thread, no dependency.
struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
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

/// Times every request of the test's workers; see the module comment.
struct Watchdog {
    shared: Arc<WatchShared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct WatchShared {
    /// Worker → the request it is in and when that began.
    running: Mutex<HashMap<usize, (Instant, String)>>,
    /// The first wedge found: what hung, for how long, the daemon's kernel stacks.
    wedged: Mutex<Option<String>>,
    wedged_flag: AtomicBool,
    stop: AtomicBool,
    /// The slowest request that finished, in microseconds, and how many finished.
    slowest_us: AtomicU64,
    requests: AtomicU64,
    conn: PathBuf,
    daemon: u32,
}

impl Watchdog {
    /// Watches the mount whose fusectl directory is `conn`, served by process `daemon`.
    fn new(conn: PathBuf, daemon: u32) -> Watchdog {
        let shared = Arc::new(WatchShared {
            running: Mutex::new(HashMap::new()),
            wedged: Mutex::new(None),
            wedged_flag: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            slowest_us: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            conn,
            daemon,
        });
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            while !s.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let late = {
                    let running = s.running.lock().unwrap();
                    running
                        .iter()
                        .find(|(_, (t, _))| t.elapsed() > limit())
                        .map(|(w, (t, what))| format!("worker {w}: {what:?} has not returned after {:?}", t.elapsed()))
                };
                if let (Some(late), false) = (late, s.wedged_flag.load(Ordering::Relaxed)) {
                    let report = format!("{late}\n{}", kernel_stacks(s.daemon));
                    *s.wedged.lock().unwrap() = Some(report);
                    s.wedged_flag.store(true, Ordering::Relaxed);
                    assert!(abort_connection(&s.conn), "cannot abort the wedged connection {}", s.conn.display());
                }
            }
        });
        Watchdog { shared, thread: Some(thread) }
    }

    /// Runs request `what` of `worker` under the watch.
    fn time<T>(&self, worker: usize, what: &str, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        self.shared.running.lock().unwrap().insert(worker, (t0, what.to_string()));
        let r = f();
        self.shared.running.lock().unwrap().remove(&worker);
        self.shared.slowest_us.fetch_max(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
        self.shared.requests.fetch_add(1, Ordering::Relaxed);
        r
    }

    fn wedged(&self) -> bool {
        self.shared.wedged_flag.load(Ordering::Relaxed)
    }

    /// Stops watching: the wedge report if there was one, else the slowest request and
    /// the number of requests.
    fn finish(mut self) -> Result<(Duration, u64), String> {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().expect("the watchdog thread");
        }
        match self.shared.wedged.lock().unwrap().take() {
            Some(report) => Err(report),
            None => Ok((
                Duration::from_micros(self.shared.slowest_us.load(Ordering::Relaxed)),
                self.shared.requests.load(Ordering::Relaxed),
            )),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

/// Each thread of process `pid`: its name, state and kernel stack (root reads them).
fn kernel_stacks(pid: u32) -> String {
    let mut out = format!("kernel stacks of the daemon (pid {pid}):\n");
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return out + "  (gone)\n" };
    for t in tasks.flatten() {
        let p = t.path();
        let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        let stat = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()).unwrap_or("?").to_string();
        let stack = std::fs::read_to_string(p.join("stack")).unwrap_or_default();
        let frames: Vec<&str> = stack.lines().filter_map(|l| l.split_whitespace().nth(1)).take(8).collect();
        out += &format!("  {} {} [{}]: {}\n", t.file_name().to_string_lossy(), comm.trim(), state, frames.join(" <- "));
    }
    out
}

/// A user's helper process whose every request the watchdog times.
struct Worker<'a> {
    user: User,
    id: usize,
    wd: &'a Watchdog,
}

impl Worker<'_> {
    fn run(&mut self, cmd: &str) -> String {
        let (user, wd, id) = (&mut self.user, self.wd, self.id);
        wd.time(id, cmd, || user.run(cmd))
    }

    /// A command that must succeed (unless the watchdog aborted the connection: then
    /// its answer does not matter, and the caller stops at its next check).
    #[track_caller]
    fn ok(&mut self, cmd: &str) -> String {
        let r = self.run(cmd);
        if self.wd.wedged() {
            return String::new();
        }
        assert!(r == "ok" || r.starts_with("ok "), "uid {}: {cmd:?} failed: {r}", self.user.uid);
        r.strip_prefix("ok").unwrap().trim_start().to_string()
    }
}

/// A mount shared with every user (`-o allow_other`) with a world-writable sticky `pub`.
fn shared_mount(bin: &Path, envs: &[(&str, &str)], img: &Image) -> Mount {
    let m = Mount::try_new_with(bin, envs, &img.path, &[OsStr::new("-o"), OsStr::new("allow_other")])
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(m.mnt.parent().unwrap(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let d = m.path("pub");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    m
}

const PAIRS: usize = 12;
const FILE: usize = 1 << 20;

/// Issue 35's scenario on `bin` (with `envs` for the daemon) for `secs`: `Ok` with what
/// ran when nothing wedged, `Err(report)` when the watchdog found a request over the limit.
fn aborts_against_readers(bin: &Path, envs: &[(&str, &str)], secs: u64) -> Result<String, String> {
    let img = Image::new("128M", &[]);
    let m = shared_mount(bin, envs, &img);
    let wd = Watchdog::new(fuse_connection(&m.mnt), m.pid().expect("daemon pid"));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (cycles, reads, root_ops) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let root_file = m.path("pub/root-file");
    std::fs::write(&root_file, b"root's own file").unwrap();
    std::thread::scope(|s| {
        for i in 0..PAIRS {
            let (wd, cycles, reads) = (&wd, &cycles, &reads);
            let f = m.path(&format!("pub/f{i}")).display().to_string();
            let (tx, rx) = std::sync::mpsc::channel();
            let g = f.clone();
            s.spawn(move || {
                let mut w = Worker { user: User::new(A), id: 2 * i, wd };
                w.ok(&format!("open f {f} rwc"));
                w.ok(&format!("fill f 0 {FILE} {i}"));
                w.ok("fsync f");
                tx.send(()).unwrap();
                let mut rng = Rng::new(i as u64);
                let old = format!("4096 {:016x}", digest(&[i as u8; 4096]));
                while Instant::now() < deadline && !wd.wedged() {
                    let off = rng.below((FILE / 4096) as u64) * 4096;
                    w.ok(&format!("atomic-cycle f {off} 4096 {}", 100 + i));
                    // Once ABORT has returned, no read shows the aborted page, not even
                    // through the page cache the write went through.
                    let now = w.ok(&format!("sum f {off} 4096"));
                    assert!(wd.wedged() || now == old, "page {off} of f{i} after ABORT: {now}, not the old {old}");
                    cycles.fetch_add(1, Ordering::Relaxed);
                }
            });
            s.spawn(move || {
                let mut r = Worker { user: User::new(A), id: 2 * i + 1, wd };
                let _ = rx.recv();
                r.ok(&format!("open f {g} r"));
                while Instant::now() < deadline && !wd.wedged() {
                    r.ok("dontneed f");
                    r.ok(&format!("sum f 0 {FILE}"));
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        // Root, a bystander: its requests must be served all along.
        let (wd, root_ops, root_file) = (&wd, &root_ops, &root_file);
        s.spawn(move || {
            while Instant::now() < deadline && !wd.wedged() {
                let r = wd.time(usize::MAX, "root: read pub/root-file", || std::fs::read(root_file));
                if !wd.wedged() {
                    assert_eq!(r.unwrap(), b"root's own file");
                }
                root_ops.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
    });
    let (slowest, requests) = wd.finish()?;
    let stats: serde_json::Value = serde_json::from_str(&mount_stats(&root_file)).unwrap();
    let invalidations = stats["driver"]["invalidations"].as_u64().expect("invalidations in the stats");
    let st = m.unmount();
    assert!(st.success(), "unclean unmount: {st}");
    img.assert_fsck_clean();
    let (c, r, o) = (cycles.into_inner(), reads.into_inner(), root_ops.into_inner());
    assert!(c > 0 && r > 0 && o > 0, "the scenario did not run: {c} atomic cycles, {r} reads, {o} root reads");
    assert!(invalidations > 0, "no page invalidation was sent");
    Ok(format!(
        "{c} atomic start/write/abort cycles, {r} DONTNEED + 1 MiB reads, {o} root reads; {requests} requests, the slowest {slowest:?}; {invalidations} page invalidations sent"
    ))
}

#[test]
fn atomic_aborts_against_readers_do_not_wedge_the_daemon() {
    let _serial = serial();
    let secs = env_secs("ROLLFS_DAEMON_SECS", 20);
    match aborts_against_readers(&rollfs_bin(), &[], secs) {
        Ok(summary) => eprintln!("{secs} s: {summary}"),
        Err(report) => panic!("the daemon wedged:\n{report}"),
    }
}

/// The rollfs binary with the test-only mutants compiled in (the build crashtest.rs makes
/// too, in the same directory).
fn mutants_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = root.join("target/mutants-core");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = std::process::Command::new(cargo)
        .args(["build", "--quiet", "--release", "-p", "rollfs", "--bin", "rollfs", "--features", "mutants"])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(root)
        .status()
        .expect("run cargo");
    assert!(st.success(), "building rollfs with --features mutants failed");
    target.join("release/rollfs")
}

/// Each liveness mutant (`mutant-notify-on-request-thread`: the page invalidation of an
/// abort sent from the request thread) wedges the daemon under the reproducer, and the
/// watchdog says so; the same build without a mutant chosen does not wedge.
#[test]
fn the_reproducer_catches_notifications_on_request_threads() {
    let bin = mutants_bin();
    let _serial = serial();
    let secs = env_secs("ROLLFS_DAEMON_SECS", 20);
    for mutant in rollfs::mutant::LIVENESS_NAMES {
        let report = aborts_against_readers(&bin, &[("ROLLFS_MUTANT", mutant)], secs)
            .expect_err("the mutant did not wedge the daemon");
        eprintln!("{mutant} caught:\n{report}");
        assert!(report.contains("has not returned after"), "{report}");
    }
    let summary = aborts_against_readers(&bin, &[], 5).unwrap_or_else(|r| panic!("no mutant chosen, yet:\n{r}"));
    eprintln!("the mutants build without a mutant: {summary}");
}
