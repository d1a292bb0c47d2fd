//! Makes `cargo test --workspace` build the `rollfs` binary before any test runs (cargo
//! builds a package's binaries for its integration tests), so the FUSE and CLI tests in
//! `tests/` find it at `target/<profile>/rollfs`.

#[test]
fn rollfs_binary_is_built() {
    let bin = env!("CARGO_BIN_EXE_rollfs");
    let out = std::process::Command::new(bin).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("rollfs "));
}
