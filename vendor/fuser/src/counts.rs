//! rollfs addition (see VENDORED.md): how many requests of each opcode this process's
//! sessions received, so that a filesystem can report what reached it per operation (the
//! kernel keeps no such count).

use crate::ll::fuse_abi::fuse_opcode;
use std::sync::atomic::{AtomicU64, Ordering};

/// Opcodes at or above the last slot share it (only CUSE_INIT and future opcodes).
const SLOTS: usize = 64;

static COUNTS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

pub(crate) fn count(opcode: u32) {
    COUNTS[(opcode as usize).min(SLOTS - 1)].fetch_add(1, Ordering::Relaxed);
}

/// Every opcode received at least once, as (name, requests), in opcode order; the name is
/// the kernel's (`FUSE_GETATTR`), or `FUSE_OPCODE_<n>` for one fuser does not know.
pub fn request_counts() -> Vec<(String, u64)> {
    COUNTS
        .iter()
        .enumerate()
        .filter_map(|(op, c)| {
            let n = c.load(Ordering::Relaxed);
            (n > 0).then(|| {
                let name = fuse_opcode::try_from(op as u32)
                    .map(|o| format!("{o:?}"))
                    .unwrap_or_else(|_| format!("FUSE_OPCODE_{op}"));
                (name, n)
            })
        })
        .collect()
}

/// All requests received, of every opcode.
pub fn requests_received() -> u64 {
    COUNTS.iter().map(|c| c.load(Ordering::Relaxed)).sum()
}
