//! Mutants that the core's own crash tests must catch. The core's tests are built once
//! with the `mutants` feature (every mutant compiled in, none on); each row runs the named
//! test file with `ROLLFS_MUTANT=<mutant>` (a deliberately broken core, see
//! core/src/mutant.rs) and asserts that it then FAILS. The simulator (`rollfs-sim mutants`, wasm-harness/tests/explore.rs)
//! catches every mutant in core/Cargo.toml; these are a second line, independent of the
//! simulator.

use std::process::Command;

/// (mutant feature, test file that must fail with it)
const CAUGHT_BY_CORE_TESTS: &[(&str, &str)] = &[
    ("mutant-gc-no-ssa", "cleaning"),
    ("mutant-reuse-before-cp", "cleaning"),
    ("mutant-ssr-reuse-before-cp", "cleaning"),
    ("mutant-eio-no-read-only", "errors"),
    ("mutant-recovery-ignores-version", "cleaning"),
    ("mutant-fsync-no-wait", "recovery"),
    ("mutant-recovery-no-data-check", "recovery"),
    ("mutant-atomic-no-wait", "recovery"),
    ("mutant-cp-in-recovery", "exhaustion"),
    ("mutant-truncate-free-before-reserve", "exhaustion"),
    ("mutant-atomic-partial-commit", "exhaustion"),
    ("mutant-orphan-limit", "exhaustion"),
    ("mutant-no-recovery-reserve", "exhaustion"),
    ("mutant-stale-parent", "hidden_history"),
    ("mutant-eio-change-before-read", "cold_cache"),
    ("mutant-spilled-commit-by-batch", "atomic_cow"),
    ("mutant-prealloc-by-batch", "reservations_on_disk"),
    ("mutant-recovery-drops-reservations", "reservations_on_disk"),
    ("mutant-recovery-drops-inline-data", "inline"),
    ("mutant-inline-shrink-keeps-bytes", "inline"),
    ("mutant-device-read-no-crc", "datasum"),
    ("mutant-grow-header-before-tables", "online_grow"),
    ("mutant-mount-no-version-jump", "earlier_use"),
    ("mutant-nsrec-batch-before-records", "nsrec_recovery"),
    ("mutant-dir-fsync-no-records", "nsrec_recovery"),
    ("mutant-no-riders", "nsrec_recovery"),
    ("mutant-nsrec-no-group", "nsrec_recovery"),
    ("mutant-recovery-writes-at-the-gap", "nsrec_recovery"),
    ("mutant-recovery-writes-over-chain-data", "nsrec_recovery"),
    ("mutant-chain-no-skip", "mixed_node"),
    ("mutant-cpsum-unpinned", "cp_summaries"),
    ("mutant-commit-skips-journal-records", "nsrec_recovery"),
    ("mutant-relinked-skips-other-reasons", "other_names"),
    ("mutant-records-without-dependencies", "records_by_dependency"),
    ("mutant-records-without-riders-own", "records_by_dependency"),
    ("mutant-records-without-path", "records_by_dependency"),
    ("mutant-records-without-barriers", "records_by_dependency"),
];

#[test]
fn core_crash_tests_catch_their_mutants() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let target_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/mutants-core");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut missed = Vec::new();
    for &(feature, test) in CAUGHT_BY_CORE_TESTS {
        let out = Command::new(&cargo)
            .args(["test", "--quiet", "--release", "--manifest-path", manifest, "--target-dir", target_dir])
            .args(["--features", "mutants", "--test", test])
            .env("ROLLFS_MUTANT", feature)
            .output()
            .expect("run cargo");
        let stdout = String::from_utf8_lossy(&out.stdout);
        // A build failure is not a catch: the tests must have run and failed.
        let ran_and_failed = !out.status.success() && stdout.contains("test result: FAILED");
        eprintln!("{feature} ({test}): {}", if ran_and_failed { "caught" } else { "MISSED" });
        if !ran_and_failed {
            missed.push(feature);
        }
    }
    assert!(missed.is_empty(), "mutants the core's crash tests no longer catch: {missed:?}");
}

#[test]
fn the_mutants_build_runs_clean_without_a_mutant_chosen() {
    // The same build with no mutant chosen passes: a catch above is the mutant's doing.
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let target_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/mutants-core");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(["test", "--quiet", "--release", "--manifest-path", manifest, "--target-dir", target_dir])
        .args(["--features", "mutants", "--test", "errors", "--test", "recovery"])
        .env_remove("ROLLFS_MUTANT")
        .output()
        .expect("run cargo");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn every_listed_mutant_is_a_feature_of_the_core() {
    let toml = include_str!("../Cargo.toml");
    for &(feature, _) in CAUGHT_BY_CORE_TESTS {
        assert!(toml.contains(&format!("{feature} = []")), "{feature} is not declared");
    }
}
