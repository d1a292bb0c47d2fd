//! The block-device interface the core is handed, and an in-memory device for tests.
//!
//! The trait expresses what real devices do (and what the crash model of docs/INVARIANTS.md
//! describes): a write is *submitted* and completes later, possibly out of order with
//! other writes; [`BlockDevice::wait_writes`] waits for every submitted write to complete
//! (the writeback wait); [`BlockDevice::flush`] makes durable every write that had
//! completed before it and nothing still in flight; a write with [`WriteFlags::FUA`] is
//! durable when it completes; [`WriteFlags::PREFLUSH`] issues a flush before the write.
//!
//! Contract for implementations: a read returns the most recently *submitted* data of a
//! block (in-flight writes included), as a page cache would; never-written blocks read as
//! zeros. Errors carry the block address and the operation.

use crate::layout::BLOCK_SIZE;
use crate::Block;
use alloc::boxed::Box;
use alloc::collections::BTreeMap;

bitflags::bitflags! {
    /// Flags of one block write.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct WriteFlags: u8 {
        /// Force unit access: durable as soon as the write completes.
        const FUA = 1;
        /// Flush the volatile cache before this write is performed.
        const PREFLUSH = 2;
    }
}

/// A failed device operation: which block (or `u64::MAX` for a flush) and which operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoError {
    pub block: u64,
    pub op: &'static str,
}

impl IoError {
    pub const FLUSH_BLOCK: u64 = u64::MAX;
}

/// A block device as the core sees it. See the module documentation for the ordering model.
pub trait BlockDevice {
    /// Size of the device in 4 KiB blocks.
    fn block_count(&self) -> u64;
    /// Reads one block (the most recently submitted contents).
    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError>;
    /// Reads `blocks.len()` consecutive blocks starting at `addr`, each with the same
    /// contract as [`BlockDevice::read`]. The default reads them one at a time; a device
    /// that can serve a run in one request (one `preadv`) overrides it: a sequential file
    /// read maps to runs of adjacent blocks.
    fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
        for (i, b) in blocks.iter_mut().enumerate() {
            self.read(addr + i as u64, b)?;
        }
        Ok(())
    }
    /// Called when a checkpoint has committed and the blocks it freed may be written or
    /// discarded from now on (before any of that happens). Blocks still referenced never
    /// change, so a driver that reads data blocks outside the filesystem's lock trusts what
    /// it read only if no fence came in between (`rollfs::device::DeviceReader`). The
    /// default does nothing.
    fn reuse_fence(&mut self) {}
    /// Submits one block write. It may complete at any later time, in any order with other
    /// in-flight writes, until [`BlockDevice::wait_writes`] is called.
    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError>;
    /// Waits until every submitted write has completed. Reports a write that failed.
    fn wait_writes(&mut self) -> Result<(), IoError>;
    /// Makes durable every write that has completed. Writes still in flight are not covered.
    fn flush(&mut self) -> Result<(), IoError>;
    /// Tells the device that `count` blocks from `addr` no longer hold data (TRIM).
    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError>;
    /// What a driver does before an online grow (`Filesystem::grow`): extends an image file
    /// to at least `want` blocks (sparse: nothing is written), or reads a block device's
    /// size again (a partition grown under the mount); returns the device's length in
    /// blocks now, which is then [`BlockDevice::block_count`]. Never shortens the device.
    /// The default: the length the device has.
    fn refresh_size(&mut self, want: u64) -> Result<u64, IoError> {
        let _ = want;
        Ok(self.block_count())
    }
}

/// Forwards the trait through a pointer type (a boxed device, a borrowed one).
macro_rules! forward_block_device {
    ($($ptr:ty),*) => {$(
        impl<T: BlockDevice + ?Sized> BlockDevice for $ptr {
            fn block_count(&self) -> u64 {
                (**self).block_count()
            }
            fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
                (**self).read(addr, buf)
            }
            fn read_run(&mut self, addr: u64, blocks: &mut [Block]) -> Result<(), IoError> {
                (**self).read_run(addr, blocks)
            }
            fn reuse_fence(&mut self) {
                (**self).reuse_fence()
            }
            fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
                (**self).write(addr, data, flags)
            }
            fn wait_writes(&mut self) -> Result<(), IoError> {
                (**self).wait_writes()
            }
            fn flush(&mut self) -> Result<(), IoError> {
                (**self).flush()
            }
            fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
                (**self).discard(addr, count)
            }
            fn refresh_size(&mut self, want: u64) -> Result<u64, IoError> {
                (**self).refresh_size(want)
            }
        }
    )*};
}
forward_block_device!(Box<T>, &mut T);

/// Reads block `addr` into `buf` and returns `check` of it; when that is a failure
/// (`failed`), reads the block once more and returns the check of the second read.
///
/// Flash can return flipped bits once (read disturb) and the right ones on a retry. Without
/// the second read, one misread checkpoint pack at mount rolls the filesystem back to the
/// older pack, and one misread chain node or batch block at recovery drops an fsync, both
/// silently; a misread node or table block refuses the mount. A block that is really
/// damaged (or never written, as a chain's end) fails twice, at the cost of one read. An
/// I/O error is not retried: it is reported (docs/INVARIANTS.md, "Lying devices").
pub fn read_twice_if<D: BlockDevice + ?Sized, T>(
    dev: &mut D,
    addr: u64,
    buf: &mut Block,
    mut check: impl FnMut(&Block) -> T,
    failed: impl Fn(&T) -> bool,
) -> Result<T, IoError> {
    dev.read(addr, buf)?;
    let first = check(buf);
    if !failed(&first) {
        return Ok(first);
    }
    dev.read(addr, buf)?;
    Ok(check(buf))
}

/// [`read_twice_if`] for a check that reports corruption as an error: read again when the
/// first read fails it.
pub fn read_verified<D: BlockDevice + ?Sized, T>(
    dev: &mut D,
    addr: u64,
    buf: &mut Block,
    check: impl FnMut(&Block) -> crate::Result<T>,
) -> crate::Result<T> {
    read_twice_if(dev, addr, buf, check, |r| matches!(r, Err(crate::Error::Corrupt { .. })))?
}

/// Counters kept by [`MemDevice`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemDeviceCounters {
    pub reads: u64,
    pub writes: u64,
    pub fua_writes: u64,
    pub flushes: u64,
    pub discards: u64,
}

/// A sparse in-memory device whose writes complete immediately and are durable at once.
/// It can be told to fail reads or writes, for error-path tests.
#[derive(Debug, Clone)]
pub struct MemDevice {
    blocks: BTreeMap<u64, Box<Block>>,
    block_count: u64,
    pub counters: MemDeviceCounters,
    /// When set, the write with this index (0-based, counted in `counters.writes`) and every
    /// later one fail.
    pub fail_writes_from: Option<u64>,
    /// When set, reads of this block fail.
    pub fail_read_block: Option<u64>,
    /// When set, the read with this index (counted in `counters.reads`, which a failed read
    /// does not advance) fails, once: then it is cleared. Cold-cache tests fail each read
    /// an operation makes in turn.
    pub fail_nth_read: Option<u64>,
    /// When set, the read with this index (counted as `fail_nth_read`) returns its block
    /// with one bit flipped, once, as flash with read disturb does: the media and a second
    /// read are right (`read_twice_if`).
    pub flip_nth_read: Option<u64>,
}

impl MemDevice {
    pub fn new(block_count: u64) -> MemDevice {
        MemDevice {
            blocks: BTreeMap::new(),
            block_count,
            counters: MemDeviceCounters::default(),
            fail_writes_from: None,
            fail_read_block: None,
            fail_nth_read: None,
            flip_nth_read: None,
        }
    }

    /// Direct access for tests that corrupt an image on purpose.
    pub fn block_mut(&mut self, addr: u64) -> &mut Block {
        self.blocks.entry(addr).or_insert_with(|| Box::new([0u8; BLOCK_SIZE]))
    }

    /// Makes the device `block_count` blocks long, as an image file extended (sparse) or
    /// cut: the blocks past a smaller end are dropped. Tests of `rollfs resize` use it.
    pub fn set_block_count(&mut self, block_count: u64) {
        self.blocks.retain(|&a, _| a < block_count);
        self.block_count = block_count;
    }

    /// Number of blocks that have ever been written (the device is sparse).
    pub fn allocated_block_count(&self) -> usize {
        self.blocks.len()
    }

    /// The addresses of the blocks ever written, in order: what a sparse image file has
    /// allocated, and what a sparse-aware flash (bmaptool) copies.
    pub fn allocated_blocks(&self) -> impl Iterator<Item = u64> + '_ {
        self.blocks.keys().copied()
    }
}

impl BlockDevice for MemDevice {
    fn block_count(&self) -> u64 {
        self.block_count
    }

    fn read(&mut self, addr: u64, buf: &mut Block) -> Result<(), IoError> {
        if addr >= self.block_count || self.fail_read_block == Some(addr) {
            return Err(IoError { block: addr, op: "read" });
        }
        if self.fail_nth_read == Some(self.counters.reads) {
            self.fail_nth_read = None;
            return Err(IoError { block: addr, op: "read" });
        }
        let n = self.counters.reads;
        self.counters.reads += 1;
        match self.blocks.get(&addr) {
            Some(b) => buf.copy_from_slice(&b[..]),
            None => buf.fill(0),
        }
        if self.flip_nth_read == Some(n) {
            self.flip_nth_read = None;
            // A byte every checked block's checksum covers (headers, footers and payload).
            buf[100] ^= 0x10;
        }
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &Block, flags: WriteFlags) -> Result<(), IoError> {
        if addr >= self.block_count {
            return Err(IoError { block: addr, op: "write" });
        }
        if let Some(n) = self.fail_writes_from {
            if self.counters.writes >= n {
                return Err(IoError { block: addr, op: "write" });
            }
        }
        self.counters.writes += 1;
        if flags.contains(WriteFlags::FUA) {
            self.counters.fua_writes += 1;
        }
        if flags.contains(WriteFlags::PREFLUSH) {
            self.counters.flushes += 1;
        }
        match self.blocks.get_mut(&addr) {
            Some(b) => b.copy_from_slice(data),
            None => {
                self.blocks.insert(addr, Box::new(*data));
            }
        }
        Ok(())
    }

    fn wait_writes(&mut self) -> Result<(), IoError> {
        Ok(())
    }

    fn flush(&mut self) -> Result<(), IoError> {
        self.counters.flushes += 1;
        Ok(())
    }

    fn discard(&mut self, addr: u64, count: u64) -> Result<(), IoError> {
        if addr.checked_add(count).is_none_or(|end| end > self.block_count) {
            return Err(IoError { block: addr, op: "discard" });
        }
        self.counters.discards += 1;
        let doomed: alloc::vec::Vec<u64> = self.blocks.range(addr..addr + count).map(|(a, _)| *a).collect();
        for a in doomed {
            self.blocks.remove(&a);
        }
        Ok(())
    }
}
