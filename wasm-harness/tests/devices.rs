//! The lying-device models (`rollfs-sim explore --device`, `rollfs_sim::devices`) against
//! the real core guest: each model's small sweep keeps what docs/INVARIANTS.md ("Lying
//! devices") promises for it, in the outcome classes that promise allows; a core that
//! reads data without checking its checksum (`mutant-device-read-no-crc`) is caught as
//! wrong bytes, and one that leaves the checkpoint header to FUA
//! (`mutant-device-cp-header-fua`) as lost syncs under `fua-ignored`; the same seed gives
//! the same outcomes on one thread and on two.

use rollfs_sim::devices::{sweep, DeviceModel, DeviceSummary, Outcome};
use rollfs_sim::explore::{Explorer, Options};
use rollfs_sim::guest::GuestModule;
use rollfs_sim::workload::{regression_dir, CaseId};
use std::sync::Arc;

fn explorer(module: Arc<GuestModule>, threads: usize) -> Explorer {
    Explorer::new(module, Options { seed: 4, threads, file_blocks: true, ..Options::default() }).expect("format")
}

/// Small workloads with checkpoints, fsyncs, renames and file data at the end, and one that
/// cleans (its reused blocks are the rewrites `erase-then-lose` erases: with open segments'
/// summaries in the checkpoint, few metadata blocks are rewritten otherwise).
fn cases() -> Vec<CaseId> {
    let dir = regression_dir();
    ["many-small-syncs.wl", "rename-over-a-symlink.wl", "seed-btrfs-logged-trans-rename.wl", "cleaning-pressure.wl"]
        .iter()
        .map(|f| CaseId::File(dir.join(f)))
        .chain([CaseId::Random(1), CaseId::Random(2)])
        .collect()
}

fn run(ex: &Explorer, m: DeviceModel) -> DeviceSummary {
    let sum = sweep(ex, m, &cases(), 24, None, &mut |v| eprintln!("VIOLATION {} in {}: {}", v.kind, v.case, v.detail));
    eprintln!("{}", sum.line(m));
    sum
}

/// Damage the filesystem reported (mount refused naming the block, fsck, read EIO).
fn detected(s: &DeviceSummary) -> u64 {
    [Outcome::IntactReported, Outcome::MountRefused, Outcome::FsckReported, Outcome::ReadEio]
        .iter()
        .map(|&o| s.count(o))
        .sum()
}

#[test]
fn every_lying_model_keeps_its_promise() {
    let ex = explorer(GuestModule::default_guest().expect("guest"), 2);
    for m in DeviceModel::LYING {
        let s = run(&ex, m);
        assert!(s.states >= 20, "{m}: only {} fault states", s.states);
        // On every device: never wrong bytes, never a trap, and a refused mount names its block.
        assert!(s.violations.is_empty(), "{}", s.line(m));
        assert_eq!(s.count(Outcome::MountRefusedUnnamed), 0, "{}", s.line(m));
        // Each model does damage that rollfs sees (its checksums), and some it survives;
        // on those where it loses nothing (L4), nothing acknowledged is lost.
        if m.loses_nothing() {
            assert_eq!(s.lost(), 0, "{}", s.line(m));
        } else {
            assert!(detected(&s) > 0, "{}", s.line(m));
        }
        assert!(s.count(Outcome::Intact) > 0, "{}", s.line(m));
        match m {
            // A device that loses acknowledged flushes loses acknowledged fsyncs and syncs:
            // older states nothing on the device can tell from the right one.
            DeviceModel::FlushIgnored => assert!(s.count(Outcome::Older) > 0, "{}", s.line(m)),
            // A read error is never silent: no pack or node is given up for an EIO.
            DeviceModel::ReadErrorOnce => assert_eq!(s.count(Outcome::Older), 0, "{}", s.line(m)),
            _ => {}
        }
    }
}

#[test]
fn a_core_that_skips_data_checksums_shows_wrong_bytes() {
    let module = Arc::new(GuestModule::mutant("mutant-device-read-no-crc").expect("mutant guest"));
    let m = DeviceModel::BitflipPersistent;
    let s = run(&explorer(module, 2), m);
    assert!(s.count(Outcome::WrongBytes) > 0, "mutant not caught: {}", s.line(m));
    assert!(s.violations.iter().any(|v| v.kind == "device-bitflip-persistent-wrong-bytes"));
    // The same sweep on the real core: the flips it returned are EIO there.
    let s = run(&explorer(GuestModule::default_guest().expect("guest"), 2), m);
    assert_eq!(s.count(Outcome::WrongBytes), 0, "{}", s.line(m));
}

/// The checkpoint protocol before the `fua-ignored` model (the header made durable by FUA
/// alone): on a device that acknowledges FUA from its cache, a `sync` that returned is lost
/// and the writes after it damage the older checkpoint. The real core flushes after the
/// header and loses nothing on the same states.
#[test]
fn a_checkpoint_header_left_to_fua_is_lost_when_the_device_ignores_fua() {
    let module = Arc::new(GuestModule::mutant("mutant-device-cp-header-fua").expect("mutant guest"));
    let m = DeviceModel::FuaIgnored;
    let bad = run(&explorer(module, 2), m);
    assert!(bad.lost() > 0, "mutant not caught: {}", bad.line(m));
    assert!(bad.violations.iter().any(|v| v.kind == "device-fua-ignored-lost"), "{}", bad.line(m));
    let good = run(&explorer(GuestModule::default_guest().expect("guest"), 2), m);
    assert_eq!(good.states, bad.states, "the same crash points");
    assert_eq!((good.lost(), good.violations.len()), (0, 0), "{}", good.line(m));
}

#[test]
fn same_seed_same_device_outcomes() {
    let one = explorer(GuestModule::default_guest().expect("guest"), 1);
    let two = explorer(GuestModule::default_guest().expect("guest"), 2);
    for m in [DeviceModel::FlushIgnored, DeviceModel::BitflipTransient] {
        let (a, b) = (run(&one, m), run(&two, m));
        assert_eq!((a.states, a.digest, &a.outcomes), (b.states, b.digest, &b.outcomes), "{m}");
    }
}
