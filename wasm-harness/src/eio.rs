//! The I/O-error sweep (`rollfs-sim eio-sweep`): every read, write and flush a workload
//! issues fails with EIO in turn, one per run.
//!
//! For each I/O-error point the workload runs again with that one call failing, and:
//!
//! - the operation that issued it must return EIO (`eio-swallowed` if it succeeded,
//!   `eio-wrong-error` for another error). The one exception is a read of the first mount,
//!   which may succeed from a redundant copy (the superblock has two);
//! - after a failed write or flush the filesystem must have shut down: a `sync` and
//!   creating a file must fail with EIO (`eio-not-read-only`);
//! - the run must not trap and the guest must agree with the model up to the failure (the
//!   usual `trap` / `op-mismatch` problems);
//! - the device is then mounted again, healthy, twice: as the error left it with every
//!   submitted write on the media, and as a power loss right after the error leaves it
//!   (only what was durable). Each must mount, be clean for fsck and show an allowed
//!   state: every sync and fsync acknowledged before the error holds
//!   (`eio-remount-all-*`, `eio-remount-durable-*`: the explorer's usual verdicts).
//!
//! The calls of a run are numbered per kind in the order the device sees them
//! ([`crate::device::Trace::calls`]); the sweep tries those issued by the workload's
//! operations (mount, each operation, unmount), not the explorer's own reads of the live
//! tree. `--io read:N` (or `write:N`, `flush:N`) replays one point with its account.

use crate::device::{CrashWalker, Eio, Event, IoKind, Survivors};
use crate::explore::{Explorer, Violation};
use crate::model::Model;
use crate::oracle::allowed_states;
use crate::rng::Hasher64;
use crate::run::{Log, Run};
use crate::workload::{CaseId, Op, Workload};
use std::time::Instant;

/// ABI code of a call on a filesystem that is no longer mounted (after a failed unmount).
const E_NOT_MOUNTED: i64 = crate::guest::E_NOT_MOUNTED;
const EIO: i64 = 5;

/// Parses `read:N`, `write:N` or `flush:N`.
pub fn parse_point(s: &str) -> Result<Eio, String> {
    let (k, n) = s.split_once(':').ok_or("I/O point is read:N, write:N or flush:N")?;
    let kind = match k {
        "read" => IoKind::Read,
        "write" => IoKind::Write,
        "flush" => IoKind::Flush,
        _ => return Err(format!("unknown I/O kind {k}")),
    };
    Ok(Eio { kind, nth: n.parse().map_err(|_| format!("bad call number {n}"))? })
}

pub fn point_name(e: &Eio) -> String {
    let k = match e.kind {
        IoKind::Read => "read",
        IoKind::Write => "write",
        IoKind::Flush => "flush",
    };
    format!("{k}:{}", e.nth)
}

/// The I/O-error points of a workload: the calls its operations issue in a healthy run,
/// thinned to at most `max` (all with `None`).
pub fn points(run: &Run, max: Option<usize>) -> Vec<Eio> {
    let mut nth = [0u64; 3];
    let mut all = Vec::new();
    for &(kind, at) in &run.trace.calls {
        let k = kind as usize;
        let n = nth[k];
        nth[k] += 1;
        // At event `at` the call starts; it belongs to the operation whose events hold it.
        if run.records.iter().any(|r| r.events.start <= at && at < r.events.end) {
            all.push(Eio { kind, nth: n });
        }
    }
    let Some(m) = max.filter(|&m| all.len() > m) else { return all };
    // Thinned: flushes and reads first (up to a third of the budget each: they are few
    // and each guards a different step), writes fill the rest; evenly spread per kind.
    let of = |k: IoKind| all.iter().copied().filter(|e| e.kind == k).collect::<Vec<_>>();
    let spread = |v: &[Eio], n: usize| -> Vec<Eio> {
        let n = n.min(v.len());
        (0..n).map(|i| v[i * v.len() / n]).collect()
    };
    let (flushes, reads, writes) = (of(IoKind::Flush), of(IoKind::Read), of(IoKind::Write));
    let mut out = spread(&flushes, m / 3);
    out.extend(spread(&reads, m / 3));
    let left = m.saturating_sub(out.len());
    out.extend(spread(&writes, left));
    out.sort_by_key(|e| (e.kind as u8, e.nth));
    out
}

/// After an injected read error failed a top-level operation: the operation changed
/// nothing (invariant 7), or it shut the filesystem down. A read error never shuts down by
/// itself, so unless the operation's change had begun (then `errors_after_change` counts
/// it) or a checkpoint inside it failed, the filesystem is still writable: the live tree
/// must be the model's before the operation (`eio-read-changed-state`), and a `sync` then
/// makes exactly that state durable — recorded as a checkpoint, so that the remounts below
/// must show it (before issue 35, such a sync persisted half an unlink or rename, or a
/// "failed" atomic commit). An error other than EIO after a change is a bug
/// (`error-after-change`). Returns the account's lines.
fn after_failed_read(g: &mut crate::guest::Guest, run: &mut Run, model: &mut Model, eio: &Eio) -> Vec<String> {
    let mut lines = Vec::new();
    let last = run.records.last().map(|r| (r.label.clone(), r.errno));
    let late = g.stats().map(|s| s[crate::guest::stat_index("errors_after_change")]).unwrap_or(0);
    if let Some((label, errno)) = &last {
        if late > 0 && *errno != Some(EIO) {
            run.problems.push((
                "error-after-change".into(),
                format!("`{label}` failed with {errno:?} (not EIO) after its first change ({})", point_name(eio)),
            ));
        }
    }
    let now = 1_800_000_000;
    let a = g.device().trace.events.len();
    let sync = g.sync(now);
    let b = g.device().trace.events.len();
    lines.push(format!("after the failed read: errors_after_change {late}, sync -> {sync:?}"));
    match &sync {
        Ok(()) => {
            let want = model.tree();
            match crate::oracle::live_tree(g, &run.block_cache) {
                Ok(Ok(t)) if t == want => {}
                Ok(Ok(t)) => run.problems.push((
                    "eio-read-changed-state".into(),
                    format!(
                        "`{}` failed on {} without shutting down, and changed the live tree: {}",
                        last.as_ref().map(|l| l.0.as_str()).unwrap_or("?"),
                        point_name(eio),
                        t.diff(&want, 6).join("; ")
                    ),
                )),
                Ok(Err(problem)) => run.problems.push(problem),
                Err(e) => run.problems.push(("live-dump".into(), e.to_string())),
            }
            crate::run::record_sync_after_failure(run, model, a..b, &Ok(0));
        }
        Err(e) if e.errno() == Some(EIO) => {} // shut down: the last durable state holds
        Err(e) => run.problems.push((
            "eio-read-changed-state".into(),
            format!("sync after a failed read ({}) returned {e}", point_name(eio)),
        )),
    }
    lines
}

/// Result of one I/O-error point.
struct PointResult {
    digest: u64,
    problems: Vec<(String, String)>,
}

/// Totals of a sweep.
#[derive(Debug, Clone, Default)]
pub struct SweepSummary {
    pub workloads: u64,
    pub points: u64,
    /// Points the swept workloads have in all (more than `points` when thinned).
    pub points_all: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub violations: Vec<Violation>,
    pub digest: u64,
    pub seconds: f64,
    /// Read points failed, by the kind of operation that issued the read (the first word
    /// of its label: `unlink`, `rename`, ...): how far a sweep reached into each one.
    pub reads_by_op: std::collections::BTreeMap<String, u64>,
}

impl SweepSummary {
    /// `reads failed per operation: create 12, unlink 30, ...`.
    pub fn reads_line(&self) -> String {
        let parts: Vec<String> = self.reads_by_op.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!("reads failed per operation: {}", parts.join(", "))
    }

    pub fn last_line(&self) -> String {
        format!(
            "eio sweep: {} I/O-error points ({} reads, {} writes, {} flushes) in {} workloads: {} violations",
            self.points,
            self.reads,
            self.writes,
            self.flushes,
            self.workloads,
            self.violations.len()
        )
    }
}

impl Explorer {
    /// Runs `w` with the call `eio` failing and checks what the module documentation says.
    fn sweep_point(&self, w: &Workload, eio: Eio, log: &mut Log) -> PointResult {
        let write_like = eio.kind != IoKind::Read;
        let mut probes = Vec::new();
        let run = self.run_hooked(w, Some(eio), true, &mut |g, run, before| {
            let fired = g.device().trace.events.iter().any(|e| matches!(e, Event::Failed { .. }));
            if !fired {
                return;
            }
            if !write_like {
                if let Some(model) = before {
                    probes.extend(after_failed_read(g, run, model, &eio));
                }
                return;
            }
            // Shut down after a failed write: nothing may change any more.
            let now = 1_800_000_000;
            let sync = g.sync(now);
            let create = g.op(&Op::Create("/eio-probe".into()), now);
            probes.push(format!("after the error: sync -> {sync:?}, create -> {create:?}"));
            let ro = |r: &crate::guest::GuestResult<i64>| {
                matches!(r.as_ref().err().and_then(|e| e.errno()), Some(EIO) | Some(E_NOT_MOUNTED))
            };
            if !ro(&sync.clone().map(|_| 0)) || !ro(&create) {
                run.problems.push((
                    "eio-not-read-only".into(),
                    format!("after {} failed: sync -> {sync:?}, create -> {create:?}", point_name(&eio)),
                ));
            }
        });
        log.line(|| format!("injected EIO at {}", point_name(&eio)));
        log.lines(|| {
            run.records
                .iter()
                .enumerate()
                .map(|(k, r)| format!("  op {k:3} events {:?} {} -> {}", r.events, r.label, r.result))
        });
        log.lines(|| probes);
        let mut problems = run.problems.clone();
        let mut h = Hasher64::new();
        h.u64(run.trace.digest());
        match run.trace.events.iter().position(|e| matches!(e, Event::Failed { .. })) {
            None => problems.push((
                "eio-not-hit".into(),
                format!("{} was not issued again (the run is not deterministic?)", point_name(&eio)),
            )),
            Some(at) => {
                let k = run.records.iter().position(|r| r.events.start <= at && at < r.events.end);
                match k.map(|k| (k, &run.records[k])) {
                    None => problems.push(("eio-outside-op".into(), format!("event {at} is in no operation"))),
                    Some((0, r)) if eio.kind == IoKind::Read && r.ok => {} // a redundant copy served it
                    Some((_, r)) if r.ok => problems.push((
                        "eio-swallowed".into(),
                        format!("`{}` returned success although {} failed under it", r.label, point_name(&eio)),
                    )),
                    Some((_, r)) if r.errno != Some(EIO) => problems.push((
                        "eio-wrong-error".into(),
                        format!("`{}` hit {} and returned {}", r.label, point_name(&eio), r.result),
                    )),
                    Some(_) => {}
                }
            }
        }
        // Healthy remounts: everything submitted on the media, and only what was durable.
        let end = run.trace.events.len();
        let allowed = allowed_states(&run.records, end);
        let mut walker = CrashWalker::new(&run.start, &run.trace);
        walker.advance_to(end);
        let all = walker.image(&Survivors(walker.pending().into_iter().map(|id| (id, 0xFF)).collect()));
        let durable = walker.durable().clone();
        for (name, img) in [("all", all), ("durable", durable)] {
            log.line(|| format!("remount ({name} writes on the media):"));
            let seed = w.dev_seed ^ eio.nth ^ ((eio.kind as u64) << 40);
            let (_, _, hash, bad) = self.check_image(&run, &img, &allowed, end, None, seed, log);
            h.u64(hash);
            if let Some((k, d)) = bad {
                problems.push((format!("eio-remount-{name}-{k}"), d));
            }
        }
        for (k, _) in &problems {
            h.bytes(k.as_bytes());
        }
        PointResult { digest: h.finish(), problems }
    }

    /// Replays one I/O-error point of a workload, returning its account and problems.
    pub fn sweep_replay(&self, w: &Workload, eio: Eio) -> (Vec<String>, Vec<(String, String)>) {
        let mut log = Log::kept(Vec::new());
        let r = self.sweep_point(w, eio, &mut log);
        (log.into_lines(), r.problems)
    }

    /// The I/O-error points of one workload, all of them, without trying any.
    pub fn count_points(&self, w: &Workload) -> usize {
        points(&self.run_hooked(w, None, true, &mut |_, _, _| {}), None).len()
    }

    /// Sweeps the I/O-error points of one workload (at most `max` of them).
    pub fn sweep_workload(&self, case: &CaseId, w: &Workload, max: Option<usize>, sum: &mut SweepSummary) {
        let clean = self.run_hooked(w, None, true, &mut |_, _, _| {});
        let pts = points(&clean, max);
        sum.points_all += if max.is_some() { points(&clean, None).len() } else { pts.len() } as u64;
        // The operation that issues each read of the clean run (calls numbered per kind).
        let read_ops: Vec<String> = clean
            .trace
            .calls
            .iter()
            .filter(|(k, _)| *k == IoKind::Read)
            .map(|&(_, at)| {
                let r = clean.records.iter().find(|r| r.events.start <= at && at < r.events.end);
                r.map(|r| r.label.split_whitespace().next().unwrap_or("?").to_string()).unwrap_or_default()
            })
            .collect();
        for p in pts.iter().filter(|p| p.kind == IoKind::Read) {
            if let Some(op) = read_ops.get(p.nth as usize) {
                *sum.reads_by_op.entry(op.clone()).or_insert(0) += 1;
            }
        }
        let results = self.par_map(pts.len(), |i| self.sweep_point(w, pts[i], &mut Log::off()));
        let mut h = Hasher64::new();
        h.u64(sum.digest);
        for (p, r) in pts.iter().zip(results) {
            h.u64(r.digest);
            sum.points += 1;
            match p.kind {
                IoKind::Read => sum.reads += 1,
                IoKind::Write => sum.writes += 1,
                IoKind::Flush => sum.flushes += 1,
            }
            for (kind, detail) in r.problems {
                sum.violations.push(Violation {
                    case: case.clone(),
                    workload: w.clone(),
                    state: None,
                    kind,
                    detail: format!("[{}] {detail}", point_name(p)),
                });
            }
        }
        sum.workloads += 1;
        sum.digest = h.finish();
    }
}

/// The standard cases of a sweep: every regression workload, `ace` ACE cases spread
/// evenly over the ACE space, and random cases `0..random`.
pub fn standard_cases(ace: u64, random: u64) -> Vec<CaseId> {
    let mut v: Vec<CaseId> = crate::workload::regression_files().into_iter().map(CaseId::File).collect();
    let n = crate::workload::ace_count();
    v.extend((0..ace.min(n)).map(|i| CaseId::Ace(i * n / ace.min(n).max(1))));
    v.extend((0..random).map(CaseId::Random));
    v
}

/// Sweeps every case in turn, telling `on_violation` of each violation as it is found.
/// With `progress`, a line per workload goes to stderr.
pub fn sweep(
    ex: &Explorer,
    cases: &[CaseId],
    max: Option<usize>,
    progress: bool,
    on_violation: &mut dyn FnMut(&Violation),
) -> SweepSummary {
    let start = Instant::now();
    let mut sum = SweepSummary::default();
    for case in cases {
        let w = match crate::workload::workload(case, ex.opts.seed) {
            Ok(w) => w,
            Err(e) => {
                let v = Violation {
                    case: case.clone(),
                    workload: Workload::parse("?", "", 0).expect("empty workload"),
                    state: None,
                    kind: "workload".into(),
                    detail: e,
                };
                on_violation(&v);
                sum.violations.push(v);
                continue;
            }
        };
        let (before, points, all, t) = (sum.violations.len(), sum.points, sum.points_all, Instant::now());
        ex.sweep_workload(case, &w, max, &mut sum);
        for v in &sum.violations[before..] {
            on_violation(v);
        }
        if progress {
            eprintln!(
                "eio-sweep: {case}: {} of {} points, {} violations, {:.1} s ({:.0} s in all)",
                sum.points - points,
                sum.points_all - all,
                sum.violations.len() - before,
                t.elapsed().as_secs_f64(),
                start.elapsed().as_secs_f64()
            );
        }
    }
    sum.seconds = start.elapsed().as_secs_f64();
    sum
}
