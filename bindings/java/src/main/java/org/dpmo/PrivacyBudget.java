package org.dpmo;

/**
 * A privacy budget under sequential (basic) composition ({@code dpmo_budget}): every selection given this
 * budget is charged its epsilon on success, and refused with {@link DpmoException#BUDGET_EXHAUSTED} (nothing
 * else happens: no draw, generator unchanged) when the remaining budget is smaller.
 *
 * <p>(ε, δ): mechanisms that are (ε₁, δ₁)-, (ε₂, δ₂)-, … -DP on the same data are (Σ ε_j, Σ δ_j)-DP together.
 * {@link #PrivacyBudget(double)} makes a pure-ε budget (δ total 0), which accepts every pure-ε charge and refuses
 * any charge with δ &gt; 0 (BUDGET_EXHAUSTED, nothing charged); {@link #PrivacyBudget(double, double)} makes an
 * (ε, δ) budget, which the (ε, δ)-DP calls ({@link Dpmo#discoverPartitions}, {@link Dpmo#discoverTopK}) need.
 * The δ's are accounted like the ε's: spent kept as an upper bound of the exact sum, remaining rounded down.
 *
 * <p>No tolerance is applied: ten charges of 0.1 against 1.0 are refused at the tenth (the double 0.1 is
 * slightly above 1/10); charge {@link #remaining()} last, or use dyadic shares such as 0.125.
 *
 * <p>Thread safety: a budget may be shared by threads; every charge (by {@link #charge(double)} or by a
 * selection) is atomic. The binding locks a private object of the budget, never the budget itself, and
 * always before the generator's (see {@link Dpmo}, "Threads and lock order"): a {@code synchronized}
 * block of yours on this object cannot deadlock a dpmo call, but neither does it stop other threads'
 * calls from charging the budget meanwhile.
 *
 * <p>A budget lives in one JVM's memory. The JVM never forks, so it is never copied into another process; a
 * JVM snapshot restored more than once (CRaC, AWS Lambda SnapStart) copies it, and each copy can spend the
 * whole remaining budget: do not checkpoint a JVM that holds one.
 */
public final class PrivacyBudget {
    static {
        Dpmo.load();
    }

    /** {total, spent, delta total, delta spent} (the fields of {@code dpmo_budget}), read and written only by
     * the JNI shim; its monitor is the budget's lock. */
    private final double[] state = new double[4];

    /**
     * A fresh pure-ε budget of {@code totalEpsilon} ({@code dpmo_budget_init}: δ total 0), nothing spent.
     *
     * @param totalEpsilon the total ε (finite, &gt; 0)
     * @throws DpmoException INVALID_EPSILON unless totalEpsilon is finite and &gt; 0
     */
    public PrivacyBudget(double totalEpsilon) {
        init(state, totalEpsilon);
    }

    /**
     * A fresh (ε, δ) budget ({@code dpmo_budget_init_approx}), nothing spent. A {@code totalDelta} of 0 gives
     * the pure-ε budget of {@link #PrivacyBudget(double)}.
     *
     * @param totalEpsilon the total ε (finite, &gt; 0)
     * @param totalDelta the total δ, in [0, 1)
     * @throws DpmoException INVALID_EPSILON unless totalEpsilon is finite and &gt; 0, INVALID_ARGUMENT unless
     *     totalDelta is finite and in [0, 1)
     */
    public PrivacyBudget(double totalEpsilon, double totalDelta) {
        initApprox(state, totalEpsilon, totalDelta);
    }

    /**
     * Records a mechanism run outside dpmo with {@code epsilon}.
     *
     * @param epsilon the ε of that mechanism
     * @throws DpmoException INVALID_EPSILON unless epsilon is finite and &gt; 0, BUDGET_EXHAUSTED when the
     *     remaining budget is smaller (nothing is charged)
     */
    public void charge(double epsilon) {
        synchronized (state) {
            charge(state, epsilon);
        }
    }

    /**
     * Records an (ε, δ)-DP mechanism run outside dpmo ({@code dpmo_budget_charge_approx}): the ε's add up and
     * the δ's add up. {@code charge(epsilon, 0)} is {@link #charge(double)}.
     *
     * @param epsilon the ε of that mechanism
     * @param delta the δ of that mechanism, in [0, 1)
     * @throws DpmoException INVALID_EPSILON unless epsilon is finite and &gt; 0, INVALID_ARGUMENT unless delta is
     *     finite and in [0, 1), BUDGET_EXHAUSTED when the remaining ε or δ is smaller (a pure-ε budget refuses
     *     every δ &gt; 0); nothing is charged then
     */
    public void charge(double epsilon, double delta) {
        synchronized (state) {
            chargeApprox(state, epsilon, delta);
        }
    }

    /**
     * The ε still available. Charging exactly this value succeeds when it is &gt; 0.
     *
     * @return a lower bound of total − spent, never negative
     */
    public double remaining() {
        synchronized (state) {
            return remaining(state);
        }
    }

    /**
     * The total ε.
     *
     * @return the total given to the constructor
     */
    public double total() {
        synchronized (state) {
            return state[0];
        }
    }

    /**
     * The ε spent so far.
     *
     * @return an upper bound of the exact sum of the charges
     */
    public double spent() {
        synchronized (state) {
            return state[1];
        }
    }

    /**
     * The δ still available ({@code dpmo_budget_remaining_approx}); 0 for a pure-ε budget. Charging exactly
     * {@link #remaining()} and this value succeeds when the ε is &gt; 0.
     *
     * @return a lower bound of δ total − δ spent, never negative
     */
    public double remainingDelta() {
        synchronized (state) {
            return remainingDelta(state);
        }
    }

    /**
     * The total δ.
     *
     * @return the δ given to the constructor (0 for a pure-ε budget)
     */
    public double deltaTotal() {
        synchronized (state) {
            return state[2];
        }
    }

    /**
     * The δ spent so far.
     *
     * @return an upper bound of the exact sum of the δ charges
     */
    public double deltaSpent() {
        synchronized (state) {
            return state[3];
        }
    }

    @Override
    public String toString() {
        synchronized (state) {
            String delta = state[2] > 0 ? ", delta=" + state[2] + ", deltaSpent=" + state[3] : "";
            return "PrivacyBudget[total=" + state[0] + ", spent=" + state[1] + delta + "]";
        }
    }

    private static native void init(double[] state, double totalEpsilon);

    private static native void initApprox(double[] state, double totalEpsilon, double totalDelta);

    private static native void chargeApprox(double[] state, double epsilon, double delta);

    private static native double remainingDelta(double[] state);

    private static native void charge(double[] state, double epsilon);

    private static native double remaining(double[] state);
}
