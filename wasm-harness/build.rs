//! Builds the wasm32 guest (`guest/`) with its own target directory under OUT_DIR and
//! hands its path to the host crate as `ROLLFS_SIM_GUEST_WASM`, so that a fresh checkout
//! works with plain `cargo build` / `cargo test` (no separate build step).
//!
//! Mutant guests are built at run time by `rollfs_sim::guest::build_guest` with the same
//! function shape; see src/guest.rs.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let guest_manifest = manifest_dir.join("guest/Cargo.toml");
    let target_dir = out_dir.join("guest-target");
    for p in ["guest/src", "guest/Cargo.toml", "../core/src", "../core/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", manifest_dir.join(p).display());
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--target", "wasm32-unknown-unknown", "--manifest-path"])
        .arg(&guest_manifest)
        .arg("--target-dir")
        .arg(&target_dir);
    // Flags meant for the host build (coverage, sanitizers, target-cpu) must not leak into
    // the wasm build, and the outer build's target settings do not apply to it.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("running cargo for the wasm guest");
    if !status.success() {
        panic!(
            "building the wasm guest failed (is the target installed? \
             `rustup target add wasm32-unknown-unknown`)"
        );
    }
    let wasm = target_dir.join("wasm32-unknown-unknown/release/rollfs_sim_guest.wasm");
    println!("cargo:rustc-env=ROLLFS_SIM_GUEST_WASM={}", wasm.display());
    println!("cargo:rustc-env=ROLLFS_SIM_GUEST_MANIFEST={}", guest_manifest.display());
}
