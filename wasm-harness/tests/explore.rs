//! End-to-end tests of the explorer against the real core guest: a bounded exploration of
//! every workload kind with zero violations, determinism of traces and verdicts, fault
//! containment (a guest trap is a failed state, not a harness crash), and the mutants.

use rollfs_sim::explore::{explore, Explorer, Options, Source};
use rollfs_sim::guest::GuestModule;
use rollfs_sim::workload::{CaseId, Op, Workload};

fn explorer(opts: Options) -> Explorer {
    Explorer::new(GuestModule::default_guest().expect("guest"), opts).expect("format")
}

fn small_opts(seed: u64) -> Options {
    Options { seed, max_points: 40, random_variants: 1, recovery_crashes: 1, ..Options::default() }
}

#[test]
fn bounded_exploration_has_no_violations() {
    let ex = explorer(Options { torn: true, eio: true, ..small_opts(7) });
    let mut all = Vec::new();
    for (src, n) in [(Source::Regression, 100), (Source::Ace, 12), (Source::Random, 12)] {
        let s = explore(&ex, src, Some(n), None, false, &mut |v| {
            eprintln!("VIOLATION {} in {} state {:?}: {}", v.kind, v.case, v.state.map(|s| s.to_string()), v.detail)
        });
        eprintln!("{src:?}: {}", s.last_line());
        assert!(s.states > 0);
        all.extend(s.violations);
    }
    assert!(all.is_empty(), "{} violations", all.len());
}

#[test]
fn same_seed_same_digest() {
    let a = explore(&explorer(small_opts(3)), Source::All, Some(8), None, false, &mut |_| {});
    let b = explore(&explorer(Options { threads: 1, ..small_opts(3) }), Source::All, Some(8), None, false, &mut |_| {});
    assert_eq!(
        (a.states, a.digest),
        (b.states, b.digest),
        "same seed and build must give identical traces and verdicts"
    );
    let c = explore(&explorer(small_opts(4)), Source::Random, Some(4), None, false, &mut |_| {});
    let d = explore(&explorer(small_opts(3)), Source::Random, Some(4), None, false, &mut |_| {});
    assert_ne!(c.digest, d.digest, "a different seed explores differently");
}

#[test]
fn replay_reproduces_a_state() {
    let ex = explorer(small_opts(1));
    let case = CaseId::Ace(3);
    let w = rollfs_sim::workload::workload(&case, 1).unwrap();
    let (log, bad) = ex.replay(&w, "12:1".parse().unwrap());
    assert!(bad.is_none(), "{log:#?}");
    assert!(log.iter().any(|l| l.contains("allowed states")));
}

#[test]
fn guest_errors_are_reported_not_fatal() {
    // Operations on a missing path fail in both model and guest; the run goes on.
    let ex = explorer(small_opts(1));
    let w = Workload {
        name: "errors".into(),
        ops: vec![Op::Unlink("/nope".into()), Op::Rmdir("/".into()), Op::Create("/x".into()), Op::Sync],
        dev_seed: 1,
        completion: rollfs_sim::device::Completion::Random(2),
        discard_ignored: false,
        recovery_eio: None,
        device: None,
        no_enospc: false,
    };
    let r = ex.explore_workload(&CaseId::Random(0), &w);
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    assert!(r.states > 0);
}

#[test]
fn repetitions_without_io_share_one_record() {
    // A thousand links cost one model state, not a thousand: the records are mount,
    // mkdir, create, the links (no I/O: one group), sync, the unlink, fsync, unmount.
    let ex = explorer(small_opts(1));
    let text = "mkdir /d\ncreate /d/f\nrepeat 1000 link /d/f /d/l{i}\nsync\nunlink /d/l7\nfsync /d/f\n";
    let w = Workload::parse("links", text, 5).unwrap();
    let run = ex.run(&w, None);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
    let labels: Vec<&str> = run.records.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels.len(), 8, "{labels:?}");
    assert_eq!(labels[3], "repeat 1000 link /d/f /d/l{i} [1..=1000]");
    assert_eq!(run.states[3].entries.len(), 1003);
    let r = ex.explore_workload(&CaseId::Random(0), &w);
    assert!(r.violations.is_empty(), "{:?}", r.violations);
}

#[test]
fn recovery_eio_directive_fails_every_recovery_read() {
    // seed-recovery-eio.wl: with `@recovery-eio each`, every crash state that recovers a
    // chain is checked once more per read of its recovery mount, each time with that read
    // failing; without the directive it is checked once. Both explorations are clean.
    let path = rollfs_sim::workload::regression_dir().join("seed-recovery-eio.wl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("@recovery-eio each"));
    let with = Workload::parse("with", &text, 1).unwrap();
    let without = Workload { recovery_eio: None, ..with.clone() };
    let ex = explorer(small_opts(2));
    let a = ex.explore_workload(&CaseId::File(path.clone()), &with);
    let b = ex.explore_workload(&CaseId::File(path), &without);
    assert!(a.violations.is_empty() && b.violations.is_empty(), "{:?} {:?}", a.violations, b.violations);
    assert!(a.states > 5 * b.states, "{} states with the directive, {} without", a.states, b.states);
    // One failing-read check can be replayed on its own.
    let (log, bad) = ex.replay(&with, "82:0@13".parse().unwrap());
    assert!(bad.is_none(), "{log:#?}");
    assert!(log.iter().any(|l| l.contains("Errno(5")), "{log:#?}");
}

#[test]
fn bounded_eio_sweep_has_no_violations() {
    // Every regression workload and a few ACE and random cases, with up to 12 of their
    // reads, writes and flushes failing in turn (`rollfs-sim eio-sweep` does them all).
    let ex = explorer(small_opts(3));
    let cases = rollfs_sim::eio::standard_cases(6, 6);
    let sum = rollfs_sim::eio::sweep(&ex, &cases, Some(12), false, &mut |v| {
        eprintln!("VIOLATION {} in {}: {}", v.kind, v.case, v.detail)
    });
    eprintln!("{}", sum.last_line());
    assert_eq!(sum.workloads, cases.len() as u64);
    assert!(sum.reads > 50 && sum.writes > 100 && sum.flushes > 30, "{}", sum.last_line());
    assert!(sum.violations.is_empty(), "{}", sum.last_line());
}

/// Every core mutant must be caught: the test builds one guest per mutant and explores
/// (regression workloads first) until the first violation. A mutant missed fails the test.
#[test]
fn mutants_are_caught() {
    let names = rollfs_sim::mutants::list();
    assert!(!names.is_empty(), "core declares mutants");
    let opts = Options { torn: true, max_points: 100, ..small_opts(0) };
    let missed: Vec<String> = names
        .iter()
        .map(|n| rollfs_sim::mutants::check(n, &opts, 60))
        .inspect(|r| eprintln!("{} {}: {} ({} states)", r.caught, r.name, r.note, r.states))
        .filter(|r| !r.caught)
        .map(|r| r.name)
        .collect();
    assert!(missed.is_empty(), "mutants not caught: {missed:?}");
}
