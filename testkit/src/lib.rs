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
//!   ([`crash::CrashDevice`], used by the core's recovery, cleaning and exhaustion tests),
//!   tearing writes with the shared model's rule (rollfs-crash's `tear`).
//!
//! What stays where, and why:
//! - The crash model over recorded traces (images, the walker, survivors, torn writes)
//!   is rollfs-crash, shared by the explorer (wasm-harness/src/device.rs records the
//!   trace of its simulated device) and `rollfs crashtest`/`rollfs replay`
//!   (native/src/record.rs turns a real mount's write log into the same trace): it ships
//!   in the `rollfs` binary, so it is not part of this dev-only crate.
//! - The explorer's model keeps its own path resolution and errno mapping
//!   (`Error::errno`), because its workloads are paths and its errors are the guest's
//!   errnos.

pub mod crash;
pub mod model;
pub mod ops;

pub use crash::CrashDevice;
pub use model::Namespace;
