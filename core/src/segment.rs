//! segment (in progress)
