//! The Python extension module `dpmo._native`: PyO3 over the Rust core (not through the C ABI). The Python
//! package `dpmo` re-exports it; see bindings/python/README.md.
//!
//! Conventions, those of the C ABI: every failure is an exception of `dpmo.errors` carrying the C status
//! code and message; a selection takes the generator first, charges an optional budget before looking at
//! the data (keeping the charge on failures caused by the data), and runs without the GIL.

mod apps;
mod args;
mod bounding;
mod call;
mod discover;
mod distributed;
mod errors;
mod fork;
mod multi;
mod select;
mod sensitivity;
mod state;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<state::Rng>()?;
    m.add_class::<state::StreamKey>()?;
    m.add_class::<state::Budget>()?;
    m.add_class::<sensitivity::Sensitivity>()?;
    m.add_function(wrap_pyfunction!(state::_stream_key_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(fork::_fork_detection, m)?)?;
    select::register(m)?;
    multi::register(m)?;
    apps::register(m)?;
    distributed::register(m)?;
    discover::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_OBJECTIVES", dpmo::MAX_OBJECTIVES)?;
    Ok(())
}
