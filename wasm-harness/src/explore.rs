//! Crash-state exploration: run a workload once, derive crash images from its trace,
//! recover each in a fresh guest instance and judge it against the oracle.
//!
//! This module owns the exploration loop, the oracle's verdict for one crash state, the
//! identity of a crash state (so that `replay` can rebuild exactly one), the digest used
//! by the determinism test, and shrinking of failing workloads.
//!
//! The oracle, for the persistence points this core has (sync, unmount, and any
//! checkpoint the core writes on its own, seen through its statistics): a crash at trace
//! point `c` must recover to the model state of exactly one persistence point `p`, where
//! `p` is at least the last persistence point whose I/O had all happened by `c` and at most
//! the last operation that had started I/O by `c` (see [`allowed_states`]); mount must
//! succeed (or fail with EIO when an EIO was injected), fsck must find the image clean,
//! and a crash during that recovery must recover to an allowed state again.
//! Per-file rules (fsync, fdatasync, atomic writes: invariants 2-5 of docs/INVARIANTS.md) belong
//! in [`Explorer::judge`] next to the whole-tree rule, using the same [`Run`] records.

use crate::device::{
    choose_survivors, fixed_variants, BlockRef, CrashWalker, Eio, Image, IoCounts, IoKind, Recording, SimDevice,
};
use crate::guest::{stat_index, CoreStats, GuestError, GuestModule, E_DATASUM, STAT_NAMES};
use crate::history::{self, History};
use crate::model::{BlockCache, DumpBlocks, DumpFault, Model, Tree};
use crate::rng::{Hasher64, Rng};
use crate::states::{Delta, StateTracker};
use crate::workload::{CaseId, Op, RecoveryEio, Workload};
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Time given to the guest: the workload's operations run at `NOW_BASE + index` seconds.
const NOW_BASE: i64 = 1_700_000_000;

#[derive(Debug, Clone)]
pub struct Options {
    pub seed: u64,
    pub torn: bool,
    pub eio: bool,
    /// Device size in 4 KiB blocks (2048 = 8 MiB).
    pub image_blocks: u64,
    pub segment_blocks: u32,
    /// Crash points per workload run; more are sampled down (seeded).
    pub max_points: usize,
    /// Random survivor subsets per crash point, besides "none" and "all".
    pub random_variants: u32,
    /// Crashes injected into each recovery (at sampled recovery I/O points).
    pub recovery_crashes: u32,
    pub threads: usize,
    /// Log every I/O of each recovery mount (replay's view; too slow for exploration).
    pub trace_mount: bool,
    /// Answer a crash image from an earlier guest session of the run when the guest would
    /// read the same blocks ([`GuestMemo`]), with the other memos, and check live ones in a
    /// reused instance ([`GuestModule::release`]); off only to compare (`--no-memo`: every
    /// crash image in a fresh instance).
    pub memo: bool,
    /// Check each incremental model state of a run against a rebuild from the whole model
    /// (`crate::states`; slow: O(operations x names), for tests).
    pub verify_states: bool,
    /// Check every [`FsckMemo`] answer against a live fsck of the same device: the same
    /// problems from the same requests (for tests).
    pub verify_memo: bool,
    /// Cold caches in the workload's run (`--cold`; the guest's `sim_set_cold`): every read
    /// an operation makes comes from the device, so `--eio` and `eio-sweep` reach the reads
    /// after an operation's first change that warm caches always answered (issue 35).
    pub cold: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 0,
            torn: false,
            eio: false,
            image_blocks: 2048,
            segment_blocks: 16,
            max_points: 400,
            random_variants: 2,
            recovery_crashes: 2,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8),
            trace_mount: false,
            memo: true,
            verify_states: false,
            verify_memo: false,
            cold: false,
        }
    }
}

/// What [`Explorer::run_hooked`] calls when a run stopped at a failure.
pub type AfterStop<'a> = dyn FnMut(&mut crate::guest::Guest, &mut Run, Option<&mut Model>) + 'a;

/// After a read error failed operation `label` without shutting the filesystem down, a
/// `sync` (run by the caller) made the state before the operation durable: records it as a
/// checkpoint of `model` (the model before the operation), so that every remount of the
/// run must show exactly that state (invariant 7: the failed operation changed nothing).
pub(crate) fn record_sync_after_failure(
    run: &mut Run,
    model: &mut Model,
    events: Range<usize>,
    got: &Result<i64, GuestError>,
) {
    let _ = model.apply(&Op::Sync);
    push_record(
        run,
        model,
        "sync (after the failed operation)".into(),
        events,
        Persist::Checkpoint,
        got,
        (Op::Sync, None),
    );
}

/// Kind of persistence an operation provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persist {
    None,
    /// Mount, sync, unmount: the whole tree at the end of the operation.
    Checkpoint,
    /// The core wrote a checkpoint by itself during the operation (statistics counter):
    /// the tree before or after the operation.
    Implicit,
}

/// One operation of a run, with the trace events it issued.
#[derive(Debug, Clone)]
pub struct OpRecord {
    pub label: String,
    pub events: Range<usize>,
    pub persist: Persist,
    pub result: String,
    /// The operation returned success (a failed sync does not raise the lower bound).
    pub ok: bool,
    /// The errno (or ABI code) it failed with; `None` on success or a trap.
    pub errno: Option<i64>,
}

/// A recorded run of a workload: trace, per-operation records and model states.
pub struct Run {
    pub workload: Workload,
    pub start: Image,
    pub trace: crate::device::Trace,
    pub records: Vec<OpRecord>,
    /// `states[k]`: the model tree after record `k` (as a checkpoint persists it).
    pub states: Vec<Tree>,
    /// `snaps[k]`: the per-file oracle's view after record `k`.
    pub snaps: Vec<crate::model::Snap>,
    /// `ops[k]`: the workload operation of record `k` and, for an fsync-class operation,
    /// the model inode it targeted.
    pub ops: Vec<Option<(Op, Option<u64>)>>,
    pub problems: Vec<(String, String)>,
    pub counts: IoCounts,
    pub eio: Option<Eio>,
    /// Hashes and checksums of the blocks this run's crash images share (planned dumps).
    pub block_cache: BlockCache,
    /// Guest sessions of this run's crash images, for images that read the same.
    pub memo: GuestMemo,
    pub fsck_memo: FsckMemo,
    pub dump_memo: DumpMemo,
    /// The verdicts of trees recovered at each crash point, by point and tree hash
    /// ([`Explorer::tree_verdict`]): the crash images of a point mostly recover to a few
    /// trees. Bounded by the run's crash states.
    pub verdicts: VerdictMemo,
    /// Interval histories of `states` and `snaps` for the per-file rules (made with the
    /// run's crash states, [`Explorer::prepare_workload`], or on first use).
    pub history: std::sync::OnceLock<History>,
    /// `deltas[k]`: what `states[k]` and `snaps[k]` changed from the record before.
    pub deltas: Vec<Delta>,
    /// Makes `states` and `snaps` (emptied when the run ends).
    tracker: StateTracker,
    /// Check every incremental state against a rebuild from the whole model (slow; tests).
    verify_states: bool,
}

impl Run {
    /// The per-file rules' interval history, made on first use.
    fn history(&self) -> &History {
        self.history.get_or_init(|| History::from_deltas(&self.states, &self.snaps, &self.deltas))
    }
}

/// Identity of one crash state within a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateId {
    /// The state comes from the run with an injected write/flush EIO.
    pub eio_run: bool,
    pub point: usize,
    pub variant: u32,
    /// A crash during the recovery of that state: recovery trace point and variant.
    pub recovery: Option<(usize, u32)>,
    /// `@recovery-eio each`: the check of the state in which read N of the recovery mount
    /// fails.
    pub read_eio: Option<u64>,
}

impl fmt::Display for StateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}:{}", if self.eio_run { "e" } else { "" }, self.point, self.variant)?;
        if let Some(n) = self.read_eio {
            write!(f, "@{n}")?;
        }
        if let Some((q, w)) = self.recovery {
            write!(f, "/{q}:{w}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for StateId {
    type Err = String;
    fn from_str(s: &str) -> Result<StateId, String> {
        let bad = || format!("state is P:V, P:V/Q:W or P:V@N (optionally eP:V), got {s}");
        let (eio_run, s) = match s.strip_prefix('e') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let pair = |x: &str| -> Result<(usize, u32), String> {
            let (a, b) = x.split_once(':').ok_or_else(bad)?;
            Ok((a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?))
        };
        let (main, rec) = match s.split_once('/') {
            Some((m, r)) => (m, Some(pair(r)?)),
            None => (s, None),
        };
        let (main, read_eio) = match main.split_once('@') {
            Some((m, n)) => (m, Some(n.parse().map_err(|_| bad())?)),
            None => (main, None),
        };
        let (point, variant) = pair(main)?;
        Ok(StateId { eio_run, point, variant, recovery: rec, read_eio })
    }
}

#[derive(Debug, Clone)]
pub struct Violation {
    pub case: CaseId,
    pub workload: Workload,
    pub state: Option<StateId>,
    pub kind: String,
    pub detail: String,
}

/// Verdict of one crash state.
#[derive(Debug, Clone)]
struct Verdict {
    states: u64,
    digest: u64,
    violation: Option<(StateId, String, String)>,
}

/// A workload's runs ready to be checked ([`Explorer::prepare_workload`]): each run with
/// the crash states of it to check.
pub struct Prepared {
    runs: Vec<(Run, Vec<Job>)>,
}

/// One crash state to check.
struct Job {
    id: StateId,
    image: Image,
    allowed: Vec<usize>,
}

/// Results of exploring one case.
#[derive(Debug, Clone, Default)]
pub struct CaseResult {
    pub states: u64,
    pub digest: u64,
    pub violations: Vec<Violation>,
}

/// The guest's answers for one crash image and the device requests it made
/// ([`Explorer::guest_session`]). `None` for the calls it did not get to.
pub struct GuestSession {
    pub recording: Recording,
    /// The injected failing read of the recovery mount, if any (part of the key).
    pub eio_read: Option<u64>,
    /// The device's size (the guest asks for it; every image of a run has the run's).
    pub block_count: u64,
    /// Requests the mount made (the injected error applies to these only).
    pub mount_requests: usize,
    /// Read calls among them (a failed one too): an injected failing read `nth` fires
    /// only when `nth < mount_reads`.
    pub mount_reads: u64,
    pub mount: Result<(), GuestError>,
    pub stats_after_mount: Option<Result<CoreStats, GuestError>>,
    pub fsck: Option<Result<Vec<String>, GuestError>>,
    pub dump: Option<Result<Vec<u8>, GuestError>>,
    pub stats_after_dump: Option<Result<CoreStats, GuestError>>,
    /// The tree the dump gave on the device of the last image checked with this session
    /// ([`Explorer::dump_tree`]).
    pub parsed: Mutex<Option<Arc<ParsedDump>>>,
    /// Where [`GuestSession::fits`] last found a differing block ([`MissHint`]).
    pub miss: MissHint,
}

/// The index of the read at which a memo entry last failed to fit, checked first next
/// time. A live guest's image misses every entry of its run's memo, and the reads that
/// differ are mostly the same few late ones (the newest nodes of the chain its recovery
/// walks): in read order, each miss compared most of an entry's reads (hundreds) before
/// reaching them. Only the order of the comparisons depends on it, never the answer.
#[derive(Default)]
pub struct MissHint(AtomicUsize);

impl MissHint {
    /// Whether `same(i)` holds for every read `i` below `n`, trying the hinted one first
    /// and remembering the first that does not hold.
    fn all(&self, n: usize, same: impl Fn(usize) -> bool) -> bool {
        let hint = self.0.load(Ordering::Relaxed);
        if hint < n && !same(hint) {
            return false;
        }
        match (0..n).find(|&i| i != hint && !same(i)) {
            None => true,
            Some(i) => {
                self.0.store(i, Ordering::Relaxed);
                false
            }
        }
    }
}

/// The tree a planned dump gave and the device blocks it named (each as the device held
/// it). The tree is a function of the dump's bytes and those blocks: another image
/// answered from the same session whose device holds the same blocks there gets the same
/// tree without hashing and checking them again.
pub struct ParsedDump {
    pub tree: Tree,
    pub blocks: Vec<(u64, Option<BlockRef>)>,
}

impl GuestSession {
    /// True when a guest on `image` would read exactly what this one read: every block it
    /// read from its start image is the same in `image` (absent blocks read as zeros), and
    /// the injected failing read is the same — or fires in neither: a mount that makes
    /// fewer reads than `nth` never sees it, so it runs as with none (about a third of
    /// the live guests of `--eio` explorations were such states before this).
    fn fits(&self, image: &Image, eio_read: Option<u64>) -> bool {
        let fires = |e: Option<u64>| e.is_some_and(|nth| nth < self.mount_reads);
        if (fires(self.eio_read) || fires(eio_read)) && self.eio_read != eio_read {
            return false;
        }
        if self.block_count != image.block_count() {
            return false;
        }
        let inputs = &self.recording.inputs;
        self.miss.all(inputs.len(), |i| blocks_equal(image.get(inputs[i].0), inputs[i].1.as_ref()))
    }
}

/// A run's answers, most recently used first, bounded to the newest [`Memo::SESSIONS_MAX`]
/// (a hit moves to the front): the guest sessions of its crash images ([`GuestMemo`]) and
/// the fscks of its recovered devices ([`FsckMemo`]). Shared by the checking threads.
pub struct Memo<T> {
    sessions: Mutex<std::collections::VecDeque<Arc<T>>>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo { sessions: Mutex::default() }
    }
}

impl<T> Memo<T> {
    pub const SESSIONS_MAX: usize = 48;

    /// The most recent answer that `fits`.
    fn find(&self, fits: impl Fn(&T) -> bool) -> Option<Arc<T>> {
        let snapshot: Vec<Arc<T>> = self.sessions.lock().unwrap().iter().cloned().collect();
        let hit = snapshot.into_iter().find(|s| fits(s))?;
        let mut q = self.sessions.lock().unwrap();
        if let Some(i) = q.iter().position(|s| Arc::ptr_eq(s, &hit)) {
            let s = q.remove(i).expect("position is in range");
            q.push_front(s);
        }
        Some(hit)
    }

    fn insert(&self, s: Arc<T>) {
        let mut q = self.sessions.lock().unwrap();
        q.push_front(s);
        q.truncate(Self::SESSIONS_MAX);
    }
}

/// The guest sessions of one run's crash images, for images that hold the same blocks where
/// an earlier one was read (`--no-memo` turns it off).
pub type GuestMemo = Memo<GuestSession>;

/// An fsck answer of one run, with what it read ([`FsckMemo`]).
pub struct FsckSession {
    /// The fsck's device requests (reads only), to make again on a device it answers for.
    pub requests: Vec<crate::device::Request>,
    /// Each block the fsck read, as the device held it then (`None`: never written).
    pub reads: Vec<(u64, Option<BlockRef>)>,
    pub problems: Vec<String>,
    /// Where [`FsckSession::fits`] last found a differing block.
    pub miss: MissHint,
}

/// Two blocks of a device are the same bytes (an absent block reads as zeros).
fn blocks_equal(a: Option<&BlockRef>, b: Option<&BlockRef>) -> bool {
    let zero = |b: &BlockRef| b.iter().all(|&x| x == 0);
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a[..] == b[..],
        (None, None) => true,
        (Some(x), None) | (None, Some(x)) => zero(x),
    }
}

/// The fsck answers of one run's recovered devices. fsck is a function of the blocks it
/// reads: it mounts the device read-only on its own (`rollfs_core::fsck::check`), never
/// the recovering mount's memory, and writes nothing. So a recovered device that holds the
/// same blocks wherever an earlier fsck of the run read gets that fsck's problems, with its
/// reads made again on the device (the trace, recording and device are those of a live
/// fsck). Crash images whose recoveries read different blocks (a chain cut at a different
/// node, a torn variant) often recover to the same metadata: most live guests of a full
/// device's run skip their fsck this way. Only clean exits are kept (an fsck that traps
/// leaves a dead instance). `--no-memo` turns it off.
pub type FsckMemo = Memo<FsckSession>;

/// A tree's verdict at a crash point ([`Explorer::tree_verdict`]): whether it is one of the
/// allowed states, and the per-file rules' verdict when they apply.
pub type TreeVerdict = (bool, Option<Option<(String, String)>>);

/// Trees checked at each crash point of a run with their verdicts, by point and tree hash.
pub type VerdictMemo = Mutex<std::collections::HashMap<(usize, u64), Vec<(Tree, TreeVerdict)>>>;

/// A planned dump a live guest of the run made and its tree ([`DumpMemo`]).
pub struct KeptDump {
    /// [`dump_key`] of the dump's bytes.
    key: u64,
    /// The session whose dump this is (its bytes).
    session: Arc<GuestSession>,
    parsed: Arc<ParsedDump>,
}

/// The trees of one run's planned dumps, for live guests whose dumps are the same bytes.
/// A tree is a function of the dump's bytes and the device blocks it names
/// ([`ParsedDump`]), and the crash images of a full device, which recover through
/// different reads (their guests are live), mostly recover to the same tree: in
/// `--workload full` nine in ten live dumps repeat an earlier one byte for byte. Such a dump
/// on a device holding the same named blocks gets the earlier tree, not a parse that
/// hashes and checks its blocks again. `--no-memo` turns it off; `verify_memo` checks each
/// answer against a parse.
pub type DumpMemo = Memo<KeptDump>;

/// The key of a dump's bytes in the [`DumpMemo`] (equal bytes, equal keys; equal keys are
/// then compared byte for byte).
fn dump_key(d: &[u8]) -> u64 {
    rollfs_crash::rng::block_hash(d) ^ (d.len() as u64).rotate_left(32)
}

impl FsckSession {
    /// The answer of the fsck that made `requests` (its last requests) on `dev`: `None` when
    /// it did anything but read (not the check the memo knows).
    fn of(dev: &SimDevice, requests: &[crate::device::Request], problems: &[String]) -> Option<FsckSession> {
        use crate::device::Request;
        let mut seen = std::collections::HashSet::new();
        let mut reads = Vec::new();
        for r in requests {
            let Request::Read(addr) = r else { return None };
            // fsck writes nothing: what the device holds now is what each read returned.
            if seen.insert(*addr) {
                reads.push((*addr, dev.current(*addr).cloned()));
            }
        }
        Some(FsckSession { requests: requests.to_vec(), reads, problems: problems.to_vec(), miss: MissHint::default() })
    }

    /// True when an fsck of `dev` would read exactly what this one read.
    fn fits(&self, dev: &SimDevice) -> bool {
        let reads = &self.reads;
        self.miss.all(reads.len(), |i| blocks_equal(dev.current(reads[i].0), reads[i].1.as_ref()))
    }
}

pub struct Explorer {
    pub module: Arc<GuestModule>,
    pub opts: Options,
    base: Image,
    /// Freshly formatted images of other geometries (`@device`), made on first use.
    bases: Mutex<std::collections::HashMap<(u64, u32), Result<Image, String>>>,
    /// The smallest device mkfs accepts, per segment size (found by formatting).
    smallest: Mutex<std::collections::HashMap<u32, Result<u64, String>>>,
    /// The core's counters summed over every workload run and every recovery mount.
    events: Mutex<Events>,
    /// Crash images a live guest checked, and those answered by replaying an earlier
    /// guest session of their run ([`GuestMemo`]).
    pub guest_runs: AtomicU64,
    pub replayed: AtomicU64,
    /// fscks of live guests answered from the run's [`FsckMemo`].
    pub fsck_replayed: AtomicU64,
    /// Replayed sessions' trees taken from the session ([`Explorer::dump_tree`]).
    pub trees_reused: AtomicU64,
    /// Live guests' trees taken from an earlier live dump of the same bytes ([`DumpMemo`]).
    pub dumps_reused: AtomicU64,
    /// Tree verdicts answered from the run's [`Run::verdicts`].
    pub verdicts_reused: AtomicU64,
    /// Test hook: the crash-state check with this index (counted over the explorer's
    /// life, from 1) panics, as a harness bug would ([`Explorer::panic_at_check`]).
    check_panic_at: AtomicU64,
    checks_started: AtomicU64,
}

/// The core's counters summed over workload runs (at their end) and over recovery mounts
/// (right after mount, so what recovery itself did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Events {
    pub runs: CoreStats,
    pub recoveries: CoreStats,
}

impl Default for Events {
    fn default() -> Self {
        Events { runs: [0; STAT_NAMES.len()], recoveries: [0; STAT_NAMES.len()] }
    }
}

/// The rare events every exploration reports and the CI sample must reach (core counters).
pub const RARE_EVENTS: [&str; 13] = [
    "atomic_spills",
    "op_checkpoints",
    "enospc_returned",
    "recovery_reserve_fallbacks",
    "fsync_checkpoint_fallbacks",
    "fsync_gc_rounds",
    "recovery_full_device",
    "atomic_commit_failures",
    "nid_shortage_checkpoints",
    "gc_segments",
    "recovered_batches",
    "ssr_blocks",
    "full_device_removals",
];

impl Events {
    /// `self - earlier` (counters only grow).
    pub fn since(&self, earlier: &Events) -> Events {
        let mut e = *self;
        for i in 0..STAT_NAMES.len() {
            e.runs[i] -= earlier.runs[i];
            e.recoveries[i] -= earlier.recoveries[i];
        }
        e
    }

    /// `self + other`.
    pub fn plus(&self, other: &Events) -> Events {
        let mut e = *self;
        for i in 0..STAT_NAMES.len() {
            e.runs[i] += other.runs[i];
            e.recoveries[i] += other.recoveries[i];
        }
        e
    }

    /// A counter summed over runs and recovery mounts.
    pub fn total(&self, name: &str) -> u64 {
        let i = stat_index(name);
        self.runs[i] + self.recoveries[i]
    }

    /// The rare-event table: one line per counter of [`RARE_EVENTS`].
    pub fn table(&self) -> Vec<String> {
        let mut v = vec![format!("{:<28} {:>12} {:>12} {:>12}", "rare event", "total", "in runs", "in recovery")];
        for n in RARE_EVENTS {
            let i = stat_index(n);
            v.push(format!(
                "{:<28} {:>12} {:>12} {:>12}{}",
                n,
                self.runs[i] + self.recoveries[i],
                self.runs[i],
                self.recoveries[i],
                if self.runs[i] + self.recoveries[i] == 0 { "   <- never" } else { "" }
            ));
        }
        v
    }

    /// The rare events that never fired.
    pub fn missing(&self) -> Vec<&'static str> {
        RARE_EVENTS.iter().copied().filter(|n| self.total(n) == 0).collect()
    }
}

/// Errors the model cannot predict: an operation it expects to succeed may fail with one
/// of these (and must then have changed nothing).
pub const RESOURCE_ERRORS: [i64; 3] = [28 /* ENOSPC */, 31 /* EMLINK */, 27 /* EFBIG */];

/// The model's verdict on an operation the guest ran: a resource error the model cannot
/// predict is taken as the outcome (the model then does not apply the operation: failure
/// atomicity), except ENOSPC under `@no-enospc`, ENOSPC for a write entirely into blocks
/// fallocate reserved (posix_fallocate's promise), and ENOSPC for a removal (a full
/// filesystem still deletes: issue 41).
fn model_outcome(model: &mut Model, op: &Op, got: &Result<i64, GuestError>, no_enospc: bool) -> Result<(), i64> {
    if let Err(GuestError::Errno(e, _)) = got {
        let promised = *e == 28 && (no_enospc || model.write_is_reserved(op) || model.is_removal(op));
        if RESOURCE_ERRORS.contains(e) && !promised {
            return Err(*e);
        }
    }
    model.apply(op)
}

/// The window of records a crash at trace point `c` may recover into: from the last
/// checkpoint-class persistence point that completed (`lo`) to the last operation that had
/// started I/O (`hi`).
pub fn window(records: &[OpRecord], c: usize) -> (usize, usize) {
    let mut lo = 0;
    let mut hi = 0;
    for (k, r) in records.iter().enumerate() {
        if r.events.end <= c && r.ok {
            match r.persist {
                Persist::Checkpoint => lo = k,
                Persist::Implicit => lo = k.saturating_sub(1),
                Persist::None => {}
            }
        }
        if r.events.start < c {
            hi = k;
        }
    }
    (lo, hi.max(lo))
}

/// The per-file rules (invariants 2-6 of docs/INVARIANTS.md) for a crash at trace point `c` that
/// recovered to `tree`. `exact`: the tree equals an allowed whole-tree state (then only
/// the fsync-class guarantees are checked). Returns the violated rule and its detail.
pub fn per_file_verdict(run: &Run, c: usize, tree: &Tree, exact: bool) -> Option<(String, String)> {
    let (lo, hi) = window(&run.records, c);
    let hi = hi.min(run.snaps.len().saturating_sub(1));
    if lo > hi {
        return None;
    }
    let h = run.history();
    let snaps = &run.snaps;
    let file_hash = |p: &str| tree.entries.get(p).filter(|e| e.kind == crate::model::KIND_FILE).map(|e| e.chash);
    // 2, 3, 5: every fsync/fdatasync/atomic commit that returned before the crash.
    for f in lo + 1..=hi {
        let r = &run.records[f];
        let Some((op, Some(ino))) = &run.ops[f] else { continue };
        if !(r.ok && r.events.end <= c) {
            continue;
        }
        let names = history::names_in(h, *ino, f, hi);
        if names.is_empty() || history::value_at(h.content.get(ino), hi).is_none() {
            continue; // a directory, or deleted since: a later state of its own
        }
        // Scanned per name, not collected: a file has a name or two, and this runs for
        // every crash state whose window holds an fsync.
        let held = |hash: u64| history::values_in(h.content.get(ino), f, hi).any(|&x| x == hash);
        if !names.iter().any(|p| file_hash(p).is_some_and(held)) {
            let found: Vec<String> = names
                .iter()
                .map(|p| match tree.entries.get(*p) {
                    None => format!("{p} absent"),
                    Some(e) => format!("{p} size {}", e.size),
                })
                .collect();
            let kind = if matches!(op, Op::AtomicCommit(_)) { "atomic-commit-lost" } else { "fsync-lost" };
            return Some((
                kind.into(),
                format!(
                    "`{}` returned before the crash, but no name of its file shows that state or a later one ({})",
                    r.label,
                    found.join(", ")
                ),
            ));
        }
    }
    // 4: a rename of a single-name file that existed at the checkpoint, with neither
    // name touched by anything else in the window, shows exactly one of the names. Not
    // when the new name existed at the checkpoint (as anything: a file, a symlink): the
    // checkpoint's state shows both names, and is allowed.
    for k in lo + 1..=hi {
        let Some((Op::Rename(from, to, fl), _)) = &run.ops[k] else { continue };
        if *fl == crate::workload::RENAME_EXCHANGE || !run.records[k].ok || from == to {
            continue;
        }
        let Some(ino) = snaps[lo].names.get(from) else { continue };
        let single = history::single_name_throughout(h, *ino, lo, hi);
        let untouched = (lo + 1..=hi).filter(|&j| j != k).all(|j| match &run.ops[j] {
            Some((op, _)) => op.paths().iter().all(|p| {
                let p = *p;
                p != from && p != to && !from.starts_with(&format!("{p}/")) && !to.starts_with(&format!("{p}/"))
            }),
            None => true,
        });
        if !single || !untouched || run.states[lo].entries.contains_key(to) {
            continue;
        }
        let (a, b) = (tree.entries.contains_key(from), tree.entries.contains_key(to));
        if a == b {
            return Some((
                "rename-not-atomic".into(),
                format!(
                    "`{}`: {} names present after the crash",
                    run.records[k].label,
                    if a { "both" } else { "neither" }
                ),
            ));
        }
    }
    if exact {
        return None;
    }
    // Relaxed whole-tree rule for windows with fsync-class points: every file shows a
    // state of its own from the window (6: no byte it never held), every entry existed in
    // the window, and every name untouched throughout the window is still there.
    for (p, e) in &tree.entries {
        if e.kind == crate::model::KIND_FILE {
            let hash = e.chash;
            let ok = history::values_in(h.names.get(p), lo, hi)
                .any(|i| history::values_in(h.content.get(i), lo, hi).any(|&x| x == hash));
            if !ok {
                return Some((
                    "tree-mismatch".into(),
                    format!(
                        "{p}: content (size {}) is no state any file of that name had since the checkpoint",
                        e.size
                    ),
                ));
            }
        } else if !history::values_in(h.kinds.get(p), lo, hi).any(|&k| k == e.kind) {
            return Some(("tree-mismatch".into(), format!("{p}: no such entry since the checkpoint")));
        }
    }
    for (p, e) in &run.states[lo].entries {
        let name_runs = h.names.get(p);
        let name_stable = match snaps[lo].names.get(p) {
            Some(i) => history::held_throughout(name_runs, lo, hi, i),
            None => history::values_in(name_runs, lo, hi).next().is_none(),
        };
        let stable = history::held_throughout(h.kinds.get(p), lo, hi, &e.kind)
            && (e.kind != crate::model::KIND_FILE || name_stable);
        if stable && !tree.entries.contains_key(p) {
            return Some((
                "tree-mismatch".into(),
                format!("{p}: missing, though no operation since the checkpoint removed it"),
            ));
        }
    }
    None
}

#[cfg(test)]
fn per_file_verdict_by_scan(run: &Run, c: usize, tree: &Tree, exact: bool) -> Option<(String, String)> {
    let (lo, hi) = window(&run.records, c);
    let hi = hi.min(run.snaps.len().saturating_sub(1));
    if lo > hi {
        return None;
    }
    let snaps = &run.snaps;
    let file_hash = |p: &str| tree.entries.get(p).filter(|e| e.kind == crate::model::KIND_FILE).map(|e| e.chash);
    // 2, 3, 5: every fsync/fdatasync/atomic commit that returned before the crash.
    for f in lo + 1..=hi {
        let r = &run.records[f];
        let Some((op, Some(ino))) = &run.ops[f] else { continue };
        if !(r.ok && r.events.end <= c) {
            continue;
        }
        let names: std::collections::BTreeSet<&String> =
            (f..=hi).flat_map(|k| snaps[k].names.iter().filter(|(_, i)| *i == ino).map(|(p, _)| p)).collect();
        if names.is_empty() || !snaps[hi].content.contains_key(ino) {
            continue; // a directory, or deleted since: a later state of its own
        }
        let states: std::collections::BTreeSet<u64> =
            (f..=hi).filter_map(|k| snaps[k].content.get(ino).copied()).collect();
        if !names.iter().any(|p| file_hash(p).is_some_and(|h| states.contains(&h))) {
            let found: Vec<String> = names
                .iter()
                .map(|p| match tree.entries.get(*p) {
                    None => format!("{p} absent"),
                    Some(e) => format!("{p} size {}", e.size),
                })
                .collect();
            let kind = if matches!(op, Op::AtomicCommit(_)) { "atomic-commit-lost" } else { "fsync-lost" };
            return Some((
                kind.into(),
                format!(
                    "`{}` returned before the crash, but no name of its file shows that state or a later one ({})",
                    r.label,
                    found.join(", ")
                ),
            ));
        }
    }
    // 4: a rename of a single-name file that existed at the checkpoint, with neither
    // name touched by anything else in the window, shows exactly one of the names. Not
    // when the new name existed at the checkpoint (as anything: a file, a symlink): the
    // checkpoint's state shows both names, and is allowed.
    for k in lo + 1..=hi {
        let Some((Op::Rename(from, to, fl), _)) = &run.ops[k] else { continue };
        if *fl == crate::workload::RENAME_EXCHANGE || !run.records[k].ok || from == to {
            continue;
        }
        let Some(ino) = snaps[lo].names.get(from) else { continue };
        let single = (lo..=hi).all(|j| snaps[j].names.values().filter(|i| *i == ino).count() == 1);
        let untouched = (lo + 1..=hi).filter(|&j| j != k).all(|j| match &run.ops[j] {
            Some((op, _)) => op.paths().iter().all(|p| {
                let p = *p;
                p != from && p != to && !from.starts_with(&format!("{p}/")) && !to.starts_with(&format!("{p}/"))
            }),
            None => true,
        });
        if !single || !untouched || run.states[lo].entries.contains_key(to) {
            continue;
        }
        let (a, b) = (tree.entries.contains_key(from), tree.entries.contains_key(to));
        if a == b {
            return Some((
                "rename-not-atomic".into(),
                format!(
                    "`{}`: {} names present after the crash",
                    run.records[k].label,
                    if a { "both" } else { "neither" }
                ),
            ));
        }
    }
    if exact {
        return None;
    }
    // Relaxed whole-tree rule for windows with fsync-class points: every file shows a
    // state of its own from the window (6: no byte it never held), every entry existed in
    // the window, and every name untouched throughout the window is still there.
    for (p, e) in &tree.entries {
        if e.kind == crate::model::KIND_FILE {
            let inos: std::collections::BTreeSet<u64> =
                (lo..=hi).filter_map(|k| snaps[k].names.get(p).copied()).collect();
            let h = e.chash;
            let ok = inos.iter().any(|i| (lo..=hi).any(|k| snaps[k].content.get(i) == Some(&h)));
            if !ok {
                return Some((
                    "tree-mismatch".into(),
                    format!(
                        "{p}: content (size {}) is no state any file of that name had since the checkpoint",
                        e.size
                    ),
                ));
            }
        } else if !(lo..=hi).any(|k| run.states[k].entries.get(p).is_some_and(|x| x.kind == e.kind)) {
            return Some(("tree-mismatch".into(), format!("{p}: no such entry since the checkpoint")));
        }
    }
    for (p, e) in &run.states[lo].entries {
        let stable = (lo..=hi).all(|k| run.states[k].entries.get(p).is_some_and(|x| x.kind == e.kind))
            && (e.kind != crate::model::KIND_FILE
                || (lo..=hi).all(|k| snaps[k].names.get(p) == snaps[lo].names.get(p)));
        if stable && !tree.entries.contains_key(p) {
            return Some((
                "tree-mismatch".into(),
                format!("{p}: missing, though no operation since the checkpoint removed it"),
            ));
        }
    }
    None
}

/// True when the window holds an fsync-class operation (whose roll-forward may recover a
/// tree that is no single model state).
fn window_has_fsync(run: &Run, lo: usize, hi: usize) -> bool {
    (lo + 1..=hi.min(run.ops.len().saturating_sub(1)))
        .any(|k| run.ops[k].as_ref().is_some_and(|(op, _)| op.fsync_target().is_some()))
}

/// The model states a crash at trace point `c` may recover to (indices into
/// `Run::states`). See the module documentation.
pub fn allowed_states(records: &[OpRecord], c: usize) -> Vec<usize> {
    let (lo, hi) = window(records, c);
    let mut v = vec![lo];
    for (k, r) in records.iter().enumerate().take(hi + 1).skip(lo + 1) {
        match r.persist {
            Persist::Checkpoint => v.push(k),
            Persist::Implicit => v.extend([k - 1, k]),
            Persist::None => {}
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

fn guest_err(e: &GuestError) -> String {
    e.to_string()
}

/// The violation kind of a failed guest call: `data-checksum` when a read failed its data
/// checksum (a durable pointer names a block that was not written completely: the oracle
/// of data checksums), else `kind`.
fn datasum_or(e: &GuestError, kind: &str) -> String {
    if e.errno() == Some(E_DATASUM) { "data-checksum" } else { kind }.to_string()
}

/// An open group of repetitions of a `repeat`: the first one, its first trace event, and
/// the first failure among them.
type Group = (usize, usize, Option<Result<i64, GuestError>>);

/// Appends the record of one operation (or of a group of repetitions) to a run, with the
/// model state after it.
fn push_record(
    run: &mut Run,
    model: &mut Model,
    label: String,
    events: Range<usize>,
    persist: Persist,
    got: &Result<i64, GuestError>,
    op: (Op, Option<u64>),
) {
    run.records.push(OpRecord {
        label,
        events,
        persist,
        result: format!("{got:?}"),
        ok: got.is_ok(),
        errno: got.as_ref().err().and_then(|e| e.errno()),
    });
    push_state(run, model);
    run.ops.push(Some(op));
}

/// Appends the model state after the last record (made incrementally: [`StateTracker`]).
fn push_state(run: &mut Run, model: &mut Model) {
    let (tree, snap, delta) = run.tracker.snapshot(model);
    if run.verify_states {
        let (want_tree, want_snap) = (model.durable_tree(), model.snap());
        assert!(
            tree == want_tree,
            "record {}: the incremental state is not the model's: {:?}",
            run.states.len(),
            tree.diff(&want_tree, 6)
        );
        assert!(snap == want_snap, "record {}: the incremental snap is not the model's", run.states.len());
    }
    run.states.push(tree);
    run.snaps.push(snap);
    run.deltas.push(delta);
}

/// Compares the guest's and the model's outcome of operation `i`; records a problem and
/// returns true when the run must stop (a trap, a mismatch, or the error an injected EIO
/// caused).
fn outcome_stops(
    run: &mut Run,
    g: &crate::guest::Guest,
    i: usize,
    op: &Op,
    got: &Result<i64, GuestError>,
    want: &Result<(), i64>,
    eio: bool,
) -> bool {
    // Asked only of a failed operation the model expected to succeed (a scan of the trace
    // after every operation made a long EIO run quadratic).
    let injected = || eio && g.device().trace.events.iter().any(|e| matches!(e, crate::device::Event::Failed { .. }));
    match (got, want) {
        (Err(GuestError::Trap(m)), _) => {
            run.problems.push(("trap".into(), format!("op {i} `{op}`: {m}")));
            true
        }
        (Err(GuestError::Errno(E_DATASUM, m)), _) => {
            // Never right: nothing in a run corrupts a block the core wrote.
            run.problems.push(("data-checksum".into(), format!("op {i} `{op}`: {m}")));
            true
        }
        (Ok(_), Ok(())) | (Err(GuestError::Errno(_, _)), Err(_)) => false,
        (Err(GuestError::Errno(..)), Ok(())) if injected() => true,
        _ => {
            run.problems.push(("op-mismatch".into(), format!("op {i} `{op}`: guest {got:?}, model {want:?}")));
            true
        }
    }
}

/// The tree of a running guest: its planned dump, the blocks it names read from its device
/// here and checked against their data checksums (as the guest's own reads would check
/// them, without copying every block of a full device through the guest). `Ok(Err)`: the
/// problem (`live-dump` or `data-checksum`) and its detail.
pub(crate) fn live_tree(
    g: &mut crate::guest::Guest,
    cache: &BlockCache,
) -> Result<Result<Tree, (String, String)>, GuestError> {
    let d = g.dump_planned()?;
    let dev = g.device();
    let blocks = DumpBlocks { get: &|a| dev.current(a).cloned(), cache };
    Ok(Tree::parse_planned_dump(&d, &blocks).map_err(|e| match e {
        DumpFault::Parse(m) => ("live-dump".to_string(), m),
        DumpFault::Checksum(m) => ("data-checksum".to_string(), m),
    }))
}

/// The account of a check, line by line: kept for `replay`, never formatted while
/// exploring (a few lines per crash state, formatted and dropped, were 50,000 of the
/// host's allocations for ten workloads).
pub(crate) struct Log(Option<Vec<String>>);

impl Log {
    /// A log that keeps nothing.
    pub(crate) fn off() -> Log {
        Log(None)
    }

    /// A log that keeps its lines, after `lines`.
    pub(crate) fn kept(lines: Vec<String>) -> Log {
        Log(Some(lines))
    }

    pub(crate) fn line(&mut self, line: impl FnOnce() -> String) {
        if let Some(l) = self.0.as_mut() {
            l.push(line());
        }
    }

    pub(crate) fn lines<I: IntoIterator<Item = String>>(&mut self, lines: impl FnOnce() -> I) {
        if let Some(l) = self.0.as_mut() {
            l.extend(lines());
        }
    }

    pub(crate) fn into_lines(self) -> Vec<String> {
        self.0.unwrap_or_default()
    }
}

/// Failure atomicity in the running mount, sampled: after the first
/// [`FailureCheck::ALL`] failed operations of a run and every [`FailureCheck::EVERY`]-th
/// after them, the guest's live tree must equal the model's (which did not apply them).
#[derive(Debug, Default)]
struct FailureCheck {
    failed: u64,
}

impl FailureCheck {
    const ALL: u64 = 16;
    const EVERY: u64 = 8;

    /// Checks after operation `op` returned `got`; records a problem and returns true (the
    /// run stops) when the failed operation left a trace in the live tree.
    fn check(
        &mut self,
        g: &mut crate::guest::Guest,
        model: &Model,
        run: &mut Run,
        op: &Op,
        got: &Result<i64, GuestError>,
    ) -> bool {
        let Err(GuestError::Errno(e, _)) = got else { return false };
        self.failed += 1;
        if self.failed > Self::ALL && !self.failed.is_multiple_of(Self::EVERY) {
            return false;
        }
        let want = model.tree();
        match live_tree(g, &run.block_cache) {
            Ok(Ok(t)) if t == want => false,
            Ok(Ok(t)) => {
                run.problems.push((
                    "failed-op-not-atomic".into(),
                    format!("`{op}` failed (errno {e}) but changed the live tree: {}", t.diff(&want, 6).join("; ")),
                ));
                true
            }
            Ok(Err((kind, err))) => {
                run.problems.push((kind, format!("after `{op}` failed (errno {e}): {err}")));
                true
            }
            Err(err) => {
                run.problems
                    .push(("live-dump".into(), format!("after `{op}` failed (errno {e}): {}", guest_err(&err))));
                true
            }
        }
    }
}

impl Explorer {
    /// Formats a fresh image once; every workload starts from it.
    pub fn new(module: Arc<GuestModule>, opts: Options) -> Result<Explorer, String> {
        let mut dev = SimDevice::new(Image::blank(opts.image_blocks), opts.seed);
        dev.completion = crate::device::Completion::Immediate;
        let mut g = module.instantiate(dev).map_err(|e| guest_err(&e))?;
        g.format(opts.segment_blocks, NOW_BASE).map_err(|e| format!("format failed: {e}"))?;
        let dev = g.into_device();
        // What format made durable (a format that forgets to flush shows up as mount
        // failures of every state, which is the truth).
        let mut w = CrashWalker::new(dev.start_image(), &dev.trace);
        w.advance_to(dev.trace.events.len());
        let base = w.durable().flatten();
        Ok(Explorer {
            module,
            opts,
            base,
            bases: Default::default(),
            smallest: Default::default(),
            events: Default::default(),
            guest_runs: AtomicU64::new(0),
            replayed: AtomicU64::new(0),
            fsck_replayed: AtomicU64::new(0),
            trees_reused: AtomicU64::new(0),
            dumps_reused: AtomicU64::new(0),
            verdicts_reused: AtomicU64::new(0),
            check_panic_at: AtomicU64::new(0),
            checks_started: AtomicU64::new(0),
        })
    }

    /// A freshly formatted image of `blocks` blocks with segments of `segment_blocks`.
    fn format_image(module: &GuestModule, blocks: u64, segment_blocks: u32, seed: u64) -> Result<Image, String> {
        let mut dev = SimDevice::new(Image::blank(blocks), seed);
        dev.completion = crate::device::Completion::Immediate;
        let mut g = module.instantiate(dev).map_err(|e| guest_err(&e))?;
        g.format(segment_blocks, NOW_BASE).map_err(|e| format!("format failed: {e}"))?;
        let dev = g.into_device();
        let mut w = CrashWalker::new(dev.start_image(), &dev.trace);
        w.advance_to(dev.trace.events.len());
        Ok(w.durable().flatten())
    }

    /// The smallest device (in blocks) mkfs accepts with this segment size: found by
    /// formatting (binary search; a larger device is never refused).
    pub fn smallest_device(&self, segment_blocks: u32) -> Result<u64, String> {
        let mut m = self.smallest.lock().unwrap();
        m.entry(segment_blocks)
            .or_insert_with(|| {
                let ok = |n: u64| Self::format_image(&self.module, n, segment_blocks, 0).is_ok();
                let (mut lo, mut hi) = (1u64, 1u64 << 16);
                if !ok(hi) {
                    return Err(format!("mkfs refuses {hi} blocks with {segment_blocks}-block segments"));
                }
                // Invariant: lo refused (or 1), hi accepted.
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if ok(mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                Ok(hi)
            })
            .clone()
    }

    /// The geometry a workload runs on: (blocks, segment blocks).
    pub fn geometry_for(&self, w: &Workload) -> Result<(u64, u32), String> {
        match w.device {
            None => Ok((self.opts.image_blocks, self.opts.segment_blocks)),
            Some(d) if d.above_min => Ok((self.smallest_device(d.segment_blocks)? + d.blocks, d.segment_blocks)),
            Some(d) => Ok((d.blocks, d.segment_blocks)),
        }
    }

    /// The image a workload starts from: the explorer's, or one of its `@device` geometry.
    pub fn base_for(&self, w: &Workload) -> Result<Image, String> {
        let g = self.geometry_for(w)?;
        if g == (self.opts.image_blocks, self.opts.segment_blocks) {
            return Ok(self.base.clone());
        }
        let mut m = self.bases.lock().unwrap();
        m.entry(g).or_insert_with(|| Self::format_image(&self.module, g.0, g.1, self.opts.seed)).clone()
    }

    /// The core's counters summed so far (see [`Events`]).
    pub fn events(&self) -> Events {
        *self.events.lock().unwrap()
    }

    fn add_events(&self, s: &CoreStats, recovery: bool) {
        let mut e = self.events.lock().unwrap();
        let t = if recovery { &mut e.recoveries } else { &mut e.runs };
        for (a, b) in t.iter_mut().zip(s) {
            *a += b;
        }
    }

    pub fn base_image(&self) -> &Image {
        &self.base
    }

    /// Runs a workload once, recording its trace, operation records and model states.
    pub fn run(&self, w: &Workload, eio: Option<Eio>) -> Run {
        self.run_hooked(w, eio, false, &mut |_, _, _| {})
    }

    /// [`Explorer::run`], calling `after_stop` with the guest when the run stopped at an
    /// operation's failure (before the instance is dropped: a power loss), and, in a sweep
    /// run that injects a read error, the model, to which the top-level operation that
    /// failed was not applied (`None` when it failed inside a `repeat` or `fill`). With
    /// `sweep` (the I/O-error
    /// sweep's runs), no failure-atomicity reads are made: the sweep numbers the run's
    /// I/O, which must not depend on them.
    pub fn run_hooked(&self, w: &Workload, eio: Option<Eio>, sweep: bool, after_stop: &mut AfterStop<'_>) -> Run {
        self.run_inner(w, eio, sweep, &mut |_| {}, after_stop)
    }

    /// [`Explorer::run`] with `before_op` called with the guest before every top-level
    /// operation: for tests that make the guest do what the model does not see (a
    /// deliberately broken run the oracle must notice).
    pub fn run_sneaking(&self, w: &Workload, before_op: &mut dyn FnMut(&mut crate::guest::Guest)) -> Run {
        self.run_inner(w, None, false, before_op, &mut |_, _, _| {})
    }

    fn run_inner(
        &self,
        w: &Workload,
        eio: Option<Eio>,
        sweep: bool,
        before_op: &mut dyn FnMut(&mut crate::guest::Guest),
        after_stop: &mut AfterStop<'_>,
    ) -> Run {
        let base = self.base_for(w);
        let start = base.clone().unwrap_or_else(|_| self.base.clone());
        let mut dev = SimDevice::new(start.clone(), w.dev_seed);
        dev.completion = w.completion;
        dev.discard_ignored = w.discard_ignored;
        dev.eio = eio;
        let mut run = Run {
            workload: w.clone(),
            start,
            trace: Default::default(),
            records: Vec::new(),
            states: Vec::new(),
            snaps: Vec::new(),
            ops: Vec::new(),
            problems: Vec::new(),
            counts: IoCounts::default(),
            eio,
            block_cache: BlockCache::default(),
            memo: GuestMemo::default(),
            fsck_memo: FsckMemo::default(),
            dump_memo: DumpMemo::default(),
            verdicts: Mutex::default(),
            history: Default::default(),
            deltas: Vec::new(),
            tracker: StateTracker::new(),
            verify_states: self.opts.verify_states,
        };
        if let Err(e) = base {
            run.problems.push(("device".into(), format!("{:?}: {e}", w.device)));
            return run;
        }
        let mut g = match self.module.instantiate(dev) {
            Ok(g) => g,
            Err(e) => {
                run.problems.push(("instantiate".into(), guest_err(&e)));
                return run;
            }
        };
        if self.opts.cold {
            if let Err(e) = g.set_cold(true) {
                run.problems.push(("instantiate".into(), guest_err(&e)));
                return run;
            }
        }
        let len = |g: &crate::guest::Guest| g.device().trace.events.len();
        let mut model = Model::new();
        // Failure atomicity in the running mount: after failed operations (sampled) the live
        // tree must be the model's (which did not apply them). Not in sweep or EIO runs,
        // whose I/O numbering must not depend on these extra reads.
        let mut atomicity = (!sweep && eio.is_none()).then(FailureCheck::default);
        let r = g.mount(false, NOW_BASE);
        run.records.push(OpRecord {
            label: "mount".into(),
            events: 0..len(&g),
            persist: Persist::Checkpoint,
            result: format!("{r:?}"),
            ok: r.is_ok(),
            errno: r.as_ref().err().and_then(|e| e.errno()),
        });
        push_state(&mut run, &mut model);
        run.ops.push(None);
        if let Err(e) = r {
            let fired = g.device().trace.events.iter().any(|e| matches!(e, crate::device::Event::Failed { .. }));
            if !(fired && e.errno() == Some(5)) {
                run.problems.push(("mount-fresh".into(), format!("mounting the freshly formatted image failed: {e}")));
            }
            run.trace = g.into_device().trace;
            return run;
        }
        let mut checkpoints = g.stats().map(|s| s[0]).unwrap_or(0);
        let mut stopped = false;
        // Where a sweep injects a read error, the top-level operation it fails is not applied
        // to the model: a read error must leave everything as it was (invariant 7), and
        // `after_stop` checks exactly that against the model.
        let read_sweep = sweep && eio.is_some_and(|e| e.kind == IoKind::Read);
        let mut stopped_in_group = false;
        let mut late_errors = 0u64;
        for (i, op) in w.ops.iter().enumerate() {
            before_op(&mut g);
            if matches!(op, Op::Repeat(..) | Op::Fill { .. } | Op::Rmtree(_)) {
                stopped = self.run_repeat(&mut g, &mut model, &mut run, &mut checkpoints, op, i, &mut atomicity);
                if stopped {
                    stopped_in_group = true;
                    break;
                }
                continue;
            }
            let a = len(&g);
            let target = op.fsync_target().and_then(|p| model.ino_of(p));
            let got = g.op(op, NOW_BASE + 1 + i as i64);
            let failed_read = read_sweep
                && matches!(got, Err(GuestError::Errno(5, _)))
                && g.device().trace.events.iter().any(|e| matches!(e, crate::device::Event::Failed { .. }));
            let want = if failed_read { Ok(()) } else { model_outcome(&mut model, op, &got, w.no_enospc) };
            let b = len(&g);
            let stats = g.stats().ok();
            let cp = stats.map(|s| s[0]).unwrap_or(checkpoints);
            // An operation that failed after its first change shuts the filesystem down;
            // only an I/O or corruption error may get there (invariant 7): anything else
            // there is a change made before a check that could refuse it.
            let late = stats.map(|s| s[stat_index("errors_after_change")]).unwrap_or(late_errors);
            if late > late_errors && !matches!(got, Err(GuestError::Errno(5 | 117 | E_DATASUM, _))) {
                run.problems.push((
                    "error-after-change".into(),
                    format!("op {i} `{op}` returned {got:?} after its first change (the filesystem shut down)"),
                ));
                stopped = true;
            }
            late_errors = late;
            let persist = if op.is_checkpoint_point() {
                Persist::Checkpoint
            } else if cp > checkpoints {
                Persist::Implicit
            } else {
                Persist::None
            };
            checkpoints = cp;
            push_record(&mut run, &mut model, op.to_string(), a..b, persist, &got, (op.clone(), target));
            stopped = outcome_stops(&mut run, &g, i, op, &got, &want, eio.is_some()) || stopped;
            if stopped {
                break;
            }
            if let Some(fc) = atomicity.as_mut() {
                if fc.check(&mut g, &model, &mut run, op, &got) {
                    stopped = true;
                    break;
                }
            }
        }
        if let Ok(s) = g.stats() {
            self.add_events(&s, false);
        }
        if !stopped {
            match live_tree(&mut g, &run.block_cache) {
                Ok(Ok(t)) if t == model.tree() => {}
                Ok(Ok(t)) => run.problems.push(("live-mismatch".into(), t.diff(&model.tree(), 8).join("; "))),
                Ok(Err(problem)) => run.problems.push(problem),
                Err(e) => run.problems.push((datasum_or(&e, "live-dump"), guest_err(&e))),
            }
            let a = len(&g);
            let r = g.unmount(NOW_BASE + 1 + w.ops.len() as i64);
            run.records.push(OpRecord {
                label: "unmount".into(),
                events: a..len(&g),
                persist: Persist::Checkpoint,
                result: format!("{r:?}"),
                ok: r.is_ok(),
                errno: r.as_ref().err().and_then(|e| e.errno()),
            });
            push_state(&mut run, &mut model);
            run.ops.push(None);
            if let Err(e) = r {
                let injected = eio.is_some() && e.errno() == Some(5);
                if !injected {
                    run.problems.push(("unmount".into(), guest_err(&e)));
                }
            }
        } else {
            let model = (read_sweep && !stopped_in_group).then_some(&mut model);
            after_stop(&mut g, &mut run, model);
        }
        let dev = g.into_device();
        run.counts = dev.counts;
        run.trace = dev.trace;
        // Its indexes are needed only while states are added.
        run.tracker = StateTracker::new();
        run
    }

    /// Runs operation `i`, a `repeat`, a `fill` or an `rmtree` (its removals, listed from the
    /// model as it runs, are its repetitions): repetitions whose device I/O is reads
    /// only (or none) are recorded together as one operation; each repetition with an event
    /// that changes what a power loss leaves (a write, a flush, a discard, an earlier
    /// write completing during it) or a failed request is an operation of its own, with the
    /// model state just before it closing the group. A read changes nothing a power loss
    /// leaves, so a crash between two repetitions of a group leaves the image a crash
    /// before the group leaves, and nothing can persist a group's intermediate states (a
    /// checkpoint writes): grouping drops model states, not crash states (nid-churn's
    /// 5,164 records were 5,154 creates and unlinks whose I/O was reads). A `fill`'s writes
    /// are made one by one (each appends at the model's end of file) until one fails.
    /// Returns true when the run must stop.
    #[allow(clippy::too_many_arguments)]
    fn run_repeat(
        &self,
        g: &mut crate::guest::Guest,
        model: &mut Model,
        run: &mut Run,
        checkpoints: &mut u64,
        op: &Op,
        i: usize,
        atomicity: &mut Option<FailureCheck>,
    ) -> bool {
        let now = NOW_BASE + 1 + i as i64;
        let no_enospc = run.workload.no_enospc;
        let len = |g: &crate::guest::Guest| g.device().trace.events.len();
        // The open group: first repetition, its first event, and its first failure.
        let mut group: Option<Group> = None;
        let close = |run: &mut Run, model: &mut Model, group: &mut Option<Group>, last: usize, end: usize| {
            if let Some((first, start, failed)) = group.take() {
                let got = failed.unwrap_or(Ok((last + 1 - first) as i64));
                let label = format!("{op} [{}..={}]", first + 1, last + 1);
                push_record(run, model, label, start..end, Persist::None, &got, (op.clone(), None));
            }
        };
        let subs = match op {
            // Listed from the model now: what the run really made (operations refused for
            // room changed nothing).
            Op::Rmtree(p) => model.rmtree_ops(p),
            _ => op.expand(),
        };
        let mut failed = false;
        let mut j = 0usize;
        loop {
            let sub = match op {
                Op::Fill { path, chunk, pattern, max } => {
                    let max = if *max == 0 { 100_000 } else { *max as usize };
                    if failed || j >= max {
                        break;
                    }
                    let offset = model.file_size(path).unwrap_or(0);
                    Op::Write { path: path.clone(), offset, len: *chunk, pattern: pattern.wrapping_add(j as u32) }
                }
                _ => match subs.get(j) {
                    Some(o) => o.clone(),
                    None => break,
                },
            };
            let a = len(g);
            let got = g.op(&sub, now);
            let b = len(g);
            let separate = g.device().trace.events[a..b]
                .iter()
                .any(|e| e.changes_crash_state() || matches!(e, crate::device::Event::Failed { .. }));
            if separate {
                close(run, model, &mut group, j.saturating_sub(1), a);
            }
            let want = model_outcome(model, &sub, &got, no_enospc);
            failed = got.is_err();
            if separate {
                let cp = g.stats().map(|s| s[0]).unwrap_or(*checkpoints);
                let persist = if cp > *checkpoints { Persist::Implicit } else { Persist::None };
                *checkpoints = cp;
                push_record(run, model, format!("{op} [{}]", j + 1), a..b, persist, &got, (op.clone(), None));
            } else {
                let gr = group.get_or_insert((j, a, None));
                if got.is_err() && gr.2.is_none() {
                    gr.2 = Some(got.clone());
                }
            }
            if outcome_stops(run, g, i, &sub, &got, &want, run.eio.is_some()) {
                close(run, model, &mut group, j, b);
                return true;
            }
            if got.is_err() {
                if let Some(fc) = atomicity.as_mut() {
                    close(run, model, &mut group, j, len(g));
                    if fc.check(g, model, run, &sub, &got) {
                        return true;
                    }
                }
            }
            j += 1;
        }
        close(run, model, &mut group, j.saturating_sub(1), len(g));
        false
    }

    /// The EIO a case's error run injects: a random write or flush of the clean run.
    fn eio_choice(&self, w: &Workload, counts: &IoCounts) -> Option<Eio> {
        let mut rng = Rng::derive(&[self.opts.seed, w.dev_seed, 0xE10]);
        let (kind, n) = if rng.chance(1, 2) { (IoKind::Write, counts.writes) } else { (IoKind::Flush, counts.flushes) };
        (n > 0).then(|| Eio { kind, nth: rng.below(n) })
    }

    fn candidate_points(&self, run: &Run, limit: usize) -> Vec<usize> {
        let ev = &run.trace.events;
        let mut pts: Vec<usize> = (0..=ev.len()).filter(|&c| c == 0 || ev[c - 1].changes_crash_state()).collect();
        pts.extend(run.records.iter().flat_map(|r| [r.events.start, r.events.end]));
        pts.sort_unstable();
        pts.dedup();
        if pts.len() > limit && limit > 1 {
            // Keep the first and last points, sample the rest (seeded, order preserved).
            let mut rng = Rng::derive(&[self.opts.seed, run.workload.dev_seed, 0x5A]);
            let last = *pts.last().unwrap();
            let mut middle: Vec<usize> = pts[1..pts.len() - 1].to_vec();
            rng.shuffle(&mut middle);
            middle.truncate(limit - 2);
            middle.sort_unstable();
            pts = std::iter::once(pts[0]).chain(middle).chain(std::iter::once(last)).collect();
        }
        pts
    }

    fn survivors_rng(&self, run: &Run, point: usize, variant: u32) -> Rng {
        Rng::derive(&[self.opts.seed, run.workload.dev_seed, point as u64, variant as u64, run.eio.is_some() as u64])
    }

    fn jobs(&self, run: &Run, limit: usize) -> Vec<Job> {
        let mut jobs = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut walker = CrashWalker::new(&run.start, &run.trace);
        for c in self.candidate_points(run, limit) {
            walker.advance_to(c);
            let pending = walker.pending();
            let allowed = allowed_states(&run.records, c);
            let variants =
                if pending.is_empty() { 1 } else { fixed_variants(self.opts.torn) + self.opts.random_variants };
            for v in 0..variants {
                let mut rng = self.survivors_rng(run, c, v);
                let surv = choose_survivors(&pending, v, &mut rng, self.opts.torn);
                if !seen.insert((walker.image_key(&surv), allowed.clone())) {
                    continue;
                }
                let id = StateId { eio_run: run.eio.is_some(), point: c, variant: v, recovery: None, read_eio: None };
                jobs.push(Job { id, image: walker.image(&surv), allowed: allowed.clone() });
            }
        }
        jobs
    }

    /// Rebuilds exactly one crash state of a run.
    fn job(&self, run: &Run, id: StateId) -> Job {
        let mut walker = CrashWalker::new(&run.start, &run.trace);
        walker.advance_to(id.point);
        let mut rng = self.survivors_rng(run, id.point, id.variant);
        let surv = choose_survivors(&walker.pending(), id.variant, &mut rng, self.opts.torn);
        Job { id, image: walker.image(&surv), allowed: allowed_states(&run.records, id.point) }
    }

    /// The guest's part of checking a crash image: mount (recovery), fsck and the planned
    /// dump in a fresh instance, with the device it left. Answered from `run.memo` when an
    /// earlier image of the run held the same blocks wherever that guest read (the guest is
    /// deterministic: its only input is what its reads return), by replaying that guest's
    /// requests on this image's device, so that the device and its trace are exactly those
    /// of a live run. `Err` when no instance could be made.
    fn guest_session(
        &self,
        run: &Run,
        image: &Image,
        eio_read: Option<u64>,
        dev_seed: u64,
    ) -> Result<(Arc<GuestSession>, SimDevice, usize), GuestError> {
        let mut dev = SimDevice::new(image.clone(), dev_seed);
        dev.discard_ignored = run.workload.discard_ignored;
        dev.eio = eio_read.map(|nth| Eio { kind: IoKind::Read, nth });
        if self.opts.memo {
            if let Some(s) = run.memo.find(|s| s.fits(image, eio_read)) {
                dev.replay(&s.recording.requests[..s.mount_requests]);
                let mount_end = dev.trace.events.len();
                dev.eio = None;
                dev.replay(&s.recording.requests[s.mount_requests..]);
                self.replayed.fetch_add(1, Ordering::Relaxed);
                return Ok((s, dev, mount_end));
            }
        }
        dev.record();
        let mut g = if self.opts.memo { self.module.instantiate(dev)? } else { self.module.instantiate_fresh(dev)? };
        let mount = g.mount(false, NOW_BASE + 100_000);
        let mount_requests = g.device().recording.as_ref().map_or(0, |r| r.requests.len());
        let mount_reads =
            g.device().recording.as_ref().map_or(0, |r| {
                r.requests.iter().filter(|q| matches!(q, crate::device::Request::Read(_))).count() as u64
            });
        let mount_end = g.device().trace.events.len();
        // The injected read error is for recovery only; fsck and the dump read healthily.
        g.device_mut().eio = None;
        let (mut stats_after_mount, mut fsck, mut dump, mut stats_after_dump) = (None, None, None, None);
        if mount.is_ok() {
            stats_after_mount = Some(g.stats());
            let f = self.fsck(run, &mut g);
            if matches!(&f, Ok(p) if p.is_empty()) {
                let d = g.dump_planned();
                if d.is_ok() {
                    stats_after_dump = Some(g.stats());
                }
                dump = Some(d);
            }
            fsck = Some(f);
        }
        let mut dev = if self.opts.memo { self.module.release(g) } else { g.into_device() };
        let recording = dev.recording.take().unwrap_or_default();
        let s = Arc::new(GuestSession {
            recording,
            eio_read,
            block_count: image.block_count(),
            mount_requests,
            mount_reads,
            mount,
            stats_after_mount,
            fsck,
            dump,
            stats_after_dump,
            parsed: Mutex::new(None),
            miss: MissHint::default(),
        });
        self.guest_runs.fetch_add(1, Ordering::Relaxed);
        if self.opts.memo {
            run.memo.insert(s.clone());
        }
        Ok((s, dev, mount_end))
    }

    /// fsck of a live guest's recovered device: from the run's [`FsckMemo`] when an earlier
    /// fsck read the same blocks (its reads made again on the device), else in the guest.
    /// With [`Options::verify_memo`] a memo answer is checked against a live fsck.
    fn fsck(&self, run: &Run, g: &mut crate::guest::Guest) -> Result<Vec<String>, GuestError> {
        if !self.opts.memo {
            return g.fsck();
        }
        let before = g.device().recording.as_ref().map_or(0, |r| r.requests.len());
        if let Some(s) = run.fsck_memo.find(|s| s.fits(g.device())) {
            self.fsck_replayed.fetch_add(1, Ordering::Relaxed);
            if self.opts.verify_memo {
                let live = g.fsck();
                let made = &g.device().recording.as_ref().expect("a live guest records").requests[before..];
                assert!(
                    matches!(&live, Ok(p) if *p == s.problems) && made == &s.requests[..],
                    "fsck memo answer {:?} ({} requests), live fsck {live:?} ({} requests)",
                    s.problems,
                    s.requests.len(),
                    made.len()
                );
                return live;
            }
            g.device_mut().replay(&s.requests);
            return Ok(s.problems.clone());
        }
        let f = g.fsck();
        if let (Ok(p), Some(rec)) = (&f, g.device().recording.as_ref()) {
            if let Some(s) = FsckSession::of(g.device(), &rec.requests[before..], p) {
                run.fsck_memo.insert(Arc::new(s));
            }
        }
        f
    }

    /// The tree of session `s`'s planned dump `d` on `dev`: the session's last tree when
    /// `dev` holds the blocks it named (an image answered from the memo usually does: the
    /// crash images of a run share their data blocks), else the tree of an earlier live dump
    /// of the run with the same bytes whose named blocks `dev` holds ([`DumpMemo`]), else
    /// parsed, its blocks hashed and checked against their checksums
    /// ([`Tree::parse_planned_dump`]), and kept in `s` and the run's [`DumpMemo`].
    /// With [`Options::verify_memo`] a kept tree is checked against a parse.
    fn dump_tree(&self, run: &Run, s: &Arc<GuestSession>, d: &[u8], dev: &SimDevice) -> Result<Tree, DumpFault> {
        let holds = |p: &ParsedDump| p.blocks.iter().all(|(a, b)| blocks_equal(dev.current(*a), b.as_ref()));
        let own = s.parsed.lock().unwrap().clone();
        let mut kept = own.filter(|p| holds(p));
        if kept.is_some() {
            self.trees_reused.fetch_add(1, Ordering::Relaxed);
        }
        // Hashed only when the session's own tree does not serve (most replayed states).
        let key = std::cell::OnceCell::new();
        let key = || *key.get_or_init(|| dump_key(d));
        if kept.is_none() && self.opts.memo {
            let same = |k: &KeptDump| {
                k.key == key() && matches!(&k.session.dump, Some(Ok(b)) if b[..] == d[..]) && holds(&k.parsed)
            };
            if let Some(k) = run.dump_memo.find(same) {
                self.dumps_reused.fetch_add(1, Ordering::Relaxed);
                *s.parsed.lock().unwrap() = Some(k.parsed.clone());
                kept = Some(k.parsed.clone());
            }
        }
        if let Some(p) = &kept {
            if !self.opts.verify_memo {
                return Ok(p.tree.clone());
            }
        }
        let named = std::cell::RefCell::new(Vec::new());
        let get = |a: u64| {
            let b = dev.current(a).cloned();
            named.borrow_mut().push((a, b.clone()));
            b
        };
        let parsed = Tree::parse_planned_dump(d, &DumpBlocks { get: &get, cache: &run.block_cache });
        if let Some(p) = kept {
            // Also when the parse fails: reuse must never hide a checksum failure.
            assert!(
                matches!(&parsed, Ok(t) if *t == p.tree),
                "a kept dump tree differs from the parse: {:?}",
                parsed.as_ref().map(|t| p.tree.diff(t, 6))
            );
        }
        let tree = parsed?;
        let parsed = Arc::new(ParsedDump { tree: tree.clone(), blocks: named.into_inner() });
        *s.parsed.lock().unwrap() = Some(parsed.clone());
        if self.opts.memo {
            run.dump_memo.insert(Arc::new(KeptDump { key: key(), session: s.clone(), parsed }));
        }
        Ok(tree)
    }

    /// Mounts an image in a fresh instance and checks it: fsck clean, tree allowed.
    /// Returns the guest (for its recovery trace) and the failure, if any.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_image(
        &self,
        run: &Run,
        image: &Image,
        allowed: &[usize],
        point: usize,
        eio_read: Option<u64>,
        dev_seed: u64,
        log: &mut Log,
    ) -> (Option<SimDevice>, usize, u64, Option<(String, String)>) {
        let (s, dev, mount_end) = match self.guest_session(run, image, eio_read, dev_seed) {
            Ok(x) => x,
            Err(e) => return (None, 0, 0, Some(("instantiate".into(), guest_err(&e)))),
        };
        let mount = &s.mount;
        let fired = dev.trace.events[..mount_end].iter().any(|e| matches!(e, crate::device::Event::Failed { .. }));
        log.line(|| format!("mount: {mount:?} ({mount_end} I/O events)"));
        if self.opts.trace_mount {
            log.lines(|| dev.trace.describe(0..mount_end).into_iter().map(|l| format!("  mount {l}")));
        }
        if let Err(e) = mount {
            if e.errno() == Some(5) && fired {
                // A clear I/O error is the right answer; a later healthy mount of what the
                // failed mount left must still recover.
                let left = dev.final_image();
                let (_, _, h, v) = self.check_image(run, &left, allowed, point, None, dev_seed ^ 1, log);
                return (None, mount_end, h, v.map(|(k, d)| (format!("after-eio-{k}"), d)));
            }
            let kind =
                if matches!(e, GuestError::Trap(_)) { "mount-trap".into() } else { datasum_or(e, "mount-failed") };
            return (Some(dev), mount_end, 0, Some((kind, guest_err(e))));
        }
        if let Some(Ok(st)) = &s.stats_after_mount {
            self.add_events(st, true);
        }
        match s.fsck.as_ref().expect("fsck ran after a mount that succeeded") {
            Ok(p) if p.is_empty() => {}
            Ok(p) => return (Some(dev), mount_end, 0, Some(("fsck".into(), p.join("; ")))),
            Err(e) => return (Some(dev), mount_end, 0, Some(("fsck-error".into(), guest_err(e)))),
        }
        // The planned dump names each file's device blocks; they are hashed and checked
        // against their data checksums here, once per block of the run (BlockCache).
        let tree = match s.dump.as_ref().expect("dump ran after a clean fsck") {
            Ok(d) => match self.dump_tree(run, &s, d, &dev) {
                Ok(t) => t,
                Err(DumpFault::Parse(e)) => return (Some(dev), mount_end, 0, Some(("dump-parse".into(), e))),
                Err(DumpFault::Checksum(e)) => return (Some(dev), mount_end, 0, Some(("data-checksum".into(), e))),
            },
            Err(e) => return (Some(dev), mount_end, 0, Some((datasum_or(e, "dump"), guest_err(e)))),
        };
        // The dump read every file through the core's read path: a block that failed its checksum
        // fails the dump, but count it too (a read the dump's path did not return).
        if let Some(Ok(st)) = &s.stats_after_dump {
            let bad = st[stat_index("data_checksum_errors")];
            if bad > 0 {
                let detail = format!("{bad} data block reads failed their checksum after recovery");
                return (Some(dev), mount_end, 0, Some(("data-checksum".into(), detail)));
            }
        }
        let (exact, per_file) = self.tree_verdict(run, point, allowed, &tree);
        match per_file {
            Some(Some(v)) => return (Some(dev), mount_end, tree.hash, Some(v)),
            Some(None) => {
                log.line(|| {
                    format!(
                        "tree {} ({} entries)",
                        if exact { "matches an allowed state" } else { "passes the per-file rules" },
                        tree.entries.len()
                    )
                });
                return (Some(dev), mount_end, tree.hash, None);
            }
            None => {}
        }
        let closest = allowed.iter().min_by_key(|&&k| tree.distance(&run.states[k])).copied().unwrap_or(0);
        let detail = format!(
            "recovered tree is none of the allowed states {:?}; vs closest (after `{}`): {}",
            allowed.iter().map(|&k| run.records[k].label.clone()).collect::<Vec<_>>(),
            run.records[closest].label,
            tree.diff(&run.states[closest], 6).join("; ")
        );
        (Some(dev), mount_end, tree.hash, Some(("tree-mismatch".into(), detail)))
    }

    /// Whether `tree` is one of the `allowed` states of crash point `point`, and, when it is
    /// or the point's window holds an fsync-class operation, the per-file rules' verdict
    /// (`None` when neither: the tree must match). A function of the point and the tree:
    /// answered from the run's [`Run::verdicts`] for a tree checked at the point before
    /// (`verify_memo` checks the answer).
    fn tree_verdict(&self, run: &Run, point: usize, allowed: &[usize], tree: &Tree) -> TreeVerdict {
        let live = || {
            let exact = allowed.iter().any(|&k| run.states[k] == *tree);
            let (lo, hi) = window(&run.records, point);
            let per_file = (exact || window_has_fsync(run, lo, hi)).then(|| per_file_verdict(run, point, tree, exact));
            (exact, per_file)
        };
        if !self.opts.memo {
            return live();
        }
        let known = {
            let memo = run.verdicts.lock().unwrap();
            memo.get(&(point, tree.hash)).and_then(|v| v.iter().find(|(t, _)| t == tree).map(|(_, v)| v.clone()))
        };
        if let Some(v) = known {
            self.verdicts_reused.fetch_add(1, Ordering::Relaxed);
            if self.opts.verify_memo {
                assert_eq!(v, live(), "a kept tree verdict differs from the rules' at point {point}");
            }
            return v;
        }
        let v = live();
        run.verdicts.lock().unwrap().entry((point, tree.hash)).or_default().push((tree.clone(), v.clone()));
        v
    }

    fn check_job(&self, run: &Run, job: &Job, log: &mut Log) -> Verdict {
        let mut rng =
            Rng::derive(&[self.opts.seed, run.workload.dev_seed, job.id.point as u64, job.id.variant as u64, 0x4EC]);
        let random_eio = (self.opts.eio && rng.chance(1, 4)).then(|| rng.below(24));
        let dev_seed = rng.next_u64();
        let directive = run.workload.recovery_eio;
        let eio_read = match (job.id.read_eio, directive) {
            (Some(n), _) => {
                // One failing-read check of `@recovery-eio each` (replay).
                log.line(|| format!("read {n} of the recovery mount fails"));
                let (_, _, hash, bad) =
                    self.check_image(run, &job.image, &job.allowed, job.id.point, Some(n), dev_seed, log);
                return Verdict { states: 1, digest: hash, violation: bad.map(|(k, d)| (job.id, k, d)) };
            }
            (None, Some(RecoveryEio::Nth(n))) => Some(n),
            (None, Some(RecoveryEio::Each)) => None,
            (None, None) => random_eio,
        };
        let (dev, mount_end, hash, bad) =
            self.check_image(run, &job.image, &job.allowed, job.id.point, eio_read, dev_seed, log);
        let mut h = Hasher64::new();
        h.u64(hash);
        let mut states = 1;
        if let Some((k, d)) = bad {
            h.bytes(k.as_bytes());
            return Verdict { states, digest: h.finish(), violation: Some((job.id, k, d)) };
        }
        let Some(dev) = dev else {
            return Verdict { states, digest: h.finish(), violation: None };
        };
        h.u64(dev.trace.digest());
        if directive == Some(RecoveryEio::Each) && job.id.recovery.is_none() {
            // Every read of a recovery that rolls something forward fails in turn.
            let mount = &dev.trace.events[..mount_end];
            if mount.iter().any(|e| matches!(e, crate::device::Event::Write { .. })) {
                let reads = mount.iter().filter(|e| matches!(e, crate::device::Event::Read { .. })).count() as u64;
                for n in 0..reads {
                    let (_, _, h2, bad) =
                        self.check_image(run, &job.image, &job.allowed, job.id.point, Some(n), dev_seed, log);
                    states += 1;
                    h.u64(h2);
                    if let Some((k, d)) = bad {
                        let id = StateId { read_eio: Some(n), ..job.id };
                        return Verdict { states, digest: h.finish(), violation: Some((id, k, d)) };
                    }
                }
            }
        }
        // Crash the recovery itself at sampled points of the mount's I/O.
        let pts: Vec<usize> = (1..=mount_end).filter(|&q| dev.trace.events[q - 1].changes_crash_state()).collect();
        let wanted: Vec<(usize, u32)> = match job.id.recovery {
            Some(r) => vec![r],
            None if pts.is_empty() => vec![],
            None => (0..self.opts.recovery_crashes).map(|_| (*rng.pick(&pts), rng.below(4) as u32)).collect(),
        };
        let mut done = std::collections::HashSet::new();
        for (q, w) in wanted {
            if !done.insert((q, w)) {
                continue;
            }
            let mut walker = CrashWalker::new(&job.image, &dev.trace);
            walker.advance_to(q);
            let mut r2 = Rng::derive(&[dev_seed, q as u64, w as u64]);
            let surv = choose_survivors(&walker.pending(), w, &mut r2, self.opts.torn);
            let img = walker.image(&surv);
            log.line(|| format!("crash during recovery at {q}:{w}"));
            let (_, _, h2, bad) = self.check_image(run, &img, &job.allowed, job.id.point, None, r2.next_u64(), log);
            states += 1;
            h.u64(h2);
            if let Some((k, d)) = bad {
                let id = StateId { recovery: Some((q, w)), ..job.id };
                return Verdict { states, digest: h.finish(), violation: Some((id, format!("recovery-crash-{k}"), d)) };
            }
        }
        Verdict { states, digest: h.finish(), violation: None }
    }

    /// `f(0) .. f(n - 1)` on the explorer's worker threads, results in index order.
    pub(crate) fn par_map<T: Send>(&self, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let next = AtomicUsize::new(0);
        let out: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..self.opts.threads.max(1) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    out.lock().unwrap()[i] = Some(r);
                });
            }
        });
        out.into_inner().unwrap().into_iter().map(|r| r.expect("every index mapped")).collect()
    }

    /// Folds the verdicts of a run's crash states (in job order) into the case's result.
    fn case_of_run(&self, case: &CaseId, run: &Run, verdicts: Vec<Verdict>, res: &mut CaseResult) {
        let mut h = Hasher64::new();
        h.u64(res.digest);
        h.u64(run.trace.digest());
        for r in &run.records {
            h.bytes(r.result.as_bytes());
        }
        for (k, d) in &run.problems {
            h.bytes(k.as_bytes());
            res.violations.push(Violation {
                case: case.clone(),
                workload: run.workload.clone(),
                state: None,
                kind: k.clone(),
                detail: d.clone(),
            });
        }
        for v in verdicts {
            res.states += v.states;
            h.u64(v.digest);
            if let Some((id, kind, detail)) = v.violation {
                res.violations.push(Violation {
                    case: case.clone(),
                    workload: run.workload.clone(),
                    state: Some(id),
                    kind,
                    detail,
                });
            }
        }
        res.digest = h.finish();
    }

    /// Explores every crash state of one workload (and of its EIO run with `--eio`).
    pub fn explore_workload(&self, case: &CaseId, w: &Workload) -> CaseResult {
        let prepared = self.prepare_workload(w);
        self.check_workload(case, &prepared)
    }

    /// The runs of a workload to explore, as it is and (with `--eio`) with one injected
    /// error, each with the crash states to check. Single-threaded; [`explore_shard`] makes
    /// it for the next cases while this case's states are checked.
    pub fn prepare_workload(&self, w: &Workload) -> Prepared {
        let limit = w.max_points.map_or(self.opts.max_points, |n| n.min(self.opts.max_points));
        let run = self.run(w, None);
        let erun = match self.opts.eio {
            true => self.eio_choice(w, &run.counts).map(|eio| self.run(w, Some(eio))),
            false => None,
        };
        let jobs = self.jobs(&run, limit);
        let mut runs = vec![(run, jobs)];
        if let Some(erun) = erun {
            let ejobs = self.jobs(&erun, limit / 4 + 2);
            runs.push((erun, ejobs));
        }
        // The per-file rules' history, made here rather than by the first check that needs
        // it: there, the other checking threads waited for it at the start of every case.
        for (run, jobs) in &runs {
            if !jobs.is_empty() {
                run.history();
            }
        }
        Prepared { runs }
    }

    /// Checks the crash states of a workload's runs: all of them in one pass over the
    /// explorer's threads (no thread waits for the first run's last state before the
    /// second run's start), folded run by run.
    pub fn check_workload(&self, case: &CaseId, prepared: &Prepared) -> CaseResult {
        let all: Vec<(&Run, &Job)> =
            prepared.runs.iter().flat_map(|(r, jobs)| jobs.iter().map(move |j| (r, j))).collect();
        let verdicts = self.par_map(all.len(), |i| self.check_job(all[i].0, all[i].1, &mut Log::off()));
        self.fold_case(case, prepared, verdicts)
    }

    /// A case's result from the verdicts of its crash states (every run's jobs, in order).
    fn fold_case(&self, case: &CaseId, prepared: &Prepared, verdicts: Vec<Verdict>) -> CaseResult {
        let mut verdicts = verdicts.into_iter();
        let mut res = CaseResult::default();
        for (run, jobs) in &prepared.runs {
            let mine: Vec<Verdict> = verdicts.by_ref().take(jobs.len()).collect();
            self.case_of_run(case, run, mine, &mut res);
        }
        res
    }

    /// Test hook: the `n`-th crash-state check (from 1) of [`explore_shard`] from now on
    /// panics, as a bug in the harness would: the exploration must fail, not hang.
    #[doc(hidden)]
    pub fn panic_at_check(&self, n: u64) {
        let started = self.checks_started.load(Ordering::Relaxed);
        self.check_panic_at.store(started + n, Ordering::Relaxed);
    }

    /// The number of crash states to check in a prepared workload (every run's jobs).
    fn job_count(prepared: &Prepared) -> usize {
        prepared.runs.iter().map(|(_, jobs)| jobs.len()).sum()
    }

    /// Checks the `i`-th crash state of a prepared workload (its runs' jobs in order).
    fn check_nth(&self, prepared: &Prepared, mut i: usize) -> Verdict {
        let n = self.checks_started.fetch_add(1, Ordering::Relaxed) + 1;
        assert!(n != self.check_panic_at.load(Ordering::Relaxed), "injected panic in crash-state check {n}");
        for (run, jobs) in &prepared.runs {
            if i < jobs.len() {
                return self.check_job(run, &jobs[i], &mut Log::off());
            }
            i -= jobs.len();
        }
        unreachable!("job index within the prepared workload's job count")
    }

    /// Rebuilds and checks one crash state, returning a human-readable account.
    pub fn replay(&self, w: &Workload, id: StateId) -> (Vec<String>, Option<(String, String)>) {
        let mut log = vec![format!("workload {} ({} ops, device seed {})", w.name, w.ops.len(), w.dev_seed)];
        let mut run = self.run(w, None);
        if id.eio_run {
            let Some(eio) = self.eio_choice(w, &run.counts) else {
                return (log, Some(("replay".into(), "this workload has no EIO run".into())));
            };
            log.push(format!("injected {eio:?}"));
            run = self.run(w, Some(eio));
        }
        for (k, r) in run.records.iter().enumerate() {
            log.push(format!("  op {k:3} events {:?} {:?} {} -> {}", r.events, r.persist, r.label, r.result));
        }
        for (k, d) in &run.problems {
            log.push(format!("run problem {k}: {d}"));
        }
        if id.point > run.trace.events.len() {
            return (
                log,
                Some((
                    "replay".into(),
                    format!("point {} beyond the trace ({} events)", id.point, run.trace.events.len()),
                )),
            );
        }
        log.push(format!("trace near the crash point {}:", id.point));
        log.extend(run.trace.describe(id.point.saturating_sub(8)..id.point));
        let job = self.job(&run, id);
        log.push(format!(
            "allowed states: after {:?}",
            job.allowed.iter().map(|&k| &run.records[k].label).collect::<Vec<_>>()
        ));
        let mut log = Log::kept(log);
        let v = self.check_job(&run, &job, &mut log);
        (log.into_lines(), v.violation.map(|(_, k, d)| (k, d)))
    }

    /// The image a crash state leaves on the device, before recovery (for `replay
    /// --save-image`, to look at with `rollfs inspect` / `rollfs fsck`).
    pub fn crash_image(&self, w: &Workload, id: StateId) -> Option<Image> {
        let mut run = self.run(w, None);
        if id.eio_run {
            run = self.run(w, Some(self.eio_choice(w, &run.counts)?));
        }
        (id.point <= run.trace.events.len()).then(|| self.job(&run, id).image)
    }

    /// Delta-debugging over operations: the smallest workload (1-minimal within the
    /// budget) that still shows a violation of `kind`.
    pub fn shrink(&self, w: &Workload, kind: &str, budget: std::time::Duration) -> Workload {
        let start = Instant::now();
        let fails = |ops: &[Op]| {
            let cand = Workload { ops: ops.to_vec(), ..w.clone() };
            let r = self.explore_workload(&CaseId::Random(0), &cand);
            r.violations.iter().any(|v| v.kind == kind)
        };
        let mut ops = w.ops.clone();
        let mut n = 2usize;
        while ops.len() >= 2 && start.elapsed() < budget {
            let chunk = ops.len().div_ceil(n);
            let mut reduced = false;
            for i in 0..n {
                let lo = i * chunk;
                if lo >= ops.len() {
                    break;
                }
                let hi = (lo + chunk).min(ops.len());
                let cand: Vec<Op> = ops[..lo].iter().chain(&ops[hi..]).cloned().collect();
                if fails(&cand) {
                    ops = cand;
                    reduced = true;
                    break;
                }
                if start.elapsed() >= budget {
                    break;
                }
            }
            if reduced {
                n = (n - 1).max(2);
            } else {
                if n >= ops.len() {
                    break;
                }
                n = (n * 2).min(ops.len());
            }
        }
        if ops.len() == 1 && fails(&[]) {
            ops.clear();
        }
        Workload { ops, name: format!("{}-shrunk", w.name), ..w.clone() }
    }
}

/// Where the time of one crash state goes: seconds per state for instantiate, mount,
/// fsck and dump of the final image of a workload (`rollfs-sim bench`).
pub fn phase_costs(ex: &Explorer, w: &Workload, iters: u32) -> Vec<(&'static str, f64)> {
    let run = ex.run(w, None);
    let mut walker = CrashWalker::new(&run.start, &run.trace);
    walker.advance_to(run.trace.events.len());
    let image = walker.durable().clone();
    let mut t = [0f64; 4];
    let mut reads = 0;
    for _ in 0..iters {
        let t0 = Instant::now();
        let mut g = ex.module.instantiate(SimDevice::new(image.clone(), 1)).expect("instantiate");
        let t1 = Instant::now();
        g.mount(false, NOW_BASE).expect("mount");
        let t2 = Instant::now();
        g.fsck().expect("fsck");
        let t3 = Instant::now();
        // As check_image does: the planned dump, parsed against the device.
        let d = g.dump_planned().expect("dump");
        let dev = g.device();
        let blocks = DumpBlocks { get: &|a| dev.current(a).cloned(), cache: &run.block_cache };
        Tree::parse_planned_dump(&d, &blocks).expect("parse the dump");
        let t4 = Instant::now();
        reads = g.device().counts.reads;
        for (i, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3].iter().enumerate() {
            t[i] += d.as_secs_f64() / iters as f64;
        }
    }
    vec![("instantiate", t[0]), ("mount", t[1]), ("fsck", t[2]), ("dump + parse", t[3]), ("block reads", reads as f64)]
}

/// A whole exploration's totals.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub states: u64,
    pub workloads: u64,
    pub violations: Vec<Violation>,
    pub digest: u64,
    pub seconds: f64,
    /// The core's counters over this exploration's runs and recovery mounts.
    pub events: Events,
    /// (case index in the source, the case's digest), in exploration order: what a shard
    /// reports so that a merge recomputes `digest` (`crate::shard`).
    pub case_digests: Vec<(u64, u64)>,
}

impl Summary {
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.states as f64 / self.seconds
        } else {
            0.0
        }
    }

    pub fn last_line(&self) -> String {
        format!(
            "explored {} crash states from {} workloads: {} violations ({:.0} states/s)",
            self.states,
            self.workloads,
            self.violations.len(),
            self.rate()
        )
    }
}

/// Which workloads an exploration draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Random,
    Ace,
    Regression,
    /// The families where resources run out (`full:K`).
    Full,
    /// ACE sequences of up to three operations before an fsync (`ace3:K`), all of them.
    Ace3,
    /// An evenly spread sample of the ACE3 cases (every `ACE3_SAMPLE_STRIDE`-th).
    Ace3Sample,
    All,
}

/// `Source::Ace3Sample` takes every this-many-th ACE3 case.
pub const ACE3_SAMPLE_STRIDE: u64 = 97;

/// The `i`-th case of a source (`None` when a finite source is exhausted).
pub fn nth_case(source: Source, i: u64) -> Option<CaseId> {
    let files = crate::workload::regression_files();
    match source {
        Source::Random => Some(CaseId::Random(i)),
        Source::Full => Some(CaseId::Full(i)),
        Source::Ace3 => (i < crate::workload::ace3_count()).then_some(CaseId::Ace3(i)),
        Source::Ace3Sample => {
            let k = i * ACE3_SAMPLE_STRIDE;
            (k < crate::workload::ace3_count()).then_some(CaseId::Ace3(k))
        }
        Source::Ace => (i < crate::workload::ace_count()).then_some(CaseId::Ace(i)),
        Source::Regression => files.get(i as usize).cloned().map(CaseId::File),
        Source::All => {
            // Regression files first, then ACE, random and full cases in turn.
            let f = files.len() as u64;
            if i < f {
                return Some(CaseId::File(files[i as usize].clone()));
            }
            let j = i - f;
            match j % 3 {
                0 if j / 3 < crate::workload::ace_count() => Some(CaseId::Ace(j / 3)),
                2 => Some(CaseId::Full(j / 3)),
                _ => Some(CaseId::Random(j / 3)),
            }
        }
    }
}

/// Cases [`explore_shard`] holds at once: being run, waiting for their checks or being
/// checked, not yet taken into the summary. Bounds memory (a prepared case holds its crash
/// images) while leaving the workers something to do when a case's last check is slow.
const CASES_IN_FLIGHT_MAX: usize = 6;

/// Explores cases from `source` until `cases` workloads ran or `duration` passed;
/// `on_violation` is told of each violation as it is found.
pub fn explore(
    ex: &Explorer,
    source: Source,
    cases: Option<u64>,
    duration: Option<std::time::Duration>,
    stop_at_first: bool,
    on_violation: &mut dyn FnMut(&Violation),
) -> Summary {
    explore_shard(ex, source, cases, duration, stop_at_first, crate::shard::Shard::ALL, on_violation)
}

/// A case of [`explore_shard`] between its start and its result.
enum Slot {
    /// Its workload is being run (single-threaded).
    Preparing,
    /// Its crash states are being checked: `next` is the first job not yet taken, `verdicts`
    /// holds those done (in job order), `done` counts them.
    Checking { prepared: Arc<Prepared>, next: usize, done: usize, verdicts: Vec<Option<Verdict>> },
}

/// One case in flight: its index in the source, its id, where it stands.
struct InFlight {
    index: u64,
    case: CaseId,
    slot: Slot,
}

/// What [`explore_shard`]'s workers share, under one lock.
struct Schedule {
    /// Cases started and not yet finished, by sequence number (the order they were taken
    /// from the source, which is the order their results are summed in).
    flight: std::collections::BTreeMap<u64, InFlight>,
    /// Sequence number of the next case to start.
    next_seq: u64,
    /// Index of the next case in the source.
    next_index: u64,
    /// No more cases start: the source or `cases` is exhausted, the time is up, or a
    /// violation stopped a search for the first one.
    exhausted: bool,
    /// Workers running a task (a run or a check) outside the lock.
    busy: usize,
    /// A search for the first violation found it: workers stop.
    stopped: bool,
}

/// Stops every worker of [`explore_shard`] when the worker holding it unwinds.
struct StopOnPanic<'a> {
    schedule: &'a Mutex<Schedule>,
    wake: &'a std::sync::Condvar,
}

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A panic under the lock poisons it; the schedule is only read to stop.
            let mut st = self.schedule.lock().unwrap_or_else(|p| p.into_inner());
            st.stopped = true;
            self.wake.notify_all();
        }
    }
}

/// What a worker reports for a case: its result, or that its workload could not be made.
enum Outcome {
    Checked(CaseResult),
    BadWorkload(Box<Violation>),
}

/// What a worker does next ([`Schedule::next_task`]).
enum Task {
    /// Check job `job` of case `seq`.
    Check { seq: u64, job: usize, prepared: Arc<Prepared> },
    /// Make case `seq`'s workload and run it.
    Prepare { seq: u64, case: CaseId },
    /// Nothing now: wait for another worker.
    Wait,
    /// Nothing left.
    Exit,
}

impl Schedule {
    /// The next task: a crash state of the oldest case being checked, else the run of a new
    /// case (when fewer than [`CASES_IN_FLIGHT_MAX`] are in flight), else wait (or exit when
    /// no worker is busy either). Crash states first, so that a case's results are ready
    /// early and the cases held stay few. After `duration`, cases not yet being checked are
    /// left (their results would not be summed after an unfinished earlier case anyway).
    fn next_task(&mut self, timed_out: bool, case_at: impl Fn(u64) -> Option<Option<CaseId>>) -> Task {
        if self.stopped {
            return Task::Exit;
        }
        if timed_out {
            self.exhausted = true;
        }
        for (&seq, f) in self.flight.iter_mut() {
            if let Slot::Checking { prepared, next, verdicts, .. } = &mut f.slot {
                if timed_out && *next == 0 {
                    continue;
                }
                if *next < verdicts.len() {
                    *next += 1;
                    return Task::Check { seq, job: *next - 1, prepared: prepared.clone() };
                }
            }
        }
        // Bounded: every turn moves `next_index`, and within a shard's stride an index of
        // this shard either has a case or ends the source.
        while !self.exhausted && self.flight.len() < CASES_IN_FLIGHT_MAX {
            let index = self.next_index;
            match case_at(index) {
                None => self.exhausted = true,
                Some(None) => self.next_index += 1,
                Some(Some(case)) => {
                    self.next_index += 1;
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    self.flight.insert(seq, InFlight { index, case: case.clone(), slot: Slot::Preparing });
                    return Task::Prepare { seq, case };
                }
            }
        }
        if self.busy == 0 {
            Task::Exit
        } else {
            Task::Wait
        }
    }
}

/// [`explore`] of one shard: the cases of `source` whose index is `shard.k` modulo
/// `shard.n`, among the first `cases` (all of them: with `cases`, the shards of one
/// exploration split exactly its cases).
///
/// `threads` workers share one schedule: each takes the next crash state to check of the
/// oldest case being checked, else runs the next case's workload (single-threaded), so no
/// core waits at the end of a case for its last state while there is other work (a per-case
/// barrier left ~7 % of two cores idle), and runs made ahead never compete with checks for
/// the cores. Results are summed in case order (the digest is that of checking the cases
/// one after another, whatever the number of threads).
pub fn explore_shard(
    ex: &Explorer,
    source: Source,
    cases: Option<u64>,
    duration: Option<std::time::Duration>,
    stop_at_first: bool,
    shard: crate::shard::Shard,
    on_violation: &mut dyn FnMut(&Violation),
) -> Summary {
    let start = Instant::now();
    let mut sum = Summary::default();
    let events0 = ex.events();
    let mut h = Hasher64::new();
    let timed_out = || duration.is_some_and(|d| start.elapsed() >= d);
    // The case at source index `i`: `None` past the source's or `cases`' end, `Some(None)`
    // at another shard's index.
    let case_at = &|i: u64| -> Option<Option<CaseId>> {
        if cases.is_some_and(|n| i >= n) {
            return None;
        }
        if !shard.has(i) {
            return Some(None);
        }
        nth_case(source, i).map(Some)
    };
    let schedule = Mutex::new(Schedule {
        flight: Default::default(),
        next_seq: 0,
        next_index: 0,
        exhausted: false,
        busy: 0,
        stopped: false,
    });
    let wake = std::sync::Condvar::new();
    let (tx, rx) = std::sync::mpsc::channel::<(u64, u64, Outcome)>();
    std::thread::scope(|scope| {
        for _ in 0..ex.opts.threads.max(1) {
            let tx = tx.clone();
            let (schedule, wake) = (&schedule, &wake);
            scope.spawn(move || {
                // A task that panics (a harness bug, a failed memo check) stops every worker,
                // so that the others' senders drop, the summing loop ends and the scope's
                // join re-raises the panic: otherwise the others would wait for the dead
                // worker's task forever.
                let _stop_on_panic = StopOnPanic { schedule, wake };
                let mut st = schedule.lock().unwrap();
                loop {
                    match st.next_task(timed_out(), case_at) {
                        Task::Exit => {
                            wake.notify_all();
                            return;
                        }
                        Task::Wait => st = wake.wait(st).unwrap(),
                        Task::Prepare { seq, case } => {
                            st.busy += 1;
                            drop(st);
                            let made = crate::workload::workload(&case, ex.opts.seed).map(|w| ex.prepare_workload(&w));
                            st = schedule.lock().unwrap();
                            st.busy -= 1;
                            match made {
                                Ok(prepared) => {
                                    let n = Explorer::job_count(&prepared);
                                    let f = st.flight.get_mut(&seq).expect("a case being run stays in flight");
                                    let verdicts = (0..n).map(|_| None).collect();
                                    f.slot =
                                        Slot::Checking { prepared: Arc::new(prepared), next: 0, done: 0, verdicts };
                                    if n == 0 {
                                        let f = st.flight.remove(&seq).expect("in flight");
                                        let Slot::Checking { prepared, .. } = f.slot else { unreachable!() };
                                        let r = ex.fold_case(&f.case, &prepared, vec![]);
                                        let _ = tx.send((seq, f.index, Outcome::Checked(r)));
                                    }
                                }
                                Err(e) => {
                                    // Reported in its turn, as a violation of no state.
                                    let f = st.flight.remove(&seq).expect("in flight");
                                    let _ = tx.send((
                                        seq,
                                        f.index,
                                        Outcome::BadWorkload(Box::new(workload_violation(&case, e))),
                                    ));
                                }
                            }
                            wake.notify_all();
                        }
                        Task::Check { seq, job, prepared } => {
                            st.busy += 1;
                            drop(st);
                            let v = ex.check_nth(&prepared, job);
                            drop(prepared);
                            st = schedule.lock().unwrap();
                            st.busy -= 1;
                            let finished = {
                                let f = st.flight.get_mut(&seq).expect("a case being checked stays in flight");
                                let Slot::Checking { verdicts, done, .. } = &mut f.slot else {
                                    unreachable!("a checked job's case is being checked")
                                };
                                verdicts[job] = Some(v);
                                *done += 1;
                                *done == verdicts.len()
                            };
                            if finished {
                                // Folded outside the lock; the case leaves the flight now.
                                let f = st.flight.remove(&seq).expect("in flight");
                                st.busy += 1;
                                drop(st);
                                let Slot::Checking { prepared, verdicts, .. } = f.slot else { unreachable!() };
                                let verdicts = verdicts.into_iter().map(|v| v.expect("every job checked")).collect();
                                let r = ex.fold_case(&f.case, &prepared, verdicts);
                                drop(prepared);
                                let _ = tx.send((seq, f.index, Outcome::Checked(r)));
                                st = schedule.lock().unwrap();
                                st.busy -= 1;
                            }
                            wake.notify_all();
                        }
                    }
                }
            });
        }
        drop(tx);
        // Results in case order: a case finished before an earlier one waits here. Cases
        // after one left unfinished when time ran out are not counted (their states are not
        // in the summary).
        let mut checked: std::collections::BTreeMap<u64, (u64, Outcome)> = Default::default();
        let mut next_taken = 0u64;
        'results: for (seq, index, outcome) in rx.iter() {
            checked.insert(seq, (index, outcome));
            while let Some((index, outcome)) = checked.remove(&next_taken) {
                next_taken += 1;
                match outcome {
                    Outcome::BadWorkload(v) => {
                        on_violation(&v);
                        sum.violations.push(*v);
                    }
                    Outcome::Checked(r) => {
                        sum.workloads += 1;
                        sum.states += r.states;
                        h.u64(r.digest);
                        sum.case_digests.push((index, r.digest));
                        for v in r.violations {
                            on_violation(&v);
                            sum.violations.push(v);
                        }
                    }
                }
                if stop_at_first && !sum.violations.is_empty() {
                    // The workers finish the task they hold and take no other.
                    schedule.lock().unwrap().stopped = true;
                    wake.notify_all();
                    break 'results;
                }
            }
        }
    });
    sum.digest = h.finish();
    sum.seconds = start.elapsed().as_secs_f64();
    sum.events = ex.events().since(&events0);
    sum
}

/// Explores the given cases (`rollfs-sim explore --case`).
pub fn explore_cases(ex: &Explorer, cases: &[CaseId], on_violation: &mut dyn FnMut(&Violation)) -> Summary {
    let start = Instant::now();
    let mut sum = Summary::default();
    let events0 = ex.events();
    let mut h = Hasher64::new();
    for case in cases {
        let w = match crate::workload::workload(case, ex.opts.seed) {
            Ok(w) => w,
            Err(e) => {
                let v = workload_violation(case, e);
                on_violation(&v);
                sum.violations.push(v);
                continue;
            }
        };
        let r = ex.explore_workload(case, &w);
        sum.workloads += 1;
        sum.states += r.states;
        h.u64(r.digest);
        for v in r.violations {
            on_violation(&v);
            sum.violations.push(v);
        }
    }
    sum.digest = h.finish();
    sum.seconds = start.elapsed().as_secs_f64();
    sum.events = ex.events().since(&events0);
    sum
}

/// The violation of a case whose workload cannot be built (e.g. a file that does not parse).
fn workload_violation(case: &CaseId, detail: String) -> Violation {
    Violation {
        case: case.clone(),
        workload: Workload {
            name: "?".into(),
            ops: vec![],
            dev_seed: 0,
            completion: crate::device::Completion::Immediate,
            discard_ignored: false,
            recovery_eio: None,
            device: None,
            no_enospc: false,
            max_points: None,
        },
        state: None,
        kind: "workload".into(),
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(label: &str, events: Range<usize>, persist: Persist) -> OpRecord {
        OpRecord { label: label.into(), events, persist, result: String::new(), ok: true, errno: None }
    }

    #[test]
    fn allowed_states_follow_persistence_points() {
        let r = vec![
            rec("mount", 0..2, Persist::Checkpoint),
            rec("create", 2..2, Persist::None),
            rec("sync", 2..10, Persist::Checkpoint),
            rec("write", 10..10, Persist::None),
            rec("sync", 10..20, Persist::Checkpoint),
            rec("unmount", 20..25, Persist::Checkpoint),
        ];
        assert_eq!(allowed_states(&r, 0), vec![0]);
        assert_eq!(allowed_states(&r, 2), vec![0]);
        assert_eq!(allowed_states(&r, 3), vec![0, 2], "sync in progress: old or new");
        assert_eq!(allowed_states(&r, 10), vec![2], "sync complete");
        assert_eq!(allowed_states(&r, 15), vec![2, 4]);
        assert_eq!(allowed_states(&r, 20), vec![4]);
        assert_eq!(allowed_states(&r, 25), vec![5]);
        let mut failed = r.clone();
        failed[4].ok = false;
        assert_eq!(allowed_states(&failed, 20), vec![2, 4], "a failed sync guarantees nothing");
    }

    #[test]
    fn miss_hint_changes_the_order_of_comparisons_not_the_answer() {
        let hint = MissHint::default();
        let tried = std::cell::RefCell::new(Vec::new());
        let same = |differs: &'static [usize]| {
            let tried = &tried;
            move |i: usize| {
                tried.borrow_mut().push(i);
                !differs.contains(&i)
            }
        };
        // The first miss is found in order and remembered.
        assert!(!hint.all(6, same(&[4, 5])));
        assert_eq!(*tried.borrow(), [0, 1, 2, 3, 4]);
        // The next check starts at the remembered read and stops there.
        tried.borrow_mut().clear();
        assert!(!hint.all(6, same(&[4])));
        assert_eq!(*tried.borrow(), [4]);
        // Where the remembered read matches, the rest are still checked (a hit checks all)
        // and a new miss is remembered.
        tried.borrow_mut().clear();
        assert!(!hint.all(6, same(&[1])));
        assert_eq!(*tried.borrow(), [4, 0, 1]);
        tried.borrow_mut().clear();
        assert!(hint.all(6, same(&[])));
        assert_eq!(*tried.borrow(), [1, 0, 2, 3, 4, 5], "a fit compares every read once");
        // A hint beyond a shorter entry is ignored.
        tried.borrow_mut().clear();
        assert!(hint.all(1, same(&[])));
        assert!(!hint.all(1, same(&[0])));
        assert!(!MissHint::default().all(3, |i| i != 2));
        assert!(MissHint::default().all(0, |_| false), "no reads: fits");
    }

    #[test]
    fn state_id_round_trip() {
        for s in ["3:1", "e10:0", "7:2/4:1", "5:0@3", "e5:1@12"] {
            assert_eq!(s.parse::<StateId>().unwrap().to_string(), s);
        }
    }
}

/// The per-file rules on the run's interval history give the verdicts of the scan over
/// the window's states they replaced, for the allowed trees of every crash point and for
/// damaged ones (an entry dropped, a file's content replaced, an entry from later added).
#[cfg(test)]
mod history_tests {
    use super::*;
    use crate::workload::{regression_dir, workload, CaseId};

    fn damaged(t: &Tree, later: &Tree, salt: usize) -> Vec<Tree> {
        let mut out = Vec::new();
        let keys: Vec<String> = t.entries.keys().cloned().collect();
        for (i, k) in keys.iter().enumerate().take(12) {
            let mut d = t.clone();
            d.entries.remove(k);
            out.push(d);
            if (i + salt).is_multiple_of(3) {
                let mut d = t.clone();
                if let Some(e) = d.entries.get_mut(k) {
                    e.chash ^= 0x9E37_79B9 + i as u64;
                }
                out.push(d);
            }
        }
        for (k, e) in later.entries.iter().filter(|(k, _)| !t.entries.contains_key(*k)).take(2) {
            let mut d = t.clone();
            d.entries.insert(k.clone(), e.clone());
            out.push(d);
        }
        out
    }

    #[test]
    fn history_verdicts_match_the_window_scan() {
        let ex =
            Explorer::new(GuestModule::default_guest().unwrap(), Options { seed: 5, ..Options::default() }).unwrap();
        let dir = regression_dir();
        let mut cases: Vec<CaseId> = [
            "rename-atomic.wl",
            "links-and-unlink.wl",
            "seed-fsync-atomic.wl",
            "seed-btrfs-logged-trans-rename.wl",
            "seed-btrfs-logged-trans-link.wl",
            "many-small-syncs.wl",
        ]
        .iter()
        .map(|f| CaseId::File(dir.join(f)))
        .collect();
        cases.extend((0..6).map(CaseId::Random));
        cases.extend((0..10).map(|i| CaseId::Ace(i * 37)));
        let (mut compared, mut violations) = (0usize, 0usize);
        let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
        // Renames of files that have a second name in part of the window (rule 4 applies
        // only to single-name files), with fsyncs so that the window reaches across them.
        let linked = "create /x\nwrite /x 0 100 1\nlink /x /f\ncreate /h\nsync\nrename /f /g\nfsync /h\n\
                      create /y\nsync\nrename /y /z\nlink /z /w\nfsync /h\nlink /x /v\nrename /g /u\nfsync /h\n";
        let mut workloads: Vec<(String, Workload)> =
            vec![("linked".into(), Workload::parse("linked", linked, 5).unwrap())];
        workloads.extend(cases.iter().map(|c| (c.to_string(), workload(c, 5).unwrap())));
        for (case, w) in workloads {
            let run = ex.run(&w, None);
            let n = run.trace.events.len();
            for c in (0..=n).step_by((n / 40).max(1)) {
                let (lo, hi) = window(&run.records, c);
                let hi = hi.min(run.states.len() - 1);
                let later = &run.states[(hi + 1).min(run.states.len() - 1)];
                for k in lo..=hi {
                    let mut trees = vec![run.states[k].clone()];
                    trees.extend(damaged(&run.states[k], later, c + k));
                    for t in &trees {
                        for exact in [false, true] {
                            let got = per_file_verdict(&run, c, t, exact);
                            let want = per_file_verdict_by_scan(&run, c, t, exact);
                            assert_eq!(got, want, "{case} crash point {c}, state {k}, exact {exact}");
                            compared += 1;
                            violations += want.is_some() as usize;
                            if let Some((kind, _)) = want {
                                *kinds.entry(kind).or_default() += 1;
                            }
                        }
                    }
                }
            }
        }
        eprintln!("{compared} verdicts compared, {violations} violations: {kinds:?}");
        assert!(compared > 2000 && violations > 200, "{compared} verdicts compared, {violations} violations");
        for rule in ["fsync-lost", "rename-not-atomic", "tree-mismatch"] {
            assert!(kinds.get(rule).is_some_and(|&n| n > 0), "rule {rule} never decided: {kinds:?}");
        }
    }
}

/// The planned dump (device blocks and holes named, not sent) parses to the tree the plain
/// dump gives, on images from every regression workload and some full-device and random
/// cases, at several points of each run.
#[cfg(test)]
mod planned_dump_tests {
    use super::*;
    use crate::workload::{regression_files, workload, CaseId};

    #[test]
    fn planned_dump_gives_the_plain_dumps_tree() {
        let ex =
            Explorer::new(GuestModule::default_guest().unwrap(), Options { seed: 2, ..Options::default() }).unwrap();
        let mut cases: Vec<CaseId> = regression_files().into_iter().map(CaseId::File).collect();
        cases.extend((0..6).map(CaseId::Full));
        cases.extend((0..4).map(CaseId::Random));
        let (mut images, mut plain_bytes, mut planned_bytes) = (0, 0usize, 0usize);
        for case in &cases {
            let w = workload(case, 2).unwrap();
            let run = ex.run(&w, None);
            let n = run.trace.events.len();
            let mut walker = CrashWalker::new(&run.start, &run.trace);
            for c in [n / 3, 2 * n / 3, n] {
                walker.advance_to(c);
                let mut g = ex.module.instantiate(SimDevice::new(walker.durable().clone(), 1)).unwrap();
                if g.mount(false, NOW_BASE).is_err() {
                    continue;
                }
                let plain = g.dump().unwrap();
                let planned = g.dump_planned().unwrap();
                let dev = g.device();
                let blocks = DumpBlocks { get: &|a| dev.current(a).cloned(), cache: &run.block_cache };
                let a = Tree::parse_dump(&plain).unwrap();
                let b = Tree::parse_planned_dump(&planned, &blocks).unwrap();
                assert!(a == b, "{case} at {c}: {:?}", a.diff(&b, 6));
                images += 1;
                plain_bytes += plain.len();
                planned_bytes += planned.len();
            }
        }
        assert!(images > 60, "only {images} images mounted");
        // Full devices' files are mostly holes: named, they are not sent.
        assert!(planned_bytes * 4 < plain_bytes, "planned {planned_bytes} bytes vs plain {plain_bytes}");
    }
}
