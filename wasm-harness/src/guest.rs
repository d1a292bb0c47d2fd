//! The wasmtime host of the guest (`guest/`, ABI in `ABI.md`).
//!
//! This module owns the engine configuration, the guest module (compiled once, shared
//! by every thread through an [`InstancePre`]), the host side of the device imports, and
//! [`Guest`]: one instance running one filesystem against one [`SimDevice`]. Every guest
//! call has a deadline; traps, panics (the guest's panic hook passes the message out
//! before aborting) and a passed deadline come back as [`GuestError::Trap`], never as a
//! harness crash. It also builds guest variants (core mutants) at run time.

use crate::device::{SimDevice, BLOCK_SIZE};
use crate::workload::Op;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use wasmtime::{
    Caller, Config, Engine, InstanceAllocationStrategy, InstancePre, Linker, Memory, Module, OptLevel,
    PoolingAllocationConfig, Store, Trap, TypedFunc, WasmParams, WasmResults,
};

/// The period of the engine's epoch (a thread per engine advances it).
const EPOCH_TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// Epoch ticks one guest call may run: 10 s, three orders of magnitude above what any call
/// on a simulated device takes (milliseconds), so that only a runaway loop reaches it.
/// Epoch interruption instead of fuel: fuel counts every basic block (8 % of the
/// explorer's time), an epoch check is a load and a compare at loop heads and calls. The
/// price: where a runaway loop stops depends on time, which only a bug's trap can show.
pub const CALL_DEADLINE_TICKS: u64 = 100;

/// Extra return codes of the ABI (negated), beyond errno values.
pub const E_NOT_MOUNTED: i64 = 1001;
pub const E_TREE: i64 = 1003;
/// A read failed its data checksum (EIO to users): a block a durable pointer names was
/// not written completely. Never right in a crash state: violation `data-checksum`.
pub const E_DATASUM: i64 = 1004;

/// The counters of `rollfs_core::Stats` in the order `sim_stats` returns them: the core's
/// own list (the host links the same core the guest runs, so both agree by construction;
/// a test still checks the guest's `sim_stat_names`).
pub const STAT_NAMES: [&str; rollfs_core::STAT_COUNT] = rollfs_core::Stats::NAMES;

/// The core's counters, indexed like [`STAT_NAMES`].
pub type CoreStats = [u64; STAT_NAMES.len()];

/// Index of a counter in [`CoreStats`].
pub fn stat_index(name: &str) -> usize {
    STAT_NAMES.iter().position(|n| *n == name).unwrap_or_else(|| panic!("no core counter {name}"))
}

/// Path of the guest built by build.rs.
pub const DEFAULT_GUEST_WASM: &str = env!("ROLLFS_SIM_GUEST_WASM");
const GUEST_MANIFEST: &str = env!("ROLLFS_SIM_GUEST_MANIFEST");
const OUT_DIR: &str = env!("OUT_DIR");

/// How a guest call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestError {
    /// The filesystem returned an error: the errno (or ABI code) and its message.
    Errno(i64, String),
    /// The guest trapped: a panic (with its message), a wasm trap, or a passed deadline.
    Trap(String),
}

impl GuestError {
    pub fn errno(&self) -> Option<i64> {
        match self {
            GuestError::Errno(e, _) => Some(*e),
            GuestError::Trap(_) => None,
        }
    }
}

impl std::fmt::Display for GuestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuestError::Errno(e, m) => write!(f, "error {e} ({m})"),
            GuestError::Trap(m) => write!(f, "guest trap: {m}"),
        }
    }
}

pub type GuestResult<T> = Result<T, GuestError>;

/// Per-instance host state: the device and what the guest told us before trapping.
pub struct HostState {
    pub dev: SimDevice,
    memory: Option<Memory>,
    panic: Option<String>,
}

/// A compiled guest, ready to be instantiated cheaply on any thread.
pub struct GuestModule {
    engine: Engine,
    pre: InstancePre<HostState>,
    pub wasm_path: PathBuf,
    /// The core mutant every instance selects (a guest built with `rollfs-core/mutants`).
    mutant: Option<String>,
    /// Instances given back by [`GuestModule::release`], reset, without a device.
    spare: Mutex<Vec<Guest>>,
}

/// Reset instances a module keeps for reuse (a few per checking thread).
const SPARE_GUESTS_MAX: usize = 8;

/// An instance whose memory grew beyond this is not kept: a fresh one starts smaller.
const SPARE_MEMORY_MAX_BYTES: usize = 64 << 20;

/// Bytes of each pooled guest memory kept resident between instances.
const GUEST_MEMORY_KEEP_RESIDENT_BYTES: usize = 32 << 20;

/// Bytes of each pooled function table kept resident: all of it (the guest's table has
/// fewer than a hundred entries, under one page).
const GUEST_TABLE_KEEP_RESIDENT_BYTES: usize = 64 << 10;

fn engine() -> anyhow::Result<Engine> {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.cranelift_opt_level(OptLevel::Speed);
    // Copy-on-write memory initialisation plus the pooling allocator make an
    // instantiation a slot reuse and a few page remaps instead of a fresh memory.
    config.memory_init_cow(true);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_core_instances(64).total_memories(64).total_tables(64).max_memory_size(512 << 20);
    // Workload runs, trapped guests and `--no-memo` make fresh instances (before instances
    // were reused, every crash state did): without this, each instance's heap is
    // decommitted on release and faulted in again page by page (a quarter of the
    // explorer's time went to page faults and madvise). Kept resident, a slot's pages are
    // zeroed in place instead.
    pool.linear_memory_keep_resident(GUEST_MEMORY_KEEP_RESIDENT_BYTES);
    // The same for the function table: decommitted on release, it was faulted in again by
    // the first indirect calls of every instance (with a TLB shootdown across the
    // explorer's threads for each decommit; about a third of the explorer's system time).
    pool.table_keep_resident(GUEST_TABLE_KEEP_RESIDENT_BYTES);
    // With PAGEMAP_SCAN (Linux 6.7+; ignored elsewhere) a released memory resets only the
    // pages the instance touched instead of memsetting the whole resident region.
    pool.pagemap_scan(wasmtime::Enabled::Auto);
    let mut pooled = config.clone();
    pooled.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    let engine = match Engine::new(&pooled) {
        Ok(e) => e,
        // Some sandboxes refuse the large virtual reservation of a pool; on-demand
        // allocation is slower but equivalent.
        Err(_) => Engine::new(&config).map_err(|e| anyhow::anyhow!("{e}"))?,
    };
    // The clock of every call's deadline; it ends with the engine.
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("rollfs-sim-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            match weak.upgrade() {
                Some(e) => e.increment_epoch(),
                None => break,
            }
        })
        .map_err(|e| anyhow::anyhow!("starting the epoch thread: {e}"))?;
    Ok(engine)
}

/// The guest compiled for `engine`: loaded from the file this function wrote beside
/// `wasm_path` for the same bytes and a compatible engine, else compiled and that file
/// (re)written. Compiling is most of a `rollfs-sim` process's start-up (about 1 s of CPU on
/// 2 cores, in every command, test process and 60-second exploration); loading is a few
/// milliseconds. The file's name carries a digest of the wasm bytes and of the engine's
/// compatibility hash, and wasmtime refuses an artifact of another version or
/// configuration (then it is compiled again): a stale file is never used.
fn compile_cached(engine: &Engine, wasm_path: &Path, bytes: &[u8]) -> anyhow::Result<Module> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    engine.precompile_compatibility_hash().hash(&mut h);
    let stem = wasm_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let cache = wasm_path.with_file_name(format!("{stem}.{:016x}.cwasm", h.finish()));
    if cache.exists() {
        // SAFETY: the file is one `serialize` below wrote (its name is this process's key
        // for these bytes and this engine, in the build's own output directory), renamed
        // into place whole; wasmtime checks its version and configuration.
        if let Ok(m) = unsafe { Module::deserialize_file(engine, &cache) } {
            return Ok(m);
        }
    }
    let module = Module::new(engine, bytes).map_err(|e| anyhow::anyhow!("compiling guest: {e}"))?;
    // Best effort: a read-only directory or a concurrent writer only costs the next process
    // a compile. Written under a unique name and renamed, so a reader never sees half.
    if let Ok(art) = module.serialize() {
        // Unique per process and per call (threads of one process may both compile).
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = cache.with_extension(format!("tmp{}-{n}", std::process::id()));
        if std::fs::write(&tmp, art).is_err() || std::fs::rename(&tmp, &cache).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        // Older artifacts of this wasm file (other bytes or engines) are dropped.
        if let (Some(dir), Some(keep)) = (cache.parent(), cache.file_name()) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let n = e.file_name();
                let n = n.to_string_lossy();
                if n.starts_with(&format!("{stem}.")) && n.ends_with(".cwasm") && *n != *keep.to_string_lossy() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
    Ok(module)
}

fn mem_slice(data: &mut [u8], ptr: i32, len: usize) -> wasmtime::Result<&mut [u8]> {
    let start = ptr as u32 as usize;
    data.get_mut(start..start.saturating_add(len))
        .ok_or_else(|| wasmtime::format_err!("guest passed an out-of-bounds buffer"))
}

fn linker(engine: &Engine) -> wasmtime::Result<Linker<HostState>> {
    let mut l = Linker::new(engine);
    l.func_wrap("rollfs_dev", "block_count", |c: Caller<'_, HostState>| c.data().dev.block_count() as i64)?;
    l.func_wrap("rollfs_dev", "read", |mut c: Caller<'_, HostState>, addr: i64, ptr: i32| {
        let mem = c.data().memory.expect("memory");
        let (data, st) = mem.data_and_store_mut(&mut c);
        let buf = mem_slice(data, ptr, BLOCK_SIZE)?;
        Ok(st.dev.read(addr as u64, buf))
    })?;
    l.func_wrap("rollfs_dev", "write", |mut c: Caller<'_, HostState>, addr: i64, ptr: i32, flags: i32| {
        let mem = c.data().memory.expect("memory");
        let (data, st) = mem.data_and_store_mut(&mut c);
        let buf = mem_slice(data, ptr, BLOCK_SIZE)?;
        Ok(st.dev.write(addr as u64, buf, flags as u8))
    })?;
    l.func_wrap("rollfs_dev", "wait_writes", |mut c: Caller<'_, HostState>| c.data_mut().dev.wait_writes())?;
    l.func_wrap("rollfs_dev", "flush", |mut c: Caller<'_, HostState>| c.data_mut().dev.flush())?;
    l.func_wrap("rollfs_dev", "discard", |mut c: Caller<'_, HostState>, addr: i64, count: i64| {
        c.data_mut().dev.discard(addr as u64, count as u64)
    })?;
    l.func_wrap("rollfs_host", "panic_message", |mut c: Caller<'_, HostState>, ptr: i32, len: i32| {
        let mem = c.data().memory.expect("memory");
        let (data, st) = mem.data_and_store_mut(&mut c);
        let msg = mem_slice(data, ptr, len.max(0) as usize)?;
        st.panic = Some(String::from_utf8_lossy(msg).into_owned());
        Ok(())
    })?;
    // The core's CRC32C (its feature `embedder-crc32c`): the crc32c crate's function, folded
    // with 512-bit carry-less multiplies where the CPU has them (`crate::crc`).
    l.func_wrap("rollfs_host", "crc32c_append", |c: Caller<'_, HostState>, seed: i32, ptr: i32, len: i32| {
        let mem = c.data().memory.expect("memory");
        let data = mem.data(&c);
        let start = ptr as u32 as usize;
        let len = usize::try_from(len).map_err(|_| wasmtime::format_err!("guest passed a negative length"))?;
        let bytes = data
            .get(start..start.saturating_add(len))
            .ok_or_else(|| wasmtime::format_err!("guest passed an out-of-bounds buffer"))?;
        Ok(crate::crc::crc32c_append(seed as u32, bytes) as i32)
    })?;
    Ok(l)
}

impl GuestModule {
    pub fn load(wasm_path: &Path) -> anyhow::Result<GuestModule> {
        let engine = engine()?;
        let bytes = std::fs::read(wasm_path).map_err(|e| anyhow::anyhow!("reading {}: {e}", wasm_path.display()))?;
        let module = compile_cached(&engine, wasm_path, &bytes)?;
        let pre = linker(&engine)
            .and_then(|l| l.instantiate_pre(&module))
            .map_err(|e| anyhow::anyhow!("linking guest: {e}"))?;
        Ok(GuestModule { engine, pre, wasm_path: wasm_path.to_path_buf(), mutant: None, spare: Mutex::default() })
    }

    /// The guest built with every core mutant (`rollfs-core/mutants`), each instance running
    /// as mutant `name`. One build serves every mutant (the build is cached by cargo).
    pub fn mutant(name: &str) -> anyhow::Result<GuestModule> {
        let path = build_guest(&["rollfs-core/mutants".to_string()])?;
        let mut m = GuestModule::load(&path)?;
        // Fail here, not in every instance, if the name is not a mutant of this core.
        m.instantiate(SimDevice::new(crate::device::Image::blank(16), 0))
            .and_then(|mut g| g.select_mutant(name))
            .map_err(|e| anyhow::anyhow!("mutant {name}: {e}"))?;
        m.mutant = Some(name.to_string());
        Ok(m)
    }

    /// The guest built by build.rs, compiled once per process.
    pub fn default_guest() -> anyhow::Result<Arc<GuestModule>> {
        static CACHE: OnceLock<Mutex<Option<Arc<GuestModule>>>> = OnceLock::new();
        let mut slot = CACHE.get_or_init(|| Mutex::new(None)).lock().unwrap();
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let m = Arc::new(GuestModule::load(Path::new(DEFAULT_GUEST_WASM))?);
        *slot = Some(m.clone());
        Ok(m)
    }

    /// An instance whose device is `dev`: a kept one ([`GuestModule::release`]) or a new one.
    pub fn instantiate(&self, dev: SimDevice) -> GuestResult<Guest> {
        if let Some(mut g) = self.spare.lock().unwrap().pop() {
            g.store.data_mut().dev = dev;
            return Ok(g);
        }
        self.instantiate_fresh(dev)
    }

    /// A new instance whose device is `dev` (never a kept one: `explore --no-memo`).
    pub fn instantiate_fresh(&self, dev: SimDevice) -> GuestResult<Guest> {
        let mut store = Store::new(&self.engine, HostState { dev, memory: None, panic: None });
        let instance = self.pre.instantiate(&mut store).map_err(|e| GuestError::Trap(format!("instantiate: {e}")))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| GuestError::Trap("guest exports no memory".into()))?;
        store.data_mut().memory = Some(memory);
        let mut g =
            Guest { store, instance, memory, handles: Default::default(), trapped: false, funcs: Default::default() };
        if let Some(m) = &self.mutant {
            g.select_mutant(m)?;
        }
        Ok(g)
    }

    /// Instances kept for reuse ([`GuestModule::release`]).
    pub fn kept(&self) -> usize {
        self.spare.lock().unwrap().len()
    }

    /// Ends guest `g` as [`Guest::into_device`] does (a power loss: nothing more reaches the
    /// device) and returns its device; the instance, reset with `sim_reset`, is kept for a
    /// later [`GuestModule::instantiate`] when it never trapped. Making and dropping an
    /// instance (its memory slot set up and reset) was about a twelfth of the explorer's
    /// time, as much as a recovery mount on a small device.
    ///
    /// The reset runs against an empty stand-in device: it does no I/O, and if it did, that
    /// I/O would reach no device of the caller's and the instance would not be kept.
    pub fn release(&self, mut g: Guest) -> SimDevice {
        let stand_in = SimDevice::new(crate::device::Image::blank(0), 0);
        let dev = std::mem::replace(&mut g.store.data_mut().dev, stand_in);
        let reset = !g.trapped && g.call("sim_reset", ()).is_ok();
        let quiet = g.store.data().dev.trace.events.is_empty() && g.store.data().panic.is_none();
        if reset && quiet && g.memory.data_size(&g.store) <= SPARE_MEMORY_MAX_BYTES {
            g.handles.clear();
            let mut spare = self.spare.lock().unwrap();
            if spare.len() < SPARE_GUESTS_MAX {
                spare.push(g);
            }
        }
        dev
    }
}

/// What a device is formatted with (the guest's `sim_format` features; ABI.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Features {
    /// Namespace records in the fsync chain (`FEATURE_INCOMPAT_NS_RECORDS`; `@nsrec`).
    pub nsrec: bool,
    /// Data beside its chain (`FEATURE_INCOMPAT_MIXED_NODE`; `@nomixed` turns it off).
    pub mixed: bool,
}

impl Features {
    /// As `rollfs mkfs` makes images.
    pub const MKFS_DEFAULT: Features = Features { nsrec: true, mixed: true };

    /// The guest's `FORMAT_NS_RECORDS` (1) and `FORMAT_NO_MIXED` (2).
    fn bits(self) -> i32 {
        i32::from(self.nsrec) | (i32::from(!self.mixed) << 1)
    }
}

/// One guest instance with its device.
pub struct Guest {
    store: Store<HostState>,
    instance: wasmtime::Instance,
    memory: Memory,
    /// Open handles (`open PATH`): inode numbers by the path string they were opened with.
    handles: std::collections::HashMap<String, Vec<i64>>,
    /// A call trapped, or the host saw a fault in what the guest gave it: the instance may
    /// have stopped anywhere, or its heap may be damaged; it is never reused.
    trapped: bool,
    /// The exports called so far, typed, by name: looking an export up and checking its
    /// type on every call was about 2 % of the explorer's time (a crash state makes a dozen
    /// calls, and instances are reused for thousands of states).
    funcs: std::collections::HashMap<&'static str, Box<dyn std::any::Any + Send>>,
}

/// Path arguments copied into the guest's scratch buffer: `(ptr, len)` pairs.
struct Args(Vec<(i32, i32)>);

impl Guest {
    pub fn device(&self) -> &SimDevice {
        &self.store.data().dev
    }

    pub fn device_mut(&mut self) -> &mut SimDevice {
        &mut self.store.data_mut().dev
    }

    /// Ends the instance (a power loss: nothing more reaches the device) and returns the
    /// device with its trace.
    pub fn into_device(self) -> SimDevice {
        self.store.into_data().dev
    }

    /// Export `name`, to be called now: its deadline starts here (every call goes through
    /// this function, so none runs with an older deadline).
    fn func<P: WasmParams + 'static, R: WasmResults + 'static>(
        &mut self,
        name: &'static str,
    ) -> GuestResult<TypedFunc<P, R>> {
        self.store.set_epoch_deadline(CALL_DEADLINE_TICKS);
        // An export has one type: a name asked for with another is an error below, never
        // a cached function of the wrong type (the downcast checks P and R).
        if let Some(f) = self.funcs.get(name).and_then(|f| f.downcast_ref::<TypedFunc<P, R>>()) {
            return Ok(f.clone());
        }
        let f = self
            .instance
            .get_typed_func::<P, R>(&mut self.store, name)
            .map_err(|e| GuestError::Trap(format!("export {name}: {e}")))?;
        self.funcs.insert(name, Box::new(f.clone()));
        Ok(f)
    }

    /// A fault the host sees in what the guest gave it (a buffer out of bounds, a wrong
    /// count): like a trap, it may mean a damaged guest heap, so the instance is not kept.
    fn fault(&mut self, msg: String) -> GuestError {
        self.trapped = true;
        GuestError::Trap(msg)
    }

    fn trap_message(&mut self, e: &wasmtime::Error) -> GuestError {
        self.trapped = true;
        if let Some(p) = self.store.data_mut().panic.take() {
            return GuestError::Trap(format!("panic: {p}"));
        }
        match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => GuestError::Trap("call deadline passed (runaway loop?)".into()),
            Some(t) => GuestError::Trap(format!("{t}")),
            None => GuestError::Trap(format!("{e}")),
        }
    }

    /// Calls an export returning i64 with the ABI's convention (<0 = -errno).
    fn call<P: WasmParams + 'static>(&mut self, name: &'static str, params: P) -> GuestResult<i64> {
        let f = self.func::<P, i64>(name)?;
        match f.call(&mut self.store, params) {
            Ok(v) if v >= 0 => Ok(v),
            Ok(v) => {
                let msg = String::from_utf8_lossy(&self.out()?).into_owned();
                Err(GuestError::Errno(-v, msg))
            }
            Err(e) => Err(self.trap_message(&e)),
        }
    }

    /// The out buffer of the last call.
    fn out(&mut self) -> GuestResult<Vec<u8>> {
        let ptr = self.func::<(), i32>("sim_out_ptr")?;
        let len = self.func::<(), i32>("sim_out_len")?;
        let p = ptr.call(&mut self.store, ()).map_err(|e| self.trap_message(&e))? as u32 as usize;
        let n = len.call(&mut self.store, ()).map_err(|e| self.trap_message(&e))? as u32 as usize;
        let out = self.memory.data(&self.store).get(p..p + n).map(|s| s.to_vec());
        out.ok_or_else(|| self.fault("out buffer out of bounds".into()))
    }

    fn args(&mut self, parts: &[&[u8]]) -> GuestResult<Args> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let scratch = self.func::<i32, i32>("sim_scratch")?;
        let base = scratch.call(&mut self.store, total as i32).map_err(|e| self.trap_message(&e))?;
        let mut off = 0usize;
        let mut out = Vec::new();
        let mem = self.memory.data_mut(&mut self.store);
        for p in parts {
            let start = base as u32 as usize + off;
            let Some(dst) = mem.get_mut(start..start + p.len()) else {
                return Err(self.fault("scratch out of bounds".into()));
            };
            dst.copy_from_slice(p);
            out.push((start as i32, p.len() as i32));
            off += p.len();
        }
        Ok(Args(out))
    }

    /// Runs this instance as core mutant `name` (see [`GuestModule::mutant`]).
    pub fn select_mutant(&mut self, name: &str) -> GuestResult<()> {
        let a = self.args(&[name.as_bytes()])?.0;
        self.call("sim_select_mutant", (a[0].0, a[0].1)).map(|_| ())
    }

    /// Cold-cache mode (ABI.md, `sim_set_cold`).
    pub fn set_cold(&mut self, on: bool) -> GuestResult<()> {
        self.call("sim_set_cold", on as i32).map(|_| ())
    }

    /// The entropy later mounts pass to the core (ABI.md, `sim_set_mount_nonce`).
    pub fn set_mount_nonce(&mut self, nonce: u64) -> GuestResult<()> {
        self.call("sim_set_mount_nonce", nonce as i64).map(|_| ())
    }

    /// mkfs on the device with `features` (ABI.md, `sim_format`). `grow_from` not 0: a
    /// filesystem of that many blocks with room to grow to the whole device (`mkfs
    /// --max-size`; workloads `@device BLOCKS SEG grow-from OLD`).
    pub fn format(&mut self, segment_blocks: u32, now: i64, grow_from: u64, features: Features) -> GuestResult<()> {
        self.call("sim_format", (segment_blocks as i32, now, grow_from as i64, features.bits())).map(|_| ())
    }

    pub fn mount(&mut self, read_only: bool, now: i64) -> GuestResult<()> {
        self.call("sim_mount", (read_only as i32, now)).map(|_| ())
    }

    pub fn unmount(&mut self, now: i64) -> GuestResult<()> {
        self.call("sim_unmount", now).map(|_| ())
    }

    pub fn sync(&mut self, now: i64) -> GuestResult<()> {
        self.call("sim_sync", now).map(|_| ())
    }

    /// Runs one workload operation (paths resolved by the guest).
    pub fn op(&mut self, op: &Op, now: i64) -> GuestResult<i64> {
        match op {
            Op::Repeat(..) => {
                // Each repetition in turn, up to the first failure.
                let mut n = 0;
                for o in op.expand() {
                    n = self.op(&o, now)?;
                }
                Ok(n)
            }
            Op::Seq(v) => {
                let mut n = 0;
                for o in v {
                    n = self.op(o, now)?;
                }
                Ok(n)
            }
            Op::Fill { path, chunk, pattern, max } => {
                // Outside the explorer (which runs each write as an operation of its own):
                // appends until a write fails; returns the number of writes that succeeded.
                let mut size = self.size_of(path)?;
                let max = if *max == 0 { 100_000 } else { *max };
                for n in 0..max {
                    let w = Op::Write { path: path.clone(), offset: size, len: *chunk, pattern: pattern + n };
                    match self.op(&w, now) {
                        Ok(_) => size += *chunk as u64,
                        Err(GuestError::Errno(..)) => return Ok(n as i64),
                        Err(e) => return Err(e),
                    }
                }
                Ok(max as i64)
            }
            Op::Shrink(p, n) => {
                let size = self.size_of(p)?;
                self.op(&Op::Truncate(p.clone(), size.saturating_sub(*n)), now)
            }
            Op::Rmtree(p) => {
                // Outside the explorer (which lists the removals from its model): from the
                // guest's own tree; stops at the first failure, returns the removals made.
                let d = self.dump()?;
                let tree =
                    crate::model::Tree::parse_dump(&d).map_err(|e| GuestError::Errno(crate::model::EINVAL, e))?;
                let (dirs, files): (Vec<String>, Vec<String>) =
                    tree.entries.keys().cloned().partition(|k| tree.entries[k].kind == crate::model::KIND_DIR);
                let mut n = 0;
                for o in crate::workload::rmtree_ops(p, &files, &dirs) {
                    self.op(&o, now)?;
                    n += 1;
                }
                Ok(n)
            }
            Op::Open(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                let ino = self.call("sim_open", (a[0].0, a[0].1))?;
                self.handles.entry(p.clone()).or_default().push(ino);
                Ok(ino)
            }
            Op::Close(p) => {
                let Some(ino) = self.handles.get_mut(p).and_then(|v| v.pop()) else {
                    return Err(GuestError::Errno(crate::model::EBADF, "no open handle".into()));
                };
                if self.handles.get(p).is_some_and(|v| v.is_empty()) {
                    self.handles.remove(p);
                }
                self.call("sim_close", (ino, now))
            }
            Op::Create(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_create", (a[0].0, a[0].1, 0o644, now))
            }
            Op::Mkdir(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_mkdir", (a[0].0, a[0].1, 0o755, now))
            }
            Op::Symlink(p, t) => {
                let a = self.args(&[p.as_bytes(), t.as_bytes()])?.0;
                self.call("sim_symlink", (a[0].0, a[0].1, a[1].0, a[1].1, now))
            }
            Op::Write { path, offset, len, pattern } => {
                let a = crate::workload::with_pattern_bytes(*pattern, *offset, *len, |data| {
                    self.args(&[path.as_bytes(), data])
                })?
                .0;
                self.call("sim_write", (a[0].0, a[0].1, *offset as i64, a[1].0, a[1].1, now))
            }
            Op::Truncate(p, size) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_truncate", (a[0].0, a[0].1, *size as i64, now))
            }
            Op::Punch(p, off, len, mode) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_punch", (a[0].0, a[0].1, *off as i64, *len as i64, *mode as i32, now))
            }
            Op::Chmod(p, mode) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_chmod", (a[0].0, a[0].1, *mode as i32, now))
            }
            Op::Rename(from, to, flags) => {
                let a = self.args(&[from.as_bytes(), to.as_bytes()])?.0;
                self.call("sim_rename", (a[0].0, a[0].1, a[1].0, a[1].1, *flags as i32, now))
            }
            Op::Link(from, to) => {
                let a = self.args(&[from.as_bytes(), to.as_bytes()])?.0;
                self.call("sim_link", (a[0].0, a[0].1, a[1].0, a[1].1, now))
            }
            Op::Unlink(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_unlink", (a[0].0, a[0].1, now))
            }
            Op::Rmdir(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_rmdir", (a[0].0, a[0].1, now))
            }
            Op::SetXattr(p, n, v) => {
                let a = self.args(&[p.as_bytes(), n.as_bytes(), v.as_bytes()])?.0;
                let f = self.func::<(i32, i32, i32, i32, i32, i32, i32, i64), i64>("sim_setxattr")?;
                match f.call(&mut self.store, (a[0].0, a[0].1, a[1].0, a[1].1, a[2].0, a[2].1, 0, now)) {
                    Ok(v) if v >= 0 => Ok(v),
                    Ok(v) => Err(GuestError::Errno(-v, String::from_utf8_lossy(&self.out()?).into_owned())),
                    Err(e) => Err(self.trap_message(&e)),
                }
            }
            Op::RemoveXattr(p, n) => {
                let a = self.args(&[p.as_bytes(), n.as_bytes()])?.0;
                self.call("sim_removexattr", (a[0].0, a[0].1, a[1].0, a[1].1, now))
            }
            Op::Sync => self.call("sim_sync", now),
            Op::Grow(blocks) => self.call("sim_grow", (*blocks as i64, now)),
            Op::Fsync(p) | Op::Fdatasync(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_fsync", (a[0].0, a[0].1, matches!(op, Op::Fdatasync(_)) as i32, now))
            }
            Op::AtomicStart(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_start_atomic_write", (a[0].0, a[0].1))
            }
            Op::AtomicCommit(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_commit_atomic_write", (a[0].0, a[0].1, now))
            }
            Op::AtomicAbort(p) => {
                let a = self.args(&[p.as_bytes()])?.0;
                self.call("sim_abort_atomic_write", (a[0].0, a[0].1))
            }
        }
    }

    /// Reads a file range (for tests and diagnostics).
    pub fn read(&mut self, path: &str, offset: u64, len: usize) -> GuestResult<Vec<u8>> {
        let a = self.args(&[path.as_bytes()])?.0;
        self.call("sim_read", (a[0].0, a[0].1, offset as i64, len as i32))?;
        self.out()
    }

    /// The core's statistics counters (indexed like [`STAT_NAMES`]).
    pub fn stats(&mut self) -> GuestResult<CoreStats> {
        let n = self.call("sim_stats", ())? as usize;
        if n != STAT_NAMES.len() {
            return Err(self.fault(format!("sim_stats returned {n} counters, the host knows {}", STAT_NAMES.len())));
        }
        let out = self.out()?;
        let mut s = [0u64; STAT_NAMES.len()];
        for (i, c) in out.chunks_exact(8).take(s.len()).enumerate() {
            s[i] = u64::from_le_bytes(c.try_into().unwrap());
        }
        Ok(s)
    }

    /// The guest's names of the counters of [`Guest::stats`] (must equal [`STAT_NAMES`]).
    pub fn stat_names(&mut self) -> GuestResult<Vec<String>> {
        self.call("sim_stat_names", ())?;
        Ok(String::from_utf8_lossy(&self.out()?).lines().map(str::to_owned).collect())
    }

    /// The size of the file at `path` (read through `sim_read` to its end: used by `fill`).
    pub fn size_of(&mut self, path: &str) -> GuestResult<u64> {
        let mut off = 0u64;
        loop {
            let n = self.read(path, off, 1 << 20)?.len() as u64;
            if n == 0 {
                return Ok(off);
            }
            off += n;
        }
    }

    /// Runs fsck; returns its problems (empty = clean).
    pub fn fsck(&mut self) -> GuestResult<Vec<String>> {
        let n = self.call("sim_fsck", ())?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let out = String::from_utf8_lossy(&self.out()?).into_owned();
        Ok(out.lines().map(str::to_owned).collect())
    }

    /// The serialized tree (format in ABI.md).
    pub fn dump(&mut self) -> GuestResult<Vec<u8>> {
        self.call("sim_dump", ())?;
        self.out()
    }

    /// The tree dump with regular files' device blocks named, not read (ABI.md, "Planned
    /// contents"); parse it with `Tree::parse_planned_dump` against this guest's device.
    pub fn dump_planned(&mut self) -> GuestResult<Vec<u8>> {
        self.call("sim_dump_planned", ())?;
        self.out()
    }
}

/// Builds the guest with extra cargo features (e.g. `rollfs-core/mutant-cp-no-crc`) into a
/// cached target directory, returning the path of a copy of its .wasm named after the
/// features. Cargo's own up-to-date check makes repeated calls cheap.
pub fn build_guest(features: &[String]) -> anyhow::Result<PathBuf> {
    let target_dir = PathBuf::from(OUT_DIR).join("variant-target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "--release",
        "--target",
        "wasm32-unknown-unknown",
        "--manifest-path",
        GUEST_MANIFEST,
    ])
    .arg("--target-dir")
    .arg(&target_dir);
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    let status = cmd.status()?;
    anyhow::ensure!(status.success(), "building the guest with features {features:?} failed");
    let built = target_dir.join("wasm32-unknown-unknown/release/rollfs_sim_guest.wasm");
    let name = if features.is_empty() { "plain".to_string() } else { features.join("+").replace('/', "_") };
    let copy = target_dir.join(format!("rollfs_sim_guest-{name}.wasm"));
    // Copied under a unique name and renamed into place: two threads (tests of one binary)
    // building variants at once would otherwise read the copy while the other truncates
    // and rewrites it ("failed to parse WebAssembly module", seen on a loaded machine).
    static COPIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = copy.with_extension(format!("wasm.tmp{}-{n}", std::process::id()));
    std::fs::copy(&built, &tmp)?;
    if let Err(e) = std::fs::rename(&tmp, &copy) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest loads from its compiled artifact when one for its bytes is there, and a
    /// damaged artifact is compiled over, not used.
    #[test]
    fn compiled_guest_is_cached_and_a_damaged_cache_is_replaced() {
        let dir = std::env::temp_dir().join(format!("rollfs-sim-cwasm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let wasm = dir.join("guest.wasm");
        std::fs::copy(DEFAULT_GUEST_WASM, &wasm).unwrap();
        let artifacts = || -> Vec<PathBuf> {
            let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
                .collect();
            v.sort();
            v
        };
        let mounts = |m: &GuestModule| {
            let mut g = m.instantiate(SimDevice::new(crate::device::Image::blank(2048), 1)).expect("instance");
            assert!(
                g.format(16, 0, 0, Features::MKFS_DEFAULT).is_ok() && g.mount(false, 1).is_ok(),
                "the loaded guest works"
            );
        };
        mounts(&GuestModule::load(&wasm).expect("compiled"));
        let art = artifacts();
        assert_eq!(art.len(), 1, "one artifact written: {art:?}");
        let written = std::fs::metadata(&art[0]).unwrap().modified().unwrap();
        mounts(&GuestModule::load(&wasm).expect("loaded from the artifact"));
        assert_eq!(
            std::fs::metadata(&art[0]).unwrap().modified().unwrap(),
            written,
            "the artifact was used, not rewritten"
        );
        // Damaged: compiled again, the artifact rewritten whole.
        std::fs::write(&art[0], b"not a compiled module").unwrap();
        mounts(&GuestModule::load(&wasm).expect("compiled over a damaged artifact"));
        assert!(std::fs::metadata(&art[0]).unwrap().len() > 1000, "the artifact was rewritten");
        // Other bytes: another artifact, and the old one dropped.
        let mut bytes = std::fs::read(&wasm).unwrap();
        bytes.extend_from_slice(&[0, 5, 4, b'n', b'o', b't', b'e']); // a custom section "note"
        std::fs::write(&wasm, &bytes).unwrap();
        mounts(&GuestModule::load(&wasm).expect("changed bytes compile"));
        let now = artifacts();
        assert_eq!(now.len(), 1, "{now:?}");
        assert_ne!(now, art, "new bytes, new artifact");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
