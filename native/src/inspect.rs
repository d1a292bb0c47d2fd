//! `rollfs inspect`: what is on a device — superblock, geometry, checkpoint, per-segment
//! utilisation and wear where the core reports them — as text, JSON, and an SVG picture
//! (layout to scale, segment utilisation with the log heads, wear: [`picture`]).

use crate::cmd::format_uuid;
use crate::device::{DeviceKind, DeviceOptions, FileDevice};
use crate::error::Result;
use crate::{probe, size};
use rollfs_core::layout::Geometry;
use rollfs_core::{BlockDevice, BLOCK_SIZE};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

mod picture;
pub use picture::svg;

#[derive(Debug, Clone, Serialize)]
pub struct Area {
    pub name: &'static str,
    pub start_block: u64,
    pub blocks: u64,
}

/// One main-area segment, from the newest checkpoint's SIT.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentInfo {
    pub segno: u32,
    pub valid_blocks: u32,
    /// The log type that last wrote it (hot-data .. cold-node), if any.
    pub seg_type: Option<String>,
    /// Which of the six logs has it open, if any.
    pub log: Option<String>,
    /// How many times the segment has been (re)opened for writing: its wear.
    pub write_count: Option<u64>,
    pub mtime: u64,
}

/// One of the six active logs at the newest checkpoint.
#[derive(Debug, Clone, Serialize)]
pub struct LogInfo {
    pub name: &'static str,
    pub segno: u32,
    pub next_blkoff: u32,
}

/// The newest valid checkpoint.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointInfo {
    pub version: u64,
    pub pack: usize,
    pub clean_unmount: bool,
    pub time_unix: i64,
    pub valid_blocks: u64,
    pub valid_nodes: u32,
    pub valid_inodes: u32,
    pub written_blocks: u64,
    pub orphans: usize,
    pub logs: Vec<LogInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    pub target: String,
    pub device_kind: DeviceKind,
    pub device_bytes: u64,
    pub format_version: String,
    pub uuid: String,
    pub label: String,
    pub created_unix: i64,
    pub feature_compat: u32,
    pub feature_incompat: u32,
    pub feature_ro_compat: u32,
    /// A CRC32C is kept beside every data block address (not `mkfs -O nodatasum`).
    pub data_checksums: bool,
    pub block_size: usize,
    pub segment_blocks: u32,
    pub main_segments: u32,
    pub reserved_segments: u32,
    pub nid_count: u32,
    /// The size `rollfs resize` may grow the filesystem to (`mkfs --max-size`); 0 when
    /// the image has no room to grow.
    pub max_bytes: u64,
    pub areas: Vec<Area>,
    /// From the checker: the newest valid checkpoint and what it holds.
    pub checkpoint_version: Option<u64>,
    pub inodes: Option<u64>,
    pub directories: Option<u64>,
    pub data_blocks: Option<u64>,
    pub node_blocks: Option<u64>,
    pub fsck_clean: Option<bool>,
    pub fsck_error: Option<String>,
    /// Reachable inodes with each attribute flag (`chattr`: immutable, append-only,
    /// no-dump, no-atime), from the checker.
    pub attribute_flags: Option<std::collections::BTreeMap<&'static str, u64>>,
    /// With `--verify-data`: data blocks read and checked against their checksums, and
    /// how many failed (`rollfs scrub` lists them by path).
    pub data_blocks_verified: Option<u64>,
    pub bad_data_blocks: Option<u64>,
    pub checkpoint: Option<CheckpointInfo>,
    /// Per-segment state; `None` when the checkpoint or SIT could not be read.
    pub segments: Option<Vec<SegmentInfo>>,
    pub segment_error: Option<String>,
}

fn areas(g: &Geometry) -> Vec<Area> {
    let cp = rollfs_core::layout::CP_START as u64;
    vec![
        Area { name: "superblock", start_block: 0, blocks: 2 },
        Area { name: "checkpoint", start_block: cp, blocks: 2 * g.cp_pack_blocks as u64 },
        // With room to grow (mkfs --max-size) each area is laid out for the largest size.
        Area { name: "NAT", start_block: g.nat_start as u64, blocks: 2 * g.nat_capacity() as u64 },
        Area { name: "SIT", start_block: g.sit_start as u64, blocks: 2 * g.sit_capacity() as u64 },
        Area { name: "SSA", start_block: g.ssa_start as u64, blocks: 2 * g.ssa_capacity() as u64 },
        Area { name: "main", start_block: g.main_start as u64, blocks: g.main_blocks() },
    ]
}

/// Reads the newest checkpoint and its SIT through the core's own decoders.
fn read_segments<D: BlockDevice>(
    dev: &mut D,
    sb_geo: &Geometry,
) -> rollfs_core::Result<(CheckpointInfo, Vec<SegmentInfo>)> {
    use rollfs_core::checkpoint::{Checkpoint, CP_FLAG_UMOUNT};
    use rollfs_core::Log;
    let (cp, pack) = Checkpoint::read_newest(dev, sb_geo)?;
    let g = &cp.geometry.unwrap_or(*sb_geo);
    let sit = rollfs_core::sit::Sit::load(dev, g, cp.sit_slots.clone(), &cp.sit_journal, cp.version)?;
    let logs: Vec<LogInfo> = Log::ALL
        .iter()
        .map(|l| LogInfo {
            name: l.name(),
            segno: cp.logs[*l as usize].segno,
            next_blkoff: cp.logs[*l as usize].blkoff,
        })
        .collect();
    let segs = (0..g.main_segments)
        .map(|segno| {
            let e = sit.get(segno);
            SegmentInfo {
                segno,
                valid_blocks: e.valid as u32,
                seg_type: Log::ALL.iter().find(|l| l.seg_type() == e.seg_type).map(|l| l.name().to_string()),
                log: logs.iter().find(|l| l.segno == segno).map(|l| l.name.to_string()),
                write_count: Some(e.wear as u64),
                mtime: e.mtime,
            }
        })
        .collect();
    let info = CheckpointInfo {
        version: cp.version,
        pack,
        clean_unmount: cp.flags & CP_FLAG_UMOUNT != 0,
        time_unix: cp.time_sec,
        valid_blocks: cp.valid_blocks,
        valid_nodes: cp.valid_nodes,
        valid_inodes: cp.valid_inodes,
        written_blocks: cp.written_blocks,
        orphans: cp.orphans.len(),
        logs,
    };
    Ok((info, segs))
}

pub fn inspect(target: &Path, verify_data: bool) -> Result<Inspection> {
    let mut dev = FileDevice::open(target, DeviceOptions { write: false, ..Default::default() })?;
    let sb = probe::check_superblock(&mut dev, target)?;
    // A grown image's size is its newest checkpoint's (the superblock keeps mkfs's).
    let newest = rollfs_core::checkpoint::Checkpoint::read_newest(&mut dev, &sb.geometry);
    let g = newest.ok().and_then(|(cp, _)| cp.geometry).unwrap_or(sb.geometry);
    let mut ins = Inspection {
        target: target.display().to_string(),
        device_kind: dev.kind(),
        device_bytes: dev.block_count() * BLOCK_SIZE as u64,
        format_version: format!("{}.{}", sb.version_major, sb.version_minor),
        uuid: format_uuid(&sb.uuid),
        label: String::from_utf8_lossy(&sb.label).into_owned(),
        created_unix: sb.create_sec,
        feature_compat: sb.feature_compat,
        feature_incompat: sb.feature_incompat,
        feature_ro_compat: sb.feature_ro_compat,
        data_checksums: sb.data_checksums(),
        block_size: BLOCK_SIZE,
        segment_blocks: g.segment_blocks,
        main_segments: g.main_segments,
        reserved_segments: g.reserved_segments,
        nid_count: g.nid_count,
        max_bytes: sb.max_blocks * BLOCK_SIZE as u64,
        areas: areas(&g),
        checkpoint_version: None,
        inodes: None,
        directories: None,
        data_blocks: None,
        node_blocks: None,
        fsck_clean: None,
        fsck_error: None,
        attribute_flags: None,
        data_blocks_verified: None,
        bad_data_blocks: None,
        checkpoint: None,
        segments: None,
        segment_error: None,
    };
    match read_segments(&mut dev, &sb.geometry) {
        Ok((cp, segs)) => {
            ins.checkpoint = Some(cp);
            ins.segments = Some(segs);
        }
        Err(e) => ins.segment_error = Some(e.to_string()),
    }
    let verify_data = verify_data && sb.data_checksums();
    let opts = rollfs_core::fsck::FsckOptions { verify_data };
    match rollfs_core::fsck::check_with(&mut dev, &opts, &mut |_, _| {}) {
        Ok(r) => {
            if verify_data {
                ins.data_blocks_verified = Some(r.data_blocks_verified);
                ins.bad_data_blocks = Some(r.bad_data.len() as u64);
            }
            ins.checkpoint_version = Some(r.checkpoint_version);
            ins.inodes = Some(r.inodes);
            ins.directories = Some(r.directories);
            ins.data_blocks = Some(r.data_blocks);
            ins.node_blocks = Some(r.node_blocks);
            ins.fsck_clean = Some(r.is_clean());
            let names = rollfs_core::fsck::ATTR_FLAG_NAMES.iter().map(|(_, n)| *n);
            ins.attribute_flags = Some(names.zip(r.attr_flag_inodes).collect());
        }
        Err(e) => ins.fsck_error = Some(e.to_string()),
    }
    Ok(ins)
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

pub fn text(ins: &Inspection) -> String {
    let mut s = String::new();
    let seg_bytes = ins.segment_blocks as u64 * BLOCK_SIZE as u64;
    let _ = writeln!(s, "target:            {} ({:?}, {})", ins.target, ins.device_kind, size::human(ins.device_bytes));
    let _ = writeln!(s, "format version:    {}", ins.format_version);
    let _ = writeln!(s, "uuid:              {}", ins.uuid);
    let _ = writeln!(s, "label:             {:?}", ins.label);
    let _ = writeln!(s, "created (unix):    {}", ins.created_unix);
    let _ = writeln!(
        s,
        "features:          compat {:#x} incompat {:#x} ro_compat {:#x}",
        ins.feature_compat, ins.feature_incompat, ins.feature_ro_compat
    );
    let _ = writeln!(
        s,
        "segments:          {} main x {} ({} reserved)",
        ins.main_segments,
        size::human(seg_bytes),
        ins.reserved_segments
    );
    let _ = writeln!(
        s,
        "data checksums:    {}",
        if ins.data_checksums { "on (CRC32C beside every data block address)" } else { "off (mkfs -O nodatasum)" }
    );
    let _ = writeln!(s, "max inodes:        {}", ins.nid_count);
    if ins.max_bytes > 0 {
        let _ = writeln!(s, "room to grow:      up to {} (rollfs resize)", size::human(ins.max_bytes));
    }
    let _ = writeln!(s, "areas:");
    for a in &ins.areas {
        let _ = writeln!(
            s,
            "  {:<11} blocks {:>10} .. {:>10}  ({})",
            a.name,
            a.start_block,
            a.start_block + a.blocks,
            size::human(a.blocks * BLOCK_SIZE as u64)
        );
    }
    match &ins.checkpoint {
        Some(cp) => {
            let _ = writeln!(
                s,
                "checkpoint:        version {} (pack {}), {}, time {}, {} valid blocks, {} nodes, {} inodes, {} orphans, {} blocks ever written",
                cp.version,
                cp.pack,
                if cp.clean_unmount { "clean unmount" } else { "not unmounted cleanly (recovery runs at mount)" },
                cp.time_unix,
                cp.valid_blocks,
                cp.valid_nodes,
                cp.valid_inodes,
                cp.orphans,
                cp.written_blocks
            );
            s.push_str("logs:\n");
            for l in &cp.logs {
                let _ = writeln!(s, "  {:<10} segment {:>6}, next block {:>4}", l.name, l.segno, l.next_blkoff);
            }
        }
        None => {
            let _ = writeln!(s, "checkpoint:        version {}", opt(&ins.checkpoint_version));
        }
    }
    let _ = writeln!(
        s,
        "contents:          {} inodes ({} directories), {} data blocks, {} node blocks",
        opt(&ins.inodes),
        opt(&ins.directories),
        opt(&ins.data_blocks),
        opt(&ins.node_blocks)
    );
    if let Some(flags) = &ins.attribute_flags {
        // In lsattr's order, each flag's count of inodes.
        let list: Vec<String> =
            rollfs_core::fsck::ATTR_FLAG_NAMES.iter().map(|(_, n)| format!("{} {n}", flags[n])).collect();
        let _ = writeln!(s, "attribute flags:   inodes {}", list.join(", "));
    }
    match (&ins.fsck_clean, &ins.fsck_error) {
        (Some(true), _) => s.push_str("consistency:       clean\n"),
        (Some(false), _) if ins.bad_data_blocks.unwrap_or(0) > 0 => {
            s.push_str("consistency:       BAD DATA (run `rollfs scrub` for the list)\n")
        }
        (Some(false), _) => s.push_str("consistency:       PROBLEMS (run `rollfs fsck`)\n"),
        (None, Some(e)) => {
            let _ = writeln!(s, "consistency:       not checked: {e}");
        }
        _ => {}
    }
    if ins.data_checksums {
        match (ins.data_blocks_verified, ins.bad_data_blocks) {
            (Some(v), Some(bad)) => {
                let _ = writeln!(s, "data verified:     {v} blocks read, {bad} bad");
            }
            _ => s.push_str("data verified:     not read (inspect --verify-data, or rollfs scrub)\n"),
        }
    }
    match &ins.segments {
        Some(segs) => {
            let used = segs.iter().filter(|g| g.valid_blocks > 0).count();
            let full = segs.iter().filter(|g| g.valid_blocks == ins.segment_blocks).count();
            let wear: Vec<u64> = segs.iter().filter_map(|g| g.write_count).collect();
            let (wmin, wmax) = (wear.iter().min().copied().unwrap_or(0), wear.iter().max().copied().unwrap_or(0));
            let _ = writeln!(s, "segment use:       {used} in use, {full} full, {} free", segs.len() - used);
            let _ = writeln!(s, "wear (writes/seg): min {wmin}, max {wmax}");
            // A compact utilisation strip: one character per segment, 64 per line.
            const SHADES: &[u8] = b" .:-=+*#%@";
            s.push_str("utilisation:       (' ' free .. '@' full)\n");
            for row in segs.chunks(64) {
                let line: String = row
                    .iter()
                    .map(|g| {
                        let u = g.valid_blocks as usize * (SHADES.len() - 1) / ins.segment_blocks.max(1) as usize;
                        SHADES[u.min(SHADES.len() - 1)] as char
                    })
                    .collect();
                let _ = writeln!(s, "  |{line}|");
            }
        }
        None => {
            let _ = writeln!(s, "segment use:       unavailable: {}", ins.segment_error.as_deref().unwrap_or("-"));
        }
    }
    s
}

pub fn run(target: &Path, json: bool, svg_out: Option<&Path>, verify_data: bool) -> Result<i32> {
    let ins = inspect(target, verify_data)?;
    if let Some(p) = svg_out {
        let mut f = crate::secure::create_private(p, "write the SVG")?;
        std::io::Write::write_all(&mut f, svg(&ins).as_bytes())
            .map_err(|e| crate::error::CliError::io(p, "write the SVG", e))?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&ins).unwrap_or_default());
    } else {
        print!("{}", text(&ins));
    }
    Ok(0)
}
