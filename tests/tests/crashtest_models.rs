//! `rollfs crashtest --model`: the persistence models (native/src/models.rs) on real
//! mounts, against small programs with the bugs ALICE (Pillai et al., OSDI '14) reported
//! (tests/scripts/alice/): a file replaced by rename without fsyncing its data, a pointer
//! naming an appended record's length made durable before the record, a new file fsynced
//! without its directory. Under `--model posix-weak` each is found, with an explanation
//! and a reproducer that rebuilds the failing state; their fixed versions pass; under
//! rollfs's own semantics (the default model) the bad ones pass too; under ext4-ordered
//! only the pointer bug shows (auto_da_alloc and the journal hide the others, as on ext4).
//! On a records image (the default) riders and groups are what keep them passing: without
//! either (`mutant-no-riders`, `mutant-nsrec-no-group`) `rename-bad` fails.
//! A model that treats every operation as persisted (`mutant-model-all-persisted`) lets
//! every bad program pass: what finds the bugs is the model's rules.

use rollfs_tests::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/alice").join(name)
}

/// `rollfs crashtest --model MODEL --check 'sh BUG-check.sh' [args] -- sh BUG-VARIANT.sh`.
fn crashtest(bin: &Path, model: &str, bug: &str, variant: &str, args: &[&str], mutant: Option<&str>) -> Output {
    require_fuse();
    let check = format!("sh {}", script(&format!("{bug}-check.sh")).display());
    let mut c = Command::new(bin);
    c.arg("crashtest").args(["--model", model, "--check", &check]).args(args).args(transport_options());
    // A work directory of the test's own: a run with violations keeps it (removed here).
    let work = tempfile::tempdir().unwrap();
    if !args.contains(&"--dir") {
        c.arg("--dir").arg(work.path());
    }
    c.arg("--").arg("sh").arg(script(&format!("{bug}-{variant}.sh")));
    match mutant {
        Some(m) => c.env("ROLLFS_MUTANT", m),
        None => c.env_remove("ROLLFS_MUTANT"),
    };
    c.output().expect("run rollfs crashtest")
}

/// `(states, operations or I/Os, violations)` from the summary line.
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

const BUGS: [&str; 3] = ["rename", "pointer", "create"];

/// What each bad program's first explanation must name.
fn expected(bug: &str) -> &'static [&'static str] {
    match bug {
        "rename" => &["relies on the write of 13 bytes to tmp (op ", "persisting before the rename tmp -> file (op "],
        "pointer" => {
            &["relies on the write of 9 bytes", " to log (op ", "persisting before the rename ptr.tmp -> ptr (op "]
        }
        "create" => &["relies on the creation of f (op 1) persisting with the fsync of f (op 3)"],
        _ => unreachable!(),
    }
}

#[test]
fn posix_weak_finds_the_known_bugs_and_passes_their_fixes() {
    for bug in BUGS {
        let o = crashtest(&rollfs_bin(), "posix-weak", bug, "bad", &[], None);
        let (states, ops, violations) = summary(&o);
        let out = stdout(&o);
        eprintln!("{bug}-bad under posix-weak: {violations} violations in {states} states of {ops} operations");
        assert!(violations > 0 && o.status.code() == Some(1), "{bug}-bad not caught:\n{out}{}", stderr(&o));
        let first = out.lines().skip_while(|l| !l.contains("VIOLATION")).nth(1).unwrap_or_default();
        eprintln!("  {}", first.trim());
        // The first violation's explanation names the op the program relies on.
        let explained = out
            .lines()
            .filter(|l| l.trim_start().starts_with("your program relies on"))
            .any(|l| expected(bug).iter().all(|w| l.contains(w)));
        assert!(explained, "{bug}: no explanation names {:?}:\n{out}", expected(bug));
        assert!(out.contains("reproduce: rollfs replay "), "{out}");

        let o = crashtest(&rollfs_bin(), "posix-weak", bug, "good", &[], None);
        let (states, ops, violations) = summary(&o);
        eprintln!("{bug}-good under posix-weak: {states} states of {ops} operations");
        assert_eq!((violations, o.status.code()), (0, Some(0)), "{}{}", stdout(&o), stderr(&o));
        assert!(states >= 4, "{bug}-good: too few states ({states})");
    }
}

/// rollfs's own semantics make a directory fsync the whole tree durable on both formats:
/// with namespace records (mkfs's default: records, then the changed files' batches, one
/// group) and without (`-O nonsrec`: a checkpoint).
#[test]
fn the_bad_programs_pass_under_rollfs_semantics_on_both_formats_and_ext4_shows_the_pointer_bug() {
    for bug in BUGS {
        for format in [&[][..], &["-O", "nonsrec"][..]] {
            let args = [&["--max-states", "300"][..], format].concat();
            let o = crashtest(&rollfs_bin(), "rollfs", bug, "bad", &args, None);
            let (states, ios, violations) = summary(&o);
            eprintln!("{bug}-bad under rollfs {format:?}: {states} crash states of {ios} I/Os");
            assert_eq!((violations, o.status.code()), (0, Some(0)), "{}{}", stdout(&o), stderr(&o));
        }
        let o = crashtest(&rollfs_bin(), "ext4-ordered", bug, "bad", &[], None);
        let (states, _, violations) = summary(&o);
        eprintln!("{bug}-bad under ext4-ordered: {violations} violations in {states} states");
        // rename: auto_da_alloc writes tmp's data before the rename commits; create: the
        // fsync commits the journal with the new name. pointer: the record's data is
        // written back on its own, after the pointer's.
        let want = if bug == "pointer" { Some(1) } else { Some(0) };
        assert_eq!(o.status.code(), want, "{bug}:\n{}{}", stdout(&o), stderr(&o));
    }
    let o = crashtest(&rollfs_bin(), "ext4-ordered", "pointer", "good", &[], None);
    assert_eq!((summary(&o).2, o.status.code()), (0, Some(0)), "{}", stdout(&o));
}

/// What keeps `rename-bad` (write tmp, `mv tmp file`, `sync .`) whole on a records image:
/// the riders (the directory fsync writes tmp's batch after the records) and the group
/// (recovery applies the records only with every batch after them). Without either, a crash
/// state shows `file` empty or short.
#[test]
fn without_riders_or_groups_a_directory_fsync_loses_the_renamed_files_data() {
    let bin = rollfs_mutants_bin();
    for mutant in ["mutant-no-riders", "mutant-nsrec-no-group"] {
        let o = crashtest(&bin, "rollfs", "rename", "bad", &["--max-states", "300"], Some(mutant));
        let (states, _, violations) = summary(&o);
        eprintln!("rename-bad under rollfs with {mutant}: {violations} violations in {states} states");
        assert!(violations > 0 && o.status.code() == Some(1), "{mutant} not caught:\n{}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("file holds "), "{}", stdout(&o));
    }
    let o = crashtest(&bin, "rollfs", "rename", "bad", &["--max-states", "300"], None);
    assert_eq!((summary(&o).2, o.status.code()), (0, Some(0)), "{}", stdout(&o));
}

#[test]
fn a_model_that_persists_everything_misses_the_bugs() {
    let bin = rollfs_mutants_bin();
    for mutant in rollfs::mutant::MODEL_NAMES {
        for bug in BUGS {
            let o = crashtest(&bin, "posix-weak", bug, "bad", &[], Some(mutant));
            let (states, _, violations) = summary(&o);
            eprintln!("{bug}-bad under posix-weak with {mutant}: {violations} violations in {states} states");
            assert_eq!((violations, o.status.code()), (0, Some(0)), "{}{}", stdout(&o), stderr(&o));
        }
    }
    // The same build without the mutant finds them.
    let o = crashtest(&bin, "posix-weak", "rename", "bad", &[], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn a_model_violation_reproduces_and_bad_usage_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let o = crashtest(&rollfs_bin(), "posix-weak", "pointer", "bad", &["--dir", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    let vline = out.lines().find(|l| l.contains("VIOLATION")).unwrap();
    let marks = vline.split(" marks before it").next().unwrap().rsplit('(').next().unwrap().to_string();
    let repro = out.lines().find_map(|l| l.trim().strip_prefix("reproduce: rollfs ")).expect("a reproducer");
    let img = d.path().join("state.img");
    let args: Vec<String> = repro
        .split("   ")
        .next()
        .unwrap()
        .split_whitespace()
        .map(|a| if a == "STATE.img" { img.display().to_string() } else { a.to_string() })
        .collect();
    let r = rollfs(&args);
    assert!(r.status.success(), "reproducer failed: {}{}", stdout(&r), stderr(&r));
    let m = Mount::new(&img, &[]);
    let c = Command::new("sh")
        .arg(script("pointer-check.sh"))
        .current_dir(&m.mnt)
        .env("ROLLFS_CRASHTEST_MARKS", &marks)
        .output()
        .unwrap();
    assert!(!c.status.success(), "the reproduced state passes the check: {repro}");
    drop(m);
    // The log of that run checks again (--log), under another model too.
    let log = dir.join("ops.log");
    let o = Command::new(rollfs_bin())
        .args(["crashtest", "--model", "ext4-ordered", "--log", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // Shards of the log's states add up to the whole.
    let whole = summary(&o).0;
    let mut sum = 0;
    for k in 0..2 {
        let o = Command::new(rollfs_bin())
            .args([
                "crashtest",
                "--model",
                "ext4-ordered",
                "--shard",
                &format!("{k}/2"),
                "--log",
                log.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        sum += summary(&o).0;
    }
    assert_eq!(sum, whole);
    // A write log is not an operation log, and the reverse.
    let o = Command::new(rollfs_bin()).args(["crashtest", "--log", log.to_str().unwrap()]).output().unwrap();
    assert_fails(&o, 2, "an operation log");
    let o = Command::new(rollfs_bin()).args(["crashtest", "--model", "ext3", "--", "true"]).output().unwrap();
    assert_fails(&o, 2, "unknown model");
    let o = rollfs(["replay", log.to_str().unwrap(), "--ops", "999:1", "--out", img.to_str().unwrap()]);
    assert_fails(&o, 2, "the log has");
    // An incomplete log (no end line) is refused, not taken for a short workload.
    let text = std::fs::read_to_string(&log).unwrap();
    let cut = d.path().join("cut.log");
    std::fs::write(&cut, text.lines().take(3).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let o = Command::new(rollfs_bin())
        .args(["crashtest", "--model", "posix-weak", "--log", cut.to_str().unwrap()])
        .output()
        .unwrap();
    assert_fails(&o, 8, "no end line");
}

/// The operation log is complete: the state that keeps every operation of a workload that
/// makes every kind of operation (tests/scripts/alice/many-ops.sh: mkdir, create, hard and
/// symbolic links, truncate, fallocate and punch, writes, copy_file_range, chmod, xattrs,
/// mkfifo, renames within and across directories, unlink, rmdir, fsync) shows the tree
/// the workload left, name for name and byte for byte.
#[test]
fn the_state_with_every_operation_is_the_workloads_tree() {
    require_fuse();
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let manifest = d.path().join("manifest-workload");
    let o = Command::new(rollfs_bin())
        .args(["crashtest", "--model", "posix-weak", "--max-states", "1", "--dir", dir.to_str().unwrap()])
        .args(transport_options())
        .arg("--")
        .arg("sh")
        .arg(script("many-ops.sh"))
        .env("MANIFEST_OUT", &manifest)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let log = rollfs::oplog::OpLog::open(&dir.join("ops.log")).unwrap();
    let n = log.ops.len();
    // Every kind of operation was logged.
    let kinds: std::collections::BTreeSet<String> =
        log.ops.iter().map(|op| serde_json::to_value(op).unwrap()["op"].as_str().unwrap().to_string()).collect();
    for k in [
        "create",
        "link",
        "unlink",
        "rename",
        "write",
        "set_size",
        "zero",
        "set_attr",
        "set_xattr",
        "remove_xattr",
        "fsync",
    ] {
        assert!(kinds.contains(k), "no {k} in the log: {kinds:?}");
    }
    let img = d.path().join("all.img");
    let r = rollfs([
        "replay",
        dir.join("ops.log").to_str().unwrap(),
        "--ops",
        &format!("{n}:1-{n}"),
        "--out",
        img.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let m = Mount::new(&img, &[]);
    let c = Command::new("sh").arg(script("manifest.sh")).current_dir(&m.mnt).output().unwrap();
    assert!(c.status.success(), "{}", stderr(&c));
    let want = std::fs::read_to_string(&manifest).unwrap();
    assert_eq!(want.lines().count(), 9, "{want}");
    assert_eq!(stdout(&c), want);
}
