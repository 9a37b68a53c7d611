package org.dpmo;

/**
 * Differentially private selection over {@code double[]} arrays, through JNI to the dpmo C library
 * ({@code libdpmo.a}, linked into {@code libdpmo_jni.so}).
 *
 * <p>Conventions of every method:
 * <ul>
 *   <li>Scores and utilities are larger-is-better; candidates are the indices of the array. Multi-objective
 *       utilities are an n × m row-major array: {@code utilities[r * m + i]} = u_i(r) (see
 *       {@link #rowMajor(double[][])}).</li>
 *   <li>Every selection is exact by default: each output has exactly the probability of the mathematical
 *       mechanism (scores floored onto a grid of about 2<sup>-62</sup> Δ, which keeps the sensitivity exact),
 *       so the ε-DP guarantee holds in the arithmetic that runs. OR-ing {@link #FLOAT} into a selector, noise
 *       or flags argument runs that call in floating point instead (dpmo 0.1's samplers), where an output can
 *       be impossible on one dataset and possible on its neighbour. Report-noisy-max with Laplace noise exists
 *       only in floating point: without {@link #FLOAT} it raises {@link DpmoException#UNSUPPORTED}.</li>
 *   <li>Any invalid argument (null, empty, ε or Δ NaN, ∞ or ≤ 0, mismatched lengths, k ≤ 0 or k &gt; n,
 *       unknown selector, exhausted budget...) raises {@link DpmoException} with the C status code and
 *       message; nothing is written and the generator is unchanged.</li>
 *   <li>Private data never makes a selection fail (no free probing): a NaN score or utility counts as the
 *       lowest score (-MAX), ±∞ as ±MAX, local dampening clamps utilities to ±2<sup>60</sup> Δ, and a local
 *       sensitivity value that is NaN, negative or infinite counts as Δ (one above Δ as Δ). Only the helpers
 *       that return private values ({@link #paretoScores}) still refuse NaN.</li>
 *   <li>{@code budget} (nullable) is charged ε by every selection once its arguments are valid, before the
 *       private data is examined; the call is refused with BUDGET_EXHAUSTED (nothing else happens) when less
 *       is left. A failure caused by the arguments charges nothing; the data cannot make a selection fail.</li>
 *   <li>Input arrays are read in place (pinned with {@code GetPrimitiveArrayCritical}, not copied); do not
 *       modify them from another thread during a call.</li>
 *   <li>Privacy holds for the sensitivity you pass: the library cannot check that Δ bounds your utility's
 *       sensitivity or that a local δ is admissible.</li>
 * </ul>
 *
 * <h2>Threads and lock order</h2>
 *
 * <p>Every function is safe to call from any thread. A call that uses a {@link PrivacyBudget} and a
 * {@link DpmoRng} locks first the budget, then the generator, and releases both before it returns; it
 * locks private objects inside them, never the {@code PrivacyBudget} or {@code DpmoRng} objects you hold,
 * and runs none of your code while it holds them. So the order is the same in every call, and no
 * {@code synchronized} block of yours, on either object and in either order, can make a dpmo call
 * deadlock. Calls sharing a generator or a budget are serialised; threads with their own generators (and
 * budgets) run in parallel. Your own monitors give you mutual exclusion only among your own blocks: to make
 * "check the budget, then select" atomic, hold one lock of yours around both in every thread.
 *
 * <h2>The native library</h2>
 *
 * <p>The jar carries {@code libdpmo_jni.so} for Linux x86-64 (glibc) and loads it by itself on first use:
 * no {@code -Djava.library.path} is needed. The system property {@code dpmo.library} (an absolute path to
 * a {@code libdpmo_jni.so}) overrides it; on platforms the jar carries nothing for, the library is looked
 * up on {@code java.library.path}. The library must be the one built with this jar (same dpmo version,
 * same native method signatures): otherwise the first use of any class of this package throws an
 * {@link UnsatisfiedLinkError} that names the library found and the version expected.
 */
public final class Dpmo {
    /** Selector: the exponential mechanism, P(r) ∝ exp(ε s(r) / 2Δ). */
    public static final int SELECTOR_EXPONENTIAL = 0;
    /** Selector: permute-and-flip (never less accurate than the exponential mechanism). */
    public static final int SELECTOR_PERMUTE_AND_FLIP = 1;
    /** Selector: report-noisy-max with Laplace noise of scale 2Δ/ε (floating point only: needs {@link #FLOAT}). */
    public static final int SELECTOR_NOISY_MAX_LAPLACE = 2;
    /** Selector: report-noisy-max with Gumbel noise (same distribution as the exponential mechanism). */
    public static final int SELECTOR_NOISY_MAX_GUMBEL = 3;
    /** Selector: report-noisy-max with Exponential noise (same distribution as permute-and-flip). */
    public static final int SELECTOR_NOISY_MAX_EXPONENTIAL = 4;

    /**
     * Flag OR-ed into a selector ({@code SELECTOR_*}), a noise ({@code NOISE_*}) or the flags of
     * {@link #selectTopKGumbel(DpmoRng, double[], double, double, int, int, PrivacyBudget)}: run that call in
     * floating point, as dpmo 0.1 did. Probabilities are then only as exact as 53-bit uniforms, so the guarantee
     * holds in real arithmetic only: for comparisons and compatibility, not for releases. Without it every
     * selection is exact.
     */
    public static final int FLOAT = 0x100;

    /**
     * Flag OR-ed into a selector ({@code SELECTOR_*}), a noise ({@code NOISE_*}) or the flags of
     * {@link #selectTopKGumbel}: run the selection in constant time. Its running time, the memory it touches and
     * the randomness it draws depend only on the public arguments (n, k, ε, Δ, the flags), never on the
     * scores, so someone who times the call learns nothing beyond its output. Every output probability is within
     * a factor e^(±a) of the mechanism's; to pay for it the mechanism runs at the slightly smaller ε of
     * {@link #isochronousRunEpsilon}, so the call is ε-DP and a budget is charged ε, as always. For the
     * exponential mechanism, permute-and-flip, Gumbel and Exponential noise, their top-k and local dampening;
     * not combinable with {@link #FLOAT}.
     */
    public static final int ISOCHRONOUS = 0x200;

    /** Report-noisy-max noise: Laplace (floating point only: needs {@link #FLOAT}). */
    public static final int NOISE_LAPLACE = 0;
    /** Report-noisy-max noise: Gumbel. */
    public static final int NOISE_GUMBEL = 1;
    /** Report-noisy-max noise: one-sided Exponential. */
    public static final int NOISE_EXPONENTIAL = 2;

    /** Plain local dampening (Local Dampening paper, Def. 3.6). */
    public static final int DAMPENING_PLAIN = 0;
    /** Shifted local dampening (Local Dampening paper, Def. 4.3). */
    public static final int DAMPENING_SHIFTED = 1;

    /** Pareto dominance: ≥ on every objective and &gt; on at least one (ties do not penalise). */
    public static final int DOMINANCE_TEXTBOOK = 0;
    /** The PrivPareto paper's ⪰ (Def. 4.3): ≥ on every objective; exact ties dominate each other. */
    public static final int DOMINANCE_WEAK = 1;

    /** The largest number m of objectives. */
    public static final int MAX_OBJECTIVES = 16;

    static {
        NativeLibrary.load();
    }

    private Dpmo() {}

    /** Makes sure the JNI library is loaded and checked (called by every class of the binding). */
    static void load() {
        NativeLibrary.load();
    }

    // ------------------------------------------------------------------------------------ library facts

    /**
     * The C library's version ({@code dpmo_version()}), which is also this jar's version.
     *
     * @return e.g. {@code "0.1.0"}
     */
    public static native String version();

    /**
     * The sentence {@code dpmo_status_message} gives for a status code (the message of a
     * {@link DpmoException} with that status).
     *
     * @param status a status code, one of the constants of {@link DpmoException}
     * @return the sentence (a generic one for unknown codes)
     */
    public static native String statusMessage(int status);

    /**
     * The ε each round of an {@link #ISOCHRONOUS} selection of k out of n candidates at a total ε runs its
     * mechanism at: ε/k less 2⁻⁴⁰ (exponential mechanism, Gumbel noise) or (n + 1) 2⁻⁴⁰ (permute-and-flip,
     * Exponential noise), rounded down, which keeps the selection ε-DP.
     *
     * @param selector one of the {@code SELECTOR_*} constants (optionally {@code | ISOCHRONOUS})
     * @param epsilon ε (finite, &gt; 0)
     * @param n the number of candidates
     * @param k the number selected (1 ≤ k ≤ n)
     * @return the ε each round runs at
     * @throws DpmoException on invalid input (INVALID_EPSILON when ε/k is not above the slack), or
     *     UNSUPPORTED for Laplace noise
     */
    public static native double isochronousRunEpsilon(int selector, double epsilon, int n, int k);

    // ------------------------------------------------------------------- single objective, global Δ

    /**
     * The exponential mechanism (McSherry &amp; Talwar 2007), exactly: an index r drawn with probability exactly
     * ∝ exp(ε · scores[r] / (2Δ)). ε-DP when Δ bounds how much any score changes between neighbouring datasets.
     * (The floating-point sampler: {@code select(rng, SELECTOR_EXPONENTIAL | FLOAT, ...)}.)
     *
     * @param rng the generator the draw comes from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the index of the selected candidate
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int selectExponential(DpmoRng rng, double[] scores, double sensitivity,
            double epsilon, PrivacyBudget budget);

    /**
     * {@link #selectExponential(DpmoRng, double[], double, double, PrivacyBudget)} without a budget.
     *
     * @param rng the generator the draw comes from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @return the index of the selected candidate
     */
    public static int selectExponential(DpmoRng rng, double[] scores, double sensitivity, double epsilon) {
        return selectExponential(rng, scores, sensitivity, epsilon, null);
    }

    /**
     * Permute-and-flip (McKenna &amp; Sheldon 2020), exactly: candidates visited in random order, each accepted
     * with probability exactly exp(ε (scores[r] − max) / (2Δ)). ε-DP, and never less accurate than the
     * exponential mechanism in expected score. (The floating-point sampler:
     * {@code select(rng, SELECTOR_PERMUTE_AND_FLIP | FLOAT, ...)}.)
     *
     * @param rng the generator the draws come from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the index of the selected candidate
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int selectPermuteAndFlip(DpmoRng rng, double[] scores, double sensitivity,
            double epsilon, PrivacyBudget budget);

    /**
     * {@link #selectPermuteAndFlip(DpmoRng, double[], double, double, PrivacyBudget)} without a budget.
     *
     * @param rng the generator the draws come from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @return the index of the selected candidate
     */
    public static int selectPermuteAndFlip(DpmoRng rng, double[] scores, double sensitivity, double epsilon) {
        return selectPermuteAndFlip(rng, scores, sensitivity, epsilon, null);
    }

    /**
     * Report-noisy-max: noise of scale 2Δ/ε added to every score, the index of the largest reported. ε-DP.
     * Gumbel noise gives the exponential mechanism's distribution and Exponential noise permute-and-flip's; in
     * exact arithmetic (the default) they run as those mechanisms. Laplace noise exists only in floating point:
     * pass {@code NOISE_LAPLACE | FLOAT}. Any noise may carry {@link #FLOAT}.
     *
     * @param rng the generator the noise comes from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @param noise {@link #NOISE_GUMBEL}, {@link #NOISE_EXPONENTIAL} or {@link #NOISE_LAPLACE}, optionally
     *     {@code | FLOAT} (Laplace needs it)
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the index of the selected candidate
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int selectNoisyMax(DpmoRng rng, double[] scores, double sensitivity, double epsilon,
            int noise, PrivacyBudget budget);

    /**
     * {@link #selectNoisyMax(DpmoRng, double[], double, double, int, PrivacyBudget)} without a budget.
     *
     * @param rng the generator the noise comes from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @param noise {@link #NOISE_GUMBEL}, {@link #NOISE_EXPONENTIAL} or {@link #NOISE_LAPLACE}, optionally
     *     {@code | FLOAT} (Laplace needs it)
     * @return the index of the selected candidate
     */
    public static int selectNoisyMax(DpmoRng rng, double[] scores, double sensitivity, double epsilon, int noise) {
        return selectNoisyMax(rng, scores, sensitivity, epsilon, noise, null);
    }

    /**
     * One ε-DP selection by any selector, given by its code. Exact selectors run as the methods above; with
     * {@link #FLOAT} the call runs the floating-point sampler of that selector, with {@link #ISOCHRONOUS} the
     * constant-time one (top-k with k = 1).
     *
     * @param rng the generator the draws come from
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT} or
     *     {@code | ISOCHRONOUS}
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the index of the selected candidate
     * @throws DpmoException INVALID_ARGUMENT for an unknown selector, UNSUPPORTED for Laplace noise without
     *     {@link #FLOAT}, and as the selector's own method
     */
    public static int select(DpmoRng rng, int selector, double[] scores, double sensitivity, double epsilon,
            PrivacyBudget budget) {
        if ((selector & (FLOAT | ISOCHRONOUS)) != 0) {
            return selectTopK(rng, selector, scores, sensitivity, epsilon, 1, budget)[0];
        }
        switch (selector) {
            case SELECTOR_EXPONENTIAL:
                return selectExponential(rng, scores, sensitivity, epsilon, budget);
            case SELECTOR_PERMUTE_AND_FLIP:
                return selectPermuteAndFlip(rng, scores, sensitivity, epsilon, budget);
            case SELECTOR_NOISY_MAX_LAPLACE:
                return selectNoisyMax(rng, scores, sensitivity, epsilon, NOISE_LAPLACE, budget);
            case SELECTOR_NOISY_MAX_GUMBEL:
                return selectNoisyMax(rng, scores, sensitivity, epsilon, NOISE_GUMBEL, budget);
            case SELECTOR_NOISY_MAX_EXPONENTIAL:
                return selectNoisyMax(rng, scores, sensitivity, epsilon, NOISE_EXPONENTIAL, budget);
            default:
                throw new DpmoException(DpmoException.INVALID_ARGUMENT,
                        statusMessage(DpmoException.INVALID_ARGUMENT));
        }
    }

    /**
     * The output distribution of the exponential mechanism, computed in floating point in log space (finite for
     * any finite input, sums to 1). For audits and tests; not private by itself: it reads the scores.
     *
     * @param scores one score per candidate (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ (finite, &gt; 0)
     * @param epsilon ε (finite, &gt; 0)
     * @return P(r) for every candidate r
     * @throws DpmoException on invalid input
     */
    public static native double[] exponentialProbabilities(double[] scores, double sensitivity, double epsilon);

    /**
     * Top-k without replacement: k rounds of {@code selector} at ε/k each over the candidates not yet chosen;
     * ε-DP in total (sequential composition). k = n gives a random permutation.
     *
     * @param rng the generator the draws come from
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε for the whole top-k (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int[] selectTopK(DpmoRng rng, int selector, double[] scores, double sensitivity,
            double epsilon, int k, PrivacyBudget budget);

    /**
     * {@link #selectTopK(DpmoRng, int, double[], double, double, int, PrivacyBudget)} without a budget.
     *
     * @param rng the generator the draws come from
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε for the whole top-k (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @return the k indices in pick order
     */
    public static int[] selectTopK(DpmoRng rng, int selector, double[] scores, double sensitivity,
            double epsilon, int k) {
        return selectTopK(rng, selector, scores, sensitivity, epsilon, k, null);
    }

    /**
     * One-shot top-k with Gumbel noise (Durfee &amp; Rogers 2019): its distribution is that of k sequential
     * exponential mechanisms at ε/k each; ε-DP in total. {@code flags} = 0 runs exactly that peeling, exactly
     * (O(k n)); {@code flags} = {@link #FLOAT} runs the one-shot form in floating point, Gumbel noise of scale
     * 2kΔ/ε added once and the k largest reported in decreasing order (O(n + k log k)).
     *
     * @param rng the generator the noise comes from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε for the whole top-k (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param flags 0 (exact) or {@link #FLOAT}
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     * @throws DpmoException on invalid input (flags other than 0 or FLOAT: INVALID_ARGUMENT) or an exhausted
     *     budget (nothing drawn, nothing charged)
     */
    public static native int[] selectTopKGumbel(DpmoRng rng, double[] scores, double sensitivity,
            double epsilon, int k, int flags, PrivacyBudget budget);

    /**
     * {@link #selectTopKGumbel(DpmoRng, double[], double, double, int, int, PrivacyBudget)} in exact arithmetic.
     *
     * @param rng the generator the noise comes from
     * @param scores one score per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param sensitivity Δ, the global sensitivity of every score (finite, &gt; 0)
     * @param epsilon ε for the whole top-k (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     */
    public static int[] selectTopKGumbel(DpmoRng rng, double[] scores, double sensitivity, double epsilon, int k,
            PrivacyBudget budget) {
        return selectTopKGumbel(rng, scores, sensitivity, epsilon, k, 0, budget);
    }

    // ----------------------------------------------------------------- single objective, local dampening

    /**
     * The dampened scores D(u, δ), plain (Local Dampening paper, Def. 3.6) or shifted (Def. 4.3): their global
     * sensitivity is 1, so any selector may follow with Δ = 1. Not private by itself.
     *
     * @param utilities one utility per candidate (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param delta the local sensitivity δ(x, t, r), which must be admissible (Def. 3.3)
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED}
     * @return D(u, δ)(r) for every candidate r
     * @throws DpmoException on invalid input
     */
    public static native double[] dampen(double[] utilities, Sensitivity delta, int dampening);

    /**
     * The output distribution of local dampening followed by the exponential mechanism, P(r) ∝ exp(ε D(r) / 2),
     * computed in floating point. For audits and tests.
     *
     * @param utilities one utility per candidate (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param delta the local sensitivity δ(x, t, r), which must be admissible
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED}
     * @param epsilon ε (finite, &gt; 0)
     * @return P(r) for every candidate r
     * @throws DpmoException on invalid input
     */
    public static native double[] localDampeningProbabilities(double[] utilities, Sensitivity delta,
            int dampening, double epsilon);

    /**
     * Local dampening end to end: dampen with δ, then select with {@code selector} at Δ = 1. ε-DP when δ is
     * admissible (Local Dampening paper, Thms. 3.10 and 4.4). In exact arithmetic (the default) δ is rounded up
     * and the utilities floored onto a grid of about 2<sup>-62</sup> Δ, and the dampened scores are computed
     * without rounding.
     *
     * @param rng the generator the draws come from
     * @param utilities one utility per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param delta the local sensitivity δ(x, t, r), which must be admissible (Def. 3.3)
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED}
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε (finite, &gt; 0)
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the index of the selected candidate
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int selectLocalDampening(DpmoRng rng, double[] utilities, Sensitivity delta,
            int dampening, int selector, double epsilon, PrivacyBudget budget);

    /**
     * {@link #selectLocalDampening(DpmoRng, double[], Sensitivity, int, int, double, PrivacyBudget)} without a
     * budget.
     *
     * @param rng the generator the draws come from
     * @param utilities one utility per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param delta the local sensitivity δ(x, t, r), which must be admissible (Def. 3.3)
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED}
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε (finite, &gt; 0)
     * @return the index of the selected candidate
     */
    public static int selectLocalDampening(DpmoRng rng, double[] utilities, Sensitivity delta, int dampening,
            int selector, double epsilon) {
        return selectLocalDampening(rng, utilities, delta, dampening, selector, epsilon, null);
    }

    /**
     * Top-k with local dampening: dampen once, then k rounds of {@code selector} at ε/k over the candidates not
     * yet chosen; ε-DP in total when δ is admissible.
     *
     * @param rng the generator the draws come from
     * @param utilities one utility per candidate, larger is better (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param delta the local sensitivity δ(x, t, r), which must be admissible (Def. 3.3)
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED}
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε for the whole top-k (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int[] selectLocalDampeningTopK(DpmoRng rng, double[] utilities, Sensitivity delta,
            int dampening, int selector, double epsilon, int k, PrivacyBudget budget);

    // --------------------------------------------------------------------------------- multi-objective

    /**
     * PrivPareto (PrivPareto paper, §4.3): k of the n = utilities.length / m candidates without replacement,
     * by their Pareto score under {@code dominance}; each round selects by {@code selector} at ε/k and re-scores
     * the candidates left. ε-DP in total.
     *
     * @param rng the generator the draws come from
     * @param utilities n × m utilities, row-major: {@code utilities[r * m + i]} = u_i(r) (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param dominance {@link #DOMINANCE_TEXTBOOK} or {@link #DOMINANCE_WEAK}
     * @param deltas null for the global mechanism (Δ = n′ − 1 for n′ candidates left; {@code maxDistance} and
     *     {@code dampening} unused), or m admissible local sensitivities, one per objective: the Pareto score is
     *     then dampened with δ^PS (Def. 4.5, Thm. 4.7), computed one distance at a time
     * @param maxDistance 0 (recommended): δ^PS is computed until every candidate's dampened score is determined,
     *     the same distribution as an unbounded table; &gt; 0: at most that many distances, δ^PS saturated to
     *     n′ − 1 beyond (privacy holds either way). Memory is O(n m) in both cases
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED} (local only)
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int[] selectPrivPareto(DpmoRng rng, double[] utilities, int m, int dominance,
            Sensitivity[] deltas, int maxDistance, int dampening, int selector, double epsilon, int k,
            PrivacyBudget budget);

    /**
     * Global PrivPareto: {@code selectPrivPareto(rng, utilities, m, dominance, null, 0, DAMPENING_PLAIN, ...)}.
     *
     * @param rng the generator the draws come from
     * @param utilities n × m utilities, row-major (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param dominance {@link #DOMINANCE_TEXTBOOK} or {@link #DOMINANCE_WEAK}
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     */
    public static int[] selectPrivPareto(DpmoRng rng, double[] utilities, int m, int dominance, int selector,
            double epsilon, int k, PrivacyBudget budget) {
        return selectPrivPareto(rng, utilities, m, dominance, null, 0, DAMPENING_PLAIN, selector, epsilon, k,
                budget);
    }

    /**
     * The output distribution of PrivPareto with the exponential mechanism and k = 1, in floating point:
     * global, ∝ exp(ε PS(r) / 2(n − 1)); local, ∝ exp(ε D(PS, δ^PS)(r) / 2).
     *
     * @param utilities n × m utilities, row-major (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param dominance {@link #DOMINANCE_TEXTBOOK} or {@link #DOMINANCE_WEAK}
     * @param deltas null (global) or m admissible local sensitivities
     * @param maxDistance 0 (automatic) or the cap on the distances examined (local)
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED} (local)
     * @param epsilon ε (finite, &gt; 0)
     * @return P(r) for every candidate r
     * @throws DpmoException on invalid input
     */
    public static native double[] privParetoProbabilities(double[] utilities, int m, int dominance,
            Sensitivity[] deltas, int maxDistance, int dampening, double epsilon);

    /**
     * PrivAgg (PrivPareto paper, §5): k candidates without replacement by the aggregate u_agg = Σ w_i u_i, each
     * round by {@code selector} at ε/k. ε-DP in total. In exact arithmetic (the default) the weighted sum is
     * computed exactly on a grid of about 2<sup>-56</sup> Δ_agg.
     *
     * @param rng the generator the draws come from
     * @param utilities n × m utilities, row-major: {@code utilities[r * m + i]} = u_i(r) (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param weights the m weights w_i (finite)
     * @param globals the m global sensitivities Δ_i for the global mechanism (Δ_agg = Σ |w_i| Δ_i); unused (may
     *     be null) when {@code deltas} is given
     * @param deltas null (global), or m admissible local sensitivities: u_agg is dampened with
     *     δ_agg = Σ |w_i| δ_i (Thm. 5.4), evaluated on demand
     * @param maxDistance 0 (recommended): δ_agg saturates where every δ_i does; &gt; 0: saturated at that
     *     distance if earlier
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED} (local only)
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     * @throws DpmoException on invalid input, an exhausted budget or an unsupported arithmetic (nothing drawn;
     *     nothing charged)
     */
    public static native int[] selectPrivAgg(DpmoRng rng, double[] utilities, int m, double[] weights,
            double[] globals, Sensitivity[] deltas, int maxDistance, int dampening, int selector, double epsilon,
            int k, PrivacyBudget budget);

    /**
     * Global PrivAgg: {@code selectPrivAgg(rng, utilities, m, weights, globals, null, 0, DAMPENING_PLAIN, ...)}.
     *
     * @param rng the generator the draws come from
     * @param utilities n × m utilities, row-major (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param weights the m weights w_i (finite)
     * @param globals the m global sensitivities Δ_i
     * @param selector one of the {@code SELECTOR_*} constants, optionally {@code | FLOAT}
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param k how many candidates, 1 ≤ k ≤ n
     * @param budget charged ε once the arguments are valid, or refuses the call; null for none
     * @return the k indices in pick order
     */
    public static int[] selectPrivAgg(DpmoRng rng, double[] utilities, int m, double[] weights,
            double[] globals, int selector, double epsilon, int k, PrivacyBudget budget) {
        return selectPrivAgg(rng, utilities, m, weights, globals, null, 0, DAMPENING_PLAIN, selector, epsilon, k,
                budget);
    }

    /**
     * The output distribution of PrivAgg with the exponential mechanism and k = 1, in floating point.
     *
     * @param utilities n × m utilities, row-major (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param weights the m weights w_i (finite)
     * @param globals the m global sensitivities Δ_i (global mechanism)
     * @param deltas null (global) or m admissible local sensitivities
     * @param maxDistance 0 (automatic) or the distance δ_agg saturates at (local)
     * @param dampening {@link #DAMPENING_PLAIN} or {@link #DAMPENING_SHIFTED} (local)
     * @param epsilon ε (finite, &gt; 0)
     * @return P(r) for every candidate r
     * @throws DpmoException on invalid input
     */
    public static native double[] privAggProbabilities(double[] utilities, int m, double[] weights,
            double[] globals, Sensitivity[] deltas, int maxDistance, int dampening, double epsilon);

    /**
     * The Pareto scores PS(r) = −#{r′ ≠ r : r′ dominates r}, integers in [−(n − 1), 0]. Not private: a score
     * stage for your own mechanism.
     *
     * @param utilities n × m utilities, row-major (finite)
     * @param m the number of objectives, 1 ≤ m ≤ {@link #MAX_OBJECTIVES}
     * @param dominance {@link #DOMINANCE_TEXTBOOK} or {@link #DOMINANCE_WEAK}
     * @return PS(r) for every candidate r
     * @throws DpmoException on invalid input
     */
    public static native double[] paretoScores(double[] utilities, int m, int dominance);

    // ------------------------------------------------------------------- unknown domain: raw events

    /** Partition selection: truncated geometric thresholding (Desfontaines et al. 2022; optimal for L = 1). */
    public static final int PARTITION_TRUNCATED_GEOMETRIC = 0;
    /** Partition selection: unit counts plus exact discrete Laplace noise, thresholded. */
    public static final int PARTITION_LAPLACE = 1;
    /** Partition selection: unit counts plus exact discrete Gaussian noise, thresholded. */
    public static final int PARTITION_GAUSSIAN = 2;
    /** Partition selection: weights 1/√|S_u| per unit plus discrete Gaussian noise, thresholded (Gopi et al.). */
    public static final int PARTITION_WEIGHTED_GAUSSIAN = 3;
    /** Partition selection: DP-SIPS (Swanberg et al. 2023), {@code rounds} rounds of weighted Gaussian thresholding. */
    public static final int PARTITION_SIPS = 4;
    /** The most DP-SIPS rounds. */
    public static final int PARTITION_MAX_ROUNDS = 8;
    /** The most items per unit, L. */
    public static final int DISCOVER_MAX_ITEMS = 1 << 20;

    /** Top-k score: distinct units with a kept contribution to the item (Δ∞ = 1). */
    public static final int SCORE_UNITS = 0;
    /** Top-k score: kept events on the item (Δ∞ = C). */
    public static final int SCORE_EVENTS = 1;
    /** Top-k score: the sum of the kept values clamped to [lo, hi], 0 ≤ lo ≤ hi, hi &gt; 0 (Δ∞ = C · hi). */
    public static final int SCORE_SUM = 2;

    private static DpmoException error(int status) {
        return new DpmoException(status, statusMessage(status));
    }

    /** The checks the C ABI cannot make through a pointer: non-null events of one length, ints ≥ 0. */
    private static void checkEvents(long[] units, long[] items, double[] values, int... nonNegative) {
        if (units == null || items == null) throw error(DpmoException.NULL_POINTER);
        if (units.length != items.length || (values != null && values.length != units.length)) {
            throw error(DpmoException.LENGTH_MISMATCH);
        }
        for (int x : nonNegative) {
            if (x < 0) throw error(DpmoException.INVALID_ARGUMENT);
        }
    }

    /**
     * Contribution bounding alone ({@code dpmo_bound_events}): each unit keeps at most {@code maxItems} (L) of
     * its distinct items and at most {@code maxPerItem} (C) events on each, chosen uniformly at random from a
     * stream of its own (keyed by one key drawn from {@code rng}, so one unit's events never change another's
     * choices); each kept value is clamped to [lo, hi] (a NaN value counts as 0). Not a release: the totals are
     * exact, for a mechanism of yours with the sensitivities of {@link BoundedEvents}. No budget is charged.
     * Draws one key (four words) from the generator, whatever the events.
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event (any 64-bit ids)
     * @param items the item of each event (any 64-bit ids)
     * @param values the value of each event, or null for counts only (then lo = hi = 0)
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param maxPerItem C ≥ 1
     * @param lo the lower clamp (finite, lo ≤ hi)
     * @param hi the upper clamp (finite; max(|lo|, |hi|) 0 or within [2<sup>-600</sup>, 2<sup>600</sup>])
     * @return the bounded totals per distinct kept item, sorted by item (unsigned)
     * @throws DpmoException NULL_POINTER for null units or items, LENGTH_MISMATCH for events of different
     *     lengths, INVALID_ARGUMENT for bad bounds (nothing drawn)
     */
    public static BoundedEvents boundEvents(DpmoRng rng, long[] units, long[] items, double[] values, int maxItems,
            int maxPerItem, double lo, double hi) {
        checkEvents(units, items, values, maxItems, maxPerItem);
        double[] grid = new double[1];
        long[][] columns = boundEventsNative(rng, units, items, values, maxItems, maxPerItem, lo, hi, grid);
        return new BoundedEvents(columns, grid[0]);
    }

    /**
     * {@link #boundEvents(DpmoRng, long[], long[], double[], int, int, double, double)} without values.
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event
     * @param items the item of each event
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param maxPerItem C ≥ 1
     * @return the bounded totals per distinct kept item
     */
    public static BoundedEvents boundEvents(DpmoRng rng, long[] units, long[] items, int maxItems, int maxPerItem) {
        return boundEvents(rng, units, items, null, maxItems, maxPerItem, 0.0, 0.0);
    }

    /**
     * Private partition selection from raw events, with no candidate list ({@code dpmo_discover_partitions}):
     * bounds each unit to at most {@code maxItems} (L) of its distinct items (chosen uniformly at random), then
     * releases the items whose noisy count passes a threshold, by {@code mechanism}. An item no unit has is
     * never released. (ε, δ)-DP for adding or removing all the events of one unit. Every noise is exact and
     * every comparison an integer one.
     *
     * <p>{@code budget} (nullable) is charged (ε, δ) before the events are read; a pure-ε budget refuses the
     * charge (BUDGET_EXHAUSTED): make it with {@link PrivacyBudget#PrivacyBudget(double, double)}. Draws one
     * key (four words) from the generator, whatever the events. No event is an empty dataset (nothing released,
     * still charged), not an error.
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event (any 64-bit ids)
     * @param items the item of each event (any 64-bit ids)
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param epsilon ε (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param mechanism one of the {@code PARTITION_*} constants
     * @param rounds the DP-SIPS rounds, 1 to {@link #PARTITION_MAX_ROUNDS}, for {@link #PARTITION_SIPS}; 1 for
     *     the other mechanisms
     * @param budget charged (ε, δ) once the arguments are valid, or refuses the call; null for none
     * @return the selected items, ascending as unsigned 64-bit words
     * @throws DpmoException NULL_POINTER, LENGTH_MISMATCH, INVALID_EPSILON, INVALID_ARGUMENT (δ, mechanism,
     *     rounds, L, or parameters beyond the exact samplers' ranges), BUDGET_EXHAUSTED (nothing drawn, nothing
     *     charged)
     */
    public static long[] discoverPartitions(DpmoRng rng, long[] units, long[] items, int maxItems, double epsilon,
            double delta, int mechanism, int rounds, PrivacyBudget budget) {
        checkEvents(units, items, null, maxItems, rounds);
        // The C ABI's rounds is 0 for every mechanism but DP-SIPS; here it is 1 (one round), as in Python.
        if (mechanism != PARTITION_SIPS) {
            if (rounds != 1) throw error(DpmoException.INVALID_ARGUMENT);
            rounds = 0;
        }
        return discoverPartitionsNative(rng, units, items, maxItems, mechanism, rounds, epsilon, delta, budget);
    }

    /**
     * {@link #discoverPartitions(DpmoRng, long[], long[], int, double, double, int, int, PrivacyBudget)} with the
     * default mechanism, {@link #PARTITION_WEIGHTED_GAUSSIAN}.
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event
     * @param items the item of each event
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param epsilon ε (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param budget charged (ε, δ) once the arguments are valid, or refuses the call; null for none
     * @return the selected items, ascending as unsigned 64-bit words
     */
    public static long[] discoverPartitions(DpmoRng rng, long[] units, long[] items, int maxItems, double epsilon,
            double delta, PrivacyBudget budget) {
        return discoverPartitions(rng, units, items, maxItems, epsilon, delta, PARTITION_WEIGHTED_GAUSSIAN, 1,
                budget);
    }

    /**
     * Top-k over an unknown domain (Durfee &amp; Rogers 2019), from raw events ({@code dpmo_discover_top_k}):
     * bounds the contributions (L items per unit, C events per unit and item, values clamped to [lo, hi]),
     * takes the k̄ items with the largest {@code score} and a threshold candidate ⊥ at
     * h<sub>(k̄+1)</sub> + Δ∞ + ⌈Δ∞ ln(min(L, k̄)/δ)/ε₀⌉, ε₀ = ε/k, and picks up to k of them by the exact
     * exponential mechanism (∝ exp(ε₀ h/Δ∞)), stopping when ⊥ wins. (ε, δ)-DP for adding or removing all the
     * events of one unit.
     *
     * <p>Pay what you get: a run that stops at ⊥ after ℓ items costs (ε₀ (ℓ + 1), δ), one that returns k items
     * (ε, δ). {@code budget} (nullable) is charged (ε, δ) before the events are read and refunded the
     * difference after the run; a pure-ε budget refuses the charge. Draws one key (four words) from the
     * generator, whatever the events. No event is an empty dataset (⊥ competes alone), not an error.
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event (any 64-bit ids)
     * @param items the item of each event (any 64-bit ids)
     * @param values the value of each event (required by {@link #SCORE_SUM}), or null (then lo = hi = 0)
     * @param score {@link #SCORE_UNITS}, {@link #SCORE_EVENTS} or {@link #SCORE_SUM}
     * @param k how many items at most, 1 ≤ k ≤ k̄
     * @param kBar k̄, how many of the top items compete
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param maxPerItem C ≥ 1
     * @param lo the lower clamp of the values (0 ≤ lo ≤ hi for {@link #SCORE_SUM})
     * @param hi the upper clamp of the values (hi &gt; 0 for {@link #SCORE_SUM})
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param budget charged (ε, δ) once the arguments are valid, then what the run spent; null for none
     * @return the items in selection order, whether the run stopped at ⊥, and the (ε, δ) spent
     * @throws DpmoException NULL_POINTER, LENGTH_MISMATCH, INVALID_EPSILON, INVALID_ARGUMENT (k, k̄, score,
     *     bounds, δ, L, C), BUDGET_EXHAUSTED (nothing drawn, nothing charged)
     */
    public static TopKFromEvents discoverTopK(DpmoRng rng, long[] units, long[] items, double[] values, int score,
            int k, int kBar, int maxItems, int maxPerItem, double lo, double hi, double epsilon, double delta,
            PrivacyBudget budget) {
        checkEvents(units, items, values, k, kBar, maxItems, maxPerItem);
        double[] outcome = new double[3];
        long[] picked = discoverTopKNative(rng, units, items, values, score, k, kBar, maxItems, maxPerItem, lo, hi,
                epsilon, delta, budget, outcome);
        return new TopKFromEvents(picked, outcome[0] != 0.0, outcome[1], outcome[2]);
    }

    /**
     * {@link #discoverTopK(DpmoRng, long[], long[], double[], int, int, int, int, int, double, double, double,
     * double, PrivacyBudget)} by distinct units ({@link #SCORE_UNITS}, C = 1, no values).
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event
     * @param items the item of each event
     * @param k how many items at most, 1 ≤ k ≤ k̄
     * @param kBar k̄, how many of the top items compete
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param budget charged (ε, δ) once the arguments are valid, then what the run spent; null for none
     * @return the items in selection order, whether the run stopped at ⊥, and the (ε, δ) spent
     */
    public static TopKFromEvents discoverTopK(DpmoRng rng, long[] units, long[] items, int k, int kBar, int maxItems,
            double epsilon, double delta, PrivacyBudget budget) {
        return discoverTopK(rng, units, items, null, SCORE_UNITS, k, kBar, maxItems, 1, 0.0, 0.0, epsilon, delta,
                budget);
    }

    // ---------------------------------------------- unknown domain: the pieces of a distributed discovery

    /**
     * The weight grid G of a partition selection's plan ({@code dpmo_partition_weight_grid}): a unit with s kept
     * items gives each of them ⌊G/√s⌋ for {@link #PARTITION_WEIGHTED_GAUSSIAN} (and DP-SIPS); 0 for the other
     * mechanisms. Checks the arguments as {@link #discoverPartitions(DpmoRng, long[], long[], int, double,
     * double, int, int, PrivacyBudget)} does; draws nothing, charges nothing.
     *
     * @param mechanism one of the {@code PARTITION_*} constants
     * @param rounds the DP-SIPS rounds for {@link #PARTITION_SIPS}; 1 for the other mechanisms
     * @param epsilon ε (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @return G, or 0
     * @throws DpmoException INVALID_EPSILON, INVALID_ARGUMENT (δ, mechanism, rounds, L, parameters beyond the
     *     exact samplers' ranges)
     */
    public static long partitionWeightGrid(int mechanism, int rounds, double epsilon, double delta, int maxItems) {
        checkEvents(new long[0], new long[0], null, maxItems, rounds);
        return partitionWeightGridNative(mechanism, cRounds(mechanism, rounds), epsilon, delta, maxItems);
    }

    /** The C ABI's rounds: 0 for every mechanism but DP-SIPS (Java's 1, as in Python). */
    private static int cRounds(int mechanism, int rounds) {
        if (mechanism == PARTITION_SIPS) return rounds;
        if (rounds != 1) throw error(DpmoException.INVALID_ARGUMENT);
        return 0;
    }

    /**
     * Contribution bounding with every kept (unit, item) contribution ({@code dpmo_bound_contributions}): the
     * bounding of {@link #boundEvents(DpmoRng, long[], long[], double[], int, int, double, double)}, one row per
     * kept (unit, item) with |S<sub>u</sub>| and, for {@code weightGrid} G &gt; 0 (from
     * {@link #partitionWeightGrid}), the weight ⌊G/√|S<sub>u</sub>|⌋. For a distributed bounding: each task holds
     * every event of its units and bounds them with a generator of its own; the per-item statistics or scores
     * summed over the tasks are then those of the one-process bounding. Not a release; no budget is charged.
     * Draws one key (four words) from the generator, whatever the events.
     *
     * @param rng the generator the key comes from
     * @param units the privacy unit of each event (any 64-bit ids)
     * @param items the item of each event (any 64-bit ids)
     * @param values the value of each event, or null for counts only (then lo = hi = 0)
     * @param maxItems L, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param maxPerItem C ≥ 1
     * @param lo the lower clamp (finite, lo ≤ hi)
     * @param hi the upper clamp (finite)
     * @param weightGrid G ≥ 0 (0: no weights)
     * @return the kept contributions
     * @throws DpmoException NULL_POINTER, LENGTH_MISMATCH, INVALID_ARGUMENT as {@link #boundEvents} (nothing
     *     drawn)
     */
    public static BoundContributions boundContributions(DpmoRng rng, long[] units, long[] items, double[] values,
            int maxItems, int maxPerItem, double lo, double hi, long weightGrid) {
        checkEvents(units, items, values, maxItems, maxPerItem);
        if (weightGrid < 0) throw error(DpmoException.INVALID_ARGUMENT);
        double[] grid = new double[1];
        long[][] columns = boundContributionsNative(rng, units, items, values, maxItems, maxPerItem, lo, hi,
                weightGrid, grid);
        return new BoundContributions(columns, grid[0]);
    }

    /** The permutation sorting {@code items} ascending as unsigned 64-bit words; INVALID_ARGUMENT on a repeat. */
    private static int[] unsignedOrder(long[] items) {
        Integer[] order = new Integer[items.length];
        for (int i = 0; i < order.length; i++) order[i] = i;
        java.util.Arrays.sort(order, (a, b) -> Long.compareUnsigned(items[a], items[b]));
        int[] out = new int[order.length];
        for (int i = 0; i < order.length; i++) {
            out[i] = order[i];
            if (i > 0 && items[out[i - 1]] == items[out[i]]) throw error(DpmoException.INVALID_ARGUMENT);
        }
        return out;
    }

    /**
     * Partition selection from per-item statistics aggregated elsewhere ({@code
     * dpmo_select_partitions_from_statistics}): item {@code items[i]} has the statistic {@code statistics[i]} ≥
     * 1 — its number of units with a kept contribution for the truncated geometric, Laplace and Gaussian
     * mechanisms, the sum of its units' weights ({@link BoundContributions#weights()}) for the weighted Gaussian.
     * Each item is kept or not exactly as {@link #discoverPartitions(DpmoRng, long[], long[], int, double,
     * double, int, int, PrivacyBudget)} decides it, independently given the statistics, in the items' unsigned
     * order (the items are sorted here: any order in, the same draws out). (ε, δ)-DP for adding or removing one
     * unit only if the statistics come from contributions bounded per unit to at most L items and every item with
     * a kept contribution is in this call. DP-SIPS is refused (UNSUPPORTED): its rounds re-weight the units by the
     * items found, which per-item statistics cannot express.
     *
     * <p>{@code budget} (nullable) is charged (ε, δ) on success, as {@code discoverPartitions} charges it. Draws
     * one key (four words) from the generator, whatever the statistics.
     *
     * @param rng the generator the key comes from
     * @param items the items (distinct 64-bit ids)
     * @param statistics the statistic of each item (≥ 1)
     * @param maxItems L of the bounding, 1 ≤ L ≤ {@link #DISCOVER_MAX_ITEMS}
     * @param epsilon ε (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param mechanism {@link #PARTITION_TRUNCATED_GEOMETRIC}, {@link #PARTITION_LAPLACE}, {@link
     *     #PARTITION_GAUSSIAN} or {@link #PARTITION_WEIGHTED_GAUSSIAN}
     * @param budget charged (ε, δ) once the arguments are valid, or refuses the call; null for none
     * @return the kept items, ascending as unsigned 64-bit words
     * @throws DpmoException NULL_POINTER, LENGTH_MISMATCH, INVALID_EPSILON, INVALID_ARGUMENT (a repeated item,
     *     a statistic 0, δ, mechanism, L), UNSUPPORTED (DP-SIPS), BUDGET_EXHAUSTED: nothing drawn, nothing charged
     */
    public static long[] selectPartitionsFromStatistics(DpmoRng rng, long[] items, long[] statistics, int maxItems,
            double epsilon, double delta, int mechanism, PrivacyBudget budget) {
        checkEvents(items, statistics, null, maxItems);
        int[] order = unsignedOrder(items);
        long[] is = new long[items.length];
        long[] st = new long[items.length];
        for (int i = 0; i < order.length; i++) {
            is[i] = items[order[i]];
            st[i] = statistics[order[i]];
            if (st[i] < 0) throw error(DpmoException.INVALID_ARGUMENT);
        }
        int rounds = mechanism == PARTITION_SIPS ? 1 : 0;
        return selectPartitionsFromStatisticsNative(rng, is, st, maxItems, mechanism, rounds, epsilon, delta,
                budget);
    }

    /**
     * Top-k over an unknown domain (Durfee &amp; Rogers 2019) from per-item scores aggregated elsewhere ({@code
     * dpmo_select_top_k_from_scores}): item {@code items[i]} has the score {@code scores[i]} (0 ≤ score &lt;
     * 2<sup>120</sup>) in the units of {@code score} — distinct units, kept events, or the sum of max(0, kept
     * sum) in value-grid units — over the contributions of a bounding with L, C and, for {@link #SCORE_SUM},
     * values clamped to [lo, hi]. The items must include the top k̄ + 1 of all the items with a kept
     * contribution in the order (score descending, item ascending as unsigned 64-bit words), or all of them; more
     * are allowed. The candidates, ⊥ and the exact peeling are those of {@link #discoverTopK(DpmoRng, long[],
     * long[], double[], int, int, int, int, int, double, double, double, double, PrivacyBudget)}, and so is the
     * output's law when the scores have the bounding's law. The items are sorted here (any order in, the same
     * draws out).
     *
     * <p>Pay what you get: {@code budget} (nullable) is charged (ε, δ) before the peeling and refunded the
     * difference to (ε/k · (ℓ + 1), δ) when it stopped at ⊥ after ℓ items. Draws one key (four words) from the
     * generator, whatever the scores.
     *
     * @param rng the generator the key comes from
     * @param items the items (distinct 64-bit ids)
     * @param scores the score of each item (non-null, ≥ 0, below 2<sup>120</sup>)
     * @param score {@link #SCORE_UNITS}, {@link #SCORE_EVENTS} or {@link #SCORE_SUM}
     * @param k how many items at most, 1 ≤ k ≤ k̄
     * @param kBar k̄, how many of the top items compete
     * @param maxItems L of the bounding
     * @param maxPerItem C of the bounding
     * @param lo the lower clamp of the values (0 ≤ lo ≤ hi for {@link #SCORE_SUM}; lo = hi = 0 without values)
     * @param hi the upper clamp of the values
     * @param epsilon ε for the whole selection (finite, &gt; 0)
     * @param delta δ, in [2<sup>-300</sup>, 1)
     * @param budget charged (ε, δ) once the arguments are valid, then what the run spent; null for none
     * @return the items in selection order, whether the run stopped at ⊥, and the (ε, δ) spent
     * @throws DpmoException NULL_POINTER, LENGTH_MISMATCH, INVALID_EPSILON, INVALID_ARGUMENT (a repeated item, a
     *     score out of range, k, k̄, score, bounds, δ), BUDGET_EXHAUSTED: nothing drawn, nothing charged
     */
    public static TopKFromEvents selectTopKFromScores(DpmoRng rng, long[] items, java.math.BigInteger[] scores,
            int score, int k, int kBar, int maxItems, int maxPerItem, double lo, double hi, double epsilon,
            double delta, PrivacyBudget budget) {
        if (items == null || scores == null) throw error(DpmoException.NULL_POINTER);
        if (items.length != scores.length) throw error(DpmoException.LENGTH_MISMATCH);
        for (int x : new int[] {k, kBar, maxItems, maxPerItem}) {
            if (x < 0) throw error(DpmoException.INVALID_ARGUMENT);
        }
        if (items.length > (Integer.MAX_VALUE - 8) / 2) throw error(DpmoException.OVERFLOW);
        int[] order = unsignedOrder(items);
        long[] is = new long[items.length];
        long[] words = new long[2 * items.length];
        for (int i = 0; i < order.length; i++) {
            java.math.BigInteger s = scores[order[i]];
            if (s == null) throw error(DpmoException.NULL_POINTER);
            if (s.signum() < 0 || s.bitLength() > 128) throw error(DpmoException.INVALID_ARGUMENT);
            is[i] = items[order[i]];
            words[2 * i] = s.longValue();
            words[2 * i + 1] = s.shiftRight(64).longValue();
        }
        double[] outcome = new double[3];
        long[] picked = selectTopKFromScoresNative(rng, is, words, score, k, kBar, maxItems, maxPerItem, lo, hi,
                epsilon, delta, budget, outcome);
        return new TopKFromEvents(picked, outcome[0] != 0.0, outcome[1], outcome[2]);
    }

    private static native long partitionWeightGridNative(int mechanism, int rounds, double epsilon, double delta,
            int maxItems);

    private static native long[][] boundContributionsNative(DpmoRng rng, long[] units, long[] items,
            double[] values, int maxItems, int maxPerItem, double lo, double hi, long weightGrid, double[] gridOut);

    private static native long[] selectPartitionsFromStatisticsNative(DpmoRng rng, long[] items,
            long[] statistics, int maxItems, int mechanism, int rounds, double epsilon, double delta,
            PrivacyBudget budget);

    private static native long[] selectTopKFromScoresNative(DpmoRng rng, long[] items, long[] scoreWords,
            int score, int k, int kBar, int maxItems, int maxPerItem, double lo, double hi, double epsilon,
            double delta, PrivacyBudget budget, double[] outcome);

    private static native long[][] boundEventsNative(DpmoRng rng, long[] units, long[] items, double[] values,
            int maxItems, int maxPerItem, double lo, double hi, double[] gridOut);

    private static native long[] discoverPartitionsNative(DpmoRng rng, long[] units, long[] items, int maxItems,
            int mechanism, int rounds, double epsilon, double delta, PrivacyBudget budget);

    private static native long[] discoverTopKNative(DpmoRng rng, long[] units, long[] items, double[] values,
            int score, int k, int kBar, int maxItems, int maxPerItem, double lo, double hi, double epsilon,
            double delta, PrivacyBudget budget, double[] outcome);

    // ------------------------------------------------------------------------ distributed selection

    /**
     * Partition step of the exact distributed permute-and-flip ({@code dpmo_distributed_pf_partition}; the core's
     * {@code distributed::pf_partition}): flips, from the ChaCha20 generator of ({@code key}, {@code stream}), the
     * coin exp(−ε (⌊s* / g⌋ − ⌊s_r/g⌋) / 2N) of permute-and-flip (McKenna &amp; Sheldon 2020; g = Δ/N the grid of the
     * sensitivity, exactly the coins of {@link #selectPermuteAndFlip}) of every candidate not in {@code excluded},
     * and returns {|H_j|, a uniform element of H_j or −1}. A driver that picks partition j with probability
     * |H_j| / Σ|H| ({@link #distributedChooseWeighted}) and returns its element returns a uniform element of H,
     * which is exactly permute-and-flip's output (the coins do not depend on the visiting order). Python's
     * {@code dpmo.distributed} makes the same draws from the same key and stream.
     *
     * @param key the secret 32-byte key of the release (fresh from a secure source)
     * @param stream the partition's stream number (one per partition, round and repetition)
     * @param candidates the partition's candidates, sorted, distinct, ≥ 0
     * @param scores their scores (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param best s*, the largest score of the candidates in play over every partition (finite)
     * @param sensitivity Δ (finite, &gt; 0)
     * @param epsilon the round's ε (finite, &gt; 0)
     * @param excluded candidates already chosen (sorted, distinct), or null for none
     * @return {heads, pick}
     * @throws DpmoException NULL_POINTER, LENGTH_MISMATCH, INVALID_ARGUMENT (a key not 32 bytes, unsorted
     *     candidates, a candidate in play above s*), NON_FINITE_INPUT (s*), INVALID_SENSITIVITY, INVALID_EPSILON
     */
    public static long[] distributedPfPartition(byte[] key, long stream, long[] candidates, double[] scores,
            double best, double sensitivity, double epsilon, long[] excluded) {
        checkPartition(key, candidates, scores);
        return distributedPfPartitionNative(key, stream, candidates, scores, best, sensitivity, epsilon,
                excluded != null ? excluded : new long[0]);
    }

    /**
     * Partition step of one batch of the exact distributed exponential mechanism ({@code
     * dpmo_distributed_em_partition}): regenerates the {@code batch} proposals of the generator of ({@code key},
     * {@code proposalStream}), uniform in [0, total) and the same in every partition, flips from the generator of
     * ({@code key}, {@code coinStream}) the coin of every proposal this partition holds and has not excluded (the
     * coins of {@link #selectExponential}: rejection sampling with uniform proposals), and returns the first kept
     * {position, candidate}, or {−1, −1}. The driver takes the smallest position over the partitions; a batch
     * without a kept proposal is followed by a larger one on new streams.
     *
     * @param key the secret 32-byte key of the release
     * @param proposalStream the stream of the proposals (the same for every partition)
     * @param coinStream the partition's stream of coins
     * @param total n, the number of candidates over all partitions (≥ 1)
     * @param batch the number of proposals (0 to 2<sup>62</sup>)
     * @param candidates the partition's candidates, sorted, distinct, in [0, total)
     * @param scores their scores (NaN is the lowest, ±∞ ±MAX: never an error)
     * @param best s* (finite)
     * @param sensitivity Δ (finite, &gt; 0)
     * @param epsilon the round's ε (finite, &gt; 0)
     * @param excluded candidates already chosen (sorted, distinct), or null for none
     * @return {position, candidate}
     * @throws DpmoException as {@link #distributedPfPartition}, and INVALID_ARGUMENT for total, batch or a
     *     candidate ≥ total
     */
    public static long[] distributedEmPartition(byte[] key, long proposalStream, long coinStream, long total,
            long batch, long[] candidates, double[] scores, double best, double sensitivity, double epsilon,
            long[] excluded) {
        checkPartition(key, candidates, scores);
        return distributedEmPartitionNative(key, proposalStream, coinStream, total, batch, candidates, scores, best,
                sensitivity, epsilon, excluded != null ? excluded : new long[0]);
    }

    /**
     * The driver step of the distributed permute-and-flip ({@code dpmo_distributed_choose_weighted}): index j with
     * probability {@code weights[j]} / Σ weights, exactly. Draws one key (four words) from {@code rng}, whatever
     * the weights (which depend on the scores).
     *
     * @param rng the driver's generator
     * @param weights the partitions' |H_j| (≥ 0, not all 0)
     * @return j
     * @throws DpmoException NULL_POINTER, INVALID_ARGUMENT (a negative weight), EMPTY_INPUT (every weight 0),
     *     OVERFLOW (Σ weights ≥ 2<sup>64</sup>), INVALID_GENERATOR: nothing drawn
     */
    public static int distributedChooseWeighted(DpmoRng rng, long[] weights) {
        if (weights == null) throw error(DpmoException.NULL_POINTER);
        for (long w : weights) {
            if (w < 0) throw error(DpmoException.INVALID_ARGUMENT);
        }
        return distributedChooseWeightedNative(rng, weights);
    }

    private static void checkPartition(byte[] key, long[] candidates, double[] scores) {
        if (key == null || candidates == null || scores == null) throw error(DpmoException.NULL_POINTER);
        if (key.length != 32) throw error(DpmoException.INVALID_ARGUMENT);
        if (candidates.length != scores.length) throw error(DpmoException.LENGTH_MISMATCH);
    }

    private static native long[] distributedPfPartitionNative(byte[] key, long stream, long[] candidates,
            double[] scores, double best, double sensitivity, double epsilon, long[] excluded);

    private static native long[] distributedEmPartitionNative(byte[] key, long proposalStream, long coinStream,
            long total, long batch, long[] candidates, double[] scores, double best, double sensitivity,
            double epsilon, long[] excluded);

    private static native int distributedChooseWeightedNative(DpmoRng rng, long[] weights);

    // -------------------------------------------------------------------------------------- composition

    /**
     * Advanced composition (Kearns et al., SI Lemma 4, after Dwork, Rothblum &amp; Vadhan 2010): k adaptively
     * composed ε₀-DP mechanisms are (ε, δ′)-DP with ε = ε₀ √(8 k ln(1/δ′)); where the Dwork–Rothblum–Vadhan bound
     * ε₀ √(2 k ln(1/δ′)) + k ε₀ (e^ε₀ − 1) does not imply that simpler form, the latter is returned, so the result
     * is always a valid guarantee. Basic composition (k ε₀, δ′ = 0) may be smaller: compare if needed.
     *
     * @param eps0 ε₀ of each mechanism (finite, &gt; 0)
     * @param k the number of mechanisms (≥ 1)
     * @param deltaPrime δ′ in (0, 1)
     * @return the total ε
     * @throws DpmoException INVALID_EPSILON for a bad ε₀, INVALID_ARGUMENT for k ≤ 0 or δ′ outside (0, 1),
     *     OVERFLOW for a non-finite result
     */
    public static native double advancedComposition(double eps0, int k, double deltaPrime);

    // ------------------------------------------------------------------------------------------ helpers

    /**
     * Flattens n rows of m utilities each into the row-major array the multi-objective methods take.
     *
     * @param rows n rows of equal length m
     * @return the n · m utilities, {@code out[r * m + i] = rows[r][i]}
     * @throws DpmoException NULL_POINTER for a null array or row, LENGTH_MISMATCH for ragged rows
     */
    public static double[] rowMajor(double[][] rows) {
        if (rows == null) {
            throw new DpmoException(DpmoException.NULL_POINTER, statusMessage(DpmoException.NULL_POINTER));
        }
        int m = rows.length == 0 || rows[0] == null ? 0 : rows[0].length;
        double[] out = new double[Math.multiplyExact(rows.length, m)];
        for (int r = 0; r < rows.length; r++) {
            if (rows[r] == null) {
                throw new DpmoException(DpmoException.NULL_POINTER, statusMessage(DpmoException.NULL_POINTER));
            }
            if (rows[r].length != m) {
                throw new DpmoException(DpmoException.LENGTH_MISMATCH,
                        statusMessage(DpmoException.LENGTH_MISMATCH));
            }
            System.arraycopy(rows[r], 0, out, r * m, m);
        }
        return out;
    }
}
