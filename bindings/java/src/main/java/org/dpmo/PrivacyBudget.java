package org.dpmo;

/**
 * A privacy budget under sequential (basic) composition ({@code dpmo_budget}): every selection given this
 * budget is charged its epsilon on success, and refused with {@link DpmoException#BUDGET_EXHAUSTED} (nothing
 * else happens: no draw, generator unchanged) when the remaining budget is smaller.
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

    /** {total, spent}, read and written only by the JNI shim; its monitor is the budget's lock. */
    private final double[] state = new double[2];

    /**
     * A fresh budget of {@code totalEpsilon}, nothing spent.
     *
     * @param totalEpsilon the total ε (finite, &gt; 0)
     * @throws DpmoException INVALID_EPSILON unless totalEpsilon is finite and &gt; 0
     */
    public PrivacyBudget(double totalEpsilon) {
        init(state, totalEpsilon);
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

    @Override
    public String toString() {
        synchronized (state) {
            return "PrivacyBudget[total=" + state[0] + ", spent=" + state[1] + "]";
        }
    }

    private static native void init(double[] state, double totalEpsilon);

    private static native void charge(double[] state, double epsilon);

    private static native double remaining(double[] state);
}
