//! The dentry-block cache (core/src/dcache.rs) under churn: big directories whose blocks
//! are rewritten, moved by cleaning and discarded on a small, nearly full device. After
//! every step the cache must equal the device at every kept address, and lookups must
//! agree with a model — with data checksums on and off (off, a stale block's checksum
//! cannot tell it apart: only forgetting written and discarded addresses keeps it right).

mod common;
use common::limits::t;
use common::probe::Rng;
use rollfs_core::*;
use std::collections::BTreeMap;

const C: Credentials = Credentials { uid: 0, gid: 0 };

fn churn(data_checksums: bool, seed: u64) {
    let opts = MkfsOptions { segment_blocks: 16, data_checksums, ..Default::default() };
    let dev = Filesystem::format(MemDevice::new(3072), &opts).unwrap();
    let mount = MountOptions { dirty_bytes_max: 256 << 10, ..Default::default() };
    let mut fs = Filesystem::mount(dev, &mount, t(0)).unwrap();
    let dirs = [fs.mkdir(1, b"a", 0o755, C, t(1)).unwrap().ino, fs.mkdir(1, b"b", 0o755, C, t(1)).unwrap().ino];
    let fill = fs.create(1, b"fill", 0o644, C, t(1)).unwrap().ino;
    // (directory slot, name) -> inode
    let mut model: BTreeMap<(usize, String), Ino> = BTreeMap::new();
    let mut rng = Rng(seed);
    let (mut checked, mut hits_seen) = (0usize, false);
    let steps = 4000u64;
    for step in 0..steps {
        let now = t(2 + step as i64 / 50);
        let d = rng.below(2) as usize;
        let name = format!("n{}", rng.below(1500));
        match rng.below(10) {
            0..=3 => match fs.create(dirs[d], name.as_bytes(), 0o644, C, now) {
                Ok(a) => assert!(model.insert((d, name), a.ino).is_none(), "create over an existing name"),
                Err(Error::Exists) => assert!(model.contains_key(&(d, name))),
                Err(Error::NoSpace) => {}
                Err(e) => panic!("create: {e}"),
            },
            4..=5 => match fs.unlink(dirs[d], name.as_bytes(), now) {
                Ok(()) => assert!(model.remove(&(d, name)).is_some()),
                Err(Error::NotFound) => assert!(!model.contains_key(&(d, name))),
                Err(e) => panic!("unlink: {e}"),
            },
            6 => {
                let to = format!("r{}", rng.below(1500));
                match fs.rename(dirs[d], name.as_bytes(), dirs[1 - d], to.as_bytes(), RenameFlags::empty(), now) {
                    Ok(()) => {
                        let ino = model.remove(&(d, name)).expect("renamed a name the model has");
                        model.insert((1 - d, to), ino);
                    }
                    Err(Error::NotFound) => assert!(!model.contains_key(&(d, name))),
                    Err(Error::NoSpace) => {}
                    Err(e) => panic!("rename: {e}"),
                }
            }
            7..=8 => {
                // Overwrites keep the device full: cleaning moves directory blocks and
                // reuses their addresses.
                let off = rng.below(1200) * 4096;
                match fs.write(fill, off, &[step as u8 | 1; 4096], now) {
                    Ok(_) | Err(Error::NoSpace) => {}
                    Err(e) => panic!("write: {e}"),
                }
            }
            _ => fs.sync(now).unwrap(),
        }
        if step % 20 == 0 {
            checked += fs.verify_dentry_cache().unwrap_or_else(|e| panic!("step {step}: {e}"));
            for _ in 0..10 {
                let d = rng.below(2) as usize;
                let name = format!("n{}", rng.below(1500));
                let got = fs.lookup(dirs[d], name.as_bytes());
                match (got, model.get(&(d, name.clone()))) {
                    (Ok(a), Some(&ino)) => assert_eq!(a.ino, ino, "step {step}: {name}"),
                    (Err(Error::NotFound), None) => {}
                    (got, want) => panic!("step {step}: lookup {name}: {got:?}, model {want:?}"),
                }
            }
            // A repeated lookup reads nothing from the device once its blocks are kept.
            if let Some(((d, name), _)) = model.iter().next() {
                let (d, name) = (*d, name.clone());
                fs.lookup(dirs[d], name.as_bytes()).unwrap();
                let before = fs.stats().device_reads;
                fs.lookup(dirs[d], name.as_bytes()).unwrap();
                hits_seen |= fs.stats().device_reads == before;
            }
        }
    }
    let st = fs.stats();
    assert!(st.gc_segments > 0, "no cleaning: the test did not move directory blocks ({st:?})");
    assert!(checked > 1000, "only {checked} kept blocks checked");
    assert!(hits_seen, "no lookup was answered from the cache");
    let mut dev = fs.unmount(t(100_000)).unwrap();
    let r = fsck::check(&mut dev).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
}

#[test]
fn big_directories_under_cleaning_keep_the_cache_equal_to_the_device() {
    churn(true, 1);
}

#[test]
fn without_data_checksums_written_addresses_are_forgotten() {
    churn(false, 2);
}

/// The check itself: a kept block changed on the device behind the filesystem's back is
/// reported, at its address, for exactly the blocks the cache holds.
#[test]
fn verify_reports_a_kept_block_changed_behind_the_cache() {
    let dev =
        Filesystem::format(MemDevice::new(2048), &MkfsOptions { segment_blocks: 16, ..Default::default() }).unwrap();
    let mut fs = Filesystem::mount(dev, &MountOptions::default(), t(0)).unwrap();
    let d = fs.mkdir(1, b"d", 0o755, C, t(1)).unwrap().ino;
    for i in 0..400 {
        fs.create(d, format!("f{i}").as_bytes(), 0o644, C, t(1)).unwrap();
    }
    fs.sync(t(2)).unwrap();
    for i in 0..400 {
        fs.lookup(d, format!("f{i}").as_bytes()).unwrap();
    }
    let kept = fs.dentry_cache_blocks();
    assert!(kept > 1, "the lookups kept {kept} blocks");
    assert_eq!(fs.verify_dentry_cache().unwrap(), kept);
    let mut reported = 0;
    for addr in 0..2048u64 {
        fs.device_mut().block_mut(addr)[100] ^= 0x40;
        match fs.verify_dentry_cache() {
            Ok(n) => assert_eq!(n, kept),
            Err(Error::Corrupt { block, .. }) => {
                assert_eq!(block, addr);
                reported += 1;
            }
            Err(e) => panic!("{e}"),
        }
        fs.device_mut().block_mut(addr)[100] ^= 0x40;
    }
    assert_eq!(reported, kept);
}
