//! Interval histories of a run's model states ([`History`]): for each path, inode and file
//! name, the record ranges over which it kept one value. The per-file rules
//! ([`crate::oracle::per_file_verdict`]) ask "did path P have kind K somewhere in records
//! lo..=hi", "which names did inode I have", "which contents"; scanning the window's states
//! for every entry of every crash state was most of the explorer's time on long fsync
//! workloads (windows thousands of records wide, trees thousands of entries big). Built
//! once per run, on first use, from what each record changed ([`Delta`]): O(changes), not
//! O(records x entries).

use crate::model::{Snap, Tree};
use crate::states::Delta;
use std::collections::HashMap;
use std::hash::Hash;

/// Maximal runs `(first, last, value)` of records (inclusive) over which a key kept one value.
pub type Runs<V> = Vec<(usize, usize, V)>;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct History {
    /// Path -> runs of `states[k].entries[path].kind`.
    pub kinds: HashMap<String, Runs<u8>>,
    /// File path -> runs of `snaps[k].names[path]` (the model inode).
    pub names: HashMap<String, Runs<u64>>,
    /// Model inode -> runs of each path naming it: `(first, last, path)`.
    pub ino_names: HashMap<u64, Runs<String>>,
    /// Model inode -> runs of `snaps[k].content[inode]`.
    pub content: HashMap<u64, Runs<u64>>,
    /// Model inode -> runs of `snaps[k].reserved[inode]` (absent: none reserved).
    pub reserved: HashMap<u64, Runs<u64>>,
}

/// Extends `runs` with `value` at record `k` (records are visited in order).
#[cfg(test)]
fn note<K: Hash + Eq, V: PartialEq>(map: &mut HashMap<K, Runs<V>>, key: K, k: usize, value: V) {
    let runs = map.entry(key).or_default();
    match runs.last_mut() {
        Some((_, last, v)) if *last + 1 == k && *v == value => *last = k,
        _ => runs.push((k, k, value)),
    }
}

/// Sets `key`'s value from record `k` on (`None`: absent), closing its open run (last
/// record `OPEN`) if the value changed.
fn set<K: Hash + Eq + Clone, V: PartialEq>(map: &mut HashMap<K, Runs<V>>, key: &K, k: usize, value: Option<V>) {
    let runs = match map.get_mut(key) {
        Some(r) => r,
        None if value.is_none() => return,
        None => map.entry(key.clone()).or_default(),
    };
    if let Some((_, last, v)) = runs.last_mut() {
        if *last == OPEN {
            if value.as_ref() == Some(&*v) {
                return;
            }
            *last = k - 1;
        }
    }
    if let Some(v) = value {
        runs.push((k, OPEN, v));
    }
}

/// The last record of a run still open while a history is built.
const OPEN: usize = usize::MAX;

/// Closes every open run at record `last`.
fn close<K, V>(map: &mut HashMap<K, Runs<V>>, last: usize) {
    for runs in map.values_mut() {
        if let Some((_, l, _)) = runs.last_mut() {
            if *l == OPEN {
                *l = last;
            }
        }
    }
}

impl History {
    /// The history of a run's states from what each record changed: `deltas[k]` names
    /// every path whose entry or file name, and every inode whose content, may differ in
    /// record `k` from record `k - 1` (record 0: all of them).
    pub fn from_deltas(states: &[Tree], snaps: &[Snap], deltas: &[Delta]) -> History {
        assert!(states.len() == deltas.len() && snaps.len() == deltas.len(), "one delta per record");
        let mut h = History::default();
        for (k, d) in deltas.iter().enumerate() {
            for p in &d.paths {
                set(&mut h.kinds, p, k, states[k].entries.get(p).map(|e| e.kind));
                set(&mut h.names, p, k, snaps[k].names.get(p).copied());
            }
            for ino in &d.inos {
                set(&mut h.content, ino, k, snaps[k].content.get(ino).copied());
                set(&mut h.reserved, ino, k, snaps[k].reserved.get(ino).copied());
            }
        }
        let last = deltas.len().saturating_sub(1);
        close(&mut h.kinds, last);
        close(&mut h.names, last);
        close(&mut h.content, last);
        close(&mut h.reserved, last);
        h.kinds.retain(|_, r| !r.is_empty());
        h.names.retain(|_, r| !r.is_empty());
        h.content.retain(|_, r| !r.is_empty());
        h.reserved.retain(|_, r| !r.is_empty());
        h.regroup_names();
        h
    }

    /// Each path's runs of naming an inode, regrouped by inode (in order).
    fn regroup_names(&mut self) {
        for (p, runs) in &self.names {
            for &(a, b, ino) in runs {
                self.ino_names.entry(ino).or_default().push((a, b, p.clone()));
            }
        }
        for runs in self.ino_names.values_mut() {
            runs.sort_unstable();
        }
    }

    /// The history by scanning every state (the reference `from_deltas` is tested against).
    #[cfg(test)]
    pub fn build(states: &[Tree], snaps: &[Snap]) -> History {
        let mut h = History::default();
        for (k, t) in states.iter().enumerate() {
            for (p, e) in &t.entries {
                note(&mut h.kinds, p.clone(), k, e.kind);
            }
        }
        for (k, s) in snaps.iter().enumerate() {
            for (p, &ino) in &s.names {
                note(&mut h.names, p.clone(), k, ino);
            }
            for (&ino, &hash) in &s.content {
                note(&mut h.content, ino, k, hash);
            }
            for (&ino, &n) in &s.reserved {
                note(&mut h.reserved, ino, k, n);
            }
        }
        h.regroup_names();
        h
    }
}

/// The values a key had somewhere in `lo..=hi`.
pub fn values_in<V>(runs: Option<&Runs<V>>, lo: usize, hi: usize) -> impl Iterator<Item = &V> {
    runs.into_iter().flatten().filter(move |(a, b, _)| *a <= hi && *b >= lo).map(|(_, _, v)| v)
}

/// The value the key had at record `k`, if any.
pub fn value_at<V>(runs: Option<&Runs<V>>, k: usize) -> Option<&V> {
    values_in(runs, k, k).next()
}

/// True when the key had `value` at every record of `lo..=hi` (one run covers them: runs
/// are maximal).
pub fn held_throughout<V: PartialEq>(runs: Option<&Runs<V>>, lo: usize, hi: usize, value: &V) -> bool {
    runs.into_iter().flatten().any(|(a, b, v)| *a <= lo && *b >= hi && v == value)
}

/// The fewest blocks `ino` had reserved at any record of `lo..=hi` (0 when some record
/// had none: runs are maximal and absent means none).
pub fn reserved_min(h: &History, ino: u64, lo: usize, hi: usize) -> u64 {
    let runs = h.reserved.get(&ino);
    let mut covered = 0usize;
    let mut least = u64::MAX;
    for (a, b, n) in runs.into_iter().flatten().filter(|(a, b, _)| *a <= hi && *b >= lo) {
        covered += (*b).min(hi) - (*a).max(lo) + 1;
        least = least.min(*n);
    }
    if covered == hi - lo + 1 {
        least
    } else {
        0
    }
}

/// Paths naming `ino` somewhere in `lo..=hi`, in order.
pub fn names_in(h: &History, ino: u64, lo: usize, hi: usize) -> std::collections::BTreeSet<&String> {
    values_in(h.ino_names.get(&ino), lo, hi).collect()
}

/// True when exactly one name refers to `ino` at every record of `lo..=hi`.
pub fn single_name_throughout(h: &History, ino: u64, lo: usize, hi: usize) -> bool {
    let mut runs: Vec<(usize, usize)> = h
        .ino_names
        .get(&ino)
        .into_iter()
        .flatten()
        .filter(|(a, b, _)| *a <= hi && *b >= lo)
        .map(|(a, b, _)| ((*a).max(lo), (*b).min(hi)))
        .collect();
    runs.sort_unstable();
    // Clipped to the window, the runs must tile it exactly: no gap (no name), no overlap
    // (two names).
    let mut next = lo;
    for (a, b) in runs {
        if a != next {
            return false;
        }
        next = b + 1;
    }
    next == hi + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_min_is_the_fewest_over_the_window_and_zero_where_none() {
        let mut h = History::default();
        // Inode 7: 30 reserved at records 2..=4, 10 at 5..=6, none from 7 on.
        h.reserved.insert(7, vec![(2, 4, 30), (5, 6, 10)]);
        assert_eq!(reserved_min(&h, 7, 2, 4), 30);
        assert_eq!(reserved_min(&h, 7, 3, 6), 10);
        assert_eq!(reserved_min(&h, 7, 4, 7), 0, "record 7 had none");
        assert_eq!(reserved_min(&h, 7, 1, 3), 0, "record 1 had none");
        assert_eq!(reserved_min(&h, 8, 2, 4), 0, "an inode that never reserved");
    }
}
