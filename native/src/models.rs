//! Persistence models for `rollfs crashtest --model` (ALICE's idea: Pillai et al., "All
//! File Systems Are Not Created Equal", OSDI '14). From the operation log of a workload
//! (oplog.rs) a model says which crash states another file system may leave, and this
//! module builds each one on a fresh image through the core, for crashtest to check, and
//! explains a failing one by the operations it lost.
//!
//! # The rules
//!
//! Operations are numbered from 1 in log order. A crash *after op C* means ops 1..=C were
//! made and nothing after C; a state keeps each op 1..=C whole, drops it, or (a write only)
//! keeps part of it. The kept ops are applied in log order to the empty tree the workload
//! started from. Inodes exist apart from their names: a kept rename of a file whose create
//! was dropped still names that file (with whatever of its writes were kept), and a file
//! no kept entry names is gone (as after fsck). An op's *kind*: an **entry op** changes
//! directory entries (create, mkdir, symlink, mknod, link, unlink, rmdir, rename); an
//! **inode op** changes one inode (write, truncate/size change, punch/zero, chmod/chown,
//! xattrs). fsync, fdatasync and marks change nothing.
//!
//! **posix-weak** — what POSIX promises and nothing more:
//! - an inode op is *forced* (kept whole in every state) when an fsync of its inode follows
//!   it before the crash; an fdatasync forces only the data ops (write, size, zero);
//! - an entry op is forced when an fsync of its directory follows it; a rename is atomic
//!   (never both names or neither: one op) and forced only when *both* of its directories
//!   were fsynced after it (one fsync when they are the same) — POSIX says nothing of
//!   which directory's fsync makes a cross-directory rename durable, so neither alone is
//!   trusted;
//! - every op not forced may survive or not, independently of the others (any subset, in
//!   any order), and a write not forced may survive in part: its size change whole, its
//!   bytes only in its first K 4 KiB blocks (the rest reads as zeros or the old bytes).
//!
//! **ext4-ordered** — ext4 with `data=ordered` and delayed allocation (the default):
//! - *journal ops* (every op but writes: entries, sizes set by truncate, punch/zero,
//!   attributes) persist as an in-order prefix: a state keeps journal ops 1..=P for some P
//!   and none after; any fsync or fdatasync commits the journal, so P reaches at least to
//!   the last fsync before the crash;
//! - *writes* (data and the size they extend: with delayed allocation the on-disk size
//!   moves when the blocks are written back, never ahead of them) persist independently of
//!   the journal and of each other, forced by an fsync or fdatasync of their own file; one
//!   not forced may persist in part: its first K blocks, the size covering only them;
//! - an *append* (a write past the file's end) is written back, its blocks allocated and
//!   its size journaled, in a transaction after every journal op made before it: it
//!   persists only with all of them (an overwrite of existing blocks has no such tie);
//! - `auto_da_alloc` (on by default): a kept rename that replaces an existing file keeps
//!   every earlier write of the renamed file (ext4 starts their write-back at the rename
//!   and orders them before the commit). Modelled because it is the default; its other
//!   half, the flush at close(2) after a truncate to zero, is not (close is not logged), so
//!   the model is stricter than ext4 there. `--model ext4-ordered` cannot say which states
//!   ext4 without auto_da_alloc allows; a posix-weak explanation says it.
//!
//! **rollfs** is not a model here: `crashtest` without `--model` (or `--model rollfs`)
//! explores the device-level crash states of rollfs itself (crashtest.rs).
//!
//! # Which states
//!
//! Key crash points are right after each fsync and mark, and the end of the log. In order,
//! until `--max-states`: per key point (the last first) every op kept and only the forced
//! ones; then each op that is not forced dropped alone (and each such write kept in part:
//! no block, half its blocks), and each journal prefix; then each such op kept alone; then
//! every crash point with all of its ops (what a file system that persists in order may
//! leave); then seeded random states. A state whose visible tree and marks equal one
//! already chosen is skipped. The same log, seed and bound give the same states.

use crate::crashtest::ImageDevice;
use crate::oplog::{Kind, Op, OpLog, ROOT_ID};
use rollfs_core::{Credentials, Filesystem, MountOptions, SetAttr, XattrSetMode, BLOCK_SIZE};
use rollfs_crash::rng::{Hasher64, Rng};
use rollfs_crash::Image;
use std::collections::{BTreeMap, HashSet, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// rollfs's own device-level crash states (crashtest.rs): no model from this module.
    Rollfs,
    PosixWeak,
    Ext4Ordered,
}

impl Model {
    pub fn parse(s: &str) -> Option<Model> {
        match s {
            "rollfs" => Some(Model::Rollfs),
            "posix-weak" => Some(Model::PosixWeak),
            "ext4-ordered" => Some(Model::Ext4Ordered),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Model::Rollfs => "rollfs",
            Model::PosixWeak => "posix-weak",
            Model::Ext4Ordered => "ext4-ordered",
        }
    }
}

/// How one op survives in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keep {
    Dropped,
    Whole,
    /// A write of which only the first N 4 KiB blocks of its bytes reached the disk.
    Partial(u32),
}

/// A crash state: ops `1..=crash` happened, `keep[i]` says how op `i + 1` survived.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    pub crash: usize,
    pub keep: Vec<Keep>,
}

impl State {
    /// `C:LIST`, e.g. `5:1-3,4p0,5` (crash after op 5; ops 1 to 3 and 5 kept, op 4 kept in
    /// part: no block): what `rollfs replay OPLOG --ops` rebuilds.
    pub fn spec(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < self.keep.len() {
            match self.keep[i] {
                Keep::Dropped => i += 1,
                Keep::Partial(k) => {
                    parts.push(format!("{}p{k}", i + 1));
                    i += 1;
                }
                Keep::Whole => {
                    let start = i;
                    while i < self.keep.len() && self.keep[i] == Keep::Whole {
                        i += 1;
                    }
                    parts.push(if i - start == 1 { format!("{}", start + 1) } else { format!("{}-{}", start + 1, i) });
                }
            }
        }
        format!("{}:{}", self.crash, parts.join(","))
    }

    pub fn parse_spec(s: &str, ops: usize) -> Result<State, String> {
        let (c, list) = s.split_once(':').ok_or_else(|| format!("{s}: expected C:LIST (e.g. 5:1-3,4p0,5)"))?;
        let crash: usize = c.parse().map_err(|_| format!("{s}: {c} is not an op number"))?;
        if crash > ops {
            return Err(format!("{s}: crash after op {crash}, but the log has {ops} ops"));
        }
        let mut keep = vec![Keep::Dropped; crash];
        let num = |w: &str| -> Result<usize, String> {
            match w.parse::<usize>() {
                Ok(n) if n >= 1 && n <= crash => Ok(n),
                _ => Err(format!("{s}: {w} is not an op from 1 to {crash}")),
            }
        };
        for w in list.split(',').filter(|w| !w.is_empty()) {
            if let Some((a, b)) = w.split_once('-') {
                let (a, b) = (num(a)?, num(b)?);
                for k in keep.iter_mut().take(b).skip(a - 1) {
                    *k = Keep::Whole;
                }
            } else if let Some((a, k)) = w.split_once('p') {
                let k = k.parse::<u32>().map_err(|_| format!("{s}: {w}: expected OPpBLOCKS"))?;
                keep[num(a)? - 1] = Keep::Partial(k);
            } else {
                keep[num(w)? - 1] = Keep::Whole;
            }
        }
        Ok(State { crash, keep })
    }
}

/// What a model says of the ops before one crash point.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Kept whole in every state (ops that change nothing count as forced).
    pub forced: Vec<bool>,
    /// Ops that persist as an in-order prefix (ext4's journal), not forced, in order.
    pub chain: Vec<usize>,
    /// Ops that may survive or not, each on its own.
    pub free: Vec<usize>,
}

fn is_write(op: &Op) -> bool {
    matches!(op, Op::Write { .. })
}

/// The model's rules for a crash after op `crash` (module header). One scan back from the
/// crash, remembering which inodes and directories an fsync after the current op covers.
pub fn plan(model: Model, ops: &[Op], crash: usize) -> Plan {
    let all_persisted = crate::mutant::active("mutant-model-all-persisted");
    let mut forced = vec![false; crash];
    // Inodes fsynced (not only fdatasynced), inodes fsynced or fdatasynced, directories
    // fsynced, and whether any fsync came, after the op being looked at.
    let (mut synced, mut datasynced, mut dirs_synced) = (HashSet::new(), HashSet::new(), HashSet::new());
    let mut any_fsync = false;
    for i in (0..crash).rev() {
        let op = &ops[i];
        forced[i] = !op.changes()
            || all_persisted
            || match model {
                Model::Rollfs => true,
                Model::PosixWeak => match op.inode_target() {
                    Some(t) if matches!(op, Op::Write { .. } | Op::SetSize { .. } | Op::Zero { .. }) => {
                        datasynced.contains(&t)
                    }
                    Some(t) => synced.contains(&t),
                    None => {
                        let dirs = op.entry_dirs();
                        !dirs.is_empty() && dirs.iter().all(|d| dirs_synced.contains(d))
                    }
                },
                // A write by an fsync or fdatasync of its file; the journal by any fsync.
                Model::Ext4Ordered => match op {
                    Op::Write { id, .. } => datasynced.contains(id),
                    _ => any_fsync,
                },
            };
        if let Op::Fsync { id, data_only, dir } = op {
            datasynced.insert(*id);
            if !data_only {
                synced.insert(*id);
            }
            if *dir {
                dirs_synced.insert(*id);
            }
            any_fsync = true;
        }
    }
    let (mut chain, mut free) = (Vec::new(), Vec::new());
    for i in (0..crash).filter(|&i| !forced[i]) {
        if model == Model::Ext4Ordered && !is_write(&ops[i]) {
            chain.push(i);
        } else {
            free.push(i);
        }
    }
    Plan { forced, chain, free }
}

/// ext4's rules across the journal and the writes: auto_da_alloc, then appends after a
/// journal cut dropped (see [`ext4_normalize`]'s callers and the module header).
fn ext4_normalize(ops: &[Op], st: &mut State, ada: bool) {
    if ada {
        auto_da_alloc(ops, st);
    }
    // An append's blocks are allocated, and its size journaled, when it is written back:
    // in a transaction after every journal op made before the write.
    let cut = (0..st.crash).find(|&i| ops[i].changes() && !is_write(&ops[i]) && st.keep[i] != Keep::Whole);
    if let Some(cut) = cut {
        for (keep, op) in st.keep.iter_mut().zip(ops).skip(cut + 1) {
            if is_append(op) {
                *keep = Keep::Dropped;
            }
        }
    }
}

/// A write past the file's end (an append: new blocks, a new size).
fn is_append(op: &Op) -> bool {
    matches!(op, Op::Write { offset, data, old_size, .. } if offset + data.len() as u64 > *old_size)
}

/// ext4's auto_da_alloc: a kept rename that replaces a file keeps the renamed file's
/// earlier writes whole.
fn auto_da_alloc(ops: &[Op], st: &mut State) {
    for r in 0..st.crash {
        if let (Op::Rename { id, replaced: Some(_), exchange: false, .. }, Keep::Whole) = (&ops[r], st.keep[r]) {
            for (w, op) in ops[..r].iter().enumerate() {
                if matches!(op, Op::Write { id: wid, .. } if wid == id) {
                    st.keep[w] = Keep::Whole;
                }
            }
        }
    }
}

/// Whether `model` allows state `st` of `ops` (`ada`: with ext4's auto_da_alloc).
pub fn allowed(model: Model, ops: &[Op], st: &State, ada: bool) -> bool {
    if st.crash > ops.len() || st.keep.len() != st.crash {
        return false;
    }
    let p = plan(model, ops, st.crash);
    for (i, op) in ops[..st.crash].iter().enumerate() {
        if p.forced[i] && st.keep[i] != Keep::Whole {
            return false;
        }
        if matches!(st.keep[i], Keep::Partial(_)) && !is_write(op) {
            return false;
        }
    }
    if model == Model::Ext4Ordered {
        // The journal is a prefix.
        let mut cut = false;
        for &i in &p.chain {
            match st.keep[i] {
                Keep::Whole if cut => return false,
                Keep::Whole => {}
                _ => cut = true,
            }
        }
        let mut n = st.clone();
        ext4_normalize(ops, &mut n, ada);
        if n != *st {
            return false;
        }
    }
    true
}

/// The crash points the generator looks at first: after each fsync and mark, and the end.
pub fn key_points(ops: &[Op]) -> Vec<usize> {
    let mut k: Vec<usize> =
        ops.iter().enumerate().filter(|(_, o)| matches!(o, Op::Fsync { .. } | Op::Mark)).map(|(i, _)| i + 1).collect();
    k.push(ops.len());
    k.dedup();
    k
}

fn blocks_of(op: &Op) -> u32 {
    match op {
        Op::Write { data, .. } => data.len().div_ceil(BLOCK_SIZE) as u32,
        _ => 0,
    }
}

/// Candidate states in the order of the module header (duplicates included).
pub fn candidates(model: Model, ops: &[Op], seed: u64, random_states: usize) -> Vec<State> {
    let mut out = Vec::new();
    each_candidate(model, ops, seed, random_states, &mut |s| {
        out.push(s);
        true
    });
    out
}

/// Hands the candidate states to `f`, in order, until it returns false: generated one at
/// a time (a plan per key point and tier, recomputed), so that a long log with a small
/// `--max-states` costs memory for the states chosen only.
pub fn each_candidate(model: Model, ops: &[Op], seed: u64, random_states: usize, f: &mut dyn FnMut(State) -> bool) {
    let keys: Vec<usize> = key_points(ops).into_iter().rev().collect();
    let all = |c: usize| State { crash: c, keep: vec![Keep::Whole; c] };
    let min = |c: usize, p: &Plan| State {
        crash: c,
        keep: p.forced.iter().map(|&f| if f { Keep::Whole } else { Keep::Dropped }).collect(),
    };
    let mut emit = |mut s: State| {
        if model == Model::Ext4Ordered {
            ext4_normalize(ops, &mut s, true);
        }
        f(s)
    };
    macro_rules! emit {
        ($s:expr) => {
            if !emit($s) {
                return;
            }
        };
    }
    for &c in &keys {
        emit!(all(c));
        emit!(min(c, &plan(model, ops, c)));
    }
    for &c in &keys {
        let p = plan(model, ops, c);
        for &u in &p.free {
            let mut s = all(c);
            s.keep[u] = Keep::Dropped;
            emit!(s.clone());
            let n = blocks_of(&ops[u]);
            for k in [0, n / 2] {
                if n > 0 && k < n {
                    s.keep[u] = Keep::Partial(k);
                    emit!(s.clone());
                }
            }
        }
        for cut in 0..p.chain.len() {
            let mut s = all(c);
            for &j in &p.chain[cut..] {
                s.keep[j] = Keep::Dropped;
            }
            emit!(s);
        }
    }
    for &c in &keys {
        let p = plan(model, ops, c);
        for &u in &p.free {
            let mut s = min(c, &p);
            s.keep[u] = Keep::Whole;
            emit!(s);
        }
        for cut in 1..=p.chain.len() {
            let mut s = min(c, &p);
            for &j in &p.chain[..cut] {
                s.keep[j] = Keep::Whole;
            }
            emit!(s);
        }
    }
    for c in 0..=ops.len() {
        emit!(all(c));
    }
    let mut rng = Rng::new(seed);
    for _ in 0..random_states {
        let c = keys[rng.below(keys.len() as u64) as usize];
        let p = plan(model, ops, c);
        let mut s = min(c, &p);
        for &u in &p.free {
            s.keep[u] = match rng.below(4) {
                0 | 1 => Keep::Dropped,
                2 => Keep::Whole,
                _ => match blocks_of(&ops[u]) {
                    0 => Keep::Whole,
                    n => Keep::Partial(rng.below(n as u64) as u32),
                },
            };
        }
        let cut = rng.below(p.chain.len() as u64 + 1) as usize;
        for &j in &p.chain[..cut] {
            s.keep[j] = Keep::Whole;
        }
        emit!(s);
    }
}

/// Marks among ops 1..=crash.
pub fn marks_before(ops: &[Op], crash: usize) -> u64 {
    ops[..crash].iter().filter(|o| matches!(o, Op::Mark)).count() as u64
}

/// The states to check: the candidates without those whose visible tree (and marks) one
/// already chosen has, at most `max`. Returns them and how many were skipped.
pub fn choose(model: Model, ops: &[Op], max: u64, seed: u64, random_states: usize) -> (Vec<State>, u64) {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut dups = 0;
    each_candidate(model, ops, seed, random_states, &mut |s| {
        if out.len() as u64 >= max {
            return false;
        }
        let t = Tree::build(model, ops, &s);
        if seen.insert((t.digest(), marks_before(ops, s.crash))) {
            out.push(s);
        } else {
            dups += 1;
        }
        true
    });
    (out, dups)
}

// ---------------------------------------------------------------- the abstract tree

#[derive(Debug, Clone)]
struct Inode {
    kind: Kind,
    mode: u32,
    uid: u32,
    gid: u32,
    rdev: u32,
    target: Vec<u8>,
    data: Vec<u8>,
    xattrs: BTreeMap<Vec<u8>, Vec<u8>>,
}

/// The file system a state shows: inodes by log id and the entries of each directory.
#[derive(Debug, Clone)]
pub struct Tree {
    inodes: BTreeMap<u64, Inode>,
    dirs: BTreeMap<u64, BTreeMap<Vec<u8>, u64>>,
}

impl Tree {
    /// The empty tree the workload started from, with every inode ops `..upto` create
    /// (unnamed until a kept entry names them).
    fn start(ops: &[Op], upto: usize) -> Tree {
        let mut t = Tree { inodes: BTreeMap::new(), dirs: BTreeMap::new() };
        let root = Inode {
            kind: Kind::Dir,
            mode: 0o755,
            uid: 0,
            gid: 0,
            rdev: 0,
            target: vec![],
            data: vec![],
            xattrs: BTreeMap::new(),
        };
        t.inodes.insert(ROOT_ID, root);
        t.dirs.insert(ROOT_ID, BTreeMap::new());
        for op in &ops[..upto] {
            if let Op::Create { id, kind, mode, uid, gid, rdev, target, .. } = op {
                let ino = Inode {
                    kind: *kind,
                    mode: *mode,
                    uid: *uid,
                    gid: *gid,
                    rdev: *rdev,
                    target: target.clone(),
                    data: vec![],
                    xattrs: BTreeMap::new(),
                };
                t.inodes.insert(*id, ino);
                if *kind == Kind::Dir {
                    t.dirs.insert(*id, BTreeMap::new());
                }
            }
        }
        t
    }

    /// The tree state `st` shows under `model`.
    pub fn build(model: Model, ops: &[Op], st: &State) -> Tree {
        let mut t = Tree::start(ops, st.crash);
        for (op, keep) in ops[..st.crash].iter().zip(&st.keep) {
            if *keep != Keep::Dropped {
                t.apply(model, op, *keep);
            }
        }
        t
    }

    fn set_entry(&mut self, dir: u64, name: &[u8], id: u64) {
        if let Some(d) = self.dirs.get_mut(&dir) {
            d.insert(name.to_vec(), id);
        }
    }

    fn remove_entry(&mut self, dir: u64, name: &[u8], id: u64) {
        if let Some(d) = self.dirs.get_mut(&dir) {
            if d.get(name) == Some(&id) {
                d.remove(name);
            }
        }
    }

    fn apply(&mut self, model: Model, op: &Op, keep: Keep) {
        match op {
            Op::Create { parent, name, id, .. } | Op::Link { id, parent, name } => self.set_entry(*parent, name, *id),
            Op::Unlink { parent, name, id, .. } => self.remove_entry(*parent, name, *id),
            Op::Rename { parent, name, new_parent, new_name, id, replaced, exchange } => {
                self.remove_entry(*parent, name, *id);
                if let (true, Some(r)) = (*exchange, replaced) {
                    self.set_entry(*parent, name, *r);
                }
                self.set_entry(*new_parent, new_name, *id);
            }
            Op::Write { id, offset, data, .. } => {
                let Some(ino) = self.inodes.get_mut(id) else { return };
                let (off, end) = (*offset as usize, *offset as usize + data.len());
                let written = match keep {
                    Keep::Partial(k) => data.len().min(k as usize * BLOCK_SIZE),
                    _ => data.len(),
                };
                // posix-weak: the size change survives whole; ext4: the on-disk size covers
                // only the blocks written back.
                let size_end = if model == Model::Ext4Ordered { off + written } else { end };
                if ino.data.len() < size_end {
                    ino.data.resize(size_end, 0);
                }
                ino.data[off..off + written].copy_from_slice(&data[..written]);
            }
            Op::SetSize { id, size } => {
                if let Some(ino) = self.inodes.get_mut(id) {
                    ino.data.resize(*size as usize, 0);
                }
            }
            Op::Zero { id, offset, len } => {
                if let Some(ino) = self.inodes.get_mut(id) {
                    let end = (offset.saturating_add(*len) as usize).min(ino.data.len());
                    let start = (*offset as usize).min(end);
                    ino.data[start..end].fill(0);
                }
            }
            Op::SetAttr { id, mode, uid, gid } => {
                if let Some(ino) = self.inodes.get_mut(id) {
                    if let Some(m) = mode {
                        ino.mode = (ino.mode & !0o7777) | (m & 0o7777);
                    }
                    ino.uid = uid.unwrap_or(ino.uid);
                    ino.gid = gid.unwrap_or(ino.gid);
                }
            }
            Op::SetXattr { id, name, value } => {
                if let Some(ino) = self.inodes.get_mut(id) {
                    ino.xattrs.insert(name.clone(), value.clone());
                }
            }
            Op::RemoveXattr { id, name } => {
                if let Some(ino) = self.inodes.get_mut(id) {
                    ino.xattrs.remove(name);
                }
            }
            Op::Fsync { .. } | Op::Mark | Op::Unsupported { .. } | Op::End => {}
        }
    }

    /// Every name reachable from the root, breadth first, in name order: (path, parent
    /// id, name, id). A directory is entered once (a state may name one twice or in a
    /// cycle: the later names are left out, as fsck would).
    fn walk(&self) -> Vec<(String, u64, Vec<u8>, u64)> {
        let mut out = Vec::new();
        let mut seen_dirs = HashSet::from([ROOT_ID]);
        let mut q = VecDeque::from([(ROOT_ID, String::new())]);
        while let Some((d, path)) = q.pop_front() {
            for (name, &id) in self.dirs.get(&d).into_iter().flatten() {
                let p = format!("{path}{}", String::from_utf8_lossy(name));
                let is_dir = self.inodes.get(&id).is_some_and(|i| i.kind == Kind::Dir);
                if is_dir {
                    if !seen_dirs.insert(id) {
                        continue;
                    }
                    q.push_back((id, format!("{p}/")));
                }
                out.push((p, d, name.clone(), id));
            }
        }
        out
    }

    /// What a program sees, per path: what it is (a file's contents), and its attributes.
    fn view(&self) -> BTreeMap<String, (String, String)> {
        self.walk()
            .into_iter()
            .filter_map(|(p, _, _, id)| {
                let ino = self.inodes.get(&id)?;
                let what = match ino.kind {
                    Kind::File => describe_bytes(&ino.data),
                    Kind::Dir => "a directory".into(),
                    Kind::Symlink => format!("a symlink to {}", String::from_utf8_lossy(&ino.target)),
                    Kind::Special => format!("a special file ({:o})", ino.mode),
                };
                let mut attrs = format!("mode {:o}, owner {}:{}", ino.mode & 0o7777, ino.uid, ino.gid);
                for (k, v) in &ino.xattrs {
                    attrs.push_str(&format!(", xattr {}={}", String::from_utf8_lossy(k), describe_bytes(v)));
                }
                Some((p, (what, attrs)))
            })
            .collect()
    }

    /// What two states must share to be the same state to a check: every reachable name,
    /// and each one's kind, bytes (all of them: [`Tree::view`]'s descriptions name only the
    /// length of long or binary contents), attributes and xattrs.
    pub fn digest(&self) -> u64 {
        let mut h = Hasher64::new();
        for (p, _, _, id) in self.walk() {
            h.bytes(p.as_bytes());
            let Some(ino) = self.inodes.get(&id) else { continue };
            h.u64(ino.kind as u64);
            h.u64(u64::from(ino.mode));
            h.u64(u64::from(ino.uid));
            h.u64(u64::from(ino.gid));
            h.u64(ino.data.len() as u64);
            h.bytes(&ino.data);
            h.bytes(&ino.target);
            for (k, v) in &ino.xattrs {
                h.bytes(k);
                h.bytes(v);
            }
        }
        h.finish()
    }

    /// The image of this tree: a fresh filesystem of `block_count` blocks (`mkfs`'s
    /// defaults and `features`) with every reachable name made through the core.
    pub fn materialize(&self, block_count: u64, features: &[String]) -> Result<Image, String> {
        let mut opts = crate::cmd::mkfs_defaults();
        crate::cmd::apply_features(features, &mut opts).map_err(|e| e.to_string())?;
        // Fixed identity: the same state gives the same image.
        opts.uuid = *b"rollfs-models-01";
        opts.hash_seed = *b"rollfs-model-key";
        opts.time = crate::now();
        // SAFETY: getuid/getgid cannot fail.
        opts.root_owner = Credentials { uid: unsafe { libc::getuid() }, gid: unsafe { libc::getgid() } };
        let dev = ImageDevice::new(Image::blank(block_count));
        let dev = Filesystem::format(dev, &opts).map_err(|e| format!("mkfs: {e}"))?;
        let now = crate::now();
        let mut fs = Filesystem::mount(dev, &MountOptions::default(), now).map_err(|e| format!("mount: {e}"))?;
        let root = rollfs_core::layout::ROOT_INO;
        let mut made: BTreeMap<u64, u32> = BTreeMap::from([(ROOT_ID, root)]);
        for (path, parent, name, id) in self.walk() {
            let (Some(&p), Some(ino)) = (made.get(&parent), self.inodes.get(&id)) else { continue };
            let err = |e: rollfs_core::Error| format!("making {path}: {e}");
            if let Some(&existing) = made.get(&id) {
                fs.link(existing, p, &name, now).map_err(err)?;
                continue;
            }
            let cred = Credentials { uid: ino.uid, gid: ino.gid };
            let a = match ino.kind {
                Kind::File => {
                    let a = fs.create(p, &name, ino.mode & 0o7777, cred, now).map_err(err)?;
                    // Zero blocks stay holes; the size is set at the end.
                    for (k, chunk) in ino.data.chunks(BLOCK_SIZE).enumerate() {
                        let mut done = 0;
                        while chunk.iter().any(|&b| b != 0) && done < chunk.len() {
                            match fs.write(a.ino, (k * BLOCK_SIZE + done) as u64, &chunk[done..], now).map_err(err)? {
                                0 => return Err(format!("making {path}: the core wrote nothing")),
                                n => done += n,
                            }
                        }
                    }
                    let set = SetAttr { size: Some(ino.data.len() as u64), ..Default::default() };
                    fs.setattr(a.ino, &set, now).map_err(err)?;
                    a
                }
                Kind::Dir => fs.mkdir(p, &name, ino.mode & 0o7777, cred, now).map_err(err)?,
                Kind::Symlink => fs.symlink(p, &name, &ino.target, cred, now).map_err(err)?,
                Kind::Special => fs.mknod(p, &name, ino.mode, ino.rdev, cred, now).map_err(err)?,
            };
            for (k, v) in &ino.xattrs {
                fs.setxattr(a.ino, k, v, XattrSetMode::Any, now).map_err(err)?;
            }
            made.insert(id, a.ino);
        }
        let dev = fs.unmount(now).map_err(|e| format!("unmount: {e}"))?;
        Ok(dev.into_image())
    }

    /// A path naming `id` (the first in walk order).
    fn path_of(&self, id: u64) -> Option<String> {
        if id == ROOT_ID {
            return Some(".".into());
        }
        self.walk().into_iter().find(|w| w.3 == id).map(|w| w.0)
    }
}

/// Bytes for a person: short printable text quoted, else the length.
fn describe_bytes(b: &[u8]) -> String {
    if b.is_empty() {
        return "empty".into();
    }
    let text = b.iter().all(|&c| c == b'\n' || (0x20..0x7f).contains(&c));
    if text && b.len() <= 40 {
        format!("holding {:?} ({} bytes)", String::from_utf8_lossy(b), b.len())
    } else if b.iter().all(|&c| c == 0) {
        format!("holding {} zero bytes", b.len())
    } else {
        format!("holding {} bytes", b.len())
    }
}

// ---------------------------------------------------------------- explanations

/// Op `i` (0-based) as a person reads it, with the names it had when it was made.
pub fn describe(ops: &[Op], i: usize) -> String {
    let t = Tree::build(Model::PosixWeak, ops, &State { crash: i, keep: vec![Keep::Whole; i] });
    let name = |id: u64| -> String {
        t.path_of(id).unwrap_or_else(|| {
            ops.iter()
                .find_map(|o| match o {
                    Op::Create { id: c, name, .. } if *c == id => Some(String::from_utf8_lossy(name).into_owned()),
                    _ => None,
                })
                .unwrap_or_else(|| format!("file #{id}"))
        })
    };
    let entry = |dir: u64, n: &[u8]| -> String {
        let n = String::from_utf8_lossy(n);
        match t.path_of(dir) {
            Some(d) if d == "." => n.into_owned(),
            Some(d) => format!("{d}/{n}"),
            None => format!("{n} (in {})", name(dir)),
        }
    };
    match &ops[i] {
        Op::Create { parent, name: n, kind, .. } => {
            let what = match kind {
                Kind::File => "the creation of",
                Kind::Dir => "the mkdir of",
                Kind::Symlink => "the symlink",
                Kind::Special => "the mknod of",
            };
            format!("{what} {}", entry(*parent, n))
        }
        Op::Link { id, parent, name: n } => format!("the link {} -> {}", entry(*parent, n), name(*id)),
        Op::Unlink { parent, name: n, dir, .. } => {
            format!("the {} of {}", if *dir { "rmdir" } else { "unlink" }, entry(*parent, n))
        }
        Op::Rename { parent, name: n, new_parent, new_name, exchange, .. } => format!(
            "the {} {} -> {}",
            if *exchange { "exchange" } else { "rename" },
            entry(*parent, n),
            entry(*new_parent, new_name)
        ),
        Op::Write { id, offset, data, .. } => {
            let at = if *offset == 0 { String::new() } else { format!(" at offset {offset}") };
            format!("the write of {} bytes{at} to {}", data.len(), name(*id))
        }
        Op::SetSize { id, size } => format!("the size change of {} to {size}", name(*id)),
        Op::Zero { id, offset, len } => format!("the zeroing of {len} bytes at {offset} of {}", name(*id)),
        Op::SetAttr { id, .. } => format!("the attribute change of {}", name(*id)),
        Op::SetXattr { id, name: x, .. } => format!("the setxattr {} of {}", String::from_utf8_lossy(x), name(*id)),
        Op::RemoveXattr { id, name: x } => {
            format!("the removexattr {} of {}", String::from_utf8_lossy(x), name(*id))
        }
        Op::Fsync { id, data_only, .. } => {
            format!("the {} of {}", if *data_only { "fdatasync" } else { "fsync" }, name(*id))
        }
        Op::Mark => "a mark".into(),
        Op::Unsupported { what } => what.clone(),
        Op::End => "the end".into(),
    }
}

/// The objects an op touches (files by id, directory entries by directory id).
fn touches(op: &Op) -> Vec<u64> {
    let mut v = op.entry_dirs();
    v.extend(op.inode_target());
    v
}

/// Why state `st` is allowed and what it shows: "your program relies on X persisting
/// before Y; under MODEL it can see Z".
pub fn explain(model: Model, ops: &[Op], st: &State) -> String {
    let lost: Vec<usize> = (0..st.crash).filter(|&i| ops[i].changes() && st.keep[i] != Keep::Whole).collect();
    let mut s = String::new();
    if let Some(&d) = lost.first() {
        let what = match (st.keep[d], &ops[d]) {
            (Keep::Partial(0), Op::Write { .. }) if model == Model::PosixWeak => format!(
                "all of {} (op {}) persisting (here the size it gave the file did, none of its bytes)",
                describe(ops, d),
                d + 1
            ),
            (Keep::Partial(k), Op::Write { data, .. }) => format!(
                "all of {} (op {}) persisting (here only its first {} bytes did)",
                describe(ops, d),
                d + 1,
                (k as usize * BLOCK_SIZE).min(data.len())
            ),
            _ => format!("{} (op {}) persisting", describe(ops, d), d + 1),
        };
        // An entry op whose file was fsynced after it: the fsync does not make the name
        // durable (posix-weak).
        let named = match &ops[d] {
            Op::Create { id, .. } | Op::Link { id, .. } | Op::Rename { id, .. } => Some(*id),
            _ => None,
        };
        let fsynced = named
            .and_then(|n| (d + 1..st.crash).find(|&i| matches!(ops[i], Op::Fsync { id, dir: false, .. } if id == n)));
        // The kept op after it that shows the order matters: the last one on another file
        // or directory (what exposes the loss), else the nearest at all.
        let later: Vec<usize> = (d + 1..st.crash).filter(|&i| ops[i].changes() && st.keep[i] == Keep::Whole).collect();
        let other =
            later.iter().rev().copied().find(|&i| touches(&ops[i]).iter().all(|x| !touches(&ops[d]).contains(x)));
        match (fsynced, other.or(later.first().copied())) {
            (Some(f), _) => s.push_str(&format!(
                "your program relies on {what} with {} (op {}), which makes the file's data durable, not its name",
                describe(ops, f),
                f + 1
            )),
            (None, Some(k)) => s.push_str(&format!(
                "your program relies on {what} before {} (op {}) persisted",
                describe(ops, k),
                k + 1
            )),
            (None, None) => s.push_str(&format!(
                "your program relies on {what}, but nothing made it durable before the crash (after op {})",
                st.crash
            )),
        }
        if lost.len() > 1 {
            s.push_str(&format!(
                " (ops lost here: {})",
                lost.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(", ")
            ));
        }
    } else {
        s.push_str(&format!("every op up to the crash (after op {}) persisted", st.crash));
    }
    s.push_str(&format!("; under {}", model.name()));
    if model == Model::PosixWeak && !st.keep.iter().any(|k| matches!(k, Keep::Partial(_))) {
        s.push_str(if allowed(Model::Ext4Ordered, ops, st, true) {
            " (and on ext4 data=ordered)"
        } else if allowed(Model::Ext4Ordered, ops, st, false) {
            " (and on ext4 mounted with noauto_da_alloc)"
        } else {
            " (not on ext4 data=ordered)"
        });
    }
    let seen = Tree::build(model, ops, st).view();
    let full = Tree::build(model, ops, &State { crash: st.crash, keep: vec![Keep::Whole; st.crash] }).view();
    let mut diffs = Vec::new();
    for (p, v) in &full {
        match seen.get(p) {
            None => diffs.push(format!("{p} missing")),
            Some(w) if w.0 != v.0 => diffs.push(format!("{p} {} (with every op: {})", w.0, v.0)),
            Some(w) if w.1 != v.1 => diffs.push(format!("{p} {} (with every op: {})", w.1, v.1)),
            _ => {}
        }
    }
    for (p, w) in &seen {
        if !full.contains_key(p) {
            diffs.push(format!("{p} present ({})", w.0));
        }
    }
    if diffs.is_empty() {
        s.push_str(" it can see the state every op up to the crash leaves");
    } else {
        let n = diffs.len();
        diffs.truncate(4);
        s.push_str(&format!(
            " it can see: {}{}",
            diffs.join("; "),
            if n > 4 { format!("; and {} more", n - 4) } else { String::new() }
        ));
    }
    s
}

/// Refuses a log the models have no rules for.
pub fn check_supported(log: &OpLog) -> Result<(), String> {
    match log.ops.iter().find_map(|o| match o {
        Op::Unsupported { what } => Some(what.clone()),
        _ => None,
    }) {
        Some(w) => Err(format!("the workload made {w}, which the persistence models have no rules for")),
        None => Ok(()),
    }
}

/// `rollfs replay OPLOG --ops C:LIST --model MODEL --out IMG`: the image of one state.
pub fn replay(
    log: &std::path::Path,
    spec: &str,
    model: Model,
    features: &[String],
    out: &std::path::Path,
) -> crate::error::Result<()> {
    use crate::error::CliError;
    if model == Model::Rollfs {
        return Err(CliError::BadOption("--ops: give --model posix-weak or ext4-ordered".into()));
    }
    let l = OpLog::open(log)?;
    let st = State::parse_spec(spec, l.ops.len()).map_err(|e| CliError::BadOption(format!("--ops {e}")))?;
    let img = Tree::build(model, &l.ops, &st).materialize(l.block_count, features).map_err(|d| CliError::Failed {
        path: log.to_owned(),
        what: "cannot build the state",
        detail: d,
    })?;
    let _ = std::fs::remove_file(out);
    crate::record::write_image(&img, out)?;
    println!("replay: state {} of {} ops under {} written to {}", st.spec(), l.ops.len(), model.name(), out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(parent: u64, name: &str, id: u64) -> Op {
        Op::Create {
            parent,
            name: name.as_bytes().to_vec(),
            id,
            kind: Kind::File,
            mode: 0o644,
            uid: 0,
            gid: 0,
            rdev: 0,
            target: vec![],
        }
    }
    fn write(id: u64, offset: u64, data: &[u8]) -> Op {
        Op::Write { id, offset, data: data.to_vec(), old_size: 0, mmap: false }
    }
    fn fsync(id: u64) -> Op {
        Op::Fsync { id, data_only: false, dir: false }
    }
    fn fsync_dir(id: u64) -> Op {
        Op::Fsync { id, data_only: false, dir: true }
    }
    fn rename(parent: u64, name: &str, new_parent: u64, new_name: &str, id: u64, replaced: Option<u64>) -> Op {
        Op::Rename {
            parent,
            name: name.as_bytes().to_vec(),
            new_parent,
            new_name: new_name.as_bytes().to_vec(),
            id,
            replaced,
            exchange: false,
        }
    }
    fn mkdir(parent: u64, name: &str, id: u64) -> Op {
        match create(parent, name, id) {
            Op::Create { parent, name, id, .. } => {
                Op::Create { parent, name, id, kind: Kind::Dir, mode: 0o755, uid: 0, gid: 0, rdev: 0, target: vec![] }
            }
            _ => unreachable!(),
        }
    }

    /// ALICE's replace-by-rename: file (id 2) made durable, then tmp (id 3) written and
    /// renamed over it, then the directory fsynced.
    fn replace_by_rename() -> Vec<Op> {
        vec![
            create(ROOT_ID, "file", 2),
            write(2, 0, b"old"),
            fsync(2),
            fsync_dir(ROOT_ID),
            create(ROOT_ID, "tmp", 3),
            write(3, 0, b"new"),
            rename(ROOT_ID, "tmp", ROOT_ID, "file", 3, Some(2)),
            fsync_dir(ROOT_ID),
        ]
    }

    /// Review finding: the state that drops an in-place overwrite of a 100-byte file was
    /// skipped as a duplicate of the one that keeps it (same name, same length), so the
    /// program that relies on the overwrite was never caught. Bytes decide.
    #[test]
    fn states_that_differ_only_in_bytes_are_different_states() {
        let ops = vec![
            create(ROOT_ID, "f", 2),
            write(2, 0, &[b'o'; 100]),
            fsync(2),
            fsync_dir(ROOT_ID),
            write(2, 0, &[b'n'; 100]),
        ];
        let whole = State { crash: ops.len(), keep: vec![Keep::Whole; ops.len()] };
        let mut dropped = whole.clone();
        dropped.keep[4] = Keep::Dropped;
        let (a, b) = (Tree::build(Model::PosixWeak, &ops, &whole), Tree::build(Model::PosixWeak, &ops, &dropped));
        assert_eq!(a.view(), b.view(), "the descriptions name only the length");
        assert_ne!(a.digest(), b.digest());
    }

    fn content(model: Model, ops: &[Op], st: &State, path: &str) -> Option<String> {
        Tree::build(model, ops, st).view().get(path).map(|v| v.0.clone())
    }

    #[test]
    fn posix_weak_fsync_barriers() {
        let ops = replace_by_rename();
        let p = plan(Model::PosixWeak, &ops, ops.len());
        // The first file's create (dir fsync) and write (file fsync) are forced, the
        // rename too (its directory fsynced after it); tmp's write is not.
        assert_eq!(p.forced, vec![true, true, true, true, true, false, true, true]);
        assert_eq!((p.free.clone(), p.chain.clone()), (vec![5], vec![]));
        // Before the last fsync the rename is free, and the create of tmp too.
        let p = plan(Model::PosixWeak, &ops, 7);
        assert_eq!(p.free, vec![4, 5, 6]);
        // fdatasync forces data, not attributes.
        let ops = vec![
            create(ROOT_ID, "f", 2),
            Op::SetAttr { id: 2, mode: Some(0o600), uid: None, gid: None },
            write(2, 0, b"x"),
            Op::Fsync { id: 2, data_only: true, dir: false },
        ];
        assert_eq!(plan(Model::PosixWeak, &ops, 4).forced, vec![false, false, true, true]);
    }

    #[test]
    fn a_cross_directory_rename_needs_both_directories_fsynced() {
        let ops = vec![
            mkdir(ROOT_ID, "a", 2),
            mkdir(ROOT_ID, "b", 3),
            create(2, "f", 4),
            fsync_dir(ROOT_ID),
            fsync_dir(2),
            rename(2, "f", 3, "g", 4, None),
            fsync_dir(3),
        ];
        assert!(!plan(Model::PosixWeak, &ops, 7).forced[5], "only b was fsynced after the rename");
        let mut both = ops.clone();
        both.push(fsync_dir(2));
        assert!(plan(Model::PosixWeak, &both, 8).forced[5]);
        // Atomic: a state shows f in a or g in b, never both or neither.
        for st in candidates(Model::PosixWeak, &both, 1, 50) {
            let v = Tree::build(Model::PosixWeak, &both, &st).view();
            if st.crash >= 3 && st.keep[2] == Keep::Whole && st.keep[0] == Keep::Whole && st.keep[1] == Keep::Whole {
                assert_eq!(v.contains_key("a/f") as u8 + v.contains_key("b/g") as u8, 1, "{}: {v:?}", st.spec());
            }
        }
    }

    #[test]
    fn ext4_ordered_keeps_a_journal_prefix_and_writes_apart() {
        let ops = vec![
            create(ROOT_ID, "a", 2),
            write(2, 0, b"aaaa"),
            create(ROOT_ID, "b", 3),
            fsync(3),
            create(ROOT_ID, "c", 4),
            write(4, 0, b"cc"),
            Op::SetSize { id: 2, size: 1 },
        ];
        let p = plan(Model::Ext4Ordered, &ops, ops.len());
        // fsync of b commits the whole journal before it (a's create too), not a's data.
        assert_eq!(p.forced, vec![true, false, true, true, false, false, false]);
        assert_eq!((p.chain.clone(), p.free.clone()), (vec![4, 6], vec![1, 5]));
        let cands = candidates(Model::Ext4Ordered, &ops, 7, 40);
        assert!(!cands.is_empty());
        for st in &cands {
            assert!(allowed(Model::Ext4Ordered, &ops, st, true), "{}", st.spec());
        }
        // The journal op 7 without op 5: not a prefix.
        let st = State::parse_spec("7:1-4,7", 7).unwrap();
        assert!(!allowed(Model::Ext4Ordered, &ops, &st, true));
        assert!(allowed(Model::PosixWeak, &ops, &st, true));
        // A write in part: only its first block, and the size covers only that (ext4);
        // the size whole with the rest zero (posix-weak).
        let big = vec![create(ROOT_ID, "f", 2), fsync_dir(ROOT_ID), write(2, 0, &[7u8; 3 * BLOCK_SIZE])];
        let st = State { crash: 3, keep: vec![Keep::Whole, Keep::Whole, Keep::Partial(1)] };
        let e = Tree::build(Model::Ext4Ordered, &big, &st);
        let w = Tree::build(Model::PosixWeak, &big, &st);
        assert_eq!(e.inodes[&2].data, vec![7u8; BLOCK_SIZE]);
        assert_eq!(w.inodes[&2].data.len(), 3 * BLOCK_SIZE);
        assert!(w.inodes[&2].data[BLOCK_SIZE..].iter().all(|&b| b == 0));
    }

    #[test]
    fn an_ext4_append_persists_only_after_the_journal_before_it() {
        let mut ops = vec![create(ROOT_ID, "f", 2), fsync_dir(ROOT_ID), create(ROOT_ID, "g", 3), write(2, 0, b"x")];
        let st = State::parse_spec("4:1-2,4", 4).unwrap();
        assert!(!allowed(Model::Ext4Ordered, &ops, &st, true), "the append without the create of g before it");
        assert!(allowed(Model::PosixWeak, &ops, &st, true));
        // An overwrite of existing bytes has no such tie.
        ops[3] = Op::Write { id: 2, offset: 0, data: b"x".to_vec(), old_size: 5, mmap: false };
        assert!(allowed(Model::Ext4Ordered, &ops, &st, true));
        for st in candidates(Model::Ext4Ordered, &ops, 5, 20) {
            assert!(allowed(Model::Ext4Ordered, &ops, &st, true), "{}", st.spec());
        }
    }

    #[test]
    fn auto_da_alloc_keeps_the_data_of_a_replacing_rename() {
        let ops = replace_by_rename();
        // Crash before the final fsync: the rename may or may not be in the journal, but
        // when it is, tmp's write is there too.
        for st in candidates(Model::Ext4Ordered, &ops, 3, 60) {
            if st.crash >= 7 && st.keep[6] == Keep::Whole {
                assert_eq!(st.keep[5], Keep::Whole, "{}", st.spec());
            }
            assert!(allowed(Model::Ext4Ordered, &ops, &st, true), "{}", st.spec());
        }
        let lost = State::parse_spec("8:1-5,7-8", 8).unwrap();
        assert!(!allowed(Model::Ext4Ordered, &ops, &lost, true));
        assert!(allowed(Model::Ext4Ordered, &ops, &lost, false));
        assert!(allowed(Model::PosixWeak, &ops, &lost, true));
        assert_eq!(content(Model::PosixWeak, &ops, &lost, "file").as_deref(), Some("empty"));
        let e = explain(Model::PosixWeak, &ops, &lost);
        assert!(
            e.starts_with(
                "your program relies on the write of 3 bytes to tmp (op 6) persisting before the rename tmp -> file \
                 (op 7) persisted; under posix-weak (and on ext4 mounted with noauto_da_alloc) it can see: file \
                 empty (with every op: holding \"new\" (3 bytes))"
            ),
            "{e}"
        );
    }

    #[test]
    fn generated_states_respect_the_rules_and_nothing_after_the_crash() {
        let ops = replace_by_rename();
        for model in [Model::PosixWeak, Model::Ext4Ordered] {
            let a = candidates(model, &ops, 9, 30);
            assert_eq!(a, candidates(model, &ops, 9, 30), "deterministic");
            assert_ne!(a, candidates(model, &ops, 10, 30), "the seed matters");
            for st in &a {
                assert!(allowed(model, &ops, st, true), "{}: {}", model.name(), st.spec());
                assert_eq!(st.keep.len(), st.crash);
                // Nothing after the crash point: a write after every op never shows.
                let mut late = ops.clone();
                late.push(write(2, 0, b"LATE"));
                let v = Tree::build(model, &late, st).view();
                assert!(v.values().all(|x| !x.0.contains("LATE")), "{}: {v:?}", st.spec());
            }
            // Crash after op 5 (tmp made, not written): no state shows "new".
            for st in a.iter().filter(|s| s.crash <= 5) {
                let v = Tree::build(model, &ops, st).view();
                assert!(v.values().all(|x| !x.0.contains("new")), "{}: {v:?}", st.spec());
            }
            let (chosen, dups) = choose(model, &ops, 1000, 9, 30);
            assert!(dups > 0 && !chosen.is_empty());
            let (few, _) = choose(model, &ops, 3, 9, 30);
            assert_eq!(few.len(), 3);
        }
        // posix-weak finds the empty file, the state with every op does not show it.
        let (chosen, _) = choose(Model::PosixWeak, &ops, 1000, 1, 10);
        let empty = |st: &State| content(Model::PosixWeak, &ops, st, "file").as_deref() == Some("empty");
        assert!(chosen.iter().any(|s| s.crash == 8 && empty(s)));
        assert!(!empty(&State { crash: 8, keep: vec![Keep::Whole; 8] }));
    }

    /// A long log with a small bound: the states are generated one at a time (and each
    /// plan in one scan), so this takes milliseconds, not the minutes and gigabytes of
    /// every candidate of 4,000 ops at 400 key points built up front.
    #[test]
    fn a_long_log_with_a_small_bound_generates_only_what_it_checks() {
        let mut ops = vec![create(ROOT_ID, "log", 2), fsync_dir(ROOT_ID)];
        for i in 0..4000u64 {
            ops.push(write(2, i * 8, b"record!\n"));
            if i % 10 == 9 {
                ops.push(Op::Fsync { id: 2, data_only: true, dir: false });
            }
        }
        let started = std::time::Instant::now();
        for model in [Model::PosixWeak, Model::Ext4Ordered] {
            let (chosen, _) = choose(model, &ops, 20, 1, 100);
            assert_eq!(chosen.len(), 20);
            assert!(chosen.iter().all(|s| allowed(model, &ops, s, true)));
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    }

    #[test]
    fn specs_round_trip_and_bad_ones_are_refused() {
        let st = State {
            crash: 6,
            keep: vec![Keep::Whole, Keep::Whole, Keep::Dropped, Keep::Partial(0), Keep::Whole, Keep::Dropped],
        };
        assert_eq!(st.spec(), "6:1-2,4p0,5");
        assert_eq!(State::parse_spec(&st.spec(), 8).unwrap(), st);
        assert_eq!(State::parse_spec("0:", 0).unwrap(), State { crash: 0, keep: vec![] });
        for bad in ["6", "9:1", "3:4", "3:0", "3:1p", "x:1", "3:1-9"] {
            assert!(State::parse_spec(bad, 8).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_state_materializes_on_a_fresh_image() {
        let mut ops = replace_by_rename();
        ops.push(mkdir(ROOT_ID, "d", 4));
        ops.push(Op::Link { id: 3, parent: 4, name: b"hard".to_vec() });
        let all = State { crash: ops.len(), keep: vec![Keep::Whole; ops.len()] };
        let t = Tree::build(Model::PosixWeak, &ops, &all);
        let img = t.materialize(16384, &[]).unwrap();
        let dev = ImageDevice::new(img);
        let mut fs = Filesystem::mount(dev, &MountOptions::default(), crate::now()).unwrap();
        let root = rollfs_core::layout::ROOT_INO;
        let f = fs.lookup(root, b"file").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(fs.read(f.ino, 0, &mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"new");
        let d = fs.lookup(root, b"d").unwrap();
        assert_eq!(fs.lookup(d.ino, b"hard").unwrap().ino, f.ino);
        assert!(fs.lookup(root, b"tmp").is_err());
    }
}
