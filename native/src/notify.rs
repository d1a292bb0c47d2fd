//! Kernel notifications, sent from one thread of their own and never from a request thread.
//!
//! A notification is a write to `/dev/fuse` that the kernel carries out in the writing
//! thread, and it may wait there for things only the daemon's request threads bring about.
//! `FUSE_NOTIFY_INVAL_INODE` with a page range locks every cached page of the file in turn
//! (`invalidate_inode_pages2_range`); a page being read stays locked until the daemon
//! answers that READ. Sent from a request thread, the notification makes that thread wait
//! for a READ only a free request thread can answer; with enough of them (a user looping
//! an atomic write's START/write/ABORT while another reads the file, issue 35) every
//! request thread waits, nobody answers the READs, and the mount hangs for every user —
//! unmount too, and SIGKILL cannot end the daemon. So the rule, for every notification:
//! **request threads queue, the `rollfs-notify` thread sends** ([`Notifications`]), and no
//! notification is sent while a lock of the driver or the core is held. The notify thread
//! takes no lock while it sends, so when it waits in the kernel, request threads go on
//! answering the READs it waits for.
//!
//! What is queued is an inode whose cached pages and attributes the kernel must drop (an
//! atomic write's abort: the kernel's page cache still holds the discarded writes), with
//! optionally something to run once that is done: the ABORT ioctl's reply, so that when
//! `F2FS_IOC_ABORT_VOLATILE_WRITE` returns, no read through the page cache returns the
//! aborted data (the caller waits in its ioctl; no request thread does). A RELEASE's reply
//! is never held back this way: the kernel sends RELEASE as a background request, and
//! background requests share a limit (`max_background`) with readahead READs, so held-back
//! RELEASEs could keep the READs the invalidation waits for from being sent at all. After
//! a release that aborted a session the kernel may show the aborted pages through handles
//! still open until the notify thread has run (microseconds; under page-lock contention as
//! long as the reads holding the locks take); a new open drops them in any case (rollfs
//! does not ask for `FOPEN_KEEP_CACHE`). That window is one of visibility, not durability:
//! the aborted data never reaches the device.
//!
//! **Bounds.** The queue holds at most one entry per inode: a request for an inode already
//! queued joins its entry. So however many requests come, it never holds more entries
//! than the filesystem has inodes (in practice: the files whose atomic write ended since
//! the notify thread's last pass). The callbacks waiting on entries (each a caller blocked
//! in its ABORT ioctl) are at most [`MAX_WAITING`]; past that a caller's callback runs at
//! once, as for a release. Unit tests below reach both bounds.
//!
//! **Unmount.** [`Notifications::stop`] (from `destroy`, after the connection is gone)
//! tells the thread to stop, runs every waiting callback without sending (nothing is left
//! to invalidate), and waits for the thread a bounded time: a notification still blocked
//! in the kernel is not waited for (the connection's abort at unmount ends the READs it
//! waits for, and process exit ends the thread).

use crate::fuse::DriverStats;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Callbacks waiting for their inode's invalidation (deferred ABORT replies), at most.
pub const MAX_WAITING: usize = 1024;

/// What the notify thread sends notifications through: the session's `fuser::Notifier`
/// (a test double in unit tests).
pub trait Sink: Send + Sync + 'static {
    /// Drops the kernel's cached attributes of `ino`, and its cached pages in the byte
    /// range `range` (start, end), or all of them (`None`).
    fn inval_inode(&self, ino: u32, range: Option<(u64, u64)>) -> std::io::Result<()>;

    /// Drops the kernel's cached attributes of `ino` only (no page).
    fn inval_attrs(&self, ino: u32) -> std::io::Result<()>;
}

impl Sink for fuser::Notifier {
    fn inval_inode(&self, ino: u32, range: Option<(u64, u64)>) -> std::io::Result<()> {
        // Offset 0 and length 0: every page (the kernel's convention).
        let (off, len) = match range {
            Some((start, end)) if end > start => {
                (start.min(i64::MAX as u64) as i64, (end - start).min(i64::MAX as u64) as i64)
            }
            _ => (0, 0),
        };
        fuser::Notifier::inval_inode(self, fuser::INodeNo(ino as u64), off, len)
    }

    fn inval_attrs(&self, ino: u32) -> std::io::Result<()> {
        // A negative offset: the kernel drops the attributes and touches no page.
        fuser::Notifier::inval_inode(self, fuser::INodeNo(ino as u64), -1, 0)
    }
}

/// Run once an inode's invalidation was sent (or at once: see [`Notifications::invalidate`]).
pub type Then = Box<dyn FnOnce() + Send>;

/// The queue of notifications and the thread that sends them. See the module comment.
pub struct Notifications {
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Shared {
    state: Mutex<State>,
    /// The notify thread waits here for work or the stop.
    wake: Condvar,
    /// [`Notifications::stop`] waits here for the thread to finish.
    exited: Condvar,
    sink: OnceLock<Arc<dyn Sink>>,
    stats: Arc<DriverStats>,
}

/// A queued inode: the byte range of its pages to drop (`None`: every page) and the
/// callbacks waiting for that.
type Entry = (Option<(u64, u64)>, Vec<Then>);

#[derive(Default)]
struct State {
    /// Inodes in the order they were first queued, each once.
    order: VecDeque<u32>,
    /// Each queued inode's byte range (`None`: every page) and callbacks.
    entries: HashMap<u32, Entry>,
    /// Callbacks in `entries`, all inodes together.
    waiting: usize,
    stop: bool,
    exited: bool,
}

impl Notifications {
    pub fn new(stats: Arc<DriverStats>) -> Notifications {
        Notifications {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
                exited: Condvar::new(),
                sink: OnceLock::new(),
                stats,
            }),
            thread: Mutex::new(None),
        }
    }

    /// Starts the notify thread, sending through `sink` (once the session exists). Until
    /// then, and if it is never started, [`Notifications::invalidate`] runs its callback
    /// at once and sends nothing: there is no kernel cache to drop without a session.
    pub fn start(&self, sink: Arc<dyn Sink>) -> std::io::Result<()> {
        if self.shared.sink.set(sink.clone()).is_err() {
            return Ok(()); // started already
        }
        let shared = self.shared.clone();
        let handle = std::thread::Builder::new().name("rollfs-notify".into()).spawn(move || shared.run(&*sink))?;
        *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle);
        Ok(())
    }

    /// Queues the invalidation of `ino`'s cached pages and attributes, and `then` to run
    /// after it was sent. Never waits for the kernel: callable from a request thread.
    /// `then` runs at once (on this thread) when the notify thread is not running or
    /// [`MAX_WAITING`] callbacks wait already.
    pub fn invalidate(&self, ino: u32, then: Option<Then>) {
        self.invalidate_range(ino, None, then)
    }

    /// [`Notifications::invalidate`] of the pages in byte range `range` only (`None`:
    /// every page; the attributes always). An entry queued for the inode already takes the
    /// union. Fewer pages to lock is less to wait for: the pages an aborted atomic write
    /// staged, not every page of the file that readers hold locked meanwhile.
    pub fn invalidate_range(&self, ino: u32, range: Option<(u64, u64)>, then: Option<Then>) {
        if crate::mutant::active("mutant-notify-on-request-thread") {
            // Broken on purpose (test-only): the old behaviour, the whole file's pages
            // invalidated from the request thread; tests/tests/daemon.rs must find the mount
            // wedged.
            if let Some(sink) = self.shared.sink.get() {
                self.shared.stats.invalidations.fetch_add(1, Ordering::Relaxed);
                let _ = (range, sink.inval_inode(ino, None));
            }
            if let Some(t) = then {
                t();
            }
            return;
        }
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = if st.stop || self.shared.sink.get().is_none() {
            then
        } else {
            let now = match then {
                Some(t) if st.waiting < MAX_WAITING => {
                    st.waiting += 1;
                    st.queue_entry(ino, range).push(t);
                    None
                }
                // Past the bound of waiting callbacks this one runs now; the invalidation
                // is queued all the same.
                other => {
                    if other.is_some() {
                        self.shared.stats.notify_waits_refused.fetch_add(1, Ordering::Relaxed);
                    }
                    st.queue_entry(ino, range);
                    other
                }
            };
            self.shared.wake.notify_one();
            now
        };
        drop(st);
        if let Some(t) = now {
            t();
        }
    }

    /// Counts a caller that did not wait for its invalidation because it could not be held
    /// (`notify_waits_refused`, as when [`MAX_WAITING`] callbacks wait already).
    pub fn count_refused_wait(&self) {
        self.shared.stats.notify_waits_refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Drops the kernel's cached attributes of `ino` now, from the calling (request)
    /// thread, before the request's reply: for a change the daemon makes behind the kernel
    /// that a reply does not carry (suid/sgid cleared by a write, FUSE_HANDLE_KILLPRIV_V2),
    /// which must not stay visible — or executable — until the attribute cache expires.
    /// Safe on a request thread, unlike a page invalidation: with no page range the kernel
    /// only marks the attributes stale (`fuse_reverse_inval_inode` with a negative offset
    /// takes no page lock), so it waits for no request. Nor can the inode lookup inside it
    /// wait for an eviction: it is only sent while serving a WRITE or FALLOCATE through an
    /// open file, or a truncating OPEN of a looked-up path, each of which pins the inode
    /// (the kernel's writeback WRITEs, which could come from
    /// an inode being evicted, never send it). A failure (the inode is not cached, the
    /// connection is going) leaves nothing stale to drop.
    pub fn invalidate_attrs_now(&self, ino: u32) {
        if let Some(sink) = self.shared.sink.get() {
            self.shared.stats.invalidations.fetch_add(1, Ordering::Relaxed);
            let _ = sink.inval_attrs(ino);
        }
    }

    /// Stops the notify thread: it sends nothing more, runs every waiting callback, and
    /// ends. Waits up to `timeout` for that; true if it ended (or never started). A thread
    /// still blocked in the kernel after `timeout` is left behind, not waited for.
    pub fn stop(&self, timeout: Duration) -> bool {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        st.stop = true;
        self.shared.wake.notify_all();
        let Some(handle) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            // Never started: nothing can be queued (callbacks ran at once).
            return true;
        };
        let deadline = Instant::now() + timeout;
        while !st.exited {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false; // the handle is dropped: the thread is detached
            }
            st = self.shared.exited.wait_timeout(st, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        drop(st);
        let _ = handle.join();
        true
    }

    /// Inodes queued and callbacks waiting (for tests).
    pub fn queued(&self) -> (usize, usize) {
        let st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        (st.order.len(), st.waiting)
    }
}

impl State {
    /// `ino`'s callbacks, its entry queued at the end if it was not queued, its range
    /// widened to cover `range` (`None`: every page).
    fn queue_entry(&mut self, ino: u32, range: Option<(u64, u64)>) -> &mut Vec<Then> {
        match self.entries.get_mut(&ino) {
            Some(e) => {
                e.0 = match (e.0, range) {
                    (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                    _ => None,
                };
            }
            None => {
                self.order.push_back(ino);
                self.entries.insert(ino, (range, Vec::new()));
            }
        }
        &mut self.entries.get_mut(&ino).expect("queued above").1
    }
}

impl Shared {
    /// The notify thread: sends each queued inode's invalidation, then runs its callbacks.
    fn run(&self, sink: &dyn Sink) {
        loop {
            let (ino, (range, thens)) = {
                let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if st.stop {
                        return self.finish(st);
                    }
                    if let Some(ino) = st.order.pop_front() {
                        let entry = st.entries.remove(&ino).unwrap_or_default();
                        st.waiting -= entry.1.len();
                        break (ino, entry);
                    }
                    st = self.wake.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            // No lock is held here: the kernel may wait for READs of `ino`, which the request
            // threads answer meanwhile. Errors are not for anyone: ENOENT (the kernel had
            // dropped the inode) is success for fuser, and after the connection's abort
            // there is nothing left to invalidate.
            self.stats.invalidations.fetch_add(1, Ordering::Relaxed);
            let _ = sink.inval_inode(ino, range);
            for t in thens {
                t();
            }
        }
    }

    /// On stop: the waiting callbacks run without a notification, and the thread says it
    /// has ended.
    fn finish(&self, mut st: std::sync::MutexGuard<'_, State>) {
        let entries = std::mem::take(&mut st.entries);
        st.order.clear();
        st.waiting = 0;
        drop(st);
        for t in entries.into_values().flat_map(|(_, thens)| thens) {
            t();
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.exited = true;
        self.exited.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;

    /// A sink that records what it was sent and blocks while `gate` is closed (as the kernel
    /// does while a page of the file is locked by a READ).
    struct Gated {
        gate: Mutex<bool>,
        open: Condvar,
        sent: Mutex<Vec<u32>>,
        entered: AtomicUsize,
    }

    impl Gated {
        fn new(open: bool) -> Arc<Gated> {
            Arc::new(Gated {
                gate: Mutex::new(open),
                open: Condvar::new(),
                sent: Mutex::new(vec![]),
                entered: AtomicUsize::new(0),
            })
        }
        fn open(&self) {
            *self.gate.lock().unwrap() = true;
            self.open.notify_all();
        }
        fn wait_entered(&self, n: usize) {
            let t = Instant::now();
            while self.entered.load(Ordering::SeqCst) < n {
                assert!(t.elapsed() < Duration::from_secs(10), "the notify thread never sent");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    impl Sink for Gated {
        fn inval_inode(&self, ino: u32, _range: Option<(u64, u64)>) -> std::io::Result<()> {
            self.entered.fetch_add(1, Ordering::SeqCst);
            let mut g = self.gate.lock().unwrap();
            while !*g {
                g = self.open.wait(g).unwrap();
            }
            self.sent.lock().unwrap().push(ino);
            Ok(())
        }
        fn inval_attrs(&self, ino: u32) -> std::io::Result<()> {
            self.sent.lock().unwrap().push(ino);
            Ok(())
        }
    }

    fn started(sink: Arc<Gated>) -> Notifications {
        let n = Notifications::new(Arc::new(DriverStats::default()));
        n.start(sink).unwrap();
        n
    }

    #[test]
    fn callbacks_run_after_their_invalidation_and_the_caller_never_waits() {
        let sink = Gated::new(false);
        let n = started(sink.clone());
        let (tx, rx) = mpsc::channel();
        let t = Instant::now();
        n.invalidate(7, Some(Box::new(move || tx.send(()).unwrap())));
        assert!(t.elapsed() < Duration::from_secs(1), "invalidate waited for the kernel");
        sink.wait_entered(1);
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "the callback ran before the invalidation");
        sink.open();
        rx.recv_timeout(Duration::from_secs(10)).expect("the callback after the invalidation");
        assert_eq!(*sink.sent.lock().unwrap(), vec![7]);
        assert!(n.stop(Duration::from_secs(10)));
    }

    #[test]
    fn the_queue_holds_one_entry_per_inode_however_many_requests() {
        let sink = Gated::new(false);
        let n = started(sink.clone());
        // The thread takes inode 1 and blocks in the "kernel" on it.
        n.invalidate(1, None);
        sink.wait_entered(1);
        let ran = Arc::new(AtomicUsize::new(0));
        for round in 0..100_000u32 {
            let ran = ran.clone();
            let then: Option<Then> =
                (round % 100 == 0).then(|| Box::new(move || _ = ran.fetch_add(1, Ordering::SeqCst)) as Then);
            n.invalidate(2 + round % 3, then);
        }
        assert_eq!(n.queued(), (3, 1000), "100,000 requests on 3 inodes: 3 entries");
        sink.open();
        let t = Instant::now();
        while ran.load(Ordering::SeqCst) < 1000 {
            assert!(t.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(n.queued(), (0, 0));
        assert!(n.stop(Duration::from_secs(10)));
        let sent = sink.sent.lock().unwrap().clone();
        assert_eq!(sent, vec![1, 2, 3, 4], "each inode once, in order");
    }

    #[test]
    fn past_the_bound_of_waiting_callbacks_they_run_at_once() {
        let sink = Gated::new(false);
        let n = started(sink.clone());
        n.invalidate(1, None);
        sink.wait_entered(1);
        let ran = Arc::new(AtomicUsize::new(0));
        for i in 0..MAX_WAITING + 10 {
            let ran = ran.clone();
            n.invalidate(2 + i as u32, Some(Box::new(move || _ = ran.fetch_add(1, Ordering::SeqCst))));
        }
        assert_eq!(ran.load(Ordering::SeqCst), 10, "the ten past the bound ran at once");
        assert_eq!(n.queued(), (MAX_WAITING + 10, MAX_WAITING), "their invalidations are still queued");
        assert_eq!(n.shared.stats.notify_waits_refused.load(Ordering::Relaxed), 10);
        sink.open();
        assert!(n.stop(Duration::from_secs(10)));
        assert_eq!(ran.load(Ordering::SeqCst), MAX_WAITING + 10, "every callback ran");
    }

    #[test]
    fn stop_does_not_hang_on_a_notification_blocked_in_the_kernel() {
        let sink = Gated::new(false);
        let n = started(sink.clone());
        n.invalidate(1, None);
        sink.wait_entered(1);
        let (tx, rx) = mpsc::channel();
        n.invalidate(2, Some(Box::new(move || tx.send(()).unwrap())));
        let t = Instant::now();
        assert!(!n.stop(Duration::from_millis(200)), "the thread is blocked: stop says so");
        assert!(t.elapsed() < Duration::from_secs(5), "stop waited {:?}", t.elapsed());
        // Once the kernel lets go, the thread ends and the waiting reply is answered
        // without a notification.
        sink.open();
        rx.recv_timeout(Duration::from_secs(10)).expect("the waiting callback ran");
        assert_eq!(*sink.sent.lock().unwrap(), vec![1], "nothing sent after the stop");
        // After the stop, callbacks run at once.
        let (tx, rx) = mpsc::channel();
        n.invalidate(3, Some(Box::new(move || tx.send(()).unwrap())));
        rx.try_recv().expect("ran at once");
    }

    #[test]
    fn without_a_session_callbacks_run_at_once() {
        let n = Notifications::new(Arc::new(DriverStats::default()));
        let (tx, rx) = mpsc::channel();
        n.invalidate(5, Some(Box::new(move || tx.send(()).unwrap())));
        rx.try_recv().expect("ran at once");
        assert_eq!(n.queued(), (0, 0));
        assert!(n.stop(Duration::from_millis(10)));
    }
}
