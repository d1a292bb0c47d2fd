//! The simulated flash device and the crash model of docs/INVARIANTS.md.
//!
//! This module owns three things:
//! - [`Image`]: an immutable device image, a dense shared base plus small overlays of
//!   shared blocks, so that thousands of crash images share almost all their memory and
//!   deriving one costs a few allocations, never an image copy;
//! - [`SimDevice`]: the device a guest runs against. Every write is *in flight* after
//!   submission and completes later, in an order drawn from the seed; `wait_writes`
//!   completes everything in flight; completed writes sit in the volatile cache until a
//!   flush; a flush makes durable what had completed, never what is in flight; FUA writes
//!   are durable at completion; PREFLUSH flushes before the write. Reads return the most
//!   recently submitted data. Every I/O goes into a [`Trace`]; an EIO can be injected at
//!   a chosen read, write or flush.
//! - [`CrashWalker`]: replays a trace and, at any point, derives the images a power loss
//!   there may leave: the durable writes plus any subset of the volatile and in-flight
//!   writes ([`Survivors`]), optionally with 4 KiB writes torn at 512-byte sectors
//!   ([`tear`], from rollfs-testkit).
//!
//! The walker is separate from the device on purpose: a workload runs once and records
//! its trace; crash images are derived afterwards, so the cost of a crash state is the
//! cost of mounting it, not of re-running the workload. That is also why this is not
//! rollfs-testkit's `CrashDevice` (the same crash model as a live native `BlockDevice`):
//! the guest is wasm, completions follow the seed, and images share memory.

use crate::rng::{block_hash, Hasher64, Rng};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

pub const BLOCK_SIZE: usize = 4096;
/// The sector rule of torn writes is rollfs-testkit's, shared with the native crash
/// device of the core's tests.
pub use rollfs_testkit::crash::{tear, SECTORS_PER_BLOCK, SECTOR_SIZE};
pub type Block = [u8; BLOCK_SIZE];
pub type BlockRef = Arc<Block>;

/// Write flags, with the values of `rollfs_core::WriteFlags` (the ABI passes them through).
pub const FLAG_FUA: u8 = 1;
pub const FLAG_PREFLUSH: u8 = 2;

/// errno returned to the guest for an injected or out-of-range I/O.
pub const EIO: i32 = 5;

/// A deterministic hasher for block-address keys (std's default is randomly seeded; the
/// maps are never iterated in hash order, but a fixed hasher keeps that from mattering).
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);
impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
    }
}
pub type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

pub fn zero_block() -> BlockRef {
    Arc::new([0u8; BLOCK_SIZE])
}

/// An immutable device image. Reads look at `extra` (last entry wins), then `over`, then
/// `base`; absent blocks read as zeros.
#[derive(Clone)]
pub struct Image {
    block_count: u64,
    base: Arc<Vec<Option<BlockRef>>>,
    over: Arc<AddrMap<BlockRef>>,
    extra: Arc<Vec<(u64, BlockRef)>>,
}

impl Image {
    pub fn blank(block_count: u64) -> Image {
        Image {
            block_count,
            base: Arc::new(vec![None; block_count as usize]),
            over: Arc::default(),
            extra: Arc::default(),
        }
    }

    pub fn block_count(&self) -> u64 {
        self.block_count
    }

    /// The whole image as bytes (absent blocks as zeros), e.g. to save it for `rollfs`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.block_count as usize * BLOCK_SIZE];
        for (addr, chunk) in out.chunks_exact_mut(BLOCK_SIZE).enumerate() {
            if let Some(b) = self.get(addr as u64) {
                chunk.copy_from_slice(&b[..]);
            }
        }
        out
    }

    pub fn get(&self, addr: u64) -> Option<&BlockRef> {
        if let Some((_, b)) = self.extra.iter().rev().find(|(a, _)| *a == addr) {
            return Some(b);
        }
        if let Some(b) = self.over.get(&addr) {
            return Some(b);
        }
        self.base.get(addr as usize).and_then(|b| b.as_ref())
    }

    /// Folds `extra` into `over` (so that later durable writes take precedence over it).
    fn settled(&self) -> Image {
        if self.extra.is_empty() {
            return self.clone();
        }
        let mut over = (*self.over).clone();
        for (a, b) in self.extra.iter() {
            over.insert(*a, b.clone());
        }
        Image { block_count: self.block_count, base: self.base.clone(), over: Arc::new(over), extra: Arc::default() }
    }

    /// A copy with every overlay folded into a new dense base (for long-lived images,
    /// e.g. the formatted image every workload starts from).
    pub fn flatten(&self) -> Image {
        let base = (0..self.block_count).map(|a| self.get(a).cloned()).collect();
        Image { block_count: self.block_count, base: Arc::new(base), over: Arc::default(), extra: Arc::default() }
    }

    /// Content digest (zero blocks and absent blocks are equal).
    pub fn digest(&self) -> u64 {
        let mut h = Hasher64::new();
        for a in 0..self.block_count {
            if let Some(b) = self.get(a) {
                if b.iter().any(|&x| x != 0) {
                    h.u64(a);
                    h.u64(block_hash(&b[..]));
                }
            }
        }
        h.finish()
    }

    /// Reads a block into `buf`.
    pub fn read_into(&self, addr: u64, buf: &mut [u8]) {
        match self.get(addr) {
            Some(b) => buf.copy_from_slice(&b[..]),
            None => buf.fill(0),
        }
    }
}

/// What kind of device operation an injected error hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoKind {
    Read,
    Write,
    Flush,
}

/// Fail the `nth` (0-based) operation of `kind` with EIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eio {
    pub kind: IoKind,
    pub nth: u64,
}

/// One recorded device event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Read {
        addr: u64,
    },
    /// A write submitted; its data is `Trace::writes[id]`.
    Write {
        id: u32,
    },
    /// A write completed (reached the volatile cache, or the media if FUA).
    Complete {
        id: u32,
    },
    /// A cache flush (also the PREFLUSH of a write, recorded before the write).
    Flush,
    /// `wait_writes` returned (its completions are the `Complete` events before it).
    WaitWrites,
    /// A discard; recorded as zero-block writes (ids) that complete at once, because a
    /// discarded block may read as zeros or as its old data after power loss.
    Discard {
        addr: u64,
        count: u64,
    },
    /// An injected EIO.
    Failed {
        kind: IoKind,
        addr: u64,
    },
}

impl Event {
    /// Whether the event can change what a power loss leaves (reads and waits cannot).
    pub fn changes_crash_state(&self) -> bool {
        matches!(self, Event::Write { .. } | Event::Complete { .. } | Event::Flush | Event::Discard { .. })
    }
}

#[derive(Debug, Clone)]
pub struct WriteRec {
    pub addr: u64,
    pub data: BlockRef,
    pub fua: bool,
}

/// Everything a device saw, in order.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub events: Vec<Event>,
    pub writes: Vec<WriteRec>,
    /// Every read, write and flush call (a PREFLUSH is a flush call), in order, with the
    /// number of events before it: the `nth` call of a kind is what [`Eio`] `nth` fails.
    pub calls: Vec<(IoKind, usize)>,
}

impl Trace {
    pub fn digest(&self) -> u64 {
        let mut h = Hasher64::new();
        for e in &self.events {
            match e {
                Event::Read { addr } => {
                    h.u64(1);
                    h.u64(*addr)
                }
                Event::Write { id } => {
                    let w = &self.writes[*id as usize];
                    h.u64(2);
                    h.u64(w.addr);
                    h.u64(w.fua as u64);
                    h.u64(block_hash(&w.data[..]));
                }
                Event::Complete { id } => {
                    h.u64(3);
                    h.u64(*id as u64)
                }
                Event::Flush => h.u64(4),
                Event::WaitWrites => h.u64(5),
                Event::Discard { addr, count } => {
                    h.u64(6);
                    h.u64(*addr);
                    h.u64(*count)
                }
                Event::Failed { kind, addr } => {
                    h.u64(7);
                    h.u64(*kind as u64);
                    h.u64(*addr)
                }
            }
        }
        h.finish()
    }

    /// One line per event, for replay diagnostics.
    pub fn describe(&self, range: std::ops::Range<usize>) -> Vec<String> {
        range
            .filter_map(|i| self.events.get(i).map(|e| (i, e)))
            .map(|(i, e)| match e {
                Event::Write { id } => {
                    let w = &self.writes[*id as usize];
                    format!("{i:6}  write #{id} block {}{}", w.addr, if w.fua { " FUA" } else { "" })
                }
                other => format!("{i:6}  {other:?}"),
            })
            .collect()
    }
}

/// When in-flight writes complete on their own (before a `wait_writes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// After every device call, each in-flight write completes with probability 1/`n`,
    /// in a shuffled order.
    Random(u64),
    /// Nothing completes before `wait_writes`, which completes in reverse submission order
    /// (the adversarial order of the "broken dnode chain" scenario, docs/INVARIANTS.md).
    Reverse,
    /// Writes complete at once, in order (an ideal device).
    Immediate,
}

/// I/O counts of a device (for EIO targeting and the statistics of the next issue).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounts {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub fua_writes: u64,
    pub discards: u64,
}

/// The simulated device. See the module documentation for its semantics.
pub struct SimDevice {
    start: Image,
    latest: AddrMap<BlockRef>,
    in_flight: Vec<u32>,
    pub trace: Trace,
    rng: Rng,
    pub completion: Completion,
    /// Discards are recorded but change nothing (a device that ignores TRIM): stale
    /// blocks stay readable, which is what recovery must not trust.
    pub discard_ignored: bool,
    pub eio: Option<Eio>,
    pub counts: IoCounts,
}

impl SimDevice {
    pub fn new(start: Image, seed: u64) -> SimDevice {
        SimDevice {
            start,
            latest: AddrMap::default(),
            in_flight: Vec::new(),
            trace: Trace::default(),
            rng: Rng::new(seed),
            completion: Completion::Random(3),
            discard_ignored: false,
            eio: None,
            counts: IoCounts::default(),
        }
    }

    pub fn block_count(&self) -> u64 {
        self.start.block_count()
    }

    pub fn start_image(&self) -> &Image {
        &self.start
    }

    fn inject(&mut self, kind: IoKind, nth: u64, addr: u64) -> bool {
        self.trace.calls.push((kind, self.trace.events.len()));
        if self.eio == Some(Eio { kind, nth }) {
            self.trace.events.push(Event::Failed { kind, addr });
            true
        } else {
            false
        }
    }

    /// The current (most recently submitted) contents of a block.
    pub fn current(&self, addr: u64) -> Option<&BlockRef> {
        self.latest.get(&addr).or_else(|| self.start.get(addr))
    }

    pub fn read(&mut self, addr: u64, buf: &mut [u8]) -> i32 {
        let nth = self.counts.reads;
        self.counts.reads += 1;
        if self.inject(IoKind::Read, nth, addr) || addr >= self.block_count() {
            return EIO;
        }
        self.trace.events.push(Event::Read { addr });
        match self.current(addr) {
            Some(b) => buf.copy_from_slice(&b[..]),
            None => buf.fill(0),
        }
        self.progress();
        0
    }

    pub fn write(&mut self, addr: u64, data: &[u8], flags: u8) -> i32 {
        let nth = self.counts.writes;
        self.counts.writes += 1;
        if self.inject(IoKind::Write, nth, addr) || addr >= self.block_count() {
            return EIO;
        }
        if flags & FLAG_PREFLUSH != 0 {
            let r = self.flush_inner();
            if r != 0 {
                return r;
            }
        }
        let block: BlockRef = Arc::new(data.try_into().expect("4 KiB block"));
        let fua = flags & FLAG_FUA != 0;
        if fua {
            self.counts.fua_writes += 1;
        }
        self.submit(addr, block, fua);
        0
    }

    fn submit(&mut self, addr: u64, block: BlockRef, fua: bool) -> u32 {
        let id = self.trace.writes.len() as u32;
        self.trace.writes.push(WriteRec { addr, data: block.clone(), fua });
        self.trace.events.push(Event::Write { id });
        self.latest.insert(addr, block);
        self.in_flight.push(id);
        self.progress();
        id
    }

    pub fn wait_writes(&mut self) -> i32 {
        let mut ids = std::mem::take(&mut self.in_flight);
        match self.completion {
            Completion::Reverse => ids.reverse(),
            Completion::Immediate => {}
            Completion::Random(_) => self.rng.shuffle(&mut ids),
        }
        for id in ids {
            self.trace.events.push(Event::Complete { id });
        }
        self.trace.events.push(Event::WaitWrites);
        0
    }

    pub fn flush(&mut self) -> i32 {
        let r = self.flush_inner();
        self.progress();
        r
    }

    fn flush_inner(&mut self) -> i32 {
        let nth = self.counts.flushes;
        self.counts.flushes += 1;
        if self.inject(IoKind::Flush, nth, IoErrorBlock::FLUSH) {
            return EIO;
        }
        self.trace.events.push(Event::Flush);
        0
    }

    pub fn discard(&mut self, addr: u64, count: u64) -> i32 {
        if addr.checked_add(count).is_none_or(|end| end > self.block_count()) {
            return EIO;
        }
        self.counts.discards += 1;
        self.trace.events.push(Event::Discard { addr, count });
        if self.discard_ignored {
            return 0;
        }
        let zero = zero_block();
        for a in addr..addr + count {
            // Discarded blocks complete at once into the cache: afterwards they read as
            // zeros, and a power loss may keep either the zeros or the old contents.
            let id = self.trace.writes.len() as u32;
            self.trace.writes.push(WriteRec { addr: a, data: zero.clone(), fua: false });
            self.trace.events.push(Event::Write { id });
            self.trace.events.push(Event::Complete { id });
            self.latest.insert(a, zero.clone());
        }
        0
    }

    /// Lets the device complete some in-flight writes on its own.
    fn progress(&mut self) {
        match self.completion {
            Completion::Reverse => {}
            Completion::Immediate => {
                for id in std::mem::take(&mut self.in_flight) {
                    self.trace.events.push(Event::Complete { id });
                }
            }
            Completion::Random(n) => {
                if self.in_flight.is_empty() {
                    return;
                }
                let mut ids = std::mem::take(&mut self.in_flight);
                self.rng.shuffle(&mut ids);
                for id in ids {
                    if self.rng.chance(1, n) {
                        self.trace.events.push(Event::Complete { id });
                    } else {
                        self.in_flight.push(id);
                    }
                }
                // Keep the in-flight list in submission order so that later shuffles do
                // not depend on the history of earlier ones more than necessary.
                self.in_flight.sort_unstable();
            }
        }
    }

    /// The image as it would be if every submitted write reached the media (what a clean
    /// shutdown with a final wait and flush leaves).
    pub fn final_image(&self) -> Image {
        let mut img = self.start.settled();
        let over = Arc::make_mut(&mut img.over);
        for (a, b) in self.latest.iter() {
            over.insert(*a, b.clone());
        }
        img
    }
}

struct IoErrorBlock;
impl IoErrorBlock {
    const FLUSH: u64 = u64::MAX;
}

/// Which non-durable writes survive a power loss, and how: `(write id, sector mask)`,
/// applied in order (a later entry for the same block wins). Mask bit `i` set = sector `i`
/// has the new data; `0xFF` = the whole block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Survivors(pub Vec<(u32, u8)>);

/// Replays a trace from its start image and derives crash images at any point.
pub struct CrashWalker<'t> {
    trace: &'t Trace,
    durable: Image,
    /// Writes not yet durable, in submission order, and whether each has completed.
    pending: Vec<(u32, bool)>,
    /// Completed, not yet durable writes in completion order (what a flush persists).
    volatile: Vec<u32>,
    pos: usize,
    /// Bumped whenever the durable image changes (part of crash-image identity).
    pub epoch: u64,
}

impl<'t> CrashWalker<'t> {
    pub fn new(start: &Image, trace: &'t Trace) -> CrashWalker<'t> {
        CrashWalker { trace, durable: start.settled(), pending: Vec::new(), volatile: Vec::new(), pos: 0, epoch: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    fn make_durable(&mut self, id: u32) {
        let w = &self.trace.writes[id as usize];
        Arc::make_mut(&mut self.durable.over).insert(w.addr, w.data.clone());
        self.pending.retain(|(p, _)| *p != id);
        self.epoch += 1;
    }

    /// Applies events up to (not including) `point`. Points only move forward.
    pub fn advance_to(&mut self, point: usize) {
        assert!(point >= self.pos, "crash walker cannot go back");
        while self.pos < point.min(self.trace.events.len()) {
            match &self.trace.events[self.pos] {
                Event::Write { id } => self.pending.push((*id, false)),
                Event::Complete { id } => {
                    if self.trace.writes[*id as usize].fua {
                        self.make_durable(*id);
                    } else {
                        if let Some(p) = self.pending.iter_mut().find(|(p, _)| p == id) {
                            p.1 = true;
                        }
                        self.volatile.push(*id);
                    }
                }
                Event::Flush => {
                    for id in std::mem::take(&mut self.volatile) {
                        self.make_durable(id);
                    }
                }
                Event::Read { .. } | Event::WaitWrites | Event::Discard { .. } | Event::Failed { .. } => {}
            }
            self.pos += 1;
        }
    }

    /// The writes a power loss now may or may not keep (submission order).
    pub fn pending(&self) -> Vec<u32> {
        self.pending.iter().map(|(id, _)| *id).collect()
    }

    /// The durable image only (every pending write lost).
    pub fn durable(&self) -> &Image {
        &self.durable
    }

    /// The image a power loss now leaves if exactly `survivors` reach the media.
    pub fn image(&self, survivors: &Survivors) -> Image {
        if survivors.0.is_empty() {
            return self.durable.clone();
        }
        let mut extra: Vec<(u64, BlockRef)> = Vec::with_capacity(survivors.0.len());
        for &(id, mask) in &survivors.0 {
            let w = &self.trace.writes[id as usize];
            let data = if mask == 0xFF {
                w.data.clone()
            } else {
                // A torn write: sectors not in the mask keep what the media had before.
                let old: Block = match extra.iter().rev().find(|(a, _)| *a == w.addr) {
                    Some((_, old)) => **old,
                    None => self.durable.get(w.addr).map(|b| **b).unwrap_or([0u8; BLOCK_SIZE]),
                };
                Arc::new(tear(&old, &w.data, mask))
            };
            extra.push((w.addr, data));
        }
        Image { extra: Arc::new(extra), ..self.durable.clone() }
    }

    /// A key identifying the image `survivors` gives at this point (for deduplication).
    pub fn image_key(&self, survivors: &Survivors) -> (u64, u64) {
        // Only the last survivor of each block (and its mask) shapes the image.
        let mut last: Vec<(u64, u32, u8)> = Vec::new();
        for &(id, mask) in &survivors.0 {
            let addr = self.trace.writes[id as usize].addr;
            if mask == 0xFF {
                last.retain(|(a, _, _)| *a != addr);
            }
            last.push((addr, id, mask));
        }
        last.sort_unstable();
        let mut h = Hasher64::new();
        for (a, id, m) in last {
            h.u64(a);
            h.u64(block_hash(&self.trace.writes[id as usize].data[..]));
            h.u64(m as u64);
        }
        (self.epoch, h.finish())
    }
}

/// Sector mask of the deterministic torn variant: only the last sector (a node's footer).
pub const TORN_FOOTER_MASK: u8 = 0b1000_0000;

/// Variants per crash point before the random ones: none, all, and (with torn writes)
/// all with the newest torn to its footer sector.
pub fn fixed_variants(torn: bool) -> u32 {
    2 + torn as u32
}

/// Chooses the survivors of variant `v` among `pending` writes.
///
/// Variant 0 keeps none (only what is durable), variant 1 keeps all (in submission order).
/// With `torn`, variant 2 keeps all with the newest write torn to its last sector
/// ([`TORN_FOOTER_MASK`]): for a node block that is a new footer (marks, checkpoint
/// version, next address) over an old body, which only the block's CRC can tell (random
/// masks find it too rarely). Later variants keep a random subset, each write with
/// probability 1/2, in a shuffled order, and with `torn` each kept write is torn at a
/// random set of sectors with probability 1/3.
pub fn choose_survivors(pending: &[u32], v: u32, rng: &mut Rng, torn: bool) -> Survivors {
    match v {
        0 => Survivors::default(),
        1 => Survivors(pending.iter().map(|&id| (id, 0xFF)).collect()),
        2 if torn => {
            let last = pending.len().saturating_sub(1);
            Survivors(
                pending
                    .iter()
                    .enumerate()
                    .map(|(i, &id)| (id, if i == last { TORN_FOOTER_MASK } else { 0xFF }))
                    .collect(),
            )
        }
        _ => {
            let mut kept: Vec<u32> = pending.iter().copied().filter(|_| rng.chance(1, 2)).collect();
            rng.shuffle(&mut kept);
            Survivors(
                kept.into_iter()
                    .map(|id| {
                        let mask = if torn && rng.chance(1, 3) { 1 + rng.below(254) as u8 } else { 0xFF };
                        (id, mask)
                    })
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blk(v: u8) -> Vec<u8> {
        vec![v; BLOCK_SIZE]
    }

    fn val(img: &Image, addr: u64) -> u8 {
        img.get(addr).map(|b| b[0]).unwrap_or(0)
    }

    fn dev(c: Completion) -> SimDevice {
        let mut d = SimDevice::new(Image::blank(16), 1);
        d.completion = c;
        d
    }

    #[test]
    fn reads_return_latest_submitted() {
        let mut d = dev(Completion::Reverse);
        d.write(3, &blk(7), 0);
        let mut buf = vec![0u8; BLOCK_SIZE];
        d.read(3, &mut buf);
        assert_eq!(buf[0], 7);
        d.write(3, &blk(8), 0);
        d.read(3, &mut buf);
        assert_eq!(buf[0], 8);
        d.read(4, &mut buf);
        assert_eq!(buf[0], 0);
    }

    #[test]
    fn flush_covers_completed_writes_only() {
        let mut d = dev(Completion::Reverse);
        d.write(1, &blk(1), 0);
        d.wait_writes(); // completes #0
        d.write(2, &blk(2), 0); // in flight
        d.flush();
        let mut w = CrashWalker::new(d.start_image(), &d.trace);
        w.advance_to(d.trace.events.len());
        assert_eq!(val(w.durable(), 1), 1, "completed write is durable after flush");
        assert_eq!(val(w.durable(), 2), 0, "in-flight write is not covered by the flush");
        assert_eq!(w.pending(), vec![1]);
        // Completed but unflushed: volatile, not durable.
        d.write(3, &blk(3), 0);
        d.wait_writes();
        let mut w = CrashWalker::new(d.start_image(), &d.trace);
        w.advance_to(d.trace.events.len());
        assert_eq!(val(w.durable(), 3), 0);
        assert_eq!(w.pending(), vec![1, 2]);
    }

    #[test]
    fn fua_is_durable_at_completion_and_preflush_flushes_first() {
        let mut d = dev(Completion::Reverse);
        d.write(1, &blk(1), 0);
        d.wait_writes();
        d.write(2, &blk(2), FLAG_FUA | FLAG_PREFLUSH);
        let n_before = d.trace.events.len();
        let mut w = CrashWalker::new(d.start_image(), &d.trace);
        w.advance_to(n_before);
        // PREFLUSH made #0 durable; the FUA write is still in flight.
        assert_eq!(val(w.durable(), 1), 1);
        assert_eq!(val(w.durable(), 2), 0);
        d.wait_writes();
        let mut w = CrashWalker::new(d.start_image(), &d.trace);
        w.advance_to(d.trace.events.len());
        assert_eq!(val(w.durable(), 2), 2, "FUA write durable once completed, without a flush");
    }

    #[test]
    fn survivors_and_torn_writes() {
        let mut d = dev(Completion::Reverse);
        d.write(5, &blk(1), 0);
        d.wait_writes();
        d.flush();
        d.write(5, &blk(2), 0);
        d.write(6, &blk(3), 0);
        let mut w = CrashWalker::new(d.start_image(), &d.trace);
        w.advance_to(d.trace.events.len());
        let pending = w.pending();
        assert_eq!(pending, vec![1, 2]);
        let none = w.image(&Survivors::default());
        assert_eq!((val(&none, 5), val(&none, 6)), (1, 0));
        let all = w.image(&Survivors(vec![(1, 0xFF), (2, 0xFF)]));
        assert_eq!((val(&all, 5), val(&all, 6)), (2, 3));
        let one = w.image(&Survivors(vec![(2, 0xFF)]));
        assert_eq!((val(&one, 5), val(&one, 6)), (1, 3));
        // Sectors 0 and 7 new, the rest old.
        let torn = w.image(&Survivors(vec![(1, 0b1000_0001)]));
        let b = torn.get(5).unwrap();
        assert_eq!(b[0], 2);
        assert_eq!(b[SECTOR_SIZE], 1);
        assert_eq!(b[7 * SECTOR_SIZE], 2);
        assert_eq!(b[6 * SECTOR_SIZE + 511], 1);
        // Every subset is reachable through the random variants.
        let mut seen = std::collections::BTreeSet::new();
        let mut rng = Rng::new(9);
        for v in 0..64 {
            let s = choose_survivors(&pending, v, &mut rng, false);
            let mut ids: Vec<u32> = s.0.iter().map(|x| x.0).collect();
            ids.sort();
            seen.insert(ids);
        }
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn eio_injection_and_discard() {
        let mut d = dev(Completion::Immediate);
        d.eio = Some(Eio { kind: IoKind::Write, nth: 1 });
        assert_eq!(d.write(1, &blk(1), 0), 0);
        assert_eq!(d.write(2, &blk(2), 0), EIO);
        assert_eq!(d.write(3, &blk(3), 0), 0);
        assert_eq!(d.read(99, &mut vec![0; BLOCK_SIZE]), EIO, "out of range");
        d.flush();
        d.discard(1, 1);
        let mut buf = vec![9u8; BLOCK_SIZE];
        d.read(1, &mut buf);
        assert_eq!(buf[0], 0, "discarded block reads as zeros");
        let mut w = CrashWalker::new(d.start_image(), &d.trace);
        w.advance_to(d.trace.events.len());
        assert_eq!(val(w.durable(), 1), 1, "discard not durable until flushed");
        assert_eq!(w.pending().len(), 1);
    }

    #[test]
    fn random_completion_is_deterministic() {
        let run = || {
            let mut d = SimDevice::new(Image::blank(64), 42);
            for i in 0..40u64 {
                d.write(i, &blk(i as u8), if i % 7 == 0 { FLAG_FUA } else { 0 });
                if i % 5 == 0 {
                    d.flush();
                }
            }
            d.wait_writes();
            d.trace.digest()
        };
        assert_eq!(run(), run());
    }
}
