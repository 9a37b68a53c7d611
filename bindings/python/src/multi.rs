//! Multi-objective selection (PrivPareto paper): Pareto scores, δ^PS, weighted sums and δ_agg, PrivPareto
//! and PrivAgg (global or local, top-k) and their probabilities. Utilities are an n × m array.

use crate::args::{self, count_arg, slice1, slice2, Floats1, Floats2};
use crate::call::run;
use crate::errors::{check, err_with, Failure};
use crate::sensitivity::{build_all, Many, Sensitivity};
use crate::state::{Budget, Rng};
use dpmo::multi::{self, AggSensitivity, ParetoSensitivity};
use dpmo::sensitivity::weighted_sum as ws;
use dpmo::{pareto, Error, MAX_OBJECTIVES};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// Checks m (1..=16) as the C ABI does before anything else.
fn objectives(m: usize) -> PyResult<()> {
    if m == 0 {
        return Err(err_with(
            Error::InvalidArgument,
            "utilities need at least one objective (column)",
        ));
    }
    if m > MAX_OBJECTIVES {
        return Err(err_with(Error::CapacityExceeded, format!("{m} objectives")));
    }
    Ok(())
}

fn table(py: Python<'_>, v: Vec<f64>, rows: usize, cols: usize) -> PyResult<Bound<'_, PyArray2<f64>>> {
    PyArray1::from_vec(py, v).reshape([rows, cols])
}

/// Reports a failure of a function that read sensitivities (with a callback's exception as its cause).
fn finish<T>(r: Result<T, Error>, many: Option<&Many<'_>>) -> PyResult<T> {
    let cause = many.and_then(|m| m.take_error());
    match (r, cause) {
        (Ok(v), None) => Ok(v),
        (r, cause) => Err(Failure {
            cause,
            ..Failure::from(r.err().unwrap_or(Error::InvalidSensitivityValue))
        }
        .into()),
    }
}

/// The Pareto score PS(x, r) = −#{r′ ≠ r : r′ dominates r} (PrivPareto paper, Def. 4.3) of the n rows of the
/// n × m `utilities` (larger is better), under "textbook" dominance (≥ everywhere, > somewhere) or the
/// paper's "weak" one (≥ everywhere). Integers in [−(n − 1), 0]; global sensitivity n − 1.
#[pyfunction]
#[pyo3(signature = (utilities, *, dominance = "textbook"))]
pub fn pareto_scores<'py>(
    py: Python<'py>,
    utilities: Floats2<'py>,
    dominance: &str,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let dom = args::dominance(dominance)?;
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let u: &[f64] = &u;
    let out = py.detach(|| -> Result<Vec<f64>, Error> {
        let mut out = vec![0.0; n];
        let mut scratch = vec![0usize; pareto::pareto_scores_scratch_len(n, m)?];
        pareto::pareto_scores(u, m, dom, &mut out, &mut scratch)?;
        Ok(out)
    });
    Ok(PyArray1::from_vec(py, check(out)?))
}

/// The Pareto score's global sensitivity over n candidates, n − 1.
#[pyfunction]
pub fn pareto_global_sensitivity(n: i64) -> PyResult<f64> {
    check(pareto::pareto_global_sensitivity(count_arg("n", n)?))
}

/// δ^PS (PrivPareto paper, Def. 4.5, Thm. 4.7) from the objectives' admissible δ_i (one `Sensitivity` per
/// column of `utilities`): an n × `columns` array of δ^PS(x, t, r), ready for `Sensitivity.table(...,
/// global_sensitivity=n - 1)`. The same for both dominance relations.
#[pyfunction]
pub fn pareto_sensitivity_table<'py>(
    py: Python<'py>,
    utilities: Floats2<'py>,
    deltas: Vec<Py<Sensitivity>>,
    columns: i64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let columns = count_arg("columns", columns)?;
    let many = Many::borrow(py, &deltas)?;
    let specs = many.specs();
    let u: &[f64] = &u;
    let r = (|| -> Result<Vec<f64>, Error> {
        let ds = build_all(&specs, n)?;
        let out_len = n.checked_mul(columns).ok_or(Error::Overflow)?;
        let s = pareto::pareto_sensitivity_scratch_len(n, m)?;
        let (mut out, mut ix, mut vals) = (vec![0.0; out_len], vec![0usize; s.indices], vec![0.0; s.values]);
        pareto::pareto_sensitivity_table(u, m, &ds, columns, &mut out, &mut ix, &mut vals)?;
        Ok(out)
    })();
    table(py, finish(r, Some(&many))?, n, columns)
}

/// u_agg(x, r) = Σ_i w_i u_i(x, r) for the n rows (PrivPareto paper, §5); weights of any sign.
#[pyfunction]
pub fn weighted_sum<'py>(
    py: Python<'py>,
    utilities: Floats2<'py>,
    weights: Floats1<'py>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let w = slice1(&weights);
    if w.len() != m {
        return Err(err_with(
            Error::LengthMismatch,
            format!("{} weights for {m} objectives", w.len()),
        ));
    }
    let mut out = vec![0.0; n];
    check(ws::weighted_sum(&u, &w, &mut out))?;
    Ok(PyArray1::from_vec(py, out))
}

/// Δ_agg = Σ_i |w_i| Δ_i (PrivPareto paper, Thm. 5.3).
#[pyfunction]
pub fn weighted_global_sensitivity(weights: Floats1<'_>, globals: Floats1<'_>) -> PyResult<f64> {
    let (w, g) = (slice1(&weights), slice1(&globals));
    objectives(w.len())?;
    if w.len() != g.len() {
        return Err(err_with(Error::LengthMismatch, "weights and globals differ in length"));
    }
    check(ws::weighted_global_sensitivity(&w, &g))
}

/// δ_agg(x, t, r) = Σ_i |w_i| δ_i(x, t, r) (PrivPareto paper, Thm. 5.4) as an n × `columns` array, and
/// Δ_agg: returns (table, Δ_agg). `n` is needed only when no δ_i implies it.
#[pyfunction]
#[pyo3(signature = (weights, deltas, columns, *, n = None))]
pub fn weighted_sensitivity_table<'py>(
    py: Python<'py>,
    weights: Floats1<'py>,
    deltas: Vec<Py<Sensitivity>>,
    columns: i64,
    n: Option<i64>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, f64)> {
    let w = slice1(&weights);
    objectives(w.len())?;
    let columns = count_arg("columns", columns)?;
    let n = match n {
        Some(n) => count_arg("n", n)?,
        None => deltas
            .iter()
            .find_map(|d| d.get().implied_len(py))
            .ok_or_else(|| err_with(Error::InvalidArgument, "n is required when no delta implies it"))?,
    };
    let many = Many::borrow(py, &deltas)?;
    let specs = many.specs();
    let r = (|| -> Result<(Vec<f64>, f64), Error> {
        let ds = build_all(&specs, n)?;
        let mut out = vec![0.0; n.checked_mul(columns).ok_or(Error::Overflow)?];
        let g = ws::weighted_sensitivity_table(&w, &ds, columns, &mut out)?;
        Ok((out, g))
    })();
    let (out, g) = finish(r, Some(&many))?;
    Ok((table(py, out, n, columns)?, g))
}

fn borrow_deltas<'py>(py: Python<'py>, deltas: &Option<Vec<Py<Sensitivity>>>, m: usize) -> PyResult<Option<Many<'py>>> {
    match deltas {
        None => Ok(None),
        Some(d) => {
            if d.len() != m {
                return Err(err_with(
                    Error::LengthMismatch,
                    format!("{} deltas for {m} objectives", d.len()),
                ));
            }
            Ok(Some(Many::borrow(py, d)?))
        }
    }
}

fn picks(py: Python<'_>, v: Vec<usize>) -> Bound<'_, PyArray1<i64>> {
    PyArray1::from_vec(py, v.into_iter().map(|i| i as i64).collect())
}

/// PrivPareto (PrivPareto paper, §4): k picks without replacement by the Pareto score, at ε/k per round,
/// each round re-scoring the remaining candidates. `deltas=None`: global (Δ = n − 1); one `Sensitivity`
/// per objective: local (δ^PS, dampened; `max_distance` 0 = automatic saturation, recommended). Returns the
/// k indices in pick order.
#[pyfunction]
#[pyo3(signature = (rng, utilities, *, epsilon, k = 1, deltas = None, dominance = "textbook", dampening = "plain", max_distance = 0, selector = "exponential", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_privpareto<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    utilities: Floats2<'py>,
    epsilon: f64,
    k: i64,
    deltas: Option<Vec<Py<Sensitivity>>>,
    dominance: &str,
    dampening: &str,
    max_distance: i64,
    selector: &str,
    arithmetic: &str,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let dom = args::dominance(dominance)?;
    let damp = args::dampening(dampening)?;
    let (sel, arith) = args::selector(selector, arithmetic)?;
    let k = count_arg("k", k)?;
    let max_distance = count_arg("max_distance", max_distance)?;
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let many = borrow_deltas(py, &deltas, m)?;
    let specs = many.as_ref().map(|mm| mm.specs());
    let (u, specs) = (&*u, &specs);
    let out = run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || many.as_ref().and_then(|mm| mm.take_error()),
        move |g| {
            let built = specs.as_ref().map(|s| build_all(s, n)).transpose()?;
            let sens = match &built {
                None => ParetoSensitivity::Global,
                Some(ds) => ParetoSensitivity::Local {
                    deltas: ds,
                    max_distance,
                    dampening: damp,
                },
            };
            let s = multi::privpareto_scratch_len(n, m)?;
            let (mut v, mut ix, mut out) = (vec![0.0; s.values], vec![0usize; s.indices], vec![0usize; k]);
            multi::select_privpareto(g, u, m, dom, sens, sel, epsilon, &mut out, &mut v, &mut ix, arith)?;
            Ok(out)
        },
    )?;
    Ok(picks(py, out))
}

/// Output probabilities of PrivPareto (one pick) with the exponential mechanism. For audits and tests.
#[pyfunction]
#[pyo3(signature = (utilities, *, epsilon, deltas = None, dominance = "textbook", dampening = "plain", max_distance = 0))]
pub fn privpareto_probabilities<'py>(
    py: Python<'py>,
    utilities: Floats2<'py>,
    epsilon: f64,
    deltas: Option<Vec<Py<Sensitivity>>>,
    dominance: &str,
    dampening: &str,
    max_distance: i64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let dom = args::dominance(dominance)?;
    let damp = args::dampening(dampening)?;
    let max_distance = count_arg("max_distance", max_distance)?;
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let many = borrow_deltas(py, &deltas, m)?;
    let specs = many.as_ref().map(|mm| mm.specs());
    let r = (|| -> Result<Vec<f64>, Error> {
        let built = specs.as_ref().map(|s| build_all(s, n)).transpose()?;
        let sens = match &built {
            None => ParetoSensitivity::Global,
            Some(ds) => ParetoSensitivity::Local {
                deltas: ds,
                max_distance,
                dampening: damp,
            },
        };
        let s = multi::privpareto_scratch_len(n, m)?;
        let (mut v, mut ix, mut out) = (vec![0.0; s.values], vec![0usize; s.indices], vec![0.0; n]);
        multi::privpareto_probabilities(&u, m, dom, sens, epsilon, &mut out, &mut v, &mut ix)?;
        Ok(out)
    })();
    Ok(PyArray1::from_vec(py, finish(r, many.as_ref())?))
}

/// The sensitivity arguments of PrivAgg: exactly one of `globals` (global) and `deltas` (local).
fn agg_kind(globals: &Option<Floats1<'_>>, deltas: &Option<Vec<Py<Sensitivity>>>, m: usize) -> PyResult<()> {
    match (globals, deltas) {
        (None, None) => Err(err_with(
            Error::NullPointer,
            "pass globals= (each objective's global sensitivity) or deltas= (one Sensitivity per objective)",
        )),
        (Some(_), Some(_)) => Err(err_with(Error::InvalidArgument, "pass globals= or deltas=, not both")),
        (Some(g), None) if PyUntypedArrayMethods::len(&***g) != m => Err(err_with(
            Error::LengthMismatch,
            format!("{} globals for {m} objectives", PyUntypedArrayMethods::len(&***g)),
        )),
        _ => Ok(()),
    }
}

/// PrivAgg (PrivPareto paper, §5): k picks by u_agg = Σ w_i u_i at ε/k per round; `globals`: global,
/// Δ_agg = Σ |w_i| Δ_i (Thm. 5.3); `deltas`: local, δ_agg = Σ |w_i| δ_i, dampened (Thm. 5.4).
#[pyfunction]
#[pyo3(signature = (rng, utilities, weights, *, epsilon, k = 1, globals = None, deltas = None, dampening = "plain", max_distance = 0, selector = "exponential", arithmetic = "exact", budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn select_privagg<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    utilities: Floats2<'py>,
    weights: Floats1<'py>,
    epsilon: f64,
    k: i64,
    globals: Option<Floats1<'py>>,
    deltas: Option<Vec<Py<Sensitivity>>>,
    dampening: &str,
    max_distance: i64,
    selector: &str,
    arithmetic: &str,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let damp = args::dampening(dampening)?;
    let (sel, arith) = args::selector(selector, arithmetic)?;
    let k = count_arg("k", k)?;
    let max_distance = count_arg("max_distance", max_distance)?;
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let w = slice1(&weights);
    if w.len() != m {
        return Err(err_with(
            Error::LengthMismatch,
            format!("{} weights for {m} objectives", w.len()),
        ));
    }
    if w.iter().any(|x| !x.is_finite()) {
        // Weights are public: refused before anything is charged (as the C ABI does).
        return Err(err_with(Error::NonFiniteInput, "a weight is not finite"));
    }
    agg_kind(&globals, &deltas, m)?;
    let g_vals = globals.as_ref().map(|g| slice1(g));
    let many = borrow_deltas(py, &deltas, m)?;
    let specs = many.as_ref().map(|mm| mm.specs());
    let (u, w, specs, g_vals) = (&*u, &*w, &specs, &g_vals);
    let out = run(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        epsilon,
        || many.as_ref().and_then(|mm| mm.take_error()),
        move |g| {
            let built = specs.as_ref().map(|s| build_all(s, n)).transpose()?;
            let sens = match (&built, g_vals) {
                (Some(ds), _) => AggSensitivity::Local {
                    deltas: ds,
                    max_distance,
                    dampening: damp,
                },
                (None, Some(gv)) => AggSensitivity::Global(gv),
                (None, None) => return Err(Error::NullPointer),
            };
            let s = multi::privagg_scratch_len(n, m)?;
            let (mut v, mut ix, mut out) = (vec![0.0; s.values], vec![0usize; s.indices], vec![0usize; k]);
            multi::select_privagg(g, u, w, sens, sel, epsilon, &mut out, &mut v, &mut ix, arith)?;
            Ok(out)
        },
    )?;
    Ok(picks(py, out))
}

/// Output probabilities of PrivAgg (one pick) with the exponential mechanism. For audits and tests.
#[pyfunction]
#[pyo3(signature = (utilities, weights, *, epsilon, globals = None, deltas = None, dampening = "plain", max_distance = 0))]
#[allow(clippy::too_many_arguments)]
pub fn privagg_probabilities<'py>(
    py: Python<'py>,
    utilities: Floats2<'py>,
    weights: Floats1<'py>,
    epsilon: f64,
    globals: Option<Floats1<'py>>,
    deltas: Option<Vec<Py<Sensitivity>>>,
    dampening: &str,
    max_distance: i64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let damp = args::dampening(dampening)?;
    let max_distance = count_arg("max_distance", max_distance)?;
    let (u, n, m) = slice2(&utilities);
    objectives(m)?;
    let w = slice1(&weights);
    if w.len() != m {
        return Err(err_with(
            Error::LengthMismatch,
            format!("{} weights for {m} objectives", w.len()),
        ));
    }
    agg_kind(&globals, &deltas, m)?;
    let g_vals = globals.as_ref().map(|g| slice1(g));
    let many = borrow_deltas(py, &deltas, m)?;
    let specs = many.as_ref().map(|mm| mm.specs());
    let r = (|| -> Result<Vec<f64>, Error> {
        let built = specs.as_ref().map(|s| build_all(s, n)).transpose()?;
        let sens = match (&built, &g_vals) {
            (Some(ds), _) => AggSensitivity::Local {
                deltas: ds,
                max_distance,
                dampening: damp,
            },
            (None, Some(gv)) => AggSensitivity::Global(gv),
            (None, None) => return Err(Error::NullPointer),
        };
        let s = multi::privagg_scratch_len(n, m)?;
        let (mut v, mut out) = (vec![0.0; s.values], vec![0.0; n]);
        multi::privagg_probabilities(&u, &w, sens, epsilon, &mut out, &mut v)?;
        Ok(out)
    })();
    Ok(PyArray1::from_vec(py, finish(r, many.as_ref())?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pareto_scores, m)?)?;
    m.add_function(wrap_pyfunction!(pareto_global_sensitivity, m)?)?;
    m.add_function(wrap_pyfunction!(pareto_sensitivity_table, m)?)?;
    m.add_function(wrap_pyfunction!(weighted_sum, m)?)?;
    m.add_function(wrap_pyfunction!(weighted_global_sensitivity, m)?)?;
    m.add_function(wrap_pyfunction!(weighted_sensitivity_table, m)?)?;
    m.add_function(wrap_pyfunction!(select_privpareto, m)?)?;
    m.add_function(wrap_pyfunction!(privpareto_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(select_privagg, m)?)?;
    m.add_function(wrap_pyfunction!(privagg_probabilities, m)?)?;
    Ok(())
}
