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
use pyo3::types::PyBytes;

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
    // Allocated before anything is charged: a k or k̄ too large for memory is a MemoryError, not an abort.
    let (work, out) = (zeroed(work_len)?, zeroed(k)?);
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
            let (mut work, mut out) = (work, out);
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

// ---- The pieces of the distributed pipeline (`dpmo.spark.discover_partitions`,
// `dpmo.spark.select_top_k_from_events`): the bounding of one Spark task's units, the decisions of one task's
// items from their statistics, and the peeling on the driver from the collected top scores.

/// What [`_bound_item_statistics`] sums per item over a task's kept contributions.
#[derive(Clone, Copy)]
enum ItemStatistic {
    /// 1 per kept (unit, item): the distinct units.
    Units,
    /// The kept events.
    Events,
    /// max(0, the kept sum) in value-grid units (the top-k's `sum` score).
    PositiveSum,
    /// The weighted-Gaussian weight ⌊G/√|S_u|⌋ (`dpmo::discover::weight`).
    Weight(u64),
}

/// The core's bounding ([`discover::bound`]) of the events of the units a Spark task holds (every event of
/// each of them), then one row per item with a kept contribution: the item and its partial statistic (the
/// sum over the task's kept contributions to it of 1, the kept events, max(0, sum) in value-grid units, or
/// the weight `dpmo::discover::weight(G, |S_u|)` for `statistic` = "units", "events", "sum" or "weight";
/// `weight_grid` G > 0 for "weight" only). Items ascending (as 64-bit patterns); the statistics as 16 bytes
/// each, little-endian unsigned (u128: no partial sum can wrap). Summing the partial statistics
/// of all the tasks gives exactly the sums over the kept (unit, item) contributions. Draws one key from `rng` (the
/// task's stream) whatever the events.
#[pyfunction]
#[pyo3(signature = (rng, units, items, values, max_items, max_per_item, lo, hi, weight_grid, statistic))]
#[allow(clippy::too_many_arguments)]
pub fn _bound_item_statistics<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    units: Ints1<'py>,
    items: Ints1<'py>,
    values: Option<Floats1<'py>>,
    max_items: i64,
    max_per_item: i64,
    lo: f64,
    hi: f64,
    weight_grid: i64,
    statistic: &str,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyBytes>)> {
    let (l, c) = (
        usize_arg("max_items", max_items)?,
        usize_arg("max_per_item", max_per_item)?,
    );
    let grid = u64::try_from(weight_grid).map_err(|_| err_with(Error::InvalidArgument, "weight_grid must be >= 0"))?;
    let stat = match (statistic, grid) {
        ("units", 0) => ItemStatistic::Units,
        ("events", 0) => ItemStatistic::Events,
        ("sum", 0) => ItemStatistic::PositiveSum,
        ("weight", g) if g > 0 => ItemStatistic::Weight(g),
        _ => {
            return Err(err_with(
                Error::InvalidArgument,
                "statistic must be 'units', 'events' or 'sum' (weight_grid 0), or 'weight' (weight_grid > 0)",
            ))
        }
    };
    let (u, i) = (slice1(&units), slice1(&items));
    let vals: Option<Vec<f64>> = values.as_ref().map(|v| slice1(v).into_owned());
    let (mut us, mut is) = (as_u64(&u), as_u64(&i));
    if vals.is_none() {
        // The core sorts the events by (unit, item) first; sorting them here as single 128-bit keys is
        // cheaper, and leaves the core an already sorted array (the same events: the same result).
        let mut keys: Vec<u128> = us
            .iter()
            .zip(&is)
            .map(|(&a, &b)| (u128::from(a) << 64) | u128::from(b))
            .collect();
        keys.sort_unstable();
        for (n, k) in keys.iter().enumerate() {
            us[n] = (k >> 64) as u64;
            is[n] = *k as u64;
        }
    }
    let bounds = Bounds {
        max_items: l,
        max_per_item: c,
        clamp: vals.as_ref().map(|_| (lo, hi)),
    };
    let (out_items, out_stats) = rng.get().with(py, move |g| {
        let events = Events {
            units: &us,
            items: &is,
            values: vals.as_deref(),
        };
        let mut scratch = vec![Contribution::default(); us.len()];
        let b = discover::bound(g, &events, &bounds, &mut scratch)?;
        let mut rows = b.contributions().to_vec();
        rows.sort_unstable_by_key(|x| x.item);
        let (mut out_items, mut out_stats) = (Vec::new(), Vec::new());
        let mut start = 0;
        while start < rows.len() {
            let item = rows[start].item;
            let mut total: u128 = 0;
            let mut end = start;
            while end < rows.len() && rows[end].item == item {
                let x = &rows[end];
                total += match stat {
                    ItemStatistic::Units => 1,
                    ItemStatistic::Events => u128::from(x.events),
                    ItemStatistic::PositiveSum => x.sum.max(0) as u128,
                    ItemStatistic::Weight(g) => u128::from(discover::weight(g, u64::from(x.tag))),
                };
                end += 1;
            }
            out_items.push(item as i64);
            out_stats.extend_from_slice(&total.to_le_bytes());
            start = end;
        }
        Ok((out_items, out_stats))
    })?;
    Ok((PyArray1::from_vec(py, out_items), PyBytes::new(py, &out_stats)))
}

/// Checks a partition selection's arguments (those of `PartitionPlan::new`) and returns the weight grid G
/// of the weighted mechanisms (0 for the others). Draws nothing.
#[pyfunction]
pub fn _partition_plan(mechanism_name: &str, rounds: i64, epsilon: f64, delta: f64, max_items: i64) -> PyResult<u64> {
    let how = mechanism(mechanism_name, rounds)?;
    let plan =
        PartitionPlan::new(how, epsilon, delta, usize_arg("max_items", max_items)?).map_err(crate::errors::err)?;
    Ok(plan.grid().unwrap_or(0))
}

/// The decisions of one task's items ([`discover::select_partitions_from_statistics`]): `items` strictly
/// ascending, `statistics` their unit counts or weight sums; returns the kept items. No budget: the
/// caller charged the release before the job. Draws one key from `rng` (the task's stream).
#[pyfunction]
#[pyo3(signature = (rng, items, statistics, mechanism_name, epsilon, delta, max_items))]
#[allow(clippy::too_many_arguments)]
pub fn _select_partitions_from_statistics<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    items: Ints1<'py>,
    statistics: Ints1<'py>,
    mechanism_name: &str,
    epsilon: f64,
    delta: f64,
    max_items: i64,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let how = mechanism(mechanism_name, 1)?;
    let plan =
        PartitionPlan::new(how, epsilon, delta, usize_arg("max_items", max_items)?).map_err(crate::errors::err)?;
    let is = as_u64(&slice1(&items));
    let st = crate::args::counts("statistics", &slice1(&statistics))?;
    let out = rng.get().with(py, move |g| {
        let mut out = vec![0u64; is.len()];
        let n = discover::select_partitions_from_statistics(g, &plan, &is, &st, &mut out)?;
        out.truncate(n);
        Ok(out)
    })?;
    Ok(PyArray1::from_vec(py, out.into_iter().map(|x| x as i64).collect()))
}

fn top_k_score(score: &str) -> PyResult<TopKScore> {
    match score {
        "units" => Ok(TopKScore::Units),
        "events" => Ok(TopKScore::Events),
        "sum" => Ok(TopKScore::Sum),
        _ => Err(err_with(
            Error::InvalidArgument,
            "score must be 'units', 'events' or 'sum'",
        )),
    }
}

/// The plan of an unknown-domain top-k from its Python arguments, with the bounding's checks.
#[allow(clippy::too_many_arguments)]
fn top_k_plan(
    score: &str,
    k: i64,
    k_bar: i64,
    max_items: i64,
    max_per_item: i64,
    clamp: Option<(f64, f64)>,
    epsilon: f64,
    delta: f64,
) -> PyResult<TopKPlan> {
    let score = top_k_score(score)?;
    let bounds = Bounds {
        max_items: usize_arg("max_items", max_items)?,
        max_per_item: usize_arg("max_per_item", max_per_item)?,
        clamp,
    };
    let none = Events {
        units: &[],
        items: &[],
        values: clamp.map(|_| &[][..]),
    };
    discover::bound::validate(&none, &bounds, 0).map_err(crate::errors::err)?;
    if score == TopKScore::Sum && clamp.is_none() {
        return Err(err_with(Error::InvalidArgument, "score='sum' needs values"));
    }
    let (k, k_bar) = (usize_arg("k", k)?, usize_arg("k_bar", k_bar)?);
    discover::top_k_work_len(k_bar).ok_or_else(|| err_with(Error::InvalidArgument, "k_bar too large"))?;
    TopKPlan::new(score, k, k_bar, epsilon, delta, &bounds).map_err(crate::errors::err)
}

/// Checks an unknown-domain top-k's arguments (bounds and `TopKPlan::new`). Draws nothing.
#[pyfunction]
#[pyo3(signature = (score, k, k_bar, max_items, max_per_item, clamp, epsilon, delta))]
#[allow(clippy::too_many_arguments)]
pub fn _top_k_plan(
    score: &str,
    k: i64,
    k_bar: i64,
    max_items: i64,
    max_per_item: i64,
    clamp: Option<(f64, f64)>,
    epsilon: f64,
    delta: f64,
) -> PyResult<()> {
    top_k_plan(score, k, k_bar, max_items, max_per_item, clamp, epsilon, delta).map(|_| ())
}

/// A charge made up front on the driver before a distributed job (`_prepay`), settled by the run that
/// spends it (`_top_k_from_scores`: pay what you get) or kept if the job fails. Usable once.
#[pyclass(frozen, module = "dpmo._native")]
pub struct Prepaid {
    budget: Py<Budget>,
    charge: std::sync::Mutex<Option<crate::state::Charge>>,
}

/// Charges (ε, δ) to `budget` now (refusing a reproducible stream unless the budget allows simulation),
/// for a release computed afterwards.
#[pyfunction]
pub fn _prepay(budget: &Bound<'_, Budget>, reproducible: bool, epsilon: f64, delta: f64) -> PyResult<Prepaid> {
    let b = budget.get();
    b.check_stream(reproducible)?;
    let charge = b.charge_call_approx(epsilon, delta)?;
    Ok(Prepaid {
        budget: budget.clone().unbind(),
        charge: std::sync::Mutex::new(Some(charge)),
    })
}

/// The peeling of the unknown-domain top-k on the driver ([`discover::select_top_k_from_scores`]) from the
/// collected top scores: `items` (64-bit ids, distinct) and `scores` (non-negative integers in score
/// units). With `prepaid`, the up-front charge is replaced by what the run spent. Draws one key from `rng`.
#[pyfunction]
#[pyo3(signature = (rng, items, scores, score, k, k_bar, max_items, max_per_item, clamp, epsilon, delta, prepaid = None))]
#[allow(clippy::too_many_arguments)]
pub fn _top_k_from_scores<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    items: Ints1<'py>,
    scores: Vec<u128>,
    score: &str,
    k: i64,
    k_bar: i64,
    max_items: i64,
    max_per_item: i64,
    clamp: Option<(f64, f64)>,
    epsilon: f64,
    delta: f64,
    prepaid: Option<&Bound<'py, Prepaid>>,
) -> PyResult<TopK<'py>> {
    let plan = top_k_plan(score, k, k_bar, max_items, max_per_item, clamp, epsilon, delta)?;
    let is = as_u64(&slice1(&items));
    if is.len() != scores.len() {
        return Err(err_with(Error::LengthMismatch, "items and scores differ in length"));
    }
    let mut seen = is.clone();
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return Err(err_with(Error::InvalidArgument, "repeated items"));
    }
    let (k, k_bar) = (k as usize, k_bar as usize);
    let work_len =
        discover::top_k_work_len(k_bar).ok_or_else(|| err_with(Error::InvalidArgument, "k_bar too large"))?;
    // Allocated before anything is drawn: a k or k̄ too large for memory is a MemoryError, not an abort.
    let (mut work, mut out) = (zeroed(work_len)?, zeroed(k)?);
    let (out, o) = rng.get().with(py, move |g| {
        let o = discover::select_top_k_from_scores(g, &plan, &is, &scores, &mut work, &mut out)?;
        out.truncate(o.len);
        Ok((out, o))
    })?;
    if let Some(p) = prepaid {
        let p = p.get();
        let charge = p.charge.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(c) = charge {
            p.budget.get().settle_actual(c, o.epsilon, o.delta);
        }
    }
    Ok((
        PyArray1::from_vec(py, out.into_iter().map(|x| x as i64).collect()),
        o.stopped,
        o.epsilon,
        o.delta,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Prepaid>()?;
    m.add_function(wrap_pyfunction!(_bound_item_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(_partition_plan, m)?)?;
    m.add_function(wrap_pyfunction!(_select_partitions_from_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(_top_k_plan, m)?)?;
    m.add_function(wrap_pyfunction!(_prepay, m)?)?;
    m.add_function(wrap_pyfunction!(_top_k_from_scores, m)?)?;
    m.add_function(wrap_pyfunction!(_discover_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(_discover_top_k, m)?)?;
    Ok(())
}

/// `len` zero words, or `MemoryError` when the allocation fails (`vec!` would abort the interpreter): `k` and
/// k̄ are the caller's numbers, up to 2³² − 1.
fn zeroed(len: usize) -> PyResult<Vec<u64>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("dpmo: not enough memory for k or k_bar"))?;
    v.resize(len, 0);
    Ok(v)
}
