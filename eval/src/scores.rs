//! Exact dampened scores computed once, selected from many times.
//!
//! The core's exact local dampening (`dampen::exact_dampened_scores`, `multi::privagg_exact_scores`) gives
//! integer scores S_r with a sensitivity of N integer units, and its exact selectors run on them. When the
//! scores do not depend on the run (set-independent utilities), an experiment computes them once and runs
//! many selections. The core's public selectors take doubles with a sensitivity Δ, so the integers are
//! handed over as doubles, exactly:
//!
//! S′_r = ⌊S_r / 2^s⌋ and N′ = ⌈N / 2^s⌉, with the least s that makes every |S′_r| and N′ < 2⁵³.
//!
//! **Privacy is exact.** If |S_r(x) − S_r(y)| ≤ N for neighbours x, y, then |S′_r(x) − S′_r(y)| ≤ N′
//! (⌊a/2^s⌋ ≤ ⌊(b + N)/2^s⌋ ≤ ⌊b/2^s⌋ + ⌈N/2^s⌉). Both are integers below 2⁵³, so they are doubles without
//! rounding, and the core's exact selectors floor scores onto a grid of Δ = N′ that every integer lies on:
//! the mechanism that runs is the exact mechanism on S′ with sensitivity N′, ε-DP in the arithmetic that
//! runs.
//!
//! **Utility is the core's to within 2⁻⁵⁰ or so.** N′ ≥ 2⁵² whenever s > 0 and N ≥ 2⁵³ (plain dampening:
//! N = 2⁶⁰), and the gaps change by less than one unit of N′, so every weight exp(−ε G/(2N)) changes by a
//! factor within exp(±ε / (2N′)). A test checks that the picks equal the core's own top-k for the same
//! generator.

/// Exact integer scores as doubles with their sensitivity (see the module documentation).
#[derive(Clone, Debug)]
pub struct ExactDoubles {
    /// S′_r, integers below 2⁵³ in magnitude.
    pub scores: Vec<f64>,
    /// N′, the sensitivity of `scores`.
    pub sensitivity: f64,
}

fn bits(x: u128) -> u32 {
    128 - x.leading_zeros()
}

/// Converts integer scores of sensitivity `units` (see the module documentation).
pub fn exact_doubles(ints: &[i128], units: u64) -> ExactDoubles {
    let widest = ints.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0);
    let shift = bits(widest).max(bits(u128::from(units))).saturating_sub(53);
    // ⌊S / 2^s⌋ (an arithmetic shift floors) and ⌈N / 2^s⌉.
    let scores = ints.iter().map(|&s| (s >> shift) as f64).collect();
    let n = (u128::from(units) + (1u128 << shift) - 1) >> shift;
    ExactDoubles {
        scores,
        sensitivity: (n.max(1)) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
    use dpmo::{select_local_dampening_top_k, select_top_k, Arithmetic, Dampening, Selector};
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn floors_and_ceils_to_53_bits() {
        let e = exact_doubles(&[5, -5, 0], 3);
        assert_eq!((e.scores.clone(), e.sensitivity), (vec![5.0, -5.0, 0.0], 3.0));
        let big = 1i128 << 60;
        // 61 bits: shifted by 8.
        let e = exact_doubles(&[big + 7, -big - 1, 1], 1 << 60);
        assert_eq!(e.scores, vec![(1u64 << 52) as f64, -((1u64 << 52) as f64) - 1.0, 0.0]);
        assert_eq!(e.sensitivity, (1u64 << 52) as f64);
        // The ceiling keeps every neighbour gap within N′: S and S + N map at most N′ apart.
        let n = (1u64 << 60) + 12345;
        for s in [0i128, 17, -(1 << 61) + 3, (1 << 62) - 1] {
            let e = exact_doubles(&[s, s + i128::from(n), 1 << 62], n);
            assert!(e.scores[1] - e.scores[0] <= e.sensitivity);
            assert!(e.scores.iter().all(|x| x.abs() < 2f64.powi(53) && x.fract() == 0.0));
        }
    }

    /// The picks from the converted scores equal the core's own exact local-dampening top-k with the same
    /// generator (the coins read the same random bits unless a gap differs in a digit beyond ~2⁻⁴⁰).
    #[test]
    fn same_picks_as_the_cores_exact_local_dampening_top_k() {
        let n = 300;
        let u: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 10.0).collect();
        let f = |r: usize, t: usize| 0.5 + ((r * 31 + t * 17) % 13) as f64 / 4.0;
        let delta = LocalSensitivity::new(DeltaSource::Function(&f), 4.0, 40, n).unwrap();
        for kind in [Dampening::Plain, Dampening::Shifted] {
            let mut ints = vec![0i128; n];
            let units = dpmo::dampen::exact_dampened_scores(&u, &delta, kind, &mut ints).unwrap();
            let e = exact_doubles(&ints, units);
            for (seed, eps) in [(1u64, 0.5), (2, 5.0), (3, 50.0), (4, 1.0), (5, 200.0)] {
                let mut a = [0usize; 4];
                let mut b = [0usize; 4];
                let (mut d, mut w, mut i) = (vec![0.0; 2 * n], vec![0.0; 2 * n], vec![0usize; n]);
                select_local_dampening_top_k(
                    &mut Xoshiro256PlusPlus::seed_from_u64(seed),
                    &u,
                    &delta,
                    kind,
                    Selector::Exponential,
                    eps,
                    &mut a,
                    &mut d,
                    &mut w,
                    &mut i,
                    &mut [],
                    Arithmetic::Exact,
                )
                .unwrap();
                select_top_k(
                    &mut Xoshiro256PlusPlus::seed_from_u64(seed),
                    Selector::Exponential,
                    &e.scores,
                    e.sensitivity,
                    eps,
                    &mut b,
                    &mut w[..n],
                    &mut i,
                    &mut [],
                    Arithmetic::Exact,
                )
                .unwrap();
                assert_eq!(a, b, "{kind:?} seed {seed} eps {eps}");
            }
        }
    }
}
