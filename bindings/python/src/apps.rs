//! The sensitivity functions of the papers' applications: graph metrics and their δ tables (edge-DP),
//! classifier rates (TPR, TNR), split criteria (information gain, Gini), the maximum of δ tables, and the
//! advanced composition bound.

use crate::args::{self, count_arg, slice1, slice2, Floats2, Ints1, Ints2};
use crate::errors::{check, err_with};
use dpmo::graph::Csr;
use dpmo::sensitivity::info_gain::{self, Contingency, InfoGainSensitivity};
use dpmo::sensitivity::{compose, degree, ebc, egodensity, gini, rates};
use dpmo::Error;
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyType;

/// An undirected graph in CSR form: node v's neighbours are `neighbours[offsets[v]:offsets[v + 1]]`,
/// sorted strictly ascending, every edge stored in both directions, no self loops (validated as
/// `dpmo_graph_validate` does). Neighbouring graphs differ in one edge (edge-DP).
#[pyclass(frozen, module = "dpmo._native")]
pub struct Graph {
    offsets: Vec<usize>,
    neighbours: Vec<u32>,
}

impl Graph {
    fn csr(&self) -> Csr<'_> {
        // Validated at construction.
        Csr::new(&self.offsets, &self.neighbours).unwrap_or_else(|_| unreachable!())
    }

    fn per_node<'py>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&Csr<'_>, &mut [f64]) -> Result<(), Error> + Send,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let n = self.offsets.len() - 1;
        let out = py.detach(|| {
            let mut out = vec![0.0; n];
            f(&self.csr(), &mut out).map(|_| out)
        });
        Ok(PyArray1::from_vec(py, check(out)?))
    }

    fn delta_table<'py>(
        &self,
        py: Python<'py>,
        columns: i64,
        f: impl FnOnce(&Csr<'_>, usize, &mut [f64]) -> Result<(), Error> + Send,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let n = self.offsets.len() - 1;
        let columns = count_arg("columns", columns)?;
        if columns == 0 {
            return Err(err_with(Error::InvalidArgument, "columns must be >= 1"));
        }
        let len = n
            .checked_mul(columns)
            .ok_or_else(|| err_with(Error::Overflow, "n * columns"))?;
        let out = py.detach(|| {
            let mut out = vec![0.0; len];
            f(&self.csr(), columns, &mut out).map(|_| out)
        });
        PyArray1::from_vec(py, check(out)?).reshape([n, columns])
    }
}

fn node_ids(v: &[i64], n: usize, what: &str) -> PyResult<Vec<u32>> {
    v.iter()
        .map(|&x| {
            u32::try_from(x)
                .ok()
                .filter(|&u| (u as usize) < n)
                .ok_or_else(|| err_with(Error::InvalidArgument, format!("{what}: node id {x} outside [0, {n})")))
        })
        .collect()
}

#[pymethods]
impl Graph {
    /// A graph from its CSR arrays (`offsets`: n + 1 entries from 0 to len(neighbours)).
    #[new]
    fn new(offsets: Ints1<'_>, neighbours: Ints1<'_>) -> PyResult<Self> {
        let off = slice1(&offsets);
        let offsets: Vec<usize> = off
            .iter()
            .map(|&x| usize::try_from(x))
            .collect::<Result<_, _>>()
            .map_err(|_| err_with(Error::InvalidArgument, "offsets must be >= 0"))?;
        let neighbours: Vec<u32> = slice1(&neighbours)
            .iter()
            .map(|&x| u32::try_from(x))
            .collect::<Result<_, _>>()
            .map_err(|_| err_with(Error::InvalidArgument, "a neighbour id is outside [0, 2**32)"))?;
        check(Csr::new(&offsets, &neighbours))?;
        Ok(Graph { offsets, neighbours })
    }

    /// A graph on nodes 0..n from an (E, 2) array of undirected edges. A self loop or an edge given twice
    /// (in either direction) raises `InvalidArgumentError`.
    #[classmethod]
    fn from_edges(_cls: &Bound<'_, PyType>, n: i64, edges: Ints2<'_>) -> PyResult<Self> {
        let n = count_arg("n", n)?;
        if n as u64 > u64::from(u32::MAX) + 1 {
            return Err(err_with(Error::Overflow, "more than 2**32 nodes"));
        }
        let (e, rows, cols) = slice2(&edges);
        if cols != 2 && rows > 0 {
            return Err(err_with(Error::LengthMismatch, "edges must be an (E, 2) array"));
        }
        let ids = node_ids(&e, n, "edges")?;
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(2 * rows);
        for p in ids.chunks_exact(2) {
            if p[0] == p[1] {
                return Err(err_with(Error::InvalidArgument, format!("self loop at node {}", p[0])));
            }
            pairs.push((p[0], p[1]));
            pairs.push((p[1], p[0]));
        }
        pairs.sort_unstable();
        if pairs.windows(2).any(|w| w[0] == w[1]) {
            return Err(err_with(Error::InvalidArgument, "an edge is given twice"));
        }
        let mut offsets = vec![0usize; n + 1];
        for &(u, _) in &pairs {
            offsets[u as usize + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let neighbours = pairs.into_iter().map(|(_, w)| w).collect::<Vec<_>>();
        check(Csr::new(&offsets, &neighbours))?;
        Ok(Graph { offsets, neighbours })
    }

    /// The number of nodes.
    #[getter]
    fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The number of undirected edges.
    #[getter]
    fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// The largest degree.
    #[getter]
    fn max_degree(&self) -> usize {
        self.csr().max_degree()
    }

    /// Degree centrality |N(v)| of every node (PrivPareto paper, §7.3); Δ = 1.
    fn degree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.per_node(py, degree::degree_all)
    }

    /// Egocentric density of every node (PrivPareto paper, eq. (2)); Δ = 1.
    fn egodensity<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.per_node(py, egodensity::egodensity_all)
    }

    /// Egocentric betweenness centrality of every node (Local Dampening paper, Def. 5.1); Δ =
    /// `ebc_global_sensitivity(D)` for a public bound D on the maximum degree.
    fn ebc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let len = check(ebc::ebc_scratch_len(self.offsets.len() - 1, self.neighbours.len()))?;
        self.per_node(py, move |g, out| {
            let mut scratch = vec![0u32; len];
            ebc::ebc_all(g, &mut scratch, out)
        })
    }

    /// The δ table of the degree (δ = 1 everywhere), n × `columns`.
    fn degree_delta_table<'py>(&self, py: Python<'py>, columns: i64) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.delta_table(py, columns, degree::degree_delta_table)
    }

    /// The δ table of egocentric density (clamped as docs/DESIGN.md §2 requires), n × `columns`.
    fn egodensity_delta_table<'py>(&self, py: Python<'py>, columns: i64) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.delta_table(py, columns, egodensity::egodensity_delta_table)
    }

    /// The δ table of EBC (Local Dampening paper, Def. 5.3, Lemma 5.4) for the public degree bound
    /// `max_degree`, n × `columns`; a node above the bound raises `InvalidArgumentError`.
    fn ebc_delta_table<'py>(
        &self,
        py: Python<'py>,
        max_degree: i64,
        columns: i64,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let d = count_arg("max_degree", max_degree)?;
        self.delta_table(py, columns, move |g, c, out| ebc::ebc_delta_table(g, d, c, out))
    }

    fn __repr__(&self) -> String {
        format!("Graph(nodes={}, edges={})", self.node_count(), self.edge_count())
    }
}

/// Δ of EBC, max(D(D − 1)/4, D), for a public bound D on the maximum degree (Lemma 5.2).
#[pyfunction]
fn ebc_global_sensitivity(max_degree: i64) -> PyResult<f64> {
    Ok(ebc::ebc_global_sensitivity(count_arg("max_degree", max_degree)?))
}

fn count(name: &str, v: i64) -> PyResult<u64> {
    u64::try_from(v).map_err(|_| err_with(Error::InvalidArgument, format!("{name} = {v} must be >= 0")))
}

/// True positive rate TP / (TP + FN), 0 without positives (PrivPareto paper, §6.2.3); Δ = 1.
#[pyfunction]
fn tpr(true_positives: i64, false_negatives: i64) -> PyResult<f64> {
    Ok(rates::tpr(
        count("true_positives", true_positives)?,
        count("false_negatives", false_negatives)?,
    ))
}

/// True negative rate TN / (TN + FP), 0 without negatives; Δ = 1.
#[pyfunction]
fn tnr(true_negatives: i64, false_positives: i64) -> PyResult<f64> {
    Ok(rates::tnr(
        count("true_negatives", true_negatives)?,
        count("false_positives", false_positives)?,
    ))
}

/// The admissible δ of a rate hits / (hits + misses) at distance t (the corrected PrivPareto Lemma 6.1),
/// for "add_remove" or "substitution" neighbours; clamped to Δ = 1.
#[pyfunction]
#[pyo3(signature = (hits, misses, t, *, neighbours = "add_remove"))]
fn rate_delta(hits: i64, misses: i64, t: i64, neighbours: &str) -> PyResult<f64> {
    let rel = args::neighbours(neighbours)?;
    Ok(rates::rate_delta(
        count("hits", hits)?,
        count("misses", misses)?,
        count("t", t)?,
        rel,
    ))
}

/// The n × `columns` δ table of a rate for n candidates: `rate_delta(hits[r], misses[r], t)`.
#[pyfunction]
#[pyo3(signature = (hits, misses, columns, *, neighbours = "add_remove"))]
fn rate_delta_table<'py>(
    py: Python<'py>,
    hits: Ints1<'py>,
    misses: Ints1<'py>,
    columns: i64,
    neighbours: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rel = args::neighbours(neighbours)?;
    let columns = count_arg("columns", columns)?;
    if columns == 0 {
        return Err(err_with(Error::InvalidArgument, "columns must be >= 1"));
    }
    let (h, m) = (
        args::counts("hits", &slice1(&hits))?,
        args::counts("misses", &slice1(&misses))?,
    );
    let n = h.len();
    let mut out = vec![
        0.0;
        n.checked_mul(columns)
            .ok_or_else(|| err_with(Error::Overflow, "n * columns"))?
    ];
    check(rates::rate_delta_table(&h, &m, rel, columns, &mut out))?;
    PyArray1::from_vec(py, out).reshape([n, columns])
}

fn contingency(counts: &Ints2<'_>) -> PyResult<Contingency> {
    let (c, values, classes) = slice2(counts);
    if values == 0 || classes == 0 {
        return Err(crate::errors::err(Error::EmptyInput));
    }
    if values > info_gain::MAX_ATTRIBUTE_VALUES || classes > info_gain::MAX_CLASSES {
        return Err(err_with(
            Error::CapacityExceeded,
            format!("a {values} x {classes} table"),
        ));
    }
    check(Contingency::new(&args::counts("counts", &c)?, values, classes))
}

/// Information gain of a split (Local Dampening paper, §5.2), from a values × classes contingency table of
/// counts; Δ = `info_gain_global_sensitivity(N)`.
#[pyfunction]
fn information_gain(counts: Ints2<'_>) -> PyResult<f64> {
    Ok(info_gain::information_gain(&contingency(&counts)?))
}

/// Δ of information gain, log2(N + 1) + 1/ln 2, for at most N records (N public).
#[pyfunction]
fn info_gain_global_sensitivity(max_records: i64) -> PyResult<f64> {
    Ok(info_gain::info_gain_global_sensitivity(count(
        "max_records",
        max_records,
    )?))
}

/// One attribute's row of the information-gain δ table, LS(T, t, A) for t < `columns` (Local Dampening
/// paper, Lemmas 5.5–5.6); not clamped: pass Δ as the sensitivity's global_sensitivity.
#[pyfunction]
fn info_gain_delta_table<'py>(
    py: Python<'py>,
    counts: Ints2<'py>,
    columns: i64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let columns = count_arg("columns", columns)?;
    if columns == 0 {
        return Err(err_with(Error::InvalidArgument, "columns must be >= 1"));
    }
    let t = contingency(&counts)?;
    let out = py.detach(|| {
        let mut out = vec![0.0; columns];
        InfoGainSensitivity::fill(&t, &mut out);
        out
    });
    Ok(PyArray1::from_vec(py, out))
}

/// The Gini split utility (Local Dampening paper, §5.2); Δ = 2.
#[pyfunction]
fn gini_utility(counts: Ints2<'_>) -> PyResult<f64> {
    Ok(gini::gini_utility(&contingency(&counts)?))
}

/// The element-wise maximum of two δ tables of the same shape (admissible by Lemma 4.5), as a new array.
#[pyfunction]
fn delta_max<'py>(py: Python<'py>, a: Floats2<'py>, b: Floats2<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (x, r1, c1) = slice2(&a);
    let (y, r2, c2) = slice2(&b);
    if (r1, c1) != (r2, c2) {
        return Err(err_with(
            Error::LengthMismatch,
            format!("shapes ({r1}, {c1}) and ({r2}, {c2})"),
        ));
    }
    let mut acc = x.into_owned();
    check(compose::max_into(&mut acc, &y))?;
    PyArray1::from_vec(py, acc).reshape([r1, c1])
}

/// Advanced composition (Kearns et al., SI Lemma 4, falling back on Dwork–Rothblum–Vadhan where that form is
/// not implied): k ε₀-DP mechanisms are (ε, δ′)-DP with the returned ε.
#[pyfunction]
fn advanced_composition(eps0: f64, k: i64, delta_prime: f64) -> PyResult<f64> {
    check(dpmo::privacy::advanced_composition_epsilon(
        eps0,
        count_arg("k", k)?,
        delta_prime,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Graph>()?;
    m.add_function(wrap_pyfunction!(ebc_global_sensitivity, m)?)?;
    m.add_function(wrap_pyfunction!(tpr, m)?)?;
    m.add_function(wrap_pyfunction!(tnr, m)?)?;
    m.add_function(wrap_pyfunction!(rate_delta, m)?)?;
    m.add_function(wrap_pyfunction!(rate_delta_table, m)?)?;
    m.add_function(wrap_pyfunction!(information_gain, m)?)?;
    m.add_function(wrap_pyfunction!(info_gain_global_sensitivity, m)?)?;
    m.add_function(wrap_pyfunction!(info_gain_delta_table, m)?)?;
    m.add_function(wrap_pyfunction!(gini_utility, m)?)?;
    m.add_function(wrap_pyfunction!(delta_max, m)?)?;
    m.add_function(wrap_pyfunction!(advanced_composition, m)?)?;
    m.add("DEGREE_GLOBAL_SENSITIVITY", degree::DEGREE_GLOBAL_SENSITIVITY)?;
    m.add(
        "EGODENSITY_GLOBAL_SENSITIVITY",
        egodensity::EGODENSITY_GLOBAL_SENSITIVITY,
    )?;
    m.add("RATE_GLOBAL_SENSITIVITY", rates::RATE_GLOBAL_SENSITIVITY)?;
    m.add("GINI_GLOBAL_SENSITIVITY", gini::GINI_GLOBAL_SENSITIVITY)?;
    m.add("CONTINGENCY_MAX_VALUES", info_gain::MAX_ATTRIBUTE_VALUES)?;
    m.add("CONTINGENCY_MAX_CLASSES", info_gain::MAX_CLASSES)?;
    Ok(())
}
