//! Exact arithmetic (issue "every selector ε-DP in the arithmetic it actually runs"):
//!
//! 1. **Tape proofs.** For each neighbouring pair on which the floating-point selectors have an output of
//!    probability exactly 0 on one side and > 0 on the other, a scripted random tape shows that the float
//!    impossibility is real (the most favourable tape still cannot produce it), and another shows that in
//!    exact mode the output is produced on *both* sides.
//! 2. **The exact Bernoulli(exp(−γ)) sampler** against its exact probability for many rational γ, by
//!    chi-square at α = 1e-6 with 10⁶ draws, and the same test rejecting a sampler of exp(−1.05γ).
//! 3. **Extreme inputs** through every exact pipeline: a result or a clear status, never a panic or a hang.

mod common;

use common::{assert_fits, chi_square_p_value, rng, ALPHA};
use dpmo::exact::bernoulli::{bernoulli_exp_minus, bernoulli_inv_e_over_three_eighths, Frac, Gamma};
use dpmo::exact::discrete::{discrete_laplace, LaplaceRate};
use dpmo::exact::wide::U256;
use dpmo::exact::{Bits, Scale};
use dpmo::select::{Arithmetic, Noise, Selector};
use dpmo::Error;
use rand_core::Rng;

// The public selectors draw a key from the generator and sample from a stream keyed by it, which a tape
// cannot script; these run the same selectors directly on the tape (`dpmo::testing`).

fn select_exponential(rng: &mut impl Rng, s: &[f64], delta: f64, eps: f64) -> Result<usize, Error> {
    dpmo::testing::select(rng, Selector::Exponential, s, delta, eps, &mut [], Arithmetic::Exact)
}

fn select_exponential_float(rng: &mut impl Rng, s: &[f64], delta: f64, eps: f64) -> Result<usize, Error> {
    dpmo::testing::select(rng, Selector::Exponential, s, delta, eps, &mut [], Arithmetic::Float)
}

fn select_noisy_max(
    rng: &mut impl Rng,
    s: &[f64],
    delta: f64,
    eps: f64,
    noise: Noise,
    perm: &mut [usize],
) -> Result<usize, Error> {
    dpmo::testing::select(rng, Selector::NoisyMax(noise), s, delta, eps, perm, Arithmetic::Exact)
}

fn select_noisy_max_float(rng: &mut impl Rng, s: &[f64], delta: f64, eps: f64, noise: Noise) -> Result<usize, Error> {
    dpmo::testing::select(
        rng,
        Selector::NoisyMax(noise),
        s,
        delta,
        eps,
        &mut [],
        Arithmetic::Float,
    )
}

fn select_permute_and_flip(
    rng: &mut impl Rng,
    s: &[f64],
    delta: f64,
    eps: f64,
    perm: &mut [usize],
) -> Result<usize, Error> {
    dpmo::testing::select(rng, Selector::PermuteAndFlip, s, delta, eps, perm, Arithmetic::Exact)
}

fn select_permute_and_flip_float(
    rng: &mut impl Rng,
    s: &[f64],
    delta: f64,
    eps: f64,
    perm: &mut [usize],
) -> Result<usize, Error> {
    dpmo::testing::select(rng, Selector::PermuteAndFlip, s, delta, eps, perm, Arithmetic::Float)
}

#[allow(clippy::too_many_arguments)]
fn select_top_k_gumbel(
    rng: &mut impl Rng,
    s: &[f64],
    delta: f64,
    eps: f64,
    out: &mut [usize],
    w: &mut [f64],
    ix: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    dpmo::testing::top_k_gumbel(rng, s, delta, eps, out, w, ix, arithmetic)
}

/// A generator that replays scripted 64-bit words and panics when they run out (a tape proof must say
/// everything the sampler reads).
struct Tape {
    words: Vec<u64>,
    next: usize,
}

impl Tape {
    fn new(words: Vec<u64>) -> Self {
        Tape { words, next: 0 }
    }
}

impl rand_core::TryRng for Tape {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.try_next_u64()? as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let w = *self.words.get(self.next).expect("the tape ran out");
        self.next += 1;
        Ok(w)
    }
    fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
        unreachable!("the selectors draw words")
    }
}

/// Packs a bit string (most significant bit of each word first, as the samplers read them) into words,
/// padded with ones.
fn pack(bits: &str) -> Vec<u64> {
    let mut words = Vec::new();
    let padded = format!("{bits}{}", "1".repeat(64 * 3));
    for chunk in padded.as_bytes().chunks(64).take(padded.len() / 64) {
        words.push(chunk.iter().fold(0u64, |w, &b| (w << 1) | u64::from(b == b'1')));
    }
    words
}

/// The tape on which the exact exponential mechanism returns candidate 1 of two when its γ has integer part
/// `whole`: index words 1, then "01" for each of the ⌊γ⌋ Bernoulli(e⁻¹) coins (CKS20 Algorithm 1 with γ = 1 stops
/// at K = 3: Bernoulli(1/2) succeeds on digit 0, Bernoulli(1/3) fails on digit 1), then ones, on which the
/// fractional coin's first Bernoulli(frac) fails at once (U = 0.111… > frac), so K = 1 is odd and the coin
/// succeeds.
fn exact_tape_for_second(whole: usize) -> Tape {
    // The exponential mechanism draws 16 proposals ahead: all index 1 (the top bit of each word).
    let mut words = vec![u64::MAX; 16];
    words.extend(pack(&"01".repeat(whole)));
    Tape::new(words)
}

/// The same through the exponential mechanism's sampler by levels (`src/select/levels.rs`), for two candidates
/// with γ of integer part 36 (the top level is then 4, the least a sampler by levels uses):
/// - the uniform proposals' budget of 64 fails: four batches of 16 index words (all index 1), each far
///   proposal's first e⁻¹ coin failing on bit 1 (64 bits, one buffered word of ones);
/// - the level word: a uniform below 8⁴ + 3⁴ = 4177 from the word's low 13 bits, where [0, 4096) is level 0
///   (the best) and [4096, 4177) level 4 (the far candidate, the only one there): `level_word`;
/// - 4 correction coins Bernoulli(8/(3e)), each succeeding on bit 1 (1/45 = 0.000001…), from a fresh word
///   of bits;
/// - the candidate on level 4, by rejection from uniform indices (the level holds n/64 candidates or more):
///   the index word u64::MAX, index 1;
/// - the remaining ⌊γ⌋ − 4 = 32 e⁻¹ coins ("01" each), the first 30 from the rest of the word of bits and the
///   last two from the next, and the fractional coin on ones, as in [`exact_tape_for_second`].
fn exact_levels_tape(level_word: u64) -> Tape {
    let mut words = Vec::new();
    for batch in 0..4 {
        words.extend([u64::MAX; 16]);
        if batch == 0 {
            words.push(u64::MAX); // the coins' bits for all four batches
        }
    }
    words.push(level_word);
    let bits = pack(&format!("{}{}", "1".repeat(4), "01".repeat(32)));
    words.push(bits[0]);
    words.push(u64::MAX); // the index word
    words.extend(&bits[1..]);
    Tape::new(words)
}

/// The same for permute-and-flip, which draws one index before its first coin.
fn exact_pf_tape_for_second(whole: usize) -> Tape {
    let mut words = vec![u64::MAX];
    words.extend(pack(&"01".repeat(whole)));
    Tape::new(words)
}

/// A word on which `uniform_index(n)` (Lemire's multiply-and-reject) returns `i`.
fn index_word(i: usize, n: usize) -> u64 {
    let b = n as u128;
    let threshold = (1u128 << 64) % b;
    let mut w = ((i as u128) << 64).div_ceil(b);
    while ((w * b) as u64 as u128) < threshold || (w * b) >> 64 != i as u128 {
        w += 1;
    }
    w as u64
}

/// The tape on which permute-and-flip over n = 65 candidates — candidate 0 the best, candidate 1 with γ of
/// integer part 36, 63 far ones at −10⁶ — *streams* and returns candidate `chosen` of the two successes
/// (`src/select/exact.rs`, `permute_and_flip`; the top level is 4 for n = 65):
/// - the walk visits 16 + 65/64 = 17 far candidates (2 to 18: an index word each), each coin failing on bit
///   1 (the first bit word is drawn by the first coin);
/// - the stream: candidate 0 (γ = 0) succeeds with no bit; candidates 1 to 64 are on the top level, decided
///   in 16 blocks of 4 (`block_hits`, b = 2) from a fresh word of the run reader: 00 (block 1–4 reads
///   w − b = 2 zeros: its rare branch), an index word of 0 (candidate 1 is the uniform hit), then ones:
///   candidates 2 to 4 each read a 1 (no hit; |S| = 1, kept with no bit), and blocks 5–8 to 61–64 each
///   read a 1 (no hit);
/// - candidate 1's coin goes on from the bit words: four continuations Bernoulli(2/e), each succeeding on
///   bit 1 (U > 1/3 at once: K = 3), then its ⌊γ⌋ − 4 = 32 e⁻¹ coins ("01" each) and the fractional coin on
///   ones;
/// - one index word among the two successes {0, 1}.
fn exact_pf_stream_tape(chosen: u64) -> (Tape, usize) {
    let n = 65;
    let bits = pack(&format!("{}{}{}", "1".repeat(17), "1".repeat(4), "01".repeat(32)));
    let mut words = vec![index_word(2, n), bits[0]];
    words.extend((3..=18).map(|i| index_word(i, n)));
    words.push(u64::MAX >> 2); // 00 then 62 ones
    words.push(0); // the uniform hit of block 1–4: candidate 1
    words.push(bits[1]);
    words.push(chosen);
    let used = words.len();
    (Tape::new(words), used)
}

/// The smallest uniform the float samplers can draw, k = 1 of k · 2⁻⁵³, from this word.
const SMALLEST_UNIFORM: u64 = 1 << 11;
/// The largest, 1 − 2⁻⁵³.
const LARGEST_UNIFORM: u64 = u64::MAX;

#[test]
fn exponential_mechanism_pair_is_impossible_in_float_and_possible_in_exact() {
    // ε = 1, Δ = 1: γ = 36.8 for −73.6 and 36.3 for −72.6.
    let (far, near) = ([0.0, -73.6], [0.0, -72.6]);
    // Float: candidate 1 replaces the reservoir iff u · (1 + w) < w with w = e^{−γ}; u ≥ 2⁻⁵³, and the
    // smallest u is the most favourable tape.
    let float = |s: &[f64]| {
        select_exponential_float(&mut Tape::new(vec![LARGEST_UNIFORM, SMALLEST_UNIFORM]), s, 1.0, 1.0).unwrap()
    };
    assert_eq!(float(&far), 0, "no tape gives index 1 at γ = 36.8 in float");
    assert_eq!(float(&near), 1, "the most favourable tape gives index 1 at γ = 36.3");
    // Exact: one tape gives index 1 on both sides.
    for s in [far, near] {
        assert_eq!(
            select_exponential(&mut exact_tape_for_second(36), &s, 1.0, 1.0).unwrap(),
            1,
            "{s:?}"
        );
        assert_eq!(
            select_noisy_max(&mut exact_tape_for_second(36), &s, 1.0, 1.0, Noise::Gumbel, &mut []).unwrap(),
            1
        );
    }
}

/// The same pair when uniform proposals have failed and the exponential mechanism samples by levels: the far
/// output is still possible on both sides, and the tape really goes through the level draw (a level word
/// below 4096 picks level 0, the best candidate).
#[test]
fn exponential_mechanism_pair_is_possible_in_exact_through_the_levels() {
    for s in [[0.0, -73.6], [0.0, -72.6]] {
        let mut t = exact_levels_tape(4096);
        assert_eq!(select_exponential(&mut t, &s, 1.0, 1.0).unwrap(), 1, "{s:?}");
        assert_eq!(t.next, 69, "{s:?}: the tape is read to the end of the second bit word");
        assert_eq!(
            select_noisy_max(&mut exact_levels_tape(4096), &s, 1.0, 1.0, Noise::Gumbel, &mut []).unwrap(),
            1
        );
        assert_eq!(
            select_exponential(&mut exact_levels_tape(4095), &s, 1.0, 1.0).unwrap(),
            0
        );
    }
}

#[test]
fn permute_and_flip_pair_is_impossible_in_float_and_possible_in_exact() {
    let (far, near) = ([0.0, -73.6], [0.0, -72.6]);
    // Float: candidate 1 visited first is kept iff an exponential draw −ln u exceeds γ; the largest draw is
    // −ln 2⁻⁵³ = 36.74.
    let float = |s: &[f64]| {
        let mut perm = [0usize; 2];
        let mut t = Tape::new(vec![u64::MAX, SMALLEST_UNIFORM, 0, 0]);
        select_permute_and_flip_float(&mut t, s, 1.0, 1.0, &mut perm).unwrap()
    };
    assert_eq!(float(&far), 0);
    assert_eq!(float(&near), 1);
    for s in [far, near] {
        let mut perm = [0usize; 2];
        assert_eq!(
            select_permute_and_flip(&mut exact_pf_tape_for_second(36), &s, 1.0, 1.0, &mut perm).unwrap(),
            1
        );
        assert_eq!(
            select_noisy_max(
                &mut exact_pf_tape_for_second(36),
                &s,
                1.0,
                1.0,
                Noise::Exponential,
                &mut perm
            )
            .unwrap(),
            1
        );
    }
}

/// The same pair among 65 candidates, where exact permute-and-flip walks 17 of them and then streams the coins
/// in index order: the far output is still possible on both sides, through the stream (the tape is read to
/// its end, word for word), and a last index word of 0 gives the best candidate instead.
#[test]
fn permute_and_flip_pair_is_possible_in_exact_through_the_stream() {
    for second in [-73.6, -72.6] {
        let mut s = vec![-1e6; 65];
        s[0] = 0.0;
        s[1] = second;
        for noise in [None, Some(Noise::Exponential)] {
            for (chosen, want) in [(u64::MAX, 1), (0, 0)] {
                let (mut t, used) = exact_pf_stream_tape(chosen);
                let mut perm = vec![0usize; 65];
                let r = match noise {
                    None => select_permute_and_flip(&mut t, &s, 1.0, 1.0, &mut perm),
                    Some(noise) => select_noisy_max(&mut t, &s, 1.0, 1.0, noise, &mut perm),
                };
                assert_eq!(r.unwrap(), want, "{second}, {noise:?}");
                assert_eq!(t.next, used, "{second}: the tape is read to its end");
            }
        }
    }
}

#[test]
fn gumbel_pair_is_impossible_in_float_and_possible_in_exact() {
    // γ = 40.4 and 39.9: a Gumbel draw −ln(−ln u) lies in [−3.59, 36.74], so candidate 1 needs a noise
    // difference beyond 40.3 against 40.4.
    let (far, near) = ([0.0, -80.8], [0.0, -79.8]);
    let words = || vec![SMALLEST_UNIFORM, LARGEST_UNIFORM]; // candidate 0 gets the least noise, 1 the most
    for (s, want) in [(far, 0), (near, 1)] {
        assert_eq!(
            select_noisy_max_float(&mut Tape::new(words()), &s, 1.0, 1.0, Noise::Gumbel).unwrap(),
            want
        );
        let (mut out, mut w, mut ix) = ([9usize; 1], [0.0; 2], [0usize; 2]);
        let mut t = Tape::new(words());
        select_top_k_gumbel(&mut t, &s, 1.0, 1.0, &mut out, &mut w, &mut ix, Arithmetic::Float).unwrap();
        assert_eq!(out[0], want, "one-shot Gumbel top-1 {s:?}");
    }
    for s in [far, near] {
        let whole = if s[1] == -80.8 { 40 } else { 39 };
        let (mut out, mut w, mut ix) = ([9usize; 1], [0.0; 2], [0usize; 2]);
        let mut t = exact_tape_for_second(whole);
        select_top_k_gumbel(&mut t, &s, 1.0, 1.0, &mut out, &mut w, &mut ix, Arithmetic::Exact).unwrap();
        assert_eq!(out[0], 1, "exact Gumbel top-1 {s:?}");
    }
}

#[test]
fn laplace_pair_is_impossible_in_float_and_refused_in_exact() {
    // x = −73.6 and −73.1 against Laplace noise in [−36.74, 36.74] on each side.
    let (far, near) = ([0.0, -147.2], [0.0, -146.2]);
    // Candidate 0: the largest exponential draw with a negative sign; candidate 1: the largest, positive.
    let words = || vec![SMALLEST_UNIFORM, 1, SMALLEST_UNIFORM, 0];
    assert_eq!(
        select_noisy_max_float(&mut Tape::new(words()), &far, 1.0, 1.0, Noise::Laplace).unwrap(),
        0
    );
    assert_eq!(
        select_noisy_max_float(&mut Tape::new(words()), &near, 1.0, 1.0, Noise::Laplace).unwrap(),
        1
    );
    for s in [far, near] {
        assert_eq!(
            select_noisy_max(&mut Tape::new(vec![]), &s, 1.0, 1.0, Noise::Laplace, &mut []),
            Err(Error::Unsupported)
        );
    }
}

#[test]
fn the_quantised_switch_probability_of_float_is_exact_in_exact_mode() {
    // ε = 0.02: x₁ = −36.045 and −36.035 are scores −3604.5 and −3603.5. The float reservoir takes
    // candidate 1 for the uniforms k · 2⁻⁵³ with k < w/(1 + w) · 2⁵³: k = 1 only on one side and k = 1, 2 on
    // the other, an implemented ratio of 2 where e^{0.01} is due.
    let count = |s: &[f64]| {
        (1..=8u64)
            .filter(|&k| {
                let mut t = Tape::new(vec![LARGEST_UNIFORM, k << 11]);
                select_exponential_float(&mut t, s, 1.0, 0.02).unwrap() == 1
            })
            .count()
    };
    assert_eq!((count(&[0.0, -3604.5]), count(&[0.0, -3603.5])), (1, 2));
    // Exact: γ is the exact rational ε G / (2N); its two values differ by exactly ε / 2 · (1 unit of Δ).
    let grid = dpmo::exact::Grid::of(1.0).unwrap();
    let scale = Scale::new(0.02, grid.units()).unwrap();
    let gamma = |s: f64| scale.gamma(grid.gap(grid.floor(0.0), s));
    let (a, b) = (gamma(-3604.5), gamma(-3603.5));
    assert_eq!((a.whole, b.whole), (36, 36));
    // γ_a − γ_b = ε/2 exactly: with ε = m 2^e, both fractions share the denominator and differ by m 2^(e−1)
    // in it (checked on the dyadic numerators, both below 2^f).
    assert_eq!(a.frac.b, b.frac.b);
    assert_eq!(a.frac.f, b.frac.f);
    let diff = a.frac.t.checked_sub(b.frac.t).unwrap();
    let (m, e) = dpmo::exact::grid::decompose(0.02);
    let z = m.trailing_zeros();
    let half_eps = U256::from_u128(((m as u128) >> z) << (e + z as i32 - 1 + a.frac.f as i32) as u32);
    assert_eq!(diff, half_eps, "γ(−3604.5) − γ(−3603.5) = ε/2 exactly");
}

// ------------------------------------------------------------------ Bernoulli(exp(−γ))

/// P(true) of the exact sampler over `draws`.
fn frequency(gamma: &Gamma, draws: usize, seed: u64) -> u64 {
    let mut g = rng(seed);
    let mut bits = Bits::new(&mut g);
    (0..draws).filter(|_| bernoulli_exp_minus(&mut bits, gamma)).count() as u64
}

/// γ as a double from its exact parts (for the expected probability only).
fn approx(g: &Gamma) -> f64 {
    let mut t = 0.0;
    for i in (0..g.frac.t.bit_len()).rev() {
        t = 2.0 * t + if g.frac.t.bit(i) { 1.0 } else { 0.0 };
    }
    g.whole as f64 + (t + g.frac.rho as f64 / g.frac.b as f64) / 2f64.powi(g.frac.f as i32)
}

fn gammas() -> Vec<(&'static str, Gamma)> {
    let s = |eps: f64, units: u64, gap: u128| Scale::new(eps, units).unwrap().gamma(gap);
    vec![
        ("0", Gamma::ZERO),
        ("tiny 2^-200", s(2f64.powi(-199), 1, 1)),
        ("1e-9", s(2e-9, 1, 1)),
        ("1/3", s(2.0, 3, 1)),
        ("1", Gamma::integer(1)),
        ("0.1 (ε = 0.1, non-dyadic)", s(0.2, 1, 1)),
        ("2.5", s(5.0, 1, 1)),
        ("e-ish 2.718281828", s(2.0 * std::f64::consts::E, 1, 1)),
        ("7/3", s(14.0 / 3.0, 1, 1)),
        ("9.75", s(19.5, 1, 1)),
        // A 180-bit numerator over an odd 52-bit integer times 2^125: γ ≈ 0.6.
        (
            "huge numerator and denominator",
            s(1.2 * 2f64.powi(-75), 0x000f_ffff_ffff_fff1, (1 << 127) - 1),
        ),
        ("ε = 1e-300, gap 2^120", s(1e-300, 1, 1 << 120)),
    ]
}

#[test]
fn bernoulli_exp_minus_gamma_matches_its_exact_probability() {
    const DRAWS: usize = 1_000_000;
    for (i, (label, g)) in gammas().into_iter().enumerate() {
        let p = (-approx(&g)).exp();
        let yes = frequency(&g, DRAWS, 900 + i as u64);
        assert_fits(
            &format!("Bernoulli(exp(-γ)) γ = {label} ({})", approx(&g)),
            &[yes, DRAWS as u64 - yes],
            &[p, 1.0 - p],
        );
    }
}

/// The correction coin of the exponential mechanism by levels, Bernoulli(e^{−1} / (3/8)), against its
/// probability 8/(3e) ≈ 0.981; the same draws reject the coin with a_0 = 1/40 in place of 1/45 (a failure
/// probability 12.5 % too high).
#[test]
fn the_correction_coin_is_bernoulli_of_e_inverse_over_three_eighths() {
    const DRAWS: usize = 4_000_000;
    let mut g = rng(977);
    let mut bits = Bits::new(&mut g);
    let yes = (0..DRAWS)
        .filter(|_| bernoulli_inv_e_over_three_eighths(&mut bits))
        .count() as u64;
    let p = 8.0 / (3.0 * std::f64::consts::E);
    let cells = [yes, DRAWS as u64 - yes];
    assert_fits("Bernoulli(8/(3e))", &cells, &[p, 1.0 - p]);
    let broken = 1.0 - (1.0 - p) * 45.0 / 40.0;
    assert!(
        chi_square_p_value(&cells, &[broken, 1.0 - broken]) < ALPHA,
        "a_0 = 1/40 not rejected"
    );
}

#[test]
fn the_bernoulli_test_rejects_a_sampler_of_exp_minus_1_05_gamma() {
    const DRAWS: usize = 1_000_000;
    for (i, (label, g)) in gammas().into_iter().enumerate() {
        let gamma = approx(&g);
        if !(0.5..=5.0).contains(&gamma) {
            continue; // the 5 % change must be visible in a million draws
        }
        let yes = frequency(&g, DRAWS, 950 + i as u64);
        let wrong = (-1.05 * gamma).exp();
        let p = chi_square_p_value(&[yes, DRAWS as u64 - yes], &[wrong, 1.0 - wrong]);
        assert!(p < ALPHA, "{label}: exp(-1.05γ) not rejected (p = {p:.3e})");
    }
}

#[test]
fn discrete_laplace_matches_its_exact_distribution() {
    const DRAWS: usize = 400_000;
    for (i, &(scale, granularity)) in [(1.0, 1.0), (2.5, 1.0), (0.3, 0.1), (3.0, 0.75)].iter().enumerate() {
        let rate = LaplaceRate::new(scale, granularity).unwrap();
        let a = granularity / scale;
        // Cells −K..=K, the tails pooled by the chi-square helper.
        let k = (12.0 / a).ceil() as i64;
        let norm = (1.0 - (-a).exp()) / (1.0 + (-a).exp());
        let probs: Vec<f64> = (-k..=k).map(|z| norm * (-a * z.abs() as f64).exp()).collect();
        let mut counts = vec![0u64; probs.len()];
        let mut g = rng(700 + i as u64);
        for _ in 0..DRAWS {
            let z = discrete_laplace(&mut g, &rate);
            if z.abs() <= k {
                counts[(z + k) as usize] += 1;
            }
        }
        assert_fits(
            &format!("discrete Laplace b = {scale}, g = {granularity}"),
            &counts,
            &probs,
        );
    }
}

// ------------------------------------------------------------------ extremes

#[test]
fn extreme_inputs_give_a_result_or_a_status_in_exact_mode() {
    let mut g = rng(77);
    let scores = [
        vec![f64::MAX, -f64::MAX],
        vec![1e300, -1e300, 0.0],
        vec![1e25, 1e25 - 2f64.powi(31), 1e25],
        vec![5e-324, 0.0, -5e-324],
        vec![1.0, 1.0 + 1e-15, 1.0 - 1e-15],
        vec![42.0],
    ];
    for s in &scores {
        for eps in [1e-300, 1e-12, 1.0, 1e12, 1e300] {
            for delta in [5e-324, 1e-300, 1.0, 1e300, f64::MAX] {
                let mut perm = vec![0usize; s.len()];
                for _ in 0..5 {
                    let r = select_exponential(&mut g, s, delta, eps).unwrap();
                    assert!(r < s.len());
                    let r = select_permute_and_flip(&mut g, s, delta, eps, &mut perm).unwrap();
                    assert!(r < s.len());
                }
            }
        }
    }
    // A huge ε and a tiny Δ make every other candidate infinitely far: the best always wins.
    for _ in 0..100 {
        assert_eq!(select_exponential(&mut g, &[0.0, 1.0, 0.5], 1e-300, 1e300).unwrap(), 1);
    }
    // Invalid parameters are statuses.
    assert_eq!(select_exponential(&mut g, &[1.0], 1.0, 0.0), Err(Error::InvalidEpsilon));
    assert_eq!(
        select_exponential(&mut g, &[1.0], f64::INFINITY, 1.0),
        Err(Error::InvalidSensitivity)
    );
    // A NaN score counts as −f64::MAX and ±∞ as ±f64::MAX (the public rule): never a status.
    for _ in 0..20 {
        assert_eq!(select_exponential(&mut g, &[f64::NAN, 1.0], 1.0, 1.0), Ok(1));
        assert_eq!(select_exponential(&mut g, &[f64::INFINITY, 1.0], 1.0, 1.0), Ok(0));
        assert_eq!(select_exponential(&mut g, &[f64::NEG_INFINITY, 1.0], 1.0, 1.0), Ok(1));
    }
    assert_eq!(select_exponential(&mut g, &[], 1.0, 1.0), Err(Error::EmptyInput));
}

#[test]
fn translated_huge_scores_keep_their_distribution() {
    // The same gaps far out and near zero give the same distribution: exact gaps between huge doubles.
    let base = [0.0, -1.0, -2.0];
    let shifted: Vec<f64> = base.iter().map(|x| 2f64.powi(60) + x * 2f64.powi(8)).collect();
    let expected = common::exact_exponential(&base, 1.0, 1.0);
    let mut g = rng(78);
    let counts = common::histogram(3, 200_000, || select_exponential(&mut g, &shifted, 256.0, 1.0).unwrap());
    assert_fits("exact EM on scores near 2^60", &counts, &expected);
}

#[test]
fn frac_digits_are_those_of_the_rational() {
    // (5 + 1/3) / 8, read as a fraction in [0, 1).
    let f = Frac {
        t: U256::from_u128(5),
        rho: 1,
        b: 3,
        f: 3,
    };
    let g = Gamma { whole: 0, frac: f };
    assert!((approx(&g) - (5.0 + 1.0 / 3.0) / 8.0).abs() < 1e-15);
}
