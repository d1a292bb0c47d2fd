//! `rollfs inspect --svg`: a picture of a device read at a glance.
//!
//! From top to bottom:
//! - a title: the image, UUID, label, checkpoint version, size, used and free;
//! - the device layout as a bar to scale, and under it the metadata areas (a sliver at the
//!   start of the device) magnified, to their own scale, each named below with a leader
//!   line, then a table of every area with its blocks and bytes;
//! - a segment map: one cell per main-area segment (or per group of consecutive segments on
//!   large devices), filled by utilisation, free segments white with a thin outline, the six
//!   log heads outlined and tagged (HD hot-data … CN cold-node), with its legend;
//! - a wear map: the same cells coloured by how often each segment was opened for writing,
//!   with min, mean and max in its legend.
//!
//! The output depends only on the [`Inspection`]: the same image gives the same bytes.
//! Positions of text are planned from a monospace advance estimate so that labels do not
//! overlap; labels that do not fit where they belong are moved aside with a leader line.

use super::{Inspection, LogInfo, SegmentInfo};
use crate::size::human;
use rollfs_core::BLOCK_SIZE;
use std::fmt::Write as _;

const WIDTH: f64 = 1000.0;
const MARGIN: f64 = 20.0;
const INNER: f64 = WIDTH - 2.0 * MARGIN;
const FONT: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";
/// Advance of a monospace character as a fraction of the font size (DejaVu Sans Mono:
/// 0.602), rounded up so that planned text is never narrower than drawn text.
const CHAR_EM: f64 = 0.62;
/// Cells per row of a segment map, and their pitch.
const COLS: usize = 64;
const CELL: f64 = INNER / COLS as f64;
/// At most this many cells per map; beyond, each cell stands for a group of segments.
pub const MAX_CELLS: usize = 1024;
/// Height of the lane above a row of the segment map for log-head tags moved aside.
const LANE: f64 = 26.0;
/// Font size of a log-head tag: two bold letters that fit over one cell.
const TAG_FONT: f64 = 9.0;

const FREE_FILL: &str = "#ffffff";
const FREE_STROKE: &str = "#8c8c8c";
/// Utilisation: pale yellow (a few valid blocks) to dark brown (full).
const UTIL_RAMP: [(u8, u8, u8); 5] = [(254, 227, 145), (254, 196, 79), (236, 112, 20), (204, 76, 2), (102, 37, 6)];
/// Wear: pale lilac (least written) to deep purple (most written).
const WEAR_RAMP: [(u8, u8, u8); 5] = [(239, 237, 245), (188, 189, 220), (128, 125, 186), (84, 39, 143), (45, 0, 95)];
const DATA_HEAD: &str = "#1f4e79";
const NODE_HEAD: &str = "#2e6b30";

/// Text for XML: the five special characters escaped, and characters XML 1.0 cannot carry
/// (control characters, U+FFFE, U+FFFF) replaced by U+FFFD.
pub fn esc(t: &str) -> String {
    let mut o = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{fffe}' || c == '\u{ffff}' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// Planned width of `s` at font size `size`.
fn tw(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * CHAR_EM * size
}

/// `s` shortened in the middle with "…" to fit `width` at font size `size`.
fn fit(s: &str, width: f64, size: f64) -> String {
    let max = (width / (CHAR_EM * size)).floor() as usize;
    let n = s.chars().count();
    if n <= max || max < 5 {
        return s.to_string();
    }
    let keep = max - 1;
    let head: String = s.chars().take(keep / 2).collect();
    let tail: String = s.chars().skip(n - (keep - keep / 2)).collect();
    format!("{head}…{tail}")
}

/// Left edges for labels `widths` wide that want to be centred at `centres` (ascending), on
/// one line from `lo` to `hi` without overlapping: pushed right past their left neighbour,
/// then back left from `hi`. Order is kept, so leader lines from the centres do not cross.
fn place(centres: &[f64], widths: &[f64], lo: f64, hi: f64, gap: f64) -> Vec<f64> {
    let mut x: Vec<f64> = centres.iter().zip(widths).map(|(c, w)| (c - w / 2.0).max(lo)).collect();
    for i in 1..x.len() {
        x[i] = x[i].max(x[i - 1] + widths[i - 1] + gap);
    }
    if let Some(last) = x.len().checked_sub(1) {
        x[last] = x[last].min(hi - widths[last]);
        for i in (0..last).rev() {
            x[i] = x[i].min(x[i + 1] - widths[i] - gap);
        }
    }
    x
}

/// The colour at `t` (0..=1) along a ramp of evenly spaced stops, linear in RGB (as an SVG
/// linear gradient with the same stops interpolates).
fn ramp(stops: &[(u8, u8, u8)], t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let pos = t * (stops.len() - 1) as f64;
    let i = (pos.floor() as usize).min(stops.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (stops[i], stops[i + 1]);
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn gradient(s: &mut String, id: &str, stops: &[(u8, u8, u8)]) {
    let _ = writeln!(s, r#"<linearGradient id="{id}" x1="0" y1="0" x2="1" y2="0">"#);
    for (i, c) in stops.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<stop offset="{}" stop-color="#{:02x}{:02x}{:02x}"/>"##,
            i as f64 / (stops.len() - 1) as f64,
            c.0,
            c.1,
            c.2
        );
    }
    s.push_str("</linearGradient>\n");
}

fn text(s: &mut String, x: f64, y: f64, size: f64, extra: &str, t: &str) {
    let _ = writeln!(s, r#"<text x="{x:.1}" y="{y:.1}" font-size="{size}"{extra}>{}</text>"#, esc(t));
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// "HD" for "hot-data": the first letter of each word of a log's name.
pub fn abbrev(name: &str) -> String {
    name.split(['-', '_', ' ']).filter_map(|w| w.chars().next()).flat_map(char::to_uppercase).collect()
}

/// One stretch of the device: an area, or blocks no area uses.
struct Part {
    name: String,
    start: u64,
    blocks: u64,
    fill: &'static str,
    what: &'static str,
}

fn area_fill(name: &str) -> (&'static str, &'static str) {
    match name {
        "superblock" => ("#4d4d4d", "two copies of the superblock"),
        "checkpoint" => ("#e15759", "two checkpoint packs"),
        "NAT" => ("#4e79a7", "node address table, two slots per block"),
        "SIT" => ("#59a14f", "segment information table, two slots per block"),
        "SSA" => ("#f28e2b", "segment summaries, two slots per segment"),
        "main" => ("#a0cbe8", "segments of data and node blocks"),
        _ => ("#bab0ac", "area"),
    }
}

/// The areas in device order with the unused stretches between and after them.
fn parts(ins: &Inspection) -> Vec<Part> {
    let mut areas: Vec<_> = ins.areas.iter().collect();
    areas.sort_by_key(|a| a.start_block);
    let device_blocks = ins.device_bytes / BLOCK_SIZE as u64;
    let mut out = Vec::new();
    let mut at = 0u64;
    for a in areas {
        if a.start_block > at {
            out.push(Part {
                name: "unused".into(),
                start: at,
                blocks: a.start_block - at,
                fill: "url(#hatch)",
                what: "alignment: the main area starts on a segment boundary",
            });
        }
        let (fill, what) = area_fill(a.name);
        out.push(Part { name: a.name.to_string(), start: a.start_block, blocks: a.blocks, fill, what });
        at = at.max(a.start_block + a.blocks);
    }
    if device_blocks > at {
        out.push(Part {
            name: "unused".into(),
            start: at,
            blocks: device_blocks - at,
            fill: "url(#hatch)",
            what: "the tail of the device: less than one segment",
        });
    }
    out
}

/// A cell of a segment map: `segs` consecutive segments.
struct Cell<'a> {
    first: u32,
    segs: &'a [SegmentInfo],
}

impl Cell<'_> {
    fn valid(&self) -> u64 {
        self.segs.iter().map(|g| g.valid_blocks as u64).sum()
    }
    fn label(&self) -> String {
        match self.segs.len() {
            1 => format!("segment {}", self.first),
            n => format!("segments {}–{}", self.first, self.first as usize + n - 1),
        }
    }
}

/// The picture. See the module documentation for what it shows.
pub fn svg(ins: &Inspection) -> String {
    let mut b = String::new(); // the body; the header needs the height, known at the end
    let mut y = 0.0;

    // ---- title --------------------------------------------------------------------------
    y += 26.0;
    text(&mut b, MARGIN, y, 17.0, r#" font-weight="bold""#, &fit(&format!("rollfs  {}", ins.target), INNER, 17.0));
    let seg_bytes = ins.segment_blocks as u64 * BLOCK_SIZE as u64;
    let main_bytes = ins.main_segments as u64 * seg_bytes;
    let segs = ins.segments.as_deref().unwrap_or(&[]);
    let mut id = vec![format!("UUID {}", ins.uuid)];
    if !ins.label.trim_end_matches('\0').is_empty() {
        id.push(format!("label \"{}\"", ins.label.trim_end_matches('\0')));
    }
    id.push(format!("format {}", ins.format_version));
    let version = ins.checkpoint.as_ref().map(|c| c.version).or(ins.checkpoint_version);
    id.push(match (version, &ins.checkpoint) {
        (Some(v), Some(c)) => {
            format!(
                "checkpoint version {v} ({})",
                if c.clean_unmount { "clean unmount" } else { "not unmounted cleanly" }
            )
        }
        (Some(v), None) => format!("checkpoint version {v}"),
        (None, _) => "checkpoint unreadable".into(),
    });
    id.push(
        match ins.fsck_clean {
            Some(true) => "fsck clean",
            Some(false) => "fsck found PROBLEMS",
            None => "fsck not run",
        }
        .into(),
    );
    let mut usage = vec![
        format!("size {}", human(ins.device_bytes)),
        format!("main area {} segments × {} = {}", ins.main_segments, human(seg_bytes), human(main_bytes)),
    ];
    if ins.segments.is_some() {
        let used: u64 = segs.iter().map(|g| g.valid_blocks as u64).sum::<u64>() * BLOCK_SIZE as u64;
        let in_use = segs.iter().filter(|g| g.valid_blocks > 0).count();
        usage.push(format!("used {} ({:.1} %)", human(used), pct(used, main_bytes)));
        usage.push(format!(
            "free {} ({:.1} %)",
            human(main_bytes.saturating_sub(used)),
            pct(main_bytes.saturating_sub(used), main_bytes)
        ));
        usage.push(format!("segments: {in_use} in use, {} free", segs.len() - in_use));
    }
    usage.push(format!("{} segments reserved for cleaning", ins.reserved_segments));
    for line in wrap(&[id, usage].concat(), INNER, 12.0) {
        y += 17.0;
        text(&mut b, MARGIN, y, 12.0, "", &line);
    }

    // ---- layout: to scale, then the metadata magnified ---------------------------------
    let parts = parts(ins);
    let total = parts.iter().map(|p| p.start + p.blocks).max().unwrap_or(1).max(1);
    y += 34.0;
    text(
        &mut b,
        MARGIN,
        y,
        14.0,
        r#" font-weight="bold""#,
        &format!(
            "Device layout, to scale ({} blocks of 4 KiB; 1 px = {})",
            total,
            human(total * BLOCK_SIZE as u64 / INNER as u64)
        ),
    );
    let bar_h = 26.0;
    let bar_y = y + 8.0;
    let sx = INNER / total as f64;
    for (i, p) in parts.iter().enumerate() {
        let _ = writeln!(
            b,
            r#"<rect id="bar-{i}" class="area" data-area="{}" data-blocks="{}" x="{:.3}" y="{bar_y:.1}" width="{:.3}" height="{bar_h}" fill="{}"><title>{}: blocks {}–{}, {} blocks, {} ({:.2} % of the device): {}</title></rect>"#,
            esc(&p.name),
            p.blocks,
            MARGIN + p.start as f64 * sx,
            p.blocks as f64 * sx,
            p.fill,
            esc(&p.name),
            p.start,
            p.start + p.blocks.max(1) - 1,
            p.blocks,
            human(p.blocks * BLOCK_SIZE as u64),
            pct(p.blocks, total),
            p.what
        );
    }
    let _ = writeln!(
        b,
        r##"<rect x="{MARGIN}" y="{bar_y:.1}" width="{INNER}" height="{bar_h}" fill="none" stroke="#444" stroke-width="0.5"/>"##
    );
    // The main area's name inside it when it fits (it is the table's first wide row anyway).
    if let Some(m) = parts.iter().find(|p| p.name == "main") {
        let (x, w) = (MARGIN + m.start as f64 * sx, m.blocks as f64 * sx);
        let long = format!("main area: {} segments, {}", ins.main_segments, human(main_bytes));
        for t in [long.as_str(), "main"] {
            if tw(t, 12.0) + 12.0 <= w {
                text(&mut b, x + w / 2.0, bar_y + 17.0, 12.0, r#" text-anchor="middle""#, t);
                break;
            }
        }
    }
    let meta_end = parts.iter().find(|p| p.name == "main").map(|p| p.start).unwrap_or(total).max(1);
    let meta_w = meta_end as f64 * sx;
    let inset_y = bar_y + bar_h + 44.0;
    // The zoom: from the metadata's sliver of the bar to the full width of the inset.
    let _ = writeln!(
        b,
        r##"<polygon points="{MARGIN},{:.1} {:.3},{:.1} {},{inset_y:.1} {MARGIN},{inset_y:.1}" fill="#000" fill-opacity="0.06" stroke="#888" stroke-width="0.5" stroke-dasharray="3,2"/>"##,
        bar_y + bar_h,
        MARGIN + meta_w,
        bar_y + bar_h,
        MARGIN + INNER
    );
    let caption = format!(
        "blocks 0–{}: the metadata, {} ({:.2} % of the device), magnified ×{:.0} below",
        meta_end - 1,
        human(meta_end * BLOCK_SIZE as u64),
        pct(meta_end, total),
        total as f64 / meta_end as f64
    );
    text(&mut b, MARGIN + INNER, bar_y + bar_h + 26.0, 12.0, r#" text-anchor="end""#, &caption);
    let ix = INNER / meta_end as f64;
    let meta: Vec<(usize, &Part)> = parts.iter().enumerate().filter(|(_, p)| p.start < meta_end).collect();
    let mut widened = false;
    for (i, p) in &meta {
        let w = p.blocks.min(meta_end - p.start) as f64 * ix;
        widened |= w < 1.0;
        let _ = writeln!(
            b,
            r#"<rect id="inset-{i}" class="area" data-area="{}" data-blocks="{}" x="{:.3}" y="{inset_y:.1}" width="{:.3}" height="{bar_h}" fill="{}"><title>{}: blocks {}–{}, {} blocks, {}</title></rect>"#,
            esc(&p.name),
            p.blocks,
            MARGIN + p.start as f64 * ix,
            w.max(1.0),
            p.fill,
            esc(&p.name),
            p.start,
            p.start + p.blocks.max(1) - 1,
            p.blocks,
            human(p.blocks * BLOCK_SIZE as u64)
        );
    }
    let _ = writeln!(
        b,
        r##"<rect x="{MARGIN}" y="{inset_y:.1}" width="{INNER}" height="{bar_h}" fill="none" stroke="#444" stroke-width="0.5"/>"##
    );
    // Names below the inset, each joined to its area by a leader line.
    let names: Vec<String> = meta.iter().map(|(_, p)| p.name.clone()).collect();
    let widths: Vec<f64> = names.iter().map(|n| tw(n, 12.0) + 6.0).collect();
    let centres: Vec<f64> = meta
        .iter()
        .map(|(_, p)| MARGIN + (p.start as f64 + p.blocks.min(meta_end - p.start) as f64 / 2.0) * ix)
        .collect();
    let lefts = place(&centres, &widths, MARGIN, MARGIN + INNER, 8.0);
    let label_y = inset_y + bar_h + 26.0;
    for (k, n) in names.iter().enumerate() {
        let cx = lefts[k] + widths[k] / 2.0;
        let _ = writeln!(
            b,
            r##"<line x1="{:.2}" y1="{:.1}" x2="{cx:.2}" y2="{:.1}" stroke="#555" stroke-width="0.75"/>"##,
            centres[k],
            inset_y + bar_h,
            label_y - 12.0
        );
        text(&mut b, cx, label_y, 12.0, r#" text-anchor="middle" class="area-label""#, n);
    }
    if widened {
        text(
            &mut b,
            MARGIN,
            label_y + 18.0,
            11.0,
            r##" fill="#555""##,
            "(areas narrower than 1 px in the magnified bar are drawn 1 px wide)",
        );
    }
    // The table: every part of the device, with its blocks and bytes.
    y = label_y + if widened { 40.0 } else { 26.0 };
    let head = ["area", "blocks", "count", "size", "of device", "what"];
    let rows: Vec<[String; 6]> = parts
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                format!("{}–{}", p.start, p.start + p.blocks.max(1) - 1),
                format!("{} blocks", p.blocks),
                human(p.blocks * BLOCK_SIZE as u64),
                format!("{:.2} %", pct(p.blocks, total)),
                p.what.to_string(),
            ]
        })
        .collect();
    // Columns as wide as their widest entry; the last one gets what is left.
    let mut cols = [18.0; 6];
    for c in 1..cols.len() {
        let widest = rows.iter().map(|r| tw(&r[c - 1], 11.0)).fold(tw(head[c - 1], 11.0), f64::max);
        cols[c] = cols[c - 1] + widest + 14.0;
    }
    for (c, h) in cols.iter().zip(head) {
        text(&mut b, MARGIN + c, y, 11.0, r##" font-weight="bold" fill="#333""##, h);
    }
    for (p, row) in parts.iter().zip(&rows) {
        y += 15.0;
        let _ = writeln!(
            b,
            r##"<rect x="{MARGIN}" y="{:.1}" width="11" height="11" fill="{}" stroke="#444" stroke-width="0.5"/>"##,
            y - 9.5,
            p.fill
        );
        for (c, t) in cols.iter().zip(&row[..5]) {
            text(&mut b, MARGIN + c, y, 11.0, "", t);
        }
        text(&mut b, MARGIN + cols[5], y, 11.0, r##" fill="#555""##, &fit(&row[5], INNER - cols[5], 11.0));
    }

    // ---- segment maps -------------------------------------------------------------------
    match &ins.segments {
        Some(segs) if !segs.is_empty() => {
            let group = segs.len().div_ceil(MAX_CELLS).max(1);
            let cells: Vec<Cell> =
                segs.chunks(group).enumerate().map(|(i, c)| Cell { first: (i * group) as u32, segs: c }).collect();
            let logs: &[LogInfo] = ins.checkpoint.as_ref().map(|c| c.logs.as_slice()).unwrap_or(&[]);
            y = utilisation_map(&mut b, ins, &cells, group, logs, y + 40.0);
            y = wear_map(&mut b, &cells, group, segs, y + 40.0);
        }
        _ => {
            y += 40.0;
            let why = ins.segment_error.as_deref().unwrap_or("the image has no main-area segments");
            text(&mut b, MARGIN, y, 14.0, r#" font-weight="bold""#, "Segment maps unavailable");
            y += 18.0;
            text(&mut b, MARGIN, y, 12.0, "", &fit(why, INNER, 12.0));
        }
    }
    let height = (y + 24.0).ceil();

    let mut s = String::with_capacity(b.len() + 1024);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" font-size="12">"#
    );
    let _ = writeln!(s, "<title>rollfs inspect: {}</title>", esc(&ins.target));
    s.push_str("<defs>\n");
    s.push_str(r##"<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f2f2f2"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="2"/></pattern>"##);
    s.push('\n');
    gradient(&mut s, "util-ramp", &UTIL_RAMP);
    gradient(&mut s, "wear-ramp", &WEAR_RAMP);
    s.push_str("</defs>\n");
    let _ = writeln!(s, r#"<rect width="{WIDTH}" height="{height}" fill="white"/>"#);
    s.push_str(&b);
    s.push_str("</svg>\n");
    s
}

/// `pieces` joined with " · " into lines no wider than `width`.
fn wrap(pieces: &[String], width: f64, size: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for p in pieces {
        let p = fit(p, width, size);
        if cur.is_empty() {
            cur = p;
        } else if tw(&cur, size) + tw(" · ", size) + tw(&p, size) <= width {
            cur.push_str(" · ");
            cur.push_str(&p);
        } else {
            lines.push(std::mem::replace(&mut cur, p));
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

fn cell_x(i: usize) -> f64 {
    MARGIN + (i % COLS) as f64 * CELL
}

fn map_heading(b: &mut String, y: f64, title: &str, n: usize, group: usize) -> f64 {
    text(b, MARGIN, y, 14.0, r#" font-weight="bold""#, title);
    let how = if group == 1 {
        format!("{n} main-area segments: one cell per segment, {COLS} per row, segment 0 at the top left")
    } else {
        format!("{n} main-area segments: one cell per {group} consecutive segments, {COLS} cells per row, segment 0 at the top left")
    };
    text(b, MARGIN, y + 17.0, 12.0, "", &how);
    y + 17.0
}

/// A colour scale: a gradient bar between two labels; returns the x after it.
fn scale(b: &mut String, x: f64, y: f64, grad: &str, lo: &str, hi: &str) -> f64 {
    text(b, x, y, 12.0, "", lo);
    let gx = x + tw(lo, 12.0) + 6.0;
    let _ = writeln!(
        b,
        r##"<rect class="legend-scale" x="{gx:.1}" y="{:.1}" width="160" height="12" fill="url(#{grad})" stroke="#444" stroke-width="0.5"/>"##,
        y - 10.0
    );
    text(b, gx + 166.0, y, 12.0, "", hi);
    gx + 166.0 + tw(hi, 12.0)
}

fn utilisation_map(b: &mut String, ins: &Inspection, cells: &[Cell], group: usize, logs: &[LogInfo], y0: f64) -> f64 {
    let segs_n: usize = cells.iter().map(|c| c.segs.len()).sum();
    let mut y = map_heading(b, y0, "Segment utilisation (valid blocks per segment)", segs_n, group);
    // Legend: free, the colour scale, a log head.
    y += 22.0;
    let _ = writeln!(
        b,
        r#"<g class="legend"><rect x="{MARGIN}" y="{:.1}" width="12" height="12" fill="{FREE_FILL}" stroke="{FREE_STROKE}" stroke-width="0.75"/>"#,
        y - 10.0
    );
    let free_txt = if group == 1 { "free (no valid block)" } else { "all free" };
    text(b, MARGIN + 18.0, y, 12.0, "", free_txt);
    let x = MARGIN + 18.0 + tw(free_txt, 12.0) + 24.0;
    let (lo, hi) = if group == 1 {
        ("1 block valid".to_string(), format!("{} (full)", ins.segment_blocks))
    } else {
        ("almost empty".to_string(), "full".to_string())
    };
    let x = scale(b, x, y, "util-ramp", &lo, &hi);
    let hx = x + 24.0;
    let _ = writeln!(
        b,
        r##"<rect x="{hx:.1}" y="{:.1}" width="12" height="12" fill="{FREE_FILL}" stroke="#000" stroke-width="2"/>"##,
        y - 10.0
    );
    text(b, hx + 18.0, y, 12.0, "", "log head: open for writing at that block");
    b.push_str("</g>\n");
    // The heads spelled out, three per line.
    let mut where_: Vec<(usize, usize, &LogInfo)> = logs
        .iter()
        .filter(|l| (l.segno as usize) < segs_n)
        .enumerate()
        .map(|(k, l)| (l.segno as usize / group, k, l))
        .collect();
    for row in logs.chunks(3) {
        y += 18.0;
        let mut x = MARGIN;
        for l in row {
            let a = abbrev(l.name);
            head_tag(b, x, y - 11.0, &a, l.name);
            let t = format!("{}: segment {}, block {}", l.name, l.segno, l.next_blkoff);
            let room = INNER / 3.0 - tag_w(&a) - 18.0;
            text(b, x + tag_w(&a) + 6.0, y, 12.0, r#" class="head-legend""#, &fit(&t, room, 12.0));
            x += INNER / 3.0;
        }
    }
    where_.sort_by_key(|&(c, k, _)| (c, k));
    // The grid, with a lane for tags above each row that holds a head.
    y += 12.0;
    let rows = cells.len().div_ceil(COLS);
    for r in 0..rows {
        let here: Vec<&(usize, usize, &LogInfo)> = where_.iter().filter(|(c, _, _)| c / COLS == r).collect();
        if !here.is_empty() {
            let names: Vec<String> = here.iter().map(|(_, _, l)| abbrev(l.name)).collect();
            let widths: Vec<f64> = names.iter().map(|n| tag_w(n)).collect();
            let centres: Vec<f64> = here.iter().map(|(c, _, _)| cell_x(*c) + CELL / 2.0).collect();
            let lefts = place(&centres, &widths, MARGIN, MARGIN + INNER, 0.5);
            // Tags right above their cells need no leader; a row with a tag moved aside
            // gets a taller lane for the leader lines.
            let moved = |k: usize| (lefts[k] + widths[k] / 2.0 - centres[k]).abs() > 0.5;
            let lane = if (0..here.len()).any(moved) { LANE } else { 15.0 };
            for (k, (_, _, l)) in here.iter().enumerate() {
                let tag_y = y + 1.0;
                head_tag(b, lefts[k], tag_y, &names[k], l.name);
                let cx = lefts[k] + widths[k] / 2.0;
                if moved(k) {
                    let _ = writeln!(
                        b,
                        r##"<line x1="{cx:.2}" y1="{:.1}" x2="{:.2}" y2="{:.1}" stroke="#000" stroke-width="0.75"/>"##,
                        tag_y + 12.0,
                        centres[k],
                        y + lane
                    );
                }
            }
            y += lane;
        }
        for (i, c) in cells.iter().enumerate().skip(r * COLS).take(COLS) {
            let cap = c.segs.len() as u64 * ins.segment_blocks.max(1) as u64;
            let valid = c.valid();
            let heads: Vec<String> = c
                .segs
                .iter()
                .filter_map(|g| g.log.as_deref().map(|l| (g, l)))
                .map(|(g, l)| {
                    let next = logs.iter().find(|x| x.name == l).map(|x| x.next_blkoff).unwrap_or(0);
                    format!("; {} head ({}) in segment {}, next block {next}", l, abbrev(l), g.segno)
                })
                .collect();
            let fill = if valid == 0 {
                FREE_FILL.to_string()
            } else {
                ramp(&UTIL_RAMP, (valid - 1) as f64 / (cap - 1).max(1) as f64)
            };
            let (stroke, sw, inset) = if !heads.is_empty() {
                ("#000", 2.0, 2.0)
            } else if valid == 0 {
                (FREE_STROKE, 0.75, 1.0)
            } else {
                ("none", 0.0, 0.5)
            };
            let counts: Vec<u64> = c.segs.iter().filter_map(|g| g.write_count).collect();
            let wear = match (counts.iter().min(), counts.iter().max()) {
                (Some(a), Some(z)) if a == z => format!(", {}", writes(*a)),
                (Some(a), Some(z)) => format!(", {a}–{z} writes"),
                _ => String::new(),
            };
            let kind = match (c.segs.len(), c.segs.first().and_then(|g| g.seg_type.as_deref())) {
                (1, Some(t)) if valid > 0 => format!(", {t} blocks"),
                (n, _) if n > 1 => format!(", {} free", c.segs.iter().filter(|g| g.valid_blocks == 0).count()),
                _ => String::new(),
            };
            let _ = writeln!(
                b,
                r#"<rect id="u{i}" class="seg" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"><title>{}: {valid} of {cap} blocks valid ({:.1} %){kind}{wear}{}</title></rect>"#,
                cell_x(i) + inset,
                y + inset,
                CELL - 2.0 * inset,
                CELL - 2.0 * inset,
                c.label(),
                pct(valid, cap),
                esc(&heads.concat())
            );
        }
        y += CELL;
    }
    y
}

fn tag_w(abbr: &str) -> f64 {
    tw(abbr, TAG_FONT) + 3.0
}

/// "1 write", "2 writes".
fn writes(n: u64) -> String {
    if n == 1 {
        "1 write".into()
    } else {
        format!("{n} writes")
    }
}

fn head_tag(b: &mut String, x: f64, y: f64, abbr: &str, name: &str) {
    let fill = if name.contains("node") { NODE_HEAD } else { DATA_HEAD };
    let w = tag_w(abbr);
    let _ = writeln!(
        b,
        r#"<g class="head" data-log="{}"><rect x="{x:.2}" y="{y:.1}" width="{w:.2}" height="12" rx="2" fill="{fill}"/><text x="{:.2}" y="{:.1}" font-size="{TAG_FONT}" font-weight="bold" fill="white" text-anchor="middle">{}</text></g>"#,
        esc(name),
        x + w / 2.0,
        y + 9.5,
        esc(abbr)
    );
}

fn wear_map(b: &mut String, cells: &[Cell], group: usize, segs: &[SegmentInfo], y0: f64) -> f64 {
    let mut y = map_heading(b, y0, "Wear (times each segment was opened for writing)", segs.len(), group);
    let counts: Vec<u64> = segs.iter().filter_map(|g| g.write_count).collect();
    let (Some(&lo), Some(&hi)) = (counts.iter().min(), counts.iter().max()) else {
        y += 22.0;
        text(b, MARGIN, y, 12.0, "", "wear unavailable: the SIT records no write counts");
        return y;
    };
    let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    y += 22.0;
    b.push_str("<g class=\"legend\">\n");
    let x = scale(b, MARGIN, y, "wear-ramp", &format!("min {lo}"), &format!("max {}", writes(hi)));
    let mut note = format!("mean {mean:.1}; never written: {}", counts.iter().filter(|&&w| w == 0).count());
    if group > 1 {
        note.push_str("; a cell shows its most-written segment");
    }
    text(b, x + 24.0, y, 12.0, "", &note);
    b.push_str("</g>\n");
    y += 12.0;
    for (i, c) in cells.iter().enumerate() {
        if i % COLS == 0 && i > 0 {
            y += CELL;
        }
        let w: Vec<u64> = c.segs.iter().filter_map(|g| g.write_count).collect();
        let top = w.iter().max().copied().unwrap_or(lo);
        let fill = ramp(&WEAR_RAMP, if hi > lo { (top - lo) as f64 / (hi - lo) as f64 } else { 0.0 });
        let what = match (w.iter().min(), c.segs.len()) {
            (Some(a), n) if n > 1 && *a != top => format!("{a}–{top} writes"),
            _ => writes(top),
        };
        let _ = writeln!(
            b,
            r#"<rect id="w{i}" class="wear" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}"><title>{}: {what}</title></rect>"#,
            cell_x(i) + 0.5,
            y + 0.5,
            CELL - 1.0,
            CELL - 1.0,
            c.label()
        );
    }
    y + CELL
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceKind;
    use crate::inspect::{CheckpointInfo, Inspection};
    use rollfs_core::layout::Geometry;
    use rollfs_core::Log;

    /// An element of a parsed document: its name and attributes, unescaped.
    #[derive(Debug)]
    struct Element {
        name: String,
        attrs: Vec<(String, String)>,
        /// The text right after the start tag, unescaped.
        text: String,
    }

    impl Element {
        fn attr(&self, k: &str) -> Option<&str> {
            self.attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
        }
    }

    fn unescape(t: &str) -> Result<String, String> {
        let mut o = String::new();
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            o.push_str(&rest[..i]);
            let end = rest[i..].find(';').ok_or_else(|| format!("unterminated entity in {t:?}"))?;
            let ent = &rest[i + 1..i + end];
            o.push(match ent {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                _ => {
                    let n = if let Some(h) = ent.strip_prefix("#x") {
                        u32::from_str_radix(h, 16)
                    } else if let Some(d) = ent.strip_prefix('#') {
                        d.parse()
                    } else {
                        return Err(format!("unknown entity &{ent};"));
                    };
                    n.ok().and_then(char::from_u32).ok_or_else(|| format!("bad character reference &{ent};"))?
                }
            });
            rest = &rest[i + end + 1..];
        }
        o.push_str(rest);
        if o.chars().any(|c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')) {
            return Err(format!("control character in {t:?}"));
        }
        Ok(o)
    }

    /// A small XML well-formedness check, enough for what `svg` writes: one root, tags
    /// balanced, attributes quoted and unique, entities known, no stray `<` or `&`, no
    /// control characters. Returns the elements in document order.
    fn parse_xml(s: &str) -> Result<Vec<Element>, String> {
        let mut out: Vec<Element> = Vec::new();
        let mut stack: Vec<String> = Vec::new();
        let mut roots = 0;
        let mut i = 0;
        let name_end =
            |t: &str| t.find(|c: char| !(c.is_ascii_alphanumeric() || "-_:.".contains(c))).unwrap_or(t.len());
        while i < s.len() {
            let rest = &s[i..];
            let Some(lt) = rest.find('<') else {
                if !rest.trim().is_empty() {
                    return Err(format!("text after the root: {rest:?}"));
                }
                break;
            };
            let txt = &rest[..lt];
            if stack.is_empty() && !txt.trim().is_empty() {
                return Err(format!("text outside the root: {txt:?}"));
            }
            let txt = unescape(txt)?;
            if let Some(last) = out.last_mut() {
                if last.text.is_empty() && stack.last() == Some(&last.name) {
                    last.text = txt;
                }
            }
            let tag = &rest[lt + 1..];
            if let Some(c) = tag.strip_prefix("!--") {
                let e = c.find("-->").ok_or("unterminated comment")?;
                i += lt + 4 + e + 3;
                continue;
            }
            if let Some(p) = tag.strip_prefix('?') {
                let e = p.find("?>").ok_or("unterminated processing instruction")?;
                i += lt + 2 + e + 2;
                continue;
            }
            if let Some(c) = tag.strip_prefix('/') {
                let n = name_end(c);
                let after = c[n..].trim_start();
                if !after.starts_with('>') {
                    return Err(format!("bad end tag </{}", &c[..n]));
                }
                match stack.pop() {
                    Some(open) if open == c[..n] => {}
                    other => return Err(format!("</{}> closes {other:?}", &c[..n])),
                }
                i = s.len() - after.len() + 1;
                continue;
            }
            let n = name_end(tag);
            if n == 0 {
                return Err(format!("stray '<' at byte {}", i + lt));
            }
            if stack.is_empty() {
                roots += 1;
            }
            let mut el = Element { name: tag[..n].to_string(), attrs: Vec::new(), text: String::new() };
            let mut a = &tag[n..];
            let self_closing = loop {
                let t = a.trim_start();
                if t.len() == a.len() && !t.starts_with('>') && !t.starts_with("/>") {
                    return Err(format!("no space before an attribute of <{}>", el.name));
                }
                a = t;
                if let Some(r) = a.strip_prefix("/>") {
                    a = r;
                    break true;
                }
                if let Some(r) = a.strip_prefix('>') {
                    a = r;
                    break false;
                }
                let k = name_end(a);
                if k == 0 {
                    return Err(format!("bad attribute in <{}>: {:?}", el.name, &a[..a.len().min(20)]));
                }
                let key = a[..k].to_string();
                let r = a[k..].strip_prefix('=').ok_or_else(|| format!("attribute {key} without '='"))?;
                let q =
                    r.chars().next().filter(|c| *c == '"' || *c == '\'').ok_or_else(|| format!("unquoted {key}"))?;
                let end = r[1..].find(q).ok_or_else(|| format!("unterminated {key}"))?;
                let raw = &r[1..1 + end];
                if raw.contains('<') {
                    return Err(format!("'<' in attribute {key}"));
                }
                if el.attrs.iter().any(|(x, _)| *x == key) {
                    return Err(format!("attribute {key} twice in <{}>", el.name));
                }
                el.attrs.push((key, unescape(raw)?));
                a = &r[1 + end + 1..];
            };
            if roots > 1 {
                return Err("more than one root element".into());
            }
            if !self_closing {
                stack.push(el.name.clone());
            }
            out.push(el);
            i = s.len() - a.len();
        }
        if let Some(open) = stack.last() {
            return Err(format!("<{open}> is not closed"));
        }
        if roots != 1 {
            return Err("no root element".into());
        }
        Ok(out)
    }

    #[test]
    fn the_checker_rejects_what_is_not_well_formed() {
        assert!(parse_xml(r#"<svg a="1"><g><rect/></g></svg>"#).is_ok());
        for bad in [
            "<svg><g></svg>",
            "<svg>a < b</svg>",
            "<svg>a & b</svg>",
            r#"<svg a="1" a="2"/>"#,
            "<svg a=1/>",
            "<svg/><svg/>",
            "<svg>\u{1}</svg>",
            r#"<svg a="x"b="y"/>"#,
            "<svg>",
        ] {
            assert!(parse_xml(bad).is_err(), "accepted {bad:?}");
        }
    }

    /// An inspection with a real geometry for `blocks` blocks and segments filled in a
    /// pattern: some free, some full, some partly valid, wear rising along the device.
    fn inspection(blocks: u64, segment_blocks: u32) -> Inspection {
        let g = Geometry::compute(blocks, segment_blocks, 5).unwrap();
        let n = g.main_segments;
        let heads = [0, 1, 2, n / 2, n / 2 + 1, n - 1];
        let logs: Vec<LogInfo> = Log::ALL
            .iter()
            .zip(heads)
            .map(|(l, segno)| LogInfo { name: l.name(), segno, next_blkoff: segno % segment_blocks })
            .collect();
        let segments = (0..n)
            .map(|segno| {
                let valid = match segno % 7 {
                    0 | 3 => 0,
                    1 => segment_blocks,
                    k => segment_blocks * k / 7,
                };
                let log = logs.iter().find(|l| l.segno == segno).map(|l| l.name.to_string());
                SegmentInfo {
                    segno,
                    valid_blocks: valid,
                    seg_type: (valid > 0).then(|| "warm-data".to_string()),
                    log,
                    write_count: Some(segno as u64 % 13),
                    mtime: 0,
                }
            })
            .collect();
        Inspection {
            target: "/tmp/a <b> & \"c\" 'd'\u{1}.img".into(),
            device_kind: DeviceKind::ImageFile,
            device_bytes: blocks * BLOCK_SIZE as u64,
            format_version: "2.0".into(),
            uuid: "00112233-4455-6677-8899-aabbccddeeff".into(),
            label: "x<y&z".into(),
            created_unix: 0,
            feature_compat: 0,
            feature_incompat: 0,
            feature_ro_compat: 0,
            data_checksums: false,
            block_size: BLOCK_SIZE,
            segment_blocks: g.segment_blocks,
            main_segments: n,
            reserved_segments: g.reserved_segments,
            nid_count: g.nid_count,
            max_bytes: 0,
            areas: crate::inspect::areas(&g),
            checkpoint_version: Some(42),
            inodes: None,
            directories: None,
            data_blocks: None,
            node_blocks: None,
            fsck_clean: Some(true),
            fsck_error: None,
            attribute_flags: None,
            data_blocks_verified: None,
            bad_data_blocks: None,
            checkpoint: Some(CheckpointInfo {
                version: 42,
                pack: 0,
                clean_unmount: true,
                time_unix: 0,
                valid_blocks: 0,
                valid_nodes: 0,
                valid_inodes: 0,
                written_blocks: 0,
                orphans: 0,
                logs,
            }),
            segments: Some(segments),
            segment_error: None,
        }
    }

    fn texts(s: &str) -> String {
        // Text content only, for "does the picture say X" checks.
        let mut o = String::new();
        let mut inside = false;
        for c in s.chars() {
            match c {
                '<' => inside = true,
                '>' => {
                    inside = false;
                    o.push(' ');
                }
                c if !inside => o.push(c),
                _ => {}
            }
        }
        o
    }

    fn num(e: &Element, k: &str) -> f64 {
        e.attr(k).unwrap_or_else(|| panic!("{e:?} has no {k}")).parse().unwrap()
    }

    #[test]
    fn the_picture_is_well_formed_with_a_title_legends_heads_and_a_cell_per_segment() {
        // 128 MiB with 256 KiB segments: about 500 segments, one cell each.
        let ins = inspection(32768, 64);
        let s = svg(&ins);
        let els = parse_xml(&s).unwrap_or_else(|e| panic!("not well-formed: {e}\n{s}"));
        assert_eq!(els[0].name, "svg");
        assert_eq!(els[0].attr("xmlns"), Some("http://www.w3.org/2000/svg"));
        // The title: path (escaped, control character replaced), UUID, version, size, used/free.
        assert!(s.contains("a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;\u{fffd}.img"), "{s}");
        let t = texts(&s);
        for want in [
            "UUID 00112233-4455-6677-8899-aabbccddeeff",
            "checkpoint version 42 (clean unmount)",
            "size 128.0 MiB",
            "used ",
            "free ",
            "label &quot;x&lt;y&amp;z&quot;",
        ] {
            assert!(t.contains(want), "no {want:?} in {t}");
        }
        // One cell per segment in each map.
        let n = ins.main_segments as usize;
        assert_eq!(els.iter().filter(|e| e.attr("class") == Some("seg")).count(), n);
        assert_eq!(els.iter().filter(|e| e.attr("class") == Some("wear")).count(), n);
        assert!(t.contains("one cell per segment"), "{t}");
        // Free segments white with an outline; full ones the darkest colour.
        let cell = |i: usize| els.iter().find(|e| e.attr("id") == Some(&format!("u{i}"))).unwrap();
        assert_eq!((cell(3).attr("fill"), cell(3).attr("stroke")), (Some(FREE_FILL), Some(FREE_STROKE)));
        assert_eq!(cell(8).attr("fill"), Some(ramp(&UTIL_RAMP, 1.0).as_str()));
        // The six heads: a tag in the map and one in the legend each, spelled out there;
        // their cells outlined in black.
        for l in Log::ALL {
            let tags = els.iter().filter(|e| e.attr("class") == Some("head") && e.attr("data-log") == Some(l.name()));
            assert_eq!(tags.count(), 2, "{}", l.name());
            assert!(t.contains(&format!(" {} ", abbrev(l.name()))), "no tag {}", abbrev(l.name()));
            assert!(t.contains(&format!("{}: segment ", l.name())), "legend lacks {}", l.name());
        }
        assert_eq!(
            els.iter().filter(|e| e.attr("class") == Some("seg") && e.attr("stroke") == Some("#000")).count(),
            6
        );
        assert_eq!(["HD", "WD", "CD", "HN", "WN", "CN"].to_vec(), Log::ALL.map(|l| abbrev(l.name())).to_vec());
        // Legends: free, the utilisation scale, log head; the wear scale with min and max.
        assert_eq!(els.iter().filter(|e| e.attr("class") == Some("legend")).count(), 2);
        assert_eq!(els.iter().filter(|e| e.attr("class") == Some("legend-scale")).count(), 2);
        for want in ["free (no valid block)", "64 (full)", "log head", "min 0", "max 12 writes", "mean "] {
            assert!(t.contains(want), "no {want:?} in the legend: {t}");
        }
        // Deterministic.
        assert_eq!(s, svg(&ins));
    }

    #[test]
    fn areas_are_drawn_to_scale_and_the_metadata_magnified_to_its_own() {
        for (blocks, seg) in [(32768, 256), (1 << 20, 512), (16 << 20, 512), (5000, 16)] {
            let ins = inspection(blocks, seg);
            let s = svg(&ins);
            let els = parse_xml(&s).unwrap();
            let bar: Vec<&Element> =
                els.iter().filter(|e| e.attr("id").is_some_and(|i| i.starts_with("bar-"))).collect();
            // The bar covers the device: every area, and the unused stretches.
            let total: f64 = bar.iter().map(|e| num(e, "data-blocks")).sum();
            assert_eq!(total as u64, blocks);
            let total_w: f64 = bar.iter().map(|e| num(e, "width")).sum();
            assert!((total_w - INNER).abs() < 0.01, "{total_w}");
            for e in &bar {
                let want = num(e, "data-blocks") / blocks as f64 * INNER;
                assert!((num(e, "width") - want).abs() < 0.001, "{e:?}: want width {want}");
            }
            for a in &ins.areas {
                assert!(bar
                    .iter()
                    .any(|e| e.attr("data-area") == Some(a.name) && num(e, "data-blocks") == a.blocks as f64));
            }
            // The inset: the metadata areas at one scale, filling its width.
            let inset: Vec<&Element> =
                els.iter().filter(|e| e.attr("id").is_some_and(|i| i.starts_with("inset-"))).collect();
            let main = ins.areas.iter().find(|a| a.name == "main").unwrap();
            let scale = INNER / main.start_block as f64;
            assert_eq!(inset.iter().map(|e| num(e, "data-blocks")).sum::<f64>() as u64, main.start_block);
            for e in &inset {
                let want = (num(e, "data-blocks") * scale).max(1.0);
                assert!((num(e, "width") - want).abs() < 0.001, "{e:?}: want width {want}");
            }
            // Every metadata area is named below the inset.
            let labels: Vec<&str> = s
                .lines()
                .filter(|l| l.contains("class=\"area-label\""))
                .map(|l| l.split('>').nth(1).unwrap())
                .collect();
            for a in ins.areas.iter().filter(|a| a.name != "main") {
                assert!(labels.iter().any(|l| l.starts_with(a.name)), "{} not labelled: {labels:?}", a.name);
            }
        }
    }

    /// No two texts overlap, and every text is inside the picture, for devices from the
    /// smallest to the largest.
    #[test]
    fn no_text_overlaps_another() {
        for (blocks, seg) in [(4096, 16), (32768, 256), (1 << 20, 512), (16 << 20, 16), (u32::MAX as u64, 512)] {
            let mut ins = inspection(blocks, seg);
            ins.label = "a label of the longest kind you could give".into();
            let s = svg(&ins);
            let els = parse_xml(&s).unwrap();
            let (w, h) = (num(&els[0], "width"), num(&els[0], "height"));
            let boxes: Vec<(f64, f64, f64, f64, &str)> = els
                .iter()
                .filter(|e| e.name == "text")
                .map(|e| {
                    let size = e.attr("font-size").map_or(12.0, |v| v.parse().unwrap());
                    let tw = tw(&e.text, size);
                    let x = num(e, "x")
                        - match e.attr("text-anchor") {
                            Some("middle") => tw / 2.0,
                            Some("end") => tw,
                            _ => 0.0,
                        };
                    let y = num(e, "y");
                    (x, y - 0.8 * size, x + tw, y + 0.22 * size, e.text.as_str())
                })
                .collect();
            assert!(boxes.len() > 40);
            for (i, a) in boxes.iter().enumerate() {
                assert!(a.0 >= 0.0 && a.1 >= 0.0 && a.2 <= w && a.3 <= h, "{a:?} outside {w}x{h}");
                for b in &boxes[i + 1..] {
                    let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
                    assert!(apart, "{blocks} blocks: {a:?} overlaps {b:?}");
                }
            }
        }
    }

    #[test]
    fn large_devices_group_segments_per_cell_and_say_so() {
        // 64 GiB of 64 KiB segments: about a million segments.
        let ins = inspection(16 << 20, 16);
        let n = ins.main_segments as usize;
        let s = svg(&ins);
        let els = parse_xml(&s).unwrap();
        let group = n.div_ceil(MAX_CELLS);
        assert!(group > 1);
        let cells = els.iter().filter(|e| e.attr("class") == Some("seg")).count();
        assert_eq!(cells, n.div_ceil(group));
        assert!(cells <= MAX_CELLS);
        assert!(texts(&s).contains(&format!("one cell per {group} consecutive segments")));
        // The heads still each have their tag.
        assert_eq!(els.iter().filter(|e| e.attr("class") == Some("head")).count(), 12);
        assert!(s.len() < 1 << 20, "{} bytes", s.len());
    }

    #[test]
    fn without_segment_information_it_says_why() {
        let mut ins = inspection(32768, 256);
        ins.segments = None;
        ins.checkpoint = None;
        ins.segment_error = Some("checkpoint <unreadable> & gone".into());
        let s = svg(&ins);
        parse_xml(&s).unwrap();
        assert!(texts(&s).contains("Segment maps unavailable"));
        assert!(s.contains("checkpoint &lt;unreadable&gt; &amp; gone"));
    }

    #[test]
    fn labels_are_placed_without_overlap_in_order_and_inside_the_line() {
        let centres = [0.0, 1.0, 2.0, 3.0, 500.0, 998.0, 999.0];
        let widths = [30.0, 40.0, 50.0, 20.0, 60.0, 30.0, 30.0];
        let x = place(&centres, &widths, 0.0, 1000.0, 4.0);
        assert!(x[0] >= 0.0 && x[6] + widths[6] <= 1000.0, "{x:?}");
        for i in 1..x.len() {
            assert!(x[i] >= x[i - 1] + widths[i - 1] + 4.0 - 1e-9, "{x:?}");
        }
        // Labels with room stay centred on their point.
        assert_eq!(x[4] + widths[4] / 2.0, 500.0);
    }

    #[test]
    fn escaping_and_shortening() {
        assert_eq!(esc("<a href=\"x\">&'\u{0}</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\u{fffd}&lt;/a&gt;");
        let long = "x".repeat(300);
        let f = fit(&long, 100.0, 10.0);
        assert!(tw(&f, 10.0) <= 100.0 && f.contains('…'), "{f}");
        assert_eq!(fit("short", 100.0, 10.0), "short");
        assert_eq!(ramp(&UTIL_RAMP, 0.0), "#fee391");
        assert_eq!(ramp(&UTIL_RAMP, 1.0), "#662506");
        assert_eq!(ramp(&UTIL_RAMP, f64::NAN), "#fee391");
    }
}
