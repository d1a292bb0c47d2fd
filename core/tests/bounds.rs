//! Resource bounds (DESIGN.md, "Resource bounds"): every in-memory collection of the core
//! that grows with requests has a bound, and each test here drives one to it and holds
//! the filesystem's heap to it; the deep-tree tests count the device reads of the walks
//! up the tree (issue 35, findings 5 and 9).
//!
//! The heap is measured exactly: this test binary's allocator counts the live bytes each
//! thread allocated, and the in-memory device's own blocks are left out (its calls run
//! with counting paused), so what is measured is the filesystem's memory alone.
//!
//! `ROLLFS_DEEP` sets the depth of the deep chain (default 40,000: deeper than the default
//! node cache holds; issue 35 used 120,000).

use rollfs_core::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

// ---- the counting allocator ------------------------------------------------------------

struct Counting;

thread_local! {
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

fn count(delta: i64) {
    let _ = PAUSED.try_with(|p| {
        if !p.get() {
            let _ = LIVE.try_with(|l| {
                l.set(l.get() + delta);
                let _ = PEAK.try_with(|m| m.set(m.get().max(l.get())));
            });
        }
    });
}

// SAFETY: forwards to the system allocator; the counting touches only const-initialised
// thread-locals without destructors.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            count(l.size() as i64);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            count(l.size() as i64);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        count(-(l.size() as i64));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            count(new as i64 - l.size() as i64);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Live heap bytes of this thread, the device's blocks not counted.
fn heap() -> i64 {
    LIVE.with(|l| l.get())
}

/// The highest [`heap`] since the last call (inside calls too), less the heap now.
fn peak_above_now() -> i64 {
    let now = heap();
    let p = PEAK.with(|m| m.replace(now));
    p - now
}

fn paused<T>(f: impl FnOnce() -> T) -> T {
    PAUSED.with(|p| p.set(true));
    let r = f();
    PAUSED.with(|p| p.set(false));
    r
}

/// The in-memory device, its blocks left out of the count.
struct Quiet(MemDevice);

impl BlockDevice for Quiet {
    fn block_count(&self) -> u64 {
        self.0.block_count()
    }
    fn read(&mut self, addr: u64, buf: &mut [u8; BLOCK_SIZE]) -> std::result::Result<(), IoError> {
        paused(|| self.0.read(addr, buf))
    }
    fn write(&mut self, addr: u64, data: &[u8; BLOCK_SIZE], flags: WriteFlags) -> std::result::Result<(), IoError> {
        paused(|| self.0.write(addr, data, flags))
    }
    fn wait_writes(&mut self) -> std::result::Result<(), IoError> {
        self.0.wait_writes()
    }
    fn flush(&mut self) -> std::result::Result<(), IoError> {
        self.0.flush()
    }
    fn discard(&mut self, addr: u64, count: u64) -> std::result::Result<(), IoError> {
        paused(|| self.0.discard(addr, count))
    }
}

// ---- helpers --------------------------------------------------------------------------

const C: Credentials = Credentials { uid: 0, gid: 0 };
const MIB: i64 = 1 << 20;

fn t(s: i64) -> Timestamp {
    Timestamp::new(1_700_000_000 + s, 0)
}

fn mkfs(blocks: u64, segment_blocks: u32) -> Quiet {
    let opts = MkfsOptions { segment_blocks, ..MkfsOptions::default() };
    Quiet(paused(|| Filesystem::format(MemDevice::new(blocks), &opts).unwrap()))
}

fn mount_with(dev: Quiet, opts: &MountOptions) -> Filesystem<Quiet> {
    Filesystem::mount(dev, opts, t(0)).unwrap()
}

/// A name of `len` bytes that no earlier call returned (`n` distinct).
fn fresh_name(n: u64, len: usize) -> Vec<u8> {
    let mut v = vec![b'n'; len];
    let digits = format!("{n:020}");
    v[len - 20..].copy_from_slice(digits.as_bytes());
    v
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

// ---- finding 5: what is recorded since the last checkpoint -----------------------------

/// Issue 35, finding 5, in the core: one file renamed through 30,000 fresh 255-byte names
/// (and, in a second phase, as many created and unlinked). Each removed name used to be
/// kept until the next checkpoint, and nothing else in the loop brought one: 10 MB here,
/// 4 MB/s through a mount. The filesystem's heap must stay within the since-checkpoint
/// bound (1 MiB) plus a little.
#[test]
fn a_rename_loop_through_fresh_long_names_keeps_the_heap_bounded() {
    let mut fs = mount_with(mkfs(64 << 10, 512), &MountOptions::default());
    let d = fs.mkdir(1, b"d", 0o777, C, t(1)).unwrap().ino;
    fs.create(d, &fresh_name(0, 255), 0o644, C, t(1)).unwrap();
    fs.sync(t(1)).unwrap();
    let mut n = 0u64;
    let rename_next = |fs: &mut Filesystem<Quiet>, n: &mut u64| {
        fs.rename(d, &fresh_name(*n, 255), d, &fresh_name(*n + 1, 255), RenameFlags::empty(), t(2)).unwrap();
        *n += 1;
    };
    for _ in 0..1000 {
        rename_next(&mut fs, &mut n);
    }
    let base = heap();
    let cps = fs.stats().checkpoints;
    let mut peak = 0;
    for _ in 0..30_000 {
        rename_next(&mut fs, &mut n);
        peak = peak.max(heap() - base);
    }
    eprintln!(
        "30,000 renames through fresh 255-byte names: heap grew at most {} KiB; {} checkpoints",
        peak >> 10,
        fs.stats().checkpoints - cps
    );
    assert!(peak < 2 * MIB, "renames through fresh names grew the heap by {} KiB", peak >> 10);

    // Create and unlink through fresh names: the same set, the same bound.
    let base = heap();
    let mut peak = 0;
    for i in 0..30_000 {
        let name = fresh_name(1_000_000 + i, 255);
        fs.create(d, &name, 0o644, C, t(3)).unwrap();
        fs.unlink(d, &name, t(3)).unwrap();
        peak = peak.max(heap() - base);
    }
    eprintln!("30,000 creates and unlinks through fresh 255-byte names: heap grew at most {} KiB", peak >> 10);
    assert!(peak < 2 * MIB, "create/unlink through fresh names grew the heap by {} KiB", peak >> 10);
    paused(|| fs.unmount(t(4)).unwrap());
}

/// A run of fsyncs writes segment after segment without a checkpoint, and each segment's
/// summary block (4 KiB) stayed in memory until one: 16,000 fsyncs of new 4 KiB blocks on
/// 64 KiB segments kept 8 MB of summaries. They count as dirty memory now, so the
/// dirty-memory bound (here 1 MiB) checkpoints before they pass it.
#[test]
fn a_run_of_fsyncs_keeps_segment_summaries_within_the_dirty_bound() {
    let opts = MountOptions { dirty_bytes_max: 1 << 20, ..MountOptions::default() };
    let mut fs = mount_with(mkfs(256 << 10, 16), &opts);
    let f = fs.create(1, b"log", 0o644, C, t(1)).unwrap().ino;
    fs.sync(t(1)).unwrap();
    let base = heap();
    let mut peak = 0;
    let block = [7u8; BLOCK_SIZE];
    for i in 0..16_000u64 {
        fs.write(f, i * BLOCK_SIZE as u64, &block, t(2)).unwrap();
        fs.fsync(f, false, t(2)).unwrap();
        peak = peak.max(heap() - base);
    }
    eprintln!(
        "16,000 fsyncs of new blocks: heap grew at most {} KiB; {} checkpoints, {} at the dirty bound",
        peak >> 10,
        fs.stats().checkpoints,
        fs.stats().dirty_bound_checkpoints
    );
    assert!(peak < 3 * MIB, "a run of fsyncs grew the heap by {} KiB", peak >> 10);
    paused(|| fs.unmount(t(3)).unwrap());
}

// ---- the node cache under reads ---------------------------------------------------------

/// Reads alone (lookups, getattr, readdir: `ls -l` of a big directory, `find`) loaded
/// every inode they met into the node cache, and only a change shrank it again: 8,000
/// files read after a remount cached 32 MB with a 4 MiB bound. The bound now holds after
/// every call.
#[test]
fn reading_a_big_tree_keeps_the_node_cache_within_its_bound() {
    let opts = MountOptions { clean_cache_bytes_max: 4 << 20, ..MountOptions::default() };
    let mut fs = mount_with(mkfs(256 << 10, 512), &opts);
    let d = fs.mkdir(1, b"big", 0o755, C, t(1)).unwrap().ino;
    for i in 0..8_000u64 {
        fs.create(d, format!("f{i}").as_bytes(), 0o644, C, t(1)).unwrap();
    }
    let dev = paused(|| fs.unmount(t(2)).unwrap());
    let mut fs = mount_with(dev, &opts);
    let base = heap();
    let mut peak = 0;
    let mut cookie = 0;
    let mut seen = 0;
    loop {
        let mut page = Vec::new();
        fs.readdir(d, cookie, &mut |e| {
            page.push(e);
            page.len() < 100
        })
        .unwrap();
        let Some(last) = page.last() else { break };
        cookie = last.cookie;
        for e in page.iter().filter(|e| e.name != b"." && e.name != b"..") {
            let a = fs.lookup(d, &e.name).unwrap();
            fs.getattr(a.ino).unwrap();
            seen += 1;
        }
        drop(page);
        peak = peak.max(heap() - base);
    }
    assert_eq!(seen, 8_000);
    eprintln!("lookup and getattr of 8,000 files after a remount: heap grew at most {} KiB", peak >> 10);
    assert!(peak < 6 * MIB, "reads grew the heap by {} KiB (bound: a 4 MiB node cache)", peak >> 10);
}

// ---- finding 9: walks up a deep tree ----------------------------------------------------

/// A chain of `depth` directories `d/d/d/...` under `top`; returns the bottom one.
fn chain(fs: &mut Filesystem<Quiet>, top: Ino, depth: u64) -> Ino {
    let mut cur = top;
    for _ in 0..depth {
        cur = fs.mkdir(cur, b"d", 0o755, C, t(1)).unwrap().ino;
    }
    cur
}

/// Issue 35, finding 9, in the core: a chain of `ROLLFS_DEEP` (40,000) directories, a
/// remount (cold caches), then three directories at the top renamed to the bottom and back
/// in turn, with a write and a stat of a file of the root between renames. Each move into
/// the bottom checks that the directory does not go below itself by walking up the whole
/// chain; the walk used to read every inode on the way that the node cache (16,384 nodes)
/// no longer held: tens of thousands of device reads per rename, under the lock that every
/// other request waits for. Now only the first walk reads (it records what it read), and
/// every later rename reads nothing from the device.
#[test]
fn renames_into_a_deep_chain_read_nothing_after_the_first_walk() {
    let depth = env_u64("ROLLFS_DEEP", 40_000);
    let mut fs = mount_with(mkfs(4 << 20, 512), &MountOptions::default());
    let t0 = Instant::now();
    let bottom = chain(&mut fs, 1, depth);
    let movers: Vec<Ino> =
        (0..3).map(|i| fs.mkdir(1, format!("m{i}").as_bytes(), 0o777, C, t(1)).unwrap().ino).collect();
    let own = fs.create(1, b"root-file", 0o644, C, t(1)).unwrap().ino;
    let dev = paused(|| fs.unmount(t(2)).unwrap());
    eprintln!("chain of {depth} directories made in {:?}", t0.elapsed());
    let mut fs = mount_with(dev, &MountOptions::default());
    let rename_round = |fs: &mut Filesystem<Quiet>| {
        for (i, _) in movers.iter().enumerate() {
            let name = format!("m{i}");
            fs.rename(1, name.as_bytes(), bottom, name.as_bytes(), RenameFlags::empty(), t(3)).unwrap();
            fs.write(own, 0, b"root writes", t(3)).unwrap();
            fs.getattr(own).unwrap();
            fs.rename(bottom, name.as_bytes(), 1, name.as_bytes(), RenameFlags::empty(), t(3)).unwrap();
        }
    };
    let (r0, t0, h0) = (fs.stats().device_reads, Instant::now(), heap());
    peak_above_now();
    rename_round(&mut fs);
    let first = (fs.stats().device_reads - r0, t0.elapsed());
    // The first walk reads the chain; what it reads is recorded, not cached (the node
    // cache would otherwise hold the whole chain, 4 KiB a directory, until the call ends).
    let peak = peak_above_now() + heap() - h0;
    eprintln!("the first round's heap peaked {} KiB above the start", peak >> 10);
    assert!(peak < 32 * MIB, "the first walk up {depth} directories took {} KiB of heap", peak >> 10);
    const ROUNDS: u64 = 5;
    let (r0, t0) = (fs.stats().device_reads, Instant::now());
    for _ in 0..ROUNDS {
        rename_round(&mut fs);
    }
    let renames = ROUNDS * 3 * 2;
    let (reads, took) = (fs.stats().device_reads - r0, t0.elapsed());
    eprintln!(
        "depth {depth}: first round of 6 renames {} device reads in {:?}; then {renames} renames {reads} device reads ({} per rename) in {:?} ({:?} per rename)",
        first.0,
        first.1,
        reads / renames,
        took,
        took / renames as u32
    );
    assert!(
        reads <= renames,
        "{renames} renames into a chain {depth} deep read {reads} blocks from the device ({} per rename)",
        reads / renames
    );
    paused(|| fs.unmount(t(4)).unwrap());
}

/// fsync's check for a renamed ancestor (a file below a directory renamed since the last
/// checkpoint must be found at its new path: the fsync checkpoints) walks the same chain:
/// a file at the bottom of the deep chain, fsync'd while another directory was renamed,
/// read every ancestor the node cache did not hold on every fsync.
#[test]
fn fsyncs_at_the_bottom_of_a_deep_chain_read_nothing_after_the_first_walk() {
    let depth = env_u64("ROLLFS_DEEP", 40_000);
    let mut fs = mount_with(mkfs(4 << 20, 512), &MountOptions::default());
    let bottom = chain(&mut fs, 1, depth);
    let f = fs.create(bottom, b"deep-file", 0o644, C, t(1)).unwrap().ino;
    fs.mkdir(1, b"elsewhere", 0o755, C, t(1)).unwrap();
    let dev = paused(|| fs.unmount(t(2)).unwrap());
    let mut fs = mount_with(dev, &MountOptions::default());
    fs.rename(1, b"elsewhere", 1, b"moved", RenameFlags::empty(), t(3)).unwrap();
    fs.write(f, 0, b"first", t(3)).unwrap();
    fs.fsync(f, false, t(3)).unwrap();
    let (r0, c0, t0) = (fs.stats().device_reads, fs.stats().checkpoints, Instant::now());
    const FSYNCS: u64 = 30;
    for i in 0..FSYNCS {
        fs.write(f, 0, format!("version {i}").as_bytes(), t(4)).unwrap();
        fs.fsync(f, false, t(4)).unwrap();
    }
    let (reads, took) = (fs.stats().device_reads - r0, t0.elapsed());
    eprintln!(
        "depth {depth}: {FSYNCS} fsyncs below the chain with a renamed directory elsewhere: {reads} device reads, {} checkpoints, {:?}",
        fs.stats().checkpoints - c0,
        took
    );
    assert!(reads <= FSYNCS, "{FSYNCS} fsyncs at depth {depth} read {reads} blocks from the device");
    paused(|| fs.unmount(t(5)).unwrap());
}

// ---- the in-memory parents stay true ----------------------------------------------------

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// The recorded parents (`parents.rs`) against the inodes after every change of a random
/// run of mkdir, rmdir, renames (across directories, within one, over an empty directory,
/// exchanges, into a directory's own subtree: refused), fsyncs below renamed directories,
/// dropped caches, a crash with roll-forward and a remount: every entry equals its inode's
/// parent, and a move into one's own subtree is refused however much is recorded.
#[test]
fn directory_parents_in_memory_follow_every_change() {
    let mut fs = mount_with(mkfs(64 << 10, 64), &MountOptions::default());
    let mut rng = Rng(0x5eed);
    // Live directories (the root first) and a file to fsync in each new one.
    let mut dirs: Vec<Ino> = vec![1];
    let mut next = 0u64;
    let (mut checked, mut refused, mut moved) = (0, 0, 0);
    for step in 0..3_000u64 {
        let now = t(10 + step as i64);
        let pick = |rng: &mut Rng, dirs: &[Ino]| dirs[rng.below(dirs.len() as u64) as usize];
        match rng.below(10) {
            0..=2 => {
                let p = pick(&mut rng, &dirs);
                next += 1;
                let d = fs.mkdir(p, format!("d{next}").as_bytes(), 0o755, C, now).unwrap().ino;
                let f = fs.create(d, b"f", 0o644, C, now).unwrap().ino;
                fs.write(f, 0, b"x", now).unwrap();
                dirs.push(d);
            }
            3..=6 => {
                // Rename a directory (not the root) into any directory, maybe over another.
                if dirs.len() < 3 {
                    continue;
                }
                let src = dirs[1 + rng.below(dirs.len() as u64 - 1) as usize];
                let (sp, sname) = parent_and_name(&mut fs, src);
                let np = pick(&mut rng, &dirs);
                let flags = match rng.below(4) {
                    0 => RenameFlags::EXCHANGE,
                    _ => RenameFlags::empty(),
                };
                let nname = match (flags, rng.below(3)) {
                    (RenameFlags::EXCHANGE, _) | (_, 0) => {
                        // An existing directory entry of np, if any.
                        let mut names = Vec::new();
                        fs.readdir(np, 0, &mut |e| {
                            if e.kind == FileType::Directory && e.name != b"." && e.name != b".." {
                                names.push(e.name);
                            }
                            true
                        })
                        .unwrap();
                        if names.is_empty() {
                            continue;
                        }
                        names.swap_remove(rng.below(names.len() as u64) as usize)
                    }
                    _ => {
                        next += 1;
                        format!("r{next}").into_bytes()
                    }
                };
                let below_itself = is_below(&mut fs, np, src);
                match fs.rename(sp, &sname, np, &nname, flags, now) {
                    Ok(()) => {
                        assert!(!below_itself, "moved directory {src} below itself");
                        moved += 1;
                    }
                    Err(Error::Invalid(_)) => refused += 1,
                    Err(Error::NotEmpty) | Err(Error::NotDir) | Err(Error::IsDir) => {}
                    Err(e) => panic!("rename: {e}"),
                }
                if below_itself {
                    assert!(parent_and_name(&mut fs, src).0 == sp, "a refused move changed nothing");
                }
                dirs.retain(|&d| fs.getattr(d).is_ok());
            }
            7 => {
                // rmdir of an empty directory (after its file is gone).
                let d = dirs[rng.below(dirs.len() as u64) as usize];
                if d == 1 {
                    continue;
                }
                let (p, name) = parent_and_name(&mut fs, d);
                let _ = fs.unlink(d, b"f", now);
                match fs.rmdir(p, &name, now) {
                    Ok(()) => dirs.retain(|&x| x != d),
                    Err(Error::NotEmpty) => {}
                    Err(e) => panic!("rmdir: {e}"),
                }
            }
            8 => {
                // An fsync below a (maybe) renamed directory walks up.
                let d = pick(&mut rng, &dirs);
                if let Ok(a) = fs.lookup(d, b"f") {
                    fs.write(a.ino, 0, b"y", now).unwrap();
                    fs.fsync(a.ino, false, now).unwrap();
                }
            }
            _ => match rng.below(3) {
                0 => fs.drop_clean_caches(),
                1 => {
                    // A crash after an fsync: roll-forward, then a fresh record.
                    fs.sync(now).unwrap();
                    let d = pick(&mut rng, &dirs);
                    if let Ok(a) = fs.lookup(d, b"f") {
                        fs.write(a.ino, 0, b"z", now).unwrap();
                        fs.fsync(a.ino, false, now).unwrap();
                    }
                    let dev = fs.into_device();
                    fs = mount_with(dev, &MountOptions::default());
                }
                _ => {
                    let dev = paused(|| fs.unmount(now).unwrap());
                    fs = mount_with(dev, &MountOptions::default());
                }
            },
        }
        checked += fs.verify_dir_parents().unwrap_or_else(|e| panic!("step {step}: {e}"));
    }
    eprintln!(
        "{} directories at the end, {} recorded; {moved} directories moved, {refused} moves below themselves refused; {checked} parent records checked",
        dirs.len(),
        fs.memory().dir_parents
    );
    assert!(checked > 10_000, "the run recorded too few parents to check: {checked}");
    assert!(moved > 100 && refused > 10, "the run did not exercise the loop check: {moved} moved, {refused} refused");
    paused(|| fs.unmount(t(9_999)).unwrap());
}

/// The parent directory of `d` and `d`'s name in it, found by listing the parent.
fn parent_and_name(fs: &mut Filesystem<Quiet>, d: Ino) -> (Ino, Vec<u8>) {
    let p = fs.lookup(d, b"..").unwrap().ino;
    let mut name = None;
    fs.readdir(p, 0, &mut |e| {
        if e.ino == d && e.name != b"." && e.name != b".." {
            name = Some(e.name);
        }
        true
    })
    .unwrap();
    (p, name.expect("a directory is named by its parent"))
}

/// Whether `d` is `ancestor` or below it, by ".." lookups (not the core's walk).
fn is_below(fs: &mut Filesystem<Quiet>, mut d: Ino, ancestor: Ino) -> bool {
    loop {
        if d == ancestor {
            return true;
        }
        if d == 1 {
            return false;
        }
        d = fs.lookup(d, b"..").unwrap().ino;
    }
}
