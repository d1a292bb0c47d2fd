//! fsck (in progress)
