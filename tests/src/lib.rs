//! rollfs-tests (in progress)
