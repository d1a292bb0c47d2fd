//! Model-based property test: random operation sequences run against the filesystem and
//! against a plain in-memory model; the trees are compared after every step, after a
//! power loss, after unmount + mount, and the image must pass fsck. The model and the run
//! loop are rollfs-testkit's (shared with the `ops_vs_model` fuzz target); this file owns
//! the proptest strategy.

use proptest::prelude::*;
use rollfs_testkit::ops::{run, Op};

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Create(d, n)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Mkdir(d, n)),
        5 => (any::<u8>(), any::<u16>(), any::<u16>(), any::<u8>()).prop_map(|(f, o, l, s)| Op::Write(f, o, l, s)),
        2 => (any::<u8>(), any::<u16>()).prop_map(|(f, s)| Op::Truncate(f, s)),
        2 => (any::<u8>(), any::<u16>(), any::<u16>(), 0u8..3).prop_map(|(f, o, l, m)| Op::Punch(f, o, l, m)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Unlink(d, n)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Rmdir(d, n)),
        3 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), 0u8..3).prop_map(|(a, b, c, d, f)| Op::Rename(a, b, c, d, f)),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(f, d, n)| Op::Link(f, d, n)),
        1 => (any::<u8>(), any::<u16>()).prop_map(|(f, m)| Op::Chmod(f, m)),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(f, n, v)| Op::SetXattr(f, n, v)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(f, n)| Op::RemoveXattr(f, n)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(d, n)| Op::Symlink(d, n)),
        1 => Just(Op::Sync),
        2 => (any::<u8>(), any::<bool>()).prop_map(|(f, d)| Op::Fsync(f, d)),
        1 => (any::<u8>(), any::<u16>(), any::<u16>(), any::<u8>(), any::<bool>()).prop_map(|(f, o, l, s, c)| Op::Atomic(f, o, l, s, c)),
        1 => Just(Op::Remount),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    #[test]
    fn model_matches(ops in proptest::collection::vec(op(), 1..40)) {
        if let Err(e) = run(&ops) {
            prop_assert!(false, "{}", e);
        }
    }
}
