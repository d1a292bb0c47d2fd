//! rollfs-tests: the harness for integration tests that drive the real `rollfs` binary
//! and real FUSE mounts.
//!
//! - [`rollfs_bin`] finds the binary next to the test executable (`cargo test
//!   --workspace` builds it first: `native/tests/` has an integration test) and runs
//!   `cargo build -p rollfs --bin rollfs` when it is missing or older than its sources
//!   (`cargo test -p rollfs-tests` alone would not rebuild another package's binary).
//! - [`require_fuse`] fails a test loudly when FUSE is unavailable: a FUSE test that
//!   silently passes without FUSE would hide a broken CI.
//! - [`Image`] is a fresh image in its own temp dir; [`Mount`] runs `rollfs mount -f` as a
//!   child and always unmounts (also on panic, from `Drop`), then reaps the child, so a
//!   test can run fsck right after the unmount without racing the final checkpoint.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The `rollfs` binary with the test-only mutants compiled in (`--features mutants`,
/// built in `target/mutants-core` beside the core's mutant build; cargo's lock serialises
/// test binaries that ask at once). `ROLLFS_MUTANT` chooses one per daemon.
pub fn rollfs_mutants_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = root.join("target/mutants-core");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args(["build", "--quiet", "--release", "-p", "rollfs", "--bin", "rollfs", "--features", "mutants"])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(root)
        .status()
        .expect("run cargo");
    assert!(st.success(), "building rollfs with --features mutants failed");
    target.join("release/rollfs")
}

/// Path of the `rollfs` binary under test.
pub fn rollfs_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("ROLLFS_BIN") {
            return PathBuf::from(p);
        }
        let exe = std::env::current_exe().expect("current_exe");
        // target/<profile>/deps/<test> -> target/<profile>/rollfs
        let profile_dir = exe.parent().and_then(Path::parent).expect("target dir").to_path_buf();
        let bin = profile_dir.join("rollfs");
        // `cargo test -p rollfs-tests` does not rebuild the binary of another package, so
        // rebuild it when a source is newer (cargo holds no lock while tests run). Not
        // unconditionally: a plain `cargo build -p rollfs` resolves features differently
        // from `cargo test --workspace` and would relink the binary for nothing.
        if !bin.exists() || binary_is_stale(&bin) {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-p", "rollfs", "--bin", "rollfs"]);
            if profile_dir.file_name() == Some(OsStr::new("release")) {
                cmd.arg("--release");
            }
            let st = cmd.status().expect("run cargo build for the rollfs binary");
            assert!(st.success(), "building the rollfs binary failed");
        }
        assert!(bin.exists(), "rollfs binary not found at {}", bin.display());
        bin
    })
    .clone()
}

fn newest_mtime(dir: &Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let t = if p.is_dir() { newest_mtime(&p) } else { e.metadata().ok().and_then(|m| m.modified().ok()) };
        newest = newest.max(t);
    }
    newest
}

fn binary_is_stale(bin: &Path) -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let Ok(built) = std::fs::metadata(bin).and_then(|m| m.modified()) else { return true };
    ["native/src", "native/Cargo.toml", "core/src", "core/Cargo.toml", "crash/src", "Cargo.lock"].iter().any(|p| {
        let p = root.join(p);
        let t = if p.is_dir() { newest_mtime(&p) } else { std::fs::metadata(&p).and_then(|m| m.modified()).ok() };
        t.is_some_and(|t| t > built)
    })
}

/// Runs `rollfs ARGS...` and returns its output.
pub fn rollfs<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(rollfs_bin()).args(args).stdin(Stdio::null()).output().expect("run rollfs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts an exit code and a fragment of stderr, printing both streams on mismatch.
#[track_caller]
pub fn assert_fails(o: &Output, code: i32, msg: &str) {
    assert!(
        o.status.code() == Some(code) && stderr(o).contains(msg),
        "expected exit {code} and stderr containing {msg:?}; got {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Fails the test (never skips it) when FUSE mounts cannot work here.
#[track_caller]
pub fn require_fuse() {
    assert!(
        Path::new("/dev/fuse").exists(),
        "FUSE is not available: /dev/fuse is missing. These tests need real FUSE mounts \
         (CI installs fuse3 in .ci/run; locally: `modprobe fuse` and install fuse3)."
    );
    if !is_root() {
        let have = ["fusermount3", "fusermount"]
            .iter()
            .any(|b| Command::new(b).arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok());
        assert!(have, "FUSE is not usable: not root and no fusermount3 on PATH (install fuse3)");
    }
}

/// A fresh image file in its own temp dir.
pub struct Image {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Image {
    /// `rollfs mkfs --size SIZE` plus extra mkfs arguments. Images up to 128 MiB are made
    /// as users get them (written out in full); larger ones sparse (`--sparse`), to keep the
    /// suite's disk writes and space small.
    #[track_caller]
    pub fn new(size: &str, extra: &[&str]) -> Image {
        let dir = tempfile::Builder::new().prefix("rollfs-test-").tempdir().expect("tempdir");
        let path = dir.path().join("fs.img");
        let mut args: Vec<&OsStr> = vec![OsStr::new("mkfs"), OsStr::new("--size"), OsStr::new(size), OsStr::new("-q")];
        let (digits, unit) = size.split_at(size.len() - 1);
        let shift = match unit {
            "K" => 10,
            "M" => 20,
            "G" => 30,
            _ => panic!("Image::new: size {size:?}: give K, M or G"),
        };
        if digits.parse::<u64>().expect("image size") << shift > 128 << 20 {
            args.push(OsStr::new("--sparse"));
        }
        args.extend(extra.iter().map(OsStr::new));
        args.push(path.as_os_str());
        let o = rollfs(&args);
        assert!(o.status.success(), "mkfs failed: {}{}", stdout(&o), stderr(&o));
        Image { dir, path }
    }

    /// An image file of `bytes` bytes that is not formatted.
    pub fn raw(bytes: u64) -> Image {
        let dir = tempfile::Builder::new().prefix("rollfs-test-").tempdir().expect("tempdir");
        let path = dir.path().join("raw.img");
        std::fs::File::create(&path).unwrap().set_len(bytes).unwrap();
        Image { dir, path }
    }

    pub fn mount(&self) -> Mount {
        Mount::new(&self.path, &[])
    }

    /// Runs fsck and returns (exit code, output).
    pub fn fsck(&self) -> (i32, Output) {
        let o = rollfs([OsStr::new("fsck"), self.path.as_os_str()]);
        (o.status.code().unwrap_or(-1), o)
    }

    #[track_caller]
    pub fn assert_fsck_clean(&self) {
        let (code, o) = self.fsck();
        assert_eq!(code, 0, "fsck not clean:\n{}{}", stdout(&o), stderr(&o));
    }
}

use rollfs::crashtest::{is_mounted, unmount as unmount_cmd};

/// Mount options every test mount gets from `ROLLFS_TEST_MOUNT_OPTIONS` (test.sh runs the
/// FUSE tests a second time with `uring`, the io_uring transport).
pub fn transport_options() -> Vec<String> {
    match std::env::var("ROLLFS_TEST_MOUNT_OPTIONS") {
        Ok(o) if !o.is_empty() => vec!["-o".into(), o],
        _ => Vec::new(),
    }
}

/// A running `rollfs mount -f` with its mount point. Unmounts on drop.
pub struct Mount {
    child: Option<Child>,
    pub mnt: PathBuf,
    pub image: PathBuf,
    log: PathBuf,
    _mnt_dir: tempfile::TempDir,
}

impl Mount {
    /// Mounts `image` with extra `rollfs mount` arguments (e.g. `-o ro`).
    #[track_caller]
    pub fn new(image: &Path, extra: &[&OsStr]) -> Mount {
        Self::try_new(image, extra).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn try_new(image: &Path, extra: &[&OsStr]) -> Result<Mount, String> {
        Self::try_new_with(&rollfs_bin(), &[], image, extra)
    }

    /// [`Mount::try_new`] with another `rollfs` binary (e.g. one with the test-only
    /// mutants) and extra environment variables for the daemon (e.g. `ROLLFS_MUTANT`).
    pub fn try_new_with(bin: &Path, envs: &[(&str, &str)], image: &Path, extra: &[&OsStr]) -> Result<Mount, String> {
        require_fuse();
        let mnt_dir = tempfile::Builder::new().prefix("rollfs-mnt-").tempdir().expect("tempdir");
        let mnt = mnt_dir.path().join("m");
        std::fs::create_dir(&mnt).unwrap();
        let log = mnt_dir.path().join("mount.log");
        let logf = std::fs::File::create(&log).unwrap();
        let child = Command::new(bin)
            .envs(envs.iter().copied())
            .arg("mount")
            .arg("-f")
            .args(transport_options())
            .args(extra)
            .arg(image)
            .arg(&mnt)
            .stdin(Stdio::null())
            .stdout(logf.try_clone().unwrap())
            .stderr(logf)
            .spawn()
            .expect("spawn rollfs mount");
        let mut m = Mount { child: Some(child), mnt, image: image.to_owned(), log, _mnt_dir: mnt_dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if is_mounted(&m.mnt) {
                return Ok(m);
            }
            if let Ok(Some(st)) = m.child.as_mut().unwrap().try_wait() {
                m.child = None;
                return Err(format!("rollfs mount exited with {st} before mounting:\n{}", m.log_text()));
            }
            if Instant::now() > deadline {
                return Err(format!("rollfs mount did not mount within 20 s:\n{}", m.log_text()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.mnt.join(rel)
    }

    pub fn log_text(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Unmounts and waits for the daemon; returns its exit status (0 = clean checkpoint).
    #[track_caller]
    pub fn unmount(mut self) -> ExitStatus {
        let st = self.unmount_inner(false);
        st.unwrap_or_else(|| {
            panic!(
                "could not unmount {} (busy: is a file still open?), or the daemon did not exit:\n{}",
                self.mnt.display(),
                self.log_text()
            )
        })
    }

    /// Waits for the daemon to exit on its own (e.g. after a signal).
    pub fn wait(mut self) -> ExitStatus {
        let mut c = self.child.take().expect("child");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(st)) = c.try_wait() {
                return st;
            }
            if Instant::now() > deadline {
                let _ = c.kill();
                panic!("rollfs mount did not exit within 60 s:\n{}", self.log_text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Unmounts (retrying while busy) and reaps the daemon. With `lazy_fallback` a mount
    /// that stays busy is detached (only from `Drop`, where the test is over); otherwise
    /// a busy mount is an error, since waiting for the daemon would hang on the open file.
    fn unmount_inner(&mut self, lazy_fallback: bool) -> Option<ExitStatus> {
        let mut ok = false;
        for _ in 0..30 {
            if !is_mounted(&self.mnt) || unmount_cmd(&self.mnt, false) {
                ok = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !ok && lazy_fallback {
            ok = unmount_cmd(&self.mnt, true);
        }
        if !ok {
            return None;
        }
        let mut c = self.child.take()?;
        let deadline = Instant::now() + Duration::from_secs(if lazy_fallback { 10 } else { 60 });
        loop {
            if let Ok(Some(st)) = c.try_wait() {
                return Some(st);
            }
            if Instant::now() > deadline {
                let _ = c.kill();
                let _ = c.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.unmount_inner(true);
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // A daemon that died (killed, then reaped by `wait`) leaves its mount point
        // mounted and dead ("Transport endpoint is not connected"): detach it.
        if is_mounted(&self.mnt) {
            let _ = unmount_cmd(&self.mnt, true);
        }
    }
}

/// Runs a closure as an unprivileged user (uid/gid 65534) in a child process when we are
/// root: used to provoke "permission denied".
pub fn command_as_nobody(bin: &Path) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(bin);
    if is_root() {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            c.pre_exec(|| {
                if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    c
}

/// FNV-1a (64 bits) of `data`: a content digest the tests and `rollfs-as` agree on.
pub fn digest(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Each 4 KiB block of `data`, run-length coded for failure reports: `first-last:B` for
/// blocks all of byte `B` (decimal), `:x` for blocks of mixed bytes; runs comma-separated.
pub fn block_runs(data: &[u8]) -> String {
    let what = |b: &[u8]| if b.iter().all(|&c| c == b[0]) { b[0].to_string() } else { "x".into() };
    let mut runs: Vec<(usize, usize, String)> = vec![];
    for (i, b) in data.chunks(4096).enumerate() {
        let w = what(b);
        match runs.last_mut() {
            Some((_, last, lw)) if *lw == w && *last + 1 == i => *last = i,
            _ => runs.push((i, i, w)),
        }
    }
    runs.iter().map(|(a, b, w)| format!("{a}-{b}:{w}")).collect::<Vec<_>>().join(",")
}

/// A `rollfs-as` process running as `uid:gid` (no supplementary groups), which runs one
/// command a line (see src/bin/rollfs-as.rs) with that user's credentials and without
/// root's capabilities (uid 0 keeps them).
pub struct User {
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    pub uid: u32,
}

impl User {
    #[track_caller]
    pub fn new(uid: u32) -> User {
        use std::os::unix::process::CommandExt;
        assert!(is_root(), "tests of other users run as root, to act as them");
        // Cargo builds the package's binaries before its integration tests, beside them:
        // target/<profile>/deps/<test> -> target/<profile>/rollfs-as.
        let exe = std::env::current_exe().expect("current_exe");
        let bin = exe.parent().and_then(Path::parent).expect("target dir").join("rollfs-as");
        let mut child = Command::new(bin)
            .uid(uid)
            .gid(uid)
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start rollfs-as");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut u = User { child, stdin, stdout, uid };
        assert_eq!(u.run("id"), format!("ok {uid} {uid}"), "the helper runs as the other user");
        u
    }

    /// Runs one command; returns `ok [VALUE]` or `err ERRNO`.
    #[track_caller]
    pub fn run(&mut self, cmd: &str) -> String {
        use std::io::{BufRead, Write};
        writeln!(self.stdin, "{cmd}").expect("send to rollfs-as");
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("answer from rollfs-as");
        assert!(!line.is_empty(), "rollfs-as (uid {}) died on {cmd:?}", self.uid);
        line.trim_end().to_string()
    }

    /// Runs a command that must succeed; returns its value.
    #[track_caller]
    pub fn ok(&mut self, cmd: &str) -> String {
        let r = self.run(cmd);
        assert!(r == "ok" || r.starts_with("ok "), "uid {}: {cmd:?} failed: {r}", self.uid);
        r.strip_prefix("ok").unwrap().trim_start().to_string()
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fusectl directory of the FUSE connection behind mount point `mnt`
/// (`/sys/fs/fuse/connections/DEV`), mounting fusectl there first if it is not (root only).
/// Call it while the mount answers: it stats `mnt`.
pub fn fuse_connection(mnt: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let base = Path::new("/sys/fs/fuse/connections");
    let mounted = std::fs::read_to_string("/proc/mounts").unwrap_or_default().lines().any(|l| l.contains(" fusectl "));
    if !mounted {
        let st = Command::new("mount").args(["-t", "fusectl", "fusectl"]).arg(base).status();
        assert!(st.is_ok_and(|s| s.success()), "cannot mount fusectl on {}", base.display());
    }
    let dev = std::fs::metadata(mnt).expect("stat the mount point").dev();
    // The kernel's dev_t: MKDEV(major, minor) = major << 20 | minor.
    let conn = base.join(((libc::major(dev) << 20) | libc::minor(dev)).to_string());
    assert!(conn.join("abort").exists(), "no fusectl entry {} for {}", conn.display(), mnt.display());
    conn
}

/// Aborts a FUSE connection (its fusectl directory from [`fuse_connection`]): every request
/// in flight fails with ENOTCONN, and so does every later one. The way out of a wedged mount.
pub fn abort_connection(conn: &Path) -> bool {
    std::fs::write(conn.join("abort"), b"1").is_ok()
}

/// `_IOR('R', 2, [u8; 16383])`: rollfs's stats ioctl (README, "Statistics").
pub const ROLLFS_IOC_GET_STATS: u32 = 0xBFFF_5202;
/// The first version, `_IOR('R', 1, [u8; 1024])`.
pub const ROLLFS_IOC_GET_STATS_1K: u32 = 0x8400_5201;

/// Reads the mounted filesystem's statistics (rollfs's own ioctl) as JSON text.
pub fn mount_stats(any_file_in_mount: &Path) -> String {
    stats_ioctl(any_file_in_mount, ROLLFS_IOC_GET_STATS, 16383).expect("stats ioctl failed")
}

/// Counter `key` of section `section` ("core" or "driver") of the stats' JSON text.
pub fn stat_counter(stats: &str, section: &str, key: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(stats).expect("stats are JSON");
    v[section][key].as_u64().unwrap_or_else(|| panic!("no {section}.{key} in the stats: {stats}"))
}

/// Issues a stats ioctl `cmd` with an out buffer of `len` bytes (the size `cmd` encodes).
pub fn stats_ioctl(any_file_in_mount: &Path, cmd: u32, len: usize) -> std::io::Result<String> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(any_file_in_mount).expect("open for stats");
    let mut buf = vec![0u8; len];
    // SAFETY: the ioctl writes at most `len` bytes (its encoded size) into buf.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), cmd as _, buf.as_mut_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// `rollfs replay LOG --out OUT [--at-flush N] [--drop-unflushed SEED]`: builds the image a
/// power cut after flush `N` (None: at the end of the log) leaves, dropping a seeded subset
/// of the writes not yet flushed when `drop_seed` is given. Panics if replay fails.
#[track_caller]
pub fn replay_power_cut(log: &Path, out: &Path, at_flush: Option<u64>, drop_seed: Option<u64>) {
    let mut a = vec!["replay".to_string(), log.display().to_string(), "--out".into(), out.display().to_string()];
    if let Some(n) = at_flush {
        a.extend(["--at-flush".into(), n.to_string()]);
    }
    if let Some(seed) = drop_seed {
        a.extend(["--drop-unflushed".into(), seed.to_string()]);
    }
    let o = rollfs(&a);
    assert!(o.status.success(), "replay: {}", stderr(&o));
}

/// The crash states `rollfs crashtest` would check of a recorded log (at most
/// `max_states`: the points right after a mark, flush or wait first, each with every
/// fixed variant and two random ones, torn writes on; an image already seen at the same
/// point skipped),
/// each written in turn to `out` for `check(point, description)`. Returns the number of
/// states checked.
pub fn for_each_crash_state(
    log: &Path,
    out: &Path,
    max_states: u64,
    seed: u64,
    mut check: impl FnMut(u64, &str),
) -> u64 {
    let wl = rollfs::record::WriteLog::open(log).expect("open the write log");
    let states = wl.crash_states().expect("read the write log");
    let mut cursor = states.cursor();
    let mut seen = std::collections::HashSet::new();
    let mut n = 0;
    for (point, variant) in rollfs::crashtest::choose_states(&wl, max_states, true, 2) {
        let st = cursor.state(point, variant, seed, true);
        // The checks depend on the point (what had been acknowledged by then), not only on
        // the image: an image seen before is checked again at a later point.
        if !seen.insert((st.key, point)) {
            continue;
        }
        let _ = std::fs::remove_file(out);
        rollfs::record::write_image(&st.image, out).expect("write the crash image");
        let what = format!(
            "crash point {point}/{} variant {variant} ({} of {} pending writes kept, {} torn; reproduce: rollfs replay LOG --at-io {point} --variant {variant} --seed {seed} --torn)",
            states.points() - 1,
            st.kept,
            st.pending,
            st.torn
        );
        check(point, &what);
        n += 1;
    }
    n
}

/// The crash point a write log has reached now (its I/O entries so far): a crash at this
/// point or later happened after everything the caller did before it.
pub fn log_point(log: &Path) -> u64 {
    rollfs::record::WriteLog::open(log).expect("open the write log").io().len() as u64
}

/// Makes the mount at `mnt` write a checkpoint: an fsync of its root directory after the
/// root's own attributes changed (a chmod to the mode it has: its ctime moves). Namespace
/// records carry names, not a directory's attributes, so that fsync checkpoints on every
/// format; a plain directory fsync on an image with records (mkfs's default) writes records
/// and the changed files' batches instead, and what it freed stays the checkpoint's.
pub fn checkpoint(mnt: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(mnt).unwrap().permissions().mode() & 0o7777;
    std::fs::set_permissions(mnt, std::fs::Permissions::from_mode(mode)).unwrap();
    std::fs::File::open(mnt).unwrap().sync_all().unwrap();
}
