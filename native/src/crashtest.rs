//! `rollfs crashtest`: CrashMonkey for the real stack. Runs a command on a fresh mount
//! that records its writes (`mount --record-writes`, group commit on), then explores the
//! crash states of the log under the shared crash model (record.rs, rollfs-crash) and
//! checks each one:
//!
//! 1. it mounts (recovery runs) and fsck finds nothing wrong, checked in this process on
//!    the crash image;
//! 2. with `--check CMD`: the recovered image mounts through FUSE and CMD, run by `sh -c`
//!    inside the mount, exits 0. CMD sees `ROLLFS_CRASHTEST_MARKS` (how many marks the
//!    workload had set before the crash point: `rollfs mark` after a step whose effect
//!    must survive), `ROLLFS_CRASHTEST_POINT` and `ROLLFS_CRASHTEST_CWD` (the directory
//!    crashtest was started in); it is killed after `--check-timeout` seconds. The
//!    workload and the check find this rollfs first on their PATH (and in `ROLLFS`).
//!
//! Which states: every crash point (a power loss after any logged write, wait, flush,
//! discard or mark) and per point the variants of [`record::CrashStates`] (none of the
//! writes not yet durable survive, all, all with the newest torn, random subsets some
//! torn, discards zeroed or ignored). When they are more than `--max-states`, the points
//! right after a mark, flush or wait come first, then the others spread evenly; a state
//! whose image equals one already checked with as many marks before it is skipped (and
//! counted). `--shard K/N` checks
//! the chosen states whose index is K mod N, so that the states of one log (`--log`,
//! recorded once) split across machines.
//!
//! With `--model posix-weak` or `--model ext4-ordered` the states are instead those a
//! persistence model allows (models.rs): the workload's mount records its operations
//! (`mount --record-ops`, oplog.rs) rather than its device writes, each state is built on
//! a fresh image through the core, and the same checks run on it, with
//! `ROLLFS_CRASHTEST_POINT` the number of the last operation before the crash and the
//! marks those operations set. Each violation adds the model's explanation and a
//! `rollfs replay OPLOG --ops C:LIST` reproducer. `--model rollfs` (the default) is the
//! above.
//!
//! Output: one line per violation with a reproducer (`rollfs replay ... --out IMG`
//! rebuilds the crash image; the image is also saved in the work directory), and at the
//! end `crashtest: N crash states of M I/Os: V violations`. Exit 0 without violations,
//! 1 with, 2 for bad options, 8 when the test could not run (the workload failed, no
//! FUSE).

use crate::error::{CliError, Result, EXIT_USAGE};
use crate::models::{self, Model};
use crate::oplog::OpLog;
use crate::record::{self, Tag, WriteLog};
use rollfs_core::{Block, BlockDevice, Filesystem, IoError, MountOptions, WriteFlags, BLOCK_SIZE};
use rollfs_crash::rng::Hasher64;
use rollfs_crash::{fixed_variants, AddrMap, BlockRef, Image};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code when the test could not run (as fsck's operational error).
pub const EXIT_COULD_NOT_RUN: i32 = 8;
/// Exit code when a crash state failed its checks.
pub const EXIT_VIOLATIONS: i32 = 1;

#[derive(Debug, Clone)]
pub struct CrashtestArgs {
    /// Size of the fresh image the workload runs on.
    pub size: u64,
    /// `mkfs -O` features of that image.
    pub features: Vec<String>,
    pub max_states: u64,
    pub seed: u64,
    /// Random variants per crash point, after the fixed ones.
    pub random_variants: u32,
    pub torn: bool,
    pub check: Option<String>,
    /// Work directory (default: a new one under the system's temporary directory, removed
    /// unless a violation was found or `--keep`).
    pub dir: Option<PathBuf>,
    pub keep: bool,
    /// Check the states of this existing log instead of running a workload.
    pub replay_log: Option<PathBuf>,
    pub shard: (u64, u64),
    /// Seconds a check may run before it is killed (and the state reported).
    pub check_timeout_secs: u64,
    /// Write a summary here that `rollfs-sim merge` merges with the other shards'.
    pub summary: Option<PathBuf>,
    /// `-o` options of the workload's and the checks' mounts (e.g. `uring`).
    pub mount_options: Vec<String>,
    /// `--model`: rollfs's own crash states (the default), or a persistence model's
    /// (models.rs) built from the workload's operation log.
    pub model: Model,
    pub command: Vec<String>,
}

impl Default for CrashtestArgs {
    fn default() -> Self {
        CrashtestArgs {
            size: 64 << 20,
            features: Vec::new(),
            max_states: 2000,
            seed: 1,
            random_variants: 2,
            torn: true,
            check: None,
            dir: None,
            keep: false,
            replay_log: None,
            shard: (0, 1),
            check_timeout_secs: 60,
            summary: None,
            mount_options: Vec::new(),
            model: Model::Rollfs,
            command: Vec::new(),
        }
    }
}

/// What a run found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub io_count: u64,
    pub states: u64,
    pub duplicates: u64,
    pub violations: Vec<String>,
    /// (index in the chosen states, digest of the verdict) of every state checked.
    pub case_digests: Vec<(u64, u64)>,
    /// The violations as the summary file lists them.
    pub summary_violations: Vec<String>,
    pub seconds: f64,
}

/// `rollfs crashtest`: returns the exit code.
pub fn run(a: &CrashtestArgs) -> i32 {
    match run_inner(a) {
        Ok(o) if o.violations.is_empty() => 0,
        Ok(_) => EXIT_VIOLATIONS,
        Err(e) => {
            eprintln!("rollfs crashtest: {e}");
            if matches!(e, CliError::BadOption(_)) {
                EXIT_USAGE
            } else {
                EXIT_COULD_NOT_RUN
            }
        }
    }
}

/// PATH for the workload and the check: this rollfs first, so that `rollfs mark` is the
/// binary that recorded the log.
fn path_with_rollfs() -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> =
        std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)).into_iter().collect();
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

fn failed(path: &Path, what: &'static str, detail: impl Into<String>) -> CliError {
    CliError::Failed { path: path.to_owned(), what, detail: detail.into() }
}

pub fn run_inner(a: &CrashtestArgs) -> Result<Outcome> {
    if a.shard.1 == 0 || a.shard.0 >= a.shard.1 {
        return Err(CliError::BadOption(format!("--shard {}/{}: K must be below N", a.shard.0, a.shard.1)));
    }
    if a.replay_log.is_none() && a.command.is_empty() {
        return Err(CliError::BadOption("no command to run (rollfs crashtest [OPTIONS] -- CMD...)".into()));
    }
    let models = a.model != Model::Rollfs;
    // The log's kind is checked before a work directory exists: a refused run leaves none.
    if let Some(l) = &a.replay_log {
        if models != OpLog::is_oplog(l) {
            return Err(CliError::BadOption(format!(
                "--log {}: {}",
                l.display(),
                if models {
                    "not an operation log (--model posix-weak and ext4-ordered read the ops.log of a model run)"
                } else {
                    "an operation log: give --model posix-weak or ext4-ordered"
                }
            )));
        }
    }
    let (dir, made_dir) = match &a.dir {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|e| CliError::io(d, "create the work directory", e))?;
            (d.clone(), false)
        }
        None => (new_work_dir()?, true),
    };
    let log_path = match &a.replay_log {
        Some(l) => l.clone(),
        None => {
            let log = dir.join(if models { "ops.log" } else { "writes.log" });
            let rec = if models { Recording::Ops(log.clone()) } else { Recording::Writes(log.clone()) };
            if let Err(e) = record_workload(a, &dir, &rec) {
                eprintln!("rollfs crashtest: work directory kept: {}", dir.display());
                return Err(e);
            }
            log
        }
    };
    let outcome = match if models { check_models(a, &dir, &log_path) } else { check_log(a, &dir, &log_path) } {
        Ok(o) => o,
        Err(e) => {
            // A check that fails (an unreadable log, say) keeps a work directory only if it
            // holds something; an empty one made here goes (the suite's leak check found
            // them piling up).
            if made_dir {
                let _ = std::fs::remove_dir(&dir);
            }
            return Err(e);
        }
    };
    println!(
        "crashtest: {} crash states of {} {}: {} violations",
        outcome.states,
        outcome.io_count,
        if models { "operations" } else { "I/Os" },
        outcome.violations.len()
    );
    if outcome.violations.is_empty() && made_dir && !a.keep {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("crashtest: work directory kept: {}", dir.display());
    }
    Ok(outcome)
}

fn new_work_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for i in 0..1000u32 {
        let d = base.join(format!("rollfs-crashtest-{}-{i}", std::process::id()));
        match std::fs::create_dir(&d) {
            Ok(()) => {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
                return Ok(d);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(CliError::io(&d, "create the work directory", e)),
        }
    }
    Err(failed(&base, "cannot create a work directory", "1000 names taken"))
}

/// What a workload's mount records.
enum Recording {
    /// Device writes (`--record-writes`): rollfs's own crash states.
    Writes(PathBuf),
    /// File-system operations (`--record-ops`): the persistence models' states.
    Ops(PathBuf),
}

/// mkfs, a recorded mount, the workload inside it, unmount.
fn record_workload(a: &CrashtestArgs, dir: &Path, log: &Recording) -> Result<()> {
    let img = dir.join("workload.img");
    let _ = std::fs::remove_file(&img);
    crate::cmd::mkfs(&crate::cmd::MkfsArgs {
        size: Some(a.size),
        target: img.clone(),
        quiet: true,
        sparse: true,
        features: a.features.clone(),
        ..Default::default()
    })?;
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).map_err(|e| CliError::io(&mnt, "create the mount point", e))?;
    let mount = FuseMount::start(&img, &mnt, Some(log), &a.mount_options, &dir.join("workload-mount.log"))?;
    let rollfs = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("rollfs"));
    // The workload runs inside the mount: a program named by a relative path is the
    // caller's (`./work.sh`), not one inside the mount.
    let program = match Path::new(&a.command[0]) {
        p if p.is_relative() && a.command[0].contains('/') => std::path::absolute(p).unwrap_or_else(|_| p.to_owned()),
        p => p.to_owned(),
    };
    let status = Command::new(&program)
        .args(&a.command[1..])
        .current_dir(&mnt)
        .env("ROLLFS", &rollfs)
        .env("PATH", path_with_rollfs())
        .env("ROLLFS_CRASHTEST", "1")
        .env("ROLLFS_CRASHTEST_CWD", std::env::current_dir().unwrap_or_default())
        .stdin(Stdio::null())
        .status();
    let unmounted = mount.stop();
    let status = status.map_err(|e| CliError::io(Path::new(&a.command[0]), "run the workload", e))?;
    if !status.success() {
        return Err(failed(Path::new(&a.command[0]), "the workload failed", format!("{status}")));
    }
    unmounted?;
    Ok(())
}

/// The states to check, in point order: `(point, variant)`, at most `max_states` (at
/// least one point), each chosen point with every fixed variant and `random_variants`
/// random ones.
pub fn choose_states(log: &WriteLog, max_states: u64, torn: bool, random_variants: u32) -> Vec<(u64, u32)> {
    let variants = fixed_variants(torn) + random_variants;
    let points = log.io().len() as u64 + 1;
    let budget_points = (max_states / variants as u64).max(1);
    // Points right after a mark, flush or wait: where the workload or the filesystem had
    // just made something durable, so a lost write matters most.
    let io = log.io();
    let mut key: Vec<u64> = vec![0, points - 1];
    for (i, e) in io.iter().enumerate() {
        if matches!(e.tag, Tag::Mark | Tag::Flush | Tag::FlushDone | Tag::Wait | Tag::Complete) {
            key.push(i as u64 + 1);
        }
    }
    key.sort_unstable();
    key.dedup();
    let mut chosen: Vec<u64> = if key.len() as u64 >= budget_points {
        spread(&key, budget_points)
    } else {
        let set: HashSet<u64> = key.iter().copied().collect();
        let others: Vec<u64> = (0..points).filter(|p| !set.contains(p)).collect();
        let mut c = key.clone();
        c.extend(spread(&others, budget_points - key.len() as u64));
        c
    };
    chosen.sort_unstable();
    let mut out = Vec::with_capacity(chosen.len() * variants as usize);
    for p in chosen {
        for v in 0..variants {
            out.push((p, v));
        }
    }
    out
}

/// `n` items of `items` spread evenly (all of them if there are fewer).
fn spread(items: &[u64], n: u64) -> Vec<u64> {
    let len = items.len() as u64;
    if n >= len {
        return items.to_vec();
    }
    (0..n).map(|i| items[(i * len / n) as usize]).collect()
}

fn check_log(a: &CrashtestArgs, dir: &Path, log_path: &Path) -> Result<Outcome> {
    let log = WriteLog::open(log_path)?;
    if log.truncated {
        eprintln!("rollfs crashtest: {}: the log ends in a partial entry (ignored)", log_path.display());
    }
    let states = log.crash_states().map_err(|e| CliError::io(log_path, "read the write log", e))?;
    let io_count = states.points() - 1;
    println!(
        "crashtest: {} I/Os logged ({} writes, {} flushes, {} marks); checking up to {} states{}",
        io_count,
        log.write_count(),
        log.flush_count(),
        log.mark_count(),
        a.max_states,
        if a.shard.1 > 1 { format!(" (shard {}/{})", a.shard.0, a.shard.1) } else { String::new() }
    );
    let chosen = choose_states(&log, a.max_states, a.torn, a.random_variants);
    let mut cursor = states.cursor();
    // A state's verdict depends on its image and, with --check, on the marks before it:
    // the same image after one more mark is checked again (it must now show more). Every
    // shard derives every chosen state and skips the same duplicates, so the shards split
    // exactly the states one unsharded run checks.
    let mut seen: HashSet<((bool, u64, u64), u64)> = HashSet::new();
    let mut out = Outcome { io_count, ..Default::default() };
    let check_img = dir.join("check.img");
    let check_mnt = dir.join("check-mnt");
    let started = Instant::now();
    for (i, &(point, variant)) in chosen.iter().enumerate() {
        let st = cursor.state(point, variant, a.seed, a.torn);
        let marks = states.marks_before(point);
        if !seen.insert((st.key, if a.check.is_some() { marks } else { 0 })) {
            out.duplicates += 1;
            continue;
        }
        if i as u64 % a.shard.1 != a.shard.0 {
            continue;
        }
        out.states += 1;
        let verdict = check_state(&st.image, a, &check_img, &check_mnt, point, marks, dir);
        let mut h = Hasher64::new();
        h.u64(point);
        h.u64(variant as u64);
        h.bytes(verdict.as_ref().err().map_or(&b""[..], |w| w.as_bytes()));
        out.case_digests.push((i as u64, h.finish()));
        if let Err(why) = verdict {
            let saved = dir.join(format!("violation-{point}-{variant}.img"));
            let _ = std::fs::remove_file(&saved);
            let _ = record::write_image(&st.image, &saved);
            let line = format!(
                "crashtest: VIOLATION at crash point {point} variant {variant} ({marks} marks before it, {} of {} pending writes kept, {} torn): {why}\n  reproduce: rollfs replay {} --at-io {point} --variant {variant} --seed {}{} --out STATE.img   (saved: {})",
                st.kept,
                st.pending,
                st.torn,
                log_path.display(),
                a.seed,
                if a.torn { " --torn" } else { "" },
                saved.display()
            );
            println!("{line}");
            let _ = std::io::stdout().flush();
            out.summary_violations
                .push(format!("check\tstate:{i}\t{point}:{variant}\t{}", why.replace(['\t', '\n'], " ")));
            out.violations.push(line);
        }
    }
    out.seconds = started.elapsed().as_secs_f64();
    if out.duplicates > 0 {
        println!("crashtest: {} states skipped as images already checked", out.duplicates);
    }
    if let Some(path) = &a.summary {
        let text = summary_text(a, &log_digest(log_path)?, &out);
        let f = crate::secure::create_private(path, "write the summary")?;
        (&f).write_all(text.as_bytes()).map_err(|e| CliError::io(path, "write the summary", e))?;
    }
    Ok(out)
}

/// The states a persistence model allows for the operation log at `log_path`
/// (models.rs), each built on a fresh image and checked as a crash state of rollfs is.
fn check_models(a: &CrashtestArgs, dir: &Path, log_path: &Path) -> Result<Outcome> {
    let log = OpLog::open(log_path)?;
    models::check_supported(&log).map_err(|d| failed(log_path, "cannot apply a persistence model", d))?;
    let ops = &log.ops;
    let count = |f: fn(&crate::oplog::Op) -> bool| ops.iter().filter(|o| f(o)).count();
    println!(
        "crashtest: {} operations logged ({} fsyncs, {} marks); model {}: checking up to {} states{}",
        ops.len(),
        count(|o| matches!(o, crate::oplog::Op::Fsync { .. })),
        count(|o| matches!(o, crate::oplog::Op::Mark)),
        a.model.name(),
        a.max_states,
        if a.shard.1 > 1 { format!(" (shard {}/{})", a.shard.0, a.shard.1) } else { String::new() }
    );
    let random = a.random_variants as usize * models::key_points(ops).len();
    let (chosen, dups) = models::choose(a.model, ops, a.max_states, a.seed, random);
    let mut out = Outcome { io_count: ops.len() as u64, duplicates: dups, ..Default::default() };
    let check_img = dir.join("check.img");
    let check_mnt = dir.join("check-mnt");
    let features = if a.features.is_empty() { String::new() } else { format!(" -O {}", a.features.join(",")) };
    let started = Instant::now();
    for (i, st) in chosen.iter().enumerate() {
        if i as u64 % a.shard.1 != a.shard.0 {
            continue;
        }
        out.states += 1;
        let marks = models::marks_before(ops, st.crash);
        let tree = models::Tree::build(a.model, ops, st);
        let image = tree
            .materialize(log.block_count, &a.features)
            .map_err(|d| failed(log_path, "cannot build a model state", format!("state {}: {d}", st.spec())))?;
        let verdict = check_state(&image, a, &check_img, &check_mnt, st.crash as u64, marks, dir);
        let mut h = Hasher64::new();
        h.bytes(st.spec().as_bytes());
        h.bytes(verdict.as_ref().err().map_or(&b""[..], |w| w.as_bytes()));
        out.case_digests.push((i as u64, h.finish()));
        if let Err(why) = verdict {
            let saved = dir.join(format!("violation-{}-{i}.img", a.model.name()));
            let _ = std::fs::remove_file(&saved);
            let _ = record::write_image(&image, &saved);
            let line = format!(
                "crashtest: VIOLATION under {} after op {} ({marks} marks before it; ops kept: {}): {why}\n  {}\n  reproduce: rollfs replay {} --model {} --ops {}{features} --out STATE.img   (saved: {})",
                a.model.name(),
                st.crash,
                st.spec(),
                models::explain(a.model, ops, st),
                log_path.display(),
                a.model.name(),
                st.spec(),
                saved.display()
            );
            println!("{line}");
            let _ = std::io::stdout().flush();
            out.summary_violations.push(format!("check\tstate:{i}\t{}\t{}", st.spec(), why.replace(['\t', '\n'], " ")));
            out.violations.push(line);
        }
    }
    out.seconds = started.elapsed().as_secs_f64();
    if out.duplicates > 0 {
        println!("crashtest: {} states skipped as trees already checked", out.duplicates);
    }
    if let Some(path) = &a.summary {
        let text = summary_text(a, &log_digest(log_path)?, &out);
        let f = crate::secure::create_private(path, "write the summary")?;
        (&f).write_all(text.as_bytes()).map_err(|e| CliError::io(path, "write the summary", e))?;
    }
    Ok(out)
}

/// A digest of the log file's bytes: the shards of one exploration name the same log.
fn log_digest(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| CliError::io(path, "read the write log", e))?;
    let mut h = Hasher64::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| CliError::io(path, "read the write log", e))?;
        if n == 0 {
            break;
        }
        for chunk in buf[..n].chunks(BLOCK_SIZE) {
            h.u64(rollfs_crash::rng::block_hash(chunk));
        }
    }
    Ok(format!("{:016x}", h.finish()))
}

/// The run's summary in the format of `rollfs-sim explore --summary` (wasm-harness/src/
/// shard.rs, version 1), so that `rollfs-sim merge` merges crashtest shards too: the
/// source names the log by its digest, a "case" is a chosen crash state (its index in the
/// chosen list) with the digest of its verdict.
pub fn summary_text(a: &CrashtestArgs, log_digest: &str, out: &Outcome) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "rollfs-sim shard summary 1");
    let _ = writeln!(s, "seed {}", a.seed);
    let model = if a.model == Model::Rollfs { String::new() } else { format!(":{}", a.model.name()) };
    let _ = writeln!(s, "source crashtest:{log_digest}:{}:{}{model}", a.random_variants, u8::from(a.check.is_some()));
    let _ = writeln!(s, "torn {}", u8::from(a.torn));
    let _ = writeln!(s, "eio 0");
    let _ = writeln!(s, "max_points {}", a.max_states);
    let mutant = std::env::var("ROLLFS_MUTANT").ok().filter(|m| !m.is_empty() && cfg!(feature = "mutants"));
    let _ = writeln!(s, "mutant {}", mutant.as_deref().unwrap_or("-"));
    let _ = writeln!(s, "shard {}/{}", a.shard.0, a.shard.1);
    let _ = writeln!(s, "states {}", out.states);
    // The log is one workload: shard 0 counts it.
    let _ = writeln!(s, "workloads {}", u64::from(a.shard.0 == 0));
    let _ = writeln!(s, "seconds {:.3}", out.seconds);
    for (i, d) in &out.case_digests {
        let _ = writeln!(s, "case {i} {d:016x}");
    }
    for v in &out.summary_violations {
        let _ = writeln!(s, "violation {v}");
    }
    s
}

/// Checks one crash image: recovery and fsck in this process, then `--check` on a FUSE
/// mount of the recovered image. Returns why it fails.
fn check_state(
    img: &Image,
    a: &CrashtestArgs,
    check_img: &Path,
    check_mnt: &Path,
    point: u64,
    marks: u64,
    dir: &Path,
) -> std::result::Result<(), String> {
    let dev = ImageDevice { img: img.clone(), over: AddrMap::default() };
    let mut fs =
        Filesystem::mount(dev, &MountOptions::default(), crate::now()).map_err(|e| format!("does not mount: {e}"))?;
    // Metadata and every data block against its checksum; what the files should hold is
    // the --check command's to say.
    let fsck_opts = rollfs_core::fsck::FsckOptions { verify_data: true };
    let report = rollfs_core::fsck::check_with(fs.device_mut(), &fsck_opts, &mut |_, _| {})
        .map_err(|e| format!("fsck after recovery failed: {e}"))?;
    if !report.problems.is_empty() || !report.bad_data.is_empty() {
        let bad = report.bad_data.iter().map(|b| b.to_string());
        return Err(format!(
            "fsck after recovery: {}",
            report.problems.iter().cloned().chain(bad).collect::<Vec<_>>().join("; ")
        ));
    }
    let dev = fs.unmount(crate::now()).map_err(|e| format!("unmount after recovery failed: {e}"))?;
    let Some(check) = &a.check else { return Ok(()) };
    let recovered = dev.into_image();
    let _ = std::fs::remove_file(check_img);
    record::write_image(&recovered, check_img).map_err(|e| format!("cannot write the image to check: {e}"))?;
    std::fs::create_dir_all(check_mnt).map_err(|e| format!("cannot create {}: {e}", check_mnt.display()))?;
    let mount = FuseMount::start(check_img, check_mnt, None, &a.mount_options, &dir.join("check-mount.log"))
        .map_err(|e| format!("the recovered image does not mount through FUSE: {e}"))?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(check)
        .current_dir(check_mnt)
        .env("ROLLFS_CRASHTEST_MARKS", marks.to_string())
        .env("ROLLFS_CRASHTEST_POINT", point.to_string())
        .env("ROLLFS_CRASHTEST_CWD", std::env::current_dir().unwrap_or_default())
        .env("ROLLFS", std::env::current_exe().unwrap_or_else(|_| PathBuf::from("rollfs")))
        .env("PATH", path_with_rollfs());
    let out = run_bounded(cmd, Duration::from_secs(a.check_timeout_secs), &dir.join("check.out"));
    let stopped = mount.stop();
    let (status, text) = out.map_err(|e| format!("the check {e}"))?;
    if !status.success() {
        return Err(format!("the check failed ({status}): {}", text.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    stopped.map_err(|e| format!("the recovered mount did not unmount cleanly: {e}"))
}

/// Runs `cmd` in a process group of its own with stdin closed and its output in `out`
/// (a file: a pipe would stay open as long as anything the command left in the background),
/// killing the group when it runs longer than `limit`, and afterwards whatever the
/// command left running in the background (which would keep the mount busy). Returns
/// the exit status and the output.
fn run_bounded(
    mut cmd: Command,
    limit: Duration,
    out: &Path,
) -> std::result::Result<(std::process::ExitStatus, String), String> {
    use std::os::unix::process::CommandExt;
    let f = std::fs::File::create(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let f2 = f.try_clone().map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(f)
        .stderr(f2)
        .spawn()
        .map_err(|e| format!("cannot run: {e}"))?;
    let pgid = child.id() as i32;
    let end = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
            _ => break None,
        }
    };
    // SAFETY: signals the process group the command runs in (gone already: ESRCH).
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let Some(status) = status else {
        let _ = child.wait();
        return Err(format!("ran longer than {} s and was killed", limit.as_secs()));
    };
    Ok((status, std::fs::read_to_string(out).unwrap_or_default()))
}

/// A crash image as a block device: reads from the image, writes to an overlay (the image
/// is shared with the other states).
pub(crate) struct ImageDevice {
    img: Image,
    over: AddrMap<BlockRef>,
}

impl ImageDevice {
    pub(crate) fn new(img: Image) -> ImageDevice {
        ImageDevice { img, over: AddrMap::default() }
    }

    pub(crate) fn into_image(self) -> Image {
        self.img.with_blocks(self.over)
    }
}

impl BlockDevice for ImageDevice {
    fn block_count(&self) -> u64 {
        self.img.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> std::result::Result<(), IoError> {
        if addr >= self.img.block_count() {
            return Err(IoError { block: addr, op: "read" });
        }
        match self.over.get(&addr) {
            Some(b) => buf.copy_from_slice(&b[..]),
            None => self.img.read_into(addr, buf),
        }
        Ok(())
    }
    fn write(&mut self, addr: u64, data: &Block, _flags: WriteFlags) -> std::result::Result<(), IoError> {
        if addr >= self.img.block_count() {
            return Err(IoError { block: addr, op: "write" });
        }
        self.over.insert(addr, Arc::new(*data));
        Ok(())
    }
    fn wait_writes(&mut self) -> std::result::Result<(), IoError> {
        Ok(())
    }
    fn flush(&mut self) -> std::result::Result<(), IoError> {
        Ok(())
    }
    fn discard(&mut self, addr: u64, count: u64) -> std::result::Result<(), IoError> {
        let end = addr.saturating_add(count).min(self.img.block_count());
        let zero: BlockRef = Arc::new([0u8; BLOCK_SIZE]);
        for a in addr..end {
            self.over.insert(a, zero.clone());
        }
        Ok(())
    }
}

/// A `rollfs mount -f` child of this process, unmounted by [`FuseMount::stop`].
struct FuseMount {
    child: Option<Child>,
    mnt: PathBuf,
    log: PathBuf,
}

impl FuseMount {
    fn start(img: &Path, mnt: &Path, record: Option<&Recording>, options: &[String], log: &Path) -> Result<FuseMount> {
        let exe = std::env::current_exe().map_err(|e| CliError::io(Path::new("/proc/self/exe"), "find rollfs", e))?;
        let logf = std::fs::File::create(log).map_err(|e| CliError::io(log, "create the mount log", e))?;
        let errf = logf.try_clone().map_err(|e| CliError::io(log, "create the mount log", e))?;
        let mut cmd = Command::new(exe);
        cmd.arg("mount").arg("-f");
        for o in options {
            cmd.arg("-o").arg(o);
        }
        match record {
            Some(Recording::Writes(r)) => cmd.arg("--record-writes").arg(r),
            Some(Recording::Ops(r)) => cmd.arg("--record-ops").arg(r),
            None => &mut cmd,
        };
        let child = cmd
            .arg(img)
            .arg(mnt)
            .stdin(Stdio::null())
            .stdout(logf)
            .stderr(errf)
            .spawn()
            .map_err(|e| CliError::io(img, "start rollfs mount", e))?;
        let mut m = FuseMount { child: Some(child), mnt: mnt.to_owned(), log: log.to_owned() };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if is_mounted(mnt) {
                return Ok(m);
            }
            if let Ok(Some(st)) = m.child.as_mut().expect("child").try_wait() {
                m.child = None;
                return Err(failed(img, "cannot mount", format!("rollfs mount exited with {st}: {}", m.log_text())));
            }
            if Instant::now() > deadline {
                return Err(failed(img, "cannot mount", format!("not mounted within 30 s: {}", m.log_text())));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default().trim().to_string()
    }

    /// Unmounts (retrying while busy, for up to 10 s) and waits for the daemon: Ok when it
    /// exited 0 (its unmount checkpoint written).
    fn stop(mut self) -> Result<()> {
        let mut unmounted = false;
        for _ in 0..200 {
            if !is_mounted(&self.mnt) || unmount(&self.mnt, false) {
                unmounted = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut child = self.child.take().expect("child");
        if !unmounted {
            // Detach it so that the next state's mount point is free, then stop the daemon.
            unmount(&self.mnt, true);
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed(&self.mnt, "cannot unmount", "still busy after 10 s"));
        }
        let st = child.wait().map_err(|e| CliError::io(&self.mnt, "wait for rollfs mount", e))?;
        if !st.success() {
            return Err(failed(
                &self.mnt,
                "unclean unmount",
                format!("rollfs mount exited with {st}: {}", self.log_text()),
            ));
        }
        Ok(())
    }
}

impl Drop for FuseMount {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            if !unmount(&self.mnt, false) {
                unmount(&self.mnt, true);
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Whether a filesystem is mounted at `p` (per /proc/self/mountinfo).
pub fn is_mounted(p: &Path) -> bool {
    let Ok(want) = std::fs::canonicalize(p) else { return false };
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else { return false };
    let unescape =
        |m: &str| m.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\");
    info.lines().any(|l| l.split(' ').nth(4).is_some_and(|m| Path::new(&unescape(m)) == want))
}

/// Unmounts a FUSE mount with fusermount3, fusermount or umount (whichever works);
/// `lazy` detaches a busy one. True when one of them succeeded.
pub fn unmount(mnt: &Path, lazy: bool) -> bool {
    let tools: [(&str, &[&str]); 3] = if lazy {
        [("fusermount3", &["-u", "-z"]), ("fusermount", &["-u", "-z"]), ("umount", &["-l"])]
    } else {
        [("fusermount3", &["-u"]), ("fusermount", &["-u"]), ("umount", &[])]
    };
    tools.iter().any(|(bin, args)| {
        Command::new(bin)
            .args(*args)
            .arg(mnt)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `rollfs mark [PATH]`: sets a mark in the write log of the recorded mount PATH is on
/// (getxattr of [`record::MARK_XATTR`]); returns the mark's number.
pub fn mark(path: &Path) -> Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| CliError::BadOption(format!("{}: a path with a NUL byte", path.display())))?;
    let name = std::ffi::CString::new(record::MARK_XATTR).expect("no NUL");
    let mut buf = [0u8; 32];
    // SAFETY: valid C strings and a buffer of the length passed.
    let n = unsafe { libc::getxattr(c_path.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ENODATA) | Some(libc::ENOTSUP) => failed(
                path,
                "cannot set a mark",
                "not on a rollfs mount that records its writes (run the workload under `rollfs crashtest`)",
            ),
            _ => CliError::io(path, "set a mark", e),
        });
    }
    std::str::from_utf8(&buf[..n as usize])
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| failed(path, "cannot set a mark", "the mount answered with something else than a mark"))
}
