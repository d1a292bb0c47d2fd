//! File-system workloads beyond the fsync loop, run on a mounted directory of each setup
//! by `compare`: a sequential write and cold read (`dd conv=fsync` and a read after the
//! caches are dropped), the unpacking and removal of a tree of small files (untar +
//! sync, `rm -rf` + sync), and save-by-rename (how editors, git and databases replace a
//! file). Also the daemon's memory: peak resident set from `/proc/PID/status`.
//!
//! Each function returns a rate or a time measured around the whole operation, including
//! the step that makes it durable: a benchmark that stops the clock before the data is on
//! the device measures the page cache.

use crate::corework::Rng;
use crate::host::{drop_caches, Res};
use crate::stats::percentile;
use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Bytes per write and read of the sequential workloads (dd's `bs=1M`).
const SEQ_CHUNK_BYTES: usize = 1 << 20;

/// Writes `bytes` to a new file in `dir` in 1 MiB writes, then fsyncs it (`dd
/// conv=fsync`). Returns MB/s (10^6 bytes) over the writes and the fsync.
pub fn seq_write(dir: &Path, bytes: u64) -> Res<f64> {
    let path = dir.join("seq.dat");
    let _ = fs::remove_file(&path);
    let mut chunk = vec![0u8; SEQ_CHUNK_BYTES];
    let mut rng = Rng::new(0xd1d1);
    for w in chunk.chunks_mut(8) {
        w.copy_from_slice(&rng.next_u64().to_le_bytes()[..w.len()]);
    }
    let start = Instant::now();
    let mut f = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all().map_err(|e| format!("fsync {}: {e}", path.display()))?;
    drop(f);
    Ok(bytes as f64 / start.elapsed().as_secs_f64() / 1e6)
}

/// Reads the file `seq_write` left, after dropping the host's caches (a cold read: the
/// kernel's page cache over a FUSE mount and a loop device is dropped with the rest).
/// Returns MB/s; the file is removed afterwards.
pub fn seq_read_cold(dir: &Path) -> Res<f64> {
    let path = dir.join("seq.dat");
    drop_caches();
    let start = Instant::now();
    let mut f = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0u8; SEQ_CHUNK_BYTES];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| format!("read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    let rate = total as f64 / start.elapsed().as_secs_f64() / 1e6;
    drop(f);
    fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    sync_dir(dir)?;
    Ok(rate)
}

/// The shape of the tree `make_tree` builds: about a source tree's (10,000 files of
/// 1–24 KiB in 420 directories, ~120 MB).
pub const TREE_TOP_DIRS: u32 = 20;
pub const TREE_SUB_DIRS: u32 = 20;
pub const TREE_FILES_PER_DIR: u32 = 25;

/// Builds the tree (deterministic contents) under `src/tree` and packs it into
/// `tar_path`, once. Returns the number of entries (files and directories).
pub fn make_tree_tar(src: &Path, tar_path: &Path) -> Res<u64> {
    let entries = u64::from(TREE_TOP_DIRS) * (1 + u64::from(TREE_SUB_DIRS) * (1 + u64::from(TREE_FILES_PER_DIR))) + 1;
    if tar_path.exists() {
        return Ok(entries);
    }
    let root = src.join("tree");
    let _ = fs::remove_dir_all(&root);
    let mut rng = Rng::new(0x7a11);
    let mut block = vec![0u8; 24 << 10];
    for w in block.chunks_mut(8) {
        w.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    for t in 0..TREE_TOP_DIRS {
        for s in 0..TREE_SUB_DIRS {
            let d = root.join(format!("dir{t:02}")).join(format!("sub{s:02}"));
            fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            for i in 0..TREE_FILES_PER_DIR {
                // Sizes skewed small as in source trees: 1 KiB to 24 KiB.
                let kib = 1 + (rng.below(24) * rng.below(24)) / 23;
                let off = rng.below(1024) as usize;
                let len = (kib as usize) << 10;
                let start = off.min(block.len() - len);
                let p = d.join(format!("file{i:03}.c"));
                fs::write(&p, &block[start..start + len]).map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
    }
    let tmp = tar_path.with_extension("tmp");
    run_ok(Command::new("tar").arg("-cf").arg(&tmp).arg("-C").arg(src).arg("tree"))?;
    fs::rename(&tmp, tar_path).map_err(|e| e.to_string())?;
    let _ = fs::remove_dir_all(&root);
    Ok(entries)
}

fn run_ok(cmd: &mut Command) -> Res<()> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

/// Makes everything under `dir` durable: syncfs on its filesystem, then an fsync of the
/// directory itself. The second step is the one that counts on a FUSE mount: the kernel
/// sends no syncfs to a FUSE daemon, and rollfs's directory fsync writes a checkpoint
/// when the directory changed, which covers every dirty file.
pub fn sync_dir(dir: &Path) -> Res<()> {
    let d = File::open(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // SAFETY: syncfs takes an open descriptor, which `d` owns for the whole call.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(format!("syncfs {}: {}", dir.display(), std::io::Error::last_os_error()));
    }
    d.sync_all().map_err(|e| format!("fsync {}: {e}", dir.display()))
}

/// Unpacks `tar_path` into `dir/untar` and makes it durable; then removes it and makes
/// that durable. Returns (untar seconds, rm seconds).
pub fn untar_rm(dir: &Path, tar_path: &Path) -> Res<(f64, f64)> {
    untar_rm_between(dir, tar_path, &mut || {})
}

/// [`untar_rm`], calling `between` after the untar is durable and before `rm -rf` starts
/// (untimed: for the counters of each half).
pub fn untar_rm_between(dir: &Path, tar_path: &Path, between: &mut dyn FnMut()) -> Res<(f64, f64)> {
    let dest = dir.join("untar");
    let _ = fs::remove_dir_all(&dest);
    fs::create_dir(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    sync_dir(dir)?;
    let t = Instant::now();
    run_ok(Command::new("tar").arg("-xf").arg(tar_path).arg("-C").arg(&dest))?;
    sync_dir(&dest)?;
    sync_dir(dir)?;
    let untar = t.elapsed().as_secs_f64();
    between();
    let t = Instant::now();
    run_ok(Command::new("rm").arg("-rf").arg(&dest))?;
    sync_dir(dir)?;
    let rm = t.elapsed().as_secs_f64();
    Ok((untar, rm))
}

/// Save-by-rename for `secs`: write a 4 KiB temporary file, fsync it, rename it over the
/// target, fsync the directory (the sequence that makes the new content durable under
/// its name on every POSIX filesystem). Returns (ops/s, p99 µs, iterations).
pub fn save_by_rename(dir: &Path, secs: f64) -> Res<(f64, f64, u64)> {
    let d = dir.join("save");
    fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    let dirf = File::open(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    let target: PathBuf = d.join("document.txt");
    let tmp: PathBuf = d.join("document.txt.tmp");
    let mut buf = [0u8; 4096];
    let mut lat = Vec::new();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs {
        let t0 = Instant::now();
        buf[..8].copy_from_slice(&(lat.len() as u64).to_le_bytes());
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&tmp)
            .map_err(|e| format!("{}: {e}", tmp.display()))?;
        f.write_all(&buf).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| format!("fsync: {e}"))?;
        drop(f);
        fs::rename(&tmp, &target).map_err(|e| format!("rename: {e}"))?;
        dirf.sync_all().map_err(|e| format!("fsync dir: {e}"))?;
        lat.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    let el = start.elapsed().as_secs_f64();
    let _ = fs::remove_dir_all(&d);
    Ok((lat.len() as f64 / el, percentile(&lat, 99.0).unwrap_or(0.0), lat.len() as u64))
}

/// A process's memory from `/proc/PID/status`: (peak resident, current resident), bytes.
pub fn process_rss(pid: u32) -> Option<(u64, u64)> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let l = s.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = l.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib << 10)
    };
    Some((field("VmHWM:")?, field("VmRSS:")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_run_on_a_plain_directory() {
        let dir = std::env::temp_dir().join(format!("rollfs-fsops-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let mb_s = seq_write(&dir, 3 << 20).unwrap();
        assert!(mb_s > 0.0);
        assert_eq!(fs::metadata(dir.join("seq.dat")).unwrap().len(), 3 << 20);
        assert!(seq_read_cold(&dir).unwrap() > 0.0);
        assert!(!dir.join("seq.dat").exists(), "the cold read removes its file");
        let (ops, p99, n) = save_by_rename(&dir, 0.05).unwrap();
        assert!(ops > 0.0 && p99 > 0.0 && n > 0);
        let me = process_rss(std::process::id()).unwrap();
        assert!(me.0 >= me.1 && me.1 > 0, "peak {} current {}", me.0, me.1);
        let _ = fs::remove_dir_all(&dir);
    }
}
