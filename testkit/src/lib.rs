//! Test-only code shared by the rollfs test suites (never a dependency of a shipped
//! crate): the reference model of the namespace, the differential runner of the core's
//! model test and fuzz target, and the crash device.
//!
//! - [`model`]: the namespace and its POSIX rules (errors and effects of create, mkdir,
//!   symlink, write, truncate, fallocate, rename, link, unlink, rmdir, chmod, xattrs).
//!   Used by core/tests/model.rs and fuzz/src/lib.rs (through [`ops`]) and by the crash
//!   explorer's model (wasm-harness/src/model.rs), which wraps it with what only the
//!   explorer needs: paths, atomic-write sessions, open handles, fallocate reservations,
//!   oracle snapshots and canonical trees.
//! - [`ops`]: one operation encoding and one run loop for the two differential tests that
//!   drive a native [`rollfs_core::Filesystem`] against the model (proptest in the core,
//!   bytes in the fuzz target); they differ only in how they produce operations.
//! - [`crash`]: the crash model of docs/INVARIANTS.md as a native `BlockDevice`
//!   ([`crash::CrashDevice`], used by the core's recovery, cleaning and exhaustion tests)
//!   and the torn-write rule ([`crash::tear`]).
//!
//! What stays where, and why:
//! - The crash explorer's device (wasm-harness/src/device.rs) is the same crash model but
//!   not the same device: the guest runs in wasm, so the device is driven through the
//!   ABI, completes writes in an order drawn from the seed, records a trace, injects EIO,
//!   and derives thousands of crash images per trace afterwards with shared-memory
//!   overlays. Only the tearing of a write at sectors is literally the same code
//!   ([`crash::tear`]); its pending/volatile bookkeeping walks a trace instead of a live
//!   device, so it stays there.
//! - native/src/record.rs (`rollfs mount --record-writes`, `rollfs replay`) builds crash
//!   images from a real mount's write log, on files. It ships in the `rollfs` binary, so
//!   it cannot depend on this dev-only crate; it stays as it is.
//! - The explorer's model keeps its own path resolution and errno mapping
//!   (`Error::errno`), because its workloads are paths and its errors are the guest's
//!   errnos.

pub mod crash;
pub mod model;
pub mod ops;

pub use crash::CrashDevice;
pub use model::Namespace;
