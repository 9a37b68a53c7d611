//! Per-candidate local sensitivity δ(x, t, r): how it is supplied, and the clamping and saturation that keep
//! it admissible and bounded.
//!
//! A function δ(x, t, r) is *admissible* (Local Dampening paper, Def. 3.3) when
//! (1) δ(x, 0, r) ≥ LS(x, 0, r) and (2) δ(x, t+1, r) ≥ δ(y, t, r) for all neighbours x, y.
//! The library never trusts a supplied δ to be bounded: every value is replaced by min(δ, Δ)
//! (Lemma 3.5, which keeps admissibility), and from a caller-chosen distance T_max ≥ 1 on, δ := Δ.
//! Saturation keeps admissibility because condition 2 then reads δ(x, t+1) = Δ ≥ δ(y, t) for t+1 ≥ T_max,
//! which holds since every value is clamped to Δ, and nothing changes for t + 1 < T_max.
//! It bounds every loop over t by T_max and makes the shifted mechanism a finite sum.
//!
//! Admissibility of the *values* is the caller's responsibility (or that of the functions in this module
//! tree that compute them); the library can only enforce the bounds.

pub mod compose;
pub mod degree;
pub mod ebc;
pub mod egodensity;
pub mod gini;
pub mod info_gain;
pub mod rates;

use crate::Error;

pub mod weighted_sum;

/// The largest saturation distance used: a larger T_max is treated as this one (2³² − 1 on 64-bit
/// targets). Saturating earlier keeps an admissible δ admissible, and it keeps dampened and shifted scores,
/// which grow like T, precise to about 1e-6 in u/Δ (a T near 2⁶⁴ would round every u/Δ away).
pub const MAX_SATURATION: usize = u32::MAX as usize;

/// The largest saturation distance of a δ that has no closed form in t and must be walked distance by
/// distance: a δ given by a function ([`DeltaSource::Function`], the C ABI's callbacks) is saturated at
/// min(T_max, 2048), so a selection calls it at most 2048 times per candidate and objective; PrivAgg
/// likewise saturates δ_agg there when an objective's δ is shared ([`DeltaSource::Shared`], see
/// [`crate::multi`]). Saturating at a public distance keeps δ admissible (see the module documentation).
/// At n = 1000 candidates and m = 16 objectives that is at most 3.3·10⁷ calls (about 0.5 s for PrivAgg
/// with trivial callbacks on a 2-core Xeon).
pub const MAX_WALKED_DISTANCE: usize = 2048;

/// How the raw values δ(x, t, r) are supplied, before clamping and saturation.
#[derive(Clone, Copy)]
pub enum DeltaSource<'a> {
    /// δ(x, t, r) = `values[r]` for every t < T_max (one value per candidate, constant in t).
    PerCandidate(&'a [f64]),
    /// A row-major n × `columns` table: δ(x, t, r) = `values[r * columns + t]` for t < `columns`, and Δ
    /// for t ≥ `columns`.
    Table {
        /// The n × `columns` values, row r holding δ(x, 0..columns, r).
        values: &'a [f64],
        /// The number T of distances tabulated per candidate.
        columns: usize,
    },
    /// The same δ(x, t) for every candidate: `values[t]` for t < `values.len()`, Δ beyond. This is the form
    /// of LS(x, t) and of the "δ replacement" of §4.2 ([`max_over_candidates`]).
    Shared(&'a [f64]),
    /// A function of (r, t). It must be deterministic; a NaN, negative or infinite value counts as Δ, as in
    /// every source (the public rule for private values: no status ever depends on them).
    Function(&'a dyn DeltaFunction),
}

/// δ(x, t, r) computed on demand. Implemented by every `Fn(usize, usize) -> f64` (arguments r, t) and by
/// types that wrap a foreign callback. It must be deterministic.
pub trait DeltaFunction {
    /// The raw δ(x, t, r) for candidate r at distance t (before clamping and saturation).
    fn delta(&self, r: usize, t: usize) -> f64;

    /// Some(c) when δ(x, t, r) = c (already clamped) for every t below the saturation distance, which lets
    /// the stages use closed forms; None (the default) when unknown.
    fn constant(&self, _r: usize) -> Option<f64> {
        None
    }
}

impl<F: Fn(usize, usize) -> f64> DeltaFunction for F {
    fn delta(&self, r: usize, t: usize) -> f64 {
        self(r, t)
    }
}

/// A validated local sensitivity for n candidates: the source, the global sensitivity Δ it is clamped to,
/// and the distance T_max from which it is saturated to Δ.
#[derive(Clone, Copy)]
pub struct LocalSensitivity<'a> {
    source: DeltaSource<'a>,
    global: f64,
    t_max: usize,
    n: usize,
}

/// A raw δ value made valid by the public rule for private data: clamped to [0, Δ], and Δ itself when it
/// is NaN, negative or infinite (the safe value: it never makes δ smaller than it should be). −0 is 0.
#[inline]
pub(crate) fn clean_value(d: f64, global: f64) -> f64 {
    if d >= 0.0 && d.is_finite() {
        d.min(global) + 0.0
    } else {
        global
    }
}

impl<'a> LocalSensitivity<'a> {
    /// Validates a sensitivity input for `n` candidates.
    ///
    /// `t_max` above [`MAX_SATURATION`] is treated as [`MAX_SATURATION`], and for a function source above
    /// [`MAX_WALKED_DISTANCE`] as [`MAX_WALKED_DISTANCE`] (a function has no closed form in t).
    ///
    /// The values are private data and are never refused: each is clamped to [0, Δ], and a NaN, negative or
    /// infinite value counts as Δ (the public rule; [`LocalSensitivity::delta`]).
    ///
    /// Errors: n = 0 → [`Error::EmptyInput`]; Δ not finite or ≤ 0 → [`Error::InvalidSensitivity`]; `t_max` =
    /// 0 → [`Error::InvalidArgument`]; a slice of the wrong length → [`Error::LengthMismatch`].
    pub fn new(source: DeltaSource<'a>, global: f64, t_max: usize, n: usize) -> Result<Self, Error> {
        if !(global.is_finite() && global > 0.0) {
            return Err(Error::InvalidSensitivity);
        }
        if t_max == 0 {
            return Err(Error::InvalidArgument);
        }
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        let t_max = match source {
            DeltaSource::Function(_) => t_max.min(MAX_WALKED_DISTANCE),
            _ => t_max.min(MAX_SATURATION),
        };
        match source {
            DeltaSource::PerCandidate(v) => {
                if v.len() != n {
                    return Err(Error::LengthMismatch);
                }
            }
            DeltaSource::Table { values, columns } => {
                if columns.checked_mul(n) != Some(values.len()) {
                    return Err(Error::LengthMismatch);
                }
            }
            DeltaSource::Shared(_) | DeltaSource::Function(_) => {}
        }
        Ok(LocalSensitivity {
            source,
            global,
            t_max,
            n,
        })
    }

    /// The global sensitivity Δ every value is clamped to.
    pub fn global(&self) -> f64 {
        self.global
    }

    /// The number of candidates this sensitivity was validated for.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when validated for zero candidates.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The saturation distance T_max the caller chose (see [`saturation`](Self::saturation) for the effective one).
    pub fn t_max(&self) -> usize {
        self.t_max
    }

    /// The distance T from which δ(x, t, r) = Δ for every r: `t_max`, or less when a table or shared
    /// slice is shorter.
    pub fn saturation(&self) -> usize {
        match self.source {
            DeltaSource::Table { columns, .. } => columns.min(self.t_max),
            DeltaSource::Shared(v) => v.len().min(self.t_max),
            DeltaSource::PerCandidate(_) | DeltaSource::Function(_) => self.t_max,
        }
    }

    /// Some(c) when δ(x, t, r) = c for every t below the saturation distance (per-candidate values), which
    /// lets the dampening stage use a closed form instead of walking T breakpoints.
    pub fn constant_below_saturation(&self, r: usize) -> Option<f64> {
        match self.source {
            DeltaSource::PerCandidate(v) => v.get(r).map(|&d| clean_value(d, self.global)),
            DeltaSource::Function(f) if r < self.n => f.constant(r).map(|d| clean_value(d, self.global)),
            _ => None,
        }
    }

    /// Candidate r's raw values below the saturation distance, for the isochronous dampening stage (which
    /// clamps and rounds them itself, by its public rule for invalid values).
    pub(crate) fn iso_row(&self, r: usize) -> crate::dampen::iso::Row<'a> {
        use crate::dampen::iso::Row;
        let t = self.saturation();
        match self.source {
            DeltaSource::PerCandidate(v) => Row::Constant(v[r]),
            DeltaSource::Table { values, columns } => Row::Values(&values[r * columns..r * columns + t]),
            DeltaSource::Shared(v) => Row::Values(&v[..t]),
            DeltaSource::Function(f) => match f.constant(r) {
                Some(c) => Row::Constant(c),
                None => Row::Function(f, r),
            },
        }
    }

    /// True when δ(x, t, r) does not depend on r (a [`DeltaSource::Shared`] slice): the dampening stage then
    /// walks the breakpoints once for many candidates at a time.
    pub fn is_shared(&self) -> bool {
        matches!(self.source, DeltaSource::Shared(_))
    }

    /// True when values come from a caller function (which may be slow, or fail in a binding's own way).
    pub fn is_fallible(&self) -> bool {
        matches!(self.source, DeltaSource::Function(_))
    }

    /// δ(x, t, r) after clamping to [0, Δ] and saturation at T_max; a NaN, negative or infinite value counts
    /// as Δ (the public rule for private values, `clean_value`).
    ///
    /// Errors: r ≥ n → [`Error::InvalidArgument`].
    #[inline]
    pub fn delta(&self, r: usize, t: usize) -> Result<f64, Error> {
        if r >= self.n {
            return Err(Error::InvalidArgument);
        }
        if t >= self.saturation() {
            return Ok(self.global);
        }
        let raw = match self.source {
            DeltaSource::PerCandidate(v) => v[r],
            DeltaSource::Table { values, columns } => values[r * columns + t],
            DeltaSource::Shared(v) => v[t],
            DeltaSource::Function(f) => f.delta(r, t),
        };
        Ok(clean_value(raw, self.global))
    }

    /// Σ_{j<T} (1 − δ(x, j, r)/Δ) with T = [`saturation`](Self::saturation): the offset of the shifted
    /// dampening closed form (see [`crate::dampen::dampen_shifted`]). O(1) for per-candidate values,
    /// O(T) otherwise.
    pub fn shift_offset(&self, r: usize) -> Result<f64, Error> {
        if r >= self.n {
            return Err(Error::InvalidArgument);
        }
        let t = self.saturation();
        let g = self.global;
        // Slice sources are summed directly: this runs once per candidate in the hot path of the shifted
        // mechanism, and `delta` would re-check bounds at every step.
        if let Some(c) = self.constant_below_saturation(r) {
            return Ok(t as f64 * (1.0 - c / g));
        }
        let row = match self.source {
            DeltaSource::PerCandidate(v) => return Ok(t as f64 * (1.0 - clean_value(v[r], g) / g)),
            DeltaSource::Table { values, columns } => Some(&values[r * columns..r * columns + t]),
            DeltaSource::Shared(v) => Some(&v[..t]),
            DeltaSource::Function(_) => None,
        };
        // Neumaier's compensated sum: T can reach 2³², where a plain running sum of terms in [0, 1] drifts
        // by percents; the compensation keeps the error to a few ulps of the result.
        let mut sum = Neumaier::default();
        if let Some(row) = row {
            for &d in row {
                sum.add(1.0 - clean_value(d, g) / g);
            }
            return Ok(sum.value());
        }
        for j in 0..t {
            sum.add(1.0 - self.delta(r, j)? / self.global);
        }
        Ok(sum.value())
    }
}

/// Neumaier's variant of Kahan summation: the running sum and the rounding errors it dropped.
#[derive(Default)]
struct Neumaier {
    sum: f64,
    lost: f64,
}

impl Neumaier {
    fn add(&mut self, x: f64) {
        let (s, e) = crate::float::two_sum(self.sum, x);
        self.sum = s;
        self.lost += e;
    }

    fn value(&self) -> f64 {
        self.sum + self.lost
    }
}

/// The sensitivity of a subset of the candidates: candidate j of the subset is candidate `map[j]` of
/// `inner`. Used between the rounds of top-k without replacement, where the remaining candidates are
/// compacted; an index outside `inner` reads as NaN, which [`LocalSensitivity::delta`] takes as Δ.
pub struct Subset<'a> {
    inner: LocalSensitivity<'a>,
    map: &'a [usize],
}

impl<'a> Subset<'a> {
    /// A view of `inner` through `map`.
    pub fn new(inner: LocalSensitivity<'a>, map: &'a [usize]) -> Self {
        Subset { inner, map }
    }

    /// The validated sensitivity of the subset (same Δ and saturation as `inner`, within
    /// [`MAX_WALKED_DISTANCE`]: it is a function source).
    pub fn sensitivity(&'a self) -> Result<LocalSensitivity<'a>, Error> {
        LocalSensitivity::new(
            DeltaSource::Function(self),
            self.inner.global,
            self.inner.saturation().max(1),
            self.map.len(),
        )
    }
}

impl DeltaFunction for Subset<'_> {
    fn delta(&self, r: usize, t: usize) -> f64 {
        match self.map.get(r) {
            Some(&o) => self.inner.delta(o, t).unwrap_or(f64::NAN),
            None => f64::NAN,
        }
    }

    fn constant(&self, r: usize) -> Option<f64> {
        self.map.get(r).and_then(|&o| self.inner.constant_below_saturation(o))
    }
}

/// The "δ replacement" of the Local Dampening paper (§4.2): δ̂(x, t) = max_r δ(x, t, r), the same for every
/// candidate, which removes the inversion problem (Example 4.1) at some cost in accuracy. Admissible by
/// Lemma 4.5 (a maximum of admissible functions is admissible).
///
/// Writes δ̂(x, t) for t < T into `out[..T]`, T = `delta.saturation()`, and returns the shared sensitivity
/// reading from `out`. Cost O(n · T). Errors: `out` shorter than T → [`Error::ScratchTooSmall`].
pub fn max_over_candidates<'o>(
    delta: &LocalSensitivity<'_>,
    out: &'o mut [f64],
) -> Result<LocalSensitivity<'o>, Error> {
    let t_len = delta.saturation();
    if out.len() < t_len {
        return Err(Error::ScratchTooSmall);
    }
    if delta.is_fallible() {
        // Validate every value first so that an error leaves `out` untouched.
        for t in 0..t_len {
            for r in 0..delta.len() {
                delta.delta(r, t)?;
            }
        }
    }
    for (t, slot) in out[..t_len].iter_mut().enumerate() {
        let mut m: f64 = 0.0;
        for r in 0..delta.len() {
            m = m.max(delta.delta(r, t)?);
        }
        *slot = m;
    }
    LocalSensitivity::new(DeltaSource::Shared(&out[..t_len]), delta.global, delta.t_max, delta.n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_and_saturates() {
        let table = [0.5, 3.0, 9.0, 1.0, 1.0, 1.0];
        let s = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns: 3,
            },
            2.0,
            10,
            2,
        )
        .unwrap();
        assert_eq!(s.saturation(), 3);
        assert_eq!(s.delta(0, 0).unwrap(), 0.5);
        assert_eq!(s.delta(0, 1).unwrap(), 2.0); // clamped
        assert_eq!(s.delta(0, 2).unwrap(), 2.0);
        assert_eq!(s.delta(0, 3).unwrap(), 2.0); // beyond the table
        assert_eq!(s.delta(1, 1).unwrap(), 1.0);
        let s = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns: 3,
            },
            2.0,
            1,
            2,
        )
        .unwrap();
        assert_eq!(s.delta(1, 1).unwrap(), 2.0); // saturated from T_max = 1
        assert_eq!(s.delta(2, 0), Err(Error::InvalidArgument));
    }

    #[test]
    fn rejects_bad_arguments_and_cleans_bad_values() {
        // Values are private data: never refused, each invalid one counts as Δ.
        let v = [1.0, f64::NAN, -1.0, f64::INFINITY, -0.0, 0.25];
        let s = LocalSensitivity::new(DeltaSource::PerCandidate(&v), 0.5, 4, 6).unwrap();
        let got: [f64; 6] = core::array::from_fn(|r| s.delta(r, 0).unwrap());
        assert_eq!(got, [0.5, 0.5, 0.5, 0.5, 0.0, 0.25]);
        assert!(got[4].is_sign_positive());
        assert_eq!(s.constant_below_saturation(1), Some(0.5));
        assert_eq!(s.constant_below_saturation(2), Some(0.5));
        assert_eq!(
            LocalSensitivity::new(DeltaSource::PerCandidate(&[1.0]), 1.0, 4, 2).err(),
            Some(Error::LengthMismatch)
        );
        for g in [0.0, -1.0, f64::INFINITY, f64::NAN] {
            assert_eq!(
                LocalSensitivity::new(DeltaSource::Shared(&[]), g, 4, 1).err(),
                Some(Error::InvalidSensitivity)
            );
        }
        assert_eq!(
            LocalSensitivity::new(DeltaSource::Shared(&[]), 1.0, 0, 1).err(),
            Some(Error::InvalidArgument)
        );
        let f = |_r: usize, t: usize| if t == 2 { f64::INFINITY } else { 0.5 };
        let s = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, 5, 3).unwrap();
        assert_eq!(s.delta(0, 1), Ok(0.5));
        assert_eq!(s.delta(0, 2), Ok(1.0));
        let g = |_r: usize, _t: usize| -0.0;
        let s = LocalSensitivity::new(DeltaSource::Function(&g), 1.0, 5, 3).unwrap();
        assert!(s.delta(0, 0).unwrap().is_sign_positive());
    }

    #[test]
    fn max_over_candidates_takes_columnwise_maxima() {
        let table = [0.5, 3.0, 1.0, 0.25];
        let s = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns: 2,
            },
            2.0,
            8,
            2,
        )
        .unwrap();
        let mut out = [0.0; 2];
        let m = max_over_candidates(&s, &mut out).unwrap();
        assert_eq!(m.delta(0, 0).unwrap(), 1.0);
        assert_eq!(m.delta(1, 1).unwrap(), 2.0);
        assert_eq!(m.delta(1, 2).unwrap(), 2.0);
        let mut short = [0.0; 1];
        assert_eq!(max_over_candidates(&s, &mut short).err(), Some(Error::ScratchTooSmall));
    }

    #[test]
    fn shift_offset_matches_definition() {
        let table = [0.5, 1.0, 2.0, 0.0];
        let s = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns: 2,
            },
            2.0,
            8,
            2,
        )
        .unwrap();
        assert_eq!(s.shift_offset(0).unwrap(), (1.0 - 0.25) + (1.0 - 0.5));
        assert_eq!(s.shift_offset(1).unwrap(), 0.0 + 1.0);
        let c = LocalSensitivity::new(DeltaSource::PerCandidate(&[0.5]), 2.0, 4, 1).unwrap();
        assert_eq!(c.shift_offset(0).unwrap(), 4.0 * 0.75);
    }
}
