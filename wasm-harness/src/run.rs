//! Runs and checks: running a workload once in the guest against the model (its trace,
//! operation records and model states: [`Run`]), the crash states derived from a run, and
//! checking each of them (recovery, fsck and dump in a guest, answered from the run's memos
//! where they fit, judged by `crate::oracle`).
//!
//! This module owns [`Run`], [`OpRecord`], [`Persist`], the crash states to check
//! ([`Prepared`]) and their verdicts, the account of a check ([`Log`]), and the
//! [`Explorer`] methods that run and check cases ([`Explorer::run`],
//! [`Explorer::prepare_workload`], [`Explorer::check_workload`],
//! [`Explorer::explore_workload`], ...).

use crate::device::{choose_survivors, fixed_variants, CrashWalker, Eio, Image, IoCounts, IoKind, SimDevice};
use crate::explore::{CaseResult, Explorer, StateId, Violation, NOW_BASE};
use crate::guest::{stat_index, GuestError, E_DATASUM};
use crate::history::History;
use crate::memo::{
    blocks_equal, dump_key, DumpMemo, FsckMemo, FsckSession, GuestMemo, GuestSession, KeptDump, MissHint, ParsedDump,
    TreeVerdict, VerdictMemo,
};
use crate::model::{BlockCache, DumpBlocks, DumpFault, Model, Tree};
use crate::oracle::{
    allowed_states, datasum_or, guest_err, live_tree, model_outcome, per_file_verdict, window, window_has_fsync,
    FailureCheck,
};
use crate::rng::{Hasher64, Rng};
use crate::states::{Delta, StateTracker};
use crate::workload::{CaseId, Op, RecoveryEio, Workload};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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
    /// Every `(block index, block_hash)` a regular file held after some record
    /// ([`Options::file_blocks`](crate::explore::Options::file_blocks); the device models'
    /// wrong-bytes oracle, `crate::devices::BlockHistory`).
    pub file_blocks: Option<std::collections::HashSet<(u64, u64)>>,
}

impl Run {
    /// The per-file rules' interval history, made on first use.
    pub(crate) fn history(&self) -> &History {
        self.history.get_or_init(|| History::from_deltas(&self.states, &self.snaps, &self.deltas))
    }
}

/// Verdict of one crash state.
#[derive(Debug, Clone)]
pub(crate) struct Verdict {
    pub(crate) states: u64,
    pub(crate) digest: u64,
    pub(crate) violation: Option<(StateId, String, String)>,
}

/// A workload's runs ready to be checked ([`Explorer::prepare_workload`]): each run with
/// the crash states of it to check.
pub struct Prepared {
    runs: Vec<(Run, Vec<Job>)>,
}

/// One crash state to check.
pub(crate) struct Job {
    pub(crate) id: StateId,
    pub(crate) image: Image,
    pub(crate) allowed: Vec<usize>,
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
    if let Some(set) = run.file_blocks.as_mut() {
        // The inodes whose content changed: their blocks now (a group of repetitions records
        // its last state only, but a repetition that wrote is a record of its own).
        for ino in delta.inos.iter().map(|&i| i as rollfs_core::Ino).filter(|&i| model.ns().contains(i)) {
            if let Ok(f) = model.ns().file(ino) {
                set.extend(crate::devices::blocks_of(f.data()));
            }
        }
    }
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

impl Explorer {
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
            file_blocks: self.opts.file_blocks.then(Default::default),
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
            // Cleaning's postcondition (gc.rs `check_moved_out`): on these consistent images
            // no block a round moved stays valid where it was.
            if let Some(left) = stats.map(|s| s[stat_index("gc_blocks_left_valid")]).filter(|&n| n > 0) {
                run.problems.push(("gc-left-valid".into(), format!("op {i} `{op}`: {left} moved blocks left valid")));
                stopped = true;
            }
            // A directory's fsync that returned makes the whole tree durable: a checkpoint
            // without records, records and the changed files' batches with them
            // (`fsync::riders`; README, "Guarantees").
            let dir_fsync = got.is_ok() && matches!(op, Op::Fsync(p) | Op::Fdatasync(p) if model.is_dir_path(p));
            let persist = if op.is_checkpoint_point() || dir_fsync {
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
    pub(crate) fn eio_choice(&self, w: &Workload, counts: &IoCounts) -> Option<Eio> {
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
        // A run that never reached a first state (its `@device` refused by mkfs, the guest
        // not instantiated) has its problem reported and no state to crash into.
        if run.states.is_empty() {
            return jobs;
        }
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
    pub(crate) fn job(&self, run: &Run, id: StateId) -> Job {
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
    /// With [`Options::verify_memo`](crate::explore::Options::verify_memo) a memo answer is
    /// checked against a live fsck.
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
    /// With [`Options::verify_memo`](crate::explore::Options::verify_memo) a kept tree is
    /// checked against a parse.
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
            memo.get(&(point, tree.hash))
                .and_then(|v| v.iter().find(|(t, _)| t == tree && t.same_alloc(tree)).map(|(_, v)| v.clone()))
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

    pub(crate) fn check_job(&self, run: &Run, job: &Job, log: &mut Log) -> Verdict {
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
    /// error, each with the crash states to check. Single-threaded;
    /// [`explore_shard`](crate::schedule::explore_shard) makes it for the next cases while
    /// this case's states are checked.
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
    pub(crate) fn fold_case(&self, case: &CaseId, prepared: &Prepared, verdicts: Vec<Verdict>) -> CaseResult {
        let mut verdicts = verdicts.into_iter();
        let mut res = CaseResult::default();
        for (run, jobs) in &prepared.runs {
            let mine: Vec<Verdict> = verdicts.by_ref().take(jobs.len()).collect();
            self.case_of_run(case, run, mine, &mut res);
        }
        res
    }

    /// Test hook: the `n`-th crash-state check (from 1) of
    /// [`explore_shard`](crate::schedule::explore_shard) from now on panics, as a bug in
    /// the harness would: the exploration must fail, not hang.
    #[doc(hidden)]
    pub fn panic_at_check(&self, n: u64) {
        let started = self.checks_started.load(Ordering::Relaxed);
        self.check_panic_at.store(started + n, Ordering::Relaxed);
    }

    /// The number of crash states to check in a prepared workload (every run's jobs).
    pub(crate) fn job_count(prepared: &Prepared) -> usize {
        prepared.runs.iter().map(|(_, jobs)| jobs.len()).sum()
    }

    /// Checks the `i`-th crash state of a prepared workload (its runs' jobs in order).
    pub(crate) fn check_nth(&self, prepared: &Prepared, mut i: usize) -> Verdict {
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
}
