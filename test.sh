#!/usr/bin/env bash
# The whole test suite (what CI runs). Needs: the wasm32-unknown-unknown target and FUSE
# (fusermount3, /dev/fuse); .ci/run installs both on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")"
cargo test --workspace --release
# The fuzz regression corpus once more with debug assertions on (the release build keeps
# overflow checks but not the core's internal debug_assert!s).
cargo test -p rollfs-core --test fuzz_corpus
