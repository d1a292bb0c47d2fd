//! The `rollfs-sim` command line: explore, replay, mutants (names relied on by docs and CI).
//!
//! `main` parses the arguments and dispatches; each subcommand is a function of its own, taking
//! its arguments (`ExploreArgs`, ...).

use clap::{Parser, Subcommand, ValueEnum};
use rollfs_sim::explore::{Explorer, Options, StateId, Violation};
use rollfs_sim::guest::GuestModule;
use rollfs_sim::schedule::{explore_shard, Source};
use rollfs_sim::shard::{self, Params, Shard, ShardSummary};
use rollfs_sim::workload::{regression_dir, CaseId};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "rollfs-sim", about = "Deterministic crash-state explorer for rollfs (core under wasmtime)")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum WorkloadKind {
    Random,
    Ace,
    Regression,
    /// The families where resources run out: full devices, node ids, orphans (full:K).
    Full,
    /// Every ACE sequence of up to three operations before an fsync (ace3:K).
    Ace3,
    /// An evenly spread sample of the ACE3 cases (as in CI).
    Ace3Sample,
    All,
}

#[derive(clap::Args, Clone)]
struct Common {
    /// Seed of everything chosen: workloads, completion order, surviving writes.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also tear surviving 4 KiB writes at 512-byte sectors.
    #[arg(long)]
    torn: bool,
    /// Inject EIO: at a read during recovery (some states), and one write/flush per workload.
    #[arg(long)]
    eio: bool,
    /// Worker threads (default: available cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Run the guest as this core mutant (e.g. mutant-recovery-no-crc), to
    /// look at how a mutant fails.
    #[arg(long)]
    mutant: Option<String>,
    /// Run a live guest, in a fresh instance, for every crash image, even one that holds
    /// the same blocks where an earlier image of its run was read (whose checks are
    /// otherwise replayed, and whose instances are otherwise reused: the same verdicts and
    /// digest, to compare).
    #[arg(long)]
    no_memo: bool,
    /// Cold caches: the core's clean caches are dropped before every operation (after its
    /// paths are resolved), so that every read an operation makes comes from the device
    /// and is a point `--eio` and `eio-sweep` can fail.
    #[arg(long)]
    cold: bool,
    /// Format every workload's device with namespace records in the fsync chain (`mkfs -O
    /// nsrec`), as if each workload said `@nsrec` (without either flag: as each workload
    /// says, with records where it says nothing, as `rollfs mkfs` does).
    #[arg(long, conflicts_with = "no_nsrec")]
    nsrec: bool,
    /// Format every workload's device without namespace records (`mkfs -O nonsrec`, the
    /// format older binaries mount), as if each workload said `@nonsrec`.
    #[arg(long)]
    no_nsrec: bool,
    /// Format every workload's device with data beside its chain (`mkfs`'s default), as if
    /// each workload said `@mixed` (without either flag: as each workload says).
    #[arg(long, conflicts_with = "no_mixed")]
    mixed: bool,
    /// Format every workload's device without data beside its chain (`mkfs -O nomixed`:
    /// every fsync batch's data in the data log), as if each workload said `@nomixed`.
    #[arg(long)]
    no_mixed: bool,
}

#[derive(Subcommand)]
enum Cmd {
    /// Explore crash states of workloads.
    Explore(ExploreArgs),
    /// Merge the summaries of the shards of one exploration (`explore --shard K/N
    /// --summary FILE`): checks they are all N shards of the same seed and options, with no
    /// case twice, and prints the totals, the rare-event table and the trace digest an
    /// unsharded run of the same cases gives. Exit 1 if any shard found a violation.
    Merge(MergeArgs),
    /// Rebuild and check one crash state, printing what happened.
    Replay(ReplayArgs),
    /// Print the workload text of a case (to save it as a .wl file: a stable reproducer).
    Print(PrintArgs),
    /// Measure where the time of one crash state goes (instantiate, mount, fsck, dump).
    #[command(hide = true)]
    Bench(BenchArgs),
    /// Fail every read, write and flush of the workloads in turn (one per run): the
    /// operation must return EIO, a failed write must leave the filesystem read-only, and
    /// healthy remounts must be clean and keep every acknowledged sync and fsync.
    EioSweep(EioSweepArgs),
    /// Explore until the time is up: round after round with fresh seeds, each round every
    /// regression workload plus seeded ACE and random cases, with --torn and --eio.
    Soak {
        /// How long (fractions allowed).
        #[arg(long)]
        hours: f64,
        /// First seed (default: the clock); round k uses seed+k.
        #[arg(long)]
        seed: Option<u64>,
        /// ACE cases per round (drawn from all of them by the round's seed).
        #[arg(long, default_value_t = 8)]
        ace: u64,
        /// Random cases per round.
        #[arg(long, default_value_t = 8)]
        random: u64,
        /// Seconds between progress lines.
        #[arg(long, default_value_t = 300)]
        progress_secs: u64,
        /// Worker threads (default: available cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Run the guest as this core mutant.
        #[arg(long)]
        mutant: Option<String>,
        /// Explore only shard K of N (0-based) of every round: the round's cases whose
        /// index is K modulo N. N machines with the same --seed and --hours split the work
        /// with no overlap; `rollfs-sim merge` adds up their `--summary` files.
        #[arg(long, default_value = "0/1")]
        shard: Shard,
        /// Write the soak's summary to FILE at the end, for `rollfs-sim merge`.
        #[arg(long)]
        summary: Option<std::path::PathBuf>,
    },
    /// Device cost per operation: writes (data, node, other), FUA, flushes, waits and a
    /// simulated time, for steady-state 4 KiB write+fsync loops and SQLite-like atomic
    /// commits, safe and with the mutant-atomic-no-wait guest (deterministic).
    Cost(CostArgs),
    /// Run the guest as each core mutant in turn and check that exploration catches it.
    Mutants(MutantsArgs),
}

#[derive(clap::Args)]
struct ExploreArgs {
    #[command(flatten)]
    common: Common,
    /// Stop starting new workloads after this many seconds.
    #[arg(long, conflicts_with = "cases")]
    duration: Option<u64>,
    /// Number of workloads to run (default 100 unless --duration is given).
    #[arg(long)]
    cases: Option<u64>,
    #[arg(long, value_enum, default_value = "all")]
    workload: WorkloadKind,
    /// Explore only these cases (random:K, ace:K or file:PATH; repeatable) instead of
    /// drawing from --workload.
    #[arg(long = "case", conflicts_with_all = ["duration", "cases"])]
    only: Vec<CaseId>,
    /// Crash points per workload run (sampled beyond).
    #[arg(long, default_value_t = 400)]
    max_points: usize,
    /// Seconds spent shrinking the first failing workload (0 = do not shrink).
    #[arg(long, default_value_t = 60)]
    shrink_secs: u64,
    /// Explore only shard K of N (0-based): the cases whose index is K modulo N. The N
    /// shards of one seed never overlap; `rollfs-sim merge` adds up their summaries.
    #[arg(long, default_value = "0/1")]
    shard: Shard,
    /// Write this run's summary (totals, one digest per case, violations) to FILE, for
    /// `rollfs-sim merge`.
    #[arg(long)]
    summary: Option<std::path::PathBuf>,
    /// The device: `honest` (the crash model of docs/INVARIANTS.md), or one that lies
    /// (flush-ignored, fua-ignored, lost-write, misdirected-write, erase-then-lose, bitflip-persistent,
    /// bitflip-transient, read-error-once, or `lying` for each in turn): each workload's
    /// honest run becomes fault states (at most --max-points per workload), each judged
    /// against what rollfs promises on that device (docs/INVARIANTS.md, "Lying devices").
    /// --torn and --eio do not apply to the lying models.
    #[arg(long, default_value = "honest")]
    device: String,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// The summary files, one per shard.
    #[arg(required = true)]
    files: Vec<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct ReplayArgs {
    #[command(flatten)]
    common: Common,
    /// The workload: random:K, ace:K or file:PATH.
    #[arg(long)]
    case: CaseId,
    /// The crash state: P:V, or P:V/Q:W for a crash during recovery (eP:V: the EIO run;
    /// P:V@N: read N of the recovery mount fails, from `@recovery-eio each`).
    #[arg(long)]
    state: StateId,
    /// Also write the crash image (before recovery) to this file, for `rollfs inspect`.
    #[arg(long)]
    save_image: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct PrintArgs {
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// random:K, ace:K, ace3:K, full:K or file:PATH.
    #[arg(long)]
    case: CaseId,
}

#[derive(clap::Args)]
struct BenchArgs {
    #[arg(long, default_value = "random:1")]
    case: CaseId,
    #[arg(long, default_value_t = 200)]
    iters: u32,
}

#[derive(clap::Args)]
struct EioSweepArgs {
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// ACE cases (spread evenly over all of them), after the regression workloads.
    #[arg(long, default_value_t = 24)]
    ace: u64,
    /// Random cases 0..N, after the ACE cases.
    #[arg(long, default_value_t = 24)]
    random: u64,
    /// Only these cases (random:K, ace:K or file:PATH; repeatable).
    #[arg(long = "case")]
    only: Vec<CaseId>,
    /// At most this many I/O-error points per workload, evenly spread (default: all).
    #[arg(long)]
    max_per_workload: Option<usize>,
    /// Replay one point of the one --case (read:N, write:N or flush:N) with its account.
    #[arg(long)]
    io: Option<String>,
    /// Worker threads (default: available cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Run the guest as this core mutant.
    #[arg(long)]
    mutant: Option<String>,
    /// Only count each workload's I/O-error points (one healthy run each).
    #[arg(long)]
    count: bool,
    /// Check every remount with a live guest (as `explore --no-memo`), to compare.
    #[arg(long)]
    no_memo: bool,
    /// Cold caches (as `explore --cold`): every read an operation can make is a point.
    #[arg(long)]
    cold: bool,
}

#[derive(clap::Args)]
struct CostArgs {
    /// Measured fsync operations per scenario (commits: a quarter as many).
    #[arg(long, default_value_t = 2000)]
    ops: u64,
    /// Unmeasured operations first.
    #[arg(long, default_value_t = 200)]
    warmup: u64,
    /// Pages per SQLite-like commit (one scenario each).
    #[arg(long, value_delimiter = ',', default_value = "4,16")]
    pages: Vec<u32>,
    /// Latency model: microseconds per 4 KiB write.
    #[arg(long, default_value_t = 100.0)]
    write_us: f64,
    /// Latency model: microseconds per cache flush.
    #[arg(long, default_value_t = 1000.0)]
    flush_us: f64,
    /// Latency model: microseconds per read.
    #[arg(long, default_value_t = 100.0)]
    read_us: f64,
    /// Latency model: writes in service at once.
    #[arg(long, default_value_t = 32)]
    queue_depth: usize,
    #[arg(long, default_value_t = 64)]
    image_mib: u64,
    #[arg(long, default_value_t = 512)]
    segment_blocks: u32,
    /// Skip the commits of the mutant-atomic-no-wait guest (which must be built first).
    #[arg(long)]
    no_mutant: bool,
}

#[derive(clap::Args)]
struct MutantsArgs {
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// ACE and random cases tried per mutant (after the regression workloads).
    #[arg(long, default_value_t = 200)]
    cases: u64,
    /// Only these mutants (feature names; default: every `mutant-*` of core/Cargo.toml).
    #[arg(long)]
    only: Vec<String>,
}

/// A `--X` / `--no-X` pair of flags: `Some(true)`, `Some(false)`, or `None` (as each
/// workload says).
fn forced(yes: bool, no: bool) -> Option<bool> {
    if yes {
        Some(true)
    } else if no {
        Some(false)
    } else {
        None
    }
}

fn options(c: &Common) -> Options {
    let mut o = Options {
        seed: c.seed,
        torn: c.torn,
        eio: c.eio,
        memo: !c.no_memo,
        cold: c.cold,
        nsrec: forced(c.nsrec, c.no_nsrec),
        mixed: forced(c.mixed, c.no_mixed),
        ..Options::default()
    };
    if let Some(t) = c.threads {
        o.threads = t.max(1);
    }
    o
}

/// How the crash images of an exploration were checked: by a live guest, or by replaying
/// an earlier guest of the same run that read the same blocks (and how many of those found
/// the same data blocks as the guest's last image, so that its tree was reused); and how
/// many live guests' fscks an earlier fsck of the run answered (it read the same recovered
/// blocks); and how many live guests' dumps repeated an earlier one of the run byte for
/// byte on the same data blocks (tree reused).
fn guest_line(ex: &rollfs_sim::explore::Explorer) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let (live, replayed) = (ex.guest_runs.load(Relaxed), ex.replayed.load(Relaxed));
    let (fsck, trees) = (ex.fsck_replayed.load(Relaxed), ex.trees_reused.load(Relaxed));
    let dumps = ex.dumps_reused.load(Relaxed);
    format!(
        "guest checks: {live} live, {replayed} replayed from a guest that read the same blocks \
         ({trees} of them with the same data blocks: tree reused); \
         {fsck} live fscks replayed from one that read the same recovered blocks; \
         {dumps} dumps the same as an earlier one of their run (tree reused)"
    )
}

fn replay_command(c: &Common, v: &Violation) -> String {
    let state = v.state.map(|s| s.to_string()).unwrap_or_else(|| "0:0".into());
    format!(
        "rollfs-sim replay --seed {} --case {} --state {}{}{}",
        c.seed,
        v.case,
        state,
        if c.torn { " --torn" } else { "" },
        if c.eio { " --eio" } else { "" }
    ) + if c.cold { " --cold" } else { "" }
        + if c.nsrec { " --nsrec" } else { "" }
        + if c.no_nsrec { " --no-nsrec" } else { "" }
        + if c.mixed { " --mixed" } else { "" }
        + if c.no_mixed { " --no-mixed" } else { "" }
        + &c.mutant.as_ref().map(|m| format!(" --mutant {m}")).unwrap_or_default()
}

fn explorer(opts: Options, mutant: Option<&str>) -> Result<Explorer, String> {
    let module = match mutant {
        None => GuestModule::default_guest(),
        Some(m) => GuestModule::mutant(m).map(std::sync::Arc::new),
    }
    .map_err(|e| format!("{e:#}"))?;
    Explorer::new(module, opts)
}

/// `rollfs-sim soak`: see its help.
/// `rollfs-sim soak`'s options.
struct SoakConfig {
    hours: f64,
    seed: Option<u64>,
    ace: u64,
    random: u64,
    progress_secs: u64,
    threads: Option<usize>,
    shard: Shard,
    summary: Option<std::path::PathBuf>,
}

fn soak(cfg: &SoakConfig, mutant: Option<&str>) -> ExitCode {
    use rollfs_sim::schedule::explore_cases;
    use std::time::Instant;
    let SoakConfig { hours, seed, ace, random, progress_secs, threads, shard, .. } = *cfg;
    // Every case of every round, for the summary: its index (round × cases per round +
    // its place in the round), its digest and its violations.
    let mut total = rollfs_sim::shard::Summary::default();
    let first = seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
    });
    let budget = Duration::from_secs_f64((hours.max(0.0)) * 3600.0);
    let start = Instant::now();
    let mut last_progress = Instant::now();
    let (mut states, mut workloads, mut violations, mut last_seed) = (0u64, 0u64, 0u64, first);
    let mut events = rollfs_sim::shard::Events::default();
    let files = rollfs_sim::workload::regression_files();
    let ace_n = rollfs_sim::workload::ace_count();
    println!(
        "soak: {hours} h from seed {first}, {} regression + {ace} ACE + {random} random + {random} full workloads a round, --torn --eio{}",
        files.len(),
        if shard == Shard::ALL { String::new() } else { format!(", shard {shard}") }
    );
    let per_round = files.len() as u64 + ace + 2 * random;
    let mut s = first;
    'rounds: while start.elapsed() < budget {
        let common = Common {
            seed: s,
            torn: true,
            eio: true,
            threads,
            mutant: mutant.map(str::to_string),
            no_memo: false,
            cold: false,
            nsrec: false,
            no_nsrec: false,
            mixed: false,
            no_mixed: false,
        };
        let ex = match explorer(options(&common), mutant) {
            Ok(ex) => ex,
            Err(e) => {
                eprintln!("rollfs-sim: {e}");
                return ExitCode::from(2);
            }
        };
        let mut rng = rollfs_sim::rng::Rng::derive(&[s, 0x50AC]);
        let mut cases: Vec<CaseId> = files.iter().cloned().map(CaseId::File).collect();
        cases.extend((0..ace).map(|_| CaseId::Ace(rng.below(ace_n))));
        cases.extend((0..random).map(CaseId::Random));
        cases.extend((0..random).map(CaseId::Full));
        last_seed = s;
        for (j, case) in cases.into_iter().enumerate() {
            if start.elapsed() >= budget {
                break 'rounds;
            }
            let index = (s - first) * per_round + j as u64;
            if !shard.has(index) {
                continue;
            }
            let sum = explore_cases(&ex, std::slice::from_ref(&case), &mut |v| {
                let state = v.state.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
                println!("VIOLATION {} in {} state {}: {}", v.kind, v.case, state, v.detail);
                println!("  reproduce: {}", replay_command(&common, v));
            });
            states += sum.states;
            workloads += sum.workloads;
            violations += sum.violations.len() as u64;
            events = events.plus(&sum.events);
            total.case_digests.push((index, sum.digest));
            total.violations.extend(sum.violations);
            if last_progress.elapsed().as_secs() >= progress_secs {
                last_progress = Instant::now();
                let h = start.elapsed().as_secs_f64() / 3600.0;
                println!(
                    "soak: {h:.2} h of {hours} h, seed {s}, {states} crash states from {workloads} workloads, {violations} violations ({:.0} states/s)",
                    states as f64 / start.elapsed().as_secs_f64().max(1e-9)
                );
            }
        }
        s += 1;
    }
    for l in events.table() {
        println!("{l}");
    }
    println!(
        "soak: {:.2} h, {states} crash states from {workloads} workloads, {violations} violations, seeds {first}..{last_seed}",
        start.elapsed().as_secs_f64() / 3600.0
    );
    if let Some(path) = &cfg.summary {
        total.states = states;
        total.workloads = workloads;
        total.seconds = start.elapsed().as_secs_f64();
        total.events = events;
        let params = Params {
            seed: first,
            source: format!("soak:{ace}:{random}"),
            torn: true,
            eio: true,
            max_points: Options::default().max_points,
            mutant: mutant.unwrap_or_default().to_string(),
        };
        if let Err(e) = std::fs::write(path, ShardSummary::of(params, shard, &total).to_text()) {
            eprintln!("rollfs-sim: cannot write the summary {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// glibc gives freed memory back to the kernel eagerly (the top of a heap beyond 128 KiB,
/// and large blocks, which it maps and unmaps one by one): an exploration frees and
/// allocates again the same few hundred MiB for every workload (runs, crash images,
/// traces), and a tenth of its time went to faulting those pages in again and the kernel
/// zeroing them. Keep them: the process's peak is what it holds anyway.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; called before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

/// `rollfs-sim print`: the workload text of a case.
fn print(a: PrintArgs) -> ExitCode {
    let PrintArgs { seed, case } = a;
    match rollfs_sim::workload::workload(&case, seed) {
        Ok(w) if matches!(case, CaseId::Ace3(_)) && seed == u64::MAX => {
            // (never: keeps the match exhaustive if a count mode is added)
            print!("{}", w.to_text());
            ExitCode::SUCCESS
        }
        Ok(w) => {
            print!("{}", w.to_text());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rollfs-sim: {e}");
            ExitCode::from(2)
        }
    }
}

/// `rollfs-sim merge`: the shards' summaries added up.
fn merge(a: MergeArgs) -> ExitCode {
    let MergeArgs { files } = a;
    let mut parts = Vec::new();
    for f in &files {
        match std::fs::read_to_string(f).map_err(|e| e.to_string()).and_then(|t| ShardSummary::parse(&t)) {
            Ok(p) => parts.push(p),
            Err(e) => {
                eprintln!("rollfs-sim merge: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        }
    }
    let m = match shard::merge(&parts) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("rollfs-sim merge: {e}");
            return ExitCode::from(2);
        }
    };
    for v in &m.violations {
        let f: Vec<&str> = v.splitn(4, '\t').collect();
        if let [kind, case, state, detail] = f[..] {
            println!("VIOLATION {kind} in {case} state {state}: {detail}");
        }
    }
    println!(
        "merged {} shards of seed {} ({}{}{})",
        m.shards,
        m.params.seed,
        m.params.source,
        if m.params.torn { ", torn" } else { "" },
        if m.params.eio { ", eio" } else { "" }
    );
    println!("trace digest {:016x}", m.digest);
    for l in m.events.table() {
        println!("{l}");
    }
    println!(
        "explored {} crash states from {} workloads: {} violations ({:.0} states/s over the longest shard's {:.0} s)",
        m.states,
        m.workloads,
        m.violations.len(),
        if m.seconds > 0.0 { m.states as f64 / m.seconds } else { 0.0 },
        m.seconds
    );
    if m.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `rollfs-sim explore`: explores, shrinks the first failing workload, writes the summary.
fn explore(a: ExploreArgs) -> ExitCode {
    let ExploreArgs { common, duration, cases, workload, max_points, shrink_secs, only, shard, summary, device } = a;
    if device != "honest" {
        return explore_devices(&common, &device, duration, cases, workload, max_points, only);
    }
    let mut opts = options(&common);
    opts.max_points = max_points.max(2);
    let ex = match explorer(opts, common.mutant.as_deref()) {
        Ok(ex) => ex,
        Err(e) => {
            eprintln!("rollfs-sim: {e}");
            return ExitCode::from(2);
        }
    };
    let source = match workload {
        WorkloadKind::Random => Source::Random,
        WorkloadKind::Ace => Source::Ace,
        WorkloadKind::Regression => Source::Regression,
        WorkloadKind::Full => Source::Full,
        WorkloadKind::Ace3 => Source::Ace3,
        WorkloadKind::Ace3Sample => Source::Ace3Sample,
        WorkloadKind::All => Source::All,
    };
    let cases = if duration.is_none() { Some(cases.unwrap_or(100)) } else { None };
    let mut first: Option<Violation> = None;
    let mut report = |v: &Violation| {
        let state = v.state.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
        println!("VIOLATION {} in {} state {}: {}", v.kind, v.case, state, v.detail);
        println!("  reproduce: {}", replay_command(&common, v));
        if first.is_none() {
            first = Some(v.clone());
        }
    };
    if !only.is_empty() && (shard != Shard::ALL || summary.is_some()) {
        eprintln!("rollfs-sim: --shard and --summary split a drawn exploration; they do not apply to --case");
        return ExitCode::from(2);
    }
    let sum = if only.is_empty() {
        explore_shard(&ex, source, cases, duration.map(Duration::from_secs), false, shard, &mut report)
    } else {
        rollfs_sim::schedule::explore_cases(&ex, &only, &mut report)
    };
    if let (Some(v), true) = (&first, shrink_secs > 0) {
        let small = ex.shrink(&v.workload, &v.kind, Duration::from_secs(shrink_secs));
        let name = format!("found-{}-{:08x}", v.kind, small.hash() as u32);
        let path = regression_dir().join(format!("{name}.wl"));
        let text = format!(
            "# Shrunk by rollfs-sim from {} ({} ops -> {}): {}\n# original: {}\n{}",
            v.case,
            v.workload.ops.len(),
            small.ops.len(),
            v.kind,
            replay_command(&common, v),
            small.to_text()
        );
        match std::fs::write(&path, text) {
            Ok(()) => println!(
                "shrunk {} to {} ops, saved {} (explore with: rollfs-sim explore --workload regression{}{})",
                v.case,
                small.ops.len(),
                path.display(),
                if common.torn { " --torn" } else { "" },
                if common.eio { " --eio" } else { "" }
            ),
            Err(e) => println!("shrunk to {} ops but could not save {}: {e}", small.ops.len(), path.display()),
        }
    }
    println!("trace digest {:016x}", sum.digest);
    for l in sum.events.table() {
        println!("{l}");
    }
    println!("{}", sum.last_line());
    println!("{}", guest_line(&ex));
    if let Some(path) = &summary {
        let params = Params {
            seed: common.seed,
            source: format!("{source:?}").to_lowercase(),
            torn: common.torn,
            eio: common.eio,
            max_points: max_points.max(2),
            mutant: common.mutant.clone().unwrap_or_default(),
        };
        let text = ShardSummary::of(params, shard, &sum).to_text();
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("rollfs-sim: cannot write the summary {}: {e}", path.display());
            return ExitCode::from(2);
        }
        if shard != Shard::ALL {
            println!("shard {shard}: summary in {} (rollfs-sim merge FILES...)", path.display());
        }
    }
    if sum.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `rollfs-sim replay`: rebuilds and checks one crash state (and saves its image).
fn replay(a: ReplayArgs) -> ExitCode {
    let ReplayArgs { common, case, state, save_image } = a;
    let ex = match explorer(Options { trace_mount: true, ..options(&common) }, common.mutant.as_deref()) {
        Ok(ex) => ex,
        Err(e) => {
            eprintln!("rollfs-sim: {e}");
            return ExitCode::from(2);
        }
    };
    let w = match rollfs_sim::workload::workload(&case, common.seed) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("rollfs-sim: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", w.to_text());
    if let Some(path) = save_image {
        let saved = match ex.crash_image(&w, state) {
            Some(img) => std::fs::write(&path, img.to_bytes()).map_err(|e| e.to_string()),
            None => Err("no such crash state".into()),
        };
        match saved {
            Ok(()) => println!("crash image written to {}", path.display()),
            Err(e) => {
                eprintln!("rollfs-sim: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    let (log, bad) = ex.replay(&w, state);
    for l in log {
        println!("{l}");
    }
    match bad {
        Some((k, d)) => {
            println!("VIOLATION {k}: {d}");
            ExitCode::from(1)
        }
        None => {
            println!("state {state} of {case}: ok");
            ExitCode::SUCCESS
        }
    }
}

/// `rollfs-sim bench`: where the time of one crash state goes.
fn bench(a: BenchArgs) -> ExitCode {
    let BenchArgs { case, iters } = a;
    let ex = explorer(Options::default(), None).expect("explorer");
    let w = rollfs_sim::workload::workload(&case, 0).expect("workload");
    for (name, secs) in rollfs_sim::explore::phase_costs(&ex, &w, iters) {
        if name == "block reads" {
            println!("{name:12} {secs}");
        } else {
            println!("{name:12} {:8.1} us", secs * 1e6);
        }
    }
    ExitCode::SUCCESS
}

/// `rollfs-sim explore --device MODEL` (a lying device): each model's outcome line, the
/// violations with the command that reproduces them. Cases: `--case`, or `--cases N` of
/// `--workload` (regression: every file; ace, random and full: N each; all: ace and random
/// and the files).
fn explore_devices(
    common: &Common,
    device: &str,
    duration: Option<u64>,
    cases: Option<u64>,
    workload: WorkloadKind,
    max_points: usize,
    only: Vec<CaseId>,
) -> ExitCode {
    use rollfs_sim::devices::DeviceModel;
    let models: Vec<DeviceModel> = if device == "lying" {
        DeviceModel::LYING.to_vec()
    } else {
        match device.parse::<DeviceModel>() {
            Ok(m) => vec![m],
            Err(e) => {
                eprintln!("rollfs-sim: {e}");
                return ExitCode::from(2);
            }
        }
    };
    let ex = match explorer(Options { file_blocks: true, ..options(common) }, common.mutant.as_deref()) {
        Ok(ex) => ex,
        Err(e) => {
            eprintln!("rollfs-sim: {e}");
            return ExitCode::from(2);
        }
    };
    let n = cases.unwrap_or(8);
    let cases = if !only.is_empty() {
        only
    } else {
        match workload {
            WorkloadKind::Regression => rollfs_sim::eio::standard_cases(0, 0),
            WorkloadKind::Random => (0..n).map(CaseId::Random).collect(),
            WorkloadKind::Ace => {
                let all = rollfs_sim::workload::ace_count();
                (0..n.min(all)).map(|i| CaseId::Ace(i * all / n.min(all).max(1))).collect()
            }
            WorkloadKind::Full => (0..n).map(CaseId::Full).collect(),
            WorkloadKind::All => rollfs_sim::eio::standard_cases(n, n),
            _ => {
                eprintln!("rollfs-sim: --device takes --workload regression, ace, random, full or all, or --case");
                return ExitCode::from(2);
            }
        }
    };
    // The time is shared by the models in turn.
    let per_model = duration.map(|d| Duration::from_secs(d) / models.len() as u32);
    let mut violations = 0;
    for m in models {
        let sum = rollfs_sim::devices::sweep(&ex, m, &cases, max_points.max(1), per_model, &mut |v| {
            println!("VIOLATION {} in {}: {}", v.kind, v.case, v.detail);
            let mutant = common.mutant.as_ref().map(|m| format!(" --mutant {m}")).unwrap_or_default();
            println!(
                "  reproduce: rollfs-sim explore --device {m} --case {} --seed {} --max-points {max_points}{mutant}",
                v.case, common.seed
            );
        });
        violations += sum.violations.len();
        println!("{} ({:.0} s)", sum.line(m), sum.seconds);
        for (o, e) in &sum.examples {
            println!("  e.g. {}: {}", o.name(), e.chars().take(300).collect::<String>());
        }
        println!("  trace digest {:016x}", sum.digest);
    }
    if violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `rollfs-sim eio-sweep`: the I/O-error sweep, one point's replay, or its points counted.
fn eio_sweep(a: EioSweepArgs) -> ExitCode {
    let EioSweepArgs { seed, ace, random, only, max_per_workload, io, threads, mutant, count, no_memo, cold } = a;
    let mut opts = Options { seed, memo: !no_memo, cold, ..Options::default() };
    if let Some(t) = threads {
        opts.threads = t.max(1);
    }
    let ex = match explorer(opts, mutant.as_deref()) {
        Ok(ex) => ex,
        Err(e) => {
            eprintln!("rollfs-sim: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(io) = io {
        let (Some(case), 1) = (only.first(), only.len()) else {
            eprintln!("rollfs-sim: --io needs exactly one --case");
            return ExitCode::from(2);
        };
        let (eio, w) = match (rollfs_sim::eio::parse_point(&io), rollfs_sim::workload::workload(case, seed)) {
            (Ok(e), Ok(w)) => (e, w),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("rollfs-sim: {e}");
                return ExitCode::from(2);
            }
        };
        println!("{}", w.to_text());
        let (log, problems) = ex.sweep_replay(&w, eio);
        for l in log {
            println!("{l}");
        }
        for (k, d) in &problems {
            println!("VIOLATION {k}: {d}");
        }
        println!("{io} of {case}: {}", if problems.is_empty() { "ok" } else { "violated" });
        return if problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }
    let cases = if only.is_empty() { rollfs_sim::eio::standard_cases(ace, random) } else { only };
    if count {
        let mut total = 0;
        for case in &cases {
            match rollfs_sim::workload::workload(case, seed) {
                Ok(w) => {
                    let n = ex.count_points(&w);
                    total += n;
                    println!("{case}: {n} I/O-error points");
                }
                Err(e) => {
                    eprintln!("rollfs-sim: {case}: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        println!("{total} I/O-error points in {} workloads", cases.len());
        return ExitCode::SUCCESS;
    }
    let sum = rollfs_sim::eio::sweep(&ex, &cases, max_per_workload, true, &mut |v| {
        println!("VIOLATION {} in {}: {}", v.kind, v.case, v.detail);
        let point = v.detail.strip_prefix('[').and_then(|d| d.split_once(']')).map(|(p, _)| p);
        if let Some(p) = point {
            let m = mutant.as_ref().map(|m| format!(" --mutant {m}")).unwrap_or_default();
            let c = if cold { " --cold" } else { "" };
            println!("  reproduce: rollfs-sim eio-sweep --seed {seed} --case {} --io {p}{c}{m}", v.case);
        }
    });
    println!("trace digest {:016x}", sum.digest);
    println!("{}", sum.reads_line());
    println!("{} ({:.0} s)", sum.last_line(), sum.seconds);
    if sum.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `rollfs-sim cost`: the device cost table.
fn cost(a: CostArgs) -> ExitCode {
    let CostArgs { ops, warmup, pages, write_us, flush_us, read_us, queue_depth, image_mib, segment_blocks, no_mutant } =
        a;
    let o = rollfs_sim::cost::CostOptions {
        image_blocks: image_mib * 256,
        segment_blocks,
        ops: ops.max(1),
        warmup,
        pages,
        latency: rollfs_sim::cost::Latency { write_us, flush_us, read_us, queue_depth },
        ..Default::default()
    };
    let module = match GuestModule::default_guest() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("rollfs-sim: {e:#}");
            return ExitCode::from(2);
        }
    };
    let no_wait = if no_mutant {
        None
    } else {
        match rollfs_sim::guest::build_guest(&["rollfs-core/mutant-atomic-no-wait".to_string()])
            .and_then(|p| GuestModule::load(&p))
        {
            Ok(m) => Some(std::sync::Arc::new(m)),
            Err(e) => {
                eprintln!("rollfs-sim: {e:#}");
                return ExitCode::from(2);
            }
        }
    };
    match rollfs_sim::cost::run(&module, no_wait.as_ref(), &o) {
        Ok(rows) => {
            for l in rollfs_sim::cost::table(&o, &rows) {
                println!("{l}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rollfs-sim: cost: {e}");
            ExitCode::from(1)
        }
    }
}

/// `rollfs-sim mutants`: checks that exploration catches each core mutant.
fn mutants(a: MutantsArgs) -> ExitCode {
    let MutantsArgs { seed, cases, only } = a;
    let opts = Options { seed, torn: true, max_points: 200, ..Options::default() };
    let names: Vec<String> =
        rollfs_sim::mutants::list().into_iter().filter(|n| only.is_empty() || only.contains(n)).collect();
    let mut caught = 0;
    for n in &names {
        let r = rollfs_sim::mutants::check(n, &opts, cases);
        println!("{} {}: {} ({} states)", if r.caught { "caught" } else { "MISSED" }, r.name, r.note, r.states);
        caught += r.caught as usize;
    }
    println!("caught {caught} of {} mutants", names.len());
    if caught == names.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    match Cli::parse().cmd {
        Cmd::Print(a) => print(a),
        Cmd::Merge(a) => merge(a),
        Cmd::Explore(a) => explore(a),
        Cmd::Replay(a) => replay(a),
        Cmd::Bench(a) => bench(a),
        Cmd::Soak { hours, seed, ace, random, progress_secs, threads, mutant, shard, summary } => {
            let cfg = SoakConfig { hours, seed, ace, random, progress_secs, threads, shard, summary };
            soak(&cfg, mutant.as_deref())
        }
        Cmd::EioSweep(a) => eio_sweep(a),
        Cmd::Cost(a) => cost(a),
        Cmd::Mutants(a) => mutants(a),
    }
}
