#!/usr/bin/env bash
# The whole test suite (what CI runs). It sets up what the tests need where it is missing:
# the wasm32-unknown-unknown target (the crash explorer runs the core as WebAssembly) and
# FUSE 3 (fusermount3 and /dev/fuse, for the mount tests) and the tools the mount tests run
# (xfsprogs, e2fsprogs, util-linux, attr), installed with apt-get as root.
set -euo pipefail
cd "$(dirname "$0")"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
# Programs the mount tests run, by the package that has them: FUSE 3, xfs_io (seek, copy_range,
# chattr through FS_IOC_FSSETXATTR), chattr/lsattr, fstrim, fallocate, setfattr (crashtest's
# recorded workloads).
missing=()
for need in fusermount3:fuse3 /usr/sbin/xfs_io:xfsprogs chattr:e2fsprogs fstrim:util-linux fallocate:util-linux setfattr:attr; do
    prog=${need%%:*} pkg=${need##*:}
    if ! command -v "$prog" >/dev/null 2>&1 && [[ " ${missing[*]} " != *" $pkg "* ]]; then
        missing+=("$pkg")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    else
        echo "test.sh: missing ${missing[*]}: install them (apt-get install ${missing[*]}) and run again" >&2
        exit 1
    fi
fi

# Formatting and lints first (cheap, and they fail fast): rustfmt and clippy with every
# warning an error, the workspace's lint set included (Cargo.toml, [workspace.lints]).
for c in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
        rustup component add "$c"
    fi
done
cargo fmt --all --check
# The crates outside the workspace too: the wasm32 guest and the fuzz targets.
cargo fmt --manifest-path wasm-harness/guest/Cargo.toml --check
cargo fmt --manifest-path fuzz/Cargo.toml --check
cargo clippy --workspace --all-targets --release -- -D warnings

# The tests run with a temporary directory of their own, which must be empty when they end:
# what a test leaves there (work directories, images, mount points) would pile up on every
# machine that runs the suite, so it fails the run, named (checked after each pass below).
suite_tmp=$(mktemp -d "${TMPDIR:-/tmp}/rollfs-suite.XXXXXX")
# Open to every user as /tmp is (sticky): tests run commands as other users under it.
chmod 1777 "$suite_tmp"
export TMPDIR=$suite_tmp
tmp_left_empty() {
    local left
    left=$(find "$suite_tmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -20)
    if [ -n "$left" ]; then
        echo "test.sh: the tests left these in their temporary directory $suite_tmp:" >&2
        echo "$left" >&2
        exit 1
    fi
}

cargo test --workspace --release
tmp_left_empty
# The fuzz regression corpus once more with debug assertions on (the release build keeps
# overflow checks but not the core's internal debug_assert!s).
cargo test -p rollfs-core --test fuzz_corpus

# The FUSE tests once more over the io_uring transport (`-o uring`), where the kernel has it
# (Linux 6.14+ with CONFIG_FUSE_IO_URING): the fuse module's `enable_uring` (off by default)
# is switched on for this pass only, as root, and restored after it.
URING_PARAM=/sys/module/fuse/parameters/enable_uring
if [ -w "$URING_PARAM" ]; then
    uring_was=$(cat "$URING_PARAM")
    echo Y > "$URING_PARAM"
    trap 'echo "$uring_was" > "$URING_PARAM"' EXIT
    ROLLFS_TEST_MOUNT_OPTIONS=uring cargo test -p rollfs-tests --release
    tmp_left_empty
    echo "$uring_was" > "$URING_PARAM"
    trap - EXIT
else
    echo "test.sh: $URING_PARAM is missing or not writable (this kernel has no FUSE over io_uring, or not root): the io_uring pass is skipped" >&2
fi
rmdir "$suite_tmp"
