//! Device fault models (`rollfs-sim explore --device MODEL`): flash that lies.
//!
//! The crash explorer's device is honest (docs/INVARIANTS.md, "The crash model"). This
//! module owns the other devices: each [`DeviceModel`] turns one honest run of a workload
//! into *fault states* ([`Fault`]: an image the lying device leaves, and for the read
//! models one read that misbehaves while recovering it), recovers each in a guest (mount,
//! fsck, the plain dump that reads every file through the core's read path) and sorts the
//! result into an [`Outcome`]: the honest promise kept, a loss the filesystem detected
//! (mount refused, fsck reported, a read failed with EIO) or did not (an older state), or
//! a violation of what rollfs still promises on such a device (docs/INVARIANTS.md, "Lying
//! devices"): wrong bytes, or a trap.
//!
//! The wrong-bytes oracle is [`BlockHistory`]: every 4 KiB block any regular file of the
//! run held at each file offset (replayed on a model of the workload's operations). A
//! recovered file block that is neither zeros (a hole) nor such a block at its offset is
//! bytes the file was never given.

use crate::device::{BlockRef, CrashWalker, Eio, Image, IoKind, SimDevice, BLOCK_SIZE};
use crate::explore::{Explorer, Violation, NOW_BASE};
use crate::guest::GuestError;
use crate::model::{Tree, KIND_FILE};
use crate::oracle::{allowed_states, guest_err, per_file_verdict, window, window_has_fsync};
use crate::rng::{block_hash, Hasher64, Rng};
use crate::run::Run;
use crate::workload::{CaseId, Workload};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// A device the explorer runs rollfs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceModel {
    /// The crash model of docs/INVARIANTS.md (the explorer's usual device).
    Honest,
    /// Flushes (and FUA) are acknowledged but the volatile cache keeps what it holds: at a
    /// crash, any write since the second-to-last flush may be lost, in any combination.
    FlushIgnored,
    /// FUA writes are acknowledged as on the media but sit in the volatile cache until the
    /// next flush (flushes are honoured): at a crash, every FUA write since the last flush
    /// is lost, and the other writes since it are lost all, none or some.
    FuaIgnored,
    /// One acknowledged write never reaches the media (reads return the old contents).
    LostWrite,
    /// One write lands at the neighbouring block instead of its own.
    MisdirectedWrite,
    /// One rewrite of a block erases it and loses the new contents (the block reads 0xFF).
    EraseThenLose,
    /// One bit of one block on the media is flipped (bit rot).
    BitflipPersistent,
    /// One read returns its block with one bit flipped, once; a retry reads it right.
    BitflipTransient,
    /// One read fails with EIO, once; a retry succeeds.
    ReadErrorOnce,
}

impl DeviceModel {
    /// Every lying model, in the order of docs/TESTING.md's table.
    pub const LYING: [DeviceModel; 8] = [
        DeviceModel::FlushIgnored,
        DeviceModel::FuaIgnored,
        DeviceModel::LostWrite,
        DeviceModel::MisdirectedWrite,
        DeviceModel::EraseThenLose,
        DeviceModel::BitflipPersistent,
        DeviceModel::BitflipTransient,
        DeviceModel::ReadErrorOnce,
    ];

    /// The models on which rollfs promises to lose nothing acknowledged (L4).
    pub fn loses_nothing(self) -> bool {
        matches!(self, DeviceModel::Honest | DeviceModel::FuaIgnored | DeviceModel::BitflipTransient)
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceModel::Honest => "honest",
            DeviceModel::FlushIgnored => "flush-ignored",
            DeviceModel::FuaIgnored => "fua-ignored",
            DeviceModel::LostWrite => "lost-write",
            DeviceModel::MisdirectedWrite => "misdirected-write",
            DeviceModel::EraseThenLose => "erase-then-lose",
            DeviceModel::BitflipPersistent => "bitflip-persistent",
            DeviceModel::BitflipTransient => "bitflip-transient",
            DeviceModel::ReadErrorOnce => "read-error-once",
        }
    }
}

impl fmt::Display for DeviceModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DeviceModel {
    type Err = String;
    fn from_str(s: &str) -> Result<DeviceModel, String> {
        std::iter::once(DeviceModel::Honest).chain(DeviceModel::LYING).find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = std::iter::once("honest").chain(DeviceModel::LYING.map(|m| m.name())).collect();
            format!("unknown device model {s} (one of {})", names.join(", "))
        })
    }
}

/// How a fault state came out, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// The honest oracle's verdict holds: nothing acknowledged was lost.
    Intact,
    /// Nothing acknowledged was lost, and fsck reported the damage (a redundant copy, a
    /// block no file needs) or failed on it.
    IntactReported,
    /// Mount refused with an error naming the block.
    MountRefused,
    /// Mount refused with an error that names no block.
    MountRefusedUnnamed,
    /// Acknowledged data lost (mount succeeded), and fsck reported the damage.
    FsckReported,
    /// Acknowledged data not shown (mount succeeded): a read of a file failed with EIO or a
    /// checksum error, or fsck's did and the tree lost data.
    ReadEio,
    /// Everything read succeeded and showed an older state: acknowledged data silently lost.
    Older,
    /// VIOLATION: a file showed bytes it was never given.
    WrongBytes,
    /// VIOLATION: the guest trapped (panic, runaway loop) or its dump was malformed.
    Crash,
}

impl Outcome {
    pub const ALL: [Outcome; 9] = [
        Outcome::Intact,
        Outcome::IntactReported,
        Outcome::MountRefused,
        Outcome::MountRefusedUnnamed,
        Outcome::FsckReported,
        Outcome::ReadEio,
        Outcome::Older,
        Outcome::WrongBytes,
        Outcome::Crash,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Intact => "intact",
            Outcome::IntactReported => "intact, fsck reported",
            Outcome::MountRefused => "mount refused (block named)",
            Outcome::MountRefusedUnnamed => "mount refused (no block named)",
            Outcome::FsckReported => "fsck reported",
            Outcome::ReadEio => "read EIO",
            Outcome::Older => "silently older",
            Outcome::WrongBytes => "WRONG BYTES",
            Outcome::Crash => "CRASH",
        }
    }

    /// What rollfs promises on every device (docs/INVARIANTS.md, "Lying devices") is broken.
    pub fn is_violation(self) -> bool {
        matches!(self, Outcome::WrongBytes | Outcome::Crash)
    }

    /// What rollfs promises on `model` is broken: L1 and L2 everywhere, and on the models
    /// where it loses nothing (L4: `fua-ignored`, `bitflip-transient`) any loss.
    pub fn is_violation_on(self, model: DeviceModel) -> bool {
        self.is_violation() || (model.loses_nothing() && !matches!(self, Outcome::Intact | Outcome::IntactReported))
    }
}

/// A read that misbehaves once during the recovery of a fault state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFault {
    /// Read N (0-based) of the recovery fails with EIO.
    Eio(u64),
    /// Read N returns its block with this bit flipped.
    Flip(u64, u32),
}

/// One fault state: the image the lying device leaves, the crash point of the honest run it
/// stands for (the oracle's allowed states), and a read fault of its recovery.
pub struct Fault {
    /// What the device did, e.g. `lost write #17 (block 530)`.
    pub label: String,
    pub image: Image,
    pub point: usize,
    pub read: Option<ReadFault>,
}

/// Every 4 KiB block (zero-padded) any regular file of a run held at each block index:
/// `(index, block_hash)`, after each record of the run ([`Run::file_blocks`]).
pub struct BlockHistory<'a>(&'a HashSet<(u64, u64)>);

impl<'a> BlockHistory<'a> {
    /// `None` for a run made without [`Options::file_blocks`](crate::explore::Options).
    pub fn of(run: &'a Run) -> Option<BlockHistory<'a>> {
        run.file_blocks.as_ref().map(BlockHistory)
    }

    /// The first block of `tree`'s files that is neither zeros nor a block some file held at
    /// that index, described.
    pub fn foreign_block(&self, tree: &Tree) -> Option<String> {
        let zero = block_hash(&[0u8; BLOCK_SIZE]);
        for (path, e) in tree.entries.iter().filter(|(_, e)| e.kind == KIND_FILE) {
            if let Some((i, _)) = blocks_of(&e.content).find(|&(i, h)| h != zero && !self.0.contains(&(i, h))) {
                return Some(format!(
                    "{path}: block {i} (bytes {}..) was never given to any file at that offset",
                    i * BLOCK_SIZE as u64
                ));
            }
        }
        None
    }
}

/// `(index, block_hash)` of each 4 KiB block of `content`, the last zero-padded.
pub(crate) fn blocks_of(content: &[u8]) -> impl Iterator<Item = (u64, u64)> + '_ {
    content.chunks(BLOCK_SIZE).enumerate().map(|(i, c)| {
        let h = if c.len() == BLOCK_SIZE {
            block_hash(c)
        } else {
            let mut b = [0u8; BLOCK_SIZE];
            b[..c.len()].copy_from_slice(c);
            block_hash(&b)
        };
        (i as u64, h)
    })
}

/// `n` of `v`, evenly spread (all of them when there are fewer).
fn spread<T: Clone>(v: &[T], n: usize) -> Vec<T> {
    let n = n.min(v.len());
    (0..n).map(|i| v[i * v.len() / n].clone()).collect()
}

/// The writes of a run, in issue order, as `(event index, address, block)` (discards are
/// zero writes of the trace).
fn writes_of(run: &Run) -> Vec<(usize, u64, BlockRef)> {
    run.trace
        .events
        .iter()
        .enumerate()
        .filter_map(|(at, e)| match e {
            crate::device::Event::Write { id } => {
                let w = &run.trace.writes[*id as usize];
                Some((at, w.addr, w.data.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The event indexes of a run's flushes, in order.
fn flush_events(run: &Run) -> Vec<usize> {
    run.trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, crate::device::Event::Flush))
        .map(|(at, _)| at)
        .collect()
}

/// Whether each write of [`writes_of`] (same order) was issued with FUA.
fn fua_of(run: &Run) -> Vec<bool> {
    run.trace
        .events
        .iter()
        .filter_map(|e| match e {
            crate::device::Event::Write { id } => Some(run.trace.writes[*id as usize].fua),
            _ => None,
        })
        .collect()
}

/// The start image with `writes` applied in order (a later write of a block wins).
fn apply(start: &Image, writes: impl Iterator<Item = (u64, BlockRef)>) -> Image {
    let last: BTreeMap<u64, BlockRef> = writes.collect();
    start.with_blocks(last)
}

/// fsck's problems, or the outcome of its failure (an I/O error).
type Checked = Result<Vec<String>, (Outcome, String)>;

/// What a recovery gave: the dumped tree and fsck's result, or the outcome that ended it.
type Recovered = Result<(Tree, Checked), (Outcome, String)>;

/// The images the read models fault the reads of, with their crash point and a name: the
/// clean image at the end of the run (`final`), and what a power loss right after an
/// fsync-class operation returned leaves (only what was durable: its recovery rolls the
/// chain forward, and a misread there must not lose the fsync), at most
/// [`READ_IMAGES_MAX`] of those, evenly spread.
fn read_images(run: &Run, final_image: Image) -> Vec<(usize, String, Image)> {
    let end = run.trace.events.len();
    let fsyncs: Vec<(usize, String)> = run
        .records
        .iter()
        .zip(&run.ops)
        .filter(|(r, op)| r.ok && op.as_ref().is_some_and(|(_, target)| target.is_some()))
        .map(|(r, _)| (r.events.end, format!("after `{}`", r.label)))
        .collect();
    let mut out = vec![(end, "final".to_string(), final_image)];
    let mut walker = CrashWalker::new(&run.start, &run.trace);
    for (c, label) in spread(&fsyncs, READ_IMAGES_MAX) {
        walker.advance_to(c);
        out.push((c, label, walker.durable().clone()));
    }
    out
}

/// Power-loss images per workload the read models fault besides the final one.
const READ_IMAGES_MAX: usize = 6;

/// A block of 0xFF: what erased NAND reads as.
fn erased_block() -> BlockRef {
    Arc::new([0xFF; BLOCK_SIZE])
}

/// Totals of one model's sweep.
#[derive(Debug, Clone, Default)]
pub struct DeviceSummary {
    pub workloads: u64,
    pub states: u64,
    pub outcomes: BTreeMap<Outcome, u64>,
    /// The first state of each outcome but intact: `case [fault] detail` (how it showed).
    pub examples: BTreeMap<Outcome, String>,
    pub violations: Vec<Violation>,
    pub digest: u64,
    pub seconds: f64,
}

impl DeviceSummary {
    /// States that lost acknowledged data or refused to show it (every outcome but the
    /// intact ones).
    pub fn lost(&self) -> u64 {
        self.states - self.count(Outcome::Intact) - self.count(Outcome::IntactReported)
    }

    pub fn count(&self, o: Outcome) -> u64 {
        self.outcomes.get(&o).copied().unwrap_or(0)
    }

    /// `lost-write: 120 states in 4 workloads, 31 lost acknowledged data (25.8 %): ...`.
    pub fn line(&self, model: DeviceModel) -> String {
        let parts: Vec<String> = Outcome::ALL
            .iter()
            .filter(|&&o| self.count(o) > 0)
            .map(|&o| format!("{} {}", o.name(), self.count(o)))
            .collect();
        format!(
            "{model}: {} states in {} workloads, {} lost or refused acknowledged data ({:.1} %): {}; {} violations",
            self.states,
            self.workloads,
            self.lost(),
            100.0 * self.lost() as f64 / self.states.max(1) as f64,
            parts.join(", "),
            self.violations.len()
        )
    }
}

impl Explorer {
    /// The fault states `model` makes of an honest run, at most about `budget`.
    pub fn faults(&self, model: DeviceModel, run: &Run, budget: usize) -> Vec<Fault> {
        let end = run.trace.events.len();
        let writes = writes_of(run);
        let all = || writes.iter().map(|(_, a, b)| (*a, b.clone()));
        let mut last_of: BTreeMap<u64, usize> = BTreeMap::new();
        for (i, (_, a, _)) in writes.iter().enumerate() {
            last_of.insert(*a, i);
        }
        // What block `addr` held before write `i` (the start image's, or zeros).
        let before = |i: usize, addr: u64| -> Option<BlockRef> {
            writes[..i].iter().rev().find(|w| w.1 == addr).map(|w| w.2.clone()).or_else(|| run.start.get(addr).cloned())
        };
        let at_end = |label: String, image: Image| Fault { label, image, point: end, read: None };
        // The final image with write `i` replaced by `instead` (`None`: lost).
        let with_write = |i: usize, instead: Option<(u64, BlockRef)>| {
            apply(&run.start, all().take(i).chain(instead).chain(all().skip(i + 1)))
        };
        let mut rng = Rng::derive(&[self.opts.seed, run.workload.dev_seed, model as u64, 0xDE71CE]);
        match model {
            DeviceModel::Honest => Vec::new(),
            DeviceModel::FlushIgnored => {
                let flushes = flush_events(run);
                // Crash right after each operation returned: where the honest device
                // promises most.
                let mut points: Vec<usize> = run.records.iter().map(|r| r.events.end).filter(|&c| c > 0).collect();
                points.dedup();
                let mut out = Vec::new();
                for c in spread(&points, budget.div_ceil(3)) {
                    // The cache lied about the last two flushes before the crash: every write
                    // issued since the third-to-last may be lost.
                    let before_c: Vec<usize> = flushes.iter().copied().filter(|&f| f < c).collect();
                    let from = before_c.len().checked_sub(3).map(|k| before_c[k]).unwrap_or(0);
                    for v in 0..3u32 {
                        let mut keep = |at: usize| at < from || (v > 0 && rng.chance(1, 2));
                        let kept: Vec<(u64, BlockRef)> = writes
                            .iter()
                            .filter(|(at, ..)| *at < c && keep(*at))
                            .map(|(_, a, b)| (*a, b.clone()))
                            .collect();
                        let label = format!(
                            "crash at {c}, writes since event {from} {}",
                            ["all lost", "some lost", "some lost"][v as usize]
                        );
                        out.push(Fault { label, image: apply(&run.start, kept.into_iter()), point: c, read: None });
                    }
                }
                out
            }
            DeviceModel::FuaIgnored => self.fua_ignored_faults(run, &writes, budget, &mut rng),
            DeviceModel::LostWrite => {
                let cands: Vec<usize> = (0..writes.len())
                    .filter(|&i| last_of[&writes[i].1] == i && before(i, writes[i].1).as_deref() != Some(&*writes[i].2))
                    .collect();
                spread(&cands, budget)
                    .into_iter()
                    .map(|i| at_end(format!("lost write #{i} (block {})", writes[i].1), with_write(i, None)))
                    .collect()
            }
            DeviceModel::MisdirectedWrite => {
                let n = run.start.block_count();
                let to = |a: u64| if a + 1 < n { a + 1 } else { a - 1 };
                // Effective: the write was its block's last, or its neighbour is not written after it.
                let cands: Vec<usize> = (0..writes.len())
                    .filter(|&i| last_of[&writes[i].1] == i || last_of.get(&to(writes[i].1)).is_none_or(|&l| l < i))
                    .collect();
                spread(&cands, budget)
                    .into_iter()
                    .map(|i| {
                        let (a, b) = (writes[i].1, writes[i].2.clone());
                        at_end(format!("write #{i} for block {a} landed at {}", to(a)), with_write(i, Some((to(a), b))))
                    })
                    .collect()
            }
            DeviceModel::EraseThenLose => {
                let cands: Vec<usize> = (0..writes.len())
                    .filter(|&i| last_of[&writes[i].1] == i && before(i, writes[i].1).is_some())
                    .collect();
                spread(&cands, budget)
                    .into_iter()
                    .map(|i| {
                        let a = writes[i].1;
                        let label = format!("rewrite #{i} of block {a} erased, new contents lost");
                        at_end(label, with_write(i, Some((a, erased_block()))))
                    })
                    .collect()
            }
            DeviceModel::BitflipPersistent | DeviceModel::BitflipTransient | DeviceModel::ReadErrorOnce => {
                let images = read_images(run, apply(&run.start, all()));
                let per_image = budget.div_ceil(images.len());
                let mut out = Vec::new();
                for (point, at, image) in images {
                    out.extend(self.read_faults(model, point, &at, &image, per_image, &mut rng));
                }
                out
            }
        }
    }

    /// `fua-ignored`: a crash right after each operation returned: the writes issued since
    /// the last flush that were FUA are lost (a header made durable by FUA
    /// alone, as rollfs's checkpoint was before), and the others are lost all, none, or at
    /// random (what an honest device may do with them too).
    fn fua_ignored_faults(
        &self,
        run: &Run,
        writes: &[(usize, u64, BlockRef)],
        budget: usize,
        rng: &mut Rng,
    ) -> Vec<Fault> {
        let fua = fua_of(run);
        debug_assert_eq!(fua.len(), writes.len());
        let flushes = flush_events(run);
        let last_flush_before = |c: usize| flushes.iter().rev().find(|&&f| f < c).copied().unwrap_or(0);
        // Every operation's end, whether or not it left writes after the last flush: the
        // same states before and after a change to what the core flushes.
        let mut points: Vec<usize> = run.records.iter().map(|r| r.events.end).filter(|&c| c > 0).collect();
        points.dedup();
        let mut out = Vec::new();
        for c in spread(&points, budget.div_ceil(3)) {
            let f = last_flush_before(c);
            for v in 0..3u32 {
                let kept: Vec<(u64, BlockRef)> = writes
                    .iter()
                    .zip(&fua)
                    .filter(|((at, ..), &is_fua)| {
                        *at < c && (*at < f || (!is_fua && (v == 1 || (v == 2 && rng.chance(1, 2)))))
                    })
                    .map(|((_, a, b), _)| (*a, b.clone()))
                    .collect();
                let label = format!(
                    "crash at {c}: FUA writes since the flush at event {f} lost, the other writes {}",
                    ["lost", "kept", "some lost"][v as usize]
                );
                out.push(Fault { label, image: apply(&run.start, kept.into_iter()), point: c, read: None });
            }
        }
        out
    }

    /// The faults of a read model on one image (`at`: where the run left it): the blocks a
    /// healthy recovery of it reads flipped (persistent), or its reads misbehaving once.
    fn read_faults(
        &self,
        model: DeviceModel,
        point: usize,
        at: &str,
        image: &Image,
        budget: usize,
        rng: &mut Rng,
    ) -> Vec<Fault> {
        let mut dev = SimDevice::new(image.clone(), 0);
        dev.record();
        let Some(dev) = self.recover(dev).1 else { return Vec::new() };
        let reads = dev.counts.reads;
        let mut addrs: Vec<u64> = Vec::new();
        for (a, _) in dev.recording.map(|r| r.inputs).unwrap_or_default() {
            if !addrs.contains(&a) {
                addrs.push(a);
            }
        }
        let bits = (BLOCK_SIZE * 8) as u64;
        if model == DeviceModel::BitflipPersistent {
            return spread(&addrs, budget)
                .into_iter()
                .filter_map(|a| {
                    let mut b = *image.get(a)?.clone();
                    let bit = rng.below(bits) as usize;
                    b[bit / 8] ^= 1 << (bit % 8);
                    let label = format!("{at}: bit {bit} of block {a} flipped");
                    Some(Fault { label, image: image.with_blocks([(a, Arc::new(b))]), point, read: None })
                })
                .collect();
        }
        spread(&(0..reads).collect::<Vec<u64>>(), budget)
            .into_iter()
            .map(|n| {
                let (label, read) = if model == DeviceModel::ReadErrorOnce {
                    (format!("{at}: read {n} of the recovery fails once"), ReadFault::Eio(n))
                } else {
                    let bit = rng.below(bits) as u32;
                    (format!("{at}: read {n} of the recovery flips bit {bit} once"), ReadFault::Flip(n, bit))
                };
                Fault { label, image: image.clone(), point, read: Some(read) }
            })
            .collect()
    }

    /// Mounts (recovering), fscks and dumps `dev` in a guest: the tree the dump gives, or the
    /// outcome that ended it first, with the device when the guest did not trap.
    fn recover(&self, dev: SimDevice) -> (Recovered, Option<SimDevice>) {
        let mut g = match self.module.instantiate(dev) {
            Ok(g) => g,
            Err(e) => return (Err((Outcome::Crash, guest_err(&e))), None),
        };
        let failed = |what: &str, e: GuestError, eio: Outcome| match e {
            GuestError::Trap(_) => (Outcome::Crash, format!("{what}: {}", guest_err(&e))),
            GuestError::Errno(..) => (eio, format!("{what}: {}", guest_err(&e))),
        };
        // Recovery runs later than anything the workload did.
        if let Err(e) = g.mount(false, NOW_BASE + 1_000_000) {
            let named = matches!(&e, GuestError::Errno(_, m) if names_block(m));
            let o = if named { Outcome::MountRefused } else { Outcome::MountRefusedUnnamed };
            let trapped = matches!(e, GuestError::Trap(_));
            return (Err(failed("mount", e, o)), (!trapped).then(|| g.into_device()));
        }
        // fsck's own I/O error is kept for after the dump: the files are read either way.
        let fsck = match g.fsck() {
            Ok(p) => Ok(p),
            Err(e @ GuestError::Trap(_)) => return (Err(failed("fsck", e, Outcome::Crash)), None),
            Err(e) => Err(failed("fsck", e, Outcome::ReadEio)),
        };
        let r = match g.dump() {
            Ok(d) => Tree::parse_dump(&d).map(|t| (t, fsck)).map_err(|e| (Outcome::Crash, format!("dump-parse: {e}"))),
            Err(e @ GuestError::Trap(_)) => return (Err(failed("dump", e, Outcome::Crash)), None),
            Err(e) => Err(failed("read", e, Outcome::ReadEio)),
        };
        (r, Some(g.into_device()))
    }

    /// Recovers one fault state and sorts it (module documentation).
    pub fn judge(&self, run: &Run, history: &BlockHistory, fault: &Fault) -> (Outcome, String) {
        let mut dev = SimDevice::new(fault.image.clone(), run.workload.dev_seed);
        match fault.read {
            Some(ReadFault::Eio(n)) => dev.eio = Some(Eio { kind: IoKind::Read, nth: n }),
            Some(ReadFault::Flip(n, bit)) => dev.flip_read = Some((n, bit)),
            None => {}
        }
        let (tree, fsck) = match self.recover(dev).0 {
            Ok(x) => x,
            Err(x) => return x,
        };
        // Wrong bytes first: fsck reporting damage does not excuse a read that returns them.
        if let Some(d) = history.foreign_block(&tree) {
            return (Outcome::WrongBytes, d);
        }
        let allowed = allowed_states(&run.records, fault.point);
        let exact = allowed.iter().any(|&k| run.states[k] == tree);
        let (lo, hi) = window(&run.records, fault.point);
        let verdict =
            (exact || window_has_fsync(run, lo, hi)).then(|| per_file_verdict(run, fault.point, &tree, exact));
        let lost = match verdict {
            Some(None) => None,
            Some(Some((k, d))) => Some(format!("{k}: {d}")),
            None => {
                let closest = allowed.iter().min_by_key(|&&k| tree.distance(&run.states[k])).copied().unwrap_or(0);
                Some(tree.diff(&run.states[closest], 4).join("; "))
            }
        };
        // Whether acknowledged data is lost is the tree's; how the damage showed is fsck's.
        match (lost, fsck) {
            (None, Ok(p)) if p.is_empty() => (Outcome::Intact, String::new()),
            (None, Ok(p)) => (Outcome::IntactReported, p.join("; ")),
            (None, Err((_, d))) => (Outcome::IntactReported, d),
            (Some(_), Ok(p)) if !p.is_empty() => (Outcome::FsckReported, p.join("; ")),
            (Some(_), Err(x)) => x,
            (Some(d), Ok(_)) => (Outcome::Older, d),
        }
    }

    /// Sweeps the fault states `model` makes of one workload into `sum`.
    pub fn device_workload(
        &self,
        model: DeviceModel,
        case: &CaseId,
        w: &Workload,
        budget: usize,
        sum: &mut DeviceSummary,
    ) {
        let run = self.run(w, None);
        let Some(history) = BlockHistory::of(&run) else {
            panic!("the device models need an explorer with Options::file_blocks");
        };
        let faults = self.faults(model, &run, budget);
        let results = self.par_map(faults.len(), |i| self.judge(&run, &history, &faults[i]));
        let mut h = Hasher64::new();
        h.u64(sum.digest);
        h.u64(run.trace.digest());
        for (f, (o, detail)) in faults.iter().zip(results) {
            h.bytes(f.label.as_bytes());
            h.u64(o as u64);
            sum.states += 1;
            *sum.outcomes.entry(o).or_insert(0) += 1;
            if o != Outcome::Intact {
                sum.examples.entry(o).or_insert_with(|| format!("{case} [{}] {detail}", f.label));
            }
            if o.is_violation_on(model) {
                let what = match o {
                    Outcome::Crash => "crash",
                    Outcome::WrongBytes => "wrong-bytes",
                    _ => "lost",
                };
                sum.violations.push(Violation {
                    case: case.clone(),
                    workload: w.clone(),
                    state: None,
                    kind: format!("device-{model}-{what}"),
                    detail: format!("[{}] {detail}", f.label),
                });
            }
        }
        sum.workloads += 1;
        sum.digest = h.finish();
    }
}

/// Whether an error message names a block (`... at block 530 ...`).
fn names_block(m: &str) -> bool {
    m.split("block ").skip(1).any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// Sweeps `model` over `cases` (each case's honest run, its fault states recovered and
/// judged), stopping before a case that would start after `deadline`, telling
/// `on_violation` of each violation as it is found.
pub fn sweep(
    ex: &Explorer,
    model: DeviceModel,
    cases: &[CaseId],
    budget: usize,
    deadline: Option<std::time::Duration>,
    on_violation: &mut dyn FnMut(&Violation),
) -> DeviceSummary {
    let start = std::time::Instant::now();
    let mut sum = DeviceSummary::default();
    for case in cases {
        if deadline.is_some_and(|d| start.elapsed() >= d) {
            break;
        }
        let w = match crate::workload::workload(case, ex.opts.seed) {
            Ok(w) => w,
            Err(e) => {
                eprintln!("rollfs-sim: {case}: {e}");
                continue;
            }
        };
        let before = sum.violations.len();
        ex.device_workload(model, case, &w, budget, &mut sum);
        for v in &sum.violations[before..] {
            on_violation(v);
        }
    }
    sum.seconds = start.elapsed().as_secs_f64();
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_round_trip() {
        for m in std::iter::once(DeviceModel::Honest).chain(DeviceModel::LYING) {
            assert_eq!(m.name().parse::<DeviceModel>(), Ok(m));
        }
        assert!("flaky".parse::<DeviceModel>().is_err());
    }

    #[test]
    fn block_names_are_found_in_errors() {
        assert!(names_block("error 117 (corruption at block 530: bad crc)"));
        assert!(!names_block("error 5 (no valid checkpoint)"));
        assert!(!names_block("block size"));
    }
}
