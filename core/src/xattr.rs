//! xattr (in progress)
