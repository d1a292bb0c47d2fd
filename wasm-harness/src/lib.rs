//! rollfs-sim (in progress)
