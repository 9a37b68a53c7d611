//! The two stateful objects: the generator (`Rng`), the stream key that derives per-partition generators
//! (`StreamKey`), and the privacy budget (`Budget`). Each is a frozen class behind a mutex, so it can be
//! used from several Python threads; none can be copied or pickled except the key (which Spark must ship).
//!
//! Fork: a generator and a budget remember the process that made them ([`crate::fork`]). In a forked child
//! an OS-seeded generator is re-keyed from the operating system before its first draw, a reproducible one
//! refuses to draw, and a budget refuses to charge (unless made with `allow_fork=True`).

use crate::errors::{check, err, err_with, Failure};
use crate::fork::{self, Process};
use dpmo::privacy::PrivacyBudget;
use dpmo::rng::{Generator, GeneratorKind, GeneratorState};
use dpmo::Error;
use numpy::PyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple, PyType};
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng as _, SeedableRng};
use std::sync::Mutex;

/// 32 bytes from `os.urandom` (the operating system's secure source on every platform Python runs on).
pub fn os_seed(py: Python<'_>) -> PyResult<[u8; 32]> {
    let b = py.import("os")?.call_method1("urandom", (32,))?;
    let bytes: Vec<u8> = b.extract()?;
    bytes
        .try_into()
        .map_err(|_| err_with(Error::Unsupported, "os.urandom returned fewer than 32 bytes"))
}

/// A simulation seed: an int in [0, 2^256) (little-endian) or exactly 32 bytes.
fn seed_of(seed: &Bound<'_, PyAny>) -> PyResult<[u8; 32]> {
    if let Ok(b) = seed.cast::<PyBytes>() {
        let v: &[u8] = b.as_bytes();
        return v
            .try_into()
            .map_err(|_| err_with(Error::InvalidArgument, "a bytes seed must be exactly 32 bytes"));
    }
    if seed.is_instance_of::<pyo3::types::PyBool>() {
        return Err(err_with(
            Error::InvalidArgument,
            "a seed is an int in [0, 2**256) or 32 bytes",
        ));
    }
    if seed.is_instance_of::<pyo3::types::PyInt>() {
        let py = seed.py();
        let ok: bool = seed.ge(0)? && seed.lt(py.eval(c"2**256", None, None)?)?;
        if !ok {
            return Err(err_with(Error::InvalidArgument, "an int seed must be in [0, 2**256)"));
        }
        let b = seed.call_method1("to_bytes", (32, "little"))?;
        let v: Vec<u8> = b.extract()?;
        return v
            .try_into()
            .map_err(|_| err_with(Error::InvalidArgument, "seed conversion failed"));
    }
    Err(PyTypeError::new_err("a seed is an int in [0, 2**256) or 32 bytes"))
}

/// A random generator: ChaCha20 seeded from the operating system (`Rng()`), or a reproducible simulation
/// generator (`Rng.for_simulation(seed)`).
///
/// Every selection takes the generator as its first argument and advances it; a generator serves one call
/// at a time (a second call on it meanwhile, from a sensitivity callback or another thread, raises
/// `InvalidGeneratorError`). It cannot be copied or pickled: two copies would repeat the same randomness,
/// which breaks differential privacy.
///
/// Fork: a generator copied into a child process by `fork` (from Python or from C) never repeats the
/// parent's draws there. An OS-seeded generator is re-keyed from the operating system before its first use
/// in the child; a reproducible one (`for_simulation`, or a stream of a simulation key) raises
/// `InvalidGeneratorError` in the child, since re-keying would silently make the simulation unreproducible
/// and keeping the stream would repeat it: derive one generator per process instead.
#[pyclass(frozen, module = "dpmo._native")]
pub struct Rng {
    slot: Mutex<Slot>,
    reproducible: bool,
}

struct Slot {
    /// None while a call uses the state.
    state: Option<GeneratorState>,
    /// The process the state belongs to.
    process: Process,
}

const BUSY: &str = "the generator is in use by another call (a callback or another thread)";
const FORKED_REPRODUCIBLE: &str = "this reproducible generator was copied into this process by fork: \
    drawing from it would repeat the parent's draws, and re-keying it would make the simulation \
    irreproducible; make one generator per process (for example StreamKey.for_simulation(seed).rng(worker) \
    in each worker)";
const FORKED_DURING_CALL: &str = "the process forked during the call (from a callback): the child's \
    result would repeat the parent's draws, so it is withheld";

impl Rng {
    pub fn from_state(state: GeneratorState, reproducible: bool) -> Result<Self, Failure> {
        Ok(Rng {
            slot: Mutex::new(Slot {
                state: Some(state),
                process: fork::current()?,
            }),
            reproducible,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True for a generator seeded explicitly (`for_simulation`, or a stream of a simulation key).
    pub fn is_reproducible(&self) -> bool {
        self.reproducible
    }

    /// Takes the state out for one call (marks the generator busy), with the process it belongs to. The
    /// state must be given back with [`Rng::give_back`]. In a process other than the generator's (a forked
    /// child), an OS-seeded generator is first re-keyed from the operating system (whatever the parent was
    /// doing with it: a call in flight in the parent at the fork does not exist in the child), and a
    /// reproducible one is refused.
    pub fn take(&self) -> Result<(GeneratorState, Process), Failure> {
        let here = fork::current()?;
        let mut slot = self.lock();
        if slot.process != here {
            if self.reproducible {
                return Err(Failure::with(Error::InvalidGenerator, FORKED_REPRODUCIBLE));
            }
            slot.state = Some(GeneratorState::chacha20(fork::entropy::<32>()?));
            slot.process = here;
        }
        match slot.state.take() {
            Some(s) => Ok((s, here)),
            None => Err(Failure::with(Error::InvalidGenerator, BUSY)),
        }
    }

    pub fn give_back(&self, state: GeneratorState) {
        self.lock().state = Some(state);
    }

    /// After a call: fails if the process is no longer the one that took the state (a callback forked
    /// during the call; the child must not use draws the parent uses too). The state stays as it was
    /// taken; the child's next `take` re-keys or refuses it.
    pub fn same_process(taken_in: Process) -> Result<(), Failure> {
        if fork::current()? == taken_in {
            Ok(())
        } else {
            Err(Failure::with(Error::InvalidGenerator, FORKED_DURING_CALL))
        }
    }

    /// Runs `f` with the live generator outside the GIL; the advanced state is kept on success, and the
    /// state as it was is restored on failure (as the C ABI does).
    pub fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Generator) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        let (saved, process) = self.take()?;
        let mut g = match saved.load() {
            Ok(g) => g,
            Err(e) => {
                self.give_back(saved);
                return Err(err(e));
            }
        };
        let out = py.detach(|| f(&mut g));
        if let Err(f) = Rng::same_process(process) {
            self.give_back(saved);
            return Err(f.into());
        }
        let mut state = saved;
        match out {
            Ok(v) => {
                state.store(&g);
                self.give_back(state);
                Ok(v)
            }
            Err(e) => {
                self.give_back(saved);
                Err(err(e))
            }
        }
    }
}

const DISTRIBUTIONS: &str = "'uniform', 'exponential', 'gumbel' or 'laplace'";

#[pymethods]
impl Rng {
    /// A ChaCha20 generator (cryptographically secure) keyed by 32 bytes from `os.urandom`. Use it for every
    /// release. There is no other way to seed a production generator.
    #[new]
    fn new(py: Python<'_>) -> PyResult<Self> {
        Ok(Rng::from_state(GeneratorState::chacha20(os_seed(py)?), false)?)
    }

    /// A generator for **reproducible simulation and tests only**, from an explicit seed (an int in
    /// [0, 2**256) or 32 bytes). `kind` is `"xoshiro256pp"` (the default: fast, **not cryptographically
    /// secure**, its state can be recovered from its outputs) or `"chacha20"` (the same stream as the C ABI's
    /// `dpmo_rng_init(DPMO_RNG_CHACHA20, seed)`). Anyone who knows the seed knows every draw: results
    /// computed with it are not private.
    #[classmethod]
    #[pyo3(signature = (seed, *, kind = "xoshiro256pp"))]
    fn for_simulation(_cls: &Bound<'_, PyType>, seed: &Bound<'_, PyAny>, kind: &str) -> PyResult<Self> {
        let s = seed_of(seed)?;
        let state = match kind {
            "xoshiro256pp" => GeneratorState::xoshiro256pp(s),
            "chacha20" => GeneratorState::chacha20(s),
            _ => {
                return Err(err_with(
                    Error::InvalidArgument,
                    format!("kind {kind:?}: expected 'xoshiro256pp' or 'chacha20'"),
                ))
            }
        };
        Ok(Rng::from_state(state, true)?)
    }

    /// `"chacha20"` or `"xoshiro256pp"`.
    #[getter]
    fn kind(&self) -> PyResult<&'static str> {
        let slot = self.lock();
        match slot.state.as_ref().map(|s| s.kind()) {
            Some(Ok(GeneratorKind::ChaCha20)) => Ok("chacha20"),
            Some(Ok(GeneratorKind::Xoshiro256PlusPlus)) => Ok("xoshiro256pp"),
            Some(Err(e)) => Err(err(e)),
            None => Err(err_with(
                Error::InvalidGenerator,
                "the generator is in use by another call",
            )),
        }
    }

    /// True for a generator seeded explicitly (`for_simulation`, or a stream of a simulation key): its
    /// draws are known to whoever knows the seed.
    #[getter]
    fn reproducible(&self) -> bool {
        self.reproducible
    }

    /// `count` independent draws (or one float when `count` is None) of a standard continuous distribution:
    /// `"uniform"` on (0, 1), `"exponential"`, `"gumbel"` or `"laplace"`, in floating point. For tests and
    /// simulation only: never add these to a value you release (floating-point noise leaks the value,
    /// Mironov 2012); use `discrete_laplace`.
    #[pyo3(signature = (distribution, count = None))]
    fn sample<'py>(&self, py: Python<'py>, distribution: &str, count: Option<i64>) -> PyResult<Bound<'py, PyAny>> {
        let which: u8 = match distribution {
            "uniform" => 0,
            "exponential" => 1,
            "gumbel" => 2,
            "laplace" => 3,
            _ => {
                return Err(err_with(
                    Error::InvalidArgument,
                    format!("distribution {distribution:?}: expected {DISTRIBUTIONS}"),
                ))
            }
        };
        let n = crate::args::count_arg("count", count.unwrap_or(1))?;
        let v = self.with(py, move |g| {
            let mut v = Vec::with_capacity(n);
            if n == 0 {
                return Ok(v); // count 0 is public: nothing drawn (as dpmo_sample)
            }
            // One key from this generator, whatever `count` and the draws (dpmo::rng::call_stream), as the C
            // ABI's dpmo_sample: the generator's state after the call reveals nothing about the values drawn.
            let g = &mut dpmo::rng::call_stream(g);
            for _ in 0..n {
                v.push(match which {
                    0 => dpmo::sample::uniform_open01(g),
                    1 => dpmo::sample::exponential(g),
                    2 => dpmo::sample::gumbel(g),
                    _ => dpmo::sample::laplace(g),
                });
            }
            Ok(v)
        })?;
        Ok(match count {
            None => v[0].into_pyobject(py)?.into_any(),
            Some(_) => PyArray1::from_vec(py, v).into_any(),
        })
    }

    /// Exact draws of the discrete Laplace distribution P(Z = z) ∝ exp(−|z| · granularity / scale) on the
    /// integers (Canonne, Kamath & Steinke 2020): the noise for releasing a value. To release f(x) of
    /// sensitivity Δ at ε, round f(x) to a multiple of `granularity`, take `scale` = Δ / ε and release
    /// f(x) + granularity · Z. One int when `count` is None, else an int64 array.
    #[pyo3(signature = (scale, count = None, *, granularity = 1.0))]
    fn discrete_laplace<'py>(
        &self,
        py: Python<'py>,
        scale: f64,
        count: Option<i64>,
        granularity: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rate = check(dpmo::exact::discrete::LaplaceRate::new(scale, granularity))?;
        let n = crate::args::count_arg("count", count.unwrap_or(1))?;
        let v = self.with(py, move |g| {
            if n == 0 {
                return Ok(Vec::new()); // count 0 is public: nothing drawn (as dpmo_sample_discrete_laplace)
            }
            // One key from this generator, then the exact sampler on its private stream, as the C ABI's
            // dpmo_sample_discrete_laplace: how many words the sampler reads depends on the noise drawn, and the
            // noise hides a private value, so the caller's generator must not advance by that count.
            let g = &mut dpmo::rng::call_stream(g);
            Ok((0..n)
                .map(|_| dpmo::exact::discrete::discrete_laplace(g, &rate))
                .collect::<Vec<i64>>())
        })?;
        Ok(match count {
            None => v[0].into_pyobject(py)?.into_any(),
            Some(_) => PyArray1::from_vec(py, v).into_any(),
        })
    }

    fn __repr__(&self) -> String {
        let kind = self.kind().unwrap_or("busy");
        if self.reproducible {
            format!("Rng.for_simulation(<seed>, kind={kind:?})  # reproducible, not for releases")
        } else {
            format!("Rng()  # {kind}, seeded from the operating system")
        }
    }

    fn __copy__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a dpmo.Rng cannot be copied: two copies would repeat the same randomness",
        ))
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyResult<()> {
        self.__copy__()
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a dpmo.Rng cannot be pickled: a copy would repeat the same randomness (ship a dpmo.StreamKey and derive one generator per worker)",
        ))
    }
}

/// A secret 32-byte key from which independent generators are derived, one per stream number: the way to
/// give every Spark partition its own generator without seeding any of them from data.
///
/// Stream s is ChaCha20 keyed by the first 32 bytes of the ChaCha20 keystream of the key on stream s (a
/// pseudorandom function of (key, s)), so distinct streams are independent for anyone who does not know the
/// key. A stream used twice repeats its draws: give each use its own number. A `StreamKey` can be pickled
/// (Spark ships it to the executors): treat the pickle as the secret it is. For the same reason a key is
/// the same key in every process, forked or not (it is not re-keyed): give each process its own stream
/// numbers. A generator `key.rng(s)` belongs to the process that made it, like any `Rng`.
#[pyclass(frozen, module = "dpmo._native")]
pub struct StreamKey {
    key: [u8; 32],
    reproducible: bool,
}

impl StreamKey {
    pub fn state(&self, stream: u64) -> GeneratorState {
        let mut prf = ChaCha20Rng::from_seed(self.key);
        prf.set_stream(stream);
        let mut seed = [0u8; 32];
        prf.fill_bytes(&mut seed);
        GeneratorState::chacha20(seed)
    }

    pub fn is_reproducible(&self) -> bool {
        self.reproducible
    }
}

#[pymethods]
impl StreamKey {
    /// A fresh key from `os.urandom`.
    #[new]
    fn new(py: Python<'_>) -> PyResult<Self> {
        Ok(StreamKey {
            key: os_seed(py)?,
            reproducible: false,
        })
    }

    /// A key from an explicit seed, for **reproducible simulation and tests only** (see `Rng.for_simulation`).
    #[classmethod]
    fn for_simulation(_cls: &Bound<'_, PyType>, seed: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(StreamKey {
            key: seed_of(seed)?,
            reproducible: true,
        })
    }

    /// The ChaCha20 generator of stream `stream` (an int in [0, 2**64)), belonging to this process.
    fn rng(&self, stream: u64) -> PyResult<Rng> {
        Ok(Rng::from_state(self.state(stream), self.reproducible)?)
    }

    #[getter]
    fn reproducible(&self) -> bool {
        self.reproducible
    }

    fn __repr__(&self) -> String {
        format!("StreamKey(<secret>, reproducible={})", self.reproducible)
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py.import("dpmo._native")?.getattr("_stream_key_from_bytes")?;
        let args = (PyBytes::new(py, &self.key), self.reproducible);
        PyTuple::new(py, [rebuild, args.into_pyobject(py)?.into_any()])
    }
}

/// Rebuilds a pickled `StreamKey` (internal).
#[pyfunction]
pub fn _stream_key_from_bytes(key: &[u8], reproducible: bool) -> PyResult<StreamKey> {
    Ok(StreamKey {
        key: key
            .try_into()
            .map_err(|_| err_with(Error::InvalidArgument, "a stream key is 32 bytes"))?,
        reproducible,
    })
}

/// A privacy budget under sequential composition (Dwork & Roth, Thm. 3.16): the selections given this
/// budget are together `total`-DP, or (`total`, `delta`)-DP for a budget made with a δ (the ε's add up and
/// the δ's add up; the discovery functions charge a δ, the selections δ = 0). Pass it as `budget=` to every selection; each charges its ε before it
/// looks at the data. `spent` is an upper bound of the exact sum of the charges and `remaining` is rounded
/// down, so the exact sum never exceeds `total`; charging exactly `remaining` always succeeds. The budget
/// cannot be copied or pickled (a copy would spend the same ε twice).
///
/// Two guards, each with an explicit opt-in:
/// * **fork**: a budget copied into a child process by `fork` refuses to charge there (`InvalidArgumentError`),
///   since each copy would spend the whole remaining ε on its own; `allow_fork=True` lets every copy charge
///   (the processes together can then spend the remaining ε once per process: account for it yourself);
/// * **simulation**: a reproducible generator or stream key (`for_simulation`) is refused for a release
///   charged to this budget (`InvalidGeneratorError`), since whoever knows the seed knows every draw;
///   `allow_simulation=True` accepts them (a budget that accounts for a simulation, not a release).
#[pyclass(frozen, module = "dpmo._native")]
pub struct Budget {
    inner: Mutex<PrivacyBudget>,
    creator: Process,
    allow_fork: bool,
    allow_simulation: bool,
}

/// A charge made before a call, settled after it as the C ABI does.
pub struct Charge {
    before: PrivacyBudget,
    after: PrivacyBudget,
}

/// True for the failures caused by the private data (they keep the charge).
pub fn caused_by_data(e: Error) -> bool {
    matches!(
        e,
        Error::NonFiniteInput | Error::InvalidSensitivityValue | Error::Overflow
    )
}

const FORKED_BUDGET: &str = "this dpmo.Budget was copied into this process by fork: charging the copy \
    would spend the same epsilon twice; charge the parent's budget for the child's share and make a new \
    Budget in the child, or make the budget with allow_fork=True";
const SIMULATION: &str = "a reproducible generator or stream key (for_simulation) cannot serve a release \
    charged to a budget: whoever knows the seed knows every draw; use dpmo.Rng() / dpmo.StreamKey(), or, \
    for a simulation, dpmo.Budget(total, allow_simulation=True)";

impl Budget {
    fn lock(&self) -> std::sync::MutexGuard<'_, PrivacyBudget> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuses a copy in a forked child (unless `allow_fork`).
    fn check_process(&self) -> Result<(), Failure> {
        if self.allow_fork || fork::current()? == self.creator {
            Ok(())
        } else {
            Err(Failure::with(Error::InvalidArgument, FORKED_BUDGET))
        }
    }

    /// Refuses a reproducible stream for a release charged to this budget (unless `allow_simulation`).
    pub fn check_stream(&self, reproducible: bool) -> Result<(), Failure> {
        if reproducible && !self.allow_simulation {
            Err(Failure::with(Error::InvalidGenerator, SIMULATION))
        } else {
            Ok(())
        }
    }

    /// Charges `epsilon` before a call (refused with nothing changed when too little is left, or in a
    /// forked child).
    pub fn charge_call(&self, epsilon: f64) -> Result<Charge, Failure> {
        self.charge_call_approx(epsilon, 0.0)
    }

    /// Charges (`epsilon`, `delta`) before a call (a pure-ε budget refuses δ > 0; nothing changed on
    /// refusal).
    pub fn charge_call_approx(&self, epsilon: f64, delta: f64) -> Result<Charge, Failure> {
        self.check_process()?;
        let mut b = self.lock();
        let before = *b;
        b.charge_approx(epsilon, delta)?;
        Ok(Charge { before, after: *b })
    }

    /// Pay what you get: replaces a charge made up front by the actual (`epsilon`, `delta`) of the run
    /// (never more than the charge), as the C ABI does. Leaves the charge in place when the budget changed
    /// meanwhile or the actual charge cannot be made (over-charging is the safe side).
    pub fn settle_actual(&self, charge: Charge, epsilon: f64, delta: f64) {
        let mut b = self.lock();
        if *b != charge.after {
            return;
        }
        let mut p = charge.before;
        if p.charge_approx(epsilon, delta).is_ok() {
            *b = p;
        }
    }

    /// Keeps the charge on success and on failures caused by the data; refunds it on argument failures,
    /// unless the budget changed meanwhile (then the charge is kept: over-charging is the safe side).
    /// Returns whether the charge was kept.
    pub fn settle(&self, charge: Charge, error: Option<Error>) -> bool {
        match error {
            None => true,
            Some(e) if caused_by_data(e) => true,
            Some(_) => {
                let mut b = self.lock();
                if *b == charge.after {
                    *b = charge.before;
                    false
                } else {
                    true
                }
            }
        }
    }
}

#[pymethods]
impl Budget {
    /// A fresh budget of `total` ε (finite, > 0) and `delta` δ (in [0, 1); 0, the default, makes a pure-ε
    /// budget, which refuses every charge with δ > 0), belonging to this process. `allow_fork` lets copies
    /// in forked children charge; `allow_simulation` accepts reproducible generators and keys (see the
    /// class).
    #[new]
    #[pyo3(signature = (total, *, delta = 0.0, allow_fork = false, allow_simulation = false))]
    fn new(total: f64, delta: f64, allow_fork: bool, allow_simulation: bool) -> PyResult<Self> {
        Ok(Budget {
            inner: Mutex::new(check(PrivacyBudget::new_approx(total, delta))?),
            creator: fork::current()?,
            allow_fork,
            allow_simulation,
        })
    }

    /// True when copies in forked children may charge.
    #[getter]
    fn allow_fork(&self) -> bool {
        self.allow_fork
    }

    /// True when reproducible generators and keys may serve releases charged to this budget.
    #[getter]
    fn allow_simulation(&self) -> bool {
        self.allow_simulation
    }

    /// Raises `InvalidGeneratorError` if a reproducible stream (`reproducible=True`) may not serve a release
    /// charged to this budget (used by `dpmo.distributed` and `dpmo.spark`; nothing is charged).
    fn _check_release(&self, reproducible: bool) -> PyResult<()> {
        Ok(self.check_stream(reproducible)?)
    }

    /// The total ε.
    #[getter]
    fn total(&self) -> f64 {
        self.lock().total()
    }

    /// The ε spent so far (an upper bound of the exact sum of the charges).
    #[getter]
    fn spent(&self) -> f64 {
        self.lock().spent()
    }

    /// The ε still available (rounded down, never negative).
    #[getter]
    fn remaining(&self) -> f64 {
        self.lock().remaining()
    }

    /// The total δ (0 for a pure-ε budget).
    #[getter]
    fn delta_total(&self) -> f64 {
        self.lock().delta_total()
    }

    /// The δ spent so far (an upper bound of the exact sum of the charges).
    #[getter]
    fn delta_spent(&self) -> f64 {
        self.lock().delta_spent()
    }

    /// The δ still available (rounded down, never negative).
    #[getter]
    fn remaining_delta(&self) -> f64 {
        self.lock().remaining_delta()
    }

    /// Records a mechanism run outside dpmo with (`epsilon`, `delta`) (sequential composition: the ε's add
    /// up and the δ's add up). Raises `InvalidEpsilonError`, `InvalidArgumentError` (δ outside [0, 1), or
    /// in a forked child) or `BudgetExhaustedError` (a pure-ε budget refuses δ > 0); nothing changed then.
    #[pyo3(signature = (epsilon, delta = 0.0))]
    fn charge(&self, epsilon: f64, delta: f64) -> PyResult<()> {
        self.check_process()?;
        check(self.lock().charge_approx(epsilon, delta))
    }

    fn __repr__(&self) -> String {
        let b = *self.lock();
        let mut flags = String::new();
        if self.allow_fork {
            flags.push_str(", allow_fork=True");
        }
        if self.allow_simulation {
            flags.push_str(", allow_simulation=True");
        }
        let delta = if b.delta_total() > 0.0 {
            format!(
                ", delta={:?}, delta_spent={:?}, remaining_delta={:?}",
                b.delta_total(),
                b.delta_spent(),
                b.remaining_delta()
            )
        } else {
            String::new()
        };
        format!(
            "Budget(total={}, spent={}, remaining={}{delta}{flags})",
            b.total(),
            b.spent(),
            b.remaining()
        )
    }

    fn __copy__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a dpmo.Budget cannot be copied: a copy would spend the same epsilon twice",
        ))
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyResult<()> {
        self.__copy__()
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a dpmo.Budget cannot be pickled: a copy would spend the same epsilon twice",
        ))
    }
}
