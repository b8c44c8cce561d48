//! ibdyn
