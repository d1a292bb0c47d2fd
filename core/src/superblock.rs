//! superblock (in progress)
