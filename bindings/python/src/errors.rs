//! dpmo errors as Python exceptions: the class of `dpmo.errors` for the status code, with the C ABI's
//! message (`dpmo::Error::message`), an optional detail from the binding, and whether a budget kept a charge.

use dpmo::Error;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

static MAKE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A dpmo failure on its way to Python.
#[derive(Debug)]
pub struct Failure {
    pub error: Error,
    pub detail: Option<String>,
    pub charged: bool,
    /// An exception raised by a Python callback during the call, chained as the cause.
    pub cause: Option<PyErr>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure {
            error,
            detail: None,
            charged: false,
            cause: None,
        }
    }
}

impl Failure {
    pub fn with(error: Error, detail: impl Into<String>) -> Self {
        Failure {
            detail: Some(detail.into()),
            ..Failure::from(error)
        }
    }
}

/// Builds the Python exception (an instance of the `dpmo.errors` class for the status).
pub fn to_pyerr(py: Python<'_>, f: Failure) -> PyErr {
    let make = MAKE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("dpmo.errors")?.getattr("_make")?.unbind())
    });
    let make = match make {
        Ok(m) => m.bind(py),
        Err(e) => return e,
    };
    match make.call1((f.error.code(), f.error.message(), f.detail, f.charged)) {
        Ok(exc) => {
            let err = PyErr::from_value(exc);
            if let Some(cause) = f.cause {
                err.set_cause(py, Some(cause));
            }
            err
        }
        Err(e) => e,
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        Python::attach(|py| to_pyerr(py, f))
    }
}

/// A plain dpmo error as a Python exception.
pub fn err(e: Error) -> PyErr {
    Failure::from(e).into()
}

/// A dpmo error with a detail as a Python exception.
pub fn err_with(e: Error, detail: impl Into<String>) -> PyErr {
    Failure::with(e, detail).into()
}

/// Maps a core result to a Python result.
pub fn check<T>(r: Result<T, Error>) -> PyResult<T> {
    r.map_err(err)
}
