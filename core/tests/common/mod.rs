//! What the core's integration tests share: the crash device (the crash model of
//! docs/INVARIANTS.md as a native `BlockDevice`, from rollfs-testkit, which the fuzz
//! targets and the crash explorer use too), the helpers of the limit tests, and the probe
//! device of the read-path tests.
#![allow(dead_code)]

pub mod images;
pub mod limits;
pub mod mixed;
pub mod pointers;
pub mod probe;
pub mod rec;

pub use rollfs_testkit::CrashDevice;
