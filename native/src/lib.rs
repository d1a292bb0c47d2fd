//! rollfs (in progress)
