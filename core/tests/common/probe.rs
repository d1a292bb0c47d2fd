//! A device that watches what the core does with it, for the tests of the read path
//! (read_plan.rs, reuse_fence.rs): it counts device read requests (a run is one), counts
//! `reuse_fence` calls, and records every write or discard of a block that a watched read
//! plan still relies on with no fence since the plan was made — exactly what a driver
//! reading outside its lock would have misread. Also the tests' small deterministic RNG.
#![allow(dead_code)]

use rollfs_core::ReadPlan;
use rollfs_core::*;

/// The blocks of one read plan and the fence count when it was made.
pub struct Watch {
    pub runs: Vec<(u64, u64)>,
    pub fence: u64,
    pub what: String,
}

impl Watch {
    pub fn of(plan: &ReadPlan, fence: u64, what: String) -> Watch {
        Watch { runs: plan.runs.iter().map(|r| (r.addr, r.addr + r.blocks as u64)).collect(), fence, what }
    }
    fn covers(&self, addr: u64) -> bool {
        self.runs.iter().any(|&(a, b)| (a..b).contains(&addr))
    }
}

pub struct Probe {
    pub inner: MemDevice,
    pub read_requests: u64,
    pub fences: u64,
    pub watches: Vec<Watch>,
    pub violations: Vec<String>,
    /// Writes and discards of watched blocks after a fence: reuse the watch did see.
    pub reused_after_fence: u64,
}

impl Probe {
    pub fn new(inner: MemDevice) -> Probe {
        Probe { inner, read_requests: 0, fences: 0, watches: Vec::new(), violations: Vec::new(), reused_after_fence: 0 }
    }

    fn touch(&mut self, addr: u64, what: &str) {
        for w in self.watches.iter().filter(|w| w.covers(addr)) {
            if w.fence == self.fences {
                self.violations.push(format!("{what} of block {addr} planned by [{}] with no fence since", w.what));
            } else {
                self.reused_after_fence += 1;
            }
        }
    }
}

impl BlockDevice for Probe {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.read_requests += 1;
        self.inner.read(addr, buf)
    }
    fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        self.read_requests += 1;
        for (i, b) in blocks.iter_mut().enumerate() {
            self.inner.read(addr + i as u64, b)?;
        }
        Ok(())
    }
    fn reuse_fence(&mut self) {
        self.fences += 1;
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.touch(addr, "write");
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        for a in addr..addr + count {
            self.touch(a, "discard");
        }
        self.inner.discard(addr, count)
    }
}

/// Reads a plan's runs from the device underneath (not counted) into `buf`; true when
/// every run verifies.
pub fn complete(dev: &mut Probe, plan: &ReadPlan, buf: &mut [u8]) -> bool {
    let mut ok = true;
    for run in &plan.runs {
        let (blocks, rest) =
            buf[run.buf_offset..run.buf_offset + run.blocks * BLOCK_SIZE].as_chunks_mut::<BLOCK_SIZE>();
        assert!(rest.is_empty(), "runs hold whole blocks");
        dev.inner.read_run(run.addr, blocks).unwrap();
        ok &= run.verify(blocks);
    }
    ok
}

/// xorshift64: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
