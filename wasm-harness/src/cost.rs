//! `rollfs-sim cost`: what an operation costs the device, measured on the simulated device
//! (deterministic: same build and arguments, same figures), with an estimate of its time
//! under a simple latency model.
//!
//! Counts come from two sides: the core's own statistics (data, node and other blocks
//! written: `Stats` through `sim_stats`) and the device trace (flushes including
//! PREFLUSH, FUA writes, `wait_writes` calls, reads). Reads exclude those of the ABI's
//! path resolution (every guest call looks its path up from the root, reading directory
//! blocks a kernel's dentry cache would not): they are measured with a probe call on the
//! same path just before each operation. The simulated time replays each operation's
//! trace through [`Latency`]:
//!
//! - reads are synchronous: `read_us` each;
//! - writes are queued: at most `queue_depth` are in service at once, each for `write_us`
//!   (a FUA write for `write_us + flush_us`); submitting costs nothing;
//! - `wait_writes` returns when every submitted write has completed;
//! - a flush (also the PREFLUSH of a write) takes `flush_us` and, as in the crash model,
//!   does not wait for writes still in flight;
//! - discards and the filesystem's own CPU time are free.
//!
//! So the time of a safe commit is about `ceil(blocks / queue_depth) * write_us +
//! flush_us`, and of a commit that skips the writeback wait (`mutant-atomic-no-wait`)
//! about `flush_us`: the difference is the price of never losing a commit that returned.

use crate::device::{Event, IoCounts, SimDevice};
use crate::explore::{Explorer, Options};
use crate::guest::{Guest, GuestModule};
use crate::workload::Op;
use std::sync::Arc;

/// The device latency model (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    pub write_us: f64,
    pub flush_us: f64,
    pub read_us: f64,
    pub queue_depth: usize,
}

impl Default for Latency {
    /// A flash device with a volatile write cache: 100 us per 4 KiB write, 1 ms per cache
    /// flush, 100 us per read, 32 writes in service at once.
    fn default() -> Latency {
        Latency { write_us: 100.0, flush_us: 1000.0, read_us: 100.0, queue_depth: 32 }
    }
}

/// Simulated device time of a stretch of trace: `(total, time spent in wait_writes)` in
/// microseconds. Writes still in flight at the end are not waited for.
pub fn simulated_us(events: &[Event], trace: &crate::device::Trace, lat: &Latency) -> (f64, f64) {
    let mut now = 0.0f64;
    let mut waited = 0.0f64;
    // Completion time of each write in service or queued (the device serves them in
    // submission order, `queue_depth` at a time).
    let mut slots: Vec<f64> = Vec::new();
    let mut last_done = 0.0f64;
    for e in events {
        match e {
            Event::Read { .. } => now += lat.read_us,
            Event::Write { id } => {
                let fua = trace.writes.get(*id as usize).is_some_and(|w| w.fua);
                let service = lat.write_us + if fua { lat.flush_us } else { 0.0 };
                slots.retain(|&t| t > now);
                let start = if slots.len() < lat.queue_depth.max(1) {
                    now
                } else {
                    let (i, t) =
                        slots.iter().enumerate().fold((0, f64::MAX), |a, (i, &t)| if t < a.1 { (i, t) } else { a });
                    slots.swap_remove(i);
                    t
                };
                let done = start + service;
                slots.push(done);
                last_done = last_done.max(done);
            }
            Event::WaitWrites => {
                let until = last_done.max(now);
                waited += until - now;
                now = until;
                slots.clear();
            }
            Event::Flush => now += lat.flush_us,
            Event::Complete { .. }
            | Event::Discard { .. }
            | Event::Failed { .. }
            | Event::Mark
            | Event::FlushStart { .. }
            | Event::FlushDone { .. } => {}
        }
    }
    (now, waited)
}

/// The cost of one measured operation (or the mean over many).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    pub data: f64,
    pub node: f64,
    /// Checkpoint packs, NAT/SIT/SSA blocks (everything but data and node blocks).
    pub other: f64,
    pub fua: f64,
    pub flushes: f64,
    pub waits: f64,
    pub reads: f64,
    pub checkpoints: f64,
    pub sim_us: f64,
    pub wait_us: f64,
}

impl Cost {
    fn add(&mut self, o: &Cost) {
        self.data += o.data;
        self.node += o.node;
        self.other += o.other;
        self.fua += o.fua;
        self.flushes += o.flushes;
        self.waits += o.waits;
        self.reads += o.reads;
        self.checkpoints += o.checkpoints;
        self.sim_us += o.sim_us;
        self.wait_us += o.wait_us;
    }

    fn scaled(&self, k: f64) -> Cost {
        Cost {
            data: self.data * k,
            node: self.node * k,
            other: self.other * k,
            fua: self.fua * k,
            flushes: self.flushes * k,
            waits: self.waits * k,
            reads: self.reads * k,
            checkpoints: self.checkpoints * k,
            sim_us: self.sim_us * k,
            wait_us: self.wait_us * k,
        }
    }
}

/// Mean and median (by simulated time) of a scenario's measured operations.
#[derive(Debug, Clone)]
pub struct Measured {
    pub name: String,
    pub ops: u64,
    pub mean: Cost,
    pub median: Cost,
}

/// What `rollfs-sim cost` runs.
#[derive(Debug, Clone)]
pub struct CostOptions {
    pub image_blocks: u64,
    pub segment_blocks: u32,
    /// Measured operations per fsync scenario (after `warmup` unmeasured ones).
    pub ops: u64,
    pub warmup: u64,
    /// Pages per SQLite-like commit, one scenario each.
    pub pages: Vec<u32>,
    /// Pages of the database file the commits write into.
    pub db_pages: u32,
    pub latency: Latency,
}

impl Default for CostOptions {
    fn default() -> CostOptions {
        CostOptions {
            image_blocks: 16384,
            segment_blocks: 512,
            ops: 2000,
            warmup: 200,
            pages: vec![4, 16],
            db_pages: 256,
            latency: Latency::default(),
        }
    }
}

const NOW: i64 = 1_700_000_000;

/// A steady-state scenario: setup operations, then operation groups `i = 0, 1, ...`, each
/// measured as one unit.
struct Scenario {
    name: String,
    setup: Vec<Op>,
    unit: Box<dyn Fn(u64) -> Vec<Op>>,
}

fn lcg(i: u64) -> u64 {
    i.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) >> 33
}

fn write(path: &str, block: u64, blocks: u32, pattern: u64) -> Op {
    Op::Write { path: path.into(), offset: block * 4096, len: blocks * 4096, pattern: pattern as u32 }
}

fn fsync_scenarios() -> Vec<Scenario> {
    let file_blocks = 256u64;
    vec![
        Scenario {
            name: "4 KiB overwrite + fsync".into(),
            setup: vec![Op::Create("/f".into()), write("/f", 0, file_blocks as u32, 1), Op::Sync],
            unit: Box::new(move |i| vec![write("/f", lcg(i) % file_blocks, 1, i + 2), Op::Fsync("/f".into())]),
        },
        Scenario {
            name: "4 KiB overwrite + fdatasync".into(),
            setup: vec![Op::Create("/f".into()), write("/f", 0, file_blocks as u32, 1), Op::Sync],
            unit: Box::new(move |i| vec![write("/f", lcg(i) % file_blocks, 1, i + 2), Op::Fdatasync("/f".into())]),
        },
        Scenario {
            name: "4 KiB append + fsync".into(),
            // A new file every 512 appends keeps every file's addresses in its inode; the
            // file before the previous one is deleted then, so the device never fills.
            setup: vec![Op::Mkdir("/a".into()), Op::Sync],
            unit: Box::new(|i| {
                let k = i / 512;
                let p = format!("/a/f{k}");
                let mut v = Vec::new();
                if i % 512 == 0 {
                    if k >= 2 {
                        v.push(Op::Unlink(format!("/a/f{}", k - 2)));
                    }
                    v.push(Op::Create(p.clone()));
                    v.push(Op::Fsync(p.clone()));
                }
                v.push(write(&p, i % 512, 1, i + 2));
                v.push(Op::Fsync(p));
                v
            }),
        },
    ]
}

/// A SQLite-like transaction in batch-atomic-write mode: the header page and `pages - 1`
/// other pages of the database, staged and committed at once.
fn commit_scenario(o: &CostOptions, pages: u32, label: &str) -> Scenario {
    let db = o.db_pages as u64;
    Scenario {
        name: format!("SQLite-like commit, {pages} pages{label}"),
        setup: vec![Op::Create("/db".into()), write("/db", 0, o.db_pages, 1), Op::Sync],
        unit: Box::new(move |i| {
            let mut v = vec![Op::AtomicStart("/db".into()), write("/db", 0, 1, i + 2)];
            for k in 1..pages as u64 {
                v.push(write("/db", 1 + lcg(i * 64 + k) % (db - 1), 1, i + 2 + k));
            }
            v.push(Op::AtomicCommit("/db".into()));
            v
        }),
    }
}

fn guest_stats(g: &mut Guest) -> Result<crate::guest::CoreStats, String> {
    g.stats().map_err(|e| format!("stats: {e}"))
}

/// Runs one scenario on a freshly formatted image and measures its units.
fn measure(module: &Arc<GuestModule>, o: &CostOptions, s: &Scenario, ops: u64) -> Result<Measured, String> {
    let opts =
        Options { image_blocks: o.image_blocks, segment_blocks: o.segment_blocks, threads: 1, ..Options::default() };
    let ex = Explorer::new(module.clone(), opts)?;
    let mut dev = SimDevice::new(ex.base_image().clone(), 1);
    dev.completion = crate::device::Completion::Immediate;
    // A discard is free in the latency model; an ignoring device records no zero-block
    // writes for it (which would otherwise be counted as writes).
    dev.discard_ignored = true;
    let mut g = module.instantiate(dev).map_err(|e| e.to_string())?;
    g.mount(false, NOW).map_err(|e| format!("mount: {e}"))?;
    let mut t = NOW;
    let mut run = |g: &mut Guest, op: &Op| -> Result<(), String> {
        t += 1;
        g.op(op, t).map(|_| ()).map_err(|e| format!("{}: `{op}`: {e}", s.name))
    };
    for op in &s.setup {
        run(&mut g, op)?;
    }
    let mut costs = Vec::new();
    for i in 0..o.warmup + ops {
        let before = guest_stats(&mut g)?;
        let c0: IoCounts = g.device().counts;
        // The unit's events, less the reads of the ABI's path resolution (each call looks
        // its path up from the root; a kernel's dentry cache would not read anything).
        let mut events: Vec<Event> = Vec::new();
        for op in (s.unit)(i) {
            let skip = match op.paths().first() {
                Some(p) => {
                    let e0 = g.device().trace.events.len();
                    let _ = g.read(p, 0, 0);
                    g.device().trace.events[e0..].iter().filter(|e| matches!(e, Event::Read { .. })).count()
                }
                None => 0,
            };
            let e0 = g.device().trace.events.len();
            run(&mut g, &op)?;
            let mut skipped = 0;
            for e in &g.device().trace.events[e0..] {
                if matches!(e, Event::Read { .. }) && skipped < skip {
                    skipped += 1;
                    continue;
                }
                events.push(e.clone());
            }
        }
        let after = guest_stats(&mut g)?;
        if i < o.warmup {
            continue;
        }
        let dev = g.device();
        let d = |k: usize| (after[k] - before[k]) as f64;
        let (sim_us, wait_us) = simulated_us(&events, &dev.trace, &o.latency);
        costs.push(Cost {
            data: d(1),
            node: d(2),
            other: d(3),
            fua: (dev.counts.fua_writes - c0.fua_writes) as f64,
            flushes: events.iter().filter(|e| matches!(e, Event::Flush)).count() as f64,
            waits: events.iter().filter(|e| matches!(e, Event::WaitWrites)).count() as f64,
            reads: events.iter().filter(|e| matches!(e, Event::Read { .. })).count() as f64,
            checkpoints: d(0),
            sim_us,
            wait_us,
        });
    }
    let mut mean = Cost::default();
    for c in &costs {
        mean.add(c);
    }
    let mean = mean.scaled(1.0 / costs.len().max(1) as f64);
    let mut sorted = costs.clone();
    sorted.sort_by(|a, b| a.sim_us.total_cmp(&b.sim_us));
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or_default();
    Ok(Measured { name: s.name.clone(), ops: costs.len() as u64, mean, median })
}

/// Every scenario: the fsync loops (a), then each commit size with the safe guest and,
/// when given, the guest built with `mutant-atomic-no-wait` (b).
pub fn run(
    module: &Arc<GuestModule>,
    no_wait: Option<&Arc<GuestModule>>,
    o: &CostOptions,
) -> Result<Vec<Measured>, String> {
    let mut out = Vec::new();
    for s in fsync_scenarios() {
        out.push(measure(module, o, &s, o.ops)?);
    }
    // Commits are slower to simulate than single-page fsyncs; a quarter as many suffice.
    let commits = (o.ops / 4).max(1);
    for &p in &o.pages {
        out.push(measure(module, o, &commit_scenario(o, p, " (safe)"), commits)?);
        if let Some(m) = no_wait {
            out.push(measure(m, o, &commit_scenario(o, p, " (no-wait mutant)"), commits)?);
        }
    }
    Ok(out)
}

/// The table `rollfs-sim cost` prints.
pub fn table(o: &CostOptions, rows: &[Measured]) -> Vec<String> {
    let l = &o.latency;
    let mut v = vec![
        format!(
            "device: {} MiB image, {} KiB segments; latency model: write {} us (queue depth {}), FUA write = write + flush, flush {} us, read {} us",
            o.image_blocks * 4 / 1024,
            o.segment_blocks * 4,
            l.write_us,
            l.queue_depth,
            l.flush_us,
            l.read_us
        ),
        format!(
            "per operation, mean over the measured ops after {} warm-up ops (median op's time in brackets)",
            o.warmup
        ),
        format!(
            "{:<44} {:>6} {:>6} {:>6} {:>6} {:>5} {:>5} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9}",
            "operation", "ops", "data", "node", "other", "FUA", "flush", "waits", "reads", "cp/1k", "wait us", "sim us", "(median)"
        ),
    ];
    for r in rows {
        let m = &r.mean;
        v.push(format!(
            "{:<44} {:>6} {:>6.2} {:>6.2} {:>6.2} {:>5.2} {:>5.2} {:>6.2} {:>6.2} {:>6.1} {:>9.1} {:>9.1} {:>9.1}",
            r.name,
            r.ops,
            m.data,
            m.node,
            m.other,
            m.fua,
            m.flushes,
            m.waits,
            m.reads,
            m.checkpoints * 1000.0,
            m.wait_us,
            m.sim_us,
            r.median.sim_us
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Trace, WriteRec};

    fn trace(fua: &[bool]) -> Trace {
        let block = crate::device::zero_block();
        Trace {
            events: Vec::new(),
            writes: fua.iter().map(|&f| WriteRec { addr: 0, data: block.clone(), fua: f }).collect(),
            calls: Vec::new(),
        }
    }

    #[test]
    fn latency_model() {
        let t = trace(&[false, false, false, true]);
        let lat = Latency { write_us: 10.0, flush_us: 100.0, read_us: 1.0, queue_depth: 2 };
        let w = |id| Event::Write { id };
        // Three writes at queue depth 2: the third starts when the first ends.
        let ev = [w(0), w(1), w(2), Event::WaitWrites, Event::Flush];
        assert_eq!(simulated_us(&ev, &t, &lat), (120.0, 20.0));
        // A flush does not wait for writes in flight; a read is synchronous.
        let ev = [Event::Read { addr: 1 }, w(0), w(1), Event::Flush];
        assert_eq!(simulated_us(&ev, &t, &lat), (101.0, 0.0));
        // A FUA write is in service for a write and a flush.
        let ev = [w(3), Event::WaitWrites];
        assert_eq!(simulated_us(&ev, &t, &lat), (110.0, 110.0));
    }

    #[test]
    fn steady_state_fsync_and_commit_costs() {
        let module = GuestModule::default_guest().expect("guest");
        let o = CostOptions { ops: 40, warmup: 10, pages: vec![4], ..CostOptions::default() };
        let rows = run(&module, None, &o).expect("cost run");
        let again = run(&module, None, &o).expect("cost run");
        assert_eq!(format!("{rows:?}"), format!("{again:?}"), "deterministic");
        let fsync = &rows[0].mean;
        assert_eq!(rows[0].name, "4 KiB overwrite + fsync");
        assert_eq!((fsync.data, fsync.node, fsync.other, fsync.flushes, fsync.waits), (1.0, 1.0, 0.0, 1.0, 1.0));
        assert_eq!(fsync.reads, 0.0, "an fsync of a cached file reads nothing");
        let commit = rows.iter().find(|r| r.name.starts_with("SQLite-like commit, 4 pages")).unwrap();
        let c = &commit.mean;
        assert_eq!((c.data, c.node, c.flushes, c.waits), (4.0, 1.0, 1.0, 1.0));
        // Five writes in parallel, waited for, then one flush.
        assert_eq!(commit.median.sim_us, o.latency.write_us + o.latency.flush_us);
    }
}
