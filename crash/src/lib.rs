//! The crash model of docs/INVARIANTS.md, one implementation for every crash tester of
//! rollfs: the WebAssembly explorer (`rollfs-sim`, which records a [`Trace`] from its
//! simulated device), the native crash tester (`rollfs crashtest` and `rollfs replay`,
//! which turn a real mount's write log into a [`Trace`]) and the core's native crash
//! device (rollfs-testkit, which tears writes with [`tear`]).
//!
//! | item | owns |
//! |---|---|
//! | [`rng`] | the seeded PRNG and hashes (the same choices on every platform) |
//! | [`Image`] | an immutable device image: a dense shared base plus small overlays of shared blocks, so that thousands of crash images share almost all their memory (a torn write's block is made when first read) |
//! | [`Trace`], [`Event`] | what a device saw, in order: writes (with their data), completions, waits, flushes, discards, injected errors, marks |
//! | [`CrashWalker`] | replays a trace and, at any point, derives the images a power loss there may leave |
//! | [`choose_survivors`], [`tear`] | which non-durable writes survive, and how a write is torn at 512-byte sectors |
//!
//! The model: a write is *in flight* after submission and completes later; completed
//! writes sit in the volatile cache until a flush; a flush makes durable what had
//! completed, never what is in flight; FUA writes are durable at completion; PREFLUSH
//! flushes before the write; a discarded block may read as zeros or its old data after a
//! power loss. A power loss keeps the durable writes plus any subset of the volatile and
//! in-flight writes ([`Survivors`]), each possibly torn at sectors.
//!
//! The walker is separate from any device on purpose: a workload runs once and records
//! its trace; crash images are derived afterwards, so the cost of a crash state is the
//! cost of mounting it, not of re-running the workload.

pub mod rng;

use rng::{block_hash, Rng, WordHasher};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// The unit a power loss may tear a block write at: a write of a 4 KiB block reaches the
/// media sector by sector, any subset of them.
pub const SECTOR_SIZE: usize = 512;
pub const SECTORS_PER_BLOCK: usize = BLOCK_SIZE / SECTOR_SIZE;

/// The block a write of `new` over `old` torn by a power loss leaves: sector `i` has the
/// new data if bit `i` of `mask` is set, else the old (`0xFF` = the whole write).
pub fn tear(old: &Block, new: &Block, mask: u8) -> Block {
    let mut b = *old;
    for s in 0..SECTORS_PER_BLOCK {
        if mask & (1 << s) != 0 {
            let r = s * SECTOR_SIZE..(s + 1) * SECTOR_SIZE;
            b[r.clone()].copy_from_slice(&new[r]);
        }
    }
    b
}

pub const BLOCK_SIZE: usize = 4096;
pub type Block = [u8; BLOCK_SIZE];
pub type BlockRef = Arc<Block>;

/// Write flags, with the values of `rollfs_core::WriteFlags` (the ABI passes them through).
pub const FLAG_FUA: u8 = 1;
pub const FLAG_PREFLUSH: u8 = 2;

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

/// A block of an image's overlays: a whole block, or a torn write whose block is made
/// when it is first read. A crash image keeps every torn survivor of its crash point
/// (hundreds when a full device's fill tears), and the guest that mounts it reads a few
/// of them: made eagerly, they were 1.4 GB of copies for ten workloads and most of the
/// explorer's peak memory.
#[derive(Clone)]
enum Stored {
    Whole(BlockRef),
    Torn(Arc<TornBlock>),
}

/// A write torn by a power loss: `new` over `old` (`None`: zeros) at sector `mask`.
struct TornBlock {
    old: Option<BlockRef>,
    new: BlockRef,
    mask: u8,
    /// The torn block, made at most once (images share it when they are cloned).
    made: std::sync::OnceLock<BlockRef>,
}

impl Stored {
    fn block(&self) -> &BlockRef {
        match self {
            Stored::Whole(b) => b,
            Stored::Torn(t) => t.made.get_or_init(|| {
                let old = t.old.as_deref().unwrap_or(&[0u8; BLOCK_SIZE]);
                Arc::new(tear(old, &t.new, t.mask))
            }),
        }
    }
}

/// An immutable device image. Reads look at `extra`, then `over`, then
/// `base`; absent blocks read as zeros.
#[derive(Clone)]
pub struct Image {
    block_count: u64,
    base: Arc<Vec<Option<BlockRef>>>,
    over: Arc<AddrMap<Stored>>,
    /// One entry per address (a crash image's surviving in-flight writes, the last of each
    /// block's): a map, not a list, because a variant that keeps every pending write of a
    /// full device's fill has hundreds, and every read of the image looks here first.
    extra: Arc<AddrMap<Stored>>,
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
        if let Some(b) = self.extra.get(&addr) {
            return Some(b.block());
        }
        if let Some(b) = self.over.get(&addr) {
            return Some(b.block());
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

    /// This image with `blocks` written over it (later entries win).
    pub fn with_blocks(&self, blocks: impl IntoIterator<Item = (u64, BlockRef)>) -> Image {
        let mut img = self.settled();
        let over = Arc::make_mut(&mut img.over);
        for (a, b) in blocks {
            over.insert(a, Stored::Whole(b));
        }
        img
    }

    /// A copy with every overlay folded into a new dense base (for long-lived images,
    /// e.g. the formatted image every workload starts from).
    pub fn flatten(&self) -> Image {
        let base = (0..self.block_count).map(|a| self.get(a).cloned()).collect();
        Image { block_count: self.block_count, base: Arc::new(base), over: Arc::default(), extra: Arc::default() }
    }

    /// Content digest (zero blocks and absent blocks are equal).
    pub fn digest(&self) -> u64 {
        let mut h = WordHasher::new();
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
    /// A mark the workload set (native logs: `rollfs mark` in a crashtest workload); a
    /// crash after it happened after everything the workload did before the mark.
    Mark,
    /// A flush observed as it began (native logs): it will cover the writes completed
    /// by now, once its [`Event::FlushDone`] says it succeeded; until then (or without one,
    /// when it failed) it makes nothing durable.
    FlushStart {
        id: u32,
    },
    /// The flush `id` succeeded.
    FlushDone {
        id: u32,
    },
}

impl Event {
    /// Whether the event can change what a power loss leaves (reads and waits cannot).
    pub fn changes_crash_state(&self) -> bool {
        matches!(
            self,
            Event::Write { .. }
                | Event::Complete { .. }
                | Event::Flush
                | Event::Discard { .. }
                | Event::FlushDone { .. }
        )
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
        let mut h = WordHasher::new();
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
                Event::Mark => h.u64(8),
                Event::FlushStart { id } => {
                    h.u64(9);
                    h.u64(*id as u64)
                }
                Event::FlushDone { id } => {
                    h.u64(10);
                    h.u64(*id as u64)
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

/// Which non-durable writes survive a power loss, and how: `(write id, sector mask)`,
/// applied in order (a later entry for the same block wins). Mask bit `i` set = sector `i`
/// has the new data; `0xFF` = the whole block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Survivors(pub Vec<(u32, u8)>);

/// Replays a trace from its start image and derives crash images at any point.
pub struct CrashWalker<'t> {
    trace: &'t Trace,
    durable: Image,
    /// Writes submitted and not yet durable, in submission order; may still list writes
    /// made durable since (`is_durable`), removed in batches so that a flush of many
    /// writes is not quadratic.
    pending: Vec<u32>,
    /// By write id: made durable.
    is_durable: Vec<bool>,
    /// Entries of `pending` that are durable or superseded (counted at most once each:
    /// a write is superseded only while volatile, and then never made durable by a plain
    /// flush; a flush begun before may still make it durable, counting it again, which
    /// only makes a compaction come earlier).
    stale: usize,
    /// Completed, not yet durable writes in completion order (what a flush persists).
    volatile: Vec<u32>,
    /// By write id: the write's [`block_hash`], computed at most once.
    hashes: Vec<std::cell::OnceCell<u64>>,
    /// Flushes begun and not done: their id and the writes they cover.
    flushing: Vec<(u32, Vec<u32>)>,
    /// By write id: the event position of its completion (`u64::MAX`: not completed).
    completed_at: Vec<u64>,
    /// By write id: superseded in the cache by a later completion of the same block (a
    /// cache holds one version of a block), so neither a flush nor a power loss can put
    /// it on the media any more.
    superseded: Vec<bool>,
    /// By block: the volatile write whose data the cache holds.
    cached: AddrMap<u32>,
    /// By block: when the write whose data is durable completed. A flush of a version
    /// that completed earlier cannot replace it.
    durable_from: AddrMap<u64>,
    pos: usize,
    /// Bumped whenever the durable image changes (part of crash-image identity).
    pub epoch: u64,
}

impl<'t> CrashWalker<'t> {
    pub fn new(start: &Image, trace: &'t Trace) -> CrashWalker<'t> {
        let n = trace.writes.len();
        CrashWalker {
            trace,
            durable: start.settled(),
            pending: Vec::new(),
            is_durable: vec![false; n],
            stale: 0,
            volatile: Vec::new(),
            hashes: (0..n).map(|_| std::cell::OnceCell::new()).collect(),
            flushing: Vec::new(),
            completed_at: vec![u64::MAX; n],
            superseded: vec![false; n],
            cached: AddrMap::default(),
            durable_from: AddrMap::default(),
            pos: 0,
            epoch: 0,
        }
    }

    fn write_hash(&self, id: u32) -> u64 {
        *self.hashes[id as usize].get_or_init(|| block_hash(&self.trace.writes[id as usize].data[..]))
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    fn make_durable(&mut self, id: u32) {
        let w = &self.trace.writes[id as usize];
        let at = self.completed_at[id as usize];
        if self.durable_from.get(&w.addr).is_none_or(|&d| d <= at) {
            Arc::make_mut(&mut self.durable.over).insert(w.addr, Stored::Whole(w.data.clone()));
            self.durable_from.insert(w.addr, at);
        }
        if self.cached.get(&w.addr) == Some(&id) {
            self.cached.remove(&w.addr);
        }
        if !self.is_durable[id as usize] {
            self.is_durable[id as usize] = true;
            self.stale += 1;
        }
        self.epoch += 1;
    }

    /// Drops durable and superseded writes from `pending` once they are half of it.
    fn compact(&mut self) {
        if self.stale > 0 && self.stale * 2 >= self.pending.len() {
            let (d, s) = (&self.is_durable, &self.superseded);
            self.pending.retain(|&id| !d[id as usize] && !s[id as usize]);
            self.stale = 0;
        }
    }

    /// Applies events up to (not including) `point`. Points only move forward.
    pub fn advance_to(&mut self, point: usize) {
        assert!(point >= self.pos, "crash walker cannot go back");
        while self.pos < point.min(self.trace.events.len()) {
            match &self.trace.events[self.pos] {
                Event::Write { id } => self.pending.push(*id),
                Event::Complete { id } => {
                    self.completed_at[*id as usize] = self.pos as u64;
                    // The cache now holds this version of the block: an earlier cached one
                    // is gone.
                    let addr = self.trace.writes[*id as usize].addr;
                    if let Some(old) = self.cached.remove(&addr) {
                        self.superseded[old as usize] = true;
                        self.stale += 1;
                    }
                    if self.trace.writes[*id as usize].fua {
                        self.make_durable(*id);
                        self.compact();
                    } else {
                        self.cached.insert(addr, *id);
                        self.volatile.push(*id);
                    }
                }
                Event::Flush => {
                    for id in std::mem::take(&mut self.volatile) {
                        if !self.superseded[id as usize] {
                            self.make_durable(id);
                        }
                    }
                    self.compact();
                }
                Event::FlushStart { id } => {
                    let covered = self.volatile.iter().copied().filter(|&v| !self.superseded[v as usize]).collect();
                    self.flushing.push((*id, covered));
                }
                Event::FlushDone { id } => {
                    if let Some(i) = self.flushing.iter().position(|(f, _)| f == id) {
                        // What the cache held when the flush began reached the media (or a
                        // version completed since, which stays volatile in the model).
                        let (_, mut covered) = self.flushing.swap_remove(i);
                        covered.sort_unstable();
                        self.volatile.retain(|v| covered.binary_search(v).is_err());
                        for id in covered {
                            if !self.is_durable[id as usize] {
                                self.make_durable(id);
                            }
                        }
                        self.compact();
                    }
                }
                Event::Read { .. } | Event::WaitWrites | Event::Discard { .. } | Event::Failed { .. } | Event::Mark => {
                }
            }
            self.pos += 1;
        }
    }

    /// The writes a power loss now may or may not keep (submission order).
    pub fn pending(&self) -> Vec<u32> {
        self.pending
            .iter()
            .copied()
            .filter(|&id| !self.is_durable[id as usize] && !self.superseded[id as usize])
            .collect()
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
        let mut extra: AddrMap<Stored> = AddrMap::default();
        extra.reserve(survivors.0.len());
        // In the survivors' order: a later survivor of a block replaces an earlier one.
        for &(id, mask) in &survivors.0 {
            let w = &self.trace.writes[id as usize];
            let data = if mask == 0xFF {
                Stored::Whole(w.data.clone())
            } else {
                // A torn write: sectors not in the mask keep what the media had before
                // (an earlier survivor of the block, made now: rare).
                let old = match extra.get(&w.addr) {
                    Some(old) => Some(old.block().clone()),
                    None => self.durable.get(w.addr).cloned(),
                };
                Stored::Torn(Arc::new(TornBlock { old, new: w.data.clone(), mask, made: Default::default() }))
            };
            extra.insert(w.addr, data);
        }
        Image { extra: Arc::new(extra), ..self.durable.clone() }
    }

    /// A key identifying the image `survivors` gives at this point (for deduplication).
    pub fn image_key(&self, survivors: &Survivors) -> (u64, u64) {
        // Only the survivors of each block from its last whole one on (with their masks)
        // shape the image: sort by block, keeping the order among a block's survivors.
        let mut all: Vec<(u64, usize, u32, u8)> = survivors
            .0
            .iter()
            .enumerate()
            .map(|(i, &(id, mask))| (self.trace.writes[id as usize].addr, i, id, mask))
            .collect();
        all.sort_unstable();
        let mut last: Vec<(u64, u32, u8)> = Vec::with_capacity(all.len());
        let mut group = 0usize;
        for (k, &(addr, _, id, mask)) in all.iter().enumerate() {
            if k > 0 && all[k - 1].0 != addr {
                group = last.len();
            }
            if mask == 0xFF {
                last.truncate(group);
            }
            last.push((addr, id, mask));
        }
        last.sort_unstable();
        let mut h = WordHasher::new();
        for (a, id, m) in last {
            h.u64(a);
            h.u64(self.write_hash(id));
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

    fn trace(writes: &[(u64, u8, bool)], events: Vec<Event>) -> Trace {
        Trace {
            events,
            writes: writes
                .iter()
                .map(|&(addr, v, fua)| WriteRec { addr, data: Arc::new([v; BLOCK_SIZE]), fua })
                .collect(),
            calls: Vec::new(),
        }
    }

    fn val(img: &Image, addr: u64) -> u8 {
        img.get(addr).map(|b| b[0]).unwrap_or(0)
    }

    #[test]
    fn a_flush_covers_what_completed_before_it_began_once_it_is_done() {
        use Event::*;
        let t = trace(
            &[(1, 1, false), (2, 2, false)],
            vec![
                Write { id: 0 },
                Complete { id: 0 },
                FlushStart { id: 7 },
                Write { id: 1 },
                Complete { id: 1 },
                FlushDone { id: 7 },
                FlushStart { id: 8 }, // never done: failed
            ],
        );
        let mut w = CrashWalker::new(&Image::blank(4), &t);
        w.advance_to(5);
        assert_eq!((val(w.durable(), 1), w.pending()), (0, vec![0, 1]), "not durable before the flush is done");
        w.advance_to(6);
        assert_eq!((val(w.durable(), 1), val(w.durable(), 2)), (1, 0), "done: only what completed before it began");
        assert_eq!(w.pending(), vec![1]);
        w.advance_to(7);
        assert_eq!(w.pending(), vec![1], "a flush that never finished covers nothing");
    }

    #[test]
    fn a_later_completion_of_a_block_supersedes_the_cached_one() {
        use Event::*;
        // Plain write of 1, then a FUA write of 2 to the same block, then a flush: the
        // cache no longer holds 1, so the media keeps 2.
        let t = trace(
            &[(7, 1, false), (7, 2, true)],
            vec![Write { id: 0 }, Complete { id: 0 }, Write { id: 1 }, Complete { id: 1 }, Flush],
        );
        let mut w = CrashWalker::new(&Image::blank(8), &t);
        w.advance_to(4);
        assert_eq!((val(w.durable(), 7), w.pending()), (2, vec![]), "the FUA write is durable, the cached 1 gone");
        w.advance_to(5);
        assert_eq!(val(w.durable(), 7), 2, "the flush does not bring back the older version");
        // Two plain versions: the one that completed last is what the cache holds.
        let t = trace(
            &[(3, 1, false), (3, 2, false)],
            vec![Write { id: 0 }, Write { id: 1 }, Complete { id: 1 }, Complete { id: 0 }, Flush],
        );
        let mut w = CrashWalker::new(&Image::blank(8), &t);
        w.advance_to(4);
        assert_eq!(w.pending(), vec![0], "write 1 was replaced in the cache by write 0");
        w.advance_to(5);
        assert_eq!(val(w.durable(), 3), 1);
    }
    #[test]
    fn a_torn_survivor_reads_as_its_sectors_over_what_the_media_held() {
        use Event::*;
        // Block 5 is durable as 1s; writes of 2s and 3s to it are pending, with 4s to block 6
        // (never written before). Torn blocks are made when read: each must read as
        // `tear` says, over the durable block, over an earlier survivor, or over zeros.
        let t = trace(
            &[(5, 1, true), (5, 2, false), (5, 3, false), (6, 4, false)],
            vec![Write { id: 0 }, Complete { id: 0 }, Write { id: 1 }, Write { id: 2 }, Write { id: 3 }],
        );
        let mut w = CrashWalker::new(&Image::blank(8), &t);
        w.advance_to(5);
        let block = |v: u8| [v; BLOCK_SIZE];
        let one = Survivors(vec![(1, 0b0000_0011)]);
        let img = w.image(&one);
        assert_eq!(img.get(5).map(|b| **b), Some(tear(&block(1), &block(2), 0b0000_0011)));
        // A second torn survivor of the block tears over the first.
        let two = Survivors(vec![(1, 0b0000_0011), (2, 0b1000_0001), (3, 0b0100_0000)]);
        let img = w.image(&two);
        let first = tear(&block(1), &block(2), 0b0000_0011);
        assert_eq!(img.get(5).map(|b| **b), Some(tear(&first, &block(3), 0b1000_0001)));
        assert_eq!(img.get(6).map(|b| **b), Some(tear(&[0; BLOCK_SIZE], &block(4), 0b0100_0000)));
        // The same bytes through every way an image is read or derived.
        let bytes = img.to_bytes();
        assert_eq!(bytes[5 * BLOCK_SIZE..6 * BLOCK_SIZE], tear(&first, &block(3), 0b1000_0001));
        let settled = CrashWalker::new(&img, &t);
        assert_eq!(settled.durable().digest(), img.digest());
        assert_eq!(img.flatten().to_bytes(), bytes);
        assert_eq!(img.with_blocks([(7, Arc::new(block(9)))]).get(6).map(|b| **b), img.get(6).map(|b| **b));
    }

    /// Differential: over random traces (random start images, flattened or not, duplicated
    /// torn survivors of one block, walkers over crash images as for recovery crashes),
    /// every way of reading a crash image gives the bytes of tearing each survivor eagerly
    /// over the durable image, in order.
    #[test]
    fn lazy_torn_images_read_as_eagerly_torn_ones_on_every_path() {
        use Event::*;
        let mut rng = Rng::new(12345);
        for round in 0..300u64 {
            let n_blocks = 12u64;
            let nw = 10 + rng.below(30) as usize;
            let mut writes = Vec::new();
            for _ in 0..nw {
                let mut b = [0u8; BLOCK_SIZE];
                for x in b.iter_mut() {
                    *x = rng.below(256) as u8;
                }
                if rng.chance(1, 8) {
                    b = [0u8; BLOCK_SIZE];
                }
                writes.push(WriteRec { addr: rng.below(n_blocks), data: Arc::new(b), fua: rng.chance(1, 4) });
            }
            let mut events = Vec::new();
            let mut submitted = Vec::new();
            let mut done = vec![false; nw];
            for id in 0..nw as u32 {
                events.push(Write { id });
                submitted.push(id);
                while rng.chance(1, 2) {
                    let i = rng.below(submitted.len() as u64) as usize;
                    let c = submitted[i];
                    if !done[c as usize] {
                        done[c as usize] = true;
                        events.push(Complete { id: c });
                    }
                }
                if rng.chance(1, 5) {
                    events.push(Flush);
                }
            }
            let t = Trace { events, writes, calls: Vec::new() };
            // The start image: random, some blocks absent, sometimes flattened.
            let mut start = Image::blank(n_blocks);
            let mut blocks = Vec::new();
            for a in 0..n_blocks {
                if rng.chance(1, 2) {
                    let mut b = [0u8; BLOCK_SIZE];
                    for x in b.iter_mut() {
                        *x = rng.below(256) as u8;
                    }
                    blocks.push((a, Arc::new(b)));
                }
            }
            start = start.with_blocks(blocks);
            if round % 3 == 0 {
                start = start.flatten();
            }
            let check = |w: &CrashWalker, rng: &mut Rng| -> Image {
                let pending = w.pending();
                let v = rng.below(8) as u32;
                let mut s = choose_survivors(&pending, v, rng, true);
                // More torn survivors, some of a block already torn.
                if !pending.is_empty() && rng.chance(1, 2) {
                    for _ in 0..3 {
                        let id = pending[rng.below(pending.len() as u64) as usize];
                        s.0.push((id, 1 + rng.below(254) as u8));
                    }
                }
                let img = w.image(&s);
                let mut want = w.durable().to_bytes();
                for &(id, mask) in &s.0 {
                    let wr = &t.writes[id as usize];
                    let r = wr.addr as usize * BLOCK_SIZE..(wr.addr as usize + 1) * BLOCK_SIZE;
                    let old: Block = want[r.clone()].try_into().unwrap();
                    want[r].copy_from_slice(&tear(&old, &wr.data, mask));
                }
                // The first reads through one of the paths, in either order.
                let which = rng.below(4);
                let got = match which {
                    0 => img.to_bytes(),
                    1 => img.flatten().to_bytes(),
                    2 => img.with_blocks([]).to_bytes(),
                    _ => {
                        let mut o = vec![0u8; want.len()];
                        for a in (0..n_blocks).rev() {
                            img.read_into(a, &mut o[a as usize * BLOCK_SIZE..(a as usize + 1) * BLOCK_SIZE]);
                        }
                        o
                    }
                };
                assert_eq!(got, want, "round {round} variant {v}");
                assert_eq!(img.to_bytes(), want);
                let mut fl = Image::blank(n_blocks);
                fl = fl.with_blocks((0..n_blocks).map(|a| {
                    (
                        a,
                        Arc::new(
                            <Block>::try_from(&want[a as usize * BLOCK_SIZE..(a as usize + 1) * BLOCK_SIZE]).unwrap(),
                        ),
                    )
                }));
                assert_eq!(img.digest(), fl.digest());
                // A block made once is the one every later read and clone returns.
                for a in 0..n_blocks {
                    if let (Some(x), Some(y)) = (img.get(a), img.clone().get(a)) {
                        assert!(Arc::ptr_eq(x, y));
                    }
                }
                img
            };
            let mut w = CrashWalker::new(&start, &t);
            let mut imgs = Vec::new();
            for p in 0..=t.events.len() {
                w.advance_to(p);
                imgs.push(check(&w, &mut rng));
            }
            // Recovery crashes: a walker over a crash image, the trace again over it.
            for img in imgs.iter().step_by(5) {
                let mut w2 = CrashWalker::new(img, &t);
                assert_eq!(w2.durable().to_bytes(), img.to_bytes());
                for p in 0..=t.events.len() {
                    w2.advance_to(p);
                    check(&w2, &mut rng);
                }
                // Blocks written over a torn image.
                let wb = img.with_blocks([(1, Arc::new([7u8; BLOCK_SIZE]))]);
                let mut want = img.to_bytes();
                want[BLOCK_SIZE..2 * BLOCK_SIZE].fill(7);
                assert_eq!(wb.to_bytes(), want);
            }
        }
    }

    /// Checking threads share crash images: first reads of torn blocks from several threads
    /// at once make each block once, with the torn bytes.
    #[test]
    fn torn_blocks_first_read_by_several_threads_read_the_same() {
        use Event::*;
        let mut writes = Vec::new();
        for a in 0..64u64 {
            let mut b = [0u8; BLOCK_SIZE];
            for (i, x) in b.iter_mut().enumerate() {
                *x = (i as u64 * 31 + a) as u8;
            }
            writes.push(WriteRec { addr: a, data: Arc::new(b), fua: false });
        }
        let events = (0..64u32).map(|id| Write { id }).collect();
        let t = Trace { events, writes, calls: Vec::new() };
        let start = Image::blank(64).with_blocks((0..64).map(|a| (a, Arc::new([a as u8; BLOCK_SIZE]))));
        let mut w = CrashWalker::new(&start, &t);
        w.advance_to(64);
        for round in 0..50u8 {
            let s = Survivors((0..64u32).map(|id| (id, (round % 254) + 1)).collect());
            let img = w.image(&s);
            let want: Vec<_> = (0..64u64)
                .map(|a| tear(&[a as u8; BLOCK_SIZE], &t.writes[a as usize].data, (round % 254) + 1))
                .collect();
            std::thread::scope(|sc| {
                for k in 0..4 {
                    let img = img.clone();
                    let want = &want;
                    sc.spawn(move || {
                        for a in 0..64u64 {
                            let a = (a + k * 16) % 64;
                            assert_eq!(**img.get(a).unwrap(), want[a as usize]);
                        }
                    });
                }
            });
        }
    }
}
