//! PrivAgg's scores in constant time: the exact stage's integer scores (the weighted sum on its grid,
//! dampened when local; [`super::privagg`]) computed with branch-free conversions, so that the
//! isochronous selectors can follow ([`crate::select::Arithmetic::Isochronous`]).
//!
//! * U(r) = Σ_i ⌊w_i u_i(r) / h⌋, each term clamped to ±2⁵⁶N, from the 106-bit product of mantissas
//!   shifted by masks ([`ct::floor_product_on_grid`]); a NaN utility counts as −f64::MAX and ±∞ as
//!   ±f64::MAX (the public rule), so a NaN is the lowest value of its objective.
//! * δ′(t, r) = min(Σ_i ⌈|w_i| δ_i(t, r) / h⌉, N) with every δ_i first clamped to [0, Δ_i] — an invalid
//!   value (NaN, negative, infinite) counts as Δ_i —, and Δ_i from δ_i's own saturation distance on.
//! * then [`IsoDampening`] on those integers, which scans a row of δ′ whole (at most
//!   [`MAX_ISOCHRONOUS_DISTANCES`] distances) unless every objective's δ is one constant up to the
//!   saturation distance.
//!
//! The tests check the scores equal to the exact stage's, bit for bit.

use super::privagg::AggSensitivity;
use crate::dampen::iso::{IsoDampening, Row, MAX_ISOCHRONOUS_DISTANCES};
use crate::dampen::Dampening;
use crate::exact::Grid;
use crate::select::ct;
use crate::select::exact::store_int;
use crate::sensitivity::weighted_sum::WeightedGrid;
use crate::sensitivity::LocalSensitivity;
use crate::{Error, MAX_OBJECTIVES};

/// δ clamped to [0, Δ] by bits (an invalid value — NaN, negative, infinite — gives Δ; −0 gives 0).
#[inline(always)]
fn clean_delta(raw: f64, global: f64) -> f64 {
    let b = raw.to_bits();
    let b = b & !(ct::eq(b, 1 << 63) & (1 << 63));
    let g = global.to_bits();
    f64::from_bits(ct::pick(ct::lt(g, b), g, b))
}

/// The integer scores of isochronous PrivAgg into `words` (2n words); returns their sensitivity in their
/// units. `saturation` is the exact stage's T for local sensitivities (ignored for global ones).
pub(crate) fn iso_scores(
    utilities: &[f64],
    weights: &[f64],
    sensitivity: &AggSensitivity<'_>,
    grid: WeightedGrid,
    saturation: usize,
    words: &mut [u64],
) -> Result<u64, Error> {
    let m = weights.len();
    let n = utilities.len() / m;
    let g: Grid = grid.grid();
    let (j, units) = (g.exponent(), g.units());
    let term_limit = u128::from(units) << 56;
    let utility = |r: usize| -> i128 {
        utilities[r * m..(r + 1) * m]
            .iter()
            .zip(weights)
            .map(|(&u, &w)| ct::floor_product_on_grid(w, u, j, term_limit))
            .sum()
    };
    let (deltas, dampening) = match *sensitivity {
        AggSensitivity::Global(_) => {
            for r in 0..n {
                store_int(words, r, utility(r));
            }
            return Ok(units);
        }
        AggSensitivity::Local { deltas, dampening, .. } => (deltas, dampening),
    };
    let t = saturation;
    // Public shape: constant rows when every δ_i is a per-candidate constant up to T.
    let constant_rows = deltas
        .iter()
        .all(|d| d.saturation() >= t && (0..n).all(|r| matches!(d.iso_row(r), Row::Constant(_))));
    if !constant_rows && t > MAX_ISOCHRONOUS_DISTANCES {
        return Err(Error::Unsupported);
    }
    let mut abs = [0.0; MAX_OBJECTIVES];
    for (a, w) in abs.iter_mut().zip(weights) {
        *a = w.abs();
    }
    let damp = IsoDampening::new(g, t);
    let sum = |delta_i: &dyn Fn(usize, &LocalSensitivity<'_>) -> f64| -> u64 {
        let mut s = 0u64;
        for (i, d) in deltas.iter().enumerate() {
            s = s.wrapping_add(ct::ceil_product_on_grid(
                abs[i],
                clean_delta(delta_i(i, d), d.global()),
                j,
                units,
            ));
        }
        ct::min(s, units)
    };
    for r in 0..n {
        let rows: [Option<Row<'_>>; MAX_OBJECTIVES] = core::array::from_fn(|i| deltas.get(i).map(|d| d.iso_row(r)));
        let raw = |i: usize, d: &LocalSensitivity<'_>, at: usize| -> f64 {
            match rows[i] {
                Some(row) if at < d.saturation() => row.raw(at),
                _ => d.global(),
            }
        };
        let u = utility(r);
        let s = if constant_rows {
            let c = sum(&|i, d| raw(i, d, 0));
            match dampening {
                Dampening::Plain => damp.plain_int(u, Some(c), |_| c),
                Dampening::Shifted => damp.shifted_int(u, Some(c), |_| c),
            }
        } else {
            let at = |t: usize| sum(&|i, d| raw(i, d, t));
            match dampening {
                Dampening::Plain => damp.plain_int(u, None, at),
                Dampening::Shifted => damp.shifted_int(u, None, at),
            }
        };
        store_int(words, r, s);
    }
    Ok(match dampening {
        Dampening::Plain => crate::dampen::exact::PLAIN_UNITS,
        Dampening::Shifted => units,
    })
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::multi::privagg::privagg_exact_scores;
    use crate::select::exact::load_int;
    use crate::sensitivity::DeltaSource;
    use std::vec;
    use std::vec::Vec;

    fn iso(utilities: &[f64], weights: &[f64], s: &AggSensitivity<'_>, saturation: usize) -> (Vec<i128>, u64) {
        let n = utilities.len() / weights.len();
        let globals: Vec<f64> = match *s {
            AggSensitivity::Global(g) => g.to_vec(),
            AggSensitivity::Local { deltas, .. } => deltas.iter().map(|d| d.global()).collect(),
        };
        let grid = WeightedGrid::new(weights, &globals).unwrap();
        let mut words = vec![0u64; 2 * n];
        let units = iso_scores(utilities, weights, s, grid, saturation, &mut words).unwrap();
        ((0..n).map(|r| load_int(&words, r)).collect(), units)
    }

    #[test]
    fn scores_equal_the_exact_stage() {
        let n = 7;
        let u: Vec<f64> = (0..2 * n).map(|i| ((i * 37) % 23) as f64 * 0.75 - 6.0).collect();
        let per0 = [0.5, 0.0, 1.0, 0.25, 0.75, 1.0, 0.1];
        let per1 = [2.0, 1.0, 0.5, 3.0, 0.0, 1.5, 2.5];
        let table: Vec<f64> = (0..3 * n).map(|i| ((i * 11) % 7) as f64 * 0.4).collect();
        for weights in [[1.0, 0.5], [-0.75, 2.0], [3.0, 0.0]] {
            let globals = [1.0, 3.0];
            let g = AggSensitivity::Global(&globals);
            let mut want = vec![0i128; n];
            let units = privagg_exact_scores(&u, &weights, g, &mut want).unwrap();
            assert_eq!(
                iso(&u, &weights, &g, 0),
                (want.clone(), units),
                "global, w = {weights:?}"
            );
            let d_per = [
                LocalSensitivity::new(DeltaSource::PerCandidate(&per0), 1.0, 6, n).unwrap(),
                LocalSensitivity::new(DeltaSource::PerCandidate(&per1), 3.0, 6, n).unwrap(),
            ];
            let d_mixed = [
                LocalSensitivity::new(DeltaSource::PerCandidate(&per0), 1.0, 5, n).unwrap(),
                LocalSensitivity::new(
                    DeltaSource::Table {
                        values: &table,
                        columns: 3,
                    },
                    3.0,
                    8,
                    n,
                )
                .unwrap(),
            ];
            for deltas in [&d_per, &d_mixed] {
                for dampening in [Dampening::Plain, Dampening::Shifted] {
                    for max_distance in [0, 2] {
                        let s = AggSensitivity::Local {
                            deltas,
                            max_distance,
                            dampening,
                        };
                        let units = privagg_exact_scores(&u, &weights, s, &mut want).unwrap();
                        let t = deltas.iter().map(|d| d.saturation()).max().unwrap();
                        let t = if max_distance > 0 { t.min(max_distance) } else { t };
                        assert_eq!(
                            iso(&u, &weights, &s, t),
                            (want.clone(), units),
                            "w = {weights:?}, {dampening:?}, max distance {max_distance}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn invalid_values_follow_the_public_rule() {
        assert_eq!(clean_delta(f64::NAN, 2.0), 2.0);
        assert_eq!(clean_delta(-1.0, 2.0), 2.0);
        assert_eq!(clean_delta(f64::INFINITY, 2.0), 2.0);
        assert_eq!(clean_delta(5.0, 2.0), 2.0);
        assert_eq!(clean_delta(-0.0, 2.0).to_bits(), 0);
        assert_eq!(clean_delta(0.5, 2.0), 0.5);
        // A NaN utility is the lowest value of its objective: with a positive weight, the lowest term.
        let globals = [1.0];
        let g = AggSensitivity::Global(&globals);
        let (s, _) = iso(&[1.0, f64::NAN, -5.0], &[2.0], &g, 0);
        assert!(s[1] < s[2] && s[2] < s[0]);
        let (s, _) = iso(&[1.0, f64::NAN, -5.0], &[-2.0], &g, 0);
        assert!(
            s[1] > s[2],
            "a negative weight makes the lowest utility the highest term"
        );
    }
}
