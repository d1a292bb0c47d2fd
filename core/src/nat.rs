//! nat (in progress)
