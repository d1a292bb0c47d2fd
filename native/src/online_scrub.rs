//! `rollfs scrub MOUNTPOINT`: the online scrub of a live mount, and the ioctl it runs on.
//!
//! The daemon answers [`ROLLFS_IOC_SCRUB`] with one step of the core's scrub
//! (`Filesystem::scrub_step`, core/src/scrub.rs) under its lock: at most
//! `SCRUB_STEP_BLOCKS_MAX` blocks read, so other requests wait for one step at a time. The
//! command loops over steps from a cursor, prints progress, and at the end (or at each bad
//! block) names each bad block by path, found by a walk of the mount. The cursor is printed
//! with the progress: `--resume NID:POS` goes on from there after an interrupted run.
//!
//! The ioctl's argument, `_IOWR('R', 3, [u8; 432])`, little-endian (the daemon and the
//! command are the same binary; the layout is fixed so that other clients can call it):
//!
//! | offset | size | in | out |
//! |---|---|---|---|
//! | 0 | 4 | cursor node id | next node id |
//! | 4 | 4 | budget in blocks (0: the largest) | flags: bit 0 done, bit 1 data checked (not `-O nodatasum`) |
//! | 8 | 8 | cursor position | next position |
//! | 16 | 8 | | node blocks verified |
//! | 24 | 8 | | data blocks verified |
//! | 32 | 8 | | blocks skipped (in memory only) |
//! | 40 | 4 | | node ids in all (the progress's total) |
//! | 44 | 4 | | bad blocks that follow (at most 16) |
//! | 48 | 24 × 16 | | bad blocks: kind (u32: 1 data checksum, 2 node corrupt, 3 read error), inode (u32), file block (u64, `u64::MAX` for a node block), device block (u64) |

use crate::error::CliError;
use rollfs_core::{ScrubBad, ScrubBadKind, ScrubCursor, ScrubStep, SCRUB_BAD_PER_STEP_MAX, SCRUB_STEP_BLOCKS_MAX};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes of the ioctl's argument.
pub const SCRUB_ARG_LEN: usize = 48 + BAD_RECORD_LEN * SCRUB_BAD_PER_STEP_MAX;
const BAD_RECORD_LEN: usize = 24;
/// `_IOWR('R', 3, [u8; SCRUB_ARG_LEN])`.
pub const ROLLFS_IOC_SCRUB: u32 = (3 << 30) | ((SCRUB_ARG_LEN as u32) << 16) | ((b'R' as u32) << 8) | 3;
const FLAG_DONE: u32 = 1;
/// Set when the data blocks were checked (not on an image made with `-O nodatasum`).
const FLAG_DATA_CHECKED: u32 = 2;

const _: () = assert!(SCRUB_ARG_LEN == 432);

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The request's cursor and budget; `None` when the argument is short.
pub fn decode_request(arg: &[u8]) -> Option<(ScrubCursor, u32)> {
    if arg.len() < 16 {
        return None;
    }
    let budget = match u32_at(arg, 4) {
        0 => SCRUB_STEP_BLOCKS_MAX,
        b => b,
    };
    Some((ScrubCursor { nid: u32_at(arg, 0), pos: u64_at(arg, 8) }, budget))
}

fn encode_request(cursor: ScrubCursor, budget: u32) -> Vec<u8> {
    let mut b = vec![0u8; SCRUB_ARG_LEN];
    b[0..4].copy_from_slice(&cursor.nid.to_le_bytes());
    b[4..8].copy_from_slice(&budget.to_le_bytes());
    b[8..16].copy_from_slice(&cursor.pos.to_le_bytes());
    b
}

/// The daemon's answer to a step.
pub fn encode_reply(step: &ScrubStep, nid_count: u32) -> Vec<u8> {
    debug_assert!(step.bad.len() <= SCRUB_BAD_PER_STEP_MAX);
    let mut b = vec![0u8; SCRUB_ARG_LEN];
    let next = step.next.unwrap_or(ScrubCursor { nid: nid_count, pos: 0 });
    b[0..4].copy_from_slice(&next.nid.to_le_bytes());
    let flags = if step.next.is_none() { FLAG_DONE } else { 0 } | if step.data_checked { FLAG_DATA_CHECKED } else { 0 };
    b[4..8].copy_from_slice(&flags.to_le_bytes());
    b[8..16].copy_from_slice(&next.pos.to_le_bytes());
    b[16..24].copy_from_slice(&step.nodes_verified.to_le_bytes());
    b[24..32].copy_from_slice(&step.data_blocks_verified.to_le_bytes());
    b[32..40].copy_from_slice(&step.blocks_skipped.to_le_bytes());
    b[40..44].copy_from_slice(&nid_count.to_le_bytes());
    b[44..48].copy_from_slice(&(step.bad.len() as u32).to_le_bytes());
    for (i, bad) in step.bad.iter().take(SCRUB_BAD_PER_STEP_MAX).enumerate() {
        let r = &mut b[48 + i * BAD_RECORD_LEN..48 + (i + 1) * BAD_RECORD_LEN];
        r[0..4].copy_from_slice(&bad.kind.code().to_le_bytes());
        r[4..8].copy_from_slice(&bad.ino.to_le_bytes());
        r[8..16].copy_from_slice(&bad.file_block.unwrap_or(u64::MAX).to_le_bytes());
        r[16..24].copy_from_slice(&bad.addr.to_le_bytes());
    }
    b
}

/// A step as the command reads it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepReply {
    pub step: ScrubStep,
    pub nid_count: u32,
}

pub fn decode_reply(b: &[u8]) -> Result<StepReply, String> {
    if b.len() < SCRUB_ARG_LEN {
        return Err(format!("scrub reply of {} bytes, want {SCRUB_ARG_LEN}", b.len()));
    }
    let done = u32_at(b, 4) & FLAG_DONE != 0;
    let data_checked = u32_at(b, 4) & FLAG_DATA_CHECKED != 0;
    let bad_count = u32_at(b, 44) as usize;
    if bad_count > SCRUB_BAD_PER_STEP_MAX {
        return Err(format!("scrub reply names {bad_count} bad blocks, at most {SCRUB_BAD_PER_STEP_MAX}"));
    }
    let mut bad = Vec::with_capacity(bad_count);
    for i in 0..bad_count {
        let r = &b[48 + i * BAD_RECORD_LEN..48 + (i + 1) * BAD_RECORD_LEN];
        let kind = ScrubBadKind::from_code(u32_at(r, 0)).ok_or_else(|| format!("unknown bad kind {}", u32_at(r, 0)))?;
        let fb = u64_at(r, 8);
        bad.push(ScrubBad { kind, ino: u32_at(r, 4), file_block: (fb != u64::MAX).then_some(fb), addr: u64_at(r, 16) });
    }
    let step = ScrubStep {
        next: (!done).then_some(ScrubCursor { nid: u32_at(b, 0), pos: u64_at(b, 8) }),
        nodes_verified: u64_at(b, 16),
        data_blocks_verified: u64_at(b, 24),
        blocks_skipped: u64_at(b, 32),
        data_checked,
        bad,
    };
    Ok(StepReply { step, nid_count: u32_at(b, 40) })
}

/// `NID:POS` as `--resume` takes it.
pub fn parse_cursor(s: &str) -> Result<ScrubCursor, String> {
    let (n, p) = s.split_once(':').ok_or_else(|| format!("`{s}`: a cursor is NID:POS, as the progress prints it"))?;
    let nid = n.parse().map_err(|_| format!("`{n}`: not a node id"))?;
    let pos = p.parse().map_err(|_| format!("`{p}`: not a position"))?;
    Ok(ScrubCursor { nid, pos })
}

/// One step through the ioctl on `dir` (an open directory of the mount).
fn step(dir: &std::fs::File, cursor: ScrubCursor, budget: u32) -> std::io::Result<StepReply> {
    use std::os::fd::AsRawFd;
    let mut arg = encode_request(cursor, budget);
    // SAFETY: the argument is SCRUB_ARG_LEN bytes, the size the ioctl number carries; the
    // kernel copies that many in and out.
    let r = unsafe { libc::ioctl(dir.as_raw_fd(), ROLLFS_IOC_SCRUB as _, arg.as_mut_ptr()) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    decode_reply(&arg).map_err(std::io::Error::other)
}

/// Paths of the inodes in `want` under `root`, by a walk of the mount (bounded: stops when
/// all are found or after `entries_max` entries; what it did not find keeps its number).
fn paths_of(root: &Path, want: &HashSet<u32>, entries_max: u64) -> HashMap<u32, PathBuf> {
    let mut found = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0u64;
    if want.contains(&1) {
        found.insert(1, root.to_path_buf());
    }
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            seen += 1;
            if found.len() == want.len() || seen > entries_max {
                return found;
            }
            let Ok(m) = e.metadata() else { continue };
            let ino = m.ino() as u32;
            if want.contains(&ino) {
                found.entry(ino).or_insert_with(|| e.path());
            }
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    found
}

#[derive(Debug, Clone)]
pub struct OnlineScrubArgs {
    pub mountpoint: PathBuf,
    pub json: bool,
    pub resume: Option<ScrubCursor>,
    /// Blocks per step (0: the largest).
    pub budget: u32,
}

/// Exit codes as the offline scrub's: 0 clean, 4 bad blocks found, 8 could not scrub.
pub fn run(args: &OnlineScrubArgs) -> Result<i32, (i32, CliError)> {
    use crate::cmd::{FSCK_CLEAN, FSCK_OPERATIONAL, FSCK_UNCORRECTED};
    let t = args.mountpoint.display().to_string();
    let fail = |detail: String| {
        (FSCK_OPERATIONAL, CliError::Failed { path: args.mountpoint.clone(), what: "cannot scrub", detail })
    };
    let dir = std::fs::File::open(&args.mountpoint).map_err(|e| fail(e.to_string()))?;
    let mut cursor = args.resume.unwrap_or_default();
    let mut total = ScrubStep::default();
    let (mut steps, mut last_print) = (0u64, std::time::Instant::now());
    let stderr_tty = !args.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    loop {
        let r = step(&dir, cursor, args.budget).map_err(|e| {
            fail(match e.raw_os_error() {
                Some(libc::ENOTTY) => "not a rollfs mount (or a daemon without online scrub)".into(),
                Some(libc::EPERM) => "permission denied: the user who mounted it, or root".into(),
                _ => e.to_string(),
            })
        })?;
        steps += 1;
        total.nodes_verified += r.step.nodes_verified;
        total.data_blocks_verified += r.step.data_blocks_verified;
        total.blocks_skipped += r.step.blocks_skipped;
        total.data_checked = r.step.data_checked;
        total.bad.extend(r.step.bad.iter().copied());
        let Some(next) = r.step.next else { break };
        if next == cursor {
            return Err(fail(format!("the daemon did not move the cursor from {}:{}", cursor.nid, cursor.pos)));
        }
        cursor = next;
        if stderr_tty && last_print.elapsed().as_millis() >= 500 {
            last_print = std::time::Instant::now();
            let pct = u64::from(cursor.nid) * 100 / u64::from(r.nid_count.max(1));
            eprint!(
                "\rscrub: {pct:3}% ({} blocks verified, {} bad; --resume {}:{})   ",
                total.nodes_verified + total.data_blocks_verified,
                total.bad.len(),
                cursor.nid,
                cursor.pos
            );
            let _ = std::io::stderr().flush();
        }
    }
    if stderr_tty {
        eprintln!();
    }
    // A bad node is named by the file whose walk needed it and again by its own id: each
    // device block once.
    let mut seen_blocks = HashSet::new();
    total.bad.retain(|b| seen_blocks.insert(b.addr));
    let want: HashSet<u32> = total.bad.iter().map(|b| b.ino).collect();
    let paths = if want.is_empty() { HashMap::new() } else { paths_of(&args.mountpoint, &want, 10_000_000) };
    let path_text = |ino: u32| match paths.get(&ino) {
        Some(p) => p.display().to_string(),
        None => format!("<inode {ino}>"),
    };
    if args.json {
        let bad: Vec<_> = total
            .bad
            .iter()
            .map(|b| {
                serde_json::json!({
                    "kind": b.kind.text(),
                    "inode": b.ino,
                    "path": path_text(b.ino),
                    "file_offset": b.file_block.map(|f| f * rollfs_core::BLOCK_SIZE as u64),
                    "block": b.addr,
                })
            })
            .collect();
        let v = serde_json::json!({
            "target": t,
            "online": true,
            "clean": total.bad.is_empty(),
            "steps": steps,
            "node_blocks_verified": total.nodes_verified,
            "data_blocks_verified": total.data_blocks_verified,
            "blocks_skipped": total.blocks_skipped,
            "data_checked": total.data_checked,
            "bad": bad,
        });
        println!("{v}");
    } else {
        for b in &total.bad {
            match b.file_block {
                Some(f) => println!(
                    "{t}: {}: byte offset {}: block {}: {}",
                    path_text(b.ino),
                    f * rollfs_core::BLOCK_SIZE as u64,
                    b.addr,
                    b.kind.text()
                ),
                None => println!("{t}: {}: node block {}: {}", path_text(b.ino), b.addr, b.kind.text()),
            }
        }
        if !total.data_checked {
            println!("{t}: made with `mkfs -O nodatasum`: its data blocks have no checksums; node blocks only");
        }
        println!(
            "{t}: online scrub: {} node blocks and {} data blocks verified in {steps} steps ({} in memory only, not yet on the device): {}",
            total.nodes_verified,
            total.data_blocks_verified,
            total.blocks_skipped,
            if total.bad.is_empty() { "clean".to_string() } else { format!("{} bad", total.bad.len()) }
        );
    }
    Ok(if total.bad.is_empty() { FSCK_CLEAN } else { FSCK_UNCORRECTED })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_number_carries_the_argument_size() {
        assert_eq!(ROLLFS_IOC_SCRUB, 0xC1B0_5203);
        assert_eq!((ROLLFS_IOC_SCRUB >> 16) & 0x3fff, SCRUB_ARG_LEN as u32);
    }

    #[test]
    fn a_reply_reads_back_as_it_was_written() {
        let step = ScrubStep {
            next: Some(ScrubCursor { nid: 7, pos: 3 }),
            nodes_verified: 5,
            data_blocks_verified: 900,
            blocks_skipped: 2,
            data_checked: true,
            bad: vec![
                ScrubBad { kind: ScrubBadKind::DataChecksum, ino: 7, file_block: Some(1), addr: 4242 },
                ScrubBad { kind: ScrubBadKind::NodeCorrupt, ino: 9, file_block: None, addr: 77 },
            ],
        };
        assert_eq!(decode_reply(&encode_reply(&step, 100)).unwrap(), StepReply { step: step.clone(), nid_count: 100 });
        let done = ScrubStep { next: None, ..step };
        assert_eq!(decode_reply(&encode_reply(&done, 100)).unwrap().step.next, None);
        let (c, b) = decode_request(&encode_request(ScrubCursor { nid: 3, pos: 9 }, 0)).unwrap();
        assert_eq!((c, b), (ScrubCursor { nid: 3, pos: 9 }, SCRUB_STEP_BLOCKS_MAX));
    }

    #[test]
    fn a_reply_with_too_many_bad_blocks_or_an_unknown_kind_is_refused() {
        let mut b = encode_reply(&ScrubStep::default(), 1);
        b[44..48].copy_from_slice(&17u32.to_le_bytes());
        assert!(decode_reply(&b).is_err());
        b[44..48].copy_from_slice(&1u32.to_le_bytes());
        assert!(decode_reply(&b).unwrap_err().contains("unknown bad kind"));
        assert!(decode_reply(&b[..40]).is_err());
    }

    #[test]
    fn cursors_parse_as_printed() {
        assert_eq!(parse_cursor("12:5").unwrap(), ScrubCursor { nid: 12, pos: 5 });
        assert!(parse_cursor("12").is_err());
        assert!(parse_cursor("x:1").is_err());
    }
}
