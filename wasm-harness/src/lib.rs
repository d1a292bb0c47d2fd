//! rollfs-sim: deterministic crash-state exploration of rollfs-core under wasmtime.
//!
//! The core runs as WebAssembly (`guest/`, ABI in `ABI.md`) against a simulated flash
//! device on the host; a workload runs once, its I/O trace yields crash images, and each
//! image is recovered in a fresh instance and judged against a model of the workload.
//!
//! | module | owns |
//! |---|---|
//! | [`rng`] | the seeded PRNG and hashes (determinism across platforms) |
//! | [`device`] | the simulated device, crash model, traces, crash-image derivation |
//! | [`guest`] | wasmtime engine, guest module/instances, the host side of the ABI |
//! | [`workload`] | operations, workload text format, random/ACE/regression sources |
//! | [`model`] | the oracle's model filesystem and canonical trees |
//! | [`states`] | a run's model states, made incrementally from the paths operations touch |
//! | [`history`] | interval histories of a run's states, for the per-file rules |
//! | [`explore`] | the `Explorer`: its options, base images, crash-state identity, replay, shrinking |
//! | [`run`] | running a workload against the model, its crash states, checking each of them |
//! | [`oracle`] | the verdicts: allowed states, per-file rules, operation outcomes, failure atomicity |
//! | [`memo`] | a run's memos: guest sessions, fscks, dump trees and tree verdicts answered again |
//! | [`schedule`] | the workload sources and the worker threads' schedule of an exploration |
//! | [`shard`] | an exploration's totals and core counters, `--shard K/N` and `merge` |
//! | [`mutants`] | discovering core mutants and checking that each is caught |
//! | [`devices`] | device fault models (`--device`): flash that lies, each model's fault states and outcomes |
//! | [`eio`] | the I/O-error sweep: every read, write and flush of a workload fails in turn |
//! | [`cost`] | device cost of fsync and atomic commits, simulated time under a latency model |
//! | [`crc`] | the guest's CRC-32C, folded with 512-bit carry-less multiplies where the CPU can |

pub mod cost;
pub mod crc;
pub mod device;
pub mod devices;
pub mod eio;
pub mod explore;
pub mod guest;
pub mod history;
pub mod memo;
pub mod model;
pub mod mutants;
pub mod oracle;
pub use rollfs_crash::rng;
pub mod run;
pub mod schedule;
pub mod shard;
pub mod states;
pub mod workload;
