//! Workloads that drive the core directly.

use rollfs_core::{BlockDevice, Credentials, Filesystem, MemDevice, MkfsOptions, MountOptions, Stats, Timestamp};

pub const ROOT: u32 = 1;

pub fn t(sec: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + sec, 0)
}

/// A freshly formatted and mounted filesystem on a `MemDevice` of `blocks` 4 KiB blocks.
pub fn fresh_mem(blocks: u64, mount: &MountOptions) -> Filesystem<MemDevice> {
    let dev = Filesystem::format(MemDevice::new(blocks), &MkfsOptions::default()).expect("format");
    Filesystem::mount(dev, mount, t(0)).expect("mount")
}

/// Mount options that never checkpoint because of dirty data during a benchmark.
pub fn roomy_mount() -> MountOptions {
    MountOptions { dirty_bytes_max: 4 << 30, ..Default::default() }
}

/// A small deterministic generator (xorshift64*), so runs are repeatable.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Writes `n` fsyncs since the last checkpoint: `files` files are created and made durable
/// by a checkpoint (`sync`), then each fsync overwrites one 4 KiB block at a pseudo-random
/// offset of one of them (round robin) and fsyncs it. The filesystem is left mounted; drop
/// it (or take its device) without `unmount` to leave an image that needs roll-forward.
/// Returns the inode numbers.
pub fn fsyncs_since_checkpoint<D: BlockDevice>(fs: &mut Filesystem<D>, files: u32, n: u64) -> Vec<u32> {
    let cred = Credentials::default();
    let mut inos = Vec::new();
    let block = [0x5au8; 4096];
    for i in 0..files {
        let a = fs.create(ROOT, format!("f{i}").as_bytes(), 0o644, cred, t(1)).expect("create");
        fs.write(a.ino, 0, &block, t(1)).expect("write");
        inos.push(a.ino);
    }
    fs.sync(t(2)).expect("sync");
    let mut rng = Rng::new(42);
    for k in 0..n {
        let ino = inos[(k % files as u64) as usize];
        let off = rng.below(256) * 4096;
        fs.write(ino, off, &block, t(3)).expect("write");
        fs.fsync(ino, false, t(3)).expect("fsync");
    }
    inos
}

/// What one fsync cost, averaged over a run of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FsyncCost {
    pub fsyncs: u64,
    pub data_blocks: f64,
    pub node_blocks: f64,
    pub meta_blocks: f64,
    pub device_writes: f64,
    pub bytes_written: f64,
    pub flushes: f64,
    pub fua_writes: f64,
    pub checkpoint_fallbacks: f64,
}

fn per(n: u64, a: u64, b: u64) -> f64 {
    (a - b) as f64 / n as f64
}

fn cost(
    n: u64,
    s0: &Stats,
    s1: &Stats,
    d0: &rollfs_core::MemDeviceCounters,
    d1: &rollfs_core::MemDeviceCounters,
) -> FsyncCost {
    FsyncCost {
        fsyncs: n,
        data_blocks: per(n, s1.data_blocks_written, s0.data_blocks_written),
        node_blocks: per(n, s1.node_blocks_written, s0.node_blocks_written),
        meta_blocks: per(n, s1.meta_blocks_written, s0.meta_blocks_written),
        device_writes: per(n, d1.writes, d0.writes),
        bytes_written: per(n, d1.writes, d0.writes) * 4096.0,
        flushes: per(n, d1.flushes, d0.flushes),
        fua_writes: per(n, d1.fua_writes, d0.fua_writes),
        checkpoint_fallbacks: per(n, s1.fsync_checkpoint_fallbacks, s0.fsync_checkpoint_fallbacks),
    }
}

/// The scenarios of the fsync-cost table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncScenario {
    /// Overwrite one 4 KiB block of an existing file, then fsync.
    Overwrite4k,
    /// Overwrite one 4 KiB block, then fdatasync.
    Overwrite4kDatasync,
    /// Append one 4 KiB block (the size changes), then fsync.
    Append4k,
    /// Create a file, write 4 KiB, fsync (the name must be recoverable: dentry mark).
    CreateWriteFsync,
}

impl FsyncScenario {
    pub const ALL: [FsyncScenario; 4] = [
        FsyncScenario::Overwrite4k,
        FsyncScenario::Overwrite4kDatasync,
        FsyncScenario::Append4k,
        FsyncScenario::CreateWriteFsync,
    ];
    pub fn label(self) -> &'static str {
        match self {
            FsyncScenario::Overwrite4k => "overwrite 4 KiB + fsync",
            FsyncScenario::Overwrite4kDatasync => "overwrite 4 KiB + fdatasync",
            FsyncScenario::Append4k => "append 4 KiB + fsync",
            FsyncScenario::CreateWriteFsync => "create + write 4 KiB + fsync",
        }
    }
}

/// Measures the device cost of `n` fsyncs of a scenario on a `MemDevice` (1 GiB).
pub fn fsync_cost(scenario: FsyncScenario, n: u64) -> FsyncCost {
    let mut fs = fresh_mem(1 << 18, &roomy_mount());
    let cred = Credentials::default();
    let block = [0xa5u8; 4096];
    let a = fs.create(ROOT, b"base", 0o644, cred, t(1)).unwrap();
    fs.write(a.ino, 0, &vec![1u8; 1 << 20], t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    let mut rng = Rng::new(7);
    let s0 = fs.stats();
    let d0 = fs.device().counters;
    for k in 0..n {
        match scenario {
            FsyncScenario::Overwrite4k | FsyncScenario::Overwrite4kDatasync => {
                fs.write(a.ino, rng.below(256) * 4096, &block, t(3)).unwrap();
                fs.fsync(a.ino, scenario == FsyncScenario::Overwrite4kDatasync, t(3)).unwrap();
            }
            FsyncScenario::Append4k => {
                fs.write(a.ino, (1 << 20) + k * 4096, &block, t(3)).unwrap();
                fs.fsync(a.ino, false, t(3)).unwrap();
            }
            FsyncScenario::CreateWriteFsync => {
                let f = fs.create(ROOT, format!("n{k}").as_bytes(), 0o644, cred, t(3)).unwrap();
                fs.write(f.ino, 0, &block, t(3)).unwrap();
                fs.fsync(f.ino, false, t(3)).unwrap();
            }
        }
    }
    cost(n, &s0, &fs.stats(), &d0, &fs.device().counters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollforward_image_recovers_on_mount() {
        let mut fs = fresh_mem(1 << 16, &roomy_mount());
        fsyncs_since_checkpoint(&mut fs, 4, 50);
        let cps = fs.stats().checkpoints;
        let dev = fs.into_device();
        let fs2 = Filesystem::mount(dev, &MountOptions::default(), t(10)).unwrap();
        assert!(fs2.stats().recovered_nodes_walked > 0, "{:?} (checkpoints while writing: {cps})", fs2.stats());
    }

    #[test]
    fn fsync_cost_is_measured() {
        let c = fsync_cost(FsyncScenario::Overwrite4k, 20);
        assert_eq!(c.fsyncs, 20);
        assert!(c.flushes >= 1.0, "{c:?}");
        assert!(c.data_blocks >= 1.0, "{c:?}");
    }
}
