//! Segment-cleaning benchmark (issue 6): fills an in-memory image to 50, 80, 90 and 95 %
//! of its user capacity, then overwrites random 4 KiB blocks of those files (uniformly,
//! fsync every 64 writes) for several times the device size, and reports per utilisation:
//! write amplification (device blocks written / user blocks written), throughput in the
//! first and last tenth, the longest single operation, and the share of time spent in
//! operations that cleaned. A benchmark, not a test: nothing here is asserted.
//!
//! `cargo run --release -p rollfs-benches --bin cleaning [-- --quick]`

use rollfs_core::*;
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

struct Row {
    util: u64,
    wa: f64,
    first_tenth_ops: f64,
    last_tenth_ops: f64,
    longest: Duration,
    clean_share: f64,
    gc_segments: u64,
    gc_moved: u64,
    ssr_blocks: u64,
    /// Device blocks per user block, by kind: data (user data, moved data), nodes, metadata.
    per_user: [f64; 3],
    checkpoints: u64,
}

fn device_blocks(s: &Stats) -> u64 {
    s.data_blocks_written + s.node_blocks_written + s.meta_blocks_written
}

fn run(util: u64, device_mib: u64, rounds: u64, seed: u64) -> Row {
    let blocks = device_mib * 256;
    let dev = Filesystem::format(MemDevice::new(blocks), &MkfsOptions::default()).unwrap();
    let mount = MountOptions { dirty_bytes_max: 16 << 20, ..Default::default() };
    let t0 = Timestamp::new(1_700_000_000, 0);
    let mut fs = Filesystem::mount(dev, &mount, t0).unwrap();
    let cap = fs.statfs().unwrap().blocks;
    let file_blocks = 256u64; // 1 MiB files
    let nfiles = cap * util / 100 / (file_blocks + 1);
    let cred = Credentials::default();
    let chunk = vec![0x5au8; (file_blocks * 4096) as usize];
    let mut inos = Vec::new();
    for f in 0..nfiles {
        let ino = fs.create(1, format!("f{f}").as_bytes(), 0o644, cred, t0).unwrap().ino;
        fs.write(ino, 0, &chunk, t0).unwrap();
        inos.push(ino);
    }
    fs.sync(t0).unwrap();
    let before = fs.stats();
    let total = blocks * rounds;
    let tenth = (total / 10).max(1);
    let mut rng = Rng(seed);
    let mut longest = Duration::ZERO;
    let mut clean_time = Duration::ZERO;
    let mut tenth_start = Instant::now();
    let (mut first_tenth, mut last_tenth) = (0.0, 0.0);
    let start = Instant::now();
    let block = [0xa5u8; 4096];
    for i in 0..total {
        let f = (rng.next() % nfiles) as usize;
        let b = rng.next() % file_blocks;
        let now = Timestamp::new(1_700_000_000 + (i / 1000) as i64, 0);
        let gc_before = fs.stats().gc_segments;
        let op = Instant::now();
        fs.write(inos[f], b * 4096, &block, now).unwrap_or_else(|e| panic!("write at {util}%: {e}"));
        if i % 64 == 63 {
            fs.fsync(inos[f], false, now).unwrap();
        }
        let took = op.elapsed();
        longest = longest.max(took);
        if fs.stats().gc_segments != gc_before {
            clean_time += took;
        }
        if (i + 1) % tenth == 0 {
            let rate = tenth as f64 / tenth_start.elapsed().as_secs_f64();
            if i + 1 == tenth {
                first_tenth = rate;
            }
            last_tenth = rate;
            tenth_start = Instant::now();
        }
    }
    fs.sync(t0).unwrap();
    let elapsed = start.elapsed();
    let after = fs.stats();
    let device = device_blocks(&after) - device_blocks(&before);
    let mut dev = fs.unmount(t0).unwrap();
    let report = fsck::check(&mut dev).unwrap();
    assert!(report.is_clean(), "fsck after the {util}% run: {:?}", report.problems);
    Row {
        util,
        wa: device as f64 / total as f64,
        first_tenth_ops: first_tenth,
        last_tenth_ops: last_tenth,
        longest,
        clean_share: clean_time.as_secs_f64() / elapsed.as_secs_f64(),
        gc_segments: after.gc_segments - before.gc_segments,
        gc_moved: after.gc_blocks_moved - before.gc_blocks_moved,
        ssr_blocks: after.ssr_blocks - before.ssr_blocks,
        per_user: [
            (after.data_blocks_written - before.data_blocks_written) as f64 / total as f64,
            (after.node_blocks_written - before.node_blocks_written) as f64 / total as f64,
            (after.meta_blocks_written - before.meta_blocks_written) as f64 / total as f64,
        ],
        checkpoints: after.checkpoints - before.checkpoints,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (mib, rounds) = if quick { (128, 1) } else { (512, 3) };
    println!("cleaning benchmark: {mib} MiB in-memory image, 2 MiB segments, 5% overprovisioning,");
    println!("uniform random 4 KiB overwrites for {rounds}x the device size, fsync every 64 writes\n");
    println!("| utilisation | write amplification | ops/s first tenth | ops/s last tenth | longest op | cleaning time share | segments cleaned | blocks moved | blocks written by SSR |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for (k, util) in [50u64, 80, 90, 95].into_iter().enumerate() {
        let r = run(util, mib, rounds, 42 + k as u64);
        println!(
            "| {}% | {:.2} | {:.0} | {:.0} | {:.1} ms | {:.0}% | {} | {} | {} |",
            r.util,
            r.wa,
            r.first_tenth_ops,
            r.last_tenth_ops,
            r.longest.as_secs_f64() * 1e3,
            r.clean_share * 100.0,
            r.gc_segments,
            r.gc_moved,
            r.ssr_blocks
        );
        rows.push(r);
    }
    println!("\nwhere the device writes go, per user block written:\n");
    println!("| utilisation | data | nodes | metadata | checkpoints |");
    println!("|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {}% | {:.3} | {:.3} | {:.3} | {} |",
            r.util, r.per_user[0], r.per_user[1], r.per_user[2], r.checkpoints
        );
    }
    let longest = rows.iter().map(|r| r.longest).max().unwrap_or_default();
    println!(
        "write amplification: 50%={:.2} 80%={:.2} 90%={:.2} 95%={:.2}; longest op {:.0}ms",
        rows[0].wa,
        rows[1].wa,
        rows[2].wa,
        rows[3].wa,
        longest.as_secs_f64() * 1e3
    );
}
