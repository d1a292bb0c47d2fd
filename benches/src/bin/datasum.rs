//! `datasum`: what data checksums cost, side by side with `-O nodatasum` (issue 17).
//!
//! ```sh
//! sudo ROLLFS_BIN=target/release/rollfs ./target/release/datasum [--quick]
//! ```
//!
//! Two rollfs images of the same size on the disk of the work directory (default
//! `<workspace>/target/datasum-work`), written out in full, one made by `rollfs mkfs` (data
//! checksums on, the default) and one by `rollfs mkfs -O nodatasum`, both mounted through
//! FUSE for the whole run. Each round runs every workload on both, alternating which goes
//! first; medians are reported:
//!
//! - 4 KiB pwrite + fsync loop (ops/s), beside the raw pwrite + fdatasync loop on a plain
//!   file of the same disk (the disk's own rate: a disk-bound run says so);
//! - sequential write of one file in 1 MiB writes, then fsync (MB/s);
//! - cold sequential read of that file after dropping the host's caches (MB/s);
//! - the same write and read through the core on a RAM device (no FUSE, no disk): the CPU
//!   cost of computing and verifying the checksums on its own.
//!
//! Writes `benches/results/datasum-latest.md`; the last line printed is the
//! `datasum overhead:` line (positive: checksums are slower by that much).

use rollfs_benches::host::*;
use rollfs_benches::stats::{fmt_num, median};
use rollfs_core::{Filesystem, MemDevice, MkfsOptions, MountOptions, Timestamp};
use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

struct Args {
    quick: bool,
    work: PathBuf,
    results: PathBuf,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        quick: false,
        work: workspace_dir().join("target").join("datasum-work"),
        results: workspace_dir().join("benches").join("results"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            "--work-dir" => a.work = PathBuf::from(it.next().ok_or("--work-dir needs a directory")?),
            "--results" => a.results = PathBuf::from(it.next().ok_or("--results needs a directory")?),
            "-h" | "--help" => {
                println!(
                    "usage: datasum [--quick] [--work-dir DIR] [--results DIR]\n  env ROLLFS_BIN: the rollfs binary to use"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(a)
}

/// Sequential write of `bytes` in 1 MiB writes, then fsync: MB/s.
fn seq_write(path: &Path, bytes: u64) -> Res<f64> {
    let _ = fs::remove_file(path);
    let mut f = OpenOptions::new().create(true).write(true).truncate(true).open(path).map_err(|e| e.to_string())?;
    let mut chunk = vec![0u8; 1 << 20];
    let t0 = Instant::now();
    for i in 0..bytes / chunk.len() as u64 {
        // Different contents per chunk, so nothing can be shared or compressed away.
        chunk[..8].copy_from_slice(&i.to_le_bytes());
        f.write_all(&chunk).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    f.sync_all().map_err(|e| format!("fsync {}: {e}", path.display()))?;
    Ok(bytes as f64 / 1e6 / t0.elapsed().as_secs_f64())
}

/// Cold sequential read of the whole file (host caches dropped first): MB/s.
fn cold_read(path: &Path) -> Res<f64> {
    drop_caches();
    let mut f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    let t0 = Instant::now();
    loop {
        let n = f.read(&mut buf).map_err(|e| format!("read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    Ok(total as f64 / 1e6 / t0.elapsed().as_secs_f64())
}

/// Through the core on a RAM device: (write MB/s, read MB/s) of `bytes` in 1 MiB calls.
fn core_rw(checksums: bool, bytes: u64) -> Res<(f64, f64)> {
    let t = Timestamp::new(1_700_000_000, 0);
    let blocks = bytes / 4096 * 2 + 16_384;
    let opts = MkfsOptions { data_checksums: checksums, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(blocks), &opts).map_err(|e| e.to_string())?;
    let mount = MountOptions { dirty_bytes_max: 256 << 20, ..Default::default() };
    let mut fs = Filesystem::mount(dev, &mount, t).map_err(|e| e.to_string())?;
    let ino = fs.create(1, b"f", 0o644, Default::default(), t).map_err(|e| e.to_string())?.ino;
    let mut chunk = vec![0u8; 1 << 20];
    let t0 = Instant::now();
    for i in 0..bytes / chunk.len() as u64 {
        chunk[..8].copy_from_slice(&i.to_le_bytes());
        fs.write(ino, i * chunk.len() as u64, &chunk, t).map_err(|e| e.to_string())?;
    }
    fs.sync(t).map_err(|e| e.to_string())?;
    let write = bytes as f64 / 1e6 / t0.elapsed().as_secs_f64();
    // A fresh mount: nothing of the file is cached, every block comes from the device.
    let dev = fs.unmount(t).map_err(|e| e.to_string())?;
    let mut fs = Filesystem::mount(dev, &mount, t).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    for i in 0..bytes / chunk.len() as u64 {
        fs.read(ino, i * chunk.len() as u64, &mut chunk).map_err(|e| e.to_string())?;
    }
    let read = bytes as f64 / 1e6 / t0.elapsed().as_secs_f64();
    Ok((write, read))
}

#[derive(Default)]
struct Samples(std::collections::BTreeMap<(&'static str, &'static str), Vec<f64>>);

impl Samples {
    fn add(&mut self, workload: &'static str, setup: &'static str, v: f64) {
        self.0.entry((workload, setup)).or_default().push(v);
    }
    fn median(&self, workload: &'static str, setup: &'static str) -> Option<f64> {
        self.0.get(&(workload, setup)).and_then(|v| median(v))
    }
}

/// Slowdown of checksums in percent (positive: slower).
fn overhead(s: &Samples, workload: &'static str) -> Option<f64> {
    let on = s.median(workload, "datasum")?;
    let off = s.median(workload, "nodatasum")?;
    Some((off - on) / off * 100.0)
}

fn fmt_pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:+.1} %"))
}

fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    format!("{cores} cores, {cpu}")
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("datasum: {e}");
            std::process::exit(2);
        }
    };
    match run_all(&args) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("datasum: {e}");
            std::process::exit(1);
        }
    }
}

fn run_all(args: &Args) -> Res<String> {
    if !is_root() {
        return Err("needs root (FUSE mounts and dropping the host's caches)".into());
    }
    let mut notes = Vec::new();
    let bin = find_rollfs_bin(&mut notes).ok_or_else(|| notes.join("; "))?;
    fs::create_dir_all(&args.work).map_err(|e| format!("{}: {e}", args.work.display()))?;
    let work = fs::canonicalize(&args.work).map_err(|e| e.to_string())?;
    let (rounds, image_size, file_bytes, core_bytes, loop_secs) = if args.quick {
        (3, 1u64 << 30, 256u64 << 20, 64u64 << 20, 3.0)
    } else {
        (5, 2 << 30, 512 << 20, 128 << 20, 5.0)
    };
    let started = Instant::now();
    let mut s = Samples::default();

    eprintln!("datasum: core on a RAM device ({} MiB, {rounds} rounds)", core_bytes >> 20);
    for round in 0..rounds {
        let order = if round % 2 == 0 { [true, false] } else { [false, true] };
        for on in order {
            let (w, r) = core_rw(on, core_bytes)?;
            let name = if on { "datasum" } else { "nodatasum" };
            s.add("core-write", name, w);
            s.add("core-read", name, r);
        }
    }

    let mut mounts: Vec<(&'static str, Rollfs)> = Vec::new();
    for (name, extra) in [("datasum", None), ("nodatasum", Some("nodatasum"))] {
        let img = work.join(format!("{name}.img"));
        eprintln!("datasum: {name} image ({} MiB, written out)", image_size >> 20);
        write_out(&img, image_size)?;
        let mut a = vec!["mkfs", "-q", "--force"];
        if let Some(o) = extra {
            a.extend(["-O", o]);
        }
        a.push(img.to_str().unwrap());
        run(bin.to_str().unwrap(), &a)?;
        let g = Rollfs::mount(&bin, &img, &work.join(format!("{name}-mnt")), &work.join(format!("{name}-mount.log")))?;
        mounts.push((name, g));
    }
    let raw_dir = work.join("raw");
    fs::create_dir_all(&raw_dir).map_err(|e| e.to_string())?;

    for round in 0..rounds {
        eprintln!("datasum: round {} of {rounds}", round + 1);
        let (ops, _) = fsync_loop_at(&raw_dir, loop_secs, true, false)?;
        s.add("fsync4k", "raw-fdatasync", ops);
        let mut order: Vec<usize> = (0..mounts.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for &i in &order {
            let (name, g) = &mounts[i];
            let (ops, _) = fsync_loop(&g.mnt, loop_secs, false)?;
            s.add("fsync4k", name, ops);
        }
        for &i in &order {
            let (name, g) = &mounts[i];
            let f = g.mnt.join("seq.dat");
            s.add("seq-write", name, seq_write(&f, file_bytes)?);
        }
        for &i in &order {
            let (name, g) = &mounts[i];
            let f = g.mnt.join("seq.dat");
            s.add("cold-read", name, cold_read(&f)?);
            fs::remove_file(&f).map_err(|e| e.to_string())?;
        }
    }
    drop(mounts);

    let commit = run("git", &["-C", workspace_dir().to_str().unwrap(), "rev-parse", "--short", "HEAD"])
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let date = run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).map(|d| d.trim().to_string()).unwrap_or_default();
    let raw = s.median("fsync4k", "raw-fdatasync");
    let mut md = String::new();
    let _ = writeln!(md, "# Data checksums: cost side by side with `-O nodatasum`\n");
    let _ = writeln!(
        md,
        "{date}, commit {commit}, {}; {rounds} rounds, medians; `datasum{}` ({:.0} s). \
         Images of {} MiB written out in full on the work directory's disk, mounted through FUSE; \
         files of {} MiB; the core rows write and read {} MiB on a RAM device (no FUSE, no disk).\n",
        machine(),
        if args.quick { " --quick" } else { "" },
        started.elapsed().as_secs_f64(),
        image_size >> 20,
        file_bytes >> 20,
        core_bytes >> 20
    );
    let _ = writeln!(md, "| workload | checksums on | `-O nodatasum` | overhead |\n|---|---|---|---|");
    for (w, unit) in [
        ("fsync4k", "4 KiB write+fsync, ops/s"),
        ("seq-write", "sequential write + fsync, MB/s"),
        ("cold-read", "cold sequential read, MB/s"),
        ("core-write", "core on RAM: write + sync, MB/s"),
        ("core-read", "core on RAM: read, MB/s"),
    ] {
        let _ = writeln!(
            md,
            "| {unit} | {} | {} | {} |",
            fmt_num(s.median(w, "datasum")),
            fmt_num(s.median(w, "nodatasum")),
            fmt_pct(overhead(&s, w))
        );
    }
    let _ = writeln!(
        md,
        "\nThe disk's own rate: raw 4 KiB pwrite + fdatasync on a plain file, {} ops/s (median). \
         Overhead is (nodatasum − datasum) / nodatasum; a difference within the spread of the rounds is noise:",
        fmt_num(raw)
    );
    for ((w, setup), v) in &s.0 {
        let _ = writeln!(md, "- {w} / {setup}: {}", v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(", "));
    }
    for n in &notes {
        let _ = writeln!(md, "\nNote: {n}");
    }
    fs::create_dir_all(&args.results).map_err(|e| e.to_string())?;
    let out = args.results.join("datasum-latest.md");
    fs::write(&out, &md).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("{md}\ndatasum: wrote {}", out.display());
    Ok(format!(
        "datasum overhead: fsync4k={} seq-write={} cold-read={} core-write={} core-read={} raw-fdatasync={}/s",
        fmt_pct(overhead(&s, "fsync4k")),
        fmt_pct(overhead(&s, "seq-write")),
        fmt_pct(overhead(&s, "cold-read")),
        fmt_pct(overhead(&s, "core-write")),
        fmt_pct(overhead(&s, "core-read")),
        fmt_num(raw)
    ))
}
