//! FUSE over io_uring (Linux 6.14+; rollfs's addition to the release, see VENDORED.md).
//!
//! With `FUSE_OVER_IO_URING` negotiated at INIT, the kernel hands requests to *ring
//! entries* the daemon registers per queue (one queue per possible CPU; a request goes to
//! the queue of the CPU its caller runs on) and takes each reply together with the fetch of
//! the next request in one `COMMIT_AND_FETCH` command: no read(2)/writev(2) pair and no
//! context switch per request. FORGET, INTERRUPT and the daemon's notifications stay on
//! /dev/fuse, so the /dev/fuse threads keep running beside the ring threads.
//!
//! Protocol (fs/fuse/dev_uring.c, include/uapi/linux/fuse.h, ABI 7.42–7.45):
//! - an entry is a 288-byte header buffer (`in_out[128]`: the in header on a request, the
//!   out header on a reply; `op_in[128]`: the opcode's fixed argument; `ring_ent_in_out`:
//!   commit id and payload size) and a payload buffer of at least
//!   `max(8192, max_write, max_pages * page)` bytes, registered once as two iovecs;
//! - `in_header ‖ op_in[..len − 40 − payload_sz] ‖ payload[..payload_sz]` is exactly what
//!   read(2) on /dev/fuse would return, so the ordinary parser serves both transports;
//! - the kernel's copy into an entry runs as task work of the thread that submitted the
//!   entry's command, so every entry belongs to one ring thread for the whole session
//!   (a thread that exits leaves its entries' requests hanging), and that thread does all
//!   submitting and waiting (`SINGLE_ISSUER | DEFER_TASKRUN`).
//!
//! Threads: each ring thread owns one ring and exactly **one** entry of one queue, and
//! handles one request at a time, as a /dev/fuse thread does. One entry per thread matters:
//! the kernel gives a request to any idle entry of its queue, so a second entry of a busy
//! thread would make a request wait behind an unrelated slow one (an fsync). A reply the
//! filesystem sends later from another thread (rollfs's atomic abort replies from its
//! notify thread) is *deferred*: the other thread hands the finished reply back through a
//! queue and an eventfd, since only the entry's thread may submit, and meanwhile that
//! thread's entry is out of service. So that a deferral never takes capacity from its queue
//! (the reply may wait for READs that this queue must serve), the thread first starts a
//! *spare* ring thread for its queue, with an entry of its own; spares stay for the rest of
//! the session, at most [`MAX_SPARES_PER_QUEUE`] per queue (beyond that a deferral does
//! take its thread out of service until the reply comes). Payload buffers are anonymous
//! mappings, so an entry costs memory only for the pages a request actually fills.
//!
//! Teardown: on unmount every entry ends with one `-ENOTCONN` (an idle one at once, a busy
//! one at its commit); a thread returns when all of its entries have ended.

use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use io_uring::IoUring;
use io_uring::cqueue;
use io_uring::opcode;
use io_uring::squeue;
use io_uring::types;
use log::debug;
use log::error;
use log::warn;
use parking_lot::Mutex;

use crate::Filesystem;
use crate::ll::fuse_abi as abi;
use crate::request::RequestWithSender;
use crate::session::SessionEventLoop;

/// `fuse_uring_cmd` values (`sqe->cmd_op`).
const CMD_REGISTER: u32 = 1;
const CMD_COMMIT_AND_FETCH: u32 = 2;
/// `sizeof(struct fuse_uring_req_header)`: in_out[128], op_in[128], ring_ent_in_out (32).
const HEADER_SIZE: usize = 288;
const OFF_OP_IN: usize = 128;
const OFF_ENT_COMMIT_ID: usize = 256 + 8;
const OFF_ENT_PAYLOAD_SZ: usize = 256 + 16;
const IN_HEADER_SIZE: usize = size_of::<abi::fuse_in_header>();
const OUT_HEADER_SIZE: usize = size_of::<abi::fuse_out_header>();
/// The kernel's smallest payload buffer (`FUSE_MIN_READ_BUFFER`).
const MIN_PAYLOAD_SIZE: usize = 8192;
/// Byte offset of `len` in an SQE, which `UringCmd80` has no setter for (REGISTER needs
/// the iovec count there).
const SQE_OFF_LEN: usize = 24;
/// Replies a queue may have deferred at once, each covered by a spare ring thread (see the
/// module comment); beyond it [`reserve_deferred_reply`] says no.
pub(crate) const MAX_SPARES_PER_QUEUE: usize = 16;

thread_local! {
    /// While a ring thread dispatches a request: its queue's spares, the queue, and whether
    /// the filesystem reserved a deferred reply for it.
    static DISPATCH: std::cell::RefCell<Option<(Arc<Spares>, u16, bool)>> =
        const { std::cell::RefCell::new(None) };
}

/// Asks, from within a request's dispatch, whether its reply may be sent later from another
/// thread. Over /dev/fuse always yes: a pending reply holds nothing there. Over io_uring a
/// pending reply holds the request's ring entry, and a reply that waits for requests of
/// the same queue (a page invalidation waits for READs) could wait forever if every entry
/// of the queue were held so; so yes only while the queue has fewer than
/// [`MAX_SPARES_PER_QUEUE`] replies pending, each of which gets a spare ring thread. On no,
/// the filesystem replies before it returns (rollfs's ABORT then replies without waiting
/// for its page invalidation, as when its notify queue is full).
pub fn reserve_deferred_reply() -> bool {
    DISPATCH.with(|d| {
        let mut d = d.borrow_mut();
        let Some((spares, qid, reserved)) = d.as_mut() else {
            return true;
        };
        if *reserved {
            return true;
        }
        let mut counts = spares.counts.lock();
        let Some((_, deferred)) = counts.get_mut(*qid as usize) else {
            return false;
        };
        if *deferred >= MAX_SPARES_PER_QUEUE {
            return false;
        }
        *deferred += 1;
        *reserved = true;
        true
    })
}
/// Entries per ring: one (plus the eventfd read); sizes the ring.
const RING_ENTRIES: u32 = 4;
/// `user_data` of the eventfd read that wakes a thread for deferred replies.
const EVENTFD_USER_DATA: u64 = u64::MAX;

const _: () = assert!(size_of::<squeue::Entry128>() == 128);
const _: () = assert!(IN_HEADER_SIZE == 40 && OUT_HEADER_SIZE == 16);

/// Requests received over the ring (all threads); the /dev/fuse count is the rest.
static URING_REQUESTS: AtomicU64 = AtomicU64::new(0);

/// Replies that another thread sent after their request's dispatch had returned.
static URING_DEFERRED: AtomicU64 = AtomicU64::new(0);
/// Ring threads started, and entries registered (one per thread: see the module comment).
static URING_THREADS: AtomicU64 = AtomicU64::new(0);
static URING_ENTRIES: AtomicU64 = AtomicU64::new(0);

/// io_uring ring threads started and entries registered since the daemon started.
pub fn uring_threads_and_entries() -> (u64, u64) {
    (URING_THREADS.load(Ordering::Relaxed), URING_ENTRIES.load(Ordering::Relaxed))
}

/// Requests received over io_uring since the daemon started.
pub fn uring_requests_received() -> u64 {
    URING_REQUESTS.load(Ordering::Relaxed)
}

/// io_uring replies sent from another thread after their dispatch returned (handed back to
/// the entry's thread through its eventfd).
pub fn uring_replies_deferred() -> u64 {
    URING_DEFERRED.load(Ordering::Relaxed)
}

/// The kernel's queue count: one per possible CPU (`num_possible_cpus()`), read from
/// /sys/devices/system/cpu/possible (e.g. `0-1`, `0,2-5`).
pub(crate) fn possible_cpus() -> io::Result<usize> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible")?;
    let mut max = None;
    for part in s.trim().split(',') {
        let last = part.rsplit('-').next().unwrap_or(part);
        let n: usize = last
            .parse()
            .map_err(|_| io::Error::other(format!("cannot parse possible CPUs {s:?}")))?;
        max = Some(max.map_or(n, |m: usize| m.max(n)));
    }
    max.map(|m| m + 1)
        .ok_or_else(|| io::Error::other("no possible CPUs"))
}

/// An anonymous private mapping: untouched pages cost no memory, and its address never
/// moves (the kernel keeps the user address from REGISTER on).
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory; access is serialised by `Entry::bufs`.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh anonymous mapping, no aliasing.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: p.cast(),
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps what `new` mapped; the ring that used it is closed by then (an
        // entry outlives its thread's ring: see `RingThread::run`).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// States of an entry's request, for the hand-over of deferred replies.
const DISPATCHING: u8 = 0;
const REPLIED_IN_DISPATCH: u8 = 1;
const DEFERRED: u8 = 2;
const DEFERRED_REPLIED: u8 = 3;

/// One registered ring entry.
pub(crate) struct Entry {
    index: usize,
    qid: u16,
    header: Mapping,
    payload: Mapping,
    /// Held while Rust code reads a request from, or writes a reply into, the buffers.
    /// The kernel touches them only between a submitted command and its completion, when
    /// no one here does.
    bufs: Mutex<()>,
    /// The request being handled: its unique (the commit id) and hand-over state.
    commit_id: AtomicU64,
    state: AtomicU8,
    /// The owning thread's queue of deferred replies, and its eventfd.
    owner: Arc<Owner>,
}

struct Owner {
    pending: Mutex<Vec<usize>>,
    eventfd: RawFd,
}

impl Drop for Owner {
    fn drop(&mut self) {
        // SAFETY: our own eventfd, closed once.
        unsafe { libc::close(self.eventfd) };
    }
}

/// The reply side of a request received on a ring entry.
#[derive(Clone)]
pub(crate) struct UringSender(pub(crate) Arc<Entry>);

impl std::fmt::Debug for UringSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UringSender(q{} #{})", self.0.qid, self.0.index)
    }
}

impl UringSender {
    /// Writes a reply (`bufs[0]` is the out header, the rest its body) into the entry and
    /// hands it to the thread that submits the commit.
    pub(crate) fn send(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<()> {
        let e = &self.0;
        let body_len: usize = bufs.iter().skip(1).map(|b| b.len()).sum();
        {
            let _g = e.bufs.lock();
            let head = bufs.first().map_or(&[][..], |b| &b[..]);
            if head.len() != OUT_HEADER_SIZE {
                return Err(io::Error::other("reply without an out header"));
            }
            // SAFETY: the entry is ours (its request is being answered; the kernel does
            // not touch it until the commit), and the lengths are checked.
            unsafe {
                if body_len > e.payload.len {
                    // Cannot happen for the sizes the kernel asks for (the buffer is
                    // max_write/max_pages large); answer the caller with EIO rather than
                    // overrun the buffer.
                    let mut h = [0u8; OUT_HEADER_SIZE];
                    h.copy_from_slice(head);
                    h[4..8].copy_from_slice(&(-libc::EIO).to_ne_bytes());
                    std::ptr::copy_nonoverlapping(h.as_ptr(), e.header.ptr, OUT_HEADER_SIZE);
                    write_payload_sz(e, 0);
                } else {
                    std::ptr::copy_nonoverlapping(head.as_ptr(), e.header.ptr, OUT_HEADER_SIZE);
                    let mut off = 0;
                    for b in bufs.iter().skip(1) {
                        std::ptr::copy_nonoverlapping(b.as_ptr(), e.payload.ptr.add(off), b.len());
                        off += b.len();
                    }
                    write_payload_sz(e, off as u32);
                }
            }
        }
        let prev = e.state.swap(REPLIED_IN_DISPATCH, Ordering::AcqRel);
        if prev == DEFERRED {
            // The owner finished dispatching without this reply: it must submit the
            // commit, so wake it.
            e.state.store(DEFERRED_REPLIED, Ordering::Release);
            URING_DEFERRED.fetch_add(1, Ordering::Relaxed);
            e.owner.pending.lock().push(e.index);
            let one: u64 = 1;
            // SAFETY: writes 8 bytes to our eventfd.
            let rc = unsafe { libc::write(e.owner.eventfd, (&one as *const u64).cast(), 8) };
            if rc != 8 {
                warn!("io_uring: cannot wake a ring thread: {}", io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

unsafe fn write_payload_sz(e: &Entry, n: u32) {
    // SAFETY: within the 288-byte header mapping.
    unsafe {
        e.header
            .ptr
            .add(OFF_ENT_PAYLOAD_SZ)
            .cast::<u32>()
            .write_unaligned(n)
    };
}

fn cmd_area(commit_id: u64, qid: u16) -> [u8; 80] {
    let mut c = [0u8; 80];
    c[8..16].copy_from_slice(&commit_id.to_ne_bytes());
    c[16..18].copy_from_slice(&qid.to_ne_bytes());
    c
}

/// The size of every entry's payload buffer for the negotiated `max_write` and
/// `max_pages` (the kernel refuses a REGISTER with a smaller one).
pub(crate) fn payload_size(max_write: u32, max_pages: u16) -> usize {
    let page = page_size::get();
    MIN_PAYLOAD_SIZE
        .max(max_write as usize)
        .max(max_pages as usize * page)
        .next_multiple_of(page)
}

/// The spare ring threads of a session: how many each queue has started, and their join
/// handles (the session joins them before it destroys the filesystem).
pub(crate) struct Spares {
    /// Per queue: (spares started, entries out of service waiting for a deferred reply).
    counts: Mutex<Vec<(usize, usize)>>,
    pub(crate) handles: Mutex<Vec<std::thread::JoinHandle<io::Result<()>>>>,
}

impl Spares {
    pub(crate) fn new(queues: usize) -> Spares {
        Spares {
            counts: Mutex::new(vec![(0, 0); queues]),
            handles: Mutex::new(Vec::new()),
        }
    }
}

/// One ring thread: its ring, its entry, its queue.
pub(crate) struct RingThread<FS: Filesystem> {
    pub(crate) qid: u16,
    pub(crate) fuse_fd: RawFd,
    pub(crate) payload_size: usize,
    pub(crate) event_loop: SessionEventLoop<FS>,
    pub(crate) spares: Arc<Spares>,
}

impl<FS: Filesystem> RingThread<FS> {
    /// An entry of this queue went out of service for a deferred reply (`reserved`: counted
    /// by [`reserve_deferred_reply`] already): start a spare ring thread if the queue has
    /// fewer spares than entries out of service, up to [`MAX_SPARES_PER_QUEUE`].
    fn start_spare(&self, reserved: bool) {
        let n = {
            let mut counts = self.spares.counts.lock();
            let Some((started, deferred)) = counts.get_mut(self.qid as usize) else {
                return;
            };
            if !reserved {
                *deferred += 1;
            }
            if *deferred <= *started || *started >= MAX_SPARES_PER_QUEUE {
                return;
            }
            *started += 1;
            *started
        };
        let thread_name = format!("fuser-uring-{}.s{n}", self.qid);
        let spare = RingThread {
            qid: self.qid,
            fuse_fd: self.fuse_fd,
            payload_size: self.payload_size,
            event_loop: SessionEventLoop {
                thread_name: thread_name.clone(),
                filesystem: self.event_loop.filesystem.clone(),
                ch: self.event_loop.ch.clone(),
                allowed: self.event_loop.allowed,
                session_owner: self.event_loop.session_owner,
            },
            spares: self.spares.clone(),
        };
        match std::thread::Builder::new()
            .name(thread_name)
            .spawn(move || spare.run())
        {
            Ok(h) => self.spares.handles.lock().push(h),
            Err(e) => warn!("io_uring: cannot start a spare ring thread: {e}"),
        }
    }

    fn new_entry(&self, index: usize, owner: &Arc<Owner>) -> io::Result<Arc<Entry>> {
        let page = page_size::get();
        Ok(Arc::new(Entry {
            index,
            qid: self.qid,
            header: Mapping::new(HEADER_SIZE.next_multiple_of(page))?,
            payload: Mapping::new(self.payload_size)?,
            bufs: Mutex::new(()),
            commit_id: AtomicU64::new(0),
            state: AtomicU8::new(DISPATCHING),
            owner: owner.clone(),
        }))
    }

    /// Registers, then serves until every entry has ended. Returns an error if the first
    /// REGISTER fails (the kernel then serves everything over /dev/fuse).
    pub(crate) fn run(self) -> io::Result<()> {
        URING_THREADS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: creates an eventfd we own (closed by `Owner::drop`).
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        let owner = Arc::new(Owner {
            pending: Mutex::new(Vec::new()),
            eventfd: efd,
        });
        // Declared before the ring, so dropped after it: the kernel may hold their
        // addresses until the ring is closed.
        let mut entries: Vec<Arc<Entry>> = Vec::new();
        let mut iovecs: Vec<Box<[libc::iovec; 2]>> = Vec::new();
        let mut efd_buf = Box::new(0u64);
        let mut request_buf: Vec<u64> = Vec::new();
        let mut ring: IoUring<squeue::Entry128, cqueue::Entry> = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_submit_all()
            .setup_cqsize(2 * RING_ENTRIES)
            .build(RING_ENTRIES)?;

        let mut live = 0usize; // entries registered and not yet ended
        self.register(&mut ring, &mut entries, &mut iovecs, &owner)?;
        live += 1;
        self.arm_eventfd(&mut ring, efd, &mut efd_buf)?;
        let mut first = true;
        while live > 0 {
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(e),
            }
            let cqes: Vec<(u64, i32)> = ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            for (ud, res) in cqes {
                if ud == EVENTFD_USER_DATA {
                    let ready: Vec<usize> = std::mem::take(&mut *owner.pending.lock());
                    for i in ready {
                        if let Some((_, deferred)) = self.spares.counts.lock().get_mut(self.qid as usize) {
                            *deferred = deferred.saturating_sub(1);
                        }
                        self.commit(&mut ring, &entries[i])?;
                    }
                    if res >= 0 || res == -libc::EINTR || res == -libc::EAGAIN {
                        self.arm_eventfd(&mut ring, efd, &mut efd_buf)?;
                    }
                    continue;
                }
                let entry = entries[ud as usize].clone();
                if res < 0 {
                    match -res {
                        // Only a REGISTER is retried (as libfuse does); while `first`, no
                        // request was served, so the failed command is this entry's
                        // REGISTER. A commit's SQE does not fail so (its errors go to the
                        // caller), and registering again after one would make a second
                        // kernel entry of the same buffers.
                        libc::EAGAIN | libc::EINTR if first => {
                            self.resubmit(&mut ring, &entry, &iovecs[entry.index])?;
                        }
                        libc::ENOTCONN | libc::ECONNABORTED | libc::ECANCELED => live -= 1,
                        // The REGISTER failed: the kernel falls back to /dev/fuse.
                        e if first => return Err(io::Error::from_raw_os_error(e)),
                        e => {
                            error!("io_uring entry q{} #{} ended: errno {e}", entry.qid, entry.index);
                            live -= 1;
                        }
                    }
                    continue;
                }
                first = false;
                let reserved = self.serve(&entry, &mut request_buf);
                match entry.state.compare_exchange(
                    DISPATCHING,
                    DEFERRED,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Err(_) => {
                        // Replied during dispatch: commit and fetch the next.
                        if reserved {
                            self.unreserve();
                        }
                        self.commit(&mut ring, &entry)?;
                    }
                    Ok(_)
                        if Arc::strong_count(&entry) <= 2
                            && entry
                                .state
                                .compare_exchange(
                                    DEFERRED,
                                    REPLIED_IN_DISPATCH,
                                    Ordering::AcqRel,
                                    Ordering::Acquire,
                                )
                                .is_ok() =>
                    {
                        // No reply object left anywhere (a request that takes none): the
                        // entry must still be committed to come back (libfuse's
                        // fuse_reply_none). `entries` and `entry` are the two references.
                        // The second exchange: a reply object that existed at the first
                        // and replied before it was dropped has handed the entry back
                        // through `pending` already, and must be the only commit.
                        {
                            let _g = entry.bufs.lock();
                            let h = abi::fuse_out_header {
                                len: OUT_HEADER_SIZE as u32,
                                error: 0,
                                unique: entry.commit_id.load(Ordering::Relaxed),
                            };
                            // SAFETY: the entry is ours until committed.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    zerocopy::IntoBytes::as_bytes(&h).as_ptr(),
                                    entry.header.ptr,
                                    OUT_HEADER_SIZE,
                                );
                                write_payload_sz(&entry, 0);
                            }
                        }
                        if reserved {
                            self.unreserve();
                        }
                        self.commit(&mut ring, &entry)?;
                    }
                    Ok(_) => {
                        // Deferred to another thread: this entry is out of service until
                        // the reply comes back; a spare thread keeps the queue's capacity.
                        debug!("io_uring q{} #{}: reply deferred", entry.qid, entry.index);
                        self.start_spare(reserved);
                    }
                }
            }
        }
        drop(ring);
        drop(iovecs);
        drop(entries);
        Ok(())
    }

    fn register(
        &self,
        ring: &mut IoUring<squeue::Entry128, cqueue::Entry>,
        entries: &mut Vec<Arc<Entry>>,
        iovecs: &mut Vec<Box<[libc::iovec; 2]>>,
        owner: &Arc<Owner>,
    ) -> io::Result<()> {
        let index = entries.len();
        let entry = self.new_entry(index, owner)?;
        let iov = Box::new([
            libc::iovec {
                iov_base: entry.header.ptr.cast(),
                iov_len: HEADER_SIZE,
            },
            libc::iovec {
                iov_base: entry.payload.ptr.cast(),
                iov_len: entry.payload.len,
            },
        ]);
        entries.push(entry);
        iovecs.push(iov);
        URING_ENTRIES.fetch_add(1, Ordering::Relaxed);
        self.resubmit(ring, &entries[index], &iovecs[index])
    }

    /// (Re)submits an entry's REGISTER.
    fn resubmit(
        &self,
        ring: &mut IoUring<squeue::Entry128, cqueue::Entry>,
        entry: &Entry,
        iov: &[libc::iovec; 2],
    ) -> io::Result<()> {
        let mut sqe = opcode::UringCmd80::new(types::Fd(self.fuse_fd), CMD_REGISTER)
            .cmd(cmd_area(0, self.qid))
            .addr(Some(iov.as_ptr() as u64))
            .build()
            .user_data(entry.index as u64);
        // SAFETY: `Entry128` is `#[repr(C)]` over the kernel's 128-byte SQE (asserted
        // above); `len` (the iovec count, which must be 2) is the u32 at byte 24.
        unsafe {
            (&mut sqe as *mut squeue::Entry128)
                .cast::<u8>()
                .add(SQE_OFF_LEN)
                .cast::<u32>()
                .write_unaligned(2)
        };
        self.push(ring, &sqe)
    }

    fn commit(
        &self,
        ring: &mut IoUring<squeue::Entry128, cqueue::Entry>,
        entry: &Entry,
    ) -> io::Result<()> {
        entry.state.store(DISPATCHING, Ordering::Release);
        let sqe = opcode::UringCmd80::new(types::Fd(self.fuse_fd), CMD_COMMIT_AND_FETCH)
            .cmd(cmd_area(entry.commit_id.load(Ordering::Relaxed), self.qid))
            .build()
            .user_data(entry.index as u64);
        self.push(ring, &sqe)
    }

    fn arm_eventfd(
        &self,
        ring: &mut IoUring<squeue::Entry128, cqueue::Entry>,
        efd: RawFd,
        buf: &mut Box<u64>,
    ) -> io::Result<()> {
        let sqe: squeue::Entry128 = opcode::Read::new(
            types::Fd(efd),
            (&mut **buf as *mut u64).cast(),
            8,
        )
        .build()
        .user_data(EVENTFD_USER_DATA)
        .into();
        self.push(ring, &sqe)
    }

    fn push(
        &self,
        ring: &mut IoUring<squeue::Entry128, cqueue::Entry>,
        sqe: &squeue::Entry128,
    ) -> io::Result<()> {
        loop {
            // SAFETY: the buffers an SQE names (iovecs, entry mappings, the eventfd
            // buffer) live until the ring is dropped (see `run`).
            if unsafe { ring.submission().push(sqe) }.is_ok() {
                return Ok(());
            }
            ring.submit()?;
        }
    }

    /// A deferral reserved for a request that was answered during its dispatch after all.
    fn unreserve(&self) {
        if let Some((_, deferred)) = self.spares.counts.lock().get_mut(self.qid as usize) {
            *deferred = deferred.saturating_sub(1);
        }
    }

    /// Copies the request out of the entry and dispatches it; returns whether the
    /// filesystem reserved a deferred reply ([`reserve_deferred_reply`]).
    fn serve(&self, entry: &Arc<Entry>, buf: &mut Vec<u64>) -> bool {
        DISPATCH.with(|d| *d.borrow_mut() = Some((self.spares.clone(), self.qid, false)));
        self.serve_inner(entry, buf);
        DISPATCH.with(|d| d.borrow_mut().take()).is_some_and(|(_, _, reserved)| reserved)
    }

    fn serve_inner(&self, entry: &Arc<Entry>, buf: &mut Vec<u64>) {
        URING_REQUESTS.fetch_add(1, Ordering::Relaxed);
        let len = copy_request(entry, buf).unwrap_or(0);
        // SAFETY: `buf` holds `len` initialised bytes (u64 storage keeps the alignment
        // the parser needs).
        let data = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), len) };
        let sender = UringSender(entry.clone());
        match RequestWithSender::new_uring(self.event_loop.ch.sender(), sender.clone(), data) {
            Some(req) => {
                if let Ok(crate::ll::Operation::Destroy(_)) = req.request.operation() {
                    req.reply::<crate::ReplyEmpty>().ok();
                } else {
                    req.dispatch(&self.event_loop);
                }
            }
            None => {
                // Unparseable: answer EIO so that the caller and the entry both go on.
                let h = abi::fuse_out_header {
                    len: OUT_HEADER_SIZE as u32,
                    error: -libc::EIO,
                    unique: entry.commit_id.load(Ordering::Relaxed),
                };
                let _ = sender.send(&[io::IoSlice::new(zerocopy::IntoBytes::as_bytes(&h))]);
            }
        }
    }
}

/// Copies `in_header ‖ op_in ‖ payload` of the entry's request into `buf` (what read(2)
/// on /dev/fuse would have returned) and records its commit id; returns its length, or
/// None for a request whose sizes do not add up.
fn copy_request(entry: &Entry, buf: &mut Vec<u64>) -> Option<usize> {
    let _g = entry.bufs.lock();
    // SAFETY: the kernel filled the entry and handed it to us; every copy is bounded by
    // the checked sizes and the mappings' lengths.
    unsafe {
        let h = entry.header.ptr;
        let in_len = h.cast::<u32>().read_unaligned() as usize;
        let payload_sz = h.add(OFF_ENT_PAYLOAD_SZ).cast::<u32>().read_unaligned() as usize;
        let commit_id = h.add(OFF_ENT_COMMIT_ID).cast::<u64>().read_unaligned();
        entry.commit_id.store(commit_id, Ordering::Relaxed);
        let op_in = in_len
            .checked_sub(IN_HEADER_SIZE + payload_sz)
            .filter(|&n| n <= 128 && payload_sz <= entry.payload.len);
        let Some(op_in) = op_in else {
            error!("io_uring: malformed request (len {in_len}, payload {payload_sz})");
            return None;
        };
        buf.clear();
        buf.resize(in_len.div_ceil(8), 0);
        let dst = buf.as_mut_ptr().cast::<u8>();
        std::ptr::copy_nonoverlapping(h, dst, IN_HEADER_SIZE);
        std::ptr::copy_nonoverlapping(h.add(OFF_OP_IN), dst.add(IN_HEADER_SIZE), op_in);
        std::ptr::copy_nonoverlapping(entry.payload.ptr, dst.add(IN_HEADER_SIZE + op_in), payload_sz);
        Some(in_len)
    }
}
