//! Splitting an exploration across machines: `--shard K/N` and `rollfs-sim merge`.
//!
//! An exploration draws its workloads as the sequence of cases `0, 1, 2, ...` of a source
//! (`schedule::nth_case`). Shard `K/N` explores exactly the cases whose index is `K` modulo
//! `N`, so the `N` shards of one seed never overlap and together cover what one unsharded
//! run covers (all of it with `--cases`; with `--duration`, each shard goes as far as its
//! time allows). Each shard writes a summary file (`--summary FILE`): its parameters, its
//! totals, one digest per case and its violations. `merge` checks that the files are
//! shards of the same exploration (seed, source, crash-model flags, `N`, each `K` once),
//! adds them up and prints one summary; its trace digest hashes the cases' digests in
//! case order, exactly as an unsharded run does, so the merge of `--cases` shards equals
//! the unsharded run's digest.
//!
//! The file is line-oriented text (`key value`), versioned by its first line.
//!
//! This module also owns what a summary holds: an exploration's totals ([`Summary`], made by
//! `crate::schedule`) and the core's counters summed over it ([`Events`], [`RARE_EVENTS`]).

use crate::explore::Violation;
use crate::guest::{stat_index, CoreStats, STAT_NAMES};
use crate::rng::Hasher64;
use std::fmt::Write as _;

/// Shard `k` of `n` (0-based `k`). [`Shard::ALL`] is the unsharded exploration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl Shard {
    pub const ALL: Shard = Shard { k: 0, n: 1 };

    /// Whether case `index` belongs to this shard.
    pub fn has(&self, index: u64) -> bool {
        index % self.n == self.k
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s:?}: expected K/N with 0 <= K < N (e.g. 0/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u64, u64) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if n == 0 || k >= n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

/// The core's counters summed over workload runs (at their end) and over recovery mounts
/// (right after mount, so what recovery itself did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Events {
    pub runs: CoreStats,
    pub recoveries: CoreStats,
}

impl Default for Events {
    fn default() -> Self {
        Events { runs: [0; STAT_NAMES.len()], recoveries: [0; STAT_NAMES.len()] }
    }
}

/// The rare events every exploration reports and the CI sample must reach (core counters).
pub const RARE_EVENTS: [&str; 20] = [
    "atomic_spills",
    "op_checkpoints",
    "enospc_returned",
    "recovery_reserve_fallbacks",
    "fsync_checkpoint_fallbacks",
    "fsync_gc_rounds",
    "recovery_full_device",
    "atomic_commit_failures",
    "nid_shortage_checkpoints",
    "gc_segments",
    "recovered_batches",
    "ssr_blocks",
    "full_device_removals",
    // A fallocate made durable by its fsync's checkpoint (reservations kept on disk).
    "fsync_cp_reserved",
    // Namespace records (`@nsrec` workloads): an fsync that needed names served by record
    // nodes instead of a checkpoint, and records replayed at mount.
    "fsync_by_records",
    "fsync_riders",
    "recovered_records",
    // Records by dependency (stop 58): an fsync that left another directory's records for
    // the fsync that needs them (its crash states are not prefixes of the list).
    "ns_records_left_unwritten",
    // Data beside its chain: batches written so, and cleaning moving such data out of node
    // segments (review 53: no explorer workload reached the second).
    "data_beside_blocks",
    "gc_data_from_node_segments",
];

impl Events {
    /// `self - earlier` (counters only grow).
    pub fn since(&self, earlier: &Events) -> Events {
        let mut e = *self;
        for i in 0..STAT_NAMES.len() {
            e.runs[i] -= earlier.runs[i];
            e.recoveries[i] -= earlier.recoveries[i];
        }
        e
    }

    /// `self + other`.
    pub fn plus(&self, other: &Events) -> Events {
        let mut e = *self;
        for i in 0..STAT_NAMES.len() {
            e.runs[i] += other.runs[i];
            e.recoveries[i] += other.recoveries[i];
        }
        e
    }

    /// A counter summed over runs and recovery mounts.
    pub fn total(&self, name: &str) -> u64 {
        let i = stat_index(name);
        self.runs[i] + self.recoveries[i]
    }

    /// The rare-event table: one line per counter of [`RARE_EVENTS`].
    pub fn table(&self) -> Vec<String> {
        let mut v = vec![format!("{:<28} {:>12} {:>12} {:>12}", "rare event", "total", "in runs", "in recovery")];
        for n in RARE_EVENTS {
            let i = stat_index(n);
            v.push(format!(
                "{:<28} {:>12} {:>12} {:>12}{}",
                n,
                self.runs[i] + self.recoveries[i],
                self.runs[i],
                self.recoveries[i],
                if self.runs[i] + self.recoveries[i] == 0 { "   <- never" } else { "" }
            ));
        }
        v
    }

    /// The rare events that never fired.
    pub fn missing(&self) -> Vec<&'static str> {
        RARE_EVENTS.iter().copied().filter(|n| self.total(n) == 0).collect()
    }
}

/// A whole exploration's totals.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub states: u64,
    pub workloads: u64,
    pub violations: Vec<Violation>,
    pub digest: u64,
    pub seconds: f64,
    /// The core's counters over this exploration's runs and recovery mounts.
    pub events: Events,
    /// (case index in the source, the case's digest), in exploration order: what a shard
    /// reports so that a merge recomputes `digest` (`crate::shard`).
    pub case_digests: Vec<(u64, u64)>,
}

impl Summary {
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.states as f64 / self.seconds
        } else {
            0.0
        }
    }

    pub fn last_line(&self) -> String {
        format!(
            "explored {} crash states from {} workloads: {} violations ({:.0} states/s)",
            self.states,
            self.workloads,
            self.violations.len(),
            self.rate()
        )
    }
}

/// What identifies an exploration whose shards may be merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    pub seed: u64,
    pub source: String,
    pub torn: bool,
    pub eio: bool,
    pub max_points: usize,
    pub mutant: String,
}

/// A shard's summary as written to and read from a file.
#[derive(Debug, Clone)]
pub struct ShardSummary {
    pub params: Params,
    pub shard: Shard,
    pub states: u64,
    pub workloads: u64,
    pub seconds: f64,
    /// (case index, the case's digest), in exploration order.
    pub case_digests: Vec<(u64, u64)>,
    pub events: Events,
    /// One line per violation: kind, case, state, detail (tab-separated).
    pub violations: Vec<String>,
}

const HEADER: &str = "rollfs-sim shard summary 1";

impl ShardSummary {
    pub fn of(params: Params, shard: Shard, sum: &Summary) -> ShardSummary {
        ShardSummary {
            params,
            shard,
            states: sum.states,
            workloads: sum.workloads,
            seconds: sum.seconds,
            case_digests: sum.case_digests.clone(),
            events: sum.events,
            violations: sum
                .violations
                .iter()
                .map(|v| {
                    let state = v.state.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
                    format!("{}\t{}\t{}\t{}", v.kind, v.case, state, v.detail.replace(['\t', '\n'], " "))
                })
                .collect(),
        }
    }

    pub fn to_text(&self) -> String {
        let p = &self.params;
        let mut s = String::new();
        let _ = writeln!(s, "{HEADER}");
        let _ = writeln!(s, "seed {}", p.seed);
        let _ = writeln!(s, "source {}", p.source);
        let _ = writeln!(s, "torn {}", u8::from(p.torn));
        let _ = writeln!(s, "eio {}", u8::from(p.eio));
        let _ = writeln!(s, "max_points {}", p.max_points);
        let _ = writeln!(s, "mutant {}", if p.mutant.is_empty() { "-" } else { &p.mutant });
        let _ = writeln!(s, "shard {}", self.shard);
        let _ = writeln!(s, "states {}", self.states);
        let _ = writeln!(s, "workloads {}", self.workloads);
        let _ = writeln!(s, "seconds {:.3}", self.seconds);
        for (i, d) in &self.case_digests {
            let _ = writeln!(s, "case {i} {d:016x}");
        }
        for (i, name) in STAT_NAMES.iter().enumerate() {
            let _ = writeln!(s, "event {name} {} {}", self.events.runs[i], self.events.recoveries[i]);
        }
        for v in &self.violations {
            let _ = writeln!(s, "violation {v}");
        }
        s
    }

    pub fn parse(text: &str) -> Result<ShardSummary, String> {
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(format!("not a shard summary (the first line is not {HEADER:?})"));
        }
        let mut get = std::collections::BTreeMap::new();
        let mut case_digests = Vec::new();
        let mut events = Events::default();
        let mut violations = Vec::new();
        for (n, line) in lines.enumerate() {
            let at = || format!("line {}: {line:?}", n + 2);
            let (key, rest) = line.split_once(' ').ok_or_else(at)?;
            match key {
                "case" => {
                    let (i, d) = rest.split_once(' ').ok_or_else(at)?;
                    let i = i.parse().map_err(|_| at())?;
                    let d = u64::from_str_radix(d, 16).map_err(|_| at())?;
                    case_digests.push((i, d));
                }
                "event" => {
                    let f: Vec<&str> = rest.split(' ').collect();
                    let [name, runs, rec] = f[..] else { return Err(at()) };
                    // A counter this build does not know (a newer core) is an error: a
                    // merge must not drop what a shard counted.
                    let i = STAT_NAMES
                        .iter()
                        .position(|s| *s == name)
                        .ok_or_else(|| format!("{}: unknown counter", at()))?;
                    events.runs[i] = runs.parse().map_err(|_| at())?;
                    events.recoveries[i] = rec.parse().map_err(|_| at())?;
                }
                "violation" => violations.push(rest.to_string()),
                _ => {
                    if get.insert(key.to_string(), rest.to_string()).is_some() {
                        return Err(format!("{}: repeated", at()));
                    }
                }
            }
        }
        let field = |k: &str| get.get(k).cloned().ok_or_else(|| format!("missing `{k}`"));
        let num = |k: &str| -> Result<u64, String> { field(k)?.parse().map_err(|_| format!("`{k}` is not a number")) };
        let mutant = field("mutant")?;
        Ok(ShardSummary {
            params: Params {
                seed: num("seed")?,
                source: field("source")?,
                torn: num("torn")? != 0,
                eio: num("eio")? != 0,
                max_points: num("max_points")? as usize,
                mutant: if mutant == "-" { String::new() } else { mutant },
            },
            shard: field("shard")?.parse()?,
            states: num("states")?,
            workloads: num("workloads")?,
            seconds: field("seconds")?.parse().map_err(|_| "`seconds` is not a number".to_string())?,
            case_digests,
            events,
            violations,
        })
    }
}

/// The merge of every shard of one exploration.
#[derive(Debug, Clone)]
pub struct Merged {
    pub params: Params,
    pub shards: u64,
    pub states: u64,
    pub workloads: u64,
    /// The longest shard's time (they run side by side).
    pub seconds: f64,
    pub digest: u64,
    pub events: Events,
    pub violations: Vec<String>,
}

/// Merges shard summaries: all of the same exploration, every shard `K` of `N` exactly
/// once, no case explored twice.
pub fn merge(parts: &[ShardSummary]) -> Result<Merged, String> {
    let first = parts.first().ok_or("nothing to merge")?;
    let n = first.shard.n;
    let mut seen = vec![false; n as usize];
    for p in parts {
        if p.params != first.params {
            return Err(format!(
                "shard {} is of another exploration ({:?}) than shard {} ({:?})",
                p.shard, p.params, first.shard, first.params
            ));
        }
        if p.shard.n != n {
            return Err(format!("shard {} does not split into {n} like shard {}", p.shard, first.shard));
        }
        if std::mem::replace(&mut seen[p.shard.k as usize], true) {
            return Err(format!("shard {} given twice", p.shard));
        }
    }
    let missing: Vec<String> = (0..n).filter(|&k| !seen[k as usize]).map(|k| format!("{k}/{n}")).collect();
    if !missing.is_empty() {
        return Err(format!("shards missing: {}", missing.join(", ")));
    }
    let mut cases: Vec<(u64, u64)> = parts.iter().flat_map(|p| p.case_digests.iter().copied()).collect();
    cases.sort_unstable();
    if let Some(w) = cases.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(format!("case {} explored by two shards", w[0].0));
    }
    if let Some(p) = parts.iter().find(|p| p.case_digests.iter().any(|&(i, _)| !p.shard.has(i))) {
        return Err(format!("shard {} explored a case of another shard", p.shard));
    }
    let mut h = Hasher64::new();
    for (_, d) in &cases {
        h.u64(*d);
    }
    Ok(Merged {
        params: first.params.clone(),
        shards: n,
        states: parts.iter().map(|p| p.states).sum(),
        workloads: parts.iter().map(|p| p.workloads).sum(),
        seconds: parts.iter().map(|p| p.seconds).fold(0.0, f64::max),
        digest: h.finish(),
        events: parts.iter().fold(Events::default(), |e, p| e.plus(&p.events)),
        violations: parts.iter().flat_map(|p| p.violations.iter().cloned()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(k: u64, n: u64, cases: &[u64]) -> ShardSummary {
        let params =
            Params { seed: 5, source: "all".into(), torn: true, eio: false, max_points: 400, mutant: String::new() };
        let mut events = Events::default();
        events.runs[0] = 10 + k;
        ShardSummary {
            params,
            shard: Shard { k, n },
            states: 100 * (k + 1),
            workloads: cases.len() as u64,
            seconds: 1.5 + k as f64,
            case_digests: cases.iter().map(|&i| (i, i * 31 + 7)).collect(),
            events,
            violations: if k == 1 { vec!["kind\trandom:4\t3:1\tdetail".into()] } else { vec![] },
        }
    }

    #[test]
    fn shard_parses_and_partitions() {
        let s: Shard = "2/5".parse().unwrap();
        assert_eq!(s, Shard { k: 2, n: 5 });
        assert_eq!(s.to_string(), "2/5");
        assert!(s.has(7) && !s.has(8));
        for bad in ["5/5", "1/0", "x/2", "3", "-1/2", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad:?} must be refused");
        }
        let n = 4;
        for i in 0..100u64 {
            assert_eq!((0..n).filter(|&k| Shard { k, n }.has(i)).count(), 1, "case {i} in exactly one shard");
        }
    }

    #[test]
    fn a_summary_survives_its_file() {
        let p = part(1, 2, &[1, 3, 5]);
        let q = ShardSummary::parse(&p.to_text()).unwrap();
        assert_eq!(q.to_text(), p.to_text());
        assert!(ShardSummary::parse("something else\n").is_err());
        let unknown = p.to_text().replace("event ", "event no_such_counter_");
        assert!(ShardSummary::parse(&unknown).is_err(), "unknown counters are refused");
    }

    #[test]
    fn merge_adds_up_and_refuses_what_is_not_one_exploration() {
        let (a, b) = (part(0, 2, &[0, 2, 4]), part(1, 2, &[1, 3]));
        let m = merge(&[b.clone(), a.clone()]).unwrap();
        assert_eq!((m.states, m.workloads, m.shards, m.violations.len()), (300, 5, 2, 1));
        assert_eq!(m.seconds, 2.5);
        assert_eq!(m.events.runs[0], 21);
        let mut h = Hasher64::new();
        for i in 0..5u64 {
            h.u64(i * 31 + 7);
        }
        assert_eq!(m.digest, h.finish(), "the digest hashes the cases in order, as an unsharded run");
        assert!(merge(std::slice::from_ref(&a)).unwrap_err().contains("missing: 1/2"));
        assert!(merge(&[a.clone(), a.clone()]).unwrap_err().contains("twice"));
        let mut other = b.clone();
        other.params.seed = 6;
        assert!(merge(&[a.clone(), other]).unwrap_err().contains("another exploration"));
        let mut overlap = b.clone();
        overlap.case_digests.push((2, 1));
        assert!(merge(&[a.clone(), overlap]).is_err());
        assert!(merge(&[a, part(1, 3, &[1])]).unwrap_err().contains("split"));
    }
}
