//! Crash-state exploration: run a workload once, derive crash images from its trace,
//! recover each in a fresh guest instance and judge it against the oracle.
//!
//! This module owns the [`Explorer`] (its [`Options`], the formatted images workloads
//! start from, the core's counters summed so far) and its entry points besides running
//! and checking (`crate::run`): the identity of a crash state (so that `replay` can
//! rebuild exactly one: [`StateId`], [`Explorer::replay`], [`Explorer::crash_image`]), a
//! case's result ([`CaseResult`], [`Violation`]), shrinking of failing workloads
//! ([`Explorer::shrink`]) and the cost of a crash state's phases ([`phase_costs`]).
//!
//! Elsewhere: the oracle's verdicts in `crate::oracle`, the memos of a run in
//! `crate::memo`, runs and crash-state checks in `crate::run`, the scheduler of an
//! exploration ([`explore`](crate::schedule::explore), `explore_shard`, `explore_cases`)
//! in `crate::schedule`, its totals ([`Summary`](crate::shard::Summary),
//! [`Events`](crate::shard::Events)) in `crate::shard`.

use crate::device::{CrashWalker, Image, SimDevice};
use crate::guest::{CoreStats, Features, GuestModule};
use crate::model::{DumpBlocks, Tree};
use crate::oracle::guest_err;
use crate::run::Log;
use crate::shard::Events;
use crate::workload::{CaseId, Op, Workload};
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Time given to the guest: the workload's operations run at `NOW_BASE + index` seconds.
pub(crate) const NOW_BASE: i64 = 1_700_000_000;

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
    /// read the same blocks ([`GuestMemo`](crate::memo::GuestMemo)), with the other memos,
    /// and check live ones in a reused instance ([`GuestModule::release`]); off only to
    /// compare (`--no-memo`: every crash image in a fresh instance).
    pub memo: bool,
    /// Check each incremental model state of a run against a rebuild from the whole model
    /// (`crate::states`; slow: O(operations x names), for tests).
    pub verify_states: bool,
    /// Check every [`FsckMemo`](crate::memo::FsckMemo) answer against a live fsck of the
    /// same device: the same problems from the same requests (for tests).
    pub verify_memo: bool,
    /// Cold caches in the workload's run (`--cold`; the guest's `sim_set_cold`): every read
    /// an operation makes comes from the device, so `--eio` and `eio-sweep` reach the reads
    /// after an operation's first change that warm caches always answered (issue 35).
    pub cold: bool,
    /// Keep every block each file of a run held ([`Run::file_blocks`](crate::run::Run)):
    /// the device models' wrong-bytes oracle (`--device`; off otherwise: it hashes every
    /// changed file after each operation).
    pub file_blocks: bool,
    /// Namespace records for every workload's device: `Some(true)` with (`--nsrec`, as if
    /// each said `@nsrec`), `Some(false)` without (`--no-nsrec`, as if each said
    /// `@nonsrec`); `None`: as each workload says, [`NSREC_DEFAULT`] where it says nothing.
    pub nsrec: Option<bool>,
    /// Data beside its chain for every workload's device: `Some(true)` with (`--mixed`),
    /// `Some(false)` without (`--no-mixed`, as if each said `@nomixed`); `None`: as each
    /// workload says, [`MIXED_DEFAULT`] where it says nothing.
    pub mixed: Option<bool>,
}

/// Whether a workload that says neither `@nsrec` nor `@nonsrec` runs on an image with
/// namespace records: as `rollfs mkfs` makes images by default (`mkfs_defaults`).
pub const NSREC_DEFAULT: bool = true;

/// Whether a workload that says neither `@mixed` nor `@nomixed` runs on an image with data
/// beside its chain: as `rollfs mkfs` makes images by default.
pub const MIXED_DEFAULT: bool = true;

impl Options {
    /// What the image formatted once at the start (the explorer's `base`) has: the
    /// `--[no-]nsrec` / `--[no-]mixed` choices, else mkfs's defaults.
    fn base_features(&self) -> Features {
        Features { nsrec: self.nsrec.unwrap_or(NSREC_DEFAULT), mixed: self.mixed.unwrap_or(MIXED_DEFAULT) }
    }
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
            file_blocks: false,
            nsrec: None,
            mixed: None,
        }
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

/// Results of exploring one case.
#[derive(Debug, Clone, Default)]
pub struct CaseResult {
    pub states: u64,
    pub digest: u64,
    pub violations: Vec<Violation>,
}

/// The mount entropy of an `@earlier-life` workload's earlier use (the run proper mounts
/// with the guest's default, 0): two uses of one image on two boots draw different values.
const EARLIER_LIFE_NONCE: u64 = 0xEA41_1E57;

/// The most `@earlier-life` start images kept (each a whole device image).
pub const EARLIER_LIFE_CACHED_MAX: usize = 16;

/// A base image's device: (blocks, segment blocks, formatted at this many blocks with room
/// to grow to the device: `@device ... grow-from`, 0 for the whole device; `@nsrec`,
/// `@nomixed`).
type BaseKey = (u64, u32, u64, Features);

pub struct Explorer {
    pub module: Arc<GuestModule>,
    pub opts: Options,
    pub(crate) base: Image,
    /// Freshly formatted images of other geometries (`@device`), made on first use.
    bases: Mutex<std::collections::HashMap<BaseKey, Result<Image, String>>>,
    /// `@earlier-life` start images, per workload text (see [`Explorer::earlier_life`]), at
    /// most [`EARLIER_LIFE_CACHED_MAX`]: a workload's runs (crash states, EIO runs, replays)
    /// come close together, and a long exploration meets thousands of such workloads.
    earlier: Mutex<std::collections::HashMap<String, Result<Image, String>>>,
    /// The smallest device mkfs accepts, per segment size (found by formatting).
    smallest: Mutex<std::collections::HashMap<u32, Result<u64, String>>>,
    /// The core's counters summed over every workload run and every recovery mount.
    events: Mutex<Events>,
    /// Crash images a live guest checked, and those answered by replaying an earlier
    /// guest session of their run ([`GuestMemo`](crate::memo::GuestMemo)).
    pub guest_runs: AtomicU64,
    pub replayed: AtomicU64,
    /// fscks of live guests answered from the run's [`FsckMemo`](crate::memo::FsckMemo).
    pub fsck_replayed: AtomicU64,
    /// Replayed sessions' trees taken from the session ([`Explorer::dump_tree`]).
    pub trees_reused: AtomicU64,
    /// Live guests' trees taken from an earlier live dump of the same bytes
    /// ([`DumpMemo`](crate::memo::DumpMemo)).
    pub dumps_reused: AtomicU64,
    /// Tree verdicts answered from the run's [`Run::verdicts`](crate::run::Run::verdicts).
    pub verdicts_reused: AtomicU64,
    /// Test hook: the crash-state check with this index (counted over the explorer's
    /// life, from 1) panics, as a harness bug would ([`Explorer::panic_at_check`]).
    pub(crate) check_panic_at: AtomicU64,
    pub(crate) checks_started: AtomicU64,
}

impl Explorer {
    /// Formats a fresh image once; every workload starts from it.
    pub fn new(module: Arc<GuestModule>, opts: Options) -> Result<Explorer, String> {
        let mut dev = SimDevice::new(Image::blank(opts.image_blocks), opts.seed);
        dev.completion = crate::device::Completion::Immediate;
        let mut g = module.instantiate(dev).map_err(|e| guest_err(&e))?;
        g.format(opts.segment_blocks, NOW_BASE, 0, opts.base_features()).map_err(|e| format!("format failed: {e}"))?;
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
            earlier: Default::default(),
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
    /// `grow_from` not 0: formatted at that many blocks with room to grow to `blocks`
    /// (`mkfs --max-size`: an image file made small and extended since).
    fn format_image(
        module: &GuestModule,
        blocks: u64,
        segment_blocks: u32,
        seed: u64,
        grow_from: u64,
        features: Features,
    ) -> Result<Image, String> {
        let mut dev = SimDevice::new(Image::blank(blocks), seed);
        dev.completion = crate::device::Completion::Immediate;
        let mut g = module.instantiate(dev).map_err(|e| guest_err(&e))?;
        g.format(segment_blocks, NOW_BASE, grow_from, features).map_err(|e| format!("format failed: {e}"))?;
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
                let ok = |n: u64| {
                    Self::format_image(&self.module, n, segment_blocks, 0, 0, Features { nsrec: false, mixed: true })
                        .is_ok()
                };
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

    /// The image a workload starts from: the explorer's, or one of its `@device` geometry;
    /// under `@earlier-life`, that image flashed over an earlier use of it.
    pub fn base_for(&self, w: &Workload) -> Result<Image, String> {
        let image = self.formatted_for(w)?;
        if !w.earlier_life {
            return Ok(image);
        }
        let mut m = self.earlier.lock().unwrap();
        let key = w.to_text();
        if !m.contains_key(&key) && m.len() >= EARLIER_LIFE_CACHED_MAX {
            // Bounded: a dropped image is made again if its workload comes back.
            m.clear();
        }
        m.entry(key).or_insert_with(|| self.earlier_life(w, &image)).clone()
    }

    /// How many `@earlier-life` start images are cached (at most [`EARLIER_LIFE_CACHED_MAX`]).
    pub fn earlier_life_cached(&self) -> usize {
        self.earlier.lock().unwrap().len()
    }

    /// `@earlier-life`: the device after an earlier use of `image` (the workload run to its
    /// end with other data and other mount entropy, every write reaching the media) and a
    /// flash of `image` over it that writes the blocks the image file has (mkfs wrote) and
    /// keeps the earlier use's everywhere else: what bmaptool leaves, or a full flash of
    /// an image smaller than the size the earlier use grew to. Same UUID, same checkpoint
    /// history: only the mount's version jump tells the two uses' chains apart.
    fn earlier_life(&self, w: &Workload, image: &Image) -> Result<Image, String> {
        let mut dev = SimDevice::new(image.clone(), w.dev_seed);
        dev.completion = crate::device::Completion::Immediate;
        let mut g = self.module.instantiate(dev).map_err(|e| guest_err(&e))?;
        g.set_mount_nonce(EARLIER_LIFE_NONCE).map_err(|e| guest_err(&e))?;
        g.mount(false, NOW_BASE).map_err(|e| format!("earlier life: mount: {e}"))?;
        for (i, op) in w.earlier_life_ops().iter().enumerate() {
            // A failed operation is part of that use; a trap is a bug of the core's.
            if let Err(e @ crate::guest::GuestError::Trap(_)) = g.op(op, NOW_BASE + 1 + i as i64) {
                return Err(format!("earlier life: {op}: {e}"));
            }
        }
        let used = g.into_device().final_image();
        let flashed = (0..image.block_count()).filter_map(|a| image.get(a).map(|b| (a, b.clone())));
        Ok(used.with_blocks(flashed).flatten())
    }

    /// Whether `w`'s device has namespace records: `--nsrec` / `--no-nsrec` for every
    /// workload, else the workload's `@nsrec` / `@nonsrec`, else [`NSREC_DEFAULT`].
    pub fn nsrec_for(&self, w: &Workload) -> bool {
        self.opts.nsrec.or(w.nsrec).unwrap_or(NSREC_DEFAULT)
    }

    /// Whether `w`'s device has data beside its chain: `--mixed` / `--no-mixed` for every
    /// workload, else the workload's `@mixed` / `@nomixed`, else [`MIXED_DEFAULT`].
    pub fn mixed_for(&self, w: &Workload) -> bool {
        self.opts.mixed.or(w.mixed).unwrap_or(MIXED_DEFAULT)
    }

    /// What `w`'s device is formatted with.
    pub fn features_for(&self, w: &Workload) -> Features {
        Features { nsrec: self.nsrec_for(w), mixed: self.mixed_for(w) }
    }

    /// The freshly formatted image a workload's device starts as (before `@earlier-life`).
    fn formatted_for(&self, w: &Workload) -> Result<Image, String> {
        let g = self.geometry_for(w)?;
        let grow_from = w.device.map_or(0, |d| d.grow_from);
        let features = self.features_for(w);
        if g == (self.opts.image_blocks, self.opts.segment_blocks)
            && grow_from == 0
            && features == self.opts.base_features()
        {
            return Ok(self.base.clone());
        }
        let mut m = self.bases.lock().unwrap();
        m.entry((g.0, g.1, grow_from, features))
            .or_insert_with(|| Self::format_image(&self.module, g.0, g.1, self.opts.seed, grow_from, features))
            .clone()
    }

    /// The core's counters summed so far (see [`Events`]).
    pub fn events(&self) -> Events {
        *self.events.lock().unwrap()
    }

    pub(crate) fn add_events(&self, s: &CoreStats, recovery: bool) {
        let mut e = self.events.lock().unwrap();
        let t = if recovery { &mut e.recoveries } else { &mut e.runs };
        for (a, b) in t.iter_mut().zip(s) {
            *a += b;
        }
    }

    pub fn base_image(&self) -> &Image {
        &self.base
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_id_round_trip() {
        for s in ["3:1", "e10:0", "7:2/4:1", "5:0@3", "e5:1@12"] {
            assert_eq!(s.parse::<StateId>().unwrap().to_string(), s);
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
