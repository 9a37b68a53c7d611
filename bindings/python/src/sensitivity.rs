//! Local sensitivity δ(x, t, r) as the caller supplies it (`dpmo.Sensitivity`): per candidate, a table, one
//! row shared by all candidates, or a Python callable. The values are read when a call runs (as the C ABI
//! reads its `dpmo_sensitivity`); a NaN, negative or infinite value counts as Δ (the core's public rule for
//! private values: never a status), while an exception raised by the callable — the caller's own bug — fails the
//! call (`InvalidSensitivityValueError`, a budget keeps its charge).

use crate::args::{count_arg, slice1, slice2, Floats1, Floats2};
use crate::errors::{check, err_with};
use dpmo::sensitivity::{max_over_candidates, DeltaFunction, DeltaSource, LocalSensitivity};
use dpmo::{Error, MAX_OBJECTIVES};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyType;

use std::sync::Mutex;

enum Values {
    PerCandidate(Py<PyArray1<f64>>),
    Table(Py<PyArray2<f64>>),
    Shared(Py<PyArray1<f64>>),
    Callback(Py<PyAny>),
}

/// A per-candidate local sensitivity δ(x, t, r) (Local Dampening paper, Def. 3.3), with its global
/// sensitivity Δ and saturation distance T_max.
///
/// Every value is clamped to Δ and forced to Δ from `t_max` on (Lemma 3.5: both keep an admissible δ
/// admissible). The library cannot check that your δ is admissible: a wrong δ voids the guarantee. Build one
/// with `per_candidate`, `table`, `shared` or `callback`.
#[pyclass(frozen, module = "dpmo._native")]
pub struct Sensitivity {
    values: Values,
    global: f64,
    t_max: usize,
}

fn check_global_tmax(global: f64, t_max: i64) -> PyResult<usize> {
    if !(global.is_finite() && global > 0.0) {
        return Err(err_with(
            Error::InvalidSensitivity,
            format!("global_sensitivity = {global}"),
        ));
    }
    let t = count_arg("t_max", t_max)?;
    if t == 0 {
        return Err(err_with(Error::InvalidArgument, "t_max must be >= 1"));
    }
    Ok(t)
}

/// A C-contiguous float64 copy or reference of a 1-D array-like.
fn own1<'py>(py: Python<'py>, a: &Floats1<'py>) -> Py<PyArray1<f64>> {
    match a.as_slice() {
        Ok(_) => (**a).as_unbound().clone_ref(py),
        Err(_) => PyArray1::from_vec(py, slice1(a).into_owned()).unbind(),
    }
}

fn own2<'py>(py: Python<'py>, a: &Floats2<'py>) -> PyResult<Py<PyArray2<f64>>> {
    if a.is_c_contiguous() {
        return Ok((**a).as_unbound().clone_ref(py));
    }
    let (v, rows, cols) = slice2(a);
    Ok(PyArray1::from_vec(py, v.into_owned()).reshape([rows, cols])?.unbind())
}

/// A Python callable as a core δ function. It runs with the GIL re-acquired; its first exception (or a
/// result that is not a float) is kept and reported as the cause of the call's failure (`call::run` turns it
/// into `InvalidSensitivityValue`); the value read is then NaN, which the core takes as Δ meanwhile.
pub struct PyDelta {
    f: Py<PyAny>,
    pub error: Mutex<Option<PyErr>>,
}

impl DeltaFunction for PyDelta {
    fn delta(&self, r: usize, t: usize) -> f64 {
        Python::attach(|py| {
            let mut error = self.error.lock().unwrap_or_else(|p| p.into_inner());
            if error.is_some() {
                return f64::NAN;
            }
            match self.f.bind(py).call1((r, t)).and_then(|v| v.extract::<f64>()) {
                Ok(v) => v,
                Err(e) => {
                    *error = Some(e);
                    f64::NAN
                }
            }
        })
    }
}

/// A sensitivity's values borrowed for one call (held with the GIL, read without it).
pub struct Borrowed<'py> {
    per: Option<PyReadonlyArray1<'py, f64>>,
    table: Option<PyReadonlyArray2<'py, f64>>,
    callback: Option<PyDelta>,
    global: f64,
    t_max: usize,
}

/// The borrowed values as slices: what a call's closure captures.
pub struct Spec<'a> {
    source: SpecSource<'a>,
    global: f64,
    t_max: usize,
}

#[derive(Clone, Copy)]
enum SpecSource<'a> {
    PerCandidate(&'a [f64]),
    Table(&'a [f64], usize),
    Shared(&'a [f64]),
    Callback(&'a PyDelta),
}

impl Borrowed<'_> {
    pub fn spec(&self, kind_is_shared: bool) -> Spec<'_> {
        let source = if let Some(cb) = &self.callback {
            SpecSource::Callback(cb)
        } else if let Some(t) = &self.table {
            let cols = t.shape()[1];
            SpecSource::Table(t.as_slice().unwrap_or(&[]), cols)
        } else {
            let s = self.per.as_ref().map(|p| p.as_slice().unwrap_or(&[])).unwrap_or(&[]);
            if kind_is_shared {
                SpecSource::Shared(s)
            } else {
                SpecSource::PerCandidate(s)
            }
        };
        Spec {
            source,
            global: self.global,
            t_max: self.t_max,
        }
    }

    /// The callback's exception, if it raised.
    pub fn take_error(&self) -> Option<PyErr> {
        self.callback
            .as_ref()
            .and_then(|c| c.error.lock().unwrap_or_else(|p| p.into_inner()).take())
    }
}

impl Spec<'_> {
    /// The validated core sensitivity for n candidates (values checked here: after the budget charge).
    pub fn build(&self, n: usize) -> Result<LocalSensitivity<'_>, Error> {
        let source = match self.source {
            SpecSource::PerCandidate(v) => DeltaSource::PerCandidate(v),
            SpecSource::Table(values, columns) => DeltaSource::Table { values, columns },
            SpecSource::Shared(v) => DeltaSource::Shared(v),
            SpecSource::Callback(f) => DeltaSource::Function(f),
        };
        LocalSensitivity::new(source, self.global, self.t_max, n)
    }
}

/// The borrowed values of several sensitivities with their specs.
pub struct Many<'py> {
    pub borrowed: Vec<(Borrowed<'py>, bool)>,
}

impl<'py> Many<'py> {
    pub fn borrow(py: Python<'py>, list: &[Py<Sensitivity>]) -> PyResult<Self> {
        if list.is_empty() {
            return Err(err_with(Error::InvalidArgument, "deltas: at least one sensitivity"));
        }
        if list.len() > MAX_OBJECTIVES {
            return Err(err_with(
                Error::CapacityExceeded,
                format!("{} sensitivities", list.len()),
            ));
        }
        Ok(Many {
            borrowed: list
                .iter()
                .map(|s| {
                    let s = s.get();
                    Ok((s.borrow(py)?, s.is_shared()))
                })
                .collect::<PyResult<_>>()?,
        })
    }

    pub fn specs(&self) -> Vec<Spec<'_>> {
        self.borrowed.iter().map(|(b, shared)| b.spec(*shared)).collect()
    }

    pub fn take_error(&self) -> Option<PyErr> {
        self.borrowed.iter().find_map(|(b, _)| b.take_error())
    }
}

/// Builds the core sensitivities of several specs for n candidates.
pub fn build_all<'a>(specs: &'a [Spec<'a>], n: usize) -> Result<Vec<LocalSensitivity<'a>>, Error> {
    specs.iter().map(|s| s.build(n)).collect()
}

impl Sensitivity {
    pub fn is_shared(&self) -> bool {
        matches!(self.values, Values::Shared(_))
    }

    /// The number of candidates implied by the values (per-candidate and table), if any.
    pub fn implied_len(&self, py: Python<'_>) -> Option<usize> {
        match &self.values {
            Values::PerCandidate(a) => Some(a.bind(py).len()),
            Values::Table(a) => Some(a.bind(py).shape()[0]),
            _ => None,
        }
    }

    pub fn borrow<'py>(&self, py: Python<'py>) -> PyResult<Borrowed<'py>> {
        let mut b = Borrowed {
            per: None,
            table: None,
            callback: None,
            global: self.global,
            t_max: self.t_max,
        };
        match &self.values {
            Values::PerCandidate(a) | Values::Shared(a) => b.per = Some(a.bind(py).try_readonly()?),
            Values::Table(a) => b.table = Some(a.bind(py).try_readonly()?),
            Values::Callback(f) => {
                b.callback = Some(PyDelta {
                    f: f.clone_ref(py),
                    error: Mutex::new(None),
                })
            }
        }
        Ok(b)
    }

    fn n_or(&self, py: Python<'_>, n: Option<i64>) -> PyResult<usize> {
        match (n, self.implied_len(py)) {
            (Some(n), _) => count_arg("n", n),
            (None, Some(n)) => Ok(n),
            (None, None) => Err(err_with(
                Error::InvalidArgument,
                "n (the number of candidates) is required for a shared or callback sensitivity",
            )),
        }
    }
}

#[pymethods]
impl Sensitivity {
    /// δ(x, t, r) = `values[r]` for every t < `t_max` (one value per candidate, constant in t).
    #[classmethod]
    #[pyo3(signature = (values, *, global_sensitivity, t_max))]
    fn per_candidate<'py>(
        _cls: &Bound<'py, PyType>,
        py: Python<'py>,
        values: Floats1<'py>,
        global_sensitivity: f64,
        t_max: i64,
    ) -> PyResult<Self> {
        let t_max = check_global_tmax(global_sensitivity, t_max)?;
        Ok(Sensitivity {
            values: Values::PerCandidate(own1(py, &values)),
            global: global_sensitivity,
            t_max,
        })
    }

    /// δ(x, t, r) = `values[r, t]` for t < T (an n × T array), Δ beyond. `t_max` defaults to T (the same
    /// saturation).
    #[classmethod]
    #[pyo3(signature = (values, *, global_sensitivity, t_max = None))]
    fn table<'py>(
        _cls: &Bound<'py, PyType>,
        py: Python<'py>,
        values: Floats2<'py>,
        global_sensitivity: f64,
        t_max: Option<i64>,
    ) -> PyResult<Self> {
        let columns = values.shape()[1];
        let t_max = check_global_tmax(global_sensitivity, t_max.unwrap_or(columns.max(1) as i64))?;
        Ok(Sensitivity {
            values: Values::Table(own2(py, &values)?),
            global: global_sensitivity,
            t_max,
        })
    }

    /// δ(x, t, r) = `values[t]` for every candidate, for t < len(values), Δ beyond (LS(x, t), or the "δ
    /// replacement" of `max_over_candidates`). `t_max` defaults to len(values).
    #[classmethod]
    #[pyo3(signature = (values, *, global_sensitivity, t_max = None))]
    fn shared<'py>(
        _cls: &Bound<'py, PyType>,
        py: Python<'py>,
        values: Floats1<'py>,
        global_sensitivity: f64,
        t_max: Option<i64>,
    ) -> PyResult<Self> {
        let len = values.len();
        let t_max = check_global_tmax(global_sensitivity, t_max.unwrap_or(len.max(1) as i64))?;
        Ok(Sensitivity {
            values: Values::Shared(own1(py, &values)),
            global: global_sensitivity,
            t_max,
        })
    }

    /// δ(x, t, r) = `fn(r, t)`, a Python callable returning a float ≥ 0. It must be deterministic. It runs
    /// during the call with the GIL held; a NaN, negative or infinite value counts as Δ. If it raises (the
    /// caller's own bug), the call fails with `InvalidSensitivityValueError` (its exception as `__cause__`)
    /// and a budget keeps its charge. Calling dpmo with the call's own generator from inside it
    /// raises `InvalidGeneratorError`.
    #[classmethod]
    #[pyo3(signature = (fn_, *, global_sensitivity, t_max))]
    fn callback(
        _cls: &Bound<'_, PyType>,
        fn_: &Bound<'_, PyAny>,
        global_sensitivity: f64,
        t_max: i64,
    ) -> PyResult<Self> {
        if !fn_.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "fn must be callable as fn(r, t) -> float",
            ));
        }
        let t_max = check_global_tmax(global_sensitivity, t_max)?;
        Ok(Sensitivity {
            values: Values::Callback(fn_.clone().unbind()),
            global: global_sensitivity,
            t_max,
        })
    }

    /// The global sensitivity Δ.
    #[getter]
    fn global_sensitivity(&self) -> f64 {
        self.global
    }

    /// The saturation distance T_max (values above 2**32 − 1 act as 2**32 − 1).
    #[getter]
    fn t_max(&self) -> usize {
        self.t_max
    }

    /// `"per_candidate"`, `"table"`, `"shared"` or `"callback"`.
    #[getter]
    fn kind(&self) -> &'static str {
        match self.values {
            Values::PerCandidate(_) => "per_candidate",
            Values::Table(_) => "table",
            Values::Shared(_) => "shared",
            Values::Callback(_) => "callback",
        }
    }

    /// δ(x, t, r) after clamping and saturation (`dpmo_sensitivity_value`), for candidate r of n (n is
    /// implied by per-candidate values and tables).
    #[pyo3(signature = (r, t, *, n = None))]
    fn value(&self, py: Python<'_>, r: i64, t: i64, n: Option<i64>) -> PyResult<f64> {
        let n = self.n_or(py, n)?;
        let (r, t) = (count_arg("r", r)?, count_arg("t", t)?);
        let b = self.borrow(py)?;
        let spec = b.spec(self.is_shared());
        let out = spec.build(n).and_then(|d| d.delta(r, t));
        match (out, b.take_error()) {
            (Ok(v), None) => Ok(v),
            (r, cause) => {
                let e = r.err().unwrap_or(Error::InvalidSensitivityValue);
                Err(crate::errors::Failure {
                    cause,
                    ..crate::errors::Failure::from(e)
                }
                .into())
            }
        }
    }

    /// The "δ replacement" of the Local Dampening paper (§4.2): δ̂(x, t) = max over the n candidates of
    /// δ(x, t, r), as a shared sensitivity (admissible by Lemma 4.5). Costs n · T evaluations.
    #[pyo3(signature = (*, n = None))]
    fn max_over_candidates(&self, py: Python<'_>, n: Option<i64>) -> PyResult<Sensitivity> {
        let n = self.n_or(py, n)?;
        if n as u64 > 4_294_967_296 {
            return Err(err_with(Error::InvalidArgument, "n above 2**32"));
        }
        let b = self.borrow(py)?;
        let spec = b.spec(self.is_shared());
        let d = check(spec.build(n))?;
        let mut out = vec![0.0; d.saturation()];
        let r = max_over_candidates(&d, &mut out).map(|m| m.saturation());
        match (r, b.take_error()) {
            (Ok(len), None) => {
                out.truncate(len);
                Ok(Sensitivity {
                    values: Values::Shared(PyArray1::from_vec(py, out).unbind()),
                    global: self.global,
                    t_max: self.t_max,
                })
            }
            (r, cause) => Err(crate::errors::Failure {
                cause,
                ..crate::errors::Failure::from(r.err().unwrap_or(Error::InvalidSensitivityValue))
            }
            .into()),
        }
    }

    /// The values (a copy), or the callable.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match &self.values {
            Values::PerCandidate(a) | Values::Shared(a) => a.bind(py).to_owned_array().into_any_pyarray(py),
            Values::Table(a) => numpy::PyArray2::from_owned_array(py, a.bind(py).to_owned_array()).into_any(),
            Values::Callback(f) => f.bind(py).clone(),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Sensitivity.{}(..., global_sensitivity={}, t_max={})",
            self.kind(),
            self.global,
            self.t_max
        )
    }
}

trait IntoAny<'py> {
    fn into_any_pyarray(self, py: Python<'py>) -> Bound<'py, PyAny>;
}

impl<'py> IntoAny<'py> for numpy::ndarray::Array1<f64> {
    fn into_any_pyarray(self, py: Python<'py>) -> Bound<'py, PyAny> {
        PyArray1::from_owned_array(py, self).into_any()
    }
}
