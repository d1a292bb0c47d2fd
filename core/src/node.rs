//! node (in progress)
