//! A run's model states, made incrementally ([`StateTracker`]).
//!
//! The explorer records, after every operation of a run, the tree a checkpoint would
//! persist ([`Tree`]) and the per-file oracle's view ([`Snap`]). Rebuilding both from the
//! whole model after each operation made a run O(operations × names): a workload of 1,600
//! creates spent seconds there before its first crash state was checked. The tracker keeps
//! the last state and changes only what the operations since it could have changed:
//!
//! - every path an operation named ([`Model::take_touched`]): its whole subtree is dropped
//!   and read again from the model (a rename moves a directory's subtree; an unlink drops
//!   a name), and its parent's entry is rewritten (a directory's link count counts its
//!   subdirectories);
//! - every inode that lost or gained a name there, or whose entry was rewritten: all its
//!   names' entries are rewritten (hard links share link count, content and `link`, the
//!   smallest name).
//!
//! States are persistent maps (`imbl::OrdMap`): one shares all unchanged entries with the
//! state before it. The tree hash is a sum over entries, updated per entry. Each snapshot
//! also reports which paths and inodes it changed ([`Delta`]), from which the per-file
//! rules' interval history is built without scanning every state
//! ([`crate::history::History::from_deltas`]).
//!
//! Invariant (tested against full rebuilds after every record of real runs and of model-only
//! workloads, `states::tests`): the tracker's tree and snap equal [`Model::durable_tree`]
//! and [`Model::snap`].

use crate::model::{content_hash, entry_hash, Entry, Model, Snap, Tree, KIND_DIR, KIND_FILE, KIND_SYMLINK};
use rollfs_core::Ino;
use rollfs_testkit::model::Body;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// What one snapshot changed: paths whose entry (or absence) may differ from the state
/// before, and inodes whose snap content may differ.
#[derive(Debug, Clone, Default)]
pub struct Delta {
    pub paths: Vec<String>,
    pub inos: Vec<u64>,
}

/// The last recorded state of a run and the indexes that update it.
#[derive(Debug, Default)]
pub struct StateTracker {
    tree: Tree,
    snap: Snap,
    /// Path -> model inode, for every entry of `tree`.
    ino_at: HashMap<String, Ino>,
    /// Model inode -> its paths in `tree`.
    paths: HashMap<Ino, BTreeSet<String>>,
    started: bool,
}

/// The parent of a normalized path (`/a/b` -> `/a`, `/a` -> `/`); `None` for the root.
pub(crate) fn parent(p: &str) -> Option<&str> {
    match p.rfind('/') {
        _ if p == "/" => None,
        Some(0) => Some("/"),
        Some(i) => Some(&p[..i]),
        None => None,
    }
}

/// Whether `k` is `root` or below it.
fn under(k: &str, root: &str) -> bool {
    root == "/" || k == root || (k.starts_with(root) && k.as_bytes().get(root.len()) == Some(&b'/'))
}

impl StateTracker {
    pub fn new() -> StateTracker {
        StateTracker::default()
    }

    /// The state after the operations applied to `model` since the last snapshot (the
    /// first snapshot reads the whole model), and what changed.
    pub fn snapshot(&mut self, model: &mut Model) -> (Tree, Snap, Delta) {
        let mut roots = model.take_touched();
        if !self.started {
            self.started = true;
            roots = BTreeSet::from(["/".to_string()]);
        }
        let mut inos: BTreeSet<Ino> = BTreeSet::new();
        let mut changed: BTreeSet<String> = BTreeSet::new();
        for root in &roots {
            self.reread_subtree(model, root, &mut inos, &mut changed);
            if let Some(p) = parent(root) {
                if let Some(&i) = self.ino_at.get(p) {
                    inos.insert(i);
                }
            }
        }
        for &ino in &inos {
            self.rewrite_inode(model, ino, &mut changed);
        }
        self.snap.in_session = model.sessions_open().map(|i| i as u64).collect();
        let delta = Delta { paths: changed.into_iter().collect(), inos: inos.iter().map(|&i| i as u64).collect() };
        (self.tree.clone(), self.snap.clone(), delta)
    }

    /// Drops the entries of `root`'s subtree and takes its paths again from the model
    /// (entries are written by `rewrite_inode`); notes the inodes involved.
    fn reread_subtree(&mut self, model: &Model, root: &str, inos: &mut BTreeSet<Ino>, changed: &mut BTreeSet<String>) {
        let gone: Vec<String> = self
            .tree
            .entries
            .range(root.to_string()..)
            .take_while(|(k, _)| k.starts_with(root))
            .filter(|(k, _)| under(k, root))
            .map(|(k, _)| k.clone())
            .collect();
        for k in gone {
            self.remove_entry(&k);
            if let Some(i) = self.ino_at.remove(&k) {
                if let Some(ps) = self.paths.get_mut(&i) {
                    ps.remove(&k);
                    if ps.is_empty() {
                        self.paths.remove(&i);
                    }
                }
                inos.insert(i);
            }
            self.snap.names.remove(&k);
            changed.insert(k);
        }
        let Some(top) = model.resolve_ino(root) else { return };
        // Bounded by the model's inodes: a directory tree has no cycles.
        let mut stack = vec![(root.to_string(), top)];
        while let Some((path, ino)) = stack.pop() {
            if let Body::Dir(e) = &model.ns().get(ino).body {
                for (n, c) in e {
                    let n = String::from_utf8_lossy(n);
                    let p = if path == "/" { format!("/{n}") } else { format!("{path}/{n}") };
                    stack.push((p, *c));
                }
            }
            self.ino_at.insert(path.clone(), ino);
            self.paths.entry(ino).or_default().insert(path.clone());
            inos.insert(ino);
            changed.insert(path);
        }
    }

    /// Writes the entries of every name of `ino` (or drops its snap content when it has
    /// none left), as [`Model::tree`] and [`Model::snap`] would make them.
    fn rewrite_inode(&mut self, model: &mut Model, ino: Ino, changed: &mut BTreeSet<String>) {
        let Some(names) = self.paths.get(&ino).filter(|ps| !ps.is_empty()) else {
            self.snap.content.remove(&(ino as u64));
            self.snap.reserved.remove(&(ino as u64));
            return;
        };
        let names: Vec<String> = names.iter().cloned().collect();
        let node = model.ns().get(ino);
        let xattrs: Vec<(Vec<u8>, Vec<u8>)> = node.xattrs.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let perm = node.perm;
        let (kind, size, content, nlink, chash) = match &node.body {
            // 2 + subdirectories, kept by the namespace (not counted per change).
            Body::Dir(_) => (KIND_DIR, 0, Arc::default(), node.nlink, content_hash(&[])),
            Body::Symlink(t) => {
                let t = Arc::new(t.clone());
                let h = content_hash(&t);
                (KIND_SYMLINK, t.len() as u64, t, names.len() as u32, h)
            }
            Body::File(_) => {
                // The durable content's length and hash; the bytes are not kept (a crash
                // state's planned dump carries hashes only).
                let size = model.durable_content_len(ino);
                (KIND_FILE, size, Arc::default(), names.len() as u32, model.durable_content_hash(ino))
            }
        };
        let link = names[0].clone();
        for p in &names {
            let e = Entry {
                kind,
                perm,
                nlink,
                size,
                content: content.clone(),
                chash,
                xattrs: xattrs.clone(),
                link: link.clone(),
                alloc: Default::default(),
            };
            self.insert_entry(p, e);
            if kind == KIND_FILE {
                self.snap.names.insert(p.clone(), ino as u64);
            }
            changed.insert(p.clone());
        }
        if kind == KIND_FILE {
            self.snap.content.insert(ino as u64, chash);
            match model.reserved_count(ino) {
                Some(n) => self.snap.reserved.insert(ino as u64, n),
                None => self.snap.reserved.remove(&(ino as u64)),
            };
        }
    }

    fn insert_entry(&mut self, path: &str, e: Entry) {
        let h = entry_hash(path, &e);
        if let Some(old) = self.tree.entries.insert(path.to_string(), e) {
            self.tree.hash = self.tree.hash.wrapping_sub(entry_hash(path, &old));
        }
        self.tree.hash = self.tree.hash.wrapping_add(h);
    }

    fn remove_entry(&mut self, path: &str) {
        if let Some(old) = self.tree.entries.remove(path) {
            self.tree.hash = self.tree.hash.wrapping_sub(entry_hash(path, &old));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use crate::workload::{regression_files, workload, CaseId, Op};

    /// Applies `ops` to a model as a run does (a `repeat` one repetition at a time, a `fill`
    /// as its appends, at most 40 here), checking the tracker against full rebuilds after
    /// each; returns the number of states compared.
    fn check_ops(case: &CaseId, ops: &[Op]) -> usize {
        let mut model = Model::new();
        let mut tracker = StateTracker::new();
        let (mut states, mut snaps, mut deltas) = (Vec::new(), Vec::new(), Vec::new());
        let mut record = |model: &mut Model, what: &str| {
            let (t, s, d) = tracker.snapshot(model);
            let want = model.durable_tree();
            assert!(t == want, "{case} after `{what}`: {:?}", t.diff(&want, 6));
            assert!(s == model.snap(), "{case} after `{what}`: snap differs");
            states.push(t);
            snaps.push(s);
            deltas.push(d);
        };
        record(&mut model, "mount");
        let mut rng = crate::rng::Rng::new(ops.len() as u64);
        for op in ops {
            let subs: Vec<Op> = match op {
                Op::Fill { path, chunk, pattern, max } => (0..(*max).clamp(1, 40))
                    .map(|j| Op::Write {
                        path: path.clone(),
                        offset: model.file_size(path).unwrap_or(0) + (j * chunk) as u64,
                        len: *chunk,
                        pattern: pattern + j,
                    })
                    .collect(),
                Op::Rmtree(p) => model.rmtree_ops(p),
                _ => op.expand(),
            };
            for sub in subs {
                let _ = model.apply(&sub);
                // A record may cover several operations (a run groups repetitions that did
                // no I/O): record after a seeded half of them.
                if rng.chance(1, 2) {
                    record(&mut model, &sub.to_string());
                }
            }
        }
        let n = states.len();
        assert!(
            History::from_deltas(&states, &snaps, &deltas) == History::build(&states, &snaps),
            "{case}: the history from deltas is not the scan's"
        );
        n
    }

    #[test]
    fn incremental_states_are_the_models() {
        // All regression files but the one of 3,000 links to one inode (each state rewrites
        // every name's entry: quadratic, and the rebuilds it is compared with are too).
        let mut cases: Vec<CaseId> = regression_files()
            .into_iter()
            .filter(|f| !f.ends_with("seed-btrfs-3000-links.wl"))
            .map(CaseId::File)
            .collect();
        cases.extend((0..60).map(CaseId::Random));
        cases.extend((0..60).map(CaseId::Ace));
        cases.extend((0..8).map(CaseId::Full));
        let mut compared = 0;
        for case in &cases {
            let w = workload(case, 9).unwrap();
            compared += check_ops(case, &w.ops);
        }
        assert!(compared > 10_000, "only {compared} states compared");
    }
}

#[cfg(test)]
mod grouped_tests {
    use super::*;
    use crate::workload::Op;

    /// Operations between two records (a group of repetitions) that shrink a file and grow
    /// it again, or punch it, must not leave block hashes of the bytes they replaced.
    #[test]
    fn content_changed_twice_in_one_record_is_hashed_again() {
        let w = |off: u64, len: u32, pattern: u32| Op::Write { path: "/f".into(), offset: off, len, pattern };
        let groups: Vec<Vec<Op>> = vec![
            vec![Op::Create("/f".into()), w(0, 3 * 4096 + 10, 1)],
            vec![Op::Truncate("/f".into(), 0), Op::Truncate("/f".into(), 3 * 4096)],
            vec![w(0, 2 * 4096, 2)],
            vec![Op::Punch("/f".into(), 4096, 4096, 0)],
            vec![Op::AtomicStart("/f".into()), w(0, 4096, 3)],
            vec![Op::AtomicAbort("/f".into())],
            vec![Op::Link("/f".into(), "/g".into()), w(8192, 4096, 4), Op::Unlink("/f".into())],
        ];
        let mut model = Model::new();
        let mut tracker = StateTracker::new();
        for (i, g) in groups.iter().enumerate() {
            for op in g {
                model.apply(op).unwrap();
            }
            let (t, s, _) = tracker.snapshot(&mut model);
            let want = model.durable_tree();
            assert!(t == want, "group {i}: {:?}", t.diff(&want, 6));
            assert!(s == model.snap(), "group {i}: snap");
        }
    }
}

/// Seeded random operations on a handful of paths chosen to collide (a prefix without a
/// slash, doubled and trailing slashes, the root, nested names), records after a third of
/// them: the tracker equals rebuilds after every record, the history from deltas the scan.
#[cfg(test)]
mod colliding_paths_tests {
    use super::*;
    use crate::history::History;
    use crate::rng::Rng;
    use crate::workload::Op;

    const PATHS: [&str; 14] =
        ["/a", "/b", "/c", "/a/x", "/a/y", "/b/x", "/b/y", "/a/x/z", "/b/x/z", "/a-b", "/a0", "/a//y", "/b/", "/"];

    fn offset(rng: &mut Rng) -> u64 {
        match rng.below(4) {
            0 => rng.below(100),
            1 => rng.below(4) * 4096,
            2 => rng.below(40_000),
            _ => rng.below(8) * 4096 + rng.below(3) * 100,
        }
    }

    fn random_op(rng: &mut Rng) -> Op {
        let mut p = || rng.pick(&PATHS).to_string();
        let (a, b) = (p(), p());
        match rng.below(22) {
            0 | 1 => Op::Create(a),
            2 | 3 => Op::Mkdir(a),
            4..=7 => Op::Write {
                path: a,
                offset: offset(rng),
                len: rng.below(12_000) as u32,
                pattern: rng.below(1000) as u32,
            },
            8 => Op::Truncate(a, offset(rng)),
            9 => Op::Punch(a, offset(rng), offset(rng), rng.below(5) as u8),
            10 | 11 => Op::Link(a, b),
            12 => Op::Unlink(a),
            13 => Op::Rmdir(a),
            14 | 15 => Op::Rename(a, b, rng.below(3) as u32),
            16 => Op::SetXattr(a, ["user.a", "user.b"][rng.below(2) as usize].into(), rng.below(3).to_string()),
            17 => Op::RemoveXattr(a, "user.a".into()),
            18 => Op::Chmod(a, 0o600 + rng.below(8) as u32),
            19 => Op::AtomicStart(a),
            20 if rng.chance(1, 2) => Op::AtomicCommit(a),
            20 => Op::AtomicAbort(a),
            _ => Op::Symlink(a, "t".into()),
        }
    }

    #[test]
    fn tracker_matches_rebuilds_on_colliding_paths() {
        let mut recorded = 0;
        for seed in 0..400u64 {
            let mut rng = Rng::new(seed);
            let (mut model, mut tracker) = (Model::new(), StateTracker::new());
            let (mut states, mut snaps, mut deltas) = (Vec::new(), Vec::new(), Vec::new());
            let mut log = Vec::new();
            for i in 0..300 {
                if i > 0 {
                    let op = random_op(&mut rng);
                    let r = model.apply(&op);
                    log.push(format!("{op} -> {r:?}"));
                    if !rng.chance(1, 3) {
                        continue;
                    }
                }
                let (t, s, d) = tracker.snapshot(&mut model);
                let want = model.durable_tree();
                assert!(t == want, "seed {seed} op {i}: {:?}\n{}", t.diff(&want, 6), log.join("\n"));
                assert!(s == model.snap(), "seed {seed} op {i}: snap\n{}", log.join("\n"));
                states.push(t);
                snaps.push(s);
                deltas.push(d);
                recorded += 1;
            }
            let h = History::from_deltas(&states, &snaps, &deltas);
            assert!(h == History::build(&states, &snaps), "seed {seed}: history");
        }
        assert!(recorded > 30_000, "{recorded} records");
    }
}
