//! Running things on the host for the side-by-side benchmarks (`compare`, `datasum`):
//! commands, image files, the rollfs FUSE daemon as a guard that unmounts on drop, and
//! the 4 KiB write+fsync loop every comparison starts with.

use crate::corework::Rng;
use crate::stats::percentile;
use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub type Res<T> = Result<T, String>;

pub fn run(cmd: &str, args: &[&str]) -> Res<String> {
    let out = Command::new(cmd).args(args).stdin(Stdio::null()).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {}: {}: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Writes an image file out in full (zeros), so the host filesystem has allocated every
/// block before the benchmark (fallocated extents would cost a journal commit per flush).
pub fn write_out(path: &Path, size: u64) -> Res<()> {
    let mut f = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let chunk = vec![0u8; 8 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all().map_err(|e| format!("{}: {e}", path.display()))
}

pub fn is_mounted(mnt: &Path) -> bool {
    let Ok(abs) = fs::canonicalize(mnt) else { return false };
    let Ok(info) = fs::read_to_string("/proc/self/mountinfo") else { return false };
    let want = abs.to_string_lossy().replace(' ', "\\040");
    info.lines().any(|l| l.split(' ').nth(4) == Some(want.as_str()))
}

pub fn drop_caches() {
    if is_root() {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        let _ = fs::write("/proc/sys/vm/drop_caches", "3");
    }
}

/// A `rollfs mount -f` daemon; dropping it unmounts and waits for the daemon to exit.
pub struct Rollfs {
    pub mnt: PathBuf,
    child: Option<Child>,
}

impl Rollfs {
    /// The daemon's process id (for its memory figures).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn mount(bin: &Path, image: &Path, mnt: &Path, log: &Path) -> Res<Rollfs> {
        Self::mount_with(bin, image, mnt, log, None)
    }

    /// [`Rollfs::mount`] with `-o OPTIONS` (e.g. `uring`, the io_uring transport).
    pub fn mount_with(bin: &Path, image: &Path, mnt: &Path, log: &Path, options: Option<&str>) -> Res<Rollfs> {
        fs::create_dir_all(mnt).map_err(|e| e.to_string())?;
        let logf = File::create(log).map_err(|e| e.to_string())?;
        let child = Command::new(bin)
            .args(["mount", "-f"])
            .args(options.map(|o| ["-o", o]).into_iter().flatten())
            .arg(image)
            .arg(mnt)
            .stdin(Stdio::null())
            .stdout(logf.try_clone().map_err(|e| e.to_string())?)
            .stderr(logf)
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let mut g = Rollfs { mnt: mnt.to_owned(), child: Some(child) };
        let start = Instant::now();
        while !is_mounted(mnt) {
            if let Some(st) = g.child.as_mut().unwrap().try_wait().ok().flatten() {
                g.child = None;
                return Err(format!(
                    "rollfs mount exited ({st}): {}",
                    fs::read_to_string(log).unwrap_or_default().trim()
                ));
            }
            if start.elapsed() > Duration::from_secs(30) {
                return Err("rollfs mount did not come up within 30 s".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(g)
    }
}

impl Drop for Rollfs {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        let m = self.mnt.to_str().unwrap().to_string();
        if run("umount", &[&m]).is_err() {
            let _ = run("fusermount3", &["-u", &m]);
        }
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if start.elapsed() < Duration::from_secs(60) => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    eprintln!("compare: rollfs daemon did not exit after unmount; killing it");
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
            }
        }
        if is_mounted(&self.mnt) {
            let _ = run("umount", &["-l", &m]);
        }
    }
}

pub const LOOP_BLOCKS: u64 = 4096;

/// Writes out the 16 MiB file of the fsync loop (once) and makes it durable.
pub fn fsync_loop_prepare(dir: &Path) -> Res<File> {
    let path = dir.join("fsync-loop.dat");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    const BLOCKS: u64 = LOOP_BLOCKS;
    if f.metadata().map_err(|e| e.to_string())?.len() < BLOCKS * 4096 {
        let z = vec![0u8; 1 << 20];
        for i in 0..(BLOCKS * 4096 / z.len() as u64) {
            f.write_all_at(&z, i * z.len() as u64).map_err(|e| e.to_string())?;
        }
        f.sync_all().map_err(|e| e.to_string())?;
    }
    Ok(f)
}

pub fn fsync_loop(dir: &Path, secs: f64, datasync: bool) -> Res<(f64, f64)> {
    fsync_loop_at(dir, secs, datasync, false)
}

/// As [`fsync_loop`]; `sequential` writes the blocks in order (wrapping) instead of at
/// random: the access pattern of a log, to tell the disk's random/sequential gap apart
/// from the filesystem's own cost.
pub fn fsync_loop_at(dir: &Path, secs: f64, datasync: bool, sequential: bool) -> Res<(f64, f64)> {
    const BLOCKS: u64 = LOOP_BLOCKS;
    let f = fsync_loop_prepare(dir)?;
    let mut rng = Rng::new(0x5eed);
    let buf = [0xabu8; 4096];
    let mut lat = Vec::new();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs {
        let t0 = Instant::now();
        let block = if sequential { lat.len() as u64 % BLOCKS } else { rng.below(BLOCKS) };
        f.write_all_at(&buf, block * 4096).map_err(|e| e.to_string())?;
        if datasync { f.sync_data() } else { f.sync_all() }.map_err(|e| format!("fsync: {e}"))?;
        lat.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let el = start.elapsed().as_secs_f64();
    Ok((lat.len() as f64 / el, percentile(&lat, 99.0).unwrap_or(0.0)))
}

pub fn find_rollfs_bin(notes: &mut Vec<String>) -> Option<PathBuf> {
    if let Ok(p) = std::env::var("ROLLFS_BIN") {
        return Some(PathBuf::from(p));
    }
    let sibling = std::env::current_exe().ok()?.parent()?.join("rollfs");
    if sibling.exists() {
        return Some(sibling);
    }
    // Build it next to this program (same profile and target dir as `cargo run --release`).
    eprintln!("compare: building the rollfs binary (cargo build --release -p rollfs)");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ok = Command::new(cargo)
        .args(["build", "--release", "-p", "rollfs"])
        .current_dir(workspace_dir())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok && sibling.exists() {
        Some(sibling)
    } else {
        notes.push("could not find or build the rollfs binary (set ROLLFS_BIN); rollfs rows are missing".into());
        None
    }
}

pub fn workspace_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}
