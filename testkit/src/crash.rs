//! The crash model of docs/INVARIANTS.md as a [`BlockDevice`] for native tests, and the
//! torn-write rule every crash-image builder applies.
//!
//! [`CrashDevice`]: writes stay in flight until `wait_writes` (completing in submission
//! or reverse order), completed writes sit in a volatile cache until `flush`, FUA writes
//! are durable on completion, PREFLUSH flushes first. [`CrashDevice::crash`] builds the
//! image a power loss would leave, keeping a chosen subset of the volatile and in-flight
//! writes; [`CrashDevice::crash_torn`] may also tear each kept write at 512-byte sectors
//! ([`tear`], from rollfs-crash). The crash explorer and `rollfs crashtest` explore the
//! same model over recorded traces with rollfs-crash's walker; this device is the live
//! form the core's own tests drive directly (a power cut at the N-th write, completion
//! order chosen by the test).

use rollfs_core::Block;
use rollfs_core::{BlockDevice, IoError, MemDevice, WriteFlags};
use std::collections::BTreeMap;

/// The torn-write rule and sector size are the shared crash model's (rollfs-crash).
pub use rollfs_crash::{tear, SECTORS_PER_BLOCK, SECTOR_SIZE};

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
        self.crash_torn(|i| if keep(i) { 0xFF } else { 0 })
    }

    /// The image after a power loss where pending write `i` (as in [`crash`](Self::crash))
    /// reached the media in the sectors of `mask(i)` ([`tear`]; 0 = lost, `0xFF` = whole).
    pub fn crash_torn(&self, mask: impl Fn(usize) -> u8) -> MemDevice {
        let mut img = self.durable.clone();
        let all = self.volatile.iter().map(|(a, b)| (*a, b)).chain(self.in_flight.iter().map(|(a, b, _)| (*a, b)));
        for (i, (a, b)) in all.enumerate() {
            match mask(i) {
                0 => {}
                0xFF => img.write(a, b, WriteFlags::empty()).unwrap(),
                m => {
                    let mut old = rollfs_core::zero_block();
                    img.read(a, &mut old).unwrap();
                    img.write(a, &tear(&old, b, m), WriteFlags::empty()).unwrap();
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rollfs_core::BLOCK_SIZE;

    fn blk(v: u8) -> Block {
        [v; BLOCK_SIZE]
    }

    fn val(d: &mut MemDevice, addr: u64, at: usize) -> u8 {
        let mut b = rollfs_core::zero_block();
        d.read(addr, &mut b).unwrap();
        b[at]
    }

    #[test]
    fn flush_covers_completed_writes_only() {
        let mut d = CrashDevice::new(MemDevice::new(8));
        d.write(1, &blk(1), WriteFlags::empty()).unwrap();
        d.wait_writes().unwrap();
        d.write(2, &blk(2), WriteFlags::empty()).unwrap();
        d.flush().unwrap();
        let mut img = d.crash_durable_only();
        assert_eq!((val(&mut img, 1, 0), val(&mut img, 2, 0)), (1, 0));
        assert_eq!(d.pending(), 1);
        let mut img = d.crash(|_| true);
        assert_eq!(val(&mut img, 2, 0), 2);
        d.write(3, &blk(3), WriteFlags::FUA).unwrap();
        d.wait_writes().unwrap();
        assert_eq!(val(&mut d.crash_durable_only(), 3, 0), 3, "FUA durable once complete");
    }

    #[test]
    fn torn_writes_keep_old_sectors() {
        let mut d = CrashDevice::new(MemDevice::new(8));
        d.write(5, &blk(1), WriteFlags::empty()).unwrap();
        d.wait_writes().unwrap();
        d.flush().unwrap();
        d.write(5, &blk(2), WriteFlags::empty()).unwrap();
        let mut img = d.crash_torn(|_| 0b1000_0001);
        assert_eq!(val(&mut img, 5, 0), 2);
        assert_eq!(val(&mut img, 5, SECTOR_SIZE), 1);
        assert_eq!(val(&mut img, 5, 6 * SECTOR_SIZE + 511), 1);
        assert_eq!(val(&mut img, 5, 7 * SECTOR_SIZE), 2);
    }
}
