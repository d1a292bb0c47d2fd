//! sit (in progress)
