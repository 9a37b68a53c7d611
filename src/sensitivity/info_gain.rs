//! Information gain of a split attribute (Local Dampening paper, §5.2, eq. (2)), its element local
//! sensitivity at distance 0 (Lemma 5.5) and at distance t (Algorithm 3 "Candidates", Lemma 5.6),
//! and its global sensitivity.
//!
//! IG(T, A) = −Σ_j Σ_c τ_{j,c} · log₂(τ_{j,c} / τ_j) (0 · log 0 = 0), over the contingency counts
//! τ_{j,c} of attribute value j and class c, τ_j = Σ_c τ_{j,c}. Neighbour relation: datasets differing by
//! one added or removed record (which changes one cell τ_{j,c} and its row total τ_j by one).
//!
//! **Candidates in closed form.** Algorithm 3 grows the candidate set of (τ_j, τ_{j,c}) by the moves
//! (a, b) → (a − 1, b − 1) (remove a record of class c) and (a, b) → (a + 1, b) (add a record of another
//! class); after t moves with k removals the pair is (a + t − 2k, b − k), so
//! Candidates(t) = {(a + t − 2k, b − k) : 0 ≤ k ≤ min(t, b)}. [`InfoGainSensitivity`] walks these sets
//! one distance at a time and keeps the running maximum of Lemma 5.6, so advancing t costs
//! O(values · classes · min(t, max count)) and never revisits earlier distances.
//!
//! **Deviation from the printed algorithm.** Algorithm 3 adds (a + 1, b) only "if a < τ". Read with τ the
//! dataset size, that guard drops real neighbours: for a dataset whose N records all have value j and a
//! class other than c, Candidates(1) is empty for (j, c), although adding one more such record yields
//! h = f(N + 1) > f(N), so δ(x, 1) < δ(y, 0) and condition 2 of admissibility fails (the brute-force test
//! catches this variant). We omit the guard; additions are always possible under add/remove neighbours.
//! Without it the candidate set contains, for every reachable pair, one that dominates it: h's addition
//! part f(a) − f(b) and removal part f(a − 1) − f(b − 1) (for b ≥ 1) both grow with a − b and, for fixed
//! a − b, shrink as b grows (f is increasing and concave), and the other two moves only hurt.

use crate::Error;

/// The largest number of attribute values a [`Contingency`] holds.
pub const MAX_ATTRIBUTE_VALUES: usize = 16;
/// The largest number of classes a [`Contingency`] holds.
pub const MAX_CLASSES: usize = 16;

/// The contingency counts τ_{j,c} of one attribute against the class attribute, in fixed-capacity storage
/// (at most [`MAX_ATTRIBUTE_VALUES`] × [`MAX_CLASSES`]). Counts are exact as `f64` below 2⁵³.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contingency {
    counts: [[u64; MAX_CLASSES]; MAX_ATTRIBUTE_VALUES],
    values: usize,
    classes: usize,
    total: u64,
}

impl Contingency {
    /// Builds the table from `counts` in row-major order (`counts[j · classes + c]` = τ_{j,c}).
    ///
    /// Errors: `values` or `classes` = 0 → [`Error::EmptyInput`]; above the capacity →
    /// [`Error::CapacityExceeded`]; `counts.len()` ≠ values · classes → [`Error::LengthMismatch`]; a total
    /// above 2⁵³ (not exact in `f64`) → [`Error::Overflow`].
    pub fn new(counts: &[u64], values: usize, classes: usize) -> Result<Self, Error> {
        if values == 0 || classes == 0 {
            return Err(Error::EmptyInput);
        }
        if values > MAX_ATTRIBUTE_VALUES || classes > MAX_CLASSES {
            return Err(Error::CapacityExceeded);
        }
        if counts.len() != values * classes {
            return Err(Error::LengthMismatch);
        }
        let mut t = Contingency {
            counts: [[0; MAX_CLASSES]; MAX_ATTRIBUTE_VALUES],
            values,
            classes,
            total: 0,
        };
        for (j, row) in counts.chunks_exact(classes).enumerate() {
            for (c, &x) in row.iter().enumerate() {
                t.counts[j][c] = x;
                t.total = t.total.checked_add(x).ok_or(Error::Overflow)?;
            }
        }
        if t.total > 1u64 << 53 {
            return Err(Error::Overflow);
        }
        Ok(t)
    }

    /// The number of attribute values.
    pub fn values(&self) -> usize {
        self.values
    }

    /// The number of classes.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The dataset size τ = Σ τ_{j,c}.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// τ_{j,c}, or 0 outside the table.
    pub fn count(&self, j: usize, c: usize) -> u64 {
        if j < self.values && c < self.classes {
            self.counts[j][c]
        } else {
            0
        }
    }

    /// τ_j = Σ_c τ_{j,c}, or 0 outside the table.
    pub fn value_total(&self, j: usize) -> u64 {
        if j < self.values {
            self.counts[j][..self.classes].iter().sum()
        } else {
            0
        }
    }
}

/// IG(T, A) = −τ · H_{C|A}(T) = Σ_j Σ_c τ_{j,c} log₂(τ_{j,c} / τ_j) ≤ 0 (Local Dampening paper, eq. (1); the
/// class entropy term, equal for all attributes, is dropped). Larger is better: 0 for a split that
/// separates the classes perfectly. Eq. (2) of the paper prints a leading minus sign that contradicts eq. (1)
/// (it would make the *worst* split the most useful); the sensitivities (Lemmas 5.5–5.6) bound |ΔIG| and are
/// the same either way. Neighbour relation: one record added or removed; Δ = [`info_gain_global_sensitivity`].
pub fn information_gain(table: &Contingency) -> f64 {
    let mut ig = 0.0;
    for j in 0..table.values {
        let tj = table.value_total(j) as f64;
        for c in 0..table.classes {
            let x = table.counts[j][c] as f64;
            if x > 0.0 {
                ig += x * libm::log2(x / tj);
            }
        }
    }
    ig
}

/// Δ = log₂(N + 1) + 1/ln 2: the global sensitivity of IG for datasets of at most N records (Local
/// Dampening paper, §5.2, after Friedman and Schuster). N must be a public bound. Neighbour relation: one
/// record added or removed.
pub fn info_gain_global_sensitivity(max_records: u64) -> f64 {
    libm::log2(max_records as f64 + 1.0) + core::f64::consts::LOG2_E
}

/// f(x) = x log₂((x + 1)/x) + log₂(x + 1), 0 for x ≤ 0: the IG change from adding a record to a cell of
/// count x (Lemma 5.5).
fn f(x: u64) -> f64 {
    if x == 0 {
        return 0.0;
    }
    let x = x as f64;
    x * libm::log1p(1.0 / x) * core::f64::consts::LOG2_E + libm::log2(x + 1.0)
}

/// g(x) = x log₂((x − 1)/x) − log₂(x − 1), 0 for x ≤ 1 (Lemma 5.5).
fn g(x: u64) -> f64 {
    if x <= 1 {
        return 0.0;
    }
    let x = x as f64;
    x * libm::log1p(-1.0 / x) * core::f64::consts::LOG2_E - libm::log2(x - 1.0)
}

/// h(a, b) = max(f(a) − f(b), g(b) − g(a)) (Lemma 5.5).
fn h(a: u64, b: u64) -> f64 {
    (f(a) - f(b)).max(g(b) - g(a))
}

/// LS^IG(T, 0, A) = max_{j, c} h(τ_j, τ_{j,c}): the element local sensitivity of IG at distance 0
/// (Local Dampening paper, Lemma 5.5). Neighbour relation: one record added or removed.
pub fn info_gain_local_sensitivity0(table: &Contingency) -> f64 {
    let mut m: f64 = 0.0;
    for j in 0..table.values {
        let a = table.value_total(j);
        for c in 0..table.classes {
            m = m.max(h(a, table.counts[j][c]));
        }
    }
    m
}

/// LS^IG(T, t, A) for t = 0, 1, 2, … computed incrementally (Local Dampening paper, Algorithm 3 and
/// Lemma 5.6, with the candidate sets in closed form and without the printed "a < τ" guard; see the
/// module documentation). LS(T, t, A) is the element local sensitivity at distance t, hence admissible
/// (Def. 3.3) for IG under add/remove-one-record neighbours. It is not clamped: clamp it to
/// [`info_gain_global_sensitivity`] of a public size bound (e.g. through
/// [`LocalSensitivity`](crate::sensitivity::LocalSensitivity)).
///
/// As an iterator it yields LS(T, 0), LS(T, 1), … forever (non-decreasing in t).
#[derive(Clone, Debug)]
pub struct InfoGainSensitivity {
    table: Contingency,
    row_totals: [u64; MAX_ATTRIBUTE_VALUES],
    next_t: u64,
    running: f64,
}

impl InfoGainSensitivity {
    /// Starts at distance 0 (the next value is LS(T, 0, A)).
    pub fn new(table: &Contingency) -> Self {
        let mut row_totals = [0; MAX_ATTRIBUTE_VALUES];
        for (j, slot) in row_totals.iter_mut().enumerate().take(table.values) {
            *slot = table.value_total(j);
        }
        InfoGainSensitivity {
            table: table.clone(),
            row_totals,
            next_t: 0,
            running: 0.0,
        }
    }

    /// The distance whose value [`advance`](Self::advance) returns next.
    pub fn next_distance(&self) -> u64 {
        self.next_t
    }

    /// Returns LS(T, t, A) for the next distance t and moves on to t + 1. Cost
    /// O(values · classes · min(t, max count)): only Candidates(t) is evaluated; earlier distances enter
    /// through the running maximum (Lemma 5.6, cached form).
    pub fn advance(&mut self) -> f64 {
        let t = self.next_t;
        let mut m = self.running;
        for j in 0..self.table.values {
            let a = self.row_totals[j];
            for c in 0..self.table.classes {
                let b = self.table.counts[j][c];
                for k in 0..=t.min(b) {
                    // (a + t − 2k, b − k): k ≤ b ≤ a keeps a + t − 2k ≥ 0.
                    let ak = a.saturating_add(t - k) - k;
                    m = m.max(h(ak, b - k));
                }
            }
        }
        self.running = m;
        self.next_t = t.saturating_add(1);
        m
    }

    /// Writes LS(T, t, A) for t = 0..`out.len()` into `out` (one candidate's row of a
    /// [`DeltaSource::Table`](crate::sensitivity::DeltaSource::Table)), starting from distance 0.
    pub fn fill(table: &Contingency, out: &mut [f64]) {
        let mut s = InfoGainSensitivity::new(table);
        for slot in out.iter_mut() {
            *slot = s.advance();
        }
    }
}

impl Iterator for InfoGainSensitivity {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        Some(self.advance())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lemma_5_5_equals_direct_changes() {
        // One value j, class counts (3, 1): adding a class-0 record changes IG by f(4) − f(3).
        let t = Contingency::new(&[3, 1], 1, 2).unwrap();
        let y = Contingency::new(&[4, 1], 1, 2).unwrap();
        let d = (information_gain(&y) - information_gain(&t)).abs();
        assert!((d - (f(4) - f(3))).abs() < 1e-12);
        assert!(info_gain_local_sensitivity0(&t) >= d);
        let ls: [f64; 5] = {
            let mut o = [0.0; 5];
            InfoGainSensitivity::fill(&t, &mut o);
            o
        };
        assert_eq!(ls[0], info_gain_local_sensitivity0(&t));
        assert!(ls.windows(2).all(|w| w[1] >= w[0]));
        assert!(info_gain_global_sensitivity(4) >= ls[0]);
    }

    #[test]
    fn rejects_bad_tables() {
        assert_eq!(Contingency::new(&[], 0, 2).err(), Some(Error::EmptyInput));
        assert_eq!(Contingency::new(&[0; 17], 17, 1).err(), Some(Error::CapacityExceeded));
        assert_eq!(Contingency::new(&[0; 3], 2, 2).err(), Some(Error::LengthMismatch));
        assert_eq!(Contingency::new(&[u64::MAX, 1], 1, 2).err(), Some(Error::Overflow));
        assert_eq!(Contingency::new(&[1u64 << 54], 1, 1).err(), Some(Error::Overflow));
    }
}
