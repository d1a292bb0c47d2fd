//! `rollfs crashtest` end to end: the seed scenarios (tests/scripts/seed-scenarios.sh,
//! with marks, and its check) and an SQLite load (src/bin/sqlite-load.rs) pass on main;
//! the driver mutants (fsync acknowledged before the flush; group commit flushing without
//! waiting for the writes) are caught, and a reproducer printed rebuilds a failing state; shards of one log add up to the whole;
//! bad usage and a failing workload are reported, not mistaken for a pass.

use rollfs_tests::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts")
}

fn seed_check() -> String {
    format!("sh {}", scripts().join("seed-scenarios-check.sh").display())
}

fn seed_workload() -> [String; 2] {
    ["sh".into(), scripts().join("seed-scenarios.sh").display().to_string()]
}

fn crashtest(bin: &Path, args: &[&str], command: &[String], mutant: Option<&str>) -> Output {
    require_fuse();
    let mut c = Command::new(bin);
    // The workload over the transport the pass runs (test.sh's io_uring pass: `-o uring`).
    c.arg("crashtest").args(args).args(transport_options()).arg("--").args(command);
    match mutant {
        Some(m) => c.env("ROLLFS_MUTANT", m),
        None => c.env_remove("ROLLFS_MUTANT"),
    };
    // crashtest keeps its work directory (image, logs, reproducers) when it finds a
    // violation, as a user wants; the mutant runs find them on purpose, so their work
    // directories go into one of the test's own, removed when it returns (they were
    // left in /tmp: ~13 GiB after a day of suite runs).
    let tmp = tempfile::Builder::new().prefix("rollfs-crashtest-test-").tempdir().expect("tempdir");
    c.env("TMPDIR", tmp.path());
    c.output().expect("run rollfs crashtest")
}

/// `(states, I/Os, violations)` from the last line.
fn summary(o: &Output) -> (u64, u64, u64) {
    let out = stdout(o);
    let line = out
        .lines()
        .find(|l| l.starts_with("crashtest: ") && l.contains(" crash states of "))
        .unwrap_or_else(|| panic!("no summary line:\n{out}\n{}", stderr(o)));
    let nums: Vec<u64> = line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    assert_eq!(nums.len(), 3, "{line}");
    (nums[0], nums[1], nums[2])
}

#[test]
fn crashtest_passes_the_seed_scenarios() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let o =
        crashtest(&rollfs_bin(), &["--check", &seed_check(), "--dir", dir.to_str().unwrap()], &seed_workload(), None);
    let (states, ios, violations) = summary(&o);
    eprintln!("seed scenarios: {states} crash states of {ios} I/Os");
    assert_eq!((violations, o.status.code()), (0, Some(0)), "{}{}", stdout(&o), stderr(&o));
    assert!(ios >= 80 && states >= 200, "too little explored: {states} states of {ios} I/Os");
    // The log has the workload's 9 marks, and group commit's flushes went through the log.
    let wl = rollfs::record::WriteLog::open(&dir.join("writes.log")).unwrap();
    assert_eq!(wl.mark_count(), 9);
    assert!(wl.flush_count() >= 9, "{} flushes", wl.flush_count());
}

#[test]
fn crashtest_checks_an_sqlite_load() {
    let load = env!("CARGO_BIN_EXE_sqlite-load");
    let o = crashtest(
        &rollfs_bin(),
        &["--max-states", "600", "--check", &format!("{load} check")],
        &[load.to_string(), "run".into(), "60".into()],
        None,
    );
    let (states, ios, violations) = summary(&o);
    eprintln!("sqlite load: {states} crash states of {ios} I/Os");
    assert_eq!((violations, o.status.code()), (0, Some(0)), "{}{}", stdout(&o), stderr(&o));
    assert!(ios >= 300 && states >= 150, "too little explored: {states} states of {ios} I/Os");
}

#[test]
fn crashtest_catches_the_driver_mutants() {
    let bin = rollfs_mutants_bin();
    // Each driver mutant, also with the fixed variants only (none, all of the unflushed
    // writes kept): a state right after a mark must be checked with that mark counted.
    for mutant in rollfs::mutant::NAMES {
        for fixed_only in [false, true] {
            let args: &[&str] = if fixed_only { &["--no-torn", "--random-variants", "0"] } else { &[] };
            let o = crashtest(&bin, &[args, &["--check", &seed_check()]].concat(), &seed_workload(), Some(mutant));
            let (states, _, violations) = summary(&o);
            eprintln!("{mutant} (fixed variants only: {fixed_only}): {violations} violations in {states} states");
            assert!(violations > 0 && o.status.code() == Some(1), "{mutant} was not caught:\n{}", stdout(&o));
        }
    }
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let o = crashtest(
        &bin,
        &["--check", &seed_check(), "--dir", dir.to_str().unwrap()],
        &seed_workload(),
        Some("mutant-fsync-ack-before-flush"),
    );
    // The first reproducer rebuilds a state that fails the same check.
    let out = stdout(&o);
    let repro = out.lines().find_map(|l| l.trim().strip_prefix("reproduce: rollfs ")).expect("a reproducer line");
    let args: Vec<&str> = repro.split("   ").next().unwrap().split_whitespace().collect();
    let img = d.path().join("state.img");
    let args: Vec<String> =
        args.iter().map(|a| if *a == "STATE.img" { img.display().to_string() } else { a.to_string() }).collect();
    let r = rollfs(&args);
    assert!(r.status.success(), "reproducer failed: {}", stderr(&r));
    let m = Mount::new(&img, &[]);
    let c = Command::new("sh")
        .arg("-c")
        .arg(seed_check())
        .current_dir(&m.mnt)
        .env("ROLLFS_CRASHTEST_MARKS", marks_of(&out))
        .output()
        .unwrap();
    assert!(!c.status.success(), "the reproduced state passes the check: {repro}");
    drop(m);
    // The same build without a mutant chosen passes: the catch is the mutant's doing.
    let o = crashtest(&bin, &["--check", &seed_check(), "--max-states", "300"], &seed_workload(), None);
    assert_eq!(summary(&o).2, 0, "{}", stdout(&o));
}

/// The marks of the first violation ("... (N marks before it, ...").
fn marks_of(out: &str) -> String {
    let l = out.lines().find(|l| l.contains("VIOLATION")).unwrap();
    let before = l.split(" marks before it").next().unwrap();
    before.rsplit('(').next().unwrap().to_string()
}

#[test]
fn crashtest_shards_of_one_log_merge_to_the_whole() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let sum = |name: &str| d.path().join(name);
    let o = crashtest(
        &rollfs_bin(),
        &[
            "--keep",
            "--max-states",
            "400",
            "--dir",
            dir.to_str().unwrap(),
            "--summary",
            sum("whole.txt").to_str().unwrap(),
        ],
        &seed_workload(),
        None,
    );
    let whole = summary(&o);
    let log = dir.join("writes.log");
    let mut parts = Vec::new();
    for k in 0..3 {
        let file = sum(&format!("s{k}.txt"));
        let o = Command::new(rollfs_bin())
            .args(["crashtest", "--max-states", "400", "--shard", &format!("{k}/3"), "--log", log.to_str().unwrap()])
            .arg("--summary")
            .arg(&file)
            .output()
            .unwrap();
        let (_, ios, v) = summary(&o);
        assert_eq!((ios, v), (whole.1, 0), "{}", stdout(&o));
        parts.push(rollfs_sim::shard::ShardSummary::parse(&std::fs::read_to_string(&file).unwrap()).unwrap());
    }
    // `rollfs-sim merge` of the shards = the unsharded run: the same states, the same digest.
    let merged = rollfs_sim::shard::merge(&parts).unwrap();
    let alone = rollfs_sim::shard::ShardSummary::parse(&std::fs::read_to_string(sum("whole.txt")).unwrap()).unwrap();
    let alone = rollfs_sim::shard::merge(&[alone]).unwrap();
    assert_eq!((merged.states, merged.digest), (alone.states, alone.digest));
    assert_eq!(merged.states, whole.0);
    // Two copies of one shard are refused.
    assert!(rollfs_sim::shard::merge(&[parts[0].clone(), parts[0].clone(), parts[2].clone()]).is_err());
}

#[test]
fn crashtest_reports_bad_usage_and_failing_workloads() {
    let o = Command::new(rollfs_bin()).arg("crashtest").output().unwrap();
    assert_fails(&o, 2, "no command to run");
    let o = Command::new(rollfs_bin()).args(["crashtest", "--shard", "3/2", "--", "true"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let o = crashtest(
        &rollfs_bin(),
        &["--dir", dir.to_str().unwrap()],
        &["sh".into(), "-c".into(), "echo hi > f; exit 3".into()],
        None,
    );
    assert_fails(&o, 8, "the workload failed");
    assert!(stderr(&o).contains("work directory kept"), "{}", stderr(&o));
    // A check that hangs, or leaves a process behind in the mount, is killed: its states
    // are violations, and the next states are checked normally.
    let o = crashtest(
        &rollfs_bin(),
        &[
            "--max-states",
            "12",
            "--check-timeout",
            "2",
            "--check",
            "(sleep 30 &) ; test $ROLLFS_CRASHTEST_POINT -gt 3 && sleep 30; true",
        ],
        &["sh".into(), "-c".into(), "echo a > f; sync f".into()],
        None,
    );
    let (states, _, violations) = summary(&o);
    assert!(violations > 0 && violations < states, "{}", stdout(&o));
    assert!(stdout(&o).contains("ran longer than 2 s"), "{}", stdout(&o));
    // A mark outside a recorded mount is an error, not a silent no-op.
    let o = rollfs(["mark".to_string(), d.path().display().to_string()]);
    assert!(!o.status.success() && stderr(&o).contains("cannot set a mark"), "{}", stderr(&o));
}
