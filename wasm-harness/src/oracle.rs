//! The oracle: what a crash state may recover to and what an operation's outcome must be.
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
//!
//! This module owns the verdicts: the model's outcome of an operation ([`model_outcome`]),
//! a crash point's window and allowed states ([`window`], [`allowed_states`]), the per-file
//! rules ([`per_file_verdict`]), the violation kinds of failed guest calls, the live tree
//! of a running guest ([`live_tree`]) and failure atomicity in the running mount
//! ([`FailureCheck`]). Running workloads and checking crash states against these is
//! `crate::run`'s.

use crate::guest::{GuestError, E_DATASUM};
use crate::history;
use crate::model::{BlockCache, DumpBlocks, DumpFault, Model, Tree};
use crate::run::{OpRecord, Persist, Run};
use crate::workload::Op;

/// Errors the model cannot predict: an operation it expects to succeed may fail with one
/// of these (and must then have changed nothing).
pub const RESOURCE_ERRORS: [i64; 3] = [28 /* ENOSPC */, 31 /* EMLINK */, 27 /* EFBIG */];

/// The model's verdict on an operation the guest ran: a resource error the model cannot
/// predict is taken as the outcome (the model then does not apply the operation: failure
/// atomicity), except ENOSPC under `@no-enospc`, ENOSPC for a write entirely into blocks
/// fallocate reserved (posix_fallocate's promise), and ENOSPC for a removal (a full
/// filesystem still deletes: issue 41).
pub(crate) fn model_outcome(
    model: &mut Model,
    op: &Op,
    got: &Result<i64, GuestError>,
    no_enospc: bool,
) -> Result<(), i64> {
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
        if matches!(op, Op::AtomicCommit(_)) {
            let absent_since = |p: &str| history::values_in(h.kinds.get(p), f, hi).next().is_none();
            let names = history::names_in(h, *ino, f, f);
            if let Some(v) = name_back_verdict(tree, names.iter().map(|p| p.as_str()), &r.label, absent_since) {
                return Some(v);
            }
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
        if let Some(v) = reservation_verdict(h, tree, &names, *ino, f, hi, &r.label, file_hash, held) {
            return Some(v);
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
            // A file renamed over `p` at `k` shows there a state of its own from `k` on.
            let renamed_over =
                renamed_over(run, lo, hi, p, |x, k| history::values_in(h.names.get(p), lo, k - 1).any(|&i| i == x));
            let stale = renamed_over.and_then(|(x, k)| {
                let own = history::values_in(h.content.get(&x), k, hi).any(|&c| c == hash);
                let other = history::values_in(h.names.get(p), lo, hi)
                    .any(|&i| i != x && history::values_in(h.content.get(&i), lo, hi).any(|&c| c == hash));
                (!own && !other).then_some(k)
            });
            if let (true, Some(k)) = (ok, stale) {
                return Some(rename_bad(run, p, e.size, k));
            }
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

/// The file renamed over `p` in the window, and the record of that rename: the first
/// rename (or exchange) in `lo + 1..=hi` that gave `p`, a name of another file then, to a
/// file `x` that did not have it earlier in the window (`had(x, k)`: `x` named `p` at some
/// record of `lo..k`).
fn renamed_over(run: &Run, lo: usize, hi: usize, p: &str, had: impl Fn(u64, usize) -> bool) -> Option<(u64, usize)> {
    let snaps = &run.snaps;
    (lo + 1..=hi.min(run.ops.len().saturating_sub(1))).find_map(|k| {
        let Some((Op::Rename(from, to, _), _)) = &run.ops[k] else { return None };
        if !run.records[k].ok || (to != p && from != p) {
            return None;
        }
        let (x, before) = (*snaps[k].names.get(p)?, *snaps[k - 1].names.get(p)?);
        (x != before && !had(x, k)).then_some((x, k))
    })
}

/// ALICE's `rename-bad`, the promise riders keep (DESIGN.md, *Riders*): a file renamed over a
/// name, written and never fsync'd, never shows under that name a state it had before the
/// rename (empty, as just created), since the rename took the old file's contents away.
fn rename_bad(run: &Run, p: &str, size: u64, k: usize) -> (String, String) {
    (
        "rename-over-older".into(),
        format!(
            "{p}: content (size {size}) is a state the file renamed over it by `{}` had only before that rename",
            run.records[k].label
        ),
    )
}

/// Invariant 5's promise to SQLite (DESIGN.md, *Atomic writes*): an atomic commit that
/// returned makes durable every name removed before it from a directory holding one of the
/// file's `names` (as they were at the commit), so that a rollback journal deleted beside
/// the database never comes back after a crash next to the committed transaction (SQLite
/// would take it for a hot journal and "roll back" committed transactions with it). A name
/// of such a directory in the recovered `tree` must be one the directory held at the commit
/// or after it (`absent_since(p)`: no entry `p` from the commit's record to the window's
/// end). Every name's directory, not only the one the commit went through: a file with two
/// names has a journal beside each (review 56).
fn name_back_verdict<'a>(
    tree: &Tree,
    names: impl Iterator<Item = &'a str>,
    label: &str,
    absent_since: impl Fn(&str) -> bool,
) -> Option<(String, String)> {
    for path in names {
        let Some(dir) = crate::states::parent(path) else { continue };
        let prefix = if dir == "/" { String::from("/") } else { format!("{dir}/") };
        let back = tree
            .entries
            .keys()
            .filter(|p| p.len() > prefix.len() && p.starts_with(&prefix) && !p[prefix.len()..].contains('/'))
            .find(|p| absent_since(p));
        if let Some(back) = back {
            return Some((
                "atomic-commit-name-back".into(),
                format!(
                    "`{label}` returned before the crash, but {back}, removed before it from a directory holding the file ({path}), is back"
                ),
            ));
        }
    }
    None
}

/// Invariant 2 for fallocate (a reservation is file state; issue 38): the blocks `ino` had
/// reserved when fsync-class record `f` returned stay reserved after a crash, less what an
/// operation since spent or released. The model's count is a lower bound of the core's at
/// every record and only falls through writes, truncation and punches, so the fewest it
/// had over `f..=hi` is a lower bound of any state the file may show; the most the file's
/// `st_blocks` can hold reserved (less the blocks known to hold data) must reach it.
/// Checked on a name that shows one of the file's states (the content rule passed).
#[allow(clippy::too_many_arguments)]
fn reservation_verdict(
    h: &history::History,
    tree: &Tree,
    names: &std::collections::BTreeSet<&String>,
    ino: u64,
    f: usize,
    hi: usize,
    label: &str,
    file_hash: impl Fn(&str) -> Option<u64>,
    held: impl Fn(u64) -> bool,
) -> Option<(String, String)> {
    let want = history::reserved_min(h, ino, f, hi);
    if want == 0 {
        return None;
    }
    let p = names.iter().find(|p| file_hash(p).is_some_and(&held))?;
    let alloc = tree.entries.get(*p)?.alloc;
    (alloc.reserved_max() < want).then(|| {
        (
            "reservation-lost".to_string(),
            format!(
                "`{label}` returned with {want} blocks reserved that no operation since spent or released, but {p} shows st_blocks {} with at least {} data blocks",
                alloc.blocks, alloc.data_blocks_min
            ),
        )
    })
}

/// True when the window holds an fsync-class operation of a file (whose roll-forward may
/// recover a tree that is no single model state). A directory's fsync is not one: it makes
/// the whole tree durable or nothing (a checkpoint; with namespace records, one group of
/// records and batches that recovery applies whole), so a window whose only fsyncs are
/// directories' that did not fail must recover to a model state exactly. (One that failed,
/// an injected EIO, may have left part of its writes: the names of operations that had
/// succeeded before it.)
pub(crate) fn window_has_fsync(run: &Run, lo: usize, hi: usize) -> bool {
    (lo + 1..=hi.min(run.ops.len().saturating_sub(1))).any(|k| {
        run.ops[k].as_ref().is_some_and(|(op, _)| {
            op.fsync_target().is_some_and(|p| {
                let dir =
                    run.states.get(k).and_then(|s| s.entries.get(p)).is_some_and(|e| e.kind == crate::model::KIND_DIR);
                !dir || !run.records.get(k).is_some_and(|r| r.ok)
            })
        })
    })
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

pub(crate) fn guest_err(e: &GuestError) -> String {
    e.to_string()
}

/// The violation kind of a failed guest call: `data-checksum` when a read failed its data
/// checksum (a durable pointer names a block that was not written completely: the oracle
/// of data checksums), else `kind`.
pub(crate) fn datasum_or(e: &GuestError, kind: &str) -> String {
    if e.errno() == Some(E_DATASUM) { "data-checksum" } else { kind }.to_string()
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

/// Failure atomicity in the running mount, sampled: after the first
/// [`FailureCheck::ALL`] failed operations of a run and every [`FailureCheck::EVERY`]-th
/// after them, the guest's live tree must equal the model's (which did not apply them).
#[derive(Debug, Default)]
pub(crate) struct FailureCheck {
    failed: u64,
}

impl FailureCheck {
    const ALL: u64 = 16;
    const EVERY: u64 = 8;

    /// Checks after operation `op` returned `got`; records a problem and returns true (the
    /// run stops) when the failed operation left a trace in the live tree.
    pub(crate) fn check(
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

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
}

/// The per-file rules on the run's interval history give the verdicts of the scan over
/// the window's states they replaced, for the allowed trees of every crash point and for
/// damaged ones (an entry dropped, a file's content replaced, an entry from later added).
#[cfg(test)]
mod history_tests {
    use super::*;
    use crate::explore::{Explorer, Options};
    use crate::guest::GuestModule;
    use crate::workload::{regression_dir, workload, CaseId, Workload};

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
            if matches!(op, Op::AtomicCommit(_)) {
                let absent_since = |p: &str| (f..=hi).all(|k| !run.states[k].entries.contains_key(p));
                let names: std::collections::BTreeSet<&String> =
                    snaps[f].names.iter().filter(|(_, i)| *i == ino).map(|(p, _)| p).collect();
                if let Some(v) = name_back_verdict(tree, names.iter().map(|p| p.as_str()), &r.label, absent_since) {
                    return Some(v);
                }
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
                let renamed_over =
                    renamed_over(run, lo, hi, p, |x, k| (lo..k).any(|j| snaps[j].names.get(p) == Some(&x)));
                let stale = renamed_over.and_then(|(x, k)| {
                    let own = (k..=hi).any(|j| snaps[j].content.get(&x) == Some(&h));
                    let other = inos.iter().any(|&i| i != x && (lo..=hi).any(|j| snaps[j].content.get(&i) == Some(&h)));
                    (!own && !other).then_some(k)
                });
                if let (true, Some(k)) = (ok, stale) {
                    return Some(rename_bad(run, p, e.size, k));
                }
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
            "nsrec-atomic-commit-after-a-removed-journal.wl",
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
        for rule in ["fsync-lost", "rename-not-atomic", "tree-mismatch", "atomic-commit-name-back"] {
            assert!(kinds.get(rule).is_some_and(|&n| n > 0), "rule {rule} never decided: {kinds:?}");
        }
    }
}
