//! The exponential mechanism by levels: exact, with proposals close to the target, for scores where a few
//! candidates carry the mass.
//!
//! Rejection from uniform proposals ([`super::exact::exponential`]) needs about n / Z rounds, Z = Σ_r e^{−γ_r}:
//! a handful when many candidates are near the best, about n when one candidate dominates. This sampler
//! needs a handful in both cases, after one pass over the scores.
//!
//! **Levels.** Candidate r is on level ℓ_r = min(⌊γ_r⌋, F), F ≤ [`MAX_LEVEL`], found exactly by comparing
//! its score with cuts computed once per level ([`Cuts`]: G_r ≥ T_ℓ, T_ℓ the least gap with γ ≥ ℓ). Level ℓ
//! holds c_ℓ candidates. Then one round:
//! 1. picks level ℓ with probability ∝ c_ℓ y^ℓ with y = 3/8, by an exact integer draw below
//!    Σ_ℓ c_ℓ 3^ℓ 8^{F−ℓ} (a 256-bit integer: c_ℓ < 2⁶⁴ and F ≤ 60, so every weight is below 2²⁴⁴);
//! 2. flips ℓ coins Bernoulli(e^{−1}/y) ([`bernoulli_inv_e_over_three_eighths`]: y = 3/8 ≥ e^{−1} is a
//!    partial sum of the series of e^{−1}, which makes e^{−1}/y an exact alternating series of rationals);
//!    they do not depend on the candidate, so they come before it is looked for;
//! 3. picks a candidate r uniformly on that level (r is proposed with probability ∝ y^{ℓ_r}) and keeps it
//!    if the coin Bernoulli(exp(−(γ_r − ℓ_r))) succeeds too.
//!
//! A round returns r with probability ∝ y^{ℓ_r} (e^{−1}/y)^{ℓ_r} e^{−(γ_r − ℓ_r)} = e^{−γ_r}: the exponential
//! mechanism exactly, whatever the levels are, as long as ℓ_r ≤ γ_r — the cuts only decide how good the
//! proposals are. A round succeeds with probability at least 0.981^ℓ · e^{−1} for the level ℓ it picked
//! below F. Level F gathers every candidate with γ ≥ F, F ≥ min(log_{8/3} n − 4.75, [`TOP_CAP`]) (see
//! [`levels`]; the exponential mechanism caps F at [`TOP_CAP`]): its proposal weight c_F (3/8)^F is below
//! max(106, n/6900) against the best candidate's 1, so at most about a hundred rounds more are spent there
//! below n = 2¹⁸, and about n/6900 from there — each O(1), as below, a small fraction of the count's pass —
//! while few candidates sit below level F.
//!
//! **Cost.** After the pass that found the maximum ([`super::exact::scan`]): per level one cut (a
//! bisection of a few gaps from a close estimate), one pass to count the levels — a comparison per candidate
//! with the cut of level F, vectorised (and in the blocks that hold candidates above it, with the cuts of
//! levels F − 1 and F − 2 once the census keeps none of those), and for the few candidates above these an
//! estimate confirmed by two comparisons — and a few rounds. A round finds its candidate by rejection from uniform indices on a level
//! that holds at least n/64 candidates (64 tries at most, expected), from the census ([`Census`]: the count
//! keeps up to 1024 candidates, every one of the lowest levels) on the levels it kept whole, and otherwise by
//! a scan (two comparisons per candidate, vectorised, stopping when found). No scratch: levels are
//! recomputed rather than stored.

use super::exact::Cuts;
use crate::exact::bernoulli::{bernoulli_exp_minus, bernoulli_inv_e_over_three_eighths};
use crate::exact::wide::U256;
use crate::exact::{Bits, Scale};
use crate::sample;
use rand_core::Rng;

/// The highest level: level `MAX_LEVEL` gathers every candidate with γ ≥ `MAX_LEVEL`.
pub(crate) const MAX_LEVEL: usize = 60;

/// The most levels the exponential mechanism asks for ([`super::exact::exponential`] passes it as
/// `max_level`): F = 9 where log_{8/3} n − 4.75 would give more, i.e. from 2¹⁸ candidates on. The wasted
/// rounds on the top level grow to c_F (3/8)^9 < n/6900, each O(1), while the candidates below it — each
/// counted and levelled one at a time — shrink with every level less. Measured at n = 10⁶ and 10⁷,
/// N(0, 10²) and one dominant score, in max-reduction passes per selection (interleaved, one process):
/// F = 9 against F = 11 at 10⁶ (14 at 10⁷): 3.7 against 5.3 (normal, 10⁶), 1.9 against 1.8 (dominant,
/// 10⁶), 2.4 against 2.9 (normal, 10⁷), 1.4 against 1.3 (dominant, 10⁷); F = 8 wastes more rounds on a
/// dominant score (2.3 at 10⁶) than it saves. Permute-and-flip keeps the uncapped levels: its stream
/// decides far candidates in blocks whose size grows with F.
pub(crate) const TOP_CAP: usize = 9;

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
    // With b = ⌊log₂ n⌋ + 1 > log₂ n, F ≥ 3b/4 − 4.75 > log_{8/3} n − 4.75 (as 3/4 > 0.707 = 1/log₂(8/3)),
    // so the gathered top level's proposal weight c_F (3/8)^F < n (3/8)^F < (8/3)^{4.75} < 106 against the
    // best candidate's 1: at most about a hundred rounds more, each O(1) (a level that holds n/64
    // candidates or more is drawn from by rejection). A low F keeps few candidates below the top level,
    // the only ones counted one at a time.
    // The exponential mechanism asks for at most TOP_CAP levels (which lowers F from 2¹⁸ candidates on).
    let enough = ((usize::BITS - n.leading_zeros()) as usize * 3 / 4)
        .saturating_sub(4)
        .max(4);
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

    /// The cut below which the scores are on the top level.
    pub(crate) fn top_cut(&self) -> C::Cut {
        self.cut[self.top]
    }

    /// How many candidates are on each level: those on the top level found in blocks without branches (a
    /// comparison per candidate, vectorised), once the census keeps no more of them those on the two
    /// levels below it likewise, the others one at a time. The census also keeps up to
    /// [`KEPT`] of the others, all those on the lowest levels ([`Census::complete`]), for `find`.
    pub(crate) fn count(&self) -> Census {
        const BLOCK: usize = 64;
        let (top, far) = (self.top, self.cut[self.top]);
        let mut census = Census {
            count: [0; MAX_LEVEL + 1],
            kept: [0; KEPT],
            kept_level: [0; KEPT],
            len: 0,
            complete: if u32::try_from(self.cuts.len()).is_ok() { top } else { 0 },
        };
        let n = self.cuts.len();
        let mut start = 0;
        while start < n {
            // Parts wholly on the top level are counted unread.
            let next = if top > 0 {
                self.cuts.skip_below(start, far)
            } else {
                start
            };
            census.count[top] += (next - start) as u64;
            start = next;
            if start == n {
                break;
            }
            let end = (start + BLOCK).min(n);
            let mut near = self.cuts.not_below_mask(start, end, far);
            if near == 0 {
                census.count[top] += (end - start) as u64;
                start = end;
                continue;
            }
            census.count[top] += (end - start) as u64 - u64::from(near.count_ones());
            if top >= 3 && census.complete + 2 <= top {
                // The census no longer keeps levels F − 1 and F − 2: count them by two more masks (the
                // cuts decrease with the level, so each mask holds the next), and look at the candidates
                // above them only.
                let below_second = self.cuts.not_below_mask(start, end, self.cut[top - 1]);
                let below_third = self.cuts.not_below_mask(start, end, self.cut[top - 2]);
                census.count[top - 1] += u64::from((near & !below_second).count_ones());
                census.count[top - 2] += u64::from((below_second & !below_third).count_ones());
                near = below_third;
            }
            while near != 0 {
                let r = start + near.trailing_zeros() as usize;
                near &= near - 1;
                let l = self.level(self.cuts.score(r));
                census.count[l] += 1;
                census.keep(r, l);
            }
            start = end;
        }
        census
    }

    /// Whether a score is on level ℓ.
    #[inline]
    fn on(&self, l: usize, s: C::Score) -> bool {
        C::below(s, self.cut[l]) & !C::below(s, self.cut[l + 1])
    }

    /// The j-th candidate (from 0) on level ℓ: from the census when it kept the whole level, else counted
    /// without branches in blocks, then found in its block.
    pub(crate) fn find(&self, census: &Census, l: usize, mut j: usize) -> Option<usize> {
        const BLOCK: usize = 256;
        if l < census.complete {
            return census.kept[..census.len]
                .iter()
                .zip(&census.kept_level[..census.len])
                .filter(|&(_, &k)| usize::from(k) == l)
                .nth(j)
                .map(|(&r, _)| r as usize);
        }
        let (upper, lower) = (self.cut[l], self.cut[l + 1]);
        let n = self.cuts.len();
        let mut start = 0;
        while start < n {
            // Parts wholly below the level hold none of it.
            start = self.cuts.skip_below(start, lower);
            if start == n {
                break;
            }
            let end = (start + BLOCK).min(n);
            let here = self.cuts.count_between(start..end, upper, lower);
            if j < here {
                return (start..end).filter(|&r| self.on(l, self.cuts.score(r))).nth(j);
            }
            j -= here;
            start = end;
        }
        None
    }
}

/// How many candidates the census keeps below the top level. On N(0, 10²) scores at n = 10⁶ (ε = 1,
/// Δ = 1) the rounds that miss the census scan 0.32 n candidates per selection with 64 kept, 0.10 n with
/// 512 and 0.065 n with 1024; 1024 indices of 4 bytes and their levels are 5 KiB of stack.
const KEPT: usize = 1024;

/// The candidates per level, and every candidate on the levels below [`Census::complete`] (at most
/// [`KEPT`]), in index order: a round that draws one of those levels finds its candidate without a scan.
/// Indices are kept as `u32` (half the stack of `usize`): with more than 2³² candidates the census keeps
/// none (`complete` = 0) and every level is found by a scan.
pub(crate) struct Census {
    pub(crate) count: [u64; MAX_LEVEL + 1],
    kept: [u32; KEPT],
    kept_level: [u8; KEPT],
    len: usize,
    /// Every candidate on a level below this one is in `kept`.
    complete: usize,
}

impl Census {
    /// Keeps candidate r of level ℓ if ℓ is below `complete`; when full, lowers `complete` to the highest
    /// level kept and drops that level, so that the levels below stay complete.
    #[inline]
    fn keep(&mut self, r: usize, l: usize) {
        if l >= self.complete {
            return;
        }
        if self.len == KEPT {
            let highest = self.kept_level.iter().copied().max().map_or(0, usize::from);
            self.complete = highest;
            let mut len = 0;
            for i in 0..KEPT {
                if usize::from(self.kept_level[i]) < highest {
                    self.kept[len] = self.kept[i];
                    self.kept_level[len] = self.kept_level[i];
                    len += 1;
                }
            }
            self.len = len;
            if l >= self.complete {
                return;
            }
        }
        // ℓ < complete ≤ top ≤ MAX_LEVEL < 256, and complete > 0 only if every index fits in a u32.
        self.kept[self.len] = r as u32;
        self.kept_level[self.len] = l as u8;
        self.len += 1;
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
    let census = levels.count();
    let (n, top, count) = (cuts.len(), levels.top, &census.count);
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
        // The ℓ correction coins do not depend on the candidate: flipped first, they spare the search when
        // one fails.
        if !(0..l).all(|_| bernoulli_inv_e_over_three_eighths(bits)) {
            continue;
        }
        // A uniform candidate on level ℓ: by rejection from uniform indices when the level holds at least
        // n/64 candidates (at most 64 tries expected), else the j-th one, from the census or by a scan.
        let r = if count[l] >= (n as u64).div_ceil(64) {
            loop {
                let r = sample::uniform_index(bits.rng(), n);
                if levels.on(l, cuts.score(r)) {
                    break r;
                }
            }
        } else {
            let j = sample::uniform_index(bits.rng(), count[l] as usize);
            levels.find(&census, l, j)?
        };
        let mut g = scale.gamma(cuts.gap(r));
        g.whole = g.whole.saturating_sub(l as u64); // ℓ_r ≤ ⌊γ_r⌋ by the cuts
        if bernoulli_exp_minus(bits, &g) {
            return Some(r);
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
        let (mut partial, mut masked) = (0, 0);
        // A wider bell than the sampler tests need: more candidates below the top level than the census
        // keeps.
        let wide: Vec<f64> = (0..12_000)
            .map(|i| 8.0 * ((0..4).map(|k| unit(4 * i + k + 7)).sum::<f64>() - 2.0))
            .collect();
        for (label, s, delta, eps) in sets().into_iter().chain([("wide bell", wide, 1.0, 1.0)]) {
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
                let mut members = vec![Vec::new(); MAX_LEVEL + 1];
                for r in 0..s.len() {
                    let l = (scale.gamma(cuts.gap(r)).whole as usize).min(lv.top);
                    assert_eq!(lv.level(cuts.score(r)), l, "{label}, candidate {r}");
                    want[l] += 1;
                    members[l].push(r);
                }
                let census = lv.count();
                assert_eq!(census.count, want, "{label}");
                // The census keeps whole levels, and the scan finds the others: either way the j-th
                // member in index order.
                assert!(census.complete <= lv.top && census.len <= KEPT);
                if (want[..lv.top].iter().sum::<u64>() as usize) <= KEPT {
                    assert_eq!(census.complete, lv.top, "{label}: every level below the top kept");
                } else {
                    partial += 1;
                }
                if lv.top >= 3 && census.complete + 2 <= lv.top {
                    masked += 1; // levels F − 1 and F − 2 were counted by masks for some blocks
                }
                for (l, &c) in want.iter().enumerate().take(lv.top + 1) {
                    let found: Vec<usize> = (0..c as usize).map(|j| lv.find(&census, l, j).unwrap()).collect();
                    assert_eq!(found, members[l], "{label}, level {l}");
                    assert_eq!(lv.find(&census, l, c as usize), None);
                }
            }
        }
        assert!(partial > 0, "no set overflows the census");
        assert!(masked > 0, "no set counts the levels below the top by masks");
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
    fn levels_sampler_with_the_top_level_capped() {
        // 2¹⁸ + 7 candidates: F = TOP_CAP (9), as the exponential mechanism asks, instead of 3b/4 − 4 = 10. A best, forty candidates spread over
        // γ ∈ (0, 10], and the others at γ = 12: on the top level, with about 60 % of the mass, so rounds on
        // the top level (by rejection from uniform indices) decide most draws.
        let n = (1 << 18) + 7;
        let mut s = vec![-24.0; n];
        s[123_456] = 0.0;
        for k in 1..=40 {
            s[1000 * k + 17] = -0.5 * k as f64;
        }
        let grid = Grid::of(1.0).unwrap();
        let scale = Scale::new(1.0, grid.units()).unwrap();
        let scores = FloatScores::<crate::select::exact::Raw>::new(&s, grid);
        let cuts = scores.cuts();
        assert_eq!(levels(&cuts, &scale, MAX_LEVEL).top, 10);
        assert_eq!(levels(&cuts, &scale, TOP_CAP).top, TOP_CAP);
        let gaps: Vec<u128> = (0..n).map(|r| cuts.gap(r)).collect();
        let counts = draw_counts(&cuts, &scale, TOP_CAP, 30_000, 77);
        assert_fits("levels, top level capped", &counts, &probabilities(&gaps, &scale));
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
