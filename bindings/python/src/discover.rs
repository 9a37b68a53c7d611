//! Private selection over an unknown domain from raw events (the core's `dpmo::discover`): partition
//! selection and Durfee & Rogers' unknown-domain top-k, each with its contribution bounding, in one charged
//! call. The Python layer (`dpmo/discovery.py`) maps labels to 64-bit ids and back.
//!
//! Each call draws exactly one key (four words) from the generator, whatever the events, and charges its
//! (ε, δ) before looking at them; the top-k replaces that charge by what the run spent (pay what you get).

use crate::args::{slice1, Floats1, Ints1};
use crate::call::run_approx;
use crate::errors::err_with;
use crate::state::{Budget, Rng};
use dpmo::discover::{self, Bounds, Contribution, Events, PartitionPlan, PartitionSelection, TopKPlan, TopKScore};
use dpmo::Error;
use numpy::PyArray1;
use pyo3::prelude::*;

fn usize_arg(name: &str, v: i64) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| err_with(Error::InvalidArgument, format!("{name} must be >= 0")))
}

fn mechanism(name: &str, rounds: i64) -> PyResult<PartitionSelection> {
    let how = match name {
        "truncated_geometric" => PartitionSelection::TruncatedGeometric,
        "laplace" => PartitionSelection::Laplace,
        "gaussian" => PartitionSelection::Gaussian,
        "weighted_gaussian" => PartitionSelection::WeightedGaussian,
        "sips" => {
            let rounds = u32::try_from(rounds)
                .map_err(|_| err_with(Error::InvalidArgument, "rounds must be between 1 and 8"))?;
            return Ok(PartitionSelection::Sips { rounds });
        }
        _ => {
            return Err(err_with(
                Error::InvalidArgument,
                "mechanism must be 'truncated_geometric', 'laplace', 'gaussian', 'weighted_gaussian' or 'sips'",
            ))
        }
    };
    if rounds != 1 {
        return Err(err_with(Error::InvalidArgument, "rounds is for mechanism='sips' only"));
    }
    Ok(how)
}

fn as_u64(v: &[i64]) -> Vec<u64> {
    v.iter().map(|&x| x as u64).collect()
}

/// Native step of `dpmo.discover_partitions`: units and items as 64-bit ids; returns the selected items,
/// sorted by their 64-bit pattern.
#[pyfunction]
#[pyo3(signature = (rng, units, items, max_items, mechanism_name, rounds, epsilon, delta, budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn _discover_partitions<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    units: Ints1<'py>,
    items: Ints1<'py>,
    max_items: i64,
    mechanism_name: &str,
    rounds: i64,
    epsilon: f64,
    delta: f64,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let how = mechanism(mechanism_name, rounds)?;
    let l = usize_arg("max_items", max_items)?;
    let (u, i) = (slice1(&units), slice1(&items));
    if u.len() != i.len() {
        return Err(err_with(Error::LengthMismatch, "units and items differ in length"));
    }
    let (us, is) = (as_u64(&u), as_u64(&i));
    let events = Events {
        units: &us,
        items: &is,
        values: None,
    };
    let bounds = Bounds {
        max_items: l,
        max_per_item: 1,
        clamp: None,
    };
    // Every argument is checked before the charge and the draw.
    discover::bound::validate(&events, &bounds, us.len()).map_err(crate::errors::err)?;
    PartitionPlan::new(how, epsilon, delta, l).map_err(crate::errors::err)?;
    let out = run_approx(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        (epsilon, delta),
        || None,
        |g| {
            let n_events = events.units.len();
            let mut scratch = vec![Contribution::default(); n_events];
            let mut out = vec![0u64; n_events];
            let n = discover::discover_partitions(g, &events, &bounds, how, epsilon, delta, &mut scratch, &mut out)?;
            out.truncate(n);
            Ok((out, None))
        },
    )?;
    Ok(PyArray1::from_vec(py, out.into_iter().map(|x| x as i64).collect()))
}

/// The outcome of `_discover_top_k`: items in selection order, stopped at ⊥, ε and δ spent.
type TopK<'py> = (Bound<'py, PyArray1<i64>>, bool, f64, f64);

/// Native step of `dpmo.select_top_k_from_events` without a candidate list: units and items as 64-bit
/// ids, values or None; returns (items in selection order, stopped, epsilon spent, delta spent).
#[pyfunction]
#[pyo3(signature = (rng, units, items, values, score, k, k_bar, max_items, max_per_item, lo, hi, epsilon, delta, budget = None))]
#[allow(clippy::too_many_arguments)]
pub fn _discover_top_k<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    units: Ints1<'py>,
    items: Ints1<'py>,
    values: Option<Floats1<'py>>,
    score: &str,
    k: i64,
    k_bar: i64,
    max_items: i64,
    max_per_item: i64,
    lo: f64,
    hi: f64,
    epsilon: f64,
    delta: f64,
    budget: Option<&Bound<'py, Budget>>,
) -> PyResult<TopK<'py>> {
    let score = match score {
        "units" => TopKScore::Units,
        "events" => TopKScore::Events,
        "sum" => TopKScore::Sum,
        _ => {
            return Err(err_with(
                Error::InvalidArgument,
                "score must be 'units', 'events' or 'sum'",
            ))
        }
    };
    let (k, k_bar) = (usize_arg("k", k)?, usize_arg("k_bar", k_bar)?);
    let (l, c) = (
        usize_arg("max_items", max_items)?,
        usize_arg("max_per_item", max_per_item)?,
    );
    let (u, i) = (slice1(&units), slice1(&items));
    let vals: Option<Vec<f64>> = values.as_ref().map(|v| slice1(v).into_owned());
    if u.len() != i.len() || vals.as_ref().is_some_and(|v| v.len() != u.len()) {
        return Err(err_with(
            Error::LengthMismatch,
            "units, items and values differ in length",
        ));
    }
    if score == TopKScore::Sum && vals.is_none() {
        return Err(err_with(Error::InvalidArgument, "score='sum' needs values"));
    }
    let (us, is) = (as_u64(&u), as_u64(&i));
    let bounds = Bounds {
        max_items: l,
        max_per_item: c,
        clamp: vals.as_ref().map(|_| (lo, hi)),
    };
    {
        let events = Events {
            units: &us,
            items: &is,
            values: vals.as_deref(),
        };
        discover::bound::validate(&events, &bounds, us.len()).map_err(crate::errors::err)?;
    }
    TopKPlan::new(score, k, k_bar, epsilon, delta, &bounds).map_err(crate::errors::err)?;
    let work_len =
        discover::top_k_work_len(k_bar).ok_or_else(|| err_with(Error::InvalidArgument, "k_bar too large"))?;
    let outcome = run_approx(
        py,
        rng.get(),
        budget.map(|b| b.get()),
        (epsilon, delta),
        || None,
        move |g| {
            let events = Events {
                units: &us,
                items: &is,
                values: vals.as_deref(),
            };
            let mut scratch = vec![Contribution::default(); us.len()];
            let mut work = vec![0u64; work_len];
            let mut out = vec![0u64; k];
            let o = discover::discover_top_k(
                g,
                &events,
                &bounds,
                score,
                k,
                k_bar,
                epsilon,
                delta,
                &mut scratch,
                &mut work,
                &mut out,
            )?;
            out.truncate(o.len);
            Ok(((out, o.stopped, o.epsilon, o.delta), Some((o.epsilon, o.delta))))
        },
    )?;
    let (out, stopped, eps, del) = outcome;
    Ok((
        PyArray1::from_vec(py, out.into_iter().map(|x| x as i64).collect()),
        stopped,
        eps,
        del,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_discover_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(_discover_top_k, m)?)?;
    Ok(())
}
