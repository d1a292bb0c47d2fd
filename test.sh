#!/usr/bin/env bash
# The whole test suite (what CI runs). Needs: the wasm32-unknown-unknown target and FUSE
# (fusermount3, /dev/fuse); .ci/run installs both on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")"
cargo test --workspace --release
