//! The memos of a run: answers kept so that a crash image, a recovered device or a dump
//! like an earlier one of the same run is answered without a guest, an fsck or a parse
//! (each a function of the blocks it reads; `--no-memo` turns them off).
//!
//! This module owns the guest sessions of crash images ([`GuestSession`], [`GuestMemo`]),
//! the fscks of recovered devices ([`FsckSession`], [`FsckMemo`]), the trees of planned
//! dumps ([`ParsedDump`], [`KeptDump`], [`DumpMemo`]), the verdicts of trees at a crash
//! point ([`VerdictMemo`]), the bounded most-recently-used list they share ([`Memo`]) and
//! how an entry is found to fit ([`MissHint`], [`blocks_equal`]). The `Explorer` methods
//! that consult them are `crate::run`'s.

use crate::device::{BlockRef, Image, Recording, SimDevice};
use crate::guest::{CoreStats, GuestError};
use crate::model::Tree;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The guest's answers for one crash image and the device requests it made
/// ([`Explorer::guest_session`](crate::explore::Explorer::guest_session)). `None` for the
/// calls it did not get to.
pub struct GuestSession {
    pub recording: Recording,
    /// The injected failing read of the recovery mount, if any (part of the key).
    pub eio_read: Option<u64>,
    /// The device's size (the guest asks for it; every image of a run has the run's).
    pub block_count: u64,
    /// Requests the mount made (the injected error applies to these only).
    pub mount_requests: usize,
    /// Read calls among them (a failed one too): an injected failing read `nth` fires
    /// only when `nth < mount_reads`.
    pub mount_reads: u64,
    pub mount: Result<(), GuestError>,
    pub stats_after_mount: Option<Result<CoreStats, GuestError>>,
    pub fsck: Option<Result<Vec<String>, GuestError>>,
    pub dump: Option<Result<Vec<u8>, GuestError>>,
    pub stats_after_dump: Option<Result<CoreStats, GuestError>>,
    /// The tree the dump gave on the device of the last image checked with this session
    /// ([`Explorer::dump_tree`](crate::explore::Explorer::dump_tree)).
    pub parsed: Mutex<Option<Arc<ParsedDump>>>,
    /// Where [`GuestSession::fits`] last found a differing block ([`MissHint`]).
    pub miss: MissHint,
}

/// The index of the read at which a memo entry last failed to fit, checked first next
/// time. A live guest's image misses every entry of its run's memo, and the reads that
/// differ are mostly the same few late ones (the newest nodes of the chain its recovery
/// walks): in read order, each miss compared most of an entry's reads (hundreds) before
/// reaching them. Only the order of the comparisons depends on it, never the answer.
#[derive(Default)]
pub struct MissHint(AtomicUsize);

impl MissHint {
    /// Whether `same(i)` holds for every read `i` below `n`, trying the hinted one first
    /// and remembering the first that does not hold.
    fn all(&self, n: usize, same: impl Fn(usize) -> bool) -> bool {
        let hint = self.0.load(Ordering::Relaxed);
        if hint < n && !same(hint) {
            return false;
        }
        match (0..n).find(|&i| i != hint && !same(i)) {
            None => true,
            Some(i) => {
                self.0.store(i, Ordering::Relaxed);
                false
            }
        }
    }
}

/// The tree a planned dump gave and the device blocks it named (each as the device held
/// it). The tree is a function of the dump's bytes and those blocks: another image
/// answered from the same session whose device holds the same blocks there gets the same
/// tree without hashing and checking them again.
pub struct ParsedDump {
    pub tree: Tree,
    pub blocks: Vec<(u64, Option<BlockRef>)>,
}

impl GuestSession {
    /// True when a guest on `image` would read exactly what this one read: every block it
    /// read from its start image is the same in `image` (absent blocks read as zeros), and
    /// the injected failing read is the same — or fires in neither: a mount that makes
    /// fewer reads than `nth` never sees it, so it runs as with none (about a third of
    /// the live guests of `--eio` explorations were such states before this).
    pub(crate) fn fits(&self, image: &Image, eio_read: Option<u64>) -> bool {
        let fires = |e: Option<u64>| e.is_some_and(|nth| nth < self.mount_reads);
        if (fires(self.eio_read) || fires(eio_read)) && self.eio_read != eio_read {
            return false;
        }
        if self.block_count != image.block_count() {
            return false;
        }
        let inputs = &self.recording.inputs;
        self.miss.all(inputs.len(), |i| blocks_equal(image.get(inputs[i].0), inputs[i].1.as_ref()))
    }
}

/// A run's answers, most recently used first, bounded to the newest [`Memo::SESSIONS_MAX`]
/// (a hit moves to the front): the guest sessions of its crash images ([`GuestMemo`]) and
/// the fscks of its recovered devices ([`FsckMemo`]). Shared by the checking threads.
pub struct Memo<T> {
    sessions: Mutex<std::collections::VecDeque<Arc<T>>>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo { sessions: Mutex::default() }
    }
}

impl<T> Memo<T> {
    pub const SESSIONS_MAX: usize = 48;

    /// The most recent answer that `fits`.
    pub(crate) fn find(&self, fits: impl Fn(&T) -> bool) -> Option<Arc<T>> {
        let snapshot: Vec<Arc<T>> = self.sessions.lock().unwrap().iter().cloned().collect();
        let hit = snapshot.into_iter().find(|s| fits(s))?;
        let mut q = self.sessions.lock().unwrap();
        if let Some(i) = q.iter().position(|s| Arc::ptr_eq(s, &hit)) {
            let s = q.remove(i).expect("position is in range");
            q.push_front(s);
        }
        Some(hit)
    }

    pub(crate) fn insert(&self, s: Arc<T>) {
        let mut q = self.sessions.lock().unwrap();
        q.push_front(s);
        q.truncate(Self::SESSIONS_MAX);
    }
}

/// The guest sessions of one run's crash images, for images that hold the same blocks where
/// an earlier one was read (`--no-memo` turns it off).
pub type GuestMemo = Memo<GuestSession>;

/// An fsck answer of one run, with what it read ([`FsckMemo`]).
pub struct FsckSession {
    /// The fsck's device requests (reads only), to make again on a device it answers for.
    pub requests: Vec<crate::device::Request>,
    /// Each block the fsck read, as the device held it then (`None`: never written).
    pub reads: Vec<(u64, Option<BlockRef>)>,
    pub problems: Vec<String>,
    /// Where [`FsckSession::fits`] last found a differing block.
    pub miss: MissHint,
}

/// Two blocks of a device are the same bytes (an absent block reads as zeros).
pub(crate) fn blocks_equal(a: Option<&BlockRef>, b: Option<&BlockRef>) -> bool {
    let zero = |b: &BlockRef| b.iter().all(|&x| x == 0);
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a[..] == b[..],
        (None, None) => true,
        (Some(x), None) | (None, Some(x)) => zero(x),
    }
}

/// The fsck answers of one run's recovered devices. fsck is a function of the blocks it
/// reads: it mounts the device read-only on its own (`rollfs_core::fsck::check`), never
/// the recovering mount's memory, and writes nothing. So a recovered device that holds the
/// same blocks wherever an earlier fsck of the run read gets that fsck's problems, with its
/// reads made again on the device (the trace, recording and device are those of a live
/// fsck). Crash images whose recoveries read different blocks (a chain cut at a different
/// node, a torn variant) often recover to the same metadata: most live guests of a full
/// device's run skip their fsck this way. Only clean exits are kept (an fsck that traps
/// leaves a dead instance). `--no-memo` turns it off.
pub type FsckMemo = Memo<FsckSession>;

/// A tree's verdict at a crash point
/// ([`Explorer::tree_verdict`](crate::explore::Explorer::tree_verdict)): whether it is one
/// of the allowed states, and the per-file rules' verdict when they apply.
pub type TreeVerdict = (bool, Option<Option<(String, String)>>);

/// Trees checked at each crash point of a run with their verdicts, by point and tree hash.
pub type VerdictMemo = Mutex<std::collections::HashMap<(usize, u64), Vec<(Tree, TreeVerdict)>>>;

/// A planned dump a live guest of the run made and its tree ([`DumpMemo`]).
pub struct KeptDump {
    /// [`dump_key`] of the dump's bytes.
    pub(crate) key: u64,
    /// The session whose dump this is (its bytes).
    pub(crate) session: Arc<GuestSession>,
    pub(crate) parsed: Arc<ParsedDump>,
}

/// The trees of one run's planned dumps, for live guests whose dumps are the same bytes.
/// A tree is a function of the dump's bytes and the device blocks it names
/// ([`ParsedDump`]), and the crash images of a full device, which recover through
/// different reads (their guests are live), mostly recover to the same tree: in
/// `--workload full` nine in ten live dumps repeat an earlier one byte for byte. Such a dump
/// on a device holding the same named blocks gets the earlier tree, not a parse that
/// hashes and checks its blocks again. `--no-memo` turns it off; `verify_memo` checks each
/// answer against a parse.
pub type DumpMemo = Memo<KeptDump>;

/// The key of a dump's bytes in the [`DumpMemo`] (equal bytes, equal keys; equal keys are
/// then compared byte for byte).
pub(crate) fn dump_key(d: &[u8]) -> u64 {
    rollfs_crash::rng::block_hash(d) ^ (d.len() as u64).rotate_left(32)
}

impl FsckSession {
    /// The answer of the fsck that made `requests` (its last requests) on `dev`: `None` when
    /// it did anything but read (not the check the memo knows).
    pub(crate) fn of(dev: &SimDevice, requests: &[crate::device::Request], problems: &[String]) -> Option<FsckSession> {
        use crate::device::Request;
        let mut seen = std::collections::HashSet::new();
        let mut reads = Vec::new();
        for r in requests {
            let Request::Read(addr) = r else { return None };
            // fsck writes nothing: what the device holds now is what each read returned.
            if seen.insert(*addr) {
                reads.push((*addr, dev.current(*addr).cloned()));
            }
        }
        Some(FsckSession { requests: requests.to_vec(), reads, problems: problems.to_vec(), miss: MissHint::default() })
    }

    /// True when an fsck of `dev` would read exactly what this one read.
    pub(crate) fn fits(&self, dev: &SimDevice) -> bool {
        let reads = &self.reads;
        self.miss.all(reads.len(), |i| blocks_equal(dev.current(reads[i].0), reads[i].1.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miss_hint_changes_the_order_of_comparisons_not_the_answer() {
        let hint = MissHint::default();
        let tried = std::cell::RefCell::new(Vec::new());
        let same = |differs: &'static [usize]| {
            let tried = &tried;
            move |i: usize| {
                tried.borrow_mut().push(i);
                !differs.contains(&i)
            }
        };
        // The first miss is found in order and remembered.
        assert!(!hint.all(6, same(&[4, 5])));
        assert_eq!(*tried.borrow(), [0, 1, 2, 3, 4]);
        // The next check starts at the remembered read and stops there.
        tried.borrow_mut().clear();
        assert!(!hint.all(6, same(&[4])));
        assert_eq!(*tried.borrow(), [4]);
        // Where the remembered read matches, the rest are still checked (a hit checks all)
        // and a new miss is remembered.
        tried.borrow_mut().clear();
        assert!(!hint.all(6, same(&[1])));
        assert_eq!(*tried.borrow(), [4, 0, 1]);
        tried.borrow_mut().clear();
        assert!(hint.all(6, same(&[])));
        assert_eq!(*tried.borrow(), [1, 0, 2, 3, 4, 5], "a fit compares every read once");
        // A hint beyond a shorter entry is ignored.
        tried.borrow_mut().clear();
        assert!(hint.all(1, same(&[])));
        assert!(!hint.all(1, same(&[0])));
        assert!(!MissHint::default().all(3, |i| i != 2));
        assert!(MissHint::default().all(0, |_| false), "no reads: fits");
    }
}
