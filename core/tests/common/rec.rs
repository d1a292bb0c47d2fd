//! A device that records the address of every write (and counts flushes) over a crash
//! device, so a test can see what one operation sent and still crash it.
use super::CrashDevice;
use rollfs_core::*;

#[derive(Clone)]
pub struct Rec {
    pub inner: CrashDevice,
    /// Every write's address, in order.
    pub writes: Vec<u64>,
    pub flushes: u64,
}

impl Rec {
    pub fn new(img: MemDevice) -> Rec {
        Rec { inner: CrashDevice::new(img), writes: Vec::new(), flushes: 0 }
    }
}

impl BlockDevice for Rec {
    fn block_count(&self) -> u64 {
        self.inner.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        self.inner.read(addr, buf)
    }
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        self.writes.push(addr);
        self.inner.write(addr, data, flags)
    }
    fn wait_writes(&mut self) -> Result<(), IoError> {
        self.inner.wait_writes()
    }
    fn flush(&mut self) -> Result<(), IoError> {
        self.flushes += 1;
        self.inner.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        self.inner.discard(addr, count)
    }
}
