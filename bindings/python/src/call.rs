//! One selecting call, as the C ABI runs it (`capi/src/selection.rs`): the generator is taken (refused when
//! busy) and validated, the budget is charged *before* the data is looked at, the mechanism runs without
//! the GIL, and afterwards the generator keeps its advanced state (or its old state on failure) and the
//! charge is settled: kept on success and on failures caused by the data, refunded on argument failures.
//!
//! Two refusals come first, with nothing charged and the generator unmoved: a reproducible generator for a
//! budget that does not allow simulation, and a budget copied into a forked child. A process that forked
//! during the call (a δ callback calling `os.fork`) gets no result in the child: both processes would
//! otherwise return outputs drawn from the same randomness.

use crate::errors::{to_pyerr, Failure};
use crate::state::{Budget, Rng};
use dpmo::rng::Generator;
use dpmo::Error;
use pyo3::prelude::*;

/// Runs `f` as one selection. `callback_error` returns the exception a Python δ callback raised during the
/// call, if any (it becomes the `__cause__` of the failure).
pub fn run<T: Send>(
    py: Python<'_>,
    rng: &Rng,
    budget: Option<&Budget>,
    epsilon: f64,
    callback_error: impl FnOnce() -> Option<PyErr>,
    f: impl FnOnce(&mut Generator) -> Result<T, Error> + Send,
) -> PyResult<T> {
    run_approx(py, rng, budget, (epsilon, 0.0), callback_error, |g| {
        f(g).map(|v| (v, None))
    })
}

/// [`run`] with an (ε, δ) charge up front; `f` may return the actual (ε, δ) of the run (pay what you
/// get: never more than the charge), which then replaces the charge.
pub fn run_approx<T: Send>(
    py: Python<'_>,
    rng: &Rng,
    budget: Option<&Budget>,
    (epsilon, delta): (f64, f64),
    callback_error: impl FnOnce() -> Option<PyErr>,
    f: impl FnOnce(&mut Generator) -> Result<(T, Option<(f64, f64)>), Error> + Send,
) -> PyResult<T> {
    let (saved, process) = rng.take().map_err(|e| to_pyerr(py, e))?;
    let mut g = match saved.load() {
        Ok(g) => g,
        Err(e) => {
            rng.give_back(saved);
            return Err(to_pyerr(py, e.into()));
        }
    };
    let charge = match budget
        .map(|b| {
            b.check_stream(rng.is_reproducible())?;
            b.charge_call_approx(epsilon, delta)
        })
        .transpose()
    {
        Ok(c) => c,
        Err(e) => {
            rng.give_back(saved);
            return Err(to_pyerr(py, e));
        }
    };
    let out = py.detach(|| f(&mut g));
    let cause = callback_error();
    if let Err(mut forked) = Rng::same_process(process) {
        // In the child: the charge stays (it was made before the fork), the draws are not used.
        rng.give_back(saved);
        forked.charged = budget.is_some();
        forked.cause = cause;
        return Err(to_pyerr(py, forked));
    }
    // A callback that raised makes the call fail even if the core somehow accepted its NaN.
    let out = match (out, &cause) {
        (Ok(_), Some(_)) => Err(Error::InvalidSensitivityValue),
        (o, _) => o,
    };
    let mut state = saved;
    let charged = match (budget, charge, &out) {
        (Some(b), Some(c), Ok((_, Some((eps, del))))) => {
            b.settle_actual(c, *eps, *del);
            true
        }
        (Some(b), Some(c), _) => b.settle(c, out.as_ref().err().copied()),
        _ => false,
    };
    match out.map(|(v, _)| v) {
        Ok(v) => {
            state.store(&g);
            rng.give_back(state);
            Ok(v)
        }
        Err(error) => {
            rng.give_back(saved);
            Err(to_pyerr(
                py,
                Failure {
                    error,
                    detail: None,
                    charged,
                    cause,
                },
            ))
        }
    }
}
