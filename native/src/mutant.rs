//! Deliberately broken variants of the driver (test-only), which `rollfs crashtest` must
//! catch; the core's own mutants are `rollfs_core::mutant`. Built only with the `mutants`
//! feature (which also compiles in every core mutant): then `ROLLFS_MUTANT=<name>` chooses
//! one mutant, of the driver or of the core, for the process. Without the feature
//! [`active`] is the constant `false` and the broken code compiles away.
//!
//! | mutant | what it breaks |
//! |---|---|
//! | `mutant-fsync-ack-before-flush` | fsync returns once its writes are submitted, before they are waited for and flushed |
//! | `mutant-flush-without-drain` | group commit's flush does not wait for the writes submitted before it (device.rs, `FlushHandle`) |
//! | `mutant-flush-skip-before-drain` | whether a flush would cover anything new is decided before the fsync's writes are drained: the flush is skipped and they reach the host unflushed (device.rs) |
//! | `mutant-flush-epoch-after-flush` | a flush records as covered the writes that completed *while* its `fdatasync` ran, so the next flush after them is skipped (device.rs; caught by its two-thread test `a_write_completed_during_a_flush_is_flushed_again`) |
//! | `mutant-release-ends-session-late` | a RELEASE that aborts a session takes it out of the session table before the core has aborted it (as before this fix), and waits 50 ms in between: an fsync through another handle succeeds while reads still return the staged bytes |
//! | `mutant-notify-on-request-thread` | a kernel notification (an atomic abort's page invalidation) is sent from the request thread, as before issue 35, not from the notify thread (notify.rs) |
//! | `mutant-model-all-persisted` | the persistence models (models.rs) treat every operation as persisted in order: `crashtest --model posix-weak` then checks only prefixes of the operations, as rollfs's own semantics give |
//! | `mutant-setflags-not-durable` | FS_IOC_SETFLAGS/FSSETXATTR (`chattr`) replies once the core has the flags in memory, without the fsync that makes them durable |
//! | `mutant-proc-under-lock` | the privilege removal reads a caller's capabilities and groups from /proc while holding the core lock (as before review 54's finding 3), instead of asking for them before it |
//!
//! [`NAMES`] are caught by `rollfs crashtest` (tests/tests/crashtest.rs); [`LIVENESS_NAMES`]
//! break no crash state but the daemon's availability, and are caught by
//! tests/tests/daemon.rs (a watchdog finds the mount wedged); [`VISIBILITY_NAMES`] break
//! no crash state but what a read returns, and are caught by
//! tests/tests/atomic_and_group_commit.rs; [`MODEL_NAMES`] break the persistence models'
//! rules, and are caught by tests/tests/crashtest_models.rs (the known-bad programs pass);
//! [`FLAGS_NAMES`] lose attribute flags `chattr` acknowledged, caught by the crash states
//! of tests/tests/flags.rs; [`LOCK_NAMES`] read /proc under the core lock, caught by
//! tests/tests/security.rs (the driver's `proc_reads_under_lock` counter).

/// The driver's mutants that `rollfs crashtest` catches.
pub const NAMES: [&str; 3] =
    ["mutant-fsync-ack-before-flush", "mutant-flush-without-drain", "mutant-flush-skip-before-drain"];

/// The driver's mutants that only a race can expose: caught by the deterministic
/// two-thread tests of device.rs (`cargo test -p rollfs --features mutants`), which
/// tests/tests/crashtest.rs runs.
pub const RACE_NAMES: [&str; 1] = ["mutant-flush-epoch-after-flush"];

/// The driver's mutants that let a read return an atomic write's aborted bytes after the
/// session is over for other requests (caught by tests/tests/atomic_and_group_commit.rs).
pub const VISIBILITY_NAMES: [&str; 1] = ["mutant-release-ends-session-late"];

/// The driver's mutants that lose acknowledged attribute flags at a crash (caught by
/// tests/tests/flags.rs, `every_crash_after_chattr_returned_keeps_the_flags`).
pub const FLAGS_NAMES: [&str; 1] = ["mutant-setflags-not-durable"];

/// The driver's mutants that read /proc under the core lock (caught by tests/tests/security.rs,
/// `caller_facts_are_read_outside_the_core_lock`).
pub const LOCK_NAMES: [&str; 1] = ["mutant-proc-under-lock"];

/// The driver's mutants that wedge the daemon (caught by tests/tests/daemon.rs).
pub const LIVENESS_NAMES: [&str; 1] = ["mutant-notify-on-request-thread"];

/// The persistence models' mutants: with one chosen, `crashtest --model posix-weak` no
/// longer finds the known-bad programs' bugs (tests/tests/crashtest_models.rs).
pub const MODEL_NAMES: [&str; 1] = ["mutant-model-all-persisted"];

/// Whether mutant `name` is chosen for this process.
#[cfg(feature = "mutants")]
pub fn active(name: &str) -> bool {
    static CHOSEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(|| std::env::var("ROLLFS_MUTANT").ok()).as_deref() == Some(name)
}

/// Whether mutant `name` is chosen for this process: never, without the feature.
#[cfg(not(feature = "mutants"))]
#[inline(always)]
pub fn active(_name: &str) -> bool {
    false
}
