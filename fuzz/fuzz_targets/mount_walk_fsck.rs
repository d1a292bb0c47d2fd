#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rollfs_fuzz::mount_walk_fsck(data);
});
