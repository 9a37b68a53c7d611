//! The exponential mechanism by levels: exact, with proposals close to the target, for scores where a few
//! candidates carry the mass.
//!
//! Rejection from uniform proposals ([`super::exact::exponential`]) needs about n / Z rounds, Z = Σ_r e^{−γ_r}:
//! a handful when many candidates are near the best, about n when one candidate dominates. This sampler
//! needs a handful in both cases, after two passes over the scores.
//!
//! **Levels.** Candidate r is on level ℓ_r = min(⌊γ_r⌋, F), F ≤ [`MAX_LEVEL`], found exactly by comparing
//! its score with cuts computed once per level ([`Cuts`]: G_r ≥ T_ℓ, T_ℓ the least gap with γ ≥ ℓ). Level ℓ
//! holds c_ℓ candidates. Then one round:
//! 1. picks level ℓ with probability ∝ c_ℓ y^ℓ with y = 3/8, by an exact integer draw below
//!    Σ_ℓ c_ℓ 3^ℓ 8^{F−ℓ} (a 256-bit integer: c_ℓ < 2⁶⁴ and F ≤ 60, so every weight is below 2²⁴⁴);
//! 2. picks a candidate r uniformly on that level (r is proposed with probability ∝ y^{ℓ_r});
//! 3. keeps r if ℓ_r coins Bernoulli(e^{−1}/y) and the coin Bernoulli(exp(−(γ_r − ℓ_r))) all succeed
//!    ([`bernoulli_inv_e_over_three_eighths`]: y = 3/8 ≥ e^{−1} is a partial sum of the series of e^{−1},
//!    which makes e^{−1}/y an exact alternating series of rationals).
//!
//! A round returns r with probability ∝ y^{ℓ_r} (e^{−1}/y)^{ℓ_r} e^{−(γ_r − ℓ_r)} = e^{−γ_r}: the exponential
//! mechanism exactly, whatever the levels are, as long as ℓ_r ≤ γ_r — the cuts only decide how good the
//! proposals are. A round succeeds with probability at least 0.981^ℓ · e^{−1} for the level ℓ it picked;
//! the mass sits below level ln n + O(1) unless more than e^ℓ candidates share a level, so in practice
//! a round succeeds with probability above 0.2 and two or three rounds suffice. Level F gathers every
//! candidate with γ ≥ F; with F = 60 its proposal weight is below n · (3/8)⁶⁰ < 10⁻⁶ for any n < 2⁶⁴.
//!
//! **Cost.** One pass for the extremes, one to count the levels (a multiplication, a conversion and about
//! two comparisons per candidate), per level one cut (a bisection of at most 64 gaps), and per round a scan
//! for the chosen candidate (two comparisons per candidate, stopping when found). No scratch: the levels are
//! recomputed rather than stored.

use super::exact::Cuts;
use crate::exact::bernoulli::{bernoulli_exp_minus, bernoulli_inv_e_over_three_eighths};
use crate::exact::wide::U256;
use crate::exact::{Bits, Scale};
use crate::sample;
use rand_core::Rng;

/// The highest level: level `MAX_LEVEL` gathers every candidate with γ ≥ `MAX_LEVEL`.
pub(crate) const MAX_LEVEL: usize = 60;

/// Candidates on levels: the cuts between levels, computed once, and the level of a score.
pub(crate) struct Levels<'c, C: Cuts, E> {
    cuts: &'c C,
    /// The top level F.
    pub(crate) top: usize,
    /// cut[ℓ] separates the levels below ℓ from ℓ and above: everyone is on level ≥ 0, no one on F + 1.
    cut: [C::Cut; MAX_LEVEL + 2],
    estimate: E,
}

/// The levels of scores seen through their [`Cuts`], at most `max_level` (≤ [`MAX_LEVEL`]; tests lower
/// it to give the gathered top level weight).
pub(crate) fn levels<'c, C: Cuts>(
    cuts: &'c C,
    scale: &Scale,
    max_level: usize,
) -> Levels<'c, C, impl Fn(C::Score) -> f64 + 'c> {
    let n = cuts.len();
    // Levels beyond 0.75 log₂ n + 20 ≥ log_{8/3} n + 20 would carry proposal weight below (3/8)²⁰.
    let enough = (usize::BITS - n.leading_zeros()) as usize * 3 / 4 + 20;
    let top = (scale.gamma(cuts.max_gap()).whole as usize)
        .min(max_level)
        .min(enough)
        .min(MAX_LEVEL);
    let mut cut = [cuts.no_one(); MAX_LEVEL + 2];
    cut[0] = cuts.everyone();
    for (l, c) in cut.iter_mut().enumerate().take(top + 1).skip(1) {
        // γ(max gap) ≥ top ≥ ℓ, so T_ℓ ≤ max gap: within the cuts' range.
        *c = cuts.cut(scale.smallest_gap_reaching(l as u64));
    }
    Levels {
        cuts,
        top,
        cut,
        estimate: cuts.estimate(scale.rate_estimate()),
    }
}

impl<C: Cuts, E: Fn(C::Score) -> f64> Levels<'_, C, E> {
    /// The level of a score: the ℓ ≤ F with the score below cut[ℓ] and not below cut[ℓ + 1], i.e.
    /// min(⌊γ⌋, F). The estimate only chooses where the search starts (clamped to [0, F]; NaN gives F, as
    /// does overflow); it is almost always right, which two comparisons confirm.
    #[inline]
    pub(crate) fn level(&self, s: C::Score) -> usize {
        let top = self.top;
        let e = ((self.estimate)(s).min(top as f64) as i32).max(0) as usize;
        let mut l = e;
        if !C::below(s, self.cut[e]) | C::below(s, self.cut[e + 1]) {
            while l < top && C::below(s, self.cut[l + 1]) {
                l += 1;
            }
            while l > 0 && !C::below(s, self.cut[l]) {
                l -= 1;
            }
        }
        l
    }

    /// How many candidates are on each level.
    pub(crate) fn count(&self) -> [u64; MAX_LEVEL + 1] {
        // Four tallies, so that consecutive candidates on one level do not wait on each other's increment.
        let mut tally = [[0u64; MAX_LEVEL + 1]; 4];
        for (i, s) in self.cuts.scores().enumerate() {
            tally[i % 4][self.level(s)] += 1;
        }
        let mut count = [0u64; MAX_LEVEL + 1];
        for t in &tally {
            for (c, x) in count.iter_mut().zip(t) {
                *c += x;
            }
        }
        count
    }

    /// The j-th candidate (from 0) on level ℓ: counted without branches in blocks, then found in its block.
    pub(crate) fn find(&self, l: usize, mut j: usize) -> Option<usize> {
        const BLOCK: usize = 256;
        let (upper, lower) = (self.cut[l], self.cut[l + 1]);
        let n = self.cuts.len();
        let mut start = 0;
        while start < n {
            let end = (start + BLOCK).min(n);
            let here = self.cuts.count_between(start..end, upper, lower);
            if j < here {
                return (start..end)
                    .filter(|&r| {
                        let s = self.cuts.score(r);
                        C::below(s, upper) & !C::below(s, lower)
                    })
                    .nth(j);
            }
            j -= here;
            start = end;
        }
        None
    }
}

/// The exponential mechanism by levels (see the module documentation), with at most `max_level` levels,
/// over scores seen through their [`Cuts`]. None only if a level weight overflowed 256 bits, which the
/// bounds above exclude; the caller then goes on with uniform proposals.
pub(crate) fn exponential<R: Rng + ?Sized>(
    bits: &mut Bits<'_, R>,
    cuts: &impl Cuts,
    scale: &Scale,
    max_level: usize,
) -> Option<usize> {
    let levels = levels(cuts, scale, max_level);
    let (top, count) = (levels.top, levels.count());
    // Cumulative weights Σ_{j ≤ ℓ} c_j 3^j 8^{top − j}.
    let mut cumulative = [U256::ZERO; MAX_LEVEL + 1];
    let mut total = U256::ZERO;
    let mut three = U256::from_u128(1);
    for l in 0..=top {
        let w = three.checked_mul_u64(count[l])?.checked_shl(3 * (top - l) as u32)?;
        total = total.checked_add(w)?;
        cumulative[l] = total;
        three = three.checked_mul_u64(3)?;
    }
    // The best candidate is on level 0, so total ≥ 8^top > 0.
    loop {
        let u = uniform_below(bits.rng(), total);
        let l = cumulative[..=top].iter().position(|&c| u < c)?;
        let j = sample::uniform_index(bits.rng(), count[l] as usize);
        let r = levels.find(l, j)?;
        if (0..l).all(|_| bernoulli_inv_e_over_three_eighths(bits)) {
            let mut g = scale.gamma(cuts.gap(r));
            g.whole = g.whole.saturating_sub(l as u64); // ℓ_r ≤ ⌊γ_r⌋ by the cuts
            if bernoulli_exp_minus(bits, &g) {
                return Some(r);
            }
        }
    }
}

/// A uniform integer in [0, bound), bound > 0: as many random bits as bound has, rejected when ≥ bound
/// (fewer than two tries on average).
fn uniform_below<R: Rng + ?Sized>(rng: &mut R, bound: U256) -> U256 {
    let len = bound.bit_len();
    loop {
        let mut w = [0u64; 4];
        for (i, x) in w.iter_mut().enumerate() {
            let have = len.saturating_sub(64 * i as u32).min(64);
            if have > 0 {
                let v = rng.next_u64();
                *x = if have == 64 { v } else { v & ((1u64 << have) - 1) };
            }
        }
        let u = U256(w);
        if u < bound {
            return u;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::exact::Grid;
    use crate::select::exact::{store_int, ExactScores, FloatScores, IntScores};
    use crate::test_fit::{assert_fits, chi_square_p_value, ALPHA};
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec::Vec;
    use std::{format, vec};

    /// A deterministic spread of values in [0, 1).
    fn unit(i: usize) -> f64 {
        ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Score sets (scores, Δ, ε): a clear best over a bell of scores, one dominant among thousands, γ
    /// exactly on level boundaries, ties, and large magnitudes with a fractional Δ.
    fn sets() -> Vec<(&'static str, Vec<f64>, f64, f64)> {
        let bell: Vec<f64> = (0..2000)
            .map(|i| 8.0 * ((0..4).map(|k| unit(4 * i + k)).sum::<f64>() - 2.0))
            .collect();
        let mut dominant = vec![-16.0; 3000];
        dominant[1717] = 0.0;
        for j in 0..20 {
            dominant[j * 149 + 3] = -4.0;
        }
        // ε = 2, Δ = 1: γ = gap exactly, so these sit on the boundaries between levels.
        let boundaries: Vec<f64> = (0..400).map(|i| -((i % 9) as f64)).collect();
        let ties: Vec<f64> = (0..300).map(|i| if i % 3 == 0 { 0.5 } else { -1.25 }).collect();
        let large: Vec<f64> = (0..500).map(|i| 1e15 - 0.3e14 * (unit(i) * 12.0).floor()).collect();
        // Δ = 4 · 2^−1074: the grid unit 2^−1084 is finer than any double, so 2^1084 overflows.
        let tiny: Vec<f64> = (0..300).map(|i| 5e-324 * ((i * 7) % 50) as f64).collect();
        // Half the mass on level 8: one best and 3,000 candidates with γ = 8 (3,000 e^{−8} ≈ 1).
        let mut far = vec![-16.0; 3000];
        far.push(0.0);
        vec![
            ("far mass", far, 1.0, 1.0),
            ("bell", bell, 1.0, 1.0),
            ("dominant", dominant, 1.0, 1.0),
            ("boundaries", boundaries, 1.0, 2.0),
            ("ties", ties, 1.0, 1.5),
            ("large", large, 0.3e14, 0.7),
            ("subnormal", tiny, 2e-323, 1.0),
        ]
    }

    /// exp(−γ_r) normalised, from the exact gaps (γ computed in f64 from its exact parts).
    fn probabilities(gaps: &[u128], scale: &Scale) -> Vec<f64> {
        let w: Vec<f64> = gaps
            .iter()
            .map(|&g| {
                let gamma = scale.gamma(g);
                let frac = (gamma.frac.t.to_u128().unwrap_or(0) as f64 + gamma.frac.rho as f64 / gamma.frac.b as f64)
                    / libm::ldexp(1.0, gamma.frac.f as i32);
                libm::exp(-(gamma.whole as f64 + frac))
            })
            .collect();
        let t: f64 = w.iter().sum();
        w.iter().map(|x| x / t).collect()
    }

    fn draw_counts(cuts: &impl Cuts, scale: &Scale, max_level: usize, draws: usize, seed: u64) -> Vec<u64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut counts = vec![0u64; cuts.len()];
        for _ in 0..draws {
            let mut bits = Bits::new(&mut rng);
            counts[exponential(&mut bits, cuts, scale, max_level).unwrap()] += 1;
        }
        counts
    }

    #[test]
    fn levels_are_the_integer_parts_of_gamma() {
        for (label, s, delta, eps) in sets() {
            let grid = Grid::of(delta).unwrap();
            let scale = Scale::new(eps, grid.units()).unwrap();
            let scores = FloatScores::<crate::select::exact::Raw>::new(&s, grid);
            let cuts = scores.cuts();
            for max_level in [1, 2, 5, MAX_LEVEL] {
                let lv = levels(&cuts, &scale, max_level);
                if label != "ties" {
                    // Every set but the ties spans at least three levels, so lowered maxima gather some.
                    assert!(lv.top >= max_level.min(3), "{label}");
                }
                let mut want = [0u64; MAX_LEVEL + 1];
                for r in 0..s.len() {
                    let l = (scale.gamma(cuts.gap(r)).whole as usize).min(lv.top);
                    assert_eq!(lv.level(cuts.score(r)), l, "{label}, candidate {r}");
                    want[l] += 1;
                }
                assert_eq!(lv.count(), want, "{label}");
                for (l, &c) in want.iter().enumerate().take(lv.top + 1) {
                    for j in 0..c as usize {
                        let r = lv.find(l, j).unwrap();
                        assert_eq!(lv.level(cuts.score(r)), l);
                    }
                    assert_eq!(lv.find(l, c as usize), None);
                }
            }
        }
    }

    #[test]
    fn float_cuts_separate_gaps_exactly_at_the_extremes() {
        // Magnitudes from subnormal to near overflow, both zeros, with Δ large and tiny.
        let s = [
            f64::MAX,
            -f64::MAX,
            1e308,
            -0.0,
            0.0,
            5e-324,
            -5e-324,
            1.0,
            -1.0,
            1e-300,
            -3e200,
            f64::MIN_POSITIVE,
        ];
        for delta in [1.0, 1e300, 5e-324, 0.1] {
            let grid = Grid::of(delta).unwrap();
            let scores = FloatScores::<crate::select::exact::Raw>::new(&s, grid);
            let cuts = scores.cuts();
            let mut ts: Vec<u128> = (0..s.len()).map(|r| cuts.gap(r)).filter(|&g| g > 0).collect();
            ts.extend(ts.clone().iter().map(|g| g - 1).filter(|&g| g > 0));
            ts.extend(ts.clone().iter().map(|g| g + 1).filter(|&g| g <= cuts.max_gap()));
            for &t in &ts {
                let c = cuts.cut(t);
                for (r, x) in s.iter().enumerate() {
                    assert_eq!(
                        below_of(&cuts, cuts.score(r), c),
                        cuts.gap(r) >= t,
                        "Δ = {delta}, t = {t}, score {x}"
                    );
                }
            }
        }
    }

    /// [`Cuts::below`] for the cuts' type.
    fn below_of<C: Cuts>(_: &C, s: C::Score, cut: C::Cut) -> bool {
        C::below(s, cut)
    }

    #[test]
    fn levels_sampler_matches_exact_probabilities() {
        for (i, (label, s, delta, eps)) in sets().into_iter().enumerate() {
            let grid = Grid::of(delta).unwrap();
            let scale = Scale::new(eps, grid.units()).unwrap();
            let scores = FloatScores::<crate::select::exact::Raw>::new(&s, grid);
            let cuts = scores.cuts();
            let gaps: Vec<u128> = (0..s.len()).map(|r| cuts.gap(r)).collect();
            let p = probabilities(&gaps, &scale);
            // max level 2: the gathered top level carries real weight; MAX_LEVEL: the production setting.
            for max_level in [2, MAX_LEVEL] {
                let counts = draw_counts(&cuts, &scale, max_level, 60_000, 40 + i as u64);
                assert_fits(&format!("levels, {label}, max level {max_level}"), &counts, &p);
                if label == "far mass" && max_level == MAX_LEVEL {
                    // Without the correction coins the output is ∝ (3/8)^ℓ e^{−(γ − ℓ)}: the far
                    // candidates lose a factor (3e/8)^8 ≈ 0.86. Caught on the two cells best / far.
                    let best = *counts.last().unwrap();
                    let two = [best, counts.iter().sum::<u64>() - best];
                    let far = 3000.0 * (-8.0f64).exp();
                    let fits = |w: f64| chi_square_p_value(&two, &[1.0 / (1.0 + w), w / (1.0 + w)]);
                    assert!(fits(far) >= ALPHA, "{label}: the two cells do not fit");
                    assert!(
                        fits(far * (0.375 * core::f64::consts::E).powi(8)) < ALPHA,
                        "{label}: fits the broken sampler"
                    );
                }
            }
        }
    }

    #[test]
    fn levels_sampler_on_integer_scores() {
        // Integer scores as the exact dampening produces them: a sensitivity of 3 units, ε = 0.8.
        let v: Vec<i128> = (0..900)
            .map(|i| -((unit(i) * 60.0) as i128) + if i == 17 { 10 } else { 0 })
            .collect();
        let mut words = vec![0u64; 2 * v.len()];
        for (i, &x) in v.iter().enumerate() {
            store_int(&mut words, i, x);
        }
        let scale = Scale::new(0.8, 3).unwrap();
        let scores = IntScores { words: &words };
        let cuts = scores.cuts();
        let gaps: Vec<u128> = (0..v.len()).map(|r| cuts.gap(r)).collect();
        let p = probabilities(&gaps, &scale);
        for max_level in [3, MAX_LEVEL] {
            let lv = levels(&cuts, &scale, max_level);
            for (r, &g) in gaps.iter().enumerate() {
                assert_eq!(lv.level(cuts.score(r)), (scale.gamma(g).whole as usize).min(lv.top));
            }
            let counts = draw_counts(&cuts, &scale, max_level, 100_000, 90 + max_level as u64);
            assert_fits(&format!("levels, integer scores, max level {max_level}"), &counts, &p);
        }
    }
}
