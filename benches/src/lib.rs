//! rollfs-benches: the criterion benchmarks of the core (`benches/core.rs`) and the
//! side-by-side comparison with ext4 (`src/bin/compare.rs`).
//!
//! This library holds what both share and what is worth unit-testing: statistics
//! (median, ratios), the parser of fio's JSON output, the SVG chart, and workloads that
//! drive the core directly (fsync cost on `MemDevice`, images with N fsyncs since the
//! last checkpoint), and the host side of the comparisons (`host`: commands, images, the
//! FUSE daemon guard, the write+fsync loop) and the file-system workloads of `fsops`
//! (sequential write and cold read, untar and rm of a tree, save-by-rename, memory).

pub mod chart;
pub mod corework;
pub mod fio;
pub mod fsops;
pub mod host;
pub mod stats;
