//! `compare`: rollfs side by side with ext4 on this machine.
//!
//! ```sh
//! cargo run --release -p rollfs-benches --bin compare [-- --quick]
//! ```
//!
//! Setups, all on the disk of the work directory (default `<workspace>/target/compare-work`),
//! with image files of the same size written out in full (not fallocated):
//! - rollfs: `rollfs mkfs` + `rollfs mount -f` (FUSE) on an image file;
//! - ext4: `mkfs.ext4` on a loop device over an image file;
//! - bindfs: a FUSE passthrough of a plain directory (what FUSE alone costs);
//! - raw: a 4 KiB pwrite + fdatasync loop on a file (the physical limit of one write and
//!   one flush).
//!
//! Runs are interleaved (rollfs, ext4, bindfs, rollfs, ext4, bindfs, ...) and medians are
//! reported. Writes `benches/results/latest.md` and `benches/results/latest.svg`; the last
//! line printed is the `ratios:` line.
//!
//! Every mount and loop device made here is undone by a guard's `Drop`, on errors, panics
//! and SIGINT/SIGTERM too (the signal only sets a flag; the run stops at the next step).

use rollfs::device::{DeviceOptions, FileDevice};
use rollfs_benches::chart::ratio_chart;
use rollfs_benches::corework::{self, FsyncScenario, Rng};
use rollfs_benches::fio;
use rollfs_benches::fsops;
use rollfs_benches::host::*;
use rollfs_benches::stats::{disk_verdict, fmt_num, fmt_ratio, median, ratio, ratios_line};
use rollfs_core::{Filesystem, MountOptions};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn check_interrupt() -> Res<()> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        Err("interrupted".into())
    } else {
        Ok(())
    }
}

// ---- configuration ------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Config {
    quick: bool,
    work: PathBuf,
    results: PathBuf,
    image_size: u64,
    rounds: usize,
    /// Seconds of each timed fsync-loop / SQLite phase.
    phase_secs: f64,
    fio_secs: u64,
    dbench_secs: u64,
    dbench_clients: u32,
    /// Bytes of the sequential write and cold read (dd's 1 GiB).
    seq_bytes: u64,
    recovery_sizes: Vec<u64>,
    recovery_fsyncs: Vec<u64>,
    recovery_rounds: usize,
    /// An older rollfs binary run beside the current one (`--baseline`).
    baseline: Option<PathBuf>,
    /// Mount options of the baseline's mount (`--baseline-options`, e.g. `uring`).
    baseline_options: Option<String>,
    /// mkfs features of the baseline's image (`--baseline-features`, e.g. `nonsrec`: the same
    /// binary with and without namespace records, side by side).
    baseline_features: Option<String>,
}

impl Config {
    fn new(quick: bool, work: PathBuf, results: PathBuf) -> Config {
        Config {
            quick,
            work,
            results,
            // Room for the 1 GiB sequential file beside the other workloads' files.
            image_size: 2 << 30,
            rounds: if quick { 2 } else { 3 },
            phase_secs: if quick { 0.5 } else { 2.0 },
            fio_secs: if quick { 1 } else { 4 },
            dbench_secs: if quick { 2 } else { 10 },
            dbench_clients: 4,
            seq_bytes: 1 << 30,
            recovery_sizes: vec![1 << 30, 8 << 30],
            recovery_fsyncs: vec![0, 1_000, 10_000],
            recovery_rounds: if quick { 1 } else { 3 },
            baseline: None,
            baseline_options: None,
            baseline_features: None,
        }
    }
}

// ---- running commands -----------------------------------------------------------------

/// Installs the Debian packages that provide missing tools (root only).
fn ensure_tools(notes: &mut Vec<String>) {
    let wanted = [
        ("fio", "fio"),
        ("dbench", "dbench"),
        ("bindfs", "bindfs"),
        ("mkfs.ext4", "e2fsprogs"),
        ("fusermount3", "fuse3"),
    ];
    let missing: Vec<&str> = wanted.iter().filter(|(c, _)| !have(c)).map(|(_, p)| *p).collect();
    if missing.is_empty() {
        return;
    }
    if !is_root() {
        notes.push(format!("not root: cannot install {}; the parts that need them are skipped", missing.join(", ")));
        return;
    }
    eprintln!("compare: installing {}", missing.join(" "));
    let env = [("DEBIAN_FRONTEND", "noninteractive")];
    let ok = Command::new("apt-get")
        .args(["update", "-q"])
        .envs(env)
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
        && Command::new("apt-get")
            .args(["install", "-y", "-q"])
            .args(&missing)
            .envs(env)
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
    if !ok {
        notes.push(format!("apt-get install {} failed; the parts that need them are skipped", missing.join(" ")));
    }
}

// ---- setups (guards) ------------------------------------------------------------------

/// A mounted filesystem under test. Dropping it unmounts it (and frees what it holds).
trait Setup {
    fn name(&self) -> &'static str;
    fn dir(&self) -> &Path;
    /// The daemon serving the setup, where there is one (its memory is measured).
    fn pid(&self) -> Option<u32> {
        None
    }
}

struct Ext4 {
    image: PathBuf,
    mnt: PathBuf,
    loopdev: Option<String>,
    mounted: bool,
}

impl Ext4 {
    fn create(image: PathBuf, mnt: PathBuf, size: u64, write: bool, opts: &str) -> Res<Ext4> {
        if write {
            write_out(&image, size)?;
        } else {
            let f = File::create(&image).map_err(|e| e.to_string())?;
            f.set_len(size).map_err(|e| e.to_string())?;
        }
        run("mkfs.ext4", &["-q", "-F", image.to_str().unwrap()])?;
        Ext4::attach(image, mnt, opts)
    }

    fn attach(image: PathBuf, mnt: PathBuf, opts: &str) -> Res<Ext4> {
        fs::create_dir_all(&mnt).map_err(|e| e.to_string())?;
        let mut g = Ext4 { image, mnt, loopdev: None, mounted: false };
        let dev = run("losetup", &["-f", "--show", g.image.to_str().unwrap()])?.trim().to_string();
        g.loopdev = Some(dev.clone());
        run("mount", &["-t", "ext4", "-o", opts, &dev, g.mnt.to_str().unwrap()])?;
        g.mounted = true;
        Ok(g)
    }
}

impl Setup for Ext4 {
    fn name(&self) -> &'static str {
        "ext4"
    }
    fn dir(&self) -> &Path {
        &self.mnt
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        if self.mounted && run("umount", &[self.mnt.to_str().unwrap()]).is_err() {
            let _ = run("umount", &["-l", self.mnt.to_str().unwrap()]);
        }
        if let Some(d) = self.loopdev.take() {
            let _ = run("losetup", &["-d", &d]);
        }
    }
}

/// The 4 KiB write+fsync loop on rollfs over an image in /dev/shm, `rounds` times.
fn rollfs_ram_fsync(bin: &Path, cfg: &Config, rounds: usize) -> Res<Vec<f64>> {
    let img = PathBuf::from("/dev/shm/rollfs-compare-ram.img");
    let _ = fs::remove_file(&img);
    let size = cfg.image_size.min(256 << 20).to_string();
    run(bin.to_str().unwrap(), &["mkfs", "-q", "--size", &size, img.to_str().unwrap()])?;
    let r = (|| {
        let g = Rollfs::mount(bin, &img, &cfg.work.join("rollfs-ram-mnt"), &cfg.work.join("rollfs-ram-mount.log"))?;
        let mut v = Vec::new();
        for _ in 0..rounds {
            v.push(fsync_loop(&g.mnt, cfg.phase_secs * 2.0, false)?.0);
        }
        Ok(v)
    })();
    let _ = fs::remove_file(&img);
    r
}

/// `ROLLFS_IOC_GET_STATS` (native/src/fuse.rs): `_IOR('R', 2, [u8; 16383])`, NUL-padded JSON.
fn read_stats_ioctl(f: &File) -> Option<serde_json::Value> {
    let mut buf = vec![0u8; rollfs::fuse::ioc::ROLLFS_STATS_LEN];
    // SAFETY: the ioctl writes at most ROLLFS_STATS_LEN bytes into buf.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), rollfs::fuse::ioc::ROLLFS_IOC_GET_STATS as _, buf.as_mut_ptr()) };
    if r < 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    serde_json::from_slice(&buf[..end]).ok()
}

fn stat_u64(v: &Option<serde_json::Value>, section: &str, key: &str) -> Option<u64> {
    v.as_ref()?.get(section)?.get(key)?.as_u64()
}

/// The [`per_op_counts`] lines of `workloads`, as a paragraph each ("SETUP, first round,
/// WORKLOAD: per ..."): rollfs's, then the baseline's (`rollfs-before`) where one ran, so a
/// before/after shows what changed in the counts beside what changed in the ratio.
fn op_counts_lines(md: &mut String, rep: &Report, workloads: &[&str]) {
    for (setup, w, line) in rep.op_counts.iter().filter(|(_, w, _)| workloads.contains(&w.as_str())) {
        let _ = writeln!(md, "\n{setup}, first round, {w}: {line}.");
    }
}

/// What `n` units of a workload (entries untarred, save-by-rename iterations) cost between
/// two readings of the stats ioctl, per unit: FUSE requests in all and the opcodes that sent
/// most, device flushes, checkpoints, and the core's data, node and meta blocks. `(setup,
/// workload, line)`, with the setup counted (`rollfs` or the baseline's `rollfs-before`); the line says
/// what is missing when a reading is.
fn per_op_counts(
    setup: &str,
    workload: &str,
    unit: &str,
    n: f64,
    a: &Option<serde_json::Value>,
    b: &Option<serde_json::Value>,
) -> (String, String, String) {
    let (Some(a), Some(b)) = (a, b) else {
        return (setup.into(), workload.into(), "not counted (the stats ioctl did not answer)".into());
    };
    if n <= 0.0 {
        return (setup.into(), workload.into(), "not counted (no units)".into());
    }
    let d = |sec: &str, k: &str| -> Option<f64> {
        Some(b.get(sec)?.get(k)?.as_u64()? as f64 - a.get(sec)?.get(k)?.as_u64().unwrap_or(0) as f64)
    };
    let per = |sec: &str, k: &str| fmt_num(d(sec, k).map(|x| x / n));
    let mut ops: Vec<(String, f64)> = b
        .get("fuse")
        .and_then(|m| m.as_object())
        .map(|m| {
            m.keys().filter_map(|k| Some((k.trim_start_matches("FUSE_").to_string(), d("fuse", k)? / n))).collect()
        })
        .unwrap_or_default();
    ops.retain(|(_, x)| *x >= 0.005);
    ops.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    let by_op: Vec<String> = ops.iter().map(|(k, x)| format!("{k} {}", fmt_num(Some(*x)))).collect();
    let line = format!(
        "per {unit} (over {n:.0}): FUSE requests {} ({}), device flushes {}, device write ranges {}, \
         checkpoints {}; the core's data blocks {}, node blocks {}, meta blocks {}",
        per("driver", "fuse_requests"),
        by_op.join(", "),
        per("driver", "host_flushes"),
        per("driver", "host_write_runs"),
        per("core", "checkpoints"),
        per("core", "data_blocks_written"),
        per("core", "node_blocks_written"),
        per("core", "meta_blocks_written"),
    );
    (setup.into(), workload.into(), line)
}

/// Whether setup `name` is a rollfs mount whose stats ioctl can be read: rollfs as it is, or
/// the `--baseline` binary's.
fn is_rollfs(name: &str) -> bool {
    name == "rollfs" || name == "rollfs-before"
}

/// The stats ioctl of a rollfs setup's mount (through a file of its own in the mount's root),
/// or `None` where it does not answer (another filesystem, an older binary without it).
fn stats_of(s: &dyn Setup) -> Option<serde_json::Value> {
    let p = s.dir().join(".compare-stats");
    let f = OpenOptions::new().create(true).truncate(false).read(true).write(true).open(p).ok()?;
    read_stats_ioctl(&f)
}

/// The `--baseline` binary's mount: rollfs as it was, beside rollfs as it is.
struct Baseline(Rollfs);

impl Setup for Baseline {
    fn name(&self) -> &'static str {
        "rollfs-before"
    }
    fn dir(&self) -> &Path {
        &self.0.mnt
    }
    fn pid(&self) -> Option<u32> {
        self.0.pid()
    }
}

impl Setup for Rollfs {
    fn name(&self) -> &'static str {
        "rollfs"
    }
    fn dir(&self) -> &Path {
        &self.mnt
    }
    fn pid(&self) -> Option<u32> {
        Rollfs::pid(self)
    }
}

struct Bindfs {
    mnt: PathBuf,
    mounted: bool,
}

impl Bindfs {
    fn mount(src: &Path, mnt: &Path) -> Res<Bindfs> {
        fs::create_dir_all(src).map_err(|e| e.to_string())?;
        fs::create_dir_all(mnt).map_err(|e| e.to_string())?;
        run("bindfs", &[src.to_str().unwrap(), mnt.to_str().unwrap()])?;
        Ok(Bindfs { mnt: mnt.to_owned(), mounted: true })
    }
}

impl Setup for Bindfs {
    fn name(&self) -> &'static str {
        "bindfs"
    }
    fn dir(&self) -> &Path {
        &self.mnt
    }
}

impl Drop for Bindfs {
    fn drop(&mut self) {
        if self.mounted {
            let m = self.mnt.to_str().unwrap();
            if run("fusermount3", &["-u", m]).is_err() && run("umount", &[m]).is_err() {
                let _ = run("umount", &["-l", m]);
            }
        }
    }
}

/// A plain directory on the work disk (the "raw" setup).
struct Raw {
    dir: PathBuf,
}

impl Setup for Raw {
    fn name(&self) -> &'static str {
        "raw"
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
}

// ---- workloads --------------------------------------------------------------------------

/// 4 KiB pwrite at a random block of a 16 MiB file (written out first) + fsync or
/// fdatasync, for `secs`. Returns (ops/s, p99 latency in µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SqlOp {
    Insert,
    Update,
    Delete,
}

const SQL_OPS: [SqlOp; 3] = [SqlOp::Insert, SqlOp::Update, SqlOp::Delete];
const JOURNALS: [&str; 3] = ["DELETE", "TRUNCATE", "WAL"];

/// One row per transaction, `synchronous=FULL`, for `secs` per operation kind.
/// Returns transactions per second of insert, update, delete, and the transactions run.
fn sqlite_run(dir: &Path, journal: &str, secs: f64, tag: usize) -> Res<(BTreeMap<SqlOp, f64>, u64)> {
    let path = dir.join(format!("bench-{}-{tag}.db", journal.to_lowercase()));
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let e = |e: rusqlite::Error| format!("sqlite on {}: {e}", path.display());
    let c = rusqlite::Connection::open(&path).map_err(e)?;
    let mode: String = c.query_row(&format!("PRAGMA journal_mode={journal}"), [], |r| r.get(0)).map_err(e)?;
    if !mode.eq_ignore_ascii_case(journal) {
        return Err(format!("journal_mode {journal} refused (got {mode})"));
    }
    c.execute_batch("PRAGMA synchronous=FULL; CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);").map_err(e)?;
    let payload = vec![0x42u8; 100];
    let mut out = BTreeMap::new();
    let mut rows: Vec<i64> = Vec::new();
    let mut rng = Rng::new(11 + tag as u64);
    let mut total = 0u64;
    for op in SQL_OPS {
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed().as_secs_f64() < secs {
            match op {
                SqlOp::Insert => {
                    c.execute("INSERT INTO t(v) VALUES (?1)", [&payload]).map_err(e)?;
                    rows.push(c.last_insert_rowid());
                }
                SqlOp::Update => {
                    let id = rows[rng.below(rows.len() as u64) as usize];
                    // A new value each time: SQLite skips writing a row whose bytes are unchanged.
                    let mut v = payload.clone();
                    v[..8].copy_from_slice(&n.to_le_bytes());
                    c.execute("UPDATE t SET v = ?1 WHERE id = ?2", rusqlite::params![v, id]).map_err(e)?;
                }
                SqlOp::Delete => {
                    if rows.is_empty() {
                        break;
                    }
                    let i = rng.below(rows.len() as u64) as usize;
                    let id = rows.swap_remove(i);
                    c.execute("DELETE FROM t WHERE id = ?1", [id]).map_err(e)?;
                }
            }
            n += 1;
        }
        out.insert(op, n as f64 / start.elapsed().as_secs_f64());
        total += n;
    }
    drop(c);
    for suffix in ["", "-journal", "-wal", "-shm"] {
        let _ = fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok((out, total))
}

fn geomean(v: &[f64]) -> Option<f64> {
    if v.is_empty() || v.iter().any(|x| *x <= 0.0) {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

fn fio_run(dir: &Path, rw: &str, bs: &str, size: &str, jobs: u32, secs: u64) -> Res<fio::FioResult> {
    let d = dir.join(format!("fio-{rw}-{jobs}"));
    fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    let out = run(
        "fio",
        &[
            "--name=w",
            &format!("--directory={}", d.display()),
            &format!("--rw={rw}"),
            &format!("--bs={bs}"),
            &format!("--size={size}"),
            &format!("--numjobs={jobs}"),
            "--fsync=1",
            "--ioengine=psync",
            "--fallocate=none",
            "--time_based",
            &format!("--runtime={secs}"),
            "--output-format=json",
        ],
    )?;
    fio::parse(&out)
}

fn dbench_run(dir: &Path, clients: u32, secs: u64) -> Res<f64> {
    let d = dir.join("dbench");
    fs::create_dir_all(&d).map_err(|e| e.to_string())?;
    let mut args = vec!["-D".to_string(), d.display().to_string(), "-t".into(), secs.to_string()];
    if Path::new("/usr/share/dbench/client.txt").exists() {
        args.extend(["-c".into(), "/usr/share/dbench/client.txt".into()]);
    }
    args.push(clients.to_string());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run("dbench", &a)?;
    out.lines()
        .find_map(|l| {
            l.trim().strip_prefix("Throughput ").and_then(|r| r.split_whitespace().next()).and_then(|x| x.parse().ok())
        })
        .ok_or_else(|| "no Throughput line in dbench output".to_string())
}

// ---- results ------------------------------------------------------------------------------

/// Samples per (workload, setup).
#[derive(Default)]
struct Samples {
    m: BTreeMap<(String, String), Vec<f64>>,
}

impl Samples {
    fn add(&mut self, key: &str, setup: &str, v: f64) {
        self.m.entry((key.to_string(), setup.to_string())).or_default().push(v);
    }
    fn med(&self, key: &str, setup: &str) -> Option<f64> {
        self.m.get(&(key.to_string(), setup.to_string())).and_then(|v| median(v))
    }
    fn n(&self, key: &str, setup: &str) -> usize {
        self.m.get(&(key.to_string(), setup.to_string())).map_or(0, Vec::len)
    }
}

// ---- machine description ---------------------------------------------------------------------

fn machine(work: &Path) -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mem = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_string())
        })
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| format!("{:.1} GiB", kb / 1048576.0))
        .unwrap_or_else(|| "unknown".into());
    let kernel = run("uname", &["-r"]).map(|s| s.trim().to_string()).unwrap_or_default();
    let fsinfo = run("findmnt", &["-n", "-o", "SOURCE,FSTYPE,OPTIONS", "-T", work.to_str().unwrap()])
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let source = fsinfo.split_whitespace().next().unwrap_or("").to_string();
    let blk = source.trim_start_matches("/dev/").trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let q = |f: &str| {
        fs::read_to_string(format!("/sys/block/{blk}/queue/{f}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    let fua = fs::read_to_string(format!("/sys/block/{blk}/queue/fua"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    let mut s = String::new();
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| CPU | {cpu} |");
    let _ = writeln!(s, "| cores | {cores} |");
    let _ = writeln!(s, "| memory | {mem} |");
    let _ = writeln!(s, "| kernel | {kernel} |");
    let _ = writeln!(s, "| work dir | `{}` on {fsinfo} |", work.display());
    let _ = writeln!(
        s,
        "| disk | {blk}: rotational={}, write_cache={}, fua={fua}, scheduler={} |",
        q("rotational"),
        q("write_cache"),
        q("scheduler")
    );
    s
}

// ---- recovery ----------------------------------------------------------------------------------

struct RecoveryRow {
    size: u64,
    /// None: after a clean unmount.
    fsyncs: Option<u64>,
    core_cold_ms: Option<f64>,
    cli_ms: Option<f64>,
    walked: Option<u64>,
    ext4_ms: Option<f64>,
    note: String,
}

/// The file device without its cache flushes: building a recovery image writes exactly the
/// same blocks, only without waiting for the disk at each fsync (the image is then copied
/// from the host page cache, which is all a mount of the copy reads).
struct NoFlush(FileDevice);

impl rollfs_core::BlockDevice for NoFlush {
    fn block_count(&self) -> u64 {
        self.0.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut rollfs_core::Block) -> Result<(), rollfs_core::IoError> {
        self.0.read(addr, buf)
    }
    fn write(
        &mut self,
        addr: u64,
        data: &rollfs_core::Block,
        flags: rollfs_core::WriteFlags,
    ) -> Result<(), rollfs_core::IoError> {
        self.0.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), rollfs_core::IoError> {
        self.0.wait_writes()
    }
    fn flush(&mut self) -> Result<(), rollfs_core::IoError> {
        self.0.wait_writes()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), rollfs_core::IoError> {
        self.0.discard(addr, count)
    }
}

/// Builds a rollfs image with `fsyncs` fsyncs since the last checkpoint (or cleanly
/// unmounted when `None`), through the core on the native file device.
fn build_rollfs_image(bin: &Path, img: &Path, size: u64, fsyncs: Option<u64>) -> Res<()> {
    let _ = fs::remove_file(img);
    run(bin.to_str().unwrap(), &["mkfs", "-q", "--size", &size.to_string(), img.to_str().unwrap()])?;
    let dev = NoFlush(FileDevice::open(img, DeviceOptions::default()).map_err(|e| e.to_string())?);
    let mut fs = Filesystem::mount(dev, &corework::roomy_mount(), corework::t(0)).map_err(|e| e.to_string())?;
    let cp0 = fs.stats().checkpoints;
    corework::fsyncs_since_checkpoint(&mut fs, 16, fsyncs.unwrap_or(0));
    match fsyncs {
        None => {
            fs.unmount(corework::t(9)).map_err(|e| e.to_string())?;
        }
        Some(n) => {
            // One checkpoint (the `sync` before the fsyncs) and none during them.
            let cps = fs.stats().checkpoints - cp0;
            if cps != 1 {
                return Err(format!("{cps} checkpoints while writing {n} fsyncs (expected 1)"));
            }
            // Power loss: drop without unmount (everything fsync'd is already flushed).
            drop(fs);
        }
    }
    Ok(())
}

fn copy_sparse(from: &Path, to: &Path) -> Res<()> {
    let _ = fs::remove_file(to);
    run("cp", &["--sparse=always", from.to_str().unwrap(), to.to_str().unwrap()]).map(|_| ())
}

fn time_core_mount(img: &Path) -> Res<(f64, u64)> {
    drop_caches();
    let start = Instant::now();
    let dev = FileDevice::open(img, DeviceOptions::default()).map_err(|e| e.to_string())?;
    let fs = Filesystem::mount(dev, &MountOptions::default(), rollfs::now()).map_err(|e| e.to_string())?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let walked = fs.stats().recovered_nodes_walked;
    fs.unmount(rollfs::now()).map_err(|e| e.to_string())?;
    Ok((ms, walked))
}

/// `rollfs mount IMG MNT` (background daemon; returns when the mount is live), timed.
fn time_cli_mount(bin: &Path, img: &Path, mnt: &Path) -> Res<f64> {
    fs::create_dir_all(mnt).map_err(|e| e.to_string())?;
    drop_caches();
    let start = Instant::now();
    let r = run(bin.to_str().unwrap(), &["mount", img.to_str().unwrap(), mnt.to_str().unwrap()]);
    let ms = start.elapsed().as_secs_f64() * 1e3;
    // Unmount, and wait for the daemon to release the image (its exclusive lock).
    if is_mounted(mnt) {
        let _ = run("umount", &[mnt.to_str().unwrap()]);
    }
    let f = File::open(img).map_err(|e| e.to_string())?;
    let start = Instant::now();
    // SAFETY: plain flock on a valid fd.
    while unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        if start.elapsed() > Duration::from_secs(60) {
            return Err("rollfs daemon still holds the image 60 s after umount".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    r.map(|_| ms)
}

/// ext4 mount time on a loop device: after a clean unmount, or from a copy of the image
/// taken while mounted right after `fsyncs` fsyncs (journal replay at mount).
fn ext4_recovery(work: &Path, size: u64, fsyncs: Option<u64>) -> Res<f64> {
    let img = work.join("ext4-rec.img");
    let crash = work.join("ext4-rec-crash.img");
    let mnt = work.join("ext4-rec-mnt");
    {
        // barrier=0 while building only: the same journal commits, without a disk flush each.
        let g = Ext4::create(img.clone(), mnt.clone(), size, false, "barrier=0")?;
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(g.dir().join("f"))
            .map_err(|e| e.to_string())?;
        f.write_all_at(&vec![0u8; 1 << 20], 0).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
        let mut rng = Rng::new(42);
        for _ in 0..fsyncs.unwrap_or(0) {
            f.write_all_at(&[0x5au8; 4096], rng.below(256) * 4096).map_err(|e| e.to_string())?;
            f.sync_all().map_err(|e| e.to_string())?;
        }
        if fsyncs.is_some() {
            copy_sparse(&img, &crash)?;
        }
    }
    let target = if fsyncs.is_some() { crash.clone() } else { img.clone() };
    drop_caches();
    let start = Instant::now();
    let g = Ext4::attach(target, mnt, "defaults")?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    drop(g);
    let _ = fs::remove_file(&img);
    let _ = fs::remove_file(&crash);
    Ok(ms)
}

fn recovery(cfg: &Config, bin: &Path, notes: &mut Vec<String>) -> Vec<RecoveryRow> {
    let mut rows = Vec::new();
    let base = cfg.work.join("rec.img");
    let copy = cfg.work.join("rec-copy.img");
    let mnt = cfg.work.join("rec-mnt");
    let mut cases: Vec<Option<u64>> = cfg.recovery_fsyncs.iter().map(|&n| Some(n)).collect();
    cases.push(None);
    for &size in &cfg.recovery_sizes {
        for &case in &cases {
            if check_interrupt().is_err() {
                return rows;
            }
            let mut row = RecoveryRow {
                size,
                fsyncs: case,
                core_cold_ms: None,
                cli_ms: None,
                walked: None,
                ext4_ms: None,
                note: String::new(),
            };
            eprintln!(
                "compare: recovery {} GiB, {}",
                size >> 30,
                case.map_or("clean unmount".into(), |n| format!("{n} fsyncs"))
            );
            match build_rollfs_image(bin, &base, size, case) {
                Err(e) => row.note = format!("image: {e}"),
                Ok(()) => {
                    let mut core = Vec::new();
                    let mut cli = Vec::new();
                    for _ in 0..cfg.recovery_rounds {
                        match copy_sparse(&base, &copy).and_then(|_| time_core_mount(&copy)) {
                            Ok((ms, w)) => {
                                core.push(ms);
                                row.walked = Some(w);
                            }
                            Err(e) => row.note = format!("core mount: {e}"),
                        }
                        // --quick: the CLI mount only where recovery dominates (10k fsyncs).
                        if cfg.quick && case != Some(10_000) {
                            continue;
                        }
                        match copy_sparse(&base, &copy).and_then(|_| time_cli_mount(bin, &copy, &mnt)) {
                            Ok(ms) => cli.push(ms),
                            Err(e) => row.note = format!("rollfs mount: {e}"),
                        }
                    }
                    row.core_cold_ms = median(&core);
                    row.cli_ms = median(&cli);
                }
            }
            if have("mkfs.ext4") && is_root() {
                let mut v = Vec::new();
                for _ in 0..cfg.recovery_rounds {
                    match ext4_recovery(&cfg.work, size, case) {
                        Ok(ms) => v.push(ms),
                        Err(e) => row.note += &format!(" ext4: {e}"),
                    }
                }
                row.ext4_ms = median(&v);
            }
            rows.push(row);
        }
    }
    let _ = fs::remove_file(&base);
    let _ = fs::remove_file(&copy);
    if rows.iter().any(|r| !r.note.is_empty()) {
        notes.push("some recovery measurements failed; see the notes column".into());
    }
    rows
}

// ---- main ----------------------------------------------------------------------------------

struct Args {
    quick: bool,
    work: PathBuf,
    results: PathBuf,
    baseline: Option<PathBuf>,
    baseline_options: Option<String>,
    baseline_features: Option<String>,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        quick: false,
        work: workspace_dir().join("target").join("compare-work"),
        results: Path::new(env!("CARGO_MANIFEST_DIR")).join("results"),
        baseline: None,
        baseline_options: None,
        baseline_features: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            // Both images on a RAM disk (rollfs's image file in /dev/shm, ext4 on a loop
            // device over /dev/shm), where no disk hides a CPU or FUSE cost (issue 36); the
            // report goes to results/ram/ beside the disk's.
            "--ram" => {
                a.work = PathBuf::from("/dev/shm/rollfs-compare-work");
                a.results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results").join("ram");
            }
            "--work-dir" => a.work = PathBuf::from(it.next().ok_or("--work-dir needs a directory")?),
            "--results" => a.results = PathBuf::from(it.next().ok_or("--results needs a directory")?),
            "--baseline" => a.baseline = Some(PathBuf::from(it.next().ok_or("--baseline needs a rollfs binary")?)),
            "--baseline-options" => {
                a.baseline_options = Some(it.next().ok_or("--baseline-options needs mount options")?.to_string())
            }
            "--baseline-features" => {
                a.baseline_features = Some(it.next().ok_or("--baseline-features needs mkfs features")?.to_string())
            }
            "-h" | "--help" => {
                println!(
                    "usage: compare [--quick] [--ram] [--work-dir DIR] [--results DIR] [--baseline ROLLFS_BIN [--baseline-options OPTS] [--baseline-features F]]\n  \
                     --ram: every image on a RAM disk (/dev/shm), the report in results/ram/\n  \
                     env ROLLFS_BIN: the rollfs binary to use\n  \
                     --baseline: also run this (older) rollfs binary as setup `rollfs-before`, interleaved in \
                     the same rounds: a before/after on the same disk in one run\n  \
                     --baseline-features F: make the baseline's image with `mkfs -O F` (e.g. the same binary \
                     as --baseline with `nonsrec`: the default beside namespace records off)"
                );
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {x}")),
        }
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("compare: {e}");
            std::process::exit(2);
        }
    };
    // SAFETY: installs an async-signal-safe handler that only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    let cfg = Config {
        baseline: args.baseline,
        baseline_options: args.baseline_options,
        baseline_features: args.baseline_features,
        ..Config::new(args.quick, args.work, args.results)
    };
    let line = match run_all(&cfg) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("compare: {e}");
            std::process::exit(1);
        }
    };
    println!("{line}");
}

struct Report {
    phases: Vec<(String, f64)>,
    samples: Samples,
    notes: Vec<String>,
    atomic: Vec<String>,
    fsync_stats: Option<String>,
    /// Per setup and workload (untar, rm, save-by-rename): what its first round on rollfs
    /// (and on the baseline, where one runs) sent to the daemon and the device, per entry or
    /// iteration ([`per_op_counts`]).
    op_counts: Vec<(String, String, String)>,
    fio_p99: Samples,
    recovery: Vec<RecoveryRow>,
    /// The rollfs daemon's (peak, current) resident memory after every workload, bytes.
    rss: Option<(u64, u64)>,
    /// The daemon's (peak, current) resident memory at the start of each phase after the
    /// first, and at the end: where the memory went.
    rss_by_phase: Vec<(String, u64, u64)>,
    /// The baseline daemon's (peak, current) resident memory at the end.
    rss_before: Option<(u64, u64)>,
    tree_entries: u64,
}

fn run_all(cfg: &Config) -> Res<String> {
    let t0 = Instant::now();
    let mut notes = Vec::new();
    fs::create_dir_all(&cfg.work).map_err(|e| format!("{}: {e}", cfg.work.display()))?;
    let work = fs::canonicalize(&cfg.work).map_err(|e| e.to_string())?;
    let cfg = &Config { work, ..cfg.clone() };
    ensure_tools(&mut notes);
    let bin = find_rollfs_bin(&mut notes);
    let root = is_root();
    if !root {
        notes.push("not root: ext4 on a loop device and FUSE mounts need root; those rows are missing".into());
    }

    let mut rep = Report {
        phases: Vec::new(),
        samples: Samples::default(),
        notes,
        atomic: Vec::new(),
        fsync_stats: None,
        op_counts: Vec::new(),
        fio_p99: Samples::default(),
        recovery: Vec::new(),
        rss: None,
        rss_by_phase: Vec::new(),
        rss_before: None,
        tree_entries: 0,
    };

    // SQLite compile options.
    let opts: Vec<String> = rusqlite::Connection::open_in_memory()
        .and_then(|c| {
            let mut s = c.prepare("PRAGMA compile_options")?;
            let v = s.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>();
            v
        })
        .unwrap_or_default();
    let batch = opts.iter().any(|o| o == "ENABLE_BATCH_ATOMIC_WRITE");
    if !batch {
        rep.notes.push("this SQLite was built WITHOUT SQLITE_ENABLE_BATCH_ATOMIC_WRITE (LIBSQLITE3_FLAGS in .cargo/config.toml not applied?)".into());
    }

    // Setups, all mounted for the whole comparison; dropped (unmounted) at the end of this
    // block, or on any error.
    {
        let mut setups: Vec<Box<dyn Setup>> = Vec::new();
        let mut rollfs_guard_index = None;
        if root {
            if let Some(bin) = &bin {
                eprintln!("compare: rollfs image ({} MiB, written out)", cfg.image_size >> 20);
                let img = cfg.work.join("rollfs.img");
                write_out(&img, cfg.image_size)?;
                run(bin.to_str().unwrap(), &["mkfs", "-q", "--force", img.to_str().unwrap()])?;
                match Rollfs::mount(bin, &img, &cfg.work.join("rollfs-mnt"), &cfg.work.join("rollfs-mount.log")) {
                    Ok(g) => {
                        rollfs_guard_index = Some(setups.len());
                        setups.push(Box::new(g));
                    }
                    Err(e) => rep.notes.push(format!("rollfs mount failed: {e}")),
                }
            }
            if let Some(base) = &cfg.baseline {
                eprintln!("compare: baseline rollfs image ({} MiB, written out)", cfg.image_size >> 20);
                let img = cfg.work.join("rollfs-before.img");
                write_out(&img, cfg.image_size)?;
                let features = cfg.baseline_features.iter().flat_map(|f| ["-O", f.as_str()]);
                let mut args: Vec<&str> = vec!["mkfs", "-q", "--force"];
                args.extend(features);
                args.push(img.to_str().unwrap());
                run(base.to_str().unwrap(), &args)?;
                match Rollfs::mount_with(
                    base,
                    &img,
                    &cfg.work.join("rollfs-before-mnt"),
                    &cfg.work.join("rollfs-before-mount.log"),
                    cfg.baseline_options.as_deref(),
                ) {
                    Ok(g) => setups.push(Box::new(Baseline(g))),
                    Err(e) => rep.notes.push(format!("baseline rollfs mount failed: {e}")),
                }
            }
            if have("mkfs.ext4") {
                eprintln!("compare: ext4 image ({} MiB, written out) on a loop device", cfg.image_size >> 20);
                match Ext4::create(
                    cfg.work.join("ext4.img"),
                    cfg.work.join("ext4-mnt"),
                    cfg.image_size,
                    true,
                    "defaults",
                ) {
                    Ok(g) => setups.push(Box::new(g)),
                    Err(e) => rep.notes.push(format!("ext4 setup failed: {e}")),
                }
            }
            if have("bindfs") {
                let src = cfg.work.join("bindfs-src");
                let _ = fs::remove_dir_all(&src);
                match Bindfs::mount(&src, &cfg.work.join("bindfs-mnt")) {
                    Ok(g) => setups.push(Box::new(g)),
                    Err(e) => rep.notes.push(format!("bindfs setup failed: {e}")),
                }
            } else {
                rep.notes.push("bindfs not available: no FUSE passthrough floor".into());
            }
        }
        let raw_dir = cfg.work.join("raw");
        fs::create_dir_all(&raw_dir).map_err(|e| e.to_string())?;
        let raw = Raw { dir: raw_dir };
        let rollfs_pid = setups.iter().find(|s| s.name() == "rollfs").and_then(|s| s.pid());
        let sample_rss = |rep: &mut Report, after: &str| {
            if let Some((peak, now)) = rollfs_pid.and_then(fsops::process_rss) {
                rep.rss_by_phase.push((after.to_string(), peak, now));
            }
        };
        let rollfs_stats = |setups: &Vec<Box<dyn Setup>>| -> Option<serde_json::Value> {
            let i = rollfs_guard_index?;
            stats_of(setups[i].as_ref())
        };

        // 1. 4 KiB write + fsync loop (and the raw fdatasync loop).
        rep.phases.push(("fsync loops".into(), t0.elapsed().as_secs_f64()));
        eprintln!("compare: 4 KiB write+fsync loops");
        let mut fsync_before = None;
        let mut fsync_after = None;
        for round in 0..cfg.rounds {
            for s in &setups {
                check_interrupt()?;
                if s.name() == "rollfs" && round == 0 {
                    let _ = fsync_loop_prepare(s.dir());
                    fsync_before = rollfs_stats(&setups);
                }
                match fsync_loop(s.dir(), cfg.phase_secs * 2.0, false) {
                    Ok((ops, p99)) => {
                        rep.samples.add("fsync4k", s.name(), ops);
                        rep.fio_p99.add("fsync4k", s.name(), p99);
                    }
                    Err(e) => rep.notes.push(format!("fsync loop on {}: {e}", s.name())),
                }
                if s.name() == "rollfs" && round == 0 {
                    fsync_after = rollfs_stats(&setups);
                }
            }
            let (ops, p99) = fsync_loop(raw.dir(), cfg.phase_secs * 2.0, true)?;
            rep.samples.add("fsync4k", "raw-fdatasync", ops);
            rep.fio_p99.add("fsync4k", "raw-fdatasync", p99);
            let (ops, p99) = fsync_loop_at(raw.dir(), cfg.phase_secs * 2.0, true, true)?;
            rep.samples.add("fsync4k", "raw-fdatasync-seq", ops);
            rep.fio_p99.add("fsync4k", "raw-fdatasync-seq", p99);
        }
        // rollfs's CPU-bound fsync rate: the same loop on an image in RAM (/dev/shm), where
        // a flush costs nothing. Against the raw loop it tells whether this disk limits
        // the fsync figures (the report and the last line say so).
        if root {
            if let Some(bin) = &bin {
                match rollfs_ram_fsync(bin, cfg, cfg.rounds) {
                    Ok(v) => {
                        for ops in v {
                            rep.samples.add("fsync4k", "rollfs-ram", ops);
                        }
                    }
                    Err(e) => rep.notes.push(format!("rollfs on a RAM disk: {e}")),
                }
            }
        }
        if let (Some(a), Some(b)) = (&fsync_before, &fsync_after) {
            let g = |sec: &str, k: &str| -> Option<f64> {
                Some(stat_u64(&Some(b.clone()), sec, k)? as f64 - stat_u64(&Some(a.clone()), sec, k)? as f64)
            };
            if let Some(n) = g("core", "fsyncs").filter(|n| *n > 0.0) {
                rep.fsync_stats = Some(format!(
                    "Through the FUSE mount, over {n:.0} fsyncs of the 4 KiB loop (first round), per fsync: \
                     FUSE requests {}, device flushes {}, device write ranges {}; the core's data blocks {} \
                     ({} beside their chain), node blocks {}, meta blocks {}, flushes {} (driver group flushes {}), \
                     checkpoint fallbacks {}.",
                    fmt_num(g("driver", "fuse_requests").map(|x| x / n)),
                    fmt_num(g("driver", "host_flushes").map(|x| x / n)),
                    fmt_num(g("driver", "host_write_runs").map(|x| x / n)),
                    fmt_num(g("core", "data_blocks_written").map(|x| x / n)),
                    fmt_num(g("core", "data_beside_blocks").map(|x| x / n)),
                    fmt_num(g("core", "node_blocks_written").map(|x| x / n)),
                    fmt_num(g("core", "meta_blocks_written").map(|x| x / n)),
                    fmt_num(g("core", "flushes").map(|x| x / n)),
                    fmt_num(g("driver", "group_flushes").map(|x| x / n)),
                    fmt_num(g("core", "fsync_checkpoint_fallbacks").map(|x| x / n)),
                ));
            }
        }

        // 2. SQLite.
        sample_rss(&mut rep, "fsync loops");
        rep.phases.push(("SQLite".into(), t0.elapsed().as_secs_f64()));
        eprintln!("compare: SQLite");
        for round in 0..cfg.rounds {
            for journal in JOURNALS {
                for s in &setups {
                    if s.name() == "bindfs" && cfg.quick {
                        continue;
                    }
                    check_interrupt()?;
                    let before = if s.name() == "rollfs" { rollfs_stats(&setups) } else { None };
                    let mut txns = 0u64;
                    match sqlite_run(s.dir(), journal, cfg.phase_secs, round) {
                        Ok((m, n)) => {
                            txns = n;
                            for (op, tps) in &m {
                                rep.samples.add(&format!("sqlite-{journal}-{op:?}"), s.name(), *tps);
                            }
                            let v: Vec<f64> = m.values().copied().collect();
                            if let Some(g) = geomean(&v) {
                                rep.samples.add(&format!("sqlite-{journal}"), s.name(), g);
                            }
                        }
                        Err(e) => rep.notes.push(format!("sqlite {journal} on {}: {e}", s.name())),
                    }
                    if s.name() == "rollfs" && round == 0 {
                        let after = rollfs_stats(&setups);
                        let d = |sec: &str, k: &str| {
                            Some(stat_u64(&after, sec, k)? as i64 - stat_u64(&before, sec, k)? as i64)
                        };
                        // What reached the kernel and the device per transaction (issue 36).
                        let per = |sec: &str, k: &str| {
                            d(sec, k)
                                .filter(|_| txns > 0)
                                .map_or("n/a".into(), |x| format!("{:.2}", x as f64 / txns as f64))
                        };
                        rep.atomic.push(format!(
                            "| {journal} | {txns} | {} | {} | {} | {} | {} | {} | {} |",
                            per("driver", "fuse_requests"),
                            per("driver", "host_flushes"),
                            d("driver", "atomic_starts").map_or("n/a".into(), |x| x.to_string()),
                            d("core", "atomic_commits").map_or("n/a".into(), |x| x.to_string()),
                            d("core", "atomic_aborts").map_or("n/a".into(), |x| x.to_string()),
                            d("core", "fsyncs").map_or("n/a".into(), |x| x.to_string()),
                            d("core", "checkpoints").map_or("n/a".into(), |x| x.to_string()),
                        ));
                    }
                }
            }
        }

        // 3. fio.
        if have("fio") {
            sample_rss(&mut rep, "SQLite");
            rep.phases.push(("fio".into(), t0.elapsed().as_secs_f64()));
            eprintln!("compare: fio");
            // --quick: one round of fio (18 runs per round).
            for round in 0..(if cfg.quick { 1 } else { cfg.rounds }) {
                for (rw, bs, size) in [("randwrite", "4k", "8m"), ("write", "64k", "8m")] {
                    for jobs in [1u32, 4, 16] {
                        for s in &setups {
                            check_interrupt()?;
                            let _ = round;
                            match fio_run(s.dir(), rw, bs, size, jobs, cfg.fio_secs) {
                                Ok(r) => {
                                    let key = format!("fio-{rw}-{bs}-{jobs}");
                                    rep.samples.add(&key, s.name(), r.write_iops);
                                    if let Some(p) = r.sync_p99_us.or(r.write_p99_us) {
                                        rep.fio_p99.add(&key, s.name(), p);
                                    }
                                    rep.samples.add(&format!("{key}-bw"), s.name(), r.write_bw_bytes / 1048576.0);
                                }
                                Err(e) => rep.notes.push(format!("fio {rw} {jobs} jobs on {}: {e}", s.name())),
                            }
                        }
                    }
                }
            }
        } else {
            rep.notes.push("fio not available: fio rows skipped".into());
        }

        // 4. dbench.
        if have("dbench") {
            sample_rss(&mut rep, "fio");
            rep.phases.push(("dbench".into(), t0.elapsed().as_secs_f64()));
            eprintln!("compare: dbench");
            for _ in 0..cfg.rounds {
                for s in &setups {
                    check_interrupt()?;
                    match dbench_run(s.dir(), cfg.dbench_clients, cfg.dbench_secs) {
                        Ok(mbs) => rep.samples.add("dbench", s.name(), mbs),
                        Err(e) => rep.notes.push(format!("dbench on {}: {e}", s.name())),
                    }
                }
            }
        } else {
            rep.notes.push("dbench not available: dbench rows skipped".into());
        }
        // 5. Sequential write (dd bs=1M conv=fsync) and cold read.
        sample_rss(&mut rep, "dbench");
        rep.phases.push(("sequential".into(), t0.elapsed().as_secs_f64()));
        eprintln!("compare: sequential write and cold read ({} MiB)", cfg.seq_bytes >> 20);
        for _ in 0..cfg.rounds {
            for s in &setups {
                check_interrupt()?;
                match fsops::seq_write(s.dir(), cfg.seq_bytes).and_then(|w| Ok((w, fsops::seq_read_cold(s.dir())?))) {
                    Ok((w, r)) => {
                        rep.samples.add("seq-write", s.name(), w);
                        rep.samples.add("seq-read", s.name(), r);
                    }
                    Err(e) => rep.notes.push(format!("sequential on {}: {e}", s.name())),
                }
            }
        }

        // 6. Untar and rm -rf of a tree of small files, each made durable.
        sample_rss(&mut rep, "sequential");
        rep.phases.push(("untar/rm".into(), t0.elapsed().as_secs_f64()));
        eprintln!("compare: untar and rm -rf");
        let tar = cfg.work.join("tree.tar");
        match fsops::make_tree_tar(&raw.dir, &tar) {
            Ok(n) => {
                rep.tree_entries = n;
                for round in 0..cfg.rounds {
                    for s in &setups {
                        check_interrupt()?;
                        // The first round on rollfs (and on the baseline) is counted: before,
                        // between and after.
                        let counted = is_rollfs(s.name()) && round == 0;
                        let before = if counted { stats_of(s.as_ref()) } else { None };
                        let mut between = None;
                        let r = fsops::untar_rm_between(s.dir(), &tar, &mut || {
                            if counted {
                                between = stats_of(s.as_ref());
                            }
                        });
                        match r {
                            Ok((u, r)) => {
                                rep.samples.add("untar", s.name(), u);
                                rep.samples.add("rm", s.name(), r);
                            }
                            Err(e) => rep.notes.push(format!("untar/rm on {}: {e}", s.name())),
                        }
                        if counted {
                            let after = stats_of(s.as_ref());
                            let n = rep.tree_entries as f64;
                            rep.op_counts.push(per_op_counts(s.name(), "untar + sync", "entry", n, &before, &between));
                            rep.op_counts.push(per_op_counts(s.name(), "rm -rf + sync", "entry", n, &between, &after));
                        }
                    }
                }
            }
            Err(e) => rep.notes.push(format!("building the tree to untar: {e}")),
        }

        // 7. Save-by-rename.
        sample_rss(&mut rep, "untar/rm");
        rep.phases.push(("save-by-rename".into(), t0.elapsed().as_secs_f64()));
        eprintln!("compare: save-by-rename");
        for round in 0..cfg.rounds {
            for s in &setups {
                check_interrupt()?;
                let counted = is_rollfs(s.name()) && round == 0;
                let before = if counted { stats_of(s.as_ref()) } else { None };
                match fsops::save_by_rename(s.dir(), cfg.phase_secs * 2.0) {
                    Ok((ops, p99, n)) => {
                        rep.samples.add("save-rename", s.name(), ops);
                        rep.fio_p99.add("save-rename", s.name(), p99);
                        if counted {
                            let after = stats_of(s.as_ref());
                            rep.op_counts.push(per_op_counts(
                                s.name(),
                                "save-by-rename",
                                "iteration",
                                n as f64,
                                &before,
                                &after,
                            ));
                        }
                    }
                    Err(e) => rep.notes.push(format!("save-by-rename on {}: {e}", s.name())),
                }
            }
        }

        // 8. The daemon's memory after all of it.
        sample_rss(&mut rep, "save-by-rename");
        rep.rss = rollfs_pid.and_then(fsops::process_rss);
        rep.rss_before = setups.iter().find(|s| s.name() == "rollfs-before").and_then(|s| fsops::process_rss(s.pid()?));

        // Setups unmount here (drop order: reverse of creation).
        while let Some(s) = setups.pop() {
            drop(s);
        }
    }
    for f in ["rollfs.img", "rollfs-before.img", "ext4.img"] {
        let _ = fs::remove_file(cfg.work.join(f));
    }

    // 5. Recovery.
    rep.phases.push(("recovery".into(), t0.elapsed().as_secs_f64()));
    if let Some(bin) = &bin {
        if root {
            rep.recovery = recovery(cfg, bin, &mut rep.notes);
        }
    }

    // 6. Device cost per fsync (core on MemDevice).
    rep.phases.push(("fsync cost (MemDevice)".into(), t0.elapsed().as_secs_f64()));
    let costs: Vec<(FsyncScenario, corework::FsyncCost)> =
        FsyncScenario::ALL.iter().map(|&s| (s, corework::fsync_cost(s, if cfg.quick { 200 } else { 1000 }))).collect();

    let elapsed = t0.elapsed();
    fs::create_dir_all(&cfg.results).map_err(|e| e.to_string())?;
    let (md, line) = render(cfg, &rep, &costs, batch, elapsed);
    fs::write(cfg.results.join("latest.md"), md).map_err(|e| e.to_string())?;
    Ok(line)
}

/// The rollfs daemon's cache bounds at the mount defaults (dirty 64 MiB + clean 64 MiB).
const ROLLFS_CACHES_MIB: u64 = 128;
/// What issue 14 allows the daemon beyond its caches: program, FUSE request buffers
/// (max_write 1 MiB per request thread), per-inode state.
const RSS_ALLOWANCE_MIB: u64 = 64;

/// The headline ratios of one rollfs setup (rollfs / ext4; for untar and rm, time / time).
struct Extra {
    sqlite_atomic_delete: Option<f64>,
    sqlite_atomic_wal: Option<f64>,
    sqlite_wal: Option<f64>,
    fsync: Option<f64>,
    fsync_raw: Option<f64>,
    seq_write: Option<f64>,
    seq_read: Option<f64>,
    untar: Option<f64>,
    rm: Option<f64>,
    dbench: Option<f64>,
    p99_16: Option<f64>,
    p99_16_4k: Option<f64>,
    save_rename: Option<f64>,
}

impl Extra {
    fn of(rep: &Report, setup: &str) -> Extra {
        let s = &rep.samples;
        let r = |k: &str| ratio(s.med(k, setup), s.med(k, "ext4"));
        let p = |k: &str| ratio(rep.fio_p99.med(k, setup), rep.fio_p99.med(k, "ext4"));
        Extra {
            sqlite_atomic_delete: r("sqlite-DELETE"),
            sqlite_atomic_wal: ratio(s.med("sqlite-DELETE", setup), s.med("sqlite-WAL", "ext4")),
            sqlite_wal: r("sqlite-WAL"),
            fsync: r("fsync4k"),
            fsync_raw: ratio(s.med("fsync4k", setup), s.med("fsync4k", "raw-fdatasync")),
            seq_write: r("seq-write"),
            seq_read: r("seq-read"),
            untar: r("untar"),
            rm: r("rm"),
            dbench: r("dbench"),
            p99_16: p("fio-write-64k-16"),
            p99_16_4k: p("fio-randwrite-4k-16"),
            save_rename: r("save-rename"),
        }
    }

    fn line(&self, rss: Option<(u64, u64)>) -> String {
        format!(
            "seq-write/ext4={} seq-read/ext4={} untar-time/ext4={} rm-time/ext4={} dbench/ext4={} p99-16w/ext4={} save-rename/ext4={} rss-peak={}MiB",
            fmt_ratio(self.seq_write),
            fmt_ratio(self.seq_read),
            fmt_ratio(self.untar),
            fmt_ratio(self.rm),
            fmt_ratio(self.dbench),
            fmt_ratio(self.p99_16),
            fmt_ratio(self.save_rename),
            rss.map_or("n/a".into(), |r| format!("{:.0}", r.0 as f64 / 1048576.0))
        )
    }
}

fn render(
    cfg: &Config,
    rep: &Report,
    costs: &[(FsyncScenario, corework::FsyncCost)],
    batch: bool,
    elapsed: Duration,
) -> (String, String) {
    let s = &rep.samples;
    let mut md = String::new();
    let date = run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default();
    let _ = writeln!(md, "# rollfs vs ext4 — side-by-side benchmarks\n");
    let _ = writeln!(
        md,
        "Produced by `cargo run --release -p rollfs-benches --bin compare{}` on {} in {:.0} s. \
         Medians of {} interleaved rounds (rollfs, ext4, bindfs, rollfs, ext4, bindfs, ...).\n",
        match (cfg.quick, &cfg.baseline) {
            (true, Some(b)) => format!(" -- --quick --baseline {}", b.display()),
            (false, Some(b)) => format!(" -- --baseline {}", b.display()),
            (true, None) => " -- --quick".to_string(),
            (false, None) => String::new(),
        },
        date.trim(),
        elapsed.as_secs_f64(),
        cfg.rounds
    );
    let _ = writeln!(md, "## Machine\n\n{}", machine(&cfg.work));
    let _ = writeln!(
        md,
        "Load average at the end: {} (other processes on the machine share its 2 cores and its disk; \
         the absolute figures move with that load).\n",
        fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut ph = String::new();
    for (i, (name, at)) in rep.phases.iter().enumerate() {
        let end = rep.phases.get(i + 1).map_or(elapsed.as_secs_f64(), |p| p.1);
        let _ = write!(ph, "{name} {:.0} s; ", end - at);
    }
    let _ = writeln!(md, "Time per phase: {}\n", ph.trim_end_matches("; "));
    let _ = writeln!(
        md,
        "Setups: rollfs through FUSE on a {0} MiB image file; ext4 on a loop device over a {0} MiB image file; \
         bindfs (FUSE passthrough) over a directory; raw = a plain 4 KiB pwrite+fdatasync loop on a file. \
         Images are written out in full before mkfs (not fallocated). All in `{1}`. \
         SQLite {2}, compile option ENABLE_BATCH_ATOMIC_WRITE: {3}.\n",
        cfg.image_size >> 20,
        cfg.work.display(),
        rusqlite::version(),
        if batch { "yes" } else { "NO" }
    );

    // Headline ratios.
    let base = cfg.baseline.is_some();
    let _ = writeln!(md, "## Headline ratios (goals from issues 7 and 14)\n");
    if base {
        let _ = writeln!(
            md,
            "`rollfs before` is the `--baseline` binary ({}{}), run in the same rounds on the same disk.\n\n\
             | ratio | measured | rollfs before | goal |\n|---|---|---|---|",
            cfg.baseline.as_ref().unwrap().display(),
            cfg.baseline_options.as_ref().map(|o| format!(", mounted with -o {o}")).unwrap_or_default()
                + &cfg.baseline_features.as_ref().map(|f| format!(", its image made with -O {f}")).unwrap_or_default()
        );
    } else {
        let _ = writeln!(md, "| ratio | measured | goal |\n|---|---|---|");
    }
    let now = Extra::of(rep, "rollfs");
    let before = Extra::of(rep, "rollfs-before");
    let mib = |r: Option<(u64, u64)>| r.map_or("n/a".into(), |r| format!("{:.0} MiB", r.0 as f64 / 1048576.0));
    let rss_goal = format!("≤ caches ({ROLLFS_CACHES_MIB} MiB) + {RSS_ALLOWANCE_MIB} MiB");
    type Pick = fn(&Extra) -> Option<f64>;
    let ratios: [(&str, Pick, &str); 13] = [
        ("SQLite rollfs DELETE (atomic writes) / ext4 DELETE", |e| e.sqlite_atomic_delete, "≥ 2"),
        ("SQLite rollfs DELETE (atomic writes) / ext4 WAL", |e| e.sqlite_atomic_wal, "≥ 1.2"),
        ("SQLite rollfs WAL / ext4 WAL", |e| e.sqlite_wal, "≥ 1"),
        ("4 KiB write+fsync rollfs / ext4", |e| e.fsync, "≥ 1.5"),
        ("4 KiB write+fsync rollfs / raw pwrite+fdatasync", |e| e.fsync_raw, "≥ 0.8"),
        ("sequential write 1 MiB + fsync, rollfs / ext4", |e| e.seq_write, "≥ 0.9"),
        ("cold sequential read, rollfs / ext4", |e| e.seq_read, "≥ 0.8"),
        ("untar + sync, time rollfs / ext4", |e| e.untar, "≤ 2"),
        ("rm -rf + sync, time rollfs / ext4", |e| e.rm, "≤ 2"),
        ("dbench rollfs / ext4", |e| e.dbench, "≥ 0.5"),
        ("p99 fsync, 16 writers (fio 64 KiB), rollfs / ext4", |e| e.p99_16, "≤ 2"),
        ("p99 fsync, 16 writers (fio 4 KiB random), rollfs / ext4", |e| e.p99_16_4k, "≤ 2"),
        ("save-by-rename rollfs / ext4", |e| e.save_rename, "≥ 1.2"),
    ];
    let lines = ratios
        .iter()
        .map(|&(label, pick, goal)| (label, fmt_ratio(pick(&now)), fmt_ratio(pick(&before)), goal))
        .chain([("rollfs daemon peak resident memory", mib(rep.rss), mib(rep.rss_before), rss_goal.as_str())]);
    for (label, m, b, goal) in lines {
        if base {
            let _ = writeln!(md, "| {label} | {m} | {b} | {goal} |");
        } else {
            let _ = writeln!(md, "| {label} | {m} | {goal} |");
        }
    }
    let (r1, r2, r3, r4) = (now.sqlite_atomic_delete, now.sqlite_atomic_wal, now.fsync, now.fsync_raw);
    let extra = now;
    let _ =
        writeln!(md, "\nSQLite figures are the geometric mean of the insert, update and delete rates (each below).\n");
    let _ = writeln!(md, "![ratios](latest.svg)\n");

    let row = |md: &mut String, label: &str, key: &str, unit: &str| {
        let r = s.med(key, "rollfs");
        let e = s.med(key, "ext4");
        let b = s.med(key, "bindfs");
        let runs = s.n(key, "rollfs").max(s.n(key, "ext4"));
        if base {
            let o = s.med(key, "rollfs-before");
            let _ = writeln!(
                md,
                "| {label} | {} | {} | {} | {} | {} | {} | {runs} | {unit} |",
                fmt_num(r),
                fmt_num(o),
                fmt_num(e),
                fmt_num(b),
                fmt_ratio(ratio(r, e)),
                fmt_ratio(ratio(o, e))
            );
        } else {
            let _ = writeln!(
                md,
                "| {label} | {} | {} | {} | {} | {runs} | {unit} |",
                fmt_num(r),
                fmt_num(e),
                fmt_num(b),
                fmt_ratio(ratio(r, e))
            );
        }
    };
    let header = if base {
        "| workload | rollfs | rollfs before | ext4 | bindfs | rollfs/ext4 | before/ext4 | runs | unit |\n|---|---|---|---|---|---|---|---|---|"
    } else {
        "| workload | rollfs | ext4 | bindfs | rollfs/ext4 | runs | unit |\n|---|---|---|---|---|---|---|"
    };

    let _ = writeln!(md, "## 4 KiB write + fsync loop (one thread)\n\n{header}");
    row(&mut md, "4 KiB pwrite + fsync", "fsync4k", "ops/s");
    let raw = s.med("fsync4k", "raw-fdatasync");
    let _ = writeln!(
        md,
        "\nraw 4 KiB pwrite + fdatasync on a file in the work dir: **{}** ops/s (p99 {} µs) at random \
         blocks of a 16 MiB file; **{}** ops/s (p99 {} µs) writing its blocks in order (a log's \
         pattern: rollfs's image sees sequential writes, so it can beat the random raw loop on \
         a disk where sequential writes are cheaper).",
        fmt_num(raw),
        fmt_num(rep.fio_p99.med("fsync4k", "raw-fdatasync")),
        fmt_num(s.med("fsync4k", "raw-fdatasync-seq")),
        fmt_num(rep.fio_p99.med("fsync4k", "raw-fdatasync-seq"))
    );
    let _ = writeln!(
        md,
        "rollfs's CPU-bound rate, the same loop on an image in RAM (/dev/shm): **{}** ops/s. \
         Device verdict: {}.\n",
        fmt_num(s.med("fsync4k", "rollfs-ram")),
        disk_verdict(raw, s.med("fsync4k", "rollfs-ram"), s.med("fsync4k", "rollfs"))
    );
    // "p99 latency (µs): rollfs X, ext4 Y, bindfs Z[, rollfs before W]." of a workload.
    let p99_line = |key: &str| {
        let p = |setup: &str| fmt_num(rep.fio_p99.med(key, setup));
        let before = if base { format!(", rollfs before {}", p("rollfs-before")) } else { String::new() };
        format!("p99 latency (µs): rollfs {}, ext4 {}, bindfs {}{before}.", p("rollfs"), p("ext4"), p("bindfs"))
    };
    let _ = writeln!(md, "{}\n", p99_line("fsync4k"));
    if let Some(f) = &rep.fsync_stats {
        let _ = writeln!(md, "{f}\n");
    }

    let _ = writeln!(md, "## SQLite, one row per transaction, synchronous=FULL\n\n{header}");
    for j in JOURNALS {
        for op in SQL_OPS {
            row(&mut md, &format!("{j} {op:?}"), &format!("sqlite-{j}-{op:?}"), "TPS");
        }
        row(&mut md, &format!("**{j} (geomean)**"), &format!("sqlite-{j}"), "TPS");
    }
    if cfg.quick {
        let _ = writeln!(md, "\n(--quick: SQLite not run on bindfs.)");
    }
    if !rep.atomic.is_empty() {
        let _ = writeln!(
            md,
            "\nrollfs counters during the first SQLite round (ROLLFS_IOC_GET_STATS), per journal mode:\n\n\
             | journal | transactions | FUSE requests / transaction | device flushes / transaction | atomic starts (driver) | atomic commits (core) | atomic aborts | fsyncs | checkpoints |\n|---|---|---|---|---|---|---|---|---|"
        );
        for l in &rep.atomic {
            let _ = writeln!(md, "{l}");
        }
    }

    let _ = writeln!(md, "\n## fio, fsync after every write (write IOPS, all jobs)\n\n{header}");
    for (rw, bs) in [("randwrite", "4k"), ("write", "64k")] {
        for jobs in [1, 4, 16] {
            row(&mut md, &format!("{rw} {bs}, {jobs} jobs"), &format!("fio-{rw}-{bs}-{jobs}"), "IOPS");
        }
    }
    let _ = writeln!(
        md,
        "\np99 fsync latency (µs, worst job; fio's sync percentiles):\n\n| workload | rollfs | ext4 | bindfs |{}\n|---|---|---|---|{}",
        if base { " rollfs before |" } else { "" },
        if base { "---|" } else { "" }
    );
    for (rw, bs) in [("randwrite", "4k"), ("write", "64k")] {
        for jobs in [1, 4, 16] {
            let k = format!("fio-{rw}-{bs}-{jobs}");
            let _ = writeln!(
                md,
                "| {rw} {bs}, {jobs} jobs | {} | {} | {} |{}",
                fmt_num(rep.fio_p99.med(&k, "rollfs")),
                fmt_num(rep.fio_p99.med(&k, "ext4")),
                fmt_num(rep.fio_p99.med(&k, "bindfs")),
                if base { format!(" {} |", fmt_num(rep.fio_p99.med(&k, "rollfs-before"))) } else { String::new() }
            );
        }
    }

    let _ = writeln!(md, "\n## dbench ({} clients, {} s)\n\n{header}", cfg.dbench_clients, cfg.dbench_secs);
    row(&mut md, "dbench throughput", "dbench", "MB/s");

    let _ = writeln!(
        md,
        "\n## Sequential write and cold read ({} MiB)\n\n\
         Written in 1 MiB writes and fsync'd (dd bs=1M conv=fsync); read back in 1 MiB reads after \
         `echo 3 > /proc/sys/vm/drop_caches` (rollfs keeps its own clean cache, {} MiB at most).\n\n{header}",
        cfg.seq_bytes >> 20,
        ROLLFS_CACHES_MIB / 2
    );
    row(&mut md, "sequential write + fsync", "seq-write", "MB/s");
    row(&mut md, "cold sequential read", "seq-read", "MB/s");

    let _ = writeln!(
        md,
        "\n## Untar and rm -rf of a tree of small files\n\n\
         {} entries ({} files of 1–24 KiB, ~120 MB) unpacked by `tar -xf` then made durable (syncfs and an fsync \
         of the directories: the kernel sends no syncfs to a FUSE daemon; rollfs's directory fsync makes the whole \
         tree durable); then `rm -rf` and the same. Seconds, lower is better (the ratio column is time rollfs / ext4).\n\n{header}",
        rep.tree_entries,
        fsops::TREE_TOP_DIRS * fsops::TREE_SUB_DIRS * fsops::TREE_FILES_PER_DIR
    );
    row(&mut md, "untar + sync", "untar", "s");
    row(&mut md, "rm -rf + sync", "rm", "s");
    op_counts_lines(&mut md, rep, &["untar + sync", "rm -rf + sync"]);

    let _ = writeln!(
        md,
        "\n## Save-by-rename\n\n\
         Write a 4 KiB temporary file, fsync it, rename it over the target, fsync the directory.\n\n{header}"
    );
    row(&mut md, "save-by-rename", "save-rename", "ops/s");
    let _ = writeln!(md, "\n{}", p99_line("save-rename"));
    op_counts_lines(&mut md, rep, &["save-by-rename"]);

    let _ = writeln!(
        md,
        "\n## Memory\n\n\
         The rollfs daemon's resident memory (`/proc/PID/status`) after every workload above on the {} MiB image: \
         peak {}, now {}. Its caches are bounded at {} MiB (dirty data and nodes 64 MiB, clean blocks 64 MiB, the \
         defaults); the goal allows {} MiB beyond them (program, FUSE buffers, per-inode state).",
        cfg.image_size >> 20,
        rep.rss.map_or("n/a".into(), |r| format!("{:.0} MiB", r.0 as f64 / 1048576.0)),
        rep.rss.map_or("n/a".into(), |r| format!("{:.0} MiB", r.1 as f64 / 1048576.0)),
        ROLLFS_CACHES_MIB,
        RSS_ALLOWANCE_MIB
    );
    if base {
        let _ = writeln!(
            md,
            "The baseline daemon after the same workloads: peak {}.",
            rep.rss_before.map_or("n/a".into(), |r| format!("{:.0} MiB", r.0 as f64 / 1048576.0))
        );
    }
    if !rep.rss_by_phase.is_empty() {
        let _ = writeln!(md, "\n| after | peak resident (MiB) | resident (MiB) |\n|---|---|---|");
        for (after, peak, now) in &rep.rss_by_phase {
            let _ = writeln!(md, "| {after} | {:.0} | {:.0} |", *peak as f64 / 1048576.0, *now as f64 / 1048576.0);
        }
    }

    let _ = writeln!(
        md,
        "\n## Recovery: mount time\n\n\
         rollfs images are made with `rollfs mkfs` (image file written out in full) and then written through the core on the native \
         file device (`rollfs::device::FileDevice`): 16 files made durable by a checkpoint, then N × (4 KiB overwrite + fsync) \
         and a power loss (the filesystem is dropped without unmount); \"clean\" is a clean unmount. Each measurement mounts a \
         fresh copy of the image with the page cache dropped. *core* = `Filesystem::mount` on the file device (roll-forward \
         included); *CLI* = `rollfs mount IMG MNT` until the mountpoint is live (process start, recovery, FUSE init). \
         ext4: a sparse image on a loop device, the same fsync loop, the image copied while mounted (a crash image), then \
         `losetup` + `mount` timed (journal replay included). Median of {} run(s).\n\n\
         | image | state | rollfs core mount (ms) | nodes walked | rollfs CLI mount (ms) | ext4 mount (ms) | rollfs CLI/ext4 | notes |\n|---|---|---|---|---|---|---|---|",
        cfg.recovery_rounds
    );
    for r in &rep.recovery {
        let _ = writeln!(
            md,
            "| {} GiB | {} | {} | {} | {} | {} | {} | {} |",
            r.size >> 30,
            r.fsyncs.map_or("clean unmount".into(), |n| format!("{n} fsyncs since checkpoint")),
            fmt_num(r.core_cold_ms),
            r.walked.map_or("n/a".into(), |w| w.to_string()),
            fmt_num(r.cli_ms),
            fmt_num(r.ext4_ms),
            fmt_ratio(ratio(r.cli_ms, r.ext4_ms)),
            r.note
        );
    }

    let _ = writeln!(
        md,
        "\n## Device cost per fsync (core on MemDevice)\n\nIdeal: 1 data block, 1 node block, 1 flush (8 KiB written).\n\n\
         | scenario | data blocks | node blocks | meta blocks | device writes | bytes written | flushes | FUA writes | checkpoint fallbacks |\n|---|---|---|---|---|---|---|---|---|"
    );
    for (sc, c) in costs {
        let _ = writeln!(
            md,
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} | {:.3} |",
            sc.label(),
            c.data_blocks,
            c.node_blocks,
            c.meta_blocks,
            c.device_writes,
            c.bytes_written,
            c.flushes,
            c.fua_writes,
            c.checkpoint_fallbacks
        );
    }

    if !rep.notes.is_empty() {
        let _ = writeln!(md, "\n## Notes\n");
        for n in &rep.notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    let raw_ops = s.med("fsync4k", "raw-fdatasync");
    let ram_ops = s.med("fsync4k", "rollfs-ram");
    let verdict = disk_verdict(raw_ops, ram_ops, s.med("fsync4k", "rollfs"));
    let line = format!("{} {} {verdict}", ratios_line(r1, r2, r3, r4), extra.line(rep.rss));
    let _ = writeln!(md, "\n```\n{line}\n```");

    // Chart.
    let mut bars: Vec<(String, Option<f64>)> = vec![
        ("SQLite atomic / ext4 DELETE".into(), r1),
        ("SQLite atomic / ext4 WAL".into(), r2),
        ("fsync 4k / ext4".into(), r3),
        ("fsync 4k / raw fdatasync".into(), r4),
    ];
    for j in JOURNALS {
        bars.push((
            format!("SQLite {j}: rollfs/ext4"),
            ratio(s.med(&format!("sqlite-{j}"), "rollfs"), s.med(&format!("sqlite-{j}"), "ext4")),
        ));
    }
    for (rw, bs) in [("randwrite", "4k"), ("write", "64k")] {
        for jobs in [1, 4, 16] {
            let k = format!("fio-{rw}-{bs}-{jobs}");
            bars.push((format!("fio {rw} {bs} ×{jobs}: rollfs/ext4"), ratio(s.med(&k, "rollfs"), s.med(&k, "ext4"))));
        }
    }
    bars.push(("dbench: rollfs/ext4".into(), ratio(s.med("dbench", "rollfs"), s.med("dbench", "ext4"))));
    bars.push(("sequential write: rollfs/ext4".into(), extra.seq_write));
    bars.push(("cold sequential read: rollfs/ext4".into(), extra.seq_read));
    bars.push(("untar: ext4 time / rollfs time".into(), extra.untar.map(|x| 1.0 / x)));
    bars.push(("rm -rf: ext4 time / rollfs time".into(), extra.rm.map(|x| 1.0 / x)));
    bars.push(("save-by-rename: rollfs/ext4".into(), extra.save_rename));
    let svg = ratio_chart("rollfs relative to the reference (higher is better)", &bars);
    let _ = fs::write(cfg.results.join("latest.svg"), svg);
    (md, line)
}
