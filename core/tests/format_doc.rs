//! Keeps docs/FORMAT.md and the code from drifting apart.
//!
//! The test parses every `| offset | size | field | meaning |` table of FORMAT.md (keyed by
//! the heading above it) and checks it three ways:
//!
//! 1. against the layout constants of the code (`SB_OFF_*`, `CP_OFF_*`, `FOOTER_OFF_*`,
//!    `inode::OFF_*`, `SIT_OFF_*`, dentry `HDR_*`/`REC_*`, entry sizes, ...): same fields,
//!    same order, same offsets and sizes;
//! 2. for internal consistency: the rows of each table tile its structure with no gap
//!    and no overlap;
//! 3. against the real encoders: a structure is encoded by the code with distinctive
//!    values and each field is read back at the offset and with the size the *document*
//!    states (this also covers fields whose offsets the code writes as literals).
//!
//! It also checks the magic numbers, the constants table, the log table, the example
//! geometry and the format version. Every offset table in the document must be known
//! here, and every table known here must be in the document.

use rollfs_core::checkpoint::{
    self, Checkpoint, LogPos, RawCpHeader, RawLogPos, RawNatJournalEntry, RawSitJournalEntry,
};
use rollfs_core::codec::{self, MetaFooter, RawMetaBlock, CRC_OFFSET};
use rollfs_core::dir::{DentryRecord, RawDentryBlock};
use rollfs_core::layout::*;
use rollfs_core::nat::{Nat, NatEntry, RawNatBlock, RawNatEntry};
use rollfs_core::node::{self, inode, inode::RawInode, NodeFooter, NodeType, RawDirectNode, RawNode, RawSlotNode};
use rollfs_core::sit::{RawSitBlock, RawSitEntry, SegEntry};
use rollfs_core::ssa::{OpenSummary, RawSsaBlock, RawSsaEntry, Ssa, Summary};
use rollfs_core::superblock::{self, Superblock};
use rollfs_core::Log;
use rollfs_core::{dir, nsrec, xattr, zero_block, Block, FileType, MemDevice};
use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

// ---- parsing ----------------------------------------------------------------------------

/// The document with all whitespace runs collapsed to one space, for prose checks that
/// must not depend on line wrapping.
fn flat() -> String {
    doc().split_whitespace().collect::<Vec<_>>().join(" ")
}

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/FORMAT.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    off: usize,
    size: usize,
    field: String,
}

/// A markdown table: the heading it is under, its header cells and its rows.
struct Table {
    heading: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(|c| c.trim().to_string()).collect()
}

fn tables(doc: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut lines = doc.lines().peekable();
    let mut in_code = false;
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_string();
            continue;
        }
        if line.trim_start().starts_with('|') {
            let header = cells(line);
            let sep = lines.next().unwrap_or("");
            assert!(
                sep.trim_start().starts_with("|--") || sep.trim_start().starts_with("| --"),
                "FORMAT.md: table under '{heading}' has no separator line after its header"
            );
            let mut rows = Vec::new();
            while let Some(l) = lines.peek() {
                if !l.trim_start().starts_with('|') {
                    break;
                }
                rows.push(cells(l));
                lines.next();
            }
            out.push(Table { heading: heading.clone(), header, rows });
        }
    }
    out
}

fn unticked(s: &str) -> &str {
    s.trim().trim_matches('`')
}

/// The offset tables of the document, by heading. Enforces the exact column set.
fn offset_tables(doc: &str) -> BTreeMap<String, Vec<Row>> {
    let mut m = BTreeMap::new();
    for t in tables(doc) {
        if t.header.iter().any(|h| h == "offset") {
            assert_eq!(
                t.header,
                ["offset", "size", "field", "meaning"],
                "FORMAT.md: table under '{}' must have the columns | offset | size | field | meaning |",
                t.heading
            );
        } else {
            continue;
        }
        let rows = t
            .rows
            .iter()
            .map(|r| {
                let num = |s: &str, what: &str| -> usize {
                    s.parse().unwrap_or_else(|_| {
                        panic!("FORMAT.md '{}': {what} '{s}' of field '{}' is not a decimal number", t.heading, r[2])
                    })
                };
                assert_eq!(r.len(), 4, "FORMAT.md '{}': row {r:?} does not have 4 cells", t.heading);
                Row { off: num(&r[0], "offset"), size: num(&r[1], "size"), field: unticked(&r[2]).to_string() }
            })
            .collect();
        assert!(m.insert(t.heading.clone(), rows).is_none(), "FORMAT.md: two offset tables under '{}'", t.heading);
    }
    m
}

// ---- what the code says -------------------------------------------------------------------

/// Size of the field a projection reaches (stable Rust has `offset_of!` but no field size).
fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// `(name, offset, size)` of a field of an on-disk type, taken from the type itself.
macro_rules! field {
    ($t:ty, $f:ident) => {
        field!($t, $f, stringify!($f))
    };
    ($t:ty, $f:ident, $name:expr) => {
        ($name, core::mem::offset_of!($t, $f), field_size(|s: &$t| &s.$f))
    };
}

/// One structure as the code defines it: its extent and its fields in order.
struct Spec {
    heading: &'static str,
    start: usize,
    end: usize,
    rows: Vec<(&'static str, usize, usize)>,
}

fn specs() -> Vec<Spec> {
    use superblock::*;
    vec![
        Spec {
            heading: "Superblock",
            start: 0,
            end: size_of::<RawSuperblock>(),
            rows: vec![
                field!(RawSuperblock, magic),
                field!(RawSuperblock, version_major),
                field!(RawSuperblock, version_minor),
                field!(RawSuperblock, feature_compat),
                field!(RawSuperblock, feature_incompat),
                field!(RawSuperblock, feature_ro_compat),
                field!(RawSuperblock, block_size_log2),
                field!(RawSuperblock, total_blocks),
                field!(RawSuperblock, segment_blocks),
                field!(RawSuperblock, cp_pack_blocks),
                field!(RawSuperblock, nat_start),
                field!(RawSuperblock, nat_blocks),
                field!(RawSuperblock, sit_start),
                field!(RawSuperblock, sit_blocks),
                field!(RawSuperblock, ssa_start),
                field!(RawSuperblock, main_start),
                field!(RawSuperblock, main_segments),
                field!(RawSuperblock, nid_count),
                field!(RawSuperblock, reserved_segments),
                field!(RawSuperblock, root_ino),
                field!(RawSuperblock, uuid),
                field!(RawSuperblock, label),
                field!(RawSuperblock, create_sec),
                field!(RawSuperblock, create_nsec),
                field!(RawSuperblock, hash_seed),
                field!(RawSuperblock, root_reserve),
                field!(RawSuperblock, max_blocks),
                field!(RawSuperblock, max_main_segments),
                field!(RawSuperblock, overprovision_pct),
                field!(RawSuperblock, reserved),
                field!(RawSuperblock, crc),
            ],
        },
        Spec {
            heading: "Checkpoint header",
            start: 0,
            end: size_of::<RawCpHeader>(),
            rows: vec![
                field!(RawCpHeader, magic),
                field!(RawCpHeader, pack),
                field!(RawCpHeader, version),
                field!(RawCpHeader, flags),
                field!(RawCpHeader, payload_blocks),
                field!(RawCpHeader, payload_crc),
                field!(RawCpHeader, nat_journal_count),
                field!(RawCpHeader, sit_journal_count),
                field!(RawCpHeader, orphan_count),
                field!(RawCpHeader, valid_blocks),
                field!(RawCpHeader, valid_nodes),
                field!(RawCpHeader, valid_inodes),
                field!(RawCpHeader, time_sec),
                field!(RawCpHeader, reserved_blocks),
                field!(RawCpHeader, size_total_blocks),
                field!(RawCpHeader, size_main_segments),
                field!(RawCpHeader, size_nat_blocks),
                field!(RawCpHeader, size_reserved_segments),
                field!(RawCpHeader, summary_count),
                field!(RawCpHeader, reserved0, "reserved"),
                field!(RawCpHeader, next_generation),
                field!(RawCpHeader, reserved1, "reserved"),
                field!(RawCpHeader, written_blocks),
                field!(RawCpHeader, reserved2, "reserved"),
                field!(RawCpHeader, logs),
                field!(RawCpHeader, reserved3, "reserved"),
                field!(RawCpHeader, crc),
            ],
        },
        Spec {
            heading: "Checkpoint log entry",
            start: 0,
            end: size_of::<RawLogPos>(),
            rows: vec![field!(RawLogPos, segno), field!(RawLogPos, blkoff), field!(RawLogPos, reserved)],
        },
        Spec {
            heading: "NAT journal entry",
            start: 0,
            end: size_of::<RawNatJournalEntry>(),
            rows: vec![
                field!(RawNatJournalEntry, nid),
                field!(RawNatJournalEntry, ino),
                field!(RawNatJournalEntry, addr),
            ],
        },
        Spec {
            heading: "Open-segment summary",
            start: 0,
            end: size_of::<rollfs_core::ssa::RawOpenSummaryHead>(),
            rows: vec![
                field!(rollfs_core::ssa::RawOpenSummaryHead, segno),
                field!(rollfs_core::ssa::RawOpenSummaryHead, entry_count),
            ],
        },
        Spec {
            heading: "SIT journal entry",
            start: 0,
            end: size_of::<RawSitJournalEntry>(),
            rows: vec![field!(RawSitJournalEntry, segno), field!(RawSitJournalEntry, entry)],
        },
        Spec { heading: "Orphan block(s)", start: 0, end: 4, rows: vec![("ino", 0, 4)] },
        Spec {
            heading: "Metadata block footer",
            start: offset_of!(RawMetaBlock, footer),
            end: size_of::<RawMetaBlock>(),
            rows: [
                field!(MetaFooter, magic),
                field!(MetaFooter, index),
                field!(MetaFooter, cp_version),
                field!(MetaFooter, reserved),
                field!(MetaFooter, crc),
            ]
            .into_iter()
            .map(|(n, o, s)| (n, META_FOOTER_OFFSET + o, s))
            .collect(),
        },
        Spec {
            heading: "NAT block",
            start: 0,
            end: size_of::<RawNatBlock>(),
            rows: vec![field!(RawNatBlock, entries), field!(RawNatBlock, footer)],
        },
        Spec {
            heading: "NAT entry",
            start: 0,
            end: size_of::<RawNatEntry>(),
            rows: vec![field!(RawNatEntry, ino), field!(RawNatEntry, addr)],
        },
        Spec {
            heading: "SIT block",
            start: 0,
            end: size_of::<RawSitBlock>(),
            rows: vec![field!(RawSitBlock, entries), field!(RawSitBlock, reserved), field!(RawSitBlock, footer)],
        },
        Spec {
            heading: "SIT entry",
            start: 0,
            end: size_of::<RawSitEntry>(),
            rows: vec![
                field!(RawSitEntry, valid),
                field!(RawSitEntry, seg_type, "type"),
                field!(RawSitEntry, flags),
                field!(RawSitEntry, wear),
                field!(RawSitEntry, mtime),
                field!(RawSitEntry, bitmap),
            ],
        },
        Spec {
            heading: "SSA block",
            start: 0,
            end: size_of::<RawSsaBlock>(),
            rows: vec![field!(RawSsaBlock, entries), field!(RawSsaBlock, reserved), field!(RawSsaBlock, footer)],
        },
        Spec {
            heading: "SSA entry",
            start: 0,
            end: size_of::<RawSsaEntry>(),
            rows: vec![field!(RawSsaEntry, nid), field!(RawSsaEntry, ofs)],
        },
        Spec {
            heading: "Node footer",
            start: offset_of!(RawNode, footer),
            end: size_of::<RawNode>(),
            rows: [
                field!(NodeFooter, nid),
                field!(NodeFooter, ino),
                field!(NodeFooter, flags),
                field!(NodeFooter, ofs),
                field!(NodeFooter, cp_version),
                field!(NodeFooter, next_blkaddr),
                field!(NodeFooter, crc),
            ]
            .into_iter()
            .map(|(n, o, s)| (n, NODE_FOOTER_OFFSET + o, s))
            .collect(),
        },
        Spec {
            heading: "Inode",
            start: 0,
            end: size_of::<RawInode>(),
            rows: vec![
                field!(RawInode, mode),
                field!(RawInode, iflags),
                field!(RawInode, uid),
                field!(RawInode, gid),
                field!(RawInode, links),
                field!(RawInode, size),
                field!(RawInode, blocks),
                field!(RawInode, atime_sec),
                field!(RawInode, atime_nsec),
                field!(RawInode, mtime_nsec),
                field!(RawInode, mtime_sec),
                field!(RawInode, ctime_sec),
                field!(RawInode, ctime_nsec),
                field!(RawInode, crtime_nsec),
                field!(RawInode, crtime_sec),
                field!(RawInode, generation),
                field!(RawInode, xattr_nid),
                field!(RawInode, pino),
                field!(RawInode, rdev),
                field!(RawInode, dir_depth),
                field!(RawInode, name_len),
                field!(RawInode, reserved0, "reserved"),
                field!(RawInode, name),
                field!(RawInode, reserved1, "reserved"),
                field!(RawInode, trunc_block),
                field!(RawInode, batch_crc),
                field!(RawInode, batch_blocks),
                field!(RawInode, batch_records),
                field!(RawInode, reserved2, "reserved"),
                field!(RawInode, addrs),
                field!(RawInode, data_crcs),
                field!(RawInode, nids),
                field!(RawInode, footer),
            ],
        },
        Spec {
            heading: "Direct node",
            start: 0,
            end: size_of::<RawDirectNode>(),
            rows: vec![field!(RawDirectNode, addrs), field!(RawDirectNode, data_crcs), field!(RawDirectNode, footer)],
        },
        Spec {
            heading: "Indirect node",
            start: 0,
            end: size_of::<RawSlotNode>(),
            rows: vec![field!(RawSlotNode, slots, "nids"), field!(RawSlotNode, footer)],
        },
        Spec {
            heading: "Xattr node",
            start: 0,
            end: BLOCK_SIZE,
            rows: vec![field!(RawNode, payload, "entries"), field!(RawNode, footer)],
        },
        Spec {
            heading: "Xattr entry",
            start: 0,
            end: xattr::XATTR_ENTRY_HEADER,
            rows: vec![("name_len", 0, 1), ("value_len", 1, 2)],
        },
        Spec {
            heading: "Record node",
            start: 0,
            end: rollfs_core::layout::BLOCK_SIZE,
            rows: vec![
                field!(nsrec::RawRecordNodeHeader, count),
                field!(nsrec::RawRecordNodeHeader, bytes),
                field!(nsrec::RawRecordNodeHeader, first_seq),
                ("records", nsrec::RECORD_NODE_HEADER_LEN, nsrec::RECORD_NODE_BYTES_MAX),
                ("footer", NODE_FOOTER_OFFSET, size_of::<NodeFooter>()),
            ],
        },
        Spec {
            heading: "Namespace record",
            start: 0,
            end: size_of::<nsrec::RawRecord>(),
            rows: vec![
                field!(nsrec::RawRecord, op),
                field!(nsrec::RawRecord, flags),
                field!(nsrec::RawRecord, len),
                field!(nsrec::RawRecord, name_len),
                field!(nsrec::RawRecord, name2_len),
                field!(nsrec::RawRecord, reserved),
                field!(nsrec::RawRecord, ino),
                field!(nsrec::RawRecord, dir),
                field!(nsrec::RawRecord, dir2),
                field!(nsrec::RawRecord, ino2),
                field!(nsrec::RawRecord, time_sec),
                field!(nsrec::RawRecord, time_nsec),
                field!(nsrec::RawRecord, reserved2),
            ],
        },
        Spec {
            heading: "Create attributes",
            start: 0,
            end: size_of::<nsrec::RawCreateAttrs>(),
            rows: vec![
                field!(nsrec::RawCreateAttrs, mode),
                field!(nsrec::RawCreateAttrs, iflags),
                field!(nsrec::RawCreateAttrs, uid),
                field!(nsrec::RawCreateAttrs, gid),
                field!(nsrec::RawCreateAttrs, rdev),
                field!(nsrec::RawCreateAttrs, generation),
                field!(nsrec::RawCreateAttrs, target_len),
                field!(nsrec::RawCreateAttrs, reserved),
            ],
        },
        Spec {
            heading: "Dentry block",
            start: 0,
            end: size_of::<RawDentryBlock>(),
            rows: vec![
                field!(RawDentryBlock, magic),
                field!(RawDentryBlock, idx),
                field!(RawDentryBlock, overflow),
                field!(RawDentryBlock, count),
                field!(RawDentryBlock, reserved1),
                field!(RawDentryBlock, bitmap),
                field!(RawDentryBlock, records),
                field!(RawDentryBlock, names),
                field!(RawDentryBlock, tail),
                field!(RawDentryBlock, crc),
            ],
        },
        Spec {
            heading: "Dentry record",
            start: 0,
            end: size_of::<DentryRecord>(),
            rows: vec![
                field!(DentryRecord, hash),
                field!(DentryRecord, ino),
                field!(DentryRecord, name_len),
                field!(DentryRecord, file_type),
                field!(DentryRecord, reserved),
            ],
        },
    ]
}

// ---- 1 and 2: tables against constants, and tiling ---------------------------------------

#[test]
fn offset_tables_match_the_code() {
    let doc = doc();
    let doc_tables = offset_tables(&doc);
    let specs = specs();
    let mut errors = Vec::new();
    for heading in doc_tables.keys() {
        if !specs.iter().any(|s| s.heading == heading) {
            errors.push(format!("offset table under '{heading}' is not checked by format_doc.rs (add a Spec)"));
        }
    }
    for spec in &specs {
        let Some(rows) = doc_tables.get(spec.heading) else {
            errors.push(format!("FORMAT.md has no offset table under a heading '{}'", spec.heading));
            continue;
        };
        let want: Vec<Row> = spec.rows.iter().map(|&(f, off, size)| Row { off, size, field: f.to_string() }).collect();
        // Code-side sanity: the spec itself must tile its structure.
        check_tiling(&format!("code ({})", spec.heading), &want, spec.start, spec.end, &mut errors);
        if *rows != want {
            let n = rows.len().max(want.len());
            for i in 0..n {
                match (rows.get(i), want.get(i)) {
                    (Some(d), Some(w)) if d != w => errors.push(format!(
                        "'{}' row {i}: FORMAT.md says {} at {} size {}, code says {} at {} size {}",
                        spec.heading, d.field, d.off, d.size, w.field, w.off, w.size
                    )),
                    (Some(d), None) => {
                        errors.push(format!("'{}': FORMAT.md has an extra row {} ({})", spec.heading, i, d.field))
                    }
                    (None, Some(w)) => {
                        errors.push(format!("'{}': FORMAT.md lacks the row for {}", spec.heading, w.field))
                    }
                    _ => {}
                }
            }
        }
        check_tiling(&format!("FORMAT.md ({})", spec.heading), rows, spec.start, spec.end, &mut errors);
    }
    assert!(errors.is_empty(), "FORMAT.md and the code disagree:\n  {}", errors.join("\n  "));
}

fn check_tiling(what: &str, rows: &[Row], start: usize, end: usize, errors: &mut Vec<String>) {
    let mut pos = start;
    for r in rows {
        if r.off != pos {
            errors.push(format!("{what}: {} starts at {} but the previous field ends at {pos}", r.field, r.off));
        }
        pos = r.off + r.size;
    }
    if pos != end {
        errors.push(format!("{what}: fields end at {pos}, the structure at {end}"));
    }
}

// ---- 3: the real encoders, read back at the document's offsets ----------------------------

struct Doc(BTreeMap<String, Vec<Row>>);

impl Doc {
    fn load() -> Doc {
        Doc(offset_tables(&doc()))
    }
    /// (offset, size) of the first `field` of the table under `heading`.
    fn at(&self, heading: &str, field: &str) -> (usize, usize) {
        let rows = self.0.get(heading).unwrap_or_else(|| panic!("FORMAT.md: no table '{heading}'"));
        let r = rows
            .iter()
            .find(|r| r.field == field)
            .unwrap_or_else(|| panic!("FORMAT.md: no field '{field}' in '{heading}'"));
        (r.off, r.size)
    }
    /// Reads `field` of `heading` from `b` (at `base` + the stated offset) as a
    /// little-endian integer of the stated size.
    fn read(&self, b: &[u8], base: usize, heading: &str, field: &str) -> u64 {
        let (off, size) = self.at(heading, field);
        assert!(size <= 8, "{heading}.{field} is not an integer");
        le(&b[base + off..base + off + size])
    }
    /// Checks every listed integer field; returns mismatches.
    fn expect(&self, b: &[u8], base: usize, heading: &str, fields: &[(&str, u64)]) {
        let mut errs = Vec::new();
        for &(field, want) in fields {
            let got = self.read(b, base, heading, field);
            if got != want {
                errs.push(format!(
                    "{heading}.{field}: encoder wrote {want:#x}, FORMAT.md's offset/size reads {got:#x}"
                ));
            }
        }
        assert!(errs.is_empty(), "{}", errs.join("\n"));
    }
}

fn le(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |v, &b| (v << 8) | b as u64)
}

fn small_geo() -> Geometry {
    Geometry::compute(2048, 16, 5).unwrap()
}

#[test]
fn superblock_encoder_matches_the_doc() {
    let d = Doc::load();
    let h = "Superblock";
    let geometry = Geometry {
        total_blocks: 0x0102_0304_0506_0708,
        segment_blocks: 0x1112_1314,
        cp_pack_blocks: 0x2122_2324,
        nat_start: 0x3132_3334,
        nat_blocks: 0x4142_4344,
        sit_start: 0x5152_5354,
        sit_blocks: 0x6162_6364,
        ssa_start: 0x7172_7374,
        main_start: 0x8182_8384,
        main_segments: 0x9192_9394,
        nid_count: 0xA1A2_A3A4,
        reserved_segments: 0xB1B2_B3B4,
        max_main_segments: 0xB5B6_B7B8,
    };
    let uuid: [u8; 16] = core::array::from_fn(|i| 0xC0 + i as u8);
    let sb = Superblock {
        version_major: 0xD1D2,
        version_minor: 0xD3D4,
        feature_compat: 0xE1E2_E3E4,
        feature_incompat: 0xE5E6_E7E8,
        feature_ro_compat: 0xE9EA_EBEC,
        geometry,
        root_ino: 0xF1F2_F3F4,
        uuid,
        label: b"a label of exactly thirty-two by".to_vec(),
        create_sec: -2,
        create_nsec: 0x0A0B_0C0D,
        hash_seed: core::array::from_fn(|i| 0x40 + i as u8),
        root_reserve_pct: Some(7),
        max_blocks: 0x1718_191A_1B1C_1D1E,
        overprovision_pct: 0x2728_292A,
    };
    let b = sb.encode();
    let g = &geometry;
    d.expect(
        &b[..],
        0,
        h,
        &[
            ("magic", superblock::SB_MAGIC as u64),
            ("version_major", 0xD1D2),
            ("version_minor", 0xD3D4),
            ("feature_compat", 0xE1E2_E3E4),
            ("feature_incompat", 0xE5E6_E7E8),
            ("feature_ro_compat", 0xE9EA_EBEC),
            ("block_size_log2", 12),
            ("total_blocks", g.total_blocks),
            ("segment_blocks", g.segment_blocks as u64),
            ("cp_pack_blocks", g.cp_pack_blocks as u64),
            ("nat_start", g.nat_start as u64),
            ("nat_blocks", g.nat_blocks as u64),
            ("sit_start", g.sit_start as u64),
            ("sit_blocks", g.sit_blocks as u64),
            ("ssa_start", g.ssa_start as u64),
            ("main_start", g.main_start as u64),
            ("main_segments", g.main_segments as u64),
            ("nid_count", g.nid_count as u64),
            ("reserved_segments", g.reserved_segments as u64),
            ("root_ino", 0xF1F2_F3F4),
            ("create_sec", u64::MAX - 1),
            ("create_nsec", 0x0A0B_0C0D),
            ("root_reserve", 8),
            ("max_blocks", 0x1718_191A_1B1C_1D1E),
            ("max_main_segments", g.max_main_segments as u64),
            ("overprovision_pct", 0x2728_292A),
            ("crc", codec::crc(&b[..CRC_OFFSET]) as u64),
        ],
    );
    let (o, s) = d.at(h, "uuid");
    assert_eq!(&b[o..o + s], &uuid);
    let (o, s) = d.at(h, "label");
    assert_eq!(&b[o..o + s], b"a label of exactly thirty-two by");
    let (o, s) = d.at(h, "hash_seed");
    assert_eq!(&b[o..o + s], &sb.hash_seed);
    let (o, s) = d.at(h, "reserved");
    assert!(b[o..o + s].iter().all(|&x| x == 0));
    assert_eq!(BLOCK_SIZE, 1 << BLOCK_SIZE_LOG2);
}

#[test]
fn checkpoint_encoder_matches_the_doc() {
    let d = Doc::load();
    let g = small_geo();
    let mut cp = Checkpoint {
        version: 0x0102_0304_0506_0708,
        flags: 0x1112_1314,
        valid_blocks: 0x2122_2324_2526_2728,
        valid_nodes: 0x3132_3334,
        valid_inodes: 0x4142_4344,
        time_sec: 0x5152_5354_5556_5758,
        next_generation: 0x6162_6364,
        written_blocks: 0x7172_7374_7576_7778,
        reserved_blocks: 0x8182_8384,
        nat_slots: (0..g.nat_blocks).map(|i| (i % 2) as u8).collect(),
        sit_slots: vec![1; g.sit_blocks as usize],
        ssa_slots: (0..g.main_segments).map(|i| (i % 3 == 0) as u8).collect(),
        ..Default::default()
    };
    for (i, l) in cp.logs.iter_mut().enumerate() {
        *l = LogPos { segno: 10 + i as u32, blkoff: 20 + i as u32 };
    }
    cp.nat_journal.push((77, NatEntry { ino: 66, addr: g.main_start + 5 }));
    cp.nat_journal.push((78, NatEntry { ino: 78, addr: g.main_start + 9 }));
    let mut se =
        SegEntry { valid: 2, seg_type: 3, wear: 0x0102_0304, mtime: 0x0A0B_0C0D_0E0F_1011, ..Default::default() };
    se.bitmap[0] = 0b101;
    cp.sit_journal.push((7, se));
    cp.orphans = vec![41, 42, 43];
    // Two open-segment summaries (FEATURE_INCOMPAT_CP_SUMMARIES), of segments logs fill.
    cp.summaries = vec![
        OpenSummary {
            segno: 11,
            entries: vec![Summary { nid: 0x0102_0304, ofs: 0x0506 }, Summary { nid: 9, ofs: 0x8003 }],
        },
        OpenSummary { segno: 13, entries: vec![] },
    ];
    let blocks = cp.encode(&g, 1).unwrap();
    let hd = &blocks[0];
    let payload: Vec<u8> = blocks[1..].iter().flat_map(|b| b.iter().copied()).collect();
    let h = "Checkpoint header";
    d.expect(
        &hd[..],
        0,
        h,
        &[
            ("magic", checkpoint::CP_MAGIC as u64),
            ("pack", 1),
            ("version", cp.version),
            ("flags", cp.flags as u64),
            ("payload_blocks", (blocks.len() - 1) as u64),
            ("payload_crc", codec::crc(&payload) as u64),
            ("nat_journal_count", 2),
            ("sit_journal_count", 1),
            ("orphan_count", 3),
            ("summary_count", 2),
            ("valid_blocks", cp.valid_blocks),
            ("valid_nodes", cp.valid_nodes as u64),
            ("valid_inodes", cp.valid_inodes as u64),
            ("time_sec", cp.time_sec as u64),
            ("next_generation", cp.next_generation as u64),
            ("written_blocks", cp.written_blocks),
            ("reserved_blocks", cp.reserved_blocks),
            ("crc", codec::crc(&hd[..CRC_OFFSET]) as u64),
        ],
    );
    for r in d.0[h].iter().filter(|r| r.field == "reserved" || r.field.starts_with("size_")) {
        assert!(hd[r.off..r.off + r.size].iter().all(|&x| x == 0), "checkpoint header reserved bytes at {}", r.off);
    }
    // On an image with room to grow (FEATURE_INCOMPAT_GROW) the header records the size;
    // above, without room, those fields are zero.
    let g2 = Geometry::compute_with_max(2048, 8192, 16, 5).unwrap();
    let mut cp2 = Checkpoint {
        nat_slots: vec![0; g2.nat_blocks as usize],
        sit_slots: vec![0; g2.sit_blocks as usize],
        ssa_slots: vec![0; g2.main_segments as usize],
        geometry: Some(g2),
        ..Default::default()
    };
    for (i, l) in cp2.logs.iter_mut().enumerate() {
        l.segno = i as u32;
    }
    let hd2 = &cp2.encode(&g2, 0).unwrap()[0];
    d.expect(
        &hd2[..],
        0,
        h,
        &[
            ("size_total_blocks", g2.total_blocks),
            ("size_main_segments", g2.main_segments as u64),
            ("size_nat_blocks", g2.nat_blocks as u64),
            ("size_reserved_segments", g2.reserved_segments as u64),
        ],
    );
    // Log entries.
    let (logs_off, logs_size) = d.at(h, "logs");
    let entry_size = span(&d, "Checkpoint log entry");
    assert_eq!(logs_size, LOG_COUNT * entry_size, "logs area = six log entries");
    for (i, l) in cp.logs.iter().enumerate() {
        d.expect(
            &hd[..],
            logs_off + i * entry_size,
            "Checkpoint log entry",
            &[("segno", l.segno as u64), ("blkoff", l.blkoff as u64), ("reserved", 0)],
        );
    }
    // Payload stream: three bitmaps, NAT journal, SIT journal, orphans.
    let mut pos = 0;
    for (slots, n) in [(&cp.nat_slots, g.nat_blocks), (&cp.sit_slots, g.sit_blocks), (&cp.ssa_slots, g.main_segments)] {
        let bytes = bitmap_bytes(n);
        for (i, &s) in slots.iter().enumerate() {
            assert_eq!((payload[pos + i / 8] >> (i % 8)) & 1, s, "slot bitmap, LSB first");
        }
        pos += bytes;
    }
    let nat_je = span(&d, "NAT journal entry");
    for &(nid, e) in &cp.nat_journal {
        d.expect(
            &payload,
            pos,
            "NAT journal entry",
            &[("nid", nid as u64), ("ino", e.ino as u64), ("addr", e.addr as u64)],
        );
        pos += nat_je;
    }
    let sit_je = span(&d, "SIT journal entry");
    for &(segno, e) in &cp.sit_journal {
        d.expect(&payload, pos, "SIT journal entry", &[("segno", segno as u64)]);
        let (eo, _) = d.at("SIT journal entry", "entry");
        check_sit_entry(&d, &payload[pos + eo..], &e);
        pos += sit_je;
    }
    let orphan = span(&d, "Orphan block(s)");
    for &o in &cp.orphans {
        d.expect(&payload, pos, "Orphan block(s)", &[("ino", o as u64)]);
        pos += orphan;
    }
    let head = span(&d, "Open-segment summary");
    let entry = span(&d, "SSA entry");
    for sum in &cp.summaries {
        let count = sum.entries.len() as u64;
        d.expect(&payload, pos, "Open-segment summary", &[("segno", sum.segno as u64), ("entry_count", count)]);
        pos += head;
        for e in &sum.entries {
            d.expect(&payload, pos, "SSA entry", &[("nid", e.nid as u64), ("ofs", e.ofs as u64)]);
            pos += entry;
        }
    }
    assert!(payload[pos..].iter().all(|&x| x == 0), "payload padding is zero");

    // The stated fixed payload size: full journals and orphan list.
    assert_eq!(
        CP_NAT_JOURNAL_MAX as usize * nat_je + CP_SIT_JOURNAL_MAX as usize * sit_je + CP_ORPHAN_MAX as usize * orphan,
        12208
    );
    assert!(flat().contains("12208 bytes plus the three bitmaps"));
}

/// Size of an entry structure as the document tiles it.
fn span(d: &Doc, heading: &str) -> usize {
    d.0[heading].iter().map(|r| r.off + r.size).max().unwrap()
}

fn check_sit_entry(d: &Doc, b: &[u8], e: &SegEntry) {
    let h = "SIT entry";
    d.expect(
        b,
        0,
        h,
        &[
            ("valid", e.valid as u64),
            ("type", e.seg_type as u64),
            ("flags", 0),
            ("wear", e.wear as u64),
            ("mtime", e.mtime),
        ],
    );
    let (o, s) = d.at(h, "bitmap");
    assert_eq!(&b[o..o + s], &e.bitmap[..]);
}

fn check_meta_footer(d: &Doc, b: &Block, magic: u32, index: u32, cp_version: u64) {
    d.expect(
        &b[..],
        0,
        "Metadata block footer",
        &[
            ("magic", magic as u64),
            ("index", index as u64),
            ("cp_version", cp_version),
            ("reserved", 0),
            ("crc", codec::crc(&b[..CRC_OFFSET]) as u64),
        ],
    );
    // The footer row of the block tables points at the footer.
    assert_eq!(d.at("NAT block", "footer").0, d.0["Metadata block footer"][0].off);
}

#[test]
fn nat_sit_ssa_encoders_match_the_doc() {
    let d = Doc::load();
    let g = small_geo();
    // NAT
    let mut nat = Nat::new_empty(&g);
    let nid = NAT_ENTRIES_PER_BLOCK + 5; // block 1, entry 5
    nat.set(nid, NatEntry { ino: 0x0102_0304, addr: 0x1112_1314 });
    let b = nat.encode_block(1, 0x2122_2324_2526);
    let (eo, esz) = d.at("NAT block", "entries");
    let per = span(&d, "NAT entry");
    assert_eq!(esz / per, NAT_ENTRIES_PER_BLOCK as usize);
    d.expect(&b[..], eo + 5 * per, "NAT entry", &[("ino", 0x0102_0304), ("addr", 0x1112_1314)]);
    check_meta_footer(&d, &b, rollfs_core::nat::NAT_MAGIC, 1, 0x2122_2324_2526);
    // SIT entry and block
    let mut e =
        SegEntry { valid: 3, seg_type: 5, wear: 0x0A0B_0C0D, mtime: 0x0102_0304_0506_0708, ..Default::default() };
    e.bitmap[0] = 0b11;
    e.bitmap[1] = 0b1;
    let mut buf = [0u8; SIT_ENTRY_SIZE];
    e.encode(&mut buf);
    check_sit_entry(&d, &buf, &e);
    assert_eq!(span(&d, "SIT entry"), SIT_ENTRY_SIZE);
    let mut s = rollfs_core::sit::Sit::new_empty(&g);
    s.set_type_and_wear(1, 4, 9);
    let b = s.encode_block(0, 12);
    let per = span(&d, "SIT entry");
    d.expect(&b[..], per, "SIT entry", &[("type", 4), ("wear", 9)]);
    check_meta_footer(&d, &b, rollfs_core::sit::SIT_MAGIC, 0, 12);
    // SSA
    let mut ssa = Ssa::new_empty(&g);
    ssa.reset(2);
    let mut dev = MemDevice::new(g.total_blocks);
    let addr = g.seg_start(2) + 3;
    ssa.set(&mut dev, &g, addr, Summary { nid: 0x0102_0304, ofs: 0x0A0B }, 1).unwrap();
    let b = ssa.encode(2, 5);
    let per = span(&d, "SSA entry");
    let (eo, esz) = d.at("SSA block", "entries");
    assert_eq!(esz / per, SEGMENT_BLOCKS_MAX as usize);
    d.expect(&b[..], eo + 3 * per, "SSA entry", &[("nid", 0x0102_0304), ("ofs", 0x0A0B)]);
    check_meta_footer(&d, &b, rollfs_core::ssa::SSA_MAGIC, 2, 5);
}

#[test]
fn node_encoders_match_the_doc() {
    let d = Doc::load();
    let uuid: [u8; 16] = core::array::from_fn(|i| 0x30 + i as u8);
    let seed = codec::crc(&uuid);
    // Footer of a direct node with the fsync mark.
    let mut b = zero_block();
    node::init_footer(&mut b, 0x0102_0304, 0x1112_1314, NodeType::Direct, 0x2122_2324);
    node::set_footer_flags(&mut b, node::FLAG_FSYNC | node::FLAG_DENTRY);
    node::set_ptr(&mut b, 7, 0xABCD_EF01, 0x5152_5354);
    node::seal_for_write(&mut b, 0x3132_3334_3536_3738, 0x4142_4344, seed);
    // The seeded CRC is crc32c(uuid ‖ block[0..4092]).
    let mut cat = uuid.to_vec();
    cat.extend_from_slice(&b[..CRC_OFFSET]);
    d.expect(
        &b[..],
        0,
        "Node footer",
        &[
            ("nid", 0x0102_0304),
            ("ino", 0x1112_1314),
            ("flags", ((NodeType::Direct as u64) << 8) | (node::FLAG_FSYNC | node::FLAG_DENTRY) as u64),
            ("ofs", 0x2122_2324),
            ("cp_version", 0x3132_3334_3536_3738),
            ("next_blkaddr", 0x4142_4344),
            ("crc", codec::crc(&cat) as u64),
        ],
    );
    assert!(node::validate(&b, 0, 0x0102_0304, seed).is_ok());
    let (ao, asz) = d.at("Direct node", "addrs");
    assert_eq!(le(&b[ao + 7 * 4..ao + 8 * 4]), 0xABCD_EF01);
    assert_eq!(asz / 4, ADDRS_PER_BLOCK as usize);
    let (co, csz) = d.at("Direct node", "data_crcs");
    assert_eq!(le(&b[co + 7 * 4..co + 8 * 4]), 0x5152_5354);
    assert_eq!(csz / 4, ADDRS_PER_BLOCK as usize);
    assert_eq!(d.at("Direct node", "footer").0, d.0["Node footer"][0].off);

    // Inode fields through the setters.
    let mut b = zero_block();
    inode::set_mode(&mut b, 0o100644);
    inode::set_iflags(&mut b, 0x0102);
    inode::set_uid(&mut b, 0x1112_1314);
    inode::set_gid(&mut b, 0x2122_2324);
    inode::set_links(&mut b, 0x3132_3334);
    inode::set_size(&mut b, 0x4142_4344_4546_4748);
    inode::set_blocks(&mut b, 0x5152_5354_5556_5758);
    let t = |s: i64, n: u32| rollfs_core::Timestamp::new(s, n);
    inode::set_time(&mut b, inode::OFF_ATIME_SEC, inode::OFF_ATIME_NSEC, t(0x6162_6364_6566, 0x6768_6970));
    inode::set_time(&mut b, inode::OFF_MTIME_SEC, inode::OFF_MTIME_NSEC, t(0x7172_7374_7576, 0x7778_7980));
    inode::set_time(&mut b, inode::OFF_CTIME_SEC, inode::OFF_CTIME_NSEC, t(0x0A0B_0C0D_0E0F, 0x1A1B_1C1D));
    inode::set_time(&mut b, inode::OFF_CRTIME_SEC, inode::OFF_CRTIME_NSEC, t(0x2A2B_2C2D_2E2F, 0x3A3B_3C3D));
    inode::set_generation(&mut b, 0x4A4B_4C4D);
    inode::set_xattr_nid(&mut b, 0x5A5B_5C5D);
    inode::set_pino(&mut b, 0x6A6B_6C6D);
    inode::set_rdev(&mut b, 0x7A7B_7C7D);
    inode::set_dir_depth(&mut b, 0x0C0D_0E0F);
    inode::set_name(&mut b, b"some-name.txt");
    inode::set_batch(&mut b, 0x0102_0304_0506_0708, 0x1112_1314, 0x2122_2324);
    inode::set_ptr(&mut b, ADDRS_PER_INODE - 1, 0x1C1D_1E1F, 0x3C3D_3E3F);
    inode::set_nid(&mut b, NIDS_PER_INODE - 1, 0x2C2D_2E2F);
    let h = "Inode";
    d.expect(
        &b[..],
        0,
        h,
        &[
            ("mode", 0o100644),
            ("iflags", 0x0102),
            ("uid", 0x1112_1314),
            ("gid", 0x2122_2324),
            ("links", 0x3132_3334),
            ("size", 0x4142_4344_4546_4748),
            ("blocks", 0x5152_5354_5556_5758),
            ("atime_sec", 0x6162_6364_6566),
            ("atime_nsec", 0x6768_6970),
            ("mtime_sec", 0x7172_7374_7576),
            ("mtime_nsec", 0x7778_7980),
            ("ctime_sec", 0x0A0B_0C0D_0E0F),
            ("ctime_nsec", 0x1A1B_1C1D),
            ("crtime_sec", 0x2A2B_2C2D_2E2F),
            ("crtime_nsec", 0x3A3B_3C3D),
            ("generation", 0x4A4B_4C4D),
            ("xattr_nid", 0x5A5B_5C5D),
            ("pino", 0x6A6B_6C6D),
            ("rdev", 0x7A7B_7C7D),
            ("dir_depth", 0x0C0D_0E0F),
            ("name_len", 13),
            ("trunc_block", 0x0102_0304_0506_0708),
            ("batch_crc", 0x1112_1314),
            ("batch_blocks", 0x2122_2324),
        ],
    );
    let (no, _) = d.at(h, "name");
    assert_eq!(&b[no..no + 13], b"some-name.txt");
    let (ao, asz) = d.at(h, "addrs");
    assert_eq!(le(&b[ao + asz - 4..ao + asz]), 0x1C1D_1E1F);
    assert_eq!(asz / 4, ADDRS_PER_INODE as usize);
    let (co, csz) = d.at(h, "data_crcs");
    assert_eq!(le(&b[co + csz - 4..co + csz]), 0x3C3D_3E3F);
    assert_eq!(csz / 4, ADDRS_PER_INODE as usize);
    let (io, isz) = d.at(h, "nids");
    assert_eq!(le(&b[io + isz - 4..io + isz]), 0x2C2D_2E2F);
    assert_eq!(isz / 4, NIDS_PER_INODE);

    // The batch CRC as FORMAT.md states it (crc32c over the concatenated little-endian
    // CRC32Cs of the data blocks) equals the running form fsync and recovery compute.
    let blocks: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i; BLOCK_SIZE]).collect();
    let running = blocks.iter().fold(0u32, |acc, d| codec::crc_seeded(acc, &codec::crc(d).to_le_bytes()));
    let stated: Vec<u8> = blocks.iter().flat_map(|d| codec::crc(d).to_le_bytes()).collect();
    assert_eq!(running, codec::crc(&stated));

    // Indirect node slots.
    let mut b = zero_block();
    node::set_slot(&mut b, NIDS_PER_BLOCK - 1, 0x0102_0304);
    let (o, s) = d.at("Indirect node", "nids");
    assert_eq!(le(&b[o + s - 4..o + s]), 0x0102_0304);

    // Xattr node entries.
    let mut m = xattr::XattrMap::new();
    m.insert(b"user.k".to_vec(), vec![9u8; 300]);
    let mut b = zero_block();
    xattr::encode(&m, &mut b).unwrap();
    let (eo, _) = d.at("Xattr node", "entries");
    d.expect(&b[..], eo, "Xattr entry", &[("name_len", 6), ("value_len", 300)]);
    let hdr = span(&d, "Xattr entry");
    assert_eq!(&b[eo + hdr..eo + hdr + 6], b"user.k");
    assert_eq!(b[eo + hdr + 6 + 300], 0, "list ends with a zero name_len");
}

/// An in-memory directory for the dentry check.
struct MemDir(BTreeMap<u64, Box<Block>>);

impl dir::DirBlocks for MemDir {
    fn read(&mut self, idx: u64) -> rollfs_core::Result<Option<Box<Block>>> {
        Ok(self.0.get(&idx).cloned())
    }
    fn write(&mut self, idx: u64, block: Box<Block>) -> rollfs_core::Result<()> {
        self.0.insert(idx, block);
        Ok(())
    }
}

/// Namespace records (FORMAT.md, *Record node*): a record node packed by the code, read back
/// at the document's offsets.
#[test]
fn record_node_encoder_matches_the_doc() {
    use nsrec::{CreateAttrs, NsRecord};
    let d = Doc::load();
    let t = rollfs_core::Timestamp::new(0x0102_0304_0506_0708, 0x1122_3344);
    let create = NsRecord::Create {
        dir: 0x0a0b_0c0d,
        name: b"abc".to_vec(),
        ino: 0x1a1b_1c1d,
        attrs: CreateAttrs {
            mode: 0o120777,
            iflags: 1 << 3,
            uid: 0x2122_2324,
            gid: 0x3132_3334,
            rdev: 0x4142_4344,
            generation: 0x5152_5354,
            target: b"target!".to_vec(),
        },
        time: t,
    };
    let rename = NsRecord::Rename {
        dir: 7,
        name: b"x".to_vec(),
        ino: 8,
        dir2: 9,
        name2: b"yz".to_vec(),
        ino2: 10,
        exchange: true,
        time: t,
    };
    let mut b = zero_block();
    assert_eq!(nsrec::pack(&mut b, &[create.clone(), rename.clone()], 0x6162_6364), 2);
    let create_len = span(&d, "Namespace record") + span(&d, "Create attributes") + 3 + 7;
    d.expect(
        &b[..],
        0,
        "Record node",
        &[("count", 2), ("bytes", (create_len + span(&d, "Namespace record") + 3) as u64), ("first_seq", 0x6162_6364)],
    );
    let (ro, _) = d.at("Record node", "records");
    d.expect(
        &b[..],
        ro,
        "Namespace record",
        &[
            ("op", 1),
            ("flags", 0),
            ("len", create_len as u64),
            ("name_len", 3),
            ("name2_len", 0),
            ("ino", 0x1a1b_1c1d),
            ("dir", 0x0a0b_0c0d),
            ("dir2", 0),
            ("ino2", 0),
            ("time_sec", 0x0102_0304_0506_0708),
            ("time_nsec", t.nsec as u64),
        ],
    );
    let ao = ro + span(&d, "Namespace record");
    d.expect(
        &b[..],
        ao,
        "Create attributes",
        &[
            ("mode", 0o120777),
            ("iflags", 1 << 3),
            ("uid", 0x2122_2324),
            ("gid", 0x3132_3334),
            ("rdev", 0x4142_4344),
            ("generation", 0x5152_5354),
            ("target_len", 7),
        ],
    );
    let names = ao + span(&d, "Create attributes");
    assert_eq!(&b[names..names + 10], b"abctarget!", "name, then the symlink target");
    let r2 = ro + create_len;
    d.expect(
        &b[..],
        r2,
        "Namespace record",
        &[
            ("op", 4),
            ("flags", 2),
            ("name_len", 1),
            ("name2_len", 2),
            ("ino", 8),
            ("dir", 7),
            ("dir2", 9),
            ("ino2", 10),
        ],
    );
    let n2 = r2 + span(&d, "Namespace record");
    assert_eq!(&b[n2..n2 + 3], b"xyz", "first name, then the target name");
    // The footer of a record node: nid 0, type 5, ofs 0, and the group tag in `ino` (0 as
    // packed; FORMAT.md's values of the tag, and where the writer puts it).
    d.expect(
        &b[..],
        0,
        "Node footer",
        &[("nid", 0), ("ino", 0), ("flags", (nsrec::NODE_TYPE_RECORD as u64) << 8), ("ofs", 0)],
    );
    assert!(
        flat().contains("its footer has `nid` 0, type 5, `ofs` 0, the flags byte 0, and in `ino` its **group tag**")
    );
    assert_eq!(nsrec::GROUP_MORE, 0xFFFF_FFFF, "FORMAT.md states 0xFFFFFFFF");
    assert!(flat().contains("has tag `0xFFFFFFFF`"));
    let mut tagged = b.clone();
    nsrec::set_group_tag(&mut tagged, 7);
    d.expect(&tagged[..], 0, "Node footer", &[("ino", 7)]);
    assert_eq!(nsrec::group_tag(&tagged), 7);
    assert_eq!(nsrec::RECORD_SYMLINK_TARGET_MAX, 3737, "FORMAT.md states 3,737");
    assert!(flat().contains("1..3737"));
    let back = nsrec::decode(&b, 99).unwrap();
    assert_eq!((back.first_seq, back.records), (0x6162_6364, vec![create, rename]));
}

#[test]
fn dentry_encoder_matches_the_doc() {
    let d = Doc::load();
    let mut md = MemDir(BTreeMap::new());
    let mut depth = 0;
    let name = b"a-name-of-nineteen!";
    let loc = dir::insert(&mut md, &mut depth, name, 0x0102_0304, FileType::Symlink).unwrap();
    let b = &md.0[&loc.block_idx];
    let h = "Dentry block";
    let nslots = name.len().div_ceil(8) as u64;
    d.expect(
        &b[..],
        0,
        h,
        &[
            ("magic", dir::DENTRY_MAGIC as u64),
            ("idx", loc.block_idx),
            ("overflow", 0),
            ("count", nslots),
            ("reserved1", 0),
            ("tail", 0),
            ("crc", codec::crc(&b[..CRC_OFFSET]) as u64),
        ],
    );
    let slot = loc.slot as usize;
    let (bo, _) = d.at(h, "bitmap");
    for s in slot..slot + nslots as usize {
        assert_ne!(b[bo + s / 8] & (1 << (s % 8)), 0, "bitmap bit of slot {s}");
    }
    let (ro, rsz) = d.at(h, "records");
    let rec = span(&d, "Dentry record");
    assert_eq!(rsz / rec, dir::SLOTS_PER_BLOCK);
    d.expect(
        &b[..],
        ro + slot * rec,
        "Dentry record",
        &[
            ("hash", dir::name_hash(name) as u64),
            ("ino", 0x0102_0304),
            ("name_len", name.len() as u64),
            ("file_type", 10),
            ("reserved", 0),
        ],
    );
    let (no, nsz) = d.at(h, "names");
    let per_slot = nsz / dir::SLOTS_PER_BLOCK;
    assert_eq!(&b[no + slot * per_slot..no + slot * per_slot + name.len()], name);
    // Hash test vectors and cookies as stated.
    let doc = flat();
    for (s, v) in [("\"\"", b"" as &[u8]), ("\"a\"", b"a"), ("\"hello.txt\"", b"hello.txt")] {
        let line = format!("`{s}` → 0x{:08X}", dir::name_hash(v));
        assert!(doc.contains(&line), "FORMAT.md lacks the hash vector {line}");
        let key: dir::HashKey = core::array::from_fn(|i| i as u8);
        let line = format!("`{s}` → 0x{:08X} (keyed)", dir::name_hash_keyed(&key, v));
        assert!(doc.contains(&line), "FORMAT.md lacks the keyed hash vector {line}");
        assert_eq!(dir::name_hash_keyed(&dir::NO_HASH_KEY, v), dir::name_hash(v), "a zero seed is unkeyed");
    }
    // Directory keys and cookies: the derivation, the vectors and the permutation as stated.
    let seed: dir::HashKey = core::array::from_fn(|i| i as u8);
    let hex = |k: &[u8]| k.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(" ");
    let hk = dir::dir_hash_key(&seed, 5, 1);
    let derive = |kind: u8, ino: u32, generation: u32| {
        let mut m = vec![0, kind];
        m.extend_from_slice(&ino.to_le_bytes());
        m.extend_from_slice(&generation.to_le_bytes());
        dir::siphash24(&seed, &m).to_le_bytes()
    };
    assert_eq!(hk[..8], derive(1, 5, 1));
    assert_eq!(hk[8..], derive(2, 5, 1));
    assert!(doc.contains(&format!("directory 5, generation 1 has the name hash key `{}`", hex(&hk))));
    for (s, v) in [("\"hello.txt\"", b"hello.txt" as &[u8]), ("\"a\"", b"a")] {
        let line = format!("`{s}` → 0x{:08X}", dir::name_hash_keyed(&hk, v));
        assert!(doc.contains(&line), "FORMAT.md lacks the directory key vector {line}");
    }
    let ck = dir::dir_cookie_key(&seed, 1, 1);
    assert_eq!(ck[..8], derive(3, 1, 1));
    assert_eq!(ck[8..], derive(4, 1, 1));
    assert!(doc.contains(&format!("has the cookie key `{}`", hex(&ck))));
    let cookies = dir::Cookies::new(&ck);
    let pos = dir::position_of(dir::EntryLoc { block_idx: 2, slot: 5 });
    assert_eq!(pos, 2 * 202 + 5);
    assert!(doc.contains(&format!(
        "position 0 has cookie 0x{:X} and position {pos} (block 2, slot 5) 0x{:X}",
        cookies.cookie(0),
        cookies.cookie(pos)
    )));
    // The permutation, spelled out from the doc's description.
    let f = |i: u8, x: u64| {
        let mut m = vec![i];
        m.extend_from_slice(&(x as u32).to_le_bytes());
        dir::siphash24(&ck, &m) % (1 << 31)
    };
    for p in [0u64, pos, 140_656_235, 77_777_777] {
        let (mut l, mut r) = (p >> 31, p % (1 << 31));
        for i in 0..4 {
            (l, r) = (r, l ^ f(i, r));
        }
        assert_eq!(cookies.cookie(p), 3 + (l << 31 | r), "position {p}");
    }
    assert_eq!(dir::POSITIONS, 202 * 696_318);
    assert!(doc.contains("*position* `p = 202 b + s` (below `202 × 696318`)"));
    assert!(doc.contains("balanced Feistel network on 62 bits"));
    assert!(doc.contains("4 rounds `i = 0..3`"));
    assert_eq!((dir::COOKIE_BITS, dir::COOKIE_ROUNDS, dir::MAX_OVERFLOW, dir::OVERFLOW_LEVEL), (62, 4, 4095, 63));
    for (l, start) in [(1, 2), (2, 6), (12, 8190), (32, 172030), (64, 696318)] {
        assert_eq!(dir::max_block_index(l), start, "level start {l}");
    }
    assert!(doc.contains(
        "level 1 starts at 2, level 2 at 6, level 12 at 8190, level 32 at 172030, and all 64 levels end at 696318"
    ));
}

// ---- magic numbers, constants, logs, geometry, version ------------------------------------

fn table_under<'a>(ts: &'a [Table], heading: &str) -> &'a Table {
    ts.iter().find(|t| t.heading == heading).unwrap_or_else(|| panic!("FORMAT.md: no table under '{heading}'"))
}

fn parse_num(s: &str) -> u64 {
    let s = unticked(s).replace('_', "");
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("bad hex {s}"))
    } else {
        s.parse().unwrap_or_else(|_| panic!("bad number {s}"))
    }
}

#[test]
fn magic_numbers_match_the_code() {
    let doc = doc();
    let ts = tables(&doc);
    let t = table_under(&ts, "Magic numbers");
    assert_eq!(t.header, ["structure", "value", "bytes on disk"]);
    let code: BTreeMap<&str, u32> = [
        ("superblock", superblock::SB_MAGIC),
        ("checkpoint header", checkpoint::CP_MAGIC),
        ("unused checkpoint pack", checkpoint::CP_UNUSED_MAGIC),
        ("NAT block", rollfs_core::nat::NAT_MAGIC),
        ("SIT block", rollfs_core::sit::SIT_MAGIC),
        ("SSA block", rollfs_core::ssa::SSA_MAGIC),
        ("dentry block", dir::DENTRY_MAGIC),
    ]
    .into_iter()
    .collect();
    let mut seen = Vec::new();
    for r in &t.rows {
        let want = *code.get(r[0].as_str()).unwrap_or_else(|| panic!("magic of unknown structure '{}'", r[0]));
        assert_eq!(parse_num(&r[1]), want as u64, "magic of {}: FORMAT.md {} vs code {want:#010X}", r[0], r[1]);
        assert_eq!(unticked(&r[2]).as_bytes(), want.to_le_bytes(), "bytes of the {} magic", r[0]);
        seen.push(r[0].clone());
    }
    assert_eq!(seen.len(), code.len(), "every magic of the code is in FORMAT.md");
    // Each structure's own table states the same magic.
    for (heading, m) in [
        ("Superblock", superblock::SB_MAGIC),
        ("Checkpoint header", checkpoint::CP_MAGIC),
        ("Dentry block", dir::DENTRY_MAGIC),
    ] {
        let t = table_under(&ts, heading);
        let row = t.rows.iter().find(|r| r[2] == "magic").unwrap();
        assert!(row[3].starts_with(&format!("0x{m:08X}")), "'{heading}' magic row: {}", row[3]);
    }
}

#[test]
fn constants_table_matches_the_code() {
    let doc = doc();
    let ts = tables(&doc);
    let t = table_under(&ts, "Constants and limits");
    assert_eq!(t.header, ["name", "value", "meaning"]);
    let code: BTreeMap<&str, u64> = [
        ("BLOCK_SIZE", BLOCK_SIZE as u64),
        ("SEGMENT_BLOCKS_MIN", SEGMENT_BLOCKS_MIN as u64),
        ("SEGMENT_BLOCKS_MAX", SEGMENT_BLOCKS_MAX as u64),
        ("SEGMENT_BLOCKS_DEFAULT", SEGMENT_BLOCKS_DEFAULT as u64),
        ("LOG_COUNT", LOG_COUNT as u64),
        ("NAT_ENTRIES_PER_BLOCK", NAT_ENTRIES_PER_BLOCK as u64),
        ("SIT_ENTRIES_PER_BLOCK", SIT_ENTRIES_PER_BLOCK as u64),
        ("ADDRS_PER_INODE", ADDRS_PER_INODE as u64),
        ("NIDS_PER_INODE", NIDS_PER_INODE as u64),
        ("ADDRS_PER_BLOCK", ADDRS_PER_BLOCK as u64),
        ("NIDS_PER_BLOCK", NIDS_PER_BLOCK as u64),
        ("DATA_POINTER_SIZE", DATA_POINTER_SIZE as u64),
        ("MAX_FILE_BLOCKS", node::MAX_FILE_BLOCKS),
        ("MAX_FILE_SIZE", node::MAX_FILE_SIZE),
        ("NAME_MAX", NAME_MAX as u64),
        ("LINK_MAX", LINK_MAX as u64),
        ("CP_ORPHAN_MAX", CP_ORPHAN_MAX as u64),
        ("CP_NAT_JOURNAL_MAX", CP_NAT_JOURNAL_MAX as u64),
        ("CP_SIT_JOURNAL_MAX", CP_SIT_JOURNAL_MAX as u64),
        ("SB_LABEL_MAX", superblock::SB_LABEL_MAX as u64),
        ("SLOTS_PER_BLOCK", dir::SLOTS_PER_BLOCK as u64),
        ("MAX_DEPTH", dir::MAX_DEPTH as u64),
        ("MAX_OVERFLOW", dir::MAX_OVERFLOW as u64),
        ("COOKIE_BITS", dir::COOKIE_BITS as u64),
        ("COOKIE_ROUNDS", dir::COOKIE_ROUNDS as u64),
        ("XATTR_NAME_MAX", xattr::XATTR_NAME_MAX as u64),
        ("XATTR_VALUE_MAX", xattr::XATTR_VALUE_MAX as u64),
    ]
    .into_iter()
    .collect();
    let mut errs = Vec::new();
    for r in &t.rows {
        let name = unticked(&r[0]);
        match code.get(name) {
            Some(&v) if v == parse_num(&r[1]) => {}
            Some(&v) => errs.push(format!("{name}: FORMAT.md {} vs code {v}", r[1])),
            None => errs.push(format!("{name}: not checked (unknown constant)")),
        }
    }
    for k in code.keys() {
        if !t.rows.iter().any(|r| unticked(&r[0]) == *k) {
            errs.push(format!("{k}: missing from FORMAT.md"));
        }
    }
    assert!(errs.is_empty(), "constants table:\n  {}", errs.join("\n  "));
    assert_eq!(NIDS_PER_BLOCK, 2 * ADDRS_PER_BLOCK);
    assert_eq!(inode::OFF_DATA_CRCS, inode::OFF_ADDRS + 4 * ADDRS_PER_INODE as usize);
    assert_eq!(inode::OFF_ADDRS, INODE_HEADER_SIZE);
    assert_eq!(dir::HEADER_SIZE, dir::BITMAP_OFFSET);
    assert_eq!(xattr::XATTR_PAYLOAD, NODE_FOOTER_OFFSET);
    assert_eq!(node::FOOTER_OFF_CRC, CRC_OFFSET);
    assert_eq!(CRC_OFFSET, 4092);
}

#[test]
fn special_values_flags_and_types_match_the_code() {
    let doc = doc();
    let ts = tables(&doc);
    let doc = flat();
    let t = table_under(&ts, "Special values");
    let find = |name: &str| -> &Vec<String> {
        t.rows.iter().find(|r| r[0].contains(&format!("(`{name}`)"))).unwrap_or_else(|| panic!("no {name}"))
    };
    let stated = |name: &str| -> u64 {
        let cell = &find(name)[0];
        let v = cell.split_whitespace().find(|w| w.starts_with("0x") || w.chars().all(|c| c.is_ascii_digit()));
        parse_num(v.unwrap_or_else(|| panic!("no number in '{cell}'")))
    };
    assert_eq!(stated("NULL_ADDR"), NULL_ADDR as u64);
    assert_eq!(stated("NEW_ADDR"), NEW_ADDR as u64);
    assert_eq!(stated("NULL_NID"), NULL_NID as u64);
    assert_eq!(stated("ROOT_INO"), ROOT_INO as u64);
    // Feature, checkpoint and node flags, node types: as stated in the prose.
    assert_eq!(superblock::FEATURE_COMPAT_ATOMIC_WRITE, 1 << 0);
    assert!(doc.contains("bit 0 `FEATURE_COMPAT_ATOMIC_WRITE`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_DIR_V2, 1 << 0);
    assert!(doc.contains("bit 0 `FEATURE_INCOMPAT_DIR_V2`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_PREALLOC, 1 << 1);
    assert!(doc.contains("bit 1 `FEATURE_INCOMPAT_PREALLOC`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_INLINE, 1 << 2);
    assert!(doc.contains("bit 2 `FEATURE_INCOMPAT_INLINE`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_GROW, 1 << 3);
    assert!(doc.contains("bit 3 `FEATURE_INCOMPAT_GROW`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_NS_RECORDS, 1 << 4);
    assert!(doc.contains("bit 4 `FEATURE_INCOMPAT_NS_RECORDS`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_MIXED_NODE, 1 << 5);
    assert!(doc.contains("bit 5 `FEATURE_INCOMPAT_MIXED_NODE`"));
    assert_eq!(superblock::FEATURE_INCOMPAT_CP_SUMMARIES, 1 << 6);
    assert!(doc.contains("bit 6 `FEATURE_INCOMPAT_CP_SUMMARIES`"));
    assert_eq!(
        superblock::FEATURE_INCOMPAT_SUPPORTED,
        superblock::FEATURE_INCOMPAT_DIR_V2
            | superblock::FEATURE_INCOMPAT_PREALLOC
            | superblock::FEATURE_INCOMPAT_INLINE
            | superblock::FEATURE_INCOMPAT_GROW
            | superblock::FEATURE_INCOMPAT_NS_RECORDS
            | superblock::FEATURE_INCOMPAT_MIXED_NODE
            | superblock::FEATURE_INCOMPAT_CP_SUMMARIES
    );
    // Data beside its chain: the summary flag and the batch bound, as stated.
    assert_eq!(rollfs_core::ssa::SSA_OFS_DATA, 0x8000);
    assert!(doc.contains("bit 15 (`SSA_OFS_DATA`, 0x8000)"));
    assert_eq!(rollfs_core::CHAIN_DATA_MAX, 16);
    assert!(doc.contains("`CHAIN_DATA_MAX` = 16"));
    // Inline data: the flag bit and the area it names, as stated.
    assert_eq!(node::inode::IFLAG_INLINE_DATA, 1 << 0);
    assert!(doc.contains("bit 0 `IFLAG_INLINE_DATA`"));
    // The attribute flags (chattr), as stated, and nothing else known.
    for (bit, name) in [
        (node::inode::IFLAG_IMMUTABLE, "bit 1 `IFLAG_IMMUTABLE`"),
        (node::inode::IFLAG_APPEND, "bit 2 `IFLAG_APPEND`"),
        (node::inode::IFLAG_NODUMP, "bit 3 `IFLAG_NODUMP`"),
        (node::inode::IFLAG_NOATIME, "bit 4 `IFLAG_NOATIME`"),
    ] {
        let n: u32 = name[4..5].parse().unwrap();
        assert_eq!(bit, 1 << n, "{name}");
        assert!(doc.contains(name), "{name}");
    }
    assert_eq!(
        node::inode::IFLAGS_ATTR,
        node::inode::IFLAG_IMMUTABLE
            | node::inode::IFLAG_APPEND
            | node::inode::IFLAG_NODUMP
            | node::inode::IFLAG_NOATIME
    );
    assert_eq!(node::inode::IFLAGS_KNOWN, node::inode::IFLAG_INLINE_DATA | node::inode::IFLAGS_ATTR);
    let area = format!("bytes {}..{} (`INLINE_DATA_MAX` = 3,656)", node::inode::OFF_ADDRS, node::inode::OFF_NIDS);
    assert!(doc.contains(&area), "{area}");
    assert_eq!(node::inode::INLINE_DATA_MAX, 3656);
    assert_eq!(superblock::FEATURE_RO_COMPAT_DATASUM, 1 << 0);
    assert!(doc.contains("bit 0 `FEATURE_RO_COMPAT_DATASUM`"));
    assert_eq!(superblock::FEATURE_RO_COMPAT_SUPPORTED, superblock::FEATURE_RO_COMPAT_DATASUM);
    assert!(doc.contains(&format!(
        "**Format version: {}.{}**",
        superblock::FORMAT_VERSION_MAJOR,
        superblock::FORMAT_VERSION_MINOR
    )));
    assert_eq!(checkpoint::CP_FLAG_UMOUNT, 1 << 0);
    assert!(doc.contains("bit 0 `CP_FLAG_UMOUNT`"));
    let flags = format!(
        "bit 0 `FLAG_COLD` ({}), bit 1 `FLAG_FSYNC` ({}, the fsync mark), bit 2 `FLAG_DENTRY` ({}, the dentry mark)",
        node::FLAG_COLD,
        node::FLAG_FSYNC,
        node::FLAG_DENTRY
    );
    assert!(doc.contains(&flags), "FORMAT.md must state the node flags as: {flags}");
    assert_eq!((node::FLAG_COLD, node::FLAG_FSYNC, node::FLAG_DENTRY), (1, 2, 4));
    let types = format!(
        "Node types (bits 8..15 of `flags`): {} inode, {} direct node, {} indirect node, {} xattr node; {} is reserved for the [record node](#record-node), not written yet.",
        NodeType::Inode as u8,
        NodeType::Direct as u8,
        NodeType::Indirect as u8,
        NodeType::Xattr as u8,
        nsrec::NODE_TYPE_RECORD
    );
    assert!(doc.contains(&types), "FORMAT.md must state: {types}");
    let mut b = zero_block();
    node::init_footer(&mut b, 1, 1, NodeType::Xattr, 0);
    assert_eq!(node::footer_type(&b), Some(NodeType::Xattr));
    assert_eq!(le(&b[node::FOOTER_OFF_FLAGS..node::FOOTER_OFF_FLAGS + 4]) >> 8, NodeType::Xattr as u64);
    // File type codes.
    assert_eq!(FileType::Regular.dentry_code(), 8);
    assert_eq!(FileType::Symlink.dentry_code(), 10);
    assert_eq!(FileType::Directory.dentry_code(), 4);
}

#[test]
fn log_table_matches_the_code() {
    let doc = doc();
    let ts = tables(&doc);
    let t = table_under(&ts, "Device layout");
    assert_eq!(t.header[..3], ["log index", "SIT type", "log"]);
    assert_eq!(t.rows.len(), LOG_COUNT);
    for (i, r) in t.rows.iter().enumerate() {
        let log = Log::ALL[i];
        assert_eq!(parse_num(&r[0]), log as u64);
        assert_eq!(parse_num(&r[1]), log.seg_type() as u64);
        assert_eq!(r[2], log.name().replace('-', " "), "log {i}");
        assert_eq!(log.is_node(), r[2].ends_with("node"));
    }
}

#[test]
fn example_geometry_matches_the_code() {
    let doc = doc();
    let ts = tables(&doc);
    let t = ts.iter().find(|t| t.header == ["geometry field", "value"]).expect("example geometry table");
    assert!(flat().contains("a 1 GiB device (262144 blocks), 2 MiB segments (512 blocks), 5 % overprovisioning"));
    let g = Geometry::compute(262_144, 512, 5).unwrap();
    for r in &t.rows {
        let v = parse_num(&r[1]);
        let want = match r[0].as_str() {
            "cp_pack_blocks" => g.cp_pack_blocks,
            "nat_start" => g.nat_start,
            "nat_blocks" => g.nat_blocks,
            "sit_start" => g.sit_start,
            "sit_blocks" => g.sit_blocks,
            "ssa_start" => g.ssa_start,
            "main_start" => g.main_start,
            "main_segments" => g.main_segments,
            "nid_count" => g.nid_count,
            "reserved_segments" => g.reserved_segments,
            other => panic!("unknown geometry field {other}"),
        };
        assert_eq!(v, want as u64, "example geometry {}", r[0]);
    }
    assert_eq!(CP_START, 2);
    assert_eq!(SUPERBLOCK_ADDRS, [0, 1]);
    assert_eq!(g.cp_pack_addr(1), 2 + g.cp_pack_blocks as u64);
    assert_eq!(g.nat_addr(3, 1), g.nat_start as u64 + 7);
    assert_eq!(g.ssa_addr(3, 1), g.ssa_start as u64 + 7);
}

#[test]
fn format_version_matches_the_code() {
    let doc = doc();
    let v = format!("**Format version: {}.{}**", superblock::FORMAT_VERSION_MAJOR, superblock::FORMAT_VERSION_MINOR);
    assert!(doc.lines().any(|l| l.trim() == v), "FORMAT.md must carry the line {v}");
}

// ---- code → doc: every offset constant of the code is covered ------------------------------

/// Offset constants of the code that the tables above check. A new `*_OFF_*`/`OFF_*`/
/// `*_OFFSET`/`REC_*` constant in a format module is a new on-disk field: it must get a row
/// in FORMAT.md, a place in `specs()`, and its name here.
const COVERED: &[&str] = &[
    // superblock.rs
    "SB_OFF_MAGIC",
    "SB_OFF_VERSION_MAJOR",
    "SB_OFF_VERSION_MINOR",
    "SB_OFF_FEATURE_COMPAT",
    "SB_OFF_FEATURE_INCOMPAT",
    "SB_OFF_FEATURE_RO_COMPAT",
    "SB_OFF_BLOCK_SIZE_LOG2",
    "SB_OFF_TOTAL_BLOCKS",
    "SB_OFF_SEGMENT_BLOCKS",
    "SB_OFF_CP_PACK_BLOCKS",
    "SB_OFF_NAT_START",
    "SB_OFF_NAT_BLOCKS",
    "SB_OFF_SIT_START",
    "SB_OFF_SIT_BLOCKS",
    "SB_OFF_SSA_START",
    "SB_OFF_MAIN_START",
    "SB_OFF_MAIN_SEGMENTS",
    "SB_OFF_NID_COUNT",
    "SB_OFF_RESERVED_SEGMENTS",
    "SB_OFF_ROOT_INO",
    "SB_OFF_UUID",
    "SB_OFF_LABEL",
    "SB_OFF_CREATE_SEC",
    "SB_OFF_CREATE_NSEC",
    "SB_OFF_HASH_SEED",
    "SB_OFF_ROOT_RESERVE",
    "SB_OFF_MAX_BLOCKS",
    "SB_OFF_MAX_MAIN_SEGMENTS",
    "SB_OFF_OVERPROVISION_PCT",
    // checkpoint.rs
    "CP_OFF_MAGIC",
    "CP_OFF_PACK",
    "CP_OFF_VERSION",
    "CP_OFF_FLAGS",
    "CP_OFF_PAYLOAD_BLOCKS",
    "CP_OFF_PAYLOAD_CRC",
    "CP_OFF_NAT_JOURNAL_COUNT",
    "CP_OFF_SIT_JOURNAL_COUNT",
    "CP_OFF_ORPHAN_COUNT",
    "CP_OFF_VALID_BLOCKS",
    "CP_OFF_VALID_NODES",
    "CP_OFF_VALID_INODES",
    "CP_OFF_TIME_SEC",
    "CP_OFF_LOGS",
    "CP_OFF_NEXT_GENERATION",
    "CP_OFF_WRITTEN_BLOCKS",
    "CP_OFF_RESERVED_BLOCKS",
    "CP_OFF_SIZE_TOTAL_BLOCKS",
    "CP_OFF_SIZE_MAIN_SEGMENTS",
    "CP_OFF_SIZE_NAT_BLOCKS",
    "CP_OFF_SIZE_RESERVED_SEGMENTS",
    "CP_OFF_SUMMARY_COUNT",
    // codec.rs
    "META_OFF_MAGIC",
    "META_OFF_INDEX",
    "META_OFF_CP_VERSION",
    // sit.rs
    "SIT_OFF_VALID",
    "SIT_OFF_TYPE",
    "SIT_OFF_FLAGS",
    "SIT_OFF_WEAR",
    "SIT_OFF_MTIME",
    "SIT_OFF_BITMAP",
    // node.rs
    "FOOTER_OFF_NID",
    "FOOTER_OFF_INO",
    "FOOTER_OFF_FLAGS",
    "FOOTER_OFF_OFS",
    "FOOTER_OFF_CP_VERSION",
    "FOOTER_OFF_NEXT_BLKADDR",
    "FOOTER_OFF_CRC",
    "OFF_MODE",
    "OFF_IFLAGS",
    "OFF_UID",
    "OFF_GID",
    "OFF_LINKS",
    "OFF_SIZE",
    "OFF_BLOCKS",
    "OFF_ATIME_SEC",
    "OFF_ATIME_NSEC",
    "OFF_MTIME_NSEC",
    "OFF_MTIME_SEC",
    "OFF_CTIME_SEC",
    "OFF_CTIME_NSEC",
    "OFF_CRTIME_NSEC",
    "OFF_CRTIME_SEC",
    "OFF_GENERATION",
    "OFF_XATTR_NID",
    "OFF_PINO",
    "OFF_RDEV",
    "OFF_DIR_DEPTH",
    "OFF_NAME_LEN",
    "OFF_NAME",
    "OFF_TRUNC_BLOCK",
    "OFF_BATCH_CRC",
    "OFF_BATCH_BLOCKS",
    "OFF_ADDRS",
    "OFF_DATA_CRCS",
    "DIRECT_OFF_ADDRS",
    "DIRECT_OFF_DATA_CRCS",
    "OFF_NIDS",
    // dir.rs
    "HDR_MAGIC_OFFSET",
    "HDR_IDX_OFFSET",
    "HDR_OVERFLOW_OFFSET",
    "HDR_COUNT_OFFSET",
    "HDR_RESERVED1_OFFSET",
    "BITMAP_OFFSET",
    "RECORDS_OFFSET",
    "NAMES_OFFSET",
    "TAIL_OFFSET",
    "REC_HASH",
    "REC_INO",
    "REC_NAME_LEN",
    "REC_TYPE",
    "REC_RESERVED",
];

/// Offset constants of work in progress that FORMAT.md does not describe yet (a known gap:
/// when the work lands, move the name to COVERED and add its row). Empty when the doc is
/// complete.
const PENDING: &[&str] = &[];

fn is_offset_const(name: &str) -> bool {
    name.contains("_OFF_") || name.starts_with("OFF_") || name.ends_with("_OFFSET") || name.starts_with("REC_")
}

#[test]
fn every_offset_constant_of_the_code_is_in_the_doc() {
    let mut missing = Vec::new();
    for file in
        ["superblock.rs", "checkpoint.rs", "codec.rs", "sit.rs", "nat.rs", "ssa.rs", "node.rs", "xattr.rs", "dir.rs"]
    {
        let path = format!("{}/src/{file}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        for line in src.lines() {
            let Some(rest) = line.trim_start().strip_prefix("pub const ") else { continue };
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            // CRC_OFFSET, META_FOOTER_OFFSET and NODE_FOOTER_OFFSET are layout constants
            // checked through the footer and crc rows.
            if !is_offset_const(&name) || ["CRC_OFFSET"].contains(&name.as_str()) {
                continue;
            }
            if !COVERED.contains(&name.as_str()) && !PENDING.contains(&name.as_str()) {
                missing.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "offset constants with no row in FORMAT.md (add the row, a Spec entry and the name to COVERED):\n  {}",
        missing.join("\n  ")
    );
}
