//! The core must build for `wasm32-unknown-unknown` (it runs there under the crash
//! explorer). This test builds it, in its own target directory so it does not contend for
//! the workspace's build lock.

use std::process::Command;

#[test]
fn core_builds_for_wasm32_unknown_unknown() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let target_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/wasm32-check");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--manifest-path",
            manifest,
            "--target",
            "wasm32-unknown-unknown",
            "--target-dir",
            target_dir,
        ])
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "rollfs-core does not build for wasm32-unknown-unknown (is the target installed? \
         `rustup target add wasm32-unknown-unknown`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
