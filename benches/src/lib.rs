//! rollfs-benches (in progress)
