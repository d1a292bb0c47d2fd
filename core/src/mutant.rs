//! Deliberately broken variants of the core (test-only), which the checkers must catch:
//! the crash explorer (`rollfs-sim mutants`) and the core's own crash tests
//! (`core/tests/mutants.rs`). Each `mutant-*` feature in Cargo.toml breaks one mechanism;
//! a site asks [`mutant!`]. Two ways to turn one on:
//!
//! - build with its feature (`--features mutant-fsync-no-wait`): that one mutant only;
//! - build with `mutants` and choose one at run time: with [`select`] (the explorer's
//!   guest), or, where the environment exists, with `ROLLFS_MUTANT=mutant-x` (the core's
//!   mutant tests: `cargo test --features mutants` builds once for every mutant). Only this
//!   test-only feature links `std`, for that environment variable.
//!
//! Without either, `mutant!` is the constant `false` and the broken code compiles away.

#[cfg(feature = "mutants")]
use core::sync::atomic::{AtomicUsize, Ordering};
#[cfg(feature = "mutants")]
extern crate std;

/// Every mutant, as its Cargo feature is named (a test checks this list against
/// Cargo.toml).
pub const NAMES: [&str; 45] = [
    "mutant-cp-no-flush",
    "mutant-cp-no-crc",
    "mutant-nat-lost",
    "mutant-reuse-before-cp",
    "mutant-fsync-no-wait",
    "mutant-no-fsync-mark",
    "mutant-no-dentry-mark",
    "mutant-recovery-ignores-version",
    "mutant-recovery-no-crc",
    "mutant-atomic-no-wait",
    "mutant-gc-no-ssa",
    "mutant-ssr-reuse-before-cp",
    "mutant-eio-no-read-only",
    "mutant-cp-in-recovery",
    "mutant-truncate-free-before-reserve",
    "mutant-atomic-partial-commit",
    "mutant-orphan-limit",
    "mutant-no-recovery-reserve",
    "mutant-fallocate-no-reserve",
    "mutant-recovery-no-data-check",
    "mutant-stale-parent",
    "mutant-eio-change-before-read",
    "mutant-spilled-commit-by-batch",
    "mutant-prealloc-by-batch",
    "mutant-recovery-drops-reservations",
    "mutant-recovery-drops-inline-data",
    "mutant-inline-shrink-keeps-bytes",
    "mutant-device-read-no-crc",
    "mutant-device-cp-header-fua",
    "mutant-grow-header-before-tables",
    "mutant-mount-no-version-jump",
    "mutant-nsrec-batch-before-records",
    "mutant-dir-fsync-no-records",
    "mutant-no-riders",
    "mutant-nsrec-no-group",
    "mutant-recovery-writes-at-the-gap",
    "mutant-recovery-writes-over-chain-data",
    "mutant-chain-no-skip",
    "mutant-cpsum-unpinned",
    "mutant-commit-skips-journal-records",
    "mutant-relinked-skips-other-reasons",
    "mutant-records-without-dependencies",
    "mutant-records-without-riders-own",
    "mutant-records-without-path",
    "mutant-records-without-barriers",
];

/// Index in [`NAMES`] of the mutant chosen at run time; [`NONE`]: none; [`UNSET`]: not yet
/// looked up (the environment decides at first use).
#[cfg(feature = "mutants")]
static SELECTED: AtomicUsize = AtomicUsize::new(UNSET);
#[cfg(feature = "mutants")]
const UNSET: usize = usize::MAX;
#[cfg(feature = "mutants")]
const NONE: usize = usize::MAX - 1;

/// Chooses the mutant `name` for this process (or wasm instance), or none with `""`.
/// Returns false when the core was built without `mutants` or `name` is unknown.
pub fn select(name: &str) -> bool {
    #[cfg(feature = "mutants")]
    {
        if name.is_empty() {
            SELECTED.store(NONE, Ordering::Relaxed);
            return true;
        }
        if let Some(i) = NAMES.iter().position(|n| *n == name) {
            SELECTED.store(i, Ordering::Relaxed);
            return true;
        }
    }
    let _ = name;
    false
}

/// Whether the mutant `name` was chosen at run time (see [`select`]).
#[doc(hidden)]
#[inline]
pub fn selected(name: &str) -> bool {
    #[cfg(feature = "mutants")]
    {
        let mut i = SELECTED.load(Ordering::Relaxed);
        if i == UNSET {
            let env = std::env::var("ROLLFS_MUTANT").ok();
            let found = env.and_then(|n| NAMES.iter().position(|x| *x == n)).unwrap_or(NONE);
            // A select() that raced ahead wins.
            i = match SELECTED.compare_exchange(UNSET, found, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => found,
                Err(now) => now,
            };
        }
        i < NAMES.len() && NAMES[i] == name
    }
    #[cfg(not(feature = "mutants"))]
    {
        let _ = name;
        false
    }
}

/// `mutant!("mutant-x")`: whether that mutant is on (its feature, or chosen at run time).
#[macro_export]
macro_rules! mutant {
    ($name:tt) => {
        (cfg!(feature = $name) || $crate::mutant::selected($name))
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_the_mutant_features_of_cargo_toml() {
        let toml = include_str!("../Cargo.toml");
        let features: alloc::vec::Vec<&str> = toml
            .lines()
            .filter_map(|l| l.split_once(" = []").map(|(n, _)| n.trim()))
            .filter(|n| n.starts_with("mutant-"))
            .collect();
        assert_eq!(features, super::NAMES.to_vec());
    }

    #[test]
    fn without_the_mutants_feature_nothing_can_be_selected() {
        if !cfg!(feature = "mutants") {
            assert!(!super::select("mutant-fsync-no-wait"));
            assert!(super::NAMES.iter().all(|n| !super::selected(n)));
        }
    }
}
