//! FITRIM (`fstrim`): the free segments of a range discarded on request, in bounded steps.
//!
//! Only free segments are discarded: they hold nothing the last checkpoint or an fsync
//! chain written after it references. A segment emptied since the last checkpoint is
//! prefree (the checkpoint still points into it) until the next checkpoint commits; the
//! segments a chain runs through are open or used; a chain's next segment is opened before
//! a footer names it (`SegmentManager::peek_next`). So a trim never takes what mount or
//! roll-forward needs. (The older checkpoint pack, the fallback when the newest cannot be
//! read, may point into freed segments: a trim exposes it no more than their reuse, which
//! every checkpoint allows, and the checkpoint's own discards already do.)
//!
//! Within the range, neighbouring free segments form one extent; an extent (clipped to
//! the range) shorter than the caller's minimum is skipped, as ext4 does with `minlen`. A
//! segment discarded since it became free (by a trim or a checkpoint's discard) is skipped:
//! a second `fstrim` reports nothing new, as on ext4. Reads outside the driver's lock
//! cannot meet a discarded block: a free segment's blocks became unreferenced at a
//! checkpoint, which fenced such reads then (`BlockDevice::reuse_fence`).

use crate::error::Result;
use crate::fs::Filesystem;
use crate::BlockDevice;

/// What one [`Filesystem::trim_step`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimStep {
    /// Blocks discarded by this step.
    pub trimmed_blocks: u64,
    /// The block the next step starts at; the range's end when the trim is done.
    pub next: u64,
}

impl<D: BlockDevice> Filesystem<D> {
    /// Discards the free segments' blocks within device blocks `start..end` whose extents
    /// (runs of neighbouring free segments, clipped to the range) are at least `min_blocks`
    /// long, looking at up to about `max_segments` segments (the run in progress at that
    /// point is finished: its length decides `min_blocks`). Call again from
    /// [`TrimStep::next`] until it reaches `end`; a driver releases its lock in between.
    /// Changes no on-disk state (a discard is a hint; none of the blocks is referenced);
    /// EROFS on a read-only mount, EIO when the device fails a discard it supports.
    pub fn trim_step(&mut self, start: u64, end: u64, min_blocks: u64, max_segments: u32) -> Result<TrimStep> {
        self.check_writable()?;
        let g = self.geo;
        let (seg, main) = (g.segment_blocks as u64, g.main_start as u64);
        // Only the main area has segments; the range's part past it has nothing to trim.
        let clip = end.min(g.main_end());
        if start >= clip {
            return Ok(TrimStep { trimmed_blocks: 0, next: end.max(start) });
        }
        let first = (start.max(main) - main) / seg;
        let mut trimmed = 0;
        let mut run: Option<(u64, u64)> = None; // (first segment, segments)
        let mut s = first;
        // Bounded: each round looks at one more segment, up to the range's last one.
        while s * seg + main < clip {
            if self.seg.trimmable(s as u32) {
                run = Some(run.map_or((s, 1), |(a, n)| (a, n + 1)));
            } else if let Some(r) = run.take() {
                trimmed += self.trim_run(r, start, clip, min_blocks)?;
            }
            s += 1;
            if s - first >= max_segments as u64 && run.is_none() {
                break;
            }
        }
        if let Some(r) = run {
            trimmed += self.trim_run(r, start, clip, min_blocks)?;
        }
        let at = s * seg + main;
        Ok(TrimStep { trimmed_blocks: trimmed, next: if at >= clip { end } else { at.max(start) } })
    }

    /// Discards segments `first..first + count` (all trimmable) clipped to `start..end`,
    /// if that is at least `min_blocks`; returns the blocks discarded. Only segments
    /// discarded whole count as trimmed for the next trim.
    fn trim_run(&mut self, (first, count): (u64, u64), start: u64, end: u64, min_blocks: u64) -> Result<u64> {
        let g = self.geo;
        let seg = g.segment_blocks as u64;
        let (a, b) = (g.seg_start(first as u32) as u64, g.seg_start(first as u32) as u64 + count * seg);
        let (from, to) = (a.max(start), b.min(end));
        if to <= from || to - from < min_blocks.max(1) {
            return Ok(0);
        }
        self.dentry_cache.forget_range(from, to - from);
        if let Err(e) = self.dev.discard(from, to - from) {
            self.stats.discard_errors += 1;
            return Err(e.into());
        }
        self.stats.discards += 1;
        self.stats.trimmed_blocks += to - from;
        for s in first..first + count {
            let s_start = g.seg_start(s as u32) as u64;
            if s_start >= from && s_start + seg <= to {
                self.seg.set_trimmed(s as u32);
            }
        }
        Ok(to - from)
    }
}
