//! ssa (in progress)
