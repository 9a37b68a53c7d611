package org.dpmo;

/**
 * Differentially private selection over {@code double[]} arrays, through JNI to the dpmo C library
 * ({@code libdpmo.a}, linked into {@code libdpmojni.so}).
 *
 * <p>Conventions of every method:
 * <ul>
 *   <li>Scores and utilities are larger-is-better; candidates are the indices of the array. Multi-objective
 *       utilities are an n × m row-major array: {@code utilities[r * m + i]} = u_i(r) (see
 *       {@link #rowMajor(double[][])}).</li>
 *   <li>Any invalid input (null, empty, NaN or ∞, ε ≤ 0, Δ ≤ 0, mismatched lengths, k ≤ 0 or k &gt; n,
 *       unknown selector, exhausted budget...) raises {@link DpmoException} with the C status code and
 *       message; nothing is written, the generator and the budget are unchanged.</li>
 *   <li>{@code budget} (nullable) is charged ε on success, before anything is drawn.</li>
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
    /** Selector: report-noisy-max with Laplace noise of scale 2Δ/ε. */
    public static final int SELECTOR_NOISY_MAX_LAPLACE = 2;
    /** Selector: report-noisy-max with Gumbel noise (same distribution as the exponential mechanism). */
    public static final int SELECTOR_NOISY_MAX_GUMBEL = 3;
    /** Selector: report-noisy-max with Exponential noise (same distribution as permute-and-flip). */
    public static final int SELECTOR_NOISY_MAX_EXPONENTIAL = 4;

    /** Report-noisy-max noise: Laplace. */
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

    /** The C library version, e.g. "0.1.0". */
    public static native String version();

    /** The sentence {@code dpmo_status_message} gives for a status code. */
    public static native String statusMessage(int status);

    // ------------------------------------------------------------------- single objective, global Δ

    /**
     * The exponential mechanism: an index r drawn with probability ∝ exp(ε · scores[r] / (2Δ)). ε-DP when Δ
     * bounds how much any score changes between neighbouring datasets.
     */
    public static native int selectExponential(DpmoRng rng, double[] scores, double sensitivity,
            double epsilon, PrivacyBudget budget);

    /** {@link #selectExponential(DpmoRng, double[], double, double, PrivacyBudget)} without a budget. */
    public static int selectExponential(DpmoRng rng, double[] scores, double sensitivity, double epsilon) {
        return selectExponential(rng, scores, sensitivity, epsilon, null);
    }

    /** Permute-and-flip (McKenna &amp; Sheldon 2020): ε-DP, never less accurate than the exponential mechanism. */
    public static native int selectPermuteAndFlip(DpmoRng rng, double[] scores, double sensitivity,
            double epsilon, PrivacyBudget budget);

    public static int selectPermuteAndFlip(DpmoRng rng, double[] scores, double sensitivity, double epsilon) {
        return selectPermuteAndFlip(rng, scores, sensitivity, epsilon, null);
    }

    /**
     * Report-noisy-max: noise ({@link #NOISE_LAPLACE}, {@link #NOISE_GUMBEL}, {@link #NOISE_EXPONENTIAL}) of
     * scale 2Δ/ε added to every score, the argmax reported. ε-DP.
     */
    public static native int selectNoisyMax(DpmoRng rng, double[] scores, double sensitivity, double epsilon,
            int noise, PrivacyBudget budget);

    public static int selectNoisyMax(DpmoRng rng, double[] scores, double sensitivity, double epsilon, int noise) {
        return selectNoisyMax(rng, scores, sensitivity, epsilon, noise, null);
    }

    /** Any selector ({@code SELECTOR_*}) by its code: one ε-DP selection. */
    public static int select(DpmoRng rng, int selector, double[] scores, double sensitivity, double epsilon,
            PrivacyBudget budget) {
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

    /** Exact output probabilities of the exponential mechanism (sum 1, computed in log space). */
    public static native double[] exponentialProbabilities(double[] scores, double sensitivity, double epsilon);

    /**
     * Top-k without replacement: k rounds of {@code selector} at ε/k each over the candidates not yet
     * chosen (ε-DP in total). Returns the k indices in pick order; k = n gives a random permutation.
     */
    public static native int[] selectTopK(DpmoRng rng, int selector, double[] scores, double sensitivity,
            double epsilon, int k, PrivacyBudget budget);

    public static int[] selectTopK(DpmoRng rng, int selector, double[] scores, double sensitivity,
            double epsilon, int k) {
        return selectTopK(rng, selector, scores, sensitivity, epsilon, k, null);
    }

    /**
     * One-shot top-k with Gumbel noise of scale 2kΔ/ε (Durfee &amp; Rogers 2019): the k largest noisy scores in
     * decreasing order. Equal in distribution to {@link #selectTopK} with the exponential selector; ε-DP.
     */
    public static native int[] selectTopKGumbel(DpmoRng rng, double[] scores, double sensitivity,
            double epsilon, int k, PrivacyBudget budget);

    // ----------------------------------------------------------------- single objective, local dampening

    /**
     * The dampened scores D(u, δ) (plain, Def. 3.6, or shifted, Def. 4.3): global sensitivity 1, so any
     * selector may follow with Δ = 1.
     */
    public static native double[] dampen(double[] utilities, Sensitivity delta, int dampening);

    /** Exact output probabilities of local dampening followed by the exponential mechanism, ∝ exp(ε D(r) / 2). */
    public static native double[] localDampeningProbabilities(double[] utilities, Sensitivity delta,
            int dampening, double epsilon);

    /**
     * Local dampening end to end: dampen with δ ({@code dampening}: plain or shifted), then select with
     * {@code selector} at Δ = 1. ε-DP when δ is admissible (Local Dampening paper, Thms. 3.10 and 4.4).
     */
    public static native int selectLocalDampening(DpmoRng rng, double[] utilities, Sensitivity delta,
            int dampening, int selector, double epsilon, PrivacyBudget budget);

    public static int selectLocalDampening(DpmoRng rng, double[] utilities, Sensitivity delta, int dampening,
            int selector, double epsilon) {
        return selectLocalDampening(rng, utilities, delta, dampening, selector, epsilon, null);
    }

    /** Top-k with local dampening: dampen once, then k rounds of {@code selector} at ε/k (ε-DP in total). */
    public static native int[] selectLocalDampeningTopK(DpmoRng rng, double[] utilities, Sensitivity delta,
            int dampening, int selector, double epsilon, int k, PrivacyBudget budget);

    // --------------------------------------------------------------------------------- multi-objective

    /**
     * PrivPareto (PrivPareto paper, §4.3): k of the n = utilities.length / m candidates without replacement
     * by their Pareto score under {@code dominance}, each round by {@code selector} at ε/k, re-scored among
     * the candidates left. ε-DP in total.
     *
     * @param deltas null for the global mechanism (Δ = n' − 1; {@code columns} and {@code dampening}
     *     unused), or m admissible local sensitivities (one per objective): the Pareto score is dampened
     *     with δ^PS tabulated for t &lt; {@code columns} (≥ 1)
     */
    public static native int[] selectPrivPareto(DpmoRng rng, double[] utilities, int m, int dominance,
            Sensitivity[] deltas, int columns, int dampening, int selector, double epsilon, int k,
            PrivacyBudget budget);

    /** Global PrivPareto: {@code selectPrivPareto(rng, utilities, m, dominance, null, 0, DAMPENING_PLAIN, ...)}. */
    public static int[] selectPrivPareto(DpmoRng rng, double[] utilities, int m, int dominance, int selector,
            double epsilon, int k, PrivacyBudget budget) {
        return selectPrivPareto(rng, utilities, m, dominance, null, 0, DAMPENING_PLAIN, selector, epsilon, k,
                budget);
    }

    /**
     * Exact output probabilities of PrivPareto with the exponential mechanism and k = 1 (global:
     * ∝ exp(ε PS(r) / 2(n − 1)); local: ∝ exp(ε D(PS, δ^PS)(r) / 2)).
     */
    public static native double[] privParetoProbabilities(double[] utilities, int m, int dominance,
            Sensitivity[] deltas, int columns, int dampening, double epsilon);

    /**
     * PrivAgg (PrivPareto paper, §5): k candidates without replacement by u_agg = Σ w_i u_i, each round by
     * {@code selector} at ε/k. ε-DP in total.
     *
     * @param globals m global sensitivities Δ_i for the global mechanism (Δ_agg = Σ |w_i| Δ_i); unused
     *     (may be null) when {@code deltas} is given
     * @param deltas null (global), or m admissible local sensitivities: u_agg dampened with
     *     δ_agg = Σ |w_i| δ_i tabulated for t &lt; {@code columns} (≥ 1)
     */
    public static native int[] selectPrivAgg(DpmoRng rng, double[] utilities, int m, double[] weights,
            double[] globals, Sensitivity[] deltas, int columns, int dampening, int selector, double epsilon,
            int k, PrivacyBudget budget);

    /** Global PrivAgg. */
    public static int[] selectPrivAgg(DpmoRng rng, double[] utilities, int m, double[] weights,
            double[] globals, int selector, double epsilon, int k, PrivacyBudget budget) {
        return selectPrivAgg(rng, utilities, m, weights, globals, null, 0, DAMPENING_PLAIN, selector, epsilon, k,
                budget);
    }

    /** Exact output probabilities of PrivAgg with the exponential mechanism and k = 1. */
    public static native double[] privAggProbabilities(double[] utilities, int m, double[] weights,
            double[] globals, Sensitivity[] deltas, int columns, int dampening, double epsilon);

    /** The Pareto scores PS(r) = −#{r' ≠ r : r' dominates r} (integers in [−(n − 1), 0]). Not private. */
    public static native double[] paretoScores(double[] utilities, int m, int dominance);

    // -------------------------------------------------------------------------------------- composition

    /**
     * Advanced composition: k adaptively composed ε₀-DP mechanisms are (ε, δ')-DP with the ε returned
     * (ε₀ √(8 k ln(1/δ')) or the Dwork–Rothblum–Vadhan bound where that is needed to be valid).
     */
    public static native double advancedComposition(double eps0, int k, double deltaPrime);

    // ------------------------------------------------------------------------------------------ helpers

    /**
     * Flattens n rows of m utilities each into the row-major array the multi-objective methods take.
     *
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
