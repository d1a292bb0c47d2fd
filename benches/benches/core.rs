//! Criterion benchmarks of the core on the in-memory device. Short by design (small
//! samples, short measurement times): `cargo bench -p rollfs-benches` takes a couple of
//! minutes.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rollfs_benches::corework::{fresh_mem, fsyncs_since_checkpoint, roomy_mount, t, Rng, ROOT};
use rollfs_core::{Credentials, Filesystem, MemDevice, MkfsOptions, MountOptions};
use std::time::{Duration, Instant};

const CRED: Credentials = Credentials { uid: 0, gid: 0 };

fn group<'a>(c: &'a mut Criterion, name: &str) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    g
}

fn create(c: &mut Criterion) {
    let mut g = group(c, "create");
    g.throughput(Throughput::Elements(1));
    let mut fs = fresh_mem(1 << 19, &MountOptions::default());
    let mut i = 0u64;
    g.bench_function("create in root", |b| {
        b.iter(|| {
            i += 1;
            fs.create(ROOT, format!("file-{i}").as_bytes(), 0o644, CRED, t(1)).unwrap()
        })
    });
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let mut g = group(c, "lookup");
    g.throughput(Throughput::Elements(1));
    // The unkeyed hash of old images, and what `rollfs mkfs` makes (a secret hash seed,
    // per-directory keys).
    for (label, opts) in [("unkeyed", MkfsOptions::default()), ("keyed", native_mkfs())] {
        let dev = Filesystem::format(MemDevice::new(1 << 18), &opts).unwrap();
        let mut fs = Filesystem::mount(dev, &roomy_mount(), t(0)).unwrap();
        let dir = fs.mkdir(ROOT, b"d", 0o755, CRED, t(1)).unwrap().ino;
        for i in 0..10_000 {
            fs.create(dir, format!("entry-{i:05}").as_bytes(), 0o644, CRED, t(1)).unwrap();
        }
        fs.sync(t(2)).unwrap();
        let mut rng = Rng::new(3);
        g.bench_function(format!("hit in a 10k-entry dir, {label}"), |b| {
            b.iter(|| fs.lookup(dir, format!("entry-{:05}", rng.below(10_000)).as_bytes()).unwrap())
        });
        g.bench_function(format!("miss in a 10k-entry dir, {label}"), |b| {
            b.iter(|| fs.lookup(dir, b"no-such-entry").is_err())
        });
        g.bench_function(format!("list a 10k-entry dir, {label}"), |b| {
            b.iter(|| {
                let mut n = 0;
                fs.readdir(dir, 0, &mut |_| {
                    n += 1;
                    true
                })
                .unwrap();
                n
            })
        });
    }
    g.finish();
}

/// The options `rollfs mkfs` formats with, as far as directories are concerned: a secret
/// hash seed, directories v2 (per-directory keys).
fn native_mkfs() -> MkfsOptions {
    MkfsOptions { hash_seed: *b"bench-hash-seed!", dir_v2: true, ..Default::default() }
}

fn writes(c: &mut Criterion) {
    let mut g = group(c, "write");
    let mut fs = fresh_mem(1 << 18, &MountOptions::default());
    let ino = fs.create(ROOT, b"seq", 0o644, CRED, t(1)).unwrap().ino;
    let mib = vec![0x11u8; 1 << 20];
    g.throughput(Throughput::Bytes(1 << 20));
    g.bench_function("sequential 1 MiB (overwrite)", |b| b.iter(|| fs.write(ino, 0, &mib, t(2)).unwrap()));
    let ino2 = fs.create(ROOT, b"rand", 0o644, CRED, t(1)).unwrap().ino;
    fs.write(ino2, 0, &vec![0u8; 64 << 20], t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    let blk = [0x22u8; 4096];
    let mut rng = Rng::new(5);
    g.throughput(Throughput::Bytes(4096));
    g.bench_function("random 4 KiB in 64 MiB", |b| {
        b.iter(|| fs.write(ino2, rng.below(16384) * 4096, &blk, t(3)).unwrap())
    });
    g.finish();
}

fn fsync_path(c: &mut Criterion) {
    let mut g = group(c, "fsync");
    g.throughput(Throughput::Elements(1));
    let mut fs = fresh_mem(1 << 18, &roomy_mount());
    let ino = fs.create(ROOT, b"f", 0o644, CRED, t(1)).unwrap().ino;
    fs.write(ino, 0, &vec![0u8; 1 << 20], t(1)).unwrap();
    fs.sync(t(2)).unwrap();
    let blk = [0x33u8; 4096];
    let mut rng = Rng::new(9);
    g.bench_function("4 KiB overwrite + fsync", |b| {
        b.iter(|| {
            fs.write(ino, rng.below(256) * 4096, &blk, t(3)).unwrap();
            fs.fsync(ino, false, t(3)).unwrap()
        })
    });
    g.bench_function("4 KiB overwrite + fdatasync", |b| {
        b.iter(|| {
            fs.write(ino, rng.below(256) * 4096, &blk, t(3)).unwrap();
            fs.fsync(ino, true, t(3)).unwrap()
        })
    });
    g.finish();
}

fn checkpoint(c: &mut Criterion) {
    let mut g = group(c, "checkpoint");
    for n in [10u32, 100, 1000] {
        let mut fs = fresh_mem(1 << 18, &roomy_mount());
        let inos: Vec<u32> =
            (0..n).map(|i| fs.create(ROOT, format!("c{i}").as_bytes(), 0o644, CRED, t(1)).unwrap().ino).collect();
        fs.sync(t(1)).unwrap();
        let blk = [0x44u8; 4096];
        g.bench_function(format!("sync after {n} dirty files"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    for &ino in &inos {
                        fs.write(ino, 0, &blk, t(2)).unwrap();
                    }
                    let start = Instant::now();
                    fs.sync(t(2)).unwrap();
                    total += start.elapsed();
                }
                total
            })
        });
    }
    g.finish();
}

fn roll_forward(c: &mut Criterion) {
    let mut g = group(c, "roll-forward");
    for n in [0u64, 100, 1000] {
        let mut fs = fresh_mem(1 << 18, &roomy_mount());
        fsyncs_since_checkpoint(&mut fs, 8, n);
        let image = fs.into_device();
        g.bench_function(format!("mount after {n} fsyncs"), |b| {
            b.iter_batched(
                || image.clone(),
                |dev| Filesystem::mount(dev, &MountOptions::default(), t(10)).unwrap(),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, create, lookup, writes, fsync_path, checkpoint, roll_forward);
criterion_main!(benches);
