//! Loaders for the real datasets in `../shared/data` (see its README for provenance and shapes).

pub mod adult;
pub mod dat;
pub mod nltcs;
pub mod snap;
