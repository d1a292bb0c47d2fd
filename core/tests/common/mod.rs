//! A small crash-model device for the core's own recovery tests: writes stay in flight
//! until `wait_writes` (completing in submission or reverse order), completed writes sit
//! in a volatile cache until `flush`, FUA writes are durable on completion. `crash` builds
//! the image a power loss would leave, keeping a chosen subset of the volatile and
//! in-flight writes. (The simulator in wasm-harness/ explores this model exhaustively.)
#![allow(dead_code)]

pub mod limits;

use rollfs_core::device::{BlockDevice, IoError, MemDevice, WriteFlags};
use rollfs_core::Block;
use std::collections::BTreeMap;

#[derive(Clone)]
pub struct CrashDevice {
    durable: MemDevice,
    latest: BTreeMap<u64, Box<Block>>,
    in_flight: Vec<(u64, Box<Block>, bool)>,
    volatile: Vec<(u64, Box<Block>)>,
    pub reverse_completion: bool,
    pub writes: u64,
    pub flushes: u64,
    /// Power cut: the write with this index (counted in `writes`) and every later write,
    /// wait or flush fail, so a mount or operation stops there; `crash` then gives the
    /// image the power loss leaves.
    pub power_cut_at: Option<u64>,
}

impl CrashDevice {
    pub fn new(durable: MemDevice) -> CrashDevice {
        CrashDevice {
            durable,
            latest: BTreeMap::new(),
            in_flight: Vec::new(),
            volatile: Vec::new(),
            reverse_completion: false,
            writes: 0,
            flushes: 0,
            power_cut_at: None,
        }
    }

    /// Writes not yet durable: volatile (completed) first, then in flight.
    pub fn pending(&self) -> usize {
        self.volatile.len() + self.in_flight.len()
    }

    /// The image after a power loss that keeps the pending writes `keep` selects (by index
    /// into volatile-then-in-flight order).
    pub fn crash(&self, keep: impl Fn(usize) -> bool) -> MemDevice {
        let mut img = self.durable.clone();
        let all = self.volatile.iter().map(|(a, b)| (*a, b)).chain(self.in_flight.iter().map(|(a, b, _)| (*a, b)));
        for (i, (a, b)) in all.enumerate() {
            if keep(i) {
                img.write(a, b, WriteFlags::empty()).unwrap();
            }
        }
        img
    }

    /// The image if the power fails now and nothing pending survives.
    pub fn crash_durable_only(&self) -> MemDevice {
        self.crash(|_| false)
    }

    fn powered(&self) -> Result<(), IoError> {
        match self.power_cut_at {
            Some(n) if self.writes >= n => Err(IoError { block: 0, op: "power cut" }),
            _ => Ok(()),
        }
    }

    fn complete_all(&mut self) {
        let mut done = std::mem::take(&mut self.in_flight);
        if self.reverse_completion {
            done.reverse();
        }
        for (a, b, fua) in done {
            if fua {
                self.durable.write(a, &b, WriteFlags::empty()).unwrap();
            } else {
                self.volatile.push((a, b));
            }
        }
    }
}

impl BlockDevice for CrashDevice {
    fn block_count(&self) -> u64 {
        self.durable.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        match self.latest.get(&addr) {
            Some(b) => {
                buf.copy_from_slice(&b[..]);
                Ok(())
            }
            None => self.durable.read(addr, buf),
        }
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        if addr >= self.block_count() {
            return Err(IoError { block: addr, op: "write" });
        }
        self.powered()?;
        if flags.contains(WriteFlags::PREFLUSH) {
            self.flush()?;
        }
        self.writes += 1;
        self.latest.insert(addr, Box::new(*data));
        self.in_flight.push((addr, Box::new(*data), flags.contains(WriteFlags::FUA)));
        Ok(())
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.powered()?;
        self.complete_all();
        Ok(())
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.powered()?;
        self.flushes += 1;
        for (a, b) in std::mem::take(&mut self.volatile) {
            self.durable.write(a, &b, WriteFlags::empty()).unwrap();
        }
        Ok(())
    }
    fn discard(&mut self, _addr: u64, _count: u64) -> Result<(), IoError> {
        Ok(())
    }
}
