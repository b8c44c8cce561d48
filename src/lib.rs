//! ibdyn: an InfiniBand-native communication runtime for parallel jobs whose processes
//! come and go while they run. This crate is the one a user adds; it re-exports the layers.

pub use ibdyn_pmi as pmi;
