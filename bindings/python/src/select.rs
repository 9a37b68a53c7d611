//! Single-objective selection: the selectors, top-k, local dampening, and their exact probabilities.

use crate::args::{self, count_arg, slice1, Floats1};
use crate::call::run;
use crate::errors::{check, Failure};
use crate::sensitivity::Sensitivity;
use crate::state::{Budget, Rng};
use dpmo::select::{self as core, Arithmetic, Selector};
use dpmo::{local, Error};
use numpy::PyArray1;
use pyo3::prelude::*;

fn perm_len(sel: Selector, arith: Arithmetic, n: usize) -> usize {
    if sel.needs_permutation(arith) {
        n
    } else {
        0
    }
}

fn indices(py: Python<'_>, v: Vec<usize>) -> Bound<'_, PyArray1<i64>> {
    PyArray1::from_vec(py, v.into_iter().map(|i| i as i64).collect())
}

fn one(
    py: Python<'_>,
    rng: &Bound<'_, Rng>,
    scores: Floats1<'_>,
    sensitivity: f64,
    epsilon: f64,
    (sel, arith): (Selector, Arithmetic),
    budget: Option<&Bound<'_, Budget>>,
) -> PyResult<usize> {
    let s = slice1(&scores);
    let s: &[f64] = &s;
    let perm = perm_len(sel, arith, s.len());
    run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || None,
        move |g| {
            let mut p = vec![0usize; perm];
            core::select(g, sel, s, sensitivity, epsilon, &mut p, arith)
        },
    )
}

/// Chooses one index of `scores` under ε-DP with `selector` (see `select_exponential`), charging
/// `budget` ε. Selectors: "exponential", "permute_and_flip", "noisy_max_gumbel" (≡ exponential),
/// "noisy_max_exponential" (≡ permute-and-flip), "noisy_max_laplace" (only with arithmetic="float").
#[pyfunction]
#[pyo3(name = "select", signature = (rng, scores, *, sensitivity, epsilon, selector = "exponential", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_any(
    py: Python<'_>,
    rng: &Bound<'_, Rng>,
    scores: Floats1<'_>,
    sensitivity: f64,
    epsilon: f64,
    selector: &str,
    arithmetic: &str,
    budget: Option<&Bound<'_, Budget>>,
) -> PyResult<usize> {
    let how = args::selector(selector, arithmetic)?;
    one(py, rng, scores, sensitivity, epsilon, how, budget)
}

/// The exponential mechanism (McSherry & Talwar 2007): returns r with probability exactly
/// ∝ exp(ε · scores[r] / (2 · sensitivity)).
#[pyfunction]
#[pyo3(signature = (rng, scores, *, sensitivity, epsilon, arithmetic = "exact", budget = None))]
pub fn select_exponential(
    py: Python<'_>,
    rng: &Bound<'_, Rng>,
    scores: Floats1<'_>,
    sensitivity: f64,
    epsilon: f64,
    arithmetic: &str,
    budget: Option<&Bound<'_, Budget>>,
) -> PyResult<usize> {
    let how = args::selector("exponential", arithmetic)?;
    one(py, rng, scores, sensitivity, epsilon, how, budget)
}

/// Permute-and-flip (McKenna & Sheldon 2020): never less accurate than the exponential mechanism.
#[pyfunction]
#[pyo3(signature = (rng, scores, *, sensitivity, epsilon, arithmetic = "exact", budget = None))]
pub fn select_permute_and_flip(
    py: Python<'_>,
    rng: &Bound<'_, Rng>,
    scores: Floats1<'_>,
    sensitivity: f64,
    epsilon: f64,
    arithmetic: &str,
    budget: Option<&Bound<'_, Budget>>,
) -> PyResult<usize> {
    let how = args::selector("permute_and_flip", arithmetic)?;
    one(py, rng, scores, sensitivity, epsilon, how, budget)
}

/// Report-noisy-max with noise of scale 2 · sensitivity / ε: "gumbel" (runs exactly as the exponential
/// mechanism, its distribution), "exponential" (exactly as permute-and-flip), or "laplace" (floating point
/// only: pass arithmetic="float", else `UnsupportedError`).
#[pyfunction]
#[pyo3(signature = (rng, scores, *, sensitivity, epsilon, noise = "gumbel", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_noisy_max(
    py: Python<'_>,
    rng: &Bound<'_, Rng>,
    scores: Floats1<'_>,
    sensitivity: f64,
    epsilon: f64,
    noise: &str,
    arithmetic: &str,
    budget: Option<&Bound<'_, Budget>>,
) -> PyResult<usize> {
    let how = args::noise(noise, arithmetic)?;
    one(py, rng, scores, sensitivity, epsilon, how, budget)
}

/// Top-k without replacement: k rounds of `selector` at ε/k each over the candidates not yet chosen
/// (ε-DP in total). Returns the k indices in pick order (int64 array).
#[pyfunction]
#[pyo3(signature = (rng, scores, k, *, sensitivity, epsilon, selector = "exponential", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_top_k<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    scores: Floats1<'py>,
    k: i64,
    sensitivity: f64,
    epsilon: f64,
    selector: &str,
    arithmetic: &str,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (sel, arith) = args::selector(selector, arithmetic)?;
    let k = count_arg("k", k)?;
    let s = slice1(&scores);
    let s: &[f64] = &s;
    let n = s.len();
    let perm = perm_len(sel, arith, n);
    let out = run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || None,
        move |g| {
            let mut out = vec![0usize; k];
            let (mut work, mut index, mut p) = (vec![0.0; n], vec![0usize; n], vec![0usize; perm]);
            core::select_top_k(
                g,
                sel,
                s,
                sensitivity,
                epsilon,
                &mut out,
                &mut work,
                &mut index,
                &mut p,
                arith,
            )?;
            Ok(out)
        },
    )?;
    Ok(indices(py, out))
}

/// One-shot top-k with Gumbel noise (Durfee & Rogers 2019): the distribution of k exponential mechanisms at
/// ε/k (peeling). Exact arithmetic runs that peeling exactly; arithmetic="float" runs the one-shot form.
#[pyfunction]
#[pyo3(signature = (rng, scores, k, *, sensitivity, epsilon, arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_top_k_gumbel<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    scores: Floats1<'py>,
    k: i64,
    sensitivity: f64,
    epsilon: f64,
    arithmetic: &str,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let arith = args::arithmetic(arithmetic)?;
    let k = count_arg("k", k)?;
    let s = slice1(&scores);
    let s: &[f64] = &s;
    let n = s.len();
    let out = run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || None,
        move |g| {
            let mut out = vec![0usize; k];
            let (mut work, mut index) = (vec![0.0; n], vec![0usize; n]);
            core::select_top_k_gumbel(g, s, sensitivity, epsilon, &mut out, &mut work, &mut index, arith)?;
            Ok(out)
        },
    )?;
    Ok(indices(py, out))
}

/// The exact output probabilities of the exponential mechanism, P(r) ∝ exp(ε s_r / 2Δ), computed in
/// floating point (log space). For audits and tests: computed from the data, not private.
#[pyfunction]
#[pyo3(signature = (scores, *, sensitivity, epsilon))]
pub fn exponential_probabilities<'py>(
    py: Python<'py>,
    scores: Floats1<'py>,
    sensitivity: f64,
    epsilon: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let s = slice1(&scores);
    let mut out = vec![0.0; s.len()];
    check(core::exponential_probabilities(&s, sensitivity, epsilon, &mut out))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Runs a function that reads one sensitivity with its values borrowed, reporting a callback's exception.
fn with_delta<T>(
    py: Python<'_>,
    sensitivity: &Bound<'_, Sensitivity>,
    n: usize,
    f: impl FnOnce(&dpmo::LocalSensitivity<'_>) -> Result<T, Error>,
) -> PyResult<T> {
    let s = sensitivity.get();
    let b = s.borrow(py)?;
    let spec = b.spec(s.is_shared());
    let out = spec.build(n).and_then(|d| f(&d));
    match (out, b.take_error()) {
        (Ok(v), None) => Ok(v),
        (r, cause) => Err(Failure {
            cause,
            ..Failure::from(r.err().unwrap_or(Error::InvalidSensitivityValue))
        }
        .into()),
    }
}

/// The dampening stage in floating point: D_{u,δ} (Local Dampening paper, Def. 3.6, "plain") or the shifted
/// closed form (Def. 4.3, "shifted"). The result has global sensitivity 1.
#[pyfunction]
#[pyo3(signature = (utilities, sensitivity, *, dampening = "plain"))]
pub fn dampen<'py>(
    py: Python<'py>,
    utilities: Floats1<'py>,
    sensitivity: &Bound<'py, Sensitivity>,
    dampening: &str,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let kind = args::dampening(dampening)?;
    let u = slice1(&utilities);
    let n = u.len();
    let out = with_delta(py, sensitivity, n, |d| {
        let mut out = vec![0.0; n];
        dpmo::dampen::dampen_with(&u, d, kind, &mut out)?;
        Ok(out)
    })?;
    Ok(PyArray1::from_vec(py, out))
}

/// Exact output probabilities of local dampening followed by the exponential mechanism,
/// P(r) ∝ exp(ε D(x, r) / 2). For audits and tests.
#[pyfunction]
#[pyo3(signature = (utilities, sensitivity, *, epsilon, dampening = "plain"))]
pub fn local_dampening_probabilities<'py>(
    py: Python<'py>,
    utilities: Floats1<'py>,
    sensitivity: &Bound<'py, Sensitivity>,
    epsilon: f64,
    dampening: &str,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let kind = args::dampening(dampening)?;
    let u = slice1(&utilities);
    let n = u.len();
    let out = with_delta(py, sensitivity, n, |d| {
        let mut out = vec![0.0; n];
        local::local_dampening_probabilities(&u, d, kind, epsilon, &mut out)?;
        Ok(out)
    })?;
    Ok(PyArray1::from_vec(py, out))
}

/// Local dampening (plain or shifted) followed by `selector` at sensitivity 1: ε-DP when δ is admissible
/// (Local Dampening paper, Thms. 3.10 and 4.4; Lemma 3.7 for any selector). Exact by default.
#[pyfunction]
#[pyo3(signature = (rng, utilities, sensitivity, *, epsilon, dampening = "plain", selector = "exponential", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_local_dampening(
    py: Python<'_>,
    rng: &Bound<'_, Rng>,
    utilities: Floats1<'_>,
    sensitivity: &Bound<'_, Sensitivity>,
    epsilon: f64,
    dampening: &str,
    selector: &str,
    arithmetic: &str,
    budget: Option<&Bound<'_, Budget>>,
) -> PyResult<usize> {
    let kind = args::dampening(dampening)?;
    let (sel, arith) = args::selector(selector, arithmetic)?;
    let u = slice1(&utilities);
    let u: &[f64] = &u;
    let n = u.len();
    let s = sensitivity.get();
    let b = s.borrow(py)?;
    let spec = b.spec(s.is_shared());
    let spec = &spec;
    let perm = perm_len(sel, arith, n);
    run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || b.take_error(),
        move |g| {
            let d = spec.build(n)?;
            let mut scratch = vec![0.0; local::local_dampening_scratch_len(n)?];
            let mut p = vec![0usize; perm];
            local::select_local_dampening(g, u, &d, kind, sel, epsilon, &mut scratch, &mut p, arith)
        },
    )
}

/// Top-k with local dampening: the utilities are dampened once, then k rounds of `selector` at ε/k run on
/// the dampened scores with Δ = 1. Returns the k indices in pick order.
#[pyfunction]
#[pyo3(signature = (rng, utilities, sensitivity, k, *, epsilon, dampening = "plain", selector = "exponential", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_local_dampening_top_k<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    utilities: Floats1<'py>,
    sensitivity: &Bound<'py, Sensitivity>,
    k: i64,
    epsilon: f64,
    dampening: &str,
    selector: &str,
    arithmetic: &str,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let kind = args::dampening(dampening)?;
    let (sel, arith) = args::selector(selector, arithmetic)?;
    let k = count_arg("k", k)?;
    let u = slice1(&utilities);
    let u: &[f64] = &u;
    let n = u.len();
    if n == 0 {
        // As the C ABI: refused before anything is charged.
        return Err(crate::errors::err(Error::EmptyInput));
    }
    let s = sensitivity.get();
    let b = s.borrow(py)?;
    let spec = b.spec(s.is_shared());
    let spec = &spec;
    let perm = perm_len(sel, arith, n);
    let out = run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || b.take_error(),
        move |g| {
            let d = spec.build(n)?;
            let len = local::local_dampening_scratch_len(n)?;
            let (mut dampened, mut work) = (vec![0.0; len], vec![0.0; len]);
            let (mut index, mut p) = (vec![0usize; n], vec![0usize; perm]);
            let mut out = vec![0usize; k];
            local::select_local_dampening_top_k(
                g,
                u,
                &d,
                kind,
                sel,
                epsilon,
                &mut out,
                &mut dampened,
                &mut work,
                &mut index,
                &mut p,
                arith,
            )?;
            Ok(out)
        },
    )?;
    Ok(indices(py, out))
}

/// The ε each round of an isochronous selection of k out of n candidates at a total ε runs its mechanism
/// at: ε/k less 2⁻⁴⁰ (exponential mechanism, Gumbel noise) or (n + 1) 2⁻⁴⁰ (permute-and-flip,
/// Exponential noise), rounded down. arithmetic="isochronous" samples every output within a factor e^{±a}
/// of the mechanism at that ε, which keeps the selection ε-DP; the budget is charged ε.
#[pyfunction]
#[pyo3(signature = (epsilon, n, *, k = 1, selector = "exponential"))]
pub fn isochronous_run_epsilon(epsilon: f64, n: i64, k: i64, selector: &str) -> PyResult<f64> {
    let (sel, _) = args::selector(selector, "isochronous")?;
    check(core::isochronous_run_epsilon(
        sel,
        epsilon,
        count_arg("n", n)?,
        count_arg("k", k)?,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(isochronous_run_epsilon, m)?)?;
    m.add_function(wrap_pyfunction!(select_any, m)?)?;
    m.add_function(wrap_pyfunction!(select_exponential, m)?)?;
    m.add_function(wrap_pyfunction!(select_permute_and_flip, m)?)?;
    m.add_function(wrap_pyfunction!(select_noisy_max, m)?)?;
    m.add_function(wrap_pyfunction!(select_top_k, m)?)?;
    m.add_function(wrap_pyfunction!(select_top_k_gumbel, m)?)?;
    m.add_function(wrap_pyfunction!(exponential_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(dampen, m)?)?;
    m.add_function(wrap_pyfunction!(local_dampening_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(select_local_dampening, m)?)?;
    m.add_function(wrap_pyfunction!(select_local_dampening_top_k, m)?)?;
    Ok(())
}
