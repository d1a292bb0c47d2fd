//! The simulated flash device the guest runs against ([`SimDevice`]), and the crash
//! model it records for (re-exported from rollfs-crash, shared with the native crash
//! tester: [`Image`], [`Trace`], [`CrashWalker`], [`choose_survivors`], [`tear`]).
//!
//! Every write is *in flight* after submission and completes later, in an order drawn
//! from the seed; `wait_writes` completes everything in flight; completed writes sit in
//! the volatile cache until a flush; a flush makes durable what had completed, never what
//! is in flight; FUA writes are durable at completion; PREFLUSH flushes before the write.
//! Reads return the most recently submitted data. Every I/O goes into a [`Trace`]; an
//! EIO can be injected at a chosen read, write or flush.

use rng::Rng;
pub use rollfs_crash::rng;
pub use rollfs_crash::*;
use std::sync::Arc;

/// errno returned to the guest for an injected or out-of-range I/O.
pub const EIO: i32 = 5;

/// Fail the `nth` (0-based) operation of `kind` with EIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eio {
    pub kind: IoKind,
    pub nth: u64,
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

/// One call the guest made on the device, in order ([`SimDevice::record`]). The device's
/// answers to a sequence of these depend only on its start image, seed and EIO setting, so
/// replaying the sequence on another device rebuilds that device's trace exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Read(u64),
    Write(u64, BlockRef, u8),
    WaitWrites,
    Flush,
    Discard(u64, u64),
}

/// What a recording device saw the guest do ([`SimDevice::record`]).
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub requests: Vec<Request>,
    /// Every read answered from the start image (not from a write of this session), with
    /// the block it returned (`None`: never written, read as zeros). The guest's
    /// only input from the device: a guest run on another start image that holds the same
    /// blocks at these addresses reads exactly the same bytes.
    pub inputs: Vec<(u64, Option<BlockRef>)>,
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
    /// A transient bit flip (`crate::devices`, `bitflip-transient`): read `.0` (0-based)
    /// returns its block with bit `.1` flipped, once; the media and later reads are right.
    pub flip_read: Option<(u64, u32)>,
    pub counts: IoCounts,
    /// The guest's requests and inputs, when recording ([`SimDevice::record`]).
    pub recording: Option<Recording>,
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
            flip_read: None,
            counts: IoCounts::default(),
            recording: None,
        }
    }

    /// Starts recording the requests made from now on and the start-image blocks they read.
    pub fn record(&mut self) {
        self.recording = Some(Recording::default());
    }

    fn log(&mut self, r: Request) {
        if let Some(rec) = self.recording.as_mut() {
            rec.requests.push(r);
        }
    }

    /// Makes `requests` on this device, as the guest made them on the recording one.
    pub fn replay(&mut self, requests: &[Request]) {
        // At least an event and a call per request: grown once, not doubling from empty
        // (a replayed crash state makes hundreds of requests).
        self.trace.events.reserve(requests.len());
        self.trace.calls.reserve(requests.len());
        for r in requests {
            match r {
                Request::Read(addr) => {
                    // Its effects on the device and trace, not its bytes (no guest to take them).
                    self.read_into(*addr, None);
                }
                Request::Write(addr, data, flags) => {
                    self.write_block(*addr, data.clone(), *flags);
                }
                Request::WaitWrites => {
                    self.wait_writes();
                }
                Request::Flush => {
                    self.flush();
                }
                Request::Discard(addr, count) => {
                    self.discard(*addr, *count);
                }
            }
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
        self.read_into(addr, Some(buf))
    }

    /// A read, its block copied into `buf` when there is one.
    fn read_into(&mut self, addr: u64, buf: Option<&mut [u8]>) -> i32 {
        self.log(Request::Read(addr));
        let nth = self.counts.reads;
        self.counts.reads += 1;
        if self.inject(IoKind::Read, nth, addr) || addr >= self.block_count() {
            return EIO;
        }
        self.trace.events.push(Event::Read { addr });
        if let Some(rec) = self.recording.as_mut() {
            if !self.latest.contains_key(&addr) {
                rec.inputs.push((addr, self.start.get(addr).cloned()));
            }
        }
        if let Some(buf) = buf {
            match self.current(addr) {
                Some(b) => buf.copy_from_slice(&b[..]),
                None => buf.fill(0),
            }
            if let Some((_, bit)) = self.flip_read.filter(|&(n, _)| n == nth) {
                buf[bit as usize / 8 % BLOCK_SIZE] ^= 1 << (bit % 8);
            }
        }
        self.progress();
        0
    }

    pub fn write(&mut self, addr: u64, data: &[u8], flags: u8) -> i32 {
        self.write_block(addr, Arc::new(data.try_into().expect("4 KiB block")), flags)
    }

    fn write_block(&mut self, addr: u64, block: BlockRef, flags: u8) -> i32 {
        if self.recording.is_some() {
            self.log(Request::Write(addr, block.clone(), flags));
        }
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
        self.log(Request::WaitWrites);
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
        self.log(Request::Flush);
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
        self.log(Request::Discard(addr, count));
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
                // In place (this runs after every device call): each in-flight write, in a
                // shuffled order, completes with probability 1/n.
                let (rng, events) = (&mut self.rng, &mut self.trace.events);
                rng.shuffle(&mut self.in_flight);
                self.in_flight.retain(|&id| {
                    let done = rng.chance(1, n);
                    if done {
                        events.push(Event::Complete { id });
                    }
                    !done
                });
                // Keep the in-flight list in submission order so that later shuffles do
                // not depend on the history of earlier ones more than necessary.
                self.in_flight.sort_unstable();
            }
        }
    }

    /// The image as it would be if every submitted write reached the media (what a clean
    /// shutdown with a final wait and flush leaves).
    pub fn final_image(&self) -> Image {
        self.start.with_blocks(self.latest.iter().map(|(a, b)| (*a, b.clone())))
    }
}

struct IoErrorBlock;
impl IoErrorBlock {
    const FLUSH: u64 = u64::MAX;
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
    fn a_transient_flip_changes_one_read_only() {
        let mut d = dev(Completion::Immediate);
        d.write(2, &blk(0), 0);
        d.flip_read = Some((1, 8 * 7 + 3));
        let mut buf = vec![0u8; BLOCK_SIZE];
        d.read(2, &mut buf);
        assert_eq!(buf[7], 0, "read 0 is right");
        d.read(2, &mut buf);
        assert_eq!(buf[7], 1 << 3, "read 1 has bit 3 of byte 7 flipped");
        d.read(2, &mut buf);
        assert_eq!(buf[7], 0, "the retry is right");
        assert_eq!(d.current(2).unwrap()[7], 0, "the media is right");
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
