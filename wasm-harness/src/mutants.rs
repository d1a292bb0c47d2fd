//! `rollfs-sim mutants`: every `mutant-*` feature of rollfs-core must be caught.
//!
//! The list is read from core/Cargo.toml at run time, so a mutant added to the core is
//! picked up without touching the harness. One guest is built with every mutant compiled
//! in (`rollfs-core/mutants`, cached under the build's OUT_DIR); each mutant is chosen per
//! instance and explored with a fixed budget until the first violation.

use crate::explore::{Explorer, Options};
use crate::guest::GuestModule;
use crate::schedule::{explore, Source};
use crate::workload::CaseId;
use std::path::Path;
use std::sync::Arc;

/// The `mutant-*` features declared in core/Cargo.toml, in file order.
pub fn list() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/Cargo.toml");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut in_features = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_features = l == "[features]";
            continue;
        }
        if in_features {
            if let Some((name, _)) = l.split_once('=') {
                let name = name.trim();
                if name.starts_with("mutant-") {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// Outcome for one mutant.
pub struct MutantResult {
    pub name: String,
    pub caught: bool,
    pub note: String,
    pub states: u64,
}

/// Builds and explores one mutant. Sources are tried in order: regression workloads
/// (cheap, targeted), then ACE and random cases, until a violation or the budget.
pub fn check(name: &str, opts: &Options, cases_per_source: u64) -> MutantResult {
    let built = GuestModule::mutant(name);
    let module = match built {
        Ok(m) => Arc::new(m),
        Err(e) => {
            return MutantResult { name: name.into(), caught: false, note: format!("build failed: {e}"), states: 0 }
        }
    };
    let ex = match Explorer::new(module, opts.clone()) {
        Ok(ex) => ex,
        // A mutant that breaks format is caught by definition (nothing works).
        Err(e) => {
            return MutantResult { name: name.into(), caught: true, note: format!("format fails: {e}"), states: 0 }
        }
    };
    if name.starts_with("mutant-eio-") {
        // On cold caches: every read an operation makes is a point (issue 35: with warm
        // caches no injected error reached the reads after an operation's first change).
        return match Explorer::new(ex.module.clone(), Options { cold: true, ..opts.clone() }) {
            Ok(cold) => check_eio(name, &cold),
            Err(e) => MutantResult { name: name.into(), caught: false, note: format!("explorer: {e}"), states: 0 },
        };
    }
    if name.starts_with("mutant-device-") {
        return match Explorer::new(ex.module.clone(), Options { file_blocks: true, ..opts.clone() }) {
            Ok(ex) => check_device(name, &ex),
            Err(e) => MutantResult { name: name.into(), caught: false, note: format!("explorer: {e}"), states: 0 },
        };
    }
    let mut states = 0;
    // The workload families written for the mutant's bug class first (issue 13), then the
    // standard sources. The targeted cases are few, so they are explored at least as deeply
    // as by default (crash points, variants, crashes inside recovery), whatever the
    // standard sources use: a bug class found only by crashing recovery itself (e.g. no
    // room kept for roll-forward) must not hang on one sampled recovery crash of a later
    // case, which any change to the core's I/O moves.
    let deep = Options {
        max_points: opts.max_points.max(Options::default().max_points),
        random_variants: opts.random_variants.max(Options::default().random_variants),
        recovery_crashes: opts.recovery_crashes.max(Options::default().recovery_crashes),
        ..opts.clone()
    };
    let targeted = targeted_cases(name);
    let deep_ex = if targeted.is_empty() { None } else { Explorer::new(ex.module.clone(), deep).ok() };
    for case in targeted {
        let s =
            crate::schedule::explore_cases(deep_ex.as_ref().unwrap_or(&ex), std::slice::from_ref(&case), &mut |_| {});
        states += s.states;
        if let Some(v) = s.violations.first() {
            return caught(name, v, states);
        }
    }
    for src in [Source::Regression, Source::Ace, Source::Random, Source::Full] {
        let n = if src == Source::Regression { u64::MAX } else { cases_per_source };
        let s = explore(&ex, src, Some(n), None, true, &mut |_| {});
        states += s.states;
        if let Some(v) = s.violations.first() {
            return caught(name, v, states);
        }
    }
    MutantResult { name: name.into(), caught: false, note: "no violation found".into(), states }
}

fn caught(name: &str, v: &crate::explore::Violation, states: u64) -> MutantResult {
    let state = v.state.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
    MutantResult {
        name: name.into(),
        caught: true,
        note: format!("{} at {} state {}: {}", v.kind, v.case, state, v.detail.chars().take(160).collect::<String>()),
        states,
    }
}

/// The `full:K` cases of the families that reach a mutant's bug class (issue 13), tried
/// before the standard sources: K, K + 8, ... are the same family with other draws.
pub fn targeted_cases(name: &str) -> Vec<CaseId> {
    let fam = |f: &str| {
        let i = crate::workload::FULL_FAMILIES.iter().position(|x| *x == f).expect("family") as u64;
        (0..4).map(move |r| CaseId::Full(i + crate::workload::FULL_FAMILIES.len() as u64 * r))
    };
    match name {
        // A checkpoint inside recovery: a new file's first xattr rolled forward on a nearly
        // full device (recovery's xattr store wanted room), crashes during recovery.
        "mutant-cp-in-recovery" => fam("xattr-full").chain(fam("fsync-full")).collect(),
        // Truncate that frees before it reserves: truncates under ENOSPC.
        "mutant-truncate-free-before-reserve" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/truncate-on-a-full-device.wl");
            std::iter::once(CaseId::File(wl)).chain(fam("fill-churn")).chain(fam("squeeze")).collect()
        }
        // A commit that fails half way: node ids run out inside a commit (the regression
        // workload takes every id with live files first), or room.
        "mutant-atomic-partial-commit" => {
            let wl =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/atomic-commit-without-node-ids.wl");
            std::iter::once(CaseId::File(wl)).chain(fam("nid-churn")).chain(fam("fill-churn")).collect()
        }
        // A fixed orphan limit: more than 1,024 open unlinked files.
        "mutant-orphan-limit" => fam("orphans").collect(),
        // fallocate that reserves nothing: the range written after the device filled.
        "mutant-fallocate-no-reserve" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/fallocate-then-fill.wl");
            vec![CaseId::File(wl)]
        }
        // Reservations made durable by a batch: a file truncated, its freed capacity
        // reserved and fsync'd, then crashes (the batch does not fit at recovery).
        "mutant-prealloc-by-batch" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/fallocate-fsync-crash.wl");
            vec![CaseId::File(wl)]
        }
        // Reservations dropped by roll-forward: fsync'd reservations carried by batches.
        "mutant-recovery-drops-reservations" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/fallocate-batch-crash.wl");
            vec![CaseId::File(wl)]
        }
        // Inline data: fsync'd inline files crashed (roll-forward installs their bytes), and
        // shrunk then extended.
        "mutant-recovery-drops-inline-data" | "mutant-inline-shrink-keeps-bytes" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/inline-fsync-crash.wl");
            vec![CaseId::File(wl)]
        }
        // An online grow whose checkpoint of the new size is committed before the NAT and
        // SIT blocks it names: crashes between them.
        "mutant-grow-header-before-tables" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/online-grow.wl");
            vec![CaseId::File(wl)]
        }
        // Every mount steps the version by 1: an earlier use of the same image left its
        // chain after this use's.
        "mutant-mount-no-version-jump" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/earlier-use-of-the-image.wl");
            vec![CaseId::File(wl)]
        }
        // A batch written before the namespace records made before it: a file created (in a
        // new directory) and fsync'd on an `@nsrec` image comes back without its data.
        // A directory fsync that writes no records: the names it returned for (the last
        // fsync of the workload is a directory's) are gone after a crash (the whole tree a
        // directory fsync makes durable).
        "mutant-nsrec-batch-before-records" | "mutant-dir-fsync-no-records" => {
            let wl =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/nsrec-dir-fsync-after-creates.wl");
            vec![CaseId::File(wl)]
        }
        // No batches ride with the records: a file renamed over another without an fsync
        // of its own comes back empty after a directory fsync returned.
        // Recovery writes where the walk ended: a crash during it splices the chain.
        // Recovery writes a replayed symlink's target over data its chain points at.
        "mutant-recovery-writes-over-chain-data" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("workloads/nsrec-symlink-target-over-freed-chain-data.wl");
            vec![CaseId::File(wl)]
        }
        // A batch's inode names its first data block as the next node: the chain ends there
        // and the fsyncs after the batch are lost.
        "mutant-chain-no-skip" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/mixed-fsync-chain.wl");
            vec![CaseId::File(wl)]
        }
        "mutant-recovery-writes-at-the-gap" => {
            let wl = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("workloads/nsrec-crash-during-recovery-at-the-gap.wl");
            vec![CaseId::File(wl)]
        }
        "mutant-no-riders" => {
            let wl =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/nsrec-rename-over-without-fsync.wl");
            vec![CaseId::File(wl)]
        }
        // No room reserved for roll-forward: fsyncs on a full device, then crashes (of the
        // recovery too: xattr-full's new files with xattrs want most room to roll forward,
        // and the sampled recovery crashes that show it move with any change to the core's
        // recovery I/O, so its draws come first).
        "mutant-no-recovery-reserve" => {
            let more = |f| {
                fam(f).map(|c| match c {
                    CaseId::Full(k) => CaseId::Full(k + 4 * crate::workload::FULL_FAMILIES.len() as u64),
                    c => c,
                })
            };
            fam("xattr-full").chain(more("xattr-full")).chain(fam("fsync-full")).collect()
        }
        _ => Vec::new(),
    }
}

/// A `mutant-eio-*` mutant breaks what a failed I/O must do, which crash states do not
/// show: the I/O-error sweep (a sample of the standard workloads' points, cold caches)
/// must.
fn check_eio(name: &str, ex: &Explorer) -> MutantResult {
    let cases = crate::eio::standard_cases(4, 4);
    let sum = crate::eio::sweep(ex, &cases, Some(12), false, &mut |_| {});
    swept(name, "eio sweep", sum.violations.first(), sum.points, "I/O-error points")
}

/// A mutant checked by a sweep (`by`): caught by its first violation, if any, in `tried`
/// points or states (`what`).
fn swept(name: &str, by: &str, first: Option<&crate::explore::Violation>, tried: u64, what: &str) -> MutantResult {
    let caught =
        first.map(|v| format!("{by}: {} in {}: {}", v.kind, v.case, v.detail.chars().take(160).collect::<String>()));
    MutantResult {
        name: name.into(),
        caught: caught.is_some(),
        note: caught.unwrap_or_else(|| format!("no violation in {tried} {what}")),
        states: tried,
    }
}

/// A `mutant-device-*` mutant breaks what the core does when the device lies (an honest
/// device never shows it): the device models' sweep (`crate::devices`) must report a
/// violation: persistent bit flips (FUA ignored for the checkpoint header's mutant) on
/// regression workloads that write file data and sync.
fn check_device(name: &str, ex: &Explorer) -> MutantResult {
    let dir = crate::workload::regression_dir();
    let cases: Vec<CaseId> =
        DEVICE_MUTANT_WORKLOADS.iter().map(|f| CaseId::File(dir.join(f))).chain((0..4).map(CaseId::Random)).collect();
    // The header's FUA is what a fua-ignored device loses; the rest break the checksums
    // that bit flips test.
    let model = if name == "mutant-device-cp-header-fua" {
        crate::devices::DeviceModel::FuaIgnored
    } else {
        crate::devices::DeviceModel::BitflipPersistent
    };
    let sum = crate::devices::sweep(ex, model, &cases, 40, None, &mut |_| {});
    swept(name, model.name(), sum.violations.first(), sum.states, "fault states")
}

/// A regression workload whose file holds data blocks at the end (a flipped data block is
/// what a read that skips its checksum returns).
const DEVICE_MUTANT_WORKLOADS: [&str; 1] = ["many-small-syncs.wl"];
