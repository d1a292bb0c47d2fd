//! Workloads: the operation language, its text format, and the three workload sources.
//!
//! - random: seeded sequences over a small namespace, generated against the model so that
//!   most operations are meaningful (an operation that fails is still run and checked);
//! - ace: bounded exhaustive, in the spirit of CrashMonkey's ACE: a fixed setup of two
//!   directories with two files each, then every sequence of one and of two core
//!   operations, each followed by a persistence point;
//! - regression: text files in `wasm-harness/workloads/` (format below), replayed as is.
//!
//! Text format (one operation a line, `#` starts a comment, paths are absolute and
//! contain no spaces):
//!
//! ```text
//! @seed 42                      # device seed: completion order of writes (optional)
//! @completion random3|reverse|immediate   # completion policy (optional)
//! @discard ignore|zero          # discarded blocks keep old data | read as zeros (default)
//! @recovery-eio N|each          # in every crash state, read N of the recovery mount fails |
//!                               # every read of it fails in turn (see [`RecoveryEio`])
//! @device BLOCKS SEGMENT_BLOCKS # run on its own freshly formatted device of this size;
//!                               # BLOCKS `min` or `min+N`: the smallest mkfs accepts (+N)
//! @device BLOCKS SEG grow-from OLD  # formatted at OLD blocks with room to grow to BLOCKS
//!                               # (mkfs --max-size), for `grow`
//! @max-points N                 # at most N crash points per run (expensive states)
//! @earlier-life                 # the device held an earlier use of the same image: the
//!                               # workload runs once to its end (other data, other mount
//!                               # entropy), then the image's blocks are flashed over it
//!                               # (blocks mkfs never wrote keep that use's), then explored
//! @nsrec                        # formatted with namespace records in the fsync chain
//!                               # (FEATURE_INCOMPAT_NS_RECORDS: mkfs's default)
//! @nonsrec                      # formatted without them (mkfs -O nonsrec), said by a
//!                               # workload that guards the dentry-mark path
//!                               # (`explore --nsrec` / `--no-nsrec` force either)
//! @mixed                        # formatted with data beside its chain (mkfs's default)
//! @nomixed                      # formatted without (mkfs -O nomixed: every fsync batch's
//!                               # data in the data log; `--mixed` / `--no-mixed` force either)
//! @no-enospc                    # ENOSPC is a violation here (plenty of room: e.g. node ids
//!                               # freed since the checkpoint must be reclaimed, not refused)
//! create /a/f                   mkdir /a            symlink /a/l TARGET
//! write /a/f OFFSET LEN PATTERN truncate /a/f SIZE  chmod /a/f 640 (octal)
//! rename /a/f /b/g [noreplace|exchange]             link /a/f /b/h
//! unlink /a/f                   rmdir /a
//! setxattr /a/f NAME VALUE      removexattr /a/f NAME
//! punch /a/f OFF LEN           zero /a/f OFF LEN [keep]  falloc /a/f OFF LEN [keep]
//! sync                          fsync /a/f          fdatasync /a/f    fsync /a (directory)
//! grow [BLOCKS]                 # online grow to BLOCKS (none: the whole device); a
//!                               # persistence point as sync
//! atomic_start /a/f             atomic_commit /a/f  atomic_abort /a/f
//! repeat 3000 link /a/f /a/l{i} # N times, {i} = 1..N in path/name/value arguments
//! repeat 900 create /n/f{i} ; unlink /n/f{i}   # a body of several operations
//! open /a/f                     close /a/f          # a handle (an unlinked open file is an orphan)
//! fill /a/f CHUNK PATTERN [MAX] # append CHUNK bytes until a write fails (ENOSPC), at most MAX
//! shrink /a/f BYTES             # truncate to the file's size less BYTES
//! rmtree /a                     # rm -rf: /a and everything below it, one removal at a
//!                               # time (`rmtree /`: everything below the root)
//! ```
//!
//! Failed operations: an operation the model expects to succeed may fail with a resource
//! error the model cannot predict (ENOSPC, EMLINK, EFBIG; not under `@no-enospc`, and never
//! ENOSPC for a removal: unlink, rmdir, a truncation to a smaller size, a hole punch,
//! removexattr); it must then change nothing (failure atomicity): the model does not apply it, the live tree is
//! compared with the model after failed operations (sampled), and crash states judge it.
//!
//! Written data is a deterministic function of `(PATTERN, file offset)` (see
//! [`pattern_bytes`]), so a workload file stays small and every byte identifies its write.

use crate::device::Completion;
use crate::model::Model;
use crate::rng::{Hasher64, Rng};
use std::fmt;
use std::path::{Path, PathBuf};

pub const RENAME_NOREPLACE: u32 = 1;
pub const RENAME_EXCHANGE: u32 = 2;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    Create(String),
    Mkdir(String),
    Symlink(String, String),
    Write {
        path: String,
        offset: u64,
        len: u32,
        pattern: u32,
    },
    Truncate(String, u64),
    /// fallocate: `punch PATH OFF LEN` (PUNCH_HOLE | KEEP_SIZE), `zero PATH OFF LEN` (ZERO_RANGE,
    /// the size grows to cover the range), `zero PATH OFF LEN keep` (ZERO_RANGE |
    /// KEEP_SIZE), `falloc PATH OFF LEN` (mode 0: reserve, the size grows) and `falloc PATH
    /// OFF LEN keep` (KEEP_SIZE): the last field 0, 2, 1, 3 and 4.
    Punch(String, u64, u64, u8),
    Chmod(String, u32),
    Rename(String, String, u32),
    Link(String, String),
    Unlink(String),
    Rmdir(String),
    SetXattr(String, String, String),
    RemoveXattr(String, String),
    Sync,
    /// Parsed and run; its per-file guarantee is checked from the next issue on.
    Fsync(String),
    Fdatasync(String),
    /// Atomic-write session on a file: start, (writes), commit or abort.
    AtomicStart(String),
    AtomicCommit(String),
    AtomicAbort(String),
    /// A handle on a file (`Filesystem::open`), closed by `Close` of the same path string
    /// (the path need not exist by then: an unlinked open file is an orphan).
    Open(String),
    Close(String),
    /// `fill PATH CHUNK PATTERN [MAX]`: appends `CHUNK` bytes at the end of the file, again
    /// and again, until a write fails (ENOSPC) or `MAX` writes (0: 100,000) were made; each
    /// write is an operation of its own in the run (pattern `PATTERN + n` for write n).
    Fill {
        path: String,
        chunk: u32,
        pattern: u32,
        max: u32,
    },
    /// The body of a `repeat` with several operations (`a ; b`), run in order.
    Seq(Vec<Op>),
    /// `shrink PATH BYTES`: truncate the file to its size less `BYTES` (at least 0): frees
    /// an exact amount after a `fill` whose length only the run knows.
    Shrink(String, u64),
    /// `rmtree PATH`: removes `PATH` and everything below it as `rm -rf` does (`/`: all
    /// below the root), each name a removal of its own (files first, then directories,
    /// deepest first), listed from the model when the operation runs.
    Rmtree(String),
    /// `repeat N OP`: the operation `N` times, with every `{i}` in its path, name and
    /// value arguments replaced by 1, 2, ..., N (e.g. thousands of links in one
    /// directory). Only namespace and data operations repeat, never a persistence point.
    /// The explorer records consecutive repetitions whose device I/O was reads only (or
    /// none) as one operation (a crash between them leaves what a crash before them
    /// leaves), so a long repetition costs one model state, not one per repetition.
    Repeat(u32, Box<Op>),
    /// `grow BLOCKS`: online grow of the mounted filesystem to a device of BLOCKS blocks
    /// (`grow` alone: the whole device), within the room a `@device ... grow-from`
    /// workload formats it with. A persistence point as `sync` (the grow checkpoints
    /// first, and its own checkpoint carries the tree too).
    Grow(u64),
}

impl Op {
    /// Operations after which the whole tree must be durable (this issue's persistence
    /// points; fsync-class points are added with roll-forward recovery).
    pub fn is_checkpoint_point(&self) -> bool {
        matches!(self, Op::Sync | Op::Grow(_))
    }

    /// The file whose state an fsync-class persistence point makes durable (fsync,
    /// fdatasync, atomic commit).
    pub fn fsync_target(&self) -> Option<&str> {
        match self {
            Op::Fsync(p) | Op::Fdatasync(p) | Op::AtomicCommit(p) => Some(p),
            _ => None,
        }
    }

    /// Every path the operation names.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Op::Create(p)
            | Op::Mkdir(p)
            | Op::Symlink(p, _)
            | Op::Truncate(p, _)
            | Op::Punch(p, ..)
            | Op::Chmod(p, _)
            | Op::Unlink(p)
            | Op::Rmdir(p)
            | Op::SetXattr(p, _, _)
            | Op::RemoveXattr(p, _)
            | Op::Fsync(p)
            | Op::Fdatasync(p)
            | Op::AtomicStart(p)
            | Op::AtomicCommit(p)
            | Op::AtomicAbort(p)
            | Op::Open(p)
            | Op::Close(p)
            | Op::Fill { path: p, .. }
            | Op::Shrink(p, _)
            | Op::Rmtree(p)
            | Op::Write { path: p, .. } => vec![p],
            Op::Seq(v) => v.iter().flat_map(|o| o.paths()).collect(),
            Op::Rename(a, b, _) | Op::Link(a, b) => vec![a, b],
            Op::Sync | Op::Grow(_) => vec![],
            // Conservatively the directories the repetitions touch (a template path
            // names no real file): everything under them counts as touched.
            Op::Repeat(_, op) => op.paths().into_iter().map(|p| &p[..p.rfind('/').unwrap_or(0)]).collect(),
        }
    }

    /// Whether the operation may be the body of a `repeat`.
    pub fn repeatable(&self) -> bool {
        !matches!(
            self,
            Op::Sync
                | Op::Grow(_)
                | Op::Fsync(_)
                | Op::Fdatasync(_)
                | Op::AtomicStart(_)
                | Op::AtomicCommit(_)
                | Op::AtomicAbort(_)
                | Op::Repeat(..)
                | Op::Fill { .. }
                | Op::Rmtree(_)
        )
    }

    /// The operations a `repeat` stands for (any other operation: itself).
    pub fn expand(&self) -> Vec<Op> {
        let Op::Repeat(n, op) = self else { return vec![self.clone()] };
        (1..=*n).flat_map(|i| op.substitute(i)).collect()
    }

    /// The body of a repetition with `{i}` replaced by `i` (a `Seq` flattened).
    fn substitute(&self, i: u32) -> Vec<Op> {
        if let Op::Seq(v) = self {
            return v.iter().flat_map(|o| o.substitute(i)).collect();
        }
        let s = |x: &String| x.replace("{i}", &i.to_string());
        vec![match self {
            Op::Create(p) => Op::Create(s(p)),
            Op::Mkdir(p) => Op::Mkdir(s(p)),
            Op::Symlink(p, t) => Op::Symlink(s(p), s(t)),
            Op::Write { path, offset, len, pattern } => {
                Op::Write { path: s(path), offset: *offset, len: *len, pattern: *pattern }
            }
            Op::Truncate(p, n) => Op::Truncate(s(p), *n),
            Op::Punch(p, o, l, m) => Op::Punch(s(p), *o, *l, *m),
            Op::Chmod(p, m) => Op::Chmod(s(p), *m),
            Op::Rename(a, b, f) => Op::Rename(s(a), s(b), *f),
            Op::Link(a, b) => Op::Link(s(a), s(b)),
            Op::Unlink(p) => Op::Unlink(s(p)),
            Op::Rmdir(p) => Op::Rmdir(s(p)),
            Op::SetXattr(p, n, v) => Op::SetXattr(s(p), s(n), s(v)),
            Op::RemoveXattr(p, n) => Op::RemoveXattr(s(p), s(n)),
            Op::Open(p) => Op::Open(s(p)),
            Op::Close(p) => Op::Close(s(p)),
            other => other.clone(),
        }]
    }
}

impl Op {
    /// The same operation writing other bytes (`@earlier-life`): every pattern changed.
    pub fn with_other_data(&self) -> Op {
        const OTHER: u32 = 0x5EED_0000;
        match self {
            Op::Write { path, offset, len, pattern } => {
                Op::Write { path: path.clone(), offset: *offset, len: *len, pattern: pattern ^ OTHER }
            }
            Op::Fill { path, chunk, pattern, max } => {
                Op::Fill { path: path.clone(), chunk: *chunk, pattern: pattern ^ OTHER, max: *max }
            }
            Op::Seq(ops) => Op::Seq(ops.iter().map(Op::with_other_data).collect()),
            Op::Repeat(n, op) => Op::Repeat(*n, Box::new(op.with_other_data())),
            op => op.clone(),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Create(p) => write!(f, "create {p}"),
            Op::Mkdir(p) => write!(f, "mkdir {p}"),
            Op::Symlink(p, t) => write!(f, "symlink {p} {t}"),
            Op::Write { path, offset, len, pattern } => write!(f, "write {path} {offset} {len} {pattern}"),
            Op::Truncate(p, s) => write!(f, "truncate {p} {s}"),
            Op::Punch(p, o, l, 0) => write!(f, "punch {p} {o} {l}"),
            Op::Punch(p, o, l, 1) => write!(f, "zero {p} {o} {l} keep"),
            Op::Punch(p, o, l, 2) => write!(f, "zero {p} {o} {l}"),
            Op::Punch(p, o, l, 3) => write!(f, "falloc {p} {o} {l}"),
            Op::Punch(p, o, l, _) => write!(f, "falloc {p} {o} {l} keep"),
            Op::Chmod(p, m) => write!(f, "chmod {p} {m:o}"),
            Op::Rename(a, b, fl) => {
                write!(f, "rename {a} {b}")?;
                match *fl {
                    RENAME_NOREPLACE => write!(f, " noreplace"),
                    RENAME_EXCHANGE => write!(f, " exchange"),
                    0 => Ok(()),
                    other => write!(f, " flags={other}"),
                }
            }
            Op::Link(a, b) => write!(f, "link {a} {b}"),
            Op::Unlink(p) => write!(f, "unlink {p}"),
            Op::Rmdir(p) => write!(f, "rmdir {p}"),
            Op::SetXattr(p, n, v) => write!(f, "setxattr {p} {n} {v}"),
            Op::RemoveXattr(p, n) => write!(f, "removexattr {p} {n}"),
            Op::Sync => write!(f, "sync"),
            Op::Grow(0) => write!(f, "grow"),
            Op::Grow(n) => write!(f, "grow {n}"),
            Op::Fsync(p) => write!(f, "fsync {p}"),
            Op::Fdatasync(p) => write!(f, "fdatasync {p}"),
            Op::AtomicStart(p) => write!(f, "atomic_start {p}"),
            Op::AtomicCommit(p) => write!(f, "atomic_commit {p}"),
            Op::AtomicAbort(p) => write!(f, "atomic_abort {p}"),
            Op::Repeat(n, op) => write!(f, "repeat {n} {op}"),
            Op::Open(p) => write!(f, "open {p}"),
            Op::Shrink(p, n) => write!(f, "shrink {p} {n}"),
            Op::Rmtree(p) => write!(f, "rmtree {p}"),
            Op::Close(p) => write!(f, "close {p}"),
            Op::Fill { path, chunk, pattern, max } => write!(f, "fill {path} {chunk} {pattern} {max}"),
            Op::Seq(v) => {
                for (k, o) in v.iter().enumerate() {
                    if k > 0 {
                        write!(f, " ; ")?;
                    }
                    write!(f, "{o}")?;
                }
                Ok(())
            }
        }
    }
}

/// The removals of `rmtree dir` over a tree whose names are `files` (everything that is not
/// a directory) and `dirs`: the files below `dir`, then the directories below it deepest
/// first, then `dir` itself (not the root).
pub fn rmtree_ops(dir: &str, files: &[String], dirs: &[String]) -> Vec<Op> {
    let below = |p: &str| dir == "/" || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
    let mut ops: Vec<Op> = files.iter().filter(|p| below(p)).map(|p| Op::Unlink(p.clone())).collect();
    let mut sub: Vec<&String> = dirs.iter().filter(|p| p.as_str() != "/" && below(p)).collect();
    sub.sort_by_key(|p| (std::cmp::Reverse(p.matches('/').count()), p.as_str()));
    ops.extend(sub.into_iter().map(|p| Op::Rmdir(p.clone())));
    if dir != "/" && dirs.iter().any(|d| d == dir) {
        ops.push(Op::Rmdir(dir.to_string()));
    } else if dir != "/" && files.iter().any(|f| f == dir) {
        ops.push(Op::Unlink(dir.to_string()));
    }
    ops
}

/// The bytes a `write` with `pattern` puts at file offsets `offset..offset+len`.
pub fn pattern_bytes(pattern: u32, offset: u64, len: u32) -> Vec<u8> {
    with_pattern_bytes(pattern, offset, len, <[u8]>::to_vec)
}

/// `f` of [`pattern_bytes`]`(pattern, offset, len)`, without a copy when they are the
/// bytes this thread made last: a workload run makes each write's bytes twice in a row, for
/// the guest and for the model (a few percent of an exploration made them twice).
pub fn with_pattern_bytes<R>(pattern: u32, offset: u64, len: u32, f: impl FnOnce(&[u8]) -> R) -> R {
    thread_local! {
        /// The last bytes made on this thread, with their (pattern, offset, len).
        static LAST: std::cell::RefCell<((u32, u64, u32), Vec<u8>)> = const { std::cell::RefCell::new(((0, 0, 0), Vec::new())) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        let key = (pattern, offset, len);
        if last.0 != key || last.1.len() != len as usize {
            last.1.clear();
            make_pattern_bytes(pattern, offset, len, &mut last.1);
            last.0 = key;
        }
        f(&last.1)
    })
}

/// Appends the bytes of [`pattern_bytes`] to `out`.
fn make_pattern_bytes(pattern: u32, offset: u64, len: u32, out: &mut Vec<u8>) {
    let base = (pattern as u64).wrapping_mul(0x9E37_79B9);
    let end = offset + len as u64;
    // Fast path, the same bytes: below 2^27 `pos * 31 ^ pos >> 9` fits in 32 bits, and with
    // `base + 2^32` not wrapping, `(base + y) % 251 = (base % 251 + y % 251) % 251`, whose
    // per-byte part is a 32-bit remainder.
    if end <= 1 << 27 && base <= u64::MAX - (1 << 32) {
        let b = (base % 251) as u32;
        out.extend((offset as u32..end as u32).map(|pos| {
            let r = b + (pos.wrapping_mul(31) ^ (pos >> 9)) % 251;
            1 + (if r >= 251 { r - 251 } else { r }) as u8
        }));
        return;
    }
    out.extend((offset..end).map(|pos| pattern_byte_reference(base, pos)));
}

/// One byte of [`pattern_bytes`] by its definition (`base` = `pattern * 0x9E3779B9`).
fn pattern_byte_reference(base: u64, pos: u64) -> u8 {
    let x = base.wrapping_add(pos.wrapping_mul(31) ^ (pos >> 9));
    1 + (x % 251) as u8
}

/// A workload: operations plus the device behaviour it runs against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub name: String,
    pub ops: Vec<Op>,
    /// Seed of the device's completion order.
    pub dev_seed: u64,
    pub completion: Completion,
    /// The device ignores discards (old data stays readable, as on many SD cards) instead
    /// of reading discarded blocks as zeros.
    pub discard_ignored: bool,
    /// Read errors injected into the recovery mount of every crash state (`@recovery-eio`).
    pub recovery_eio: Option<RecoveryEio>,
    /// `@device BLOCKS SEGMENT_BLOCKS`: its own device geometry (default: the explorer's).
    pub device: Option<DeviceSpec>,
    /// `@no-enospc`: a resource error where the model expects success is a violation.
    pub no_enospc: bool,
    /// `@max-points N`: at most N crash points per run of this workload (its crash states
    /// are expensive: e.g. a thousand orphans to evict in every recovery).
    pub max_points: Option<usize>,
    /// `@earlier-life`: the device first held an earlier use of the same image
    /// ([`Workload::earlier_life_ops`]), flashed over with the image before this run.
    pub earlier_life: bool,
    /// `@nsrec` (`Some(true)`): the device is formatted with namespace records in the fsync
    /// chain (`FEATURE_INCOMPAT_NS_RECORDS`, `rollfs mkfs`'s default); `@nonsrec`
    /// (`Some(false)`): without them (`mkfs -O nonsrec`, where a directory fsync
    /// checkpoints and a new file's name comes back by its dentry mark). `None`: the
    /// explorer's choice (`NSREC_DEFAULT` unless `--nsrec` / `--no-nsrec`).
    pub nsrec: Option<bool>,
    /// `@mixed` (`Some(true)`): the device is formatted with data beside its chain
    /// (`FEATURE_INCOMPAT_MIXED_NODE`, `rollfs mkfs`'s default); `@nomixed`
    /// (`Some(false)`): without (`mkfs -O nomixed`, every fsync batch's data in the data
    /// log, its nodes in the node log). `None`: the explorer's choice (`MIXED_DEFAULT`
    /// unless `--mixed` / `--no-mixed`).
    pub mixed: Option<bool>,
}

/// `@device`: the device a workload runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceSpec {
    /// `blocks` counts from the smallest device mkfs accepts with this segment size.
    pub above_min: bool,
    pub blocks: u64,
    pub segment_blocks: u32,
    /// `grow-from OLD`: the filesystem is formatted at OLD blocks with room to grow to the
    /// device (`mkfs --max-size`), as an image file later extended; 0: the whole device.
    pub grow_from: u64,
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.above_min, self.blocks) {
            (true, 0) => write!(f, "min {}", self.segment_blocks),
            (true, n) => write!(f, "min+{n} {}", self.segment_blocks),
            (false, n) => write!(f, "{n} {}", self.segment_blocks),
        }?;
        if self.grow_from != 0 {
            write!(f, " grow-from {}", self.grow_from)?;
        }
        Ok(())
    }
}

/// `@recovery-eio`: how the recovery mount of every crash state of a workload meets a
/// read error (independently of `--eio`, which injects one at random in some states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryEio {
    /// `@recovery-eio N`: the recovery mount's read N (0-based) fails.
    Nth(u64),
    /// `@recovery-eio each`: in every crash state whose recovery rolls something forward
    /// (its healthy mount writes), the state is checked once healthy and then once per
    /// read of that healthy mount, with that read failing: every read of the chain walk
    /// (and of the checkpoint and tables before it) fails in turn.
    Each,
}

impl Workload {
    /// The earlier use of the image an `@earlier-life` workload's device held: the same
    /// operations writing other bytes (every pattern changed), so that any of its data
    /// seen in a crash state of the run proper is told apart.
    pub fn earlier_life_ops(&self) -> Vec<Op> {
        self.ops.iter().map(Op::with_other_data).collect()
    }

    pub fn to_text(&self) -> String {
        let mut s = format!("# {}\n@seed {}\n", self.name, self.dev_seed);
        s += &format!(
            "@completion {}\n",
            match self.completion {
                Completion::Random(n) => format!("random{n}"),
                Completion::Reverse => "reverse".into(),
                Completion::Immediate => "immediate".into(),
            }
        );
        if self.discard_ignored {
            s += "@discard ignore\n";
        }
        match self.recovery_eio {
            None => {}
            Some(RecoveryEio::Nth(n)) => s += &format!("@recovery-eio {n}\n"),
            Some(RecoveryEio::Each) => s += "@recovery-eio each\n",
        }
        if let Some(d) = self.device {
            s += &format!("@device {d}\n");
        }
        if self.earlier_life {
            s += "@earlier-life\n";
        }
        match self.nsrec {
            Some(true) => s += "@nsrec\n",
            Some(false) => s += "@nonsrec\n",
            None => {}
        }
        match self.mixed {
            Some(true) => s += "@mixed\n",
            Some(false) => s += "@nomixed\n",
            None => {}
        }
        if self.no_enospc {
            s += "@no-enospc\n";
        }
        if let Some(n) = self.max_points {
            s += &format!("@max-points {n}\n");
        }
        for op in &self.ops {
            s += &format!("{op}\n");
        }
        s
    }

    pub fn parse(name: &str, text: &str, default_seed: u64) -> Result<Workload, String> {
        let mut w = Workload {
            name: name.to_string(),
            ops: Vec::new(),
            dev_seed: default_seed,
            completion: Completion::Random(3),
            discard_ignored: false,
            recovery_eio: None,
            device: None,
            no_enospc: false,
            max_points: None,
            earlier_life: false,
            nsrec: None,
            mixed: None,
        };
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap().trim();
            if line.is_empty() {
                continue;
            }
            let t: Vec<&str> = line.split_whitespace().collect();
            let err = |m: &str| format!("{name}:{}: {m}: {line}", n + 1);
            let num = |s: &str| s.parse::<u64>().map_err(|_| err("bad number"));
            let arg = |i: usize| t.get(i).map(|s| s.to_string()).ok_or_else(|| err("missing argument"));
            let op = match t[0] {
                "@seed" => {
                    w.dev_seed = num(&arg(1)?)?;
                    continue;
                }
                "@completion" => {
                    w.completion = match arg(1)?.as_str() {
                        "reverse" => Completion::Reverse,
                        "immediate" => Completion::Immediate,
                        s => Completion::Random(
                            s.strip_prefix("random")
                                .and_then(|n| n.parse().ok())
                                .filter(|n| *n > 0)
                                .ok_or_else(|| err("bad completion"))?,
                        ),
                    };
                    continue;
                }
                "@discard" => {
                    w.discard_ignored = match arg(1)?.as_str() {
                        "ignore" => true,
                        "zero" => false,
                        _ => return Err(err("bad discard (ignore|zero)")),
                    };
                    continue;
                }
                "@recovery-eio" => {
                    w.recovery_eio = Some(match arg(1)?.as_str() {
                        "each" => RecoveryEio::Each,
                        n => RecoveryEio::Nth(n.parse().map_err(|_| err("bad recovery-eio (N|each)"))?),
                    });
                    continue;
                }
                "@device" => {
                    let b = arg(1)?;
                    let (above_min, blocks) = match b.strip_prefix("min") {
                        Some("") => (true, 0),
                        Some(r) => (true, num(r.strip_prefix('+').ok_or_else(|| err("min+N"))?)?),
                        None => (false, num(&b)?),
                    };
                    let sb = num(&arg(2)?)?;
                    if (!above_min && blocks == 0) || sb == 0 || sb > u32::MAX as u64 {
                        return Err(err("bad device (BLOCKS|min|min+N SEGMENT_BLOCKS)"));
                    }
                    let grow_from = match (t.get(3).copied(), t.get(4)) {
                        (None, _) => 0,
                        (Some("grow-from"), Some(n)) if num(n)? > 0 => num(n)?,
                        _ => return Err(err("bad device (... grow-from OLD_BLOCKS)")),
                    };
                    w.device = Some(DeviceSpec { above_min, blocks, segment_blocks: sb as u32, grow_from });
                    continue;
                }
                "@no-enospc" => {
                    w.no_enospc = true;
                    continue;
                }
                "@earlier-life" => {
                    w.earlier_life = true;
                    continue;
                }
                "@nsrec" => {
                    w.nsrec = Some(true);
                    continue;
                }
                "@nonsrec" => {
                    w.nsrec = Some(false);
                    continue;
                }
                "@mixed" => {
                    w.mixed = Some(true);
                    continue;
                }
                "@nomixed" => {
                    w.mixed = Some(false);
                    continue;
                }
                "@max-points" => {
                    w.max_points = Some(num(&arg(1)?)?.max(2) as usize);
                    continue;
                }
                _ => parse_op(&t, &err)?,
            };
            w.ops.push(op);
        }
        Ok(w)
    }

    /// A stable identity of the workload (its text), mixed into per-state seeds.
    pub fn hash(&self) -> u64 {
        let mut h = Hasher64::new();
        h.bytes(self.to_text().as_bytes());
        h.finish()
    }
}

/// Parses one operation line (already split into words).
fn parse_op(t: &[&str], err: &dyn Fn(&str) -> String) -> Result<Op, String> {
    let num = |s: &str| s.parse::<u64>().map_err(|_| err("bad number"));
    let arg = |i: usize| t.get(i).map(|s| s.to_string()).ok_or_else(|| err("missing argument"));
    Ok(match t[0] {
        "create" => Op::Create(arg(1)?),
        "mkdir" => Op::Mkdir(arg(1)?),
        "symlink" => Op::Symlink(arg(1)?, arg(2)?),
        "write" => Op::Write {
            path: arg(1)?,
            offset: num(&arg(2)?)?,
            len: num(&arg(3)?)? as u32,
            pattern: num(&arg(4)?)? as u32,
        },
        "truncate" => Op::Truncate(arg(1)?, num(&arg(2)?)?),
        "punch" => Op::Punch(arg(1)?, num(&arg(2)?)?, num(&arg(3)?)?, 0),
        "zero" | "falloc" => {
            let keep = match t.get(4).copied() {
                None => false,
                Some("keep") => true,
                Some(x) => return Err(err(&format!("{}: unknown flag {x:?} (keep)", t[0]))),
            };
            let mode = match (t[0], keep) {
                ("zero", true) => 1,
                ("zero", false) => 2,
                (_, false) => 3,
                (_, true) => 4,
            };
            Op::Punch(arg(1)?, num(&arg(2)?)?, num(&arg(3)?)?, mode)
        }
        "chmod" => Op::Chmod(arg(1)?, u32::from_str_radix(&arg(2)?, 8).map_err(|_| err("bad octal mode"))?),
        "rename" => {
            let fl = match t.get(3).copied() {
                None => 0,
                Some("noreplace") => RENAME_NOREPLACE,
                Some("exchange") => RENAME_EXCHANGE,
                Some(s) => {
                    s.strip_prefix("flags=").and_then(|v| v.parse().ok()).ok_or_else(|| err("bad rename flag"))?
                }
            };
            Op::Rename(arg(1)?, arg(2)?, fl)
        }
        "link" => Op::Link(arg(1)?, arg(2)?),
        "unlink" => Op::Unlink(arg(1)?),
        "rmdir" => Op::Rmdir(arg(1)?),
        "setxattr" => Op::SetXattr(arg(1)?, arg(2)?, arg(3)?),
        "removexattr" => Op::RemoveXattr(arg(1)?, arg(2)?),
        "sync" => Op::Sync,
        "grow" => Op::Grow(match t.get(1) {
            None => 0,
            Some(n) => num(n)?,
        }),
        "fsync" => Op::Fsync(arg(1)?),
        "fdatasync" => Op::Fdatasync(arg(1)?),
        "atomic_start" => Op::AtomicStart(arg(1)?),
        "atomic_commit" => Op::AtomicCommit(arg(1)?),
        "atomic_abort" => Op::AtomicAbort(arg(1)?),
        "open" => Op::Open(arg(1)?),
        "shrink" => Op::Shrink(arg(1)?, num(&arg(2)?)?),
        "rmtree" => Op::Rmtree(arg(1)?),
        "close" => Op::Close(arg(1)?),
        "fill" => Op::Fill {
            path: arg(1)?,
            chunk: num(&arg(2)?)?.clamp(1, 1 << 24) as u32,
            pattern: num(&arg(3)?)? as u32,
            max: match t.get(4) {
                Some(m) => num(m)? as u32,
                None => 0,
            },
        },
        "repeat" => {
            let n = num(&arg(1)?)?;
            if t.len() < 3 || n == 0 || n > 100_000 {
                return Err(err("repeat N OP (1 <= N <= 100000)"));
            }
            let mut body = Vec::new();
            for part in t[2..].split(|w| *w == ";") {
                if part.is_empty() {
                    return Err(err("empty operation in a repeat body"));
                }
                let op = parse_op(part, err)?;
                if !op.repeatable() {
                    return Err(err("only namespace and data operations repeat"));
                }
                body.push(op);
            }
            let op = if body.len() == 1 { body.pop().unwrap() } else { Op::Seq(body) };
            Op::Repeat(n as u32, Box::new(op))
        }
        _ => return Err(err("unknown operation")),
    })
}

/// Which source a workload comes from, and its index there: the `--case` of `replay`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseId {
    Random(u64),
    Ace(u64),
    /// A workload of the families where resources run out ([`full_workload`]).
    Full(u64),
    /// ACE with sequences of up to three operations ([`ace3_workload`]).
    Ace3(u64),
    File(PathBuf),
}

impl fmt::Display for CaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaseId::Random(k) => write!(f, "random:{k}"),
            CaseId::Ace(k) => write!(f, "ace:{k}"),
            CaseId::Full(k) => write!(f, "full:{k}"),
            CaseId::Ace3(k) => write!(f, "ace3:{k}"),
            CaseId::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

impl std::str::FromStr for CaseId {
    type Err = String;
    fn from_str(s: &str) -> Result<CaseId, String> {
        let (kind, rest) = s.split_once(':').ok_or("case is random:K, ace:K, full:K or file:PATH")?;
        let num = || rest.parse::<u64>().map_err(|_| format!("bad case index {rest}"));
        match kind {
            "random" => Ok(CaseId::Random(num()?)),
            "ace" => Ok(CaseId::Ace(num()?)),
            "full" => Ok(CaseId::Full(num()?)),
            "ace3" => Ok(CaseId::Ace3(num()?)),
            "file" => Ok(CaseId::File(PathBuf::from(rest))),
            _ => Err(format!("unknown case kind {kind}")),
        }
    }
}

/// Builds the workload of a case.
pub fn workload(case: &CaseId, seed: u64) -> Result<Workload, String> {
    match case {
        CaseId::Random(k) => Ok(random_workload(seed, *k)),
        CaseId::Full(k) => Ok(full_workload(seed, *k)),
        CaseId::Ace3(k) => {
            ace3_workload(seed, *k).ok_or_else(|| format!("ace3 case {k} out of range ({})", ace3_count()))
        }
        CaseId::Ace(k) => ace_workload(seed, *k).ok_or_else(|| format!("ace case {k} out of range ({})", ace_count())),
        CaseId::File(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let mut h = Hasher64::new();
            h.u64(seed);
            h.bytes(text.as_bytes());
            Workload::parse(&name, &text, h.finish())
        }
    }
}

const DIRS: [&str; 3] = ["/a", "/b", "/a/c"];
const NAMES: [&str; 4] = ["f", "g", "h", "i"];
const OFFSETS: [u64; 7] = [0, 0, 100, 3000, 4096, 8192, 13000];
const LENS: [u32; 7] = [1, 100, 1000, 3700, 4096, 5000, 9000];

fn random_path(rng: &mut Rng) -> String {
    let d = *rng.pick(&["", "/a", "/b", "/a/c"]);
    format!("{d}/{}", rng.pick(&NAMES))
}

/// The random workload `index` of `seed`: 6 to 30 operations, with syncs sprinkled in; one
/// in 16 `@earlier-life`, one in 2 `@nonsrec`, one in 4 `@nomixed`.
pub fn random_workload(seed: u64, index: u64) -> Workload {
    let mut rng = Rng::derive(&[seed, 0x52414e44, index]);
    let mut model = Model::new();
    let mut ops = Vec::new();
    let len = 6 + rng.below(25);
    while (ops.len() as u64) < len {
        let (files, dirs) = model.paths();
        let any_file = |rng: &mut Rng| {
            if files.is_empty() || rng.chance(1, 8) {
                random_path(rng)
            } else {
                rng.pick(&files).clone()
            }
        };
        if rng.chance(1, 24) {
            // An atomic-write session: start, one or two writes, then commit or abort.
            let p = any_file(&mut rng);
            let mut session = vec![Op::AtomicStart(p.clone())];
            for _ in 0..1 + rng.below(2) {
                session.push(Op::Write {
                    path: p.clone(),
                    offset: *rng.pick(&OFFSETS),
                    len: *rng.pick(&LENS),
                    pattern: 1 + rng.below(1000) as u32,
                });
            }
            session.push(if rng.chance(3, 4) { Op::AtomicCommit(p) } else { Op::AtomicAbort(p) });
            for op in session {
                let _ = model.apply(&op);
                ops.push(op);
            }
            continue;
        }
        let op = match rng.below(24) {
            0 | 1 => Op::Create(random_path(&mut rng)),
            2 => Op::Mkdir(rng.pick(&DIRS).to_string()),
            3..=5 => Op::Write {
                path: any_file(&mut rng),
                offset: *rng.pick(&OFFSETS),
                len: *rng.pick(&LENS),
                pattern: 1 + rng.below(1000) as u32,
            },
            6 if rng.chance(1, 2) => Op::Punch(
                any_file(&mut rng),
                *rng.pick(&[0, 1, 100, 4096, 5000, 12288]),
                *rng.pick(&[1, 4095, 4096, 9000, 20000]),
                rng.below(5) as u8,
            ),
            6 => Op::Truncate(any_file(&mut rng), *rng.pick(&[0, 1, 50, 4000, 4096, 10000])),
            7 | 8 => {
                let flags = *rng.pick(&[0, 0, 0, RENAME_NOREPLACE, RENAME_EXCHANGE]);
                let src = if rng.chance(1, 4) { rng.pick(&dirs).clone() } else { any_file(&mut rng) };
                Op::Rename(src, random_path(&mut rng), flags)
            }
            9 => Op::Link(any_file(&mut rng), random_path(&mut rng)),
            10 | 11 => Op::Unlink(any_file(&mut rng)),
            12 => Op::Rmdir(rng.pick(&dirs).clone()),
            13 => Op::Chmod(any_file(&mut rng), *rng.pick(&[0o600, 0o640, 0o755, 0o4711])),
            14 => Op::SetXattr(
                any_file(&mut rng),
                format!("user.{}", rng.pick(&["x", "y"])),
                format!("v{}", rng.below(100)),
            ),
            15 => Op::RemoveXattr(any_file(&mut rng), format!("user.{}", rng.pick(&["x", "y"]))),
            16 => Op::Symlink(random_path(&mut rng), "target".into()),
            17 | 18 => Op::Fsync(any_file(&mut rng)),
            19 => Op::Fdatasync(any_file(&mut rng)),
            20 => Op::Fsync(rng.pick(&dirs).clone()),
            _ => Op::Sync,
        };
        let _ = model.apply(&op);
        ops.push(op);
    }
    Workload {
        name: format!("random-{seed}-{index}"),
        ops,
        dev_seed: Rng::derive(&[seed, index, 1]).next_u64(),
        completion: Completion::Random(3),
        // Half the random cases run on a device that ignores discards.
        discard_ignored: Rng::derive(&[seed, index, 2]).chance(1, 2),
        recovery_eio: None,
        device: None,
        no_enospc: false,
        max_points: None,
        // One random case in 16 starts on a device that held an earlier use of the image
        // (its own history, other data): the mount's version jump must keep that use's
        // chain out of every crash state of this one.
        earlier_life: Rng::derive(&[seed, index, 3]).chance(1, 16),
        // Half the random cases run on an image without namespace records (`mkfs -O
        // nonsrec`, the format older binaries mount), the others as mkfs makes images by
        // default (with them).
        nsrec: Rng::derive(&[seed, index, 4]).chance(1, 2).then_some(false),
        // One random case in 4 runs on an image without data beside its chain (`mkfs -O
        // nomixed`): every fsync batch in two logs, the data log's and the node log's,
        // which on mkfs's default images only batches of more than 16 blocks take.
        mixed: Rng::derive(&[seed, index, 5]).chance(1, 4).then_some(false),
    }
}

/// The families of [`full_workload`], in the order `full:K` cycles through them.
pub const FULL_FAMILIES: [&str; 8] =
    ["fill-churn", "squeeze", "fsync-full", "xattr-full", "nid-churn", "orphans", "fragmented", "fill-delete"];

/// Workload `full:K` of `seed`: family `K % 8` of [`FULL_FAMILIES`], where resources run out
/// (issue 13: bugs live where the device is full, ids and orphan slots run short):
///
/// - fill-churn: the smallest device mkfs accepts (or a little more), filled by appending
///   until ENOSPC, then 24-40 operations that keep meeting ENOSPC: writes (overwrites, new
///   blocks, far blocks needing a new direct node), creates, xattrs, truncates, renames,
///   chmod of many files, atomic sessions (commit and abort), fsync, fdatasync, sync, and
///   unlinks or truncates that free room now and then;
/// - squeeze: the same, from a device filled then freed a little, with free space shrunk
///   before every operation (a filler file grown by a block or two);
/// - fsync-full: many small files made durable, the device filled, then write + fsync of
///   file after file (the roll-forward of their chains must fit on the full device);
/// - xattr-full: filled to a few free blocks; fsyncs of many files, then a new file with its
///   first xattr, written and fsync'd (recovery must not need to write a checkpoint);
/// - nid-churn (`@no-enospc`): create/unlink pairs beyond the node-id count before any
///   checkpoint, then creates and an atomic session with a far block: freed ids must be
///   reclaimed (a checkpoint), not refused;
/// - orphans (`@no-enospc`): more than a thousand files opened, unlinked while open (orphans),
///   checkpointed, partly closed, with operations and fsyncs in between;
/// - fragmented: hundreds of one-block files, every third unlinked and checkpointed, the
///   device filled, then overwrite + fsync of every kept file: the chain's recovery
///   reserve runs short, fsync falls back to a checkpoint and cleans inside fsync;
/// - fill-delete: a mixed metadata fill in the manner of fsstress (small files in several
///   directories, xattrs, hard links, symlinks, renames), the device filled, churn on the
///   full device, then `rmtree /`: every removal must succeed (ENOSPC for a removal is a
///   violation in every workload) and the space must come back (issue 41: a filesystem
///   filled by fsstress could not delete anything until it was unmounted).
///
/// Every crash state of these runs is recovered, and crashes during that recovery too.
pub fn full_workload(seed: u64, k: u64) -> Workload {
    let mut rng = Rng::derive(&[seed, 0xF011, k]);
    let family = FULL_FAMILIES[(k % FULL_FAMILIES.len() as u64) as usize];
    let mut ops = Vec::new();
    let mut device = Some(DeviceSpec { above_min: true, blocks: 16 * rng.below(9), segment_blocks: 16, grow_from: 0 });
    let mut no_enospc = false;
    let mut max_points = None;
    let w = |p: &str, offset: u64, len: u32, pattern: u32| Op::Write { path: p.into(), offset, len, pattern };
    let files = |n: u64| (0..n).map(|i| format!("/d/f{i}")).collect::<Vec<_>>();
    match family {
        "fill-churn" | "squeeze" => {
            ops.push(Op::Mkdir("/d".into()));
            ops.push(Op::Mkdir("/m".into()));
            for (i, f) in files(6).iter().enumerate() {
                ops.push(Op::Create(f.clone()));
                ops.push(w(f, 0, [100, 4096, 9000][i % 3], i as u32 + 1));
            }
            ops.push(Op::SetXattr("/d/f0".into(), "user.k".into(), "v0".into()));
            ops.push(Op::Repeat(12, Box::new(Op::Create("/m/f{i}".into()))));
            ops.push(Op::Create("/fill".into()));
            ops.push(Op::Sync);
            ops.push(Op::Fill { path: "/fill".into(), chunk: 65536, pattern: 100, max: 0 });
            ops.push(Op::Fill { path: "/fill".into(), chunk: 4096, pattern: 200, max: 64 });
            if rng.chance(1, 2) {
                ops.push(Op::Sync);
            }
            let squeeze = family == "squeeze";
            if squeeze {
                // Free some room, then take it back a block or two before every operation.
                ops.push(Op::Truncate("/fill".into(), 4096 * (8 + rng.below(24))));
                ops.push(Op::Create("/squeeze".into()));
            }
            let mut sq = 0u64;
            let mut model = Model::new();
            for op in &ops {
                let _ = model.apply(op);
            }
            let n = 24 + rng.below(17);
            for _ in 0..n {
                if squeeze {
                    let len = 4096 * (1 + rng.below(2) as u32);
                    ops.push(w("/squeeze", sq, len, 300 + sq as u32 / 4096));
                    let _ = model.apply(ops.last().unwrap());
                    sq += len as u64;
                }
                for op in full_churn_op(&mut rng, &model) {
                    let _ = model.apply(&op);
                    ops.push(op);
                }
            }
        }
        "fsync-full" => {
            // The smallest device holds about 45 blocks of user data: room for the files.
            device =
                Some(DeviceSpec { above_min: true, blocks: 64 + 16 * rng.below(5), segment_blocks: 16, grow_from: 0 });
            let n = 10 + rng.below(30);
            ops.push(Op::Mkdir("/d".into()));
            ops.push(Op::Repeat(
                n as u32,
                Box::new(Op::Seq(vec![Op::Create("/d/f{i}".into()), w("/d/f{i}", 0, 4096, 7)])),
            ));
            ops.push(Op::Create("/fill".into()));
            ops.push(Op::Sync);
            ops.push(Op::Fill { path: "/fill".into(), chunk: 65536, pattern: 100, max: 0 });
            ops.push(Op::Fill { path: "/fill".into(), chunk: 4096, pattern: 200, max: 64 });
            ops.push(Op::Shrink("/fill".into(), 4096 * rng.below(6)));
            ops.push(Op::Sync);
            // Rounds of overwrite + fsync: each round invalidates the last one's blocks, so
            // that the full device must be cleaned (inside fsync) to take the next.
            for r in 0..1 + rng.below(3) as u32 {
                for i in 1..=n {
                    let f = format!("/d/f{i}");
                    ops.push(w(&f, 4096 * rng.below(2), 4096, 1000 * (r + 1) + i as u32));
                    ops.push(if rng.chance(1, 4) { Op::Fdatasync(f) } else { Op::Fsync(f) });
                }
            }
            // An atomic commit that may not fit, and an abort after it.
            ops.push(Op::AtomicStart("/d/f1".into()));
            for b in 0..2 + rng.below(6) {
                ops.push(w("/d/f1", 4096 * (b * 37 % 64), 4096, 5000 + b as u32));
            }
            ops.push(Op::AtomicCommit("/d/f1".into()));
            ops.push(Op::AtomicAbort("/d/f1".into()));
            ops.push(Op::Fsync("/d/f1".into()));
        }
        "xattr-full" => {
            // Half the cases: a long fsync chain (hundreds of inline files, one node each)
            // on a device whose free segments are the cleaning reserve: its roll-forward
            // needs more room than is left unless fsync kept a reserve for it.
            let long = rng.chance(1, 2);
            let extra = if long { 512 + 16 * rng.below(16) } else { 32 + 16 * rng.below(5) };
            device = Some(DeviceSpec { above_min: true, blocks: extra, segment_blocks: 16, grow_from: 0 });
            let n = if long { 150 + rng.below(200) } else { 20 + rng.below(40) };
            ops.push(Op::Mkdir("/d".into()));
            ops.push(Op::Repeat(
                n as u32,
                Box::new(Op::Seq(vec![Op::Create("/d/f{i}".into()), w("/d/f{i}", 0, 100, 7)])),
            ));
            ops.push(Op::Create("/fill".into()));
            ops.push(Op::Sync);
            ops.push(Op::Fill { path: "/fill".into(), chunk: 65536, pattern: 100, max: 0 });
            ops.push(Op::Fill { path: "/fill".into(), chunk: 4096, pattern: 200, max: 64 });
            // A few free blocks (the issue's scenario: about 13) after the sync.
            ops.push(Op::Shrink("/fill".into(), 4096 * (6 + rng.below(16))));
            ops.push(Op::Sync);
            for i in 1..=n {
                let f = format!("/d/f{i}");
                ops.push(w(&f, 0, 200, 1000 + i as u32));
                ops.push(Op::Fsync(f));
            }
            ops.push(Op::Create("/d/new".into()));
            ops.push(Op::SetXattr("/d/new".into(), "user.first".into(), "x".repeat(1 + rng.below(64) as usize)));
            ops.push(w("/d/new", 0, 5000, 9));
            ops.push(Op::Fsync("/d/new".into()));
        }
        "nid-churn" => {
            no_enospc = true;
            let n = 1600 + rng.below(400) as u32;
            ops.push(Op::Mkdir("/n".into()));
            ops.push(Op::Create("/n/db".into()));
            ops.push(w("/n/db", 0, 8192, 1));
            ops.push(Op::Sync);
            ops.push(Op::Repeat(
                n,
                Box::new(Op::Seq(vec![Op::Create("/n/c{i}".into()), Op::Unlink("/n/c{i}".into())])),
            ));
            for i in 0..4 {
                ops.push(Op::Create(format!("/n/k{i}")));
                ops.push(w(&format!("/n/k{i}"), 0, 100, 10 + i));
            }
            ops.push(Op::Fsync("/n/k0".into()));
            ops.push(Op::AtomicStart("/n/db".into()));
            ops.push(w("/n/db", 0, 4096, 20));
            ops.push(w("/n/db", 914 * 4096, 4096, 21));
            ops.push(Op::AtomicCommit("/n/db".into()));
            ops.push(Op::Repeat(
                n / 2,
                Box::new(Op::Seq(vec![Op::Mkdir("/n/d{i}".into()), Op::Rmdir("/n/d{i}".into())])),
            ));
            ops.push(Op::Mkdir("/n/last".into()));
            ops.push(Op::Fsync("/n/k1".into()));
            ops.push(Op::Sync);
        }
        "fragmented" => {
            // Hundreds of one-block files, every third unlinked and checkpointed (segments
            // two-thirds valid, few free), the rest of the device filled: then overwrite +
            // fsync of every kept file without a sync. The fsync chain eats free segments
            // until its roll-forward reserve runs short; fsync falls back to a checkpoint
            // and, with fewer free segments left than an empty chain's recovery needs,
            // cleans inside fsync (`fsync_gc_rounds`). Sizes chosen where a core probe saw
            // that happen for every combination (3,072-4,096 blocks, 700-1,100 files).
            device = Some(DeviceSpec {
                above_min: false,
                blocks: 3072 + 1024 * rng.below(2),
                segment_blocks: 16,
                grow_from: 0,
            });
            let n = 700 + rng.below(400) as u32;
            ops.push(Op::Mkdir("/d".into()));
            ops.push(Op::Repeat(n, Box::new(Op::Seq(vec![Op::Create("/d/f{i}".into()), w("/d/f{i}", 0, 4096, 7)]))));
            ops.push(Op::Sync);
            for i in (1..=n).step_by(3) {
                ops.push(Op::Unlink(format!("/d/f{i}")));
            }
            ops.push(Op::Sync);
            ops.push(Op::Create("/fill".into()));
            ops.push(Op::Fill { path: "/fill".into(), chunk: 65536, pattern: 100, max: 0 });
            ops.push(Op::Fill { path: "/fill".into(), chunk: 4096, pattern: 200, max: 64 });
            ops.push(Op::Shrink("/fill".into(), 4096 * rng.below(21)));
            ops.push(Op::Sync);
            for i in (1..=n).filter(|i| (i - 1) % 3 != 0) {
                let f = format!("/d/f{i}");
                ops.push(w(&f, 0, 4096, 100 + i));
                ops.push(if rng.chance(1, 4) { Op::Fdatasync(f) } else { Op::Fsync(f) });
            }
            // Every state of the chain is alike; a spread of them is enough.
            max_points = Some(24);
        }
        "fill-delete" => {
            device =
                Some(DeviceSpec { above_min: true, blocks: 48 + 16 * rng.below(12), segment_blocks: 16, grow_from: 0 });
            let mut model = Model::new();
            let dirs = ["/d", "/d/a", "/d/b", "/e"];
            for d in dirs {
                ops.push(Op::Mkdir(d.into()));
            }
            for i in 0..20 + rng.below(30) as u32 {
                let dir = *rng.pick(&dirs);
                let f = format!("{dir}/f{i}");
                ops.push(Op::Create(f.clone()));
                ops.push(w(&f, 0, *rng.pick(&[1, 100, 4096, 6000]), i + 1));
                if rng.chance(1, 3) {
                    ops.push(Op::SetXattr(f.clone(), "user.k".into(), "v".repeat(1 + rng.below(300) as usize)));
                }
                if rng.chance(1, 5) {
                    ops.push(Op::Link(f.clone(), format!("{}/l{i}", rng.pick(&dirs))));
                }
                if rng.chance(1, 6) {
                    ops.push(Op::Symlink(format!("{dir}/s{i}"), "target".into()));
                }
                if rng.chance(1, 6) {
                    ops.push(Op::Rename(f, format!("{}/r{i}", rng.pick(&dirs)), 0));
                }
            }
            ops.push(Op::Create("/fill".into()));
            if rng.chance(1, 2) {
                ops.push(Op::Sync);
            }
            ops.push(Op::Fill { path: "/fill".into(), chunk: 65536, pattern: 100, max: 0 });
            ops.push(Op::Fill { path: "/fill".into(), chunk: 4096, pattern: 200, max: 64 });
            for op in &ops {
                let _ = model.apply(op);
            }
            for _ in 0..8 + rng.below(12) {
                for op in full_churn_op(&mut rng, &model) {
                    let _ = model.apply(&op);
                    ops.push(op);
                }
            }
            // Overwrites (each adds to what the next checkpoint writes) alternating with
            // unlinks: some unlink comes when the dirty cache leaves ordinary changes no
            // room, and must go ahead on the reserve (`full_device_removals`).
            let (files, _) = model.paths();
            let files: Vec<&String> = files.iter().filter(|f| f.starts_with("/d/") || f.starts_with("/e/")).collect();
            let half = files.len() / 2;
            for j in 0..half {
                ops.push(w(files[j], 0, 4096, 900 + j as u32));
                ops.push(Op::Unlink(files[half + j].clone()));
            }
            if rng.chance(1, 2) {
                ops.push(Op::Sync);
            }
            ops.push(Op::Rmtree("/".into()));
            // The space came back: a new file of a few blocks, made durable.
            ops.push(Op::Create("/after".into()));
            ops.push(w("/after", 0, 4 * 4096, 77));
            ops.push(Op::Fsync("/after".into()));
            max_points = Some(48);
        }
        _ => {
            // orphans
            no_enospc = true;
            let n = if rng.chance(1, 3) { 40 + rng.below(200) as u32 } else { 1030 + rng.below(150) as u32 };
            // Room for that many inodes with plenty to spare (ENOSPC is a bug here): the
            // default 8 MiB device for a few hundred, 16 MiB beyond the old 1,024 limit.
            device =
                (n > 1000).then_some(DeviceSpec { above_min: false, blocks: 4096, segment_blocks: 16, grow_from: 0 });
            // Every recovery evicts the orphans (about a crash state a second): few points.
            max_points = (n > 1000).then_some(8);
            ops.push(Op::Mkdir("/o".into()));
            ops.push(Op::Create("/keep".into()));
            ops.push(Op::Repeat(n, Box::new(Op::Seq(vec![Op::Create("/o/f{i}".into()), Op::Open("/o/f{i}".into())]))));
            ops.push(Op::Write { path: "/o/f1".into(), offset: 0, len: 5000, pattern: 3 });
            if rng.chance(1, 2) {
                ops.push(Op::Sync);
            }
            ops.push(Op::Repeat(n, Box::new(Op::Unlink("/o/f{i}".into()))));
            ops.push(w("/keep", 0, 100, 4));
            ops.push(Op::Fsync("/keep".into()));
            ops.push(Op::Sync);
            ops.push(Op::Repeat(n / 2, Box::new(Op::Close("/o/f{i}".into()))));
            ops.push(w("/keep", 0, 200, 5));
            ops.push(Op::Fsync("/keep".into()));
            ops.push(Op::Create("/o/new".into()));
            ops.push(Op::Sync);
            ops.push(Op::Repeat(n, Box::new(Op::Close("/o/f{i}".into()))));
            ops.push(Op::Fsync("/o".into()));
        }
    }
    Workload {
        name: format!("full-{family}-{seed}-{k}"),
        ops,
        dev_seed: Rng::derive(&[seed, 0xF011, k, 1]).next_u64(),
        completion: Completion::Random(3),
        discard_ignored: rng.chance(1, 2),
        recovery_eio: None,
        device,
        no_enospc,
        max_points,
        earlier_life: false,
        nsrec: None,
        mixed: None,
    }
}

/// One step of the fill-churn and squeeze families on a full device (an atomic session is
/// several operations).
fn full_churn_op(rng: &mut Rng, model: &Model) -> Vec<Op> {
    let (files, _) = model.paths();
    let user: Vec<String> = files.into_iter().filter(|f| f.starts_with("/d/") || f.starts_with("/e/")).collect();
    let pick = |rng: &mut Rng| {
        if user.is_empty() || rng.chance(1, 10) {
            format!("/d/{}", rng.pick(&["f0", "f1", "g", "h"]))
        } else {
            rng.pick(&user).clone()
        }
    };
    let far = |rng: &mut Rng| *rng.pick(&[0u64, 4096, 12288, 40960, 914 * 4096, 2000 * 4096]);
    let pat = |rng: &mut Rng| 1 + rng.below(5000) as u32;
    let w = |p: String, offset: u64, len: u32, pattern: u32| Op::Write { path: p, offset, len, pattern };
    match rng.below(26) {
        0..=4 => {
            let p = pick(rng);
            vec![w(p, far(rng), *rng.pick(&[100, 4096, 8192, 20000]), pat(rng))]
        }
        5 | 6 => vec![Op::Create(format!("/d/n{}", rng.below(50)))],
        7 | 8 => vec![Op::SetXattr(
            pick(rng),
            format!("user.{}", rng.pick(&["a", "b", "c"])),
            "v".repeat(1 + rng.below(200) as usize),
        )],
        9 => vec![Op::RemoveXattr(pick(rng), "user.a".into())],
        10 if rng.chance(1, 2) => {
            let (off, len) = (*rng.pick(&[1u64, 4096, 40960, 914 * 4096 - 100]), *rng.pick(&[4095u64, 8192, 65536]));
            vec![Op::Punch(pick(rng), off, len, rng.below(5) as u8)]
        }
        10 | 11 => vec![Op::Truncate(pick(rng), *rng.pick(&[0, 1, 4095, 4097, 100_000, 914 * 4096 + 1]))],
        12 => {
            let dst = format!("/{}/{}", rng.pick(&["d", "e"]), rng.pick(&["r1", "r2", "f1"]));
            let mut v = Vec::new();
            if dst.starts_with("/e/") && model.paths().1.iter().all(|d| d != "/e") {
                v.push(Op::Mkdir("/e".into()));
            }
            v.push(Op::Rename(pick(rng), dst, 0));
            v
        }
        13 => vec![Op::Repeat(12, Box::new(Op::Chmod("/m/f{i}".into(), *rng.pick(&[0o600, 0o640]))))],
        14..=16 => {
            let p = pick(rng);
            let mut v = vec![Op::AtomicStart(p.clone())];
            for _ in 0..1 + rng.below(3) {
                v.push(w(p.clone(), far(rng), 4096, pat(rng)));
            }
            v.push(if rng.chance(3, 4) { Op::AtomicCommit(p.clone()) } else { Op::AtomicAbort(p.clone()) });
            if rng.chance(1, 2) {
                // After a failed commit the session must still be abortable.
                v.push(Op::AtomicAbort(p));
            }
            v
        }
        17 | 18 => vec![Op::Fsync(pick(rng))],
        19 => vec![Op::Fdatasync(pick(rng))],
        20 => vec![Op::Sync],
        21 => vec![Op::Unlink(pick(rng))],
        22 => vec![Op::Truncate("/fill".into(), 0)],
        23 => vec![Op::Fill { path: "/fill".into(), chunk: 4096, pattern: pat(rng), max: 64 }],
        24 => vec![Op::Link(pick(rng), format!("/d/l{}", rng.below(4)))],
        _ => vec![Op::Fsync("/d".into())],
    }
}

/// The fixed ACE setup: two directories with two files each, made durable.
pub fn ace_setup() -> Vec<Op> {
    let w = |p: &str, len, pat| Op::Write { path: p.into(), offset: 0, len, pattern: pat };
    vec![
        Op::Mkdir("/A".into()),
        Op::Mkdir("/B".into()),
        Op::Create("/A/foo".into()),
        Op::Create("/A/bar".into()),
        Op::Create("/B/foo".into()),
        Op::Create("/B/bar".into()),
        w("/A/foo", 5000, 1),
        w("/B/bar", 100, 2),
        Op::SetXattr("/B/foo".into(), "user.k".into(), "old".into()),
        Op::Sync,
    ]
}

/// The core operations ACE combines (over the setup's names); an atomic-write session
/// counts as one operation.
pub fn ace_ops() -> Vec<Vec<Op>> {
    let s = |x: &str| x.to_string();
    let w = |p: &str, offset, len, pattern| Op::Write { path: s(p), offset, len, pattern };
    let mut v: Vec<Vec<Op>> = ace_single_ops().into_iter().map(|o| vec![o]).collect();
    v.push(vec![
        Op::AtomicStart(s("/A/foo")),
        w("/A/foo", 0, 4096, 7),
        w("/A/foo", 8192, 100, 8),
        Op::AtomicCommit(s("/A/foo")),
    ]);
    v.push(vec![Op::AtomicStart(s("/B/bar")), w("/B/bar", 0, 5000, 9), Op::AtomicAbort(s("/B/bar"))]);
    v
}

/// The fsync-class persistence point ACE puts after an operation group in its fsync half:
/// fsync of the file it changed (fdatasync for data-only changes), of the new name after
/// a rename or link, of the parent directory after an unlink or rmdir; none after an
/// atomic session (its commit is one).
fn ace_fsync_point(group: &[Op]) -> Option<Op> {
    let parent = |p: &str| {
        let cut = p.rfind('/').unwrap_or(0);
        if cut == 0 {
            "/".to_string()
        } else {
            p[..cut].to_string()
        }
    };
    Some(match group.last()? {
        Op::Write { path, .. } | Op::Truncate(path, _) => Op::Fdatasync(path.clone()),
        Op::Create(p) | Op::Mkdir(p) | Op::Symlink(p, _) | Op::Chmod(p, _) => Op::Fsync(p.clone()),
        Op::SetXattr(p, _, _) | Op::RemoveXattr(p, _) => Op::Fsync(p.clone()),
        Op::Rename(_, b, _) | Op::Link(_, b) => Op::Fsync(b.clone()),
        Op::Unlink(p) | Op::Rmdir(p) => Op::Fsync(parent(p)),
        _ => return None,
    })
}

fn ace_single_ops() -> Vec<Op> {
    let s = |x: &str| x.to_string();
    let w = |p: &str, offset, len, pattern| Op::Write { path: s(p), offset, len, pattern };
    vec![
        Op::Create(s("/A/baz")),
        Op::Mkdir(s("/A/dir")),
        Op::Symlink(s("/B/sym"), s("/A/foo")),
        w("/A/foo", 0, 4096, 3),
        w("/A/bar", 0, 6000, 4),
        w("/B/foo", 4000, 200, 5),
        w("/B/bar", 50, 100, 6),
        Op::Truncate(s("/A/foo"), 1000),
        Op::Truncate(s("/B/bar"), 0),
        Op::Truncate(s("/A/bar"), 9000),
        Op::Rename(s("/A/foo"), s("/A/baz"), 0),
        Op::Rename(s("/A/foo"), s("/B/foo"), 0),
        Op::Rename(s("/A/bar"), s("/B/new"), 0),
        Op::Rename(s("/A/foo"), s("/B/bar"), RENAME_EXCHANGE),
        Op::Rename(s("/B/foo"), s("/A/bar"), RENAME_NOREPLACE),
        Op::Rename(s("/A"), s("/B/A"), 0),
        Op::Link(s("/A/foo"), s("/B/lnk")),
        Op::Link(s("/B/bar"), s("/B/lnk2")),
        Op::Unlink(s("/A/foo")),
        Op::Unlink(s("/B/bar")),
        Op::Rmdir(s("/A/dir")),
        Op::Rmdir(s("/B")),
        Op::Chmod(s("/A/foo"), 0o600),
        Op::SetXattr(s("/A/foo"), s("user.k"), s("new")),
        Op::RemoveXattr(s("/B/foo"), s("user.k")),
    ]
}

/// Number of ACE cases: every sequence of one and of two core operations, once with a
/// sync after each and once with an fsync-class persistence point after each.
pub fn ace_count() -> u64 {
    let n = ace_ops().len() as u64;
    2 * (n + n * n)
}

/// ACE case `k`: the setup, then one or two core operations, each followed by a sync
/// (first half of the cases) or by an fsync-class point (second half, interleaved:
/// odd cases).
pub fn ace_workload(seed: u64, k: u64) -> Option<Workload> {
    let core = ace_ops();
    let n = core.len() as u64;
    let fsync_half = k % 2 == 1;
    let (case, k) = (k, k / 2);
    let seq: Vec<&Vec<Op>> = if k < n {
        vec![&core[k as usize]]
    } else if k < n + n * n {
        let j = k - n;
        vec![&core[(j / n) as usize], &core[(j % n) as usize]]
    } else {
        return None;
    };
    let mut ops = ace_setup();
    for group in seq {
        ops.extend(group.iter().cloned());
        if fsync_half {
            ops.extend(ace_fsync_point(group));
        } else {
            ops.push(Op::Sync);
        }
    }
    Some(Workload {
        name: format!("ace-{case}"),
        ops,
        dev_seed: Rng::derive(&[seed, 0xACE, case]).next_u64(),
        completion: Completion::Random(3),
        discard_ignored: false,
        recovery_eio: None,
        device: None,
        no_enospc: false,
        max_points: None,
        earlier_life: false,
        nsrec: None,
        mixed: None,
    })
}

/// The ACE3 setup: a directory tree with files that have data, made durable by a sync
/// (so that later operations move, link and unlink names the checkpoint knows).
pub fn ace3_setup() -> Vec<Op> {
    let w = |p: &str, len, pat| Op::Write { path: p.into(), offset: 0, len, pattern: pat };
    vec![
        Op::Mkdir("/a".into()),
        Op::Mkdir("/b".into()),
        Op::Create("/a/x".into()),
        Op::Create("/a/y".into()),
        Op::Create("/b/z".into()),
        w("/a/x", 5000, 1),
        w("/a/y", 100, 2),
        w("/b/z", 4096, 3),
        Op::Sync,
    ]
}

/// The ACE3 setup again, reaching the same tree through history that its last checkpoint
/// hides (issue 35, finding 2): each file's recorded parent is that of its last link or
/// rename, so two links made in another directory and removed again leave it stale (one
/// link removed again puts the name before it back: `other_names.rs`; /b/z takes that
/// path); a file moved away and back, a directory renamed away and back, a directory made
/// and removed (its id free). From a plain synced image ACE3 found none of the 12,469 violating states
/// this history gave an ACE-style sweep.
pub fn ace3_hidden_setup() -> Vec<Op> {
    let s = |x: &str| x.to_string();
    let mut ops = ace3_setup();
    ops.pop(); // the sync comes after the history
    ops.extend([
        Op::Mkdir(s("/t")),
        Op::Sync,
        Op::Link(s("/a/x"), s("/b/h")),
        Op::Link(s("/a/x"), s("/b/h2")),
        Op::Unlink(s("/b/h")),
        Op::Unlink(s("/b/h2")),
        Op::Link(s("/b/z"), s("/a/h")),
        Op::Unlink(s("/a/h")),
        Op::Rename(s("/a/y"), s("/t/y"), 0),
        Op::Rename(s("/t/y"), s("/a/y"), 0),
        Op::Rename(s("/a"), s("/t/a"), 0),
        Op::Rename(s("/t/a"), s("/a"), 0),
        Op::Rmdir(s("/t")),
        Op::Sync,
    ]);
    ops
}

/// The setups every ACE3 sequence runs from, in case order: `ace3:K` for K below
/// [`ace3_cases`]'s length runs from the plain setup, the next as many from the hidden
/// history.
pub fn ace3_setups() -> [Vec<Op>; 2] {
    [ace3_setup(), ace3_hidden_setup()]
}

/// The ACE3 vocabulary: namespace operations (mkdir, rename of a parent directory, link,
/// unlink, create) plus a data write and a sync, over the setup's names.
pub fn ace3_vocabulary() -> Vec<Op> {
    let s = |x: &str| x.to_string();
    vec![
        Op::Mkdir(s("/a/d")),
        Op::Mkdir(s("/c")),
        Op::Create(s("/a/n")),
        Op::Create(s("/c/n")),
        Op::Write { path: s("/a/x"), offset: 4096, len: 4096, pattern: 9 },
        Op::Rename(s("/a"), s("/c"), 0),
        Op::Rename(s("/a"), s("/b/a"), 0),
        Op::Rename(s("/a/x"), s("/b/x"), 0),
        Op::Rename(s("/b/z"), s("/a/d/z"), 0),
        Op::Link(s("/a/x"), s("/b/l")),
        Op::Unlink(s("/a/x")),
        Op::Unlink(s("/b/z")),
        Op::Rmdir(s("/a/d")),
        Op::Create(s("/b/n")),
        Op::Write { path: s("/b/z"), offset: 0, len: 100, pattern: 10 },
        Op::Rename(s("/a/y"), s("/a/x"), 0),
        Op::Rename(s("/b"), s("/c"), 0),
        Op::Link(s("/b/z"), s("/a/l")),
        Op::Mkdir(s("/c/d")),
        Op::Sync,
    ]
}

/// Whether two operations touch disjoint parts of the namespace (no path of one is a
/// prefix of, or equal to, a path of the other) and neither is a persistence point: then
/// their order does not matter, and ACE3 keeps one order only.
fn independent(a: &Op, b: &Op) -> bool {
    let under = |p: &str, q: &str| p == q || q.starts_with(&format!("{p}/")) || p.starts_with(&format!("{q}/"));
    !matches!(a, Op::Sync) && !matches!(b, Op::Sync) && a.paths().iter().all(|p| b.paths().iter().all(|q| !under(p, q)))
}

/// The ACE3 cases: every sequence of one to three vocabulary operations that all succeed
/// on the setup (a sequence with a failing operation equals a shorter one) and in which no
/// two adjacent independent operations appear out of vocabulary order (the other order is
/// kept), each followed by an fsync of one of the files or directories it touched, under
/// its final name (at most three targets per sequence). Computed once.
pub fn ace3_cases() -> &'static [(Vec<usize>, String)] {
    static CASES: std::sync::OnceLock<Vec<(Vec<usize>, String)>> = std::sync::OnceLock::new();
    CASES.get_or_init(|| {
        let voc = ace3_vocabulary();
        let n = voc.len();
        let mut base = Model::new();
        for op in ace3_setup() {
            base.apply(&op).expect("ACE3 setup");
        }
        let mut out = Vec::new();
        let mut seqs: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        seqs.extend((0..n * n).map(|k| vec![k / n, k % n]));
        seqs.extend((0..n * n * n).map(|k| vec![k / (n * n), (k / n) % n, k % n]));
        for seq in seqs {
            if seq.windows(2).any(|w| w[0] > w[1] && independent(&voc[w[0]], &voc[w[1]])) {
                continue;
            }
            if seq.last().is_some_and(|&i| matches!(voc[i], Op::Sync)) {
                continue; // a trailing sync makes the fsync after it moot
            }
            let mut m = base.clone();
            if !seq.iter().all(|&i| m.apply(&voc[i]).is_ok()) {
                continue;
            }
            // Targets: files at or under a touched path (final names), and the parent
            // directory of an unlink; the last operation's first.
            let (files, dirs) = m.paths();
            let touched: Vec<String> = seq
                .iter()
                .rev()
                .flat_map(|&i| {
                    let op = &voc[i];
                    let mut v: Vec<String> = op.paths().iter().map(|p| p.to_string()).collect();
                    if let Op::Unlink(p) | Op::Rmdir(p) = op {
                        v.push(p[..p.rfind('/').unwrap_or(0)].to_string());
                    }
                    v
                })
                .collect();
            let mut targets: Vec<String> = Vec::new();
            for t in &touched {
                let t = if t.is_empty() { "/" } else { t.as_str() };
                let mut hit: Vec<&String> =
                    files.iter().filter(|f| *f == t || f.starts_with(&format!("{t}/"))).collect();
                if hit.is_empty() && dirs.iter().any(|d| d == t) {
                    hit = dirs.iter().filter(|d| *d == t).collect();
                }
                for h in hit {
                    if !targets.contains(h) && targets.len() < 3 {
                        targets.push(h.clone());
                    }
                }
            }
            for t in targets {
                out.push((seq.clone(), t));
            }
        }
        out
    })
}

/// Number of ACE3 cases: every sequence of [`ace3_cases`] from each of [`ace3_setups`].
pub fn ace3_count() -> u64 {
    ace3_cases().len() as u64 * ace3_setups().len() as u64
}

/// ACE3 case `k`: a setup, a sequence of up to three vocabulary operations, and an fsync
/// of a file or directory it touched ([`ace3_cases`]).
pub fn ace3_workload(seed: u64, k: u64) -> Option<Workload> {
    let n = ace3_cases().len() as u64;
    let setup = ace3_setups().into_iter().nth((k / n) as usize)?;
    let (seq, target) = ace3_cases().get((k % n) as usize)?;
    let voc = ace3_vocabulary();
    let mut ops = setup;
    ops.extend(seq.iter().map(|&i| voc[i].clone()));
    ops.push(Op::Fsync(target.clone()));
    Some(Workload {
        name: format!("ace3-{k}"),
        ops,
        dev_seed: Rng::derive(&[seed, 0xACE3, k]).next_u64(),
        completion: Completion::Random(3),
        discard_ignored: false,
        recovery_eio: None,
        device: None,
        no_enospc: false,
        max_points: None,
        earlier_life: false,
        nsrec: None,
        mixed: None,
    })
}

/// Directory of the regression workloads in the source tree.
pub fn regression_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads")
}

/// The regression workload files, sorted by name.
pub fn regression_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(regression_dir())
        .map(|d| {
            d.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "wl")).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path of [`pattern_bytes`] gives the bytes of its definition: small and
    /// large patterns, offsets on both sides of the 2^27 bound, runs across it.
    #[test]
    fn pattern_bytes_match_their_definition() {
        let mut rng = Rng::derive(&[0x9A77]);
        let mut cases: Vec<(u32, u64, u32)> =
            vec![(0, 0, 9000), (u32::MAX, 0, 4096), (7, (1 << 27) - 100, 300), (5, 1 << 40, 64), (1, 914 * 4096, 4096)];
        for _ in 0..300 {
            let pattern = if rng.chance(1, 2) { rng.below(6000) as u32 } else { rng.next_u64() as u32 };
            let offset = match rng.below(3) {
                0 => rng.below(1 << 20),
                1 => (1 << 27) - rng.below(1 << 12),
                _ => rng.next_u64() >> 20,
            };
            cases.push((pattern, offset, rng.below(10_000) as u32));
        }
        for (pattern, offset, len) in cases {
            let base = (pattern as u64).wrapping_mul(0x9E37_79B9);
            let want: Vec<u8> = (offset..offset + len as u64).map(|pos| pattern_byte_reference(base, pos)).collect();
            assert_eq!(pattern_bytes(pattern, offset, len), want, "pattern {pattern} at {offset}+{len}");
            // Asked again (the thread's last bytes, lent without being made again), and
            // after other bytes were made: still the same.
            assert_eq!(with_pattern_bytes(pattern, offset, len, <[u8]>::to_vec), want);
            with_pattern_bytes(pattern ^ 1, offset, len / 2, |b| assert_eq!(b.len(), len as usize / 2));
            assert_eq!(with_pattern_bytes(pattern, offset, len, <[u8]>::to_vec), want);
        }
    }

    #[test]
    fn text_round_trip() {
        for k in 0..20 {
            let w = random_workload(5, k);
            let back = Workload::parse(&w.name, &w.to_text(), 0).unwrap();
            assert_eq!(back, w);
        }
        let w = ace_workload(1, ace_count() - 1).unwrap();
        assert_eq!(Workload::parse(&w.name, &w.to_text(), 0).unwrap(), w);
    }

    #[test]
    fn ace_is_bounded_and_complete() {
        let n = ace_ops().len() as u64;
        assert_eq!(ace_count(), 2 * (n + n * n));
        assert!(ace_workload(0, ace_count()).is_none());
        assert_eq!(ace_workload(0, 0).unwrap().ops.len(), ace_setup().len() + 2);
        assert_eq!(ace_workload(0, 2 * n).unwrap().ops.len(), ace_setup().len() + 4);
        assert!(ace_workload(0, 1).unwrap().ops.iter().any(|o| matches!(o, Op::Fsync(_) | Op::Fdatasync(_))));
    }

    #[test]
    fn repeat_expands_and_round_trips() {
        let w = Workload::parse("r", "mkdir /a\ncreate /a/f\nrepeat 3 link /a/f /a/l{i}\n", 0).unwrap();
        assert_eq!(w.ops.len(), 3);
        assert_eq!(
            w.ops[2].expand(),
            vec![
                Op::Link("/a/f".into(), "/a/l1".into()),
                Op::Link("/a/f".into(), "/a/l2".into()),
                Op::Link("/a/f".into(), "/a/l3".into())
            ]
        );
        assert_eq!(Workload::parse("r", &w.to_text(), 0).unwrap(), w);
        for bad in ["repeat 2 sync", "repeat 2 fsync /a", "repeat 0 create /a/f{i}", "repeat 2 repeat 2 mkdir /x"] {
            assert!(Workload::parse("r", bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn ace3_setups_reach_the_same_tree() {
        let trees: Vec<_> = ace3_setups()
            .iter()
            .map(|setup| {
                let mut m = Model::new();
                for op in setup {
                    m.apply(op).unwrap_or_else(|e| panic!("{op}: {e:?}"));
                }
                m.tree()
            })
            .collect();
        assert!(trees.windows(2).all(|w| w[0] == w[1]), "every ACE3 setup ends with the same tree");
        let n = ace3_cases().len() as u64;
        assert_eq!(ace3_count(), 2 * n);
        let hidden = ace3_workload(0, n).unwrap();
        assert!(hidden.ops.iter().any(|o| matches!(o, Op::Link(..))), "case n runs from the hidden history");
        assert!(ace3_workload(0, 2 * n).is_none());
    }

    #[test]
    fn regression_files_parse() {
        for p in regression_files() {
            workload(&CaseId::File(p.clone()), 0).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        }
    }
}
