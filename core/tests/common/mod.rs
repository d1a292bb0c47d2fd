//! What the core's integration tests share: the crash device (the crash model of
//! docs/INVARIANTS.md as a native `BlockDevice`, from rollfs-testkit, which the fuzz
//! targets and the crash explorer use too) and the helpers of the limit tests.
#![allow(dead_code)]

pub mod limits;
pub mod pointers;

pub use rollfs_testkit::CrashDevice;
